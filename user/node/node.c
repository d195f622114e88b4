// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * node.c - read the node's latency switches from sysfs and procfs.
 *
 * All paths are "<root><absolute path>", so tests run the readers on fixture
 * trees. Absent files are normal (a VM has no cpufreq, an old kernel prints no
 * THP_enabled line): they leave the documented "absent" value, never an error.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "node/node.h"
#include "node/sysfs.h"

#define SYS_CPU "/sys/devices/system/cpu"
#define SYS_THP "/sys/kernel/mm/transparent_hugepage"

/* ---- CPU sets ---- */

static int cpuset_add_range(struct lw_cpuset *s, long a, long b)
{
	if (a < 0 || b < a || b >= LW_NODE_MAX_CPUS)
		return -ERANGE;
	for (long c = a; c <= b; c++)
		lw_cpuset_set(s, (int)c);
	return 0;
}

int lw_cpuset_parse_list(struct lw_cpuset *s, const char *list)
{
	const char *p = list;

	memset(s, 0, sizeof(*s));
	while (*p) {
		char *end;
		long a, b;

		while (isspace((unsigned char)*p) || *p == ',')
			p++;
		if (!*p)
			break;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			b = strtol(p, &end, 10);
		}
		if (*end && *end != ',' && !isspace((unsigned char)*end))
			return -EINVAL;
		if (cpuset_add_range(s, a, b))
			return -ERANGE;
		p = end;
	}
	return 0;
}

/* Comma-separated 32-bit hex groups, most significant first. */
int lw_cpuset_parse_mask(struct lw_cpuset *s, const char *mask)
{
	const char *end = mask + strlen(mask);
	int group = 0;

	memset(s, 0, sizeof(*s));
	while (end > mask && isspace((unsigned char)end[-1]))
		end--;
	while (end > mask) {
		const char *start = end;
		unsigned long long v = 0;
		int shift = 0;

		while (start > mask && start[-1] != ',')
			start--;
		for (const char *c = end - 1; c >= start; c--) {
			int d;

			if (isspace((unsigned char)*c))
				continue;
			if (!isxdigit((unsigned char)*c) || shift >= 32)
				return -EINVAL;
			d = isdigit((unsigned char)*c) ? *c - '0'
						       : tolower((unsigned char)*c) - 'a' + 10;
			v |= (unsigned long long)d << shift;
			shift += 4;
		}
		for (int b = 0; b < 32; b++) {
			if ((v >> b) & 1) {
				if (group * 32 + b >= LW_NODE_MAX_CPUS)
					return -ERANGE;
				lw_cpuset_set(s, group * 32 + b);
			}
		}
		group++;
		end = start > mask ? start - 1 : start;
	}
	return 0;
}

char *lw_cpuset_format(const struct lw_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (int c = 0; c < LW_NODE_MAX_CPUS; c++) {
		int e = c;
		int w;

		if (!lw_cpuset_test(s, c))
			continue;
		while (lw_cpuset_test(s, e + 1))
			e++;
		if (e == c)
			w = snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
		else
			w = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, e);
		if (w < 0 || (size_t)w >= len - off) {
			buf[off] = '\0'; /* truncated: keep whole ranges only */
			break;
		}
		off += w;
		c = e;
	}
	return buf;
}

char *lw_cpuset_format_mask(const struct lw_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;
	int top;

	if (!len)
		return buf;
	/* 32-bit groups, most significant first; the first without zeros */
	for (top = LW_NODE_MAX_CPUS / 32 - 1; top > 0; top--)
		if ((s->w[top / 2] >> (top % 2 * 32)) & 0xffffffffULL)
			break;
	buf[0] = '\0';
	for (int g = top; g >= 0; g--) {
		unsigned v = (unsigned)(s->w[g / 2] >> (g % 2 * 32));
		int w = snprintf(buf + off, len - off, g == top ? "%x" : ",%08x", v);

		if (w < 0 || (size_t)w >= len - off) {
			snprintf(buf, len, "?");
			break;
		}
		off += w;
	}
	return buf;
}

int lw_cpuset_count(const struct lw_cpuset *s)
{
	int n = 0;

	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		n += __builtin_popcountll(s->w[i]);
	return n;
}

int lw_cpuset_first(const struct lw_cpuset *s)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		if (s->w[i])
			return i * 64 + __builtin_ctzll(s->w[i]);
	return -1;
}

bool lw_cpuset_intersects(const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

void lw_cpuset_and(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void lw_cpuset_andnot(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

void lw_cpuset_or(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

/* ---- file helpers ---- */

#define READ_NUM(root, out, absent, ...)                                                           \
	({                                                                                         \
		char _b[64];                                                                       \
		long long _v;                                                                      \
		int _e = lw_sysfs_read(root, _b, sizeof(_b), __VA_ARGS__);                         \
		if (!_e)                                                                           \
			_e = lw_parse_ll(_b, &_v);                                                 \
		(out) = _e ? (absent) : (__typeof__(out))_v;                                       \
		_e;                                                                                \
	})

/* The bracketed word of a selector file ("always [madvise] never"), or the
 * whole content when there is no bracket. */
static void selected_word(const char *line, char *out, size_t len)
{
	const char *a = strchr(line, '[');
	const char *b = a ? strchr(a, ']') : NULL;
	size_t l;

	if (!a || !b) {
		snprintf(out, len, "%s", line);
		return;
	}
	l = (size_t)(b - a - 1);
	if (l >= len)
		l = len - 1;
	memcpy(out, a + 1, l);
	out[l] = '\0';
}

static bool path_exists(const char *root, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	if (lw_sysfs_path(p, sizeof(p), root, "%s", path))
		return false;
	return stat(p, &st) == 0;
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* ---- CPUs, NUMA ---- */

static int read_cpus(struct lw_node *n)
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

		if (strncmp(de->d_name, "cpu", 3) || !is_number(de->d_name + 3))
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

static int read_numa(struct lw_node *n)
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

		if (strncmp(de->d_name, "node", 4) || !is_number(de->d_name + 4))
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

static void read_freq(struct lw_node *n)
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

static void read_idle(struct lw_node *n)
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

/* ---- THP ---- */

static void read_thp(struct lw_node *n)
{
	struct lw_thp *t = &n->thp;
	char b[256];

	t->kh_defrag = -1;
	t->pages_to_scan = t->scan_sleep_ms = t->alloc_sleep_ms = -1;
	if (lw_sysfs_read(n->root, b, sizeof(b), SYS_THP "/enabled"))
		return;
	t->present = true;
	selected_word(b, t->enabled, sizeof(t->enabled));
	if (!lw_sysfs_read(n->root, b, sizeof(b), SYS_THP "/defrag"))
		selected_word(b, t->defrag, sizeof(t->defrag));
	READ_NUM(n->root, t->kh_defrag, -1, SYS_THP "/khugepaged/defrag");
	READ_NUM(n->root, t->pages_to_scan, -1, SYS_THP "/khugepaged/pages_to_scan");
	READ_NUM(n->root, t->scan_sleep_ms, -1, SYS_THP "/khugepaged/scan_sleep_millisecs");
	READ_NUM(n->root, t->alloc_sleep_ms, -1, SYS_THP "/khugepaged/alloc_sleep_millisecs");
}

/* ---- interrupts ---- */

/*
 * Kernel-managed IRQs by name, for kernels that do not mark them themselves.
 *
 * Drivers that allocate queue vectors with pci_alloc_irq_vectors_affinity()
 * and PCI_IRQ_AFFINITY get "managed" IRQs: the kernel spreads them over the
 * CPUs, one per hardware queue, and irq_set_affinity() from user space fails
 * with EIO. Kernels with commit "genirq/proc: ... irq_can_set_affinity_usr()"
 * (upstream kernel/irq/proc.c, register_irq_proc()) create
 * /proc/irq/N/smp_affinity(_list) without the owner write bit for them, which
 * read_irq_proc() checks first. This list covers older kernels and fixture
 * trees (git keeps no file modes). Sources, from the drivers' vector names:
 *  - nvme (drivers/nvme/host/pci.c): "nvme%dq%d", one per I/O queue, q0 is the
 *    admin queue allocated as a pre_vector and stays movable;
 *  - virtio-blk (drivers/block/virtio_blk.c): "req.%d" virtqueues, vectors
 *    from vp_find_vqs() with an irq_affinity descriptor -> "virtioN-req.M";
 *  - virtio-scsi (drivers/scsi/virtio_scsi.c): "request" virtqueues;
 *  - megaraid_sas, mpt3sas: "megasas%d-msix%d", "mpt3sas%d-msix%d" with
 *    smp_affinity_enable=1 (the default).
 * Not managed, although they look alike: virtio-net "virtioN-input.M" /
 * "output.M" (virtnet_find_vqs() passes no affinity descriptor, it only sets
 * hints), vsock "virtioN-rx/tx", NIC "ethX-TxRx-N" queues of most drivers.
 */
bool lw_irq_is_managed(const char *name)
{
	static const char *const managed[] = {
		"nvme[0-9]*q[1-9]*", "virtio[0-9]*-req.*", "virtio[0-9]*-request*",
		"megasas*-msix*",    "mpt[23]sas*-msix*",
	};

	for (size_t i = 0; i < sizeof(managed) / sizeof(managed[0]); i++)
		if (!fnmatch(managed[i], name, 0))
			return true;
	return false;
}

/* Header "CPU0 CPU1 ...": CPU id of each column (offline CPUs have none). */
static int parse_header(const char *line, int *col_cpu, int max)
{
	int cols = 0;

	for (const char *p = line; (p = strstr(p, "CPU")); p += 3) {
		if (cols == max)
			return -E2BIG;
		col_cpu[cols++] = atoi(p + 3);
	}
	return cols;
}

/* "PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0" -> chip, name. */
static void parse_tail(char *p, char *chip, size_t clen, char *name, size_t nlen)
{
	char *tok;
	size_t l;

	while (isspace((unsigned char)*p))
		p++;
	tok = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	l = (size_t)(p - tok);
	snprintf(chip, clen, "%.*s", (int)l, tok);
	while (isspace((unsigned char)*p))
		p++;
	/* hwirq and flow: "1-edge", "-edge", or "27 Level" (GENERIC_IRQ_SHOW_LEVEL). */
	tok = p;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '-' && isalpha((unsigned char)p[1])) {
		while (*p && !isspace((unsigned char)*p))
			p++;
	} else if (p > tok && (isspace((unsigned char)*p) || !*p)) {
		while (isspace((unsigned char)*p))
			p++;
		if (!strncmp(p, "Level", 5) || !strncmp(p, "Edge", 4))
			while (*p && !isspace((unsigned char)*p))
				p++;
	} else {
		p = tok;
	}
	while (isspace((unsigned char)*p))
		p++;
	snprintf(name, nlen, "%s", p);
	lw_rtrim(name);
}

static struct lw_irq *irq_add(struct lw_node *n, unsigned irq)
{
	struct lw_irq *v = realloc(n->irqs, (n->nr_irqs + 1) * sizeof(*v));
	struct lw_irq *q;

	if (!v)
		return NULL;
	n->irqs = v;
	q = &n->irqs[n->nr_irqs];
	memset(q, 0, sizeof(*q));
	q->irq = irq;
	q->node = -1;
	q->nic = -1;
	q->count = calloc(n->nr_cpus ? n->nr_cpus : 1, sizeof(*q->count));
	if (!q->count)
		return NULL;
	n->nr_irqs++;
	return q;
}

static struct lw_irq *irq_find(struct lw_node *n, unsigned irq)
{
	return (struct lw_irq *)lw_node_irq(n, irq);
}

/* One numbered line of /proc/interrupts. sample: update deltas of known IRQs. */
static int parse_irq_line(struct lw_node *n, char *line, const int *col_cpu, int cols, bool sample)
{
	unsigned long long *cnt;
	struct lw_irq *q;
	char *p = line, *end;
	unsigned long irq;

	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return 0; /* NMI, LOC, ...: per-CPU architecture counters */
	irq = strtoul(p, &end, 10);
	if (*end != ':')
		return 0;
	p = end + 1;
	q = irq_find(n, (unsigned)irq);
	if (sample && !q)
		return 0; /* appeared during the sample */
	if (!q) {
		q = irq_add(n, (unsigned)irq);
		if (!q)
			return -ENOMEM;
	}
	if (sample && !q->delta) {
		q->delta = calloc(n->nr_cpus ? n->nr_cpus : 1, sizeof(*q->delta));
		if (!q->delta)
			return -ENOMEM;
	}
	cnt = q->count;
	for (int i = 0; i < cols; i++) {
		unsigned long long v = strtoull(p, &end, 10);
		int c = col_cpu[i];

		if (end == p)
			break;
		p = end;
		if (c < 0 || c >= n->nr_cpus)
			continue;
		if (sample)
			q->delta[c] = v >= cnt[c] ? v - cnt[c] : 0;
		q->total += v;
		cnt[c] = v;
	}
	if (!sample)
		parse_tail(p, q->chip, sizeof(q->chip), q->name, sizeof(q->name));
	return 0;
}

static int read_interrupts(struct lw_node *n, bool sample)
{
	int col_cpu[LW_NODE_MAX_CPUS];
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	int cols = -1, err = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/interrupts"))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (sample)
		for (size_t i = 0; i < n->nr_irqs; i++)
			n->irqs[i].total = 0;
	while (getline(&line, &cap, f) > 0) {
		if (cols < 0) {
			cols = parse_header(line, col_cpu, LW_NODE_MAX_CPUS);
			if (cols < 0) {
				err = cols;
				goto cleanup;
			}
			continue;
		}
		err = parse_irq_line(n, line, col_cpu, cols, sample);
		if (err)
			goto cleanup;
	}
	/* An IRQ gone from the second read had no interrupt during the sample. */
	for (size_t i = 0; sample && i < n->nr_irqs; i++) {
		if (n->irqs[i].delta)
			continue;
		n->irqs[i].delta = calloc(n->nr_cpus ? n->nr_cpus : 1, sizeof(*n->irqs[i].delta));
		if (!n->irqs[i].delta) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
cleanup:
	free(line);
	fclose(f);
	return err;
}

/*
 * /proc/softirqs' NET_RX row, per CPU: the receive processing each CPU did,
 * wherever it came from (its NIC queues' interrupts, RPS, local senders).
 * With sample, what it did since the first read goes to net_rx_delta.
 */
static int read_net_rx(struct lw_node *n, bool sample)
{
	int col_cpu[LW_NODE_MAX_CPUS];
	unsigned long long *v;
	char path[PATH_MAX];
	char *line = NULL, *p, *end;
	size_t cap = 0;
	int cols = -1, err = 0;
	FILE *f;

	if (!n->nr_cpus || lw_sysfs_path(path, sizeof(path), n->root, "/proc/softirqs"))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	v = calloc(n->nr_cpus, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (getline(&line, &cap, f) > 0) {
		if (cols < 0) {
			cols = parse_header(line, col_cpu, LW_NODE_MAX_CPUS);
			if (cols < 0)
				goto cleanup; /* unreadable: no NET_RX data */
			continue;
		}
		p = line + strspn(line, " ");
		if (strncmp(p, "NET_RX:", 7))
			continue;
		p += 7;
		for (int c = 0; c < cols; c++, p = end) {
			unsigned long long x = strtoull(p, &end, 10);

			if (end == p)
				break;
			if (col_cpu[c] >= 0 && col_cpu[c] < n->nr_cpus)
				v[col_cpu[c]] = x;
		}
		if (!sample) {
			n->net_rx = v;
			v = NULL;
		} else if (n->net_rx) {
			for (int c = 0; c < n->nr_cpus; c++)
				v[c] = v[c] >= n->net_rx[c] ? v[c] - n->net_rx[c] : 0;
			n->net_rx_delta = v;
			v = NULL;
		}
		break;
	}
cleanup:
	free(v);
	free(line);
	fclose(f);
	return err;
}

unsigned long long lw_net_rx_on(const struct lw_node *n, const struct lw_cpuset *set, bool *sampled)
{
	const unsigned long long *v = n->net_rx_delta ? n->net_rx_delta : n->net_rx;
	unsigned long long sum = 0;

	if (sampled)
		*sampled = n->net_rx_delta != NULL;
	for (int c = 0; v && c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			sum += v[c];
	return sum;
}

/* The kernel drops the write bit of smp_affinity for IRQs user space cannot move. */
static bool affinity_read_only(const char *root, unsigned irq)
{
	char p[PATH_MAX];
	struct stat st;

	if (lw_sysfs_path(p, sizeof(p), root, "/proc/irq/%u/smp_affinity_list", irq) ||
	    stat(p, &st))
		return false;
	return !(st.st_mode & S_IWUSR);
}

static void read_irq_proc(struct lw_node *n, struct lw_irq *q)
{
	const char *r = n->root;

	if (!lw_sysfs_read(r, q->affinity, sizeof(q->affinity), "/proc/irq/%u/smp_affinity_list",
			   q->irq))
		lw_cpuset_parse_list(&q->aff, q->affinity);
	if (!lw_sysfs_read(r, q->effective, sizeof(q->effective),
			   "/proc/irq/%u/effective_affinity_list", q->irq))
		lw_cpuset_parse_list(&q->eff, q->effective);
	else
		q->eff = q->aff;
	READ_NUM(r, q->node, -1, "/proc/irq/%u/node", q->irq);
	if (affinity_read_only(r, q->irq))
		q->pin = LW_IRQ_PIN_RO;
	else if (lw_irq_is_managed(q->name))
		q->pin = LW_IRQ_PIN_NAME;
}

static int read_irqs(struct lw_node *n)
{
	int err = read_interrupts(n, false);

	if (err)
		return err;
	for (size_t i = 0; i < n->nr_irqs; i++)
		read_irq_proc(n, &n->irqs[i]);
	return 0;
}

/* ---- irqbalance ---- */

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
		if (!is_number(de->d_name))
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

static void read_irqbalance(struct lw_node *n)
{
	struct lw_irqbalance *b = &n->irqbalance;

	b->pid = find_comm(n, "irqbalance");
	b->running = b->pid > 0;
	banned_from_file(n, "/etc/default/irqbalance");
	banned_from_file(n, "/etc/sysconfig/irqbalance");
	if (b->running)
		banned_from_environ(n, b->pid);
}

/* ---- NICs ---- */

/* The PCI function behind DEV: device/ itself, or its parent for virtio-net. */
static int nic_dir(struct lw_node *n, const char *dev, const char *what, char *out, size_t len)
{
	static const char *const rel[] = {"device", "device/.."};
	struct stat st;

	for (size_t i = 0; i < 2; i++) {
		if (lw_sysfs_path(out, len, n->root, "/sys/class/net/%s/%s/%s", dev, rel[i], what))
			return -ENAMETOOLONG;
		if (!stat(out, &st))
			return 0;
	}
	return -ENOENT;
}

static int nic_add_irq(struct lw_nic *nic, unsigned irq)
{
	unsigned *v = realloc(nic->irqs, (nic->nr_irqs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	nic->irqs = v;
	nic->irqs[nic->nr_irqs++] = irq;
	return 0;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

static int nic_read_irqs(struct lw_node *n, struct lw_nic *nic)
{
	char p[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d;

	if (!nic_dir(n, nic->name, "msi_irqs", p, sizeof(p)) && (d = opendir(p))) {
		while (!err && (de = readdir(d)))
			if (is_number(de->d_name))
				err = nic_add_irq(nic, (unsigned)atoi(de->d_name));
		closedir(d);
	} else {
		/* No MSI directory: fall back on the "DEV-..." IRQ name convention. */
		size_t l = strlen(nic->name);

		for (size_t i = 0; !err && i < n->nr_irqs; i++) {
			const char *nm = n->irqs[i].name;
			const char *hit = strstr(nm, nic->name);

			if (hit && (hit == nm || hit[-1] == '-') && (hit[l] == '-' || !hit[l]))
				err = nic_add_irq(nic, n->irqs[i].irq);
		}
	}
	if (nic->nr_irqs)
		qsort(nic->irqs, nic->nr_irqs, sizeof(*nic->irqs), cmp_uint);
	return err;
}

/* /sys/class/net under the node's root; NULL and errno when it cannot be
 * opened (ENAMETOOLONG: the root's path is too long). */
static DIR *class_net_open(const struct lw_node *n)
{
	char p[PATH_MAX];

	if (lw_sysfs_path(p, sizeof(p), n->root, "/sys/class/net")) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return opendir(p);
}

static int read_nics(struct lw_node *n)
{
	char b[32];
	struct dirent *de;
	int err = 0;
	DIR *d = class_net_open(n);

	if (!d)
		return errno == ENAMETOOLONG ? -ENAMETOOLONG : 0;
	while (!err && (de = readdir(d))) {
		struct lw_nic *v, *nic;
		char dev[PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(nic->name))
			continue;
		/* Virtual devices (lo, bridges, ifb) have no device link. */
		if (lw_sysfs_path(dev, sizeof(dev), n->root, "/sys/class/net/%s/device",
				  de->d_name) ||
		    stat(dev, &st))
			continue;
		v = realloc(n->nics, (n->nr_nics + 1) * sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			break;
		}
		n->nics = v;
		nic = &n->nics[n->nr_nics++];
		memset(nic, 0, sizeof(*nic));
		snprintf(nic->name, sizeof(nic->name), "%.31s", de->d_name);
		nic->numa_node = -1;
		if (!nic_dir(n, nic->name, "numa_node", dev, sizeof(dev)) &&
		    !lw_sysfs_read("", b, sizeof(b), "%s", dev))
			nic->numa_node = atoi(b);
		err = nic_read_irqs(n, nic);
	}
	closedir(d);
	for (size_t i = 0; i < n->nr_nics; i++)
		for (size_t k = 0; k < n->nics[i].nr_irqs; k++) {
			struct lw_irq *q = irq_find(n, n->nics[i].irqs[k]);

			if (q)
				q->nic = (int)i;
		}
	return err;
}

static int rps_add(struct lw_node *n, const char *dev, const char *queue, const char *mask)
{
	struct lw_rps *v, *r;
	struct lw_cpuset set = {0};

	if (lw_cpuset_parse_mask(&set, mask) || lw_cpuset_empty(&set))
		return 0;
	v = realloc(n->rps, (n->nr_rps + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n->rps = v;
	r = &n->rps[n->nr_rps++];
	memset(r, 0, sizeof(*r));
	snprintf(r->dev, sizeof(r->dev), "%s", dev);
	snprintf(r->queue, sizeof(r->queue), "%s", queue);
	snprintf(r->mask, sizeof(r->mask), "%s", mask);
	r->cpus = set;
	return 0;
}

/* By device, then queue number: readdir's order is the filesystem's. */
static int cmp_rps(const void *a, const void *b)
{
	const struct lw_rps *x = a, *y = b;
	int d = strcmp(x->dev, y->dev);

	return d ? d : atoi(x->queue + 3) - atoi(y->queue + 3);
}

/* Every device's receive queues, loopback and virtual ones included: RPS on
 * lo is how a local peer's traffic lands on another CPU's NET_RX. */
static int read_rps(struct lw_node *n)
{
	char p[PATH_MAX], mask[80];
	struct dirent *de, *qe;
	int err = 0;
	DIR *d = class_net_open(n), *q;

	if (!d)
		return errno == ENAMETOOLONG ? -ENAMETOOLONG : 0;
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(n->rps->dev) ||
		    lw_sysfs_path(p, sizeof(p), n->root, "/sys/class/net/%s/queues", de->d_name))
			continue;
		q = opendir(p);
		if (!q)
			continue;
		while (!err && (qe = readdir(q))) {
			if (strncmp(qe->d_name, "rx-", 3) ||
			    strlen(qe->d_name) >= sizeof(n->rps->queue) ||
			    lw_sysfs_read(n->root, mask, sizeof(mask),
					  "/sys/class/net/%s/queues/%s/rps_cpus", de->d_name,
					  qe->d_name))
				continue;
			err = rps_add(n, de->d_name, qe->d_name, mask);
		}
		closedir(q);
	}
	closedir(d);
	if (n->nr_rps > 1)
		qsort(n->rps, n->nr_rps, sizeof(*n->rps), cmp_rps);
	return err;
}

/* ---- target ---- */

static int read_status(struct lw_node *n, struct lw_target *t)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/status", t->pid))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, f) > 0) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		*v++ = '\0';
		while (isspace((unsigned char)*v))
			v++;
		lw_rtrim(v);
		if (!strcmp(line, "Name"))
			snprintf(t->comm, sizeof(t->comm), "%s", v);
		else if (!strcmp(line, "Cpus_allowed_list"))
			snprintf(t->cpus_allowed, sizeof(t->cpus_allowed), "%s", v);
		else if (!strcmp(line, "THP_enabled"))
			t->thp_enabled = atoi(v);
	}
	free(line);
	fclose(f);
	if (lw_cpuset_parse_list(&t->cpus, t->cpus_allowed) || lw_cpuset_empty(&t->cpus))
		t->cpus = n->online;
	return 0;
}

/* VMAs madvised MADV_HUGEPAGE ("hg" in VmFlags) and the THP-backed total. */
static void read_smaps(struct lw_node *n, struct lw_target *t)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/smaps", t->pid))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	t->madv_regions = 0;
	while (getline(&line, &cap, f) > 0) {
		char *save;

		if (!strncmp(line, "VmFlags:", 8)) {
			for (char *tok = strtok_r(line + 8, " \t\n", &save); tok;
			     tok = strtok_r(NULL, " \t\n", &save))
				if (!strcmp(tok, "hg")) {
					t->madv_regions++;
					break;
				}
		} else if (!strncmp(line, "AnonHugePages:", 14)) {
			t->anon_huge_kb += strtoull(line + 14, NULL, 10);
		}
	}
	free(line);
	fclose(f);
}

/* cgroup v2 "0::/path", or the v1 hierarchies holding the cpu and cpuset controllers. */
static void read_cgroup_paths(struct lw_node *n, struct lw_target *t, char *v1cpu, char *v1cpuset,
			      size_t len)
{
	char path[PATH_MAX], ctls[128];
	char *line = NULL, *save;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/cgroup", t->pid))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *ctl = strchr(line, ':');
		char *p = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!p)
			continue;
		*p++ = '\0';
		ctl++;
		lw_rtrim(p);
		if (!*ctl) {
			snprintf(t->cgroup, sizeof(t->cgroup), "%s", p);
			continue;
		}
		snprintf(ctls, sizeof(ctls), "%s", ctl);
		for (char *c = strtok_r(ctl, ",", &save); c; c = strtok_r(NULL, ",", &save))
			if (!strcmp(c, "cpu"))
				snprintf(v1cpu, len, "%s:%s", ctls, p);
			else if (!strcmp(c, "cpuset"))
				snprintf(v1cpuset, len, "%s", p);
	}
	free(line);
	fclose(f);
}

static void read_cpu_stat(struct lw_node *n, struct lw_target *t, const char *dir, bool v1)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "%s/cpu.stat", dir))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	t->has_cpu_stat = true;
	while (getline(&line, &cap, f) > 0) {
		char key[64];
		unsigned long long v;

		if (sscanf(line, "%63s %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, "nr_periods"))
			t->nr_periods = v;
		else if (!strcmp(key, "nr_throttled"))
			t->nr_throttled = v;
		else if (!strcmp(key, "throttled_usec"))
			t->throttled_usec = v;
		else if (v1 && !strcmp(key, "throttled_time"))
			t->throttled_usec = v / 1000; /* v1 counts ns */
	}
	free(line);
	fclose(f);
}

static void read_quota_v2(struct lw_node *n, struct lw_target *t, const char *dir)
{
	char q[32];
	unsigned long long period = 0;

	if (snprintf(t->cpu_max_path, sizeof(t->cpu_max_path), "%s/cpu.max", dir) >=
	    (int)sizeof(t->cpu_max_path)) {
		t->cpu_max_path[0] = '\0';
		return;
	}
	if (lw_sysfs_read(n->root, t->cpu_max, sizeof(t->cpu_max), "%s", t->cpu_max_path)) {
		t->cpu_max_path[0] = '\0';
		return;
	}
	if (sscanf(t->cpu_max, "%31s %llu", q, &period) >= 1) {
		t->period_us = period;
		t->quota_us = strcmp(q, "max") ? atoll(q) : -1;
	}
}

static void read_quota_v1(struct lw_node *n, struct lw_target *t, const char *dir)
{
	if (snprintf(t->cpu_max_path, sizeof(t->cpu_max_path), "%s/cpu.cfs_quota_us", dir) >=
	    (int)sizeof(t->cpu_max_path)) {
		t->cpu_max_path[0] = '\0';
		return;
	}
	if (lw_sysfs_read(n->root, t->cpu_max, sizeof(t->cpu_max), "%s", t->cpu_max_path) ||
	    READ_NUM(n->root, t->quota_us, -1, "%s", t->cpu_max_path)) {
		t->cpu_max_path[0] = '\0';
		t->quota_us = -1;
		return;
	}
	READ_NUM(n->root, t->period_us, 0, "%s/cpu.cfs_period_us", dir);
}

static void read_cgroup(struct lw_node *n, struct lw_target *t)
{
	char v1cpu[300] = "", v1cpuset[300] = "", dir[PATH_MAX];
	const char *base = "/sys/fs/cgroup";

	t->quota_us = -1;
	read_cgroup_paths(n, t, v1cpu, v1cpuset, sizeof(v1cpu));
	/* Pure v2 mounts cgroup2 on /sys/fs/cgroup, hybrid setups on .../unified. */
	if (!path_exists(n->root, "/sys/fs/cgroup/cgroup.controllers"))
		base = "/sys/fs/cgroup/unified";
	if (t->cgroup[0] && !v1cpu[0]) {
		t->cgroup_v = 2;
		snprintf(dir, sizeof(dir), "%s%s", base, strcmp(t->cgroup, "/") ? t->cgroup : "");
		read_quota_v2(n, t, dir);
		read_cpu_stat(n, t, dir, false);
		lw_sysfs_read(n->root, t->cpuset, sizeof(t->cpuset), "%s/cpuset.cpus.effective",
			      dir);
		return;
	}
	if (v1cpu[0]) {
		char *colon = strchr(v1cpu, ':');

		*colon = '\0';
		t->cgroup_v = 1;
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", colon + 1);
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s%s", v1cpu,
			 strcmp(colon + 1, "/") ? colon + 1 : "");
		read_quota_v1(n, t, dir);
		read_cpu_stat(n, t, dir, true);
	}
	if (v1cpuset[0])
		lw_sysfs_read(n->root, t->cpuset, sizeof(t->cpuset),
			      "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus",
			      strcmp(v1cpuset, "/") ? v1cpuset : "");
}

static int read_target(struct lw_node *n, int pid)
{
	struct lw_target *t = &n->target;
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->thp_enabled = -1;
	t->madv_regions = -1;
	err = read_status(n, t);
	if (err)
		return err;
	n->has_target = true;
	read_smaps(n, t);
	read_cgroup(n, t);
	return 0;
}

/* The CPU flags of a guest carry "hypervisor" (CPUID leaf 1, ECX bit 31). */
static void read_vm(struct lw_node *n)
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

/* ---- public ---- */

int lw_node_read(struct lw_node *n, const char *root, int pid)
{
	struct stat st;
	int err;

	memset(n, 0, sizeof(*n));
	if (!root || !strcmp(root, "/"))
		root = "";
	n->root = strdup(root);
	if (!n->root) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (root[0] && stat(root, &st)) {
		err = -ENOENT;
		goto cleanup;
	}
	err = read_cpus(n);
	if (err)
		goto cleanup;
	err = read_numa(n);
	if (err)
		goto cleanup;
	read_vm(n);
	read_freq(n);
	read_idle(n);
	read_thp(n);
	err = read_irqs(n);
	if (err)
		goto cleanup;
	read_irqbalance(n);
	err = read_nics(n);
	if (err)
		goto cleanup;
	err = read_rps(n);
	if (err)
		goto cleanup;
	err = read_net_rx(n, false);
	if (err)
		goto cleanup;
	if (pid)
		err = read_target(n, pid);
cleanup:
	return err;
}

int lw_node_sample_irqs(struct lw_node *n, unsigned ms)
{
	int err;
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
	n->sample_ms = ms;
	free(n->net_rx_delta);
	n->net_rx_delta = NULL;
	err = read_interrupts(n, true);
	return err ? err : read_net_rx(n, true);
}

void lw_node_free(struct lw_node *n)
{
	for (size_t i = 0; i < n->nr_irqs; i++) {
		free(n->irqs[i].count);
		free(n->irqs[i].delta);
	}
	for (size_t i = 0; i < n->nr_nics; i++)
		free(n->nics[i].irqs);
	free(n->irqs);
	free(n->nics);
	free(n->rps);
	free(n->net_rx);
	free(n->net_rx_delta);
	free(n->numa);
	free(n->cpus);
	free(n->root);
	memset(n, 0, sizeof(*n));
}

const struct lw_irq *lw_node_irq(const struct lw_node *n, unsigned irq)
{
	for (size_t i = 0; i < n->nr_irqs; i++)
		if (n->irqs[i].irq == irq)
			return &n->irqs[i];
	return NULL;
}

const struct lw_numa_node *lw_node_numa(const struct lw_node *n, int id)
{
	for (size_t i = 0; i < n->nr_numa; i++)
		if (n->numa[i].id == id)
			return &n->numa[i];
	return NULL;
}

unsigned long long lw_irq_count_on(const struct lw_node *n, const struct lw_irq *q,
				   const struct lw_cpuset *set, bool *sampled)
{
	const unsigned long long *v = q->delta ? q->delta : q->count;
	unsigned long long sum = 0;

	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			sum += v[c];
	if (sampled)
		*sampled = q->delta != NULL;
	return sum;
}
