/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CQL lock's internals, shared by its files only: proto_cql.c (the
 * flat protocol, the registry of waiters, the admission gate, the
 * messages), proto_cql_reset.c (resets) and proto_cql_hier.c
 * (hierarchical locking). The lockspaces and the tests see the lock
 * through proto.h (rdlock_proto_cql, struct rdlock_cql_waiters).
 */
#ifndef _RDLOCK_PROTO_CQL_PRI_H
#define _RDLOCK_PROTO_CQL_PRI_H

#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/wait.h>

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
/* A reset that need not check the lock's reset count first. */
#define RDLOCK_CQL_ANY_GEN		U32_MAX

/* What a message is (&struct rdlock_cql_msg.kind): values on the wire. */
enum rdlock_cql_msg_kind {
	RDLOCK_CQL_NOTIFY	= 0,	/* the lock is the waiter's */
	RDLOCK_CQL_RESET	= 1,	/* step 2 of a reset: abort, answer when out */
	RDLOCK_CQL_ACK		= 2,	/* the answer to a reset signal */
	RDLOCK_CQL_NACK		= 4,	/* a reset signal of an older count */
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

/*
 * What a waiter's liveness checks saw: the header and since when it has
 * not changed; the cause of the reset it asks for.
 */
struct rdlock_cql_watch {
	u64 last;
	unsigned long since;
	enum rdlock_cql_reset_cause cause;
};

/* proto_cql.c: the registry of waiters, the gate, messages, the flat lock */
u32 rdlock_cql_gate_key(u32 home, u32 slot);
struct rdlock_cql_gate *
rdlock_cql_gate_lookup(struct rdlock_cql_waiters *ws, u32 home, u32 slot,
		       u64 incarnation);
struct rdlock_cql_gate *
rdlock_cql_gate_find(struct rdlock_cql_waiters *ws,
		     const struct rdlock_ticket *t);
void rdlock_cql_gate_add(struct rdlock_cql_waiters *ws,
			 struct rdlock_cql_gate *g, u32 home, u32 slot,
			 u64 incarnation);
void rdlock_cql_answer(struct rdlock_cql_waiters *ws, u8 kind, u32 to,
		       u32 seq, u32 home, u32 slot, u64 incarnation, u32 gen);
struct rdlock_cql_waiters *
rdlock_cql_waiters_of(const struct rdlock_proto_cfg *cfg);
int rdlock_cql_layout(const struct rdlock_proto_cfg *cfg,
		      struct cql_layout *l);
enum cql_mode rdlock_cql_mode(const struct rdlock_ticket *t);
u32 rdlock_cql_entry_slot(const struct rdlock_ticket *t,
			  const struct cql_layout *l, u32 pos);
void __rdlock_cql_gate_leave(struct rdlock_cql_waiters *ws,
			     const struct rdlock_ticket *t, bool stay);
void rdlock_cql_lap_block(struct rdlock_cql_waiters *ws,
			  const struct rdlock_ticket *t, bool on);
bool rdlock_cql_gate_back(struct rdlock_cql_waiters *ws,
			  const struct rdlock_ticket *t,
			  struct rdlock_cql_waiter *w, bool in);
u32 rdlock_cql_gen_locked(struct rdlock_cql_waiters *ws,
			  const struct rdlock_ticket *t);
u32 rdlock_cql_gen(struct rdlock_cql_waiters *ws,
		   const struct rdlock_ticket *t);
bool rdlock_cql_lock_lost(const struct rdlock_proto_cfg *cfg,
			  const struct rdlock_ticket *t);
int rdlock_cql_send(const struct rdlock_proto_cfg *cfg, u32 node,
		    const struct rdlock_cql_msg *m);
int rdlock_cql_read(const struct rdlock_proto_cfg *cfg,
		    struct rdlock_ticket *t, u32 slot, u64 *val);
void rdlock_cql_refetch_pause(const struct rdlock_proto_cfg *cfg,
			      unsigned int *us);
int rdlock_cql_check_args(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t, struct cql_layout *l);
int __rdlock_cql_acquire(const struct rdlock_proto_cfg *cfg,
			 struct rdlock_ticket *t, unsigned long deadline,
			 const u32 *stamp);
void __rdlock_cql_release(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t);

/* proto_cql_reset.c */
void rdlock_cql_on_reset(struct rdlock_cql_waiters *ws, u32 src,
			 const struct rdlock_cql_msg *m);
void rdlock_cql_on_answer(struct rdlock_cql_waiters *ws, u32 src,
			  const struct rdlock_cql_msg *m);
bool rdlock_cql_stuck_reset(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_cql_waiters *ws,
			    struct rdlock_ticket *t,
			    const struct cql_layout *l,
			    struct rdlock_cql_waiter *w,
			    const struct rdlock_cql_watch *wt);
void rdlock_cql_reset_later(const struct rdlock_proto_cfg *cfg,
			    const struct rdlock_ticket *t,
			    enum rdlock_cql_reset_cause cause, u64 h, u32 gen);
unsigned long rdlock_cql_stuck_jiffies(const struct rdlock_proto_cfg *cfg);
unsigned long rdlock_cql_takeover_jiffies(const struct rdlock_proto_cfg *cfg);
bool rdlock_cql_stuck(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_ticket *t, const struct cql_layout *l,
		      u64 h, struct rdlock_cql_watch *wt);
int rdlock_cql_forget_node(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t, u32 dead,
			   int (*before_excl)(void *arg), void *arg);
int rdlock_cql_await_reset(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t, const struct cql_layout *l,
			   unsigned long deadline);
void rdlock_cql_reset_idle(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t,
			   const struct cql_layout *l, u64 post);

/* proto_cql_hier.c */
int rdlock_cql_hier_acquire(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, unsigned long deadline);
void rdlock_cql_hier_release(const struct rdlock_proto_cfg *cfg,
			     struct rdlock_ticket *t);

#endif /* _RDLOCK_PROTO_CQL_PRI_H */
