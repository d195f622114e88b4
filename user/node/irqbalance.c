// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * irqbalance.c - whether irqbalance runs and the CPUs it is told to leave alone.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "node/read.h"
#include "node/sysfs.h"

static void banned_from_var(struct lw_irqbalance *b, const char *var, const char *val,
			    const char *src)
{
	struct lw_cpuset s;
	char v[128];
	size_t l;

	snprintf(v, sizeof(v), "%s", val);
	lw_rtrim(v);
	l = strlen(v);
	if (l >= 2 && (v[0] == '"' || v[0] == '\'') && v[l - 1] == v[0]) {
		v[l - 1] = '\0';
		memmove(v, v + 1, l - 1);
	}
	if (!v[0])
		return;
	/* The cpulist form overrides the deprecated mask when both are set. */
	if (!strcmp(var, "IRQBALANCE_BANNED_CPULIST")) {
		if (lw_cpuset_parse_list(&s, v))
			return;
	} else if (!strcmp(var, "IRQBALANCE_BANNED_CPUS")) {
		if (b->banned[0] && strstr(b->banned_src, "CPULIST"))
			return;
		if (lw_cpuset_parse_mask(&s, v))
			return;
	} else {
		return;
	}
	b->banned_set = s;
	snprintf(b->banned, sizeof(b->banned), "%s", v);
	snprintf(b->banned_src, sizeof(b->banned_src), "%s %s", src, var);
}

static void banned_from_file(struct lw_node *n, const char *file)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "%s", file))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *eq;

		while (isspace((unsigned char)*p))
			p++;
		if (!strncmp(p, "export ", 7))
			p += 7;
		eq = strchr(p, '=');
		if (*p == '#' || !eq)
			continue;
		*eq = '\0';
		banned_from_var(&n->irqbalance, p, eq + 1, file);
	}
	free(line);
	fclose(f);
}

/* What the running daemon got from its EnvironmentFile wins over the files. */
static void banned_from_environ(struct lw_node *n, int pid)
{
	char path[PATH_MAX], buf[16384];
	size_t len;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/environ", pid))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (size_t off = 0; off < len; off += strlen(buf + off) + 1) {
		char *eq = strchr(buf + off, '=');

		if (!eq)
			continue;
		*eq = '\0';
		banned_from_var(&n->irqbalance, buf + off, eq + 1, "environment of irqbalance:");
	}
}

static int find_comm(struct lw_node *n, const char *comm)
{
	char p[PATH_MAX], c[32];
	struct dirent *de;
	int pid = 0;
	DIR *d;

	if (lw_sysfs_path(p, sizeof(p), n->root, "/proc"))
		return 0;
	d = opendir(p);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!lw_is_number(de->d_name))
			continue;
		if (!lw_sysfs_read(n->root, c, sizeof(c), "/proc/%s/comm", de->d_name) &&
		    !strcmp(c, comm)) {
			pid = atoi(de->d_name);
			break;
		}
	}
	closedir(d);
	return pid;
}

void lw_node_read_irqbalance(struct lw_node *n)
{
	struct lw_irqbalance *b = &n->irqbalance;

	b->pid = find_comm(n, "irqbalance");
	b->running = b->pid > 0;
	banned_from_file(n, "/etc/default/irqbalance");
	banned_from_file(n, "/etc/sysconfig/irqbalance");
	if (b->running)
		banned_from_environ(n, b->pid);
}
