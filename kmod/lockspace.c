// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces (layer 4) and the exported kernel API.
 *
 * A lockspace is found in the cluster by name through a directory on the
 * lowest configured node: the first node to claim the name's entry (by
 * CAS) allocates the lockspace a region at the same offset of every node's
 * table and publishes its geometry and policy; the others read and check
 * them. A lock name hashes to a home node and a window of entries in the
 * region; it joins the entry of the window that holds its tag, or claims a
 * free one, by CAS of its tag word, which counts the nodes that have the
 * name resolved. The last node to forget the name frees the entry once its
 * lock word is idle (design.rst, "Reclaim"), so each name has exactly one
 * lock word in use and no two names ever share one: no false conflict,
 * hence no deadlock that the names alone would not have. Every access, the
 * home node's own included, goes through the transport's atomic backend.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>
#include <asm/unaligned.h>

#include "lockspace-pri.h"
#include "lockspace_layout.h"
#include "lockword/bakery.h"
#include "lockword/cql.h"
#include "uapi_check.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* The list of lockspaces and their users. */
DEFINE_MUTEX(rdlock_ls_mutex);
/* Opening lockspaces, one at a time: held across remote operations. */
DEFINE_MUTEX(rdlock_ls_join_mutex);
static LIST_HEAD(rdlock_ls_list);
static struct workqueue_struct *rdlock_ls_wq;

static void rdlock_ls_drop_work(struct work_struct *work);

/* Fixed: every node must hash a name to the same entry. */
static const siphash_key_t rdlock_ls_dir_key = {
	{ 0x72646c6f636b2d64ULL, 0x69726563746f7279ULL }
};

/* How long an attaching node waits for the claimer to publish geometry. */
#define RDLOCK_LS_PUBLISH_WAIT_MS	10000

static_assert(RDLOCK_LOCK_SH == (int)RDLOCK_MODE_SHARED);
static_assert(RDLOCK_LOCK_EX == (int)RDLOCK_MODE_EXCLUSIVE);
static_assert(RDLOCK_LOCK_UP == (int)RDLOCK_MODE_UPDATE);
/* A value block and its state word come with the CAS that takes a lock. */
static_assert(RDLOCK_LS_LVB_SLOTS <= RDLOCK_XPORT_CAS_READ_MAX);
static_assert(sizeof_field(struct rdlock_lock, lvb_read) ==
	      RDLOCK_LS_LVB_SLOTS * sizeof(u64));

static const struct rdlock_proto_ops *const rdlock_ls_protos[] = {
	[RDLOCK_PROTO_BAKERY]	= &rdlock_proto_bakery,
	[RDLOCK_PROTO_CASLOCK]	= &rdlock_proto_caslock,
	[RDLOCK_PROTO_CQL]	= &rdlock_proto_cql,
};

/* The uapi's CQL limits are the encoding's. */
static_assert(RDLOCK_CQL_QUEUE_BITS_MIN == (int)CQL_CAP_BITS_MIN);
static_assert(RDLOCK_CQL_QUEUE_BITS_MAX == (int)CQL_CAP_BITS_MAX);
static_assert(RDLOCK_CQL_QUEUE_BITS_DEFAULT == (int)CQL_CAP_BITS_DEFAULT);
static_assert(RDLOCK_CQL_VERSION_BITS_MIN == (int)CQL_VER_BITS_MIN);
static_assert(RDLOCK_CQL_VERSION_BITS_MAX == (int)CQL_VER_BITS_MAX);
static_assert(RDLOCK_CQL_VERSION_BITS_DEFAULT == (int)CQL_VER_BITS_DEFAULT);

static_assert(ARRAY_SIZE(rdlock_ls_protos) == RDLOCK_PROTO_NR);
/* A tag word's placement and reference count hold any node. */
static_assert(RDLOCK_MAX_NODES < (RDLOCK_LS_PLACE_MASK >>
				  RDLOCK_LS_PLACE_SHIFT));
static_assert(RDLOCK_MAX_NODES <= RDLOCK_LS_REFS_MAX);

/**
 * rdlock_ls_check_lock() - validate a lock request before taking anything
 * @ls: the lockspace.
 * @len: name length.
 * @mode: requested mode.
 * @opts: options, or NULL.
 *
 * Return: 0, -EINVAL, or -EOPNOTSUPP for an update lock in a lockspace
 * without RDLOCK_LS_UPDATE and for RDLOCK_LOCK_NL.
 */
int rdlock_ls_check_lock(const struct rdlock_ls *ls, size_t len,
			 enum rdlock_lock_mode mode,
			 const struct rdlock_lock_opts *opts)
{
	if (!len || len > RDLOCK_RES_NAME_MAX || mode >= RDLOCK_LOCK_MODE_NR)
		return -EINVAL;
	/* The gate is a kernel user's, of a lockspace whose names have one. */
	if (opts && opts->flags & RDLOCK_LKF_GATE &&
	    !(ls->attr.flags & RDLOCK_LS_GATE))
		return -EINVAL;
	/* A value block goes with the name's lock word, not its gate. */
	if (opts && opts->flags & RDLOCK_LKF_LVB &&
	    (!(ls->attr.flags & RDLOCK_LS_LVB) ||
	     opts->flags & RDLOCK_LKF_GATE))
		return -EINVAL;
	if (opts && (!rdlock_lock_flags_ok(opts->flags & ~(RDLOCK_LKF_GATE |
							   RDLOCK_LKF_LVB),
					   opts->timeout_ms) ||
		     opts->lease_slots > (ls->attr.flags & RDLOCK_LS_UPDATE ?
					  RDLOCK_LEASE_SLOTS_MAX_UPDATE :
					  RDLOCK_LEASE_SLOTS_MAX)))
		return -EINVAL;
	if (mode == RDLOCK_LOCK_UP && !(ls->attr.flags & RDLOCK_LS_UPDATE))
		return -EOPNOTSUPP;
	/* NL is a DLM mode (kmod/dlm.c): a lock word has no null holder. */
	if (mode == RDLOCK_LOCK_NL)
		return -EOPNOTSUPP;
	return 0;
}

/* An operation on the table @node had when @ls joined, and no other. */
static int rdlock_ls_op(const struct rdlock_ls *ls, u32 node, int op,
			u32 slot, u64 arg0, u64 arg1, u64 *value)
{
	return rdlock_xport_exec(op, node, ls->incarnation[node], slot, arg0,
				 arg1, value, 0);
}

/*
 * READ @count consecutive slots from @slot on of @node's table into @vals,
 * as few operations as the transport allows (%RDLOCK_XPORT_RANGE_MAX
 * slots each: a value block and its state word in one). Return: 0 or an
 * error.
 */
static int rdlock_ls_read_range(const struct rdlock_ls *ls, u32 node,
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

/*
 * What the directory records so that every node checks the same policy;
 * CQL's field widths with their defaults resolved (bits 48-52 and 53-57).
 */
static u64 rdlock_ls_policy(const struct rdlock_ls_attr *attr)
{
	u64 p = BIT_ULL(63) | attr->proto | (u64)attr->flags << 8 |
		(u64)attr->lease_ms << 16;

	if (attr->proto == RDLOCK_PROTO_CQL)
		p |= (u64)rdlock_ls_cql_queue_bits(attr) << 48 |
		     (u64)rdlock_ls_cql_version_bits(attr) << 53;
	return p;
}

/* How many nodes the cluster is configured with. */
static u32 rdlock_ls_configured_nodes(void)
{
	u32 i, n = 0;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		n += rdlock_xport_node_configured(i);
	return n;
}

/* The cluster's nodes, ascending: homes of names, [0] keeps the directory. */
static int rdlock_ls_nodes(struct rdlock_ls *ls, u32 *min_slots)
{
	u32 i, slots;

	ls->nr_nodes = 0;
	*min_slots = U32_MAX;
	/* The epoch first: a change from here on shows as a stale lockspace. */
	ls->epoch = rdlock_xport_epoch();
	if (!rdlock_xport_ready())
		return -ENOTCONN;
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		if (!rdlock_xport_node_configured(i))
			continue;
		slots = rdlock_xport_node_slots(i);
		ls->incarnation[i] = rdlock_xport_node_incarnation(i);
		if (!slots || !ls->incarnation[i])
			return -ENOTCONN;
		*min_slots = min(*min_slots, slots);
		ls->nodes[ls->nr_nodes++] = i;
	}
	return ls->nr_nodes ? 0 : -ENOTCONN;
}

/*
 * Name entries of a region: every slot is an entry's, or with
 * RDLOCK_LS_PLACE the region is split in one area per node (one of
 * entries, the others of placed entries).
 */
static u32 rdlock_ls_region_entries(const struct rdlock_ls *ls)
{
	u32 n = ls->attr.flags & RDLOCK_LS_PLACE ? ls->nr_nodes : 1;

	return ls->attr.slots / (rdlock_ls_entry_slots(&ls->attr) * n);
}

/* The claimer of a directory entry allocates and publishes the region. */
static int rdlock_ls_publish(struct rdlock_ls *ls, u32 dir, u32 entry,
			     u32 min_slots)
{
	u64 off = 0, geometry, old;
	int ret;

	/*
	 * Allocate by CAS, and only what fits: a region that does not fit
	 * must not take the room of smaller ones created later.
	 */
	for (;;) {
		if (RDLOCK_LS_REGIONS + off + ls->attr.slots > min_slots) {
			ret = -ENOSPC;
			break;
		}
		ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_CAS, RDLOCK_LS_ALLOC, off,
				   off + ls->attr.slots, &old);
		if (ret || old == off)
			break;
		off = old;
	}
	if (ret)
		geometry = RDLOCK_LS_GEOMETRY_FAILED;
	else
		geometry = (RDLOCK_LS_REGIONS + off) << 32 | ls->attr.slots;
	/* Policy first: a node that sees the geometry may read it at once. */
	if (!ret) {
		ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_CAS, entry + 2, 0,
				   rdlock_ls_policy(&ls->attr), &old);
		if (ret)
			geometry = RDLOCK_LS_GEOMETRY_FAILED;
	}
	rdlock_ls_op(ls, dir, RDLOCK_XOP_CAS, entry + 1, 0, geometry, &old);
	if (!ret) {
		ls->base = geometry >> 32;
		ls->entries = rdlock_ls_region_entries(ls);
	}
	return ret;
}

/* Another node claimed the entry: wait for its geometry, check policy. */
static int rdlock_ls_attach(struct rdlock_ls *ls, u32 dir, u32 entry,
			    u32 min_slots)
{
	unsigned long end = jiffies + msecs_to_jiffies(RDLOCK_LS_PUBLISH_WAIT_MS);
	u64 geometry, policy;
	int ret;

	for (;;) {
		ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_READ, entry + 1, 0, 0,
				   &geometry);
		if (ret || geometry)
			break;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		if (msleep_interruptible(10) && fatal_signal_pending(current))
			return -EINTR;
	}
	if (ret)
		return ret;
	if (geometry == RDLOCK_LS_GEOMETRY_FAILED)
		return -ENOSPC;
	ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_READ, entry + 2, 0, 0, &policy);
	if (ret)
		return ret;
	if (policy != rdlock_ls_policy(&ls->attr) ||
	    (u32)geometry != ls->attr.slots) {
		pr_warn("lockspace %s exists with other attributes (policy %#llx, %u slots)\n",
			ls->name, policy, (u32)geometry);
		return -EEXIST;
	}
	ls->base = geometry >> 32;
	ls->entries = rdlock_ls_region_entries(ls);
	return ls->base + ls->attr.slots <= min_slots ? 0 : -ENOSPC;
}

/* Find or claim the lockspace's directory entry (linear probing). */
static int rdlock_ls_join_cluster(struct rdlock_ls *ls)
{
	u32 min_slots, dir, i, entry;
	u64 old;
	int ret;

	ret = rdlock_ls_nodes(ls, &min_slots);
	if (ret)
		return ret;
	dir = ls->nodes[0];
	for (i = 0; i < RDLOCK_LS_DIR_ENTRIES; i++) {
		entry = RDLOCK_LS_DIR +
			3 * ((ls->tag + i) % RDLOCK_LS_DIR_ENTRIES);
		ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_CAS, entry, 0, ls->tag, &old);
		if (ret)
			return ret;
		if (!old)
			return rdlock_ls_publish(ls, dir, entry, min_slots);
		if (old == ls->tag)
			return rdlock_ls_attach(ls, dir, entry, min_slots);
	}
	return -ENOSPC;
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
 * A call's error, as -ESHUTDOWN when the lockspace was lost meanwhile
 * (-ESTALE: a home has another table than the one the lockspace joined).
 */
static int rdlock_ls_error(const struct rdlock_ls *ls, int ret)
{
	return ret == -ESTALE || (ret && rdlock_ls_stale(ls)) ? -ESHUTDOWN :
								 ret;
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

static struct rdlock_ls *rdlock_ls_lookup(const char *name)
{
	struct rdlock_ls *ls;

	lockdep_assert_held(&rdlock_ls_mutex);
	rdlock_ls_detach_stale();
	list_for_each_entry(ls, &rdlock_ls_list, list)
		if (!strcmp(ls->name, name))
			return ls;
	return NULL;
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

	/*
	 * CQL's admission gate lets each node's clients have capacity /
	 * nodes entries of a queue: at least one needs capacity >= nodes.
	 */
	if (attr->proto == RDLOCK_PROTO_CQL &&
	    BIT(rdlock_ls_cql_queue_bits(attr)) < rdlock_ls_configured_nodes())
		return ERR_PTR(-EINVAL);

	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls)
		return ERR_PTR(-ENOMEM);
	ls->cfg.quota = rdlock_proto_quota_alloc(RDLOCK_LS_FINISHING_MAX);
	if (!ls->cfg.quota) {
		kfree(ls);
		return ERR_PTR(-ENOMEM);
	}
	strscpy(ls->name, name, sizeof(ls->name));
	ls->attr = *attr;
	ls->ops = rdlock_ls_protos[attr->proto];
	ls->cfg.lease_ms = attr->lease_ms;
	ls->cfg.omega_us = attr->omega_us;
	ls->cfg.update_word = attr->flags & RDLOCK_LS_UPDATE;
	if (attr->proto == RDLOCK_PROTO_CQL) {
		ls->cfg.cql_cap_bits = rdlock_ls_cql_queue_bits(attr);
		ls->cfg.cql_ver_bits = rdlock_ls_cql_version_bits(attr);
		if (attr->flags & RDLOCK_LS_CQL_PHASE_FAIR)
			ls->cfg.cql_policy = RDLOCK_CQL_PHASE_FAIR;
		else if (attr->flags & RDLOCK_LS_CQL_HIER)
			ls->cfg.cql_policy = RDLOCK_CQL_TASK_FAIR;
	}
	ls->cfg.stats = &ls->stats;
	ls->tag = siphash(name, strlen(name), &rdlock_ls_dir_key) ?: 1;
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

/* ------------------------------------------------------------------ */
/* Names                                                              */

static u64 rdlock_res_hash(const struct rdlock_ls *ls, const void *name,
			   size_t len)
{
	siphash_key_t key = { { ls->tag, ls->base } };

	return siphash(name, len, &key) ?: 1;
}

static u64 rdlock_entry_refs(u64 v)
{
	return v & RDLOCK_LS_REFS_MAX;
}

/* A tag word's tag and freeing flag: what says whose it is. */
static u64 rdlock_entry_name(u64 v)
{
	return v & ~(RDLOCK_LS_REFS_MAX | RDLOCK_LS_PLACE_MASK);
}

/* A tag word that holds @tag with references and is not being freed. */
static bool rdlock_entry_live(u64 v, u64 tag)
{
	return rdlock_entry_name(v) == tag && rdlock_entry_refs(v);
}

/*
 * Tag word slot of entry @i of the window of a name starting at @first;
 * the lock (word, and CQL's queue) follows it.
 */
static u32 rdlock_entry_slot(const struct rdlock_ls *ls, u32 first, u32 i)
{
	return ls->base + rdlock_ls_entry_slots(&ls->attr) *
			  ((first + i) % ls->entries);
}

/* Names hash to homes over the configured node ids in ascending order. */
static u32 rdlock_res_home(const struct rdlock_ls *ls, u64 hash)
{
	return ls->nodes[hash % ls->nr_nodes];
}

/* Index of @node in ls->nodes. */
static u32 rdlock_ls_node_pos(const struct rdlock_ls *ls, u32 node)
{
	u32 i;

	for (i = 0; i < ls->nr_nodes; i++)
		if (ls->nodes[i] == node)
			break;
	return i;
}

/* The placement bits a node claiming an entry of @home writes. */
static u64 rdlock_entry_place_self(const struct rdlock_ls *ls, u32 home)
{
	u32 self = rdlock_xport_self();

	if (!(ls->attr.flags & RDLOCK_LS_PLACE) || self == home)
		return 0;
	return (u64)(rdlock_ls_node_pos(ls, self) + 1) << RDLOCK_LS_PLACE_SHIFT;
}

/*
 * Where the lock of the entry at tag word @tslot of @home lives, given the
 * placement bits @place of its tag word: the entry itself, or on the node
 * that claimed it, the placed entry of the same index in the area that
 * node keeps for @home (lockspace-pri.h).
 */
static void rdlock_entry_lock_at(const struct rdlock_ls *ls, u32 home,
				 u32 tslot, u64 place, u32 *node, u32 *slot)
{
	u32 p = place >> RDLOCK_LS_PLACE_SHIFT;

	if (!p || p > ls->nr_nodes) {
		*node = home;
		*slot = tslot + 1;
		return;
	}
	*node = ls->nodes[p - 1];
	*slot = rdlock_ls_placed_tslot(ls->base,
				       rdlock_ls_entry_slots(&ls->attr),
				       ls->entries,
				       rdlock_ls_node_pos(ls, home), p - 1,
				       tslot) + 1;
}

static u32 rdlock_res_window(const struct rdlock_ls *ls)
{
	return min_t(u32, ls->entries, RDLOCK_LS_NAME_WINDOW);
}

static u32 rdlock_res_first(const struct rdlock_ls *ls,
			    const struct rdlock_res *res)
{
	return (res->hash >> 32) % ls->entries;
}

/* The value block's state word of the lock whose word is at @lslot. */
static u32 rdlock_lvb_state_slot(const struct rdlock_ls *ls, u32 lslot)
{
	return lslot - 1 + rdlock_ls_entry_slots(&ls->attr) -
	       RDLOCK_LS_LVB_SLOTS;
}

/*
 * Does the lock word show neither holder nor waiter: the CAS spinlock's
 * is 0, a bakery word's done counters equal its ticket counters (they
 * count up and are not 0 after use), a CQL header counts nobody in its
 * queue and no reset (its qhead and the entries' versions stay: the next
 * name continues the laps, which is what versions are for).
 */
static bool rdlock_ls_word_idle(const struct rdlock_ls *ls, u64 w)
{
	enum bakery_mode mode = ls->attr.flags & RDLOCK_LS_UPDATE ?
				BAKERY_UPD_SHARED : BAKERY_SHARED;
	int c;

	if (ls->attr.proto == RDLOCK_PROTO_CQL) {
		struct cql_layout l;

		if (cql_layout_init(&l, ls->cfg.cql_cap_bits,
				    ls->cfg.cql_ver_bits))
			return false;
		return !cql_hdr_qsize(&l, w) && !cql_hdr_resetting(w);
	}
	if (ls->attr.proto != RDLOCK_PROTO_BAKERY)
		return !w;
	for (c = 0; c < BAKERY_NR_CLS; c++)
		if (bakery_cls_bits(mode, c) &&
		    bakery_n(w, mode, c) != bakery_max(w, mode, c))
			return false;
	return true;
}

/*
 * The caller set the freeing flag on the tag word at @tslot (holding @name:
 * tag and placement, no reference): nobody can take a reference, so the
 * lock word can only become idler. Free the entry if it is idle, else put
 * it back unreferenced for a later probe to free. Return: true if freed.
 */
static bool rdlock_entry_finish_free(struct rdlock_ls *ls, u32 home,
				     u32 tslot, u64 name)
{
	u32 lnode, lslot;
	u64 w[2], old;
	bool idle;
	int ret;

	rdlock_entry_lock_at(ls, home, tslot, name & RDLOCK_LS_PLACE_MASK,
			     &lnode, &lslot);
	/* The lock word, and the gate word after it: one READ. */
	w[1] = 0;
	ret = rdlock_ls_read_range(ls, lnode, lslot,
				   ls->attr.flags & RDLOCK_LS_GATE ? 2 : 1, w);
	idle = !ret && rdlock_ls_word_idle(ls, w[0]) &&
	       rdlock_ls_word_idle(ls, w[1]);
	/*
	 * The name's value block goes with the entry: the same name taking
	 * the entry again later must not find an older value it wrote here
	 * (it may have written newer ones in another entry meanwhile).
	 */
	if (idle && ls->attr.flags & RDLOCK_LS_LVB)
		idle = !rdlock_ls_op(ls, lnode, RDLOCK_XOP_WRITE,
				     rdlock_lvb_state_slot(ls, lslot), 0, 0,
				     &old);
	ret = rdlock_ls_op(ls, home, RDLOCK_XOP_CAS, tslot,
			   name | RDLOCK_LS_FREEING,
			   idle ? RDLOCK_LS_FREED : name, &old);
	if (ret || old != (name | RDLOCK_LS_FREEING)) {
		/* Unknown outcome: the entry may stay taken, never shared. */
		atomic64_inc(&ls->ref_errors);
		if (!rdlock_ls_stale(ls))
			pr_warn_ratelimited("lockspace %s: entry %u:%u left in freeing state (%d)\n",
					    ls->name, home, tslot, ret);
		return false;
	}
	atomic64_inc(idle ? &ls->reclaimed : &ls->busy_at_free);
	return idle;
}

/*
 * Drop the reference this node holds on the entry at @tslot (@name: its
 * tag and placement); the last one frees it if its lock word is idle. A
 * failed CAS may or may not have been applied: the reference then stays
 * (taking it off twice could free an entry in use, and another name would
 * get its lock word).
 */
static void rdlock_entry_unref(struct rdlock_ls *ls, u32 home, u32 tslot,
			       u64 name)
{
	u64 expect = name | 1, new, old;
	int ret;

	for (;;) {
		new = rdlock_entry_refs(expect) == 1 ? name | RDLOCK_LS_FREEING :
						       expect - 1;
		ret = rdlock_ls_op(ls, home, RDLOCK_XOP_CAS, tslot, expect, new,
				   &old);
		if (!ret && old == expect)
			break;
		/* A reference of ours pins the placement too. */
		if (ret || (old & ~RDLOCK_LS_REFS_MAX) != name ||
		    !rdlock_entry_refs(old)) {
			atomic64_inc(&ls->ref_errors);
			/* A lost lockspace's tables may be gone: say nothing. */
			if (!rdlock_ls_stale(ls))
				pr_warn_ratelimited("lockspace %s: reference on entry %u:%u not dropped (%d, %#llx)\n",
						    ls->name, home, tslot, ret,
						    ret ? 0ULL : old);
			atomic64_dec(&ls->references);
			return;
		}
		expect = old;
	}
	atomic64_inc(&ls->ref_drops);
	atomic64_dec(&ls->references);
	if (new & RDLOCK_LS_FREEING)
		rdlock_entry_finish_free(ls, home, tslot, name);
}

/* Drop this node's reference on @res's entry. */
static void rdlock_res_unref(struct rdlock_ls *ls, struct rdlock_res *res)
{
	rdlock_entry_unref(ls, res->entry_home, res->entry_slot,
			   res->tag | res->place);
}

/*
 * Give a forgotten name's entry reference back, then free it; after its
 * locks' posted releases ended, which also keeps the lockspace's stats
 * they count into until then.
 */
static void rdlock_res_release(struct rdlock_ls *ls, struct rdlock_res *res)
{
	rdlock_proto_wait_pin(&res->posted);
	if (res->resolved)
		rdlock_res_unref(ls, res);
	kfree(res);
}

static void rdlock_ls_drop_work(struct work_struct *work)
{
	struct rdlock_ls *ls = container_of(work, struct rdlock_ls, drop_work);
	unsigned int nofs = memalloc_nofs_save();
	struct rdlock_res *res;
	bool dying;

	spin_lock(&ls->res_lock);
	for (;;) {
		res = list_first_entry_or_null(&ls->drops, struct rdlock_res,
					       lru);
		if (!res)
			break;
		list_del(&res->lru);
		spin_unlock(&ls->res_lock);
		rdlock_res_release(ls, res);
		spin_lock(&ls->res_lock);
		/* Counted until done: debugfs readers wait for 0. */
		ls->nr_drops--;
	}
	ls->dropping = false;
	dying = ls->dying;
	spin_unlock(&ls->res_lock);
	memalloc_nofs_restore(nofs);
	if (!dying)
		return;
	/* Tickets it abandoned may still be finishing: they hold the quota. */
	rdlock_proto_quota_put(ls->cfg.quota);
	kfree(ls);
}

static struct rdlock_res *rdlock_res_lookup(struct rdlock_ls *ls, u64 hash,
					    const void *name, size_t len)
{
	struct rdlock_res *res;

	hash_for_each_possible(ls->res, res, hnode, hash)
		if (res->hash == hash && res->len == len &&
		    !memcmp(res->name, name, len))
			return res;
	return NULL;
}

static void rdlock_res_ref(struct rdlock_ls *ls, struct rdlock_res *res)
{
	if (!res->refs++) {
		list_del_init(&res->lru);
		ls->nr_unused--;
	}
}

/* The name with one more reference, created (unresolved) if new. */
static struct rdlock_res *rdlock_res_get(struct rdlock_ls *ls,
					 const void *name, size_t len)
{
	u64 hash = rdlock_res_hash(ls, name, len);
	struct rdlock_res *res, *new;

	spin_lock(&ls->res_lock);
	res = rdlock_res_lookup(ls, hash, name, len);
	if (res)
		rdlock_res_ref(ls, res);
	spin_unlock(&ls->res_lock);
	if (res)
		return res;

	new = kzalloc(sizeof(*new), GFP_NOFS);
	if (!new)
		return NULL;
	new->hash = hash;
	new->tag = (hash >> RDLOCK_LS_TAG_SHIFT ?: 1) << RDLOCK_LS_TAG_SHIFT;
	new->len = len;
	memcpy(new->name, name, len);
	mutex_init(&new->resolve_mutex);
	INIT_LIST_HEAD(&new->lru);

	spin_lock(&ls->res_lock);
	res = rdlock_res_lookup(ls, hash, name, len);
	if (res) {
		rdlock_res_ref(ls, res);
	} else {
		res = new;
		new = NULL;
		res->refs = 1;
		hash_add(ls->res, &res->hnode, hash);
	}
	spin_unlock(&ls->res_lock);
	kfree(new);
	return res;
}

/*
 * Move unused name @res from the cache to the drops, under res_lock.
 * Return: true if the drop work was idle and the caller must queue it.
 */
static bool rdlock_res_drop_locked(struct rdlock_ls *ls,
				   struct rdlock_res *res)
{
	hash_del(&res->hnode);
	list_move_tail(&res->lru, &ls->drops);
	ls->nr_unused--;
	ls->nr_drops++;
	if (ls->dropping)
		return false;
	ls->dropping = true;
	return true;
}

/*
 * Unused names stay resolved until too many are; the oldest is forgotten
 * and its entry reference dropped in the background (remote operations).
 */
static void rdlock_res_put(struct rdlock_ls *ls, struct rdlock_res *res)
{
	struct rdlock_res *old;
	bool queue = false;

	spin_lock(&ls->res_lock);
	if (!--res->refs) {
		list_add_tail(&res->lru, &ls->lru);
		if (++ls->nr_unused > ls->res_cache) {
			old = list_first_entry(&ls->lru, struct rdlock_res, lru);
			queue = rdlock_res_drop_locked(ls, old);
		}
	}
	spin_unlock(&ls->res_lock);
	if (queue)
		queue_work(rdlock_ls_wq, &ls->drop_work);
}

/**
 * rdlock_ls_home() - the home node of a name
 * @ls: the lockspace.
 * @name: the name.
 * @len: its length.
 *
 * Return: the node whose table holds the name's entry.
 */
u32 rdlock_ls_home(const struct rdlock_ls *ls, const void *name, size_t len)
{
	return rdlock_res_home(ls, rdlock_res_hash(ls, name, len));
}

/**
 * rdlock_ls_trim() - forget the names of one home this node does not use
 * @ls: the lockspace.
 * @home: the home node (rdlock_ls_home()) whose entries are wanted.
 *
 * For a user told that a name found no free entry (-ENOSPC) on @home: the
 * entry references of this node's unused names homed there are dropped in
 * the background (remote operations), and an entry nobody else uses is
 * freed for another name. A name used again later is resolved again.
 * Names homed elsewhere stay: their entries would not make room on @home.
 */
void rdlock_ls_trim(struct rdlock_ls *ls, u32 home)
{
	struct rdlock_res *res, *tmp;
	bool queue = false;

	spin_lock(&ls->res_lock);
	list_for_each_entry_safe(res, tmp, &ls->lru, lru) {
		/* Unresolved names hold no entry: they go anyway. */
		if (res->resolved && res->entry_home != home)
			continue;
		queue |= rdlock_res_drop_locked(ls, res);
	}
	spin_unlock(&ls->res_lock);
	if (queue)
		queue_work(rdlock_ls_wq, &ls->drop_work);
}

/*
 * No free entry for a name on @home: forget this node's unused names homed
 * there, and drop their references now (the caller may then find room).
 * Return: true if there were any.
 */
static bool rdlock_res_shrink(struct rdlock_ls *ls, u32 home)
{
	struct rdlock_res *res, *tmp;
	LIST_HEAD(victims);

	spin_lock(&ls->res_lock);
	list_for_each_entry_safe(res, tmp, &ls->lru, lru) {
		if (!res->resolved || res->entry_home != home)
			continue;
		hash_del(&res->hnode);
		list_move_tail(&res->lru, &victims);
		ls->nr_unused--;
	}
	list_for_each_entry_safe(res, tmp, &ls->drops, lru) {
		if (!res->resolved || res->entry_home != home)
			continue;
		list_move_tail(&res->lru, &victims);
		ls->nr_drops--;
	}
	spin_unlock(&ls->res_lock);
	if (list_empty(&victims))
		return false;
	list_for_each_entry_safe(res, tmp, &victims, lru) {
		list_del(&res->lru);
		rdlock_res_release(ls, res);
	}
	return true;
}

/* The tag word of an entry @res claims: its tag, placement, one reference. */
static u64 rdlock_entry_claim_word(const struct rdlock_ls *ls,
				   const struct rdlock_res *res)
{
	return res->tag | rdlock_entry_place_self(ls, res->entry_home) | 1;
}

/*
 * The first entry of its window a resolve's check reads after taking a
 * reference (rdlock_res_verify()): READ in the operation that took the
 * reference, when the window has one to check.
 * @index: its index in the window; @read: whether it was READ; @val: its
 * tag word then.
 */
struct rdlock_res_check {
	u32 index;
	bool read;
	u64 val;
};

/*
 * Take a reference on the entry at @tslot for @res, whose tag word was
 * seen as @expect (0 or RDLOCK_LS_FREED: free): claim it if free (with
 * this node's placement), join it if it holds @res's tag. @word: the tag
 * word written. @check: the check's first entry, READ after each CAS in
 * the same operation (a CAS_READ), or NULL. Return: 1 if taken, 0 if it
 * is another name's or being freed now, or an error.
 */
static int rdlock_entry_take(struct rdlock_ls *ls, struct rdlock_res *res,
			     u32 tslot, u64 expect, u64 *word,
			     struct rdlock_res_check *check)
{
	u32 home = res->entry_home, cslot = 0;
	u64 old;
	int ret;

	if (check)
		cslot = rdlock_entry_slot(ls, rdlock_res_first(ls, res),
					  check->index);
	for (;;) {
		*word = rdlock_ls_entry_free(expect) ?
			rdlock_entry_claim_word(ls, res) : expect + 1;
		if (check) {
			ret = rdlock_xport_exec_range(RDLOCK_XOP_CAS_READ, home,
						      ls->incarnation[home],
						      tslot, expect, *word,
						      cslot, 1, &old,
						      &check->val, 0);
			check->read = ret == 1;
			ret = min(ret, 0);
		} else {
			ret = rdlock_ls_op(ls, home, RDLOCK_XOP_CAS, tslot,
					   expect, *word, &old);
		}
		if (ret)
			return ret;
		if (old == expect)
			return 1;
		if (!rdlock_ls_entry_free(old) &&
		    rdlock_entry_name(old) != res->tag)
			return 0;
		/* One reference more than the word holds: none is leaked. */
		if (rdlock_entry_refs(old) == RDLOCK_LS_REFS_MAX)
			return -ENOSPC;
		expect = old;
	}
}

/*
 * An entry with no reference whose lock word was busy when its last
 * reference went: free it now if the word is idle. Return: true if freed.
 */
static bool rdlock_entry_free_unused(struct rdlock_ls *ls, u32 home,
				     u32 tslot, u64 seen)
{
	u64 old;

	if (rdlock_ls_op(ls, home, RDLOCK_XOP_CAS, tslot, seen,
			 seen | RDLOCK_LS_FREEING, &old) || old != seen)
		return false;
	return rdlock_entry_finish_free(ls, home, tslot, seen);
}

/*
 * Read the name's window up to its first never used entry (0: no entry
 * was ever taken after it, since entries never become 0 again) or its
 * first entry of the name with references, then take
 * a reference on, in this order: the first entry of the name with
 * references, the first without, the first free entry (0 or freed), the
 * first unreferenced entry of another name whose lock word has become
 * idle (freed first). The first entry is not read but claimed by a CAS
 * from 0, which reads it when it is not 0. @word: the tag word written.
 * @fresh: set when that CAS claimed it: nothing was ever taken in the
 * window, so no other entry of the name exists, and any taken later
 * lies after this one, whose taker's check sees it (design.rst,
 * "Reclaim"): the reference needs no check of its own. @check: else the
 * check's first entry, READ with the reference where there is one.
 * Return: the index taken, -EAGAIN if the entry changed before the
 * reference was taken (read again), or an error.
 */
static int rdlock_res_probe(struct rdlock_ls *ls, struct rdlock_res *res,
			    u64 *word, bool *fresh,
			    struct rdlock_res_check *check)
{
	int live = -1, dormant = -1, free = -1, unused = -1, pick, ret;
	u32 first = rdlock_res_first(ls, res), i;
	u64 v, seen[RDLOCK_LS_NAME_WINDOW];

	*fresh = false;
	for (i = 0; i < rdlock_res_window(ls); i++) {
		atomic64_inc(&ls->probes);
		if (i) {
			ret = rdlock_ls_op(ls, res->entry_home, RDLOCK_XOP_READ,
					   rdlock_entry_slot(ls, first, i), 0,
					   0, &v);
		} else {
			*word = rdlock_entry_claim_word(ls, res);
			ret = rdlock_ls_op(ls, res->entry_home, RDLOCK_XOP_CAS,
					   rdlock_entry_slot(ls, first, 0), 0,
					   *word, &v);
			if (!ret && !v) {
				*fresh = true;
				return 0;
			}
		}
		if (ret)
			return ret;
		seen[i] = v;
		if (rdlock_ls_entry_free(v)) {
			if (free < 0)
				free = i;
			if (!v)
				break;
		} else if (rdlock_entry_name(v) == res->tag) {
			if (rdlock_entry_refs(v)) {
				/* The first of the name with references. */
				live = i;
				break;
			}
			if (dormant < 0)
				dormant = i;
		} else if (!(v & (RDLOCK_LS_REFS_MAX | RDLOCK_LS_FREEING)) &&
			   unused < 0) {
			unused = i;
		}
	}
	pick = live >= 0 ? live : dormant >= 0 ? dormant : free;
	if (pick < 0 && unused >= 0 &&
	    rdlock_entry_free_unused(ls, res->entry_home,
				     rdlock_entry_slot(ls, first, unused),
				     seen[unused])) {
		pick = unused;
		seen[pick] = RDLOCK_LS_FREED;
	}
	if (pick < 0)
		return -ENOSPC;
	/* The check reads the window from its start, skipping @pick. */
	check->index = pick ? 0 : 1;
	check->read = false;
	ret = rdlock_entry_take(ls, res, rdlock_entry_slot(ls, first, pick),
				seen[pick], word,
				check->index < rdlock_res_window(ls) ?
				check : NULL);
	if (ret < 0)
		return ret;
	return ret ? pick : -EAGAIN;
}

/*
 * After taking a reference on entry @got: is there another entry of the
 * name with references? @other: its index (the lowest), or -1. @check:
 * the first entry to look at, if READ already (after the reference was
 * taken). Return: 0 or a transport error.
 */
static int rdlock_res_verify(struct rdlock_ls *ls, struct rdlock_res *res,
			     int got, const struct rdlock_res_check *check,
			     int *other)
{
	u32 first = rdlock_res_first(ls, res), i;
	u64 v;
	int ret;

	*other = -1;
	for (i = 0; i < rdlock_res_window(ls); i++) {
		if (i == got)
			continue;
		if (check->read && i == check->index) {
			atomic64_inc(&ls->checks_spared);
			v = check->val;
		} else {
			ret = rdlock_ls_op(ls, res->entry_home, RDLOCK_XOP_READ,
					   rdlock_entry_slot(ls, first, i), 0,
					   0, &v);
			if (ret)
				return ret;
		}
		if (!v)		/* nothing taken after a never used entry */
			break;
		if (rdlock_entry_live(v, res->tag)) {
			*other = i;
			break;
		}
	}
	return 0;
}

/*
 * Find or claim the name's entry on its home node and hold a reference on
 * it. Entries freed in the window leave holes, so two nodes can claim two
 * entries for one name at once; each then looks at the window again (up
 * to its first never used entry), and a reference taken while an entry
 * of the name already had one is given back, its taker joins that entry
 * (design.rst, "Reclaim").
 */
static int rdlock_res_resolve(struct rdlock_ls *ls, struct rdlock_res *res)
{
	struct rdlock_res_check check;
	unsigned int attempt = 0;
	bool shrunk = false, fresh;
	int got, other, ret;
	u64 word;

	res->entry_home = rdlock_res_home(ls, res->hash);
	atomic64_inc(&ls->resolves);
	for (;;) {
		if (fatal_signal_pending(current))
			return -EINTR;
		got = rdlock_res_probe(ls, res, &word, &fresh, &check);
		if (got == -EAGAIN)
			continue;
		if (got == -ENOSPC && !shrunk) {
			shrunk = true;
			if (rdlock_res_shrink(ls, res->entry_home))
				continue;
		}
		if (got < 0)
			return got;
		atomic64_inc(&ls->references);
		res->entry_slot = rdlock_entry_slot(ls, rdlock_res_first(ls, res),
						    got);
		res->place = word & RDLOCK_LS_PLACE_MASK;
		other = -1;
		ret = 0;
		if (fresh)
			atomic64_inc(&ls->resolves_fresh);
		else
			ret = rdlock_res_verify(ls, res, got, &check, &other);
		if (!ret && other < 0) {
			rdlock_entry_lock_at(ls, res->entry_home,
					     res->entry_slot, res->place,
					     &res->home, &res->slot);
			atomic64_add(!!res->place, &ls->placed);
			res->resolved = true;
			return 0;
		}
		rdlock_res_unref(ls, res);
		if (ret)
			return ret;
		atomic64_inc(&ls->resolve_retries);
		/* Both may have seen the other: part at random. */
		schedule_timeout_killable(1 + get_random_u32_below(1U <<
						min(attempt++, 6U)));
	}
}

/**
 * rdlock_ls_home_entries() - this node's name entries of a lockspace
 * @ls: the lockspace.
 * @used: entries holding a name.
 * @refs: references on them, summed.
 * @freeing: entries being freed.
 *
 * Reads every entry of the region on this node, through the transport.
 *
 * Return: 0 or a transport error.
 */
int rdlock_ls_home_entries(struct rdlock_ls *ls, u64 *used, u64 *refs,
			   u64 *freeing)
{
	u32 self = rdlock_xport_self(), i;
	u64 v;
	int ret;

	*used = 0;
	*refs = 0;
	*freeing = 0;
	for (i = 0; i < ls->entries; i++) {
		ret = rdlock_ls_op(ls, self, RDLOCK_XOP_READ,
				   rdlock_entry_slot(ls, 0, i), 0, 0, &v);
		if (ret)
			return ret;
		if (rdlock_ls_entry_free(v))
			continue;
		*used += 1;
		*refs += rdlock_entry_refs(v);
		*freeing += !!(v & RDLOCK_LS_FREEING);
	}
	return 0;
}

/**
 * rdlock_ls_home_read() - READ one slot of a name entry homed on this node
 * @ls: the lockspace.
 * @i: the entry, below @ls->entries.
 * @off: the slot in it: 0 the tag word, 1 the lock word (CQL: the header),
 *	2 on the CQL queue.
 * @v: the word.
 *
 * Through the transport, as every access to the table (debugfs).
 *
 * Return: 0 or a transport error.
 */
int rdlock_ls_home_read(struct rdlock_ls *ls, u32 i, u32 off, u64 *v)
{
	return rdlock_ls_op(ls, rdlock_xport_self(), RDLOCK_XOP_READ,
			    rdlock_entry_slot(ls, 0, i) + off, 0, 0, v);
}

/* ------------------------------------------------------------------ */
/* Locks                                                              */

/**
 * rdlock_lock_alloc() - validate a request and prepare its lock
 * @ls: the lockspace.
 * @name: lock name.
 * @len: its length.
 * @mode: requested mode.
 * @opts: options, or NULL for the defaults.
 *
 * Return: the lock, not yet acquired, or an ERR_PTR() of
 * rdlock_ls_check_lock()'s errors or -ENOMEM.
 */
struct rdlock_lock *rdlock_lock_alloc(struct rdlock_ls *ls, const void *name,
				      size_t len, enum rdlock_lock_mode mode,
				      const struct rdlock_lock_opts *opts)
{
	struct rdlock_lock *lk;
	int ret;

	ret = rdlock_ls_check_lock(ls, len, mode, opts);
	if (ret)
		return ERR_PTR(ret);
	lk = kzalloc(sizeof(*lk), GFP_NOFS);
	if (!lk)
		return ERR_PTR(-ENOMEM);
	lk->res = rdlock_res_get(ls, name, len);
	if (!lk->res) {
		kfree(lk);
		return ERR_PTR(-ENOMEM);
	}
	lk->ls = ls;
	lk->mode = mode;
	if (opts)
		lk->opts = *opts;
	INIT_LIST_HEAD(&lk->ls_node);
	return lk;
}

/**
 * rdlock_lock_free() - free a lock that is not held
 * @lk: the lock.
 */
void rdlock_lock_free(struct rdlock_lock *lk)
{
	rdlock_res_put(lk->ls, lk->res);
	kfree(lk);
}

static unsigned long rdlock_deadline(const struct rdlock_lock_opts *opts)
{
	/* A try is a wait whose deadline has already come: 0 means none. */
	if (opts->flags & RDLOCK_LKF_TRY)
		return jiffies ?: 1;
	return opts->timeout_ms ? jiffies + msecs_to_jiffies(opts->timeout_ms) :
				  0;
}

static void rdlock_lock_set_state(struct rdlock_lock *lk,
				  enum rdlock_lock_state state)
{
	struct rdlock_ls *ls = lk->ls;

	spin_lock(&ls->locks_lock);
	lk->state = state;
	lk->since = ktime_get();
	if (list_empty(&lk->ls_node))
		list_add_tail(&lk->ls_node, &ls->locks);
	spin_unlock(&ls->locks_lock);
}

static void rdlock_lock_unlist(struct rdlock_lock *lk)
{
	spin_lock(&lk->ls->locks_lock);
	list_del_init(&lk->ls_node);
	spin_unlock(&lk->ls->locks_lock);
}

static int __rdlock_lock_acquire(struct rdlock_lock *lk)
{
	struct rdlock_ls *ls = lk->ls;
	struct rdlock_res *res = lk->res;
	int ret = 0;

	if (rdlock_ls_stale(ls))
		return -ESHUTDOWN;
	/* Another task resolving the name may wait on the home for seconds. */
	if (mutex_lock_killable(&res->resolve_mutex))
		return -EINTR;
	if (!res->resolved)
		ret = rdlock_res_resolve(ls, res);
	mutex_unlock(&res->resolve_mutex);
	if (ret)
		return rdlock_ls_error(ls, ret);

	memset(&lk->ticket, 0, sizeof(lk->ticket));
	lk->ticket.node = res->home;
	lk->ticket.slot = res->slot + !!(lk->opts.flags & RDLOCK_LKF_GATE);
	lk->ticket.mode = (enum rdlock_mode)lk->mode;
	lk->ticket.k = lk->opts.lease_slots;
	lk->ticket.incarnation = ls->incarnation[res->home];
	lk->lvb_read_ok = false;
	if (lk->opts.flags & RDLOCK_LKF_LVB) {
		lk->ticket.read_slot = rdlock_lvb_state_slot(ls, res->slot);
		lk->ticket.read_count = RDLOCK_LS_LVB_SLOTS;
		lk->ticket.read_vals = lk->lvb_read;
	}
	rdlock_lock_set_state(lk, RDLOCK_LK_WAITING);
	trace_rdlock_lock_request(lk, 0);
	ret = ls->ops->acquire(&ls->cfg, &lk->ticket,
			       rdlock_deadline(&lk->opts));
	if (ret == -ETIMEDOUT && lk->opts.flags & RDLOCK_LKF_TRY)
		ret = -EAGAIN;
	/* Failed because the tables went: say so, not how it showed. */
	ret = rdlock_ls_error(ls, ret);
	trace_rdlock_lock_done(lk, ret);
	if (ret) {
		rdlock_lock_unlist(lk);
		return ret;
	}
	lk->lvb_read_ok = lk->ticket.read_got;
	if (lk->lvb_read_ok)
		atomic64_inc(&ls->lvb_reads_spared);
	rdlock_lock_set_state(lk, RDLOCK_LK_GRANTED);
	return 0;
}

/**
 * rdlock_lock_acquire() - take a prepared lock; sleeps
 * @lk: from rdlock_lock_alloc().
 *
 * Return: 0 when granted, else as rdlock_lock() (the lock stays allocated).
 */
int rdlock_lock_acquire(struct rdlock_lock *lk)
{
	/* The caller may be a file system's writeback: no reclaim into it. */
	unsigned int nofs = memalloc_nofs_save();
	int ret = __rdlock_lock_acquire(lk);

	memalloc_nofs_restore(nofs);
	return ret;
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

	struct rdlock_ls_attr plain = *attr;

	/*
	 * Value blocks and gates are for kernel users: the uapi's check
	 * refuses them. A CQL lock word's queue follows it: no gate there.
	 */
	plain.flags &= ~(RDLOCK_LS_LVB | RDLOCK_LS_GATE | RDLOCK_LS_PLACE |
			 RDLOCK_LS_KEEP_NAMES);
	/* Placement: up to RDLOCK_LS_SLOTS_MAX slots per node's area. */
	if (attr->flags & RDLOCK_LS_PLACE &&
	    attr->slots <= RDLOCK_LS_PLACE_SLOTS_MAX)
		plain.slots = min_t(u32, attr->slots, RDLOCK_LS_SLOTS_MAX);
	ret = rdlock_ls_check_name(name, false) ?: rdlock_ls_check_attr(&plain);
	if (ret)
		return ERR_PTR(ret);
	/* Placement: an entry per area with the most nodes a cluster has. */
	if ((attr->flags & RDLOCK_LS_GATE &&
	     attr->proto == RDLOCK_PROTO_CQL) ||
	    (attr->flags & (RDLOCK_LS_LVB | RDLOCK_LS_GATE) &&
	     attr->slots < rdlock_ls_entry_slots(attr)) ||
	    (attr->flags & RDLOCK_LS_PLACE &&
	     attr->slots < rdlock_ls_entry_slots(attr) * RDLOCK_MAX_NODES))
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
 * rdlock_lock() - take a lock; sleeps until granted or failed
 * @ls: the lockspace.
 * @name: the lock's name.
 * @len: 1 to RDLOCK_RES_NAME_MAX bytes.
 * @mode: RDLOCK_LOCK_SH, _EX or, in an RDLOCK_LS_UPDATE lockspace, _UP.
 * @opts: NULL for: wait without limit, one lease slot.
 *
 * Two acquisitions of one name conflict even by the same caller.
 *
 * Return: the held lock, or ERR_PTR(): -EINVAL for bad arguments,
 * -EOPNOTSUPP for an update lock where the lockspace has none, -EAGAIN when
 * RDLOCK_LKF_TRY found it busy or a lease reset revoked the ticket (retry),
 * -ETIMEDOUT after @opts->timeout_ms, -EBUSY with RDLOCK_LKF_TRY or a
 * timeout while RDLOCK_LS_FINISHING_MAX tickets such calls gave up on are
 * still finishing in the background (nothing taken), -EINTR on a fatal
 * signal, -ENOSPC when the home node has no free name entry, -ESHUTDOWN
 * when the lockspace was lost (rdlock_ls_stale()), or a transport error.
 */
struct rdlock_lock *rdlock_lock(struct rdlock_ls *ls, const void *name,
				size_t len, enum rdlock_lock_mode mode,
				const struct rdlock_lock_opts *opts)
{
	struct rdlock_lock *lk = rdlock_lock_alloc(ls, name, len, mode, opts);
	int ret;

	if (IS_ERR(lk))
		return lk;
	ret = rdlock_lock_acquire(lk);
	if (ret) {
		rdlock_lock_free(lk);
		return ERR_PTR(ret);
	}
	return lk;
}
EXPORT_SYMBOL_GPL(rdlock_lock);

static void rdlock_lock_async_work(struct work_struct *work)
{
	struct rdlock_lock *lk = container_of(work, struct rdlock_lock, work);
	struct rdlock_ls *ls = lk->ls;
	rdlock_done_t done = lk->done;
	void *arg = lk->arg;
	int ret = rdlock_lock_acquire(lk);

	if (ret) {
		rdlock_lock_free(lk);
		lk = NULL;
	}
	done(arg, ret, lk);
	/*
	 * rdlock_ls_close() may free @ls as soon as the count is 0: a hashed
	 * wait queue keyed by the address, unlike one inside @ls, outlives it.
	 */
	if (atomic_dec_and_test(&ls->async_pending))
		wake_up_var(&ls->async_pending);
}

/**
 * rdlock_lock_async() - take a lock in the background
 * @ls: the lockspace.
 * @name: the lock's name (copied).
 * @len: 1 to RDLOCK_RES_NAME_MAX bytes.
 * @mode: as for rdlock_lock().
 * @opts: as for rdlock_lock() (copied).
 * @done: called once with the result, see rdlock_done_t.
 * @arg: passed to @done.
 *
 * Validates the request at once; the acquisition then runs in an rdlock
 * worker. Does not sleep beyond a GFP_NOFS allocation.
 *
 * Return: 0 when queued (@done will be called), else -EINVAL,
 * -EOPNOTSUPP or -ENOMEM and @done is not called.
 */
int rdlock_lock_async(struct rdlock_ls *ls, const void *name, size_t len,
		      enum rdlock_lock_mode mode,
		      const struct rdlock_lock_opts *opts,
		      rdlock_done_t done, void *arg)
{
	struct rdlock_lock *lk;

	if (!done)
		return -EINVAL;
	lk = rdlock_lock_alloc(ls, name, len, mode, opts);
	if (IS_ERR(lk))
		return PTR_ERR(lk);
	lk->done = done;
	lk->arg = arg;
	INIT_WORK(&lk->work, rdlock_lock_async_work);
	atomic_inc(&ls->async_pending);
	queue_work(rdlock_ls_wq, &lk->work);
	return 0;
}
EXPORT_SYMBOL_GPL(rdlock_lock_async);

/**
 * rdlock_lock_mode() - the mode a lock is held in now
 * @lk: a held lock.
 *
 * Return: its mode; an upgraded update lock is RDLOCK_LOCK_EX.
 */
enum rdlock_lock_mode rdlock_lock_mode(const struct rdlock_lock *lk)
{
	if (lk->mode == RDLOCK_LOCK_UP && lk->ticket.upgraded)
		return RDLOCK_LOCK_EX;
	return lk->mode;
}
EXPORT_SYMBOL_GPL(rdlock_lock_mode);

/**
 * rdlock_convert() - change the mode of a held lock; may sleep
 * @lk: the lock.
 * @mode: RDLOCK_LOCK_EX to upgrade an update lock (waits for the readers
 *	granted before it to leave; nobody else can get in meanwhile), or
 *	RDLOCK_LOCK_UP to end an upgrade.
 * @opts: RDLOCK_LKF_TRY or a timeout for the upgrade; NULL: no limit.
 *
 * Return: 0; -EALREADY when @lk is in @mode already; -EOPNOTSUPP for any
 * other conversion (unlock and lock instead); -EINVAL for bad @opts;
 * -ETIMEDOUT, -EINTR or, with RDLOCK_LKF_TRY, -EAGAIN when the upgrade did
 * not happen, in which case the lock is still held in RDLOCK_LOCK_UP; in a
 * lockspace with leases -EAGAIN can also mean a stall reset revoked the
 * lock: it is no longer held, and rdlock_unlock() only frees it;
 * -ESHUTDOWN when the lockspace was lost.
 */
int rdlock_convert(struct rdlock_lock *lk, enum rdlock_lock_mode mode,
		   const struct rdlock_lock_opts *opts)
{
	struct rdlock_lock_opts o = opts ? *opts : (struct rdlock_lock_opts){};
	struct rdlock_ls *ls = lk->ls;
	unsigned int nofs;
	int ret;

	if (mode >= RDLOCK_LOCK_MODE_NR ||
	    !rdlock_lock_flags_ok(o.flags, o.timeout_ms) || o.lease_slots)
		return -EINVAL;
	if (mode == rdlock_lock_mode(lk))
		return -EALREADY;
	if (lk->mode != RDLOCK_LOCK_UP)
		return -EOPNOTSUPP;
	if (mode == RDLOCK_LOCK_UP) {
		lk->ticket.upgraded = false;
		return 0;
	}
	if (mode != RDLOCK_LOCK_EX)
		return -EOPNOTSUPP;
	if (rdlock_ls_stale(ls))
		return -ESHUTDOWN;
	lk->lvb_read_ok = false;
	rdlock_lock_set_state(lk, RDLOCK_LK_CONVERTING);
	nofs = memalloc_nofs_save();
	ret = ls->ops->upgrade(&ls->cfg, &lk->ticket, rdlock_deadline(&o));
	memalloc_nofs_restore(nofs);
	if (ret == -ETIMEDOUT && o.flags & RDLOCK_LKF_TRY)
		ret = -EAGAIN;
	ret = rdlock_ls_error(ls, ret);
	trace_rdlock_convert_done(lk, ret);
	rdlock_lock_set_state(lk, RDLOCK_LK_GRANTED);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlock_convert);

/* First slot of @lk's value block: after the tag word and the lock. */
static u32 rdlock_lvb_slot(const struct rdlock_lock *lk)
{
	return rdlock_lvb_state_slot(lk->ls, lk->res->slot);
}

static int rdlock_lvb_check(const struct rdlock_lock *lk)
{
	if (!(lk->ls->attr.flags & RDLOCK_LS_LVB) || !lk->res->resolved)
		return -EINVAL;
	return rdlock_ls_stale(lk->ls) ? -ESHUTDOWN : 0;
}

/**
 * rdlock_lvb_get() - read the value block of a held lock's name; sleeps
 * @lk: a granted lock in an RDLOCK_LS_LVB lockspace.
 * @buf: RDLOCK_LVB_LEN bytes, or NULL to read the flags only.
 * @flags: the flags rdlock_lvb_set() stored with it for this name; 0
 *	when no holder of the name stored any since its entry was taken
 *	(the bytes are then another name's, or zeroes), or the last store
 *	of bytes did not end (rdlock_lvb_set_words()).
 *
 * The holder must exclude writers itself (a shared lock against the
 * exclusive holders that write): the words are not read at one instant
 * (%RDLOCK_XPORT_RANGE_MAX consecutive slots per operation). A lock taken
 * with %RDLOCK_LKF_LVB whose grant read the block returns that copy, with
 * no remote operation, until it stores one or is converted.
 *
 * Return: 0, -EINVAL (no value blocks, or @lk not granted), -ESHUTDOWN or
 * a transport error.
 */
int rdlock_lvb_get(struct rdlock_lock *lk, void *buf, u32 *flags)
{
	struct rdlock_ls *ls = lk->ls;
	u64 w[RDLOCK_LS_LVB_SLOTS];	/* the state word, then the bytes */
	unsigned int nofs;
	u32 i;
	int ret = rdlock_lvb_check(lk);

	if (ret)
		return ret;
	if (lk->lvb_read_ok) {
		memcpy(w, lk->lvb_read, sizeof(w));
	} else {
		nofs = memalloc_nofs_save();
		ret = rdlock_ls_read_range(ls, lk->res->home,
					   rdlock_lvb_slot(lk),
					   buf ? RDLOCK_LS_LVB_SLOTS : 1, w);
		memalloc_nofs_restore(nofs);
		if (ret)
			return rdlock_ls_error(ls, ret);
	}
	for (i = 0; buf && i < RDLOCK_LVB_LEN / 8; i++)
		put_unaligned_le64(w[1 + i], buf + 8 * i);
	*flags = (w[0] & RDLOCK_LS_TAG_MASK) == lk->res->tag ?
		 w[0] & RDLOCK_LVB_FLAGS_MASK : 0;
	return 0;
}
EXPORT_SYMBOL_GPL(rdlock_lvb_get);

/**
 * rdlock_lvb_set() - write the value block of a held lock's name; sleeps
 * @lk: a lock granted exclusive, in an RDLOCK_LS_LVB lockspace.
 * @buf: RDLOCK_LVB_LEN bytes, or NULL to write the flags only.
 * @flags: up to RDLOCK_LVB_FLAGS_MASK, the user's, stored with the name's
 *	tag after the bytes (so a reader finding them has the bytes too).
 *
 * Return: as rdlock_lvb_get().
 */
int rdlock_lvb_set(struct rdlock_lock *lk, const void *buf, u32 flags)
{
	return rdlock_lvb_set_words(lk, buf, buf ? 0xff : 0, flags);
}
EXPORT_SYMBOL_GPL(rdlock_lvb_set);

/* Value block words posted at once; the writer waits for them all. */
struct rdlock_lvb_batch {
	atomic_t left;		/* posted and not ended, and the writer's */
	int err;
	struct completion done;
};

static void rdlock_lvb_batch_done(void *ctx, int ret, u64 value)
{
	struct rdlock_lvb_batch *b = ctx;

	if (ret)
		cmpxchg(&b->err, 0, ret);
	if (atomic_dec_and_test(&b->left))
		complete(&b->done);
}

/*
 * WRITE the words of @buf that @words names to the value block whose state
 * word is @slot on @home, after a WRITE of @clear to the state word: all
 * posted, then one wait, so they cost one round trip, not one each. The
 * home executes a queue pair's operations in order, so while the bytes
 * change the state word holds @clear. A word that cannot be posted is
 * written synchronously.
 */
static int rdlock_lvb_write_words(struct rdlock_ls *ls, u32 home, u32 slot,
				  u64 clear, const void *buf, u8 words)
{
	struct rdlock_lvb_batch b = { .left = ATOMIC_INIT(1) };
	u64 incarnation = ls->incarnation[home], v, old;
	int ret = 0;
	u32 i;

	init_completion(&b.done);
	for (i = 0; !ret && i <= RDLOCK_LVB_LEN / 8; i++) {
		if (i && !(words & BIT(i - 1)))
			continue;
		v = i ? get_unaligned_le64(buf + 8 * (i - 1)) : clear;
		atomic_inc(&b.left);
		if (!rdlock_xport_post(RDLOCK_XOP_WRITE, home, incarnation,
				       slot + i, v, 0, rdlock_lvb_batch_done,
				       &b))
			continue;
		atomic_dec(&b.left);
		ret = rdlock_ls_op(ls, home, RDLOCK_XOP_WRITE, slot + i, v, 0,
				   &old);
	}
	if (!atomic_dec_and_test(&b.left))
		wait_for_completion(&b.done);
	return ret ?: b.err;
}

/**
 * rdlock_lvb_set_words() - rdlock_lvb_set() of some of the bytes
 * @lk: as for rdlock_lvb_set().
 * @buf: RDLOCK_LVB_LEN bytes, of which only the words in @words are
 *	written, or NULL.
 * @words: bit i: write bytes 8 * i to 8 * i + 7 (a holder that knows the
 *	others are already there spares their writes).
 * @flags: as for rdlock_lvb_set(), and RDLOCK_LVB_POST.
 *
 * While bytes are written the state word holds no flags, and it gets
 * @flags only once they all were: a reader never finds the flags with
 * some of the bytes, even when a write fails (the state word then keeps
 * no flags, as far as the home can be reached).
 *
 * Return: as rdlock_lvb_set().
 */
int rdlock_lvb_set_words(struct rdlock_lock *lk, const void *buf, u8 words,
			 u32 flags)
{
	struct rdlock_ls *ls = lk->ls;
	u32 slot, home = lk->res->home;
	bool post = flags & RDLOCK_LVB_POST;
	unsigned int nofs;
	u64 old, state;
	int ret = rdlock_lvb_check(lk);

	if (ret)
		return ret;
	lk->lvb_read_ok = false;
	flags &= ~RDLOCK_LVB_POST;
	if (flags & ~RDLOCK_LVB_FLAGS_MASK)
		return -EINVAL;
	slot = rdlock_lvb_slot(lk);
	state = lk->res->tag | flags;
	nofs = memalloc_nofs_save();
	if (buf && words) {
		ret = rdlock_lvb_write_words(ls, home, slot, lk->res->tag, buf,
					     words);
		/* The cleared state may be one of the writes that failed. */
		if (ret)
			rdlock_ls_op(ls, home, RDLOCK_XOP_WRITE, slot,
				     lk->res->tag, 0, &old);
	}
	/* The state word last: a reader that finds it has the bytes too. */
	if (!ret && (!post ||
		     rdlock_proto_post_write(home, ls->incarnation[home], slot,
					     state, &lk->res->posted)))
		ret = rdlock_ls_op(ls, home, RDLOCK_XOP_WRITE, slot, state, 0,
				   &old);
	memalloc_nofs_restore(nofs);
	return ret ? rdlock_ls_error(ls, ret) : 0;
}
EXPORT_SYMBOL_GPL(rdlock_lvb_set_words);

/*
 * Post the releases that are one FAA with nothing after it (bakery without
 * leases, the CAS spinlock): rdlock_unlock() returns once the FAA is on
 * the queue pair to the home instead of a round trip later. 0: every
 * release waits for its round trip (for comparing both in one boot).
 */
static bool rdlock_release_post = true;
module_param_named(release_post, rdlock_release_post, bool, 0644);
MODULE_PARM_DESC(release_post,
		 "post one-FAA releases instead of waiting for them (default: 1)");

/**
 * rdlock_unlock() - release a lock; may sleep
 * @lk: a lock rdlock_lock() or rdlock_lock_async() granted; freed here.
 *
 * Never fails: a lost connection or an expired lease is the protocol's to
 * handle. The release reaches the lock's home only while the home has the
 * table the lock was taken in (the ticket's incarnation): in a new one it
 * would corrupt another lock word. A release that is one operation may be
 * on its way when this returns (module parameter release_post): the home
 * executes it before any later operation of this node on the lock.
 */
void rdlock_unlock(struct rdlock_lock *lk)
{
	struct rdlock_ls *ls = lk->ls;
	unsigned int nofs;

	trace_rdlock_unlock(lk, 0);
	lk->ticket.post = READ_ONCE(rdlock_release_post);
	lk->ticket.pin = &lk->res->posted;
	nofs = memalloc_nofs_save();
	ls->ops->release(&ls->cfg, &lk->ticket);
	memalloc_nofs_restore(nofs);
	rdlock_lock_unlist(lk);
	rdlock_lock_free(lk);
}
EXPORT_SYMBOL_GPL(rdlock_unlock);

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

/* ------------------------------------------------------------------ */
/* Notices                                                            */

/* Our transport message type: the first after the protocols'. */
#define RDLOCK_LS_MSG_TYPE	RDLOCK_MSG_PROTO_NR

/* On the wire: the lockspace's directory tag, then the user's payload. */
struct rdlock_ls_notice_msg {
	__le64 tag;
	u8 payload[RDLOCK_LS_NOTICE_MAX];
};

static_assert(sizeof(struct rdlock_ls_notice_msg) <= RDLOCK_XMSG_PAYLOAD);

struct rdlock_ls_sink {
	struct hlist_node node;
	struct rdlock_ls *ls;
	u64 tag;
	rdlock_ls_notice_t fn;
	rdlock_ls_up_t up;
	rdlock_ls_down_t down;
	void *arg;
};

/*
 * Registered receivers, at most one per lockspace. The handler is called
 * under the lock, so unregistering waits for a delivery in progress. The
 * list changes under the mutex too, which rdlock_ls_node_down() holds
 * while it calls the down callbacks (they sleep).
 */
static DEFINE_SPINLOCK(rdlock_ls_sinks_lock);
static DEFINE_MUTEX(rdlock_ls_sinks_mutex);
static HLIST_HEAD(rdlock_ls_sinks);

static void rdlock_ls_deliver(u64 tag, u32 src, const void *payload,
			      size_t len)
{
	struct rdlock_ls_sink *s;
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->tag == tag)
			s->fn(s->arg, src, payload, len);
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
}

static void rdlock_ls_msg_handler(u32 src, const void *payload, size_t len)
{
	const struct rdlock_ls_notice_msg *m = payload;

	if (len < sizeof(m->tag) || len > sizeof(*m))
		return;
	rdlock_ls_deliver(le64_to_cpu(m->tag), src, m->payload,
			  len - sizeof(m->tag));
}

/* The transport connected to @node: tell the receivers it concerns. */
static void rdlock_ls_up_handler(u32 node)
{
	struct rdlock_ls_sink *s;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node) {
		if (!s->up)
			continue;
		for (i = 0; i < s->ls->nr_nodes; i++)
			if (s->ls->nodes[i] == node)
				s->up(s->arg, node);
	}
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
}

/**
 * rdlock_ls_notice_register() - receive the lockspace's notices
 * @ls: the lockspace.
 * @fn: called for every notice, this node's own included; must not sleep.
 * @up: NULL, or called each time the transport connects to another node
 *	of @ls, so that the receiver can send again what that node may
 *	have missed; must not sleep.
 * @down: NULL, or called once per node declared down
 *	(rdlock_ls_node_down()), before anything the node held in @ls is
 *	released; process context, may sleep, must not unregister.
 * @arg: their argument.
 *
 * Return: 0, -EEXIST when @ls has a receiver already, -ENOMEM.
 */
int rdlock_ls_notice_register(struct rdlock_ls *ls, rdlock_ls_notice_t fn,
			      rdlock_ls_up_t up, rdlock_ls_down_t down,
			      void *arg)
{
	struct rdlock_ls_sink *s, *new;
	unsigned long flags;
	int ret = 0;

	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	new->ls = ls;
	new->tag = ls->tag;
	new->fn = fn;
	new->up = up;
	new->down = down;
	new->arg = arg;
	mutex_lock(&rdlock_ls_sinks_mutex);
	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->ls == ls)
			ret = -EEXIST;
	if (!ret)
		hlist_add_head(&new->node, &rdlock_ls_sinks);
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
	mutex_unlock(&rdlock_ls_sinks_mutex);
	if (ret)
		kfree(new);
	return ret;
}

/**
 * rdlock_ls_notice_unregister() - stop receiving; no call runs after this
 * @ls: the lockspace.
 */
void rdlock_ls_notice_unregister(struct rdlock_ls *ls)
{
	struct rdlock_ls_sink *s, *found = NULL;
	unsigned long flags;

	mutex_lock(&rdlock_ls_sinks_mutex);
	spin_lock_irqsave(&rdlock_ls_sinks_lock, flags);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->ls == ls)
			found = s;
	if (found)
		hlist_del(&found->node);
	spin_unlock_irqrestore(&rdlock_ls_sinks_lock, flags);
	mutex_unlock(&rdlock_ls_sinks_mutex);
	kfree(found);
}

/* Send a notice to @node (not this node), waiting briefly for a buffer. */
static int rdlock_ls_notice_post(u32 node, const struct rdlock_ls_notice_msg *m,
				 size_t len)
{
	int err, tries;

	/* No free send buffer is a short wait, not a lost notice. */
	for (tries = 0; tries < 1000; tries++) {
		err = rdlock_xport_send_msg(node, RDLOCK_LS_MSG_TYPE, m,
					    sizeof(m->tag) + len);
		if (err != -EAGAIN)
			break;
		usleep_range(100, 200);
	}
	return err;
}

/**
 * rdlock_ls_notice_send() - send a notice to every node of the lockspace
 * @ls: the lockspace.
 * @payload: up to RDLOCK_LS_NOTICE_MAX bytes.
 * @len: its length.
 *
 * This node's receiver gets it at once, in the caller's context; the
 * other nodes' over the transport's reliable, ordered connections, so
 * two notices from one node arrive in the order sent. A node whose
 * receiver is not registered yet (it has not opened the lockspace) drops
 * it: a user that keeps state from notices has its nodes say when they
 * join (the DLM layer's hello notice). May sleep (briefly, for a send
 * buffer).
 *
 * Return: 0, or the first error of a node that could not be sent to
 * (-ENOTCONN for a node not connected: the others still get it).
 */
int rdlock_ls_notice_send(struct rdlock_ls *ls, const void *payload,
			  size_t len)
{
	struct rdlock_ls_notice_msg m = { .tag = cpu_to_le64(ls->tag) };
	u32 self = rdlock_xport_self(), i;
	int ret = 0, err;

	if (len > RDLOCK_LS_NOTICE_MAX)
		return -EINVAL;
	memcpy(m.payload, payload, len);
	for (i = 0; i < ls->nr_nodes; i++) {
		if (ls->nodes[i] == self)
			continue;
		err = rdlock_ls_notice_post(ls->nodes[i], &m, len);
		if (err && !ret)
			ret = err;
	}
	rdlock_ls_deliver(ls->tag, self, payload, len);
	return ret;
}

/**
 * rdlock_ls_notice_send_to() - send a notice to one node of the lockspace
 * @ls: the lockspace.
 * @node: the node; this node's receiver gets it at once, in the caller's
 *	context.
 * @payload: up to RDLOCK_LS_NOTICE_MAX bytes.
 * @len: its length.
 *
 * Ordered with the notices rdlock_ls_notice_send() sends to @node.
 * May sleep (briefly, for a send buffer).
 *
 * Return: 0, -EINVAL, or the transport's error (-ENOTCONN...).
 */
int rdlock_ls_notice_send_to(struct rdlock_ls *ls, u32 node,
			     const void *payload, size_t len)
{
	struct rdlock_ls_notice_msg m = { .tag = cpu_to_le64(ls->tag) };

	if (len > RDLOCK_LS_NOTICE_MAX)
		return -EINVAL;
	if (node == rdlock_xport_self()) {
		rdlock_ls_deliver(ls->tag, node, payload, len);
		return 0;
	}
	memcpy(m.payload, payload, len);
	return rdlock_ls_notice_post(node, &m, len);
}

/* ------------------------------------------------------------------ */
/* Nodes declared down                                                */

/* The survivors' barrier: our second transport message type. */
#define RDLOCK_LS_DOWN_MSG_TYPE	(RDLOCK_MSG_PROTO_NR + 1)
static_assert(RDLOCK_LS_DOWN_MSG_TYPE < RDLOCK_XMSG_USER_TYPES);

/* "Node @dead is down here, my users were told"; @ask: answer if yours too. */
struct rdlock_ls_down_msg {
	__le32 dead;
	__le32 ask;
};

enum rdlock_ls_down_stage {
	RDLOCK_LS_DOWN_NONE,
	RDLOCK_LS_DOWN_TOLD,	/* fenced here, the down callbacks returned */
	RDLOCK_LS_DOWN_DONE,	/* its holds released here */
};

/*
 * A node declared down, in one cluster epoch: the survivors that said
 * their users were told (@ready, a bit each) and how far this node got.
 */
struct rdlock_ls_down {
	u32 epoch;
	u32 ready;
	enum rdlock_ls_down_stage stage;
};

static DEFINE_SPINLOCK(rdlock_ls_down_lock);	/* rdlock_ls_downs */
static struct rdlock_ls_down rdlock_ls_downs[RDLOCK_MAX_NODES];
static DECLARE_WAIT_QUEUE_HEAD(rdlock_ls_down_wq);
/* One node-down at a time: the lockspaces' users are told in order. */
static DEFINE_MUTEX(rdlock_ls_down_mutex);

/* @dead's record in this epoch; rdlock_ls_down_lock held. */
static struct rdlock_ls_down *rdlock_ls_down_get(u32 dead)
{
	struct rdlock_ls_down *d = &rdlock_ls_downs[dead];
	u32 epoch = rdlock_xport_epoch();

	if (d->epoch != epoch) {
		memset(d, 0, sizeof(*d));
		d->epoch = epoch;
	}
	return d;
}

static enum rdlock_ls_down_stage rdlock_ls_down_stage(u32 dead)
{
	enum rdlock_ls_down_stage stage;
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	stage = rdlock_ls_down_get(dead)->stage;
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	return stage;
}

static void rdlock_ls_down_set_stage(u32 dead, enum rdlock_ls_down_stage stage)
{
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	rdlock_ls_down_get(dead)->stage = stage;
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
}

static int rdlock_ls_down_tell(u32 node, u32 dead, bool ask)
{
	struct rdlock_ls_down_msg m = {
		.dead = cpu_to_le32(dead),
		.ask = cpu_to_le32(ask),
	};

	return rdlock_xport_send_msg(node, RDLOCK_LS_DOWN_MSG_TYPE, &m,
				     sizeof(m));
}

static void rdlock_ls_down_msg_handler(u32 src, const void *payload,
				       size_t len)
{
	const struct rdlock_ls_down_msg *m = payload;
	struct rdlock_ls_down *d;
	unsigned long flags;
	bool answer;
	u32 dead;

	if (len < sizeof(*m) || src >= RDLOCK_MAX_NODES)
		return;
	dead = le32_to_cpu(m->dead);
	if (dead >= RDLOCK_MAX_NODES || dead == src)
		return;
	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	d = rdlock_ls_down_get(dead);
	d->ready |= BIT(src);
	answer = m->ask && d->stage >= RDLOCK_LS_DOWN_TOLD;
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	/* It may have missed ours (a connection blip): say it again. */
	if (answer)
		rdlock_ls_down_tell(src, dead, false);
	wake_up_all(&rdlock_ls_down_wq);
}

/*
 * The survivors (configured, not declared down either way) that have not
 * said yet that their users were told of @dead.
 */
static u32 rdlock_ls_down_missing(u32 dead)
{
	u32 self = rdlock_xport_self(), missing = 0, i;
	unsigned long flags;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (i != self && i != dead && rdlock_xport_node_configured(i) &&
		    !rdlock_xport_node_fenced(i))
			missing |= BIT(i);
	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	missing &= ~rdlock_ls_down_get(dead)->ready;
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	return missing;
}

/* How often a survivor that has not answered is asked again. */
#define RDLOCK_LS_DOWN_ASK_MS	1000
/* A wait that long for the survivors is logged, once. */
#define RDLOCK_LS_DOWN_WARN_MS	10000

/*
 * Wait until every survivor's users were told of @dead: only then may any
 * of @dead's locks be granted elsewhere. Asks the missing ones every
 * second: a node declared down meanwhile drops out of the set.
 */
static int rdlock_ls_down_barrier(u32 dead, u32 epoch)
{
	unsigned long start = jiffies;
	bool warned = false;
	u32 missing, i;

	for (;;) {
		missing = rdlock_ls_down_missing(dead);
		if (!missing)
			return 0;
		if (rdlock_xport_epoch() != epoch)
			return -ESHUTDOWN;
		for (i = 0; i < RDLOCK_MAX_NODES; i++)
			if (missing & BIT(i))
				rdlock_ls_down_tell(i, dead, true);
		if (!warned && time_after(jiffies, start +
				msecs_to_jiffies(RDLOCK_LS_DOWN_WARN_MS))) {
			pr_warn("node %u down: waiting for nodes %#x to declare it down too\n",
				dead, missing);
			warned = true;
		}
		if (wait_event_killable_timeout(rdlock_ls_down_wq,
						!rdlock_ls_down_missing(dead),
						msecs_to_jiffies(RDLOCK_LS_DOWN_ASK_MS)) < 0)
			return -EINTR;
	}
}

/* Every lockspace user's down callback, in process context. */
static void rdlock_ls_call_down(u32 dead)
{
	struct rdlock_ls_sink *s;

	mutex_lock(&rdlock_ls_sinks_mutex);
	hlist_for_each_entry(s, &rdlock_ls_sinks, node)
		if (s->down)
			s->down(s->arg, dead);
	mutex_unlock(&rdlock_ls_sinks_mutex);
}

struct rdlock_ls_forget {
	struct rdlock_ls *ls;
	u32 lvb_slot;
};

/*
 * The dead node held the name exclusive: its value block may be stale or
 * half written. It keeps its bytes and its name's tag, and loses the
 * user's flags (a DLM's VALID), as after a failed store.
 */
static int rdlock_ls_forget_lvb(void *arg)
{
	struct rdlock_ls_forget *f = arg;
	u32 self = rdlock_xport_self();
	u64 state, old;
	int ret;

	ret = rdlock_ls_op(f->ls, self, RDLOCK_XOP_READ, f->lvb_slot, 0, 0,
			   &state);
	if (ret || !(state & RDLOCK_LVB_FLAGS_MASK))
		return ret;
	ret = rdlock_ls_op(f->ls, self, RDLOCK_XOP_WRITE, f->lvb_slot,
			   state & ~(u64)RDLOCK_LVB_FLAGS_MASK, 0, &old);
	if (!ret)
		atomic64_inc(&f->ls->down_lvbs);
	return ret;
}

/*
 * Take @dead's holds out of the lock words in this node's region of @ls
 * (its entries and, placed, the locks it keeps for other homes' entries):
 * each word's home does it for its own, with no remote operation.
 */
static int rdlock_ls_forget_node(struct rdlock_ls *ls, u32 dead)
{
	u32 es = rdlock_ls_entry_slots(&ls->attr), self = rdlock_xport_self();
	u32 words = ls->attr.flags & RDLOCK_LS_GATE ? 2 : 1, slot, i;
	struct rdlock_ticket t = {
		.node = self,
		.incarnation = ls->incarnation[self],
	};
	struct rdlock_ls_forget f = { .ls = ls };
	u64 w[2];
	int ret = 0;

	if (!ls->ops->forget_node || rdlock_ls_stale(ls))
		return 0;
	for (slot = ls->base; slot + es <= ls->base + ls->attr.slots;
	     slot += es) {
		ret = rdlock_ls_read_range(ls, self, slot + 1, words, w);
		f.lvb_slot = rdlock_lvb_state_slot(ls, slot + 1);
		for (i = 0; !ret && i < words; i++) {
			if (rdlock_ls_word_idle(ls, w[i]))
				continue;
			t.slot = slot + 1 + i;
			ret = ls->ops->forget_node(&ls->cfg, &t, dead,
					!i && ls->attr.flags & RDLOCK_LS_LVB ?
					rdlock_ls_forget_lvb : NULL, &f);
			if (ret > 0) {
				atomic64_inc(&ls->down_words);
				ret = 0;
			}
		}
		if (ret)
			break;
		cond_resched();
	}
	if (ret)
		pr_warn("lockspace %s: could not release node %u's locks: %d\n",
			ls->name, dead, ret);
	return ret;
}

/* Release @dead's holds in every lockspace open here. */
static int rdlock_ls_forget_all(u32 dead)
{
	struct rdlock_ls **lss, *ls;
	unsigned int n = 0, i;
	int ret = 0, err;

	mutex_lock(&rdlock_ls_mutex);
	list_for_each_entry(ls, &rdlock_ls_list, list)
		n++;
	lss = kcalloc(max(n, 1U), sizeof(*lss), GFP_KERNEL);
	if (!lss) {
		mutex_unlock(&rdlock_ls_mutex);
		return -ENOMEM;
	}
	n = 0;
	list_for_each_entry(ls, &rdlock_ls_list, list) {
		ls->users++;
		lss[n++] = ls;
	}
	mutex_unlock(&rdlock_ls_mutex);
	for (i = 0; i < n; i++) {
		err = rdlock_ls_forget_node(lss[i], dead);
		if (err && !ret)
			ret = err;
	}
	mutex_lock(&rdlock_ls_mutex);
	for (i = 0; i < n; i++)
		rdlock_ls_put_locked(lss[i]);
	mutex_unlock(&rdlock_ls_mutex);
	kfree(lss);
	return ret;
}

/**
 * rdlock_ls_node_down() - a node failed: cut it off, tell, release its locks
 * @node: the node, configured and not this one.
 *
 * To be called on every survivor (as fs/dlm's membership daemon does on
 * every node), for a node known dead or fenced. In order:
 *
 * 1. the transport cuts @node off this node's table for the rest of the
 *    cluster epoch (rdlock_xport_fence());
 * 2. every lockspace user's down callback runs (the DLM's node_down);
 * 3. this node waits until every other survivor got as far (a barrier of
 *    messages), so no survivor is granted anything of @node's before its
 *    own users were told;
 * 4. @node's holds leave the lock words homed here, in every lockspace
 *    open here whose protocol names its holders (the CAS spinlock); a
 *    name it held exclusive keeps its value block without flags.
 *
 * Words on @node itself are lost with it (lock recovery is a later step),
 * and so are its holds in regions of lockspaces not open here. Sleeps; an
 * interrupted call is resumed by the next one.
 *
 * Return: 0; -EINVAL for a node not configured or this one; -EALREADY when
 * @node was declared down here in this epoch already; -ENOTCONN (cluster
 * not up); -EINTR (fatal signal: call again); -ESHUTDOWN (the epoch ended:
 * every lockspace is lost anyway); a transport error from the release.
 */
int rdlock_ls_node_down(u32 node)
{
	u32 epoch = rdlock_xport_epoch();
	enum rdlock_ls_down_stage stage;
	int ret;

	if (node >= RDLOCK_MAX_NODES || node == rdlock_xport_self() ||
	    !rdlock_xport_node_configured(node))
		return -EINVAL;
	ret = mutex_lock_killable(&rdlock_ls_down_mutex);
	if (ret)
		return ret;
	stage = rdlock_ls_down_stage(node);
	if (stage == RDLOCK_LS_DOWN_DONE) {
		ret = -EALREADY;
		goto out;
	}
	if (stage == RDLOCK_LS_DOWN_NONE) {
		ret = rdlock_xport_fence(node);
		if (ret && ret != -ETIMEDOUT)
			goto out;
		rdlock_ls_call_down(node);
		rdlock_ls_down_set_stage(node, RDLOCK_LS_DOWN_TOLD);
	}
	ret = rdlock_ls_down_barrier(node, epoch);
	if (ret)
		goto out;
	ret = rdlock_ls_forget_all(node);
	rdlock_ls_down_set_stage(node, RDLOCK_LS_DOWN_DONE);
	pr_info("node %u declared down: its locks homed here are released\n",
		node);
out:
	mutex_unlock(&rdlock_ls_down_mutex);
	return ret;
}

int rdlock_ls_init(void)
{
	int ret;

	/* Writeback may wait for an async grant: it must run under pressure. */
	rdlock_ls_wq = alloc_workqueue("rdlock_ls", WQ_UNBOUND | WQ_MEM_RECLAIM,
				       0);
	if (!rdlock_ls_wq)
		return -ENOMEM;
	ret = rdlock_xport_set_msg_handler(RDLOCK_LS_MSG_TYPE,
					   rdlock_ls_msg_handler);
	if (!ret)
		ret = rdlock_xport_set_msg_handler(RDLOCK_LS_DOWN_MSG_TYPE,
						   rdlock_ls_down_msg_handler);
	if (ret) {
		rdlock_xport_set_msg_handler(RDLOCK_LS_MSG_TYPE, NULL);
		destroy_workqueue(rdlock_ls_wq);
		return ret;
	}
	rdlock_xport_set_up_handler(rdlock_ls_up_handler);
	return 0;
}

/*
 * Kernel users hold a module reference and files are closed by now: what
 * is left are lockspaces created through the uapi and never removed.
 */
void rdlock_ls_exit(void)
{
	struct rdlock_ls *ls, *tmp;

	mutex_lock(&rdlock_ls_mutex);
	list_for_each_entry_safe(ls, tmp, &rdlock_ls_list, list) {
		WARN_ON(ls->users != 1 || !ls->created);
		ls->users = 1;
		rdlock_ls_put_locked(ls);
	}
	mutex_unlock(&rdlock_ls_mutex);
	rdlock_xport_set_up_handler(NULL);
	rdlock_xport_set_msg_handler(RDLOCK_LS_DOWN_MSG_TYPE, NULL);
	rdlock_xport_set_msg_handler(RDLOCK_LS_MSG_TYPE, NULL);
	destroy_workqueue(rdlock_ls_wq);
}
