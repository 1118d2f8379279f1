// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock: distributed locks over RDMA. Module parameters, /dev/rdlock and
 * its cluster configuration ioctls.
 *
 * Every ioctl copies its argument in, validates it completely with the
 * pure checks of uapi_check.h, and only then takes the configuration mutex
 * and changes state, so a rejected call changes nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/slab.h>

#include <linux/cred.h>
#include <linux/rwsem.h>
#include <linux/xarray.h>

#include "xport-pri.h"
#include "uapi_check.h"
#include "proto.h"
#include "lockspace-pri.h"
#include "dlm-pri.h"

int rdlock_backend_param = RDLOCK_BACKEND_NONE;
unsigned int rdlock_table_slots_param = 32768;
unsigned int rdlock_op_timeout_ms = 5000;

static const char *const rdlock_backend_param_names[] = {
	[RDLOCK_BACKEND_NONE]		= "auto",
	[RDLOCK_BACKEND_VERBS]		= "verbs",
	[RDLOCK_BACKEND_TWOSIDED]	= "twosided",
};

static int rdlock_backend_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(rdlock_backend_param_names, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(rdlock_backend_param, i);
	return 0;
}

static int rdlock_backend_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  rdlock_backend_param_names[READ_ONCE(rdlock_backend_param)]);
}

static const struct kernel_param_ops rdlock_backend_ops = {
	.set = rdlock_backend_set,
	.get = rdlock_backend_get,
};

module_param_cb(backend, &rdlock_backend_ops, NULL, 0644);
MODULE_PARM_DESC(backend,
		 "atomic backend: auto (verbs if every node can), verbs, twosided; read when the cluster goes up");

/* Take the unsigned parameter @val into @dst only if it is in [@min, @max]. */
static int rdlock_param_set_range(const char *val, unsigned int min,
				  unsigned int max, unsigned int *dst)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n < min || n > max)
		return -EINVAL;
	WRITE_ONCE(*dst, n);
	return 0;
}

static int rdlock_slots_set(const char *val, const struct kernel_param *kp)
{
	/* One registration of physically contiguous memory: at most 4 MiB. */
	return rdlock_param_set_range(val, RDLOCK_XPORT_RESERVED_SLOTS + 1,
				      (4U << 20) / sizeof(u64),
				      &rdlock_table_slots_param);
}

static const struct kernel_param_ops rdlock_slots_ops = {
	.set = rdlock_slots_set,
	.get = param_get_uint,
};

module_param_cb(table_slots, &rdlock_slots_ops, &rdlock_table_slots_param,
		0644);
MODULE_PARM_DESC(table_slots,
		 "8-byte slots in this node's lock table (9..524288, default 32768; lockspaces need more than 1225); read when the cluster goes up");

/* 0 would give every synchronous operation up at once. */
#define RDLOCK_OP_TIMEOUT_MAX_MS	3600000U

static int rdlock_op_timeout_set(const char *val, const struct kernel_param *kp)
{
	return rdlock_param_set_range(val, 1, RDLOCK_OP_TIMEOUT_MAX_MS,
				      &rdlock_op_timeout_ms);
}

static const struct kernel_param_ops rdlock_op_timeout_ops = {
	.set = rdlock_op_timeout_set,
	.get = param_get_uint,
};

module_param_cb(op_timeout_ms, &rdlock_op_timeout_ops, &rdlock_op_timeout_ms,
		0644);
MODULE_PARM_DESC(op_timeout_ms,
		 "default timeout of a synchronous remote operation (1..3600000, default 5000)");

/* ------------------------------------------------------------------ */
/* Configuration ioctls                                               */

/* Another node (self included) already has this address? */
static bool rdlock_addr_taken(const struct sockaddr_storage *ss)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (cl->nodes[i].configured &&
		    rdlock_sockaddr_equal(&cl->nodes[i].addr, ss))
			return true;
	return false;
}

static void rdlock_set_node(u32 id, const struct sockaddr_storage *ss,
			    bool configured)
{
	struct rdlock_node *node = &rdlock_cl.nodes[id];

	spin_lock_bh(&rdlock_cl.lock);
	node->configured = configured;
	if (configured)
		node->addr = *ss;
	spin_unlock_bh(&rdlock_cl.lock);
}

static long rdlock_ioc_set_config(void __user *argp)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_cluster_config cfg;
	struct sockaddr_storage ss;
	long ret;
	u32 i;

	if (copy_from_user(&cfg, argp, sizeof(cfg)))
		return -EFAULT;
	ret = rdlock_check_config(&cfg, &ss);
	if (ret)
		return ret;

	mutex_lock(&cl->cfg_mutex);
	if (cl->up) {
		ret = -EBUSY;
		goto out;
	}
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		rdlock_set_node(i, NULL, false);
	spin_lock_bh(&cl->lock);
	cl->cluster_id = cfg.cluster_id;
	cl->self = cfg.node_id;
	cl->configured = true;
	spin_unlock_bh(&cl->lock);
	rdlock_set_node(cfg.node_id, &ss, true);
	/* A new configuration has no key until one is set for it. */
	if (cl->auth_tfm)
		rdlock_auth_set_key(NULL, 0);
out:
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

static long rdlock_ioc_peer(void __user *argp, bool add)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct sockaddr_storage ss;
	struct rdlock_peer peer;
	long ret;

	if (copy_from_user(&peer, argp, sizeof(peer)))
		return -EFAULT;
	ret = rdlock_check_peer(&peer, add ? &ss : NULL);
	if (ret)
		return ret;

	mutex_lock(&cl->cfg_mutex);
	if (!cl->configured)
		ret = -ENXIO;
	else if (cl->up)
		ret = -EBUSY;
	else if (add && (cl->nodes[peer.node_id].configured ||
			 rdlock_addr_taken(&ss)))
		ret = -EEXIST;
	else if (!add && (!cl->nodes[peer.node_id].configured ||
			  peer.node_id == cl->self))
		ret = -ENOENT;
	else
		rdlock_set_node(peer.node_id, &ss, add);
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

/* Set or clear the cluster key: only while down, never read back. */
static long rdlock_ioc_set_key(void __user *argp)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_cluster_key *k;
	long ret;

	k = kmalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	if (copy_from_user(k, argp, sizeof(*k))) {
		ret = -EFAULT;
		goto out;
	}
	ret = rdlock_check_key_arg(k);
	if (ret)
		goto out;

	mutex_lock(&cl->cfg_mutex);
	if (!cl->configured)
		ret = -ENXIO;
	else if (cl->up)
		ret = -EBUSY;
	else
		ret = rdlock_auth_set_key(k->key, k->len);
	mutex_unlock(&cl->cfg_mutex);
out:
	kfree_sensitive(k);
	return ret;
}

static long rdlock_ioc_up_down(bool up)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	long ret = 0;

	mutex_lock(&cl->cfg_mutex);
	if (!cl->configured)
		ret = -ENXIO;
	else if (cl->up == up)
		ret = -EALREADY;
	else if (up)
		ret = rdlock_cluster_up();
	else if (rdlock_ls_any())
		ret = -EBUSY;	/* their regions would not survive it */
	else
		rdlock_cluster_down();
	mutex_unlock(&cl->cfg_mutex);
	return ret;
}

static long rdlock_ioc_status(void __user *argp)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_node_status *ns;
	struct rdlock_status st;
	u32 i, n = 0;
	long ret = 0;

	if (copy_from_user(&st, argp, sizeof(st)))
		return -EFAULT;
	ret = rdlock_check_status(&st);
	if (ret)
		return ret;
	ns = kcalloc(RDLOCK_MAX_NODES, sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return -ENOMEM;

	mutex_lock(&cl->cfg_mutex);
	st.state = rdlock_cluster_state();
	spin_lock_bh(&cl->lock);
	st.backend = cl->backend;
	st.node_id = cl->configured ? cl->self : 0;
	st.cluster_id = cl->configured ? cl->cluster_id : 0;
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		struct rdlock_node *node = &cl->nodes[i];

		if (!node->configured)
			continue;
		ns[n].node_id = i;
		ns[n].connects = node->connects;
		if (i == cl->self)
			ns[n].flags |= RDLOCK_NODE_SELF;
		if (node->adv_known && node->adv.verbs_capable)
			ns[n].flags |= RDLOCK_NODE_VERBS_ATOMICS;
		n++;
	}
	spin_unlock_bh(&cl->lock);
	for (i = 0; i < n; i++)
		ns[i].state = rdlock_node_state(ns[i].node_id);
	mutex_unlock(&cl->cfg_mutex);

	if (copy_to_user(u64_to_user_ptr(st.nodes), ns,
			 min(n, st.nr_nodes) * sizeof(*ns)))
		ret = -EFAULT;
	st.nr_nodes = n;
	if (!ret && copy_to_user(argp, &st, sizeof(st)))
		ret = -EFAULT;
	kfree(ns);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Lockspaces and locks                                               */

/**
 * struct rdlock_file - what one open file of /dev/rdlock holds
 * @sem: JOIN and LEAVE take it for writing, the lock ioctls for reading,
 *	so that the lockspace cannot go while a lock call sleeps in it.
 * @ls: the joined lockspace, or NULL.
 * @may_write: the joiner may take exclusive and update locks.
 * @mutex: protects @locks and rdlock_lock.busy.
 * @locks: handle -> struct rdlock_lock; at most RDLOCK_FILE_LOCKS_MAX, so
 *	that a user allowed into a lockspace cannot pin unbounded memory.
 * @nr_locks: how many.
 */
struct rdlock_file {
	struct rw_semaphore sem;
	struct rdlock_ls *ls;
	bool may_write;
	struct mutex mutex;		/* @locks, rdlock_lock.busy */
	struct xarray locks;
	unsigned int nr_locks;		/* in @locks */
};

static int rdlock_open(struct inode *inode, struct file *file)
{
	struct rdlock_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	init_rwsem(&f->sem);
	mutex_init(&f->mutex);
	xa_init_flags(&f->locks, XA_FLAGS_ALLOC1);
	file->private_data = f;
	return 0;
}

/* Forget the file's lock @handle (the caller unlocks it). */
static void rdlock_file_erase(struct rdlock_file *f, unsigned long handle)
{
	mutex_lock(&f->mutex);
	if (xa_erase(&f->locks, handle))
		f->nr_locks--;
	mutex_unlock(&f->mutex);
}

/* Release every lock of the file and leave its lockspace; sem held. */
static void rdlock_file_leave(struct rdlock_file *f)
{
	struct rdlock_lock *lk;
	unsigned long handle;

	xa_for_each(&f->locks, handle, lk) {
		rdlock_file_erase(f, handle);
		rdlock_unlock(lk);
	}
	mutex_lock(&rdlock_ls_mutex);
	rdlock_ls_put_locked(f->ls);
	mutex_unlock(&rdlock_ls_mutex);
	f->ls = NULL;
}

/* Closing the file (or its process dying) releases what it held. */
static int rdlock_release(struct inode *inode, struct file *file)
{
	struct rdlock_file *f = file->private_data;

	if (f->ls)
		rdlock_file_leave(f);
	xa_destroy(&f->locks);
	kfree(f);
	return 0;
}

static long rdlock_ioc_ls_create(void __user *argp)
{
	struct rdlock_ls_create c;
	struct rdlock_ls_attr attr;
	struct rdlock_ls *ls;
	long ret = 0;

	if (copy_from_user(&c, argp, sizeof(c)))
		return -EFAULT;
	ret = rdlock_check_ls_create(&c, &attr);
	if (ret)
		return ret;
	if (!rdlock_xport_ready())
		return -ENOTCONN;
	if (mutex_lock_killable(&rdlock_ls_join_mutex))
		return -EINTR;
	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_find(c.name);
	if (ls && ls->created)
		ret = -EEXIST;
	mutex_unlock(&rdlock_ls_mutex);
	if (ret)
		goto out;
	ls = rdlock_ls_open_locked(c.name, &attr);
	if (IS_ERR(ls)) {
		ret = PTR_ERR(ls);
		goto out;
	}
	mutex_lock(&rdlock_ls_mutex);
	ls->created = true;
	ls->uid = make_kuid(current_user_ns(), c.uid);
	ls->gid = make_kgid(current_user_ns(), c.gid);
	ls->mode = c.mode;
	mutex_unlock(&rdlock_ls_mutex);
out:
	mutex_unlock(&rdlock_ls_join_mutex);
	return ret;
}

static long rdlock_ioc_ls_remove(void __user *argp)
{
	struct rdlock_ls_name n;
	struct rdlock_ls *ls;
	long ret = 0;

	if (copy_from_user(&n, argp, sizeof(n)))
		return -EFAULT;
	ret = rdlock_check_ls_name(&n);
	if (ret)
		return ret;
	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_find(n.name);
	if (!ls || !ls->created) {
		ret = -ENOENT;
	} else if (ls->users > 1) {
		ret = -EBUSY;
	} else {
		ls->created = false;
		rdlock_ls_put_locked(ls);
	}
	mutex_unlock(&rdlock_ls_mutex);
	return ret;
}

/* The file permission bits of a lockspace that apply to the caller. */
static umode_t rdlock_ls_perm(const struct rdlock_ls *ls)
{
	if (capable(CAP_SYS_ADMIN))
		return 07;
	if (uid_eq(current_fsuid(), ls->uid))
		return (ls->mode >> 6) & 07;
	if (in_group_p(ls->gid))
		return (ls->mode >> 3) & 07;
	return ls->mode & 07;
}

static long rdlock_ioc_join(struct rdlock_file *f, void __user *argp)
{
	struct rdlock_ls_name n;
	struct rdlock_ls *ls;
	umode_t perm;
	long ret = 0;

	if (copy_from_user(&n, argp, sizeof(n)))
		return -EFAULT;
	ret = rdlock_check_ls_name(&n);
	if (ret)
		return ret;
	if (down_write_killable(&f->sem))
		return -EINTR;
	mutex_lock(&rdlock_ls_mutex);
	ls = rdlock_ls_find(n.name);
	if (f->ls) {
		ret = -EBUSY;
	} else if (!ls || !ls->created) {
		ret = -ENOENT;
	} else {
		perm = rdlock_ls_perm(ls);
		if (!(perm & (MAY_READ | MAY_WRITE))) {
			ret = -EACCES;
		} else {
			ls->users++;
			f->ls = ls;
			f->may_write = perm & MAY_WRITE;
		}
	}
	mutex_unlock(&rdlock_ls_mutex);
	up_write(&f->sem);
	return ret;
}

static long rdlock_ioc_leave(struct rdlock_file *f)
{
	long ret = 0;

	if (down_write_killable(&f->sem))
		return -EINTR;
	if (f->ls)
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
	lk->owner = task_tgid_nr(current);
	/* Full before waiting: -ENOLCK at once, not after a grant. */
	mutex_lock(&f->mutex);
	ret = f->nr_locks >= RDLOCK_FILE_LOCKS_MAX ? -ENOLCK : 0;
	mutex_unlock(&f->mutex);
	if (ret)
		goto free;
	ret = rdlock_lock_acquire(lk);
	if (ret)
		goto free;
	mutex_lock(&f->mutex);
	/* Other threads of the file may have filled it meanwhile. */
	ret = f->nr_locks >= RDLOCK_FILE_LOCKS_MAX ? -ENOLCK :
	      xa_alloc(&f->locks, &handle, lk, xa_limit_31b, GFP_KERNEL);
	if (!ret)
		f->nr_locks++;
	mutex_unlock(&f->mutex);
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

/* The file's lock @handle, marked busy; NULL if unknown or already busy. */
static struct rdlock_lock *rdlock_file_get_lock(struct rdlock_file *f,
						u32 handle, long *err)
{
	struct rdlock_lock *lk;

	mutex_lock(&f->mutex);
	lk = xa_load(&f->locks, handle);
	if (!lk)
		*err = -ENOENT;
	else if (lk->busy)
		*err = -EBUSY;
	else
		lk->busy = true;
	mutex_unlock(&f->mutex);
	return *err ? NULL : lk;
}

static void rdlock_file_put_lock(struct rdlock_file *f, struct rdlock_lock *lk)
{
	mutex_lock(&f->mutex);
	lk->busy = false;
	mutex_unlock(&f->mutex);
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
	if (!f->ls)
		return -EBADFD;
	lk = rdlock_file_get_lock(f, u.handle, &ret);
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
	if (!f->ls)
		return -EBADFD;
	lk = rdlock_file_get_lock(f, c.handle, &ret);
	if (!lk)
		return ret;
	if (c.mode != RDLOCK_LOCK_SH && !f->may_write) {
		ret = -EACCES;
	} else {
		opts.flags = c.flags;
		opts.timeout_ms = c.timeout_ms;
		ret = rdlock_convert(lk, c.mode, &opts);
	}
	rdlock_file_put_lock(f, lk);
	return ret;
}

static long rdlock_ioc_query(struct rdlock_file *f, void __user *argp)
{
	struct rdlock_query q;
	struct rdlock_lock *lk;
	long ret = 0;

	if (copy_from_user(&q, argp, sizeof(q)))
		return -EFAULT;
	ret = rdlock_check_query(&q);
	if (ret)
		return ret;
	if (!f->ls)
		return -EBADFD;
	mutex_lock(&f->mutex);
	lk = xa_load(&f->locks, q.handle);
	if (lk) {
		q.mode = rdlock_lock_mode(lk);
		q.home_node = lk->ticket.node;
		q.slot = lk->ticket.slot;
		q.name_len = lk->res->len;
		memset(q.name, 0, sizeof(q.name));
		memcpy(q.name, lk->res->name, lk->res->len);
		q.held_ms = ktime_ms_delta(ktime_get(), lk->since);
		q.remote_ops = lk->ticket.remote_ops;
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
	case RDLOCK_IOC_STATUS:
		return rdlock_ioc_status(argp);
	case RDLOCK_IOC_JOIN:
		return rdlock_ioc_join(f, argp);
	case RDLOCK_IOC_LEAVE:
		return rdlock_ioc_leave(f);
	case RDLOCK_IOC_LOCK:
	case RDLOCK_IOC_UNLOCK:
	case RDLOCK_IOC_CONVERT:
	case RDLOCK_IOC_QUERY:
		return rdlock_lock_ioctl(f, cmd, argp);
	case RDLOCK_IOC_SET_CONFIG:
	case RDLOCK_IOC_ADD_PEER:
	case RDLOCK_IOC_DEL_PEER:
	case RDLOCK_IOC_UP:
	case RDLOCK_IOC_DOWN:
	case RDLOCK_IOC_SET_KEY:
	case RDLOCK_IOC_LS_CREATE:
	case RDLOCK_IOC_LS_REMOVE:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		break;
	default:
		return -ENOTTY;
	}

	switch (cmd) {
	case RDLOCK_IOC_SET_CONFIG:
		return rdlock_ioc_set_config(argp);
	case RDLOCK_IOC_ADD_PEER:
		return rdlock_ioc_peer(argp, true);
	case RDLOCK_IOC_DEL_PEER:
		return rdlock_ioc_peer(argp, false);
	case RDLOCK_IOC_UP:
		return rdlock_ioc_up_down(true);
	case RDLOCK_IOC_SET_KEY:
		return rdlock_ioc_set_key(argp);
	case RDLOCK_IOC_LS_CREATE:
		return rdlock_ioc_ls_create(argp);
	case RDLOCK_IOC_LS_REMOVE:
		return rdlock_ioc_ls_remove(argp);
	default:
		return rdlock_ioc_up_down(false);
	}
}

static const struct file_operations rdlock_fops = {
	.owner		= THIS_MODULE,
	.open		= rdlock_open,
	.release	= rdlock_release,
	.unlocked_ioctl	= rdlock_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice rdlock_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "rdlock",
	.fops	= &rdlock_fops,
	/* Locking is for everyone; configuration checks CAP_SYS_ADMIN. */
	.mode	= 0666,
};

static int __init rdlock_init(void)
{
	int ret;

	ret = rdlock_xport_init();
	if (ret)
		return ret;
	ret = rdlock_proto_init();
	if (ret)
		goto exit_xport;
	ret = rdlock_ls_init();
	if (ret)
		goto exit_proto;
	ret = rdlock_dlm_init();
	if (ret)
		goto exit_ls;
	rdlock_debugfs_init();
	ret = misc_register(&rdlock_misc);
	if (ret)
		goto exit_dlm;
	return 0;

exit_dlm:
	rdlock_debugfs_exit();
	rdlock_dlm_exit();
exit_ls:
	rdlock_ls_exit();
exit_proto:
	rdlock_proto_exit();
exit_xport:
	rdlock_xport_exit();
	return ret;
}

static void __exit rdlock_exit(void)
{
	misc_deregister(&rdlock_misc);
	rdlock_dlm_exit();
	rdlock_ls_exit();
	rdlock_debugfs_exit();
	/* Down first: background tickets end when their operations fail. */
	rdlock_xport_shutdown();
	rdlock_proto_exit();
	rdlock_xport_exit();
}

module_init(rdlock_init);
module_exit(rdlock_exit);

MODULE_DESCRIPTION("rdlock: distributed locks over RDMA");
MODULE_LICENSE("GPL");
