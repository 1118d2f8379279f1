// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API: its counters and their debugfs file (rdlock/dlm); the
 * fault injection knobs are dlm_fault.c's.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "dlm-pri.h"

static const char *const rdlock_dlm_st_names[RDLOCK_DLM_ST_NR] = {
	[RDLOCK_DLM_ST_TAKE_MAIN] = "take_main",
	[RDLOCK_DLM_ST_TAKE_GATE] = "take_gate",
	[RDLOCK_DLM_ST_TAKE_FAIL] = "take_fail",
	[RDLOCK_DLM_ST_TRY_OK] = "try_ok",
	[RDLOCK_DLM_ST_TRY_BUSY] = "try_busy",
	[RDLOCK_DLM_ST_DROP] = "drop",
	[RDLOCK_DLM_ST_LVB_GET] = "lvb_get",
	[RDLOCK_DLM_ST_LVB_SET] = "lvb_set",
	[RDLOCK_DLM_ST_LVB_WORDS] = "lvb_words",
	[RDLOCK_DLM_ST_LVB_SPARED] = "lvb_spared",
	[RDLOCK_DLM_ST_NOTICE] = "notices",
	[RDLOCK_DLM_ST_NOQUEUE] = "noqueue",
	[RDLOCK_DLM_ST_VALBLK] = "valblk",
	[RDLOCK_DLM_ST_CANCEL] = "cancels",
	[RDLOCK_DLM_ST_ROOM_WAIT] = "room_waits",
	[RDLOCK_DLM_ST_TRIM] = "trims",
	[RDLOCK_DLM_ST_HELLO] = "hellos",
	[RDLOCK_DLM_ST_REWAIT] = "rewaits",
	[RDLOCK_DLM_ST_RECONNECT] = "reconnects",
	[RDLOCK_DLM_ST_NODE_DOWN] = "nodes_down",
	[RDLOCK_DLM_ST_LS_LOST] = "lockspaces_lost",
	[RDLOCK_DLM_ST_KNOWN] = "waits_known",
	[RDLOCK_DLM_ST_WAIT_DROPPED] = "waits_dropped",
	[RDLOCK_DLM_ST_BAST_HELD] = "basts_held",
	[RDLOCK_DLM_ST_HOLD_RAISED] = "holds_raised",
	[RDLOCK_DLM_ST_POLL_WAIT] = "poll_waits",
	[RDLOCK_DLM_ST_KICK_SENT] = "kicks_sent",
	[RDLOCK_DLM_ST_KICKED] = "kicks",
	[RDLOCK_DLM_ST_POLL_BUDGETED] = "polls_budgeted",
	[RDLOCK_DLM_ST_LOCAL] = "local_grants",
	[RDLOCK_DLM_ST_LOCAL_TAKES] = "local_takes",
	[RDLOCK_DLM_ST_LOCAL_RETRY] = "local_retries",
	[RDLOCK_DLM_ST_LOCAL_LOST] = "local_lost",
	[RDLOCK_DLM_ST_LOCAL_KNOWN] = "local_known",
	[RDLOCK_DLM_ST_LOCAL_WAIT] = "local_waits",
	[RDLOCK_DLM_ST_LOCAL_ABANDONED] = "local_abandoned",
	[RDLOCK_DLM_ST_LOCAL_AGED] = "local_aged",
	[RDLOCK_DLM_ST_LOCAL_FORCED] = "local_forced",
	[RDLOCK_DLM_ST_LOCAL_PARKS] = "local_parks",
	[RDLOCK_DLM_ST_LOCAL_PARKED] = "local_parked",
	[RDLOCK_DLM_ST_DUMP_ANSWERED] = "dumps_answered",
	[RDLOCK_DLM_ST_DUMP_DROPPED] = "dumps_dropped",
	[RDLOCK_DLM_ST_NS_MAIN] = "ns_take_main",
	[RDLOCK_DLM_ST_NS_GATE] = "ns_take_gate",
	[RDLOCK_DLM_ST_NS_DROP] = "ns_drop",
	[RDLOCK_DLM_ST_NS_LVB] = "ns_lvb",
	[RDLOCK_DLM_ST_NS_NOTICE] = "ns_notice",
	[RDLOCK_DLM_ST_NS_REQ] = "ns_request",
	[RDLOCK_DLM_ST_NS_AST] = "ns_ast_queued",
	[RDLOCK_DLM_ST_NS_LOCAL] = "ns_local_take",
	[RDLOCK_DLM_ST_NS_LOCAL_WAIT] = "ns_local_wait",
};

atomic64_t rdlock_dlm_st[RDLOCK_DLM_ST_NR];
atomic64_t rdlock_dlm_st_req[4][4];	/* [from][to]: rdlock_dlm_mode_idx() */

static int rdlock_dlm_stats_show(struct seq_file *m, void *unused)
{
	static const char *const modes[] = { "IV", "NL", "PR", "EX" };
	int i, j;

	for (i = 0; i < RDLOCK_DLM_ST_NR; i++)
		seq_printf(m, "%s: %lld\n", rdlock_dlm_st_names[i],
			   atomic64_read(&rdlock_dlm_st[i]));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++)
			seq_printf(m, "req_%s_%s: %lld\n", modes[i],
				   j ? modes[j] : "UN",
				   atomic64_read(&rdlock_dlm_st_req[i][j]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_dlm_stats);

/**
 * rdlock_dlm_debugfs_init() - the DLM layer's counters, rdlock/dlm
 * @root: rdlock's debugfs directory.
 */
void rdlock_dlm_debugfs_init(struct dentry *root)
{
	debugfs_create_file("dlm", 0444, root, NULL, &rdlock_dlm_stats_fops);
	rdlock_dlm_fault_init(root);
}
