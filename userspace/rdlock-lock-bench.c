// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-lock-bench: acquire+release latency and throughput of the lock
 * protocols (bakery and the CAS spinlock baseline) on one lock word,
 * measured in the kernel by rdlock_test.ko (RDLOCK_TEST_IOC_LOCK_BENCH),
 * next to the raw FETCH_AND_ADD latency to the same node in the same run.
 *
 * Run it on one node for uncontended figures, or on every node at once
 * against the same --node/--slot for contended ones. --json FILE writes
 * the figures and every sample, for reports that merge the nodes' samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"
#include "bench.h"
#include "../selftests/rdlock/testlib.h"

#define BARRIER_TIMEOUT_S	300

static const char *const proto_names[] = { "bakery", "caslock" };

static void usage(FILE *f)
{
	fprintf(f, "Usage: rdlock-lock-bench --node N [--slot S] [--iterations I]\n"
		   "                         [--shared] [--device PATH] [--json FILE]\n"
		   "                         [--barrier NODES]\n\n"
		   "Takes and releases a lock word on node N I times (default 500,\n"
		   "exclusive) with each protocol (bakery at slot S, the CAS spinlock\n"
		   "at S+1), then times I raw FAAs on (N, S+2),\n"
		   "and prints p50/p99/max of acquire+release, throughput, remote\n"
		   "operations per acquisition, and p50 as a multiple of 2 FAAs;\n"
		   "--json FILE: the same with p99.9 and every sample (usec);\n"
		   "--barrier NODES: NODES nodes run this at once; each protocol\n"
		   "starts on all of them together (barrier on node 0, slots S+3\n"
		   "and S+4), so that they contend for the lock all along.\n");
}

/* Sorted samples in microseconds, as a JSON array. */
static void json_samples(FILE *f, const __u32 *s, __u32 n)
{
	__u32 i;

	fprintf(f, "[");
	for (i = 0; i < n; i++)
		fprintf(f, "%s%.3f", i ? ", " : "", s[i] / 1000.0);
	fprintf(f, "]");
}

static int write_json(const char *path, const struct rdlock_test_info *info,
		      __u32 node, __u32 slot, int shared, __u32 iters,
		      __u32 *const samples[2], const struct stats *st,
		      const double *secs, const double *ops,
		      const struct stats *faa)
{
	FILE *f = fopen(path, "w");
	__u32 p;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\"tool\": \"rdlock-lock-bench\", \"node\": %u, ",
		info->node_id);
	fprintf(f, "\"home_node\": %u, \"slot\": %u, \"mode\": \"%s\", ", node,
		slot, shared ? "shared" : "exclusive");
	fprintf(f, "\"iterations\": %u, \"latency\": \"acquire_release\",\n", iters);
	fprintf(f, "  \"raw_faa\": {\"p50_us\": %.3f, \"p99_us\": %.3f},\n",
		faa->p50, faa->p99);
	fprintf(f, "  \"protocols\": [\n");
	for (p = 0; p < 2; p++) {
		fprintf(f, "    {\"proto\": \"%s\", \"seconds\": %.6f, ",
			proto_names[p], secs[p]);
		fprintf(f, "\"acq_per_s\": %.3f, \"remote_ops_per_acquire\": %.3f, ",
			iters / secs[p], ops[p]);
		fprintf(f, "\"p50_us\": %.3f, \"p99_us\": %.3f, \"p999_us\": %.3f, ",
			st[p].p50, st[p].p99, percentile_pm(samples[p], iters, 999));
		/* JSON has no inf: 0 if the FAAs were too fast to time. */
		fprintf(f, "\"max_us\": %.3f, \"p50_over_2faa\": %.3f,\n",
			st[p].max, faa->p50 > 0 ? st[p].p50 / (2 * faa->p50) : 0);
		fprintf(f, "     \"samples_us\": ");
		json_samples(f, samples[p], iters);
		fprintf(f, "}%s\n", p ? "" : ",");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'n' },
		{ "slot", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "shared", no_argument, NULL, 'S' },
		{ "device", required_argument, NULL, 'd' },
		{ "json", required_argument, NULL, 'j' },
		{ "barrier", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *device = "/dev/rdlock_test", *json = NULL;
	__u32 node = 0, slot = 0, iters = 500, barrier = 0, p, *samples;
	__u32 *kept[2];
	char msg[160];
	struct rdlock_test_info info;
	struct rdlock_test_bench fb;
	struct stats st[2], faa;
	double secs[2], ops[2];
	int opt, fd, have_node = 0, shared = 0, ret = 0;

	while ((opt = getopt_long(argc, argv, "n:s:i:Sd:j:b:h", opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'n':
			have_node = !parse_u32_arg(optarg, &node);
			if (!have_node)
				goto bad;
			break;
		case 's':
			if (parse_u32_arg(optarg, &slot))
				goto bad;
			break;
		case 'i':
			if (parse_u32_arg(optarg, &iters) || !iters ||
			    iters > RDLOCK_TEST_MAX_SAMPLES)
				goto bad;
			break;
		case 'S':
			shared = 1;
			break;
		case 'd':
			device = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'b':
			if (parse_u32_arg(optarg, &barrier) || !barrier)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (!have_node || optind != argc)
		goto bad;

	fd = open(device, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, RDLOCK_TEST_IOC_INFO, &info) < 0) {
		fprintf(stderr, "%s: %s\n", device, strerror(errno));
		return 1;
	}
	if (!slot)
		slot = info.first_free_slot;
	/* Each protocol's samples are kept (sorted) for --json. */
	samples = calloc(iters, sizeof(*samples));
	kept[0] = calloc(iters, sizeof(*samples));
	kept[1] = calloc(iters, sizeof(*samples));
	if (!samples || !kept[0] || !kept[1])
		return 1;

	for (p = 0; p < 2; p++) {
		struct rdlock_test_lock_bench b = {
			/* A word per protocol: their encodings differ. */
			.lock = { .proto = p, .mode = !shared, .node = node,
				  .slot = slot + p },
			.iterations = iters,
			.samples = (__u64)(uintptr_t)kept[p],
		};
		double t0;

		/* Without it, the nodes' runs hardly overlap. */
		if (barrier && rdl_barrier(fd, barrier, BARRIER_TIMEOUT_S,
					   slot + 3 + p, 1, msg, sizeof(msg))) {
			fprintf(stderr, "rdlock-lock-bench: %s\n", msg);
			return 1;
		}
		t0 = bench_now();
		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK_BENCH, &b) < 0) {
			fprintf(stderr, "LOCK_BENCH %s: %s\n", proto_names[p],
				strerror(errno));
			return 1;
		}
		secs[p] = bench_now() - t0;
		ops[p] = (double)b.remote_ops / iters;
		compute_stats(kept[p], iters, &st[p]);
	}

	memset(&fb, 0, sizeof(fb));
	fb.op.op = RDLOCK_TEST_OP_FAA;
	fb.op.node = node;
	fb.op.slot = slot + 2;
	fb.op.arg0 = 1;
	fb.iterations = iters;
	fb.samples = (__u64)(uintptr_t)samples;
	if (ioctl(fd, RDLOCK_TEST_IOC_BENCH, &fb) < 0) {
		fprintf(stderr, "BENCH FAA: %s\n", strerror(errno));
		return 1;
	}
	compute_stats(samples, iters, &faa);

	printf("node %u -> lock on node %u slots %u/%u, %s, %u iterations, usec\n",
	       info.node_id, node, slot, slot + 1,
	       shared ? "shared" : "exclusive", iters);
	printf("%-8s %10s %10s %10s %12s %8s %10s\n", "proto", "p50", "p99",
	       "max", "acq/s", "ops/acq", "p50/2FAA");
	for (p = 0; p < 2; p++)
		printf("%-8s %10.2f %10.2f %10.2f %12.1f %8.2f %9.2fx\n",
		       proto_names[p], st[p].p50, st[p].p99, st[p].max,
		       iters / secs[p], ops[p], st[p].p50 / (2 * faa.p50));
	printf("raw FAA p50 %.2f usec; bakery/caslock throughput %.2fx\n",
	       faa.p50, secs[1] / secs[0]);
	if (json && write_json(json, &info, node, slot, shared, iters, kept, st,
			       secs, ops, &faa))
		ret = 1;
	free(samples);
	free(kept[0]);
	free(kept[1]);
	close(fd);
	return ret;
bad:
	usage(stderr);
	return 2;
}
