// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-rec-fill: hold COUNT PR locks, "PREFIX0" .. "PREFIX<COUNT-1>", in
 * each of up to 4 DLM lockspaces of rdlock (the DLM kernel API, through
 * /dev/rdlock_dlm_test's FILL) and, with --fsdlm, as many in all in one
 * lockspace of the stock kernel's fs/dlm (FSDLM_FILL: COUNT times the
 * rdlock lockspaces, which it has no limit of names for), until SIGTERM or
 * SIGINT. For selftests/guest/recbench.sh: every node holds the same
 * names, one node dies, and the others' recovery is timed.
 *
 *   rdlock-rec-fill --rdlock LS [--rdlock LS ...] --count N [--prefix P]
 *                   [--node I --nodes M] [--fsdlm LS --node I --nodes M]
 *
 * fs/dlm masters a name on the node that asks for it first, rdlock homes
 * it by its hash: so that a third of fs/dlm's names are mastered on each
 * of 3 nodes too, node I first takes the names whose number is I modulo M,
 * prints "own" and waits for SIGUSR1 (every node took its own), then the
 * others. In rdlock's lockspaces, which place a name's lock word on the
 * node that claims its entry first, node I starts at name I * N / M and
 * goes round: nodes that fill at once each place about their share.
 * Prints one "#json " line per lockspace filled ("figure": "fill": the
 * dlm, the locks held, the milliseconds it took), then "filled" on its
 * own line once every one holds its locks. Each SIGUSR1 after that prints
 * "lost LS N" for each of rdlock's lockspaces (its lost callbacks so far:
 * a lockspace is lost to its user when a lock of it could not move off a
 * node declared down), then "reported K" (the K-th report). Exits 0 after
 * SIGTERM or SIGINT (the locks let go), 1 when a fill or a report fails,
 * 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdlock_dlm_test_ioctl.h"
#include "bench.h"

#define DEV	"/dev/rdlock_dlm_test"

/* Set by the handler, read after sigsuspend() returned (a call: no cache). */
static sig_atomic_t stop, go;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		go = 1;
	else
		stop = 1;
}

/* Until *@flag is set by a signal blocked outside of this wait. */
static void wait_for(sig_atomic_t *flag, const sigset_t *unblocked)
{
	while (!*flag)
		sigsuspend(unblocked);
}

static void usage(void)
{
	fprintf(stderr, "Usage: rdlock-rec-fill --rdlock LS [--rdlock LS ...] --count N\n"
			"                       [--prefix P] [--fsdlm LS --node I --nodes M]\n");
	exit(2);
}

static void fill_json(const char *dlm, const char *ls, __u32 held,
		      __u64 start_ns)
{
	printf("#json {\"tool\": \"rdlock-rec-fill\", \"figure\": \"fill\"");
	printf(", \"dlm\": \"%s\", \"lockspace\": \"%s\", \"held\": %u, \"ms\": %llu}\n",
	       dlm, ls, held,
	       (unsigned long long)((bench_now_ns() - start_ns) / 1000000));
	fflush(stdout);
}

/*
 * rdlock's DLM lockspace @ls: an open file holding @count PR locks, taken
 * from the names @first on.
 */
static int fill_rdlock(const char *ls, const char *prefix, __u32 count,
		       __u32 first)
{
	struct rdlock_dlm_test_open o = { .node_id = ~0U };
	struct rdlock_dlm_test_fill f = { .max = count, .first = first };
	__u64 t = bench_now_ns();
	int fd;

	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("rdlock-rec-fill: " DEV);
		return -1;
	}
	snprintf(o.name, sizeof(o.name), "%s", ls);
	snprintf(f.prefix, sizeof(f.prefix), "%s", prefix);
	if (ioctl(fd, RDLOCK_DLM_TEST_IOC_OPEN, &o) ||
	    ioctl(fd, RDLOCK_DLM_TEST_IOC_FILL, &f)) {
		fprintf(stderr, "rdlock-rec-fill: rdlock lockspace %s: %s\n",
			ls, strerror(errno));
		close(fd);
		return -1;
	}
	fill_json("rdlock", ls, f.held, t);
	if (f.held != count) {
		fprintf(stderr, "rdlock-rec-fill: rdlock lockspace %s: %u of %u held, status %d\n",
			ls, f.held, count, f.status);
		close(fd);
		return -1;
	}
	return fd;
}

/* FSDLM_FILL of the names @r, @r + @m, ... below @total, on @fd. */
static int fsdlm_share(int fd, const char *ls, const char *prefix,
		       __u32 total, __u32 r, __u32 m)
{
	struct rdlock_dlm_test_fsdlm_fill f = {
		.max = total,
		.start = r,
		.stride = m,
		.count = (total - r + m - 1) / m,
	};

	snprintf(f.ls, sizeof(f.ls), "%s", ls);
	snprintf(f.prefix, sizeof(f.prefix), "%s", prefix);
	if (ioctl(fd, RDLOCK_DLM_TEST_IOC_FSDLM_FILL, &f)) {
		fprintf(stderr, "rdlock-rec-fill: fs/dlm lockspace %s: %s\n",
			ls, strerror(errno));
		return -1;
	}
	if (f.held != f.count) {
		fprintf(stderr, "rdlock-rec-fill: fs/dlm lockspace %s: %u of %u held, status %d\n",
			ls, f.held, f.count, f.status);
		return -1;
	}
	return (int)f.held;
}

/* "lost LS N": rdlock's DLM lockspace @ls (file @fd) was lost N times. */
static int report_lost(const char *ls, int fd)
{
	struct rdlock_dlm_test_downs d = { 0 };

	if (ioctl(fd, RDLOCK_DLM_TEST_IOC_DOWNS, &d)) {
		fprintf(stderr, "rdlock-rec-fill: rdlock lockspace %s: DOWNS: %s\n",
			ls, strerror(errno));
		return -1;
	}
	printf("lost %s %u\n", ls, d.lost);
	return 0;
}

/*
 * fs/dlm's lockspace @ls: an open file holding @total PR locks, this
 * node's share (@node modulo @nodes) first, the rest after SIGUSR1.
 */
static int fill_fsdlm(const char *ls, const char *prefix, __u32 total,
		      __u32 node, __u32 nodes, const sigset_t *unblocked)
{
	__u64 t = bench_now_ns();
	__u32 r, held = 0;
	int fd, n;

	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("rdlock-rec-fill: " DEV);
		return -1;
	}
	n = fsdlm_share(fd, ls, prefix, total, node, nodes);
	if (n < 0)
		goto fail;
	held += n;
	printf("own\n");
	fflush(stdout);
	wait_for(&go, unblocked);
	for (r = 0; r < nodes && r < total; r++) {
		if (r == node)
			continue;
		n = fsdlm_share(fd, ls, prefix, total, r, nodes);
		if (n < 0)
			goto fail;
		held += n;
	}
	fill_json("fsdlm", ls, held, t);
	return fd;
fail:
	close(fd);
	return -1;
}

#define MAX_RDLOCK_LS	4

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rdlock", required_argument, NULL, 'r' },
		{ "fsdlm", required_argument, NULL, 'f' },
		{ "count", required_argument, NULL, 'c' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "node", required_argument, NULL, 'i' },
		{ "nodes", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 }
	};
	const char *rls[MAX_RDLOCK_LS], *fls = NULL, *prefix = "r";
	struct sigaction sa = { .sa_handler = on_signal };
	int opt, rfd[MAX_RDLOCK_LS], ffd = -1;
	__u32 count = 0, node = 0, nodes = 0;
	sigset_t block, unblocked;
	unsigned int nr = 0, i, k;

	while ((opt = getopt_long(argc, argv, "r:f:c:p:i:m:", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'r':
			if (nr == MAX_RDLOCK_LS)
				usage();
			rls[nr++] = optarg;
			break;
		case 'f':
			fls = optarg;
			break;
		case 'c':
			if (bench_arg_u32(optarg, 1, 65536, &count))
				usage();
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'i':
			if (bench_arg_u32(optarg, 0, 255, &node))
				usage();
			break;
		case 'm':
			if (bench_arg_u32(optarg, 1, 256, &nodes))
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !nr || !count || strlen(prefix) > 10 ||
	    (nodes && node >= nodes) ||
	    (fls && (count * nr > 65536 || !nodes)))
		usage();
	/* The signals come only in wait_for(): no wake-up is lost. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &unblocked);
	sigdelset(&unblocked, SIGTERM);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGUSR1);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < nr; i++) {
		rfd[i] = fill_rdlock(rls[i], prefix, count,
				     nodes ? (__u64)count * node / nodes : 0);
		if (rfd[i] < 0)
			return 1;
	}
	if (fls) {
		ffd = fill_fsdlm(fls, prefix, count * nr, node, nodes,
				 &unblocked);
		if (ffd < 0)
			return 1;
	}
	printf("filled\n");
	fflush(stdout);
	/* Each SIGUSR1 from now on: the lost callbacks of rdlock's lockspaces. */
	for (k = 1;; k++) {
		go = 0;
		while (!stop && !go)
			sigsuspend(&unblocked);
		if (stop)
			break;
		for (i = 0; i < nr; i++)
			if (report_lost(rls[i], rfd[i]))
				return 1;
		printf("reported %u\n", k);
		fflush(stdout);
	}
	/* Closing lets go of the locks and leaves the lockspaces. */
	if (ffd >= 0)
		close(ffd);
	for (i = 0; i < nr; i++)
		close(rfd[i]);
	return 0;
}
