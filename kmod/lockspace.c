// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces (layer 4) and the exported kernel API.
 *
 * A lockspace is found in the cluster by name through a directory
 * (lockspace_dir.c): the first node to claim the name's entry allocates
 * the lockspace a region at the same offset of every node's table and
 * publishes its geometry and policy; the others read and check them. A
 * lock name hashes to a home node and a window of entries in the
 * region; it joins the entry of the window that holds its tag, or claims a
 * free one, by CAS of its tag word, which counts the nodes that have the
 * name resolved. The last node to forget the name frees the entry once its
 * lock word is idle (design.rst, "Reclaim"), so each name has exactly one
 * lock word in use and no two names ever share one: no false conflict,
 * hence no deadlock that the names alone would not have. Every access, the
 * home node's own included, goes through the transport's atomic backend.
 *
 * This file: the lockspaces of this node (open, close, attributes, the
 * list of them). Names are in lockspace_name.c, locks in
 * lockspace_lock.c, notices in lockspace_notice.c and nodes declared down
 * in lockspace_recover.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>

#include "lockspace-pri.h"
#include "uapi_check.h"

/* The list of lockspaces and their users. */
DEFINE_MUTEX(rdlock_ls_mutex);
/* Opening lockspaces, one at a time: held across remote operations. */
DEFINE_MUTEX(rdlock_ls_join_mutex);
LIST_HEAD(rdlock_ls_list);
struct workqueue_struct *rdlock_ls_wq;
struct workqueue_struct *rdlock_ls_async_wq;
/* Moves off a node declared down (rdlock_ls_rehome()): nothing else. */
struct workqueue_struct *rdlock_ls_move_wq;

/* How long module removal sends references back to unreachable homes. */
#define RDLOCK_LS_EXIT_DROP_WAIT	(10 * HZ)

/* The deadline of that, once the module goes away; 0 before. */
static unsigned long rdlock_ls_exit_at;

/**
 * rdlock_ls_exit_deadline() - until when references are sent at exit
 *
 * Return: 0 while the module stays; once it goes away, the jiffies until
 * which a reference refused unsent is sent again.
 */
unsigned long rdlock_ls_exit_deadline(void)
{
	return READ_ONCE(rdlock_ls_exit_at);
}

/* An operation on the table @node had when @ls joined, and no other. */
int rdlock_ls_op(const struct rdlock_ls *ls, u32 node, int op,
		 u32 slot, u64 arg0, u64 arg1, u64 *value)
{
	return rdlock_xport_exec(op, node, ls->incarnation[node], slot, arg0,
				 arg1, value, 0);
}

/**
 * rdlock_ls_blip() - is an operation's error a link being made again
 * @ls: the lockspace.
 * @node: the node the operation was for.
 * @ret: its error.
 *
 * -ENOTCONN says nothing was sent: there is no connection to @node now.
 * While @node is not declared down and @ls not lost, that is a blip, and
 * the connection is being made again (or @node is dead and nobody has
 * said so yet; only a declaration tells). A blip fails nothing that may
 * wait: it is waited through, as a lock held by somebody else would be.
 *
 * Return: true for such an -ENOTCONN.
 */
bool rdlock_ls_blip(const struct rdlock_ls *ls, u32 node, int ret)
{
	return ret == -ENOTCONN && !rdlock_xport_node_fenced(node) &&
	       !rdlock_ls_stale(ls);
}

/**
 * rdlock_ls_blip_wait() - wait a back-off before sending again after a blip
 * @backoff_ms: the last back-off, 0 at first; doubled up to 1 s.
 * @deadline: jiffies, 0 for none; no sleep goes past it.
 *
 * Return: false, without sleeping, when @deadline has come or a fatal
 * signal is pending; else true after the back-off.
 */
bool rdlock_ls_blip_wait(unsigned int *backoff_ms, unsigned long deadline)
{
	unsigned int ms;

	if ((deadline && time_after_eq(jiffies, deadline)) ||
	    fatal_signal_pending(current))
		return false;
	*backoff_ms = clamp(2 * *backoff_ms, 1U, 1000U);
	ms = *backoff_ms;
	if (deadline)
		ms = min(ms, jiffies_to_msecs(deadline - jiffies) + 1);
	msleep(ms);
	return true;
}

/*
 * READ @count consecutive slots from @slot on of @node's table into @vals,
 * as few operations as the transport allows (%RDLOCK_XPORT_RANGE_MAX
 * slots each: a value block and its state word in one). Return: 0 or an
 * error.
 */
int rdlock_ls_read_range(const struct rdlock_ls *ls, u32 node,
			 u32 slot, u32 count, u64 *vals)
{
	u32 done, n;
	int ret;

	for (done = 0; done < count; done += n) {
		n = min_t(u32, count - done, RDLOCK_XPORT_RANGE_MAX);
		ret = rdlock_xport_exec_range(RDLOCK_XOP_READ_RANGE, node,
					      ls->incarnation[node],
					      slot + done, 0, 0, 0, n, NULL,
					      vals + done, 0);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* What the protocol of valid attributes @attr sees of them. */
static void rdlock_ls_proto_attr(const struct rdlock_ls_attr *attr,
				 struct rdlock_proto_attr *pa)
{
	pa->flags = attr->flags;
	pa->queue_bits = attr->queue_bits;
	pa->version_bits = attr->version_bits;
}

/*
 * The protocol's policy for a lockspace of valid attributes @attr, as far
 * as they set it: the fields every protocol shares, then its own.
 */
static void rdlock_ls_proto_cfg(const struct rdlock_ls_attr *attr,
				struct rdlock_proto_cfg *cfg)
{
	const struct rdlock_proto_ops *ops = rdlock_proto_lookup(attr->proto);
	struct rdlock_proto_attr pa;

	cfg->lease_ms = attr->lease_ms;
	cfg->omega_us = attr->omega_us;
	cfg->update_word = attr->flags & RDLOCK_LS_UPDATE;
	rdlock_ls_proto_attr(attr, &pa);
	if (ops->config)
		ops->config(cfg, &pa);
}

/* Slots of a name's lock, from its lock word on, with valid @attr. */
static u32 rdlock_ls_lock_slots(const struct rdlock_ls_attr *attr)
{
	const struct rdlock_proto_ops *ops = rdlock_proto_lookup(attr->proto);
	struct rdlock_proto_cfg cfg = {};

	rdlock_ls_proto_cfg(attr, &cfg);
	return ops->slots ? ops->slots(&cfg) : 1;
}

/*
 * What the directory records so that every node checks the same policy;
 * CQL's field widths with their defaults resolved (bits 48-52 and 53-57),
 * which the protocol's config sets for CQL only.
 */
u64 rdlock_ls_policy(const struct rdlock_ls_attr *attr)
{
	struct rdlock_proto_cfg cfg = {};

	rdlock_ls_proto_cfg(attr, &cfg);
	return BIT_ULL(63) | attr->proto | (u64)attr->flags << 8 |
	       (u64)attr->lease_ms << 16 | (u64)cfg.cql_cap_bits << 48 |
	       (u64)cfg.cql_ver_bits << 53;
}

/* How many nodes the cluster is configured with. */
static u32 rdlock_ls_configured_nodes(void)
{
	u32 i, n = 0;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		n += rdlock_xport_node_configured(i);
	return n;
}

/**
 * rdlock_ls_stale() - did the cluster lose tables since the lockspace joined
 * @ls: the lockspace.
 *
 * Return: true once this node's cluster went down or a node came back with
 * a new table (rdlock_xport_epoch()): the lockspace's directory entry, name
 * entries or lock words may be gone, so it takes no more locks.
 */
bool rdlock_ls_stale(const struct rdlock_ls *ls)
{
	return ls->epoch != rdlock_xport_epoch();
}

/*
 * Take stale lockspaces off this node's list, so that their names can be
 * created and joined anew in the current epoch. Their users keep them
 * until they close them; the uapi's creation reference goes now, as
 * nobody could remove it by name any more.
 */
static void rdlock_ls_detach_stale(void)
{
	struct rdlock_ls *ls, *tmp;

	lockdep_assert_held(&rdlock_ls_mutex);
	list_for_each_entry_safe(ls, tmp, &rdlock_ls_list, list) {
		if (!rdlock_ls_stale(ls))
			continue;
		pr_warn("lockspace %s: lost with the cluster epoch it joined\n",
			ls->name);
		list_del_init(&ls->list);
		rdlock_ls_debugfs_remove(ls);
		if (ls->created) {
			ls->created = false;
			rdlock_ls_put_locked(ls);
		}
	}
}

/**
 * rdlock_ls_find_listed() - a lockspace on this node's list, lost or not
 * @name: the name.
 *
 * Return: the lockspace or NULL; caller holds rdlock_ls_mutex.
 */
struct rdlock_ls *rdlock_ls_find_listed(const char *name)
{
	struct rdlock_ls *ls;

	lockdep_assert_held(&rdlock_ls_mutex);
	list_for_each_entry(ls, &rdlock_ls_list, list)
		if (!strcmp(ls->name, name))
			return ls;
	return NULL;
}

static struct rdlock_ls *rdlock_ls_lookup(const char *name)
{
	lockdep_assert_held(&rdlock_ls_mutex);
	rdlock_ls_detach_stale();
	return rdlock_ls_find_listed(name);
}

/**
 * rdlock_ls_find() - a lockspace of this node by name
 * @name: the name.
 *
 * Return: the lockspace or NULL; caller holds rdlock_ls_mutex.
 */
struct rdlock_ls *rdlock_ls_find(const char *name)
{
	return rdlock_ls_lookup(name);
}

static bool rdlock_ls_same_attr(const struct rdlock_ls_attr *a,
				const struct rdlock_ls_attr *b)
{
	return a->proto == b->proto && a->flags == b->flags &&
	       a->lease_ms == b->lease_ms && a->slots == b->slots &&
	       rdlock_ls_policy(a) == rdlock_ls_policy(b);
}

/**
 * rdlock_ls_open_locked() - open a lockspace, creating it on this node
 * @name: valid name (rdlock_ls_check_name()).
 * @attr: valid attributes (rdlock_ls_check_attr()).
 *
 * Caller holds rdlock_ls_join_mutex, not rdlock_ls_mutex: the first open
 * on this node finds or creates the lockspace in the cluster, which takes
 * remote operations (seconds when a node is slow), and rdlock_ls_mutex is
 * what exiting processes need to leave their lockspaces.
 *
 * Return: the lockspace with one more user, or ERR_PTR(-EEXIST) when it
 * exists with other attributes, -ENOSPC when the directory or the tables
 * are full, -ENOTCONN when the cluster is not ready, -EINVAL for a CQL
 * queue smaller than the cluster's node count, or -ENOMEM.
 */
struct rdlock_ls *rdlock_ls_open_locked(const char *name,
					const struct rdlock_ls_attr *attr)
{
	const struct rdlock_proto_ops *ops = rdlock_proto_lookup(attr->proto);
	struct rdlock_proto_attr pa;
	struct rdlock_ls *ls;
	int ret;
	u32 i;

	lockdep_assert_held(&rdlock_ls_join_mutex);
	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_lookup(name);
	if (ls) {
		if (rdlock_ls_same_attr(&ls->attr, attr))
			ls->users++;
		else
			ls = ERR_PTR(-EEXIST);
	}
	mutex_unlock(&rdlock_ls_mutex);
	if (ls)
		return ls;

	/* What the protocol cannot serve on this cluster (CQL: its queue). */
	rdlock_ls_proto_attr(attr, &pa);
	if (ops->check_attr) {
		ret = ops->check_attr(&pa, rdlock_ls_configured_nodes());
		if (ret)
			return ERR_PTR(ret);
	}

	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls)
		return ERR_PTR(-ENOMEM);
	ls->cfg.quota = rdlock_proto_quota_alloc(RDLOCK_LS_FINISHING_MAX,
						 false);
	if (!ls->cfg.quota) {
		kfree(ls);
		return ERR_PTR(-ENOMEM);
	}
	strscpy(ls->name, name, sizeof(ls->name));
	ls->attr = *attr;
	ls->ops = ops;
	rdlock_ls_proto_cfg(attr, &ls->cfg);
	ls->cfg.stats = &ls->stats;
	ls->tag = rdlock_ls_dir_tag(name);
	spin_lock_init(&ls->res_lock);
	hash_init(ls->res);
	INIT_LIST_HEAD(&ls->lru);
	INIT_LIST_HEAD(&ls->drops);
	INIT_WORK(&ls->drop_work, rdlock_ls_drop_work);
	spin_lock_init(&ls->locks_lock);
	INIT_LIST_HEAD(&ls->locks);

	/* Nobody else can open it meanwhile: rdlock_ls_join_mutex. */
	ret = rdlock_ls_join_cluster(ls);
	if (ret) {
		rdlock_proto_quota_put(ls->cfg.quota);
		kfree(ls);
		return ERR_PTR(ret);
	}
	ls->cfg.nodes = ls->nr_nodes;
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		ls->cas_readers[i] = i != rdlock_xport_self() ? BIT_ULL(i) : 0;
	ls->cfg.cas_readers = ls->cas_readers;
	/*
	 * Unused names of one node hold at most a share of the entries;
	 * with RDLOCK_LS_KEEP_NAMES all of them, until a home needs room.
	 */
	ls->res_cache = ls->attr.flags & RDLOCK_LS_KEEP_NAMES ?
			ls->entries * ls->nr_nodes :
			clamp_t(u32, ls->entries / RDLOCK_LS_RES_CACHE_SHARE, 1,
				RDLOCK_LS_RES_CACHE);
	mutex_lock(&rdlock_ls_mutex);
	ls->users = 1;
	list_add_tail(&ls->list, &rdlock_ls_list);
	rdlock_ls_debugfs_add(ls);
	mutex_unlock(&rdlock_ls_mutex);
	return ls;
}

/**
 * rdlock_ls_put_locked() - drop a user; the last frees the lockspace here
 * @ls: the lockspace.
 *
 * Caller holds rdlock_ls_mutex. The cluster's directory keeps the entry:
 * another node may still use the lockspace, and this node may reopen it.
 * The names this node resolved give their entry references back in
 * @ls->drop_work, which takes remote operations and then frees @ls.
 */
void rdlock_ls_put_locked(struct rdlock_ls *ls)
{
	struct rdlock_res *res;
	struct hlist_node *tmp;
	bool queue;
	int bkt;

	lockdep_assert_held(&rdlock_ls_mutex);
	if (--ls->users)
		return;
	WARN_ON(!list_empty(&ls->locks));
	list_del_init(&ls->list);
	rdlock_ls_debugfs_remove(ls);
	spin_lock(&ls->res_lock);
	hash_for_each_safe(ls->res, bkt, tmp, res, hnode) {
		WARN_ON(res->refs);
		hash_del(&res->hnode);
		list_move_tail(&res->lru, &ls->drops);
		ls->nr_drops++;
	}
	ls->nr_unused = 0;
	ls->dying = true;
	queue = !ls->dropping;
	ls->dropping = true;
	spin_unlock(&ls->res_lock);
	if (queue)
		queue_work(rdlock_ls_wq, &ls->drop_work);
}

/**
 * rdlock_ls_open() - open a lockspace, creating it in the cluster if new
 * @name: 1 to RDLOCK_LS_NAME_MAX - 1 characters of [A-Za-z0-9_.:-].
 * @attr: its attributes; the same on every node (see struct rdlock_ls_attr).
 *
 * Opening a name this node already has open returns the same lockspace
 * when the attributes match. May sleep.
 *
 * Return: the lockspace, or ERR_PTR(): -EINVAL for a bad name or
 * attributes, -EEXIST when the lockspace exists with other attributes,
 * -ENOSPC when the cluster's directory (64 lockspaces) or the lock tables
 * are full, -ENOTCONN when the cluster is not ready, -ENOMEM.
 */
struct rdlock_ls *rdlock_ls_open(const char *name,
				 const struct rdlock_ls_attr *attr)
{
	struct rdlock_ls *ls;
	int ret;

	/*
	 * Value blocks, gates and placement are for kernel users: the uapi's
	 * check refuses them. A gate word follows the lock word: not where
	 * the lock takes more slots (CQL's queue follows its word).
	 */
	ret = rdlock_ls_check_name(name, false) ?:
	      rdlock_ls_check_kernel_attr(attr);
	if (ret)
		return ERR_PTR(ret);
	if (attr->flags & RDLOCK_LS_GATE && rdlock_ls_lock_slots(attr) != 1)
		return ERR_PTR(-EINVAL);
	if (mutex_lock_killable(&rdlock_ls_join_mutex))
		return ERR_PTR(-EINTR);
	ls = rdlock_ls_open_locked(name, attr);
	mutex_unlock(&rdlock_ls_join_mutex);
	return ls;
}
EXPORT_SYMBOL_GPL(rdlock_ls_open);

/**
 * rdlock_ls_close() - close a lockspace opened with rdlock_ls_open()
 * @ls: the lockspace; every lock taken through this open must have been
 *	unlocked. Waits for rdlock_lock_async() calls still in progress.
 */
void rdlock_ls_close(struct rdlock_ls *ls)
{
	wait_var_event(&ls->async_pending, !atomic_read(&ls->async_pending));
	mutex_lock(&rdlock_ls_mutex);
	rdlock_ls_put_locked(ls);
	mutex_unlock(&rdlock_ls_mutex);
}
EXPORT_SYMBOL_GPL(rdlock_ls_close);

/**
 * rdlock_ls_any() - does this node have any lockspace
 *
 * Return: true if so; the cluster cannot go down under them.
 */
bool rdlock_ls_any(void)
{
	bool any;

	mutex_lock(&rdlock_ls_mutex);
	rdlock_ls_detach_stale();
	any = !list_empty(&rdlock_ls_list);
	mutex_unlock(&rdlock_ls_mutex);
	return any;
}

int rdlock_ls_init(void)
{
	int ret;

	ret = rdlock_member_init();
	if (ret)
		return ret;
	/*
	 * Writeback may wait for a name's drop, a lost lockspace's callbacks
	 * or an async grant: they must run under pressure. The async
	 * acquisitions, which wait for grants, have a queue of their own.
	 */
	rdlock_ls_wq = alloc_workqueue("rdlock_ls", WQ_UNBOUND | WQ_MEM_RECLAIM,
				       0);
	rdlock_ls_async_wq = alloc_workqueue("rdlock_lock_async",
					     WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	rdlock_ls_move_wq = alloc_workqueue("rdlock_move",
					    WQ_UNBOUND | WQ_MEM_RECLAIM,
					    RDLOCK_LS_REHOME_MOVERS);
	if (!rdlock_ls_wq || !rdlock_ls_async_wq || !rdlock_ls_move_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	ret = rdlock_xport_set_msg_handler(RDLOCK_LS_MSG_TYPE,
					   rdlock_ls_msg_handler);
	if (!ret)
		ret = rdlock_xport_set_msg_handler(RDLOCK_LS_DOWN_MSG_TYPE,
						   rdlock_ls_down_msg_handler);
	if (ret) {
		rdlock_xport_set_msg_handler(RDLOCK_LS_MSG_TYPE, NULL);
		goto err_wq;
	}
	rdlock_xport_set_up_handler(rdlock_ls_up_handler);
	rdlock_xport_set_epoch_handler(rdlock_ls_tell_lost);
	return 0;

err_wq:
	if (rdlock_ls_move_wq)
		destroy_workqueue(rdlock_ls_move_wq);
	if (rdlock_ls_async_wq)
		destroy_workqueue(rdlock_ls_async_wq);
	if (rdlock_ls_wq)
		destroy_workqueue(rdlock_ls_wq);
	return ret;
}

/*
 * Kernel users hold a module reference and files are closed by now: what
 * is left are lockspaces created through the uapi and never removed.
 */
void rdlock_ls_exit(void)
{
	struct rdlock_ls *ls, *tmp;

	/*
	 * The cluster is still up: references go back to their homes, but a
	 * home that took its cluster down first is not coming back, and
	 * module removal must end (drops already under way included).
	 */
	WRITE_ONCE(rdlock_ls_exit_at, (jiffies + RDLOCK_LS_EXIT_DROP_WAIT) | 1);
	/*
	 * A declaration's pass (the membership worker's, stopped below)
	 * holds the lockspaces it walks: let it end before they are freed.
	 */
	for (;;) {
		mutex_lock(&rdlock_ls_mutex);
		if (!rdlock_ls_walked_locked(NULL))
			break;
		mutex_unlock(&rdlock_ls_mutex);
		if (rdlock_ls_walk_wait(NULL)) {
			mutex_lock(&rdlock_ls_mutex);
			break;
		}
	}
	list_for_each_entry_safe(ls, tmp, &rdlock_ls_list, list) {
		WARN_ON(ls->users != 1 || !ls->created);
		ls->users = 1;
		rdlock_ls_put_locked(ls);
	}
	mutex_unlock(&rdlock_ls_mutex);
	rdlock_member_exit();
	rdlock_xport_set_epoch_handler(NULL);
	rdlock_ls_lost_flush();
	rdlock_xport_set_up_handler(NULL);
	rdlock_xport_set_msg_handler(RDLOCK_LS_DOWN_MSG_TYPE, NULL);
	rdlock_xport_set_msg_handler(RDLOCK_LS_MSG_TYPE, NULL);
	destroy_workqueue(rdlock_ls_move_wq);
	destroy_workqueue(rdlock_ls_async_wq);
	destroy_workqueue(rdlock_ls_wq);
}
