// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * irqspread.c - latwhy_irq_spread_entropy{cpus}: how evenly the device
 * interrupts that land on the target's CPUs are spread over them, in bits
 * of Shannon entropy (0: all on one CPU; log2(n) over n CPUs: even). A
 * drift signal: irqbalance back, or an affinity reset, moves it.
 *
 * Over the stretch between two readings of the node (LW_EXPORT_NODE_NS
 * apart at least), since boot at the first. No interrupt on those CPUs in
 * the stretch: no spread to measure, and no series.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_int.h"
#include "node/sysfs.h"

bool lw_export_entropy(const unsigned long long *v, int nr, const struct lw_cpuset *set,
		       double *bits)
{
	unsigned long long sum = 0;
	double h = 0;

	for (int c = 0; c < nr; c++)
		if (lw_cpuset_test(set, c))
			sum += v[c];
	if (!sum)
		return false;
	for (int c = 0; c < nr; c++) {
		double p;

		if (!lw_cpuset_test(set, c) || !v[c])
			continue;
		p = (double)v[c] / sum;
		h -= p * log2(p);
	}
	*bits = h;
	return true;
}

/* Cpus_allowed_list of pid under root: 0, or -errno. */
static int allowed_cpus(const char *root, int pid, char *list, size_t len)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), root, "/proc/%d/status", pid))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *v;

		if (strncmp(line, "Cpus_allowed_list:", 18))
			continue;
		for (v = line + 18; isspace((unsigned char)*v); v++)
			;
		lw_rtrim(v);
		snprintf(list, len, "%s", v);
		err = 0;
		break;
	}
	free(line);
	fclose(f);
	return err;
}

void lw_export_spread_update(struct lw_export *x, const struct lw_node *n)
{
	unsigned long long *now = calloc(n->nr_cpus > 0 ? n->nr_cpus : 1, sizeof(*now));
	unsigned long long *d = calloc(n->nr_cpus > 0 ? n->nr_cpus : 1, sizeof(*d));
	struct lw_cpuset set;

	x->spread_ok = false;
	if (!now || !d)
		goto cleanup;
	for (size_t i = 0; i < n->nr_irqs; i++)
		for (int c = 0; c < n->nr_cpus; c++)
			now[c] += n->irqs[i].count[c];
	for (int c = 0; c < n->nr_cpus; c++) {
		unsigned long long before = c < x->irq_prev_n ? x->irq_prev[c] : 0;

		/* an IRQ that went away takes its counts with it: no negatives */
		d[c] = now[c] > before ? now[c] - before : 0;
	}
	if (x->pid > 0 &&
	    !allowed_cpus(x->node_root, x->pid, x->spread_cpus, sizeof(x->spread_cpus)) &&
	    !lw_cpuset_parse_list(&set, x->spread_cpus))
		x->spread_ok = lw_export_entropy(d, n->nr_cpus, &set, &x->spread_bits);
	free(x->irq_prev);
	x->irq_prev = now;
	x->irq_prev_n = n->nr_cpus;
	now = NULL;
cleanup:
	free(now);
	free(d);
}

void lw_export_spread_write(struct lw_export *x, FILE *f)
{
	if (!x->spread_ok)
		return;
	lw_export_family(
		f, "latwhy_irq_spread_entropy", "gauge",
		"Entropy of the device interrupts' spread over the target's allowed CPUs.");
	fputs("latwhy_irq_spread_entropy{cpus=\"", f);
	lw_export_label(f, x->spread_cpus);
	fprintf(f, "\"} %.6f\n", x->spread_bits);
}
