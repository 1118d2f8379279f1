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
#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "lockspace.h"
#include "dev.h"
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

/*
 * The bound of each user's quota of abandoned tickets (lockspace_dev.c,
 * rdlock_user_quota_new()): read when a user with no file open opens one.
 */
static unsigned int rdlock_user_finishing_max = 64;

static int rdlock_user_finishing_max_set(const char *val,
					 const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 4096);
}

static const struct kernel_param_ops rdlock_user_finishing_max_ops = {
	.set = rdlock_user_finishing_max_set,
	.get = param_get_uint,
};

module_param_cb(user_finishing_max, &rdlock_user_finishing_max_ops,
		&rdlock_user_finishing_max, 0644);
MODULE_PARM_DESC(user_finishing_max,
		 "acquisitions with a timeout or TRY one user's /dev/rdlock files may have under way or left finishing in the background together, and killed waiters' tickets finishing (1..4096, default 64; read when a user with no file open opens one)");

/**
 * struct rdlock_user - the account of one user's /dev/rdlock files
 * @node: in rdlock_users, under rdlock_users_lock.
 * @uid: the user of the files' opener (rdlock_user_of()).
 * @files: the open files charged to it, until each is freed; under
 *	rdlock_users_lock.
 * @locks: the locks charged to it, those of files opened with
 *	CAP_SYS_RESOURCE too (they are counted, not bounded).
 * @quota: the bound on its abandoned tickets (rdlock_user_quota_new()).
 *	An account whose quota still counts tickets finishing in the
 *	background when its last file goes stays, with no file, until they
 *	are finished (rdlock_user_put()): closing every file must not start
 *	the user's bound afresh.
 */
struct rdlock_user {
	struct hlist_node node;
	kuid_t uid;
	unsigned int files;
	atomic_t locks;
	struct rdlock_proto_quota *quota;
};

#define RDLOCK_USERS_BITS	6
static DEFINE_HASHTABLE(rdlock_users, RDLOCK_USERS_BITS);
static DEFINE_SPINLOCK(rdlock_users_lock);

/*
 * @uid's account with one file more, or NULL; rdlock_users_lock held. One
 * kept with no file (rdlock_user_put()) takes today's bound.
 */
static struct rdlock_user *rdlock_user_find(kuid_t uid)
{
	struct rdlock_user *u;

	lockdep_assert_held(&rdlock_users_lock);
	hash_for_each_possible(rdlock_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid)) {
			if (!u->files++)
				rdlock_user_quota_set_max(u->quota,
							  READ_ONCE(rdlock_user_finishing_max));
			return u;
		}
	return NULL;
}

static void rdlock_user_free(struct rdlock_user *u)
{
	WARN_ON_ONCE(atomic_read(&u->locks));
	rdlock_user_quota_put(u->quota);
	kfree(u);
}

/*
 * Free the accounts kept with no file whose tickets are finished
 * (rdlock_user_put()); rdlock_users_lock held. Every @all: the module's
 * exit, once no file is open.
 */
static void rdlock_users_sweep(bool all)
{
	struct hlist_node *tmp;
	struct rdlock_user *u;
	int bkt;

	lockdep_assert_held(&rdlock_users_lock);
	hash_for_each_safe(rdlock_users, bkt, tmp, u, node) {
		if (u->files) {
			WARN_ON_ONCE(all);
			continue;
		}
		if (!all && rdlock_user_quota_busy(u->quota))
			continue;
		hash_del(&u->node);
		rdlock_user_free(u);
	}
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
	new->quota = rdlock_user_quota_new(READ_ONCE(rdlock_user_finishing_max));
	if (!new->quota) {
		kfree(new);
		return NULL;
	}
	new->uid = uid;
	new->files = 1;
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
	if (new)
		rdlock_user_free(new);
	return u;
}

/**
 * rdlock_user_put() - drop a file rdlock_user_get() counted
 * @u: the account; freed with its last file, when no lock is charged to
 *	it any more, unless tickets its quota counts are still finishing:
 *	then it stays for the user's next file, and is freed at the next
 *	last close of any user's once they are finished (or at the module's
 *	exit, rdlock_users_exit()).
 */
void rdlock_user_put(struct rdlock_user *u)
{
	spin_lock(&rdlock_users_lock);
	if (!--u->files)
		rdlock_users_sweep(false);
	spin_unlock(&rdlock_users_lock);
}

/**
 * rdlock_user_quota() - the bound on @u's abandoned tickets
 * @u: the account.
 *
 * Return: the quota its files' acquisitions count in
 * (rdlock_lock_set_quota()); it lives as long as @u.
 */
struct rdlock_proto_quota *rdlock_user_quota(const struct rdlock_user *u)
{
	return u->quota;
}

static int rdlock_users_show(struct seq_file *m, void *v)
{
	struct rdlock_user *u;
	char prefix[32];
	int bkt;

	spin_lock(&rdlock_users_lock);
	hash_for_each(rdlock_users, bkt, u, node) {
		snprintf(prefix, sizeof(prefix), "user %u ",
			 __kuid_val(u->uid));
		seq_printf(m, "%sfiles: %u\n%slocks: %d\n", prefix,
			   u->files, prefix,
			   atomic_read(&u->locks));
		rdlock_quota_show(m, prefix, u->quota);
	}
	spin_unlock(&rdlock_users_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlock_users);

/**
 * rdlock_users_debugfs_init() - debugfs "users": each account's counts
 * @root: rdlock's debugfs directory.
 */
void rdlock_users_debugfs_init(struct dentry *root)
{
	debugfs_create_file("users", 0444, root, NULL, &rdlock_users_fops);
}

/**
 * rdlock_users_exit() - free the accounts kept for their quotas
 *
 * At the module's exit, once no file is open: every account left has no
 * file (rdlock_user_put()).
 */
void rdlock_users_exit(void)
{
	/* Under the lock: debugfs may still read the accounts. */
	spin_lock(&rdlock_users_lock);
	rdlock_users_sweep(true);
	spin_unlock(&rdlock_users_lock);
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
