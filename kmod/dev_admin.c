// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock: /dev/rdlock's admin ioctls: the cluster configuration (the
 * transport applies it), its status, node failures and the lockspaces'
 * creation, removal, list and locks. All but STATUS, LS_LIST and STATS
 * (whose counters dev_stats.c gathers) need CAP_SYS_ADMIN.
 *
 * Every ioctl copies its argument in, validates it completely with the
 * pure checks of uapi_check.h, and only then takes the configuration mutex
 * and changes state, so a rejected call changes nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "xport.h"
#include "uapi_check.h"
#include "lockspace.h"
#include "dev-pri.h"

/* ------------------------------------------------------------------ */
/* Configuration ioctls: checked here, applied by the transport       */

static long rdlock_ioc_set_config(void __user *argp)
{
	struct rdlock_cluster_config cfg;
	struct sockaddr_storage ss;
	long ret;

	if (copy_from_user(&cfg, argp, sizeof(cfg)))
		return -EFAULT;
	ret = rdlock_check_config(&cfg, &ss);
	if (ret)
		return ret;
	return rdlock_xport_configure(cfg.cluster_id, cfg.node_id, &ss,
				      cfg.name,
				      cfg.flags & RDLOCK_CONFIG_INSECURE_NO_KEY);
}

static long rdlock_ioc_peer(void __user *argp, bool add)
{
	struct sockaddr_storage ss;
	struct rdlock_peer peer;
	long ret;

	if (copy_from_user(&peer, argp, sizeof(peer)))
		return -EFAULT;
	ret = rdlock_check_peer(&peer, add ? &ss : NULL);
	if (ret)
		return ret;
	return rdlock_xport_set_peer(peer.node_id, add ? &ss : NULL);
}

/* A node failed: on every survivor, cut it off and release its locks. */
static long rdlock_ioc_node_down(void __user *argp)
{
	struct rdlock_node_down nd;
	long ret;

	if (copy_from_user(&nd, argp, sizeof(nd)))
		return -EFAULT;
	ret = rdlock_check_node_down(&nd);
	if (ret)
		return ret;
	return rdlock_ls_node_down(nd.node_id);
}

/* Set or clear the cluster key: only while down, never read back. */
static long rdlock_ioc_set_key(void __user *argp)
{
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
	if (!ret)
		ret = rdlock_xport_set_key(k->key, k->len);
out:
	kfree_sensitive(k);
	return ret;
}

static long rdlock_ioc_up_down(bool up)
{
	long ret;

	if (!up) {
		/* Down would free the tables under the lockspaces. */
		ret = rdlock_xport_up_down(false, rdlock_ls_any, false);
		if (!ret)
			rdlock_member_down();
		return ret;
	}
	/* Refused for its key before it shows in the engine's membership. */
	ret = rdlock_xport_up_allowed();
	if (ret)
		return ret;
	/* With membership=dlm: up only as a member of the cluster engine's. */
	ret = rdlock_member_up();
	if (ret)
		return ret;
	ret = rdlock_xport_up_down(true, rdlock_ls_any, rdlock_member_forms());
	if (!ret)
		rdlock_member_started();
	else if (ret != -EALREADY)
		rdlock_member_down();
	return ret;
}

static long rdlock_ioc_status(void __user *argp)
{
	char name[RDLOCK_CLUSTER_NAME_MAX + 1];
	struct rdlock_node_status *ns;
	struct rdlock_status st;
	u32 n, i, members;
	long ret = 0;

	if (copy_from_user(&st, argp, sizeof(st)))
		return -EFAULT;
	ret = rdlock_check_status(&st);
	if (ret)
		return ret;
	ns = kcalloc(RDLOCK_MAX_NODES, sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return -ENOMEM;
	n = rdlock_xport_status(&st, ns);
	st.membership = rdlock_member_status(&members);
	for (i = 0; i < n; i++)
		if (members & BIT(ns[i].node_id))
			ns[i].flags |= RDLOCK_NODE_MEMBER;
	if (copy_to_user(u64_to_user_ptr(st.nodes), ns,
			 min(n, st.nr_nodes) * sizeof(*ns)))
		ret = -EFAULT;
	if (st.name) {
		/* NUL-padded, as RDLOCK_IOC_SET_CONFIG takes it. */
		rdlock_xport_cluster_name(name);
		memset(name + strlen(name), 0, sizeof(name) - strlen(name));
		if (copy_to_user(u64_to_user_ptr(st.name), name,
				 RDLOCK_CLUSTER_NAME_MAX))
			ret = -EFAULT;
	}
	st.nr_nodes = n;
	if (!ret && copy_to_user(argp, &st, sizeof(st)))
		ret = -EFAULT;
	kfree(ns);
	return ret;
}

static long rdlock_ioc_ls_create(void __user *argp)
{
	struct rdlock_ls_create c;
	struct rdlock_ls_attr attr;
	long ret = 0;

	if (copy_from_user(&c, argp, sizeof(c)))
		return -EFAULT;
	ret = rdlock_check_ls_create(&c, &attr);
	if (ret)
		return ret;
	if (!rdlock_xport_ready())
		return -ENOTCONN;
	return rdlock_dev_ls_create(&c, &attr);
}

static long rdlock_ioc_ls_remove(void __user *argp)
{
	struct rdlock_ls_name n;
	long ret;

	ret = rdlock_dev_get_ls_name(&n, argp);
	if (ret)
		return ret;
	return rdlock_dev_ls_remove(n.name);
}

/**
 * rdlock_dev_list_out() - the end of a list ioctl (LS_LIST, STATS, LOCKS)
 * @argp: the caller's argument.
 * @arg: its copy, @arg_size bytes, whose capacity is *@count.
 * @arg_size: its size.
 * @count: its count field: the capacity in, @n out.
 * @entries: its user array.
 * @buf: the entries gathered, @n of them (as far as the capacity went).
 * @n: how many there are.
 * @size: an entry's size.
 *
 * Copies the entries that fit to @entries, then @arg with *@count = @n.
 *
 * Return: 0 or -EFAULT.
 */
long rdlock_dev_list_out(void __user *argp, const void *arg, size_t arg_size,
			 u32 *count, u64 entries, const void *buf, u32 n,
			 size_t size)
{
	if (copy_to_user(u64_to_user_ptr(entries), buf,
			 (size_t)min(n, *count) * size))
		return -EFAULT;
	*count = n;
	return copy_to_user(argp, arg, arg_size) ? -EFAULT : 0;
}

/*
 * This node's lockspaces, into a kernel array of the caller's capacity
 * (at most RDLOCK_LS_LIST_MAX entries), copied out once no lock is held.
 */
static long rdlock_ioc_ls_list(void __user *argp)
{
	struct rdlock_dev_dlm_name *names = NULL;
	struct rdlock_ls_info *info = NULL;
	struct rdlock_ls_list l;
	long ret;
	u32 n;

	if (copy_from_user(&l, argp, sizeof(l)))
		return -EFAULT;
	ret = rdlock_check_ls_list(&l);
	if (ret)
		return ret;
	if (l.count) {
		info = kvcalloc(l.count, sizeof(*info), GFP_KERNEL_ACCOUNT);
		if (l.flags & RDLOCK_LS_LIST_DLM_NAMES)
			names = kvcalloc(l.count, sizeof(*names),
					 GFP_KERNEL_ACCOUNT);
		if (!info || ((l.flags & RDLOCK_LS_LIST_DLM_NAMES) && !names)) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = rdlock_dev_ls_list(info, names, l.count, &n);
	if (!ret && names &&
	    copy_to_user(u64_to_user_ptr(l.dlm_names), names,
			 (size_t)min(n, l.count) * sizeof(*names)))
		ret = -EFAULT;
	if (!ret)
		ret = rdlock_dev_list_out(argp, &l, sizeof(l), &l.count,
					  l.entries, info, n, sizeof(*info));
out:
	kvfree(names);
	kvfree(info);
	return ret;
}

/*
 * One lockspace's locks on this node (or every node's), into a kernel
 * array of the caller's capacity (at most RDLOCK_LOCKS_MAX entries),
 * copied out once no lock is held.
 */
static long rdlock_ioc_locks(void __user *argp)
{
	struct rdlock_locks_query q = {};
	u8 match[RDLOCK_RES_NAME_MAX];
	struct rdlock_locks l;
	long ret;

	static_assert(BITS_PER_TYPE(l.asked) >= RDLOCK_MAX_NODES);
	if (copy_from_user(&l, argp, sizeof(l)))
		return -EFAULT;
	ret = rdlock_check_locks(&l);
	if (ret)
		return ret;
	if (l.name_len) {
		if (copy_from_user(match, u64_to_user_ptr(l.name), l.name_len))
			return -EFAULT;
		q.match = match;
		q.match_len = l.name_len;
	}
	q.cluster = l.flags & RDLOCK_LOCKS_QUERY_CLUSTER;
	q.max = l.count;
	if (l.count) {
		q.out = kvcalloc(l.count, sizeof(*q.out), GFP_KERNEL_ACCOUNT);
		if (!q.out)
			return -ENOMEM;
	}
	ret = rdlock_dev_ls_locks(l.lockspace, &q);
	if (!ret) {
		l.asked = q.asked;
		l.answered = q.answered;
		ret = rdlock_dev_list_out(argp, &l, sizeof(l), &l.count,
					  l.entries, q.out, q.count,
					  sizeof(*q.out));
	}
	kvfree(q.out);
	return ret;
}

/**
 * rdlock_dev_admin_ioctl() - an ioctl that is not a file's own
 * @cmd: the command: STATUS, LS_LIST, STATS, one that needs CAP_SYS_ADMIN, or
 *	unknown.
 * @argp: its argument.
 *
 * Return: the command's result, -EPERM without CAP_SYS_ADMIN, -ENOTTY for
 * an unknown command.
 */
long rdlock_dev_admin_ioctl(unsigned int cmd, void __user *argp)
{
	switch (cmd) {
	case RDLOCK_IOC_STATUS:
		return rdlock_ioc_status(argp);
	case RDLOCK_IOC_LS_LIST:
		return rdlock_ioc_ls_list(argp);
	case RDLOCK_IOC_STATS:
		return rdlock_ioc_stats(argp);
	case RDLOCK_IOC_SET_CONFIG:
	case RDLOCK_IOC_ADD_PEER:
	case RDLOCK_IOC_DEL_PEER:
	case RDLOCK_IOC_UP:
	case RDLOCK_IOC_DOWN:
	case RDLOCK_IOC_SET_KEY:
	case RDLOCK_IOC_NODE_DOWN:
	case RDLOCK_IOC_LS_CREATE:
	case RDLOCK_IOC_LS_REMOVE:
	case RDLOCK_IOC_LOCKS:
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
	case RDLOCK_IOC_NODE_DOWN:
		return rdlock_ioc_node_down(argp);
	case RDLOCK_IOC_LS_CREATE:
		return rdlock_ioc_ls_create(argp);
	case RDLOCK_IOC_LS_REMOVE:
		return rdlock_ioc_ls_remove(argp);
	case RDLOCK_IOC_LOCKS:
		return rdlock_ioc_locks(argp);
	default:
		return rdlock_ioc_up_down(false);
	}
}
