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
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/rdlock.h>

#include "lockword/cql.h"
#include "proto.h"
#include "xport.h"

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
/*
 * A waiter that sees the header unchanged this long, with nobody alive
 * named at the queue's head, resets the lock (cql.rst, "Resets").
 */
#define RDLOCK_CQL_STUCK_MS_DEFAULT	30000
/* A reset's claimer signals again those that did not answer yet. */
#define RDLOCK_CQL_SIGNAL_MS		1000
/* A reset left this long by a claimer that is gone is taken over. */
#define RDLOCK_CQL_TAKEOVER_MS		5000
/* A reset that need not check the lock's reset count first. */
#define RDLOCK_CQL_ANY_GEN		U32_MAX
/* Step 1 of a reset: CAS tries against FAAs that change the header. */
#define RDLOCK_CQL_CLAIM_TRIES		64
/* Queues up to this many entries are read into a buffer on the stack. */
#define RDLOCK_CQL_STACK_ENTRIES	32

/* What a message is (&struct rdlock_cql_msg.kind). */
enum rdlock_cql_msg_kind {
	RDLOCK_CQL_NOTIFY,	/* the lock is the waiter's */
	RDLOCK_CQL_RESET,	/* step 2 of a reset: abort, answer when out */
	RDLOCK_CQL_ACK,		/* the answer to a reset signal */
	RDLOCK_CQL_PING,	/* is the node there? (the send's result says) */
	RDLOCK_CQL_NACK,	/* a reset signal of an older count: not handled */
};

/*
 * A message about one lock: its home node, header slot and table, and
 * the lock's reset count (@reset_gen) as the sender knows it. A
 * notification carries the position it grants (the lap in its top bits)
 * and the waiter's local id on the receiving node; a reset signal and its
 * answer carry the claimer's node in @local and its claim number in @pos.
 */
struct rdlock_cql_msg {
	__le32 home;
	__le32 slot;
	__le64 incarnation;
	__le32 pos;
	__le32 local;
	__le32 reset_gen;
	u8 kind;
	u8 pad[3];
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
 * @gen: the lock's reset count when it entered the queue (the gate's).
 * @granted: set by a notification of reset count @gen.
 * @aborted: set by a reset signal of a later count: out, and again.
 *
 * Every field but @granted and @aborted is written under the registry's
 * lock, which the notification holds while it compares and wakes; @gen
 * and @aborted also under the gate lock, which a reset signal holds.
 */
struct rdlock_cql_waiter {
	wait_queue_head_t wq;
	u32 id;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 pos;
	u32 gen;
	bool granted;
	bool aborted;
};

/**
 * struct rdlock_cql_gate - this node's clients in one lock's queue
 * @hnode: in &struct rdlock_cql_waiters.gates.
 * @home: home node of the lock.
 * @slot: header slot of the lock.
 * @incarnation: the home's table.
 * @inside: clients of this node between their enqueue and dequeue.
 * @out: of those, waiters stepped out to claim a reset of a stuck lock:
 *	their places stay taken, but no answer to a reset signal waits for
 *	them (they would wait for their own reset).
 * @users: @inside, @out and those waiting to get in.
 * @wq: those waiting to get in.
 * @gen: the lock's reset count as this node knows it.
 * @ack_due: a reset signal is answered once @inside is 0; nobody gets in
 *	until then.
 * @lap_block: a client of this node was given a position in the all-ones
 *	lap (and aborted): nobody gets in until a reset signal comes or a
 *	header past the lap is seen, so that the aborted enqueues of the
 *	lap, which stay counted until the reset, never overflow qsize.
 * @sig_node: the claimer of the last reset signal handled, plus one.
 * @sig_seq: its claim number.
 *
 * Each node admits at most capacity / nodes of its own clients into a
 * lock's queue (cql.rst, "Admission gate"); the others wait here, on this
 * node, without remote operations. The last user frees the gate unless
 * the lock was reset (@gen): the count must outlive its users.
 */
struct rdlock_cql_gate {
	struct hlist_node hnode;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 inside;
	u32 out;
	u32 users;
	wait_queue_head_t wq;
	u32 gen;
	bool ack_due;
	bool lap_block;
	u32 sig_node;
	u32 sig_seq;
};

/**
 * struct rdlock_cql_claim - a reset this node runs, collecting answers
 * @list: in &struct rdlock_cql_waiters.claims.
 * @home: home node of the lock.
 * @slot: header slot of the lock.
 * @incarnation: the home's table.
 * @seq: the claim's number on this node.
 * @gen: the reset count it signals; raised past the count of a NACK.
 * @pending: nodes that have not answered, by bit.
 * @raise: a NACK raised @gen: every participant is signalled again.
 * @wq: the claimer waits here for @pending to empty.
 */
struct rdlock_cql_claim {
	struct list_head list;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 seq;
	u32 gen;
	u32 pending;
	bool raise;
	wait_queue_head_t wq;
};

/*
 * What a waiter's liveness checks saw: the header and since when it has
 * not changed; the cause of the reset it asks for.
 */
struct rdlock_cql_watch {
	u64 last;
	unsigned long since;
	enum rdlock_cql_reset_cause cause;
};

const char *const rdlock_cql_reset_names[RDLOCK_CQL_RESET_NR] = {
	[RDLOCK_CQL_RESET_VERSION]	= "version",
	[RDLOCK_CQL_RESET_OVERWRITE]	= "overwrite",
	[RDLOCK_CQL_RESET_UNWRITTEN]	= "unwritten",
	[RDLOCK_CQL_RESET_STUCK]	= "stuck",
	[RDLOCK_CQL_RESET_TAKEOVER]	= "takeover",
};
EXPORT_SYMBOL_NS_GPL(rdlock_cql_reset_names, RDLOCK_INTERNAL);

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

static u32 rdlock_cql_gate_key(u32 home, u32 slot)
{
	return home * 0x9e3779b1U ^ slot;
}

static struct rdlock_cql_gate *
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

static struct rdlock_cql_gate *
rdlock_cql_gate_find(struct rdlock_cql_waiters *ws,
		     const struct rdlock_ticket *t)
{
	return rdlock_cql_gate_lookup(ws, t->node, t->slot, t->incarnation);
}

/* A new gate for the lock, hashed in; under the gate lock. */
static void rdlock_cql_gate_add(struct rdlock_cql_waiters *ws,
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
static void rdlock_cql_answer(struct rdlock_cql_waiters *ws, u8 kind, u32 to,
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
static void rdlock_cql_on_reset(struct rdlock_cql_waiters *ws, u32 src,
				const struct rdlock_cql_msg *m)
{
	u32 home = le32_to_cpu(m->home), slot = le32_to_cpu(m->slot);
	u64 inc = le64_to_cpu(m->incarnation);
	u32 claimer = le32_to_cpu(m->local), seq = le32_to_cpu(m->pos);
	u32 gen = le32_to_cpu(m->reset_gen);
	struct rdlock_cql_waiter *w;
	struct rdlock_cql_gate *g;
	bool ack, same;
	unsigned long id;

	spin_lock(&ws->gate_lock);
	g = rdlock_cql_gate_lookup(ws, home, slot, inc);
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
static void rdlock_cql_on_answer(struct rdlock_cql_waiters *ws, u32 src,
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
			wake_up(&c->wq);
			break;
		}
	}
	spin_unlock(&ws->gate_lock);
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

static struct rdlock_cql_waiters *
rdlock_cql_waiters_of(const struct rdlock_proto_cfg *cfg)
{
	return cfg->xport ? cfg->xport->waiters(cfg->xport_priv) :
			    &rdlock_cql_local;
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

static int rdlock_cql_read(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t, u32 slot, u64 *val);
static unsigned long
rdlock_cql_takeover_jiffies(const struct rdlock_proto_cfg *cfg);
static void rdlock_cql_lap_block(struct rdlock_cql_waiters *ws,
				 const struct rdlock_ticket *t, bool on);

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
static void __rdlock_cql_gate_leave(struct rdlock_cql_waiters *ws,
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
static void rdlock_cql_lap_block(struct rdlock_cql_waiters *ws,
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

static bool rdlock_cql_gate_back(struct rdlock_cql_waiters *ws,
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

/*
 * A waiter (@w, in the queue) found the lock stuck (@wt): out of the queue
 * to reset it. Returns true when it is out for good (it reset the lock, or
 * another reset wiped the queue), false when it is back where it was (the
 * header moved: no reset needed).
 */
static int rdlock_cql_reset(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, const struct cql_layout *l,
			    enum rdlock_cql_reset_cause cause, u64 h, bool exact,
			    u32 gen);

static bool rdlock_cql_stuck_reset(const struct rdlock_proto_cfg *cfg,
				   struct rdlock_cql_waiters *ws,
				   struct rdlock_ticket *t,
				   const struct cql_layout *l,
				   struct rdlock_cql_waiter *w,
				   const struct rdlock_cql_watch *wt)
{
	int ret;

	__rdlock_cql_gate_leave(ws, t, true);
	ret = rdlock_cql_reset(cfg, t, l, wt->cause, wt->last, true,
			       RDLOCK_CQL_ANY_GEN);
	return !rdlock_cql_gate_back(ws, t, w, !ret);
}

/* The lock's reset count as this node knows it (0: never reset). */
static u32 rdlock_cql_gen_locked(struct rdlock_cql_waiters *ws,
				 const struct rdlock_ticket *t)
{
	struct rdlock_cql_gate *g = rdlock_cql_gate_find(ws, t);

	return g ? g->gen : 0;
}

static u32 rdlock_cql_gen(struct rdlock_cql_waiters *ws,
			  const struct rdlock_ticket *t)
{
	u32 gen;

	spin_lock_bh(&ws->gate_lock);
	gen = rdlock_cql_gen_locked(ws, t);
	spin_unlock_bh(&ws->gate_lock);
	return gen;
}

/*
 * A message to @node; sent again while the transport says -EAGAIN (no free
 * send buffer) or -ENOTCONN (a blip), for up to RDLOCK_CQL_SEND_MAX_MS.
 */
static int rdlock_cql_send(const struct rdlock_proto_cfg *cfg, u32 node,
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

/* The back-off before a refetch: @us, doubled for the next one. */
static void rdlock_cql_refetch_pause(const struct rdlock_proto_cfg *cfg,
				     unsigned int *us)
{
	if (!rdlock_proto_xsleep(cfg, (u64)*us * NSEC_PER_USEC))
		usleep_range(*us, 2 * *us);
	*us = min(2 * *us, RDLOCK_CQL_REFETCH_MAX_US);
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
 * Is @node there? The transport's view (appendix B's failure detector):
 * a message it cannot deliver within RDLOCK_CQL_SEND_MAX_MS says gone.
 */
static bool rdlock_cql_alive(const struct rdlock_proto_cfg *cfg,
			     const struct rdlock_ticket *t, u32 node)
{
	struct rdlock_cql_msg m = {
		.home = cpu_to_le32(t->node),
		.slot = cpu_to_le32(t->slot),
		.incarnation = cpu_to_le64(t->incarnation),
		.kind = RDLOCK_CQL_PING,
	};

	return node == rdlock_proto_self(cfg) || !rdlock_cql_send(cfg, node, &m);
}

static void rdlock_cql_count_reset(const struct rdlock_proto_cfg *cfg,
				   enum rdlock_cql_reset_cause cause)
{
	__rdlock_proto_count(cfg, offsetof(struct rdlock_proto_stats,
					   cql_resets) +
				  cause * sizeof(atomic64_t));
}

/* Signal every participant still to answer; those gone are not awaited. */
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
		if (!(READ_ONCE(c->pending) & BIT(i)) ||
		    !rdlock_cql_send(cfg, i, &m))
			continue;
		spin_lock_bh(&ws->gate_lock);
		c->pending &= ~BIT(i);
		spin_unlock_bh(&ws->gate_lock);
	}
}

/*
 * A reset of a busy lock (section 4.4), run by this node: 1 when it
 * claimed the lock (and reset it, unless taken over), 0 when it did not
 * (another claimer's, or the cause is gone), else the transport's error
 * (the reset field may stay; enqueuers take the reset over once this node
 * is gone).
 *
 * Step 1: claim by CAS of the reset field on @h, the header as last seen;
 * with @exact only that value (a waiter that found the lock stuck: any
 * change is progress), else again on whatever FAAs made of it, until
 * another claimer's reset id shows, or the cause is gone: the lock's reset
 * count on this node is no longer @gen (RDLOCK_CQL_ANY_GEN: not checked),
 * or for a version wrap the header no longer reaches the all-ones lap. A
 * takeover replaces the reset id of a claimer that is gone.
 * Step 2: signal every participant (this node too) with the lock's next
 * reset count; each aborts its waiters and answers once none of its
 * clients is in the queue (holders release first); collect every answer.
 * A node the transport cannot reach is not awaited.
 * Step 3: zero the queue, then the header by CAS, unless another claimer
 * took over meanwhile. The caller must not be in the lock's queue.
 */
static int __rdlock_cql_reset(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t,
			      const struct cql_layout *l,
			      enum rdlock_cql_reset_cause cause, u64 h,
			      bool exact, u32 gen, struct rdlock_cql_claim *c);

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

static bool rdlock_cql_claim_running(struct rdlock_cql_waiters *ws,
				     const struct rdlock_cql_claim *c)
{
	bool running;

	spin_lock_bh(&ws->gate_lock);
	running = rdlock_cql_claim_running_locked(ws, c);
	spin_unlock_bh(&ws->gate_lock);
	return running;
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
	init_waitqueue_head(&c->wq);
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

static void rdlock_cql_claim_end(struct rdlock_cql_waiters *ws,
				 struct rdlock_cql_claim *c)
{
	spin_lock_bh(&ws->gate_lock);
	list_del(&c->list);
	spin_unlock_bh(&ws->gate_lock);
	wake_up_all(&ws->claim_ended);
}

static int rdlock_cql_reset(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, const struct cql_layout *l,
			    enum rdlock_cql_reset_cause cause, u64 h, bool exact,
			    u32 gen)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_claim c = {
		.home = t->node, .slot = t->slot,
		.incarnation = t->incarnation,
	};
	int ret;

	/*
	 * A reset a release owes (!@exact, in the background) waits for
	 * another claim of this node to end instead of being dropped: that
	 * one may be an idle reset that fails, and a busy lock whose owed
	 * resets are all dropped carries qhead through the all-ones lap.
	 * The cause is checked again against the header the claim's CAS
	 * finds. A waiter that steps out (@exact) must not wait: the other
	 * claim may be waiting for it to leave the queue.
	 */
	while (!rdlock_cql_claim_begin(ws, &c)) {
		if (exact)
			return 0;
		wait_event_timeout(ws->claim_ended,
				   !rdlock_cql_claim_running(ws, &c),
				   msecs_to_jiffies(RDLOCK_CQL_CHECK_MS));
	}
	ret = __rdlock_cql_reset(cfg, t, l, cause, h, exact, gen, &c);
	rdlock_cql_claim_end(ws, &c);
	return ret;
}

/*
 * Steps 2 and 3 of a reset this node claimed, busy or idle (@c registered
 * by rdlock_cql_claim_begin()): 1 when done, 0 when another claimer took
 * it over, else the transport's error (the table is gone).
 */
static int rdlock_cql_reset_claimed(const struct rdlock_proto_cfg *cfg,
				    struct rdlock_ticket *t,
				    const struct cql_layout *l,
				    struct rdlock_cql_claim *c)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	u32 id = rdlock_proto_self(cfg) + 1, i, all = 0;
	unsigned int us = RDLOCK_CQL_REFETCH_MIN_US;
	bool raised;
	u64 cur;
	int ret;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (rdlock_proto_participant(cfg, i))
			all |= BIT(i);
	spin_lock_bh(&ws->gate_lock);
	c->gen = rdlock_cql_gen_locked(ws, t) + 1;
	c->pending = all;
	spin_unlock_bh(&ws->gate_lock);
	for (;;) {
		rdlock_cql_signal(cfg, t, ws, c);
		if (wait_event_timeout(c->wq, !READ_ONCE(c->pending) ||
				       READ_ONCE(c->raise),
				       msecs_to_jiffies(RDLOCK_CQL_SIGNAL_MS))) {
			/* A NACK: everybody again, with the count raised. */
			spin_lock_bh(&ws->gate_lock);
			raised = c->raise;
			if (raised) {
				c->raise = false;
				c->pending = all;
			}
			spin_unlock_bh(&ws->gate_lock);
			if (!raised)
				break;
			continue;
		}
		/* Still ours? A claimer taken for gone gives the lock up. */
		ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &cur);
		if (ret == -ESTALE || (!ret && cql_hdr_reset_id(cur) != id))
			break;
	}

	/*
	 * Step 3. It must end, or enqueuers wait for the reset field for
	 * good (only a claimer that is gone is taken over): a failed
	 * operation is tried again, from the READ, while the table lives.
	 */
	for (;;) {
		ret = rdlock_cql_reinit(cfg, t, l, id);
		if (ret >= 0 || ret == -ESTALE)
			return ret;
		rdlock_cql_refetch_pause(cfg, &us);
	}
}

static int __rdlock_cql_reset(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t,
			      const struct cql_layout *l,
			      enum rdlock_cql_reset_cause cause, u64 h,
			      bool exact, u32 gen, struct rdlock_cql_claim *c)
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
			break;
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
	ret = rdlock_cql_reset_claimed(cfg, t, l, c);
	if (ret != 1)
		return ret < 0 ? ret : 1;
	rdlock_cql_count_reset(cfg, cause);
	return 1;
}

static void rdlock_cql_reset_work(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t)
{
	struct cql_layout l;

	if (!WARN_ON_ONCE(rdlock_cql_layout(cfg, &l)))
		rdlock_cql_reset(cfg, t, &l,
				 (enum rdlock_cql_reset_cause)(u32)t->prev,
				 t->word, false, t->prev >> 32);
}

/*
 * A reset a release found necessary, in the background: it waits for
 * every holder, and the releaser may hold other locks those wait for.
 */
static void rdlock_cql_reset_later(const struct rdlock_proto_cfg *cfg,
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
	rdlock_proto_reset_later(cfg, &r, rdlock_cql_reset_work);
}

static unsigned long rdlock_cql_stuck_jiffies(const struct rdlock_proto_cfg *cfg)
{
	return msecs_to_jiffies(cfg->cql_stuck_ms ?: RDLOCK_CQL_STUCK_MS_DEFAULT);
}

/* A reset field left by a claimer that is gone: when to look at it. */
static unsigned long
rdlock_cql_takeover_jiffies(const struct rdlock_proto_cfg *cfg)
{
	return msecs_to_jiffies(min_not_zero(cfg->cql_stuck_ms,
					     (u32)RDLOCK_CQL_TAKEOVER_MS));
}

/*
 * Does the header @h, unchanged for long, show the lock stuck for good?
 * During a reset: when its claimer is gone (appendix B: take it over).
 * Otherwise when the client at the queue's head is not known to be alive:
 * its entry names a node that is gone, or it has none (granted at its
 * enqueue, or a reader: rdlock cannot tell who, and the reset waits for
 * every live holder anyway). A head entry naming a live node is a holder
 * that is slow: wait on.
 */
static bool rdlock_cql_stuck(const struct rdlock_proto_cfg *cfg,
			     struct rdlock_ticket *t,
			     const struct cql_layout *l, u64 h,
			     struct rdlock_cql_watch *wt)
{
	u32 head = cql_hdr_qhead(l, h);
	u64 e;

	if (cql_hdr_resetting(h)) {
		wt->cause = RDLOCK_CQL_RESET_TAKEOVER;
		return !rdlock_cql_alive(cfg, t, cql_hdr_reset_node(h));
	}
	wt->cause = RDLOCK_CQL_RESET_STUCK;
	if (rdlock_proto_op_at(cfg, t, rdlock_cql_entry_slot(t, l, head),
			       RDLOCK_XOP_READ, 0, 0, &e))
		return false;
	return cql_entry_classify(l, e, head) != CQL_ENTRY_VALID ||
	       !rdlock_cql_alive(cfg, t, cql_cid_node(cql_entry_cid(e)));
}

/*
 * The liveness check of a waiter that heard nothing for a while: the
 * header alone may show that it holds the lock (cql_waiter_granted())
 * whether or not its notification arrived. A notification is lost when a
 * slow releaser finds the waiter's entry overwritten by a later lap (readers
 * granted at enqueue may come and go past waiters it has not notified yet)
 * or with a failed connection. Returns 1 when granted so, 0 to keep
 * waiting, -ENOLCK when the lock is stuck (@wt: header and cause), or
 * -ESTALE once the table is gone.
 */
static int rdlock_cql_check(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, u32 pos,
			    struct rdlock_cql_watch *wt)
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

/*
 * Sleep until @w is notified. Returns 0 when granted, -EAGAIN when a reset
 * aborted it, -ENOLCK when it found the lock stuck (@wt says why),
 * -ETIMEDOUT at @deadline (jiffies, 0: none), -EINTR on a fatal signal,
 * -ESTALE when the table is gone.
 */
static int rdlock_cql_wait(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t,
			   struct rdlock_cql_waiter *w, unsigned long deadline,
			   struct rdlock_cql_watch *wt)
{
	unsigned long check = msecs_to_jiffies(RDLOCK_CQL_CHECK_MS);
	long to, left;
	int ret;

	/* A quick look at first: a stuck lock, or a grant's message lost. */
	if (cfg->cql_stuck_ms)
		check = min(check, msecs_to_jiffies(cfg->cql_stuck_ms) / 4 + 1);
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

/*
 * Background end of an abandoned waiter: wait for its grant, release. A
 * reset that aborts it ends it (the reset empties the queue); a stuck lock
 * it resets first.
 */
static void rdlock_cql_finish(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_watch wt = {};
	struct rdlock_cql_waiter *w;
	struct cql_layout l;
	int ret;

	xa_lock_bh(&ws->xa);
	w = xa_load(&ws->xa, (u32)t->word);
	xa_unlock_bh(&ws->xa);
	if (WARN_ON_ONCE(!w) || WARN_ON_ONCE(rdlock_cql_layout(cfg, &l)))
		return;
	do {
		ret = rdlock_cql_wait(cfg, t, w, 0, &wt);
	} while (ret == -ENOLCK &&
		 !rdlock_cql_stuck_reset(cfg, ws, t, &l, w, &wt));
	rdlock_cql_waiter_free(ws, w);
	if (ret == -EAGAIN || ret == -ENOLCK) {
		/* Out of the queue with the reset: nothing to release. */
		rdlock_proto_count(cfg, cql_reset_aborts);
		if (ret == -EAGAIN)
			rdlock_cql_gate_leave(ws, t);
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
		return;
	}
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
static int rdlock_cql_await_reset(const struct rdlock_proto_cfg *cfg,
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
			if (!rdlock_cql_alive(cfg, t, cql_hdr_reset_node(h)))
				rdlock_cql_reset(cfg, t, l,
						 RDLOCK_CQL_RESET_TAKEOVER, h,
						 true, RDLOCK_CQL_ANY_GEN);
			since = jiffies;
		}
	}
}

/* What acquire refuses before anything is sent; @l: the layout. */
static int rdlock_cql_check_args(const struct rdlock_proto_cfg *cfg,
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

/*
 * Flat acquire of @t. @stamp: hierarchical, the arrival stamp its entry
 * carries in place of a time (a position, section 5.3 as built); NULL:
 * flat, or a hierarchical client that did not wait on its node, whose
 * entry carries its own position.
 */
static int __rdlock_cql_acquire(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t, unsigned long deadline,
				const u32 *stamp)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_watch wt = {};
	struct rdlock_cql_waiter *w;
	struct cql_layout l;
	enum cql_mode m;
	u64 prev, entry, old;
	u32 pos;
	u16 ts;
	int ret;

	ret = rdlock_cql_check_args(cfg, t, &l);
	if (ret)
		return ret;
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
		/* -ESTALE: the table is gone, and the ticket with it. */
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
 * that by this node's reset count, which every reset moves first.
 */
static bool rdlock_cql_passed(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t,
			      const struct cql_layout *l, u32 s)
{
	u32 d;
	u64 h;

	if (rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &h))
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

static void rdlock_cql_reset_idle(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t,
				  const struct cql_layout *l, u64 post)
{
	struct rdlock_cql_waiters *ws = rdlock_cql_waiters_of(cfg);
	struct rdlock_cql_claim c = {
		.home = t->node, .slot = t->slot,
		.incarnation = t->incarnation,
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
static void __rdlock_cql_release(const struct rdlock_proto_cfg *cfg,
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

/*
 * Hierarchical locking (section 5, cql.rst "Hierarchical locking"): each
 * node has one entry in a lock's queue at a time, taken by the first of
 * its clients; the others wait on the node, in its local lock. A release
 * hands the entry to the node's next waiter when that waiter arrived
 * before any other node's entry behind ours (task-fair), else it dequeues
 * and the waiter enqueues anew. "Arrived before" is judged by the home's
 * FAA order, not by clocks: a waiter READs the header when it starts
 * waiting, and the queue's tail it sees (its stamp) is compared with the
 * position after the node's entry.
 */

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

static int rdlock_cql_hier_acquire(const struct rdlock_proto_cfg *cfg,
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

static void rdlock_cql_hier_release(const struct rdlock_proto_cfg *cfg,
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

const struct rdlock_proto_ops rdlock_proto_cql = {
	.name		= "cql",
	.slots		= rdlock_cql_slots,
	.acquire	= rdlock_cql_lock,
	.release	= rdlock_cql_unlock,
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
void rdlock_cql_exit(void)
{
	if (!rdlock_cql_ready)
		return;
	rdlock_xport_set_msg_handler(RDLOCK_MSG_CQL, NULL);
	rdlock_cql_waiters_destroy(&rdlock_cql_local);
	rdlock_cql_ready = false;
}
