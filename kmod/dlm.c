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
 * Requests run in an unbound WQ_MEM_RECLAIM workqueue (those of the
 * uapi's lockspaces in one of their own: rdlock_dlm_ls.wq), one work item
 * per request, that never sleeps for a grant: a request that must wait returns
 * and its work is queued again by its timer, a kick, a cancel or the end
 * of the LOCAL takes it waits for (rdlock_dlm_sleep()). Callbacks run
 * from another, one work item per lock, so a lock's callbacks come one at
 * a time and in order. Blocking callbacks: before a
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

/*
 * Call map, in the manner of fs/dlm/lock.c's: which function calls which,
 * with its file when it is not this one. Requests run in rdlock_dlm_work()
 * on rdlock_dlm_wq, callbacks in rdlock_dlm_cb_work() on rdlock_dlm_cb_wq,
 * the takes of LOCAL locks in rdlock_dlm_local_work() on
 * rdlock_dlm_local_wq.
 *
 *   rdlock_dlm_lock()                  request: a new lock
 *     rdlock_dlm_res_find()              dlm_notice.c
 *     rdlock_dlm_local_force()           a parked release: dlm_local.c
 *     rdlock_dlm_local_grant()           LOCAL: granted now, dlm_local.c
 *     rdlock_dlm_req_start()             else: rdlock_dlm_work() queued
 *   rdlock_dlm_lock(CONVERT)           convert
 *     rdlock_dlm_convert()
 *       rdlock_dlm_req_start()
 *   rdlock_dlm_unlock()                unlock
 *     rdlock_dlm_req_start()
 *   rdlock_dlm_unlock(CANCEL)          cancel
 *     rdlock_dlm_cancel()
 *       rdlock_dlm_forget_wait()         dlm_notice.c
 *       rdlock_dlm_gate_work()           queued: gives back the gate
 *       rdlock_dlm_queue_cb(ECANCEL)     dlm_ast.c
 *
 *   rdlock_dlm_work()                  again after each wait
 *     rdlock_dlm_req_resume()
 *     rdlock_dlm_wait_local()            dlm_local.c
 *     rdlock_dlm_unlock_work()           unlock
 *       rdlock_dlm_lvb_release()
 *       rdlock_dlm_drop()                or parked: rdlock_dlm_release_work()
 *                                        drops them later, dlm_local.c
 *       rdlock_dlm_queue_cb(EUNLOCK)     dlm_ast.c
 *     rdlock_dlm_up()                    new lock, up-conversion
 *       rdlock_dlm_take()                goes on with a take, if any
 *         rdlock_dlm_try()               one CAS
 *         rdlock_dlm_notice_wait()       the wait notice, dlm_notice.c
 *         rdlock_dlm_sleep()             busy: returns, queued again later
 *         rdlock_dlm_room()              no free name entry
 *           rdlock_dlm_sleep()
 *       rdlock_dlm_drop()                PR->EX: the PR hold
 *     rdlock_dlm_lvb_grant()             granted
 *     rdlock_dlm_down()                  down-conversion
 *       rdlock_dlm_lvb_release()
 *       rdlock_dlm_drop()
 *     rdlock_dlm_notice_done()           the done notice, dlm_notice.c
 *     rdlock_dlm_ast()                   grant: dlm_ast.c
 *       rdlock_dlm_hold_adapt()
 *       rdlock_dlm_drop_basts()
 *       rdlock_dlm_queue_cb(AST)
 *       rdlock_dlm_bast_known()          BASTs owed to known waits
 *     rdlock_dlm_kick_waiters()          dlm_notice.c
 *     rdlock_dlm_req_free()
 *
 *   rdlock_dlm_cb_work()               AST, BAST: dlm_ast.c
 *     rdlock_dlm_hold_bast()             a BAST waits for the hold time
 *     lkb->bast(), lkb->ast()
 *
 *   rdlock_dlm_notice()                a notice came: dlm_notice.c
 *     rdlock_dlm_local_force()           a parked release: dlm_local.c
 *     rdlock_dlm_queue_cb(BAST)          a wait: dlm_ast.c
 *
 *   rdlock_dlm_local_grant()           LOCAL grant: dlm_local.c
 *     rdlock_dlm_req_setup()
 *     rdlock_dlm_ast()                   dlm_ast.c
 *   rdlock_dlm_local_work()            its take, once published
 *     rdlock_dlm_up()
 *     rdlock_dlm_sleep()                 failed: tries again later
 *     rdlock_dlm_notice_done()           dlm_notice.c
 *     rdlock_dlm_req_free()
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <rdlock/dlm.h>

#include "dlm-pri.h"
#include "lockspace.h"
#include "xport.h"

/* A DLM lockspace name's characters. */
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
	 * kept until their home needs room (the room notices trim them); a
	 * resource's lock on the node that first resolved its name
	 * (placement), where a file system's private inodes cost no remote
	 * operation, at the price of 1 / nodes of the names for dlm_slots.
	 */
	.flags = RDLOCK_LS_LVB | RDLOCK_LS_GATE | RDLOCK_LS_KEEP_NAMES |
		 RDLOCK_LS_PLACE,
	.lease_ms = 0,		/* a file system holds locks until it unlocks */
	/* .slots: rdlock_dlm_slots */
};

/*
 * Slots of every node's table a DLM lockspace takes, 12 per name and
 * node (placement, above): 16384 is 455 names per home in a 3-node
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
		 "lock-table slots of a DLM lockspace on every node, 12 per resource name and node (1200..262144, default 16384); read when a lockspace is opened, the same on every node");

/* A request that waits this long for a free name entry is logged. */
#define RDLOCK_DLM_ROOM_WARN_MS	10000

/* A request whose name found no free entry tries again after this. */
#define RDLOCK_DLM_ROOM_MS_MIN	10
#define RDLOCK_DLM_ROOM_MS_MAX	1000
/*
 * A waiting take tries again when kicked (rdlock_dlm_kick_waiters()) and
 * else after a random back-off, doubled from the minimum to the maximum:
 * a kick can be lost with a link, or come before the release it follows
 * reached a third node's table.
 */
#define RDLOCK_DLM_POLL_US_MIN	50
#define RDLOCK_DLM_POLL_US_MAX	20000
/*
 * In a /dev/rdlock lockspace, the polls of a take that waits for a holder
 * and whose back-off grew past RDLOCK_DLM_POLL_US_FREE (its first five are
 * not; after a kick, none) run within the lockspace's budget on this node:
 * RDLOCK_DLM_USER_POLLS polls a second for all of them, each put off
 * RDLOCK_DLM_BUDGET_MAX_MS at most (rdlock_dlm_poll_slot(): beyond that
 * many waits, each polls once per RDLOCK_DLM_BUDGET_MAX_MS). However many
 * requests an unprivileged user leaves waiting or starts and kills, their
 * polls cost the nodes little; kicks and cancels still end a wait at
 * once. The budget is the lockspace's, shared by its users, who can hold
 * each other's names anyway: other lockspaces, and kernel users' requests,
 * which are not budgeted, do not share it.
 */
#define RDLOCK_DLM_POLL_US_FREE		1000
#define RDLOCK_DLM_USER_POLLS		10
#define RDLOCK_DLM_BUDGET_MAX_MS	30000

static DEFINE_MUTEX(rdlock_dlm_mutex);	/* rdlock_dlm_list */
static LIST_HEAD(rdlock_dlm_list);
struct workqueue_struct *rdlock_dlm_wq;		/* requests */
/* The requests of /dev/rdlock's lockspaces: never in the way of the above. */
static struct workqueue_struct *rdlock_dlm_user_wq;
struct workqueue_struct *rdlock_dlm_cb_wq;	/* callbacks */
/* LOCAL takes: requests on rdlock_dlm_wq may wait for them. */
struct workqueue_struct *rdlock_dlm_local_wq;

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

/* ------------------------------------------------------------------ */
/* States                                                             */

/*
 * The life of a @what (a lock, a request: enum rdlock_dlm_lkb_state,
 * _req_state): @nr states, @moves the bits of the states each may move to.
 */
struct rdlock_dlm_life {
	const char *what;
	unsigned int nr;
	u8 moves[8];
};

static_assert(RDLOCK_DLM_LKS_NR <= 8 && RDLOCK_DLM_RQS_NR <= 8);

/*
 * May the state of @what @id of @life move from @from to @to? Caller
 * holds @lock, which guards the state. A move @life does not allow is a
 * bug of this layer: it warns (once) and is refused.
 */
static bool rdlock_dlm_may_move(spinlock_t *lock,
				const struct rdlock_dlm_life *life, u64 id,
				unsigned int from, unsigned int to)
{
	lockdep_assert_held(lock);
	return !WARN_ONCE(from >= life->nr || to >= life->nr ||
			  !(life->moves[from] & BIT(to)),
			  "DLM %s %llx: no move from state %u to %u\n",
			  life->what, id, from, to);
}

static const struct rdlock_dlm_life rdlock_dlm_lkb_life = {
	.what = "lock",
	.nr = RDLOCK_DLM_LKS_NR,
	.moves = {
		[RDLOCK_DLM_LKS_NEW]	     = BIT(RDLOCK_DLM_LKS_UNPUBLISHED) |
					       BIT(RDLOCK_DLM_LKS_GRANTED) |
					       BIT(RDLOCK_DLM_LKS_DEAD),
		[RDLOCK_DLM_LKS_UNPUBLISHED] = BIT(RDLOCK_DLM_LKS_TAKING) |
					       BIT(RDLOCK_DLM_LKS_GRANTED),
		[RDLOCK_DLM_LKS_TAKING]	     = BIT(RDLOCK_DLM_LKS_GRANTED),
		[RDLOCK_DLM_LKS_GRANTED]     = BIT(RDLOCK_DLM_LKS_DEAD),
	},
};

/**
 * rdlock_dlm_lkb_to() - move a lock to its next state
 * @lkb: the lock.
 * @to: the new state.
 *
 * The one place a lock's state changes; caller holds dls->lock. A move
 * that enum rdlock_dlm_lkb_state does not allow is a bug of this layer:
 * it warns (once) and is refused, the state stays.
 */
void rdlock_dlm_lkb_to(struct rdlock_dlm_lkb *lkb, enum rdlock_dlm_lkb_state to)
{
	if (rdlock_dlm_may_move(&lkb->dls->lock, &rdlock_dlm_lkb_life,
				lkb->lkid, lkb->state, to))
		lkb->state = to;
}

static const struct rdlock_dlm_life rdlock_dlm_req_life = {
	.what = "request",
	.nr = RDLOCK_DLM_RQS_NR,
	.moves = {
		[RDLOCK_DLM_RQS_NEW]	     = BIT(RDLOCK_DLM_RQS_CANCELLABLE) |
					       BIT(RDLOCK_DLM_RQS_RUNNING),
		[RDLOCK_DLM_RQS_CANCELLABLE] = BIT(RDLOCK_DLM_RQS_CANCELLABLE) |
					       BIT(RDLOCK_DLM_RQS_RUNNING) |
					       BIT(RDLOCK_DLM_RQS_CANCELLED),
		[RDLOCK_DLM_RQS_RUNNING]     = BIT(RDLOCK_DLM_RQS_CANCELLABLE) |
					       BIT(RDLOCK_DLM_RQS_RUNNING),
	},
};

/**
 * rdlock_dlm_req_to() - move a request to its next state
 * @req: the request.
 * @to: the new state.
 *
 * The one place a request's state changes; caller holds dls->lock. A move
 * that enum rdlock_dlm_req_state does not allow warns (once) and is
 * refused, the state stays.
 */
void rdlock_dlm_req_to(struct rdlock_dlm_req *req, enum rdlock_dlm_req_state to)
{
	if (rdlock_dlm_may_move(&req->dls->lock, &rdlock_dlm_req_life,
				req->id, req->state, to))
		req->state = to;
}

/* ------------------------------------------------------------------ */
/* Waits                                                              */

/*
 * No work item sleeps for a grant. A request whose take must wait (the
 * word is busy, a link is being made again, the name's home has no free
 * entry) or that waits for LOCAL takes returns from its work with
 * RDLOCK_DLM_REQ_ASLEEP set, and whoever clears the bit queues the work
 * again: its timer at the next poll or back-off, a kick, a cancel, the end
 * of the LOCAL takes (rdlock_dlm_local_wake()). The work then goes on
 * where it was (RDLOCK_DLM_REQ_TAKING and the words the request holds say
 * where). So the workers only run tries, and waiting requests, however
 * many one user makes, keep no other request, down-conversion or unlock
 * from a worker.
 */
void rdlock_dlm_req_wake(struct rdlock_dlm_req *req)
{
	if (test_and_clear_bit(RDLOCK_DLM_REQ_ASLEEP, &req->iflags))
		queue_work(test_bit(RDLOCK_DLM_REQ_LOCAL, &req->iflags) ?
			   rdlock_dlm_local_wq : req->dls->wq, &req->work);
}

static enum hrtimer_restart rdlock_dlm_timer_fn(struct hrtimer *timer)
{
	rdlock_dlm_req_wake(container_of(timer, struct rdlock_dlm_req, timer));
	return HRTIMER_NORESTART;
}

/*
 * @req's work returns to wait at most @ns: returns -EINPROGRESS, which its
 * callers pass up to the work function. A cancel ends the wait, and unless
 * @deaf a kick, one that came since the take's last try at once.
 */
int rdlock_dlm_sleep(struct rdlock_dlm_req *req, u64 ns, bool deaf)
{
	assign_bit(RDLOCK_DLM_REQ_DEAF, &req->iflags, deaf);
	set_bit(RDLOCK_DLM_REQ_ASLEEP, &req->iflags);
	/* Against a kick's or a cancel's rdlock_dlm_req_wake(). */
	smp_mb__after_atomic();
	hrtimer_start(&req->timer, ns_to_ktime(ns), HRTIMER_MODE_REL);
	if (!READ_ONCE(req->lkb) ||
	    (!deaf && READ_ONCE(req->kicks) != req->kicks_seen))
		rdlock_dlm_req_wake(req);
	return -EINPROGRESS;
}

/*
 * @req's work runs (again): a wait it was in is over. Its timer goes, and
 * a callback of it running now ends first: it cannot end the next wait.
 */
void rdlock_dlm_req_resume(struct rdlock_dlm_req *req)
{
	hrtimer_cancel(&req->timer);
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
 * them; names homed elsewhere stay cached. The take is tried again after
 * a back-off (not for a NOQUEUE take, @noqueue: "not now"), until it gets
 * room or the request is cancelled.
 * Return: -EINPROGRESS (the back-off) or -EAGAIN (NOQUEUE).
 */
static int rdlock_dlm_room(struct rdlock_dlm_req *req, u32 home,
			   bool noqueue)
{
	s64 waited_ms;

	rdlock_dlm_count(RDLOCK_DLM_ST_ROOM_WAIT, 1);
	rdlock_dlm_send_notice(req, RDLOCK_DLM_NOTICE_ROOM, req->to, home);
	if (noqueue)
		return -EAGAIN;
	/* Names in use fill the home: only an admin can make room. */
	waited_ms = ktime_ms_delta(ktime_get(), req->start);
	if (!test_bit(RDLOCK_DLM_REQ_ROOM_WARNED, &req->iflags) &&
	    waited_ms > RDLOCK_DLM_ROOM_WARN_MS) {
		set_bit(RDLOCK_DLM_REQ_ROOM_WARNED, &req->iflags);
		pr_warn_ratelimited("%s: a request waits for a free name entry on node %u since %lld ms: the lockspace is full of names in use (module parameter dlm_slots, %u)\n",
				    req->dls->name, home, waited_ms,
				    READ_ONCE(rdlock_dlm_slots));
	}
	req->backoff_ms = clamp_t(unsigned int, req->backoff_ms * 2,
				  RDLOCK_DLM_ROOM_MS_MIN,
				  RDLOCK_DLM_ROOM_MS_MAX);
	return rdlock_dlm_sleep(req, (u64)req->backoff_ms * NSEC_PER_MSEC,
				true);
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

/* rdlock_dlm_take()'s @how */
#define RDLOCK_DLM_TAKE_GATE	0x1	/* the gate word, not the main word */
#define RDLOCK_DLM_TAKE_NOQUEUE	0x2	/* one try: busy is -EAGAIN */
#define RDLOCK_DLM_TAKE_QUIET	0x4	/* waits for nobody: no notice */

/*
 * The back-off of @req's next poll, @ns, within its lockspace's budget
 * once its back-off grew past RDLOCK_DLM_POLL_US_FREE (a /dev/rdlock
 * lockspace's only).
 */
static u64 rdlock_dlm_poll_budgeted(struct rdlock_dlm_req *req, u64 ns)
{
	struct rdlock_dlm_ls *dls = req->dls;
	unsigned long flags;
	u64 slot;

	if (!rdlock_dlm_budgeted(dls) || req->poll_us <= RDLOCK_DLM_POLL_US_FREE)
		return ns;
	spin_lock_irqsave(&dls->lock, flags);
	slot = rdlock_dlm_poll_slot(ktime_get_ns(), ns, &dls->poll_next_ns,
				    dls->poll_gap_ns,
				    (u64)RDLOCK_DLM_BUDGET_MAX_MS * NSEC_PER_MSEC);
	spin_unlock_irqrestore(&dls->lock, flags);
	if (slot > ns)
		rdlock_dlm_count(RDLOCK_DLM_ST_POLL_BUDGETED, 1);
	return slot;
}

/*
 * Take the main or (RDLOCK_DLM_TAKE_GATE in @how) gate word of @req's
 * resource, sending the request's blocking notice first unless
 * RDLOCK_DLM_TAKE_NOQUEUE or _QUIET (a take that cannot wait for anybody).
 * Each call is one step: a try (two before the first wait: one to see
 * whether anybody is in the way, one after the notice). A take that must
 * wait returns -EINPROGRESS, its work sleeping (rdlock_dlm_sleep()), and
 * goes on when the work runs again and calls it with the same arguments
 * (%RDLOCK_DLM_REQ_TAKING) until it is taken, the request is cancelled or
 * a try fails for another reason than a busy word or a link that is
 * being made again. The wait until the next try is a random back-off up
 * to twice the last (RDLOCK_DLM_POLL_US_*), cut short by a kick (a holder
 * gave the resource back), which starts it again at the minimum, since
 * the release may not have reached the word's home yet; in a /dev/rdlock
 * lockspace, past its first few polls, within the lockspace's poll
 * budget (rdlock_dlm_poll_budgeted()). The lock
 * protocols' own waits are not used: a cancelled request would wait on
 * for a lock it then gives back at once.
 */
static int rdlock_dlm_take(struct rdlock_dlm_req *req, int mode, u32 how,
			   struct rdlock_lock **out)
{
	bool noqueue = how & RDLOCK_DLM_TAKE_NOQUEUE;
	bool quiet = how & RDLOCK_DLM_TAKE_QUIET;
	bool gate = how & RDLOCK_DLM_TAKE_GATE;
	u32 word = gate ? RDLOCK_LKF_GATE : 0;
	u8 name[RDLOCK_RES_NAME_MAX];
	struct rdlock_lock *lk;
	unsigned int fixed_ms;
	int ret;
	u64 ns;

	static_assert(RDLOCK_DLM_RESNAME_MAX + 1 <= RDLOCK_RES_NAME_MAX);
	name[0] = 'M';
	memcpy(name + 1, req->res->name, req->res->len);
	if (!test_and_set_bit(RDLOCK_DLM_REQ_TAKING, &req->iflags)) {
		req->t0 = ktime_get();
		req->poll_us = RDLOCK_DLM_POLL_US_MIN;
		req->backoff_ms = 0;
		if (!noqueue)
			WRITE_ONCE(req->waiting, gate ? RDLOCK_DLM_WAIT_GATE :
							RDLOCK_DLM_WAIT_MAIN);
	} else {
		/* Woken from a wait. */
		if (!READ_ONCE(req->lkb)) {
			lk = ERR_PTR(-ECANCELED);
			goto took;
		}
		/*
		 * Kicked: a try now, then polls from the minimum again; in a
		 * budgeted lockspace from past the free ones, so that however
		 * often a user's releases kick its waiters, each kick costs
		 * each of them one try.
		 */
		if (READ_ONCE(req->kicks) != req->kicks_seen)
			req->poll_us = rdlock_dlm_budgeted(req->dls) ?
				2 * RDLOCK_DLM_POLL_US_FREE :
				RDLOCK_DLM_POLL_US_MIN;
		else
			req->poll_us = min(2 * req->poll_us,
					   RDLOCK_DLM_POLL_US_MAX);
	}
	/*
	 * Before the request's first wait every holder in its way learns of
	 * it, whichever of its waits (gate, main word) it will be in. A try
	 * first: a request nobody is in the way of sends no notices (one to
	 * every node now, and the done notice after).
	 */
	if (!noqueue && !quiet &&
	    !test_bit(RDLOCK_DLM_REQ_NOTICED, &req->iflags)) {
		lk = rdlock_dlm_try(req, name, mode, word);
		if (!IS_ERR(lk))
			rdlock_dlm_count(RDLOCK_DLM_ST_TRY_OK, 1);
		if (!IS_ERR(lk) ||
		    (PTR_ERR(lk) != -EAGAIN && PTR_ERR(lk) != -EBUSY))
			goto took;
		rdlock_dlm_count(RDLOCK_DLM_ST_TRY_BUSY, 1);
		rdlock_dlm_notice_wait(req);
	}
	req->kicks_seen = READ_ONCE(req->kicks);
	lk = rdlock_dlm_try(req, name, mode, word);
	/*
	 * -EAGAIN: too many abandoned tries still finishing, or a link
	 * being made again (rdlock_lock()'s TRY); -ENOTCONN means a node the
	 * name lives on is declared down: over.
	 */
	if (!noqueue && IS_ERR(lk) &&
	    (PTR_ERR(lk) == -EBUSY || PTR_ERR(lk) == -EAGAIN)) {
		if (!READ_ONCE(req->lkb)) {
			lk = ERR_PTR(-ECANCELED);
			goto took;
		}
		fixed_ms = rdlock_dlm_fault_poll_ms();
		if (fixed_ms) {
			ns = (u64)fixed_ms * NSEC_PER_MSEC;
		} else {
			ns = (u64)(get_random_u32() % req->poll_us + 1) *
				NSEC_PER_USEC;
			/*
			 * Not a quiet take's (a down-conversion's, which no
			 * kick ends); a link being made again ends in a kick
			 * of every waiting request (rdlock_dlm_kick_all()).
			 */
			if (!quiet)
				ns = rdlock_dlm_poll_budgeted(req, ns);
		}
		rdlock_dlm_count(RDLOCK_DLM_ST_POLL_WAIT, 1);
		return rdlock_dlm_sleep(req, ns, false);
	}
took:
	if (IS_ERR(lk) && PTR_ERR(lk) == -ENOSPC) {
		ret = rdlock_dlm_room(req, rdlock_ls_home(req->dls->ls, name,
							  req->res->len + 1),
				      noqueue);
		if (ret == -EINPROGRESS)
			return ret;
		lk = ERR_PTR(ret);
	}
	clear_bit(RDLOCK_DLM_REQ_TAKING, &req->iflags);
	WRITE_ONCE(req->waiting, RDLOCK_DLM_WAIT_NONE);
	if (gate)
		rdlock_dlm_count_since(RDLOCK_DLM_ST_TAKE_GATE,
				       RDLOCK_DLM_ST_NS_GATE, req->t0);
	else
		rdlock_dlm_count_since(RDLOCK_DLM_ST_TAKE_MAIN,
				       RDLOCK_DLM_ST_NS_MAIN, req->t0);
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

void rdlock_dlm_drop(struct rdlock_dlm_req *req,
		     struct rdlock_lock **lk)
{
	ktime_t t0;

	if (*lk) {
		set_bit(RDLOCK_DLM_REQ_DROPPED, &req->iflags);
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
 * Enter a step a cancel may abandon (@to RDLOCK_DLM_RQS_CANCELLABLE) or
 * not (RDLOCK_DLM_RQS_RUNNING). Returns false when the request was
 * cancelled meanwhile: it then owns nothing of its lock's.
 */
static bool rdlock_dlm_step(struct rdlock_dlm_req *req,
			    enum rdlock_dlm_req_state to)
{
	unsigned long flags;
	bool live;

	spin_lock_irqsave(&req->dls->lock, flags);
	live = req->lkb;
	if (live)
		rdlock_dlm_req_to(req, to);
	spin_unlock_irqrestore(&req->dls->lock, flags);
	return live;
}

/*
 * Up-conversion or new lock to PR or EX. Returns 0 or the AST status; on
 * success @lkb's main (and gate) are set, on failure @lkb keeps what it
 * held in @from, or NL when it had to give it up and could not retake it.
 * -EINPROGRESS: a take waits (rdlock_dlm_take()); the work calls this
 * again when it runs again, and it goes on where it was: in the take under
 * way, or after the words the request holds.
 */
int rdlock_dlm_up(struct rdlock_dlm_req *req, struct rdlock_dlm_lkb *lkb,
		  int *grmode)
{
	bool noqueue = req->flags & RDLOCK_DLM_LKF_NOQUEUE;
	bool taking = test_bit(RDLOCK_DLM_REQ_TAKING, &req->iflags);
	/* A take under way is a waiting one: it set @waiting to its word. */
	bool main_taking = taking &&
			   READ_ONCE(req->waiting) == RDLOCK_DLM_WAIT_MAIN;
	u32 how = noqueue ? RDLOCK_DLM_TAKE_NOQUEUE : 0;
	enum rdlock_dlm_req_state wait = noqueue ? RDLOCK_DLM_RQS_RUNNING :
						   RDLOCK_DLM_RQS_CANCELLABLE;
	struct rdlock_lock *again = NULL;
	int ret;

	if (req->to == RDLOCK_DLM_LOCK_NL)	/* a new lock at NL */
		return rdlock_dlm_step(req, RDLOCK_DLM_RQS_RUNNING) ? 0 :
								    -ECANCELED;
	if (test_bit(RDLOCK_DLM_REQ_RETAKE, &req->iflags))
		goto retake;
	if (req->to == RDLOCK_DLM_LOCK_PR) {
		if (!taking && !rdlock_dlm_step(req, wait))
			return -ECANCELED;
		return rdlock_dlm_take(req, RDLOCK_DLM_LOCK_PR, how, &req->main);
	}

	/*
	 * EX: the gate first, so that nobody else gets EX from now on. (A
	 * cancel takes the gate away from a wait for the main word.)
	 */
	if (!req->gate && !main_taking) {
		if (!taking && !rdlock_dlm_step(req, wait))
			return -ECANCELED;
		ret = rdlock_dlm_take(req, RDLOCK_DLM_LOCK_EX,
				      how | RDLOCK_DLM_TAKE_GATE, &req->gate);
		if (ret)
			return ret;
		taking = false;
	}
	if (req->from != RDLOCK_DLM_LOCK_PR) {
		if (!taking && !rdlock_dlm_step(req, wait))
			return -ECANCELED;
		return rdlock_dlm_take(req, RDLOCK_DLM_LOCK_EX, how, &req->main);
	}

	/*
	 * PR->EX: past this point the request is committed (a cancel finds
	 * it granted); it gives up the shared hold, which the gate keeps
	 * anybody else from turning into EX, and waits for EX.
	 */
	if (!taking) {
		if (!rdlock_dlm_step(req, RDLOCK_DLM_RQS_RUNNING))
			return -ECANCELED;
		rdlock_dlm_drop(req, &lkb->main);
	}
	ret = rdlock_dlm_take(req, RDLOCK_DLM_LOCK_EX, how, &req->main);
	if (!ret || ret == -EINPROGRESS)
		return ret;
	req->ret = ret;
	set_bit(RDLOCK_DLM_REQ_RETAKE, &req->iflags);
retake:
	/*
	 * Back to PR. The gate is ours, so nobody holds or can get EX on
	 * the main word: with the CAS lock (a failed try leaves nothing
	 * behind) PR is granted at once, but for a link being made again.
	 */
	ret = rdlock_dlm_take(req, RDLOCK_DLM_LOCK_PR, RDLOCK_DLM_TAKE_QUIET,
			      &again);
	if (ret == -EINPROGRESS)
		return ret;
	clear_bit(RDLOCK_DLM_REQ_RETAKE, &req->iflags);
	if (ret)
		*grmode = RDLOCK_DLM_LOCK_NL;
	else
		lkb->main = again;
	rdlock_dlm_drop(req, &req->gate);
	return req->ret;
}

int rdlock_dlm_lvb_get(struct rdlock_lock *lk, void *buf, u32 *f)
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
		clear_bit(RDLOCK_DLM_LKB_LVB_SEEN, &lkb->iflags);
		return;
	}
	if (test_bit(RDLOCK_DLM_LKB_LVB_SEEN, &lkb->iflags)) {
		words = 0;
		for (i = 0; i < RDLOCK_DLM_LVB_LEN / 8; i++)
			if (memcmp(buf + 8 * i, lkb->lvb_seen + 8 * i, 8))
				words |= BIT(i);
	}
	clear_bit(RDLOCK_DLM_LKB_LVB_SEEN, &lkb->iflags);
	if (!words && test_bit(RDLOCK_DLM_LKB_LVB_VALID, &lkb->iflags)) {
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

	clear_bit(RDLOCK_DLM_LKB_LVB_SEEN, &lkb->iflags);
	if (!(req->flags & RDLOCK_DLM_LKF_VALBLK))
		return;
	ret = rdlock_dlm_lvb_get(main, lvb, &f);
	assign_bit(RDLOCK_DLM_LKB_LVB_VALID, &lkb->iflags,
		   !ret && (f & RDLOCK_DLM_LVB_VALID));
	assign_bit(RDLOCK_DLM_LKB_LVB_SEEN, &lkb->iflags,
		   !ret && req->to == RDLOCK_DLM_LOCK_EX);
	if (test_bit(RDLOCK_DLM_LKB_LVB_SEEN, &lkb->iflags))
		memcpy(lkb->lvb_seen, lvb, sizeof(lvb));
	/* Never stored for this name: zeroes, as fs/dlm gives. */
	if (!test_bit(RDLOCK_DLM_LKB_LVB_VALID, &lkb->iflags)) {
		memset(lvb, 0, sizeof(lvb));
		req->sb_flags |= RDLOCK_DLM_SBF_VALNOTVALID;
	}
	memcpy(lkb->lksb->sb_lvbptr, lvb, sizeof(lvb));
}

/*
 * Down-conversion or same mode: never waits for others, only (EX->PR) for
 * a link being made again (-EINPROGRESS: as rdlock_dlm_up()).
 */
static int rdlock_dlm_down(struct rdlock_dlm_req *req,
			   struct rdlock_dlm_lkb *lkb, int *grmode)
{
	int ret = 0;

	if (!test_bit(RDLOCK_DLM_REQ_TAKING, &req->iflags)) {
		rdlock_dlm_step(req, RDLOCK_DLM_RQS_RUNNING);
		if (req->to == req->from)
			return 0;
		if (req->from == RDLOCK_DLM_LOCK_EX)
			rdlock_dlm_lvb_release(req, lkb);
		rdlock_dlm_drop(req, &lkb->main);
	}
	if (req->to == RDLOCK_DLM_LOCK_PR) {
		/*
		 * EX->PR under the gate: no EX ticket but ours was in the
		 * word, so this is granted without waiting for anybody.
		 */
		ret = rdlock_dlm_take(req, RDLOCK_DLM_LOCK_PR,
				      RDLOCK_DLM_TAKE_QUIET, &lkb->main);
		if (ret == -EINPROGRESS)
			return ret;
		if (ret)
			*grmode = RDLOCK_DLM_LOCK_NL;
	}
	rdlock_dlm_drop(req, &lkb->gate);
	return ret;
}

void rdlock_dlm_req_free(struct rdlock_dlm_req *req)
{
	struct rdlock_dlm_ls *dls = req->dls;

	rdlock_dlm_count(RDLOCK_DLM_ST_NS_REQ,
			 ktime_to_ns(ktime_sub(ktime_get(), req->start)));
	/* Nothing wakes it any more, but a timer may still be running. */
	WARN_ON_ONCE(test_bit(RDLOCK_DLM_REQ_ASLEEP, &req->iflags) ||
		     !list_empty(&req->local_wait_node));
	hrtimer_cancel(&req->timer);
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
	rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, RDLOCK_DLM_EUNLOCK, 0,
			    RDLOCK_DLM_CBF_FINAL);
	spin_unlock_irqrestore(&dls->lock, flags);
	/* The lock's reference on the resource (a parked @req has its own). */
	rdlock_dlm_res_put(dls, res);
	return park;
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

	rdlock_dlm_req_resume(req);
	if (!rdlock_dlm_wait_local(req))
		goto asleep;
	lkb = req->lkb;
	if (rdlock_dlm_req_unlock(req)) {
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
		if (ret == -EINPROGRESS)
			goto asleep;
		/*
		 * Granted: no cancel from here on, so @lkb and its lksb stay
		 * the caller's (rdlock_dlm_unlock() gets -EBUSY meanwhile).
		 */
		if (!ret && req->to != RDLOCK_DLM_LOCK_NL &&
		    rdlock_dlm_step(req, RDLOCK_DLM_RQS_RUNNING))
			rdlock_dlm_lvb_grant(req, lkb, req->main);
	} else {
		ret = rdlock_dlm_down(req, lkb, &grmode);
		if (ret == -EINPROGRESS)
			goto asleep;
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
		rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, ret, 0,
				    RDLOCK_DLM_CBF_FINAL);
		spin_unlock_irqrestore(&dls->lock, flags);
		rdlock_dlm_drop(req, &req->main);
		rdlock_dlm_drop(req, &req->gate);
		rdlock_dlm_res_put(dls, req->res);
		goto out;
	}
	if (lkb->state == RDLOCK_DLM_LKS_NEW)
		rdlock_dlm_lkb_to(lkb, RDLOCK_DLM_LKS_GRANTED);
	rdlock_dlm_ast(lkb, req, grmode, ret);
	spin_unlock_irqrestore(&dls->lock, flags);
	/* A failed up-conversion gives back the steps it got. */
	rdlock_dlm_drop(req, &req->main);
	rdlock_dlm_drop(req, &req->gate);
out:
	if (test_bit(RDLOCK_DLM_REQ_DROPPED, &req->iflags))
		rdlock_dlm_kick_waiters(req);
	memalloc_nofs_restore(nofs);
	rdlock_dlm_req_free(req);
	return;
asleep:
	/* Queued again once the wait is over: @req is not ours meanwhile. */
	memalloc_nofs_restore(nofs);
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
	INIT_LIST_HEAD(&req->local_wait_node);
	hrtimer_init(&req->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	req->timer.function = rdlock_dlm_timer_fn;
	req->dls = dls;
	req->lkb = lkb;
	return req;
}

/* Make @req @lkb's request, counted; caller holds dls->lock. */
void rdlock_dlm_req_setup(struct rdlock_dlm_lkb *lkb,
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
	rdlock_dlm_req_to(req, !rdlock_dlm_req_unlock(req) &&
			  req->to > req->from &&
			  req->to != RDLOCK_DLM_LOCK_NL &&
			  !(req->flags & RDLOCK_DLM_LKF_NOQUEUE) ?
			  RDLOCK_DLM_RQS_CANCELLABLE : RDLOCK_DLM_RQS_RUNNING);
	req->start = ktime_get();
	atomic64_inc(&rdlock_dlm_st_req[rdlock_dlm_mode_idx(req->from)]
		     [rdlock_dlm_req_unlock(req) ? 0 :
		      rdlock_dlm_mode_idx(req->to)]);
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
	queue_work(lkb->dls->wq, &req->work);
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
	if (!lkb || lkb->state == RDLOCK_DLM_LKS_DEAD)
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
		rdlock_member_granting() && list_empty(&res->locks) &&
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
	if (!req || rdlock_dlm_req_unlock(req) ||
	    req->state != RDLOCK_DLM_RQS_CANCELLABLE)
		return;
	req->lkb = NULL;
	rdlock_dlm_req_to(req, RDLOCK_DLM_RQS_CANCELLED);
	lkb->req = NULL;
	/* A waiting take ends now, with nothing taken, as a wait for LOCAL. */
	rdlock_dlm_req_wake(req);
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
	rdlock_dlm_queue_cb(lkb, RDLOCK_DLM_CB_AST, RDLOCK_DLM_ECANCEL, 0,
			    new ? RDLOCK_DLM_CBF_FINAL : 0);
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
		set_bit(RDLOCK_DLM_REQ_UNLOCK, &req->iflags);
	}
	spin_lock_irqsave(&dls->lock, irq);
	lkb = idr_find(&dls->lkids, lkid);
	if (!lkb || lkb->state == RDLOCK_DLM_LKS_DEAD) {
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
	if (!lkb || lkb->state == RDLOCK_DLM_LKS_DEAD) {
		ret = -ENOENT;
	} else {
		st->grmode = lkb->grmode;
		st->rqmode = lkb->req && !rdlock_dlm_req_unlock(lkb->req) ?
			     lkb->req->to : RDLOCK_DLM_LOCK_IV;
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
 * rdlock_dlm_check_cluster() - is @cluster the name of this node's cluster
 * @cluster: a cluster name, as a file system's disk names it (OCFS2's
 *	mkfs.ocfs2 --cluster-name); NUL-terminated.
 *
 * As fs/dlm's dlm_new_lockspace() compares its @cluster with the name its
 * cluster engine gave: a disk made for another cluster is not mounted
 * with this one's locks.
 *
 * Return: 0 when it is this cluster's name (rdlockctl config --name);
 * -EBADR when it is another; -ENOKEY when this cluster has no name, which
 * the caller may accept (nothing to compare) or refuse.
 */
int rdlock_dlm_check_cluster(const char *cluster)
{
	char name[RDLOCK_CLUSTER_NAME_MAX + 1];

	BUILD_BUG_ON(RDLOCK_DLM_CLUSTER_NAME_MAX != RDLOCK_CLUSTER_NAME_MAX);
	rdlock_xport_cluster_name(name);
	if (!name[0])
		return -ENOKEY;
	return strcmp(name, cluster) ? -EBADR : 0;
}
EXPORT_SYMBOL_GPL(rdlock_dlm_check_cluster);

/*
 * rdlock_dlm_open(), its requests' work on @wq: rdlock_dlm_wq, or for the
 * uapi's lockspaces rdlock_dlm_user_wq.
 */
static struct rdlock_dlm_ls *__rdlock_dlm_open(const char *name, u32 node_id,
					       const struct rdlock_dlm_ops *ops,
					       void *ops_arg,
					       struct workqueue_struct *wq)
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
	memcpy(dls->dlm_name, name, len);
	if (len + strlen(RDLOCK_DLM_LS_PREFIX) < sizeof(dls->name))
		snprintf(dls->name, sizeof(dls->name),
			 RDLOCK_DLM_LS_PREFIX "%s", name);
	else
		snprintf(dls->name, sizeof(dls->name),
			 RDLOCK_DLM_LS_HASHED_PREFIX "%016llx",
			 rdlock_dlm_hash(name, len));
	dls->ops = ops;
	dls->ops_arg = ops_arg;
	dls->wq = wq;
	if (wq == rdlock_dlm_user_wq)
		dls->poll_gap_ns = NSEC_PER_SEC / RDLOCK_DLM_USER_POLLS;
	spin_lock_init(&dls->lock);
	idr_init(&dls->lkids);
	hash_init(dls->res);
	INIT_LIST_HEAD(&dls->notices);
	INIT_LIST_HEAD(&dls->waits);
	mutex_init(&dls->notice_mutex);
	INIT_LIST_HEAD(&dls->local_waiters);
	INIT_LIST_HEAD(&dls->unpublished);
	INIT_LIST_HEAD(&dls->parked);
	INIT_DELAYED_WORK(&dls->age_work, rdlock_dlm_age_work);
	INIT_WORK(&dls->trim_work, rdlock_dlm_trim_work);
	INIT_WORK(&dls->repeat_work, rdlock_dlm_repeat_work);
	INIT_LIST_HEAD(&dls->queries);
	INIT_WORK(&dls->dump_work, rdlock_dlm_dump_work);

	mutex_lock(&rdlock_dlm_mutex);
	list_for_each_entry(o, &rdlock_dlm_list, list) {
		if (!strcmp(o->name, dls->name)) {
			ret = -EEXIST;
			goto err;
		}
	}
	attr = rdlock_dlm_attr;
	attr.slots = READ_ONCE(rdlock_dlm_slots);
	dls->ls = rdlock_ls_open(dls->name, &attr);
	if (IS_ERR(dls->ls)) {
		ret = PTR_ERR(dls->ls);
		goto err;
	}
	ret = rdlock_ls_notice_register(dls->ls, &rdlock_dlm_sink_ops, dls);
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

/**
 * rdlock_dlm_with_ls() - call @fn on one DLM lockspace of this node
 * @core: the rdlock lockspace behind it ("dlm." and its name, or "dlmh."
 *	and a hash).
 * @fn: called with the lockspace, under rdlock_dlm_mutex: it may take
 *	rdlock_dlm_ls.lock, not wait for the lockspace's requests.
 * @arg: its second argument.
 *
 * Return: what @fn returns, -EINTR, or -ENOENT when no DLM lockspace is
 * @core.
 */
int rdlock_dlm_with_ls(const char *core,
		       int (*fn)(struct rdlock_dlm_ls *dls, void *arg),
		       void *arg)
{
	struct rdlock_dlm_ls *dls;
	int ret = -ENOENT;

	if (mutex_lock_killable(&rdlock_dlm_mutex))
		return -EINTR;
	list_for_each_entry(dls, &rdlock_dlm_list, list) {
		if (!strcmp(dls->name, core)) {
			ret = fn(dls, arg);
			break;
		}
	}
	mutex_unlock(&rdlock_dlm_mutex);
	return ret;
}

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
	return __rdlock_dlm_open(name, node_id, ops, ops_arg, rdlock_dlm_wq);
}
EXPORT_SYMBOL_GPL(rdlock_dlm_open);

/*
 * rdlock_dlm_open() for /dev/rdlock (dev_dlm.c): its users' requests run
 * in a workqueue of their own, so that however many of them run at once
 * none of a kernel user's (a file system's) waits for a worker.
 */
struct rdlock_dlm_ls *rdlock_dlm_open_user(const char *name, u32 node_id)
{
	return __rdlock_dlm_open(name, node_id, NULL, NULL,
				 rdlock_dlm_user_wq);
}

/**
 * rdlock_dlm_close() - close a DLM lockspace; may sleep
 * @dls: the lockspace.
 *
 * Every lock must have had its final AST (its unlock's, or that of its
 * new request, cancelled or failed): with a lock left the lockspace stays
 * open and untouched, as fs/dlm's dlm_release_lockspace() without force
 * leaves it. Then waits for cancelled requests still giving back what
 * they got.
 *
 * Return: 0 (@dls is gone), or -EBUSY while a lock is left.
 */
int rdlock_dlm_close(struct rdlock_dlm_ls *dls)
{
	struct rdlock_dlm_notice *n, *tmp;
	unsigned long flags;
	bool busy;

	spin_lock_irqsave(&dls->lock, flags);
	busy = !idr_is_empty(&dls->lkids);
	spin_unlock_irqrestore(&dls->lock, flags);
	if (busy)
		return -EBUSY;
	/* LOCKS of every node end now, and ask nobody from now on. */
	rdlock_dlm_dump_abort(dls);
	wait_var_event(&dls->refs, !atomic_read(&dls->refs));
	mutex_lock(&rdlock_dlm_mutex);
	list_del(&dls->list);
	mutex_unlock(&rdlock_dlm_mutex);
	/* A LOCKS that found it before it left the list. */
	wait_var_event(&dls->refs, !atomic_read(&dls->refs));
	rdlock_ls_notice_unregister(dls->ls);
	/* No notice queues them now; no lock, no LOCAL grant is left. */
	cancel_work_sync(&dls->trim_work);
	cancel_work_sync(&dls->repeat_work);
	cancel_work_sync(&dls->dump_work);
	cancel_delayed_work_sync(&dls->age_work);
	/*
	 * The other nodes ask it for its locks no more; after its last
	 * repeat notice, which would make them take it for open again.
	 */
	rdlock_dlm_send_msg(dls, &(struct rdlock_dlm_notice_msg){
				.kind = RDLOCK_DLM_NOTICE_BYE }, U32_MAX);
	rdlock_ls_close(dls->ls);
	list_for_each_entry_safe(n, tmp, &dls->notices, node) {
		kfree(n);
		rdlock_dlm_count(RDLOCK_DLM_ST_KNOWN, -1);
	}
	idr_destroy(&dls->lkids);
	kfree(dls);
	return 0;
}
EXPORT_SYMBOL_GPL(rdlock_dlm_close);

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
	/* No file system waits for what a /dev/rdlock user asked for. */
	rdlock_dlm_user_wq = alloc_workqueue("rdlock_dlm_user", WQ_UNBOUND,
					     0);
	if (!rdlock_dlm_cb_wq || !rdlock_dlm_local_wq || !rdlock_dlm_user_wq) {
		if (rdlock_dlm_cb_wq)
			destroy_workqueue(rdlock_dlm_cb_wq);
		if (rdlock_dlm_local_wq)
			destroy_workqueue(rdlock_dlm_local_wq);
		if (rdlock_dlm_user_wq)
			destroy_workqueue(rdlock_dlm_user_wq);
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
		/* On system_unbound_wq, which our exit does not flush. */
		cancel_work_sync(&dls->dump_work);
	}
	mutex_unlock(&rdlock_dlm_mutex);
	/* Requests queue callbacks: their queues go first. */
	destroy_workqueue(rdlock_dlm_local_wq);
	destroy_workqueue(rdlock_dlm_user_wq);
	destroy_workqueue(rdlock_dlm_wq);
	destroy_workqueue(rdlock_dlm_cb_wq);
}
