// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdlock_proto_sim: the cases of every protocol on the
 * simulated cluster (proto_sim.h): the ticket life, random schedules of
 * each protocol and configuration (sim_test), the TRY quota, a restart of
 * the lock's home, posted releases, and TRY in every protocol and policy.
 * Each protocol's own cases are its suite's (proto_bakery_kunit.c,
 * proto_cas_kunit.c, proto_cql_kunit.c), in this module too.
 *
 * In the schedules, threads on the simulated nodes take one lock in random
 * modes; writers increment a counter non-atomically, which must end equal
 * to their grants. Threads are created once per case and run every
 * schedule (round) of it.
 *
 * The lease-stall cases: a holder stalls with its
 * clock stopped, the others reset it and keep going while it wakes up and
 * releases late; its release must find the ticket revoked and no two live
 * holders may conflict.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched/signal.h>

#include "tests/proto_sim.h"

#define SIM_THREADS		2	/* per node */

/*
 * Percent of each case's schedules to run: a soak builds with
 * KCFLAGS=-DRDLOCK_SIM_SCALE=1000. Not a module parameter: KUnit runs a
 * module's suites before its parameters are parsed.
 */
#ifndef RDLOCK_SIM_SCALE
#define RDLOCK_SIM_SCALE	100
#endif

/* One thread, for every schedule of a case: @go starts one, or ends it. */
struct sim_thread {
	struct proto_sim *sim;
	const struct sim_params *p;
	struct rdlock_proto_cfg cfg;
	struct rdlock_proto_stats stats;
	struct task_struct *task;
	struct completion go;
	struct completion done;
	bool quit;
	u32 iters;	/* 0: until sim->stop */
};

static void sim_enter(struct proto_sim *sim, bool write)
{
	if (write) {
		if (atomic_inc_return(&sim->writers) != 1 ||
		    atomic_read(&sim->readers))
			atomic_inc(&sim->violations);
	} else {
		atomic_inc(&sim->readers);
		if (atomic_read(&sim->writers))
			atomic_inc(&sim->violations);
	}
}

static void sim_leave(struct proto_sim *sim, bool write)
{
	if (write) {
		if (atomic_read(&sim->readers))
			atomic_inc(&sim->violations);
		atomic_dec(&sim->writers);
	} else {
		if (atomic_read(&sim->writers))
			atomic_inc(&sim->violations);
		atomic_dec(&sim->readers);
	}
}

/* A holder's critical section; @write: it may write now. */
static void sim_section(struct proto_sim *sim, bool write)
{
	u64 c;

	sim_enter(sim, write);
	if (write) {
		c = READ_ONCE(sim->counter);
		sim_delay(sim);
		WRITE_ONCE(sim->counter, c + 1);
		atomic64_inc(&sim->writes);
	} else {
		sim_delay(sim);
	}
	sim_leave(sim, write);
}

/* An error the schedule injected: an upgrade it fails keeps the lock. */
static bool sim_injected(const struct sim_params *p, int ret)
{
	return (ret == -ECONNRESET && p->read_fail_pct) ||
	       (ret == -ENOTCONN && p->op_fail_pct);
}

static enum rdlock_mode sim_random_mode(const struct sim_params *p)
{
	return get_random_u32_below(p->update_word ? RDLOCK_MODE_NR : 2);
}

/*
 * The ticket life as a caller sees it: granted on success; waiting for a
 * background worker only when abandoned; else ended.
 */
static bool sim_state_after_acquire(const struct rdlock_ticket *t, int ret)
{
	if (!ret)
		return t->state == RDLOCK_TICKET_GRANTED;
	if ((ret == -ETIMEDOUT || ret == -EINTR) &&
	    t->state == RDLOCK_TICKET_ABANDONED)
		return true;
	return rdlock_ticket_final(t);
}

/* One thread's part of a schedule. */
static void sim_thread_round(struct sim_thread *st)
{
	struct proto_sim *sim = st->sim;
	const struct sim_params *p = st->p;
	u32 done = 0, ms;
	int ret;

	while (st->iters ? done < st->iters : !READ_ONCE(sim->stop)) {
		ms = p->deadline_ms && READ_ONCE(sim->stalling) ?
		     p->deadline_ms : 30000;
		struct rdlock_ticket t = {
			.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
			.mode = sim_random_mode(p),
		};

		ret = p->ops->acquire(&st->cfg, &t,
				      jiffies + msecs_to_jiffies(ms));
		if (!sim_state_after_acquire(&t, ret))
			atomic64_inc(&sim->bad_states);
		if (ret == -EAGAIN) {
			atomic64_inc(&sim->again);
			continue;
		}
		if (ret == -ETIMEDOUT && ms == p->deadline_ms) {
			/* The ticket is finished in the background. */
			atomic64_inc(&sim->timeouts);
			continue;
		}
		if (ret) {
			atomic64_inc(&sim->errors);
			break;
		}
		done++;
		atomic64_inc(&sim->grants);
		sim_section(sim, t.mode == RDLOCK_MODE_EXCLUSIVE);
		/* Update holders upgrade half of the time. */
		if (t.mode == RDLOCK_MODE_UPDATE && get_random_u32_below(2)) {
			ret = p->ops->upgrade(&st->cfg, &t, jiffies + 30 * HZ);
			if (!ret)
				sim_section(sim, true);
			else if (ret == -EAGAIN)
				atomic64_inc(&sim->again);
			else if (!sim_injected(p, ret))
				atomic64_inc(&sim->errors);
		}
		t.post = p->post;
		p->ops->release(&st->cfg, &t);
		/* Posted: the posted copy of the ticket ends it. */
		if (!rdlock_ticket_final(&t) &&
		    !(p->post && t.state == RDLOCK_TICKET_RELEASING))
			atomic64_inc(&sim->bad_states);
	}
}

static int sim_thread_fn(void *arg)
{
	struct sim_thread *st = arg;

	for (;;) {
		/* Idle between schedules: not a hung task, however long. */
		if (wait_for_completion_interruptible(&st->go))
			continue;
		if (READ_ONCE(st->quit))
			break;
		sim_thread_round(st);
		complete(&st->done);
	}
	complete(&st->done);
	return 0;
}

/* Has a stall reset skipped the bakery ticket @h in the word? */
static bool sim_skipped(struct proto_sim *sim, const struct sim_params *p,
			const struct rdlock_ticket *h)
{
	enum bakery_mode bm;
	u64 w;

	if (!p->update_word)
		bm = h->mode == RDLOCK_MODE_SHARED ? BAKERY_SHARED :
						     BAKERY_EXCLUSIVE;
	else if (h->mode == RDLOCK_MODE_SHARED)
		bm = BAKERY_UPD_SHARED;
	else if (h->mode == RDLOCK_MODE_UPDATE)
		bm = BAKERY_UPD_UPDATE;
	else
		bm = BAKERY_UPD_EXCLUSIVE;
	spin_lock(&sim->lock);
	w = sim->table[h->node][h->slot];
	spin_unlock(&sim->lock);
	return bakery_skipped(h->prev, w, bm, h->k);
}

static void sim_threads_create(struct proto_sim *sim,
			       const struct sim_params *p,
			       struct sim_thread *st, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		st[i].sim = sim;
		st[i].p = p;
		init_completion(&st[i].go);
		init_completion(&st[i].done);
		st[i].task = kthread_run(sim_thread_fn, &st[i], "rdlock_sim%d",
					 i);
		if (IS_ERR(st[i].task))
			st[i].task = NULL;
	}
}

/* A thread that could not be created counts as an error and as done. */
static void sim_start(struct sim_thread *st)
{
	if (st->task) {
		complete(&st->go);
	} else {
		atomic64_inc(&st->sim->errors);
		complete(&st->done);
	}
}

static void sim_threads_stop(struct sim_thread *st, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (!st[i].task)
			continue;
		WRITE_ONCE(st[i].quit, true);
		complete(&st[i].go);
		wait_for_completion(&st[i].done);
	}
}

/*
 * One schedule. With a stall, a holder on the last node takes the lock
 * first; the other nodes' threads queue behind it and hammer until told to
 * stop; the holder's node stops its clock (nothing on it sees the time
 * pass) while the cluster's moves on until the others reset the holder,
 * which then releases late, and its own threads take the lock p->iters
 * times each while the others still run. Returns 1 if the stalled
 * holder's release found its ticket revoked.
 */
static int sim_round(struct proto_sim *sim,
		     const struct sim_params *p, struct sim_thread *st)
{
	struct sim_node *last = &sim->nodes[SIM_NODES - 1];
	struct rdlock_proto_stats *hstats = &sim->hold_stats;
	struct rdlock_proto_cfg *hcfg = &sim->hold_cfg;
	struct rdlock_ticket h = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
		.mode = p->stall_mode,
	};
	int i, nr = SIM_NODES * SIM_THREADS, ret;
	u64 step = (u64)p->lease_ms * NSEC_PER_MSEC / 2;
	unsigned long until;
	s64 timeouts;
	ktime_t start;

	sim->delay_us = p->delay_us;
	sim->read_fail_pct = p->read_fail_pct;
	sim->op_fail_pct = p->op_fail_pct;
	sim->msg_delay_us = p->msg_delay_us;
	sim->post_fail_pct = p->post_fail_pct;
	sim->exec_reset_pct = p->exec_reset_pct;
	sim->post_reset_pct = p->post_reset_pct;
	sim->lose_pct = p->lose_pct;
	WRITE_ONCE(sim->stop, false);
	for (i = 0; i < nr; i++) {
		memset(&st[i].stats, 0, sizeof(st[i].stats));
		memset(&st[i].cfg, 0, sizeof(st[i].cfg));
		st[i].iters = p->iters;
		if (p->stall && i < nr - SIM_THREADS)
			st[i].iters = 0;	/* until told to stop */
		sim_cfg(&st[i].cfg, p, &sim->nodes[i / SIM_THREADS],
			&st[i].stats);
	}
	if (!p->stall) {
		for (i = 0; i < nr; i++)
			sim_start(&st[i]);
		for (i = 0; i < nr; i++)
			wait_for_completion(&st[i].done);
		sim_flush(sim);
		return 0;
	}

	memset(hstats, 0, sizeof(*hstats));
	memset(hcfg, 0, sizeof(*hcfg));
	sim_cfg(hcfg, p, last, hstats);
	do {
		ret = p->ops->acquire(hcfg, &h, jiffies + 30 * HZ);
	} while (ret == -EAGAIN || sim_injected(p, ret));
	if (ret) {
		atomic64_inc(&sim->errors);
		return 0;
	}
	WRITE_ONCE(sim->stalling, true);
	timeouts = atomic64_read(&sim->timeouts);
	for (i = 0; i < nr - SIM_THREADS; i++)
		sim_start(&st[i]);
	start = ktime_get();
	/*
	 * Move the cluster's clock on half a lease a tick, hidden from the
	 * stalled node, until the word shows the reset (the event; waiters
	 * reset after two leases without progress), for at most 20 s. With
	 * short deadlines, first until a waiter timed out behind the holder.
	 * No step after the reset: the clock runs at its own pace again for
	 * the live holders.
	 */
	until = jiffies + 20 * HZ;
	while (!sim_skipped(sim, p, &h) && time_before(jiffies, until)) {
		if (!p->deadline_ms ||
		    atomic64_read(&sim->timeouts) != timeouts) {
			atomic64_add(step, &sim->ahead_ns);
			atomic64_add(step, &last->hidden_ns);
		}
		usleep_range(1000, 2000);
	}
	atomic64_add(ktime_to_ns(ktime_sub(ktime_get(), start)),
		     &last->hidden_ns);
	p->ops->release(hcfg, &h);
	WRITE_ONCE(sim->stalling, false);
	for (i = nr - SIM_THREADS; i < nr; i++)
		sim_start(&st[i]);
	for (i = nr - SIM_THREADS; i < nr; i++)
		wait_for_completion(&st[i].done);
	WRITE_ONCE(sim->stop, true);
	for (i = 0; i < nr - SIM_THREADS; i++)
		wait_for_completion(&st[i].done);
	/* Abandoned tickets and resets finish in the background. */
	sim_flush(sim);
	return atomic64_read(&hstats->lease_expiries);
}

static const struct sim_params sim_cases[] = {
	{ "bakery, no lease", &rdlock_proto_bakery, false, 0, 50, 150, 3 },
	{ "bakery update word, no lease", &rdlock_proto_bakery, true, 0, 50, 150, 3 },
	{ "caslock", &rdlock_proto_caslock, false, 0, 50, 150, 3 },
	{ "caslock update", &rdlock_proto_caslock, true, 0, 50, 150, 3 },
	{ "bakery, lease, no stall", &rdlock_proto_bakery, false, 200, 50, 150, 3 },
	{ "bakery, exclusive holder stalls", &rdlock_proto_bakery, false, 40, 50, 12, 8,
	  RDLOCK_MODE_EXCLUSIVE, true },
	{ "bakery, shared holder stalls", &rdlock_proto_bakery, false, 40, 50, 12, 8,
	  RDLOCK_MODE_SHARED, true },
	{ "bakery update word, exclusive holder stalls", &rdlock_proto_bakery, true, 40,
	  50, 12, 8, RDLOCK_MODE_EXCLUSIVE, true },
	{ "bakery update word, update holder stalls", &rdlock_proto_bakery, true, 40, 50,
	  12, 8, RDLOCK_MODE_UPDATE, true },
	{ "bakery, holder stalls, waiters time out and return", &rdlock_proto_bakery,
	  false, 40, 50, 12, 8, RDLOCK_MODE_EXCLUSIVE, true, 10 },
	/* A failed poll must not keep its ticket in the word for good. */
	{ "bakery, 5% of READs fail", &rdlock_proto_bakery, false, 0, 50, 150, 3,
	  .read_fail_pct = 5 },
	{ "bakery update word, 5% of READs fail", &rdlock_proto_bakery, true, 0, 50,
	  150, 3, .read_fail_pct = 5 },
	{ "bakery, holder stalls, 5% of READs fail", &rdlock_proto_bakery, false, 40,
	  50, 12, 8, RDLOCK_MODE_EXCLUSIVE, true, .read_fail_pct = 5 },
	/* Releases, withdraws and resets refused unsent were dropped. */
	{ "bakery, 5% of FAA/CAS refused unsent", &rdlock_proto_bakery, false, 0, 50,
	  150, 3, .op_fail_pct = 5 },
	{ "bakery, lease, 5% of READs fail, 5% of FAA/CAS refused unsent",
	  &rdlock_proto_bakery, false, 40, 50, 12, 8, RDLOCK_MODE_SHARED, true,
	  .read_fail_pct = 5, .op_fail_pct = 5 },
	{ "caslock update, 5% of FAA/CAS refused unsent", &rdlock_proto_caslock, true,
	  0, 50, 150, 3, .op_fail_pct = 5 },
	/* Releases posted: the next operation on the home comes after them. */
	{ "bakery, releases posted", &rdlock_proto_bakery, false, 0, 50, 150, 3,
	  .post = true },
	{ "bakery update word, releases posted", &rdlock_proto_bakery, true, 0, 50,
	  150, 3, .post = true },
	{ "caslock update, releases posted", &rdlock_proto_caslock, true, 0, 50, 150,
	  3, .post = true },
	{ "bakery, releases posted, 10% fail, 5% of FAA/CAS refused unsent",
	  &rdlock_proto_bakery, false, 0, 50, 150, 3, .op_fail_pct = 5,
	  .post = true, .post_fail_pct = 10 },
	{ "caslock, releases posted, 10% fail", &rdlock_proto_caslock, false, 0, 50,
	  150, 3, .post = true, .post_fail_pct = 10 },
	/*
	 * Outcomes unknown (verbs): each node settles its own bits of the
	 * word. They used to orphan the ticket, and wedge the lock.
	 */
	{ "caslock, 5% of FAA/CAS fail after they were executed", &rdlock_proto_caslock,
	  false, 0, 50, 150, 3, .exec_reset_pct = 5 },
	{ "caslock update, 5% of FAA/CAS and 10% of posted releases fail executed",
	  &rdlock_proto_caslock, true, 0, 50, 150, 3, .exec_reset_pct = 5,
	  .post = true, .post_reset_pct = 10 },
	/*
	 * The bakery's word counts tickets: a phantom an unknown outcome
	 * left is found by a census of every node's tickets and counted done.
	 * They used to orphan the ticket, and wedge the lock.
	 */
	{ "bakery, 5% of FAA/CAS fail after they were executed, 5% before",
	  &rdlock_proto_bakery, false, 0, 50, 150, 3, .exec_reset_pct = 5,
	  .lose_pct = 5 },
	{ "bakery update word, 5% of FAA/CAS and 10% of posted releases fail executed",
	  &rdlock_proto_bakery, true, 0, 50, 150, 3, .exec_reset_pct = 5,
	  .post = true, .post_reset_pct = 10 },
	/* Posting asked for where the release is not one FAA: synchronous. */
	{ "bakery, lease, releases posted if one FAA", &rdlock_proto_bakery, false,
	  200, 50, 150, 3, .post = true },
	{ "cql, releases posted if one FAA", &rdlock_proto_cql, false, 0, 50, 150, 3,
	  .post = true },
	{ "cql", &rdlock_proto_cql, false, 0, 50, 150, 3 },
	{ "cql, notifications delayed up to 200 us", &rdlock_proto_cql, false, 0, 50,
	  150, 3, .msg_delay_us = 200 },
	{ "cql, 5% of READs fail, 5% of FAA/CAS refused unsent", &rdlock_proto_cql,
	  false, 0, 50, 150, 3, .read_fail_pct = 5, .op_fail_pct = 5 },
	{ "cql, capacity 8", &rdlock_proto_cql, false, 0, 50, 150, 3,
	  .cql_cap_bits = 3 },
	/* One client per node in the queue: the others wait at the gate. */
	{ "cql, capacity 4, 16 version bits", &rdlock_proto_cql, false, 0, 50, 150,
	  3, .cql_cap_bits = 2 },
	/* 4 laps of 4 positions, so a busy lock reaches the wrap. */
	{ "cql, capacity 4, 2 version bits: busy resets", &rdlock_proto_cql, false,
	  0, 50, 150, 3, .cql_cap_bits = 2, .cql_ver_bits = 2, .cql_wraps = true },
	{ "cql, busy resets, notifications delayed up to 200 us", &rdlock_proto_cql,
	  false, 0, 50, 150, 3, .msg_delay_us = 200, .cql_cap_bits = 2,
	  .cql_ver_bits = 2, .cql_wraps = true },
	{ "cql, busy resets, 5% of READs fail, 5% of FAA/CAS refused unsent",
	  &rdlock_proto_cql, false, 0, 50, 150, 3, .read_fail_pct = 5,
	  .op_fail_pct = 5, .cql_cap_bits = 2, .cql_ver_bits = 2,
	  .cql_wraps = true },
	/* Section 5: one entry per node, the node's clients wait on it. */
	{ "cql hierarchical task-fair", &rdlock_proto_cql, false, 0, 50, 150, 3,
	  .cql_policy = RDLOCK_CQL_TASK_FAIR },
	{ "cql hierarchical phase-fair", &rdlock_proto_cql, false, 0, 50, 150, 3,
	  .cql_policy = RDLOCK_CQL_PHASE_FAIR },
	{ "cql hier task-fair, notifications delayed, 5% of READs, FAA/CAS fail",
	  &rdlock_proto_cql, false, 0, 50, 150, 3, .msg_delay_us = 200,
	  .read_fail_pct = 5, .op_fail_pct = 5,
	  .cql_policy = RDLOCK_CQL_TASK_FAIR },
	/* Capacity 4 for 3 nodes; resets while clients wait on their node. */
	{ "cql hierarchical task-fair, capacity 4, 2 version bits: busy resets",
	  &rdlock_proto_cql, false, 0, 50, 150, 3, .cql_cap_bits = 2,
	  .cql_ver_bits = 2, .cql_wraps = true,
	  .cql_policy = RDLOCK_CQL_TASK_FAIR },
	{ "cql hier phase-fair, busy resets, 5% of READs, FAA/CAS fail",
	  &rdlock_proto_cql, false, 0, 50, 150, 3, .read_fail_pct = 5,
	  .op_fail_pct = 5, .cql_cap_bits = 2, .cql_ver_bits = 2,
	  .cql_wraps = true, .cql_policy = RDLOCK_CQL_PHASE_FAIR },
};

static void sim_case_desc(const struct sim_params *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sim, sim_cases, sim_case_desc);

static void sim_test(struct kunit *test)
{
	const struct sim_params *p = test->param_value;
	struct rdlock_ticket *t;
	u32 rounds = max_t(u32, 1, (u64)p->rounds * RDLOCK_SIM_SCALE / 100);
	int i, revoked = 0, nr = SIM_NODES * SIM_THREADS;
	s64 bad_moves, unfinished, orphaned, *resets;
	s64 aborts, handovers, shares, expired, settles, phantoms, censuses;
	struct sim_thread *st;
	struct proto_sim *sim;
	ktime_t start;
	u32 r;

	sim = kunit_kzalloc(test, sizeof(*sim), GFP_KERNEL);
	st = kunit_kcalloc(test, nr, sizeof(*st), GFP_KERNEL);
	/* Not in the frame: the debug kernel's limit is 1024 bytes. */
	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	resets = kunit_kcalloc(test, RDLOCK_CQL_RESET_NR + 1, sizeof(*resets),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sim);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, st);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, resets);
	t->node = SIM_LOCK_NODE;
	t->slot = SIM_LOCK_SLOT;
	t->incarnation = SIM_INCARNATION;
	t->mode = RDLOCK_MODE_EXCLUSIVE;
	spin_lock_init(&sim->lock);
	for (i = 0; i < SIM_NODES; i++)
		sim_node_init(sim, i);
	sim->cql_on = p->ops == &rdlock_proto_cql;
	if (sim->cql_on) {
		i = cql_layout_init(&sim->cql,
				    p->cql_cap_bits ?: CQL_CAP_BITS_DEFAULT,
				    p->cql_ver_bits ?: CQL_VER_BITS_DEFAULT);
		KUNIT_ASSERT_EQ(test, i, 0);
	}

	bad_moves = atomic64_read(&rdlock_proto_stats.ticket_bad_moves);
	unfinished = atomic64_read(&rdlock_proto_stats.tickets_unfinished);
	orphaned = atomic64_read(&rdlock_proto_stats.tickets[RDLOCK_TICKET_ORPHANED]);
	/* Resets run in the background count in the global stats only. */
	for (i = 0; i < RDLOCK_CQL_RESET_NR; i++)
		resets[i] = atomic64_read(&rdlock_proto_stats.cql_resets[i]);
	resets[i] = atomic64_read(&rdlock_proto_stats.version_resets);
	aborts = atomic64_read(&rdlock_proto_stats.cql_reset_aborts);
	expired = atomic64_read(&rdlock_proto_stats.cql_refetch_expired);
	handovers = atomic64_read(&rdlock_proto_stats.cql_local_handovers);
	shares = atomic64_read(&rdlock_proto_stats.cql_local_shares);
	settles = atomic64_read(&rdlock_proto_stats.cas_settles);
	phantoms = atomic64_read(&rdlock_proto_stats.bakery_phantoms);
	censuses = atomic64_read(&rdlock_proto_stats.bakery_censuses);
	start = ktime_get();
	sim_threads_create(sim, p, st, nr);
	for (r = 0; r < rounds; r++)
		revoked += sim_round(sim, p, st);
	sim_threads_stop(st, nr);
	/* Every ticket, abandoned ones included, ended by the ticket life. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->bad_states), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&rdlock_proto_stats.ticket_bad_moves), bad_moves);
	KUNIT_EXPECT_EQ(test, atomic64_read(&rdlock_proto_stats.tickets_unfinished),
			unfinished);
	/* No failure here leaves an outcome unknown. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&rdlock_proto_stats.tickets[RDLOCK_TICKET_ORPHANED]),
			orphaned);

	KUNIT_EXPECT_EQ(test, atomic_read(&sim->violations), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->errors), 0);
	KUNIT_EXPECT_EQ(test, sim->counter, (u64)atomic64_read(&sim->writes));
	KUNIT_EXPECT_GT(test, atomic64_read(&sim->writes), 0);
	if (p->stall) {
		/* Every stalled holder was reset and found out at release. */
		KUNIT_EXPECT_EQ(test, revoked, rounds);
		/* The resetting waiter gives up its ticket (unless abandoned). */
		if (!p->deadline_ms)
			KUNIT_EXPECT_GE(test, atomic64_read(&sim->again),
					rounds);
	} else if (!p->lease_ms) {
		KUNIT_EXPECT_EQ(test, atomic64_read(&sim->again), 0);
	}
	if (p->read_fail_pct || p->op_fail_pct || p->post_fail_pct)
		KUNIT_EXPECT_GT(test, atomic64_read(&sim->xfails), 0);
	if ((p->exec_reset_pct || p->post_reset_pct) &&
	    p->ops == &rdlock_proto_caslock)
		KUNIT_EXPECT_GT(test, atomic64_read(&rdlock_proto_stats.cas_settles),
				settles);
	/* Phantoms were left, and counted done by censuses. */
	if ((p->exec_reset_pct || p->post_reset_pct) &&
	    p->ops == &rdlock_proto_bakery) {
		phantoms = atomic64_read(&rdlock_proto_stats.bakery_phantoms) -
			   phantoms;
		censuses = atomic64_read(&rdlock_proto_stats.bakery_censuses) -
			   censuses;
		KUNIT_EXPECT_GT(test, phantoms, 0LL);
		kunit_info(test, "%lld censuses counted %lld phantom slots done\n",
			   censuses, phantoms);
	}
	/* Posted only where the release is one FAA with nothing after it. */
	if (p->post && !p->lease_ms && p->ops != &rdlock_proto_cql)
		KUNIT_EXPECT_GT(test, atomic64_read(&sim->posts), 0);
	else
		KUNIT_EXPECT_EQ(test, atomic64_read(&sim->posts), 0);
	/* No ticket left behind: a writer is granted by its first operation. */
	sim->read_fail_pct = 0;
	sim->op_fail_pct = 0;
	sim->post_fail_pct = 0;
	sim->exec_reset_pct = 0;
	sim->post_reset_pct = 0;
	sim->lose_pct = 0;
	sim_cfg(&st->cfg, p, &sim->nodes[0], NULL);
	KUNIT_EXPECT_EQ(test, p->ops->acquire(&st->cfg, t, jiffies + HZ), 0);
	KUNIT_EXPECT_EQ(test, t->remote_ops, 1U);
	p->ops->release(&st->cfg, t);
	if (p->ops == &rdlock_proto_cql) {
		struct cql_layout l;
		s64 n, all = 0;
		u64 h;

		sim_flush(sim);
		h = cql_header(sim);
		cql_layout_init(&l, p->cql_cap_bits ?: CQL_CAP_BITS_DEFAULT,
				p->cql_ver_bits ?: CQL_VER_BITS_DEFAULT);
		/* Every acquisition of every thread granted exactly once. */
		KUNIT_EXPECT_EQ(test, atomic64_read(&sim->grants),
				(s64)rounds * nr * p->iters);
		/* Empty: every enqueue was dequeued, no reset pending. */
		KUNIT_EXPECT_EQ(test, cql_hdr_qsize(&l, h), 0U);
		KUNIT_EXPECT_EQ(test, cql_hdr_wcnt(&l, h), 0U);
		KUNIT_EXPECT_EQ(test, cql_hdr_reset_id(h), 0U);
		/* Each reset the table saw completed is counted once. */
		for (i = 0; i < RDLOCK_CQL_RESET_NR; i++) {
			n = atomic64_read(&rdlock_proto_stats.cql_resets[i]) -
			    resets[i];
			all += n;
			if (i == RDLOCK_CQL_RESET_VERSION) {
				/* The narrow cases must reach the wrap busy. */
				if (p->cql_wraps)
					KUNIT_EXPECT_GT(test, n, 0);
			} else if (i != RDLOCK_CQL_RESET_OVERWRITE ||
				   !p->cql_wraps) {
				/*
				 * No node dies here: an unwritten entry, a
				 * stuck lock or a claimer taken over would be
				 * a stall of the protocol (10, 30, 5 s). A
				 * slow releaser may read entries of the queue
				 * after an idle reset restarted its positions
				 * (no signal: nobody was queued) and reset it
				 * again (overwrite): harmless, counted.
				 */
				KUNIT_EXPECT_EQ_MSG(test, n, 0LL, "%s resets",
						    rdlock_cql_reset_names[i]);
			}
		}
		/*
		 * Nor may a release refetch for 10 s: it may end without a
		 * reset (its successor served meanwhile), but it stalled.
		 */
		expired = atomic64_read(&rdlock_proto_stats.cql_refetch_expired) -
			  expired;
		KUNIT_EXPECT_EQ(test, expired, 0LL);
		all += atomic64_read(&rdlock_proto_stats.version_resets) -
		       resets[RDLOCK_CQL_RESET_NR];
		KUNIT_EXPECT_EQ(test, all, atomic64_read(&sim->resets_done));
		/*
		 * Local grants (hierarchical) had no entry of their own.
		 * The local lock is how a client of a node waits, so with
		 * 2 threads per node some grants must be local.
		 */
		handovers = atomic64_read(&rdlock_proto_stats.cql_local_handovers) -
			    handovers;
		shares = atomic64_read(&rdlock_proto_stats.cql_local_shares) -
			 shares;
		if (p->cql_policy == RDLOCK_CQL_FLAT)
			KUNIT_EXPECT_EQ(test, handovers + shares, 0LL);
		else
			KUNIT_EXPECT_GT(test, handovers + shares, 0LL);
		/* One dequeue per entry: qhead counts them all, if no reset. */
		if (!atomic64_read(&sim->resets_done))
			KUNIT_EXPECT_EQ(test, (u64)cql_hdr_qhead(&l, h),
					(u64)(atomic64_read(&sim->grants) + 1 -
					      handovers - shares) &
					cql_pos_mask(&l));
		KUNIT_EXPECT_GT(test, atomic64_read(&sim->msgs_sent), 0);
		kunit_info(test, "local grants: %lld handovers, %lld shared\n",
			   handovers, shares);
		/* Every cause, so that a slow case shows what it waited for. */
		BUILD_BUG_ON(RDLOCK_CQL_RESET_NR != 6);
		kunit_info(test, "resets: %lld idle; busy: %lld %s (at the wrap), %lld %s, %lld %s, %lld %s, %lld %s, %lld %s; %lld acquisitions aborted and enqueued again\n",
			   atomic64_read(&rdlock_proto_stats.version_resets) -
			   resets[RDLOCK_CQL_RESET_NR],
			   cql_resets(0) - resets[0], rdlock_cql_reset_names[0],
			   cql_resets(1) - resets[1], rdlock_cql_reset_names[1],
			   cql_resets(2) - resets[2], rdlock_cql_reset_names[2],
			   cql_resets(3) - resets[3], rdlock_cql_reset_names[3],
			   cql_resets(4) - resets[4], rdlock_cql_reset_names[4],
			   cql_resets(5) - resets[5], rdlock_cql_reset_names[5],
			   atomic64_read(&rdlock_proto_stats.cql_reset_aborts) -
			   aborts);
		kunit_info(test, "releases that refetched for 10 s: %lld; qhead wraps without a reset: %lld\n",
			   expired, atomic64_read(&sim->unreset_wraps));
		/* Nobody is granted in the all-ones lap: qhead never leaves it. */
		KUNIT_EXPECT_EQ(test, atomic64_read(&sim->unreset_wraps), 0LL);
	}
	sim_destroy(sim);
	/* Every CAS spinlock and bakery record freed with its last user. */
	KUNIT_EXPECT_EQ(test, rdlock_proto_cas_holds(), 0U);
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery_words(), 0U);
	if (p->deadline_ms)
		KUNIT_EXPECT_GE(test, atomic64_read(&sim->timeouts), rounds);
	kunit_info(test, "%u schedules of %d threads on %d nodes in %lld ms: %lld grants, %lld exclusive, %lld EAGAIN, %lld timeouts, %lld injected failures, %d stalled holders revoked, %lld notifications\n",
		   rounds, nr, SIM_NODES,
		   ktime_ms_delta(ktime_get(), start),
		   atomic64_read(&sim->grants),
		   atomic64_read(&sim->writes), atomic64_read(&sim->again),
		   atomic64_read(&sim->timeouts), atomic64_read(&sim->xfails),
		   revoked, atomic64_read(&sim->msgs_sent));
}

/* The protocols that leave a ticket behind when a waiter gives up. */
static const struct sim_params quota_cases[] = {
	{ .ops = &rdlock_proto_bakery },
	{ .ops = &rdlock_proto_cql },
};

static void quota_desc(const struct sim_params *p, char *desc)
{
	strscpy(desc, p->ops->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(quota, quota_cases, quota_desc);

/*
 * A wait of @cfg's client for the held lock that the caller's fatal signal
 * cuts short: the kunit thread takes SIGKILL as a kthread may (allowed,
 * sent by the kernel to itself) and drops it once the call returned.
 */
static int quota_killed_wait(const struct rdlock_proto_cfg *cfg,
			     const struct sim_params *p,
			     struct rdlock_ticket *t)
{
	int ret;

	allow_signal(SIGKILL);
	force_sig(SIGKILL);
	ret = p->ops->acquire(cfg, t, 0);
	flush_signals(current);
	disallow_signal(SIGKILL);
	return ret;
}

/*
 * A caller looping TRY on a held lock leaves a ticket finishing in the
 * background at every failure. Its quota (here a user's, in the ticket)
 * reserves a place for each acquisition with a deadline when it is
 * admitted, refuses the next with -EBUSY before it takes a ticket, and
 * gives room back as the tickets finish; the lockspace's own quota (its
 * kernel users') is another owner's and refuses nothing meanwhile. A
 * strict (user's) quota refuses waits without a deadline once its killed
 * waiters' tickets fill it; the lockspace's never does.
 */
static void sim_quota_test(struct kunit *test)
{
	const struct sim_params *p = test->param_value;
	struct rdlock_proto_quota *lq = rdlock_proto_quota_alloc(2, false);
	struct rdlock_proto_quota *uq = rdlock_proto_quota_alloc(2, true);
	const struct rdlock_ticket sh = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .k = 1,
		.mode = RDLOCK_MODE_SHARED,
	};
	struct rdlock_ticket h = sh, t;
	struct rdlock_proto_cfg *cfg;
	struct proto_sim *sim;
	u64 word;
	int i;

	h.mode = RDLOCK_MODE_EXCLUSIVE;
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lq);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, uq);
	sim = sim_alloc(test);
	cfg = sim_cfg_new(test, sim, p, 1, NULL);
	cfg->quota = lq;

	/* Granted with a deadline: its place is given back. */
	KUNIT_ASSERT_EQ(test, p->ops->acquire(cfg, &h, jiffies + 10 * HZ), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lq->used), 0);
	KUNIT_EXPECT_PTR_EQ(test, h.reserved, NULL);
	for (i = 0; i < 2; i++) {
		t = sh;
		t.quota = uq;
		KUNIT_EXPECT_EQ(test, p->ops->acquire(cfg, &t, jiffies),
				-ETIMEDOUT);
		KUNIT_EXPECT_PTR_EQ(test, t.reserved, NULL);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&uq->used), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&lq->used), 0);
	word = sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];
	t = sh;
	t.quota = uq;
	t.remote_ops = 0;
	KUNIT_EXPECT_EQ(test, p->ops->acquire(cfg, &t, jiffies), -EBUSY);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 0U);
	KUNIT_EXPECT_EQ(test, sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT], word);
	KUNIT_EXPECT_EQ(test, atomic64_read(&uq->refused), 1LL);
	KUNIT_EXPECT_EQ(test, atomic_read(&uq->used), 2);
	/* Another owner's quota: admitted, and it times out on its own. */
	t = sh;
	KUNIT_EXPECT_EQ(test, p->ops->acquire(cfg, &t, jiffies), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&lq->used), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&lq->refused), 0LL);

	/* Killed waits without a deadline: counted, then the user's refused. */
	t = sh;
	t.quota = uq;
	KUNIT_EXPECT_EQ(test, rdlock_proto_admit(cfg, &t, 0), 0);
	KUNIT_EXPECT_PTR_EQ(test, t.reserved, NULL);
	for (i = 0; i < 2; i++) {
		t = sh;
		t.quota = uq;
		KUNIT_EXPECT_EQ(test, quota_killed_wait(cfg, p, &t), -EINTR);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&uq->killed), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&uq->used), 2);
	t = sh;
	t.quota = uq;
	t.remote_ops = 0;
	KUNIT_EXPECT_EQ(test, p->ops->acquire(cfg, &t, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 0U);
	KUNIT_EXPECT_EQ(test, atomic64_read(&uq->refused), 2LL);
	/* A kernel user's killed waiters never stop its next wait. */
	for (i = 0; i < 3; i++) {
		t = sh;
		KUNIT_EXPECT_EQ(test, quota_killed_wait(cfg, p, &t), -EINTR);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&lq->killed), 3);
	t = sh;
	KUNIT_EXPECT_EQ(test, rdlock_proto_admit(cfg, &t, 0), 0);

	/* The holder releases: every abandoned ticket finishes. */
	p->ops->release(cfg, &h);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, atomic_read(&uq->used), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&uq->killed), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lq->used), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lq->killed), 0);
	t = sh;
	t.quota = uq;
	KUNIT_EXPECT_EQ(test, p->ops->acquire(cfg, &t, jiffies), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&uq->used), 0);
	p->ops->release(cfg, &t);
	sim_destroy(sim);
	rdlock_proto_quota_put(uq);
	rdlock_proto_quota_put(lq);
}

#define FINISH_PARKED_TICKETS	16

/*
 * Tickets abandoned on a held lock hold no worker while they wait for
 * their grant: each waits between the steps that finish it, however many
 * there are (a work item asleep until a grant would keep its worker for as
 * long as the holder holds). All end, released, once the holder releases,
 * and the lock is free again.
 */
static void sim_finish_parked_test(struct kunit *test)
{
	const struct sim_params *p = test->param_value;
	const struct rdlock_ticket sh = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .k = 1,
		.mode = RDLOCK_MODE_SHARED,
	};
	s64 unfinished = atomic64_read(&rdlock_proto_stats.tickets_unfinished);
	struct rdlock_ticket h = sh, t;
	struct rdlock_proto_cfg *cfg;
	struct proto_sim *sim;
	unsigned long until;
	u32 live, now, parked = 0, n = 0;
	s64 kicks;
	int i;

	h.mode = RDLOCK_MODE_EXCLUSIVE;
	sim = sim_alloc(test);
	cfg = sim_cfg_new(test, sim, p, 1, NULL);
	live = rdlock_proto_finishing(NULL);
	KUNIT_ASSERT_EQ(test, p->ops->acquire(cfg, &h, jiffies + 10 * HZ), 0);
	for (i = 0; i < FINISH_PARKED_TICKETS; i++) {
		t = sh;
		KUNIT_EXPECT_EQ(test, p->ops->acquire(cfg, &t, jiffies),
				-ETIMEDOUT);
		/* CQL: no ticket once this node's places are taken (the gate). */
		if (t.state == RDLOCK_TICKET_ABANDONED)
			n++;
		else
			KUNIT_EXPECT_EQ(test, t.state, RDLOCK_TICKET_NEW);
	}
	KUNIT_EXPECT_GE(test, n, FINISH_PARKED_TICKETS / 2);
	live += n;
	KUNIT_EXPECT_EQ(test, rdlock_proto_finishing(NULL), live);
	/* Each takes its first step at once, then waits without a worker. */
	until = jiffies + 10 * HZ;
	do {
		now = rdlock_proto_finishing(&parked);
		if (now != live || parked == live)
			break;
		usleep_range(200, 400);
	} while (time_before(jiffies, until));
	KUNIT_EXPECT_EQ(test, now, live);
	KUNIT_EXPECT_EQ(test, parked, live);

	kicks = atomic64_read(&rdlock_proto_stats.finish_kicks);
	p->ops->release(cfg, &h);
	sim_flush(sim);
	KUNIT_EXPECT_EQ(test, rdlock_proto_finishing(NULL), live - n);
	/*
	 * CQL: their grants' notifications ran the steps that released them
	 * (a liveness check once a second would also, later). The bakery
	 * polls.
	 */
	kicks = atomic64_read(&rdlock_proto_stats.finish_kicks) - kicks;
	if (p->ops == &rdlock_proto_cql)
		KUNIT_EXPECT_GE(test, kicks, (s64)n / 2);
	else
		KUNIT_EXPECT_EQ(test, kicks, 0LL);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&rdlock_proto_stats.tickets_unfinished),
			unfinished);
	t = sh;
	t.mode = RDLOCK_MODE_EXCLUSIVE;
	KUNIT_EXPECT_EQ(test, p->ops->acquire(cfg, &t, jiffies + 10 * HZ), 0);
	p->ops->release(cfg, &t);
	sim_destroy(sim);
}

/*
 * The lock's home restarts with a zeroed table while a holder holds and an
 * abandoned ticket is being finished: neither may touch the new table (a
 * release or a poll there would corrupt or grant on an unrelated word),
 * both end, and the new table's lock is free for a ticket taken in it.
 */
static void sim_restart_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_bakery };
	struct rdlock_ticket h = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION, .mode = RDLOCK_MODE_EXCLUSIVE,
	};
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg cfg = {};
	struct rdlock_ticket t;
	struct proto_sim *sim;
	int i;

	sim = kunit_kzalloc(test, sizeof(*sim), GFP_KERNEL);
	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sim);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	spin_lock_init(&sim->lock);
	for (i = 0; i < SIM_NODES; i++)
		sim_node_init(sim, i);
	sim_cfg(&cfg, &p, &sim->nodes[1], stats);

	KUNIT_ASSERT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &h, 0), 0);
	t = h;
	KUNIT_ASSERT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &t, jiffies),
			-ETIMEDOUT);
	/* The home restarts: a zeroed table, a new incarnation. */
	spin_lock(&sim->lock);
	memset(sim->table[SIM_LOCK_NODE], 0, sizeof(sim->table[0]));
	sim->incarnation[SIM_LOCK_NODE]++;
	spin_unlock(&sim->lock);

	rdlock_proto_bakery.release(&cfg, &h);
	rdlock_proto_flush();
	KUNIT_EXPECT_EQ(test, sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT], 0ULL);
	/* A ticket of the old table cannot even start. */
	t = h;
	t.remote_ops = 0;
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &t, 0),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT], 0ULL);
	/* One taken in the new table is granted by its FA. */
	t = h;
	t.remote_ops = 0;
	t.incarnation = SIM_INCARNATION + 1;
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &t, jiffies),
			0);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	KUNIT_EXPECT_EQ(test, sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT],
			bakery_acquire_delta(BAKERY_EXCLUSIVE, 1));
	rdlock_proto_bakery.release(&cfg, &t);
}

/* ---- The ticket life --------------------------------------------------- */

#define TL_MAX_STEPS	6

struct ticket_life_case {
	const char *name;
	enum rdlock_ticket_state steps[TL_MAX_STEPS];
	unsigned int nr;
	unsigned int bad_moves;
	bool final;
};

#define TS(x)	RDLOCK_TICKET_##x

static const struct ticket_life_case ticket_life_cases[] = {
	{ "granted at once, released", { TS(ISSUED), TS(GRANTED), TS(RELEASING), TS(DONE) },
	  4, 0, true },
	{ "waited, granted, released", { TS(ISSUED), TS(WAITING), TS(GRANTED), TS(RELEASING),
	  TS(DONE) }, 5, 0, true },
	{ "over-limit word: withdrawn and issued again", { TS(ISSUED), TS(ISSUED), TS(GRANTED) },
	  3, 0, false },
	{ "abandoned, then granted and released in the background", { TS(ISSUED), TS(WAITING),
	  TS(ABANDONED), TS(GRANTED), TS(RELEASING), TS(DONE) }, 6, 0, true },
	{ "revoked while waiting", { TS(ISSUED), TS(WAITING), TS(REVOKED) }, 3, 0, true },
	{ "revoked at release (lease)", { TS(ISSUED), TS(GRANTED), TS(RELEASING), TS(REVOKED) },
	  4, 0, true },
	{ "lost with its table while waiting", { TS(ISSUED), TS(WAITING), TS(LOST) }, 3, 0, true },
	{ "release of unknown outcome", { TS(ISSUED), TS(GRANTED), TS(RELEASING), TS(ORPHANED) },
	  4, 0, true },
	{ "refused by a check: never taken", { }, 0, 0, true },
	{ "waiting: not final", { TS(ISSUED), TS(WAITING) }, 2, 0, false },
	{ "bug: released twice", { TS(ISSUED), TS(GRANTED), TS(RELEASING), TS(DONE),
	  TS(RELEASING), TS(DONE) }, 6, 1, true },
	{ "bug: granted without being issued", { TS(GRANTED) }, 1, 1, false },
	{ "bug: done without a release", { TS(ISSUED), TS(GRANTED), TS(DONE) }, 3, 1, true },
	{ "bug: abandoned before waiting", { TS(ISSUED), TS(ABANDONED) }, 2, 1, false },
};

static void ticket_life_test(struct kunit *test)
{
	struct rdlock_ticket reused = { .state = RDLOCK_TICKET_DONE };
	struct rdlock_proto_stats *stats = kunit_kzalloc(test, sizeof(*stats),
							GFP_KERNEL);
	struct rdlock_proto_cfg cfg = { .stats = stats };
	unsigned int i, j;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	for (i = 0; i < ARRAY_SIZE(ticket_life_cases); i++) {
		const struct ticket_life_case *c = &ticket_life_cases[i];
		struct rdlock_ticket t = { .mode = RDLOCK_MODE_EXCLUSIVE };
		s64 before = atomic64_read(&stats->ticket_bad_moves);

		KUNIT_ASSERT_EQ(test, rdlock_proto_check(&cfg, &t), 0);
		for (j = 0; j < c->nr; j++)
			rdlock_ticket_to(&cfg, &t, c->steps[j]);
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&stats->ticket_bad_moves) - before,
				    (s64)c->bad_moves, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, rdlock_ticket_final(&t), c->final, "%s", c->name);
		if (c->nr)
			KUNIT_EXPECT_EQ_MSG(test, t.state, c->steps[c->nr - 1], "%s", c->name);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->tickets[RDLOCK_TICKET_DONE]), 6);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->tickets[RDLOCK_TICKET_ORPHANED]), 1);
	/* A new acquisition starts a new ticket, whatever the struct held. */
	KUNIT_EXPECT_EQ(test, rdlock_proto_check(&cfg, &reused), 0);
	KUNIT_EXPECT_EQ(test, reused.state, RDLOCK_TICKET_NEW);
}

struct ticket_fail_case {
	const char *name;
	enum rdlock_ticket_state from;
	bool take;
	int err;
	enum rdlock_ticket_state to;
};

static const struct ticket_fail_case ticket_fail_cases[] = {
	{ "take: nothing sent by the deadline", TS(ISSUED), true, -ENOTCONN, TS(DONE) },
	{ "take: refused for a bad node", TS(ISSUED), true, -ENOENT, TS(DONE) },
	{ "take: table gone", TS(ISSUED), true, -ESTALE, TS(LOST) },
	{ "take: flushed after it was sent", TS(ISSUED), true, -EIO, TS(ORPHANED) },
	{ "take: timed out after it was sent", TS(ISSUED), true, -ETIMEDOUT, TS(ORPHANED) },
	{ "release: table gone", TS(RELEASING), false, -ESTALE, TS(LOST) },
	{ "release: resending stopped, table gone", TS(RELEASING), false, -ENOTCONN, TS(LOST) },
	{ "release: connection reset after it was sent", TS(RELEASING), false, -ECONNRESET,
	  TS(ORPHANED) },
	{ "queue entry: table gone", TS(WAITING), false, -ESTALE, TS(LOST) },
};

static void ticket_fail_test(struct kunit *test)
{
	struct rdlock_proto_stats *stats = kunit_kzalloc(test, sizeof(*stats),
							 GFP_KERNEL);
	struct rdlock_proto_cfg cfg = { .stats = stats };
	unsigned int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	for (i = 0; i < ARRAY_SIZE(ticket_fail_cases); i++) {
		const struct ticket_fail_case *c = &ticket_fail_cases[i];
		struct rdlock_ticket t = { .state = c->from };

		if (c->take)
			rdlock_ticket_take_failed(&cfg, &t, c->err);
		else
			rdlock_ticket_failed(&cfg, &t, c->err);
		KUNIT_EXPECT_EQ_MSG(test, t.state, c->to, "%s", c->name);
		KUNIT_EXPECT_TRUE_MSG(test, rdlock_ticket_final(&t), "%s", c->name);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->ticket_bad_moves), 0);
}

/* A simulation for the posted-release cases, with its threads' cfg. */
static struct proto_sim *post_sim_new(struct kunit *test,
				      const struct sim_params *p,
				      struct rdlock_proto_cfg *cfg,
				      struct rdlock_proto_stats *stats)
{
	struct proto_sim *sim = sim_alloc(test);

	memset(cfg, 0, sizeof(*cfg));
	sim_cfg(cfg, p, &sim->nodes[1], stats);
	return sim;
}

/*
 * Acquire exclusively, then release with posting allowed; @one: the lock
 * is free when asked for (every earlier release reached the word before).
 */
static void post_cycle(struct kunit *test, const struct sim_params *p,
		       struct rdlock_proto_cfg *cfg, atomic_t *pin, bool one)
{
	struct rdlock_ticket t = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
		.mode = RDLOCK_MODE_EXCLUSIVE,
	};

	KUNIT_ASSERT_EQ(test, p->ops->acquire(cfg, &t, jiffies + 10 * HZ), 0);
	if (one)
		KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	t.post = true;
	t.pin = pin;
	p->ops->release(cfg, &t);
	KUNIT_EXPECT_EQ(test, t.state, RDLOCK_TICKET_RELEASING);
}

struct post_count_case {
	const char *name;
	const struct rdlock_proto_ops *ops;
	u32 fail_pct;		/* posted FAAs failing unexecuted: retried */
	u32 reset_pct;		/* failing after they were executed */
};

static const struct post_count_case post_count_cases[] = {
	{ "bakery", &rdlock_proto_bakery },
	{ "caslock", &rdlock_proto_caslock },
	{ "bakery, every posted FAA fails unexecuted", &rdlock_proto_bakery, 100 },
	{ "caslock, every posted FAA fails unexecuted", &rdlock_proto_caslock, 100 },
	{ "bakery, every posted FAA fails executed", &rdlock_proto_bakery, 0, 100 },
	{ "caslock, every posted FAA fails executed", &rdlock_proto_caslock, 0, 100 },
};

/*
 * Exact counts of posted releases: one FAA each, counted as the release's;
 * each ticket ends once, done (retried by the worker when the FAA failed
 * unexecuted; when it was executed, the CAS spinlock READs the word and
 * finds it done, the bakery leaves it to its census, which finds the word
 * drained); the worker's quota is given back; the word is free at the end.
 */
static void sim_post_count_test(struct kunit *test)
{
	const int n = 20;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(post_count_cases); i++) {
		const struct post_count_case *c = &post_count_cases[i];
		const struct sim_params p = { .ops = c->ops };
		struct rdlock_proto_quota *q = rdlock_proto_quota_alloc(4,
								    false);
		struct rdlock_proto_stats *stats;
		struct rdlock_proto_cfg cfg;
		struct proto_sim *sim;
		atomic_t pin = ATOMIC_INIT(0);
		s64 unknowns = atomic64_read(&rdlock_proto_stats.bakery_unknowns);
		s64 phantoms = atomic64_read(&rdlock_proto_stats.bakery_phantoms);
		bool bakery = c->ops == &rdlock_proto_bakery;
		u64 word;
		s64 faa;
		int j;

		stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
		sim = post_sim_new(test, &p, &cfg, stats);
		cfg.quota = q;
		sim->post_fail_pct = c->fail_pct;
		sim->post_reset_pct = c->reset_pct;
		/*
		 * A release that failed is sent again by the worker: the next
		 * acquisition may find the lock still held meanwhile. A CAS
		 * spinlock's release that finds the word unsure (a failed
		 * release before it not settled yet) settles it instead of
		 * posting: here each failure is settled first, and each
		 * bakery census ends before the next ticket.
		 */
		for (j = 0; j < n; j++) {
			post_cycle(test, &p, &cfg, &pin, !c->fail_pct);
			if (c->reset_pct)
				rdlock_proto_flush();
		}
		sim_destroy(sim);
		faa = atomic64_read(&stats->rel_ops[RDLOCK_XOP_FAA]);
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&sim->posts), (s64)n,
				    "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&stats->posted_releases),
				    (s64)n, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&stats->posted_failed),
				    (s64)(c->fail_pct || c->reset_pct ? n : 0),
				    "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, faa, (s64)(c->fail_pct ? 2 * n : n),
				    "%s", c->name);
		if (!c->fail_pct)
			KUNIT_EXPECT_EQ_MSG(test,
					    atomic64_read(&stats->acq_ops[RDLOCK_XOP_FAA]) +
					    atomic64_read(&stats->acq_ops[RDLOCK_XOP_CAS]),
					    (s64)n, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test,
				    atomic64_read(&stats->tickets[RDLOCK_TICKET_RELEASING]),
				    (s64)n, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test,
				    atomic64_read(&stats->tickets[RDLOCK_TICKET_DONE]),
				    (s64)n, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test,
				    atomic64_read(&stats->tickets[RDLOCK_TICKET_ORPHANED]),
				    0LL, "%s", c->name);
		/* Each executed: a census each, no phantom. */
		KUNIT_EXPECT_EQ_MSG(test,
				    atomic64_read(&rdlock_proto_stats.bakery_unknowns) -
				    unknowns, (s64)(bakery && c->reset_pct ? n : 0),
				    "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test,
				    atomic64_read(&rdlock_proto_stats.bakery_phantoms),
				    phantoms, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&stats->ticket_bad_moves), 0LL,
				    "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&pin), 0, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&q->used), 0, "%s",
				    c->name);
		/* Every release reached the word once: free, no holder. */
		word = sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];
		if (c->ops == &rdlock_proto_caslock)
			KUNIT_EXPECT_EQ_MSG(test, word, 0ULL, "%s", c->name);
		else
			KUNIT_EXPECT_TRUE_MSG(test,
					      bakery_granted_at_fa(word,
								   BAKERY_EXCLUSIVE),
					      "%s", c->name);
		rdlock_proto_quota_put(q);
	}
}

/*
 * The same node takes the lock again while its posted release has not
 * completed: the release is executed before the new FA (same queue pair),
 * so the new ticket is granted by its first operation; the posted ticket
 * ends only once its completion comes.
 */
static void sim_post_order_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_bakery };
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg cfg;
	struct proto_sim *sim;
	atomic_t pin = ATOMIC_INIT(0);
	int j;

	stats = kunit_kzalloc(test, sizeof(*stats), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	sim = post_sim_new(test, &p, &cfg, stats);
	WRITE_ONCE(sim->post_hold, true);
	for (j = 0; j < 5; j++)
		post_cycle(test, &p, &cfg, &pin, true);
	/* Five releases in flight, none completed; all executed but the last. */
	KUNIT_EXPECT_EQ(test, atomic_read(&pin), 5);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->tickets[RDLOCK_TICKET_DONE]), 0LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->acq_ops[RDLOCK_XOP_READ]), 0LL);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, atomic_read(&pin), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->tickets[RDLOCK_TICKET_DONE]), 5LL);
	KUNIT_EXPECT_TRUE(test,
			  bakery_granted_at_fa(sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT],
					       BAKERY_EXCLUSIVE));
}

struct post_close {
	struct delayed_work work;
	struct proto_sim *sim;
	struct rdlock_proto_stats *stats;
	s64 done_before;
};

/* Completes the held releases, a while after the owner began to wait. */
static void post_close_work(struct work_struct *work)
{
	struct post_close *pc = container_of(to_delayed_work(work),
					     struct post_close, work);

	pc->done_before = atomic64_read(&pc->stats->tickets[RDLOCK_TICKET_DONE]);
	WRITE_ONCE(pc->sim->post_hold, false);
	queue_work(system_unbound_wq, &pc->sim->post_work);
}

/*
 * The owner of a lock's name and stats (a lockspace closing) while a
 * release is in flight: rdlock_proto_wait_pin() returns only once the
 * posted ticket ended and counted into the stats, which may then go.
 */
static void sim_post_close_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_caslock };
	struct rdlock_proto_stats *stats;
	struct rdlock_proto_cfg cfg;
	struct post_close *pc;
	struct proto_sim *sim;
	atomic_t pin = ATOMIC_INIT(0);

	stats = kzalloc(sizeof(*stats), GFP_KERNEL);
	pc = kunit_kzalloc(test, sizeof(*pc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stats);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pc);
	sim = post_sim_new(test, &p, &cfg, stats);
	WRITE_ONCE(sim->post_hold, true);
	post_cycle(test, &p, &cfg, &pin, true);
	KUNIT_EXPECT_EQ(test, atomic_read(&pin), 1);
	pc->sim = sim;
	pc->stats = stats;
	pc->done_before = -1;
	INIT_DELAYED_WORK(&pc->work, post_close_work);
	schedule_delayed_work(&pc->work, msecs_to_jiffies(50));
	rdlock_proto_wait_pin(&pin);
	/* Not ended when the wait began; ended, and counted, when it ended. */
	KUNIT_EXPECT_EQ(test, pc->done_before, 0LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&stats->tickets[RDLOCK_TICKET_DONE]), 1LL);
	kfree(stats);
	flush_delayed_work(&pc->work);
	sim_destroy(sim);
	KUNIT_EXPECT_EQ(test, sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT], 0ULL);
}

/*
 * TRY, every protocol and policy: granted whenever the lock is free for
 * the mode asked at the moment of the request, refused (-ETIMEDOUT here,
 * the lockspace's -EAGAIN) only for a conflicting holder or an earlier
 * waiter. Each case is one situation, run once per protocol of
 * try_protos[], each with its own expected result.
 */
enum { TRY_BAKERY, TRY_CAS, TRY_FLAT, TRY_TF, TRY_PF, TRY_PROTOS };

static const struct {
	const char *name;
	const struct rdlock_proto_ops *ops;
	u8 policy;
} try_protos[TRY_PROTOS] = {
	[TRY_BAKERY]	= { "bakery", &rdlock_proto_bakery, RDLOCK_CQL_FLAT },
	[TRY_CAS]	= { "caslock", &rdlock_proto_caslock, RDLOCK_CQL_FLAT },
	[TRY_FLAT]	= { "cql", &rdlock_proto_cql, RDLOCK_CQL_FLAT },
	[TRY_TF]	= { "cql-tf", &rdlock_proto_cql, RDLOCK_CQL_TASK_FAIR },
	[TRY_PF]	= { "cql-pf", &rdlock_proto_cql, RDLOCK_CQL_PHASE_FAIR },
};

/* No holder or waiter; a case a protocol does not have. */
#define TRY_NONE	(-1)
#define TRY_SKIP	1
#define TRY_NO		(-ETIMEDOUT)
#define SH		RDLOCK_MODE_SHARED
#define EX		RDLOCK_MODE_EXCLUSIVE

struct try_case {
	const char *name;
	int held;		/* the holder's mode, or TRY_NONE */
	int held_node;
	int waiter;		/* an earlier waiter's mode, or TRY_NONE */
	int waiter_node;
	enum rdlock_mode mode;	/* the TRY's */
	int node;		/* the TRY's */
	int ret[TRY_PROTOS];
};

/*
 * The CAS spinlock has no queue: nobody waits before anybody. A writer
 * waiting on another node's local lock (hierarchical) is not in the
 * queue: a reader of another node is granted beside that node's readers,
 * as its blocking request would be (cql.rst, "Hierarchical locking").
 */
static const struct try_case try_cases[] = {
	{ "free, SH", TRY_NONE, 0, TRY_NONE, 0, SH, 1, { 0, 0, 0, 0, 0 } },
	{ "free, EX", TRY_NONE, 0, TRY_NONE, 0, EX, 1, { 0, 0, 0, 0, 0 } },
	{ "free, SH on the home", TRY_NONE, 0, TRY_NONE, 0, SH, 0,
	  { 0, 0, 0, 0, 0 } },
	{ "SH held, SH", SH, 0, TRY_NONE, 0, SH, 1, { 0, 0, 0, 0, 0 } },
	{ "SH held, EX", SH, 0, TRY_NONE, 0, EX, 1,
	  { TRY_NO, TRY_NO, TRY_NO, TRY_NO, TRY_NO } },
	{ "EX held, SH", EX, 0, TRY_NONE, 0, SH, 1,
	  { TRY_NO, TRY_NO, TRY_NO, TRY_NO, TRY_NO } },
	{ "EX held, EX", EX, 0, TRY_NONE, 0, EX, 1,
	  { TRY_NO, TRY_NO, TRY_NO, TRY_NO, TRY_NO } },
	{ "SH held on the node, SH", SH, 0, TRY_NONE, 0, SH, 0,
	  { 0, 0, 0, 0, 0 } },
	{ "SH held on the node, EX", SH, 0, TRY_NONE, 0, EX, 0,
	  { TRY_NO, TRY_NO, TRY_NO, TRY_NO, TRY_NO } },
	{ "EX held on the node, SH", EX, 0, TRY_NONE, 0, SH, 0,
	  { TRY_NO, TRY_NO, TRY_NO, TRY_NO, TRY_NO } },
	{ "EX held on the node, EX", EX, 0, TRY_NONE, 0, EX, 0,
	  { TRY_NO, TRY_NO, TRY_NO, TRY_NO, TRY_NO } },
	{ "SH held, EX waits, SH", SH, 0, EX, 1, SH, 2,
	  { TRY_NO, TRY_SKIP, TRY_NO, TRY_NO, TRY_NO } },
	{ "SH held, EX waits, EX", SH, 0, EX, 1, EX, 2,
	  { TRY_NO, TRY_SKIP, TRY_NO, TRY_NO, TRY_NO } },
	{ "SH held on the node, EX waits, SH", SH, 0, EX, 1, SH, 0,
	  { TRY_NO, TRY_SKIP, TRY_NO, TRY_NO, TRY_NO } },
	{ "SH held, EX waits on the node, SH", SH, 0, EX, 0, SH, 0,
	  { TRY_NO, TRY_SKIP, TRY_NO, TRY_NO, TRY_NO } },
	{ "SH held, EX waits on its node, SH", SH, 0, EX, 0, SH, 1,
	  { TRY_NO, TRY_SKIP, TRY_NO, 0, 0 } },
};

#undef SH
#undef EX

static void try_desc(const struct try_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(try, try_cases, try_desc);

/* One client of a try case: a holder, the waiter or the TRY. */
struct try_client {
	const struct rdlock_proto_ops *ops;
	struct rdlock_proto_cfg cfg;
	struct rdlock_proto_stats stats;
	struct rdlock_ticket t;
	int ret;
	struct completion done;
};

static void try_client_init(struct try_client *c, int proto,
			    struct proto_sim *sim, int node, int mode)
{
	const struct sim_params p = {
		.ops = try_protos[proto].ops,
		.cql_policy = try_protos[proto].policy,
	};

	memset(c, 0, sizeof(*c));
	c->ops = p.ops;
	sim_cfg(&c->cfg, &p, &sim->nodes[node], &c->stats);
	c->t.node = SIM_LOCK_NODE;
	c->t.slot = SIM_LOCK_SLOT;
	c->t.incarnation = SIM_INCARNATION;
	c->t.mode = mode;
	init_completion(&c->done);
}

/* The waiter: waits until the holder is gone, then releases at once. */
static int try_waiter_fn(void *arg)
{
	struct try_client *c = arg;

	c->ret = c->ops->acquire(&c->cfg, &c->t, jiffies + 10 * HZ);
	if (!c->ret)
		c->ops->release(&c->cfg, &c->t);
	complete(&c->done);
	return 0;
}

/* Case @tc with protocol @proto, on a cluster of its own. */
static void try_one(struct kunit *test, const struct try_case *tc,
		    int proto)
{
	const char *pname = try_protos[proto].name;
	struct proto_sim *sim = sim_alloc(test);
	struct try_client *h, *w, *c;
	unsigned long until;

	h = kunit_kcalloc(test, 3, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	w = h + 1;
	c = h + 2;
	if (tc->held != TRY_NONE) {
		try_client_init(h, proto, sim, tc->held_node, tc->held);
		KUNIT_ASSERT_EQ_MSG(test, h->ops->acquire(&h->cfg, &h->t, 0),
				    0, "%s: holder", pname);
	}
	if (tc->waiter != TRY_NONE) {
		try_client_init(w, proto, sim, tc->waiter_node, tc->waiter);
		KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(try_waiter_fn, w,
							    "rdlock_try")));
		until = jiffies + 10 * HZ;
		while (!atomic64_read(&w->stats.waits) &&
		       time_before(jiffies, until))
			usleep_range(1000, 2000);
		KUNIT_ASSERT_EQ_MSG(test, atomic64_read(&w->stats.waits), 1LL,
				    "%s: the waiter does not wait", pname);
		msleep(20);	/* a CQL entry's populate WRITE follows */
	}

	try_client_init(c, proto, sim, tc->node, tc->mode);
	KUNIT_EXPECT_EQ_MSG(test, c->ops->acquire(&c->cfg, &c->t, jiffies),
			    tc->ret[proto], "%s", pname);
	if (!tc->ret[proto]) {
		KUNIT_EXPECT_EQ_MSG(test, c->t.state, RDLOCK_TICKET_GRANTED,
				    "%s", pname);
		c->ops->release(&c->cfg, &c->t);
	}
	/* Ended, or finishing in the background: never left in between. */
	KUNIT_EXPECT_TRUE_MSG(test, rdlock_ticket_final(&c->t) ||
			      c->t.state == RDLOCK_TICKET_ABANDONED,
			      "%s: TRY left in state %d", pname, c->t.state);

	if (tc->held != TRY_NONE)
		h->ops->release(&h->cfg, &h->t);
	if (tc->waiter != TRY_NONE) {
		wait_for_completion(&w->done);
		KUNIT_EXPECT_EQ_MSG(test, w->ret, 0, "%s: the waiter", pname);
	}
	sim_flush(sim);
	/* Nothing left behind: the lock is free for a TRY EX of any node. */
	try_client_init(c, proto, sim, 2, RDLOCK_MODE_EXCLUSIVE);
	KUNIT_EXPECT_EQ_MSG(test, c->ops->acquire(&c->cfg, &c->t, jiffies), 0,
			    "%s: free after the case", pname);
	c->ops->release(&c->cfg, &c->t);
	sim_destroy(sim);
}

static void try_test(struct kunit *test)
{
	const struct try_case *tc = test->param_value;
	int proto;

	for (proto = 0; proto < TRY_PROTOS; proto++)
		if (tc->ret[proto] != TRY_SKIP)
			try_one(test, tc, proto);
}

static struct kunit_case proto_sim_cases[] = {
	KUNIT_CASE(ticket_life_test),
	KUNIT_CASE(ticket_fail_test),
	KUNIT_CASE_PARAM(sim_test, sim_gen_params),
	KUNIT_CASE_PARAM(sim_quota_test, quota_gen_params),
	KUNIT_CASE_PARAM(sim_finish_parked_test, quota_gen_params),
	KUNIT_CASE(sim_restart_test),
	KUNIT_CASE(sim_post_count_test),
	KUNIT_CASE(sim_post_order_test),
	KUNIT_CASE(sim_post_close_test),
	KUNIT_CASE_PARAM(try_test, try_gen_params),
	{}
};

static struct kunit_suite proto_sim_suite = {
	.name = "rdlock_proto_sim",
	.test_cases = proto_sim_cases,
};

kunit_test_suite(proto_sim_suite);

MODULE_DESCRIPTION("KUnit tests of the rdlock lock protocols on a simulated cluster");
MODULE_IMPORT_NS(RDLOCK_INTERNAL);
MODULE_LICENSE("GPL");
