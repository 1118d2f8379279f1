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

#include "xport-pri.h"
#include "uapi_check.h"
#include "proto.h"

int rdlock_backend_param = RDLOCK_BACKEND_NONE;
unsigned int rdlock_table_slots_param = 4096;
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

static int rdlock_slots_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	/* One registration of physically contiguous memory: at most 4 MiB. */
	if (n <= RDLOCK_XPORT_RESERVED_SLOTS || n > (4U << 20) / sizeof(u64))
		return -EINVAL;
	WRITE_ONCE(rdlock_table_slots_param, n);
	return 0;
}

static const struct kernel_param_ops rdlock_slots_ops = {
	.set = rdlock_slots_set,
	.get = param_get_uint,
};

module_param_cb(table_slots, &rdlock_slots_ops, &rdlock_table_slots_param,
		0644);
MODULE_PARM_DESC(table_slots,
		 "8-byte slots in this node's lock table (9..524288, default 4096); read when the cluster goes up");

module_param_named(op_timeout_ms, rdlock_op_timeout_ms, uint, 0644);
MODULE_PARM_DESC(op_timeout_ms,
		 "default timeout of a synchronous remote operation (default 5000)");

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

static long rdlock_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case RDLOCK_IOC_STATUS:
		return rdlock_ioc_status(argp);
	case RDLOCK_IOC_SET_CONFIG:
	case RDLOCK_IOC_ADD_PEER:
	case RDLOCK_IOC_DEL_PEER:
	case RDLOCK_IOC_UP:
	case RDLOCK_IOC_DOWN:
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
	default:
		return rdlock_ioc_up_down(false);
	}
}

static const struct file_operations rdlock_fops = {
	.owner		= THIS_MODULE,
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
	rdlock_debugfs_init();
	ret = misc_register(&rdlock_misc);
	if (ret)
		goto exit_proto;
	return 0;

exit_proto:
	rdlock_debugfs_exit();
	rdlock_proto_exit();
exit_xport:
	rdlock_xport_exit();
	return ret;
}

static void __exit rdlock_exit(void)
{
	misc_deregister(&rdlock_misc);
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
