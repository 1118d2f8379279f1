// SPDX-License-Identifier: GPL-2.0
/*
 * The CQL (cooperative queue-notify) reader-writer lock of DecLock,
 * section 4 and appendix A of the paper (cql.rst cites it), on the
 * encoding of lockword/cql.h: the flat protocol (acquire, waiting,
 * release and handover), this node's registry of waiters, the admission
 * gate, the messages and the ops table. Resets are in proto_cql_reset.c,
 * hierarchical locking in proto_cql_hier.c; what the three files share
 * in proto_cql-pri.h.
 *
 * A lock is a header word at (node, slot) and a circular queue of
 * 2^cap_bits entries in the slots after it. Acquire enqueues with one
 * FETCH_AND_ADD on the header; granted at once when the header it returns
 * allows, else the waiter WRITEs its queue entry (mode, client id: node and
 * the id of its waiter on that node, version, timestamp) and sleeps until a
 * notification message arrives: nobody polls the lock table while waiting.
 * Release dequeues with one FETCH_AND_ADD: when somebody is likely queued
 * behind the releaser, posted together with the READ of the entries after
 * its position (one FAA_READ, one round trip), else alone (uncontended, a
 * plain FAA is the faster round trip). It READs more, a range at a time,
 * only when it must look further to find whom to notify: the next writer
 * alone, or every adjacent reader after a writer. An entry not yet
 * written by a slow enqueuer is read again (refetched) after a short
 * back-off. Every table access, the home's own, goes through the
 * transport. Notifications are typed messages on the transport's reliable
 * ordered connections; each carries the lock's home, slot, table
 * incarnation and the waiter's position (which includes the lap), so a
 * stale one matches no waiter and is dropped. See
 * Documentation/rdlock/cql.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/rdlock.h>

#include "lockword/cql.h"
#include "proto_cql-pri.h"
#include "xport.h"

/* A releaser gives up refetching after this long (cql.rst, limits). */
#define RDLOCK_CQL_REFETCH_MAX_MS	10000
/* A notification refused for lack of buffers or a blip is sent again. */
#define RDLOCK_CQL_SEND_MAX_MS		2000
/* Queues up to this many entries are read into a buffer on the stack. */
#define RDLOCK_CQL_STACK_ENTRIES	32

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
	hash_init(ws->locals);
	INIT_LIST_HEAD(&ws->claims);
	init_waitqueue_head(&ws->claim_ended);
	atomic_set(&ws->claim_seq, 0);
	ws->next_id = 0;
	ws->xport = NULL;
	ws->xport_priv = NULL;
}
EXPORT_SYMBOL_NS_GPL(rdlock_cql_waiters_init, RDLOCK_INTERNAL);

/**
 * rdlock_cql_waiters_destroy() - free a registry
 * @ws: the registry; its waiters must be gone (rdlock_proto_flush()).
 */
void rdlock_cql_waiters_destroy(struct rdlock_cql_waiters *ws)
{
	struct rdlock_cql_gate *g;
	struct hlist_node *tmp;
	int bkt;

	WARN_ON(!xa_empty(&ws->xa));
	WARN_ON(!list_empty(&ws->claims));
	WARN_ON(!hash_empty(ws->locals));
	/* What is left: reset counts of locks nobody uses any more. */
	hash_for_each_safe(ws->gates, bkt, tmp, g, hnode) {
		WARN_ON(g->users || g->inside);
		hash_del(&g->hnode);
		kfree(g);
	}
	xa_destroy(&ws->xa);
}
EXPORT_SYMBOL_NS_GPL(rdlock_cql_waiters_destroy, RDLOCK_INTERNAL);

u32 rdlock_cql_gate_key(u32 home, u32 slot)
{
	return home * 0x9e3779b1U ^ slot;
}

struct rdlock_cql_gate *
rdlock_cql_gate_lookup(struct rdlock_cql_waiters *ws, u32 home, u32 slot,
		       u64 incarnation)
{
	struct rdlock_cql_gate *g;

	lockdep_assert_held(&ws->gate_lock);
	hash_for_each_possible(ws->gates, g, hnode,
			       rdlock_cql_gate_key(home, slot))
		if (g->home == home && g->slot == slot &&
		    g->incarnation == incarnation)
			return g;
	return NULL;
}

struct rdlock_cql_gate *
rdlock_cql_gate_find(struct rdlock_cql_waiters *ws,
		     const struct rdlock_ticket *t)
{
	return rdlock_cql_gate_lookup(ws, t->node, t->slot, t->incarnation);
}

/**
 * rdlock_cql_gate_count() - how many gates a registry keeps
 * @ws: the registry; NULL: this node's (the real transport's).
 *
 * One per lock a client of its node is in or waits for, and one per lock
 * reset since the registry was made (its reset count).
 */
unsigned int rdlock_cql_gate_count(struct rdlock_cql_waiters *ws)
{
	struct rdlock_cql_gate *g;
	unsigned int n = 0;
	int bkt;

	if (!ws)
		ws = &rdlock_cql_local;
	spin_lock_bh(&ws->gate_lock);
	hash_for_each(ws->gates, bkt, g, hnode)
		n++;
	spin_unlock_bh(&ws->gate_lock);
	return n;
}
EXPORT_SYMBOL_NS_GPL(rdlock_cql_gate_count, RDLOCK_INTERNAL);

/* A new gate for the lock, hashed in; under the gate lock. */
void rdlock_cql_gate_add(struct rdlock_cql_waiters *ws,
			 struct rdlock_cql_gate *g, u32 home, u32 slot,
			 u64 incarnation)
{
	lockdep_assert_held(&ws->gate_lock);
	g->home = home;
	g->slot = slot;
	g->incarnation = incarnation;
	init_waitqueue_head(&g->wq);
	hash_add(ws->gates, &g->hnode, rdlock_cql_gate_key(home, slot));
}

/* A message from the node @ws is, in any context but hardirq. */
static int rdlock_cql_ws_send(struct rdlock_cql_waiters *ws, u32 node,
			      const struct rdlock_cql_msg *m)
{
	return rdlock_proto_send_msg(ws->xport, ws->xport_priv, node,
				     RDLOCK_MSG_CQL, m, sizeof(*m));
}

/*
 * The answer to a reset signal (gate lock dropped): ACK to the one @g last
 * handled, or NACK with the count this node knows (@gen) to one it did not.
 */
void rdlock_cql_answer(struct rdlock_cql_waiters *ws, u8 kind, u32 to,
		       u32 seq, u32 home, u32 slot, u64 incarnation,
		       u32 gen)
{
	struct rdlock_cql_msg a = {
		.home = cpu_to_le32(home),
		.slot = cpu_to_le32(slot),
		.incarnation = cpu_to_le64(incarnation),
		.pos = cpu_to_le32(seq),
		.local = cpu_to_le32(to),
		.reset_gen = cpu_to_le32(gen),
		.kind = kind,
	};

	/* Lost (no buffer, a blip): the claimer signals again. */
	rdlock_cql_ws_send(ws, to, &a);
}

/**
 * rdlock_cql_deliver() - a CQL message arrived
 * @ws: the receiving node's registry.
 * @src: the sending node.
 * @payload: the message.
 * @len: its length.
 *
 * Context: softirq, or BHs disabled; does not sleep. A notification wakes
 * its waiter; one that matches no waiter (the waiter gave up, or it is
 * from before a reset: another reset count) is counted in notify_stale and
 * dropped. Reset signals and their answers: rdlock_cql_on_reset(),
 * rdlock_cql_on_answer().
 */
void rdlock_cql_deliver(struct rdlock_cql_waiters *ws, u32 src,
			const void *payload, size_t len)
{
	const struct rdlock_cql_msg *m = payload;
	struct rdlock_cql_waiter *w;
	bool hit = false;

	if (len < sizeof(*m))
		return;
	switch (m->kind) {
	case RDLOCK_CQL_NOTIFY:
		break;
	case RDLOCK_CQL_RESET:
		rdlock_cql_on_reset(ws, src, m);
		return;
	case RDLOCK_CQL_ACK:
	case RDLOCK_CQL_NACK:
		rdlock_cql_on_answer(ws, src, m);
		return;
	default:
		return;
	}
	xa_lock(&ws->xa);
	w = xa_load(&ws->xa, le32_to_cpu(m->local));
	if (w && w->home == le32_to_cpu(m->home) &&
	    w->slot == le32_to_cpu(m->slot) &&
	    w->incarnation == le64_to_cpu(m->incarnation) &&
	    w->pos == le32_to_cpu(m->pos) &&
	    w->gen == le32_to_cpu(m->reset_gen)) {
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

struct rdlock_cql_waiters *
rdlock_cql_waiters_of(const struct rdlock_proto_cfg *cfg)
{
	return cfg->xport ? cfg->xport->waiters(cfg->xport_priv) :
			    &rdlock_cql_local;
}

int rdlock_cql_layout(const struct rdlock_proto_cfg *cfg,
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

enum cql_mode rdlock_cql_mode(const struct rdlock_ticket *t)
{
	return t->mode == RDLOCK_MODE_EXCLUSIVE ? CQL_EXCLUSIVE : CQL_SHARED;
}

u32 rdlock_cql_entry_slot(const struct rdlock_ticket *t,
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
	ret = xa_alloc_cyclic_bh(&ws->xa, &w->id, w, XA_LIMIT(1, CQL_LOCAL_MAX),
				 &ws->next_id, GFP_NOFS);
	if (ret < 0) {
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

static u32 rdlock_cql_gate_limit(const struct rdlock_proto_cfg *cfg,
				 const struct cql_layout *l)
{
	u32 nodes = cfg->nodes ?: RDLOCK_MAX_NODES;

	return max(cql_capacity(l) / nodes, 1U);
}

/* Into the queue if there is room and no reset signal waits for us. */
static bool rdlock_cql_gate_try(struct rdlock_cql_waiters *ws,
				struct rdlock_cql_gate *g, u32 limit,
				struct rdlock_cql_waiter *w)
{
	bool in;

	spin_lock_bh(&ws->gate_lock);
	in = !g->ack_due && !g->lap_block && g->inside + g->out < limit;
	if (in) {
		g->inside++;
		/* A reset signal from now on aborts us, none before. */
		w->gen = g->gen;
		WRITE_ONCE(w->aborted, false);
	}
	spin_unlock_bh(&ws->gate_lock);
	return in;
}

/*
 * A user of @g is done with it; @inside: it was in the queue. The last one
 * out answers a pending reset signal; the last user frees a gate whose
 * lock was never reset.
 */
static void __rdlock_cql_gate_put(struct rdlock_cql_waiters *ws,
				  struct rdlock_cql_gate *g, bool inside,
				  bool stay)
{
	u32 to = 0, seq = 0, home = 0, slot = 0, gen = 0;
	bool last = false, ack = false;
	u64 inc = 0;

	spin_lock_bh(&ws->gate_lock);
	g->inside -= inside;
	g->out += stay;
	if (inside && !g->inside && g->ack_due) {
		g->ack_due = false;
		ack = true;
		to = g->sig_node - 1;
		seq = g->sig_seq;
		home = g->home;
		slot = g->slot;
		inc = g->incarnation;
		gen = g->gen;
	}
	if (!stay) {
		/* A blocked lap ends with a reset, which sets gen. */
		last = !--g->users && !g->gen && !g->lap_block;
		if (last)
			hash_del(&g->hnode);
		else if (inside)
			wake_up(&g->wq);
	}
	spin_unlock_bh(&ws->gate_lock);
	if (ack)
		rdlock_cql_answer(ws, RDLOCK_CQL_ACK, to, seq, home, slot, inc,
				  gen);
	if (last)
		kfree(g);
}

static void rdlock_cql_gate_put(struct rdlock_cql_waiters *ws,
				struct rdlock_cql_gate *g, bool inside)
{
	__rdlock_cql_gate_put(ws, g, inside, false);
}

/*
 * Get into @t's lock's queue on this node, as @w: 0, -ETIMEDOUT at
 * @deadline, -EINTR on a fatal signal, -ENOMEM. A gate closed for the
 * all-ones lap is opened by the reset's signal, or by the client that
 * closed it once it sees the reset done; a node that missed the signal
 * and whose closer gave up would stay closed, so a client kept out for
 * RDLOCK_CQL_TAKEOVER_MS looks at the header itself.
 */
static int rdlock_cql_gate_enter(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_cql_waiters *ws,
				 struct rdlock_ticket *t,
				 const struct cql_layout *l,
				 struct rdlock_cql_waiter *w,
				 unsigned long deadline)
{
	struct rdlock_cql_gate *g, *n = kzalloc(sizeof(*n), GFP_NOFS);
	u32 limit = rdlock_cql_gate_limit(cfg, l);
	long left, look;
	u64 h;

	if (!n)
		return -ENOMEM;
	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	if (!g) {
		g = n;
		n = NULL;
		rdlock_cql_gate_add(ws, g, t->node, t->slot, t->incarnation);
	}
	g->users++;
	spin_unlock_bh(&ws->gate_lock);
	kfree(n);
	for (;;) {
		if (rdlock_cql_gate_try(ws, g, limit, w))
			return 0;
		left = MAX_SCHEDULE_TIMEOUT;
		if (deadline) {
			left = (long)(deadline - jiffies);
			if (left <= 0) {
				rdlock_cql_gate_put(ws, g, false);
				return -ETIMEDOUT;
			}
		}
		look = READ_ONCE(g->lap_block) ?
		       (long)rdlock_cql_takeover_jiffies(cfg) : 0;
		if (look && look < left)
			left = look;
		else
			look = 0;
		left = wait_event_killable_timeout(g->wq,
						   !READ_ONCE(g->ack_due) &&
						   !READ_ONCE(g->lap_block) &&
						   READ_ONCE(g->inside) +
						   READ_ONCE(g->out) < limit,
						   left);
		if (left < 0) {
			rdlock_cql_gate_put(ws, g, false);
			return -EINTR;
		}
		if (look && !left && READ_ONCE(g->lap_block) &&
		    !rdlock_cql_read(cfg, t, t->slot, &h) &&
		    !cql_hdr_resetting(h) && !cql_hdr_version_overflow(l, h))
			rdlock_cql_lap_block(ws, t, false);
	}
}

/*
 * Out of the queue (dequeued, aborted, or never enqueued after all); with
 * @stay, only stepped out, the place kept (rdlock_cql_gate_back()).
 */
void __rdlock_cql_gate_leave(struct rdlock_cql_waiters *ws,
			     const struct rdlock_ticket *t, bool stay)
{
	struct rdlock_cql_gate *g;

	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	spin_unlock_bh(&ws->gate_lock);
	if (!WARN_ON_ONCE(!g))
		__rdlock_cql_gate_put(ws, g, true, stay);
}

static void rdlock_cql_gate_leave(struct rdlock_cql_waiters *ws,
				  const struct rdlock_ticket *t)
{
	__rdlock_cql_gate_leave(ws, t, false);
}

/* Close (@on) or open this node's gate of @t's lock for the all-ones lap. */
void rdlock_cql_lap_block(struct rdlock_cql_waiters *ws,
			  const struct rdlock_ticket *t, bool on)
{
	struct rdlock_cql_gate *g;

	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	if (g && g->lap_block != on) {
		g->lap_block = on;
		if (!on)
			wake_up(&g->wq);
	}
	spin_unlock_bh(&ws->gate_lock);
}

/*
 * A waiter that found the lock stuck steps out to claim its reset,
 * keeping its place (__rdlock_cql_gate_leave() with stay), then comes back:
 * with @in, into the queue if the reset was not its after all and no
 * reset signal came meanwhile (true: it waits on where it was); otherwise
 * it gives its place up (false: the reset wiped the queue, it enqueues
 * again).
 */

bool rdlock_cql_gate_back(struct rdlock_cql_waiters *ws,
			  const struct rdlock_ticket *t,
			  struct rdlock_cql_waiter *w, bool in)
{
	struct rdlock_cql_gate *g;
	bool back;

	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	if (WARN_ON_ONCE(!g)) {
		spin_unlock_bh(&ws->gate_lock);
		return false;
	}
	g->out--;
	back = in && !g->ack_due && w->gen == g->gen;
	g->inside += back;
	if (!back)
		wake_up(&g->wq);
	spin_unlock_bh(&ws->gate_lock);
	if (!back)
		rdlock_cql_gate_put(ws, g, false);
	return back;
}

/* The lock's reset count as this node knows it (0: never reset). */
u32 rdlock_cql_gen_locked(struct rdlock_cql_waiters *ws,
			  const struct rdlock_ticket *t)
{
	struct rdlock_cql_gate *g = rdlock_cql_gate_find(ws, t);

	return g ? g->gen : 0;
}

u32 rdlock_cql_gen(struct rdlock_cql_waiters *ws,
		   const struct rdlock_ticket *t)
{
	u32 gen;

	spin_lock_bh(&ws->gate_lock);
	gen = rdlock_cql_gen_locked(ws, t);
	spin_unlock_bh(&ws->gate_lock);
	return gen;
}

/*
 * Is @t's lock gone for this node: its table (rdlock_proto_table_alive()),
 * or its home declared down? A reset of it cannot complete then, and one
 * under way ends.
 */
bool rdlock_cql_lock_lost(const struct rdlock_proto_cfg *cfg,
			  const struct rdlock_ticket *t)
{
	return !rdlock_proto_table_alive(cfg, t) ||
	       (t->node != rdlock_proto_self(cfg) &&
		rdlock_proto_node_down(cfg, t->node));
}

/*
 * A message to @node; sent again while the transport says -EAGAIN (no free
 * send buffer) or -ENOTCONN (a blip), for up to RDLOCK_CQL_SEND_MAX_MS.
 */
int rdlock_cql_send(const struct rdlock_proto_cfg *cfg, u32 node,
		    const struct rdlock_cql_msg *m)
{
	unsigned long until = jiffies + msecs_to_jiffies(RDLOCK_CQL_SEND_MAX_MS);
	int ret;

	for (;;) {
		ret = rdlock_proto_send_msg(cfg->xport, cfg->xport_priv, node,
					    RDLOCK_MSG_CQL, m, sizeof(*m));
		if ((ret != -EAGAIN && ret != -ENOTCONN) ||
		    time_after(jiffies, until))
			return ret;
		usleep_range(50, 100);
	}
}

/* READ one slot of the lock, riding through blips like rdlock_proto_read(). */
int rdlock_cql_read(const struct rdlock_proto_cfg *cfg,
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

/* The back-off before a refetch: @us, doubled for the next one. */
void rdlock_cql_refetch_pause(const struct rdlock_proto_cfg *cfg,
			      unsigned int *us)
{
	if (!rdlock_proto_xsleep(cfg, (u64)*us * NSEC_PER_USEC))
		usleep_range(*us, 2 * *us);
	*us = min(2 * *us, RDLOCK_CQL_REFETCH_MAX_US);
}

/*
 * The liveness check of a waiter that heard nothing for a while: the
 * header alone may show that it holds the lock (cql_waiter_granted())
 * whether or not its notification arrived. A notification is lost when a
 * slow releaser finds the waiter's entry overwritten by a later lap (readers
 * granted at enqueue may come and go past waiters it has not notified yet)
 * or with a failed connection. Returns 1 when granted so, 0 to keep
 * waiting, -ENOLCK when the lock is stuck (@wt: header and cause), or
 * -ESTALE once the lock is gone: its table, or its home declared down
 * (rdlock_cql_lock_lost()), whose queue no grant comes from any more.
 */
static int rdlock_cql_check(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, u32 pos,
			    struct rdlock_cql_watch *wt)
{
	struct cql_layout l;
	u64 h;
	int ret;

	if (rdlock_cql_lock_lost(cfg, t))
		return -ESTALE;
	if (rdlock_cql_layout(cfg, &l))
		return 0;
	t->polls++;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &h);
	if (ret == -ESTALE)
		return ret;
	if (ret)
		return 0;
	if (cql_waiter_granted(&l, h, pos, rdlock_cql_mode(t)))
		return 1;
	if (h != wt->last) {
		wt->last = h;
		wt->since = jiffies;
		return 0;
	}
	if (time_before(jiffies, wt->since + rdlock_cql_stuck_jiffies(cfg)))
		return 0;
	if (rdlock_cql_stuck(cfg, t, &l, h, wt))
		return -ENOLCK;
	wt->since = jiffies;	/* a live holder: look again later */
	return 0;
}

/* How long a waiter waits for its notification before it looks itself. */
static unsigned long rdlock_cql_check_jiffies(const struct rdlock_proto_cfg *cfg)
{
	unsigned long check = msecs_to_jiffies(RDLOCK_CQL_CHECK_MS);

	/* A quick look at first: a stuck lock, or a grant's message lost. */
	if (cfg->cql_stuck_ms)
		check = min(check, msecs_to_jiffies(cfg->cql_stuck_ms) / 4 + 1);
	return check;
}

/*
 * Sleep until @w is notified. Returns 0 when granted, -EAGAIN when a reset
 * aborted it, -ENOLCK when it found the lock stuck (@wt says why),
 * -ETIMEDOUT at @deadline (jiffies, 0: none), -EINTR on a fatal signal,
 * -ESTALE when the lock is gone (its table, or its home declared down).
 */
static int rdlock_cql_wait(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t,
			   struct rdlock_cql_waiter *w, unsigned long deadline,
			   struct rdlock_cql_watch *wt)
{
	unsigned long check = rdlock_cql_check_jiffies(cfg);
	long to, left;
	int ret;

	wt->last = 0;
	wt->since = jiffies;
	for (;;) {
		to = check;
		if (deadline) {
			left = (long)(deadline - jiffies);
			if (left <= 0)
				break;
			to = min(to, left);
		}
		left = wait_event_killable_timeout(w->wq,
						   READ_ONCE(w->granted) ||
						   READ_ONCE(w->aborted), to);
		if (READ_ONCE(w->aborted))
			return -EAGAIN;
		if (READ_ONCE(w->granted))
			return 0;
		if (left < 0)
			return -EINTR;
		if (deadline && time_after_eq(jiffies, deadline))
			break;
		ret = rdlock_cql_check(cfg, t, w->pos, wt);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	if (READ_ONCE(w->aborted))
		return -EAGAIN;
	return READ_ONCE(w->granted) ? 0 : -ETIMEDOUT;
}

static void rdlock_cql_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t);

/**
 * struct rdlock_cql_finish - an abandoned waiter, between finishing steps
 * @w: the waiter, still registered: notifications reach it.
 * @wake: on @w->wq, kicks the finisher when @w is granted or aborted.
 * @wt: the liveness check's state.
 * @check: when to look at the lock ourselves next (jiffies).
 */
struct rdlock_cql_finish {
	struct rdlock_cql_waiter *w;
	struct wait_queue_entry wake;
	struct rdlock_cql_watch wt;
	unsigned long check;
};

static_assert(sizeof(struct rdlock_cql_finish) <= RDLOCK_FINISH_STATE_SIZE);

/*
 * A finisher's look at its waiter: 0 granted, -EAGAIN aborted by a reset,
 * -ENOLCK out of the queue with the reset of a stuck lock, -ESTALE the
 * lock is gone; else the jiffies (> 0) to wait before the next look.
 */
static long rdlock_cql_finish_look(const struct rdlock_proto_cfg *cfg,
				   struct rdlock_ticket *t,
				   struct rdlock_cql_finish *s,
				   unsigned long check)
{
	struct rdlock_cql_waiter *w = s->w;
	struct cql_layout l;
	int ret;

	if (READ_ONCE(w->aborted))
		return -EAGAIN;
	if (READ_ONCE(w->granted))
		return 0;
	if (time_before(jiffies, s->check))
		return s->check - jiffies;
	s->check = jiffies + check;
	ret = rdlock_cql_check(cfg, t, w->pos, &s->wt);
	if (!ret)
		return check;
	if (ret > 0)
		return 0;
	if (ret != -ENOLCK)
		return ret;
	/* Stuck: reset it; or, back in the queue, wait on. */
	if (WARN_ON_ONCE(rdlock_cql_layout(cfg, &l)) ||
	    !rdlock_cql_stuck_reset(cfg, rdlock_cql_waiters_of(cfg), t, &l, w,
				    &s->wt)) {
		s->wt.last = 0;
		s->wt.since = jiffies;
		return check;
	}
	return ret;
}

/*
 * A step of the background end of an abandoned waiter
 * (rdlock_finish_step_t): released once granted; a reset that aborts it
 * ends it (the reset empties the queue); a stuck lock it resets first.
 * Between steps the waiter stays registered, and its notification runs
 * the next step; a liveness check runs one every
 * rdlock_cql_check_jiffies(), as for a waiter that sleeps.
 */
static u64 rdlock_cql_finish(struct rdlock_finish *f,
			     const struct rdlock_proto_cfg *cfg,
			     struct rdlock_ticket *t, void *state)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	unsigned long check = rdlock_cql_check_jiffies(cfg);
	struct rdlock_cql_finish *s = state;
	struct rdlock_cql_waiter *w = s->w;
	struct cql_layout l;
	long next;
	int ret;

	if (!w) {
		xa_lock_bh(&ws->xa);
		w = xa_load(&ws->xa, (u32)t->word);
		xa_unlock_bh(&ws->xa);
		if (WARN_ON_ONCE(!w) || WARN_ON_ONCE(rdlock_cql_layout(cfg, &l)))
			return 0;
		s->w = w;
		/* @w's grant or abort: its finisher's next step, now. */
		rdlock_proto_finish_wake_init(&s->wake, f);
		add_wait_queue(&w->wq, &s->wake);
		s->wt.last = 0;
		s->wt.since = jiffies;
		s->check = jiffies + check;
	}
	next = rdlock_cql_finish_look(cfg, t, s, check);
	if (next > 0)
		return jiffies_to_nsecs(next);
	ret = next;
	/* Nothing kicks the finisher once this returns. */
	remove_wait_queue(&w->wq, &s->wake);
	rdlock_cql_waiter_free(ws, w);
	if (ret == -EAGAIN || ret == -ENOLCK) {
		/* Out of the queue with the reset: nothing to release. */
		rdlock_proto_count(cfg, cql_reset_aborts);
		if (ret == -EAGAIN)
			rdlock_cql_gate_leave(ws, t);
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
		return 0;
	}
	if (ret) {
		/* The lock is gone (table or home), and the ticket with it. */
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_LOST);
		rdlock_cql_gate_leave(ws, t);
		return 0;
	}
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	t->granted_at = rdlock_proto_now(cfg);
	rdlock_cql_release(cfg, t);
	return 0;
}

/* What acquire refuses before anything is sent; @l: the layout. */
int rdlock_cql_check_args(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t, struct cql_layout *l)
{
	int ret;

	/* No update mode: CQL has no upgrade (cql.rst). */
	if (t->mode == RDLOCK_MODE_UPDATE)
		return -EOPNOTSUPP;
	ret = rdlock_proto_check(cfg, t);
	if (ret)
		return ret;
	if (t->k != 1 || rdlock_cql_layout(cfg, l))
		return -EINVAL;
	return 0;
}

/* __rdlock_cql_acquire() once admitted, in the lock of layout @lp. */
static int rdlock_cql_enqueue(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline,
			      const u32 *stamp, const struct cql_layout *lp)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_watch wt = {};
	struct cql_layout l = *lp;
	struct rdlock_cql_waiter *w;
	enum cql_mode m;
	u64 prev, entry, old;
	u32 pos;
	u16 ts;
	int ret;

	m = rdlock_cql_mode(t);
	/*
	 * Registered before the FA, so that nothing but the transport can
	 * fail once we are in the queue. Costs a small allocation, no
	 * remote operation.
	 */
	w = rdlock_cql_waiter_new(ws, t);
	if (IS_ERR(w))
		return PTR_ERR(w);
	ret = rdlock_cql_gate_enter(cfg, ws, t, &l, w, deadline);
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
	/*
	 * Aborted: by the reset field (the reset's last CAS takes our delta
	 * away), or by a reset signal that came while our FA was under way
	 * (the FA was before the claim; the reset zeroes it).
	 */
	if (cql_hdr_resetting(prev) || READ_ONCE(w->aborted))
		goto aborted;
	t->prev = prev;
	/*
	 * Nobody holds or waits at a position of the all-ones lap: its
	 * entries cannot be judged, and dequeues of clients there would
	 * carry qhead through the wrap before the reset that lap asks for,
	 * after which entries of older laps read as valid (cql.rst, "The
	 * all-ones lap"). We stay counted until that reset; our node lets
	 * nobody else in meanwhile, and the reset is claimed for us.
	 */
	if (cql_version_overflow(&l, cql_pos_version(&l,
						     cql_enqueue_pos(&l, prev)))) {
		rdlock_cql_lap_block(ws, t, true);
		rdlock_cql_reset_later(cfg, t, RDLOCK_CQL_RESET_VERSION,
				       prev + cql_enqueue_delta(&l, m),
				       RDLOCK_CQL_ANY_GEN);
		goto aborted;
	}
	if (cql_granted_at_enqueue(&l, prev, m))
		goto granted;
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_WAITING);
	rdlock_proto_count(cfg, waits);
	pos = cql_enqueue_pos(&l, prev);
	xa_lock_bh(&ws->xa);
	w->pos = pos;
	xa_unlock_bh(&ws->xa);
	if (cfg->cql_policy != RDLOCK_CQL_FLAT)
		ts = stamp ? *stamp : cql_stamp_of_pos(&l, pos);
	/* Fig. 7 lines 3-4: populate our entry; releasers read it to notify. */
	entry = cql_entry_populate(&l, pos, m,
				   cql_cid(rdlock_proto_self(cfg), w->id), ts);
	ret = rdlock_proto_op_at_must(cfg, t, rdlock_cql_entry_slot(t, &l, pos),
				      RDLOCK_XOP_WRITE, entry, 0, &old);
	if (ret) {
		/* Unless the table is gone, the queue waits for this entry. */
		rdlock_ticket_failed(cfg, t, ret);
		goto out_leave;
	}
wait:
	ret = rdlock_cql_wait(cfg, t, w, deadline, &wt);
	if (ret == -EAGAIN)
		goto aborted;
	if (ret == -ENOLCK) {
		/* Stuck: reset it, and enqueue again; or wait on. */
		if (!rdlock_cql_stuck_reset(cfg, ws, t, &l, w, &wt))
			goto wait;
		goto retry;
	}
	if (ret == -ETIMEDOUT || ret == -EINTR) {
		/* Still queued: the lock must reach us, then we release it. */
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ABANDONED);
		rdlock_proto_count(cfg, abandoned);
		t->word = w->id;
		rdlock_proto_finish_later(cfg, t, rdlock_cql_finish);
		return ret;
	}
	if (ret) {
		/* -ESTALE: the lock is gone, and the ticket with it. */
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_LOST);
		goto out_leave;
	}
granted:
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	rdlock_cql_waiter_free(ws, w);
	t->granted_at = rdlock_proto_now(cfg);
	return 0;
aborted:
	/* Out of the queue; answered once all of this node's are out. */
	rdlock_cql_gate_leave(ws, t);
retry:
	rdlock_proto_count(cfg, retries);
	rdlock_proto_count(cfg, cql_reset_aborts);
	xa_lock_bh(&ws->xa);
	w->pos = ~0U;
	w->granted = false;
	xa_unlock_bh(&ws->xa);
	ret = rdlock_cql_await_reset(cfg, t, &l, deadline);
	if (!ret)
		ret = rdlock_cql_gate_enter(cfg, ws, t, &l, w, deadline);
	if (!ret)
		goto again;
	rdlock_ticket_to(cfg, t, ret == -ESTALE ? RDLOCK_TICKET_LOST :
						  RDLOCK_TICKET_DONE);
	goto out_free;
out_leave:
	rdlock_cql_gate_leave(ws, t);
out_free:
	rdlock_cql_waiter_free(ws, w);
	return ret;
}

/*
 * Flat acquire of @t. @stamp: hierarchical, the arrival stamp its entry
 * carries in place of a time (a position, section 5.3 as built); NULL:
 * flat, or a hierarchical client that did not wait on its node, whose
 * entry carries its own position.
 */
int __rdlock_cql_acquire(const struct rdlock_proto_cfg *cfg,
			 struct rdlock_ticket *t, unsigned long deadline,
			 const u32 *stamp)
{
	struct cql_layout l;
	int ret;

	ret = rdlock_cql_check_args(cfg, t, &l) ?:
	      rdlock_proto_admit(cfg, t, deadline);
	if (ret)
		return ret;
	ret = rdlock_cql_enqueue(cfg, t, deadline, stamp, &l);
	rdlock_proto_admit_end(t);
	return ret;
}

static int rdlock_cql_acquire(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	return __rdlock_cql_acquire(cfg, t, deadline, NULL);
}

/*
 * Hand the lock to the waiter whose entry is @e, at position @pos; @gen:
 * the lock's reset count, which the waiter's must equal.
 */
static void rdlock_cql_notify(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t, u32 pos, u64 e,
			      u32 gen)
{
	u32 node = cql_cid_node(cql_entry_cid(e));
	struct rdlock_cql_msg msg = {
		.home = cpu_to_le32(t->node),
		.slot = cpu_to_le32(t->slot),
		.incarnation = cpu_to_le64(t->incarnation),
		.pos = cpu_to_le32(pos),
		.local = cpu_to_le32(cql_cid_local(cql_entry_cid(e))),
		.reset_gen = cpu_to_le32(gen),
		.kind = RDLOCK_CQL_NOTIFY,
	};
	int ret = rdlock_cql_send(cfg, node, &msg);

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

/*
 * Is position @s out of the queue since our dequeue: has the client there
 * been granted and left, or is the queue being reset? Then whatever we
 * were refetching for it is moot (its slot may even hold a later lap's
 * entry by now). A queue reset since restarts positions; the caller tells
 * that by this node's reset count, which every reset moves first. A READ
 * that fails is made again, as the entries' are: taken for "still
 * queued", it would make the releaser reset the lock for an entry it no
 * longer needs (cause unwritten, or overwrite).
 */
static bool rdlock_cql_passed(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t,
			      const struct cql_layout *l, u32 s)
{
	u32 d;
	u64 h;

	if (rdlock_cql_read(cfg, t, t->slot, &h))
		return false;
	if (cql_hdr_resetting(h))
		return true;
	/* Queued positions are qhead .. qhead + qsize - 1, wrap-safe. */
	d = cql_pos_add(l, s, cql_pos_mask(l) + 1 - cql_hdr_qhead(l, h));
	return d >= cql_hdr_qsize(l, h);
}

/*
 * The entry at @pos in @queue is obsolete: READ it again after back-offs
 * until it is the position's own (or is judged otherwise than obsolete).
 * Once the back-off is at its longest, each round also READs the header,
 * and refetching ends when our successor @s is out of the queue (as a
 * reader's does, rdlock_cql_handover()). Returns the entry's state, or
 * CQL_ENTRY_OBSOLETE when refetching ends.
 */
static enum cql_entry_state
rdlock_cql_refetch(const struct rdlock_proto_cfg *cfg, struct rdlock_ticket *t,
		   const struct cql_layout *l, u32 s, u32 pos, u64 *queue,
		   u32 gen)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	unsigned long until = jiffies +
			      msecs_to_jiffies(RDLOCK_CQL_REFETCH_MAX_MS);
	unsigned int us = RDLOCK_CQL_REFETCH_MIN_US;
	u64 *e = &queue[cql_pos_index(l, pos)];
	enum cql_entry_state st = CQL_ENTRY_OBSOLETE;
	int ret;

	/* A reset since our dequeue aborted the enqueuer: its entry stays. */
	while (!time_after(jiffies, until) && rdlock_cql_gen(ws, t) == gen) {
		rdlock_proto_count(cfg, refetches);
		rdlock_cql_refetch_pause(cfg, &us);
		/* A failed READ is no news: the entry is READ again. */
		ret = rdlock_cql_read(cfg, t, rdlock_cql_entry_slot(t, l, pos),
				      e);
		if (ret == -ESTALE)
			break;
		if (ret)
			continue;
		st = cql_entry_classify(l, *e, pos);
		if (st != CQL_ENTRY_OBSOLETE)
			break;
		/*
		 * A waiter that readers passed (they came and went, releases
		 * are counted) may WRITE its entry late, over the entry of
		 * the position a lap after it: that entry then reads as
		 * obsolete for good, and its waiter is granted by its
		 * liveness check. Our successor served and gone: moot.
		 */
		if (us == RDLOCK_CQL_REFETCH_MAX_US &&
		    rdlock_cql_passed(cfg, t, l, s))
			break;
	}
	if (st == CQL_ENTRY_OBSOLETE && time_after(jiffies, until))
		rdlock_proto_count(cfg, cql_refetch_expired);
	return st;
}

/*
 * After the dequeue that returned @prev: Fig. 7 lines 7-19 by
 * cql_release_next(), READing only the entries it looks at. A writer
 * reads from the successor up to the first writer; a reader, only when
 * writers are queued, every queued entry (to tell shared holders from
 * writers not yet populated, section 4.3). @win: the @win_n entries from
 * queue index @widx on that the dequeue READ with its FAA. @gen: the
 * lock's reset count. A release that meets a reset is aborted: the reset
 * empties the queue. One that finds an entry overwritten or the version
 * wrap near, or an entry its enqueuer never wrote, resets the lock.
 */
static void rdlock_cql_handover(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t,
				const struct cql_layout *l, enum cql_mode m,
				u64 prev, const u64 *win, u32 widx, u32 win_n,
				u32 gen)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	u64 stackq[RDLOCK_CQL_STACK_ENTRIES] = {}, *queue = stackq;
	unsigned long until = jiffies +
			      msecs_to_jiffies(RDLOCK_CQL_REFETCH_MAX_MS);
	unsigned int us = RDLOCK_CQL_REFETCH_MIN_US;
	u32 s = cql_pos_add(l, cql_hdr_qhead(l, prev), 1);
	u32 n = cql_hdr_qsize(l, prev), i, first = 0, count = 0;
	struct rdlock_cql_have have = { .win = widx, .win_n = win_n };
	enum rdlock_cql_reset_cause cause;
	enum cql_release act;
	enum cql_entry_state st;
	u64 e;

	if (cql_hdr_resetting(prev))
		return;
	n = min(n ? n - 1 : 0, cql_capacity(l));
	if (!n || (m == CQL_SHARED && !cql_hdr_wcnt(l, prev))) {
		/*
		 * Nobody to notify; what is left to check needs no entry. A
		 * reader leaving readers behind may still carry qhead into
		 * the all-ones lap: its reset is owed as after any dequeue.
		 */
		act = n ? CQL_REL_DONE :
			  cql_release_next(l, prev, m, NULL, &first, &count);
		if (act == CQL_REL_DONE &&
		    cql_hdr_version_overflow(l, prev + cql_dequeue_delta(l, m)))
			act = CQL_REL_RESET;
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

			/* Not READ: it reads as obsolete, READ again below. */
			rdlock_cql_get(cfg, t, l, queue, &have, p, n - i);
			st = cql_entry_classify(l, queue[cql_pos_index(l, p)],
						p);
			if (st == CQL_ENTRY_OBSOLETE)
				st = rdlock_cql_refetch(cfg, t, l, s, p, queue,
							gen);
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
			if (act != CQL_REL_REFETCH || rdlock_cql_gen(ws, t) != gen)
				break;
			if (time_after(jiffies, until)) {
				rdlock_proto_count(cfg, cql_refetch_expired);
				break;
			}
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
	/*
	 * A slow releaser may find its successor served and gone, or the
	 * queue it read reset under it (this node's reset count moved: the
	 * reset aborted whom it would notify, and the entries it waited for
	 * are never written).
	 */
	if ((act == CQL_REL_REFETCH || act == CQL_REL_RESET) &&
	    rdlock_cql_gen(ws, t) != gen)
		act = CQL_REL_DONE;
	if ((act == CQL_REL_REFETCH || act == CQL_REL_RESET) && n &&
	    rdlock_cql_passed(cfg, t, l, s))
		act = CQL_REL_DONE;
act:
	switch (act) {
	case CQL_REL_NOTIFY:
		for (i = 0; i < count; i++) {
			u32 p = cql_pos_add(l, first, i);

			rdlock_cql_notify(cfg, t, p, queue[cql_pos_index(l, p)],
					  gen);
		}
		break;
	case CQL_REL_REFETCH:
		/* Its enqueuer's node is gone, or failed its WRITE. */
		rdlock_cql_reset_later(cfg, t, RDLOCK_CQL_RESET_UNWRITTEN,
				       prev + cql_dequeue_delta(l, m), gen);
		break;
	case CQL_REL_RESET:
		/* Not counted by the header (reset under us), or a wrap. */
		cause = RDLOCK_CQL_RESET_OVERWRITE;
		if (cql_hdr_qsize(l, prev) &&
		    (m == CQL_SHARED || cql_hdr_wcnt(l, prev)) &&
		    cql_hdr_version_overflow(l, prev + cql_dequeue_delta(l, m)))
			cause = RDLOCK_CQL_RESET_VERSION;
		rdlock_cql_reset_later(cfg, t, cause,
				       prev + cql_dequeue_delta(l, m), gen);
		break;
	default:
		break;
	}
	if (queue != stackq)
		kfree(queue);
}

/*
 * Is somebody likely to be queued behind the releaser? Then its dequeue
 * carries the READ of the entries after it (FAA_READ: the handover to a
 * waiter in one round trip); else it is a plain FAA, which rxe answers
 * faster than a FAA with a READ chained to it, and only a header that
 * shows somebody behind after all is followed by READ_RANGEs (a second
 * round trip). A hint, not a condition of correctness: the handover READs
 * whatever the dequeue did not bring. Two facts the node has for free:
 * the acquisition's own FAA found the queue in use (it waited, or readers
 * held), or another client of this node is in the lock's queue now (for
 * a writer, which holds at the head, that one is behind it).
 */
static bool rdlock_cql_busy(struct rdlock_cql_waiters *ws,
			    const struct rdlock_ticket *t,
			    const struct cql_layout *l)
{
	struct rdlock_cql_gate *g;
	bool busy;

	if (cql_hdr_qsize(l, t->prev))
		return true;
	spin_lock_bh(&ws->gate_lock);
	g = rdlock_cql_gate_find(ws, t);
	busy = g && g->inside > 1;
	spin_unlock_bh(&ws->gate_lock);
	return busy;
}

/* Dequeue @t, releasing already, and hand the lock on. */
void __rdlock_cql_release(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	enum cql_mode m = rdlock_cql_mode(t);
	u64 win[RDLOCK_XPORT_FAA_READ_MAX];
	struct cql_layout l;
	u32 after, widx, k, gen;
	u64 prev;
	int ret;

	if (WARN_ON_ONCE(rdlock_cql_layout(cfg, &l)))
		return;
	/*
	 * Fig. 7 line 6: dequeue. When somebody is likely behind us, with the
	 * READ of the entries right after our position posted together (one
	 * round trip, as the paper): a writer's successor is there, and the
	 * readers after it begin there. Cut at the end of the queue; the
	 * handover READs whatever else it needs.
	 */
	after = cql_pos_add(&l, cql_enqueue_pos(&l, t->prev), 1);
	widx = cql_pos_index(&l, after);
	/*
	 * The count our notifications carry: the one we enqueued with (no
	 * reset completes while we are in the queue), read before the
	 * dequeue, so that a reset signal after it shows in the handover.
	 */
	gen = rdlock_cql_gen(ws, t);
	if (rdlock_cql_busy(ws, t, &l)) {
		k = min3((u32)RDLOCK_XPORT_FAA_READ_MAX, cql_capacity(&l) - 1,
			 cql_capacity(&l) - widx);
		ret = rdlock_proto_faa_read_must(cfg, t,
						 cql_dequeue_delta(&l, m),
						 rdlock_cql_entry_slot(t, &l,
								       after),
						 k, &prev, win);
	} else {
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_FAA,
					   cql_dequeue_delta(&l, m), 0, &prev);
	}
	rdlock_cql_gate_leave(ws, t);
	if (ret < 0) {
		rdlock_ticket_failed(cfg, t, ret);
		return;
	}
	/* Out of the queue; what follows hands the lock on. */
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	rdlock_cql_handover(cfg, t, &l, m, prev, win, widx, ret, gen);
	if (cql_hdr_qsize(&l, prev) == 1)
		rdlock_cql_reset_idle(cfg, t, &l,
				      prev + cql_dequeue_delta(&l, m));
}

static int rdlock_cql_lock(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t, unsigned long deadline)
{
	if (cfg->cql_policy != RDLOCK_CQL_FLAT)
		return rdlock_cql_hier_acquire(cfg, t, deadline);
	return rdlock_cql_acquire(cfg, t, deadline);
}

static void rdlock_cql_unlock(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t)
{
	if (cfg->cql_policy != RDLOCK_CQL_FLAT)
		rdlock_cql_hier_release(cfg, t);
	else
		rdlock_cql_release(cfg, t);
}

static void rdlock_cql_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t)
{
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_RELEASING);
	__rdlock_cql_release(cfg, t);
}

/* Never an update ticket (acquire refuses them). */
static int rdlock_cql_upgrade(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	return -EINVAL;
}

/**
 * rdlock_cql_init() - this node's registry and notification handler
 *
 * Return: 0 or the error of rdlock_xport_set_msg_handler().
 */
static int rdlock_cql_init(void)
{
	int ret;

	rdlock_cql_waiters_init(&rdlock_cql_local);
	ret = rdlock_xport_set_msg_handler(RDLOCK_MSG_CQL,
					   rdlock_cql_msg_handler);
	if (ret) {
		rdlock_cql_waiters_destroy(&rdlock_cql_local);
		return ret;
	}
	rdlock_cql_ready = true;
	return 0;
}

/* After the transport is down and background tickets are finished. */
static void rdlock_cql_exit(void)
{
	if (!rdlock_cql_ready)
		return;
	rdlock_xport_set_msg_handler(RDLOCK_MSG_CQL, NULL);
	rdlock_cql_waiters_destroy(&rdlock_cql_local);
	rdlock_cql_ready = false;
}

/* The uapi's CQL limits are the encoding's. */
static_assert(RDLOCK_CQL_QUEUE_BITS_MIN == (int)CQL_CAP_BITS_MIN);
static_assert(RDLOCK_CQL_QUEUE_BITS_MAX == (int)CQL_CAP_BITS_MAX);
static_assert(RDLOCK_CQL_QUEUE_BITS_DEFAULT == (int)CQL_CAP_BITS_DEFAULT);
static_assert(RDLOCK_CQL_VERSION_BITS_MIN == (int)CQL_VER_BITS_MIN);
static_assert(RDLOCK_CQL_VERSION_BITS_MAX == (int)CQL_VER_BITS_MAX);
static_assert(RDLOCK_CQL_VERSION_BITS_DEFAULT == (int)CQL_VER_BITS_DEFAULT);

/*
 * The admission gate lets each node's clients have capacity / nodes
 * entries of a queue: at least one needs capacity >= nodes.
 */
static int rdlock_cql_check_attr(const struct rdlock_proto_attr *attr,
				 u32 nodes)
{
	u32 bits = attr->queue_bits ?: CQL_CAP_BITS_DEFAULT;

	return BIT(bits) < nodes ? -EINVAL : 0;
}

static void rdlock_cql_config(struct rdlock_proto_cfg *cfg,
			      const struct rdlock_proto_attr *attr)
{
	cfg->cql_cap_bits = attr->queue_bits ?: CQL_CAP_BITS_DEFAULT;
	cfg->cql_ver_bits = attr->version_bits ?: CQL_VER_BITS_DEFAULT;
	if (attr->flags & RDLOCK_LS_CQL_PHASE_FAIR)
		cfg->cql_policy = RDLOCK_CQL_PHASE_FAIR;
	else if (attr->flags & RDLOCK_LS_CQL_HIER)
		cfg->cql_policy = RDLOCK_CQL_TASK_FAIR;
}

/*
 * The header counts nobody in the queue and no reset: its qhead and the
 * entries' versions stay (the next name continues the laps, which is what
 * versions are for).
 */
static bool rdlock_cql_word_idle(const struct rdlock_proto_cfg *cfg, u64 w)
{
	struct cql_layout l;

	if (cql_layout_init(&l, cfg->cql_cap_bits, cfg->cql_ver_bits))
		return false;
	return !cql_hdr_qsize(&l, w) && !cql_hdr_resetting(w);
}

static int rdlock_cql_show_head(const struct rdlock_proto_cfg *cfg,
				struct seq_file *m)
{
	struct cql_layout l;

	if (cql_layout_init(&l, cfg->cql_cap_bits, cfg->cql_ver_bits))
		return -EINVAL;
	seq_printf(m, "capacity: %u\nversion_bits: %u\n", cql_capacity(&l),
		   cfg->cql_ver_bits);
	return 0;
}

static const char *const rdlock_cql_entry_names[] = {
	[CQL_ENTRY_VALID]	= "valid",
	[CQL_ENTRY_OBSOLETE]	= "obsolete",
	[CQL_ENTRY_OVERWRITTEN]	= "overwritten",
	[CQL_ENTRY_VER_OVERFLOW] = "version-overflow",
};

/*
 * One queued position's entry, judged; decoded only when it is a client's
 * entry of this lap or a later one: a holder granted at its enqueue never
 * writes one, and a waiter may not have written it yet.
 */
static void rdlock_cql_entry_show(struct seq_file *m,
				  const struct cql_layout *l, u32 pos, u64 e)
{
	enum cql_entry_state st = cql_entry_classify(l, e, pos);
	u32 cid = cql_entry_cid(e);

	seq_printf(m, "  pos %u index %u: %#llx %s", pos, cql_pos_index(l, pos),
		   (unsigned long long)e, rdlock_cql_entry_names[st]);
	if (st == CQL_ENTRY_VALID || st == CQL_ENTRY_OVERWRITTEN)
		seq_printf(m, " %s node %u local %u version %u ts %u",
			   cql_entry_mode(e) == CQL_EXCLUSIVE ? "ex" : "sh",
			   cql_cid_node(cid), cql_cid_local(cid),
			   cql_entry_version(l, e), cql_entry_ts(e));
	seq_putc(m, '\n');
}

/*
 * The header @h decoded and the entries of its queued positions (a shared
 * holder never writes one: "obsolete"), READ one at a time: a snapshot of
 * a lock in use may be torn between words.
 */
static int rdlock_cql_show(const struct rdlock_proto_cfg *cfg,
			   struct seq_file *m, u64 h,
			   int (*read)(void *arg, u32 off, u64 *v), void *arg)
{
	struct cql_layout l;
	u32 n, k, qhead;
	u64 e;
	int ret;

	if (cql_layout_init(&l, cfg->cql_cap_bits, cfg->cql_ver_bits))
		return -EINVAL;
	qhead = cql_hdr_qhead(&l, h);
	n = min(cql_hdr_qsize(&l, h), cql_capacity(&l));
	seq_printf(m, "header %#llx qhead %u lap %u index %u qsize %u wcnt %u reset %u%s\n",
		   (unsigned long long)h, qhead, cql_pos_version(&l, qhead),
		   cql_pos_index(&l, qhead), cql_hdr_qsize(&l, h),
		   cql_hdr_wcnt(&l, h), cql_hdr_reset_id(h),
		   cql_hdr_overflow(&l, h) ? " overflow" : "");
	for (k = 0; k < n; k++) {
		u32 pos = cql_pos_add(&l, qhead, k);

		ret = read(arg, 1 + cql_pos_index(&l, pos), &e);
		if (ret)
			return ret;
		rdlock_cql_entry_show(m, &l, pos, e);
	}
	return 0;
}

const struct rdlock_proto_ops rdlock_proto_cql = {
	.name		= "cql",
	.slots		= rdlock_cql_slots,
	.acquire	= rdlock_cql_lock,
	.release	= rdlock_cql_unlock,
	.upgrade	= rdlock_cql_upgrade,
	.forget_node	= rdlock_cql_forget_node,
	.init		= rdlock_cql_init,
	.exit		= rdlock_cql_exit,
	.check_attr	= rdlock_cql_check_attr,
	.config		= rdlock_cql_config,
	.word_idle	= rdlock_cql_word_idle,
	.show_head	= rdlock_cql_show_head,
	.show		= rdlock_cql_show,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_cql, RDLOCK_INTERNAL);
