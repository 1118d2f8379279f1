// SPDX-License-Identifier: GPL-2.0
/*
 * The errno contract of /dev/rdlock, on one node whose rdlock.ko has just
 * been loaded and not configured. The tests share the module's state and
 * run in source order: unconfigured checks first, then configuration
 * checks while down, an unprivileged child, and last the cluster going up
 * and down. Every rejected call is followed by a STATUS proving that it
 * changed nothing. The module is left configured and down.
 *
 * Environment: RDLOCK_NODE_ID (default 0) and RDLOCK_NODE_ADDRS (default
 * "10.77.0.1") give this node's own address, the only one it connects to.
 * Other addresses below are never contacted: peers are only added while
 * down, except one that points at our own address with another port.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"

#include <kselftest_harness.h>

#define DEV		"/dev/rdlock"
#define TEST_DEV	"/dev/rdlock_test"
#define NOBODY		65534
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
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* 0 or the errno of a failed ioctl. */
static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? errno : 0;
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

static void cfg_init(struct rdlock_cluster_config *c, __u32 node,
		     const char *ip, __u16 port)
{
	memset(c, 0, sizeof(*c));
	c->version = RDLOCK_UAPI_VERSION;
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
	got = xioctl(fd, req, arg);
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
	int got = xioctl(fd, req, arg);

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
		EXPECT_EQ(0, s.nodes[i].reserved[0]);
		EXPECT_EQ(0, s.nodes[i].reserved[1]);
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
		{ _IO(RDLOCK_IOC_MAGIC, 0x06), "STATUS as _IO" },
		{ _IOR(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_status), "STATUS as _IOR" },
		{ _IOW(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_status), "STATUS as _IOW" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_node_status), "STATUS size 32" },
		{ _IOWR(RDLOCK_IOC_MAGIC, 0x06, __u8[56]), "STATUS size 56" },
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

/* Every address a node may not have, applied to @a (part of @arg). */
static void check_bad_addrs(struct __test_metadata *_metadata, int fd,
			    unsigned long req, void *arg,
			    struct rdlock_addr *a, const char *what)
{
	static const __u16 families[] = { 0, 1, 3, 11, 17, 0xffff };
	static const char * const bad_ips[] = {
		"0.0.0.0", "224.0.0.1", "239.255.255.255", "255.255.255.255",
		"::", "ff02::1", "ff0e::1234", "ff00::",
	};
	struct rdlock_addr good = *a;
	char name[96];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(families); i++) {
		*a = good;
		a->family = families[i];
		snprintf(name, sizeof(name), "%s family %u", what, families[i]);
		reject(_metadata, fd, req, arg, EAFNOSUPPORT, name, true);
	}
	/* An all-zero address, family included. */
	memset(a, 0, sizeof(*a));
	snprintf(name, sizeof(name), "%s all-zero address", what);
	reject(_metadata, fd, req, arg, EAFNOSUPPORT, name, true);

	addr_set(a, "10.77.100.1", 0, 0);
	a->addr[4] = 1;
	snprintf(name, sizeof(name), "%s IPv4 addr[4] != 0", what);
	reject(_metadata, fd, req, arg, EINVAL, name, true);
	addr_set(a, "10.77.100.1", 0, 0);
	a->addr[15] = 0x80;
	snprintf(name, sizeof(name), "%s IPv4 addr[15] != 0", what);
	reject(_metadata, fd, req, arg, EINVAL, name, true);
	addr_set(a, "10.77.100.1", 0, 1);
	snprintf(name, sizeof(name), "%s IPv4 with scope_id", what);
	reject(_metadata, fd, req, arg, EINVAL, name, true);

	for (i = 0; i < ARRAY_SIZE(bad_ips); i++) {
		addr_set(a, bad_ips[i], 18600, 0);
		snprintf(name, sizeof(name), "%s address %s", what, bad_ips[i]);
		reject(_metadata, fd, req, arg, EINVAL, name, true);
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
	int ret = xioctl(tfd, RDLOCK_TEST_IOC_OP, &o);

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

FIXTURE(uapi) {
	int fd;
	char ip[64];		/* this node's own address */
};

FIXTURE_SETUP(uapi)
{
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) {
		TH_LOG("cannot open %s: %s", DEV, strerror(errno));
	}
	self_ip(self->ip, sizeof(self->ip));
}

FIXTURE_TEARDOWN(uapi)
{
	if (self->fd >= 0)
		close(self->fd);
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

	memset(&st, 0, sizeof(st));
	st.version = 0;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EINVAL,
	       "STATUS version 0", true);
	st.version = RDLOCK_UAPI_VERSION + 1;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EINVAL,
	       "STATUS version 2", true);
	st.version = RDLOCK_UAPI_VERSION;
	st.reserved[0] = 1;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EINVAL,
	       "STATUS reserved[0]", true);
	st.reserved[0] = 0;
	st.reserved[1] = 1ULL << 63;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EINVAL,
	       "STATUS reserved[1]", true);
	st.reserved[1] = 0;
	st.nr_nodes = RDLOCK_MAX_NODES + 1;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EINVAL,
	       "STATUS nr_nodes 33", true);
	st.nr_nodes = 0xffffffff;
	reject(_metadata, self->fd, RDLOCK_IOC_STATUS, &st, EINVAL,
	       "STATUS nr_nodes 0xffffffff", true);
	st.nr_nodes = 0;

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
	int i;

	cfg_init(&c, NODE, self->ip, 0);
	c.version = 0;
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG version 0", true);
	c.version = RDLOCK_UAPI_VERSION + 1;
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG version 2", true);
	c.version = 0xffffffff;
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG version ~0", true);

	cfg_init(&c, NODE, self->ip, 0);
	c.flags = 1;
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG flags 1", true);
	c.flags = 0x80000000;
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG flags bit 31", true);

	for (i = 0; i < 4; i++) {
		char what[48];

		cfg_init(&c, NODE, self->ip, 0);
		c.reserved[i] = i == 3 ? 1ULL << 63 : 1;
		snprintf(what, sizeof(what), "SET_CONFIG reserved[%d]", i);
		reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
		       what, true);
	}

	cfg_init(&c, NODE, self->ip, 0);
	c.cluster_id = 0;
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG cluster_id 0", true);
	cfg_init(&c, RDLOCK_MAX_NODES, self->ip, 0);
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG node_id 32", true);
	cfg_init(&c, 0xffffffff, self->ip, 0);
	reject(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, EINVAL,
	       "SET_CONFIG node_id ~0", true);

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

	/* Field checks of ADD_PEER and DEL_PEER. */
	peer_init(&p, 14, "10.77.100.15", 0);
	p.version = 0;
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EINVAL,
	       "ADD_PEER version 0", true);
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, EINVAL,
	       "DEL_PEER version 0", true);
	p.version = RDLOCK_UAPI_VERSION + 1;
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EINVAL,
	       "ADD_PEER version 2", true);
	p.version = RDLOCK_UAPI_VERSION;
	for (i = 0; i < 2; i++) {
		p.reserved[i] = 1;
		snprintf(what, sizeof(what), "ADD_PEER reserved[%u]", i);
		reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EINVAL,
		       what, true);
		p.node_id = 9;
		snprintf(what, sizeof(what), "DEL_PEER reserved[%u]", i);
		reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, EINVAL,
		       what, true);
		p.node_id = 14;
		p.reserved[i] = 0;
	}
	p.node_id = RDLOCK_MAX_NODES;
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EINVAL,
	       "ADD_PEER node_id 32", true);
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, EINVAL,
	       "DEL_PEER node_id 32", true);
	p.node_id = 0xffffffff;
	reject(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, EINVAL,
	       "ADD_PEER node_id ~0", true);

	/* DEL_PEER takes a zeroed or a valid address, nothing else. */
	peer_init(&p, 9, "10.77.100.10", 0);
	p.addr.family = 99;
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, EAFNOSUPPORT,
	       "DEL_PEER family 99", true);
	addr_set(&p.addr, "224.0.0.1", 0, 0);
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, EINVAL,
	       "DEL_PEER multicast address", true);
	addr_set(&p.addr, "10.77.100.10", 0, 7);
	reject(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, EINVAL,
	       "DEL_PEER IPv4 address with a scope", true);

	peer_init(&p, 14, "10.77.100.15", 0);
	check_bad_addrs(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, &p.addr,
			"ADD_PEER");
	check_efault(_metadata, self->fd, RDLOCK_IOC_ADD_PEER, &p, sizeof(p),
		     "ADD_PEER");
	peer_init(&p, 9, "10.77.100.10", 0);
	check_efault(_metadata, self->fd, RDLOCK_IOC_DEL_PEER, &p, sizeof(p),
		     "DEL_PEER");

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

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
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
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "# nobody cannot open %s: %s\n", DEV,
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
	got = xioctl(fd, req, arg);					\
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

	cfg_init(&c, NODE, self->ip, 0);
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
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

	expect_ok(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, "DOWN");
	EXPECT_EQ(RDLOCK_CLUSTER_DOWN, state_of(self->fd));
	reject(_metadata, self->fd, RDLOCK_IOC_DOWN, NULL, EALREADY,
	       "DOWN after DOWN", true);
	/* Leave a plain one-node configuration behind, down. */
	expect_ok(_metadata, self->fd, RDLOCK_IOC_SET_CONFIG, &c, "SET_CONFIG");
}

/* Fail at once, not once per test, when the module is not there. */
#define main uapi_harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		ksft_print_header();
		ksft_exit_fail_msg("cannot open %s: %s (%s)\n", DEV,
				   strerror(errno),
				   "load rdlock.ko; this test runs in the guest");
	}
	close(fd);
	return uapi_harness_main(argc, argv);
}
