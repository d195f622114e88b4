// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * node.c - read the node's latency switches from sysfs and procfs: one
 * reader per concern (read.h), run in the order their facts depend on.
 *
 * All paths are "<root><absolute path>", so tests run the readers on fixture
 * trees. Absent files are normal (a VM has no cpufreq, an old kernel prints no
 * THP_enabled line): they leave the documented "absent" value, never an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "node/node.h"
#include "node/read.h"

int lw_node_read_with(struct lw_node *n, const char *root, int pid, const struct lw_ethtool *et)
{
	struct lw_ethtool recorded;
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
	err = lw_node_read_cpus(n);
	if (err)
		goto cleanup;
	err = lw_node_read_numa(n);
	if (err)
		goto cleanup;
	lw_node_read_vm(n);
	lw_node_read_freq(n);
	lw_node_read_idle(n);
	lw_node_read_thp(n);
	err = lw_node_read_irqs(n);
	if (err)
		goto cleanup;
	lw_node_read_irqbalance(n);
	if (!et && root[0])
		lw_ethtool_fixture(&recorded, n->root);
	err = lw_node_read_nics(n, et ? et : root[0] ? &recorded : lw_ethtool_kernel());
	if (err)
		goto cleanup;
	err = lw_node_read_rps(n);
	if (err)
		goto cleanup;
	err = lw_node_read_net_rx(n, false);
	if (err)
		goto cleanup;
	lw_zoneinfo_read(n->root, &n->zones);
	if (pid) {
		err = lw_node_read_target(n, pid);
		if (!err)
			lw_memcg_read(n->root, pid, &n->memcg);
	}
cleanup:
	return err;
}

void lw_node_free(struct lw_node *n)
{
	for (size_t i = 0; i < n->nr_irqs; i++) {
		free(n->irqs[i].count);
		free(n->irqs[i].delta);
	}
	for (size_t i = 0; i < n->nr_nics; i++)
		lw_nic_free(&n->nics[i]);
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

const struct lw_numa_node *lw_node_numa(const struct lw_node *n, int id)
{
	for (size_t i = 0; i < n->nr_numa; i++)
		if (n->numa[i].id == id)
			return &n->numa[i];
	return NULL;
}

int lw_node_read(struct lw_node *n, const char *root, int pid)
{
	return lw_node_read_with(n, root, pid, NULL);
}
