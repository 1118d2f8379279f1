// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: the names of a node declared down. The name entries
 * it kept and the locks placed on it are lost with its table. Each such
 * name that this node has resolved moves: it is resolved again on its
 * heir, or its lock is placed again (rdlock_res_relocate()), and this
 * node's granted locks of it are taken again in the new word. That
 * happens once every survivor cut the node off (rdlock_ls_node_down(),
 * after the first barrier), and any other acquisition of such a name
 * waits until the node's declaration is done here, which is after the
 * second barrier: nobody is granted in a name's new word before every
 * survivor's locks of the name are there (design.rst, "Names of a node
 * declared down").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "lockspace-pri.h"

/* How long one node-down may spend moving this node's locks. */
#define RDLOCK_LS_REHOME_MS	30000
/* How often a lock busy in a release or conversion is looked at again. */
#define RDLOCK_LS_REHOME_BUSY_MS	10

/*
 * Take @lk (its op_mutex held) again in its name's new word (@res's
 * resolve_mutex held): a new ticket of the same mode (upgraded if it was),
 * which only survivors' locks compatible with it can meet there; then
 * release the old ticket (to a home cut off, that only ends it). A lock
 * that cannot be taken again (@ok false: the name found no new place)
 * is LOST: its old ticket ended, it holds nothing.
 */
static void rdlock_lock_move(struct rdlock_ls *ls, struct rdlock_lock *lk,
			     bool ok, unsigned long deadline)
{
	struct rdlock_res *res = lk->res;
	struct rdlock_ticket t = {
		.node = res->home,
		.slot = res->slot + !!(lk->opts.flags & RDLOCK_LKF_GATE),
		.mode = (enum rdlock_mode)lk->mode,
		.k = lk->opts.lease_slots,
		.incarnation = ls->incarnation[res->home],
	};
	struct rdlock_ticket old = lk->ticket;
	/* Not a caller's request: no quota refuses it (a lock moves once). */
	struct rdlock_proto_cfg cfg = ls->cfg;
	bool lvb = false;
	int ret = -ENOTCONN;

	cfg.quota = NULL;
	if (ok)
		ret = ls->ops->acquire(&cfg, &t, deadline);
	if (!ret && old.upgraded) {
		ret = ls->ops->upgrade(&ls->cfg, &t, deadline);
		if (ret)
			ls->ops->release(&ls->cfg, &t);
	}
	old.post = true;
	old.pin = &res->posted;
	ls->ops->release(&ls->cfg, &old);
	spin_lock(&ls->locks_lock);
	lk->gen = res->gen;
	if (ret) {
		lk->state = RDLOCK_LK_LOST;
	} else {
		lk->ticket = t;
		lvb = lk->lvb_read_ok;
		lk->lvb_read_ok = false;
	}
	spin_unlock(&ls->locks_lock);
	atomic64_inc(ret ? &ls->lost_locks : &ls->moved_locks);
	/* Its copy of the value block into the new place (op_mutex held). */
	if (lvb)
		rdlock_lvb_restore(lk);
}

/*
 * A granted lock of @res not moved yet (its gen behind the name's), its
 * op_mutex taken; NULL when none is left whose op_mutex was free. *@busy:
 * set when one was taken (a release or conversion in progress).
 */
static struct rdlock_lock *rdlock_res_next_unmoved(struct rdlock_ls *ls,
						   struct rdlock_res *res,
						   bool *busy)
{
	struct rdlock_lock *lk, *found = NULL;

	*busy = false;
	spin_lock(&ls->locks_lock);
	list_for_each_entry(lk, &res->locks, res_node) {
		if (lk->gen == res->gen ||
		    (lk->state != RDLOCK_LK_GRANTED &&
		     lk->state != RDLOCK_LK_CONVERTING))
			continue;
		/* Its release frees it only after the mutex. */
		if (mutex_trylock(&lk->op_mutex)) {
			found = lk;
			break;
		}
		*busy = true;
	}
	spin_unlock(&ls->locks_lock);
	return found;
}

/*
 * Move @res off @dead, with this node's granted locks of it; or, for a
 * name moved already, the locks a call before this one left. A lock whose
 * release, conversion or value block call is in progress is waited for,
 * until @deadline: such a call waits only for the lock's home, which is
 * the dead node's word without placement, and placed lockspaces have no
 * upgrades (rdlock_ls_check_kernel_attr()). Return: 0, or -ETIMEDOUT
 * when a lock is left unmoved (the next declaration moves it).
 */
static int rdlock_res_move(struct rdlock_ls *ls, struct rdlock_res *res,
			   u32 dead, unsigned long deadline)
{
	struct rdlock_lock *lk;
	int ret = 0;
	bool busy;
	bool ok;

	mutex_lock(&res->resolve_mutex);
	if (rdlock_res_lost_to(res, dead)) {
		ret = rdlock_res_relocate(ls, res, deadline);
		if (ret)
			pr_warn("lockspace %s: a name of node %u found no new place (%d): its locks here are lost\n",
				ls->name, dead, ret);
		spin_lock(&ls->locks_lock);
		res->gen++;
		spin_unlock(&ls->locks_lock);
		WRITE_ONCE(res->moved_from, dead);
	} else if (res->moved_from != dead) {
		goto out;
	}
	/* Not resolved, or still lost: no new word to take its locks in. */
	ok = res->resolved && !rdlock_res_lost(res);
	ret = 0;
	for (;;) {
		lk = rdlock_res_next_unmoved(ls, res, &busy);
		if (lk) {
			rdlock_lock_move(ls, lk, ok, deadline);
			mutex_unlock(&lk->op_mutex);
			continue;
		}
		if (!busy)
			break;
		if (time_after_eq(jiffies, deadline)) {
			pr_warn("lockspace %s: a lock of a name of node %u is still busy: it moves at the next declaration\n",
				ls->name, dead);
			ret = -ETIMEDOUT;
			break;
		}
		msleep(RDLOCK_LS_REHOME_BUSY_MS);
	}
out:
	mutex_unlock(&res->resolve_mutex);
	return ret;
}

/*
 * Put on @names, with a reference each, every name still on @dead, or
 * moved off it, with a granted lock of this node not moved: one look at
 * the lockspace's locks. Return: how many.
 */
static unsigned int rdlock_ls_collect_lost(struct rdlock_ls *ls, u32 dead,
					   struct list_head *names)
{
	struct rdlock_lock *lk;
	unsigned int n = 0;

	spin_lock(&ls->locks_lock);
	list_for_each_entry(lk, &ls->locks, ls_node) {
		if (lk->state != RDLOCK_LK_GRANTED &&
		    lk->state != RDLOCK_LK_CONVERTING)
			continue;
		/* Read without its resolve_mutex: checked again under it. */
		if ((!rdlock_res_lost_to(lk->res, dead) &&
		     (READ_ONCE(lk->res->moved_from) != dead ||
		      lk->gen == lk->res->gen)) ||
		    !list_empty(&lk->res->move_node))
			continue;
		spin_lock(&ls->res_lock);
		lk->res->refs++;
		spin_unlock(&ls->res_lock);
		list_add_tail(&lk->res->move_node, names);
		n++;
	}
	spin_unlock(&ls->locks_lock);
	return n;
}

/*
 * One node-down's moves in a lockspace: the names left to move, taken by
 * this thread and up to RDLOCK_LS_REHOME_MOVERS - 1 movers on
 * rdlock_ls_move_wq at once (each move waits mostly for round trips to
 * the name's heir).
 */
struct rdlock_ls_moves {
	struct rdlock_ls *ls;
	u32 dead;
	unsigned long deadline;
	struct list_head names;		/* under ls->locks_lock */
	int err;			/* the first move's error, 0: none */
};

struct rdlock_ls_mover {
	struct work_struct work;
	struct rdlock_ls_moves *mv;
};

/* Move names off @mv->names until none is left. */
static void rdlock_ls_move_names(struct rdlock_ls_moves *mv)
{
	struct rdlock_ls *ls = mv->ls;
	struct rdlock_res *res;
	int ret;

	for (;;) {
		spin_lock(&ls->locks_lock);
		res = list_first_entry_or_null(&mv->names, struct rdlock_res,
					       move_node);
		if (res)
			list_del_init(&res->move_node);
		spin_unlock(&ls->locks_lock);
		if (!res)
			break;
		ret = rdlock_res_move(ls, res, mv->dead, mv->deadline);
		if (ret)
			cmpxchg(&mv->err, 0, ret);
		rdlock_res_put(ls, res);
		cond_resched();
	}
}

static void rdlock_ls_mover_work(struct work_struct *work)
{
	struct rdlock_ls_mover *m = container_of(work, struct rdlock_ls_mover,
						 work);
	unsigned int nofs = memalloc_nofs_save();

	rdlock_ls_move_names(m->mv);
	memalloc_nofs_restore(nofs);
}

static int rdlock_ls_rehome_one(struct rdlock_ls *ls, u32 dead)
{
	s64 lost = atomic64_read(&ls->lost_locks);
	struct rdlock_ls_moves mv = {
		.ls = ls,
		.dead = dead,
		.deadline = jiffies + msecs_to_jiffies(RDLOCK_LS_REHOME_MS),
		.names = LIST_HEAD_INIT(mv.names),
	};
	struct rdlock_ls_mover *movers;
	unsigned int n, i;

	if (rdlock_ls_stale(ls))
		return 0;
	/* Without them this thread moves every name, one at a time. */
	movers = kcalloc(RDLOCK_LS_REHOME_MOVERS - 1, sizeof(*movers),
			 GFP_KERNEL | __GFP_NOWARN);
	/*
	 * A lock granted meanwhile in a name not moved yet: look again; not
	 * for a lock left busy (the next declaration moves it).
	 */
	while (!READ_ONCE(mv.err) &&
	       (n = rdlock_ls_collect_lost(ls, dead, &mv.names))) {
		n = movers ? min_t(unsigned int, n,
				   RDLOCK_LS_REHOME_MOVERS) - 1 : 0;
		for (i = 0; i < n; i++) {
			movers[i].mv = &mv;
			INIT_WORK(&movers[i].work, rdlock_ls_mover_work);
			queue_work(rdlock_ls_move_wq, &movers[i].work);
		}
		rdlock_ls_move_names(&mv);
		/* None is left: one not started has nothing to do. */
		for (i = 0; i < n; i++)
			cancel_work_sync(&movers[i].work);
	}
	kfree(movers);
	/* Its user believes it holds what it lost: the lockspace is lost. */
	if (atomic64_read(&ls->lost_locks) != lost)
		rdlock_ls_tell_lost();
	return mv.err;
}

struct rdlock_ls_rehome_work {
	struct work_struct work;
	u32 dead;
	int ret;
	struct completion done;
};

static void rdlock_ls_rehome_work(struct work_struct *work)
{
	struct rdlock_ls_rehome_work *w =
		container_of(work, struct rdlock_ls_rehome_work, work);
	unsigned int nofs = memalloc_nofs_save();

	w->ret = rdlock_ls_for_each(rdlock_ls_rehome_one, w->dead);
	memalloc_nofs_restore(nofs);
	complete(&w->done);
}

/**
 * rdlock_ls_rehome() - move this node's locks off a node declared down
 * @dead: the node, cut off here and on every survivor.
 *
 * In every lockspace open here, each name whose entry or lock word was on
 * @dead and of which this node holds a granted lock moves
 * (rdlock_res_relocate()), and those locks are taken again in its new
 * word. A lock that cannot be (no new place reachable within
 * RDLOCK_LS_REHOME_MS) is LOST: it holds nothing, and only its release is
 * left to do. Other acquisitions of the name wait meanwhile
 * (rdlock_res_wait_moved()). Runs in a work item, so that a signal to the
 * caller interrupts none of it; a name moved already is not moved again,
 * so a call that failed may be made again: it moves what is left.
 *
 * Return: 0, -ENOMEM (nothing moved), or -ETIMEDOUT: a lock's release,
 * conversion or value block call still held it after RDLOCK_LS_REHOME_MS
 * (it is not moved).
 */
int rdlock_ls_rehome(u32 dead)
{
	struct rdlock_ls_rehome_work w = { .dead = dead };

	INIT_WORK_ONSTACK(&w.work, rdlock_ls_rehome_work);
	init_completion(&w.done);
	/* One of its movers' places: this thread moves names too. */
	queue_work(rdlock_ls_move_wq, &w.work);
	wait_for_completion(&w.done);
	destroy_work_on_stack(&w.work);
	return w.ret;
}

/* The node whose declaration @res waits for (rdlock_res_wait_moved()). */
static u32 rdlock_res_moving_from(const struct rdlock_ls *ls,
				  const struct rdlock_res *res)
{
	u32 node = rdlock_ls_handover_pending();

	if (node != U32_MAX)
		return node;
	if (res->moved_from != U32_MAX &&
	    !rdlock_ls_node_released(res->moved_from) &&
	    rdlock_xport_node_fenced(res->moved_from))
		return res->moved_from;
	if (!res->resolved)
		return rdlock_res_home_pending(ls, res);
	if (rdlock_xport_node_fenced(res->entry_home) &&
	    !rdlock_ls_node_released(res->entry_home))
		return res->entry_home;
	if (rdlock_xport_node_fenced(res->home) &&
	    !rdlock_ls_node_released(res->home))
		return res->home;
	return U32_MAX;
}

/**
 * rdlock_res_wait_moved() - make a name usable after a node declared down
 * @ls: the lockspace.
 * @res: the name, under its resolve_mutex (dropped while waiting, held
 *	again on return).
 * @deadline: jiffies, 0: none.
 *
 * A name whose entry or lock is on a node cut off here, that moved off
 * one with this node's locks, or (not resolved) whose hash home is such a
 * node, and every name while returned nodes take over from the last nodes
 * keeping their tables (rdlock_ls_handover_pending()), is acquired only
 * once that node's declaration is done here
 * (rdlock_ls_node_released()), which is after every survivor moved its
 * locks of it; then a name still on such a node moves
 * (rdlock_res_relocate()).
 *
 * Return: 0, -ETIMEDOUT, -EINTR, -ESHUTDOWN once @ls is lost, or an error
 * of rdlock_res_relocate().
 */
int rdlock_res_wait_moved(struct rdlock_ls *ls, struct rdlock_res *res,
			  unsigned long deadline)
{
	u32 node;
	int ret;

	for (;;) {
		node = rdlock_res_moving_from(ls, res);
		if (node == U32_MAX && rdlock_res_lost(res))
			return rdlock_res_relocate(ls, res, deadline);
		if (node == U32_MAX)
			break;
		mutex_unlock(&res->resolve_mutex);
		ret = rdlock_ls_release_wait(ls, node, deadline);
		mutex_lock(&res->resolve_mutex);
		if (ret)
			return ret;
	}
	res->moved_from = U32_MAX;
	return 0;
}
