// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-lock-bench: acquire+release latency and throughput of the lock
 * protocols (bakery, the CAS spinlock baseline and CQL) on one lock,
 * measured in the kernel by rdlock_test.ko (RDLOCK_TEST_IOC_LOCK_BENCH),
 * next to the raw FETCH_AND_ADD latency to the same node in the same run.
 *
 * Run it on one node for uncontended figures, or on every node at once
 * against the same --node/--slot for contended ones. --json FILE writes
 * the figures and every sample, for reports that merge the nodes' samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"
#include "bench.h"
#include "rdltest.h"

#define BARRIER_TIMEOUT_S	300
#define NR_PROTOS		3
/* Slots from S: bakery, caslock, FAA, a barrier per protocol, CQL. */
#define CQL_OFF			8

static const char *const proto_names[NR_PROTOS] = {
	[RDLOCK_TEST_PROTO_BAKERY] = "bakery",
	[RDLOCK_TEST_PROTO_CASLOCK] = "caslock",
	[RDLOCK_TEST_PROTO_CQL] = "cql",
};

/* The lock word (CQL: its header) of protocol @p. */
static __u32 proto_slot(__u32 slot, __u32 p)
{
	return p == RDLOCK_TEST_PROTO_CQL ? slot + CQL_OFF : slot + p;
}

/* What one protocol's loop measured on this node. */
struct proto_run {
	double secs, ops, acq_ops, rel_ops, waits, notifies;
	struct stats st;
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: rdlock-lock-bench --node N [--slot S] [--iterations I]\n"
		   "                         [--shared] [--device PATH] [--json FILE]\n"
		   "                         [--barrier NODES]\n\n"
		   "Takes and releases a lock on node N I times (default 500,\n"
		   "exclusive) with each protocol (bakery at slot S, the CAS spinlock\n"
		   "at S+1, CQL's header at S+8 and its 32 queue entries after it),\n"
		   "then times I raw FAAs on (N, S+2),\n"
		   "and prints p50/p99/max of acquire+release, throughput, remote\n"
		   "operations per acquisition (and those of the acquire and of the\n"
		   "release apart, acquisitions that waited, CQL notifications), and\n"
		   "p50 as a multiple of 2 FAAs;\n"
		   "--json FILE: the same with p99.9 and every sample (usec);\n"
		   "--barrier NODES: NODES nodes run this at once; each protocol\n"
		   "starts on all of them together (barrier on node 0, slots S+3\n"
		   "to S+5), so that they contend for the lock all along.\n");
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
		      __u32 *const samples[NR_PROTOS],
		      const struct proto_run *run, const struct stats *faa)
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
	for (p = 0; p < NR_PROTOS; p++) {
		const struct proto_run *r = &run[p];

		fprintf(f, "    {\"proto\": \"%s\", \"seconds\": %.6f, ",
			proto_names[p], r->secs);
		fprintf(f, "\"acq_per_s\": %.3f, \"remote_ops_per_acquire\": %.3f, ",
			iters / r->secs, r->ops);
		fprintf(f, "\"acquire_ops_per_acquire\": %.3f, ", r->acq_ops);
		fprintf(f, "\"release_ops_per_release\": %.3f, ", r->rel_ops);
		fprintf(f, "\"waits\": %.0f, \"notifies\": %.0f, ", r->waits,
			r->notifies);
		fprintf(f, "\"p50_us\": %.3f, \"p99_us\": %.3f, \"p999_us\": %.3f, ",
			r->st.p50, r->st.p99, percentile_pm(samples[p], iters, 999));
		/* JSON has no inf: 0 if the FAAs were too fast to time. */
		fprintf(f, "\"max_us\": %.3f, \"p50_over_2faa\": %.3f,\n",
			r->st.max, faa->p50 > 0 ? r->st.p50 / (2 * faa->p50) : 0);
		fprintf(f, "     \"samples_us\": ");
		json_samples(f, samples[p], iters);
		fprintf(f, "}%s\n", p + 1 < NR_PROTOS ? "," : "");
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
		{ "shared", no_argument, NULL, 'S' },
		{ "barrier", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_args a = {
		.which = BENCH_OPT_NODE | BENCH_OPT_SLOT | BENCH_OPT_ITERS |
			 BENCH_OPT_DEVICE | BENCH_OPT_JSON,
		.iters = 500, .device = "/dev/rdlock_test",
	};
	const char *device, *json;
	__u32 node, slot, iters, barrier = 0, p, *samples;
	__u32 *kept[NR_PROTOS];
	char msg[160];
	struct rdlock_test_info info;
	struct rdlock_test_bench fb;
	struct proto_run run[NR_PROTOS];
	struct stats faa;
	int opt, fd, shared = 0, ret = 0;

	while ((opt = bench_getopt(argc, argv, "n:s:i:Sd:j:b:h", opts,
				   &a)) != -1) {
		switch (opt) {
		case 'S':
			shared = 1;
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
	if (!a.have_node || optind != argc)
		goto bad;
	node = a.node;
	slot = a.slot;
	iters = a.iters;
	device = a.device;
	json = a.json;

	fd = open(device, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, RDLOCK_TEST_IOC_INFO, &info) < 0) {
		fprintf(stderr, "%s: %s\n", device, strerror(errno));
		return 1;
	}
	if (!slot)
		slot = info.first_free_slot;
	/* Each protocol's samples are kept (sorted) for --json. */
	samples = calloc(iters, sizeof(*samples));
	if (!samples)
		return 1;
	for (p = 0; p < NR_PROTOS; p++) {
		kept[p] = calloc(iters, sizeof(*samples));
		if (!kept[p])
			return 1;
	}

	for (p = 0; p < NR_PROTOS; p++) {
		struct rdlock_test_lock_bench b = {
			/* A word per protocol: their encodings differ. */
			.lock = { .proto = p, .mode = !shared, .node = node,
				  .slot = proto_slot(slot, p) },
			.iterations = iters,
			.samples = (__u64)(uintptr_t)kept[p],
		};
		struct proto_run *r = &run[p];
		double t0;

		/* Without it, the nodes' runs hardly overlap. */
		if (barrier && rdl_barrier(fd, barrier, BARRIER_TIMEOUT_S,
					   slot + 3 + p, 1, msg, sizeof(msg))) {
			fprintf(stderr, "rdlock-lock-bench: %s\n", msg);
			return 1;
		}
		t0 = rdl_now();
		if (ioctl(fd, RDLOCK_TEST_IOC_LOCK_BENCH, &b) < 0) {
			fprintf(stderr, "LOCK_BENCH %s: %s\n", proto_names[p],
				strerror(errno));
			return 1;
		}
		r->secs = rdl_now() - t0;
		r->ops = (double)b.remote_ops / iters;
		r->acq_ops = (double)b.acquire_ops / iters;
		r->rel_ops = (double)(b.remote_ops - b.acquire_ops) / iters;
		r->waits = b.waits;
		r->notifies = b.notifies;
		compute_stats(kept[p], iters, &r->st);
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

	printf("node %u -> lock on node %u slots %u/%u/%u, %s, %u iterations, usec\n",
	       info.node_id, node, slot, slot + 1, proto_slot(slot, 2),
	       shared ? "shared" : "exclusive", iters);
	printf("%-8s %10s %10s %10s %12s %8s %10s\n", "proto", "p50", "p99",
	       "max", "acq/s", "ops/acq", "p50/2FAA");
	for (p = 0; p < NR_PROTOS; p++)
		printf("%-8s %10.2f %10.2f %10.2f %12.1f %8.2f %9.2fx\n",
		       proto_names[p], run[p].st.p50, run[p].st.p99,
		       run[p].st.max, iters / run[p].secs, run[p].ops,
		       run[p].st.p50 / (2 * faa.p50));
	for (p = 0; p < NR_PROTOS; p++)
		printf("%-8s acquire ops %.2f, release ops %.2f, waited %.0f/%u, notified %.0f\n",
		       proto_names[p], run[p].acq_ops, run[p].rel_ops,
		       run[p].waits, iters, run[p].notifies);
	printf("raw FAA p50 %.2f usec; bakery/caslock throughput %.2fx\n",
	       faa.p50, run[1].secs / run[0].secs);
	if (json && write_json(json, &info, node, slot, shared, iters, kept, run,
			       &faa))
		ret = 1;
	free(samples);
	for (p = 0; p < NR_PROTOS; p++)
		free(kept[p]);
	close(fd);
	return ret;
bad:
	usage(stderr);
	return 2;
}
