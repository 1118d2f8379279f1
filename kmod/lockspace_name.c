// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: lock names (lockspace.c has the overview). A name
 * hashes to a home node and a window of name entries there; this node
 * resolves it to an entry by CAS of the entry's tag word, holds one
 * reference on it while it knows the name, and the last node to forget
 * the name frees the entry (design.rst, "Reclaim").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "lockspace-pri.h"
#include "lockspace_layout.h"
#include "uapi_check.h"

/* A tag word's placement and reference count hold any node. */
static_assert(RDLOCK_MAX_NODES < (RDLOCK_LS_PLACE_MASK >>
				  RDLOCK_LS_PLACE_SHIFT));
static_assert(RDLOCK_MAX_NODES <= RDLOCK_LS_REFS_MAX);

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

/*
 * Names hash to homes over the configured node ids in ascending order. A
 * home cut off here (declared down, or being declared: its table is lost)
 * passes its names to its heir, the next configured node in that order
 * that is not (design.rst, "Names of a node declared down").
 */
static u32 rdlock_res_hash_home(const struct rdlock_ls *ls, u64 hash)
{
	return ls->nodes[hash % ls->nr_nodes];
}

static u32 rdlock_res_home(const struct rdlock_ls *ls, u64 hash)
{
	u32 i = hash % ls->nr_nodes, n;

	for (n = 0; n < ls->nr_nodes; n++) {
		if (!rdlock_xport_node_fenced(ls->nodes[i]))
			return ls->nodes[i];
		i = (i + 1) % ls->nr_nodes;
	}
	return rdlock_res_hash_home(ls, hash);
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

	/* Back with a new table: it keeps no lock word (recovery.rst). */
	if (!(ls->attr.flags & RDLOCK_LS_PLACE) || self == home ||
	    rdlock_xport_node_fenced(self))
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

/*
 * Entries a name may take from its hash on: RDLOCK_LS_NAME_WINDOW at its
 * hash home, twice that at an heir (the home is cut off), whose entries
 * hold two nodes' share: every node resolving the name there agrees.
 */
static u32 rdlock_res_window(const struct rdlock_ls *ls,
			     const struct rdlock_res *res)
{
	u32 w = RDLOCK_LS_NAME_WINDOW;

	if (res->entry_home != rdlock_res_hash_home(ls, res->hash))
		w *= 2;
	return min_t(u32, ls->entries, w);
}

static u32 rdlock_res_first(const struct rdlock_ls *ls,
			    const struct rdlock_res *res)
{
	return (res->hash >> 32) % ls->entries;
}

/* The value block's state word of the lock whose word is at @lslot. */
u32 rdlock_lvb_state_slot(const struct rdlock_ls *ls, u32 lslot)
{
	return lslot - 1 + rdlock_ls_entry_slots(&ls->attr) -
	       RDLOCK_LS_LVB_SLOTS;
}

/*
 * Does the lock word show neither holder nor waiter (its protocol's
 * &rdlock_proto_ops.word_idle): then its entry may be freed.
 */
bool rdlock_ls_word_idle(const struct rdlock_ls *ls, u64 w)
{
	return ls->ops->word_idle(&ls->cfg, w);
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
 * get its lock word). One refused before it was sent while the link to
 * @home is being made again is sent again (rdlock_ls_blip()) until
 * @deadline (jiffies, 0: none), or once the module goes away, until
 * rdlock_ls_exit_deadline(): a home that took its cluster down first
 * looks unreachable for good.
 */
static void rdlock_entry_unref(struct rdlock_ls *ls, u32 home, u32 tslot,
			       u64 name, unsigned long deadline)
{
	u64 expect = name | 1, new, old;
	unsigned int blip_ms = 0;
	int ret;

	for (;;) {
		new = rdlock_entry_refs(expect) == 1 ? name | RDLOCK_LS_FREEING :
						       expect - 1;
		ret = rdlock_ls_op(ls, home, RDLOCK_XOP_CAS, tslot, expect, new,
				   &old);
		if (!ret && old == expect)
			break;
		/* Refused unsent: sent again once the link is back. */
		if (rdlock_ls_blip(ls, home, ret) &&
		    rdlock_ls_blip_wait(&blip_ms,
					deadline ?: rdlock_ls_exit_deadline()))
			continue;
		/*
		 * A reference of ours pins the name; its placement moves only
		 * off a node declared down (rdlock_res_replace()).
		 */
		if (ret || rdlock_entry_name(old) != rdlock_entry_name(name) ||
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
		name = old & ~RDLOCK_LS_REFS_MAX;
	}
	atomic64_inc(&ls->ref_drops);
	atomic64_dec(&ls->references);
	if (new & RDLOCK_LS_FREEING)
		rdlock_entry_finish_free(ls, home, tslot, name);
}

/* Drop this node's reference on @res's entry, trying until @deadline. */
static void rdlock_res_unref(struct rdlock_ls *ls, struct rdlock_res *res,
			     unsigned long deadline)
{
	rdlock_entry_unref(ls, res->entry_home, res->entry_slot,
			   res->tag | res->place, deadline);
}

/*
 * Give a forgotten name's entry reference back, then free it; after its
 * locks' posted releases ended, which also keeps the lockspace's stats
 * they count into until then.
 */
static void rdlock_res_release(struct rdlock_ls *ls, struct rdlock_res *res)
{
	rdlock_proto_wait_pin(&res->posted);
	/* An entry on a node declared down is lost with it. */
	if (res->resolved && !rdlock_xport_node_fenced(res->entry_home))
		rdlock_res_unref(ls, res, 0);
	kfree(res);
}

void rdlock_ls_drop_work(struct work_struct *work)
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
struct rdlock_res *rdlock_res_get(struct rdlock_ls *ls,
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
	new->moved_from = U32_MAX;
	INIT_LIST_HEAD(&new->lru);
	INIT_LIST_HEAD(&new->locks);
	INIT_LIST_HEAD(&new->move_node);

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
void rdlock_res_put(struct rdlock_ls *ls, struct rdlock_res *res)
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
	u64 v, seen[2 * RDLOCK_LS_NAME_WINDOW];

	*fresh = false;
	for (i = 0; i < rdlock_res_window(ls, res); i++) {
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
				check->index < rdlock_res_window(ls, res) ?
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
	for (i = 0; i < rdlock_res_window(ls, res); i++) {
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
 * (design.rst, "Reclaim"). An operation refused before it was sent while
 * the link to the home is being made again (rdlock_ls_blip()) is sent
 * again until @deadline (jiffies, 0: none) or a fatal signal: a blip does
 * not fail a lock that may wait. Return: 0, or -ENOTCONN (a blip past
 * @deadline, or the home declared down), or another error.
 */
int rdlock_res_resolve(struct rdlock_ls *ls, struct rdlock_res *res,
		       unsigned long deadline)
{
	unsigned int attempt = 0, blip_ms = 0;
	struct rdlock_res_check check;
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
		if (rdlock_ls_blip(ls, res->entry_home, got)) {
			if (!rdlock_ls_blip_wait(&blip_ms, deadline))
				return got;
			continue;
		}
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
		rdlock_res_unref(ls, res, deadline);
		if (rdlock_ls_blip(ls, res->entry_home, ret) &&
		    rdlock_ls_blip_wait(&blip_ms, deadline))
			continue;
		if (ret)
			return ret;
		atomic64_inc(&ls->resolve_retries);
		/* Both may have seen the other: part at random. */
		schedule_timeout_killable(1 + get_random_u32_below(1U <<
						min(attempt++, 6U)));
	}
}

/**
 * rdlock_res_lost() - does a resolved name live on a node cut off here
 * @res: the name, under its resolve_mutex or its use semaphore.
 *
 * Return: true when its entry or its lock word is on a node declared down
 * (or being declared) here: rdlock_res_relocate() must move it.
 */
bool rdlock_res_lost(const struct rdlock_res *res)
{
	return res->resolved && (rdlock_xport_node_fenced(res->entry_home) ||
				 rdlock_xport_node_fenced(res->home));
}

/**
 * rdlock_res_lost_to() - does a resolved name live on a given node
 * @res: the name, under its resolve_mutex.
 * @node: a node.
 *
 * Return: true when its entry or its lock word is on @node.
 */
bool rdlock_res_lost_to(const struct rdlock_res *res, u32 node)
{
	return res->resolved && (res->entry_home == node || res->home == node);
}

/**
 * rdlock_res_home_pending() - a node an unresolved name waits for
 * @ls: the lockspace.
 * @res: the name.
 *
 * A name's home is its hash's, or while that is cut off its heir
 * (rdlock_res_home()). Only once such a node's declaration is done here
 * (rdlock_ls_node_released()) did every survivor move its locks of the
 * name to the heir: until then the name is not resolved.
 *
 * While returned nodes take over from the last nodes keeping their tables
 * of the epoch (rdlock_xport_handover()), every name waits for those.
 *
 * Return: the first node cut off and not released from the name's hash
 * home up to its first node not cut off, or U32_MAX for none.
 */
u32 rdlock_res_home_pending(const struct rdlock_ls *ls,
			    const struct rdlock_res *res)
{
	u32 i = res->hash % ls->nr_nodes, n, node;

	for (n = 0; n < ls->nr_nodes; n++) {
		node = ls->nodes[i];
		if (!rdlock_xport_node_fenced(node))
			break;
		if (!rdlock_ls_node_released(node))
			return node;
		i = (i + 1) % ls->nr_nodes;
	}
	/*
	 * An heir found keeping its table: the handover's nodes are set.
	 * Pairs with rdlock_take_over()'s smp_wmb().
	 */
	smp_rmb();
	return rdlock_ls_handover_pending();
}

/**
 * rdlock_ls_handover_pending() - a node whose names returned nodes take
 *
 * Every name was on the nodes cut off when returned nodes took over here
 * (rdlock_xport_handover()): none is acquired before their declarations
 * are done here.
 *
 * Return: the first of them whose declaration is not done here, or
 * U32_MAX.
 */
u32 rdlock_ls_handover_pending(void)
{
	unsigned long handover = rdlock_xport_handover();
	u32 node;

	for_each_set_bit(node, &handover, RDLOCK_MAX_NODES)
		if (!rdlock_ls_node_released(node))
			return node;
	return U32_MAX;
}

/*
 * The lock of @res's entry (alive, on a node not cut off) was placed on a
 * node that is: place it on this node instead, in the placed entry this
 * node keeps for that entry (idle: the entry's placement named another
 * node), or in the entry itself when this node is its home. That value
 * block's state is cleared first: the bytes were lost with the node, and
 * an older value of the same name may be there. Another survivor may
 * have placed it first: its placement is taken.
 */
static int rdlock_res_replace(struct rdlock_ls *ls, struct rdlock_res *res,
			      unsigned long deadline)
{
	u32 home = res->entry_home, node, slot;
	unsigned int blip_ms = 0;
	u64 v, want, old;
	int ret;

	for (;;) {
		ret = rdlock_ls_op(ls, home, RDLOCK_XOP_READ, res->entry_slot,
				   0, 0, &v);
		if (!ret && !rdlock_entry_live(v, res->tag)) {
			/* Not ours any more (cannot be while we refer to it). */
			res->resolved = false;
			return 0;
		}
		if (!ret) {
			rdlock_entry_lock_at(ls, home, res->entry_slot,
					     v & RDLOCK_LS_PLACE_MASK, &node,
					     &slot);
			if (!rdlock_xport_node_fenced(node)) {
				res->place = v & RDLOCK_LS_PLACE_MASK;
				res->home = node;
				res->slot = slot;
				return 0;
			}
			want = rdlock_entry_place_self(ls, home);
			rdlock_entry_lock_at(ls, home, res->entry_slot, want,
					     &node, &slot);
			if (ls->attr.flags & RDLOCK_LS_LVB)
				ret = rdlock_ls_op(ls, node, RDLOCK_XOP_WRITE,
						   rdlock_lvb_state_slot(ls,
									 slot),
						   0, 0, &old);
		}
		if (!ret)
			ret = rdlock_ls_op(ls, home, RDLOCK_XOP_CAS,
					   res->entry_slot, v,
					   (v & ~RDLOCK_LS_PLACE_MASK) | want,
					   &old);
		if (!ret && old != v)
			continue;
		if (!ret) {
			res->place = want;
			res->home = node;
			res->slot = slot;
			return 0;
		}
		if (rdlock_ls_blip(ls, home, ret) &&
		    rdlock_ls_blip_wait(&blip_ms, deadline))
			continue;
		return ret;
	}
}

/**
 * rdlock_res_relocate() - find a name again whose node was cut off
 * @ls: the lockspace.
 * @res: a name with rdlock_res_lost(), under its resolve_mutex.
 * @deadline: jiffies, 0: none.
 *
 * An entry on a node cut off here is lost with the node, and so is this
 * node's reference on it: the name is resolved again, on its heir
 * (rdlock_res_home()). An entry that lives on with its lock placed on
 * such a node has the lock placed again (rdlock_res_replace()). The
 * caller makes sure nobody can be granted the name in its new word before
 * every survivor's locks of the name are there (rdlock_ls_rehome()).
 *
 * Return: 0, or an error: of rdlock_res_resolve() (the name is then not
 * resolved), or of the placement (it still is, and still lost).
 */
int rdlock_res_relocate(struct rdlock_ls *ls, struct rdlock_res *res,
			unsigned long deadline)
{
	int ret = 0;

	/* A failed placement keeps the reference, for the next try. */
	if (!rdlock_xport_node_fenced(res->entry_home))
		ret = rdlock_res_replace(ls, res, deadline);
	else
		res->resolved = false;
	if (!ret && !res->resolved)
		ret = rdlock_res_resolve(ls, res, deadline);
	if (!ret)
		atomic64_inc(&ls->moved_names);
	return ret;
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
