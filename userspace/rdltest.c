// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the multi-node selftests (selftests/rdlock) and of the
 * benchmarks that coordinate nodes (rdlock-bench, rdlock-lock-bench): raw
 * transport operations through /dev/rdlock_test, the environment the
 * guests set, a monotonic clock, a barrier across the cluster made of
 * those operations, and the /dev/rdlock lock and lockspace calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "rdltest.h"

/* 0 or errno; the returned value in *val. */
int rdl_xop(int fd, __u32 op, __u32 node, __u32 slot, __u64 a0, __u64 a1,
	    __u64 *val)
{
	struct rdlock_test_op o = {
		.op = op, .node = node, .slot = slot, .arg0 = a0, .arg1 = a1,
	};

	if (ioctl(fd, RDLOCK_TEST_IOC_OP, &o) < 0)
		return errno;
	if (val)
		*val = o.result;
	return 0;
}

int rdl_env_u32(const char *name, __u32 def, __u32 *val)
{
	const char *s = getenv(name);
	unsigned long v;
	char *end;

	if (!s) {
		*val = def;
		return def == (__u32)-1 ? -1 : 0;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 0xffffffffUL)
		return -1;
	*val = (__u32)v;
	return 0;
}

double rdl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Counter @name of the "name: value" debugfs file @file under
 * /sys/kernel/debug/rdlock (e.g. "protocols", "lockspaces/LS/stats");
 * -1 if the file or the counter is missing.
 */
long long rdl_debugfs_counter(const char *file, const char *name)
{
	char path[256], line[256], key[64];
	long long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/rdlock/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* Lines that are not "name: number" ("protocol: bakery") are skipped. */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %lld", key, &v) == 2 &&
		    !strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* A READ that failed so may be made again: it changes nothing. */
bool rdl_read_again(int err)
{
	return err == ENOTCONN || err == ECONNRESET || err == EIO;
}

/* Write @v to the debugfs knob @file under /sys/kernel/debug/rdlock: 0 or errno. */
int rdl_debugfs_write(const char *file, unsigned int v)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/debug/rdlock/%s", file);
	return rdl_write_u32(path, v);
}

/* The number the debugfs knob @file under /sys/kernel/debug/rdlock holds: -1 if unread. */
long long rdl_debugfs_read(const char *file)
{
	char path[256];
	long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/kernel/debug/rdlock/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%lld", &v);
	fclose(f);
	return n == 1 ? v : -1;
}

/* Write @v to the file @path (a knob, a module parameter): 0 or errno. */
int rdl_write_u32(const char *path, unsigned int v)
{
	FILE *f;
	int ret;

	f = fopen(path, "w");
	if (!f)
		return errno;
	ret = fprintf(f, "%u\n", v) < 0 ? EIO : 0;
	if (fclose(f) && !ret)
		ret = errno;
	return ret;
}

/* Barrier words: the generation above bit 48, the arrived nodes below. */
#define BARRIER_GEN_SHIFT	48
#define BARRIER_NODES		((1ULL << BARRIER_GEN_SHIFT) - 1)

/* An error after which a barrier operation is simply made again. */
static bool rdl_barrier_again(int err)
{
	return rdl_read_again(err) || err == ETIMEDOUT || err == EAGAIN;
}

static unsigned int rdl_barrier_count(__u64 v)
{
	return __builtin_popcountll(v & BARRIER_NODES);
}

/*
 * The last generation of barrier word @v that all @nr_nodes nodes passed
 * (0: none, as in the slot's initial 0): the word's own once complete,
 * else the one before it (a generation begins only once the one before
 * is complete).
 */
static __u64 rdl_barrier_passed(__u64 v, __u32 nr_nodes)
{
	__u64 cur = v >> BARRIER_GEN_SHIFT;

	return !cur || rdl_barrier_count(v) >= nr_nodes ? cur : cur - 1;
}

/*
 * READ barrier word @slot into *@v, made again after a transport error
 * until @end (rdl_now()). Return: 0 or the last errno.
 */
static int rdl_barrier_read(int fd, __u32 slot, double end, __u64 *v)
{
	int err;

	while ((err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, slot, 0, 0, v)) &&
	       rdl_barrier_again(err) && rdl_now() < end)
		usleep(BARRIER_POLL_US * 50);
	return err;
}

/*
 * How this node arrives in generation @gen of barrier word @v (its bit
 * @mine): 0 with the word to CAS in *@want; 1 when it is in already (its
 * bit set, or a later generation begun); -1 when the word is of an
 * unrelated generation (another barrier shares the slot).
 */
static int rdl_barrier_next(__u64 v, __u64 gen, __u64 mine, __u32 nr_nodes,
			    __u64 *want)
{
	__u64 cur = v >> BARRIER_GEN_SHIFT;

	if ((cur == gen && (v & mine)) || cur > gen)
		return 1;
	if (cur == gen) {
		*want = v | mine;
		return 0;
	}
	/* The first of @gen: the previous one complete, or the initial 0. */
	if (rdl_barrier_passed(v, nr_nodes) + 1 == gen) {
		*want = gen << BARRIER_GEN_SHIFT | mine;
		return 0;
	}
	return -1;
}

/*
 * Arrive at the cluster-wide barrier on node 0's @slot: set this node's bit
 * in the slot for generation @gen, without waiting for the others. Setting
 * a bit is a CAS made again after any transport error: an operation that
 * a failed link ended may or may not have been applied, and setting the
 * bit twice is setting it once, so a link fault on the way is waited
 * through. The first node of generation @gen replaces a complete
 * generation @gen - 1 (or the slot's initial 0). @nr_nodes: how many make
 * a generation complete.
 * Return: 0, or -1 with a message in @msg.
 */
int rdl_barrier_arrive(int fd, __u32 nr_nodes, __u32 timeout_s, __u32 slot,
		       __u64 gen, char *msg, size_t len)
{
	double end = rdl_now() + timeout_s;
	struct rdlock_test_info info;
	__u64 v = 0, old = 0, mine, want = 0;
	bool sent = false, done = false;
	int err = 0, got;

	if (ioctl(fd, RDLOCK_TEST_IOC_INFO, &info) < 0) {
		snprintf(msg, len, "barrier: INFO: %s", strerror(errno));
		return -1;
	}
	if (!gen || gen >> (64 - BARRIER_GEN_SHIFT) ||
	    info.node_id >= BARRIER_GEN_SHIFT || nr_nodes > BARRIER_GEN_SHIFT) {
		snprintf(msg, len, "barrier: node %u of %u, generation %llu: out of range",
			 info.node_id, nr_nodes, (unsigned long long)gen);
		return -1;
	}
	mine = 1ULL << info.node_id;
	while (!done && rdl_now() < end) {
		err = rdl_barrier_read(fd, slot, end, &v);
		if (err)
			break;
		/*
		 * Our bit already in, before a CAS of ours might have set it:
		 * another barrier shares the slot, and this one would let its
		 * node through before the others arrive.
		 */
		got = rdl_barrier_next(v, gen, mine, nr_nodes, &want);
		if (got > 0 && sent) {
			done = true;
			break;
		}
		if (got) {
			snprintf(msg, len, "barrier slot %u at %#llx for generation %llu: shared",
				 slot, (unsigned long long)v,
				 (unsigned long long)gen);
			return -1;
		}
		err = rdl_xop(fd, RDLOCK_TEST_OP_CAS, 0, slot, v, want, &old);
		if (err && !rdl_barrier_again(err))
			break;
		/* Unknown whether it was applied: read again and see. */
		if (err)
			sent = true;
		else if (old == v)
			done = true;
	}
	if (done)
		return 0;
	if (err && !rdl_barrier_again(err))
		snprintf(msg, len, "barrier on node 0 slot %u: %s", slot,
			 strerror(err));
	else
		snprintf(msg, len, "barrier on node 0 slot %u: could not arrive in %u s",
			 slot, timeout_s);
	return -1;
}

/*
 * The last generation of the barrier on node 0's @slot that every one of
 * @nr_nodes nodes passed, into *@gen (0: none), for a program that goes on
 * with generations an earlier one on the same slot left: every node left
 * its last barrier, and some may be at the next already.
 * Return: 0, or the errno of the READ.
 */
int rdl_barrier_done(int fd, __u32 nr_nodes, __u32 slot, __u64 *gen)
{
	__u64 v = 0;
	int err = rdl_barrier_read(fd, slot, rdl_now() + 10, &v);

	if (!err)
		*gen = rdl_barrier_passed(v, nr_nodes);
	return err;
}

/*
 * Cluster-wide barrier on node 0's @slot: arrive (rdl_barrier_arrive()),
 * then wait until @nr_nodes nodes have arrived in generation @gen, or a
 * later generation has begun (every node passed this one), for at most
 * @timeout_s seconds in all.
 * Return: 0, or -1 with a message in @msg.
 */
int rdl_barrier(int fd, __u32 nr_nodes, __u32 timeout_s, __u32 slot,
		__u64 gen, char *msg, size_t len)
{
	double end = rdl_now() + timeout_s;
	__u64 v = 0;
	int err;

	if (rdl_barrier_arrive(fd, nr_nodes, timeout_s, slot, gen, msg, len))
		return -1;
	while (rdl_now() < end) {
		err = rdl_xop(fd, RDLOCK_TEST_OP_READ, 0, slot, 0, 0, &v);
		if (err && !rdl_barrier_again(err)) {
			snprintf(msg, len, "barrier READ on node 0 slot %u: %s",
				 slot, strerror(err));
			return -1;
		}
		if (!err && rdl_barrier_passed(v, nr_nodes) >= gen)
			return 0;
		usleep(BARRIER_POLL_US);
	}
	snprintf(msg, len, "barrier on node 0 slot %u: %u of %u nodes after %u s",
		 slot, rdl_barrier_count(v), nr_nodes,
		 timeout_s);
	return -1;
}

int rdl_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? errno : 0;
}

void rdl_lock_init(struct rdlock_lock_req *l, const char *name, __u32 mode,
		   __u32 flags, __u32 timeout_ms)
{
	memset(l, 0, sizeof(*l));
	l->version = RDLOCK_UAPI_VERSION;
	l->flags = flags;
	l->mode = mode;
	l->timeout_ms = timeout_ms;
	l->name_len = strlen(name);
	memcpy(l->name, name, l->name_len);
}

void rdl_convert_init(struct rdlock_convert_req *c, __u32 handle,
		      __u32 mode, __u32 flags, __u32 timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->version = RDLOCK_UAPI_VERSION;
	c->flags = flags;
	c->handle = handle;
	c->mode = mode;
	c->timeout_ms = timeout_ms;
}

/* @handle (may be NULL) gets the lock's handle, 0 on failure. */
int rdl_ls_lock(int fd, const char *name, __u32 mode, __u32 flags,
		__u32 timeout_ms, __u32 *handle)
{
	struct rdlock_lock_req l;
	int ret;

	rdl_lock_init(&l, name, mode, flags, timeout_ms);
	ret = rdl_ioctl(fd, RDLOCK_IOC_LOCK, &l);
	if (handle)
		*handle = ret ? 0 : l.handle;
	return ret;
}

int rdl_ls_unlock(int fd, __u32 handle)
{
	struct rdlock_unlock_req u = {
		.version = RDLOCK_UAPI_VERSION, .handle = handle,
	};

	return rdl_ioctl(fd, RDLOCK_IOC_UNLOCK, &u);
}

int rdl_ls_convert(int fd, __u32 handle, __u32 mode, __u32 flags,
		   __u32 timeout_ms)
{
	struct rdlock_convert_req c;

	rdl_convert_init(&c, handle, mode, flags, timeout_ms);
	return rdl_ioctl(fd, RDLOCK_IOC_CONVERT, &c);
}

int rdl_ls_query(int fd, __u32 handle, struct rdlock_query *q)
{
	memset(q, 0, sizeof(*q));
	q->version = RDLOCK_UAPI_VERSION;
	q->handle = handle;
	return rdl_ioctl(fd, RDLOCK_IOC_QUERY, q);
}

/* At most RDLOCK_LS_NAME_MAX bytes: names without a NUL are tested too. */
static size_t rdl_ls_name_len(const char *name)
{
	size_t len = strlen(name);

	return len < RDLOCK_LS_NAME_MAX ? len : RDLOCK_LS_NAME_MAX;
}

void rdl_ls_create_init(struct rdlock_ls_create *c, const char *name,
			__u32 proto, __u32 slots, __u32 flags, __u32 mode)
{
	memset(c, 0, sizeof(*c));
	c->version = RDLOCK_UAPI_VERSION;
	c->flags = flags;
	memcpy(c->name, name, rdl_ls_name_len(name));
	c->proto = proto;
	c->slots = slots;
	c->mode = mode;
}

void rdl_ls_name_init(struct rdlock_ls_name *n, const char *name)
{
	memset(n, 0, sizeof(*n));
	n->version = RDLOCK_UAPI_VERSION;
	memcpy(n->name, name, rdl_ls_name_len(name));
}

/* LS_REMOVE or JOIN of @name: 0 or the errno. */
int rdl_ls_by_name(int fd, unsigned long req, const char *name)
{
	struct rdlock_ls_name n;

	rdl_ls_name_init(&n, name);
	return rdl_ioctl(fd, req, &n);
}

/* @req on a file of /dev/rdlock of its own: 0 or the errno. */
int rdl_dev_ioctl(unsigned long req, void *arg)
{
	int fd = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return errno;
	ret = rdl_ioctl(fd, req, arg);
	close(fd);
	return ret;
}

int rdl_ls_remove(const char *name)
{
	struct rdlock_ls_name n;

	rdl_ls_name_init(&n, name);
	return rdl_dev_ioctl(RDLOCK_IOC_LS_REMOVE, &n);
}

/*
 * Creates the lockspace @c names; one of that name an earlier run left is
 * removed first. 0 or the errno (EEXIST: it exists, with other attributes,
 * and could not be removed).
 */
int rdl_ls_create_fresh(struct rdlock_ls_create *c)
{
	int err = rdl_dev_ioctl(RDLOCK_IOC_LS_CREATE, c);

	if (err == EEXIST && !rdl_ls_remove(c->name))
		err = rdl_dev_ioctl(RDLOCK_IOC_LS_CREATE, c);
	return err;
}

/* A fresh file of /dev/rdlock joined to @ls, or -errno. */
int rdl_open_joined(const char *ls)
{
	int fd = open(RDLOCK_DEV, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = rdl_ls_by_name(fd, RDLOCK_IOC_JOIN, ls);
	if (ret) {
		close(fd);
		return -ret;
	}
	return fd;
}

/* Mode of a held lock as QUERY reports it, or -errno. */
int rdl_ls_mode(int fd, __u32 handle)
{
	struct rdlock_query q;
	int ret = rdl_ls_query(fd, handle, &q);

	return ret ? -ret : (int)q.mode;
}

/* POLLIN within @ms? -1 on a poll error. */
int rdl_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	return n < 0 ? -1 : n == 1 && (p.revents & POLLIN);
}

/* read() of @len bytes into @ev, without blocking: bytes, or -errno. */
ssize_t rdl_read_events(int fd, void *ev, size_t len)
{
	int fl = fcntl(fd, F_GETFL);
	ssize_t n;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	n = read(fd, ev, len);
	if (n < 0)
		n = -errno;
	fcntl(fd, F_SETFL, fl);
	return n;
}
