// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces' debugfs files: lockspaces/NAME/{locks,stats,entries}
 * and, for a protocol that decodes its locks (&rdlock_proto_ops.show), one
 * named after it: the locks homed on this node, decoded (CQL: cql, the
 * queues).
 */
#include <linux/debugfs.h>
#include <linux/math64.h>
#include <linux/seq_file.h>
#include <linux/string_helpers.h>

#include "proto.h"
#include "lockspace-pri.h"

static struct dentry *rdlock_ls_debugfs_dir;

static s64 rdlock_ops_sum(atomic64_t *ops)
{
	s64 sum = 0;
	int op;

	for (op = 0; op < RDLOCK_XOP_NR; op++)
		sum += atomic64_read(&ops[op]);
	return sum;
}

/* Hundredths of @num per @den, 0 without any @den. */
static long long rdlock_x100(s64 num, s64 den)
{
	return den > 0 ? (long long)div64_s64(100 * num, den) : 0LL;
}

static const char *const rdlock_lk_state_names[] = {
	[RDLOCK_LK_WAITING]	= "waiting",
	[RDLOCK_LK_GRANTED]	= "granted",
	[RDLOCK_LK_CONVERTING]	= "converting",
	[RDLOCK_LK_LOST]	= "lost",
};

static const char *const rdlock_lk_mode_names[] = {
	[RDLOCK_LOCK_SH]	= "sh",
	[RDLOCK_LOCK_EX]	= "ex",
	[RDLOCK_LOCK_UP]	= "up",
};

/* The locks this node holds and waits for in one lockspace. */
static int rdlock_ls_locks_show(struct seq_file *m, void *v)
{
	struct rdlock_ls *ls = m->private;
	struct rdlock_lock *lk;

	seq_puts(m, "state mode home slot owner ms name\n");
	spin_lock(&ls->locks_lock);
	list_for_each_entry(lk, &ls->locks, ls_node) {
		seq_printf(m, "%s %s %u %u %d %lld ",
			   rdlock_lk_state_names[lk->state],
			   rdlock_lk_mode_names[rdlock_lock_mode(lk)],
			   lk->ticket.node, lk->ticket.slot, lk->owner,
			   ktime_ms_delta(ktime_get(), lk->since));
		seq_escape_mem(m, lk->res->name, lk->res->len,
			       ESCAPE_NP | ESCAPE_SPACE, NULL);
		seq_putc(m, '\n');
	}
	spin_unlock(&ls->locks_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_ls_locks);

/**
 * rdlock_quota_show() - a quota's counts, for debugfs
 * @m: the file.
 * @prefix: put before each counter's name.
 * @q: the quota.
 */
void rdlock_quota_show(struct seq_file *m, const char *prefix,
		       struct rdlock_proto_quota *q)
{
	seq_printf(m, "%sfinishing: %d\n%sfinishing_killed: %d\n",
		   prefix, atomic_read(&q->used), prefix,
		   atomic_read(&q->killed));
	seq_printf(m, "%sfinishing_max: %u\n%sbusy_refusals: %lld\n",
		   prefix, READ_ONCE(q->max), prefix,
		   (long long)atomic64_read(&q->refused));
}

static int rdlock_ls_stats_show(struct seq_file *m, void *v)
{
	struct rdlock_ls *ls = m->private;
	s64 acquires = atomic64_read(&ls->stats.acquires);
	s64 ops = atomic64_read(&ls->stats.remote_ops);

	seq_printf(m, "protocol: %s\nflags: %#x\nlease_ms: %u\nomega_us: %u\n",
		   ls->ops->name, ls->attr.flags, ls->attr.lease_ms,
		   ls->attr.omega_us);
	seq_printf(m, "slots: %u\nbase: %u\nnodes: %u\nentries: %u\n",
		   ls->attr.slots, ls->base, ls->nr_nodes, ls->entries);
	if (ls->cfg.cql_cap_bits)
		seq_printf(m, "cql_queue_bits: %u\ncql_version_bits: %u\ncql_policy: %s\n",
			   ls->cfg.cql_cap_bits, ls->cfg.cql_ver_bits,
			   ls->cfg.cql_policy == RDLOCK_CQL_PHASE_FAIR ?
			   "phase-fair" : ls->cfg.cql_policy ==
			   RDLOCK_CQL_TASK_FAIR ? "task-fair" : "flat");
	seq_printf(m, "epoch: %u\nlost: %s\n", ls->epoch,
		   str_yes_no(rdlock_ls_stale(ls)));
	seq_printf(m, "resolves: %lld\nprobes: %lld\nresolves_fresh: %lld\nresolves_placed: %lld\n",
		   (long long)atomic64_read(&ls->resolves),
		   (long long)atomic64_read(&ls->probes),
		   (long long)atomic64_read(&ls->resolves_fresh),
		   (long long)atomic64_read(&ls->placed));
	seq_printf(m, "checks_spared: %lld\nlvb_reads_spared: %lld\n",
		   (long long)atomic64_read(&ls->checks_spared),
		   (long long)atomic64_read(&ls->lvb_reads_spared));
	/* Name entries: this node's references and what it freed. */
	spin_lock(&ls->res_lock);
	seq_printf(m, "names_unused: %u\nnames_unused_max: %u\nname_drops_pending: %u\n",
		   ls->nr_unused, ls->res_cache, ls->nr_drops);
	spin_unlock(&ls->res_lock);
	seq_printf(m, "entry_references: %lld\nentry_ref_drops: %lld\n",
		   (long long)atomic64_read(&ls->references),
		   (long long)atomic64_read(&ls->ref_drops));
	seq_printf(m, "entries_reclaimed: %lld\nentries_busy_at_free: %lld\n",
		   (long long)atomic64_read(&ls->reclaimed),
		   (long long)atomic64_read(&ls->busy_at_free));
	seq_printf(m, "resolve_retries: %lld\nentry_ref_errors: %lld\n",
		   (long long)atomic64_read(&ls->resolve_retries),
		   (long long)atomic64_read(&ls->ref_errors));
	seq_printf(m, "down_words: %lld\ndown_lvbs: %lld\n",
		   (long long)atomic64_read(&ls->down_words),
		   (long long)atomic64_read(&ls->down_lvbs));
	seq_printf(m, "moved_names: %lld\nmoved_locks: %lld\nlost_locks: %lld\n",
		   (long long)atomic64_read(&ls->moved_names),
		   (long long)atomic64_read(&ls->moved_locks),
		   (long long)atomic64_read(&ls->lost_locks));
	rdlock_quota_show(m, "", ls->cfg.quota);
	rdlock_proto_stats_show(m, &ls->stats);
	/* Hundredths: what one acquisition (and its release) costs. */
	seq_printf(m, "remote_ops_per_acquire_x100: %lld\n",
		   rdlock_x100(ops, acquires));
	seq_printf(m, "acquire_ops_per_acquire_x100: %lld\n",
		   rdlock_x100(rdlock_ops_sum(ls->stats.acq_ops), acquires));
	seq_printf(m, "release_ops_per_release_x100: %lld\n",
		   rdlock_x100(rdlock_ops_sum(ls->stats.rel_ops),
			       atomic64_read(&ls->stats.tickets[RDLOCK_TICKET_RELEASING])));
	/* CQL: messages per ownership transfer (a waiter granted). */
	seq_printf(m, "notifies_per_wait_x100: %lld\n",
		   rdlock_x100(atomic64_read(&ls->stats.notifies),
			       atomic64_read(&ls->stats.waits)));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_ls_stats);

/*
 * The lockspace's name entries whose home is this node, read through the
 * transport like any other access to the table.
 */
static int rdlock_ls_entries_show(struct seq_file *m, void *v)
{
	struct rdlock_ls *ls = m->private;
	u64 used, refs, freeing;
	int ret;

	ret = rdlock_ls_home_entries(ls, &used, &refs, &freeing);
	if (ret)
		return ret;
	seq_printf(m, "entries: %u\nused: %llu\nreferences: %llu\nfreeing: %llu\n",
		   ls->entries, used, refs, freeing);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_ls_entries);

/* An entry homed on this node, whose lock the protocol's show decodes. */
struct rdlock_ls_word_reader {
	struct rdlock_ls *ls;
	u32 entry;
};

/* Slot @off after the entry's lock word. */
static int rdlock_ls_word_read(void *arg, u32 off, u64 *v)
{
	struct rdlock_ls_word_reader *r = arg;

	return rdlock_ls_home_read(r->ls, r->entry, 1 + off, v);
}

/*
 * Every lock homed on this node (a used name entry), decoded by its
 * protocol. Read through the transport, one word at a time.
 */
static int rdlock_ls_words_show(struct seq_file *m, void *v)
{
	struct rdlock_ls *ls = m->private;
	struct rdlock_ls_word_reader r = { .ls = ls };
	u32 self = rdlock_xport_self();
	u64 tag, w;
	int ret;

	ret = ls->ops->show_head(&ls->cfg, m);
	if (ret)
		return ret;
	for (r.entry = 0; r.entry < ls->entries; r.entry++) {
		ret = rdlock_ls_home_read(ls, r.entry, 0, &tag);
		if (!ret && !rdlock_ls_entry_free(tag))
			ret = rdlock_ls_home_read(ls, r.entry, 1, &w);
		if (ret)
			return ret;
		if (rdlock_ls_entry_free(tag))
			continue;
		seq_printf(m, "entry %u (node %u): ", r.entry, self);
		ret = ls->ops->show(&ls->cfg, m, w, rdlock_ls_word_read, &r);
		if (ret)
			return ret;
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_ls_words);

void rdlock_ls_debugfs_add(struct rdlock_ls *ls)
{
	ls->debugfs = debugfs_create_dir(ls->name, rdlock_ls_debugfs_dir);
	debugfs_create_file("locks", 0444, ls->debugfs, ls,
			    &rdlock_ls_locks_fops);
	debugfs_create_file("stats", 0444, ls->debugfs, ls,
			    &rdlock_ls_stats_fops);
	debugfs_create_file("entries", 0444, ls->debugfs, ls,
			    &rdlock_ls_entries_fops);
	if (ls->ops->show)
		debugfs_create_file(ls->ops->name, 0444, ls->debugfs, ls,
				    &rdlock_ls_words_fops);
}

void rdlock_ls_debugfs_remove(struct rdlock_ls *ls)
{
	debugfs_remove_recursive(ls->debugfs);
	ls->debugfs = NULL;
}

static int rdlock_member_debugfs_show(struct seq_file *m, void *v)
{
	rdlock_member_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_member_debugfs);

void rdlock_ls_debugfs_init(struct dentry *root)
{
	rdlock_ls_debugfs_dir = debugfs_create_dir("lockspaces", root);
	debugfs_create_file("membership", 0444, root, NULL,
			    &rdlock_member_debugfs_fops);
	rdlock_ls_fault_init(root);
}
