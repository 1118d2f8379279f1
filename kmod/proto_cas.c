// SPDX-License-Identifier: GPL-2.0
/*
 * Baseline: a reader-writer spinlock on one word with CMP_AND_SWP, as
 * DecLock's CASLock. Bit 63 is the writer, the low bits count readers. An
 * acquirer retries a failed CAS after a random exponential back-off (it
 * sleeps: no CPU spins). No queue, so no fairness: it exists to be
 * measured against the bakery lock in the same run.
 */
#include <linux/bits.h>
#include <linux/export.h>

#include "proto.h"
#include "xport.h"

#define RDLOCK_CAS_WRITER	BIT_ULL(63)

static int rdlock_cas_acquire(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	bool shared = t->mode == RDLOCK_MODE_SHARED;
	unsigned int backoff = 0;
	u64 expect = 0, old;
	bool waited = false;
	int ret;

	atomic64_inc(&rdlock_proto_stats.acquires);
	for (;;) {
		ret = rdlock_proto_op(t, RDLOCK_XOP_CAS, expect,
				      shared ? expect + 1 : RDLOCK_CAS_WRITER,
				      &old);
		if (ret)
			return ret;
		if (old == expect)
			break;
		if (shared && !(old & RDLOCK_CAS_WRITER)) {
			expect = old;	/* only the reader count moved */
			continue;
		}
		if (!waited) {
			waited = true;
			atomic64_inc(&rdlock_proto_stats.waits);
		}
		ret = rdlock_proto_backoff(&backoff, deadline);
		if (ret)
			return ret;	/* nothing taken: nothing to give back */
	}
	t->granted_at = ktime_get();
	return 0;
}

static void rdlock_cas_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t)
{
	u64 old;

	/* FAA, not WRITE: NIC writes are not atomic with NIC atomics. */
	rdlock_proto_op(t, RDLOCK_XOP_FAA,
			t->mode == RDLOCK_MODE_SHARED ? -1ULL :
			-RDLOCK_CAS_WRITER, 0, &old);
}

const struct rdlock_proto_ops rdlock_proto_caslock = {
	.name		= "caslock",
	.acquire	= rdlock_cas_acquire,
	.release	= rdlock_cas_release,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_caslock, RDLOCK_INTERNAL);
