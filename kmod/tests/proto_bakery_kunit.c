// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdlock_proto_bakery: the bakery lock (proto_bakery.c) on the
 * simulated cluster (proto_sim.h): without leases, the outcomes a failure
 * hid, settled by censuses.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "tests/proto_sim.h"

/* A bakery acquisition in a thread of its own: acquire, release. */
struct bakery_client {
	struct rdlock_proto_cfg cfg;
	struct rdlock_ticket t;
	int ret;
	struct completion done;
};

static int bakery_client_fn(void *arg)
{
	struct bakery_client *c = arg;

	c->ret = rdlock_proto_bakery.acquire(&c->cfg, &c->t,
					     jiffies + 10 * HZ);
	if (!c->ret)
		rdlock_proto_bakery.release(&c->cfg, &c->t);
	complete(&c->done);
	return 0;
}

static void bakery_client_start(struct kunit *test, struct bakery_client *c,
				struct proto_sim *sim, int node,
				enum rdlock_mode mode)
{
	static const struct sim_params p = { .ops = &rdlock_proto_bakery };

	memset(c, 0, sizeof(*c));
	sim_cfg(&c->cfg, &p, &sim->nodes[node], NULL);
	c->t.node = SIM_LOCK_NODE;
	c->t.slot = SIM_LOCK_SLOT;
	c->t.incarnation = SIM_INCARNATION;
	c->t.mode = mode;
	init_completion(&c->done);
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(bakery_client_fn, c,
						    "rdlock_bakery")));
}

/* Wait until the lock word is no longer @old (its FA landed). */
static bool sim_wait_word(struct proto_sim *sim, u64 old)
{
	unsigned long until = jiffies + 10 * HZ;

	while (cql_header(sim) == old) {
		if (time_after(jiffies, until))
			return false;
		usleep_range(1000, 2000);
	}
	return true;
}

/*
 * Wait until client @c polls: its FA returned, so no operation of its that
 * changes the word is under way (a census taken meanwhile counts none).
 */
static bool bakery_client_polls(struct bakery_client *c)
{
	unsigned long until = jiffies + 10 * HZ;

	while (!READ_ONCE(c->t.polls)) {
		if (time_after(jiffies, until))
			return false;
		usleep_range(1000, 2000);
	}
	return true;
}

static s64 bakery_stat(size_t offset)
{
	return atomic64_read((atomic64_t *)((char *)&rdlock_proto_stats +
					    offset));
}

#define BAKERY_STAT(f)	bakery_stat(offsetof(struct rdlock_proto_stats, f))

/* Wait until the global counter @v reaches @want. */
static bool sim_wait_stat(atomic64_t *v, s64 want)
{
	unsigned long until = jiffies + 10 * HZ;

	while (atomic64_read(v) < want) {
		if (time_after(jiffies, until))
			return false;
		usleep_range(1000, 2000);
	}
	return true;
}

/* @cfg takes @x and releases it, the release failing as @fault says. */
static void bakery_release_failed(struct kunit *test,
				  const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *x, atomic_t *fault)
{
	KUNIT_ASSERT_EQ(test, rdlock_proto_bakery.acquire(cfg, x, 0), 0);
	atomic_set(fault, 1);
	rdlock_proto_bakery.release(cfg, x);
	KUNIT_EXPECT_EQ(test, x->state, RDLOCK_TICKET_DONE);
	rdlock_proto_flush();
}

/*
 * Once the censuses counted @phantoms slots done in all, the word is @held
 * and @c still waits; @cfg releases @r, and @c is granted.
 */
static void bakery_census_hand_over(struct kunit *test, struct proto_sim *sim,
				    s64 phantoms, u64 held,
				    struct bakery_client *c,
				    const struct rdlock_proto_cfg *cfg,
				    struct rdlock_ticket *r)
{
	KUNIT_ASSERT_TRUE(test, sim_wait_stat(&rdlock_proto_stats.bakery_phantoms,
					      phantoms));
	KUNIT_EXPECT_EQ(test, sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT], held);
	KUNIT_EXPECT_FALSE(test, completion_done(&c->done));
	rdlock_proto_bakery.release(cfg, r);
	KUNIT_ASSERT_EQ(test, wait_for_completion_timeout(&c->done, 10 * HZ) > 0,
			true);
	KUNIT_EXPECT_EQ(test, c->ret, 0);
	rdlock_proto_flush();
}

/*
 * Bakery without leases: outcomes a failure hid (the verbs backend cannot
 * tell executed from not) are settled by their node's census, exactly,
 * and an acquisition takes a new ticket instead of failing. Before, each
 * orphaned its ticket: an exclusive FA done at the home left a ticket
 * that nobody would release, and every later one waited for it for good.
 * A census cannot run while a node's messages fail: the test holds it
 * until the state it is to judge is set up.
 */
static void bakery_census_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_bakery };
	struct rdlock_ticket x = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = RDLOCK_MODE_EXCLUSIVE,
	};
	struct rdlock_ticket r = x;
	struct proto_sim *sim = sim_alloc(test);
	u64 *word = &sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg *cfg0, *cfg1;
	struct bakery_client *c;
	s64 unknowns = BAKERY_STAT(bakery_unknowns);
	s64 phantoms = BAKERY_STAT(bakery_phantoms);
	s64 resets = BAKERY_STAT(bakery_census_resets);
	s64 orphaned = BAKERY_STAT(tickets[RDLOCK_TICKET_ORPHANED]);
	const u32 max = BAKERY_COUNT_MAX;

	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	cfg0 = sim_cfg_new(test, sim, &p, 0, NULL);
	cfg1 = sim_cfg_new(test, sim, &p, 1, stats);
	r.mode = RDLOCK_MODE_SHARED;

	/*
	 * Node 1's exclusive FA was done, its answer lost: it takes a new
	 * ticket, behind the phantom; the census counts the phantom done
	 * and the new ticket is granted.
	 */
	atomic_set(&sim->reset_next, 1);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &x, 0), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->acq_ops[RDLOCK_XOP_FAA]), 2LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->retries), 1LL);
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(1, 0, 2, 0));
	p.ops->release(cfg1, &x);
	rdlock_proto_flush();
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(2, 0, 2, 0));
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_phantoms) - phantoms, 1LL);
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery_words(), 0U);

	/* A FA lost before it was done: a new one; nothing to count done. */
	atomic_set(&sim->lose_next, 1);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &x, 0), 0);
	p.ops->release(cfg1, &x);
	rdlock_proto_flush();
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(3, 0, 3, 0));
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_phantoms) - phantoms, 1LL);
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery_words(), 0U);

	/* A release done, its answer lost: the word is drained, clean. */
	bakery_release_failed(test, cfg0, &x, &sim->reset_next);
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(4, 0, 4, 0));
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_census_resets) - resets, 0LL);

	/*
	 * A release lost: the word still grants the ticket, which no node
	 * holds: with no live ticket left, the census resets the word.
	 */
	bakery_release_failed(test, cfg0, &x, &sim->lose_next);
	KUNIT_EXPECT_EQ(test, *word, 0ULL);
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_census_resets) - resets, 1LL);
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_phantoms) - phantoms, 2LL);

	/*
	 * A shared FA done, its answer lost: a granted phantom, then node
	 * 1's new reader. Node 2's writer comes after both; with it the
	 * oldest exclusive ticket, the census counts the phantom done (not
	 * the live reader), and the writer is granted once the reader left.
	 */
	WRITE_ONCE(sim->cut[2], true);
	atomic_set(&sim->reset_next, 1);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &r, 0), 0);
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(0, 0, 0, 2));
	bakery_client_start(test, c, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_TRUE(test, sim_wait_word(sim, bakery_word_pack(0, 0, 0, 2)));
	WRITE_ONCE(sim->cut[2], false);
	bakery_census_hand_over(test, sim, phantoms + 3,
				bakery_word_pack(0, 1, 1, 2), c, cfg1, &r);
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(1, 2, 1, 2));
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_phantoms) - phantoms, 3LL);

	/*
	 * A word over the limit waits for the overflow reset that the
	 * ticket which crossed COUNT_MAX owes on release. When that release
	 * or that ticket's FA was an unknown outcome, nobody owed it: the
	 * word stayed over the limit with every ticket done, and every later
	 * acquisition waited for good (seen once in CI: sim_test's "bakery
	 * update word, 5% of FAA/CAS and 10% of posted releases fail
	 * executed", where an epoch has room for 512 update tickets).
	 *
	 * First the release of the last exclusive ticket below the limit,
	 * done, its answer lost: the census resets the drained word.
	 */
	*word = bakery_word_pack(max - 1, 0, max - 1, 0);
	bakery_release_failed(test, cfg0, &x, &sim->reset_next);
	KUNIT_EXPECT_EQ(test, *word, 0ULL);
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_census_resets) - resets, 2LL);

	/*
	 * Node 1 reads with the second-to-last shared ticket; node 2's FA
	 * takes the last one, its answer lost: that phantom owed the reset,
	 * and node 2's new FA is over the limit. The census counts the
	 * granted phantom done beside the live reader and waits; once the
	 * reader left, it resets the word and node 2 is granted (and
	 * releases: bakery_client_fn()).
	 */
	*word = bakery_word_pack(0, max - 2, 0, max - 2);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &r, 0), 0);
	atomic_set(&sim->reset_next, 1);
	bakery_client_start(test, c, sim, 2, RDLOCK_MODE_SHARED);
	bakery_census_hand_over(test, sim, phantoms + 4,
				bakery_word_pack(0, max - 1, 0, max), c, cfg1,
				&r);
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_census_resets) - resets, 3LL);
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(0, 1, 0, 1));

	/* Free: one FA. Nothing orphaned, no record left. */
	x.remote_ops = 0;
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg0, &x, 0), 0);
	KUNIT_EXPECT_EQ(test, x.remote_ops, 1U);
	p.ops->release(cfg0, &x);
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_unknowns) - unknowns, 7LL);
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(tickets[RDLOCK_TICKET_ORPHANED]),
			orphaned);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery_words(), 0U);
}

static int bakery_forget_excl(void *arg)
{
	(*(int *)arg)++;
	return 0;
}

/*
 * A node declared down leaves tickets in the bakery words homed on the
 * survivors, which do not name their nodes: before, every later ticket
 * waited for them for good. The home's forget_node leaves them to the
 * census, which no longer asks the dead node: a dead holder's ticket is
 * counted done at once (its value block first marked), a dead reader's
 * granted behind a live writer only once that writer is done.
 */
static void bakery_forget_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_bakery };
	static const struct rdlock_ticket tmpl = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = RDLOCK_MODE_EXCLUSIVE,
	};
	struct rdlock_ticket dead = tmpl, home = tmpl;
	struct rdlock_ticket *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct proto_sim *sim = sim_alloc(test);
	u64 *word = &sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];
	struct rdlock_proto_cfg *cfg0, *cfg1, *cfg2;
	s64 phantoms = BAKERY_STAT(bakery_phantoms);
	u32 resetting = rdlock_proto_resetting(NULL);
	struct bakery_client *c;
	s64 censuses;
	int excl = 0;

	cfg0 = sim_cfg_new(test, sim, &p, 0, NULL);
	cfg1 = sim_cfg_new(test, sim, &p, 1, NULL);
	cfg2 = sim_cfg_new(test, sim, &p, 2, NULL);
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, x);

	/* An idle word: nothing of anybody's. */
	KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg0, &home, 2,
						 bakery_forget_excl, &excl), 0);

	/*
	 * Node 2 holds the word exclusive, node 1 waits; node 2 fails. A
	 * survivor's census would wait for node 2's answer for good.
	 */
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg2, &dead, 0), 0);
	bakery_client_start(test, c, sim, 1, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_TRUE(test, sim_wait_word(sim, bakery_word_pack(0, 0, 1, 0)));
	sim_fail_node(sim, 2, true);
	KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg0, &home, 2,
						 bakery_forget_excl, &excl), 1);
	KUNIT_EXPECT_EQ(test, excl, 1);
	KUNIT_ASSERT_EQ(test, wait_for_completion_timeout(&c->done, 10 * HZ) > 0,
			true);
	KUNIT_EXPECT_EQ(test, c->ret, 0);
	rdlock_proto_flush();
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(2, 0, 2, 0));
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_phantoms) - phantoms, 1LL);
	/* Forgotten: a live node's words are clean. */
	KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg0, &home, 2,
						 bakery_forget_excl, &excl), 0);
	/*
	 * The simulated dead node's record ends with its ticket: a release,
	 * whose FAA a dead node would never send, undone.
	 */
	p.ops->release(cfg2, &dead);
	rdlock_proto_flush();
	*word = 0;
	sim_fail_node(sim, 2, false);

	/*
	 * Node 1 holds the word exclusive; node 2's reader ticket is taken
	 * (its FA landed), then node 0's writer; node 2 fails. The dead
	 * reader is counted done only once node 1 released (it is granted
	 * then, and node 0's writer waits for it).
	 */
	*x = tmpl;
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, x, 0), 0);
	*word = bakery_word_pack(0, 0, 1, 1);
	censuses = BAKERY_STAT(bakery_censuses);
	bakery_client_start(test, c, sim, 0, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_ASSERT_TRUE(test, sim_wait_word(sim, bakery_word_pack(0, 0, 1, 1)));
	KUNIT_ASSERT_TRUE(test, bakery_client_polls(c));
	sim_fail_node(sim, 2, true);
	KUNIT_EXPECT_EQ(test, p.ops->forget_node(cfg0, &home, 2,
						 bakery_forget_excl, &excl), 1);
	KUNIT_EXPECT_EQ(test, excl, 1);
	/* The settler's censuses wait for node 1 without a worker. */
	KUNIT_EXPECT_TRUE(test, sim_wait_stat(&rdlock_proto_stats.bakery_censuses,
					      censuses + 1));
	KUNIT_EXPECT_TRUE(test, sim_resets_parked(resetting + 1));
	msleep(50);
	KUNIT_EXPECT_FALSE(test, completion_done(&c->done));
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(0, 0, 2, 1));
	p.ops->release(cfg1, x);
	KUNIT_ASSERT_EQ(test, wait_for_completion_timeout(&c->done, 10 * HZ) > 0,
			true);
	KUNIT_EXPECT_EQ(test, c->ret, 0);
	/* The settler counts the phantom after the CAS that granted node 0. */
	rdlock_proto_flush();
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(2, 1, 2, 1));
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(bakery_phantoms) - phantoms, 2LL);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery_words(), 0U);
}

/*
 * Algorithm 3's overflow reset waits for the epoch's other holders
 * without a worker: node 1 reads with the second-to-last shared ticket,
 * node 0 with the last, which crosses COUNT_MAX and owes the reset. Node 0
 * releases first: its reset is parked between CASes while node 1 holds
 * (before, a worker looped on them), and resets the word once node 1 left.
 */
static void bakery_overflow_parked_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_bakery };
	const u32 max = BAKERY_COUNT_MAX;
	struct rdlock_ticket a = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = RDLOCK_MODE_SHARED,
	};
	struct rdlock_ticket b = a;
	struct proto_sim *sim = sim_alloc(test);
	u64 *word = &sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];
	u32 resetting = rdlock_proto_resetting(NULL);
	s64 resets = BAKERY_STAT(overflow_resets);
	struct rdlock_proto_cfg *cfg0, *cfg1;

	cfg0 = sim_cfg_new(test, sim, &p, 0, NULL);
	cfg1 = sim_cfg_new(test, sim, &p, 1, NULL);
	*word = bakery_word_pack(0, max - 2, 0, max - 2);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg1, &a, 0), 0);
	KUNIT_ASSERT_EQ(test, p.ops->acquire(cfg0, &b, 0), 0);
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(0, max - 2, 0, max));
	p.ops->release(cfg0, &b);
	KUNIT_EXPECT_TRUE(test, sim_resets_parked(resetting + 1));
	KUNIT_EXPECT_EQ(test, *word, bakery_word_pack(0, max - 1, 0, max));
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(overflow_resets), resets);
	p.ops->release(cfg1, &a);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_resetting(NULL), resetting);
	KUNIT_EXPECT_EQ(test, BAKERY_STAT(overflow_resets) - resets, 1LL);
	KUNIT_EXPECT_EQ(test, *word, BAKERY_RESET_TO);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery_words(), 0U);
}

static struct kunit_case proto_bakery_cases[] = {
	KUNIT_CASE(bakery_census_test),
	KUNIT_CASE(bakery_forget_test),
	KUNIT_CASE(bakery_overflow_parked_test),
	{}
};

static struct kunit_suite proto_bakery_suite = {
	.name = "rdlock_proto_bakery",
	.test_cases = proto_bakery_cases,
};

kunit_test_suite(proto_bakery_suite);
