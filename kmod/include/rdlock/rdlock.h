/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock: distributed reader-writer locks over RDMA for in-kernel users.
 *
 * A lockspace is a cluster-wide namespace of locks with one protocol and
 * one lease policy; every node that uses it opens it with the same
 * attributes. A lock is named by up to RDLOCK_RES_NAME_MAX bytes. The
 * structures are opaque; their layout is private to rdlock (lockspace-pri.h).
 *
 * Sleeping rules: every call here may sleep (it issues remote operations
 * and waits for them) except rdlock_lock_async(), which only queues work
 * and may be called from any process context that can allocate with
 * GFP_NOFS, writeback included. None may be called from atomic context.
 *
 * Errors common to the calls that reach other nodes: -ENOTCONN when the
 * cluster is not up or the lock's home node is not connected, -ETIMEDOUT
 * when a remote operation timed out, -EIO/-ECONNRESET when a connection
 * failed under it. Such a failure of an acquisition never leaves a ticket
 * behind that blocks others: it is completed in the background. An
 * operation whose outcome the failure hid (the verbs backend: the home
 * keeps no record) is settled too: by the CAS spinlock from its word, by
 * the bakery through a census of every node's tickets (design.rst, "The
 * bakery's census"), in which an acquisition takes a new ticket rather
 * than fail.
 * -ESHUTDOWN: the lockspace was lost with a lock table (this node's cluster
 * went down, or a node restarted with a new table); close it and open the
 * name again. Documentation/rdlock/kernel-api.rst has the details.
 */
#ifndef _RDLOCK_RDLOCK_H
#define _RDLOCK_RDLOCK_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/rdlock.h>

struct rdlock_ls;
struct rdlock_lock;

/*
 * rdlock_ls_attr.flags for kernel users only: every name has a value block
 * of RDLOCK_LVB_LEN bytes and a state word in its home's table
 * (rdlock_lvb_get(), rdlock_lvb_set()).
 */
#define RDLOCK_LS_LVB		_BITUL(7)
#define RDLOCK_LVB_LEN		64
/*
 * rdlock_ls_attr.flags for kernel users only: every name has a second
 * lock word, its gate, right after its lock word (not with CQL, whose
 * queue follows the lock word). A lock taken with RDLOCK_LKF_GATE is on
 * the gate: a second lock of the name that costs no second name entry
 * (the DLM layer's convert gate, kmod/dlm.c).
 */
#define RDLOCK_LS_GATE		_BITUL(6)
/*
 * rdlock_ls_attr.flags for kernel users only: a name's lock lives on the
 * node that claimed its entry (the first to resolve it), not on the
 * entry's home: a name one node uses costs no remote operation after it
 * is resolved. Every node's region then holds a placed entry for each
 * entry of every other node: @slots buys 1 / nodes of the names. Not
 * with RDLOCK_LS_UPDATE (-EINVAL).
 */
#define RDLOCK_LS_PLACE		_BITUL(8)
/* Slots of an RDLOCK_LS_PLACE lockspace: RDLOCK_LS_SLOTS_MAX per area. */
#define RDLOCK_LS_PLACE_SLOTS_MAX	(4 * RDLOCK_LS_SLOTS_MAX)
/*
 * rdlock_ls_attr.flags for kernel users only: this node keeps every name
 * it used resolved until it closes the lockspace or a name's home has no
 * free entry (rdlock_ls_trim(), and the resolve's own shrink), not only
 * a bounded cache of them (at most 1024): forgetting a name costs remote
 * operations (a file system deleting files forgot a name per lock).
 */
#define RDLOCK_LS_KEEP_NAMES	_BITUL(9)
/* rdlock_lock_opts.flags for kernel users only: on the name's gate word. */
#define RDLOCK_LKF_GATE		_BITUL(7)
/*
 * rdlock_lock_opts.flags for kernel users only, RDLOCK_LS_LVB: read the
 * value block with the grant, in the round trip of the operation that
 * takes the lock where the protocol allows (the CAS spinlock); the lock's
 * rdlock_lvb_get() then returns that copy until the lock stores one.
 */
#define RDLOCK_LKF_LVB		_BITUL(8)
/* Bits of the value block's state word the user may keep (the rest: tag). */
#define RDLOCK_LVB_FLAGS_MASK	0xffffU
/*
 * rdlock_lvb_set_words() flag, not stored: the state word's final WRITE
 * may be posted, not waited for (the bytes are written first either way).
 * This node's next operation on the name finds it written; if it fails,
 * the state word keeps no flags when bytes were written, else what it had.
 */
#define RDLOCK_LVB_POST		_BITUL(31)

/**
 * struct rdlock_ls_attr - what a lockspace is
 * @proto: enum rdlock_proto_id.
 * @flags: RDLOCK_LS_* (RDLOCK_LS_UPDATE: the lockspace allows update locks).
 * @lease_ms: 0: holders keep locks until they release them (what a file
 *	system needs); T: DSLR leases, a holder stalled for 2T is reset by
 *	its waiters; T is at least RDLOCK_LEASE_MS_MIN.
 * @omega_us: shortest sleep of bakery waiters between polls on this node;
 *	0: 50 us.
 * @slots: lock-table slots taken on every node (even; @slots / 2 names can
 *	be in use per node, @slots / (2 + 2^@queue_bits) with CQL).
 * @queue_bits: RDLOCK_PROTO_CQL: log2 of each lock's queue capacity,
 *	RDLOCK_CQL_QUEUE_BITS_MIN.._MAX, 0: default; 0 for other protocols.
 * @version_bits: RDLOCK_PROTO_CQL: entry version bits,
 *	RDLOCK_CQL_VERSION_BITS_MIN.._MAX, 0: default; 0 for other protocols.
 *
 * All but @omega_us must be the same on every node (0 and the default
 * count as the same). CQL takes no @lease_ms and no RDLOCK_LS_UPDATE.
 */
struct rdlock_ls_attr {
	u32 proto;
	u32 flags;
	u32 lease_ms;
	u32 omega_us;
	u32 slots;
	u8 queue_bits;
	u8 version_bits;
};

/**
 * struct rdlock_lock_opts - how to take a lock
 * @flags: RDLOCK_LKF_TRY: fail with -EAGAIN instead of waiting.
 * @timeout_ms: 0: wait until granted; else fail with -ETIMEDOUT after it.
 * @lease_slots: multi-slot lease (DSLR 5.1): tickets to take, 0 means 1;
 *	a holder's lease is @lease_slots times the lockspace's.
 */
struct rdlock_lock_opts {
	u32 flags;
	u32 timeout_ms;
	u32 lease_slots;
};

/**
 * typedef rdlock_done_t - completion of rdlock_lock_async()
 * @arg: the caller's argument.
 * @status: 0 when granted, else a negative errno as rdlock_lock() returns.
 * @lk: the lock when @status is 0, else NULL.
 *
 * Called once, in process context (an rdlock worker): it may sleep, and it
 * may call rdlock_unlock() and rdlock_convert() on @lk, but it should not
 * wait for other locks, since it holds up the worker.
 */
typedef void (*rdlock_done_t)(void *arg, int status, struct rdlock_lock *lk);

struct rdlock_ls *rdlock_ls_open(const char *name,
				 const struct rdlock_ls_attr *attr);
void rdlock_ls_close(struct rdlock_ls *ls);

struct rdlock_lock *rdlock_lock(struct rdlock_ls *ls, const void *name,
				size_t len, enum rdlock_lock_mode mode,
				const struct rdlock_lock_opts *opts);
int rdlock_lock_async(struct rdlock_ls *ls, const void *name, size_t len,
		      enum rdlock_lock_mode mode,
		      const struct rdlock_lock_opts *opts,
		      rdlock_done_t done, void *arg);
int rdlock_convert(struct rdlock_lock *lk, enum rdlock_lock_mode mode,
		   const struct rdlock_lock_opts *opts);
void rdlock_unlock(struct rdlock_lock *lk);
enum rdlock_lock_mode rdlock_lock_mode(const struct rdlock_lock *lk);
int rdlock_lvb_get(struct rdlock_lock *lk, void *buf, u32 *flags);
int rdlock_lvb_set(struct rdlock_lock *lk, const void *buf, u32 flags);
int rdlock_lvb_set_words(struct rdlock_lock *lk, const void *buf, u8 words,
			 u32 flags);

#endif /* _RDLOCK_RDLOCK_H */
