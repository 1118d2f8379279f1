// SPDX-License-Identifier: GPL-2.0
/*
 * The DSLR bakery (ticket) reader-writer lock: Algorithms 1-3 of
 * shared/papers/dslr-bakery-lock.txt on the encoding of lockword/bakery.h.
 *
 * Acquire takes a ticket with one FETCH_AND_ADD and is granted at once when
 * the returned word allows. Otherwise it polls the word with RDMA READs,
 * sleeping wait_count x omega between them (never spinning a CPU). An
 * over-limit ticket is withdrawn by CAS and retried after a random
 * exponential back-off until the holder that crossed COUNT_MAX resets the
 * word. With leases, a waiter that sees no progress for twice the lease
 * resets the stalled holders by CAS and fails with -EAGAIN. See
 * Documentation/rdlock/bakery.rst for where and why this deviates from the
 * paper's pseudocode.
 */
#include <linux/ktime.h>
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/export.h>

#include "lockword/bakery.h"
#include "proto.h"
#include "xport.h"

/* An over-limit word waits for its reset for at most this many polls. */
#define RDLOCK_BAKERY_WAIT_CAP	1000U

static enum bakery_mode rdlock_bakery_mode(const struct rdlock_ticket *t)
{
	return t->mode == RDLOCK_MODE_SHARED ? BAKERY_SHARED : BAKERY_EXCLUSIVE;
}

/* Take back an over-limit ticket (hazard (a): by CAS, never FA(-k)). */
static int rdlock_bakery_withdraw(struct rdlock_ticket *t, u64 cur)
{
	enum bakery_mode bm = rdlock_bakery_mode(t);
	u64 new, old;
	int ret;

	while (bakery_withdraw(cur, bm, t->k, &new)) {
		ret = rdlock_proto_op(t, RDLOCK_XOP_CAS, cur, new, &old);
		if (ret || old == cur)
			return ret;
		cur = old;
	}
	return 0;
}

/*
 * Wait for the ticket @t->prev to be granted. Returns 0 when granted,
 * -EAGAIN when the ticket is gone (revoked by a reset, or given up by our
 * own stall reset), or the error of a sleep or an operation.
 */
static int rdlock_bakery_wait(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	enum bakery_mode bm = rdlock_bakery_mode(t);
	u64 omega = rdlock_proto_omega_ns(cfg, t->node);
	u64 val = t->prev, seen = t->prev, new, old;
	ktime_t progress = ktime_get();
	u32 ahead;
	int ret;

	for (;;) {
		/* Algorithm 2 line 20: the more tickets ahead, the longer. */
		ahead = clamp_t(u32, bakery_wait_count(t->prev, val, bm), 1,
				RDLOCK_BAKERY_WAIT_CAP);
		ret = rdlock_proto_sleep(ahead * omega, deadline);
		if (ret)
			return ret;
		ret = rdlock_proto_op(t, RDLOCK_XOP_READ, 0, 0, &val);
		if (ret)
			return ret;
		t->polls++;
		if (bakery_granted(t->prev, val, bm, t->k))
			return 0;
		if (bakery_skipped(t->prev, val, bm, t->k))
			return -EAGAIN;
		if (val != seen) {
			seen = val;
			progress = ktime_get();
			continue;
		}
		/*
		 * Leases: both clocks are taken on this node after the READ
		 * that showed no change, so a descheduled waiter only ever
		 * under-estimates how long the word has been still.
		 */
		if (!cfg->lease_ms ||
		    ktime_ms_delta(ktime_get(), progress) < 2 * cfg->lease_ms)
			continue;
		if (!bakery_stall_reset(t->prev, val, bm, t->k, &new))
			continue;
		ret = rdlock_proto_op(t, RDLOCK_XOP_CAS, val, new, &old);
		if (ret)
			return ret;
		if (old == val) {
			atomic64_inc(&rdlock_proto_stats.stall_resets);
			return -EAGAIN;	/* our own ticket went with it */
		}
		val = old;
	}
}

static void rdlock_bakery_release(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t);

/* Background end of an abandoned ticket: wait for it, then release it. */
static void rdlock_bakery_finish(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t)
{
	if (!rdlock_bakery_wait(cfg, t, 0)) {
		t->granted_at = ktime_get();
		rdlock_bakery_release(cfg, t);
	}
}

static int rdlock_bakery_acquire(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t,
				 unsigned long deadline)
{
	enum bakery_mode bm = rdlock_bakery_mode(t);
	u64 delta, prev;
	unsigned int backoff = 0;
	int ret;

	if (!t->k)
		t->k = 1;
	if (!bakery_k_valid(bm, t->k))
		return -EINVAL;
	delta = bakery_acquire_delta(bm, t->k);
	atomic64_inc(&rdlock_proto_stats.acquires);
	for (;;) {
		ret = rdlock_proto_op(t, RDLOCK_XOP_FAA, delta, 0, &prev);
		if (ret)
			return ret;
		if (bakery_over_limit(prev, bm)) {
			/* Algorithm 1 lines 4-7: not a ticket; wait for reset. */
			ret = rdlock_bakery_withdraw(t, prev + delta);
			if (!ret)
				ret = rdlock_proto_backoff(&backoff, deadline);
			if (ret)
				return ret;
			atomic64_inc(&rdlock_proto_stats.retries);
			continue;
		}
		t->prev = prev;
		if (bakery_granted_at_fa(prev, bm))
			break;
		atomic64_inc(&rdlock_proto_stats.waits);
		ret = rdlock_bakery_wait(cfg, t, deadline);
		if (!ret)
			break;
		if (ret == -EAGAIN && cfg->lease_ms)
			return ret;	/* leases: the caller retries */
		if (ret == -EAGAIN) {
			atomic64_inc(&rdlock_proto_stats.retries);
			continue;
		}
		if (ret != -ETIMEDOUT && ret != -EINTR)
			return ret;
		atomic64_inc(&rdlock_proto_stats.abandoned);
		if (rdlock_proto_finish_later(cfg, t, rdlock_bakery_finish))
			pr_warn_ratelimited("rdlock: cannot finish an abandoned ticket; node %u slot %u stalls until reset\n",
					    t->node, t->slot);
		return ret;
	}
	t->granted_at = ktime_get();
	return 0;
}

/* Algorithm 3 lines 6-8: the holder that crossed COUNT_MAX resets. */
static void rdlock_bakery_reset(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t)
{
	enum bakery_mode bm = rdlock_bakery_mode(t);
	u64 from = bakery_reset_from(t->prev, bm, t->k), old;
	unsigned int backoff = 0;

	for (;;) {
		if (rdlock_proto_op(t, RDLOCK_XOP_CAS, from, BAKERY_RESET_TO,
				    &old))
			return;
		if (old == from) {
			atomic64_inc(&rdlock_proto_stats.overflow_resets);
			return;
		}
		if (bakery_reset_from_stale(old, from, bm) ||
		    rdlock_proto_backoff(&backoff, 0))
			return;
	}
}

static void rdlock_bakery_release(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t)
{
	enum bakery_mode bm = rdlock_bakery_mode(t);
	u64 delta = bakery_release_delta(bm, t->k), rel, cur, new, old;

	if (cfg->lease_ms &&
	    ktime_ms_delta(ktime_get(), t->granted_at) >= cfg->lease_ms) {
		/* Past its lease a holder does not release by FA (4.8). */
		atomic64_inc(&rdlock_proto_stats.lease_expiries);
		return;
	}
	if (rdlock_proto_op(t, RDLOCK_XOP_FAA, delta, 0, &rel))
		return;
	/* Hazard (d): the ticket may have been revoked meanwhile. */
	if (!bakery_release_valid(t->prev, rel, bm, t->k)) {
		atomic64_inc(&rdlock_proto_stats.lease_expiries);
		cur = rel + delta;
		while (bakery_release_undo(rel, cur, bm, t->k, &new)) {
			if (rdlock_proto_op(t, RDLOCK_XOP_CAS, cur, new, &old) ||
			    old == cur)
				break;
			cur = old;
		}
		return;
	}
	if (!bakery_reset_responsible(t->prev, bm, t->k))
		return;
	/*
	 * The reset waits for every other holder of the epoch to release,
	 * which must not delay this caller: do it in the background.
	 */
	if (rdlock_proto_finish_later(cfg, t, rdlock_bakery_reset))
		rdlock_bakery_reset(cfg, t);
}

const struct rdlock_proto_ops rdlock_proto_bakery = {
	.name		= "bakery",
	.acquire	= rdlock_bakery_acquire,
	.release	= rdlock_bakery_release,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_bakery, RDLOCK_INTERNAL);
