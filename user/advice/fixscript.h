/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fixscript.h - write a reviewed fix plan as three shell scripts.
 *
 * PATH applies each finding's fix then its persistent form, PATH.undo
 * restores the values recorded while writing (read under root now), and
 * PATH.verify re-reads every setting (and the steady clock for a governor).
 * latwhy never runs them. Every sysfs/procfs/etc path in them is prefixed with
 * $ROOT, from LATWHY_ROOT, so tests run them against a copy of a fixture tree;
 * under a non-empty LATWHY_ROOT, commands acting on the live system
 * (systemctl, taskset, update-grub) are printed instead of run.
 */
#ifndef LW_FIXSCRIPT_H
#define LW_FIXSCRIPT_H

#include "advice/finding.h"

/* root: NULL or "/" for the live node. Returns 0 or a negative errno. */
int lw_fixscript_write(const struct lw_findings *fs, const char *root, const char *path);

#endif /* LW_FIXSCRIPT_H */
