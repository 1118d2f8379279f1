// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock_dlm_test's FSDLM_FILL: many PR locks held in a lockspace of the
 * stock kernel's fs/dlm, as FILL holds them in one of rdlock's, so that a
 * benchmark can show both recover from one node's death side by side
 * (selftests/guest/recbench.sh). fs/dlm is looked up when asked for
 * (symbol_request(), which loads dlm.ko), never linked: the module loads
 * on a kernel without it. dlm_controld must run.
 */
#include <linux/atomic.h>
#include <linux/dlm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "rdlock_dlm_test_ioctl.h"
#include "dlm_test_fsdlm.h"

/* Requests under way at once: enough to keep fs/dlm's messages flowing. */
#define DT_FSDLM_WINDOW	256
/* Most locks. */
#define DT_FSDLM_MAX	65536

/* fs/dlm's calls, as include/linux/dlm.h declares them. */
typedef int (*dt_fsdlm_new_t)(const char *name, const char *cluster,
			      u32 flags, int lvblen,
			      const struct dlm_lockspace_ops *ops,
			      void *ops_arg, int *ops_result,
			      dlm_lockspace_t **lockspace);
typedef int (*dt_fsdlm_release_t)(dlm_lockspace_t *lockspace, int force);
typedef int (*dt_fsdlm_lock_t)(dlm_lockspace_t *lockspace, int mode,
			       struct dlm_lksb *lksb, u32 flags,
			       const void *name, unsigned int namelen,
			       u32 parent_lkid, void (*lockast)(void *astarg),
			       void *astarg,
			       void (*bast)(void *astarg, int mode));

struct dt_fsdlm;

struct dt_fsdlm_lock {
	struct dlm_lksb lksb;
	struct dt_fsdlm *fd;
};

/**
 * struct dt_fsdlm - a file's fs/dlm lockspace and its locks
 * @ls: the lockspace.
 * @locks: @nr of them requested; each granted one stays held until the
 *	lockspace is released.
 * @nr: locks requested.
 * @max: room in @locks.
 * @pending: requests whose AST did not come.
 * @granted: ASTs with status 0.
 * @status: the first failed AST's status, or 0.
 * @wait: an AST came.
 * @new_ls: fs/dlm's dlm_new_lockspace().
 * @release_ls: its dlm_release_lockspace().
 * @lock: its dlm_lock().
 */
struct dt_fsdlm {
	dlm_lockspace_t *ls;
	struct dt_fsdlm_lock *locks;
	u32 nr;
	u32 max;
	atomic_t pending;
	atomic_t granted;
	atomic_t status;
	wait_queue_head_t wait;
	dt_fsdlm_new_t new_ls;
	dt_fsdlm_release_t release_ls;
	dt_fsdlm_lock_t lock;
};

static void dt_fsdlm_ast(void *arg)
{
	struct dt_fsdlm_lock *l = arg;
	struct dt_fsdlm *fd = l->fd;

	if (l->lksb.sb_status)
		atomic_cmpxchg(&fd->status, 0, l->lksb.sb_status);
	else
		atomic_inc(&fd->granted);
	atomic_dec(&fd->pending);
	wake_up(&fd->wait);
}

/* Let go of fs/dlm's calls this file took. */
static void dt_fsdlm_put(struct dt_fsdlm *fd)
{
	if (fd->new_ls)
		symbol_put(dlm_new_lockspace);
	if (fd->release_ls)
		symbol_put(dlm_release_lockspace);
	if (fd->lock)
		symbol_put(dlm_lock);
}

/* How long a release waits for requests still under way. */
#define DT_FSDLM_DRAIN_S	60

/**
 * dt_fsdlm_release() - leave the fs/dlm lockspace, its locks with it
 * @fsdlm: the file's, NULL after.
 *
 * fs/dlm's forced release frees the locks still held; no other user has
 * the lockspace (DLM_LSFL_NEWEXCL), so it is gone, its callbacks with it,
 * before @fsdlm is freed. Requests still under way after a minute (fs/dlm
 * stopped: no quorum) leave it all leaked, loudly. Sleeps.
 */
void dt_fsdlm_release(struct dt_fsdlm **fsdlm)
{
	struct dt_fsdlm *fd = *fsdlm;

	if (!fd)
		return;
	*fsdlm = NULL;
	/* No AST may come after the lockspace is gone. */
	if (!wait_event_timeout(fd->wait, !atomic_read(&fd->pending),
				DT_FSDLM_DRAIN_S * HZ)) {
		pr_err("rdlock_dlm_test: fs/dlm requests still under way after %d s, lockspace leaked\n",
		       DT_FSDLM_DRAIN_S);
		return;
	}
	if (fd->ls)
		fd->release_ls(fd->ls, 2);
	dt_fsdlm_put(fd);
	kvfree(fd->locks);
	kfree(fd);
}

static int dt_fsdlm_get(struct dt_fsdlm *fd)
{
	fd->new_ls = symbol_request(dlm_new_lockspace);
	fd->release_ls = symbol_request(dlm_release_lockspace);
	fd->lock = symbol_request(dlm_lock);
	return fd->new_ls && fd->release_ls && fd->lock ? 0 : -ENOENT;
}

/* The file's first FILL: fs/dlm's calls, the lockspace, room for @max. */
static int dt_fsdlm_join(struct dt_fsdlm **fsdlm, const char *ls, u32 max)
{
	struct dt_fsdlm *fd;
	int ret;

	if (!max || max > DT_FSDLM_MAX || !ls[0] ||
	    strlen(ls) >= DLM_LOCKSPACE_LEN)
		return -EINVAL;
	fd = kzalloc(sizeof(*fd), GFP_KERNEL);
	if (!fd)
		return -ENOMEM;
	init_waitqueue_head(&fd->wait);
	fd->max = max;
	*fsdlm = fd;
	fd->locks = kvcalloc(max, sizeof(*fd->locks), GFP_KERNEL);
	ret = fd->locks ? dt_fsdlm_get(fd) : -ENOMEM;
	if (!ret)
		ret = fd->new_ls(ls, NULL, DLM_LSFL_NEWEXCL, 0, NULL, NULL,
				 NULL, &fd->ls);
	if (ret) {
		fd->ls = NULL;
		dt_fsdlm_release(fsdlm);
	}
	return ret;
}

/* Request PR with NOQUEUE on "@prefix<@start + k * @stride>", k < @count. */
static int dt_fsdlm_request(struct dt_fsdlm *fd, const char *prefix,
			    u32 start, u32 stride, u32 count)
{
	char name[DLM_RESNAME_MAXLEN];
	struct dt_fsdlm_lock *l;
	int len, ret;
	u32 k;

	for (k = 0; k < count; k++) {
		if (wait_event_killable(fd->wait, atomic_read(&fd->pending) <
					DT_FSDLM_WINDOW))
			return -EINTR;
		if (atomic_read(&fd->status))
			return 0;
		l = &fd->locks[fd->nr];
		l->fd = fd;
		len = snprintf(name, sizeof(name), "%s%u", prefix,
			       start + k * stride);
		atomic_inc(&fd->pending);
		ret = fd->lock(fd->ls, DLM_LOCK_PR, &l->lksb, DLM_LKF_NOQUEUE,
			       name, len, 0, dt_fsdlm_ast, l, NULL);
		if (ret) {
			atomic_dec(&fd->pending);
			return ret;
		}
		fd->nr++;
	}
	return 0;
}

/**
 * dt_fsdlm_fill() - RDLOCK_DLM_TEST_IOC_FSDLM_FILL
 * @fsdlm: the file's; set by its first FILL.
 * @argp: struct rdlock_dlm_test_fsdlm_fill.
 *
 * Return: 0 (the result in @argp), -EINVAL, -ENOSPC past the file's @max,
 * -ENOENT without fs/dlm, an error of dlm_new_lockspace() (-EUNATCH: no
 * dlm_controld; -EEXIST: joined already) or of dlm_lock(), -EINTR.
 */
long dt_fsdlm_fill(struct dt_fsdlm **fsdlm, void __user *argp)
{
	struct rdlock_dlm_test_fsdlm_fill l;
	struct dt_fsdlm *fd;
	u32 before;
	int ret;

	if (copy_from_user(&l, argp, sizeof(l)))
		return -EFAULT;
	l.prefix[sizeof(l.prefix) - 1] = 0;
	l.ls[sizeof(l.ls) - 1] = 0;
	if (!l.count || !l.stride)
		return -EINVAL;
	if (!*fsdlm) {
		ret = dt_fsdlm_join(fsdlm, l.ls, l.max);
		if (ret)
			return ret;
	}
	fd = *fsdlm;
	if (l.count > fd->max - fd->nr)
		return -ENOSPC;
	before = atomic_read(&fd->granted);
	ret = dt_fsdlm_request(fd, l.prefix, l.start, l.stride, l.count);
	if (!ret && wait_event_killable(fd->wait, !atomic_read(&fd->pending)))
		ret = -EINTR;
	if (ret)
		return ret;
	l.held = atomic_read(&fd->granted) - before;
	l.status = atomic_read(&fd->status);
	return copy_to_user(argp, &l, sizeof(l)) ? -EFAULT : 0;
}
