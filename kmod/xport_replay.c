// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: exactly-once requests of the two-sided backend
 * (design.rst, "Exactly once").
 *
 * Requester: a request that changes a word takes one of our replay slots
 * to its home and a number, is sent again with both whenever its
 * connection fails before the answer arrived, and is sealed when its
 * window passes without one.
 * Home: the record of each peer's replay slots (replay.h decides), which
 * answers a copy from the record instead of applying it twice (the
 * late-request fault injection that tests the seal: xport_fault.c).
 *
 * Posting and completions are xport_io.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/atomic.h>

#include "xport-pri.h"

/* Numbers recorded requests, never 0 (design.rst, "Exactly once"). */
static atomic64_t rdlock_replay_gen;

/* ------------------------------------------------------------------ */
/* Records                                                            */

/* A new table answers nothing the old one did. */
void rdlock_replay_forget(void)
{
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		struct rdlock_replay *rp = &rdlock_cl.nodes[i].replay;

		spin_lock_bh(&rp->lock);
		memset(rp->ent, 0, sizeof(rp->ent));
		spin_unlock_bh(&rp->lock);
	}
}

/* ------------------------------------------------------------------ */
/* Requester                                                          */

/*
 * Requests that change a word, to a peer serving them with its CPU: the
 * home records each answer per replay slot, so the request can be sent
 * again when its connection fails before the answer arrives.
 */
bool rdlock_xreq_recorded(const struct rdlock_xreq *req)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	return (req->op == RDLOCK_XOP_WRITE || req->op == RDLOCK_XOP_FAA ||
		req->op == RDLOCK_XOP_CAS || rdlock_xop_reads_after(req->op)) &&
	       req->node < RDLOCK_MAX_NODES && req->node != cl->self &&
	       READ_ONCE(cl->backend) == RDLOCK_BACKEND_TWOSIDED;
}

static int rdlock_replay_slot_take(struct rdlock_replay *rp)
{
	unsigned long i;

	do {
		i = find_first_zero_bit(rp->busy, RDLOCK_REPLAY_SLOTS);
		if (i >= RDLOCK_REPLAY_SLOTS)
			return -EBUSY;
	} while (test_and_set_bit(i, rp->busy));
	return i;
}

/* Failures after which a recorded request is sent again. */
bool rdlock_xreq_resend(int ret)
{
	return ret == -ECONNRESET || ret == -EIO || ret == -ENOTCONN ||
	       ret == -EAGAIN || ret == -ETIMEDOUT;
}

/* Make @req, finished and out of flight, ready to be started again. */
static void rdlock_xreq_rearm(struct rdlock_xreq *req)
{
	if (req->conn) {
		rdlock_conn_put(req->conn);
		req->conn = NULL;
	}
	clear_bit(RDLOCK_XREQ_DONE, &req->flags);
	reinit_completion(&req->comp);
	req->status = 0;
	req->value = 0;
	req->nread = 0;
}

/* A recorded request's replay slot back to its home's pool. */
void rdlock_replay_slot_put(struct rdlock_xreq *req)
{
	struct rdlock_replay *rp = &rdlock_cl.nodes[req->node].replay;

	clear_bit(req->replay_slot, rp->busy);
	wake_up(&rp->wait);
}

/* Take a replay slot for @req and give it its number, waiting until @deadline. */
int rdlock_xreq_record(struct rdlock_xreq *req, unsigned long deadline)
{
	struct rdlock_replay *rp = &rdlock_cl.nodes[req->node].replay;
	int slot = -EBUSY;

	wait_event_timeout(rp->wait,
			   (slot = rdlock_replay_slot_take(rp)) >= 0,
			   rdlock_jiffies_left(deadline));
	if (slot < 0)
		return -ETIMEDOUT;
	req->replay_slot = slot;
	req->gen = atomic64_inc_return(&rdlock_replay_gen);
	return 0;
}

static int rdlock_xreq_seal(struct rdlock_xreq *req, int ret, u64 *value);

/* Until when a recorded request started now is sent again. */
static unsigned long rdlock_replay_window(void)
{
	return jiffies + msecs_to_jiffies(RDLOCK_REPLAY_WINDOW_FACTOR *
					  READ_ONCE(rdlock_op_timeout_ms));
}

/*
 * Send recorded @req until it is answered or may no longer be sent again;
 * @sent: it went out once already and ended with @ret (a posted request
 * that its completion hands to process context). Given up at @window
 * after it was sent: sealed (rdlock_xreq_seal()).
 */
int rdlock_xreq_send_recorded(struct rdlock_xreq *req, unsigned long deadline,
			      unsigned long window, bool sent, int ret,
			      u64 *value)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	unsigned int backoff_ms = 0;
	bool again = sent;

	for (;;) {
		if (!again) {
			ret = rdlock_xreq_start(req, sent ? window : deadline);
			if (!ret) {
				/* Copies go to the table the first one reached. */
				if (!req->incarnation)
					req->incarnation =
					le64_to_cpu(req->conn->peer.table_incarnation);
				sent = true;
				ret = rdlock_xreq_wait(req, deadline, window,
						       value);
			}
		}
		again = false;
		if (!sent || !rdlock_xreq_resend(ret) ||
		    !time_before(jiffies, window) || !rdlock_cl_up())
			break;
		rdlock_xreq_rearm(req);
		backoff_ms = clamp(2 * backoff_ms, 1U, 200U);
		msleep(backoff_ms);
		atomic64_inc(&cl->resent);
	}
	if (sent && rdlock_xreq_resend(ret) && !req->seal)
		ret = rdlock_xreq_seal(req, ret, value);
	return ret;
}

/*
 * A recorded request given up at its window may still be applied later
 * by a home that answers others (late in its queue): after the caller
 * judged the word without it, a lock would change under nobody. Ask the
 * home, with the request's own replay slot and number, what became of it,
 * for another window (design.rst, "Exactly once"). The answer is final.
 * Return: the outcome if it was applied; -ENOTCONN if it was not and
 * never will be (nothing happened, as for a request never sent); @ret,
 * still unknown, if the seal got no answer either.
 */
static int rdlock_xreq_seal(struct rdlock_xreq *req, int ret, u64 *value)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_xreq *s;
	unsigned long window;
	int seal = ret;

	/* A request of its own: @req may still be pending on its connection. */
	s = rdlock_cl_up() ?
	    rdlock_xreq_alloc(GFP_NOFS, RDLOCK_XOP_FAA, req->node, req->slot,
			      0, 0) : NULL;
	if (s) {
		s->incarnation = req->incarnation;
		s->replay_slot = req->replay_slot;
		s->gen = req->gen;
		s->seal = true;
		window = rdlock_replay_window();
		seal = rdlock_xreq_send_recorded(s, window, window, false, 0,
						 value);
		rdlock_xreq_put(s);
	}
	switch (seal) {
	case -ECANCELED:
		atomic64_inc(&cl->sealed_unapplied);
		return -ENOTCONN;
	case -ESTALE:
		return seal;
	default:
		if (seal != -EALREADY && !rdlock_xreq_resend(seal)) {
			atomic64_inc(&cl->sealed_applied);
			return seal;
		}
		/* No answer: the outcome stays unknown. */
		atomic64_inc(&cl->unknown_outcomes);
		return ret;
	}
}

/*
 * Exactly once: @req takes one of our replay slots to its home and a new
 * number; whenever its connection fails before the answer arrived, it is
 * sent again with the same slot and number to the same table, and the home
 * answers a copy of a request it applied from its record. Until the window
 * closes: the connection manager reconnects within seconds, and a home
 * that restarted has a table for which the outcome no longer matters.
 */
int rdlock_xreq_exec_recorded(struct rdlock_xreq *req, unsigned long deadline,
			      u64 *value)
{
	u64 asked = req->incarnation;
	unsigned long window;
	int ret;

	window = rdlock_replay_window();
	ret = rdlock_xreq_record(req, deadline);
	if (ret)
		return ret;
	ret = rdlock_xreq_send_recorded(req, deadline, window, false, 0,
					value);
	rdlock_replay_slot_put(req);
	/* The caller named no table: to it, the one it reached just failed. */
	if (ret == -ESTALE && !asked)
		ret = -ECONNRESET;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Home                                                               */

/*
 * Apply a peer's request unless it is a copy of one applied already: then
 * answer from the record (design.rst, "Exactly once"). @words as
 * rdlock_table_exec()'s.
 */
int rdlock_serve_recorded(struct rdlock_conn *conn,
			  const struct rdlock_wire_msg *msg, u64 *words,
			  bool *applied)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_replay *rp = &cl->nodes[conn->node].replay;
	u64 requester = le64_to_cpu(conn->peer.table_incarnation);
	u32 replay_slot = le32_to_cpu(msg->req.replay_slot);
	u64 gen = le64_to_cpu(msg->req.gen);
	enum rdlock_xop op = le32_to_cpu(msg->req.op);
	u32 slot = le32_to_cpu(msg->req.slot);
	u32 rslot = le32_to_cpu(msg->req.rslot);
	u32 count = le32_to_cpu(msg->req.count);
	u64 arg0 = le64_to_cpu(msg->req.arg0);
	u64 arg1 = le64_to_cpu(msg->req.arg1);
	struct rdlock_replay_entry *e;
	int ret;

	*applied = false;
	if (!gen)
		return rdlock_table_exec(op, slot, arg0, arg1, rslot, count,
					 words);
	if (replay_slot >= RDLOCK_REPLAY_SLOTS)
		return -EINVAL;
	e = &rp->ent[replay_slot];
	spin_lock_bh(&rp->lock);
	if (op == RDLOCK_WIRE_OP_SEAL) {
		rdlock_replay_seal(e, requester, gen, &ret, &words[0]);
		spin_unlock_bh(&rp->lock);
		atomic64_inc(&cl->seals_served);
		return ret;
	}
	switch (rdlock_replay_check(e, requester, gen)) {
	case RDLOCK_REPLAY_ANSWER:
		ret = e->status;
		words[0] = e->value;
		atomic64_inc(&cl->replayed);
		/*
		 * The record keeps the word-changing part; an X_READ's
		 * slots are read again, after its atomic as the first time.
		 */
		if (!ret && rdlock_xop_reads_after(op)) {
			if (rdlock_range_ok(rslot, count,
					    rdlock_xop_read_after_max(op),
					    READ_ONCE(cl->table.slots)))
				ret = rdlock_table_read(rslot, count,
							words + 1);
			else
				ret = -EINVAL;
		}
		break;
	case RDLOCK_REPLAY_STALE:
		ret = -EALREADY;
		atomic64_inc(&cl->stale_requests);
		break;
	default:
		ret = rdlock_table_exec(op, slot, arg0, arg1, rslot, count,
					words);
		e->requester = requester;
		e->gen = gen;
		e->status = ret;
		e->value = words[0];
		*applied = true;
	}
	spin_unlock_bh(&rp->lock);
	return ret;
}

void rdlock_replay_init(void)
{
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		spin_lock_init(&rdlock_cl.nodes[i].replay.lock);
		init_waitqueue_head(&rdlock_cl.nodes[i].replay.wait);
	}
}
