// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API: callbacks. Each lock has a ring of the ASTs and BASTs
 * queued for it (rdlock_dlm_queue_cb()), delivered one at a time and in
 * order by its work item on rdlock_dlm_cb_wq (rdlock_dlm_cb_work()); a
 * BAST waits there for the end of the lock's hold time
 * (rdlock_dlm_set_hold()).
 */
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "dlm-pri.h"
#include "xport.h"

#define CREATE_TRACE_POINTS
#include "trace_dlm.h"

/* A lock asked for again this soon after its BAST bounces (hold time). */
#define RDLOCK_DLM_BOUNCE_MS	1000

/* ------------------------------------------------------------------ */
/* Callbacks                                                          */

/*
 * @lkb's hold time now, in ms. @hold_shift only grows while below the
 * maximum (at most 1000 ms), so it stays below 11. Caller holds dls->lock.
 */
unsigned int rdlock_dlm_hold_of(const struct rdlock_dlm_lkb *lkb)
{
	return min(READ_ONCE(lkb->dls->hold_ms) << lkb->hold_shift,
		   READ_ONCE(lkb->dls->hold_max_ms));
}

/*
 * A grant of @req raises @lkb's mode: adapt the lock's hold time, as
 * GFS2 adapts a glock's. The lock bounces when this node, asked to give
 * it up (a BAST) less than RDLOCK_DLM_BOUNCE_MS before, asks for it again
 * and waits for other nodes more than twice its hold time: the nodes
 * take turns at it, each wanting it again at once, and every hand-over
 * costs its holder a flush (OCFS2: a journal checkpoint); then the hold
 * time doubles, up to the lockspace's maximum, so that each turn does
 * more. A node that needs the lock once in a while (a directory's atime
 * after a listing) keeps the short hold however long it waited, and a
 * request that did not wait (nobody was in its way) brings the hold
 * back to the lockspace's. Caller holds dls->lock.
 */
static void rdlock_dlm_hold_adapt(struct rdlock_dlm_lkb *lkb,
				  const struct rdlock_dlm_req *req)
{
	unsigned int ms = rdlock_dlm_hold_of(lkb);

	lockdep_assert_held(&lkb->dls->lock);
	if (!test_bit(RDLOCK_DLM_REQ_NOTICED, &req->iflags)) {
		lkb->hold_shift = 0;
		return;
	}
	if (ms && ms < READ_ONCE(lkb->dls->hold_max_ms) && lkb->basted &&
	    ktime_ms_delta(req->start, lkb->basted) < RDLOCK_DLM_BOUNCE_MS &&
	    ktime_ms_delta(ktime_get(), req->start) > 2 * (s64)ms) {
		lkb->hold_shift++;
		rdlock_dlm_count(RDLOCK_DLM_ST_HOLD_RAISED, 1);
	}
}

/*
 * The BAST at the head of @lkb's callbacks, the only one queued, waits
 * for the end of the lock's hold time: run the work again then. Caller
 * holds dls->lock.
 */
static bool rdlock_dlm_hold_bast(struct rdlock_dlm_lkb *lkb)
{
	ktime_t until = ktime_add_ms(lkb->granted, rdlock_dlm_hold_of(lkb));
	ktime_t now = ktime_get();

	lockdep_assert_held(&lkb->dls->lock);
	if (!ktime_before(now, until))
		return false;
	if (!test_and_set_bit(RDLOCK_DLM_LKB_BAST_HELD, &lkb->iflags))
		rdlock_dlm_count(RDLOCK_DLM_ST_BAST_HELD, 1);
	queue_delayed_work(rdlock_dlm_cb_wq, &lkb->cb_work,
			   nsecs_to_jiffies(ktime_to_ns(ktime_sub(until, now))) +
			   1);
	return true;
}

void rdlock_dlm_cb_work(struct work_struct *work)
{
	struct rdlock_dlm_lkb *lkb = container_of(to_delayed_work(work),
						  struct rdlock_dlm_lkb,
						  cb_work);
	struct rdlock_dlm_ls *dls = lkb->dls;
	struct rdlock_dlm_cb cb;
	unsigned int hold_ms;
	unsigned long flags;
	int grmode;

	for (;;) {
		spin_lock_irqsave(&dls->lock, flags);
		if (!lkb->nr_cbs) {
			spin_unlock_irqrestore(&dls->lock, flags);
			return;
		}
		cb = lkb->cbs[lkb->cb_head];
		if (cb.type == RDLOCK_DLM_CB_BAST && lkb->nr_cbs == 1 &&
		    rdlock_dlm_hold_bast(lkb)) {
			spin_unlock_irqrestore(&dls->lock, flags);
			return;
		}
		lkb->cb_head = (lkb->cb_head + 1) % RDLOCK_DLM_CBS;
		lkb->nr_cbs--;
		if (cb.type == RDLOCK_DLM_CB_BAST) {
			lkb->basted = ktime_get();
			clear_bit(RDLOCK_DLM_LKB_BAST_HELD, &lkb->iflags);
		}
		grmode = lkb->grmode;
		hold_ms = rdlock_dlm_hold_of(lkb);
		spin_unlock_irqrestore(&dls->lock, flags);

		if (cb.type == RDLOCK_DLM_CB_BAST) {
			trace_rdlock_dlm_bast(dls->name, lkb->hash, lkb->lkid,
					      grmode, cb.val, hold_ms);
			lkb->bast(lkb->astarg, cb.val);
			continue;
		}
		trace_rdlock_dlm_ast(dls->name, lkb->hash, lkb->lkid, grmode,
				     cb.val, hold_ms);
		rdlock_dlm_count(RDLOCK_DLM_ST_NS_AST,
				 ktime_to_ns(ktime_sub(ktime_get(), cb.queued)));
		lkb->lksb->sb_status = cb.val;
		lkb->lksb->sb_flags = cb.sb_flags;
		if (cb.flags & RDLOCK_DLM_CBF_HOLD)
			lkb->granted = ktime_get();
		lkb->ast(lkb->astarg);
		if (cb.flags & RDLOCK_DLM_CBF_FINAL) {
			/*
			 * Queued last: nothing else refers to @lkb now but a
			 * run of this work that its queueing, while this one
			 * ran, may have left pending.
			 */
			cancel_delayed_work(&lkb->cb_work);
			kfree(lkb);
			rdlock_dlm_put(dls);
			return;
		}
	}
}

/*
 * Queue a callback; caller holds dls->lock. @cb_flags: RDLOCK_DLM_CBF_FINAL
 * for @lkb's last, RDLOCK_DLM_CBF_HOLD for an AST of a grant that raised
 * the mode.
 */
void rdlock_dlm_queue_cb(struct rdlock_dlm_lkb *lkb, u8 type, int val,
			 u8 sb_flags, u8 cb_flags)
{
	struct rdlock_dlm_cb *tail;

	lockdep_assert_held(&lkb->dls->lock);
	if (type == RDLOCK_DLM_CB_BAST) {
		if (!lkb->bast || lkb->state == RDLOCK_DLM_LKS_DEAD)
			return;
		tail = lkb->nr_cbs ? &lkb->cbs[(lkb->cb_head + lkb->nr_cbs - 1) %
					       RDLOCK_DLM_CBS] : NULL;
		/* Two BASTs in a row say nothing the stronger does not. */
		if (tail && tail->type == RDLOCK_DLM_CB_BAST) {
			tail->val = max(tail->val, val);
			return;
		}
	}
	/* At most one AST per request and BASTs coalesced: cannot fill. */
	if (WARN_ON_ONCE(lkb->nr_cbs == RDLOCK_DLM_CBS))
		return;
	lkb->cbs[(lkb->cb_head + lkb->nr_cbs) % RDLOCK_DLM_CBS] =
		(struct rdlock_dlm_cb){ .type = type, .val = val,
					.sb_flags = sb_flags, .flags = cb_flags,
					.queued = ktime_get() };
	lkb->nr_cbs++;
	if (cb_flags & RDLOCK_DLM_CBF_FINAL)
		rdlock_dlm_lkb_to(lkb, RDLOCK_DLM_LKS_DEAD);
	/* A BAST held back goes now, in order, before this AST. */
	mod_delayed_work(rdlock_dlm_cb_wq, &lkb->cb_work, 0);
}

/*
 * @lkb is granted a higher mode: the BASTs still queued for it were
 * owed to its old mode. Delivered before the grant's AST, they would end
 * its hold time at once (dlmglue gives back a lock granted with a BAST
 * pending as soon as its users are done): a node that gave a lock back
 * and took it again before the waiter it gave way to got it would hold
 * it for one operation and one journal flush. They go instead: the
 * waits they were for that are still known give the new mode its BASTs
 * after the AST (rdlock_dlm_bast_known()), held like any other; a wait
 * that is over needs none. Caller holds dls->lock.
 */
static void rdlock_dlm_drop_basts(struct rdlock_dlm_lkb *lkb)
{
	unsigned int i, n = 0;

	lockdep_assert_held(&lkb->dls->lock);
	for (i = 0; i < lkb->nr_cbs; i++) {
		struct rdlock_dlm_cb *cb = &lkb->cbs[(lkb->cb_head + i) %
						     RDLOCK_DLM_CBS];

		if (cb->type != RDLOCK_DLM_CB_BAST)
			lkb->cbs[(lkb->cb_head + n++) % RDLOCK_DLM_CBS] = *cb;
	}
	lkb->nr_cbs = n;
	clear_bit(RDLOCK_DLM_LKB_BAST_HELD, &lkb->iflags);
}

/* BASTs that @lkb, granted @mode now, owes to waiters already known. */
static void rdlock_dlm_bast_known(struct rdlock_dlm_lkb *lkb)
{
	struct rdlock_dlm_ls *dls = lkb->dls;
	u32 self = rdlock_xport_self();
	struct rdlock_dlm_notice *n;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(n, &dls->notices, node) {
		if (n->hash != lkb->res->hash ||
		    (n->src == self && n->lkid == lkb->lkid))
			continue;
		if (rdlock_dlm_conflict(n->mode, lkb->grmode))
			rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_BAST, n->mode, 0,
					    0);
	}
}

/*
 * @req of a lock that exists ended with @ret, the lock now at @grmode: its
 * AST. Only EX grants are held: the CAS lock does not queue, so holds of
 * PR grants that other nodes keep getting would keep an EX waiter out for
 * as long as they come (a directory's readers against the node that
 * updates its atime). Caller holds dls->lock.
 */
void rdlock_dlm_ast(struct rdlock_dlm_lkb *lkb,
		    const struct rdlock_dlm_req *req, int grmode, int ret)
{
	bool hold = grmode == RDLOCK_DLM_LOCK_EX && grmode > lkb->grmode;

	lockdep_assert_held(&lkb->dls->lock);
	if (hold)
		rdlock_dlm_hold_adapt(lkb, req);
	if (grmode > lkb->grmode)
		rdlock_dlm_drop_basts(lkb);
	rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, ret, ret ? 0 : req->sb_flags,
			    hold ? RDLOCK_DLM_CBF_HOLD : 0);
	lkb->grmode = grmode;
	if (!ret)
		rdlock_dlm_bast_known(lkb);
}
