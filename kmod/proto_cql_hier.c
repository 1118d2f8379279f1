// SPDX-License-Identifier: GPL-2.0
/*
 * Hierarchical locking of the CQL lock (section 5 of DecLock's paper,
 * cql.rst "Hierarchical locking"): each
 * node has one entry in a lock's queue at a time, taken by the first of
 * its clients; the others wait on the node, in its local lock. A release
 * hands the entry to the node's next waiter when that waiter arrived
 * before any other node's entry behind ours (task-fair), else it dequeues
 * and the waiter enqueues anew. "Arrived before" is judged by the home's
 * FAA order, not by clocks: a waiter READs the header when it starts
 * waiting, and the queue's tail it sees (its stamp) is compared with the
 * position after the node's entry.
 *
 * Here: this node's local lock of each lock, task-fair or phase-fair, and
 * rdlock_cql_hier_acquire() and rdlock_cql_hier_release() over it, which
 * take and give back the node's entry with the flat protocol of
 * proto_cql.c.
 */
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "lockword/cql.h"
#include "proto_cql-pri.h"
#include "xport.h"

/* Local handovers in a row before the entry goes through the queue. */
#define RDLOCK_CQL_LOCAL_MAX	16

/* What the local lock told one of its waiters (&rdlock_cql_lwait.verdict). */
enum rdlock_cql_verdict {
	RDLOCK_CQL_LOCAL_WAIT,	/* still waiting */
	RDLOCK_CQL_LOCAL_GRANT,	/* holds, on the node's entry */
	RDLOCK_CQL_LOCAL_TAKE,	/* owns the local lock: enqueue the entry */
};

/**
 * struct rdlock_cql_lwait - a client waiting on its node's local lock
 * @list: in &struct rdlock_cql_llock.waitq, in arrival order.
 * @mode: what it asks for.
 * @stamp: cql_stamp_arrival() of the queue's tail it READ when it arrived.
 * @stamped: @stamp is known (the READ is done, and saw no reset).
 * @verdict: enum rdlock_cql_verdict, set under the local lock's mutex.
 */
struct rdlock_cql_lwait {
	struct list_head list;
	enum cql_mode mode;
	u32 stamp;
	bool stamped;
	int verdict;
};

/**
 * struct rdlock_cql_llock - a lock's local lock on this node (Fig. 9)
 * @hnode: in &struct rdlock_cql_waiters.locals.
 * @home: home node of the lock.
 * @slot: header slot of the lock.
 * @incarnation: the home's table, as the tickets name it.
 * @users: clients holding, waiting or acquiring (under the gate lock).
 * @mtx: protects everything below.
 * @wq: waiters sleep here until their @verdict is set.
 * @waitq: struct rdlock_cql_lwait, in arrival order.
 * @holders: clients that own the local lock: holding, or (one) enqueueing
 *	the node's entry.
 * @mode: the holders' mode.
 * @held: the node's entry is granted (@holders hold the lock).
 * @prev: the header the entry's enqueue returned (its position).
 * @handovers: local handovers since the entry was enqueued.
 */
struct rdlock_cql_llock {
	struct hlist_node hnode;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 users;
	struct mutex mtx;	/* protects the rest */
	wait_queue_head_t wq;
	struct list_head waitq;
	u32 holders;
	enum cql_mode mode;
	bool held;
	u64 prev;
	u32 handovers;
};

static struct rdlock_cql_llock *
rdlock_cql_llock_get(struct rdlock_cql_waiters *ws,
		     const struct rdlock_ticket *t)
{
	struct rdlock_cql_llock *lk, *n = kzalloc(sizeof(*n), GFP_NOFS);
	u32 key = rdlock_cql_gate_key(t->node, t->slot);

	if (!n)
		return NULL;
	spin_lock_bh(&ws->gate_lock);
	hash_for_each_possible(ws->locals, lk, hnode, key)
		if (lk->home == t->node && lk->slot == t->slot &&
		    lk->incarnation == t->incarnation)
			goto found;
	lk = n;
	n = NULL;
	lk->home = t->node;
	lk->slot = t->slot;
	lk->incarnation = t->incarnation;
	mutex_init(&lk->mtx);
	init_waitqueue_head(&lk->wq);
	INIT_LIST_HEAD(&lk->waitq);
	hash_add(ws->locals, &lk->hnode, key);
found:
	lk->users++;
	spin_unlock_bh(&ws->gate_lock);
	kfree(n);
	return lk;
}

/* The local lock of a ticket that holds it (and so keeps it). */
static struct rdlock_cql_llock *
rdlock_cql_llock_find(struct rdlock_cql_waiters *ws,
		      const struct rdlock_ticket *t)
{
	struct rdlock_cql_llock *lk;

	spin_lock_bh(&ws->gate_lock);
	hash_for_each_possible(ws->locals, lk, hnode,
			       rdlock_cql_gate_key(t->node, t->slot))
		if (lk->home == t->node && lk->slot == t->slot &&
		    lk->incarnation == t->incarnation)
			goto out;
	lk = NULL;
out:
	spin_unlock_bh(&ws->gate_lock);
	return lk;
}

/* The last user frees it: then nobody holds it and nobody waits. */
static void rdlock_cql_llock_put(struct rdlock_cql_waiters *ws,
				 struct rdlock_cql_llock *lk)
{
	bool last;

	spin_lock_bh(&ws->gate_lock);
	last = !--lk->users;
	if (last)
		hash_del(&lk->hnode);
	spin_unlock_bh(&ws->gate_lock);
	if (last) {
		WARN_ON(lk->holders || !list_empty(&lk->waitq));
		mutex_destroy(&lk->mtx);
		kfree(lk);
	}
}

static bool rdlock_cql_phase_fair(const struct rdlock_proto_cfg *cfg)
{
	return cfg->cql_policy == RDLOCK_CQL_PHASE_FAIR;
}

/*
 * Did @w arrive before any other node's entry after the node's own? Its
 * stamp (the tail it READ) is at most the position after ours: every
 * entry enqueued before its READ has a position below that tail.
 */
static bool rdlock_cql_local_first(const struct cql_layout *l,
				   const struct rdlock_cql_llock *lk,
				   const struct rdlock_cql_lwait *w)
{
	u32 next = cql_pos_add(l, cql_enqueue_pos(l, lk->prev), 1);

	return w->stamped &&
	       cql_stamp_before(l, w->stamp, cql_stamp_of_pos(l, next));
}

/*
 * Does @w come before the next node in the queue (Fig. 10 line 24)? One
 * READ of the entry after the node's: none there (or not written yet),
 * yes; else its arrival stamp must be strictly before the entry's, whose
 * timestamp field holds the stamp of the client that enqueued it (its own
 * position, or its arrival stamp if it waited on its node first). A tie
 * (two arrivals between the same two FAAs) goes to the other node.
 */
static bool rdlock_cql_local_turn(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t,
				  const struct cql_layout *l,
				  const struct rdlock_cql_llock *lk,
				  const struct rdlock_cql_lwait *w)
{
	u32 next = cql_pos_add(l, cql_enqueue_pos(l, lk->prev), 1);
	u64 e;

	if (rdlock_proto_op_at(cfg, t, rdlock_cql_entry_slot(t, l, next),
			       RDLOCK_XOP_READ, 0, 0, &e))
		return false;
	if (cql_entry_classify(l, e, next) != CQL_ENTRY_VALID)
		return true;
	return w->stamped && cql_stamp_before(l, w->stamp, cql_entry_ts(e));
}

/*
 * The waiter a release considers: the first; phase-fair, after a writer,
 * the first reader (Fig. 10 line 24, section 5.3).
 */
static struct rdlock_cql_lwait *
rdlock_cql_local_next(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_cql_llock *lk)
{
	struct rdlock_cql_lwait *w;

	if (rdlock_cql_phase_fair(cfg) && lk->mode == CQL_EXCLUSIVE)
		list_for_each_entry(w, &lk->waitq, list)
			if (w->mode == CQL_SHARED)
				return w;
	return list_first_entry_or_null(&lk->waitq, struct rdlock_cql_lwait,
					list);
}

/*
 * The node's entry is held shared: let waiting readers share it (Fig. 10
 * lines 16-17). Task-fair: the readers at the head of the local queue
 * that arrived before any other node's entry behind ours; phase-fair:
 * every waiting reader.
 */
static void rdlock_cql_local_share(const struct rdlock_proto_cfg *cfg,
				   const struct cql_layout *l,
				   struct rdlock_cql_llock *lk)
{
	struct rdlock_cql_lwait *w, *n;
	bool pf = rdlock_cql_phase_fair(cfg), woke = false;

	lockdep_assert_held(&lk->mtx);
	list_for_each_entry_safe(w, n, &lk->waitq, list) {
		if (w->mode != CQL_SHARED) {
			if (pf)
				continue;
			break;
		}
		if (!pf && !rdlock_cql_local_first(l, lk, w))
			break;
		list_del(&w->list);
		lk->holders++;
		WRITE_ONCE(w->verdict, RDLOCK_CQL_LOCAL_GRANT);
		rdlock_proto_count(cfg, cql_local_shares);
		woke = true;
	}
	if (woke)
		wake_up_all(&lk->wq);
}

/* Is a reset signal waiting for this node to leave the lock's queue? */
static bool rdlock_cql_ack_due(struct rdlock_cql_waiters *ws,
			       const struct rdlock_ticket *t)
{
	struct rdlock_cql_gate *g;
	bool due;

	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	due = g && g->ack_due;
	spin_unlock_bh(&ws->gate_lock);
	return due;
}

/*
 * The local lock's owner gives it up without holding the entry (its
 * enqueue failed, or it stopped waiting): the next waiter enqueues, or
 * the local lock is free.
 */
static void rdlock_cql_local_pass(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_cql_llock *lk)
{
	struct rdlock_cql_lwait *w;

	lockdep_assert_held(&lk->mtx);
	lk->holders = 0;
	lk->held = false;
	w = list_first_entry_or_null(&lk->waitq, struct rdlock_cql_lwait,
				     list);
	if (!w)
		return;
	list_del(&w->list);
	lk->holders = 1;
	lk->mode = w->mode;
	WRITE_ONCE(w->verdict, RDLOCK_CQL_LOCAL_TAKE);
	wake_up_all(&lk->wq);
}

/* Enqueue the node's entry for @t, which owns the local lock. */
static int rdlock_cql_local_take(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_cql_llock *lk,
				 const struct cql_layout *l,
				 struct rdlock_ticket *t,
				 unsigned long deadline,
				 const struct rdlock_cql_lwait *w)
{
	int ret = __rdlock_cql_acquire(cfg, t, deadline,
				       w && w->stamped ? &w->stamp : NULL);

	mutex_lock(&lk->mtx);
	if (ret) {
		/* An abandoned entry is finished in the background. */
		rdlock_cql_local_pass(cfg, lk);
	} else {
		lk->held = true;
		lk->prev = t->prev;
		lk->handovers = 0;
		if (lk->mode == CQL_SHARED)
			rdlock_cql_local_share(cfg, l, lk);
	}
	mutex_unlock(&lk->mtx);
	return ret;
}

int rdlock_cql_hier_acquire(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t,
			    unsigned long deadline)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_lwait w = { .mode = rdlock_cql_mode(t) };
	struct rdlock_cql_llock *lk;
	struct cql_layout l;
	long to, left;
	u64 h = 0;
	int ret;

	ret = rdlock_cql_check_args(cfg, t, &l);
	if (ret)
		return ret;
	lk = rdlock_cql_llock_get(ws, t);
	if (!lk)
		return -ENOMEM;
	mutex_lock(&lk->mtx);
	if (!lk->holders)
		goto own;
	mutex_unlock(&lk->mtx);
	/*
	 * Taken: READ the header for our stamp (where the queue's tail is
	 * now, section 5.3 as built) and to see whether another node's
	 * writer waits, which a reader must not overtake by joining.
	 */
	if (!rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &h) &&
	    !cql_hdr_resetting(h)) {
		w.stamp = cql_stamp_arrival(&l, cql_enqueue_pos(&l, h));
		w.stamped = true;
	}
	mutex_lock(&lk->mtx);
	if (!lk->holders)
		goto own;
	if (w.mode == CQL_SHARED && lk->mode == CQL_SHARED && lk->held &&
	    list_empty(&lk->waitq) && w.stamped && !cql_hdr_wcnt(&l, h)) {
		/* A reader joins its node's shared hold: no entry of its own. */
		lk->holders++;
		rdlock_proto_count(cfg, cql_local_shares);
		mutex_unlock(&lk->mtx);
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ISSUED);
		goto granted;
	}
	list_add_tail(&w.list, &lk->waitq);
	mutex_unlock(&lk->mtx);
	rdlock_proto_count(cfg, waits);
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ISSUED);
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_WAITING);
	for (;;) {
		/* In slices: a long local wait is no hung task. */
		to = msecs_to_jiffies(RDLOCK_CQL_CHECK_MS);
		if (deadline)
			to = clamp_t(long, (long)(deadline - jiffies), 0, to);
		left = wait_event_killable_timeout(lk->wq,
						   READ_ONCE(w.verdict), to);
		if (READ_ONCE(w.verdict))
			break;
		if (left > 0 || (!left && (!deadline ||
					   time_before(jiffies, deadline))))
			continue;
		mutex_lock(&lk->mtx);
		if (!w.verdict) {
			/* Given up while queued on the node: nothing remote. */
			list_del(&w.list);
			mutex_unlock(&lk->mtx);
			rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
			rdlock_cql_llock_put(ws, lk);
			return left < 0 ? -EINTR : -ETIMEDOUT;
		}
		mutex_unlock(&lk->mtx);
		break;
	}
	if (w.verdict == RDLOCK_CQL_LOCAL_GRANT)
		goto granted;
	goto take;
own:
	/*
	 * Free: ours to enqueue the node's entry; our stamp is not needed.
	 * A deadline that has passed (a TRY) still gets its one enqueue, as
	 * a flat client's does: the lock may well be free.
	 */
	lk->holders = 1;
	lk->mode = w.mode;
	mutex_unlock(&lk->mtx);
	w.stamped = false;
	goto enqueue;
take:
	/*
	 * Handed the local lock after waiting on the node past our deadline:
	 * too late to enqueue, it goes to the next waiter.
	 */
	if (deadline && time_after_eq(jiffies, deadline))
		goto pass;
enqueue:
	if (fatal_signal_pending(current))
		goto pass;
	ret = rdlock_cql_local_take(cfg, lk, &l, t, deadline,
				    w.verdict ? &w : NULL);
	if (ret)
		rdlock_cql_llock_put(ws, lk);
	return ret;
pass:
	mutex_lock(&lk->mtx);
	rdlock_cql_local_pass(cfg, lk);
	mutex_unlock(&lk->mtx);
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	rdlock_cql_llock_put(ws, lk);
	return fatal_signal_pending(current) ? -EINTR : -ETIMEDOUT;
granted:
	/* Counted here; an acquisition that enqueues counts itself. */
	rdlock_proto_count(cfg, acquires);
	/* The node's entry, as its enqueue left it: the release needs it. */
	mutex_lock(&lk->mtx);
	t->prev = lk->prev;
	mutex_unlock(&lk->mtx);
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	t->granted_at = rdlock_proto_now(cfg);
	return 0;
}

void rdlock_cql_hier_release(const struct rdlock_proto_cfg *cfg,
			     struct rdlock_ticket *t)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_lwait *w;
	struct rdlock_cql_llock *lk;
	struct cql_layout l;

	if (WARN_ON_ONCE(rdlock_cql_layout(cfg, &l)))
		return;
	lk = rdlock_cql_llock_find(ws, t);
	if (WARN_ON_ONCE(!lk))
		return;
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_RELEASING);
	mutex_lock(&lk->mtx);
	if (WARN_ON_ONCE(!lk->holders || !lk->held)) {
		mutex_unlock(&lk->mtx);
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
		goto out;
	}
	if (--lk->holders) {
		/* Other readers of the node still hold the entry. */
		mutex_unlock(&lk->mtx);
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
		goto out;
	}
	w = rdlock_cql_local_next(cfg, lk);
	/*
	 * Hand the entry over on the node (Fig. 10 line 25): same mode (the
	 * entry's mode is in the queue), no reset waiting for us, not too
	 * many in a row, and @w before the next node's entry. The mutex is
	 * held over that READ, as the paper holds it over the lock's
	 * operations: local arrivals wait for the decision.
	 */
	if (w && w->mode == lk->mode && lk->handovers < RDLOCK_CQL_LOCAL_MAX &&
	    !rdlock_cql_ack_due(ws, t) &&
	    rdlock_cql_local_turn(cfg, t, &l, lk, w)) {
		list_del(&w->list);
		lk->holders = 1;
		lk->handovers++;
		WRITE_ONCE(w->verdict, RDLOCK_CQL_LOCAL_GRANT);
		if (lk->mode == CQL_SHARED)
			rdlock_cql_local_share(cfg, &l, lk);
		wake_up_all(&lk->wq);
		mutex_unlock(&lk->mtx);
		rdlock_proto_count(cfg, cql_local_handovers);
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
		goto out;
	}
	/*
	 * Through the queue: dequeue the node's entry; @w enqueues anew. It
	 * is woken after our dequeue, so that the node has one entry at a
	 * time (the gate would hold it back otherwise); @w may be gone
	 * once its verdict is set.
	 */
	t->prev = lk->prev;
	lk->held = false;
	if (w) {
		list_del(&w->list);
		lk->holders = 1;
		lk->mode = w->mode;
		WRITE_ONCE(w->verdict, RDLOCK_CQL_LOCAL_TAKE);
	}
	mutex_unlock(&lk->mtx);
	__rdlock_cql_release(cfg, t);
	if (w)
		wake_up_all(&lk->wq);
out:
	rdlock_cql_llock_put(ws, lk);
}
