// SPDX-License-Identifier: GPL-2.0
/*
 * The CQL (cooperative queue-notify) reader-writer lock of DecLock,
 * section 4 and appendix A of shared/papers/declock-cql.txt, flat (no
 * hierarchy), on the encoding of lockword/cql.h.
 *
 * A lock is a header word at (node, slot) and a circular queue of
 * 2^cap_bits entries in the slots after it. Acquire enqueues with one
 * FETCH_AND_ADD on the header; granted at once when the header it returns
 * allows, else the waiter WRITEs its queue entry (mode, client id: node and
 * the id of its waiter on that node, version, timestamp) and sleeps until a
 * notification message arrives: nobody polls the lock table while waiting.
 * Release dequeues with one FETCH_AND_ADD posted together with the READ of
 * the entries after the releaser's position (one FAA_READ, one round
 * trip), and READs more, a range at a time, only when it must look further
 * to find whom to notify: the next writer alone, or every adjacent reader
 * after a writer. An entry not yet written by a slow enqueuer is read
 * again (refetched) after a short back-off. Every table
 * access, the home's own, goes through the transport. Notifications are
 * typed messages on the transport's reliable ordered connections; each
 * carries the lock's home, slot, table incarnation and the waiter's
 * position (which includes the lap), so a stale one matches no waiter and
 * is dropped. See Documentation/rdlock/cql.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/rdlock.h>

#include "lockword/cql.h"
#include "proto.h"
#include "xport.h"

/* Our user message type (rdlock_xport_set_msg_handler()). */
#define RDLOCK_CQL_MSG_TYPE		0
/*
 * A waiter that heard nothing for this long checks that its lock's table
 * still exists, and a writer whether it is at the head (a notification lost
 * with a connection): a liveness check, not how grants are seen.
 */
#define RDLOCK_CQL_CHECK_MS		1000
/* Back-off between READs of an entry its enqueuer has not written yet. */
#define RDLOCK_CQL_REFETCH_MIN_US	20
#define RDLOCK_CQL_REFETCH_MAX_US	2000
/* A releaser gives up refetching after this long (cql.rst, limits). */
#define RDLOCK_CQL_REFETCH_MAX_MS	10000
/* A notification refused for lack of buffers or a blip is sent again. */
#define RDLOCK_CQL_SEND_MAX_MS		2000
/* Queues up to this many entries are read into a buffer on the stack. */
#define RDLOCK_CQL_STACK_ENTRIES	32

/*
 * A notification: the lock's home node, header slot and table, the
 * position it grants (the lap in its top bits) and the waiter's local id
 * on the receiving node; @reset_gen is 0 until resets exist.
 */
struct rdlock_cql_msg {
	__le32 home;
	__le32 slot;
	__le64 incarnation;
	__le32 pos;
	__le32 local;
	__le32 reset_gen;
	__le32 pad;
};

static_assert(sizeof(struct rdlock_cql_msg) <= RDLOCK_XMSG_PAYLOAD);

/**
 * struct rdlock_cql_waiter - one waiting acquisition, in its node's registry
 * @wq: the acquirer (or the worker finishing it) sleeps here.
 * @id: local id, the key in &struct rdlock_cql_waiters.
 * @home: home node of the lock.
 * @slot: header slot of the lock.
 * @incarnation: the home's table the ticket is in.
 * @pos: the position it waits at; ~0U until its FA returned.
 * @granted: set by the notification.
 *
 * Every field but @granted is written under the registry's lock, which
 * the notification holds while it compares and wakes.
 */
struct rdlock_cql_waiter {
	wait_queue_head_t wq;
	u32 id;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 pos;
	bool granted;
};

static struct rdlock_cql_waiters rdlock_cql_local;
static bool rdlock_cql_ready;

/**
 * rdlock_cql_waiters_init() - an empty registry of waiters
 * @ws: the registry.
 */
void rdlock_cql_waiters_init(struct rdlock_cql_waiters *ws)
{
	xa_init_flags(&ws->xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	spin_lock_init(&ws->gate_lock);
	hash_init(ws->gates);
}
EXPORT_SYMBOL_NS_GPL(rdlock_cql_waiters_init, RDLOCK_INTERNAL);

/**
 * rdlock_cql_waiters_destroy() - free a registry
 * @ws: the registry; its waiters must be gone (rdlock_proto_flush()).
 */
void rdlock_cql_waiters_destroy(struct rdlock_cql_waiters *ws)
{
	WARN_ON(!xa_empty(&ws->xa));
	WARN_ON(!hash_empty(ws->gates));
	xa_destroy(&ws->xa);
}
EXPORT_SYMBOL_NS_GPL(rdlock_cql_waiters_destroy, RDLOCK_INTERNAL);

/**
 * rdlock_cql_deliver() - a notification arrived: wake its waiter
 * @ws: the receiving node's registry.
 * @src: the sending node.
 * @payload: the message.
 * @len: its length.
 *
 * Context: softirq, or BHs disabled; does not sleep. A message that matches
 * no waiter (the waiter gave up, or it is from before a reset) is counted
 * in notify_stale and dropped.
 */
void rdlock_cql_deliver(struct rdlock_cql_waiters *ws, u32 src,
			const void *payload, size_t len)
{
	const struct rdlock_cql_msg *m = payload;
	struct rdlock_cql_waiter *w;
	bool hit = false;

	if (len < sizeof(*m))
		return;
	xa_lock(&ws->xa);
	w = xa_load(&ws->xa, le32_to_cpu(m->local));
	if (w && w->home == le32_to_cpu(m->home) &&
	    w->slot == le32_to_cpu(m->slot) &&
	    w->incarnation == le64_to_cpu(m->incarnation) &&
	    w->pos == le32_to_cpu(m->pos)) {
		WRITE_ONCE(w->granted, true);
		wake_up(&w->wq);
		hit = true;
	}
	xa_unlock(&ws->xa);
	if (!hit)
		atomic64_inc(&rdlock_proto_stats.notify_stale);
}
EXPORT_SYMBOL_NS_GPL(rdlock_cql_deliver, RDLOCK_INTERNAL);

static void rdlock_cql_msg_handler(u32 src, const void *payload, size_t len)
{
	rdlock_cql_deliver(&rdlock_cql_local, src, payload, len);
}

static struct rdlock_cql_waiters *
rdlock_cql_waiters_of(const struct rdlock_proto_cfg *cfg)
{
	return cfg->xport ? cfg->xport->waiters(cfg->xport_priv) :
			    &rdlock_cql_local;
}

static u32 rdlock_cql_self(const struct rdlock_proto_cfg *cfg)
{
	return cfg->xport ? cfg->xport->self(cfg->xport_priv) :
			    rdlock_xport_self();
}

static int rdlock_cql_layout(const struct rdlock_proto_cfg *cfg,
			     struct cql_layout *l)
{
	return cql_layout_init(l, cfg->cql_cap_bits ?: CQL_CAP_BITS_DEFAULT,
			       cfg->cql_ver_bits ?: CQL_VER_BITS_DEFAULT);
}

/* The header and its queue: 1 + capacity slots; 0 for a bad layout. */
static u32 rdlock_cql_slots(const struct rdlock_proto_cfg *cfg)
{
	struct cql_layout l;

	return rdlock_cql_layout(cfg, &l) ? 0 : 1 + cql_capacity(&l);
}

static enum cql_mode rdlock_cql_mode(const struct rdlock_ticket *t)
{
	return t->mode == RDLOCK_MODE_EXCLUSIVE ? CQL_EXCLUSIVE : CQL_SHARED;
}

static u32 rdlock_cql_entry_slot(const struct rdlock_ticket *t,
				 const struct cql_layout *l, u32 pos)
{
	return t->slot + 1 + cql_pos_index(l, pos);
}

/* A registered waiter for @t, before its FA: ERR_PTR(-ENOMEM) or -EBUSY. */
static struct rdlock_cql_waiter *
rdlock_cql_waiter_new(struct rdlock_cql_waiters *ws,
		      const struct rdlock_ticket *t)
{
	struct rdlock_cql_waiter *w = kzalloc(sizeof(*w), GFP_NOFS);
	int ret;

	if (!w)
		return ERR_PTR(-ENOMEM);
	init_waitqueue_head(&w->wq);
	w->home = t->node;
	w->slot = t->slot;
	w->incarnation = t->incarnation;
	w->pos = ~0U;
	ret = xa_alloc_bh(&ws->xa, &w->id, w, XA_LIMIT(1, CQL_LOCAL_MAX),
			  GFP_NOFS);
	if (ret) {
		kfree(w);
		return ERR_PTR(ret == -EBUSY ? -EBUSY : -ENOMEM);
	}
	return w;
}

/* Out of the registry: no notification can reach @w once this returns. */
static void rdlock_cql_waiter_free(struct rdlock_cql_waiters *ws,
				   struct rdlock_cql_waiter *w)
{
	xa_erase_bh(&ws->xa, w->id);
	kfree(w);
}

/* Does the home still have the table the ticket was taken in? */
static bool rdlock_cql_table_alive(const struct rdlock_proto_cfg *cfg,
				   const struct rdlock_ticket *t)
{
	u64 now;

	if (cfg->xport) {
		if (!t->incarnation || !cfg->xport->incarnation)
			return true;
		now = cfg->xport->incarnation(cfg->xport_priv, t->node);
		return now == t->incarnation;
	}
	if (!rdlock_xport_ready())
		return false;
	return !t->incarnation ||
	       rdlock_xport_node_incarnation(t->node) == t->incarnation;
}

/*
 * The liveness check of a waiter that heard nothing for a while: the
 * header alone may show that it holds the lock (cql_waiter_granted())
 * whether or not its notification arrived. A notification is lost when a
 * slow releaser finds the waiter's entry overwritten by a later lap (readers
 * granted at enqueue may come and go past waiters it has not notified yet)
 * or with a failed connection. Returns 1 when granted so, 0 to keep
 * waiting, or -ESTALE once the table is gone.
 */
static int rdlock_cql_check(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, u32 pos)
{
	struct cql_layout l;
	u64 h;
	int ret;

	if (!rdlock_cql_table_alive(cfg, t))
		return -ESTALE;
	if (rdlock_cql_layout(cfg, &l))
		return 0;
	t->polls++;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &h);
	if (ret == -ESTALE)
		return ret;
	return !ret && cql_waiter_granted(&l, h, pos, rdlock_cql_mode(t));
}

/*
 * Sleep until @w is notified. Returns 0 when granted, -ETIMEDOUT at
 * @deadline (jiffies, 0: none), -EINTR on a fatal signal, -ESTALE when the
 * table is gone.
 */
static int rdlock_cql_wait(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t,
			   struct rdlock_cql_waiter *w, unsigned long deadline)
{
	long to, left;
	int ret;

	for (;;) {
		to = msecs_to_jiffies(RDLOCK_CQL_CHECK_MS);
		if (deadline) {
			left = (long)(deadline - jiffies);
			if (left <= 0)
				return READ_ONCE(w->granted) ? 0 : -ETIMEDOUT;
			to = min(to, left);
		}
		left = wait_event_killable_timeout(w->wq, READ_ONCE(w->granted),
						   to);
		if (READ_ONCE(w->granted))
			return 0;
		if (left < 0)
			return -EINTR;
		if (deadline && time_after_eq(jiffies, deadline))
			continue;	/* says -ETIMEDOUT above */
		ret = rdlock_cql_check(cfg, t, w->pos);
		if (ret)
			return ret < 0 ? ret : 0;
	}
}

static void rdlock_cql_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t);
static void rdlock_cql_gate_leave(struct rdlock_cql_waiters *ws,
				  const struct rdlock_ticket *t);

/* Background end of an abandoned waiter: wait for its grant, release. */
static void rdlock_cql_finish(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_waiter *w;
	int ret;

	xa_lock_bh(&ws->xa);
	w = xa_load(&ws->xa, (u32)t->word);
	xa_unlock_bh(&ws->xa);
	if (WARN_ON_ONCE(!w))
		return;
	ret = rdlock_cql_wait(cfg, t, w, 0);
	rdlock_cql_waiter_free(ws, w);
	if (ret) {
		/* The table is gone, and the ticket with it. */
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_LOST);
		rdlock_cql_gate_leave(ws, t);
		return;
	}
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	t->granted_at = rdlock_proto_now(cfg);
	rdlock_cql_release(cfg, t);
}

/**
 * struct rdlock_cql_gate - this node's clients in one lock's queue
 * @hnode: in &struct rdlock_cql_waiters.gates.
 * @home: home node of the lock.
 * @slot: header slot of the lock.
 * @incarnation: the home's table.
 * @inside: clients of this node between their enqueue and dequeue.
 * @users: @inside and those waiting to get in; the last frees the gate.
 * @wq: those waiting to get in.
 *
 * Flat CQL has no reset yet (cql.rst): a queue must never hold more than
 * its capacity, so each node admits at most capacity / nodes of its own
 * clients into a lock's queue; the others wait here, on this node,
 * without remote operations.
 */
struct rdlock_cql_gate {
	struct hlist_node hnode;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 inside;
	u32 users;
	wait_queue_head_t wq;
};

static u32 rdlock_cql_gate_key(const struct rdlock_ticket *t)
{
	return t->node * 0x9e3779b1U ^ t->slot;
}

static struct rdlock_cql_gate *
rdlock_cql_gate_find(struct rdlock_cql_waiters *ws,
		     const struct rdlock_ticket *t)
{
	struct rdlock_cql_gate *g;

	lockdep_assert_held(&ws->gate_lock);
	hash_for_each_possible(ws->gates, g, hnode, rdlock_cql_gate_key(t))
		if (g->home == t->node && g->slot == t->slot &&
		    g->incarnation == t->incarnation)
			return g;
	return NULL;
}

static u32 rdlock_cql_gate_limit(const struct rdlock_proto_cfg *cfg,
				 const struct cql_layout *l)
{
	u32 nodes = cfg->cql_nodes ?: RDLOCK_MAX_NODES;

	return max(cql_capacity(l) / nodes, 1U);
}

static bool rdlock_cql_gate_try(struct rdlock_cql_waiters *ws,
				struct rdlock_cql_gate *g, u32 limit)
{
	bool in;

	spin_lock_bh(&ws->gate_lock);
	in = g->inside < limit;
	g->inside += in;
	spin_unlock_bh(&ws->gate_lock);
	return in;
}

static void rdlock_cql_gate_put(struct rdlock_cql_waiters *ws,
				struct rdlock_cql_gate *g, bool inside)
{
	bool last;

	spin_lock_bh(&ws->gate_lock);
	g->inside -= inside;
	last = !--g->users;
	if (last)
		hash_del(&g->hnode);
	else if (inside)
		wake_up(&g->wq);
	spin_unlock_bh(&ws->gate_lock);
	if (last)
		kfree(g);
}

/*
 * Get into @t's lock's queue on this node: 0, -ETIMEDOUT at @deadline,
 * -EINTR on a fatal signal, -ENOMEM.
 */
static int rdlock_cql_gate_enter(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_cql_waiters *ws,
				 const struct rdlock_ticket *t,
				 const struct cql_layout *l,
				 unsigned long deadline)
{
	struct rdlock_cql_gate *g, *n = kzalloc(sizeof(*n), GFP_NOFS);
	u32 limit = rdlock_cql_gate_limit(cfg, l);
	long left;

	if (!n)
		return -ENOMEM;
	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	if (!g) {
		g = n;
		n = NULL;
		g->home = t->node;
		g->slot = t->slot;
		g->incarnation = t->incarnation;
		init_waitqueue_head(&g->wq);
		hash_add(ws->gates, &g->hnode, rdlock_cql_gate_key(t));
	}
	g->users++;
	spin_unlock_bh(&ws->gate_lock);
	kfree(n);
	for (;;) {
		if (rdlock_cql_gate_try(ws, g, limit))
			return 0;
		left = MAX_SCHEDULE_TIMEOUT;
		if (deadline) {
			left = (long)(deadline - jiffies);
			if (left <= 0) {
				rdlock_cql_gate_put(ws, g, false);
				return -ETIMEDOUT;
			}
		}
		left = wait_event_killable_timeout(g->wq,
						   READ_ONCE(g->inside) < limit,
						   left);
		if (left < 0) {
			rdlock_cql_gate_put(ws, g, false);
			return -EINTR;
		}
	}
}

/* Out of the queue (dequeued, or never enqueued after all). */
static void rdlock_cql_gate_leave(struct rdlock_cql_waiters *ws,
				  const struct rdlock_ticket *t)
{
	struct rdlock_cql_gate *g;

	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	spin_unlock_bh(&ws->gate_lock);
	if (!WARN_ON_ONCE(!g))
		rdlock_cql_gate_put(ws, g, true);
}

/*
 * An enqueue that met a reset: READ the header after back-offs until the
 * reset field is clear (the resetter zeroes the queue: a few operations).
 * Not how grants are seen; only resets are waited for this way.
 */
static int rdlock_cql_await_reset(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t,
				  unsigned long deadline)
{
	unsigned int backoff = 0, retry_us = 0;
	u64 h;
	int ret;

	for (;;) {
		ret = rdlock_proto_backoff(cfg, &backoff, deadline);
		if (ret)
			return ret;
		ret = rdlock_proto_read(cfg, t, &h, &retry_us, deadline);
		if (ret || !cql_hdr_resetting(h))
			return ret;
		t->polls++;
	}
}

static int rdlock_cql_acquire(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_waiter *w;
	struct cql_layout l;
	enum cql_mode m;
	u64 prev, entry, old;
	u32 pos;
	u16 ts;
	int ret;

	/* No update mode: CQL has no upgrade (cql.rst). */
	if (t->mode == RDLOCK_MODE_UPDATE)
		return -EOPNOTSUPP;
	ret = rdlock_proto_check(cfg, t);
	if (ret)
		return ret;
	if (t->k != 1 || rdlock_cql_layout(cfg, &l))
		return -EINVAL;
	ret = rdlock_proto_admit(cfg, deadline);
	if (ret)
		return ret;
	m = rdlock_cql_mode(t);
	/*
	 * Registered before the FA, so that nothing but the transport can
	 * fail once we are in the queue. Costs a small allocation, no
	 * remote operation.
	 */
	w = rdlock_cql_waiter_new(ws, t);
	if (IS_ERR(w))
		return PTR_ERR(w);
	ret = rdlock_cql_gate_enter(cfg, ws, t, &l, deadline);
	if (ret) {
		rdlock_cql_waiter_free(ws, w);
		return ret;
	}
	rdlock_proto_count(cfg, acquires);
	t->word = 0;
again:
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ISSUED);
	ts = (u16)ktime_to_us(rdlock_proto_now(cfg));
	ret = rdlock_proto_op_take(cfg, t, RDLOCK_XOP_FAA,
				   cql_enqueue_delta(&l, m), 0, &prev,
				   deadline);
	if (ret) {
		rdlock_ticket_take_failed(cfg, t, ret);
		rdlock_cql_gate_leave(ws, t);
		goto out_free;
	}
	if (cql_hdr_resetting(prev)) {
		/* Aborted: the reset's last CAS takes our delta away. */
		rdlock_proto_count(cfg, retries);
		ret = rdlock_cql_await_reset(cfg, t, deadline);
		if (!ret)
			goto again;
		rdlock_ticket_to(cfg, t, ret == -ESTALE ? RDLOCK_TICKET_LOST :
							  RDLOCK_TICKET_DONE);
		rdlock_cql_gate_leave(ws, t);
		goto out_free;
	}
	t->prev = prev;
	if (cql_granted_at_enqueue(&l, prev, m))
		goto granted;
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_WAITING);
	rdlock_proto_count(cfg, waits);
	pos = cql_enqueue_pos(&l, prev);
	xa_lock_bh(&ws->xa);
	w->pos = pos;
	xa_unlock_bh(&ws->xa);
	/* Fig. 7 lines 3-4: populate our entry; releasers read it to notify. */
	entry = cql_entry_populate(&l, pos, m,
				   cql_cid(rdlock_cql_self(cfg), w->id), ts);
	ret = rdlock_proto_op_at_must(cfg, t, rdlock_cql_entry_slot(t, &l, pos),
				      RDLOCK_XOP_WRITE, entry, 0, &old);
	if (ret) {
		/* Unless the table is gone, the queue waits for this entry. */
		rdlock_ticket_failed(cfg, t, ret);
		goto out_leave;
	}
	ret = rdlock_cql_wait(cfg, t, w, deadline);
	if (ret == -ETIMEDOUT || ret == -EINTR) {
		/* Still queued: the lock must reach us, then we release it. */
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ABANDONED);
		rdlock_proto_count(cfg, abandoned);
		t->word = w->id;
		rdlock_proto_finish_later(cfg, t, rdlock_cql_finish);
		return ret;
	}
	if (ret) {
		/* -ESTALE: the table is gone, and the ticket with it. */
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_LOST);
		goto out_leave;
	}
granted:
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	rdlock_cql_waiter_free(ws, w);
	t->granted_at = rdlock_proto_now(cfg);
	return 0;
out_leave:
	rdlock_cql_gate_leave(ws, t);
out_free:
	rdlock_cql_waiter_free(ws, w);
	return ret;
}

/* READ one slot of the lock, riding through blips like rdlock_proto_read(). */
static int rdlock_cql_read(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t, u32 slot, u64 *val)
{
	unsigned int retry_us = 0;
	int ret;

	for (;;) {
		ret = rdlock_proto_op_at(cfg, t, slot, RDLOCK_XOP_READ, 0, 0,
					 val);
		if (!ret || !rdlock_proto_retry(cfg, t, ret, &retry_us))
			return ret;
	}
}

/* Hand the lock to the waiter whose entry is @e, at position @pos. */
static void rdlock_cql_notify(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t, u32 pos, u64 e)
{
	u32 node = cql_cid_node(cql_entry_cid(e));
	struct rdlock_cql_msg msg = {
		.home = cpu_to_le32(t->node),
		.slot = cpu_to_le32(t->slot),
		.incarnation = cpu_to_le64(t->incarnation),
		.pos = cpu_to_le32(pos),
		.local = cpu_to_le32(cql_cid_local(cql_entry_cid(e))),
	};
	unsigned long until = jiffies + msecs_to_jiffies(RDLOCK_CQL_SEND_MAX_MS);
	int ret;

	for (;;) {
		ret = cfg->xport ?
		      cfg->xport->send_msg(cfg->xport_priv, node, &msg,
					   sizeof(msg)) :
		      rdlock_xport_send_msg(node, RDLOCK_CQL_MSG_TYPE, &msg,
					    sizeof(msg));
		if ((ret != -EAGAIN && ret != -ENOTCONN) ||
		    time_after(jiffies, until))
			break;
		usleep_range(50, 100);
	}
	if (ret)
		pr_warn_ratelimited("node %u slot %u: notifying node %u failed (%d): its waiter waits for its liveness check\n",
				    t->node, t->slot, node, ret);
	else
		rdlock_proto_count(cfg, notifies);
}

/*
 * What the handover READ after the dequeue, by queue index: the window
 * the dequeue's FAA_READ returned and the last READ_RANGE. Positions are
 * visited in order, so an older range is not needed again.
 */
struct rdlock_cql_have {
	u32 win, win_n;
	u32 chunk, chunk_n;
};

static bool rdlock_cql_has(const struct rdlock_cql_have *h, u32 idx)
{
	return (idx >= h->win && idx - h->win < h->win_n) ||
	       (idx >= h->chunk && idx - h->chunk < h->chunk_n);
}

/*
 * Make @queue hold the entry of position @p as READ after the dequeue:
 * read already, or by one READ_RANGE from @p over up to @left positions
 * (those the handover may look at next), cut at the end of the queue and
 * before the window. Returns 0 or the READ's error.
 */
static int rdlock_cql_get(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t, const struct cql_layout *l,
			  u64 *queue, struct rdlock_cql_have *h, u32 p,
			  u32 left)
{
	u32 idx = cql_pos_index(l, p), n;
	unsigned int retry_us = 0;
	int ret;

	if (rdlock_cql_has(h, idx))
		return 0;
	n = min3(left, (u32)RDLOCK_XPORT_READ_MAX, cql_capacity(l) - idx);
	if (h->win_n && h->win > idx)
		n = min(n, h->win - idx);
	for (;;) {
		ret = rdlock_proto_read_range(cfg, t,
					      rdlock_cql_entry_slot(t, l, p), n,
					      &queue[idx]);
		if (ret >= 0)
			break;
		if (!rdlock_proto_retry(cfg, t, ret, &retry_us))
			return ret;
	}
	h->chunk = idx;
	h->chunk_n = n;
	return 0;
}

/* The back-off before a refetch: @us, doubled for the next one. */
static void rdlock_cql_refetch_pause(const struct rdlock_proto_cfg *cfg,
				     unsigned int *us)
{
	if (!rdlock_proto_xsleep(cfg, (u64)*us * NSEC_PER_USEC))
		usleep_range(*us, 2 * *us);
	*us = min(2 * *us, RDLOCK_CQL_REFETCH_MAX_US);
}

/*
 * The entry at @pos in @queue is obsolete: READ it again after back-offs
 * until it is the position's own (or is judged otherwise than obsolete).
 * Returns the entry's state, or CQL_ENTRY_OBSOLETE when refetching ends.
 */
static enum cql_entry_state
rdlock_cql_refetch(const struct rdlock_proto_cfg *cfg, struct rdlock_ticket *t,
		   const struct cql_layout *l, u32 pos, u64 *queue)
{
	unsigned long until = jiffies +
			      msecs_to_jiffies(RDLOCK_CQL_REFETCH_MAX_MS);
	unsigned int us = RDLOCK_CQL_REFETCH_MIN_US;
	u64 *e = &queue[cql_pos_index(l, pos)];
	enum cql_entry_state st = CQL_ENTRY_OBSOLETE;

	while (!time_after(jiffies, until)) {
		rdlock_proto_count(cfg, refetches);
		rdlock_cql_refetch_pause(cfg, &us);
		if (rdlock_cql_read(cfg, t, rdlock_cql_entry_slot(t, l, pos), e))
			return CQL_ENTRY_OBSOLETE;
		st = cql_entry_classify(l, *e, pos);
		if (st != CQL_ENTRY_OBSOLETE)
			break;
	}
	return st;
}

/*
 * Has the queue moved past position @s since our dequeue, i.e. has the
 * client there been granted and left? Then whatever we were refetching
 * for it is moot (its slot may even hold a later lap's entry by now).
 */
static bool rdlock_cql_passed(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t,
			      const struct cql_layout *l, u32 s)
{
	u32 d;
	u64 h;

	if (rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &h))
		return false;
	d = cql_pos_add(l, cql_hdr_qhead(l, h), cql_pos_mask(l) + 1 - s);
	return d && d <= cql_pos_mask(l) / 2;
}

/*
 * After the dequeue that returned @prev: Fig. 7 lines 7-19 by
 * cql_release_next(), READing only the entries it looks at. A writer
 * reads from the successor up to the first writer; a reader, only when
 * writers are queued, every queued entry (to tell shared holders from
 * writers not yet populated, section 4.3). @win: the @win_n entries from
 * queue index @widx on that the dequeue READ with its FAA.
 */
static void rdlock_cql_handover(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t,
				const struct cql_layout *l, enum cql_mode m,
				u64 prev, const u64 *win, u32 widx, u32 win_n)
{
	u64 stackq[RDLOCK_CQL_STACK_ENTRIES] = {}, *queue = stackq;
	unsigned long until = jiffies +
			      msecs_to_jiffies(RDLOCK_CQL_REFETCH_MAX_MS);
	unsigned int us = RDLOCK_CQL_REFETCH_MIN_US;
	u32 s = cql_pos_add(l, cql_hdr_qhead(l, prev), 1);
	u32 n = cql_hdr_qsize(l, prev), i, first = 0, count = 0;
	struct rdlock_cql_have have = { .win = widx, .win_n = win_n };
	enum cql_release act;
	enum cql_entry_state st;
	u64 e;

	n = min(n ? n - 1 : 0, cql_capacity(l));
	if (!n || (m == CQL_SHARED && !cql_hdr_wcnt(l, prev))) {
		/* Nobody to notify; what is left to check needs no entry. */
		act = n ? CQL_REL_DONE :
			  cql_release_next(l, prev, m, NULL, &first, &count);
		goto act;
	}
	if (cql_capacity(l) > RDLOCK_CQL_STACK_ENTRIES) {
		queue = kcalloc(cql_capacity(l), sizeof(u64),
				GFP_NOFS | __GFP_NOFAIL);
	}
	memcpy(&queue[widx], win, win_n * sizeof(u64));
	if (m == CQL_EXCLUSIVE) {
		/* Every queued client waits, so every entry gets populated. */
		for (i = 0; i < n; i++) {
			u32 p = cql_pos_add(l, s, i);

			if (rdlock_cql_get(cfg, t, l, queue, &have, p, n - i))
				break;
			st = cql_entry_classify(l, queue[cql_pos_index(l, p)],
						p);
			if (st == CQL_ENTRY_OBSOLETE)
				st = rdlock_cql_refetch(cfg, t, l, p, queue);
			e = queue[cql_pos_index(l, p)];
			if (st != CQL_ENTRY_VALID ||
			    cql_entry_mode(e) == CQL_EXCLUSIVE)
				break;
		}
		act = cql_release_next(l, prev, m, queue, &first, &count);
	} else {
		/* What stays unread reads as obsolete: refetched below. */
		for (i = 0; i < n; i++)
			rdlock_cql_get(cfg, t, l, queue, &have,
				       cql_pos_add(l, s, i), n - i);
		for (;;) {
			act = cql_release_next(l, prev, m, queue, &first,
					       &count);
			if (act != CQL_REL_REFETCH || time_after(jiffies, until))
				break;
			if (rdlock_cql_passed(cfg, t, l, s)) {
				act = CQL_REL_DONE;
				break;
			}
			rdlock_cql_refetch_pause(cfg, &us);
			for (i = 0; i < n; i++) {
				u32 p = cql_pos_add(l, s, i);

				e = queue[cql_pos_index(l, p)];
				if (cql_entry_classify(l, e, p) !=
				    CQL_ENTRY_OBSOLETE)
					continue;
				rdlock_proto_count(cfg, refetches);
				rdlock_cql_read(cfg, t,
						rdlock_cql_entry_slot(t, l, p),
						&queue[cql_pos_index(l, p)]);
			}
		}
	}
	/* A slow releaser may find its successor served and gone. */
	if ((act == CQL_REL_REFETCH || act == CQL_REL_RESET) && n &&
	    rdlock_cql_passed(cfg, t, l, s))
		act = CQL_REL_DONE;
act:
	switch (act) {
	case CQL_REL_NOTIFY:
		for (i = 0; i < count; i++) {
			u32 p = cql_pos_add(l, first, i);

			rdlock_cql_notify(cfg, t, p, queue[cql_pos_index(l, p)]);
		}
		break;
	case CQL_REL_REFETCH:
		pr_warn_ratelimited("node %u slot %u: a queued entry stayed unwritten for %u ms: its waiter is not notified\n",
				    t->node, t->slot, RDLOCK_CQL_REFETCH_MAX_MS);
		break;
	case CQL_REL_RESET:
		pr_warn_ratelimited("node %u slot %u: the lock needs a reset (queue overflow or version wrap), not implemented\n",
				    t->node, t->slot);
		break;
	default:
		break;
	}
	if (queue != stackq)
		kfree(queue);
}

/*
 * Version wrap (section 4.4, appendix A), for an idle lock only: a
 * releaser that left the queue empty with qhead in the second half of its
 * laps claims the lock by CAS of the reset field (only while the header is
 * still exactly what its dequeue made it, so nobody is queued), zeroes
 * the queue (every entry back to the initial version) and then the header,
 * by CAS since FAAs of aborted enqueuers may come in between. Enqueuers
 * that meet the reset field wait for it to clear and enqueue again. Far
 * before the all-ones lap, so that some release finds the lock idle; a lock
 * that is never idle for that long still reaches it (cql.rst).
 */
static void rdlock_cql_reset_idle(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t,
				  const struct cql_layout *l, u64 post)
{
	u64 claimed, old, cur;
	u32 i;
	int ret;

	if (cql_hdr_qsize(l, post) || cql_hdr_resetting(post) ||
	    cql_pos_version(l, cql_hdr_qhead(l, post)) <
	    cql_ver_init(l) / 2 ||
	    !cql_hdr_set_reset(post, rdlock_cql_self(cfg), &claimed))
		return;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, post, claimed, &old);
	if (ret || old != post)
		return;	/* somebody came in: a later release tries again */
	for (i = 0; i < cql_capacity(l); i++) {
		ret = rdlock_proto_op_at_must(cfg, t, t->slot + 1 + i,
					      RDLOCK_XOP_WRITE, CQL_ENTRY_INIT,
					      0, &old);
		if (ret)
			goto failed;
	}
	cur = claimed;
	for (;;) {
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, cur,
					   CQL_HDR_INIT, &old);
		if (ret)
			goto failed;
		if (old == cur)
			break;
		cur = old;	/* an aborted enqueue added to it */
	}
	rdlock_proto_count(cfg, version_resets);
	return;
failed:
	/* The table is gone, or the reset field stays: enqueuers wait. */
	pr_warn_ratelimited("node %u slot %u: version reset failed (%d)\n",
			    t->node, t->slot, ret);
}

static void rdlock_cql_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t)
{
	enum cql_mode m = rdlock_cql_mode(t);
	u64 win[RDLOCK_XPORT_FAA_READ_MAX];
	struct cql_layout l;
	u32 after, widx, k;
	u64 prev;
	int ret;

	if (WARN_ON_ONCE(rdlock_cql_layout(cfg, &l)))
		return;
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_RELEASING);
	/*
	 * Fig. 7 line 6: dequeue, with the READ of the entries right after
	 * our position posted together (one round trip, as the paper): a
	 * writer's successor is there, and the readers after it begin there.
	 * Cut at the end of the queue; the handover READs whatever else it
	 * needs.
	 */
	after = cql_pos_add(&l, cql_enqueue_pos(&l, t->prev), 1);
	widx = cql_pos_index(&l, after);
	k = min3((u32)RDLOCK_XPORT_FAA_READ_MAX, cql_capacity(&l) - 1,
		 cql_capacity(&l) - widx);
	ret = rdlock_proto_faa_read_must(cfg, t, cql_dequeue_delta(&l, m),
					 rdlock_cql_entry_slot(t, &l, after), k,
					 &prev, win);
	rdlock_cql_gate_leave(rdlock_cql_waiters_of(cfg), t);
	if (ret < 0) {
		rdlock_ticket_failed(cfg, t, ret);
		return;
	}
	/* Out of the queue; what follows hands the lock on. */
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	rdlock_cql_handover(cfg, t, &l, m, prev, win, widx, ret);
	if (cql_hdr_qsize(&l, prev) == 1)
		rdlock_cql_reset_idle(cfg, t, &l,
				      prev + cql_dequeue_delta(&l, m));
}

/* Never an update ticket (acquire refuses them). */
static int rdlock_cql_upgrade(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	return -EINVAL;
}

const struct rdlock_proto_ops rdlock_proto_cql = {
	.name		= "cql",
	.slots		= rdlock_cql_slots,
	.acquire	= rdlock_cql_acquire,
	.release	= rdlock_cql_release,
	.upgrade	= rdlock_cql_upgrade,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_cql, RDLOCK_INTERNAL);

/**
 * rdlock_cql_init() - this node's registry and notification handler
 *
 * Return: 0 or the error of rdlock_xport_set_msg_handler().
 */
int rdlock_cql_init(void)
{
	int ret;

	rdlock_cql_waiters_init(&rdlock_cql_local);
	ret = rdlock_xport_set_msg_handler(RDLOCK_CQL_MSG_TYPE,
					   rdlock_cql_msg_handler);
	if (ret) {
		rdlock_cql_waiters_destroy(&rdlock_cql_local);
		return ret;
	}
	rdlock_cql_ready = true;
	return 0;
}

/* After the transport is down and background tickets are finished. */
void rdlock_cql_exit(void)
{
	if (!rdlock_cql_ready)
		return;
	rdlock_xport_set_msg_handler(RDLOCK_CQL_MSG_TYPE, NULL);
	rdlock_cql_waiters_destroy(&rdlock_cql_local);
	rdlock_cql_ready = false;
}
