// SPDX-License-Identifier: GPL-2.0
/*
 * A node declared down (RDLOCK_IOC_NODE_DOWN on every survivor), through
 * the DLM kernel API's test client, at once on every node of a guest
 * cluster of 3 or 4. The last node is the victim; it stays up but is cut
 * off, as a fenced node would be.
 *
 * The victim holds EX with a valid value block on "nd-a" and PR on "nd-b",
 * whose locks node 0 placed (it used them first), and EX on "nd-d", placed
 * on node 1. Node 0 waits for PR on "nd-a" (a conversion from NL, VALBLK);
 * node 1 waits for EX on "nd-b" (a new lock) and on "nd-d" (NL->EX). Then
 * every survivor declares the victim down. Each must:
 *  - get 0 from the ioctl, then every waiting request granted (status 0),
 *    "nd-a" with RDLOCK_DLM_SBF_VALNOTVALID (the victim died at EX);
 *  - have had exactly one node_down callback in the lockspace, for the
 *    victim, before any of those grants (the callbacks' order);
 *  - have released exactly the victim's words in its own table (debugfs
 *    down_words: 3 on node 0, 2 on node 1) and marked exactly one value
 *    block (down_lvbs, node 0);
 *  - show the victim RDLOCK_NODE_FENCED, and the cluster still READY;
 *  - get EALREADY declaring it down again, EINVAL for itself and for a
 *    node id that is not configured.
 * The victim must find its lockspace lost: a new request fails with
 * -ESHUTDOWN within 60 s, and each of its DLM lockspaces has had exactly
 * one lost callback (a survivor's none).
 *
 * The same for kernel-API lockspaces of the bakery, the CAS spinlock and
 * CQL: the victim holds EX on a name whose lock word is on node 0,
 * and a process on node 1 waits for EX on it (queued in the bakery's and
 * CQL's words: the lockspace counts it in waits). It must still wait when the
 * victim is declared down, be granted after, and node 0 must have
 * released exactly that word (down_words 1; 0 elsewhere; in CQL 2 on node
 * 0, which resets every busy lock it keeps, the moved one below too).
 *
 * Names of the victim move (a second DLM lockspace, "ndmove", and the
 * kernel-API lockspaces): node 0 holds PR on "nd-m0".."nd-m5", whose locks
 * it placed, and on "nd-q0".."nd-q5", whose locks the victim placed (it
 * used them first and holds PR too); and in each kernel-API lockspace EX
 * on a name whose entry and lock word are on the victim. Once the victim
 * is declared down:
 *  - node 0 moved exactly its locks whose entry or word was on the victim
 *    (debugfs moved_locks: each "nd-q" name, the "nd-m" names homed on it,
 *    1 per kernel-API lockspace), one per name (moved_names), none lost;
 *    the kernel-API ones are on the victim's heir, node 0;
 *  - node 1 finds each of them held: NOQUEUE EX gets -EAGAIN, a TRY EX
 *    EAGAIN (before, -ENOTCONN: the names were lost with the victim);
 *    NOQUEUE PR with VALBLK on each "nd-" name gets the value stored
 *    before the death (by node 0 for "nd-m", the victim for "nd-q"),
 *    valid: node 0's PR had read it, so its move carried it;
 *  - once node 0 releases them, node 1 is granted EX on each: the
 *    victim's PR did not move with them.
 *
 * Without the release of the victim's holds the waits never end; without
 * the value block's marking "nd-a" is granted valid.
 *
 * With RDLOCK_ND_KILL set (rdlock loaded with membership=dlm, corosync and
 * dlm_controld running: selftests/guest/member.sh), nobody calls the
 * ioctl: the victim runs that command, which kills its corosync and
 * dlm_controld, its power, or its link, and the cluster engine declares
 * it down. Then besides the above:
 *  - the victim's membership stops (debugfs rdlock/membership), and from
 *    then on nothing is granted to it: every NOQUEUE request gets -EAGAIN
 *    until its lockspace is lost (-ESHUTDOWN) or its power goes (cut off
 *    alone, it lost quorum: the minority of a partition grants nothing);
 *  - each survivor's membership had exactly one recover_slot and declared
 *    exactly one node down, and runs again without the victim.
 *
 * With RDLOCK_ND_HOLD set too, the victim runs that command once its
 * lockspace is lost, before it closes anything: it must return once every
 * survivor has declared the victim down.
 *
 * Env: RDLOCK_NODE_ID, RDLOCK_NR_NODES, RDLOCK_BARRIER_TIMEOUT (s),
 * RDLOCK_ND_KILL, RDLOCK_ND_HOLD.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdltest.h"
#include "rdlock_dlm_test_ioctl.h"

#include <kselftest_harness.h>

#include "dlmlib.h"

#define LS_NAME		"ndtest"
#define LS_STATS	"lockspaces/dlm." LS_NAME "/stats"
#define LOST_WAIT_S	60	/* the victim hears it was declared down */
/* The cluster engine's detection: corosync's token and consensus, ... */
#define ENGINE_WAIT_S	180
/* From -ESHUTDOWN to the lost callback (a work item's delay). */
#define LOST_CB_WAIT_S	10
#define MEMBERSHIP	"membership"
#define ESHUTDOWN_AST	(-ESHUTDOWN)

/* Raw slots relative to B on node 0: barriers. */
#define R_ND_BARRIER	0
/* ... and, + p, 1 + the number of protocol p's name (its word on node 0). */
#define R_ND_NAME	40
/* ... and, + p, 1 + the number of protocol p's name homed on the victim. */
#define R_ND_VNAME	48

#define LS_MOVE		"ndmove"
#define LS_MOVE_STATS	"lockspaces/dlm." LS_MOVE "/stats"
/* Names of each kind in it: "nd-m" at slots 0.., "nd-q" after them. */
#define MOVE_NAMES	6

#define PROTO_SLOTS	256	/* 7 names per node in CQL's default queue */
#define PROTO_NAMES	64	/* tried to find one on node 0 */

/* Kernel-API lockspaces whose protocols have a victim's holds released. */
static const struct {
	const char *ls;
	__u32 proto;
	/* A waiter is counted in waits once its ticket or entry is in. */
	bool queues;
} nd_protos[] = {
	{ "nd-bakery", RDLOCK_PROTO_BAKERY, true },
	/* A spinning waiter takes nothing; it is counted when it ends. */
	{ "nd-cas", RDLOCK_PROTO_CASLOCK, false },
	{ "nd-cql", RDLOCK_PROTO_CQL, true },
};

#define NR_PROTOS	ARRAY_SIZE(nd_protos)

/* What a node has of those lockspaces. */
struct nd_protos {
	int ls[NR_PROTOS];		/* joined to nd_protos[p].ls */
	char name[NR_PROTOS][16];	/* its lock word is on node 0 */
	pid_t waiter[NR_PROTOS];	/* node 1: waits for EX on it */
	char vname[NR_PROTOS][16];	/* its lock word is on the victim */
	__u32 vheld[NR_PROTOS];		/* node 0: 1 + its handle, held EX */
};

FIXTURE(nd) {
	int raw;	/* /dev/rdlock_test */
	int fd;		/* /dev/rdlock_dlm_test */
	int fd2;	/* /dev/rdlock_dlm_test, LS_MOVE */
	int ctl;	/* /dev/rdlock */
	struct dlm_env env;
	struct nd_protos pr;
};

FIXTURE_SETUP(nd)
{
	struct dlm_env *e = &self->env;
	struct rdlock_dlm_test_open o = { .node_id = ~0U };
	struct rdlock_test_info info;

	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NODE_ID", -1, &e->self));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_NR_NODES", -1, &e->nr_nodes));
	ASSERT_EQ(0, rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 300,
				 &e->barrier_timeout));
	ASSERT_LT(e->self, e->nr_nodes);
	ASSERT_LE(3, e->nr_nodes);	/* two survivors at least */
	self->raw = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->raw);
	ASSERT_EQ(0, ioctl(self->raw, RDLOCK_TEST_IOC_INFO, &info));
	ASSERT_EQ(1, info.ready);
	e->base = info.first_free_slot + RDL_FIRST_TEST_SLOT;
	self->ctl = open("/dev/rdlock", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->ctl);
	self->fd = open(DLM_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	strcpy(o.name, LS_NAME);
	ASSERT_EQ(0, rdl_ioctl(self->fd, RDLOCK_DLM_TEST_IOC_OPEN, &o));
	self->fd2 = open(DLM_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd2);
	strcpy(o.name, LS_MOVE);
	ASSERT_EQ(0, rdl_ioctl(self->fd2, RDLOCK_DLM_TEST_IOC_OPEN, &o));
}

FIXTURE_TEARDOWN(nd)
{
	unsigned int p;

	for (p = 0; p < NR_PROTOS; p++) {
		if (self->pr.waiter[p] > 0)
			kill(self->pr.waiter[p], SIGKILL);
		if (self->pr.ls[p] > 0)
			close(self->pr.ls[p]);
	}
	close(self->fd2);
	close(self->fd);
	close(self->ctl);
	close(self->raw);
}

/* The survivors only: the victim cannot reach node 0 any more. */
#define SURVIVORS_BARRIER(rel) do {					\
	char msg_[160];							\
									\
	ASSERT_EQ(0, rdl_barrier(self->raw, self->env.nr_nodes - 1,	\
				 self->env.barrier_timeout,		\
				 self->env.base + R_ND_BARRIER + (rel), 1,\
				 msg_, sizeof(msg_)))			\
		TH_LOG("%s", msg_);					\
} while (0)

static int node_down(int ctl, __u32 node)
{
	struct rdlock_node_down nd = {
		.version = RDLOCK_UAPI_VERSION,
		.node_id = node,
	};

	return rdl_ioctl(ctl, RDLOCK_IOC_NODE_DOWN, &nd);
}

/*
 * The cluster as this node's RDLOCK_IOC_STATUS shows it: its state, and
 * in *@flags the status flags of @node.
 */
static int cluster_state(int ctl, __u32 node, __u32 *state, __u32 *flags)
{
	struct rdlock_node_status ns[RDLOCK_MAX_NODES];
	struct rdlock_status st = {
		.version = RDLOCK_UAPI_VERSION,
		.nr_nodes = RDLOCK_MAX_NODES,
		.nodes = (__u64)(unsigned long)ns,
	};
	__u32 i;
	int ret = rdl_ioctl(ctl, RDLOCK_IOC_STATUS, &st);

	if (ret)
		return ret;
	*state = st.state;
	for (i = 0; i < st.nr_nodes; i++)
		if (ns[i].node_id == node)
			*flags = ns[i].flags;
	return 0;
}

/* Is this node's membership state (debugfs rdlock/membership) @want? */
static bool member_state_is(const char *want)
{
	char line[128], state[32] = "";
	FILE *f = fopen("/sys/kernel/debug/rdlock/" MEMBERSHIP, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "state: %31s", state) == 1)
			break;
	fclose(f);
	return !strcmp(state, want);
}

/* Wait up to @secs for the membership counter @name to reach @v. */
static bool member_count_reaches(const char *name, long long v, int secs)
{
	double end = rdl_now() + secs;

	while (rdl_debugfs_counter(MEMBERSHIP, name) < v) {
		if (rdl_now() > end)
			return false;
		usleep(100 * 1000);
	}
	return true;
}

/* The lost callbacks of the DLM lockspace of @fd so far; -1 on error. */
static long long dl_lost(int fd)
{
	struct rdlock_dlm_test_downs d;

	if (rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_DOWNS, &d))
		return -1;
	return d.lost;
}

/* Wait up to @secs for a lost callback in the DLM lockspace of @fd. */
static bool dl_lost_told(int fd, int secs)
{
	double end = rdl_now() + secs;

	while (dl_lost(fd) == 0 && rdl_now() < end)
		usleep(100 * 1000);
	return dl_lost(fd) > 0;
}

static void proto_name(char *buf, size_t len, __u32 i)
{
	snprintf(buf, len, "hot%u", i);
}

/* Create the protocols' lockspaces (every node, then a barrier). */
static int protos_create(int ctl)
{
	struct rdlock_ls_create c;
	unsigned int p;
	int got;

	for (p = 0; p < NR_PROTOS; p++) {
		rdl_ls_create_init(&c, nd_protos[p].ls, nd_protos[p].proto,
				   PROTO_SLOTS, 0, 0600);
		got = rdl_ioctl(ctl, RDLOCK_IOC_LS_CREATE, &c);
		if (got)
			return got;
	}
	return 0;
}

/*
 * Join them; node 0 finds in each a name whose lock word its own table
 * keeps and one whose lock word the victim's keeps, which it holds EX, and
 * publishes both for the others (protos_names()).
 */
static void protos_join(struct __test_metadata *_metadata,
			const struct dlm_env *e, int raw, struct nd_protos *pr)
{
	__u32 victim = e->nr_nodes - 1;
	int own, vic, i;
	struct rdlock_query q;
	unsigned int p;
	char nm[16];
	__u64 v;
	__u32 h;

	for (p = 0; p < NR_PROTOS; p++) {
		pr->ls[p] = rdl_open_joined(nd_protos[p].ls);
		ASSERT_LE(0, pr->ls[p]);
		if (e->self)
			continue;
		own = -1;
		vic = -1;
		for (i = 0; i < PROTO_NAMES && (own < 0 || vic < 0); i++) {
			proto_name(nm, sizeof(nm), i);
			ASSERT_EQ(0, rdl_ls_lock(pr->ls[p], nm, RDLOCK_LOCK_EX,
						 RDLOCK_LKF_TRY, 0, &h));
			ASSERT_EQ(0, rdl_ls_query(pr->ls[p], h, &q));
			if (q.home_node == victim && vic < 0) {
				vic = i;
				pr->vheld[p] = h + 1;
				continue;
			}
			ASSERT_EQ(0, rdl_ls_unlock(pr->ls[p], h));
			if (q.home_node == 0 && own < 0)
				own = i;
		}
		ASSERT_LE(0, own)
			TH_LOG("%s: no name of %u on node 0",
			       nd_protos[p].ls, PROTO_NAMES);
		ASSERT_LE(0, vic)
			TH_LOG("%s: no name of %u on node %u",
			       nd_protos[p].ls, PROTO_NAMES, victim);
		ASSERT_EQ(0, rdl_xop(raw, RDLOCK_TEST_OP_WRITE, 0,
				     e->base + R_ND_NAME + p, own + 1, 0, &v));
		ASSERT_EQ(0, rdl_xop(raw, RDLOCK_TEST_OP_WRITE, 0,
				     e->base + R_ND_VNAME + p, vic + 1, 0,
				     &v));
	}
}

/* The names node 0 published. */
static void protos_names(struct __test_metadata *_metadata,
			 const struct dlm_env *e, int raw, struct nd_protos *pr)
{
	unsigned int p;
	__u64 v;

	for (p = 0; p < NR_PROTOS; p++) {
		ASSERT_EQ(0, rdl_xop(raw, RDLOCK_TEST_OP_READ, 0,
				     e->base + R_ND_NAME + p, 0, 0, &v));
		ASSERT_NE(0, v);
		proto_name(pr->name[p], sizeof(pr->name[p]), v - 1);
		ASSERT_EQ(0, rdl_xop(raw, RDLOCK_TEST_OP_READ, 0,
				     e->base + R_ND_VNAME + p, 0, 0, &v));
		ASSERT_NE(0, v);
		proto_name(pr->vname[p], sizeof(pr->vname[p]), v - 1);
	}
}

/* Name @i of LS_MOVE: "nd-q" ones (@i >= MOVE_NAMES) the victim used first. */
static void move_name(char *buf, size_t len, unsigned int i)
{
	snprintf(buf, len, "nd-%c%u", i < MOVE_NAMES ? 'm' : 'q',
		 i % MOVE_NAMES);
}

/* Wait up to WAIT_MS for counter @name of lockspace @ls to reach @v. */
static bool proto_counter_reaches(const char *ls, const char *name,
				  long long v)
{
	double end = rdl_now() + WAIT_MS / 1000.0;
	char stats[64];

	snprintf(stats, sizeof(stats), "lockspaces/%s/stats", ls);
	while (rdl_debugfs_counter(stats, name) < v) {
		if (rdl_now() > end)
			return false;
		usleep(20 * 1000);
	}
	return true;
}

/* Node 1: a process per protocol that waits for EX on its name. */
static void protos_wait(struct __test_metadata *_metadata,
			struct nd_protos *pr)
{
	unsigned int p;
	int fd, ret;
	__u32 h;

	for (p = 0; p < NR_PROTOS; p++) {
		pr->waiter[p] = fork();
		ASSERT_LE(0, pr->waiter[p]);
		if (pr->waiter[p])
			continue;
		fd = rdl_open_joined(nd_protos[p].ls);
		if (fd < 0)
			_exit(100);
		ret = rdl_ls_lock(fd, pr->name[p], RDLOCK_LOCK_EX, 0,
				  (ENGINE_WAIT_S + 60) * 1000, &h);
		if (!ret)
			ret = rdl_ls_unlock(fd, h);
		_exit(ret > 99 ? 99 : ret);
	}
	/* Its ticket or queue entry is in the word: it waits. */
	for (p = 0; p < NR_PROTOS; p++)
		if (nd_protos[p].queues)
			ASSERT_TRUE(proto_counter_reaches(nd_protos[p].ls,
							  "waits", 1))
				TH_LOG("%s: the waiter is not queued",
				       nd_protos[p].ls);
}

/* Node 1: is protocol @p's waiter still waiting? */
static bool proto_waits(const struct nd_protos *pr, unsigned int p)
{
	return waitpid(pr->waiter[p], NULL, WNOHANG) == 0;
}

/* Node 1: protocol @p's waiter's exit status (0: granted) within WAIT_MS. */
static int proto_granted(struct nd_protos *pr, unsigned int p)
{
	double end = rdl_now() + WAIT_MS / 1000.0;
	int status;
	pid_t pid;

	for (;;) {
		pid = waitpid(pr->waiter[p], &status, WNOHANG);
		if (pid)
			break;
		if (rdl_now() > end)
			return -ETIMEDOUT;
		usleep(50 * 1000);
	}
	pr->waiter[p] = 0;
	if (pid < 0 || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

/* A lock request with VALBLK and this value block. */
static int dl_lock_lvb(int fd, __u32 slot, int mode, __u32 flags,
		       const char *name, const char *lvb)
{
	struct rdlock_dlm_test_lock l = {
		.slot = slot, .mode = mode, .flags = flags | LKF_VALBLK,
	};
	size_t n = strlen(lvb);

	if (name) {
		l.namelen = strlen(name);
		memcpy(l.name, name, l.namelen);
	}
	memcpy(l.lvb, lvb, n < sizeof(l.lvb) ? n : sizeof(l.lvb) - 1);
	return rdl_ioctl(fd, RDLOCK_DLM_TEST_IOC_LOCK, &l);
}

/* The slot's next callback: a grant, status 0, into *@ev. */
#define EXPECT_GRANT_SEQ(fd, slot, ev) do {				\
	struct rdlock_dlm_test_event *ev_ = (ev);			\
	int sl_ = (slot);						\
									\
	ASSERT_EQ(0, dl_event((fd), sl_, WAIT_MS, ev_))			\
		TH_LOG("slot %d: not granted", sl_);			\
	ASSERT_EQ(RDLOCK_DLM_TEST_AST, ev_->type);			\
	ASSERT_EQ(0, ev_->status);					\
} while (0)

/* Counter @name of lockspace @ls (a kernel-API one's name). */
static long long proto_counter(const char *ls, const char *name)
{
	char stats[64];

	snprintf(stats, sizeof(stats), "lockspaces/%s/stats", ls);
	return rdl_debugfs_counter(stats, name);
}

/*
 * After the victim is declared down: its names that node 0 holds moved
 * with node 0's locks, node 1 finds them held, and is granted once node 0
 * releases them (the header comment).
 */
static void moved_names_check(struct __test_metadata *_metadata,
			      struct _test_data_nd *self)	/* FIXTURE_DATA */
{
	const struct dlm_env *e = &self->env;
	struct nd_protos *pr = &self->pr;
	struct rdlock_dlm_test_event ev;
	struct rdlock_query q;
	long long moved;
	unsigned int p, i;
	char nm[16];
	__u32 h;

	if (e->self == 0) {
		moved = rdl_debugfs_counter(LS_MOVE_STATS, "moved_locks");
		EXPECT_LE(MOVE_NAMES, moved);
		EXPECT_GE(2 * MOVE_NAMES, moved);
		EXPECT_EQ(moved, rdl_debugfs_counter(LS_MOVE_STATS,
						     "moved_names"));
		EXPECT_EQ(0, rdl_debugfs_counter(LS_MOVE_STATS, "lost_locks"));
		for (p = 0; p < NR_PROTOS; p++) {
			EXPECT_EQ(1, proto_counter(nd_protos[p].ls,
						   "moved_locks"))
				TH_LOG("%s: moved_locks", nd_protos[p].ls);
			EXPECT_EQ(1, proto_counter(nd_protos[p].ls,
						   "moved_names"));
			EXPECT_EQ(0, proto_counter(nd_protos[p].ls,
						   "lost_locks"));
			ASSERT_NE(0, pr->vheld[p]);
			ASSERT_EQ(0, rdl_ls_query(pr->ls[p], pr->vheld[p] - 1,
						  &q));
			/* The victim is the last node: its heir is node 0. */
			EXPECT_EQ(0, q.home_node)
				TH_LOG("%s: %s not on the heir",
				       nd_protos[p].ls, pr->vname[p]);
		}
	} else if (e->self == 1) {
		for (i = 0; i < 2 * MOVE_NAMES; i++) {
			move_name(nm, sizeof(nm), i);
			ASSERT_EQ(0, dl_lock(self->fd2, i, EX, LKF_NOQUEUE,
					     nm));
			EXPECT_AST(self->fd2, i, -EAGAIN);
			/*
			 * The value block kept its value: node 0's PR had
			 * read it, the victim held PR, nobody EX.
			 */
			ASSERT_EQ(0, dl_lock_lvb(self->fd2, i, PR, LKF_NOQUEUE,
						 nm, ""));
			ASSERT_EQ(0, dl_event(self->fd2, i, WAIT_MS, &ev));
			ASSERT_EQ(0, ev.status);
			EXPECT_EQ(0, ev.sb_flags & SBF_VALNOTVALID)
				TH_LOG("%s: not valid after the move", nm);
			EXPECT_STREQ(nm, (char *)ev.lvb)
				TH_LOG("%s: the value lost in the move", nm);
			UNLOCK(self->fd2, i);
		}
		for (p = 0; p < NR_PROTOS; p++)
			EXPECT_EQ(EAGAIN, rdl_ls_lock(pr->ls[p], pr->vname[p],
						      RDLOCK_LOCK_EX,
						      RDLOCK_LKF_TRY, 0, &h))
				TH_LOG("%s: %s not held by node 0",
				       nd_protos[p].ls, pr->vname[p]);
	}
	SURVIVORS_BARRIER(5);
	for (i = 0; e->self == 0 && i < 2 * MOVE_NAMES; i++)
		UNLOCK(self->fd2, i);
	for (p = 0; e->self == 0 && p < NR_PROTOS; p++) {
		EXPECT_EQ(0, rdl_ls_unlock(pr->ls[p], pr->vheld[p] - 1));
		pr->vheld[p] = 0;
	}
	SURVIVORS_BARRIER(9);
	if (e->self != 1)
		return;
	for (i = 0; i < 2 * MOVE_NAMES; i++) {
		move_name(nm, sizeof(nm), i);
		GRANT(self->fd2, i, EX, 0, nm);
		UNLOCK(self->fd2, i);
	}
	for (p = 0; p < NR_PROTOS; p++) {
		ASSERT_EQ(0, rdl_ls_lock(pr->ls[p], pr->vname[p],
					 RDLOCK_LOCK_EX, 0, WAIT_MS, &h))
			TH_LOG("%s: %s not granted", nd_protos[p].ls,
			       pr->vname[p]);
		ASSERT_EQ(0, rdl_ls_query(pr->ls[p], h, &q));
		EXPECT_EQ(0, q.home_node);
		EXPECT_EQ(0, rdl_ls_unlock(pr->ls[p], h));
	}
}

TEST_F_TIMEOUT(nd, victim, STEP_S)
{
	const struct dlm_env *e = &self->env;
	const char *kill_cmd = getenv("RDLOCK_ND_KILL");
	const char *hold_cmd = getenv("RDLOCK_ND_HOLD");
	/* Failures injected into this node's declaration (inject_ls_down_failures). */
	const char *down_errors = getenv("RDLOCK_ND_DOWN_ERRORS");
	__u32 victim = e->nr_nodes - 1;
	struct rdlock_dlm_test_event ev;
	struct rdlock_dlm_test_downs downs;
	__u64 first_grant = ~0ULL;
	__u32 state, flags = 0;
	long long words, want;
	unsigned int p, i;
	bool cql;
	char nm[16];
	double end;
	int ret, got;

	/* Node 0 and 1 place the locks: they resolve the names first. */
	if (e->self == 0) {
		ASSERT_EQ(0, dl_lock_lvb(self->fd, 0, EX, 0, "nd-a", "before"));
		EXPECT_AST(self->fd, 0, 0);
		ASSERT_EQ(0, dl_lock_lvb(self->fd, 0, NL, LKF_CONVERT, NULL,
					 "before"));
		EXPECT_AST(self->fd, 0, 0);
		/* A new lock at NL resolves nothing: PR, then NL. */
		GRANT(self->fd, 1, PR, 0, "nd-b");
		CONV(self->fd, 1, NL, 0);
	} else if (e->self == 1) {
		GRANT(self->fd, 0, PR, 0, "nd-d");
		CONV(self->fd, 0, NL, 0);
	}
	/*
	 * "nd-q": the victim uses them first, their locks are on it; it
	 * stores their value blocks (EX, then PR, VALBLK).
	 */
	for (i = MOVE_NAMES; e->self == victim && i < 2 * MOVE_NAMES; i++) {
		move_name(nm, sizeof(nm), i);
		ASSERT_EQ(0, dl_lock_lvb(self->fd2, i, EX, 0, nm, nm));
		EXPECT_AST(self->fd2, i, 0);
		ASSERT_EQ(0, dl_lock_lvb(self->fd2, i, PR, LKF_CONVERT, NULL,
					 nm));
		EXPECT_AST(self->fd2, i, 0);
	}
	BARRIER(8);
	/* "nd-m": node 0 stores theirs (EX, NL); PR with VALBLK reads all. */
	for (i = 0; e->self == 0 && i < 2 * MOVE_NAMES; i++) {
		move_name(nm, sizeof(nm), i);
		if (i < MOVE_NAMES) {
			ASSERT_EQ(0, dl_lock_lvb(self->fd2, i, EX, 0, nm, nm));
			EXPECT_AST(self->fd2, i, 0);
			ASSERT_EQ(0, dl_lock_lvb(self->fd2, i, NL, LKF_CONVERT,
						 NULL, nm));
			EXPECT_AST(self->fd2, i, 0);
			ASSERT_EQ(0, dl_lock_lvb(self->fd2, i, PR, LKF_CONVERT,
						 NULL, ""));
		} else {
			ASSERT_EQ(0, dl_lock_lvb(self->fd2, i, PR, 0, nm, ""));
		}
		ASSERT_EQ(0, dl_event(self->fd2, i, WAIT_MS, &ev));
		ASSERT_EQ(0, ev.status);
		EXPECT_EQ(0, ev.sb_flags & SBF_VALNOTVALID);
		EXPECT_STREQ(nm, (char *)ev.lvb);
	}
	got = protos_create(self->ctl);
	ASSERT_EQ(0, got)
		TH_LOG("LS_CREATE: %s", strerror(got));
	BARRIER(6);
	protos_join(_metadata, e, self->raw, &self->pr);
	BARRIER(7);
	protos_names(_metadata, e, self->raw, &self->pr);
	BARRIER(0);
	if (e->self == victim) {
		__u32 h;

		for (p = 0; p < NR_PROTOS; p++)
			ASSERT_EQ(0, rdl_ls_lock(self->pr.ls[p], self->pr.name[p],
						 RDLOCK_LOCK_EX, 0, WAIT_MS,
						 &h));
		ASSERT_EQ(0, dl_lock_lvb(self->fd, 0, EX, 0, "nd-a", ""));
		ASSERT_EQ(0, dl_event(self->fd, 0, WAIT_MS, &ev));
		ASSERT_EQ(0, ev.status);
		EXPECT_EQ(0, ev.sb_flags & SBF_VALNOTVALID);
		EXPECT_STREQ("before", (char *)ev.lvb);
		GRANT(self->fd, 1, PR, 0, "nd-b");
		GRANT(self->fd, 2, EX, 0, "nd-d");
	}
	BARRIER(1);
	if (e->self == 0) {
		ASSERT_EQ(0, dl_lock_lvb(self->fd, 0, PR, LKF_CONVERT, NULL,
					 ""));
		ASSERT_TRUE(dl_waits_main(self->fd, 0));
	} else if (e->self == 1) {
		ASSERT_EQ(0, dl_lock(self->fd, 1, EX, 0, "nd-b"));
		ASSERT_EQ(0, dl_conv(self->fd, 0, EX, 0));
		ASSERT_TRUE(dl_waits_main(self->fd, 1));
		/* At the gate: the victim holds it with its EX. */
		ASSERT_TRUE(dl_waiting(self->fd, 0, false));
		protos_wait(_metadata, &self->pr);
	}
	BARRIER(2);

	if (e->self == victim) {
		unsigned int refused = 0;
		char msg[160];

		/* Arrive, do not wait: the survivors cut us off right after. */
		ASSERT_EQ(0, rdl_barrier_arrive(self->raw, e->nr_nodes,
						e->barrier_timeout,
						e->base + R_ND_BARRIER + 3, 1,
						msg, sizeof(msg)))
			TH_LOG("%s", msg);
		if (kill_cmd) {
			/*
			 * Our cluster engine dies, or we lose quorum (cut
			 * off alone): we stop granting.
			 */
			ASSERT_EQ(0, system(kill_cmd));
			end = rdl_now() + LOST_WAIT_S;
			while (!member_state_is("stopped") && rdl_now() < end)
				usleep(100 * 1000);
			ASSERT_TRUE(member_state_is("stopped"))
				TH_LOG("membership not stopped without the cluster engine");
		}
		/* Cut off: the survivors told us, our lockspace is lost. */
		end = rdl_now() + (kill_cmd ? ENGINE_WAIT_S : LOST_WAIT_S);
		do {
			ASSERT_EQ(0, dl_lock(self->fd, 3, PR, LKF_NOQUEUE,
					     "nd-v"));
			ASSERT_EQ(0, dl_event(self->fd, 3, WAIT_MS, &ev));
			ASSERT_EQ(RDLOCK_DLM_TEST_AST, ev.type);
			if (ev.status == ESHUTDOWN_AST)
				break;
			if (kill_cmd) {
				/* Stopped: refused, and the lock is gone. */
				ASSERT_EQ(-EAGAIN, ev.status);
				/* Flushed: the node may be powered off. */
				if (!refused++) {
					printf("# the victim, stopped: NOQUEUE refused\n");
					fflush(stdout);
				}
			} else {
				ASSERT_EQ(0, ev.status);
				UNLOCK(self->fd, 3);
			}
			usleep(200 * 1000);
		} while (rdl_now() < end);
		EXPECT_EQ(ESHUTDOWN_AST, ev.status)
			TH_LOG("the victim's lockspace still works");
		/* Its user heard it once, in each DLM lockspace. */
		if (ev.status == ESHUTDOWN_AST) {
			EXPECT_TRUE(dl_lost_told(self->fd, LOST_CB_WAIT_S));
			EXPECT_TRUE(dl_lost_told(self->fd2, LOST_CB_WAIT_S));
			EXPECT_EQ(1, dl_lost(self->fd));
			EXPECT_EQ(1, dl_lost(self->fd2));
		}
		if (refused)
			printf("# the victim: %u NOQUEUE requests refused while stopped\n",
			       refused);
		/*
		 * Still alive (the engine killed, not the node): our locks
		 * stay held until every survivor has declared us down, or a
		 * close's releases would reach a survivor that has not yet,
		 * and grant its waiters before its node-down does.
		 */
		if (hold_cmd)
			EXPECT_EQ(0, system(hold_cmd));
		return;
	}

	BARRIER(3);
	for (p = 0; e->self == 1 && p < NR_PROTOS; p++)
		EXPECT_TRUE(proto_waits(&self->pr, p))
			TH_LOG("%s: granted while the victim holds it",
			       nd_protos[p].ls);
	if (kill_cmd) {
		/* Declared down by the cluster engine, not by us. */
		ASSERT_TRUE(member_count_reaches("declared_down", 1,
						 ENGINE_WAIT_S))
			TH_LOG("the cluster engine did not declare node %u down",
			       victim);
	} else {
		ASSERT_EQ(0, node_down(self->ctl, victim));
	}
	if (e->self == 0) {
		EXPECT_GRANT_SEQ(self->fd, 0, &ev);
		first_grant = ev.seq;
		EXPECT_EQ(SBF_VALNOTVALID, ev.sb_flags & SBF_VALNOTVALID)
			TH_LOG("nd-a: the victim died at EX, its block is valid");
	} else if (e->self == 1) {
		EXPECT_GRANT_SEQ(self->fd, 1, &ev);
		first_grant = ev.seq;
		EXPECT_GRANT_SEQ(self->fd, 0, &ev);
		if (ev.seq < first_grant)
			first_grant = ev.seq;
	}
	ASSERT_EQ(0, rdl_ioctl(self->fd, RDLOCK_DLM_TEST_IOC_DOWNS, &downs));
	EXPECT_EQ(1, downs.count);
	EXPECT_EQ(victim, downs.node);
	if (first_grant != ~0ULL)
		EXPECT_GT(first_grant, downs.seq)
			TH_LOG("a lock of the dead node granted before node_down");

	/*
	 * Exactly the victim's words here: node 0 has "nd-a"'s main word and
	 * gate (EX) and "nd-b"'s main word (PR), and marked "nd-a"'s value
	 * block; node 1 has "nd-d"'s two, with no value block ever stored.
	 */
	EXPECT_EQ(e->self == 0 ? 3 : e->self == 1 ? 2 : 0,
		  rdl_debugfs_counter(LS_STATS, "down_words"));
	EXPECT_EQ(e->self == 0 ? 1 : 0,
		  rdl_debugfs_counter(LS_STATS, "down_lvbs"));
	for (p = 0; p < NR_PROTOS; p++) {
		char stats[64];

		if (e->self == 1)
			EXPECT_EQ(0, proto_granted(&self->pr, p))
				TH_LOG("%s: the waiter was not granted",
				       nd_protos[p].ls);
		snprintf(stats, sizeof(stats), "lockspaces/%s/stats",
			 nd_protos[p].ls);
		words = rdl_debugfs_counter(stats, "down_words");
		/*
		 * CQL resets every busy lock kept here (its queue does not
		 * name all its holders): on node 0 also the name node 0 moved
		 * here from the victim, held EX (moved_names_check()).
		 */
		cql = nd_protos[p].proto == RDLOCK_PROTO_CQL;
		want = e->self == 0 ? 1 + cql : 0;
		/*
		 * A CQL waiter resets a lock whose head has no entry after
		 * the stuck time (30 s), which the cluster engine's detection
		 * may exceed: its reset then completes once the victim is
		 * declared down, maybe before node 0's release looks.
		 */
		if (e->self == 0 && cql && kill_cmd) {
			EXPECT_GE(want, words)
				TH_LOG("%s: down_words", nd_protos[p].ls);
			EXPECT_LE(want - 1, words)
				TH_LOG("%s: down_words", nd_protos[p].ls);
		} else {
			EXPECT_EQ(want, words)
				TH_LOG("%s: down_words", nd_protos[p].ls);
		}
	}

	moved_names_check(_metadata, self);

	/* Shown as down; the others connected make the cluster ready. */
	ASSERT_EQ(0, cluster_state(self->ctl, victim, &state, &flags));
	EXPECT_EQ(RDLOCK_CLUSTER_READY, state);
	EXPECT_EQ(RDLOCK_NODE_FENCED, flags & RDLOCK_NODE_FENCED);
	EXPECT_EQ(EALREADY, node_down(self->ctl, victim));
	EXPECT_EQ(EINVAL, node_down(self->ctl, e->self));
	EXPECT_EQ(EINVAL, node_down(self->ctl, RDLOCK_MAX_NODES - 1));
	ret = node_down(self->ctl, RDLOCK_MAX_NODES);
	EXPECT_EQ(EINVAL, ret);
	ASSERT_EQ(0, rdl_ioctl(self->fd, RDLOCK_DLM_TEST_IOC_DOWNS, &downs));
	EXPECT_EQ(1, downs.count);
	if (kill_cmd) {
		EXPECT_EQ(1, rdl_debugfs_counter(MEMBERSHIP, "recover_slot"));
		EXPECT_EQ(1, rdl_debugfs_counter(MEMBERSHIP, "declared_down"));
		/*
		 * At least the injected failures: a declaration that failed
		 * for a passing cause was tried again, as it should be, and
		 * is declared_down's once all the same.
		 */
		EXPECT_LE(down_errors ? atoll(down_errors) : 0,
			  rdl_debugfs_counter(MEMBERSHIP, "down_errors"));
		printf("# node %u: declarations down that failed and were tried again: %lld\n",
		       e->self, rdl_debugfs_counter(MEMBERSHIP, "down_errors"));
		EXPECT_TRUE(member_state_is("running"));
		printf("# node %u: the engine's recovery, recover_done to granting: %lld us\n",
		       e->self, rdl_debugfs_counter(MEMBERSHIP,
						    "last_recovery_us"));
	}

	if (e->self == 0) {
		UNLOCK(self->fd, 0);
		UNLOCK(self->fd, 1);
	} else if (e->self == 1) {
		UNLOCK(self->fd, 0);
		UNLOCK(self->fd, 1);
	}
	/* A survivor's lockspaces were never lost. */
	EXPECT_EQ(0, dl_lost(self->fd));
	EXPECT_EQ(0, dl_lost(self->fd2));
	/* Removed while every survivor is up: each drops its references. */
	for (p = 0; p < NR_PROTOS; p++) {
		close(self->pr.ls[p]);
		self->pr.ls[p] = 0;
		got = rdl_ls_by_name(self->ctl, RDLOCK_IOC_LS_REMOVE,
				     nd_protos[p].ls);
		EXPECT_EQ(0, got)
			TH_LOG("LS_REMOVE %s: %s", nd_protos[p].ls,
			       strerror(got));
	}
	SURVIVORS_BARRIER(4);
}

TEST_HARNESS_MAIN
