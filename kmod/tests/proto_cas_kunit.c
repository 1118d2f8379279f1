// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdlock_proto_cas: the CAS spinlock (proto_cas.c) on the
 * simulated cluster (proto_sim.h): operations whose outcome is unknown,
 * the READ a ticket asks for, a reader's guess of the word, and the home's
 * forgetting of a node that is down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "tests/proto_sim.h"

#define CAS_OWNER(node)	((u64)(node) << 56)

/*
 * CAS spinlock: operations whose outcome is unknown (failed after they
 * were sent, executed or not: the verbs backend cannot tell) are settled
 * by their own node with a READ of the word, exactly. Before, each one
 * orphaned its ticket: an acquisition failed while the word kept its
 * writer bit for good, a release left it held.
 */
static void cas_unknown_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_caslock };
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg *cfg1, *cfg2;
	struct rdlock_ticket w = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = RDLOCK_MODE_EXCLUSIVE,
	};
	struct rdlock_ticket r1 = w, r2 = w;
	struct proto_sim *sim = sim_alloc(test);
	atomic_t pin = ATOMIC_INIT(0);
	u64 *word = &sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];

	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	cfg1 = kunit_kzalloc(test, sizeof(*cfg1), GFP_KERNEL);
	cfg2 = kunit_kzalloc(test, sizeof(*cfg2), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cfg1);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cfg2);
	sim_cfg(cfg1, &p, &sim->nodes[1], stats);
	sim_cfg(cfg2, &p, &sim->nodes[2], stats);
	r1.mode = RDLOCK_MODE_SHARED;
	r2.mode = RDLOCK_MODE_SHARED;

	/* The CAS took the lock, its answer was lost: CAS, READ, granted. */
	atomic_set(&sim->reset_next, 1);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &w, 0), 0);
	KUNIT_EXPECT_EQ(test, w.state, RDLOCK_TICKET_GRANTED);
	KUNIT_EXPECT_EQ(test, w.remote_ops, 2U);
	KUNIT_EXPECT_EQ(test, *word, BIT_ULL(63) | CAS_OWNER(1));
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->cas_settles), 1LL);

	/* Excluded meanwhile: a TRY of node 2 fails at its first CAS. */
	KUNIT_EXPECT_EQ(test, p.ops->acquire(cfg2, &r1, jiffies), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, r1.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, r1.state, RDLOCK_TICKET_DONE);

	/* The release's FAA was done, its answer lost: FAA, READ, done. */
	atomic_set(&sim->reset_next, 1);
	p.ops->release(cfg1, &w);
	KUNIT_EXPECT_EQ(test, w.state, RDLOCK_TICKET_DONE);
	KUNIT_EXPECT_EQ(test, w.remote_ops, 4U);
	KUNIT_EXPECT_EQ(test, *word, 0ULL);

	/* A CAS lost unexecuted: CAS, READ (no bit of ours), CAS. */
	r1.remote_ops = 0;
	atomic_set(&sim->lose_next, 1);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg2, &r1, 0), 0);
	KUNIT_EXPECT_EQ(test, r1.remote_ops, 3U);
	KUNIT_EXPECT_EQ(test, *word, BIT_ULL(2));
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->cas_settles), 3LL);

	/* A second reader of node 2 shares its bit: no remote operation. */
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg2, &r2, 0), 0);
	KUNIT_EXPECT_EQ(test, r2.remote_ops, 0U);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->cas_local_shares), 1LL);

	/* Node 1's exclusive TRY fails on the bit; node 2's first reader leaves. */
	KUNIT_EXPECT_EQ(test, p.ops->acquire(cfg1, &w, jiffies), -ETIMEDOUT);
	p.ops->release(cfg2, &r1);
	KUNIT_EXPECT_EQ(test, r1.state, RDLOCK_TICKET_DONE);
	KUNIT_EXPECT_EQ(test, r1.remote_ops, 3U);
	KUNIT_EXPECT_EQ(test, *word, BIT_ULL(2));

	/* The last one's posted FAA was done, its completion failed. */
	sim->post_reset_pct = 100;
	r2.post = true;
	r2.pin = &pin;
	p.ops->release(cfg2, &r2);
	KUNIT_EXPECT_EQ(test, r2.state, RDLOCK_TICKET_RELEASING);
	rdlock_proto_flush();
	KUNIT_EXPECT_EQ(test, atomic_read(&pin), 0);
	KUNIT_EXPECT_EQ(test, *word, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->posted_failed), 1LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->cas_settles), 4LL);
	sim->post_reset_pct = 0;

	/* Free: one CAS. Nothing orphaned, no record left. */
	w.remote_ops = 0;
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &w, 0), 0);
	KUNIT_EXPECT_EQ(test, w.remote_ops, 1U);
	p.ops->release(cfg1, &w);
	KUNIT_EXPECT_EQ(test, *word, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->tickets[RDLOCK_TICKET_ORPHANED]), 0LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->tickets[RDLOCK_TICKET_DONE]), 6LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->ticket_bad_moves), 0LL);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_cas_holds(), 0U);
}

#define CAS_W	BIT_ULL(63)
#define CAS_U	BIT_ULL(62)

/*
 * The cas_read cases: a CAS spinlock acquisition whose ticket asks for a
 * READ after the grant (a value block): the word before, how the CAS's
 * operations fail, what must come of it.
 */
struct cas_read_case {
	const char *desc;
	u64 word;
	enum rdlock_mode mode;
	bool try;		/* a TRY: no wait */
	bool read_fails;	/* every READ after an atomic fails */
	bool answer_lost;	/* the first CAS done, its answer lost */
	int ret;
	bool got;		/* the READ came with the grant */
	u32 remote_ops;
	u64 left;
};

static const struct cas_read_case cas_read_cases[] = {
	{ "free, exclusive", 0, RDLOCK_MODE_EXCLUSIVE, false, false, false,
	  0, true, 1, CAS_W | CAS_OWNER(1) },
	/* A reader's first guess is the home's (node 0's) reader bit. */
	{ "beside the home's reader", BIT_ULL(0), RDLOCK_MODE_SHARED, false,
	  false, false, 0, true, 1, BIT_ULL(0) | BIT_ULL(1) },
	/* The guess misses: the second CAS. */
	{ "free, shared", 0, RDLOCK_MODE_SHARED, false, false, false, 0, true,
	  2, BIT_ULL(1) },
	{ "beside another reader", BIT_ULL(2), RDLOCK_MODE_SHARED, false,
	  false, false, 0, true, 2, BIT_ULL(1) | BIT_ULL(2) },
	{ "READ failed after the CAS", BIT_ULL(0), RDLOCK_MODE_SHARED, false,
	  true, false, 0, false, 1, BIT_ULL(0) | BIT_ULL(1) },
	/* Settled with a plain READ of the word: granted, nothing read. */
	{ "answer lost", 0, RDLOCK_MODE_EXCLUSIVE, false, false, true, 0,
	  false, 2, CAS_W | CAS_OWNER(1) },
	{ "busy, a TRY", CAS_W | CAS_OWNER(2), RDLOCK_MODE_SHARED, true,
	  false, false, -ETIMEDOUT, false, 1, CAS_W | CAS_OWNER(2) },
};

static void cas_read_desc(const struct cas_read_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cas_read, cas_read_cases, cas_read_desc);

/*
 * The READ a ticket asks for rides with the CAS that takes the lock (one
 * CAS_READ, no operation of its own), and is reported only when that CAS
 * took it and every slot was read after it: else the caller READs.
 */
static void cas_read_test(struct kunit *test)
{
	const struct cas_read_case *c = test->param_value;
	const struct sim_params p = { .ops = &rdlock_proto_caslock };
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg *cfg;
	struct proto_sim *sim = sim_alloc(test);
	u64 *table = sim->table[SIM_LOCK_NODE];
	u64 vals[RDLOCK_XPORT_CAS_READ_MAX] = {};
	struct rdlock_ticket t = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = c->mode,
		.read_slot = SIM_LOCK_SLOT + 1,
		.read_count = RDLOCK_XPORT_CAS_READ_MAX, .read_vals = vals,
	};
	u32 i;

	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	cfg = kunit_kzalloc(test, sizeof(*cfg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cfg);
	sim_cfg(cfg, &p, &sim->nodes[1], stats);
	for (i = 0; i < t.read_count; i++)
		table[t.read_slot + i] = 0x5100 + i;
	table[SIM_LOCK_SLOT] = c->word;
	if (c->read_fails)
		sim->read_fail_pct = 100;
	if (c->answer_lost)
		atomic_set(&sim->reset_next, 1);

	KUNIT_EXPECT_EQ(test, p.ops->acquire(cfg, &t, c->try ? jiffies : 0),
			c->ret);
	KUNIT_EXPECT_EQ(test, t.read_got, c->got);
	KUNIT_EXPECT_EQ(test, t.remote_ops, c->remote_ops);
	KUNIT_EXPECT_EQ(test, table[SIM_LOCK_SLOT], c->left);
	/* No READ of its own: the first CAS of each try is a CAS_READ. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->ops[RDLOCK_XOP_CAS]), 0LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->ops[RDLOCK_XOP_CAS_READ]),
			(long long)c->remote_ops - c->answer_lost);
	for (i = 0; c->got && i < t.read_count; i++)
		KUNIT_EXPECT_EQ(test, vals[i], 0x5100ULL + i);
	sim->read_fail_pct = 0;
	if (!c->ret)
		p.ops->release(cfg, &t);
	KUNIT_EXPECT_EQ(test, table[SIM_LOCK_SLOT], c->word);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_cas_holds(), 0U);
}

/*
 * A reader's first CAS on a word it has no record of guesses the readers
 * it last saw in a word of the same home without a writer
 * (&rdlock_proto_cfg.cas_readers): one CAS when they are the same.
 */
static void cas_guess_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_caslock };
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg *cfg;
	struct proto_sim *sim = sim_alloc(test);
	u64 *table = sim->table[SIM_LOCK_NODE];
	const u64 readers = BIT_ULL(0) | BIT_ULL(2);
	struct rdlock_ticket t = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = RDLOCK_MODE_SHARED,
	};
	u64 *guess;

	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	cfg = kunit_kzalloc(test, sizeof(*cfg), GFP_KERNEL);
	guess = kunit_kcalloc(test, SIM_NODES, sizeof(*guess), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, guess);
	sim_cfg(cfg, &p, &sim->nodes[1], stats);
	cfg->cas_readers = guess;
	guess[SIM_LOCK_NODE] = BIT_ULL(SIM_LOCK_NODE);

	/* The home's bit guessed, node 2's missed: two CASes. */
	table[t.slot] = readers;
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg, &t, 0), 0);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 2U);
	KUNIT_EXPECT_EQ(test, guess[SIM_LOCK_NODE], readers);
	p.ops->release(cfg, &t);
	KUNIT_EXPECT_EQ(test, table[t.slot], readers);

	/* Another word of the home with the same readers: one. */
	t.slot = SIM_LOCK_SLOT + 4;
	t.remote_ops = 0;
	table[t.slot] = readers;
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg, &t, 0), 0);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	p.ops->release(cfg, &t);

	/* A writer's word leaves the guess as it was. */
	t.slot = SIM_LOCK_SLOT + 8;
	t.remote_ops = 0;
	table[t.slot] = CAS_W | CAS_OWNER(2);
	KUNIT_EXPECT_EQ(test, p.ops->acquire(cfg, &t, jiffies), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, guess[SIM_LOCK_NODE], readers);

	/* A free word taken: no readers seen, the next guess is 0. */
	t.slot = SIM_LOCK_SLOT + 12;
	t.mode = RDLOCK_MODE_EXCLUSIVE;
	t.remote_ops = 0;
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg, &t, 0), 0);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, guess[SIM_LOCK_NODE], 0ULL);
	p.ops->release(cfg, &t);
	KUNIT_EXPECT_EQ(test, table[t.slot], 0ULL);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_cas_holds(), 0U);
}

/* The forget_node cases: a word, the dead node, what must be left. */
struct cas_forget_case {
	const char *desc;
	u64 word;
	u32 dead;
	int ret;		/* 1: something taken out */
	u64 left;
	unsigned int excl_calls;	/* before_excl() calls */
};

static const struct cas_forget_case cas_forget_cases[] = {
	{ "idle", 0, 2, 0, 0, 0 },
	{ "readers 1 and 2", BIT_ULL(1) | BIT_ULL(2), 2, 1, BIT_ULL(1), 0 },
	{ "writer 2", CAS_W | CAS_OWNER(2), 2, 1, 0, 1 },
	{ "writer 1, dead 2", CAS_W | CAS_OWNER(1), 2, 0,
	  CAS_W | CAS_OWNER(1), 0 },
	{ "readers 0, 1 of writer 1, dead 1", CAS_W | CAS_OWNER(1) | BIT_ULL(1),
	  1, 1, 0, 1 },
	{ "update 2 beside reader 1", CAS_U | CAS_OWNER(2) | BIT_ULL(1), 2, 1,
	  BIT_ULL(1), 1 },
	{ "upgraded update 2", CAS_W | CAS_U | CAS_OWNER(2), 2, 1, 0, 1 },
	{ "update 1, reader 2", CAS_U | CAS_OWNER(1) | BIT_ULL(2), 2, 1,
	  CAS_U | CAS_OWNER(1), 0 },
	{ "reader 31 of 32", BIT_ULL(31) | BIT_ULL(0), 31, 1, BIT_ULL(0), 0 },
};

static void cas_forget_desc(const struct cas_forget_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cas_forget, cas_forget_cases, cas_forget_desc);

struct cas_forget_count {
	unsigned int calls;
	int ret;
};

static int cas_forget_excl(void *arg)
{
	struct cas_forget_count *n = arg;

	n->calls++;
	return n->ret;
}

/*
 * A node declared down: its home takes exactly that node's bits out of the
 * word, and is told first (before_excl) when it held it exclusive or
 * update; an error from there changes nothing.
 */
static void cas_forget_test(struct kunit *test)
{
	const struct cas_forget_case *c = test->param_value;
	const struct sim_params p = { .ops = &rdlock_proto_caslock };
	struct rdlock_ticket t = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
	};
	struct cas_forget_count n = {};
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg *cfg;
	struct proto_sim *sim = sim_alloc(test);
	u64 *word = &sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];

	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	cfg = kunit_kzalloc(test, sizeof(*cfg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cfg);
	sim_cfg(cfg, &p, &sim->nodes[SIM_LOCK_NODE], stats);

	if (c->excl_calls) {
		*word = c->word;
		n.ret = -EIO;
		KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg, &t, c->dead,
							 cas_forget_excl, &n),
				-EIO);
		KUNIT_EXPECT_EQ(test, *word, c->word);
		n = (struct cas_forget_count){};
	}
	*word = c->word;
	KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg, &t, c->dead,
						 cas_forget_excl, &n), c->ret);
	KUNIT_EXPECT_EQ(test, *word, c->left);
	KUNIT_EXPECT_EQ(test, n.calls, c->excl_calls);
	/* Again: nothing of the node's is left. */
	KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg, &t, c->dead,
						 cas_forget_excl, &n), 0);
	KUNIT_EXPECT_EQ(test, *word, c->left);
	sim_destroy(sim);
}

/*
 * Node 2 holds the word exclusive and is declared down: once its home
 * forgot it, node 1 is granted with one CAS, and its release leaves the
 * word idle.
 */
static void cas_forget_grant_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_caslock };
	struct rdlock_ticket t = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = RDLOCK_MODE_EXCLUSIVE,
	};
	struct rdlock_ticket dead = t, home = t;
	struct rdlock_proto_cfg *cfg0, *cfg1, *cfg2;
	struct rdlock_proto_stats *stats;
	struct proto_sim *sim = sim_alloc(test);
	u64 *word = &sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];

	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	cfg0 = sim_cfg_new(test, sim, &p, 0, stats);
	cfg1 = sim_cfg_new(test, sim, &p, 1, stats);
	cfg2 = sim_cfg_new(test, sim, &p, 2, stats);

	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg2, &dead, 0), 0);
	KUNIT_EXPECT_EQ(test, p.ops->acquire(cfg1, &t, jiffies), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg0, &home, 2, NULL, NULL),
			1);
	t.remote_ops = 0;
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &t, jiffies), 0);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, *word, CAS_W | CAS_OWNER(1));
	p.ops->release(cfg1, &t);
	KUNIT_EXPECT_EQ(test, *word, 0ULL);
	/*
	 * The simulated dead node's record ends with its ticket: a release,
	 * whose FAA a dead node would never send, undone.
	 */
	p.ops->release(cfg2, &dead);
	*word = 0;
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_cas_holds(), 0U);
}

static struct kunit_case proto_cas_cases[] = {
	KUNIT_CASE(cas_unknown_test),
	KUNIT_CASE_PARAM(cas_read_test, cas_read_gen_params),
	KUNIT_CASE(cas_guess_test),
	KUNIT_CASE_PARAM(cas_forget_test, cas_forget_gen_params),
	KUNIT_CASE(cas_forget_grant_test),
	{}
};

static struct kunit_suite proto_cas_suite = {
	.name = "rdlock_proto_cas",
	.test_cases = proto_cas_cases,
};

kunit_test_suite(proto_cas_suite);
