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
#include <linux/minmax.h>
#include <linux/sched.h>
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

/* Locks, then notices, copied under one hold of dls->lock. */
#define RDLOCK_DLM_DUMP_BATCH	256

/* Milliseconds from @t to now, 0 for an instant not past yet. */
static u64 rdlock_dlm_dump_ms(ktime_t t)
{
	return max_t(s64, 0, ktime_ms_delta(ktime_get(), t));
}

/* One lock of this node; caller holds dls->lock. */
static void rdlock_dlm_dump_lkb(struct rdlock_dlm_dump *d,
				const struct rdlock_dlm_lkb *lkb, u32 self)
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
	/* @granted is the callback work's, not under dls->lock: a hint. */
	if (e->rqmode != RDLOCK_LOCKS_NONE)
		e->ms = rdlock_dlm_dump_ms(req->start);
	else if (lkb->grmode == RDLOCK_DLM_LOCK_EX && lkb->granted)
		e->ms = rdlock_dlm_dump_ms(READ_ONCE(lkb->granted));
	if (lkb->grmode == RDLOCK_DLM_LOCK_EX &&
	    test_bit(RDLOCK_DLM_LKB_LVB_VALID, &lkb->iflags))
		e->flags |= RDLOCK_LOCKS_LVB_VALID;
}

/* Another node's wait, named if this node has its resource; dls->lock. */
static void rdlock_dlm_dump_notice(struct rdlock_dlm_dump *d,
				   struct rdlock_dlm_ls *dls,
				   const struct rdlock_dlm_notice *n)
{
	const struct rdlock_dlm_res *res;
	struct rdlock_locks_entry *e;

	e = rdlock_dlm_dump_next(d);
	if (!e)
		return;
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

/*
 * rdlock_dlm_with_ls()'s callback: every lock, then the known waits,
 * RDLOCK_DLM_DUMP_BATCH at a time, dls->lock (taken with interrupts off)
 * dropped between: what changes meanwhile may be missed or listed.
 */
static int rdlock_dlm_dump_ls(struct rdlock_dlm_ls *dls, void *arg)
{
	struct rdlock_dlm_dump *d = arg;
	u32 self = rdlock_xport_self(), i, pos = 0;
	const struct rdlock_dlm_notice *n;
	struct rdlock_dlm_lkb *lkb;
	unsigned long irq;
	bool more;
	int id = 0;

	do {
		i = 0;
		spin_lock_irqsave(&dls->lock, irq);
		while (i++ < RDLOCK_DLM_DUMP_BATCH &&
		       (lkb = idr_get_next(&dls->lkids, &id))) {
			rdlock_dlm_dump_lkb(d, lkb, self);
			id++;
		}
		spin_unlock_irqrestore(&dls->lock, irq);
		cond_resched();
	} while (lkb);
	do {
		i = 0;
		more = false;
		spin_lock_irqsave(&dls->lock, irq);
		list_for_each_entry(n, &dls->notices, node) {
			if (i++ < pos)
				continue;
			if (i > pos + RDLOCK_DLM_DUMP_BATCH) {
				more = true;
				break;
			}
			if (n->src != self)
				rdlock_dlm_dump_notice(d, dls, n);
		}
		spin_unlock_irqrestore(&dls->lock, irq);
		pos += RDLOCK_DLM_DUMP_BATCH;
		cond_resched();
	} while (more);
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
 * Return: 0, -EINTR, or -ENOENT when no DLM lockspace of this node is
 * @core.
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
