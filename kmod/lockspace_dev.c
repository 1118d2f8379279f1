// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: what /dev/rdlock (dev.c) needs of them, so that the
 * interface layer never looks inside a lockspace or a lock: lockspaces an
 * administrator created with an owner, a group and permission bits, the
 * files that joined them, and the locks of those files.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/string.h>

#include "lockspace-pri.h"

/**
 * rdlock_ls_create() - RDLOCK_IOC_LS_CREATE of a lockspace
 * @name: valid name (rdlock_ls_check_name()).
 * @attr: valid attributes (rdlock_ls_check_attr()).
 * @uid: owner, for rdlock_ls_join()'s permission check.
 * @gid: group, for the same.
 * @mode: permission bits, for the same.
 *
 * Opens the lockspace, or attaches to this node's open of it (a kernel
 * user's) when the attributes match, and keeps that user until
 * rdlock_ls_remove().
 *
 * Return: 0, -EEXIST when it was created already, -EINTR on a fatal signal,
 * or rdlock_ls_open_locked()'s errors.
 */
int rdlock_ls_create(const char *name, const struct rdlock_ls_attr *attr,
		     kuid_t uid, kgid_t gid, umode_t mode)
{
	struct rdlock_ls *ls;
	int ret = 0;

	if (mutex_lock_killable(&rdlock_ls_join_mutex))
		return -EINTR;
	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_find(name);
	if (ls && ls->created)
		ret = -EEXIST;
	mutex_unlock(&rdlock_ls_mutex);
	if (ret)
		goto out;
	ls = rdlock_ls_open_locked(name, attr);
	if (IS_ERR(ls)) {
		ret = PTR_ERR(ls);
		goto out;
	}
	mutex_lock(&rdlock_ls_mutex);
	ls->created = true;
	ls->uid = uid;
	ls->gid = gid;
	ls->mode = mode;
	mutex_unlock(&rdlock_ls_mutex);
out:
	mutex_unlock(&rdlock_ls_join_mutex);
	return ret;
}

/**
 * rdlock_ls_remove() - RDLOCK_IOC_LS_REMOVE: drop the creation's user
 * @name: the name.
 *
 * A node's declaration down walking the lockspace does not count: the
 * removal then waits until it let go, so that the lockspace is gone when
 * this returns (a fatal signal ends the wait, not the removal).
 *
 * Return: 0, -ENOENT when no lockspace of that name was created here, or
 * -EBUSY while anybody else (a joined file, a kernel user) uses it.
 */
int rdlock_ls_remove(const char *name)
{
	struct rdlock_ls *ls;
	bool walked = false;
	int ret = 0;

	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_find(name);
	if (!ls || !ls->created) {
		ret = -ENOENT;
	} else if (ls->users - ls->walkers > 1) {
		ret = -EBUSY;
	} else {
		ls->created = false;
		walked = ls->walkers;
		rdlock_ls_put_locked(ls);
	}
	mutex_unlock(&rdlock_ls_mutex);
	if (walked)
		rdlock_ls_walk_wait(name);
	return ret;
}

/**
 * rdlock_ls_created() - was lockspace @name created through the uapi
 * @name: the name.
 *
 * Return: true if this node has it, created and not removed.
 */
bool rdlock_ls_created(const char *name)
{
	struct rdlock_ls *ls;
	bool created;

	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_find(name);
	created = ls && ls->created;
	mutex_unlock(&rdlock_ls_mutex);
	return created;
}

/**
 * rdlock_ls_perm() - the permission bits that apply to the caller
 * @uid: the owner of what is asked for.
 * @gid: its group.
 * @mode: its permission bits.
 *
 * Return: MAY_READ | MAY_WRITE | MAY_EXEC bits, all for CAP_SYS_ADMIN.
 */
umode_t rdlock_ls_perm(kuid_t uid, kgid_t gid, umode_t mode)
{
	if (capable(CAP_SYS_ADMIN))
		return 07;
	if (uid_eq(current_fsuid(), uid))
		return (mode >> 6) & 07;
	if (in_group_p(gid))
		return (mode >> 3) & 07;
	return mode & 07;
}

/**
 * rdlock_ls_join() - RDLOCK_IOC_JOIN: one more user of a created lockspace
 * @name: the name.
 * @perm: receives the caller's rdlock_ls_perm() of it.
 *
 * Return: the lockspace (rdlock_ls_leave() drops the user), or
 * ERR_PTR(-ENOENT) when no lockspace of that name was created here,
 * -EACCES when the caller may neither read nor write it.
 */
struct rdlock_ls *rdlock_ls_join(const char *name, umode_t *perm)
{
	struct rdlock_ls *ls;

	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_find(name);
	if (!ls || !ls->created) {
		ls = ERR_PTR(-ENOENT);
	} else {
		*perm = rdlock_ls_perm(ls->uid, ls->gid, ls->mode);
		if (!(*perm & (MAY_READ | MAY_WRITE)))
			ls = ERR_PTR(-EACCES);
		else
			ls->users++;
	}
	mutex_unlock(&rdlock_ls_mutex);
	return ls;
}

/**
 * rdlock_ls_leave() - drop the user rdlock_ls_join() took
 * @ls: the lockspace; the file's locks are unlocked.
 */
void rdlock_ls_leave(struct rdlock_ls *ls)
{
	mutex_lock(&rdlock_ls_mutex);
	rdlock_ls_put_locked(ls);
	mutex_unlock(&rdlock_ls_mutex);
}

/* @ls as rdlock_ls_enumerate() tells it; rdlock_ls_mutex held. */
static void rdlock_ls_desc_fill(const struct rdlock_ls *ls,
				struct rdlock_ls_desc *d)
{
	lockdep_assert_held(&rdlock_ls_mutex);
	memset(d, 0, sizeof(*d));
	strscpy(d->name, ls->name, sizeof(d->name));
	d->attr = ls->attr;
	d->created = ls->created;
	if (ls->created) {
		d->uid = ls->uid;
		d->gid = ls->gid;
		d->mode = ls->mode;
	} else {
		d->uid = GLOBAL_ROOT_UID;
		d->gid = GLOBAL_ROOT_GID;
	}
	d->users = ls->users;
	d->lost = rdlock_ls_stale(ls) || atomic64_read(&ls->lost_locks);
	d->counters[RDLOCK_LSC_ACQUISITIONS] = atomic64_read(&ls->stats.acquires);
	d->counters[RDLOCK_LSC_WAITS] = atomic64_read(&ls->stats.waits);
	d->counters[RDLOCK_LSC_REMOTE_OPS] = atomic64_read(&ls->stats.remote_ops);
	d->counters[RDLOCK_LSC_LEASE_EXPIRIES] =
		atomic64_read(&ls->stats.lease_expiries);
	d->counters[RDLOCK_LSC_ABANDONED] = atomic64_read(&ls->stats.abandoned);
	d->counters[RDLOCK_LSC_MOVED_LOCKS] = atomic64_read(&ls->moved_locks);
	d->counters[RDLOCK_LSC_LOST_LOCKS] = atomic64_read(&ls->lost_locks);
}

/**
 * rdlock_ls_enumerate() - RDLOCK_IOC_LS_LIST: walk this node's lockspaces
 * @fn: called for each lockspace on this node's list, with
 *	rdlock_ls_mutex held: it must neither sleep on the lockspace layer
 *	nor call into it.
 * @arg: its first argument.
 *
 * Lockspaces lost with the cluster epoch stay on the list, and are told
 * lost, until an open or a lookup takes them off.
 */
void rdlock_ls_enumerate(void (*fn)(void *arg, const struct rdlock_ls_desc *d),
			 void *arg)
{
	struct rdlock_ls_desc d;
	struct rdlock_ls *ls;

	mutex_lock(&rdlock_ls_mutex);
	list_for_each_entry(ls, &rdlock_ls_list, list) {
		rdlock_ls_desc_fill(ls, &d);
		fn(arg, &d);
	}
	mutex_unlock(&rdlock_ls_mutex);
}

/**
 * rdlock_ls_describe() - what one lockspace is, as rdlock_ls_enumerate() tells
 * @ls: the lockspace; the caller holds one of its users.
 * @d: receives it.
 */
void rdlock_ls_describe(struct rdlock_ls *ls, struct rdlock_ls_desc *d)
{
	mutex_lock(&rdlock_ls_mutex);
	rdlock_ls_desc_fill(ls, d);
	mutex_unlock(&rdlock_ls_mutex);
}

/* Locks rdlock_ls_dump_locks() copies under one hold of ls->locks_lock. */
#define RDLOCK_LS_DUMP_BATCH	256

/* One lock of this node; caller holds ls->locks_lock. */
static void rdlock_ls_dump_one(struct rdlock_locks_entry *e,
			       const struct rdlock_lock *lk, u32 self,
			       bool stale)
{
	memcpy(e->name, lk->res->name, lk->res->len);
	e->name_len = lk->res->len;
	e->node = self;
	e->mode = rdlock_lock_mode(lk);
	e->rqmode = RDLOCK_LOCKS_NONE;
	switch (stale ? RDLOCK_LK_LOST : lk->state) {
	case RDLOCK_LK_WAITING:
		e->state = RDLOCK_LOCKS_WAITING;
		e->rqmode = e->mode;
		e->mode = RDLOCK_LOCKS_NONE;
		break;
	case RDLOCK_LK_CONVERTING:
		/* An update lock's upgrade to exclusive. */
		e->state = RDLOCK_LOCKS_CONVERTING;
		e->mode = RDLOCK_LOCK_UP;
		e->rqmode = RDLOCK_LOCK_EX;
		break;
	case RDLOCK_LK_LOST:
		e->state = RDLOCK_LOCKS_LOST;
		break;
	default:
		e->state = RDLOCK_LOCKS_GRANTED;
		break;
	}
	/* The tgid in the caller's pid namespace (0: not there, or gone). */
	if (lk->owner) {
		rcu_read_lock();
		e->owner = pid_vnr(find_pid_ns(lk->owner, &init_pid_ns));
		rcu_read_unlock();
	}
	e->home = lk->ticket.node;
	e->ms = max_t(s64, 0, ktime_ms_delta(ktime_get(), lk->since));
}

/**
 * rdlock_ls_dump_locks() - RDLOCK_IOC_LOCKS: this node's locks in a lockspace
 * @name: the lockspace's name.
 * @created_only: only a lockspace of RDLOCK_IOC_LS_CREATE (not a kernel
 *	user's).
 * @q: the name to match, the array and its capacity; receives the number
 *	of locks (@q->count, which may exceed @q->max). Only this node's
 *	locks: no node is asked (@q->asked 0).
 *
 * A lockspace lost with the cluster shows all its locks lost. The locks
 * are read RDLOCK_LS_DUMP_BATCH at a time, the list lock dropped between:
 * locks taken or given back meanwhile may be missed or listed. Nothing is
 * copied to userspace here.
 *
 * Return: 0, -EINTR, or -ENOENT when this node has no lockspace @name.
 */
int rdlock_ls_dump_locks(const char *name, bool created_only,
			 struct rdlock_locks_query *q)
{
	u32 self = rdlock_xport_self(), n = 0, pos = 0, i;
	struct rdlock_lock *lk;
	struct rdlock_ls *ls;
	bool stale, more;

	if (mutex_lock_killable(&rdlock_ls_mutex))
		return -EINTR;
	/* Not rdlock_ls_find(): a lockspace lost with the cluster stays. */
	ls = rdlock_ls_find_listed(name);
	if (!ls || (created_only && !ls->created)) {
		mutex_unlock(&rdlock_ls_mutex);
		return -ENOENT;
	}
	stale = rdlock_ls_stale(ls);
	do {
		i = 0;
		more = false;
		spin_lock(&ls->locks_lock);
		list_for_each_entry(lk, &ls->locks, ls_node) {
			if (i++ < pos)
				continue;
			if (i > pos + RDLOCK_LS_DUMP_BATCH) {
				more = true;
				break;
			}
			if (q->match &&
			    (lk->res->len != q->match_len ||
			     memcmp(lk->res->name, q->match, q->match_len)))
				continue;
			if (n++ < q->max)
				rdlock_ls_dump_one(&q->out[n - 1], lk, self,
						   stale);
		}
		spin_unlock(&ls->locks_lock);
		pos += RDLOCK_LS_DUMP_BATCH;
		cond_resched();
	} while (more);
	mutex_unlock(&rdlock_ls_mutex);
	q->count = n;
	return 0;
}

/**
 * rdlock_lock_set_owner() - name the process a lock is taken for
 * @lk: from rdlock_lock_alloc(), not acquired yet.
 * @owner: its tgid, shown in debugfs (0, the default: a kernel user).
 */
void rdlock_lock_set_owner(struct rdlock_lock *lk, pid_t owner)
{
	lk->owner = owner;
}

/**
 * rdlock_user_quota_new() - a bound on one user's abandoned tickets
 * @max: at least 1.
 *
 * A /dev/rdlock user's acquisitions count in their own quota, not in the
 * lockspace's (which its kernel users share), so that no user's timed out,
 * TRY or killed waiters make another user's acquisitions fail with
 * -EBUSY. At most @max of its acquisitions with a deadline are under way
 * or finishing in the background at once, and while @max tickets of its
 * killed waiters are still finishing, its acquisitions without one are
 * refused too, so that a user who forks and kills waiters cannot pile up
 * background work: past @max only by the waiters killed at once.
 *
 * Return: the quota, or NULL; rdlock_user_quota_put() drops it.
 */
struct rdlock_proto_quota *rdlock_user_quota_new(unsigned int max)
{
	return rdlock_proto_quota_alloc(max, true);
}

/**
 * rdlock_user_quota_set_max() - change a quota's bound
 * @q: from rdlock_user_quota_new().
 * @max: at least 1; applies to the acquisitions admitted from now on.
 */
void rdlock_user_quota_set_max(struct rdlock_proto_quota *q, unsigned int max)
{
	WRITE_ONCE(q->max, max);
}

/**
 * rdlock_user_quota_put() - drop rdlock_user_quota_new()'s reference
 * @q: the quota, or NULL; it lives on while its tickets finish.
 */
void rdlock_user_quota_put(struct rdlock_proto_quota *q)
{
	rdlock_proto_quota_put(q);
}

/**
 * rdlock_user_quota_busy() - does a quota count tickets still
 * @q: from rdlock_user_quota_new().
 *
 * Return: true while acquisitions it counts are under way or their
 * tickets finishing in the background.
 */
bool rdlock_user_quota_busy(const struct rdlock_proto_quota *q)
{
	return atomic_read(&q->used) || atomic_read(&q->killed);
}

/**
 * rdlock_lock_set_quota() - count a lock's acquisitions in its user's quota
 * @lk: from rdlock_lock_alloc(), not acquired yet.
 * @q: from rdlock_user_quota_new(); the caller keeps it while @lk is
 *	being acquired.
 */
void rdlock_lock_set_quota(struct rdlock_lock *lk,
			   struct rdlock_proto_quota *q)
{
	lk->quota = q;
}

/**
 * rdlock_lock_info() - what a granted lock is
 * @lk: the lock; the caller keeps it from being unlocked meanwhile.
 * @info: receives it.
 */
void rdlock_lock_info(const struct rdlock_lock *lk,
		      struct rdlock_lock_info *info)
{
	info->mode = rdlock_lock_mode(lk);
	info->home = lk->ticket.node;
	info->slot = lk->ticket.slot;
	info->remote_ops = lk->ticket.remote_ops;
	info->since = lk->since;
	info->name = lk->res->name;
	info->name_len = lk->res->len;
}
