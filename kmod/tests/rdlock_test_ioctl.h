/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Test-only interface of rdlock_test.ko (/dev/rdlock_test): raw transport
 * primitives for selftests and benchmarks. NOT a stable uapi: it changes
 * with the transport and exists only while the test module is loaded.
 */
#ifndef _RDLOCK_TEST_IOCTL_H
#define _RDLOCK_TEST_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

enum rdlock_test_opcode {
	RDLOCK_TEST_OP_READ	= 1,	/* result = slot */
	RDLOCK_TEST_OP_WRITE	= 2,	/* slot = arg0 */
	RDLOCK_TEST_OP_FAA	= 3,	/* result = slot; slot += arg0 */
	RDLOCK_TEST_OP_CAS	= 4,	/* result = slot; if == arg0, slot = arg1 */
	RDLOCK_TEST_OP_PING	= 5,	/* SEND a message, wait for the echo */
	/* RDLOCK_TEST_IOC_RANGE only: */
	RDLOCK_TEST_OP_READ_RANGE = 6,	/* vals[i] = slot + i */
	RDLOCK_TEST_OP_FAA_READ	= 7,	/* FAA on slot, then vals[i] = rslot + i */
	RDLOCK_TEST_OP_CAS_READ	= 8,	/* CAS on slot, then vals[i] = rslot + i */
};

/**
 * struct rdlock_test_op - one primitive on (node, slot)
 * @op: enum rdlock_test_opcode.
 * @node: target node id (our own id goes through the loopback path).
 * @slot: 8-byte slot of the target's lock table (ignored for PING).
 * @timeout_ms: 0 selects the transport's default.
 * @arg0: operand, see enum rdlock_test_opcode.
 * @arg1: operand, see enum rdlock_test_opcode.
 * @result: out: the value the operation returned.
 */
struct rdlock_test_op {
	__u32 op;
	__u32 node;
	__u32 slot;
	__u32 timeout_ms;
	__u64 arg0;
	__u64 arg1;
	__u64 result;
};

/**
 * struct rdlock_test_bench - time @iterations synchronous operations
 * @op: the operation (@op.arg0/arg1 are reused for every iteration).
 * @iterations: at most RDLOCK_TEST_MAX_SAMPLES.
 * @pad: zero.
 * @samples: user pointer to @iterations __u32 latencies in nanoseconds.
 */
struct rdlock_test_bench {
	struct rdlock_test_op op;
	__u32 iterations;
	__u32 pad;
	__u64 samples;
};

#define RDLOCK_TEST_MAX_SAMPLES	1048576U

/* Slots one RDLOCK_TEST_IOC_RANGE reads at most (one answer's words). */
#define RDLOCK_TEST_RANGE_MAX	4

/**
 * struct rdlock_test_range - a ranged READ, or an atomic and a READ at once
 * @op: RDLOCK_TEST_OP_READ_RANGE, RDLOCK_TEST_OP_FAA_READ or
 *	RDLOCK_TEST_OP_CAS_READ.
 * @node: target node id (our own goes through the loopback path).
 * @slot: READ_RANGE: the first slot read; else the atomic's slot.
 * @rslot: FAA_READ, CAS_READ: the first slot read, after the atomic.
 * @count: slots read: 1 to RDLOCK_TEST_RANGE_MAX, one fewer for FAA_READ.
 * @timeout_ms: 0 selects the transport's default.
 * @arg0: FAA_READ: what is added; CAS_READ: what is compared.
 * @arg1: CAS_READ: what is swapped in.
 * @value: out: FAA_READ, CAS_READ: the value the atomic returned.
 * @vals: out: the slots read.
 * @nread: out: slots read; a FAA_READ or CAS_READ reads none when its
 *	READ failed after the atomic was done.
 * @pad: zero.
 */
struct rdlock_test_range {
	__u32 op;
	__u32 node;
	__u32 slot;
	__u32 rslot;
	__u32 count;
	__u32 timeout_ms;
	__u64 arg0;
	__u64 arg1;
	__u64 value;
	__u64 vals[RDLOCK_TEST_RANGE_MAX];
	__u32 nread;
	__u32 pad;
};

/**
 * struct rdlock_test_info - transport facts a test needs
 * @node_id: this node.
 * @backend: enum rdlock_backend in use (0 until resolved).
 * @table_slots: slots in every node's lock table.
 * @first_free_slot: first slot tests may use; lower ones are the transport's.
 * @ready: 1 when every configured node is connected.
 * @pad: zero.
 */
struct rdlock_test_info {
	__u32 node_id;
	__u32 backend;
	__u32 table_slots;
	__u32 first_free_slot;
	__u32 ready;
	__u32 pad;
};

enum rdlock_test_proto {
	RDLOCK_TEST_PROTO_BAKERY	= 0,
	RDLOCK_TEST_PROTO_CASLOCK	= 1,
	RDLOCK_TEST_PROTO_CQL		= 2,
	RDLOCK_TEST_PROTO_NR,
};

/* rdlock_test_lock.mode: the protocol layer's enum rdlock_mode. */
enum rdlock_test_mode {
	RDLOCK_TEST_MODE_SHARED		= 0,
	RDLOCK_TEST_MODE_EXCLUSIVE	= 1,
	RDLOCK_TEST_MODE_UPDATE		= 2,
	RDLOCK_TEST_MODE_NR,
};

/* rdlock_test_lock.flags */
#define RDLOCK_TEST_LOCK_UPDATE_WORD	0x1	/* six-counter update word */
/*
 * The holder's clock stands still from its grant to its release, as a
 * paused guest's does: a holder that sleeps before UNLOCK believes it
 * held the lock for no time at all (lease tests).
 */
#define RDLOCK_TEST_LOCK_STILL_CLOCK	0x2
/*
 * CQL: hierarchical locking, task-fair; with CQL_PHASE_FAIR too,
 * phase-fair (the lockspace flags RDLOCK_LS_CQL_*). Every user of the lock
 * must pass the same.
 */
#define RDLOCK_TEST_LOCK_CQL_HIER	0x4
#define RDLOCK_TEST_LOCK_CQL_PHASE_FAIR	0x8

/**
 * struct rdlock_test_lock - take a lock word directly with a protocol
 * @proto: enum rdlock_test_proto.
 * @mode: enum rdlock_test_mode; update needs
 *	%RDLOCK_TEST_LOCK_UPDATE_WORD, else EINVAL from the protocol.
 * @node: home node of the lock word.
 * @slot: slot of the lock word (at or above first_free_slot).
 * @timeout_ms: 0: wait as long as it takes (fatal signals still end it).
 * @lease_ms: protocol lease, 0 for none.
 * @handle: out: what RDLOCK_TEST_IOC_UNLOCK takes.
 * @remote_ops: out: remote operations the acquisition took.
 * @flags: RDLOCK_TEST_LOCK_*; the word's layout must be the same for every
 *	user of one slot.
 * @k: slots of a multi-slot lease; 0 means 1.
 * @queue_bits: CQL: log2 of the queue capacity (0: the default, 5); the
 *	lock takes the header slot and 2^@queue_bits slots after it. Every
 *	node lets at most capacity / (configured nodes) of its clients into
 *	one lock's queue at a time. 0 for the other protocols.
 * @version_bits: CQL: version bits (0: the default, 16). 0 for the others.
 * @pad: zero.
 * @prev: out: the word the acquiring operation returned (bakery, CQL: the
 *	FETCH_AND_ADD's; a CQL waiter's position is qhead + qsize of it).
 *
 * Locks belong to the open file: closing it releases them.
 */
struct rdlock_test_lock {
	__u32 proto;
	__u32 mode;
	__u32 node;
	__u32 slot;
	__u32 timeout_ms;
	__u32 lease_ms;
	__u32 handle;
	__u32 remote_ops;
	__u32 flags;
	__u32 k;
	__u8 queue_bits;
	__u8 version_bits;
	__u16 pad;
	__u32 pad2;
	__u64 prev;
};

/**
 * struct rdlock_test_upgrade - upgrade a held update lock to write
 * @handle: from RDLOCK_TEST_IOC_LOCK, mode 2.
 * @timeout_ms: 0: wait as long as it takes (fatal signals still end it).
 * @remote_ops: out: remote operations the upgrade took.
 * @pad: zero.
 *
 * ETIMEDOUT and EINTR leave the update lock held, not upgraded; EAGAIN
 * (leases) means a reset took it: the handle stays valid for UNLOCK, which
 * then does nothing. EBUSY while another upgrade of the handle runs.
 */
struct rdlock_test_upgrade {
	__u32 handle;
	__u32 timeout_ms;
	__u32 remote_ops;
	__u32 pad;
};

/**
 * struct rdlock_test_proto_stats - protocol counters of one open file
 * @acquires: acquisitions started.
 * @waits: acquisitions not granted by their first operation.
 * @remote_ops: remote operations.
 * @ops: remote operations by RDLOCK_TEST_OP_* - 1 (READ, WRITE, FAA, CAS).
 * @retries: new tickets after a revocation or an over-limit word.
 * @stall_resets: lease resets.
 * @overflow_resets: resets to zero after crossing COUNT_MAX.
 * @lease_expiries: releases that found their ticket revoked.
 * @abandoned: acquisitions that timed out or were killed.
 * @upgrades: successful upgrades.
 * @upgrade_waits: upgrades that waited for readers.
 *
 * Work finished in the background after the caller left (abandoned
 * tickets, overflow resets) counts only in the global debugfs counters.
 */
struct rdlock_test_proto_stats {
	__u64 acquires;
	__u64 waits;
	__u64 remote_ops;
	__u64 ops[4];
	__u64 retries;
	__u64 stall_resets;
	__u64 overflow_resets;
	__u64 lease_expiries;
	__u64 abandoned;
	__u64 upgrades;
	__u64 upgrade_waits;
	__u64 notifies;
	__u64 releases;
	__u64 acq_ops[4];
	__u64 rel_ops[4];
};

/**
 * struct rdlock_test_lock_bench - acquire and release one lock in a loop
 * @lock: the lock (@lock.mode for every iteration unless @exclusive_every;
 *	@lock.flags and @lock.k for every one); its output fields must be
 *	zero.
 * @iterations: at most RDLOCK_TEST_MAX_SAMPLES.
 * @exclusive_every: if non-zero, iteration i is exclusive when
 *	i % @exclusive_every == 0 and shared otherwise.
 * @rmw_node: node of @rmw_slot.
 * @rmw_slot: if non-zero, every exclusive holder adds 1 to this slot with a
 *	non-atomic READ and WRITE: a lost update shows a broken exclusion.
 * @pad: zero.
 * @samples: user pointer to @iterations __u32 nanoseconds of acquire plus
 *	release, or 0.
 * @exclusive_grants: out: exclusive acquisitions done.
 * @remote_ops: out: remote operations of all acquisitions and releases.
 * @acquire_ops: out: those of the acquisitions alone.
 * @waits: out: acquisitions not granted by their first operation.
 * @notifies: out: CQL notifications this loop's releases sent.
 */
struct rdlock_test_lock_bench {
	struct rdlock_test_lock lock;
	__u32 iterations;
	__u32 exclusive_every;
	__u32 rmw_node;
	__u32 rmw_slot;
	__u32 pad[2];
	__u64 samples;
	__u64 exclusive_grants;
	__u64 remote_ops;
	__u64 acquire_ops;
	__u64 waits;
	__u64 notifies;
};

#define RDLOCK_TEST_IOC_MAGIC	0xD8
#define RDLOCK_TEST_IOC_OP	_IOWR(RDLOCK_TEST_IOC_MAGIC, 1, struct rdlock_test_op)
#define RDLOCK_TEST_IOC_BENCH	_IOWR(RDLOCK_TEST_IOC_MAGIC, 2, struct rdlock_test_bench)
#define RDLOCK_TEST_IOC_INFO	_IOR(RDLOCK_TEST_IOC_MAGIC, 3, struct rdlock_test_info)
#define RDLOCK_TEST_IOC_LOCK	_IOWR(RDLOCK_TEST_IOC_MAGIC, 4, struct rdlock_test_lock)
#define RDLOCK_TEST_IOC_UNLOCK	_IOW(RDLOCK_TEST_IOC_MAGIC, 5, __u32)
#define RDLOCK_TEST_IOC_LOCK_BENCH \
	_IOWR(RDLOCK_TEST_IOC_MAGIC, 6, struct rdlock_test_lock_bench)
#define RDLOCK_TEST_IOC_UPGRADE \
	_IOWR(RDLOCK_TEST_IOC_MAGIC, 7, struct rdlock_test_upgrade)
#define RDLOCK_TEST_IOC_STATS \
	_IOR(RDLOCK_TEST_IOC_MAGIC, 8, struct rdlock_test_proto_stats)
/* Wait for this node's background protocol work (abandoned tickets, resets). */
#define RDLOCK_TEST_IOC_FLUSH	_IO(RDLOCK_TEST_IOC_MAGIC, 9)
#define RDLOCK_TEST_IOC_RANGE \
	_IOWR(RDLOCK_TEST_IOC_MAGIC, 10, struct rdlock_test_range)

#endif /* _RDLOCK_TEST_IOCTL_H */
