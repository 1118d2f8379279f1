// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API: a DLM lockspace's locks, for RDLOCK_IOC_LOCKS (rdlockctl
 * locks).
 *
 * This node's view: its own locks with their DLM modes, then the waits of
 * other nodes whose notices it keeps (dlm_notice.c), named when it has a
 * resource of the same hash. No node knows the others' holders.
 *
 * The cluster's (RDLOCK_LOCKS_QUERY_CLUSTER): the querier sends a DUMP
 * notice to every other node known to have the lockspace open (a notice of
 * it came, and no bye since: rdlock_dlm_ls.open_nodes); each
 * answers from a work item with a LOCK notice per lock of its own (then
 * NAME notices that carry the lock's name in parts) and an END notice with
 * how many locks it has, sent as bulk notices (a quarter of the link's send
 * buffers at most: the lock path's notices keep theirs). The notices of one
 * node arrive in the order sent, so a NAME belongs to the LOCK before it.
 * The querier gathers them in softirq into its array, and waits until
 * every node asked has ended, or none has sent anything for
 * RDLOCK_DLM_DUMP_IDLE_MS. A node that closed the lockspace meanwhile, or
 * runs a version that does not know these notices, drops the DUMP and does
 * not answer: its waits known here from notices are listed instead.
 *
 *   querier                           every other node of the lockspace
 *   rdlock_dlm_dump_locks()
 *     rdlock_dlm_dump_ls()  (its own)
 *     rdlock_dlm_query()  -- DUMP -->  rdlock_dlm_dump_notice() (softirq)
 *                                        queue on dls->asks, dump_work
 *                                      rdlock_dlm_dump_work()
 *                                        rdlock_dlm_answer()
 *   rdlock_dlm_dump_notice() <-- LOCK, NAME..., LOCK, ..., END --
 *     rdlock_dlm_query_lock(), _name(), _end()
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/hashtable.h>
#include <linux/idr.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "dlm-pri.h"
#include "xport.h"

/* A querier gives up on the nodes that sent nothing for this long. */
#define RDLOCK_DLM_DUMP_IDLE_MS	3000

/* Name bytes per NAME notice. */
#define RDLOCK_DLM_DUMP_NAME_PART	24

/* DUMP: @src asks for this node's locks, at most @max of them sent. */
struct rdlock_dlm_dump_ask_msg {
	u8 kind;
	u8 by_hash;		/* only the locks of names of @hash */
	__le16 pad;
	__le32 qid;
	__le32 max;
	__le32 pad2;
	__le64 hash;
};

/* Mode and state bytes of a LOCK notice: the uapi's, 0xff for NONE. */
#define RDLOCK_DLM_DUMP_NONE	0xff

/* LOCK: one lock of the node that answers query @qid. */
struct rdlock_dlm_dump_lock_msg {
	u8 kind;
	u8 state;		/* enum rdlock_locks_state */
	u8 mode;		/* enum rdlock_lock_mode, or _NONE */
	u8 rqmode;
	__le32 qid;
	__le32 lkid;
	u8 flags;		/* RDLOCK_LOCKS_LVB_VALID */
	u8 name_len;		/* the NAME notices that follow carry it */
	__le16 pad;
	__le64 hash;
	__le64 ms;
};

/* NAME: bytes @off .. @off + @len of the last LOCK's name. */
struct rdlock_dlm_dump_name_msg {
	u8 kind;
	u8 off;
	u8 len;
	u8 pad;
	__le32 qid;
	u8 name[RDLOCK_DLM_DUMP_NAME_PART];
};

/* END: the answer to @qid is over; the node has @total such locks. */
struct rdlock_dlm_dump_end_msg {
	u8 kind;
	u8 pad[3];
	__le32 qid;
	__le32 total;
	__le32 pad2;
};

static_assert(sizeof(struct rdlock_dlm_dump_ask_msg) <= RDLOCK_LS_NOTICE_MAX);
static_assert(sizeof(struct rdlock_dlm_dump_lock_msg) <= RDLOCK_LS_NOTICE_MAX);
static_assert(sizeof(struct rdlock_dlm_dump_name_msg) <= RDLOCK_LS_NOTICE_MAX);
static_assert(sizeof(struct rdlock_dlm_dump_end_msg) <= RDLOCK_LS_NOTICE_MAX);
static_assert(RDLOCK_RES_NAME_MAX <= U8_MAX);

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

/**
 * struct rdlock_dlm_dump - what a dump gathers
 * @q: the caller's query: its filter, array and capacity.
 * @hash: the hash of @q->match.
 * @n: entries counted on (stored while below @q->max).
 * @notices: the nodes whose waits known here are listed, a bit each.
 * @dls: with @q->cluster, the lockspace, a reference held.
 */
struct rdlock_dlm_dump {
	struct rdlock_locks_query *q;
	u64 hash;
	u32 n;
	unsigned long notices;
	struct rdlock_dlm_ls *dls;
};

/* The next entry (zeroed), or NULL when full; @d->n counts on. */
static struct rdlock_locks_entry *rdlock_dlm_dump_next(struct rdlock_dlm_dump *d)
{
	if (d->n == U32_MAX)
		return NULL;
	return d->n++ < d->q->max ? &d->q->out[d->n - 1] : NULL;
}

/* Whether @res is a name the dump lists. */
static bool rdlock_dlm_dump_match(const struct rdlock_dlm_dump *d,
				  const struct rdlock_dlm_res *res)
{
	return !d->q->match ||
	       (res->hash == d->hash && res->len == d->q->match_len &&
		!memcmp(res->name, d->q->match, res->len));
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

/* Lock @lkb of this node into @e; caller holds dls->lock. */
static void rdlock_dlm_dump_fill(struct rdlock_locks_entry *e,
				 const struct rdlock_dlm_lkb *lkb, u32 self)
{
	const struct rdlock_dlm_req *req = lkb->req;

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
static void rdlock_dlm_dump_wait(struct rdlock_dlm_dump *d,
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
 * The known waits of the nodes of @d->notices, RDLOCK_DLM_DUMP_BATCH at a
 * time, dls->lock (taken with interrupts off) dropped between.
 */
static void rdlock_dlm_dump_notices(struct rdlock_dlm_dump *d,
				    struct rdlock_dlm_ls *dls)
{
	const struct rdlock_dlm_notice *n;
	unsigned long irq;
	u32 i, pos = 0;
	bool more;

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
			if (n->src < BITS_PER_LONG &&
			    test_bit(n->src, &d->notices) &&
			    (!d->q->match || n->hash == d->hash))
				rdlock_dlm_dump_wait(d, dls, n);
		}
		spin_unlock_irqrestore(&dls->lock, irq);
		pos += RDLOCK_DLM_DUMP_BATCH;
		cond_resched();
	} while (more);
}

/*
 * rdlock_dlm_with_ls()'s callback: every lock of this node, then (not
 * asking the cluster) the known waits, RDLOCK_DLM_DUMP_BATCH at a time,
 * dls->lock (taken with interrupts off) dropped between: what changes
 * meanwhile may be missed or listed. Asking the cluster, a reference on
 * the lockspace for the query (under rdlock_dlm_mutex, which
 * rdlock_dlm_close() takes before its last wait for references).
 */
static int rdlock_dlm_dump_ls(struct rdlock_dlm_ls *dls, void *arg)
{
	struct rdlock_dlm_dump *d = arg;
	u32 self = rdlock_xport_self(), i;
	struct rdlock_locks_entry *e;
	struct rdlock_dlm_lkb *lkb;
	unsigned long irq;
	int id = 0;

	do {
		i = 0;
		spin_lock_irqsave(&dls->lock, irq);
		while (i++ < RDLOCK_DLM_DUMP_BATCH &&
		       (lkb = idr_get_next(&dls->lkids, &id))) {
			id++;
			if (lkb->state == RDLOCK_DLM_LKS_DEAD ||
			    !rdlock_dlm_dump_match(d, lkb->res))
				continue;
			e = rdlock_dlm_dump_next(d);
			if (e)
				rdlock_dlm_dump_fill(e, lkb, self);
		}
		spin_unlock_irqrestore(&dls->lock, irq);
		cond_resched();
	} while (lkb);
	if (d->q->cluster) {
		atomic_inc(&dls->refs);
		d->dls = dls;
	} else {
		rdlock_dlm_dump_notices(d, dls);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The querier                                                        */

/**
 * struct rdlock_dlm_query - a cluster-wide LOCKS waiting for answers
 * @node: on rdlock_dlm_ls.queries.
 * @qid: its id, in every notice of the answers.
 * @d: where the entries go.
 * @pending: the nodes asked whose END has not come, a bit each.
 * @answered: those whose END came.
 * @recv: LOCK notices from each node.
 * @naming: the entry each node's NAME notices fill, or NULL (full array).
 * @name_want: the length of that name.
 * @name_got: its bytes come so far.
 * @last: jiffies of the last notice taken: the querier waits
 *	RDLOCK_DLM_DUMP_IDLE_MS after it.
 * @wq: woken by each END, and by rdlock_dlm_dump_abort().
 *
 * All under rdlock_dlm_ls.lock.
 */
struct rdlock_dlm_query {
	struct list_head node;
	u32 qid;
	struct rdlock_dlm_dump *d;
	unsigned long pending;
	unsigned long answered;
	u32 recv[RDLOCK_MAX_NODES];
	struct rdlock_locks_entry *naming[RDLOCK_MAX_NODES];
	u8 name_want[RDLOCK_MAX_NODES];
	u8 name_got[RDLOCK_MAX_NODES];
	unsigned long last;
	wait_queue_head_t wq;
};

/* Query @qid still waiting for @src, or NULL; caller holds dls->lock. */
static struct rdlock_dlm_query *rdlock_dlm_query_find(struct rdlock_dlm_ls *dls,
						      u32 qid, u32 src)
{
	struct rdlock_dlm_query *q;

	if (src >= RDLOCK_MAX_NODES)
		return NULL;
	list_for_each_entry(q, &dls->queries, node)
		if (q->qid == qid && test_bit(src, &q->pending))
			return q;
	return NULL;
}

/* @src's entry being named is left unnamed ("#HASH"), its bytes zero. */
static void rdlock_dlm_query_unname(struct rdlock_dlm_query *q, u32 src)
{
	if (q->naming[src])
		memset(q->naming[src]->name, 0, sizeof(q->naming[src]->name));
	q->naming[src] = NULL;
}

/* A LOCK byte as the uapi's u32: RDLOCK_DLM_DUMP_NONE is NONE. */
static u32 rdlock_dlm_dump_u32(u8 v)
{
	return v == RDLOCK_DLM_DUMP_NONE ? RDLOCK_LOCKS_NONE : v;
}

static void rdlock_dlm_query_lock(struct rdlock_dlm_query *q, u32 src,
				  const struct rdlock_dlm_dump_lock_msg *m)
{
	struct rdlock_locks_entry *e;

	q->recv[src]++;
	rdlock_dlm_query_unname(q, src);
	e = rdlock_dlm_dump_next(q->d);
	if (!e)
		return;
	e->node = src;
	e->id = le32_to_cpu(m->lkid);
	e->hash = le64_to_cpu(m->hash);
	e->home = RDLOCK_LOCKS_NONE;
	e->mode = rdlock_dlm_dump_u32(m->mode);
	e->rqmode = rdlock_dlm_dump_u32(m->rqmode);
	e->state = m->state;
	e->flags = m->flags & RDLOCK_LOCKS_LVB_VALID;
	e->ms = le64_to_cpu(m->ms);
	/* The name shows once all of it came: "#HASH" until then. */
	if (m->name_len && m->name_len <= RDLOCK_RES_NAME_MAX) {
		q->naming[src] = e;
		q->name_want[src] = m->name_len;
		q->name_got[src] = 0;
	}
}

static void rdlock_dlm_query_name(struct rdlock_dlm_query *q, u32 src,
				  const struct rdlock_dlm_dump_name_msg *m)
{
	struct rdlock_locks_entry *e = q->naming[src];

	if (!e || m->off != q->name_got[src] || !m->len ||
	    m->len > RDLOCK_DLM_DUMP_NAME_PART ||
	    m->off + m->len > q->name_want[src]) {
		rdlock_dlm_query_unname(q, src);
		return;
	}
	memcpy(e->name + m->off, m->name, m->len);
	q->name_got[src] += m->len;
	if (q->name_got[src] == q->name_want[src]) {
		e->name_len = q->name_want[src];
		q->naming[src] = NULL;
	}
}

static void rdlock_dlm_query_end(struct rdlock_dlm_query *q, u32 src,
				 const struct rdlock_dlm_dump_end_msg *m)
{
	u32 total = le32_to_cpu(m->total);

	/* Counted, not sent: the caller's array was full. */
	if (total > q->recv[src] &&
	    check_add_overflow(q->d->n, total - q->recv[src], &q->d->n))
		q->d->n = U32_MAX;
	rdlock_dlm_query_unname(q, src);
	clear_bit(src, &q->pending);
	set_bit(src, &q->answered);
	wake_up(&q->wq);
}

/*
 * Ask every other node known to have the lockspace open for its locks and
 * gather the answers into @d, until every node asked answered, none sent
 * anything for RDLOCK_DLM_DUMP_IDLE_MS, the lockspace closes, or a fatal
 * signal. A node the ask could not be sent to counts as asked, not as
 * answered.
 */
static int rdlock_dlm_query(struct rdlock_dlm_ls *dls, struct rdlock_dlm_dump *d)
{
	struct rdlock_dlm_dump_ask_msg ask = {
		.kind = RDLOCK_DLM_NOTICE_DUMP,
		.by_hash = !!d->q->match,
		.max = cpu_to_le32(d->q->max),
		.hash = cpu_to_le64(d->hash),
	};
	long idle = msecs_to_jiffies(RDLOCK_DLM_DUMP_IDLE_MS), left;
	unsigned long nodes, asked = 0, failed = 0, last, now, irq;
	u32 self = rdlock_xport_self(), node;
	struct rdlock_dlm_query *q;
	int ret = 0;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	q->qid = get_random_u32();
	q->d = d;
	init_waitqueue_head(&q->wq);
	ask.qid = cpu_to_le32(q->qid);
	/* Listening before asking: an answer may come before the next ask. */
	spin_lock_irqsave(&dls->lock, irq);
	nodes = dls->closing ? 0 :
		READ_ONCE(dls->open_nodes) & rdlock_ls_node_mask(dls->ls);
	if (self < BITS_PER_LONG)
		__clear_bit(self, &nodes);
	q->pending = nodes;
	q->last = jiffies;
	list_add_tail(&q->node, &dls->queries);
	spin_unlock_irqrestore(&dls->lock, irq);
	for_each_set_bit(node, &nodes, RDLOCK_MAX_NODES) {
		/* Ended by rdlock_dlm_dump_abort(): ask no more. */
		if (!READ_ONCE(q->pending))
			break;
		__set_bit(node, &asked);
		if (rdlock_ls_notice_send_to(dls->ls, node, &ask, sizeof(ask)))
			__set_bit(node, &failed);
	}
	spin_lock_irqsave(&dls->lock, irq);
	q->pending &= ~failed;
	spin_unlock_irqrestore(&dls->lock, irq);
	for (;;) {
		left = wait_event_killable_timeout(q->wq, !READ_ONCE(q->pending),
						   idle);
		if (left < 0) {
			ret = -EINTR;
			break;
		}
		if (left > 0)
			break;
		/* Answers still coming: the idle time runs from the last. */
		now = jiffies;
		last = READ_ONCE(q->last) + msecs_to_jiffies(RDLOCK_DLM_DUMP_IDLE_MS);
		if (time_after_eq(now, last))
			break;
		idle = last - now;
	}
	/* No notice writes into @d once off the list. */
	spin_lock_irqsave(&dls->lock, irq);
	list_del(&q->node);
	spin_unlock_irqrestore(&dls->lock, irq);
	for (node = 0; node < RDLOCK_MAX_NODES; node++)
		rdlock_dlm_query_unname(q, node);
	d->q->asked = asked;
	d->q->answered = q->answered;
	kfree(q);
	return ret;
}

/**
 * rdlock_dlm_dump_abort() - end this node's LOCKS of every node, for good
 * @dls: the lockspace, closing (no lock left).
 *
 * Each query waiting for answers returns with what came; one that had not
 * asked yet asks nobody.
 */
void rdlock_dlm_dump_abort(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_query *q;
	unsigned long irq;

	spin_lock_irqsave(&dls->lock, irq);
	WRITE_ONCE(dls->closing, true);
	list_for_each_entry(q, &dls->queries, node) {
		q->pending = 0;
		wake_up(&q->wq);
	}
	spin_unlock_irqrestore(&dls->lock, irq);
}

/* ------------------------------------------------------------------ */
/* The answer                                                         */

/* Lock @e's LOCK notice, then its name's NAME notices, to @a->src. */
static int rdlock_dlm_answer_one(struct rdlock_dlm_ls *dls,
				 const struct rdlock_dlm_ask *a,
				 const struct rdlock_locks_entry *e)
{
	struct rdlock_dlm_dump_lock_msg m = {
		.kind = RDLOCK_DLM_NOTICE_LOCK,
		.state = e->state,
		.mode = e->mode == RDLOCK_LOCKS_NONE ? RDLOCK_DLM_DUMP_NONE :
			e->mode,
		.rqmode = e->rqmode == RDLOCK_LOCKS_NONE ?
			  RDLOCK_DLM_DUMP_NONE : e->rqmode,
		.qid = cpu_to_le32(a->qid),
		.lkid = cpu_to_le32(e->id),
		.flags = e->flags,
		.name_len = e->name_len,
		.hash = cpu_to_le64(e->hash),
		.ms = cpu_to_le64(e->ms),
	};
	struct rdlock_dlm_dump_name_msg nm = {
		.kind = RDLOCK_DLM_NOTICE_NAME,
		.qid = cpu_to_le32(a->qid),
	};
	u32 off;
	int ret;

	ret = rdlock_ls_notice_send_bulk(dls->ls, a->src, &m, sizeof(m));
	for (off = 0; !ret && off < e->name_len; off += nm.len) {
		nm.off = off;
		nm.len = min_t(u32, e->name_len - off, sizeof(nm.name));
		memset(nm.name, 0, sizeof(nm.name));
		memcpy(nm.name, e->name + off, nm.len);
		ret = rdlock_ls_notice_send_bulk(dls->ls, a->src, &nm,
						 sizeof(nm));
	}
	return ret;
}

/* Locks read under one hold of dls->lock for an answer. */
#define RDLOCK_DLM_ANSWER_BATCH	16

/*
 * Answer @a: this node's locks (of @a->hash's names), at most @a->max of
 * them sent, RDLOCK_DLM_ANSWER_BATCH copied at a time under dls->lock and
 * sent without it; then END with how many there are. A send that fails
 * ends the answer without END: the querier does not count the node as
 * answered.
 */
static void rdlock_dlm_answer(struct rdlock_dlm_ls *dls,
			      const struct rdlock_dlm_ask *a)
{
	struct rdlock_dlm_dump_end_msg end = {
		.kind = RDLOCK_DLM_NOTICE_END,
		.qid = cpu_to_le32(a->qid),
	};
	u32 self = rdlock_xport_self(), total = 0, sent = 0, nr, i, seen;
	struct rdlock_locks_entry *e;
	struct rdlock_dlm_lkb *lkb;
	unsigned long irq;
	int id = 0, ret = 0;

	e = kmalloc_array(RDLOCK_DLM_ANSWER_BATCH, sizeof(*e), GFP_KERNEL);
	if (!e)
		return;
	do {
		nr = 0;
		seen = 0;
		spin_lock_irqsave(&dls->lock, irq);
		while (nr < RDLOCK_DLM_ANSWER_BATCH &&
		       seen++ < RDLOCK_DLM_DUMP_BATCH &&
		       (lkb = idr_get_next(&dls->lkids, &id))) {
			id++;
			if (lkb->state == RDLOCK_DLM_LKS_DEAD ||
			    (a->by_hash && lkb->res->hash != a->hash))
				continue;
			total++;
			if (sent + nr >= a->max)
				continue;
			memset(&e[nr], 0, sizeof(e[nr]));
			rdlock_dlm_dump_fill(&e[nr++], lkb, self);
		}
		spin_unlock_irqrestore(&dls->lock, irq);
		for (i = 0; i < nr && !ret; i++)
			ret = rdlock_dlm_answer_one(dls, a, &e[i]);
		sent += nr;
		cond_resched();
		/* Closing (rdlock_dlm_close() waits for this work): END now. */
	} while (lkb && !ret && !READ_ONCE(dls->closing));
	kfree(e);
	if (ret)
		return;
	end.total = cpu_to_le32(total);
	if (!rdlock_ls_notice_send_bulk(dls->ls, a->src, &end, sizeof(end)))
		rdlock_dlm_count(RDLOCK_DLM_ST_DUMP_ANSWERED, 1);
}

/* dls->dump_work: answer the asks queued, oldest first. */
void rdlock_dlm_dump_work(struct work_struct *work)
{
	struct rdlock_dlm_ls *dls = container_of(work, struct rdlock_dlm_ls,
						 dump_work);
	struct rdlock_dlm_ask a;
	unsigned long irq;

	for (;;) {
		spin_lock_irqsave(&dls->lock, irq);
		if (!dls->nr_asks) {
			spin_unlock_irqrestore(&dls->lock, irq);
			return;
		}
		a = dls->asks[0];
		dls->nr_asks--;
		memmove(&dls->asks[0], &dls->asks[1],
			dls->nr_asks * sizeof(dls->asks[0]));
		spin_unlock_irqrestore(&dls->lock, irq);
		rdlock_dlm_answer(dls, &a);
	}
}

/* DUMP from @src: queue it for dump_work, RDLOCK_DLM_ASKS_MAX at most. */
static void rdlock_dlm_dump_asked(struct rdlock_dlm_ls *dls, u32 src,
				  const struct rdlock_dlm_dump_ask_msg *m)
{
	struct rdlock_dlm_ask *a;

	if (src >= RDLOCK_MAX_NODES || src == rdlock_xport_self())
		return;
	if (dls->nr_asks >= RDLOCK_DLM_ASKS_MAX) {
		rdlock_dlm_count(RDLOCK_DLM_ST_DUMP_DROPPED, 1);
		pr_warn_ratelimited("lockspace %s: node %u asked for its locks with %u asks queued: not answered\n",
				    dls->name, src, RDLOCK_DLM_ASKS_MAX);
		return;
	}
	a = &dls->asks[dls->nr_asks++];
	a->src = src;
	a->qid = le32_to_cpu(m->qid);
	a->max = min_t(u32, le32_to_cpu(m->max), RDLOCK_LOCKS_MAX);
	a->by_hash = m->by_hash;
	a->hash = le64_to_cpu(m->hash);
	queue_work(system_unbound_wq, &dls->dump_work);
}

/**
 * rdlock_dlm_dump_notice() - a DUMP, LOCK, NAME or END notice from @src
 * @dls: the lockspace.
 * @src: the node that sent it.
 * @payload: the notice.
 * @len: its length.
 *
 * In softirq or the sender's context, interrupts off; takes dls->lock.
 * A notice too short for its kind, or for no query of this node, is
 * dropped.
 */
void rdlock_dlm_dump_notice(struct rdlock_dlm_ls *dls, u32 src,
			    const void *payload, size_t len)
{
	static const u8 sizes[] = {
		[RDLOCK_DLM_NOTICE_DUMP] = sizeof(struct rdlock_dlm_dump_ask_msg),
		[RDLOCK_DLM_NOTICE_LOCK] = sizeof(struct rdlock_dlm_dump_lock_msg),
		[RDLOCK_DLM_NOTICE_NAME] = sizeof(struct rdlock_dlm_dump_name_msg),
		[RDLOCK_DLM_NOTICE_END] = sizeof(struct rdlock_dlm_dump_end_msg),
	};
	const struct rdlock_dlm_dump_lock_msg *lm = payload;
	u8 kind = *(const u8 *)payload;
	struct rdlock_dlm_query *q;

	if (kind >= ARRAY_SIZE(sizes) || !sizes[kind] || len < sizes[kind])
		return;
	spin_lock(&dls->lock);
	if (kind == RDLOCK_DLM_NOTICE_DUMP) {
		rdlock_dlm_dump_asked(dls, src, payload);
		spin_unlock(&dls->lock);
		return;
	}
	/* LOCK, NAME and END have their query's id at the same offset. */
	q = rdlock_dlm_query_find(dls, le32_to_cpu(lm->qid), src);
	if (q) {
		q->last = jiffies;
		if (kind == RDLOCK_DLM_NOTICE_LOCK)
			rdlock_dlm_query_lock(q, src, payload);
		else if (kind == RDLOCK_DLM_NOTICE_NAME)
			rdlock_dlm_query_name(q, src, payload);
		else
			rdlock_dlm_query_end(q, src, payload);
	}
	spin_unlock(&dls->lock);
}

/**
 * rdlock_dlm_dump_locks() - RDLOCK_IOC_LOCKS of a DLM lockspace
 * @core: its rdlock lockspace's name.
 * @q: the name to match, the array and its capacity, and whether to ask
 *	the other nodes; receives the count (which may exceed @q->max) and
 *	the nodes asked and answered.
 *
 * This node's locks; then, asking the cluster, every other node's as it
 * answers, then the known waits of the nodes that did not; else this
 * node's known waits of every other node. May wait for the answers
 * (RDLOCK_DLM_DUMP_IDLE_MS after the last one, killable). Nothing is
 * copied to userspace here.
 *
 * Return: 0, -EINTR, -ENOMEM, or -ENOENT when no DLM lockspace of this
 * node is @core.
 */
int rdlock_dlm_dump_locks(const char *core, struct rdlock_locks_query *q)
{
	struct rdlock_dlm_dump d = { .q = q };
	u32 self = rdlock_xport_self();
	int ret;

	static_assert(offsetof(struct rdlock_dlm_dump_lock_msg, qid) ==
		      offsetof(struct rdlock_dlm_dump_name_msg, qid));
	static_assert(offsetof(struct rdlock_dlm_dump_lock_msg, qid) ==
		      offsetof(struct rdlock_dlm_dump_end_msg, qid));
	if (q->match)
		d.hash = rdlock_dlm_hash(q->match, q->match_len);
	d.notices = ~0UL;
	if (self < BITS_PER_LONG)
		__clear_bit(self, &d.notices);
	q->asked = 0;
	q->answered = 0;
	ret = rdlock_dlm_with_ls(core, rdlock_dlm_dump_ls, &d);
	if (ret || !d.dls)
		goto out;
	ret = rdlock_dlm_query(d.dls, &d);
	if (!ret) {
		d.notices &= ~(unsigned long)q->answered;
		rdlock_dlm_dump_notices(&d, d.dls);
	}
	rdlock_dlm_put(d.dls);
out:
	if (!ret)
		q->count = d.n;
	return ret;
}
