// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock_dlm_test: /dev/rdlock_dlm_test, the DLM kernel API
 * (include/rdlock/dlm.h) driven from userspace for selftests/rdlock/
 * dlm_test.c. Each open file has one DLM lockspace and a few lock slots;
 * every callback a slot receives is queued with what the status block and
 * value block held at that moment, and read back in order.
 */
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <rdlock/dlm.h>

#include "rdlock_dlm_test_ioctl.h"
#include "dlm_test_fsdlm.h"

#define DT_EVENTS	32

struct dt_slot {
	struct dt_file *f;
	struct rdlock_dlm_lksb lksb;
	char lvb[RDLOCK_DLM_LVB_LEN];
	bool live;		/* has a lock id whose last AST did not come */
	bool new_pending;	/* its first request's AST did not come */
	bool overflow;
	unsigned int head, nr;
	struct rdlock_dlm_test_event ev[DT_EVENTS];
};

struct dt_file {
	struct mutex mutex;	/* @dls and calls */
	struct rdlock_dlm_ls *dls;
	spinlock_t lock;	/* the slots' event queues and states */
	wait_queue_head_t wait;
	struct dt_slot slots[RDLOCK_DLM_TEST_LOCKS];
	struct rdlock_dlm_lksb *fill;	/* FILL's locks, @nr_fill held */
	u32 nr_fill;
	struct completion fill_done;	/* the current FILL request's AST */
	struct dt_fsdlm *fsdlm;		/* FSDLM_FILL's */
	u64 seq;			/* callbacks so far (under @lock) */
	struct rdlock_dlm_test_downs downs;	/* under @lock */
};

/* Most FILL locks: as many as recbench.sh's largest lockspace holds. */
#define DT_FILL_MAX	65536

static void dt_push(struct dt_slot *s, const struct rdlock_dlm_test_event *e)
{
	struct dt_file *f = s->f;
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	if (s->nr == DT_EVENTS) {
		s->overflow = true;
	} else {
		s->ev[(s->head + s->nr) % DT_EVENTS] = *e;
		s->ev[(s->head + s->nr) % DT_EVENTS].seq = ++f->seq;
		s->nr++;
	}
	if (e->type == RDLOCK_DLM_TEST_AST) {
		if (e->status == RDLOCK_DLM_EUNLOCK ||
		    (s->new_pending && e->status))
			s->live = false;
		s->new_pending = false;
	}
	spin_unlock_irqrestore(&f->lock, flags);
	wake_up_all(&f->wait);
}

static void dt_ast(void *arg)
{
	struct dt_slot *s = arg;
	struct rdlock_dlm_test_event e = {
		.type = RDLOCK_DLM_TEST_AST,
		.status = s->lksb.sb_status,
		.sb_flags = s->lksb.sb_flags,
	};

	memcpy(e.lvb, s->lvb, sizeof(e.lvb));
	dt_push(s, &e);
}

static void dt_bast(void *arg, int mode)
{
	struct dt_slot *s = arg;
	struct rdlock_dlm_test_event e = {
		.type = RDLOCK_DLM_TEST_BAST,
		.mode = mode,
	};

	dt_push(s, &e);
}

static void dt_node_down(void *arg, u32 node)
{
	struct dt_file *f = arg;
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	if (!f->downs.count++) {
		f->downs.node = node;
		f->downs.seq = ++f->seq;
	}
	spin_unlock_irqrestore(&f->lock, flags);
}

static void dt_lost(void *arg)
{
	struct dt_file *f = arg;

	spin_lock_irq(&f->lock);
	f->downs.lost++;
	spin_unlock_irq(&f->lock);
}

static const struct rdlock_dlm_ops dt_ops = {
	.node_down = dt_node_down,
	.lost = dt_lost,
};

static long dt_downs(struct dt_file *f, void __user *argp)
{
	struct rdlock_dlm_test_downs d;

	spin_lock_irq(&f->lock);
	d = f->downs;
	spin_unlock_irq(&f->lock);
	return copy_to_user(argp, &d, sizeof(d)) ? -EFAULT : 0;
}

static long dt_open_ls(struct dt_file *f, void __user *argp)
{
	struct rdlock_dlm_test_open o;
	struct rdlock_dlm_ls *dls;

	if (copy_from_user(&o, argp, sizeof(o)))
		return -EFAULT;
	o.name[sizeof(o.name) - 1] = 0;
	if (f->dls)
		return -EBUSY;
	dls = rdlock_dlm_open(o.name, o.node_id == ~0U ? rdlock_dlm_node_id() :
				      o.node_id, &dt_ops, f);
	if (IS_ERR(dls))
		return PTR_ERR(dls);
	f->dls = dls;
	return 0;
}

static long dt_lock(struct dt_file *f, void __user *argp, bool unlock)
{
	struct rdlock_dlm_test_lock l;
	struct rdlock_dlm_lksb *lksb;
	bool new = false;
	struct dt_slot *s;
	u32 lkid;
	int ret;

	if (copy_from_user(&l, argp, sizeof(l)))
		return -EFAULT;
	if (!f->dls)
		return -ENOTCONN;
	if (l.slot >= RDLOCK_DLM_TEST_LOCKS || l.namelen > sizeof(l.name))
		return -EINVAL;
	s = &f->slots[l.slot];
	lksb = l.test_flags & RDLOCK_DLM_TEST_NO_LKSB ? NULL : &s->lksb;
	s->lksb.sb_lvbptr = l.test_flags & RDLOCK_DLM_TEST_NO_LVB ? NULL :
			    s->lvb;
	if (l.flags & RDLOCK_DLM_LKF_VALBLK)
		memcpy(s->lvb, l.lvb, sizeof(s->lvb));
	lkid = l.test_flags & RDLOCK_DLM_TEST_LKID ? l.lkid : s->lksb.sb_lkid;
	if (unlock) {
		ret = rdlock_dlm_unlock(f->dls, lkid, l.flags, lksb, s);
	} else {
		if (!(l.flags & RDLOCK_DLM_LKF_CONVERT)) {
			/* Its AST may come before the call returns. */
			spin_lock_irq(&f->lock);
			if (s->live) {
				spin_unlock_irq(&f->lock);
				return -EBUSY;
			}
			s->live = true;
			s->new_pending = true;
			spin_unlock_irq(&f->lock);
			new = true;
		} else {
			s->lksb.sb_lkid = lkid;
		}
		ret = rdlock_dlm_lock(f->dls, l.mode, lksb, l.flags, l.name,
				      l.namelen,
				      l.test_flags & RDLOCK_DLM_TEST_NO_AST ?
				      NULL : dt_ast, s,
				      l.test_flags & RDLOCK_DLM_TEST_NO_BAST ?
				      NULL : dt_bast);
		if (ret && new) {
			spin_lock_irq(&f->lock);
			s->live = false;
			s->new_pending = false;
			spin_unlock_irq(&f->lock);
		}
	}
	l.lkid = s->lksb.sb_lkid;
	if (copy_to_user(argp, &l, sizeof(l)))
		return -EFAULT;
	return ret;
}

static bool dt_has_event(struct dt_file *f, struct dt_slot *s)
{
	bool has;

	spin_lock_irq(&f->lock);
	has = s->nr || s->overflow;
	spin_unlock_irq(&f->lock);
	return has;
}

static long dt_event(struct dt_file *f, void __user *argp)
{
	struct rdlock_dlm_test_event e;
	struct dt_slot *s;
	long left;
	int ret = 0;

	if (copy_from_user(&e, argp, sizeof(e)))
		return -EFAULT;
	if (e.slot >= RDLOCK_DLM_TEST_LOCKS)
		return -EINVAL;
	s = &f->slots[e.slot];
	left = wait_event_interruptible_timeout(f->wait, dt_has_event(f, s),
						msecs_to_jiffies(e.timeout_ms));
	if (left < 0)
		return left;
	spin_lock_irq(&f->lock);
	if (s->overflow) {
		ret = -EOVERFLOW;
	} else if (!s->nr) {
		ret = -ETIMEDOUT;
	} else {
		e = s->ev[s->head];
		e.slot = s - f->slots;
		s->head = (s->head + 1) % DT_EVENTS;
		s->nr--;
	}
	spin_unlock_irq(&f->lock);
	if (ret)
		return ret;
	return copy_to_user(argp, &e, sizeof(e)) ? -EFAULT : 0;
}

static void dt_fill_ast(void *arg)
{
	complete(arg);
}

/* One FILL request or unlock at a time: its AST, then its status. */
static int dt_fill_wait(struct dt_file *f, struct rdlock_dlm_lksb *lksb)
{
	wait_for_completion(&f->fill_done);
	return lksb->sb_status;
}

static long dt_fill(struct dt_file *f, void __user *argp)
{
	struct rdlock_dlm_test_fill l;
	char name[RDLOCK_DLM_TEST_NAME];
	int len, ret;

	if (copy_from_user(&l, argp, sizeof(l)))
		return -EFAULT;
	l.prefix[sizeof(l.prefix) - 1] = 0;
	if (!f->dls)
		return -ENOTCONN;
	if (f->fill || !l.max || l.max > DT_FILL_MAX || l.first >= l.max)
		return -EINVAL;
	f->fill = kvcalloc(l.max, sizeof(*f->fill), GFP_KERNEL);
	if (!f->fill)
		return -ENOMEM;
	l.status = 0;
	for (l.held = 0; l.held < l.max; l.held++) {
		struct rdlock_dlm_lksb *lksb = &f->fill[l.held];

		len = snprintf(name, sizeof(name), "%s%u", l.prefix,
			       (l.first + l.held) % l.max);
		reinit_completion(&f->fill_done);
		ret = rdlock_dlm_lock(f->dls, RDLOCK_DLM_LOCK_PR, lksb,
				      RDLOCK_DLM_LKF_NOQUEUE, name, len,
				      dt_fill_ast, &f->fill_done, NULL);
		if (!ret)
			ret = dt_fill_wait(f, lksb);
		if (ret) {
			l.status = ret;
			break;
		}
		f->nr_fill = l.held + 1;
	}
	return copy_to_user(argp, &l, sizeof(l)) ? -EFAULT : 0;
}

static long dt_fill_release(struct dt_file *f)
{
	long ret = 0;

	while (f->nr_fill) {
		struct rdlock_dlm_lksb *lksb = &f->fill[--f->nr_fill];

		reinit_completion(&f->fill_done);
		if (rdlock_dlm_unlock(f->dls, lksb->sb_lkid, 0, NULL, NULL) ||
		    dt_fill_wait(f, lksb) != RDLOCK_DLM_EUNLOCK)
			ret = -EIO;
	}
	kvfree(f->fill);
	f->fill = NULL;
	return ret;
}

static_assert(RDLOCK_DLM_TEST_WAIT_NONE == RDLOCK_DLM_WAIT_NONE);
static_assert(RDLOCK_DLM_TEST_WAIT_GATE == RDLOCK_DLM_WAIT_GATE);
static_assert(RDLOCK_DLM_TEST_WAIT_MAIN == RDLOCK_DLM_WAIT_MAIN);

static long dt_status(struct dt_file *f, void __user *argp)
{
	struct rdlock_dlm_lock_status st;
	struct rdlock_dlm_test_status s;
	int ret;

	if (copy_from_user(&s, argp, sizeof(s)))
		return -EFAULT;
	if (s.slot >= RDLOCK_DLM_TEST_LOCKS || !f->dls)
		return -EINVAL;
	ret = rdlock_dlm_lock_status(f->dls, f->slots[s.slot].lksb.sb_lkid,
				     &st);
	if (ret)
		return ret;
	s.grmode = st.grmode;
	s.rqmode = st.rqmode;
	s.waiting = st.waiting;
	s.hold_ms = st.hold_ms;
	return copy_to_user(argp, &s, sizeof(s)) ? -EFAULT : 0;
}

static long dt_hold(struct dt_file *f, void __user *argp)
{
	struct rdlock_dlm_test_hold h;

	if (copy_from_user(&h, argp, sizeof(h)))
		return -EFAULT;
	if (!f->dls)
		return -EINVAL;
	return rdlock_dlm_set_hold(f->dls, h.ms, h.max_ms);
}

/* CLOSE: rdlock_dlm_close() of the file's lockspace, if it succeeds. */
static long dt_close_ls(struct dt_file *f)
{
	int ret;

	if (!f->dls)
		return -ENOTCONN;
	ret = rdlock_dlm_close(f->dls);
	if (!ret)
		f->dls = NULL;
	return ret;
}

static long dt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dt_file *f = file->private_data;
	void __user *argp = (void __user *)arg;
	long ret;

	if (cmd == RDLOCK_DLM_TEST_IOC_EVENT)
		return dt_event(f, argp);
	mutex_lock(&f->mutex);
	switch (cmd) {
	case RDLOCK_DLM_TEST_IOC_OPEN:
		ret = dt_open_ls(f, argp);
		break;
	case RDLOCK_DLM_TEST_IOC_LOCK:
		ret = dt_lock(f, argp, false);
		break;
	case RDLOCK_DLM_TEST_IOC_UNLOCK:
		ret = dt_lock(f, argp, true);
		break;
	case RDLOCK_DLM_TEST_IOC_STATUS:
		ret = dt_status(f, argp);
		break;
	case RDLOCK_DLM_TEST_IOC_FILL:
		ret = dt_fill(f, argp);
		break;
	case RDLOCK_DLM_TEST_IOC_FILL_RELEASE:
		ret = dt_fill_release(f);
		break;
	case RDLOCK_DLM_TEST_IOC_HOLD:
		ret = dt_hold(f, argp);
		break;
	case RDLOCK_DLM_TEST_IOC_DOWNS:
		ret = dt_downs(f, argp);
		break;
	case RDLOCK_DLM_TEST_IOC_FSDLM_FILL:
		ret = dt_fsdlm_fill(&f->fsdlm, argp);
		break;
	case RDLOCK_DLM_TEST_IOC_FSDLM_RELEASE:
		dt_fsdlm_release(&f->fsdlm);
		ret = 0;
		break;
	case RDLOCK_DLM_TEST_IOC_CLOSE:
		ret = dt_close_ls(f);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&f->mutex);
	return ret;
}

static int dt_open(struct inode *inode, struct file *file)
{
	struct dt_file *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int i;

	if (!f)
		return -ENOMEM;
	mutex_init(&f->mutex);
	spin_lock_init(&f->lock);
	init_waitqueue_head(&f->wait);
	init_completion(&f->fill_done);
	for (i = 0; i < RDLOCK_DLM_TEST_LOCKS; i++)
		f->slots[i].f = f;
	file->private_data = f;
	return 0;
}

static bool dt_all_dead(struct dt_file *f)
{
	bool dead = true;
	int i;

	spin_lock_irq(&f->lock);
	for (i = 0; i < RDLOCK_DLM_TEST_LOCKS; i++)
		dead &= !f->slots[i].live;
	spin_unlock_irq(&f->lock);
	return dead;
}

/* Unlock what the test left, cancelling requests still waiting. */
static int dt_release(struct inode *inode, struct file *file)
{
	struct dt_file *f = file->private_data;
	int i, round;

	dt_fsdlm_release(&f->fsdlm);
	if (!f->dls)
		goto out;
	dt_fill_release(f);
	for (round = 0; round < 600 && !dt_all_dead(f); round++) {
		for (i = 0; i < RDLOCK_DLM_TEST_LOCKS; i++) {
			struct dt_slot *s = &f->slots[i];

			if (!READ_ONCE(s->live))
				continue;
			if (rdlock_dlm_unlock(f->dls, s->lksb.sb_lkid, 0, NULL,
					      NULL) == -EBUSY)
				rdlock_dlm_unlock(f->dls, s->lksb.sb_lkid,
						  RDLOCK_DLM_LKF_CANCEL, NULL,
						  NULL);
		}
		wait_event_timeout(f->wait, dt_all_dead(f), HZ / 10);
	}
	if (dt_all_dead(f) && !rdlock_dlm_close(f->dls)) {
		f->dls = NULL;
	} else {
		/* A lock is left: the close refused, leak it, loudly. */
		pr_err("rdlock_dlm_test: locks still held after 60 s, lockspace leaked\n");
		return 0;
	}
out:
	kfree(f);
	return 0;
}

static const struct file_operations dt_fops = {
	.owner = THIS_MODULE,
	.open = dt_open,
	.release = dt_release,
	.unlocked_ioctl = dt_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice dt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "rdlock_dlm_test",
	.fops = &dt_fops,
};
module_misc_device(dt_misc);

MODULE_DESCRIPTION("rdlock DLM API test client (/dev/rdlock_dlm_test)");
MODULE_LICENSE("GPL");
