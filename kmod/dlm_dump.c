// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API: a DLM lockspace's locks on this node, for
 * RDLOCK_IOC_LOCKS (rdlockctl locks): this node's locks with their DLM
 * modes, then the waits of other nodes whose notices this node keeps
 * (dlm_notice.c), named when this node has a resource of the same hash.
 * No node knows the others' holders: each one lists its own, as fs/dlm's
 * lock dumps show a node's view.
 */
#include <linux/hashtable.h>
#include <linux/idr.h>
#include <linux/ktime.h>
#include <linux/string.h>

#include "dlm-pri.h"
#include "xport.h"

/* A DLM mode as the uapi's enum rdlock_lock_mode, or RDLOCK_LOCKS_NONE. */
static u32 rdlock_dlm_dump_mode(int mode)
{
	switch (mode) {
	case RDLOCK_DLM_LOCK_NL:
		return RDLOCK_LOCK_NL;
	case RDLOCK_DLM_LOCK_PR:
		return RDLOCK_LOCK_PR;
	case RDLOCK_DLM_LOCK_EX:
		return RDLOCK_LOCK_EX;
	default:
		return RDLOCK_LOCKS_NONE;
	}
}

/* What the dump gathers: @max entries of @out at most, @n counted on. */
struct rdlock_dlm_dump {
	struct rdlock_locks_entry *out;
	u32 max;
	u32 n;
};

/* The next entry (zeroed), or NULL when full; @d->n counts on. */
static struct rdlock_locks_entry *rdlock_dlm_dump_next(struct rdlock_dlm_dump *d)
{
	return d->n++ < d->max ? &d->out[d->n - 1] : NULL;
}

static void rdlock_dlm_dump_name(struct rdlock_locks_entry *e,
				 const struct rdlock_dlm_res *res)
{
	memcpy(e->name, res->name, res->len);
	e->name_len = res->len;
}

/* One lock of this node; caller holds dls->lock. */
static void rdlock_dlm_dump_lkb(struct rdlock_dlm_dump *d,
				const struct rdlock_dlm_lkb *lkb, u32 self,
				ktime_t now)
{
	const struct rdlock_dlm_req *req = lkb->req;
	struct rdlock_locks_entry *e;

	if (lkb->state == RDLOCK_DLM_LKS_DEAD)
		return;
	e = rdlock_dlm_dump_next(d);
	if (!e)
		return;
	rdlock_dlm_dump_name(e, lkb->res);
	e->node = self;
	e->id = lkb->lkid;
	e->hash = lkb->res->hash;
	e->home = RDLOCK_LOCKS_NONE;
	e->mode = rdlock_dlm_dump_mode(lkb->grmode);
	e->rqmode = req && !rdlock_dlm_req_unlock(req) ?
		    rdlock_dlm_dump_mode(req->to) : RDLOCK_LOCKS_NONE;
	/* A request for the mode it holds does not wait. */
	if (e->rqmode == e->mode)
		e->rqmode = RDLOCK_LOCKS_NONE;
	if (e->mode == RDLOCK_LOCKS_NONE)
		e->state = RDLOCK_LOCKS_WAITING;
	else if (e->rqmode != RDLOCK_LOCKS_NONE)
		e->state = RDLOCK_LOCKS_CONVERTING;
	else
		e->state = RDLOCK_LOCKS_GRANTED;
	if (e->rqmode != RDLOCK_LOCKS_NONE)
		e->ms = ktime_ms_delta(now, req->start);
	else if (lkb->grmode == RDLOCK_DLM_LOCK_EX && lkb->granted)
		e->ms = ktime_ms_delta(now, lkb->granted);
	if (lkb->grmode == RDLOCK_DLM_LOCK_EX &&
	    test_bit(RDLOCK_DLM_LKB_LVB_VALID, &lkb->iflags))
		e->flags |= RDLOCK_LOCKS_LVB_VALID;
}

/* rdlock_dlm_with_ls()'s callback: every lock, then the known waits. */
static int rdlock_dlm_dump_ls(struct rdlock_dlm_ls *dls, void *arg)
{
	struct rdlock_dlm_dump *d = arg;
	u32 self = rdlock_xport_self();
	const struct rdlock_dlm_notice *n;
	const struct rdlock_dlm_res *res;
	struct rdlock_locks_entry *e;
	struct rdlock_dlm_lkb *lkb;
	ktime_t now = ktime_get();
	unsigned long irq;
	int id;

	spin_lock_irqsave(&dls->lock, irq);
	idr_for_each_entry(&dls->lkids, lkb, id)
		rdlock_dlm_dump_lkb(d, lkb, self, now);
	list_for_each_entry(n, &dls->notices, node) {
		if (n->src == self)
			continue;
		e = rdlock_dlm_dump_next(d);
		if (!e)
			continue;
		e->node = n->src;
		e->id = n->lkid;
		e->hash = n->hash;
		e->home = RDLOCK_LOCKS_NONE;
		e->mode = RDLOCK_LOCKS_NONE;
		e->rqmode = rdlock_dlm_dump_mode(n->mode);
		e->state = RDLOCK_LOCKS_WAITING;
		e->flags = RDLOCK_LOCKS_NOTICE;
		hash_for_each_possible(dls->res, res, hnode, n->hash) {
			if (res->hash == n->hash) {
				rdlock_dlm_dump_name(e, res);
				break;
			}
		}
	}
	spin_unlock_irqrestore(&dls->lock, irq);
	return 0;
}

/**
 * rdlock_dlm_dump_locks() - RDLOCK_IOC_LOCKS: a DLM lockspace's locks here
 * @core: its rdlock lockspace's name.
 * @out: zeroed array of @max entries, filled as far as it goes.
 * @max: its capacity (may be 0).
 * @count: receives the number of entries, which may exceed @max.
 *
 * Nothing is copied to userspace here.
 *
 * Return: 0, or -ENOENT when no DLM lockspace of this node is @core.
 */
int rdlock_dlm_dump_locks(const char *core, struct rdlock_locks_entry *out,
			  u32 max, u32 *count)
{
	struct rdlock_dlm_dump d = { .out = out, .max = max };
	int ret;

	ret = rdlock_dlm_with_ls(core, rdlock_dlm_dump_ls, &d);
	if (!ret)
		*count = d.n;
	return ret;
}
