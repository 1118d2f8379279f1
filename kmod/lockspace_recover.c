// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: nodes declared down (rdlock_ls_node_down()): fence,
 * tell the lockspaces' users, wait for the other survivors (a barrier of
 * messages), then release the dead node's holds in the lock words homed
 * here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "lockspace-pri.h"
#include "lockspace_down.h"
#include "uapi_check.h"

enum rdlock_ls_down_stage {
	RDLOCK_LS_DOWN_NONE,
	RDLOCK_LS_DOWN_TOLD,	/* fenced here, the down callbacks returned */
	RDLOCK_LS_DOWN_MOVED,	/* this node's locks of its names moved */
	RDLOCK_LS_DOWN_DONE,	/* its holds released here */
};

/*
 * "Node @dead, its table @incarnation of @table_slots slots (0 and 0: I
 * know none), is down here and I got to @stage (TOLD or MOVED)"; @ask:
 * answer if you got there too. A message without @stage says TOLD;
 * without @incarnation, of the table known here; @table_slots 0 from a
 * sender that does not say.
 */
struct rdlock_ls_down_msg {
	__le32 dead;
	__le32 ask;
	__le32 stage;
	__le32 table_slots;
	__le64 incarnation;
};

/*
 * A node declared down, in one cluster epoch, with one table (a node back
 * with a new table may be declared down again): the survivors that said
 * their users were told (@ready, a bit each), those that said their locks
 * of its names moved (@moved), and how far this node got; when no table
 * of it is known here (@incarnation 0), what the others said of its table
 * (@named).
 */
struct rdlock_ls_down {
	u32 epoch;
	u64 incarnation;
	u32 ready;
	u32 moved;
	enum rdlock_ls_down_stage stage;
	u64 released;		/* the table of the last one done, or 0 */
	struct rdlock_ls_named named;
};

static DEFINE_SPINLOCK(rdlock_ls_down_lock);	/* rdlock_ls_downs */
static struct rdlock_ls_down rdlock_ls_downs[RDLOCK_MAX_NODES];
static DECLARE_WAIT_QUEUE_HEAD(rdlock_ls_down_wq);
/* One node-down at a time: the lockspaces' users are told in order. */
static DEFINE_MUTEX(rdlock_ls_down_mutex);

/*
 * @dead's record in this epoch, for its table @inc (the one known here);
 * rdlock_ls_down_lock held. A record of another table is a declaration
 * done: it starts anew.
 */
static struct rdlock_ls_down *rdlock_ls_down_get(u32 dead, u64 inc)
{
	struct rdlock_ls_down *d = &rdlock_ls_downs[dead];
	u32 epoch = rdlock_xport_epoch();

	if (d->epoch != epoch) {
		memset(d, 0, sizeof(*d));
		d->epoch = epoch;
		d->incarnation = inc;
	} else if (d->incarnation != inc) {
		if (d->stage == RDLOCK_LS_DOWN_DONE)
			d->released = d->incarnation;
		d->incarnation = inc;
		d->ready = 0;
		d->moved = 0;
		d->stage = RDLOCK_LS_DOWN_NONE;
		d->named = (struct rdlock_ls_named){};
	}
	return d;
}

/* @dead's record for the table of it known here. */
static struct rdlock_ls_down *rdlock_ls_down_now(u32 dead)
{
	return rdlock_ls_down_get(dead, rdlock_xport_node_incarnation(dead));
}

static enum rdlock_ls_down_stage rdlock_ls_down_stage(u32 dead)
{
	enum rdlock_ls_down_stage stage;
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	stage = rdlock_ls_down_now(dead)->stage;
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	return stage;
}

static void rdlock_ls_down_set_stage(u32 dead, enum rdlock_ls_down_stage stage)
{
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	rdlock_ls_down_now(dead)->stage = stage;
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	wake_up_all(&rdlock_ls_down_wq);
}

/**
 * rdlock_ls_node_released() - is a node's declaration down done here
 * @node: a node.
 *
 * Return: true once rdlock_ls_node_down() of @node ended here in this
 * epoch: every survivor had moved its locks of @node's names
 * (rdlock_ls_rehome()) and told its users, and @node's holds left the
 * lock words kept here; and for a node declared down before this node's
 * table was made, or back with a new table since (rdlock_xport_node_released()).
 */
bool rdlock_ls_node_released(u32 node)
{
	return node < RDLOCK_MAX_NODES &&
	       (rdlock_xport_node_released(node) ||
		rdlock_ls_down_stage(node) == RDLOCK_LS_DOWN_DONE);
}

/*
 * Released, or no longer cut off (the cluster epoch ended), or @ls lost
 * with its epoch: a node whose declaration ended with the epoch may stay
 * cut off, not released, until the cluster restarts.
 */
static bool rdlock_ls_release_over(const struct rdlock_ls *ls, u32 node)
{
	return rdlock_ls_node_released(node) ||
	       !rdlock_xport_node_fenced(node) || (ls && rdlock_ls_stale(ls));
}

/**
 * rdlock_ls_release_wait() - wait until a node cut off here is released
 * @ls: the lockspace the caller waits for, NULL: none.
 * @node: a node cut off here (rdlock_xport_node_fenced()).
 * @deadline: jiffies, 0: none.
 *
 * Return: 0 once rdlock_ls_node_released(), or the node is no longer cut
 * off (the cluster epoch ended: the caller finds its lockspace lost);
 * -ESHUTDOWN once @ls is lost (rdlock_ls_stale()); -ETIMEDOUT at
 * @deadline; -EINTR on a fatal signal.
 */
int rdlock_ls_release_wait(const struct rdlock_ls *ls, u32 node,
			   unsigned long deadline)
{
	long left = MAX_SCHEDULE_TIMEOUT;

	if (deadline) {
		if (time_after_eq(jiffies, deadline) &&
		    !rdlock_ls_release_over(ls, node))
			return -ETIMEDOUT;
		left = max_t(long, (long)(deadline - jiffies), 0);
	}
	/* The epoch's end wakes nobody: look again every second. */
	while (!rdlock_ls_release_over(ls, node)) {
		if (wait_event_killable_timeout(rdlock_ls_down_wq,
						rdlock_ls_release_over(ls, node),
						min_t(long, left, HZ)) < 0)
			return -EINTR;
		if (left != MAX_SCHEDULE_TIMEOUT) {
			if (time_after_eq(jiffies, deadline) &&
			    !rdlock_ls_release_over(ls, node))
				return -ETIMEDOUT;
			left = max_t(long, (long)(deadline - jiffies), 0);
		}
	}
	return ls && rdlock_ls_stale(ls) ? -ESHUTDOWN : 0;
}

/*
 * @dead's declaration is done here: it is released in the transport, with
 * what every other survivor said of its table when none is known here
 * (each said it in its messages of both barriers).
 */
static void rdlock_ls_down_release(u32 dead)
{
	const struct rdlock_table_named *t = NULL;
	struct rdlock_ls_named named = {};
	struct rdlock_ls_down *d;
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	d = rdlock_ls_down_now(dead);
	if (!d->incarnation) {
		named = d->named;
		t = rdlock_ls_named_table(&named);
		/*
		 * The record is of the table the transport takes now: a
		 * survivor that missed this one's MOVED and asks again, for
		 * that table, is answered once it returned too (released, or
		 * DONE here), as by any other survivor.
		 */
		if (t && t->incarnation)
			d->incarnation = t->incarnation;
	}
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	rdlock_xport_release(dead, t);
}

/*
 * Tell @node that this node got to @stage in @dead's declaration, for the
 * table @inc: the one known here, or the one it asked for. The size goes
 * with a table known here.
 */
static int rdlock_ls_down_tell(u32 node, u32 dead, u64 inc,
			       enum rdlock_ls_down_stage stage, bool ask)
{
	struct rdlock_ls_down_msg m = {
		.dead = cpu_to_le32(dead),
		.ask = cpu_to_le32(ask),
		.stage = cpu_to_le32(stage),
		.incarnation = cpu_to_le64(inc),
	};
	struct rdlock_table_named t;

	rdlock_xport_node_table(dead, &t);
	if (inc && inc == t.incarnation)
		m.table_slots = cpu_to_le32(t.slots);
	return rdlock_xport_send_msg(node, RDLOCK_LS_DOWN_MSG_TYPE, &m,
				     sizeof(m));
}

void rdlock_ls_down_msg_handler(u32 src, const void *payload,
				size_t len)
{
	const struct rdlock_ls_down_msg *m = payload;
	enum rdlock_ls_down_stage stage = RDLOCK_LS_DOWN_TOLD;
	struct rdlock_ls_down *d;
	unsigned long flags;
	u64 inc, known;
	bool answer;
	u32 dead;

	if (len < offsetof(struct rdlock_ls_down_msg, stage) ||
	    src >= RDLOCK_MAX_NODES)
		return;
	dead = le32_to_cpu(m->dead);
	if (dead >= RDLOCK_MAX_NODES || dead == src)
		return;
	if (len >= offsetof(struct rdlock_ls_down_msg, table_slots) &&
	    le32_to_cpu(m->stage) == RDLOCK_LS_DOWN_MOVED)
		stage = RDLOCK_LS_DOWN_MOVED;
	known = rdlock_xport_node_incarnation(dead);
	inc = len >= sizeof(*m) ? le64_to_cpu(m->incarnation) : known;
	/* A node this one never knew as a member: declared here too? */
	if (m->ask)
		rdlock_member_heard_down(dead, src, inc);
	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	d = rdlock_ls_down_get(dead, known);
	/*
	 * Nothing of that table is here: its declaration was done here (the
	 * asker lags behind), or the node's was before this table was made.
	 */
	if ((inc && inc == d->released) ||
	    (rdlock_xport_node_cut(dead) && rdlock_xport_node_released(dead))) {
		spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
		if (m->ask)
			rdlock_ls_down_tell(src, dead, inc ?: known, stage,
					    false);
		return;
	}
	/*
	 * Counted for the declaration of the table known here: a survivor
	 * that knows another table of it never let this one in.
	 */
	d->ready |= BIT(src);
	if (stage == RDLOCK_LS_DOWN_MOVED)
		d->moved |= BIT(src);
	if (!known)
		rdlock_ls_named_add(&d->named, len >= sizeof(*m) ? inc :
				    RDLOCK_LS_NAMED_UNSAID,
				    le32_to_cpu(m->table_slots));
	answer = m->ask && d->stage >= stage;
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	/*
	 * It may have missed ours (a connection blip): say it again. For the
	 * table it asked for (it counts the answer for the table it knows:
	 * another would be one it released); for one that knows none, with
	 * the table known here.
	 */
	if (answer)
		rdlock_ls_down_tell(src, dead, inc ?: known, stage, false);
	wake_up_all(&rdlock_ls_down_wq);
}

/*
 * The survivors of @dead's declaration: configured, not cut off (returned
 * ones too), members of the cluster engine's last generation with
 * membership=dlm; this node is not counted.
 */
static u32 rdlock_ls_down_survivors(u32 dead)
{
	u32 self = rdlock_xport_self(), survivors = 0, i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (i != self && i != dead && rdlock_xport_node_configured(i) &&
		    !rdlock_xport_node_cut(i) && rdlock_member_survivor(i))
			survivors |= BIT(i);
	return survivors;
}

/* The survivors that have not said yet that they got to @stage for @dead. */
static u32 rdlock_ls_down_missing(u32 dead, enum rdlock_ls_down_stage stage)
{
	struct rdlock_ls_down *d;
	u32 missing = rdlock_ls_down_survivors(dead);
	unsigned long flags;

	spin_lock_irqsave(&rdlock_ls_down_lock, flags);
	d = rdlock_ls_down_now(dead);
	missing &= ~(stage == RDLOCK_LS_DOWN_MOVED ? d->moved : d->ready);
	spin_unlock_irqrestore(&rdlock_ls_down_lock, flags);
	return missing;
}

/* How often a survivor that has not answered is asked again. */
#define RDLOCK_LS_DOWN_ASK_MS	1000
/* A wait that long for the survivors is logged, once. */
#define RDLOCK_LS_DOWN_WARN_MS	10000

/*
 * Wait until every survivor got to @stage for @dead: TOLD, its users were
 * told and it cut @dead off (only then may any lock of @dead's names
 * move); MOVED, its locks of @dead's names moved (only then may anybody
 * else be granted them, or any of @dead's locks be granted elsewhere).
 * Asks the missing ones every second: a node declared down meanwhile
 * drops out of the set. Tells the ones already there once, on arrival.
 */
static int rdlock_ls_down_barrier(u32 dead, u32 epoch,
				  enum rdlock_ls_down_stage stage)
{
	unsigned long start = jiffies;
	bool warned = false;
	u32 missing, ahead, i;
	u64 inc;

	/*
	 * A survivor that got here first asked, unanswered while this node
	 * was behind, and counts this one as missing until its next ask a
	 * second later: tell it now.
	 */
	ahead = rdlock_xport_epoch() != epoch ? 0 :
		rdlock_ls_down_survivors(dead) &
		~rdlock_ls_down_missing(dead, stage);
	inc = rdlock_xport_node_incarnation(dead);
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (ahead & BIT(i))
			rdlock_ls_down_tell(i, dead, inc, stage, false);
	for (;;) {
		missing = rdlock_ls_down_missing(dead, stage);
		if (!missing)
			return 0;
		if (rdlock_xport_epoch() != epoch)
			return -ESHUTDOWN;
		inc = rdlock_xport_node_incarnation(dead);
		for (i = 0; i < RDLOCK_MAX_NODES; i++)
			if (missing & BIT(i))
				rdlock_ls_down_tell(i, dead, inc, stage, true);
		if (!warned && time_after(jiffies, start +
				msecs_to_jiffies(RDLOCK_LS_DOWN_WARN_MS))) {
			pr_warn("node %u down: waiting for nodes %#x to get as far (%s)\n",
				dead, missing,
				stage == RDLOCK_LS_DOWN_MOVED ? "moved" : "told");
			warned = true;
		}
		if (wait_event_killable_timeout(rdlock_ls_down_wq,
						!rdlock_ls_down_missing(dead,
									stage),
						msecs_to_jiffies(RDLOCK_LS_DOWN_ASK_MS)) < 0)
			return -EINTR;
	}
}

struct rdlock_ls_forget {
	struct rdlock_ls *ls;
	u32 lvb_slot;
};

/*
 * The dead node held the name exclusive: its value block may be stale or
 * half written. It keeps its bytes and its name's tag, and loses the
 * user's flags (a DLM's VALID), as after a failed store.
 */
static int rdlock_ls_forget_lvb(void *arg)
{
	struct rdlock_ls_forget *f = arg;
	u32 self = rdlock_xport_self();
	u64 state, old;
	int ret;

	ret = rdlock_ls_op(f->ls, self, RDLOCK_XOP_READ, f->lvb_slot, 0, 0,
			   &state);
	if (ret || !(state & RDLOCK_LVB_FLAGS_MASK))
		return ret;
	ret = rdlock_ls_op(f->ls, self, RDLOCK_XOP_WRITE, f->lvb_slot,
			   state & ~(u64)RDLOCK_LVB_FLAGS_MASK, 0, &old);
	if (!ret)
		atomic64_inc(&f->ls->down_lvbs);
	return ret;
}

/*
 * Take @dead's holds out of the lock words in this node's region of @ls
 * (its entries and, placed, the locks it keeps for other homes' entries):
 * each word's home does it for its own, with no remote operation.
 */
static int rdlock_ls_forget_node(struct rdlock_ls *ls, u32 dead)
{
	u32 es = rdlock_ls_entry_slots(&ls->attr), self = rdlock_xport_self();
	u32 words = ls->attr.flags & RDLOCK_LS_GATE ? 2 : 1;
	/* Entries whose lock words one READ_RANGE reaches: at least one. */
	u32 per = 1 + (RDLOCK_XPORT_RANGE_MAX - words) / es;
	u32 end = ls->base + ls->attr.slots, slot, n, k, i;
	struct rdlock_ticket t = {
		.node = self,
		.incarnation = ls->incarnation[self],
	};
	struct rdlock_ls_forget f = { .ls = ls };
	u64 w[RDLOCK_XPORT_RANGE_MAX];
	int read, ret, err = 0;

	/* A node back with a new table keeps no lock word of anybody's. */
	if (!ls->ops->forget_node || rdlock_ls_stale(ls) ||
	    rdlock_xport_node_fenced(self))
		return 0;
	/* An entry that fails is left for the next call; the others go on. */
	for (slot = ls->base; slot + es <= end; slot += n * es) {
		n = min(per, (end - slot) / es);
		read = rdlock_ls_read_range(ls, self, slot + 1,
					    (n - 1) * es + words, w);
		for (k = 0; k < n; k++) {
			f.lvb_slot = rdlock_lvb_state_slot(ls,
							   slot + k * es + 1);
			for (i = 0, ret = read; !ret && i < words; i++) {
				if (rdlock_ls_word_idle(ls, w[k * es + i]))
					continue;
				t.slot = slot + k * es + 1 + i;
				ret = ls->ops->forget_node(&ls->cfg, &t, dead,
					!i && ls->attr.flags & RDLOCK_LS_LVB ?
					rdlock_ls_forget_lvb : NULL, &f);
				if (ret > 0) {
					atomic64_inc(&ls->down_words);
					ret = 0;
				}
			}
			if (ret && !err)
				err = ret;
		}
		cond_resched();
	}
	if (err)
		pr_warn_ratelimited("lockspace %s: could not release node %u's locks: %d\n",
				    ls->name, dead, err);
	return err;
}

/* Passes of rdlock_ls_for_each() ended, and a wait for the next end. */
static atomic_t rdlock_ls_walks_ended = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(rdlock_ls_walk_wq);

/**
 * rdlock_ls_walked_locked() - does a pass of rdlock_ls_for_each() hold it
 * @name: a removed lockspace of that name; NULL: any lockspace.
 *
 * Caller holds rdlock_ls_mutex.
 */
bool rdlock_ls_walked_locked(const char *name)
{
	struct rdlock_ls *ls;

	lockdep_assert_held(&rdlock_ls_mutex);
	list_for_each_entry(ls, &rdlock_ls_list, list)
		if (ls->walkers &&
		    (!name || (!strcmp(ls->name, name) && !ls->created)))
			return true;
	return false;
}

static bool rdlock_ls_walked(const char *name)
{
	bool walked;

	mutex_lock(&rdlock_ls_mutex);
	walked = rdlock_ls_walked_locked(name);
	mutex_unlock(&rdlock_ls_mutex);
	return walked;
}

/**
 * rdlock_ls_walk_wait() - wait until no pass holds a lockspace
 * @name: a lockspace whose creation rdlock_ls_remove() dropped while a
 *	pass of rdlock_ls_for_each() held it: it is freed, and off the list
 *	that the cluster's DOWN checks, once the pass lets go. NULL: any
 *	lockspace (module exit).
 *
 * Return: 0, or -ERESTARTSYS on a fatal signal.
 */
int rdlock_ls_walk_wait(const char *name)
{
	int seq, ret;

	for (;;) {
		/* Read before the check: an end in between is seen. */
		seq = atomic_read(&rdlock_ls_walks_ended);
		if (!rdlock_ls_walked(name))
			return 0;
		ret = wait_event_killable(rdlock_ls_walk_wq,
					  atomic_read(&rdlock_ls_walks_ended) !=
					  seq);
		if (ret)
			return ret;
	}
}

/**
 * rdlock_ls_for_each() - call a function on every lockspace open here
 * @fn: called with each lockspace, held open meanwhile (sleeps allowed;
 *	its creation may be removed meanwhile: struct rdlock_ls, walkers).
 * @dead: passed to @fn.
 *
 * Return: 0, the first error of @fn (every lockspace is still visited),
 * or -ENOMEM (none is).
 */
int rdlock_ls_for_each(int (*fn)(struct rdlock_ls *ls, u32 dead), u32 dead)
{
	struct rdlock_ls **lss, *ls;
	unsigned int n = 0, i;
	int ret = 0, err;

	mutex_lock(&rdlock_ls_mutex);
	list_for_each_entry(ls, &rdlock_ls_list, list)
		n++;
	lss = kcalloc(max(n, 1U), sizeof(*lss), GFP_KERNEL);
	if (!lss) {
		mutex_unlock(&rdlock_ls_mutex);
		return -ENOMEM;
	}
	n = 0;
	list_for_each_entry(ls, &rdlock_ls_list, list) {
		ls->users++;
		ls->walkers++;
		lss[n++] = ls;
	}
	mutex_unlock(&rdlock_ls_mutex);
	rdlock_ls_fault_walk();
	for (i = 0; i < n; i++) {
		err = fn(lss[i], dead);
		if (err && !ret)
			ret = err;
	}
	mutex_lock(&rdlock_ls_mutex);
	for (i = 0; i < n; i++) {
		lss[i]->walkers--;
		rdlock_ls_put_locked(lss[i]);
	}
	mutex_unlock(&rdlock_ls_mutex);
	atomic_inc(&rdlock_ls_walks_ended);
	wake_up_all(&rdlock_ls_walk_wq);
	kfree(lss);
	return ret;
}

/*
 * Returned nodes @took took over the lock tables of the epoch
 * (rdlock_xport_hand_over()): @ls's operations reach their new tables.
 * A lockspace opened since they returned has those already.
 */
static int rdlock_ls_take_hosts(struct rdlock_ls *ls, u32 took)
{
	u32 i, node;
	u64 inc;

	for (i = 0; i < ls->nr_nodes; i++) {
		node = ls->nodes[i];
		inc = rdlock_xport_node_incarnation(node);
		if (!(took & BIT(node)) || !inc)
			continue;
		if (rdlock_xport_node_slots(node) < ls->base + ls->attr.slots)
			pr_warn("lockspace %s: node %u's lock table (%u slots) is too small for it (slots %u to %u) after the handover: every node needs the same table_slots\n",
				ls->name, node, rdlock_xport_node_slots(node),
				ls->base, ls->base + ls->attr.slots - 1);
		WRITE_ONCE(ls->incarnation[node], inc);
	}
	return 0;
}

/**
 * rdlock_ls_take_over() - returned nodes keep the lockspaces from now on
 * @took: the nodes that took over here (rdlock_xport_hand_over()), by bit.
 *
 * Called by the membership before the declarations that hand names over.
 *
 * Return: 0, or -ENOMEM: no lockspace was visited (call again).
 */
int rdlock_ls_take_over(u32 took)
{
	/* rdlock_ls_for_each()'s node argument carries the set. */
	return rdlock_ls_for_each(rdlock_ls_take_hosts, took);
}

/**
 * rdlock_ls_node_down() - a node failed: cut it off, tell, release its locks
 * @node: the node, configured and not this one.
 *
 * To be called on every survivor (as fs/dlm's membership daemon does on
 * every node), for a node known dead or fenced. In order:
 *
 * 1. the transport cuts @node off this node's table for the rest of the
 *    cluster epoch (rdlock_xport_fence());
 * 2. every lockspace user's down callback runs (the DLM's node_down);
 * 3. this node waits until every other survivor got as far (a barrier of
 *    messages), so no survivor is granted anything of @node's before its
 *    own users were told, and every survivor cut @node off;
 * 4. this node's granted locks of the names whose entry or lock word was
 *    on @node move with their names (rdlock_ls_rehome()), and it waits
 *    until every other survivor's did (a second barrier): only then is
 *    anybody else granted such a name (rdlock_res_wait_moved());
 * 5. @node's holds and queued tickets leave the lock words homed here, in
 *    every lockspace open here, by its protocol's forget_node (the CAS
 *    spinlock's and the DLM's at once; the bakery's census and CQL's
 *    reset in the background); a name it held exclusive keeps its value
 *    block without flags.
 *
 * Its holds in regions of lockspaces not open here stay. Sleeps; an
 * interrupted call is resumed by the next one.
 *
 * Return: 0; -EINVAL for a node not configured or this one; -EALREADY when
 * @node was declared down here in this epoch already; -ENOTCONN (cluster
 * not up); -EINTR (fatal signal: call again); -ESHUTDOWN (the epoch ended:
 * every lockspace is lost anyway); an error from the move or the release
 * (-ENOMEM, or the transport's), after which @node is cut off and its
 * users were told, and the next call moves or releases what is left.
 */
int rdlock_ls_node_down(u32 node)
{
	u32 epoch = rdlock_xport_epoch();
	enum rdlock_ls_down_stage stage;
	/* When each step ended, for the log: 0 = the start. */
	ktime_t at[6];
	unsigned int s;
	int ret;

	if (node >= RDLOCK_MAX_NODES || node == rdlock_xport_self() ||
	    !rdlock_xport_node_configured(node))
		return -EINVAL;
	ret = mutex_lock_killable(&rdlock_ls_down_mutex);
	if (ret)
		return ret;
	at[0] = ktime_get();
	stage = rdlock_ls_down_stage(node);
	/* Done, or declared down before this node's table was made. */
	if (stage == RDLOCK_LS_DOWN_DONE ||
	    (rdlock_xport_node_cut(node) && rdlock_xport_node_released(node))) {
		ret = -EALREADY;
		goto out;
	}
	if (stage == RDLOCK_LS_DOWN_NONE) {
		/* -EALREADY: cut off already (the membership's first step). */
		ret = rdlock_xport_fence(node);
		if (ret && ret != -ETIMEDOUT && ret != -EALREADY)
			goto out;
		/* No claim of its directory writes copies after the barrier. */
		rdlock_ls_dir_claims_wait();
		rdlock_ls_call_down(node);
		stage = RDLOCK_LS_DOWN_TOLD;
		rdlock_ls_down_set_stage(node, stage);
	}
	at[1] = ktime_get();
	ret = rdlock_ls_down_barrier(node, epoch, RDLOCK_LS_DOWN_TOLD);
	if (ret)
		goto out;
	at[2] = ktime_get();
	/* From now on a bakery census does not ask it (cut off everywhere). */
	rdlock_proto_node_released(node);
	if (stage == RDLOCK_LS_DOWN_TOLD) {
		/* Returned nodes took over: their directory first. */
		if (rdlock_xport_handover() & BIT(node))
			ret = rdlock_ls_for_each(rdlock_ls_dir_rebuild, node);
		/* Failed: the next call moves what is left. */
		ret = ret ?: rdlock_ls_rehome(node);
		if (ret)
			goto out;
		rdlock_ls_down_set_stage(node, RDLOCK_LS_DOWN_MOVED);
	}
	at[3] = ktime_get();
	ret = rdlock_ls_down_barrier(node, epoch, RDLOCK_LS_DOWN_MOVED);
	if (ret)
		goto out;
	at[4] = ktime_get();
	/* Failed: it stays moved, and the next call releases what is left. */
	ret = rdlock_ls_fault_down() ?:
	      rdlock_ls_for_each(rdlock_ls_forget_node, node);
	if (ret)
		goto out;
	rdlock_ls_down_set_stage(node, RDLOCK_LS_DOWN_DONE);
	/* A new table of it may return now (it keeps no lockspace). */
	rdlock_ls_down_release(node);
	at[5] = ktime_get();
	/* Each step's milliseconds: 0 each for steps an earlier call ran. */
	for (s = 5; s > 0; s--)
		at[s] = ktime_sub(at[s], at[s - 1]);
	pr_info("node %u declared down: its locks homed here are released (%lld ms: cut off and told %lld, barrier %lld, moves %lld, barrier %lld, release %lld)\n",
		node, ktime_ms_delta(ktime_get(), at[0]), ktime_to_ms(at[1]),
		ktime_to_ms(at[2]), ktime_to_ms(at[3]), ktime_to_ms(at[4]),
		ktime_to_ms(at[5]));
out:
	mutex_unlock(&rdlock_ls_down_mutex);
	return ret;
}
