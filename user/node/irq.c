// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * irq.c - /proc/interrupts, /proc/irq/N and /proc/softirqs' NET_RX.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "node/node.h"
#include "node/read.h"
#include "node/sysfs.h"

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

struct lw_irq *lw_node_irq_find(struct lw_node *n, unsigned irq)
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
	q = lw_node_irq_find(n, (unsigned)irq);
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

int lw_node_read_interrupts(struct lw_node *n, bool sample)
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
int lw_node_read_net_rx(struct lw_node *n, bool sample)
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

int lw_node_read_irqs(struct lw_node *n)
{
	int err = lw_node_read_interrupts(n, false);

	if (err)
		return err;
	for (size_t i = 0; i < n->nr_irqs; i++)
		read_irq_proc(n, &n->irqs[i]);
	return 0;
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
	err = lw_node_read_interrupts(n, true);
	return err ? err : lw_node_read_net_rx(n, true);
}

const struct lw_irq *lw_node_irq(const struct lw_node *n, unsigned irq)
{
	for (size_t i = 0; i < n->nr_irqs; i++)
		if (n->irqs[i].irq == irq)
			return &n->irqs[i];
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

/* Over the sample when one was taken, else since boot. */
static const unsigned long long *entropy_counts(const struct lw_irq *q)
{
	return q->delta ? q->delta : q->count;
}

double lw_node_irq_entropy(const struct lw_node *n)
{
	unsigned long long sum = 0;
	double h = 0;

	for (int c = 0; c < n->nr_cpus; c++) {
		unsigned long long v = 0;

		for (size_t i = 0; i < n->nr_irqs; i++)
			v += entropy_counts(&n->irqs[i])[c];
		sum += v;
	}
	if (!sum)
		return 0;
	for (int c = 0; c < n->nr_cpus; c++) {
		unsigned long long v = 0;
		double p;

		for (size_t i = 0; i < n->nr_irqs; i++)
			v += entropy_counts(&n->irqs[i])[c];
		if (!v)
			continue;
		p = (double)v / sum;
		h -= p * log2(p);
	}
	return h;
}
