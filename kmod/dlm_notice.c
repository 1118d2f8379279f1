// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API: resources and notices. The resources this node has
 * locks on, by hash; the notices its requests send the lockspace's nodes
 * (wait, done, room, hello, repeat, kick: dlm.c's header says what for)
 * and what a node does with those it receives (rdlock_dlm_notice()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/hashtable.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "dlm-pri.h"
#include "lockspace.h"
#include "xport.h"

/* Every node must hash a resource name to the same notice key. */
static const siphash_key_t rdlock_dlm_key = {
	{ 0x72646c6f636b2d64ULL, 0x6c6d2d6e6f746963ULL }
};

/* Known waiters kicked from the worker's stack per request. */
#define RDLOCK_DLM_KICKS_MAX	8

/*
 * Waits of one node a DLM lockspace remembers here (the wait notices of
 * its requests not done yet): a bound on the memory, and on the list the
 * notices walk in softirq, that another node's users can take here. A
 * wait over it is not remembered: this node's holders granted after it
 * get no blocking callback for it (counted, logged). Read at each wait.
 */
#define RDLOCK_DLM_NODE_WAITS_MIN	4
#define RDLOCK_DLM_NODE_WAITS_MAX	1048576
static unsigned int rdlock_dlm_node_waits_max = 65536;

static int rdlock_dlm_node_waits_max_set(const char *val,
					 const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, RDLOCK_DLM_NODE_WAITS_MIN,
				     RDLOCK_DLM_NODE_WAITS_MAX);
}

static const struct kernel_param_ops rdlock_dlm_node_waits_max_ops = {
	.set = rdlock_dlm_node_waits_max_set,
	.get = param_get_uint,
};

module_param_cb(dlm_node_waits_max, &rdlock_dlm_node_waits_max_ops,
		&rdlock_dlm_node_waits_max, 0644);
MODULE_PARM_DESC(dlm_node_waits_max,
		 "waits of one other node a DLM lockspace remembers on this node (4..1048576, default 65536); more get no blocking callback from holders granted later");
/* ------------------------------------------------------------------ */
/* Resources and notices                                              */

u64 rdlock_dlm_hash(const void *name, unsigned int len)
{
	return siphash(name, len, &rdlock_dlm_key);
}

struct rdlock_dlm_res *rdlock_dlm_res_find(struct rdlock_dlm_ls *dls,
					   u64 hash, const void *name,
					   unsigned int len)
{
	struct rdlock_dlm_res *res;

	hash_for_each_possible(dls->res, res, hnode, hash)
		if (res->hash == hash && res->len == len &&
		    !memcmp(res->name, name, len))
			return res;
	return NULL;
}

void rdlock_dlm_res_put(struct rdlock_dlm_ls *dls,
			struct rdlock_dlm_res *res)
{
	unsigned long flags;

	spin_lock_irqsave(&dls->lock, flags);
	if (--res->refs) {
		res = NULL;
	} else {
		WARN_ON(!list_empty(&res->locks));
		hash_del(&res->hnode);
	}
	spin_unlock_irqrestore(&dls->lock, flags);
	kfree(res);
}

/*
 * The wait notices of request @req of node @src are over; @req 0 (ids
 * start at 1): every wait of @src, which opened the lockspace (it has no
 * request yet) or is about to send all of its waits again.
 */
void rdlock_dlm_forget_wait(struct rdlock_dlm_ls *dls, u32 src, u64 req)
{
	struct rdlock_dlm_notice *n, *tmp;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry_safe(n, tmp, &dls->notices, node) {
		if (n->src == src && (!req || n->req == req)) {
			list_del(&n->node);
			kfree(n);
			dls->node_waits[src]--;
			rdlock_dlm_count(RDLOCK_DLM_ST_KNOWN, -1);
		}
	}
}

/*
 * This node's request @id still waits for its lock: not cancelled, and its
 * done notice not sent. A cancel forgets the request's wait here at once;
 * its own wait notice, delivered here last, must not bring it back.
 */
static bool rdlock_dlm_wait_live(struct rdlock_dlm_ls *dls, u64 id)
{
	struct rdlock_dlm_req *req;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(req, &dls->waits, wait_node)
		if (req->id == id)
			return req->lkb;
	return false;
}

/*
 * A hold that this node's request @req, known to wait, may wait for was
 * given back, or a kick for it may have been lost: it tries again now.
 * Caller holds dls->lock.
 */
static void rdlock_dlm_kick(struct rdlock_dlm_req *req)
{
	lockdep_assert_held(&req->dls->lock);
	WRITE_ONCE(req->kicks, req->kicks + 1);
	/*
	 * A back-off for a free entry stays what it is. The count before
	 * the flag, as rdlock_dlm_sleep() sets its flags before it reads the
	 * count.
	 */
	smp_mb();
	if (!test_bit(RDLOCK_DLM_REQ_DEAF, &req->iflags))
		rdlock_dlm_req_wake(req);
	rdlock_dlm_count(RDLOCK_DLM_ST_KICKED, 1);
}

/*
 * Another node's kick for this node's request @id, which waits for
 * resource @hash. In a kernel user's lockspace it and every other request
 * of this node known to wait for the resource try again (the kicker sends
 * one kick per node); in a /dev/rdlock lockspace that one only, so that a
 * user's release costs as many tries as the kicks it sends. Caller holds
 * dls->lock.
 */
static void rdlock_dlm_kicked(struct rdlock_dlm_ls *dls, u64 id, u64 hash)
{
	struct rdlock_dlm_req *req;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(req, &dls->waits, wait_node) {
		if (req->id == id) {
			rdlock_dlm_kick(req);
			if (rdlock_dlm_budgeted(dls))
				return;
		} else if (!rdlock_dlm_budgeted(dls) && req->res->hash == hash) {
			rdlock_dlm_kick(req);
		}
	}
}

/*
 * Every request of this node known to wait in the lockspace tries again:
 * a kick for it may be lost (a connection that failed), or its wait is
 * over (the lockspace was lost). Only in a /dev/rdlock lockspace, whose
 * polls its budget may put off for long; a kernel user's requests poll
 * soon enough.
 */
static void rdlock_dlm_kick_all(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_req *req;
	unsigned long flags;

	if (!rdlock_dlm_budgeted(dls))
		return;
	spin_lock_irqsave(&dls->lock, flags);
	list_for_each_entry(req, &dls->waits, wait_node)
		rdlock_dlm_kick(req);
	spin_unlock_irqrestore(&dls->lock, flags);
}

/* Is a request known to wait for resource @hash? Caller holds dls->lock. */
bool rdlock_dlm_res_waited(struct rdlock_dlm_ls *dls, u64 hash)
{
	struct rdlock_dlm_notice *n;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(n, &dls->notices, node)
		if (n->hash == hash)
			return true;
	return false;
}

/* Send @node our waits again; sending may sleep: not from softirq. */
static void rdlock_dlm_repeat_to(struct rdlock_dlm_ls *dls, u32 node)
{
	set_bit(node, &dls->repeat_nodes);
	queue_work(dls->wq, &dls->repeat_work);
}

/* The transport connected to @node (again): it may have lost notices. */
void rdlock_dlm_node_up(void *arg, u32 node)
{
	struct rdlock_dlm_ls *dls = arg;

	if (node >= RDLOCK_MAX_NODES)
		return;
	rdlock_dlm_count(RDLOCK_DLM_ST_RECONNECT, 1);
	rdlock_dlm_repeat_to(dls, node);
}

/*
 * @node was declared down: before anything it held here is released
 * (rdlock_ls_node_down()), the user's recovery hears of it, and its waits
 * are over (no done notice will come from it).
 */
void rdlock_dlm_node_down(void *arg, u32 node)
{
	struct rdlock_dlm_ls *dls = arg;
	unsigned long flags;

	if (node >= RDLOCK_MAX_NODES)
		return;
	spin_lock_irqsave(&dls->lock, flags);
	rdlock_dlm_forget_wait(dls, node, 0);
	/* Back, it says hello when it opens the lockspace again. */
	clear_bit(node, &dls->open_nodes);
	spin_unlock_irqrestore(&dls->lock, flags);
	rdlock_dlm_count(RDLOCK_DLM_ST_NODE_DOWN, 1);
	if (dls->ops && dls->ops->node_down)
		dls->ops->node_down(dls->ops_arg, node);
}

/*
 * The lockspace was lost (struct rdlock_ls_sink_ops): every lock of it is
 * gone here and may be granted elsewhere, its requests end -ESHUTDOWN; or
 * a lock of it could not move off a node declared down, and protects
 * nothing while the requests go on. The user hears it once, so that it
 * stops using what those locks guarded.
 */
void rdlock_dlm_lost(void *arg)
{
	struct rdlock_dlm_ls *dls = arg;

	rdlock_dlm_count(RDLOCK_DLM_ST_LS_LOST, 1);
	if (dls->ops && dls->ops->lost)
		dls->ops->lost(dls->ops_arg);
	/* Their next try ends them: now, not at a budgeted poll. */
	rdlock_dlm_kick_all(dls);
}

void rdlock_dlm_notice(void *arg, u32 src, const void *payload,
		       size_t len)
{
	const struct rdlock_dlm_notice_msg *m = payload;
	struct rdlock_dlm_ls *dls = arg;
	struct rdlock_dlm_notice *n;
	struct rdlock_dlm_lkb *lkb;
	struct rdlock_dlm_res *res;
	u32 self = rdlock_xport_self();
	bool known = true;
	u64 hash, req;
	u32 lkid;
	int mode;

	if (!len)
		return;
	/*
	 * Any notice but a bye comes from a node that has the lockspace
	 * open: also one whose hello, or repeat, was lost or dropped.
	 */
	if (src != self && src < RDLOCK_MAX_NODES &&
	    m->kind != RDLOCK_DLM_NOTICE_BYE)
		known = test_and_set_bit(src, &dls->open_nodes);
	switch (m->kind) {
	case RDLOCK_DLM_NOTICE_DUMP:
	case RDLOCK_DLM_NOTICE_LOCK:
	case RDLOCK_DLM_NOTICE_NAME:
	case RDLOCK_DLM_NOTICE_END:
		rdlock_dlm_dump_notice(dls, src, payload, len);
		return;
	case RDLOCK_DLM_NOTICE_BYE:
		if (src != self && src < RDLOCK_MAX_NODES)
			clear_bit(src, &dls->open_nodes);
		return;
	}
	if (len < sizeof(*m))
		return;
	hash = le64_to_cpu(m->hash);
	req = le64_to_cpu(m->req);
	lkid = le32_to_cpu(m->lkid);
	mode = m->mode;

	/* Softirq or the sender's context: the caller disabled interrupts. */
	spin_lock(&dls->lock);
	if (m->kind == RDLOCK_DLM_NOTICE_DONE) {
		rdlock_dlm_forget_wait(dls, src, req);
		spin_unlock(&dls->lock);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_KICK) {
		rdlock_dlm_kicked(dls, req, hash);
		spin_unlock(&dls->lock);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_ROOM) {
		u32 home = le16_to_cpu(m->home);

		spin_unlock(&dls->lock);
		if (home >= RDLOCK_MAX_NODES)
			return;
		/* Forgetting takes remote operations: not in softirq. */
		rdlock_dlm_count(RDLOCK_DLM_ST_TRIM, 1);
		set_bit(home, &dls->trim_homes);
		queue_work(dls->wq, &dls->trim_work);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_REPEAT) {
		if (src != self)
			rdlock_dlm_forget_wait(dls, src, 0);
		spin_unlock(&dls->lock);
		/*
		 * From a node this one did not know open (its hello came before
		 * this node listened): it may not know this node either.
		 */
		if (!known)
			rdlock_dlm_repeat_to(dls, src);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_HELLO) {
		if (src == self || src >= RDLOCK_MAX_NODES) {
			spin_unlock(&dls->lock);
			return;
		}
		/* What it sent before it (re)opened is over. */
		rdlock_dlm_forget_wait(dls, src, 0);
		spin_unlock(&dls->lock);
		rdlock_dlm_count(RDLOCK_DLM_ST_HELLO, 1);
		rdlock_dlm_repeat_to(dls, src);
		return;
	}
	if (m->kind != RDLOCK_DLM_NOTICE_WAIT ||
	    (src == self && !rdlock_dlm_wait_live(dls, req))) {
		spin_unlock(&dls->lock);
		return;
	}
	hash_for_each_possible(dls->res, res, hnode, hash) {
		if (res->hash != hash)
			continue;
		/* It may wait for words a parked release holds. */
		if (res->parked)
			rdlock_dlm_local_force(dls);
		list_for_each_entry(lkb, &res->locks, res_node) {
			if (src == self && lkb->lkid == lkid)
				continue;
			if (rdlock_dlm_conflict(mode, lkb->grmode))
				rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_BAST,
						    mode, 0, 0);
		}
	}
	/*
	 * Over the node's bound, or without memory, a holder granted later
	 * misses its BAST; the ones granted now have theirs.
	 */
	if (src >= RDLOCK_MAX_NODES ||
	    dls->node_waits[src] >= READ_ONCE(rdlock_dlm_node_waits_max)) {
		spin_unlock(&dls->lock);
		rdlock_dlm_count(RDLOCK_DLM_ST_WAIT_DROPPED, 1);
		pr_warn_ratelimited("lockspace %s: node %u has %u waits remembered here, no more (dlm_node_waits_max)\n",
				    dls->name, src, rdlock_dlm_node_waits_max);
		return;
	}
	n = kzalloc(sizeof(*n), GFP_ATOMIC);
	if (n) {
		n->src = src;
		n->lkid = lkid;
		n->hash = hash;
		n->req = req;
		n->mode = mode;
		list_add_tail(&n->node, &dls->notices);
		dls->node_waits[src]++;
		rdlock_dlm_count(RDLOCK_DLM_ST_KNOWN, 1);
	} else {
		pr_warn_ratelimited("no memory to remember a blocking notice\n");
	}
	spin_unlock(&dls->lock);
}

/* Send @m to every node (@to U32_MAX) or to node @to. */
void rdlock_dlm_send_msg(struct rdlock_dlm_ls *dls,
			 const struct rdlock_dlm_notice_msg *m, u32 to)
{
	ktime_t t0 = ktime_get();
	int ret;

	static_assert(sizeof(*m) <= RDLOCK_LS_NOTICE_MAX);
	if (to == U32_MAX)
		ret = rdlock_ls_notice_send(dls->ls, m, sizeof(*m));
	else
		ret = rdlock_ls_notice_send_to(dls->ls, to, m, sizeof(*m));
	rdlock_dlm_count_since(m->kind == RDLOCK_DLM_NOTICE_KICK ?
			       RDLOCK_DLM_ST_KICK_SENT : RDLOCK_DLM_ST_NOTICE,
			       RDLOCK_DLM_ST_NS_NOTICE, t0);
	/* A node not connected has no holder we could wait for now. */
	if (ret && ret != -ENOTCONN)
		pr_warn_ratelimited("blocking notice not sent to every node: %d\n",
				    ret);
}

static void rdlock_dlm_msg_fill(struct rdlock_dlm_req *req, u8 kind,
				int mode, u32 home,
				struct rdlock_dlm_notice_msg *m)
{
	*m = (struct rdlock_dlm_notice_msg){
		.kind = kind,
		.mode = mode,
		.home = cpu_to_le16(home),
		.lkid = cpu_to_le32(req->lkid),
		.hash = cpu_to_le64(req->res->hash),
		.req = cpu_to_le64(req->id),
	};
}

void rdlock_dlm_send_notice(struct rdlock_dlm_req *req, u8 kind,
			    int mode, u32 home)
{
	struct rdlock_dlm_notice_msg m;

	rdlock_dlm_msg_fill(req, kind, mode, home, &m);
	rdlock_dlm_send_msg(req->dls, &m, U32_MAX);
}

/*
 * @req is about to wait: its wait notice goes to every node. It is on
 * dls->waits before it is sent, so that a node whose hello comes while it
 * is being sent (and that may have dropped it, not having the lockspace
 * open yet) is sent it again by rdlock_dlm_repeat_work().
 */
void rdlock_dlm_notice_wait(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = req->dls;
	unsigned long flags;

	spin_lock_irqsave(&dls->lock, flags);
	set_bit(RDLOCK_DLM_REQ_NOTICED, &req->iflags);
	list_add_tail(&req->wait_node, &dls->waits);
	spin_unlock_irqrestore(&dls->lock, flags);
	rdlock_dlm_send_notice(req, RDLOCK_DLM_NOTICE_WAIT, req->to, 0);
}

/*
 * @req's wait is over: the done notice, after any repeat of the wait's
 * (none if it never waited).
 */
void rdlock_dlm_notice_done(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = req->dls;
	unsigned long flags;

	if (!test_bit(RDLOCK_DLM_REQ_NOTICED, &req->iflags))
		return;
	mutex_lock(&dls->notice_mutex);
	rdlock_dlm_fault_done_delay();
	spin_lock_irqsave(&dls->lock, flags);
	list_del(&req->wait_node);
	spin_unlock_irqrestore(&dls->lock, flags);
	rdlock_dlm_send_notice(req, RDLOCK_DLM_NOTICE_DONE, req->to, 0);
	mutex_unlock(&dls->notice_mutex);
}

/*
 * @req gave back a hold on its resource: every request known to wait for
 * the resource (its wait notice came, its done notice not yet) is kicked,
 * so that it tries again now instead of at its next poll. A kick is a
 * hint: one lost, or one that comes before the release reached a third
 * node's table, costs a poll's delay. This node's waiters are kicked
 * here, each of its requests whose wait notice went out (one pass over
 * them, not a look-up per notice: a user's thousands of waiters must not
 * make every release quadratic with interrupts off). In a kernel user's
 * lockspace another node gets one kick, for the first of its waits known
 * here, and kicks all of its requests that wait for the resource
 * (rdlock_dlm_kicked()); in a /dev/rdlock lockspace each wait known here
 * gets its own. Beyond RDLOCK_DLM_KICKS_MAX kicks, the others poll.
 */
void rdlock_dlm_kick_waiters(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_notice_msg m[RDLOCK_DLM_KICKS_MAX];
	u32 to[RDLOCK_DLM_KICKS_MAX], self = rdlock_xport_self();
	struct rdlock_dlm_ls *dls = req->dls;
	bool budgeted = rdlock_dlm_budgeted(dls);
	struct rdlock_dlm_notice *n;
	struct rdlock_dlm_req *w;
	unsigned int i, nr = 0;
	unsigned long flags;

	spin_lock_irqsave(&dls->lock, flags);
	list_for_each_entry(w, &dls->waits, wait_node)
		if (w != req && w->res->hash == req->res->hash)
			rdlock_dlm_kick(w);
	list_for_each_entry(n, &dls->notices, node) {
		if (n->hash != req->res->hash || n->src == self)
			continue;
		if (nr == RDLOCK_DLM_KICKS_MAX)
			continue;
		/* A kernel user's lockspace: a node's first kick wakes all. */
		if (!budgeted) {
			for (i = 0; i < nr && to[i] != n->src; i++)
				;
			if (i < nr)
				continue;
		}
		to[nr] = n->src;
		m[nr++] = (struct rdlock_dlm_notice_msg){
			.kind = RDLOCK_DLM_NOTICE_KICK,
			.mode = n->mode,
			.lkid = cpu_to_le32(n->lkid),
			.hash = cpu_to_le64(n->hash),
			.req = cpu_to_le64(n->req),
		};
	}
	spin_unlock_irqrestore(&dls->lock, flags);
	for (i = 0; i < nr; i++)
		rdlock_dlm_send_msg(dls, &m[i], to[i]);
}

/*
 * Nodes that opened the lockspace after some of our requests' wait
 * notices went out dropped them (no receiver yet), and a node connected
 * again may have lost any notice sent to it meanwhile or on the failed
 * connection: a holder it grants would never get its BAST, or a wait
 * that is over would give its holders BASTs for good. Send each of them
 * a repeat notice (it forgets our waits) and then the notices of the
 * requests still waiting, under notice_mutex: a request's done notice
 * cannot overtake its repeated wait notice (the connection to a node is
 * ordered), which would leave that node a wait that is over for good.
 */
void rdlock_dlm_repeat_work(struct work_struct *work)
{
	struct rdlock_dlm_ls *dls = container_of(work, struct rdlock_dlm_ls,
						 repeat_work);
	struct rdlock_dlm_notice_msg m;
	struct rdlock_dlm_req *req;
	bool repeated = false;
	unsigned long flags;
	u64 last, next;
	u32 node;

	mutex_lock(&dls->notice_mutex);
	for (node = 0; node < RDLOCK_MAX_NODES; node++) {
		if (!test_and_clear_bit(node, &dls->repeat_nodes))
			continue;
		rdlock_dlm_send_msg(dls, &(struct rdlock_dlm_notice_msg){
					.kind = RDLOCK_DLM_NOTICE_REPEAT }, node);
		/* In request order (ids from 1), one at a time: sends sleep. */
		for (last = 0;; last = next) {
			next = 0;
			spin_lock_irqsave(&dls->lock, flags);
			list_for_each_entry(req, &dls->waits, wait_node) {
				if (req->id <= last || (next && req->id > next))
					continue;
				next = req->id;
				rdlock_dlm_msg_fill(req, RDLOCK_DLM_NOTICE_WAIT,
						    req->to, 0, &m);
			}
			spin_unlock_irqrestore(&dls->lock, flags);
			if (!next)
				break;
			rdlock_dlm_count(RDLOCK_DLM_ST_REWAIT, 1);
			rdlock_dlm_send_msg(dls, &m, node);
		}
		repeated = true;
	}
	mutex_unlock(&dls->notice_mutex);
	/* A kick that node sent on the failed connection is lost. */
	if (repeated)
		rdlock_dlm_kick_all(dls);
}

void rdlock_dlm_trim_work(struct work_struct *work)
{
	struct rdlock_dlm_ls *dls = container_of(work, struct rdlock_dlm_ls,
						 trim_work);
	u32 home;

	for (home = 0; home < RDLOCK_MAX_NODES; home++)
		if (test_and_clear_bit(home, &dls->trim_homes))
			rdlock_ls_trim(dls->ls, home);
}

const struct rdlock_ls_sink_ops rdlock_dlm_sink_ops = {
	.notice	= rdlock_dlm_notice,
	.up	= rdlock_dlm_node_up,
	.down	= rdlock_dlm_node_down,
	.lost	= rdlock_dlm_lost,
};
