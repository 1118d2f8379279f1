// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-node mutual exclusion of the lock protocols, run at once on every
 * node of a guest cluster through /dev/rdlock_test.
 *
 * T threads per node take L hot locks (homes spread over the nodes) M times
 * each, in random modes (7 in 10 exclusive). An exclusive holder does a
 * non-atomic read-modify-write of the lock's counter with RDMA READ and
 * WRITE (on another node than the lock word) and marks a writer flag while
 * inside; a reader checks the flag is clear on entry and exit. Afterwards
 * every node adds its exclusive grants per lock to a total on node 0, and
 * every counter must equal its total exactly: a lost update means two
 * writers were inside at once. Any flag seen set by a reader, or changed
 * under a writer, is a violation too.
 *
 * The overflow test takes one bakery lock RDLOCK_OVERFLOW_TOTAL times
 * (default 3000) across the cluster, mostly shared; every 50th acquisition
 * is exclusive and increments a counter non-atomically. Node 0 first sets
 * the free word's ticket counters OVF_HEADROOM acquisitions of each class
 * short of COUNT_MAX (32768), so the cluster crosses COUNT_MAX early in
 * the run, withdraws over-limit tickets, resets the word and goes on from
 * zero, without the 32768 acquisitions it would take from a zero word.
 * The counter must equal the exclusive grants exactly and the nodes
 * together must have reset the word exactly once.
 *
 * The update-lock test takes one hot lock on an update word in random
 * shared, update and exclusive modes; update holders upgrade half of the
 * time. Exclusive and upgraded holders do the non-atomic increment, readers
 * and update holders check the writer flag, update holders mark an update
 * flag that no other update or exclusive holder may see set. The multi-slot
 * test mixes k = 4 and k = 1 tickets on both word layouts, crossing the
 * update word's COUNT_MAX. Single-node tests check multi-slot leases, the
 * update interfaces' errors and the per-file protocol counters.
 *
 * Env: RDLOCK_NODE_ID, RDLOCK_NR_NODES, RDLOCK_LOCK_ITERS (M, default 100),
 * RDLOCK_THREADS (T, default 2), RDLOCK_BARRIER_TIMEOUT (s, default 300),
 * RDLOCK_UPDATE_ITERS (default 60), RDLOCK_MULTISLOT_ITERS (default 150),
 * RDLOCK_OVERFLOW_TOTAL (default 3000, at least 2 x OVF_HEADROOM x 50),
 * RDLOCK_CQL_ITERS (CQL's M, default 50), RDLOCK_ORDER_ITERS (default 20),
 * RDLOCK_LOCK_SCOPE (all, the default, or backend: see PROTOCOL_LOGIC_SKIP).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdltest.h"
#include "../../kmod/lockword/bakery.h"
#include "../../kmod/lockword/cql.h"

#include <kselftest_harness.h>

#define NR_LOCKS	4
#define MAX_THREADS	16
/* Slots relative to first_free_slot; xport_test uses those below 64. */
#define REGION(proto)	(64 + 128 * (proto))
#define LOCK_SLOT	0	/* + lock: the lock word, on node lock % N */
#define COUNTER_SLOT	16	/* + lock: on node (lock + 1) % N */
#define FLAG_SLOT	32	/* + lock: on node (lock + 1) % N */
#define TOTAL_SLOT	48	/* + lock: on node 0 */
#define BARRIER_SLOT	64	/* + generation - 1: on node 0 */
/* The overflow test's slots, after both protocols' regions. */
#define OVF_LOCK	REGION(2)		/* on the last node */
#define OVF_COUNTER	(REGION(2) + 1)		/* on node 0 */
#define OVF_TOTAL	(REGION(2) + 2)		/* on node 0 */
#define OVF_RESETS	(REGION(2) + 3)		/* on node 0 */
#define OVF_BARRIER	(REGION(2) + 4)		/* to + 6, on node 0 */
#define OVF_EXCLUSIVE_EVERY	50
/* Exclusive acquisitions before the preset word crosses COUNT_MAX. */
#define OVF_HEADROOM		10
/* Update-lock test, one region per protocol; data on node 1 % N. */
#define UPD_REGION(proto)	REGION(3 + (proto))
#define UPD_LOCK		0	/* on node 0 */
#define UPD_COUNTER		1
#define UPD_WFLAG		2	/* a writer is inside: its mark */
#define UPD_UFLAG		3	/* an update holder is inside: its mark */
#define UPD_TOTAL		4	/* on node 0, like the rest */
#define UPD_UPGRADES		5
#define UPD_BARRIER		6	/* and 7 */
/* Multi-slot test, 16 slots per layout, all on node 0 but the lock. */
#define MS_REGION		REGION(5)
#define MS_LOCK			0	/* on the last node */
#define MS_COUNTER		1
#define MS_TOTAL		2
#define MS_SHARED_SLOTS		3
#define MS_RESETS		4
#define MS_BARRIER		5	/* and 6 */
#define MS_EXCLUSIVE_EVERY	3
/* Single-node tests: 16 slots per node, homed on that node. */
#define NODE_REGION		REGION(6)
/* Lease-stall test: all on node 0 but the data (node 1 % N). */
#define LST_REGION		REGION(7)
#define LST_LOCK		0
#define LST_COUNTER		1
#define LST_FLAG		2
#define LST_TOTAL		3
#define LST_HELD		4	/* round + 1: the stalled holder holds */
#define LST_STOP		5	/* round + 1: hammering ends */
#define LST_RESETS		6
#define LST_BARRIER		7
#define LST_SLOTS		8
/*
 * CQL: the exclusion test's lock words (a header and 2^CQL_QUEUE_BITS
 * queue entries each) after the counters of REGION(2), whose first slots
 * are the overflow test's; the order and reader-stream tests after the
 * lease-stall test.
 */
#define CQL_QUEUE_BITS		3
#define CQL_SPAN(bits)		(1 + (1 << (bits)))
#define CQL_LOCK_OFF		80	/* + lock * CQL_SPAN(): REGION(2) */
#define ORD_REGION		(LST_REGION + LST_SLOTS)
/* Order: capacity 16, so that every node's threads fit in its gate. */
#define ORD_QUEUE_BITS		4
#define ORD_LOCK		0	/* on node 0 */
#define ORD_LAST		CQL_SPAN(ORD_QUEUE_BITS)	/* on node 0 */
#define ORD_GRANTS		(ORD_LAST + 1)
#define ORD_INVERSIONS		(ORD_LAST + 2)
#define ORD_BARRIER		(ORD_LAST + 3)	/* and + 4 */
#define ORD_OVERTAKEN		(ORD_LAST + 5)	/* + node: its largest */
/* Hierarchical order: last grant's node and run; threads done. */
#define ORD_RUN			(ORD_OVERTAKEN + 8)
#define ORD_DONE		(ORD_RUN + 1)
#define ORD_SLOTS		(ORD_RUN + 2)
#define STR_REGION		(ORD_REGION + ORD_SLOTS)
#define STR_LOCK		0	/* on node 0 */
#define STR_READERS		CQL_SPAN(CQL_QUEUE_BITS)	/* running */
#define STR_STOP		(STR_READERS + 1)
#define STR_GAVE_UP		(STR_READERS + 2)
#define STR_WRITER_IN		(STR_READERS + 3)
#define STR_BARRIER		(STR_READERS + 4)	/* and + 5 */
#define STR_SLOTS		(STR_READERS + 6)
#define LOCK_TIMEOUT_MS		120000

struct lock_env {
	__u32 self, nr_nodes, iters, threads, barrier_timeout, base, backend;
	bool blips;	/* links fail under the workers: see data_op() */
	const char *inject;	/* debugfs knob set to 0 once the workers end */
	__u8 cql_version_bits;	/* 0: the default */
	bool hot;	/* 3 acquisitions in 4 on lock 0 */
	__u32 cql_flags;	/* RDLOCK_TEST_LOCK_CQL_*: hierarchical */
	bool backend_only;	/* RDLOCK_LOCK_SCOPE=backend: PROTOCOL_LOGIC_SKIP */
};

struct worker {
	const struct lock_env *env;
	__u32 proto, index;
	__u64 grants[NR_LOCKS];
	__u64 violations, remote_ops, acquires, data_retries;
	char err[160];
};

static __u32 lock_home(const struct lock_env *e, __u32 lock)
{
	return lock % e->nr_nodes;
}

static __u32 data_home(const struct lock_env *e, __u32 lock)
{
	return (lock + 1) % e->nr_nodes;
}

static __u32 slot(const struct lock_env *e, __u32 proto, __u32 what,
		  __u32 lock)
{
	return e->base + REGION(proto) + what + lock;
}

/* A lock word of the exclusion test: CQL's take several slots. */
static __u32 lock_slot(const struct lock_env *e, __u32 proto, __u32 lock)
{
	if (proto == RDLOCK_TEST_PROTO_CQL)
		return slot(e, proto, CQL_LOCK_OFF,
			    lock * CQL_SPAN(CQL_QUEUE_BITS));
	return slot(e, proto, LOCK_SLOT, lock);
}

/* Where a lock's critical section works: a counter and a writer flag. */
struct section {
	__u32 node, counter, flag;
};

static struct section lock_section(const struct lock_env *e, __u32 proto,
				   __u32 lock)
{
	struct section s = {
		.node = data_home(e, lock),
		.counter = slot(e, proto, COUNTER_SLOT, lock),
		.flag = slot(e, proto, FLAG_SLOT, lock),
	};

	return s;
}

/*
 * While links fail on purpose (@w->env->blips), a data operation is made
 * again when that cannot apply it twice: a READ after any link failure, a
 * WRITE refused before it was sent. A WRITE the link failed after sending
 * is sent again by the two-sided transport itself (exactly once), so any
 * error it returns there is a failure like every other; with verbs the
 * holder writes it again (the lock is still held: the same value).
 */
static bool data_op_again(const struct worker *w, __u32 op, int err)
{
	if (!w->env->blips)
		return false;
	if (op == RDLOCK_TEST_OP_READ ||
	    w->env->backend != RDLOCK_BACKEND_TWOSIDED)
		return rdl_read_again(err);
	return err == ENOTCONN;
}

/* One operation on a data slot; records the first error. */
static int data_op(int fd, struct worker *w, __u32 op, __u32 node,
		   __u32 where, __u64 arg, __u64 *val)
{
	int err;

	while ((err = rdl_xop(fd, op, node, where, arg, 0, val)) &&
	       data_op_again(w, op, err)) {
		w->data_retries++;
		usleep(1000);
	}

	if (err && !w->err[0])
		snprintf(w->err, sizeof(w->err), "op %u on node %u slot %u: %s",
			 op, node, where, strerror(err));
	return err;
}

/*
 * A reader checks the writer flag twice; a writer marks it, increments the
 * counter non-atomically and checks its mark is still there. Returns 0, or
 * -1 on an operation error (recorded in @w).
 */
static int critical_section(int fd, struct worker *w, const struct section *s,
			    bool exclusive)
{
	__u64 mark = ((__u64)w->env->self << 32) | (w->index + 1), flag, c;
	__u32 n = s->node;

	if (data_op(fd, w, RDLOCK_TEST_OP_READ, n, s->flag, 0, &flag))
		return -1;
	if (flag)
		w->violations++;	/* a writer is inside with us */
	if (!exclusive) {
		if (data_op(fd, w, RDLOCK_TEST_OP_READ, n, s->counter, 0, &c) ||
		    data_op(fd, w, RDLOCK_TEST_OP_READ, n, s->flag, 0, &flag))
			return -1;
		if (flag)
			w->violations++;
		return 0;
	}
	if (data_op(fd, w, RDLOCK_TEST_OP_WRITE, n, s->flag, mark, NULL) ||
	    data_op(fd, w, RDLOCK_TEST_OP_READ, n, s->counter, 0, &c) ||
	    data_op(fd, w, RDLOCK_TEST_OP_WRITE, n, s->counter, c + 1, NULL) ||
	    data_op(fd, w, RDLOCK_TEST_OP_READ, n, s->flag, 0, &flag))
		return -1;
	if (flag != mark)
		w->violations++;	/* another writer was inside */
	return data_op(fd, w, RDLOCK_TEST_OP_WRITE, n, s->flag, 0, NULL);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct lock_env *e = w->env;
	unsigned int seed = e->self * 7919 + w->index * 104729 + w->proto;
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	__u32 it;

	if (fd < 0) {
		snprintf(w->err, sizeof(w->err), "open: %s", strerror(errno));
		return NULL;
	}
	for (it = 0; it < e->iters && !w->err[0]; it++) {
		__u32 lock = e->hot && rand_r(&seed) % 4 ? 0 :
			     rand_r(&seed) % NR_LOCKS;
		bool exclusive = rand_r(&seed) % 10 < 7;
		struct rdlock_test_lock l = {
			.proto = w->proto, .mode = exclusive,
			.node = lock_home(e, lock),
			.slot = lock_slot(e, w->proto, lock),
		};

		if (w->proto == RDLOCK_TEST_PROTO_CQL) {
			/* A lost grant fails the test rather than hang it. */
			l.queue_bits = CQL_QUEUE_BITS;
			l.version_bits = e->cql_version_bits;
			l.flags = e->cql_flags;
			l.timeout_ms = LOCK_TIMEOUT_MS;
		}

		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK, &l) < 0) {
			snprintf(w->err, sizeof(w->err), "LOCK %u: %s", lock,
				 strerror(errno));
			break;
		}
		struct section sec = lock_section(e, w->proto, lock);

		w->acquires++;
		w->remote_ops += l.remote_ops;
		if (!critical_section(fd, w, &sec, exclusive) && exclusive)
			w->grants[lock]++;
		if (ioctl(fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle) < 0 &&
		    !w->err[0])
			snprintf(w->err, sizeof(w->err), "UNLOCK: %s",
				 strerror(errno));
	}
	close(fd);
	return NULL;
}

FIXTURE(lock) {
	int fd;
	struct lock_env env;
	double start;
};

FIXTURE_SETUP(lock)
{
	struct lock_env *e = &self->env;
	struct rdlock_test_info info;
	const char *scope;

	self->start = rdl_now();
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NODE_ID", -1, &e->self));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NR_NODES", -1, &e->nr_nodes));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_LOCK_ITERS", 100, &e->iters));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_THREADS", 2, &e->threads));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 300,
				 &e->barrier_timeout));
	scope = getenv("RDLOCK_LOCK_SCOPE");
	e->backend_only = scope && !strcmp(scope, "backend");
	ASSERT_LT(e->self, e->nr_nodes);
	ASSERT_GE(MAX_THREADS, e->threads);
	self->fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_INFO, &info));
	ASSERT_EQ(1, info.ready);
	e->backend = info.backend;
	ASSERT_LE(info.first_free_slot + STR_REGION + STR_SLOTS,
		  info.table_slots);
	ASSERT_GE(1024, STR_REGION + STR_SLOTS);	/* raw slots only */
	ASSERT_GE(128, CQL_LOCK_OFF + NR_LOCKS * CQL_SPAN(CQL_QUEUE_BITS));
	e->base = info.first_free_slot;
}

/*
 * With RDLOCK_LOCK_SCOPE=backend (lock_env.backend_only), a test whose
 * subject is a protocol's own logic (leases, resets of a word, the update
 * word, grant order), on which the backend has no say, as every remote
 * operation it makes is one the exclusion tests make too, skips itself.
 * The suite's debug kernel runs it on its first backend and, on the
 * second, only what the backend can change (guest/lock.sh).
 */
#define PROTOCOL_LOGIC_SKIP "a protocol's own logic (RDLOCK_LOCK_SCOPE=backend)"

/* Where the step's time goes: the suite's budget is planned on it. */
FIXTURE_TEARDOWN(lock)
{
	printf("# %s took %.1f s\n", _metadata->name, rdl_now() - self->start);
	close(self->fd);
}

/*
 * Exact count of @proto's exclusive grants on NR_LOCKS locks from every
 * node; @round: 1 for the first run in the protocol's region, 2 for the
 * second (its barrier generation).
 */
static void run_protocol(struct __test_metadata *_metadata, int fd,
			 const struct lock_env *e, __u32 proto, __u32 round)
{
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 grants[NR_LOCKS] = { 0 }, violations = 0, ops = 0, acq = 0;
	__u64 retries = 0;
	__u32 i, l, failed = 0;
	char msg[160];

	memset(w, 0, sizeof(w));
	for (i = 0; i < e->threads; i++) {
		w[i].env = e;
		w[i].proto = proto;
		w[i].index = i;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, worker_main, &w[i]));
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err[0]) {
			TH_LOG("thread %u: %s", i, w[i].err);
			failed++;
		}
		for (l = 0; l < NR_LOCKS; l++)
			grants[l] += w[i].grants[l];
		violations += w[i].violations;
		ops += w[i].remote_ops;
		acq += w[i].acquires;
		retries += w[i].data_retries;
	}
	/* Injected failures are for the workers' operations, not these. */
	if (e->inject)
		ASSERT_EQ(0, rdl_debugfs_write(e->inject, 0));
	/* Whatever happened, the others wait for us at the barriers. */
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 slot(e, proto, BARRIER_SLOT, 0), round, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	for (l = 0; l < NR_LOCKS; l++)
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0,
				     slot(e, proto, TOTAL_SLOT, l), grants[l],
				     0, NULL));
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 slot(e, proto, BARRIER_SLOT, 1), round, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);

	EXPECT_EQ(0, failed);
	EXPECT_EQ(0, violations);
	for (l = 0; l < NR_LOCKS; l++) {
		__u64 total = 0, counter = 0;

		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
				     slot(e, proto, TOTAL_SLOT, l), 0, 0, &total));
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, data_home(e, l),
				     slot(e, proto, COUNTER_SLOT, l), 0, 0,
				     &counter));
		EXPECT_EQ(total, counter)
			TH_LOG("lock %u: %llu exclusive grants, counter %llu",
			       l, (unsigned long long)total,
			       (unsigned long long)counter);
		EXPECT_LT(0, total);
	}
	printf("# node %u: %llu acquisitions, %.2f remote ops per acquire, %llu data ops again\n",
	       e->self, (unsigned long long)acq, acq ? (double)ops / acq : 0,
	       (unsigned long long)retries);
}

TEST_F_TIMEOUT(lock, bakery_exclusion, 1800)
{
	run_protocol(_metadata, self->fd, &self->env, RDLOCK_TEST_PROTO_BAKERY,
		     1);
}

TEST_F_TIMEOUT(lock, caslock_exclusion, 1800)
{
	run_protocol(_metadata, self->fd, &self->env, RDLOCK_TEST_PROTO_CASLOCK,
		     1);
}

/*
 * Half the other protocols' acquisitions by default: the suite's time is
 * short, and the lockspace step runs CQL's exact count once more.
 */
TEST_F_TIMEOUT(lock, cql_exclusion, 1800)
{
	struct lock_env e = self->env;

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_CQL_ITERS", 50, &e.iters));
	run_protocol(_metadata, self->fd, &e, RDLOCK_TEST_PROTO_CQL, 1);
}

/*
 * Hierarchical CQL (section 5), task-fair and phase-fair: the exact count
 * on the same lock words (the previous round left them empty), each
 * node's clients of a lock sharing one queue entry. The cluster must
 * count local grants (a node's entry handed to, or shared with, another
 * client of the node): else nothing hierarchical happened.
 */
#define HIER_LOCAL		71	/* on node 0 */
#define HIER_BARRIER		72	/* on node 0 */

static long long cql_local_grants(void)
{
	return rdl_debugfs_counter("protocols", "cql_local_handovers") +
	       rdl_debugfs_counter("protocols", "cql_local_shares");
}

static void run_hier(struct __test_metadata *_metadata, int fd,
		     struct lock_env *e, __u32 flags, __u32 round)
{
	long long before = cql_local_grants();
	__u64 total = 0;
	char msg[160];

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_CQL_ITERS", 50, &e->iters));
	e->cql_flags = flags;
	ASSERT_LE(0, before);
	run_protocol(_metadata, fd, e, RDLOCK_TEST_PROTO_CQL, round);
	printf("# node %u: %lld local grants (in all: %lld handovers, %lld shared)\n",
	       e->self, cql_local_grants() - before,
	       rdl_debugfs_counter("protocols", "cql_local_handovers"),
	       rdl_debugfs_counter("protocols", "cql_local_shares"));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0,
			     slot(e, RDLOCK_TEST_PROTO_CQL, HIER_LOCAL, 0),
			     cql_local_grants() - before, 0, NULL));
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 slot(e, RDLOCK_TEST_PROTO_CQL, HIER_BARRIER,
				      0), round - 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
			     slot(e, RDLOCK_TEST_PROTO_CQL, HIER_LOCAL, 0),
			     0, 0, &total));
	EXPECT_LT(0, total);
	/* The next round's count starts from zero (node 0 clears it). */
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 slot(e, RDLOCK_TEST_PROTO_CQL, HIER_BARRIER,
				      1), round - 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	if (e->self == 0)
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0,
				     slot(e, RDLOCK_TEST_PROTO_CQL, HIER_LOCAL,
					  0), 0, 0, NULL));
}

TEST_F_TIMEOUT(lock, cql_hier_exclusion, 1800)
{
	struct lock_env e = self->env;

	run_hier(_metadata, self->fd, &e, RDLOCK_TEST_LOCK_CQL_HIER, 2);
}

TEST_F_TIMEOUT(lock, cql_hier_pf_exclusion, 1800)
{
	struct lock_env e = self->env;

	run_hier(_metadata, self->fd, &e, RDLOCK_TEST_LOCK_CQL_HIER |
		 RDLOCK_TEST_LOCK_CQL_PHASE_FAIR, 3);
}

/*
 * Version wraps under load: the exact count again on the CQL
 * locks with 2 version bits (4 laps of 8 entries), so that a lock is reset
 * every 8 to 24 acquisitions: idle when a release leaves it empty in its
 * second lap, else by the busy reset at the all-ones lap, which signals
 * every node while the others keep acquiring. Lock 0 takes 3 acquisitions
 * in 4, so that it is rarely idle. The lock words of cql_exclusion are
 * zeroed first (each node its own, then a barrier): the layout changes.
 * Every acquisition must be granted exactly once, and the cluster must
 * count busy resets.
 */
#define WRAP_BARRIER		68	/* and 69: on node 0 */
#define WRAP_RESETS		70	/* on node 0 */

static long long cql_busy_resets(void)
{
	return rdl_debugfs_counter("protocols", "cql_resets_version");
}

TEST_F_TIMEOUT(lock, cql_wrap, 1800)
{
	struct lock_env e = self->env;
	long long before, after;
	__u64 total = 0;
	__u32 l, i;
	char msg[160];

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_CQL_ITERS", 50, &e.iters));
	e.cql_version_bits = 2;
	e.hot = true;
	for (l = 0; l < NR_LOCKS; l++) {
		if (lock_home(&e, l) != e.self)
			continue;
		for (i = 0; i < CQL_SPAN(CQL_QUEUE_BITS); i++)
			ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_WRITE,
					     e.self,
					     lock_slot(&e, RDLOCK_TEST_PROTO_CQL,
						       l) + i, 0, 0, NULL));
	}
	ASSERT_EQ(0, rdl_barrier(self->fd, e.nr_nodes, e.barrier_timeout,
				 slot(&e, RDLOCK_TEST_PROTO_CQL, WRAP_BARRIER,
				      0), 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	before = cql_busy_resets();
	ASSERT_LE(0, before);
	run_protocol(_metadata, self->fd, &e, RDLOCK_TEST_PROTO_CQL, 4);
	/* Resets in the background are done once the lock is idle. */
	usleep(200000);
	after = cql_busy_resets();
	ASSERT_LE(before, after);
	printf("# node %u: %lld busy resets (in all: %lld idle, %lld busy, %lld aborted)\n",
	       e.self, after - before,
	       rdl_debugfs_counter("protocols", "version_resets"),
	       rdl_debugfs_counter("protocols", "cql_resets_version"),
	       rdl_debugfs_counter("protocols", "cql_reset_aborts"));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_FAA, 0,
			     slot(&e, RDLOCK_TEST_PROTO_CQL, WRAP_RESETS, 0),
			     after - before, 0, NULL));
	ASSERT_EQ(0, rdl_barrier(self->fd, e.nr_nodes, e.barrier_timeout,
				 slot(&e, RDLOCK_TEST_PROTO_CQL, WRAP_BARRIER,
				      1), 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     slot(&e, RDLOCK_TEST_PROTO_CQL, WRAP_RESETS, 0),
			     0, 0, &total));
	EXPECT_LT(0, total);
}

/*
 * A link blip under load: while both protocols run the exact
 * count, BLIP_LOST links of each node fail with requests done at the home
 * and their answers lost. The tables stay, so nothing may be lost or
 * applied twice: no lock or unlock may fail, the counts must be exact, and
 * no ticket may be orphaned.
 * - Two-sided: each home applies a request of a peer and then fails the
 *   link instead of answering; each lost answer must have been answered
 *   again from the home's record.
 * - Verbs: the NIC keeps no record. Each node takes an atomic of its own
 *   as done by the home and its completion as lost with the link. The CAS
 *   spinlock must settle each such outcome by a READ of the word
 *   (cas_settles); the bakery, whose word counts tickets and does not
 *   name them, hands each to its node's census (bakery_unknowns), which
 *   counts done the slots no node holds.
 */
#define BLIP_LOST	3

TEST_F_TIMEOUT(lock, exclusion_link_blips, 1800)
{
	static const __u32 protos[] = {
		RDLOCK_TEST_PROTO_CASLOCK, RDLOCK_TEST_PROTO_BAKERY,
	};
	struct lock_env e = self->env;
	bool verbs = e.backend != RDLOCK_BACKEND_TWOSIDED;
	const char *lost_name = verbs ? "lost_completions_injected" :
					"lost_replies_injected";
	/* What makes each lost answer good again. */
	const char *again_file = verbs ? "protocols" : "cluster";
	const char *again_name;
	long long lost0, again0, orphaned0, lost, again, orphaned;
	char msg[160];
	__u32 i;

	e.blips = true;
	e.inject = verbs ? "inject_lost_completions" : "inject_lost_replies";
	e.iters = e.iters < 50 ? e.iters : 50;
	for (i = 0; i < ARRAY_SIZE(protos); i++) {
		if (!verbs)
			again_name = "replayed_requests";
		else if (protos[i] == RDLOCK_TEST_PROTO_CASLOCK)
			again_name = "cas_settles";
		else
			again_name = "bakery_unknowns";
		lost0 = rdl_debugfs_counter("cluster", lost_name);
		again0 = rdl_debugfs_counter(again_file, again_name);
		orphaned0 = rdl_debugfs_counter("protocols", "tickets_orphaned");
		ASSERT_LE(0, lost0);
		ASSERT_LE(0, again0);
		ASSERT_LE(0, orphaned0);
		/* Nobody fails a link before every node is in the test. */
		ASSERT_EQ(0, rdl_barrier(self->fd, e.nr_nodes, e.barrier_timeout,
					 slot(&e, protos[i], BARRIER_SLOT, 2), 1,
					 msg, sizeof(msg)))
			TH_LOG("%s", msg);
		ASSERT_EQ(0, rdl_debugfs_write(e.inject, BLIP_LOST));
		/* Round 2: the exclusion tests ran round 1 in the region. */
		run_protocol(_metadata, self->fd, &e, protos[i], 2);
		/* Whatever happened: leave no injection for later tests. */
		ASSERT_EQ(0, rdl_debugfs_write(e.inject, 0));
		lost = rdl_debugfs_counter("cluster", lost_name) - lost0;
		again = rdl_debugfs_counter(again_file, again_name) - again0;
		orphaned = rdl_debugfs_counter("protocols", "tickets_orphaned") -
			   orphaned0;
		printf("# node %u, protocol %u: %lld answers lost, %lld %s\n",
		       e.self, protos[i], lost, again, again_name);
		EXPECT_EQ(BLIP_LOST, lost);
		EXPECT_LE(lost, again);
		EXPECT_EQ(0, orphaned);
	}
}

/*
 * A home far behind, two-sided: each home holds LATE_HELD of its
 * peers' recorded requests past their senders' window while it answers
 * the others (inject_late_requests), and serves them only then. Each
 * sender gives up and seals its request: the home answers what became of
 * it, so no outcome stays unknown (unknown_outcomes), and a held request
 * served after its seal must not be applied, or a CAS spinlock word would
 * change under nobody. The exact count runs with the CAS spinlock;
 * nothing may be orphaned.
 */
#define LATE_HELD	1

TEST_F_TIMEOUT(lock, exclusion_late_requests, 900)
{
	struct lock_env e = self->env;
	long long held0, served0, applied0, orphaned0, sealed0, held, served;
	long long sealed, unknown0;
	char msg[160];
	int waited;

	if (e.backend != RDLOCK_BACKEND_TWOSIDED)
		SKIP(return, "the home's record is two-sided only");
	held0 = rdl_debugfs_counter("cluster", "late_requests_injected");
	served0 = rdl_debugfs_counter("cluster", "late_requests_served");
	applied0 = rdl_debugfs_counter("cluster", "late_requests_applied");
	sealed0 = rdl_debugfs_counter("cluster", "sealed_unapplied") +
		  rdl_debugfs_counter("cluster", "sealed_applied");
	orphaned0 = rdl_debugfs_counter("protocols", "tickets_orphaned");
	unknown0 = rdl_debugfs_counter("cluster", "unknown_outcomes");
	ASSERT_LE(0, held0);
	ASSERT_LE(0, unknown0);
	ASSERT_LE(0, served0);
	ASSERT_LE(0, applied0);
	ASSERT_LE(0, orphaned0);
	e.blips = true;
	e.inject = "inject_late_requests";
	e.iters = e.iters < 50 ? e.iters : 50;
	ASSERT_EQ(0, rdl_barrier(self->fd, e.nr_nodes, e.barrier_timeout,
				 slot(&e, RDLOCK_TEST_PROTO_CASLOCK,
				      BARRIER_SLOT, 3), 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_debugfs_write(e.inject, LATE_HELD));
	/* Round 3: the exclusion and link-blip tests ran 1 and 2. */
	run_protocol(_metadata, self->fd, &e, RDLOCK_TEST_PROTO_CASLOCK, 3);
	held = rdl_debugfs_counter("cluster", "late_requests_injected") -
	       held0;
	EXPECT_EQ(LATE_HELD, held);
	/* The event: every held request served, whatever it found. */
	for (waited = 0; waited < 120; waited++) {
		served = rdl_debugfs_counter("cluster",
					     "late_requests_served") - served0;
		if (served >= held)
			break;
		sleep(1);
	}
	sealed = rdl_debugfs_counter("cluster", "sealed_unapplied") +
		 rdl_debugfs_counter("cluster", "sealed_applied") - sealed0;
	printf("# node %u: %lld held past their window, %lld served; %lld own sealed\n",
	       e.self, held, served, sealed);
	EXPECT_EQ(held, served);
	EXPECT_EQ(applied0, rdl_debugfs_counter("cluster",
						"late_requests_applied"));
	/* A home that answers others leaves no outcome unknown. */
	EXPECT_EQ(unknown0, rdl_debugfs_counter("cluster",
						"unknown_outcomes"));
	EXPECT_EQ(orphaned0, rdl_debugfs_counter("protocols",
						 "tickets_orphaned"));
}

/* A counter of /sys/kernel/debug/rdlock/protocols, or -1. */
static int unlock(int fd, __u32 handle)
{
	return ioctl(fd, RDLOCK_TEST_IOC_UNLOCK, &handle) < 0 ? errno : 0;
}

static struct rdlock_test_proto_stats file_stats(int fd)
{
	struct rdlock_test_proto_stats s;

	memset(&s, 0xff, sizeof(s));
	ioctl(fd, RDLOCK_TEST_IOC_STATS, &s);
	return s;
}

/*
 * Leases after a stalled holder. Per round one node takes the
 * lock (exclusive, or shared every other round) with a clock that stands
 * still, as a paused guest's does, and sleeps for four leases before it
 * releases. The others hammer the lock in random modes meanwhile: they
 * queue behind the stalled holder, one of them resets it after two leases
 * of stillness, and they keep going while the holder wakes up and
 * releases late. That release must find the ticket revoked and change
 * nothing; no two live holders may ever conflict (writer flag) and the
 * counter must equal the exclusive grants exactly.
 */
#define LST_LEASE_MS		1000
#define LST_STALL_MS		(4 * LST_LEASE_MS)
#define LST_AFTER_ITERS		20	/* the woken node's own acquisitions */

struct lst_worker {
	struct worker w;
	__u32 round;
	bool until_stop;	/* else LST_AFTER_ITERS acquisitions */
	__u64 again, resets;
};

static __u32 lst_slot(const struct lock_env *e, __u32 what)
{
	return e->base + LST_REGION + what;
}

static void *lst_main(void *arg)
{
	struct lst_worker *lw = arg;
	struct worker *w = &lw->w;
	const struct lock_env *e = w->env;
	unsigned int seed = e->self * 7919 + w->index * 104729 + lw->round;
	struct section sec = {
		.node = 1 % e->nr_nodes,
		.counter = lst_slot(e, LST_COUNTER),
		.flag = lst_slot(e, LST_FLAG),
	};
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	__u32 it = 0;
	__u64 stop;

	if (fd < 0) {
		snprintf(w->err, sizeof(w->err), "open: %s", strerror(errno));
		return NULL;
	}
	while (!w->err[0]) {
		bool exclusive = rand_r(&seed) % 2;
		struct rdlock_test_lock l = {
			.proto = RDLOCK_TEST_PROTO_BAKERY, .mode = exclusive,
			.node = 0, .slot = lst_slot(e, LST_LOCK),
			.lease_ms = LST_LEASE_MS, .timeout_ms = 60000,
		};

		if (lw->until_stop) {
			if (data_op(fd, w, RDLOCK_TEST_OP_READ, 0,
				    lst_slot(e, LST_STOP), 0, &stop))
				break;
			if (stop > lw->round)
				break;
		} else if (it++ == LST_AFTER_ITERS) {
			break;
		}
		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK, &l) < 0) {
			if (errno == EAGAIN) {
				lw->again++;	/* a reset ended the attempt */
				continue;
			}
			snprintf(w->err, sizeof(w->err), "LOCK: %s",
				 strerror(errno));
			break;
		}
		w->acquires++;
		if (!critical_section(fd, w, &sec, exclusive) && exclusive)
			w->grants[0]++;
		if (ioctl(fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle) < 0 &&
		    !w->err[0])
			snprintf(w->err, sizeof(w->err), "UNLOCK: %s",
				 strerror(errno));
	}
	lw->resets = file_stats(fd).stall_resets;
	close(fd);
	return NULL;
}

/* Run the hammering threads of one round; adds up into @sum. */
static void lst_hammer(const struct lock_env *e, __u32 round, bool until_stop,
		       struct lst_worker *sum)
{
	struct lst_worker lw[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u32 i, n;

	memset(lw, 0, sizeof(lw));
	for (n = 0; n < e->threads; n++) {
		lw[n].w.env = e;
		lw[n].w.index = n;
		lw[n].round = round;
		lw[n].until_stop = until_stop;
		if (pthread_create(&tid[n], NULL, lst_main, &lw[n])) {
			snprintf(sum->w.err, sizeof(sum->w.err),
				 "pthread_create failed");
			break;
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		if (lw[i].w.err[0] && !sum->w.err[0])
			memcpy(sum->w.err, lw[i].w.err, sizeof(sum->w.err));
		sum->w.grants[0] += lw[i].w.grants[0];
		sum->w.violations += lw[i].w.violations;
		sum->w.acquires += lw[i].w.acquires;
		sum->again += lw[i].again;
		sum->resets += lw[i].resets;
	}
}

static __u32 stall_node(const struct lock_env *e, __u32 round)
{
	return (round + 1) % e->nr_nodes;
}

TEST_F_TIMEOUT(lock, bakery_lease_stall, 900)
{
	const struct lock_env *e = &self->env;
	struct rdlock_test_proto_stats s0, s1;
	struct lst_worker sum;
	__u64 held, total = 0, counter = 0, resets = 0, revoked = 0;
	__u32 rounds, r, stalled = 0, h;
	char msg[160];
	double end;
	int hfd;

	if (self->env.backend_only)
		SKIP(return, PROTOCOL_LOGIC_SKIP);
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_LEASE_ROUNDS", 4, &rounds));
	memset(&sum, 0, sizeof(sum));
	for (r = 0; r < rounds; r++) {
		ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes,
					 e->barrier_timeout,
					 lst_slot(e, LST_BARRIER), 2 * r + 1,
					 msg, sizeof(msg)))
			TH_LOG("%s", msg);
		if (e->self == stall_node(e, r)) {
			struct rdlock_test_lock l = {
				.proto = RDLOCK_TEST_PROTO_BAKERY,
				.mode = r % 2 ? RDLOCK_TEST_MODE_SHARED :
						RDLOCK_TEST_MODE_EXCLUSIVE,
				.node = 0, .slot = lst_slot(e, LST_LOCK),
				.lease_ms = LST_LEASE_MS, .timeout_ms = 60000,
				.flags = RDLOCK_TEST_LOCK_STILL_CLOCK,
			};

			hfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
			ASSERT_LE(0, hfd);
			ASSERT_EQ(0, ioctl(hfd, RDLOCK_TEST_IOC_LOCK, &l));
			h = l.handle;
			ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_WRITE, 0,
					     lst_slot(e, LST_HELD), r + 1, 0,
					     NULL));
			usleep(LST_STALL_MS * 1000);
			s0 = file_stats(hfd);
			EXPECT_EQ(0, unlock(hfd, h));
			s1 = file_stats(hfd);
			/* Revoked: the release found it so and did nothing. */
			revoked += s1.lease_expiries - s0.lease_expiries;
			stalled++;
			close(hfd);
			lst_hammer(e, r, false, &sum);
			ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_WRITE, 0,
					     lst_slot(e, LST_STOP), r + 1, 0,
					     NULL));
		} else {
			end = rdl_now() + 120;
			do {
				ASSERT_EQ(0, rdl_xop(self->fd,
						     RDLOCK_TEST_OP_READ, 0,
						     lst_slot(e, LST_HELD), 0,
						     0, &held));
				usleep(1000);
			} while (held <= r && rdl_now() < end);
			ASSERT_LT(r, held);
			lst_hammer(e, r, true, &sum);
		}
		ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes,
					 e->barrier_timeout,
					 lst_slot(e, LST_BARRIER), 2 * r + 2,
					 msg, sizeof(msg)))
			TH_LOG("%s", msg);
	}
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_FAA, 0,
			     lst_slot(e, LST_TOTAL), sum.w.grants[0], 0, NULL));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_FAA, 0,
			     lst_slot(e, LST_RESETS), sum.resets, 0, NULL));
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 lst_slot(e, LST_BARRIER), 2 * rounds + 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     lst_slot(e, LST_TOTAL), 0, 0, &total));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 1 % e->nr_nodes,
			     lst_slot(e, LST_COUNTER), 0, 0, &counter));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     lst_slot(e, LST_RESETS), 0, 0, &resets));
	EXPECT_EQ('\0', sum.w.err[0])
		TH_LOG("%s", sum.w.err);
	EXPECT_EQ(0, sum.w.violations);
	EXPECT_EQ(total, counter);
	/* Every stalled holder was reset, and found out at its release. */
	EXPECT_EQ(stalled, revoked);
	EXPECT_LE(rounds, resets);
	printf("# node %u: %u rounds, %llu acquisitions, %llu exclusive, %llu EAGAIN\n",
	       e->self, rounds, (unsigned long long)sum.w.acquires,
	       (unsigned long long)sum.w.grants[0],
	       (unsigned long long)sum.again);
	printf("# cluster: %llu stall resets, %llu exclusive grants, counter %llu\n",
	       (unsigned long long)resets, (unsigned long long)total,
	       (unsigned long long)counter);
}

static long long protocol_counter(const char *name)
{
	return rdl_debugfs_counter("protocols", name);
}

/*
 * Once every acquisition is done, wait for this node's background work:
 * the overflow reset runs there once the epoch's last holder left, and
 * counts only after its CAS has landed.
 */
static int flush_background(int fd)
{
	return ioctl(fd, RDLOCK_TEST_IOC_FLUSH) ? errno : 0;
}

struct overflow_worker {
	const struct lock_env *env;
	__u32 iterations;
	struct rdlock_test_lock_bench b;
	int err;
};

static void *overflow_main(void *arg)
{
	struct overflow_worker *w = arg;
	const struct lock_env *e = w->env;
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		w->err = errno;
		return NULL;
	}
	w->b.lock.proto = RDLOCK_TEST_PROTO_BAKERY;
	w->b.lock.node = e->nr_nodes - 1;
	w->b.lock.slot = e->base + OVF_LOCK;
	w->b.iterations = w->iterations;
	w->b.exclusive_every = OVF_EXCLUSIVE_EVERY;
	w->b.rmw_node = 0;
	w->b.rmw_slot = e->base + OVF_COUNTER;
	if (ioctl(fd, RDLOCK_TEST_IOC_LOCK_BENCH, &w->b) < 0)
		w->err = errno;
	close(fd);
	return NULL;
}

/*
 * A free word (n == max) OVF_HEADROOM exclusive and OVF_HEADROOM x 50
 * shared acquisitions short of COUNT_MAX: whichever class gets there first
 * crosses it, within the run's first 2 x OVF_HEADROOM x 50 acquisitions.
 */
static __u64 overflow_preset(void)
{
	__u32 x = BAKERY_COUNT_MAX - OVF_HEADROOM;
	__u32 s = BAKERY_COUNT_MAX - OVF_HEADROOM * OVF_EXCLUSIVE_EVERY;

	return bakery_word_pack(x, s, x, s);
}

TEST_F_TIMEOUT(lock, bakery_overflow, 1500)
{
	const struct lock_env *e = &self->env;
	struct overflow_worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 grants = 0, total = 0, counter = 0, resets = 0;
	long long resets_before, resets_after;
	__u32 i, want;
	char msg[160];

	if (self->env.backend_only)
		SKIP(return, PROTOCOL_LOGIC_SKIP);
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_OVERFLOW_TOTAL", 3000, &want));
	/* Enough to cross, too few to cross a second time from zero. */
	ASSERT_LE(2 * OVF_HEADROOM * OVF_EXCLUSIVE_EVERY, want);
	ASSERT_GT(BAKERY_COUNT_MAX, want);
	resets_before = protocol_counter("overflow_resets");
	ASSERT_LE(0, resets_before);
	if (e->self == 0)
		ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_WRITE,
				     e->nr_nodes - 1, e->base + OVF_LOCK,
				     overflow_preset(), 0, NULL));
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 e->base + OVF_BARRIER, 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	memset(w, 0, sizeof(w));
	for (i = 0; i < e->threads; i++) {
		w[i].env = e;
		/* Spread want over every thread of every node, rounding up. */
		w[i].iterations = (want + e->nr_nodes * e->threads - 1) /
				  (e->nr_nodes * e->threads);
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, overflow_main, &w[i]));
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, w[i].err)
			TH_LOG("thread %u: %s", i, strerror(w[i].err));
		grants += w[i].b.exclusive_grants;
	}
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 e->base + OVF_BARRIER + 1, 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, flush_background(self->fd));
	resets_after = protocol_counter("overflow_resets");
	ASSERT_LE(0, resets_after);

	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_FAA, 0,
			     e->base + OVF_TOTAL, grants, 0, NULL));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_FAA, 0,
			     e->base + OVF_RESETS,
			     resets_after - resets_before, 0, NULL));
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 e->base + OVF_BARRIER + 2, 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + OVF_TOTAL, 0, 0, &total));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + OVF_COUNTER, 0, 0, &counter));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + OVF_RESETS, 0, 0, &resets));
	EXPECT_EQ(total, counter);
	EXPECT_EQ(1, resets);
	printf("# node %u: %llu exclusive grants in the cluster, ", e->self,
	       (unsigned long long)total);
	printf("counter %llu, %llu overflow resets\n",
	       (unsigned long long)counter, (unsigned long long)resets);
}

TEST_F(lock, bad_lock_inputs)
{
	struct rdlock_test_lock l = { .node = self->env.self,
				      .slot = slot(&self->env, 0, LOCK_SLOT, 7) };
	__u32 handle = 12345;

	l.proto = RDLOCK_TEST_PROTO_NR;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.proto = 0;
	/* CQL's widths are for CQL only, and within their limits. */
	l.queue_bits = CQL_QUEUE_BITS;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.proto = RDLOCK_TEST_PROTO_CQL;
	l.queue_bits = CQL_CAP_BITS_MAX + 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.queue_bits = 0;
	l.version_bits = CQL_VER_BITS_MIN - 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.version_bits = 0;
	/* Phase-fair is a policy of the hierarchy only. */
	l.flags = RDLOCK_TEST_LOCK_CQL_PHASE_FAIR;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	/* The hierarchy is CQL's. */
	l.proto = 0;
	l.flags = RDLOCK_TEST_LOCK_CQL_HIER;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.flags = 0;
	l.mode = 2;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.mode = 0;
	l.slot = 0;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.slot = slot(&self->env, 0, LOCK_SLOT, 7);
	l.node = RDLOCK_MAX_NODES;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_UNLOCK, &handle));
	EXPECT_EQ(ENOENT, errno);
	/* A lock held by a closed file is released: take it twice. */
	l.node = self->env.self;
	l.mode = 1;
	ASSERT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle));
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle));
	EXPECT_EQ(ENOENT, errno);
	{
		int fd2 = open(TEST_DEV, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd2);
		/* Output fields must come in zeroed. */
		EXPECT_EQ(-1, ioctl(fd2, RDLOCK_TEST_IOC_LOCK, &l));
		EXPECT_EQ(EINVAL, errno);
		l.handle = 0;
		l.remote_ops = 0;
		l.prev = 0;
		ASSERT_EQ(0, ioctl(fd2, RDLOCK_TEST_IOC_LOCK, &l));
		close(fd2);
	}
	l.handle = 0;
	l.remote_ops = 0;
	l.prev = 0;
	l.timeout_ms = 10000;
	EXPECT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle));
}

/* One update-lock thread; see the comment at the top. */
struct upd_worker {
	const struct lock_env *env;
	__u32 proto, index, iters;
	__u64 grants, upgrades, violations, acquires, remote_ops;
	struct rdlock_test_proto_stats stats;
	char err[160];
};

static __u32 upd_slot(const struct lock_env *e, __u32 proto, __u32 what)
{
	return e->base + UPD_REGION(proto) + what;
}

/* One operation on an update-test data slot; records the first error. */
static int upd_op(int fd, struct upd_worker *w, __u32 op, __u32 what,
		  __u64 a0, __u64 a1, __u64 *val)
{
	const struct lock_env *e = w->env;
	int err = rdl_xop(fd, op, data_home(e, 0), upd_slot(e, w->proto, what),
			  a0, a1, val);

	if (err && !w->err[0])
		snprintf(w->err, sizeof(w->err), "op %u on slot %u: %s", op,
			 what, strerror(err));
	return err;
}

/* A reader or a not upgraded update holder: no writer may be inside. */
static int upd_read(int fd, struct upd_worker *w)
{
	__u64 flag, c;

	if (upd_op(fd, w, RDLOCK_TEST_OP_READ, UPD_WFLAG, 0, 0, &flag))
		return -1;
	if (flag)
		w->violations++;
	if (upd_op(fd, w, RDLOCK_TEST_OP_READ, UPD_COUNTER, 0, 0, &c) ||
	    upd_op(fd, w, RDLOCK_TEST_OP_READ, UPD_WFLAG, 0, 0, &flag))
		return -1;
	if (flag)
		w->violations++;
	return 0;
}

/* An exclusive or upgraded holder: the non-atomic increment, alone. */
static int upd_write(int fd, struct upd_worker *w, __u64 mark)
{
	__u64 flag, c;

	if (upd_op(fd, w, RDLOCK_TEST_OP_READ, UPD_WFLAG, 0, 0, &flag))
		return -1;
	if (flag)
		w->violations++;
	if (upd_op(fd, w, RDLOCK_TEST_OP_WRITE, UPD_WFLAG, mark, 0, NULL) ||
	    upd_op(fd, w, RDLOCK_TEST_OP_READ, UPD_COUNTER, 0, 0, &c) ||
	    upd_op(fd, w, RDLOCK_TEST_OP_WRITE, UPD_COUNTER, c + 1, 0, NULL) ||
	    upd_op(fd, w, RDLOCK_TEST_OP_READ, UPD_WFLAG, 0, 0, &flag))
		return -1;
	if (flag != mark)
		w->violations++;	/* another writer was inside */
	if (upd_op(fd, w, RDLOCK_TEST_OP_WRITE, UPD_WFLAG, 0, 0, NULL))
		return -1;
	w->grants++;
	return 0;
}

/* Claim (@on) or give back the update flag: nobody else may hold it. */
static int upd_flag(int fd, struct upd_worker *w, __u64 mark, bool on)
{
	__u64 old;

	if (upd_op(fd, w, RDLOCK_TEST_OP_CAS, UPD_UFLAG, on ? 0 : mark,
		   on ? mark : 0, &old))
		return -1;
	if (old != (on ? 0 : mark))
		w->violations++;	/* two update holders at once */
	return 0;
}

static void upd_section(int fd, struct upd_worker *w, __u32 mode,
			__u32 handle, bool upgrade)
{
	__u64 mark = ((__u64)(w->env->self + 1) << 32) | (w->index + 1), u;
	struct rdlock_test_upgrade up = { .handle = handle,
					  .timeout_ms = LOCK_TIMEOUT_MS };

	switch (mode) {
	case RDLOCK_TEST_MODE_SHARED:
		upd_read(fd, w);
		return;
	case RDLOCK_TEST_MODE_EXCLUSIVE:
		if (upd_op(fd, w, RDLOCK_TEST_OP_READ, UPD_UFLAG, 0, 0, &u))
			return;
		if (u)
			w->violations++;	/* an update holder is inside */
		upd_write(fd, w, mark);
		return;
	}
	if (upd_flag(fd, w, mark, true) || upd_read(fd, w))
		return;
	if (upgrade) {
		if (ioctl(fd, RDLOCK_TEST_IOC_UPGRADE, &up) < 0) {
			snprintf(w->err, sizeof(w->err), "UPGRADE: %s",
				 strerror(errno));
			return;
		}
		w->upgrades++;
		w->remote_ops += up.remote_ops;
		if (upd_write(fd, w, mark))
			return;
	}
	upd_flag(fd, w, mark, false);
}

static void *upd_main(void *arg)
{
	struct upd_worker *w = arg;
	const struct lock_env *e = w->env;
	unsigned int seed = e->self * 7919 + w->index * 104729 + w->proto + 17;
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	__u32 it;

	if (fd < 0) {
		snprintf(w->err, sizeof(w->err), "open: %s", strerror(errno));
		return NULL;
	}
	for (it = 0; it < w->iters && !w->err[0]; it++) {
		unsigned int r = rand_r(&seed) % 10;
		__u32 mode = r < 4 ? RDLOCK_TEST_MODE_SHARED :
			     r < 7 ? RDLOCK_TEST_MODE_UPDATE : RDLOCK_TEST_MODE_EXCLUSIVE;
		struct rdlock_test_lock l = {
			.proto = w->proto, .mode = mode, .node = 0,
			.slot = upd_slot(e, w->proto, UPD_LOCK),
			.timeout_ms = LOCK_TIMEOUT_MS,
			.flags = RDLOCK_TEST_LOCK_UPDATE_WORD,
		};

		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK, &l) < 0) {
			snprintf(w->err, sizeof(w->err), "LOCK mode %u: %s",
				 mode, strerror(errno));
			break;
		}
		w->acquires++;
		w->remote_ops += l.remote_ops;
		upd_section(fd, w, mode, l.handle, rand_r(&seed) % 2);
		if (ioctl(fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle) < 0 &&
		    !w->err[0])
			snprintf(w->err, sizeof(w->err), "UNLOCK: %s",
				 strerror(errno));
	}
	if (ioctl(fd, RDLOCK_TEST_IOC_STATS, &w->stats) < 0 && !w->err[0])
		snprintf(w->err, sizeof(w->err), "STATS: %s", strerror(errno));
	close(fd);
	return NULL;
}

static void run_update(struct __test_metadata *_metadata, int fd,
		       const struct lock_env *e, __u32 proto)
{
	struct upd_worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 grants = 0, upgrades = 0, violations = 0, acq = 0, ops = 0;
	__u64 total = 0, counter = 0, all_upgrades = 0;
	__u32 i, iters, failed = 0;
	char msg[160];

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_UPDATE_ITERS", 60, &iters));
	memset(w, 0, sizeof(w));
	for (i = 0; i < e->threads; i++) {
		w[i].env = e;
		w[i].proto = proto;
		w[i].index = i;
		w[i].iters = iters;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, upd_main, &w[i]));
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err[0]) {
			TH_LOG("thread %u: %s", i, w[i].err);
			failed++;
		}
		grants += w[i].grants;
		upgrades += w[i].upgrades;
		violations += w[i].violations;
		acq += w[i].acquires;
		ops += w[i].remote_ops;
		/* The file's own counters (cfg->stats) saw exactly these. */
		EXPECT_EQ(w[i].acquires, w[i].stats.acquires);
		EXPECT_EQ(w[i].upgrades, w[i].stats.upgrades);
		EXPECT_LE(w[i].remote_ops, w[i].stats.remote_ops);
	}
	/* Whatever happened, the others wait for us at the barriers. */
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 upd_slot(e, proto, UPD_BARRIER), 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0,
			     upd_slot(e, proto, UPD_TOTAL), grants, 0, NULL));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0,
			     upd_slot(e, proto, UPD_UPGRADES), upgrades, 0,
			     NULL));
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 upd_slot(e, proto, UPD_BARRIER + 1), 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);

	EXPECT_EQ(0, failed);
	EXPECT_EQ(0, violations);
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
			     upd_slot(e, proto, UPD_TOTAL), 0, 0, &total));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
			     upd_slot(e, proto, UPD_UPGRADES), 0, 0,
			     &all_upgrades));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, data_home(e, 0),
			     upd_slot(e, proto, UPD_COUNTER), 0, 0, &counter));
	EXPECT_EQ(total, counter)
		TH_LOG("%llu write grants, counter %llu",
		       (unsigned long long)total, (unsigned long long)counter);
	EXPECT_LT(0, all_upgrades);
	EXPECT_LT(all_upgrades, total);
	printf("# node %u: %llu acquisitions, %llu upgrades, %.2f remote ops per acquire; ",
	       e->self, (unsigned long long)acq, (unsigned long long)upgrades,
	       acq ? (double)ops / acq : 0);
	printf("cluster: %llu write grants (%llu upgrades), counter %llu\n",
	       (unsigned long long)total, (unsigned long long)all_upgrades,
	       (unsigned long long)counter);
}

TEST_F_TIMEOUT(lock, bakery_update, 1800)
{
	if (self->env.backend_only)
		SKIP(return, PROTOCOL_LOGIC_SKIP);
	run_update(_metadata, self->fd, &self->env, RDLOCK_TEST_PROTO_BAKERY);
}

TEST_F_TIMEOUT(lock, caslock_update, 1800)
{
	if (self->env.backend_only)
		SKIP(return, PROTOCOL_LOGIC_SKIP);
	run_update(_metadata, self->fd, &self->env, RDLOCK_TEST_PROTO_CASLOCK);
}

/* The counters of a bakery word, for a failure message. */
static const char *lock_word_str(int fd, __u32 node, __u32 slot,
				 bool update_word, char *buf, size_t size)
{
	enum bakery_mode m = update_word ? BAKERY_UPD_SHARED : BAKERY_SHARED;
	struct bakery_fields f;
	__u64 w;

	if (rdl_xop(fd, RDLOCK_TEST_OP_READ, node, slot, 0, 0, &w)) {
		snprintf(buf, size, "word unreadable");
		return buf;
	}
	bakery_unpack(w, m, &f);
	snprintf(buf, size,
		 "word %#llx: nX %u maxX %u, nS %u maxS %u, nU %u maxU %u",
		 (unsigned long long)w, f.n[BAKERY_CLS_X], f.max[BAKERY_CLS_X],
		 f.n[BAKERY_CLS_S], f.max[BAKERY_CLS_S], f.n[BAKERY_CLS_U],
		 f.max[BAKERY_CLS_U]);
	return buf;
}

struct ms_worker {
	struct rdlock_test_lock_bench b;
	int err;
};

static void *ms_main(void *arg)
{
	struct ms_worker *w = arg;
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		w->err = errno;
		return NULL;
	}
	if (ioctl(fd, RDLOCK_TEST_IOC_LOCK_BENCH, &w->b) < 0)
		w->err = errno;
	close(fd);
	return NULL;
}

/*
 * Every node's even threads take k = 4 tickets, odd ones k = 1, every
 * third one exclusive with the non-atomic increment. On the update word
 * the shared slots cross COUNT_MAX (1024): each epoch holds at most
 * COUNT_MAX + k - 1 of them, so the cluster must have reset it at least
 * shared slots / (COUNT_MAX + 3) times.
 */
static void run_multislot(struct __test_metadata *_metadata, int fd,
			  const struct lock_env *e, bool update_word)
{
	__u32 base = e->base + MS_REGION + (update_word ? 16 : 0);
	__u64 grants = 0, slots = 0, total = 0, counter = 0, all_slots = 0;
	__u64 resets = 0;
	long long resets_before, resets_after;
	struct ms_worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u32 i, iters;
	char msg[160];

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_MULTISLOT_ITERS", 150, &iters));
	resets_before = protocol_counter("overflow_resets");
	ASSERT_LE(0, resets_before);
	memset(w, 0, sizeof(w));
	for (i = 0; i < e->threads; i++) {
		struct rdlock_test_lock_bench *b = &w[i].b;

		b->lock.proto = RDLOCK_TEST_PROTO_BAKERY;
		b->lock.node = e->nr_nodes - 1;
		b->lock.slot = base + MS_LOCK;
		b->lock.timeout_ms = LOCK_TIMEOUT_MS;
		b->lock.flags = update_word ? RDLOCK_TEST_LOCK_UPDATE_WORD : 0;
		b->lock.k = i % 2 ? 1 : 4;
		b->iterations = iters;
		b->exclusive_every = MS_EXCLUSIVE_EVERY;
		b->rmw_node = 0;
		b->rmw_slot = base + MS_COUNTER;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, ms_main, &w[i]));
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, w[i].err)
			TH_LOG("thread %u (k %u): %s; %s", i, w[i].b.lock.k,
			       strerror(w[i].err),
			       lock_word_str(fd, e->nr_nodes - 1, base + MS_LOCK,
					     update_word, msg, sizeof(msg)));
		grants += w[i].b.exclusive_grants;
		if (!w[i].err)
			slots += (__u64)w[i].b.lock.k *
				 (iters - w[i].b.exclusive_grants);
	}
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 base + MS_BARRIER, 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, flush_background(fd));
	resets_after = protocol_counter("overflow_resets");
	ASSERT_LE(0, resets_after);
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0, base + MS_TOTAL,
			     grants, 0, NULL));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0, base + MS_SHARED_SLOTS,
			     slots, 0, NULL));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0, base + MS_RESETS,
			     resets_after - resets_before, 0, NULL));
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 base + MS_BARRIER + 1, 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, base + MS_TOTAL, 0, 0,
			     &total));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, base + MS_COUNTER, 0,
			     0, &counter));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
			     base + MS_SHARED_SLOTS, 0, 0, &all_slots));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, base + MS_RESETS, 0,
			     0, &resets));
	EXPECT_EQ(total, counter);
	EXPECT_LT(0, total);
	if (update_word)
		EXPECT_LE(all_slots / (BAKERY_UPD_COUNT_MAX_S + 3), resets);
	printf("# node %u, %s word: %llu exclusive grants, counter %llu, ",
	       e->self, update_word ? "update" : "base",
	       (unsigned long long)total, (unsigned long long)counter);
	printf("%llu shared slots, %llu overflow resets\n",
	       (unsigned long long)all_slots, (unsigned long long)resets);
}

TEST_F_TIMEOUT(lock, bakery_multislot, 1800)
{
	if (self->env.backend_only)
		SKIP(return, PROTOCOL_LOGIC_SKIP);
	run_multislot(_metadata, self->fd, &self->env, false);
	run_multislot(_metadata, self->fd, &self->env, true);
}

static __u32 node_slot(const struct lock_env *e, __u32 i)
{
	return e->base + NODE_REGION + 16 * e->self + i;
}

/* LOCK on this node's slot @i; 0 or errno, the handle in *handle. */
static int lock_own(int fd, const struct lock_env *e, __u32 proto,
		    __u32 mode, __u32 i, __u32 flags, __u32 k, __u32 lease_ms,
		    __u32 timeout_ms, __u32 *handle)
{
	struct rdlock_test_lock l = {
		.proto = proto, .mode = mode, .node = e->self,
		.slot = node_slot(e, i), .timeout_ms = timeout_ms,
		.lease_ms = lease_ms, .flags = flags, .k = k,
	};

	if (ioctl(fd, RDLOCK_TEST_IOC_LOCK, &l) < 0)
		return errno;
	if (handle)
		*handle = l.handle;
	return 0;
}

static int upgrade(int fd, __u32 handle, __u32 timeout_ms)
{
	struct rdlock_test_upgrade u = { .handle = handle,
					 .timeout_ms = timeout_ms };

	return ioctl(fd, RDLOCK_TEST_IOC_UPGRADE, &u) < 0 ? errno : 0;
}

static __u64 own_word(int fd, const struct lock_env *e, __u32 i)
{
	__u64 v = ~0ULL;

	rdl_xop(fd, RDLOCK_TEST_OP_READ, e->self, node_slot(e, i), 0, 0, &v);
	return v;
}

/* Slots 0-4 of this node's region: leases, k = 1 against k = 4. */
#define LEASE_MS	400

TEST_F_TIMEOUT(lock, multislot_leases, 120)
{
	const struct lock_env *e = &self->env;
	int fd2 = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	struct rdlock_test_proto_stats s0, s1;
	__u32 h = 0, h2 = 0;

	ASSERT_LE(0, fd2);
	/*
	 * A waiter behind k slots waits 2 x k leases of stillness: behind a
	 * k = 4 holder it is still waiting at 2 s (it would reset at 3.2 s),
	 * behind a k = 1 holder it has reset at 0.8 s.
	 */
	ASSERT_EQ(0, lock_own(self->fd, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 0, 0, 4,
			      LEASE_MS, 0, &h));
	EXPECT_EQ(ETIMEDOUT, lock_own(fd2, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 0, 0,
				      1, LEASE_MS, 2000, NULL));
	EXPECT_EQ(0, unlock(self->fd, h));
	ASSERT_EQ(0, lock_own(self->fd, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 1, 0, 1,
			      LEASE_MS, 0, &h));
	s0 = file_stats(fd2);
	EXPECT_EQ(EAGAIN, lock_own(fd2, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 1, 0, 1,
				   LEASE_MS, 2000, NULL));
	s1 = file_stats(fd2);
	EXPECT_EQ(s0.stall_resets + 1, s1.stall_resets);
	/* The reset skipped both tickets; the revoked holder changes nothing. */
	EXPECT_EQ(bakery_word_pack(2, 0, 2, 0), own_word(self->fd, e, 1));
	s0 = file_stats(self->fd);
	EXPECT_EQ(0, unlock(self->fd, h));
	s1 = file_stats(self->fd);
	EXPECT_EQ(s0.lease_expiries + 1, s1.lease_expiries);
	EXPECT_EQ(bakery_word_pack(2, 0, 2, 0), own_word(self->fd, e, 1));

	/*
	 * A holder of k slots owns the lock for k leases, but past them its
	 * release still counts as long as no reset revoked it: the word, not
	 * the holder's clock, decides. Both holders release after 1 s.
	 */
	ASSERT_EQ(0, lock_own(self->fd, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 2, 0, 4,
			      LEASE_MS, 0, &h));
	usleep(1000000);
	s0 = file_stats(self->fd);
	EXPECT_EQ(0, unlock(self->fd, h));
	s1 = file_stats(self->fd);
	EXPECT_EQ(s0.lease_expiries, s1.lease_expiries);
	EXPECT_EQ(bakery_word_pack(4, 0, 4, 0), own_word(self->fd, e, 2));
	EXPECT_EQ(0, lock_own(fd2, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 2, 0, 1,
			      LEASE_MS, 300, &h2));
	EXPECT_EQ(0, unlock(fd2, h2));

	ASSERT_EQ(0, lock_own(self->fd, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 3, 0, 1,
			      LEASE_MS, 0, &h));
	usleep(1000000);
	s0 = file_stats(self->fd);
	EXPECT_EQ(0, unlock(self->fd, h));
	s1 = file_stats(self->fd);
	EXPECT_EQ(s0.lease_expiries, s1.lease_expiries);
	/* One CAS from the word as the holder saw it at its grant. */
	EXPECT_EQ(s0.ops[RDLOCK_TEST_OP_CAS - 1] + 1, s1.ops[RDLOCK_TEST_OP_CAS - 1]);
	EXPECT_EQ(s0.remote_ops + 1, s1.remote_ops);
	EXPECT_EQ(bakery_word_pack(1, 0, 1, 0), own_word(self->fd, e, 3));
	EXPECT_EQ(0, lock_own(fd2, e, 0, RDLOCK_TEST_MODE_EXCLUSIVE, 3, 0, 1,
			      LEASE_MS, 300, &h2));
	EXPECT_EQ(0, unlock(fd2, h2));

	/*
	 * An upgrade stuck behind a reader past its lease gives up its own
	 * update ticket (EAGAIN); its release then does nothing.
	 */
	ASSERT_EQ(0, lock_own(fd2, e, 0, RDLOCK_TEST_MODE_SHARED, 4,
			      RDLOCK_TEST_LOCK_UPDATE_WORD, 1, LEASE_MS, 0,
			      &h2));
	ASSERT_EQ(0, lock_own(self->fd, e, 0, RDLOCK_TEST_MODE_UPDATE, 4,
			      RDLOCK_TEST_LOCK_UPDATE_WORD, 1, LEASE_MS, 0,
			      &h));
	s0 = file_stats(self->fd);
	EXPECT_EQ(EAGAIN, upgrade(self->fd, h, 5000));
	s1 = file_stats(self->fd);
	EXPECT_EQ(s0.stall_resets + 1, s1.stall_resets);
	EXPECT_EQ(s0.upgrade_waits + 1, s1.upgrade_waits);
	EXPECT_EQ(s0.upgrades, s1.upgrades);
	EXPECT_EQ(bakery_upd_word_pack(0, 1, 0, 0, 1, 1),
		  own_word(self->fd, e, 4));
	s0 = file_stats(self->fd);
	EXPECT_EQ(0, unlock(self->fd, h));
	s1 = file_stats(self->fd);
	EXPECT_EQ(s0.remote_ops, s1.remote_ops);
	EXPECT_EQ(0, unlock(fd2, h2));
	close(fd2);
}

/* Slots 5-12 of this node's region: errors of the update interfaces. */
TEST_F_TIMEOUT(lock, update_inputs, 120)
{
	const struct lock_env *e = &self->env;
	int fd = self->fd, fd2 = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	struct rdlock_test_upgrade u = { 0 };
	__u32 proto, h = 0, h2 = 0, upd = RDLOCK_TEST_LOCK_UPDATE_WORD;

	ASSERT_LE(0, fd2);
	for (proto = 0; proto < 2; proto++) {
		__u32 sl = 5 + 4 * proto;	/* 5-8 and 9-12 */

		/* Update mode needs the update word; unknown flags. */
		EXPECT_EQ(EINVAL, lock_own(fd, e, proto, RDLOCK_TEST_MODE_UPDATE,
					   sl, 0, 0, 0, 0, NULL));
		EXPECT_EQ(EINVAL, lock_own(fd, e, proto, RDLOCK_TEST_MODE_SHARED,
					   sl, RDLOCK_TEST_LOCK_STILL_CLOCK << 1,
					   0, 0, 0, NULL));
		EXPECT_EQ(EINVAL, lock_own(fd, e, proto, RDLOCK_TEST_MODE_NR, sl,
					   upd, 0, 0, 0, NULL));
		/* k: 0 means 1; at most BAKERY_K_MAX, BAKERY_UPD_K_MAX. */
		EXPECT_EQ(EINVAL, lock_own(fd, e, proto, RDLOCK_TEST_MODE_SHARED,
					   sl, 0, BAKERY_K_MAX + 1, 0, 0,
					   NULL));
		EXPECT_EQ(EINVAL, lock_own(fd, e, proto, RDLOCK_TEST_MODE_SHARED,
					   sl + 1, upd, BAKERY_UPD_K_MAX + 1,
					   0, 0, NULL));
		ASSERT_EQ(0, lock_own(fd, e, proto, RDLOCK_TEST_MODE_EXCLUSIVE, sl,
				      0, 0, 0, 0, &h));
		EXPECT_EQ(EINVAL, upgrade(fd, h, 0));	/* exclusive */
		EXPECT_EQ(0, unlock(fd, h));
		ASSERT_EQ(0, lock_own(fd, e, proto, RDLOCK_TEST_MODE_SHARED, sl, 0,
				      BAKERY_K_MAX, 0, 0, &h));
		EXPECT_EQ(EINVAL, upgrade(fd, h, 0));	/* shared */
		EXPECT_EQ(0, unlock(fd, h));
		EXPECT_EQ(proto ? 0 : bakery_word_pack(1, BAKERY_K_MAX, 1,
						       BAKERY_K_MAX),
			  own_word(fd, e, sl));

		/* Double upgrade; upgrade after unlock; bad handle, pad. */
		ASSERT_EQ(0, lock_own(fd, e, proto, RDLOCK_TEST_MODE_UPDATE,
				      sl + 1, upd, BAKERY_UPD_K_MAX, 0, 0, &h));
		EXPECT_EQ(0, upgrade(fd, h, 0));
		EXPECT_EQ(EINVAL, upgrade(fd, h, 0));
		EXPECT_EQ(0, unlock(fd, h));
		EXPECT_EQ(ENOENT, upgrade(fd, h, 0));
		EXPECT_EQ(proto ? 0 : bakery_upd_word_pack(0, BAKERY_UPD_K_MAX,
							   0, 0,
							   BAKERY_UPD_K_MAX, 0),
			  own_word(fd, e, sl + 1));
		ASSERT_EQ(0, lock_own(fd, e, proto, RDLOCK_TEST_MODE_UPDATE,
				      sl + 2, upd, 0, 0, 0, &h));
		u.handle = h;
		u.pad = 1;
		EXPECT_EQ(-1, ioctl(fd, RDLOCK_TEST_IOC_UPGRADE, &u));
		EXPECT_EQ(EINVAL, errno);
		u.pad = 0;
		u.remote_ops = 1;
		EXPECT_EQ(-1, ioctl(fd, RDLOCK_TEST_IOC_UPGRADE, &u));
		EXPECT_EQ(EINVAL, errno);
		u.remote_ops = 0;
		EXPECT_EQ(ENOENT, upgrade(fd, h + 1000, 0));
		EXPECT_EQ(0, unlock(fd, h));

		/*
		 * Behind a reader the upgrade times out and the caller still
		 * holds the update lock: a writer cannot get in, nor another
		 * update holder; once the reader leaves, the upgrade works.
		 */
		ASSERT_EQ(0, lock_own(fd2, e, proto, RDLOCK_TEST_MODE_SHARED,
				      sl + 3, upd, 0, 0, 0, &h2));
		ASSERT_EQ(0, lock_own(fd, e, proto, RDLOCK_TEST_MODE_UPDATE,
				      sl + 3, upd, 0, 0, 0, &h));
		EXPECT_EQ(ETIMEDOUT, upgrade(fd, h, 300));
		EXPECT_EQ(ETIMEDOUT, lock_own(fd2, e, proto,
					      RDLOCK_TEST_MODE_UPDATE, sl + 3, upd,
					      0, 0, 300, NULL));
		EXPECT_EQ(0, unlock(fd2, h2));
		EXPECT_EQ(0, upgrade(fd, h, 10000));
		EXPECT_EQ(ETIMEDOUT, lock_own(fd2, e, proto,
					      RDLOCK_TEST_MODE_SHARED, sl + 3, upd,
					      0, 0, 300, NULL));
		EXPECT_EQ(0, unlock(fd, h));
		/* The abandoned tickets finish in the background. */
		EXPECT_EQ(0, lock_own(fd2, e, proto, RDLOCK_TEST_MODE_EXCLUSIVE,
				      sl + 3, upd, 0, 0, 10000, &h2));
		EXPECT_EQ(0, unlock(fd2, h2));
	}
	close(fd2);
}

/* Slots 13-15 of this node's region: exact per-file counters. */
TEST_F(lock, protocol_counters)
{
	const struct lock_env *e = &self->env;
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	struct rdlock_test_proto_stats s;
	long long faa = protocol_counter("ops_faa");
	long long read = protocol_counter("ops_read");
	long long cas = protocol_counter("ops_cas");
	long long upgrades = protocol_counter("upgrades");
	__u32 h = 0;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, faa);
	ASSERT_LE(0, read);
	ASSERT_LE(0, cas);
	ASSERT_LE(0, upgrades);
	/* Uncontended, so exact: FAA to take, FAA to give back. */
	ASSERT_EQ(0, lock_own(fd, e, 0, RDLOCK_TEST_MODE_SHARED, 13, 0, 0, 0, 0,
			      &h));
	s = file_stats(fd);
	EXPECT_EQ(1, s.acquires);
	EXPECT_EQ(1, s.remote_ops);
	EXPECT_EQ(1, s.ops[RDLOCK_TEST_OP_FAA - 1]);
	EXPECT_EQ(0, unlock(fd, h));
	s = file_stats(fd);
	EXPECT_EQ(2, s.remote_ops);
	EXPECT_EQ(2, s.ops[RDLOCK_TEST_OP_FAA - 1]);
	EXPECT_EQ(0, s.waits);
	/* An uncontended upgrade is one READ. */
	ASSERT_EQ(0, close(fd));
	fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, lock_own(fd, e, 0, RDLOCK_TEST_MODE_UPDATE, 14,
			      RDLOCK_TEST_LOCK_UPDATE_WORD, 0, 0, 0, &h));
	EXPECT_EQ(0, upgrade(fd, h, 0));
	EXPECT_EQ(0, unlock(fd, h));
	/* The CAS spinlock: CAS to take, FAA to give back. */
	ASSERT_EQ(0, lock_own(fd, e, 1, RDLOCK_TEST_MODE_EXCLUSIVE, 15, 0, 0, 0, 0,
			      &h));
	EXPECT_EQ(0, unlock(fd, h));
	s = file_stats(fd);
	EXPECT_EQ(2, s.acquires);
	EXPECT_EQ(5, s.remote_ops);
	EXPECT_EQ(1, s.ops[RDLOCK_TEST_OP_READ - 1]);
	EXPECT_EQ(0, s.ops[RDLOCK_TEST_OP_WRITE - 1]);
	EXPECT_EQ(3, s.ops[RDLOCK_TEST_OP_FAA - 1]);
	EXPECT_EQ(1, s.ops[RDLOCK_TEST_OP_CAS - 1]);
	EXPECT_EQ(1, s.upgrades);
	EXPECT_EQ(0, s.upgrade_waits);
	close(fd);
	/* The global counters saw at least as much (debugfs). */
	EXPECT_LE(faa + 5, protocol_counter("ops_faa"));
	EXPECT_LE(read + 1, protocol_counter("ops_read"));
	EXPECT_LE(cas + 1, protocol_counter("ops_cas"));
	EXPECT_LE(upgrades + 1, protocol_counter("upgrades"));
}

/*
 * CQL order (DecLock section 4): with every node's threads queued on one
 * exclusive lock, grants follow enqueue order exactly, across nodes. A
 * waiter's place is the position its FETCH_AND_ADD returned (qhead +
 * qsize of the header, RDLOCK_TEST_IOC_LOCK's prev). Node 0 holds the
 * lock until every thread of the cluster is queued behind it (it READs the
 * header), then releases; each thread takes the lock RDLOCK_ORDER_ITERS
 * times (default 20), queueing again at once. Inside, a holder compares
 * its position with the last one granted (on node 0): the next position
 * is in order; a lower one was overtaken by that many later enqueuers.
 */
struct ord_worker {
	const struct lock_env *env;
	__u32 iters;
	__u64 grants, inversions, max_overtaken;
	/* What a grant checks: ord_granted(), hier_granted(). */
	int (*granted)(int fd, struct ord_worker *w,
		       const struct rdlock_test_lock *l);
	char err[160];
};

static __u32 ord_slot(const struct lock_env *e, __u32 what)
{
	return e->base + ORD_REGION + what;
}

static void ord_layout(struct cql_layout *l)
{
	cql_layout_init(l, ORD_QUEUE_BITS, CQL_VER_BITS_DEFAULT);
}

static struct rdlock_test_lock ord_lock(const struct lock_env *e)
{
	struct rdlock_test_lock l = {
		.proto = RDLOCK_TEST_PROTO_CQL,
		.mode = RDLOCK_TEST_MODE_EXCLUSIVE, .node = 0,
		.slot = ord_slot(e, ORD_LOCK), .timeout_ms = LOCK_TIMEOUT_MS,
		.queue_bits = ORD_QUEUE_BITS, .flags = e->cql_flags,
	};

	return l;
}

/* Granted at position @pos: check it against the last grant. */
static int ord_granted(int fd, struct ord_worker *w,
		       const struct rdlock_test_lock *l)
{
	const struct lock_env *e = w->env;
	struct cql_layout cl;
	__u64 last;
	__u32 behind, pos;
	int err;

	ord_layout(&cl);
	pos = cql_enqueue_pos(&cl, l->prev);
	w->grants++;
	err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, ord_slot(e, ORD_LAST), 0, 0,
		      &last);
	if (err)
		return err;
	/* How far the last grant is ahead of us (0: we are the next). */
	behind = cql_pos_add(&cl, (__u32)last, cql_pos_mask(&cl) - pos + 1);
	if (behind && behind <= cql_pos_mask(&cl) / 2) {
		w->inversions++;
		if (behind > w->max_overtaken)
			w->max_overtaken = behind;
		return 0;	/* the last grant stays the furthest */
	}
	if (cql_pos_add(&cl, (__u32)last, 1) != pos)
		w->inversions++;	/* a position skipped: granted later */
	return rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0, ord_slot(e, ORD_LAST), pos,
		       0, NULL);
}

static void *ord_main(void *arg)
{
	struct ord_worker *w = arg;
	const struct lock_env *e = w->env;
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC), err = 0;
	__u32 it;

	if (fd < 0) {
		snprintf(w->err, sizeof(w->err), "open: %s", strerror(errno));
		return NULL;
	}
	for (it = 0; it < w->iters && !err; it++) {
		struct rdlock_test_lock l = ord_lock(e);

		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK, &l) < 0) {
			snprintf(w->err, sizeof(w->err), "LOCK: %s",
				 strerror(errno));
			break;
		}
		err = w->granted(fd, w, &l);
		if (err)
			snprintf(w->err, sizeof(w->err), "grant: %s",
				 strerror(err));
		if (ioctl(fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle) < 0 &&
		    !w->err[0])
			snprintf(w->err, sizeof(w->err), "UNLOCK: %s",
				 strerror(errno));
	}
	/* Hierarchical: from now on a node may run alone (runs stop counting). */
	if (!err && rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0, ord_slot(e, ORD_DONE),
			    1, 0, NULL) && !w->err[0])
		snprintf(w->err, sizeof(w->err), "FAA done");
	close(fd);
	return NULL;
}

/*
 * The cluster's sums of an order test: this node adds its @grants and
 * @inversions and posts its largest @ovt (overtaking, or run); after the
 * barrier of generation @gen, *@total and *@v are the cluster's sums so
 * far, *@ovt the largest of every node's.
 */
static void ord_share(struct __test_metadata *_metadata, int fd,
		      const struct lock_env *e, __u64 grants, __u64 inversions,
		      __u64 *ovt, __u64 gen, __u64 *total, __u64 *v)
{
	char msg[160];
	__u32 i;

	ASSERT_GE(8, e->nr_nodes);
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0,
			     ord_slot(e, ORD_GRANTS), grants, 0, NULL));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0,
			     ord_slot(e, ORD_INVERSIONS), inversions, 0,
			     NULL));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0,
			     ord_slot(e, ORD_OVERTAKEN + e->self), *ovt, 0,
			     NULL));
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 ord_slot(e, ORD_BARRIER), gen, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
			     ord_slot(e, ORD_GRANTS), 0, 0, total));
	ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
			     ord_slot(e, ORD_INVERSIONS), 0, 0, v));
	for (i = 0; i < e->nr_nodes; i++) {
		__u64 o = 0;

		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
				     ord_slot(e, ORD_OVERTAKEN + i), 0, 0, &o));
		if (o > *ovt)
			*ovt = o;
	}
}

/* Node 0: take the order lock (handle *@h, file *@hfd) before the others. */
static void ord_hold(struct __test_metadata *_metadata,
		     const struct lock_env *e, int *hfd, __u32 *h, __u64 *prev)
{
	struct rdlock_test_lock l = ord_lock(e);

	*hfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, *hfd);
	ASSERT_EQ(0, ioctl(*hfd, RDLOCK_TEST_IOC_LOCK, &l));
	*h = l.handle;
	*prev = l.prev;
}

/* Every node: after barrier generation @gen, its threads take the lock. */
static void ord_spawn(struct __test_metadata *_metadata, int fd,
		      const struct lock_env *e, __u64 gen, __u32 iters,
		      int (*granted)(int fd, struct ord_worker *w,
				     const struct rdlock_test_lock *l),
		      struct ord_worker *w, pthread_t *tid)
{
	char msg[160];
	__u32 i;

	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 ord_slot(e, ORD_BARRIER), gen, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	memset(w, 0, sizeof(*w) * e->threads);
	for (i = 0; i < e->threads; i++) {
		w[i].env = e;
		w[i].iters = iters;
		w[i].granted = granted;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, ord_main, &w[i]));
	}
}

/* Node 0: *@hdr once the header counts @qsize clients (or after 120 s). */
static void ord_queued(struct __test_metadata *_metadata, int fd,
		       const struct lock_env *e, __u32 qsize, __u64 *hdr)
{
	double end = rdl_now() + 120;
	struct cql_layout cl;

	ord_layout(&cl);
	do {
		usleep(2000);
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
				     ord_slot(e, ORD_LOCK), 0, 0, hdr));
	} while (cql_hdr_qsize(&cl, *hdr) < qsize && rdl_now() < end);
}

TEST_F_TIMEOUT(lock, cql_order, 600)
{
	const struct lock_env *e = &self->env;
	__u32 everyone = e->nr_nodes * e->threads, i, iters, h = 0;
	struct ord_worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 inversions = 0, grants = 0, max_ovt = 0, total = 0, v = 0;
	__u64 hdr = 0;
	struct cql_layout cl;
	int hfd = -1;

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_ORDER_ITERS", 20, &iters));
	ord_layout(&cl);
	/* Every node's threads fit in its share of the queue. */
	ASSERT_GE(cql_capacity(&cl) / e->nr_nodes, e->threads + !e->self);
	if (e->self == 0) {
		ord_hold(_metadata, e, &hfd, &h, &hdr);
		ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_WRITE, 0,
				     ord_slot(e, ORD_LAST),
				     cql_enqueue_pos(&cl, hdr), 0, NULL));
	}
	ord_spawn(_metadata, self->fd, e, 1, iters, ord_granted, w, tid);
	if (e->self == 0) {
		/* The holder and every thread of the cluster queued. */
		ord_queued(_metadata, self->fd, e, everyone + 1, &hdr);
		EXPECT_EQ(everyone + 1, cql_hdr_qsize(&cl, hdr));
		EXPECT_EQ(everyone + 1, cql_hdr_wcnt(&cl, hdr));
		EXPECT_EQ(0, unlock(hfd, h));
		close(hfd);
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, w[i].err[0])
			TH_LOG("thread %u: %s", i, w[i].err);
		inversions += w[i].inversions;
		grants += w[i].grants;
		if (w[i].max_overtaken > max_ovt)
			max_ovt = w[i].max_overtaken;
	}
	ord_share(_metadata, self->fd, e, grants, inversions, &max_ovt, 2,
		  &total, &v);
	EXPECT_EQ((__u64)everyone * iters, total);
	EXPECT_EQ(0, v)
		TH_LOG("%llu grants out of enqueue order in the cluster",
		       (unsigned long long)v);
	EXPECT_EQ(0, inversions);
	printf("# node %u: %llu grants here; cluster: %llu grants to %u threads x %u, ",
	       e->self, (unsigned long long)grants,
	       (unsigned long long)total, everyone, iters);
	printf("%llu out of enqueue order, largest overtaking %llu\n",
	       (unsigned long long)v, (unsigned long long)max_ovt);
}

/*
 * Hierarchical order, task-fair and then phase-fair (the same for writers
 * only): the holder on node 0, then every thread of the cluster,
 * exclusive, RDLOCK_ORDER_ITERS times. A node's entry is
 * handed to the node's next waiter only when that one arrived before the
 * next node's entry (FAA order), at most HIER_RUN_MAX - 1 times in a row
 * (the module's bound, RDLOCK_CQL_LOCAL_MAX in proto_cql_hier.c): so no node
 * may hold the lock for more grants in a row than that while another
 * node's entry waits. The holder records each grant's node and the run it extends; the
 * largest run while every thread of the cluster is still at work (none
 * counted in ORD_DONE) is printed and checked, and every grant counted.
 */
#define HIER_RUN_MAX		17

/*
 * Hierarchical: extend the run of grants of this node, or start one. The
 * bound holds while other nodes wait: with no other node's entry queued
 * (the header counts ours alone), a grant starts a new run. A node whose
 * threads are all between two acquisitions has no entry for a moment,
 * and the run of another node may then go on legitimately.
 */
static int hier_granted(int fd, struct ord_worker *w,
			const struct rdlock_test_lock *l)
{
	const struct lock_env *e = w->env;
	__u64 last = 0, run, done = 0, hdr = 0;
	struct cql_layout cl;
	int err;

	w->grants++;
	ord_layout(&cl);
	/* Exclusive: a plain READ and WRITE are the holder's. */
	err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, ord_slot(e, ORD_RUN), 0, 0,
		      &last);
	if (!err)
		err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, ord_slot(e, ORD_LOCK),
			      0, 0, &hdr);
	run = last >> 32 == e->self + 1 && cql_hdr_qsize(&cl, hdr) > 1 ?
	      (last & 0xffffffffU) + 1 : 1;
	if (!err)
		err = rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0, ord_slot(e, ORD_RUN),
			      (__u64)(e->self + 1) << 32 | run, 0, NULL);
	if (!err)
		err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, ord_slot(e, ORD_DONE),
			      0, 0, &done);
	/* Runs of exclusive grants (every one here), while all work. */
	if (l->mode == RDLOCK_TEST_MODE_EXCLUSIVE && !done &&
	    run > w->max_overtaken)
		w->max_overtaken = run;
	return err;
}

/*
 * One hierarchical order run, @e->cql_flags its policy; barrier
 * generations @gen and @gen + 1; @runs: order runs so far, this one
 * included (their grants add up in ORD_GRANTS).
 */
static void hier_order(struct __test_metadata *_metadata, int fd,
		       const struct lock_env *e, __u64 gen, __u32 runs)
{
	__u32 everyone = e->nr_nodes * e->threads, i, iters, h = 0;
	struct ord_worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 grants = 0, run = 0, total = 0, hdr = 0, v = 0;
	struct cql_layout cl;
	int hfd = -1;

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_ORDER_ITERS", 20, &iters));
	ord_layout(&cl);
	if (e->self == 0) {
		ord_hold(_metadata, e, &hfd, &h, &hdr);
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0,
				     ord_slot(e, ORD_RUN), 0, 0, NULL));
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0,
				     ord_slot(e, ORD_DONE), 0, 0, NULL));
	}
	ord_spawn(_metadata, fd, e, gen, iters, hier_granted, w, tid);
	if (e->self == 0) {
		/* One entry per node: the holder's, and each other node's. */
		ord_queued(_metadata, fd, e, e->nr_nodes, &hdr);
		EXPECT_EQ(e->nr_nodes, cql_hdr_qsize(&cl, hdr));
		usleep(20000);	/* the other threads wait on their nodes */
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
				     ord_slot(e, ORD_LOCK), 0, 0, &hdr));
		EXPECT_EQ(e->nr_nodes, cql_hdr_qsize(&cl, hdr));
		EXPECT_EQ(0, unlock(hfd, h));
		close(hfd);
	}
	for (i = 0; i < e->threads; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, w[i].err[0])
			TH_LOG("thread %u: %s", i, w[i].err);
		grants += w[i].grants;
		if (w[i].max_overtaken > run)
			run = w[i].max_overtaken;
	}
	ord_share(_metadata, fd, e, grants, 0, &run, gen + 1, &total, &v);
	/* The order runs before counted their grants here first. */
	EXPECT_EQ((__u64)everyone * iters * runs, total);
	EXPECT_GE(HIER_RUN_MAX, run);
	printf("# node %u, %s: %llu grants here; cluster: %llu in %u order runs, ",
	       e->self, e->cql_flags & RDLOCK_TEST_LOCK_CQL_PHASE_FAIR ?
	       "phase-fair" : "task-fair", (unsigned long long)grants,
	       (unsigned long long)total, runs);
	printf("largest run of one node %llu (at most %u)\n",
	       (unsigned long long)run, HIER_RUN_MAX);
}

TEST_F_TIMEOUT(lock, cql_hier_order, 600)
{
	struct lock_env e = self->env;

	if (e.backend_only)
		SKIP(return, PROTOCOL_LOGIC_SKIP);
	e.cql_flags = RDLOCK_TEST_LOCK_CQL_HIER;
	hier_order(_metadata, self->fd, &e, 3, 2);
	e.cql_flags |= RDLOCK_TEST_LOCK_CQL_PHASE_FAIR;
	hier_order(_metadata, self->fd, &e, 5, 3);
}

/*
 * CQL: a stream of readers cannot starve a writer. Every node but the
 * last runs its threads as readers that keep taking the lock shared
 * (holding it STR_HOLD_US) until told to stop; the last node asks for it
 * exclusive once every reader runs, and must be granted while they all
 * still do, within STR_WRITER_MS. No reader may see the writer inside.
 */
#define STR_HOLD_US		2000
#define STR_WRITER_MS		30000
#define STR_DEADLINE_S		90

struct str_reader {
	const struct lock_env *env;
	__u64 iterations, violations;
	char err[160];
};

static __u32 str_slot(const struct lock_env *e, __u32 what)
{
	return e->base + STR_REGION + what;
}

static struct rdlock_test_lock str_lock(const struct lock_env *e,
					__u32 mode)
{
	struct rdlock_test_lock l = {
		.proto = RDLOCK_TEST_PROTO_CQL, .mode = mode, .node = 0,
		.slot = str_slot(e, STR_LOCK), .timeout_ms = STR_WRITER_MS,
		.queue_bits = CQL_QUEUE_BITS,
	};

	return l;
}

static void *str_main(void *arg)
{
	struct str_reader *r = arg;
	const struct lock_env *e = r->env;
	int fd = open(TEST_DEV, O_RDWR | O_CLOEXEC), err;
	double deadline = rdl_now() + STR_DEADLINE_S;
	__u64 v;

	if (fd < 0) {
		snprintf(r->err, sizeof(r->err), "open: %s", strerror(errno));
		return NULL;
	}
	err = rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0, str_slot(e, STR_READERS), 1,
		      0, NULL);
	while (!err) {
		struct rdlock_test_lock l = str_lock(e, RDLOCK_TEST_MODE_SHARED);

		err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, str_slot(e, STR_STOP),
			      0, 0, &v);
		if (err || v)
			break;
		if (rdl_now() > deadline) {
			err = rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0,
				      str_slot(e, STR_GAVE_UP), 1, 0, NULL);
			break;
		}
		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK, &l) < 0) {
			err = errno;
			break;
		}
		r->iterations++;
		err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
			      str_slot(e, STR_WRITER_IN), 0, 0, &v);
		if (!err && v)
			r->violations++;
		usleep(STR_HOLD_US);
		v = unlock(fd, l.handle);
		if (v && !err)
			err = (int)v;
	}
	if (err)
		snprintf(r->err, sizeof(r->err), "reader: %s", strerror(err));
	rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0, str_slot(e, STR_READERS),
		(__u64)-1, 0, NULL);
	close(fd);
	return NULL;
}

static void str_writer(struct __test_metadata *_metadata, int fd,
		       const struct lock_env *e)
{
	struct rdlock_test_lock l = str_lock(e, RDLOCK_TEST_MODE_EXCLUSIVE);
	__u32 readers = (e->nr_nodes - 1) * e->threads;
	__u64 v = 0, gave_up = 1, running = 0;
	double end = rdl_now() + 120, t;
	int wfd = open(TEST_DEV, O_RDWR | O_CLOEXEC), err = 0;

	ASSERT_LE(0, wfd);
	while (rdl_now() < end) {
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
				     str_slot(e, STR_READERS), 0, 0, &v));
		if (v >= readers)
			break;
		usleep(10000);
	}
	EXPECT_EQ(readers, v);
	usleep(300000);		/* a while of overlapping readers */
	t = rdl_now();
	if (ioctl(wfd, RDLOCK_TEST_IOC_LOCK, &l) < 0)
		err = errno;
	t = rdl_now() - t;
	EXPECT_EQ(0, err)
		TH_LOG("writer among readers: %s after %.1f s", strerror(err),
		       t);
	if (!err) {
		EXPECT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0,
				     str_slot(e, STR_WRITER_IN), 1, 0, NULL));
		EXPECT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
				     str_slot(e, STR_GAVE_UP), 0, 0, &gave_up));
		EXPECT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_READ, 0,
				     str_slot(e, STR_READERS), 0, 0, &running));
		EXPECT_EQ(0, gave_up);
		EXPECT_EQ(readers, running)
			TH_LOG("only %llu of %u readers still running",
			       (unsigned long long)running, readers);
		usleep(STR_HOLD_US);
		EXPECT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0,
				     str_slot(e, STR_WRITER_IN), 0, 0, NULL));
		EXPECT_EQ(0, unlock(wfd, l.handle));
		printf("# writer granted after %.3f s among %u readers\n", t,
		       readers);
	}
	EXPECT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_WRITE, 0, str_slot(e, STR_STOP),
			     1, 0, NULL));
	close(wfd);
}

TEST_F_TIMEOUT(lock, cql_reader_stream, 600)
{
	const struct lock_env *e = &self->env;
	struct str_reader r[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 iters = 0, violations = 0;
	char msg[160];
	__u32 i;

	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 str_slot(e, STR_BARRIER), 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	if (e->self == e->nr_nodes - 1) {
		str_writer(_metadata, self->fd, e);
	} else {
		memset(r, 0, sizeof(r));
		for (i = 0; i < e->threads; i++) {
			r[i].env = e;
			ASSERT_EQ(0, pthread_create(&tid[i], NULL, str_main,
						    &r[i]));
		}
		for (i = 0; i < e->threads; i++) {
			pthread_join(tid[i], NULL);
			EXPECT_EQ(0, r[i].err[0])
				TH_LOG("reader %u: %s", i, r[i].err);
			iters += r[i].iterations;
			violations += r[i].violations;
		}
		EXPECT_EQ(0, violations);
		printf("# node %u: %llu shared acquisitions\n", e->self,
		       (unsigned long long)iters);
	}
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 str_slot(e, STR_BARRIER), 2, msg, sizeof(msg)))
		TH_LOG("%s", msg);
}

TEST_HARNESS_MAIN
