// SPDX-License-Identifier: GPL-2.0
/*
 * What the lock protocols share: counted remote operations, the polling
 * unit omega, sleeping (never spinning a CPU) and finishing an abandoned
 * ticket in the background, so that a waiter that times out or is killed
 * never leaves a ticket that would stall everybody behind it.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/hrtimer.h>
#include <linux/random.h>
#include <linux/workqueue.h>
#include <linux/rdlock.h>

#include "lockword/bakery.h"
#include "proto.h"
#include "xport.h"

#define RDLOCK_SLEEP_MAX_NS	(100 * NSEC_PER_MSEC)
#define RDLOCK_BACKOFF_MIN_US	50
#define RDLOCK_BACKOFF_MAX_US	20000
#define RDLOCK_OMEGA_DEFAULT_NS	(100 * NSEC_PER_USEC)
/*
 * A two-sided READ of our own table is a function call: omega taken from
 * it would make waiters poll almost continuously.
 */
#define RDLOCK_OMEGA_MIN_NS	(50 * NSEC_PER_USEC)

struct rdlock_proto_stats rdlock_proto_stats;
EXPORT_SYMBOL_NS_GPL(rdlock_proto_stats, RDLOCK_INTERNAL);
static u64 rdlock_read_ns[RDLOCK_MAX_NODES];	/* EWMA of READ latency */
static struct workqueue_struct *rdlock_proto_wq;

/**
 * __rdlock_proto_count() - count one event
 * @cfg: the lockspace's policy; its @stats, if any, counts too.
 * @offset: offset of the atomic64_t counter in struct rdlock_proto_stats.
 *
 * Use rdlock_proto_count(), which takes the counter's name.
 */
void __rdlock_proto_count(const struct rdlock_proto_cfg *cfg, size_t offset)
{
	atomic64_inc((atomic64_t *)((char *)&rdlock_proto_stats + offset));
	if (cfg && cfg->stats)
		atomic64_inc((atomic64_t *)((char *)cfg->stats + offset));
}

/**
 * rdlock_proto_check() - validate a ticket before acquiring it
 * @cfg: the lockspace's policy.
 * @t: the ticket; a @k of 0 becomes 1.
 *
 * Every protocol takes the same modes and slot counts, so that a
 * lockspace can switch protocols without changing what it may ask for.
 *
 * Return: 0, or -EINVAL for an unknown mode, %RDLOCK_MODE_UPDATE without
 * an update word, or a @k beyond the word's BAKERY_K_MAX/BAKERY_UPD_K_MAX.
 */
int rdlock_proto_check(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t)
{
	enum bakery_mode bm = cfg->update_word ? BAKERY_UPD_SHARED :
						 BAKERY_SHARED;

	if (t->mode >= RDLOCK_MODE_NR ||
	    (t->mode == RDLOCK_MODE_UPDATE && !cfg->update_word))
		return -EINVAL;
	if (!t->k)
		t->k = 1;
	if (!bakery_k_valid(bm, t->k))
		return -EINVAL;
	t->upgraded = false;
	t->revoked = false;
	return 0;
}

/**
 * rdlock_proto_op() - one remote operation on the ticket's lock word
 * @cfg: the lockspace's policy (whose stats count the operation).
 * @t: the ticket; counts the operation.
 * @op: the operation.
 * @arg0: first operand.
 * @arg1: second operand.
 * @value: the value the operation returned.
 *
 * Also keeps the READ latency to each node that omega defaults to (not for
 * a simulated transport: its latencies would skew the real ones).
 *
 * Return: as rdlock_xport_exec().
 */
int rdlock_proto_op(const struct rdlock_proto_cfg *cfg,
		    struct rdlock_ticket *t, enum rdlock_xop op, u64 arg0,
		    u64 arg1, u64 *value)
{
	ktime_t start = ktime_get();
	int ret;

	if (cfg->xport)
		ret = cfg->xport->exec(cfg->xport_priv, op, t->node, t->slot,
				       arg0, arg1, value);
	else
		ret = rdlock_xport_exec(op, t->node, t->slot, arg0, arg1,
					value, 0);
	t->remote_ops++;
	rdlock_proto_count(cfg, remote_ops);
	if (op < RDLOCK_XOP_NR)
		__rdlock_proto_count(cfg, offsetof(struct rdlock_proto_stats,
						   ops) +
				     op * sizeof(atomic64_t));
	if (!ret && op == RDLOCK_XOP_READ && !cfg->xport &&
	    t->node < RDLOCK_MAX_NODES) {
		u64 ns = ktime_to_ns(ktime_sub(ktime_get(), start));
		u64 old = READ_ONCE(rdlock_read_ns[t->node]);

		WRITE_ONCE(rdlock_read_ns[t->node], old ? (7 * old + ns) / 8 : ns);
	}
	return ret;
}

/**
 * rdlock_proto_omega_ns() - the polling unit for a lock on @node
 * @cfg: the lockspace's policy.
 * @node: the lock's home node.
 *
 * Return: @cfg->omega_us if set, else the measured READ latency, at
 * least 50 us.
 */
u64 rdlock_proto_omega_ns(const struct rdlock_proto_cfg *cfg, u32 node)
{
	u64 ns = 0;

	if (cfg->omega_us)
		return (u64)cfg->omega_us * NSEC_PER_USEC;
	if (node < RDLOCK_MAX_NODES)
		ns = READ_ONCE(rdlock_read_ns[node]);
	return ns ? max_t(u64, ns, RDLOCK_OMEGA_MIN_NS) : RDLOCK_OMEGA_DEFAULT_NS;
}

/**
 * rdlock_proto_now() - this node's clock, as the lock protocols see it
 * @cfg: the lockspace's policy (a simulated transport has its own clock).
 *
 * Return: the time.
 */
ktime_t rdlock_proto_now(const struct rdlock_proto_cfg *cfg)
{
	return cfg->xport ? cfg->xport->now(cfg->xport_priv) : ktime_get();
}

/**
 * rdlock_proto_sleep() - sleep before polling again
 * @ns: how long; capped at 100 ms so a deadline is not overslept much.
 * @deadline: jiffies, or 0 for none.
 *
 * Return: 0, -ETIMEDOUT once @deadline has passed, or -EINTR on a fatal
 * signal.
 */
int rdlock_proto_sleep(u64 ns, unsigned long deadline)
{
	ktime_t kt = ns_to_ktime(min_t(u64, ns, RDLOCK_SLEEP_MAX_NS));

	if (deadline && time_after_eq(jiffies, deadline))
		return -ETIMEDOUT;
	set_current_state(TASK_KILLABLE);
	schedule_hrtimeout_range(&kt, ktime_to_ns(kt) / 8, HRTIMER_MODE_REL);
	return fatal_signal_pending(current) ? -EINTR : 0;
}

/**
 * rdlock_proto_backoff() - random exponential back-off (DSLR appendix A.3)
 * @backoff_us: the current ceiling; doubled up to 20 ms on every call.
 * @deadline: as for rdlock_proto_sleep().
 *
 * Return: as rdlock_proto_sleep().
 */
int rdlock_proto_backoff(unsigned int *backoff_us, unsigned long deadline)
{
	unsigned int us = max_t(unsigned int, *backoff_us,
				RDLOCK_BACKOFF_MIN_US);

	*backoff_us = min_t(unsigned int, 2 * us, RDLOCK_BACKOFF_MAX_US);
	return rdlock_proto_sleep((u64)(get_random_u32() % us + 1) *
				  NSEC_PER_USEC, deadline);
}

struct rdlock_proto_finish {
	struct work_struct work;
	struct rdlock_proto_cfg cfg;
	struct rdlock_ticket ticket;
	void (*finish)(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t);
};

static void rdlock_proto_finish_work(struct work_struct *work)
{
	struct rdlock_proto_finish *f =
		container_of(work, struct rdlock_proto_finish, work);

	f->finish(&f->cfg, &f->ticket);
	kfree(f);
}

/**
 * rdlock_proto_finish_later() - complete a ticket in the background
 * @cfg: the policy, copied without its @stats: the lockspace that owns
 *	them may be gone by the time the worker runs.
 * @t: the ticket, copied.
 * @finish: waits for the ticket and releases it; runs in a worker.
 *
 * Return: 0 or -ENOMEM.
 */
int rdlock_proto_finish_later(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t,
			      void (*finish)(const struct rdlock_proto_cfg *cfg,
					     struct rdlock_ticket *t))
{
	struct rdlock_proto_finish *f = kmalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->cfg = *cfg;
	f->cfg.stats = NULL;
	f->ticket = *t;
	f->finish = finish;
	INIT_WORK(&f->work, rdlock_proto_finish_work);
	queue_work(rdlock_proto_wq, &f->work);
	return 0;
}

/**
 * rdlock_proto_flush() - wait for every ticket finished in the background
 *
 * For a simulated transport's owner, before the simulation goes away. Twice:
 * a finished ticket's release may queue the reset its ticket owes.
 */
void rdlock_proto_flush(void)
{
	flush_workqueue(rdlock_proto_wq);
	flush_workqueue(rdlock_proto_wq);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_flush, RDLOCK_INTERNAL);

int rdlock_proto_init(void)
{
	rdlock_proto_wq = alloc_workqueue("rdlock_proto", WQ_UNBOUND, 0);
	return rdlock_proto_wq ? 0 : -ENOMEM;
}

/* Background tickets end once the transport fails their operations. */
void rdlock_proto_exit(void)
{
	destroy_workqueue(rdlock_proto_wq);
}
