// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: fault injection for the tests, built only with
 * "make RDLOCK_FAULT_INJECTION=y" (Documentation/rdlock/testing.rst).
 * Its knobs are debugfs files under rdlock/ (inject_*), its counters
 * lines of rdlock/cluster (*_injected, late_requests_*); without it
 * the hooks are the no-ops of xport-pri.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "xport-pri.h"

static struct {
	/* Replies to drop by failing the connection. */
	atomic_t inject_lost_replies;
	atomic64_t lost_replies;
	atomic_t inject_late_requests;
	atomic64_t late_requests;		/* held past their window */
	atomic64_t late_served;			/* of them, served since */
	atomic64_t late_applied;		/* of them, applied when served */
	/* One-way messages lost with their connection. */
	atomic_t inject_lost_msgs;
	atomic64_t lost_msgs;
	/*
	 * Verbs: atomics done at the home whose completion is lost with
	 * the connection, outcome unknown to the caller.
	 */
	atomic_t inject_lost_completions;
	atomic64_t lost_completions;
	/*
	 * Links down (inject_link_down_ms): until this time (jiffies) this
	 * node neither dials a peer nor accepts one; 0: not injected.
	 */
	unsigned long link_down_until;
	atomic64_t links_down;
} rdlock_xfault;

/* One fault of @inject, if any left: @conn fails, counted in @injected. */
static bool rdlock_fault_fail(atomic_t *inject, atomic64_t *injected,
			      struct rdlock_conn *conn)
{
	if (atomic_dec_if_positive(inject) < 0)
		return false;
	atomic64_inc(injected);
	rdlock_conn_fail(conn);
	return true;
}

/* A FAA or CAS of @req done at the home: lose its completion with the link. */
bool rdlock_fault_lost_completion(struct rdlock_xreq *req)
{
	return (req->op == RDLOCK_XOP_FAA || req->op == RDLOCK_XOP_CAS) &&
	       rdlock_fault_fail(&rdlock_xfault.inject_lost_completions,
				 &rdlock_xfault.lost_completions, req->conn);
}

/* A request applied at this home: lose its answer with @conn. */
bool rdlock_fault_lost_reply(struct rdlock_conn *conn)
{
	return rdlock_fault_fail(&rdlock_xfault.inject_lost_replies,
				 &rdlock_xfault.lost_replies, conn);
}

/*
 * A one-way message to a peer: lose it with @conn, and the sender cannot
 * tell, as when a posted send is flushed.
 */
bool rdlock_fault_lost_msg(struct rdlock_conn *conn)
{
	return rdlock_fault_fail(&rdlock_xfault.inject_lost_msgs,
				 &rdlock_xfault.lost_msgs, conn);
}

/*
 * Links down (inject_link_down_ms): writing N fails every connection of
 * this node to a peer now, and for N ms after that this node neither
 * dials a peer nor accepts one (it refuses as "not ready", which the
 * peer retries): every node sees its connections to this one down and
 * being made again, as after a cable pulled and put back, the tables
 * kept. The loopback connection stays.
 */
bool rdlock_fault_link_down(u32 node)
{
	unsigned long until = READ_ONCE(rdlock_xfault.link_down_until);

	return node != rdlock_cl.self && until &&
	       time_before(jiffies, until);
}

static int rdlock_fault_link_down_set(void *data, u64 ms)
{
	if (ms > RDLOCK_FAULT_LINK_DOWN_MS_MAX)
		return -EINVAL;
	if (!ms) {
		WRITE_ONCE(rdlock_xfault.link_down_until, 0);
		return 0;
	}
	WRITE_ONCE(rdlock_xfault.link_down_until,
		   (jiffies + msecs_to_jiffies(ms)) ?: 1);
	atomic64_inc(&rdlock_xfault.links_down);
	rdlock_fail_peer_conns();
	return 0;
}

static int rdlock_fault_link_down_get(void *data, u64 *ms)
{
	unsigned long until = READ_ONCE(rdlock_xfault.link_down_until);

	*ms = until && time_before(jiffies, until) ?
	      jiffies_to_msecs(until - jiffies) : 0;
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(rdlock_fault_link_down_fops,
			 rdlock_fault_link_down_get,
			 rdlock_fault_link_down_set, "%llu\n");

/*
 * Late requests (inject_late_requests): this home holds that many of its
 * peers' recorded requests past their senders' window while it answers
 * others, as a home whose queue fell far behind would, and serves each
 * then, answering nobody: its sender gave up and sealed it
 * (rdlock_xreq_seal()), so it must not be applied (late_applied).
 */
struct rdlock_late_req {
	struct list_head list;
	struct delayed_work dwork;
	struct rdlock_conn *conn;
	struct rdlock_wire_msg msg;
};

static DEFINE_SPINLOCK(rdlock_late_lock);	/* protects rdlock_late_reqs */
static LIST_HEAD(rdlock_late_reqs);

static void rdlock_late_req_work(struct work_struct *work)
{
	struct rdlock_late_req *l = container_of(to_delayed_work(work),
						 struct rdlock_late_req, dwork);
	u64 words[RDLOCK_XPORT_RANGE_MAX] = {};
	bool applied = false;

	spin_lock_bh(&rdlock_late_lock);
	list_del(&l->list);
	spin_unlock_bh(&rdlock_late_lock);
	if (rdlock_cl_up())
		rdlock_serve_recorded(l->conn, &l->msg, words, &applied);
	if (applied)
		atomic64_inc(&rdlock_xfault.late_applied);
	atomic64_inc(&rdlock_xfault.late_served);
	rdlock_conn_put(l->conn);
	kfree(l);
}

/* Hold @msg instead of serving it, if injected. Softirq. */
bool rdlock_late_hold(struct rdlock_conn *conn,
		      const struct rdlock_wire_msg *msg)
{
	struct rdlock_late_req *l;

	if (!le64_to_cpu(msg->req.gen) ||
	    le32_to_cpu(msg->req.op) == RDLOCK_WIRE_OP_SEAL ||
	    atomic_dec_if_positive(&rdlock_xfault.inject_late_requests) < 0)
		return false;
	l = kzalloc(sizeof(*l), GFP_ATOMIC);
	if (!l)
		return false;
	kref_get(&conn->ref);
	l->conn = conn;
	l->msg = *msg;
	INIT_DELAYED_WORK(&l->dwork, rdlock_late_req_work);
	spin_lock_bh(&rdlock_late_lock);
	list_add(&l->list, &rdlock_late_reqs);
	queue_delayed_work(rdlock_async_wq, &l->dwork,
			   msecs_to_jiffies((RDLOCK_REPLAY_WINDOW_FACTOR + 1) *
					    READ_ONCE(rdlock_op_timeout_ms)));
	spin_unlock_bh(&rdlock_late_lock);
	atomic64_inc(&rdlock_xfault.late_requests);
	return true;
}

/* Before rdlock_async_wq is destroyed. */
void rdlock_xport_fault_exit(void)
{
	struct rdlock_late_req *l;

	/* Held requests run now: the cluster is down, they are dropped. */
	spin_lock_bh(&rdlock_late_lock);
	list_for_each_entry(l, &rdlock_late_reqs, list)
		if (delayed_work_pending(&l->dwork))	/* else it runs */
			mod_delayed_work(rdlock_async_wq, &l->dwork, 0);
	spin_unlock_bh(&rdlock_late_lock);
}

/* The counters' lines of rdlock/cluster. */
void rdlock_xport_fault_show(struct seq_file *m)
{
	seq_printf(m, "late_requests_injected: %lld\nlate_requests_served: %lld\nlate_requests_applied: %lld\n",
		   (long long)atomic64_read(&rdlock_xfault.late_requests),
		   (long long)atomic64_read(&rdlock_xfault.late_served),
		   (long long)atomic64_read(&rdlock_xfault.late_applied));
	seq_printf(m, "lost_replies_injected: %lld\nlost_msgs_injected: %lld\n",
		   (long long)atomic64_read(&rdlock_xfault.lost_replies),
		   (long long)atomic64_read(&rdlock_xfault.lost_msgs));
	seq_printf(m, "lost_completions_injected: %lld\nlinks_down_injected: %lld\n",
		   (long long)atomic64_read(&rdlock_xfault.lost_completions),
		   (long long)atomic64_read(&rdlock_xfault.links_down));
}

/*
 * The knobs: each the number of faults still to inject, but
 * inject_link_down_ms, the ms its links stay down (reads what is left).
 */
void rdlock_xport_fault_init(struct dentry *root)
{
	debugfs_create_atomic_t("inject_lost_replies", 0600, root,
				&rdlock_xfault.inject_lost_replies);
	debugfs_create_atomic_t("inject_late_requests", 0600, root,
				&rdlock_xfault.inject_late_requests);
	debugfs_create_atomic_t("inject_lost_msgs", 0600, root,
				&rdlock_xfault.inject_lost_msgs);
	debugfs_create_atomic_t("inject_lost_completions", 0600, root,
				&rdlock_xfault.inject_lost_completions);
	debugfs_create_file_unsafe("inject_link_down_ms", 0600, root, NULL,
				   &rdlock_fault_link_down_fops);
}
