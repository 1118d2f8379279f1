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
#include <linux/delay.h>
#include <linux/minmax.h>
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
	/* Refusals as declared down without the key's proof (keyed). */
	atomic_t inject_forged_fences;
	atomic64_t forged_fences;
	/* Relayed proofs (inject_relayed_proofs): still to make, made. */
	atomic_t inject_relayed_proofs;
	atomic64_t relayed_proofs;
	/*
	 * Replayed proofs (inject_replayed_proofs): to send, sent; the
	 * last keyed request with a proof to each node (under replay_lock).
	 */
	atomic_t inject_replayed_proofs;
	atomic64_t replayed_proofs;
	struct rdlock_cm_req_keyed replay_req[RDLOCK_MAX_NODES];
	/* Forged table messages (inject_forged_tables): to send, sent. */
	atomic_t inject_forged_tables;
	atomic64_t forged_tables;
	/* Words naming the other backend (inject_other_backends): to send, sent. */
	atomic_t inject_other_backends;
	atomic64_t other_backends;
	/* A kept key (inject_stale_rkey): to this node, armed while 1. */
	atomic_t stale_armed;
	u32 stale_node;
	u32 stale_rkey;
	atomic64_t stale_rkeys;
	/*
	 * The next own request that may sleep sleeps this many ms with the
	 * table found and not used yet (inject_own_exec_delay_ms).
	 */
	atomic_t inject_own_exec_delay_ms;
	atomic64_t own_exec_delays;
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
 * This node's own request, two-sided, the table found and not used yet:
 * the next one sleeps inject_own_exec_delay_ms (the knob reads 0 from
 * the start of the sleep on), and the table's release waits for it.
 */
void rdlock_fault_own_exec_delay(void)
{
	int ms = atomic_xchg(&rdlock_xfault.inject_own_exec_delay_ms, 0);

	if (ms <= 0)
		return;
	atomic64_inc(&rdlock_xfault.own_exec_delays);
	msleep(min(ms, RDLOCK_FAULT_OWN_EXEC_DELAY_MS_MAX));
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

/* One fault of @inject, if any left, to a peer: counted in @injected. */
static bool rdlock_fault_to_peer(u32 node, atomic_t *inject,
				 atomic64_t *injected)
{
	if (node == rdlock_cl.self || atomic_dec_if_positive(inject) < 0)
		return false;
	atomic64_inc(injected);
	return true;
}

/*
 * Forged fences (inject_forged_fences): this node refuses that many of
 * its peers' requests it would accept, or refuse for the key (another
 * key, or none), as declared down, as a forger on the fabric would:
 * keyed, with a proof of zeroes, which the requester must ignore
 * (auth_unproven_fence); without a key at both ends, the requester
 * cannot tell and takes it. Counted in forged_fences_injected.
 */
bool rdlock_fault_forged_fence(u32 node)
{
	return rdlock_fault_to_peer(node, &rdlock_xfault.inject_forged_fences,
				    &rdlock_xfault.forged_fences);
}

/*
 * Relayed proofs (inject_relayed_proofs): this node makes that many of
 * its keyed requests' proofs to peers for another queue pair than the one
 * that sends them, as an impostor relaying a real node's proof from its
 * own queue pair would present it: the acceptor must refuse them (wrong
 * cluster key). Counted in relayed_proofs_injected.
 */
bool rdlock_fault_relayed_proof(u32 node)
{
	return rdlock_fault_to_peer(node, &rdlock_xfault.inject_relayed_proofs,
				    &rdlock_xfault.relayed_proofs);
}

static DEFINE_SPINLOCK(rdlock_fault_replay_lock);

/*
 * Replayed proofs (inject_replayed_proofs): this node sends that many of
 * its keyed requests with a proof to peers as the request it sent before
 * (its nonce and proof, made for a challenge already answered), as an
 * attacker replaying a recorded request would: the acceptor must refuse
 * it (wrong cluster key). Each keyed request with a proof is kept for
 * this, per peer. Counted in replayed_proofs_injected.
 */
void rdlock_fault_replayed_proof(u32 node, struct rdlock_cm_req_keyed *req)
{
	struct rdlock_cm_req_keyed *last;

	if (node >= RDLOCK_MAX_NODES || node == rdlock_cl.self)
		return;
	last = &rdlock_xfault.replay_req[node];
	spin_lock_bh(&rdlock_fault_replay_lock);
	if (last->nonce &&
	    atomic_dec_if_positive(&rdlock_xfault.inject_replayed_proofs) >= 0) {
		*req = *last;
		atomic64_inc(&rdlock_xfault.replayed_proofs);
	} else {
		*last = *req;
	}
	spin_unlock_bh(&rdlock_fault_replay_lock);
}

/*
 * Forged table messages (inject_forged_tables): this node sends that many
 * of its keyed connections' table messages to peers with a wrong proof,
 * as a forger injecting one on the queue pair would: the peer must refuse
 * the connection. Counted in forged_tables_injected.
 */
bool rdlock_fault_forged_table(u32 node)
{
	return rdlock_fault_to_peer(node, &rdlock_xfault.inject_forged_tables,
				    &rdlock_xfault.forged_tables);
}

/*
 * Words naming another backend (inject_other_backends): this node's next
 * that many RDLOCK_WIRE_DOWNSET messages to peers name the other resolved
 * backend than its own, as a node would that resolved another one (it
 * saw a declared node's advert, its peer not): the peer must refuse the
 * connection rather than mix atomics on the same words. Counted in
 * other_backends_injected.
 */
void rdlock_fault_other_backend(u32 node, struct rdlock_wire_downset *ds)
{
	u32 backend = le32_to_cpu(ds->backend);

	if (backend != RDLOCK_BACKEND_VERBS &&
	    backend != RDLOCK_BACKEND_TWOSIDED)
		return;
	if (!rdlock_fault_to_peer(node, &rdlock_xfault.inject_other_backends,
				  &rdlock_xfault.other_backends))
		return;
	ds->backend = cpu_to_le32(backend == RDLOCK_BACKEND_VERBS ?
				  RDLOCK_BACKEND_TWOSIDED :
				  RDLOCK_BACKEND_VERBS);
}

/*
 * A stale key (inject_stale_rkey): writing N keeps the key to node N's
 * table that our connection to N has now. The first one-sided READ to N
 * on a later connection, whose key differs, uses the kept one instead, as
 * a node would that kept an old connection's key (one cut off, or a
 * zombie): N's table must refuse it (remote_access_errors), the READ
 * fails with -EIO and the connection is made again. Counted in
 * stale_rkeys_injected; reading gives the node still armed for, or -1.
 * Writing RDLOCK_MAX_NODES or more disarms it; a node without a
 * connection is refused (-ENOTCONN).
 */
u32 rdlock_fault_stale_rkey(const struct rdlock_conn *conn, u32 rkey)
{
	u32 stale;

	if (!atomic_read_acquire(&rdlock_xfault.stale_armed))
		return rkey;
	stale = READ_ONCE(rdlock_xfault.stale_rkey);
	if (conn->node != READ_ONCE(rdlock_xfault.stale_node) ||
	    rkey == stale ||
	    atomic_cmpxchg(&rdlock_xfault.stale_armed, 1, 0) != 1)
		return rkey;
	atomic64_inc(&rdlock_xfault.stale_rkeys);
	return stale;
}

static int rdlock_fault_stale_rkey_set(void *data, u64 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;
	int ret = -ENOTCONN;

	/* -1 too (what reading gives when disarmed). */
	if (node >= RDLOCK_MAX_NODES) {
		atomic_set(&rdlock_xfault.stale_armed, 0);
		return 0;
	}
	if (node == cl->self)
		return -EINVAL;
	spin_lock_bh(&cl->lock);
	conn = cl->nodes[node].conn;
	if (conn && conn->state == RDLOCK_CONN_ESTABLISHED) {
		WRITE_ONCE(rdlock_xfault.stale_node, node);
		WRITE_ONCE(rdlock_xfault.stale_rkey, conn->rkey);
		atomic_set_release(&rdlock_xfault.stale_armed, 1);
		ret = 0;
	}
	spin_unlock_bh(&cl->lock);
	return ret;
}

static int rdlock_fault_stale_rkey_get(void *data, u64 *node)
{
	*node = atomic_read(&rdlock_xfault.stale_armed) ?
		READ_ONCE(rdlock_xfault.stale_node) : (u64)-1;
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE_SIGNED(rdlock_fault_stale_rkey_fops,
				rdlock_fault_stale_rkey_get,
				rdlock_fault_stale_rkey_set, "%lld\n");

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
	seq_printf(m, "stale_rkeys_injected: %lld\nforged_fences_injected: %lld\n",
		   (long long)atomic64_read(&rdlock_xfault.stale_rkeys),
		   (long long)atomic64_read(&rdlock_xfault.forged_fences));
	seq_printf(m, "own_exec_delays_injected: %lld\nrelayed_proofs_injected: %lld\n",
		   (long long)atomic64_read(&rdlock_xfault.own_exec_delays),
		   (long long)atomic64_read(&rdlock_xfault.relayed_proofs));
	seq_printf(m, "forged_tables_injected: %lld\nother_backends_injected: %lld\n",
		   (long long)atomic64_read(&rdlock_xfault.forged_tables),
		   (long long)atomic64_read(&rdlock_xfault.other_backends));
	seq_printf(m, "replayed_proofs_injected: %lld\n",
		   (long long)atomic64_read(&rdlock_xfault.replayed_proofs));
}

/*
 * The knobs: each the number of faults still to inject, but
 * inject_link_down_ms, the ms its links stay down (reads what is left),
 * inject_stale_rkey, a node, and inject_own_exec_delay_ms, the ms the
 * next own two-sided request sleeps.
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
	debugfs_create_atomic_t("inject_forged_fences", 0600, root,
				&rdlock_xfault.inject_forged_fences);
	debugfs_create_atomic_t("inject_relayed_proofs", 0600, root,
				&rdlock_xfault.inject_relayed_proofs);
	debugfs_create_atomic_t("inject_replayed_proofs", 0600, root,
				&rdlock_xfault.inject_replayed_proofs);
	debugfs_create_atomic_t("inject_forged_tables", 0600, root,
				&rdlock_xfault.inject_forged_tables);
	debugfs_create_atomic_t("inject_other_backends", 0600, root,
				&rdlock_xfault.inject_other_backends);
	debugfs_create_atomic_t("inject_own_exec_delay_ms", 0600, root,
				&rdlock_xfault.inject_own_exec_delay_ms);
	debugfs_create_file_unsafe("inject_link_down_ms", 0600, root, NULL,
				   &rdlock_fault_link_down_fops);
	debugfs_create_file_unsafe("inject_stale_rkey", 0600, root, NULL,
				   &rdlock_fault_stale_rkey_fops);
}
