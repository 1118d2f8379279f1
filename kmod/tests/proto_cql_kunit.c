// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdlock_proto_cql: the CQL lock (proto_cql*.c) on the
 * simulated cluster (proto_sim.h): order, readers together, abandoned
 * waiters, operation counts, resets (versions, idle, stale signals, a
 * holder's node gone, a failed claimer), and the hierarchical policies
 * (cql_hier_*: FIFO, local handover, readers joining, starvation, resets
 * while clients wait on their node).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "tests/proto_sim.h"

/**
 * struct cql_client - one CQL acquisition in a thread of its own
 * @sim: the cluster.
 * @cfg: its node's policy.
 * @stats: its counters.
 * @t: the ticket.
 * @timeout_ms: the acquisition's deadline (0: none).
 * @hold_ms: how long it holds.
 * @together: if set, it holds until this many holders are inside.
 * @ret: what acquire returned.
 * @seq: its place in the grant order (sim->seq), 0 if not granted.
 * @acq_ops: remote operations of the acquisition, less liveness READs.
 * @met: @together holders were inside at once.
 * @done: the thread ended.
 */
struct cql_client {
	struct proto_sim *sim;
	struct rdlock_proto_cfg cfg;
	struct rdlock_proto_stats stats;
	struct rdlock_ticket t;
	u32 timeout_ms;
	u32 hold_ms;
	int together;
	int ret;
	int seq;
	u32 acq_ops;
	bool met;
	struct completion done;
};

static atomic_t cql_inside = ATOMIC_INIT(0);
/* The most holders inside at once: the last reader in may leave at once. */
static atomic_t cql_peak = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(cql_inside_wq);

static int cql_client_fn(void *arg)
{
	struct cql_client *c = arg;
	unsigned long until;
	int in, peak;

	c->ret = rdlock_proto_cql.acquire(&c->cfg, &c->t,
					  c->timeout_ms ?
					  jiffies + msecs_to_jiffies(c->timeout_ms) :
					  0);
	if (!c->ret) {
		c->seq = atomic_inc_return(&c->sim->seq);
		c->acq_ops = c->t.remote_ops - c->t.polls;
		in = atomic_inc_return(&cql_inside);
		peak = atomic_read(&cql_peak);
		while (peak < in && !atomic_try_cmpxchg(&cql_peak, &peak, in))
			;
		wake_up_all(&cql_inside_wq);
		if (c->together) {
			until = jiffies + 10 * HZ;
			c->met = wait_event_timeout(cql_inside_wq,
						    atomic_read(&cql_peak) >=
						    c->together,
						    until - jiffies) > 0;
		}
		if (c->hold_ms)
			msleep(c->hold_ms);
		atomic_dec(&cql_inside);
		rdlock_proto_cql.release(&c->cfg, &c->t);
	}
	complete(&c->done);
	return 0;
}

/* The policy of the clients a test makes (suite init: flat). */
static u8 cql_policy;

static void cql_client_init(struct cql_client *c, struct proto_sim *sim,
			    int node, enum rdlock_mode mode)
{
	static const struct sim_params p = { .ops = &rdlock_proto_cql };

	memset(c, 0, sizeof(*c));
	c->sim = sim;
	sim_cfg(&c->cfg, &p, &sim->nodes[node], &c->stats);
	c->cfg.cql_policy = cql_policy;
	c->t.node = SIM_LOCK_NODE;
	c->t.slot = SIM_LOCK_SLOT;
	c->t.incarnation = SIM_INCARNATION;
	c->t.mode = mode;
	init_completion(&c->done);
}

static void cql_client_start(struct kunit *test, struct cql_client *c)
{
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(cql_client_fn, c,
						    "rdlock_cql")));
}

/* Put the header in the state a test starts from, as the home would. */
static void cql_set_header(struct proto_sim *sim, u64 h)
{
	spin_lock(&sim->lock);
	sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT] = h;
	spin_unlock(&sim->lock);
}

/*
 * Wait until the header (of layout @l) counts @qsize clients and their
 * entries are in.
 */
static bool cql_wait_queued_l(struct proto_sim *sim,
			      const struct cql_layout *l, u32 qsize)
{
	unsigned long until = jiffies + 10 * HZ;

	while (cql_hdr_qsize(l, cql_header(sim)) != qsize) {
		if (time_after(jiffies, until))
			return false;
		usleep_range(5000, 6000);
	}
	msleep(20);	/* the populate WRITE follows the FA */
	return true;
}

/* The same at the default layout. */
static bool cql_wait_queued(struct proto_sim *sim, u32 qsize)
{
	struct cql_layout l;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	return cql_wait_queued_l(sim, &l, qsize);
}

/* Remote operations of every type from releases on, in @s. */
static s64 cql_rel_ops(struct rdlock_proto_stats *s)
{
	s64 n = 0;
	int op;

	for (op = 0; op < RDLOCK_XOP_NR; op++)
		n += atomic64_read(&s->rel_ops[op]);
	return n;
}

#define CQL_FIFO_WAITERS	9

/*
 * Exclusive waiters queued one after the other from every node are
 * granted exactly in their enqueue order, each by one notification.
 */
static void cql_fifo_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *h, *c;
	int i;

	c = kunit_kcalloc(test, CQL_FIFO_WAITERS + 1, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = &c[CQL_FIFO_WAITERS];
	cql_client_init(h, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	KUNIT_EXPECT_EQ(test, h->t.remote_ops, 1U);
	for (i = 0; i < CQL_FIFO_WAITERS; i++) {
		/* Node 2, 1, 0, 2, ...: order across nodes, not by node. */
		cql_client_init(&c[i], sim, SIM_NODES - 1 - i % SIM_NODES,
				RDLOCK_MODE_EXCLUSIVE);
		c[i].hold_ms = 2;
		cql_client_start(test, &c[i]);
		KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, i + 2));
	}
	h->t.remote_ops = 0;
	rdlock_proto_cql.release(&h->cfg, &h->t);
	/*
	 * One FAA_READ (3 of the waiters are on the holder's node): the
	 * successor's entry came with it, a writer.
	 */
	KUNIT_EXPECT_EQ(test, h->t.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, atomic64_read(&h->stats.rel_ops[RDLOCK_XOP_FAA_READ]),
			1LL);
	for (i = 0; i < CQL_FIFO_WAITERS; i++)
		wait_for_completion(&c[i].done);
	sim_flush(sim);
	for (i = 0; i < CQL_FIFO_WAITERS; i++) {
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_EQ(test, c[i].seq, i + 1);
		/* FAA, populate WRITE; READs only by the 1 s liveness check. */
		KUNIT_EXPECT_EQ(test, c[i].acq_ops, 2U);
		/* It waited: one FAA_READ, with its successor's entry. */
		KUNIT_EXPECT_EQ(test,
				atomic64_read(&c[i].stats.rel_ops[RDLOCK_XOP_FAA_READ]),
				1LL);
		KUNIT_EXPECT_EQ(test, cql_rel_ops(&c[i].stats), 1LL);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent),
			(s64)CQL_FIFO_WAITERS);
	sim_destroy(sim);
}

#define CQL_READERS	4

/*
 * Readers queued behind a writer are admitted together by its release
 * (case 5); a writer queued after them waits for all of them, and a reader
 * queued after that writer waits for it (task-fair, no overtaking).
 */
static void cql_readers_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c, *h, *w, *r;
	int i;

	c = kunit_kcalloc(test, CQL_READERS + 3, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = &c[CQL_READERS];
	w = h + 1;
	r = h + 2;
	atomic_set(&cql_peak, 0);
	cql_client_init(h, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	for (i = 0; i < CQL_READERS; i++) {
		cql_client_init(&c[i], sim, i % SIM_NODES, RDLOCK_MODE_SHARED);
		c[i].together = CQL_READERS;
		cql_client_start(test, &c[i]);
		KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, i + 2));
	}
	cql_client_init(w, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	cql_client_start(test, w);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, CQL_READERS + 2));
	cql_client_init(r, sim, 0, RDLOCK_MODE_SHARED);
	cql_client_start(test, r);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, CQL_READERS + 3));
	h->t.remote_ops = 0;
	rdlock_proto_cql.release(&h->cfg, &h->t);
	/*
	 * A FAA_READ with 3 readers' entries, then one READ_RANGE of the
	 * 4th reader's, the writer's that ends them and the last reader's.
	 */
	KUNIT_EXPECT_EQ(test, h->t.remote_ops, 2U);
	KUNIT_EXPECT_EQ(test, atomic64_read(&h->stats.rel_ops[RDLOCK_XOP_FAA_READ]),
			1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&h->stats.rel_ops[RDLOCK_XOP_READ_RANGE]),
			1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&h->stats.rel_ops[RDLOCK_XOP_READ]),
			0LL);
	for (i = 0; i < CQL_READERS; i++)
		wait_for_completion(&c[i].done);
	wait_for_completion(&w->done);
	wait_for_completion(&r->done);
	sim_flush(sim);
	for (i = 0; i < CQL_READERS; i++) {
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_TRUE(test, c[i].met);
		KUNIT_EXPECT_LE(test, c[i].seq, CQL_READERS);
	}
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_EQ(test, w->seq, CQL_READERS + 1);
	KUNIT_EXPECT_EQ(test, r->ret, 0);
	KUNIT_EXPECT_EQ(test, r->seq, CQL_READERS + 2);
	/* 4 readers at once, then the writer, then the reader. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent), CQL_READERS + 2LL);
	sim_destroy(sim);
}

/*
 * Holder @h of @hnode in @hmode, granted at once; the @n writers @w of
 * @wnodes queue behind it in that order; @h releases and each is granted
 * in turn.
 */
static void cql_release_behind(struct kunit *test, struct proto_sim *sim,
			       struct cql_client *h, int hnode,
			       enum rdlock_mode hmode, struct cql_client *w,
			       const int *wnodes, int n)
{
	int i;

	atomic_set(&sim->seq, 0);
	cql_client_init(h, sim, hnode, hmode);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	for (i = 0; i < n; i++) {
		cql_client_init(&w[i], sim, wnodes[i], RDLOCK_MODE_EXCLUSIVE);
		cql_client_start(test, &w[i]);
		KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, i + 2));
	}
	rdlock_proto_cql.release(&h->cfg, &h->t);
	for (i = 0; i < n; i++)
		wait_for_completion(&w[i].done);
	sim_flush(sim);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, w[i].ret, 0);
		KUNIT_EXPECT_EQ(test, w[i].seq, i + 1);
	}
}

static s64 cql_rel_op(struct cql_client *c, enum rdlock_xop op)
{
	return atomic64_read(&c->stats.rel_ops[op]);
}

/*
 * Which dequeue a release sends (rdlock_cql_busy()): a holder granted at
 * once with only other nodes' waiters behind it sends a plain FAA, whose
 * header shows them, then READs their entries (2 operations); one with a
 * waiter of its own node behind it, and every holder that waited, a
 * FAA_READ (1). A reader granted at once releases with a FAA and READs
 * the entry of the writer queued behind it.
 */
static void cql_release_test(struct kunit *test)
{
	static const int others[] = { 1, 2 }, own[] = { 0 }, node2[] = { 2 };
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *h, *w;
	struct cql_layout l;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	h = kunit_kcalloc(test, 3, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	w = h + 1;

	/* Writers of nodes 1 and 2 behind a writer of node 0. */
	cql_release_behind(test, sim, h, 0, RDLOCK_MODE_EXCLUSIVE, w,
			   others, ARRAY_SIZE(others));
	/* Acquire FAA; release FAA, then one READ_RANGE of both entries. */
	KUNIT_EXPECT_EQ(test, h->t.remote_ops, 3U);
	KUNIT_EXPECT_EQ(test, cql_rel_op(h, RDLOCK_XOP_FAA), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_op(h, RDLOCK_XOP_READ_RANGE), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_ops(&h->stats), 2LL);
	/* Each waited: one FAA_READ, w[1]'s entry in w[0]'s. */
	KUNIT_EXPECT_EQ(test, cql_rel_op(&w[0], RDLOCK_XOP_FAA_READ), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_ops(&w[0].stats), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_op(&w[1], RDLOCK_XOP_FAA_READ), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_ops(&w[1].stats), 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent), 2LL);

	/* A writer of its own node behind a writer granted at once. */
	cql_release_behind(test, sim, h, 0, RDLOCK_MODE_EXCLUSIVE, w,
			   own, ARRAY_SIZE(own));
	KUNIT_EXPECT_EQ(test, cql_rel_op(h, RDLOCK_XOP_FAA_READ), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_ops(&h->stats), 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent), 3LL);

	/* A writer of node 2 behind a reader of node 1 granted at once. */
	cql_release_behind(test, sim, h, 1, RDLOCK_MODE_SHARED, w,
			   node2, ARRAY_SIZE(node2));
	/* FAA (wcnt 1), one READ_RANGE of the writer's entry: case 4. */
	KUNIT_EXPECT_EQ(test, cql_rel_op(h, RDLOCK_XOP_FAA), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_op(h, RDLOCK_XOP_READ_RANGE), 1LL);
	KUNIT_EXPECT_EQ(test, cql_rel_ops(&h->stats), 2LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent), 4LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 7, 0, 0, 0));
	sim_destroy(sim);
}

#define CQL_STREAM	3

struct cql_stream {
	struct proto_sim *sim;
	int node;
	int first_seq;	/* of its first grant */
	int grants;
	bool stop;
	struct completion done;
};

static int cql_stream_fn(void *arg)
{
	struct cql_stream *rs = arg;
	/* Not in the frame: the debug kernel's limit is 1024 bytes. */
	struct cql_client *c = kmalloc(sizeof(*c), GFP_KERNEL);
	int seq;

	while (c && !READ_ONCE(rs->stop)) {
		cql_client_init(c, rs->sim, rs->node, RDLOCK_MODE_SHARED);
		if (rdlock_proto_cql.acquire(&c->cfg, &c->t, jiffies + 20 * HZ))
			break;
		seq = atomic_inc_return(&rs->sim->seq);
		if (!rs->grants++)
			rs->first_seq = seq;
		usleep_range(500, 1000);
		rdlock_proto_cql.release(&c->cfg, &c->t);
	}
	kfree(c);
	complete(&rs->done);
	return 0;
}

/*
 * A writer queued behind a reader is not starved by a stream of readers
 * that keep coming on every node: every one of them queues behind it.
 */
static void cql_starve(struct kunit *test, u8 policy)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_stream *rs;
	struct cql_client *c, *w;
	int i;

	c = kunit_kcalloc(test, 2, sizeof(*c), GFP_KERNEL);
	rs = kunit_kcalloc(test, CQL_STREAM, sizeof(*rs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rs);
	w = &c[1];
	cql_policy = policy;
	cql_client_init(c, sim, 0, RDLOCK_MODE_SHARED);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t, 0), 0);
	cql_client_init(w, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	w->hold_ms = 20;
	cql_client_start(test, w);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, 2));
	for (i = 0; i < CQL_STREAM; i++) {
		rs[i].sim = sim;
		rs[i].node = i;
		init_completion(&rs[i].done);
		KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(cql_stream_fn,
							    &rs[i],
							    "rdlock_cqlr")));
	}
	msleep(100);
	/* The first reader is still in, the rest queued behind the writer. */
	KUNIT_EXPECT_EQ(test, atomic_read(&sim->seq), 0);
	rdlock_proto_cql.release(&c->cfg, &c->t);
	wait_for_completion(&w->done);
	msleep(100);
	for (i = 0; i < CQL_STREAM; i++)
		WRITE_ONCE(rs[i].stop, true);
	for (i = 0; i < CQL_STREAM; i++)
		wait_for_completion(&rs[i].done);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_EQ(test, w->seq, 1);
	for (i = 0; i < CQL_STREAM; i++) {
		KUNIT_EXPECT_GT(test, rs[i].grants, 0);
		KUNIT_EXPECT_GT(test, rs[i].first_seq, w->seq);
	}
	sim_destroy(sim);
}

static void cql_starve_test(struct kunit *test)
{
	cql_starve(test, RDLOCK_CQL_FLAT);
}

/*
 * Hierarchical: the readers that keep coming on the first reader's node
 * must not join its shared hold while the writer of node 1 waits (the
 * header they READ shows it), nor may node 1's overtake it there: both
 * policies.
 */
static void cql_hier_starve_tf_test(struct kunit *test)
{
	cql_starve(test, RDLOCK_CQL_TASK_FAIR);
}

static void cql_hier_starve_pf_test(struct kunit *test)
{
	cql_starve(test, RDLOCK_CQL_PHASE_FAIR);
}

/*
 * Hierarchical, a client waiting on its node (its stamp READ done), or
 * enqueued: the header counts @qsize.
 */
static bool cql_hier_queued(struct proto_sim *sim, struct cql_client *c,
			    u32 qsize)
{
	unsigned long until = jiffies + 10 * HZ;
	struct cql_layout l;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	while (cql_hdr_qsize(&l, cql_header(sim)) != qsize &&
	       !atomic64_read(&c->stats.acq_ops[RDLOCK_XOP_READ])) {
		if (time_after(jiffies, until))
			return false;
		usleep_range(5000, 6000);
	}
	msleep(20);	/* the populate WRITE, or the local queueing */
	return true;
}

/*
 * Hierarchical task-fair, the FIFO case: a holder on node 0, writers
 * arriving from nodes 2, 1, 0, 2, ...: the first of nodes 2 and 1 enqueue,
 * the rest wait on their node. Every local waiter arrived after the entry
 * of the next node in the queue (or between the same two FAAs as it), so
 * none is handed the lock on its node: each goes through the queue, and
 * grants follow arrival order exactly across nodes; 9 notifications.
 */
static void cql_hier_fifo_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 handovers = cql_local_handovers();
	struct cql_client *h, *c;
	struct cql_layout l;
	int i;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	cql_policy = RDLOCK_CQL_TASK_FAIR;
	c = kunit_kcalloc(test, CQL_FIFO_WAITERS + 1, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = &c[CQL_FIFO_WAITERS];
	cql_client_init(h, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	KUNIT_EXPECT_EQ(test, h->t.remote_ops, 1U);
	for (i = 0; i < CQL_FIFO_WAITERS; i++) {
		cql_client_init(&c[i], sim, SIM_NODES - 1 - i % SIM_NODES,
				RDLOCK_MODE_EXCLUSIVE);
		c[i].hold_ms = 2;
		cql_client_start(test, &c[i]);
		KUNIT_ASSERT_TRUE(test, cql_hier_queued(sim, &c[i],
							min(i, 2) + 2));
	}
	/* Only the first two of other nodes are in the queue. */
	KUNIT_EXPECT_EQ(test, cql_hdr_qsize(&l, cql_header(sim)), 3U);
	rdlock_proto_cql.release(&h->cfg, &h->t);
	for (i = 0; i < CQL_FIFO_WAITERS; i++)
		wait_for_completion(&c[i].done);
	sim_flush(sim);
	for (i = 0; i < CQL_FIFO_WAITERS; i++) {
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_EQ(test, c[i].seq, i + 1);
		/* Local waiters: stamp READ, then FAA and WRITE. */
		KUNIT_EXPECT_EQ(test, c[i].acq_ops, i < 2 ? 2U : 3U);
	}
	KUNIT_EXPECT_EQ(test, cql_local_handovers() - handovers, 0LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent),
			(s64)CQL_FIFO_WAITERS);
	KUNIT_EXPECT_EQ(test, cql_header(sim),
			cql_hdr_pack(&l, CQL_FIFO_WAITERS + 1, 0, 0, 0));
	sim_destroy(sim);
}

#define CQL_HIER_LOCAL	3

/*
 * Hierarchical task-fair, local handover: 3 writers of the holder's node
 * 0 wait on it, then a writer of node 1 enqueues. Each release on node 0
 * READs the entry after the node's (the writer of node 1, which came
 * later) and hands the entry to the next local writer: 3 local handovers,
 * no notification among them, node 1 granted last by the one message;
 * two entries in all.
 */
static void cql_hier_local_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 handovers = cql_local_handovers();
	struct cql_client *h, *c, *r;
	struct cql_layout l;
	int i;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	cql_policy = RDLOCK_CQL_TASK_FAIR;
	c = kunit_kcalloc(test, CQL_HIER_LOCAL + 2, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = &c[CQL_HIER_LOCAL];
	r = h + 1;
	cql_client_init(h, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	for (i = 0; i < CQL_HIER_LOCAL; i++) {
		cql_client_init(&c[i], sim, 0, RDLOCK_MODE_EXCLUSIVE);
		c[i].hold_ms = 2;
		cql_client_start(test, &c[i]);
		KUNIT_ASSERT_TRUE(test, cql_hier_queued(sim, &c[i], 0));
	}
	cql_client_init(r, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	cql_client_start(test, r);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, 2));
	h->t.remote_ops = 0;
	rdlock_proto_cql.release(&h->cfg, &h->t);
	/* One READ of node 1's entry, no dequeue. */
	KUNIT_EXPECT_EQ(test, h->t.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, cql_rel_op(h, RDLOCK_XOP_READ), 1LL);
	for (i = 0; i < CQL_HIER_LOCAL; i++)
		wait_for_completion(&c[i].done);
	wait_for_completion(&r->done);
	sim_flush(sim);
	for (i = 0; i < CQL_HIER_LOCAL; i++) {
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_EQ(test, c[i].seq, i + 1);
		/* The stamp READ only. */
		KUNIT_EXPECT_EQ(test, c[i].acq_ops, 1U);
	}
	KUNIT_EXPECT_EQ(test, r->ret, 0);
	KUNIT_EXPECT_EQ(test, r->seq, CQL_HIER_LOCAL + 1);
	KUNIT_EXPECT_EQ(test, cql_local_handovers() - handovers,
			(s64)CQL_HIER_LOCAL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent), 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 2, 0, 0, 0));
	sim_destroy(sim);
}

/*
 * Hierarchical task-fair, readers: a reader of node 0 holds; a writer of
 * node 1 enqueues; a second reader of node 0 must not join (the header
 * shows the writer) and waits on its node; the writer is granted first,
 * and the waiting reader's entry after it.
 */
static void cql_hier_join_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 shares = atomic64_read(&rdlock_proto_stats.cql_local_shares);
	struct cql_client *c;
	struct cql_layout l;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	cql_policy = RDLOCK_CQL_TASK_FAIR;
	c = kunit_kcalloc(test, 4, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cql_client_init(&c[0], sim, 0, RDLOCK_MODE_SHARED);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&c[0].cfg, &c[0].t, 0),
			0);
	/* Another reader of node 0 joins: one READ, no entry. */
	cql_client_init(&c[3], sim, 0, RDLOCK_MODE_SHARED);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&c[3].cfg, &c[3].t, 0),
			0);
	KUNIT_EXPECT_EQ(test, c[3].t.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, cql_hdr_qsize(&l, cql_header(sim)), 1U);
	rdlock_proto_cql.release(&c[3].cfg, &c[3].t);
	KUNIT_EXPECT_EQ(test, c[3].t.remote_ops, 1U);
	cql_client_init(&c[1], sim, 1, RDLOCK_MODE_EXCLUSIVE);
	cql_client_start(test, &c[1]);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, 2));
	cql_client_init(&c[2], sim, 0, RDLOCK_MODE_SHARED);
	cql_client_start(test, &c[2]);
	KUNIT_ASSERT_TRUE(test, cql_hier_queued(sim, &c[2], 0));
	KUNIT_EXPECT_EQ(test, atomic_read(&sim->seq), 0);
	rdlock_proto_cql.release(&c[0].cfg, &c[0].t);
	wait_for_completion(&c[1].done);
	wait_for_completion(&c[2].done);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, c[1].ret, 0);
	KUNIT_EXPECT_EQ(test, c[1].seq, 1);
	KUNIT_EXPECT_EQ(test, c[2].ret, 0);
	KUNIT_EXPECT_EQ(test, c[2].seq, 2);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&rdlock_proto_stats.cql_local_shares) -
			shares, 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 3, 0, 0, 0));
	sim_destroy(sim);
}

/*
 * A waiter that times out leaves nothing behind: its ticket is finished
 * in the background (granted, then released), the waiter queued after it
 * is granted, and the lock ends empty; a reader that times out too.
 */
static void cql_abandon_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c, *h, *u;
	struct rdlock_ticket t;
	struct cql_layout l;
	u64 hdr;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	c = kunit_kcalloc(test, 2, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = c;
	u = c + 1;
	cql_client_init(h, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	t = h->t;
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &t,
						       jiffies + HZ / 20),
			-ETIMEDOUT);
	t = h->t;
	t.mode = RDLOCK_MODE_SHARED;
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &t, jiffies),
			-ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic64_read(&h->stats.abandoned), 2LL);
	cql_client_init(u, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	cql_client_start(test, u);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, 4));
	rdlock_proto_cql.release(&h->cfg, &h->t);
	wait_for_completion(&u->done);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, u->ret, 0);
	hdr = cql_header(sim);
	KUNIT_EXPECT_EQ(test, cql_hdr_qsize(&l, hdr), 0U);
	KUNIT_EXPECT_EQ(test, cql_hdr_wcnt(&l, hdr), 0U);
	KUNIT_EXPECT_EQ(test, cql_hdr_qhead(&l, hdr), 4U);
	/* Holder to abandoned writer to abandoned reader to u. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent), 3LL);
	sim_destroy(sim);
}

/*
 * Uncontended: one FAA to acquire, one plain FAA to release (nobody was
 * queued, so no READ rides with it), nothing else; update locks and
 * multi-slot leases are refused before anything is sent.
 */
static void cql_ops_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_layout l;
	struct cql_client *c;
	int i;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	for (i = 0; i < 100; i++) {
		cql_client_init(c, sim, i % SIM_NODES,
				i & 1 ? RDLOCK_MODE_SHARED :
					RDLOCK_MODE_EXCLUSIVE);
		KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t,
							       0), 0);
		KUNIT_EXPECT_EQ(test, c->t.remote_ops, 1U);
		rdlock_proto_cql.release(&c->cfg, &c->t);
		KUNIT_EXPECT_EQ(test, c->t.remote_ops, 2U);
		KUNIT_EXPECT_EQ(test, atomic64_read(&c->stats.acq_ops[RDLOCK_XOP_FAA]),
				1LL);
		KUNIT_EXPECT_EQ(test, atomic64_read(&c->stats.rel_ops[RDLOCK_XOP_FAA]),
				1LL);
		KUNIT_EXPECT_EQ(test,
				atomic64_read(&c->stats.ops[RDLOCK_XOP_FAA_READ]),
				0LL);
		KUNIT_EXPECT_EQ(test, atomic64_read(&c->stats.remote_ops), 2LL);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent), 0LL);
	cql_client_init(c, sim, 1, RDLOCK_MODE_UPDATE);
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t, 0),
			-EOPNOTSUPP);
	cql_client_init(c, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	c->t.k = 2;
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, c->t.remote_ops, 0U);
	cql_client_init(c, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	c->cfg.cql_cap_bits = CQL_CAP_BITS_MAX + 1;
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.slots(&c->cfg), 0U);
	c->cfg.cql_cap_bits = 0;
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.slots(&c->cfg),
			1U + (1U << CQL_CAP_BITS_DEFAULT));
	KUNIT_EXPECT_EQ(test, c->t.remote_ops, 0U);
	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 100, 0, 0, 0));
	sim_destroy(sim);
}

/*
 * Version wrap with 2 version bits and 2 entries: an idle lock whose qhead
 * reaches lap 1 (half of the usable laps) is reset by the release that
 * left it idle: one CAS claims it, every node answers its signal, a READ
 * and 2 WRITEs zero the queue, one CAS the header. A waiter granted
 * across it, and an enqueue that meets a reset in progress waits for it
 * and enqueues again.
 */
static void cql_version_reset_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c, *h, *w;
	struct cql_layout l;
	u64 hdr;
	int i;

	cql_layout_init(&l, 1, 2);
	c = kunit_kcalloc(test, 3, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	for (i = 0; i < 100; i++) {
		cql_client_init(c, sim, 1, i & 1 ? RDLOCK_MODE_SHARED :
						   RDLOCK_MODE_EXCLUSIVE);
		c->cfg.cql_cap_bits = 1;
		c->cfg.cql_ver_bits = 2;
		KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t,
							       0), 0);
		rdlock_proto_cql.release(&c->cfg, &c->t);
		/*
		 * Every second release resets: CAS, the signal round (no
		 * remote operation), READ, 2 WRITEs, CAS.
		 */
		KUNIT_EXPECT_EQ(test, c->t.remote_ops, i & 1 ? 7U : 2U);
		KUNIT_EXPECT_EQ(test, atomic64_read(&c->stats.version_resets),
				(s64)(i & 1));
		KUNIT_EXPECT_EQ(test, cql_header(sim),
				i & 1 ? 0ULL : cql_hdr_pack(&l, 1, 0, 0, 0));
	}
	/* A holder and a waiter: the waiter's release resets. */
	h = c + 1;
	w = c + 2;
	cql_client_init(h, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	h->cfg.cql_cap_bits = 1;
	h->cfg.cql_ver_bits = 2;
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	cql_client_init(w, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	w->cfg.cql_cap_bits = 1;
	w->cfg.cql_ver_bits = 2;
	cql_client_start(test, w);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued_l(sim, &l, 2));
	rdlock_proto_cql.release(&h->cfg, &h->t);
	wait_for_completion(&w->done);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&w->stats.version_resets), 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), 0ULL);
	/* A reset in progress (node 0's): the enqueue waits, then retries. */
	cql_set_header(sim, cql_hdr_pack(&l, 1, 0, 0, 1));
	cql_client_init(w, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	w->cfg.cql_cap_bits = 1;
	w->cfg.cql_ver_bits = 2;
	cql_client_start(test, w);
	msleep(100);
	hdr = cql_header(sim);
	KUNIT_EXPECT_TRUE(test, cql_hdr_resetting(hdr));
	KUNIT_EXPECT_EQ(test, cql_hdr_qsize(&l, hdr), 1U);
	KUNIT_EXPECT_EQ(test, w->seq, 0);
	/* The resetter's last CAS: everything, the aborted delta too, 0. */
	cql_set_header(sim, CQL_HDR_INIT);
	wait_for_completion(&w->done);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&w->stats.retries), 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 1, 0, 0, 0));
	sim_destroy(sim);
}

static int cql_release_fn(void *arg)
{
	struct cql_client *c = arg;

	rdlock_proto_cql.release(&c->cfg, &c->t);
	complete(&c->done);
	return 0;
}

/* A client of the layout 2 entries, 2 version bits. */
static void cql_client_init_narrow(struct cql_client *c, struct proto_sim *sim,
				   int node, enum rdlock_mode mode)
{
	cql_client_init(c, sim, node, mode);
	c->cfg.cql_cap_bits = 1;
	c->cfg.cql_ver_bits = 2;
}

/* Until client @c holds the lock (its grant numbered), for 10 s at most. */
static bool cql_wait_granted(struct cql_client *c)
{
	unsigned long until = jiffies + 10 * HZ;

	while (!READ_ONCE(c->seq)) {
		if (time_after(jiffies, until))
			return false;
		usleep_range(5000, 6000);
	}
	return true;
}

/*
 * An idle reset under a slow releaser. 2 entries, 2 version bits: a
 * release that leaves the queue empty from position 2 on resets the lock,
 * and positions start again at 0. Node 0 holds at position 2, a writer of
 * node 1 waits at 3; node 0 dequeues, but its READ of that entry is held.
 * The waiter's liveness check grants it, it releases, and the lock is
 * reset idle. In the new queue another writer of node 0 holds at 2 and
 * one of node 1 waits at 3; then the held READ goes on and finds that
 * waiter's entry, valid for position 3, and the old releaser notifies
 * it. Before idle resets moved
 * every node's reset count, that notification granted the waiter beside
 * the holder; now it is dropped as stale (exactly one), and the waiter is
 * granted after the holder.
 */
static void cql_idle_reset_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c, *x, *v, *a, *d, *w;
	struct task_struct *rel;
	struct cql_layout l;
	s64 stale;

	cql_layout_init(&l, 1, 2);
	c = kunit_kcalloc(test, 5, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	x = &c[0];
	v = &c[1];
	a = &c[2];
	d = &c[3];
	w = &c[4];
	atomic_set(&cql_peak, 0);
	cql_set_header(sim, cql_hdr_pack(&l, 2, 0, 0, 0));
	cql_client_init_narrow(x, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&x->cfg, &x->t, 0), 0);
	cql_client_init_narrow(v, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	v->cfg.cql_stuck_ms = 200;	/* a liveness check every 51 ms */
	cql_client_start(test, v);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued_l(sim, &l, 2));
	WRITE_ONCE(sim->read_hold, 1);
	rel = kthread_run(cql_release_fn, x, "rdlock_cql_rel");
	KUNIT_ASSERT_FALSE(test, IS_ERR(rel));
	/* Granted by its liveness check; its release resets the lock. */
	wait_for_completion(&v->done);
	KUNIT_EXPECT_EQ(test, v->ret, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&v->stats.version_resets), 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), 0ULL);
	/* The new queue: node 0 holds at 2, node 1 waits at 3. */
	cql_client_init_narrow(a, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&a->cfg, &a->t, 0), 0);
	rdlock_proto_cql.release(&a->cfg, &a->t);
	cql_client_init_narrow(a, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&a->cfg, &a->t, 0), 0);
	/* One client per node and lock (the gate): node 0's is out. */
	cql_client_init_narrow(d, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	d->hold_ms = 500;
	cql_client_start(test, d);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued_l(sim, &l, 2));
	rdlock_proto_cql.release(&a->cfg, &a->t);
	KUNIT_ASSERT_TRUE(test, cql_wait_granted(d));
	cql_client_init_narrow(w, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	cql_client_start(test, w);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued_l(sim, &l, 2));
	KUNIT_EXPECT_EQ(test, cql_hdr_qhead(&l, cql_header(sim)), 2U);
	/* Node 0's handover goes on, with its view of the old queue. */
	stale = atomic64_read(&rdlock_proto_stats.notify_stale);
	WRITE_ONCE(sim->read_hold, 0);
	wake_up_all(&sim->hold_wq);
	wait_for_completion(&x->done);
	flush_work(&sim->msg_work);
	KUNIT_EXPECT_EQ(test, atomic64_read(&rdlock_proto_stats.notify_stale) -
			stale, 1LL);
	wait_for_completion(&d->done);
	wait_for_completion(&w->done);
	KUNIT_EXPECT_EQ(test, d->ret, 0);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_GT(test, w->seq, d->seq);
	KUNIT_EXPECT_EQ(test, atomic_read(&cql_peak), 1);
	/* Position 4 idle: reset again. */
	KUNIT_EXPECT_EQ(test, cql_header(sim), 0ULL);
	sim_destroy(sim);
}

/*
 * The all-ones lap. 2 entries, 2 version bits: positions 6 and 7 are in
 * lap 3, whose version is the initial one. Node 0 holds at position 5; a
 * reader of node 1 enqueues at 6: it is not queued there (no WRITE), its
 * node's gate closes, and the reset that lap asks for is claimed at once,
 * by node 1, while node 0 still holds; the holder's release meets the
 * reset field, and the reader is then granted at position 0 of the new
 * queue: exactly FAA, READ, FAA. Before, the reader waited at 6 and
 * nothing was claimed until the holder's release, whose claim, in the
 * background, could come after enough dequeues to carry qhead through
 * the wrap.
 */
static void cql_lap_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 version = cql_resets(RDLOCK_CQL_RESET_VERSION);
	unsigned long until = jiffies + 10 * HZ;
	struct cql_client *c, *h, *r;
	struct cql_layout l;
	u64 hdr;

	cql_layout_init(&l, 1, 2);
	c = kunit_kcalloc(test, 2, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = &c[0];
	r = &c[1];
	cql_set_header(sim, cql_hdr_pack(&l, 5, 0, 0, 0));
	cql_client_init_narrow(h, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	cql_client_init_narrow(r, sim, 1, RDLOCK_MODE_SHARED);
	cql_client_start(test, r);
	/* Claimed by node 1 while node 0 holds: H and R counted. */
	while (!cql_hdr_resetting(hdr = cql_header(sim)) &&
	       time_before(jiffies, until))
		usleep_range(5000, 6000);
	KUNIT_EXPECT_TRUE(test, cql_hdr_resetting(hdr));
	KUNIT_EXPECT_EQ(test, cql_hdr_reset_id(hdr), 2U);
	KUNIT_EXPECT_EQ(test, cql_hdr_qsize(&l, hdr), 2U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(r->seq), 0);
	rdlock_proto_cql.release(&h->cfg, &h->t);
	wait_for_completion(&r->done);
	KUNIT_EXPECT_EQ(test, r->ret, 0);
	KUNIT_EXPECT_EQ(test, r->acq_ops, 3U);
	KUNIT_EXPECT_EQ(test, atomic64_read(&r->stats.cql_reset_aborts), 1LL);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_VERSION) - version,
			1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 1, 0, 0, 0));
	sim_destroy(sim);
}

/* One uncontended acquisition of node @node from qhead 1: an idle reset. */
static void cql_idle_reset_by(struct kunit *test, struct proto_sim *sim,
			      struct cql_client *c, int node)
{
	struct cql_layout l;

	cql_layout_init(&l, 1, 2);
	cql_set_header(sim, cql_hdr_pack(&l, 1, 0, 0, 0));
	cql_client_init_narrow(c, sim, node, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t, 0), 0);
	rdlock_proto_cql.release(&c->cfg, &c->t);
	KUNIT_EXPECT_EQ(test, atomic64_read(&c->stats.version_resets), 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), 0ULL);
}

/*
 * A reset signal that comes late, after a later reset: node 1 resets the
 * lock (idle) and signals every node, then node 2 does. A copy of node
 * 1's signal to node 0 then arrives once more (signals of different
 * claimers travel on different connections) while a waiter of node 0,
 * queued since, waits behind a holder. Node 0 must not handle it: the
 * waiter stays queued and is granted once after the holder, exactly FAA
 * and WRITE, never aborted. Before, node 0 took it for a new claim and
 * aborted the waiter, whose FAA stayed counted with nobody behind it: the
 * waiter, enqueued again behind that, timed out (5 s here; a 30 s stuck
 * reset would have freed the lock).
 */
static void cql_stale_signal_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c, *h, *w;
	struct cql_layout l;

	cql_layout_init(&l, 1, 2);
	c = kunit_kcalloc(test, 2, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = &c[0];
	w = &c[1];
	cql_idle_reset_by(test, sim, h, 1);
	cql_idle_reset_by(test, sim, h, 2);
	cql_client_init_narrow(h, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
	cql_client_init_narrow(w, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	w->timeout_ms = 5000;
	cql_client_start(test, w);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued_l(sim, &l, 2));
	/* Node 1's last message to node 0: the first reset's signal. */
	sim_replay(sim, 1, 0);
	flush_work(&sim->msg_work);
	rdlock_proto_cql.release(&h->cfg, &h->t);
	wait_for_completion(&w->done);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_EQ(test, w->acq_ops, 2U);
	KUNIT_EXPECT_EQ(test, atomic64_read(&w->stats.cql_reset_aborts), 0LL);
	sim_destroy(sim);
	/* Position 2 idle after the waiter: reset. */
	KUNIT_EXPECT_EQ(test, cql_header(sim), 0ULL);
}

/*
 * A reset signal makes a gate, which keeps the lock's reset count for as
 * long as the registry lives, only for a lock of the table its home has
 * now: a peer's signals for other tables grew a node's gates without
 * bound. Node 1 resets the lock idle (homed on node 0) and signals node
 * 2; node 2 restarts (a new registry, no gate) and the signal arrives
 * again: while node 0's table is another one, it is refused, counted in
 * cql_signals_refused, no gate made and unanswered; while node 2 knows no
 * table of node 0 (it never reached it), it is answered, no gate made, so
 * that the claim does not wait for a node that may never reach the home;
 * with node 0's table back, it makes the lock's gate and is answered.
 */
struct cql_signal_case {
	u64 home_table;		/* node 0's table as node 2 knows it; 0: none */
	unsigned int gates;	/* node 2's gates after */
	s64 refused, answered;	/* since the first replay */
};

/* Node 1's last signal to node 2 arrives again, as @sc says node 0 is. */
static void cql_signal_again(struct kunit *test, struct proto_sim *sim,
			     const struct cql_signal_case *sc, s64 refused,
			     s64 sent)
{
	spin_lock(&sim->lock);
	sim->incarnation[SIM_LOCK_NODE] = sc->home_table;
	spin_unlock(&sim->lock);
	sim_replay(sim, 1, 2);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, rdlock_cql_gate_count(&sim->nodes[2].waiters),
			sc->gates);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&rdlock_proto_stats.cql_signals_refused) -
			refused, sc->refused);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->msgs_sent) - sent,
			sc->answered);
}

static void cql_signal_bound_test(struct kunit *test)
{
	static const struct cql_signal_case cases[] = {
		{ SIM_INCARNATION + 1, 0, 1, 0 },	/* another table */
		{ 0, 0, 1, 1 },				/* none known */
		{ SIM_INCARNATION, 1, 1, 2 },		/* the home's */
	};
	struct proto_sim *sim = sim_alloc(test);
	struct rdlock_cql_waiters *ws = &sim->nodes[2].waiters;
	s64 refused, sent;
	struct cql_client *c;
	unsigned int i;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cql_idle_reset_by(test, sim, c, 1);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, rdlock_cql_gate_count(ws), 1U);
	rdlock_cql_waiters_destroy(ws);
	sim_node_init(sim, 2);
	KUNIT_EXPECT_EQ(test, rdlock_cql_gate_count(ws), 0U);

	refused = atomic64_read(&rdlock_proto_stats.cql_signals_refused);
	sent = atomic64_read(&sim->msgs_sent);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		cql_signal_again(test, sim, &cases[i], refused, sent);
	sim_destroy(sim);
}

/* @h, of node 2, takes the lock exclusively (granted at its enqueue). */
static void cql_node2_holds(struct kunit *test, struct proto_sim *sim,
			    struct cql_client *h)
{
	cql_client_init(h, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&h->cfg, &h->t, 0), 0);
}

/*
 * Node 2 takes the lock exclusively (granted at its enqueue, so no entry
 * names it) and fails (@down: cut off and declared down) or is only cut
 * off; then writers of nodes 0 and 1 queue behind it, with a stuck time
 * of @stuck_ms (0: the default). Returns the three clients, node 2's last.
 */
static struct cql_client *cql_writers_behind(struct kunit *test,
					     struct proto_sim *sim, bool down,
					     u32 stuck_ms)
{
	struct cql_client *c = kunit_kcalloc(test, 3, sizeof(*c), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cql_node2_holds(test, sim, &c[2]);
	if (down)
		sim_fail_node(sim, 2, true);
	else
		WRITE_ONCE(sim->cut[2], true);
	for (i = 0; i < 2; i++) {
		cql_client_init(&c[i], sim, i, RDLOCK_MODE_EXCLUSIVE);
		c[i].cfg.cql_stuck_ms = stuck_ms;
		cql_client_start(test, &c[i]);
		KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, 2 + i));
	}
	return c;
}

/*
 * A holder's node is gone: node 2 takes the lock exclusively
 * (granted at its enqueue, so no entry names it) and fails (cut off and
 * declared down). Writers of
 * nodes 0 and 1 queue behind it; one of them finds the header unchanged
 * for the stuck time with nobody alive at the head, and resets: node 2 is
 * not awaited, both waiters are aborted, enqueue again and are granted,
 * each exactly once. Exactly one reset (the other waiter's claim fails on
 * the changed header). Then node 2 comes back and releases: its dequeue
 * finds a header that does not count it (overwrite), and the lock is
 * reset once more, ending empty.
 */
static void cql_stuck_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 stuck = cql_resets(RDLOCK_CQL_RESET_STUCK);
	s64 over = cql_resets(RDLOCK_CQL_RESET_OVERWRITE);
	struct cql_client *c, *h;
	struct cql_layout l;
	s64 aborts = 0;
	int i;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	c = cql_writers_behind(test, sim, true, 200);
	h = &c[2];
	for (i = 0; i < 2; i++) {
		wait_for_completion(&c[i].done);
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_GT(test, c[i].seq, 0);
		aborts += atomic64_read(&c[i].stats.cql_reset_aborts);
	}
	KUNIT_EXPECT_NE(test, c[0].seq, c[1].seq);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_STUCK) - stuck, 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 1LL);
	KUNIT_EXPECT_EQ(test, aborts, 2LL);
	/* Reset to 0, then both granted and released. */
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 2, 0, 0, 0));
	/* The node taken for gone comes back and releases. */
	sim_fail_node(sim, 2, false);
	rdlock_proto_cql.release(&h->cfg, &h->t);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_OVERWRITE) - over, 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 2LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), (u64)CQL_HDR_INIT);
	sim_destroy(sim);
}

static int cql_forget_excl(void *arg)
{
	(*(int *)arg)++;
	return 0;
}

/* The home (@cfg) forgets node 2 in @home's lock, counting in @excl. */
static int cql_forget(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_ticket *home, int *excl)
{
	return rdlock_proto_cql.forget_node(cfg, home, 2, cql_forget_excl,
					    excl);
}

/*
 * A holder's node is declared down and its home forgets it: node 2 holds
 * the lock exclusive (granted at its enqueue: no entry names it), fails,
 * and writers of nodes 0 and 1 queue behind it, with the default stuck
 * time (30 s: no waiter resets the lock during the test). The home's
 * forget_node marks the value block (nobody alive is known at the head)
 * and resets the lock in the background without waiting for node 2: both
 * writers are aborted, enqueue again and are granted, each once; exactly
 * one reset, of cause down. An idle lock is not reset.
 */
static void cql_forget_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 down = cql_resets(RDLOCK_CQL_RESET_DOWN);
	s64 stuck = cql_resets(RDLOCK_CQL_RESET_STUCK);
	struct rdlock_ticket home = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
	};
	struct cql_client *c, *h;
	int excl = 0, i;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cql_client_init(c, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_EXPECT_EQ(test, cql_forget(&c->cfg, &home, &excl), 0);
	c = cql_writers_behind(test, sim, true, 0);
	h = &c[2];
	KUNIT_EXPECT_EQ(test, cql_forget(&c[0].cfg, &home, &excl), 1);
	KUNIT_EXPECT_EQ(test, excl, 1);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&c[i].done,
								  20 * HZ),
				0UL);
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_GT(test, c[i].seq, 0);
		KUNIT_EXPECT_EQ(test,
				atomic64_read(&c[i].stats.cql_reset_aborts),
				1LL);
	}
	KUNIT_EXPECT_NE(test, c[0].seq, c[1].seq);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_DOWN) - down, 1LL);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_STUCK) - stuck, 0LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 1LL);
	/* Node 2 comes back and releases: the overwrite reset, as ever. */
	sim_fail_node(sim, 2, false);
	rdlock_proto_cql.release(&h->cfg, &h->t);
	sim_destroy(sim);
}

/*
 * The reset a node's declaration owes waits for the live holders without
 * a worker: node 1 reads (granted at its enqueue: no entry names it) and
 * forgets node 2, which held nothing, as a home does. Its reset claims
 * the lock and signals; node 1 answers once its reader left. Meanwhile
 * the reset is parked between steps (before, a worker slept in it for as
 * long as the reader held), and the answer runs its next step: one
 * reset, of cause down, and the lock is free after it.
 */
static void cql_reset_parked_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	s64 down = cql_resets(RDLOCK_CQL_RESET_DOWN), kicks;
	struct rdlock_ticket home = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
	};
	u32 resetting = rdlock_proto_resetting(NULL);
	int excl = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cql_client_init(c, sim, 1, RDLOCK_MODE_SHARED);
	KUNIT_ASSERT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t, 0), 0);
	kicks = atomic64_read(&rdlock_proto_stats.finish_kicks);
	KUNIT_EXPECT_EQ(test, cql_forget(&c->cfg, &home, &excl), 1);
	KUNIT_EXPECT_EQ(test, excl, 1);
	KUNIT_EXPECT_TRUE(test, sim_resets_parked(resetting + 1));
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_DOWN), down);
	KUNIT_EXPECT_TRUE(test, cql_hdr_resetting(cql_header(sim)));

	rdlock_proto_cql.release(&c->cfg, &c->t);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_resetting(NULL), resetting);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_DOWN) - down, 1LL);
	KUNIT_EXPECT_GE(test, atomic64_read(&rdlock_proto_stats.finish_kicks) -
			kicks, 1LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), CQL_HDR_INIT);
	cql_client_init(c, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_EXPECT_EQ(test, rdlock_proto_cql.acquire(&c->cfg, &c->t,
						       jiffies + 10 * HZ), 0);
	rdlock_proto_cql.release(&c->cfg, &c->t);
	sim_destroy(sim);
}

/*
 * A waiter whose lock's home is declared down ends, lost: node 2 takes
 * the lock exclusively, a writer of node 1 queues behind it (the default
 * stuck time, 30 s: no reset in the test), then the home, node 0, fails:
 * cut off and declared down. Its queue grants nobody any more, so the
 * writer's next liveness check (RDLOCK_CQL_CHECK_MS) ends it with
 * -ESTALE, its ticket lost; the holder's ticket is untouched. The home
 * comes back for the holder's release, whose notification of the next
 * entry finds no waiter.
 */
static void cql_home_down_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c = kunit_kcalloc(test, 2, sizeof(*c), GFP_KERNEL);
	s64 stale;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cql_node2_holds(test, sim, &c[0]);
	cql_client_init(&c[1], sim, 1, RDLOCK_MODE_EXCLUSIVE);
	cql_client_start(test, &c[1]);
	KUNIT_ASSERT_TRUE(test, cql_wait_queued(sim, 2));
	KUNIT_EXPECT_FALSE(test, completion_done(&c[1].done));

	sim_fail_node(sim, SIM_LOCK_NODE, true);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&c[1].done, 10 * HZ),
			0UL);
	KUNIT_EXPECT_EQ(test, c[1].ret, -ESTALE);
	KUNIT_EXPECT_EQ(test, c[1].t.state, RDLOCK_TICKET_LOST);
	KUNIT_EXPECT_EQ(test, c[0].t.state, RDLOCK_TICKET_GRANTED);

	stale = atomic64_read(&rdlock_proto_stats.notify_stale);
	sim_fail_node(sim, SIM_LOCK_NODE, false);
	rdlock_proto_cql.release(&c[0].cfg, &c[0].t);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, c[0].t.state, RDLOCK_TICKET_DONE);
	/* The release's notification finds the lost waiter gone. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&rdlock_proto_stats.notify_stale) -
			stale, 1LL);
}

/*
 * The same, hierarchical task-fair, with a second writer of node 1
 * waiting on its node behind the first one's entry: when the home is
 * declared down both end with -ESTALE, their tickets lost, the local
 * waiter too (it is not handed a lock nobody was granted).
 */
static void cql_hier_home_down_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	struct cql_client *c = kunit_kcalloc(test, 3, sizeof(*c), GFP_KERNEL);
	struct cql_layout l;
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	cql_policy = RDLOCK_CQL_TASK_FAIR;
	cql_node2_holds(test, sim, &c[2]);
	for (i = 0; i < 2; i++) {
		cql_client_init(&c[i], sim, 1, RDLOCK_MODE_EXCLUSIVE);
		cql_client_start(test, &c[i]);
		/* The second waits on node 1, the header unchanged. */
		KUNIT_ASSERT_TRUE(test, cql_hier_queued(sim, &c[i], 2));
	}
	KUNIT_EXPECT_EQ(test, cql_hdr_qsize(&l, cql_header(sim)), 2U);

	sim_fail_node(sim, SIM_LOCK_NODE, true);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_GT(test,
				wait_for_completion_timeout(&c[i].done, 10 * HZ),
				0UL);
		KUNIT_EXPECT_EQ(test, c[i].ret, -ESTALE);
		KUNIT_EXPECT_EQ(test, c[i].t.state, RDLOCK_TICKET_LOST);
	}
	KUNIT_EXPECT_EQ(test, c[2].t.state, RDLOCK_TICKET_GRANTED);

	sim_fail_node(sim, SIM_LOCK_NODE, false);
	rdlock_proto_cql.release(&c[2].cfg, &c[2].t);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, c[2].t.state, RDLOCK_TICKET_DONE);
}

/*
 * Wait until a reset signal was sent to @node (nothing else is sent to
 * it in cql_partition_test) and delivered.
 */
static bool cql_signal_delivered(struct proto_sim *sim, u32 node)
{
	unsigned long until = jiffies + 30 * HZ;
	bool sent = false, queued = true;
	u32 i;

	while (time_before(jiffies, until)) {
		spin_lock_bh(&sim->msg_lock);
		for (i = 0; i < SIM_NODES; i++)
			sent |= i != node && sim->last_msg[i][node].len;
		queued = !list_empty(&sim->msgs);
		spin_unlock_bh(&sim->msg_lock);
		if (sent && !queued)
			break;
		usleep_range(5000, 6000);
	}
	flush_work(&sim->msg_work);
	return sent && !queued;
}

/*
 * A holder behind a partition keeps its lock: node 2 takes the lock
 * exclusively (granted at its enqueue: no entry names it) and is cut
 * off, not declared down. Writers of nodes 0 and 1 queue behind it; one
 * finds the lock stuck (no entry at the head) and claims a reset, whose
 * signal cannot reach node 2. Node 2 is awaited: for 4 s after the claim
 * (twice what a send retries) neither writer is granted and no reset
 * completes. The link heals: node 2 hears the signal but answers only
 * once its holder is out; still nobody is
 * granted. Node 2 releases: the reset completes, once, and both writers
 * are granted, each once; no overwrite reset (node 2's release was
 * counted in the queue it was in).
 */
static void cql_partition_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 stuck = cql_resets(RDLOCK_CQL_RESET_STUCK);
	s64 over = cql_resets(RDLOCK_CQL_RESET_OVERWRITE);
	struct cql_client *c, *h;
	unsigned long until;
	int i;

	c = cql_writers_behind(test, sim, false, 200);
	h = &c[2];
	/* The event: a reset claimed. */
	until = jiffies + 30 * HZ;
	while (!cql_hdr_resetting(cql_header(sim)) && time_before(jiffies, until))
		usleep_range(5000, 6000);
	KUNIT_ASSERT_TRUE(test, cql_hdr_resetting(cql_header(sim)));
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c[i].done,
								  2 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 0LL);

	/* Healed: node 2 hears the reset, and holds on. */
	WRITE_ONCE(sim->cut[2], false);
	KUNIT_ASSERT_TRUE(test, cql_signal_delivered(sim, 2));
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_FALSE(test, completion_done(&c[i].done));
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 0LL);

	rdlock_proto_cql.release(&h->cfg, &h->t);
	for (i = 0; i < 2; i++) {
		wait_for_completion(&c[i].done);
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_GT(test, c[i].seq, 0);
	}
	KUNIT_EXPECT_NE(test, c[0].seq, c[1].seq);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_STUCK) - stuck, 1LL);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_OVERWRITE) - over, 0LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 1LL);
	sim_destroy(sim);
}

/*
 * Hierarchical, a reset while clients wait on their node: node 2 holds and
 * fails; a writer of node 0 enqueues, a second one of node 0 waits on its
 * node, a writer of node 1 enqueues. The stuck reset aborts the two
 * entries (not the local waiter, which has none) and they enqueue again;
 * all three are granted once; every entry after the reset was dequeued
 * (qhead: 3 less the local handovers). Node 2 comes back and releases:
 * the overwrite reset, as flat.
 */
static void cql_hier_stuck_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 stuck = cql_resets(RDLOCK_CQL_RESET_STUCK);
	s64 over = cql_resets(RDLOCK_CQL_RESET_OVERWRITE);
	s64 handovers = cql_local_handovers();
	struct cql_client *c, *h;
	struct cql_layout l;
	s64 aborts = 0;
	int i;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	cql_policy = RDLOCK_CQL_TASK_FAIR;
	c = kunit_kcalloc(test, 4, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	h = &c[3];
	cql_node2_holds(test, sim, h);
	sim_fail_node(sim, 2, true);
	for (i = 0; i < 3; i++) {
		cql_client_init(&c[i], sim, i == 2, RDLOCK_MODE_EXCLUSIVE);
		c[i].cfg.cql_stuck_ms = 200;
		cql_client_start(test, &c[i]);
		/* Node 0's second writer waits on its node. */
		KUNIT_ASSERT_TRUE(test, cql_hier_queued(sim, &c[i],
							i ? 3 * (i - 1) : 2));
	}
	for (i = 0; i < 3; i++) {
		wait_for_completion(&c[i].done);
		KUNIT_EXPECT_EQ(test, c[i].ret, 0);
		KUNIT_EXPECT_GT(test, c[i].seq, 0);
		aborts += atomic64_read(&c[i].stats.cql_reset_aborts);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&c[1].stats.cql_reset_aborts), 0LL);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_STUCK) - stuck, 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 1LL);
	KUNIT_EXPECT_EQ(test, aborts, 2LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim),
			cql_hdr_pack(&l, 3 - (cql_local_handovers() - handovers),
				     0, 0, 0));
	sim_fail_node(sim, 2, false);
	rdlock_proto_cql.release(&h->cfg, &h->t);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_OVERWRITE) - over, 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 2LL);
	KUNIT_EXPECT_EQ(test, cql_header(sim), (u64)CQL_HDR_INIT);
	sim_destroy(sim);
}

/*
 * A claimer that fails mid-reset (appendix B): the header shows a
 * reset claimed by node 2, which is gone. A writer of node 0 meets it,
 * waits, finds node 2 unreachable after the takeover time, claims the
 * reset in its place, completes it and is granted; exactly one takeover.
 */
static void cql_takeover_test(struct kunit *test)
{
	struct proto_sim *sim = sim_alloc(test);
	s64 takeovers = cql_resets(RDLOCK_CQL_RESET_TAKEOVER);
	struct cql_layout l;
	struct cql_client *c;

	cql_layout_init(&l, CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT);
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	/* Node 2's reset with one client of its node still counted. */
	cql_set_header(sim, cql_hdr_pack(&l, 7, 1, 1, 3));
	sim_fail_node(sim, 2, true);
	cql_client_init(c, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	c->cfg.cql_stuck_ms = 200;
	cql_client_start(test, c);
	wait_for_completion(&c->done);
	KUNIT_EXPECT_EQ(test, c->ret, 0);
	KUNIT_EXPECT_EQ(test, cql_resets(RDLOCK_CQL_RESET_TAKEOVER) - takeovers,
			1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->resets_done), 1LL);
	/* Granted after the reset, at position 0; released. */
	KUNIT_EXPECT_EQ(test, cql_header(sim), cql_hdr_pack(&l, 1, 0, 0, 0));
	sim_destroy(sim);
}

static struct kunit_case proto_cql_cases[] = {
	KUNIT_CASE(cql_fifo_test),
	KUNIT_CASE(cql_readers_test),
	KUNIT_CASE(cql_release_test),
	KUNIT_CASE(cql_starve_test),
	KUNIT_CASE(cql_abandon_test),
	KUNIT_CASE(cql_ops_test),
	KUNIT_CASE(cql_version_reset_test),
	KUNIT_CASE(cql_idle_reset_test),
	KUNIT_CASE(cql_lap_test),
	KUNIT_CASE(cql_stale_signal_test),
	KUNIT_CASE(cql_signal_bound_test),
	KUNIT_CASE(cql_stuck_test),
	KUNIT_CASE(cql_partition_test),
	KUNIT_CASE(cql_forget_test),
	KUNIT_CASE(cql_reset_parked_test),
	KUNIT_CASE(cql_home_down_test),
	KUNIT_CASE(cql_takeover_test),
	KUNIT_CASE(cql_hier_fifo_test),
	KUNIT_CASE(cql_hier_local_test),
	KUNIT_CASE(cql_hier_join_test),
	KUNIT_CASE(cql_hier_starve_tf_test),
	KUNIT_CASE(cql_hier_starve_pf_test),
	KUNIT_CASE(cql_hier_stuck_test),
	KUNIT_CASE(cql_hier_home_down_test),
	{}
};

/* Every case starts with flat CQL clients. */
static int proto_cql_init(struct kunit *test)
{
	cql_policy = RDLOCK_CQL_FLAT;
	return 0;
}

static struct kunit_suite proto_cql_suite = {
	.name = "rdlock_proto_cql",
	.init = proto_cql_init,
	.test_cases = proto_cql_cases,
};

kunit_test_suite(proto_cql_suite);
