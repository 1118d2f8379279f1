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
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include <linux/slab.h>

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

/* The cluster's nodes, ascending: homes of names. */
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
 * The directory node: the lowest node of @ls not declared down here. A
 * node declared down passes the directory on only once its declaration is
 * done here; until then an open waits (killable).
 */
static int rdlock_ls_dir_node(struct rdlock_ls *ls, u32 *dir)
{
	u32 i, node;
	int ret;

	for (i = 0; i < ls->nr_nodes; i++) {
		node = ls->nodes[i];
		if (!rdlock_xport_node_fenced(node)) {
			*dir = node;
			return 0;
		}
		ret = rdlock_ls_release_wait(node, 0);
		if (ret)
			return ret;
		/* Released, or the cluster's epoch ended meanwhile. */
		if (rdlock_ls_stale(ls))
			return -ENOTCONN;
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
 * One word of @node's copy: @val into a zero word (a directory word is
 * written once), or with @max raised to @val (the allocation word).
 * Waits through blips until @node is back or declared down (a node
 * declared down keeps no copy any more), or a fatal signal: a copy given
 * up fails the lockspace for good (its geometry published as failed).
 */
static int rdlock_ls_copy_word(struct rdlock_ls *ls, u32 node, u32 slot,
			       u64 val, bool max)
{
	unsigned int backoff = 0;
	u64 cur = 0, old;
	int ret;

	for (;;) {
		ret = rdlock_ls_op(ls, node, RDLOCK_XOP_CAS, slot, cur, val,
				   &old);
		if (!ret) {
			if (old == cur || old == val || (max && old > val))
				return 0;
			if (!max) {
				pr_warn("lockspace %s: node %u's directory copy has %#llx in slot %u, not %#llx\n",
					ls->name, node, old, slot, val);
				return -EEXIST;
			}
			cur = old;
			continue;
		}
		if (ret == -ENOTCONN && rdlock_xport_node_fenced(node))
			return 0;
		if (!rdlock_ls_blip(ls, node, ret) ||
		    !rdlock_ls_blip_wait(&backoff, 0))
			return ret;
	}
}

/*
 * Entry @entry (its first slot) and the allocation word @alloc into every
 * copy: the allocation, the policy, the geometry, and last the tag. The
 * copies are above the directory node and written in ascending order, so
 * the next directory node's is always the first: an entry that is all
 * zero there is all zero in every copy, and claiming it there finds no
 * other lockspace's words in the others.
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
					  true) ?:
		      rdlock_ls_copy_word(ls, node,
					  entry + RDLOCK_LS_DIR_POLICY,
					  rdlock_ls_policy(&ls->attr), false) ?:
		      rdlock_ls_copy_word(ls, node,
					  entry + RDLOCK_LS_DIR_GEOMETRY,
					  geometry, false) ?:
		      rdlock_ls_copy_word(ls, node, entry + RDLOCK_LS_DIR_TAG,
					  ls->tag, false);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The claimer of a directory entry allocates the region, writes every
 * copy and then publishes the geometry on the directory node.
 */
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
		ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_CAS,
				   entry + RDLOCK_LS_DIR_POLICY, 0,
				   rdlock_ls_policy(&ls->attr), &old);
		if (ret)
			geometry = RDLOCK_LS_GEOMETRY_FAILED;
	}
	/* A region anybody attaches to is in every copy first. */
	if (!ret) {
		ret = rdlock_ls_copy(ls, dir, entry, off + ls->attr.slots,
				     geometry);
		/* The directory node declared down: start again on the next. */
		if (ret == -ENOTCONN && rdlock_xport_node_fenced(dir))
			return ret;
		if (ret)
			geometry = RDLOCK_LS_GEOMETRY_FAILED;
	}
	rdlock_ls_op(ls, dir, RDLOCK_XOP_CAS, entry + RDLOCK_LS_DIR_GEOMETRY,
		     0, geometry, &old);
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
	if (geometry == RDLOCK_LS_GEOMETRY_FAILED)
		return -ENOSPC;
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
	return ls->base + ls->attr.slots <= min_slots ? 0 : -ENOSPC;
}

/*
 * Find the lockspace's entry on directory node @dir, or claim one: the
 * whole directory is read first (a directory that was a copy may have
 * holes before the entry), then entries are probed from the tag's on and
 * only an entry whose three words are zero is claimed.
 */
static int rdlock_ls_join_dir(struct rdlock_ls *ls, u32 dir, u32 min_slots)
{
	u32 i, e, entry, n = RDLOCK_LS_DIR_WORDS * RDLOCK_LS_DIR_ENTRIES;
	u64 *words, *w, old;
	int ret;

	words = kmalloc_array(n, sizeof(*words), GFP_KERNEL);
	if (!words)
		return -ENOMEM;
	ret = rdlock_ls_read_range(ls, dir, RDLOCK_LS_DIR, n, words);
	if (ret)
		goto out;
	for (e = 0; e < RDLOCK_LS_DIR_ENTRIES; e++) {
		if (words[RDLOCK_LS_DIR_WORDS * e + RDLOCK_LS_DIR_TAG] ==
		    ls->tag) {
			ret = rdlock_ls_attach(ls, dir, RDLOCK_LS_DIR +
					       RDLOCK_LS_DIR_WORDS * e,
					       min_slots);
			goto out;
		}
	}
	ret = -ENOSPC;
	for (i = 0; i < RDLOCK_LS_DIR_ENTRIES; i++) {
		e = (ls->tag + i) % RDLOCK_LS_DIR_ENTRIES;
		w = &words[RDLOCK_LS_DIR_WORDS * e];
		entry = RDLOCK_LS_DIR + RDLOCK_LS_DIR_WORDS * e;
		/* Taken (words are written once) or a copy's remains. */
		if (w[RDLOCK_LS_DIR_TAG] || w[RDLOCK_LS_DIR_GEOMETRY] ||
		    w[RDLOCK_LS_DIR_POLICY])
			continue;
		ret = rdlock_ls_op(ls, dir, RDLOCK_XOP_CAS, entry, 0, ls->tag,
				   &old);
		if (ret)
			break;
		if (!old) {
			ret = rdlock_ls_publish(ls, dir, entry, min_slots);
			break;
		}
		if (old == ls->tag) {
			ret = rdlock_ls_attach(ls, dir, entry, min_slots);
			break;
		}
		ret = -ENOSPC;
	}
out:
	kfree(words);
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
 * -ENOSPC, -EEXIST, -ETIMEDOUT, -EINTR.
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
