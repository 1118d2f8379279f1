// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock protocols' debugfs file: protocols, the counters of every lock
 * protocol on this node (tickets per state among them); lockspaces show
 * the same counters of their own (lockspace_debugfs.c).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "proto.h"

static const char *const rdlock_xop_names[RDLOCK_XOP_NR] = {
	[RDLOCK_XOP_READ]	= "read",
	[RDLOCK_XOP_WRITE]	= "write",
	[RDLOCK_XOP_FAA]	= "faa",
	[RDLOCK_XOP_CAS]	= "cas",
	[RDLOCK_XOP_PING]	= "ping",
	[RDLOCK_XOP_READ_RANGE]	= "read_range",
	[RDLOCK_XOP_FAA_READ]	= "faa_read",
	[RDLOCK_XOP_CAS_READ]	= "cas_read",
};

/* One "name: value" line per counter: tests and tools parse them. */
void rdlock_proto_stats_show(struct seq_file *m, struct rdlock_proto_stats *s)
{
	int op;

	seq_printf(m, "acquires: %lld\nwaits: %lld\nremote_ops: %lld\n",
		   (long long)atomic64_read(&s->acquires),
		   (long long)atomic64_read(&s->waits),
		   (long long)atomic64_read(&s->remote_ops));
	for (op = 0; op < RDLOCK_XOP_NR; op++)
		seq_printf(m, "ops_%s: %lld\n", rdlock_xop_names[op],
			   (long long)atomic64_read(&s->ops[op]));
	seq_printf(m, "posted_releases: %lld\nposted_failed: %lld\n",
		   (long long)atomic64_read(&s->posted_releases),
		   (long long)atomic64_read(&s->posted_failed));
	seq_printf(m, "retries: %lld\nstall_resets: %lld\noverflow_resets: %lld\n",
		   (long long)atomic64_read(&s->retries),
		   (long long)atomic64_read(&s->stall_resets),
		   (long long)atomic64_read(&s->overflow_resets));
	seq_printf(m, "lease_expiries: %lld\nabandoned: %lld\n",
		   (long long)atomic64_read(&s->lease_expiries),
		   (long long)atomic64_read(&s->abandoned));
	seq_printf(m, "upgrades: %lld\nupgrade_waits: %lld\n",
		   (long long)atomic64_read(&s->upgrades),
		   (long long)atomic64_read(&s->upgrade_waits));
	seq_printf(m, "notifies: %lld\nnotify_stale: %lld\nrefetches: %lld\n",
		   (long long)atomic64_read(&s->notifies),
		   (long long)atomic64_read(&s->notify_stale),
		   (long long)atomic64_read(&s->refetches));
	seq_printf(m, "cql_signals_refused: %lld\n",
		   (long long)atomic64_read(&s->cql_signals_refused));
	seq_printf(m, "cql_refetch_expired: %lld\nversion_resets: %lld\n",
		   (long long)atomic64_read(&s->cql_refetch_expired),
		   (long long)atomic64_read(&s->version_resets));
	for (op = 0; op < RDLOCK_CQL_RESET_NR; op++)
		seq_printf(m, "cql_resets_%s: %lld\n", rdlock_cql_reset_names[op],
			   (long long)atomic64_read(&s->cql_resets[op]));
	seq_printf(m, "cql_reset_aborts: %lld\n",
		   (long long)atomic64_read(&s->cql_reset_aborts));
	seq_printf(m, "cql_local_handovers: %lld\ncql_local_shares: %lld\n",
		   (long long)atomic64_read(&s->cql_local_handovers),
		   (long long)atomic64_read(&s->cql_local_shares));
	seq_printf(m, "cas_local_shares: %lld\ncas_settles: %lld\n",
		   (long long)atomic64_read(&s->cas_local_shares),
		   (long long)atomic64_read(&s->cas_settles));
	seq_printf(m, "bakery_unknowns: %lld\nbakery_censuses: %lld\n",
		   (long long)atomic64_read(&s->bakery_unknowns),
		   (long long)atomic64_read(&s->bakery_censuses));
	seq_printf(m, "bakery_phantoms: %lld\nbakery_census_resets: %lld\n",
		   (long long)atomic64_read(&s->bakery_phantoms),
		   (long long)atomic64_read(&s->bakery_census_resets));
	/* This node's, not a lockspace's. */
	if (s == &rdlock_proto_stats) {
		u32 parked, live = rdlock_proto_finishing(&parked);

		seq_printf(m, "cas_holds: %u\nbakery_words: %u\n",
			   rdlock_proto_cas_holds(),
			   rdlock_proto_bakery_words());
		seq_printf(m, "tickets_finishing: %u\ntickets_finishing_parked: %u\n",
			   live, parked);
		live = rdlock_proto_resetting(&parked);
		seq_printf(m, "resets_running: %u\nresets_parked: %u\n", live,
			   parked);
	}
	for (op = 0; op < RDLOCK_TICKET_NR; op++)
		seq_printf(m, "tickets_%s: %lld\n", rdlock_ticket_state_names[op],
			   (long long)atomic64_read(&s->tickets[op]));
	seq_printf(m, "ticket_bad_moves: %lld\ntickets_unfinished: %lld\n",
		   (long long)atomic64_read(&s->ticket_bad_moves),
		   (long long)atomic64_read(&s->tickets_unfinished));
	seq_printf(m, "finish_kicks: %lld\n",
		   (long long)atomic64_read(&s->finish_kicks));
	seq_printf(m, "poll_idle: %lld\npoll_sleep_us: %lld\ngrant_slack_us: %lld\n",
		   (long long)atomic64_read(&s->poll_idle),
		   (long long)atomic64_read(&s->poll_sleep_us),
		   (long long)atomic64_read(&s->grant_slack_us));
	seq_printf(m, "releases: %lld\n",
		   (long long)atomic64_read(&s->tickets[RDLOCK_TICKET_RELEASING]));
	/* The same operations again, split: acquisitions, releases. */
	for (op = 0; op < RDLOCK_XOP_NR; op++)
		seq_printf(m, "acquire_ops_%s: %lld\n", rdlock_xop_names[op],
			   (long long)atomic64_read(&s->acq_ops[op]));
	for (op = 0; op < RDLOCK_XOP_NR; op++)
		seq_printf(m, "release_ops_%s: %lld\n", rdlock_xop_names[op],
			   (long long)atomic64_read(&s->rel_ops[op]));
}

static int rdlock_protocols_show(struct seq_file *m, void *v)
{
	rdlock_proto_stats_show(m, &rdlock_proto_stats);
	/* Not a counter: the CQL gates this node keeps now. */
	seq_printf(m, "cql_gates: %u\n", rdlock_cql_gate_count(NULL));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_protocols);

static int rdlock_bakery_census_show(struct seq_file *m, void *v)
{
	rdlock_bakery_words_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_bakery_census);

void rdlock_proto_debugfs_init(struct dentry *root)
{
	debugfs_create_file("protocols", 0444, root, NULL,
			    &rdlock_protocols_fops);
	debugfs_create_file("bakery_census", 0400, root, NULL,
			    &rdlock_bakery_census_fops);
}
