// SPDX-License-Identifier: GPL-2.0
/*
 * Losing the RDMA device under held and waiting locks, on every node of a
 * guest cluster at once. The last node R removes its rxe device
 * (ib_client remove), then adds it back and brings its cluster up again
 * with a new, zeroed lock table:
 *
 *  - on R, a LOCK waiting for a lock node 0 holds fails with ESHUTDOWN
 *    instead of hanging; the cluster is down; the lockspace (an update
 *    lockspace) takes no new lock and does not upgrade R's update lock
 *    (both ESHUTDOWN), UNLOCK and LEAVE still work, and the lockspace is
 *    gone from the node (JOIN and LS_REMOVE: ENOENT);
 *  - on the other nodes, the lockspace keeps working while R is away and
 *    turns ESHUTDOWN once R is back with a new table (its lock words and
 *    name entries on R are lost; debugfs says "lost: yes"); UNLOCK and
 *    LEAVE work, JOIN gives ENOENT;
 *  - afterwards every node creates the lockspace again and M exclusive
 *    increments per node of a counter under a fresh name end exactly at
 *    N * M.
 *
 * Barriers and the counter are raw slots on node 0, which never restarts.
 *
 * Env: RDLOCK_NODE_ID, RDLOCK_NR_NODES, RDLOCK_DEVRM_ITERS (M, default
 * 20), RDLOCK_BARRIER_TIMEOUT (s, default 600).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdltest.h"

#include <kselftest_harness.h>

#define LS		"devrm"
#define LS_SLOTS	64
#define WAIT_S		180	/* for the cluster to go down or come back */

/* Raw slots relative to first_free_slot, all on node 0. */
/*
 * Raw slots relative to first_free_slot, all on node 0; xport_test, which
 * runs after this test, has the first 16.
 */
#define R_BARRIER	64	/* + 0 .. 4 */
#define R_COUNTER	72

struct devrm {
	__u32 self, nr_nodes, iters, barrier_timeout, base;
	int fd;		/* /dev/rdlock_test */
	int dev;	/* /dev/rdlock, not joined: creation, status */
};

static int ls_create(int fd)
{
	struct rdlock_ls_create c;

	rdl_ls_create_init(&c, LS, RDLOCK_PROTO_BAKERY, LS_SLOTS,
			   RDLOCK_LS_UPDATE, 0666);
	return rdl_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c);
}

static int cluster_state(int dev)
{
	struct rdlock_status st = { .version = RDLOCK_UAPI_VERSION };

	return ioctl(dev, RDLOCK_IOC_STATUS, &st) < 0 ? -errno : (int)st.state;
}

static int wait_state(int dev, int state)
{
	double end = rdl_now() + WAIT_S;

	while (cluster_state(dev) != state)
		if (rdl_now() > end || usleep(100 * 1000))
			return -1;
	return 0;
}

static int barrier(const struct devrm *d, __u32 rel, char *msg, size_t len)
{
	return rdl_barrier(d->fd, d->nr_nodes, d->barrier_timeout,
			   d->base + R_BARRIER + rel, 1, msg, len);
}

#define BARRIER(d, rel) do {						\
	char msg_[160];							\
									\
	ASSERT_EQ(0, barrier((d), (rel), msg_, sizeof(msg_)))		\
		TH_LOG("%s", msg_);					\
} while (0)

FIXTURE(devrm) {
	struct devrm d;
};

FIXTURE_SETUP(devrm)
{
	struct devrm *d = &self->d;
	struct rdlock_test_info info;

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NODE_ID", -1, &d->self));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NR_NODES", -1, &d->nr_nodes));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_DEVRM_ITERS", 20, &d->iters));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 600,
				 &d->barrier_timeout));
	ASSERT_LT(d->self, d->nr_nodes);
	ASSERT_LE(2, d->nr_nodes);
	d->fd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, d->fd);
	d->dev = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, d->dev);
	ASSERT_EQ(0, ioctl(d->fd, RDLOCK_TEST_IOC_INFO, &info));
	ASSERT_EQ(1, info.ready);
	d->base = info.first_free_slot;
}

FIXTURE_TEARDOWN(devrm)
{
	close(self->d.dev);
	close(self->d.fd);
}

/* Child of R: wait for "held" (node 0 has it); exit with the errno. */
static void waiter(void)
{
	int fd = rdl_open_joined(LS);

	if (fd < 0)
		_exit(100);
	_exit(rdl_ls_lock(fd, "held", RDLOCK_LOCK_EX, 0, 0, NULL));
}

/* The child's exit status within @s seconds, or -1. */
static int wait_child(pid_t pid, int s)
{
	double end = rdl_now() + s;
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (rdl_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(50 * 1000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* R: lose the device with a lock held and one waiting, then come back. */
static void restarting_node(struct __test_metadata *_metadata,
			    struct devrm *d)
{
	int fd = rdl_open_joined(LS), got;
	__u32 mine;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rdl_ls_lock(fd, "mine", RDLOCK_LOCK_UP, 0, 0, &mine));
	BARRIER(d, 1);			/* node 0 holds "held" */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		waiter();
	sleep(2);
	ASSERT_EQ(0, waitpid(pid, NULL, WNOHANG))
		TH_LOG("the waiter did not wait for node 0's lock");
	ASSERT_EQ(0, system("rdma link delete rxe0"));
	got = wait_child(pid, 60);
	EXPECT_EQ(ESHUTDOWN, got)
		TH_LOG("the waiting LOCK ended with %d (%s), not ESHUTDOWN",
		       got, got > 0 ? strerror(got) : "hung or died");
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, cluster_state(d->dev));

	EXPECT_EQ(ESHUTDOWN, rdl_ls_lock(fd, "other", RDLOCK_LOCK_SH,
					 RDLOCK_LKF_TRY, 0, NULL));
	EXPECT_EQ(ESHUTDOWN, rdl_ls_convert(fd, mine, RDLOCK_LOCK_EX,
					    RDLOCK_LKF_TRY, 0));
	EXPECT_EQ(0, rdl_ls_unlock(fd, mine));
	EXPECT_EQ(0, rdl_ioctl(fd, RDLOCK_IOC_LEAVE, NULL));
	EXPECT_EQ(ENOENT, rdl_ls_by_name(fd, RDLOCK_IOC_JOIN, LS));
	EXPECT_EQ(ENOENT, rdl_ls_by_name(d->dev, RDLOCK_IOC_LS_REMOVE, LS));
	close(fd);

	ASSERT_EQ(0, system("rdma link add rxe0 type rxe netdev eth0"));
	ASSERT_EQ(0, rdl_ioctl(d->dev, RDLOCK_IOC_UP, NULL));
	ASSERT_EQ(0, wait_state(d->dev, RDLOCK_CLUSTER_READY))
		TH_LOG("not ready %d s after the device came back", WAIT_S);
}

#define LS_STATS	"/sys/kernel/debug/rdlock/lockspaces/" LS "/stats"

/* 1 if the debugfs file @path has the line @line, 0 if not, -1 unreadable. */
static int debugfs_says(const char *path, const char *line)
{
	char buf[128];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(buf, sizeof(buf), f))
		found = !strcmp(buf, line);
	fclose(f);
	return found;
}

static int transport_error(int err)
{
	return err == ENOTCONN || err == ECONNRESET || err == ETIMEDOUT ||
	       err == EIO;
}

/*
 * The others: keep taking locks while R is away; once R is back with a
 * new table, the lockspace must refuse them.
 */
static void surviving_node(struct __test_metadata *_metadata,
			   struct devrm *d)
{
	int fd = rdl_open_joined(LS), got = 0;
	double end = rdl_now() + WAIT_S;
	__u32 held = 0, probe;
	char name[16];

	ASSERT_LE(0, fd);
	if (d->self == 0)
		ASSERT_EQ(0, rdl_ls_lock(fd, "held", RDLOCK_LOCK_EX, 0, 0,
					 &held));
	BARRIER(d, 1);
	snprintf(name, sizeof(name), "probe%u", d->self);
	while (rdl_now() < end) {
		got = rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, RDLOCK_LKF_TRY, 0,
				  &probe);
		if (got == ESHUTDOWN)
			break;
		/*
		 * A name homed on R fails with the transport's error while R
		 * is away (which one depends on how the loss showed).
		 */
		if (got && !transport_error(got))
			break;
		if (!got)
			ASSERT_EQ(0, rdl_ls_unlock(fd, probe));
		usleep(100 * 1000);
	}
	ASSERT_EQ(ESHUTDOWN, got)
		TH_LOG("LOCK %s: %s (%d s on)", name, strerror(got), WAIT_S);
	/* Still listed until the next lookup by name: debugfs says why. */
	EXPECT_EQ(1, debugfs_says(LS_STATS, "lost: yes\n"));
	if (held)
		EXPECT_EQ(0, rdl_ls_unlock(fd, held));
	EXPECT_EQ(0, rdl_ioctl(fd, RDLOCK_IOC_LEAVE, NULL));
	EXPECT_EQ(ENOENT, rdl_ls_by_name(fd, RDLOCK_IOC_JOIN, LS));
	close(fd);
	ASSERT_EQ(0, wait_state(d->dev, RDLOCK_CLUSTER_READY));
}

/* Everybody: the lockspace anew, and exclusion on the re-formed cluster. */
static void exclusion_after(struct __test_metadata *_metadata,
			    struct devrm *d)
{
	__u32 slot = d->base + R_COUNTER, i, h;
	__u64 v = 0;
	int fd, got;

	got = ls_create(d->dev);
	ASSERT_EQ(0, got)
		TH_LOG("LS_CREATE %s again: %s", LS, strerror(got));
	BARRIER(d, 2);
	fd = rdl_open_joined(LS);
	ASSERT_LE(0, fd);
	for (i = 0; i < d->iters; i++) {
		ASSERT_EQ(0, rdl_ls_lock(fd, "after", RDLOCK_LOCK_EX, 0, 0, &h));
		/* Not atomic on purpose: only the lock keeps it exact. */
		ASSERT_EQ(0, rdl_xop(d->fd, RDLOCK_TEST_OP_READ, 0, slot, 0, 0,
				     &v));
		ASSERT_EQ(0, rdl_xop(d->fd, RDLOCK_TEST_OP_WRITE, 0, slot,
				     v + 1, 0, NULL));
		ASSERT_EQ(0, rdl_ls_unlock(fd, h));
	}
	BARRIER(d, 3);
	ASSERT_EQ(0, rdl_xop(d->fd, RDLOCK_TEST_OP_READ, 0, slot, 0, 0, &v));
	EXPECT_EQ((__u64)d->nr_nodes * d->iters, v);
	close(fd);
	BARRIER(d, 4);
	EXPECT_EQ(0, rdl_ls_by_name(d->dev, RDLOCK_IOC_LS_REMOVE, LS));
}

TEST_F_TIMEOUT(devrm, device_removal, 900)
{
	struct devrm *d = &self->d;
	int got = ls_create(d->dev);

	ASSERT_EQ(0, got)
		TH_LOG("LS_CREATE %s: %s", LS, strerror(got));
	BARRIER(d, 0);
	if (d->self == d->nr_nodes - 1)
		restarting_node(_metadata, d);
	else
		surviving_node(_metadata, d);
	exclusion_after(_metadata, d);
}

TEST_HARNESS_MAIN
