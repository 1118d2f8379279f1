// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-flood: one unprivileged user wearing a DLM lockspace of
 * /dev/rdlock down on this node, for selftests/guest/ocfs2.sh's benchmark
 * under a flood (the file system's throughput beside it), or a probe of
 * another user's TRY locks beside such a flood.
 *
 *   rdlock-flood [--uid U --gid G] --lockspace LS --node I --nodes M
 *                [--names N] [--waiters W] [--kill-ms T]
 *   rdlock-flood [--uid U --gid G] --lockspace LS --node I --probe
 *                [--every MS]
 *
 * Started as root with --uid and --gid, it first becomes that user, with G
 * as its only group (the group of /dev/rdlock). The flood:
 *
 * 1. holds EX on "hot.I" and PR on the names "n.I.0", "n.I.1", ... until
 *    N are held or a lock is refused (ENOLCK: the user's user_locks_max),
 *    then gives back W + 16 of them, so that the waiters below fit; prints
 *    "#json" figure "fill" and "filled";
 * 2. after SIGUSR1 (once every node holds its "hot" name), W threads each
 *    ask for EX on another node's "hot" name, which that node's flood
 *    holds to the end: W requests blocked for good; and every T ms (with
 *    T > 0) a child of a small killer process asks for one of them too
 *    and is killed with SIGKILL T ms later (a killed waiter, whose
 *    request the kernel ends); prints "started";
 * 3. at SIGTERM or SIGINT prints "#json" figure "flood" (the waiters that
 *    came back, which must be none; the children killed waiting and those
 *    refused at once, by errno) and "stopped"; at the next one it exits,
 *    leaving the kernel to let go of every lock and request at the
 *    files' close. (Between the two, the other nodes' floods stop too:
 *    none of them lets go of its "hot" name before every node counted.)
 *
 * The flood is state, not CPU: requests that wait, locks held, a child
 * now and then. It spends next to no CPU of its own, so that what it
 * costs others is what it costs the lock service.
 *
 * The probe takes PR with RDLOCK_LKF_TRY on a free name "p.I.K" every MS
 * ms (default 100), and gives it back; at SIGTERM it prints "#json"
 * figure "probe": tries, failures (the first one's errno) and the slowest
 * try in microseconds. Exit status: 0, 1 if the setup failed, 2 on bad
 * usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlock.h>

#include "bench.h"
#include "rdltest.h"

/* Names per file: below RDLOCK_FILE_LOCKS_MAX. */
#define NAMES_PER_FILE	2048
#define NAMES_MAX	65536
#define NAME_FILES	(NAMES_MAX / NAMES_PER_FILE)
/* Room left under the user's bound beside the waiters: the killed ones. */
#define HEADROOM	16

struct flood {
	const char *ls;
	__u32 node, nodes, names, waiters, kill_ms, every_ms;
	/* The waiters' requests that came back: granted or failed. */
	atomic_uint returned;
	atomic_int last_err;
};

static struct flood fl = { .names = 4096, .kill_ms = 200, .every_ms = 100 };

static void usage(void)
{
	fprintf(stderr,
		"Usage: rdlock-flood [--uid U --gid G] --lockspace LS --node I --nodes M\n"
		"                    [--names N] [--waiters W] [--kill-ms T]\n"
		"       rdlock-flood [--uid U --gid G] --lockspace LS --node I --probe\n"
		"                    [--every MS]\n");
	exit(2);
}

static int become(uid_t uid, gid_t gid)
{
	if (setgroups(1, &gid) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		perror("rdlock-flood: becoming the user");
		return -1;
	}
	return 0;
}

/* The start of a "#json" line of figure @figure, up to its node. */
static void json_head(const char *figure)
{
	printf("#json {\"tool\": \"rdlock-flood\", \"figure\": \"%s\", \"node\": %u",
	       figure, fl.node);
}

static void hot_name(char *buf, size_t len, __u32 node)
{
	snprintf(buf, len, "hot.%u", node);
}

/* Node @i's target among the others. */
static __u32 other_node(__u32 i)
{
	return (fl.node + 1 + i % (fl.nodes - 1)) % fl.nodes;
}

/* Waiter @i: EX on another node's "hot" name; 0 once granted, or the errno. */
static int wait_for_hot(__u32 i)
{
	char name[32];
	int fd;

	hot_name(name, sizeof(name), other_node(i));
	fd = rdl_open_joined(fl.ls);
	return fd < 0 ? -fd : rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, 0, 0, NULL);
}

static void *waiter(void *arg)
{
	int err = wait_for_hot((__u32)(unsigned long)arg);

	/* Granted (err 0) or failed: both are wrong while the flood lasts. */
	atomic_store(&fl.last_err, err);
	atomic_fetch_add(&fl.returned, 1);
	return NULL;
}

/* A child that waits for another node's "hot" name: killed, or its errno. */
static pid_t killed_waiter(__u32 i)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	_exit(wait_for_hot(i));
}

/* What the killer saw of its children. */
struct kills {
	unsigned int children, killed, granted, busy, nolck, other;
};

/*
 * The killer, a small process of its own forked before the flood holds
 * anything (a child of the flood itself would copy its threads' memory at
 * every fork): after a byte on @go, every kill_ms ms a child that waits
 * and SIGKILL; at @go's end of file it writes its counts to @res.
 */
static void killer(int go, int res)
{
	struct pollfd pfd = { .fd = go, .events = POLLIN };
	struct kills c = { 0 };
	bool stop = false;
	char b;
	int st;

	if (read(go, &b, 1) != 1)
		_exit(0);
	while (!stop) {
		pid_t pid = killed_waiter(c.children++);

		if (pid < 0)
			_exit(1);
		stop = poll(&pfd, 1, fl.kill_ms) != 0;
		kill(pid, SIGKILL);
		if (waitpid(pid, &st, 0) != pid)
			_exit(1);
		if (WIFSIGNALED(st))
			c.killed++;
		else if (WEXITSTATUS(st) == 0)
			c.granted++;
		else if (WEXITSTATUS(st) == EBUSY)
			c.busy++;
		else if (WEXITSTATUS(st) == ENOLCK)
			c.nolck++;
		else
			c.other++;
	}
	_exit(write(res, &c, sizeof(c)) == sizeof(c) ? 0 : 1);
}

/* The killer started, its pipes' ends in @go and @res: its pid, or -1. */
static pid_t killer_start(int *go, int *res)
{
	int g[2], r[2];
	pid_t pid;

	if (pipe2(g, O_CLOEXEC))
		return -1;
	if (pipe2(r, O_CLOEXEC))
		goto fail_g;
	pid = fork();
	if (pid < 0)
		goto fail_r;
	if (!pid) {
		close(g[1]);
		close(r[0]);
		killer(g[0], r[1]);
	}
	close(g[0]);
	close(r[1]);
	*go = g[1];
	*res = r[0];
	return pid;
fail_r:
	close(r[0]);
	close(r[1]);
fail_g:
	close(g[0]);
	close(g[1]);
	return -1;
}

/* Waits @ms for SIGTERM or SIGINT (blocked, @set): true once one came. */
static bool stop_within(const sigset_t *set, __u32 ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int sig = sigtimedwait(set, NULL, &ts);

	return sig == SIGTERM || sig == SIGINT;
}

static int fill_names(int *fds, __u32 *handles, __u32 *held, int *refused)
{
	__u64 t = bench_now_ns();
	char name[32];
	__u32 i, back;
	int err = 0;

	for (i = 0; i < fl.names; i++) {
		int *fd = &fds[i / NAMES_PER_FILE];

		if (*fd < 0) {
			*fd = rdl_open_joined(fl.ls);
			if (*fd < 0) {
				err = -*fd;
				break;
			}
		}
		snprintf(name, sizeof(name), "n.%u.%u", fl.node, i);
		err = rdl_ls_lock(*fd, name, RDLOCK_LOCK_PR, 0, 0, &handles[i]);
		if (err)
			break;
	}
	*held = i;
	*refused = err;
	json_head("fill");
	printf(", \"names\": %u, \"refused\": \"%s\", \"ms\": %llu}\n", i,
	       err ? strerrorname_np(err) : "",
	       (unsigned long long)((bench_now_ns() - t) / 1000000));
	if (err && err != ENOLCK) {
		fprintf(stderr, "rdlock-flood: name %u: %s\n", i, strerror(err));
		return -1;
	}
	/* Room for the waiters and the killed ones, under the bound. */
	back = fl.waiters + HEADROOM;
	while (back-- && *held) {
		(*held)--;
		err = rdl_ls_unlock(fds[*held / NAMES_PER_FILE],
				    handles[*held]);
		if (err) {
			fprintf(stderr, "rdlock-flood: unlock: %s\n",
				strerror(err));
			return -1;
		}
	}
	printf("filled\n");
	fflush(stdout);
	return 0;
}

static int run_flood(const sigset_t *set)
{
	static int fds[NAME_FILES];
	int fd, refused, sig, st, go = -1, res = -1;
	pid_t kid = 0;
	struct kills c = { 0 };
	__u32 *handles, held, i;
	pthread_attr_t a;
	pthread_t th;
	char name[32];
	__u64 t;

	if (fl.kill_ms) {
		kid = killer_start(&go, &res);
		if (kid < 0) {
			perror("rdlock-flood: the killer");
			return 1;
		}
	}
	handles = calloc(fl.names, sizeof(*handles));
	if (!handles)
		return 1;
	for (i = 0; i < NAME_FILES; i++)
		fds[i] = -1;
	fd = rdl_open_joined(fl.ls);
	hot_name(name, sizeof(name), fl.node);
	st = fd < 0 ? -fd : rdl_ls_lock(fd, name, RDLOCK_LOCK_EX, 0, 0, NULL);
	if (st) {
		fprintf(stderr, "rdlock-flood: %s in %s: %s\n", name, fl.ls,
			strerror(st));
		return 1;
	}
	if (fill_names(fds, handles, &held, &refused))
		return 1;
	do {
		sig = sigwaitinfo(set, NULL);
		if (sig == SIGTERM || sig == SIGINT)
			return 0;
	} while (sig != SIGUSR1);

	t = bench_now_ns();
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (i = 0; i < fl.waiters; i++) {
		if (pthread_create(&th, &a, waiter, (void *)(unsigned long)i)) {
			fprintf(stderr, "rdlock-flood: waiter %u: no thread\n",
				i);
			return 1;
		}
	}
	pthread_attr_destroy(&a);
	if (kid && write(go, "g", 1) != 1)
		return 1;
	printf("started\n");
	fflush(stdout);
	while (!stop_within(set, 1000))
		;
	if (kid) {
		close(go);
		if (read(res, &c, sizeof(c)) != sizeof(c) ||
		    waitpid(kid, &st, 0) != kid) {
			fprintf(stderr, "rdlock-flood: the killer failed\n");
			return 1;
		}
	}
	i = atomic_load(&fl.returned);
	json_head("flood");
	printf(", \"names\": %u, \"refused\": \"%s\", \"waiters\": %u",
	       held, refused ? strerrorname_np(refused) : "", fl.waiters);
	printf(", \"returned\": %u, \"returned_errno\": \"%s\"", i,
	       i && atomic_load(&fl.last_err) ?
	       strerrorname_np(atomic_load(&fl.last_err)) : "");
	printf(", \"children\": %u, \"killed\": %u, \"granted\": %u",
	       c.children, c.killed, c.granted);
	printf(", \"ebusy\": %u, \"enolck\": %u, \"other\": %u, \"ms\": %llu}\n",
	       c.busy, c.nolck, c.other,
	       (unsigned long long)((bench_now_ns() - t) / 1000000));
	printf("stopped\n");
	fflush(stdout);
	while (!stop_within(set, 1000))
		;
	return 0;
}

static int run_probe(const sigset_t *set)
{
	unsigned int tries = 0, fails = 0;
	__u64 worst = 0, t;
	int fd, err, first = 0;
	char name[32];
	__u32 h;

	fd = rdl_open_joined(fl.ls);
	if (fd < 0) {
		fprintf(stderr, "rdlock-flood: %s: %s\n", fl.ls,
			strerror(-fd));
		return 1;
	}
	printf("probing\n");
	fflush(stdout);
	do {
		snprintf(name, sizeof(name), "p.%u.%u", fl.node, tries % 1024);
		t = bench_now_ns();
		err = rdl_ls_lock(fd, name, RDLOCK_LOCK_PR, RDLOCK_LKF_TRY, 0,
				  &h);
		t = bench_now_ns() - t;
		worst = t > worst ? t : worst;
		tries++;
		if (!err)
			err = rdl_ls_unlock(fd, h);
		if (err) {
			fails++;
			first = first ?: err;
		}
	} while (!stop_within(set, fl.every_ms));
	json_head("probe");
	printf(", \"tries\": %u, \"fails\": %u, \"first_errno\": \"%s\"", tries,
	       fails, first ? strerrorname_np(first) : "");
	printf(", \"worst_us\": %llu}\n", (unsigned long long)(worst / 1000));
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "uid", required_argument, NULL, 'u' },
		{ "gid", required_argument, NULL, 'g' },
		{ "lockspace", required_argument, NULL, 'l' },
		{ "node", required_argument, NULL, 'i' },
		{ "nodes", required_argument, NULL, 'm' },
		{ "names", required_argument, NULL, 'n' },
		{ "waiters", required_argument, NULL, 'w' },
		{ "kill-ms", required_argument, NULL, 'k' },
		{ "probe", no_argument, NULL, 'p' },
		{ "every", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	__u32 uid = 0, gid = 0;
	bool as_user = false, as_group = false, probing = false;
	sigset_t set;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'u':
			if (bench_arg_u32(optarg, 1, 0xfffffffe, &uid))
				usage();
			as_user = true;
			break;
		case 'g':
			if (bench_arg_u32(optarg, 0, 0xfffffffe, &gid))
				usage();
			as_group = true;
			break;
		case 'l':
			fl.ls = optarg;
			break;
		case 'i':
			if (bench_arg_u32(optarg, 0, 255, &fl.node))
				usage();
			break;
		case 'm':
			if (bench_arg_u32(optarg, 2, 256, &fl.nodes))
				usage();
			break;
		case 'n':
			if (bench_arg_u32(optarg, 1, NAMES_MAX, &fl.names))
				usage();
			break;
		case 'w':
			if (bench_arg_u32(optarg, 0, 4096, &fl.waiters))
				usage();
			break;
		case 'k':
			if (bench_arg_u32(optarg, 0, 60000, &fl.kill_ms))
				usage();
			break;
		case 'p':
			probing = true;
			break;
		case 'e':
			if (bench_arg_u32(optarg, 1, 60000, &fl.every_ms))
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !fl.ls || as_user != as_group ||
	    (!probing && (!fl.nodes || fl.node >= fl.nodes)))
		usage();
	/* Signals only where it waits for them (sigtimedwait()). */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (as_user && become(uid, gid))
		return 1;
	return probing ? run_probe(&set) : run_flood(&set);
}
