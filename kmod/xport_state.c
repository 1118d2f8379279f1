// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: the states of the cluster, of its nodes and of the
 * connections, and what the layers above and userspace are told of them.
 *
 * Each state changes in one function only, rdlock_*_to(), against a table
 * of the moves its life allows, as the tickets' (proto.c,
 * rdlock_ticket_to()) and rtrs' paths (rtrs_clt_change_state()) do. All
 * three are changed under rdlock_cl.lock; a move the table does not allow
 * is a bug: it warns once and is refused.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/bug.h>

#include "xport-pri.h"

static const char *const rdlock_cl_state_names[RDLOCK_CL_NR] = {
	[RDLOCK_CL_UNCONFIGURED]	= "unconfigured",
	[RDLOCK_CL_DOWN]		= "down",
	[RDLOCK_CL_STARTING]		= "starting",
	[RDLOCK_CL_LOCAL_READY]		= "local ready",
	[RDLOCK_CL_STOPPING]		= "stopping",
};

/*
 * The cluster's life: configured once, then up and down any number of
 * times. Configuration changes only while down (DOWN stays DOWN).
 */
static const u8 rdlock_cl_moves[RDLOCK_CL_NR] = {
	[RDLOCK_CL_UNCONFIGURED]	= BIT(RDLOCK_CL_DOWN),
	[RDLOCK_CL_DOWN]		= BIT(RDLOCK_CL_STARTING),
	[RDLOCK_CL_STARTING]		= BIT(RDLOCK_CL_LOCAL_READY) |
					  BIT(RDLOCK_CL_STOPPING),
	[RDLOCK_CL_LOCAL_READY]		= BIT(RDLOCK_CL_STOPPING),
	[RDLOCK_CL_STOPPING]		= BIT(RDLOCK_CL_DOWN),
};

/**
 * rdlock_cl_to() - move the cluster to its next state
 * @to: the new state.
 *
 * The one place the cluster's state changes; rdlock_cl.lock held (and
 * cfg_mutex, but for STARTING to LOCAL_READY).
 *
 * Return: true when moved; false, and a warning once, for a move
 * the cluster's life does not allow.
 */
bool rdlock_cl_to(enum rdlock_cl_state to)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	lockdep_assert_held(&cl->lock);
	if (WARN_ONCE(!rdlock_move_ok(rdlock_cl_moves, RDLOCK_CL_NR,
				      cl->state, to),
		      "rdlock: cluster moved from %s to state %d\n",
		      rdlock_cl_state_names[cl->state], to))
		return false;
	WRITE_ONCE(cl->state, to);
	return true;
}

const char *const rdlock_view_names[RDLOCK_VIEW_NR] = {
	[RDLOCK_VIEW_LEARNING]	= "learning",
	[RDLOCK_VIEW_LEARNED]	= "learned",
	[RDLOCK_VIEW_CUT_OFF]	= "cut_off",
};

/**
 * rdlock_view_to() - what this node knows of its epoch, moved on
 * @to: the new view.
 *
 * As rdlock_cl_to(); rdlock_cl.lock held. Each cluster up begins
 * LEARNING (rdlock_view_begin()).
 *
 * Return: true when moved, false when refused.
 */
bool rdlock_view_to(enum rdlock_view to)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	lockdep_assert_held(&cl->lock);
	if (WARN_ONCE(!rdlock_view_move_ok(cl->view, to),
		      "rdlock: view moved from %s to %d\n",
		      rdlock_view_names[cl->view], to))
		return false;
	WRITE_ONCE(cl->view, to);
	return true;
}

/* A cluster up, with a new table: nothing learned of its epoch yet. */
void rdlock_view_begin(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	lockdep_assert_held(&cl->lock);
	WARN_ON_ONCE(cl->state != RDLOCK_CL_STARTING);
	WRITE_ONCE(cl->view, RDLOCK_VIEW_LEARNING);
}

static const char *const rdlock_member_state_names[RDLOCK_MEMBER_NR] = {
	[RDLOCK_MEMBER_ABSENT]		= "absent",
	[RDLOCK_MEMBER_CONFIGURED]	= "configured",
	[RDLOCK_MEMBER_FENCED]		= "fenced",
	[RDLOCK_MEMBER_DOWN]		= "down",
	[RDLOCK_MEMBER_RETURNED]	= "returned",
};

/**
 * rdlock_member_to() - move a node to its next place in the cluster
 * @node: the node.
 * @to: the new state.
 *
 * As rdlock_cl_to(), for a node's membership; rdlock_cl.lock held.
 *
 * Return: true when moved, false when refused.
 */
bool rdlock_member_to(struct rdlock_node *node, enum rdlock_member_state to)
{
	lockdep_assert_held(&rdlock_cl.lock);
	if (WARN_ONCE(!rdlock_member_move_ok(node->member, to),
		      "rdlock: node %u moved from %s to state %d\n", node->id,
		      rdlock_member_state_names[node->member], to))
		return false;
	WRITE_ONCE(node->member, to);
	return true;
}

static const char *const rdlock_conn_state_names[RDLOCK_CONN_NR] = {
	[RDLOCK_CONN_CONNECTING]	= "connecting",
	[RDLOCK_CONN_ESTABLISHED]	= "established",
	[RDLOCK_CONN_CLOSING]		= "closing",
};

/* A connection's life: one way, CLOSING its end, whenever it fails. */
static const u8 rdlock_conn_moves[RDLOCK_CONN_NR] = {
	[RDLOCK_CONN_CONNECTING]	= BIT(RDLOCK_CONN_ESTABLISHED) |
					  BIT(RDLOCK_CONN_CLOSING),
	[RDLOCK_CONN_ESTABLISHED]	= BIT(RDLOCK_CONN_CLOSING),
};

/**
 * rdlock_conn_to() - move a connection to its next state
 * @conn: the connection.
 * @to: the new state.
 *
 * As rdlock_cl_to(), for a connection; rdlock_cl.lock held. The move to
 * CLOSING is made under @conn's post_lock too: after it, nothing new is
 * posted on @conn (rdlock_conn_post_send()).
 *
 * Return: true when moved, false when refused.
 */
bool rdlock_conn_to(struct rdlock_conn *conn, enum rdlock_conn_state to)
{
	lockdep_assert_held(&rdlock_cl.lock);
	if (WARN_ONCE(!rdlock_move_ok(rdlock_conn_moves, RDLOCK_CONN_NR,
				      conn->state, to),
		      "rdlock: node %u: connection moved from %s to state %d\n",
		      conn->node, rdlock_conn_state_names[conn->state], to))
		return false;
	if (to == RDLOCK_CONN_CLOSING) {
		spin_lock_bh(&conn->post_lock);
		WRITE_ONCE(conn->state, to);
		spin_unlock_bh(&conn->post_lock);
	} else {
		WRITE_ONCE(conn->state, to);
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* What they are told: uapi RDLOCK_CLUSTER_* and RDLOCK_NODE_*        */

/* Called with rdlock_cl.lock held. */
static int __rdlock_node_state(u32 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn = cl->nodes[node].conn;

	if (!rdlock_cl_up())
		return RDLOCK_NODE_DISCONNECTED;
	if (conn && conn->state == RDLOCK_CONN_ESTABLISHED &&
	    !test_bit(RDLOCK_CONN_FAILED, &conn->flags) &&
	    (node != cl->self || cl->state == RDLOCK_CL_LOCAL_READY))
		return RDLOCK_NODE_READY;
	return RDLOCK_NODE_CONNECTING;
}

int rdlock_node_state(u32 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	int state;

	spin_lock_bh(&cl->lock);
	state = __rdlock_node_state(node);
	spin_unlock_bh(&cl->lock);
	return state;
}

int rdlock_cluster_state(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	int state = RDLOCK_CLUSTER_READY;
	u32 i;

	spin_lock_bh(&cl->lock);
	if (cl->state == RDLOCK_CL_UNCONFIGURED) {
		state = RDLOCK_CLUSTER_UNCONFIGURED;
	} else if (!rdlock_cl_up()) {
		state = RDLOCK_CLUSTER_DOWN;
	} else if (cl->backend == RDLOCK_BACKEND_NONE) {
		state = RDLOCK_CLUSTER_CONNECTING;
	} else {
		/*
		 * A node declared down is out until it returns; a node whose
		 * table is new is not ready before it learned from every live
		 * peer which nodes are declared down (rdlock_recv_downset());
		 * a node a peer declared down, never again before its cluster
		 * goes down: it would be a cluster of its own.
		 */
		if (cl->view != RDLOCK_VIEW_LEARNED)
			state = RDLOCK_CLUSTER_CONNECTING;
		for (i = 0; i < RDLOCK_MAX_NODES; i++)
			if (rdlock_node_live(&cl->nodes[i]) &&
			    __rdlock_node_state(i) != RDLOCK_NODE_READY)
				state = RDLOCK_CLUSTER_CONNECTING;
	}
	spin_unlock_bh(&cl->lock);
	return state;
}
