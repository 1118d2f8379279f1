// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API (interface layer): fs/dlm semantics on rdlock lockspaces.
 *
 * A DLM lock (struct rdlock_dlm_lkb) holds rdlock locks on the two lock
 * words of its resource's rdlock name ("M" + resource): the main word,
 * held shared for PR and exclusive for EX, and the convert gate (the
 * name's gate word, RDLOCK_LKF_GATE), held exclusive together with the
 * main word for as long as the lock is at EX. NL holds neither. One name
 * for both: one resolve, one entry, one cached name per resource. Every
 * EX acquisition takes the gate first; while a node holds the gate
 * nobody else can get EX on the main word, so a PR->EX
 * conversion may give up its shared hold and wait for EX on the main word
 * without anybody else getting EX in between: the data it cached under PR
 * stays valid. Two PR->EX converters meet at the gate: the one waiting
 * there gets a BAST from the other's wait for the main word, cancels and
 * (the caller) down-converts. Documentation/rdlock/dlm-api.rst has the
 * details.
 *
 * Requests run in an unbound WQ_MEM_RECLAIM workqueue, one work item per
 * request; callbacks run from another, one work item per lock, so a lock's
 * callbacks come one at a time and in order. Blocking callbacks: before a
 * request waits (its first try found the name busy), its node broadcasts
 * a notice (resource hash, mode) to the lockspace's nodes through the
 * lockspace layer; each node gives a BAST to its holders that block the
 * mode and remembers the notice until the waiter says it is done, so a
 * holder granted meanwhile gets its BAST too. A node that opens the
 * lockspace later never saw the notices sent before: it says hello, and
 * every node sends it the notices of its requests still waiting. A node
 * connected again after a link failure may have lost any of them, wait
 * or done: every node that sees the connection come back sends it all of
 * its requests' wait notices again, after a repeat notice that makes it
 * forget the ones it had.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/hashtable.h>
#include <linux/idr.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <rdlock/dlm.h>

#include "dlm-pri.h"
#include "lockspace.h"
#include "xport.h"

#define CREATE_TRACE_POINTS
#include "trace_dlm.h"

/* Every node must hash a resource name to the same notice key. */
static const siphash_key_t rdlock_dlm_key = {
	{ 0x72646c6f636b2d64ULL, 0x6c6d2d6e6f746963ULL }
};

/*
 * The rdlock lockspace behind a DLM lockspace: "dlm." and the name when
 * that fits rdlock's 31 characters, else "dlmh." and the name's hash.
 */
#define RDLOCK_DLM_LS_PREFIX	"dlm."
#define RDLOCK_DLM_NAME_CHARS	"abcdefghijklmnopqrstuvwxyz" \
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-"
/*
 * The CAS lock: a TRY leaves nothing in its word. NOQUEUE must never wait
 * for others (OCFS2 uses it to avoid lock inversions), and a queue lock's
 * failed try stays queued until the holders before it leave, which a
 * PR->EX NOQUEUE taking PR back under the gate would have to wait for.
 */
static const struct rdlock_ls_attr rdlock_dlm_attr = {
	.proto = RDLOCK_PROTO_CASLOCK,
	/*
	 * Value blocks and the convert gates, in the names' entries; names
	 * kept until their home needs room (the room notices trim them).
	 */
	.flags = RDLOCK_LS_LVB | RDLOCK_LS_GATE | RDLOCK_LS_KEEP_NAMES,
	.lease_ms = 0,		/* a file system holds locks until it unlocks */
	/* .slots: rdlock_dlm_slots */
};

/*
 * Slots of every node's table a DLM lockspace takes, 12 per name and
 * node (placement, below): 16384 is 455 names per home in a 3-node
 * cluster. A file system keeps a name for every lock it caches (OCFS2:
 * about four per cached inode, held at NL or above), and a request whose
 * home has no free entry waits until one is freed, so a file system with
 * many files needs more; the lock table (table_slots) must hold it. Read
 * when a lockspace is opened; the same on every node (it is the
 * lockspace's geometry).
 */
#define RDLOCK_DLM_SLOTS_MIN	1200
static unsigned int rdlock_dlm_slots = 16384;

static int rdlock_dlm_slots_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, RDLOCK_DLM_SLOTS_MIN,
				     RDLOCK_LS_PLACE_SLOTS_MAX);
}

static const struct kernel_param_ops rdlock_dlm_slots_ops = {
	.set = rdlock_dlm_slots_set,
	.get = param_get_uint,
};

module_param_cb(dlm_slots, &rdlock_dlm_slots_ops, &rdlock_dlm_slots, 0644);
MODULE_PARM_DESC(dlm_slots,
		 "lock-table slots of a DLM lockspace on every node, 12 per resource name and node with dlm_place (1200..262144, at most 65536 without dlm_place; default 16384); read when a lockspace is opened, the same on every node");

/*
 * A resource's lock lives on the node that first resolved its name
 * (RDLOCK_LS_PLACE), where a file system's private inodes cost no remote
 * operation, at the price of 1 / nodes of the names for dlm_slots. 0: on
 * the name's home (for comparing both; the same on every node).
 */
static bool rdlock_dlm_place = true;
module_param_named(dlm_place, rdlock_dlm_place, bool, 0644);
MODULE_PARM_DESC(dlm_place,
		 "place a resource's lock on the node that first used it (default: 1); read when a lockspace is opened, the same on every node");

/*
 * Grant a new lock asked for with RDLOCK_DLM_LKF_LOCAL at once and take
 * its lock words in the background (rdlock_dlm_local_grant()). Off: the
 * flag is accepted and the lock is granted once its words are taken, as
 * every other.
 */
static bool rdlock_dlm_local = true;
module_param_named(dlm_local, rdlock_dlm_local, bool, 0644);
MODULE_PARM_DESC(dlm_local,
		 "grant a new lock of a resource only this node knows (RDLOCK_DLM_LKF_LOCAL, OCFS2's new inodes) before its lock words are taken (default: 1)");

/*
 * How long a lock granted LOCAL may go without its lock words: a lock
 * unlocked sooner costs no operation at all (a file system's temporary
 * file), and an older one is taken in the background. Things that need
 * the words sooner take them at once (rdlock_dlm_local_force()). 0: take
 * them right after the grant.
 */
static unsigned int rdlock_dlm_local_defer_ms = 2000;
module_param_named(dlm_local_defer_ms, rdlock_dlm_local_defer_ms, uint, 0644);
MODULE_PARM_DESC(dlm_local_defer_ms,
		 "ms a LOCAL lock's lock words may wait to be taken (default: 2000; 0: at once)");
#define RDLOCK_DLM_LOCAL_DEFER_MS_MAX	60000U

/* rdlock_dlm_local_defer_ms, bounded, in jiffies. */
static unsigned long rdlock_dlm_local_defer(void)
{
	return msecs_to_jiffies(min(READ_ONCE(rdlock_dlm_local_defer_ms),
				    RDLOCK_DLM_LOCAL_DEFER_MS_MAX));
}

/* A LOCAL lock's take that failed tries again after this, doubling. */
#define RDLOCK_DLM_LOCAL_RETRY_MS_MIN	10
#define RDLOCK_DLM_LOCAL_RETRY_MS_MAX	1000

/* A request that waits this long for a free name entry is logged. */
#define RDLOCK_DLM_ROOM_WARN_MS	10000

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

enum rdlock_dlm_notice_kind {
	RDLOCK_DLM_NOTICE_WAIT = 1,	/* a request waits for @mode */
	RDLOCK_DLM_NOTICE_DONE = 2,	/* that request waits no more */
	RDLOCK_DLM_NOTICE_ROOM = 3,	/* a name found no free entry */
	RDLOCK_DLM_NOTICE_HELLO = 4,	/* @src opened the lockspace */
	RDLOCK_DLM_NOTICE_REPEAT = 5,	/* @src's waits follow, anew */
	RDLOCK_DLM_NOTICE_KICK = 6,	/* request @req: try again now */
};

/* A request whose name found no free entry tries again after this. */
#define RDLOCK_DLM_ROOM_MS_MIN	10
#define RDLOCK_DLM_ROOM_MS_MAX	1000
/* A lock asked for again this soon after its BAST bounces (hold time). */
#define RDLOCK_DLM_BOUNCE_MS	1000
/*
 * A waiting take tries again when kicked (rdlock_dlm_kick_waiters()) and
 * else after a random back-off, doubled from the minimum to the maximum:
 * a kick can be lost with a link, or come before the release it follows
 * reached a third node's table.
 */
#define RDLOCK_DLM_POLL_US_MIN	50
#define RDLOCK_DLM_POLL_US_MAX	20000
/* Known waiters kicked from the worker's stack per request. */
#define RDLOCK_DLM_KICKS_MAX	8

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

/*
 * @hold: an AST of a grant that raised the mode: the hold time starts
 * when it is delivered (rdlock_dlm_set_hold()).
 */
struct rdlock_dlm_cb {
	u8 type;
	u8 sb_flags;
	bool final;
	bool hold;
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
 * @lvb_valid: at EX: the value block was valid when granted with
 *	VALBLK (a release that changed no byte then writes nothing).
 * @lvb_seen_ok: at EX: @lvb_seen holds the value block's bytes as the
 *	grant read them (VALBLK), so that the release writes only the words
 *	the caller changed (nobody else writes them while it holds EX).
 * @lvb_seen: those bytes.
 * @req: the request in progress, or NULL.
 * @cb_work: delivers @cbs; delayed while a BAST waits for the hold time.
 * @granted: when the AST of the last grant that raised the mode was
 *	delivered: the hold time starts then (rdlock_dlm_set_hold()).
 * @hash: @res's hash, for tracepoints (@res may be gone by the final AST).
 * @basted: when the lock's last BAST was delivered (rdlock_dlm_hold_adapt()).
 * @hold_shift: the lock's hold time is the lockspace's doubled this many
 *	times, up to its maximum (rdlock_dlm_hold_adapt()).
 * @bast_held: the BAST at the head of @cbs waits for the hold time and was
 *	counted as held (a timer may expire up to a jiffy early and hold it
 *	again: it is still one held BAST).
 * @cbs: callbacks to deliver, a ring from @cb_head, @nr_cbs long.
 * @cb_head: first of @cbs.
 * @nr_cbs: callbacks queued.
 * @dead: the final AST is queued: no more requests or callbacks.
 * @local: granted with RDLOCK_DLM_LKF_LOCAL, its lock words not taken
 *	yet: @main and @gate are its take's until it ends, and the lock's
 *	next request waits for it (rdlock_dlm_wait_local()).
 * @local_req: its take while not started (the lock is *unpublished*),
 *	else NULL.
 * @local_node: on rdlock_dlm_ls.unpublished while @local_req is set.
 * @local_at: when it was granted LOCAL (jiffies).
 *
 * Everything but @main and @gate is under rdlock_dlm_ls.lock; @main and
 * @gate belong to the request in progress (or to rdlock_dlm_unlock()'s).
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
	bool lvb_valid;
	bool lvb_seen_ok;
	u8 lvb_seen[RDLOCK_DLM_LVB_LEN];
	struct rdlock_dlm_req *req;
	struct delayed_work cb_work;
	ktime_t granted;
	u64 hash;
	ktime_t basted;
	u8 hold_shift;
	bool bast_held;
	struct rdlock_dlm_cb cbs[RDLOCK_DLM_CBS];
	unsigned int cb_head;
	unsigned int nr_cbs;
	bool dead;
	bool local;
	struct list_head local_node;
	unsigned long local_at;
	struct rdlock_dlm_req *local_req;
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
 * @unlock: an unlock, not a lock request.
 * @noticed: its blocking notice is going or went out: the done notice
 *	is owed.
 * @wait_node: on rdlock_dlm_ls.waits while @noticed, until its done
 *	notice.
 * @cancellable: waiting in a step that a cancel may abandon.
 * @waiting: RDLOCK_DLM_WAIT_*, for rdlock_dlm_lock_status().
 * @kicks: kicks received while noticed (rdlock_dlm_kicked()).
 * @kick_wq: its wait for a kick, a cancel or the next poll.
 * @dropped: it gave back a hold on its resource: the waiters known then
 *	are kicked when it ends.
 * @main: a lock on the main word this request took and does not hand over.
 * @gate: the same for the gate.
 * @cancel_gate: @gate, taken away by a cancel for @gate_work to give back.
 * @gate_work: gives back @cancel_gate.
 * @start: when it was queued.
 * @room_warned: its long wait for a free name entry was logged.
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
	bool unlock;
	bool noticed;
	struct list_head wait_node;
	bool cancellable;
	int waiting;
	unsigned int kicks;
	wait_queue_head_t kick_wq;
	bool dropped;
	struct rdlock_lock *main;
	struct rdlock_lock *gate;
	struct rdlock_lock *cancel_gate;
	struct work_struct gate_work;
	ktime_t start;
	bool room_warned;
	u8 sb_flags;
	struct list_head park_node;
	struct work_struct release_work;
};

/**
 * struct rdlock_dlm_ls - a DLM lockspace on this node
 * @list: on rdlock_dlm_list.
 * @name: its name.
 * @ls: the rdlock lockspace behind it.
 * @ops: the caller's callbacks.
 * @ops_arg: their argument.
 * @lock: protects @lkids, @res, @notices, @waits, @next_req and the
 *	locks' state; taken from softirq (notices), hence with interrupts
 *	off.
 * @lkids: locks by id.
 * @res: resources by hash.
 * @notices: waiters of the cluster not done yet.
 * @waits: this node's requests whose wait notice is out, done notice not
 *	(rdlock_dlm_req.wait_node).
 * @notice_mutex: orders the done notices after @repeat_work's repeats of
 *	the wait notices, so that no node keeps a wait that is over.
 * @next_req: request ids.
 * @refs: locks and requests alive; rdlock_dlm_close() waits for 0.
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
 * @local_wq: woken when none is left, when one is taken, and by a cancel.
 * @unpublished: those whose take has not started, oldest first
 *	(rdlock_dlm_lkb.local_node).
 * @parked: EX unlocks whose release waits for @local_takes to be 0
 *	(rdlock_dlm_req.park_node).
 * @forcing: every LOCAL take was started for a waiter; until none is
 *	left, LOCAL requests are granted once taken, as any other.
 * @age_work: starts the takes of locks @unpublished for longer than
 *	rdlock_dlm_local_defer_ms.
 */
struct rdlock_dlm_ls {
	struct list_head list;
	char name[RDLOCK_LS_NAME_MAX];
	struct rdlock_ls *ls;
	const struct rdlock_dlm_ops *ops;
	void *ops_arg;
	spinlock_t lock;		/* see above */
	struct idr lkids;
	DECLARE_HASHTABLE(res, 8);
	struct list_head notices;
	struct list_head waits;
	struct mutex notice_mutex;	/* see above */
	u64 next_req;
	atomic_t refs;
	unsigned long trim_homes;	/* RDLOCK_MAX_NODES bits */
	struct work_struct trim_work;
	unsigned long repeat_nodes;	/* RDLOCK_MAX_NODES bits */
	struct work_struct repeat_work;
	unsigned int hold_ms;
	unsigned int hold_max_ms;
	unsigned int local_takes;
	wait_queue_head_t local_wq;
	struct list_head unpublished;
	struct list_head parked;
	bool forcing;
	struct delayed_work age_work;
};

static DEFINE_MUTEX(rdlock_dlm_mutex);	/* rdlock_dlm_list */
static LIST_HEAD(rdlock_dlm_list);
static struct workqueue_struct *rdlock_dlm_wq;		/* requests */
static struct workqueue_struct *rdlock_dlm_cb_wq;	/* callbacks */
/* LOCAL takes: requests on rdlock_dlm_wq may wait for them. */
static struct workqueue_struct *rdlock_dlm_local_wq;

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
	RDLOCK_DLM_ST_KNOWN,		/* waits remembered now (a gauge) */
	RDLOCK_DLM_ST_BAST_HELD,	/* BASTs held back for a hold time */
	RDLOCK_DLM_ST_HOLD_RAISED,	/* a lock's hold time doubled */
	RDLOCK_DLM_ST_POLL_WAIT,	/* a waiting take slept until a kick or poll */
	RDLOCK_DLM_ST_KICK_SENT,	/* kicks to known waiters */
	RDLOCK_DLM_ST_KICKED,		/* kicks that reached a waiting take */
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
	[RDLOCK_DLM_ST_KNOWN] = "waits_known",
	[RDLOCK_DLM_ST_BAST_HELD] = "basts_held",
	[RDLOCK_DLM_ST_HOLD_RAISED] = "holds_raised",
	[RDLOCK_DLM_ST_POLL_WAIT] = "poll_waits",
	[RDLOCK_DLM_ST_KICK_SENT] = "kicks_sent",
	[RDLOCK_DLM_ST_KICKED] = "kicks",
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

static atomic64_t rdlock_dlm_st[RDLOCK_DLM_ST_NR];
/* Fault injection for tests: ms each done notice waits before it goes. */
static u32 rdlock_dlm_inject_done_delay_ms;
/*
 * For tests: a waiting take polls every this many ms instead of after a
 * back-off, so that only a kick or a cancel ends its wait sooner.
 */
static u32 rdlock_dlm_inject_poll_ms;
/* Fault injection for tests: ms a LOCAL lock's take waits before it starts. */
static u32 rdlock_dlm_inject_local_delay_ms;
static atomic64_t rdlock_dlm_st_req[4][4];	/* [from + 1][to + 1] */

static void rdlock_dlm_count(int st, s64 n)
{
	atomic64_add(n, &rdlock_dlm_st[st]);
}

/* One more @st, and the time since @t0 added to @ns_st. */
static void rdlock_dlm_count_since(int st, int ns_st, ktime_t t0)
{
	rdlock_dlm_count(st, 1);
	rdlock_dlm_count(ns_st, ktime_to_ns(ktime_sub(ktime_get(), t0)));
}

static int rdlock_dlm_mode_idx(int mode)
{
	switch (mode) {
	case RDLOCK_DLM_LOCK_NL:
		return 1;
	case RDLOCK_DLM_LOCK_PR:
		return 2;
	case RDLOCK_DLM_LOCK_EX:
		return 3;
	default:
		return 0;
	}
}

static bool rdlock_dlm_conflict(int a, int b)
{
	if (a <= RDLOCK_DLM_LOCK_NL || b <= RDLOCK_DLM_LOCK_NL)
		return false;
	return a == RDLOCK_DLM_LOCK_EX || b == RDLOCK_DLM_LOCK_EX;
}

static void rdlock_dlm_put(struct rdlock_dlm_ls *dls)
{
	/* rdlock_dlm_close() may free @dls at 0: the wait queue is hashed. */
	if (atomic_dec_and_test(&dls->refs))
		wake_up_var(&dls->refs);
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                          */

/*
 * @lkb's hold time now, in ms. @hold_shift only grows while below the
 * maximum (at most 1000 ms), so it stays below 11. Caller holds dls->lock.
 */
static unsigned int rdlock_dlm_hold_of(const struct rdlock_dlm_lkb *lkb)
{
	return min(READ_ONCE(lkb->dls->hold_ms) << lkb->hold_shift,
		   READ_ONCE(lkb->dls->hold_max_ms));
}

/*
 * A grant of @req raises @lkb's mode: adapt the lock's hold time, as
 * GFS2 adapts a glock's. The lock bounces when this node, asked to give
 * it up (a BAST) less than RDLOCK_DLM_BOUNCE_MS before, asks for it again
 * and waits for other nodes more than twice its hold time: the nodes
 * take turns at it, each wanting it again at once, and every hand-over
 * costs its holder a flush (OCFS2: a journal checkpoint); then the hold
 * time doubles, up to the lockspace's maximum, so that each turn does
 * more. A node that needs the lock once in a while (a directory's atime
 * after a listing) keeps the short hold however long it waited, and a
 * request that did not wait (nobody was in its way) brings the hold
 * back to the lockspace's. Caller holds dls->lock.
 */
static void rdlock_dlm_hold_adapt(struct rdlock_dlm_lkb *lkb,
				  const struct rdlock_dlm_req *req)
{
	unsigned int ms = rdlock_dlm_hold_of(lkb);

	lockdep_assert_held(&lkb->dls->lock);
	if (!req->noticed) {
		lkb->hold_shift = 0;
		return;
	}
	if (ms && ms < READ_ONCE(lkb->dls->hold_max_ms) && lkb->basted &&
	    ktime_ms_delta(req->start, lkb->basted) < RDLOCK_DLM_BOUNCE_MS &&
	    ktime_ms_delta(ktime_get(), req->start) > 2 * (s64)ms) {
		lkb->hold_shift++;
		rdlock_dlm_count(RDLOCK_DLM_ST_HOLD_RAISED, 1);
	}
}

/*
 * The BAST at the head of @lkb's callbacks, the only one queued, waits
 * for the end of the lock's hold time: run the work again then. Caller
 * holds dls->lock.
 */
static bool rdlock_dlm_hold_bast(struct rdlock_dlm_lkb *lkb)
{
	ktime_t until = ktime_add_ms(lkb->granted, rdlock_dlm_hold_of(lkb));
	ktime_t now = ktime_get();

	lockdep_assert_held(&lkb->dls->lock);
	if (!ktime_before(now, until))
		return false;
	if (!lkb->bast_held) {
		lkb->bast_held = true;
		rdlock_dlm_count(RDLOCK_DLM_ST_BAST_HELD, 1);
	}
	queue_delayed_work(rdlock_dlm_cb_wq, &lkb->cb_work,
			   nsecs_to_jiffies(ktime_to_ns(ktime_sub(until, now))) +
			   1);
	return true;
}

static void rdlock_dlm_cb_work(struct work_struct *work)
{
	struct rdlock_dlm_lkb *lkb = container_of(to_delayed_work(work),
						  struct rdlock_dlm_lkb,
						  cb_work);
	struct rdlock_dlm_ls *dls = lkb->dls;
	struct rdlock_dlm_cb cb;
	unsigned int hold_ms;
	unsigned long flags;
	int grmode;

	for (;;) {
		spin_lock_irqsave(&dls->lock, flags);
		if (!lkb->nr_cbs) {
			spin_unlock_irqrestore(&dls->lock, flags);
			return;
		}
		cb = lkb->cbs[lkb->cb_head];
		if (cb.type == RDLOCK_DLM_CB_BAST && lkb->nr_cbs == 1 &&
		    rdlock_dlm_hold_bast(lkb)) {
			spin_unlock_irqrestore(&dls->lock, flags);
			return;
		}
		lkb->cb_head = (lkb->cb_head + 1) % RDLOCK_DLM_CBS;
		lkb->nr_cbs--;
		if (cb.type == RDLOCK_DLM_CB_BAST) {
			lkb->basted = ktime_get();
			lkb->bast_held = false;
		}
		grmode = lkb->grmode;
		hold_ms = rdlock_dlm_hold_of(lkb);
		spin_unlock_irqrestore(&dls->lock, flags);

		if (cb.type == RDLOCK_DLM_CB_BAST) {
			trace_rdlock_dlm_bast(dls->name, lkb->hash, lkb->lkid,
					      grmode, cb.val, hold_ms);
			lkb->bast(lkb->astarg, cb.val);
			continue;
		}
		trace_rdlock_dlm_ast(dls->name, lkb->hash, lkb->lkid, grmode,
				     cb.val, hold_ms);
		rdlock_dlm_count(RDLOCK_DLM_ST_NS_AST,
				 ktime_to_ns(ktime_sub(ktime_get(), cb.queued)));
		lkb->lksb->sb_status = cb.val;
		lkb->lksb->sb_flags = cb.sb_flags;
		if (cb.hold)
			lkb->granted = ktime_get();
		lkb->ast(lkb->astarg);
		if (cb.final) {
			/*
			 * Queued last: nothing else refers to @lkb now but a
			 * run of this work that its queueing, while this one
			 * ran, may have left pending.
			 */
			cancel_delayed_work(&lkb->cb_work);
			kfree(lkb);
			rdlock_dlm_put(dls);
			return;
		}
	}
}

/*
 * Queue a callback; caller holds dls->lock. @final: @lkb's last; @hold:
 * an AST of a grant that raised the mode.
 */
static void rdlock_dlm_queue_cb(struct rdlock_dlm_lkb *lkb, u8 type, int val,
				u8 sb_flags, bool final, bool hold)
{
	struct rdlock_dlm_cb *tail;

	lockdep_assert_held(&lkb->dls->lock);
	if (type == RDLOCK_DLM_CB_BAST) {
		if (!lkb->bast || lkb->dead)
			return;
		tail = lkb->nr_cbs ? &lkb->cbs[(lkb->cb_head + lkb->nr_cbs - 1) %
					       RDLOCK_DLM_CBS] : NULL;
		/* Two BASTs in a row say nothing the stronger does not. */
		if (tail && tail->type == RDLOCK_DLM_CB_BAST) {
			tail->val = max(tail->val, val);
			return;
		}
	}
	/* At most one AST per request and BASTs coalesced: cannot fill. */
	if (WARN_ON_ONCE(lkb->nr_cbs == RDLOCK_DLM_CBS))
		return;
	lkb->cbs[(lkb->cb_head + lkb->nr_cbs) % RDLOCK_DLM_CBS] =
		(struct rdlock_dlm_cb){ .type = type, .val = val,
					.sb_flags = sb_flags, .final = final,
					.hold = hold, .queued = ktime_get() };
	lkb->nr_cbs++;
	if (final)
		lkb->dead = true;
	/* A BAST held back goes now, in order, before this AST. */
	mod_delayed_work(rdlock_dlm_cb_wq, &lkb->cb_work, 0);
}

/*
 * @lkb is granted a higher mode: the BASTs still queued for it were
 * owed to its old mode. Delivered before the grant's AST, they would end
 * its hold time at once (dlmglue gives back a lock granted with a BAST
 * pending as soon as its users are done): a node that gave a lock back
 * and took it again before the waiter it gave way to got it would hold
 * it for one operation and one journal flush. They go instead: the
 * waits they were for that are still known give the new mode its BASTs
 * after the AST (rdlock_dlm_bast_known()), held like any other; a wait
 * that is over needs none. Caller holds dls->lock.
 */
static void rdlock_dlm_drop_basts(struct rdlock_dlm_lkb *lkb)
{
	unsigned int i, n = 0;

	lockdep_assert_held(&lkb->dls->lock);
	for (i = 0; i < lkb->nr_cbs; i++) {
		struct rdlock_dlm_cb *cb = &lkb->cbs[(lkb->cb_head + i) %
						     RDLOCK_DLM_CBS];

		if (cb->type != RDLOCK_DLM_CB_BAST)
			lkb->cbs[(lkb->cb_head + n++) % RDLOCK_DLM_CBS] = *cb;
	}
	lkb->nr_cbs = n;
	lkb->bast_held = false;
}

/* BASTs that @lkb, granted @mode now, owes to waiters already known. */
static void rdlock_dlm_bast_known(struct rdlock_dlm_lkb *lkb)
{
	struct rdlock_dlm_ls *dls = lkb->dls;
	u32 self = rdlock_xport_self();
	struct rdlock_dlm_notice *n;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(n, &dls->notices, node) {
		if (n->hash != lkb->res->hash ||
		    (n->src == self && n->lkid == lkb->lkid))
			continue;
		if (rdlock_dlm_conflict(n->mode, lkb->grmode))
			rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_BAST, n->mode, 0,
					    false, false);
	}
}

/* ------------------------------------------------------------------ */
/* Resources and notices                                              */

static u64 rdlock_dlm_hash(const void *name, unsigned int len)
{
	return siphash(name, len, &rdlock_dlm_key);
}

static struct rdlock_dlm_res *rdlock_dlm_res_find(struct rdlock_dlm_ls *dls,
						  u64 hash, const void *name,
						  unsigned int len)
{
	struct rdlock_dlm_res *res;

	hash_for_each_possible(dls->res, res, hnode, hash)
		if (res->hash == hash && res->len == len &&
		    !memcmp(res->name, name, len))
			return res;
	return NULL;
}

static void rdlock_dlm_res_put(struct rdlock_dlm_ls *dls,
			       struct rdlock_dlm_res *res)
{
	unsigned long flags;

	spin_lock_irqsave(&dls->lock, flags);
	if (--res->refs) {
		res = NULL;
	} else {
		WARN_ON(!list_empty(&res->locks));
		hash_del(&res->hnode);
	}
	spin_unlock_irqrestore(&dls->lock, flags);
	kfree(res);
}

/*
 * The wait notices of request @req of node @src are over; @req 0 (ids
 * start at 1): every wait of @src, which opened the lockspace (it has no
 * request yet) or is about to send all of its waits again.
 */
static void rdlock_dlm_forget_wait(struct rdlock_dlm_ls *dls, u32 src, u64 req)
{
	struct rdlock_dlm_notice *n, *tmp;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry_safe(n, tmp, &dls->notices, node) {
		if (n->src == src && (!req || n->req == req)) {
			list_del(&n->node);
			kfree(n);
			rdlock_dlm_count(RDLOCK_DLM_ST_KNOWN, -1);
		}
	}
}

/*
 * This node's request @id still waits for its lock: not cancelled, and its
 * done notice not sent. A cancel forgets the request's wait here at once;
 * its own wait notice, delivered here last, must not bring it back.
 */
static bool rdlock_dlm_wait_live(struct rdlock_dlm_ls *dls, u64 id)
{
	struct rdlock_dlm_req *req;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(req, &dls->waits, wait_node)
		if (req->id == id)
			return req->lkb;
	return false;
}

/*
 * A node gave back a hold that this node's request @id may wait for: it
 * tries again now. Caller holds dls->lock.
 */
static void rdlock_dlm_kicked(struct rdlock_dlm_ls *dls, u64 id)
{
	struct rdlock_dlm_req *req;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(req, &dls->waits, wait_node) {
		if (req->id == id) {
			WRITE_ONCE(req->kicks, req->kicks + 1);
			wake_up(&req->kick_wq);
			rdlock_dlm_count(RDLOCK_DLM_ST_KICKED, 1);
			return;
		}
	}
}

/* Is a request known to wait for resource @hash? Caller holds dls->lock. */
static bool rdlock_dlm_res_waited(struct rdlock_dlm_ls *dls, u64 hash)
{
	struct rdlock_dlm_notice *n;

	lockdep_assert_held(&dls->lock);
	list_for_each_entry(n, &dls->notices, node)
		if (n->hash == hash)
			return true;
	return false;
}

/* Start unpublished @lkb's take; caller holds dls->lock. */
static void rdlock_dlm_local_publish(struct rdlock_dlm_lkb *lkb)
{
	lockdep_assert_held(&lkb->dls->lock);
	list_del_init(&lkb->local_node);
	queue_work(rdlock_dlm_local_wq, &lkb->local_req->work);
	lkb->local_req = NULL;
}

/*
 * Something waits for the LOCAL takes (a down-conversion from EX, a
 * request for words a parked release holds): start them all now, and
 * grant no lock early until none is left, or a stream of new ones could
 * keep the wait going. Caller holds dls->lock.
 */
static void rdlock_dlm_local_force(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_lkb *lkb, *tmp;

	lockdep_assert_held(&dls->lock);
	if (!dls->local_takes)
		return;
	if (!dls->forcing)
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_FORCED, 1);
	dls->forcing = true;
	list_for_each_entry_safe(lkb, tmp, &dls->unpublished, local_node)
		rdlock_dlm_local_publish(lkb);
}

/*
 * A LOCAL lock's words are taken, or it was unlocked without them: with
 * none left, the parked EX releases go. Caller holds dls->lock.
 */
static void rdlock_dlm_local_ended(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_req *req, *tmp;

	lockdep_assert_held(&dls->lock);
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_TAKES, -1);
	wake_up_all(&dls->local_wq);
	if (--dls->local_takes)
		return;
	dls->forcing = false;
	list_for_each_entry_safe(req, tmp, &dls->parked, park_node) {
		list_del_init(&req->park_node);
		queue_work(rdlock_dlm_wq, &req->release_work);
	}
}

/* Send @node our waits again; sending may sleep: not from softirq. */
static void rdlock_dlm_repeat_to(struct rdlock_dlm_ls *dls, u32 node)
{
	set_bit(node, &dls->repeat_nodes);
	queue_work(rdlock_dlm_wq, &dls->repeat_work);
}

/* The transport connected to @node (again): it may have lost notices. */
static void rdlock_dlm_node_up(void *arg, u32 node)
{
	struct rdlock_dlm_ls *dls = arg;

	if (node >= RDLOCK_MAX_NODES)
		return;
	rdlock_dlm_count(RDLOCK_DLM_ST_RECONNECT, 1);
	rdlock_dlm_repeat_to(dls, node);
}

/*
 * @node was declared down: before anything it held here is released
 * (rdlock_ls_node_down()), the user's recovery hears of it, and its waits
 * are over (no done notice will come from it).
 */
static void rdlock_dlm_node_down(void *arg, u32 node)
{
	struct rdlock_dlm_ls *dls = arg;
	unsigned long flags;

	if (node >= RDLOCK_MAX_NODES)
		return;
	spin_lock_irqsave(&dls->lock, flags);
	rdlock_dlm_forget_wait(dls, node, 0);
	spin_unlock_irqrestore(&dls->lock, flags);
	rdlock_dlm_count(RDLOCK_DLM_ST_NODE_DOWN, 1);
	if (dls->ops && dls->ops->node_down)
		dls->ops->node_down(dls->ops_arg, node);
}

static void rdlock_dlm_notice(void *arg, u32 src, const void *payload,
			      size_t len)
{
	const struct rdlock_dlm_notice_msg *m = payload;
	struct rdlock_dlm_ls *dls = arg;
	struct rdlock_dlm_notice *n;
	struct rdlock_dlm_lkb *lkb;
	struct rdlock_dlm_res *res;
	u32 self = rdlock_xport_self();
	u64 hash, req;
	u32 lkid;
	int mode;

	if (len < sizeof(*m))
		return;
	hash = le64_to_cpu(m->hash);
	req = le64_to_cpu(m->req);
	lkid = le32_to_cpu(m->lkid);
	mode = m->mode;

	/* Softirq or the sender's context: the caller disabled interrupts. */
	spin_lock(&dls->lock);
	if (m->kind == RDLOCK_DLM_NOTICE_DONE) {
		rdlock_dlm_forget_wait(dls, src, req);
		spin_unlock(&dls->lock);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_KICK) {
		rdlock_dlm_kicked(dls, req);
		spin_unlock(&dls->lock);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_ROOM) {
		u32 home = le16_to_cpu(m->home);

		spin_unlock(&dls->lock);
		if (home >= RDLOCK_MAX_NODES)
			return;
		/* Forgetting takes remote operations: not in softirq. */
		rdlock_dlm_count(RDLOCK_DLM_ST_TRIM, 1);
		set_bit(home, &dls->trim_homes);
		queue_work(rdlock_dlm_wq, &dls->trim_work);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_REPEAT) {
		if (src != self)
			rdlock_dlm_forget_wait(dls, src, 0);
		spin_unlock(&dls->lock);
		return;
	}
	if (m->kind == RDLOCK_DLM_NOTICE_HELLO) {
		if (src == self || src >= RDLOCK_MAX_NODES) {
			spin_unlock(&dls->lock);
			return;
		}
		/* What it sent before it (re)opened is over. */
		rdlock_dlm_forget_wait(dls, src, 0);
		spin_unlock(&dls->lock);
		rdlock_dlm_count(RDLOCK_DLM_ST_HELLO, 1);
		rdlock_dlm_repeat_to(dls, src);
		return;
	}
	if (m->kind != RDLOCK_DLM_NOTICE_WAIT ||
	    (src == self && !rdlock_dlm_wait_live(dls, req))) {
		spin_unlock(&dls->lock);
		return;
	}
	hash_for_each_possible(dls->res, res, hnode, hash) {
		if (res->hash != hash)
			continue;
		/* It may wait for words a parked release holds. */
		if (res->parked)
			rdlock_dlm_local_force(dls);
		list_for_each_entry(lkb, &res->locks, res_node) {
			if (src == self && lkb->lkid == lkid)
				continue;
			if (rdlock_dlm_conflict(mode, lkb->grmode))
				rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_BAST,
						    mode, 0, false, false);
		}
	}
	/*
	 * Without memory a holder granted later misses its BAST; the ones
	 * granted now have theirs.
	 */
	n = kzalloc(sizeof(*n), GFP_ATOMIC);
	if (n) {
		n->src = src;
		n->lkid = lkid;
		n->hash = hash;
		n->req = req;
		n->mode = mode;
		list_add_tail(&n->node, &dls->notices);
		rdlock_dlm_count(RDLOCK_DLM_ST_KNOWN, 1);
	} else {
		pr_warn_ratelimited("no memory to remember a blocking notice\n");
	}
	spin_unlock(&dls->lock);
}

/* Send @m to every node (@to U32_MAX) or to node @to. */
static void rdlock_dlm_send_msg(struct rdlock_dlm_ls *dls,
				const struct rdlock_dlm_notice_msg *m, u32 to)
{
	ktime_t t0 = ktime_get();
	int ret;

	static_assert(sizeof(*m) <= RDLOCK_LS_NOTICE_MAX);
	if (to == U32_MAX)
		ret = rdlock_ls_notice_send(dls->ls, m, sizeof(*m));
	else
		ret = rdlock_ls_notice_send_to(dls->ls, to, m, sizeof(*m));
	rdlock_dlm_count_since(m->kind == RDLOCK_DLM_NOTICE_KICK ?
			       RDLOCK_DLM_ST_KICK_SENT : RDLOCK_DLM_ST_NOTICE,
			       RDLOCK_DLM_ST_NS_NOTICE, t0);
	/* A node not connected has no holder we could wait for now. */
	if (ret && ret != -ENOTCONN)
		pr_warn_ratelimited("blocking notice not sent to every node: %d\n",
				    ret);
}

static void rdlock_dlm_msg_fill(struct rdlock_dlm_req *req, u8 kind,
				int mode, u32 home,
				struct rdlock_dlm_notice_msg *m)
{
	*m = (struct rdlock_dlm_notice_msg){
		.kind = kind,
		.mode = mode,
		.home = cpu_to_le16(home),
		.lkid = cpu_to_le32(req->lkid),
		.hash = cpu_to_le64(req->res->hash),
		.req = cpu_to_le64(req->id),
	};
}

static void rdlock_dlm_send_notice(struct rdlock_dlm_req *req, u8 kind,
				   int mode, u32 home)
{
	struct rdlock_dlm_notice_msg m;

	rdlock_dlm_msg_fill(req, kind, mode, home, &m);
	rdlock_dlm_send_msg(req->dls, &m, U32_MAX);
}

/*
 * @req is about to wait: its wait notice goes to every node. It is on
 * dls->waits before it is sent, so that a node whose hello comes while it
 * is being sent (and that may have dropped it, not having the lockspace
 * open yet) is sent it again by rdlock_dlm_repeat_work().
 */
static void rdlock_dlm_notice_wait(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = req->dls;
	unsigned long flags;

	spin_lock_irqsave(&dls->lock, flags);
	req->noticed = true;
	list_add_tail(&req->wait_node, &dls->waits);
	spin_unlock_irqrestore(&dls->lock, flags);
	rdlock_dlm_send_notice(req, RDLOCK_DLM_NOTICE_WAIT, req->to, 0);
}

/*
 * @req's wait is over: the done notice, after any repeat of the wait's
 * (none if it never waited).
 */
static void rdlock_dlm_notice_done(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = req->dls;
	unsigned long flags;

	if (!req->noticed)
		return;
	mutex_lock(&dls->notice_mutex);
	if (READ_ONCE(rdlock_dlm_inject_done_delay_ms))
		msleep(READ_ONCE(rdlock_dlm_inject_done_delay_ms));
	spin_lock_irqsave(&dls->lock, flags);
	list_del(&req->wait_node);
	spin_unlock_irqrestore(&dls->lock, flags);
	rdlock_dlm_send_notice(req, RDLOCK_DLM_NOTICE_DONE, req->to, 0);
	mutex_unlock(&dls->notice_mutex);
}

/*
 * @req gave back a hold on its resource: every request known to wait for
 * the resource (its wait notice came, its done notice not yet) is kicked,
 * so that it tries again now instead of at its next poll. A kick is a
 * hint: one lost, or one that comes before the release reached a third
 * node's table, costs a poll's delay. This node's waiters are kicked
 * here; beyond RDLOCK_DLM_KICKS_MAX other nodes' ones poll.
 */
static void rdlock_dlm_kick_waiters(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_notice_msg m[RDLOCK_DLM_KICKS_MAX];
	u32 to[RDLOCK_DLM_KICKS_MAX], self = rdlock_xport_self();
	struct rdlock_dlm_ls *dls = req->dls;
	struct rdlock_dlm_notice *n;
	unsigned int i, nr = 0;
	unsigned long flags;

	spin_lock_irqsave(&dls->lock, flags);
	list_for_each_entry(n, &dls->notices, node) {
		if (n->hash != req->res->hash ||
		    (n->src == self && n->req == req->id))
			continue;
		if (n->src == self) {
			rdlock_dlm_kicked(dls, n->req);
			continue;
		}
		if (nr == RDLOCK_DLM_KICKS_MAX)
			continue;
		to[nr] = n->src;
		m[nr++] = (struct rdlock_dlm_notice_msg){
			.kind = RDLOCK_DLM_NOTICE_KICK,
			.mode = n->mode,
			.lkid = cpu_to_le32(n->lkid),
			.hash = cpu_to_le64(n->hash),
			.req = cpu_to_le64(n->req),
		};
	}
	spin_unlock_irqrestore(&dls->lock, flags);
	for (i = 0; i < nr; i++)
		rdlock_dlm_send_msg(dls, &m[i], to[i]);
}

/*
 * Nodes that opened the lockspace after some of our requests' wait
 * notices went out dropped them (no receiver yet), and a node connected
 * again may have lost any notice sent to it meanwhile or on the failed
 * connection: a holder it grants would never get its BAST, or a wait
 * that is over would give its holders BASTs for good. Send each of them
 * a repeat notice (it forgets our waits) and then the notices of the
 * requests still waiting, under notice_mutex: a request's done notice
 * cannot overtake its repeated wait notice (the connection to a node is
 * ordered), which would leave that node a wait that is over for good.
 */
static void rdlock_dlm_repeat_work(struct work_struct *work)
{
	struct rdlock_dlm_ls *dls = container_of(work, struct rdlock_dlm_ls,
						 repeat_work);
	struct rdlock_dlm_notice_msg m;
	struct rdlock_dlm_req *req;
	unsigned long flags;
	u64 last, next;
	u32 node;

	mutex_lock(&dls->notice_mutex);
	for (node = 0; node < RDLOCK_MAX_NODES; node++) {
		if (!test_and_clear_bit(node, &dls->repeat_nodes))
			continue;
		rdlock_dlm_send_msg(dls, &(struct rdlock_dlm_notice_msg){
					.kind = RDLOCK_DLM_NOTICE_REPEAT }, node);
		/* In request order (ids from 1), one at a time: sends sleep. */
		for (last = 0;; last = next) {
			next = 0;
			spin_lock_irqsave(&dls->lock, flags);
			list_for_each_entry(req, &dls->waits, wait_node) {
				if (req->id <= last || (next && req->id > next))
					continue;
				next = req->id;
				rdlock_dlm_msg_fill(req, RDLOCK_DLM_NOTICE_WAIT,
						    req->to, 0, &m);
			}
			spin_unlock_irqrestore(&dls->lock, flags);
			if (!next)
				break;
			rdlock_dlm_count(RDLOCK_DLM_ST_REWAIT, 1);
			rdlock_dlm_send_msg(dls, &m, node);
		}
	}
	mutex_unlock(&dls->notice_mutex);
}

/* ------------------------------------------------------------------ */
/* Requests                                                           */

static enum rdlock_lock_mode rdlock_dlm_rdmode(int mode)
{
	return mode == RDLOCK_DLM_LOCK_EX ? RDLOCK_LOCK_EX : RDLOCK_LOCK_SH;
}

/*
 * A take that may wait found no free entry for its name on the name's
 * home (-ENOSPC: every entry it may use is held by names that some node
 * holds or keeps cached). Failing would be wrong: fs/dlm queues such a
 * request, and OCFS2 leaves a lock whose AST reports an error busy for
 * good, so that its next user hangs. Instead every node is asked to
 * forget the names homed on @home (the full node) it does not use now
 * (this one's included), which frees their entries once no node uses
 * them; names homed elsewhere stay cached. The take is tried
 * again after a back-off (@ms, NULL for a NOQUEUE take: "not now"), until
 * it gets room or the request is cancelled.
 * Return: 0 to try again, -EAGAIN (NOQUEUE) or -ECANCELED.
 */
static int rdlock_dlm_room(struct rdlock_dlm_req *req, u32 home,
			   unsigned int *ms)
{
	unsigned long flags;
	s64 waited_ms;
	bool live;

	rdlock_dlm_count(RDLOCK_DLM_ST_ROOM_WAIT, 1);
	rdlock_dlm_send_notice(req, RDLOCK_DLM_NOTICE_ROOM, req->to, home);
	if (!ms)
		return -EAGAIN;
	/* Names in use fill the home: only an admin can make room. */
	waited_ms = ktime_ms_delta(ktime_get(), req->start);
	if (!req->room_warned && waited_ms > RDLOCK_DLM_ROOM_WARN_MS) {
		req->room_warned = true;
		pr_warn_ratelimited("%s: a request waits for a free name entry on node %u since %lld ms: the lockspace is full of names in use (module parameter dlm_slots, %u)\n",
				    req->dls->name, home, waited_ms,
				    READ_ONCE(rdlock_dlm_slots));
	}
	*ms = clamp_t(unsigned int, *ms * 2, RDLOCK_DLM_ROOM_MS_MIN,
		      RDLOCK_DLM_ROOM_MS_MAX);
	msleep(*ms);
	spin_lock_irqsave(&req->dls->lock, flags);
	live = req->lkb;
	spin_unlock_irqrestore(&req->dls->lock, flags);
	return live ? 0 : -ECANCELED;
}

/*
 * One try at @name (@flags: RDLOCK_LKF_GATE or 0) for @req, in @mode. A
 * main word's grant for a VALBLK request reads the value block with it
 * (rdlock_dlm_lvb_grant() then costs no round trip).
 */
static struct rdlock_lock *rdlock_dlm_try(struct rdlock_dlm_req *req,
					  const u8 *name, int mode, u32 flags)
{
	if (!(flags & RDLOCK_LKF_GATE) &&
	    req->flags & RDLOCK_DLM_LKF_VALBLK)
		flags |= RDLOCK_LKF_LVB;
	return rdlock_lock(req->dls->ls, name, req->res->len + 1,
			   rdlock_dlm_rdmode(mode),
			   &(struct rdlock_lock_opts){
				.flags = flags | RDLOCK_LKF_TRY });
}

/*
 * Take @name (@flags: RDLOCK_LKF_GATE or 0) for @req, waiting for it:
 * tries, each one CAS, until one gets it, the request is cancelled or a
 * try fails for another reason than a busy word or a link that is down.
 * Between tries the request sleeps until a kick (a holder gave the
 * resource back), a cancel, or a random back-off up to twice the last
 * (RDLOCK_DLM_POLL_US_*; a kick starts it again at the minimum, since the
 * release may not have reached the word's home yet). The lock protocols'
 * own waits cannot be cut short: a cancelled request would wait on for a
 * lock it then gives back at once.
 */
static struct rdlock_lock *rdlock_dlm_wait_take(struct rdlock_dlm_req *req,
						const u8 *name, int mode,
						u32 flags)
{
	unsigned int poll_us = RDLOCK_DLM_POLL_US_MIN, kicks, fixed_ms;
	struct rdlock_lock *lk;
	u64 ns;

	for (;;) {
		kicks = READ_ONCE(req->kicks);
		lk = rdlock_dlm_try(req, name, mode, flags);
		/*
		 * -EAGAIN: too many abandoned tries still finishing;
		 * -ENOTCONN: refused unsent, the home's link is down for
		 * now (a blocking acquisition waits through that too).
		 */
		if (!IS_ERR(lk) ||
		    (PTR_ERR(lk) != -EBUSY && PTR_ERR(lk) != -EAGAIN &&
		     PTR_ERR(lk) != -ENOTCONN))
			return lk;
		if (!READ_ONCE(req->lkb))
			return ERR_PTR(-ECANCELED);
		fixed_ms = READ_ONCE(rdlock_dlm_inject_poll_ms);
		ns = fixed_ms ? (u64)fixed_ms * NSEC_PER_MSEC :
			(u64)(get_random_u32() % poll_us + 1) * NSEC_PER_USEC;
		rdlock_dlm_count(RDLOCK_DLM_ST_POLL_WAIT, 1);
		wait_event_hrtimeout(req->kick_wq,
				     READ_ONCE(req->kicks) != kicks ||
				     !READ_ONCE(req->lkb), ns_to_ktime(ns));
		if (READ_ONCE(req->kicks) != kicks)
			poll_us = RDLOCK_DLM_POLL_US_MIN;
		else
			poll_us = min(2 * poll_us, RDLOCK_DLM_POLL_US_MAX);
		if (!READ_ONCE(req->lkb))
			return ERR_PTR(-ECANCELED);
	}
}

/*
 * Take the main (@gate false) or gate word of @req's resource, sending
 * the request's blocking notice first unless @noqueue or @quiet (a take
 * that cannot wait for anybody).
 */
static int __rdlock_dlm_take(struct rdlock_dlm_req *req, bool gate,
			     int mode, bool noqueue, bool quiet,
			     struct rdlock_lock **out)
{
	u32 word = gate ? RDLOCK_LKF_GATE : 0;
	u8 name[RDLOCK_RES_NAME_MAX];
	unsigned int room_ms = 0;
	struct rdlock_lock *lk;
	ktime_t t0;
	int ret;

	static_assert(RDLOCK_DLM_RESNAME_MAX + 1 <= RDLOCK_RES_NAME_MAX);
	name[0] = 'M';
	memcpy(name + 1, req->res->name, req->res->len);
	if (!noqueue)
		WRITE_ONCE(req->waiting, gate ? RDLOCK_DLM_WAIT_GATE :
						RDLOCK_DLM_WAIT_MAIN);
	t0 = ktime_get();
again:
	/*
	 * Before the request's first wait every holder in its way learns of
	 * it, whichever of its waits (gate, main word) it will be in. A try
	 * first: a request nobody is in the way of sends no notices (one to
	 * every node now, and the done notice after).
	 */
	if (!noqueue && !quiet && !req->noticed) {
		lk = rdlock_dlm_try(req, name, mode, word);
		if (!IS_ERR(lk))
			rdlock_dlm_count(RDLOCK_DLM_ST_TRY_OK, 1);
		if (!IS_ERR(lk) ||
		    (PTR_ERR(lk) != -EAGAIN && PTR_ERR(lk) != -EBUSY))
			goto took;
		rdlock_dlm_count(RDLOCK_DLM_ST_TRY_BUSY, 1);
		rdlock_dlm_notice_wait(req);
	}
	if (noqueue)
		lk = rdlock_dlm_try(req, name, mode, word);
	else
		lk = rdlock_dlm_wait_take(req, name, mode, word);
took:
	if (IS_ERR(lk) && PTR_ERR(lk) == -ENOSPC) {
		ret = rdlock_dlm_room(req, rdlock_ls_home(req->dls->ls, name,
							  req->res->len + 1),
				      noqueue ? NULL : &room_ms);
		if (!ret)
			goto again;
		lk = ERR_PTR(ret);
	}
	WRITE_ONCE(req->waiting, RDLOCK_DLM_WAIT_NONE);
	if (gate)
		rdlock_dlm_count_since(RDLOCK_DLM_ST_TAKE_GATE,
				       RDLOCK_DLM_ST_NS_GATE, t0);
	else
		rdlock_dlm_count_since(RDLOCK_DLM_ST_TAKE_MAIN,
				       RDLOCK_DLM_ST_NS_MAIN, t0);
	if (IS_ERR(lk)) {
		rdlock_dlm_count(RDLOCK_DLM_ST_TAKE_FAIL, 1);
		/* TRY: busy, or too many abandoned tries still finishing. */
		if (noqueue && (PTR_ERR(lk) == -EBUSY || PTR_ERR(lk) == -EAGAIN))
			return -EAGAIN;
		return PTR_ERR(lk);
	}
	*out = lk;
	return 0;
}

static int rdlock_dlm_take(struct rdlock_dlm_req *req, bool gate, int mode,
			   bool noqueue, struct rdlock_lock **out)
{
	return __rdlock_dlm_take(req, gate, mode, noqueue, false, out);
}

static void rdlock_dlm_drop(struct rdlock_dlm_req *req,
			    struct rdlock_lock **lk)
{
	ktime_t t0;

	if (*lk) {
		req->dropped = true;
		t0 = ktime_get();
		/*
		 * Posted when it can be (rdlock_unlock()): what this node does
		 * next on the name (a take, a value block READ) reaches the
		 * home after it; another node's take waits for it to land.
		 */
		rdlock_unlock(*lk);
		*lk = NULL;
		rdlock_dlm_count_since(RDLOCK_DLM_ST_DROP,
				       RDLOCK_DLM_ST_NS_DROP, t0);
	}
}

/*
 * Enter or leave a step a cancel may abandon. Returns false when the
 * request was cancelled meanwhile: it then owns nothing of its lock's.
 */
static bool rdlock_dlm_step(struct rdlock_dlm_req *req, bool cancellable)
{
	unsigned long flags;
	bool live;

	spin_lock_irqsave(&req->dls->lock, flags);
	live = req->lkb;
	req->cancellable = live && cancellable;
	spin_unlock_irqrestore(&req->dls->lock, flags);
	return live;
}

/*
 * Up-conversion or new lock to PR or EX. Returns 0 or the AST status; on
 * success @lkb's main (and gate) are set, on failure @lkb keeps what it
 * held in @from, or NL when it had to give it up and could not retake it.
 */
static int rdlock_dlm_up(struct rdlock_dlm_req *req, struct rdlock_dlm_lkb *lkb,
			 int *grmode)
{
	bool noqueue = req->flags & RDLOCK_DLM_LKF_NOQUEUE;
	struct rdlock_lock *again = NULL;
	int ret;

	if (req->to == RDLOCK_DLM_LOCK_NL)	/* a new lock at NL */
		return rdlock_dlm_step(req, false) ? 0 : -ECANCELED;
	if (!rdlock_dlm_step(req, !noqueue))
		return -ECANCELED;
	if (req->to == RDLOCK_DLM_LOCK_PR)
		return rdlock_dlm_take(req, false, RDLOCK_DLM_LOCK_PR, noqueue,
				       &req->main);

	/* EX: the gate first, so that nobody else gets EX from now on. */
	ret = rdlock_dlm_take(req, true, RDLOCK_DLM_LOCK_EX, noqueue,
			      &req->gate);
	if (ret)
		return ret;
	if (req->from != RDLOCK_DLM_LOCK_PR) {
		if (!rdlock_dlm_step(req, !noqueue))
			return -ECANCELED;
		return rdlock_dlm_take(req, false, RDLOCK_DLM_LOCK_EX, noqueue,
				       &req->main);
	}

	/*
	 * PR->EX: past this point the request is committed (a cancel finds
	 * it granted); it gives up the shared hold, which the gate keeps
	 * anybody else from turning into EX, and waits for EX.
	 */
	if (!rdlock_dlm_step(req, false))
		return -ECANCELED;
	rdlock_dlm_drop(req, &lkb->main);
	ret = rdlock_dlm_take(req, false, RDLOCK_DLM_LOCK_EX, noqueue,
			      &req->main);
	if (!ret)
		return 0;
	/*
	 * Back to PR. The gate is ours, so nobody holds or can get EX on
	 * the main word: with the CAS lock (a failed try leaves nothing
	 * behind) PR is granted at once.
	 */
	if (__rdlock_dlm_take(req, false, RDLOCK_DLM_LOCK_PR, false, true,
			      &again))
		*grmode = RDLOCK_DLM_LOCK_NL;
	else
		lkb->main = again;
	rdlock_dlm_drop(req, &req->gate);
	return ret;
}

static int rdlock_dlm_lvb_get(struct rdlock_lock *lk, void *buf, u32 *f)
{
	ktime_t t0 = ktime_get();
	int ret = rdlock_lvb_get(lk, buf, f);

	rdlock_dlm_count_since(RDLOCK_DLM_ST_LVB_GET, RDLOCK_DLM_ST_NS_LVB, t0);
	return ret;
}

static int rdlock_dlm_lvb_set(struct rdlock_lock *lk, const void *buf,
			      u8 words, u32 f)
{
	ktime_t t0 = ktime_get();
	int ret = rdlock_lvb_set_words(lk, buf, words, f);

	if (buf) {
		rdlock_dlm_count(RDLOCK_DLM_ST_LVB_WORDS, hweight8(words));
		rdlock_dlm_count(RDLOCK_DLM_ST_LVB_SPARED, 8 - hweight8(words));
	}
	rdlock_dlm_count_since(RDLOCK_DLM_ST_LVB_SET, RDLOCK_DLM_ST_NS_LVB, t0);
	return ret;
}

/*
 * @lkb goes below EX: with VALBLK store the caller's value block and mark
 * it VALID, writing only the words it changed (none, and nothing at all,
 * when it changed none of a valid block); without VALBLK leave the block
 * and its validity as they are. A failure leaves it not VALID: the next
 * reader is told the value may be stale, which it may be.
 */
static void rdlock_dlm_lvb_release(struct rdlock_dlm_req *req,
				   struct rdlock_dlm_lkb *lkb)
{
	const u8 *buf = lkb->lksb->sb_lvbptr;
	u8 words = 0xff;
	int ret, i;

	/* No main word: a LOCAL lock's take gave up (rdlock_dlm_local_work()). */
	if (!(req->flags & RDLOCK_DLM_LKF_VALBLK) || !lkb->main) {
		lkb->lvb_seen_ok = false;
		return;
	}
	if (lkb->lvb_seen_ok) {
		words = 0;
		for (i = 0; i < RDLOCK_DLM_LVB_LEN / 8; i++)
			if (memcmp(buf + 8 * i, lkb->lvb_seen + 8 * i, 8))
				words |= BIT(i);
	}
	lkb->lvb_seen_ok = false;
	if (!words && lkb->lvb_valid) {
		rdlock_dlm_count(RDLOCK_DLM_ST_LVB_SPARED, 8);
		return;
	}
	/*
	 * The state word's WRITE is posted: the release after it finds it
	 * done, and if it fails the block is not VALID, which is what a
	 * reader must be told then.
	 */
	ret = rdlock_dlm_lvb_set(lkb->main, buf, words,
				 RDLOCK_LVB_POST | RDLOCK_DLM_LVB_VALID);
	if (ret)
		pr_warn_ratelimited("value block not stored: %d\n", ret);
}

/*
 * A committed grant to PR or EX with VALBLK on @main: read the value
 * block. Without VALBLK nothing: the block is left as it is.
 */
static void rdlock_dlm_lvb_grant(struct rdlock_dlm_req *req,
				 struct rdlock_dlm_lkb *lkb,
				 struct rdlock_lock *main)
{
	u8 lvb[RDLOCK_DLM_LVB_LEN];
	u32 f = 0;
	int ret;

	lkb->lvb_seen_ok = false;
	if (!(req->flags & RDLOCK_DLM_LKF_VALBLK))
		return;
	ret = rdlock_dlm_lvb_get(main, lvb, &f);
	lkb->lvb_valid = !ret && (f & RDLOCK_DLM_LVB_VALID);
	lkb->lvb_seen_ok = !ret && req->to == RDLOCK_DLM_LOCK_EX;
	if (lkb->lvb_seen_ok)
		memcpy(lkb->lvb_seen, lvb, sizeof(lvb));
	/* Never stored for this name: zeroes, as fs/dlm gives. */
	if (!lkb->lvb_valid) {
		memset(lvb, 0, sizeof(lvb));
		req->sb_flags |= RDLOCK_DLM_SBF_VALNOTVALID;
	}
	memcpy(lkb->lksb->sb_lvbptr, lvb, sizeof(lvb));
}

/* Down-conversion or same mode: never waits for others. */
static int rdlock_dlm_down(struct rdlock_dlm_req *req,
			   struct rdlock_dlm_lkb *lkb, int *grmode)
{
	int ret = 0;

	rdlock_dlm_step(req, false);
	if (req->to == req->from)
		return 0;
	if (req->from == RDLOCK_DLM_LOCK_EX)
		rdlock_dlm_lvb_release(req, lkb);
	rdlock_dlm_drop(req, &lkb->main);
	if (req->to == RDLOCK_DLM_LOCK_PR) {
		/*
		 * EX->PR under the gate: no EX ticket but ours was in the
		 * word, so this is granted without waiting for anybody.
		 */
		ret = __rdlock_dlm_take(req, false, RDLOCK_DLM_LOCK_PR, false,
					true, &lkb->main);
		if (ret)
			*grmode = RDLOCK_DLM_LOCK_NL;
	}
	rdlock_dlm_drop(req, &lkb->gate);
	return ret;
}

static void rdlock_dlm_req_free(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = req->dls;

	rdlock_dlm_count(RDLOCK_DLM_ST_NS_REQ,
			 ktime_to_ns(ktime_sub(ktime_get(), req->start)));
	/* A cancel's gate release uses @req. */
	flush_work(&req->gate_work);
	rdlock_dlm_res_put(dls, req->res);
	kfree(req);
	rdlock_dlm_put(dls);
}

/*
 * Unlock @req's lock. An EX lock's words are given back only once no
 * LOCAL take of the lockspace is left (rdlock_dlm_wait_local() says why):
 * meanwhile @req keeps them, parked, and the caller has its AST at once,
 * for dlmglue waits for it before it drops the inode's next lock (a new
 * file's LOCAL lock, whose unlock would end the wait). Returns true when
 * parked: @req is not the caller's any more.
 */
static bool rdlock_dlm_unlock_work(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_lkb *lkb = req->lkb;
	struct rdlock_dlm_ls *dls = req->dls;
	struct rdlock_dlm_res *res = req->res;
	unsigned long flags;
	bool park = false;

	/* An unlock cannot be cancelled: it owns the lock now. */
	if (req->from == RDLOCK_DLM_LOCK_EX) {
		rdlock_dlm_lvb_release(req, lkb);
		spin_lock_irqsave(&dls->lock, flags);
		park = dls->local_takes && (lkb->main || lkb->gate);
		if (park) {
			/* Waiters known already send no notice to force it. */
			if (rdlock_dlm_res_waited(dls, res->hash))
				rdlock_dlm_local_force(dls);
			req->main = lkb->main;
			req->gate = lkb->gate;
			lkb->main = NULL;
			lkb->gate = NULL;
			res->parked++;
			list_add_tail(&req->park_node, &dls->parked);
			rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_PARKS, 1);
			rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_PARKED, 1);
		}
		spin_unlock_irqrestore(&dls->lock, flags);
	}
	if (!park) {
		rdlock_dlm_drop(req, &lkb->main);
		rdlock_dlm_drop(req, &lkb->gate);
	}
	spin_lock_irqsave(&dls->lock, flags);
	idr_remove(&dls->lkids, lkb->lkid);
	list_del_init(&lkb->res_node);
	lkb->req = NULL;
	rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, RDLOCK_DLM_EUNLOCK, 0, true,
			    false);
	spin_unlock_irqrestore(&dls->lock, flags);
	/* The lock's reference on the resource (a parked @req has its own). */
	rdlock_dlm_res_put(dls, res);
	return park;
}

/*
 * @req of a lock that exists ended with @ret, the lock now at @grmode: its
 * AST. Only EX grants are held: the CAS lock does not queue, so holds of
 * PR grants that other nodes keep getting would keep an EX waiter out for
 * as long as they come (a directory's readers against the node that
 * updates its atime). Caller holds dls->lock.
 */
static void rdlock_dlm_ast(struct rdlock_dlm_lkb *lkb,
			   const struct rdlock_dlm_req *req, int grmode, int ret)
{
	bool hold = grmode == RDLOCK_DLM_LOCK_EX && grmode > lkb->grmode;

	lockdep_assert_held(&lkb->dls->lock);
	if (hold)
		rdlock_dlm_hold_adapt(lkb, req);
	if (grmode > lkb->grmode)
		rdlock_dlm_drop_basts(lkb);
	rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, ret, ret ? 0 : req->sb_flags,
			    false, hold);
	lkb->grmode = grmode;
	if (!ret)
		rdlock_dlm_bast_known(lkb);
}

/*
 * Has another lock of @req's resource on this node been granted LOCAL
 * without its words yet? Caller holds dls->lock.
 */
static bool rdlock_dlm_res_local(const struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_lkb *o;

	lockdep_assert_held(&req->dls->lock);
	list_for_each_entry(o, &req->res->locks, res_node)
		if (o != req->lkb && o->local)
			return true;
	return false;
}

/*
 * May @req go on (rdlock_dlm_wait_local())? Yes once cancelled: it then
 * touches nothing of its lock's, which may be gone. Caller holds
 * dls->lock.
 */
static bool __rdlock_dlm_local_done(const struct rdlock_dlm_req *req,
				    bool publish, bool takes)
{
	lockdep_assert_held(&req->dls->lock);
	return !req->lkb || (!req->lkb->local &&
			     (!publish || !req->dls->local_takes) &&
			     (!takes || !rdlock_dlm_res_local(req)));
}

static bool rdlock_dlm_local_done(const struct rdlock_dlm_req *req,
				  bool publish, bool takes)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&req->dls->lock, flags);
	done = __rdlock_dlm_local_done(req, publish, takes);
	spin_unlock_irqrestore(&req->dls->lock, flags);
	return done;
}

/*
 * A LOCAL lock unlocked before its take started: nobody else knows its
 * name, so it has nothing to give back and its take is not needed.
 * Caller holds dls->lock; the take's request is returned, to be freed.
 */
static struct rdlock_dlm_req *rdlock_dlm_local_abandon(struct rdlock_dlm_lkb *lkb)
{
	struct rdlock_dlm_req *take = lkb->local_req;

	lockdep_assert_held(&lkb->dls->lock);
	list_del_init(&lkb->local_node);
	lkb->local = false;
	lkb->local_req = NULL;
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_ABANDONED, 1);
	rdlock_dlm_local_ended(lkb->dls);
	return take;
}

/*
 * Before @req touches its lock's words, a LOCAL take of the lock itself
 * must have ended (rdlock_dlm_local_grant()): started now if it was
 * deferred, not needed at all by an unlock (but one that stores an EX
 * value block). And before an EX lock goes below EX, every LOCAL take of
 * the lockspace: its holder may have written where other nodes learn a
 * new resource's name (a directory's entry of a new inode), and a node
 * that learns it must find the name's lock words taken. A lock unlocked
 * untaken counts too: the data written under it becomes another node's
 * once that node learns its name, so the same holds for the names in it.
 * An EX unlock does not wait here: its release does
 * (rdlock_dlm_unlock_work()). A request that takes words waits for the
 * takes of this node's other LOCAL locks of its resource, which hold it
 * already: else it could take the words first.
 */
static void rdlock_dlm_wait_local(struct rdlock_dlm_req *req)
{
	bool publish = req->from == RDLOCK_DLM_LOCK_EX && !req->unlock &&
		       req->to < RDLOCK_DLM_LOCK_EX;
	bool takes = !req->unlock && req->to > req->from &&
		     req->to != RDLOCK_DLM_LOCK_NL;
	struct rdlock_dlm_ls *dls = req->dls;
	struct rdlock_dlm_req *take = NULL;
	struct rdlock_dlm_lkb *lkb, *o;
	unsigned long flags;
	ktime_t t0;
	bool done;

	spin_lock_irqsave(&dls->lock, flags);
	lkb = req->lkb;
	if (takes)
		list_for_each_entry(o, &req->res->locks, res_node)
			if (o != lkb && o->local_req)
				rdlock_dlm_local_publish(o);
	if (lkb && lkb->local_req) {
		if (req->unlock && !(req->flags & RDLOCK_DLM_LKF_VALBLK &&
				     req->from == RDLOCK_DLM_LOCK_EX))
			take = rdlock_dlm_local_abandon(lkb);
		else
			rdlock_dlm_local_publish(lkb);
	}
	if (publish)
		rdlock_dlm_local_force(dls);
	done = __rdlock_dlm_local_done(req, publish, takes);
	spin_unlock_irqrestore(&dls->lock, flags);
	if (take) {
		/* Never started: its references go as a request's would. */
		rdlock_dlm_res_put(dls, take->res);
		kfree(take);
		rdlock_dlm_put(dls);
	}
	if (done)
		return;
	t0 = ktime_get();
	/* As long as the cluster takes: not a hung task. */
	wait_event_idle(dls->local_wq,
			rdlock_dlm_local_done(req, publish, takes));
	rdlock_dlm_count_since(RDLOCK_DLM_ST_LOCAL_WAIT,
			       RDLOCK_DLM_ST_NS_LOCAL_WAIT, t0);
}

static void rdlock_dlm_work(struct work_struct *work)
{
	struct rdlock_dlm_req *req = container_of(work, struct rdlock_dlm_req,
						  work);
	struct rdlock_dlm_ls *dls = req->dls;
	unsigned int nofs = memalloc_nofs_save();
	struct rdlock_dlm_lkb *lkb;
	unsigned long flags;
	int grmode, ret;

	rdlock_dlm_wait_local(req);
	lkb = req->lkb;
	if (req->unlock) {
		if (rdlock_dlm_unlock_work(req)) {
			/* Parked: rdlock_dlm_release_work() ends it. */
			memalloc_nofs_restore(nofs);
			return;
		}
		goto out;
	}
	/* What the lock is left holding if the request fails. */
	grmode = req->from;
	if (req->to > req->from) {
		ret = rdlock_dlm_up(req, lkb, &grmode);
		/*
		 * Granted: no cancel from here on, so @lkb and its lksb stay
		 * the caller's (rdlock_dlm_unlock() gets -EBUSY meanwhile).
		 */
		if (!ret && req->to != RDLOCK_DLM_LOCK_NL &&
		    rdlock_dlm_step(req, false))
			rdlock_dlm_lvb_grant(req, lkb, req->main);
	} else {
		ret = rdlock_dlm_down(req, lkb, &grmode);
	}

	/*
	 * The wait is over: every node hears so before the caller, whose
	 * next request (a conflicting one of this node's, say) would else be
	 * granted while the wait is still known and get a BAST for it.
	 */
	rdlock_dlm_notice_done(req);
	spin_lock_irqsave(&dls->lock, flags);
	if (!req->lkb) {
		/* Cancelled: the caller has its AST; give back what we got. */
		spin_unlock_irqrestore(&dls->lock, flags);
		rdlock_dlm_drop(req, &req->main);
		rdlock_dlm_drop(req, &req->gate);
		goto out;
	}
	if (!ret) {
		if (req->main)
			lkb->main = req->main;
		if (req->gate)
			lkb->gate = req->gate;
		req->main = NULL;
		req->gate = NULL;
		grmode = req->to;
	}
	lkb->req = NULL;
	if (grmode == RDLOCK_DLM_LOCK_IV) {
		/* A new lock that was not granted ends with its AST. */
		idr_remove(&dls->lkids, lkb->lkid);
		list_del_init(&lkb->res_node);
		rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, ret, 0, true, false);
		spin_unlock_irqrestore(&dls->lock, flags);
		rdlock_dlm_drop(req, &req->main);
		rdlock_dlm_drop(req, &req->gate);
		rdlock_dlm_res_put(dls, req->res);
		goto out;
	}
	rdlock_dlm_ast(lkb, req, grmode, ret);
	spin_unlock_irqrestore(&dls->lock, flags);
	/* A failed up-conversion gives back the steps it got. */
	rdlock_dlm_drop(req, &req->main);
	rdlock_dlm_drop(req, &req->gate);
out:
	if (req->dropped)
		rdlock_dlm_kick_waiters(req);
	memalloc_nofs_restore(nofs);
	rdlock_dlm_req_free(req);
}

/*
 * The background take of a lock granted by rdlock_dlm_local_grant(). It
 * cannot fail for want of the lock (nobody else knows the name), so it
 * tries again after any error until it succeeds or the lockspace goes;
 * then the lock holds nothing in the cluster (counted, logged) and only
 * an unlock is left for it.
 */
static void rdlock_dlm_local_work(struct work_struct *work)
{
	struct rdlock_dlm_req *req = container_of(work, struct rdlock_dlm_req,
						  work);
	struct rdlock_dlm_ls *dls = req->dls;
	struct rdlock_dlm_lkb *lkb = req->lkb;
	unsigned int nofs = memalloc_nofs_save(), retry_ms = 0;
	u8 lvb[RDLOCK_DLM_LVB_LEN];
	unsigned long flags;
	int grmode, ret;
	u32 f = 0;

	if (READ_ONCE(rdlock_dlm_inject_local_delay_ms))
		msleep(READ_ONCE(rdlock_dlm_inject_local_delay_ms));
	for (;;) {
		grmode = req->from;
		ret = rdlock_dlm_up(req, lkb, &grmode);
		if (!ret || ret == -ESHUTDOWN)
			break;
		rdlock_dlm_drop(req, &req->main);
		rdlock_dlm_drop(req, &req->gate);
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_RETRY, 1);
		pr_warn_ratelimited("%s: taking a new lock %x failed (%d), trying again\n",
				    dls->name, lkb->lkid, ret);
		retry_ms = clamp(2 * retry_ms, RDLOCK_DLM_LOCAL_RETRY_MS_MIN,
				 RDLOCK_DLM_LOCAL_RETRY_MS_MAX);
		msleep(retry_ms);
	}
	rdlock_dlm_notice_done(req);
	/* A stored value block: the name was not new after all. */
	if (!ret && req->flags & RDLOCK_DLM_LKF_VALBLK &&
	    !rdlock_dlm_lvb_get(req->main, lvb, &f) &&
	    f & RDLOCK_DLM_LVB_VALID) {
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_KNOWN, 1);
		pr_warn_ratelimited("%s: lock %x asked for as LOCAL names a resource with a stored value block\n",
				    dls->name, lkb->lkid);
	}
	spin_lock_irqsave(&dls->lock, flags);
	if (!ret) {
		lkb->main = req->main;
		lkb->gate = req->gate;
		req->main = NULL;
		req->gate = NULL;
	}
	lkb->local = false;
	rdlock_dlm_local_ended(dls);
	spin_unlock_irqrestore(&dls->lock, flags);
	if (ret) {
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_LOST, 1);
		pr_warn_ratelimited("%s: new lock %x not taken: %d\n",
				    dls->name, lkb->lkid, ret);
		rdlock_dlm_drop(req, &req->main);
		rdlock_dlm_drop(req, &req->gate);
	}
	rdlock_dlm_count(RDLOCK_DLM_ST_NS_LOCAL,
			 ktime_to_ns(ktime_sub(ktime_get(), req->start)));
	if (req->dropped)
		rdlock_dlm_kick_waiters(req);
	memalloc_nofs_restore(nofs);
	rdlock_dlm_req_free(req);
}

/*
 * A parked EX unlock's release (rdlock_dlm_unlock_work()), now that no
 * LOCAL take is left.
 */
static void rdlock_dlm_release_work(struct work_struct *work)
{
	struct rdlock_dlm_req *req = container_of(work, struct rdlock_dlm_req,
						  release_work);
	unsigned int nofs = memalloc_nofs_save();
	unsigned long flags;

	rdlock_dlm_drop(req, &req->main);
	rdlock_dlm_drop(req, &req->gate);
	spin_lock_irqsave(&req->dls->lock, flags);
	req->res->parked--;
	spin_unlock_irqrestore(&req->dls->lock, flags);
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_PARKED, -1);
	rdlock_dlm_kick_waiters(req);
	memalloc_nofs_restore(nofs);
	rdlock_dlm_req_free(req);
}

/*
 * Start the takes of the locks granted LOCAL longer ago than
 * rdlock_dlm_local_defer_ms, oldest first; again when the next is due.
 */
static void rdlock_dlm_age_work(struct work_struct *work)
{
	struct rdlock_dlm_ls *dls = container_of(to_delayed_work(work),
						 struct rdlock_dlm_ls,
						 age_work);
	unsigned long defer, flags;
	struct rdlock_dlm_lkb *lkb;

	defer = rdlock_dlm_local_defer();
	spin_lock_irqsave(&dls->lock, flags);
	while ((lkb = list_first_entry_or_null(&dls->unpublished,
					       struct rdlock_dlm_lkb,
					       local_node))) {
		if (time_before(jiffies, lkb->local_at + defer)) {
			queue_delayed_work(rdlock_dlm_local_wq, &dls->age_work,
					   lkb->local_at + defer - jiffies);
			break;
		}
		rdlock_dlm_local_publish(lkb);
		rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_AGED, 1);
	}
	spin_unlock_irqrestore(&dls->lock, flags);
}

static void rdlock_dlm_gate_work(struct work_struct *work)
{
	struct rdlock_dlm_req *req = container_of(work, struct rdlock_dlm_req,
						  gate_work);

	rdlock_dlm_drop(req, &req->cancel_gate);
	rdlock_dlm_kick_waiters(req);
}

static struct rdlock_dlm_req *rdlock_dlm_req_alloc(struct rdlock_dlm_ls *dls,
						   struct rdlock_dlm_lkb *lkb)
{
	struct rdlock_dlm_req *req = kzalloc(sizeof(*req), GFP_NOFS);

	if (!req)
		return NULL;
	INIT_WORK(&req->work, rdlock_dlm_work);
	INIT_WORK(&req->gate_work, rdlock_dlm_gate_work);
	INIT_WORK(&req->release_work, rdlock_dlm_release_work);
	INIT_LIST_HEAD(&req->wait_node);
	INIT_LIST_HEAD(&req->park_node);
	init_waitqueue_head(&req->kick_wq);
	req->dls = dls;
	req->lkb = lkb;
	return req;
}

/* Make @req @lkb's request, counted; caller holds dls->lock. */
static void rdlock_dlm_req_setup(struct rdlock_dlm_lkb *lkb,
				 struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = lkb->dls;

	lockdep_assert_held(&dls->lock);
	req->res = lkb->res;
	req->res->refs++;
	req->id = ++dls->next_req;
	req->lkid = lkb->lkid;
	req->from = lkb->grmode;
	/* A request that may wait can be cancelled from the start. */
	req->cancellable = !req->unlock && req->to > req->from &&
			   req->to != RDLOCK_DLM_LOCK_NL &&
			   !(req->flags & RDLOCK_DLM_LKF_NOQUEUE);
	req->start = ktime_get();
	atomic64_inc(&rdlock_dlm_st_req[rdlock_dlm_mode_idx(req->from)]
		     [req->unlock ? 0 : rdlock_dlm_mode_idx(req->to)]);
	if (req->flags & RDLOCK_DLM_LKF_NOQUEUE)
		rdlock_dlm_count(RDLOCK_DLM_ST_NOQUEUE, 1);
	if (req->flags & RDLOCK_DLM_LKF_VALBLK)
		rdlock_dlm_count(RDLOCK_DLM_ST_VALBLK, 1);
	atomic_inc(&dls->refs);
}

/* Start @req on @lkb; caller holds dls->lock. */
static void rdlock_dlm_req_start(struct rdlock_dlm_lkb *lkb,
				 struct rdlock_dlm_req *req)
{
	rdlock_dlm_req_setup(lkb, req);
	lkb->req = req;
	queue_work(rdlock_dlm_wq, &req->work);
}

/*
 * A new lock with RDLOCK_DLM_LKF_LOCAL: the caller says no other node can
 * know the resource yet, so nobody can be in its way. Granted now, as
 * o2dlm masters such a lock without asking anybody; @req takes its lock
 * words later (on its resource's home: a round trip to another node for
 * most names): once rdlock_dlm_local_defer_ms have passed, or sooner when
 * the lock's next request needs them, or any of this node's EX locks goes
 * below EX, before which nobody can learn the name
 * (rdlock_dlm_wait_local()). Unlocked before that, it never takes them.
 * The value block of a name never used is zeroes, not valid: what its
 * grant would read. Caller holds dls->lock.
 */
static void rdlock_dlm_local_grant(struct rdlock_dlm_lkb *lkb,
				   struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = lkb->dls;
	unsigned long defer;
	bool first;

	/* Granted: the take waits for nobody, and nothing cancels it. */
	req->flags &= ~RDLOCK_DLM_LKF_NOQUEUE;
	rdlock_dlm_req_setup(lkb, req);
	req->cancellable = false;
	INIT_WORK(&req->work, rdlock_dlm_local_work);
	if (req->flags & RDLOCK_DLM_LKF_VALBLK) {
		memset(lkb->lksb->sb_lvbptr, 0, RDLOCK_DLM_LVB_LEN);
		req->sb_flags |= RDLOCK_DLM_SBF_VALNOTVALID;
	}
	lkb->lvb_valid = false;
	lkb->lvb_seen_ok = false;
	lkb->local = true;
	lkb->local_at = jiffies;
	lkb->local_req = req;
	first = list_empty(&dls->unpublished);
	list_add_tail(&lkb->local_node, &dls->unpublished);
	dls->local_takes++;
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL, 1);
	rdlock_dlm_count(RDLOCK_DLM_ST_LOCAL_TAKES, 1);
	rdlock_dlm_ast(lkb, req, req->to, 0);
	defer = rdlock_dlm_local_defer();
	/* The oldest is due first: only its timer counts. */
	if (!defer)
		rdlock_dlm_local_publish(lkb);
	else if (first)
		mod_delayed_work(rdlock_dlm_local_wq, &dls->age_work, defer);
}

static void rdlock_dlm_trim_work(struct work_struct *work)
{
	struct rdlock_dlm_ls *dls = container_of(work, struct rdlock_dlm_ls,
						 trim_work);
	u32 home;

	for (home = 0; home < RDLOCK_MAX_NODES; home++)
		if (test_and_clear_bit(home, &dls->trim_homes))
			rdlock_ls_trim(dls->ls, home);
}

static int rdlock_dlm_check_mode(int mode)
{
	switch (mode) {
	case RDLOCK_DLM_LOCK_NL:
	case RDLOCK_DLM_LOCK_PR:
	case RDLOCK_DLM_LOCK_EX:
		return 0;
	case RDLOCK_DLM_LOCK_CR:
	case RDLOCK_DLM_LOCK_CW:
	case RDLOCK_DLM_LOCK_PW:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

static int rdlock_dlm_convert(struct rdlock_dlm_ls *dls, int mode,
			      struct rdlock_dlm_lksb *lksb, u32 flags,
			      rdlock_dlm_ast_t ast, void *astarg,
			      rdlock_dlm_bast_t bast)
{
	struct rdlock_dlm_req *req = rdlock_dlm_req_alloc(dls, NULL);
	struct rdlock_dlm_lkb *lkb;
	unsigned long irq;
	int ret = 0;

	if (!req)
		return -ENOMEM;
	spin_lock_irqsave(&dls->lock, irq);
	lkb = idr_find(&dls->lkids, lksb->sb_lkid);
	if (!lkb || lkb->dead)
		ret = -ENOENT;
	else if (lkb->req)
		ret = -EBUSY;
	if (!ret) {
		lkb->lksb = lksb;
		lkb->ast = ast;
		lkb->bast = bast;
		lkb->astarg = astarg;
		req->lkb = lkb;
		req->to = mode;
		req->flags = flags;
		rdlock_dlm_req_start(lkb, req);
	}
	spin_unlock_irqrestore(&dls->lock, irq);
	if (ret)
		kfree(req);
	return ret;
}

/**
 * rdlock_dlm_lock() - request a lock or a conversion (fs/dlm's dlm_lock())
 * @dls: the lockspace.
 * @mode: RDLOCK_DLM_LOCK_NL, _PR or _EX.
 * @lksb: the caller's status block; sb_lkid names the lock with CONVERT,
 *	and is set here for a new lock. It must stay valid until the lock's
 *	unlock AST.
 * @flags: RDLOCK_DLM_LKF_NOQUEUE, _CONVERT, _VALBLK.
 * @name: resource name (new locks; ignored with CONVERT).
 * @namelen: 1 to RDLOCK_DLM_RESNAME_MAX.
 * @ast: completion callback, called once per request.
 * @astarg: argument of @ast and @bast.
 * @bast: blocking callback, or NULL.
 *
 * Return: 0 when the request is queued (its AST will come, maybe before
 * this returns), else nothing was queued and no callback comes: -EINVAL
 * (unknown flags or mode, no @lksb or @ast, bad @namelen, VALBLK without
 * sb_lvbptr), -EOPNOTSUPP (CR, CW, PW), -ENOENT (CONVERT of an unknown or
 * unlocked lock id), -EBUSY (CONVERT while a request of the lock is in
 * progress), -ENOMEM.
 */
int rdlock_dlm_lock(struct rdlock_dlm_ls *dls, int mode,
		    struct rdlock_dlm_lksb *lksb, u32 flags, const void *name,
		    unsigned int namelen, rdlock_dlm_ast_t ast, void *astarg,
		    rdlock_dlm_bast_t bast)
{
	struct rdlock_dlm_res *res, *new_res;
	struct rdlock_dlm_lkb *lkb;
	struct rdlock_dlm_req *req;
	unsigned long irq;
	bool early;
	u64 hash;
	int ret;

	if (flags & ~(RDLOCK_DLM_LKF_NOQUEUE | RDLOCK_DLM_LKF_CONVERT |
		      RDLOCK_DLM_LKF_VALBLK | RDLOCK_DLM_LKF_LOCAL))
		return -EINVAL;
	/* A lock that exists was seen by the cluster already. */
	if (flags & RDLOCK_DLM_LKF_CONVERT && flags & RDLOCK_DLM_LKF_LOCAL)
		return -EINVAL;
	if (!lksb || !ast)
		return -EINVAL;
	ret = rdlock_dlm_check_mode(mode);
	if (ret)
		return ret;
	if (flags & RDLOCK_DLM_LKF_VALBLK && !lksb->sb_lvbptr)
		return -EINVAL;
	if (flags & RDLOCK_DLM_LKF_CONVERT)
		return rdlock_dlm_convert(dls, mode, lksb, flags, ast, astarg,
					  bast);
	if (!name || !namelen || namelen > RDLOCK_DLM_RESNAME_MAX)
		return -EINVAL;

	hash = rdlock_dlm_hash(name, namelen);
	lkb = kzalloc(sizeof(*lkb), GFP_NOFS);
	req = rdlock_dlm_req_alloc(dls, lkb);
	new_res = kzalloc(sizeof(*new_res), GFP_NOFS);
	if (!lkb || !req || !new_res) {
		ret = -ENOMEM;
		goto free;
	}
	lkb->dls = dls;
	lkb->lksb = lksb;
	lkb->ast = ast;
	lkb->bast = bast;
	lkb->astarg = astarg;
	lkb->grmode = RDLOCK_DLM_LOCK_IV;
	INIT_LIST_HEAD(&lkb->res_node);
	INIT_LIST_HEAD(&lkb->local_node);
	INIT_DELAYED_WORK(&lkb->cb_work, rdlock_dlm_cb_work);
	req->to = mode;
	req->flags = flags;

	idr_preload(GFP_NOFS);
	spin_lock_irqsave(&dls->lock, irq);
	ret = idr_alloc_cyclic(&dls->lkids, lkb, 1, INT_MAX, GFP_NOWAIT);
	if (ret < 0) {
		spin_unlock_irqrestore(&dls->lock, irq);
		idr_preload_end();
		goto free;
	}
	lkb->lkid = ret;
	lksb->sb_lkid = ret;
	res = rdlock_dlm_res_find(dls, hash, name, namelen);
	if (!res) {
		res = new_res;
		new_res = NULL;
		res->hash = hash;
		res->len = namelen;
		memcpy(res->name, name, namelen);
		INIT_LIST_HEAD(&res->locks);
		hash_add(dls->res, &res->hnode, hash);
	}
	/*
	 * Early only for a resource this node has no lock and no parked
	 * release of: the grant would not be exclusive, or the release
	 * would wait for the grant's take and the take for the release.
	 * A parked release goes once the takes are done: start them.
	 */
	early = flags & RDLOCK_DLM_LKF_LOCAL && mode != RDLOCK_DLM_LOCK_NL &&
		READ_ONCE(rdlock_dlm_local) && list_empty(&res->locks) &&
		!res->parked && !dls->forcing;
	if (res->parked)
		rdlock_dlm_local_force(dls);
	res->refs++;		/* the lock's */
	lkb->res = res;
	lkb->hash = hash;
	list_add_tail(&lkb->res_node, &res->locks);
	atomic_inc(&dls->refs);	/* the lock's */
	if (early)
		rdlock_dlm_local_grant(lkb, req);
	else
		rdlock_dlm_req_start(lkb, req);
	spin_unlock_irqrestore(&dls->lock, irq);
	idr_preload_end();
	kfree(new_res);
	return 0;

free:
	kfree(new_res);
	kfree(req);
	kfree(lkb);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlock_dlm_lock);

/* Cancel @lkb's request if it waits; caller holds dls->lock. */
static void rdlock_dlm_cancel(struct rdlock_dlm_lkb *lkb)
{
	struct rdlock_dlm_req *req = lkb->req;
	struct rdlock_dlm_ls *dls = lkb->dls;
	bool new = lkb->grmode == RDLOCK_DLM_LOCK_IV;

	lockdep_assert_held(&dls->lock);
	/* Nothing waits, or the grant is under way: it completes normally. */
	if (!req || req->unlock || !req->cancellable)
		return;
	req->lkb = NULL;
	req->cancellable = false;
	lkb->req = NULL;
	/* A waiting take ends now, with nothing taken, as a wait for LOCAL. */
	wake_up(&req->kick_wq);
	wake_up_all(&dls->local_wq);
	rdlock_dlm_count(RDLOCK_DLM_ST_CANCEL, 1);
	/*
	 * This node's holders stop getting BASTs for the abandoned wait now,
	 * before the caller sees ECANCEL; the other nodes' stop with the
	 * done notice, once the abandoned wait ends.
	 */
	rdlock_dlm_forget_wait(dls, rdlock_xport_self(), req->id);
	/*
	 * A new or NL->EX request waiting for the main word holds the gate
	 * (it set @waiting after storing @gate). Its abandoned wait must not
	 * keep it: a PR holder converting to EX instead of giving its PR
	 * back would wait for the gate, and this wait for that PR. Without
	 * the gate, what the wait gets is given back at once, unseen: no
	 * DLM lock is granted EX between a PR->EX converter's PR and EX.
	 */
	if (READ_ONCE(req->waiting) == RDLOCK_DLM_WAIT_MAIN && req->gate) {
		req->cancel_gate = req->gate;
		req->gate = NULL;
		queue_work(rdlock_dlm_cb_wq, &req->gate_work);
	}
	if (new) {
		idr_remove(&dls->lkids, lkb->lkid);
		list_del_init(&lkb->res_node);
		/* The lock's reference on the resource; the request has one. */
		lkb->res->refs--;
	}
	rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, RDLOCK_DLM_ECANCEL, 0, new,
			    false);
}

/**
 * rdlock_dlm_unlock() - unlock, or cancel a request (fs/dlm's dlm_unlock())
 * @dls: the lockspace.
 * @lkid: the lock's id.
 * @flags: RDLOCK_DLM_LKF_CANCEL, RDLOCK_DLM_LKF_VALBLK.
 * @lksb: the lock's status block (NULL: the one it was requested with).
 * @astarg: when not NULL, replaces the lock's AST argument.
 *
 * Unlock: the lock is released and its AST reports RDLOCK_DLM_EUNLOCK;
 * after that AST rdlock does not touch @lksb again. CANCEL: a request of
 * the lock still waiting is abandoned and its AST reports
 * RDLOCK_DLM_ECANCEL (a conversion keeps its old mode, a new lock is
 * gone); a request being granted, or none, is left alone: its normal AST
 * (or none) follows, and this still returns 0, as fs/dlm does.
 *
 * Return: 0, or with no callback: -EINVAL (unknown flags, VALBLK without
 * sb_lvbptr), -ENOENT (unknown lock id), -EBUSY (unlock while a request of
 * the lock is in progress), -ENOMEM.
 */
int rdlock_dlm_unlock(struct rdlock_dlm_ls *dls, u32 lkid, u32 flags,
		      struct rdlock_dlm_lksb *lksb, void *astarg)
{
	struct rdlock_dlm_lkb *lkb;
	struct rdlock_dlm_req *req = NULL;
	unsigned long irq;
	int ret = 0;

	if (flags & ~(RDLOCK_DLM_LKF_CANCEL | RDLOCK_DLM_LKF_VALBLK))
		return -EINVAL;
	if (!(flags & RDLOCK_DLM_LKF_CANCEL)) {
		req = rdlock_dlm_req_alloc(dls, NULL);
		if (!req)
			return -ENOMEM;
		req->unlock = true;
	}
	spin_lock_irqsave(&dls->lock, irq);
	lkb = idr_find(&dls->lkids, lkid);
	if (!lkb || lkb->dead) {
		ret = -ENOENT;
		goto out;
	}
	if (flags & RDLOCK_DLM_LKF_VALBLK &&
	    !(lksb ?: lkb->lksb)->sb_lvbptr) {
		ret = -EINVAL;
		goto out;
	}
	if (flags & RDLOCK_DLM_LKF_CANCEL) {
		if (astarg)
			lkb->astarg = astarg;
		rdlock_dlm_cancel(lkb);
		goto out;
	}
	if (lkb->req) {
		ret = -EBUSY;
		goto out;
	}
	if (lksb)
		lkb->lksb = lksb;
	if (astarg)
		lkb->astarg = astarg;
	req->lkb = lkb;
	req->flags = flags;
	rdlock_dlm_req_start(lkb, req);
	req = NULL;
out:
	spin_unlock_irqrestore(&dls->lock, irq);
	kfree(req);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlock_dlm_unlock);

/**
 * rdlock_dlm_lock_status() - what a lock is doing
 * @dls: its lockspace.
 * @lkid: its id.
 * @st: filled in.
 *
 * For a file system's lock dumps and for tests that must know a request
 * reached a step (for example that a PR->EX conversion is committed)
 * before they go on. It may change as soon as the lock is dropped.
 *
 * Return: 0, or -ENOENT for no such lock (or one already unlocked).
 */
int rdlock_dlm_lock_status(struct rdlock_dlm_ls *dls, u32 lkid,
			   struct rdlock_dlm_lock_status *st)
{
	struct rdlock_dlm_lkb *lkb;
	unsigned long irq;
	int ret = 0;

	spin_lock_irqsave(&dls->lock, irq);
	lkb = idr_find(&dls->lkids, lkid);
	if (!lkb || lkb->dead) {
		ret = -ENOENT;
	} else {
		st->grmode = lkb->grmode;
		st->rqmode = lkb->req && !lkb->req->unlock ? lkb->req->to :
							     RDLOCK_DLM_LOCK_IV;
		st->waiting = lkb->req ? READ_ONCE(lkb->req->waiting) :
					 RDLOCK_DLM_WAIT_NONE;
		st->hold_ms = rdlock_dlm_hold_of(lkb);
	}
	spin_unlock_irqrestore(&dls->lock, irq);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlock_dlm_lock_status);

/**
 * rdlock_dlm_set_hold() - a minimum hold time for this node's grants
 * @dls: the lockspace.
 * @ms: 0 (the default) to @max_ms.
 * @max_ms: @ms to RDLOCK_DLM_HOLD_MAX_MS: how far a busy lock's hold time
 *	may grow (@ms: it does not).
 *
 * A lock whose mode an EX grant raised gets no BAST during its hold time
 * after the grant's AST: a BAST due then is delivered when it is over, or
 * at once when another callback of the lock is queued behind it. A holder
 * whose users keep taking the lock locally (a directory's inode lock
 * under a stream of creates) then does a batch of work per grant instead
 * of giving the lock back after each operation while other nodes take
 * turns; GFS2's glocks keep a minimum hold time for the same reason. The
 * waiting node's request waits up to the hold time longer. A lock's hold
 * time is @ms; it doubles, up to @max_ms, at each EX grant of a lock that
 * bounces (asked for again soon after its BAST, then waiting for other
 * nodes over twice its hold time), and is @ms again after a grant that
 * did not wait (rdlock_dlm_hold_adapt()). Applies at once, to the locks
 * granted before too.
 *
 * Return: 0, or -EINVAL unless @ms <= @max_ms <= RDLOCK_DLM_HOLD_MAX_MS.
 */
int rdlock_dlm_set_hold(struct rdlock_dlm_ls *dls, unsigned int ms,
			unsigned int max_ms)
{
	if (ms > max_ms || max_ms > RDLOCK_DLM_HOLD_MAX_MS)
		return -EINVAL;
	WRITE_ONCE(dls->hold_max_ms, max_ms);
	WRITE_ONCE(dls->hold_ms, ms);
	return 0;
}
EXPORT_SYMBOL_GPL(rdlock_dlm_set_hold);

/* ------------------------------------------------------------------ */
/* Lockspaces                                                         */

/**
 * rdlock_dlm_node_id() - this node's id in the rdlock cluster
 *
 * Return: the id rdlock_dlm_open() expects.
 */
u32 rdlock_dlm_node_id(void)
{
	return rdlock_xport_self();
}
EXPORT_SYMBOL_GPL(rdlock_dlm_node_id);

/**
 * rdlock_dlm_open() - open a DLM lockspace by name; may sleep
 * @name: 1 to RDLOCK_DLM_LS_NAME_MAX characters of [A-Za-z0-9_.:-].
 * @node_id: this node's id (rdlock_dlm_node_id()): a check that the
 *	caller's idea of the cluster is rdlock's.
 * @ops: callbacks (may be NULL); kept until rdlock_dlm_close().
 * @ops_arg: their argument.
 *
 * Return: the lockspace or ERR_PTR(): -EINVAL (name, or @node_id is not
 * this node), -EEXIST (this node has it open), and rdlock_ls_open()'s
 * errors (-ENOTCONN when the cluster is not up, -ENOSPC, -ENOMEM, ...).
 */
struct rdlock_dlm_ls *rdlock_dlm_open(const char *name, u32 node_id,
				      const struct rdlock_dlm_ops *ops,
				      void *ops_arg)
{
	size_t len = name ? strlen(name) : 0;
	struct rdlock_dlm_ls *dls, *o;
	struct rdlock_ls_attr attr;
	int ret;

	if (!len || len > RDLOCK_DLM_LS_NAME_MAX ||
	    strspn(name, RDLOCK_DLM_NAME_CHARS) != len)
		return ERR_PTR(-EINVAL);
	if (node_id != rdlock_xport_self())
		return ERR_PTR(-EINVAL);
	dls = kzalloc(sizeof(*dls), GFP_KERNEL);
	if (!dls)
		return ERR_PTR(-ENOMEM);
	if (len + strlen(RDLOCK_DLM_LS_PREFIX) < sizeof(dls->name))
		snprintf(dls->name, sizeof(dls->name),
			 RDLOCK_DLM_LS_PREFIX "%s", name);
	else
		snprintf(dls->name, sizeof(dls->name), "dlmh.%016llx",
			 rdlock_dlm_hash(name, len));
	dls->ops = ops;
	dls->ops_arg = ops_arg;
	spin_lock_init(&dls->lock);
	idr_init(&dls->lkids);
	hash_init(dls->res);
	INIT_LIST_HEAD(&dls->notices);
	INIT_LIST_HEAD(&dls->waits);
	mutex_init(&dls->notice_mutex);
	init_waitqueue_head(&dls->local_wq);
	INIT_LIST_HEAD(&dls->unpublished);
	INIT_LIST_HEAD(&dls->parked);
	INIT_DELAYED_WORK(&dls->age_work, rdlock_dlm_age_work);
	INIT_WORK(&dls->trim_work, rdlock_dlm_trim_work);
	INIT_WORK(&dls->repeat_work, rdlock_dlm_repeat_work);

	mutex_lock(&rdlock_dlm_mutex);
	list_for_each_entry(o, &rdlock_dlm_list, list) {
		if (!strcmp(o->name, dls->name)) {
			ret = -EEXIST;
			goto err;
		}
	}
	attr = rdlock_dlm_attr;
	attr.slots = READ_ONCE(rdlock_dlm_slots);
	if (READ_ONCE(rdlock_dlm_place))
		attr.flags |= RDLOCK_LS_PLACE;
	dls->ls = rdlock_ls_open(dls->name, &attr);
	if (IS_ERR(dls->ls)) {
		ret = PTR_ERR(dls->ls);
		goto err;
	}
	ret = rdlock_ls_notice_register(dls->ls, rdlock_dlm_notice,
					rdlock_dlm_node_up, rdlock_dlm_node_down,
					dls);
	if (ret) {
		rdlock_ls_close(dls->ls);
		goto err;
	}
	list_add_tail(&dls->list, &rdlock_dlm_list);
	mutex_unlock(&rdlock_dlm_mutex);
	/*
	 * Receiving now: the nodes send us again the wait notices we may
	 * have missed before, so that what we are granted gets its BASTs.
	 */
	rdlock_dlm_send_msg(dls, &(struct rdlock_dlm_notice_msg){
				.kind = RDLOCK_DLM_NOTICE_HELLO }, U32_MAX);
	return dls;

err:
	mutex_unlock(&rdlock_dlm_mutex);
	idr_destroy(&dls->lkids);
	kfree(dls);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(rdlock_dlm_open);

/**
 * rdlock_dlm_close() - close a DLM lockspace; may sleep
 * @dls: the lockspace; every lock must have had its unlock AST (or the
 *	AST of its cancelled request). Waits for cancelled requests still
 *	giving back what they got.
 */
void rdlock_dlm_close(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_notice *n, *tmp;

	WARN_ON(!idr_is_empty(&dls->lkids));
	wait_var_event(&dls->refs, !atomic_read(&dls->refs));
	mutex_lock(&rdlock_dlm_mutex);
	list_del(&dls->list);
	mutex_unlock(&rdlock_dlm_mutex);
	rdlock_ls_notice_unregister(dls->ls);
	/* No notice queues them now; no lock, no LOCAL grant is left. */
	cancel_work_sync(&dls->trim_work);
	cancel_work_sync(&dls->repeat_work);
	cancel_delayed_work_sync(&dls->age_work);
	rdlock_ls_close(dls->ls);
	list_for_each_entry_safe(n, tmp, &dls->notices, node) {
		kfree(n);
		rdlock_dlm_count(RDLOCK_DLM_ST_KNOWN, -1);
	}
	idr_destroy(&dls->lkids);
	kfree(dls);
}
EXPORT_SYMBOL_GPL(rdlock_dlm_close);

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
	debugfs_create_u32("inject_dlm_done_delay_ms", 0600, root,
			   &rdlock_dlm_inject_done_delay_ms);
	debugfs_create_u32("inject_dlm_poll_ms", 0600, root,
			   &rdlock_dlm_inject_poll_ms);
	debugfs_create_u32("inject_dlm_local_delay_ms", 0600, root,
			   &rdlock_dlm_inject_local_delay_ms);
}

int rdlock_dlm_init(void)
{
	/*
	 * A file system's writeback may wait for a grant or a callback:
	 * both queues need rescuers.
	 */
	rdlock_dlm_wq = alloc_workqueue("rdlock_dlm", WQ_UNBOUND |
					WQ_MEM_RECLAIM, 0);
	if (!rdlock_dlm_wq)
		return -ENOMEM;
	rdlock_dlm_cb_wq = alloc_workqueue("rdlock_dlm_cb", WQ_UNBOUND |
					   WQ_MEM_RECLAIM, 0);
	rdlock_dlm_local_wq = alloc_workqueue("rdlock_dlm_local", WQ_UNBOUND |
					      WQ_MEM_RECLAIM, 0);
	if (!rdlock_dlm_cb_wq || !rdlock_dlm_local_wq) {
		if (rdlock_dlm_cb_wq)
			destroy_workqueue(rdlock_dlm_cb_wq);
		if (rdlock_dlm_local_wq)
			destroy_workqueue(rdlock_dlm_local_wq);
		destroy_workqueue(rdlock_dlm_wq);
		return -ENOMEM;
	}
	return 0;
}

void rdlock_dlm_exit(void)
{
	struct rdlock_dlm_ls *dls;

	/*
	 * A lockspace still open here was leaked by a user that is gone
	 * (its module could not be unloaded before ours otherwise): no
	 * notice may queue work for it from now on. Its locks stay.
	 */
	mutex_lock(&rdlock_dlm_mutex);
	list_for_each_entry(dls, &rdlock_dlm_list, list) {
		pr_err("DLM lockspace %s was not closed\n", dls->name);
		rdlock_ls_notice_unregister(dls->ls);
		cancel_delayed_work_sync(&dls->age_work);
	}
	mutex_unlock(&rdlock_dlm_mutex);
	/* Requests queue callbacks: their queues go first. */
	destroy_workqueue(rdlock_dlm_local_wq);
	destroy_workqueue(rdlock_dlm_wq);
	destroy_workqueue(rdlock_dlm_cb_wq);
}
