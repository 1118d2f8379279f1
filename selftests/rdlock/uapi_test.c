// SPDX-License-Identifier: GPL-2.0
/*
 * The errno contract of /dev/rdlock, on one node whose rdlock.ko has just
 * been loaded and not configured. In source order: unconfigured checks
 * first, then configuration checks while down, an unprivileged child, the
 * cluster going up and down, and last lockspaces and locks on a one-node
 * cluster (ls_* tests). Each test brings the module to the state it needs
 * (need_down(), need_ready(), need_ls()) and the fixture's teardown
 * removes the lockspaces the tests share, so that any test also runs
 * alone on a freshly loaded module ("uapi_test -t ls_locks"); only the
 * unconfigured_* tests and config_rejects need it unconfigured, as only
 * loading it makes it. Every rejected configuration call is followed by a
 * STATUS proving that it changed nothing; rejected lockspace and lock
 * calls are followed by a call showing the same. The whole file leaves
 * the module configured and down.
 *
 * Environment: RDLOCK_NODE_ID (default 0) and RDLOCK_NODE_ADDRS (default
 * "10.77.0.1") give this node's own address, the only one it connects to.
 * Other addresses below are never contacted: peers are only added while
 * down, except one that points at our own address with another port.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"
#include "rdltest.h"
#include "uapi_cases.h"
#include "uapi_admin_cases.h"

#include <kselftest_harness.h>

#include "select.h"

#define NOBODY		65534
/*
 * The group of /dev/rdlock in these tests, as packaging/60-rdlock.rules
 * gives it the group "rdlock": the fixture's setup gives it this one, and
 * as_user() puts its users in it (allowed to take locks).
 */
#define DEV_GID		(NOBODY - 2)
#define READY_TIMEOUT_S	60
#define CLUSTER		7
#define NODE		5	/* our id in the configuration checks */

/* A kernel address: access_ok() refuses it whatever is mapped there. */
#define KERNEL_PTR	((void *)0xffff800000000000UL)

struct snap {
	struct rdlock_status st;
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
};

static const char *ename(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "success";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINTR: return "EINTR";
	case EAGAIN: return "EAGAIN";
	case EACCES: return "EACCES";
	case ENOSPC: return "ENOSPC";
	case EBADFD: return "EBADFD";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENXIO: return "ENXIO";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EALREADY: return "EALREADY";
	case ENOTCONN: return "ENOTCONN";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENOKEY: return "ENOKEY";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static int snapshot(int fd, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->st.version = RDLOCK_UAPI_VERSION;
	s->st.nr_nodes = RDLOCK_MAX_NODES;
	s->st.nodes = (__u64)(unsigned long)s->nodes;
	if (ioctl(fd, RDLOCK_IOC_STATUS, &s->st) < 0)
		return errno;
	s->st.nodes = 0;
	return 0;
}

/*
 * Same configuration, and with @states also the same connection states:
 * these are only stable while down or while a one-node cluster is ready.
 */
static bool snap_equal(const struct snap *a, const struct snap *b, bool states)
{
	__u32 i;

	if (a->st.node_id != b->st.node_id ||
	    a->st.cluster_id != b->st.cluster_id ||
	    a->st.nr_nodes != b->st.nr_nodes)
		return false;
	if (states && (a->st.state != b->st.state ||
		       a->st.backend != b->st.backend))
		return false;
	for (i = 0; i < a->st.nr_nodes && i < RDLOCK_MAX_NODES; i++) {
		if (a->nodes[i].node_id != b->nodes[i].node_id ||
		    a->nodes[i].flags != b->nodes[i].flags)
			return false;
		if (states && (a->nodes[i].state != b->nodes[i].state ||
			       a->nodes[i].connects != b->nodes[i].connects))
			return false;
	}
	return true;
}

static void addr_set(struct rdlock_addr *a, const char *ip, __u16 port,
		     __u32 scope)
{
	memset(a, 0, sizeof(*a));
	a->family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	a->port = port;
	a->scope_id = scope;
	if (inet_pton(a->family, ip, a->addr) != 1)
		abort();	/* a typo in this file */
}

/* Without a key: these one-node clusters run in the insecure test mode. */
static void cfg_init(struct rdlock_cluster_config *c, __u32 node,
		     const char *ip, __u16 port)
{
	memset(c, 0, sizeof(*c));
	c->version = RDLOCK_UAPI_VERSION;
	c->flags = RDLOCK_CONFIG_INSECURE_NO_KEY;
	c->cluster_id = CLUSTER;
	c->node_id = node;
	addr_set(&c->addr, ip, port, 0);
}

static void peer_init(struct rdlock_peer *p, __u32 node, const char *ip,
		      __u16 port)
{
	memset(p, 0, sizeof(*p));
	p->version = RDLOCK_UAPI_VERSION;
	p->node_id = node;
	addr_set(&p->addr, ip, port, 0);
}

/* This node's own address: word RDLOCK_NODE_ID + 1 of RDLOCK_NODE_ADDRS. */
static void self_ip(char *buf, size_t len)
{
	const char *addrs = getenv("RDLOCK_NODE_ADDRS");
	const char *id = getenv("RDLOCK_NODE_ID");
	int want = id ? atoi(id) : 0, i = 0;
	char copy[1024], *save, *w;

	snprintf(buf, len, "10.77.0.1");
	if (!addrs || strlen(addrs) >= sizeof(copy))
		return;
	strcpy(copy, addrs);
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		if (i++ == want)
			snprintf(buf, len, "%s", w);
}

/* Expect @err from the call and no change visible in STATUS. */
static void reject(struct __test_metadata *_metadata, int fd,
		   unsigned long req, void *arg, int err, const char *what,
		   bool states)
{
	struct snap before, after;
	int got;

	ASSERT_EQ(0, snapshot(fd, &before));
	got = rdl_ioctl(fd, req, arg);
	EXPECT_EQ(err, got) {
		TH_LOG("%s: got %s, expected %s", what, ename(got), ename(err));
	}
	ASSERT_EQ(0, snapshot(fd, &after));
	EXPECT_TRUE(snap_equal(&before, &after, states)) {
		TH_LOG("%s: the rejected call changed the cluster", what);
	}
}

static void expect_ok(struct __test_metadata *_metadata, int fd,
		      unsigned long req, void *arg, const char *what)
{
	int got = rdl_ioctl(fd, req, arg);

	ASSERT_EQ(0, got) {
		TH_LOG("%s: got %s, expected success", what, ename(got));
	}
}

/* The node ids STATUS reports, in its order, must be exactly @ids. */
static void expect_nodes(struct __test_metadata *_metadata, int fd,
			 const __u32 *ids, __u32 n, __u32 self)
{
	struct snap s;
	__u32 i;

	ASSERT_EQ(0, snapshot(fd, &s));
	ASSERT_EQ(n, s.st.nr_nodes);
	EXPECT_EQ(self, s.st.node_id);
	EXPECT_EQ(CLUSTER, s.st.cluster_id);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(ids[i], s.nodes[i].node_id) {
			TH_LOG("nodes[%u]: not sorted by id or wrong set", i);
		}
		EXPECT_EQ(ids[i] == self, !!(s.nodes[i].flags & RDLOCK_NODE_SELF));
		EXPECT_EQ(0, s.nodes[i].reserved);
	}
}

/* Page-aligned pair whose second page faults. */
static char *fault_pages(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + pg, pg, PROT_NONE))
		abort();
	return p;
}

/* A copy of @obj whose last 8 bytes lie on an inaccessible page. */
static void *straddle(const void *obj, size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = fault_pages() + pg - (size - 8);

	memcpy(p, obj, size - 8);
	return p;
}

/* Known numbers with the wrong size or direction, and unknown ones. */
static void check_enotty(struct __test_metadata *_metadata, int fd)
{
	static const struct {
		unsigned long cmd;
		const char *name;
	} cmds[] = {
		{ _IO(RDLOCK_IOC_MAGIC, 0x00), "nr 0" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x07), "nr 7" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x7f, struct rdlock_status), "nr 0x7f" },
		{ _IO(RDLOCK_IOC_MAGIC, 0xff), "nr 0xff" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x01, __u32), "SET_CONFIG size 4" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x01, struct rdlock_peer), "SET_CONFIG size 48" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x01, __u8[80]), "SET_CONFIG size 80" },
		{ _IOR(RDLOCK_IOC_MAGIC, 0x01, struct rdlock_cluster_config),
		  "SET_CONFIG as _IOR" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x01, struct rdlock_cluster_config),
		  "SET_CONFIG as _IOWR" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x01), "SET_CONFIG as _IO" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x02, struct rdlock_cluster_config), "ADD_PEER size 72" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x02, __u8[40]), "ADD_PEER size 40" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x03, __u64), "DEL_PEER size 8" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x03, struct rdlock_peer), "DEL_PEER as _IOWR" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x04, int), "UP size 4" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x05, int), "DOWN size 4" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x08, struct rdlock_peer),
		  "NODE_DOWN size 48" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x08, struct rdlock_node_down),
		  "NODE_DOWN as _IOWR" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x06), "STATUS as _IO" },
		{ _IOR(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_status), "STATUS as _IOR" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_status), "STATUS as _IOW" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_node_status), "STATUS size 32" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x06, __u8[56]), "STATUS size 56" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x1f), "nr 0x1f" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x2b), "nr 0x2b" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x2a, struct rdlock_locks),
		  "LOCKS as _IOW" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x29), "STATS as _IO" },
		{ _IOR(RDLOCK_IOC_MAGIC, 0x29, struct rdlock_stats),
		  "STATS as _IOR" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x29, __u8[48]), "STATS size 48" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x28), "LS_LIST as _IO" },
		{ _IOR(RDLOCK_IOC_MAGIC, 0x28, struct rdlock_ls_list),
		  "LS_LIST as _IOR" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x28, struct rdlock_ls_name),
		  "LS_LIST size 56" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x20, struct rdlock_ls_name), "LS_CREATE size 48" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x20, struct rdlock_ls_create),
		  "LS_CREATE as _IOWR" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x21, struct rdlock_ls_create),
		  "LS_REMOVE size 96" },
		{ _IO(RDLOCK_IOC_MAGIC, 0x21), "LS_REMOVE as _IO" },
		{ _IOR(RDLOCK_IOC_MAGIC, 0x22, struct rdlock_ls_name), "JOIN as _IOR" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x23, int), "LEAVE size 4" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x24, struct rdlock_lock_req), "LOCK as _IOW" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x24, struct rdlock_query),
		  "LOCK size 120" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x25, struct rdlock_unlock_req),
		  "UNLOCK as _IOWR" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x26, struct rdlock_unlock_req),
		  "CONVERT size 24" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x27, struct rdlock_query), "QUERY as _IOW" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x27, struct rdlock_lock_req),
		  "QUERY size 112" },
		{ _IOW(RDLOCK_IOC_MAGIC + 1, 0x01, struct rdlock_cluster_config), "other magic" },
		{ RDLOCK_TEST_IOC_INFO, "test module's INFO" },
		{ RDLOCK_TEST_IOC_OP, "test module's OP" },
	};
	/* Zeroed: a command wrongly taken would see version 0 and fail. */
	static __u64 buf[64];
	char what[96];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		memset(buf, 0, sizeof(buf));
		snprintf(what, sizeof(what), "ioctl %s (0x%lx)", cmds[i].name,
			 cmds[i].cmd);
		reject(_metadata, fd, cmds[i].cmd, buf, ENOTTY, what, true);
	}
}

/*
 * Every address of uapi_addr_cases (kmod/tests/uapi_admin_cases.h, which
 * KUnit runs on the pure conversion) that a node may not have, applied to
 * @a (part of @arg); an address it may have is skipped: the call would act.
 */
static void check_bad_addrs(struct __test_metadata *_metadata, int fd,
			    unsigned long req, void *arg,
			    struct rdlock_addr *a, const char *what)
{
	const struct uapi_addr_case *c;
	struct rdlock_addr good = *a;
	char name[96];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(uapi_addr_cases); i++) {
		c = &uapi_addr_cases[i];
		if (!c->err)
			continue;
		*a = c->addr;
		snprintf(name, sizeof(name), "%s address %s", what, c->what);
		reject(_metadata, fd, req, arg, c->err, name, true);
	}
	*a = good;
}

/* Bad argument pointers of a _IOW command: none may be read. */
static void check_efault(struct __test_metadata *_metadata, int fd,
			 unsigned long req, const void *valid, size_t size,
			 const char *what)
{
	char name[96];

	snprintf(name, sizeof(name), "%s NULL", what);
	reject(_metadata, fd, req, NULL, EFAULT, name, true);
	snprintf(name, sizeof(name), "%s pointer 1", what);
	reject(_metadata, fd, req, (void *)1, EFAULT, name, true);
	snprintf(name, sizeof(name), "%s kernel pointer", what);
	reject(_metadata, fd, req, KERNEL_PTR, EFAULT, name, true);
	snprintf(name, sizeof(name), "%s straddling a PROT_NONE page", what);
	reject(_metadata, fd, req, straddle(valid, size), EFAULT, name, true);
}

static int state_of(int fd)
{
	struct snap s;

	return snapshot(fd, &s) ? -1 : (int)s.st.state;
}

static int wait_ready(int fd)
{
	time_t end = time(NULL) + READY_TIMEOUT_S;
	struct snap s;

	do {
		if (snapshot(fd, &s))
			return -1;
		if (s.st.state == RDLOCK_CLUSTER_READY)
			return 0;
		usleep(50 * 1000);
	} while (time(NULL) < end);
	return -1;
}

/* One test-module op; returns 0 or errno, the value in *val. */
static int test_op(int tfd, __u32 op, __u32 node, __u32 slot, __u64 a0,
		   __u64 a1, __u64 *val)
{
	struct rdlock_test_op o = {
		.op = op, .node = node, .slot = slot, .arg0 = a0, .arg1 = a1,
	};
	int ret = rdl_ioctl(tfd, RDLOCK_TEST_IOC_OP, &o);

	if (!ret && val)
		*val = o.result;
	return ret;
}

/* -1 when rdlock_test.ko is not loaded, which only skips its checks. */
static int open_test_dev(struct rdlock_test_info *info)
{
	int tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);

	if (tfd < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	if (ioctl(tfd, RDLOCK_TEST_IOC_INFO, info) < 0) {
		close(tfd);
		return -1;
	}
	return tfd;
}

/* ------------------------------------------------------------------ */
/* Lockspaces and locks                                               */

#define LS_SLOTS	64	/* of the test's lockspaces: 32 names */
#define RAW_TEST_SLOTS	1024	/* above first_free_slot, for raw tests */

/* The calls, each returning 0 or the errno. */
static int ls_create(int fd, const char *name, __u32 proto, __u32 slots,
		     __u32 flags, __u32 uid, __u32 gid, __u32 mode)
{
	struct rdlock_ls_create c;

	rdl_ls_create_init(&c, name, proto, slots, flags, mode);
	c.uid = uid;
	c.gid = gid;
	return rdl_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c);
}

static int ls_remove(int fd, const char *name)
{
	return rdl_ls_by_name(fd, RDLOCK_IOC_LS_REMOVE, name);
}

static int ls_join(int fd, const char *name)
{
	return rdl_ls_by_name(fd, RDLOCK_IOC_JOIN, name);
}

static int ls_leave(int fd)
{
	return rdl_ioctl(fd, RDLOCK_IOC_LEAVE, NULL);
}

/* Become @uid (its own gid too), a member of /dev/rdlock's group: 0. */
static int as_user(unsigned int uid)
{
	gid_t dev_gid = DEV_GID;

	return setgroups(1, &dev_gid) || setresgid(uid, uid, uid) ||
	       setresuid(uid, uid, uid);
}

static int as_nobody(void)
{
	return as_user(NOBODY);
}

/* Exit status of child @pid: its failed checks; 200 if it did not exit. */
static int child_fails(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 200;
	return WEXITSTATUS(status);
}

static int open_dev(void)
{
	return open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
}

static void expect_err(struct __test_metadata *_metadata, int got, int want,
		       const char *what)
{
	EXPECT_EQ(want, got) {
		TH_LOG("%s: got %s, expected %s", what, ename(got), ename(want));
	}
}

/*
 * Table-driven argument checks (kmod/tests/uapi_cases.h and
 * uapi_admin_cases.h, which KUnit runs on the pure checks): every case of
 * @cases on a copy of @valid (size @size). A case the checks refuse must
 * fail with its errno; one they accept must fail with @accepted, the errno
 * of the call's state, and is skipped when @accepted is 0 (the call would
 * act). A cluster call (numbers below LS_CREATE's) is also followed by a
 * STATUS proving that it changed nothing, as every rejected configuration
 * call is.
 */
static void run_field_cases(struct __test_metadata *_metadata, int fd,
			    unsigned long req, const void *valid, size_t size,
			    const struct uapi_case *cases, size_t n,
			    const char *call, int accepted)
{
	const struct uapi_case *c;
	__u64 buf[32];
	char what[128];
	size_t i;
	int want;

	ASSERT_GE(sizeof(buf), size);
	for (i = 0; i < n; i++) {
		c = &cases[i];
		want = c->err ? c->err : accepted;
		if (!want)
			continue;
		memcpy(buf, valid, size);
		uapi_case_apply(buf, c);
		snprintf(what, sizeof(what), "%s %s", call, c->what);
		if (_IOC_NR(req) < _IOC_NR(RDLOCK_IOC_LS_CREATE))
			reject(_metadata, fd, req, buf, want, what, true);
		else
			expect_err(_metadata, rdl_ioctl(fd, req, buf), want,
				   what);
	}
}

/* The table uapi_@name_cases on its valid argument uapi_valid_@valid. */
#define RUN_CASES(fd, req, valid, name, call, accepted)			\
	run_field_cases(_metadata, fd, req, &uapi_valid_##valid,	\
			sizeof(uapi_valid_##valid), uapi_##name##_cases,	\
			ARRAY_SIZE(uapi_##name##_cases), call, accepted)

/*
 * LS_CREATE of every name of uapi_name_cases: a bad one must fail with
 * its errno, a good one with @accepted (skipped if 0). One that is created
 * anyway is removed again so that later tests do not trip over it.
 */
static void create_names(struct __test_metadata *_metadata, int fd,
			 struct rdlock_ls_create *c, const char *prefix,
			 int accepted)
{
	const struct uapi_name_case *nc;
	struct rdlock_ls_name n;
	char what[96];
	int got, want;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(uapi_name_cases); i++) {
		nc = &uapi_name_cases[i];
		want = nc->err ? nc->err : accepted;
		if (nc->c_string || !want)
			continue;
		memcpy(c->name, nc->name, sizeof(c->name));
		snprintf(what, sizeof(what), "%s%s", prefix, nc->what);
		got = rdl_ioctl(fd, RDLOCK_IOC_LS_CREATE, c);
		expect_err(_metadata, got, want, what);
		if (!got) {
			memset(&n, 0, sizeof(n));
			n.version = RDLOCK_UAPI_VERSION;
			memcpy(n.name, c->name, sizeof(n.name));
			rdl_ioctl(fd, RDLOCK_IOC_LS_REMOVE, &n);
		}
	}
}

/* Longest good name, and every character a name may have. */
#define LS_NAME_31	"ABCDEFGHIJKLMNOPQRSTUVWXYZ_.:-9"
#define LS_NAME_LOWER	"abcdefghijklmnopqrstuvwxyz01234"
#define LS_NAME_DIGITS	"56789-0.1:2_3"

/* The lockspaces the ls_* tests share, made by need_ls(). */
#define LS_PLAIN	"uapi_plain"	/* bakery */
#define LS_UPD		"uapi_upd"	/* bakery, RDLOCK_LS_UPDATE */
#define LS_CAS		"uapi_cas"	/* CAS spinlock */
#define LS_TINY		"uapi_tiny"	/* bakery, 2 slots: 1 name */
#define LS_CASUPD	"uapi_casupd"	/* CAS spinlock, RDLOCK_LS_UPDATE */
/* One DLM lockspace (it takes 16384 slots), 0644: others may only read. */
#define LS_DLM		"uapi_dlm"
/* ls_try_bound's own flat CQL lockspace, removed by the teardown too. */
#define LS_QCQL		"uapi_qcql"

enum { SH_PLAIN, SH_UPD, SH_CAS, SH_TINY, SH_CASUPD, SH_DLM, SH_NR };
#define SH_ALL		((1U << SH_DLM) - 1)	/* all but the DLM one */

static const struct {
	const char *name;
	__u32 proto, slots, flags, mode;
} shared_ls[SH_NR] = {
	[SH_PLAIN] = { LS_PLAIN, RDLOCK_PROTO_BAKERY, LS_SLOTS, 0, 0666 },
	[SH_UPD] = { LS_UPD, RDLOCK_PROTO_BAKERY, LS_SLOTS, RDLOCK_LS_UPDATE,
		     0666 },
	[SH_CAS] = { LS_CAS, RDLOCK_PROTO_CASLOCK, LS_SLOTS, 0, 0666 },
	[SH_TINY] = { LS_TINY, RDLOCK_PROTO_BAKERY, 2, 0, 0666 },
	[SH_CASUPD] = { LS_CASUPD, RDLOCK_PROTO_CASLOCK, LS_SLOTS,
			RDLOCK_LS_UPDATE, 0666 },
	[SH_DLM] = { LS_DLM, 0, 0, RDLOCK_LS_DLM, 0644 },
};

/*
 * Down if up; with @configure, then configured as this test's one node
 * (NODE, our own address, no peers), which forgets what tests before set.
 */
static void need_down(struct __test_metadata *_metadata, int fd,
		      const char *ip, bool configure)
{
	struct rdlock_cluster_config c;
	int state = state_of(fd);

	ASSERT_LE(0, state);
	if (state != RDLOCK_CLUSTER_UNCONFIGURED &&
	    state != RDLOCK_CLUSTER_DOWN)
		expect_ok(_metadata, fd, RDLOCK_IOC_DOWN, NULL, "setup: DOWN");
	if (!configure)
		return;
	cfg_init(&c, NODE, ip, 0);
	expect_ok(_metadata, fd, RDLOCK_IOC_SET_CONFIG, &c, "setup: SET_CONFIG");
}

/* The one-node cluster of need_down(), up and ready. */
static void need_ready(struct __test_metadata *_metadata, int fd,
		       const char *ip)
{
	struct snap s;

	ASSERT_EQ(0, snapshot(fd, &s));
	if (s.st.state == RDLOCK_CLUSTER_READY && s.st.node_id == NODE &&
	    s.st.cluster_id == CLUSTER && s.st.nr_nodes == 1)
		return;
	need_down(_metadata, fd, ip, true);
	expect_ok(_metadata, fd, RDLOCK_IOC_UP, NULL, "setup: UP");
	ASSERT_EQ(0, wait_ready(fd)) {
		TH_LOG("one-node cluster on %s not ready after %d s", ip,
		       READY_TIMEOUT_S);
	}
}

/* need_ready(), and the shared lockspaces of @mask (1 << SH_*) made. */
static void need_ls(struct __test_metadata *_metadata, int fd,
		    const char *ip, unsigned int mask)
{
	int i, got;

	need_ready(_metadata, fd, ip);
	for (i = 0; i < SH_NR; i++) {
		if (!(mask & 1U << i))
			continue;
		got = ls_create(fd, shared_ls[i].name, shared_ls[i].proto,
				shared_ls[i].slots, shared_ls[i].flags, 0, 0,
				shared_ls[i].mode);
		ASSERT_EQ(0, got) {
			TH_LOG("setup: LS_CREATE %s: %s", shared_ls[i].name,
			       ename(got));
		}
	}
}

/*
 * A child that joins LS_PLAIN (as nobody if @nobody) and then waits
 * without a limit for @name in @mode, which its parent holds: its pid
 * once it has joined, or -1. It exits 2 if it is ever granted.
 */
static pid_t fork_waiter(const char *name, __u32 mode, bool nobody)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int cfd;

		close(pipefd[0]);
		if (nobody && as_nobody())
			_exit(100);
		cfd = rdl_open_joined(LS_PLAIN);
		if (cfd < 0 || write(pipefd[1], "j", 1) != 1)
			_exit(101);
		rdl_ls_lock(cfd, name, mode, 0, 0, NULL);
		_exit(2);
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

/* Tests that may bring the cluster up first take this much longer. */
#define SETUP_S		READY_TIMEOUT_S

#define BACKEND_PARAM	"/sys/module/rdlock/parameters/backend"
/* A DLM request's fixed poll interval (fault injection builds only). */
#define FLOOD_POLL	"inject_dlm_poll_ms"
#define OWN_DELAY	"inject_own_exec_delay_ms"
#define OWN_DELAY_MS	4000

/* What own_request_during_down changed, put back by the teardown. */
static char own_backend_was[32];

#define USER_LOCKS_PARAM	"/sys/module/rdlock/parameters/user_locks_max"

/* What ls_user_locks_max changed, put back by the teardown (0: nothing). */
static unsigned int user_locks_was;
/* What ls_try_bound changed, the same way. */
#define FINISHING_PARAM	"/sys/module/rdlock/parameters/user_finishing_max"
static unsigned int user_finishing_was;

static int backend_param_write(const char *val)
{
	FILE *f = fopen(BACKEND_PARAM, "w");

	if (!f)
		return -1;
	fprintf(f, "%s\n", val);
	return fclose(f);
}

FIXTURE(uapi) {
	int fd;
	char ip[64];		/* this node's own address */
};

FIXTURE_SETUP(uapi)
{
	/* What the udev rule does where there is udev. */
	ASSERT_EQ(0, chown(RDLOCK_DEV, 0, DEV_GID)) {
		TH_LOG("chown %s: %s", RDLOCK_DEV, strerror(errno));
	}
	self->fd = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) {
		TH_LOG("cannot open %s: %s", RDLOCK_DEV, strerror(errno));
	}
	self_ip(self->ip, sizeof(self->ip));
}

/*
 * Closing lets go of what the test joined and held; then the shared
 * lockspaces go (a give-back may still be under way: EBUSY for a while).
 */
FIXTURE_TEARDOWN(uapi)
{
	double end;
	int fd, i;

	if (self->fd >= 0)
		close(self->fd);
	/* ls_dlm_flood's poll interval, even when it failed. */
	rdl_debugfs_write(FLOOD_POLL, 0);
	/* own_request_during_down's changes, even when it failed. */
	if (own_backend_was[0]) {
		rdl_debugfs_write(OWN_DELAY, 0);
		backend_param_write(own_backend_was);
		own_backend_was[0] = 0;
	}
	if (user_locks_was) {
		rdl_write_u32(USER_LOCKS_PARAM, user_locks_was);
		user_locks_was = 0;
	}
	if (user_finishing_was) {
		rdl_write_u32(FINISHING_PARAM, user_finishing_was);
		user_finishing_was = 0;
	}
	fd = open_dev();
	if (fd < 0)
		return;
	end = rdl_now() + 10;
	for (i = 0; i < SH_NR; i++)
		while (ls_remove(fd, shared_ls[i].name) == EBUSY &&
		       rdl_now() < end)
			usleep(20000);
	/* ls_try_bound's own, even when it failed. */
	while (ls_remove(fd, LS_QCQL) == EBUSY && rdl_now() < end)
		usleep(20000);
	close(fd);
}

/*
 * /dev/rdlock is 0660 root's: only its group's members (the udev rule's
 * "rdlock") open it besides root.
 */
TEST_F(uapi, dev_group)
{
	struct stat st;
	pid_t pid;

	ASSERT_EQ(0, stat(RDLOCK_DEV, &st));
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(100);
		_exit(open_dev() < 0 && errno == EACCES ? 0 : 1);
	}
	EXPECT_EQ(0, child_fails(pid)) {
		TH_LOG("nobody outside the device's group opened it");
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(as_nobody() ? 100 : open_dev() < 0 ? 1 : 0);
	EXPECT_EQ(0, child_fails(pid)) {
		TH_LOG("nobody in the device's group could not open it");
	}
}

TEST_F(uapi, unconfigured_status)
{
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_status st;

	memset(&st, 0, sizeof(st));
	st.version = RDLOCK_UAPI_VERSION;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, "STATUS, no array");
	ASSERT_EQ(RDLOCK_CLUSTER_UNCONFIGURED, st.state) {
		TH_LOG("state %u: this test needs a freshly loaded rdlock.ko",
		       st.state);
	}
	EXPECT_EQ(0, st.nr_nodes);

	memset(nodes, 0xa5, sizeof(nodes));
	memset(&st, 0, sizeof(st));
	st.version = RDLOCK_UAPI_VERSION;
	st.nr_nodes = RDLOCK_MAX_NODES;
	st.nodes = (__u64)(unsigned long)nodes;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, "STATUS, full array");
	EXPECT_EQ(RDLOCK_CLUSTER_UNCONFIGURED, st.state);
	EXPECT_EQ(0, st.nr_nodes);
}

TEST_F(uapi, unconfigured_enxio)
{
	struct rdlock_peer p;
	struct rdlock_test_info info;
	int tfd;

	peer_init(&p, 3, "10.77.100.3", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, ENXIO,
	       "ADD_PEER before SET_CONFIG", true);
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, ENXIO,
	       "DEL_PEER before SET_CONFIG", true);
	reject(_metadata, self->fd, RDLOCK_IOC_UP, NULL, ENXIO,
	       "UP before SET_CONFIG", true);
	reject(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, ENXIO,
	       "DOWN before SET_CONFIG", true);

	/* No node is configured yet, this one included. */
	tfd = open_test_dev(&info);
	if (tfd >= 0 && info.table_slots > info.first_free_slot) {
		int got = test_op(tfd, RDLOCK_TEST_OP_READ, 0,
				  info.first_free_slot, 0, 0, NULL);

		EXPECT_EQ(ENOENT, got) {
			TH_LOG("test READ before config: %s", ename(got));
		}
	}
	if (tfd >= 0)
		close(tfd);
}

TEST_F(uapi, unknown_ioctls_unconfigured)
{
	check_enotty(_metadata, self->fd);
}

TEST_F(uapi, status_rejects)
{
	struct rdlock_status st, ro_copy;
	char *ro;

	/* An accepted STATUS only reports: skipped, KUnit checks it. */
	RUN_CASES(self->fd, RDLOCK_IOC_STATUS, status, status, "STATUS", 0);

	memset(&st, 0, sizeof(st));
	st.version = RDLOCK_UAPI_VERSION;
	check_efault(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, sizeof(st),
		     "STATUS");
	/* Readable but not writable: the result cannot be copied out. */
	ro = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memcpy(ro, &st, sizeof(st));
	ASSERT_EQ(0, mprotect(ro, sysconf(_SC_PAGESIZE), PROT_READ));
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, ro, EFAULT,
	       "STATUS in a read-only page", true);
	memcpy(&ro_copy, ro, sizeof(ro_copy));
	EXPECT_EQ(0, memcmp(&ro_copy, &st, sizeof(st)));
}

TEST_F(uapi, config_rejects)
{
	struct rdlock_cluster_config c;

	ASSERT_EQ(RDLOCK_CLUSTER_UNCONFIGURED, state_of(self->fd));
	/* An accepted SET_CONFIG would configure: skipped. */
	RUN_CASES(self->fd, RDLOCK_IOC_SET_CONFIG, config, config, "SET_CONFIG",
		  0);
	/* SET_KEY before SET_CONFIG: an accepted key finds no cluster. */
	RUN_CASES(self->fd, RDLOCK_IOC_SET_KEY, key, key, "SET_KEY", ENXIO);

	cfg_init(&c, NODE, self->ip, 0);
	check_bad_addrs(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, &c.addr,
			"SET_CONFIG");
	check_efault(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, sizeof(c),
		     "SET_CONFIG");
	EXPECT_EQ(RDLOCK_CLUSTER_UNCONFIGURED, state_of(self->fd));
}

/* SET_CONFIG only validates addresses: no IPv6 connectivity is needed. */
TEST_F(uapi, config_ipv6)
{
	static const __u32 ids[] = { 2, NODE };
	struct rdlock_cluster_config c;
	struct rdlock_peer p;
	struct snap s;

	need_down(_metadata, self->fd, self->ip, false);

	cfg_init(&c, NODE, "2001:db8::5", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
		  "SET_CONFIG 2001:db8::5");
	ASSERT_EQ(0, snapshot(self->fd, &s));
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, s.st.state);
	expect_nodes(_metadata, self->fd, &ids[1], 1, NODE);

	addr_set(&c.addr, "fe80::5", 18600, 1);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
		  "SET_CONFIG [fe80::5%1]:18600");
	cfg_init(&c, NODE, "::ffff:10.77.100.5", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
		  "SET_CONFIG ::ffff:10.77.100.5");
	cfg_init(&c, NODE, "2001:db8::5", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
		  "SET_CONFIG 2001:db8::5 again");

	peer_init(&p, 2, "2001:db8::2", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p,
		  "ADD_PEER 2001:db8::2");
	expect_nodes(_metadata, self->fd, ids, 2, NODE);

	/* Port 0 is the default port, so these are our own endpoint. */
	peer_init(&p, 3, "2001:db8::5", RDLOCK_DEFAULT_PORT);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER with our own IPv6 address and port", true);
	peer_init(&p, 3, "2001:db8::2", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER with node 2's IPv6 address and port", true);
	/* Another scope is another endpoint. */
	peer_init(&p, 3, "2001:db8::2", 0);
	p.addr.scope_id = 1;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p,
		  "ADD_PEER node 2's IPv6 address with another scope");

	peer_init(&p, 4, "2001:db8::4", 0);
	check_bad_addrs(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, &p.addr,
			"ADD_PEER");
}

TEST_F(uapi, config_down)
{
	static const __u32 ids[] = { NODE };
	struct rdlock_cluster_config c;
	struct rdlock_test_info info;
	struct snap s;
	int tfd;

	need_down(_metadata, self->fd, self->ip, false);

	/* Also forgets the peers config_ipv6 added. */
	cfg_init(&c, NODE, self->ip, 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
	ASSERT_EQ(0, snapshot(self->fd, &s));
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, s.st.state);
	expect_nodes(_metadata, self->fd, ids, 1, NODE);
	reject(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, EALREADY,
	       "DOWN while down", true);
	check_enotty(_metadata, self->fd);

	/* Our own table, configured but not up; node 9 is not configured. */
	tfd = open_test_dev(&info);
	if (tfd >= 0 && info.table_slots > info.first_free_slot) {
		int got = test_op(tfd, RDLOCK_TEST_OP_READ, NODE,
				  info.first_free_slot, 0, 0, NULL);

		EXPECT_EQ(ENOTCONN, got) {
			TH_LOG("test READ of own node while down: %s", ename(got));
		}
		got = test_op(tfd, RDLOCK_TEST_OP_READ, 9, info.first_free_slot,
			      0, 0, NULL);
		EXPECT_EQ(ENOENT, got) {
			TH_LOG("test READ of unconfigured node: %s", ename(got));
		}
	}
	if (tfd >= 0)
		close(tfd);
}

TEST_F(uapi, peers)
{
	static const __u32 ids4[] = { 0, 2, NODE, 9, 31 };
	static const __u32 ids2[] = { NODE, 31 };
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_cluster_config c;
	struct rdlock_status st;
	struct rdlock_peer p;
	char ip[32], what[64];
	__u32 i, all[RDLOCK_MAX_NODES];
	int n;

	need_down(_metadata, self->fd, self->ip, false);

	cfg_init(&c, NODE, self->ip, 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
	/* Added out of order: STATUS must sort them. */
	for (n = 4; n >= 0; n--) {
		if (ids4[n] == NODE)
			continue;
		snprintf(ip, sizeof(ip), "10.77.100.%u", ids4[n] + 1);
		peer_init(&p, ids4[n], ip, 0);
		snprintf(what, sizeof(what), "ADD_PEER %u", ids4[n]);
		expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, what);
	}
	expect_nodes(_metadata, self->fd, ids4, 5, NODE);

	peer_init(&p, NODE, "10.77.100.200", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER our own id", true);
	peer_init(&p, 9, "10.77.100.200", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER id 9 again, new address", true);
	peer_init(&p, 9, "10.77.100.10", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER id 9 again, same address", true);
	peer_init(&p, 12, "10.77.100.10", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER with node 9's address", true);
	peer_init(&p, 12, "10.77.100.10", RDLOCK_DEFAULT_PORT);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER with node 9's address, default port spelt out", true);
	peer_init(&p, 12, self->ip, 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER with our own address", true);
	peer_init(&p, 12, self->ip, RDLOCK_DEFAULT_PORT);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EEXIST,
	       "ADD_PEER with our own address, default port spelt out", true);

	/* Same address, other port: another endpoint. */
	peer_init(&p, 12, "10.77.100.10", RDLOCK_DEFAULT_PORT + 1);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p,
		  "ADD_PEER node 9's address, other port");
	peer_init(&p, 13, self->ip, RDLOCK_DEFAULT_PORT + 2);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p,
		  "ADD_PEER our own address, other port");
	memset(&p.addr, 0, sizeof(p.addr));
	p.node_id = 12;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, "DEL_PEER 12");
	p.node_id = 13;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, "DEL_PEER 13");
	expect_nodes(_metadata, self->fd, ids4, 5, NODE);

	/*
	 * Field checks of ADD_PEER and DEL_PEER, on node 14, never added: an
	 * accepted ADD_PEER would add it (skipped), DEL_PEER finds none.
	 */
	RUN_CASES(self->fd, RDLOCK_IOC_ADD_PEER, peer, add_peer, "ADD_PEER", 0);
	RUN_CASES(self->fd, RDLOCK_IOC_DEL_PEER, peer, del_peer, "DEL_PEER",
		  ENOENT);

	peer_init(&p, 14, "10.77.100.15", 0);
	check_bad_addrs(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, &p.addr,
			"ADD_PEER");
	check_efault(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, sizeof(p),
		     "ADD_PEER");
	peer_init(&p, 9, "10.77.100.10", 0);
	check_efault(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, sizeof(p),
		     "DEL_PEER");

	/*
	 * NODE_DOWN: its fields (of peers 9 and 31: while down, ENOTCONN
	 * where the fields are good), then nodes that are not peers; a peer
	 * only while the cluster is up (this test never brings it up).
	 */
	RUN_CASES(self->fd, RDLOCK_IOC_NODE_DOWN, node_down, node_down,
		  "NODE_DOWN", ENOTCONN);
	{
		struct rdlock_node_down nd = uapi_valid_node_down;

		nd.node_id = 14;
		reject(_metadata, self->fd, RDLOCK_IOC_NODE_DOWN, &nd, EINVAL,
		       "NODE_DOWN of an id never added", true);
		nd.node_id = NODE;
		reject(_metadata, self->fd, RDLOCK_IOC_NODE_DOWN, &nd, EINVAL,
		       "NODE_DOWN of our own id", true);
		nd.node_id = 9;
		reject(_metadata, self->fd, RDLOCK_IOC_NODE_DOWN, &nd,
		       ENOTCONN, "NODE_DOWN while down", true);
		check_efault(_metadata, self->fd, RDLOCK_IOC_NODE_DOWN, &nd,
			     sizeof(nd), "NODE_DOWN");
	}

	/* Not added: never, or not a peer at all (ourselves). */
	peer_init(&p, 14, "10.77.100.15", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, ENOENT,
	       "DEL_PEER of an id never added", true);
	memset(&p.addr, 0, sizeof(p.addr));
	p.node_id = NODE;
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, ENOENT,
	       "DEL_PEER of our own id", true);

	/* Zeroed address, its own address, someone else's: all delete. */
	p.node_id = 9;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p,
		  "DEL_PEER 9, zeroed address");
	peer_init(&p, 2, "10.77.100.3", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p,
		  "DEL_PEER 2, its address");
	peer_init(&p, 0, "10.77.100.32", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p,
		  "DEL_PEER 0, another node's address");
	expect_nodes(_metadata, self->fd, ids2, 2, NODE);
	peer_init(&p, 9, "10.77.100.10", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, ENOENT,
	       "DEL_PEER 9 twice", true);
	/* Its address is free again. */
	peer_init(&p, 12, "10.77.100.10", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p,
		  "ADD_PEER 12 with deleted node 9's address");
	expect_ok(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, "DEL_PEER 12");

	/* A short array is filled as far as it goes. */
	memset(nodes, 0xa5, sizeof(nodes));
	memset(&st, 0, sizeof(st));
	st.version = RDLOCK_UAPI_VERSION;
	st.nr_nodes = 1;
	st.nodes = (__u64)(unsigned long)nodes;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, "STATUS, 1 slot");
	EXPECT_EQ(2, st.nr_nodes);
	EXPECT_EQ(NODE, nodes[0].node_id);
	EXPECT_EQ(0xa5a5a5a5, nodes[1].node_id) {
		TH_LOG("STATUS wrote past the array it was given");
	}
	memset(&st, 0, sizeof(st));
	st.version = RDLOCK_UAPI_VERSION;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, "STATUS, no array");
	EXPECT_EQ(2, st.nr_nodes);

	/* A bad array: unwritable memory, or straddling a hole. */
	st.nr_nodes = 2;
	st.nodes = 1;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EFAULT,
	       "STATUS nodes pointer 1", true);
	st.nodes = (__u64)(unsigned long)KERNEL_PTR;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EFAULT,
	       "STATUS nodes kernel pointer", true);
	st.nodes = (__u64)(unsigned long)(fault_pages() +
		sysconf(_SC_PAGESIZE) - sizeof(nodes[0]));
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EFAULT,
	       "STATUS nodes straddling a PROT_NONE page", true);

	/* Every id: 32 nodes, still sorted. */
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		all[i] = i;
		if (i == NODE || i == 31)
			continue;
		snprintf(ip, sizeof(ip), "10.77.101.%u", i + 1);
		peer_init(&p, i, ip, 0);
		snprintf(what, sizeof(what), "ADD_PEER %u", i);
		expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, what);
	}
	expect_nodes(_metadata, self->fd, all, RDLOCK_MAX_NODES, NODE);

	/* SET_CONFIG forgets every peer. */
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
		  "SET_CONFIG again");
	expect_nodes(_metadata, self->fd, ids2, 1, NODE);
	peer_init(&p, 31, "10.77.100.32", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p,
		  "ADD_PEER 31 after SET_CONFIG forgot it");
	c.node_id = 6;
	c.cluster_id = CLUSTER + 1;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
		  "SET_CONFIG with another node and cluster id");
	{
		struct snap s;

		ASSERT_EQ(0, snapshot(self->fd, &s));
		EXPECT_EQ(6, s.st.node_id);
		EXPECT_EQ(CLUSTER + 1, s.st.cluster_id);
		EXPECT_EQ(1, s.st.nr_nodes);
		EXPECT_EQ(6, s.nodes[0].node_id);
	}
}

/* Exit status of the unprivileged child: the number of failed checks. */
static int unprivileged_child(const struct snap *want, const char *ip)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2];
	struct rdlock_cluster_config c;
	struct rdlock_peer p;
	struct snap s;
	int fails = 0, fd, got;

	if (as_nobody()) {
		fprintf(stderr, "# cannot drop privileges: %s\n", strerror(errno));
		return 100;
	}
	memset(caps, 0, sizeof(caps));
	if (syscall(SYS_capget, &hdr, caps) || caps[0].effective ||
	    caps[1].effective) {
		fprintf(stderr, "# capabilities left after dropping to nobody\n");
		return 100;
	}
	/* The node is 0666: anyone may open it and ask for STATUS. */
	fd = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "# nobody cannot open %s: %s\n", RDLOCK_DEV,
			strerror(errno));
		return 100;
	}
	got = snapshot(fd, &s);
	if (got || !snap_equal(want, &s, true)) {
		fprintf(stderr, "# STATUS as nobody: %s or other result\n",
			ename(got));
		fails++;
	}

#define CHILD_EXPECT_EPERM(req, arg, what) do {				\
	got = rdl_ioctl(fd, req, arg);					\
	if (got != EPERM) {						\
		fprintf(stderr, "# %s as nobody: got %s, expected EPERM\n", \
			what, ename(got));				\
		fails++;						\
	}								\
} while (0)

	cfg_init(&c, 1, ip, 0);
	CHILD_EXPECT_EPERM(RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
	peer_init(&p, 3, "10.77.100.4", 0);
	CHILD_EXPECT_EPERM(RDLOCK_IOC_ADD_PEER, &p, "ADD_PEER");
	peer_init(&p, 9, "10.77.100.10", 0);
	CHILD_EXPECT_EPERM(RDLOCK_IOC_DEL_PEER, &p, "DEL_PEER");
	CHILD_EXPECT_EPERM(RDLOCK_IOC_UP, NULL, "UP");
	{
		struct rdlock_node_down nd = {
			.version = RDLOCK_UAPI_VERSION, .node_id = 2,
		};

		CHILD_EXPECT_EPERM(RDLOCK_IOC_NODE_DOWN, &nd, "NODE_DOWN");
	}
	CHILD_EXPECT_EPERM(RDLOCK_IOC_DOWN, NULL, "DOWN");
#undef CHILD_EXPECT_EPERM

	got = snapshot(fd, &s);
	if (got || !snap_equal(want, &s, true)) {
		fprintf(stderr, "# cluster changed by nobody's calls\n");
		fails++;
	}
	close(fd);
	return fails;
}

TEST_F(uapi, unprivileged)
{
	struct rdlock_cluster_config c;
	struct rdlock_peer p;
	struct snap before, after;
	int status;
	pid_t pid;

	need_down(_metadata, self->fd, self->ip, false);

	cfg_init(&c, NODE, self->ip, 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
	peer_init(&p, 9, "10.77.100.10", 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, "ADD_PEER 9");
	ASSERT_EQ(0, snapshot(self->fd, &before));

	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(unprivileged_child(&before, self->ip));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("%d checks failed as uid/gid %d", WEXITSTATUS(status),
		       NOBODY);
	}
	ASSERT_EQ(0, snapshot(self->fd, &after));
	EXPECT_TRUE(snap_equal(&before, &after, true));
}

/* One node, alone: READY, and every config change refused while up. */
TEST_F_TIMEOUT(uapi, up_down, 3 * READY_TIMEOUT_S)
{
	struct rdlock_cluster_config c;
	struct rdlock_test_info info;
	struct rdlock_peer p;
	struct snap s;
	int tfd, round;

	need_down(_metadata, self->fd, self->ip, false);

	/* Neither a key nor the insecure mode: up refused, nothing changed. */
	cfg_init(&c, NODE, self->ip, 0);
	c.flags = 0;
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
		  "SET_CONFIG without the insecure mode");
	reject(_metadata, self->fd, RDLOCK_IOC_UP, NULL, ENOKEY,
	       "UP without a cluster key", true);
	ASSERT_EQ(0, snapshot(self->fd, &s));
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, s.st.state);
	EXPECT_EQ(0, s.st.flags);
	/* With a key it goes up (a kernel without hmac(sha256): ENOENT). */
	if (ioctl(self->fd, RDLOCK_IOC_SET_KEY, &uapi_valid_key) == 0) {
		ASSERT_EQ(0, snapshot(self->fd, &s));
		EXPECT_EQ(RDLOCK_STATUS_KEYED, s.st.flags);
		expect_ok(_metadata, self->fd, RDLOCK_IOC_UP, NULL,
			  "UP with a cluster key");
		expect_ok(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL,
			  "DOWN with a cluster key");
	} else {
		EXPECT_EQ(ENOENT, errno);
	}

	cfg_init(&c, NODE, self->ip, 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
	ASSERT_EQ(0, snapshot(self->fd, &s));
	EXPECT_EQ(RDLOCK_STATUS_INSECURE_NO_KEY, s.st.flags);
	for (round = 0; round < 2; round++) {
		expect_ok(_metadata, self->fd, RDLOCK_IOC_UP, NULL, "UP");
		ASSERT_EQ(0, wait_ready(self->fd)) {
			TH_LOG("one-node cluster on %s not ready after %d s",
			       self->ip, READY_TIMEOUT_S);
		}
		ASSERT_EQ(0, snapshot(self->fd, &s));
		EXPECT_EQ(1, s.st.nr_nodes);
		EXPECT_EQ(RDLOCK_NODE_READY, s.nodes[0].state);
		EXPECT_TRUE(s.st.backend == RDLOCK_BACKEND_VERBS ||
			    s.st.backend == RDLOCK_BACKEND_TWOSIDED) {
			TH_LOG("backend %u once ready", s.st.backend);
		}

		reject(_metadata, self->fd, RDLOCK_IOC_UP, NULL, EALREADY,
		       "UP while up", true);
		reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EBUSY,
		       "SET_CONFIG while up", true);
		peer_init(&p, 9, "10.77.100.10", 0);
		reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EBUSY,
		       "ADD_PEER while up", true);

		/* Our own table through the loopback path. */
		tfd = open_test_dev(&info);
		if (tfd >= 0 && round == 0) {
			__u32 slot = info.first_free_slot;
			__u64 v = 0;

			EXPECT_EQ(NODE, info.node_id);
			EXPECT_EQ(1, info.ready);
			EXPECT_EQ(0, test_op(tfd, RDLOCK_TEST_OP_WRITE, NODE, slot,
					     0x0102030405060708ULL, 0, NULL));
			EXPECT_EQ(0, test_op(tfd, RDLOCK_TEST_OP_FAA, NODE, slot,
					     1, 0, &v));
			EXPECT_EQ(0x0102030405060708ULL, v);
			EXPECT_EQ(0, test_op(tfd, RDLOCK_TEST_OP_READ, NODE, slot,
					     0, 0, &v));
			EXPECT_EQ(0x0102030405060709ULL, v);
			EXPECT_EQ(EINVAL, test_op(tfd, 99, NODE, slot, 0, 0, NULL));
			EXPECT_EQ(EINVAL, test_op(tfd, RDLOCK_TEST_OP_READ, NODE,
						  info.table_slots, 0, 0, NULL));
			EXPECT_EQ(ENOENT, test_op(tfd, RDLOCK_TEST_OP_READ, 9,
						  slot, 0, 0, NULL));
		}

		expect_ok(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, "DOWN");
		ASSERT_EQ(0, snapshot(self->fd, &s));
		EXPECT_EQ(RDLOCK_CLUSTER_DOWN, s.st.state);
		EXPECT_EQ(NODE, s.st.node_id);
		EXPECT_EQ(CLUSTER, s.st.cluster_id);
		reject(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, EALREADY,
		       "DOWN after DOWN", true);
		if (tfd >= 0 && info.table_slots > info.first_free_slot) {
			int got = test_op(tfd, RDLOCK_TEST_OP_READ, NODE,
					  info.first_free_slot, 0, 0, NULL);

			EXPECT_EQ(ENOTCONN, got) {
				TH_LOG("test READ after DOWN: %s", ename(got));
			}
		}
		if (tfd >= 0)
			close(tfd);
	}
}

/*
 * Up with a peer that never answers (our own address, a port nobody
 * listens on): the cluster stays CONNECTING, which is up as well.
 */
TEST_F_TIMEOUT(uapi, up_connecting, 60)
{
	struct rdlock_cluster_config c;
	struct rdlock_peer p;
	struct snap s;

	need_down(_metadata, self->fd, self->ip, false);

	cfg_init(&c, NODE, self->ip, 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
	peer_init(&p, 9, self->ip, RDLOCK_DEFAULT_PORT + 1);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, "ADD_PEER 9");
	expect_ok(_metadata, self->fd, RDLOCK_IOC_UP, NULL, "UP");
	usleep(200 * 1000);
	ASSERT_EQ(0, snapshot(self->fd, &s));
	EXPECT_EQ(RDLOCK_CLUSTER_CONNECTING, s.st.state);
	EXPECT_EQ(2, s.st.nr_nodes);
	EXPECT_NE(RDLOCK_NODE_READY, s.nodes[1].state);

	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, EBUSY,
	       "DEL_PEER while connecting", false);
	peer_init(&p, 10, "10.77.100.11", 0);
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EBUSY,
	       "ADD_PEER while connecting", false);
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EBUSY,
	       "SET_CONFIG while connecting", false);
	reject(_metadata, self->fd, RDLOCK_IOC_UP, NULL, EALREADY,
	       "UP while connecting", false);
	{
		struct rdlock_ls_create lc;

		rdl_ls_create_init(&lc, "uapi_conn", RDLOCK_PROTO_BAKERY, 2, 0, 0666);
		reject(_metadata, self->fd, RDLOCK_IOC_LS_CREATE, &lc, ENOTCONN,
		       "LS_CREATE while connecting", false);
	}

	expect_ok(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, "DOWN");
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, state_of(self->fd));
	reject(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, EALREADY,
	       "DOWN after DOWN", true);
	/* Leave a plain one-node configuration behind, down. */
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
}

/*
 * Lockspaces and locks while the one-node cluster is down (configured by
 * up_connecting): every malformed argument is EINVAL before the state is
 * looked at, every well-formed one a state error.
 */
TEST_F(uapi, ls_down)
{
	struct rdlock_convert_req cv;
	struct rdlock_unlock_req ul;
	struct rdlock_ls_create c;
	struct rdlock_lock_req l;
	struct rdlock_ls_name n;
	struct rdlock_query q;

	need_down(_metadata, self->fd, self->ip, true);

	ASSERT_EQ(RDLOCK_CLUSTER_DOWN, state_of(self->fd));
	c = uapi_valid_ls_create;
	reject(_metadata, self->fd, RDLOCK_IOC_LS_CREATE, &c, ENOTCONN,
	       "LS_CREATE while down", true);
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_LS_CREATE, &c,
			sizeof(c), uapi_ls_create_cases,
			ARRAY_SIZE(uapi_ls_create_cases), "LS_CREATE while down,",
			ENOTCONN);
	create_names(_metadata, self->fd, &c, "LS_CREATE while down, ",
		     ENOTCONN);

	n = uapi_valid_ls_name;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_REMOVE, &n), ENOENT,
		   "LS_REMOVE of an unknown lockspace");
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_JOIN, &n), ENOENT,
		   "JOIN of an unknown lockspace");
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_LS_REMOVE, &n,
			sizeof(n), uapi_ls_name_cases,
			ARRAY_SIZE(uapi_ls_name_cases), "LS_REMOVE", ENOENT);
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_JOIN, &n, sizeof(n),
			uapi_ls_name_cases, ARRAY_SIZE(uapi_ls_name_cases),
			"JOIN", ENOENT);

	/* Not joined: EBADFD, but only for well-formed arguments. */
	expect_err(_metadata, ls_leave(self->fd), EBADFD, "LEAVE, not joined");
	l = uapi_valid_lock;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), EBADFD,
		   "LOCK, not joined");
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_LOCK, &l, sizeof(l),
			uapi_lock_cases, ARRAY_SIZE(uapi_lock_cases),
			"LOCK, not joined,", EBADFD);
	cv = uapi_valid_convert;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_CONVERT, &cv), EBADFD,
		   "CONVERT, not joined");
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_CONVERT, &cv,
			sizeof(cv), uapi_convert_cases,
			ARRAY_SIZE(uapi_convert_cases), "CONVERT, not joined,",
			EBADFD);
	ul = uapi_valid_unlock;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_UNLOCK, &ul), EBADFD,
		   "UNLOCK, not joined");
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_UNLOCK, &ul,
			sizeof(ul), uapi_unlock_cases,
			ARRAY_SIZE(uapi_unlock_cases), "UNLOCK, not joined,",
			EBADFD);
	q = uapi_valid_query;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_QUERY, &q), EBADFD,
		   "QUERY, not joined");
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_QUERY, &q, sizeof(q),
			uapi_query_cases, ARRAY_SIZE(uapi_query_cases),
			"QUERY, not joined,", EBADFD);

	/* Bad pointers: nothing is read, nothing changes. */
	check_efault(_metadata, self->fd, RDLOCK_IOC_LS_CREATE, &c, sizeof(c),
		     "LS_CREATE");
	check_efault(_metadata, self->fd, RDLOCK_IOC_LS_REMOVE, &n, sizeof(n),
		     "LS_REMOVE");
	check_efault(_metadata, self->fd, RDLOCK_IOC_JOIN, &n, sizeof(n), "JOIN");
	check_efault(_metadata, self->fd, RDLOCK_IOC_LOCK, &l, sizeof(l), "LOCK");
	check_efault(_metadata, self->fd, RDLOCK_IOC_CONVERT, &cv, sizeof(cv),
		     "CONVERT");
	check_efault(_metadata, self->fd, RDLOCK_IOC_UNLOCK, &ul, sizeof(ul),
		     "UNLOCK");
	check_efault(_metadata, self->fd, RDLOCK_IOC_QUERY, &q, sizeof(q),
		     "QUERY");
	check_enotty(_metadata, self->fd);
}

TEST_F_TIMEOUT(uapi, ls_create, 2 * READY_TIMEOUT_S)
{
	struct rdlock_ls_create c;

	need_down(_metadata, self->fd, self->ip, true);

	expect_ok(_metadata, self->fd, RDLOCK_IOC_UP, NULL, "UP");
	ASSERT_EQ(0, wait_ready(self->fd)) {
		TH_LOG("one-node cluster on %s not ready after %d s",
		       self->ip, READY_TIMEOUT_S);
	}

	c = uapi_valid_ls_create;
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_LS_CREATE, &c,
			sizeof(c), uapi_ls_create_cases,
			ARRAY_SIZE(uapi_ls_create_cases), "LS_CREATE", 0);
	create_names(_metadata, self->fd, &c, "LS_CREATE ", 0);
	/* None of them created anything. */
	expect_err(_metadata, ls_remove(self->fd, uapi_valid_ls_create.name),
		   ENOENT,
		   "LS_REMOVE after rejected creations");

	/* Good names: the longest, every character; attributes at the limits. */
	expect_err(_metadata, ls_create(self->fd, LS_NAME_31, RDLOCK_PROTO_BAKERY,
					2, 0, 0, 0, 0), 0, "LS_CREATE 31-char name");
	expect_err(_metadata, ls_create(self->fd, LS_NAME_LOWER,
					RDLOCK_PROTO_CASLOCK, 4, 0, NOBODY,
					NOBODY, 0777), 0,
		   "LS_CREATE lowercase name, mode 0777");
	rdl_ls_create_init(&c, LS_NAME_DIGITS, RDLOCK_PROTO_BAKERY, 2,
			   RDLOCK_LS_UPDATE, 0);
	c.lease_ms = 0xffffffff;
	c.omega_us = 0xffffffff;
	c.uid = 0xffffffff;
	c.gid = 0xffffffff;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c), 0,
		   "LS_CREATE digits name, ~0 lease, omega, uid and gid");
	expect_err(_metadata, ls_remove(self->fd, LS_NAME_31), 0,
		   "LS_REMOVE 31-char name");
	expect_err(_metadata, ls_remove(self->fd, LS_NAME_LOWER), 0,
		   "LS_REMOVE lowercase name");
	expect_err(_metadata, ls_remove(self->fd, LS_NAME_DIGITS), 0,
		   "LS_REMOVE digits name");
	expect_err(_metadata, ls_remove(self->fd, LS_NAME_DIGITS), ENOENT,
		   "LS_REMOVE twice");

	expect_err(_metadata, ls_create(self->fd, LS_PLAIN, RDLOCK_PROTO_BAKERY,
					LS_SLOTS, 0, 0, 0, 0666), 0,
		   "LS_CREATE " LS_PLAIN);
	expect_err(_metadata, ls_create(self->fd, LS_UPD, RDLOCK_PROTO_BAKERY,
					LS_SLOTS, RDLOCK_LS_UPDATE, 0, 0, 0666),
		   0, "LS_CREATE " LS_UPD);
	expect_err(_metadata, ls_create(self->fd, LS_CAS, RDLOCK_PROTO_CASLOCK,
					LS_SLOTS, 0, 0, 0, 0666), 0,
		   "LS_CREATE " LS_CAS);
	expect_err(_metadata, ls_create(self->fd, LS_TINY, RDLOCK_PROTO_BAKERY,
					2, 0, 0, 0, 0666), 0,
		   "LS_CREATE " LS_TINY);
	expect_err(_metadata, ls_create(self->fd, LS_CASUPD,
					RDLOCK_PROTO_CASLOCK, LS_SLOTS,
					RDLOCK_LS_UPDATE, 0, 0, 0666), 0,
		   "LS_CREATE " LS_CASUPD);

	/* Created on this node already: same or other attributes. */
	expect_err(_metadata, ls_create(self->fd, LS_PLAIN, RDLOCK_PROTO_BAKERY,
					LS_SLOTS, 0, 0, 0, 0666), EEXIST,
		   "LS_CREATE twice, same attributes");
	expect_err(_metadata, ls_create(self->fd, LS_PLAIN, RDLOCK_PROTO_CASLOCK,
					LS_SLOTS, 0, 0, 0, 0666), EEXIST,
		   "LS_CREATE twice, other protocol");
	expect_err(_metadata, ls_create(self->fd, LS_PLAIN, RDLOCK_PROTO_BAKERY,
					2 * LS_SLOTS, RDLOCK_LS_UPDATE, 0, 0,
					0600), EEXIST,
		   "LS_CREATE twice, other slots, flags and mode");
	/* Validation still comes first. */
	rdl_ls_create_init(&c, LS_PLAIN, RDLOCK_PROTO_BAKERY, 3, 0, 0666);
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c), EINVAL,
		   "LS_CREATE existing name, odd slots");

	/* CQL: bad input is EINVAL and creates nothing; limits are fine. */
	rdl_ls_create_init(&c, "uapi_cql", RDLOCK_PROTO_CQL, 64, 0, 0666);
	c.lease_ms = 1000;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EINVAL, "LS_CREATE cql with a lease");
	rdl_ls_create_init(&c, "uapi_cql", RDLOCK_PROTO_CQL, 64,
			   RDLOCK_LS_UPDATE, 0666);
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EINVAL, "LS_CREATE cql with RDLOCK_LS_UPDATE");
	rdl_ls_create_init(&c, "uapi_cql", RDLOCK_PROTO_CQL, 32, 0, 0666);
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EINVAL, "LS_CREATE cql, 32 slots (a name takes 34)");
	rdl_ls_create_init(&c, "uapi_cql", RDLOCK_PROTO_CQL, 64, 0, 0666);
	c.queue_bits = RDLOCK_CQL_QUEUE_BITS_MAX;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EINVAL, "LS_CREATE cql, queue_bits 12 in 64 slots");
	c.queue_bits = RDLOCK_CQL_QUEUE_BITS_MAX + 1;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EINVAL, "LS_CREATE cql, queue_bits 13");
	c.queue_bits = 0;
	c.version_bits = RDLOCK_CQL_VERSION_BITS_MIN - 1;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EINVAL, "LS_CREATE cql, version_bits 1");
	c.version_bits = 0;
	c.flags = RDLOCK_LS_CQL_PHASE_FAIR;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EINVAL, "LS_CREATE cql, phase-fair without the hierarchy");
	c.flags = 0;
	expect_err(_metadata, ls_remove(self->fd, "uapi_cql"), ENOENT,
		   "LS_REMOVE after rejected cql creations");
	c.queue_bits = RDLOCK_CQL_QUEUE_BITS_MIN;
	c.version_bits = RDLOCK_CQL_VERSION_BITS_MIN;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c), 0,
		   "LS_CREATE cql, queue_bits 1, version_bits 2");
	c.queue_bits = 2;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c),
		   EEXIST, "LS_CREATE cql twice, other queue_bits");
	expect_err(_metadata, ls_remove(self->fd, "uapi_cql"), 0,
		   "LS_REMOVE cql");
	/*
	 * An update lock in a CQL lockspace: EOPNOTSUPP, as without UPDATE.
	 * Another name: the cluster keeps a removed lockspace's attributes.
	 */
	rdl_ls_create_init(&c, "uapi_cql2", RDLOCK_PROTO_CQL, 34, 0, 0666);
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_CREATE, &c), 0,
		   "LS_CREATE cql, defaults, 34 slots");
	{
		int fd = rdl_open_joined("uapi_cql2");
		__u32 h;

		ASSERT_LE(0, fd);
		expect_err(_metadata, rdl_ls_lock(fd, "x", RDLOCK_LOCK_UP, 0, 0,
						  NULL), EOPNOTSUPP,
			   "LOCK UP in a cql lockspace");
		expect_err(_metadata, rdl_ls_lock(fd, "x", RDLOCK_LOCK_EX, 0, 0,
						  &h), 0, "LOCK EX in a cql lockspace");
		expect_err(_metadata, rdl_ls_unlock(fd, h), 0,
			   "UNLOCK in a cql lockspace");
		close(fd);
	}
	expect_err(_metadata, ls_remove(self->fd, "uapi_cql2"), 0,
		   "LS_REMOVE cql, defaults");
}

TEST_F_TIMEOUT(uapi, ls_join, SETUP_S + 30)
{
	const struct uapi_name_case *nc;
	struct rdlock_ls_name n;
	char what[96];
	int fd2, got, want;
	size_t i;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN | 1U << SH_UPD |
		1U << SH_CAS);

	/* An existing lockspace: only the rejected field can fail the call. */
	rdl_ls_name_init(&n, LS_PLAIN);
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_JOIN, &n, sizeof(n),
			uapi_ls_name_cases, ARRAY_SIZE(uapi_ls_name_cases),
			"JOIN", 0);
	/* Good names are of no lockspace: ENOENT. */
	for (i = 0; i < ARRAY_SIZE(uapi_name_cases); i++) {
		nc = &uapi_name_cases[i];
		if (nc->c_string)
			continue;
		want = nc->err ? nc->err : ENOENT;
		memcpy(n.name, nc->name, sizeof(n.name));
		snprintf(what, sizeof(what), "JOIN %s", nc->what);
		got = rdl_ioctl(self->fd, RDLOCK_IOC_JOIN, &n);
		expect_err(_metadata, got, want, what);
		if (!got)
			ls_leave(self->fd);
		snprintf(what, sizeof(what), "LS_REMOVE %s", nc->what);
		expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_REMOVE, &n),
			   want, what);
	}
	expect_err(_metadata, ls_join(self->fd, "uapi_nosuch"), ENOENT,
		   "JOIN of an unknown lockspace");
	/* Nothing joined so far. */
	expect_err(_metadata, ls_leave(self->fd), EBADFD,
		   "LEAVE after rejected JOINs");

	expect_err(_metadata, ls_join(self->fd, LS_PLAIN), 0, "JOIN");
	expect_err(_metadata, ls_join(self->fd, LS_PLAIN), EBUSY,
		   "JOIN the same lockspace again");
	expect_err(_metadata, ls_join(self->fd, LS_UPD), EBUSY,
		   "JOIN a second lockspace");
	expect_err(_metadata, ls_join(self->fd, "uapi_nosuch"), EBUSY,
		   "JOIN an unknown lockspace while joined");
	rdl_ls_name_init(&n, LS_UPD);
	n.version = 0;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_JOIN, &n), EINVAL,
		   "JOIN version 0 while joined");

	/* Another file joins on its own. */
	fd2 = open_dev();
	ASSERT_LE(0, fd2);
	expect_err(_metadata, ls_join(fd2, LS_PLAIN), 0, "JOIN from a 2nd file");
	expect_err(_metadata, ls_leave(fd2), 0, "LEAVE the 2nd file");
	expect_err(_metadata, ls_join(fd2, LS_UPD), 0,
		   "JOIN another lockspace after LEAVE");
	close(fd2);

	expect_err(_metadata, ls_leave(self->fd), 0, "LEAVE");
	expect_err(_metadata, ls_leave(self->fd), EBADFD, "LEAVE twice");
	expect_err(_metadata, ls_join(self->fd, LS_CAS), 0, "JOIN after LEAVE");
}

TEST_F_TIMEOUT(uapi, ls_lock_rejects, SETUP_S + 30)
{
	struct rdlock_lock_req l;
	__u32 h;
	int fd2;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN);

	ASSERT_EQ(0, ls_join(self->fd, LS_PLAIN));
	l = uapi_valid_lock;
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_LOCK, &l, sizeof(l),
			uapi_lock_cases, ARRAY_SIZE(uapi_lock_cases), "LOCK", 0);
	/* Nothing was taken: another file gets it at once. */
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	expect_err(_metadata, rdl_ls_lock(fd2, "victim", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h), 0,
		   "TRY EX after the rejected LOCKs");
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h));

	/* The limits themselves are fine. */
	memset(l.name, 'n', sizeof(l.name));
	l.name_len = RDLOCK_RES_NAME_MAX;
	l.lease_slots = 256;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), 0,
		   "LOCK 64-byte name, lease_slots 256");
	EXPECT_NE(0, l.handle);
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, l.handle));
	rdl_lock_init(&l, "x", RDLOCK_LOCK_SH, 0, 0);
	memcpy(l.name, "\0\xff binary\n", 10);
	l.name_len = 10;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), 0,
		   "LOCK binary name");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, l.handle));

	/* Update locks need an update lockspace; validation comes first. */
	expect_err(_metadata, rdl_ls_lock(self->fd, "victim", RDLOCK_LOCK_UP, 0, 0,
					  NULL), EOPNOTSUPP,
		   "LOCK UP without RDLOCK_LS_UPDATE");
	rdl_lock_init(&l, "victim", RDLOCK_LOCK_UP, 0, 0);
	l.pad = 1;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), EINVAL,
		   "LOCK UP without RDLOCK_LS_UPDATE, pad 1");
	close(fd2);
}

/*
 * held: mode one file holds; want: mode another asks for with TRY. An
 * update holder is granted beside earlier readers; later readers wait for
 * it with the bakery lock (DSLR section 5.2) and come and go beside it with
 * the CAS spinlock.
 */
static const struct {
	__u32 held, want;
	int err_bakery, err_cas;
} compat[] = {
	{ RDLOCK_LOCK_SH, RDLOCK_LOCK_SH, 0, 0 },
	{ RDLOCK_LOCK_SH, RDLOCK_LOCK_EX, EAGAIN, EAGAIN },
	{ RDLOCK_LOCK_SH, RDLOCK_LOCK_UP, 0, 0 },
	{ RDLOCK_LOCK_EX, RDLOCK_LOCK_SH, EAGAIN, EAGAIN },
	{ RDLOCK_LOCK_EX, RDLOCK_LOCK_EX, EAGAIN, EAGAIN },
	{ RDLOCK_LOCK_EX, RDLOCK_LOCK_UP, EAGAIN, EAGAIN },
	{ RDLOCK_LOCK_UP, RDLOCK_LOCK_SH, EAGAIN, 0 },
	{ RDLOCK_LOCK_UP, RDLOCK_LOCK_EX, EAGAIN, EAGAIN },
	{ RDLOCK_LOCK_UP, RDLOCK_LOCK_UP, EAGAIN, EAGAIN },
};

static const char * const mode_names[] = { "SH", "EX", "UP" };

/* Every pair of modes in @ls, held by @a, asked for by @b with TRY. */
static void check_compat(struct __test_metadata *_metadata, int a, int b,
			 const char *ls, bool update, bool bakery)
{
	char what[96];
	__u32 ha, hb;
	size_t i;
	double t;
	int got;

	for (i = 0; i < ARRAY_SIZE(compat); i++) {
		if (!update && (compat[i].held == RDLOCK_LOCK_UP ||
				compat[i].want == RDLOCK_LOCK_UP))
			continue;
		snprintf(what, sizeof(what), "%s: %s held, TRY %s", ls,
			 mode_names[compat[i].held], mode_names[compat[i].want]);
		ASSERT_EQ(0, rdl_ls_lock(a, "compat", compat[i].held, 0, 0, &ha));
		t = rdl_now();
		got = rdl_ls_lock(b, "compat", compat[i].want, RDLOCK_LKF_TRY, 0, &hb);
		expect_err(_metadata, got, bakery ? compat[i].err_bakery :
			   compat[i].err_cas, what);
		/* "At once": no waiting for the holder. */
		EXPECT_GT(2.0, rdl_now() - t) {
			TH_LOG("%s took %.2f s", what, rdl_now() - t);
		}
		if (!got)
			EXPECT_EQ(0, rdl_ls_unlock(b, hb));
		EXPECT_EQ(0, rdl_ls_unlock(a, ha));
	}
}

TEST_F_TIMEOUT(uapi, ls_locks, SETUP_S + 120)
{
	struct rdlock_test_info info;
	struct rdlock_query q;
	__u32 h, h2, h3;
	int fd2, tfd;
	double t;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN | 1U << SH_UPD |
		1U << SH_CAS | 1U << SH_CASUPD);

	ASSERT_EQ(0, ls_join(self->fd, LS_UPD));
	fd2 = rdl_open_joined(LS_UPD);
	ASSERT_LE(0, fd2);

	/* Update lockspaces take fewer lease slots. */
	{
		struct rdlock_lock_req l;

		rdl_lock_init(&l, "lease", RDLOCK_LOCK_UP, 0, 0);
		l.lease_slots = RDLOCK_LEASE_SLOTS_MAX_UPDATE + 1;
		expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l),
			   EINVAL, "LOCK UP, lease_slots 17 in an update lockspace");
		l.lease_slots = RDLOCK_LEASE_SLOTS_MAX_UPDATE;
		expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), 0,
			   "LOCK UP, lease_slots 16 in an update lockspace");
		EXPECT_EQ(0, rdl_ls_unlock(self->fd, l.handle));
	}

	/* Every mode; QUERY tells what is held and where. */
	tfd = open_test_dev(&info);
	for (h3 = RDLOCK_LOCK_SH; h3 <= RDLOCK_LOCK_UP; h3++) {
		char what[64];

		snprintf(what, sizeof(what), "LOCK %s", mode_names[h3]);
		expect_err(_metadata, rdl_ls_lock(self->fd, "qname", h3, 0, 0, &h), 0,
			   what);
		EXPECT_NE(0, h);
		usleep(150 * 1000);
		ASSERT_EQ(0, rdl_ls_query(self->fd, h, &q));
		EXPECT_EQ(h3, q.mode);
		EXPECT_EQ(h, q.handle);
		EXPECT_EQ(NODE, q.home_node);
		EXPECT_EQ(5, q.name_len);
		EXPECT_EQ(0, memcmp(q.name, "qname", 5));
		EXPECT_EQ(0, q.name[5]);
		EXPECT_LE(140, q.held_ms);
		EXPECT_GT(20000, q.held_ms);
		EXPECT_LE(1, q.remote_ops);
		EXPECT_EQ(0, q.pad);
		EXPECT_EQ(0, q.reserved[0]);
		EXPECT_EQ(0, q.reserved[1]);
		/* Lockspaces live above the slots the raw tests use. */
		if (tfd >= 0) {
			EXPECT_LE(info.first_free_slot + RAW_TEST_SLOTS, q.slot);
			EXPECT_GT(info.table_slots, q.slot);
		}
		EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	}
	if (tfd >= 0)
		close(tfd);

	/* Unknown handles: never given, already released. */
	expect_err(_metadata, rdl_ls_unlock(self->fd, 0), ENOENT, "UNLOCK handle 0");
	expect_err(_metadata, rdl_ls_unlock(self->fd, 0xffffffff), ENOENT,
		   "UNLOCK handle ~0");
	expect_err(_metadata, rdl_ls_query(self->fd, 0xffffffff, &q), ENOENT,
		   "QUERY handle ~0");
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "twice", RDLOCK_LOCK_EX, 0, 0, &h));
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	expect_err(_metadata, rdl_ls_unlock(self->fd, h), ENOENT, "double UNLOCK");
	expect_err(_metadata, rdl_ls_query(self->fd, h, &q), ENOENT,
		   "QUERY after UNLOCK");
	expect_err(_metadata, rdl_ls_convert(self->fd, h, RDLOCK_LOCK_EX, 0, 0),
		   ENOENT, "CONVERT after UNLOCK");
	/* Another file's handles are not ours. */
	ASSERT_EQ(0, rdl_ls_lock(fd2, "theirs", RDLOCK_LOCK_SH, 0, 0, &h2));
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "mine", RDLOCK_LOCK_SH, 0, 0, &h));
	if (h2 != h) {
		expect_err(_metadata, rdl_ls_unlock(self->fd, h2), ENOENT,
			   "UNLOCK another file's handle");
		expect_err(_metadata, rdl_ls_query(self->fd, h2, &q), ENOENT,
			   "QUERY another file's handle");
	}
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h2));

	check_compat(_metadata, self->fd, fd2, LS_UPD, true, true);

	/* A timed request gives up after about its timeout. */
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "timed", RDLOCK_LOCK_EX, 0, 0, &h));
	t = rdl_now();
	expect_err(_metadata, rdl_ls_lock(fd2, "timed", RDLOCK_LOCK_EX, 0, 300, &h2),
		   ETIMEDOUT, "LOCK EX, 300 ms, EX held");
	t = rdl_now() - t;
	EXPECT_LE(0.29, t);
	EXPECT_GT(10.0, t) {
		TH_LOG("300 ms timeout took %.2f s", t);
	}
	t = rdl_now();
	expect_err(_metadata, rdl_ls_lock(fd2, "timed", RDLOCK_LOCK_SH, 0, 200, &h2),
		   ETIMEDOUT, "LOCK SH, 200 ms, EX held");
	EXPECT_LE(0.19, rdl_now() - t);
	/* The waiters that gave up left nothing behind. */
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	expect_err(_metadata, rdl_ls_lock(fd2, "timed", RDLOCK_LOCK_EX, 0, 5000, &h2),
		   0, "LOCK EX after the timed-out waiters");
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h2));

	/* One file, one name, two handles: they conflict like any two. */
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "dup", RDLOCK_LOCK_SH, 0, 0, &h));
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "dup", RDLOCK_LOCK_SH, 0, 0, &h2));
	EXPECT_NE(h, h2);
	expect_err(_metadata, rdl_ls_lock(self->fd, "dup", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h3), EAGAIN,
		   "TRY EX while the same file holds SH twice");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h2));
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "dup", RDLOCK_LOCK_EX, 0, 0, &h));
	expect_err(_metadata, rdl_ls_lock(self->fd, "dup", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h2), EAGAIN,
		   "TRY EX again from the file holding EX");
	expect_err(_metadata, rdl_ls_lock(self->fd, "dup", RDLOCK_LOCK_SH, 0, 200,
					  &h2), ETIMEDOUT,
		   "timed SH from the file holding EX");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	close(fd2);

	/* The same in the other lockspaces (no update locks there). */
	ASSERT_EQ(0, ls_leave(self->fd));
	ASSERT_EQ(0, ls_join(self->fd, LS_PLAIN));
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	check_compat(_metadata, self->fd, fd2, LS_PLAIN, false, true);
	close(fd2);
	ASSERT_EQ(0, ls_leave(self->fd));
	ASSERT_EQ(0, ls_join(self->fd, LS_CAS));
	fd2 = rdl_open_joined(LS_CAS);
	ASSERT_LE(0, fd2);
	check_compat(_metadata, self->fd, fd2, LS_CAS, false, false);
	expect_err(_metadata, rdl_ls_lock(self->fd, "x", RDLOCK_LOCK_UP, 0, 0, NULL),
		   EOPNOTSUPP, "LOCK UP in a CAS spinlock lockspace");
	close(fd2);
	ASSERT_EQ(0, ls_leave(self->fd));
	ASSERT_EQ(0, ls_join(self->fd, LS_CASUPD));
	fd2 = rdl_open_joined(LS_CASUPD);
	ASSERT_LE(0, fd2);
	check_compat(_metadata, self->fd, fd2, LS_CASUPD, true, false);
	close(fd2);
}

/* Conversions in the update lockspace @ls; see compat[] for @bakery. */
static void check_convert(struct __test_metadata *_metadata, int fd,
			  const char *ls, bool bakery)
{
	struct rdlock_convert_req cv;
	int fd2, i, ret, status;
	__u32 hu, hs, h;
	char what[96];
	pid_t pid;
	double t;

	ASSERT_EQ(0, ls_join(fd, ls));
	fd2 = rdl_open_joined(ls);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rdl_ls_lock(fd, "conv", RDLOCK_LOCK_UP, 0, 0, &hu));

	cv = uapi_valid_convert;
	cv.handle = hu;
	run_field_cases(_metadata, fd, RDLOCK_IOC_CONVERT, &cv, sizeof(cv),
			uapi_convert_cases, ARRAY_SIZE(uapi_convert_cases),
			"CONVERT", 0);
	EXPECT_EQ(RDLOCK_LOCK_UP, rdl_ls_mode(fd, hu));
	expect_err(_metadata, rdl_ls_convert(fd, 0xffffffff, RDLOCK_LOCK_EX, 0, 0),
		   ENOENT, "CONVERT unknown handle");
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_UP, 0, 0),
		   EALREADY, "CONVERT UP to UP");
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_SH, 0, 0),
		   EOPNOTSUPP, "CONVERT UP to SH");
	EXPECT_EQ(0, rdl_ls_unlock(fd, hu));

	/* A reader first; the update lock is granted beside it at once. */
	ASSERT_EQ(0, rdl_ls_lock(fd2, "conv", RDLOCK_LOCK_SH, 0, 0, &hs));
	snprintf(what, sizeof(what), "%s: TRY UP beside a reader", ls);
	expect_err(_metadata, rdl_ls_lock(fd, "conv", RDLOCK_LOCK_UP, RDLOCK_LKF_TRY,
					  0, &hu), 0, what);
	ASSERT_NE(0, hu);
	/* The upgrade waits for the reader: fails, and keeps UP. */
	t = rdl_now();
	snprintf(what, sizeof(what), "%s: TRY CONVERT UP to EX, reader ahead", ls);
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, RDLOCK_LKF_TRY,
					     0), EAGAIN, what);
	EXPECT_GT(2.0, rdl_now() - t);
	EXPECT_EQ(RDLOCK_LOCK_UP, rdl_ls_mode(fd, hu));
	t = rdl_now();
	snprintf(what, sizeof(what), "%s: CONVERT UP to EX, 300 ms, reader ahead",
		 ls);
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, 0, 300),
		   ETIMEDOUT, what);
	t = rdl_now() - t;
	EXPECT_LE(0.29, t);
	EXPECT_GT(10.0, t);
	EXPECT_EQ(RDLOCK_LOCK_UP, rdl_ls_mode(fd, hu));
	/* Still one update holder, and later readers as compat[] says. */
	snprintf(what, sizeof(what), "%s: TRY UP beside UP after a failed upgrade",
		 ls);
	expect_err(_metadata, rdl_ls_lock(fd2, "conv", RDLOCK_LOCK_UP,
					  RDLOCK_LKF_TRY, 0, &h), EAGAIN, what);
	snprintf(what, sizeof(what), "%s: TRY SH beside UP after a failed upgrade",
		 ls);
	h = 0;
	expect_err(_metadata, rdl_ls_lock(fd2, "conv", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h),
		   bakery ? EAGAIN : 0, what);
	if (h)
		EXPECT_EQ(0, rdl_ls_unlock(fd2, h));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, hs));

	snprintf(what, sizeof(what), "%s: CONVERT UP to EX, reader gone", ls);
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, 0, 5000), 0,
		   what);
	EXPECT_EQ(RDLOCK_LOCK_EX, rdl_ls_mode(fd, hu));
	expect_err(_metadata, rdl_ls_lock(fd2, "conv", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h), EAGAIN,
		   "TRY SH while upgraded");
	expect_err(_metadata, rdl_ls_lock(fd2, "conv", RDLOCK_LOCK_UP,
					  RDLOCK_LKF_TRY, 0, &h), EAGAIN,
		   "TRY UP while upgraded");
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, 0, 0),
		   EALREADY, "CONVERT upgraded to EX");
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_SH, 0, 0),
		   EOPNOTSUPP, "CONVERT upgraded to SH");
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_UP, 0, 0), 0,
		   "CONVERT upgraded back to UP");
	EXPECT_EQ(RDLOCK_LOCK_UP, rdl_ls_mode(fd, hu));
	/* And up again with TRY, nobody in the way. */
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, RDLOCK_LKF_TRY,
					     0), 0, "TRY CONVERT UP to EX, nobody there");
	EXPECT_EQ(RDLOCK_LOCK_EX, rdl_ls_mode(fd, hu));
	EXPECT_EQ(0, rdl_ls_unlock(fd, hu));
	expect_err(_metadata, rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, 0, 0), ENOENT,
		   "CONVERT after UNLOCK");
	/* Not TRY: the failed TRYs' tickets may still be finishing. */
	expect_err(_metadata, rdl_ls_lock(fd2, "conv", RDLOCK_LOCK_EX, 0, 5000, &h),
		   0, "LOCK EX after the update holder left");
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h));

	/* Plain shared and exclusive locks do not convert. */
	ASSERT_EQ(0, rdl_ls_lock(fd, "conv", RDLOCK_LOCK_SH, 0, 0, &h));
	expect_err(_metadata, rdl_ls_convert(fd, h, RDLOCK_LOCK_EX, 0, 0),
		   EOPNOTSUPP, "CONVERT SH to EX");
	expect_err(_metadata, rdl_ls_convert(fd, h, RDLOCK_LOCK_UP, 0, 0),
		   EOPNOTSUPP, "CONVERT SH to UP");
	expect_err(_metadata, rdl_ls_convert(fd, h, RDLOCK_LOCK_SH, 0, 0),
		   EALREADY, "CONVERT SH to SH");
	EXPECT_EQ(RDLOCK_LOCK_SH, rdl_ls_mode(fd, h));
	EXPECT_EQ(0, rdl_ls_unlock(fd, h));
	ASSERT_EQ(0, rdl_ls_lock(fd, "conv", RDLOCK_LOCK_EX, 0, 0, &h));
	expect_err(_metadata, rdl_ls_convert(fd, h, RDLOCK_LOCK_SH, 0, 0),
		   EOPNOTSUPP, "CONVERT EX to SH");
	expect_err(_metadata, rdl_ls_convert(fd, h, RDLOCK_LOCK_UP, 0, 0),
		   EOPNOTSUPP, "CONVERT EX to UP");
	expect_err(_metadata, rdl_ls_convert(fd, h, RDLOCK_LOCK_EX, 0, 0),
		   EALREADY, "CONVERT EX to EX");
	EXPECT_EQ(RDLOCK_LOCK_EX, rdl_ls_mode(fd, h));
	EXPECT_EQ(0, rdl_ls_unlock(fd, h));

	/*
	 * A lock whose convert waits is busy: another CONVERT or an UNLOCK
	 * of it fails with EBUSY and changes nothing. The child converts
	 * through the same open file; the parent's TRY probes fail with
	 * EAGAIN (the reader is ahead) until the child's convert is in.
	 */
	ASSERT_EQ(0, rdl_ls_lock(fd2, "conv", RDLOCK_LOCK_SH, 0, 5000, &hs));
	ASSERT_EQ(0, rdl_ls_lock(fd, "conv", RDLOCK_LOCK_UP, 0, 5000, &hu));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		do
			ret = rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, 0, 60000);
		while (ret == EBUSY);
		_exit(ret);
	}
	for (i = 0; i < 3000; i++) {
		ret = rdl_ls_convert(fd, hu, RDLOCK_LOCK_EX, RDLOCK_LKF_TRY, 0);
		if (ret != EAGAIN)
			break;
		usleep(10000);
	}
	snprintf(what, sizeof(what), "%s: CONVERT while a convert waits", ls);
	expect_err(_metadata, ret, EBUSY, what);
	snprintf(what, sizeof(what), "%s: UNLOCK while a convert waits", ls);
	expect_err(_metadata, rdl_ls_unlock(fd, hu), EBUSY, what);
	EXPECT_EQ(RDLOCK_LOCK_UP, rdl_ls_mode(fd, hu));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, hs));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	snprintf(what, sizeof(what), "%s: the waiting CONVERT, reader gone", ls);
	expect_err(_metadata, WEXITSTATUS(status), 0, what);
	EXPECT_EQ(RDLOCK_LOCK_EX, rdl_ls_mode(fd, hu));
	EXPECT_EQ(0, rdl_ls_unlock(fd, hu));
	close(fd2);
	EXPECT_EQ(0, ls_leave(fd));
}

TEST_F_TIMEOUT(uapi, ls_convert, SETUP_S + 120)
{
	need_ls(_metadata, self->fd, self->ip, 1U << SH_UPD | 1U << SH_CASUPD);

	check_convert(_metadata, self->fd, LS_UPD, true);
	check_convert(_metadata, self->fd, LS_CASUPD, false);
}

/* Leaving, closing and dying release what a file holds. */
TEST_F_TIMEOUT(uapi, ls_release, SETUP_S + 120)
{
	int fd2, status;
	long long waits;
	__u32 h1, h2, h;
	pid_t pid;
	double t;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN);

	/* LEAVE releases every lock of the file. */
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ls_join(self->fd, LS_PLAIN));
	ASSERT_EQ(0, rdl_ls_lock(fd2, "rel1", RDLOCK_LOCK_EX, 0, 0, &h1));
	ASSERT_EQ(0, rdl_ls_lock(fd2, "rel2", RDLOCK_LOCK_SH, 0, 0, &h2));
	EXPECT_EQ(0, ls_leave(fd2));
	expect_err(_metadata, rdl_ls_unlock(fd2, h1), EBADFD, "UNLOCK after LEAVE");
	expect_err(_metadata, rdl_ls_lock(self->fd, "rel1", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h), 0,
		   "TRY EX of a name the leaving file held EX");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	expect_err(_metadata, rdl_ls_lock(self->fd, "rel2", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h), 0,
		   "TRY EX of a name the leaving file held SH");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));

	/* Closing does too. */
	ASSERT_EQ(0, ls_join(fd2, LS_PLAIN));
	ASSERT_EQ(0, rdl_ls_lock(fd2, "rel1", RDLOCK_LOCK_EX, 0, 0, &h1));
	expect_err(_metadata, rdl_ls_lock(fd2, "rel1", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h2), EAGAIN,
		   "TRY EX from the file holding EX");
	close(fd2);
	/* Not TRY: the failed TRY's ticket may still be finishing. */
	expect_err(_metadata, rdl_ls_lock(self->fd, "rel1", RDLOCK_LOCK_EX, 0, 5000,
					  &h), 0,
		   "LOCK EX after the holder closed its file");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));

	/* A waiter killed by a fatal signal ends its wait and leaves no trace. */
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "rel1", RDLOCK_LOCK_EX, 0, 0, &h));
	waits = rdl_debugfs_counter("lockspaces/" LS_PLAIN "/stats", "waits");
	ASSERT_LE(0, waits);
	pid = fork_waiter("rel1", RDLOCK_LOCK_EX, false);
	ASSERT_LT(0, pid);
	/* Kill it once it holds a ticket and waits (the lockspace counts it). */
	t = rdl_now() + 30;
	while (rdl_debugfs_counter("lockspaces/" LS_PLAIN "/stats", "waits") ==
	       waits && rdl_now() < t)
		usleep(1000);
	ASSERT_EQ(waits + 1,
		  rdl_debugfs_counter("lockspaces/" LS_PLAIN "/stats", "waits"));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	t = rdl_now();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		TH_LOG("waiter status 0x%x: not killed while waiting", status);
	}
	EXPECT_GT(10.0, rdl_now() - t);
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	expect_err(_metadata, rdl_ls_lock(fd2, "rel1", RDLOCK_LOCK_EX, 0, 5000, &h),
		   0, "LOCK EX after the killed waiter");
	close(fd2);
}

/* In a child: count a check that failed, with what it got. */
#define CHILD_EXPECT(want, call, what) do {				\
	int got_ = (call), want_ = (want);				\
									\
	if (got_ != want_) {						\
		fprintf(stderr, "# %s as nobody: got %s, expected %s\n",\
			what, ename(got_), ename(want_));		\
		fails++;						\
	}								\
} while (0)

#define LS_PLAIN_STATS	"lockspaces/" LS_PLAIN "/stats"

/* user_finishing_max while ls_try_bound runs. */
#define USER_FINISHING	4

/* Counter @key of @uid's account in debugfs "users"; -1 without one. */
static long long user_counter(unsigned int uid, const char *key)
{
	char name[64];

	snprintf(name, sizeof(name), "user %u %s", uid, key);
	return rdl_debugfs_counter("users", name);
}

/*
 * Nobody's TRY requests of the held name in lockspace @ls each leave a
 * ticket finishing until USER_FINISHING, then TRY and a timed LOCK are
 * refused (EBUSY) before they take one; a LOCK without a limit is not.
 * Exit status: the number of failed checks.
 */
static int finishing_try_child(const char *ls)
{
	int fails = 0, fd, i;
	char what[64];
	__u32 h;

	if (as_nobody())
		return 100;
	fd = rdl_open_joined(ls);
	if (fd < 0)
		return 101;
	for (i = 1; i <= USER_FINISHING; i++) {
		snprintf(what, sizeof(what), "TRY %d of the held name", i);
		CHILD_EXPECT(EAGAIN, rdl_ls_lock(fd, "bound", RDLOCK_LOCK_SH,
						 RDLOCK_LKF_TRY, 0, &h), what);
	}
	CHILD_EXPECT(EBUSY, rdl_ls_lock(fd, "bound", RDLOCK_LOCK_SH,
					RDLOCK_LKF_TRY, 0, &h),
		     "TRY with the user's quota used up");
	CHILD_EXPECT(EBUSY, rdl_ls_lock(fd, "other", RDLOCK_LOCK_SH, 0, 1, &h),
		     "timed LOCK of another name with the quota used up");
	/* Without a limit: granted (another name, so it does not wait). */
	CHILD_EXPECT(0, rdl_ls_lock(fd, "other", RDLOCK_LOCK_SH, 0, 0, &h),
		     "LOCK without a limit with the quota used up");
	CHILD_EXPECT(0, rdl_ls_unlock(fd, h), "UNLOCK");
	close(fd);
	return fails;
}

/* Nobody's LOCK of @name without a limit: exit status 0 if it got @want. */
static int finishing_lock_child(const char *name, int want)
{
	int fails = 0, fd;
	__u32 h;

	if (as_nobody())
		return 100;
	fd = rdl_open_joined(LS_PLAIN);
	if (fd < 0)
		return 101;
	CHILD_EXPECT(want, rdl_ls_lock(fd, name, RDLOCK_LOCK_SH, 0, 0, &h),
		     "LOCK without a limit");
	close(fd);
	return fails;
}

/*
 * Each user's timed out, TRY and killed waiters leave tickets finishing
 * in the background, bounded per user (user_finishing_max): beyond it
 * that user's TRY and timed LOCKs get EBUSY before they take a ticket,
 * and once its killed waiters' tickets fill it, its LOCKs without a limit
 * too; other users' locks are not refused. Closing every file does not
 * start the bound afresh.
 */
TEST_F_TIMEOUT(uapi, ls_try_bound, SETUP_S + 120)
{
	long long waits, ls_refused, refused;
	pid_t pid, blocked[USER_FINISHING];
	int i, status, fd3;
	unsigned int was = 0;
	__u32 h, h2;
	double t;
	FILE *f;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN);

	f = fopen(FINISHING_PARAM, "r");
	ASSERT_NE(NULL, f) {
		TH_LOG("%s: %s", FINISHING_PARAM, strerror(errno));
	}
	ASSERT_EQ(1, fscanf(f, "%u", &was));
	fclose(f);
	ASSERT_LT(0, was);
	/* Taken when nobody opens a file: it must have none open yet. */
	ASSERT_GE(0, user_counter(NOBODY, "files"));
	ASSERT_GE(0, user_counter(NOBODY, "finishing"));
	ASSERT_GE(0, user_counter(NOBODY, "finishing_killed"));
	refused = user_counter(NOBODY, "busy_refusals");
	if (refused < 0)
		refused = 0;
	user_finishing_was = was;
	ASSERT_EQ(0, rdl_write_u32(FINISHING_PARAM, USER_FINISHING));
	ls_refused = rdl_debugfs_counter(LS_PLAIN_STATS, "busy_refusals");
	ASSERT_LE(0, ls_refused);

	ASSERT_EQ(0, ls_join(self->fd, LS_PLAIN));
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "bound", RDLOCK_LOCK_EX, 0, 0, &h));
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(finishing_try_child(LS_PLAIN));
	EXPECT_EQ(0, child_fails(pid));
	/* Its file is closed, its tickets still finishing: counted still. */
	EXPECT_EQ(USER_FINISHING, user_counter(NOBODY, "finishing"));
	EXPECT_EQ(USER_FINISHING, user_counter(NOBODY, "finishing_max"));
	EXPECT_EQ(refused + 2, user_counter(NOBODY, "busy_refusals"));
	EXPECT_EQ(0, user_counter(NOBODY, "files"));

	/*
	 * Another user is not refused: root, whose CAP_SYS_RESOURCE counts it
	 * in the lockspace's bound (of its kernel users) instead.
	 */
	expect_err(_metadata, rdl_ls_lock(self->fd, "bound", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h2), EAGAIN,
		   "root's TRY of the held name while nobody's quota is used up");
	expect_err(_metadata, rdl_ls_lock(self->fd, "other", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h2), 0,
		   "root's TRY of another name while nobody's quota is used up");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h2));
	EXPECT_EQ(1, rdl_debugfs_counter(LS_PLAIN_STATS, "finishing"));
	EXPECT_GE(0, user_counter(0, "finishing"));
	EXPECT_EQ(ls_refused,
		  rdl_debugfs_counter(LS_PLAIN_STATS, "busy_refusals"));

	/* Killed waiters: once their tickets fill it, no wait of nobody's. */
	waits = rdl_debugfs_counter(LS_PLAIN_STATS, "waits");
	ASSERT_LE(0, waits);
	for (i = 0; i < USER_FINISHING; i++) {
		blocked[i] = fork_waiter("bound", RDLOCK_LOCK_SH, true);
		ASSERT_LT(0, blocked[i]);
	}
	/* Killed once each holds a ticket and waits (the lockspace counts). */
	t = rdl_now() + 30;
	while (rdl_debugfs_counter(LS_PLAIN_STATS, "waits") <
	       waits + USER_FINISHING && rdl_now() < t)
		usleep(1000);
	ASSERT_EQ(waits + USER_FINISHING,
		  rdl_debugfs_counter(LS_PLAIN_STATS, "waits"));
	for (i = 0; i < USER_FINISHING; i++) {
		ASSERT_EQ(0, kill(blocked[i], SIGKILL));
		ASSERT_EQ(blocked[i], waitpid(blocked[i], &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}
	EXPECT_EQ(USER_FINISHING, user_counter(NOBODY, "finishing_killed"));
	refused = user_counter(NOBODY, "busy_refusals");
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(finishing_lock_child("other", EBUSY));
	EXPECT_EQ(0, child_fails(pid)) {
		TH_LOG("nobody's LOCK without a limit, %d killed waiters' tickets finishing",
		       USER_FINISHING);
	}
	EXPECT_EQ(refused + 1, user_counter(NOBODY, "busy_refusals"));
	/* Root's waits are not nobody's. */
	expect_err(_metadata, rdl_ls_lock(self->fd, "other", RDLOCK_LOCK_SH,
					  0, 0, &h2), 0,
		   "root's LOCK without a limit while nobody's killed fill its quota");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h2));

	/* The holder leaves: every abandoned ticket finishes, room is back. */
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	t = rdl_now() + 60;
	while ((user_counter(NOBODY, "finishing") ||
		user_counter(NOBODY, "finishing_killed") ||
		rdl_debugfs_counter(LS_PLAIN_STATS, "finishing")) &&
	       rdl_now() < t)
		usleep(10000);
	EXPECT_EQ(0, user_counter(NOBODY, "finishing"));
	EXPECT_EQ(0, user_counter(NOBODY, "finishing_killed"));
	EXPECT_EQ(0, rdl_debugfs_counter(LS_PLAIN_STATS, "finishing"));
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(finishing_lock_child("bound", 0));
	EXPECT_EQ(0, child_fails(pid)) {
		TH_LOG("nobody's LOCK once its tickets finished");
	}
	expect_err(_metadata, rdl_ls_lock(self->fd, "bound", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h2), 0,
		   "TRY EX once the abandoned tickets finished");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h2));

	/* Flat CQL: its given-up waiters' entries count the same way. */
	ASSERT_EQ(0, ls_create(self->fd, LS_QCQL, RDLOCK_PROTO_CQL, 512, 0, 0,
			       0, 0666));
	fd3 = rdl_open_joined(LS_QCQL);
	ASSERT_LE(0, fd3);
	ASSERT_EQ(0, rdl_ls_lock(fd3, "bound", RDLOCK_LOCK_EX, 0, 0, &h));
	/* Its account went with its last file, its tickets finished. */
	EXPECT_EQ(-1, user_counter(NOBODY, "files"));
	refused = 0;
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(finishing_try_child(LS_QCQL));
	EXPECT_EQ(0, child_fails(pid)) {
		TH_LOG("in a CQL lockspace");
	}
	EXPECT_EQ(USER_FINISHING, user_counter(NOBODY, "finishing"));
	EXPECT_EQ(refused + 2, user_counter(NOBODY, "busy_refusals"));
	EXPECT_EQ(0, rdl_ls_unlock(fd3, h));
	t = rdl_now() + 60;
	while (user_counter(NOBODY, "finishing") && rdl_now() < t)
		usleep(10000);
	EXPECT_EQ(0, user_counter(NOBODY, "finishing"));
	expect_err(_metadata, rdl_ls_lock(fd3, "bound", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h2), 0,
		   "CQL TRY EX once the abandoned entries finished");
	EXPECT_EQ(0, rdl_ls_unlock(fd3, h2));
	close(fd3);
	/* Kept with no file; freed at another user's last close. */
	EXPECT_EQ(0, user_counter(NOBODY, "files"));
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (as_user(NOBODY - 1))
			_exit(100);
		close(open_dev());
		_exit(0);
	}
	EXPECT_EQ(0, child_fails(pid));
	EXPECT_EQ(-1, user_counter(NOBODY, "files"));
	t = rdl_now() + 10;
	while ((i = ls_remove(self->fd, LS_QCQL)) == EBUSY && rdl_now() < t)
		usleep(20000);
	EXPECT_EQ(0, i);
	EXPECT_EQ(0, rdl_write_u32(FINISHING_PARAM, was));
	user_finishing_was = 0;
}

/* One file holds at most RDLOCK_FILE_LOCKS_MAX locks; close frees them. */
TEST_F_TIMEOUT(uapi, ls_file_locks_max, SETUP_S + 300)
{
	__u32 h, first = 0, i;
	int fd2;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN);

	ASSERT_EQ(0, ls_join(self->fd, LS_PLAIN));
	for (i = 0; i < RDLOCK_FILE_LOCKS_MAX; i++) {
		ASSERT_EQ(0, rdl_ls_lock(self->fd, "many", RDLOCK_LOCK_SH,
					 RDLOCK_LKF_TRY, 0, &h))
			TH_LOG("shared lock %u of %u", i + 1,
			       RDLOCK_FILE_LOCKS_MAX);
		if (!i)
			first = h;
	}
	expect_err(_metadata, rdl_ls_lock(self->fd, "many", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h), ENOLCK,
		   "one lock more than RDLOCK_FILE_LOCKS_MAX");
	expect_err(_metadata, rdl_ls_lock(self->fd, "another", RDLOCK_LOCK_SH,
					  0, 0, &h), ENOLCK,
		   "a waiting lock of another name, file full");
	/* Another file of the same process is not affected. */
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	expect_err(_metadata, rdl_ls_lock(fd2, "many", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h), 0,
		   "another file's shared lock");
	close(fd2);
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, first));
	expect_err(_metadata, rdl_ls_lock(self->fd, "many", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h), 0,
		   "a lock again once one is unlocked");
	expect_err(_metadata, rdl_ls_lock(self->fd, "many", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &h), ENOLCK,
		   "full again");
	/* Leaving releases all of them: an exclusive TRY gets in at once. */
	EXPECT_EQ(0, ls_leave(self->fd));
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	expect_err(_metadata, rdl_ls_lock(fd2, "many", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h), 0,
		   "TRY EX once the full file left");
	close(fd2);
}

/* A lockspace of 2 slots holds one name in use per node at once. */
TEST_F_TIMEOUT(uapi, ls_names_full, SETUP_S + 30)
{
	__u32 ha, hb, h;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_TINY);

	ASSERT_EQ(0, ls_join(self->fd, LS_TINY));
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "a", RDLOCK_LOCK_SH, 0, 0, &ha));
	expect_err(_metadata, rdl_ls_lock(self->fd, "b", RDLOCK_LOCK_SH, 0, 0, &hb),
		   ENOSPC, "LOCK a 2nd name, 1 name per node");
	expect_err(_metadata, rdl_ls_lock(self->fd, "b", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &hb), ENOSPC,
		   "TRY LOCK a 2nd name, 1 name per node");
	expect_err(_metadata, rdl_ls_lock(self->fd, "a", RDLOCK_LOCK_SH, 0, 0, &h), 0,
		   "LOCK the held name again");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, ha));
	/* An unused name's entry is reclaimed for the next (design.rst). */
	expect_err(_metadata, rdl_ls_lock(self->fd, "b", RDLOCK_LOCK_EX, 0, 0, &hb),
		   0, "LOCK the 2nd name once the 1st is unused");
	expect_err(_metadata, rdl_ls_lock(self->fd, "a", RDLOCK_LOCK_SH,
					  RDLOCK_LKF_TRY, 0, &ha), ENOSPC,
		   "TRY LOCK the 1st name while the 2nd is held");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, hb));
	expect_err(_metadata, rdl_ls_lock(self->fd, "a", RDLOCK_LOCK_EX, 0, 0, &ha),
		   0, "LOCK the 1st name again once the 2nd is unused");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, ha));
}

struct perm_case {
	const char *ls;
	__u32 uid, gid, mode, flags;
	int join, sh, ex, up;	/* errno as nobody */
};

/* Permissions as for a file: the owner's, group's or others' bits. */
static const struct perm_case perm_cases[] = {
	{ "perm_none", 0, 0, 0, RDLOCK_LS_UPDATE, EACCES, 0, 0, 0 },
	{ "perm_root_rw", 0, 0, 0660, RDLOCK_LS_UPDATE, EACCES, 0, 0, 0 },
	{ "perm_ro", 0, 0, 0444, RDLOCK_LS_UPDATE, 0, 0, EACCES, EACCES },
	{ "perm_wo", 0, 0, 0222, RDLOCK_LS_UPDATE, 0, 0, 0, 0 },
	{ "perm_rw", 0, 0, 0666, RDLOCK_LS_UPDATE, 0, 0, 0, 0 },
	{ "perm_owner", NOBODY, 0, 0600, RDLOCK_LS_UPDATE, 0, 0, 0, 0 },
	{ "perm_owner_ro", NOBODY, 0, 0466, RDLOCK_LS_UPDATE, 0, 0, EACCES,
	  EACCES },
	{ "perm_owner_none", NOBODY, 0, 0066, RDLOCK_LS_UPDATE, EACCES, 0, 0, 0 },
	{ "perm_group", 0, NOBODY, 0060, RDLOCK_LS_UPDATE, 0, 0, 0, 0 },
	{ "perm_group_none", 0, NOBODY, 0606, RDLOCK_LS_UPDATE, EACCES, 0, 0, 0 },
	{ "perm_ro_plain", 0, 0, 0444, 0, 0, 0, EACCES, EOPNOTSUPP },
};

/* Exit status: the number of failed checks. */
static int ls_unprivileged_child(void)
{
	struct rdlock_ls_create c;
	int fails = 0, fd;
	char what[96];
	size_t i;
	__u32 h;

	if (as_nobody()) {
		fprintf(stderr, "# cannot drop privileges: %s\n", strerror(errno));
		return 100;
	}
	fd = open_dev();
	if (fd < 0)
		return 100;
	rdl_ls_create_init(&c, "perm_new", RDLOCK_PROTO_BAKERY, 2, 0, 0666);
	CHILD_EXPECT(EPERM, rdl_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c), "LS_CREATE");
	CHILD_EXPECT(EPERM, ls_remove(fd, "perm_rw"), "LS_REMOVE");
	for (i = 0; i < ARRAY_SIZE(perm_cases); i++) {
		const struct perm_case *p = &perm_cases[i];
		int got;

		snprintf(what, sizeof(what), "JOIN %s", p->ls);
		got = ls_join(fd, p->ls);
		CHILD_EXPECT(p->join, got, what);
		if (got) {
			CHILD_EXPECT(EBADFD, ls_leave(fd), "LEAVE after EACCES");
			continue;
		}
		snprintf(what, sizeof(what), "LOCK SH in %s", p->ls);
		got = rdl_ls_lock(fd, "p", RDLOCK_LOCK_SH, RDLOCK_LKF_TRY, 0, &h);
		CHILD_EXPECT(p->sh, got, what);
		if (!got)
			CHILD_EXPECT(0, rdl_ls_unlock(fd, h), "UNLOCK");
		snprintf(what, sizeof(what), "LOCK EX in %s", p->ls);
		got = rdl_ls_lock(fd, "p", RDLOCK_LOCK_EX, RDLOCK_LKF_TRY, 0, &h);
		CHILD_EXPECT(p->ex, got, what);
		if (!got)
			CHILD_EXPECT(0, rdl_ls_unlock(fd, h), "UNLOCK");
		snprintf(what, sizeof(what), "LOCK UP in %s", p->ls);
		got = rdl_ls_lock(fd, "p", RDLOCK_LOCK_UP, RDLOCK_LKF_TRY, 0, &h);
		CHILD_EXPECT(p->up, got, what);
		if (!got)
			CHILD_EXPECT(0, rdl_ls_unlock(fd, h), "UNLOCK");
		CHILD_EXPECT(0, ls_leave(fd), "LEAVE");
	}
	close(fd);
	return fails;
}

TEST_F_TIMEOUT(uapi, ls_unprivileged, SETUP_S + 30)
{
	__u32 h;
	size_t i;
	int status;
	pid_t pid;

	need_ready(_metadata, self->fd, self->ip);

	for (i = 0; i < ARRAY_SIZE(perm_cases); i++) {
		const struct perm_case *p = &perm_cases[i];

		ASSERT_EQ(0, ls_create(self->fd, p->ls, RDLOCK_PROTO_BAKERY, 2,
				       p->flags, p->uid, p->gid, p->mode)) {
			TH_LOG("LS_CREATE %s", p->ls);
		}
	}
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(ls_unprivileged_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("%d checks failed as uid/gid %d", WEXITSTATUS(status),
		       NOBODY);
	}
	/* Nobody's calls changed nothing; CAP_SYS_ADMIN bypasses the mode. */
	expect_err(_metadata, ls_remove(self->fd, "perm_new"), ENOENT,
		   "LS_REMOVE of what nobody tried to create");
	ASSERT_EQ(0, ls_join(self->fd, "perm_none"));
	expect_err(_metadata, rdl_ls_lock(self->fd, "p", RDLOCK_LOCK_EX, 0, 0, &h), 0,
		   "root LOCK EX in a mode 0 lockspace");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	EXPECT_EQ(0, ls_leave(self->fd));
	for (i = 0; i < ARRAY_SIZE(perm_cases); i++)
		EXPECT_EQ(0, ls_remove(self->fd, perm_cases[i].ls));
}

/* user_locks_max while ls_user_locks_max runs. */
#define USER_LOCKS	6

/*
 * Nobody's files share USER_LOCKS: 4 plain and 2 DLM locks, then the
 * 7th fails in either file until one is unlocked or a file closed.
 * Exit status: the number of failed checks.
 */
static int user_locks_child(void)
{
	int fails = 0, fa, fb, i;
	char what[64], name[8];
	__u32 h, ha;

	if (as_nobody())
		return 100;
	fa = rdl_open_joined(LS_PLAIN);
	fb = rdl_open_joined(LS_DLM);	/* read-only: NL and PR */
	if (fa < 0 || fb < 0)
		return 101;
	CHILD_EXPECT(0, rdl_ls_lock(fa, "u", RDLOCK_LOCK_SH, RDLOCK_LKF_TRY, 0,
				    &ha), "plain lock 1");
	for (i = 2; i <= 4; i++) {
		snprintf(what, sizeof(what), "plain lock %d", i);
		CHILD_EXPECT(0, rdl_ls_lock(fa, "u", RDLOCK_LOCK_SH,
					    RDLOCK_LKF_TRY, 0, &h), what);
	}
	CHILD_EXPECT(0, rdl_ls_lock(fb, "n5", RDLOCK_LOCK_NL, 0, 0, &h),
		     "DLM lock 5 (NL)");
	CHILD_EXPECT(0, rdl_ls_lock(fb, "p6", RDLOCK_LOCK_PR, 0, 0, &h),
		     "DLM lock 6 (PR)");
	CHILD_EXPECT(ENOLCK, rdl_ls_lock(fa, "u", RDLOCK_LOCK_SH,
					 RDLOCK_LKF_TRY, 0, &h),
		     "plain lock 7");
	CHILD_EXPECT(ENOLCK, rdl_ls_lock(fa, "w", RDLOCK_LOCK_SH, 0, 0, &h),
		     "plain lock 7 without TRY");
	CHILD_EXPECT(ENOLCK, rdl_ls_lock(fb, "p7", RDLOCK_LOCK_PR, 0, 0, &h),
		     "DLM lock 7");
	/* An unlock in one file lets one more in, in the other. */
	CHILD_EXPECT(0, rdl_ls_unlock(fa, ha), "UNLOCK plain lock 1");
	CHILD_EXPECT(0, rdl_ls_lock(fb, "p7", RDLOCK_LOCK_PR, 0, 0, &h),
		     "DLM lock 7 after an UNLOCK");
	CHILD_EXPECT(ENOLCK, rdl_ls_lock(fa, "u", RDLOCK_LOCK_SH,
					 RDLOCK_LKF_TRY, 0, &h),
		     "plain lock 7 after the DLM one");
	/* Closing returns the DLM file's 3; the plain one still holds 3. */
	close(fb);
	fb = rdl_open_joined(LS_DLM);
	if (fb < 0)
		return fails + 1;
	for (i = 4; i <= 6; i++) {
		snprintf(what, sizeof(what), "DLM lock %d after a close", i);
		snprintf(name, sizeof(name), "n%d", i);
		CHILD_EXPECT(0, rdl_ls_lock(fb, name, RDLOCK_LOCK_NL, 0, 0, &h),
			     what);
	}
	CHILD_EXPECT(ENOLCK, rdl_ls_lock(fb, "n7", RDLOCK_LOCK_NL, 0, 0, &h),
		     "DLM lock 7 after a close");
	close(fb);
	close(fa);
	return fails;
}

/*
 * The files one user opened hold at most user_locks_max locks together,
 * native and DLM (ENOLCK, as RDLOCK_FILE_LOCKS_MAX for one file); an
 * opener with CAP_SYS_RESOURCE (root here) is not bounded.
 */
TEST_F_TIMEOUT(uapi, ls_user_locks_max, SETUP_S + 30)
{
	unsigned int was = 0;
	int fr, i, status;
	pid_t pid;
	FILE *f;
	__u32 h;

	need_ls(_metadata, self->fd, self->ip,
		1U << SH_PLAIN | 1U << SH_DLM);

	f = fopen(USER_LOCKS_PARAM, "r");
	ASSERT_NE(NULL, f) {
		TH_LOG("%s: %s", USER_LOCKS_PARAM, strerror(errno));
	}
	ASSERT_EQ(1, fscanf(f, "%u", &was));
	fclose(f);
	ASSERT_LT(0, was);
	user_locks_was = was;
	ASSERT_EQ(0, rdl_write_u32(USER_LOCKS_PARAM, USER_LOCKS));

	/* Root holds twice as many, beside nobody's. */
	fr = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fr);
	for (i = 0; i < 2 * USER_LOCKS; i++)
		ASSERT_EQ(0, rdl_ls_lock(fr, "root", RDLOCK_LOCK_SH,
					 RDLOCK_LKF_TRY, 0, &h))
			TH_LOG("root's lock %d with user_locks_max %d", i + 1,
			       USER_LOCKS);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(user_locks_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("%d checks failed as uid %d", WEXITSTATUS(status),
		       NOBODY);
	}
	close(fr);
	EXPECT_EQ(0, rdl_write_u32(USER_LOCKS_PARAM, was));
	user_locks_was = 0;
}

/* ------------------------------------------------------------------ */
/* DLM lockspaces (RDLOCK_LS_DLM): modes, conversions, events          */

#define EVENT_WAIT_MS	10000

static int dlm_create(int fd, const char *name, __u32 mode)
{
	struct rdlock_ls_create c;

	rdl_ls_create_init(&c, name, 0, 0, RDLOCK_LS_DLM, mode);
	return rdl_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c);
}

/* Exactly one event queued on @fd: @handle blocking @mode. */
static void expect_one_event(struct __test_metadata *_metadata, int fd,
			     __u32 handle, __u32 mode, const char *what)
{
	struct rdlock_event ev[4];
	ssize_t n;

	EXPECT_EQ(1, rdl_readable(fd, EVENT_WAIT_MS)) {
		TH_LOG("%s: no event within %d ms", what, EVENT_WAIT_MS);
	}
	memset(ev, 0xa5, sizeof(ev));
	n = rdl_read_events(fd, ev, sizeof(ev));
	EXPECT_EQ((ssize_t)sizeof(ev[0]), n) {
		TH_LOG("%s: read %zd bytes", what, n);
	}
	EXPECT_EQ(RDLOCK_EVENT_BLOCKING, ev[0].type);
	EXPECT_EQ(handle, ev[0].handle);
	EXPECT_EQ(mode, ev[0].mode) {
		TH_LOG("%s: event mode %u", what, ev[0].mode);
	}
	EXPECT_EQ(0, ev[0].pad);
	EXPECT_EQ(0, ev[0].reserved[0]);
	EXPECT_EQ(0, ev[0].reserved[1]);
	EXPECT_EQ(0, rdl_readable(fd, 0)) {
		TH_LOG("%s: still readable after the event", what);
	}
}

TEST_F_TIMEOUT(uapi, ls_dlm_create, SETUP_S + 30)
{
	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN);

	run_field_cases(_metadata, self->fd, RDLOCK_IOC_LS_CREATE,
			&uapi_valid_ls_create_dlm,
			sizeof(uapi_valid_ls_create_dlm), uapi_ls_create_dlm_cases,
			ARRAY_SIZE(uapi_ls_create_dlm_cases), "LS_CREATE DLM,", 0);
	expect_err(_metadata, ls_join(self->fd, LS_DLM), ENOENT,
		   "JOIN after the rejected LS_CREATEs");

	expect_err(_metadata, dlm_create(self->fd, LS_DLM, 0644), 0,
		   "LS_CREATE DLM");
	expect_err(_metadata, dlm_create(self->fd, LS_DLM, 0644), EEXIST,
		   "LS_CREATE DLM twice");
	expect_err(_metadata, ls_create(self->fd, LS_DLM, RDLOCK_PROTO_CASLOCK,
					LS_SLOTS, 0, 0, 0, 0666), EEXIST,
		   "LS_CREATE plain with a DLM lockspace's name");
	expect_err(_metadata, dlm_create(self->fd, LS_PLAIN, 0666), EEXIST,
		   "LS_CREATE DLM with a plain lockspace's name");
	/* The rdlock lockspace behind it is not the uapi's to join. */
	expect_err(_metadata, ls_join(self->fd, "dlm." LS_DLM), ENOENT,
		   "JOIN the DLM layer's own lockspace");
}

/*
 * A list ioctl (LS_LIST, STATS, LOCKS) whose valid argument @arg, with
 * something to list, has its capacity at *@count and its array at
 * *@entries: an array the call cannot write (at 1, at a kernel address,
 * in a read-only page) is EFAULT, the capacity left as it was.
 */
static void check_list_efault(struct __test_metadata *_metadata, int fd,
			      unsigned long req, void *arg, __u32 *count,
			      __u64 *entries, const char *what)
{
	static const char *const where[] = {
		"at 1", "at a kernel address", "in a read-only page",
	};
	char msg[96], *ro;
	size_t i;

	ro = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	for (i = 0; i < ARRAY_SIZE(where); i++) {
		*count = 2;
		*entries = i == 0 ? 1 : i == 1 ? (__u64)(unsigned long)KERNEL_PTR :
			   (__u64)(unsigned long)ro;
		snprintf(msg, sizeof(msg), "%s, array %s", what, where[i]);
		expect_err(_metadata, rdl_ioctl(fd, req, arg), EFAULT, msg);
		EXPECT_EQ(2, *count);
	}
	ASSERT_EQ(0, munmap(ro, sysconf(_SC_PAGESIZE)));
}

/* LS_LIST into @e (capacity @cap); 0 or the errno, the count in *@count. */
static int ls_list(int fd, struct rdlock_ls_info *e, __u32 cap, __u32 *count)
{
	struct rdlock_ls_list l = {
		.version = RDLOCK_UAPI_VERSION,
		.count = cap,
		.entries = (__u64)(unsigned long)e,
	};
	int ret = rdl_ioctl(fd, RDLOCK_IOC_LS_LIST, &l);

	if (!ret)
		*count = l.count;
	return ret;
}

/* The entry of @e (@n of them) named @name, or NULL. */
static const struct rdlock_ls_info *ls_info_find(const struct rdlock_ls_info *e,
						 __u32 n, const char *name)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (!strncmp(e[i].name, name, RDLOCK_LS_NAME_MAX))
			return &e[i];
	return NULL;
}

/* A NUL-terminated, NUL-padded lockspace name. */
static bool ls_name_padded(const char *name)
{
	size_t len = strnlen(name, RDLOCK_LS_NAME_MAX);

	if (!len || len == RDLOCK_LS_NAME_MAX)
		return false;
	while (len < RDLOCK_LS_NAME_MAX)
		if (name[len++])
			return false;
	return true;
}

/*
 * A list ioctl @req (LS_LIST, STATS) as nobody, in a child: it succeeds
 * with its argument @arg, whose count field @count comes back @want. The
 * child's exit status is the number of failed checks.
 */
static void expect_list_as_nobody(struct __test_metadata *_metadata,
				  unsigned long req, void *arg, __u32 *count,
				  __u32 want, const char *what)
{
	int fails = 0, fd;
	pid_t pid;

	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (as_nobody())
			_exit(100);
		fd = open_dev();
		if (fd < 0)
			_exit(100);
		CHILD_EXPECT(0, rdl_ioctl(fd, req, arg), what);
		if (*count != want) {
			fprintf(stderr, "# %s as nobody: count %u, not %u\n",
				what, *count, want);
			fails++;
		}
		_exit(fails);
	}
	EXPECT_EQ(0, child_fails(pid)) {
		TH_LOG("%s: checks failed as uid/gid %d", what, NOBODY);
	}
}

/* The dlm_slots module parameter: a DLM lockspace's slots. */
#define DLM_SLOTS_PARAM	"/sys/module/rdlock/parameters/dlm_slots"

TEST_F_TIMEOUT(uapi, ls_list, SETUP_S + 30)
{
	struct rdlock_ls_info e[16], one[2], ff;
	const struct rdlock_ls_info *p;
	struct rdlock_ls_list l;
	unsigned int dlm_slots = 16384;
	__u32 n = 0, n1 = 0, i, j;
	FILE *f;
	int jfd;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN | 1U << SH_DLM);
	f = fopen(DLM_SLOTS_PARAM, "r");
	if (f) {
		EXPECT_EQ(1, fscanf(f, "%u", &dlm_slots));
		fclose(f);
	}
	/* Another file joined to the plain one: one more user of it. */
	jfd = open_dev();
	ASSERT_LE(0, jfd);
	expect_err(_metadata, ls_join(jfd, LS_PLAIN), 0, "JOIN " LS_PLAIN);

	memset(e, 0xa5, sizeof(e));
	expect_err(_metadata, ls_list(self->fd, e, ARRAY_SIZE(e), &n), 0,
		   "LS_LIST");
	ASSERT_LE(2, n);
	ASSERT_GE(ARRAY_SIZE(e), n);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(ls_name_padded(e[i].name)) {
			TH_LOG("entry %u: name not NUL-padded", i);
		}
		EXPECT_TRUE(ls_name_padded(e[i].core_name)) {
			TH_LOG("entry %u (%.32s): core name not NUL-padded", i,
			       e[i].name);
		}
		EXPECT_GE(RDLOCK_LS_KIND_KERNEL, e[i].kind);
		EXPECT_GE(RDLOCK_LS_STATE_LOST, e[i].state);
		EXPECT_EQ(0, e[i].pad);
		EXPECT_EQ(0, e[i].reserved[0]);
		EXPECT_EQ(0, e[i].reserved[1]);
		for (j = i + 1; j < n; j++)
			EXPECT_NE(0, strncmp(e[i].name, e[j].name,
					     RDLOCK_LS_NAME_MAX)) {
				TH_LOG("%.32s listed twice", e[i].name);
			}
	}
	/* Nothing written past the count. */
	memset(&ff, 0xa5, sizeof(ff));
	if (n < ARRAY_SIZE(e))
		EXPECT_EQ(0, memcmp(&e[n], &ff, sizeof(ff)));

	p = ls_info_find(e, n, LS_PLAIN);
	ASSERT_NE(NULL, p) {
		TH_LOG("%s not listed", LS_PLAIN);
	}
	EXPECT_STREQ(LS_PLAIN, p->core_name);
	EXPECT_EQ(RDLOCK_LS_KIND_PLAIN, p->kind);
	EXPECT_EQ(RDLOCK_LS_STATE_OPEN, p->state);
	EXPECT_EQ(RDLOCK_PROTO_BAKERY, p->proto);
	EXPECT_EQ(0, p->flags);
	EXPECT_EQ(LS_SLOTS, p->slots);
	EXPECT_EQ(0, p->uid);
	EXPECT_EQ(0, p->gid);
	EXPECT_EQ(0666, p->mode);
	EXPECT_EQ(2, p->users);		/* the creation, jfd */

	p = ls_info_find(e, n, LS_DLM);
	ASSERT_NE(NULL, p) {
		TH_LOG("%s not listed", LS_DLM);
	}
	EXPECT_STREQ("dlm." LS_DLM, p->core_name);
	EXPECT_EQ(RDLOCK_LS_KIND_DLM, p->kind);
	EXPECT_EQ(RDLOCK_LS_STATE_OPEN, p->state);
	EXPECT_EQ(RDLOCK_PROTO_CASLOCK, p->proto);
	EXPECT_EQ(RDLOCK_LS_DLM, p->flags);
	EXPECT_EQ(dlm_slots, p->slots);
	EXPECT_EQ(0, p->uid);
	EXPECT_EQ(0, p->gid);
	EXPECT_EQ(0644, p->mode);
	EXPECT_EQ(0, p->users);
	/* The rdlock lockspace behind it is listed as the DLM one only. */
	EXPECT_EQ(NULL, ls_info_find(e, n, "dlm." LS_DLM));

	/* Capacity 1: the first entry, and the whole count. */
	memset(one, 0xa5, sizeof(one));
	expect_err(_metadata, ls_list(self->fd, one, 1, &n1), 0,
		   "LS_LIST, capacity 1");
	EXPECT_EQ(n, n1);
	EXPECT_EQ(0, memcmp(&one[0], &e[0], sizeof(one[0])));
	EXPECT_EQ(0, memcmp(&one[1], &ff, sizeof(ff)));
	/* Capacity 0: the count alone, no array needed. */
	n1 = 0;
	expect_err(_metadata, ls_list(self->fd, NULL, 0, &n1), 0,
		   "LS_LIST, capacity 0");
	EXPECT_EQ(n, n1);

	/* Refused arguments (uapi_cases.h); accepted ones only report. */
	RUN_CASES(self->fd, RDLOCK_IOC_LS_LIST, ls_list, ls_list, "LS_LIST", 0);
	/* A structure the call cannot read or write, and an array. */
	l = uapi_valid_ls_list;
	check_efault(_metadata, self->fd, RDLOCK_IOC_LS_LIST, &l, sizeof(l),
		     "LS_LIST");
	check_list_efault(_metadata, self->fd, RDLOCK_IOC_LS_LIST, &l,
			  &l.count, &l.entries, "LS_LIST");

	/* Any opener may list, as STATUS. */
	l = uapi_valid_ls_list;
	l.count = ARRAY_SIZE(e);
	l.entries = (__u64)(unsigned long)e;
	expect_list_as_nobody(_metadata, RDLOCK_IOC_LS_LIST, &l, &l.count, n,
			      "LS_LIST");
	close(jfd);
}

/* @name (RDLOCK_LS_DLM_NAME_LEN bytes) is a string, NUL-padded. */
static bool dlm_name_padded(const char *name)
{
	size_t len = strnlen(name, RDLOCK_LS_DLM_NAME_LEN);

	if (len == RDLOCK_LS_DLM_NAME_LEN)
		return false;
	while (len < RDLOCK_LS_DLM_NAME_LEN)
		if (name[len++])
			return false;
	return true;
}

/*
 * LS_LIST with RDLOCK_LS_LIST_DLM_NAMES: a DLM lockspace's name is its
 * own, a plain one's empty, the entries are those of a plain LS_LIST, and
 * nothing is written past the count; an unwritable names array faults.
 */
TEST_F_TIMEOUT(uapi, ls_list_dlm_names, SETUP_S + 30)
{
	char names[17][RDLOCK_LS_DLM_NAME_LEN], ff[RDLOCK_LS_DLM_NAME_LEN];
	struct rdlock_ls_info e[16], plain[16];
	struct rdlock_ls_list l = uapi_valid_ls_list;
	__u32 n, n0 = 0, i;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN | 1U << SH_DLM);
	memset(names, 0xa5, sizeof(names));
	memset(ff, 0xa5, sizeof(ff));
	l.flags = RDLOCK_LS_LIST_DLM_NAMES;
	l.count = ARRAY_SIZE(e);
	l.entries = (__u64)(unsigned long)e;
	l.dlm_names = (__u64)(unsigned long)names;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_LIST, &l), 0,
		   "LS_LIST, DLM_NAMES");
	n = l.count;
	ASSERT_LE(2, n);
	ASSERT_GE(ARRAY_SIZE(e), n);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(dlm_name_padded(names[i])) {
			TH_LOG("entry %u (%.32s): DLM name not NUL-padded", i,
			       e[i].name);
		}
		if (e[i].kind == RDLOCK_LS_KIND_DLM)
			EXPECT_EQ(0, strncmp(e[i].name, names[i],
					     RDLOCK_LS_DLM_NAME_LEN));
		if (e[i].kind == RDLOCK_LS_KIND_PLAIN)
			EXPECT_EQ('\0', names[i][0]);
		if (!strcmp(e[i].name, LS_DLM))
			EXPECT_STREQ(LS_DLM, names[i]);
	}
	EXPECT_EQ(0, memcmp(names[n], ff, sizeof(ff)));
	/* The entries are a plain LS_LIST's (same order, same fields). */
	expect_err(_metadata, ls_list(self->fd, plain, ARRAY_SIZE(plain), &n0),
		   0, "LS_LIST");
	EXPECT_EQ(n, n0);
	for (i = 0; i < n && i < n0; i++)
		EXPECT_EQ(0, strncmp(e[i].name, plain[i].name,
				     RDLOCK_LS_NAME_MAX));

	/* Names the call cannot write. */
	l = uapi_valid_ls_list;
	l.flags = RDLOCK_LS_LIST_DLM_NAMES;
	l.count = ARRAY_SIZE(e);
	l.entries = (__u64)(unsigned long)e;
	l.dlm_names = 8;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LS_LIST, &l),
		   EFAULT, "LS_LIST, unwritable dlm_names");
}

/* STATS into @e (capacity @cap); 0 or the errno, the count in *@count. */
static int stats_get(int fd, struct rdlock_stat *e, __u32 cap, __u32 *count)
{
	struct rdlock_stats st = {
		.version = RDLOCK_UAPI_VERSION,
		.count = cap,
		.entries = (__u64)(unsigned long)e,
	};
	int ret = rdl_ioctl(fd, RDLOCK_IOC_STATS, &st);

	if (!ret)
		*count = st.count;
	return ret;
}

/* Counter @name of lockspace @ls ("": none) and @node in @e, or NULL. */
static const struct rdlock_stat *stat_find(const struct rdlock_stat *e,
					   __u32 n, const char *name,
					   const char *ls, __u32 node)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (!strncmp(e[i].name, name, RDLOCK_STAT_NAME_MAX) &&
		    !strncmp(e[i].lockspace, ls, RDLOCK_LS_NAME_MAX) &&
		    e[i].node == node)
			return &e[i];
	return NULL;
}

/* Counter @name's value (lockspace @ls, no node), or ~0 when absent. */
static __u64 stat_value(const struct rdlock_stat *e, __u32 n,
			const char *name, const char *ls)
{
	const struct rdlock_stat *p = stat_find(e, n, name, ls,
						RDLOCK_STAT_NO_NODE);

	return p ? p->value : ~0ULL;
}

/* A counter's name: [a-z0-9_]+, NUL-terminated and NUL-padded. */
static bool stat_name_ok(const char *name)
{
	size_t i, len = strnlen(name, RDLOCK_STAT_NAME_MAX);

	if (!len || len == RDLOCK_STAT_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!islower(name[i]) && !isdigit(name[i]) && name[i] != '_')
			return false;
	while (len < RDLOCK_STAT_NAME_MAX)
		if (name[len++])
			return false;
	return true;
}

#define STATS_CAP	1024

TEST_F_TIMEOUT(uapi, stats, SETUP_S + 30)
{
	static struct rdlock_stat e[STATS_CAP], e2[STATS_CAP], one[2];
	struct rdlock_stat ff;
	struct rdlock_stats l;
	struct snap s;
	__u32 n = 0, n2 = 0, n1 = 0, i, j, h;
	int fd2;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN | 1U << SH_DLM);
	memset(e, 0xa5, sizeof(e));
	expect_err(_metadata, stats_get(self->fd, e, STATS_CAP, &n), 0,
		   "STATS");
	ASSERT_GE(STATS_CAP, n);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(stat_name_ok(e[i].name)) {
			TH_LOG("entry %u: bad name %.40s", i, e[i].name);
		}
		EXPECT_TRUE(!e[i].lockspace[0] ||
			    ls_name_padded(e[i].lockspace)) {
			TH_LOG("entry %u (%.40s): lockspace not NUL-padded", i,
			       e[i].name);
		}
		EXPECT_TRUE(e[i].node == RDLOCK_STAT_NO_NODE ||
			    e[i].node < RDLOCK_MAX_NODES);
		EXPECT_EQ(0, e[i].flags & ~RDLOCK_STAT_GAUGE);
		/* Only a lockspace's counters name one, only a link's a node. */
		EXPECT_EQ(!strncmp(e[i].name, "ls_", 3), !!e[i].lockspace[0]) {
			TH_LOG("entry %u: %.40s of lockspace '%.32s'", i,
			       e[i].name, e[i].lockspace);
		}
		EXPECT_EQ(!strncmp(e[i].name, "link_", 5),
			  e[i].node != RDLOCK_STAT_NO_NODE) {
			TH_LOG("entry %u: %.40s of node %u", i, e[i].name,
			       e[i].node);
		}
		for (j = i + 1; j < n; j++)
			EXPECT_FALSE(!strcmp(e[i].name, e[j].name) &&
				     !strcmp(e[i].lockspace, e[j].lockspace) &&
				     e[i].node == e[j].node) {
				TH_LOG("%.40s '%.32s' %u listed twice",
				       e[i].name, e[i].lockspace, e[i].node);
			}
	}
	memset(&ff, 0xa5, sizeof(ff));
	if (n < STATS_CAP)
		EXPECT_EQ(0, memcmp(&e[n], &ff, sizeof(ff)));

	/* Each configured node's links, and each lockspace, are counted. */
	ASSERT_EQ(0, snapshot(self->fd, &s));
	for (i = 0; i < s.st.nr_nodes; i++)
		EXPECT_NE(NULL, stat_find(e, n, "link_connects", "",
					  s.nodes[i].node_id)) {
			TH_LOG("no link_connects of node %u",
			       s.nodes[i].node_id);
		}
	EXPECT_NE(NULL, stat_find(e, n, "link_errors", "", NODE));
	EXPECT_NE(~0ULL, stat_value(e, n, "ls_acquisitions", LS_PLAIN));
	EXPECT_NE(~0ULL, stat_value(e, n, "ls_acquisitions", "dlm." LS_DLM));
	EXPECT_NE(~0ULL, stat_value(e, n, "connections_rejected", ""));
	ASSERT_NE(NULL, stat_find(e, n, "ls_users", LS_PLAIN,
				  RDLOCK_STAT_NO_NODE));
	EXPECT_EQ(RDLOCK_STAT_GAUGE,
		  stat_find(e, n, "ls_users", LS_PLAIN,
			    RDLOCK_STAT_NO_NODE)->flags);
	EXPECT_EQ(0, stat_find(e, n, "link_connects", "", NODE)->flags);

	/* One acquisition in the plain lockspace, one DLM lock's life. */
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rdl_ls_lock(fd2, "stats", RDLOCK_LOCK_EX, 0, 0, &h));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h));
	close(fd2);
	fd2 = rdl_open_joined(LS_DLM);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rdl_ls_lock(fd2, "stats", RDLOCK_LOCK_EX, 0, 0, &h));
	EXPECT_EQ(0, rdl_ls_convert(fd2, h, RDLOCK_LOCK_PR, 0, 0));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h));
	close(fd2);
	expect_err(_metadata, stats_get(self->fd, e2, STATS_CAP, &n2), 0,
		   "STATS after the locks");
	EXPECT_EQ(n, n2);
	EXPECT_EQ(stat_value(e, n, "ls_acquisitions", LS_PLAIN) + 1,
		  stat_value(e2, n2, "ls_acquisitions", LS_PLAIN));
	EXPECT_EQ(stat_value(e, n, "dlm_new_ex", "") + 1,
		  stat_value(e2, n2, "dlm_new_ex", ""));
	EXPECT_EQ(stat_value(e, n, "dlm_converts_ex_pr", "") + 1,
		  stat_value(e2, n2, "dlm_converts_ex_pr", ""));
	EXPECT_EQ(stat_value(e, n, "dlm_unlocks_pr", "") + 1,
		  stat_value(e2, n2, "dlm_unlocks_pr", ""));
	EXPECT_EQ(stat_value(e, n, "dlm_unlocks_ex", ""),
		  stat_value(e2, n2, "dlm_unlocks_ex", ""));

	/* Capacity 1: the first entry, and the whole count. */
	memset(one, 0xa5, sizeof(one));
	expect_err(_metadata, stats_get(self->fd, one, 1, &n1), 0,
		   "STATS, capacity 1");
	EXPECT_EQ(n, n1);
	EXPECT_STREQ(e[0].name, one[0].name);
	EXPECT_EQ(0, memcmp(&one[1], &ff, sizeof(ff)));
	n1 = 0;
	expect_err(_metadata, stats_get(self->fd, NULL, 0, &n1), 0,
		   "STATS, capacity 0");
	EXPECT_EQ(n, n1);

	/* Refused arguments (uapi_cases.h); accepted ones only report. */
	RUN_CASES(self->fd, RDLOCK_IOC_STATS, stats, stats, "STATS", 0);
	l = uapi_valid_stats;
	check_efault(_metadata, self->fd, RDLOCK_IOC_STATS, &l, sizeof(l),
		     "STATS");
	check_list_efault(_metadata, self->fd, RDLOCK_IOC_STATS, &l,
			  &l.count, &l.entries, "STATS");

	/* Any opener may read them, as STATUS. */
	l = uapi_valid_stats;
	expect_list_as_nobody(_metadata, RDLOCK_IOC_STATS, &l, &l.count, n,
			      "STATS");
}

/* STATUS gives the name SET_CONFIG set, NUL-padded, where asked. */
TEST_F(uapi, status_name)
{
	static const char *const names[] = { "uapi-name", "abcdefghij.LMN_6",
					     "" };
	char buf[RDLOCK_CLUSTER_NAME_MAX + 1], want[RDLOCK_CLUSTER_NAME_MAX];
	struct rdlock_cluster_config c;
	struct rdlock_status st;
	size_t i;

	need_down(_metadata, self->fd, self->ip, false);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		cfg_init(&c, NODE, self->ip, 0);
		memcpy(c.name, names[i], strlen(names[i]));
		expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c,
			  "SET_CONFIG");
		memset(buf, 0xa5, sizeof(buf));
		memset(&st, 0, sizeof(st));
		st.version = RDLOCK_UAPI_VERSION;
		st.name = (__u64)(unsigned long)buf;
		expect_ok(_metadata, self->fd, RDLOCK_IOC_STATUS, &st,
			  "STATUS with a name buffer");
		memset(want, 0, sizeof(want));
		memcpy(want, names[i], strlen(names[i]));
		EXPECT_EQ(0, memcmp(buf, want, sizeof(want))) {
			TH_LOG("name '%.16s', not '%s'", buf, names[i]);
		}
		/* Exactly RDLOCK_CLUSTER_NAME_MAX bytes written. */
		EXPECT_EQ((char)0xa5, buf[RDLOCK_CLUSTER_NAME_MAX]);
	}
	st.name = (__u64)(unsigned long)KERNEL_PTR;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EFAULT,
	       "STATUS name at a kernel address", true);
	need_down(_metadata, self->fd, self->ip, true);
}

static pid_t dlm_child_lock(const char *name, __u32 mode);

/* LOCKS of @ls into @e (capacity @cap); 0 or the errno, the count in *@n. */
static int locks_get(int fd, const char *ls, struct rdlock_locks_entry *e,
		     __u32 cap, __u32 *n)
{
	struct rdlock_locks l = {
		.version = RDLOCK_UAPI_VERSION,
		.count = cap,
		.entries = (__u64)(unsigned long)e,
	};
	int ret;

	strncpy(l.lockspace, ls, sizeof(l.lockspace) - 1);
	ret = rdl_ioctl(fd, RDLOCK_IOC_LOCKS, &l);
	if (!ret)
		*n = l.count;
	return ret;
}

/*
 * LOCKS of @ls with @flags, of lock @name alone when not NULL; 0 or the
 * errno, the count in *@n, the nodes asked and answered in @nodes[0], [1].
 */
static int locks_query(int fd, const char *ls, __u32 flags, const char *name,
		       struct rdlock_locks_entry *e, __u32 cap, __u32 *n,
		       __u32 *nodes)
{
	struct rdlock_locks l = {
		.version = RDLOCK_UAPI_VERSION,
		.flags = flags,
		.count = cap,
		.entries = (__u64)(unsigned long)e,
		.asked = ~0U,		/* only written */
		.answered = ~0U,
	};
	int ret;

	strncpy(l.lockspace, ls, sizeof(l.lockspace) - 1);
	if (name) {
		l.name = (__u64)(unsigned long)name;
		l.name_len = strlen(name);
	}
	ret = rdl_ioctl(fd, RDLOCK_IOC_LOCKS, &l);
	if (!ret) {
		*n = l.count;
		nodes[0] = l.asked;
		nodes[1] = l.answered;
	}
	return ret;
}

/* The entry of @e (@n of them) for @name in @state, or NULL. */
static const struct rdlock_locks_entry *
locks_find(const struct rdlock_locks_entry *e, __u32 n, const char *name,
	   __u32 state)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (e[i].name_len == strlen(name) &&
		    !memcmp(e[i].name, name, e[i].name_len) &&
		    e[i].state == state)
			return &e[i];
	return NULL;
}

/* Poll LOCKS of @ls until @name has a WAITING entry: 0, or -1 after 20 s. */
static int locks_wait_waiter(int fd, const char *ls, const char *name,
			     struct rdlock_locks_entry *e, __u32 cap, __u32 *n)
{
	double end = rdl_now() + 20;

	while (rdl_now() < end) {
		if (!locks_get(fd, ls, e, cap, n) &&
		    locks_find(e, *n, name, RDLOCK_LOCKS_WAITING))
			return 0;
		usleep(20000);
	}
	return -1;
}

TEST_F_TIMEOUT(uapi, locks, SETUP_S + 60)
{
	static struct rdlock_locks_entry e[64];
	const struct rdlock_locks_entry *g, *w;
	__u32 n = 0, n2 = 0, h, hd, nodes[2];
	struct rdlock_locks l;
	int fd2, fd3, status;
	pid_t pid, dpid;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN | 1U << SH_DLM);

	/* A plain lockspace: this file holds EX, a child waits for it. */
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rdl_ls_lock(fd2, "held", RDLOCK_LOCK_EX, 0, 0, &h));
	pid = fork_waiter("held", RDLOCK_LOCK_SH, false);
	ASSERT_LT(0, pid);
	memset(e, 0xa5, sizeof(e));
	ASSERT_EQ(0, locks_wait_waiter(self->fd, LS_PLAIN, "held", e, 64, &n)) {
		TH_LOG("the child's wait never showed");
	}
	g = locks_find(e, n, "held", RDLOCK_LOCKS_GRANTED);
	w = locks_find(e, n, "held", RDLOCK_LOCKS_WAITING);
	ASSERT_NE(NULL, g);
	EXPECT_EQ(RDLOCK_LOCK_EX, g->mode);
	EXPECT_EQ(RDLOCK_LOCKS_NONE, g->rqmode);
	EXPECT_EQ(getpid(), g->owner);
	EXPECT_EQ(NODE, g->node);
	EXPECT_EQ(NODE, g->home);	/* a one-node cluster */
	EXPECT_EQ(0, g->flags);
	EXPECT_EQ(0, g->hash);
	EXPECT_EQ(0, g->reserved[0] | g->reserved[1] | g->pad);
	EXPECT_EQ(RDLOCK_LOCKS_NONE, w->mode);
	EXPECT_EQ(RDLOCK_LOCK_SH, w->rqmode);
	EXPECT_EQ(pid, w->owner);
	/* Nothing written past the count. */
	EXPECT_EQ(0xa5a5a5a5U, e[n].name_len);
	/* By name: its holder and waiter alone; CLUSTER asks nobody here. */
	EXPECT_EQ(0, locks_query(self->fd, LS_PLAIN, RDLOCK_LOCKS_QUERY_CLUSTER,
				 "held", e, 64, &n2, nodes));
	EXPECT_EQ(2, n2);
	EXPECT_EQ(0, nodes[0] | nodes[1]);
	EXPECT_NE(NULL, locks_find(e, n2, "held", RDLOCK_LOCKS_GRANTED));
	EXPECT_NE(NULL, locks_find(e, n2, "held", RDLOCK_LOCKS_WAITING));
	EXPECT_EQ(0, locks_query(self->fd, LS_PLAIN, 0, "hel", e, 64, &n2,
				 nodes));
	EXPECT_EQ(0, n2);
	EXPECT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h));
	close(fd2);

	/* A DLM lockspace: PR held here, a child's EX waits. */
	fd3 = rdl_open_joined(LS_DLM);
	ASSERT_LE(0, fd3);
	ASSERT_EQ(0, rdl_ls_lock(fd3, "dheld", RDLOCK_LOCK_PR, 0, 0, &hd));
	dpid = dlm_child_lock("dheld", RDLOCK_LOCK_EX);
	ASSERT_LT(0, dpid);
	ASSERT_EQ(0, locks_wait_waiter(self->fd, LS_DLM, "dheld", e, 64, &n)) {
		TH_LOG("the DLM child's wait never showed");
	}
	g = locks_find(e, n, "dheld", RDLOCK_LOCKS_GRANTED);
	w = locks_find(e, n, "dheld", RDLOCK_LOCKS_WAITING);
	ASSERT_NE(NULL, g);
	EXPECT_EQ(RDLOCK_LOCK_PR, g->mode);
	EXPECT_EQ(RDLOCK_LOCKS_NONE, g->rqmode);
	EXPECT_EQ(RDLOCK_LOCKS_NONE, g->home);
	EXPECT_NE(0, g->id);
	EXPECT_NE(0, g->hash);
	EXPECT_EQ(RDLOCK_LOCKS_NONE, w->mode);
	EXPECT_EQ(RDLOCK_LOCK_EX, w->rqmode);
	EXPECT_EQ(g->hash, w->hash);
	EXPECT_NE(g->id, w->id);
	EXPECT_EQ(0, w->flags & RDLOCK_LOCKS_NOTICE);
	/* The same through its rdlock lockspace's name, as a kernel user's. */
	EXPECT_EQ(0, locks_get(self->fd, "dlm." LS_DLM, NULL, 0, &n2));
	EXPECT_EQ(n, n2);
	/*
	 * Every node's: this one-node cluster asks no other; by name, the
	 * holder and the waiter, whose count a capacity of 1 still gives.
	 */
	EXPECT_EQ(0, locks_query(self->fd, LS_DLM, RDLOCK_LOCKS_QUERY_CLUSTER,
				 NULL, e, 64, &n2, nodes));
	EXPECT_EQ(n, n2);
	EXPECT_EQ(0, nodes[0] | nodes[1]);
	memset(e, 0xa5, sizeof(e));
	EXPECT_EQ(0, locks_query(self->fd, LS_DLM, RDLOCK_LOCKS_QUERY_CLUSTER,
				 "dheld", e, 1, &n2, nodes));
	EXPECT_EQ(2, n2);
	EXPECT_EQ(5, e[0].name_len);
	EXPECT_EQ(0, memcmp(e[0].name, "dheld", 5));
	EXPECT_EQ(0xa5a5a5a5U, e[1].name_len);
	EXPECT_EQ(0, locks_query(self->fd, LS_DLM, 0, "dheld", e, 64, &n2,
				 nodes));
	EXPECT_EQ(2, n2);
	EXPECT_NE(NULL, locks_find(e, n2, "dheld", RDLOCK_LOCKS_GRANTED));
	EXPECT_NE(NULL, locks_find(e, n2, "dheld", RDLOCK_LOCKS_WAITING));
	EXPECT_EQ(0, locks_query(self->fd, LS_DLM, RDLOCK_LOCKS_QUERY_CLUSTER,
				 "dhel", e, 64, &n2, nodes));
	EXPECT_EQ(0, n2);
	/* The name is read from the caller's memory. */
	l = uapi_valid_locks;
	strncpy(l.lockspace, LS_DLM, sizeof(l.lockspace));
	l.name = (__u64)(unsigned long)KERNEL_PTR;
	l.name_len = 5;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCKS, &l), EFAULT,
		   "LOCKS with an unreadable name");
	EXPECT_EQ(0, kill(dpid, SIGKILL));
	EXPECT_EQ(dpid, waitpid(dpid, &status, 0));
	EXPECT_EQ(0, rdl_ls_unlock(fd3, hd));
	close(fd3);

	/* Capacity 0: the count alone. */
	expect_err(_metadata, locks_get(self->fd, LS_PLAIN, NULL, 0, &n), 0,
		   "LOCKS, capacity 0");
	expect_err(_metadata, locks_get(self->fd, "uapi_no_such", e, 64, &n),
		   ENOENT, "LOCKS of no lockspace");

	/* Refused arguments (uapi_cases.h); accepted ones only report. */
	RUN_CASES(self->fd, RDLOCK_IOC_LOCKS, locks, locks, "LOCKS", 0);
	l = uapi_valid_locks;
	check_efault(_metadata, self->fd, RDLOCK_IOC_LOCKS, &l, sizeof(l),
		     "LOCKS");
	fd2 = rdl_open_joined(LS_PLAIN);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rdl_ls_lock(fd2, "held", RDLOCK_LOCK_EX, 0, 0, &h));
	check_list_efault(_metadata, self->fd, RDLOCK_IOC_LOCKS, &l,
			  &l.count, &l.entries, "LOCKS");
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h));
	close(fd2);

	/* Only an administrator: lock names tell what others do. */
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int cfd;

		if (as_nobody())
			_exit(100);
		cfd = open_dev();
		if (cfd < 0)
			_exit(101);
		_exit(locks_get(cfd, LS_PLAIN, NULL, 0, &n) == EPERM ? 0 : 1);
	}
	EXPECT_EQ(0, child_fails(pid));
}

TEST_F_TIMEOUT(uapi, ls_dlm_rejects, SETUP_S + 30)
{
	struct rdlock_lock_req l;
	struct rdlock_event ev;
	__u32 h, h2;
	int fd2;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_PLAIN | 1U << SH_DLM);

	/* No DLM lockspace joined: no events. */
	expect_err(_metadata, (int)-rdl_read_events(self->fd, &ev, sizeof(ev)),
		   EBADFD, "read before JOIN");
	EXPECT_EQ(0, rdl_readable(self->fd, 0));
	ASSERT_EQ(0, ls_join(self->fd, LS_PLAIN));
	expect_err(_metadata, (int)-rdl_read_events(self->fd, &ev, sizeof(ev)),
		   EBADFD, "read in a plain lockspace");
	expect_err(_metadata, rdl_ls_lock(self->fd, "n", RDLOCK_LOCK_NL, 0, 0,
					  NULL), EOPNOTSUPP,
		   "LOCK NL in a plain lockspace");
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "n", RDLOCK_LOCK_SH, 0, 0, &h));
	expect_err(_metadata, rdl_ls_convert(self->fd, h, RDLOCK_LOCK_NL, 0, 0),
		   EOPNOTSUPP, "CONVERT SH->NL in a plain lockspace");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	EXPECT_EQ(0, ls_leave(self->fd));

	ASSERT_EQ(0, ls_join(self->fd, LS_DLM));
	expect_err(_metadata, ls_join(self->fd, LS_DLM), EBUSY, "JOIN twice");
	expect_err(_metadata, ls_remove(self->fd, LS_DLM), EBUSY,
		   "LS_REMOVE while joined");
	EXPECT_EQ(0, rdl_readable(self->fd, 0));
	expect_err(_metadata, (int)-rdl_read_events(self->fd, &ev, sizeof(ev)),
		   EAGAIN, "read with nothing queued");
	expect_err(_metadata, (int)-rdl_read_events(self->fd, &ev, sizeof(ev) - 1),
		   EINVAL, "read of less than a record");

	/* Validation first, then what a DLM lockspace refuses. */
	run_field_cases(_metadata, self->fd, RDLOCK_IOC_LOCK,
			&uapi_valid_lock, sizeof(l), uapi_lock_cases,
			ARRAY_SIZE(uapi_lock_cases), "DLM LOCK", 0);
	expect_err(_metadata, rdl_ls_lock(self->fd, "n", RDLOCK_LOCK_UP, 0, 0,
					  NULL), EOPNOTSUPP, "LOCK UP");
	expect_err(_metadata, rdl_ls_lock(self->fd, "n", RDLOCK_LOCK_MODE_NR, 0,
					  0, NULL), EINVAL, "LOCK mode 4");
	rdl_lock_init(&l, "n", RDLOCK_LOCK_PR, 0, 0);
	l.lease_slots = 2;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), EINVAL,
		   "LOCK with lease_slots");
	memset(l.name, 'n', sizeof(l.name));
	l.lease_slots = 0;
	l.name_len = RDLOCK_RES_NAME_MAX;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), EINVAL,
		   "LOCK with a 64-byte name");
	l.name[RDLOCK_RES_NAME_MAX - 1] = 0;
	l.name_len = RDLOCK_RES_NAME_MAX - 1;
	expect_err(_metadata, rdl_ioctl(self->fd, RDLOCK_IOC_LOCK, &l), 0,
		   "LOCK with a 63-byte name");
	h = l.handle;
	EXPECT_NE(0, h);

	/* Handles: unknown, converted to what it is, to UP. */
	expect_err(_metadata, rdl_ls_convert(self->fd, h + 100, RDLOCK_LOCK_EX,
					     0, 0), ENOENT,
		   "CONVERT of an unknown handle");
	expect_err(_metadata, rdl_ls_unlock(self->fd, h + 100), ENOENT,
		   "UNLOCK of an unknown handle");
	expect_err(_metadata, rdl_ls_mode(self->fd, h + 100), -ENOENT,
		   "QUERY of an unknown handle");
	expect_err(_metadata, rdl_ls_convert(self->fd, h, RDLOCK_LOCK_PR, 0, 0),
		   EALREADY, "CONVERT PR->PR");
	expect_err(_metadata, rdl_ls_convert(self->fd, h, RDLOCK_LOCK_UP, 0, 0),
		   EOPNOTSUPP, "CONVERT PR->UP");
	expect_err(_metadata, rdl_ls_convert(self->fd, h, RDLOCK_LOCK_EX,
					     RDLOCK_LKF_TRY, 10), EINVAL,
		   "CONVERT TRY with a timeout");
	EXPECT_EQ(RDLOCK_LOCK_PR, rdl_ls_mode(self->fd, h));
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	expect_err(_metadata, rdl_ls_convert(self->fd, h, RDLOCK_LOCK_EX, 0, 0),
		   ENOENT, "CONVERT of an unlocked lock");
	expect_err(_metadata, rdl_ls_unlock(self->fd, h), ENOENT,
		   "UNLOCK twice");

	/* Nothing rejected was taken: another file gets EX at once. */
	fd2 = rdl_open_joined(LS_DLM);
	ASSERT_LE(0, fd2);
	expect_err(_metadata, rdl_ls_lock(fd2, "victim", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &h2), 0,
		   "TRY EX after the rejected LOCKs");
	EXPECT_EQ(0, rdl_ls_unlock(fd2, h2));
	close(fd2);
	EXPECT_EQ(0, ls_leave(self->fd));
	expect_err(_metadata, (int)-rdl_read_events(self->fd, &ev, sizeof(ev)),
		   EBADFD, "read after LEAVE");
}

/* Every conversion NL<->PR<->EX on one lock, alone: granted at once. */
TEST_F_TIMEOUT(uapi, ls_dlm_convert, SETUP_S + 30)
{
	static const __u32 seq[] = {
		RDLOCK_LOCK_PR, RDLOCK_LOCK_EX, RDLOCK_LOCK_PR, RDLOCK_LOCK_NL,
		RDLOCK_LOCK_EX, RDLOCK_LOCK_NL, RDLOCK_LOCK_PR, RDLOCK_LOCK_EX,
	};
	struct rdlock_query q;
	char what[64];
	__u32 h, prev = RDLOCK_LOCK_NL;
	size_t i;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_DLM);

	ASSERT_EQ(0, ls_join(self->fd, LS_DLM));
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "conv", RDLOCK_LOCK_NL, 0, 0, &h));
	ASSERT_EQ(0, rdl_ls_query(self->fd, h, &q));
	EXPECT_EQ(RDLOCK_LOCK_NL, q.mode);
	EXPECT_EQ(4, q.name_len);
	EXPECT_EQ(0, memcmp(q.name, "conv", 4));
	EXPECT_EQ(0xffffffffU, q.home_node);
	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		snprintf(what, sizeof(what), "CONVERT %u->%u (step %zu)", prev,
			 seq[i], i);
		expect_err(_metadata, rdl_ls_convert(self->fd, h, seq[i],
						     i % 2 ? RDLOCK_LKF_TRY : 0,
						     0), 0, what);
		EXPECT_EQ((int)seq[i], rdl_ls_mode(self->fd, h));
		prev = seq[i];
	}
	EXPECT_EQ(0, rdl_readable(self->fd, 0)) {
		TH_LOG("an event with nobody else in the lockspace");
	}
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	EXPECT_EQ(0, ls_leave(self->fd));
}

/*
 * Fork a child that joins LS_DLM and takes @name in @mode within @ms (0:
 * no limit); its exit status is the errno.
 */
static pid_t dlm_child_lock_within(const char *name, __u32 mode, __u32 ms)
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	fd = rdl_open_joined(LS_DLM);
	if (fd < 0)
		_exit(100);
	_exit(rdl_ls_lock(fd, name, mode, 0, ms, NULL));
}

static pid_t dlm_child_lock(const char *name, __u32 mode)
{
	return dlm_child_lock_within(name, mode, 0);
}

/* The child's exit status within @s seconds, or -1. */
static int child_status(pid_t pid, int s)
{
	double end = rdl_now() + s;
	int status;

	while (rdl_now() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * TRY EX on @name until granted, at most 10 s: the DLM layer finishes a
 * cancelled request's wait in the background (dlm-api.rst, "Cancel"), so
 * the name is free only once it has.
 */
static int try_ex_within(int fd, const char *name, __u32 *h)
{
	double end = rdl_now() + 10;
	int got;

	while ((got = rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, RDLOCK_LKF_TRY, 0,
				  h)) == EAGAIN && rdl_now() < end)
		usleep(20000);
	return got;
}

TEST_F_TIMEOUT(uapi, ls_dlm_events, SETUP_S + 120)
{
	struct rdlock_event ev[2];
	__u32 h, hb, hb2;
	int fd2, fd3;
	pid_t pid;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_DLM);

	ASSERT_EQ(0, ls_join(self->fd, LS_DLM));
	fd2 = rdl_open_joined(LS_DLM);
	ASSERT_LE(0, fd2);
	fd3 = rdl_open_joined(LS_DLM);
	ASSERT_LE(0, fd3);

	/* Compatibility, NOQUEUE: no wait, and no event for the holder. */
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "ev", RDLOCK_LOCK_PR, 0, 0, &h));
	expect_err(_metadata, rdl_ls_lock(fd2, "ev", RDLOCK_LOCK_PR,
					  RDLOCK_LKF_TRY, 0, &hb), 0,
		   "TRY PR beside PR");
	expect_err(_metadata, rdl_ls_lock(fd3, "ev", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &hb2), EAGAIN,
		   "TRY EX beside PR");
	expect_err(_metadata, rdl_ls_lock(fd3, "ev", RDLOCK_LOCK_NL,
					  RDLOCK_LKF_TRY, 0, &hb2), 0,
		   "TRY NL beside PR");
	expect_err(_metadata, rdl_ls_convert(fd3, hb2, RDLOCK_LOCK_EX,
					     RDLOCK_LKF_TRY, 0), EAGAIN,
		   "TRY NL->EX beside PR");
	EXPECT_EQ(RDLOCK_LOCK_NL, rdl_ls_mode(fd3, hb2));
	EXPECT_EQ(0, rdl_readable(self->fd, 200));
	EXPECT_EQ(0, rdl_readable(fd2, 0));

	/* A waiter that gives up still caused one event per blocking lock. */
	expect_err(_metadata, rdl_ls_convert(fd3, hb2, RDLOCK_LOCK_EX, 0, 300),
		   ETIMEDOUT, "NL->EX beside two PR holders, 300 ms");
	EXPECT_EQ(RDLOCK_LOCK_NL, rdl_ls_mode(fd3, hb2));
	expect_one_event(_metadata, self->fd, h, RDLOCK_LOCK_EX,
			 "first PR holder");
	expect_one_event(_metadata, fd2, hb, RDLOCK_LOCK_EX,
			 "second PR holder");
	EXPECT_EQ(0, rdl_readable(fd3, 0));
	/* Both give back, as a lock cache does on the event. */
	EXPECT_EQ(0, rdl_ls_unlock(fd2, hb));
	EXPECT_EQ(0, rdl_ls_unlock(fd3, hb2));
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	ASSERT_EQ(0, try_ex_within(fd2, "ev", &hb));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, hb));

	/*
	 * Coalescing: three waits on one lock, one event, the strongest.
	 * Each check below uses a name of its own: the cancelled waits of
	 * one (finishing in the background) cannot reach the next.
	 */
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "ev2", RDLOCK_LOCK_EX, 0, 0, &h));
	expect_err(_metadata, rdl_ls_lock(fd2, "ev2", RDLOCK_LOCK_PR, 0, 200,
					  NULL), ETIMEDOUT, "PR beside EX");
	expect_err(_metadata, rdl_ls_lock(fd3, "ev2", RDLOCK_LOCK_EX, 0, 200,
					  NULL), ETIMEDOUT, "EX beside EX");
	expect_err(_metadata, rdl_ls_lock(fd2, "ev2", RDLOCK_LOCK_PR, 0, 200,
					  NULL), ETIMEDOUT, "PR beside EX again");
	expect_one_event(_metadata, self->fd, h, RDLOCK_LOCK_EX,
			 "three waits merged");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	ASSERT_EQ(0, try_ex_within(fd2, "ev2", &hb));
	EXPECT_EQ(0, rdl_ls_unlock(fd2, hb));

	/* An event the holder no longer causes is dropped: EX->PR. */
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "ev3", RDLOCK_LOCK_EX, 0, 0, &h));
	expect_err(_metadata, rdl_ls_lock(fd2, "ev3", RDLOCK_LOCK_PR, 0, 200,
					  NULL), ETIMEDOUT, "PR beside EX");
	EXPECT_EQ(1, rdl_readable(self->fd, EVENT_WAIT_MS));
	ASSERT_EQ(0, rdl_ls_convert(self->fd, h, RDLOCK_LOCK_PR, 0, 0));
	EXPECT_EQ(0, rdl_readable(self->fd, 0)) {
		TH_LOG("a PR event kept for a PR holder");
	}
	expect_err(_metadata, (int)-rdl_read_events(self->fd, ev, sizeof(ev)),
		   EAGAIN, "read after the event was dropped");

	/* The give-back flow: a waiter, one event, unlock, the grant. */
	pid = dlm_child_lock("ev3", RDLOCK_LOCK_EX);
	ASSERT_LT(0, pid);
	expect_one_event(_metadata, self->fd, h, RDLOCK_LOCK_EX,
			 "PR holder, EX waiter");
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	EXPECT_EQ(0, child_status(pid, 30)) {
		TH_LOG("the EX waiter was not granted after the unlock");
	}
	/* The child's lock went with its file (and the cancelled PR's). */
	expect_err(_metadata, try_ex_within(fd2, "ev3", &hb), 0,
		   "TRY EX after the child exited");

	/* LEAVE gives back every lock: another file gets it at once. */
	ASSERT_EQ(0, rdl_ls_convert(fd2, hb, RDLOCK_LOCK_NL, 0, 0));
	ASSERT_EQ(0, rdl_ls_lock(fd2, "ev4", RDLOCK_LOCK_EX, 0, 0, &hb2));
	EXPECT_EQ(0, ls_leave(fd2));
	expect_err(_metadata, rdl_ls_lock(fd3, "ev4", RDLOCK_LOCK_EX,
					  RDLOCK_LKF_TRY, 0, &hb2), 0,
		   "TRY EX after the holder's LEAVE");
	EXPECT_EQ(0, rdl_ls_unlock(fd3, hb2));
	close(fd2);
	close(fd3);
	EXPECT_EQ(0, ls_leave(self->fd));
}

/*
 * More waiting requests than the DLM layer's workqueue runs at once
 * (WQ_DFL_ACTIVE, 256): none of them keeps a worker while it waits
 * (dlm-api.rst, "Kicks"), so a request on another name is granted,
 * down-converted and unlocked while they wait, the waiters that time out
 * are cancelled while they wait, and the holder's unlock grants the
 * others, PR and EX. Where the build has fault injection the waiters poll
 * only every FLOOD_POLL_MS: the grants come from kicks (and 300 pollers
 * do not take a debug guest's CPU).
 */
#define FLOOD_WAITERS	300
#define FLOOD_TIMEOUT_MS 3000
#define FLOOD_POLL_MS	1000

static bool dlm_counter_reaches(const char *name, long long v, int s)
{
	double end = rdl_now() + s;

	while (rdl_debugfs_counter("dlm", name) < v) {
		if (rdl_now() > end)
			return false;
		usleep(20000);
	}
	return true;
}

/* Waiter @i of the flood: its mode, and whether it times out. */
static __u32 flood_mode(int i)
{
	return i % 5 == 1 ? RDLOCK_LOCK_EX : RDLOCK_LOCK_PR;
}

static bool flood_times_out(int i)
{
	return i % 10 == 3;
}

TEST_F_TIMEOUT(uapi, ls_dlm_flood, SETUP_S + 300)
{
	int i, n, fd2, late = 0, timed = 0, want_timed = 0, st;
	pid_t pids[FLOOD_WAITERS];
	long long busy0;
	__u32 h, hc;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_DLM);

	ASSERT_EQ(0, ls_join(self->fd, LS_DLM));
	rdl_debugfs_write(FLOOD_POLL, FLOOD_POLL_MS);
	ASSERT_EQ(0, rdl_ls_lock(self->fd, "hot", RDLOCK_LOCK_EX, 0, 0, &h));
	busy0 = rdl_debugfs_counter("dlm", "try_busy");
	ASSERT_LE(0, busy0);
	for (n = 0; n < FLOOD_WAITERS; n++) {
		pids[n] = dlm_child_lock_within("hot", flood_mode(n),
						flood_times_out(n) ?
						FLOOD_TIMEOUT_MS : 0);
		if (pids[n] < 0)
			break;
		want_timed += flood_times_out(n);
	}
	EXPECT_EQ(FLOOD_WAITERS, n);
	/* Every one waits: its first try found the name busy. */
	EXPECT_TRUE(dlm_counter_reaches("try_busy", busy0 + n, 120)) {
		TH_LOG("%lld of %d requests tried",
		       rdl_debugfs_counter("dlm", "try_busy") - busy0, n);
	}

	fd2 = rdl_open_joined(LS_DLM);
	ASSERT_LE(0, fd2);
	expect_err(_metadata, rdl_ls_lock(fd2, "cold", RDLOCK_LOCK_EX, 0,
					  30000, &hc), 0,
		   "EX on another name beside the waiters, 30 s");
	expect_err(_metadata, rdl_ls_convert(fd2, hc, RDLOCK_LOCK_PR, 0, 30000),
		   0, "EX->PR beside the waiters, 30 s");
	EXPECT_EQ(0, rdl_ls_unlock(fd2, hc));
	close(fd2);

	/* Those with a time limit are cancelled while they wait. */
	for (i = 0; i < n; i++) {
		if (!flood_times_out(i))
			continue;
		st = child_status(pids[i], timed < want_timed ? 60 : 1);
		timed += st == ETIMEDOUT;
		pids[i] = 0;
	}
	EXPECT_EQ(want_timed, timed);
	/* The others get it once the holder gives it back. */
	EXPECT_EQ(0, rdl_ls_unlock(self->fd, h));
	for (i = 0; i < n; i++)
		if (pids[i])
			late += child_status(pids[i], late ? 1 : 120) != 0;
	EXPECT_EQ(0, late) {
		TH_LOG("%d of %d waiters not granted after the unlock", late,
		       n - want_timed);
	}
	rdl_debugfs_write(FLOOD_POLL, 0);
	EXPECT_EQ(0, ls_leave(self->fd));
}

TEST_F_TIMEOUT(uapi, ls_dlm_unprivileged, SETUP_S + 30)
{
	int status;
	pid_t pid;

	need_ls(_metadata, self->fd, self->ip, 1U << SH_DLM);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fails = 0, fd;
		__u32 h;

		if (as_nobody())
			_exit(100);
		fd = rdl_open_joined(LS_DLM);
		if (fd < 0)
			_exit(101);
		CHILD_EXPECT(EACCES, rdl_ls_lock(fd, "p", RDLOCK_LOCK_EX, 0, 0,
						 NULL), "LOCK EX read-only");
		CHILD_EXPECT(0, rdl_ls_lock(fd, "p", RDLOCK_LOCK_NL, 0, 0, &h),
			     "LOCK NL read-only");
		CHILD_EXPECT(0, rdl_ls_convert(fd, h, RDLOCK_LOCK_PR, 0, 0),
			     "CONVERT NL->PR read-only");
		CHILD_EXPECT(EACCES, rdl_ls_convert(fd, h, RDLOCK_LOCK_EX, 0, 0),
			     "CONVERT PR->EX read-only");
		CHILD_EXPECT(EPERM, ls_remove(fd, LS_DLM), "LS_REMOVE");
		close(fd);
		_exit(fails);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, ls_remove(self->fd, LS_DLM));
	expect_err(_metadata, ls_remove(self->fd, LS_DLM), ENOENT,
		   "LS_REMOVE DLM twice");
}

TEST_F_TIMEOUT(uapi, ls_remove, SETUP_S + 30)
{
	int fd2;

	need_ls(_metadata, self->fd, self->ip, SH_ALL);

	ASSERT_EQ(0, ls_create(self->fd, "uapi_rm", RDLOCK_PROTO_CASLOCK, 2, 0,
			       0, 0, 0666));
	ASSERT_EQ(0, ls_join(self->fd, "uapi_rm"));
	expect_err(_metadata, ls_remove(self->fd, "uapi_rm"), EBUSY,
		   "LS_REMOVE while joined");
	EXPECT_EQ(0, ls_leave(self->fd));
	expect_err(_metadata, ls_remove(self->fd, "uapi_rm"), 0,
		   "LS_REMOVE after LEAVE");
	expect_err(_metadata, ls_remove(self->fd, "uapi_rm"), ENOENT,
		   "LS_REMOVE twice");
	expect_err(_metadata, ls_join(self->fd, "uapi_rm"), ENOENT,
		   "JOIN a removed lockspace");

	/*
	 * The cluster still has it: other attributes are refused, the same
	 * ones attach again, with this node's own mode.
	 */
	expect_err(_metadata, ls_create(self->fd, "uapi_rm", RDLOCK_PROTO_BAKERY,
					4, RDLOCK_LS_UPDATE, 0, 0, 0600), EEXIST,
		   "LS_CREATE a removed lockspace with other attributes");
	expect_err(_metadata, ls_create(self->fd, "uapi_rm", RDLOCK_PROTO_CASLOCK,
					2, 0, 0, 0, 0600), 0,
		   "LS_CREATE a removed lockspace again");
	fd2 = rdl_open_joined("uapi_rm");
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, rdl_ls_lock(fd2, "held", RDLOCK_LOCK_EX, 0, 0, NULL));
	expect_err(_metadata, ls_remove(self->fd, "uapi_rm"), EBUSY,
		   "LS_REMOVE while a file holds a lock");
	close(fd2);
	expect_err(_metadata, ls_remove(self->fd, "uapi_rm"), 0,
		   "LS_REMOVE after close");

	EXPECT_EQ(0, ls_remove(self->fd, LS_PLAIN));
	EXPECT_EQ(0, ls_remove(self->fd, LS_UPD));
	EXPECT_EQ(0, ls_remove(self->fd, LS_CAS));
	EXPECT_EQ(0, ls_remove(self->fd, LS_TINY));
	EXPECT_EQ(0, ls_remove(self->fd, LS_CASUPD));
}

/*
 * Down and up again: the cluster's lockspace directory and lock tables
 * start empty. Needs every lockspace of this node removed.
 */
static void restart(struct __test_metadata *_metadata, int fd,
		    const char *ip)
{
	expect_ok(_metadata, fd, RDLOCK_IOC_DOWN, NULL, "DOWN");
	expect_ok(_metadata, fd, RDLOCK_IOC_UP, NULL, "UP");
	ASSERT_EQ(0, wait_ready(fd)) {
		TH_LOG("one-node cluster on %s not ready after %d s", ip,
		       READY_TIMEOUT_S);
	}
}

/* A failed creation changes nothing: a new lockspace still fits. */
TEST_F_TIMEOUT(uapi, ls_enospc, SETUP_S + 2 * READY_TIMEOUT_S)
{
	need_ready(_metadata, self->fd, self->ip);

	restart(_metadata, self->fd, self->ip);
	expect_err(_metadata, ls_create(self->fd, "uapi_huge",
					RDLOCK_PROTO_BAKERY, RDLOCK_LS_SLOTS_MAX,
					0, 0, 0, 0666), ENOSPC,
		   "LS_CREATE 65536 slots");
	expect_err(_metadata, ls_remove(self->fd, "uapi_huge"), ENOENT,
		   "LS_REMOVE after ENOSPC");
	expect_err(_metadata, ls_create(self->fd, "uapi_after_enospc",
					RDLOCK_PROTO_BAKERY, LS_SLOTS, 0, 0, 0,
					0666), 0,
		   "LS_CREATE a small lockspace after an ENOSPC");
	ls_remove(self->fd, "uapi_after_enospc");
}

/* The cluster's directory holds 64 lockspaces. */
#define LS_DIR_MAX	64

TEST_F_TIMEOUT(uapi, ls_directory_full, SETUP_S + 3 * READY_TIMEOUT_S)
{
	char name[16];
	int i, got;

	need_ready(_metadata, self->fd, self->ip);

	restart(_metadata, self->fd, self->ip);
	for (i = 0; i < LS_DIR_MAX; i++) {
		snprintf(name, sizeof(name), "dir%02d", i);
		got = ls_create(self->fd, name, RDLOCK_PROTO_BAKERY, 2, 0, 0, 0,
				0666);
		ASSERT_EQ(0, got) {
			TH_LOG("LS_CREATE %s: %s", name, ename(got));
		}
	}
	expect_err(_metadata, ls_create(self->fd, "dir64", RDLOCK_PROTO_BAKERY, 2,
					0, 0, 0, 0666), ENOSPC,
		   "LS_CREATE a 65th lockspace");
	expect_err(_metadata, ls_remove(self->fd, "dir64"), ENOENT,
		   "LS_REMOVE after ENOSPC");
	for (i = 0; i < LS_DIR_MAX; i++) {
		snprintf(name, sizeof(name), "dir%02d", i);
		EXPECT_EQ(0, ls_remove(self->fd, name));
	}
	/* The directory keeps its entries while the cluster is up. */
	expect_err(_metadata, ls_create(self->fd, "dir64", RDLOCK_PROTO_BAKERY, 2,
					0, 0, 0, 0666), ENOSPC,
		   "LS_CREATE a 65th name after removing all 64");
	expect_err(_metadata, ls_create(self->fd, "dir00", RDLOCK_PROTO_BAKERY, 2,
					0, 0, 0, 0666), 0,
		   "LS_CREATE a removed one again");
	EXPECT_EQ(0, ls_remove(self->fd, "dir00"));
	expect_err(_metadata, ls_create(self->fd, "dir00", RDLOCK_PROTO_BAKERY, 4,
					0, 0, 0, 0666), EEXIST,
		   "LS_CREATE a removed one with other slots");
	/* Leave an empty directory to the tests after this one. */
	restart(_metadata, self->fd, self->ip);
}

/*
 * This node's own two-sided request reaches its table's executor after
 * it let go of its loopback connection: the cluster going down meanwhile
 * must wait for it before the table is freed. The request READs a slot
 * of the one-node cluster's table with a delay injected between finding
 * the table and using it (a fault injection build's
 * inject_own_exec_delay_ms; the knob reads 0 once the delay started),
 * and DOWN is asked for meanwhile. The request must end with 0 and the
 * slot's value; freed under it, the table would be read after its
 * release (KASAN on the debug kernel reports it).
 */
TEST_F_TIMEOUT(uapi, own_request_during_down, SETUP_S + 60)
{
	struct rdlock_test_info info;
	char was[32] = "auto";
	__u64 val = 0, want;
	int tfd, pfd[2], ret, status;
	long long delays;
	double end;
	pid_t pid;
	FILE *f;

	if (rdl_debugfs_read(OWN_DELAY) < 0)
		SKIP(return, "no %s: not a fault injection build", OWN_DELAY);
	delays = rdl_debugfs_counter("cluster", "own_exec_delays_injected");
	ASSERT_LE(0, delays);
	f = fopen(BACKEND_PARAM, "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%31s", was));
	fclose(f);
	need_down(_metadata, self->fd, self->ip, true);
	snprintf(own_backend_was, sizeof(own_backend_was), "%s", was);
	ASSERT_EQ(0, backend_param_write("twosided"));
	need_ready(_metadata, self->fd, self->ip);
	tfd = open_test_dev(&info);
	if (tfd < 0)
		SKIP(return, "rdlock_test.ko not loaded");
	ASSERT_EQ(RDLOCK_BACKEND_TWOSIDED, info.backend);
	want = 0x52444c4f43b00000ULL | (__u64)getpid();
	ASSERT_EQ(0, test_op(tfd, RDLOCK_TEST_OP_WRITE, NODE,
			     info.first_free_slot, want, 0, NULL));
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, rdl_debugfs_write(OWN_DELAY, OWN_DELAY_MS));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		ret = test_op(tfd, RDLOCK_TEST_OP_READ, NODE,
			      info.first_free_slot, 0, 0, &val);
		if (write(pfd[1], &ret, sizeof(ret)) != sizeof(ret) ||
		    write(pfd[1], &val, sizeof(val)) != sizeof(val))
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	/* The request is in its delay once the knob reads 0. */
	end = rdl_now() + 30;
	while (rdl_debugfs_read(OWN_DELAY) != 0 && rdl_now() < end)
		usleep(10000);
	EXPECT_EQ(0, rdl_debugfs_read(OWN_DELAY));
	expect_ok(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL,
		  "DOWN during an own request");
	ASSERT_EQ(sizeof(ret), read(pfd[0], &ret, sizeof(ret)));
	ASSERT_EQ(sizeof(val), read(pfd[0], &val, sizeof(val)));
	EXPECT_EQ(0, ret);
	EXPECT_EQ(want, val);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(delays + 1,
		  rdl_debugfs_counter("cluster", "own_exec_delays_injected"));
	close(pfd[0]);
	close(tfd);
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, state_of(self->fd));
}

TEST_F_TIMEOUT(uapi, ls_down_again, SETUP_S + 30)
{
	need_ready(_metadata, self->fd, self->ip);

	expect_ok(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, "DOWN");
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, state_of(self->fd));
}

/* Fail at once, not once per test, when the module is not there. */
#define main uapi_harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	int fd;

	if (rdl_select_tests(argc, argv))
		return KSFT_FAIL;
	fd = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ksft_print_header();
		ksft_exit_fail_msg("cannot open %s: %s (%s)\n", RDLOCK_DEV,
				   strerror(errno),
				   "load rdlock.ko; this test runs in the guest");
	}
	close(fd);
	return uapi_harness_main(argc, argv);
}
