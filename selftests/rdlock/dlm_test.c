// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-node test of the DLM kernel API (include/rdlock/dlm.h) through the
 * test client rdlock_dlm_test.ko (/dev/rdlock_dlm_test), run at once on
 * every node of a guest cluster. Barriers and the shared counter are raw
 * slots of /dev/rdlock_test on node 0, B .. B + 63 (B = first_free_slot +
 * RDL_FIRST_TEST_SLOT, above the final barrier's slots).
 *
 * bad_input	every node: the exact errno of each refused call, and no
 *		callback for any of them.
 * conversions	every node, its own resource: NL, PR, EX and every
 *		conversion between them, each with exactly one AST (status 0)
 *		and no BAST; two locks of one node conflict like two nodes';
 *		NOQUEUE gets -EAGAIN through the AST and keeps the old mode;
 *		a waiting request makes the holder's BAST; unlock ASTs.
 * cancel	node 0: cancel of a waiting new lock (ECANCEL, the lock id is
 *		gone), of a waiting NL->PR conversion (ECANCEL, still NL),
 *		of a granted lock (no callback), of a committed PR->EX
 *		conversion (normal grant), two PR->EX converters on one
 *		node resolving through BAST and cancel, and a PR holder
 *		converting to EX after a new EX request that held the gate
 *		and waited for that PR was cancelled (granted: the abandoned
 *		wait gave the gate back).
 * lvb		every node, its own resource: never stored, VALBLK gives
 *		zeroes and RDLOCK_DLM_SBF_VALNOTVALID; stored by EX->NL,
 *		EX->PR and unlock with VALBLK, read back exactly by PR and EX
 *		grants; EX without VALBLK keeps the stored value valid and
 *		costs no value block operation; a store writes only the
 *		words that changed, nothing when none did. Then
 *		each node in turn stores a value on one resource and every
 *		node reads exactly it.
 * bast_nodes	every node holds PR; node 0 asks for EX: every other node
 *		gets BAST(EX), gives the lock up, and node 0 is granted; a
 *		holder granted after a waiter's notice gets its BAST then.
 * late_open	node 1 closes the lockspace; node 0 holds PR and waits for
 *		EX; node 1 then opens the lockspace again and is granted PR
 *		at once: it must get BAST(EX) from the wait it never saw the
 *		notice of (the lost BAST of the OCFS2 mount hang: a node that
 *		mounted later held the superblock lock at EX and was never
 *		asked for it).
 * converters	nodes 0 and 1 hold PR and convert to EX at once: one (or
 *		both, if neither got to the gate yet) cancels after a BAST
 *		and gives up PR; both get EX in the end.
 * count	every node increments a counter on node 0 under EX (NL->EX,
 *		non-atomic READ + WRITE, EX->NL) RDLOCK_DLM_ITERS times; the
 *		counter must be exactly nodes * iterations.
 * notice_order	node 0 hands one resource back and forth between two of
 *		its locks 10 times, each hand-over exactly one BAST and one
 *		AST, with every done notice held back 20 ms (debugfs
 *		inject_dlm_done_delay_ms; a busy send buffer or a hello's
 *		repeats hold it back in real life): a grant must not get a
 *		BAST for a wait that ended before the grant's caller asked.
 * link_blip	node 0's wait notice to node 1 is lost with their link (debugfs
 *		inject_lost_msgs); node 1, holding EX, must still get
 *		BAST(EX) once the link is back, and node 0 be granted. Then
 *		node 1's done notice to node 0 is lost the same way: node 0
 *		must forget that wait once the link is back (dlm waits_known
 *		0), and its next EX grant get no BAST. Each link fails when
 *		no lock operation is in flight on it (a verbs operation would
 *		have an unknown outcome): node 0 resolves the name first, so
 *		the lock lives in its table, and its posted releases do not
 *		cross the link.
 * link_down	node 0's links to every peer go down for 4 s, the tables
 *		kept (inject_link_down_ms), and node 0 asks meanwhile for
 *		NOQUEUE EX locks of fresh resources (granted, or -EAGAIN for
 *		those homed on a peer: never -ENOTCONN), blocking EX locks of
 *		fresh resources and PR of one node 1 holds EX: all granted
 *		once the links are back, node 1 getting BAST(PR).
 * hold		every node, its own resource, two locks, a 1000 ms hold time
 *		(rdlock_dlm_set_hold()): a BAST reaches a fresh grant no
 *		sooner than 1000 ms after its request started, and is counted
 *		held (basts_held); a held BAST goes at once, before the AST,
 *		when its lock converts meanwhile; a PR grant is not held;
 *		with 100 ms growing up to
 *		400 ms, a grant that waited over 200 ms less than 1 s after
 *		the lock's BAST makes its hold 200 ms (holds_raised), one that
 *		did not wait 100 ms again, one that waited as long but had no
 *		BAST for over 1 s keeps 100 ms;
 *		with 0 none is held; a hold above 1000 ms, or above its
 *		maximum, is refused (EINVAL).
 * kick		node 1 holds EX; node 0's EX request waits with its polls
 *		60 s apart (debugfs inject_dlm_poll_ms): node 1's unlock
 *		kicks it, exactly one kick sent and one received, and it is
 *		granted within WAIT_MS, asleep exactly once. Node 0 resolves
 *		the name first, so the lock lives in its table: node 1's
 *		posted releases reach it on the queue pair the kick takes
 *		after them, and the kicked try finds the lock released.
 *		Then node 0's request waiting so is cancelled: its wait
 *		ends (take_fail) within WAIT_MS, without waking for a poll.
 * local	node 0, its LOCAL takes held back 3 s each (debugfs
 *		inject_dlm_local_delay_ms): a new EX lock asked for with
 *		RDLOCK_DLM_LKF_LOCAL is granted while its take is under way
 *		(dlm local_takes 1); another EX lock of node 0 going to NL
 *		waits for that take (local_takes 0 at its AST, local_waits
 *		one more); a LOCAL PR with VALBLK gets zeroes and
 *		VALNOTVALID, and its conversion to NL waits for its own take.
 *		Then node 1 finds the first lock held (NOQUEUE EX: -EAGAIN),
 *		asks for EX, node 0 gets BAST(EX) and unlocks, node 1 is
 *		granted. The same LOCAL flag on a conversion: EINVAL.
 * local_defer	node 0, its LOCAL takes deferred 60 s (module parameter
 *		dlm_local_defer_ms): a LOCAL EX lock is granted and not
 *		taken; an EX lock unlocked meanwhile has its AST at once and
 *		its release parked (local_parks, local_parked 1). Node 1's
 *		EX request for that resource starts the LOCAL take
 *		(local_forced), the release follows, node 1 is granted, and
 *		finds the LOCAL lock held (NOQUEUE: -EAGAIN). A LOCAL lock
 *		unlocked before its take takes nothing (local_abandoned; two
 *		takes in all, the other lock's gate and main word) and lets
 *		a parked release go without a force; node 1 then gets both
 *		(NOQUEUE). With 200 ms a LOCAL lock is taken by its age
 *		(local_aged): node 1 finds it held. A LOCAL request for a
 *		resource whose release is parked is not granted early: it
 *		forces the takes and is granted once the release went. A
 *		second lock of node 0 on a LOCAL lock's resource starts that
 *		lock's take and waits for it (NOQUEUE: -EAGAIN).
 * close	node 0: closing its lockspace with a lock granted is refused
 *		(EBUSY, as fs/dlm's release without force) and changes
 *		nothing: the lock converts and unlocks as before; then the
 *		close succeeds, the file has no lockspace (a request, a
 *		second close: ENOTCONN), and opens it again.
 * room		node 0 holds PR (NOQUEUE) on fresh resources until one finds
 *		no free name entry: that one gets -EAGAIN, not -ENOSPC, after
 *		exactly one room wait; a queued PR request on another fresh
 *		resource then is granted once node 0 gives the others back
 *		(it may have waited for room meanwhile).
 * node_waits	node 0 holds EX with dlm_node_waits_max 4; node 1 makes 8
 *		waiting requests: node 0 remembers exactly 4 (waits_known),
 *		counts 4 dropped, its holder gets the BAST; node 1's cancels
 *		make it forget the 4.
 * locks	every node holds EX on its own resource with a stored value
 *		block, node 0 PR on a shared one that node 1 waits for EX
 *		on, and NL on a name of 63 bytes: RDLOCK_IOC_LOCKS of every
 *		node (RDLOCK_LOCKS_QUERY_CLUSTER, on /dev/rdlock), on each
 *		node, lists exactly those locks with their nodes, states,
 *		modes, ids, names and lvb-valid flags, every other node asked
 *		and answered; by name, the one lock; a capacity of 1, the
 *		whole count and one entry written; once the last node closed
 *		the lockspace, node 0 asks it no more. The nodes meet through
 *		the lists themselves: each waits for PR on a lock node 0
 *		holds EX once it checked, and node 0 lets go once it sees
 *		them all wait.
 *
 * Env: RDLOCK_NODE_ID, RDLOCK_NR_NODES, RDLOCK_DLM_ITERS (default 30),
 * RDLOCK_BARRIER_TIMEOUT (s, default 300), RDLOCK_DLM_ROOM (0: skip room).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdltest.h"
#include "rdlock_dlm_test_ioctl.h"

#include <kselftest_harness.h>

#include "select.h"

#include "dlmlib.h"

#define LS_NAME		"dlmtest"
#define LONG_NAME	"0123456789012345678901234567890123456789" \
			"012345678901234567890123"

FIXTURE(dlm) {
	int raw;	/* /dev/rdlock_test */
	int fd;		/* /dev/rdlock_dlm_test */
	struct dlm_env env;
	double start;
};

FIXTURE_SETUP(dlm)
{
	struct dlm_env *e = &self->env;
	struct rdlock_dlm_test_open o = { .node_id = ~0U };
	struct rdlock_test_info info;

	self->start = rdl_now();
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NODE_ID", -1, &e->self));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NR_NODES", -1, &e->nr_nodes));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_DLM_ITERS", 30, &e->iters));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_DLM_ROOM", 1, &e->room));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 300,
				 &e->barrier_timeout));
	ASSERT_LT(e->self, e->nr_nodes);
	ASSERT_LE(2, e->nr_nodes);
	ASSERT_GE(4, e->nr_nodes);	/* the barrier slots of "lvb" */
	self->raw = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->raw);
	ASSERT_EQ(0, ioctl(self->raw, RDLOCK_TEST_IOC_INFO, &info));
	ASSERT_EQ(1, info.ready);
	ASSERT_LE(info.first_free_slot + RDL_FIRST_TEST_SLOT + 64,
		  info.table_slots);
	e->base = info.first_free_slot + RDL_FIRST_TEST_SLOT;
	self->fd = open(DLM_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	strcpy(o.name, LS_NAME);
	ASSERT_EQ(0, rdl_ioctl(self->fd, RDLOCK_DLM_TEST_IOC_OPEN, &o));
}

FIXTURE_TEARDOWN(dlm)
{
	printf("# %s took %.1f s\n", _metadata->name, rdl_now() - self->start);
	/*
	 * A failed notice_order, link_blip, link_down or kick leaves no
	 * fault behind.
	 */
	rdl_debugfs_write(DONE_DELAY, 0);
	rdl_debugfs_write(POLL_MS, 0);
	rdl_debugfs_write(LOCAL_DELAY, 0);
	rdl_write_u32(LOCAL_DEFER, LOCAL_DEFER_MS);
	rdl_write_u32(NODE_WAITS, NODE_WAITS_DEFAULT);
	rdl_debugfs_write(LOST_MSGS, 0);
	rdl_debugfs_write(LINK_DOWN, 0);
	close(self->fd);
	close(self->raw);
}

TEST_F_TIMEOUT(dlm, bad_input, STEP_S)
{
	int fd = self->fd;
	char name[32];
	__u32 lkid;

	res_name(name, sizeof(name), "bad", self->env.self);
	EXPECT_EQ(EINVAL, dl_lock(fd, 0, PR, 0x100, name));
	EXPECT_EQ(EINVAL, dl_lock(fd, 0, PR, LKF_CANCEL, name));
	EXPECT_EQ(EINVAL, dl_lock(fd, 0, 7, 0, name));
	EXPECT_EQ(EINVAL, dl_lock(fd, 0, -1, 0, name));
	EXPECT_EQ(EOPNOTSUPP, dl_lock(fd, 0, PW, 0, name));
	EXPECT_EQ(EINVAL, dl_lock_x(fd, 0, PR, 0, name,
				    RDLOCK_DLM_TEST_NO_LKSB, 0));
	EXPECT_EQ(EINVAL, dl_lock_x(fd, 0, PR, 0, name,
				    RDLOCK_DLM_TEST_NO_AST, 0));
	EXPECT_EQ(EINVAL, dl_lock_x(fd, 0, PR, LKF_VALBLK, name,
				    RDLOCK_DLM_TEST_NO_LVB, 0));
	EXPECT_EQ(EINVAL, dl_lock(fd, 0, PR, 0, ""));
	/* 64 bytes: one more than RDLOCK_DLM_RESNAME_MAX. */
	EXPECT_EQ(EINVAL, dl_lock(fd, 0, PR, 0, LONG_NAME));
	EXPECT_EQ(ENOENT, dl_lock_x(fd, 0, PR, LKF_CONVERT, NULL,
				    RDLOCK_DLM_TEST_LKID, 0x12345));
	EXPECT_EQ(ENOENT, dl_unlock_x(fd, 0, 0, RDLOCK_DLM_TEST_LKID,
				      0x12345));
	EXPECT_EQ(ENOENT, dl_unlock_x(fd, 0, LKF_CANCEL,
				      RDLOCK_DLM_TEST_LKID, 0x12345));
	EXPECT_QUIET(fd, 0);

	/* A lock that was unlocked is not held: no conversion, no unlock. */
	GRANT(fd, 1, PR, 0, name);
	lkid = dl_lkid(fd, 1);
	EXPECT_NE(0, lkid);
	EXPECT_EQ(EINVAL, dl_unlock(fd, 1, 0x100));
	EXPECT_EQ(EINVAL, dl_unlock_x(fd, 1, LKF_VALBLK,
				      RDLOCK_DLM_TEST_NO_LVB, 0));
	EXPECT_EQ(EINVAL, dl_unlock(fd, 1, LKF_NOQUEUE));
	EXPECT_EQ(EINVAL, dl_unlock(fd, 1, LKF_LOCAL));
	/* LOCAL is for new locks: a lock that exists is known. */
	EXPECT_EQ(EINVAL, dl_conv(fd, 1, EX, LKF_LOCAL));
	EXPECT_QUIET(fd, 1);
	UNLOCK(fd, 1);
	EXPECT_EQ(ENOENT, dl_lock_x(fd, 1, EX, LKF_CONVERT, NULL,
				    RDLOCK_DLM_TEST_LKID, lkid));
	EXPECT_EQ(ENOENT, dl_unlock_x(fd, 1, 0, RDLOCK_DLM_TEST_LKID, lkid));
	EXPECT_QUIET(fd, 1);
	BARRIER(0);
}

TEST_F_TIMEOUT(dlm, conversions, STEP_S)
{
	int fd = self->fd;
	char name[32];

	res_name(name, sizeof(name), "conv", self->env.self);
	/*
	 * Every node has the lockspace open before this one's requests
	 * wait, so that no hello's answer holds back their done notices
	 * (and ASTs): notice_order checks that case.
	 */
	BARRIER(24);
	/* Every conversion of one lock, alone on the resource. */
	GRANT(fd, 0, NL, 0, name);
	CONV(fd, 0, PR, 0);
	CONV(fd, 0, EX, 0);
	CONV(fd, 0, PR, 0);
	CONV(fd, 0, NL, 0);
	CONV(fd, 0, EX, 0);
	CONV(fd, 0, NL, 0);
	CONV(fd, 0, NL, 0);
	CONV(fd, 0, PR, LKF_NOQUEUE);
	CONV(fd, 0, EX, LKF_NOQUEUE);
	CONV(fd, 0, EX, 0);
	EXPECT_QUIET(fd, 0);
	UNLOCK(fd, 0);
	GRANT(fd, 0, EX, 0, name);
	UNLOCK(fd, 0);

	/* Two locks of this node conflict like two nodes' locks. */
	GRANT(fd, 0, EX, 0, name);
	ASSERT_EQ(0, dl_lock(fd, 1, PR, LKF_NOQUEUE, name));
	EXPECT_AST(fd, 1, -EAGAIN);		/* and the lock is gone */
	ASSERT_EQ(0, dl_lock(fd, 1, EX, LKF_NOQUEUE, name));
	EXPECT_AST(fd, 1, -EAGAIN);
	EXPECT_QUIET(fd, 0);			/* NOQUEUE: no BAST */
	CONV(fd, 0, PR, 0);
	GRANT(fd, 1, PR, LKF_NOQUEUE, name);
	/* NOQUEUE up-conversions fail both ways and keep PR. */
	ASSERT_EQ(0, dl_conv(fd, 1, EX, LKF_NOQUEUE));
	EXPECT_AST(fd, 1, -EAGAIN);
	ASSERT_EQ(0, dl_conv(fd, 0, EX, LKF_NOQUEUE));
	EXPECT_AST(fd, 0, -EAGAIN);
	/* A third reader still fits beside both: they are at PR. */
	GRANT(fd, 2, PR, LKF_NOQUEUE, name);
	UNLOCK(fd, 2);
	/* NOQUEUE never waits, so it sends no blocking notice: no BAST. */
	EXPECT_QUIET(fd, 0);
	EXPECT_QUIET(fd, 1);

	/* A waiting request: the holder gets BAST(mode), gives way. */
	CONV(fd, 1, NL, 0);
	CONV(fd, 0, EX, 0);
	hand_over(_metadata, fd, true);
	EXPECT_QUIET(fd, 0);
	EXPECT_QUIET(fd, 1);
	UNLOCK(fd, 0);
	UNLOCK(fd, 1);
	BARRIER(1);
}

TEST_F_TIMEOUT(dlm, cancel, STEP_S)
{
	struct rdlock_dlm_test_event e;
	int fd = self->fd, asts, i;
	char name[32];
	__u32 lkid;

	res_name(name, sizeof(name), "cancel", self->env.self);
	/* Cancel of a waiting new lock: ECANCEL, and the lock is gone. */
	GRANT(fd, 0, EX, 0, name);
	ASSERT_EQ(0, dl_lock(fd, 1, EX, 0, name));
	lkid = dl_lkid(fd, 1);
	EXPECT_BAST(fd, 0, EX);
	ASSERT_EQ(0, dl_unlock(fd, 1, LKF_CANCEL));
	EXPECT_AST(fd, 1, ECANCEL);
	EXPECT_QUIET(fd, 1);
	EXPECT_EQ(ENOENT, dl_unlock_x(fd, 1, 0, RDLOCK_DLM_TEST_LKID, lkid));

	/* Cancel of a waiting conversion: ECANCEL, the old mode stays. */
	GRANT(fd, 1, NL, 0, name);
	ASSERT_EQ(0, dl_conv(fd, 1, PR, 0));
	EXPECT_BAST(fd, 0, PR);
	ASSERT_EQ(0, dl_unlock(fd, 1, LKF_CANCEL));
	EXPECT_AST(fd, 1, ECANCEL);
	/* Cancel with nothing waiting: 0 and no callback (fs/dlm's way). */
	ASSERT_EQ(0, dl_unlock(fd, 1, LKF_CANCEL));
	ASSERT_EQ(0, dl_unlock(fd, 0, LKF_CANCEL));
	EXPECT_QUIET(fd, 1);
	EXPECT_QUIET(fd, 0);
	UNLOCK(fd, 0);
	/* Slot 1 is at NL: it gets EX once the abandoned requests are out. */
	CONV(fd, 1, EX, 0);
	CONV(fd, 1, PR, 0);

	/*
	 * Cancel of a committed PR->EX conversion (it gave up its shared
	 * hold under the gate): the grant completes normally.
	 */
	GRANT(fd, 0, PR, 0, name);
	ASSERT_EQ(0, dl_conv(fd, 1, EX, 0));
	EXPECT_BAST(fd, 0, EX);
	/* A BAST says the request started, not that it got this far. */
	ASSERT_TRUE(dl_waits_main(fd, 1));
	ASSERT_EQ(0, dl_unlock(fd, 1, LKF_CANCEL));
	EXPECT_QUIET(fd, 1);
	CONV(fd, 0, NL, 0);
	EXPECT_AST(fd, 1, 0);
	CONV(fd, 1, PR, 0);
	EXPECT_QUIET(fd, 0);

	/*
	 * Two PR->EX converters: slot 1 takes the gate and waits for slot
	 * 0's PR; slot 0, waiting for the gate, gets a BAST, cancels (keeps
	 * PR) and gives it up; slot 1 is granted.
	 */
	CONV(fd, 0, PR, 0);
	ASSERT_EQ(0, dl_conv(fd, 1, EX, 0));
	EXPECT_BAST(fd, 0, EX);
	ASSERT_TRUE(dl_waits_main(fd, 1));	/* slot 1 holds the gate */
	ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
	ASSERT_EQ(0, dl_unlock(fd, 0, LKF_CANCEL));
	EXPECT_AST(fd, 0, ECANCEL);
	CONV(fd, 0, NL, 0);
	/* Slot 1: its grant, and a BAST from slot 0's wait before or after. */
	asts = 0;
	for (i = 0; i < 3 && !dl_event(fd, 1, i ? QUIET_MS : WAIT_MS, &e);
	     i++) {
		if (e.type == RDLOCK_DLM_TEST_AST) {
			EXPECT_EQ(0, e.status);
			asts++;
		} else {
			EXPECT_EQ(EX, e.mode);
		}
	}
	EXPECT_EQ(1, asts);
	UNLOCK(fd, 1);
	UNLOCK(fd, 0);

	/*
	 * Slot 1's new EX request takes the gate and waits for slot 0's PR,
	 * and is cancelled. Slot 0 then converts to EX instead of giving
	 * its PR back: it must be granted, which it cannot while the
	 * abandoned wait keeps the gate (it waits for that PR).
	 */
	GRANT(fd, 0, PR, 0, name);
	ASSERT_EQ(0, dl_lock(fd, 1, EX, 0, name));
	EXPECT_BAST(fd, 0, EX);
	ASSERT_TRUE(dl_waits_main(fd, 1));	/* slot 1 holds the gate */
	ASSERT_EQ(0, dl_unlock(fd, 1, LKF_CANCEL));
	EXPECT_AST(fd, 1, ECANCEL);
	EXPECT_QUIET(fd, 1);
	ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
	ASSERT_EQ(0, dl_event(fd, 0, WAIT_MS, &e))
		TH_LOG("PR->EX after a cancelled EX: no grant (deadlock)");
	EXPECT_EQ(RDLOCK_DLM_TEST_AST, e.type);
	EXPECT_EQ(0, e.status);
	/* Granted before the abandoned wait ended: its notice's BAST. */
	if (!dl_event(fd, 0, QUIET_MS, &e)) {
		EXPECT_EQ(RDLOCK_DLM_TEST_BAST, e.type);
		EXPECT_EQ(EX, e.mode);
	}
	UNLOCK(fd, 0);
	BARRIER(2);
}

static long long dl_counter(const char *name)
{
	return rdl_debugfs_counter("dlm", name);
}

/*
 * Columns of debugfs "nodes" after the node id: state connects read write
 * faa cas ping msgs_sent msgs_recv bytes errors served read_range
 * faa_read cas_read.
 */
#define NODES_COL_READ_RANGE	13
#define NODES_COL_CAS_READ	15

/* Operations of column @col this node sent, to every node, or -1. */
static long long ops_sent(int col)
{
	FILE *f = fopen("/sys/kernel/debug/rdlock/nodes", "r");
	char line[512], *tok, *save, *end = "";
	long long v, sum = 0;
	int i;

	if (!f)
		return -1;
	while (sum >= 0 && fgets(line, sizeof(line), f)) {
		tok = strtok_r(line, "\n ", &save);
		if (!tok || !isdigit(*tok))	/* the header */
			continue;
		for (i = 1; i <= col && tok; i++)
			tok = strtok_r(NULL, "\n ", &save);
		v = tok && isdigit(*tok) ? strtoll(tok, &end, 10) : -1;
		sum = v < 0 || *end ? -1 : sum + v;
	}
	fclose(f);
	return sum;
}

/* A grant with VALBLK: the AST and its value block. */
static int lvb_grant(int fd, __u32 slot, int mode, __u32 flags,
		     const char *name, struct rdlock_dlm_test_event *e)
{
	int ret = name ? dl_lock(fd, slot, mode, flags | LKF_VALBLK, name) :
			 dl_conv(fd, slot, mode, flags | LKF_VALBLK);

	if (ret)
		return ret;
	ret = dl_event(fd, slot, WAIT_MS, e);
	if (ret)
		return ret;
	return e->type == RDLOCK_DLM_TEST_AST ? 0 : EPROTO;
}

/* Down-convert @slot with VALBLK, storing @lvb (from EX). */
static int lvb_store(int fd, __u32 slot, int mode, const __u8 *lvb)
{
	struct rdlock_dlm_test_lock l = {
		.slot = slot, .mode = mode,
		.flags = LKF_CONVERT | LKF_VALBLK,
	};
	struct rdlock_dlm_test_event e;
	int ret;

	memcpy(l.lvb, lvb, sizeof(l.lvb));
	ret = rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_LOCK, &l);
	if (ret)
		return ret;
	ret = dl_event(fd, slot, WAIT_MS, &e);
	if (ret)
		return ret;
	return e.type == RDLOCK_DLM_TEST_AST && !e.status ? 0 : EPROTO;
}

static void lvb_pattern(__u8 *lvb, __u32 seed)
{
	int i;

	for (i = 0; i < RDLOCK_DLM_TEST_LVB; i++)
		lvb[i] = (__u8)(seed * 31 + i * 7 + 1);
}

TEST_F_TIMEOUT(dlm, lvb, STEP_S)
{
	__u8 zero[RDLOCK_DLM_TEST_LVB] = {}, want[RDLOCK_DLM_TEST_LVB];
	struct rdlock_dlm_test_event e;
	long long gets, sets, words, ranges, cas_reads;
	__u32 me = self->env.self;
	int fd = self->fd;
	char name[32];

	/* This node's resource: never stored, then round trips. */
	res_name(name, sizeof(name), "lvb", me);
	ASSERT_EQ(0, lvb_grant(fd, 0, EX, 0, name, &e));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(SBF_VALNOTVALID, e.sb_flags);
	EXPECT_EQ(0, memcmp(e.lvb, zero, sizeof(zero)));
	lvb_pattern(want, me);
	ASSERT_EQ(0, lvb_store(fd, 0, NL, want));
	ASSERT_EQ(0, lvb_grant(fd, 0, PR, 0, NULL, &e));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(0, e.sb_flags);
	EXPECT_EQ(0, memcmp(e.lvb, want, sizeof(want)));
	/* Without VALBLK: no flag, and the lock's buffer is left alone. */
	CONV(fd, 0, NL, 0);
	/*
	 * EX and back without VALBLK keeps the stored value valid, with no
	 * operation on the value block (only this test asks here).
	 */
	gets = dl_counter("lvb_get");
	sets = dl_counter("lvb_set");
	CONV(fd, 0, EX, 0);
	CONV(fd, 0, NL, 0);
	EXPECT_EQ(gets, dl_counter("lvb_get"));
	EXPECT_EQ(sets, dl_counter("lvb_set"));
	/*
	 * The 64 bytes and the state word come with the CAS that takes the
	 * main word, with either backend (a CAS and an RDMA READ in one
	 * chain, or one two-sided answer): no READ_RANGE of their own.
	 */
	ranges = ops_sent(NODES_COL_READ_RANGE);
	cas_reads = ops_sent(NODES_COL_CAS_READ);
	ASSERT_LE(0, ranges);
	ASSERT_LE(0, cas_reads);
	ASSERT_EQ(0, lvb_grant(fd, 0, EX, 0, NULL, &e));
	EXPECT_EQ(ranges, ops_sent(NODES_COL_READ_RANGE));
	EXPECT_EQ(cas_reads + 1, ops_sent(NODES_COL_CAS_READ));
	EXPECT_EQ(0, e.sb_flags);
	EXPECT_EQ(0, memcmp(e.lvb, want, sizeof(want)));
	/* Storing the bytes it read writes nothing; one changed byte, a word. */
	ASSERT_EQ(0, lvb_store(fd, 0, NL, want));
	EXPECT_EQ(sets, dl_counter("lvb_set"));
	ASSERT_EQ(0, lvb_grant(fd, 0, EX, 0, NULL, &e));
	EXPECT_EQ(0, e.sb_flags);
	words = dl_counter("lvb_words");
	want[RDLOCK_DLM_TEST_LVB - 1] ^= 0x5a;
	ASSERT_EQ(0, lvb_store(fd, 0, NL, want));
	EXPECT_EQ(sets + 1, dl_counter("lvb_set"));
	EXPECT_EQ(words + 1, dl_counter("lvb_words"));
	ASSERT_EQ(0, lvb_grant(fd, 0, EX, 0, NULL, &e));
	EXPECT_EQ(0, e.sb_flags);
	EXPECT_EQ(0, memcmp(e.lvb, want, sizeof(want)));
	/* EX->PR with VALBLK stores, the PR holder keeps it. */
	lvb_pattern(want, me + 100);
	ASSERT_EQ(0, lvb_store(fd, 0, PR, want));
	ASSERT_EQ(0, lvb_grant(fd, 1, PR, 0, name, &e));
	EXPECT_EQ(0, e.sb_flags);
	EXPECT_EQ(0, memcmp(e.lvb, want, sizeof(want)));
	UNLOCK(fd, 1);
	CONV(fd, 0, EX, 0);
	/* Unlock from EX with VALBLK stores too. */
	lvb_pattern(want, me + 200);
	{
		struct rdlock_dlm_test_lock l = {
			.slot = 0, .flags = LKF_VALBLK,
		};

		memcpy(l.lvb, want, sizeof(want));
		ASSERT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_UNLOCK, &l));
		EXPECT_AST(fd, 0, EUNLOCK);
	}
	ASSERT_EQ(0, lvb_grant(fd, 0, PR, 0, name, &e));
	EXPECT_EQ(0, e.sb_flags);
	EXPECT_EQ(0, memcmp(e.lvb, want, sizeof(want)));
	UNLOCK(fd, 0);
	BARRIER(3);

	/* Across nodes: each node stores on "lvbx" in turn, all read it. */
	GRANT(fd, 0, NL, 0, "lvbx");
	BARRIER(15);
	for (__u32 n = 0; n < self->env.nr_nodes; n++) {
		if (n == me) {
			ASSERT_EQ(0, lvb_grant(fd, 0, EX, 0, NULL, &e));
			EXPECT_EQ(0, e.status);
			EXPECT_EQ(n ? 0 : SBF_VALNOTVALID, e.sb_flags);
			lvb_pattern(want, 1000 + n);
			ASSERT_EQ(0, lvb_store(fd, 0, NL, want));
		}
		BARRIER(16 + 2 * n);
		lvb_pattern(want, 1000 + n);
		ASSERT_EQ(0, lvb_grant(fd, 0, PR, 0, NULL, &e));
		EXPECT_EQ(0, e.status);
		EXPECT_EQ(0, e.sb_flags);
		EXPECT_EQ(0, memcmp(e.lvb, want, sizeof(want)))
			TH_LOG("node %u's value block, read on node %u", n, me);
		CONV(fd, 0, NL, 0);
		BARRIER(17 + 2 * n);
	}
	UNLOCK(fd, 0);
	BARRIER(25);
}

TEST_F_TIMEOUT(dlm, bast_nodes, STEP_S)
{
	int fd = self->fd;
	__u32 me = self->env.self;

	GRANT(fd, 0, PR, 0, "bcast");
	BARRIER(4);
	if (!me) {
		/* Everybody else must give way for node 0 to get EX. */
		ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
		EXPECT_AST(fd, 0, 0);
	} else {
		EXPECT_BAST(fd, 0, EX);
		CONV(fd, 0, NL, 0);
	}
	BARRIER(5);
	/*
	 * Node 1 waits for EX behind node 0's EX; node 0 goes down to PR,
	 * granted after node 1's notice: it gets the BAST again.
	 */
	if (me == 1) {
		ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
		EXPECT_AST(fd, 0, 0);
	} else if (!me) {
		EXPECT_BAST(fd, 0, EX);
		CONV(fd, 0, PR, 0);
		EXPECT_BAST(fd, 0, EX);
		CONV(fd, 0, NL, 0);
	}
	BARRIER(6);
	if (me == 1)
		CONV(fd, 0, NL, 0);
	UNLOCK(fd, 0);
	BARRIER(7);
}

TEST_F_TIMEOUT(dlm, late_open, STEP_S)
{
	struct rdlock_dlm_test_open o = { .node_id = ~0U };
	__u32 me = self->env.self;
	int fd = self->fd;

	/* (A second lockspace would not fit in the lock tables.) */
	if (me == 1) {
		close(self->fd);
		self->fd = -1;
	}
	BARRIER(28);
	if (!me) {
		GRANT(fd, 0, PR, 0, "late");
		/* Node 1 has no receiver now: it drops the notice. */
		ASSERT_EQ(0, dl_lock(fd, 1, EX, 0, "late"));
		ASSERT_TRUE(dl_waits_main(fd, 1));
		/* Our own copy comes after the other nodes' were sent. */
		EXPECT_BAST(fd, 0, EX);
	}
	BARRIER(29);
	if (me == 1) {
		self->fd = open(DLM_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->fd);
		fd = self->fd;
		strcpy(o.name, LS_NAME);
		ASSERT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_OPEN, &o));
		/* PR is free for a PR try: granted, sending no notice. */
		GRANT(fd, 0, PR, 0, "late");
		/* It blocks node 0's waiting EX request. */
		EXPECT_BAST(fd, 0, EX);
		UNLOCK(fd, 0);
	}
	BARRIER(30);
	if (!me) {
		EXPECT_QUIET(fd, 1);
		UNLOCK(fd, 0);
		EXPECT_AST(fd, 1, 0);
		UNLOCK(fd, 1);
	}
	BARRIER(31);
}

TEST_F_TIMEOUT(dlm, converters, STEP_S)
{
	struct rdlock_dlm_test_event e;
	int fd = self->fd, cancelled = 0;
	__u32 me = self->env.self;
	__u64 v;

	if (!me)
		ASSERT_EQ(0, rdl_xop(self->raw, RDLOCK_TEST_OP_WRITE, 0,
				     self->env.base + R_CANCELS, 0, 0, NULL));
	BARRIER(8);
	if (me < 2)
		GRANT(fd, 0, PR, 0, "conv2");
	BARRIER(9);
	if (me < 2) {
		/* OCFS2's way: a BAST while converting cancels, gives up. */
		ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
		for (;;) {
			ASSERT_EQ(0, dl_event(fd, 0, WAIT_MS, &e));
			if (e.type == RDLOCK_DLM_TEST_BAST) {
				EXPECT_EQ(EX, e.mode);
				if (!cancelled)
					ASSERT_EQ(0, dl_unlock(fd, 0,
							       LKF_CANCEL));
				cancelled = 1;
				continue;
			}
			if (e.status == ECANCEL) {
				ASSERT_EQ(0, rdl_xop(self->raw,
						     RDLOCK_TEST_OP_FAA, 0,
						     self->env.base + R_CANCELS,
						     1, 0, NULL));
				CONV(fd, 0, NL, 0);
				ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
				continue;
			}
			ASSERT_EQ(0, e.status);
			break;
		}
		/* Give EX back, without waiting for the other's BAST. */
		ASSERT_EQ(0, dl_unlock(fd, 0, 0));
		for (;;) {
			ASSERT_EQ(0, dl_event(fd, 0, WAIT_MS, &e));
			if (e.type == RDLOCK_DLM_TEST_AST) {
				EXPECT_EQ(EUNLOCK, e.status);
				break;
			}
		}
	}
	BARRIER(10);
	ASSERT_EQ(0, rdl_xop(self->raw, RDLOCK_TEST_OP_READ, 0,
			     self->env.base + R_CANCELS, 0, 0, &v));
	/*
	 * One of them at least: the one waiting for the gate. Both when the
	 * BASTs came before either got to the gate.
	 */
	EXPECT_LE(1, v);
	EXPECT_GE(2, v);
	BARRIER(11);
}

TEST_F_TIMEOUT(dlm, count, STEP_S)
{
	__u32 slot = self->env.base + R_COUNTER, i;
	int fd = self->fd;
	__u64 v;

	if (!self->env.self)
		ASSERT_EQ(0, rdl_xop(self->raw, RDLOCK_TEST_OP_WRITE, 0, slot,
				     0, 0, NULL));
	GRANT(fd, 0, NL, 0, "count");
	BARRIER(12);
	for (i = 0; i < self->env.iters; i++) {
		struct rdlock_dlm_test_event e;

		ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
		/* BASTs of the others' waits come in between: skip them. */
		do {
			ASSERT_EQ(0, dl_event(fd, 0, WAIT_MS * 4, &e));
		} while (e.type == RDLOCK_DLM_TEST_BAST);
		ASSERT_EQ(0, e.status);
		ASSERT_EQ(0, rdl_xop(self->raw, RDLOCK_TEST_OP_READ, 0, slot,
				     0, 0, &v));
		ASSERT_EQ(0, rdl_xop(self->raw, RDLOCK_TEST_OP_WRITE, 0, slot,
				     v + 1, 0, NULL));
		ASSERT_EQ(0, dl_conv(fd, 0, NL, 0));
		do {
			ASSERT_EQ(0, dl_event(fd, 0, WAIT_MS, &e));
		} while (e.type == RDLOCK_DLM_TEST_BAST);
		ASSERT_EQ(0, e.status);
	}
	BARRIER(13);
	ASSERT_EQ(0, rdl_xop(self->raw, RDLOCK_TEST_OP_READ, 0, slot, 0, 0,
			     &v));
	EXPECT_EQ((__u64)self->env.nr_nodes * self->env.iters, v);
	ASSERT_EQ(0, dl_unlock(fd, 0, 0));
	BARRIER(14);
}

TEST_F_TIMEOUT(dlm, notice_order, STEP_S)
{
	int fd = self->fd, i;

	if (self->env.self) {
		BARRIER(35);
		return;
	}
	ASSERT_EQ(0, rdl_debugfs_write(DONE_DELAY, 20));
	GRANT(fd, 0, EX, 0, "order");
	GRANT(fd, 1, NL, 0, "order");
	for (i = 0; i < 10; i++)
		hand_over(_metadata, fd, false);
	EXPECT_QUIET(fd, 0);
	EXPECT_QUIET(fd, 1);
	EXPECT_EQ(0, rdl_debugfs_write(DONE_DELAY, 0));
	UNLOCK(fd, 0);
	UNLOCK(fd, 1);
	BARRIER(35);
}

static long long dl_lost_msgs(void)
{
	return rdl_debugfs_counter("cluster", "lost_msgs_injected");
}

/* Wait until the DLM counter @name reaches @v: false after WAIT_MS. */
static bool dl_counter_reaches(const char *name, long long v, bool down)
{
	double end = rdl_now() + WAIT_MS / 1000.0;
	long long c;

	for (;;) {
		c = dl_counter(name);
		if (c >= 0 && (down ? c <= v : c >= v))
			return true;
		if (rdl_now() > end)
			return false;
		usleep(10000);
	}
}

TEST_F_TIMEOUT(dlm, link_blip, STEP_S)
{
	__u32 me = self->env.self;
	long long lost0 = 0, sent0 = 0;
	int fd = self->fd;

	/* The lock lives with node 0, which resolves the name first. */
	if (!me) {
		GRANT(fd, 0, EX, 0, "blip");
		UNLOCK(fd, 0);
	}
	BARRIER(58);
	if (me == 1)
		GRANT(fd, 0, EX, 0, "blip");
	BARRIER(36);
	if (!me) {
		/* The gate is busy: the wait notice goes to node 1 first. */
		lost0 = dl_lost_msgs();
		ASSERT_EQ(0, rdl_debugfs_write(LOST_MSGS, 1));
		ASSERT_EQ(0, dl_lock(fd, 0, EX, 0, "blip"));
		EXPECT_AST(fd, 0, 0);
		EXPECT_EQ(1, dl_lost_msgs() - lost0);
	} else if (me == 1) {
		/* Only the repeat after the reconnection can tell us. */
		EXPECT_BAST(fd, 0, EX);
		UNLOCK(fd, 0);
	}
	BARRIER(37);
	if (me == 1) {
		sent0 = dl_counter("notices");
		ASSERT_EQ(0, dl_lock(fd, 0, PR, 0, "blip"));
	} else if (!me) {
		EXPECT_BAST(fd, 0, PR);
	}
	BARRIER(38);
	if (me == 1) {
		/* The wait notice is out to every node: the done is next. */
		ASSERT_TRUE(dl_counter_reaches("notices", sent0 + 1, false));
		lost0 = dl_lost_msgs();
		ASSERT_EQ(0, rdl_debugfs_write(LOST_MSGS, 1));
	}
	BARRIER(39);
	if (!me) {
		/* Released in its own table: nothing on the link. */
		CONV(fd, 0, NL, 0);
	} else if (me == 1) {
		EXPECT_AST(fd, 0, 0);
		EXPECT_EQ(1, dl_lost_msgs() - lost0);
		UNLOCK(fd, 0);
	}
	BARRIER(40);
	if (!me) {
		/* Node 1's repeat notice makes us forget its wait. */
		ASSERT_TRUE(dl_counter_reaches("waits_known", 0, true))
			TH_LOG("node 1's wait still known: %lld",
			       dl_counter("waits_known"));
		CONV(fd, 0, EX, 0);
		EXPECT_QUIET(fd, 0);
		UNLOCK(fd, 0);
	}
	BARRIER(41);
}

/*
 * Node 0's links to every peer fail and stay down for LINK_DOWN_MS, the
 * tables kept (inject_link_down_ms). Requests node 0 makes meanwhile are
 * not failed by the links: NOQUEUE requests of fresh resources are
 * granted (a name homed here) or refused with -EAGAIN (homed on a peer),
 * never -ENOTCONN; blocking requests of fresh resources, and a PR of a
 * resource node 1 holds EX, are granted once the links are back (node 1
 * learns of the PR from the wait notices sent again on reconnection).
 */
#define LINK_DOWN_MS	4000
#define LINK_NOQUEUE	7	/* slots 1 .. 7 */
#define LINK_WAIT	8	/* slots 8 .. 15 */

static long long dl_links_down(void)
{
	return rdl_debugfs_counter("cluster", "links_down_injected");
}

TEST_F_TIMEOUT(dlm, link_down, STEP_S)
{
	struct rdlock_dlm_test_event ev;
	__u32 me = self->env.self, i;
	int fd = self->fd, refused = 0;
	long long down0, left;
	char name[32];

	if (me == 1)
		GRANT(fd, 0, EX, 0, "linkdown");
	BARRIER(60);
	if (!me) {
		down0 = dl_links_down();
		ASSERT_LE(0, down0);
		ASSERT_EQ(0, rdl_debugfs_write(LINK_DOWN, LINK_DOWN_MS));
		ASSERT_EQ(0, dl_lock(fd, 0, PR, 0, "linkdown"));
		for (i = 0; i < LINK_NOQUEUE; i++) {
			res_name(name, sizeof(name), "ldnq", i);
			ASSERT_EQ(0, dl_lock(fd, 1 + i, EX, LKF_NOQUEUE, name));
			ASSERT_EQ(0, dl_event(fd, 1 + i, WAIT_MS, &ev));
			EXPECT_EQ(RDLOCK_DLM_TEST_AST, ev.type);
			EXPECT_TRUE(!ev.status || ev.status == -EAGAIN)
				TH_LOG("NOQUEUE %s during the blip: %d", name,
				       ev.status);
			refused += ev.status == -EAGAIN;
		}
		for (i = 0; i < LINK_WAIT; i++) {
			res_name(name, sizeof(name), "ldq", i);
			ASSERT_EQ(0, dl_lock(fd, 1 + LINK_NOQUEUE + i, EX, 0,
					     name));
		}
		/* The event: all of that was asked for with the links down. */
		left = rdl_debugfs_read(LINK_DOWN);
		EXPECT_LT(0, left)
			TH_LOG("the links were back before the requests were made");
		EXPECT_EQ(1, dl_links_down() - down0);
		/* 7 names all homed here: 1 in 3^7. */
		EXPECT_LT(0, refused);
		for (i = 0; i < LINK_WAIT; i++)
			EXPECT_AST(fd, 1 + LINK_NOQUEUE + i, 0);
		EXPECT_AST(fd, 0, 0);
		for (i = 0; i < LINK_NOQUEUE; i++)
			dl_unlock(fd, 1 + i, 0);
		for (i = 0; i < LINK_WAIT; i++)
			UNLOCK(fd, 1 + LINK_NOQUEUE + i);
		UNLOCK(fd, 0);
	} else if (me == 1) {
		EXPECT_BAST(fd, 0, PR);
		UNLOCK(fd, 0);
	}
	BARRIER(61);
}

/* This node's unused cached rdlock names of the test's lockspace. */
static long long dl_names_unused(void)
{
	return rdl_debugfs_counter("lockspaces/dlm." LS_NAME "/stats",
				   "names_unused");
}

static int dl_hold(int fd, __u32 ms, __u32 max_ms)
{
	struct rdlock_dlm_test_hold h = { .ms = ms, .max_ms = max_ms };

	return rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_HOLD, &h);
}

/* The hold time of @slot's lock now; -1 if the status call failed. */
static long long dl_hold_of(int fd, __u32 slot)
{
	struct rdlock_dlm_test_status s = { .slot = slot };

	return ioctl(fd, RDLOCK_DLM_TEST_IOC_STATUS, &s) ? -1 : (long long)s.hold_ms;
}

/*
 * Slot 0 at EX, slot 1 at NL: slot 1 asks for EX and slot 0 gives way
 * three of ADAPT_MS after its BAST, so that slot 1 waits over twice that.
 */
static void slow_hand_over(struct __test_metadata *_metadata, int fd)
{
	ASSERT_EQ(0, dl_conv(fd, 1, EX, 0));
	EXPECT_BAST(fd, 0, EX);
	usleep(3 * ADAPT_MS * 1000);
	CONV(fd, 0, NL, 0);
	EXPECT_AST(fd, 1, 0);
}

TEST_F_TIMEOUT(dlm, hold, STEP_S)
{
	long long held0, held1, raised;
	int fd = self->fd;
	char name[32];
	double t0;

	res_name(name, sizeof(name), "hold", self->env.self);
	BARRIER(42);
	EXPECT_EQ(EINVAL, dl_hold(fd, HOLD_MAX_MS + 1, HOLD_MAX_MS + 1));
	EXPECT_EQ(EINVAL, dl_hold(fd, 0, HOLD_MAX_MS + 1));
	EXPECT_EQ(EINVAL, dl_hold(fd, ADAPT_MS + 1, ADAPT_MS));
	ASSERT_EQ(0, dl_hold(fd, HOLD_MS, HOLD_MS));
	held0 = dl_counter("basts_held");

	/* A fresh grant gets a waiter's BAST only after the hold time. */
	t0 = rdl_now();
	GRANT(fd, 0, EX, 0, name);
	ASSERT_EQ(0, dl_lock(fd, 1, EX, 0, name));
	EXPECT_BAST(fd, 0, EX);
	EXPECT_LE(HOLD_MS / 1000.0, rdl_now() - t0);
	EXPECT_EQ(held0 + 1, dl_counter("basts_held"));
	CONV(fd, 0, NL, 0);
	EXPECT_AST(fd, 1, 0);

	/*
	 * Slot 1's EX is fresh too: slot 0's EX request makes a BAST that
	 * waits. Slot 1 converts meanwhile: the BAST goes at once, before
	 * the conversion's AST.
	 */
	ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
	ASSERT_TRUE(dl_counter_reaches("basts_held", held0 + 2, false));
	ASSERT_EQ(0, dl_conv(fd, 1, NL, 0));
	EXPECT_BAST(fd, 1, EX);
	EXPECT_AST(fd, 1, 0);
	EXPECT_AST(fd, 0, 0);
	EXPECT_QUIET(fd, 0);
	EXPECT_QUIET(fd, 1);

	/* A PR grant is not held: its BAST goes at once. */
	ASSERT_EQ(0, dl_conv(fd, 1, PR, 0));
	EXPECT_BAST(fd, 0, PR);
	CONV(fd, 0, NL, 0);
	EXPECT_AST(fd, 1, 0);
	held1 = dl_counter("basts_held");
	ASSERT_EQ(0, dl_conv(fd, 0, EX, 0));
	EXPECT_BAST(fd, 1, EX);
	EXPECT_EQ(held1, dl_counter("basts_held"));
	CONV(fd, 1, NL, 0);
	EXPECT_AST(fd, 0, 0);

	/*
	 * A lock that bounces gets a longer hold time: slot 1, which just
	 * gave way (its BAST above), asks for EX again and waits for slot
	 * 0, which gives way well over twice the hold time after its BAST.
	 * A grant that nobody was in the way of brings it back.
	 */
	ASSERT_EQ(0, dl_hold(fd, ADAPT_MS, ADAPT_MAX_MS));
	EXPECT_EQ(ADAPT_MS, dl_hold_of(fd, 0));
	raised = dl_counter("holds_raised");
	slow_hand_over(_metadata, fd);
	EXPECT_EQ(2 * ADAPT_MS, dl_hold_of(fd, 1));
	EXPECT_EQ(raised + 1, dl_counter("holds_raised"));
	CONV(fd, 1, NL, 0);
	EXPECT_EQ(2 * ADAPT_MS, dl_hold_of(fd, 1));
	CONV(fd, 1, EX, 0);
	EXPECT_EQ(ADAPT_MS, dl_hold_of(fd, 1));
	CONV(fd, 1, NL, 0);

	/*
	 * The same wait by a lock that had no BAST for over BOUNCE_MS (it
	 * is needed once in a while) keeps the short hold time.
	 */
	CONV(fd, 0, EX, 0);
	usleep(BOUNCE_MS * 1000 + 100000);
	slow_hand_over(_metadata, fd);
	EXPECT_EQ(ADAPT_MS, dl_hold_of(fd, 1));
	EXPECT_EQ(raised + 1, dl_counter("holds_raised"));
	CONV(fd, 1, NL, 0);
	CONV(fd, 0, EX, 0);

	/* Hold time 0 again: BASTs go at once, none held. */
	ASSERT_EQ(0, dl_hold(fd, 0, 0));
	held1 = dl_counter("basts_held");
	hand_over(_metadata, fd, true);
	EXPECT_EQ(held1, dl_counter("basts_held"));
	UNLOCK(fd, 0);
	UNLOCK(fd, 1);
	BARRIER(43);
}

/* Longer than WAIT_MS: only a kick or a cancel ends such a wait in time. */
#define KICK_POLL_MS	60000

TEST_F_TIMEOUT(dlm, kick, STEP_S)
{
	long long kicks0 = 0, sent0 = 0, waits0 = 0, fails0 = 0;
	__u32 me = self->env.self;
	int fd = self->fd;

	/* The lock lives with node 0, which resolves the name first. */
	if (!me) {
		GRANT(fd, 0, EX, 0, "kick");
		UNLOCK(fd, 0);
	}
	BARRIER(59);
	if (me == 1)
		GRANT(fd, 0, EX, 0, "kick");
	BARRIER(44);
	if (!me) {
		ASSERT_EQ(0, rdl_debugfs_write(POLL_MS, KICK_POLL_MS));
		kicks0 = dl_counter("kicks");
		waits0 = dl_counter("poll_waits");
		ASSERT_EQ(0, dl_lock(fd, 0, EX, 0, "kick"));
		/* Asleep: only node 1's kick can wake it before WAIT_MS. */
		ASSERT_TRUE(dl_counter_reaches("poll_waits", waits0 + 1, false));
	} else if (me == 1) {
		/* Node 0's wait is known here: the unlock will kick it. */
		EXPECT_BAST(fd, 0, EX);
		sent0 = dl_counter("kicks_sent");
	}
	BARRIER(45);
	if (me == 1) {
		/*
		 * The releases are posted to node 0 before the kick goes
		 * there: the kicked try finds them done.
		 */
		UNLOCK(fd, 0);
		ASSERT_TRUE(dl_counter_reaches("kicks_sent", sent0 + 1, false));
		EXPECT_EQ(sent0 + 1, dl_counter("kicks_sent"));
	} else if (!me) {
		EXPECT_AST(fd, 0, 0);
		EXPECT_EQ(kicks0 + 1, dl_counter("kicks"));
		EXPECT_EQ(waits0 + 1, dl_counter("poll_waits"));
		UNLOCK(fd, 0);
	}
	BARRIER(46);

	/* A cancel ends such a wait at once: it gives nothing back later. */
	if (me == 1)
		GRANT(fd, 0, EX, 0, "kick");
	BARRIER(47);
	if (!me) {
		waits0 = dl_counter("poll_waits");
		fails0 = dl_counter("take_fail");
		ASSERT_EQ(0, dl_lock(fd, 0, EX, 0, "kick"));
		ASSERT_TRUE(dl_counter_reaches("poll_waits", waits0 + 1, false));
		ASSERT_EQ(0, dl_unlock(fd, 0, LKF_CANCEL));
		EXPECT_AST(fd, 0, ECANCEL);
		EXPECT_TRUE(dl_counter_reaches("take_fail", fails0 + 1, false));
		EXPECT_EQ(waits0 + 1, dl_counter("poll_waits"));
		EXPECT_EQ(0, rdl_debugfs_write(POLL_MS, 0));
	} else if (me == 1) {
		EXPECT_BAST(fd, 0, EX);
	}
	BARRIER(48);
	if (me == 1)
		UNLOCK(fd, 0);
}

/* How long "local" holds back each LOCAL take: well past its ASTs. */
#define LOCAL_DELAY_MS	3000

TEST_F_TIMEOUT(dlm, local, STEP_S)
{
	long long grants = dl_counter("local_grants");
	long long waits = dl_counter("local_waits");
	struct rdlock_dlm_test_event e;
	__u8 zero[RDLOCK_DLM_TEST_LVB] = { 0 };
	int fd = self->fd;

	BARRIER(49);
	if (self->env.self == 0) {
		ASSERT_EQ(0, rdl_debugfs_write(LOCAL_DELAY, LOCAL_DELAY_MS));
		GRANT(fd, 0, EX, LKF_LOCAL, "local-new");
		EXPECT_EQ(1, dl_counter("local_takes"));
		/* A directory's EX going to NL lets others learn the name. */
		GRANT(fd, 1, EX, 0, "local-dir");
		CONV(fd, 1, NL, 0);
		EXPECT_EQ(0, dl_counter("local_takes"));
		EXPECT_EQ(waits + 1, dl_counter("local_waits"));
		/* Never stored: zeroes, not valid, as a grant reads them. */
		ASSERT_EQ(0, lvb_grant(fd, 2, PR, LKF_LOCAL, "local-lvb", &e));
		EXPECT_EQ(0, e.status);
		EXPECT_EQ(SBF_VALNOTVALID, e.sb_flags & SBF_VALNOTVALID);
		EXPECT_EQ(0, memcmp(zero, e.lvb, sizeof(zero)));
		EXPECT_EQ(1, dl_counter("local_takes"));
		/* Its own conversion waits for its take. */
		CONV(fd, 2, NL, 0);
		EXPECT_EQ(0, dl_counter("local_takes"));
		EXPECT_EQ(grants + 2, dl_counter("local_grants"));
		EXPECT_EQ(0, rdl_debugfs_write(LOCAL_DELAY, 0));
	}
	BARRIER(50);
	if (self->env.self == 1) {
		/* Taken in the cluster before node 0's NL came. */
		ASSERT_EQ(0, dl_lock(fd, 0, EX, LKF_NOQUEUE, "local-new"));
		EXPECT_AST(fd, 0, -EAGAIN);
		GRANT(fd, 0, EX, LKF_LOCAL, "local-other");
		UNLOCK(fd, 0);
		ASSERT_EQ(0, dl_lock(fd, 0, EX, 0, "local-new"));
		EXPECT_AST(fd, 0, 0);
		UNLOCK(fd, 0);
	} else if (self->env.self == 0) {
		EXPECT_BAST(fd, 0, EX);
		UNLOCK(fd, 0);
		UNLOCK(fd, 1);
		UNLOCK(fd, 2);
	}
	BARRIER(51);
}

/* Gate and main-word takes of this node so far. */
static long long dl_takes(void)
{
	return dl_counter("take_gate") + dl_counter("take_main");
}

TEST_F_TIMEOUT(dlm, local_defer, STEP_S)
{
	long long grants, forced, parks, abandoned, aged, takes;
	int fd = self->fd;

	BARRIER(52);
	if (self->env.self == 0) {
		ASSERT_EQ(0, rdl_write_u32(LOCAL_DEFER, 60000));
		forced = dl_counter("local_forced");
		parks = dl_counter("local_parks");
		GRANT(fd, 0, EX, LKF_LOCAL, "defer-a");
		EXPECT_EQ(1, dl_counter("local_takes"));
		GRANT(fd, 1, EX, 0, "defer-dir");
		UNLOCK(fd, 1);
		EXPECT_EQ(parks + 1, dl_counter("local_parks"));
		EXPECT_EQ(1, dl_counter("local_parked"));
		EXPECT_EQ(1, dl_counter("local_takes"));
		EXPECT_EQ(forced, dl_counter("local_forced"));
	}
	BARRIER(53);
	if (self->env.self == 1) {
		GRANT(fd, 0, EX, 0, "defer-dir");
		ASSERT_EQ(0, dl_lock(fd, 1, EX, LKF_NOQUEUE, "defer-a"));
		EXPECT_AST(fd, 1, -EAGAIN);
		UNLOCK(fd, 0);
	}
	BARRIER(54);
	if (self->env.self == 0) {
		EXPECT_EQ(forced + 1, dl_counter("local_forced"));
		EXPECT_EQ(0, dl_counter("local_takes"));
		EXPECT_EQ(0, dl_counter("local_parked"));
		/* Unlocked untaken: nothing to take, nothing to give back. */
		abandoned = dl_counter("local_abandoned");
		takes = dl_takes();
		GRANT(fd, 1, EX, LKF_LOCAL, "defer-b");
		GRANT(fd, 2, EX, 0, "defer-dir2");
		UNLOCK(fd, 2);
		EXPECT_EQ(parks + 2, dl_counter("local_parks"));
		UNLOCK(fd, 1);
		EXPECT_EQ(abandoned + 1, dl_counter("local_abandoned"));
		EXPECT_TRUE(dl_counter_reaches("local_parked", 0, true));
		EXPECT_EQ(takes + 2, dl_takes());
		EXPECT_EQ(0, dl_counter("local_takes"));
		EXPECT_EQ(forced + 1, dl_counter("local_forced"));
	}
	BARRIER(55);
	if (self->env.self == 1) {
		ASSERT_EQ(0, dl_lock(fd, 1, EX, LKF_NOQUEUE, "defer-b"));
		EXPECT_AST(fd, 1, 0);
		UNLOCK(fd, 1);
		ASSERT_EQ(0, dl_lock(fd, 1, EX, LKF_NOQUEUE, "defer-dir2"));
		EXPECT_AST(fd, 1, 0);
		UNLOCK(fd, 1);
	} else if (self->env.self == 0) {
		ASSERT_EQ(0, rdl_write_u32(LOCAL_DEFER, 200));
		aged = dl_counter("local_aged");
		GRANT(fd, 1, EX, LKF_LOCAL, "defer-c");
		EXPECT_TRUE(dl_counter_reaches("local_takes", 0, true));
		EXPECT_EQ(aged + 1, dl_counter("local_aged"));
	}
	BARRIER(56);
	if (self->env.self == 1) {
		ASSERT_EQ(0, dl_lock(fd, 1, EX, LKF_NOQUEUE, "defer-c"));
		EXPECT_AST(fd, 1, -EAGAIN);
	} else if (self->env.self == 0) {
		ASSERT_EQ(0, rdl_write_u32(LOCAL_DEFER, 60000));
		GRANT(fd, 2, EX, LKF_LOCAL, "defer-d");
		GRANT(fd, 3, EX, 0, "defer-e");
		UNLOCK(fd, 3);
		grants = dl_counter("local_grants");
		GRANT(fd, 3, EX, LKF_LOCAL, "defer-e");
		EXPECT_EQ(grants, dl_counter("local_grants"));
		EXPECT_EQ(forced + 2, dl_counter("local_forced"));
		EXPECT_EQ(0, dl_counter("local_takes"));
		EXPECT_EQ(0, dl_counter("local_parked"));
		/* A second lock of this node waits for the LOCAL one's take. */
		GRANT(fd, 4, EX, LKF_LOCAL, "defer-f");
		EXPECT_EQ(1, dl_counter("local_takes"));
		ASSERT_EQ(0, dl_lock(fd, 5, EX, LKF_NOQUEUE, "defer-f"));
		EXPECT_AST(fd, 5, -EAGAIN);
		EXPECT_EQ(0, dl_counter("local_takes"));
		ASSERT_EQ(0, rdl_write_u32(LOCAL_DEFER, LOCAL_DEFER_MS));
		UNLOCK(fd, 4);
		UNLOCK(fd, 3);
		UNLOCK(fd, 2);
		UNLOCK(fd, 1);
		UNLOCK(fd, 0);
	}
	BARRIER(57);
}

TEST_F_TIMEOUT(dlm, close, STEP_S)
{
	struct rdlock_dlm_test_open o = { .node_id = ~0U };
	int fd = self->fd;

	if (!self->env.self) {
		GRANT(fd, 0, EX, 0, "closing");
		EXPECT_EQ(EBUSY, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_CLOSE, NULL));
		CONV(fd, 0, PR, 0);
		UNLOCK(fd, 0);
		ASSERT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_CLOSE, NULL));
		EXPECT_EQ(ENOTCONN, dl_lock(fd, 0, EX, 0, "closing"));
		EXPECT_EQ(ENOTCONN, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_CLOSE,
					      NULL));
		strcpy(o.name, LS_NAME);
		ASSERT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_OPEN, &o));
		GRANT(fd, 0, EX, 0, "closing");
		UNLOCK(fd, 0);
	}
	BARRIER(62);
}

TEST_F_TIMEOUT(dlm, room, STEP_S)
{
	/* More than the lockspace's name entries: one must find none. */
	struct rdlock_dlm_test_fill fl = { .max = 8192, .prefix = "room-" };
	/* Names the other nodes keep cached, homed on every node. */
	struct rdlock_dlm_test_fill cached = { .max = 64 };
	long long waits, unused = 0, left = 0;
	int fd = self->fd, i;
	char msg[160];

	if (!self->env.room)
		SKIP(return, "RDLOCK_DLM_ROOM=0 (the debug kernel: slow)");
	if (self->env.self) {
		snprintf(cached.prefix, sizeof(cached.prefix), "cache%hhu-",
			 (unsigned char)self->env.self);
		ASSERT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_FILL, &cached));
		ASSERT_EQ(0, cached.status);
		ASSERT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_FILL_RELEASE,
				       NULL));
		unused = dl_names_unused();
		ASSERT_LE(cached.max, unused);
	}
	BARRIER(26);
	if (!self->env.self) {
		waits = rdl_debugfs_counter("dlm", "room_waits");
		ASSERT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_FILL, &fl));
		printf("# %u resources held at the first failure\n", fl.held);
		EXPECT_EQ(-EAGAIN, fl.status)
			TH_LOG("%s", fl.status == -ENOSPC ? "-ENOSPC" : "");
		EXPECT_LE(0, waits);
		EXPECT_EQ(waits + 1, rdl_debugfs_counter("dlm", "room_waits"));
		ASSERT_EQ(0, dl_lock(fd, 0, PR, 0, "room-queued"));
		EXPECT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_FILL_RELEASE,
				       NULL));
		EXPECT_AST(fd, 0, 0);
		UNLOCK(fd, 0);
	}
	/* The others wait for node 0's fill: the test's limit, not the step's. */
	ASSERT_EQ(0, rdl_barrier(self->raw, self->env.nr_nodes, STEP_S,
				 self->env.base + R_BARRIER + 27, 1, msg,
				 sizeof(msg)))
		TH_LOG("%s", msg);
	if (!self->env.self)
		return;
	/*
	 * The room notice named the full node: this node forgot its unused
	 * names homed there (a third of its cached ones, about), and only
	 * those. The trim runs in a work item: wait for it (10 s at most).
	 */
	for (i = 0; i < 1000; i++) {
		left = dl_names_unused();
		if (left < unused)
			break;
		usleep(10000);
	}
	printf("# %lld of %lld unused names left after the trim\n", left,
	       unused);
	EXPECT_GT(unused, left);
	EXPECT_LT(0, left);
}

/* Barrier @rel's generation @gen (BARRIER() is generation 1). */
#define BARRIER_GEN(rel, gen) do {					\
	char msg_[160];							\
									\
	ASSERT_EQ(0, rdl_barrier(self->raw, self->env.nr_nodes,	\
				 self->env.barrier_timeout,		\
				 self->env.base + R_BARRIER + (rel), (gen),	\
				 msg_, sizeof(msg_)))			\
		TH_LOG("%s", msg_);					\
} while (0)

/* Poll "dlm" counter @name until it is @want (10 s at most); its value. */
static long long dl_counter_is(const char *name, long long want)
{
	long long v = -1;
	int i;

	for (i = 0; i < 1000; i++) {
		v = rdl_debugfs_counter("dlm", name);
		if (v == want)
			break;
		usleep(10000);
	}
	return v;
}

/*
 * dlm_node_waits_max: node 0, holding "nwait" EX with the bound at 4,
 * remembers 4 of node 1's 8 waits on it (waits_known) and counts the
 * other 4 (waits_dropped); its holder has its BAST. Node 1's cancels
 * make node 0 forget the 4 it remembered.
 */
#define NWAIT_BOUND	4
#define NWAIT_REQS	8

TEST_F_TIMEOUT(dlm, node_waits, STEP_S)
{
	struct rdlock_dlm_test_event e;
	long long dropped = 0, known = 0;
	int fd = self->fd, i;
	__u32 me = self->env.self;

	if (!me) {
		ASSERT_EQ(0, rdl_write_u32(NODE_WAITS, NWAIT_BOUND));
		GRANT(fd, 0, EX, 0, "nwait");
		dropped = rdl_debugfs_counter("dlm", "waits_dropped");
		known = rdl_debugfs_counter("dlm", "waits_known");
		ASSERT_LE(0, dropped);
		ASSERT_LE(0, known);
	}
	BARRIER_GEN(34, 1);
	if (me == 1)
		for (i = 1; i <= NWAIT_REQS; i++)
			ASSERT_EQ(0, dl_lock(fd, i, EX, 0, "nwait"));
	BARRIER_GEN(63, 1);
	if (!me) {
		EXPECT_EQ(dropped + NWAIT_REQS - NWAIT_BOUND,
			  dl_counter_is("waits_dropped",
					dropped + NWAIT_REQS - NWAIT_BOUND));
		EXPECT_EQ(known + NWAIT_BOUND,
			  rdl_debugfs_counter("dlm", "waits_known"));
		EXPECT_BAST(fd, 0, EX);
		/* Node 1's other waits may have made more: take them. */
		while (!dl_event(fd, 0, QUIET_MS, &e))
			EXPECT_EQ(RDLOCK_DLM_TEST_BAST, e.type);
	}
	BARRIER_GEN(34, 2);
	if (me == 1)
		for (i = 1; i <= NWAIT_REQS; i++) {
			ASSERT_EQ(0, dl_unlock(fd, i, LKF_CANCEL));
			EXPECT_AST(fd, i, ECANCEL);
		}
	BARRIER_GEN(63, 2);
	if (!me) {
		EXPECT_EQ(known, dl_counter_is("waits_known", known));
		UNLOCK(fd, 0);
		EXPECT_EQ(0, rdl_write_u32(NODE_WAITS, NODE_WAITS_DEFAULT));
	}
}

/* LOCKS of every node in this test's lockspace, of lock @name if not NULL. */
static int lk_query(int dev, const char *name, struct rdlock_locks_entry *e,
		    __u32 cap, __u32 *n, __u32 *asked, __u32 *answered)
{
	struct rdlock_locks l = {
		.version = RDLOCK_UAPI_VERSION,
		.flags = RDLOCK_LOCKS_QUERY_CLUSTER,
		.count = cap,
		.entries = (__u64)(unsigned long)e,
		.lockspace = "dlm." LS_NAME,
	};
	int ret;

	if (name) {
		l.name = (__u64)(unsigned long)name;
		l.name_len = strlen(name);
	}
	ret = rdl_ioctl(dev, RDLOCK_IOC_LOCKS, &l);
	if (!ret) {
		*n = l.count;
		*asked = l.asked;
		*answered = l.answered;
	}
	return ret;
}

/* How many entries of @e (@n) are lock @name of @node in @state. */
static int lk_count(const struct rdlock_locks_entry *e, __u32 n,
		    const char *name, __u32 node, __u32 state)
{
	int c = 0;
	__u32 i;

	for (i = 0; i < n; i++)
		c += e[i].name_len == strlen(name) &&
		     !memcmp(e[i].name, name, e[i].name_len) &&
		     e[i].node == node && e[i].state == state;
	return c;
}

/*
 * Poll LOCKS of every node until lock @name of @node in @state shows
 * @want times (60 s at most): 0, or -1 with the last list in @e.
 */
static int lk_wait(int dev, struct rdlock_locks_entry *e, __u32 cap,
		   __u32 *n, const char *name, __u32 node, __u32 state,
		   int want)
{
	double end = rdl_now() + 60;
	__u32 asked, answered;

	do {
		if (!lk_query(dev, NULL, e, cap, n, &asked, &answered) &&
		    *n <= cap && lk_count(e, *n, name, node, state) == want)
			return 0;
		usleep(50000);
	} while (rdl_now() < end);
	return -1;
}

/* Unlock @slot, taking the BASTs before its unlock AST: 0, or -1. */
static int lk_unlock(int fd, __u32 slot)
{
	struct rdlock_dlm_test_event e;

	if (dl_unlock(fd, slot, 0))
		return -1;
	do {
		if (dl_event(fd, slot, WAIT_MS, &e))
			return -1;
	} while (e.type == RDLOCK_DLM_TEST_BAST);
	return e.type == RDLOCK_DLM_TEST_AST && e.status == EUNLOCK ? 0 : -1;
}

/* Whether entry @x is one the locks test makes, on a cluster of @nr nodes. */
static bool lk_expected(const struct rdlock_locks_entry *x, __u32 nr)
{
	char name[32];

	if (!x->hash || !x->id || x->home != RDLOCK_LOCKS_NONE || x->owner)
		return false;
	if (x->node < nr) {
		res_name(name, sizeof(name), "locks", x->node);
		if (x->name_len == strlen(name) &&
		    !memcmp(x->name, name, x->name_len))
			return x->state == RDLOCK_LOCKS_GRANTED &&
			       x->mode == RDLOCK_LOCK_EX &&
			       x->rqmode == RDLOCK_LOCKS_NONE &&
			       x->flags == RDLOCK_LOCKS_LVB_VALID;
	}
	if (x->name_len == strlen("locks-shared") &&
	    !memcmp(x->name, "locks-shared", x->name_len))
		return x->flags == 0 &&
		       ((x->node == 0 && x->state == RDLOCK_LOCKS_GRANTED &&
			 x->mode == RDLOCK_LOCK_PR &&
			 x->rqmode == RDLOCK_LOCKS_NONE) ||
			(x->node == 1 && x->state == RDLOCK_LOCKS_WAITING &&
			 x->mode == RDLOCK_LOCKS_NONE &&
			 x->rqmode == RDLOCK_LOCK_EX));
	/* 63 bytes: three name notices, the last of 15. */
	if (x->name_len == strlen(LONG_NAME + 1) &&
	    !memcmp(x->name, LONG_NAME + 1, x->name_len))
		return x->flags == 0 && x->node == 0 &&
		       x->state == RDLOCK_LOCKS_GRANTED &&
		       x->mode == RDLOCK_LOCK_NL &&
		       x->rqmode == RDLOCK_LOCKS_NONE;
	if (x->name_len == strlen("locks-done") &&
	    !memcmp(x->name, "locks-done", x->name_len))
		return x->flags == 0 && x->node < nr &&
		       ((x->node == 0 && x->state == RDLOCK_LOCKS_GRANTED &&
			 x->mode == RDLOCK_LOCK_EX &&
			 x->rqmode == RDLOCK_LOCKS_NONE) ||
			(x->node && x->state == RDLOCK_LOCKS_WAITING &&
			 x->mode == RDLOCK_LOCKS_NONE &&
			 x->rqmode == RDLOCK_LOCK_PR));
	return false;
}

TEST_F_TIMEOUT(dlm, locks, STEP_S)
{
	static struct rdlock_locks_entry e[64];
	__u32 me = self->env.self, nr = self->env.nr_nodes, n = 0, i, k;
	__u32 asked = 0, answered = 0, others;
	struct rdlock_dlm_test_event ev;
	__u8 want[RDLOCK_DLM_TEST_LVB];
	char name[32];
	int fd = self->fd, dev;
	bool whole = false;
	double end;

	dev = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	others = ((1U << nr) - 1) & ~(1U << me);
	if (!me) {
		GRANT(fd, 1, PR, 0, "locks-shared");
		GRANT(fd, 2, EX, 0, "locks-done");
		GRANT(fd, 3, NL, 0, LONG_NAME + 1);
	}
	/* A value stored, then EX again: valid at that grant. */
	res_name(name, sizeof(name), "locks", me);
	ASSERT_EQ(0, lvb_grant(fd, 0, EX, 0, name, &ev));
	lvb_pattern(want, me);
	ASSERT_EQ(0, lvb_store(fd, 0, NL, want));
	ASSERT_EQ(0, lvb_grant(fd, 0, EX, 0, NULL, &ev));
	EXPECT_EQ(0, ev.sb_flags);
	/* Node 1 waits for EX once node 0's answer shows its PR. */
	if (me == 1) {
		ASSERT_EQ(0, lk_wait(dev, e, 64, &n, "locks-shared", 0,
				     RDLOCK_LOCKS_GRANTED, 1));
		ASSERT_EQ(0, dl_lock(fd, 1, EX, 0, "locks-shared"));
	}
	/* Every node's locks, as the nodes answer, until all are there. */
	end = rdl_now() + 60;
	do {
		ASSERT_EQ(0, lk_query(dev, NULL, e, 64, &n, &asked, &answered));
		ASSERT_GE(64, n);
		whole = lk_count(e, n, "locks-shared", 0,
				 RDLOCK_LOCKS_GRANTED) == 1 &&
			lk_count(e, n, "locks-shared", 1,
				 RDLOCK_LOCKS_WAITING) == 1 &&
			lk_count(e, n, "locks-done", 0,
				 RDLOCK_LOCKS_GRANTED) == 1 &&
			lk_count(e, n, LONG_NAME + 1, 0,
				 RDLOCK_LOCKS_GRANTED) == 1;
		for (k = 0; k < nr; k++) {
			res_name(name, sizeof(name), "locks", k);
			whole &= lk_count(e, n, name, k,
					  RDLOCK_LOCKS_GRANTED) == 1;
		}
		if (!whole)
			usleep(50000);
	} while (!whole && rdl_now() < end);
	EXPECT_TRUE(whole);
	EXPECT_EQ(others, asked);
	EXPECT_EQ(others, answered);
	/* Exactly those, and the done waits of the nodes that checked. */
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(lk_expected(&e[i], nr))
			TH_LOG("entry %u: '%.*s' node %u state %u modes %u %u flags %#x id %u",
			       i, (int)e[i].name_len, (const char *)e[i].name,
			       e[i].node, e[i].state, e[i].mode, e[i].rqmode,
			       e[i].flags, e[i].id);
		if (e[i].node == me && e[i].name_len == strlen("locks-0"))
			EXPECT_EQ(dl_lkid(fd, 0), e[i].id);
	}
	EXPECT_GE(n, nr + 4);
	EXPECT_LE(n, nr + 4 + nr - 1);
	/* One name: the next node's lock alone, from its answer. */
	k = (me + 1) % nr;
	res_name(name, sizeof(name), "locks", k);
	ASSERT_EQ(0, lk_query(dev, name, e, 64, &n, &asked, &answered));
	ASSERT_EQ(1, n);
	EXPECT_EQ(k, e[0].node);
	EXPECT_EQ(RDLOCK_LOCK_EX, e[0].mode);
	EXPECT_EQ(RDLOCK_LOCKS_LVB_VALID, e[0].flags);
	EXPECT_EQ(others, answered);
	/* A capacity of 1: all are counted, one is written. */
	memset(e, 0xa5, sizeof(e));
	ASSERT_EQ(0, lk_query(dev, NULL, e, 1, &n, &asked, &answered));
	EXPECT_LE(nr + 4, n);
	EXPECT_NE(0xa5a5a5a5U, e[0].name_len);
	EXPECT_EQ(0xa5a5a5a5U, e[1].name_len);
	EXPECT_EQ(others, answered);

	/* Done here: wait for PR on locks-done, which node 0 holds EX. */
	if (me) {
		ASSERT_EQ(0, dl_lock(fd, 2, PR, 0, "locks-done"));
	} else {
		/* Every other node checked: it waits. */
		for (k = 1; k < nr; k++)
			ASSERT_EQ(0, lk_wait(dev, e, 64, &n, "locks-done", k,
					     RDLOCK_LOCKS_WAITING, 1));
		EXPECT_EQ(0, lk_unlock(fd, 1));
		EXPECT_EQ(0, lk_unlock(fd, 2));
		UNLOCK(fd, 3);
	}
	if (me == 1) {
		EXPECT_AST(fd, 1, 0);
		UNLOCK(fd, 1);
	}
	if (me) {
		EXPECT_AST(fd, 2, 0);
		UNLOCK(fd, 2);
	}
	UNLOCK(fd, 0);
	/*
	 * The last node closes the lockspace: its bye notice tells node 0,
	 * whose next lists ask it no more (the others may close as well).
	 */
	if (me == nr - 1)
		EXPECT_EQ(0, rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_CLOSE, NULL));
	if (!me) {
		end = rdl_now() + 60;
		do {
			ASSERT_EQ(0, lk_query(dev, NULL, e, 64, &n, &asked,
					      &answered));
			if (asked & 1U << (nr - 1))
				usleep(50000);
		} while (asked & 1U << (nr - 1) && rdl_now() < end);
		EXPECT_EQ(0, asked & 1U << (nr - 1));
	}
	close(dev);
}

/* "-t TEST": only that test (rdl_select_tests()). */
#define main dlm_harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	if (rdl_select_tests(argc, argv))
		return KSFT_FAIL;
	return dlm_harness_main(argc, argv);
}
