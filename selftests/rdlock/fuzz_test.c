// SPDX-License-Identifier: GPL-2.0
/*
 * A structure-aware fuzz of /dev/rdlock on a one-node cluster that is up.
 *
 * Several worker processes, some root and some nobody (one of those not in
 * the device's group), call every ioctl of the device and read() it, in
 * random sequences. Arguments start from the valid ones of the errno
 * tables (uapi_cases.h, uapi_admin_cases.h): as they are, with a case of
 * the table applied, or with random fields set to random or boundary
 * values; lockspace and lock names come from small pools so that calls
 * meet each other. Some calls pass a bad pointer or a random command. A
 * worker sometimes forks a twin that shares its files for a few calls, so
 * that two processes call on one file at once. The supervisor kills a
 * random worker every few hundred milliseconds (a killed waiter, a file
 * closed by exit) and starts another.
 *
 * Root never passes a cluster configuration call that its pure check
 * would accept (only failing cases of the admin tables), nor UP or DOWN:
 * the cluster stays ready, and the run checks that it did.
 *
 * What fails the run (exit 1):
 *   - an errno the uapi does not document (an internal one leaking out);
 *   - a granted lock that QUERY does not find, or finds with another name
 *     or mode;
 *   - a worker that a SIGKILL does not end within KILL_WAIT_S;
 *   - a lockspace of the run that cannot be removed once every worker is
 *     gone (mutated names too: all that LS_LIST shows of the uapi's);
 *   - the cluster not ready at the end.
 * The guest's log is checked for BUG, WARNING, KASAN, lockdep, kmemleak and
 * hung-task reports by the harness, as for every step.
 *
 * Usage: fuzz_test [-s SECONDS] [-p WORKERS] [-S SEED]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlock.h>
#include "rdltest.h"
#include "uapi_cases.h"
#include "uapi_admin_cases.h"

#define NOBODY		65534
#define DEV_GID		(NOBODY - 2)	/* the device's group, as uapi_test's */
#define WORKERS_MAX	16
#define FILES		4	/* open files a worker keeps at most */
#define HANDLES		16	/* granted handles it remembers per file */
#define TWINS_MAX	2
#define TWIN_CALLS	24
#define KILL_WAIT_S	30
#define ERRNO_MAX	160
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const ls_pool[] = { "fz0", "fz1", "fz2", "fz3", "fz4" };
static const char *const lock_pool[] = { "a", "b", "c", "d", "e", "f" };

/* What the workers count, in memory shared with the supervisor. */
struct fuzz_shared {
	unsigned long long calls;
	unsigned long long granted;
	unsigned long long efault;
	unsigned long long errs[ERRNO_MAX + 1];
	unsigned long long bad_errno;
	unsigned long long bad_query;
	unsigned long long twins;
	int last_bad_errno;
	char last_bad_call[32];
};

static struct fuzz_shared *shared;

/* A worker's files: the fd, and handles LOCK granted on it. */
struct fuzz_file {
	int fd;
	bool joined;
	unsigned int nr;
	__u32 handle[HANDLES];
};

static struct fuzz_file files[FILES];
static unsigned int twins;
static bool in_twin;
static bool is_root;
static void *bad_page;	/* PROT_NONE: a pointer into it faults */

static unsigned int rnd(unsigned int n)
{
	return n ? (unsigned int)random() % n : 0;
}

static __u64 rnd64(void)
{
	return (__u64)random() << 33 ^ (__u64)random() << 2 ^ random();
}

/* A value a field is likely to be checked against. */
static __u64 rnd_value(void)
{
	static const __u64 edge[] = {
		0, 1, 2, 3, 31, 32, 64, 100, 255, 256, 4096, 4097, 65536,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL, ~0ULL,
	};

	return rnd(3) ? edge[rnd(ARRAY_SIZE(edge))] : rnd64();
}

/* Change 1 to 3 random fields of @arg (@size bytes) to random values. */
static void poke_random(void *arg, size_t size)
{
	static const unsigned short sizes[] = { 1, 2, 4, 8 };
	unsigned int i, n = 1 + rnd(3);
	unsigned short sz;
	size_t off;
	__u64 v;

	for (i = 0; i < n; i++) {
		sz = sizes[rnd(4)];
		if (sz > size)
			continue;
		off = rnd(size / sz) * sz;
		v = rnd_value();
		memcpy((char *)arg + off, &v, sz);	/* little endian */
	}
}

/*
 * Fuzz an argument: as it is (half the time), with a random case of its
 * table applied, or with random fields changed. Root gets only the
 * failing cases of a table marked @admin, and no random change.
 */
static void mutate(void *arg, size_t size, const struct uapi_case *cases,
		   size_t nr, bool admin)
{
	const struct uapi_case *c;
	unsigned int tries;

	if (admin && is_root) {
		for (tries = 0; tries < 64; tries++) {
			c = &cases[rnd(nr)];
			if (c->err) {
				uapi_case_apply(arg, c);
				return;
			}
		}
		memset(arg, 0xff, size);	/* version ~0: refused */
		return;
	}
	switch (rnd(4)) {
	case 0:
	case 1:
		return;
	case 2:
		if (nr)
			uapi_case_apply(arg, &cases[rnd(nr)]);
		return;
	default:
		poke_random(arg, size);
	}
}

/* The errnos uapi.rst documents, and ENOTTY for unknown commands. */
static bool errno_documented(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case EBUSY: case ENOENT: case ETIMEDOUT:
	case EAGAIN: case EINTR: case ESHUTDOWN: case EPERM: case EBADFD:
	case EOPNOTSUPP: case ENOTCONN: case EALREADY: case ENOMEM:
	case EEXIST: case EACCES: case ENXIO: case ENOSPC: case ENOLCK:
	case EAFNOSUPPORT: case EIO: case ECONNRESET: case ENOTTY: case ENOKEY:
	case EADDRNOTAVAIL: case EADDRINUSE:
		return true;
	}
	return false;
}

/* Count a call's outcome: 0, or the errno of a failed one. */
static int outcome(const char *what, long ret)
{
	int e = ret < 0 ? errno : 0;

	__atomic_add_fetch(&shared->calls, 1, __ATOMIC_RELAXED);
	if (!e)
		return 0;
	__atomic_add_fetch(&shared->errs[e <= ERRNO_MAX ? e : 0], 1,
			   __ATOMIC_RELAXED);
	if (e == EFAULT)
		__atomic_add_fetch(&shared->efault, 1, __ATOMIC_RELAXED);
	if (!errno_documented(e)) {
		__atomic_add_fetch(&shared->bad_errno, 1, __ATOMIC_RELAXED);
		shared->last_bad_errno = e;
		snprintf(shared->last_bad_call, sizeof(shared->last_bad_call),
			 "%s", what);
	}
	return e;
}

/* The argument pointer: @arg, or now and then one that faults. */
static void *arg_ptr(void *arg, size_t size)
{
	switch (rnd(24)) {
	case 0:
		return NULL;
	case 1:
		return bad_page;
	case 2:
		/* The last bytes of a readable page, then the fault. */
		return (char *)bad_page - (size > 1 ? size / 2 : 1);
	default:
		return arg;
	}
}

static int do_ioctl(const char *what, int fd, unsigned long cmd, void *arg,
		    size_t size)
{
	return outcome(what, ioctl(fd, cmd, arg_ptr(arg, size)));
}

static struct fuzz_file *any_file(void)
{
	return &files[rnd(FILES)];
}

static struct fuzz_file *open_file(void)
{
	unsigned int i, start = rnd(FILES);

	for (i = 0; i < FILES; i++)
		if (files[(start + i) % FILES].fd >= 0)
			return &files[(start + i) % FILES];
	return NULL;
}

static void name_ls(char *name, size_t len)
{
	memset(name, 0, len);
	snprintf(name, len, "%s", ls_pool[rnd(ARRAY_SIZE(ls_pool))]);
}

static void act_open(void)
{
	struct fuzz_file *f = any_file();
	int flags = O_RDWR | O_CLOEXEC | (rnd(2) ? O_NONBLOCK : 0);

	if (f->fd >= 0)
		return;
	f->fd = open(RDLOCK_DEV, flags);
	f->nr = 0;
	f->joined = false;
	if (outcome("open", f->fd))
		f->fd = -1;
}

static void act_close(void)
{
	struct fuzz_file *f = open_file();

	if (!f)
		return;
	outcome("close", close(f->fd));
	f->fd = -1;
	f->nr = 0;
}

static void act_ls_create(int fd)
{
	struct rdlock_ls_create c = uapi_valid_ls_create;

	if (rnd(3) == 0)
		c = uapi_valid_ls_create_dlm;
	name_ls(c.name, sizeof(c.name));
	if (!c.flags || c.flags == RDLOCK_LS_UPDATE) {
		c.proto = rnd(RDLOCK_PROTO_NR);
		c.slots = 2U << rnd(11);
		c.lease_ms = rnd(3) ? 0 : 100 * (1 + rnd(10));
		if (c.proto == RDLOCK_PROTO_CQL) {
			c.lease_ms = 0;
			c.flags = rnd(3) ? 0 : rnd(2) ? RDLOCK_LS_CQL_HIER :
				  RDLOCK_LS_CQL_FLAGS;
			c.queue_bits = 1 + rnd(5);
		} else if (rnd(3) == 0) {
			c.flags = RDLOCK_LS_UPDATE;
		}
	}
	c.mode = rnd(2) ? 0666 : rnd(2) ? 0644 : 0600;
	c.uid = rnd(2) ? 0 : NOBODY;
	c.gid = rnd(2) ? 0 : DEV_GID;
	mutate(&c, sizeof(c), uapi_ls_create_cases,
	       ARRAY_SIZE(uapi_ls_create_cases), false);
	do_ioctl("ls_create", fd, RDLOCK_IOC_LS_CREATE, &c, sizeof(c));
}

static void act_ls_name(struct fuzz_file *f, unsigned long cmd,
			const char *what)
{
	struct rdlock_ls_name n = uapi_valid_ls_name;

	name_ls(n.name, sizeof(n.name));
	mutate(&n, sizeof(n), uapi_ls_name_cases,
	       ARRAY_SIZE(uapi_ls_name_cases), false);
	if (!do_ioctl(what, f->fd, cmd, &n, sizeof(n)) &&
	    cmd == RDLOCK_IOC_JOIN) {
		f->nr = 0;
		f->joined = true;
	}
}

/*
 * A granted lock: QUERY finds it with its name and mode if @alone (no twin
 * shared the file since before the LOCK: one may unlock, convert or leave
 * meanwhile, and exit before we look).
 */
static void check_granted(struct fuzz_file *f, const struct rdlock_lock_req *l,
			  bool alone)
{
	struct rdlock_query q = uapi_valid_query;
	int e;

	__atomic_add_fetch(&shared->granted, 1, __ATOMIC_RELAXED);
	q.handle = l->handle;
	e = outcome("query granted", ioctl(f->fd, RDLOCK_IOC_QUERY, &q));
	if (alone &&
	    (e || q.name_len != l->name_len ||
	     memcmp(q.name, l->name, l->name_len) || q.mode != l->mode)) {
		__atomic_add_fetch(&shared->bad_query, 1, __ATOMIC_RELAXED);
		printf("# lock %.*s mode %u granted as handle %u: QUERY %s, mode %u, name %.*s\n",
		       (int)l->name_len, l->name, l->mode, l->handle,
		       e ? strerror(e) : "ok", q.mode,
		       (int)(q.name_len <= RDLOCK_RES_NAME_MAX ? q.name_len : 0),
		       q.name);
		fflush(stdout);
		return;
	}
	if (e)
		return;
	if (f->nr < HANDLES)
		f->handle[f->nr++] = l->handle;
	else
		f->handle[rnd(HANDLES)] = l->handle;
}

static void act_lock(struct fuzz_file *f)
{
	static const __u32 timeouts[] = { 0, 1, 10, 100, 1000 };
	const char *name = lock_pool[rnd(ARRAY_SIZE(lock_pool))];
	struct rdlock_lock_req l = uapi_valid_lock;
	bool valid, alone;
	int e;

	memset(l.name, 0, sizeof(l.name));
	l.name_len = strlen(name);
	memcpy(l.name, name, l.name_len);
	l.mode = rnd(RDLOCK_LOCK_MODE_NR);
	l.flags = rnd(3) ? 0 : RDLOCK_LKF_TRY;
	l.timeout_ms = l.flags ? 0 : timeouts[rnd(5)];
	l.lease_slots = rnd(4) ? 0 : rnd(4);
	valid = rnd(2);
	while (twins && waitpid(-1, NULL, WNOHANG) > 0)
		twins--;
	alone = !in_twin && !twins;
	if (!valid)
		mutate(&l, sizeof(l), uapi_lock_cases,
		       ARRAY_SIZE(uapi_lock_cases), false);
	e = do_ioctl("lock", f->fd, RDLOCK_IOC_LOCK, &l, sizeof(l));
	if (!e && valid)
		check_granted(f, &l, alone);
	if (e == EBADFD)
		f->joined = false;	/* a twin left */
}

static __u32 some_handle(struct fuzz_file *f)
{
	if (f->nr && rnd(4))
		return f->handle[rnd(f->nr)];
	return rnd(2) ? rnd(8) : (__u32)rnd64();
}

static void forget_handle(struct fuzz_file *f, __u32 h)
{
	unsigned int i;

	for (i = 0; i < f->nr; i++)
		if (f->handle[i] == h) {
			f->handle[i] = f->handle[--f->nr];
			return;
		}
}

static void act_unlock(struct fuzz_file *f)
{
	struct rdlock_unlock_req u = uapi_valid_unlock;

	u.handle = some_handle(f);
	mutate(&u, sizeof(u), uapi_unlock_cases,
	       ARRAY_SIZE(uapi_unlock_cases), false);
	if (!do_ioctl("unlock", f->fd, RDLOCK_IOC_UNLOCK, &u, sizeof(u)))
		forget_handle(f, u.handle);
}

static void act_convert(struct fuzz_file *f)
{
	struct rdlock_convert_req c = uapi_valid_convert;

	c.handle = some_handle(f);
	c.mode = rnd(RDLOCK_LOCK_MODE_NR);
	c.flags = rnd(3) ? 0 : RDLOCK_LKF_TRY;
	c.timeout_ms = c.flags ? 0 : rnd(2) ? 0 : 1 + rnd(200);
	mutate(&c, sizeof(c), uapi_convert_cases,
	       ARRAY_SIZE(uapi_convert_cases), false);
	do_ioctl("convert", f->fd, RDLOCK_IOC_CONVERT, &c, sizeof(c));
}

static void act_query(struct fuzz_file *f)
{
	struct rdlock_query q = uapi_valid_query;

	q.handle = some_handle(f);
	mutate(&q, sizeof(q), uapi_query_cases,
	       ARRAY_SIZE(uapi_query_cases), false);
	do_ioctl("query", f->fd, RDLOCK_IOC_QUERY, &q, sizeof(q));
}

/*
 * A user pointer a mutation changed: the kernel would write where it
 * points, maybe into our own memory. It faults instead.
 */
static void keep_pointer(__u64 *p, const void *ours)
{
	if (*p && *p != (__u64)(uintptr_t)ours)
		*p = (__u64)(uintptr_t)bad_page;
}

static void act_ls_list(int fd)
{
	static char names[RDLOCK_LS_LIST_MAX][RDLOCK_LS_DLM_NAME_LEN];
	static struct rdlock_ls_info info[RDLOCK_LS_LIST_MAX];
	struct rdlock_ls_list l = uapi_valid_ls_list;

	l.count = rnd(9);
	l.entries = rnd(8) ? (__u64)(uintptr_t)info :
		    (__u64)(uintptr_t)bad_page;
	if (rnd(2)) {
		l.flags = RDLOCK_LS_LIST_DLM_NAMES;
		l.dlm_names = rnd(8) ? (__u64)(uintptr_t)names :
			      (__u64)(uintptr_t)bad_page;
	}
	mutate(&l, sizeof(l), uapi_ls_list_cases,
	       ARRAY_SIZE(uapi_ls_list_cases), false);
	keep_pointer(&l.entries, info);
	keep_pointer(&l.dlm_names, names);
	do_ioctl("ls_list", fd, RDLOCK_IOC_LS_LIST, &l, sizeof(l));
}

static void act_stats(int fd)
{
	static struct rdlock_stat e[RDLOCK_STATS_MAX];
	struct rdlock_stats st = uapi_valid_stats;

	st.count = rnd(2) ? rnd(9) : RDLOCK_STATS_MAX;
	st.entries = rnd(8) ? (__u64)(uintptr_t)e :
		     (__u64)(uintptr_t)bad_page;
	mutate(&st, sizeof(st), uapi_stats_cases,
	       ARRAY_SIZE(uapi_stats_cases), false);
	keep_pointer(&st.entries, e);
	do_ioctl("stats", fd, RDLOCK_IOC_STATS, &st, sizeof(st));
}

static void act_locks(int fd)
{
	static struct rdlock_locks_entry e[64];
	struct rdlock_locks l = uapi_valid_locks;

	name_ls(l.lockspace, sizeof(l.lockspace));
	l.count = rnd(2) ? rnd(3) : 64;
	l.entries = rnd(8) ? (__u64)(uintptr_t)e :
		    (__u64)(uintptr_t)bad_page;
	mutate(&l, sizeof(l), uapi_locks_cases,
	       ARRAY_SIZE(uapi_locks_cases), false);
	keep_pointer(&l.entries, e);
	do_ioctl("locks", fd, RDLOCK_IOC_LOCKS, &l, sizeof(l));
}

static void act_read(struct fuzz_file *f)
{
	static const size_t lens[] = { 0, 1, 31, 32, 64, 256 };
	char buf[256];
	size_t len = lens[rnd(6)];
	struct pollfd p = { .fd = f->fd, .events = POLLIN };

	/* A blocking file is read only when poll says an event is there. */
	if (!(fcntl(f->fd, F_GETFL) & O_NONBLOCK) &&
	    (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN)))
		return;
	outcome("read", read(f->fd, rnd(16) ? buf : bad_page, len));
}

/* The cluster's calls: STATUS as it is; the others only refused. */
static void act_admin(int fd)
{
	struct rdlock_cluster_config cfg = uapi_valid_config;
	struct rdlock_peer peer = uapi_valid_peer;
	struct rdlock_node_down nd = uapi_valid_node_down;
	struct rdlock_cluster_key key = uapi_valid_key;
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_status st = uapi_valid_status;

	st.nodes = (__u64)(uintptr_t)nodes;
	switch (rnd(7)) {
	case 0:
		mutate(&cfg, sizeof(cfg), uapi_config_cases,
		       ARRAY_SIZE(uapi_config_cases), true);
		do_ioctl("set_config", fd, RDLOCK_IOC_SET_CONFIG, &cfg,
			 sizeof(cfg));
		break;
	case 1:
		mutate(&peer, sizeof(peer), uapi_add_peer_cases,
		       ARRAY_SIZE(uapi_add_peer_cases), true);
		do_ioctl("add_peer", fd, RDLOCK_IOC_ADD_PEER, &peer,
			 sizeof(peer));
		break;
	case 2:
		mutate(&peer, sizeof(peer), uapi_del_peer_cases,
		       ARRAY_SIZE(uapi_del_peer_cases), true);
		do_ioctl("del_peer", fd, RDLOCK_IOC_DEL_PEER, &peer,
			 sizeof(peer));
		break;
	case 3:
		mutate(&nd, sizeof(nd), uapi_node_down_cases,
		       ARRAY_SIZE(uapi_node_down_cases), true);
		do_ioctl("node_down", fd, RDLOCK_IOC_NODE_DOWN, &nd, sizeof(nd));
		break;
	case 4:
		mutate(&key, sizeof(key), uapi_key_cases,
		       ARRAY_SIZE(uapi_key_cases), true);
		do_ioctl("set_key", fd, RDLOCK_IOC_SET_KEY, &key, sizeof(key));
		break;
	case 5:
		/* Nobody may neither bring it up nor down. */
		if (!is_root)
			outcome(rnd(2) ? "up" : "down",
				ioctl(fd, rnd(2) ? RDLOCK_IOC_UP :
					      RDLOCK_IOC_DOWN));
		break;
	default:
		mutate(&st, sizeof(st), uapi_status_cases,
		       ARRAY_SIZE(uapi_status_cases), false);
		keep_pointer(&st.nodes, nodes);
		do_ioctl("status", fd, RDLOCK_IOC_STATUS, &st, sizeof(st));
	}
}

/* Is @nr a cluster call's number, which root must not send at random? */
static bool admin_nr(unsigned int nr)
{
	return nr >= _IOC_NR(RDLOCK_IOC_SET_CONFIG) &&
	       nr <= _IOC_NR(RDLOCK_IOC_NODE_DOWN);
}

/* A command the device may not know: random number, size, direction. */
static void act_random_cmd(int fd)
{
	static const unsigned int other_magic[] = { 0x01, 0xab, 0xd8, 0xfe };
	char buf[512];
	unsigned int nr = rnd(0x40), size = rnd(sizeof(buf));
	unsigned long cmd;

	if (is_root && admin_nr(nr))
		return;
	/* Not the VFS's own types (FIONBIO, FICLONE, ...): theirs first. */
	cmd = _IOC(rnd(4), rnd(8) ? RDLOCK_IOC_MAGIC : other_magic[rnd(4)], nr,
		   size);
	if (is_root && _IOC_TYPE(cmd) == RDLOCK_IOC_MAGIC && admin_nr(nr))
		return;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = rnd(4) ? 0 : (char)random();
	do_ioctl("random cmd", fd, cmd, buf, size);
}

static void one_call(void);

/* A twin shares this worker's files for a few calls, then exits. */
static void act_twin(void)
{
	pid_t pid;
	int i;

	while (twins && waitpid(-1, NULL, WNOHANG) > 0)
		twins--;
	if (twins >= TWINS_MAX)
		return;
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		srandom(getpid() ^ (unsigned int)time(NULL));
		twins = TWINS_MAX;	/* no twin of a twin */
		in_twin = true;
		for (i = 0; i < TWIN_CALLS; i++)
			one_call();
		_exit(0);
	}
	twins++;
	__atomic_add_fetch(&shared->twins, 1, __ATOMIC_RELAXED);
}

static void one_call(void)
{
	struct fuzz_file *f = open_file();
	unsigned int r = rnd(100);

	if (!f || r < 4) {
		act_open();
		return;
	}
	/* Mostly calls on a joined file: a lockspace is joined first. */
	if (!f->joined && r >= 24 && r < 78 && rnd(2))
		r = 15;
	if (r < 7)
		act_close();
	else if (r < 12)
		act_ls_create(f->fd);
	else if (r < 15)
		act_ls_name(f, RDLOCK_IOC_LS_REMOVE, "ls_remove");
	else if (r < 22)
		act_ls_name(f, RDLOCK_IOC_JOIN, "join");
	else if (r < 24 && !outcome("leave", ioctl(f->fd, RDLOCK_IOC_LEAVE)))
		f->joined = false;
	else if (r < 50)
		act_lock(f);
	else if (r < 64)
		act_unlock(f);
	else if (r < 72)
		act_convert(f);
	else if (r < 78)
		act_query(f);
	else if (r < 82)
		act_read(f);
	else if (r < 84)
		act_ls_list(f->fd);
	else if (r < 85)
		rnd(2) ? act_stats(f->fd) : act_locks(f->fd);
	else if (r < 91)
		act_admin(f->fd);
	else if (r < 96)
		act_random_cmd(f->fd);
	else if (twins < TWINS_MAX && r < 97)
		act_twin();
}

static int drop_privileges(bool in_group)
{
	gid_t g = DEV_GID;

	return setgroups(in_group ? 1 : 0, &g) ||
	       setresgid(NOBODY, NOBODY, NOBODY) ||
	       setresuid(NOBODY, NOBODY, NOBODY);
}

/*
 * Worker @i of @nr: root if even, nobody if odd; with 4 workers or more,
 * the last odd one is not in the device's group (it opens nothing).
 */
static void worker(unsigned int i, unsigned int nr, unsigned int seed)
{
	unsigned int last_odd = nr & 1 ? nr - 2 : nr - 1, j;

	srandom(seed);
	is_root = !(i & 1);
	if (!is_root && drop_privileges(nr < 4 || i != last_odd))
		_exit(100);
	for (j = 0; j < FILES; j++)
		files[j].fd = -1;
	signal(SIGCHLD, SIG_DFL);
	for (;;)
		one_call();
}

/* A worker leads a process group of its own, with its twins. */
static pid_t start_worker(unsigned int i, unsigned int nr, unsigned int seed)
{
	pid_t pid = fork();

	if (!pid) {
		setpgid(0, 0);
		worker(i, nr, seed);
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/*
 * SIGKILL worker @pid with its twins and wait for it; false if it outlives
 * KILL_WAIT_S. Its twins are ours once it is gone (a child subreaper),
 * and reaped by reap().
 */
static bool kill_wait(pid_t pid, int *status)
{
	double end = rdl_now() + KILL_WAIT_S;
	char path[64], buf[256];
	pid_t r;
	FILE *f;

	*status = 0;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (rdl_now() < end) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		usleep(10000);
	}
	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			printf("# worker %d unkillable, in %s\n", pid, buf);
		fclose(f);
	}
	return false;
}

/*
 * Reap the children that ended; with @wait_s, wait that long for all of
 * them. Return: how many are left.
 */
static int reap(double wait_s)
{
	double end = rdl_now() + wait_s;
	pid_t r;

	for (;;) {
		r = waitpid(-1, NULL, WNOHANG);
		if (r < 0 && errno == ECHILD)
			return 0;
		if (r > 0)
			continue;
		if (rdl_now() >= end)
			return 1;
		usleep(10000);
	}
}

/*
 * Remove every lockspace the run created: all of this node's that the
 * uapi made (a mutated name may be outside the pools). Files of killed
 * processes may still be closing: EBUSY is retried for a while.
 */
static int remove_all(void)
{
	struct rdlock_ls_info info[64];
	struct rdlock_ls_list l = uapi_valid_ls_list;
	unsigned int i, n;
	double end;
	int bad = 0, e;

	l.count = ARRAY_SIZE(info);
	l.entries = (__u64)(uintptr_t)info;
	e = rdl_dev_ioctl(RDLOCK_IOC_LS_LIST, &l);
	if (e) {
		printf("# ls_list: %s\n", strerror(e));
		return 1;
	}
	n = l.count < ARRAY_SIZE(info) ? l.count : ARRAY_SIZE(info);
	for (i = 0; i < n; i++) {
		if (info[i].kind == RDLOCK_LS_KIND_KERNEL)
			continue;
		end = rdl_now() + 20;
		while ((e = rdl_ls_remove(info[i].name)) == EBUSY &&
		       rdl_now() < end)
			usleep(20000);
		if (e) {
			printf("# remove %.*s: %s\n", RDLOCK_LS_NAME_MAX,
			       info[i].name, strerror(e));
			bad++;
		}
	}
	printf("# %u lockspaces removed\n", n);
	return bad;
}

/*
 * Is the cluster ready, or ready again within @wait_s: a stalled operation
 * (a slow guest) makes the node connect to itself again, as any link.
 */
static bool cluster_up(double wait_s)
{
	struct rdlock_status st = uapi_valid_status;
	double end = rdl_now() + wait_s;

	st.nr_nodes = 0;	/* the state alone */
	for (;;) {
		if (!rdl_dev_ioctl(RDLOCK_IOC_STATUS, &st) &&
		    st.state == RDLOCK_CLUSTER_READY)
			return true;
		if (rdl_now() >= end)
			return false;
		usleep(100000);
	}
}

int main(int argc, char **argv)
{
	unsigned int seconds = 60, nr = 6, seed = (unsigned int)time(NULL);
	unsigned int i, kills = 0, unkillable = 0, bad;
	pid_t pids[WORKERS_MAX];
	double end, next_kill;
	long page = sysconf(_SC_PAGESIZE);
	char *pages;
	int opt, status, e;

	while ((opt = getopt(argc, argv, "s:p:S:")) != -1) {
		switch (opt) {
		case 's':
			seconds = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			nr = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			seed = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-s SECONDS] [-p WORKERS] [-S SEED]\n",
				argv[0]);
			return 2;
		}
	}
	if (!nr || nr > WORKERS_MAX) {
		fprintf(stderr, "%s: 1 to %d workers\n", argv[0], WORKERS_MAX);
		return 2;
	}
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED || pages == MAP_FAILED ||
	    mprotect(pages + page, page, PROT_NONE)) {
		perror("mmap");
		return 2;
	}
	bad_page = pages + page;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		perror("PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	if (chown(RDLOCK_DEV, 0, DEV_GID) || chmod(RDLOCK_DEV, 0660)) {
		perror("chown " RDLOCK_DEV);
		return 2;
	}
	if (!cluster_up(30)) {
		printf("# the cluster is not ready\n");
		return 1;
	}
	printf("# fuzz: %u s, %u workers, seed %u\n", seconds, nr, seed);
	srandom(seed);
	for (i = 0; i < nr; i++)
		pids[i] = start_worker(i, nr, seed + i + 1);
	end = rdl_now() + seconds;
	next_kill = rdl_now() + 0.1 + rnd(400) / 1000.0;
	while (rdl_now() < end) {
		usleep(20000);
		if (rdl_now() < next_kill)
			continue;
		next_kill = rdl_now() + 0.1 + rnd(400) / 1000.0;
		i = rnd(nr);
		if (!kill_wait(pids[i], &status))
			unkillable++;
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 100)
			printf("# worker %u could not drop its privileges\n", i);
		kills++;
		pids[i] = start_worker(i, nr, seed + (kills + 1) * WORKERS_MAX + i);
		/* Twins orphaned earlier, now ours: killed with their group. */
		reap(0);
	}
	for (i = 0; i < nr; i++)
		if (!kill_wait(pids[i], &status))
			unkillable++;
	/* The twins of the last workers, killed with them. */
	if (reap(KILL_WAIT_S)) {
		printf("# twins outlived SIGKILL by %d s\n", KILL_WAIT_S);
		unkillable++;
	}
	bad = remove_all();
	printf("# %llu calls, %llu locks granted, %llu EFAULT, %llu twins, %u workers killed\n",
	       shared->calls, shared->granted, shared->efault, shared->twins,
	       kills);
	printf("# errnos:");
	for (e = 0; e <= ERRNO_MAX; e++)
		if (shared->errs[e])
			printf(" %s %llu", e ? strerrorname_np(e) ?: "?" : "other",
			       shared->errs[e]);
	printf("\n");
	printf("#json {\"tool\": \"fuzz_test\", \"calls\": %llu, ",
	       shared->calls);
	printf("\"granted\": %llu, \"killed\": %u, \"seconds\": %u, ",
	       shared->granted, kills, seconds);
	printf("\"workers\": %u, \"seed\": %u}\n", nr, seed);
	if (shared->bad_errno)
		printf("# %llu undocumented errnos, the last %d (%s) from %s\n",
		       shared->bad_errno, shared->last_bad_errno,
		       strerror(shared->last_bad_errno), shared->last_bad_call);
	if (shared->bad_query)
		printf("# %llu granted locks that QUERY did not show as granted\n",
		       shared->bad_query);
	if (unkillable)
		printf("# %u workers outlived SIGKILL by %d s\n", unkillable,
		       KILL_WAIT_S);
	if (bad)
		printf("# %u lockspaces of the run could not be removed\n", bad);
	if (!cluster_up(30)) {
		printf("# the cluster is no longer ready\n");
		bad++;
	}
	if (!shared->granted || shared->calls < 1000) {
		printf("# too little was called to mean anything\n");
		bad++;
	}
	return shared->bad_errno || shared->bad_query || unkillable || bad;
}
