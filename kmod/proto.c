// SPDX-License-Identifier: GPL-2.0
/*
 * What the lock protocols share: counted remote operations, sleeping
 * (never spinning a CPU) and finishing an abandoned ticket in the
 * background, so that a waiter that times out or is killed never leaves
 * a ticket that would stall everybody behind it.
 */
#include <linux/hash.h>
#include <linux/mempool.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/random.h>
#include <linux/workqueue.h>
#include <linux/rdlock.h>

#include "lockword/bakery.h"
#include "proto.h"
#include "xport.h"

#define RDLOCK_SLEEP_MAX_NS	(100 * NSEC_PER_MSEC)
#define RDLOCK_BACKOFF_MIN_US	50
#define RDLOCK_BACKOFF_MAX_US	20000

struct rdlock_proto_stats rdlock_proto_stats;
EXPORT_SYMBOL_NS_GPL(rdlock_proto_stats, RDLOCK_INTERNAL);

/* The protocols, by the uapi's enum rdlock_proto_id. */
static const struct rdlock_proto_ops *const rdlock_protos[] = {
	[RDLOCK_PROTO_BAKERY]	= &rdlock_proto_bakery,
	[RDLOCK_PROTO_CASLOCK]	= &rdlock_proto_caslock,
	[RDLOCK_PROTO_CQL]	= &rdlock_proto_cql,
};

static_assert(ARRAY_SIZE(rdlock_protos) == RDLOCK_PROTO_NR);

/*
 * Abandoned tickets, resets and posted releases sent again on queues of
 * their own, so that however many tickets are being finished, neither a
 * reset nor a release is ever queued behind them. An abandoned ticket
 * holds no worker while it waits for its grant, nor a reset while it
 * waits for the lock's holders: each runs in steps
 * (rdlock_proto_finish_later(), rdlock_proto_reset_later()), run again by
 * a timer or by the event it waits for. All may be what a file system's
 * writeback waits for: they must make progress under memory pressure
 * (WQ_MEM_RECLAIM, mempools).
 */
static struct workqueue_struct *rdlock_proto_release_wq;
static mempool_t *rdlock_proto_work_pool;
#define RDLOCK_PROTO_WORK_RESERVE	16
/*
 * Releases posted and not ended yet (rdlock_proto_post_release()), and
 * where their owners wait for them to end.
 */
static atomic_t rdlock_proto_posted = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(rdlock_proto_posted_wq);

/**
 * rdlock_proto_lookup() - a protocol by its id
 * @id: enum rdlock_proto_id (the uapi's RDLOCK_PROTO_*).
 *
 * Return: the protocol's ops, or NULL for an unknown @id.
 */
const struct rdlock_proto_ops *rdlock_proto_lookup(u32 id)
{
	return id < ARRAY_SIZE(rdlock_protos) ? rdlock_protos[id] : NULL;
}

/**
 * __rdlock_proto_count() - count one event
 * @cfg: the lockspace's policy; its @stats, if any, counts too.
 * @offset: offset of the atomic64_t counter in struct rdlock_proto_stats.
 *
 * Use rdlock_proto_count(), which takes the counter's name.
 */
void __rdlock_proto_count(const struct rdlock_proto_cfg *cfg, size_t offset)
{
	__rdlock_proto_add(cfg, offset, 1);
}

/**
 * __rdlock_proto_add() - add to one counter
 * @cfg: as for __rdlock_proto_count().
 * @offset: as for __rdlock_proto_count().
 * @v: the amount.
 *
 * Use rdlock_proto_add(), which takes the counter's name.
 */
void __rdlock_proto_add(const struct rdlock_proto_cfg *cfg, size_t offset,
			s64 v)
{
	atomic64_add(v, (atomic64_t *)((char *)&rdlock_proto_stats + offset));
	if (cfg && cfg->stats)
		atomic64_add(v, (atomic64_t *)((char *)cfg->stats + offset));
}

/**
 * rdlock_proto_check() - validate a ticket before acquiring it
 * @cfg: the lockspace's policy.
 * @t: the ticket; a @k of 0 becomes 1.
 *
 * Every protocol takes the same modes and slot counts, so that a
 * lockspace can switch protocols without changing what it may ask for.
 *
 * Return: 0, or -EINVAL for an unknown mode, %RDLOCK_MODE_UPDATE without
 * an update word, or a @k beyond the word's BAKERY_K_MAX/BAKERY_UPD_K_MAX.
 */
int rdlock_proto_check(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t)
{
	enum bakery_mode bm = cfg->update_word ? BAKERY_UPD_SHARED :
						 BAKERY_SHARED;

	if (t->mode >= RDLOCK_MODE_NR ||
	    (t->mode == RDLOCK_MODE_UPDATE && !cfg->update_word))
		return -EINVAL;
	if (!t->k)
		t->k = 1;
	if (!bakery_k_valid(bm, t->k) ||
	    t->read_count > RDLOCK_XPORT_CAS_READ_MAX)
		return -EINVAL;
	t->upgraded = false;
	t->revoked = false;
	t->read_got = false;
	t->state = RDLOCK_TICKET_NEW;	/* each acquisition is a new ticket */
	return 0;
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_check, RDLOCK_INTERNAL);

/* Count one remote operation @op of @t. */
static void rdlock_proto_count_op(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t, enum rdlock_xop op)
{
	t->remote_ops++;
	rdlock_proto_count(cfg, remote_ops);
	if (op >= RDLOCK_XOP_NR)
		return;
	__rdlock_proto_count(cfg, offsetof(struct rdlock_proto_stats, ops) +
			     op * sizeof(atomic64_t));
	/* From its release on, a ticket's operations are the release's. */
	__rdlock_proto_count(cfg, (t->state >= RDLOCK_TICKET_RELEASING ?
				   offsetof(struct rdlock_proto_stats,
					    rel_ops) :
				   offsetof(struct rdlock_proto_stats,
					    acq_ops)) +
			     op * sizeof(atomic64_t));
}

/**
 * rdlock_proto_op_at() - one remote operation on a slot of the ticket's lock
 * @cfg: the lockspace's policy (whose stats count the operation).
 * @t: the ticket; counts the operation.
 * @slot: the slot in @t->node's table: @t->slot, or one after it for a
 *	lock of several slots (a CQL queue entry).
 * @op: the operation.
 * @arg0: first operand.
 * @arg1: second operand.
 * @value: the value the operation returned.
 *
 * Return: as rdlock_xport_exec().
 */
int rdlock_proto_op_at(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, u32 slot, enum rdlock_xop op,
		       u64 arg0, u64 arg1, u64 *value)
{
	int ret;

	if (cfg->xport)
		ret = cfg->xport->exec(cfg->xport_priv, op, t->node,
				       t->incarnation, slot, arg0, arg1,
				       value);
	else
		ret = rdlock_xport_exec(op, t->node, t->incarnation, slot,
					arg0, arg1, value, 0);
	rdlock_proto_count_op(cfg, t, op);
	return ret;
}

/*
 * A READ_RANGE, FAA_READ or CAS_READ of the ticket's lock, counted as one
 * operation.
 */
static int rdlock_proto_range_at(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t, enum rdlock_xop op,
				 u32 slot, u64 arg0, u64 arg1, u32 rslot,
				 u32 count, u64 *value, u64 *vals)
{
	int ret;

	if (cfg->xport)
		ret = cfg->xport->exec_range(cfg->xport_priv, op, t->node,
					     t->incarnation, slot, arg0, arg1,
					     rslot, count, value, vals);
	else
		ret = rdlock_xport_exec_range(op, t->node, t->incarnation,
					      slot, arg0, arg1, rslot, count,
					      value, vals, 0);
	rdlock_proto_count_op(cfg, t, op);
	return ret;
}

/**
 * rdlock_proto_read_range() - READ consecutive slots of the ticket's lock
 * @cfg: the lockspace's policy (whose stats count the operation).
 * @t: the ticket; counts the operation.
 * @slot: the first slot.
 * @count: slots, 1 to %RDLOCK_XPORT_READ_MAX.
 * @vals: the slots read.
 *
 * Return: @count, or an error as rdlock_xport_exec_range().
 */
int rdlock_proto_read_range(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, u32 slot, u32 count,
			    u64 *vals)
{
	return rdlock_proto_range_at(cfg, t, RDLOCK_XOP_READ_RANGE, slot, 0, 0,
				     0, count, NULL, vals);
}

/**
 * rdlock_proto_op() - one remote operation on the ticket's lock word
 * @cfg: the lockspace's policy (whose stats count the operation).
 * @t: the ticket; counts the operation.
 * @op: the operation.
 * @arg0: first operand.
 * @arg1: second operand.
 * @value: the value the operation returned.
 *
 * Return: as rdlock_proto_op_at() on @t->slot.
 */
int rdlock_proto_op(const struct rdlock_proto_cfg *cfg,
		    struct rdlock_ticket *t, enum rdlock_xop op, u64 arg0,
		    u64 arg1, u64 *value)
{
	return rdlock_proto_op_at(cfg, t, t->slot, op, arg0, arg1, value);
}

/**
 * rdlock_proto_read() - READ a ticket's word, riding through blips
 * @cfg: the lockspace's policy.
 * @t: the ticket.
 * @val: the word.
 * @retry_us: back-off state of rdlock_proto_retry(), 0 at first; kept by
 *	the caller across the READs of one wait.
 * @deadline: jiffies, or 0 for none.
 *
 * A READ changes nothing: one that failed is tried again while
 * rdlock_proto_retry() says so, since the ticket (or the wait for a reset)
 * is still there.
 *
 * Return: 0; -ETIMEDOUT at @deadline or -EINTR on a fatal signal while
 * retrying; or the error of the last READ once retrying ends.
 */
int rdlock_proto_read(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_ticket *t, u64 *val,
		      unsigned int *retry_us, unsigned long deadline)
{
	int ret;

	for (;;) {
		ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, val);
		if (!ret) {
			*retry_us = 0;
			return 0;
		}
		if (!rdlock_proto_retry(cfg, t, ret, retry_us))
			return ret;
		if (deadline && time_after_eq(jiffies, deadline))
			return -ETIMEDOUT;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
}

/*
 * A CAS on the ticket's word that may take the lock, with the READ its
 * caller wants after the grant (@t->read_*) in the same operation: one
 * CAS_READ. @t->read_got tells whether the CAS swapped and every slot was
 * read. Return: 0 or the CAS's error, as rdlock_proto_op().
 */
static int rdlock_proto_cas_read(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t, u64 arg0, u64 arg1,
				 u64 *value)
{
	int ret;

	t->read_got = false;
	ret = rdlock_proto_range_at(cfg, t, RDLOCK_XOP_CAS_READ, t->slot, arg0,
				    arg1, t->read_slot, t->read_count, value,
				    t->read_vals);
	if (ret < 0)
		return ret;
	t->read_got = ret == t->read_count && *value == arg0;
	return 0;
}

/*
 * @op, sent again while it is refused before it was sent (-ENOTCONN: the
 * connection to the home is being made again after a blip) and the home
 * keeps the ticket's table. @take: it takes the ticket or the lock, so it
 * also ends, with -ENOTCONN, at @deadline (jiffies, 0: none) or on a fatal
 * signal, and a CAS on the ticket's slot carries the ticket's READ.
 */
static int rdlock_proto_op_resent(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t, u32 slot,
				  enum rdlock_xop op, u64 arg0, u64 arg1,
				  u64 *value, bool take,
				  unsigned long deadline)
{
	unsigned int backoff_us = 0;
	int ret;

	for (;;) {
		if (take && op == RDLOCK_XOP_CAS && slot == t->slot &&
		    t->read_count)
			ret = rdlock_proto_cas_read(cfg, t, arg0, arg1, value);
		else
			ret = rdlock_proto_op_at(cfg, t, slot, op, arg0, arg1,
						 value);
		if (ret != -ENOTCONN)
			return ret;
		/* A TRY (a deadline passed) costs one operation, no sleep. */
		if (take && ((deadline && time_after_eq(jiffies, deadline)) ||
			     fatal_signal_pending(current)))
			return ret;
		if (!rdlock_proto_retry(cfg, t, ret, &backoff_us))
			return ret;
	}
}

/**
 * rdlock_proto_op_must() - an operation that must happen, as rdlock_proto_op()
 * @cfg: the lockspace's policy.
 * @t: the ticket.
 * @op: the operation.
 * @arg0: first operand.
 * @arg1: second operand.
 * @value: the value the operation returned.
 *
 * For what ends a ticket's life (a release, a withdraw, a reset): one
 * refused before it was sent (-ENOTCONN: the connection to the home is
 * being made again after a blip) is tried again while the home keeps the
 * ticket's table, instead of leaving the ticket in the word. An operation
 * whose connection failed after it was sent is sent again by the
 * two-sided transport; what still fails may or may not have been applied:
 * that error is returned.
 *
 * Return: as rdlock_proto_op().
 */
int rdlock_proto_op_must(const struct rdlock_proto_cfg *cfg,
			 struct rdlock_ticket *t, enum rdlock_xop op, u64 arg0,
			 u64 arg1, u64 *value)
{
	return rdlock_proto_op_resent(cfg, t, t->slot, op, arg0, arg1, value,
				      false, 0);
}

/**
 * rdlock_proto_op_at_must() - rdlock_proto_op_must() on another slot
 * @cfg: the lockspace's policy.
 * @t: the ticket.
 * @slot: as for rdlock_proto_op_at().
 * @op: the operation.
 * @arg0: first operand.
 * @arg1: second operand.
 * @value: the value the operation returned.
 *
 * Return: as rdlock_proto_op_must().
 */
int rdlock_proto_op_at_must(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, u32 slot,
			    enum rdlock_xop op, u64 arg0, u64 arg1, u64 *value)
{
	return rdlock_proto_op_resent(cfg, t, slot, op, arg0, arg1, value,
				      false, 0);
}

/**
 * rdlock_proto_faa_read_must() - a FAA on the ticket's word and a READ after it
 * @cfg: the lockspace's policy.
 * @t: the ticket.
 * @arg0: added to @t->slot.
 * @rslot: the first slot read after the FAA.
 * @count: slots read, 1 to %RDLOCK_XPORT_FAA_READ_MAX.
 * @value: the value the FAA returned.
 * @vals: the slots read.
 *
 * A FAA that must happen, as rdlock_proto_op_must(), with the READ of
 * what the caller will need next posted with it: one round trip.
 *
 * Return: the slots read (fewer than @count when the READ failed after
 * the FAA was done: @value is valid), or an error as rdlock_proto_op_must().
 */
int rdlock_proto_faa_read_must(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, u64 arg0, u32 rslot,
			       u32 count, u64 *value, u64 *vals)
{
	unsigned int backoff_us = 0;
	int ret;

	for (;;) {
		ret = rdlock_proto_range_at(cfg, t, RDLOCK_XOP_FAA_READ,
					    t->slot, arg0, 0, rslot, count,
					    value, vals);
		if (ret != -ENOTCONN ||
		    !rdlock_proto_retry(cfg, t, ret, &backoff_us))
			return ret;
	}
}

/**
 * rdlock_proto_op_take() - an operation that takes a ticket or a lock
 * @cfg: the lockspace's policy.
 * @t: the ticket.
 * @op: the operation.
 * @arg0: first operand.
 * @arg1: second operand.
 * @value: the value the operation returned.
 * @deadline: the acquisition's, in jiffies; 0: none.
 *
 * An acquisition waits through a connection blip as it waits for the
 * lock: refused unsent (-ENOTCONN), the operation is tried again while the
 * home keeps the ticket's table, until @deadline or a fatal signal. A file
 * system then sees a blip as a slow grant, not as a failed lock. A CAS
 * with @t->read_count slots to read is a CAS_READ (rdlock_proto_cas_read()).
 *
 * Return: as rdlock_proto_op(); -ENOTCONN: nothing was sent by @deadline.
 */
int rdlock_proto_op_take(const struct rdlock_proto_cfg *cfg,
			 struct rdlock_ticket *t, enum rdlock_xop op, u64 arg0,
			 u64 arg1, u64 *value, unsigned long deadline)
{
	return rdlock_proto_op_resent(cfg, t, t->slot, op, arg0, arg1, value,
				      true, deadline);
}

const char *const rdlock_ticket_state_names[RDLOCK_TICKET_NR] = {
	[RDLOCK_TICKET_NEW]		= "new",
	[RDLOCK_TICKET_ISSUED]		= "issued",
	[RDLOCK_TICKET_WAITING]		= "waiting",
	[RDLOCK_TICKET_GRANTED]		= "granted",
	[RDLOCK_TICKET_ABANDONED]	= "abandoned",
	[RDLOCK_TICKET_RELEASING]	= "releasing",
	[RDLOCK_TICKET_DONE]		= "done",
	[RDLOCK_TICKET_REVOKED]		= "revoked",
	[RDLOCK_TICKET_LOST]		= "lost",
	[RDLOCK_TICKET_ORPHANED]	= "orphaned",
};
EXPORT_SYMBOL_NS_GPL(rdlock_ticket_state_names, RDLOCK_INTERNAL);

#define RDLOCK_TICKET_ENDS	(BIT(RDLOCK_TICKET_DONE) |		\
				 BIT(RDLOCK_TICKET_REVOKED) |		\
				 BIT(RDLOCK_TICKET_LOST) |		\
				 BIT(RDLOCK_TICKET_ORPHANED))

/*
 * The ticket life: the states each state may move to. A withdrawn or
 * aborted ticket (over-limit bakery word, CQL reset) is issued again.
 */
static const u16 rdlock_ticket_moves[RDLOCK_TICKET_NR] = {
	[RDLOCK_TICKET_NEW]	  = BIT(RDLOCK_TICKET_ISSUED) |
				    RDLOCK_TICKET_ENDS,
	[RDLOCK_TICKET_ISSUED]	  = BIT(RDLOCK_TICKET_ISSUED) |
				    BIT(RDLOCK_TICKET_WAITING) |
				    BIT(RDLOCK_TICKET_GRANTED) |
				    RDLOCK_TICKET_ENDS,
	[RDLOCK_TICKET_WAITING]	  = BIT(RDLOCK_TICKET_ISSUED) |
				    BIT(RDLOCK_TICKET_GRANTED) |
				    BIT(RDLOCK_TICKET_ABANDONED) |
				    RDLOCK_TICKET_ENDS,
	[RDLOCK_TICKET_ABANDONED] = BIT(RDLOCK_TICKET_GRANTED) |
				    RDLOCK_TICKET_ENDS,
	[RDLOCK_TICKET_GRANTED]	  = BIT(RDLOCK_TICKET_RELEASING) |
				    BIT(RDLOCK_TICKET_REVOKED),
	[RDLOCK_TICKET_RELEASING] = RDLOCK_TICKET_ENDS,
};

/**
 * rdlock_ticket_to() - move a ticket to its next state
 * @cfg: the lockspace's policy (whose stats count the state).
 * @t: the ticket.
 * @to: the new state.
 *
 * The one place a ticket's state changes. A move the ticket life does not
 * allow is a protocol bug: counted in ticket_bad_moves and logged, the
 * state is taken anyway so that the ticket still ends.
 */
void rdlock_ticket_to(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_ticket *t, enum rdlock_ticket_state to)
{
	if (WARN_ON_ONCE(to >= RDLOCK_TICKET_NR))
		return;
	if (!(rdlock_ticket_moves[t->state] & BIT(to))) {
		rdlock_proto_count(cfg, ticket_bad_moves);
		pr_err_ratelimited("node %u slot %u: ticket moved from %s to %s\n",
				   t->node, t->slot,
				   rdlock_ticket_state_names[t->state],
				   rdlock_ticket_state_names[to]);
	}
	t->state = to;
	__rdlock_proto_count(cfg, offsetof(struct rdlock_proto_stats, tickets) +
			     to * sizeof(atomic64_t));
}
EXPORT_SYMBOL_NS_GPL(rdlock_ticket_to, RDLOCK_INTERNAL);

/**
 * rdlock_ticket_final() - has a ticket ended
 * @t: the ticket.
 *
 * Return: true in a final state, or still new (never taken).
 */
bool rdlock_ticket_final(const struct rdlock_ticket *t)
{
	return t->state == RDLOCK_TICKET_NEW ||
	       (RDLOCK_TICKET_ENDS & BIT(t->state));
}
EXPORT_SYMBOL_NS_GPL(rdlock_ticket_final, RDLOCK_INTERNAL);

/**
 * rdlock_ticket_failed() - end a ticket whose operation on the word failed
 * @cfg: the lockspace's policy.
 * @t: the ticket, in the word; an operation that withdraws, releases or
 *	queues it failed (rdlock_proto_op_must()).
 * @ret: its error. -ESTALE, or -ENOTCONN (a must-operation stops sending
 *	again only once the table is gone): lost with the table. Anything
 *	else: the outcome is unknown (orphaned).
 */
void rdlock_ticket_failed(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t, int ret)
{
	if (ret == -ESTALE || ret == -ENOTCONN) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_LOST);
		return;
	}
	pr_warn_ratelimited("node %u slot %u: an operation of a %s ticket failed after it was sent (%d): the lock may stay held\n",
			    t->node, t->slot,
			    rdlock_ticket_state_names[t->state], ret);
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ORPHANED);
}
EXPORT_SYMBOL_NS_GPL(rdlock_ticket_failed, RDLOCK_INTERNAL);

/**
 * rdlock_proto_outcome_unknown() - may a failed operation have been done
 * @ret: the error of an operation that changes a word.
 *
 * Return: false for 0, -ESTALE (the table is gone), -ENOTCONN, -EINVAL
 * and -ENOENT (refused before it was sent); true for any other error:
 * it failed after it was sent.
 */
bool rdlock_proto_outcome_unknown(int ret)
{
	return ret && ret != -ESTALE && ret != -ENOTCONN && ret != -EINVAL &&
	       ret != -ENOENT;
}

/**
 * rdlock_ticket_take_failed() - end a ticket whose taking operation failed
 * @cfg: the lockspace's policy.
 * @t: the ticket, issued.
 * @ret: the error of rdlock_proto_op_take(): -ENOTCONN (nothing sent by
 *	the deadline), -EINVAL or -ENOENT (refused before it was sent): the
 *	word never held it; else as rdlock_ticket_failed().
 */
void rdlock_ticket_take_failed(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, int ret)
{
	if (ret != -ESTALE && !rdlock_proto_outcome_unknown(ret))
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	else
		rdlock_ticket_failed(cfg, t, ret);
}
EXPORT_SYMBOL_NS_GPL(rdlock_ticket_take_failed, RDLOCK_INTERNAL);

/**
 * rdlock_proto_self() - the node the caller runs on
 * @cfg: the lockspace's policy (a simulated node's, or the real one).
 *
 * Return: the node's id.
 */
u32 rdlock_proto_self(const struct rdlock_proto_cfg *cfg)
{
	return cfg->xport ? cfg->xport->self(cfg->xport_priv) :
			    rdlock_xport_self();
}

/**
 * rdlock_proto_participant() - may @node use the lockspace's locks
 * @cfg: the lockspace's policy.
 * @node: a node id.
 *
 * The nodes a CQL reset signals and a bakery census asks: this one and
 * every configured peer; in a simulation, 0 .. @cfg->nodes - 1.
 *
 * Return: true if @node is one.
 */
bool rdlock_proto_participant(const struct rdlock_proto_cfg *cfg, u32 node)
{
	if (cfg->xport)
		return node < (cfg->nodes ?: 1);
	return node == rdlock_xport_self() || rdlock_xport_node_configured(node);
}

/**
 * rdlock_proto_node_down() - is @node declared down
 * @cfg: the lockspace's policy.
 * @node: a node id.
 *
 * Declared down here: cut off this node's table by rdlock_ls_node_down()
 * (which the cluster engine runs only after fencing the node, with
 * membership=dlm, or the administrator after making sure it is dead), or
 * the node declared this one down (recovery.rst). A node that does not
 * answer is not down until then: it may hold locks behind a partition,
 * so a protocol may not give up waiting for it.
 *
 * Return: true if @node is declared down.
 */
bool rdlock_proto_node_down(const struct rdlock_proto_cfg *cfg, u32 node)
{
	const struct rdlock_proto_xport *xport = cfg->xport;

	if (xport)
		return xport->node_down && xport->node_down(cfg->xport_priv,
							    node);
	/* A node back with a new table takes part again. */
	return rdlock_xport_node_cut(node);
}

/*
 * Per node: 1 + the cluster epoch in which its release began here, and
 * the incarnation of its table then (a node may return and fail again).
 */
static u64 rdlock_proto_released[RDLOCK_MAX_NODES];
static u64 rdlock_proto_released_table[RDLOCK_MAX_NODES];

/**
 * rdlock_proto_node_released() - this node begins releasing @node's locks
 * @node: a node declared down here, past the survivors' barrier.
 *
 * Called by rdlock_ls_node_down() once every survivor has cut @node off
 * and told its users (the barrier), before the protocols' forget_node.
 */
void rdlock_proto_node_released(u32 node)
{
	if (node >= RDLOCK_MAX_NODES)
		return;
	WRITE_ONCE(rdlock_proto_released_table[node],
		   rdlock_xport_node_incarnation(node));
	WRITE_ONCE(rdlock_proto_released[node], (u64)rdlock_xport_epoch() + 1);
}

/**
 * rdlock_proto_node_gone() - may @node's tickets be counted as nobody's
 * @cfg: the lockspace's policy.
 * @node: a node id.
 *
 * True once this node declared @node down itself and passed the
 * survivors' barrier for it (rdlock_proto_node_released()): every
 * survivor has cut it off, so nothing of it can still land in any table;
 * and once its declaration is done here (or was, by the survivors, before
 * this node's table was made). Only for the table of it that was declared
 * down: a node back with a new one takes part again. Not for a node that
 * is merely unreachable, and not for one that
 * declared this node down (this node is the one cut off then). In a
 * simulation: declared down.
 *
 * Return: true if @node's tickets are nobody's.
 */
bool rdlock_proto_node_gone(const struct rdlock_proto_cfg *cfg, u32 node)
{
	if (cfg->xport)
		return rdlock_proto_node_down(cfg, node);
	if (node >= RDLOCK_MAX_NODES || !rdlock_xport_node_cut(node))
		return false;
	/* Released here, or before this node's table was made. */
	if (rdlock_xport_node_released(node))
		return true;
	return READ_ONCE(rdlock_proto_released[node]) ==
	       (u64)rdlock_xport_epoch() + 1 &&
	       READ_ONCE(rdlock_proto_released_table[node]) ==
	       rdlock_xport_node_incarnation(node);
}

/**
 * rdlock_proto_table_alive() - does a ticket's home still have its table
 * @cfg: the lockspace's policy (a simulated transport has its own).
 * @t: the ticket, with the incarnation of the table it was taken in.
 *
 * A link being made again changes nothing: only a table the home replaced
 * (a restart), this node's cluster going down, or a peer declaring this
 * node down (its epoch ended: every lockspace here is lost) ends the
 * ticket's table.
 *
 * Return: true while it has; true for a ticket of no known table.
 */
bool rdlock_proto_table_alive(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t)
{
	if (cfg->xport) {
		if (!t->incarnation || !cfg->xport->incarnation)
			return true;
		return cfg->xport->incarnation(cfg->xport_priv, t->node) ==
		       t->incarnation;
	}
	if (!rdlock_xport_epoch_live())
		return false;
	return !t->incarnation ||
	       rdlock_xport_node_incarnation(t->node) == t->incarnation;
}

/**
 * rdlock_proto_send_msg() - a protocol's message, simulated or real
 * @xport: the simulated transport of the sending node; NULL: the real one.
 * @priv: its xport_priv.
 * @node: the destination.
 * @type: enum rdlock_proto_msg_type.
 * @payload: the message.
 * @len: its length.
 *
 * Context: as rdlock_xport_send_msg(): any but hardirq.
 * Return: as rdlock_xport_send_msg().
 */
int rdlock_proto_send_msg(const struct rdlock_proto_xport *xport, void *priv,
			  u32 node, unsigned int type, const void *payload,
			  size_t len)
{
	return xport ? xport->send_msg(priv, node, type, payload, len) :
		       rdlock_xport_send_msg(node, type, payload, len);
}

/**
 * rdlock_proto_word_key() - the hash key of one node's record of a word
 * @owner: the node: NULL for this one; a simulated node's xport_priv.
 * @home: the word's home node.
 * @slot: the word's slot.
 *
 * Return: the key, for the records of the CAS spinlock and the bakery.
 */
u32 rdlock_proto_word_key(const void *owner, u32 home, u32 slot)
{
	return hash_ptr(owner, 32) ^ home * 0x9e3779b1U ^ slot;
}

/**
 * rdlock_proto_now() - this node's clock, as the lock protocols see it
 * @cfg: the lockspace's policy (a simulated transport has its own clock).
 *
 * Return: the time.
 */
ktime_t rdlock_proto_now(const struct rdlock_proto_cfg *cfg)
{
	return cfg->xport ? cfg->xport->now(cfg->xport_priv) : ktime_get();
}

/**
 * rdlock_proto_xsleep() - a simulated transport's sleep
 * @cfg: the lockspace's policy.
 * @ns: how long.
 *
 * Every timed sleep of the protocols asks here first, so that a simulated
 * cluster (&rdlock_proto_xport.sleep) waits its own way; the real
 * transport's sleeps stay what they are.
 *
 * Return: true if the simulated transport slept; false: sleep for real.
 */
bool rdlock_proto_xsleep(const struct rdlock_proto_cfg *cfg, u64 ns)
{
	if (!cfg->xport || !cfg->xport->sleep)
		return false;
	cfg->xport->sleep(cfg->xport_priv, ns);
	return true;
}

/**
 * rdlock_proto_sleep() - sleep before polling again
 * @cfg: the lockspace's policy (rdlock_proto_xsleep()).
 * @ns: how long; capped at 100 ms so a deadline is not overslept much.
 * @deadline: jiffies, or 0 for none.
 *
 * Return: 0, -ETIMEDOUT once @deadline has passed, or -EINTR on a fatal
 * signal.
 */
int rdlock_proto_sleep(const struct rdlock_proto_cfg *cfg, u64 ns,
		       unsigned long deadline)
{
	ktime_t kt = ns_to_ktime(min_t(u64, ns, RDLOCK_SLEEP_MAX_NS));

	if (deadline && time_after_eq(jiffies, deadline))
		return -ETIMEDOUT;
	if (!rdlock_proto_xsleep(cfg, ktime_to_ns(kt))) {
		set_current_state(TASK_KILLABLE);
		schedule_hrtimeout_range(&kt, ktime_to_ns(kt) / 8,
					 HRTIMER_MODE_REL);
	}
	return fatal_signal_pending(current) ? -EINTR : 0;
}

/**
 * rdlock_proto_retry_delay() - may a failed READ of a ticket be tried again
 * @cfg: the lockspace's policy.
 * @t: the ticket, with the incarnation of the table it was taken in.
 * @err: the failed operation's error.
 * @backoff_us: back-off state, 0 at first; set to the back-off to wait
 *	before the next try when the answer is yes: doubled, up to a second.
 *
 * A READ changes nothing, so a ticket whose poll failed (a connection
 * blip, a timeout) keeps waiting for as long as its home keeps the table
 * it was taken in: giving it up would leave it in the word for good. Does
 * not sleep (for a step of rdlock_proto_finish_later()).
 *
 * Return: true to READ again; false once the table is gone (or unknown:
 * incarnation 0) or for -ESTALE, -EINVAL and -ENOENT.
 */
bool rdlock_proto_retry_delay(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t, int err,
			      unsigned int *backoff_us)
{
	u64 now;

	if (!t->incarnation || err == -ESTALE || err == -EINVAL ||
	    err == -ENOENT || (cfg->xport && !cfg->xport->incarnation))
		return false;
	/* The cluster went down: no table is kept. */
	if (!cfg->xport && !rdlock_xport_up())
		return false;
	/* Declared down, either way: unreachable until the cluster restarts. */
	if (!cfg->xport && rdlock_xport_node_fenced(t->node))
		return false;
	now = cfg->xport ? cfg->xport->incarnation(cfg->xport_priv, t->node) :
			   rdlock_xport_node_incarnation(t->node);
	if (now != t->incarnation)
		return false;
	*backoff_us = clamp_t(unsigned int, 2 * *backoff_us,
			      RDLOCK_BACKOFF_MIN_US, USEC_PER_SEC);
	return true;
}

/**
 * rdlock_proto_retry() - rdlock_proto_retry_delay(), then its back-off
 * @cfg: the lockspace's policy.
 * @t: the ticket.
 * @err: the failed operation's error.
 * @backoff_us: as for rdlock_proto_retry_delay().
 *
 * Sleeps the back-off before saying yes.
 *
 * Return: as rdlock_proto_retry_delay().
 */
bool rdlock_proto_retry(const struct rdlock_proto_cfg *cfg,
			const struct rdlock_ticket *t, int err,
			unsigned int *backoff_us)
{
	if (!rdlock_proto_retry_delay(cfg, t, err, backoff_us))
		return false;
	if (!rdlock_proto_xsleep(cfg, (u64)*backoff_us * NSEC_PER_USEC))
		msleep(*backoff_us / USEC_PER_MSEC ?: 1);
	return true;
}

/**
 * rdlock_proto_backoff_ns() - the next random exponential back-off
 * @backoff_us: the current ceiling; doubled up to 20 ms on every call.
 *
 * For a step that waits without sleeping (&rdlock_finish_step_t).
 *
 * Return: nanoseconds, at most the ceiling before the call.
 */
u64 rdlock_proto_backoff_ns(unsigned int *backoff_us)
{
	unsigned int us = max_t(unsigned int, *backoff_us,
				RDLOCK_BACKOFF_MIN_US);

	*backoff_us = min_t(unsigned int, 2 * us, RDLOCK_BACKOFF_MAX_US);
	return (u64)(get_random_u32() % us + 1) * NSEC_PER_USEC;
}

/**
 * rdlock_proto_backoff() - random exponential back-off (DSLR appendix A.3)
 * @cfg: the lockspace's policy (rdlock_proto_xsleep()).
 * @backoff_us: as for rdlock_proto_backoff_ns().
 * @deadline: as for rdlock_proto_sleep().
 *
 * Return: as rdlock_proto_sleep().
 */
int rdlock_proto_backoff(const struct rdlock_proto_cfg *cfg,
			 unsigned int *backoff_us, unsigned long deadline)
{
	return rdlock_proto_sleep(cfg, rdlock_proto_backoff_ns(backoff_us),
				  deadline);
}

struct rdlock_proto_work {
	struct work_struct work;
	struct rdlock_proto_cfg cfg;
	struct rdlock_ticket ticket;
	/* A posted release: its FAA's operand and the outcome. */
	u64 delta;
	int ret;
	/* A posted release whose protocol settles its failures itself. */
	const struct rdlock_post_owner *owner;
	void *owner_arg;
};

static void rdlock_proto_quota_free(struct kref *ref)
{
	kfree(container_of(ref, struct rdlock_proto_quota, ref));
}

/**
 * rdlock_proto_quota_alloc() - a bound on an owner's abandoned tickets
 * @max: at least 1; see &struct rdlock_proto_quota.
 * @strict: a /dev/rdlock user's: see &struct rdlock_proto_quota.
 *
 * Return: the quota with the owner's reference, or NULL.
 */
struct rdlock_proto_quota *rdlock_proto_quota_alloc(unsigned int max,
						    bool strict)
{
	struct rdlock_proto_quota *q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);

	if (q) {
		kref_init(&q->ref);
		q->max = max;
		q->strict = strict;
	}
	return q;
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_quota_alloc, RDLOCK_INTERNAL);

/**
 * rdlock_proto_quota_put() - drop the owner's reference
 * @q: the quota, or NULL; freed once no ticket of it is being finished.
 */
void rdlock_proto_quota_put(struct rdlock_proto_quota *q)
{
	if (q)
		kref_put(&q->ref, rdlock_proto_quota_free);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_quota_put, RDLOCK_INTERNAL);

/* The quota an acquisition of @t is counted in, or NULL. */
static struct rdlock_proto_quota *
rdlock_proto_quota_of(const struct rdlock_proto_cfg *cfg,
		      const struct rdlock_ticket *t)
{
	return t->quota ?: cfg->quota;
}

/**
 * rdlock_proto_admit() - may an acquisition that can be abandoned start
 * @cfg: the lockspace's policy.
 * @t: the acquisition's ticket, nothing taken yet; its quota (@t->quota,
 *	else @cfg->quota) counts it.
 * @deadline: the acquisition's; 0 (none): only a fatal signal can abandon
 *	it, once per task.
 *
 * A caller looping TRY or short timeouts leaves a ticket to finish in the
 * background at every failure. An acquisition with a deadline reserves its
 * place in the quota here, atomically, so that callers racing cannot pass
 * the bound together; it keeps the place until it ends
 * (rdlock_proto_admit_end()) or, abandoned, until its ticket is finished.
 * An acquisition without one takes no place (it could wait for ever for a
 * holder that needs a place): a strict quota refuses it only while its
 * owner's killed waiters' tickets fill it. Those are counted when killed,
 * not reserved, so they can pass the bound by the waiters killed at once
 * (each a task that was waiting).
 *
 * Return: 0, or -EBUSY while the quota is used up (nothing was taken).
 */
int rdlock_proto_admit(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, unsigned long deadline)
{
	struct rdlock_proto_quota *q = rdlock_proto_quota_of(cfg, t);
	int max, used;

	/* A place not given back (rdlock_proto_admit_end()) would leak. */
	WARN_ON_ONCE(t->reserved);
	t->reserved = NULL;
	if (!q)
		return 0;
	max = READ_ONCE(q->max);
	if (!deadline) {
		if (!q->strict || atomic_read(&q->killed) < max)
			return 0;
		goto refuse;
	}
	used = atomic_read(&q->used);
	do {
		if (used >= max)
			goto refuse;
	} while (!atomic_try_cmpxchg(&q->used, &used, used + 1));
	t->reserved = q;
	return 0;
refuse:
	atomic64_inc(&q->refused);
	return -EBUSY;
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_admit, RDLOCK_INTERNAL);

/**
 * rdlock_proto_admit_end() - an admitted acquisition ended here
 * @t: its ticket: granted, failed or refused, or abandoned (then
 *	rdlock_proto_finish_later() took its place already).
 */
void rdlock_proto_admit_end(struct rdlock_ticket *t)
{
	if (t->reserved) {
		atomic_dec(&t->reserved->used);
		t->reserved = NULL;
	}
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_admit_end, RDLOCK_INTERNAL);

/* A ticket ended in the background: one left unfinal is counted, loudly. */
static void rdlock_proto_ended(const struct rdlock_proto_cfg *cfg,
			       const struct rdlock_ticket *t)
{
	if (rdlock_ticket_final(t))
		return;
	rdlock_proto_count(cfg, tickets_unfinished);
	pr_err_ratelimited("node %u slot %u: background ticket left %s\n",
			   t->node, t->slot,
			   rdlock_ticket_state_names[t->state]);
}

/*
 * The copies background work keeps of @cfg and @t: without the stats (the
 * lockspace that owns them may be gone by the time it runs), with quota
 * @q, and a ticket that names no quota.
 */
static void rdlock_proto_copy(struct rdlock_proto_cfg *dcfg,
			      struct rdlock_ticket *dt,
			      const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t,
			      struct rdlock_proto_quota *q)
{
	*dcfg = *cfg;
	dcfg->stats = NULL;
	dcfg->quota = q;
	*dt = *t;
	dt->quota = NULL;
	dt->reserved = NULL;
}

/* What a finisher does, and where its steps run. */
enum rdlock_finish_kind {
	RDLOCK_FINISH_ABANDONED,	/* finishes an abandoned ticket */
	RDLOCK_FINISH_RESET,		/* a reset a ticket owes */
	RDLOCK_FINISH_KIND_NR,
};

/**
 * struct rdlock_finish_queue - the finishers of one kind
 * @wq: their steps run here.
 * @pool: they come from here: a kind's reserve is its own, so that
 *	resets never wait for abandoned tickets to end, nor these for
 *	resets.
 * @live: how many there are.
 * @parked: how many of them took a step and wait for the next one.
 */
struct rdlock_finish_queue {
	struct workqueue_struct *wq;
	mempool_t *pool;
	atomic_t live;
	atomic_t parked;
};

static struct rdlock_finish_queue rdlock_finish_queues[RDLOCK_FINISH_KIND_NR];
static DECLARE_WAIT_QUEUE_HEAD(rdlock_finish_done_wq);

/**
 * struct rdlock_finish - an abandoned ticket being finished, or a reset
 * @work: runs one step of @step; never two at once (a kick during a step
 *	queues the next one).
 * @timer: queues @work when the step's wait is over.
 * @cfg: the policy, copied without its stats; @cfg.quota is the quota
 *	whose count @charge has the ticket in until it ends, or NULL.
 * @ticket: the ticket, copied.
 * @step: the protocol's step.
 * @charge: see @cfg.
 * @q: its kind's queue and counts.
 * @parked: counted in @q's parked (only its work changes it).
 * @state: the protocol's state between steps, zeroed at first.
 */
struct rdlock_finish {
	struct work_struct work;
	struct hrtimer timer;
	struct rdlock_proto_cfg cfg;
	struct rdlock_ticket ticket;
	rdlock_finish_step_t step;
	atomic_t *charge;
	struct rdlock_finish_queue *q;
	bool parked;
	unsigned long state[RDLOCK_FINISH_STATE_SIZE / sizeof(unsigned long)];
};

static_assert(RDLOCK_FINISH_STATE_SIZE % sizeof(unsigned long) == 0);

static void rdlock_finish_end(struct rdlock_finish *f)
{
	struct rdlock_finish_queue *fq = f->q;
	struct rdlock_proto_quota *q = f->cfg.quota;

	rdlock_proto_ended(&f->cfg, &f->ticket);
	if (q) {
		atomic_dec(f->charge);
		kref_put(&q->ref, rdlock_proto_quota_free);
	}
	mempool_free(f, fq->pool);
	if (atomic_dec_and_test(&fq->live))
		wake_up_all(&rdlock_finish_done_wq);
}

/* Wait until no finisher of @kind is left. */
static void rdlock_finish_wait(enum rdlock_finish_kind kind)
{
	wait_event(rdlock_finish_done_wq,
		   !atomic_read(&rdlock_finish_queues[kind].live));
}

/*
 * One step, then the timer for the next one. A step that waits for a
 * grant, or for the holders a reset waits for, returns instead of
 * sleeping: no worker is held while a lock is held elsewhere, however
 * many tickets are abandoned or locks reset.
 */
static void rdlock_finish_work_fn(struct work_struct *work)
{
	struct rdlock_finish *f = container_of(work, struct rdlock_finish,
					       work);
	unsigned int nofs = memalloc_nofs_save();
	u64 ns;

	if (f->parked) {
		f->parked = false;
		atomic_dec(&f->q->parked);
	}
	ns = f->step(f, &f->cfg, &f->ticket, f->state);
	memalloc_nofs_restore(nofs);
	if (ns) {
		/* Before the timer: its run, or a kick's, counts it out. */
		f->parked = true;
		atomic_inc(&f->q->parked);
		hrtimer_start_range_ns(&f->timer, ns_to_ktime(ns), ns / 8,
				       HRTIMER_MODE_REL);
		return;
	}
	/*
	 * The last step took away every kick: what a timer or an earlier
	 * kick queued since is taken back before @f goes.
	 */
	hrtimer_cancel(&f->timer);
	cancel_work(&f->work);
	rdlock_finish_end(f);
}

static enum hrtimer_restart rdlock_finish_timer_fn(struct hrtimer *timer)
{
	struct rdlock_finish *f = container_of(timer, struct rdlock_finish,
					       timer);

	queue_work(f->q->wq, &f->work);
	return HRTIMER_NORESTART;
}

/**
 * rdlock_proto_finish_kick() - run a finisher's next step now
 * @f: the finisher, as its step was given it.
 *
 * For the event a step waits for (a grant's notification).
 *
 * Context: any; does not sleep. Only until the step that ends the ticket
 * has taken away what calls this.
 */
void rdlock_proto_finish_kick(struct rdlock_finish *f)
{
	rdlock_proto_count(&f->cfg, finish_kicks);
	queue_work(f->q->wq, &f->work);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_finish_kick, RDLOCK_INTERNAL);

static u32 rdlock_finish_count(enum rdlock_finish_kind kind, u32 *parked)
{
	struct rdlock_finish_queue *fq = &rdlock_finish_queues[kind];

	if (parked)
		*parked = max(atomic_read(&fq->parked), 0);
	return max(atomic_read(&fq->live), 0);
}

static int rdlock_finish_wake(struct wait_queue_entry *wake,
			      unsigned int mode, int sync, void *key)
{
	rdlock_proto_finish_kick(wake->private);
	return 0;
}

/**
 * rdlock_proto_finish_wake_init() - a wait-queue entry that kicks a finisher
 * @wake: the entry, to add to the queue of the event a step waits for.
 * @f: the finisher: a wake-up of that queue runs its next step
 *	(rdlock_proto_finish_kick()), as vhost turns a file's wake-up into
 *	work. The last step removes @wake.
 */
void rdlock_proto_finish_wake_init(struct wait_queue_entry *wake,
				   struct rdlock_finish *f)
{
	init_waitqueue_func_entry(wake, rdlock_finish_wake);
	wake->private = f;
}

/**
 * rdlock_proto_finishing() - how many tickets are being finished
 * @parked: if not NULL, set to how many of them took a step and wait for
 *	the next one, holding no worker: the rest are in a step or have not
 *	started (one queued by its timer or a kick counts until it runs).
 *
 * Return: the tickets being finished in the background.
 */
u32 rdlock_proto_finishing(u32 *parked)
{
	return rdlock_finish_count(RDLOCK_FINISH_ABANDONED, parked);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_finishing, RDLOCK_INTERNAL);

/**
 * rdlock_proto_resetting() - how many resets run in the background
 * @parked: as for rdlock_proto_finishing().
 *
 * Return: the resets queued by rdlock_proto_reset_later() not done yet.
 */
u32 rdlock_proto_resetting(u32 *parked)
{
	return rdlock_finish_count(RDLOCK_FINISH_RESET, parked);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_resetting, RDLOCK_INTERNAL);

/*
 * A finisher of @kind for a copy of @cfg (with quota @q, whose count
 * @charge has the ticket) and of @t; its first step runs at once.
 */
static void rdlock_finish_start(enum rdlock_finish_kind kind,
				const struct rdlock_proto_cfg *cfg,
				const struct rdlock_ticket *t,
				rdlock_finish_step_t step,
				struct rdlock_proto_quota *q, atomic_t *charge)
{
	struct rdlock_finish *f =
		mempool_alloc(rdlock_finish_queues[kind].pool, GFP_NOFS);

	memset(f, 0, sizeof(*f));
	rdlock_proto_copy(&f->cfg, &f->ticket, cfg, t, q);
	f->step = step;
	f->charge = charge;
	f->q = &rdlock_finish_queues[kind];
	if (q)
		kref_get(&q->ref);
	INIT_WORK(&f->work, rdlock_finish_work_fn);
	hrtimer_init(&f->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	f->timer.function = rdlock_finish_timer_fn;
	atomic_inc(&f->q->live);
	queue_work(f->q->wq, &f->work);
}

/**
 * rdlock_proto_finish_later() - complete an abandoned ticket in the background
 * @cfg: the policy, copied without its @stats: the lockspace that owns
 *	them may be gone by the time the worker runs.
 * @t: the ticket, copied. Its acquisition's quota counts it until it
 *	ends: in the place the acquisition reserved (@t->reserved, which
 *	goes with the ticket), or, for one without a deadline, among the
 *	killed waiters'.
 * @step: looks at the ticket once, acts, and says when to look again
 *	(&rdlock_finish_step_t); runs in a worker, first at once.
 *
 * Never fails: from a mempool, which waits for an element to come back
 * rather than lose the ticket.
 *
 * Context: process; may sleep for memory.
 */
void rdlock_proto_finish_later(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t,
			       rdlock_finish_step_t step)
{
	struct rdlock_proto_quota *q = t->reserved;
	atomic_t *charge = NULL;

	if (q) {
		charge = &q->used;
		t->reserved = NULL;
	} else {
		q = rdlock_proto_quota_of(cfg, t);
		if (q) {
			charge = &q->killed;
			atomic_inc(charge);
		}
	}
	rdlock_finish_start(RDLOCK_FINISH_ABANDONED, cfg, t, step, q, charge);
}

/**
 * rdlock_proto_reset_later() - reset a lock word in the background
 * @cfg: as for rdlock_proto_finish_later(); no quota is counted.
 * @t: the ticket that owes the reset, copied, in a final state.
 * @step: one step of the reset (&rdlock_finish_step_t): it returns while
 *	the holders it waits for hold, to be run again by its timer or by
 *	rdlock_proto_finish_kick(); runs in a worker, first at once.
 *
 * Never fails, as rdlock_proto_finish_later().
 *
 * Context: process; may sleep for memory.
 */
void rdlock_proto_reset_later(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t,
			      rdlock_finish_step_t step)
{
	rdlock_finish_start(RDLOCK_FINISH_RESET, cfg, t, step, NULL, NULL);
}

/* A posted operation starts counting: in @pin, if any, and in all. */
static void rdlock_proto_posted_get(atomic_t *pin)
{
	if (pin)
		atomic_inc(pin);
	atomic_inc(&rdlock_proto_posted);
}

/* A posted operation ended, or was never sent: it stops counting. */
static void rdlock_proto_posted_put(atomic_t *pin)
{
	if (pin)
		atomic_dec(pin);
	atomic_dec(&rdlock_proto_posted);
	wake_up_all(&rdlock_proto_posted_wq);
}

/* A posted release ended: let go of what it held, last of all its pin. */
static void rdlock_proto_posted_end(struct rdlock_proto_work *w)
{
	struct rdlock_proto_quota *q = w->cfg.quota;
	atomic_t *pin = w->ticket.pin;

	mempool_free(w, rdlock_proto_work_pool);
	if (q)
		kref_put(&q->ref, rdlock_proto_quota_free);
	rdlock_proto_posted_put(pin);
}

/*
 * A posted release whose operation failed, as the synchronous release
 * would have gone on: refused unsent (-ENOTCONN, the transport gave up
 * making the connection again), sent again while the home keeps the
 * ticket's table; else ended as rdlock_ticket_failed() says.
 */
static void rdlock_proto_posted_work(struct work_struct *work)
{
	struct rdlock_proto_work *w =
		container_of(work, struct rdlock_proto_work, work);
	unsigned int nofs = memalloc_nofs_save();
	int ret = w->ret;
	u64 old;

	if (w->owner) {
		w->owner->failed(&w->cfg, &w->ticket, w->owner_arg);
		goto out;
	}
	if (ret == -ENOTCONN)
		ret = rdlock_proto_op_must(&w->cfg, &w->ticket, RDLOCK_XOP_FAA,
					   w->delta, 0, &old);
	if (ret)
		rdlock_ticket_failed(&w->cfg, &w->ticket, ret);
	else
		rdlock_ticket_to(&w->cfg, &w->ticket, RDLOCK_TICKET_DONE);
out:
	memalloc_nofs_restore(nofs);
	rdlock_proto_posted_end(w);
}

/* The posted FAA's outcome: in softirq or a transport worker, never sleeps. */
static void rdlock_proto_posted_done(void *ctx, int ret, u64 value)
{
	struct rdlock_proto_work *w = ctx;

	if (w->owner)
		w->owner->completed(w->owner_arg, ret);
	if (!ret) {
		rdlock_ticket_to(&w->cfg, &w->ticket, RDLOCK_TICKET_DONE);
		rdlock_proto_posted_end(w);
		return;
	}
	/*
	 * Sent again, or ended, in a worker of the releases' queue: it may
	 * wait for a connection there, never behind a grant. No quota counts
	 * it: a lock is released once.
	 */
	rdlock_proto_count(&w->cfg, posted_failed);
	w->ret = ret;
	INIT_WORK(&w->work, rdlock_proto_posted_work);
	queue_work(rdlock_proto_release_wq, &w->work);
}

/**
 * rdlock_proto_post_release() - a release that is one FAA, posted
 * @cfg: the lockspace's policy; its @stats and the simulated @xport must
 *	stay until the release ended: @t->pin tells when.
 * @t: the ticket, releasing, with nothing owed after its FAA (no reset,
 *	no handover, no lease check); only if @t->post.
 * @delta: what the release adds to the word.
 *
 * The caller's path loses the release's round trip: the FAA is on the
 * queue pair to the home when this returns, so the home executes it
 * before this node's next operation on the lock (the next acquisition
 * here finds it released), and a copy of @t ends when its completion
 * comes: done, or on a failure the background worker ends it as the
 * synchronous release would have (rdlock_proto_posted_work()).
 *
 * Return: true if posted; false if nothing was sent (not allowed, no
 * transport for it, a refusal): the caller releases synchronously.
 */
bool rdlock_proto_post_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, u64 delta)
{
	return rdlock_proto_post_release_owned(cfg, t, delta, NULL, NULL);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_post_release, RDLOCK_INTERNAL);

/**
 * rdlock_proto_post_release_owned() - rdlock_proto_post_release(), settled
 *	by its protocol
 * @cfg: as for rdlock_proto_post_release().
 * @t: as for rdlock_proto_post_release().
 * @delta: as for rdlock_proto_post_release().
 * @owner: NULL: a failure is handled as rdlock_proto_post_release() says;
 *	else @owner->completed() sees every outcome (softirq: never sleeps)
 *	and @owner->failed() ends the ticket's copy after a failure, in
 *	process context, instead of sending the FAA again.
 * @arg: passed to @owner's calls.
 *
 * Return: as rdlock_proto_post_release(); when false, @owner is not called.
 */
bool rdlock_proto_post_release_owned(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t, u64 delta,
				     const struct rdlock_post_owner *owner,
				     void *arg)
{
	struct rdlock_proto_work *w;
	int ret;

	if (!t->post || !t->incarnation || (cfg->xport && !cfg->xport->post))
		return false;
	w = mempool_alloc(rdlock_proto_work_pool, GFP_NOFS);
	w->cfg = *cfg;
	w->ticket = *t;
	w->ticket.quota = NULL;
	w->ticket.reserved = NULL;
	w->delta = delta;
	w->ret = 0;
	w->owner = owner;
	w->owner_arg = arg;
	if (cfg->quota)
		kref_get(&cfg->quota->ref);
	rdlock_proto_posted_get(t->pin);
	if (cfg->xport)
		ret = cfg->xport->post(cfg->xport_priv, RDLOCK_XOP_FAA,
				       t->node, t->incarnation, t->slot, delta,
				       0, rdlock_proto_posted_done, w);
	else
		ret = rdlock_xport_post(RDLOCK_XOP_FAA, t->node,
					t->incarnation, t->slot, delta, 0,
					rdlock_proto_posted_done, w);
	if (ret) {
		/* Nothing sent, nothing counted: w is still ours. */
		rdlock_proto_posted_end(w);
		return false;
	}
	/* @w may be gone already: the caller's copy counts the operation. */
	rdlock_proto_count_op(cfg, t, RDLOCK_XOP_FAA);
	rdlock_proto_count(cfg, posted_releases);
	return true;
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_post_release_owned, RDLOCK_INTERNAL);

/* A posted WRITE ended (rdlock_proto_post_write()): never sleeps. */
static void rdlock_proto_write_done(void *ctx, int ret, u64 value)
{
	atomic_t *pin = ctx;

	if (ret) {
		rdlock_proto_count(NULL, posted_failed);
		pr_warn_ratelimited("a posted write failed (%d)\n", ret);
	}
	rdlock_proto_posted_put(pin);
}

/**
 * rdlock_proto_post_write() - a WRITE beside a lock word, posted
 * @node: the home node.
 * @incarnation: the home's table the caller means.
 * @slot: the slot.
 * @val: the value.
 * @pin: counts the write until it ended (rdlock_proto_wait_pin()).
 *
 * For a write whose failure loses nothing but itself, and after which
 * this node's next operation on @node must find it done (the value
 * block's state word before a release): the home executes the queue
 * pair's operations in order. A failure is counted (posted_failed) and
 * logged.
 *
 * Return: 0 if posted, else nothing was sent: the caller writes
 * synchronously.
 */
int rdlock_proto_post_write(u32 node, u64 incarnation, u32 slot, u64 val,
			    atomic_t *pin)
{
	int ret;

	rdlock_proto_posted_get(pin);
	ret = rdlock_xport_post(RDLOCK_XOP_WRITE, node, incarnation, slot, val,
				0, rdlock_proto_write_done, pin);
	if (ret)
		rdlock_proto_posted_put(pin);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_post_write, RDLOCK_INTERNAL);

/**
 * rdlock_proto_wait_pin() - wait for the posted releases a pin counts
 * @pin: &rdlock_ticket.pin of the tickets; bounded by the transport's
 *	timeout and resend window.
 */
void rdlock_proto_wait_pin(atomic_t *pin)
{
	wait_event(rdlock_proto_posted_wq, !atomic_read(pin));
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_wait_pin, RDLOCK_INTERNAL);

/**
 * rdlock_proto_flush() - wait for every ticket finished in the background
 *
 * For a simulated transport's owner, before the simulation goes away, and
 * for tests that count what background work did. Posted releases end
 * first (a failed one is finished in the background). A finished ticket's
 * release may queue the reset its ticket owes: resets are flushed after.
 */
void rdlock_proto_flush(void)
{
	/* A failed posted release ends on its queue, then stops counting. */
	wait_event(rdlock_proto_posted_wq, !atomic_read(&rdlock_proto_posted));
	rdlock_finish_wait(RDLOCK_FINISH_ABANDONED);
	rdlock_finish_wait(RDLOCK_FINISH_RESET);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_flush, RDLOCK_INTERNAL);

int rdlock_proto_init(void)
{
	int ret = 0;
	u32 i;

	rdlock_proto_work_pool =
		mempool_create_kmalloc_pool(RDLOCK_PROTO_WORK_RESERVE,
					    sizeof(struct rdlock_proto_work));
	for (i = 0; i < RDLOCK_FINISH_KIND_NR; i++)
		rdlock_finish_queues[i].pool =
			mempool_create_kmalloc_pool(RDLOCK_PROTO_WORK_RESERVE,
						    sizeof(struct rdlock_finish));
	rdlock_finish_queues[RDLOCK_FINISH_ABANDONED].wq =
		alloc_workqueue("rdlock_finish", WQ_UNBOUND | WQ_MEM_RECLAIM,
				0);
	rdlock_finish_queues[RDLOCK_FINISH_RESET].wq =
		alloc_workqueue("rdlock_reset", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	rdlock_proto_release_wq = alloc_workqueue("rdlock_release",
						  WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!rdlock_proto_work_pool ||
	    !rdlock_finish_queues[RDLOCK_FINISH_ABANDONED].pool ||
	    !rdlock_finish_queues[RDLOCK_FINISH_RESET].pool ||
	    !rdlock_finish_queues[RDLOCK_FINISH_ABANDONED].wq ||
	    !rdlock_finish_queues[RDLOCK_FINISH_RESET].wq ||
	    !rdlock_proto_release_wq) {
		rdlock_proto_exit();
		return -ENOMEM;
	}
	for (i = 0; !ret && i < ARRAY_SIZE(rdlock_protos); i++)
		if (rdlock_protos[i]->init)
			ret = rdlock_protos[i]->init();
	if (ret)
		rdlock_proto_exit();
	return ret;
}

/*
 * Background tickets and posted releases end once the transport fails
 * their operations.
 */
void rdlock_proto_exit(void)
{
	u32 i;

	wait_event(rdlock_proto_posted_wq, !atomic_read(&rdlock_proto_posted));
	/* A finished ticket's release may start a reset: resets after. */
	for (i = 0; i < RDLOCK_FINISH_KIND_NR; i++) {
		rdlock_finish_wait(i);
		if (rdlock_finish_queues[i].wq)
			destroy_workqueue(rdlock_finish_queues[i].wq);
		rdlock_finish_queues[i].wq = NULL;
	}
	if (rdlock_proto_release_wq)
		destroy_workqueue(rdlock_proto_release_wq);
	for (i = ARRAY_SIZE(rdlock_protos); i--;)
		if (rdlock_protos[i]->exit)
			rdlock_protos[i]->exit();
	mempool_destroy(rdlock_proto_work_pool);
	for (i = 0; i < RDLOCK_FINISH_KIND_NR; i++) {
		mempool_destroy(rdlock_finish_queues[i].pool);
		rdlock_finish_queues[i].pool = NULL;
	}
	rdlock_proto_release_wq = NULL;
	rdlock_proto_work_pool = NULL;
}
