// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: the locks of this node's users (lockspace.c has the
 * overview): rdlock_lock() and its variants, conversion, value blocks and
 * release, through the lockspace's protocol; the exported kernel API of
 * locks.
 */
#include <linux/completion.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>
#include <asm/unaligned.h>

#include "lockspace-pri.h"
#include "lockspace_errors.h"
#include "uapi_check.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

static_assert(RDLOCK_LOCK_SH == (int)RDLOCK_MODE_SHARED);
static_assert(RDLOCK_LOCK_EX == (int)RDLOCK_MODE_EXCLUSIVE);
static_assert(RDLOCK_LOCK_UP == (int)RDLOCK_MODE_UPDATE);
/* A value block and its state word come with the CAS that takes a lock. */
static_assert(RDLOCK_LS_LVB_SLOTS <= RDLOCK_XPORT_CAS_READ_MAX);
static_assert(sizeof_field(struct rdlock_lock, lvb_read) ==
	      RDLOCK_LS_LVB_SLOTS * sizeof(u64));

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

/* A call's error, as its caller sees it (rdlock_ls_error_code()). */
static int rdlock_ls_error(const struct rdlock_ls *ls, int ret)
{
	return rdlock_ls_error_code(ret, ret && rdlock_ls_stale(ls));
}

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
	INIT_LIST_HEAD(&lk->res_node);
	mutex_init(&lk->op_mutex);
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
	if (list_empty(&lk->ls_node)) {
		list_add_tail(&lk->ls_node, &ls->locks);
		list_add_tail(&lk->res_node, &lk->res->locks);
	}
	spin_unlock(&ls->locks_lock);
}

static void rdlock_lock_unlist(struct rdlock_lock *lk)
{
	spin_lock(&lk->ls->locks_lock);
	list_del_init(&lk->ls_node);
	list_del_init(&lk->res_node);
	spin_unlock(&lk->ls->locks_lock);
}

/*
 * An acquisition's -ENOTCONN from @node while the link to it is being
 * made again (rdlock_ls_blip()): the acquisition waited through the blip
 * until its @deadline or a fatal signal, so it says which (a TRY's
 * -ETIMEDOUT becomes -EAGAIN): a blip fails no lock that may wait.
 */
static int rdlock_lock_blip_error(const struct rdlock_lock *lk, u32 node,
				  unsigned long deadline, int ret)
{
	if (!rdlock_ls_blip(lk->ls, node, ret))
		return ret;
	if (fatal_signal_pending(current))
		return -EINTR;
	if (deadline && time_after_eq(jiffies, deadline))
		return -ETIMEDOUT;
	return ret;
}

/*
 * An error from @node that moves the name rather than failing the
 * acquisition (rdlock_ls_error_moves()). The lockspace's own loss (this
 * node cut off, its epoch over) is seen before, at the restart
 * (rdlock_ls_stale()).
 */
static bool rdlock_lock_moves(u32 node, int ret)
{
	return ret && rdlock_ls_error_moves(ret, rdlock_xport_node_fenced(node));
}

/*
 * Before an acquisition starts again (its name moved, or it was granted
 * in a word the name left): a fatal signal ends it, so does a waiting
 * request's deadline, and a try after RDLOCK_LOCK_TRY_STARTS starts; from
 * the third start on it pauses @starts ms (at most 20), so that a name
 * whose every new place fails at once spins no CPU.
 */
#define RDLOCK_LOCK_TRY_STARTS	8

static int rdlock_lock_restart(const struct rdlock_lock *lk,
			       unsigned long deadline, unsigned int starts)
{
	bool try = lk->opts.flags & RDLOCK_LKF_TRY;

	if (fatal_signal_pending(current))
		return -EINTR;
	if (try ? starts > RDLOCK_LOCK_TRY_STARTS :
		  deadline && time_after_eq(jiffies, deadline))
		return -ETIMEDOUT;
	if (starts > 2 &&
	    schedule_timeout_killable(msecs_to_jiffies(min(starts, 20U))) &&
	    fatal_signal_pending(current))
		return -EINTR;
	return 0;
}

static int __rdlock_lock_acquire(struct rdlock_lock *lk)
{
	unsigned long deadline = rdlock_deadline(&lk->opts);
	struct rdlock_ls *ls = lk->ls;
	struct rdlock_res *res = lk->res;
	u32 entry_home, home, slot, gen;
	unsigned int starts = 0;
	int ret = 0;

again:
	if (rdlock_ls_stale(ls))
		return -ESHUTDOWN;
	if (starts++) {
		ret = rdlock_lock_restart(lk, deadline, starts);
		if (ret)
			goto failed;
	}
	/* Nothing is granted while the cluster engine has us stopped. */
	ret = rdlock_member_wait(ls, deadline);
	if (ret)
		goto failed;
	/* Another task resolving the name may wait on the home for seconds. */
	if (mutex_lock_killable(&res->resolve_mutex))
		return -EINTR;
	ret = rdlock_res_wait_moved(ls, res, deadline);
	if (!ret && !res->resolved)
		ret = rdlock_res_resolve(ls, res, deadline);
	entry_home = res->entry_home;
	home = res->home;
	slot = res->slot;
	gen = res->gen;
	mutex_unlock(&res->resolve_mutex);
	/* The wait for a move ran out (a try's at once): no start again. */
	if (ret == -ETIMEDOUT && deadline && time_after_eq(jiffies, deadline))
		goto failed;
	if (rdlock_lock_moves(entry_home, ret))
		goto again;
	ret = rdlock_lock_blip_error(lk, entry_home, deadline, ret);
failed:
	if (ret == -ETIMEDOUT && lk->opts.flags & RDLOCK_LKF_TRY)
		ret = -EAGAIN;
	if (ret)
		return rdlock_ls_error(ls, ret);

	memset(&lk->ticket, 0, sizeof(lk->ticket));
	lk->ticket.node = home;
	lk->ticket.slot = slot + !!(lk->opts.flags & RDLOCK_LKF_GATE);
	lk->ticket.mode = (enum rdlock_mode)lk->mode;
	lk->ticket.k = lk->opts.lease_slots;
	lk->ticket.incarnation = ls->incarnation[home];
	lk->ticket.quota = lk->quota;
	lk->lvb_read_ok = false;
	if (lk->opts.flags & RDLOCK_LKF_LVB) {
		lk->ticket.read_slot = rdlock_lvb_state_slot(ls, slot);
		lk->ticket.read_count = RDLOCK_LS_LVB_SLOTS;
		lk->ticket.read_vals = lk->lvb_read;
	}
	rdlock_lock_set_state(lk, RDLOCK_LK_WAITING);
	trace_rdlock_lock_request(lk, 0);
	ret = ls->ops->acquire(&ls->cfg, &lk->ticket, deadline);
	lk->ticket.quota = NULL;	/* its owner's, for this call only */
	if (rdlock_lock_moves(home, ret))
		goto again;
	ret = rdlock_lock_blip_error(lk, lk->ticket.node, deadline, ret);
	if (ret == -ETIMEDOUT && lk->opts.flags & RDLOCK_LKF_TRY)
		ret = -EAGAIN;
	/* Failed because the tables went: say so, not how it showed. */
	ret = rdlock_ls_error(ls, ret);
	trace_rdlock_lock_done(lk, ret);
	if (ret) {
		rdlock_lock_unlist(lk);
		return ret;
	}
	/*
	 * Granted in a word the name has left, or on a node cut off whose
	 * move (rdlock_ls_rehome()) may not see this lock, or on an heir
	 * before the locks of a handover moved there: give it back, and
	 * take the name where it is now. Under locks_lock, as the move's
	 * count and its look for the granted locks of the name.
	 */
	spin_lock(&ls->locks_lock);
	if (res->gen != gen || rdlock_xport_node_fenced(home) ||
	    rdlock_xport_node_fenced(entry_home) ||
	    rdlock_ls_handover_pending() != U32_MAX) {
		spin_unlock(&ls->locks_lock);
		lk->ticket.post = true;
		lk->ticket.pin = &res->posted;
		ls->ops->release(&ls->cfg, &lk->ticket);
		goto again;
	}
	lk->gen = gen;
	lk->state = RDLOCK_LK_GRANTED;
	lk->since = ktime_get();
	spin_unlock(&ls->locks_lock);
	lk->lvb_read_ok = lk->ticket.read_got;
	if (lk->lvb_read_ok)
		atomic64_inc(&ls->lvb_reads_spared);
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
	/* Listed once it waited, maybe before it started again. */
	if (ret)
		rdlock_lock_unlist(lk);
	return ret;
}

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
 * timeout while RDLOCK_LS_FINISHING_MAX such calls are under way or their
 * given-up tickets still finishing in the background (nothing taken),
 * -EINTR on a fatal signal, -ENOSPC when the home node has no free name
 * entry, -ESHUTDOWN when the lockspace was lost (rdlock_ls_stale()), or a
 * transport error.
 * A link that is being made again fails nothing: the call waits for it as
 * for a busy lock (a TRY finds the lock busy: -EAGAIN; a timeout:
 * -ETIMEDOUT). Nor does a node declared down that the name lives on: the
 * call waits until the declaration is done here and takes the name where
 * it moved (rdlock_res_wait_moved()).
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
	queue_work(rdlock_ls_async_wq, &lk->work);
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
 * -EAGAIN too when the name was moving off a node declared down (still
 * held in RDLOCK_LOCK_UP: try again); -ENOTCONN when the lock was lost in
 * such a move (it holds nothing: rdlock_unlock() only frees it);
 * -ESHUTDOWN when the lockspace was lost.
 */
int rdlock_convert(struct rdlock_lock *lk, enum rdlock_lock_mode mode,
		   const struct rdlock_lock_opts *opts)
{
	struct rdlock_lock_opts o = opts ? *opts : (struct rdlock_lock_opts){};
	struct rdlock_ls *ls = lk->ls;
	unsigned int nofs;
	u32 node;
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
	/*
	 * A name moving off a node declared down: no upgrade before every
	 * survivor's locks of it are in its new word (its readers too).
	 */
	node = READ_ONCE(lk->res->moved_from);
	if (node != U32_MAX && rdlock_xport_node_fenced(node)) {
		ret = rdlock_ls_release_wait(ls, node, rdlock_deadline(&o));
		if (ret == -ETIMEDOUT && o.flags & RDLOCK_LKF_TRY)
			ret = -EAGAIN;
		if (ret)
			return ret;
	}
	mutex_lock(&lk->op_mutex);
	if (lk->state == RDLOCK_LK_LOST) {
		mutex_unlock(&lk->op_mutex);
		return -ENOTCONN;
	}
	lk->lvb_read_ok = false;
	rdlock_lock_set_state(lk, RDLOCK_LK_CONVERTING);
	nofs = memalloc_nofs_save();
	ret = ls->ops->upgrade(&ls->cfg, &lk->ticket, rdlock_deadline(&o));
	memalloc_nofs_restore(nofs);
	/*
	 * Upgraded in a word its name is leaving (its move waits for this
	 * mutex): not in the name's new word, where it moves as an update
	 * lock.
	 */
	spin_lock(&ls->locks_lock);
	if (!ret && (lk->gen != lk->res->gen ||
		     rdlock_xport_node_fenced(lk->ticket.node))) {
		lk->ticket.upgraded = false;
		ret = -EAGAIN;
	}
	spin_unlock(&ls->locks_lock);
	if (rdlock_lock_moves(lk->ticket.node, ret))
		ret = -EAGAIN;
	if (ret == -ETIMEDOUT && o.flags & RDLOCK_LKF_TRY)
		ret = -EAGAIN;
	ret = rdlock_ls_error(ls, ret);
	trace_rdlock_convert_done(lk, ret);
	rdlock_lock_set_state(lk, RDLOCK_LK_GRANTED);
	mutex_unlock(&lk->op_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlock_convert);

/* First slot of @lk's value block: after the tag word and the lock. */
static u32 rdlock_lvb_slot(const struct rdlock_lock *lk)
{
	/* The lock's own word (under its op_mutex), its name's main word. */
	return rdlock_lvb_state_slot(lk->ls, lk->ticket.slot -
				     !!(lk->opts.flags & RDLOCK_LKF_GATE));
}

static int rdlock_lvb_check(const struct rdlock_lock *lk)
{
	if (lk->state == RDLOCK_LK_LOST)
		return -ENOTCONN;
	if (!(lk->ls->attr.flags & RDLOCK_LS_LVB) || !lk->res->resolved)
		return -EINVAL;
	return rdlock_ls_stale(lk->ls) ? -ESHUTDOWN : 0;
}

/* The bytes of value block words @w (state word first) into @buf. */
static void rdlock_lvb_bytes(const u64 *w, void *buf)
{
	u32 i;

	for (i = 0; i < RDLOCK_LVB_LEN / 8; i++)
		put_unaligned_le64(w[1 + i], buf + 8 * i);
}

static int __rdlock_lvb_get(struct rdlock_lock *lk, void *buf, u32 *flags)
{
	struct rdlock_ls *ls = lk->ls;
	u64 w[RDLOCK_LS_LVB_SLOTS];	/* the state word, then the bytes */
	unsigned int nofs;
	int ret = rdlock_lvb_check(lk);

	if (ret)
		return ret;
	if (lk->lvb_read_ok) {
		memcpy(w, lk->lvb_read, sizeof(w));
	} else {
		nofs = memalloc_nofs_save();
		ret = rdlock_ls_read_range(ls, lk->ticket.node,
					   rdlock_lvb_slot(lk),
					   buf ? RDLOCK_LS_LVB_SLOTS : 1, w);
		memalloc_nofs_restore(nofs);
		if (ret)
			return rdlock_ls_error(ls, ret);
		/*
		 * Current while the lock is held and stores nothing; not a
		 * gate's (it does not exclude the main word's writers), nor
		 * one without flags (a move's restore may still come).
		 */
		if (buf && !(lk->opts.flags & RDLOCK_LKF_GATE) &&
		    (w[0] & RDLOCK_LS_TAG_MASK) == lk->res->tag &&
		    (w[0] & RDLOCK_LVB_FLAGS_MASK)) {
			memcpy(lk->lvb_read, w, sizeof(w));
			lk->lvb_read_ok = true;
		}
	}
	if (buf)
		rdlock_lvb_bytes(w, buf);
	*flags = (w[0] & RDLOCK_LS_TAG_MASK) == lk->res->tag ?
		 w[0] & RDLOCK_LVB_FLAGS_MASK : 0;
	return 0;
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
 * with %RDLOCK_LKF_LVB whose grant read the block, or that read the bytes
 * here once, returns that copy, with no remote operation, until it stores
 * one or is converted.
 *
 * Return: 0, -EINVAL (no value blocks, or @lk not granted), -ENOTCONN
 * (@lk was lost when its name moved off a node declared down), -ESHUTDOWN
 * or a transport error.
 */
int rdlock_lvb_get(struct rdlock_lock *lk, void *buf, u32 *flags)
{
	int ret;

	/* The lock does not move meanwhile (rdlock_ls_rehome()). */
	mutex_lock(&lk->op_mutex);
	ret = __rdlock_lvb_get(lk, buf, flags);
	mutex_unlock(&lk->op_mutex);
	return ret;
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

static int __rdlock_lvb_set_words(struct rdlock_lock *lk, const void *buf,
				  u8 words, u32 flags)
{
	struct rdlock_ls *ls = lk->ls;
	u32 slot, home = lk->ticket.node;
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

/**
 * rdlock_lvb_restore() - a moved lock's copy of its value block, stored
 * @lk: a granted lock that moved with its name (rdlock_ls_rehome()); the
 *	caller holds its op_mutex. Its copy (@lk->lvb_read) is the state
 *	word and bytes it last read of its name (its grant's, or
 *	rdlock_lvb_get()'s), current since: the lock held the name
 *	throughout, and a store ends the copy.
 *
 * Writes them into the name's new place when they are this name's with
 * the user's flags, so that a survivor's copy keeps the value across the
 * move; else the new place stays without flags (not valid). The copy is
 * the lock's again (@lk->lvb_read_ok) once the new place holds it.
 */
void rdlock_lvb_restore(struct rdlock_lock *lk)
{
	const u64 *copy = lk->lvb_read;
	u32 flags = copy[0] & RDLOCK_LVB_FLAGS_MASK;
	u8 buf[RDLOCK_LVB_LEN];
	u64 state;
	int ret;

	if ((copy[0] & RDLOCK_LS_TAG_MASK) != lk->res->tag || !flags ||
	    lk->opts.flags & RDLOCK_LKF_GATE)
		return;
	/* Another survivor's lock restored it: the same value. */
	ret = rdlock_ls_op(lk->ls, lk->ticket.node, RDLOCK_XOP_READ,
			   rdlock_lvb_slot(lk), 0, 0, &state);
	if (ret || state != copy[0]) {
		rdlock_lvb_bytes(copy, buf);
		ret = __rdlock_lvb_set_words(lk, buf, 0xff, flags);
		if (ret) {
			pr_warn_ratelimited("lockspace %s: a moved lock's value block not restored (%d)\n",
					    lk->ls->name, ret);
			return;
		}
	}
	lk->lvb_read_ok = true;
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
	int ret;

	mutex_lock(&lk->op_mutex);
	ret = __rdlock_lvb_set_words(lk, buf, words, flags);
	mutex_unlock(&lk->op_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlock_lvb_set_words);

/**
 * rdlock_unlock() - release a lock; may sleep
 * @lk: a lock rdlock_lock() or rdlock_lock_async() granted; freed here.
 *
 * Never fails: a lost connection or an expired lease is the protocol's to
 * handle. The release reaches the lock's home only while the home has the
 * table the lock was taken in (the ticket's incarnation): in a new one it
 * would corrupt another lock word. A release that is one FAA with nothing
 * after it (bakery without leases, the CAS spinlock) is posted: it may be
 * on its way when this returns, and the home executes it before any later
 * operation of this node on the lock.
 */
void rdlock_unlock(struct rdlock_lock *lk)
{
	struct rdlock_ls *ls = lk->ls;
	unsigned int nofs;

	trace_rdlock_unlock(lk, 0);
	lk->ticket.post = true;
	lk->ticket.pin = &lk->res->posted;
	nofs = memalloc_nofs_save();
	/* Not while the lock moves; a LOST lock's ticket ended already. */
	mutex_lock(&lk->op_mutex);
	if (lk->state != RDLOCK_LK_LOST)
		ls->ops->release(&ls->cfg, &lk->ticket);
	/* Off the list first: a move looks for locks there. */
	rdlock_lock_unlist(lk);
	mutex_unlock(&lk->op_mutex);
	memalloc_nofs_restore(nofs);
	rdlock_lock_free(lk);
}
EXPORT_SYMBOL_GPL(rdlock_unlock);
