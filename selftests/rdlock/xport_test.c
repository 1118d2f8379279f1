// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-node transport test through rdlock_test.ko, run at the same time
 * on every node of an up and ready cluster whose modules were just loaded
 * (lock tables start zeroed).
 *
 * Environment: RDLOCK_NODE_ID and RDLOCK_NR_NODES (nodes are 0..N-1),
 * RDLOCK_EXPECT_BACKEND (verbs|twosided, optional), RDLOCK_K (FAAs per
 * target, default 1000), RDLOCK_THREADS (default 2), RDLOCK_BARRIER_TIMEOUT
 * (seconds, default 120).
 *
 * Slots, relative to F = INFO.first_free_slot, the same on every node:
 *   F + 0		counter of the exact-count test (every node)
 *   F + 1		barrier of the exact-count test (node 0 only)
 *   F + 2		final barrier, "xport_test --final-barrier" (node 0 only)
 *   F + 3		final barrier's acknowledgements (node 0 only)
 *   F + 4		counter of the lost-replies test (every node)
 *   F + 5		barrier of the lost-replies test (node 0 only)
 *   F + 6		barriers of the stale-key test (node 0 only)
 *   F + 7		unused
 *   F + 8 + i		round trips of node i (on every node)
 * Each barrier slot is used for one generation only, so no test depends
 * on another having run.
 *
 * "xport_test --final-barrier" only waits until every node has reached the
 * same point, so that no node takes the cluster down while others test.
 *
 * "xport_test --churn N" takes this node's cluster up and down N times,
 * down 0, 250, 500, ... us after up (wrapping at 50 ms), so that teardown
 * meets connection set-up at every stage; it leaves the cluster down. Its
 * failures show as errors here and as leaks or splats in the kernel log.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"
#include "rdltest.h"

#include <kselftest_harness.h>

#define SLOT_COUNTER		0
#define SLOT_BARRIER		1
#define SLOT_FINAL_BARRIER	RDL_SLOT_FINAL_BARRIER
#define SLOT_FINAL_ACK		RDL_SLOT_FINAL_ACK
#define SLOT_LOST_COUNTER	4
#define SLOT_LOST_BARRIER	5
#define SLOT_STALE_BARRIER	6
#define SLOT_ROUND_TRIP		8
#define SLOT_RANGE		(SLOT_ROUND_TRIP + RDLOCK_MAX_NODES)
#define SLOTS_NEEDED		(SLOT_RANGE + 1 + RDLOCK_TEST_RANGE_MAX)
static_assert(SLOTS_NEEDED <= RDL_FIRST_TEST_SLOT, "xport_test's slots");
#define MAX_THREADS		64

struct env {
	__u32 self, nr_nodes, k, threads, barrier_timeout;
	const char *backend;
};

/* Reads the environment; a message and -1 if it is unusable. */
static int read_env(struct env *e)
{
	if (rdl_env_u32("RDLOCK_NODE_ID", -1, &e->self) ||
	    rdl_env_u32("RDLOCK_NR_NODES", -1, &e->nr_nodes) ||
	    rdl_env_u32("RDLOCK_K", 1000, &e->k) ||
	    rdl_env_u32("RDLOCK_THREADS", 2, &e->threads) ||
	    rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 120, &e->barrier_timeout)) {
		fprintf(stderr, "# %s; %s\n",
			"set RDLOCK_NODE_ID and RDLOCK_NR_NODES (numbers)",
			"RDLOCK_K, _THREADS, _BARRIER_TIMEOUT must be numbers");
		return -1;
	}
	if (!e->nr_nodes || e->nr_nodes > RDLOCK_MAX_NODES ||
	    e->self >= e->nr_nodes || !e->k || !e->threads ||
	    e->threads > MAX_THREADS) {
		fprintf(stderr, "# bad environment: node %u of %u, K %u, %u threads\n",
			e->self, e->nr_nodes, e->k, e->threads);
		return -1;
	}
	e->backend = getenv("RDLOCK_EXPECT_BACKEND");
	return 0;
}

FIXTURE(xport) {
	int fd;
	struct env env;
	struct rdlock_test_info info;
	__u32 base;		/* INFO.first_free_slot */
};

FIXTURE_SETUP(xport)
{
	self->fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) {
		TH_LOG("cannot open %s: %s", TEST_DEV, strerror(errno));
	}
	ASSERT_EQ(0, read_env(&self->env));
	ASSERT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_INFO, &self->info)) {
		TH_LOG("INFO: %s", strerror(errno));
	}
	self->base = self->info.first_free_slot;
	ASSERT_LE(self->base + SLOTS_NEEDED, self->info.table_slots) {
		TH_LOG("table of %u slots, first free %u: need %u free",
		       self->info.table_slots, self->base, SLOTS_NEEDED);
	}
}

FIXTURE_TEARDOWN(xport)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(xport, info)
{
	const char *b = self->env.backend;

	EXPECT_EQ(self->env.self, self->info.node_id);
	EXPECT_EQ(1, self->info.ready) {
		TH_LOG("the cluster is not ready");
	}
	EXPECT_EQ(0, self->info.pad);
	if (b && *b) {
		__u32 want = !strcmp(b, "verbs") ? RDLOCK_BACKEND_VERBS :
			     !strcmp(b, "twosided") ? RDLOCK_BACKEND_TWOSIDED :
			     0xffffffff;

		ASSERT_NE(0xffffffff, want) {
			TH_LOG("RDLOCK_EXPECT_BACKEND=%s: verbs or twosided", b);
		}
		EXPECT_EQ(want, self->info.backend) {
			TH_LOG("backend %u, expected %s", self->info.backend, b);
		}
	}
}

struct counter_ctx {
	int fd;
	const struct env *env;
	__u32 slot, index;
	__u64 *bitmaps;		/* per target: N * K bits, values seen */
	__u64 words;		/* words per bitmap */
	char err[160];
};

/*
 * FAA 1 on @node's @slot. ENOTCONN says the FAA was not sent (the link to
 * @node is being made again): send it once the link is back, within 30 s.
 */
static int faa_sent(int fd, __u32 node, __u32 slot, __u64 *v)
{
	double end = rdl_now() + 30;
	int err;

	while ((err = rdl_xop(fd, RDLOCK_TEST_OP_FAA, node, slot, 1, 0, v)) ==
	       ENOTCONN && rdl_now() < end)
		usleep(20000);
	return err;
}

/*
 * Thread @index does FAA numbers index, index + T, ... below K, each on
 * every target in turn. Per target, the values one thread gets must rise
 * and every value any thread here gets must be new and below N * K.
 */
static void *counter_thread(void *arg)
{
	struct counter_ctx *c = arg;
	const struct env *e = c->env;
	__u64 limit = (__u64)e->nr_nodes * e->k, last[RDLOCK_MAX_NODES];
	__u32 i, t;

	memset(last, 0xff, sizeof(last));
	for (i = c->index; i < e->k; i += e->threads) {
		for (t = 0; t < e->nr_nodes; t++) {
			__u64 v = 0, bit, *word;
			int err = faa_sent(c->fd, t, c->slot, &v);

			if (err) {
				snprintf(c->err, sizeof(c->err),
					 "FAA #%u on node %u: %s", i, t,
					 strerror(err));
				return NULL;
			}
			if (v >= limit) {
				snprintf(c->err, sizeof(c->err),
					 "FAA #%u on node %u returned %llu >= N*K %llu",
					 i, t, (unsigned long long)v,
					 (unsigned long long)limit);
				return NULL;
			}
			if (last[t] != ~0ULL && v <= last[t]) {
				snprintf(c->err, sizeof(c->err),
					 "FAA on node %u returned %llu after %llu",
					 t, (unsigned long long)v,
					 (unsigned long long)last[t]);
				return NULL;
			}
			last[t] = v;
			word = &c->bitmaps[t * c->words + v / 64];
			bit = 1ULL << (v % 64);
			if (__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit) {
				snprintf(c->err, sizeof(c->err),
					 "FAA on node %u returned %llu twice",
					 t, (unsigned long long)v);
				return NULL;
			}
		}
	}
	return NULL;
}

/*
 * Every node's threads FAA @slot on every node (K of @e each); then, after
 * the barrier on node 0's @barrier, every counter must be exactly N x K.
 */
static void exact_count(struct __test_metadata *_metadata, int fd,
			const struct env *e, __u32 slot, __u32 barrier)
{
	struct counter_ctx ctx[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 words = ((__u64)e->nr_nodes * e->k + 63) / 64, *bitmaps;
	__u32 i, t;
	char msg[160];

	bitmaps = calloc(words * e->nr_nodes, sizeof(*bitmaps));
	ASSERT_NE(NULL, bitmaps);
	for (i = 0; i < e->threads; i++) {
		ctx[i] = (struct counter_ctx){
			.fd = fd, .env = e, .slot = slot, .index = i,
			.bitmaps = bitmaps, .words = words,
		};
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, counter_thread,
					    &ctx[i]));
	}
	for (i = 0; i < e->threads; i++) {
		ASSERT_EQ(0, pthread_join(tid[i], NULL));
		EXPECT_EQ(0, ctx[i].err[0]) {
			TH_LOG("thread %u: %s", i, ctx[i].err);
		}
	}

	/* Even after a failure: the other nodes wait for us here. */
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout, barrier,
				 1, msg, sizeof(msg))) {
		TH_LOG("%s", msg);
	}
	for (t = 0; t < e->nr_nodes; t++) {
		__u64 v = 0;
		int err = rdl_xop(fd, RDLOCK_TEST_OP_READ, t, slot, 0, 0, &v);

		EXPECT_EQ(0, err) {
			TH_LOG("READ counter on node %u: %s", t, strerror(err));
		}
		EXPECT_EQ((__u64)e->nr_nodes * e->k, v) {
			TH_LOG("counter on node %u: %llu FAAs arrived, %u nodes x %u sent",
			       t, (unsigned long long)v, e->nr_nodes, e->k);
		}
	}
	free(bitmaps);
}

TEST_F_TIMEOUT(xport, exact_count, 900)
{
	exact_count(_metadata, self->fd, &self->env, self->base + SLOT_COUNTER,
		    self->base + SLOT_BARRIER);
}

/*
 * A link that fails after the home applied a request but before its answer
 * arrived (a blip: both tables stay) must lose nothing and apply nothing
 * twice: with the two-sided backend every node's home drops the answers of
 * LOST_REPLIES applied requests, failing the connection each time, while
 * the exact-count test runs. Every FAA must succeed with a value of its
 * own, the counters must be exact, and each lost answer must have been
 * replayed from the home's record.
 */
#define LOST_REPLIES	4
#define LOST_REPLIES_K	300

TEST_F_TIMEOUT(xport, exact_count_lost_replies, 900)
{
	struct env e = self->env;
	long long lost, replayed, lost0, replayed0;

	if (self->info.backend != RDLOCK_BACKEND_TWOSIDED)
		SKIP(return, "answers are recorded by the two-sided backend only");
	e.k = e.k < LOST_REPLIES_K ? e.k : LOST_REPLIES_K;
	/* Each node's peers send it (N - 1) x K FAAs: enough to lose some. */
	ASSERT_LE(2, e.nr_nodes);
	lost0 = rdl_debugfs_counter("cluster", "lost_replies_injected");
	replayed0 = rdl_debugfs_counter("cluster", "replayed_requests");
	ASSERT_LE(0, lost0);
	ASSERT_LE(0, replayed0);
	ASSERT_EQ(0, rdl_debugfs_write("inject_lost_replies", LOST_REPLIES));
	exact_count(_metadata, self->fd, &e, self->base + SLOT_LOST_COUNTER,
		    self->base + SLOT_LOST_BARRIER);
	/* Whatever happened above: leave no injection for later tests. */
	ASSERT_EQ(0, rdl_debugfs_write("inject_lost_replies", 0));
	lost = rdl_debugfs_counter("cluster", "lost_replies_injected") - lost0;
	replayed = rdl_debugfs_counter("cluster", "replayed_requests") -
		   replayed0;
	ksft_print_msg("%lld answers lost here, %lld copies answered from the record\n",
		       lost, replayed);
	EXPECT_EQ(LOST_REPLIES, lost);
	EXPECT_LE(lost, replayed) {
		TH_LOG("%lld answers lost here, %lld copies answered from the record",
		       lost, replayed);
	}
}

/*
 * A key to a peer's table works on the connection it came with, and on no
 * other: each node keeps the key its connection to the next node has
 * (inject_stale_rkey), has that connection fail (a FAA of 0 whose
 * completion is lost with it) and READs there once the link is made again,
 * the first READ with the kept key. The next node's table must refuse it:
 * that READ fails with EIO, counted once in remote_access_errors, and a
 * READ after it succeeds. With one registration of the table for every
 * peer (wire version 7 and before) the kept key still worked: a node cut
 * off, or a zombie of one, could still write. Every node at once (but
 * node 1 of 2, whose link is node 0's), between two barriers, so that
 * nobody meets the others' links blinking.
 */
#define STALE_WAIT_S	60

/*
 * @op of @v on @node's @slot, made again while the link is being remade:
 * after ENOTCONN (not sent), and @reset, after ECONNRESET.
 */
static int xop_linked(int fd, __u32 op, __u32 node, __u32 slot, __u64 v,
		      bool reset, __u64 *out)
{
	double end = rdl_now() + STALE_WAIT_S;
	int err;

	while (((err = rdl_xop(fd, op, node, slot, v, 0, out)) == ENOTCONN ||
		(reset && err == ECONNRESET)) && rdl_now() < end)
		usleep(20000);
	return err;
}

TEST_F_TIMEOUT(xport, stale_rkey, 300)
{
	const struct env *e = &self->env;
	__u32 target = (e->self + 1) % e->nr_nodes;
	__u32 slot = self->base + SLOT_COUNTER;
	__u32 barrier = self->base + SLOT_STALE_BARRIER;
	long long refused0, stale0, refused, stale;
	char msg[160];
	__u64 v = 0;
	int err;

	if (self->info.backend != RDLOCK_BACKEND_VERBS)
		SKIP(return, "keys are the verbs backend's");
	ASSERT_LE(2, e->nr_nodes);
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 barrier, 1, msg, sizeof(msg))) {
		TH_LOG("%s", msg);
	}
	refused0 = rdl_debugfs_counter("cluster", "remote_access_errors");
	stale0 = rdl_debugfs_counter("cluster", "stale_rkeys_injected");
	ASSERT_LE(0, refused0);
	ASSERT_LE(0, stale0);
	if (e->nr_nodes == 2 && e->self == 1)
		goto out;
	/* A READ first: the connection to the next node is made. */
	ASSERT_EQ(0, xop_linked(self->fd, RDLOCK_TEST_OP_READ, target, slot, 0,
				true, &v));
	ASSERT_EQ(0, rdl_debugfs_write("inject_stale_rkey", target));
	ASSERT_EQ(0, rdl_debugfs_write("inject_lost_completions", 1));
	err = xop_linked(self->fd, RDLOCK_TEST_OP_FAA, target, slot, 0, false,
			 &v);
	ASSERT_EQ(0, rdl_debugfs_write("inject_lost_completions", 0));
	EXPECT_EQ(ECONNRESET, err) {
		TH_LOG("FAA whose completion is lost: %s", strerror(err));
	}
	err = xop_linked(self->fd, RDLOCK_TEST_OP_READ, target, slot, 0, true,
			 &v);
	EXPECT_EQ(EIO, err) {
		TH_LOG("READ with the old connection's key: %s", strerror(err));
	}
	err = xop_linked(self->fd, RDLOCK_TEST_OP_READ, target, slot, 0, true,
			 &v);
	EXPECT_EQ(0, err) {
		TH_LOG("READ after it: %s", strerror(err));
	}
	/* Whatever happened above: leave no injection for later tests. */
	ASSERT_EQ(0, rdl_debugfs_write("inject_stale_rkey", RDLOCK_MAX_NODES));
	refused = rdl_debugfs_counter("cluster", "remote_access_errors") -
		  refused0;
	stale = rdl_debugfs_counter("cluster", "stale_rkeys_injected") - stale0;
	EXPECT_EQ(1, stale);
	EXPECT_EQ(1, refused);
out:
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 barrier, 2, msg, sizeof(msg))) {
		TH_LOG("%s", msg);
	}
}

/* Distinct per (tag, this node, target), with every byte different. */
static __u64 val(__u32 tag, __u32 self, __u32 target)
{
	return 0x0102030405060708ULL ^ ((__u64)tag << 56) ^
	       ((__u64)self << 40) ^ ((__u64)target << 24) ^ 0xa000;
}

#define RT_OK(call, what, t) do {					\
	int __err = (call);						\
	EXPECT_EQ(0, __err) {						\
		TH_LOG("%s on node %u: %s", what, t, strerror(__err));	\
	}								\
} while (0)

#define RT_VAL(expected, seen, what, t) do {				\
	__u64 __exp = (expected), __seen = (seen);			\
	EXPECT_EQ(__exp, __seen) {					\
		TH_LOG("%s on node %u: 0x%016llx, expected 0x%016llx",	\
		       what, t, (unsigned long long)__seen,		\
		       (unsigned long long)__exp);			\
	}								\
} while (0)

TEST_F_TIMEOUT(xport, round_trips, 300)
{
	const struct env *e = &self->env;
	__u32 slot = self->base + SLOT_ROUND_TRIP + e->self, t;
	int fd = self->fd;

	for (t = 0; t < e->nr_nodes; t++) {
		__u64 v1 = val(1, e->self, t), v2 = val(2, e->self, t), v = 0;

		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_WRITE, t, slot, v1, 0, NULL),
		      "WRITE", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, slot, 0, 0, &v), "READ", t);
		RT_VAL(v1, v, "READ after WRITE", t);

		/* Wrong expected value: returns the current one, no swap. */
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_CAS, t, slot, v1 ^ 1, v2, &v),
		      "CAS (wrong expected)", t);
		RT_VAL(v1, v, "CAS (wrong expected) result", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, slot, 0, 0, &v), "READ", t);
		RT_VAL(v1, v, "READ after failed CAS", t);

		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_CAS, t, slot, v1, v2, &v),
		      "CAS (right expected)", t);
		RT_VAL(v1, v, "CAS (right expected) result", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, slot, 0, 0, &v), "READ", t);
		RT_VAL(v2, v, "READ after CAS", t);

		/* Adding 2^64 - 1 is subtracting 1, modulo 2^64. */
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_FAA, t, slot, ~0ULL, 0, &v),
		      "FAA 2^64-1", t);
		RT_VAL(v2, v, "FAA 2^64-1 result", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, slot, 0, 0, &v), "READ", t);
		RT_VAL(v2 - 1, v, "READ after FAA 2^64-1", t);

		/* And through zero: carries out of bit 63 are dropped. */
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_WRITE, t, slot, 0, 0, NULL),
		      "WRITE 0", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_FAA, t, slot, ~0ULL, 0, &v),
		      "FAA 2^64-1 on 0", t);
		RT_VAL(0, v, "FAA 2^64-1 on 0 result", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_FAA, t, slot, 2, 0, &v),
		      "FAA 2 on 2^64-1", t);
		RT_VAL(~0ULL, v, "FAA 2 on 2^64-1 result", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, slot, 0, 0, &v), "READ", t);
		RT_VAL(1, v, "READ after wrapping", t);

		/* Leave a value only this (node, target) pair writes. */
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_WRITE, t, slot, v1, 0, NULL),
		      "WRITE", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, slot, 0, 0, &v), "READ", t);
		RT_VAL(v1, v, "final READ", t);
	}
}

static int range_op(int fd, struct rdlock_test_range *r)
{
	return ioctl(fd, RDLOCK_TEST_IOC_RANGE, r) < 0 ? errno : 0;
}

/*
 * A ranged READ of k slots written before returns exactly them; a
 * FAA_READ (CAS_READ) returns the word before its FAA (CAS) and a range,
 * which starts at the word, as it is after the atomic: the READ posted
 * with it is executed after it. Node 0 alone, so that nothing else changes the slots, to
 * every node, itself through its loopback path.
 */
TEST_F_TIMEOUT(xport, ranges, 120)
{
	const struct env *e = &self->env;
	__u32 w = self->base + SLOT_RANGE, t, i, k;
	__u64 v[1 + RDLOCK_TEST_RANGE_MAX], x = 0;
	int fd = self->fd;

	if (e->self != 0)
		SKIP(return, "node 0 reads the ranges");
	for (t = 0; t < e->nr_nodes; t++) {
		struct rdlock_test_range r;

		for (i = 0; i <= RDLOCK_TEST_RANGE_MAX; i++) {
			v[i] = val(3 + i, e->self, t);
			RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_WRITE, t, w + i, v[i],
				      0, NULL), "WRITE", t);
		}
		for (k = 1; k <= RDLOCK_TEST_RANGE_MAX; k++) {
			memset(&r, 0, sizeof(r));
			r.op = RDLOCK_TEST_OP_READ_RANGE;
			r.node = t;
			r.slot = w + 1;
			r.count = k;
			RT_OK(range_op(fd, &r), "READ_RANGE", t);
			EXPECT_EQ(k, r.nread);
			for (i = 0; i < k; i++)
				RT_VAL(v[1 + i], r.vals[i], "READ_RANGE slot", t);
			for (; i < RDLOCK_TEST_RANGE_MAX; i++)
				RT_VAL(0, r.vals[i], "past READ_RANGE", t);
		}

		memset(&r, 0, sizeof(r));
		r.op = RDLOCK_TEST_OP_FAA_READ;
		r.node = t;
		r.slot = w;
		r.rslot = w;
		r.count = RDLOCK_TEST_RANGE_MAX - 1;
		r.arg0 = 5;
		RT_OK(range_op(fd, &r), "FAA_READ", t);
		EXPECT_EQ(RDLOCK_TEST_RANGE_MAX - 1, r.nread);
		RT_VAL(v[0], r.value, "FAA_READ's FAA", t);
		RT_VAL(v[0] + 5, r.vals[0], "FAA_READ's word after the FAA", t);
		for (i = 1; i < RDLOCK_TEST_RANGE_MAX - 1; i++)
			RT_VAL(v[i], r.vals[i], "FAA_READ slot", t);
		RT_VAL(0, r.vals[i], "past FAA_READ", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, w, 0, 0, &x), "READ", t);
		RT_VAL(v[0] + 5, x, "READ after FAA_READ", t);

		/* More than one answer carries: refused, nothing done. */
		r.count = RDLOCK_TEST_RANGE_MAX;
		r.nread = 0;
		EXPECT_EQ(EINVAL, range_op(fd, &r));
		r.op = RDLOCK_TEST_OP_READ_RANGE;
		r.count = RDLOCK_TEST_RANGE_MAX + 1;
		EXPECT_EQ(EINVAL, range_op(fd, &r));
		r.count = 0;
		EXPECT_EQ(EINVAL, range_op(fd, &r));
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, w, 0, 0, &x), "READ", t);
		RT_VAL(v[0] + 5, x, "READ after refused ranges", t);

		/*
		 * A CAS_READ reads more than a FAA_READ (up to one answer's
		 * words after the CAS's), whether or not its CAS swaps.
		 */
		memset(&r, 0, sizeof(r));
		r.op = RDLOCK_TEST_OP_CAS_READ;
		r.node = t;
		r.slot = w;
		r.rslot = w;
		r.count = RDLOCK_TEST_RANGE_MAX;
		r.arg0 = v[0];
		r.arg1 = v[0] + 9;
		RT_OK(range_op(fd, &r), "CAS_READ", t);
		EXPECT_EQ(RDLOCK_TEST_RANGE_MAX, r.nread);
		RT_VAL(v[0] + 5, r.value, "CAS_READ's CAS, not swapping", t);
		RT_VAL(v[0] + 5, r.vals[0], "CAS_READ's word, not swapped", t);
		for (i = 1; i < RDLOCK_TEST_RANGE_MAX; i++)
			RT_VAL(v[i], r.vals[i], "CAS_READ slot", t);
		r.arg0 = v[0] + 5;
		r.nread = 0;
		RT_OK(range_op(fd, &r), "CAS_READ", t);
		EXPECT_EQ(RDLOCK_TEST_RANGE_MAX, r.nread);
		RT_VAL(v[0] + 5, r.value, "CAS_READ's CAS", t);
		RT_VAL(v[0] + 9, r.vals[0], "CAS_READ's word after the CAS", t);
		RT_OK(rdl_xop(fd, RDLOCK_TEST_OP_READ, t, w, 0, 0, &x), "READ", t);
		RT_VAL(v[0] + 9, x, "READ after CAS_READ", t);
	}
}

TEST_F_TIMEOUT(xport, ping, 120)
{
	__u32 t;

	for (t = 0; t < self->env.nr_nodes; t++) {
		/* The slot is ignored for PING, even a bad one. */
		RT_OK(rdl_xop(self->fd, RDLOCK_TEST_OP_PING, t, 0, 0, 0, NULL),
		      "PING", t);
		RT_OK(rdl_xop(self->fd, RDLOCK_TEST_OP_PING, t, 0xffffffff,
			      0, 0, NULL), "PING with slot ~0", t);
	}
}

#define BAD(err, op, node, slot, what) do {				\
	int __want = (err);						\
	int __got = rdl_xop(self->fd, op, node, slot, 0x5244, 0x5245, NULL); \
	EXPECT_EQ(__want, __got) {					\
		TH_LOG("%s: got %d (%s), expected %d", what, __got,	\
		       strerror(__got), __want);			\
	}								\
} while (0)

TEST_F(xport, bad_inputs)
{
	const struct env *e = &self->env;
	__u32 ok_slot = self->base + SLOT_ROUND_TRIP + e->self;
	__u32 node = e->self, n;
	struct rdlock_test_bench b;
	__u32 samples[4];

	BAD(EINVAL, 0, node, ok_slot, "op 0");
	BAD(EINVAL, 6, node, ok_slot, "op 6");
	BAD(EINVAL, 0xffffffff, node, ok_slot, "op ~0");
	/* CAS that could never swap: harmless even if wrongly accepted. */
	BAD(EINVAL, RDLOCK_TEST_OP_READ, node, self->info.table_slots,
	    "READ slot table_slots");
	BAD(EINVAL, RDLOCK_TEST_OP_CAS, node, self->info.table_slots,
	    "CAS slot table_slots");
	BAD(EINVAL, RDLOCK_TEST_OP_READ, node, 0xffffffff, "READ slot ~0");
	if (self->base) {
		BAD(EINVAL, RDLOCK_TEST_OP_READ, node, self->base - 1,
		    "READ slot first_free_slot - 1");
		BAD(EINVAL, RDLOCK_TEST_OP_CAS, node, 0, "CAS slot 0");
	}
	for (n = e->nr_nodes; n < RDLOCK_MAX_NODES; n += 7)
		BAD(ENOENT, RDLOCK_TEST_OP_READ, n, ok_slot,
		    "READ on an unconfigured node");
	if (e->nr_nodes < RDLOCK_MAX_NODES)
		BAD(ENOENT, RDLOCK_TEST_OP_PING, e->nr_nodes, 0,
		    "PING an unconfigured node");
	/* Ids no node can have are not configured either. */
	BAD(ENOENT, RDLOCK_TEST_OP_READ, RDLOCK_MAX_NODES, ok_slot,
	    "READ on node 32");
	BAD(ENOENT, RDLOCK_TEST_OP_READ, 0xffffffff, ok_slot, "READ on node ~0");
	/* The test uses the same checks for BENCH. */
	memset(&b, 0, sizeof(b));
	b.op.op = 0;
	b.op.node = node;
	b.op.slot = ok_slot;
	b.iterations = 4;
	b.samples = (__u64)(unsigned long)samples;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_BENCH, &b));
	EXPECT_EQ(EINVAL, errno);
	b.op.op = RDLOCK_TEST_OP_READ;
	b.op.slot = self->info.table_slots;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_BENCH, &b));
	EXPECT_EQ(EINVAL, errno);
	/* And a valid BENCH returns a plausible latency per sample. */
	b.op.slot = ok_slot;
	memset(samples, 0, sizeof(samples));
	EXPECT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_BENCH, &b)) {
		TH_LOG("BENCH READ: %s", strerror(errno));
	}
	EXPECT_NE(0, samples[0] | samples[1] | samples[2] | samples[3]);
}

static int final_barrier(void)
{
	struct rdlock_test_info info;
	struct env e;
	char msg[160];
	int fd;

	if (read_env(&e))
		return 1;
	fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cannot open %s: %s\n", TEST_DEV, strerror(errno));
		return 1;
	}
	if (ioctl(fd, RDLOCK_TEST_IOC_INFO, &info) < 0) {
		fprintf(stderr, "INFO: %s\n", strerror(errno));
		return 1;
	}
	if (rdl_barrier(fd, e.nr_nodes, e.barrier_timeout,
			info.first_free_slot + SLOT_FINAL_BARRIER, 1, msg,
			sizeof(msg))) {
		fprintf(stderr, "final barrier: %s\n", msg);
		return 1;
	}
	/*
	 * Node 0 holds the barrier: it may go down only when everybody has
	 * seen the barrier, or a slow node's last READ would fail. The others
	 * just say they have.
	 */
	if (e.self) {
		if (rdl_barrier_arrive(fd, e.nr_nodes, e.barrier_timeout,
				       info.first_free_slot + SLOT_FINAL_ACK, 1,
				       msg, sizeof(msg))) {
			fprintf(stderr, "final ack: %s\n", msg);
			return 1;
		}
	} else if (rdl_barrier(fd, e.nr_nodes, e.barrier_timeout,
			       info.first_free_slot + SLOT_FINAL_ACK, 1, msg,
			       sizeof(msg))) {
		fprintf(stderr, "final ack: %s\n", msg);
		return 1;
	}
	close(fd);
	return 0;
}

#define CHURN_STEP_US	250
#define CHURN_STEPS	200

static int up_down_cycles(const char *arg)
{
	char *end;
	long i, n;
	int fd;

	n = strtol(arg, &end, 10);
	if (*end || n < 1 || n > 100000) {
		fprintf(stderr, "bad --churn cycle count '%s'\n", arg);
		return 2;
	}
	fd = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(RDLOCK_DEV);
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (ioctl(fd, RDLOCK_IOC_UP)) {
			fprintf(stderr, "cycle %ld: up: %s\n", i, strerror(errno));
			break;
		}
		usleep(i % CHURN_STEPS * CHURN_STEP_US);
		if (ioctl(fd, RDLOCK_IOC_DOWN)) {
			fprintf(stderr, "cycle %ld: down: %s\n", i,
				strerror(errno));
			break;
		}
	}
	close(fd);
	if (i < n)
		return 1;
	printf("# %ld up/down cycles\n", n);
	return 0;
}

/*
 * One PING to node @arg: 0 once it echoed, 1 when it failed (the
 * connection is then failed too if the peer stalled: rdlock_xreq_wait()).
 */
static int ping_node(const char *arg)
{
	char *end;
	long node;
	int fd, ret;

	node = strtol(arg, &end, 10);
	if (*end || node < 0 || node >= RDLOCK_MAX_NODES) {
		fprintf(stderr, "bad --ping node '%s'\n", arg);
		return 2;
	}
	fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(TEST_DEV);
		return 1;
	}
	ret = rdl_xop(fd, RDLOCK_TEST_OP_PING, node, 0, 0, 0, NULL);
	close(fd);
	if (ret) {
		printf("# ping node %ld: %s\n", node, strerror(ret));
		return 1;
	}
	return 0;
}

#define main xport_harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	int fd;

	if (argc == 2 && !strcmp(argv[1], "--final-barrier"))
		return final_barrier();
	if (argc == 3 && !strcmp(argv[1], "--churn"))
		return up_down_cycles(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--ping"))
		return ping_node(argv[2]);
	if (argc > 1) {
		fprintf(stderr, "usage: %s [--final-barrier | --churn N | --ping NODE]\n",
			argv[0]);
		return 2;
	}
	fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ksft_print_header();
		ksft_exit_fail_msg("cannot open %s: %s (%s)\n", TEST_DEV,
				   strerror(errno),
				   "load rdlock.ko and rdlock_test.ko; run in the guests");
	}
	close(fd);
	return xport_harness_main(argc, argv);
}
