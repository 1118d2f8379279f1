/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock DLM API (interface layer): private structures, and the
 * prototypes and data shared by the layer's own files only:
 *
 *	dlm.c		the request engine, lockspaces, module parameters
 *	dlm_ast.c	the callback (AST/BAST) ring and its delivery
 *	dlm_notice.c	resources, and the notices between nodes
 *	dlm_local.c	LOCAL early grants, their takes, parked releases
 *	dlm_debugfs.c	counters, fault knobs, debugfs
 *
 * main.c needs rdlock_dlm_init(), _exit() and _debugfs_init(). Users
 * see the opaque API of include/rdlock/dlm.h.
 */
#ifndef _RDLOCK_DLM_PRI_H
#define _RDLOCK_DLM_PRI_H

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <rdlock/dlm.h>

#include "dlm_poll.h"
#include "lockspace.h"

struct dentry;

/*
 * The value block's state (rdlock_lvb_set() flags), on the resource's name:
 * VALID once an EX holder stored it with VALBLK. An EX grant writes
 * nothing: a holder that stores bytes clears VALID until they are all
 * written (rdlock_lvb_set_words()), and one that dies at EX is for the
 * recovery of its locks to mark (dlm-api.rst, "Node failure"), as
 * fs/dlm's recovery does: the lock word names the holder's node.
 */
#define RDLOCK_DLM_LVB_VALID	0x1

#define RDLOCK_DLM_CBS		16	/* callbacks queued per lock */

/*
 * The rdlock lockspace behind a DLM lockspace: "dlm." and the name when
 * that fits rdlock's 31 characters, else "dlmh." and the name's hash.
 */
#define RDLOCK_DLM_LS_PREFIX		"dlm."
#define RDLOCK_DLM_LS_HASHED_PREFIX	"dlmh."

enum rdlock_dlm_notice_kind {
	RDLOCK_DLM_NOTICE_WAIT = 1,	/* a request waits for @mode */
	RDLOCK_DLM_NOTICE_DONE = 2,	/* that request waits no more */
	RDLOCK_DLM_NOTICE_ROOM = 3,	/* a name found no free entry */
	RDLOCK_DLM_NOTICE_HELLO = 4,	/* @src opened the lockspace */
	RDLOCK_DLM_NOTICE_REPEAT = 5,	/* @src's waits follow, anew */
	RDLOCK_DLM_NOTICE_KICK = 6,	/* request @req: try again now */
	/* RDLOCK_IOC_LOCKS of every node (dlm_dump.c has their formats) */
	RDLOCK_DLM_NOTICE_DUMP = 7,	/* @src asks for this node's locks */
	RDLOCK_DLM_NOTICE_LOCK = 8,	/* one lock of the answer */
	RDLOCK_DLM_NOTICE_NAME = 9,	/* a part of that lock's name */
	RDLOCK_DLM_NOTICE_END = 10,	/* the answer is complete */
	RDLOCK_DLM_NOTICE_BYE = 11,	/* @src closed the lockspace */
};

/* Asks for this node's locks a lockspace keeps until it answers them. */
#define RDLOCK_DLM_ASKS_MAX	4

/**
 * struct rdlock_dlm_ask - another node's RDLOCK_IOC_LOCKS, to answer
 * @src: the node that asks.
 * @qid: its query's id, in every message of the answer.
 * @max: locks it wants at most (all are counted).
 * @hash: with @by_hash, only the locks of names of this hash.
 * @by_hash: see @hash.
 */
struct rdlock_dlm_ask {
	u32 src;
	u32 qid;
	u32 max;
	u64 hash;
	bool by_hash;
};

/* A blocking notice on the wire (RDLOCK_LS_NOTICE_MAX bytes at most). */
struct rdlock_dlm_notice_msg {
	u8 kind;
	s8 mode;
	__le16 home;		/* ROOM: the node whose entries are full */
	__le32 lkid;
	__le64 hash;
	__le64 req;
};

/**
 * struct rdlock_dlm_notice - a waiter somewhere in the cluster
 * @node: on rdlock_dlm_ls.notices.
 * @src: its node.
 * @lkid: its lock's id there.
 * @hash: its resource's hash.
 * @req: its request's id on @src.
 * @mode: the mode it waits for.
 */
struct rdlock_dlm_notice {
	struct list_head node;
	u32 src;
	u32 lkid;
	u64 hash;
	u64 req;
	int mode;
};

enum rdlock_dlm_cb_type {
	RDLOCK_DLM_CB_AST = 1,
	RDLOCK_DLM_CB_BAST = 2,
};

/* rdlock_dlm_cb.flags, rdlock_dlm_queue_cb()'s @cb_flags */
#define RDLOCK_DLM_CBF_FINAL	0x1	/* the lock's last callback */
/*
 * An AST of a grant that raised the mode: the hold time starts when it is
 * delivered (rdlock_dlm_set_hold()).
 */
#define RDLOCK_DLM_CBF_HOLD	0x2

struct rdlock_dlm_cb {
	u8 type;
	u8 sb_flags;
	u8 flags;		/* RDLOCK_DLM_CBF_* */
	int val;
	ktime_t queued;
};

/**
 * struct rdlock_dlm_res - a resource this node has locks on
 * @hnode: in rdlock_dlm_ls.res.
 * @hash: the name's hash (notices name resources by it).
 * @refs: locks and requests using it.
 * @locks: its locks (rdlock_dlm_lkb.res_node).
 * @parked: EX unlocks whose release waits (rdlock_dlm_unlock_work()).
 * @len: bytes of @name.
 * @name: the resource name.
 */
struct rdlock_dlm_res {
	struct hlist_node hnode;
	u64 hash;
	unsigned int refs;
	struct list_head locks;
	unsigned int parked;
	u32 len;
	u8 name[RDLOCK_DLM_RESNAME_MAX];
};

struct rdlock_dlm_req;

/**
 * enum rdlock_dlm_lkb_state - a DLM lock's life (fs/dlm's lkb_status)
 * @RDLOCK_DLM_LKS_NEW: asked for and not granted yet (grmode
 *	RDLOCK_DLM_LOCK_IV): its first request is in progress.
 * @RDLOCK_DLM_LKS_UNPUBLISHED: granted with RDLOCK_DLM_LKF_LOCAL, its
 *	lock words not taken yet, and their take not started
 *	(rdlock_dlm_lkb.local_req).
 * @RDLOCK_DLM_LKS_TAKING: granted LOCAL, the take of its lock words under
 *	way (rdlock_dlm_local_work()).
 * @RDLOCK_DLM_LKS_GRANTED: granted, the lock words of its mode taken
 *	(none if the take of a LOCAL lock gave up).
 * @RDLOCK_DLM_LKS_DEAD: final: its last AST is queued (an unlock's, or
 *	a new lock's that was cancelled or not granted); no more requests
 *	or callbacks.
 * @RDLOCK_DLM_LKS_NR: number of states.
 *
 * While UNPUBLISHED or TAKING, the lock's @main and @gate are its take's
 * until it ends, and the lock's next request waits for it
 * (rdlock_dlm_wait_local()). The moves (rdlock_dlm_lkb_to()):
 * NEW to UNPUBLISHED (rdlock_dlm_local_grant()), GRANTED (its request's
 * grant) or DEAD; UNPUBLISHED to TAKING (the take starts) or GRANTED
 * (unlocked before: rdlock_dlm_local_abandon()); TAKING to GRANTED (the
 * take ended); GRANTED to DEAD (unlocked).
 */
enum rdlock_dlm_lkb_state {
	RDLOCK_DLM_LKS_NEW,
	RDLOCK_DLM_LKS_UNPUBLISHED,
	RDLOCK_DLM_LKS_TAKING,
	RDLOCK_DLM_LKS_GRANTED,
	RDLOCK_DLM_LKS_DEAD,
	RDLOCK_DLM_LKS_NR,
};

/**
 * enum rdlock_dlm_lkb_flag - facts about a DLM lock, bits of its iflags
 * @RDLOCK_DLM_LKB_LVB_VALID: at EX: the value block was valid when
 *	granted with VALBLK (a release that changed no byte then writes
 *	nothing). Its request's, without rdlock_dlm_ls.lock.
 * @RDLOCK_DLM_LKB_LVB_SEEN: at EX: rdlock_dlm_lkb.lvb_seen holds the value
 *	block's bytes as the grant read them (VALBLK), so that the release
 *	writes only the words the caller changed (nobody else writes them
 *	while it holds EX). Its request's, without rdlock_dlm_ls.lock.
 * @RDLOCK_DLM_LKB_BAST_HELD: the BAST at the head of the lock's callbacks
 *	waits for the hold time and was counted as held (a timer may
 *	expire up to a jiffy early and hold it again: it is still one held
 *	BAST). Under rdlock_dlm_ls.lock.
 *
 * Bit numbers, for the atomic bitops (set_bit(), test_bit(), ...): the
 * request's bits change without the lock that guards the held BAST's.
 */
enum rdlock_dlm_lkb_flag {
	RDLOCK_DLM_LKB_LVB_VALID,
	RDLOCK_DLM_LKB_LVB_SEEN,
	RDLOCK_DLM_LKB_BAST_HELD,
};

/**
 * struct rdlock_dlm_lkb - one DLM lock
 * @dls: its lockspace.
 * @res: its resource.
 * @res_node: on @res->locks while it can get BASTs.
 * @lkid: its id (rdlock_dlm_lksb.sb_lkid).
 * @lksb: the caller's status block.
 * @ast: completion callback.
 * @bast: blocking callback, or NULL.
 * @astarg: their argument.
 * @grmode: granted mode, RDLOCK_DLM_LOCK_IV before the first grant.
 * @main: the rdlock lock on the main word (PR: shared, EX: exclusive).
 * @gate: the rdlock lock on the convert gate (EX only).
 * @iflags: RDLOCK_DLM_LKB_* bits (enum rdlock_dlm_lkb_flag).
 * @lvb_seen: the value block's bytes (%RDLOCK_DLM_LKB_LVB_SEEN).
 * @req: the request in progress, or NULL.
 * @cb_work: delivers @cbs; delayed while a BAST waits for the hold time.
 * @granted: when the AST of the last grant that raised the mode was
 *	delivered: the hold time starts then (rdlock_dlm_set_hold()).
 * @hash: @res's hash, for tracepoints (@res may be gone by the final AST).
 * @basted: when the lock's last BAST was delivered (rdlock_dlm_hold_adapt()).
 * @hold_shift: the lock's hold time is the lockspace's doubled this many
 *	times, up to its maximum (rdlock_dlm_hold_adapt()).
 * @cbs: callbacks to deliver, a ring from @cb_head, @nr_cbs long.
 * @cb_head: first of @cbs.
 * @nr_cbs: callbacks queued.
 * @state: where it is in its life; only rdlock_dlm_lkb_to() changes it.
 * @local_req: its take while %RDLOCK_DLM_LKS_UNPUBLISHED, else NULL.
 * @local_node: on rdlock_dlm_ls.unpublished while
 *	%RDLOCK_DLM_LKS_UNPUBLISHED.
 * @local_at: when it was granted LOCAL (jiffies).
 *
 * Everything but @main, @gate, @iflags and @lvb_seen is under
 * rdlock_dlm_ls.lock; @main and @gate belong to the request in progress
 * (or to rdlock_dlm_unlock()'s), and so do @lvb_seen and the value
 * block's bits of @iflags.
 */
struct rdlock_dlm_lkb {
	struct rdlock_dlm_ls *dls;
	struct rdlock_dlm_res *res;
	struct list_head res_node;
	u32 lkid;
	struct rdlock_dlm_lksb *lksb;
	rdlock_dlm_ast_t ast;
	rdlock_dlm_bast_t bast;
	void *astarg;
	int grmode;
	struct rdlock_lock *main;
	struct rdlock_lock *gate;
	unsigned long iflags;
	u8 lvb_seen[RDLOCK_DLM_LVB_LEN];
	struct rdlock_dlm_req *req;
	struct delayed_work cb_work;
	ktime_t granted;
	u64 hash;
	ktime_t basted;
	u8 hold_shift;
	struct rdlock_dlm_cb cbs[RDLOCK_DLM_CBS];
	unsigned int cb_head;
	unsigned int nr_cbs;
	enum rdlock_dlm_lkb_state state;
	struct list_head local_node;
	unsigned long local_at;
	struct rdlock_dlm_req *local_req;
};

/**
 * enum rdlock_dlm_req_state - a request's life, as a cancel sees it
 * @RDLOCK_DLM_RQS_NEW: not started yet (rdlock_dlm_req_setup()).
 * @RDLOCK_DLM_RQS_CANCELLABLE: in a step that a cancel may abandon (it
 *	may wait for other holders).
 * @RDLOCK_DLM_RQS_RUNNING: in a step that no cancel may abandon: an
 *	unlock, a down-conversion, a request that may not wait (NL,
 *	NOQUEUE, a LOCAL grant), one being granted, a PR->EX conversion
 *	that gave up its PR.
 * @RDLOCK_DLM_RQS_CANCELLED: final: cancelled (rdlock_dlm_cancel(), its
 *	lkb NULL); it only gives back what it got.
 * @RDLOCK_DLM_RQS_NR: number of states.
 *
 * The moves (rdlock_dlm_req_to()): NEW to CANCELLABLE or RUNNING when it
 * is set up; CANCELLABLE and RUNNING to either at each step
 * (rdlock_dlm_step(); the take of a LOCAL grant, which no cancel can
 * find, enters CANCELLABLE steps too); CANCELLABLE to CANCELLED.
 */
enum rdlock_dlm_req_state {
	RDLOCK_DLM_RQS_NEW,
	RDLOCK_DLM_RQS_CANCELLABLE,
	RDLOCK_DLM_RQS_RUNNING,
	RDLOCK_DLM_RQS_CANCELLED,
	RDLOCK_DLM_RQS_NR,
};

/**
 * enum rdlock_dlm_req_flag - facts about a request, bits of its iflags
 * @RDLOCK_DLM_REQ_UNLOCK: an unlock, not a lock request (set before it is
 *	started).
 * @RDLOCK_DLM_REQ_NOTICED: its blocking notice is going or went out: the
 *	done notice is owed (set under rdlock_dlm_ls.lock).
 * @RDLOCK_DLM_REQ_DROPPED: it gave back a hold on its resource: the
 *	waiters known then are kicked when it ends (set by the request, and
 *	by its cancel's gate_work).
 * @RDLOCK_DLM_REQ_ROOM_WARNED: its long wait for a free name entry was
 *	logged.
 * @RDLOCK_DLM_REQ_LOCAL: the background take of a LOCAL grant, run by
 *	rdlock_dlm_local_work() on rdlock_dlm_local_wq (set before it is
 *	started).
 * @RDLOCK_DLM_REQ_ASLEEP: its work returned to wait (rdlock_dlm_sleep());
 *	whoever clears it queues the work again (rdlock_dlm_req_wake()).
 * @RDLOCK_DLM_REQ_DEAF: that wait is a back-off that kicks do not cut
 *	short (no free name entry, a LOCAL take's retry).
 * @RDLOCK_DLM_REQ_TAKING: a take of rdlock_dlm_take() is under way: the
 *	work goes on with it when it runs again.
 * @RDLOCK_DLM_REQ_LOCAL_DONE: rdlock_dlm_wait_local() let it go on.
 * @RDLOCK_DLM_REQ_LOCAL_WAITED: it waited there (@t0 is when it began).
 * @RDLOCK_DLM_REQ_RETAKE: a PR->EX conversion that failed takes its PR
 *	back (@ret its status).
 * @RDLOCK_DLM_REQ_STARTED: its work ran before.
 *
 * Bit numbers, for the atomic bitops: they change in more than one
 * context, not all under a lock.
 */
enum rdlock_dlm_req_flag {
	RDLOCK_DLM_REQ_UNLOCK,
	RDLOCK_DLM_REQ_NOTICED,
	RDLOCK_DLM_REQ_DROPPED,
	RDLOCK_DLM_REQ_ROOM_WARNED,
	RDLOCK_DLM_REQ_LOCAL,
	RDLOCK_DLM_REQ_ASLEEP,
	RDLOCK_DLM_REQ_DEAF,
	RDLOCK_DLM_REQ_TAKING,
	RDLOCK_DLM_REQ_LOCAL_DONE,
	RDLOCK_DLM_REQ_LOCAL_WAITED,
	RDLOCK_DLM_REQ_RETAKE,
	RDLOCK_DLM_REQ_STARTED,
};

/**
 * struct rdlock_dlm_req - a lock, conversion or unlock being carried out
 * @work: runs it.
 * @dls: the lockspace.
 * @lkb: its lock; NULL once cancelled (the request then only gives back
 *	what it got).
 * @res: the resource (a reference of its own).
 * @id: this node's id of the request, in its notices.
 * @lkid: @lkb's id, in its notices.
 * @from: the granted mode when it was made.
 * @to: the mode asked for.
 * @flags: RDLOCK_DLM_LKF_*.
 * @iflags: RDLOCK_DLM_REQ_* bits (enum rdlock_dlm_req_flag).
 * @wait_node: on rdlock_dlm_ls.waits once %RDLOCK_DLM_REQ_NOTICED, until
 *	its done notice.
 * @state: where it is in its life; only rdlock_dlm_req_to() changes it,
 *	under rdlock_dlm_ls.lock.
 * @waiting: RDLOCK_DLM_WAIT_*, for rdlock_dlm_lock_status().
 * @kicks: kicks received while noticed (rdlock_dlm_kicked()).
 * @kicks_seen: @kicks when its take last tried.
 * @timer: ends its wait (%RDLOCK_DLM_REQ_ASLEEP) at the next poll or
 *	back-off; a kick, a cancel or the LOCAL takes it waits for end it
 *	sooner.
 * @local_wait_node: on rdlock_dlm_ls.local_waiters while it waits in
 *	rdlock_dlm_wait_local().
 * @poll_us: its take's next poll back-off.
 * @backoff_ms: its take's back-off for a free name entry.
 * @retry_ms: a LOCAL take's back-off before it tries again after a
 *	failure.
 * @t0: when its take (or its wait for the LOCAL takes) began.
 * @ret: a failed PR->EX conversion's status, while it takes PR back.
 * @main: a lock on the main word this request took and does not hand over.
 * @gate: the same for the gate.
 * @cancel_gate: @gate, taken away by a cancel for @gate_work to give back.
 * @gate_work: gives back @cancel_gate.
 * @start: when it was queued.
 * @sb_flags: for the grant's AST.
 * @park_node: an EX unlock whose release waits for the LOCAL takes: on
 *	rdlock_dlm_ls.parked, @main and @gate its lock's words.
 * @release_work: gives them back once no LOCAL take is left.
 */
struct rdlock_dlm_req {
	struct work_struct work;
	struct rdlock_dlm_ls *dls;
	struct rdlock_dlm_lkb *lkb;
	struct rdlock_dlm_res *res;
	u64 id;
	u32 lkid;
	int from;
	int to;
	u32 flags;
	unsigned long iflags;
	struct list_head wait_node;
	enum rdlock_dlm_req_state state;
	int waiting;
	unsigned int kicks;
	unsigned int kicks_seen;
	struct hrtimer timer;
	struct list_head local_wait_node;
	unsigned int poll_us;
	unsigned int backoff_ms;
	unsigned int retry_ms;
	ktime_t t0;
	int ret;
	struct rdlock_lock *main;
	struct rdlock_lock *gate;
	struct rdlock_lock *cancel_gate;
	struct work_struct gate_work;
	ktime_t start;
	u8 sb_flags;
	struct list_head park_node;
	struct work_struct release_work;
};

/**
 * struct rdlock_dlm_ls - a DLM lockspace on this node
 * @list: on rdlock_dlm_list.
 * @name: the rdlock lockspace's name ("dlm." and @dlm_name, or "dlmh." and its
 *	hash when that is too long).
 * @dlm_name: the name it was opened by, NUL-terminated.
 * @ls: the rdlock lockspace behind it.
 * @ops: the caller's callbacks.
 * @ops_arg: their argument.
 * @lock: protects @lkids, @res, @notices, @waits, @next_req,
 *	@poll_next_ns and the locks' state; taken from softirq (notices),
 *	hence with interrupts off.
 * @lkids: locks by id.
 * @res: resources by hash.
 * @notices: waiters of the cluster not done yet.
 * @node_waits: of @notices, those of each node (dlm_node_waits_max).
 * @waits: this node's requests whose wait notice is out, done notice not
 *	(rdlock_dlm_req.wait_node).
 * @notice_mutex: orders the done notices after @repeat_work's repeats of
 *	the wait notices, so that no node keeps a wait that is over.
 * @next_req: request ids.
 * @refs: locks and requests alive; rdlock_dlm_close() waits for 0.
 * @wq: where its requests, @trim_work and @repeat_work run: rdlock_dlm_wq,
 *	or a /dev/rdlock lockspace's own (rdlock_dlm_open_user()).
 * @trim_homes: nodes a room notice found full, a bit each, for @trim_work.
 * @trim_work: forgets the rdlock names this node does not use that are
 *	homed on a node of @trim_homes.
 * @repeat_nodes: nodes that opened the lockspace or were connected again
 *	since, a bit each, for @repeat_work.
 * @repeat_work: sends them a repeat notice, then the wait notices of
 *	@waits.
 * @hold_ms: rdlock_dlm_set_hold()'s minimum hold time.
 * @hold_max_ms: how far rdlock_dlm_hold_adapt() may raise a lock's.
 * @local_takes: locks granted with RDLOCK_DLM_LKF_LOCAL whose lock words
 *	are not taken yet (under @lock).
 * @local_waiters: requests waiting in rdlock_dlm_wait_local(), woken
 *	(rdlock_dlm_local_wake()) when one is taken or none is left
 *	(rdlock_dlm_req.local_wait_node).
 * @unpublished: those whose take has not started, oldest first
 *	(rdlock_dlm_lkb.local_node).
 * @parked: EX unlocks whose release waits for @local_takes to be 0
 *	(rdlock_dlm_req.park_node).
 * @forcing: every LOCAL take was started for a waiter; until none is
 *	left, LOCAL requests are granted once taken, as any other.
 * @age_work: starts the takes of locks @unpublished for longer than
 *	rdlock_dlm_local_defer_ms.
 * @open_nodes: the other nodes known to have the lockspace open (a
 *	notice of theirs came, their bye not since), a bit each: those a
 *	LOCKS of every node asks.
 * @closing: rdlock_dlm_close() ended the queries; no new one asks, an
 *	answer stops at its next batch (set under @lock).
 * @queries: this node's RDLOCK_IOC_LOCKS waiting for the other nodes'
 *	answers (dlm_dump.c), under @lock.
 * @asks: other nodes' asks for this node's locks not answered yet, the
 *	first @nr_asks, oldest first, under @lock.
 * @nr_asks: see @asks.
 * @dump_work: answers them, on system_unbound_wq.
 * @poll_gap_ns: a /dev/rdlock lockspace's poll budget on this node, the
 *	time between two of its long waits' polls (rdlock_dlm_poll_slot());
 *	0 for a kernel user's, whose polls are not budgeted.
 * @poll_next_ns: the budget's next free time (ktime_get_ns()), under
 *	@lock.
 */
struct rdlock_dlm_ls {
	struct list_head list;
	char name[RDLOCK_LS_NAME_MAX];
	char dlm_name[RDLOCK_DLM_LS_NAME_MAX + 1];
	struct rdlock_ls *ls;
	const struct rdlock_dlm_ops *ops;
	void *ops_arg;
	spinlock_t lock;		/* see above */
	struct idr lkids;
	DECLARE_HASHTABLE(res, 8);
	struct list_head notices;
	unsigned int node_waits[RDLOCK_MAX_NODES];
	struct list_head waits;
	struct mutex notice_mutex;	/* see above */
	u64 next_req;
	atomic_t refs;
	struct workqueue_struct *wq;
	unsigned long trim_homes;	/* RDLOCK_MAX_NODES bits */
	struct work_struct trim_work;
	unsigned long repeat_nodes;	/* RDLOCK_MAX_NODES bits */
	struct work_struct repeat_work;
	unsigned int hold_ms;
	unsigned int hold_max_ms;
	unsigned int local_takes;
	struct list_head local_waiters;
	struct list_head unpublished;
	struct list_head parked;
	bool forcing;
	struct delayed_work age_work;
	unsigned long open_nodes;	/* RDLOCK_MAX_NODES bits */
	bool closing;
	struct list_head queries;
	struct rdlock_dlm_ask asks[RDLOCK_DLM_ASKS_MAX];
	unsigned int nr_asks;
	struct work_struct dump_work;
	u64 poll_gap_ns;
	u64 poll_next_ns;
};

/*
 * A lockspace of /dev/rdlock, whose users may be unprivileged: its polls
 * have a budget (dlm.c, rdlock_dlm_poll_budgeted()) and a kick wakes one
 * request (dlm_notice.c).
 */
static inline bool rdlock_dlm_budgeted(const struct rdlock_dlm_ls *dls)
{
	return dls->poll_gap_ns;
}

/* dlm.c */
extern struct workqueue_struct *rdlock_dlm_wq;		/* requests */
extern struct workqueue_struct *rdlock_dlm_cb_wq;	/* callbacks */
/* LOCAL takes: requests on rdlock_dlm_wq may wait for them. */
extern struct workqueue_struct *rdlock_dlm_local_wq;

/*
 * What the DLM layer asks of the lockspace layer, for profiles of a file
 * system's operations (debugfs rdlock/dlm, all lockspaces together).
 * Requests by granted mode (IV, NL, PR, EX) and requested mode (NL, PR,
 * EX; unlocks as IV); times in ns.
 */
enum {
	RDLOCK_DLM_ST_TAKE_MAIN,	/* rdlock_lock() of a main word */
	RDLOCK_DLM_ST_TAKE_GATE,	/* of a gate */
	RDLOCK_DLM_ST_TAKE_FAIL,	/* of those: failed (TRY busy, ...) */
	RDLOCK_DLM_ST_TRY_OK,		/* a try spared a wait's notices */
	RDLOCK_DLM_ST_TRY_BUSY,		/* a try found it busy: notice, wait */
	RDLOCK_DLM_ST_DROP,		/* rdlock_unlock() */
	RDLOCK_DLM_ST_LVB_GET,
	RDLOCK_DLM_ST_LVB_SET,
	RDLOCK_DLM_ST_LVB_WORDS,	/* value block words written */
	RDLOCK_DLM_ST_LVB_SPARED,	/* not written: already there */
	RDLOCK_DLM_ST_NOTICE,		/* notices sent (wait and done) */
	RDLOCK_DLM_ST_NOQUEUE,		/* requests with NOQUEUE */
	RDLOCK_DLM_ST_VALBLK,		/* requests with VALBLK */
	RDLOCK_DLM_ST_CANCEL,		/* requests cancelled */
	RDLOCK_DLM_ST_ROOM_WAIT,	/* takes that found no free entry */
	RDLOCK_DLM_ST_TRIM,		/* room notices received */
	RDLOCK_DLM_ST_HELLO,		/* hello notices of other nodes */
	RDLOCK_DLM_ST_REWAIT,		/* wait notices sent again for them */
	RDLOCK_DLM_ST_RECONNECT,	/* nodes of a lockspace connected again */
	RDLOCK_DLM_ST_NODE_DOWN,	/* nodes declared down, per lockspace */
	RDLOCK_DLM_ST_LS_LOST,		/* lockspaces lost (epoch, lost move) */
	RDLOCK_DLM_ST_KNOWN,		/* waits remembered now (a gauge) */
	RDLOCK_DLM_ST_WAIT_DROPPED,	/* waits over a node's bound */
	RDLOCK_DLM_ST_BAST_HELD,	/* BASTs held back for a hold time */
	RDLOCK_DLM_ST_HOLD_RAISED,	/* a lock's hold time doubled */
	RDLOCK_DLM_ST_POLL_WAIT,	/* a waiting take slept until a kick or poll */
	RDLOCK_DLM_ST_KICK_SENT,	/* kicks to known waiters */
	RDLOCK_DLM_ST_KICKED,		/* kicks that reached a waiting take */
	RDLOCK_DLM_ST_POLL_BUDGETED,	/* polls put off by their budget */
	RDLOCK_DLM_ST_LOCAL,		/* LOCAL locks granted before the take */
	RDLOCK_DLM_ST_LOCAL_TAKES,	/* of them, takes under way (a gauge) */
	RDLOCK_DLM_ST_LOCAL_RETRY,	/* a LOCAL lock's take failed: again */
	RDLOCK_DLM_ST_LOCAL_LOST,	/* ... and gave up: the lockspace went */
	RDLOCK_DLM_ST_LOCAL_KNOWN,	/* its value block was stored: misused */
	RDLOCK_DLM_ST_LOCAL_WAIT,	/* requests that waited for LOCAL takes */
	RDLOCK_DLM_ST_LOCAL_ABANDONED,	/* LOCAL locks unlocked, never taken */
	RDLOCK_DLM_ST_LOCAL_AGED,	/* takes started by their age */
	RDLOCK_DLM_ST_LOCAL_FORCED,	/* every LOCAL take started at once */
	RDLOCK_DLM_ST_LOCAL_PARKS,	/* EX unlocks whose release waited */
	RDLOCK_DLM_ST_LOCAL_PARKED,	/* of them, waiting now (a gauge) */
	RDLOCK_DLM_ST_DUMP_ANSWERED,	/* other nodes' LOCKS answered */
	RDLOCK_DLM_ST_DUMP_DROPPED,	/* not: RDLOCK_DLM_ASKS_MAX queued */
	RDLOCK_DLM_ST_NS_MAIN,		/* time in main-word rdlock_lock() */
	RDLOCK_DLM_ST_NS_GATE,		/* in gate rdlock_lock() */
	RDLOCK_DLM_ST_NS_DROP,		/* in rdlock_unlock() */
	RDLOCK_DLM_ST_NS_LVB,		/* in rdlock_lvb_get()/_set() */
	RDLOCK_DLM_ST_NS_NOTICE,	/* in rdlock_ls_notice_send() */
	RDLOCK_DLM_ST_NS_REQ,		/* request start to its AST queued */
	RDLOCK_DLM_ST_NS_AST,		/* AST queued to its call */
	RDLOCK_DLM_ST_NS_LOCAL,		/* a LOCAL lock's take, grant to end */
	RDLOCK_DLM_ST_NS_LOCAL_WAIT,	/* waiting for LOCAL takes */
	RDLOCK_DLM_ST_NR
};

/* dlm.c: one lockspace by its rdlock lockspace's name, for dlm_dump.c. */
int rdlock_dlm_with_ls(const char *core,
		       int (*fn)(struct rdlock_dlm_ls *dls, void *arg),
		       void *arg);
/* dlm_dump.c: RDLOCK_IOC_LOCKS of a DLM lockspace, and the answers. */
int rdlock_dlm_dump_locks(const char *core, struct rdlock_locks_query *q);
void rdlock_dlm_dump_notice(struct rdlock_dlm_ls *dls, u32 src,
			    const void *payload, size_t len);
void rdlock_dlm_dump_work(struct work_struct *work);
void rdlock_dlm_dump_abort(struct rdlock_dlm_ls *dls);

/* dlm_debugfs.c: the counters. */
extern atomic64_t rdlock_dlm_st[RDLOCK_DLM_ST_NR];
extern atomic64_t rdlock_dlm_st_req[4][4];	/* [from][to]: rdlock_dlm_mode_idx() */

/*
 * dlm_fault.c: fault injection for the tests, "make
 * RDLOCK_FAULT_INJECTION=y" only; else these are no-ops.
 */
#ifdef CONFIG_RDLOCK_FAULT_INJECTION
void rdlock_dlm_fault_done_delay(void);
void rdlock_dlm_fault_local_delay(void);
u32 rdlock_dlm_fault_poll_ms(void);
void rdlock_dlm_fault_init(struct dentry *root);
#else
static inline void rdlock_dlm_fault_done_delay(void) { }
static inline void rdlock_dlm_fault_local_delay(void) { }
static inline u32 rdlock_dlm_fault_poll_ms(void) { return 0; }
static inline void rdlock_dlm_fault_init(struct dentry *root) { }
#endif

static inline void rdlock_dlm_count(int st, s64 n)
{
	atomic64_add(n, &rdlock_dlm_st[st]);
}

/* One more @st, and the time since @t0 added to @ns_st. */
static inline void rdlock_dlm_count_since(int st, int ns_st, ktime_t t0)
{
	rdlock_dlm_count(st, 1);
	rdlock_dlm_count(ns_st, ktime_to_ns(ktime_sub(ktime_get(), t0)));
}

static inline bool rdlock_dlm_conflict(int a, int b)
{
	if (a <= RDLOCK_DLM_LOCK_NL || b <= RDLOCK_DLM_LOCK_NL)
		return false;
	return a == RDLOCK_DLM_LOCK_EX || b == RDLOCK_DLM_LOCK_EX;
}

static inline bool rdlock_dlm_req_unlock(const struct rdlock_dlm_req *req)
{
	return test_bit(RDLOCK_DLM_REQ_UNLOCK, &req->iflags);
}

static inline void rdlock_dlm_put(struct rdlock_dlm_ls *dls)
{
	/* rdlock_dlm_close() may free @dls at 0: the wait queue is hashed. */
	if (atomic_dec_and_test(&dls->refs))
		wake_up_var(&dls->refs);
}

/* dlm.c */
int rdlock_dlm_init(void);
void rdlock_dlm_exit(void);
struct rdlock_dlm_ls *rdlock_dlm_open_user(const char *name, u32 node_id);
void rdlock_dlm_lkb_to(struct rdlock_dlm_lkb *lkb,
		       enum rdlock_dlm_lkb_state to);
void rdlock_dlm_req_to(struct rdlock_dlm_req *req,
		       enum rdlock_dlm_req_state to);
int rdlock_dlm_up(struct rdlock_dlm_req *req, struct rdlock_dlm_lkb *lkb,
		  int *grmode);
void rdlock_dlm_drop(struct rdlock_dlm_req *req,
		     struct rdlock_lock **lk);
int rdlock_dlm_lvb_get(struct rdlock_lock *lk, void *buf, u32 *f);
void rdlock_dlm_req_free(struct rdlock_dlm_req *req);
int rdlock_dlm_sleep(struct rdlock_dlm_req *req, u64 ns, bool deaf);
void rdlock_dlm_req_wake(struct rdlock_dlm_req *req);
void rdlock_dlm_req_resume(struct rdlock_dlm_req *req);
void rdlock_dlm_req_setup(struct rdlock_dlm_lkb *lkb,
			  struct rdlock_dlm_req *req);

/* dlm_ast.c */
unsigned int rdlock_dlm_hold_of(const struct rdlock_dlm_lkb *lkb);
void rdlock_dlm_cb_work(struct work_struct *work);
void rdlock_dlm_queue_cb(struct rdlock_dlm_lkb *lkb, u8 type, int val,
			 u8 sb_flags, u8 cb_flags);
void rdlock_dlm_ast(struct rdlock_dlm_lkb *lkb,
		    const struct rdlock_dlm_req *req, int grmode, int ret);

/* dlm_notice.c */
u64 rdlock_dlm_hash(const void *name, unsigned int len);
struct rdlock_dlm_res *rdlock_dlm_res_find(struct rdlock_dlm_ls *dls,
					   u64 hash, const void *name,
					   unsigned int len);
void rdlock_dlm_res_put(struct rdlock_dlm_ls *dls,
			struct rdlock_dlm_res *res);
void rdlock_dlm_forget_wait(struct rdlock_dlm_ls *dls, u32 src, u64 req);
bool rdlock_dlm_res_waited(struct rdlock_dlm_ls *dls, u64 hash);
void rdlock_dlm_node_up(void *arg, u32 node);
void rdlock_dlm_node_down(void *arg, u32 node);
void rdlock_dlm_lost(void *arg);
extern const struct rdlock_ls_sink_ops rdlock_dlm_sink_ops;
void rdlock_dlm_notice(void *arg, u32 src, const void *payload,
		       size_t len);
void rdlock_dlm_send_msg(struct rdlock_dlm_ls *dls,
			 const struct rdlock_dlm_notice_msg *m, u32 to);
void rdlock_dlm_send_notice(struct rdlock_dlm_req *req, u8 kind,
			    int mode, u32 home);
void rdlock_dlm_notice_wait(struct rdlock_dlm_req *req);
void rdlock_dlm_notice_done(struct rdlock_dlm_req *req);
void rdlock_dlm_kick_waiters(struct rdlock_dlm_req *req);
void rdlock_dlm_repeat_work(struct work_struct *work);
void rdlock_dlm_trim_work(struct work_struct *work);

/* dlm_local.c */
void rdlock_dlm_local_force(struct rdlock_dlm_ls *dls);
bool rdlock_dlm_wait_local(struct rdlock_dlm_req *req);
void rdlock_dlm_release_work(struct work_struct *work);
void rdlock_dlm_age_work(struct work_struct *work);
void rdlock_dlm_local_grant(struct rdlock_dlm_lkb *lkb,
			    struct rdlock_dlm_req *req);

/* dlm_debugfs.c */
void rdlock_dlm_debugfs_init(struct dentry *root);

#endif /* _RDLOCK_DLM_PRI_H */
