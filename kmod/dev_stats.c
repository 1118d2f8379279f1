// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock: RDLOCK_IOC_STATS, this node's counters under stable names: the
 * transport's, its links' to each node, the DLM layer's and each
 * lockspace's. The names are the uapi (Documentation/rdlock/uapi.rst lists
 * them): one that is out keeps its meaning for ever, new ones may be
 * added. debugfs shows more, and changes with the implementation.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "xport.h"
#include "uapi_check.h"
#include "lockspace.h"
#include "dlm-pri.h"
#include "dev-pri.h"

static const char *const rdlock_xc_names[RDLOCK_XC_NR] = {
	[RDLOCK_XC_REJECTED]		= "connections_rejected",
	[RDLOCK_XC_BACKEND_REFUSED]	= "backends_refused",
	[RDLOCK_XC_KEY_MISMATCH]	= "auth_key_mismatches",
	[RDLOCK_XC_BAD_PROOF]		= "auth_bad_proofs",
	[RDLOCK_XC_BAD_REPLY]		= "auth_bad_replies",
	[RDLOCK_XC_REFUSED_BY_PEER]	= "auth_refused_by_peer",
	[RDLOCK_XC_UNAUTH_MSGS]		= "auth_unauthenticated_msgs",
	[RDLOCK_XC_UNPROVEN_FENCE]	= "auth_unproven_fences",
	[RDLOCK_XC_BAD_TABLE]		= "auth_bad_tables",
	[RDLOCK_XC_REMOTE_ACCESS]	= "remote_access_errors",
	[RDLOCK_XC_RESENT]		= "requests_resent",
	[RDLOCK_XC_REPLAYED]		= "requests_replayed",
	[RDLOCK_XC_UNKNOWN_OUTCOMES]	= "requests_outcome_unknown",
	[RDLOCK_XC_STALE]		= "requests_stale",
};

static const char *const rdlock_xlc_names[RDLOCK_XLC_NR] = {
	[RDLOCK_XLC_CONNECTS]		= "link_connects",
	[RDLOCK_XLC_ERRORS]		= "link_errors",
	[RDLOCK_XLC_MSGS_SENT]		= "link_msgs_sent",
	[RDLOCK_XLC_MSGS_RECV]		= "link_msgs_received",
	[RDLOCK_XLC_BYTES]		= "link_table_bytes_read",
	[RDLOCK_XLC_SERVED]		= "link_ops_served",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_READ]	= "link_reads",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_WRITE]	= "link_writes",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_FAA]	= "link_fetch_adds",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_CAS]	= "link_compare_swaps",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_PING]	= "link_pings",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_READ_RANGE] = "link_range_reads",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_FAA_READ]	= "link_fetch_add_reads",
	[RDLOCK_XLC_OPS + RDLOCK_XOP_CAS_READ]	= "link_compare_swap_reads",
};

/* The DLM layer's counters that are uapi (dlm_debugfs.c has them all). */
static const struct {
	const char *name;
	unsigned int st;
	u32 flags;
} rdlock_dlm_stat_map[] = {
	{ "dlm_noqueue_requests", RDLOCK_DLM_ST_NOQUEUE },
	{ "dlm_valblk_requests", RDLOCK_DLM_ST_VALBLK },
	{ "dlm_cancels", RDLOCK_DLM_ST_CANCEL },
	{ "dlm_lvb_reads", RDLOCK_DLM_ST_LVB_GET },
	{ "dlm_lvb_writes", RDLOCK_DLM_ST_LVB_SET },
	{ "dlm_notices_sent", RDLOCK_DLM_ST_NOTICE },
	{ "dlm_room_waits", RDLOCK_DLM_ST_ROOM_WAIT },
	{ "dlm_waits_dropped", RDLOCK_DLM_ST_WAIT_DROPPED },
	{ "dlm_reconnects", RDLOCK_DLM_ST_RECONNECT },
	{ "dlm_nodes_down", RDLOCK_DLM_ST_NODE_DOWN },
	{ "dlm_lockspaces_lost", RDLOCK_DLM_ST_LS_LOST },
	{ "dlm_local_grants", RDLOCK_DLM_ST_LOCAL },
	{ "dlm_waits_known", RDLOCK_DLM_ST_KNOWN, RDLOCK_STAT_GAUGE },
};

/*
 * Requests by the mode held before (rdlock_dlm_st_req's first index: none,
 * NL, PR, EX) and asked for (the second: an unlock, NL, PR, EX).
 */
static const char *const rdlock_dlm_req_names[4][4] = {
	{ NULL, "dlm_new_nl", "dlm_new_pr", "dlm_new_ex" },
	{ "dlm_unlocks_nl", "dlm_converts_nl_nl", "dlm_converts_nl_pr",
	  "dlm_converts_nl_ex" },
	{ "dlm_unlocks_pr", "dlm_converts_pr_nl", "dlm_converts_pr_pr",
	  "dlm_converts_pr_ex" },
	{ "dlm_unlocks_ex", "dlm_converts_ex_nl", "dlm_converts_ex_pr",
	  "dlm_converts_ex_ex" },
};

static const char *const rdlock_lsc_names[RDLOCK_LSC_NR] = {
	[RDLOCK_LSC_ACQUISITIONS]	= "ls_acquisitions",
	[RDLOCK_LSC_WAITS]		= "ls_waits",
	[RDLOCK_LSC_REMOTE_OPS]		= "ls_remote_ops",
	[RDLOCK_LSC_LEASE_EXPIRIES]	= "ls_lease_expiries",
	[RDLOCK_LSC_ABANDONED]		= "ls_abandoned",
	[RDLOCK_LSC_MOVED_LOCKS]	= "ls_moved_locks",
	[RDLOCK_LSC_LOST_LOCKS]		= "ls_lost_locks",
};

/* What the counters go into: @max entries of @out at most, @n counted on. */
struct rdlock_stats_out {
	struct rdlock_stat *out;
	u32 max;
	u32 n;
};

/* One counter; @ls: NULL or a NUL-padded RDLOCK_LS_NAME_MAX-byte name. */
static void rdlock_stat_put(struct rdlock_stats_out *o, const char *name,
			    const char *ls, u32 node, u32 flags, u64 value)
{
	struct rdlock_stat *s;

	if (o->n++ >= o->max)
		return;
	s = &o->out[o->n - 1];
	strscpy_pad(s->name, name, sizeof(s->name));
	if (ls)
		memcpy(s->lockspace, ls, sizeof(s->lockspace));
	s->node = node;
	s->flags = flags;
	s->value = value;
}

/* rdlock_ls_enumerate()'s callback: one lockspace's counters. */
static void rdlock_stats_ls(void *arg, const struct rdlock_ls_desc *d)
{
	unsigned int i;

	for (i = 0; i < RDLOCK_LSC_NR; i++)
		rdlock_stat_put(arg, rdlock_lsc_names[i], d->name,
				RDLOCK_STAT_NO_NODE, 0, d->counters[i]);
	rdlock_stat_put(arg, "ls_users", d->name, RDLOCK_STAT_NO_NODE,
			RDLOCK_STAT_GAUGE, d->users);
}

/* This node's own counters, into @o; nothing is copied to userspace. */
static void rdlock_stats_gather(struct rdlock_stats_out *o)
{
	u64 xc[RDLOCK_XC_NR];
	unsigned int i, j;

	rdlock_xport_counters(xc);
	for (i = 0; i < RDLOCK_XC_NR; i++)
		rdlock_stat_put(o, rdlock_xc_names[i], NULL,
				RDLOCK_STAT_NO_NODE, 0, xc[i]);
	for (i = 0; i < ARRAY_SIZE(rdlock_dlm_stat_map); i++)
		rdlock_stat_put(o, rdlock_dlm_stat_map[i].name, NULL,
				RDLOCK_STAT_NO_NODE,
				rdlock_dlm_stat_map[i].flags,
				atomic64_read(&rdlock_dlm_st[rdlock_dlm_stat_map[i].st]));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++)
			if (rdlock_dlm_req_names[i][j])
				rdlock_stat_put(o, rdlock_dlm_req_names[i][j],
						NULL, RDLOCK_STAT_NO_NODE, 0,
						atomic64_read(&rdlock_dlm_st_req[i][j]));
}

/**
 * rdlock_ioc_stats() - RDLOCK_IOC_STATS: this node's counters
 * @argp: the caller's struct rdlock_stats.
 *
 * The counters go into a kernel array of the caller's capacity (at most
 * RDLOCK_STATS_MAX entries), copied out once no lock is held.
 *
 * Return: 0, -EINVAL, -EFAULT or -ENOMEM.
 */
long rdlock_ioc_stats(void __user *argp)
{
	struct rdlock_xport_link *links = NULL;
	struct rdlock_stats_out o = { };
	struct rdlock_stats st;
	u32 n, i, j;
	long ret;

	if (copy_from_user(&st, argp, sizeof(st)))
		return -EFAULT;
	ret = rdlock_check_stats(&st);
	if (ret)
		return ret;
	ret = -ENOMEM;
	links = kcalloc(RDLOCK_MAX_NODES, sizeof(*links), GFP_KERNEL);
	if (!links)
		goto out;
	if (st.count) {
		o.out = kvcalloc(st.count, sizeof(*o.out), GFP_KERNEL_ACCOUNT);
		if (!o.out)
			goto out;
		o.max = st.count;
	}
	rdlock_stats_gather(&o);
	n = rdlock_xport_link_counters(links);
	for (i = 0; i < n; i++)
		for (j = 0; j < RDLOCK_XLC_NR; j++)
			rdlock_stat_put(&o, rdlock_xlc_names[j], NULL,
					links[i].node, 0, links[i].c[j]);
	rdlock_ls_enumerate(rdlock_stats_ls, &o);
	ret = rdlock_dev_list_out(argp, &st, sizeof(st), &st.count, st.entries,
				  o.out, o.n, sizeof(*o.out));
out:
	kvfree(o.out);
	kfree(links);
	return ret;
}
