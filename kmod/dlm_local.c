// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API: LOCAL early grants. A new lock asked for with
 * RDLOCK_DLM_LKF_LOCAL is granted at once (rdlock_dlm_local_grant()) and
 * its lock words are taken later in the background
 * (rdlock_dlm_local_work()); a request that must wait for those takes
 * waits in rdlock_dlm_wait_local() (its work returns, and
 * rdlock_dlm_local_wake() queues it again), and an EX unlock's release
 * parked meanwhile
 * (rdlock_dlm_unlock_work()) goes in rdlock_dlm_release_work().
 * dlm-api.rst, "New resources (LOCAL)", has the details.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "dlm-pri.h"
#include "lockspace.h"

/*
 * How long a lock granted LOCAL may go without its lock words: a lock
 * unlocked sooner costs no operation at all (a file system's temporary
 * file), and an older one is taken in the background. Things that need
 * the words sooner take them at once (rdlock_dlm_local_force()). 0: take
 * them right after the grant.
 */
static unsigned int rdlock_dlm_local_defer_ms = 2000;
module_param_named(dlm_local_defer_ms, rdlock_dlm_local_defer_ms, uint, 0644);
MODULE_PARM_DESC(dlm_local_defer_ms,
		 "ms a LOCAL lock's lock words may wait to be taken (default: 2000; 0: at once; more counts as 60000)");
#define RDLOCK_DLM_LOCAL_DEFER_MS_MAX	60000U

/* rdlock_dlm_local_defer_ms, bounded, in jiffies. */
static unsigned long rdlock_dlm_local_defer(void)
{
	return msecs_to_jiffies(min(READ_ONCE(rdlock_dlm_local_defer_ms),
				    RDLOCK_DLM_LOCAL_DEFER_MS_MAX));
}

/* A LOCAL lock's take that failed tries again after this, doubling. */
#define RDLOCK_DLM_LOCAL_RETRY_MS_MIN	10
#define RDLOCK_DLM_LOCAL_RETRY_MS_MAX	1000

/* Start unpublished @lkb's take; caller holds dls->lock. */
static void rdlock_dlm_local_publish(struct rdlock_dlm_lkb *lkb)
{
	lockdep_assert_held(&lkb->dls->lock);
	list_del_init(&lkb->local_node);
	queue_work(rdlock_dlm_local_wq, &lkb->local_req->work);
	lkb->local_req = NULL;
	rdlock_dlm_lkb_to(lkb, RDLOCK_DLM_LKS_TAKING);
}

/*
 * Something waits for the LOCAL takes (a down-conversion from EX, a
 * request for words a parked release holds): start them all now, and
 * grant no lock early until none is left, or a stream of new ones could
 * keep the wait going. Caller holds dls->lock.
 */
void rdlock_dlm_local_force(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_lkb *lkb, *tmp;

	lockdep_assert_held(&dls->lock);
	if (!dls->local_takes)
		return;
	if (!dls->forcing)
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_FORCED, 1);
	dls->forcing = true;
	list_for_each_entry_safe(lkb, tmp, &dls->unpublished, local_node)
		rdlock_dlm_local_publish(lkb);
}

/*
 * The requests waiting in rdlock_dlm_wait_local() look again (their works
 * are queued again). Caller holds dls->lock.
 */
static void rdlock_dlm_local_wake(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_req *req, *tmp;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry_safe(req, tmp, &dls->local_waiters,
				 local_wait_node) {
		list_del_init(&req->local_wait_node);
		rdlock_dlm_req_wake(req);
	}
}

/*
 * A LOCAL lock's words are taken, or it was unlocked without them: with
 * none left, the parked EX releases go. Caller holds dls->lock.
 */
static void rdlock_dlm_local_ended(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_req *req, *tmp;

	lockdep_assert_held(&dls->lock);
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_TAKES, -1);
	rdlock_dlm_local_wake(dls);
	if (--dls->local_takes)
		return;
	dls->forcing = false;
	list_for_each_entry_safe(req, tmp, &dls->parked, park_node) {
		list_del_init(&req->park_node);
		queue_work(dls->wq, &req->release_work);
	}
}

/* Is @lkb granted LOCAL without its words yet? Caller holds dls->lock. */
static bool rdlock_dlm_lkb_local(const struct rdlock_dlm_lkb *lkb)
{
	return lkb->state == RDLOCK_DLM_LKS_UNPUBLISHED ||
	       lkb->state == RDLOCK_DLM_LKS_TAKING;
}

/*
 * Has another lock of @req's resource on this node been granted LOCAL
 * without its words yet? Caller holds dls->lock.
 */
static bool rdlock_dlm_res_local(const struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_lkb *o;

	lockdep_assert_held(&req->dls->lock);
	list_for_each_entry(o, &req->res->locks, res_node)
		if (o != req->lkb && rdlock_dlm_lkb_local(o))
			return true;
	return false;
}

/* What rdlock_dlm_wait_local() waits for besides its lock's own take. */
#define RDLOCK_DLM_LOCAL_ALL	0x1	/* every LOCAL take of the lockspace */
#define RDLOCK_DLM_LOCAL_RES	0x2	/* of the resource's other locks */

/*
 * May @req go on (rdlock_dlm_wait_local())? Yes once cancelled: it then
 * touches nothing of its lock's, which may be gone. @wait:
 * RDLOCK_DLM_LOCAL_*. Caller holds dls->lock.
 */
static bool __rdlock_dlm_local_done(const struct rdlock_dlm_req *req,
				    u32 wait)
{
	lockdep_assert_held(&req->dls->lock);
	return !req->lkb ||
	       (!rdlock_dlm_lkb_local(req->lkb) &&
		(!(wait & RDLOCK_DLM_LOCAL_ALL) || !req->dls->local_takes) &&
		(!(wait & RDLOCK_DLM_LOCAL_RES) || !rdlock_dlm_res_local(req)));
}

/*
 * A LOCAL lock unlocked before its take started: nobody else knows its
 * name, so it has nothing to give back and its take is not needed.
 * Caller holds dls->lock; the take's request is returned, to be freed.
 */
static struct rdlock_dlm_req *rdlock_dlm_local_abandon(struct rdlock_dlm_lkb *lkb)
{
	struct rdlock_dlm_req *take = lkb->local_req;

	lockdep_assert_held(&lkb->dls->lock);
	list_del_init(&lkb->local_node);
	lkb->local_req = NULL;
	rdlock_dlm_lkb_to(lkb, RDLOCK_DLM_LKS_GRANTED);
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_ABANDONED, 1);
	rdlock_dlm_local_ended(lkb->dls);
	return take;
}

/*
 * Before @req touches its lock's words, a LOCAL take of the lock itself
 * must have ended (rdlock_dlm_local_grant()): started now if it was
 * deferred, not needed at all by an unlock (but one that stores an EX
 * value block). And before an EX lock goes below EX, every LOCAL take of
 * the lockspace: its holder may have written where other nodes learn a
 * new resource's name (a directory's entry of a new inode), and a node
 * that learns it must find the name's lock words taken. A lock unlocked
 * untaken counts too: the data written under it becomes another node's
 * once that node learns its name, so the same holds for the names in it.
 * An EX unlock does not wait here: its release does
 * (rdlock_dlm_unlock_work()). A request that takes words waits for the
 * takes of this node's other LOCAL locks of its resource, which hold it
 * already: else it could take the words first.
 * Return: true once @req may go on; false when it must wait: its work
 * returns, to be queued again by rdlock_dlm_local_wake() or a cancel, and
 * then calls this again.
 */
bool rdlock_dlm_wait_local(struct rdlock_dlm_req *req)
{
	bool publish = req->from == RDLOCK_DLM_LOCK_EX &&
		       !rdlock_dlm_req_unlock(req) &&
		       req->to < RDLOCK_DLM_LOCK_EX;
	bool takes = !rdlock_dlm_req_unlock(req) && req->to > req->from &&
		     req->to != RDLOCK_DLM_LOCK_NL;
	u32 wait = (publish ? RDLOCK_DLM_LOCAL_ALL : 0) |
		   (takes ? RDLOCK_DLM_LOCAL_RES : 0);
	struct rdlock_dlm_ls *dls = req->dls;
	struct rdlock_dlm_req *take = NULL;
	struct rdlock_dlm_lkb *lkb, *o;
	unsigned long flags;
	bool done;

	if (test_bit(RDLOCK_DLM_REQ_LOCAL_DONE, &req->iflags))
		return true;
	spin_lock_irqsave(&dls->lock, flags);
	/* Woken (or never waiting): off the waiters until it waits again. */
	list_del_init(&req->local_wait_node);
	lkb = req->lkb;
	if (takes)
		list_for_each_entry(o, &req->res->locks, res_node)
			if (o != lkb && o->state == RDLOCK_DLM_LKS_UNPUBLISHED)
				rdlock_dlm_local_publish(o);
	if (lkb && lkb->state == RDLOCK_DLM_LKS_UNPUBLISHED) {
		if (rdlock_dlm_req_unlock(req) &&
		    !(req->flags & RDLOCK_DLM_LKF_VALBLK &&
		      req->from == RDLOCK_DLM_LOCK_EX))
			take = rdlock_dlm_local_abandon(lkb);
		else
			rdlock_dlm_local_publish(lkb);
	}
	if (publish)
		rdlock_dlm_local_force(dls);
	done = __rdlock_dlm_local_done(req, wait);
	if (!done) {
		if (!test_and_set_bit(RDLOCK_DLM_REQ_LOCAL_WAITED,
				      &req->iflags))
			req->t0 = ktime_get();
		/* Under the lock that rdlock_dlm_local_wake() and a cancel take. */
		set_bit(RDLOCK_DLM_REQ_ASLEEP, &req->iflags);
		list_add_tail(&req->local_wait_node, &dls->local_waiters);
	}
	spin_unlock_irqrestore(&dls->lock, flags);
	if (take) {
		/* Never started: its references go as a request's would. */
		rdlock_dlm_res_put(dls, take->res);
		kfree(take);
		rdlock_dlm_put(dls);
	}
	if (!done)
		return false;
	set_bit(RDLOCK_DLM_REQ_LOCAL_DONE, &req->iflags);
	if (test_bit(RDLOCK_DLM_REQ_LOCAL_WAITED, &req->iflags))
		rdlock_dlm_count_since(RDLOCK_DLM_ST_LOCAL_WAIT,
				       RDLOCK_DLM_ST_NS_LOCAL_WAIT, req->t0);
	return true;
}

/*
 * The background take of a lock granted by rdlock_dlm_local_grant(). It
 * cannot fail for want of the lock (nobody else knows the name), so it
 * tries again after any error until it succeeds, the lockspace goes or a
 * node the name lives on is declared down (-ENOTCONN: a link being made
 * again is waited through inside the take); then the lock holds nothing
 * in the cluster (counted, logged) and only an unlock is left for it, and
 * the lockspace's EX down-conversions and unlocks no longer wait for it.
 * Its work returns while the take waits (rdlock_dlm_up() -EINPROGRESS) and
 * before it tries again, and goes on when queued again.
 */
static void rdlock_dlm_local_work(struct work_struct *work)
{
	struct rdlock_dlm_req *req = container_of(work, struct rdlock_dlm_req,
						  work);
	struct rdlock_dlm_ls *dls = req->dls;
	struct rdlock_dlm_lkb *lkb = req->lkb;
	unsigned int nofs = memalloc_nofs_save();
	/* Once granted below, the user may unlock and free @lkb. */
	u32 lkid = lkb->lkid;
	u8 lvb[RDLOCK_DLM_LVB_LEN];
	unsigned long flags;
	int grmode, ret;
	u32 f = 0;

	rdlock_dlm_req_resume(req);
	if (!test_and_set_bit(RDLOCK_DLM_REQ_STARTED, &req->iflags))
		rdlock_dlm_fault_local_delay();
	grmode = req->from;
	ret = rdlock_dlm_up(req, lkb, &grmode);
	if (ret == -EINPROGRESS)
		goto asleep;
	if (ret && ret != -ESHUTDOWN && ret != -ENOTCONN) {
		rdlock_dlm_drop(req, &req->main);
		rdlock_dlm_drop(req, &req->gate);
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_RETRY, 1);
		pr_warn_ratelimited("%s: taking a new lock %x failed (%d), trying again\n",
				    dls->name, lkid, ret);
		req->retry_ms = clamp(2 * req->retry_ms,
				      RDLOCK_DLM_LOCAL_RETRY_MS_MIN,
				      RDLOCK_DLM_LOCAL_RETRY_MS_MAX);
		rdlock_dlm_sleep(req, (u64)req->retry_ms * NSEC_PER_MSEC, true);
		goto asleep;
	}
	rdlock_dlm_notice_done(req);
	/* A stored value block: the name was not new after all. */
	if (!ret && req->flags & RDLOCK_DLM_LKF_VALBLK &&
	    !rdlock_dlm_lvb_get(req->main, lvb, &f) &&
	    f & RDLOCK_DLM_LVB_VALID) {
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_KNOWN, 1);
		pr_warn_ratelimited("%s: lock %x asked for as LOCAL names a resource with a stored value block\n",
				    dls->name, lkid);
	}
	spin_lock_irqsave(&dls->lock, flags);
	if (!ret) {
		lkb->main = req->main;
		lkb->gate = req->gate;
		req->main = NULL;
		req->gate = NULL;
	}
	rdlock_dlm_lkb_to(lkb, RDLOCK_DLM_LKS_GRANTED);
	rdlock_dlm_local_ended(dls);
	spin_unlock_irqrestore(&dls->lock, flags);
	if (ret) {
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_LOST, 1);
		pr_warn_ratelimited("%s: new lock %x not taken: %d\n",
				    dls->name, lkid, ret);
		rdlock_dlm_drop(req, &req->main);
		rdlock_dlm_drop(req, &req->gate);
	}
	rdlock_dlm_count(RDLOCK_DLM_ST_NS_LOCAL,
			 ktime_to_ns(ktime_sub(ktime_get(), req->start)));
	if (test_bit(RDLOCK_DLM_REQ_DROPPED, &req->iflags))
		rdlock_dlm_kick_waiters(req);
	memalloc_nofs_restore(nofs);
	rdlock_dlm_req_free(req);
	return;
asleep:
	memalloc_nofs_restore(nofs);
}

/*
 * A parked EX unlock's release (rdlock_dlm_unlock_work()), now that no
 * LOCAL take is left.
 */
void rdlock_dlm_release_work(struct work_struct *work)
{
	struct rdlock_dlm_req *req = container_of(work, struct rdlock_dlm_req,
						  release_work);
	unsigned int nofs = memalloc_nofs_save();
	unsigned long flags;

	rdlock_dlm_drop(req, &req->main);
	rdlock_dlm_drop(req, &req->gate);
	spin_lock_irqsave(&req->dls->lock, flags);
	req->res->parked--;
	spin_unlock_irqrestore(&req->dls->lock, flags);
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_PARKED, -1);
	rdlock_dlm_kick_waiters(req);
	memalloc_nofs_restore(nofs);
	rdlock_dlm_req_free(req);
}

/*
 * Start the takes of the locks granted LOCAL longer ago than
 * rdlock_dlm_local_defer_ms, oldest first; again when the next is due.
 */
void rdlock_dlm_age_work(struct work_struct *work)
{
	struct rdlock_dlm_ls *dls = container_of(to_delayed_work(work),
						 struct rdlock_dlm_ls,
						 age_work);
	unsigned long defer, flags;
	struct rdlock_dlm_lkb *lkb;

	defer = rdlock_dlm_local_defer();
	spin_lock_irqsave(&dls->lock, flags);
	while ((lkb = list_first_entry_or_null(&dls->unpublished,
					       struct rdlock_dlm_lkb,
					       local_node))) {
		if (time_before(jiffies, lkb->local_at + defer)) {
			queue_delayed_work(rdlock_dlm_local_wq, &dls->age_work,
					   lkb->local_at + defer - jiffies);
			break;
		}
		rdlock_dlm_local_publish(lkb);
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_AGED, 1);
	}
	spin_unlock_irqrestore(&dls->lock, flags);
}

/*
 * A new lock with RDLOCK_DLM_LKF_LOCAL: the caller says no other node can
 * know the resource yet, so nobody can be in its way. Granted now, as
 * o2dlm masters such a lock without asking anybody; @req takes its lock
 * words later (on its resource's home: a round trip to another node for
 * most names): once rdlock_dlm_local_defer_ms have passed, or sooner when
 * the lock's next request needs them, or any of this node's EX locks goes
 * below EX, before which nobody can learn the name
 * (rdlock_dlm_wait_local()). Unlocked before that, it never takes them.
 * The value block of a name never used is zeroes, not valid: what its
 * grant would read. Caller holds dls->lock.
 */
void rdlock_dlm_local_grant(struct rdlock_dlm_lkb *lkb,
			    struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = lkb->dls;
	unsigned long defer;
	bool first;

	/* Granted: the take waits for nobody, and nothing cancels it. */
	req->flags &= ~RDLOCK_DLM_LKF_NOQUEUE;
	rdlock_dlm_req_setup(lkb, req);
	rdlock_dlm_req_to(req, RDLOCK_DLM_RQS_RUNNING);
	INIT_WORK(&req->work, rdlock_dlm_local_work);
	set_bit(RDLOCK_DLM_REQ_LOCAL, &req->iflags);
	if (req->flags & RDLOCK_DLM_LKF_VALBLK) {
		memset(lkb->lksb->sb_lvbptr, 0, RDLOCK_DLM_LVB_LEN);
		req->sb_flags |= RDLOCK_DLM_SBF_VALNOTVALID;
	}
	clear_bit(RDLOCK_DLM_LKB_LVB_VALID, &lkb->iflags);
	clear_bit(RDLOCK_DLM_LKB_LVB_SEEN, &lkb->iflags);
	rdlock_dlm_lkb_to(lkb, RDLOCK_DLM_LKS_UNPUBLISHED);
	lkb->local_at = jiffies;
	lkb->local_req = req;
	first = list_empty(&dls->unpublished);
	list_add_tail(&lkb->local_node, &dls->unpublished);
	dls->local_takes++;
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL, 1);
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_TAKES, 1);
	rdlock_dlm_ast(lkb, req, req->to, 0);
	defer = rdlock_dlm_local_defer();
	/* The oldest is due first: only its timer counts. */
	if (!defer)
		rdlock_dlm_local_publish(lkb);
	else if (first)
		mod_delayed_work(rdlock_dlm_local_wq, &dls->age_work, defer);
}
