/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the DLM selftests (dlm_test.c, nodedown_test.c) share: the API's
 * values, calls of /dev/rdlock_dlm_test and the harness checks on them.
 * Include after kselftest_harness.h. A fixture that uses BARRIER() has
 * "raw" (/dev/rdlock_test) and "env" (struct dlm_env).
 */
#ifndef _RDLOCK_SELFTEST_DLMLIB_H
#define _RDLOCK_SELFTEST_DLMLIB_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdltest.h"
#include "rdlock_dlm_test_ioctl.h"

#define DLM_DEV		"/dev/rdlock_dlm_test"

/* include/rdlock/dlm.h's values (a kernel header: not includable here). */
#define NL		0
#define PR		3
#define PW		4
#define EX		5
#define LKF_NOQUEUE	0x1
#define LKF_CANCEL	0x2
#define LKF_CONVERT	0x4
#define LKF_VALBLK	0x8
#define LKF_LOCAL	0x00100000
#define EUNLOCK		0x10002
#define ECANCEL		0x10001
#define SBF_VALNOTVALID	0x02

/*
 * Raw slots relative to B, on node 0. Barriers: 0 .. 31 (lvb: 15 .. 23
 * and 25; conversions: 24; room: 26, 27; late_open: 28 .. 31;
 * notice_order: 35; link_blip: 36 .. 41, 58; hold: 42, 43; kick: 44 .. 48,
 * 59; local: 49 .. 51; local_defer: 52 .. 57; link_down: 60, 61;
 * close: 62; node_waits: 34, 63, each twice).
 */
#define R_BARRIER	0
#define R_COUNTER	32
#define R_CANCELS	33

#define WAIT_MS		30000	/* a callback that must come */
#define STEP_S		300	/* the harness's limit per test */
#define QUIET_MS	300	/* a callback that must not */
#define HOLD_MAX_MS	1000	/* RDLOCK_DLM_HOLD_MAX_MS */
/* "hold"'s: the longest, so that its second step starts well within it. */
#define HOLD_MS		HOLD_MAX_MS
/* Its adaptive hold time: the lockspace's, and how far it may grow. */
#define ADAPT_MS	100
#define ADAPT_MAX_MS	400
#define BOUNCE_MS	1000	/* RDLOCK_DLM_BOUNCE_MS */

#define DONE_DELAY	"inject_dlm_done_delay_ms"
#define POLL_MS		"inject_dlm_poll_ms"
#define LOCAL_DELAY	"inject_dlm_local_delay_ms"
#define LOST_MSGS	"inject_lost_msgs"
#define LINK_DOWN	"inject_link_down_ms"
#define LOCAL_DEFER	"/sys/module/rdlock/parameters/dlm_local_defer_ms"
#define LOCAL_DEFER_MS	2000	/* its default */
#define NODE_WAITS	"/sys/module/rdlock/parameters/dlm_node_waits_max"
#define NODE_WAITS_DEFAULT	65536

struct dlm_env {
	__u32 self, nr_nodes, iters, barrier_timeout, base, room;
};

#define BARRIER(rel) do {						\
	char msg_[160];							\
									\
	ASSERT_EQ(0, rdl_barrier(self->raw, self->env.nr_nodes,	\
				 self->env.barrier_timeout,		\
				 self->env.base + R_BARRIER + (rel), 1,	\
				 msg_, sizeof(msg_)))			\
		TH_LOG("%s", msg_);					\
} while (0)

/* rdlock_dlm_lock() on @slot: 0 or the errno it returned. */
static inline int dl_lock_x(int fd, __u32 slot, int mode, __u32 flags,
			    const char *name, __u32 test_flags, __u32 lkid)
{
	struct rdlock_dlm_test_lock l = {
		.slot = slot, .mode = mode, .flags = flags,
		.test_flags = test_flags, .lkid = lkid,
	};

	if (name) {
		l.namelen = strlen(name);
		memcpy(l.name, name, l.namelen);
	}
	return rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_LOCK, &l);
}

static inline int dl_lock(int fd, __u32 slot, int mode, __u32 flags,
			  const char *name)
{
	return dl_lock_x(fd, slot, mode, flags, name, 0, 0);
}

static inline int dl_conv(int fd, __u32 slot, int mode, __u32 flags)
{
	return dl_lock_x(fd, slot, mode, flags | LKF_CONVERT, NULL, 0, 0);
}

static inline int dl_unlock_x(int fd, __u32 slot, __u32 flags,
			      __u32 test_flags, __u32 lkid)
{
	struct rdlock_dlm_test_lock l = {
		.slot = slot, .flags = flags, .test_flags = test_flags,
		.lkid = lkid,
	};

	return rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_UNLOCK, &l);
}

static inline int dl_unlock(int fd, __u32 slot, __u32 flags)
{
	return dl_unlock_x(fd, slot, flags, 0, 0);
}

/* The slot's lock id (as the last call left it in the status block). */
static inline __u32 dl_lkid(int fd, __u32 slot)
{
	struct rdlock_dlm_test_lock l = {
		.slot = slot, .test_flags = RDLOCK_DLM_TEST_LKID,
		.lkid = 0x7fffffff,
	};

	/* An unlock of a lock id that cannot exist only reports the slot's. */
	rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_UNLOCK, &l);
	return l.lkid;
}

/*
 * Wait until @slot's request waits for other holders: on the main name
 * (at EX: holding the gate; a PR->EX conversion is then committed), or
 * unless @main_only at the gate too. False if it did not within WAIT_MS or
 * the status call failed.
 */
static inline bool dl_waiting(int fd, __u32 slot, bool main_only)
{
	struct rdlock_dlm_test_status s = { .slot = slot };
	double end = rdl_now() + WAIT_MS / 1000.0;

	while (!ioctl(fd, RDLOCK_DLM_TEST_IOC_STATUS, &s)) {
		if (s.waiting == RDLOCK_DLM_TEST_WAIT_MAIN ||
		    (!main_only && s.waiting != RDLOCK_DLM_TEST_WAIT_NONE))
			return true;
		if (rdl_now() > end)
			break;
		usleep(1000);
	}
	return false;
}

static inline bool dl_waits_main(int fd, __u32 slot)
{
	return dl_waiting(fd, slot, true);
}

static inline int dl_event(int fd, __u32 slot, __u32 timeout_ms,
			   struct rdlock_dlm_test_event *e)
{
	memset(e, 0, sizeof(*e));
	e->slot = slot;
	e->timeout_ms = timeout_ms;
	return rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_EVENT, e);
}

/*
 * The checks below are macros for the harness's ASSERT/EXPECT (they need
 * _metadata and return from the test); each copies its arguments once.
 */

/* The slot's next callback must be an AST with status @st. */
#define EXPECT_AST(fd, slot, st) do {					\
	int fd_ = (fd), sl_ = (slot), st_ = (st);			\
	struct rdlock_dlm_test_event e_;				\
									\
	ASSERT_EQ(0, dl_event(fd_, sl_, WAIT_MS, &e_))			\
		TH_LOG("slot %d: no callback", sl_);			\
	EXPECT_EQ(RDLOCK_DLM_TEST_AST, e_.type)				\
		TH_LOG("slot %d: BAST(%d) instead of AST(%d)", sl_,	\
		       e_.mode, st_);					\
	EXPECT_EQ(st_, e_.status)					\
		TH_LOG("slot %d: AST status", sl_);			\
} while (0)

/* The slot's next callback must be a BAST for mode @md. */
#define EXPECT_BAST(fd, slot, md) do {					\
	int fd_ = (fd), sl_ = (slot), md_ = (md);			\
	struct rdlock_dlm_test_event e_;				\
									\
	ASSERT_EQ(0, dl_event(fd_, sl_, WAIT_MS, &e_))			\
		TH_LOG("slot %d: no BAST", sl_);			\
	EXPECT_EQ(RDLOCK_DLM_TEST_BAST, e_.type)			\
		TH_LOG("slot %d: AST(%d) instead of BAST(%d)", sl_,	\
		       e_.status, md_);					\
	EXPECT_EQ(md_, e_.mode);					\
} while (0)

/* No callback may be queued on the slot. */
#define EXPECT_QUIET(fd, slot) do {					\
	int sl_ = (slot);						\
	struct rdlock_dlm_test_event e_;				\
									\
	EXPECT_EQ(ETIMEDOUT, dl_event((fd), sl_, QUIET_MS, &e_))	\
		TH_LOG("slot %d: unexpected %s %d", sl_,		\
		       e_.type == RDLOCK_DLM_TEST_AST ? "AST" : "BAST",	\
		       e_.type == RDLOCK_DLM_TEST_AST ? e_.status :	\
							e_.mode);	\
} while (0)

/* Lock, expect the grant. */
#define GRANT(fd, slot, md, fl, nm) do {				\
	int gfd_ = (fd), gsl_ = (slot);					\
									\
	ASSERT_EQ(0, dl_lock(gfd_, gsl_, (md), (fl), (nm)));		\
	EXPECT_AST(gfd_, gsl_, 0);					\
} while (0)

/* Convert, expect the grant. */
#define CONV(fd, slot, md, fl) do {					\
	int gfd_ = (fd), gsl_ = (slot);					\
									\
	ASSERT_EQ(0, dl_conv(gfd_, gsl_, (md), (fl)));			\
	EXPECT_AST(gfd_, gsl_, 0);					\
} while (0)

/* Unlock: exactly one AST, EUNLOCK, and nothing after it. */
#define UNLOCK(fd, slot) do {						\
	int gfd_ = (fd), gsl_ = (slot);					\
									\
	ASSERT_EQ(0, dl_unlock(gfd_, gsl_, 0));				\
	EXPECT_AST(gfd_, gsl_, EUNLOCK);				\
	EXPECT_QUIET(gfd_, gsl_);					\
} while (0)

/*
 * Slot 0 at EX, slot 1 at NL, on one resource: slot 1 asks for PR, slot 0
 * gets BAST(PR) and goes to NL, slot 1 is granted; slot 0 asks for EX,
 * slot 1 gets BAST(EX) and goes to NL, slot 0 is granted. Each step one
 * callback exactly; @waiting: check that slot 1 waits for slot 0 (300 ms
 * of quiet).
 */
static inline void hand_over(struct __test_metadata *_metadata, int fd,
			     bool waiting)
{
	ASSERT_EQ(0, dl_conv(fd, 1, PR, 0));
	EXPECT_BAST(fd, 0, PR);
	if (waiting)
		EXPECT_QUIET(fd, 1);
	CONV(fd, 0, NL, 0);
	EXPECT_AST(fd, 1, 0);
	ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
	EXPECT_BAST(fd, 1, EX);
	CONV(fd, 1, NL, 0);
	EXPECT_AST(fd, 0, 0);
}

static inline void res_name(char *buf, size_t len, const char *what, __u32 node)
{
	snprintf(buf, len, "%s-%u", what, node);
}

#endif /* _RDLOCK_SELFTEST_DLMLIB_H */
