// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the real lock protocols (proto_bakery.c, proto_cas.c)
 * against a simulated cluster: a lock table in memory behind
 * &struct rdlock_proto_xport, with random latencies before and after every
 * operation (so completions and polls interleave differently in every
 * schedule) and per-node clocks that a test can stop, as a paused guest's
 * clock stops. Threads on the simulated nodes take one lock in random
 * modes; a checker sees every live holder enter and leave and counts any
 * writer beside another holder, and writers increment a counter
 * non-atomically, which must end equal to their grants.
 *
 * The lease-stall cases are issue 11's scenario: a holder stalls for four
 * leases with its clock stopped, the others reset it and keep going while
 * it wakes up and releases late; its release must find the ticket revoked
 * and no two live holders may conflict.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "lockword/bakery.h"
#include "proto.h"

#define SIM_NODES		3
#define SIM_THREADS		2	/* per node */
#define SIM_LOCK_NODE		0
#define SIM_LOCK_SLOT		1
/* The tables' first incarnation; sim_restart_test() restarts one. */
#define SIM_INCARNATION		1

struct proto_sim;

/* One simulated node: its clock runs @hidden_ns behind the real one. */
struct sim_node {
	struct proto_sim *sim;
	atomic64_t hidden_ns;
};

/**
 * struct proto_sim - a simulated cluster and the checker of its lock
 * @lock: makes every operation on @table atomic, as the home's backend.
 * @table: the lock words, by node and slot.
 * @delay_us: each operation may wait up to this long before it executes
 *	and again before its result returns (sim_delay()).
 * @incarnation: each node's table's, as the transport checks it.
 * @read_fail_pct: this share of READs fails with -ECONNRESET, as on a
 *	connection blip, without being executed.
 * @op_fail_pct: this share of FAAs and CASes is refused with -ENOTCONN,
 *	unsent, as while the connection is being made again: an acquisition
 *	must wait through it (any error of acquire fails the schedule).
 * @nodes: the nodes, the xport_priv of their threads.
 * @readers: live holders inside in shared mode.
 * @writers: live holders inside in exclusive mode.
 * @counter: incremented non-atomically by writers.
 * @violations: a writer beside another holder, or a reader beside a writer.
 * @grants: live acquisitions.
 * @writes: live exclusive acquisitions (what @counter must be).
 * @again: acquisitions ended by -EAGAIN (a reset) and retried.
 * @timeouts: acquisitions that reached a short deadline (abandoned).
 * @xfails: operations failed on purpose (@read_fail_pct).
 * @errors: any other failed acquisition.
 * @stop: the threads that run until told stop.
 * @stalling: the stalled holder has not released yet.
 */
struct proto_sim {
	spinlock_t lock;	/* one operation at a time, as the home */
	u64 table[SIM_NODES][4];
	u32 delay_us;
	u64 incarnation[SIM_NODES];
	u32 read_fail_pct;
	u32 op_fail_pct;
	struct sim_node nodes[SIM_NODES];
	atomic_t readers, writers;
	u64 counter;
	atomic_t violations;
	atomic64_t grants, writes, again, timeouts, errors, xfails;
	bool stop;
	bool stalling;
};

/*
 * One operation in four sleeps for a random time; the others only yield,
 * which is enough to reorder threads: every sleep under TCG costs about a
 * millisecond.
 */
static void sim_delay(struct proto_sim *sim)
{
	u32 r = get_random_u32();

	if (sim->delay_us && !(r & 3)) {
		r = (r >> 2) % sim->delay_us + 1;
		usleep_range(r, r + 10);
	} else {
		cond_resched();
	}
}

static int sim_exec(void *priv, enum rdlock_xop op, u32 node,
		    u64 incarnation, u32 slot, u64 arg0, u64 arg1, u64 *value)
{
	struct sim_node *n = priv;
	struct proto_sim *sim = n->sim;
	u64 *w, v;

	if (node >= SIM_NODES || slot >= ARRAY_SIZE(sim->table[0]))
		return -EINVAL;
	w = &sim->table[node][slot];
	sim_delay(sim);
	if (op == RDLOCK_XOP_READ && sim->read_fail_pct &&
	    get_random_u32_below(100) < sim->read_fail_pct) {
		atomic64_inc(&sim->xfails);
		return -ECONNRESET;
	}
	if ((op == RDLOCK_XOP_FAA || op == RDLOCK_XOP_CAS) &&
	    sim->op_fail_pct && get_random_u32_below(100) < sim->op_fail_pct) {
		atomic64_inc(&sim->xfails);
		return -ENOTCONN;
	}
	spin_lock(&sim->lock);
	/* As the transport: only a connection to that table reaches it. */
	if (incarnation && incarnation != sim->incarnation[node]) {
		spin_unlock(&sim->lock);
		return -ESTALE;
	}
	v = *w;
	switch (op) {
	case RDLOCK_XOP_READ:
		break;
	case RDLOCK_XOP_WRITE:
		*w = arg0;
		break;
	case RDLOCK_XOP_FAA:
		*w = v + arg0;
		break;
	case RDLOCK_XOP_CAS:
		if (v == arg0)
			*w = arg1;
		break;
	default:
		spin_unlock(&sim->lock);
		return -EOPNOTSUPP;
	}
	spin_unlock(&sim->lock);
	sim_delay(sim);
	if (value)
		*value = v;
	return 0;
}

static ktime_t sim_now(void *priv)
{
	struct sim_node *n = priv;

	return ktime_sub_ns(ktime_get(), atomic64_read(&n->hidden_ns));
}

static u64 sim_incarnation(void *priv, u32 node)
{
	struct sim_node *n = priv;
	u64 inc;

	if (node >= SIM_NODES)
		return 0;
	spin_lock(&n->sim->lock);
	inc = n->sim->incarnation[node];
	spin_unlock(&n->sim->lock);
	return inc;
}

static void sim_node_init(struct proto_sim *sim, int i)
{
	sim->nodes[i].sim = sim;
	sim->incarnation[i] = SIM_INCARNATION;
}

static const struct rdlock_proto_xport sim_xport = {
	.exec		= sim_exec,
	.now		= sim_now,
	.incarnation	= sim_incarnation,
};

/**
 * struct sim_params - one configuration of the simulation
 * @name: shown as the parameter's description.
 * @ops: the protocol.
 * @update_word: the six-counter word (modes then include update/upgrade).
 * @lease_ms: the lockspace's lease, 0 for none.
 * @delay_us: see &struct proto_sim.
 * @rounds: schedules run, each with fresh random latencies and modes.
 * @iters: acquisitions per thread per round (without a stall).
 * @stall_mode: with a stall: the stalled holder's mode.
 * @stall: a holder stalls each round for four leases, clock stopped.
 * @deadline_ms: while the holder stalls, the hammering threads' acquire
 *	deadline (else 30 s): they time out and come back, a steady stream
 *	of new tickets (each abandoned one is finished in the background).
 */
struct sim_params {
	const char *name;
	const struct rdlock_proto_ops *ops;
	bool update_word;
	u32 lease_ms;
	u32 delay_us;
	u32 rounds;
	u32 iters;
	enum rdlock_mode stall_mode;
	bool stall;
	u32 deadline_ms;
	u32 read_fail_pct;
	u32 op_fail_pct;
};

struct sim_thread {
	struct proto_sim *sim;
	const struct sim_params *p;
	struct rdlock_proto_cfg cfg;
	struct rdlock_proto_stats stats;
	struct completion done;
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

static int sim_thread_fn(void *arg)
{
	struct sim_thread *st = arg;
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
		p->ops->release(&st->cfg, &t);
	}
	complete(&st->done);
	return 0;
}

static void sim_cfg(struct rdlock_proto_cfg *cfg, const struct sim_params *p,
		    struct sim_node *node, struct rdlock_proto_stats *stats)
{
	cfg->lease_ms = p->lease_ms;
	cfg->omega_us = 20;
	cfg->update_word = p->update_word;
	cfg->stats = stats;
	cfg->xport = &sim_xport;
	cfg->xport_priv = node;
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

/* A thread that cannot start counts as an error and as done at once. */
static void sim_start(struct sim_thread *st, int i)
{
	if (IS_ERR(kthread_run(sim_thread_fn, st, "rdlock_sim%d", i))) {
		atomic64_inc(&st->sim->errors);
		complete(&st->done);
	}
}

/*
 * One schedule. With a stall, a holder on the last node takes the lock
 * first; the other nodes' threads queue behind it and hammer until told to
 * stop; the holder's node stops its clock for four leases (it sleeps, and
 * nothing on it sees the time pass), then releases late, and its own
 * threads take the lock p->iters times each while the others still run.
 * Returns 1 if the stalled holder's release found its ticket revoked.
 */
static int sim_round(struct proto_sim *sim,
		     const struct sim_params *p, struct sim_thread *st)
{
	struct sim_node *last = &sim->nodes[SIM_NODES - 1];
	struct rdlock_proto_stats hstats = {};
	struct rdlock_proto_cfg hcfg = {};
	struct rdlock_ticket h = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
		.mode = p->stall_mode,
	};
	int i, nr = SIM_NODES * SIM_THREADS, ret;
	u32 stall_ms = 4 * p->lease_ms;
	unsigned long until;
	ktime_t start;

	sim->delay_us = p->delay_us;
	sim->read_fail_pct = p->read_fail_pct;
	sim->op_fail_pct = p->op_fail_pct;
	WRITE_ONCE(sim->stop, false);
	for (i = 0; i < nr; i++) {
		memset(&st[i], 0, sizeof(st[i]));
		st[i].sim = sim;
		st[i].p = p;
		st[i].iters = p->iters;
		if (p->stall && i < nr - SIM_THREADS)
			st[i].iters = 0;	/* until told to stop */
		sim_cfg(&st[i].cfg, p, &sim->nodes[i / SIM_THREADS],
			&st[i].stats);
		init_completion(&st[i].done);
	}
	if (!p->stall) {
		for (i = 0; i < nr; i++)
			sim_start(&st[i], i);
		for (i = 0; i < nr; i++)
			wait_for_completion(&st[i].done);
		rdlock_proto_flush();
		return 0;
	}

	sim_cfg(&hcfg, p, last, &hstats);
	do {
		ret = p->ops->acquire(&hcfg, &h, jiffies + 30 * HZ);
	} while (ret == -EAGAIN || sim_injected(p, ret));
	if (ret) {
		atomic64_inc(&sim->errors);
		return 0;
	}
	WRITE_ONCE(sim->stalling, true);
	for (i = 0; i < nr - SIM_THREADS; i++)
		sim_start(&st[i], i);
	start = ktime_get();
	msleep(stall_ms);
	/*
	 * Four leases are twice what the waiters must wait before they reset
	 * it; on a loaded guest they may take longer: stall until the word
	 * shows the reset (the event), for at most 20 s.
	 */
	until = jiffies + 20 * HZ;
	while (!sim_skipped(sim, p, &h) && time_before(jiffies, until))
		msleep(20);
	atomic64_add(ktime_to_ns(ktime_sub(ktime_get(), start)),
		     &last->hidden_ns);
	p->ops->release(&hcfg, &h);
	WRITE_ONCE(sim->stalling, false);
	for (i = nr - SIM_THREADS; i < nr; i++)
		sim_start(&st[i], i);
	for (i = nr - SIM_THREADS; i < nr; i++)
		wait_for_completion(&st[i].done);
	WRITE_ONCE(sim->stop, true);
	for (i = 0; i < nr - SIM_THREADS; i++)
		wait_for_completion(&st[i].done);
	/* Abandoned tickets and resets finish in the background. */
	rdlock_proto_flush();
	return atomic64_read(&hstats.lease_expiries);
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
	/* Issue 8: a failed poll kept its ticket in the word for good. */
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
};

static void sim_case_desc(const struct sim_params *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sim, sim_cases, sim_case_desc);

static void sim_test(struct kunit *test)
{
	const struct sim_params *p = test->param_value;
	struct rdlock_ticket t = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
		.mode = RDLOCK_MODE_EXCLUSIVE,
	};
	struct sim_thread *st;
	struct proto_sim *sim;
	int i, revoked = 0;
	u32 r;

	sim = kunit_kzalloc(test, sizeof(*sim), GFP_KERNEL);
	st = kunit_kcalloc(test, SIM_NODES * SIM_THREADS, sizeof(*st),
			   GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sim);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, st);
	spin_lock_init(&sim->lock);
	for (i = 0; i < SIM_NODES; i++)
		sim_node_init(sim, i);

	for (r = 0; r < p->rounds; r++)
		revoked += sim_round(sim, p, st);

	KUNIT_EXPECT_EQ(test, atomic_read(&sim->violations), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sim->errors), 0);
	KUNIT_EXPECT_EQ(test, sim->counter, (u64)atomic64_read(&sim->writes));
	KUNIT_EXPECT_GT(test, atomic64_read(&sim->writes), 0);
	if (p->stall) {
		/* Every stalled holder was reset and found out at release. */
		KUNIT_EXPECT_EQ(test, revoked, p->rounds);
		/* The resetting waiter gives up its ticket (unless abandoned). */
		if (!p->deadline_ms)
			KUNIT_EXPECT_GE(test, atomic64_read(&sim->again),
					p->rounds);
	} else if (!p->lease_ms) {
		KUNIT_EXPECT_EQ(test, atomic64_read(&sim->again), 0);
	}
	if (p->read_fail_pct || p->op_fail_pct)
		KUNIT_EXPECT_GT(test, atomic64_read(&sim->xfails), 0);
	/* No ticket left behind: a writer is granted by its first operation. */
	sim->read_fail_pct = 0;
	sim->op_fail_pct = 0;
	sim_cfg(&st->cfg, p, &sim->nodes[0], NULL);
	KUNIT_EXPECT_EQ(test, p->ops->acquire(&st->cfg, &t, jiffies + HZ), 0);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	p->ops->release(&st->cfg, &t);
	if (p->deadline_ms)
		KUNIT_EXPECT_GE(test, atomic64_read(&sim->timeouts), p->rounds);
	kunit_info(test, "%u rounds: %lld grants, %lld exclusive, %lld EAGAIN, %lld timeouts, %lld injected failures, %d stalled holders revoked\n",
		   p->rounds, atomic64_read(&sim->grants),
		   atomic64_read(&sim->writes), atomic64_read(&sim->again),
		   atomic64_read(&sim->timeouts), atomic64_read(&sim->xfails),
		   revoked);
}

/*
 * A caller looping TRY on a held lock leaves a ticket finishing in the
 * background at every failure: its quota refuses the next TRY with -EBUSY
 * before it takes a ticket, and gives room back as the tickets finish.
 */
static void sim_quota_test(struct kunit *test)
{
	const struct sim_params p = { .ops = &rdlock_proto_bakery };
	struct rdlock_proto_quota *q = rdlock_proto_quota_alloc(2);
	struct rdlock_ticket h = {
		.node = SIM_LOCK_NODE, .slot = SIM_LOCK_SLOT,
		.incarnation = SIM_INCARNATION,
		.mode = RDLOCK_MODE_EXCLUSIVE,
	};
	struct rdlock_ticket t;
	struct rdlock_proto_cfg cfg = {};
	struct proto_sim *sim;
	u64 word;
	int i;

	sim = kunit_kzalloc(test, sizeof(*sim), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sim);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	spin_lock_init(&sim->lock);
	for (i = 0; i < SIM_NODES; i++)
		sim_node_init(sim, i);
	sim_cfg(&cfg, &p, &sim->nodes[1], NULL);
	cfg.quota = q;

	KUNIT_ASSERT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &h, 0), 0);
	for (i = 0; i < 2; i++) {
		t = h;
		t.mode = RDLOCK_MODE_SHARED;
		KUNIT_EXPECT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &t,
								  jiffies),
				-ETIMEDOUT);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&q->finishing), 2);
	word = sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];
	t = h;
	t.remote_ops = 0;
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &t, jiffies),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 0U);
	KUNIT_EXPECT_EQ(test, sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT], word);
	KUNIT_EXPECT_EQ(test, atomic64_read(&q->refused), 1LL);
	/* Waiting without a deadline is never refused. */
	KUNIT_EXPECT_EQ(test, rdlock_proto_admit(&cfg, 0), 0);

	rdlock_proto_bakery.release(&cfg, &h);
	rdlock_proto_flush();
	KUNIT_EXPECT_EQ(test, atomic_read(&q->finishing), 0);
	t = h;
	t.remote_ops = 0;
	KUNIT_EXPECT_EQ(test, rdlock_proto_bakery.acquire(&cfg, &t, jiffies),
			0);
	KUNIT_EXPECT_EQ(test, t.remote_ops, 1U);
	rdlock_proto_bakery.release(&cfg, &t);
	rdlock_proto_quota_put(q);
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
	struct rdlock_proto_stats stats = {};
	struct rdlock_proto_cfg cfg = {};
	struct rdlock_ticket t;
	struct proto_sim *sim;
	int i;

	sim = kunit_kzalloc(test, sizeof(*sim), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sim);
	spin_lock_init(&sim->lock);
	for (i = 0; i < SIM_NODES; i++)
		sim_node_init(sim, i);
	sim_cfg(&cfg, &p, &sim->nodes[1], &stats);

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

static struct kunit_case proto_sim_cases[] = {
	KUNIT_CASE_PARAM(sim_test, sim_gen_params),
	KUNIT_CASE(sim_quota_test),
	KUNIT_CASE(sim_restart_test),
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
