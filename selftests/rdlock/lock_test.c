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
 * (default 70000) across the cluster, mostly shared so that the 16-bit
 * ticket counters cross COUNT_MAX (32768) repeatedly; every 50th
 * acquisition is exclusive and increments a counter non-atomically. The
 * counter must equal the exclusive grants exactly and the nodes together
 * must have reset the word at least total / 32768 times.
 *
 * Env: RDLOCK_NODE_ID, RDLOCK_NR_NODES, RDLOCK_LOCK_ITERS (M, default 100),
 * RDLOCK_THREADS (T, default 2), RDLOCK_BARRIER_TIMEOUT (s, default 300).
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

#include "testlib.h"

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
#define OVF_BARRIER	(REGION(2) + 4)		/* and + 5, on node 0 */
#define OVF_EXCLUSIVE_EVERY	50

struct lock_env {
	__u32 self, nr_nodes, iters, threads, barrier_timeout, base;
};

struct worker {
	const struct lock_env *env;
	__u32 proto, index;
	__u64 grants[NR_LOCKS];
	__u64 violations, remote_ops, acquires;
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

/* One operation on a data slot; records the first error. */
static int data_op(int fd, struct worker *w, __u32 op, __u32 what,
		   __u32 lock, __u64 arg, __u64 *val)
{
	const struct lock_env *e = w->env;
	int err = rdl_xop(fd, op, data_home(e, lock),
			  slot(e, w->proto, what, lock), arg, 0, val);

	if (err && !w->err[0])
		snprintf(w->err, sizeof(w->err), "op %u on lock %u: %s", op,
			 lock, strerror(err));
	return err;
}

static int critical_section(int fd, struct worker *w, __u32 lock,
			    bool exclusive)
{
	__u64 mark = ((__u64)w->env->self << 32) | (w->index + 1), flag, c;

	if (data_op(fd, w, RDLOCK_TEST_OP_READ, FLAG_SLOT, lock, 0, &flag))
		return -1;
	if (flag)
		w->violations++;	/* a writer is inside with us */
	if (!exclusive) {
		if (data_op(fd, w, RDLOCK_TEST_OP_READ, COUNTER_SLOT, lock, 0, &c) ||
		    data_op(fd, w, RDLOCK_TEST_OP_READ, FLAG_SLOT, lock, 0, &flag))
			return -1;
		if (flag)
			w->violations++;
		return 0;
	}
	if (data_op(fd, w, RDLOCK_TEST_OP_WRITE, FLAG_SLOT, lock, mark, NULL) ||
	    data_op(fd, w, RDLOCK_TEST_OP_READ, COUNTER_SLOT, lock, 0, &c) ||
	    data_op(fd, w, RDLOCK_TEST_OP_WRITE, COUNTER_SLOT, lock, c + 1, NULL) ||
	    data_op(fd, w, RDLOCK_TEST_OP_READ, FLAG_SLOT, lock, 0, &flag))
		return -1;
	if (flag != mark)
		w->violations++;	/* another writer was inside */
	if (data_op(fd, w, RDLOCK_TEST_OP_WRITE, FLAG_SLOT, lock, 0, NULL))
		return -1;
	w->grants[lock]++;
	return 0;
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
		__u32 lock = rand_r(&seed) % NR_LOCKS;
		bool exclusive = rand_r(&seed) % 10 < 7;
		struct rdlock_test_lock l = {
			.proto = w->proto, .mode = exclusive,
			.node = lock_home(e, lock),
			.slot = slot(e, w->proto, LOCK_SLOT, lock),
		};

		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK, &l) < 0) {
			snprintf(w->err, sizeof(w->err), "LOCK %u: %s", lock,
				 strerror(errno));
			break;
		}
		w->acquires++;
		w->remote_ops += l.remote_ops;
		critical_section(fd, w, lock, exclusive);
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
};

FIXTURE_SETUP(lock)
{
	struct lock_env *e = &self->env;
	struct rdlock_test_info info;

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NODE_ID", -1, &e->self));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NR_NODES", -1, &e->nr_nodes));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_LOCK_ITERS", 100, &e->iters));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_THREADS", 2, &e->threads));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 300,
				 &e->barrier_timeout));
	ASSERT_LT(e->self, e->nr_nodes);
	ASSERT_GE(MAX_THREADS, e->threads);
	self->fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_INFO, &info));
	ASSERT_EQ(1, info.ready);
	ASSERT_LE(info.first_free_slot + REGION(3), info.table_slots);
	e->base = info.first_free_slot;
}

FIXTURE_TEARDOWN(lock)
{
	close(self->fd);
}

static void run_protocol(struct __test_metadata *_metadata, int fd,
			 const struct lock_env *e, __u32 proto)
{
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 grants[NR_LOCKS] = { 0 }, violations = 0, ops = 0, acq = 0;
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
	}
	/* Whatever happened, the others wait for us at the barriers. */
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 slot(e, proto, BARRIER_SLOT, 0), 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	for (l = 0; l < NR_LOCKS; l++)
		ASSERT_EQ(0, rdl_xop(fd, RDLOCK_TEST_OP_FAA, 0,
				     slot(e, proto, TOTAL_SLOT, l), grants[l],
				     0, NULL));
	ASSERT_EQ(0, rdl_barrier(fd, e->nr_nodes, e->barrier_timeout,
				 slot(e, proto, BARRIER_SLOT, 1), 1, msg,
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
	printf("# node %u: %llu acquisitions, %.2f remote ops per acquire\n",
	       e->self, (unsigned long long)acq, acq ? (double)ops / acq : 0);
}

TEST_F_TIMEOUT(lock, bakery_exclusion, 1800)
{
	run_protocol(_metadata, self->fd, &self->env, RDLOCK_TEST_PROTO_BAKERY);
}

TEST_F_TIMEOUT(lock, caslock_exclusion, 1800)
{
	run_protocol(_metadata, self->fd, &self->env, RDLOCK_TEST_PROTO_CASLOCK);
}

/* A counter of /sys/kernel/debug/rdlock/protocols, or -1. */
static long long protocol_counter(const char *name)
{
	FILE *f = fopen("/sys/kernel/debug/rdlock/protocols", "r");
	char key[64];
	long long v, found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63[^:]: %lld\n", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
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

TEST_F_TIMEOUT(lock, bakery_overflow, 3000)
{
	const struct lock_env *e = &self->env;
	struct overflow_worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	__u64 grants = 0, total = 0, counter = 0, resets = 0;
	long long resets_before, resets_after;
	__u32 i, want;
	char msg[160];

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_OVERFLOW_TOTAL", 70000, &want));
	resets_before = protocol_counter("overflow_resets");
	ASSERT_LE(0, resets_before);
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
				 e->base + OVF_BARRIER, 1, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	/* A reset runs in the background once the epoch's last holder left. */
	usleep(500000);
	resets_after = protocol_counter("overflow_resets");
	ASSERT_LE(resets_before, resets_after);

	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_FAA, 0,
			     e->base + OVF_TOTAL, grants, 0, NULL));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_FAA, 0,
			     e->base + OVF_RESETS,
			     resets_after - resets_before, 0, NULL));
	ASSERT_EQ(0, rdl_barrier(self->fd, e->nr_nodes, e->barrier_timeout,
				 e->base + OVF_BARRIER + 1, 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + OVF_TOTAL, 0, 0, &total));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + OVF_COUNTER, 0, 0, &counter));
	ASSERT_EQ(0, rdl_xop(self->fd, RDLOCK_TEST_OP_READ, 0,
			     e->base + OVF_RESETS, 0, 0, &resets));
	EXPECT_EQ(total, counter);
	EXPECT_LE(want / 32768, resets);
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

	l.proto = 2;
	EXPECT_EQ(-1, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(EINVAL, errno);
	l.proto = 0;
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
		ASSERT_EQ(0, ioctl(fd2, RDLOCK_TEST_IOC_LOCK, &l));
		close(fd2);
	}
	l.handle = 0;
	l.remote_ops = 0;
	l.timeout_ms = 10000;
	EXPECT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_LOCK, &l));
	EXPECT_EQ(0, ioctl(self->fd, RDLOCK_TEST_IOC_UNLOCK, &l.handle));
}

TEST_HARNESS_MAIN
