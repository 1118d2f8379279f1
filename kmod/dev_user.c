// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock: the locks of one user's /dev/rdlock files, bounded together
 * (user_locks_max). A file is charged to its opener (rdlock_user_of()): one
 * struct rdlock_user per uid with a file of /dev/rdlock, which the file's
 * lock table (dev.c) charges each lock to and uncharges it from.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "dev-pri.h"

/*
 * Locks the files of one user may have together on this node, native and
 * DLM, held or requested: 16 full files (RDLOCK_FILE_LOCKS_MAX) by
 * default, 4096 at most. Read at each LOCK; lowering it refuses new
 * locks, takes none back.
 */
#define RDLOCK_USER_LOCKS_MAX_MAX	(4096U * RDLOCK_FILE_LOCKS_MAX)
static unsigned int rdlock_user_locks_max = 65536;

static int rdlock_user_locks_max_set(const char *val,
				     const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, RDLOCK_USER_LOCKS_MAX_MAX);
}

static const struct kernel_param_ops rdlock_user_locks_max_ops = {
	.set = rdlock_user_locks_max_set,
	.get = param_get_uint,
};

module_param_cb(user_locks_max, &rdlock_user_locks_max_ops,
		&rdlock_user_locks_max, 0644);
MODULE_PARM_DESC(user_locks_max,
		 "locks the /dev/rdlock files one user opened may have together on this node (1..16777216, default 65536); openers with CAP_SYS_RESOURCE are not bounded");

/**
 * struct rdlock_user - the account of one user's /dev/rdlock files
 * @node: in rdlock_users, under rdlock_users_lock.
 * @uid: the user of the files' opener (rdlock_user_of()).
 * @refs: the open files charged to it, until each is freed.
 * @locks: the locks charged to it, those of files opened with
 *	CAP_SYS_RESOURCE too (they are counted, not bounded).
 */
struct rdlock_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t refs;
	atomic_t locks;
};

#define RDLOCK_USERS_BITS	6
static DEFINE_HASHTABLE(rdlock_users, RDLOCK_USERS_BITS);
static DEFINE_SPINLOCK(rdlock_users_lock);

/* @uid's account with a reference more, or NULL; rdlock_users_lock held. */
static struct rdlock_user *rdlock_user_find(kuid_t uid)
{
	struct rdlock_user *u;

	lockdep_assert_held(&rdlock_users_lock);
	hash_for_each_possible(rdlock_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid)) {
			refcount_inc(&u->refs);
			return u;
		}
	return NULL;
}

/**
 * rdlock_user_of() - the user a file opened with @cred is charged to
 * @cred: the opener's credentials.
 *
 * Its real uid; in a user namespace, the user that made the outermost one
 * (in the initial namespace): else a user with subordinate ids would have
 * an account for each of them.
 *
 * Return: the uid to charge.
 */
kuid_t rdlock_user_of(const struct cred *cred)
{
	const struct user_namespace *ns = cred->user_ns;
	kuid_t uid = cred->uid;

	for (; ns != &init_user_ns; ns = ns->parent)
		uid = ns->owner;
	return uid;
}

/**
 * rdlock_user_get() - the account of @uid, made if it has none; may sleep
 * @uid: the user of a file's opener (rdlock_user_of()).
 *
 * Return: the account, with a reference for the caller (rdlock_user_put()
 * drops it), or NULL without memory.
 */
struct rdlock_user *rdlock_user_get(kuid_t uid)
{
	struct rdlock_user *u, *new;

	spin_lock(&rdlock_users_lock);
	u = rdlock_user_find(uid);
	spin_unlock(&rdlock_users_lock);
	if (u)
		return u;
	/* Charged to the opener, as the file. */
	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return NULL;
	new->uid = uid;
	refcount_set(&new->refs, 1);
	atomic_set(&new->locks, 0);
	spin_lock(&rdlock_users_lock);
	/* Another file of @uid may have made it meanwhile. */
	u = rdlock_user_find(uid);
	if (!u) {
		hash_add(rdlock_users, &new->node, __kuid_val(uid));
		u = new;
		new = NULL;
	}
	spin_unlock(&rdlock_users_lock);
	kfree(new);
	return u;
}

/**
 * rdlock_user_put() - drop a reference rdlock_user_get() gave
 * @u: the account; freed with its last reference, when no lock is
 *	charged to it any more.
 */
void rdlock_user_put(struct rdlock_user *u)
{
	/* Under the lock: rdlock_user_find() takes references. */
	spin_lock(&rdlock_users_lock);
	if (!refcount_dec_and_test(&u->refs)) {
		spin_unlock(&rdlock_users_lock);
		return;
	}
	hash_del(&u->node);
	spin_unlock(&rdlock_users_lock);
	WARN_ON_ONCE(atomic_read(&u->locks));
	kfree(u);
}

/**
 * rdlock_user_room() - may @u be charged one more lock
 * @u: the account.
 * @bounded: the file was opened without CAP_SYS_RESOURCE.
 *
 * A check before a LOCK waits; rdlock_user_charge() decides.
 *
 * Return: 0, or -ENOLCK when @bounded and @u has user_locks_max locks.
 */
int rdlock_user_room(const struct rdlock_user *u, bool bounded)
{
	if (bounded && atomic_read(&u->locks) >=
		       (int)READ_ONCE(rdlock_user_locks_max))
		return -ENOLCK;
	return 0;
}

/**
 * rdlock_user_charge() - charge a lock to @u
 * @u: the account.
 * @bounded: the file was opened without CAP_SYS_RESOURCE.
 *
 * Return: 0, the lock charged (rdlock_user_uncharge() returns it), or
 * -ENOLCK when @bounded and @u has user_locks_max locks already.
 */
int rdlock_user_charge(struct rdlock_user *u, bool bounded)
{
	int max = READ_ONCE(rdlock_user_locks_max);
	int n = atomic_read(&u->locks);

	if (!bounded) {
		atomic_inc(&u->locks);
		return 0;
	}
	do {
		if (n >= max)
			return -ENOLCK;
	} while (!atomic_try_cmpxchg(&u->locks, &n, n + 1));
	return 0;
}

/**
 * rdlock_user_uncharge() - return a lock rdlock_user_charge() charged
 * @u: the account.
 */
void rdlock_user_uncharge(struct rdlock_user *u)
{
	WARN_ON_ONCE(atomic_dec_return(&u->locks) < 0);
}
