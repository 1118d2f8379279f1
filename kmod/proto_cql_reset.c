// SPDX-License-Identifier: GPL-2.0
/*
 * Resets of the CQL lock (section 4.4 and appendices A and B of DecLock's
 * paper; Documentation/rdlock/cql.rst, "Resets"):
 * a participant's handling of reset signals and the claimer's of their
 * answers, a waiter that steps out of the queue of a stuck lock to reset
 * it, claiming the reset field, signalling and collecting the answers,
 * zeroing the queue, taking over the reset of a claimer that is gone, the
 * resets a release owes (in the background), the liveness checks that
 * find a lock stuck, an aborted acquisition's wait for the reset, and the
 * version reset of an idle lock. The flat protocol is in proto_cql.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/rdlock.h>

#include "lockword/cql.h"
#include "proto_cql-pri.h"
#include "xport.h"

/*
 * A waiter that sees the header unchanged this long, with nobody alive
 * named at the queue's head, resets the lock (cql.rst, "Resets").
 */
#define RDLOCK_CQL_STUCK_MS_DEFAULT	30000
/* A reset's claimer signals again those that did not answer yet. */
#define RDLOCK_CQL_SIGNAL_MS		1000
/* A reset left this long by a claimer that is gone is taken over. */
#define RDLOCK_CQL_TAKEOVER_MS		5000
/* Step 1 of a reset: CAS tries against FAAs that change the header. */
#define RDLOCK_CQL_CLAIM_TRIES		64

/**
 * struct rdlock_cql_claim - a reset this node runs, collecting answers
 * @list: in &struct rdlock_cql_waiters.claims.
 * @home: home node of the lock.
 * @slot: header slot of the lock.
 * @incarnation: the home's table.
 * @seq: the claim's number on this node.
 * @gen: the reset count it signals; raised past the count of a NACK.
 * @pending: nodes that have not answered, by bit.
 * @all: the participants, by bit.
 * @raise: a NACK raised @gen: every participant is signalled again.
 * @signalled: when the participants were last signalled (jiffies).
 * @wq: a claimer that sleeps waits on this queue (its own) for @pending
 *	to empty; NULL for a reset run in steps.
 * @kick: the finisher of a reset run in steps, which an answer kicks
 *	(rdlock_cql_reset_later()); NULL for a claimer that sleeps.
 */
struct rdlock_cql_claim {
	struct list_head list;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 seq;
	u32 gen;
	u32 pending;
	u32 all;
	bool raise;
	unsigned long signalled;
	wait_queue_head_t *wq;
	struct rdlock_finish *kick;
};

const char *const rdlock_cql_reset_names[RDLOCK_CQL_RESET_NR] = {
	[RDLOCK_CQL_RESET_VERSION]	= "version",
	[RDLOCK_CQL_RESET_OVERWRITE]	= "overwrite",
	[RDLOCK_CQL_RESET_UNWRITTEN]	= "unwritten",
	[RDLOCK_CQL_RESET_STUCK]	= "stuck",
	[RDLOCK_CQL_RESET_TAKEOVER]	= "takeover",
	[RDLOCK_CQL_RESET_DOWN]		= "down",
};
EXPORT_SYMBOL_NS_GPL(rdlock_cql_reset_names, RDLOCK_INTERNAL);

/*
 * Step 2 of a reset, at a participant: the lock's reset count becomes the
 * claimer's, every waiter of this node in the lock's queue is aborted
 * (it leaves the queue and enqueues again once the reset is over), no
 * client gets in until this node answered, and it answers once none of
 * its clients is in the queue any more: at once, or when the last holder
 * releases and the last aborted waiter is out. Only a signal of a later
 * count than this node's is handled (a claim whose count was raised, by
 * a NACK, is handled again). One sent again (same claimer and number)
 * is answered again; any other is older than what this node knows: a
 * copy of a finished claim's signal that came late (signals of different
 * claimers travel on different connections), which must not abort the
 * waiters of the queue since, or a claimer that missed resets, which is
 * told this node's count (NACK) and signals again past it.
 */
/*
 * Is (@home, @slot, @inc) a lock of the table @home has now, as this
 * node knows it (rdlock_xport_slot_check())? 0: yes; -ENOENT: this node
 * knows no table of @home (never connected to it in this epoch), so no
 * client of it can be in the lock's queue; -ESTALE: another table, or a
 * slot outside it. A gate made for a reset signal keeps the lock's
 * reset count for as long as the registry lives: only a known lock gets
 * one, or a peer's signals (a bug's, or a peer's that kept a dead
 * table's locks) would grow this node's gates without bound.
 */
static int rdlock_cql_signal_check(const struct rdlock_cql_waiters *ws,
				   u32 home, u32 slot, u64 inc)
{
	u64 now;

	if (!inc || home >= RDLOCK_MAX_NODES)
		return -ESTALE;
	if (!ws->xport)
		return rdlock_xport_slot_check(home, inc, slot);
	if (!ws->xport->incarnation)
		return 0;
	now = ws->xport->incarnation(ws->xport_priv, home);
	return !now ? -ENOENT : now == inc ? 0 : -ESTALE;
}

void rdlock_cql_on_reset(struct rdlock_cql_waiters *ws, u32 src,
			 const struct rdlock_cql_msg *m)
{
	u32 home = le32_to_cpu(m->home), slot = le32_to_cpu(m->slot);
	u64 inc = le64_to_cpu(m->incarnation);
	u32 claimer = le32_to_cpu(m->local), seq = le32_to_cpu(m->pos);
	u32 gen = le32_to_cpu(m->reset_gen);
	int known = rdlock_cql_signal_check(ws, home, slot, inc);
	struct rdlock_cql_waiter *w;
	struct rdlock_cql_gate *g;
	bool ack, same;
	unsigned long id;

	spin_lock(&ws->gate_lock);
	g = rdlock_cql_gate_lookup(ws, home, slot, inc);
	if (!g && known == -ESTALE) {
		/*
		 * A lock of another table than its home's now, or none: no
		 * client of this node is in its queue. Unanswered: a claimer
		 * whose home was replaced gives up.
		 */
		spin_unlock(&ws->gate_lock);
		atomic64_inc(&rdlock_proto_stats.cql_signals_refused);
		return;
	}
	if (!g && known == -ENOENT) {
		/*
		 * A home this node never reached in this epoch (it may never:
		 * a node back with a new table that one survivor turns away):
		 * no client of this node is in the queue. Answered, no count
		 * kept: the claim must not wait for this node.
		 */
		spin_unlock(&ws->gate_lock);
		rdlock_cql_answer(ws, RDLOCK_CQL_ACK, claimer, seq, home, slot,
				  inc, gen);
		return;
	}
	if (!g) {
		g = kzalloc(sizeof(*g), GFP_ATOMIC);
		if (!g) {
			/* Unanswered: the claimer signals again. */
			spin_unlock(&ws->gate_lock);
			return;
		}
		rdlock_cql_gate_add(ws, g, home, slot, inc);
	}
	if (gen > g->gen) {
		g->sig_node = claimer + 1;
		g->sig_seq = seq;
		g->gen = gen;
		g->ack_due = true;
		g->lap_block = false;	/* the reset is under way */
		xa_lock(&ws->xa);
		xa_for_each(&ws->xa, id, w) {
			if (w->home == home && w->slot == slot &&
			    w->incarnation == inc && w->gen != g->gen) {
				WRITE_ONCE(w->aborted, true);
				wake_up(&w->wq);
			}
		}
		xa_unlock(&ws->xa);
	}
	same = g->sig_node == claimer + 1 && g->sig_seq == seq;
	if (g->ack_due && !g->inside) {
		g->ack_due = false;
		wake_up(&g->wq);
	}
	/*
	 * Answered already (the answer lost, or the claimer asks again):
	 * again at once; clients in the queue now came after the claim.
	 */
	ack = same && !g->ack_due;
	gen = g->gen;
	spin_unlock(&ws->gate_lock);
	if (ack || !same)
		rdlock_cql_answer(ws, same ? RDLOCK_CQL_ACK : RDLOCK_CQL_NACK,
				  claimer, seq, home, slot, inc, gen);
}

/*
 * A participant answered the claim it names. ACK: one fewer to wait for,
 * if it handled the count signalled last (an answer to an earlier signal
 * of the claim would leave that node a count behind the others). NACK: it
 * knows a count at least ours; the claim signals everybody again, past it.
 */
void rdlock_cql_on_answer(struct rdlock_cql_waiters *ws, u32 src,
			  const struct rdlock_cql_msg *m)
{
	u32 gen = le32_to_cpu(m->reset_gen);
	struct rdlock_cql_claim *c;

	if (src >= RDLOCK_MAX_NODES)
		return;
	spin_lock(&ws->gate_lock);
	list_for_each_entry(c, &ws->claims, list) {
		if (c->home == le32_to_cpu(m->home) &&
		    c->slot == le32_to_cpu(m->slot) &&
		    c->incarnation == le64_to_cpu(m->incarnation) &&
		    c->seq == le32_to_cpu(m->pos)) {
			if (m->kind == RDLOCK_CQL_ACK && gen >= c->gen) {
				c->pending &= ~BIT(src);
			} else if (m->kind == RDLOCK_CQL_NACK &&
				   gen >= c->gen) {
				WRITE_ONCE(c->gen, gen + 1);
				c->raise = true;
			}
			if (c->kick)
				rdlock_proto_finish_kick(c->kick);
			else
				wake_up(c->wq);
			break;
		}
	}
	spin_unlock(&ws->gate_lock);
}

/*
 * A waiter (@w, in the queue) found the lock stuck (@wt): out of the queue
 * to reset it. Returns true when it is out for good (it reset the lock, or
 * another reset wiped the queue), false when it is back where it was (the
 * header moved: no reset needed).
 */
static int rdlock_cql_reset(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, const struct cql_layout *l,
			    enum rdlock_cql_reset_cause cause, u64 h);

bool rdlock_cql_stuck_reset(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_cql_waiters *ws,
			    struct rdlock_ticket *t,
			    const struct cql_layout *l,
			    struct rdlock_cql_waiter *w,
			    const struct rdlock_cql_watch *wt)
{
	int ret;

	__rdlock_cql_gate_leave(ws, t, true);
	ret = rdlock_cql_reset(cfg, t, l, wt->cause, wt->last);
	return !rdlock_cql_gate_back(ws, t, w, !ret);
}

/* Every queue entry back to its initial version (a reset's step 3). */
static int rdlock_cql_zero_queue(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t,
				 const struct cql_layout *l)
{
	u64 old;
	u32 i;
	int ret;

	for (i = 0; i < cql_capacity(l); i++) {
		ret = rdlock_proto_op_at_must(cfg, t, t->slot + 1 + i,
					      RDLOCK_XOP_WRITE, CQL_ENTRY_INIT,
					      0, &old);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Step 3 of a reset claimed with reset id @id: 1 when done, 0 when another
 * claimer took over, else an error of the transport.
 */
static int rdlock_cql_reinit(const struct rdlock_proto_cfg *cfg,
			     struct rdlock_ticket *t,
			     const struct cql_layout *l, u32 id)
{
	u64 old, cur;
	int ret;

	ret = rdlock_cql_read(cfg, t, t->slot, &cur);
	if (ret)
		return ret;
	if (cql_hdr_reset_id(cur) != id)
		return 0;
	ret = rdlock_cql_zero_queue(cfg, t, l);
	if (ret)
		return ret;
	for (;;) {
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, cur,
					   CQL_HDR_INIT, &old);
		if (ret)
			return ret;
		if (old == cur)
			return 1;
		if (cql_hdr_reset_id(old) != id)
			return 0;	/* taken over */
		cur = old;	/* an aborted enqueue or release added to it */
	}
}

/*
 * Is @node there? Yes unless it is declared down (rdlock_proto_node_down()):
 * appendix B's failure detector is the cluster's membership, never the
 * transport's view. A node that does not answer may be behind a partition
 * with a holder inside; a reset that went on without it would grant the
 * lock beside that holder.
 */
static bool rdlock_cql_alive(const struct rdlock_proto_cfg *cfg, u32 node)
{
	return node == rdlock_proto_self(cfg) ||
	       !rdlock_proto_node_down(cfg, node);
}

/*
 * Is the client at the queue's head (@e, READ at position @head) not
 * known to be alive: its entry names a node declared down, or it has none
 * (granted at its enqueue, or a reader: the header does not say who)?
 */
static bool rdlock_cql_head_unknown(const struct rdlock_proto_cfg *cfg,
				    const struct cql_layout *l, u64 e,
				    u32 head)
{
	return cql_entry_classify(l, e, head) != CQL_ENTRY_VALID ||
	       !rdlock_cql_alive(cfg, cql_cid_node(cql_entry_cid(e)));
}

static void rdlock_cql_count_reset(const struct rdlock_proto_cfg *cfg,
				   enum rdlock_cql_reset_cause cause)
{
	__rdlock_proto_count(cfg, offsetof(struct rdlock_proto_stats,
					   cql_resets) +
				  cause * sizeof(atomic64_t));
}

/*
 * Signal every participant still to answer. A node declared down is not
 * awaited; one the signal cannot reach is, and is signalled again the
 * next time: it may still hold the lock.
 */
static void rdlock_cql_signal(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t,
			      struct rdlock_cql_waiters *ws,
			      struct rdlock_cql_claim *c)
{
	struct rdlock_cql_msg m = {
		.home = cpu_to_le32(t->node),
		.slot = cpu_to_le32(t->slot),
		.incarnation = cpu_to_le64(t->incarnation),
		.pos = cpu_to_le32(c->seq),
		.local = cpu_to_le32(rdlock_proto_self(cfg)),
		.reset_gen = cpu_to_le32(READ_ONCE(c->gen)),
		.kind = RDLOCK_CQL_RESET,
	};
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		if (!(READ_ONCE(c->pending) & BIT(i)))
			continue;
		/* Sent, its answer clears it; else signalled again. */
		if (rdlock_cql_alive(cfg, i)) {
			rdlock_cql_send(cfg, i, &m);
			continue;
		}
		spin_lock_bh(&ws->gate_lock);
		c->pending &= ~BIT(i);
		spin_unlock_bh(&ws->gate_lock);
	}
}

/* Does this node run a claim of @c's lock? Under the gate lock. */
static bool rdlock_cql_claim_running_locked(struct rdlock_cql_waiters *ws,
					    const struct rdlock_cql_claim *c)
{
	struct rdlock_cql_claim *o;

	list_for_each_entry(o, &ws->claims, list)
		if (o->home == c->home && o->slot == c->slot &&
		    o->incarnation == c->incarnation)
			return true;
	return false;
}

/*
 * One claim per lock at a time on this node, idle resets included: two
 * would both take this node's reset id for their own, and the later one's
 * signal would abort waiters of the queue the earlier one had reset.
 * False if another claim of this node runs; else @c is registered (for
 * the answers to its signals) until rdlock_cql_claim_end().
 */
static bool rdlock_cql_claim_begin(struct rdlock_cql_waiters *ws,
				   struct rdlock_cql_claim *c)
{
	spin_lock_bh(&ws->gate_lock);
	if (rdlock_cql_claim_running_locked(ws, c)) {
		spin_unlock_bh(&ws->gate_lock);
		return false;
	}
	c->seq = atomic_inc_return(&ws->claim_seq);
	list_add(&c->list, &ws->claims);
	spin_unlock_bh(&ws->gate_lock);
	return true;
}

/*
 * After this, no answer kicks or wakes @c's claimer. An owed reset that
 * waits for another claim of the lock to end runs its next step.
 */
static void rdlock_cql_claim_end(struct rdlock_cql_waiters *ws,
				 struct rdlock_cql_claim *c)
{
	spin_lock_bh(&ws->gate_lock);
	list_del(&c->list);
	spin_unlock_bh(&ws->gate_lock);
	wake_up_all(&ws->claim_ended);
}

/*
 * Step 1 of a reset of a busy lock (section 4.4), by this node: 1 when it
 * claimed the lock, 0 when it did not (another claimer's, or the cause is
 * gone), else the transport's error (the reset field may stay; enqueuers
 * take the reset over once this node is gone).
 *
 * Claim by CAS of the reset field on @h, the header as last seen; with
 * @exact only that value (a waiter that found the lock stuck: any change
 * is progress), else again on whatever FAAs made of it, until another
 * claimer's reset id shows, or the cause is gone: the lock's reset count
 * on this node is no longer @gen (RDLOCK_CQL_ANY_GEN: not checked), or for
 * a version wrap the header no longer reaches the all-ones lap. A
 * takeover replaces the reset id of a claimer that is gone.
 *
 * Steps 2 and 3 follow (rdlock_cql_claimed_start(), _step()): signal
 * every participant (this node too) with the lock's next reset count;
 * each aborts its waiters and answers once none of its clients is in the
 * queue (holders release first); collect every answer. Only a node
 * declared down is not awaited; one that cannot be reached is signalled
 * until it answers or is declared down. Then zero the queue, and the
 * header by CAS, unless another claimer took over meanwhile. The caller
 * must not be in the lock's queue.
 */
static int rdlock_cql_claim_cas(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t,
				const struct cql_layout *l,
				enum rdlock_cql_reset_cause cause, u64 h,
				bool exact, u32 gen)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	u32 self = rdlock_proto_self(cfg), tries, id = self + 1;
	u64 claimed, old, cur;
	int ret;

	for (tries = 0;; tries++) {
		/* Another reset since the cause was seen: it is gone. */
		if ((gen != RDLOCK_CQL_ANY_GEN && rdlock_cql_gen(ws, t) != gen) ||
		    (cause == RDLOCK_CQL_RESET_VERSION &&
		     !cql_hdr_version_overflow(l, h)))
			return 0;
		cur = cause == RDLOCK_CQL_RESET_TAKEOVER ?
		      cql_hdr_clear_reset(h) : h;
		if ((cause != RDLOCK_CQL_RESET_TAKEOVER &&
		     cql_hdr_resetting(h)) ||
		    !cql_hdr_set_reset(cur, self, &claimed))
			return 0;	/* another claimer's */
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, h, claimed,
					   &old);
		/*
		 * A CAS that failed may have been applied: the next one says
		 * (our reset id in the header is ours: one claim per node).
		 */
		if (ret == -ESTALE || (ret && tries >= RDLOCK_CQL_CLAIM_TRIES))
			return ret;
		if (ret)
			continue;
		/* Or a CAS sent again whose first copy did it. */
		if (old == h || (cql_hdr_reset_id(old) == id &&
				 cql_hdr_reset_id(h) != id))
			return 1;
		/*
		 * A version claim goes on while the lap is reached: nobody
		 * is granted there, so only the bounded FAAs of its aborted
		 * enqueues and of the holders' dequeues change the header.
		 */
		if (exact || (tries >= RDLOCK_CQL_CLAIM_TRIES &&
			      cause != RDLOCK_CQL_RESET_VERSION))
			return 0;
		h = old;
	}
}

/* Step 2 begins, for the claim @c this node made (registered). */
static void rdlock_cql_claimed_start(const struct rdlock_proto_cfg *cfg,
				     const struct rdlock_ticket *t,
				     struct rdlock_cql_claim *c)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	u32 i, all = 0;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (rdlock_proto_participant(cfg, i))
			all |= BIT(i);
	spin_lock_bh(&ws->gate_lock);
	c->all = all;
	c->gen = rdlock_cql_gen_locked(ws, t) + 1;
	c->pending = all;
	c->raise = false;
	spin_unlock_bh(&ws->gate_lock);
	rdlock_cql_signal(cfg, t, ws, c);
	c->signalled = jiffies;
}

/*
 * Step 3 of a reset this node claimed: 1 when done, 0 when another
 * claimer took it over, else the transport's error (the table is gone).
 * It must end, or enqueuers wait for the reset field for good (only a
 * claimer that is gone is taken over): a failed operation is tried again,
 * from the READ, while the lock lives (rdlock_cql_lock_lost()).
 */
static int rdlock_cql_reset_reinit(const struct rdlock_proto_cfg *cfg,
				   struct rdlock_ticket *t,
				   const struct cql_layout *l)
{
	unsigned int us = RDLOCK_CQL_REFETCH_MIN_US;
	u32 id = rdlock_proto_self(cfg) + 1;
	int ret;

	for (;;) {
		ret = rdlock_cql_reinit(cfg, t, l, id);
		if (ret >= 0 || ret == -ESTALE)
			return ret;
		if (rdlock_cql_lock_lost(cfg, t))
			return -ESTALE;
		rdlock_cql_refetch_pause(cfg, &us);
	}
}

/*
 * A look at the answers to a claim this node made (@c, after
 * rdlock_cql_claimed_start()): a NACK signals everybody again, with the
 * count raised; once every participant answered, step 3. A participant
 * that has not answered within RDLOCK_CQL_SIGNAL_MS is signalled again,
 * unless the lock is gone or the claim was taken over. Never waits for an
 * answer: returns the nanoseconds until the next look (an answer is
 * earlier: it wakes @c->wq, or kicks @c->kick), or 0 once the claim is
 * over, with *@ret 1 when it reset the lock, 0 when another claimer took
 * it over, else the transport's error.
 */
static u64 rdlock_cql_claimed_step(const struct rdlock_proto_cfg *cfg,
				   struct rdlock_ticket *t,
				   const struct cql_layout *l,
				   struct rdlock_cql_claim *c, int *ret)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	unsigned long next = c->signalled +
			     msecs_to_jiffies(RDLOCK_CQL_SIGNAL_MS);
	u32 id = rdlock_proto_self(cfg) + 1;
	unsigned long now = jiffies;
	bool raised, done;
	u64 cur;
	int err;

	spin_lock_bh(&ws->gate_lock);
	raised = c->raise;
	if (raised) {
		c->raise = false;
		c->pending = c->all;
	}
	done = !c->pending;
	spin_unlock_bh(&ws->gate_lock);
	if (done)
		goto reinit;
	if (!raised && time_before(now, next))
		return jiffies_to_nsecs(next - now);
	if (!raised) {
		/*
		 * The lock gone (the cluster down here, its table or its home
		 * lost): nobody is left to answer or to enqueue.
		 */
		if (rdlock_cql_lock_lost(cfg, t)) {
			*ret = -ESTALE;
			return 0;
		}
		/* Still ours? A claimer taken for gone gives the lock up. */
		err = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &cur);
		if (err == -ESTALE || (!err && cql_hdr_reset_id(cur) != id))
			goto reinit;
	}
	rdlock_cql_signal(cfg, t, ws, c);
	c->signalled = jiffies;
	/* Those left were declared down: no answer is to come. */
	if (!READ_ONCE(c->pending))
		goto reinit;
	return (u64)RDLOCK_CQL_SIGNAL_MS * NSEC_PER_MSEC;
reinit:
	*ret = rdlock_cql_reset_reinit(cfg, t, l);
	return 0;
}

/*
 * Steps 2 and 3 of a reset this node claimed, busy or idle (@c registered
 * by rdlock_cql_claim_begin()), sleeping until the answers are in: 1 when
 * done, 0 when another claimer took it over, else the transport's error
 * (the table is gone).
 */
static int rdlock_cql_reset_claimed(const struct rdlock_proto_cfg *cfg,
				    struct rdlock_ticket *t,
				    const struct cql_layout *l,
				    struct rdlock_cql_claim *c)
{
	int ret = 0;
	u64 ns;

	rdlock_cql_claimed_start(cfg, t, c);
	while ((ns = rdlock_cql_claimed_step(cfg, t, l, c, &ret)))
		wait_event_timeout(*c->wq,
				   !READ_ONCE(c->pending) || READ_ONCE(c->raise),
				   nsecs_to_jiffies(ns) ?: 1);
	return ret;
}

/*
 * A waiter that steps out of the queue of a stuck lock, or takes over a
 * reset whose claimer is gone, resets it (@cause, from @h, the header as
 * it saw it last), sleeping until every participant answered: 1 when it
 * claimed the lock (and reset it, unless taken over), 0 when it did not
 * (another claimer's, another claim of this node's, or the header moved),
 * else the transport's error. It must not wait for another claim of this
 * node: that one may be waiting for it to leave the queue.
 */
static int rdlock_cql_reset(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, const struct cql_layout *l,
			    enum rdlock_cql_reset_cause cause, u64 h)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	DECLARE_WAIT_QUEUE_HEAD_ONSTACK(wq);
	struct rdlock_cql_claim c = {
		.home = t->node, .slot = t->slot,
		.incarnation = t->incarnation, .wq = &wq,
	};
	int ret;

	if (!rdlock_cql_claim_begin(ws, &c))
		return 0;
	ret = rdlock_cql_claim_cas(cfg, t, l, cause, h, true,
				   RDLOCK_CQL_ANY_GEN);
	if (ret == 1) {
		ret = rdlock_cql_reset_claimed(cfg, t, l, &c);
		if (ret == 1)
			rdlock_cql_count_reset(cfg, cause);
		ret = ret < 0 ? ret : 1;
	}
	rdlock_cql_claim_end(ws, &c);
	return ret;
}

/**
 * struct rdlock_cql_reset_steps - a reset a release owes, between steps
 * @c: its claim; registered from the claim on (@claimed).
 * @ended: on &rdlock_cql_waiters.claim_ended while another claim of the
 *	lock by this node runs (@waiting): its end kicks the next step.
 * @claimed: step 1 is done: answers are collected.
 * @waiting: @ended is on the queue.
 */
struct rdlock_cql_reset_steps {
	struct rdlock_cql_claim c;
	struct wait_queue_entry ended;
	bool claimed;
	bool waiting;
};

static_assert(sizeof(struct rdlock_cql_reset_steps) <=
	      RDLOCK_FINISH_STATE_SIZE);

/*
 * Claim @s's lock (rdlock_cql_claim_begin()); while another claim of it
 * by this node runs, wait on claim_ended, which that claim's end wakes.
 */
static bool rdlock_cql_reset_begin(struct rdlock_finish *f,
				   struct rdlock_cql_waiters *ws,
				   struct rdlock_cql_reset_steps *s)
{
	if (!s->waiting) {
		if (rdlock_cql_claim_begin(ws, &s->c))
			return true;
		rdlock_proto_finish_wake_init(&s->ended, f);
		add_wait_queue(&ws->claim_ended, &s->ended);
		s->waiting = true;
	}
	/* Again once on the queue: that claim may have ended meanwhile. */
	if (!rdlock_cql_claim_begin(ws, &s->c))
		return false;
	remove_wait_queue(&ws->claim_ended, &s->ended);
	s->waiting = false;
	return true;
}

/*
 * A reset a release, an abort at the all-ones lap or a node's declaration
 * owes, in the background (rdlock_finish_step_t): @t names the lock, the
 * cause (the low half of @t->prev), the reset count it was seen at (the
 * high half) and the header (@t->word). It waits for another claim of
 * this node to end instead of being dropped: that one may be an idle reset
 * that fails, and a busy lock whose owed resets are all dropped carries
 * qhead through the all-ones lap; the cause is checked again against the
 * header the claim's CAS finds. Then one step claims and signals, and the
 * answers, which come once the holders left, kick the next ones: no worker
 * is held while a holder holds.
 */
static u64 rdlock_cql_reset_step(struct rdlock_finish *f,
				 const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t, void *state)
{
	enum rdlock_cql_reset_cause cause =
		(enum rdlock_cql_reset_cause)(u32)t->prev;
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_reset_steps *s = state;
	struct rdlock_cql_claim *c = &s->c;
	struct cql_layout l;
	int ret = 0;
	u64 ns;

	if (WARN_ON_ONCE(rdlock_cql_layout(cfg, &l))) {
		if (s->waiting)
			remove_wait_queue(&ws->claim_ended, &s->ended);
		if (s->claimed)
			rdlock_cql_claim_end(ws, c);
		return 0;
	}
	if (!s->claimed) {
		c->home = t->node;
		c->slot = t->slot;
		c->incarnation = t->incarnation;
		c->kick = f;
		/* Its end kicks; the timer only in case. */
		if (!rdlock_cql_reset_begin(f, ws, s))
			return (u64)RDLOCK_CQL_CHECK_MS * NSEC_PER_MSEC;
		ret = rdlock_cql_claim_cas(cfg, t, &l, cause, t->word, false,
					   t->prev >> 32);
		if (ret != 1) {
			rdlock_cql_claim_end(ws, c);
			return 0;
		}
		s->claimed = true;
		rdlock_cql_claimed_start(cfg, t, c);
	}
	ns = rdlock_cql_claimed_step(cfg, t, &l, c, &ret);
	if (ns)
		return ns;
	if (ret == 1)
		rdlock_cql_count_reset(cfg, cause);
	rdlock_cql_claim_end(ws, c);
	return 0;
}

/*
 * A reset a release found necessary, in the background: it waits for
 * every holder, and the releaser may hold other locks those wait for.
 */
void rdlock_cql_reset_later(const struct rdlock_proto_cfg *cfg,
			    const struct rdlock_ticket *t,
			    enum rdlock_cql_reset_cause cause, u64 h,
			    u32 gen)
{
	struct rdlock_ticket r = *t;

	/*
	 * The copy only names the lock, as a released ticket does; an
	 * enqueue aborted at the all-ones lap goes on with its own.
	 */
	r.state = RDLOCK_TICKET_DONE;
	r.prev = (u64)gen << 32 | cause;
	r.word = h;
	rdlock_proto_reset_later(cfg, &r, rdlock_cql_reset_step);
}

unsigned long rdlock_cql_stuck_jiffies(const struct rdlock_proto_cfg *cfg)
{
	return msecs_to_jiffies(cfg->cql_stuck_ms ?: RDLOCK_CQL_STUCK_MS_DEFAULT);
}

/* A reset field left by a claimer that is gone: when to look at it. */
unsigned long
rdlock_cql_takeover_jiffies(const struct rdlock_proto_cfg *cfg)
{
	return msecs_to_jiffies(min_not_zero(cfg->cql_stuck_ms,
					     (u32)RDLOCK_CQL_TAKEOVER_MS));
}

/*
 * Does the header @h, unchanged for long, show the lock stuck for good?
 * During a reset: when its claimer is declared down (appendix B: take it
 * over). Otherwise when the client at the queue's head is not known to be
 * alive: its entry names a node declared down, or it has none (granted at its
 * enqueue, or a reader: rdlock cannot tell who, and the reset waits for
 * every live holder anyway). A head entry naming a live node is a holder
 * that is slow: wait on.
 */
bool rdlock_cql_stuck(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_ticket *t,
		      const struct cql_layout *l, u64 h,
		      struct rdlock_cql_watch *wt)
{
	u32 head = cql_hdr_qhead(l, h);
	u64 e;

	if (cql_hdr_resetting(h)) {
		wt->cause = RDLOCK_CQL_RESET_TAKEOVER;
		return !rdlock_cql_alive(cfg, cql_hdr_reset_node(h));
	}
	wt->cause = RDLOCK_CQL_RESET_STUCK;
	if (rdlock_proto_op_at(cfg, t, rdlock_cql_entry_slot(t, l, head),
			       RDLOCK_XOP_READ, 0, 0, &e))
		return false;
	return rdlock_cql_head_unknown(cfg, l, e, head);
}

/*
 * Node @dead was declared down: it is dead or fenced, and cut off this
 * node's table, the home of the lock at @t. The queue does not name the
 * nodes of holders granted at their enqueue, nor of readers, so any busy
 * lock may hold something of @dead's: it is reset, in the background (a
 * reset waits for every live holder). A reset does not signal a node
 * declared down and drops whatever it had in the queue; live waiters are
 * aborted and enqueue again, in their order of arrival at the new queue,
 * so the failure costs fairness once, not the lock (before, a waiter's
 * liveness check found such a lock stuck only after the stuck time).
 * @before_excl runs first when the queue's head is not known to be a live
 * node's: @dead may have held the lock exclusive.
 *
 * Return: 1 when a reset is queued, 0 for an idle lock, the error of
 * @before_excl or of a READ.
 */
int rdlock_cql_forget_node(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t, u32 dead,
			   int (*before_excl)(void *arg), void *arg)
{
	struct cql_layout l;
	u32 head;
	u64 h, e;
	int ret;

	if (rdlock_cql_layout(cfg, &l))
		return -EINVAL;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &h);
	if (ret)
		return ret;
	if (!cql_hdr_qsize(&l, h) && !cql_hdr_resetting(h))
		return 0;
	head = cql_hdr_qhead(&l, h);
	if (before_excl &&
	    (rdlock_proto_op_at(cfg, t, rdlock_cql_entry_slot(t, &l, head),
				RDLOCK_XOP_READ, 0, 0, &e) ||
	     rdlock_cql_head_unknown(cfg, &l, e, head))) {
		ret = before_excl(arg);
		if (ret)
			return ret;
	}
	/* Another claimer's reset signals the survivors only, from now on. */
	if (!cql_hdr_resetting(h))
		rdlock_cql_reset_later(cfg, t, RDLOCK_CQL_RESET_DOWN, h,
				       RDLOCK_CQL_ANY_GEN);
	return 1;
}

/*
 * An acquisition aborted by a reset: READ the header after back-offs until
 * the reset field is clear (its claimer collects answers, then zeroes the
 * queue). Not how grants are seen; only resets are waited for this way. A
 * reset whose claimer is gone is taken over after RDLOCK_CQL_TAKEOVER_MS
 * (appendix B); it must not be in the lock's queue then, and is not. A
 * header that reaches the all-ones lap with nobody claiming its reset yet
 * is waited for too, and its reset claimed again now and then (once
 * every RDLOCK_CQL_TAKEOVER_MS): whoever claims it, it comes.
 */
int rdlock_cql_await_reset(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t,
			   const struct cql_layout *l,
			   unsigned long deadline)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	unsigned long since = jiffies, claimed = jiffies;
	unsigned int backoff = 0, retry_us = 0;
	u32 id = 0;
	u64 h;
	int ret;

	for (;;) {
		ret = rdlock_proto_backoff(cfg, &backoff, deadline);
		if (ret)
			return ret;
		ret = rdlock_proto_read(cfg, t, &h, &retry_us, deadline);
		if (ret)
			return ret;
		if (!cql_hdr_resetting(h) && !cql_hdr_version_overflow(l, h)) {
			rdlock_cql_lap_block(ws, t, false);
			return 0;
		}
		t->polls++;
		if (!cql_hdr_resetting(h)) {
			if (time_after(jiffies, claimed +
				       rdlock_cql_takeover_jiffies(cfg))) {
				rdlock_cql_reset_later(cfg, t,
						       RDLOCK_CQL_RESET_VERSION,
						       h, RDLOCK_CQL_ANY_GEN);
				claimed = jiffies;
			}
			continue;
		}
		if (cql_hdr_reset_id(h) != id) {
			id = cql_hdr_reset_id(h);
			since = jiffies;
		} else if (time_after(jiffies, since +
				      rdlock_cql_takeover_jiffies(cfg))) {
			if (!rdlock_cql_alive(cfg, cql_hdr_reset_node(h)))
				rdlock_cql_reset(cfg, t, l,
						 RDLOCK_CQL_RESET_TAKEOVER, h);
			since = jiffies;
		}
	}
}

/*
 * Version wrap (section 4.4, appendix A), for an idle lock only: a
 * releaser that left the queue empty with qhead in the second half of its
 * laps claims the lock by CAS of the reset field (only while the header is
 * still exactly what its dequeue made it, so nobody is queued), then runs
 * steps 2 and 3 of a busy reset: every node's reset count moves before the
 * queue restarts, so that a slow releaser of the old queue, or its
 * notification still in flight, cannot grant a waiter of the new one at
 * the same position (positions restart at 0). Enqueuers that meet the
 * reset field wait for it to clear and enqueue again. Far before the
 * all-ones lap, so that some release finds the lock idle; a lock that is
 * never idle for that long still reaches it (cql.rst).
 */
static void __rdlock_cql_reset_idle(const struct rdlock_proto_cfg *cfg,
				    struct rdlock_ticket *t,
				    const struct cql_layout *l, u64 post,
				    struct rdlock_cql_claim *c);

void rdlock_cql_reset_idle(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t,
			   const struct cql_layout *l, u64 post)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	DECLARE_WAIT_QUEUE_HEAD_ONSTACK(wq);
	struct rdlock_cql_claim c = {
		.home = t->node, .slot = t->slot,
		.incarnation = t->incarnation, .wq = &wq,
	};

	if (cql_hdr_qsize(l, post) || cql_hdr_resetting(post) ||
	    cql_pos_version(l, cql_hdr_qhead(l, post)) <
	    cql_ver_init(l) / 2 || !rdlock_cql_claim_begin(ws, &c))
		return;
	__rdlock_cql_reset_idle(cfg, t, l, post, &c);
	rdlock_cql_claim_end(ws, &c);
}

static void __rdlock_cql_reset_idle(const struct rdlock_proto_cfg *cfg,
				    struct rdlock_ticket *t,
				    const struct cql_layout *l, u64 post,
				    struct rdlock_cql_claim *c)
{
	u32 self = rdlock_proto_self(cfg);
	u64 claimed, old;
	int ret;

	if (!cql_hdr_set_reset(post, self, &claimed))
		return;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, post, claimed, &old);
	if (ret == -ESTALE)
		return;
	if (ret) {
		/*
		 * Done or not: only this node's claim, and it runs one per
		 * lock, puts our reset id there; left there, enqueuers would
		 * wait for it for good.
		 */
		if (rdlock_cql_read(cfg, t, t->slot, &old) ||
		    cql_hdr_reset_id(old) != self + 1)
			return;
	} else if (old != post) {
		return;	/* somebody came in: a later release tries again */
	}
	ret = rdlock_cql_reset_claimed(cfg, t, l, c);
	if (ret == 1)
		rdlock_proto_count(cfg, version_resets);
	else if (ret < 0)
		pr_warn_ratelimited("node %u slot %u: version reset failed (%d)\n",
				    t->node, t->slot, ret);
}
