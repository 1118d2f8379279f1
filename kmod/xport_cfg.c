// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: its module parameters and the cluster configuration
 * (cluster id, this node, peers, key; up and down). The device layer
 * validates what userspace passes and calls these; nothing above the
 * transport writes its state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/rdlock.h>

#include "xport-pri.h"
#include "uapi_check.h"

int rdlock_backend_param = RDLOCK_BACKEND_NONE;
unsigned int rdlock_table_slots_param = 32768;
unsigned int rdlock_op_timeout_ms = 5000;

static const char *const rdlock_backend_param_names[] = {
	[RDLOCK_BACKEND_NONE]		= "auto",
	[RDLOCK_BACKEND_VERBS]		= "verbs",
	[RDLOCK_BACKEND_TWOSIDED]	= "twosided",
};

static int rdlock_backend_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(rdlock_backend_param_names, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(rdlock_backend_param, i);
	return 0;
}

static int rdlock_backend_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  rdlock_backend_param_names[READ_ONCE(rdlock_backend_param)]);
}

static const struct kernel_param_ops rdlock_backend_ops = {
	.set = rdlock_backend_set,
	.get = rdlock_backend_get,
};

module_param_cb(backend, &rdlock_backend_ops, NULL, 0644);
MODULE_PARM_DESC(backend,
		 "atomic backend: auto (verbs if every node can), verbs, twosided; read when the cluster goes up");

static int rdlock_slots_set(const char *val, const struct kernel_param *kp)
{
	/* One registration of physically contiguous memory: at most 4 MiB. */
	return param_set_uint_minmax(val, kp, RDLOCK_XPORT_RESERVED_SLOTS + 1,
				     (4U << 20) / sizeof(u64));
}

static const struct kernel_param_ops rdlock_slots_ops = {
	.set = rdlock_slots_set,
	.get = param_get_uint,
};

module_param_cb(table_slots, &rdlock_slots_ops, &rdlock_table_slots_param,
		0644);
MODULE_PARM_DESC(table_slots,
		 "8-byte slots in this node's lock table (9..524288, default 32768; lockspaces need more than 1225); read when the cluster goes up");

/* 0 would give every synchronous operation up at once. */
#define RDLOCK_OP_TIMEOUT_MAX_MS	3600000U

static int rdlock_op_timeout_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, RDLOCK_OP_TIMEOUT_MAX_MS);
}

static const struct kernel_param_ops rdlock_op_timeout_ops = {
	.set = rdlock_op_timeout_set,
	.get = param_get_uint,
};

module_param_cb(op_timeout_ms, &rdlock_op_timeout_ops, &rdlock_op_timeout_ms,
		0644);
MODULE_PARM_DESC(op_timeout_ms,
		 "default timeout of a synchronous remote operation (1..3600000, default 5000)");

/* Another node (self included) already has this address? */
/* Another node (self included) already has this address? */
static bool rdlock_addr_taken(const struct sockaddr_storage *ss)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (rdlock_node_member(&cl->nodes[i]) &&
		    rdlock_sockaddr_equal(&cl->nodes[i].addr, ss))
			return true;
	return false;
}

/* Configure node @id at @ss; NULL: no longer. While down. */
static void rdlock_set_node(u32 id, const struct sockaddr_storage *ss)
{
	struct rdlock_node *node = &rdlock_cl.nodes[id];

	spin_lock_bh(&rdlock_cl.lock);
	if (ss) {
		if (rdlock_member_to(node, RDLOCK_MEMBER_CONFIGURED))
			node->addr = *ss;
	} else if (node->member != RDLOCK_MEMBER_ABSENT) {
		rdlock_member_to(node, RDLOCK_MEMBER_ABSENT);
	}
	spin_unlock_bh(&rdlock_cl.lock);
}

/**
 * rdlock_xport_configure() - set the cluster id and this node
 * @cluster_id: the cluster's id.
 * @node_id: this node's id, below RDLOCK_MAX_NODES.
 * @addr: this node's address.
 * @name: the cluster's name, a checked buffer of RDLOCK_CLUSTER_NAME_MAX
 *	bytes, NUL-padded (not necessarily terminated); empty: none.
 * @no_key: RDLOCK_CONFIG_INSECURE_NO_KEY: up without a cluster key is
 *	allowed (tests only).
 *
 * Forgets every peer and the key: they belong to the old configuration.
 *
 * Return: 0, or -EBUSY while the cluster is up.
 */
int rdlock_xport_configure(u32 cluster_id, u32 node_id,
			   const struct sockaddr_storage *addr,
			   const char *name, bool no_key)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	int ret = 0;
	u32 i;

	mutex_lock(&cl->cfg_mutex);
	if (rdlock_cl_up()) {
		ret = -EBUSY;
		goto out;
	}
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		rdlock_set_node(i, NULL);
	spin_lock_bh(&cl->lock);
	cl->cluster_id = cluster_id;
	cl->self = node_id;
	memset(cl->name, 0, sizeof(cl->name));
	memcpy(cl->name, name, RDLOCK_CLUSTER_NAME_MAX);
	if (cl->state == RDLOCK_CL_UNCONFIGURED)
		rdlock_cl_to(RDLOCK_CL_DOWN);
	spin_unlock_bh(&cl->lock);
	rdlock_set_node(node_id, addr);
	/* A new configuration has no key until one is set for it. */
	if (cl->auth_tfm)
		rdlock_auth_set_key(NULL, 0);
	WRITE_ONCE(cl->insecure_no_key, no_key);
	if (no_key)
		pr_warn("configured INSECURE: up without a cluster key is allowed (tests only)\n");
out:
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

/**
 * rdlock_xport_cluster_name() - the cluster's name
 * @buf: RDLOCK_CLUSTER_NAME_MAX + 1 bytes; receives it, NUL-terminated: ""
 *	when it has none or this node is not configured.
 */
void rdlock_xport_cluster_name(char *buf)
{
	spin_lock_bh(&rdlock_cl.lock);
	memcpy(buf, rdlock_cl.name, RDLOCK_CLUSTER_NAME_MAX + 1);
	spin_unlock_bh(&rdlock_cl.lock);
}

/**
 * rdlock_xport_set_peer() - add or remove a peer while the cluster is down
 * @node_id: the peer's id, below RDLOCK_MAX_NODES.
 * @addr: its address to add it, NULL to remove it.
 *
 * Return: 0; -ENXIO before rdlock_xport_configure(); -EBUSY while up;
 * -EEXIST for a node id or an address already configured; -ENOENT to
 * remove a node that is not a configured peer.
 */
int rdlock_xport_set_peer(u32 node_id, const struct sockaddr_storage *addr)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	int ret = 0;

	mutex_lock(&cl->cfg_mutex);
	if (cl->state == RDLOCK_CL_UNCONFIGURED)
		ret = -ENXIO;
	else if (rdlock_cl_up())
		ret = -EBUSY;
	else if (addr && (rdlock_node_member(&cl->nodes[node_id]) ||
			  rdlock_addr_taken(addr)))
		ret = -EEXIST;
	else if (!addr && (!rdlock_node_member(&cl->nodes[node_id]) ||
			   node_id == cl->self))
		ret = -ENOENT;
	else
		rdlock_set_node(node_id, addr);
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

/**
 * rdlock_xport_set_key() - set or clear the cluster key while down
 * @key: the key, never read back.
 * @len: its length, 0 to clear it.
 *
 * Return: 0; -ENXIO before rdlock_xport_configure(); -EBUSY while up; or
 * the error of rdlock_auth_set_key().
 */
int rdlock_xport_set_key(const u8 *key, unsigned int len)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	int ret;

	mutex_lock(&cl->cfg_mutex);
	if (cl->state == RDLOCK_CL_UNCONFIGURED)
		ret = -ENXIO;
	else if (rdlock_cl_up())
		ret = -EBUSY;
	else
		ret = rdlock_auth_set_key(key, len);
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

/* Up needs a cluster key, or a configuration that does without. */
static int rdlock_xport_key_check(const struct rdlock_cluster *cl)
{
	lockdep_assert_held(&cl->cfg_mutex);
	if (cl->auth_tfm || cl->insecure_no_key)
		return 0;
	pr_err("up refused: no cluster key (rdlockctl keygen, then key_file or --key-file on every node)\n");
	return -ENOKEY;
}

/**
 * rdlock_xport_up_allowed() - may this node come up as configured
 *
 * Checked before up joins the cluster engine's membership, so that a
 * node refused for its key never shows there (rdlock_xport_up_down()
 * checks again).
 *
 * Return: 0; -ENXIO before rdlock_xport_configure(); -ENOKEY: no key.
 */
int rdlock_xport_up_allowed(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	int ret;

	mutex_lock(&cl->cfg_mutex);
	if (cl->state == RDLOCK_CL_UNCONFIGURED)
		ret = -ENXIO;
	else
		ret = rdlock_xport_key_check(cl);
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

/* Up, with a cluster key or configured not to need one. */
static int rdlock_xport_up_keyed(struct rdlock_cluster *cl, bool forming)
{
	int ret;

	ret = rdlock_xport_key_check(cl);
	if (ret)
		return ret;
	ret = rdlock_cluster_up(forming);
	if (!ret && !cl->auth_tfm)
		pr_warn("cluster %u up WITHOUT a cluster key (configured insecure): any host on the fabric that takes a node's address can connect as that node and write the lock tables\n",
			cl->cluster_id);
	return ret;
}

/**
 * rdlock_xport_up_down() - bring the cluster up or take it down
 * @up: which.
 * @busy: for down: called under the configuration mutex; true refuses
 *	(the layers above still use the tables).
 * @forming: for up: the cluster engine's membership is to form this
 *	epoch (rdlock_xport_form()) before any node is ready; false: it is
 *	formed at once, of every configured node.
 *
 * Up needs a cluster key unless the configuration allowed none
 * (RDLOCK_CONFIG_INSECURE_NO_KEY), which is said loudly at every up.
 *
 * Return: 0; -ENXIO before rdlock_xport_configure(); -EALREADY; -ENOKEY:
 * up without a key; -EBUSY when @busy says so; or the error of bringing
 * it up.
 */
int rdlock_xport_up_down(bool up, bool (*busy)(void), bool forming)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	int ret = 0;

	mutex_lock(&cl->cfg_mutex);
	if (cl->state == RDLOCK_CL_UNCONFIGURED)
		ret = -ENXIO;
	else if (rdlock_cl_up() == up)
		ret = -EALREADY;
	else if (up)
		ret = rdlock_xport_up_keyed(cl, forming);
	else if (busy && busy())
		ret = -EBUSY;
	else
		rdlock_cluster_down();
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

/**
 * rdlock_xport_status() - the cluster's state, for RDLOCK_IOC_STATUS
 * @st: its state, backend, node and cluster ids are filled in.
 * @ns: RDLOCK_MAX_NODES entries; the configured nodes are filled in.
 *
 * Return: the number of configured nodes in @ns.
 */
u32 rdlock_xport_status(struct rdlock_status *st,
			struct rdlock_node_status *ns)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i, n = 0;

	mutex_lock(&cl->cfg_mutex);
	st->state = rdlock_cluster_state();
	spin_lock_bh(&cl->lock);
	st->backend = cl->backend;
	st->node_id = cl->state != RDLOCK_CL_UNCONFIGURED ? cl->self : 0;
	st->cluster_id = cl->state != RDLOCK_CL_UNCONFIGURED ?
			 cl->cluster_id : 0;
	st->flags = (cl->auth_tfm ? RDLOCK_STATUS_KEYED : 0) |
		    (cl->insecure_no_key ? RDLOCK_STATUS_INSECURE_NO_KEY : 0);
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		struct rdlock_node *node = &cl->nodes[i];

		if (!rdlock_node_member(node))
			continue;
		ns[n].node_id = i;
		ns[n].connects = node->connects;
		ns[n].errors = atomic64_read(&node->stats.errors);
		if (i == cl->self)
			ns[n].flags |= RDLOCK_NODE_SELF;
		if (node->adv_known && node->adv.verbs_capable)
			ns[n].flags |= RDLOCK_NODE_VERBS_ATOMICS;
		if (rdlock_node_fenced(node))
			ns[n].flags |= RDLOCK_NODE_FENCED;
		if (node->member == RDLOCK_MEMBER_RETURNED)
			ns[n].flags |= RDLOCK_NODE_RETURNED;
		n++;
	}
	spin_unlock_bh(&cl->lock);
	for (i = 0; i < n; i++)
		ns[i].state = rdlock_node_state(ns[i].node_id);
	mutex_unlock(&cl->cfg_mutex);
	return n;
}

/**
 * rdlock_xport_counters() - the transport's counters, for RDLOCK_IOC_STATS
 * @c: RDLOCK_XC_NR values, by enum rdlock_xport_counter.
 */
void rdlock_xport_counters(u64 *c)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	c[RDLOCK_XC_REJECTED] = atomic64_read(&cl->rejected);
	c[RDLOCK_XC_BACKEND_REFUSED] = atomic64_read(&cl->backend_refused);
	c[RDLOCK_XC_KEY_MISMATCH] = atomic64_read(&cl->auth_key_mismatch);
	c[RDLOCK_XC_BAD_PROOF] = atomic64_read(&cl->auth_bad_proof);
	c[RDLOCK_XC_BAD_REPLY] = atomic64_read(&cl->auth_bad_reply);
	c[RDLOCK_XC_REFUSED_BY_PEER] = atomic64_read(&cl->auth_refused);
	c[RDLOCK_XC_UNAUTH_MSGS] = atomic64_read(&cl->auth_unauth_msgs);
	c[RDLOCK_XC_UNPROVEN_FENCE] = atomic64_read(&cl->auth_unproven_fence);
	c[RDLOCK_XC_BAD_TABLE] = atomic64_read(&cl->auth_bad_table);
	c[RDLOCK_XC_REMOTE_ACCESS] = atomic64_read(&cl->remote_access_errors);
	c[RDLOCK_XC_RESENT] = atomic64_read(&cl->resent);
	c[RDLOCK_XC_REPLAYED] = atomic64_read(&cl->replayed);
	c[RDLOCK_XC_UNKNOWN_OUTCOMES] = atomic64_read(&cl->unknown_outcomes);
	c[RDLOCK_XC_STALE] = atomic64_read(&cl->stale_requests);
}

/**
 * rdlock_xport_link_counters() - counters of the links to each node
 * @links: RDLOCK_MAX_NODES entries; one is filled in per configured node,
 *	this one included, in order of id.
 *
 * Return: the number of entries filled in.
 */
u32 rdlock_xport_link_counters(struct rdlock_xport_link *links)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i, op, n = 0;

	mutex_lock(&cl->cfg_mutex);
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		struct rdlock_node *node = &cl->nodes[i];
		struct rdlock_node_stats *s = &node->stats;
		u64 *c = links[n].c;

		if (!rdlock_node_member(node))
			continue;
		links[n].node = i;
		c[RDLOCK_XLC_CONNECTS] = READ_ONCE(node->connects);
		c[RDLOCK_XLC_ERRORS] = atomic64_read(&s->errors);
		c[RDLOCK_XLC_MSGS_SENT] = atomic64_read(&s->msgs_sent);
		c[RDLOCK_XLC_MSGS_RECV] = atomic64_read(&s->msgs_recv);
		c[RDLOCK_XLC_BYTES] = atomic64_read(&s->bytes);
		c[RDLOCK_XLC_SERVED] = atomic64_read(&s->served);
		for (op = 0; op < RDLOCK_XOP_NR; op++)
			c[RDLOCK_XLC_OPS + op] = atomic64_read(&s->ops[op]);
		n++;
	}
	mutex_unlock(&cl->cfg_mutex);
	return n;
}
