// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated cluster of the protocol KUnit suites (proto_sim.h): its
 * transport (operations, their faults and latencies, posted operations,
 * messages), its nodes' configuration, and a cluster freed with the test.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>

#include "tests/proto_sim.h"

/* An operation posted by @src (sim_post()), until completed. */
struct sim_posted {
	struct list_head list;
	struct sim_node *src;
	enum rdlock_xop op;
	u32 node;
	u64 incarnation;
	u32 slot;
	u64 arg0;
	u64 arg1;
	rdlock_xport_done_t done;
	void *ctx;
	bool executed;
	int ret;
	u64 value;
};

/*
 * A delay of up to @us: the guest has one CPU and no preemption, a thread
 * runs until it sleeps or schedules. Mostly, let the other runnable
 * threads go first, which reorders them; one delay in 64 sleeps, till the
 * next timer tick, so that a thread also falls far behind at times.
 */
static void sim_pause(u32 us)
{
	u32 r = get_random_u32();

	if (!(r & 63)) {
		r = (r >> 6) % us + 1;
		usleep_range(r, r + 10);
	} else {
		schedule();
	}
}

/* One operation in four is delayed; the others only yield if due. */
void sim_delay(struct proto_sim *sim)
{
	if (sim->delay_us && !get_random_u32_below(4))
		sim_pause(sim->delay_us);
	else
		cond_resched();
}

/* An injected failure, at @pct percent; counted. */
static bool sim_fails(struct proto_sim *sim, u32 pct)
{
	if (!pct || get_random_u32_below(100) >= pct)
		return false;
	atomic64_inc(&sim->xfails);
	return true;
}

/*
 * Take sim->lock if @node still has table @incarnation (0: any): as the
 * transport, only a connection to that table reaches it.
 */
static bool sim_lock_table(struct proto_sim *sim, u32 node, u64 incarnation)
{
	spin_lock(&sim->lock);
	if (incarnation && incarnation != sim->incarnation[node]) {
		spin_unlock(&sim->lock);
		return false;
	}
	return true;
}

/*
 * A FAA on the lock's CQL header from @old: did it carry qhead out of the
 * all-ones lap? Only a dequeue moves qhead, and only that wrap lowers its
 * lap (a dequeue on a reset header borrows qhead's own increment back).
 * Not under a claimed reset, which voids every position. Under sim->lock.
 */
static void sim_note_faa(struct proto_sim *sim, u32 node, u32 slot, u64 old,
			 u64 delta)
{
	const struct cql_layout *l = &sim->cql;

	if (sim->cql_on && node == SIM_LOCK_NODE && slot == SIM_LOCK_SLOT &&
	    !cql_hdr_resetting(old) &&
	    cql_pos_version(l, cql_hdr_qhead(l, old + delta)) <
	    cql_pos_version(l, cql_hdr_qhead(l, old)))
		atomic64_inc(&sim->unreset_wraps);
}

/*
 * After an operation, under sim->lock: a change of the table starts a new
 * generation, and the caller's last one is what sim_sleep() waits past.
 * Return: @changed, for the caller to wake the sleepers once unlocked.
 */
static bool sim_note_op(struct proto_sim *sim, bool changed)
{
	struct sim_seen *seen = &sim->seen[hash_ptr(current, SIM_SEEN_BITS)];

	if (changed)
		WRITE_ONCE(sim->gen, sim->gen + 1);
	seen->task = current;
	seen->gen = sim->gen;
	return changed;
}

/* A READ of a node whose READs are held waits until they are let go. */
static void sim_read_wait(struct proto_sim *sim, struct sim_node *n)
{
	u32 self = n - sim->nodes + 1;

	wait_event(sim->hold_wq, READ_ONCE(sim->read_hold) != self);
}

/* Execute @op on the table, atomically as the home does. */
static int sim_apply(struct proto_sim *sim, enum rdlock_xop op, u32 node,
		     u64 incarnation, u32 slot, u64 arg0, u64 arg1, u64 *value)
{
	u64 *w = &sim->table[node][slot], v;
	bool changed;

	if (!sim_lock_table(sim, node, incarnation))
		return -ESTALE;
	v = *w;
	switch (op) {
	case RDLOCK_XOP_READ:
		break;
	case RDLOCK_XOP_WRITE:
		*w = arg0;
		break;
	case RDLOCK_XOP_FAA:
		*w = v + arg0;
		sim_note_faa(sim, node, slot, v, arg0);
		break;
	case RDLOCK_XOP_CAS:
		if (v == arg0)
			*w = arg1;
		if (v == arg0 && node == SIM_LOCK_NODE &&
		    slot == SIM_LOCK_SLOT && cql_hdr_resetting(v) &&
		    arg1 == CQL_HDR_INIT)
			atomic64_inc(&sim->resets_done);
		break;
	default:
		spin_unlock(&sim->lock);
		return -EOPNOTSUPP;
	}
	changed = sim_note_op(sim, *w != v);
	spin_unlock(&sim->lock);
	if (changed)
		wake_up_all(&sim->changed);
	*value = v;
	return 0;
}

/* Execute posted @p, with its injected failure; under post_mutex. */
static void sim_post_exec(struct proto_sim *sim, struct sim_posted *p)
{
	p->executed = true;
	if (sim_fails(sim, sim->post_fail_pct)) {
		p->ret = -ENOTCONN;
		return;
	}
	p->ret = sim_apply(sim, p->op, p->node, p->incarnation, p->slot,
			   p->arg0, p->arg1, &p->value);
	if (!p->ret && sim_fails(sim, sim->post_reset_pct))
		p->ret = -ECONNRESET;
}

/*
 * Before an operation of @src on @node, or before @upto (NULL: none)
 * completes: execute what @src posted to @node before it, in order, as the
 * queue pair's responder does.
 */
static void sim_posts_run(struct proto_sim *sim, struct sim_node *src,
			  u32 node, struct sim_posted *upto)
{
	struct sim_posted *p;

	mutex_lock(&sim->post_mutex);
	list_for_each_entry(p, &sim->posted, list) {
		if (p->src == src && p->node == node && !p->executed)
			sim_post_exec(sim, p);
		if (p == upto)
			break;
	}
	mutex_unlock(&sim->post_mutex);
}

static int sim_exec(void *priv, enum rdlock_xop op, u32 node,
		    u64 incarnation, u32 slot, u64 arg0, u64 arg1, u64 *value)
{
	struct sim_node *n = priv;
	struct proto_sim *sim = n->sim;
	u64 v;
	int ret;

	if (node >= SIM_NODES || slot >= ARRAY_SIZE(sim->table[0]))
		return -EINVAL;
	if (op == RDLOCK_XOP_READ)
		sim_read_wait(sim, n);
	sim_posts_run(sim, n, node, NULL);
	sim_delay(sim);
	if (op == RDLOCK_XOP_READ && sim_fails(sim, sim->read_fail_pct))
		return -ECONNRESET;
	if ((op == RDLOCK_XOP_FAA || op == RDLOCK_XOP_CAS) &&
	    sim_fails(sim, sim->op_fail_pct))
		return -ENOTCONN;
	if ((op == RDLOCK_XOP_FAA || op == RDLOCK_XOP_CAS) &&
	    (sim_fails(sim, sim->lose_pct) ||
	     atomic_dec_if_positive(&sim->lose_next) >= 0))
		return -ECONNRESET;
	ret = sim_apply(sim, op, node, incarnation, slot, arg0, arg1, &v);
	if (ret)
		return ret;
	sim_delay(sim);
	if ((op == RDLOCK_XOP_FAA || op == RDLOCK_XOP_CAS) &&
	    (sim_fails(sim, sim->exec_reset_pct) ||
	     atomic_dec_if_positive(&sim->reset_next) >= 0))
		return -ECONNRESET;
	if (value)
		*value = v;
	return 0;
}

/*
 * A posted operation: refused unsent as a FAA or CAS is (@op_fail_pct);
 * else queued, executed in order with this node's later operations on
 * @node, and completed by sim_post_work() in a random order.
 */
static int sim_post(void *priv, enum rdlock_xop op, u32 node,
		    u64 incarnation, u32 slot, u64 arg0, u64 arg1,
		    rdlock_xport_done_t done, void *ctx)
{
	struct sim_node *n = priv;
	struct proto_sim *sim = n->sim;
	struct sim_posted *p;

	if (node >= SIM_NODES || slot >= ARRAY_SIZE(sim->table[0]) ||
	    (op != RDLOCK_XOP_WRITE && op != RDLOCK_XOP_FAA &&
	     op != RDLOCK_XOP_CAS) || !incarnation)
		return -EINVAL;
	if (sim_fails(sim, sim->op_fail_pct))
		return -ENOTCONN;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->src = n;
	p->op = op;
	p->node = node;
	p->incarnation = incarnation;
	p->slot = slot;
	p->arg0 = arg0;
	p->arg1 = arg1;
	p->done = done;
	p->ctx = ctx;
	mutex_lock(&sim->post_mutex);
	list_add_tail(&p->list, &sim->posted);
	mutex_unlock(&sim->post_mutex);
	atomic64_inc(&sim->posts);
	if (!READ_ONCE(sim->post_hold))
		queue_work(system_unbound_wq, &sim->post_work);
	return 0;
}

static void sim_post_work(struct work_struct *work)
{
	struct proto_sim *sim = container_of(work, struct proto_sim,
					     post_work);
	struct sim_posted *p;
	u32 i;

	for (;;) {
		mutex_lock(&sim->post_mutex);
		if (READ_ONCE(sim->post_hold) || list_empty(&sim->posted)) {
			mutex_unlock(&sim->post_mutex);
			return;
		}
		/* One of the first four: completions come in any order. */
		i = get_random_u32_below(4);
		list_for_each_entry(p, &sim->posted, list)
			if (!i-- || list_is_last(&p->list, &sim->posted))
				break;
		mutex_unlock(&sim->post_mutex);
		sim_posts_run(sim, p->src, p->node, p);
		mutex_lock(&sim->post_mutex);
		list_del(&p->list);
		mutex_unlock(&sim->post_mutex);
		if (sim->delay_us)
			sim_pause(sim->delay_us);
		local_bh_disable();
		p->done(p->ctx, p->ret, p->value);
		local_bh_enable();
		kfree(p);
	}
}

/*
 * READ_RANGE, FAA_READ and CAS_READ, with the faults of the operations
 * they are made of: a READ_RANGE fails as a READ does, unexecuted; a
 * FAA_READ is refused unsent as a FAA is, a CAS_READ fails as a CAS does
 * (unsent, lost, or executed with its answer lost); or the READ fails
 * after the atomic was done, which the real transport tells by returning
 * fewer slots (none).
 */
static int sim_exec_range(void *priv, enum rdlock_xop op, u32 node,
			  u64 incarnation, u32 slot, u64 arg0, u64 arg1,
			  u32 rslot, u32 count, u64 *value, u64 *vals)
{
	struct sim_node *n = priv;
	struct proto_sim *sim = n->sim;
	bool cas = op == RDLOCK_XOP_CAS_READ;
	bool atomic = cas || op == RDLOCK_XOP_FAA_READ, read_fails, changed;
	u32 first = atomic ? rslot : slot, i;
	u64 *w, v;

	if (node >= SIM_NODES || (!atomic && op != RDLOCK_XOP_READ_RANGE) ||
	    !count || count + atomic > (cas ? RDLOCK_XPORT_RANGE_MAX :
					      RDLOCK_XPORT_READ_MAX) ||
	    slot >= SIM_SLOTS || first >= SIM_SLOTS ||
	    count > SIM_SLOTS - first)
		return -EINVAL;
	if (!atomic)
		sim_read_wait(sim, n);
	sim_posts_run(sim, n, node, NULL);
	sim_delay(sim);
	if (!atomic && sim_fails(sim, sim->read_fail_pct))
		return -ECONNRESET;
	if (atomic && sim_fails(sim, sim->op_fail_pct))
		return -ENOTCONN;
	if (cas && (sim_fails(sim, sim->lose_pct) ||
		    atomic_dec_if_positive(&sim->lose_next) >= 0))
		return -ECONNRESET;
	read_fails = atomic && sim_fails(sim, sim->read_fail_pct);
	if (!sim_lock_table(sim, node, incarnation))
		return -ESTALE;
	w = &sim->table[node][slot];
	v = *w;
	if (op == RDLOCK_XOP_FAA_READ) {
		*w += arg0;
		sim_note_faa(sim, node, slot, v, arg0);
	} else if (cas && v == arg0) {
		*w = arg1;
	}
	for (i = 0; i < count; i++)
		vals[i] = sim->table[node][first + i];
	changed = sim_note_op(sim, *w != v);
	spin_unlock(&sim->lock);
	if (changed)
		wake_up_all(&sim->changed);
	sim_delay(sim);
	if (cas && (sim_fails(sim, sim->exec_reset_pct) ||
		    atomic_dec_if_positive(&sim->reset_next) >= 0))
		return -ECONNRESET;
	if (atomic)
		*value = v;
	return read_fails ? 0 : count;
}

static ktime_t sim_now(void *priv)
{
	struct sim_node *n = priv;

	return ktime_add_ns(ktime_get(), atomic64_read(&n->sim->ahead_ns) -
			    atomic64_read(&n->hidden_ns));
}

/*
 * A poll or a back-off waits for other threads to change the table, not
 * for the clock (a real sleep would last a tick): sleep until an operation
 * changes it after the caller's last one, or for one tick at most, which
 * a waiter for a lease's end or a deadline needs.
 */
static void sim_sleep(void *priv, u64 ns)
{
	struct proto_sim *sim = ((struct sim_node *)priv)->sim;
	u32 i = hash_ptr(current, SIM_SEEN_BITS), gen;

	spin_lock(&sim->lock);
	gen = sim->seen[i].task == current ? sim->seen[i].gen : sim->gen;
	spin_unlock(&sim->lock);
	wait_event_timeout(sim->changed, READ_ONCE(sim->gen) != gen, 1);
}

static u64 sim_incarnation(void *priv, u32 node)
{
	struct sim_node *n = priv;
	u64 inc;

	if (node >= SIM_NODES)
		return 0;
	spin_lock(&n->sim->lock);
	inc = n->sim->incarnation[node];
	spin_unlock(&n->sim->lock);
	return inc;
}

static int sim_send_msg(void *priv, u32 node, unsigned int type,
			const void *payload, size_t len)
{
	struct sim_node *n = priv;
	struct proto_sim *sim = n->sim;
	struct sim_msg *m;

	if (node >= SIM_NODES || len > RDLOCK_XMSG_PAYLOAD)
		return -EINVAL;
	if (READ_ONCE(sim->cut[node]) || READ_ONCE(sim->cut[n - sim->nodes]))
		return -ENOTCONN;
	/* Answers to reset signals are sent with BHs off. */
	m = kzalloc(sizeof(*m), GFP_ATOMIC);
	if (!m)
		return -EAGAIN;
	m->src = n - sim->nodes;
	m->dst = node;
	m->type = type;
	m->len = len;
	memcpy(m->payload, payload, len);
	spin_lock_bh(&sim->msg_lock);
	list_add_tail(&m->list, &sim->msgs);
	memcpy(sim->last_msg[m->src][node].payload, payload, len);
	sim->last_msg[m->src][node].type = type;
	sim->last_msg[m->src][node].len = len;
	spin_unlock_bh(&sim->msg_lock);
	atomic64_inc(&sim->msgs_sent);
	queue_work(system_unbound_wq, &sim->msg_work);
	return 0;
}

/*
 * The last message @src sent to @dst delivered once more, after those in
 * flight: a copy that came late, as one of a message sent again can
 * across connections, which are ordered each but not with each other.
 */
void sim_replay(struct proto_sim *sim, u32 src, u32 dst)
{
	struct sim_msg *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (!m)
		return;
	spin_lock_bh(&sim->msg_lock);
	*m = sim->last_msg[src][dst];
	m->src = src;
	m->dst = dst;
	list_add_tail(&m->list, &sim->msgs);
	spin_unlock_bh(&sim->msg_lock);
	queue_work(system_unbound_wq, &sim->msg_work);
}

static const struct rdlock_proto_xport sim_xport;

static void sim_msg_work(struct work_struct *work)
{
	struct proto_sim *sim = container_of(work, struct proto_sim, msg_work);
	struct sim_msg *m;

	for (;;) {
		spin_lock_bh(&sim->msg_lock);
		m = list_first_entry_or_null(&sim->msgs, struct sim_msg, list);
		if (m)
			list_del(&m->list);
		spin_unlock_bh(&sim->msg_lock);
		if (!m)
			return;
		if (READ_ONCE(sim->msg_delay_us))
			sim_pause(sim->msg_delay_us);
		local_bh_disable();
		if (m->type == RDLOCK_MSG_BAKERY)
			rdlock_bakery_deliver(&sim_xport, &sim->nodes[m->dst],
					      m->src, m->payload, m->len);
		else
			rdlock_cql_deliver(&sim->nodes[m->dst].waiters, m->src,
					   m->payload, m->len);
		local_bh_enable();
		kfree(m);
	}
}

static u32 sim_self(void *priv)
{
	struct sim_node *n = priv;

	return n - n->sim->nodes;
}

static struct rdlock_cql_waiters *sim_waiters(void *priv)
{
	struct sim_node *n = priv;

	return &n->waiters;
}

void sim_node_init(struct proto_sim *sim, int i)
{
	sim->nodes[i].sim = sim;
	sim->incarnation[i] = SIM_INCARNATION;
	rdlock_cql_waiters_init(&sim->nodes[i].waiters);
	/* Its answers to reset signals go through the simulation too. */
	sim->nodes[i].waiters.xport = &sim_xport;
	sim->nodes[i].waiters.xport_priv = &sim->nodes[i];
	if (!i) {
		init_waitqueue_head(&sim->changed);
		init_waitqueue_head(&sim->hold_wq);
		spin_lock_init(&sim->msg_lock);
		INIT_LIST_HEAD(&sim->msgs);
		INIT_WORK(&sim->msg_work, sim_msg_work);
		mutex_init(&sim->post_mutex);
		INIT_LIST_HEAD(&sim->posted);
		INIT_WORK(&sim->post_work, sim_post_work);
	}
}

/* Posted operations, background tickets, then the notifications sent. */
void sim_flush(struct proto_sim *sim)
{
	WRITE_ONCE(sim->post_hold, false);
	queue_work(system_unbound_wq, &sim->post_work);
	rdlock_proto_flush();
	flush_work(&sim->post_work);
	flush_work(&sim->msg_work);
}

bool sim_resets_parked(u32 n)
{
	unsigned long until = jiffies + 10 * HZ;
	u32 live, parked;

	do {
		live = rdlock_proto_resetting(&parked);
		if (live == n && parked == n)
			return true;
		usleep_range(200, 400);
	} while (time_before(jiffies, until));
	return false;
}

void sim_destroy(struct proto_sim *sim)
{
	int i;

	sim_flush(sim);
	for (i = 0; i < SIM_NODES; i++)
		rdlock_cql_waiters_destroy(&sim->nodes[i].waiters);
}

static bool sim_node_down(void *priv, u32 node)
{
	struct sim_node *n = priv;

	return node < SIM_NODES && READ_ONCE(n->sim->down[node]);
}

static const struct rdlock_proto_xport sim_xport = {
	.exec		= sim_exec,
	.exec_range	= sim_exec_range,
	.now		= sim_now,
	.incarnation	= sim_incarnation,
	.send_msg	= sim_send_msg,
	.self		= sim_self,
	.waiters	= sim_waiters,
	.sleep		= sim_sleep,
	.post		= sim_post,
	.node_down	= sim_node_down,
};

void sim_cfg(struct rdlock_proto_cfg *cfg, const struct sim_params *p,
	     struct sim_node *node, struct rdlock_proto_stats *stats)
{
	cfg->lease_ms = p->lease_ms;
	cfg->omega_us = 20;
	cfg->update_word = p->update_word;
	cfg->stats = stats;
	cfg->xport = &sim_xport;
	cfg->xport_priv = node;
	cfg->cql_cap_bits = p->cql_cap_bits;
	cfg->cql_ver_bits = p->cql_ver_bits;
	cfg->nodes = SIM_NODES;
	cfg->cql_policy = p->cql_policy;
}

struct rdlock_proto_cfg *sim_cfg_new(struct kunit *test, struct proto_sim *sim,
				     const struct sim_params *p, int node,
				     struct rdlock_proto_stats *stats)
{
	struct rdlock_proto_cfg *cfg = kunit_kzalloc(test, sizeof(*cfg),
						     GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cfg);
	sim_cfg(cfg, p, &sim->nodes[node], stats);
	return cfg;
}

/* The lock word, at SIM_LOCK_NODE and SIM_LOCK_SLOT. */
u64 cql_header(struct proto_sim *sim)
{
	u64 h;

	spin_lock(&sim->lock);
	h = sim->table[SIM_LOCK_NODE][SIM_LOCK_SLOT];
	spin_unlock(&sim->lock);
	return h;
}

/* A simulated cluster with empty tables, freed with the test. */
struct proto_sim *sim_alloc(struct kunit *test)
{
	struct proto_sim *sim = kunit_kzalloc(test, sizeof(*sim), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sim);
	spin_lock_init(&sim->lock);
	for (i = 0; i < SIM_NODES; i++)
		sim_node_init(sim, i);
	return sim;
}
