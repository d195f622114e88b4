/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * node.h - the node's latency switches, read from sysfs and procfs.
 *
 * Every reader takes a root directory ("/" on a live node) so the same code
 * runs on fixture trees in tests. Nothing here needs BPF or root: a file that
 * is missing or unreadable leaves its field at the "absent" value documented
 * next to it, and the judgement (advice/) says what could not be seen.
 */
#ifndef LW_NODE_H
#define LW_NODE_H

#include <stdbool.h>
#include <stddef.h>

#include "node/ethtool.h"
#include "node/memory.h"

/* A CPU set, one bit per CPU, the same width as lw_trace_facts.cpus_mask. */
#define LW_CPUSET_WORDS	 8
#define LW_NODE_MAX_CPUS (LW_CPUSET_WORDS * 64)

struct lw_cpuset {
	unsigned long long w[LW_CPUSET_WORDS];
};

/* "0-3,8,10-11" (cpulist) and "ff,0000000f" (cpumask, as in smp_affinity). */
int lw_cpuset_parse_list(struct lw_cpuset *s, const char *list);
int lw_cpuset_parse_mask(struct lw_cpuset *s, const char *mask);
/* Cpulist form of s into buf ("" when empty); returns buf. */
char *lw_cpuset_format(const struct lw_cpuset *s, char *buf, size_t len);
/* Cpumask form, as rps_cpus takes it: "2", "1,00000000"; "0" when empty. */
char *lw_cpuset_format_mask(const struct lw_cpuset *s, char *buf, size_t len);
int lw_cpuset_count(const struct lw_cpuset *s);
int lw_cpuset_first(const struct lw_cpuset *s); /* -1 when empty */
bool lw_cpuset_intersects(const struct lw_cpuset *a, const struct lw_cpuset *b);
void lw_cpuset_and(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b);
void lw_cpuset_andnot(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b);
void lw_cpuset_or(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b);

static inline bool lw_cpuset_test(const struct lw_cpuset *s, int cpu)
{
	return cpu >= 0 && cpu < LW_NODE_MAX_CPUS && (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

static inline void lw_cpuset_set(struct lw_cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < LW_NODE_MAX_CPUS)
		s->w[cpu / 64] |= 1ULL << (cpu % 64);
}

static inline bool lw_cpuset_empty(const struct lw_cpuset *s)
{
	return lw_cpuset_first(s) < 0;
}

enum lw_freq_drv {
	LW_DRV_NONE = 0,       /* no cpufreq: a VM, or no driver loaded */
	LW_DRV_ACPI_CPUFREQ,   /* generic governors, boost in cpufreq/boost */
	LW_DRV_INTEL_PSTATE,   /* intel_pstate active: powersave/performance only */
	LW_DRV_INTEL_CPUFREQ,  /* intel_pstate passive: generic governors */
	LW_DRV_AMD_PSTATE,     /* amd-pstate passive or guided: generic governors */
	LW_DRV_AMD_PSTATE_EPP, /* amd-pstate active: powersave/performance + EPP */
	LW_DRV_OTHER,
};

struct lw_idle_state {
	char name[32];
	unsigned latency_us; /* exit latency */
	unsigned long long usage;
	unsigned long long time_us;
	int disable; /* 1 = disabled by user space */
};

#define LW_MAX_IDLE_STATES 16

struct lw_cpu {
	int id;
	bool online;
	int numa_node; /* -1 when unknown */
	/* cpufreq: has_freq is false when the CPU has no policy. */
	bool has_freq;
	char governor[32];
	unsigned cur_khz;    /* scaling_cur_freq */
	unsigned min_khz;    /* scaling_min_freq */
	unsigned max_khz;    /* scaling_max_freq */
	unsigned hw_min_khz; /* cpuinfo_min_freq */
	unsigned hw_max_khz; /* cpuinfo_max_freq (includes turbo/boost) */
	unsigned base_khz;   /* base_frequency, 0 when absent */
	char epp[32];	     /* energy_performance_preference, "" when absent */
	/* cpuidle */
	size_t nr_idle;
	struct lw_idle_state idle[LW_MAX_IDLE_STATES];
	char pm_qos[16]; /* power/pm_qos_resume_latency_us: "0" = no limit, "n/a" = no idle */
};

struct lw_cpufreq {
	enum lw_freq_drv drv;
	char driver[32];	/* scaling_driver, "" when none */
	char pstate_status[16]; /* intel_pstate/status or amd_pstate/status, "" absent */
	bool hwp;		/* intel_pstate active with HWP (EPP file present) */
	int no_turbo;		/* intel_pstate/no_turbo, -1 absent */
	int boost;		/* cpufreq/boost, -1 absent */
};

/* The haltpoll cpuidle governor's poll limit (KVM guests). */
#define LW_HALTPOLL_PARAM "/sys/module/haltpoll/parameters/guest_halt_poll_ns"

struct lw_cpuidle {
	char driver[32];   /* current_driver, "" when none */
	char governor[32]; /* current_governor(_ro) */
	/* the haltpoll governor's (KVM guests) longest poll before an idle
	 * vCPU halts, /sys/module/haltpoll/parameters/guest_halt_poll_ns;
	 * -1 absent */
	long long halt_poll_ns;
};

struct lw_thp {
	bool present;
	char enabled[16]; /* the bracketed word of "always [madvise] never" */
	char defrag[16];
	int kh_defrag;	     /* khugepaged/defrag, -1 absent */
	long pages_to_scan;  /* khugepaged/pages_to_scan, -1 absent */
	long scan_sleep_ms;  /* khugepaged/scan_sleep_millisecs */
	long alloc_sleep_ms; /* khugepaged/alloc_sleep_millisecs */
};

/* Why an IRQ cannot be moved from user space. */
enum lw_irq_pin {
	LW_IRQ_MOVABLE = 0,
	LW_IRQ_PIN_RO,	 /* the kernel made smp_affinity read-only */
	LW_IRQ_PIN_NAME, /* name of a kernel-managed queue vector (heuristic) */
};

struct lw_irq {
	unsigned irq;
	char chip[48];
	char name[64];
	unsigned long long total;
	unsigned long long *count; /* per CPU id, n->nr_cpus entries */
	unsigned long long *delta; /* per CPU id over the sample, NULL until sampled */
	char affinity[128];	   /* smp_affinity_list as read, "" absent */
	char effective[128];	   /* effective_affinity_list as read, "" absent */
	struct lw_cpuset aff;
	struct lw_cpuset eff; /* = aff when effective_affinity_list is absent */
	int node;	      /* /proc/irq/N/node, -1 unknown */
	enum lw_irq_pin pin;
	int nic; /* index into n->nics, -1 none */
};

/* What kind of network device: decides which of its knobs are this node's. */
enum lw_nic_kind {
	LW_NIC_PHYS = 0, /* a device of its own (PCI, platform): every knob here */
	LW_NIC_VIRTIO,	 /* virtio_net: the host decides the queues behind it */
	LW_NIC_VETH,	 /* one end of a veth pair: software queues, no IRQs */
	LW_NIC_BRIDGE,
	LW_NIC_BOND,
	LW_NIC_IFB,
	LW_NIC_TUN,
	LW_NIC_VIRTUAL, /* another software device */
};

/* One receive or transmit queue under /sys/class/net/DEV/queues. */
struct lw_nic_queue {
	unsigned irq;  /* its interrupt, 0 none found (software queues) */
	char mask[80]; /* rx: rps_cpus, tx: xps_cpus, as read; "" absent */
	struct lw_cpuset cpus;
	long flow_cnt; /* rx: rps_flow_cnt (RFS), -1 absent */
};

/*
 * A network device other than lo. The ethtool facts come from the node's
 * ethtool implementation (ethtool.h); each et_* is 0 or the query's negative
 * errno (-EOPNOTSUPP: the driver does not say), its struct zero then.
 */
struct lw_nic {
	char name[32];
	int numa_node;	/* -1 unknown */
	unsigned *irqs; /* the device's MSI vectors, else IRQs named after it */
	size_t nr_irqs;
	enum lw_nic_kind kind;
	char driver[32]; /* device/driver, else ethtool's driver, "" unknown */
	char bus[32];	 /* bus address ("0000:81:00.0"), "" none */
	char virtio[16]; /* virtio-net: its virtio device ("virtio2"), whose IRQs name it */
	int speed;	 /* Mb/s, -1 unknown or link down */
	int et_drvinfo, et_channels, et_rss, et_coalesce, et_rings;
	struct lw_et_drvinfo drvinfo;
	struct lw_et_channels ch;
	struct lw_et_rss *rss; /* NULL when et_rss failed */
	struct lw_et_coalesce co;
	struct lw_et_rings rings;
	struct lw_nic_queue *rxq, *txq;
	size_t nr_rxq, nr_txq;
};

/* Distinct receive queues the RSS table sends flows to, each queue's share
 * of the table's entries in weight[] (nr entries, may be NULL). */
unsigned lw_nic_rss_used(const struct lw_nic *nic, unsigned *weight, size_t nr);
/* "physical", "virtio-net", "veth", ... */
const char *lw_nic_kind_name(enum lw_nic_kind k);

/*
 * A receive queue with RPS on: the kernel hands the packets it receives
 * there to the CPUs of rps_cpus (an IPI), whose NET_RX softirq then does
 * their protocol processing, whatever CPU the interrupt hit. Only queues
 * with a non-empty mask are kept.
 */
struct lw_rps {
	char dev[32];	/* under /sys/class/net */
	char queue[16]; /* "rx-0" */
	char mask[80];	/* rps_cpus as read, to put back */
	struct lw_cpuset cpus;
};

struct lw_numa_node {
	int id;
	struct lw_cpuset cpus;
};

struct lw_irqbalance {
	bool running;
	int pid;
	char banned[128];    /* banned CPUs as configured, "" none */
	char banned_src[64]; /* where banned came from */
	struct lw_cpuset banned_set;
};

/* Who sets a cgroup's CPU limit, as its name tells (lw_cg_level.owner):
 * where a fix must go, since a manager rewrites the files it owns. */
enum lw_cg_owner {
	LW_CG_PLAIN = 0, /* none latwhy knows: the cgroup's own file */
	LW_CG_UNIT,	 /* a systemd unit (.service, .slice, .scope): systemctl */
	LW_CG_USER_UNIT, /* a unit of a user's manager (below user@UID.service) */
	LW_CG_DOCKER,	 /* a docker container (docker-ID.scope, /docker/ID) */
	LW_CG_PODMAN,	 /* a podman container (libpod-ID.scope) */
	LW_CG_CONTAINER, /* another runtime's container outside Kubernetes */
	LW_CG_KUBEPODS,	 /* the kubelet's slices above the pods (kubepods, QoS) */
	LW_CG_POD,	 /* a Kubernetes pod (kubepods...pod<uid>): name is the uid */
	LW_CG_POD_CTR,	 /* a container of a Kubernetes pod: name is its id */
};

/* The cgroups read above the target's own, at most (a pod's container is 4
 * deep under the systemd driver, a user's service 5). */
#define LW_CG_LEVELS 16

/*
 * One cgroup on the path of the target's cpu controller (v2, or v1's cpu
 * hierarchy), its own limit and throttling. A limit on any of them throttles
 * the target: the kernel checks each level's quota.
 */
struct lw_cg_level {
	char path[256];	    /* cgroup path ("/system.slice/x.service", "/" root) */
	char dir[320];	    /* its directory below the root ("/sys/fs/cgroup/...") */
	char cpu_max[64];   /* the quota file as read: cpu.max, v1 cpu.cfs_quota_us; "" absent */
	long long quota_us; /* -1: no limit ("max", -1) or unreadable */
	unsigned long long period_us;
	long long burst_us; /* cpu.max.burst, v1 cpu.cfs_burst_us (5.14+); -1 absent */
	bool has_stat;	    /* cpu.stat read */
	/* cpu.stat: since the cgroup was made; v1's ns converted to us */
	unsigned long long nr_periods, nr_throttled, throttled_usec;
	long long nr_bursts, burst_usec; /* -1 absent (before 5.14) */
	enum lw_cg_owner owner;
	/* unit name, container id, pod uid (dashed), QoS class for
	 * LW_CG_KUBEPODS ("Burstable"); "" none */
	char name[96];
};

/* A runtime whose own setting sizes its worker pool (lw_target.runtime). */
enum lw_runtime {
	LW_RT_NONE = 0,
	LW_RT_GO,  /* GOMAXPROCS */
	LW_RT_JVM, /* -XX:ActiveProcessorCount */
};

/* Threads read of the target, at most (/proc/PID/task/TID/stat each). */
#define LW_TASKS_MAX 256

struct lw_target {
	int pid;
	char comm[16];
	char cpus_allowed[128]; /* Cpus_allowed_list */
	struct lw_cpuset cpus;
	int thp_enabled;		 /* THP_enabled: line, -1 absent (kernel too old) */
	int madv_regions;		 /* VMAs with "hg" in VmFlags, -1 unreadable */
	unsigned long long anon_huge_kb; /* AnonHugePages summed over smaps */
	char cgroup[256];		 /* cgroup path, "" unknown */
	int cgroup_v;			 /* 2, 1 (cpu controller on v1) or 0 unknown */
	char cpu_max_path[320];		 /* the file that holds the quota, "" none */
	char cpu_max[64];		 /* its content, as read */
	long long quota_us;		 /* -1 = no limit */
	unsigned long long period_us;
	bool has_cpu_stat;
	unsigned long long nr_periods, nr_throttled, throttled_usec;
	char cpuset[128]; /* cpuset.cpus.effective, "" absent */
	/*
	 * The fields from cpu_max_path to throttled_usec above are those of
	 * the limit that binds, cg[cg_bind]: of the cgroups with a quota, the
	 * one throttled longest (throttled_usec, then nr_throttled), else the
	 * tightest in CPUs. Without any quota, the target's own cgroup's.
	 */
	struct lw_cg_level cg[LW_CG_LEVELS]; /* its own cgroup first, then each parent */
	int nr_cg;
	int cg_bind; /* index into cg, -1: no quota on any */
	/* cpu.stat.local of its own cgroup (6.8+): time it was throttled, by its
	 * own quota or an ancestor's; -1 absent */
	long long local_throttled_usec;
	char pod_qos[16]; /* "Guaranteed", "Burstable", "BestEffort"; "" no pod */
	/* Its threads, from one reading of /proc/PID/task/TID/stat (cumulative
	 * since each started): nr_tasks read (-1 unreadable; LW_TASKS_MAX at
	 * most, the lowest tids, tasks_cut then), busy_tasks of them with at
	 * least a tenth of the busiest one's CPU time (a pool's workers are
	 * peers; start-up and housekeeping threads fall below) */
	int nr_tasks, busy_tasks;
	bool tasks_cut;
	unsigned long long busiest_ticks; /* utime + stime, clock ticks */
	enum lw_runtime runtime;
	int jvm_cpus;	/* -XX:ActiveProcessorCount=N on the command line, -1 none */
	int gc_threads; /* JVM: its "GC Thread#N" threads (sized from its CPUs) */
};

/* What owns the cgroup named comp (one path component) below a parent owned
 * by up, as cglimit.c tells the levels of a target's path apart: name gets
 * the QoS class, pod uid (dashed) or container id, "" none. pods.c walks
 * the kubelet's tree with it. */
enum lw_cg_owner lw_cg_classify(const char *comp, enum lw_cg_owner up, char *name, size_t len);
/* "unit", "docker container", "pod", ...: what owns a cgroup. */
const char *lw_cg_owner_name(enum lw_cg_owner o);
/* "Go", "JVM", "" */
const char *lw_runtime_name(enum lw_runtime r);

struct lw_node {
	char *root;  /* "" for "/" */
	int nr_cpus; /* highest present CPU + 1 */
	struct lw_cpuset online;
	struct lw_cpuset isolated; /* isolated + nohz_full: irqbalance bans them */
	struct lw_cpu *cpus;	   /* nr_cpus entries, indexed by CPU id */
	struct lw_cpufreq freq;
	struct lw_cpuidle idle;
	struct lw_thp thp;
	struct lw_irq *irqs;
	size_t nr_irqs;
	unsigned sample_ms; /* length of the IRQ sample, 0 = none taken */
	/* one interrupt's entry and exit beyond its handler, measured with the
	 * sample (irqcost.h); 0 = not measured */
	unsigned long long irq_entry_ns;
	struct lw_irqbalance irqbalance;
	struct lw_nic *nics;
	size_t nr_nics;
	struct lw_rps *rps;
	size_t nr_rps;
	long rps_sock_flow_entries; /* RFS's global flow table, -1 absent */
	/* /proc/softirqs' NET_RX per CPU (nr_cpus entries; NULL when unreadable),
	 * and over the IRQ sample (NULL when none was taken) */
	unsigned long long *net_rx, *net_rx_delta;
	struct lw_numa_node *numa;
	size_t nr_numa;
	bool vm; /* /proc/cpuinfo's "hypervisor" flag: a guest */
	bool has_target;
	struct lw_target target;
	/* the node's zones (zones 0: unreadable), and the target's memory
	 * cgroup (v 0: none found), read with the target so that a capture's
	 * snapshot holds the group's files for the memory advisor */
	struct lw_zones zones;
	struct lw_memcg memcg;
};

/*
 * Read the node under root (NULL or "/" for the live node) and, when pid is
 * not 0, the target process. Returns 0, -ESRCH when pid does not exist,
 * -ENOENT when root does not exist, -ENOMEM. n must be freed with
 * lw_node_free() whatever the result.
 */
int lw_node_read(struct lw_node *n, const char *root, int pid);
/*
 * A target of several processes: pid's allowed CPUs added to those of the
 * target lw_node_read() read (its cpus and cpus_allowed the union; the rest
 * stays the first process's). 0, -ESRCH when pid is gone, -EINVAL without a
 * target read.
 */
int lw_node_target_add(struct lw_node *n, int pid);
/* The same with the NIC queries of et: NULL picks the kernel's on the live
 * node and the recorded ones under a fixture root. */
int lw_node_read_with(struct lw_node *n, const char *root, int pid, const struct lw_ethtool *et);
/* Sleep ms, re-read /proc/interrupts and fill each IRQ's delta, and
 * /proc/softirqs' NET_RX's. */
int lw_node_sample_irqs(struct lw_node *n, unsigned ms);
void lw_node_free(struct lw_node *n);
/*
 * The cpuidle state numbers that poll, as power:cpu_idle reports them (bit
 * n: state n): the driver's states named POLL. Without a cpuidle driver the
 * idle loop reports 0 when it polls (idle=poll, cpu_idle_poll()) and 1 when
 * it halts: bit 0. Read from cpu0: CPUs share one driver.
 */
unsigned lw_idle_poll_states(const char *root);

/* Shannon entropy in bits of the per-CPU distribution of device interrupts
 * (over the sample when one was taken): higher = more spread. A drift signal. */
double lw_node_irq_entropy(const struct lw_node *n);
/* Lookups; NULL when absent. */
const struct lw_irq *lw_node_irq(const struct lw_node *n, unsigned irq);
const struct lw_numa_node *lw_node_numa(const struct lw_node *n, int id);

/* Interrupts of irq on the CPUs in set: over the sample when one was taken
 * (*sampled = true), else since boot. */
unsigned long long lw_irq_count_on(const struct lw_node *n, const struct lw_irq *q,
				   const struct lw_cpuset *set, bool *sampled);

/* NET_RX softirqs on the CPUs in set: over the sample when one was taken
 * (*sampled = true), else since boot; 0 when /proc/softirqs was unreadable. */
unsigned long long lw_net_rx_on(const struct lw_node *n, const struct lw_cpuset *set,
				bool *sampled);

/*
 * Whether the IRQ named name is a kernel-managed queue vector whose affinity
 * cannot be changed from user space. Used when the kernel does not say so
 * itself through the file mode; see the comment in irq.c.
 */
bool lw_irq_is_managed(const char *name);

const char *lw_freq_drv_name(enum lw_freq_drv d);

#endif /* LW_NODE_H */
