// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cpu.c - CPUs, NUMA nodes, cpufreq and cpuidle, and whether the node is a guest.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "node/read.h"
#include "node/sysfs.h"

#define SYS_CPU "/sys/devices/system/cpu"

/* ---- CPUs, NUMA ---- */

int lw_node_read_cpus(struct lw_node *n)
{
	char p[PATH_MAX], line[1024];
	struct dirent *de;
	int max = -1;
	DIR *d;

	if (lw_sysfs_path(p, sizeof(p), n->root, SYS_CPU))
		return -ENAMETOOLONG;
	d = opendir(p);
	if (!d)
		return 0; /* no CPU directory: nothing per CPU can be read */
	while ((de = readdir(d))) {
		int c;

		if (strncmp(de->d_name, "cpu", 3) || !lw_is_number(de->d_name + 3))
			continue;
		c = atoi(de->d_name + 3);
		if (c < LW_NODE_MAX_CPUS && c > max)
			max = c;
	}
	closedir(d);
	n->nr_cpus = max + 1;
	if (!n->nr_cpus)
		return 0;
	n->cpus = calloc(n->nr_cpus, sizeof(*n->cpus));
	if (!n->cpus)
		return -ENOMEM;
	if (lw_sysfs_read(n->root, line, sizeof(line), SYS_CPU "/online") ||
	    lw_cpuset_parse_list(&n->online, line)) {
		for (int c = 0; c < n->nr_cpus; c++)
			lw_cpuset_set(&n->online, c);
	}
	for (int c = 0; c < n->nr_cpus; c++) {
		n->cpus[c].id = c;
		n->cpus[c].online = lw_cpuset_test(&n->online, c);
		n->cpus[c].numa_node = -1;
	}
	/* irqbalance bans isolated and nohz_full CPUs on its own. */
	for (int i = 0; i < 2; i++) {
		struct lw_cpuset s;

		if (!lw_sysfs_read(n->root, line, sizeof(line), SYS_CPU "/%s",
				   i ? "nohz_full" : "isolated") &&
		    !lw_cpuset_parse_list(&s, line))
			lw_cpuset_or(&n->isolated, &n->isolated, &s);
	}
	return 0;
}

int lw_node_read_numa(struct lw_node *n)
{
	char p[PATH_MAX], line[1024];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (lw_sysfs_path(p, sizeof(p), n->root, "/sys/devices/system/node"))
		return -ENAMETOOLONG;
	d = opendir(p);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct lw_numa_node *v, *nn;

		if (strncmp(de->d_name, "node", 4) || !lw_is_number(de->d_name + 4))
			continue;
		v = realloc(n->numa, (n->nr_numa + 1) * sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			break;
		}
		n->numa = v;
		nn = &n->numa[n->nr_numa++];
		memset(nn, 0, sizeof(*nn));
		nn->id = atoi(de->d_name + 4);
		if (!lw_sysfs_read(n->root, line, sizeof(line),
				   "/sys/devices/system/node/%s/cpulist", de->d_name))
			lw_cpuset_parse_list(&nn->cpus, line);
		for (int c = 0; c < n->nr_cpus; c++)
			if (lw_cpuset_test(&nn->cpus, c))
				n->cpus[c].numa_node = nn->id;
	}
	closedir(d);
	return err;
}

/* ---- cpufreq ---- */

static enum lw_freq_drv freq_drv(const char *driver)
{
	static const struct {
		const char *name;
		enum lw_freq_drv drv;
	} map[] = {
		{"acpi-cpufreq", LW_DRV_ACPI_CPUFREQ},	   {"intel_pstate", LW_DRV_INTEL_PSTATE},
		{"intel_cpufreq", LW_DRV_INTEL_CPUFREQ},   {"amd-pstate", LW_DRV_AMD_PSTATE},
		{"amd-pstate-epp", LW_DRV_AMD_PSTATE_EPP},
	};

	if (!*driver)
		return LW_DRV_NONE;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(driver, map[i].name))
			return map[i].drv;
	return LW_DRV_OTHER;
}

const char *lw_freq_drv_name(enum lw_freq_drv d)
{
	switch (d) {
	case LW_DRV_NONE:
		return "none";
	case LW_DRV_ACPI_CPUFREQ:
		return "acpi-cpufreq";
	case LW_DRV_INTEL_PSTATE:
		return "intel_pstate (active)";
	case LW_DRV_INTEL_CPUFREQ:
		return "intel_pstate (passive)";
	case LW_DRV_AMD_PSTATE:
		return "amd-pstate (passive/guided)";
	case LW_DRV_AMD_PSTATE_EPP:
		return "amd-pstate (active)";
	case LW_DRV_OTHER:
		return "other";
	}
	return "unknown";
}

static void read_cpu_freq(struct lw_node *n, struct lw_cpu *cpu)
{
	const char *r = n->root;
	int c = cpu->id;
	char b[64];

	if (lw_sysfs_read(r, cpu->governor, sizeof(cpu->governor),
			  SYS_CPU "/cpu%d/cpufreq/scaling_governor", c) &&
	    lw_sysfs_read(r, b, sizeof(b), SYS_CPU "/cpu%d/cpufreq/scaling_driver", c))
		return; /* no policy for this CPU */
	cpu->has_freq = true;
	READ_NUM(r, cpu->cur_khz, 0, SYS_CPU "/cpu%d/cpufreq/scaling_cur_freq", c);
	READ_NUM(r, cpu->min_khz, 0, SYS_CPU "/cpu%d/cpufreq/scaling_min_freq", c);
	READ_NUM(r, cpu->max_khz, 0, SYS_CPU "/cpu%d/cpufreq/scaling_max_freq", c);
	READ_NUM(r, cpu->hw_min_khz, 0, SYS_CPU "/cpu%d/cpufreq/cpuinfo_min_freq", c);
	READ_NUM(r, cpu->hw_max_khz, 0, SYS_CPU "/cpu%d/cpufreq/cpuinfo_max_freq", c);
	READ_NUM(r, cpu->base_khz, 0, SYS_CPU "/cpu%d/cpufreq/base_frequency", c);
	lw_sysfs_read(r, cpu->epp, sizeof(cpu->epp),
		      SYS_CPU "/cpu%d/cpufreq/energy_performance_preference", c);
	if (!n->freq.driver[0])
		lw_sysfs_read(r, n->freq.driver, sizeof(n->freq.driver),
			      SYS_CPU "/cpu%d/cpufreq/scaling_driver", c);
}

void lw_node_read_freq(struct lw_node *n)
{
	struct lw_cpufreq *f = &n->freq;
	bool epp = false;

	for (int c = 0; c < n->nr_cpus; c++) {
		read_cpu_freq(n, &n->cpus[c]);
		epp |= n->cpus[c].epp[0] != '\0';
	}
	f->drv = freq_drv(f->driver);
	f->no_turbo = -1;
	f->boost = -1;
	READ_NUM(n->root, f->no_turbo, -1, SYS_CPU "/intel_pstate/no_turbo");
	READ_NUM(n->root, f->boost, -1, SYS_CPU "/cpufreq/boost");
	if (lw_sysfs_read(n->root, f->pstate_status, sizeof(f->pstate_status),
			  SYS_CPU "/intel_pstate/status"))
		lw_sysfs_read(n->root, f->pstate_status, sizeof(f->pstate_status),
			      SYS_CPU "/amd_pstate/status");
	/* HWP: intel_pstate in active mode exposes EPP only when HWP is on. */
	f->hwp = f->drv == LW_DRV_INTEL_PSTATE && !strcmp(f->pstate_status, "active") && epp;
}

/* ---- cpuidle ---- */

static void read_cpu_idle(struct lw_node *n, struct lw_cpu *cpu)
{
	const char *r = n->root;
	int c = cpu->id;

	for (int s = 0; s < LW_MAX_IDLE_STATES; s++) {
		struct lw_idle_state *st = &cpu->idle[cpu->nr_idle];

		if (lw_sysfs_read(r, st->name, sizeof(st->name),
				  SYS_CPU "/cpu%d/cpuidle/state%d/name", c, s))
			break;
		READ_NUM(r, st->latency_us, 0, SYS_CPU "/cpu%d/cpuidle/state%d/latency", c, s);
		READ_NUM(r, st->usage, 0, SYS_CPU "/cpu%d/cpuidle/state%d/usage", c, s);
		READ_NUM(r, st->time_us, 0, SYS_CPU "/cpu%d/cpuidle/state%d/time", c, s);
		READ_NUM(r, st->disable, 0, SYS_CPU "/cpu%d/cpuidle/state%d/disable", c, s);
		cpu->nr_idle++;
	}
	lw_sysfs_read(r, cpu->pm_qos, sizeof(cpu->pm_qos),
		      SYS_CPU "/cpu%d/power/pm_qos_resume_latency_us", c);
}

unsigned lw_idle_poll_states(const char *root)
{
	unsigned m = 0;
	char name[32];

	if (!lw_sysfs_exists(root, SYS_CPU "/cpu0/cpuidle/state0"))
		return 1;
	for (int s = 0; s < 32; s++) {
		if (lw_sysfs_read(root, name, sizeof(name), SYS_CPU "/cpu0/cpuidle/state%d/name",
				  s))
			break;
		if (!strcmp(name, "POLL"))
			m |= 1U << s;
	}
	return m;
}

void lw_node_read_idle(struct lw_node *n)
{
	lw_sysfs_read(n->root, n->idle.driver, sizeof(n->idle.driver),
		      SYS_CPU "/cpuidle/current_driver");
	if (lw_sysfs_read(n->root, n->idle.governor, sizeof(n->idle.governor),
			  SYS_CPU "/cpuidle/current_governor_ro"))
		lw_sysfs_read(n->root, n->idle.governor, sizeof(n->idle.governor),
			      SYS_CPU "/cpuidle/current_governor");
	READ_NUM(n->root, n->idle.halt_poll_ns, -1, LW_HALTPOLL_PARAM);
	for (int c = 0; c < n->nr_cpus; c++)
		read_cpu_idle(n, &n->cpus[c]);
}

/* The CPU flags of a guest carry "hypervisor" (CPUID leaf 1, ECX bit 31). */
void lw_node_read_vm(struct lw_node *n)
{
	char path[PATH_MAX], *line = NULL;
	size_t len = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/cpuinfo"))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (!n->vm && getline(&line, &len, f) > 0)
		if (!strncmp(line, "flags", 5) && strstr(line, " hypervisor"))
			n->vm = true;
	free(line);
	fclose(f);
}
