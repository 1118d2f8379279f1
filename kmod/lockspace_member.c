// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock membership from the cluster engine: corosync decides which nodes
 * are alive and quorate, dlm_controld (with its fencing) when a dead node
 * may be given up, and fs/dlm passes that on to its kernel users through
 * struct dlm_lockspace_ops. rdlock joins a companion fs/dlm lockspace,
 * "rdlock", which carries no lock: only those callbacks, as OCFS2's user
 * stack and GFS2 get them (Documentation/rdlock/recovery.rst).
 *
 *   recover_prep   membership is changing: nothing is granted here until
 *                  recover_done (acquisitions wait, a TRY is refused);
 *   recover_slot   a member failed, and was fenced if dlm_controld fences:
 *                  it is cut off at once and declared down here
 *                  (rdlock_ls_node_down()) by work items, never in fs/dlm's
 *                  recovery thread;
 *   recover_done   the members and generation: granting resumes once the
 *                  failed members are declared down, and those that left
 *                  (no longer members, without recover_slot: their
 *                  cluster taken down cleanly, their table gone too).
 *
 * Without quorum dlm_controld never starts the lockspace, and when it
 * dies fs/dlm stops every lockspace: either way nothing is granted here.
 * The membership also forms each cluster epoch: no node is ready before
 * the lowest member, once it heard from every other one and either every
 * configured node is a member or it waited founding_wait_ms, declared
 * the configured nodes that are none absent (rdlock_xport_form()), so a
 * cluster comes up and grants with nodes off; they come back later as
 * nodes declared down do.
 *
 * With the module parameter membership=static (the default) none of this
 * runs and the admin declares dead nodes down (RDLOCK_IOC_NODE_DOWN).
 *
 * fs/dlm is not a dependency of the module: its two calls are looked up
 * when the cluster comes up (symbol_request(), which loads dlm.ko).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/dlm.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "lockspace-pri.h"
#include "lockspace_down.h"

/* The companion fs/dlm lockspace's name. */
#define RDLOCK_MEMBER_LS	"rdlock"

static char *rdlock_membership = "static";
module_param_named(membership, rdlock_membership, charp, 0444);
MODULE_PARM_DESC(membership,
		 "who declares nodes down: static (the admin, RDLOCK_IOC_NODE_DOWN; default) or dlm (corosync and dlm_controld, through fs/dlm)");

static unsigned int rdlock_founding_wait_ms = 30000;
module_param_named(founding_wait_ms, rdlock_founding_wait_ms, uint, 0644);
MODULE_PARM_DESC(founding_wait_ms,
		 "membership=dlm: how long after its cluster came up the lowest member waits for every configured node to be a member before the cluster forms without the others (ms, default 30000)");

/**
 * enum rdlock_member_state - this node's membership
 * @RDLOCK_MB_STATIC: membership=static: always granting.
 * @RDLOCK_MB_OUT: not in the companion lockspace (the cluster is down).
 * @RDLOCK_MB_JOINING: dlm_new_lockspace() is under way.
 * @RDLOCK_MB_STOPPED: recover_prep came: nothing is granted.
 * @RDLOCK_MB_RECOVERING: recover_done came; failed members are being
 *	declared down: nothing is granted yet.
 * @RDLOCK_MB_RUNNING: a member of a quorate cluster: granting.
 * @RDLOCK_MB_NR: the number of states.
 *
 * Changed only by rdlock_member_to(), under rdlock_mb.lock.
 */
enum rdlock_member_state {
	RDLOCK_MB_STATIC,
	RDLOCK_MB_OUT,
	RDLOCK_MB_JOINING,
	RDLOCK_MB_STOPPED,
	RDLOCK_MB_RECOVERING,
	RDLOCK_MB_RUNNING,
	RDLOCK_MB_NR
};

static const char *const rdlock_member_state_names[RDLOCK_MB_NR] = {
	[RDLOCK_MB_STATIC]	= "static",
	[RDLOCK_MB_OUT]		= "out",
	[RDLOCK_MB_JOINING]	= "joining",
	[RDLOCK_MB_STOPPED]	= "stopped",
	[RDLOCK_MB_RECOVERING]	= "recovering",
	[RDLOCK_MB_RUNNING]	= "running",
};

#define MB(s)	BIT(RDLOCK_MB_##s)
/* The moves each state allows: where it may go next. */
static const unsigned long rdlock_member_moves[RDLOCK_MB_NR] = {
	[RDLOCK_MB_STATIC]	= 0,
	[RDLOCK_MB_OUT]		= MB(JOINING),
	[RDLOCK_MB_JOINING]	= MB(OUT) | MB(STOPPED) | MB(RECOVERING) |
				  MB(RUNNING),
	[RDLOCK_MB_STOPPED]	= MB(OUT) | MB(RECOVERING) | MB(RUNNING),
	[RDLOCK_MB_RECOVERING]	= MB(OUT) | MB(STOPPED) | MB(RUNNING),
	[RDLOCK_MB_RUNNING]	= MB(OUT) | MB(STOPPED) | MB(RECOVERING),
};

#undef MB

/* fs/dlm's two calls, looked up when the cluster comes up. */
typedef int (*rdlock_member_new_t)(const char *name, const char *cluster,
				   u32 flags, int lvblen,
				   const struct dlm_lockspace_ops *ops,
				   void *ops_arg, int *ops_result,
				   dlm_lockspace_t **lockspace);
typedef int (*rdlock_member_release_t)(dlm_lockspace_t *lockspace,
				       int force);

static struct {
	spinlock_t lock;		/* protects the fields below */
	enum rdlock_member_state state;
	u32 generation;			/* recover_done's */
	unsigned long members[BITS_TO_LONGS(RDLOCK_MAX_NODES)];
	unsigned long failed[BITS_TO_LONGS(RDLOCK_MAX_NODES)];
	/* Gone without failing, not yet decided on by the down work. */
	unsigned long left[BITS_TO_LONGS(RDLOCK_MAX_NODES)];
	ktime_t done_at;		/* recover_done's arrival */
	s64 last_recovery_us;		/* recover_done to running */
	/* CLOCK_MONOTONIC of the last of each callback and of running again */
	ktime_t prep_at, slot_at, running_at;
	u64 preps, slots, dones, lefts, downs, down_errors, heard;
	wait_queue_head_t wait;		/* state became running */
	/* Its own: a declaration waits for peers at barriers. */
	struct workqueue_struct *wq;
	struct delayed_work down_work;	/* declares the failed down */
	/*
	 * jiffies a handover began to wait for an heir, 0: none; whether
	 * that was logged; heirs whose lockspaces are still to reach their
	 * tables (rdlock_ls_take_over() failed). All down_work's.
	 */
	unsigned long handover_wait;
	bool handover_warned;
	u32 took;
	struct delayed_work form_work;	/* forms the epoch */
	/*
	 * Cuts off failed members at once (rdlock_member_cut_work()), each
	 * the table it had when it failed (@failed_inc); the mutex makes
	 * every cut, its teardown included, end before anybody else's cut
	 * of the same node returns. Its own queue: a declaration waits for
	 * it, and no other work item may hold it up.
	 */
	struct workqueue_struct *cut_wq;
	struct work_struct cut_work;
	u64 failed_inc[RDLOCK_MAX_NODES];
	struct mutex cut_mutex;		/* one cut at a time */
	struct mutex join_mutex;	/* joins and leaves */
	dlm_lockspace_t *dlm_ls;
	rdlock_member_new_t new_ls;
	rdlock_member_release_t release_ls;
} rdlock_mb = {
	.lock = __SPIN_LOCK_UNLOCKED(rdlock_mb.lock),
	.wait = __WAIT_QUEUE_HEAD_INITIALIZER(rdlock_mb.wait),
	.cut_mutex = __MUTEX_INITIALIZER(rdlock_mb.cut_mutex),
	.join_mutex = __MUTEX_INITIALIZER(rdlock_mb.join_mutex),
};

/* The one place the state changes; rdlock_mb.lock held. */
static void rdlock_member_to(enum rdlock_member_state to)
{
	enum rdlock_member_state from = rdlock_mb.state;

	lockdep_assert_held(&rdlock_mb.lock);
	if (WARN_ONCE(!(rdlock_member_moves[from] & BIT(to)),
		      "rdlock membership: %s -> %s refused\n",
		      rdlock_member_state_names[from],
		      rdlock_member_state_names[to]))
		return;
	rdlock_mb.state = to;
	if (to == RDLOCK_MB_RUNNING) {
		rdlock_mb.running_at = ktime_get();
		wake_up_all(&rdlock_mb.wait);
	}
}

static bool rdlock_member_dlm(void)
{
	return !strcmp(rdlock_membership, "dlm");
}

/* The rdlock node of fs/dlm's (corosync's) node id: those start at 1. */
static u32 rdlock_member_node(int nodeid)
{
	return nodeid > 0 ? nodeid - 1 : RDLOCK_MAX_NODES;
}

static bool rdlock_member_granting_locked(void)
{
	return rdlock_mb.state == RDLOCK_MB_STATIC ||
	       rdlock_mb.state == RDLOCK_MB_RUNNING;
}

/**
 * rdlock_member_status() - this node's membership, for RDLOCK_IOC_STATUS
 * @members: set to the cluster engine's members, by bit: 0 with
 *	membership=static, and while this node is not in the companion
 *	lockspace (out, or joining: the last generation's are stale).
 *
 * Return: an enum rdlock_membership_state.
 */
u32 rdlock_member_status(u32 *members)
{
	static const u32 uapi[RDLOCK_MB_NR] = {
		[RDLOCK_MB_STATIC]	= RDLOCK_MEMBERSHIP_STATIC,
		[RDLOCK_MB_OUT]		= RDLOCK_MEMBERSHIP_OUT,
		[RDLOCK_MB_JOINING]	= RDLOCK_MEMBERSHIP_JOINING,
		[RDLOCK_MB_STOPPED]	= RDLOCK_MEMBERSHIP_STOPPED,
		[RDLOCK_MB_RECOVERING]	= RDLOCK_MEMBERSHIP_RECOVERING,
		[RDLOCK_MB_RUNNING]	= RDLOCK_MEMBERSHIP_RUNNING,
	};
	unsigned long flags;
	u32 st;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	st = uapi[rdlock_mb.state];
	bitmap_to_arr32(members, rdlock_mb.members, RDLOCK_MAX_NODES);
	if (rdlock_mb.state == RDLOCK_MB_OUT ||
	    rdlock_mb.state == RDLOCK_MB_JOINING)
		*members = 0;
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	return st;
}

/**
 * rdlock_member_granting() - may this node grant a lock now
 *
 * Return: as rdlock_member_wait() would without waiting.
 */
bool rdlock_member_granting(void)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	ret = rdlock_member_granting_locked();
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	return ret;
}

/* How often a waiting acquisition looks whether its lockspace was lost. */
#define RDLOCK_MEMBER_STALE_MS	1000

/**
 * rdlock_member_wait() - wait until this node may grant
 * @ls: the acquisition's lockspace.
 * @deadline: the acquisition's, in jiffies (0: none; passed: a TRY).
 *
 * With membership=dlm, nothing is granted while the cluster engine has the
 * lockspace stopped (membership changing, no quorum, no dlm_controld) or
 * failed members are still being declared down.
 *
 * Return: 0; -ETIMEDOUT at @deadline; -EINTR on a fatal signal;
 * -ESHUTDOWN when @ls was lost meanwhile (this node declared down).
 */
int rdlock_member_wait(const struct rdlock_ls *ls, unsigned long deadline)
{
	unsigned long wait;

	for (;;) {
		if (rdlock_member_granting())
			return 0;
		if (rdlock_ls_stale(ls))
			return -ESHUTDOWN;
		if (deadline && time_after_eq(jiffies, deadline))
			return -ETIMEDOUT;
		wait = msecs_to_jiffies(RDLOCK_MEMBER_STALE_MS);
		if (deadline)
			wait = min(wait, deadline - jiffies);
		if (wait_event_killable_timeout(rdlock_mb.wait,
						rdlock_member_granting(),
						wait) < 0)
			return -EINTR;
	}
}

/* recover_prep: the cluster engine stopped the lockspace. */
static void rdlock_member_prep(void *arg)
{
	unsigned long flags;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	rdlock_mb.preps++;
	rdlock_mb.prep_at = ktime_get();
	if (rdlock_mb.state != RDLOCK_MB_STOPPED)
		rdlock_member_to(RDLOCK_MB_STOPPED);
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	pr_info("membership stopped: nothing is granted until the cluster engine starts it again\n");
}

/* recover_slot: @slot's node failed (and was fenced, if fencing is on). */
static void rdlock_member_slot(void *arg, struct dlm_slot *slot)
{
	u32 node = rdlock_member_node(slot->nodeid);
	unsigned long flags;
	u64 inc;

	if (node >= RDLOCK_MAX_NODES || node == rdlock_xport_self()) {
		pr_warn("membership: failed node id %d is not an rdlock node\n",
			slot->nodeid);
		return;
	}
	inc = rdlock_xport_node_incarnation(node);
	spin_lock_irqsave(&rdlock_mb.lock, flags);
	rdlock_mb.slots++;
	rdlock_mb.slot_at = ktime_get();
	set_bit(node, rdlock_mb.failed);
	rdlock_mb.failed_inc[node] = inc;
	/* Not on rdlock_mb.wq: a declaration there may wait for the node. */
	queue_work(rdlock_mb.cut_wq, &rdlock_mb.cut_work);
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	pr_warn("membership: node %u failed\n", node);
}

/* recover_done: the members and the generation; resume once downs end. */
static void rdlock_member_done(void *arg, struct dlm_slot *slots,
			       int num_slots, int our_slot, u32 generation)
{
	DECLARE_BITMAP(before, RDLOCK_MAX_NODES);
	unsigned long flags;
	bool failed;
	int i;
	u32 n;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	rdlock_mb.dones++;
	rdlock_mb.generation = generation;
	rdlock_mb.done_at = ktime_get();
	bitmap_copy(before, rdlock_mb.members, RDLOCK_MAX_NODES);
	bitmap_zero(rdlock_mb.members, RDLOCK_MAX_NODES);
	for (i = 0; i < num_slots; i++) {
		n = rdlock_member_node(slots[i].nodeid);
		if (n < RDLOCK_MAX_NODES)
			set_bit(n, rdlock_mb.members);
	}
	/*
	 * Members that are gone without failing left: the down work decides
	 * whether to declare them (rdlock_member_take_left()).
	 */
	bitmap_andnot(before, before, rdlock_mb.members, RDLOCK_MAX_NODES);
	bitmap_andnot(before, before, rdlock_mb.failed, RDLOCK_MAX_NODES);
	bitmap_or(rdlock_mb.left, rdlock_mb.left, before, RDLOCK_MAX_NODES);
	failed = !bitmap_empty(rdlock_mb.failed, RDLOCK_MAX_NODES) ||
		 !bitmap_empty(rdlock_mb.left, RDLOCK_MAX_NODES);
	if (rdlock_mb.state != RDLOCK_MB_RECOVERING)
		rdlock_member_to(RDLOCK_MB_RECOVERING);
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	/* fs/dlm's recovery thread must not wait for ours (as GFS2's). */
	mod_delayed_work(rdlock_mb.wq, &rdlock_mb.down_work, 0);
	pr_info("membership generation %u: %d members%s\n", generation,
		num_slots, failed ? ", declaring the failed ones down" : "");
}

static const struct dlm_lockspace_ops rdlock_member_ops = {
	.recover_prep = rdlock_member_prep,
	.recover_slot = rdlock_member_slot,
	.recover_done = rdlock_member_done,
};

/**
 * rdlock_member_survivor() - does the declaring of a node down wait for @node
 * @node: a configured node, not declared down.
 *
 * With membership=dlm only the members of the last generation declare
 * anybody down: a configured node the cluster engine does not count (off,
 * or not started) is not waited for. With membership=static every
 * configured node is.
 *
 * Return: true when @node is to be waited for.
 */
bool rdlock_member_survivor(u32 node)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	ret = rdlock_mb.state == RDLOCK_MB_STATIC ||
	      (node < RDLOCK_MAX_NODES && test_bit(node, rdlock_mb.members));
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	return ret;
}

/**
 * rdlock_member_heard_down() - a survivor asks how far this node got in
 *	declaring a node down
 * @dead: the node it declares down.
 * @src: the survivor asking.
 * @inc: the table of @dead it declares, 0 when it knows none.
 *
 * A node whose cluster engine joined in the very generation in which
 * @dead failed or left never hears of @dead from fs/dlm: it was never a
 * member here. The members that knew it declare it down, and their
 * barriers wait for this node. When @src is a member of this node's last
 * generation and @dead is none, is not cut off here, nor failed or left
 * here already, and the table it declares is the one known here
 * (rdlock_heard_down_verdict()), this node declares it too, as if it had
 * failed. Granting stops here until that is done. Counted in heard_down.
 * Softirq context.
 */
void rdlock_member_heard_down(u32 dead, u32 src, u64 inc)
{
	struct rdlock_heard_down h = { .inc = inc };
	unsigned long flags;
	bool take;

	if (dead >= RDLOCK_MAX_NODES || src >= RDLOCK_MAX_NODES ||
	    dead == rdlock_xport_self())
		return;
	/* Before rdlock_mb.lock: the transport's lock is taken with BH off. */
	h.known = rdlock_xport_node_incarnation(dead);
	h.configured = rdlock_xport_node_configured(dead);
	h.cut = rdlock_xport_node_cut(dead);
	spin_lock_irqsave(&rdlock_mb.lock, flags);
	h.running = rdlock_mb.state == RDLOCK_MB_RECOVERING ||
		    rdlock_mb.state == RDLOCK_MB_RUNNING;
	h.asker_member = test_bit(src, rdlock_mb.members);
	h.member = test_bit(dead, rdlock_mb.members);
	h.declaring = test_bit(dead, rdlock_mb.failed) ||
		      test_bit(dead, rdlock_mb.left);
	take = rdlock_heard_down_verdict(&h);
	if (take) {
		set_bit(dead, rdlock_mb.failed);
		rdlock_mb.failed_inc[dead] = h.known;
		rdlock_mb.heard++;
		if (rdlock_mb.state == RDLOCK_MB_RUNNING)
			rdlock_member_to(RDLOCK_MB_RECOVERING);
		/* Under the lock: a leave moves to OUT before it cancels. */
		queue_work(rdlock_mb.cut_wq, &rdlock_mb.cut_work);
		mod_delayed_work(rdlock_mb.wq, &rdlock_mb.down_work, 0);
	}
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	if (take)
		pr_warn("membership: node %u declares node %u down, no member of this generation: declaring it down too\n",
			src, dead);
}

/* A declaration that failed is tried again after this. */
#define RDLOCK_MB_RETRY_MS	1000
/* How often the down work looks whether this node learned its epoch. */
#define RDLOCK_MB_LEARN_MS	100

/*
 * Members that left (no longer members, without recover_slot: their
 * cluster taken down cleanly) have lost their tables all the same: the
 * lock words and entries they kept, and their share of the directory.
 * They are declared down as failed ones are (nothing of theirs needs
 * fencing: no lockspace was open there), so that their new table returns
 * rather than ending every lockspace of this epoch; a returned one too
 * (it kept nothing, but its next table would end them). The last nodes
 * keeping their tables of this epoch too, when other members are left to
 * take over (rdlock_member_hand_over()); not the last member: its names
 * would have no home (rdlock_xport_left_declared(), recovery.rst, "A node
 * that leaves").
 *
 * Every survivor must decide alike (the declaration's barriers wait for
 * each other): the heirs are the members that neither failed nor left,
 * the same set everywhere, and a node decides only once it learned its
 * epoch (rdlock_xport_learning()): until then it knows neither whether it
 * returned itself nor which of its peers did. A node that left is not
 * waited for by the learning (rdlock_xport_learn_excuse()): one that left
 * before it connected here would never say, while the survivors that
 * learned already declare it and wait for this node at the barrier.
 * Return: false while this node is learning all the same (none that left
 * is declared meanwhile, so that every survivor declares them in the same
 * order).
 */
static bool rdlock_member_take_left(void)
{
	DECLARE_BITMAP(hosts, RDLOCK_MAX_NODES);
	DECLARE_BITMAP(left, RDLOCK_MAX_NODES);
	DECLARE_BITMAP(last, RDLOCK_MAX_NODES);
	unsigned long flags;
	bool learning;
	u32 n;

	/* Before rdlock_mb.lock: the transport's lock is taken with BH off. */
	learning = rdlock_xport_learning();
	if (learning) {
		spin_lock_irqsave(&rdlock_mb.lock, flags);
		bitmap_copy(left, rdlock_mb.left, RDLOCK_MAX_NODES);
		spin_unlock_irqrestore(&rdlock_mb.lock, flags);
		if (!bitmap_empty(left, RDLOCK_MAX_NODES)) {
			rdlock_xport_learn_excuse(left);
			learning = rdlock_xport_learning();
		}
	}
	bitmap_zero(last, RDLOCK_MAX_NODES);
	spin_lock_irqsave(&rdlock_mb.lock, flags);
	if (bitmap_empty(rdlock_mb.left, RDLOCK_MAX_NODES) || learning) {
		learning = !bitmap_empty(rdlock_mb.left, RDLOCK_MAX_NODES);
		spin_unlock_irqrestore(&rdlock_mb.lock, flags);
		return !learning;
	}
	bitmap_copy(left, rdlock_mb.left, RDLOCK_MAX_NODES);
	bitmap_zero(rdlock_mb.left, RDLOCK_MAX_NODES);
	bitmap_andnot(hosts, rdlock_mb.members, rdlock_mb.failed,
		      RDLOCK_MAX_NODES);
	bitmap_andnot(hosts, hosts, left, RDLOCK_MAX_NODES);
	for_each_set_bit(n, left, RDLOCK_MAX_NODES) {
		if (rdlock_xport_left_declared(n, hosts)) {
			set_bit(n, rdlock_mb.failed);
			rdlock_mb.lefts++;
			continue;
		}
		clear_bit(n, left);
		if (rdlock_xport_node_configured(n) &&
		    !rdlock_xport_node_fenced(n))
			set_bit(n, last);
	}
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	for_each_set_bit(n, left, RDLOCK_MAX_NODES)
		pr_info("membership: node %u left: declaring it down\n", n);
	for_each_set_bit(n, last, RDLOCK_MAX_NODES)
		pr_warn("membership: node %u left, the last member keeping its lock table of this epoch: not declared down, its return ends every lockspace\n",
			n);
	return true;
}

/* A handover waiting that long for an heir to return is logged, once. */
#define RDLOCK_MB_HANDOVER_WARN_MS	10000

/*
 * When the last nodes keeping their lock tables of this epoch are to be
 * declared down (they failed or left, and every other node returned with
 * a new table), the heirs take over first: the members that neither
 * failed nor left, the same set on every survivor (rdlock_xport_hand_over(),
 * recovery.rst, "A handover"). Their new tables keep names, lock words
 * and the directory from then on, so the lockspaces live on. Return:
 * false while this node is learning its epoch, or an heir has not
 * returned here: nothing is declared meanwhile.
 */
static bool rdlock_member_hand_over(void)
{
	DECLARE_BITMAP(heirs, RDLOCK_MAX_NODES);
	unsigned long flags;
	u32 h, took;
	int ret;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	bitmap_andnot(heirs, rdlock_mb.members, rdlock_mb.failed,
		      RDLOCK_MAX_NODES);
	bitmap_andnot(heirs, heirs, rdlock_mb.left, RDLOCK_MAX_NODES);
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	bitmap_to_arr32(&h, heirs, RDLOCK_MAX_NODES);
	ret = rdlock_xport_hand_over(h, &took);
	/* Lockspaces reach the heirs' tables; kept to retry on -ENOMEM. */
	took |= rdlock_mb.took;
	rdlock_mb.took = took && rdlock_ls_take_over(took) ? took : 0;
	if (ret != -EAGAIN && !rdlock_mb.took) {
		rdlock_mb.handover_wait = 0;
		return true;
	}
	if (!rdlock_mb.handover_wait) {
		rdlock_mb.handover_wait = jiffies;
		rdlock_mb.handover_warned = false;
	} else if (!rdlock_mb.handover_warned &&
		   time_after(jiffies, rdlock_mb.handover_wait +
			      msecs_to_jiffies(RDLOCK_MB_HANDOVER_WARN_MS))) {
		pr_warn("membership: the last nodes keeping their lock tables are being declared down, and members %*pbl are to take over: waiting for each to return here\n",
			RDLOCK_MAX_NODES, heirs);
		rdlock_mb.handover_warned = true;
	}
	return false;
}

/*
 * Cut @node off this node's table (rdlock_xport_fence()), the teardown of
 * its connections done when this returns, whoever began it.
 */
static void rdlock_member_cut(u32 node)
{
	mutex_lock(&rdlock_mb.cut_mutex);
	rdlock_xport_fence(node);
	mutex_unlock(&rdlock_mb.cut_mutex);
}

/*
 * Cut off every failed member as soon as the cluster engine says it failed
 * (fenced first, if fencing is on), not when the down work gets to it: a
 * declaration under way may be waiting for that node (a barrier, a move
 * to it, the directory of the nodes taking over from another) and ends,
 * to be tried again, once it is cut off.
 */
static void rdlock_member_cut_work(struct work_struct *work)
{
	DECLARE_BITMAP(failed, RDLOCK_MAX_NODES);
	unsigned long flags;
	bool still;
	u32 node;
	u64 inc;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	bitmap_copy(failed, rdlock_mb.failed, RDLOCK_MAX_NODES);
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	for_each_set_bit(node, failed, RDLOCK_MAX_NODES) {
		mutex_lock(&rdlock_mb.cut_mutex);
		spin_lock_irqsave(&rdlock_mb.lock, flags);
		still = test_bit(node, rdlock_mb.failed);
		inc = rdlock_mb.failed_inc[node];
		spin_unlock_irqrestore(&rdlock_mb.lock, flags);
		/* Not a table back since its declaration (-ESTALE). */
		if (still)
			rdlock_xport_fence_table(node, inc);
		mutex_unlock(&rdlock_mb.cut_mutex);
	}
}

/*
 * Declare every failed member down (a barrier among the survivors each),
 * then grant again if no new membership change came meanwhile. All of
 * them are cut off first: the barrier of one must not wait for another.
 * A declaration that failed (rdlock_ls_node_down(): a move or release
 * that could not be done now) keeps its node failed; the others are
 * declared meanwhile (the other survivors' barriers wait for this
 * node's), and it is tried again a second later, nothing granted
 * meanwhile: until it is done, the dead node's names cannot be granted
 * here anyway (rdlock_res_wait_moved()).
 */
static void rdlock_member_down_work(struct work_struct *work)
{
	DECLARE_BITMAP(tried, RDLOCK_MAX_NODES);
	DECLARE_BITMAP(todo, RDLOCK_MAX_NODES);
	unsigned long flags;
	unsigned int wait_ms;
	bool over;
	u32 node;
	int ret;

	bitmap_zero(tried, RDLOCK_MAX_NODES);
	/* Cut off first: a node learning its epoch waits for a live peer. */
	for (node = 0; node < RDLOCK_MAX_NODES; node++)
		if (test_bit(node, rdlock_mb.failed))
			rdlock_member_cut(node);
	/* Those that left and are to be declared join the failed ones. */
	if (!rdlock_member_take_left()) {
		queue_delayed_work(rdlock_mb.wq, &rdlock_mb.down_work,
				   msecs_to_jiffies(RDLOCK_MB_LEARN_MS));
		return;
	}
	for (node = 0; node < RDLOCK_MAX_NODES; node++)
		if (test_bit(node, rdlock_mb.failed))
			rdlock_member_cut(node);
	if (!rdlock_member_hand_over()) {
		queue_delayed_work(rdlock_mb.wq, &rdlock_mb.down_work,
				   msecs_to_jiffies(RDLOCK_MB_LEARN_MS));
		return;
	}
	for (;;) {
		spin_lock_irqsave(&rdlock_mb.lock, flags);
		bitmap_andnot(todo, rdlock_mb.failed, tried, RDLOCK_MAX_NODES);
		node = find_first_bit(todo, RDLOCK_MAX_NODES);
		spin_unlock_irqrestore(&rdlock_mb.lock, flags);
		/*
		 * Not running before this node knows who keeps the tables of
		 * the epoch: it learned it, and took a handover a peer made.
		 */
		if (node >= RDLOCK_MAX_NODES &&
		    (!rdlock_member_hand_over() || !rdlock_xport_hosts_known())) {
			/* A failed declaration is tried again a second later. */
			wait_ms = bitmap_empty(tried, RDLOCK_MAX_NODES) ?
				  RDLOCK_MB_LEARN_MS : RDLOCK_MB_RETRY_MS;
			queue_delayed_work(rdlock_mb.wq, &rdlock_mb.down_work,
					   msecs_to_jiffies(wait_ms));
			return;
		}
		spin_lock_irqsave(&rdlock_mb.lock, flags);
		if (node >= RDLOCK_MAX_NODES) {
			if (rdlock_mb.state == RDLOCK_MB_RECOVERING &&
			    bitmap_empty(rdlock_mb.failed, RDLOCK_MAX_NODES) &&
			    bitmap_empty(rdlock_mb.left, RDLOCK_MAX_NODES)) {
				rdlock_member_to(RDLOCK_MB_RUNNING);
				rdlock_mb.last_recovery_us =
					ktime_us_delta(rdlock_mb.running_at,
						       rdlock_mb.done_at);
			}
			spin_unlock_irqrestore(&rdlock_mb.lock, flags);
			break;
		}
		spin_unlock_irqrestore(&rdlock_mb.lock, flags);
		/* One that failed since this run began: a handover first? */
		rdlock_member_cut(node);
		if (!rdlock_member_hand_over()) {
			queue_delayed_work(rdlock_mb.wq, &rdlock_mb.down_work,
					   msecs_to_jiffies(RDLOCK_MB_LEARN_MS));
			return;
		}
		ret = rdlock_ls_node_down(node);
		/*
		 * Over: done, done before, not configured, the cluster down,
		 * or its epoch changed under it (-ESHUTDOWN: the cluster's
		 * end, this node cut off, or a peer back with a new table;
		 * in the last case the node stays cut off here, its return
		 * refused, until this node's cluster restarts).
		 */
		over = !ret || ret == -EALREADY || ret == -EINVAL ||
		       ret == -ESHUTDOWN ||
		       (ret == -ENOTCONN && !rdlock_xport_up());
		spin_lock_irqsave(&rdlock_mb.lock, flags);
		if (over)
			clear_bit(node, rdlock_mb.failed);
		if (ret && ret != -EALREADY)
			rdlock_mb.down_errors++;
		else
			rdlock_mb.downs++;
		spin_unlock_irqrestore(&rdlock_mb.lock, flags);
		if (over)
			continue;
		set_bit(node, tried);
		pr_warn_ratelimited("membership: declaring node %u down failed (%d), trying again\n",
				    node, ret);
	}
	if (!bitmap_empty(tried, RDLOCK_MAX_NODES))
		queue_delayed_work(rdlock_mb.wq, &rdlock_mb.down_work,
				   msecs_to_jiffies(RDLOCK_MB_RETRY_MS));
}

/* How often a node whose epoch is to form looks whether it forms it. */
#define RDLOCK_MB_FORM_MS	100

/*
 * Form this node's epoch if it is the lowest member (rdlock_xport_form()),
 * looking again until it formed here or a peer said it formed. Never
 * waits: a declaration on rdlock_mb.wq may wait at its barrier for a peer
 * that waits for the epoch to form.
 */
static void rdlock_member_form_work(struct work_struct *work)
{
	DECLARE_BITMAP(gone, RDLOCK_MAX_NODES);
	unsigned long flags;
	u32 members, out;
	bool running;

	if (!rdlock_xport_forming())
		return;
	spin_lock_irqsave(&rdlock_mb.lock, flags);
	bitmap_to_arr32(&members, rdlock_mb.members, RDLOCK_MAX_NODES);
	bitmap_or(gone, rdlock_mb.failed, rdlock_mb.left, RDLOCK_MAX_NODES);
	/* Its last generation's recover_done came: no change under way. */
	running = rdlock_mb.state == RDLOCK_MB_RUNNING ||
		  rdlock_mb.state == RDLOCK_MB_RECOVERING;
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	bitmap_to_arr32(&out, gone, RDLOCK_MAX_NODES);
	if (rdlock_xport_form(members, out, running,
			      READ_ONCE(rdlock_founding_wait_ms)) == -EAGAIN)
		queue_delayed_work(system_wq, &rdlock_mb.form_work,
				   msecs_to_jiffies(RDLOCK_MB_FORM_MS));
}

/**
 * rdlock_member_forms() - does the membership form this node's epochs
 *
 * Return: true with membership=dlm: the cluster comes up forming its
 * epoch (rdlock_xport_up_down()).
 */
bool rdlock_member_forms(void)
{
	return rdlock_member_dlm();
}

/**
 * rdlock_member_started() - the cluster came up: form its epoch
 *
 * With membership=dlm, look until the epoch formed
 * (rdlock_member_form_work()).
 */
void rdlock_member_started(void)
{
	if (rdlock_member_dlm())
		mod_delayed_work(system_wq, &rdlock_mb.form_work, 0);
}

/**
 * rdlock_member_up() - join the cluster engine's membership
 *
 * With membership=dlm, join the companion fs/dlm lockspace, once: this
 * waits until dlm_controld has added this node (quorum included) and the
 * first recover_done came. Called when the cluster comes up; sleeps.
 *
 * Return: 0; -EUNATCH when dlm_controld is not running; -EOPNOTSUPP when
 * it runs without recovery callbacks; -ENOENT when fs/dlm is not there;
 * another error of dlm_new_lockspace().
 */
int rdlock_member_up(void)
{
	dlm_lockspace_t *dls = NULL;
	unsigned long flags;
	int ops_result = -EOPNOTSUPP, ret;

	if (!rdlock_member_dlm())
		return 0;
	mutex_lock(&rdlock_mb.join_mutex);
	if (rdlock_mb.dlm_ls) {
		ret = 0;
		goto out;
	}
	if (!rdlock_mb.new_ls) {
		rdlock_mb.new_ls = symbol_request(dlm_new_lockspace);
		rdlock_mb.release_ls = symbol_request(dlm_release_lockspace);
		if (!rdlock_mb.new_ls || !rdlock_mb.release_ls) {
			pr_err("membership=dlm: fs/dlm (dlm.ko) is not available\n");
			ret = -ENOENT;
			goto put;
		}
	}
	spin_lock_irqsave(&rdlock_mb.lock, flags);
	bitmap_zero(rdlock_mb.failed, RDLOCK_MAX_NODES);
	bitmap_zero(rdlock_mb.left, RDLOCK_MAX_NODES);
	bitmap_zero(rdlock_mb.members, RDLOCK_MAX_NODES);
	/* down_work's, which is not queued while the membership is out. */
	rdlock_mb.took = 0;
	rdlock_mb.handover_wait = 0;
	rdlock_member_to(RDLOCK_MB_JOINING);
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	ret = rdlock_mb.new_ls(RDLOCK_MEMBER_LS, NULL, 0, 0,
			       &rdlock_member_ops, NULL, &ops_result, &dls);
	if (!ret && ops_result) {
		rdlock_mb.release_ls(dls, 2);
		ret = ops_result;
	}
	if (ret) {
		pr_err("membership=dlm: joining fs/dlm lockspace %s failed (%d)%s\n",
		       RDLOCK_MEMBER_LS, ret,
		       ret == -EUNATCH ? ": dlm_controld is not running" :
		       ret == -EOPNOTSUPP ? ": no recovery callbacks" : "");
		spin_lock_irqsave(&rdlock_mb.lock, flags);
		rdlock_member_to(RDLOCK_MB_OUT);
		spin_unlock_irqrestore(&rdlock_mb.lock, flags);
		goto out;
	}
	rdlock_mb.dlm_ls = dls;
	goto out;
put:
	if (rdlock_mb.new_ls)
		symbol_put(dlm_new_lockspace);
	if (rdlock_mb.release_ls)
		symbol_put(dlm_release_lockspace);
	rdlock_mb.new_ls = NULL;
	rdlock_mb.release_ls = NULL;
out:
	mutex_unlock(&rdlock_mb.join_mutex);
	return ret;
}

/*
 * Leave the companion lockspace: a clean leave, which the other members'
 * fs/dlm do not report as a failure. Caller holds join_mutex.
 */
static void rdlock_member_leave(void)
{
	unsigned long flags;
	int ret;

	if (!rdlock_mb.dlm_ls)
		return;
	ret = rdlock_mb.release_ls(rdlock_mb.dlm_ls, 0);
	if (ret)
		pr_warn("membership: leaving fs/dlm lockspace %s: %d\n",
			RDLOCK_MEMBER_LS, ret);
	rdlock_mb.dlm_ls = NULL;
	/*
	 * Its callbacks are over, and out, no survivor's ask queues work
	 * (rdlock_member_heard_down()): no new down work comes, no retry.
	 */
	spin_lock_irqsave(&rdlock_mb.lock, flags);
	rdlock_member_to(RDLOCK_MB_OUT);
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
	cancel_delayed_work_sync(&rdlock_mb.down_work);
	cancel_delayed_work_sync(&rdlock_mb.form_work);
	cancel_work_sync(&rdlock_mb.cut_work);
}

/**
 * rdlock_member_down() - leave the membership as the cluster goes down
 *
 * No lockspace is open (the cluster cannot go down otherwise), so this
 * node holds nothing the others would have to release. Sleeps.
 */
void rdlock_member_down(void)
{
	mutex_lock(&rdlock_mb.join_mutex);
	rdlock_member_leave();
	mutex_unlock(&rdlock_mb.join_mutex);
}

/**
 * rdlock_member_show() - the membership lines of debugfs rdlock/membership
 * @m: the file.
 */
void rdlock_member_show(struct seq_file *m)
{
	unsigned long flags;

	spin_lock_irqsave(&rdlock_mb.lock, flags);
	seq_printf(m, "membership: %s\nstate: %s\ngeneration: %u\n",
		   rdlock_membership,
		   rdlock_member_state_names[rdlock_mb.state],
		   rdlock_mb.generation);
	seq_printf(m, "members: %*pbl\nfailed: %*pbl\n",
		   RDLOCK_MAX_NODES, rdlock_mb.members,
		   RDLOCK_MAX_NODES, rdlock_mb.failed);
	seq_printf(m, "recover_prep: %llu\nrecover_slot: %llu\nrecover_done: %llu\nleft: %llu\n",
		   rdlock_mb.preps, rdlock_mb.slots, rdlock_mb.dones,
		   rdlock_mb.lefts);
	seq_printf(m, "declared_down: %llu\ndown_errors: %llu\nheard_down: %llu\nlast_recovery_us: %lld\n",
		   rdlock_mb.downs, rdlock_mb.down_errors, rdlock_mb.heard,
		   rdlock_mb.last_recovery_us);
	/* When, on CLOCK_MONOTONIC (ms; 0: never): for figures of a failure. */
	seq_printf(m, "last_prep_ms: %lld\nlast_slot_ms: %lld\nlast_done_ms: %lld\nlast_running_ms: %lld\n",
		   ktime_to_ms(rdlock_mb.prep_at), ktime_to_ms(rdlock_mb.slot_at),
		   ktime_to_ms(rdlock_mb.done_at),
		   ktime_to_ms(rdlock_mb.running_at));
	spin_unlock_irqrestore(&rdlock_mb.lock, flags);
}

/**
 * rdlock_member_init() - read the membership parameter, at module load
 *
 * Return: 0, or -EINVAL for a value other than static or dlm.
 */
int rdlock_member_init(void)
{
	INIT_DELAYED_WORK(&rdlock_mb.down_work, rdlock_member_down_work);
	INIT_DELAYED_WORK(&rdlock_mb.form_work, rdlock_member_form_work);
	INIT_WORK(&rdlock_mb.cut_work, rdlock_member_cut_work);
	if (!strcmp(rdlock_membership, "static")) {
		rdlock_mb.state = RDLOCK_MB_STATIC;
		return 0;
	}
	if (!rdlock_member_dlm()) {
		pr_err("membership=%s: static or dlm\n", rdlock_membership);
		return -EINVAL;
	}
	rdlock_mb.wq = alloc_ordered_workqueue("rdlock_member",
					       WQ_MEM_RECLAIM);
	if (!rdlock_mb.wq)
		return -ENOMEM;
	rdlock_mb.cut_wq = alloc_workqueue("rdlock_member_cut",
					   WQ_MEM_RECLAIM, 1);
	if (!rdlock_mb.cut_wq) {
		destroy_workqueue(rdlock_mb.wq);
		rdlock_mb.wq = NULL;
		return -ENOMEM;
	}
	rdlock_mb.state = RDLOCK_MB_OUT;
	return 0;
}

/* Module exit: leave, and let go of fs/dlm. */
void rdlock_member_exit(void)
{
	mutex_lock(&rdlock_mb.join_mutex);
	rdlock_member_leave();
	if (rdlock_mb.new_ls) {
		symbol_put(dlm_new_lockspace);
		symbol_put(dlm_release_lockspace);
		rdlock_mb.new_ls = NULL;
		rdlock_mb.release_ls = NULL;
	}
	mutex_unlock(&rdlock_mb.join_mutex);
	/* A retry armed by itself after a failed leave, too. */
	cancel_delayed_work_sync(&rdlock_mb.down_work);
	cancel_delayed_work_sync(&rdlock_mb.form_work);
	cancel_work_sync(&rdlock_mb.cut_work);
	if (rdlock_mb.cut_wq)
		destroy_workqueue(rdlock_mb.cut_wq);
	if (rdlock_mb.wq)
		destroy_workqueue(rdlock_mb.wq);
}
