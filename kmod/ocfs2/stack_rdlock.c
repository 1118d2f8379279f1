// SPDX-License-Identifier: GPL-2.0
/*
 * ocfs2_stack_rdlock: an OCFS2 cluster stack plug-in whose DLM is rdlock's
 * (include/rdlock/dlm.h). Documentation/rdlock/ocfs2.rst has the setup.
 *
 * The stack glue picks the plug-in named "o2cb" for disks of stack "o2cb"
 * and the one named "user" for every other stack label, so this registers
 * as "user": fs/ocfs2/stack_user.c (fs/dlm) must not be loaded beside it
 * (its registration then fails with -EEXIST, or ours does).
 *
 * Every OCFS2 lock is one rdlock DLM lock in the lockspace named after the
 * file system's uuid (conn->cc_name). The status block is the fs/dlm
 * member of OCFS2's lksb union, whose layout rdlock's struct
 * rdlock_dlm_lksb shares; the value block is the union's padding, as in
 * stack_user.c. Callbacks come from rdlock's callback workqueue (process
 * context) and go straight to dlmglue's.
 *
 * A node whose lockspace is lost while mounted (it was declared down, its
 * cluster went down, or a node came back with a new table without being
 * declared down) is restarted, or panics (fence_method), as o2cb
 * fences itself when it loses quorum: the others may hold its locks now
 * and replay its journal, so OCFS2 must not write another block here.
 *
 * POSIX locks (->plock) are not offered: fcntl() locks on OCFS2 stay
 * node-local. flock() is cluster-wide all the same: dlmglue takes it
 * through its own "F" lock resource, not through ->plock.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/reboot.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <rdlock/dlm.h>

#include "stackglue.h"

/* What the plug-in registers as: see the top of the file. */
#define RDL_STACK_NAME		"user"
/* Resource of the locking-protocol version, in its value block. */
#define RDL_VERSION_LOCK	"version_lock"

/*
 * Flags dlmglue may pass that mean nothing here: DLM_LKF_NODLCKWT is
 * fs/dlm's "no deadlock detection" (rdlock has none to turn off).
 * Everything else not mapped is refused. DLM_LKF_LOCAL (a new inode's
 * lock nobody else can know yet, which o2dlm masters without asking) is
 * RDLOCK_DLM_LKF_LOCAL: granted before its lock words are taken.
 */
#define RDL_LKF_IGNORED		DLM_LKF_NODLCKWT

/*
 * GFS2 holds an inode glock 200 ms (HZ / 5), but only while it has
 * holders (gfs2_glock_cb()); rdlock cannot see dlmglue's, so it holds
 * every fresh EX grant, a directory's one-off atime update too, and
 * starts shorter: a busy lock's hold doubles from here (hold_max_ms).
 */
#define RDL_HOLD_MS_DEFAULT	50

/*
 * OCFS2's dlmglue gives a lock back as soon as a BAST comes and its users
 * are done, and a downconvert of a metadata lock first checkpoints the
 * journal. Nodes creating in one directory then take turns at its lock
 * for one create each. A grant keeps its lock this long before the BAST
 * reaches dlmglue (rdlock_dlm_set_hold(); GFS2's glock hold time), and a
 * busy lock up to hold_max_ms.
 */
static unsigned int hold_ms = RDL_HOLD_MS_DEFAULT;
static unsigned int hold_max_ms = RDLOCK_DLM_HOLD_MAX_MS;

static int rdl_hold_ms_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, RDLOCK_DLM_HOLD_MAX_MS);
}

static const struct kernel_param_ops rdl_hold_ms_ops = {
	.set = rdl_hold_ms_set,
	.get = param_get_uint,
};

module_param_cb(hold_ms, &rdl_hold_ms_ops, &hold_ms, 0644);
/* The numbers the description gives. */
static_assert(RDLOCK_DLM_HOLD_MAX_MS == 1000 && RDL_HOLD_MS_DEFAULT == 50);
MODULE_PARM_DESC(hold_ms,
		 "ms a node keeps a lock it was granted before a BAST reaches OCFS2 (0..1000; default 50); read at mount");
module_param_cb(hold_max_ms, &rdl_hold_ms_ops, &hold_max_ms, 0644);
MODULE_PARM_DESC(hold_max_ms,
		 "ms a busy lock's hold time may grow to (0..1000, at least hold_ms; default 1000); read at mount");

/*
 * What a node does when its lockspace is lost while OCFS2 has it: o2cb's
 * fence_method (o2quo_fence_self()), the same names and default.
 */
enum rdl_fence_method {
	RDL_FENCE_RESET,
	RDL_FENCE_PANIC,
};

static const char *const rdl_fence_names[] = {
	[RDL_FENCE_RESET] = "reset",
	[RDL_FENCE_PANIC] = "panic",
};

static int fence_method = RDL_FENCE_RESET;

static int rdl_fence_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(rdl_fence_names, val);

	if (i < 0)
		return i;
	WRITE_ONCE(*(int *)kp->arg, i);
	return 0;
}

static int rdl_fence_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 rdl_fence_names[READ_ONCE(*(int *)kp->arg)]);
}

static const struct kernel_param_ops rdl_fence_ops = {
	.set = rdl_fence_set,
	.get = rdl_fence_get,
};

module_param_cb(fence_method, &rdl_fence_ops, &fence_method, 0644);
MODULE_PARM_DESC(fence_method,
		 "what a node does when its lockspace is lost while mounted: reset (default: restart at once) or panic");

struct rdl_conn {
	struct rdlock_dlm_ls *dls;
	struct ocfs2_cluster_connection *conn;
	u32 node;
	/* The version lock, held at PR from connect to disconnect. */
	struct rdlock_dlm_lksb vlksb;
	char vlvb[RDLOCK_DLM_LVB_LEN];
	struct completion vdone;
};

/*
 * OCFS2's lksb union has fs/dlm's struct dlm_lksb, and rdlock's status
 * block is laid out the same way (checked in rdl_init()).
 */
static struct rdlock_dlm_lksb *rdl_sb(struct ocfs2_dlm_lksb *lksb)
{
	return (struct rdlock_dlm_lksb *)&lksb->lksb_fsdlm;
}

/* The value block buffer: the lksb's own, unless one was set before. */
static void *rdl_lvb(struct ocfs2_dlm_lksb *lksb)
{
	struct rdlock_dlm_lksb *sb = rdl_sb(lksb);

	if (!sb->sb_lvbptr)
		sb->sb_lvbptr = lksb->padding.lvb;
	return sb->sb_lvbptr;
}

static int rdl_map_lock_flags(u32 flags, u32 *out)
{
	u32 f = 0;

	if (flags & ~(DLM_LKF_NOQUEUE | DLM_LKF_CONVERT | DLM_LKF_VALBLK |
		      DLM_LKF_LOCAL | RDL_LKF_IGNORED))
		return -EINVAL;
	/* dlmglue sets it on new locks only; a conversion is not new. */
	if (flags & DLM_LKF_LOCAL && !(flags & DLM_LKF_CONVERT))
		f |= RDLOCK_DLM_LKF_LOCAL;
	if (flags & DLM_LKF_NOQUEUE)
		f |= RDLOCK_DLM_LKF_NOQUEUE;
	if (flags & DLM_LKF_CONVERT)
		f |= RDLOCK_DLM_LKF_CONVERT;
	if (flags & DLM_LKF_VALBLK)
		f |= RDLOCK_DLM_LKF_VALBLK;
	*out = f;
	return 0;
}

/* Completion of a request, a cancel or an unlock of an OCFS2 lock. */
static void rdl_ast(void *arg)
{
	struct ocfs2_dlm_lksb *lksb = arg;
	int status = rdl_sb(lksb)->sb_status;

	/*
	 * As stack_user.c: an unlock and a cancelled conversion end in the
	 * unlock callback (dlmglue knows which from its own state), every
	 * other outcome, errors included, in the lock callback, which reads
	 * the status through ->lock_status().
	 */
	if (status == RDLOCK_DLM_EUNLOCK || status == RDLOCK_DLM_ECANCEL)
		lksb->lksb_conn->cc_proto->lp_unlock_ast(lksb, 0);
	else
		lksb->lksb_conn->cc_proto->lp_lock_ast(lksb);
}

static void rdl_bast(void *arg, int mode)
{
	struct ocfs2_dlm_lksb *lksb = arg;

	/* rdlock's modes have fs/dlm's (and o2dlm's LKM_*) numbers. */
	lksb->lksb_conn->cc_proto->lp_blocking_ast(lksb, mode);
}

static int rdl_dlm_lock(struct ocfs2_cluster_connection *conn, int mode,
			struct ocfs2_dlm_lksb *lksb, u32 flags, void *name,
			unsigned int namelen)
{
	struct rdl_conn *rc = conn->cc_private;
	u32 f;
	int ret;

	ret = rdl_map_lock_flags(flags, &f);
	if (ret)
		return ret;
	rdl_lvb(lksb);
	return rdlock_dlm_lock(rc->dls, mode, rdl_sb(lksb), f, name, namelen,
			       rdl_ast, lksb, rdl_bast);
}

static int rdl_dlm_unlock(struct ocfs2_cluster_connection *conn,
			  struct ocfs2_dlm_lksb *lksb, u32 flags)
{
	struct rdl_conn *rc = conn->cc_private;
	u32 f = 0;

	if (flags & ~(DLM_LKF_CANCEL | DLM_LKF_VALBLK))
		return -EINVAL;
	if (flags & DLM_LKF_CANCEL)
		f |= RDLOCK_DLM_LKF_CANCEL;
	if (flags & DLM_LKF_VALBLK)
		f |= RDLOCK_DLM_LKF_VALBLK;
	rdl_lvb(lksb);
	return rdlock_dlm_unlock(rc->dls, rdl_sb(lksb)->sb_lkid, f,
				 rdl_sb(lksb), lksb);
}

/* The status as fs/dlm's stack reports it: errnos, -DLM_E* for the rest. */
static int rdl_lock_status(struct ocfs2_dlm_lksb *lksb)
{
	int status = rdl_sb(lksb)->sb_status;

	if (status == RDLOCK_DLM_EUNLOCK)
		return -DLM_EUNLOCK;
	if (status == RDLOCK_DLM_ECANCEL)
		return -DLM_ECANCEL;
	return status;
}

static int rdl_lvb_valid(struct ocfs2_dlm_lksb *lksb)
{
	return !(rdl_sb(lksb)->sb_flags & RDLOCK_DLM_SBF_VALNOTVALID);
}

static void *rdl_lock_lvb(struct ocfs2_dlm_lksb *lksb)
{
	return rdl_lvb(lksb);
}

static void rdl_dump_lksb(struct ocfs2_dlm_lksb *lksb)
{
	struct rdlock_dlm_lksb *sb = rdl_sb(lksb);
	struct rdl_conn *rc = lksb->lksb_conn ? lksb->lksb_conn->cc_private :
						NULL;
	struct rdlock_dlm_lock_status st;

	pr_err("ocfs2_stack_rdlock: lksb %p: lkid %u status %d flags 0x%x lvb %p\n",
	       lksb, sb->sb_lkid, sb->sb_status, sb->sb_flags, sb->sb_lvbptr);
	/* What rdlock thinks of the lock: a hang shows which wait it is in. */
	if (rc && !rdlock_dlm_lock_status(rc->dls, sb->sb_lkid, &st))
		pr_err("ocfs2_stack_rdlock: lkid %u: granted %d requested %d waiting %s\n",
		       sb->sb_lkid, st.grmode, st.rqmode,
		       st.waiting == RDLOCK_DLM_WAIT_GATE ? "gate" :
		       st.waiting == RDLOCK_DLM_WAIT_MAIN ? "main" : "no");
}

/* ------------------------------------------------------------------ */
/* The connection                                                     */

static void rdl_node_down(void *arg, u32 node)
{
	struct ocfs2_cluster_connection *conn = arg;

	/*
	 * rdlock calls this once per dead node, once the node is cut off
	 * (and, with membership=dlm, fenced by the cluster engine) and before
	 * any lock it held is granted to anybody: its journal lock stays
	 * held until every survivor's recovery handler ran, so one of them
	 * then replays the journal, as OCFS2's recovery needs.
	 */
	pr_info("ocfs2_stack_rdlock: %s: node %u down, recovery\n",
		conn->cc_name, node);
	conn->cc_recovery_handler(node, conn->cc_recovery_data);
}

/*
 * The lockspace is lost (rdlock calls this once): this node was declared
 * down, its cluster went down, or a node came back with a new table that
 * no longer has the lock words it kept. The others may hold its locks by
 * now and replay its journal, while OCFS2 here still believes it holds them and
 * has dirty pages and journal blocks under way: it must not write again.
 * o2cb restarts the node when it loses quorum (o2quo_fence_self()), and
 * OCFS2's user stack when its control daemon goes away with file systems
 * mounted: so does this, or panics (fence_method).
 */
static void rdl_lost(void *arg)
{
	struct ocfs2_cluster_connection *conn = arg;
	int method = READ_ONCE(fence_method);

	pr_emerg("ocfs2_stack_rdlock: %s: lockspace lost while mounted: other nodes may hold its locks and replay this node's journal; fencing this node (fence_method=%s)\n",
		 conn->cc_name, rdl_fence_names[method]);
	if (method == RDL_FENCE_PANIC)
		panic("ocfs2_stack_rdlock: %s: lockspace lost\n",
		      conn->cc_name);
	emergency_restart();
}

static const struct rdlock_dlm_ops rdl_ls_ops = {
	.node_down = rdl_node_down,
	.lost = rdl_lost,
};

static void rdl_sync_ast(void *arg)
{
	struct rdl_conn *rc = arg;

	complete(&rc->vdone);
}

/* The version lock, synchronously: its status, or the call's error. */
static int rdl_version_lock(struct rdl_conn *rc, int mode, u32 flags)
{
	int ret;

	reinit_completion(&rc->vdone);
	ret = rdlock_dlm_lock(rc->dls, mode, &rc->vlksb, flags,
			      RDL_VERSION_LOCK, strlen(RDL_VERSION_LOCK),
			      rdl_sync_ast, rc, NULL);
	if (ret)
		return ret;
	wait_for_completion(&rc->vdone);
	return rc->vlksb.sb_status;
}

static int rdl_version_unlock(struct rdl_conn *rc)
{
	int ret;

	reinit_completion(&rc->vdone);
	/* A lock left keeps the lockspace from closing (rdl_close()). */
	while ((ret = rdlock_dlm_unlock(rc->dls, rc->vlksb.sb_lkid, 0,
					&rc->vlksb, rc)) == -ENOMEM)
		msleep(20);
	if (ret)
		return ret;
	wait_for_completion(&rc->vdone);
	return rc->vlksb.sb_status == RDLOCK_DLM_EUNLOCK ? 0 :
	       rc->vlksb.sb_status ?: -EIO;
}

/*
 * How often a node that found no version in the value block tries again,
 * and the pause before the n-th try (RDL_VERSION_PAUSE_MS times n times
 * the node id plus one: the nodes that met meet again less often).
 */
#define RDL_VERSION_TRIES	20
#define RDL_VERSION_PAUSE_MS	5

/*
 * The locking protocol version every node of the file system runs, as
 * stack_user.c settles it: the first node (the one that gets the version
 * lock at EX without waiting) writes its own into the value block; later
 * ones read it at PR and must have the same major and at least its minor.
 * Every node keeps PR, so the value stays while anyone is mounted.
 *
 * Unlike fs/dlm's, two nodes mounting at once may both be refused EX
 * (one took the convert gate, the other's PR then held the main word:
 * dlm-api.rst, NOQUEUE), and nobody wrote a version: a PR that finds the
 * value block not valid gives it back and tries again from the start.
 */
static int rdl_version(struct rdl_conn *rc, struct ocfs2_protocol_version *max)
{
	struct ocfs2_cluster_connection *conn = rc->conn;
	struct ocfs2_protocol_version *pv = (void *)rc->vlvb;
	unsigned int tries = 0;
	int ret;

	rc->vlksb.sb_lvbptr = rc->vlvb;
again:
	ret = rdl_version_lock(rc, RDLOCK_DLM_LOCK_EX,
			       RDLOCK_DLM_LKF_NOQUEUE | RDLOCK_DLM_LKF_VALBLK);
	if (!ret) {
		*pv = *max;
		ret = rdl_version_lock(rc, RDLOCK_DLM_LOCK_PR,
				       RDLOCK_DLM_LKF_CONVERT |
				       RDLOCK_DLM_LKF_VALBLK);
		if (ret) {
			/* Still held at EX: give it back. */
			rdl_version_unlock(rc);
			return ret;
		}
	} else if (ret == -EAGAIN) {
		ret = rdl_version_lock(rc, RDLOCK_DLM_LOCK_PR,
				       RDLOCK_DLM_LKF_VALBLK);
		if (ret)
			return ret;
		if (rc->vlksb.sb_flags & RDLOCK_DLM_SBF_VALNOTVALID &&
		    ++tries < RDL_VERSION_TRIES) {
			ret = rdl_version_unlock(rc);
			if (ret)
				return ret;
			if (fatal_signal_pending(current))
				return -EINTR;
			msleep(RDL_VERSION_PAUSE_MS * tries * (rc->node + 1));
			goto again;
		}
		if (rc->vlksb.sb_flags & RDLOCK_DLM_SBF_VALNOTVALID ||
		    pv->pv_major != max->pv_major ||
		    pv->pv_minor > max->pv_minor) {
			pr_err("ocfs2_stack_rdlock: %s: the cluster runs locking protocol %u.%u%s, this node %u.%u\n",
			       conn->cc_name, pv->pv_major, pv->pv_minor,
			       rc->vlksb.sb_flags & RDLOCK_DLM_SBF_VALNOTVALID ?
			       " (not valid)" : "",
			       max->pv_major, max->pv_minor);
			rdl_version_unlock(rc);
			return -EPROTO;
		}
		if (tries)
			pr_info("ocfs2_stack_rdlock: %s: the locking protocol version found at try %u\n",
				conn->cc_name, tries + 1);
	} else {
		/* A failed new lock is gone: nothing to unlock. */
		return ret;
	}
	conn->cc_version = *pv;
	return 0;
}

static struct ocfs2_stack_plugin rdl_plugin;

/*
 * Close the lockspace of @rc. OCFS2 gave back its locks and the version
 * lock is gone, so none is left. Should one be (an unlock that failed),
 * rdlock_dlm_close() refuses (-EBUSY) and the lockspace's callbacks keep
 * pointing at OCFS2's connection, which the stack glue frees whatever
 * this returns (and OCFS2 ignores a failed disconnect at unmount): wait
 * for the lock to go instead, logged, as fs/dlm's forced release is not
 * to be had.
 */
static void rdl_close(struct rdl_conn *rc)
{
	bool told = false;

	while (rdlock_dlm_close(rc->dls) == -EBUSY) {
		if (!told)
			pr_err("ocfs2_stack_rdlock: %s: a lock is left in the lockspace: waiting for it to go before closing\n",
			       rc->conn->cc_name);
		told = true;
		msleep(1000);
	}
}

/*
 * The disk's cluster name (mkfs.ocfs2 --cluster-name) is the name of this
 * node's rdlock cluster, as stack_user's fs/dlm compares it with its
 * cluster engine's: a disk made for another cluster is refused. A cluster
 * configured without a name takes any disk, and says so.
 */
static int rdl_check_cluster(struct ocfs2_cluster_connection *conn)
{
	/* NUL-terminated: the stack glue copies it with strscpy(). */
	const char *disk = conn->cc_cluster_name;
	int ret;

	BUILD_BUG_ON(CLUSTER_NAME_MAX != RDLOCK_DLM_CLUSTER_NAME_MAX);
	ret = rdlock_dlm_check_cluster(disk);
	if (ret == -EBADR)
		pr_err("ocfs2_stack_rdlock: %s: the disk's cluster \"%s\" is not this node's (rdlockctl config --name): refused\n",
		       conn->cc_name, disk);
	if (ret != -ENOKEY)
		return ret;
	pr_notice("ocfs2_stack_rdlock: %s: the disk's cluster \"%s\" not checked: this node's cluster has no name (rdlock.conf cluster_name)\n",
		  conn->cc_name, disk);
	return 0;
}

static int rdl_connect(struct ocfs2_cluster_connection *conn)
{
	struct ocfs2_protocol_version max = rdl_plugin.sp_max_proto;
	struct rdl_conn *rc;
	unsigned int hold;
	int ret;

	ret = rdl_check_cluster(conn);
	if (ret)
		return ret;
	rc = kzalloc(sizeof(*rc), GFP_KERNEL);
	if (!rc)
		return -ENOMEM;
	rc->conn = conn;
	init_completion(&rc->vdone);
	rc->node = rdlock_dlm_node_id();
	/* The lockspace is the file system's uuid. */
	rc->dls = rdlock_dlm_open(conn->cc_name, rc->node, &rdl_ls_ops, conn);
	if (IS_ERR(rc->dls)) {
		ret = PTR_ERR(rc->dls);
		pr_err("ocfs2_stack_rdlock: %s: cannot open the lockspace: %d\n",
		       conn->cc_name, ret);
		goto free;
	}
	conn->cc_lockspace = rc->dls;
	conn->cc_private = rc;
	/* The parameters' bounds are the API's: this cannot fail. */
	hold = READ_ONCE(hold_ms);
	rdlock_dlm_set_hold(rc->dls, hold, max(hold, READ_ONCE(hold_max_ms)));

	/* What the running file system asks for is at most our maximum. */
	if (conn->cc_version.pv_major != max.pv_major ||
	    conn->cc_version.pv_minor > max.pv_minor) {
		ret = -EPROTO;
		goto close;
	}
	ret = rdl_version(rc, &max);
	if (ret) {
		pr_err("ocfs2_stack_rdlock: %s: no locking protocol version: %d\n",
		       conn->cc_name, ret);
		goto close;
	}
	pr_info("ocfs2_stack_rdlock: %s: node %u connected, locking protocol %u.%u\n",
		conn->cc_name, rc->node, conn->cc_version.pv_major,
		conn->cc_version.pv_minor);
	return 0;

close:
	rdl_close(rc);
	conn->cc_lockspace = NULL;
	conn->cc_private = NULL;
free:
	kfree(rc);
	return ret;
}

/* OCFS2 dropped every lock before this: only the version lock is left. */
static int rdl_disconnect(struct ocfs2_cluster_connection *conn)
{
	struct rdl_conn *rc = conn->cc_private;
	int ret;

	ret = rdl_version_unlock(rc);
	if (ret)
		pr_err("ocfs2_stack_rdlock: %s: version lock unlock: %d\n",
		       conn->cc_name, ret);
	rdl_close(rc);
	conn->cc_lockspace = NULL;
	conn->cc_private = NULL;
	kfree(rc);
	return 0;
}

static int rdl_this_node(struct ocfs2_cluster_connection *conn,
			 unsigned int *node)
{
	struct rdl_conn *rc = conn->cc_private;

	*node = rc->node;
	return 0;
}

static struct ocfs2_stack_operations rdl_ops = {
	.connect	= rdl_connect,
	.disconnect	= rdl_disconnect,
	.this_node	= rdl_this_node,
	.dlm_lock	= rdl_dlm_lock,
	.dlm_unlock	= rdl_dlm_unlock,
	.lock_status	= rdl_lock_status,
	.lvb_valid	= rdl_lvb_valid,
	.lock_lvb	= rdl_lock_lvb,
	/* .plock: none, POSIX locks stay node-local (see the top). */
	.dump_lksb	= rdl_dump_lksb,
};

static struct ocfs2_stack_plugin rdl_plugin = {
	.sp_name	= RDL_STACK_NAME,
	.sp_ops		= &rdl_ops,
	.sp_owner	= THIS_MODULE,
};

static int __init rdl_init(void)
{
	/* rdl_sb(): the two status blocks are one layout. */
	BUILD_BUG_ON(sizeof(struct rdlock_dlm_lksb) != sizeof(struct dlm_lksb));
	BUILD_BUG_ON(offsetof(struct rdlock_dlm_lksb, sb_status) !=
		     offsetof(struct dlm_lksb, sb_status));
	BUILD_BUG_ON(offsetof(struct rdlock_dlm_lksb, sb_lkid) !=
		     offsetof(struct dlm_lksb, sb_lkid));
	BUILD_BUG_ON(offsetof(struct rdlock_dlm_lksb, sb_flags) !=
		     offsetof(struct dlm_lksb, sb_flags));
	BUILD_BUG_ON(offsetof(struct rdlock_dlm_lksb, sb_lvbptr) !=
		     offsetof(struct dlm_lksb, sb_lvbptr));
	/* rdl_lvb(): rdlock copies RDLOCK_DLM_LVB_LEN bytes. */
	BUILD_BUG_ON(sizeof_field(struct fsdlm_lksb_plus_lvb, lvb) !=
		     RDLOCK_DLM_LVB_LEN);
	/* Modes and BAST modes go through unchanged. */
	BUILD_BUG_ON(DLM_LOCK_NL != RDLOCK_DLM_LOCK_NL);
	BUILD_BUG_ON(DLM_LOCK_PR != RDLOCK_DLM_LOCK_PR);
	BUILD_BUG_ON(DLM_LOCK_EX != RDLOCK_DLM_LOCK_EX);
	BUILD_BUG_ON(LKM_NLMODE != RDLOCK_DLM_LOCK_NL);
	BUILD_BUG_ON(LKM_PRMODE != RDLOCK_DLM_LOCK_PR);
	BUILD_BUG_ON(LKM_EXMODE != RDLOCK_DLM_LOCK_EX);
	return ocfs2_stack_glue_register(&rdl_plugin);
}

static void __exit rdl_exit(void)
{
	ocfs2_stack_glue_unregister(&rdl_plugin);
}

module_init(rdl_init);
module_exit(rdl_exit);
MODULE_DESCRIPTION("OCFS2 cluster stack on rdlock's DLM");
MODULE_LICENSE("GPL");
MODULE_VERSION(RDLOCK_VERSION);
