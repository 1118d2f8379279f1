// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: the names of a node declared down. The name entries
 * it kept and the locks placed on it are lost with its table. Each such
 * name that this node has resolved moves: it is resolved again on its
 * heir, or its lock is placed again (rdlock_res_relocate()), and this
 * node's granted locks of it are taken again in the new word. That
 * happens before this node tells the other survivors that its users know
 * (rdlock_ls_node_down(), step 2), and any other acquisition of such a
 * name waits until the node's declaration is done here, which is after
 * that barrier: nobody is granted in a name's new word before every
 * survivor's locks of the name are there (design.rst, "Names of a node
 * declared down").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "lockspace-pri.h"

/* How long one node-down may spend moving this node's locks. */
#define RDLOCK_LS_REHOME_MS	30000

/*
 * Take @lk again in its name's new word: a new ticket of the same mode
 * (and upgraded if it was), which only survivors' locks that are
 * compatible with it can meet there; then release the old ticket (to a
 * home cut off, that only ends it). Return: 0, or the acquisition's
 * error, after which @lk is LOST: its old ticket is ended, it holds
 * nothing.
 */
static int rdlock_lock_move(struct rdlock_ls *ls, struct rdlock_lock *lk,
			    unsigned long deadline)
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
	int ret;

	ret = ls->ops->acquire(&ls->cfg, &t, deadline);
	if (!ret && old.upgraded) {
		ret = ls->ops->upgrade(&ls->cfg, &t, deadline);
		if (ret)
			ls->ops->release(&ls->cfg, &t);
	}
	old.post = true;
	old.pin = &res->posted;
	ls->ops->release(&ls->cfg, &old);
	spin_lock(&ls->locks_lock);
	if (ret) {
		lk->state = RDLOCK_LK_LOST;
	} else {
		lk->ticket = t;
		lk->lvb_read_ok = false;
	}
	spin_unlock(&ls->locks_lock);
	atomic64_inc(ret ? &ls->lost_locks : &ls->moved_locks);
	return ret;
}

/*
 * A granted lock of this node whose name is lost (rdlock_res_lost()), with
 * a reference on its name; NULL when none is left.
 */
static struct rdlock_res *rdlock_ls_next_lost(struct rdlock_ls *ls)
{
	struct rdlock_res *res = NULL;
	struct rdlock_lock *lk;

	spin_lock(&ls->locks_lock);
	list_for_each_entry(lk, &ls->locks, ls_node) {
		if (lk->state != RDLOCK_LK_GRANTED &&
		    lk->state != RDLOCK_LK_CONVERTING)
			continue;
		/* Read without its mutex: checked again under it. */
		if (!rdlock_res_lost(lk->res))
			continue;
		res = lk->res;
		spin_lock(&ls->res_lock);
		res->refs++;
		spin_unlock(&ls->res_lock);
		break;
	}
	spin_unlock(&ls->locks_lock);
	return res;
}

/*
 * Move @res and this node's granted locks of it. Under @res->use written:
 * no lock of it is released, converted or granted meanwhile.
 */
static void rdlock_res_move(struct rdlock_ls *ls, struct rdlock_res *res,
			    u32 dead, unsigned long deadline)
{
	struct rdlock_lock *lk, *tmp;
	LIST_HEAD(moving);
	int ret;

	down_write(&res->use);
	mutex_lock(&res->resolve_mutex);
	if (!rdlock_res_lost(res))
		goto out;
	spin_lock(&ls->locks_lock);
	list_for_each_entry(lk, &ls->locks, ls_node)
		if (lk->res == res && lk->state == RDLOCK_LK_GRANTED)
			list_add_tail(&lk->move_node, &moving);
	spin_unlock(&ls->locks_lock);
	ret = rdlock_res_relocate(ls, res, deadline);
	res->gen++;
	res->moved_from = dead;
	list_for_each_entry_safe(lk, tmp, &moving, move_node) {
		list_del_init(&lk->move_node);
		if (ret) {
			struct rdlock_ticket old = lk->ticket;

			/* Nowhere to take it again: it ends. */
			old.post = true;
			old.pin = &res->posted;
			ls->ops->release(&ls->cfg, &old);
			spin_lock(&ls->locks_lock);
			lk->state = RDLOCK_LK_LOST;
			spin_unlock(&ls->locks_lock);
			atomic64_inc(&ls->lost_locks);
		} else {
			rdlock_lock_move(ls, lk, deadline);
		}
	}
	if (ret)
		pr_warn("lockspace %s: a name of node %u found no new home (%d): its locks here are lost\n",
			ls->name, dead, ret);
out:
	mutex_unlock(&res->resolve_mutex);
	up_write(&res->use);
}

static void rdlock_ls_rehome_one(struct rdlock_ls *ls, u32 dead,
				 unsigned long deadline)
{
	struct rdlock_res *res;

	if (rdlock_ls_stale(ls))
		return;
	while ((res = rdlock_ls_next_lost(ls))) {
		rdlock_res_move(ls, res, dead, deadline);
		rdlock_res_put(ls, res);
		cond_resched();
	}
}

/**
 * rdlock_ls_rehome() - move this node's locks off a node being declared down
 * @dead: the node, cut off here (rdlock_xport_fence()).
 *
 * In every lockspace open here, each name with a lock of this node granted
 * whose entry or lock word was on @dead (or on another node cut off) moves
 * (rdlock_res_relocate()), and those locks are taken again in its new
 * word. A lock that cannot be (no new home could be reached within
 * RDLOCK_LS_REHOME_MS) is LOST: it holds nothing, and only its release
 * is left to do. The name's other acquisitions wait meanwhile
 * (rdlock_res_wait_moved()).
 *
 * Return: 0.
 */
int rdlock_ls_rehome(u32 dead)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(RDLOCK_LS_REHOME_MS);
	struct rdlock_ls **lss, *ls;
	unsigned int n = 0, i;

	mutex_lock(&rdlock_ls_mutex);
	list_for_each_entry(ls, &rdlock_ls_list, list)
		n++;
	lss = kcalloc(max(n, 1U), sizeof(*lss), GFP_KERNEL);
	if (!lss) {
		mutex_unlock(&rdlock_ls_mutex);
		return -ENOMEM;
	}
	n = 0;
	list_for_each_entry(ls, &rdlock_ls_list, list) {
		ls->users++;
		lss[n++] = ls;
	}
	mutex_unlock(&rdlock_ls_mutex);
	for (i = 0; i < n; i++)
		rdlock_ls_rehome_one(lss[i], dead, deadline);
	mutex_lock(&rdlock_ls_mutex);
	for (i = 0; i < n; i++)
		rdlock_ls_put_locked(lss[i]);
	mutex_unlock(&rdlock_ls_mutex);
	kfree(lss);
	return 0;
}

/**
 * rdlock_res_wait_moved() - make a name usable after a node declared down
 * @ls: the lockspace.
 * @res: the name, under its resolve_mutex (dropped while waiting, held
 *	again on return).
 * @deadline: jiffies, 0: none.
 *
 * A name whose entry or lock is on a node cut off here, or that moved off
 * one with this node's locks, is acquired only once that node's
 * declaration is done here (rdlock_ls_node_released()), which is after
 * every survivor moved its locks of it; then a lost name moves
 * (rdlock_res_relocate()).
 *
 * Return: 0, -ETIMEDOUT, -EINTR, or an error of rdlock_res_relocate().
 */
int rdlock_res_wait_moved(struct rdlock_ls *ls, struct rdlock_res *res,
			  unsigned long deadline)
{
	u32 node;
	int ret;

	for (;;) {
		if (res->moved_from != U32_MAX &&
		    !rdlock_ls_node_released(res->moved_from) &&
		    rdlock_xport_node_fenced(res->moved_from))
			node = res->moved_from;
		else if (!rdlock_res_lost(res))
			break;
		else if (rdlock_xport_node_fenced(res->entry_home) &&
			 !rdlock_ls_node_released(res->entry_home))
			node = res->entry_home;
		else if (rdlock_xport_node_fenced(res->home) &&
			 !rdlock_ls_node_released(res->home))
			node = res->home;
		else
			return rdlock_res_relocate(ls, res, deadline);
		mutex_unlock(&res->resolve_mutex);
		ret = rdlock_ls_release_wait(node, deadline);
		mutex_lock(&res->resolve_mutex);
		if (ret)
			return ret;
	}
	res->moved_from = U32_MAX;
	return 0;
}
