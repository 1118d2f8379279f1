/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock lock protocols behind one small ops table: the DSLR bakery lock
 * and, as a baseline for benchmarks, a CAS reader-writer spinlock. A
 * protocol knows only the transport (xport.h) and its lock-word encoding.
 */
#ifndef _RDLOCK_PROTO_H
#define _RDLOCK_PROTO_H

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/types.h>

enum rdlock_mode {
	RDLOCK_MODE_SHARED,
	RDLOCK_MODE_EXCLUSIVE,
	RDLOCK_MODE_NR,
};

/**
 * struct rdlock_proto_cfg - per-lockspace protocol policy
 * @lease_ms: 0: a holder keeps the lock until it releases it (what a file
 *	system needs); T: DSLR leases, a waiter that sees no progress for 2T
 *	resets the word and fails with -EAGAIN, and a holder past T does not
 *	release by FA.
 * @omega_us: polling unit; 0: the measured READ latency to the home node.
 */
struct rdlock_proto_cfg {
	unsigned int lease_ms;
	unsigned int omega_us;
};

/**
 * struct rdlock_ticket - one acquisition, from taking it to releasing it
 * @node: home node of the lock word.
 * @slot: slot of the lock word in @node's table.
 * @mode: shared or exclusive.
 * @prev: bakery: the word the acquiring FA returned.
 * @k: bakery: slots taken (multi-slot leases).
 * @granted_at: when the lock was granted (leases).
 * @remote_ops: remote operations this acquisition took.
 * @polls: READs while waiting.
 */
struct rdlock_ticket {
	u32 node;
	u32 slot;
	enum rdlock_mode mode;
	u64 prev;
	u32 k;
	ktime_t granted_at;
	u32 remote_ops;
	u32 polls;
};

/**
 * struct rdlock_proto_ops - a lock protocol
 * @name: as shown in debugfs and benchmarks.
 * @acquire: take @t->node/slot in @t->mode; sleeps. Returns 0 when
 *	granted; -EAGAIN when a lease reset revoked or ended the attempt
 *	(retry); -ETIMEDOUT at @deadline (jiffies; 0: none) or -EINTR on a
 *	fatal signal, in which case any ticket already taken is completed
 *	and released in the background; or a transport error.
 * @release: give the lock up; sleeps; never fails the caller's release
 *	(lost connections and leases are handled inside).
 */
struct rdlock_proto_ops {
	const char *name;
	int (*acquire)(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, unsigned long deadline);
	void (*release)(const struct rdlock_proto_cfg *cfg,
			struct rdlock_ticket *t);
};

/* Counters of all protocols, for debugfs and benchmarks. */
struct rdlock_proto_stats {
	atomic64_t acquires;
	atomic64_t waits;		/* not granted by the first operation */
	atomic64_t remote_ops;
	atomic64_t retries;		/* new ticket after revocation/overflow */
	atomic64_t stall_resets;
	atomic64_t overflow_resets;
	atomic64_t lease_expiries;
	atomic64_t abandoned;		/* timed out or killed while waiting */
};

extern struct rdlock_proto_stats rdlock_proto_stats;
extern const struct rdlock_proto_ops rdlock_proto_bakery;
extern const struct rdlock_proto_ops rdlock_proto_caslock;

/* proto.c: what the protocols share */
int rdlock_proto_op(struct rdlock_ticket *t, int op, u64 arg0, u64 arg1,
		    u64 *value);
u64 rdlock_proto_omega_ns(const struct rdlock_proto_cfg *cfg, u32 node);
int rdlock_proto_sleep(u64 ns, unsigned long deadline);
int rdlock_proto_backoff(unsigned int *backoff_us, unsigned long deadline);
int rdlock_proto_finish_later(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t,
			      void (*finish)(const struct rdlock_proto_cfg *cfg,
					     struct rdlock_ticket *t));
int rdlock_proto_init(void);
void rdlock_proto_exit(void);

#endif /* _RDLOCK_PROTO_H */
