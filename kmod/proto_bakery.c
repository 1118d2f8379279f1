// SPDX-License-Identifier: GPL-2.0
/*
 * The DSLR bakery (ticket) reader-writer lock: Algorithms 1-3 and sections
 * 5.1-5.2 of shared/papers/dslr-bakery-lock.txt on the encoding of
 * lockword/bakery.h.
 *
 * Acquire takes a ticket with one FETCH_AND_ADD and is granted at once when
 * the returned word allows. Otherwise it polls the word with RDMA READs,
 * sleeping a quarter of the time since a ticket ahead last finished
 * between them (never spinning a CPU). An
 * over-limit ticket is withdrawn by CAS; the acquirer polls the word with
 * READs after random exponential back-offs until the holder that crossed
 * COUNT_MAX resets it, and then takes a ticket again. With leases, a waiter
 * that sees no progress for twice the lease times the tickets still ahead
 * of it resets the stalled holders by CAS and fails with -EAGAIN, and a
 * holder releases by a CAS that applies only while the word still shows
 * its ticket, so a revoked holder's late release changes nothing. On an
 * update word (section 5.2) an update ticket is granted beside readers and
 * upgrades, once every earlier reader is done, by polling the same way.
 * See Documentation/rdlock/bakery.rst for where and why this deviates from
 * the paper's pseudocode.
 */
#include <linux/ktime.h>
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/export.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "lockword/bakery.h"
#include "proto.h"
#include "xport.h"

/* An over-limit word waits for its reset for at most this many polls. */
#define RDLOCK_BAKERY_WAIT_CAP	1000U
/*
 * The longest sleep between polls: a waiter behind a long hold stops
 * polling hard (bakery.rst, protocol deviation 6).
 */
#define RDLOCK_BAKERY_IDLE_MAX_NS	(10 * NSEC_PER_MSEC)

/* The shortest sleep between polls, unless the lockspace sets omega. */
#define RDLOCK_BAKERY_POLL_MIN_NS	(50 * NSEC_PER_USEC)

/*
 * 1: sleep a quarter of the time since a ticket ahead last finished
 * (bakery.rst, "Polling"); 0: Algorithm 2 line 20, holds ahead x omega
 * with idle polls doubling it, kept to measure one against the other in
 * one boot (selftests/guest/bakerypoll.sh).
 */
static unsigned int rdlock_bakery_poll = 1;
module_param_named(bakery_poll, rdlock_bakery_poll, uint, 0644);
MODULE_PARM_DESC(bakery_poll,
		 "bakery waiters sleep 1: a quarter of the time since a ticket ahead finished (default), 0: holds ahead x omega, doubled while idle (DSLR)");

/* The encoding's mode of @t: layout, class and, once upgraded, the rule. */
static enum bakery_mode rdlock_bakery_mode(const struct rdlock_proto_cfg *cfg,
					   const struct rdlock_ticket *t)
{
	if (!cfg->update_word)
		return t->mode == RDLOCK_MODE_SHARED ? BAKERY_SHARED :
						       BAKERY_EXCLUSIVE;
	switch (t->mode) {
	case RDLOCK_MODE_SHARED:
		return BAKERY_UPD_SHARED;
	case RDLOCK_MODE_UPDATE:
		return t->upgraded ? BAKERY_UPD_UPGRADE : BAKERY_UPD_UPDATE;
	default:
		return BAKERY_UPD_EXCLUSIVE;
	}
}

/*
 * How long a word may stay unchanged before a waiter resets it (section
 * 5.1): twice the lease for every ticket slot still ahead in @seen, the
 * word as it last changed. A holder of k slots owns the lock for k leases
 * and counts k in every waiter's wait count, so nobody is reset early.
 */
static s64 rdlock_bakery_stall_ms(const struct rdlock_proto_cfg *cfg,
				  u64 prev, u64 seen, enum bakery_mode bm)
{
	u32 ahead = max_t(u32, bakery_wait_count(prev, seen, bm), 1);

	return 2LL * cfg->lease_ms * ahead;
}

/* Take back an over-limit ticket (hazard (a): by CAS, never FA(-k)). */
static int rdlock_bakery_withdraw(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t,
				  enum bakery_mode bm, u64 cur)
{
	u64 new, old;
	int ret;

	while (bakery_withdraw(cur, bm, t->k, &new)) {
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, cur, new,
					   &old);
		if (ret || old == cur)
			return ret;
		cur = old;
	}
	return 0;
}

/*
 * How long a waiter sleeps before its next poll: @val is the word it last
 * READ, @idle how many polls in a row saw no ticket finish and @since how
 * long ago one last did (or the wait began). Bounding the sleep by a
 * quarter of @since bounds how late a grant is noticed to a quarter of
 * the hold it ended, whatever the network's latency; the legacy policy
 * sleeps at least one READ latency per hold ahead, which on a slow network
 * is many critical sections (bakery.rst, "Polling").
 */
static u64 rdlock_bakery_poll_ns(const struct rdlock_proto_cfg *cfg,
				 const struct rdlock_ticket *t,
				 enum bakery_mode bm, u64 val, unsigned int idle,
				 ktime_t since)
{
	u64 omega, ns;
	u32 ahead;

	if (READ_ONCE(rdlock_bakery_poll)) {
		omega = cfg->omega_us ? rdlock_proto_omega_ns(cfg, t->node) :
					RDLOCK_BAKERY_POLL_MIN_NS;
		return clamp_t(u64, max_t(s64, ktime_to_ns(since), 0) / 4, omega,
			       max_t(u64, omega, RDLOCK_BAKERY_IDLE_MAX_NS));
	}
	/* Algorithm 2 line 20, counting only what delays us. */
	omega = rdlock_proto_omega_ns(cfg, t->node);
	ahead = clamp_t(u32, bakery_holds_ahead(t->prev, val, bm), 1,
			RDLOCK_BAKERY_WAIT_CAP);
	ns = ahead * omega;
	if (idle)
		ns = max(ns, min_t(u64, omega << min(idle, 16U),
				   RDLOCK_BAKERY_IDLE_MAX_NS));
	return ns;
}

/*
 * Wait, in mode @bm, for the ticket @t->prev to be granted, starting from
 * the word @val. Returns 0 when granted, -EAGAIN when the ticket is gone
 * (revoked by a reset, or given up by our own stall reset), or the error
 * of a sleep or an operation.
 */
static int rdlock_bakery_wait(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, enum bakery_mode bm,
			      u64 val, unsigned long deadline)
{
	u64 seen = val, new, old, ns;
	s64 stall_ms = rdlock_bakery_stall_ms(cfg, t->prev, seen, bm);
	ktime_t progress = rdlock_proto_now(cfg), polled = progress, now;
	unsigned int idle = 0, retry_us = 0;
	int ret;

	for (;;) {
		ns = rdlock_bakery_poll_ns(cfg, t, bm, val, idle,
					   ktime_sub(rdlock_proto_now(cfg),
						     progress));
		rdlock_proto_add(cfg, poll_sleep_us, ns / NSEC_PER_USEC);
		ret = rdlock_proto_sleep(cfg, ns, deadline);
		if (ret)
			return ret;
		ret = rdlock_proto_read(cfg, t, &val, &retry_us, deadline);
		if (ret)
			return ret;
		t->polls++;
		now = rdlock_proto_now(cfg);
		if (bakery_granted(t->prev, val, bm, t->k)) {
			rdlock_proto_add(cfg, grant_slack_us,
					 ktime_us_delta(now, polled));
			t->word = val;
			return 0;
		}
		polled = now;
		if (bakery_skipped(t->prev, val, bm, t->k))
			return -EAGAIN;
		/* Algorithm 2: only a finished ticket restarts the clock. */
		if (bakery_progress(seen, val, bm)) {
			idle = 0;
			seen = val;
			stall_ms = rdlock_bakery_stall_ms(cfg, t->prev, seen, bm);
			progress = now;
			continue;
		}
		idle++;
		rdlock_proto_count(cfg, poll_idle);
		/*
		 * Leases: both clocks are taken on this node after the READ
		 * that showed no change, so a descheduled waiter only ever
		 * under-estimates how long the word has been still.
		 */
		if (!cfg->lease_ms ||
		    ktime_ms_delta(rdlock_proto_now(cfg), progress) < stall_ms)
			continue;
		if (!bakery_stall_reset(t->prev, val, bm, t->k, &new))
			continue;
		ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, val, new, &old);
		if (ret) {
			/* Done or not, the next READ tells (bakery_skipped()). */
			if (rdlock_proto_retry(cfg, t, ret, &retry_us))
				continue;
			return ret;
		}
		if (old == val) {
			rdlock_proto_count(cfg, stall_resets);
			return -EAGAIN;	/* our own ticket went with it */
		}
		val = old;
	}
}

/*
 * Algorithm 1 lines 7-8: an over-limit word whose done counters have not
 * moved for the stall time of its outstanding tickets lost the holder that
 * should reset it; reset it to zero ourselves. @val is the word a READ
 * just returned; @first is when @seen, the first word of this run of
 * over-limit READs, was returned.
 */
static int rdlock_bakery_overflow_stall(const struct rdlock_proto_cfg *cfg,
					struct rdlock_ticket *t,
					enum bakery_mode bm, u64 val, u64 *seen,
					ktime_t *first)
{
	u64 old;
	int ret;

	/* Over-limit FAs and withdraws move the max fields: watch n only. */
	if (!bakery_over_limit(*seen, bm) || bakery_progress(*seen, val, bm)) {
		*seen = val;
		*first = rdlock_proto_now(cfg);
		return 0;
	}
	if (ktime_ms_delta(rdlock_proto_now(cfg), *first) <
	    rdlock_bakery_stall_ms(cfg, val, val, bm))
		return 0;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, val, BAKERY_RESET_TO,
			      &old);
	if (!ret && old == val) {
		rdlock_proto_count(cfg, stall_resets);
		return -EAGAIN;
	}
	return ret;
}

/*
 * Algorithm 1 lines 4-7, after the withdraw: back off until a READ shows
 * the word reset, and only then take a ticket again. The paper retries the
 * FA itself, but every over-limit FA puts a delta in the word until its
 * withdraw, and the responsible holder's reset CAS only matches a word
 * without one: several acquirers retrying FAs starve that CAS (bakery.rst).
 */
static int rdlock_bakery_await_reset(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t,
				     enum bakery_mode bm, unsigned long deadline,
				     unsigned int *backoff)
{
	unsigned int retry_us = 0;
	u64 val, seen = 0;
	ktime_t first = 0;
	int ret;

	for (;;) {
		ret = rdlock_proto_backoff(cfg, backoff, deadline);
		if (ret)
			return ret;
		ret = rdlock_proto_read(cfg, t, &val, &retry_us, deadline);
		if (ret || !bakery_over_limit(val, bm))
			return ret;
		if (cfg->lease_ms) {
			ret = rdlock_bakery_overflow_stall(cfg, t, bm, val,
							   &seen, &first);
			if (ret)
				return ret;
		}
	}
}

static void rdlock_bakery_release(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t);

/*
 * A wait that ended without a grant: -EAGAIN, a reset took the ticket;
 * else its READs stopped because the table is gone (rdlock_proto_retry()).
 */
static void rdlock_bakery_wait_failed(const struct rdlock_proto_cfg *cfg,
				      struct rdlock_ticket *t, int ret)
{
	rdlock_ticket_to(cfg, t, ret == -EAGAIN ? RDLOCK_TICKET_REVOKED :
						  RDLOCK_TICKET_LOST);
}

/* Background end of an abandoned ticket: wait for it, then release it. */
static void rdlock_bakery_finish(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t)
{
	int ret = rdlock_bakery_wait(cfg, t, rdlock_bakery_mode(cfg, t),
				     t->prev, 0);

	if (ret) {
		rdlock_bakery_wait_failed(cfg, t, ret);
		return;
	}
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	t->granted_at = rdlock_proto_now(cfg);
	rdlock_bakery_release(cfg, t);
}

static int rdlock_bakery_acquire(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t,
				 unsigned long deadline)
{
	enum bakery_mode bm;
	u64 delta, prev;
	unsigned int backoff = 0;
	int ret;

	ret = rdlock_proto_check(cfg, t) ?: rdlock_proto_admit(cfg, deadline);
	if (ret)
		return ret;
	bm = rdlock_bakery_mode(cfg, t);
	delta = bakery_acquire_delta(bm, t->k);
	rdlock_proto_count(cfg, acquires);
	for (;;) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ISSUED);
		ret = rdlock_proto_op_take(cfg, t, RDLOCK_XOP_FAA, delta, 0,
					   &prev, deadline);
		if (ret) {
			rdlock_ticket_take_failed(cfg, t, ret);
			return ret;
		}
		if (bakery_over_limit(prev, bm)) {
			/* Algorithm 1 lines 4-7: not a ticket; wait for reset. */
			ret = rdlock_bakery_withdraw(cfg, t, bm, prev + delta);
			if (ret) {
				rdlock_ticket_failed(cfg, t, ret);
				return ret;
			}
			ret = rdlock_bakery_await_reset(cfg, t, bm, deadline,
							&backoff);
			if (ret) {
				/* Withdrawn: nothing of ours is in the word. */
				rdlock_ticket_to(cfg, t, ret == -ESTALE ?
						 RDLOCK_TICKET_LOST :
						 RDLOCK_TICKET_DONE);
				return ret;
			}
			rdlock_proto_count(cfg, retries);
			continue;
		}
		t->prev = prev;
		t->word = prev + delta;
		if (bakery_granted_at_fa(prev, bm))
			break;
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_WAITING);
		rdlock_proto_count(cfg, waits);
		ret = rdlock_bakery_wait(cfg, t, bm, prev, deadline);
		if (!ret)
			break;
		/*
		 * A reset took the ticket: the caller retries. Without leases
		 * only a table that was reset under us does that, and a new
		 * ticket on it would hide the fact.
		 */
		if (ret != -ETIMEDOUT && ret != -EINTR) {
			rdlock_bakery_wait_failed(cfg, t, ret);
			return ret;
		}
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ABANDONED);
		rdlock_proto_count(cfg, abandoned);
		rdlock_proto_finish_later(cfg, t, rdlock_bakery_finish);
		return ret;
	}
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	t->granted_at = rdlock_proto_now(cfg);
	return 0;
}

/*
 * Section 5.2: an update holder writes once every earlier ticket, readers
 * included, is done: the same poll as acquire, with the upgrade rule.
 */
static int rdlock_bakery_upgrade(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t,
				 unsigned long deadline)
{
	unsigned int retry_us = 0;
	u64 val;
	int ret;

	if (!cfg->update_word || t->mode != RDLOCK_MODE_UPDATE || t->upgraded)
		return -EINVAL;
	if (t->revoked)
		return -EAGAIN;
	ret = rdlock_proto_read(cfg, t, &val, &retry_us, deadline);
	if (ret)
		return ret;
	if (bakery_skipped(t->prev, val, BAKERY_UPD_UPGRADE, t->k)) {
		ret = -EAGAIN;
	} else if (bakery_granted(t->prev, val, BAKERY_UPD_UPGRADE, t->k)) {
		t->word = val;
	} else {
		rdlock_proto_count(cfg, upgrade_waits);
		ret = rdlock_bakery_wait(cfg, t, BAKERY_UPD_UPGRADE, val,
					 deadline);
	}
	if (ret == -EAGAIN) {
		/* A reset took the ticket: nothing is held any more. */
		t->revoked = true;
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_REVOKED);
		rdlock_proto_count(cfg, lease_expiries);
	}
	if (ret)
		return ret;
	t->upgraded = true;
	/* The writer's lease starts now, as a waiter's clock does. */
	t->granted_at = rdlock_proto_now(cfg);
	rdlock_proto_count(cfg, upgrades);
	return 0;
}

/* Algorithm 3 lines 6-8: the holder that crossed COUNT_MAX resets. */
static void rdlock_bakery_reset(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t)
{
	enum bakery_mode bm = rdlock_bakery_mode(cfg, t);
	u64 from = bakery_reset_from(t->prev, bm, t->k), old;
	unsigned int backoff = 0;

	for (;;) {
		if (rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, from,
					 BAKERY_RESET_TO, &old))
			return;
		if (old == from) {
			rdlock_proto_count(cfg, overflow_resets);
			return;
		}
		if (bakery_reset_from_stale(old, from, bm) ||
		    rdlock_proto_backoff(cfg, &backoff, 0))
			return;
	}
}

/*
 * With leases a reset may revoke the ticket at any moment, so the release
 * is a CAS whose compare value shows the ticket still held (hazard (d)). The
 * paper's FA followed by an undo lets waiters see the increment of a revoked
 * ticket before the undo lands and be granted beside a live holder; and the
 * holder's clock cannot tell it was revoked: a paused node's clock does not
 * see the pause. The first compare is the word as the holder last saw it,
 * so an uncontended release still takes one operation.
 *
 * Return: 0 when released, -EAGAIN when the ticket was revoked, or the
 * error of an operation.
 */
static int rdlock_bakery_release_cas(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t,
				     enum bakery_mode bm, u64 delta)
{
	u64 cur = t->word, old;
	int ret;

	while (bakery_release_valid(t->prev, cur, bm, t->k)) {
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, cur,
					   cur + delta, &old);
		if (ret || old == cur)
			return ret;
		cur = old;
	}
	return -EAGAIN;
}

static void rdlock_bakery_release(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t)
{
	/* Validity by the rule the holder was granted under (upgrade). */
	enum bakery_mode bm = rdlock_bakery_mode(cfg, t);
	/* Arithmetic of the ticket's class: an upgrade is still a U ticket. */
	enum bakery_mode am = bm == BAKERY_UPD_UPGRADE ? BAKERY_UPD_UPDATE : bm;
	u64 delta = bakery_release_delta(am, t->k), rel;
	int ret;

	if (t->revoked)
		return;
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_RELEASING);
	/*
	 * Without leases nothing but this release ends the ticket: one FA.
	 * With no overflow reset owed after it, nothing follows the FA: it
	 * may be posted, the caller does not wait for its round trip.
	 */
	if (!cfg->lease_ms && !bakery_reset_responsible(t->prev, am, t->k) &&
	    rdlock_proto_post_release(cfg, t, delta))
		return;
	if (cfg->lease_ms)
		ret = rdlock_bakery_release_cas(cfg, t, bm, delta);
	else
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_FAA, delta, 0,
					   &rel);
	if (ret == -EAGAIN) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_REVOKED);
		rdlock_proto_count(cfg, lease_expiries);
	} else if (ret) {
		rdlock_ticket_failed(cfg, t, ret);
	} else {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	}
	if (ret || !bakery_reset_responsible(t->prev, am, t->k))
		return;
	/*
	 * The reset waits for every other holder of the epoch to release,
	 * which must not delay this caller: do it in the background.
	 */
	rdlock_proto_reset_later(cfg, t, rdlock_bakery_reset);
}

const struct rdlock_proto_ops rdlock_proto_bakery = {
	.name		= "bakery",
	.acquire	= rdlock_bakery_acquire,
	.release	= rdlock_bakery_release,
	.upgrade	= rdlock_bakery_upgrade,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_bakery, RDLOCK_INTERNAL);
