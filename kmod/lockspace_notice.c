// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: notices, small one-way messages from one node's user
 * of a lockspace to every node's (lockspace.h), and the receivers' up,
 * down and lost callbacks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "lockspace-pri.h"

/* On the wire: the lockspace's directory tag, then the user's payload. */
struct rdlock_ls_notice_msg {
	__le64 tag;
	u8 payload[RDLOCK_LS_NOTICE_MAX];
};

static_assert(sizeof(struct rdlock_ls_notice_msg) <= RDLOCK_XMSG_PAYLOAD);

struct rdlock_ls_sink {
	struct hlist_node node;
	struct rdlock_ls *ls;
	u64 tag;
	const struct rdlock_ls_sink_ops *ops;
	void *arg;
	bool told_lost;		/* under rdlock_ls_sinks_mutex */
	s64 lost_locks;		/* the lockspace's when it registered */
};

/*
 * Registered receivers, at most one per lockspace. The handler is called
 * under the lock, so unregistering waits for a delivery in progress. The
 * list changes under the mutex too, which rdlock_ls_node_down() holds
 * while it calls the down callbacks, and rdlock_ls_lost_work while it
 * calls the lost ones (they sleep).
 */
static DEFINE_SPINLOCK(rdlock_ls_sinks_lock);
static DEFINE_MUTEX(rdlock_ls_sinks_mutex);
static HLIST_HEAD(rdlock_ls_sinks);

static void rdlock_ls_deliver(u64 tag, u32 src, const void *payload,
			      size_t len)
{
	struct rdlock_ls_sink *s;
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->tag == tag)
			s->ops->notice(s->arg, src, payload, len);
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
}

void rdlock_ls_msg_handler(u32 src, const void *payload, size_t len)
{
	const struct rdlock_ls_notice_msg *m = payload;

	if (len < sizeof(m->tag) || len > sizeof(*m))
		return;
	rdlock_ls_deliver(le64_to_cpu(m->tag), src, m->payload,
			  len - sizeof(m->tag));
}

/* The transport connected to @node: tell the receivers it concerns. */
void rdlock_ls_up_handler(u32 node)
{
	struct rdlock_ls_sink *s;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node) {
		if (!s->ops->up)
			continue;
		for (i = 0; i < s->ls->nr_nodes; i++)
			if (s->ls->nodes[i] == node)
				s->ops->up(s->arg, node);
	}
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
}

/*
 * Tell the users of every lockspace lost here once, in process context:
 * the cluster epoch it was opened in ended (rdlock_ls_stale()), or a lock
 * of this node in it could not be moved off a node declared down since
 * the user registered (LOST, rdlock_ls_rehome()): a lock the user
 * believes held protects nothing.
 */
static void rdlock_ls_lost_fn(struct work_struct *work)
{
	struct rdlock_ls_sink *s;
	bool stale;

	mutex_lock(&rdlock_ls_sinks_mutex);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node) {
		stale = rdlock_ls_stale(s->ls);
		if (s->told_lost ||
		    (!stale &&
		     atomic64_read(&s->ls->lost_locks) == s->lost_locks))
			continue;
		s->told_lost = true;
		if (stale)
			pr_warn("lockspace %s: lost, telling its user\n",
				s->ls->name);
		else
			pr_warn("lockspace %s: a lock of this node was lost in a move, telling its user that the lockspace is lost\n",
				s->ls->name);
		if (s->ops->lost)
			s->ops->lost(s->arg);
	}
	mutex_unlock(&rdlock_ls_sinks_mutex);
}

static DECLARE_WORK(rdlock_ls_lost_work, rdlock_ls_lost_fn);

/*
 * Tell the users of lockspaces lost here, soon (rdlock_ls_lost_fn()): on
 * the lockspaces' queue, which has a rescuer: a file system's fence must
 * run under memory pressure too. Any context: it is also the transport's
 * epoch handler, called with its lock held and bottom halves off.
 */
void rdlock_ls_tell_lost(void)
{
	queue_work(rdlock_ls_wq, &rdlock_ls_lost_work);
}

/* Module exit, the handler cleared: no lost callback runs after this. */
void rdlock_ls_lost_flush(void)
{
	cancel_work_sync(&rdlock_ls_lost_work);
}

/**
 * rdlock_ls_notice_register() - receive the lockspace's notices
 * @ls: the lockspace.
 * @ops: the callbacks (struct rdlock_ls_sink_ops); @ops->notice is
 *	required. They must stay valid until rdlock_ls_notice_unregister().
 * @arg: their argument.
 *
 * Return: 0, -EEXIST when @ls has a receiver already, -EINVAL without
 * @ops->notice, -ENOMEM.
 */
int rdlock_ls_notice_register(struct rdlock_ls *ls,
			      const struct rdlock_ls_sink_ops *ops, void *arg)
{
	struct rdlock_ls_sink *s, *new;
	unsigned long flags;
	int ret = 0;

	if (!ops || !ops->notice)
		return -EINVAL;
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	new->ls = ls;
	new->tag = ls->tag;
	new->ops = ops;
	new->arg = arg;
	/* Locks lost before were another user's. */
	new->lost_locks = atomic64_read(&ls->lost_locks);
	mutex_lock(&rdlock_ls_sinks_mutex);
	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->ls == ls)
			ret = -EEXIST;
	if (!ret)
		hlist_add_head(&new->node, &rdlock_ls_sinks);
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
	mutex_unlock(&rdlock_ls_sinks_mutex);
	if (ret) {
		kfree(new);
		return ret;
	}
	/* Lost between its opening and now: the epoch's work came too soon. */
	if (rdlock_ls_stale(ls))
		rdlock_ls_tell_lost();
	return 0;
}

/**
 * rdlock_ls_notice_unregister() - stop receiving; no call runs after this
 * @ls: the lockspace.
 */
void rdlock_ls_notice_unregister(struct rdlock_ls *ls)
{
	struct rdlock_ls_sink *s, *found = NULL;
	unsigned long flags;

	mutex_lock(&rdlock_ls_sinks_mutex);
	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->ls == ls)
			found = s;
	if (found)
		hlist_del(&found->node);
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
	mutex_unlock(&rdlock_ls_sinks_mutex);
	kfree(found);
}

/*
 * Send a notice to @node (not this node), waiting briefly for a buffer;
 * @bulk: one of a long train, within its quarter of the send buffers, and
 * waiting longer for one.
 */
static int rdlock_ls_notice_post(u32 node, const struct rdlock_ls_notice_msg *m,
				 size_t len, bool bulk)
{
	int err, tries;

	/* No free send buffer is a short wait, not a lost notice. */
	for (tries = 0; tries < (bulk ? 10000 : 1000); tries++) {
		if (bulk)
			err = rdlock_xport_send_msg_bulk(node,
							 RDLOCK_LS_MSG_TYPE, m,
							 sizeof(m->tag) + len);
		else
			err = rdlock_xport_send_msg(node, RDLOCK_LS_MSG_TYPE, m,
						    sizeof(m->tag) + len);
		if (err != -EAGAIN)
			break;
		usleep_range(100, 200);
	}
	return err;
}

/**
 * rdlock_ls_notice_send() - send a notice to every node of the lockspace
 * @ls: the lockspace.
 * @payload: up to RDLOCK_LS_NOTICE_MAX bytes.
 * @len: its length.
 *
 * This node's receiver gets it at once, in the caller's context; the
 * other nodes' over the transport's reliable, ordered connections, so
 * two notices from one node arrive in the order sent. A node whose
 * receiver is not registered yet (it has not opened the lockspace) drops
 * it: a user that keeps state from notices has its nodes say when they
 * join (the DLM layer's hello notice). May sleep (briefly, for a send
 * buffer).
 *
 * Return: 0, or the first error of a node that could not be sent to
 * (-ENOTCONN for a node not connected: the others still get it).
 */
int rdlock_ls_notice_send(struct rdlock_ls *ls, const void *payload,
			  size_t len)
{
	struct rdlock_ls_notice_msg m = { .tag = cpu_to_le64(ls->tag) };
	u32 self = rdlock_xport_self(), i;
	int ret = 0, err;

	if (len > RDLOCK_LS_NOTICE_MAX)
		return -EINVAL;
	memcpy(m.payload, payload, len);
	for (i = 0; i < ls->nr_nodes; i++) {
		if (ls->nodes[i] == self)
			continue;
		err = rdlock_ls_notice_post(ls->nodes[i], &m, len, false);
		if (err && !ret)
			ret = err;
	}
	rdlock_ls_deliver(ls->tag, self, payload, len);
	return ret;
}

/**
 * rdlock_ls_node_mask() - the nodes of a lockspace
 * @ls: the lockspace.
 *
 * Return: a bit per node id, this node's among them; the nodes a notice of
 * rdlock_ls_notice_send() goes to.
 */
unsigned long rdlock_ls_node_mask(const struct rdlock_ls *ls)
{
	unsigned long mask = 0;
	u32 i;

	for (i = 0; i < ls->nr_nodes; i++)
		mask |= BIT(ls->nodes[i]);
	return mask;
}

static int __rdlock_ls_notice_send_to(struct rdlock_ls *ls, u32 node,
				      const void *payload, size_t len,
				      bool bulk)
{
	struct rdlock_ls_notice_msg m = { .tag = cpu_to_le64(ls->tag) };

	if (len > RDLOCK_LS_NOTICE_MAX)
		return -EINVAL;
	if (node == rdlock_xport_self()) {
		rdlock_ls_deliver(ls->tag, node, payload, len);
		return 0;
	}
	memcpy(m.payload, payload, len);
	return rdlock_ls_notice_post(node, &m, len, bulk);
}

/**
 * rdlock_ls_notice_send_to() - send a notice to one node of the lockspace
 * @ls: the lockspace.
 * @node: the node; this node's receiver gets it at once, in the caller's
 *	context.
 * @payload: up to RDLOCK_LS_NOTICE_MAX bytes.
 * @len: its length.
 *
 * Ordered with the notices rdlock_ls_notice_send() sends to @node.
 * May sleep (briefly, for a send buffer).
 *
 * Return: 0, -EINVAL, or the transport's error (-ENOTCONN...).
 */
int rdlock_ls_notice_send_to(struct rdlock_ls *ls, u32 node,
			     const void *payload, size_t len)
{
	return __rdlock_ls_notice_send_to(ls, node, payload, len, false);
}

/**
 * rdlock_ls_notice_send_bulk() - send one notice of a long train to a node
 * @ls: the lockspace.
 * @node: the node.
 * @payload: up to RDLOCK_LS_NOTICE_MAX bytes.
 * @len: its length.
 *
 * As rdlock_ls_notice_send_to(), ordered with it, but within a quarter of
 * the link's send buffers (rdlock_xport_send_msg_bulk()), so that the
 * train does not keep the lock path's notices and requests from theirs;
 * waits up to a few seconds for a buffer. Sleeps.
 *
 * Return: 0, -EINVAL, or the transport's error (-ENOTCONN, -EAGAIN...).
 */
int rdlock_ls_notice_send_bulk(struct rdlock_ls *ls, u32 node,
			       const void *payload, size_t len)
{
	return __rdlock_ls_notice_send_to(ls, node, payload, len, true);
}

/* Every lockspace user's down callback, in process context. */
void rdlock_ls_call_down(u32 dead)
{
	struct rdlock_ls_sink *s;

	mutex_lock(&rdlock_ls_sinks_mutex);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->ops->down)
			s->ops->down(s->arg, dead);
	mutex_unlock(&rdlock_ls_sinks_mutex);
}
