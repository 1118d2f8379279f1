// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock: /dev/rdlock, the uapi: the device, an open file, its lockspace
 * (JOIN and LEAVE) and its locks. The admin ioctls are dev_admin.c's, DLM
 * lockspaces and their locks and events dev_dlm.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>

#include <linux/kref.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/xarray.h>

#include "uapi_check.h"
#include "lockspace.h"
#include "dev.h"
#include "dev-pri.h"

/* ------------------------------------------------------------------ */
/* An open file and its locks                                         */

/*
 * Marks of a lock in rdlock_file.locks (XA_MARK_0 is the allocator's).
 * BUSY: an ioctl converts or unlocks it; another is refused (-EBUSY).
 * PENDING: a LOCK waits for its grant; not a handle of the file yet
 * (-ENOENT), but counted in RDLOCK_FILE_LOCKS_MAX and charged to the
 * file's user.
 */
#define RDLOCK_FILE_BUSY	XA_MARK_1
#define RDLOCK_FILE_PENDING	XA_MARK_2

/*
 * The file's locks are charged to its opener's user (rdlock_user_of());
 * CAP_SYS_RESOURCE lifts that user's bound for them, as for an RLIMIT.
 * The check logs no denial: most openers lack it, and need not have it.
 */
static int rdlock_open(struct inode *inode, struct file *file)
{
	struct rdlock_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->user = rdlock_user_get(rdlock_user_of(file->f_cred));
	if (!f->user) {
		kfree(f);
		return -ENOMEM;
	}
	f->user_bounded = !ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE);
	init_rwsem(&f->sem);
	mutex_init(&f->mutex);
	xa_init_flags(&f->locks, XA_FLAGS_ALLOC1);
	kref_init(&f->kref);
	spin_lock_init(&f->dlm_lock);
	INIT_LIST_HEAD(&f->events);
	init_waitqueue_head(&f->ev_wait);
	init_waitqueue_head(&f->ast_wait);
	file->private_data = f;
	return 0;
}

void rdlock_file_free(struct kref *kref)
{
	struct rdlock_file *f = container_of(kref, struct rdlock_file, kref);

	xa_destroy(&f->locks);
	/* After every lock of the file: each was uncharged when erased. */
	rdlock_user_put(f->user);
	kfree(f);
}

/* Forget the file's lock @handle (the caller unlocks it). */
void rdlock_file_erase(struct rdlock_file *f, unsigned long handle)
{
	void *entry;

	mutex_lock(&f->mutex);
	entry = xa_erase(&f->locks, handle);
	if (entry) {
		f->nr_locks--;
		/*
		 * A DLM lock let go may still be in the cluster: it stays
		 * charged until it is freed (rdlock_dev_dlk_free()).
		 */
		if (xa_pointer_tag(entry) != RDLOCK_FILE_LOCK_DLM)
			rdlock_user_uncharge(f->user);
	}
	mutex_unlock(&f->mutex);
}

/*
 * -ENOLCK when the file has RDLOCK_FILE_LOCKS_MAX locks already, or its
 * user (bounded) user_locks_max.
 */
static int rdlock_file_room(struct rdlock_file *f)
{
	lockdep_assert_held(&f->mutex);
	if (f->nr_locks >= RDLOCK_FILE_LOCKS_MAX)
		return -ENOLCK;
	return rdlock_user_room(f->user, f->user_bounded);
}

/*
 * Give @lk, of @type, a handle of the file and charge it to the file's
 * user, unless the file has RDLOCK_FILE_LOCKS_MAX locks already or the
 * user user_locks_max (-ENOLCK). @pending: a LOCK still waits for it
 * (rdlock_file_granted() ends that). The charge goes when a native lock is
 * erased (rdlock_file_erase()), a DLM lock when it is freed
 * (rdlock_dev_dlk_free()).
 */
int rdlock_file_add(struct rdlock_file *f, enum rdlock_file_lock_type type,
		    void *lk, bool pending, u32 *handle)
{
	int ret;

	mutex_lock(&f->mutex);
	ret = rdlock_file_room(f) ?:
	      rdlock_user_charge(f->user, f->user_bounded);
	if (ret)
		goto out;
	ret = xa_alloc(&f->locks, handle, xa_tag_pointer(lk, type),
		       xa_limit_31b, GFP_KERNEL);
	if (ret) {
		rdlock_user_uncharge(f->user);
		goto out;
	}
	f->nr_locks++;
	if (pending)
		xa_set_mark(&f->locks, *handle, RDLOCK_FILE_PENDING);
out:
	mutex_unlock(&f->mutex);
	return ret;
}

/* The pending lock @handle was granted: userspace may use its handle. */
void rdlock_file_granted(struct rdlock_file *f, u32 handle)
{
	mutex_lock(&f->mutex);
	xa_clear_mark(&f->locks, handle, RDLOCK_FILE_PENDING);
	mutex_unlock(&f->mutex);
}

/* The file's lock @handle of @type, not pending; NULL if none. */
static void *rdlock_file_find(struct rdlock_file *f,
			      enum rdlock_file_lock_type type, u32 handle)
{
	void *entry;

	lockdep_assert_held(&f->mutex);
	entry = xa_load(&f->locks, handle);
	if (!entry || xa_pointer_tag(entry) != type ||
	    xa_get_mark(&f->locks, handle, RDLOCK_FILE_PENDING))
		return NULL;
	return xa_untag_pointer(entry);
}

/*
 * The file's lock @handle of @type, marked busy; NULL with *@err -ENOENT
 * if unknown (or pending), -EBUSY if another ioctl works on it.
 */
void *rdlock_file_get(struct rdlock_file *f, enum rdlock_file_lock_type type,
		      u32 handle, long *err)
{
	void *lk;

	mutex_lock(&f->mutex);
	lk = rdlock_file_find(f, type, handle);
	if (!lk)
		*err = -ENOENT;
	else if (xa_get_mark(&f->locks, handle, RDLOCK_FILE_BUSY))
		*err = -EBUSY;
	else
		xa_set_mark(&f->locks, handle, RDLOCK_FILE_BUSY);
	mutex_unlock(&f->mutex);
	return *err ? NULL : lk;
}

/* The ioctl is done with the lock @handle that rdlock_file_get() gave. */
void rdlock_file_put(struct rdlock_file *f, u32 handle)
{
	mutex_lock(&f->mutex);
	xa_clear_mark(&f->locks, handle, RDLOCK_FILE_BUSY);
	mutex_unlock(&f->mutex);
}

/*
 * Release every lock of the file and leave its lockspace; sem held for
 * writing (no lock ioctl runs) or the file is being released. DLM locks
 * are given back in the background; rdlock_dev_dls_leave() waits for them.
 */
static void rdlock_file_leave(struct rdlock_file *f)
{
	unsigned long handle;
	void *entry;

	xa_for_each(&f->locks, handle, entry) {
		rdlock_file_erase(f, handle);
		if (xa_pointer_tag(entry) == RDLOCK_FILE_LOCK_DLM)
			rdlock_dev_dlk_abandon(xa_untag_pointer(entry), true);
		else
			rdlock_unlock(xa_untag_pointer(entry));
	}
	if (f->dd) {
		rdlock_dev_dls_leave(f);
		return;
	}
	rdlock_ls_leave(f->ls);
	f->ls = NULL;
}

/* Closing the file (or its process dying) releases what it held. */
static int rdlock_release(struct inode *inode, struct file *file)
{
	struct rdlock_file *f = file->private_data;

	if (f->ls || f->dd)
		rdlock_file_leave(f);
	/* Its DLM locks' callbacks may still run: the last reference frees. */
	kref_put(&f->kref, rdlock_file_free);
	return 0;
}

/**
 * rdlock_dev_get_ls_name() - copy in and check the argument of JOIN or LS_REMOVE
 * @n: where it goes.
 * @argp: the caller's argument.
 *
 * Return: 0, -EFAULT, or rdlock_check_ls_name()'s error.
 */
int rdlock_dev_get_ls_name(struct rdlock_ls_name *n, void __user *argp)
{
	if (copy_from_user(n, argp, sizeof(*n)))
		return -EFAULT;
	return rdlock_check_ls_name(n);
}

static long rdlock_ioc_join(struct rdlock_file *f, void __user *argp)
{
	struct rdlock_ls_name n;
	long ret;

	ret = rdlock_dev_get_ls_name(&n, argp);
	if (ret)
		return ret;
	if (down_write_killable(&f->sem))
		return -EINTR;
	if (f->ls || f->dd)
		ret = -EBUSY;
	else
		ret = rdlock_dev_ls_join(f, n.name);
	up_write(&f->sem);
	return ret;
}

static long rdlock_ioc_leave(struct rdlock_file *f)
{
	long ret = 0;

	if (down_write_killable(&f->sem))
		return -EINTR;
	if (f->ls || f->dd)
		rdlock_file_leave(f);
	else
		ret = -EBADFD;
	up_write(&f->sem);
	return ret;
}

static long rdlock_ioc_lock(struct rdlock_file *f, void __user *argp)
{
	struct rdlock_lock_opts opts;
	struct rdlock_lock_req r;
	struct rdlock_lock *lk;
	u32 handle;
	long ret;

	if (copy_from_user(&r, argp, sizeof(r)))
		return -EFAULT;
	ret = rdlock_check_lock_req(&r);
	if (ret)
		return ret;
	if (f->dd)
		return rdlock_dev_dlm_lock(f, &r, argp);
	if (!f->ls)
		return -EBADFD;
	opts = (struct rdlock_lock_opts){
		.flags = r.flags,
		.timeout_ms = r.timeout_ms,
		.lease_slots = r.lease_slots,
	};
	lk = rdlock_lock_alloc(f->ls, r.name, r.name_len, r.mode, &opts);
	if (IS_ERR(lk))
		return PTR_ERR(lk);
	if (r.mode != RDLOCK_LOCK_SH && !f->may_write) {
		ret = -EACCES;
		goto free;
	}
	rdlock_lock_set_owner(lk, task_tgid_nr(current));
	/* CAP_SYS_RESOURCE: bounded as the lockspace's kernel users are. */
	if (f->user_bounded)
		rdlock_lock_set_quota(lk, rdlock_user_quota(f->user));
	/* Full before waiting: -ENOLCK at once, not after a grant. */
	mutex_lock(&f->mutex);
	ret = rdlock_file_room(f);
	mutex_unlock(&f->mutex);
	if (ret)
		goto free;
	ret = rdlock_lock_acquire(lk);
	if (ret)
		goto free;
	/* Other threads of the file may have filled it meanwhile. */
	ret = rdlock_file_add(f, RDLOCK_FILE_LOCK_NATIVE, lk, false, &handle);
	if (ret)
		goto unlock;
	if (put_user(handle, &((struct rdlock_lock_req __user *)argp)->handle)) {
		rdlock_file_erase(f, handle);
		ret = -EFAULT;
		goto unlock;
	}
	return 0;

unlock:
	rdlock_unlock(lk);
	return ret;
free:
	rdlock_lock_free(lk);
	return ret;
}

static long rdlock_ioc_unlock(struct rdlock_file *f, void __user *argp)
{
	struct rdlock_unlock_req u;
	struct rdlock_lock *lk;
	long ret = 0;

	if (copy_from_user(&u, argp, sizeof(u)))
		return -EFAULT;
	ret = rdlock_check_unlock(&u);
	if (ret)
		return ret;
	if (f->dd)
		return rdlock_dev_dlm_unlock(f, u.handle);
	if (!f->ls)
		return -EBADFD;
	lk = rdlock_file_get(f, RDLOCK_FILE_LOCK_NATIVE, u.handle, &ret);
	if (!lk)
		return ret;
	rdlock_file_erase(f, u.handle);
	rdlock_unlock(lk);
	return 0;
}

static long rdlock_ioc_convert(struct rdlock_file *f, void __user *argp)
{
	struct rdlock_lock_opts opts = {};
	struct rdlock_convert_req c;
	struct rdlock_lock *lk;
	long ret = 0;

	if (copy_from_user(&c, argp, sizeof(c)))
		return -EFAULT;
	ret = rdlock_check_convert(&c);
	if (ret)
		return ret;
	if (f->dd)
		return rdlock_dev_dlm_convert(f, &c);
	if (!f->ls)
		return -EBADFD;
	lk = rdlock_file_get(f, RDLOCK_FILE_LOCK_NATIVE, c.handle, &ret);
	if (!lk)
		return ret;
	if (c.mode != RDLOCK_LOCK_SH && !f->may_write) {
		ret = -EACCES;
	} else {
		opts.flags = c.flags;
		opts.timeout_ms = c.timeout_ms;
		ret = rdlock_convert(lk, c.mode, &opts);
	}
	rdlock_file_put(f, c.handle);
	return ret;
}

static long rdlock_ioc_query(struct rdlock_file *f, void __user *argp)
{
	struct rdlock_lock_info info;
	struct rdlock_query q;
	long ret = 0;
	void *lk;

	if (copy_from_user(&q, argp, sizeof(q)))
		return -EFAULT;
	ret = rdlock_check_query(&q);
	if (ret)
		return ret;
	if (!f->ls && !f->dd)
		return -EBADFD;
	mutex_lock(&f->mutex);
	lk = rdlock_file_find(f, f->dd ? RDLOCK_FILE_LOCK_DLM :
				 RDLOCK_FILE_LOCK_NATIVE, q.handle);
	if (lk) {
		if (f->dd)
			rdlock_dev_dlk_info(lk, &info);
		else
			rdlock_lock_info(lk, &info);
		q.mode = info.mode;
		q.home_node = info.home;
		q.slot = info.slot;
		q.name_len = info.name_len;
		memset(q.name, 0, sizeof(q.name));
		memcpy(q.name, info.name, info.name_len);
		q.held_ms = ktime_ms_delta(ktime_get(), info.since);
		q.remote_ops = info.remote_ops;
		q.pad = 0;
	}
	mutex_unlock(&f->mutex);
	if (!lk)
		return -ENOENT;
	return copy_to_user(argp, &q, sizeof(q)) ? -EFAULT : 0;
}

/*
 * The lock ioctls; each validates its argument before it looks at the
 * file's lockspace (-EBADFD when it has joined none).
 */
static long rdlock_lock_ioctl(struct rdlock_file *f, unsigned int cmd,
			      void __user *argp)
{
	long ret;

	if (down_read_killable(&f->sem))
		return -EINTR;
	if (cmd == RDLOCK_IOC_LOCK)
		ret = rdlock_ioc_lock(f, argp);
	else if (cmd == RDLOCK_IOC_UNLOCK)
		ret = rdlock_ioc_unlock(f, argp);
	else if (cmd == RDLOCK_IOC_CONVERT)
		ret = rdlock_ioc_convert(f, argp);
	else
		ret = rdlock_ioc_query(f, argp);
	up_read(&f->sem);
	return ret;
}

static long rdlock_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct rdlock_file *f = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case RDLOCK_IOC_JOIN:
		return rdlock_ioc_join(f, argp);
	case RDLOCK_IOC_LEAVE:
		return rdlock_ioc_leave(f);
	case RDLOCK_IOC_LOCK:
	case RDLOCK_IOC_UNLOCK:
	case RDLOCK_IOC_CONVERT:
	case RDLOCK_IOC_QUERY:
		return rdlock_lock_ioctl(f, cmd, argp);
	default:
		return rdlock_dev_admin_ioctl(cmd, argp);
	}
}

static const struct file_operations rdlock_fops = {
	.owner		= THIS_MODULE,
	.open		= rdlock_open,
	.release	= rdlock_release,
	.read		= rdlock_dev_read,
	.poll		= rdlock_dev_poll,
	.unlocked_ioctl	= rdlock_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice rdlock_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "rdlock",
	.fops	= &rdlock_fops,
	/*
	 * Locking is for the users an administrator lets in: the group
	 * "rdlock" that packaging/60-rdlock.rules gives the device (root
	 * only without it); configuration checks CAP_SYS_ADMIN.
	 */
	.mode	= 0660,
};

/**
 * rdlock_dev_init() - register /dev/rdlock
 *
 * Return: 0 or the error of misc_register().
 */
int rdlock_dev_init(void)
{
	return misc_register(&rdlock_misc);
}

/* Before the lockspaces go: no ioctl is running once this returns. */
void rdlock_dev_exit(void)
{
	misc_deregister(&rdlock_misc);
	/* No file is open (each pins the module): close the DLM lockspaces. */
	rdlock_dev_dls_exit();
	rdlock_users_exit();
}
