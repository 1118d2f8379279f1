// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock: /dev/rdlock's lockspace names and its DLM lockspaces
 * (RDLOCK_LS_DLM): their creation, removal and joining, the locks a file
 * takes in them through kmod/dlm.c (NL, PR and EX, conversions) and the
 * blocking events read() and poll() give.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/slab.h>

#include <linux/cred.h>
#include <linux/kref.h>
#include <linux/poll.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>
#include <rdlock/dlm.h>

#include "dev-pri.h"
#include "dlm-pri.h"
#include "lockspace.h"

/* ------------------------------------------------------------------ */
/* DLM lockspaces                                                     */

/**
 * struct rdlock_dev_dls - a DLM lockspace created through the uapi
 * @list: on rdlock_dev_dls_list.
 * @name: its name (NUL-padded like the uapi's).
 * @dls: the DLM layer's lockspace behind it (kmod/dlm.c).
 * @uid: owner, for the permission check.
 * @gid: group, for the permission check.
 * @mode: permission bits.
 * @refs: joined files and DLM locks not given back yet; LS_REMOVE refuses
 *	(EBUSY) while there are any, module exit waits for them.
 */
struct rdlock_dev_dls {
	struct list_head list;
	char name[RDLOCK_LS_NAME_MAX];
	struct rdlock_dlm_ls *dls;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	atomic_t refs;
};

/*
 * rdlock_dev_dls_mutex protects rdlock_dev_dls_list and makes a name
 * either a DLM lockspace or a plain one on this node; taken before the
 * lockspace layer's mutexes (rdlock_ls_create() and the like take them).
 */
static DEFINE_MUTEX(rdlock_dev_dls_mutex);
static LIST_HEAD(rdlock_dev_dls_list);

/* The DLM lockspace @name created here; rdlock_dev_dls_mutex held. */
static struct rdlock_dev_dls *rdlock_dev_dls_find(const char *name)
{
	struct rdlock_dev_dls *dd;

	lockdep_assert_held(&rdlock_dev_dls_mutex);
	list_for_each_entry(dd, &rdlock_dev_dls_list, list)
		if (!strcmp(dd->name, name))
			return dd;
	return NULL;
}

/*
 * LS_CREATE of a DLM lockspace, whose name no lockspace of this node has;
 * rdlock_dev_dls_mutex held. The DLM layer opens (or attaches to) the
 * cluster's rdlock lockspace behind it.
 */
static long rdlock_dev_dls_create(const struct rdlock_ls_create *c)
{
	struct rdlock_dev_dls *dd;

	if (rdlock_ls_created(c->name))
		return -EEXIST;
	dd = kzalloc(sizeof(*dd), GFP_KERNEL);
	if (!dd)
		return -ENOMEM;
	dd->dls = rdlock_dlm_open_user(c->name, rdlock_dlm_node_id());
	if (IS_ERR(dd->dls)) {
		long ret = PTR_ERR(dd->dls);

		kfree(dd);
		return ret;
	}
	memcpy(dd->name, c->name, sizeof(dd->name));
	dd->uid = make_kuid(current_user_ns(), c->uid);
	dd->gid = make_kgid(current_user_ns(), c->gid);
	dd->mode = c->mode;
	atomic_set(&dd->refs, 0);
	list_add_tail(&dd->list, &rdlock_dev_dls_list);
	return 0;
}

/* Close a DLM lockspace nothing uses; rdlock_dev_dls_mutex held. */
static void rdlock_dev_dls_remove(struct rdlock_dev_dls *dd)
{
	list_del(&dd->list);
	/* Locks of closed files still being given back. */
	wait_var_event(&dd->refs, !atomic_read(&dd->refs));
	/* Every file's locks had their final AST by now: none is left. */
	if (WARN_ON(rdlock_dlm_close(dd->dls)))
		return;
	kfree(dd);
}

/*
 * LS_CREATE: a DLM lockspace (RDLOCK_LS_DLM in @c) or a plain one, under
 * a name no lockspace of this node has yet.
 */
long rdlock_dev_ls_create(const struct rdlock_ls_create *c,
			  const struct rdlock_ls_attr *attr)
{
	long ret;

	if (mutex_lock_killable(&rdlock_dev_dls_mutex))
		return -EINTR;
	if (rdlock_dev_dls_find(c->name)) {
		ret = -EEXIST;
		goto out_dls;
	}
	if (c->flags & RDLOCK_LS_DLM) {
		ret = rdlock_dev_dls_create(c);
		goto out_dls;
	}
	ret = rdlock_ls_create(c->name, attr,
			       make_kuid(current_user_ns(), c->uid),
			       make_kgid(current_user_ns(), c->gid), c->mode);
out_dls:
	mutex_unlock(&rdlock_dev_dls_mutex);
	return ret;
}

/* LS_REMOVE of the DLM or plain lockspace @name. */
long rdlock_dev_ls_remove(const char *name)
{
	struct rdlock_dev_dls *dd;
	long ret = 0;

	if (mutex_lock_killable(&rdlock_dev_dls_mutex))
		return -EINTR;
	dd = rdlock_dev_dls_find(name);
	if (dd) {
		if (atomic_read(&dd->refs))
			ret = -EBUSY;
		else
			rdlock_dev_dls_remove(dd);
		mutex_unlock(&rdlock_dev_dls_mutex);
		return ret;
	}
	mutex_unlock(&rdlock_dev_dls_mutex);
	return rdlock_ls_remove(name);
}

/* JOIN of a DLM lockspace; f->sem and rdlock_dev_dls_mutex held. */
static long rdlock_dev_dls_join(struct rdlock_file *f,
				struct rdlock_dev_dls *dd)
{
	umode_t perm = rdlock_ls_perm(dd->uid, dd->gid, dd->mode);

	if (!(perm & (MAY_READ | MAY_WRITE)))
		return -EACCES;
	atomic_inc(&dd->refs);
	f->dd = dd;
	f->may_write = perm & MAY_WRITE;
	spin_lock(&f->dlm_lock);
	f->dlm_joined = true;
	spin_unlock(&f->dlm_lock);
	return 0;
}

/* JOIN of the DLM or plain lockspace @name; f->sem held, none joined. */
long rdlock_dev_ls_join(struct rdlock_file *f, const char *name)
{
	struct rdlock_dev_dls *dd;
	struct rdlock_ls *ls;
	umode_t perm;
	long ret = 0;

	mutex_lock(&rdlock_dev_dls_mutex);
	dd = rdlock_dev_dls_find(name);
	if (dd)
		ret = rdlock_dev_dls_join(f, dd);
	mutex_unlock(&rdlock_dev_dls_mutex);
	if (dd)
		return ret;
	ls = rdlock_ls_join(name, &perm);
	if (IS_ERR(ls))
		return PTR_ERR(ls);
	f->ls = ls;
	f->may_write = perm & MAY_WRITE;
	return 0;
}

/* Module exit, no file open (each pins the module): close them all. */
void rdlock_dev_dls_exit(void)
{
	struct rdlock_dev_dls *dd, *tmp;

	mutex_lock(&rdlock_dev_dls_mutex);
	list_for_each_entry_safe(dd, tmp, &rdlock_dev_dls_list, list)
		rdlock_dev_dls_remove(dd);
	mutex_unlock(&rdlock_dev_dls_mutex);
}

/* ------------------------------------------------------------------ */
/* RDLOCK_IOC_LOCKS                                                   */

/**
 * rdlock_dev_ls_locks() - RDLOCK_IOC_LOCKS: one lockspace's locks
 * @name: the lockspace as RDLOCK_IOC_LS_LIST names it.
 * @q: what to list, where; receives the count and the nodes asked.
 *
 * A DLM lockspace's, this node's or a kernel user's, with their DLM modes,
 * and with @q->cluster the other nodes' (dlm_dump.c); a plain lockspace's
 * from the lockspace layer, this node's. Nothing is copied to userspace
 * here.
 *
 * Return: 0, -EINTR, -ENOMEM, or -ENOENT when this node has no lockspace
 * @name.
 */
long rdlock_dev_ls_locks(const char *name, struct rdlock_locks_query *q)
{
	char core[RDLOCK_LS_NAME_MAX];
	struct rdlock_dev_dls *dd;
	bool dlm;
	int ret;

	/* The DLM layer's own name, looked up again there: no mutex held. */
	if (mutex_lock_killable(&rdlock_dev_dls_mutex))
		return -EINTR;
	dd = rdlock_dev_dls_find(name);
	strscpy(core, dd ? dd->dls->name : name, sizeof(core));
	mutex_unlock(&rdlock_dev_dls_mutex);
	ret = rdlock_dlm_dump_locks(core, q);
	if (ret != -ENOENT || dd)
		return ret;
	/*
	 * Another lockspace's, but not the words of a DLM lockspace that
	 * is closing (off the DLM layer's list, not the lockspace layer's).
	 */
	dlm = str_has_prefix(name, RDLOCK_DLM_LS_PREFIX) ||
	      str_has_prefix(name, RDLOCK_DLM_LS_HASHED_PREFIX);
	return rdlock_ls_dump_locks(name, dlm, q);
}

/* ------------------------------------------------------------------ */
/* RDLOCK_IOC_LS_LIST                                                 */

/* What rdlock_dev_ls_list() gathers: @max entries of @out at most. */
struct rdlock_dev_ls_lister {
	struct rdlock_ls_info *out;
	u32 max;
	u32 n;
};

/* The next entry of @l (zeroed), or NULL when full; @l->n counts on. */
static struct rdlock_ls_info *rdlock_dev_ls_next(struct rdlock_dev_ls_lister *l)
{
	return l->n++ < l->max ? &l->out[l->n - 1] : NULL;
}

/* The fields of @info the rdlock lockspace @d gives, whatever the kind. */
static void rdlock_dev_ls_info_core(struct rdlock_ls_info *info,
				    const struct rdlock_ls_desc *d)
{
	memcpy(info->core_name, d->name, sizeof(info->core_name));
	info->state = d->lost ? RDLOCK_LS_STATE_LOST : RDLOCK_LS_STATE_OPEN;
	info->proto = d->attr.proto;
	info->flags = d->attr.flags & RDLOCK_LS_FLAGS;
	info->slots = d->attr.slots;
	info->users = d->users;
}

/*
 * rdlock_ls_enumerate()'s callback: a plain lockspace or a kernel user's; the
 * rdlock lockspace behind a DLM lockspace of rdlock_dev_dls_list is that
 * one's (rdlock_dev_dls_mutex held).
 */
static void rdlock_dev_ls_list_one(void *arg, const struct rdlock_ls_desc *d)
{
	struct rdlock_dev_ls_lister *l = arg;
	struct rdlock_ls_info *info;
	struct rdlock_dev_dls *dd;

	if (!d->created)
		list_for_each_entry(dd, &rdlock_dev_dls_list, list)
			if (!strcmp(dd->dls->name, d->name))
				return;
	info = rdlock_dev_ls_next(l);
	if (!info)
		return;
	rdlock_dev_ls_info_core(info, d);
	memcpy(info->name, d->name, sizeof(info->name));
	if (!d->created) {
		info->kind = RDLOCK_LS_KIND_KERNEL;
		return;
	}
	info->kind = RDLOCK_LS_KIND_PLAIN;
	info->uid = from_kuid_munged(current_user_ns(), d->uid);
	info->gid = from_kgid_munged(current_user_ns(), d->gid);
	info->mode = d->mode;
}

/* rdlock_dlm_with_ls()'s callback: the DLM name of @dls into @arg. */
static int rdlock_dev_ls_dlm_name(struct rdlock_dlm_ls *dls, void *arg)
{
	BUILD_BUG_ON(sizeof(dls->dlm_name) != RDLOCK_LS_DLM_NAME_LEN);
	memcpy(arg, dls->dlm_name, RDLOCK_LS_DLM_NAME_LEN);
	return 0;
}

/*
 * The DLM names of the kernel users' lockspaces of @out (@n entries) that
 * are DLM lockspaces, into @names; rdlock_dev_dls_mutex not held (the
 * DLM layer's mutex is taken). One closed meanwhile keeps an empty name.
 */
static long rdlock_dev_ls_kernel_names(const struct rdlock_ls_info *out,
				       struct rdlock_dev_dlm_name *names, u32 n)
{
	const char *core;
	int ret;
	u32 i;

	for (i = 0; i < n; i++) {
		if (out[i].kind != RDLOCK_LS_KIND_KERNEL)
			continue;
		core = out[i].core_name;
		if (!str_has_prefix(core, RDLOCK_DLM_LS_PREFIX) &&
		    !str_has_prefix(core, RDLOCK_DLM_LS_HASHED_PREFIX))
			continue;
		ret = rdlock_dlm_with_ls(core, rdlock_dev_ls_dlm_name,
					 names[i].name);
		if (ret == -EINTR)
			return ret;
	}
	return 0;
}

/**
 * rdlock_dev_ls_list() - RDLOCK_IOC_LS_LIST: this node's lockspaces
 * @out: zeroed array of @max entries, filled as far as it goes.
 * @names: NULL, or a zeroed array of @max DLM names, filled alike
 *	(struct rdlock_ls_list.dlm_names).
 * @max: its capacity (may be 0).
 * @count: receives the number of lockspaces, which may exceed @max.
 *
 * The DLM lockspaces created through the uapi first, then the rdlock
 * lockspaces: plain ones, and kernel users' (the DLM lockspaces' own are
 * theirs). Nothing is copied to userspace here.
 *
 * Return: 0 or -EINTR.
 */
long rdlock_dev_ls_list(struct rdlock_ls_info *out,
			struct rdlock_dev_dlm_name *names, u32 max, u32 *count)
{
	struct rdlock_dev_ls_lister l = { .out = out, .max = max };
	struct rdlock_ls_info *info;
	struct rdlock_dev_dls *dd;
	struct rdlock_ls_desc d;

	if (mutex_lock_killable(&rdlock_dev_dls_mutex))
		return -EINTR;
	list_for_each_entry(dd, &rdlock_dev_dls_list, list) {
		info = rdlock_dev_ls_next(&l);
		if (!info)
			continue;
		rdlock_ls_describe(dd->dls->ls, &d);
		rdlock_dev_ls_info_core(info, &d);
		memcpy(info->name, dd->name, sizeof(info->name));
		info->kind = RDLOCK_LS_KIND_DLM;
		info->flags = RDLOCK_LS_DLM;
		info->uid = from_kuid_munged(current_user_ns(), dd->uid);
		info->gid = from_kgid_munged(current_user_ns(), dd->gid);
		info->mode = dd->mode;
		info->users = atomic_read(&dd->refs);
		if (names)
			strscpy(names[l.n - 1].name, dd->name,
				sizeof(names->name));
	}
	rdlock_ls_enumerate(rdlock_dev_ls_list_one, &l);
	mutex_unlock(&rdlock_dev_dls_mutex);
	*count = l.n;
	return names ? rdlock_dev_ls_kernel_names(out, names, min(l.n, max)) : 0;
}

/* ------------------------------------------------------------------ */
/* Locks of a DLM lockspace: kmod/dlm.c's, waited for here            */

/* rdlock_dev_dlk.mode of a new lock before its grant. */
#define RDLOCK_DEV_NOMODE	(-1)

/**
 * enum rdlock_dev_dlk_state - the life of a DLM lock held through a file
 * @RDLOCK_DLK_NEW: allocated (kzalloc()), no request queued, or its
 *	first one refused: freed when the file lets it go.
 * @RDLOCK_DLK_REQUEST: its first request is in flight.
 * @RDLOCK_DLK_GRANTED: held in rdlock_dev_dlk.mode, nothing in flight.
 * @RDLOCK_DLK_CONVERT: held, a conversion in flight.
 * @RDLOCK_DLK_UNLOCK: held, the file's UNLOCK in flight.
 * @RDLOCK_DLK_ENDED: unlocked, or never granted: nothing to give back.
 * @RDLOCK_DLK_ORPHAN: the file let it go with a request, conversion or
 *	unlock in flight: its AST ends it or gives it back.
 * @RDLOCK_DLK_GIVE_BACK: the file let it go; the unlock that gives it
 *	back is in flight, its AST ends it.
 * @RDLOCK_DLK_NR: how many.
 *
 * An ORPHAN or GIVE_BACK lock has no waiter: the callbacks free it once
 * ENDED. Any other's waiter (an ioctl, or the file letting it go) does.
 */
enum rdlock_dev_dlk_state {
	RDLOCK_DLK_NEW = 0,
	RDLOCK_DLK_REQUEST,
	RDLOCK_DLK_GRANTED,
	RDLOCK_DLK_CONVERT,
	RDLOCK_DLK_UNLOCK,
	RDLOCK_DLK_ENDED,
	RDLOCK_DLK_ORPHAN,
	RDLOCK_DLK_GIVE_BACK,
	RDLOCK_DLK_NR
};

/* The states in which an AST is due: the lock's waiter waits for it. */
#define RDLOCK_DLK_INFLIGHT						\
	(BIT(RDLOCK_DLK_REQUEST) | BIT(RDLOCK_DLK_CONVERT) |		\
	 BIT(RDLOCK_DLK_UNLOCK) | BIT(RDLOCK_DLK_ORPHAN) |		\
	 BIT(RDLOCK_DLK_GIVE_BACK))

/**
 * struct rdlock_dev_dlk - a lock of a file in a DLM lockspace
 * @f: the file (a reference of its own).
 * @dd: the lockspace (one of rdlock_dev_dls.refs).
 * @lksb: the DLM lock's status block.
 * @handle: the file's handle of it.
 * @mode: the granted mode (uapi), or RDLOCK_DEV_NOMODE.
 * @want: the mode of the request in flight.
 * @state: where it is in its life; only rdlock_dev_dlk_to() changes it.
 * @status: sb_status of the last AST.
 * @leaving: LEAVE or close counts it in rdlock_file.nr_leaving (a fact
 *	of the letting go, not a state: either orphan state may have it).
 * @ev_mode: the mode of its queued blocking event.
 * @ev_node: on rdlock_file.events while an event is queued.
 * @since: when it was last granted.
 * @name_len: bytes of @name.
 * @name: the resource name.
 *
 * Everything but the constant fields is under rdlock_file.dlm_lock. Its
 * handle's marks in rdlock_file.locks say whether an ioctl works on it
 * and whether a LOCK still waits for it (dev.c).
 */
struct rdlock_dev_dlk {
	struct rdlock_file *f;
	struct rdlock_dev_dls *dd;
	struct rdlock_dlm_lksb lksb;
	u32 handle;
	int mode;
	int want;
	enum rdlock_dev_dlk_state state;
	int status;
	bool leaving;
	int ev_mode;
	struct list_head ev_node;
	ktime_t since;
	u32 name_len;
	u8 name[RDLOCK_DLM_RESNAME_MAX];
};

static const char *const rdlock_dev_dlk_state_names[RDLOCK_DLK_NR] = {
	[RDLOCK_DLK_NEW]	= "new",
	[RDLOCK_DLK_REQUEST]	= "request",
	[RDLOCK_DLK_GRANTED]	= "granted",
	[RDLOCK_DLK_CONVERT]	= "convert",
	[RDLOCK_DLK_UNLOCK]	= "unlock",
	[RDLOCK_DLK_ENDED]	= "ended",
	[RDLOCK_DLK_ORPHAN]	= "orphan",
	[RDLOCK_DLK_GIVE_BACK]	= "give_back",
};

/* The moves of enum rdlock_dev_dlk_state: from a state, the ones allowed. */
static const u16 rdlock_dev_dlk_moves[RDLOCK_DLK_NR] = {
	/* LOCK queues the request. */
	[RDLOCK_DLK_NEW]	= BIT(RDLOCK_DLK_REQUEST),
	/* Refused, its AST (granted or not), or the waiter killed. */
	[RDLOCK_DLK_REQUEST]	= BIT(RDLOCK_DLK_NEW) | BIT(RDLOCK_DLK_GRANTED) |
				  BIT(RDLOCK_DLK_ENDED) | BIT(RDLOCK_DLK_ORPHAN),
	/* CONVERT, UNLOCK, or the file lets it go. */
	[RDLOCK_DLK_GRANTED]	= BIT(RDLOCK_DLK_CONVERT) | BIT(RDLOCK_DLK_UNLOCK) |
				  BIT(RDLOCK_DLK_GIVE_BACK),
	/* Refused or its AST (the old mode kept on failure); killed. */
	[RDLOCK_DLK_CONVERT]	= BIT(RDLOCK_DLK_GRANTED) | BIT(RDLOCK_DLK_ORPHAN),
	/* Refused or failed; unlocked; killed. */
	[RDLOCK_DLK_UNLOCK]	= BIT(RDLOCK_DLK_GRANTED) | BIT(RDLOCK_DLK_ENDED) |
				  BIT(RDLOCK_DLK_ORPHAN),
	/* Freed by its waiter. */
	[RDLOCK_DLK_ENDED]	= 0,
	/* Its AST: still held (give it back), or ended. */
	[RDLOCK_DLK_ORPHAN]	= BIT(RDLOCK_DLK_GIVE_BACK) | BIT(RDLOCK_DLK_ENDED),
	/* Its AST: unlocked, or not (try again). */
	[RDLOCK_DLK_GIVE_BACK]	= BIT(RDLOCK_DLK_GIVE_BACK) | BIT(RDLOCK_DLK_ENDED),
};

/*
 * rdlock_dev_dlk_to() - move a DLM lock of a file to its next state
 * @dk: the lock; rdlock_file.dlm_lock held.
 * @to: the new state.
 *
 * The one place rdlock_dev_dlk.state changes. A move that
 * rdlock_dev_dlk_moves[] does not allow is a bug: it warns (once) and is
 * refused, the lock stays where it is.
 *
 * Return: true if @dk is in @to now.
 */
static bool rdlock_dev_dlk_to(struct rdlock_dev_dlk *dk,
			      enum rdlock_dev_dlk_state to)
{
	lockdep_assert_held(&dk->f->dlm_lock);
	if (WARN_ON_ONCE(to >= RDLOCK_DLK_NR))
		return false;
	if (WARN_ONCE(!(rdlock_dev_dlk_moves[dk->state] & BIT(to)),
		      "rdlock: DLM lock %u of a file moved from %s to %s\n",
		      dk->handle, rdlock_dev_dlk_state_names[dk->state],
		      rdlock_dev_dlk_state_names[to]))
		return false;
	/* rdlock_dev_dlk_wait() reads it without the lock. */
	WRITE_ONCE(dk->state, to);
	return true;
}

/* The file let @dk go: nobody waits for it, the callbacks end it. */
static bool rdlock_dev_dlk_orphan(const struct rdlock_dev_dlk *dk)
{
	return dk->state == RDLOCK_DLK_ORPHAN ||
	       dk->state == RDLOCK_DLK_GIVE_BACK;
}

/* No AST is due for @dk: its waiter may go on. */
static bool rdlock_dev_dlk_idle(const struct rdlock_dev_dlk *dk)
{
	return !(BIT(READ_ONCE(dk->state)) & RDLOCK_DLK_INFLIGHT);
}

static int rdlock_dev_to_dlm(int mode)
{
	switch (mode) {
	case RDLOCK_LOCK_NL:
		return RDLOCK_DLM_LOCK_NL;
	case RDLOCK_LOCK_PR:
		return RDLOCK_DLM_LOCK_PR;
	default:
		return RDLOCK_DLM_LOCK_EX;
	}
}

/* Do @held (granted) and @want (asked for by another) conflict? */
static bool rdlock_dev_conflict(int held, int want)
{
	if (held == RDLOCK_DEV_NOMODE || held == RDLOCK_LOCK_NL ||
	    want == RDLOCK_LOCK_NL)
		return false;
	return held == RDLOCK_LOCK_EX || want == RDLOCK_LOCK_EX;
}

/* Drop @dk's queued event once its mode no longer blocks the event's. */
static void rdlock_dev_event_prune(struct rdlock_dev_dlk *dk)
{
	lockdep_assert_held(&dk->f->dlm_lock);
	if (!list_empty(&dk->ev_node) &&
	    (rdlock_dev_dlk_orphan(dk) ||
	     !rdlock_dev_conflict(dk->mode, dk->ev_mode)))
		list_del_init(&dk->ev_node);
}

/* After @dk's final AST, or before any request: nothing refers to it. */
static void rdlock_dev_dlk_free(struct rdlock_dev_dlk *dk)
{
	struct rdlock_dev_dls *dd = dk->dd;
	struct rdlock_file *f = dk->f;

	spin_lock(&f->dlm_lock);
	if (dk->leaving && !--f->nr_leaving)
		wake_up_all(&f->ast_wait);
	spin_unlock(&f->dlm_lock);
	/* Charged since rdlock_file_add(), until the lock is gone. */
	rdlock_user_uncharge(f->user);
	kfree(dk);
	kref_put(&f->kref, rdlock_file_free);
	/* Module exit may free @dd at 0: the wait queue is hashed. */
	if (atomic_dec_and_test(&dd->refs))
		wake_up_var(&dd->refs);
}

static void rdlock_dev_ast(void *arg);
static void rdlock_dev_bast(void *arg, int mode);

/* Queue the unlock of an orphan; its AST frees it. Caller: GIVE_BACK. */
static void rdlock_dev_give_back(struct rdlock_dev_dlk *dk)
{
	int ret = rdlock_dlm_unlock(dk->dd->dls, dk->lksb.sb_lkid, 0, NULL,
				    NULL);

	/*
	 * Only -ENOMEM can get here (the lock is idle and ours): the DLM
	 * lock then stays, and with it @dk, which its lksb lives in.
	 */
	if (ret)
		pr_warn_ratelimited("DLM lock %u of a closed file not given back: %d\n",
				    dk->lksb.sb_lkid, ret);
}

/*
 * Completion of @dk's request (the DLM layer's AST): process context, one
 * at a time per lock. A non-orphan's waiter takes over from here.
 */
static void rdlock_dev_ast(void *arg)
{
	struct rdlock_dev_dlk *dk = arg;
	struct rdlock_file *f = dk->f;
	int st = dk->lksb.sb_status;
	bool final, orphan;

	spin_lock(&f->dlm_lock);
	if (!st) {
		dk->mode = dk->want;
		dk->since = ktime_get();
	}
	/* An unlock, or a new lock that was never granted, ends the lock. */
	final = st == RDLOCK_DLM_EUNLOCK ||
		(st && dk->mode == RDLOCK_DEV_NOMODE);
	if (final)
		dk->mode = RDLOCK_DEV_NOMODE;
	dk->status = st;
	rdlock_dev_event_prune(dk);
	orphan = rdlock_dev_dlk_orphan(dk);
	if (final)
		rdlock_dev_dlk_to(dk, RDLOCK_DLK_ENDED);
	else if (orphan)
		rdlock_dev_dlk_to(dk, RDLOCK_DLK_GIVE_BACK);	/* below */
	else
		rdlock_dev_dlk_to(dk, RDLOCK_DLK_GRANTED);
	if (!orphan)
		wake_up_all(&f->ast_wait);
	spin_unlock(&f->dlm_lock);
	if (!orphan)
		return;
	if (final)
		rdlock_dev_dlk_free(dk);
	else
		rdlock_dev_give_back(dk);
}

/*
 * Blocking callback: another request waits for @mode because of @dk.
 * Queue one event per lock, merging later ones into it (the stronger
 * mode wins), so the queue never holds more entries than the file has
 * locks, however many notices arrive.
 */
static void rdlock_dev_bast(void *arg, int mode)
{
	struct rdlock_dev_dlk *dk = arg;
	struct rdlock_file *f = dk->f;
	int want = mode == RDLOCK_DLM_LOCK_EX ? RDLOCK_LOCK_EX : RDLOCK_LOCK_PR;

	spin_lock(&f->dlm_lock);
	if (!rdlock_dev_dlk_orphan(dk) && rdlock_dev_conflict(dk->mode, want)) {
		if (list_empty(&dk->ev_node)) {
			dk->ev_mode = want;
			list_add_tail(&dk->ev_node, &f->events);
		} else if (want == RDLOCK_LOCK_EX) {
			dk->ev_mode = want;
		}
		wake_up_interruptible_poll(&f->ev_wait, EPOLLIN | EPOLLRDNORM);
	}
	spin_unlock(&f->dlm_lock);
}

/**
 * rdlock_dev_dlk_abandon() - the file lets a DLM lock go
 * @dk: the lock, no longer in rdlock_file.locks.
 * @leaving: count it in rdlock_file.nr_leaving, for LEAVE and close to
 *	wait for (rdlock_dev_dls_leave()).
 *
 * Give @dk back, now or once its request in flight completes, and free
 * it then.
 */
void rdlock_dev_dlk_abandon(struct rdlock_dev_dlk *dk, bool leaving)
{
	struct rdlock_file *f = dk->f;
	bool unlock = false, free = false;

	spin_lock(&f->dlm_lock);
	switch (dk->state) {
	case RDLOCK_DLK_NEW:
	case RDLOCK_DLK_ENDED:
		free = true;
		break;
	case RDLOCK_DLK_GRANTED:
		unlock = rdlock_dev_dlk_to(dk, RDLOCK_DLK_GIVE_BACK);
		break;
	default:
		/* Its AST gives it back or ends it. */
		rdlock_dev_dlk_to(dk, RDLOCK_DLK_ORPHAN);
		break;
	}
	rdlock_dev_event_prune(dk);
	if (leaving) {
		dk->leaving = true;
		f->nr_leaving++;
	}
	spin_unlock(&f->dlm_lock);
	if (free)
		rdlock_dev_dlk_free(dk);
	else if (unlock)
		rdlock_dev_give_back(dk);
}

/*
 * Wait for the AST of @dk's request; @timeout_ms 0: no limit. When the
 * time is up or a fatal signal comes, cancel the request: a cancelled one
 * reports RDLOCK_DLM_ECANCEL, one that could not be cancelled any more
 * completes normally and is waited for. Killed while waiting for that, the
 * lock is let go (abandoned) and -EINTR returned with *@gone set.
 *
 * Return: the AST's sb_status, as 0 or a negative errno.
 */
static int rdlock_dev_dlk_wait(struct rdlock_dev_dlk *dk, u32 timeout_ms,
			       bool *gone)
{
	long left = timeout_ms ? msecs_to_jiffies(timeout_ms) :
				 MAX_SCHEDULE_TIMEOUT;
	struct rdlock_file *f = dk->f;
	bool killed = false;
	long t;
	int st;

	*gone = false;
	t = wait_event_killable_timeout(f->ast_wait, rdlock_dev_dlk_idle(dk),
					left);
	if (t <= 0) {
		rdlock_dlm_unlock(dk->dd->dls, dk->lksb.sb_lkid,
				  RDLOCK_DLM_LKF_CANCEL, NULL, NULL);
		killed = t < 0 ||
			 wait_event_killable(f->ast_wait,
					     rdlock_dev_dlk_idle(dk));
	}
	if (killed) {
		rdlock_file_erase(f, dk->handle);
		rdlock_dev_dlk_abandon(dk, false);
		*gone = true;
		return -EINTR;
	}
	spin_lock(&f->dlm_lock);
	st = dk->status;
	spin_unlock(&f->dlm_lock);
	if (st == RDLOCK_DLM_ECANCEL)
		return t < 0 ? -EINTR : -ETIMEDOUT;
	if (st == RDLOCK_DLM_EUNLOCK)
		return 0;
	return st;
}

/* Queue a lock or conversion of @dk to @mode; 0 once its AST is due. */
static int rdlock_dev_dlk_request(struct rdlock_dev_dlk *dk, int mode,
				  u32 flags, bool convert)
{
	struct rdlock_file *f = dk->f;
	u32 dflags = 0;
	bool queued;
	int ret;

	if (flags & RDLOCK_LKF_TRY)
		dflags |= RDLOCK_DLM_LKF_NOQUEUE;
	if (convert)
		dflags |= RDLOCK_DLM_LKF_CONVERT;
	spin_lock(&f->dlm_lock);
	dk->want = mode;
	queued = rdlock_dev_dlk_to(dk, convert ? RDLOCK_DLK_CONVERT :
				   RDLOCK_DLK_REQUEST);
	spin_unlock(&f->dlm_lock);
	if (!queued)
		return -EBUSY;
	/* The AST may run before this returns. */
	ret = rdlock_dlm_lock(dk->dd->dls, rdlock_dev_to_dlm(mode), &dk->lksb,
			      dflags, dk->name, dk->name_len, rdlock_dev_ast,
			      dk, rdlock_dev_bast);
	if (ret) {
		spin_lock(&f->dlm_lock);
		rdlock_dev_dlk_to(dk, convert ? RDLOCK_DLK_GRANTED :
				  RDLOCK_DLK_NEW);
		spin_unlock(&f->dlm_lock);
	}
	return ret;
}

long rdlock_dev_dlm_lock(struct rdlock_file *f,
			 const struct rdlock_lock_req *r, void __user *argp)
{
	struct rdlock_dev_dlk *dk;
	bool gone = false;
	u32 handle;
	long ret;

	/* Multi-slot leases are the bakery's; names are one byte shorter. */
	if (r->lease_slots || r->name_len > RDLOCK_DLM_RESNAME_MAX)
		return -EINVAL;
	if (r->mode == RDLOCK_LOCK_UP)
		return -EOPNOTSUPP;
	if (r->mode == RDLOCK_LOCK_EX && !f->may_write)
		return -EACCES;
	/* Charged to the caller: a user's locks count in its memory cgroup. */
	dk = kzalloc(sizeof(*dk), GFP_KERNEL_ACCOUNT);
	if (!dk)
		return -ENOMEM;
	dk->f = f;
	dk->dd = f->dd;
	dk->mode = RDLOCK_DEV_NOMODE;
	INIT_LIST_HEAD(&dk->ev_node);
	dk->name_len = r->name_len;
	memcpy(dk->name, r->name, r->name_len);
	/* A handle now: a BAST may come right after the grant. */
	ret = rdlock_file_add(f, RDLOCK_FILE_LOCK_DLM, dk, true, &handle);
	if (ret) {
		kfree(dk);
		return ret;
	}
	dk->handle = handle;
	kref_get(&f->kref);
	atomic_inc(&f->dd->refs);

	ret = rdlock_dev_dlk_request(dk, r->mode, r->flags, false);
	if (!ret)
		ret = rdlock_dev_dlk_wait(dk, r->timeout_ms, &gone);
	if (gone)
		return ret;
	if (!ret && put_user(handle,
			     &((struct rdlock_lock_req __user *)argp)->handle))
		ret = -EFAULT;
	if (ret) {
		/* Not granted (nothing to give back), or EFAULT (unlock). */
		rdlock_file_erase(f, handle);
		rdlock_dev_dlk_abandon(dk, false);
		return ret;
	}
	rdlock_file_granted(f, handle);
	return 0;
}

long rdlock_dev_dlm_convert(struct rdlock_file *f,
			    const struct rdlock_convert_req *c)
{
	struct rdlock_dev_dlk *dk;
	long ret = 0;
	bool gone;
	int mode;

	if (c->mode == RDLOCK_LOCK_UP)
		return -EOPNOTSUPP;
	dk = rdlock_file_get(f, RDLOCK_FILE_LOCK_DLM, c->handle, &ret);
	if (!dk)
		return ret;
	spin_lock(&f->dlm_lock);
	mode = dk->mode;
	spin_unlock(&f->dlm_lock);
	if (c->mode == mode)
		ret = -EALREADY;
	else if (c->mode == RDLOCK_LOCK_EX && !f->may_write)
		ret = -EACCES;
	else
		ret = rdlock_dev_dlk_request(dk, c->mode, c->flags, true);
	if (!ret) {
		ret = rdlock_dev_dlk_wait(dk, c->timeout_ms, &gone);
		if (gone)
			return ret;
	}
	rdlock_file_put(f, c->handle);
	return ret;
}

long rdlock_dev_dlm_unlock(struct rdlock_file *f, u32 handle)
{
	struct rdlock_dev_dlk *dk;
	long ret = 0;
	bool gone;

	dk = rdlock_file_get(f, RDLOCK_FILE_LOCK_DLM, handle, &ret);
	if (!dk)
		return ret;
	spin_lock(&f->dlm_lock);
	ret = rdlock_dev_dlk_to(dk, RDLOCK_DLK_UNLOCK) ? 0 : -EBUSY;
	spin_unlock(&f->dlm_lock);
	if (ret) {
		rdlock_file_put(f, handle);
		return ret;
	}
	ret = rdlock_dlm_unlock(f->dd->dls, dk->lksb.sb_lkid, 0, NULL, NULL);
	if (ret) {
		spin_lock(&f->dlm_lock);
		rdlock_dev_dlk_to(dk, RDLOCK_DLK_GRANTED);
		spin_unlock(&f->dlm_lock);
		rdlock_file_put(f, handle);
		return ret;
	}
	/* Released when this returns, as in other lockspaces. */
	ret = rdlock_dev_dlk_wait(dk, 0, &gone);
	if (gone)
		return ret;
	rdlock_file_erase(f, handle);
	rdlock_dev_dlk_free(dk);
	return ret;
}

/**
 * rdlock_dev_dlk_info() - what QUERY tells of a DLM lock
 * @dk: the lock, in its file's table (rdlock_file.mutex held).
 * @info: filled in; @info->name points into @dk.
 */
void rdlock_dev_dlk_info(const struct rdlock_dev_dlk *dk,
			 struct rdlock_lock_info *info)
{
	spin_lock(&dk->f->dlm_lock);
	info->mode = dk->mode;
	info->since = dk->since;
	spin_unlock(&dk->f->dlm_lock);
	/* A DLM lock holds two lock words, one, or none (NL). */
	info->home = U32_MAX;
	info->slot = U32_MAX;
	info->remote_ops = 0;
	info->name = dk->name;
	info->name_len = dk->name_len;
}

/*
 * The file leaves its DLM lockspace, after rdlock_file_leave() let its
 * locks go: wait until they are given back. Sem held for writing (no lock
 * ioctl runs) or the file is being released.
 */
void rdlock_dev_dls_leave(struct rdlock_file *f)
{
	/* Unlocks wait for nobody: a round trip or the transport's timeout. */
	wait_event(f->ast_wait, !READ_ONCE(f->nr_leaving));
	spin_lock(&f->dlm_lock);
	f->dlm_joined = false;
	spin_unlock(&f->dlm_lock);
	wake_up_interruptible_all(&f->ev_wait);
	if (atomic_dec_and_test(&f->dd->refs))
		wake_up_var(&f->dd->refs);
	f->dd = NULL;
}

/*
 * read(): whole struct rdlock_event records, at least one; blocks for the
 * first unless O_NONBLOCK. Events of a lock are merged while queued, so a
 * slow reader costs no memory.
 */
ssize_t rdlock_dev_read(struct file *file, char __user *buf, size_t count,
			loff_t *ppos)
{
	struct rdlock_file *f = file->private_data;
	struct rdlock_dev_dlk *dk;
	struct rdlock_event ev;
	size_t done = 0;
	int ret = 0;

	if (count < sizeof(ev))
		return -EINVAL;
	while (done + sizeof(ev) <= count) {
		spin_lock(&f->dlm_lock);
		if (!f->dlm_joined) {
			spin_unlock(&f->dlm_lock);
			ret = -EBADFD;
			break;
		}
		dk = list_first_entry_or_null(&f->events, struct rdlock_dev_dlk,
					      ev_node);
		if (!dk) {
			spin_unlock(&f->dlm_lock);
			if (done)
				break;
			if (file->f_flags & O_NONBLOCK) {
				ret = -EAGAIN;
				break;
			}
			ret = wait_event_interruptible(f->ev_wait,
						       !list_empty_careful(&f->events) ||
						       !READ_ONCE(f->dlm_joined));
			if (ret)
				break;
			continue;
		}
		list_del_init(&dk->ev_node);
		ev = (struct rdlock_event){
			.type = RDLOCK_EVENT_BLOCKING,
			.handle = dk->handle,
			.mode = dk->ev_mode,
		};
		spin_unlock(&f->dlm_lock);
		if (copy_to_user(buf + done, &ev, sizeof(ev))) {
			ret = -EFAULT;
			break;
		}
		done += sizeof(ev);
	}
	return done ? done : ret;
}

__poll_t rdlock_dev_poll(struct file *file, poll_table *wait)
{
	struct rdlock_file *f = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &f->ev_wait, wait);
	spin_lock(&f->dlm_lock);
	if (!f->dlm_joined)
		mask = EPOLLERR;	/* read() fails with EBADFD */
	else if (!list_empty(&f->events))
		mask = EPOLLIN | EPOLLRDNORM;
	spin_unlock(&f->dlm_lock);
	return mask;
}
