// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-node test of /dev/rdlock lockspaces, run at once on every node of
 * a guest cluster. Locks are only ever taken by name through /dev/rdlock;
 * the raw primitives of /dev/rdlock_test (rdl_xop) hold the shared
 * counters, flags and barriers, in slots F .. F + 1023 (F =
 * first_free_slot) below the lockspaces.
 *
 * attributes	node 0 creates a lockspace; the others must get EEXIST for
 *		another protocol, slot count, flags or lease, and attach
 *		with the same ones (node-local omega, uid, gid, mode differ);
 *		the same for a CQL lockspace's queue and version bits (0 and
 *		the default are the same).
 * exclusion	per protocol (bakery, CAS spinlock, CQL): T threads per node, each
 *		with its own file joined to the lockspace, take 4 hot names M
 *		times in random modes (7 in 10 exclusive). An exclusive holder
 *		does a non-atomic READ + WRITE increment of the name's counter
 *		and marks a writer flag; shared holders check the flag. The
 *		counters must equal the exclusive grants of the cluster
 *		exactly. Every node must see a name at the same home and slot.
 * update	the same in an RDLOCK_LS_UPDATE bakery lockspace with shared,
 *		update and exclusive requests; update holders read the counter,
 *		upgrade with CONVERT (TRY first, then waiting), must read the
 *		same value again (no writer got in), write, and sometimes
 *		convert back before releasing.
 * fairness	bakery, one exclusive name: each acquisition takes an
 *		arrival number (FAA right before LOCK) and a grant number (FAA
 *		inside); the largest number of later arrivals granted before
 *		an earlier one must stay below the cluster's thread count
 *		(every node resolves the name before the threads start;
 *		each thread takes the lock once uncounted, then a node's
 *		threads start together).
 * stream	readers on every node but the last keep taking a shared lock
 *		(holding it a while) until told to stop; the last node asks
 *		for the exclusive lock and must get it while all readers are
 *		still running.
 * names	every node takes RDLOCK_LS_NAMES (200) distinct names once:
 *		no error, and every node is the home of some.
 * reclaim	name entries are freed once no node uses them: node 0 locks
 *		and unlocks four times as many throwaway names as the
 *		lockspace has entries (none may fail), and every name it
 *		forgot freed its entry (debugfs counts, exact, and the
 *		homes' entries hold only its cached names); the others then
 *		take fresh names. A name held by node 1 ("keep") and one it
 *		has only resolved ("shared") keep their lock words through
 *		node 0 forgetting them under a second flood. Node 1 then
 *		holds names until ENOSPC, which must come from a home with
 *		every entry taken; once released, the last node takes new
 *		names again.
 *
 * cql_try	TRY in CQL lockspaces, flat, hierarchical task-fair and
 *		phase-fair: every node's TRY SH and TRY EX of a name nobody
 *		used are granted; while node 0 holds a name SH, every node's
 *		TRY SH is granted and TRY EX refused (EAGAIN); while it
 *		holds one EX, every TRY is refused.
 *
 * dlm_blocking	a DLM lockspace (RDLOCK_LS_DLM) across nodes: node 0 holds
 *		PR; node 1's TRY EX fails with EAGAIN and sends no notice;
 *		node 1 then waits for EX: node 0's file becomes readable
 *		within a bounded wait, gives exactly one event (its handle,
 *		EX), unlocks, and node 1 is granted. Then conversions across
 *		nodes with NOQUEUE (node 2, or 0 with two nodes): NL beside
 *		EX, NL->PR refused then granted after EX->PR, PR->EX refused
 *		beside PR, granted after PR->NL (waiting, with its event on
 *		the PR holder), EX->NL, NL->EX.
 *
 * link_down	node 0's links to every peer go down for 6 s, the tables kept
 *		(debugfs inject_link_down_ms), and node 0 asks meanwhile for
 *		fresh names in a bakery, a CAS spinlock and a hierarchical
 *		CQL lockspace: a TRY EX is granted (a name homed here) or
 *		refused (EAGAIN), an EX with a 100 ms timeout granted or
 *		ETIMEDOUT, some of each; a blocking EX is granted once the
 *		links are back. ENOTCONN never comes: a link being made again
 *		is waited through as a busy lock is.
 *
 * Env: RDLOCK_NODE_ID, RDLOCK_NR_NODES, RDLOCK_LS_ITERS (M, default 50),
 * RDLOCK_THREADS (T, default 2), RDLOCK_FAIR_ITERS (default 30),
 * RDLOCK_LS_NAMES (default 200), RDLOCK_BARRIER_TIMEOUT (s, default 600),
 * RDLOCK_LS_RECLAIM (0: skip name_reclaim, which another step runs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdltest.h"

#include <kselftest_harness.h>

#include "select.h"

#define NR_HOT		4
#define MAX_THREADS	16
#define RAW_SLOTS	1024	/* F .. F + 1023 are ours */

/* Raw slots relative to F; barriers and totals on node 0. */
#define R_ATTR		32	/* barriers + 0 .. 5 */
#define R_TRY		38	/* barriers + 0 .. 23 */
/* Exclusion test regions: R_EXCL0 + 64p; CQL between fair and stream. */
#define R_EXCL0		64
#define  X_COUNTER	0	/* + name, on node (name + 1) % N */
#define  X_FLAG		8	/* + name, on node (name + 1) % N */
#define  X_TOTAL	16	/* + name */
#define  X_HOME		24	/* + name: (home << 32 | slot) + 1 */
#define  X_BARRIER	32	/* + 0 .. 3 */
#define R_FAIR		256
#define  F_ARRIVAL	0
#define  F_GRANT	1
#define  F_BARRIER	8	/* + 0 .. 3 */
#define R_STREAM	320
#define  S_READERS	0	/* readers in their loop */
#define  S_STOP		1	/* the writer is done: readers stop */
#define  S_GAVE_UP	2	/* a reader hit its deadline */
#define  S_WRITER_IN	3	/* the writer holds the lock */
#define  S_BARRIER	8	/* + 0 .. 3 */
#define R_NAMES		384
#define  N_HOMES	0	/* + home node: names homed there */
#define  N_BARRIER	48	/* + 0 .. 3 */
#define R_RECLAIM	440
#define  RC_BARRIER	0	/* + 0 .. 10 */
#define  RC_N0_UNUSED	16	/* node 0's cached names after the flood */
#define  RC_USED	17	/* entries used, summed over homes */
#define  RC_REFS	18	/* their references */
#define  RC_KEEP	19	/* (home << 32 | slot) + 1 of "keep" */
#define  RC_SHARED	20	/* the same of "shared" */
#define  RC_FULL	21	/* homes with every entry taken */
#define R_DLM		480	/* barriers + 0 .. 15 */
#define R_FRESH		496	/* barriers + 0 .. 3 */
#define R_LINK		500	/* barriers + 0 .. 6 */
#define R_FAIR_ORDER	512	/* + grant number: arrival number + 1 */
#define FAIR_MAX	(RAW_SLOTS - R_FAIR_ORDER)

/* Name entries per node of the reclaim test's lockspace. */
#define RC_ENTRIES	8

#define STREAM_HOLD_US		20000
#define STREAM_DEADLINE_S	120
#define STREAM_WRITER_MS	90000

enum { P_BAKERY, P_CASLOCK, P_UPDATE, P_CQL };

static __u32 r_excl(__u32 p)
{
	return p < P_CQL ? R_EXCL0 + 64 * p : 272;
}

struct ls_env {
	__u32 self, nr_nodes, iters, threads, fair_iters, names;
	__u32 barrier_timeout, base, reclaim;
};

static int ls_create(int fd, const char *name, __u32 proto, __u32 slots,
		     __u32 flags, __u32 lease_ms, __u32 mode)
{
	struct rdlock_ls_create c;

	rdl_ls_create_init(&c, name, proto, slots, flags, mode);
	c.lease_ms = lease_ms;
	return rdl_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c);
}

struct ls_ctx {
	int fd;		/* /dev/rdlock_test */
	int dev;	/* /dev/rdlock */
	struct ls_env env;
};

FIXTURE(ls) {
	struct ls_ctx c;
	double start;
};

FIXTURE_SETUP(ls)
{
	struct ls_env *e = &self->c.env;
	struct rdlock_test_info info;

	self->start = rdl_now();
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NODE_ID", -1, &e->self));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NR_NODES", -1, &e->nr_nodes));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_LS_ITERS", 50, &e->iters));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_LS_RECLAIM", 1, &e->reclaim));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_THREADS", 2, &e->threads));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_FAIR_ITERS", 30, &e->fair_iters));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_LS_NAMES", 200, &e->names));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 600,
				 &e->barrier_timeout));
	ASSERT_LT(e->self, e->nr_nodes);
	ASSERT_LE(2, e->nr_nodes);
	ASSERT_LE(1, e->threads);
	ASSERT_GE(MAX_THREADS, e->threads);
	self->c.fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->c.fd);
	self->c.dev = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->c.dev);
	ASSERT_EQ(0, ioctl(self->c.fd, RDLOCK_TEST_IOC_INFO, &info));
	ASSERT_EQ(1, info.ready);
	ASSERT_LE(info.first_free_slot + RAW_SLOTS, info.table_slots);
	e->base = info.first_free_slot;
}

/* Where the step's time goes: the suite's budget is planned on it. */
FIXTURE_TEARDOWN(ls)
{
	printf("# %s took %.1f s\n", _metadata->name, rdl_now() - self->start);
	close(self->c.dev);
	close(self->c.fd);
}

static int barrier(const struct ls_ctx *c, __u32 rel_slot, char *msg,
		   size_t len)
{
	return rdl_barrier(c->fd, c->env.nr_nodes, c->env.barrier_timeout,
			   c->env.base + rel_slot, 1, msg, len);
}

#define BARRIER(ctx, rel) do {						\
	char msg_[160];							\
									\
	ASSERT_EQ(0, barrier((ctx), (rel), msg_, sizeof(msg_)))	\
		TH_LOG("%s", msg_);					\
} while (0)

/* Every node creates (or attaches to) @name, then waits for the others. */
static void setup_ls(struct __test_metadata *_metadata, struct ls_ctx *c,
		     const char *name, __u32 proto, __u32 slots, __u32 flags,
		     __u32 barrier_rel)
{
	int got = ls_create(c->dev, name, proto, slots, flags, 0, 0666);

	EXPECT_EQ(0, got)
		TH_LOG("LS_CREATE %s: %s", name, strerror(got));
	BARRIER(c, barrier_rel);
}

/* Nobody uses @name any more once everybody is here: remove it. */
/* Join @ls, take and release one name there: everybody can lock in it. */
static void lock_once(struct __test_metadata *_metadata, const char *ls)
{
	int fd = rdl_open_joined(ls);
	__u32 h;

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, rdl_ls_lock(fd, "attr", RDLOCK_LOCK_EX, 0, 60000, &h));
	EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	close(fd);
}

static void teardown_ls(struct __test_metadata *_metadata,
			struct ls_ctx *c, const char *name,
			__u32 barrier_rel)
{
	int got;

	BARRIER(c, barrier_rel);
	got = rdl_ls_by_name(c->dev, RDLOCK_IOC_LS_REMOVE, name);
	EXPECT_EQ(0, got)
		TH_LOG("LS_REMOVE %s: %s", name, strerror(got));
}

static int cql_create(int fd, const char *name, __u8 queue_bits,
		      __u8 version_bits)
{
	struct rdlock_ls_create c;

	rdl_ls_create_init(&c, name, RDLOCK_PROTO_CQL, 64, 0, 0666);
	c.queue_bits = queue_bits;
	c.version_bits = version_bits;
	return rdl_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c);
}

/* Node 0 fixes a CQL lockspace's widths; the others must match them. */
static void cql_attributes(struct __test_metadata *_metadata,
			   struct ls_ctx *c)
{
	static const char *ls = "ls_attr_cql";
	int got;

	if (c->env.self == 0)
		ASSERT_EQ(0, cql_create(c->dev, ls, 4, 0));
	BARRIER(c, R_ATTR + 3);
	if (c->env.self != 0) {
		got = cql_create(c->dev, ls, 3, 0);
		EXPECT_EQ(EEXIST, got)
			TH_LOG("LS_CREATE cql, other queue bits: %s",
			       strerror(got));
		got = cql_create(c->dev, ls, 4, 15);
		EXPECT_EQ(EEXIST, got)
			TH_LOG("LS_CREATE cql, other version bits: %s",
			       strerror(got));
		got = cql_create(c->dev, ls, 0, 0);
		EXPECT_EQ(EEXIST, got)
			TH_LOG("LS_CREATE cql, default queue bits: %s",
			       strerror(got));
		/* 0 is the default, 16: the same policy. */
		got = cql_create(c->dev, ls, 4, RDLOCK_CQL_VERSION_BITS_DEFAULT);
		EXPECT_EQ(0, got)
			TH_LOG("LS_CREATE cql, same bits: %s", strerror(got));
	}
	BARRIER(c, R_ATTR + 4);
	lock_once(_metadata, ls);
	teardown_ls(_metadata, c, ls, R_ATTR + 5);
}

TEST_F_TIMEOUT(ls, attributes, 600)
{
	static const char *ls = "ls_attr";
	int got;

	if (self->c.env.self == 0)
		ASSERT_EQ(0, ls_create(self->c.dev, ls, RDLOCK_PROTO_BAKERY, 64, 0,
				       0, 0666));
	BARRIER(&self->c, R_ATTR);
	if (self->c.env.self != 0) {
		struct rdlock_ls_create c;
		static const struct {
			const char *what;
			__u32 proto, slots, flags, lease_ms;
		} others[] = {
			{ "protocol", RDLOCK_PROTO_CASLOCK, 64, 0, 0 },
			{ "slots", RDLOCK_PROTO_BAKERY, 128, 0, 0 },
			{ "flags", RDLOCK_PROTO_BAKERY, 64, RDLOCK_LS_UPDATE, 0 },
			{ "lease", RDLOCK_PROTO_BAKERY, 64, 0, 1000 },
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(others); i++) {
			got = ls_create(self->c.dev, ls, others[i].proto,
					others[i].slots, others[i].flags,
					others[i].lease_ms, 0666);
			EXPECT_EQ(EEXIST, got)
				TH_LOG("LS_CREATE with another %s than node 0: %s",
				       others[i].what, strerror(got));
		}
		/* What is this node's own may differ. */
		rdl_ls_create_init(&c, ls, RDLOCK_PROTO_BAKERY, 64, 0, 0600);
		c.omega_us = 50;
		c.uid = 1;
		c.gid = 1;
		got = rdl_ioctl(self->c.dev, RDLOCK_IOC_LS_CREATE, &c);
		EXPECT_EQ(0, got)
			TH_LOG("LS_CREATE attaching to node 0's: %s",
			       strerror(got));
	}
	BARRIER(&self->c, R_ATTR + 1);
	got = ls_create(self->c.dev, ls, RDLOCK_PROTO_BAKERY, 64, 0, 0, 0666);
	EXPECT_EQ(EEXIST, got)
		TH_LOG("LS_CREATE again on the same node: %s", strerror(got));
	/* Everybody can lock in it: a name taken by all, one at a time. */
	lock_once(_metadata, ls);
	teardown_ls(_metadata, &self->c, ls, R_ATTR + 2);
	cql_attributes(_metadata, &self->c);
}

struct worker {
	const struct ls_env *env;
	const char *ls;
	__u32 region, index;
	bool update;
	__u64 writes[NR_HOT];
	__u64 violations, acquires, upgrades, upgrade_waits, downgrades;
	__u64 home_mismatch, query_bad;
	bool queried[NR_HOT];
	char err[200];
};

static __u32 data_home(const struct ls_env *e, __u32 name)
{
	return (name + 1) % e->nr_nodes;
}

static __u32 xslot(const struct ls_env *e, __u32 region, __u32 what,
		   __u32 name)
{
	return e->base + region + what + name;
}

static void fail(struct worker *w, const char *fmt, const char *what,
		 __u32 name, int err)
{
	if (!w->err[0])
		snprintf(w->err, sizeof(w->err), fmt, what, name, strerror(err));
}

/* One raw operation on a name's data slot; records the first error. */
static int data_op(int tfd, struct worker *w, __u32 op, __u32 what,
		   __u32 name, __u64 arg, __u64 *val)
{
	const struct ls_env *e = w->env;
	int err = rdl_xop(tfd, op, data_home(e, name),
			  xslot(e, w->region, what, name), arg, 0, val);

	if (err)
		fail(w, "raw op %s on name %u: %s", op == RDLOCK_TEST_OP_READ ?
		     "READ" : "WRITE", name, err);
	return err;
}

/* Increment the counter as the only writer; *seen: the value read. */
static int exclusive_write(int tfd, struct worker *w, __u32 name, __u64 *seen)
{
	__u64 mark = ((__u64)w->env->self << 32) | (w->index + 1), flag, c;

	if (data_op(tfd, w, RDLOCK_TEST_OP_READ, X_FLAG, name, 0, &flag))
		return -1;
	if (flag)
		w->violations++;
	if (data_op(tfd, w, RDLOCK_TEST_OP_WRITE, X_FLAG, name, mark, NULL) ||
	    data_op(tfd, w, RDLOCK_TEST_OP_READ, X_COUNTER, name, 0, &c) ||
	    data_op(tfd, w, RDLOCK_TEST_OP_WRITE, X_COUNTER, name, c + 1, NULL) ||
	    data_op(tfd, w, RDLOCK_TEST_OP_READ, X_FLAG, name, 0, &flag))
		return -1;
	if (flag != mark)
		w->violations++;
	if (data_op(tfd, w, RDLOCK_TEST_OP_WRITE, X_FLAG, name, 0, NULL))
		return -1;
	w->writes[name]++;
	if (seen)
		*seen = c;
	return 0;
}

/* A reader (or an update holder before upgrading): no writer inside. */
static int read_section(int tfd, struct worker *w, __u32 name, __u64 *c)
{
	__u64 flag;

	if (data_op(tfd, w, RDLOCK_TEST_OP_READ, X_FLAG, name, 0, &flag))
		return -1;
	if (flag)
		w->violations++;
	if (data_op(tfd, w, RDLOCK_TEST_OP_READ, X_COUNTER, name, 0, c) ||
	    data_op(tfd, w, RDLOCK_TEST_OP_READ, X_FLAG, name, 0, &flag))
		return -1;
	if (flag)
		w->violations++;
	return 0;
}

/* QUERY a held lock once per name; all nodes must agree on its place. */
static void check_query(int fd, int tfd, struct worker *w, __u32 name,
			const char *str, __u32 handle, __u32 mode)
{
	const struct ls_env *e = w->env;
	struct rdlock_query q;
	__u64 want, old = 0;
	int err;

	if (w->queried[name])
		return;
	w->queried[name] = true;
	err = rdl_ls_query(fd, handle, &q);
	if (err) {
		fail(w, "QUERY %s (%u): %s", str, name, err);
		return;
	}
	if (q.mode != mode || q.home_node >= e->nr_nodes ||
	    q.name_len != strlen(str) || memcmp(q.name, str, q.name_len))
		w->query_bad++;
	want = ((__u64)q.home_node << 32 | q.slot) + 1;
	err = rdl_xop(tfd, RDLOCK_TEST_OP_CAS, 0,
		      xslot(e, w->region, X_HOME, name), 0, want, &old);
	if (err)
		fail(w, "CAS home of %s (%u): %s", str, name, err);
	else if (old && old != want)
		w->home_mismatch++;
}

static __u32 pick_mode(unsigned int *seed, bool update)
{
	unsigned int r = rand_r(seed) % 10;

	if (!update)
		return r < 7 ? RDLOCK_LOCK_EX : RDLOCK_LOCK_SH;
	return r < 3 ? RDLOCK_LOCK_SH : r < 7 ? RDLOCK_LOCK_UP : RDLOCK_LOCK_EX;
}

/* An update holder: read, upgrade, the same value again, write. */
static int update_section(int fd, int tfd, struct worker *w, __u32 name,
			  __u32 handle, unsigned int *seed)
{
	__u64 before, seen;
	int err;

	if (read_section(tfd, w, name, &before))
		return -1;
	err = rand_r(seed) % 2 ? rdl_ls_convert(fd, handle, RDLOCK_LOCK_EX,
						RDLOCK_LKF_TRY, 0) : EAGAIN;
	if (err == EAGAIN) {
		w->upgrade_waits++;
		err = rdl_ls_convert(fd, handle, RDLOCK_LOCK_EX, 0, 0);
	}
	if (err) {
		fail(w, "CONVERT %s to EX (name %u): %s", "UP", name, err);
		return -1;
	}
	w->upgrades++;
	if (exclusive_write(tfd, w, name, &seen))
		return -1;
	if (seen != before)
		w->violations++;	/* a writer got in beside us */
	if (rand_r(seed) % 2) {
		err = rdl_ls_convert(fd, handle, RDLOCK_LOCK_UP, 0, 0);
		if (err) {
			fail(w, "CONVERT %s back to UP (name %u): %s", "EX",
			     name, err);
			return -1;
		}
		w->downgrades++;
		return read_section(tfd, w, name, &seen);
	}
	return 0;
}

static void *exclusion_main(void *arg)
{
	struct worker *w = arg;
	const struct ls_env *e = w->env;
	unsigned int seed = e->self * 7919 + w->index * 104729 + w->region;
	int fd = rdl_open_joined(w->ls), tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	__u32 it;

	if (fd < 0 || tfd < 0) {
		snprintf(w->err, sizeof(w->err), "open/JOIN %s: %s", w->ls,
			 strerror(fd < 0 ? -fd : errno));
		goto out;
	}
	for (it = 0; it < e->iters && !w->err[0]; it++) {
		__u32 name = rand_r(&seed) % NR_HOT, mode, h;
		char str[16];
		__u64 c;
		int err;

		mode = pick_mode(&seed, w->update);
		snprintf(str, sizeof(str), "hot%u", name);
		err = rdl_ls_lock(fd, str, mode, 0, 0, &h);
		if (err) {
			fail(w, "LOCK %s (%u): %s", str, name, err);
			break;
		}
		w->acquires++;
		check_query(fd, tfd, w, name, str, h, mode);
		if (mode == RDLOCK_LOCK_EX)
			exclusive_write(tfd, w, name, NULL);
		else if (mode == RDLOCK_LOCK_SH)
			read_section(tfd, w, name, &c);
		else
			update_section(fd, tfd, w, name, h, &seed);
		err = rdl_ls_unlock(fd, h);
		if (err)
			fail(w, "UNLOCK %s (%u): %s", str, name, err);
	}
out:
	if (fd >= 0)
		close(fd);
	if (tfd >= 0)
		close(tfd);
	return NULL;
}

static void run_exclusion(struct __test_metadata *_metadata,
			  struct ls_ctx *c, const char *ls, __u32 proto,
			  __u32 flags, __u32 p, __u32 slots)
{
	const struct ls_env *e = &c->env;
	__u32 region = r_excl(p), i, n, failed = 0;
	__u64 writes[NR_HOT] = { 0 }, violations = 0, acq = 0, up = 0;
	__u64 waits = 0, down = 0, mismatch = 0, bad = 0;
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];

	setup_ls(_metadata, c, ls, proto, slots, flags, region + X_BARRIER);
	memset(w, 0, sizeof(w));
	for (i = 0; i < e->threads; i++) {
		w[i].env = e;
		w[i].ls = ls;
		w[i].region = region;
		w[i].index = i;
		w[i].update = flags & RDLOCK_LS_UPDATE;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, exclusion_main, &w[i]));
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err[0]) {
			TH_LOG("thread %u: %s", i, w[i].err);
			failed++;
		}
		for (n = 0; n < NR_HOT; n++)
			writes[n] += w[i].writes[n];
		violations += w[i].violations;
		acq += w[i].acquires;
		up += w[i].upgrades;
		waits += w[i].upgrade_waits;
		down += w[i].downgrades;
		mismatch += w[i].home_mismatch;
		bad += w[i].query_bad;
	}
	/* Whatever happened, the others wait for us at the barriers. */
	BARRIER(c, region + X_BARRIER + 1);
	for (n = 0; n < NR_HOT; n++)
		ASSERT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_FAA, 0,
				     xslot(e, region, X_TOTAL, n), writes[n], 0,
				     NULL));
	BARRIER(c, region + X_BARRIER + 2);

	EXPECT_EQ(0, failed);
	EXPECT_EQ(0, violations);
	EXPECT_EQ(0, mismatch)
		TH_LOG("nodes disagree on where a name lives");
	EXPECT_EQ(0, bad)
		TH_LOG("QUERY reported another mode or name, or a bad home");
	for (n = 0; n < NR_HOT; n++) {
		__u64 total = 0, counter = 0;

		ASSERT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_READ, 0,
				     xslot(e, region, X_TOTAL, n), 0, 0, &total));
		ASSERT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_READ,
				     data_home(e, n),
				     xslot(e, region, X_COUNTER, n), 0, 0,
				     &counter));
		EXPECT_EQ(total, counter)
			TH_LOG("name hot%u: %llu writes granted, counter %llu",
			       n, (unsigned long long)total,
			       (unsigned long long)counter);
		EXPECT_LT(0, total);
	}
	printf("# node %u, %s: %llu acquisitions", e->self, ls,
	       (unsigned long long)acq);
	if (flags & RDLOCK_LS_UPDATE)
		printf(", %llu upgrades (%llu waited), %llu back to UP",
		       (unsigned long long)up, (unsigned long long)waits,
		       (unsigned long long)down);
	printf("\n");
	teardown_ls(_metadata, c, ls, region + X_BARRIER + 3);
}

/* Slots of the CQL TRY lockspaces: room for 16 names at the defaults. */
#define TRY_SLOTS	(16 * (2 + (1 << RDLOCK_CQL_QUEUE_BITS_DEFAULT)))

/* TRY @mode on @name in @fd: expect @want (0 or EAGAIN), unlock. */
static void try_expect(struct __test_metadata *_metadata, int fd,
		       const char *ls, const char *name, __u32 mode, int want)
{
	__u32 h;
	int got;

	got = rdl_ls_lock(fd, name, mode, RDLOCK_LKF_TRY, 0, &h);
	EXPECT_EQ(want, got)
		TH_LOG("%s: TRY %s on %s: %s", ls,
		       mode == RDLOCK_LOCK_SH ? "SH" : "EX", name,
		       strerror(got));
	if (!got)
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
}

/* The cql_try test in lockspace @ls, created with @flags; barriers @rel. */
static void try_cql(struct __test_metadata *_metadata, struct ls_ctx *c,
		    const char *ls, __u32 flags, __u32 rel)
{
	const struct ls_env *e = &c->env;
	char name[32];
	__u32 h = 0;
	int fd;

	setup_ls(_metadata, c, ls, RDLOCK_PROTO_CQL, TRY_SLOTS, flags, rel);
	fd = rdl_open_joined(ls);
	ASSERT_LE(0, fd);
	/* Names nobody has used: granted, whatever their home. */
	snprintf(name, sizeof(name), "free-sh.%u", e->self);
	try_expect(_metadata, fd, ls, name, RDLOCK_LOCK_SH, 0);
	snprintf(name, sizeof(name), "free-ex.%u", e->self);
	try_expect(_metadata, fd, ls, name, RDLOCK_LOCK_EX, 0);
	BARRIER(c, rel + 1);
	/* Held shared by node 0: readers get in, node 0's own too. */
	if (e->self == 0)
		ASSERT_EQ(0, rdl_ls_lock(fd, "held-sh", RDLOCK_LOCK_SH, 0,
					 60000, &h));
	BARRIER(c, rel + 2);
	try_expect(_metadata, fd, ls, "held-sh", RDLOCK_LOCK_SH, 0);
	BARRIER(c, rel + 3);
	try_expect(_metadata, fd, ls, "held-sh", RDLOCK_LOCK_EX, EAGAIN);
	BARRIER(c, rel + 4);
	/* Held exclusive by node 0: nobody gets in. */
	if (e->self == 0) {
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
		ASSERT_EQ(0, rdl_ls_lock(fd, "held-ex", RDLOCK_LOCK_EX, 0,
					 60000, &h));
	}
	BARRIER(c, rel + 5);
	try_expect(_metadata, fd, ls, "held-ex", RDLOCK_LOCK_SH, EAGAIN);
	try_expect(_metadata, fd, ls, "held-ex", RDLOCK_LOCK_EX, EAGAIN);
	BARRIER(c, rel + 6);
	if (e->self == 0)
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	close(fd);
	teardown_ls(_metadata, c, ls, rel + 7);
}

TEST_F_TIMEOUT(ls, cql_try, 300)
{
	try_cql(_metadata, &self->c, "ls_try", 0, R_TRY);
	try_cql(_metadata, &self->c, "ls_try_tf", RDLOCK_LS_CQL_HIER,
		R_TRY + 8);
	try_cql(_metadata, &self->c, "ls_try_pf", RDLOCK_LS_CQL_FLAGS,
		R_TRY + 16);
}

#define LINK_DOWN	"inject_link_down_ms"
#define LINK_DOWN_MS	6000
#define LINK_NAMES	6	/* per lockspace and kind of request */

/* The link_down test's requests of kind @kind in @ls (@fd): see the top. */
static int link_requests(struct __test_metadata *_metadata, int fd,
			 const char *ls, const char *kind, __u32 flags,
			 __u32 timeout_ms, int busy)
{
	char name[32];
	int got, n = 0;
	__u32 i, h;

	for (i = 0; i < LINK_NAMES; i++) {
		snprintf(name, sizeof(name), "%s.%u", kind, i);
		got = rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, flags, timeout_ms,
				  &h);
		EXPECT_TRUE(!got || got == busy)
			TH_LOG("%s: %s with the links down: %s", ls, name,
			       strerror(got));
		n += got == busy;
		if (!got)
			EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	}
	return n;
}

TEST_F_TIMEOUT(ls, link_down, 300)
{
	static const struct {
		const char *name;
		__u32 proto, flags;
	} lss[] = {
		{ "ls_link_bakery", RDLOCK_PROTO_BAKERY, 0 },
		{ "ls_link_cas", RDLOCK_PROTO_CASLOCK, 0 },
		{ "ls_link_cql", RDLOCK_PROTO_CQL, RDLOCK_LS_CQL_HIER },
	};
	const struct ls_env *e = &self->c.env;
	int fds[ARRAY_SIZE(lss)], refused = 0, timed_out = 0;
	long long down0, left;
	__u32 i;

	for (i = 0; i < ARRAY_SIZE(lss); i++) {
		setup_ls(_metadata, &self->c, lss[i].name, lss[i].proto,
			 TRY_SLOTS, lss[i].flags, R_LINK + i);
		fds[i] = rdl_open_joined(lss[i].name);
		ASSERT_LE(0, fds[i]);
	}
	if (e->self == 0) {
		down0 = rdl_debugfs_counter("cluster", "links_down_injected");
		ASSERT_LE(0, down0);
		ASSERT_EQ(0, rdl_debugfs_write(LINK_DOWN, LINK_DOWN_MS));
		for (i = 0; i < ARRAY_SIZE(lss); i++)
			refused += link_requests(_metadata, fds[i],
						 lss[i].name, "try",
						 RDLOCK_LKF_TRY, 0, EAGAIN);
		for (i = 0; i < ARRAY_SIZE(lss); i++)
			timed_out += link_requests(_metadata, fds[i],
						   lss[i].name, "timeout", 0,
						   100, ETIMEDOUT);
		/* The event: all of that was asked for with the links down. */
		left = rdl_debugfs_read(LINK_DOWN);
		EXPECT_LT(0, left)
			TH_LOG("the links were back before the requests ended");
		for (i = 0; i < ARRAY_SIZE(lss); i++)
			link_requests(_metadata, fds[i], lss[i].name, "wait",
				      0, 0, 0);
		EXPECT_EQ(1, rdl_debugfs_counter("cluster",
						 "links_down_injected") -
			     down0);
		/* 18 names each, all homed here: 1 in 3^18. */
		EXPECT_LT(0, refused);
		EXPECT_LT(0, timed_out);
		printf("# node 0, links down: %d TRY refused, %d timed out\n",
		       refused, timed_out);
	}
	rdl_debugfs_write(LINK_DOWN, 0);
	BARRIER(&self->c, R_LINK + 3);
	for (i = 0; i < ARRAY_SIZE(lss); i++) {
		close(fds[i]);
		teardown_ls(_metadata, &self->c, lss[i].name, R_LINK + 4 + i);
	}
}

TEST_F_TIMEOUT(ls, bakery_exclusion, 900)
{
	run_exclusion(_metadata, &self->c, "ls_bakery", RDLOCK_PROTO_BAKERY, 0,
		      P_BAKERY, 256);
}

TEST_F_TIMEOUT(ls, caslock_exclusion, 900)
{
	run_exclusion(_metadata, &self->c, "ls_caslock", RDLOCK_PROTO_CASLOCK, 0,
		      P_CASLOCK, 256);
}

TEST_F_TIMEOUT(ls, cql_exclusion, 900)
{
	/*
	 * As many names per node as the others (128): with fewer, names are
	 * reclaimed between uses and may come back in another entry, which
	 * the home check takes for a disagreement.
	 */
	run_exclusion(_metadata, &self->c, "ls_cql", RDLOCK_PROTO_CQL, 0, P_CQL,
		      128 * (2 + (1 << RDLOCK_CQL_QUEUE_BITS_DEFAULT)));
}

TEST_F_TIMEOUT(ls, update_exclusion, 900)
{
	run_exclusion(_metadata, &self->c, "ls_update", RDLOCK_PROTO_BAKERY,
		      RDLOCK_LS_UPDATE, P_UPDATE, 256);
}

struct fair_worker {
	const struct ls_env *env;
	pthread_barrier_t *start;
	__u32 index;
	char err[160];
};

static void *fair_main(void *arg)
{
	struct fair_worker *w = arg;
	const struct ls_env *e = w->env;
	int fd = rdl_open_joined("ls_fair"), tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	__u64 arrival, grant;
	__u32 it, h;
	int err;

	if (fd < 0 || tfd < 0) {
		snprintf(w->err, sizeof(w->err), "open/JOIN: %s",
			 strerror(fd < 0 ? -fd : errno));
		pthread_barrier_wait(w->start);
		goto out;
	}
	/*
	 * One acquisition outside the count, then start together: a thread
	 * still being created, or doing its file's first lock, while the
	 * others queue is descheduled between its arrival and its ticket,
	 * which the count would take for the lock's unfairness.
	 */
	err = rdl_ls_lock(fd, "fair", RDLOCK_LOCK_EX, 0, 0, &h);
	if (!err)
		err = rdl_ls_unlock(fd, h);
	pthread_barrier_wait(w->start);
	if (err) {
		snprintf(w->err, sizeof(w->err), "first LOCK: %s",
			 strerror(err));
		goto out;
	}
	for (it = 0; it < e->fair_iters; it++) {
		err = rdl_xop(tfd, RDLOCK_TEST_OP_FAA, 0,
			      e->base + R_FAIR + F_ARRIVAL, 1, 0, &arrival);
		if (err) {
			snprintf(w->err, sizeof(w->err), "arrival FAA: %s",
				 strerror(err));
			break;
		}
		err = rdl_ls_lock(fd, "fair", RDLOCK_LOCK_EX, 0, 0, &h);
		if (err) {
			snprintf(w->err, sizeof(w->err), "LOCK: %s", strerror(err));
			break;
		}
		err = rdl_xop(tfd, RDLOCK_TEST_OP_FAA, 0,
			      e->base + R_FAIR + F_GRANT, 1, 0, &grant);
		if (!err && grant < FAIR_MAX)
			err = rdl_xop(tfd, RDLOCK_TEST_OP_WRITE, 0,
				      e->base + R_FAIR_ORDER + grant,
				      arrival + 1, 0, NULL);
		if (err)
			snprintf(w->err, sizeof(w->err), "grant: %s",
				 strerror(err));
		err = rdl_ls_unlock(fd, h);
		if (err && !w->err[0])
			snprintf(w->err, sizeof(w->err), "UNLOCK: %s",
				 strerror(err));
		if (w->err[0])
			break;
	}
out:
	if (fd >= 0)
		close(fd);
	if (tfd >= 0)
		close(tfd);
	return NULL;
}

TEST_F_TIMEOUT(ls, bakery_fairness, 900)
{
	const struct ls_env *e = &self->c.env;
	__u32 total = e->nr_nodes * e->threads * e->fair_iters, i, g, h;
	__u32 cluster_threads = e->nr_nodes * e->threads, max = 0, worst = 0;
	struct fair_worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	pthread_barrier_t start;
	__u64 overtakes = 0, v;
	static __u64 order[FAIR_MAX];
	int fd;

	ASSERT_GE(FAIR_MAX, total)
		TH_LOG("at most %u acquisitions: lower RDLOCK_FAIR_ITERS",
		       FAIR_MAX);
	setup_ls(_metadata, &self->c, "ls_fair", RDLOCK_PROTO_BAKERY, 64, 0,
		 R_FAIR + F_BARRIER);
	/*
	 * Resolve the name on every node first: finding its entry (two reads
	 * of its window) is no place in the queue, and a node still doing
	 * it while the others take tickets would count as overtaken.
	 */
	fd = rdl_open_joined("ls_fair");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rdl_ls_lock(fd, "fair", RDLOCK_LOCK_EX, 0, 0, &h));
	ASSERT_EQ(0, rdl_ls_unlock(fd, h));
	close(fd);
	BARRIER(&self->c, R_FAIR + F_BARRIER + 3);
	memset(w, 0, sizeof(w));
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, e->threads));
	for (i = 0; i < e->threads; i++) {
		w[i].env = e;
		w[i].start = &start;
		w[i].index = i;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, fair_main, &w[i]));
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, w[i].err[0])
			TH_LOG("thread %u: %s", i, w[i].err);
	}
	pthread_barrier_destroy(&start);
	BARRIER(&self->c, R_FAIR + F_BARRIER + 1);
	if (e->self == 0) {
		ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
				     e->base + R_FAIR + F_GRANT, 0, 0, &v));
		EXPECT_EQ(total, v);
		for (g = 0; g < total; g++) {
			ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
					     e->base + R_FAIR_ORDER + g, 0, 0,
					     &order[g]));
			ASSERT_NE(0, order[g]);
		}
		/* Later arrivals granted before each acquisition. */
		for (g = 0; g < total; g++) {
			__u32 n = 0;

			for (h = 0; h < g; h++)
				n += order[h] > order[g];
			overtakes += n;
			if (n > max) {
				max = n;
				worst = g;
			}
		}
		printf("# bakery fairness: %u acquisitions by %u threads; ",
		       total, cluster_threads);
		printf("overtaken by later arrivals: max %u (grant %u), mean %.2f\n",
		       max, worst, (double)overtakes / total);
		EXPECT_GT(cluster_threads, max)
			TH_LOG("grant %u came after %u later arrivals", worst,
			       max);
	}
	teardown_ls(_metadata, &self->c, "ls_fair", R_FAIR + F_BARRIER + 2);
}

struct reader {
	const struct ls_env *env;
	__u64 iterations, violations;
	char err[160];
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	const struct ls_env *e = r->env;
	int fd = rdl_open_joined("ls_stream"), tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	double deadline = rdl_now() + STREAM_DEADLINE_S;
	__u32 S = e->base + R_STREAM, h;
	__u64 v;
	int err;

	if (fd < 0 || tfd < 0) {
		snprintf(r->err, sizeof(r->err), "open/JOIN: %s",
			 strerror(fd < 0 ? -fd : errno));
		goto out;
	}
	err = rdl_xop(tfd, RDLOCK_TEST_OP_FAA, 0, S + S_READERS, 1, 0, NULL);
	while (!err) {
		err = rdl_xop(tfd, RDLOCK_TEST_OP_READ, 0, S + S_STOP, 0, 0, &v);
		if (err || v)
			break;
		if (rdl_now() > deadline) {
			err = rdl_xop(tfd, RDLOCK_TEST_OP_WRITE, 0,
				      S + S_GAVE_UP, 1, 0, NULL);
			break;
		}
		err = rdl_ls_lock(fd, "stream", RDLOCK_LOCK_SH, 0, 0, &h);
		if (err)
			break;
		r->iterations++;
		err = rdl_xop(tfd, RDLOCK_TEST_OP_READ, 0, S + S_WRITER_IN, 0,
			      0, &v);
		if (!err && v)
			r->violations++;
		usleep(STREAM_HOLD_US);
		if (!err)
			err = rdl_ls_unlock(fd, h);
		else
			rdl_ls_unlock(fd, h);
	}
	if (err)
		snprintf(r->err, sizeof(r->err), "reader: %s", strerror(err));
	rdl_xop(tfd, RDLOCK_TEST_OP_FAA, 0, S + S_READERS, (__u64)-1, 0, NULL);
out:
	if (fd >= 0)
		close(fd);
	if (tfd >= 0)
		close(tfd);
	return NULL;
}

/* The last node's writer, among a stream of readers on the others. */
static void stream_writer(struct __test_metadata *_metadata,
			  struct ls_ctx *c)
{
	const struct ls_env *e = &c->env;
	__u32 S = e->base + R_STREAM, readers = (e->nr_nodes - 1) * e->threads;
	__u64 v = 0, gave_up = 0, running = 0;
	double end = rdl_now() + 120, t;
	int fd = rdl_open_joined("ls_stream"), err;
	__u32 h;

	ASSERT_LE(0, fd);
	/* Every reader in its loop, and a while of overlapping holders. */
	while (rdl_now() < end) {
		ASSERT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_READ, 0,
				     S + S_READERS, 0, 0, &v));
		if (v >= readers)
			break;
		usleep(10000);
	}
	EXPECT_EQ(readers, v)
		TH_LOG("only %llu of %u readers started",
		       (unsigned long long)v, readers);
	usleep(500000);
	t = rdl_now();
	err = rdl_ls_lock(fd, "stream", RDLOCK_LOCK_EX, 0, STREAM_WRITER_MS, &h);
	t = rdl_now() - t;
	EXPECT_EQ(0, err)
		TH_LOG("writer: LOCK EX among readers: %s after %.1f s",
		       strerror(err), t);
	if (!err) {
		EXPECT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_WRITE, 0,
				     S + S_WRITER_IN, 1, 0, NULL));
		EXPECT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_READ, 0,
				     S + S_GAVE_UP, 0, 0, &gave_up));
		EXPECT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_READ, 0,
				     S + S_READERS, 0, 0, &running));
		EXPECT_EQ(0, gave_up)
			TH_LOG("readers gave up before the writer got in");
		EXPECT_EQ(readers, running)
			TH_LOG("only %llu of %u readers still running when the writer got in",
			       (unsigned long long)running, readers);
		usleep(STREAM_HOLD_US);
		EXPECT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_WRITE, 0,
				     S + S_WRITER_IN, 0, 0, NULL));
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
		printf("# writer granted after %.2f s among %u readers\n", t,
		       readers);
	}
	EXPECT_EQ(0, rdl_xop(c->fd, RDLOCK_TEST_OP_WRITE, 0, S + S_STOP, 1,
			     0, NULL));
	close(fd);
}

TEST_F_TIMEOUT(ls, reader_stream, 900)
{
	const struct ls_env *e = &self->c.env;
	struct reader r[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 iters = 0, violations = 0;
	__u32 i;

	setup_ls(_metadata, &self->c, "ls_stream", RDLOCK_PROTO_BAKERY, 64, 0,
		 R_STREAM + S_BARRIER);
	if (e->self == e->nr_nodes - 1) {
		stream_writer(_metadata, &self->c);
	} else {
		memset(r, 0, sizeof(r));
		for (i = 0; i < e->threads; i++) {
			r[i].env = e;
			ASSERT_EQ(0, pthread_create(&tid[i], NULL, reader_main,
						    &r[i]));
		}
		for (i = 0; i < e->threads; i++) {
			pthread_join(tid[i], NULL);
			EXPECT_EQ(0, r[i].err[0])
				TH_LOG("reader %u: %s", i, r[i].err);
			iters += r[i].iterations;
			violations += r[i].violations;
		}
		EXPECT_EQ(0, violations)
			TH_LOG("readers saw the writer inside");
		printf("# node %u: %llu shared acquisitions\n", e->self,
		       (unsigned long long)iters);
	}
	teardown_ls(_metadata, &self->c, "ls_stream", R_STREAM + S_BARRIER + 1);
}

TEST_F_TIMEOUT(ls, many_names, 900)
{
	const struct ls_env *e = &self->c.env;
	__u32 homes[RDLOCK_MAX_NODES] = { 0 }, i, h, failed = 0;
	int fd;

	setup_ls(_metadata, &self->c, "ls_names", RDLOCK_PROTO_BAKERY, 512, 0,
		 R_NAMES + N_BARRIER);
	fd = rdl_open_joined("ls_names");
	ASSERT_LE(0, fd);
	for (i = 0; i < e->names; i++) {
		__u32 mode = i % 2 ? RDLOCK_LOCK_EX : RDLOCK_LOCK_SH;
		struct rdlock_query q;
		char name[32];
		int err;

		snprintf(name, sizeof(name), "node%u-name%u", e->self, i);
		err = rdl_ls_lock(fd, name, mode, 0, 60000, &h);
		if (!err) {
			err = rdl_ls_query(fd, h, &q);
			if (!err && q.home_node < RDLOCK_MAX_NODES)
				homes[q.home_node]++;
			if (!err && (q.mode != mode || q.home_node >= e->nr_nodes))
				err = EPROTO;
			if (!err)
				err = rdl_ls_unlock(fd, h);
			else
				rdl_ls_unlock(fd, h);
		}
		if (err && failed++ < 5)
			TH_LOG("%s: %s", name, strerror(err));
	}
	/* What finding a new name costs: READs of its window per resolve. */
	printf("# node %u: %lld probe READs for %lld resolves\n", e->self,
	       rdl_debugfs_counter("lockspaces/ls_names/stats", "probes"),
	       rdl_debugfs_counter("lockspaces/ls_names/stats", "resolves"));
	close(fd);
	EXPECT_EQ(0, failed);
	for (i = 0; i < e->nr_nodes; i++) {
		EXPECT_LT(0, homes[i])
			TH_LOG("none of %u names lives on node %u", e->names, i);
		EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_FAA, 0,
				     e->base + R_NAMES + N_HOMES + i, homes[i],
				     0, NULL));
	}
	BARRIER(&self->c, R_NAMES + N_BARRIER + 1);
	printf("# names homed per node, whole cluster:");
	for (i = 0; i < e->nr_nodes; i++) {
		__u64 v = 0;

		EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
				     e->base + R_NAMES + N_HOMES + i, 0, 0, &v));
		printf(" %llu", (unsigned long long)v);
	}
	printf("\n");
	teardown_ls(_metadata, &self->c, "ls_names", R_NAMES + N_BARRIER + 2);
}

/* ls_reclaim's debugfs counter @name on this node. */
static long long reclaim_stat(const char *name)
{
	return rdl_debugfs_counter("lockspaces/ls_reclaim/stats", name);
}

static long long reclaim_entries(const char *name)
{
	return rdl_debugfs_counter("lockspaces/ls_reclaim/entries", name);
}

/* Wait for the references of forgotten names to be dropped. */
static int reclaim_drops_done(void)
{
	double end = rdl_now() + 120;

	while (reclaim_stat("name_drops_pending") != 0) {
		if (rdl_now() > end)
			return -1;
		usleep(10000);
	}
	return 0;
}

/* Lock and unlock @count names "@prefix%u" on @fd; returns failures. */
static __u32 lock_names(int fd, const char *prefix, __u32 count, int *err)
{
	__u32 i, h, failed = 0;
	char name[48];
	int e;

	*err = 0;
	for (i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%s%u", prefix, i);
		e = rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, 0, 60000, &h);
		if (!e)
			e = rdl_ls_unlock(fd, h);
		if (e && !failed++)
			*err = e;
	}
	return failed;
}

/* Lock @name, note where its lock word is ((home << 32 | slot) + 1). */
static int lock_where(int fd, const char *name, __u32 *h, __u64 *where)
{
	struct rdlock_query q;
	int err = rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, 0, 60000, h);

	if (!err)
		err = rdl_ls_query(fd, *h, &q);
	if (!err)
		*where = ((__u64)q.home_node << 32 | q.slot) + 1;
	return err;
}

/* ls_fresh's debugfs counter @name on this node. */
static long long fresh_stat(const char *name)
{
	return rdl_debugfs_counter("lockspaces/ls_fresh/stats", name);
}

/*
 * A name resolved first in a new lockspace claims its window's first
 * entry in one CAS and skips the check (a fresh claim); a node resolving
 * it later finds it there with that CAS, the name's first entry with
 * references, and joins it without reading further, then checks, with
 * the check's READ in the join's operation: one probe each, one fresh
 * claim.
 */
TEST_F_TIMEOUT(ls, fresh_names, 300)
{
	const struct ls_env *e = &self->c.env;
	__u32 h;
	int fd;

	setup_ls(_metadata, &self->c, "ls_fresh", RDLOCK_PROTO_CASLOCK, 64, 0,
		 R_FRESH);
	fd = rdl_open_joined("ls_fresh");
	ASSERT_LE(0, fd);
	if (e->self == 0) {
		ASSERT_EQ(0, rdl_ls_lock(fd, "fresh", RDLOCK_LOCK_EX, 0, 60000,
					 &h));
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	}
	BARRIER(&self->c, R_FRESH + 1);
	if (e->self == 1) {
		ASSERT_EQ(0, rdl_ls_lock(fd, "fresh", RDLOCK_LOCK_SH, 0, 60000,
					 &h));
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	}
	BARRIER(&self->c, R_FRESH + 2);
	EXPECT_EQ(e->self < 2, fresh_stat("resolves"));
	EXPECT_EQ(e->self == 0, fresh_stat("resolves_fresh"));
	/* Node 1's check read the entry after node 0's with its join. */
	EXPECT_EQ(e->self == 1, fresh_stat("checks_spared"));
	EXPECT_EQ(e->self < 2, fresh_stat("probes"));
	EXPECT_EQ(0, fresh_stat("resolve_retries"));
	EXPECT_EQ(e->self < 2, fresh_stat("entry_references"));
	close(fd);
	teardown_ls(_metadata, &self->c, "ls_fresh", R_FRESH + 3);
}

TEST_F_TIMEOUT(ls, name_reclaim, 900)
{
	const struct ls_env *e = &self->c.env;
	const __u32 fill = 4 * RC_ENTRIES * e->nr_nodes;
	__u64 v, keep = 0, shared = 0, where = 0;
	__u32 i, h, keep_h = 0, held[2 * RC_ENTRIES * RDLOCK_MAX_NODES];
	__u32 nr_held = 0, failed;
	long long unused, drops, reclaimed;
	int fd, err;

	if (!e->reclaim)
		SKIP(return, "RDLOCK_LS_RECLAIM=0: run by another step of the suite");
	setup_ls(_metadata, &self->c, "ls_reclaim", RDLOCK_PROTO_BAKERY,
		 2 * RC_ENTRIES, 0, R_RECLAIM + RC_BARRIER);
	ASSERT_EQ(RC_ENTRIES, reclaim_entries("entries"));
	ASSERT_EQ(RC_ENTRIES / 4, reclaim_stat("names_unused_max"));

	/* 1: node 0 fills the lockspace four times over with throwaways. */
	if (!e->self) {
		fd = rdl_open_joined("ls_reclaim");
		ASSERT_LE(0, fd);
		failed = lock_names(fd, "junk", fill, &err);
		close(fd);
		EXPECT_EQ(0, failed)
			TH_LOG("%u of %u throwaway names failed, first: %s",
			       failed, fill, strerror(err));
		ASSERT_EQ(0, reclaim_drops_done());
		unused = reclaim_stat("names_unused");
		EXPECT_GE(RC_ENTRIES / 4, unused);
		EXPECT_EQ(unused, reclaim_stat("entry_references"));
		EXPECT_EQ(fill - unused, reclaim_stat("entry_ref_drops"));
		EXPECT_EQ(fill - unused, reclaim_stat("entries_reclaimed"));
		EXPECT_EQ(0, reclaim_stat("entries_busy_at_free"));
		EXPECT_EQ(0, reclaim_stat("resolve_retries"));
		EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_WRITE, 0,
				     e->base + R_RECLAIM + RC_N0_UNUSED,
				     unused, 0, NULL));
		printf("# %u throwaway names, %lld still cached, %lld entries reclaimed\n",
		       fill, unused, reclaim_stat("entries_reclaimed"));
	}
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 1);
	/* Only node 0's cached names hold entries, every node counting. */
	EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_FAA, 0,
			     e->base + R_RECLAIM + RC_USED,
			     reclaim_entries("used"), 0, NULL));
	EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_FAA, 0,
			     e->base + R_RECLAIM + RC_REFS,
			     reclaim_entries("references"), 0, NULL));
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 2);
	ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + R_RECLAIM + RC_N0_UNUSED, 0, 0, &v));
	unused = v;
	ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + R_RECLAIM + RC_USED, 0, 0, &v));
	EXPECT_EQ(unused, v);
	ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + R_RECLAIM + RC_REFS, 0, 0, &v));
	EXPECT_EQ(unused, v);

	/*
	 * 2: the others take fresh names; node 1 holds "keep" and has
	 * "shared" resolved, unused. Node 0 uses both, then forgets them
	 * under a second flood: neither entry may be freed.
	 */
	fd = rdl_open_joined("ls_reclaim");
	ASSERT_LE(0, fd);
	if (e->self) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "node%u-fresh", e->self);
		failed = lock_names(fd, prefix, RC_ENTRIES / 2, &err);
		EXPECT_EQ(0, failed)
			TH_LOG("%u fresh names failed, first: %s", failed,
			       strerror(err));
	}
	if (e->self == 1) {
		ASSERT_EQ(0, lock_where(fd, "shared", &h, &where));
		ASSERT_EQ(0, rdl_ls_unlock(fd, h));
		EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_WRITE, 0,
				     e->base + R_RECLAIM + RC_SHARED, where, 0,
				     NULL));
		ASSERT_EQ(0, lock_where(fd, "keep", &keep_h, &where));
		EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_WRITE, 0,
				     e->base + R_RECLAIM + RC_KEEP, where, 0,
				     NULL));
	}
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 3);
	ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + R_RECLAIM + RC_KEEP, 0, 0, &keep));
	ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + R_RECLAIM + RC_SHARED, 0, 0, &shared));
	ASSERT_NE(0, keep);
	ASSERT_NE(0, shared);
	if (!e->self) {
		drops = reclaim_stat("entry_ref_drops");
		reclaimed = reclaim_stat("entries_reclaimed");
		ASSERT_EQ(0, lock_where(fd, "shared", &h, &where));
		EXPECT_EQ(shared, where);
		ASSERT_EQ(0, rdl_ls_unlock(fd, h));
		EXPECT_EQ(EAGAIN, rdl_ls_lock(fd, "keep", RDLOCK_LOCK_EX,
					      RDLOCK_LKF_TRY, 0, &h));
		failed = lock_names(fd, "churn", fill, &err);
		EXPECT_EQ(0, failed)
			TH_LOG("%u churn names failed, first: %s", failed,
			       strerror(err));
		ASSERT_EQ(0, reclaim_drops_done());
		/* Every name forgotten was freed but the two others use. */
		unused = reclaim_stat("names_unused");
		drops = reclaim_stat("entry_ref_drops") - drops;
		reclaimed = reclaim_stat("entries_reclaimed") - reclaimed;
		EXPECT_EQ(0, reclaim_stat("entry_ref_errors"));
		EXPECT_EQ(drops - 2, reclaimed)
			TH_LOG("%lld references dropped, %lld entries freed",
			       drops, reclaimed);
		ASSERT_EQ(0, lock_where(fd, "shared", &h, &where));
		EXPECT_EQ(shared, where);
		ASSERT_EQ(0, rdl_ls_unlock(fd, h));
		EXPECT_EQ(EAGAIN, rdl_ls_lock(fd, "keep", RDLOCK_LOCK_EX,
					      RDLOCK_LKF_TRY, 0, &h));
	}
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 4);
	if (e->self == 1)
		EXPECT_EQ(0, rdl_ls_unlock(fd, keep_h));
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 5);
	if (!e->self) {
		/* The same lock word: the entry was never handed on. */
		ASSERT_EQ(0, lock_where(fd, "keep", &h, &where));
		EXPECT_EQ(keep, where);
		ASSERT_EQ(0, rdl_ls_unlock(fd, h));
	}
	EXPECT_EQ(0, reclaim_stat("entry_ref_errors"));
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 6);

	/*
	 * 3: node 1 holds fresh names until one finds its home's entries
	 * all in use: ENOSPC, and that home's entries are all taken.
	 */
	if (e->self == 1) {
		err = 0;
		for (i = 0; i < ARRAY_SIZE(held) && !err; i++) {
			char name[32];

			snprintf(name, sizeof(name), "full%u", i);
			err = rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, 0, 60000,
					  &held[nr_held]);
			if (!err)
				nr_held++;
		}
		EXPECT_EQ(ENOSPC, err)
			TH_LOG("%u names held, then %s", nr_held,
			       strerror(err));
		EXPECT_GE(RC_ENTRIES * e->nr_nodes, nr_held);
	}
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 7);
	if (reclaim_entries("used") == RC_ENTRIES)
		EXPECT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_FAA, 0,
				     e->base + R_RECLAIM + RC_FULL, 1, 0, NULL));
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 8);
	ASSERT_EQ(0, rdl_xop(self->c.fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + R_RECLAIM + RC_FULL, 0, 0, &v));
	EXPECT_LE(1, v)
		TH_LOG("ENOSPC, but no home has all its entries taken");
	if (e->self == 1) {
		for (i = 0; i < nr_held; i++)
			EXPECT_EQ(0, rdl_ls_unlock(fd, held[i]));
		ASSERT_EQ(0, reclaim_drops_done());
		printf("# %u names held at ENOSPC\n", nr_held);
	}
	BARRIER(&self->c, R_RECLAIM + RC_BARRIER + 9);
	/* Released and forgotten: anyone can name new locks again. */
	if (e->self == e->nr_nodes - 1) {
		failed = lock_names(fd, "after", RC_ENTRIES / 2, &err);
		EXPECT_EQ(0, failed)
			TH_LOG("%u names failed after ENOSPC, first: %s",
			       failed, strerror(err));
	}
	close(fd);
	EXPECT_EQ(0, reclaim_stat("entry_ref_errors"));
	teardown_ls(_metadata, &self->c, "ls_reclaim",
		    R_RECLAIM + RC_BARRIER + 10);
}

/* ------------------------------------------------------------------ */
/* DLM lockspaces: blocking events and conversions across nodes        */

#define DLM_LS		"ls_dlm"
#define DLM_EVENT_MS	30000	/* an event must come within this */
#define DLM_GRANT_MS	60000

/*
 * Wait up to @ms for one event on @fd; 0 and the event, or -1. The caller
 * checks that no second one is queued.
 */
static int dlm_event(int fd, int ms, struct rdlock_event *ev, double *took)
{
	double t = rdl_now();
	int n = rdl_readable(fd, ms);

	*took = rdl_now() - t;
	if (n != 1)
		return -1;
	return read(fd, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -1;
}

/* Nothing (more) queued: a non-blocking read fails with EAGAIN. */
static bool dlm_no_event(int fd)
{
	struct rdlock_event ev;

	return rdl_read_events(fd, &ev, sizeof(ev)) == -EAGAIN;
}

TEST_F_TIMEOUT(ls, dlm_blocking, 900)
{
	const struct ls_env *e = &self->c.env;
	__u32 conv = e->nr_nodes > 2 ? 2 : 0;
	struct rdlock_ls_create cr;
	struct rdlock_event ev;
	__u32 h = 0, hc = 0;
	double took, t;
	int fd, got;

	rdl_ls_create_init(&cr, DLM_LS, 0, 0, RDLOCK_LS_DLM, 0666);
	got = rdl_ioctl(self->c.dev, RDLOCK_IOC_LS_CREATE, &cr);
	ASSERT_EQ(0, got)
		TH_LOG("LS_CREATE %s (DLM): %s", DLM_LS, strerror(got));
	fd = rdl_open_joined(DLM_LS);
	ASSERT_LE(0, fd);
	BARRIER(&self->c, R_DLM);

	/* 1. Node 0 holds PR. */
	if (e->self == 0) {
		ASSERT_EQ(0, rdl_ls_lock(fd, "res", RDLOCK_LOCK_PR, 0, 0, &h));
		EXPECT_EQ(RDLOCK_LOCK_PR, rdl_ls_mode(fd, h));
	}
	BARRIER(&self->c, R_DLM + 1);
	/* 2. Node 1: NOQUEUE fails at once and notifies nobody. */
	if (e->self == 1) {
		got = rdl_ls_lock(fd, "res", RDLOCK_LOCK_EX, RDLOCK_LKF_TRY, 0,
				  &h);
		EXPECT_EQ(EAGAIN, got)
			TH_LOG("TRY EX beside a PR holder: %s", strerror(got));
	}
	BARRIER(&self->c, R_DLM + 2);
	if (e->self == 0)
		EXPECT_TRUE(dlm_no_event(fd))
			TH_LOG("an event for a NOQUEUE request");
	BARRIER(&self->c, R_DLM + 3);
	/* 3. Node 1 waits for EX: node 0 gets one event and gives PR back. */
	if (e->self == 1) {
		t = rdl_now();
		got = rdl_ls_lock(fd, "res", RDLOCK_LOCK_EX, 0, DLM_GRANT_MS,
				  &h);
		EXPECT_EQ(0, got)
			TH_LOG("EX after the PR holder's event: %s",
			       strerror(got));
		printf("# node 1: EX granted %.3f s after asking\n",
		       rdl_now() - t);
		EXPECT_EQ(RDLOCK_LOCK_EX, rdl_ls_mode(fd, h));
	} else if (e->self == 0) {
		ASSERT_EQ(0, dlm_event(fd, DLM_EVENT_MS, &ev, &took))
			TH_LOG("no event within %d ms", DLM_EVENT_MS);
		printf("# node 0: blocking event %.3f s after its poll began\n",
		       took);
		EXPECT_EQ(RDLOCK_EVENT_BLOCKING, ev.type);
		EXPECT_EQ(h, ev.handle);
		EXPECT_EQ(RDLOCK_LOCK_EX, ev.mode);
		EXPECT_EQ(0, ev.pad);
		EXPECT_TRUE(dlm_no_event(fd))
			TH_LOG("more than one event");
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	}
	BARRIER(&self->c, R_DLM + 4);

	/* 4. Node 1 holds EX; the converter takes NL beside it. */
	if (e->self == conv) {
		EXPECT_EQ(0, rdl_ls_lock(fd, "res", RDLOCK_LOCK_NL, 0, 0, &hc));
		EXPECT_EQ(RDLOCK_LOCK_NL, rdl_ls_mode(fd, hc));
		EXPECT_EQ(EAGAIN, rdl_ls_convert(fd, hc, RDLOCK_LOCK_PR,
						 RDLOCK_LKF_TRY, 0));
		EXPECT_EQ(RDLOCK_LOCK_NL, rdl_ls_mode(fd, hc));
	}
	BARRIER(&self->c, R_DLM + 5);
	if (e->self == 1) {
		EXPECT_EQ(0, rdl_ls_convert(fd, h, RDLOCK_LOCK_PR, 0, 0));
		EXPECT_EQ(RDLOCK_LOCK_PR, rdl_ls_mode(fd, h));
	}
	BARRIER(&self->c, R_DLM + 6);
	if (e->self == conv) {
		EXPECT_EQ(0, rdl_ls_convert(fd, hc, RDLOCK_LOCK_PR,
					    RDLOCK_LKF_TRY, 0));
		EXPECT_EQ(EAGAIN, rdl_ls_convert(fd, hc, RDLOCK_LOCK_EX,
						 RDLOCK_LKF_TRY, 0));
		EXPECT_EQ(RDLOCK_LOCK_PR, rdl_ls_mode(fd, hc));
	}
	BARRIER(&self->c, R_DLM + 7);
	/* 5. PR->EX waits; the other PR holder's event lets it through. */
	if (e->self == conv) {
		got = rdl_ls_convert(fd, hc, RDLOCK_LOCK_EX, 0, DLM_GRANT_MS);
		EXPECT_EQ(0, got)
			TH_LOG("PR->EX after the other's event: %s",
			       strerror(got));
		EXPECT_EQ(RDLOCK_LOCK_EX, rdl_ls_mode(fd, hc));
	} else if (e->self == 1) {
		ASSERT_EQ(0, dlm_event(fd, DLM_EVENT_MS, &ev, &took))
			TH_LOG("no event within %d ms", DLM_EVENT_MS);
		EXPECT_EQ(h, ev.handle);
		EXPECT_EQ(RDLOCK_LOCK_EX, ev.mode);
		EXPECT_EQ(0, rdl_ls_convert(fd, h, RDLOCK_LOCK_NL, 0, 0));
		EXPECT_EQ(RDLOCK_LOCK_NL, rdl_ls_mode(fd, h));
	}
	BARRIER(&self->c, R_DLM + 8);
	/* 6. EX->NL, then NL->EX on the other node. */
	if (e->self == conv) {
		EXPECT_EQ(0, rdl_ls_convert(fd, hc, RDLOCK_LOCK_NL, 0, 0));
		EXPECT_EQ(RDLOCK_LOCK_NL, rdl_ls_mode(fd, hc));
	}
	BARRIER(&self->c, R_DLM + 9);
	if (e->self == 1) {
		EXPECT_EQ(0, rdl_ls_convert(fd, h, RDLOCK_LOCK_EX,
					    RDLOCK_LKF_TRY, 0));
		EXPECT_EQ(RDLOCK_LOCK_EX, rdl_ls_mode(fd, h));
		EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	}
	if (e->self == conv)
		EXPECT_EQ(0, rdl_ls_unlock(fd, hc));
	BARRIER(&self->c, R_DLM + 10);
	close(fd);
	teardown_ls(_metadata, &self->c, DLM_LS, R_DLM + 11);
}

/* "-t TEST": only that test (rdl_select_tests()). */
#define main ls_harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	if (rdl_select_tests(argc, argv))
		return KSFT_FAIL;
	return ls_harness_main(argc, argv);
}
