// SPDX-License-Identifier: GPL-2.0
/*
 * Baseline: a reader-writer spinlock on one word with CMP_AND_SWP, as
 * DecLock's CASLock, plus an update mode so that benchmarks can compare
 * update locks too. The word::
 *
 *	63      62       61 .. 0
 *	+--------+--------+----------------+
 *	| writer | update |  reader count  |
 *	+--------+--------+----------------+
 *
 * Shared: CAS count + 1 while the writer bit is clear. Exclusive: CAS
 * 0 -> writer. Update: CAS to set the update bit while the writer and
 * update bits are clear; readers keep coming and going beside it. Upgrade:
 * CAS update -> update | writer, which succeeds only once the reader count
 * is 0; the writer bit then keeps new readers out. Release subtracts what
 * was added with FETCH_AND_ADD: the ticket's @prev keeps the bits it holds,
 * so a caller that ends an upgrade by clearing @upgraded still gives back
 * the writer bit (which keeps readers out until then, as the bakery's
 * update ticket does). An acquirer retries a failed CAS after a
 * random exponential back-off (it sleeps: no CPU spins). No queue, so no
 * fairness (an upgrade can starve behind a stream of readers): it exists
 * to be measured against the bakery lock in the same run. Multi-slot
 * leases and leases in general do not apply; @k is validated only.
 */
#include <linux/bits.h>
#include <linux/export.h>

#include "proto.h"
#include "xport.h"

#define RDLOCK_CAS_WRITER	BIT_ULL(63)
#define RDLOCK_CAS_UPDATE	BIT_ULL(62)

/* What @mode adds to a word that allows it: the CAS swap is old + this. */
static u64 rdlock_cas_delta(enum rdlock_mode mode)
{
	switch (mode) {
	case RDLOCK_MODE_SHARED:
		return 1;
	case RDLOCK_MODE_UPDATE:
		return RDLOCK_CAS_UPDATE;
	default:
		return RDLOCK_CAS_WRITER;
	}
}

/* Bits of a word that keep @mode out. */
static u64 rdlock_cas_conflicts(enum rdlock_mode mode)
{
	switch (mode) {
	case RDLOCK_MODE_SHARED:
		return RDLOCK_CAS_WRITER;
	case RDLOCK_MODE_UPDATE:
		return RDLOCK_CAS_WRITER | RDLOCK_CAS_UPDATE;
	default:
		return ~0ULL;
	}
}

/*
 * CAS @delta onto the word, starting from the guess @expect, until the
 * word is free of @conflicts. Sleeps between attempts that failed on a
 * conflict; retries at once when only the reader count moved. @take: this
 * takes the ticket @t, which ends if it fails.
 */
static int rdlock_cas_add(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t, u64 expect, u64 delta,
			  u64 conflicts, bool *waited, bool take,
			  unsigned long deadline)
{
	unsigned int backoff = 0;
	u64 old;
	int ret;

	for (;;) {
		ret = rdlock_proto_op_take(cfg, t, RDLOCK_XOP_CAS, expect,
					   expect + delta, &old, deadline);
		if (ret && take)
			rdlock_ticket_take_failed(cfg, t, ret);
		if (ret || old == expect)
			return ret;
		if (!(old & conflicts)) {
			expect = old;	/* only the reader count moved */
			continue;
		}
		*waited = true;
		ret = rdlock_proto_backoff(cfg, &backoff, deadline);
		if (ret) {
			/* Nothing taken: nothing to give back. */
			if (take)
				rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
			return ret;
		}
	}
}

static int rdlock_cas_acquire(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	bool waited = false;
	int ret;

	ret = rdlock_proto_check(cfg, t);
	if (ret)
		return ret;
	rdlock_proto_count(cfg, acquires);
	/* No queue: the ticket is issued until a CAS takes the lock. */
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ISSUED);
	ret = rdlock_cas_add(cfg, t, 0, rdlock_cas_delta(t->mode),
			     rdlock_cas_conflicts(t->mode), &waited, true,
			     deadline);
	if (waited)
		rdlock_proto_count(cfg, waits);
	if (!ret) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
		t->prev = rdlock_cas_delta(t->mode);
		t->granted_at = rdlock_proto_now(cfg);
	}
	return ret;
}

static int rdlock_cas_upgrade(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	bool waited = false;
	int ret;

	if (!cfg->update_word || t->mode != RDLOCK_MODE_UPDATE || t->upgraded)
		return -EINVAL;
	if (t->prev & RDLOCK_CAS_WRITER)
		goto upgraded;	/* upgraded before: the bit is still ours */
	/* Any reader conflicts: the writer bit may go on only at count 0. */
	ret = rdlock_cas_add(cfg, t, RDLOCK_CAS_UPDATE, RDLOCK_CAS_WRITER,
			     ~RDLOCK_CAS_UPDATE, &waited, false, deadline);
	if (waited)
		rdlock_proto_count(cfg, upgrade_waits);
	if (ret)
		return ret;	/* still the update holder */
	t->prev |= RDLOCK_CAS_WRITER;
upgraded:
	t->upgraded = true;
	t->granted_at = rdlock_proto_now(cfg);
	rdlock_proto_count(cfg, upgrades);
	return 0;
}

static void rdlock_cas_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t)
{
	u64 old;

	int ret;

	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_RELEASING);
	/*
	 * FAA, not WRITE: NIC writes are not atomic with NIC atomics. One
	 * operation with nothing after it: it may be posted.
	 */
	if (rdlock_proto_post_release(cfg, t, -t->prev))
		return;
	ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_FAA, -t->prev, 0, &old);
	if (ret)
		rdlock_ticket_failed(cfg, t, ret);
	else
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
}

const struct rdlock_proto_ops rdlock_proto_caslock = {
	.name		= "caslock",
	.acquire	= rdlock_cas_acquire,
	.release	= rdlock_cas_release,
	.upgrade	= rdlock_cas_upgrade,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_caslock, RDLOCK_INTERNAL);
