// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport's debugfs files: cluster (why a cluster is not ready:
 * state, backend, authentication refusals) and nodes (per-peer counters);
 * the fault injection knobs and counters are xport_fault.c's.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "xport-pri.h"

static const char *const rdlock_state_names[] = {
	[RDLOCK_CLUSTER_UNCONFIGURED]	= "unconfigured",
	[RDLOCK_CLUSTER_DOWN]		= "down",
	[RDLOCK_CLUSTER_CONNECTING]	= "connecting",
	[RDLOCK_CLUSTER_READY]		= "ready",
};

static const char *const rdlock_node_state_names[] = {
	[RDLOCK_NODE_DISCONNECTED]	= "disconnected",
	[RDLOCK_NODE_CONNECTING]	= "connecting",
	[RDLOCK_NODE_READY]		= "ready",
};

static const char *const rdlock_backend_names[] = {
	[RDLOCK_BACKEND_NONE]		= "none",
	[RDLOCK_BACKEND_VERBS]		= "verbs",
	[RDLOCK_BACKEND_TWOSIDED]	= "twosided",
};

static int rdlock_cluster_show(struct seq_file *m, void *v)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	seq_printf(m, "state: %s\n", rdlock_state_names[rdlock_cluster_state()]);
	spin_lock_bh(&cl->lock);
	seq_printf(m, "cluster_id: %u\nnode_id: %u\n", cl->cluster_id, cl->self);
	seq_printf(m, "cluster_name: %s\n", cl->name[0] ? cl->name : "(none)");
	seq_printf(m, "backend: %s\n", rdlock_backend_names[cl->backend]);
	seq_printf(m, "requested_backend: %s\n",
		   cl->self_adv.mode == RDLOCK_BACKEND_NONE ? "auto" :
		   rdlock_backend_names[cl->self_adv.mode]);
	seq_printf(m, "verbs_atomics: %s\n",
		   !cl->probed ? "unknown" :
		   cl->self_adv.verbs_capable ? "yes" : "no");
	seq_printf(m, "device: %s\n", !cl->probed ? "unknown" :
		   cl->self_adv.soft_device ? "software" : "hardware");
	seq_printf(m, "atomic_word_order: %s\natomic_result_order: %s\n",
		   cl->words_be ? "big-endian" : "little-endian",
		   cl->result_be ? "big-endian" : "little-endian");
	seq_printf(m, "table_slots: %u\n", cl->table.slots);
	/* Lockspaces joined in another epoch are lost (design.rst). */
	seq_printf(m, "epoch: %u\ntable_incarnation: %#llx\n", cl->epoch,
		   cl->table.incarnation);
	seq_printf(m, "view: %s\n", rdlock_view_names[READ_ONCE(cl->view)]);
	seq_printf(m, "rejected_connections: %lld\nbackend_refused: %lld\n",
		   (long long)atomic64_read(&cl->rejected),
		   (long long)atomic64_read(&cl->backend_refused));
	seq_printf(m, "cluster_key: %s\n", READ_ONCE(cl->auth_tfm) ? "set" :
		   READ_ONCE(cl->insecure_no_key) ? "none (insecure)" : "none");
	seq_printf(m, "auth_key_mismatch: %lld\nauth_bad_proof: %lld\n",
		   (long long)atomic64_read(&cl->auth_key_mismatch),
		   (long long)atomic64_read(&cl->auth_bad_proof));
	seq_printf(m, "auth_bad_reply: %lld\nauth_refused_by_peer: %lld\n",
		   (long long)atomic64_read(&cl->auth_bad_reply),
		   (long long)atomic64_read(&cl->auth_refused));
	seq_printf(m, "auth_unauthenticated_msgs: %lld\n",
		   (long long)atomic64_read(&cl->auth_unauth_msgs));
	seq_printf(m, "remote_access_errors: %lld\n",
		   (long long)atomic64_read(&cl->remote_access_errors));
	seq_printf(m, "auth_unproven_fence: %lld\nauth_bad_table: %lld\n",
		   (long long)atomic64_read(&cl->auth_unproven_fence),
		   (long long)atomic64_read(&cl->auth_bad_table));
	seq_printf(m, "resent_requests: %lld\nreplayed_requests: %lld\n",
		   (long long)atomic64_read(&cl->resent),
		   (long long)atomic64_read(&cl->replayed));
	seq_printf(m, "seals_served: %lld\nsealed_applied: %lld\nsealed_unapplied: %lld\n",
		   (long long)atomic64_read(&cl->seals_served),
		   (long long)atomic64_read(&cl->sealed_applied),
		   (long long)atomic64_read(&cl->sealed_unapplied));
	seq_printf(m, "unknown_outcomes: %lld\n",
		   (long long)atomic64_read(&cl->unknown_outcomes));
	seq_printf(m, "stale_requests: %lld\n",
		   (long long)atomic64_read(&cl->stale_requests));
	rdlock_xport_fault_show(m);
	spin_unlock_bh(&cl->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_cluster);

static int rdlock_nodes_show(struct seq_file *m, void *v)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i;

	seq_puts(m, "node state connects read write faa cas ping msgs_sent msgs_recv bytes errors served read_range faa_read cas_read\n");
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		struct rdlock_node *node = &cl->nodes[i];
		struct rdlock_node_stats *s = &node->stats;

		if (!rdlock_node_member(node))
			continue;
		seq_printf(m, "%u %s %u %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n",
			   i, rdlock_node_state_names[rdlock_node_state(i)],
			   READ_ONCE(node->connects),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_READ]),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_WRITE]),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_FAA]),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_CAS]),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_PING]),
			   (long long)atomic64_read(&s->msgs_sent),
			   (long long)atomic64_read(&s->msgs_recv),
			   (long long)atomic64_read(&s->bytes),
			   (long long)atomic64_read(&s->errors),
			   (long long)atomic64_read(&s->served),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_READ_RANGE]),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_FAA_READ]),
			   (long long)atomic64_read(&s->ops[RDLOCK_XOP_CAS_READ]));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_nodes);

void rdlock_xport_debugfs_init(struct dentry *root)
{
	rdlock_xport_fault_init(root);
	debugfs_create_file("cluster", 0444, root, NULL, &rdlock_cluster_fops);
	debugfs_create_file("nodes", 0444, root, NULL, &rdlock_nodes_fops);
}
