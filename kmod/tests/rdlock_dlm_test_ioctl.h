/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Test-only interface of rdlock_dlm_test.ko (/dev/rdlock_dlm_test): the
 * DLM kernel API (include/rdlock/dlm.h) driven from userspace, for
 * selftests/rdlock/dlm_test.c. NOT a stable uapi. An open file opens one
 * DLM lockspace and has RDLOCK_DLM_TEST_LOCKS lock slots, each with its
 * own status block, value block and queue of callbacks received.
 */
#ifndef _RDLOCK_DLM_TEST_IOCTL_H
#define _RDLOCK_DLM_TEST_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define RDLOCK_DLM_TEST_LOCKS	16
#define RDLOCK_DLM_TEST_LVB	64
#define RDLOCK_DLM_TEST_NAME	64

/**
 * struct rdlock_dlm_test_open - open a DLM lockspace for this file
 * @node_id: the id to pass to rdlock_dlm_open(); ~0: this node's.
 * @pad: zero.
 * @name: NUL-terminated lockspace name.
 */
struct rdlock_dlm_test_open {
	__u32 node_id;
	__u32 pad;
	char name[RDLOCK_DLM_TEST_NAME + 1];
};

/* rdlock_dlm_test_lock.test_flags: bad input the API must refuse. */
#define RDLOCK_DLM_TEST_NO_LKSB	0x1	/* pass a NULL lksb */
#define RDLOCK_DLM_TEST_NO_AST	0x2	/* pass a NULL ast */
#define RDLOCK_DLM_TEST_NO_LVB	0x4	/* sb_lvbptr NULL */
#define RDLOCK_DLM_TEST_LKID	0x8	/* use @lkid, not the slot's */
#define RDLOCK_DLM_TEST_NO_BAST	0x10	/* pass a NULL bast */

/**
 * struct rdlock_dlm_test_lock - rdlock_dlm_lock() or rdlock_dlm_unlock()
 * @slot: lock slot of the file, below RDLOCK_DLM_TEST_LOCKS.
 * @mode: RDLOCK_DLM_LOCK_* (lock only).
 * @flags: RDLOCK_DLM_LKF_* as given to the call.
 * @test_flags: RDLOCK_DLM_TEST_*.
 * @lkid: with RDLOCK_DLM_TEST_LKID, the lock id to use; out: the slot's.
 * @namelen: bytes of @name (lock only).
 * @name: resource name.
 * @lvb: with RDLOCK_DLM_LKF_VALBLK, copied into the slot's value block
 *	before the call (so that an unlock or a down-conversion stores it).
 */
struct rdlock_dlm_test_lock {
	__u32 slot;
	__s32 mode;
	__u32 flags;
	__u32 test_flags;
	__u32 lkid;
	__u32 namelen;
	__u8 name[RDLOCK_DLM_TEST_NAME];
	__u8 lvb[RDLOCK_DLM_TEST_LVB];
};

#define RDLOCK_DLM_TEST_AST	1
#define RDLOCK_DLM_TEST_BAST	2

/**
 * struct rdlock_dlm_test_event - wait for a slot's next callback
 * @slot: the lock slot.
 * @timeout_ms: how long to wait; 0: do not (ETIMEDOUT when none is queued).
 * @type: out: RDLOCK_DLM_TEST_AST or _BAST.
 * @status: out: an AST's sb_status.
 * @mode: out: a BAST's mode.
 * @sb_flags: out: an AST's sb_flags.
 * @lvb: out: an AST's value block as it was when the AST ran.
 * @seq: out: the callback's place among all of the file's callbacks
 *	(node_down's included, RDLOCK_DLM_TEST_IOC_DOWNS), from 1.
 */
struct rdlock_dlm_test_event {
	__u32 slot;
	__u32 timeout_ms;
	__u32 type;
	__s32 status;
	__s32 mode;
	__u32 sb_flags;
	__u8 lvb[RDLOCK_DLM_TEST_LVB];
	__u64 seq;
};

/**
 * struct rdlock_dlm_test_downs - the lockspace's node_down and lost callbacks
 * @count: out: how many node_down callbacks were called.
 * @node: out: the first one's node.
 * @seq: out: the first one's place among the file's callbacks.
 * @lost: out: how many lost callbacks were called.
 * @pad: out: zero.
 */
struct rdlock_dlm_test_downs {
	__u32 count;
	__u32 node;
	__u64 seq;
	__u32 lost;
	__u32 pad;
};

/**
 * struct rdlock_dlm_test_status - rdlock_dlm_lock_status() of a slot's lock
 * @slot: the lock slot.
 * @grmode: out.
 * @rqmode: out.
 * @waiting: out: RDLOCK_DLM_TEST_WAIT_*, the values of RDLOCK_DLM_WAIT_*.
 * @hold_ms: out: the lock's hold time now.
 */
#define RDLOCK_DLM_TEST_WAIT_NONE	0
#define RDLOCK_DLM_TEST_WAIT_GATE	1
#define RDLOCK_DLM_TEST_WAIT_MAIN	2

struct rdlock_dlm_test_status {
	__u32 slot;
	__s32 grmode;
	__s32 rqmode;
	__s32 waiting;
	__u32 hold_ms;
};

/* HOLD: rdlock_dlm_set_hold(@ms, @max_ms). */
struct rdlock_dlm_test_hold {
	__u32 ms;
	__u32 max_ms;
};

/*
 * FILL: PR with NOQUEUE on fresh resources "@prefix<i>", i from @first
 * up and round below @max, one at a time, until one fails or @max are
 * held; they stay held until FILL_RELEASE (or close). Out: @held, and
 * @status: the failed request's AST status (0 when @max were granted).
 */
struct rdlock_dlm_test_fill {
	__u32 max;
	__u32 held;
	__s32 status;
	__u32 first;
	char prefix[16];
};

/*
 * FSDLM_FILL: PR with NOQUEUE in a lockspace @ls of the stock kernel's
 * fs/dlm (dlm_controld must run; the file's first FILL joins it, and no
 * other user may have it), on "@prefix<i>" for i = @start + k * @stride,
 * k from 0 to @count - 1, the requests under way a few hundred at once;
 * the file holds at most @max locks in all (set by its first FILL). fs/dlm
 * masters a name where it is first asked for: a node that fills its own
 * share first, and the rest after every node did, masters its share.
 * They stay held until FSDLM_RELEASE (or close), which leaves @ls. Out:
 * @held (this call's), and @status: the first failed request's AST status
 * (0 when all were granted).
 */
struct rdlock_dlm_test_fsdlm_fill {
	__u32 max;
	__u32 start;
	__u32 stride;
	__u32 count;
	__u32 held;
	__s32 status;
	char prefix[16];
	char ls[RDLOCK_DLM_TEST_NAME];
};

#define RDLOCK_DLM_TEST_IOC_MAGIC	0xd7
#define RDLOCK_DLM_TEST_IOC_OPEN	_IOW(RDLOCK_DLM_TEST_IOC_MAGIC, 1, \
					     struct rdlock_dlm_test_open)
#define RDLOCK_DLM_TEST_IOC_LOCK	_IOWR(RDLOCK_DLM_TEST_IOC_MAGIC, 2, \
					      struct rdlock_dlm_test_lock)
#define RDLOCK_DLM_TEST_IOC_UNLOCK	_IOWR(RDLOCK_DLM_TEST_IOC_MAGIC, 3, \
					      struct rdlock_dlm_test_lock)
#define RDLOCK_DLM_TEST_IOC_EVENT	_IOWR(RDLOCK_DLM_TEST_IOC_MAGIC, 4, \
					      struct rdlock_dlm_test_event)
#define RDLOCK_DLM_TEST_IOC_STATUS	_IOWR(RDLOCK_DLM_TEST_IOC_MAGIC, 5, \
					      struct rdlock_dlm_test_status)
#define RDLOCK_DLM_TEST_IOC_FILL	_IOWR(RDLOCK_DLM_TEST_IOC_MAGIC, 6, \
					      struct rdlock_dlm_test_fill)
/* Unlock what FILL holds; -EIO if an unlock AST was not EUNLOCK. */
#define RDLOCK_DLM_TEST_IOC_FILL_RELEASE _IO(RDLOCK_DLM_TEST_IOC_MAGIC, 7)
/* rdlock_dlm_set_hold() of the file's lockspace. */
#define RDLOCK_DLM_TEST_IOC_HOLD	_IOW(RDLOCK_DLM_TEST_IOC_MAGIC, 8, \
					     struct rdlock_dlm_test_hold)
#define RDLOCK_DLM_TEST_IOC_DOWNS	_IOR(RDLOCK_DLM_TEST_IOC_MAGIC, 9, \
					     struct rdlock_dlm_test_downs)
#define RDLOCK_DLM_TEST_IOC_FSDLM_FILL	_IOWR(RDLOCK_DLM_TEST_IOC_MAGIC, 10, \
					      struct rdlock_dlm_test_fsdlm_fill)
#define RDLOCK_DLM_TEST_IOC_FSDLM_RELEASE _IO(RDLOCK_DLM_TEST_IOC_MAGIC, 11)
/*
 * rdlock_dlm_close() of the file's lockspace: 0 (the file has none then;
 * OPEN may open one again), -EBUSY while a lock is left (kept open),
 * -ENOTCONN without one.
 */
#define RDLOCK_DLM_TEST_IOC_CLOSE	_IO(RDLOCK_DLM_TEST_IOC_MAGIC, 12)

#endif /* _RDLOCK_DLM_TEST_IOCTL_H */
