// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-fail-bench: the throughput of locks by name over time, through a
 * node failure. Run at once on every node of a cluster: each creates the
 * same lockspace, joins C client files to it and, after a barrier of every
 * node (node 0's raw slot F + --slot-off, F = first_free_slot), has them
 * take names lock0 .. lockL-1 at random, shared or exclusive, for a
 * critical section spun in userspace, for --duration seconds. Every
 * --interval ms it prints the acquisitions of that interval on this node,
 * as it goes (a node that dies mid-run has printed its part), as one JSON
 * object on a line with "#json " in front (guest/lib.sh's rdl_json):
 *
 *   #json {"tool": "rdlock-fail-bench", "figure": "interval", "node": N,
 *          "ms": T, "acq": K}
 *
 * --event-at MS --event CMD: this node runs "/bin/sh -c CMD" MS ms into the
 * run, without waiting for it (demo run 6: node 0 has the host kill a
 * node). The run does not end with a barrier, as a node may be gone; each
 * node stops on its own clock. A lock call that fails counts as an error
 * and the client goes on after 10 ms; a request waits at most --wait-s
 * (120) seconds. Exits non-zero on any error or a failed event.
 *
 * --json FILE ("figure": "run"): node, protocol, the parameters,
 * CLOCK_MONOTONIC ms of the start (t0_ms, to set the kernel's
 * rdlock/membership times against), the event's start and exit status,
 * errors, and the interval counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"
#include "bench.h"
#include "rdltest.h"

#define MAX_CLIENTS	64
#define MAX_SAMPLES	36000
#define ERR_PAUSE_US	10000
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct opts {
	const char *ls;
	__u32 proto;
	__u32 clients, locks, cs_us, duration_s, interval_ms, wait_s;
	__u32 slot_off, ls_slots, barrier_timeout;
	double read_ratio;
	__u32 event_at_ms;
	const char *event;
	const char *json;
};

struct client {
	pthread_t thread;
	const struct opts *o;
	int fd;
	__u64 rng;
	atomic_ullong acq;
	atomic_ullong errors;
	char err[160];		/* the first error, written once */
	atomic_bool have_err;
};

static atomic_bool stop;

static const char *const protos[] = {
	[RDLOCK_PROTO_BAKERY] = "bakery",
	[RDLOCK_PROTO_CASLOCK] = "caslock",
	[RDLOCK_PROTO_CQL] = "cql",
};

/* Milliseconds on CLOCK_MONOTONIC, the clock of debugfs' *_ms times. */
static double mono_ms(void)
{
	return rdl_now() * 1e3;
}

static void client_error(struct client *c, const char *what, const char *name,
			 int err)
{
	bool no = false;

	atomic_fetch_add(&c->errors, 1);
	if (atomic_compare_exchange_strong(&c->have_err, &no, true))
		snprintf(c->err, sizeof(c->err), "%s %s in %s: %s", what, name,
			 c->o->ls, strerror(err));
	usleep(ERR_PAUSE_US);
}

static void *client_run(void *arg)
{
	struct client *c = arg;
	const struct opts *o = c->o;
	char name[32];
	__u32 h, mode;
	int err;

	while (!atomic_load(&stop)) {
		snprintf(name, sizeof(name), "lock%u",
			 (__u32)(bench_splitmix64(&c->rng) % o->locks));
		mode = bench_rnd(&c->rng) < o->read_ratio ? RDLOCK_LOCK_SH :
							     RDLOCK_LOCK_EX;
		err = rdl_ls_lock(c->fd, name, mode, 0, o->wait_s * 1000, &h);
		if (err) {
			client_error(c, mode == RDLOCK_LOCK_SH ? "shared lock" :
				     "exclusive lock", name, err);
			continue;
		}
		bench_spin_us(o->cs_us);
		err = rdl_ls_unlock(c->fd, h);
		if (err) {
			client_error(c, "unlock", name, err);
			continue;
		}
		atomic_fetch_add(&c->acq, 1);
	}
	return NULL;
}

/* The same attributes on every node; one left by an earlier run goes. */
static int ls_create(const struct opts *o)
{
	struct rdlock_ls_create c;
	int err;

	rdl_ls_create_init(&c, o->ls, o->proto, o->ls_slots, 0, 0600);
	err = rdl_ls_create_fresh(&c);
	if (err)
		fprintf(stderr, "rdlock-fail-bench: create lockspace %s: %s\n",
			o->ls, strerror(err));
	return err;
}

static void ls_remove(const struct opts *o)
{
	if (rdl_ls_remove(o->ls))
		fprintf(stderr, "rdlock-fail-bench: remove lockspace %s failed\n",
			o->ls);
}

/* The cluster's size and this node's id, once the cluster is ready. */
static int cluster_info(int tfd, __u32 *node, __u32 *nodes, __u32 *base,
			const struct opts *o)
{
	struct rdlock_status s = { .version = RDLOCK_UAPI_VERSION };
	struct rdlock_test_info info;

	if (ioctl(tfd, RDLOCK_TEST_IOC_INFO, &info) < 0 ||
	    rdl_dev_ioctl(RDLOCK_IOC_STATUS, &s)) {
		fprintf(stderr, "rdlock-fail-bench: status: %s\n", strerror(errno));
		return -1;
	}
	if (s.state != RDLOCK_CLUSTER_READY || !s.nr_nodes) {
		fprintf(stderr, "rdlock-fail-bench: the cluster is not ready\n");
		return -1;
	}
	*node = info.node_id;
	*nodes = s.nr_nodes;
	*base = info.first_free_slot + o->slot_off;
	return 0;
}

static pid_t event_start(const char *cmd)
{
	char *argv[4];
	pid_t pid;
	int err;

	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = (char *)cmd;
	argv[3] = NULL;
	err = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);

	if (err) {
		fprintf(stderr, "rdlock-fail-bench: run the event: %s\n",
			strerror(err));
		return -1;
	}
	return pid;
}

static void write_json(const struct opts *o, FILE *f, __u32 node,
		       __u32 nodes, double t0, double event_ms, int event_rc,
		       unsigned long long errors, const __u64 *counts,
		       __u32 n)
{
	__u32 i;

	fprintf(f, "{\"tool\": \"rdlock-fail-bench\", \"figure\": \"run\"");
	fprintf(f, ", \"node\": %u, \"nodes\": %u", node, nodes);
	fprintf(f, ", \"protocol\": \"%s\", \"lockspace\": \"%s\"",
		protos[o->proto], o->ls);
	fprintf(f, ", \"clients_per_node\": %u, \"locks\": %u", o->clients,
		o->locks);
	fprintf(f, ", \"read_ratio\": %g, \"cs_us\": %u", o->read_ratio,
		o->cs_us);
	fprintf(f, ", \"duration_s\": %u, \"interval_ms\": %u, \"t0_ms\": %.1f",
		o->duration_s, o->interval_ms, t0);
	if (o->event) {
		fprintf(f, ", \"event_at_ms\": %u, \"event_ms\": %.1f",
			o->event_at_ms, event_ms);
		fprintf(f, ", \"event_rc\": %d", event_rc);
	}
	fprintf(f, ", \"errors\": %llu, \"counts\": [", errors);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)counts[i]);
	fprintf(f, "]}\n");
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: rdlock-fail-bench [options]     (on every node at once)\n"
		   "  --lockspace NAME      (rdfail)\n"
		   "  --protocol P          bakery, caslock or cql (bakery)\n"
		   "  --clients C           threads per node, a /dev/rdlock file each (4)\n"
		   "  --locks L             names lock0 .. lockL-1, uniform (16)\n"
		   "  --read-ratio R        fraction of shared acquisitions (0.5)\n"
		   "  --cs-us T             critical section, spun in userspace (20)\n"
		   "  --duration S          seconds (40)\n"
		   "  --interval MS         acquisitions printed every MS ms (250)\n"
		   "  --wait-s S            longest wait of one request (120)\n"
		   "  --event-at MS --event CMD   run /bin/sh -c CMD MS ms into the run\n"
		   "  --slot-off OFF        start barrier on node 0's raw slot F+OFF (64)\n"
		   "  --ls-slots N          lockspace size (1024)\n"
		   "  --json FILE           the run as JSON too\n");
}

static int parse_proto(const char *s, __u32 *p)
{
	__u32 i;

	for (i = 0; i < ARRAY_SIZE(protos); i++)
		if (protos[i] && !strcmp(s, protos[i])) {
			*p = i;
			return 0;
		}
	return -1;
}

static int parse_ratio(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !(*v >= 0 && *v <= 1) ? -1 : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "lockspace", required_argument, NULL, 'L' },
		{ "protocol", required_argument, NULL, 'p' },
		{ "clients", required_argument, NULL, 'c' },
		{ "locks", required_argument, NULL, 'l' },
		{ "read-ratio", required_argument, NULL, 'r' },
		{ "cs-us", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'I' },
		{ "wait-s", required_argument, NULL, 'w' },
		{ "event-at", required_argument, NULL, 'a' },
		{ "event", required_argument, NULL, 'e' },
		{ "slot-off", required_argument, NULL, 'O' },
		{ "ls-slots", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_args a = { .which = BENCH_OPT_JSON };
	bool have_at = false;
	int opt;

	while ((opt = bench_getopt(argc, argv, "h", lopts, &a)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'L':
			o->ls = optarg;
			bad = !*optarg || strlen(optarg) >= RDLOCK_LS_NAME_MAX;
			break;
		case 'p':
			bad = parse_proto(optarg, &o->proto);
			break;
		case 'c':
			bad = bench_arg_u32(optarg, 1, MAX_CLIENTS, &o->clients);
			break;
		case 'l':
			bad = bench_arg_u32(optarg, 1, 4096, &o->locks);
			break;
		case 'r':
			bad = parse_ratio(optarg, &o->read_ratio);
			break;
		case 't':
			bad = bench_arg_u32(optarg, 0, 1000000, &o->cs_us);
			break;
		case 'd':
			bad = bench_arg_u32(optarg, 1, 3600, &o->duration_s);
			break;
		case 'I':
			bad = bench_arg_u32(optarg, 10, 60000, &o->interval_ms);
			break;
		case 'w':
			bad = bench_arg_u32(optarg, 1, 3600, &o->wait_s);
			break;
		case 'a':
			bad = parse_u32_arg(optarg, &o->event_at_ms);
			have_at = true;
			break;
		case 'e':
			o->event = optarg;
			break;
		case 'O':
			bad = bench_arg_u32(optarg, RDL_FIRST_TEST_SLOT, 1023,
					    &o->slot_off);
			break;
		case 'S':
			bad = bench_arg_u32(optarg, 2, RDLOCK_LS_SLOTS_MAX,
					    &o->ls_slots) || o->ls_slots % 2;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			bad = 1;
		}
		if (bad)
			return -1;
	}
	o->json = a.json;
	if (optind != argc || have_at != !!o->event ||
	    (__u64)o->duration_s * 1000 / o->interval_ms >= MAX_SAMPLES ||
	    o->event_at_ms >= o->duration_s * 1000 / o->interval_ms *
			       o->interval_ms)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.ls = "rdfail", .proto = RDLOCK_PROTO_BAKERY, .clients = 4,
		.locks = 16, .cs_us = 20, .duration_s = 40, .interval_ms = 250,
		.wait_s = 120, .slot_off = 64, .ls_slots = 1024,
		.read_ratio = 0.5,
	};
	static struct client cl[MAX_CLIENTS];
	static __u64 counts[MAX_SAMPLES];
	unsigned long long total = 0, prev = 0, errors = 0;
	__u32 node, nodes, base, i, n = 0, started = 0, joined = 0;
	double t0, event_ms = -1, end;
	int tfd, event_rc = -1, status, failed = 0;
	pid_t event_pid = -1;
	__u64 gen;
	char msg[160] = "the READ failed";

	if (rdl_env_u32("RDLOCK_BARRIER_TIMEOUT", 300, &o.barrier_timeout))
		o.barrier_timeout = 300;
	if (parse_opts(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	tfd = open(TEST_DEV, O_RDWR | O_CLOEXEC);
	if (tfd < 0) {
		fprintf(stderr, "rdlock-fail-bench: %s: %s (is rdlock_test.ko loaded?)\n",
			TEST_DEV, strerror(errno));
		return 1;
	}
	if (cluster_info(tfd, &node, &nodes, &base, &o) || ls_create(&o)) {
		close(tfd);
		return 1;
	}
	for (; joined < o.clients; joined++) {
		struct client *c = &cl[joined];

		c->o = &o;
		c->rng = ((__u64)node << 40) ^ ((__u64)joined << 32) ^
			 (__u64)(mono_ms() * 1000);
		c->fd = rdl_open_joined(o.ls);
		if (c->fd < 0) {
			fprintf(stderr, "rdlock-fail-bench: JOIN %s: %s\n", o.ls,
				strerror(-c->fd));
			goto out_setup;
		}
	}
	/* Every node is up here: they start at once. */
	if (rdl_barrier_done(tfd, nodes, base, &gen) ||
	    rdl_barrier(tfd, nodes, o.barrier_timeout, base, gen + 1, msg,
			sizeof(msg))) {
		fprintf(stderr, "rdlock-fail-bench: start barrier: %s\n", msg);
		goto out_setup;
	}
	t0 = mono_ms();
	for (; started < o.clients; started++)
		if (pthread_create(&cl[started].thread, NULL, client_run,
				   &cl[started])) {
			fprintf(stderr, "rdlock-fail-bench: pthread_create failed\n");
			failed = 1;
			break;
		}
	end = t0 + o.duration_s * 1000.0;
	for (n = 0; !failed && t0 + (n + 1.0) * o.interval_ms <= end; n++) {
		double next = t0 + (n + 1.0) * o.interval_ms, now;

		while ((now = mono_ms()) < next) {
			if (o.event && event_ms < 0 &&
			    now >= t0 + o.event_at_ms) {
				event_ms = now - t0;
				event_pid = event_start(o.event);
				if (event_pid < 0)
					failed = 1;
			}
			if (event_pid > 0 &&
			    waitpid(event_pid, &status, WNOHANG) == event_pid) {
				event_pid = 0;
				event_rc = WIFEXITED(status) ?
					   WEXITSTATUS(status) : 128;
			}
			usleep(next - now > 20 ? 20000 : (next - now) * 1000);
		}
		for (total = 0, i = 0; i < started; i++)
			total += atomic_load(&cl[i].acq);
		counts[n] = total - prev;
		prev = total;
		printf("#json {\"tool\": \"rdlock-fail-bench\", \"figure\": \"interval\"");
		printf(", \"node\": %u, \"ms\": %u, \"acq\": %llu}\n", node,
		       (n + 1) * o.interval_ms, (unsigned long long)counts[n]);
		fflush(stdout);
	}
	atomic_store(&stop, true);
	for (i = 0; i < started; i++)
		pthread_join(cl[i].thread, NULL);
	if (event_pid > 0 && waitpid(event_pid, &status, 0) == event_pid)
		event_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	for (i = 0; i < o.clients; i++) {
		errors += atomic_load(&cl[i].errors);
		if (atomic_load(&cl[i].have_err))
			fprintf(stderr, "rdlock-fail-bench: client %u: %s\n", i,
				cl[i].err);
		close(cl[i].fd);
	}
	ls_remove(&o);
	printf("# node %u: %s, %u clients, %llu acquisitions in %u s, %llu errors%s\n",
	       node, protos[o.proto], o.clients, total, o.duration_s, errors,
	       o.event ? (event_rc == 0 ? ", event done" : ", event FAILED") : "");
	if (o.json) {
		FILE *f = fopen(o.json, "w");

		if (!f) {
			fprintf(stderr, "rdlock-fail-bench: %s: %s\n", o.json,
				strerror(errno));
			return 1;
		}
		write_json(&o, f, node, nodes, t0, event_ms, event_rc, errors,
			   counts, n);
		if (fclose(f))
			failed = 1;
	}
	close(tfd);
	return failed || errors || (o.event && event_rc != 0);

out_setup:
	/* The lockspace goes, or the cluster cannot go down after us. */
	for (i = 0; i < joined; i++)
		close(cl[i].fd);
	ls_remove(&o);
	close(tfd);
	return 1;
}
