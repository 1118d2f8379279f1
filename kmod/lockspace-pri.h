/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock lockspaces (layer 4): private structures, shared by the layer's
 * own files only (lockspace*.c, trace.h). The layers above see the opaque
 * API of include/rdlock/rdlock.h and lockspace.h.
 */
#ifndef _RDLOCK_LOCKSPACE_PRI_H
#define _RDLOCK_LOCKSPACE_PRI_H

#include <linux/bits.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdlock/rdlock.h>

#include "lockspace.h"
#include "proto.h"
#include "xport.h"

/*
 * Layout of the lockspace area of every node's table, from
 * RDLOCK_XPORT_FIRST_LS_SLOT on. The directory node (the lowest
 * configured id not declared down) uses the directory and the allocation
 * word, the others keep a copy of them (lockspace_dir.c); every node has
 * the lockspace regions at the same offsets.
 *
 *	dir entry e: 3 words at RDLOCK_LS_DIR + 3e: tag, geometry, policy
 *	allocation:  1 word: slots handed out so far after RDLOCK_LS_REGIONS
 *	regions:     per lockspace, @slots / 2 name entries of 2 words:
 *		     name tag word, lock word (CQL: @slots / (2 + 2^queue_bits)
 *		     entries: tag word, header, then the lock's queue);
 *		     RDLOCK_LS_PLACE: the region is split in as many areas as
 *		     there are nodes, the first of entries, each other of
 *		     the placed entries of one other node's entries, entry
 *		     i's at index i (the lock of a name that node's entry i
 *		     holds, when this node claimed that entry)
 *
 * A name tag word is 0 (free) or the name's tag (48 bits), a freeing flag
 * and the number of references nodes hold on the entry (one per node
 * that has the name resolved): see "Reclaim" in design.rst.
 */
#define RDLOCK_LS_DIR_ENTRIES	64
#define RDLOCK_LS_DIR		RDLOCK_XPORT_FIRST_LS_SLOT
#define RDLOCK_LS_ALLOC		(RDLOCK_LS_DIR + 3 * RDLOCK_LS_DIR_ENTRIES)
#define RDLOCK_LS_REGIONS	(RDLOCK_LS_ALLOC + 1)
/* Geometry word of a directory entry whose region could not be allocated. */
#define RDLOCK_LS_GEOMETRY_FAILED	U64_MAX
/*
 * Name tag word: tag << RDLOCK_LS_TAG_SHIFT | freeing | placement |
 * references. The placement (RDLOCK_LS_PLACE lockspaces) is 0 when the
 * lock is in the entry, else 1 + the index in rdlock_ls.nodes of the node
 * that claimed the entry and keeps the lock in its placed entry for it.
 */
#define RDLOCK_LS_TAG_SHIFT	16
#define RDLOCK_LS_FREEING	BIT_ULL(15)
#define RDLOCK_LS_PLACE_SHIFT	9
#define RDLOCK_LS_PLACE_MASK	(0x3fULL << RDLOCK_LS_PLACE_SHIFT)
#define RDLOCK_LS_REFS_MAX	0x1ffULL
#define RDLOCK_LS_TAG_MASK	(~0ULL << RDLOCK_LS_TAG_SHIFT)
/*
 * A freed entry: free to take like a never used one (0), but a name's
 * probe goes on past it, since names taken while it was in use may sit
 * after it; the first 0 ends the probe (design.rst, "Reclaim").
 */
#define RDLOCK_LS_FREED		RDLOCK_LS_FREEING

/* A tag word that any name may claim: never used, or freed. */
static inline bool rdlock_ls_entry_free(u64 v)
{
	return !v || v == RDLOCK_LS_FREED;
}

/*
 * Entries a name may take on its home node, from its start entry on: it
 * is looked for in them up to the first never used one (a freed entry
 * does not end the search), and a new name claims the first free one.
 */
#define RDLOCK_LS_NAME_WINDOW	16
/*
 * Unused names this node keeps resolved before it forgets the oldest (and
 * drops its reference on their entries): at most this, and at most
 * entries / RDLOCK_LS_RES_CACHE_SHARE of the lockspace.
 */
#define RDLOCK_LS_RES_CACHE	1024
#define RDLOCK_LS_RES_CACHE_SHARE	4
/*
 * TRY or timed acquisitions of one lockspace's kernel users that may be
 * under way on this node or have their tickets finishing in the
 * background; beyond, such acquisitions get -EBUSY (a caller looping TRY
 * would otherwise grow memory without bound). /dev/rdlock's count per
 * user instead (user_finishing_max).
 */
#define RDLOCK_LS_FINISHING_MAX	64

/**
 * struct rdlock_res - a lock name as this node knows it
 * @hnode: in rdlock_ls.res, by @hash.
 * @lru: on rdlock_ls.lru while no lock uses it; on rdlock_ls.drops once
 *	forgotten, until its entry reference is dropped.
 * @refs: locks of this node using it (under rdlock_ls.res_lock).
 * @hash: the name's hash: home node, start entry and @tag.
 * @tag: the name's tag word with no reference (never 0).
 * @resolve_mutex: serialises finding the name entry.
 * @resolved: @home and @slot are valid, and this node holds one reference
 *	on the entry until it forgets the name: the entry cannot be freed
 *	or handed to another name meanwhile.
 * @entry_home: node whose table holds the name's entry (the hash's).
 * @entry_slot: the entry's tag word there.
 * @place: the placement bits of the entry's tag word (RDLOCK_LS_PLACE).
 * @home: node whose table holds the lock word: @entry_home, or in an
 *	RDLOCK_LS_PLACE lockspace the node that claimed the entry.
 * @slot: the lock word, in the entry or in its placed entry (the same
 *	layout: tag word slot first, the value block last).
 * @posted: releases of its locks posted and not ended yet
 *	(&rdlock_ticket.pin): its entry reference is not dropped before,
 *	so that the entry is never another name's while one is in flight.
 * @gen: moves of the name off nodes declared down (rdlock_ls_rehome();
 *	under rdlock_ls.locks_lock, and @resolve_mutex): an acquisition
 *	granted in a word the name has left gives it back and starts again.
 * @moved_from: the node declared down that the name's entry or lock
 *	moved away from with this node's granted locks, until that node's
 *	declaration is done here (rdlock_ls_node_released()); U32_MAX: none.
 *	Other acquisitions of the name wait meanwhile. Under @resolve_mutex.
 * @locks: this node's locks of the name on rdlock_ls.locks (their
 *	&rdlock_lock.res_node), under rdlock_ls.locks_lock.
 * @move_node: on the names a move off a node declared down has left to
 *	do (rdlock_ls_rehome()), under rdlock_ls.locks_lock.
 * @len: bytes of @name.
 * @name: the name.
 */
struct rdlock_res {
	struct hlist_node hnode;
	struct list_head lru;
	unsigned int refs;
	u64 hash;
	u64 tag;
	struct mutex resolve_mutex;	/* finding the name's entry */
	bool resolved;
	u32 entry_home;
	u32 entry_slot;
	u64 place;
	u32 home;
	u32 slot;
	atomic_t posted;
	u32 gen;
	u32 moved_from;
	struct list_head locks;
	struct list_head move_node;
	u32 len;
	u8 name[RDLOCK_RES_NAME_MAX];
};

/*
 * A lock's life: WAITING until granted; GRANTED, CONVERTING while an
 * upgrade waits; LOST (final, only freed by rdlock_unlock()) when its
 * word was on a node declared down and it could not be taken again in the
 * name's new word (rdlock_ls_rehome()).
 */
enum rdlock_lock_state {
	RDLOCK_LK_WAITING,
	RDLOCK_LK_GRANTED,
	RDLOCK_LK_CONVERTING,
	RDLOCK_LK_LOST,
};

/**
 * struct rdlock_lock - one acquisition by a user of this node
 * @ls: its lockspace.
 * @res: its name.
 * @ls_node: on rdlock_ls.locks (under rdlock_ls.locks_lock).
 * @res_node: on rdlock_res.locks, with @ls_node.
 * @op_mutex: one of release, conversion, value block access or the
 *	lock's move to its name's new word (rdlock_ls_rehome()) at a time.
 * @gen: rdlock_res.gen when it was granted or last moved (under
 *	rdlock_ls.locks_lock).
 * @state: enum rdlock_lock_state, for debugfs.
 * @ticket: the protocol's state of the acquisition.
 * @owner: tgid of the userspace owner, 0 for a kernel user.
 * @quota: the bound on its owner's abandoned tickets (a /dev/rdlock
 *	user's: rdlock_lock_set_quota()); NULL: the lockspace's.
 * @since: when it was requested, then when it was granted.
 * @work: rdlock_lock_async()'s worker.
 * @done: rdlock_lock_async()'s completion.
 * @arg: its argument.
 * @mode: requested mode.
 * @opts: requested options.
 */
struct rdlock_lock {
	struct rdlock_ls *ls;
	struct rdlock_res *res;
	struct list_head ls_node;
	struct list_head res_node;
	struct mutex op_mutex;	/* see above */
	u32 gen;
	enum rdlock_lock_state state;
	struct rdlock_ticket ticket;
	pid_t owner;
	struct rdlock_proto_quota *quota;
	ktime_t since;
	struct work_struct work;
	rdlock_done_t done;
	void *arg;
	enum rdlock_lock_mode mode;
	struct rdlock_lock_opts opts;
	bool lvb_read_ok;
	u64 lvb_read[1 + RDLOCK_LVB_LEN / 8];	/* RDLOCK_LS_LVB_SLOTS */
};

/**
 * struct rdlock_ls - a lockspace on this node
 * @list: on the list of lockspaces (under rdlock_ls_mutex).
 * @users: kernel opens, the uapi's creation and joined files (same mutex).
 * @created: created through RDLOCK_IOC_LS_CREATE (holds one of @users).
 * @uid: owner for the uapi's permission check.
 * @gid: group for the uapi's permission check.
 * @mode: permission bits for the uapi.
 * @name: NUL-terminated name.
 * @tag: the name's tag in the cluster's directory.
 * @attr: attributes.
 * @ops: the protocol.
 * @cfg: the protocol's policy for this lockspace.
 * @stats: counters of this lockspace.
 * @base: first slot of the lockspace's region on every node.
 * @entries: name entries per node.
 * @nodes: home nodes, ascending.
 * @nr_nodes: number of @nodes.
 * @epoch: rdlock_xport_epoch() when the lockspace joined the cluster; once
 *	it differs, the tables the lockspace lives in may be gone: locks fail
 *	with -ESHUTDOWN and the lockspace leaves the list of this node's.
 * @incarnation: rdlock_xport_node_incarnation() of every node at the same
 *	time: a release goes only to a home that still has that table.
 * @res_lock: protects @res, @lru, @nr_unused, @drops, @nr_drops,
 *	@dropping, @dying and rdlock_res.refs.
 * @res: names known on this node, by hash.
 * @lru: names no lock uses, oldest first.
 * @nr_unused: length of @lru.
 * @res_cache: most names kept on @lru.
 * @drops: names forgotten whose entry reference @drop_work drops.
 * @nr_drops: length of @drops.
 * @dropping: @drop_work is queued or running; it clears this once it
 *	finds @drops empty.
 * @dying: the last user is gone: @drop_work frees the lockspace after the
 *	last drop.
 * @drop_work: drops entry references of forgotten names.
 * @locks_lock: protects @locks.
 * @locks: every lock of this node in the lockspace, granted or waiting.
 * @async_pending: rdlock_lock_async() calls not completed yet.
 * @resolves: names looked up in the home node's entries.
 * @probes: entries probed for them.
 * @resolves_fresh: of @resolves, those that claimed the first entry of a
 *	window nothing was ever taken in (one operation, no check).
 * @checks_spared: resolves whose check READ its first entry in the
 *	operation that took the reference (a CAS_READ).
 * @lvb_reads_spared: grants that READ the value block in the operation
 *	that took the lock (RDLOCK_LKF_LVB).
 * @cas_readers: the CAS spinlock's first guesses, per home
 *	(&rdlock_proto_cfg.cas_readers): the home's reader bit at first.
 * @references: entry references this node holds (resolved names).
 * @ref_drops: references dropped.
 * @reclaimed: entries this node freed (last reference, idle lock word).
 * @busy_at_free: entries whose last reference went while their lock word
 *	was busy: kept, with no reference, until a probe frees them.
 * @resolve_retries: resolutions that met another entry of their name
 *	referenced before theirs, and joined it.
 * @placed: resolutions that found the lock placed on another node than
 *	the entry's home (RDLOCK_LS_PLACE).
 * @ref_errors: references left in place because the operation that
 *	would drop them failed (the entry stays taken).
 * @down_words: lock words of this node's region that held a node
 *	declared down, and were released (rdlock_ls_node_down()).
 * @down_lvbs: value blocks that lost their flags: such a node held their
 *	name exclusive.
 * @moved_names: names whose entry or lock was on a node declared down and
 *	that this node found again on their new home, or placed again.
 * @moved_locks: this node's granted locks taken again in the new word of
 *	such a name.
 * @lost_locks: such locks that could not be taken again (now LOST).
 * @debugfs: the lockspace's debugfs directory.
 *
 * @users counts every holder of the lockspace, under rdlock_ls_mutex;
 * @walkers, of those, the passes of rdlock_ls_for_each() (a node's
 * declaration down), which keep it only while they walk it: a removal
 * does not wait for them.
 */
struct rdlock_ls {
	struct list_head list;
	unsigned int users;
	unsigned int walkers;
	bool created;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	char name[RDLOCK_LS_NAME_MAX];
	u64 tag;
	struct rdlock_ls_attr attr;
	const struct rdlock_proto_ops *ops;
	struct rdlock_proto_cfg cfg;
	struct rdlock_proto_stats stats;
	u32 base;
	u32 entries;
	u32 nodes[RDLOCK_MAX_NODES];
	u32 nr_nodes;
	u32 epoch;
	u64 incarnation[RDLOCK_MAX_NODES];
	spinlock_t res_lock;		/* see above */
	DECLARE_HASHTABLE(res, 8);
	struct list_head lru;
	unsigned int nr_unused;
	unsigned int res_cache;
	struct list_head drops;
	unsigned int nr_drops;
	bool dropping;
	bool dying;
	struct work_struct drop_work;
	spinlock_t locks_lock;		/* @locks */
	struct list_head locks;
	atomic_t async_pending;
	atomic64_t resolves;
	atomic64_t probes;
	atomic64_t resolves_fresh;
	atomic64_t checks_spared;
	atomic64_t lvb_reads_spared;
	u64 cas_readers[RDLOCK_MAX_NODES];
	atomic64_t references;
	atomic64_t ref_drops;
	atomic64_t reclaimed;
	atomic64_t busy_at_free;
	atomic64_t resolve_retries;
	atomic64_t placed;
	atomic64_t ref_errors;
	atomic64_t down_words;
	atomic64_t down_lvbs;
	atomic64_t moved_names;
	atomic64_t moved_locks;
	atomic64_t lost_locks;
	struct dentry *debugfs;
};

/*
 * lockspace.c: the directory and the lockspaces of this node.
 *
 * rdlock_ls_mutex protects rdlock_ls_list, the lockspaces of this node,
 * and their @users.
 */
extern struct mutex rdlock_ls_mutex;
extern struct list_head rdlock_ls_list;
/*
 * rdlock_ls_join_mutex serialises opening lockspaces, which takes remote
 * operations; taken before rdlock_ls_mutex, which is never held across
 * them.
 */
extern struct mutex rdlock_ls_join_mutex;
/* Runs the names' drops and a lost lockspace's callbacks. */
extern struct workqueue_struct *rdlock_ls_wq;
/* Runs rdlock_lock_async()'s acquisitions: they wait for grants. */
extern struct workqueue_struct *rdlock_ls_async_wq;
extern struct workqueue_struct *rdlock_ls_move_wq;
/* Names of one lockspace moved at once (rdlock_ls_rehome()). */
#define RDLOCK_LS_REHOME_MOVERS	16

struct rdlock_ls *rdlock_ls_find(const char *name);
struct rdlock_ls *rdlock_ls_find_listed(const char *name);
struct rdlock_ls *rdlock_ls_open_locked(const char *name,
					const struct rdlock_ls_attr *attr);
void rdlock_ls_put_locked(struct rdlock_ls *ls);
bool rdlock_ls_stale(const struct rdlock_ls *ls);
u64 rdlock_ls_policy(const struct rdlock_ls_attr *attr);

/* lockspace_dir.c */
u64 rdlock_ls_dir_tag(const char *name);
int rdlock_ls_join_cluster(struct rdlock_ls *ls);
void rdlock_ls_dir_claims_wait(void);
int rdlock_ls_dir_rebuild(struct rdlock_ls *ls, u32 dead);

/* lockspace_member.c */
struct seq_file;
int rdlock_member_init(void);
void rdlock_member_exit(void);
int rdlock_member_wait(const struct rdlock_ls *ls, unsigned long deadline);
bool rdlock_member_survivor(u32 node);
void rdlock_member_heard_down(u32 dead, u32 src, u64 inc);
void rdlock_member_show(struct seq_file *m);
bool rdlock_ls_blip(const struct rdlock_ls *ls, u32 node, int ret);
bool rdlock_ls_blip_wait(unsigned int *backoff_ms, unsigned long deadline);
int rdlock_ls_op(const struct rdlock_ls *ls, u32 node, int op,
		 u32 slot, u64 arg0, u64 arg1, u64 *value);
int rdlock_ls_read_range(const struct rdlock_ls *ls, u32 node,
			 u32 slot, u32 count, u64 *vals);

/* lockspace_name.c: names, their entries and the entries' reclaim. */
u32 rdlock_lvb_state_slot(const struct rdlock_ls *ls, u32 lslot);
bool rdlock_ls_word_idle(const struct rdlock_ls *ls, u64 w);
void rdlock_ls_drop_work(struct work_struct *work);
unsigned long rdlock_ls_exit_deadline(void);
struct rdlock_res *rdlock_res_get(struct rdlock_ls *ls,
				  const void *name, size_t len);
void rdlock_res_put(struct rdlock_ls *ls, struct rdlock_res *res);
int rdlock_res_resolve(struct rdlock_ls *ls, struct rdlock_res *res,
		       unsigned long deadline);
int rdlock_ls_home_read(struct rdlock_ls *ls, u32 i, u32 off, u64 *v);
bool rdlock_res_lost(const struct rdlock_res *res);
bool rdlock_res_lost_to(const struct rdlock_res *res, u32 node);
u32 rdlock_ls_handover_pending(void);
u32 rdlock_res_home_pending(const struct rdlock_ls *ls,
			    const struct rdlock_res *res);
int rdlock_res_relocate(struct rdlock_ls *ls, struct rdlock_res *res,
			unsigned long deadline);
int rdlock_ls_home_entries(struct rdlock_ls *ls, u64 *used, u64 *refs,
			   u64 *freeing);

/* lockspace_lock.c: the locks of this node's users. */
int rdlock_ls_check_lock(const struct rdlock_ls *ls, size_t len,
			 enum rdlock_lock_mode mode,
			 const struct rdlock_lock_opts *opts);
void rdlock_lvb_restore(struct rdlock_lock *lk);

/*
 * lockspace_notice.c: notices. Our transport message type: the first
 * after the protocols'.
 */
#define RDLOCK_LS_MSG_TYPE	RDLOCK_MSG_PROTO_NR
void rdlock_ls_msg_handler(u32 src, const void *payload, size_t len);
void rdlock_ls_up_handler(u32 node);
void rdlock_ls_call_down(u32 dead);
void rdlock_ls_tell_lost(void);
void rdlock_ls_lost_flush(void);

/*
 * lockspace_recover.c: nodes declared down. The survivors' barrier: our
 * second transport message type.
 */
#define RDLOCK_LS_DOWN_MSG_TYPE	(RDLOCK_MSG_PROTO_NR + 1)
static_assert(RDLOCK_LS_DOWN_MSG_TYPE < RDLOCK_XMSG_USER_TYPES);
void rdlock_ls_down_msg_handler(u32 src, const void *payload,
				size_t len);
int rdlock_ls_for_each(int (*fn)(struct rdlock_ls *ls, u32 dead), u32 dead);
bool rdlock_ls_walked_locked(const char *name);
int rdlock_ls_walk_wait(const char *name);
bool rdlock_ls_node_released(u32 node);
int rdlock_ls_take_over(u32 took);
int rdlock_ls_release_wait(const struct rdlock_ls *ls, u32 node,
			   unsigned long deadline);

/*
 * lockspace_rehome.c: names whose entry or lock was on a node declared
 * down move, with this node's granted locks.
 */
int rdlock_ls_rehome(u32 dead);
int rdlock_res_wait_moved(struct rdlock_ls *ls, struct rdlock_res *res,
			  unsigned long deadline);

/*
 * lockspace_fault.c: fault injection for the tests, "make
 * RDLOCK_FAULT_INJECTION=y" only; else these are no-ops.
 */
#ifdef CONFIG_RDLOCK_FAULT_INJECTION
int rdlock_ls_fault_down(void);
void rdlock_ls_fault_walk(void);
void rdlock_ls_fault_init(struct dentry *root);
#else
static inline int rdlock_ls_fault_down(void) { return 0; }
static inline void rdlock_ls_fault_walk(void) { }
static inline void rdlock_ls_fault_init(struct dentry *root) { }
#endif

/* lockspace_debugfs.c: a lockspace's directory in lockspaces/. */
void rdlock_ls_debugfs_add(struct rdlock_ls *ls);
void rdlock_ls_debugfs_remove(struct rdlock_ls *ls);

#endif /* _RDLOCK_LOCKSPACE_PRI_H */
