/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock's /dev/rdlock, private to its files: an open file and its lock
 * table (dev.c), each user's account of its files' locks (dev_user.c), the
 * admin ioctls (dev_admin.c), lockspace names, their list and the DLM
 * lockspaces and locks of the uapi (dev_dlm.c). main.c sees dev.h only.
 */
#ifndef _RDLOCK_DEV_PRI_H
#define _RDLOCK_DEV_PRI_H

#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/rdlock.h>

struct rdlock_locks_query;
struct rdlock_ls;
struct rdlock_ls_attr;
struct rdlock_lock_info;
struct rdlock_dev_dlk;
struct rdlock_dev_dls;
struct rdlock_user;
struct cred;

/**
 * struct rdlock_file - what one open file of /dev/rdlock holds
 * @sem: JOIN and LEAVE take it for writing, the lock ioctls for reading,
 *	so that the lockspace cannot go while a lock call sleeps in it.
 * @ls: the joined lockspace, or NULL.
 * @dd: the joined DLM lockspace, or NULL (one of @ls and @dd at most).
 * @may_write: the joiner may take exclusive and update locks.
 * @mutex: protects @locks, their marks and @nr_locks.
 * @locks: handle -> the file's lock, native or DLM (enum
 *	rdlock_file_lock_type, the tag of the entry's pointer); at most
 *	RDLOCK_FILE_LOCKS_MAX, so that a user allowed into a lockspace
 *	cannot pin unbounded memory. dev.c's rdlock_file_*() alone touch it.
 * @nr_locks: how many.
 * @user: the account of the opener's user (rdlock_user_of()), which
 *	every lock in @locks is charged to (dev_user.c), a DLM lock until it
 *	is freed: a user's files hold at most user_locks_max locks together.
 *	Kept until the file is freed.
 * @user_bounded: the opener had no CAP_SYS_RESOURCE: @user's bound
 *	applies to this file's locks.
 * @kref: the open file and each of its DLM locks: the callbacks of a lock
 *	given back after close still find @dlm_lock and @ast_wait.
 * @dlm_lock: protects @dlm_joined, @events, @nr_leaving and the state of
 *	the file's DLM locks; the DLM callbacks take it (process context).
 * @dlm_joined: @dd is set: read() and poll() have events to give.
 * @events: blocking events not read yet, one rdlock_dev_dlk.ev_node per
 *	lock at most: bounded by @nr_locks, and never allocated.
 * @nr_leaving: DLM locks LEAVE or close gave back whose unlock has not
 *	completed yet.
 * @ev_wait: read() and poll() wait here for @events.
 * @ast_wait: the DLM ioctls and LEAVE wait here for completions.
 */
struct rdlock_file {
	struct rw_semaphore sem;
	struct rdlock_ls *ls;
	struct rdlock_dev_dls *dd;
	bool may_write;
	struct mutex mutex;		/* @locks, their marks */
	struct xarray locks;
	unsigned int nr_locks;		/* in @locks */
	struct rdlock_user *user;
	bool user_bounded;
	struct kref kref;
	spinlock_t dlm_lock;		/* see above */
	bool dlm_joined;
	struct list_head events;
	unsigned int nr_leaving;
	wait_queue_head_t ev_wait;
	wait_queue_head_t ast_wait;
};

/**
 * enum rdlock_file_lock_type - what a handle of a file names
 * @RDLOCK_FILE_LOCK_NATIVE: a struct rdlock_lock of a plain lockspace.
 * @RDLOCK_FILE_LOCK_DLM: a struct rdlock_dev_dlk of a DLM lockspace.
 *
 * The tag of the pointer in rdlock_file.locks (xa_tag_pointer(): 0 and 1
 * are the XArray's to give), so a handle costs no memory beyond the lock.
 */
enum rdlock_file_lock_type {
	RDLOCK_FILE_LOCK_NATIVE	= 0,
	RDLOCK_FILE_LOCK_DLM	= 1,
};

/* dev.c: the open file and its lock table */
void rdlock_file_free(struct kref *kref);
int rdlock_dev_get_ls_name(struct rdlock_ls_name *n, void __user *argp);
int rdlock_file_add(struct rdlock_file *f, enum rdlock_file_lock_type type,
		    void *lk, bool pending, u32 *handle);
void rdlock_file_granted(struct rdlock_file *f, u32 handle);
void *rdlock_file_get(struct rdlock_file *f, enum rdlock_file_lock_type type,
		      u32 handle, long *err);
void rdlock_file_put(struct rdlock_file *f, u32 handle);
void rdlock_file_erase(struct rdlock_file *f, unsigned long handle);

/* dev_user.c: each user's account of its files' locks */
kuid_t rdlock_user_of(const struct cred *cred);
struct rdlock_user *rdlock_user_get(kuid_t uid);
void rdlock_user_put(struct rdlock_user *u);
int rdlock_user_room(const struct rdlock_user *u, bool bounded);
int rdlock_user_charge(struct rdlock_user *u, bool bounded);
void rdlock_user_uncharge(struct rdlock_user *u);
struct rdlock_proto_quota *rdlock_user_quota(const struct rdlock_user *u);
void rdlock_users_exit(void);

/* dev_admin.c: the cluster's configuration, status and lockspaces */
long rdlock_dev_admin_ioctl(unsigned int cmd, void __user *argp);
long rdlock_dev_list_out(void __user *argp, const void *arg, size_t arg_size,
			 u32 *count, u64 entries, const void *buf, u32 n,
			 size_t size);

/* dev_stats.c: RDLOCK_IOC_STATS, the counters under their uapi names */
long rdlock_ioc_stats(void __user *argp);

/* dev_dlm.c: lockspace names and list; DLM lockspaces, locks, events */
long rdlock_dev_ls_create(const struct rdlock_ls_create *c,
			  const struct rdlock_ls_attr *attr);
long rdlock_dev_ls_remove(const char *name);
long rdlock_dev_ls_join(struct rdlock_file *f, const char *name);
/* One of struct rdlock_ls_list.dlm_names. */
struct rdlock_dev_dlm_name {
	char name[RDLOCK_LS_DLM_NAME_LEN];
};

long rdlock_dev_ls_list(struct rdlock_ls_info *out,
			struct rdlock_dev_dlm_name *names, u32 max, u32 *count);
long rdlock_dev_ls_locks(const char *name, struct rdlock_locks_query *q);
void rdlock_dev_dls_exit(void);
long rdlock_dev_dlm_lock(struct rdlock_file *f,
			 const struct rdlock_lock_req *r, void __user *argp);
long rdlock_dev_dlm_convert(struct rdlock_file *f,
			    const struct rdlock_convert_req *c);
long rdlock_dev_dlm_unlock(struct rdlock_file *f, u32 handle);
void rdlock_dev_dlk_info(const struct rdlock_dev_dlk *dk,
			 struct rdlock_lock_info *info);
void rdlock_dev_dlk_abandon(struct rdlock_dev_dlk *dk, bool leaving);
void rdlock_dev_dls_leave(struct rdlock_file *f);
ssize_t rdlock_dev_read(struct file *file, char __user *buf, size_t count,
			loff_t *ppos);
__poll_t rdlock_dev_poll(struct file *file, poll_table *wait);

#endif /* _RDLOCK_DEV_PRI_H */
