// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock_test: raw transport primitives for selftests and benchmarks, as
 * /dev/rdlock_test (root only). Not a stable interface; it exists so that
 * the transport can be proven on its own, below any lock protocol.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <linux/rdlock.h>

#include "../xport.h"
#include "../proto.h"
#include "rdlock_test_ioctl.h"

MODULE_IMPORT_NS(RDLOCK_INTERNAL);

static const enum rdlock_xop rdlock_test_xops[] = {
	[RDLOCK_TEST_OP_READ]	= RDLOCK_XOP_READ,
	[RDLOCK_TEST_OP_WRITE]	= RDLOCK_XOP_WRITE,
	[RDLOCK_TEST_OP_FAA]	= RDLOCK_XOP_FAA,
	[RDLOCK_TEST_OP_CAS]	= RDLOCK_XOP_CAS,
	[RDLOCK_TEST_OP_PING]	= RDLOCK_XOP_PING,
};

static int rdlock_test_check(const struct rdlock_test_op *op)
{
	if (op->op < RDLOCK_TEST_OP_READ || op->op > RDLOCK_TEST_OP_PING)
		return -EINVAL;
	if (op->op != RDLOCK_TEST_OP_PING &&
	    op->slot < RDLOCK_XPORT_RESERVED_SLOTS)
		return -EINVAL;
	if (!rdlock_xport_node_configured(op->node))
		return -ENOENT;
	return 0;
}

static int rdlock_test_exec(struct rdlock_test_op *op)
{
	return rdlock_xport_exec(rdlock_test_xops[op->op], op->node, 0,
				 op->slot, op->arg0, op->arg1, &op->result,
				 op->timeout_ms);
}

static long rdlock_test_ioc_op(void __user *argp)
{
	struct rdlock_test_op op;
	long ret;

	if (copy_from_user(&op, argp, sizeof(op)))
		return -EFAULT;
	ret = rdlock_test_check(&op);
	if (!ret)
		ret = rdlock_test_exec(&op);
	if (!ret && copy_to_user(argp, &op, sizeof(op)))
		ret = -EFAULT;
	return ret;
}

static long rdlock_test_ioc_range(void __user *argp)
{
	struct rdlock_test_range r;
	enum rdlock_xop op;
	long ret;

	static_assert(RDLOCK_TEST_RANGE_MAX == RDLOCK_XPORT_READ_MAX);
	if (copy_from_user(&r, argp, sizeof(r)))
		return -EFAULT;
	/*
	 * @r.vals holds RDLOCK_TEST_RANGE_MAX words: the transport could
	 * read more (RDLOCK_XPORT_RANGE_MAX) into it.
	 */
	switch (r.op) {
	case RDLOCK_TEST_OP_READ_RANGE:
		op = RDLOCK_XOP_READ_RANGE;
		break;
	case RDLOCK_TEST_OP_FAA_READ:
		op = RDLOCK_XOP_FAA_READ;
		break;
	case RDLOCK_TEST_OP_CAS_READ:
		op = RDLOCK_XOP_CAS_READ;
		break;
	default:
		return -EINVAL;
	}
	if (r.pad || r.nread || r.count > RDLOCK_TEST_RANGE_MAX ||
	    r.slot < RDLOCK_XPORT_RESERVED_SLOTS ||
	    (op != RDLOCK_XOP_READ_RANGE &&
	     r.rslot < RDLOCK_XPORT_RESERVED_SLOTS))
		return -EINVAL;
	if (!rdlock_xport_node_configured(r.node))
		return -ENOENT;
	ret = rdlock_xport_exec_range(op, r.node, 0, r.slot, r.arg0, r.arg1,
				      r.rslot, r.count, &r.value, r.vals,
				      r.timeout_ms);
	if (ret < 0)
		return ret;
	r.nread = ret;
	return copy_to_user(argp, &r, sizeof(r)) ? -EFAULT : 0;
}

static long rdlock_test_ioc_bench(void __user *argp)
{
	struct rdlock_test_bench b;
	u32 *samples;
	u32 i;
	long ret;

	if (copy_from_user(&b, argp, sizeof(b)))
		return -EFAULT;
	if (b.pad || !b.iterations || b.iterations > RDLOCK_TEST_MAX_SAMPLES)
		return -EINVAL;
	ret = rdlock_test_check(&b.op);
	if (ret)
		return ret;
	samples = kvmalloc_array(b.iterations, sizeof(*samples), GFP_KERNEL);
	if (!samples)
		return -ENOMEM;
	for (i = 0; i < b.iterations; i++) {
		ktime_t t0 = ktime_get();

		ret = rdlock_test_exec(&b.op);
		if (ret)
			break;
		samples[i] = min_t(s64, ktime_to_ns(ktime_sub(ktime_get(), t0)),
				   U32_MAX);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	if (!ret && copy_to_user(u64_to_user_ptr(b.samples), samples,
				 (size_t)b.iterations * sizeof(*samples)))
		ret = -EFAULT;
	kvfree(samples);
	return ret;
}

static long rdlock_test_ioc_info(void __user *argp)
{
	struct rdlock_test_info info = {
		.node_id = rdlock_xport_self(),
		.backend = rdlock_xport_backend(),
		.table_slots = rdlock_xport_table_slots(),
		.first_free_slot = RDLOCK_XPORT_RESERVED_SLOTS,
		.ready = rdlock_xport_ready(),
	};

	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Locks taken through one open file, which is their "lockspace". */
struct rdlock_test_file {
	struct xarray held;		/* handle -> struct rdlock_test_held */
	struct rdlock_proto_stats stats;
};

/*
 * @busy: an upgrade is running on it (under the xarray lock): UNLOCK and
 * other upgrades of the handle must not free or change it meanwhile.
 */
struct rdlock_test_held {
	const struct rdlock_proto_ops *ops;
	struct rdlock_proto_cfg cfg;
	struct rdlock_ticket ticket;
	bool busy;
};

static const struct rdlock_proto_ops *rdlock_test_protos[] = {
	[RDLOCK_TEST_PROTO_BAKERY]	= &rdlock_proto_bakery,
	[RDLOCK_TEST_PROTO_CASLOCK]	= &rdlock_proto_caslock,
	[RDLOCK_TEST_PROTO_CQL]		= &rdlock_proto_cql,
};

static int rdlock_test_check_lock(const struct rdlock_test_lock *l)
{
	/* The mode goes to the protocol as it is. */
	BUILD_BUG_ON((int)RDLOCK_TEST_MODE_SHARED != (int)RDLOCK_MODE_SHARED ||
		     (int)RDLOCK_TEST_MODE_EXCLUSIVE !=
		     (int)RDLOCK_MODE_EXCLUSIVE ||
		     (int)RDLOCK_TEST_MODE_UPDATE != (int)RDLOCK_MODE_UPDATE ||
		     (int)RDLOCK_TEST_MODE_NR != (int)RDLOCK_MODE_NR);
	BUILD_BUG_ON(ARRAY_SIZE(rdlock_test_protos) != RDLOCK_TEST_PROTO_NR);
	if (l->proto >= ARRAY_SIZE(rdlock_test_protos) ||
	    l->mode >= RDLOCK_MODE_NR || l->handle || l->remote_ops ||
	    l->pad || l->pad2 || l->prev ||
	    (l->proto != RDLOCK_TEST_PROTO_CQL &&
	     (l->queue_bits || l->version_bits ||
	      l->flags & RDLOCK_TEST_LOCK_CQL_HIER)) ||
	    (l->flags & RDLOCK_TEST_LOCK_CQL_PHASE_FAIR &&
	     !(l->flags & RDLOCK_TEST_LOCK_CQL_HIER)) ||
	    (l->flags & ~(RDLOCK_TEST_LOCK_UPDATE_WORD |
			  RDLOCK_TEST_LOCK_STILL_CLOCK |
			  RDLOCK_TEST_LOCK_CQL_HIER |
			  RDLOCK_TEST_LOCK_CQL_PHASE_FAIR)) ||
	    l->slot < RDLOCK_XPORT_RESERVED_SLOTS)
		return -EINVAL;
	if (!rdlock_xport_node_configured(l->node))
		return -ENOENT;
	return 0;
}

static int rdlock_test_still_exec(void *priv, enum rdlock_xop op, u32 node,
				  u64 incarnation, u32 slot, u64 arg0,
				  u64 arg1, u64 *value)
{
	return rdlock_xport_exec(op, node, incarnation, slot, arg0, arg1,
				 value, 0);
}

static int rdlock_test_still_exec_range(void *priv, enum rdlock_xop op,
					u32 node, u64 incarnation, u32 slot,
					u64 arg0, u64 arg1, u32 rslot,
					u32 count, u64 *value, u64 *vals)
{
	return rdlock_xport_exec_range(op, node, incarnation, slot, arg0,
				       arg1, rslot, count, value, vals, 0);
}

/*
 * @priv is the clock's value itself, not a pointer: a ticket released in
 * the background keeps a copy of the cfg after the handle is freed.
 */
static ktime_t rdlock_test_still_now(void *priv)
{
	return (ktime_t)(unsigned long)priv;
}

/* RDLOCK_TEST_LOCK_STILL_CLOCK: the real transport, a clock that stopped. */
static const struct rdlock_proto_xport rdlock_test_still_xport = {
	.exec		= rdlock_test_still_exec,
	.exec_range	= rdlock_test_still_exec_range,
	.now		= rdlock_test_still_now,
};

static unsigned long rdlock_test_deadline(u32 timeout_ms)
{
	return timeout_ms ? jiffies + msecs_to_jiffies(timeout_ms) : 0;
}

/* Nodes of the cluster: a CQL lock's admission gate shares its queue. */
static u32 rdlock_test_nodes(void)
{
	u32 i, n = 0;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		n += rdlock_xport_node_configured(i);
	return n;
}

/* Prepare @h for @l; returns the acquisition deadline (0: none). */
static unsigned long rdlock_test_held_init(struct rdlock_test_held *h,
					   const struct rdlock_test_lock *l,
					   enum rdlock_mode mode,
					   struct rdlock_proto_stats *stats)
{
	memset(h, 0, sizeof(*h));
	h->ops = rdlock_test_protos[l->proto];
	h->cfg.lease_ms = l->lease_ms;
	h->cfg.update_word = l->flags & RDLOCK_TEST_LOCK_UPDATE_WORD;
	h->cfg.stats = stats;
	h->cfg.cql_cap_bits = l->queue_bits;
	h->cfg.cql_ver_bits = l->version_bits;
	h->cfg.nodes = rdlock_test_nodes();
	if (l->flags & RDLOCK_TEST_LOCK_CQL_PHASE_FAIR)
		h->cfg.cql_policy = RDLOCK_CQL_PHASE_FAIR;
	else if (l->flags & RDLOCK_TEST_LOCK_CQL_HIER)
		h->cfg.cql_policy = RDLOCK_CQL_TASK_FAIR;
	h->ticket.node = l->node;
	h->ticket.slot = l->slot;
	h->ticket.mode = mode;
	h->ticket.k = l->k;
	/* As a lockspace does: the ticket lives and dies with this table. */
	h->ticket.incarnation = rdlock_xport_node_incarnation(l->node);
	return rdlock_test_deadline(l->timeout_ms);
}

static long rdlock_test_ioc_lock(struct rdlock_test_file *tf,
				 void __user *argp)
{
	struct rdlock_test_held *h;
	struct rdlock_test_lock l;
	unsigned long deadline;
	long ret;

	if (copy_from_user(&l, argp, sizeof(l)))
		return -EFAULT;
	ret = rdlock_test_check_lock(&l);
	if (ret)
		return ret;
	h = kmalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	deadline = rdlock_test_held_init(h, &l, l.mode, &tf->stats);
	ret = h->ops->acquire(&h->cfg, &h->ticket, deadline);
	if (ret)
		goto free;
	if (l.flags & RDLOCK_TEST_LOCK_STILL_CLOCK) {
		BUILD_BUG_ON(sizeof(ktime_t) > sizeof(void *));
		h->cfg.xport = &rdlock_test_still_xport;
		h->cfg.xport_priv = (void *)(unsigned long)h->ticket.granted_at;
	}
	ret = xa_alloc(&tf->held, &l.handle, h, xa_limit_31b, GFP_KERNEL);
	if (ret)
		goto release;
	l.remote_ops = h->ticket.remote_ops;
	l.prev = h->ticket.prev;
	if (copy_to_user(argp, &l, sizeof(l))) {
		xa_erase(&tf->held, l.handle);
		ret = -EFAULT;
		goto release;
	}
	return 0;

release:
	h->ops->release(&h->cfg, &h->ticket);
free:
	kfree(h);
	return ret;
}

static long rdlock_test_ioc_unlock(struct rdlock_test_file *tf,
				   void __user *argp)
{
	struct rdlock_test_held *h;
	u32 handle;

	if (get_user(handle, (u32 __user *)argp))
		return -EFAULT;
	xa_lock(&tf->held);
	h = xa_load(&tf->held, handle);
	if (h && h->busy)
		h = ERR_PTR(-EBUSY);
	else if (h)
		__xa_erase(&tf->held, handle);
	xa_unlock(&tf->held);
	if (IS_ERR_OR_NULL(h))
		return h ? PTR_ERR(h) : -ENOENT;
	h->ops->release(&h->cfg, &h->ticket);
	kfree(h);
	return 0;
}

static long rdlock_test_ioc_upgrade(struct rdlock_test_file *tf,
				    void __user *argp)
{
	struct rdlock_test_upgrade u;
	struct rdlock_test_held *h;
	u32 ops;
	long ret;

	if (copy_from_user(&u, argp, sizeof(u)))
		return -EFAULT;
	if (u.pad || u.remote_ops)
		return -EINVAL;
	xa_lock(&tf->held);
	h = xa_load(&tf->held, u.handle);
	if (h && h->busy)
		h = ERR_PTR(-EBUSY);
	else if (h)
		h->busy = true;
	xa_unlock(&tf->held);
	if (IS_ERR_OR_NULL(h))
		return h ? PTR_ERR(h) : -ENOENT;
	ops = h->ticket.remote_ops;
	ret = h->ops->upgrade(&h->cfg, &h->ticket,
			      rdlock_test_deadline(u.timeout_ms));
	u.remote_ops = h->ticket.remote_ops - ops;
	xa_lock(&tf->held);
	h->busy = false;
	xa_unlock(&tf->held);
	if (copy_to_user(argp, &u, sizeof(u)))
		return -EFAULT;
	return ret;
}

static long rdlock_test_ioc_stats(struct rdlock_test_file *tf,
				  void __user *argp)
{
	struct rdlock_proto_stats *s = &tf->stats;
	struct rdlock_test_proto_stats out = {
		.acquires = atomic64_read(&s->acquires),
		.waits = atomic64_read(&s->waits),
		.remote_ops = atomic64_read(&s->remote_ops),
		.ops = {
			[RDLOCK_TEST_OP_READ - 1] = atomic64_read(&s->ops[RDLOCK_XOP_READ]),
			[RDLOCK_TEST_OP_WRITE - 1] = atomic64_read(&s->ops[RDLOCK_XOP_WRITE]),
			[RDLOCK_TEST_OP_FAA - 1] = atomic64_read(&s->ops[RDLOCK_XOP_FAA]),
			[RDLOCK_TEST_OP_CAS - 1] = atomic64_read(&s->ops[RDLOCK_XOP_CAS]),
		},
		.retries = atomic64_read(&s->retries),
		.stall_resets = atomic64_read(&s->stall_resets),
		.overflow_resets = atomic64_read(&s->overflow_resets),
		.lease_expiries = atomic64_read(&s->lease_expiries),
		.abandoned = atomic64_read(&s->abandoned),
		.upgrades = atomic64_read(&s->upgrades),
		.upgrade_waits = atomic64_read(&s->upgrade_waits),
		.notifies = atomic64_read(&s->notifies),
		.releases = atomic64_read(&s->tickets[RDLOCK_TICKET_RELEASING]),
	};
	static const int xops[] = { RDLOCK_XOP_READ, RDLOCK_XOP_WRITE,
				    RDLOCK_XOP_FAA, RDLOCK_XOP_CAS };
	int i;

	for (i = 0; i < ARRAY_SIZE(xops); i++) {
		out.acq_ops[i] = atomic64_read(&s->acq_ops[xops[i]]);
		out.rel_ops[i] = atomic64_read(&s->rel_ops[xops[i]]);
	}

	return copy_to_user(argp, &out, sizeof(out)) ? -EFAULT : 0;
}

/* The exclusive holder's non-atomic increment: READ, then WRITE + 1. */
static int rdlock_test_rmw(u32 node, u32 slot)
{
	u64 v;
	int ret = rdlock_xport_exec(RDLOCK_XOP_READ, node, 0, slot, 0, 0, &v,
				    0);

	return ret ? ret : rdlock_xport_exec(RDLOCK_XOP_WRITE, node, 0, slot,
					     v + 1, 0, &v, 0);
}

static long rdlock_test_ioc_lock_bench(void __user *argp)
{
	struct rdlock_proto_stats *st = NULL;
	struct rdlock_test_lock_bench b;
	struct rdlock_test_held h;
	enum rdlock_mode mode;
	u32 *samples = NULL;
	bool exclusive;
	long ret;
	u32 i;

	if (copy_from_user(&b, argp, sizeof(b)))
		return -EFAULT;
	if (!b.iterations || b.iterations > RDLOCK_TEST_MAX_SAMPLES ||
	    b.pad[0] || b.pad[1] || b.exclusive_grants || b.remote_ops ||
	    b.acquire_ops || b.waits || b.notifies ||
	    (b.rmw_slot && b.rmw_slot < RDLOCK_XPORT_RESERVED_SLOTS))
		return -EINVAL;
	ret = rdlock_test_check_lock(&b.lock);
	if (ret)
		return ret;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	if (b.samples) {
		samples = kvmalloc_array(b.iterations, sizeof(*samples),
					 GFP_KERNEL);
		if (!samples) {
			kfree(st);
			return -ENOMEM;
		}
	}
	for (i = 0; i < b.iterations; i++) {
		ktime_t t0 = ktime_get();
		unsigned long deadline;

		mode = b.lock.mode;
		if (b.exclusive_every)
			mode = i % b.exclusive_every ? RDLOCK_MODE_SHARED :
						       RDLOCK_MODE_EXCLUSIVE;
		exclusive = mode == RDLOCK_MODE_EXCLUSIVE;
		deadline = rdlock_test_held_init(&h, &b.lock, mode, st);
		ret = h.ops->acquire(&h.cfg, &h.ticket, deadline);
		if (ret)
			break;
		b.acquire_ops += h.ticket.remote_ops;
		if (exclusive && b.rmw_slot)
			ret = rdlock_test_rmw(b.rmw_node, b.rmw_slot);
		h.ops->release(&h.cfg, &h.ticket);
		b.remote_ops += h.ticket.remote_ops;
		if (ret)
			break;
		b.exclusive_grants += exclusive;
		if (samples)
			samples[i] = min_t(s64, ktime_to_ns(ktime_sub(ktime_get(), t0)),
					   U32_MAX);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	if (!ret && samples &&
	    copy_to_user(u64_to_user_ptr(b.samples), samples,
			 (size_t)b.iterations * sizeof(*samples)))
		ret = -EFAULT;
	kvfree(samples);
	b.waits = atomic64_read(&st->waits);
	b.notifies = atomic64_read(&st->notifies);
	kfree(st);
	/* The counts go back even after a failure: the caller checks them. */
	b.lock.handle = 0;
	if (copy_to_user(argp, &b, sizeof(b)))
		return -EFAULT;
	return ret;
}

static int rdlock_test_open(struct inode *inode, struct file *file)
{
	struct rdlock_test_file *tf = kzalloc(sizeof(*tf), GFP_KERNEL);

	if (!tf)
		return -ENOMEM;
	xa_init_flags(&tf->held, XA_FLAGS_ALLOC);
	file->private_data = tf;
	return 0;
}

/* Closing the file (or the process dying) releases what it held. */
static int rdlock_test_release(struct inode *inode, struct file *file)
{
	struct rdlock_test_file *tf = file->private_data;
	struct rdlock_test_held *h;
	unsigned long handle;

	xa_for_each(&tf->held, handle, h) {
		xa_erase(&tf->held, handle);
		h->ops->release(&h->cfg, &h->ticket);
		kfree(h);
	}
	xa_destroy(&tf->held);
	kfree(tf);
	return 0;
}

static long rdlock_test_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case RDLOCK_TEST_IOC_OP:
		return rdlock_test_ioc_op(argp);
	case RDLOCK_TEST_IOC_BENCH:
		return rdlock_test_ioc_bench(argp);
	case RDLOCK_TEST_IOC_RANGE:
		return rdlock_test_ioc_range(argp);
	case RDLOCK_TEST_IOC_INFO:
		return rdlock_test_ioc_info(argp);
	case RDLOCK_TEST_IOC_LOCK:
		return rdlock_test_ioc_lock(file->private_data, argp);
	case RDLOCK_TEST_IOC_UNLOCK:
		return rdlock_test_ioc_unlock(file->private_data, argp);
	case RDLOCK_TEST_IOC_LOCK_BENCH:
		return rdlock_test_ioc_lock_bench(argp);
	case RDLOCK_TEST_IOC_UPGRADE:
		return rdlock_test_ioc_upgrade(file->private_data, argp);
	case RDLOCK_TEST_IOC_STATS:
		return rdlock_test_ioc_stats(file->private_data, argp);
	case RDLOCK_TEST_IOC_FLUSH:
		rdlock_proto_flush();
		return 0;
	default:
		return -ENOTTY;
	}
}

static const struct file_operations rdlock_test_fops = {
	.owner		= THIS_MODULE,
	.open		= rdlock_test_open,
	.release	= rdlock_test_release,
	.unlocked_ioctl	= rdlock_test_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice rdlock_test_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "rdlock_test",
	.fops	= &rdlock_test_fops,
	.mode	= 0600,
};

module_misc_device(rdlock_test_misc);

MODULE_DESCRIPTION("rdlock transport test interface (not a stable API)");
MODULE_LICENSE("GPL");
