// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: the cluster's directory of lockspaces.
 *
 * A lockspace is found in the cluster by name through a directory of
 * RDLOCK_LS_DIR_ENTRIES entries (tag, geometry, policy) and an allocation
 * word, kept on the directory node: the lowest configured node not
 * declared down here. The first node to claim a name's entry there (by
 * CAS, linear probing from the name's tag) allocates the lockspace a
 * region at the same offset of every node's table and publishes its
 * geometry and policy; the others read and check them.
 *
 * Every other node not declared down keeps a copy: the claimer writes the
 * allocation word (the largest seen), the policy, the geometry and last
 * the tag at the same index of each copy before it publishes the geometry
 * on the directory node. So every lockspace anybody attached to is
 * complete in every copy, and a copy's entry with a zero tag is either
 * free or the remains of a copy never finished. When the directory node
 * is declared down, its next one's copy becomes the directory once that
 * declaration is done here: every survivor cut the dead node off by then
 * (recovery.rst), so nobody uses its directory any more. An open finds a
 * lockspace anywhere in the directory first (the new directory may have
 * holes before it), and claims only an entry whose three words are zero.
 * An open whose directory node is declared down meanwhile starts again on
 * the next one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "lockspace-pri.h"
#include "uapi_check.h"

/* Fixed: every node must hash a name to the same entry. */
static const siphash_key_t rdlock_ls_dir_key = {
	{ 0x72646c6f636b2d64ULL, 0x69726563746f7279ULL }
};

/* How long an attaching node waits for the claimer to publish geometry. */
#define RDLOCK_LS_PUBLISH_WAIT_MS	10000

/* Words of a directory entry: tag, geometry, policy. */
#define RDLOCK_LS_DIR_TAG	0
#define RDLOCK_LS_DIR_GEOMETRY	1
#define RDLOCK_LS_DIR_POLICY	2
#define RDLOCK_LS_DIR_WORDS	3

/**
 * rdlock_ls_dir_tag() - a lockspace name's directory tag
 * @name: the name.
 *
 * Return: its tag, never 0 (a free entry).
 */
u64 rdlock_ls_dir_tag(const char *name)
{
	return siphash(name, strlen(name), &rdlock_ls_dir_key) ?: 1;
}

/*
 * The cluster's nodes, ascending: homes of names. A node cut off whose
 * table was never known here (absent when the cluster formed, or declared
 * down before it connected, none named) keeps nothing of any lockspace:
 * it has no size to fit, and RDLOCK_TABLE_NONE as its table, which no
 * operation reaches.
 */
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
		if (slots && ls->incarnation[i])
			*min_slots = min(*min_slots, slots);
		else if (rdlock_xport_node_fenced(i))
			ls->incarnation[i] = RDLOCK_TABLE_NONE;
		else
			return -ENOTCONN;
		ls->nodes[ls->nr_nodes++] = i;
	}
	return ls->nr_nodes ? 0 : -ENOTCONN;
}

/* How long an open waits for a directory node's declaration to be done. */
#define RDLOCK_LS_DIR_MOVE_WAIT_MS	60000

/*
 * The directory node: the lowest node of @ls not declared down here. A
 * node declared down passes the directory on only once its declaration is
 * done here; until then an open waits (killable; -ETIMEDOUT after
 * RDLOCK_LS_DIR_MOVE_WAIT_MS).
 */
static int rdlock_ls_dir_node(struct rdlock_ls *ls, u32 *dir)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(RDLOCK_LS_DIR_MOVE_WAIT_MS);
	u32 i, node;
	int ret;

again:
	for (i = 0; i < ls->nr_nodes; i++) {
		node = ls->nodes[i];
		if (!rdlock_xport_node_fenced(node)) {
			/*
			 * Returned nodes that took over from the last nodes of
			 * the epoch have their directory once those nodes'
			 * declarations are done (rdlock_ls_dir_rebuild()).
			 * Pairs with rdlock_take_over()'s smp_wmb().
			 */
			smp_rmb();
			node = rdlock_ls_handover_pending();
			if (node == U32_MAX) {
				*dir = ls->nodes[i];
				return 0;
			}
		}
		ret = rdlock_ls_release_wait(ls, node, deadline);
		/* Released, or the cluster's epoch ended meanwhile. */
		if (ret == -ESHUTDOWN || (!ret && rdlock_ls_stale(ls)))
			return -ENOTCONN;
		if (ret)
			return ret;
		if (node != ls->nodes[i])
			goto again;
	}
	return -ENOTCONN;
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

/*
 * Claims of directory entries under way on this node, from the tag's CAS
 * to the geometry's publication (rdlock_ls_dir_claims_wait()).
 */
static atomic_t rdlock_ls_claims = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(rdlock_ls_claims_wq);

/* How long a declaration down waits for this node's claims to end. */
#define RDLOCK_LS_CLAIMS_WAIT_MS	60000

static void rdlock_ls_claim_end(void)
{
	if (atomic_dec_and_test(&rdlock_ls_claims))
		wake_up_all(&rdlock_ls_claims_wq);
}

/**
 * rdlock_ls_dir_claims_wait() - wait for this node's directory claims
 *
 * A node's declaration down calls it once the node is cut off here and
 * before the survivors' first barrier: a claim whose directory node it is
 * gives up its copies (or, past them, finishes its tags), so no claim of
 * the old directory still writes a copy when another survivor opens a
 * lockspace on the next one. Waits RDLOCK_LS_CLAIMS_WAIT_MS at most (a
 * copy's node unreachable and not declared down), then logs it.
 */
void rdlock_ls_dir_claims_wait(void)
{
	/* The cut-off before the count: pairs with rdlock_ls_join_dir(). */
	smp_mb();
	if (!wait_event_timeout(rdlock_ls_claims_wq,
				!atomic_read(&rdlock_ls_claims),
				msecs_to_jiffies(RDLOCK_LS_CLAIMS_WAIT_MS)))
		pr_warn("a lockspace directory claim still writes copies: a node declared down meanwhile may see it late\n");
}

/*
 * CAS @cmp to @val in slot @slot of @node, through blips, until @node
 * answers or is cut off (-ENOTCONN). With @abort_dir a node id, also
 * -ENOTCONN once that node is cut off, and -EINTR on a fatal signal;
 * with U32_MAX no signal ends it: what it writes must land.
 */
static int rdlock_ls_dir_cas(struct rdlock_ls *ls, u32 node, u32 slot,
			     u64 cmp, u64 val, u64 *old, u32 abort_dir)
{
	unsigned int backoff = 0;
	int ret;

	for (;;) {
		if (abort_dir != U32_MAX && rdlock_xport_node_fenced(abort_dir))
			return -ENOTCONN;
		ret = rdlock_ls_op(ls, node, RDLOCK_XOP_CAS, slot, cmp, val,
				   old);
		if (!rdlock_ls_blip(ls, node, ret))
			return ret;
		if (abort_dir != U32_MAX) {
			if (!rdlock_ls_blip_wait(&backoff, 0))
				return -EINTR;
			continue;
		}
		/* Not killable, and no hung task: the copies must agree. */
		backoff = clamp(2 * backoff, 1U, 1000U);
		schedule_timeout_idle(msecs_to_jiffies(backoff));
	}
}

/*
 * One word of @node's copy: @val into a zero word (a directory word is
 * written once), or with @max raised to @val (the allocation word). A
 * node declared down keeps no copy any more. @abort_dir as for
 * rdlock_ls_dir_cas().
 */
static int rdlock_ls_copy_word(struct rdlock_ls *ls, u32 node, u32 slot,
			       u64 val, bool max, u32 abort_dir)
{
	u64 cur = 0, old;
	int ret;

	for (;;) {
		ret = rdlock_ls_dir_cas(ls, node, slot, cur, val, &old,
					abort_dir);
		if (ret == -ENOTCONN && rdlock_xport_node_fenced(node) &&
		    (abort_dir == U32_MAX ||
		     !rdlock_xport_node_fenced(abort_dir)))
			return 0;
		if (ret)
			return ret;
		if (old == cur || old == val || (max && old > val))
			return 0;
		if (!max) {
			pr_warn("lockspace %s: node %u's directory copy has %#llx in slot %u, not %#llx\n",
				ls->name, node, old, slot, val);
			return -EIO;
		}
		cur = old;
	}
}

/*
 * Entry @entry (its first slot) and the allocation word @alloc into every
 * copy, in two passes over the copies in ascending order (all above the
 * directory node). The first writes the allocation, the policy and the
 * geometry, and gives up (-ENOTCONN) once the directory node is cut off:
 * the next directory node's copy is the first written, so an entry all
 * zero there is all zero in every copy, and a claim there finds no other
 * lockspace's words in the others. The second writes the tags and never
 * gives up: every copy that has the tag has the entry, and once one copy
 * has it, all do, so no later directory lacks a lockspace an earlier one
 * had.
 */
static int rdlock_ls_copy(struct rdlock_ls *ls, u32 dir, u32 entry,
			  u64 alloc, u64 geometry)
{
	u32 i, node;
	int ret;

	for (i = 0; i < ls->nr_nodes; i++) {
		node = ls->nodes[i];
		if (node == dir || rdlock_xport_node_fenced(node))
			continue;
		ret = rdlock_ls_copy_word(ls, node, RDLOCK_LS_ALLOC, alloc,
					  true, dir) ?:
		      rdlock_ls_copy_word(ls, node,
					  entry + RDLOCK_LS_DIR_POLICY,
					  rdlock_ls_policy(&ls->attr), false,
					  dir) ?:
		      rdlock_ls_copy_word(ls, node,
					  entry + RDLOCK_LS_DIR_GEOMETRY,
					  geometry, false, dir);
		if (ret)
			return ret;
	}
	/* Past here the lockspace is published, whatever a copy says. */
	for (i = 0; i < ls->nr_nodes; i++) {
		node = ls->nodes[i];
		if (node == dir)
			continue;
		ret = rdlock_ls_copy_word(ls, node, entry + RDLOCK_LS_DIR_TAG,
					  ls->tag, false, U32_MAX);
		if (ret)
			pr_warn("lockspace %s: no tag in node %u's directory copy (%d)\n",
				ls->name, node, ret);
	}
	return 0;
}

/*
 * One word of the directory node's entry, written once: 0, or -EIO when
 * it holds another value, -ENOTCONN when the directory node is cut off.
 */
static int rdlock_ls_dir_set(struct rdlock_ls *ls, u32 dir, u32 slot,
			     u64 val)
{
	u64 old;
	int ret;

	ret = rdlock_ls_dir_cas(ls, dir, slot, 0, val, &old, U32_MAX);
	if (!ret && old && old != val) {
		pr_warn("lockspace %s: directory slot %u has %#llx, not %#llx\n",
			ls->name, slot, old, val);
		ret = -EIO;
	}
	return ret;
}

/*
 * The claimer of a directory entry allocates the region, writes every
 * copy and then publishes the geometry on the directory node. -ENOTCONN:
 * the directory node was cut off, start again on the next one.
 */
static int rdlock_ls_publish(struct rdlock_ls *ls, u32 dir, u32 entry,
			     u32 min_slots)
{
	u64 off = 0, geometry, old;
	int ret, err;

	/*
	 * Allocate by CAS, and only what fits: a region that does not fit
	 * must not take the room of smaller ones created later.
	 */
	for (;;) {
		if (RDLOCK_LS_REGIONS + off + ls->attr.slots > min_slots) {
			pr_warn_ratelimited("lockspace %s: its %u slots do not fit in the lock tables (the smallest has %u, %llu taken): raise table_slots on every node\n",
					    ls->name, ls->attr.slots, min_slots,
					    RDLOCK_LS_REGIONS + off);
			ret = -ENOSPC;
			break;
		}
		ret = rdlock_ls_dir_cas(ls, dir, RDLOCK_LS_ALLOC, off,
					off + ls->attr.slots, &old, U32_MAX);
		if (ret || old == off)
			break;
		off = old;
	}
	if (ret == -ENOTCONN && rdlock_xport_node_fenced(dir))
		return ret;
	geometry = (RDLOCK_LS_REGIONS + off) << 32 | ls->attr.slots;
	/* Policy first: a node that sees the geometry may read it at once. */
	if (!ret)
		ret = rdlock_ls_dir_set(ls, dir, entry + RDLOCK_LS_DIR_POLICY,
					rdlock_ls_policy(&ls->attr));
	/* A region anybody attaches to is in every copy first. */
	if (!ret)
		ret = rdlock_ls_copy(ls, dir, entry, off + ls->attr.slots,
				     geometry);
	if (ret == -ENOTCONN && rdlock_xport_node_fenced(dir))
		return ret;
	if (ret)
		geometry = RDLOCK_LS_GEOMETRY_FAILED;
	if (ret && ret != -ENOSPC)
		pr_warn_ratelimited("lockspace %s: not placed in the cluster (error %d): the name is unusable until the cluster goes down\n",
				    ls->name, ret);
	err = rdlock_ls_dir_set(ls, dir, entry + RDLOCK_LS_DIR_GEOMETRY,
				geometry);
	if (ret || err)
		return ret ?: err;
	ls->base = geometry >> 32;
	ls->entries = rdlock_ls_region_entries(ls);
	return 0;
}

/* Another node claimed the entry: wait for its geometry, check policy. */
static int rdlock_ls_attach(struct rdlock_ls *ls, u32 dir, u32 entry,
			    u32 min_slots)
{
	unsigned long end = jiffies + msecs_to_jiffies(RDLOCK_LS_PUBLISH_WAIT_MS);
	u64 geometry, policy;
	int ret;

	for (;;) {
		ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_READ,
				   entry + RDLOCK_LS_DIR_GEOMETRY, 0, 0,
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
	if (geometry == RDLOCK_LS_GEOMETRY_FAILED) {
		pr_warn_ratelimited("lockspace %s: the node that created it could not place it (see its log): the name is unusable until the cluster goes down\n",
				    ls->name);
		return -ENOSPC;
	}
	ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_READ,
			   entry + RDLOCK_LS_DIR_POLICY, 0, 0, &policy);
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
	if (ls->base + ls->attr.slots > min_slots) {
		pr_warn_ratelimited("lockspace %s: its slots %u to %u are beyond the smallest lock table (%u slots): every node needs the same table_slots\n",
				    ls->name, ls->base, ls->base + ls->attr.slots - 1,
				    min_slots);
		return -ENOSPC;
	}
	return 0;
}

/*
 * @dir's directory, read whole (kfree() it), and in @entry the first slot
 * of the entry that has @ls's tag, or U32_MAX. Return: the words, or an
 * ERR_PTR() of rdlock_ls_read_range()'s errors or -ENOMEM.
 */
static u64 *rdlock_ls_dir_read(struct rdlock_ls *ls, u32 dir, u32 *entry)
{
	u32 e, n = RDLOCK_LS_DIR_WORDS * RDLOCK_LS_DIR_ENTRIES;
	u64 *words;
	int ret;

	words = kmalloc_array(n, sizeof(*words), GFP_KERNEL);
	if (!words)
		return ERR_PTR(-ENOMEM);
	ret = rdlock_ls_read_range(ls, dir, RDLOCK_LS_DIR, n, words);
	if (ret) {
		kfree(words);
		return ERR_PTR(ret);
	}
	*entry = U32_MAX;
	for (e = 0; e < RDLOCK_LS_DIR_ENTRIES && *entry == U32_MAX; e++)
		if (words[RDLOCK_LS_DIR_WORDS * e + RDLOCK_LS_DIR_TAG] ==
		    ls->tag)
			*entry = RDLOCK_LS_DIR + RDLOCK_LS_DIR_WORDS * e;
	return words;
}

/* Is the entry of words @w free: no word of it written yet? */
static bool rdlock_ls_dir_free(const u64 *w)
{
	return !w[RDLOCK_LS_DIR_TAG] && !w[RDLOCK_LS_DIR_GEOMETRY] &&
	       !w[RDLOCK_LS_DIR_POLICY];
}

/*
 * Find the lockspace's entry on directory node @dir, or claim one: the
 * whole directory is read first (a directory that was a copy may have
 * holes before the entry), then entries are probed from the tag's on and
 * only an entry whose three words are zero is claimed.
 */
static int rdlock_ls_join_dir(struct rdlock_ls *ls, u32 dir, u32 min_slots)
{
	u32 i, e, entry;
	u64 *words, old;
	int ret;

	words = rdlock_ls_dir_read(ls, dir, &entry);
	if (IS_ERR(words))
		return PTR_ERR(words);
	if (entry != U32_MAX) {
		ret = rdlock_ls_attach(ls, dir, entry, min_slots);
		goto out;
	}
	ret = -ENOSPC;
	for (i = 0; i < RDLOCK_LS_DIR_ENTRIES; i++) {
		e = (ls->tag + i) % RDLOCK_LS_DIR_ENTRIES;
		entry = RDLOCK_LS_DIR + RDLOCK_LS_DIR_WORDS * e;
		/* Taken (words are written once) or a copy's remains. */
		if (!rdlock_ls_dir_free(&words[RDLOCK_LS_DIR_WORDS * e]))
			continue;
		atomic_inc(&rdlock_ls_claims);
		/*
		 * Counted before the cut-off is looked at, and a declaration
		 * looks at the count after its cut-off: one of the two sees
		 * the other (rdlock_ls_dir_claims_wait()).
		 */
		smp_mb__after_atomic();
		ret = rdlock_ls_dir_cas(ls, dir, entry, 0, ls->tag, &old, dir);
		if (!ret && !old)
			ret = rdlock_ls_publish(ls, dir, entry, min_slots);
		rdlock_ls_claim_end();
		if (ret || !old)
			break;
		if (old == ls->tag) {
			ret = rdlock_ls_attach(ls, dir, entry, min_slots);
			break;
		}
		ret = -ENOSPC;
	}
	if (ret == -ENOSPC && i == RDLOCK_LS_DIR_ENTRIES)
		pr_warn_ratelimited("lockspace %s: the cluster's directory is full (%u entries; removed and failed lockspaces keep theirs until the cluster goes down)\n",
				    ls->name, RDLOCK_LS_DIR_ENTRIES);
out:
	kfree(words);
	return ret;
}

/**
 * rdlock_ls_dir_rebuild() - put a lockspace in the directory of the heirs
 * @ls: a lockspace open here.
 * @dead: a node whose declaration hands its names over to returned nodes
 *	(rdlock_xport_handover()).
 *
 * The directory and its copies were on the nodes keeping their tables of
 * the epoch, the last of which are being declared down: the heirs keep
 * none. Each survivor writes the lockspaces it has open into the new
 * directory node and its copies, at the regions they have (which the
 * heirs' new tables keep unused), the allocation word past them, in the
 * order a claimer does (rdlock_ls_publish()): copies first, the geometry
 * last. Every survivor with the lockspace open writes the same words, so
 * each finishes what another began, and a claim that failed half way is
 * finished by the next try. It does so before it says its locks moved,
 * and opens wait until the declaration is done here
 * (rdlock_ls_dir_node()): no open claims an entry in the new directory
 * before every survivor's lockspaces are there. A lockspace that no
 * survivor has open is forgotten, with its region.
 *
 * Return: 0 (done, or @ls is lost already), or an error: the declaration
 * is tried again.
 */
int rdlock_ls_dir_rebuild(struct rdlock_ls *ls, u32 dead)
{
	u64 geometry = (u64)ls->base << 32 | ls->attr.slots;
	u64 end = ls->base - RDLOCK_LS_REGIONS + ls->attr.slots, *words;
	u32 dir = U32_MAX, entry, i, e;
	u64 old;
	int ret;

	if (rdlock_ls_stale(ls) || !ls->base)
		return 0;
	for (i = 0; i < ls->nr_nodes && dir == U32_MAX; i++)
		if (!rdlock_xport_node_fenced(ls->nodes[i]))
			dir = ls->nodes[i];
	if (dir == U32_MAX)
		return 0;
	/* Another survivor's entry of it first, wherever it is. */
	words = rdlock_ls_dir_read(ls, dir, &entry);
	if (IS_ERR(words)) {
		ret = PTR_ERR(words);
		words = NULL;
		goto out;
	}
	for (i = 0; i < RDLOCK_LS_DIR_ENTRIES && entry == U32_MAX; i++) {
		e = (ls->tag + i) % RDLOCK_LS_DIR_ENTRIES;
		if (!rdlock_ls_dir_free(&words[RDLOCK_LS_DIR_WORDS * e]))
			continue;
		ret = rdlock_ls_dir_cas(ls, dir,
					RDLOCK_LS_DIR + RDLOCK_LS_DIR_WORDS * e,
					0, ls->tag, &old, dir);
		if (ret)
			goto out;
		if (!old || old == ls->tag)
			entry = RDLOCK_LS_DIR + RDLOCK_LS_DIR_WORDS * e;
	}
	ret = -ENOSPC;
	if (entry == U32_MAX)
		goto out;
	/* Written once, or raised: the same words from every survivor. */
	ret = rdlock_ls_copy_word(ls, dir, RDLOCK_LS_ALLOC, end, true, dir) ?:
	      rdlock_ls_dir_set(ls, dir, entry + RDLOCK_LS_DIR_POLICY,
				rdlock_ls_policy(&ls->attr)) ?:
	      rdlock_ls_copy(ls, dir, entry, end, geometry) ?:
	      rdlock_ls_dir_set(ls, dir, entry + RDLOCK_LS_DIR_GEOMETRY,
				geometry);
out:
	kfree(words);
	if (ret)
		pr_warn_ratelimited("lockspace %s: not in the directory of the nodes taking over from node %u yet (%d)\n",
				    ls->name, dead, ret);
	return ret;
}

/**
 * rdlock_ls_join_cluster() - find or create @ls in the cluster's directory
 * @ls: the lockspace, its name, attributes and tag set.
 *
 * Caller holds rdlock_ls_join_mutex. Sets the nodes, the epoch, the
 * region's base and entries. May sleep, while a node's declaration down
 * is under way too.
 *
 * Return: 0, or -ENOTCONN (cluster not ready, or its epoch ended),
 * -ENOSPC, -EEXIST, -ETIMEDOUT, -EINTR, -ENOMEM, -EIO (the copies do not
 * agree).
 */
int rdlock_ls_join_cluster(struct rdlock_ls *ls)
{
	u32 min_slots, dir;
	int ret;

	ret = rdlock_ls_nodes(ls, &min_slots);
	if (ret)
		return ret;
	do {
		ret = rdlock_ls_dir_node(ls, &dir);
		if (ret)
			return ret;
		ret = rdlock_ls_join_dir(ls, dir, min_slots);
	} while (ret == -ENOTCONN && rdlock_xport_node_fenced(dir) &&
		 !rdlock_ls_stale(ls));
	return ret;
}
