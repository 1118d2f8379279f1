// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-bench: the lock benchmark of the product path. Run at once on
 * every node of a cluster, it creates one lockspace per protocol
 * (RDLOCK_IOC_LS_CREATE, the same attributes everywhere), starts C client
 * threads per node, each with its own /dev/rdlock file joined to the
 * lockspace, and has them take L lock names by RDLOCK_IOC_LOCK/UNLOCK,
 * chosen by a Zipfian distribution, shared or exclusive, holding each for
 * a critical section spun in userspace. Every protocol runs in one
 * invocation, side by side.
 *
 * Coordination uses the raw primitives of the test module (rdlock_test.ko)
 * on node 0's raw slots, F + off .. F + off + SPAN - 1 (F =
 * first_free_slot): a barrier (rdltest.c) starts every node at once, and
 * after the run every node adds its totals, a latency histogram and its
 * per-client counts with FETCH_AND_ADD, so that every node can print the
 * cluster's figures after a second barrier.
 *
 * --uncontended: node after node, each client takes a name of its own,
 * homed on the next node, and the same client times raw FETCH_AND_ADD
 * round trips to that node in the same run (RDLOCK_TEST_IOC_BENCH).
 *
 * --raw-read/--raw-write/--raw-faa/--barrier: small helpers for scripts
 * (a counter in node 0's memory, a one-shot barrier).
 *
 * Protocol "dlm" is the stock kernel's fs/dlm beside rdlock's protocols, in
 * the same workloads and the same run: a lockspace created through
 * /dev/misc/dlm-control and a file of its /dev/misc/dlm_<ls> per client,
 * spoken to directly the way libdlm's dlm_ls_lock_wait() and
 * dlm_ls_unlock_wait() do (a write per request, a read per completion
 * AST), so that the binary stays static. Every node must run corosync and
 * dlm_controld with corosync node ids = rdlock node + 1 (rdlockbench.sh).
 * A lock is a new lock and an unlock per acquisition (lock+unlock, no
 * conversions). fs/dlm masters a name on the first node to lock it: in
 * --uncontended, the next node takes an NL lock on each client's name
 * first and holds it, so that the name is mastered there, as rdlock's
 * names are homed there. If the lockspace cannot be created on every node
 * (or --no-dlm WHY), the protocol is "absent" on all of them, with the
 * reason, and rdlock-bench exits non-zero.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/dlm_device.h>
#include <linux/dlmconstants.h>
#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"
#include "bench.h"
#include "rdltest.h"

#define RAW_SLOTS	1024	/* F .. F + 1023: raw slots below lockspaces */
#define MAX_CLIENTS	64	/* per node */
#define MAX_ALL_CLIENTS	128	/* in the cluster */
#define MAX_LOCKS	4096
#define NAME_TRIES	64	/* uncontended: names tried for a home */

/* Raw slots of one invocation, relative to F + --slot-off, on node 0. */
#define R_BARRIER	0	/* barrier generations */
#define R_SUM		8	/* + S_*: cluster sums of one protocol */
#define  S_ACQ		0	/* acquisitions */
#define  S_OPS		1	/* lockspace remote_ops (debugfs) */
#define  S_LSACQ	2	/* lockspace acquires (debugfs) */
#define  S_ERRORS	3	/* nodes that failed */
#define  S_RATE		4	/* acquisitions/s of the nodes, x1000 */
#define  S_CLIENTS	5	/* clients: every node must run as many */
#define  S_MSGS		6	/* transport messages sent (debugfs nodes) */
#define  S_MSGS_NODES	7	/* nodes that could count them */
#define  S_ACQ_OPS	8	/* lockspace acquire_ops_* (debugfs) */
#define  S_RELS		9	/* lockspace releases */
#define  S_REL_OPS	10	/* lockspace release_ops_* */
#define  S_WAITS	11	/* lockspace waits */
#define  S_NOTIFIES	12	/* lockspace notifies (CQL) */
#define  S_NR		13
#define R_HIST		(R_SUM + S_NR)
#define HIST_BUCKETS	160	/* [0]: < 1 us; 8 per octave above */
#define HIST_PER_OCT	8
#define R_CLIENTS	(R_HIST + HIST_BUCKETS)	/* + node * C + client */
#define R_FAA		(R_CLIENTS + MAX_ALL_CLIENTS)	/* + client, any node */
#define R_AGREE		(R_FAA + MAX_CLIENTS)	/* nodes where a protocol is up */
#define SPAN		(R_AGREE + 1)	/* 414 */

/* fs/dlm, after rdlock's own protocols; its NL mode is rdlock's. */
#define PROTO_DLM	RDLOCK_PROTO_NR
/* CQL in a hierarchical (task-fair) lockspace, RDLOCK_LS_CQL_HIER. */
#define PROTO_CQLH	(PROTO_DLM + 1)
#define NR_PROTOS	(PROTO_CQLH + 1)
#define MODE_DLM_NL	RDLOCK_LOCK_NL

static const char *const proto_names[NR_PROTOS] = {
	[RDLOCK_PROTO_BAKERY] = "bakery",
	[RDLOCK_PROTO_CASLOCK] = "caslock",
	[RDLOCK_PROTO_CQL] = "cql",
	[PROTO_DLM] = "dlm",
	[PROTO_CQLH] = "cqlh",
};

struct opts {
	const char *prefix;
	__u32 protos[NR_PROTOS];
	__u32 nr_protos;
	__u32 clients;
	__u32 locks;
	double zipf;
	double read_ratio;
	__u32 cs_us;
	__u32 duration;		/* seconds; 0: --ops */
	__u32 ops;		/* per client */
	__u32 ls_slots;
	__u32 slot_off;
	__u32 barrier_timeout;
	const char *json;
	const char *no_dlm;	/* fs/dlm is not up here: why */
	const char *workload;	/* a label for the JSON */
	bool uncontended;
};

/* Gray et al., "Quickly generating billion-record synthetic databases". */
struct zipf {
	__u32 n;
	double theta, alpha, zetan, eta, half_pow;
};

struct client {
	pthread_t thread;
	const struct opts *o;
	const struct zipf *z;
	const char *ls;
	__u32 index;
	__u32 node;
	__u32 proto;
	int fd;
	int tfd;		/* /dev/rdlock_test, uncontended */
	__u64 rng;
	double end;		/* --duration: stop time */
	__u32 *acq;		/* acquire latencies, ns */
	__u32 *hold;		/* uncontended: acquire + release, ns */
	__u32 *faa;		/* uncontended: raw FAA, ns */
	size_t n, cap;
	__u64 count;
	__u32 target;		/* uncontended: wanted home node */
	__u32 home;		/* uncontended: the name's home node */
	__u32 faa_slot;
	struct dlm_lksb lksb;	/* fs/dlm: only its address is used */
	int dlm_master;		/* fs/dlm, uncontended: from debugfs, or -1 */
	char name[RDLOCK_RES_NAME_MAX + 1];
	char err[200];
};

/*
 * A lockspace's protocol counters (debugfs stats): remote operations and
 * acquisitions, those of acquisitions and of releases apart, acquisitions
 * that waited and (CQL) notifications sent.
 */
struct ls_counts {
	__u64 ops, acq, acq_ops, rels, rel_ops, waits, notifies;
};

/* Everything one node knows about one protocol after a contended run. */
struct result {
	__u32 proto;
	char ls[RDLOCK_LS_NAME_MAX];
	__u64 acq;
	double secs, rate;
	struct stats st;
	double p999;
	__u64 ops, lsacq;	/* debugfs deltas */
	struct ls_counts d;	/* all of them */
	__u64 msgs;		/* messages sent over the run, if have_msgs */
	bool have_msgs;
	/* cluster */
	__u64 c_acq, c_ops, c_lsacq, c_errors, c_msgs, c_msgs_nodes;
	struct ls_counts c_d;
	__u64 c_hist[HIST_BUCKETS];
	double c_rate, c_p50, c_p99, c_p999, c_max;
	double jain;
	__u64 cl_min, cl_max;
	__u64 cl_counts[MAX_ALL_CLIENTS];
	/* uncontended */
	__u32 home;
	struct stats u_acq, u_hold, u_faa;
	bool failed;
	/* fs/dlm */
	int dlm_minor;
	bool absent;		/* not up on every node */
	char why[160];
};

struct env {
	int tfd;
	struct rdlock_test_info info;
	__u32 node, nr_nodes;
	__u32 base;		/* F + --slot-off */
	__u64 gen;		/* barrier generations passed */
};

static atomic_int stop_all;

static void zipf_init(struct zipf *z, __u32 n, double theta)
{
	double zeta2;
	__u32 i;

	memset(z, 0, sizeof(*z));
	z->n = n;
	z->theta = theta;
	if (theta == 0 || n < 2)
		return;
	for (i = 1; i <= n; i++)
		z->zetan += pow(i, -theta);
	zeta2 = 1 + pow(0.5, theta);
	z->alpha = 1 / (1 - theta);
	z->half_pow = pow(0.5, theta);
	/* Used only for ranks 2 and up, which need n > 2. */
	if (n > 2)
		z->eta = (1 - pow(2.0 / n, 1 - theta)) / (1 - zeta2 / z->zetan);
}

/* A rank in 0 .. n - 1; 0 is the most popular. */
static __u32 zipf_next(const struct zipf *z, __u64 *s)
{
	double u = bench_rnd(s), uz;
	__u32 r;

	if (z->theta == 0 || z->n < 2)
		return (__u32)(u * z->n);
	uz = u * z->zetan;
	if (uz < 1)
		return 0;
	if (uz < 1 + z->half_pow)
		return 1;
	r = (__u32)(z->n * pow(z->eta * u - z->eta + 1, z->alpha));
	return r < z->n ? r : z->n - 1;
}

static int hist_bucket(__u32 ns)
{
	int b;

	if (ns < 1000)
		return 0;
	b = 1 + (int)floor(HIST_PER_OCT * log2(ns / 1000.0));
	return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

/* The middle of a bucket, in microseconds. */
static double hist_value(int b)
{
	if (!b)
		return 0.5;
	return pow(2, (b - 1 + 0.5) / HIST_PER_OCT);
}

static double hist_percentile(const __u64 *h, __u64 total, unsigned int permille)
{
	__u64 rank = (total * permille + 999) / 1000, seen = 0;
	int b;

	if (!rank)
		rank = 1;
	for (b = 0; b < HIST_BUCKETS; b++) {
		seen += h[b];
		if (seen >= rank)
			return hist_value(b);
	}
	return 0;
}

/* Nearest rank on sorted samples, in microseconds. */
static double permille(const __u32 *s, size_t n, unsigned int pm)
{
	__u64 rank = ((__u64)n * pm + 999) / 1000;

	return n ? s[rank ? rank - 1 : 0] / 1000.0 : 0;
}

static int push(__u32 **v, size_t n, size_t *cap, __u32 x)
{
	if (n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		__u32 *p = realloc(*v, c * sizeof(**v));

		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[n] = x;
	return 0;
}

static __u32 clamp_ns(__u64 ns)
{
	return ns > 0xffffffffULL ? 0xffffffffU : (__u32)ns;
}

/* Same attributes on every node; EEXIST from an earlier run: remove, again. */
static int ls_create(const struct opts *o, const char *name, __u32 proto)
{
	struct rdlock_ls_create c;
	int err;

	if (proto == PROTO_CQLH)
		rdl_ls_create_init(&c, name, RDLOCK_PROTO_CQL, o->ls_slots,
				   RDLOCK_LS_CQL_HIER, 0600);
	else
		rdl_ls_create_init(&c, name, proto, o->ls_slots, 0, 0600);
	err = rdl_ls_create_fresh(&c);
	if (err)
		fprintf(stderr, "rdlock-bench: create lockspace %s: %s\n", name,
			strerror(err));
	if (err == EEXIST)
		fprintf(stderr, "rdlock-bench: %s exists with other attributes: %s\n",
			name, "see the kernel log, or use another --lockspace-prefix");
	return err;
}

/*
 * fs/dlm's devices: /dev/misc/NAME where dlm_controld or udev made it,
 * else /dev/NAME (devtmpfs). A lockspace's device shows up just after its
 * creation returns: wait up to @wait_ms for it. An fd or -errno.
 */
static int dlm_open_dev(const char *name, int wait_ms)
{
	char path[128];
	int fd, t;

	for (t = 0;; t += 10) {
		snprintf(path, sizeof(path), "/dev/misc/%s", name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			snprintf(path, sizeof(path), "/dev/%s", name);
			fd = open(path, O_RDWR | O_CLOEXEC);
		}
		if (fd >= 0)
			return fd;
		if (errno != ENOENT || t >= wait_ms)
			return -errno;
		usleep(10000);
	}
}

union dlm_req {
	struct dlm_write_request r;
	char b[sizeof(struct dlm_write_request) + DLM_RESNAME_MAXLEN];
};

static void dlm_req_init(union dlm_req *u, __u8 cmd)
{
	memset(u, 0, sizeof(*u));
	u->r.version[0] = DLM_DEVICE_VERSION_MAJOR;
	u->r.version[1] = DLM_DEVICE_VERSION_MINOR;
	u->r.version[2] = DLM_DEVICE_VERSION_PATCH;
	u->r.cmd = cmd;
	u->r.is64bit = sizeof(long) == 8;
}

/* Create or remove a lockspace: write's result (the device's minor), or -errno. */
static int dlm_ls_request(__u8 cmd, const char *name, __u32 minor, __u32 flags)
{
	size_t len = strlen(name);
	union dlm_req u;
	int fd, ret;

	if (len >= DLM_LOCKSPACE_LEN)
		return -ENAMETOOLONG;
	dlm_req_init(&u, cmd);
	u.r.i.lspace.flags = flags;
	u.r.i.lspace.minor = minor;
	memcpy(u.r.i.lspace.name, name, len + 1);
	fd = dlm_open_dev("dlm-control", 0);
	if (fd < 0)
		return fd;
	ret = write(fd, &u, sizeof(u.r) + len + 1);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The completion AST of this client's request: its status (0: granted,
 * -DLM_EUNLOCK: unlocked, else -errno) and the lock id. Blocking ASTs are
 * not asked for (no bastaddr), so none come.
 */
static int dlm_wait_ast(struct client *c, __u32 *lkid)
{
	char buf[sizeof(struct dlm_lock_result) + DLM_USER_LVB_LEN];
	struct dlm_lock_result res;
	ssize_t n;

	for (;;) {
		n = read(c->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if ((size_t)n < sizeof(res))
			return -EPROTO;
		memcpy(&res, buf, sizeof(res));
		if (res.user_astaddr != (void *)c)
			continue;
		if (lkid)
			*lkid = res.lksb.sb_lkid;
		return res.lksb.sb_status;
	}
}

/* dlm_ls_lock_wait(): 0 and the lock id, or an errno. */
static int dlm_lock_wait(struct client *c, const char *name, __u32 mode,
			 __u32 *lkid)
{
	size_t len = strlen(name);
	union dlm_req u;
	int st;

	if (len > DLM_RESNAME_MAXLEN) {
		errno = ENAMETOOLONG;
		return errno;
	}
	dlm_req_init(&u, DLM_USER_LOCK);
	u.r.i.lock.mode = mode;
	u.r.i.lock.namelen = len;
	u.r.i.lock.castaddr = c;
	u.r.i.lock.castparam = c;
	u.r.i.lock.lksb = &c->lksb;
	memcpy(u.r.i.lock.name, name, len);
	if (write(c->fd, &u, sizeof(u.r) + len) < 0)
		return errno;
	st = dlm_wait_ast(c, lkid);
	return st < 0 ? -st : st ? EPROTO : 0;
}

/* dlm_ls_unlock_wait(): 0 or an errno. */
static int dlm_unlock_wait(struct client *c, __u32 lkid)
{
	union dlm_req u;
	int st;

	dlm_req_init(&u, DLM_USER_UNLOCK);
	u.r.i.lock.lkid = lkid;
	u.r.i.lock.castaddr = c;
	u.r.i.lock.castparam = c;
	u.r.i.lock.lksb = &c->lksb;
	if (write(c->fd, &u, sizeof(u.r)) < 0)
		return errno;
	st = dlm_wait_ast(c, NULL);
	return st == -DLM_EUNLOCK ? 0 : st < 0 ? -st : EPROTO;
}

/*
 * This node's fs/dlm lockspace for @r (blocks until dlm_controld has joined
 * it to the cluster's), or why not in @r->why.
 */
static int dlm_ls_create(const struct opts *o, struct result *r)
{
	int ret;

	if (o->no_dlm) {
		snprintf(r->why, sizeof(r->why), "%s", o->no_dlm);
		return -1;
	}
	ret = dlm_ls_request(DLM_USER_CREATE_LOCKSPACE, r->ls, 0, 0);
	if (ret < 0) {
		snprintf(r->why, sizeof(r->why), "create lockspace %s: %s",
			 r->ls, strerror(-ret));
		return -1;
	}
	r->dlm_minor = ret;
	return 0;
}

static int dlm_ls_remove(struct result *r)
{
	int ret = dlm_ls_request(DLM_USER_REMOVE_LOCKSPACE, r->ls,
				 r->dlm_minor, 0);

	if (ret < 0)
		fprintf(stderr, "rdlock-bench: remove lockspace %s: %s\n",
			r->ls, strerror(-ret));
	return ret < 0 ? -1 : 0;
}

/*
 * Is the set of @ls's members that dlm_controld gave this node's kernel
 * (configfs, node ids = rdlock node + 1) rdlock nodes @first to @nr - 1?
 */
static bool dlm_members_are(const char *ls, __u32 first, __u32 nr)
{
	char path[160];
	struct dirent *d;
	__u32 n = 0;
	bool ok = true;
	char *end;
	long id;
	DIR *dir;

	snprintf(path, sizeof(path),
		 "/sys/kernel/config/dlm/cluster/spaces/%s/nodes", ls);
	dir = opendir(path);
	if (!dir)
		return false;
	while (ok && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		id = strtol(d->d_name, &end, 10);
		ok = !*end && id > first && id <= nr;
		n++;
	}
	closedir(dir);
	return ok && n == nr - first;
}

/*
 * Wait until this node's fs/dlm has finished recovering @ls: a purge of
 * this process's (no) locks takes the lockspace's ls_in_recovery, which
 * recovery holds from the stop until it enables locking again, after its
 * last status exchange with the other members. 0 or -errno.
 */
static int dlm_recovered(const char *ls)
{
	char dev[DLM_LOCKSPACE_LEN + 8];
	union dlm_req u;
	int fd, ret = 0;

	snprintf(dev, sizeof(dev), "dlm_%s", ls);
	fd = dlm_open_dev(dev, 5000);
	if (fd < 0)
		return fd;
	dlm_req_init(&u, DLM_USER_PURGE);
	u.r.i.purge.nodeid = 0;
	u.r.i.purge.pid = gettid();
	if (write(fd, &u, sizeof(u.r)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The node mastering @name in @ls, from dlm's debugfs while this node
 * holds a lock on it ("Master Copy": this node; "Master is node N": node
 * id N = rdlock node N - 1). -1 if not found.
 */
static int dlm_master(const char *ls, const char *name, __u32 self)
{
	char path[128], line[256], want[128];
	bool found = false;
	int nodeid, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/dlm/%s", ls);
	snprintf(want, sizeof(want), "\"%s\"", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Resource ", 9)) {
			found = !!strstr(line, want);
			continue;
		}
		if (!found)
			continue;
		if (!strncmp(line, "Master Copy", 11)) {
			ret = self;
			break;
		}
		if (sscanf(line, "Local Copy, Master is node %d", &nodeid) == 1) {
			ret = nodeid - 1;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* The file joined to @ls, or -1 with a message in @c->err. */
static int client_join(struct client *c)
{
	int fd;

	if (c->proto == PROTO_DLM) {
		char dev[DLM_LOCKSPACE_LEN + 8];

		snprintf(dev, sizeof(dev), "dlm_%s", c->ls);
		fd = dlm_open_dev(dev, 5000);
		if (fd < 0) {
			snprintf(c->err, sizeof(c->err), "open dlm_%s: %s",
				 c->ls, strerror(-fd));
			return -1;
		}
		return fd;
	}
	fd = rdl_open_joined(c->ls);

	if (fd < 0) {
		snprintf(c->err, sizeof(c->err), "JOIN %s: %s", c->ls,
			 strerror(-fd));
		return -1;
	}
	return fd;
}

/* 0, or -1 with a message in @c->err; the handle in *@handle. */
static int lock_name(struct client *c, const char *name, __u32 mode,
		     __u32 *handle)
{
	int err;

	if (c->proto == PROTO_DLM)
		err = dlm_lock_wait(c, name, mode == RDLOCK_LOCK_SH ?
				    DLM_LOCK_PR : mode == MODE_DLM_NL ?
				    DLM_LOCK_NL : DLM_LOCK_EX, handle);
	else
		err = rdl_ls_lock(c->fd, name, mode, 0, 0, handle);

	if (err) {
		snprintf(c->err, sizeof(c->err), "%s lock %s in %s: %s",
			 mode == RDLOCK_LOCK_SH ? "shared" : "exclusive", name,
			 c->ls, strerror(err));
		return -1;
	}
	return 0;
}

static int unlock_handle(struct client *c, __u32 handle, const char *name)
{
	int err = c->proto == PROTO_DLM ? dlm_unlock_wait(c, handle) :
		  rdl_ls_unlock(c->fd, handle);

	if (err) {
		snprintf(c->err, sizeof(c->err), "unlock %s in %s: %s", name,
			 c->ls, strerror(err));
		return -1;
	}
	return 0;
}

static void *contended_client(void *arg)
{
	struct client *c = arg;
	const struct opts *o = c->o;
	char name[32];
	__u32 h, mode;
	__u64 t0, t1;

	while (!stop_all) {
		if (o->duration ? bench_now_ns() / 1e9 >= c->end : c->count >= o->ops)
			break;
		snprintf(name, sizeof(name), "lock%u", zipf_next(c->z, &c->rng));
		mode = bench_rnd(&c->rng) < o->read_ratio ? RDLOCK_LOCK_SH : RDLOCK_LOCK_EX;
		t0 = bench_now_ns();
		if (lock_name(c, name, mode, &h))
			goto fail;
		t1 = bench_now_ns();
		bench_spin_us(o->cs_us);
		if (unlock_handle(c, h, name))
			goto fail;
		if (push(&c->acq, c->n, &c->cap, clamp_ns(t1 - t0))) {
			snprintf(c->err, sizeof(c->err), "out of memory");
			goto fail;
		}
		c->n++;
		c->count++;
	}
	return NULL;
fail:
	stop_all = 1;
	return NULL;
}

/* Parses "name: value" lines of a lockspace's debugfs stats. */
static int ls_stats(const char *ls, struct ls_counts *c)
{
	char path[128], line[128], op[16];
	unsigned long long v;
	int got = 0;
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/sys/kernel/debug/rdlock/lockspaces/%s/stats", ls);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "rdlock-bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "remote_ops: %llu", &v) == 1) {
			c->ops = v;
			got |= 1;
		} else if (sscanf(line, "acquires: %llu", &v) == 1) {
			c->acq = v;
			got |= 2;
		} else if (sscanf(line, "acquire_ops_%15[a-z_]: %llu", op, &v) == 2) {
			c->acq_ops += v;
		} else if (sscanf(line, "release_ops_%15[a-z_]: %llu", op, &v) == 2) {
			c->rel_ops += v;
		} else if (sscanf(line, "releases: %llu", &v) == 1) {
			c->rels = v;
		} else if (sscanf(line, "waits: %llu", &v) == 1) {
			c->waits = v;
		} else if (sscanf(line, "notifies: %llu", &v) == 1) {
			c->notifies = v;
		}
	}
	fclose(f);
	if (got != 3) {
		fprintf(stderr, "rdlock-bench: %s: no remote_ops/acquires\n", path);
		return -1;
	}
	return 0;
}

/* @b - @a, counter by counter. */
static struct ls_counts ls_delta(const struct ls_counts *a,
				 const struct ls_counts *b)
{
	struct ls_counts d = {
		.ops = b->ops - a->ops, .acq = b->acq - a->acq,
		.acq_ops = b->acq_ops - a->acq_ops, .rels = b->rels - a->rels,
		.rel_ops = b->rel_ops - a->rel_ops,
		.waits = b->waits - a->waits,
		.notifies = b->notifies - a->notifies,
	};

	return d;
}

static int barrier(struct env *e, const struct opts *o, const char *what)
{
	char msg[200];

	if (!rdl_barrier(e->tfd, e->nr_nodes, o->barrier_timeout,
			 e->base + R_BARRIER, ++e->gen, msg, sizeof(msg)))
		return 0;
	fprintf(stderr, "rdlock-bench: %s: %s\n", what, msg);
	return -1;
}

static int raw_op(struct env *e, __u32 op, __u32 node, __u32 slot, __u64 arg,
		  __u64 *val)
{
	int err = rdl_xop(e->tfd, op, node, slot, arg, 0, val);

	if (err)
		fprintf(stderr, "rdlock-bench: op %u on node %u slot %u: %s\n",
			op, node, slot, strerror(err));
	return err ? -1 : 0;
}

static int add(struct env *e, __u32 off, __u64 v)
{
	return v ? raw_op(e, RDLOCK_TEST_OP_FAA, 0, e->base + off, v, NULL) : 0;
}

static void ls_name(char *dst, const struct opts *o, __u32 proto)
{
	snprintf(dst, RDLOCK_LS_NAME_MAX, "%s-%s", o->prefix, proto_names[proto]);
}

static void clients_free(struct client *cl, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		if (cl[i].fd >= 0)
			close(cl[i].fd);
		free(cl[i].acq);
		free(cl[i].hold);
		free(cl[i].faa);
	}
}

static int clients_join(struct client *cl, __u32 n, const struct opts *o,
			const char *ls, __u32 proto, const struct zipf *z,
			const struct env *e)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		struct client *c = &cl[i];

		memset(c, 0, sizeof(*c));
		c->o = o;
		c->z = z;
		c->ls = ls;
		c->proto = proto;
		c->index = i;
		c->node = e->node;
		c->tfd = e->tfd;
		c->rng = ((__u64)e->node << 40) ^ ((__u64)i << 32) ^
			 ((__u64)proto << 24) ^ bench_now_ns();
		c->fd = -1;
	}
	for (i = 0; i < n; i++) {
		cl[i].fd = client_join(&cl[i]);
		if (cl[i].fd < 0) {
			fprintf(stderr, "rdlock-bench: %s\n", cl[i].err);
			return -1;
		}
	}
	return 0;
}

/* Runs @fn in a thread per client and waits for them. */
static int run_threads(struct client *cl, __u32 nc, void *(*fn)(void *))
{
	__u32 i, started;
	int ret = 0;

	for (started = 0; started < nc; started++) {
		if (pthread_create(&cl[started].thread, NULL, fn, &cl[started])) {
			fprintf(stderr, "rdlock-bench: pthread_create failed\n");
			stop_all = 1;
			ret = -1;
			break;
		}
	}
	for (i = 0; i < started; i++)
		pthread_join(cl[i].thread, NULL);
	return ret;
}

/*
 * Does @r->proto's lockspace exist on every node? Each node adds @ok to
 * node 0's R_AGREE; read after a barrier, zeroed by node 0 after another
 * (every later use is behind a barrier node 0 passes after that). -1 if the
 * coordination itself failed.
 */
static int agree(struct env *e, const struct opts *o, bool ok, bool *all)
{
	__u64 v;

	if (add(e, R_AGREE, ok) || barrier(e, o, "setup barrier") ||
	    raw_op(e, RDLOCK_TEST_OP_READ, 0, e->base + R_AGREE, 0, &v) ||
	    barrier(e, o, "setup read barrier"))
		return -1;
	if (e->node == 0 && v &&
	    raw_op(e, RDLOCK_TEST_OP_WRITE, 0, e->base + R_AGREE, 0, NULL))
		return -1;
	*all = v == e->nr_nodes;
	return 0;
}

/*
 * From now on rdlock nodes @first to the last are @r's fs/dlm lockspace:
 * each of them waits until dlm_controld has set that member set in its
 * kernel (configfs; written after it stopped the lockspace for the change
 * and just before it starts it) and its recovery for it has ended; then
 * every node, member or not, meets at a barrier. A leave begun while some
 * member still recovers from the last change hangs fs/dlm 6.1: a recovery
 * status message between them that arrives after the leaver's FIN makes
 * its receiver reset the connection ("reset node N because shutdown
 * stuck"), the FIN handshake never completes, and the leaver waits in
 * dlm_midcomms_shutdown() for DLM_SHUTDOWN_TIMEOUT (3 min).
 */
static int dlm_settle(struct env *e, const struct opts *o,
		      const struct result *r, __u32 first)
{
	__u64 end = bench_now_ns() + o->barrier_timeout * 1000000000ULL;
	int err;

	if (e->node >= first) {
		while (!dlm_members_are(r->ls, first, e->nr_nodes)) {
			if (bench_now_ns() > end) {
				fprintf(stderr, "rdlock-bench: fs/dlm %s: %s %u to %u after %u s\n",
					r->ls, "members are not nodes", first,
					e->nr_nodes - 1, o->barrier_timeout);
				return -1;
			}
			/* configfs has no change notification: poll it. */
			usleep(10000);
		}
		err = dlm_recovered(r->ls);
		if (err) {
			fprintf(stderr, "rdlock-bench: fs/dlm %s: wait for recovery: %s\n",
				r->ls, strerror(-err));
			return -1;
		}
	}
	return barrier(e, o, "fs/dlm settle barrier");
}

/*
 * The protocol's lockspace on this node. fs/dlm: on every node or on none
 * (absent, with the reason); 1 then, 0 when it is up, -1 on an error.
 */
static int proto_setup(struct env *e, const struct opts *o, struct result *r)
{
	bool ok, all;

	if (r->proto != PROTO_DLM)
		return ls_create(o, r->ls, r->proto) ? -1 : 0;
	ok = !dlm_ls_create(o, r);
	if (agree(e, o, ok, &all)) {
		if (ok)
			dlm_ls_remove(r);
		return -1;
	}
	if (all) {
		/* Nodes joined at once; every recovery ends before the clock runs. */
		if (!dlm_settle(e, o, r, 0))
			return 0;
		dlm_ls_remove(r);
		return -1;
	}
	if (ok) {
		dlm_ls_remove(r);
		snprintf(r->why, sizeof(r->why), "%s",
			 "fs/dlm is not up on every node");
	}
	r->absent = true;
	/* It goes into JSON strings as it is. */
	for (char *q = r->why; *q; q++)
		if (*q == '"' || *q == '\\' || (unsigned char)*q < ' ')
			*q = '\'';
	fprintf(stderr, "rdlock-bench: fs/dlm absent on node %u: %s\n",
		e->node, r->why);
	return 1;
}

/*
 * fs/dlm: the nodes leave one at a time, node 0 first, each once the
 * others have finished recovering from the last leave (dlm_settle()), and
 * the last settle barrier is passed once every node has left. A node whose
 * wait failed still leaves in its turn (then fails the run) but waits no
 * more: the others may be gone.
 */
static void proto_teardown(struct env *e, const struct opts *o,
			   struct result *r)
{
	bool synced = true;
	__u32 t;

	if (r->proto == PROTO_DLM) {
		for (t = 0; t <= e->nr_nodes; t++) {
			if (synced && dlm_settle(e, o, r, t)) {
				synced = false;
				r->failed = true;
			}
			if (t == e->node && dlm_ls_remove(r))
				r->failed = true;
		}
		return;
	}
	if (rdl_ls_remove(r->ls))
		fprintf(stderr, "rdlock-bench: remove lockspace %s failed\n", r->ls);
}

/* rdlock's lockspace counters; fs/dlm has none (zeros). */
static int stats_of(const struct result *r, struct ls_counts *c)
{
	if (r->proto == PROTO_DLM) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	return ls_stats(r->ls, c);
}

/* The run's counters, from the counts before (@c0) and after (@c1) it. */
static void set_deltas(struct result *r, const struct ls_counts *c0,
		       const struct ls_counts *c1)
{
	r->d = ls_delta(c0, c1);
	r->ops = r->d.ops;
	r->lsacq = r->d.acq;
}

/*
 * Contended run of one protocol; every node runs this at once. Barriers:
 * start, totals added, totals read (node 0 then zeroes what it read).
 */
static int run_contended(struct env *e, const struct opts *o, __u32 proto,
			 const struct zipf *z, struct result *r)
{
	struct ls_counts c0 = { 0 }, c1 = { 0 };
	__u64 hist[HIST_BUCKETS] = { 0 };
	unsigned long long msgs0 = 0, msgs1 = 0;
	__u64 sums[S_NR], h, sq = 0;
	struct client cl[MAX_CLIENTS];
	__u32 i, j, nc = o->clients, all = e->nr_nodes * nc, *merged;
	size_t total = 0;
	double t0, sum2 = 0, s1 = 0;
	char name[32];
	int ret = -1;

	memset(r, 0, sizeof(*r));
	r->proto = proto;
	ls_name(r->ls, o, proto);
	ret = proto_setup(e, o, r);
	if (ret)
		return ret < 0 ? -1 : 0;
	ret = -1;
	if (clients_join(cl, nc, o, r->ls, proto, z, e))
		goto out;
	/* Every name's entry is found once before the clock runs. */
	for (i = 0; i < o->locks; i++) {
		snprintf(name, sizeof(name), "lock%u", i);
		if (lock_name(&cl[0], name, RDLOCK_LOCK_SH, &j) ||
		    unlock_handle(&cl[0], j, name)) {
			fprintf(stderr, "rdlock-bench: warm-up: %s\n", cl[0].err);
			goto out;
		}
	}
	if (stats_of(r, &c0) || barrier(e, o, "start barrier"))
		goto out;
	/* After the barrier: its own polls are not the protocol's messages. */
	r->have_msgs = proto != PROTO_DLM && !bench_msgs_sent(&msgs0);

	stop_all = 0;
	t0 = rdl_now();
	for (i = 0; i < nc; i++)
		cl[i].end = t0 + o->duration;
	if (run_threads(cl, nc, contended_client))
		r->failed = true;
	r->secs = rdl_now() - t0;
	for (i = 0; i < nc; i++) {
		if (cl[i].err[0]) {
			fprintf(stderr, "rdlock-bench: node %u client %u: %s\n",
				e->node, i, cl[i].err);
			r->failed = true;
		}
		r->acq += cl[i].count;
		total += cl[i].n;
	}
	if (stats_of(r, &c1))
		r->failed = true;
	/* Only a figure, not a result: a node without it is not a failure. */
	if (r->have_msgs && !bench_msgs_sent(&msgs1) && msgs1 >= msgs0)
		r->msgs = msgs1 - msgs0;
	else
		r->have_msgs = false;
	set_deltas(r, &c0, &c1);
	r->rate = r->secs > 0 ? r->acq / r->secs : 0;

	merged = malloc((total ? total : 1) * sizeof(*merged));
	if (!merged)
		goto out;
	total = 0;
	for (i = 0; i < nc; i++) {
		for (j = 0; j < cl[i].n; j++)
			hist[hist_bucket(cl[i].acq[j])]++;
		memcpy(merged + total, cl[i].acq, cl[i].n * sizeof(*merged));
		total += cl[i].n;
	}
	if (total) {
		compute_stats(merged, total, &r->st);
		r->p999 = permille(merged, total, 999);
	}
	free(merged);

	/* Add this node's figures to node 0's sums, then read them all. */
	if (add(e, R_SUM + S_ACQ, r->acq) || add(e, R_SUM + S_OPS, r->ops) ||
	    add(e, R_SUM + S_LSACQ, r->lsacq) ||
	    add(e, R_SUM + S_ERRORS, r->failed) ||
	    add(e, R_SUM + S_RATE, (__u64)(r->rate * 1000)) ||
	    add(e, R_SUM + S_CLIENTS, nc) || add(e, R_SUM + S_MSGS, r->msgs) ||
	    add(e, R_SUM + S_MSGS_NODES, r->have_msgs) ||
	    add(e, R_SUM + S_ACQ_OPS, r->d.acq_ops) ||
	    add(e, R_SUM + S_RELS, r->d.rels) ||
	    add(e, R_SUM + S_REL_OPS, r->d.rel_ops) ||
	    add(e, R_SUM + S_WAITS, r->d.waits) ||
	    add(e, R_SUM + S_NOTIFIES, r->d.notifies))
		goto out;
	for (i = 0; i < HIST_BUCKETS; i++)
		if (add(e, R_HIST + i, hist[i]))
			goto out;
	for (i = 0; i < nc; i++)
		if (add(e, R_CLIENTS + e->node * nc + i, cl[i].count))
			goto out;
	if (barrier(e, o, "gather barrier"))
		goto out;
	for (i = 0; i < S_NR; i++)
		if (raw_op(e, RDLOCK_TEST_OP_READ, 0, e->base + R_SUM + i, 0, &sums[i]))
			goto out;
	for (i = 0, h = 0; i < HIST_BUCKETS; i++) {
		if (raw_op(e, RDLOCK_TEST_OP_READ, 0, e->base + R_HIST + i, 0, &hist[i]))
			goto out;
		h += hist[i];
	}
	memcpy(r->c_hist, hist, sizeof(hist));
	for (i = 0; i < all; i++)
		if (raw_op(e, RDLOCK_TEST_OP_READ, 0, e->base + R_CLIENTS + i, 0,
			   &r->cl_counts[i]))
			goto out;
	if (barrier(e, o, "read barrier"))
		goto out;
	/* Nobody reads them any more; the next start barrier waits for us. */
	if (e->node == 0) {
		for (i = 0; i < S_NR; i++)
			if (sums[i] && raw_op(e, RDLOCK_TEST_OP_WRITE, 0,
					      e->base + R_SUM + i, 0, NULL))
				goto out;
		for (i = 0; i < HIST_BUCKETS; i++)
			if (hist[i] && raw_op(e, RDLOCK_TEST_OP_WRITE, 0,
					      e->base + R_HIST + i, 0, NULL))
				goto out;
		for (i = 0; i < all; i++)
			if (r->cl_counts[i] &&
			    raw_op(e, RDLOCK_TEST_OP_WRITE, 0,
				   e->base + R_CLIENTS + i, 0, NULL))
				goto out;
	}

	r->c_acq = sums[S_ACQ];
	r->c_ops = sums[S_OPS];
	r->c_lsacq = sums[S_LSACQ];
	r->c_errors = sums[S_ERRORS];
	r->c_msgs = sums[S_MSGS];
	r->c_msgs_nodes = sums[S_MSGS_NODES];
	r->c_d.ops = sums[S_OPS];
	r->c_d.acq = sums[S_LSACQ];
	r->c_d.acq_ops = sums[S_ACQ_OPS];
	r->c_d.rels = sums[S_RELS];
	r->c_d.rel_ops = sums[S_REL_OPS];
	r->c_d.waits = sums[S_WAITS];
	r->c_d.notifies = sums[S_NOTIFIES];
	r->c_rate = sums[S_RATE] / 1000.0;
	if (h) {
		r->c_p50 = hist_percentile(hist, h, 500);
		r->c_p99 = hist_percentile(hist, h, 990);
		r->c_p999 = hist_percentile(hist, h, 999);
		r->c_max = hist_percentile(hist, h, 1000);
	}
	r->cl_min = ~0ULL;
	for (i = 0; i < all; i++) {
		double x = r->cl_counts[i];

		s1 += x;
		sum2 += x * x;
		sq += r->cl_counts[i];
		if (r->cl_counts[i] < r->cl_min)
			r->cl_min = r->cl_counts[i];
		if (r->cl_counts[i] > r->cl_max)
			r->cl_max = r->cl_counts[i];
	}
	r->jain = sum2 > 0 ? s1 * s1 / (all * sum2) : 0;
	if (sums[S_CLIENTS] != all) {
		fprintf(stderr, "rdlock-bench: %llu clients in the cluster, not %u: %s\n",
			(unsigned long long)sums[S_CLIENTS], all,
			"every node needs the same --clients");
		r->failed = true;
	}
	if (sq != r->c_acq) {
		fprintf(stderr, "rdlock-bench: per-client counts add up to %llu, not %llu\n",
			(unsigned long long)sq, (unsigned long long)r->c_acq);
		r->failed = true;
	}
	ret = 0;
out:
	clients_free(cl, o->clients);
	proto_teardown(e, o, r);
	return ret;
}

/* The home node of @c->name, from a lock taken once (QUERY). */
static int name_home(struct client *c, __u32 *home)
{
	struct rdlock_query q = { .version = RDLOCK_UAPI_VERSION };
	__u32 h;
	int err = 0;

	if (lock_name(c, c->name, RDLOCK_LOCK_EX, &h))
		return -1;
	q.handle = h;
	if (ioctl(c->fd, RDLOCK_IOC_QUERY, &q) < 0) {
		err = errno;
		snprintf(c->err, sizeof(c->err), "query %s: %s", c->name,
			 strerror(err));
	}
	*home = q.home_node;
	if (unlock_handle(c, h, c->name))
		return -1;
	return err ? -1 : 0;
}

static int faa_bench(struct client *c, __u32 n, __u32 *out)
{
	struct rdlock_test_bench b = {
		.op = { .op = RDLOCK_TEST_OP_FAA, .node = c->home,
			.slot = c->faa_slot, .arg0 = 1 },
		.iterations = n,
		.samples = (__u64)(uintptr_t)out,
	};

	if (ioctl(c->tfd, RDLOCK_TEST_IOC_BENCH, &b) < 0) {
		snprintf(c->err, sizeof(c->err), "FAA bench to node %u: %s",
			 c->home, strerror(errno));
		return -1;
	}
	return 0;
}

/* Uncontended, first: a name only this client uses, homed on c->target. */
static void *uncontended_name(void *arg)
{
	struct client *c = arg;
	__u32 k, h;
	int m;

	if (c->proto == PROTO_DLM) {
		/* Mastered on c->target by its NL lock (dlm_hold_names()). */
		snprintf(c->name, sizeof(c->name), "d%u.%u", c->node, c->index);
		if (lock_name(c, c->name, RDLOCK_LOCK_EX, &h)) {
			stop_all = 1;
			return NULL;
		}
		m = dlm_master(c->ls, c->name, c->node);
		if (unlock_handle(c, h, c->name))
			stop_all = 1;
		c->dlm_master = m;
		c->home = c->target;
		return NULL;
	}
	for (k = 0; k < NAME_TRIES; k++) {
		snprintf(c->name, sizeof(c->name), "u%u.%u.%u", c->node,
			 c->index, k);
		if (name_home(c, &c->home)) {
			stop_all = 1;
			break;
		}
		if (c->home == c->target)
			break;
	}
	return NULL;
}

/*
 * Then o->ops exclusive acquire+release of that name and as many raw FAAs
 * to its home node, in 4 interleaved rounds.
 */
static void *uncontended_client(void *arg)
{
	struct client *c = arg;
	__u32 k, i, round, h, n = c->o->ops, per;
	__u64 t0, t1;

	c->acq = calloc(n, sizeof(*c->acq));
	c->hold = calloc(n, sizeof(*c->hold));
	c->faa = calloc(n, sizeof(*c->faa));
	if (!c->acq || !c->hold || !c->faa) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		goto fail;
	}
	for (round = 0, i = 0; round < 4; round++) {
		per = round < 3 ? n / 4 : n - 3 * (n / 4);
		if (per && faa_bench(c, per, c->faa + i))
			goto fail;
		for (k = 0; k < per; k++, i++) {
			t0 = bench_now_ns();
			if (lock_name(c, c->name, RDLOCK_LOCK_EX, &h))
				goto fail;
			t1 = bench_now_ns();
			if (unlock_handle(c, h, c->name))
				goto fail;
			c->acq[i] = clamp_ns(t1 - t0);
			c->hold[i] = clamp_ns(bench_now_ns() - t0);
		}
	}
	c->n = n;
	return NULL;
fail:
	stop_all = 1;
	return NULL;
}

/*
 * fs/dlm, uncontended: this node locks the previous node's clients' names
 * first, in NL mode, and holds them, so that fs/dlm masters them here (the
 * first node to lock a name masters it while it has locks), the way
 * rdlock homes those clients' names on this node. Then a barrier.
 */
static int dlm_hold_names(struct env *e, const struct opts *o,
			  struct client *holder, const char *ls)
{
	__u32 i, prev = (e->node + e->nr_nodes - 1) % e->nr_nodes, h;
	char name[32];

	memset(holder, 0, sizeof(*holder));
	holder->o = o;
	holder->ls = ls;
	holder->proto = PROTO_DLM;
	holder->node = e->node;
	holder->fd = client_join(holder);
	if (holder->fd < 0)
		goto fail;
	for (i = 0; i < o->clients; i++) {
		snprintf(name, sizeof(name), "d%u.%u", prev, i);
		if (lock_name(holder, name, MODE_DLM_NL, &h))
			goto fail;
	}
	return barrier(e, o, "master barrier");
fail:
	fprintf(stderr, "rdlock-bench: %s\n", holder->err);
	return -1;
}

/*
 * Node after node (a barrier between turns), so that nothing else runs in
 * the cluster while a node measures.
 */
static int run_uncontended(struct env *e, const struct opts *o, __u32 proto,
			   struct result *r)
{
	struct client cl[MAX_CLIENTS], holder = { .fd = -1 };
	__u32 i, t, nc = o->clients, n = nc * o->ops, *a = NULL, *h = NULL, *f = NULL;
	struct ls_counts c0 = { 0 }, c1 = { 0 };
	int ret;

	memset(r, 0, sizeof(*r));
	r->proto = proto;
	ls_name(r->ls, o, proto);
	ret = proto_setup(e, o, r);
	if (ret)
		return ret < 0 ? -1 : 0;
	ret = -1;
	if (clients_join(cl, nc, o, r->ls, proto, NULL, e))
		goto out;
	if (proto == PROTO_DLM && dlm_hold_names(e, o, &holder, r->ls))
		goto out;
	stop_all = 0;
	for (i = 0; i < nc; i++) {
		/* The next node, or ourselves alone. */
		cl[i].target = (e->node + 1) % e->nr_nodes;
		cl[i].faa_slot = e->base + R_FAA + i;
	}
	for (t = 0; t < e->nr_nodes; t++) {
		if (barrier(e, o, "turn barrier"))
			goto out;
		if (t != e->node)
			continue;
		if (run_threads(cl, nc, uncontended_name) || stop_all ||
		    stats_of(r, &c0) ||
		    run_threads(cl, nc, uncontended_client) ||
		    stats_of(r, &c1))
			r->failed = true;
	}
	if (barrier(e, o, "end barrier"))
		goto out;
	for (i = 0; i < nc; i++) {
		if (cl[i].err[0] || cl[i].n != o->ops) {
			fprintf(stderr, "rdlock-bench: node %u client %u: %s\n",
				e->node, i, cl[i].err[0] ? cl[i].err : "did not finish");
			r->failed = true;
		}
	}
	if (r->failed) {
		ret = 0;
		goto out;
	}
	a = malloc(n * sizeof(*a));
	h = malloc(n * sizeof(*h));
	f = malloc(n * sizeof(*f));
	if (!a || !h || !f)
		goto out;
	for (i = 0; i < nc; i++) {
		memcpy(a + i * o->ops, cl[i].acq, o->ops * sizeof(*a));
		memcpy(h + i * o->ops, cl[i].hold, o->ops * sizeof(*h));
		memcpy(f + i * o->ops, cl[i].faa, o->ops * sizeof(*f));
	}
	compute_stats(a, n, &r->u_acq);
	compute_stats(h, n, &r->u_hold);
	compute_stats(f, n, &r->u_faa);
	set_deltas(r, &c0, &c1);
	r->home = proto == PROTO_DLM ? (__u32)cl[0].dlm_master : cl[0].home;
	for (i = 1; i < nc; i++)
		if ((proto == PROTO_DLM ? (__u32)cl[i].dlm_master : cl[i].home) !=
		    r->home)
			r->home = ~0U;
	ret = 0;
out:
	free(a);
	free(h);
	free(f);
	clients_free(cl, o->clients);
	if (holder.fd >= 0)
		close(holder.fd);
	proto_teardown(e, o, r);
	return ret;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_contended(const struct env *e, const struct opts *o,
			    const struct result *r, __u32 n)
{
	const struct result *b = NULL, *c = NULL;
	char mm[48];
	__u32 i;

	printf("rdlock-bench: node %u of %u, %u clients per node, %u locks, ",
	       e->node, e->nr_nodes, o->clients, o->locks);
	printf("zipf %.2f, %.0f%% shared, critical section %u us (spin), ",
	       o->zipf, o->read_ratio * 100, o->cs_us);
	if (o->duration)
		printf("%u s per protocol\n", o->duration);
	else
		printf("%u acquisitions per client\n", o->ops);
	printf("acquire latency (the lock call only) in usec; %s\n",
	       "cluster percentiles from a histogram, 8 buckets per octave");
	printf("%-8s %-7s %9s %10s %9s %9s %9s %9s %7s %6s %14s\n", "proto",
	       "scope", "acq", "acq/s", "p50", "p99", "p99.9", "max",
	       "ops/acq", "jain", "client min/max");
	for (i = 0; i < n; i++) {
		if (r[i].absent) {
			printf("%-8s absent: %s\n", proto_names[r[i].proto], r[i].why);
			continue;
		}
		printf("%-8s %-7s %9llu %10.1f %9.1f %9.1f %9.1f %9.1f %7.2f\n",
		       proto_names[r[i].proto], "node",
		       (unsigned long long)r[i].acq, r[i].rate, r[i].st.p50,
		       r[i].st.p99, r[i].p999, r[i].st.max,
		       ratio(r[i].ops, r[i].lsacq));
		snprintf(mm, sizeof(mm), "%llu/%llu", (unsigned long long)r[i].cl_min,
			 (unsigned long long)r[i].cl_max);
		printf("%-8s %-7s %9llu %10.1f %9.1f %9.1f %9.1f %9.1f %7.2f %6.3f %14s\n",
		       proto_names[r[i].proto], "cluster",
		       (unsigned long long)r[i].c_acq, r[i].c_rate, r[i].c_p50,
		       r[i].c_p99, r[i].c_p999, r[i].c_max,
		       ratio(r[i].c_ops, r[i].c_lsacq), r[i].jain, mm);
		if (r[i].proto == RDLOCK_PROTO_BAKERY)
			b = &r[i];
		else if (r[i].proto == RDLOCK_PROTO_CASLOCK)
			c = &r[i];
	}
	for (i = 0; i < n; i++) {
		const struct ls_counts *d = &r[i].c_d;

		if (r[i].absent || r[i].proto == PROTO_DLM)
			continue;
		printf("%-8s cluster: ops at the home per acquire %.2f, per release %.2f; ",
		       proto_names[r[i].proto], ratio(d->acq_ops, d->acq),
		       ratio(d->rel_ops, d->rels));
		printf("%llu of %llu acquisitions waited, %llu notifications (%.2f per wait)",
		       (unsigned long long)d->waits,
		       (unsigned long long)d->acq,
		       (unsigned long long)d->notifies,
		       ratio(d->notifies, d->waits));
		if (r[i].c_msgs_nodes == e->nr_nodes)
			printf(", %.2f messages per wait", ratio(r[i].c_msgs, d->waits));
		printf("\n");
	}
	if (b && c)
		printf("bakery/caslock: cluster throughput %.2fx, p99 %.2fx; %s %.2fx, p99 %.2fx\n",
		       ratio(b->c_rate, c->c_rate), ratio(b->c_p99, c->c_p99),
		       "this node: throughput", ratio(b->rate, c->rate),
		       ratio(b->st.p99, c->st.p99));
}

static void print_uncontended(const struct env *e, const struct opts *o,
			      const struct result *r, __u32 n)
{
	__u32 i;

	printf("rdlock-bench --uncontended: node %u of %u, %u client(s), %s, ",
	       e->node, e->nr_nodes, o->clients, "a name of its own each");
	printf("%u exclusive acquisitions, usec\n", o->ops);
	printf("%-8s %4s %9s %9s %11s %11s %9s %7s\n", "proto", "home",
	       "acq p50", "acq p99", "acq+rel p50", "acq+rel p99", "FAA p50",
	       "ops/acq");
	for (i = 0; i < n; i++)
		if (r[i].absent)
			printf("%-8s absent: %s\n", proto_names[r[i].proto], r[i].why);
		else
			printf("%-8s %4d %9.1f %9.1f %11.1f %11.1f %9.1f %7.2f\n",
			       proto_names[r[i].proto], (int)r[i].home,
			       r[i].u_acq.p50, r[i].u_acq.p99, r[i].u_hold.p50,
			       r[i].u_hold.p99, r[i].u_faa.p50,
			       ratio(r[i].ops, r[i].lsacq));
	for (i = 0; i < n; i++) {
		if (r[i].absent)
			continue;
		printf("%s: uncontended acquire+release p50 = %.1f us = %.2f x %s%s%.1f us%s\n",
		       proto_names[r[i].proto], r[i].u_hold.p50,
		       ratio(r[i].u_hold.p50, 2 * r[i].u_faa.p50),
		       "two raw FAA round trips ",
		       "(FAA p50 to the same home node ", r[i].u_faa.p50,
		       "; the lock path adds the ioctl and lockspace layers)");
	}
}

/* JSON members: "key": value, comma-separated. */
static void jf(FILE *f, bool *first, const char *key, double v)
{
	fprintf(f, "%s\"%s\": %.3f", *first ? "" : ", ", key, v);
	*first = false;
}

static void ju(FILE *f, bool *first, const char *key, unsigned long long v)
{
	fprintf(f, "%s\"%s\": %llu", *first ? "" : ", ", key, v);
	*first = false;
}

static void js(FILE *f, bool *first, const char *key, const char *v)
{
	fprintf(f, "%s\"%s\": \"%s\"", *first ? "" : ", ", key, v);
	*first = false;
}

/* Opens an object member; *first for its own members. */
static void jo(FILE *f, bool *first, const char *key)
{
	fprintf(f, "%s\"%s\": {", *first ? "" : ", ", key);
	*first = true;
}

static void json_stats(FILE *f, const char *key, const struct stats *s)
{
	bool first = false;

	jo(f, &first, key);
	jf(f, &first, "p50_us", s->p50);
	jf(f, &first, "p99_us", s->p99);
	jf(f, &first, "mean_us", s->mean);
	jf(f, &first, "max_us", s->max);
	fprintf(f, "}");
}

/*
 * The cluster's latency histogram, for a CDF: the upper edge of every
 * non-empty bucket in microseconds and its count (the last bucket also
 * holds everything above its edge).
 */
static void json_hist(FILE *f, const __u64 *h)
{
	const char *sep = "";
	int b;

	fprintf(f, ", \"hist\": {\"buckets_per_octave\": %d, \"upper_us\": [",
		HIST_PER_OCT);
	for (b = 0; b < HIST_BUCKETS; b++)
		if (h[b]) {
			fprintf(f, "%s%.3f", sep, b ? pow(2, (double)b / HIST_PER_OCT) : 1.0);
			sep = ", ";
		}
	fprintf(f, "], \"count\": [");
	sep = "";
	for (b = 0; b < HIST_BUCKETS; b++)
		if (h[b]) {
			fprintf(f, "%s%llu", sep, (unsigned long long)h[b]);
			sep = ", ";
		}
	fprintf(f, "]}");
}

/*
 * Remote operations (all at the lock's home) per acquisition, release
 * included, and split: an acquisition's own, a release's own; how many
 * acquisitions waited, and CQL's notifications per wait (messages per
 * ownership transfer).
 */
static void json_counts(FILE *f, const struct ls_counts *c)
{
	bool first = false;

	ju(f, &first, "acquires", c->acq);
	jf(f, &first, "remote_ops_per_acquire", ratio(c->ops, c->acq));
	jf(f, &first, "acquire_ops_per_acquire", ratio(c->acq_ops, c->acq));
	ju(f, &first, "releases", c->rels);
	jf(f, &first, "release_ops_per_release", ratio(c->rel_ops, c->rels));
	ju(f, &first, "waits", c->waits);
	ju(f, &first, "notifies", c->notifies);
	jf(f, &first, "notifies_per_wait", ratio(c->notifies, c->waits));
}

static void json_proto(FILE *f, const struct env *e, const struct opts *o,
		       const struct result *p)
{
	bool first = true;
	__u32 k;

	bool dlm = p->proto == PROTO_DLM;

	fprintf(f, "    {");
	js(f, &first, "proto", proto_names[p->proto]);
	js(f, &first, "lockspace", p->ls);
	ju(f, &first, "failed", p->failed || p->absent);
	if (p->absent) {
		js(f, &first, "absent", p->why);
		fprintf(f, "}");
		return;
	}
	if (o->uncontended) {
		/* fs/dlm: the name's master node, from dlm's debugfs. */
		fprintf(f, ", \"home_node\": %d", (int)p->home);
		json_stats(f, "acquire", &p->u_acq);
		json_stats(f, "acquire_release", &p->u_hold);
		json_stats(f, "raw_faa", &p->u_faa);
		if (!dlm)
			json_counts(f, &p->d);
		jf(f, &first, "acquire_release_p50_over_2faa",
		   ratio(p->u_hold.p50, 2 * p->u_faa.p50));
		fprintf(f, "}");
		return;
	}
	jo(f, &first, "node_stats");
	ju(f, &first, "acquisitions", p->acq);
	jf(f, &first, "seconds", p->secs);
	jf(f, &first, "acq_per_s", p->rate);
	jf(f, &first, "p50_us", p->st.p50);
	jf(f, &first, "p99_us", p->st.p99);
	jf(f, &first, "p999_us", p->p999);
	jf(f, &first, "max_us", p->st.max);
	if (!dlm) {
		ju(f, &first, "remote_ops", p->ops);
		json_counts(f, &p->d);
	}
	if (p->have_msgs)
		ju(f, &first, "msgs_sent", p->msgs);
	fprintf(f, "}");
	first = false;
	jo(f, &first, "cluster");
	ju(f, &first, "acquisitions", p->c_acq);
	jf(f, &first, "acq_per_s", p->c_rate);
	jf(f, &first, "p50_us", p->c_p50);
	jf(f, &first, "p99_us", p->c_p99);
	jf(f, &first, "p999_us", p->c_p999);
	jf(f, &first, "max_us", p->c_max);
	if (!dlm)
		json_counts(f, &p->c_d);
	jf(f, &first, "jain", p->jain);
	ju(f, &first, "client_min", p->cl_min);
	ju(f, &first, "client_max", p->cl_max);
	ju(f, &first, "failed_nodes", p->c_errors);
	/* Every node's messages, or the sum would be short. */
	if (p->c_msgs_nodes == e->nr_nodes) {
		ju(f, &first, "msgs_sent", p->c_msgs);
		jf(f, &first, "msgs_per_acquire", ratio(p->c_msgs, p->c_acq));
		/* An ownership transfer: a waiter granted by another's release. */
		if (!dlm)
			jf(f, &first, "msgs_per_transfer",
			   ratio(p->c_msgs, p->c_d.waits));
	}
	fprintf(f, ", \"clients\": [");
	for (k = 0; k < e->nr_nodes * o->clients; k++)
		fprintf(f, "%s%llu", k ? ", " : "",
			(unsigned long long)p->cl_counts[k]);
	fprintf(f, "]");
	json_hist(f, p->c_hist);
	fprintf(f, "}}");
}

static int write_json(const struct env *e, const struct opts *o,
		      const struct result *r, __u32 n)
{
	const struct result *b = NULL, *c = NULL;
	FILE *f = fopen(o->json, "w");
	bool first = true;
	__u32 i;

	if (!f) {
		fprintf(stderr, "rdlock-bench: %s: %s\n", o->json, strerror(errno));
		return -1;
	}
	fprintf(f, "{");
	ju(f, &first, "node", e->node);
	ju(f, &first, "nodes", e->nr_nodes);
	js(f, &first, "mode", o->uncontended ? "uncontended" : "contended");
	if (o->workload)
		js(f, &first, "workload", o->workload);
	ju(f, &first, "clients_per_node", o->clients);
	ju(f, &first, "locks", o->locks);
	jf(f, &first, "zipf", o->zipf);
	jf(f, &first, "read_ratio", o->read_ratio);
	ju(f, &first, "cs_us", o->cs_us);
	js(f, &first, "cs", "spin");
	ju(f, &first, "duration_s", o->duration);
	ju(f, &first, "ops_per_client", o->ops);
	fprintf(f, ",\n  \"protocols\": [\n");
	for (i = 0; i < n; i++) {
		json_proto(f, e, o, &r[i]);
		fprintf(f, "%s\n", i + 1 < n ? "," : "");
		if (r[i].proto == RDLOCK_PROTO_BAKERY)
			b = &r[i];
		else if (r[i].proto == RDLOCK_PROTO_CASLOCK)
			c = &r[i];
	}
	fprintf(f, "  ]");
	if (b && c && !o->uncontended) {
		first = false;
		jo(f, &first, "bakery_over_caslock");
		jf(f, &first, "throughput", ratio(b->c_rate, c->c_rate));
		jf(f, &first, "p99", ratio(b->c_p99, c->c_p99));
		jf(f, &first, "node_throughput", ratio(b->rate, c->rate));
		jf(f, &first, "node_p99", ratio(b->st.p99, c->st.p99));
		fprintf(f, "}");
	} else if (b && c) {
		first = false;
		jo(f, &first, "bakery_over_caslock");
		jf(f, &first, "acquire_release_p50", ratio(b->u_hold.p50, c->u_hold.p50));
		fprintf(f, "}");
	}
	fprintf(f, "\n}\n");
	return fclose(f) ? -1 : 0;
}

static int env_open(struct env *e, const struct opts *o, bool need_status)
{
	struct rdlock_status s = { .version = RDLOCK_UAPI_VERSION };
	int fd;

	e->tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	if (e->tfd < 0 || ioctl(e->tfd, RDLOCK_TEST_IOC_INFO, &e->info) < 0) {
		fprintf(stderr, "rdlock-bench: %s: %s (is rdlock_test.ko loaded?)\n",
			TEST_DEV, strerror(errno));
		return -1;
	}
	e->node = e->info.node_id;
	e->base = e->info.first_free_slot + o->slot_off;
	if (e->base + SPAN > e->info.table_slots) {
		fprintf(stderr, "rdlock-bench: table of %u slots is too small\n",
			e->info.table_slots);
		return -1;
	}
	if (!need_status)
		return 0;
	fd = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, RDLOCK_IOC_STATUS, &s) < 0) {
		fprintf(stderr, "rdlock-bench: %s: %s\n", RDLOCK_DEV, strerror(errno));
		return -1;
	}
	close(fd);
	e->nr_nodes = s.nr_nodes;
	if (s.state != RDLOCK_CLUSTER_READY || !e->nr_nodes) {
		fprintf(stderr, "rdlock-bench: the cluster is not ready\n");
		return -1;
	}
	return 0;
}

enum helper { H_NONE, H_READ, H_WRITE, H_FAA, H_BARRIER };

/* --raw-read OFF, --raw-write OFF VALUE, --raw-faa OFF VALUE, --barrier OFF. */
static int run_helper(enum helper hp, const char *off_s, const char *val_s,
		      __u32 node, const struct opts *o)
{
	struct opts oo = *o;
	struct env e = { 0 };
	unsigned long long val = 0;
	__u32 off;
	__u64 v;
	char *end, msg[200];
	int err = 0;

	if (parse_u32_arg(off_s, &off) || off >= RAW_SLOTS) {
		fprintf(stderr, "rdlock-bench: bad raw slot offset '%s' (0..%u)\n",
			off_s, RAW_SLOTS - 1);
		return 2;
	}
	if (val_s) {
		errno = 0;
		val = strtoull(val_s, &end, 0);
		if (errno || end == val_s || *end || val_s[0] == '-') {
			fprintf(stderr, "rdlock-bench: bad value '%s'\n", val_s);
			return 2;
		}
	}
	oo.slot_off = 0;
	if (env_open(&e, &oo, hp == H_BARRIER))
		return 1;
	off += e.info.first_free_slot;
	switch (hp) {
	case H_READ:
		err = rdl_xop(e.tfd, RDLOCK_TEST_OP_READ, node, off, 0, 0, &v);
		break;
	case H_WRITE:
		err = rdl_xop(e.tfd, RDLOCK_TEST_OP_WRITE, node, off, val, 0, &v);
		break;
	case H_FAA:
		err = rdl_xop(e.tfd, RDLOCK_TEST_OP_FAA, node, off, val, 0, &v);
		break;
	default:
		if (rdl_barrier(e.tfd, e.nr_nodes, o->barrier_timeout, off, 1,
				msg, sizeof(msg))) {
			fprintf(stderr, "rdlock-bench: %s\n", msg);
			return 1;
		}
		return 0;
	}
	if (err) {
		fprintf(stderr, "rdlock-bench: node %u slot %u: %s\n", node, off,
			strerror(err));
		return 1;
	}
	if (hp != H_WRITE)
		printf("%llu\n", (unsigned long long)v);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: rdlock-bench [options]     (on every node at once)\n"
		   "  --lockspace-prefix P  lockspaces P-bakery, P-caslock, P-dlm (rdlb)\n"
		   "  --protocols LIST      bakery,caslock,cql,cqlh,dlm (default\n"
		   "                        bakery,caslock); cqlh: CQL, hierarchical;\n"
		   "                        dlm: fs/dlm (corosync, dlm_controld running)\n"
		   "  --no-dlm WHY          fs/dlm is not up on this node: dlm is absent\n"
		   "                        on every node, for this reason\n"
		   "  --clients C           threads per node, a /dev/rdlock file each (2)\n"
		   "  --locks L             lock names lock0 .. lockL-1 (8)\n"
		   "  --zipf THETA          0 <= THETA < 1; 0 = uniform (0.99)\n"
		   "  --read-ratio R        fraction of shared acquisitions (0.5)\n"
		   "  --cs-us T             critical section, spun in userspace (10)\n"
		   "  --duration S          seconds per protocol (10), or\n"
		   "  --ops N               acquisitions per client\n"
		   "  --json FILE           results as JSON too\n"
		   "  --workload NAME       a label for the JSON (letters, digits, _.:-)\n"
		   "  --uncontended         node after node, a name per client homed on\n"
		   "                        the next node, next to raw FAAs to it\n"
		   "                        (--ops acquisitions, default 500)\n"
		   "  --ls-slots N          lockspace size (1024; same on every run)\n"
		   "  --slot-off OFF        raw slots F+OFF .. F+OFF+408 on node 0 (64)\n"
		   "  --barrier-timeout S   (RDLOCK_BARRIER_TIMEOUT, default 300)\n"
		   "Helpers (OFF: raw slot first_free_slot + OFF, on --node, default 0):\n"
		   "  --raw-read OFF | --raw-write OFF VALUE | --raw-faa OFF VALUE\n"
		   "  --barrier OFF         one-shot barrier of every node on a fresh slot\n");
}

static int parse_double(const char *s, double lo, double hi, bool hi_open,
			double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= lo) || *v > hi ||
	    (hi_open && *v == hi))
		return -1;
	return 0;
}

static int parse_protos(char *s, struct opts *o)
{
	char *tok, *save = NULL;
	__u32 p, i;

	o->nr_protos = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (p = 0; p < NR_PROTOS; p++)
			if (!strcmp(tok, proto_names[p]))
				break;
		if (p == NR_PROTOS)
			return -1;
		for (i = 0; i < o->nr_protos; i++)
			if (o->protos[i] == p)
				return -1;
		o->protos[o->nr_protos++] = p;
	}
	return o->nr_protos ? 0 : -1;
}

static int valid_prefix(const char *s)
{
	size_t i, n = strlen(s);

	/* Room for "-caslock" in a lockspace name. */
	if (!n || n > RDLOCK_LS_NAME_MAX - 1 - 8)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("_.:-", s[i])))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "lockspace-prefix", required_argument, NULL, 'P' },
		{ "protocols", required_argument, NULL, 'p' },
		{ "clients", required_argument, NULL, 'c' },
		{ "locks", required_argument, NULL, 'l' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "read-ratio", required_argument, NULL, 'r' },
		{ "cs-us", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ops", required_argument, NULL, 'o' },
		{ "uncontended", no_argument, NULL, 'u' },
		{ "ls-slots", required_argument, NULL, 'S' },
		{ "slot-off", required_argument, NULL, 'O' },
		{ "barrier-timeout", required_argument, NULL, 'B' },
		{ "raw-read", required_argument, NULL, 'R' },
		{ "raw-write", required_argument, NULL, 'W' },
		{ "raw-faa", required_argument, NULL, 'F' },
		{ "barrier", required_argument, NULL, 'b' },
		{ "no-dlm", required_argument, NULL, 'D' },
		{ "workload", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.prefix = "rdlb",
		.protos = { RDLOCK_PROTO_BAKERY, RDLOCK_PROTO_CASLOCK },
		.nr_protos = 2,
		.clients = 2,
		.locks = 8,
		.zipf = 0.99,
		.read_ratio = 0.5,
		.cs_us = 10,
		.ls_slots = 1024,
		.slot_off = 64,
		.barrier_timeout = 300,
	};
	struct result res[NR_PROTOS];
	enum helper hp = H_NONE;
	const char *hp_arg = NULL;
	bool have_duration = false, have_ops = false;
	struct bench_args a = {
		.which = BENCH_OPT_NODE | BENCH_OPT_JSON,
		.max_node = RDLOCK_MAX_NODES,
	};
	struct env e = { 0 };
	__u32 i, node;
	struct zipf z;
	int opt, err, failed = 0;

	if (rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 300, &o.barrier_timeout))
		o.barrier_timeout = 300;
	while ((opt = bench_getopt(argc, argv, "h", lopts, &a)) != -1) {
		switch (opt) {
		case 'P':
			if (!valid_prefix(optarg))
				goto bad;
			o.prefix = optarg;
			break;
		case 'p':
			if (parse_protos(optarg, &o))
				goto bad;
			break;
		case 'c':
			if (bench_arg_u32(optarg, 1, MAX_CLIENTS, &o.clients))
				goto bad;
			break;
		case 'l':
			if (bench_arg_u32(optarg, 1, MAX_LOCKS, &o.locks))
				goto bad;
			break;
		case 'z':
			if (parse_double(optarg, 0, 1, true, &o.zipf))
				goto bad;
			break;
		case 'r':
			if (parse_double(optarg, 0, 1, false, &o.read_ratio))
				goto bad;
			break;
		case 't':
			if (bench_arg_u32(optarg, 0, 10000000, &o.cs_us))
				goto bad;
			break;
		case 'd':
			if (parse_u32_arg(optarg, &o.duration) || !o.duration)
				goto bad;
			have_duration = true;
			break;
		case 'o':
			if (bench_arg_u32(optarg, 1, RDLOCK_TEST_MAX_SAMPLES, &o.ops))
				goto bad;
			have_ops = true;
			break;
		case 'u':
			o.uncontended = true;
			break;
		case 'S':
			if (parse_u32_arg(optarg, &o.ls_slots) || o.ls_slots < 2 ||
			    o.ls_slots % 2 || o.ls_slots > RDLOCK_LS_SLOTS_MAX)
				goto bad;
			break;
		case 'O':
			if (parse_u32_arg(optarg, &o.slot_off) ||
			    o.slot_off + SPAN > RAW_SLOTS) {
				fprintf(stderr, "rdlock-bench: --slot-off at most %u\n",
					RAW_SLOTS - SPAN);
				goto bad;
			}
			break;
		case 'B':
			if (parse_u32_arg(optarg, &o.barrier_timeout) ||
			    !o.barrier_timeout)
				goto bad;
			break;
		case 'R':
		case 'W':
		case 'F':
		case 'b':
			if (hp != H_NONE)
				goto bad;
			hp = opt == 'R' ? H_READ : opt == 'W' ? H_WRITE :
			     opt == 'F' ? H_FAA : H_BARRIER;
			hp_arg = optarg;
			break;
		case 'D':
			o.no_dlm = optarg;
			break;
		case 'L':
			if (!valid_prefix(optarg))
				goto bad;
			o.workload = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	node = a.node;
	o.json = a.json;
	if (hp == H_WRITE || hp == H_FAA) {
		if (optind + 1 != argc)
			goto bad;
		return run_helper(hp, hp_arg, argv[optind], node, &o);
	}
	if (optind != argc || (have_duration && have_ops))
		goto bad;
	if (hp != H_NONE)
		return run_helper(hp, hp_arg, NULL, node, &o);
	if (o.uncontended) {
		if (have_duration)
			goto bad;
		if (!have_ops)
			o.ops = 500;
	} else if (!have_ops && !have_duration) {
		o.duration = 10;
	}

	if (env_open(&e, &o, true))
		return 1;
	if (e.nr_nodes * o.clients > MAX_ALL_CLIENTS) {
		fprintf(stderr, "rdlock-bench: %u nodes x %u clients: at most %u in all\n",
			e.nr_nodes, o.clients, MAX_ALL_CLIENTS);
		return 2;
	}
	/*
	 * Barrier generations go on from an earlier invocation on the same
	 * --slot-off: every node left its last barrier, and none can have
	 * passed our first one yet.
	 */
	err = rdl_barrier_done(e.tfd, e.nr_nodes, e.base + R_BARRIER, &e.gen);
	if (err) {
		fprintf(stderr, "rdlock-bench: barrier READ: %s\n", strerror(err));
		return 1;
	}
	zipf_init(&z, o.locks, o.zipf);
	for (i = 0; i < o.nr_protos; i++) {
		err = o.uncontended ?
		      run_uncontended(&e, &o, o.protos[i], &res[i]) :
		      run_contended(&e, &o, o.protos[i], &z, &res[i]);

		/* A node that failed setup leaves the others at a barrier. */
		if (err) {
			fprintf(stderr, "rdlock-bench: %s failed on node %u\n",
				proto_names[o.protos[i]], e.node);
			return 1;
		}
	}
	if (o.uncontended)
		print_uncontended(&e, &o, res, o.nr_protos);
	else
		print_contended(&e, &o, res, o.nr_protos);
	for (i = 0; i < o.nr_protos; i++)
		if (res[i].absent) {
			printf("rdlock-bench: %s absent: %s\n",
			       proto_names[res[i].proto], res[i].why);
			failed = 1;
		} else if (res[i].failed || res[i].c_errors) {
			printf("rdlock-bench: %s failed (this node: %s; failed nodes: %llu)\n",
			       proto_names[res[i].proto], res[i].failed ? "yes" : "no",
			       (unsigned long long)res[i].c_errors);
			failed = 1;
		}
	if (o.json && write_json(&e, &o, res, o.nr_protos))
		failed = 1;
	close(e.tfd);
	return failed;
bad:
	usage(stderr);
	return 2;
}
