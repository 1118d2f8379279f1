// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock-xport-bench - latency of the transport primitives, timed in the
 * kernel by rdlock_test.ko (RDLOCK_TEST_IOC_BENCH), optionally compared
 * with perftest's ib_atomic_lat on the same link.
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

#define DEFAULT_DEVICE		"/dev/rdlock_test"
#define DEFAULT_ITERATIONS	2000

struct bench_op {
	const char *name;
	__u32 op;
	__u64 arg0;
	__u64 arg1;
};

/*
 * FAA adds 1 and CAS compares with a value the slot never holds, so
 * neither depends on the slot's contents; WRITE stores a constant.
 */
static const struct bench_op bench_ops[] = {
	{ "FAA", RDLOCK_TEST_OP_FAA, 1, 0 },
	{ "CAS", RDLOCK_TEST_OP_CAS, 0x5244424e43484d4bULL, 1 },
	{ "READ", RDLOCK_TEST_OP_READ, 0, 0 },
	{ "WRITE", RDLOCK_TEST_OP_WRITE, 0x5244424e43480001ULL, 0 },
	{ "PING", RDLOCK_TEST_OP_PING, 0, 0 },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NR_OPS		ARRAY_SIZE(bench_ops)

/* ib_atomic_lat's figures, microseconds. */
struct perftest {
	double typical, p99;
	int has_p99;
};

/* Whitespace-split @line in place into at most @max tokens. */
static int split(char *line, char **tok, int max)
{
	int n = 0;
	char *save, *t;

	for (t = strtok_r(line, " \t\r\n", &save); t && n < max;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	return n;
}

static int is_number(const char *s)
{
	char *end;

	if (!*s)
		return 0;
	strtod(s, &end);
	return *end == '\0';
}

/*
 * Parse ib_atomic_lat's report. Its header (perftest 4.x) reads
 *   #bytes #iterations t_min[usec] t_max[usec] t_typical[usec]
 *   t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]
 * where "99% percentile[usec]" is one column printed as two words; warnings
 * ("Conflicting CPU frequency ...") may come between it and the data row.
 * Columns are found by name so that older versions, which print fewer,
 * still give t_typical. With -C the unit is cycles, which we refuse.
 */
static int parse_perftest(const char *path, struct perftest *pt)
{
	char line[1024], hdr[1024], *tok[32], *col[32];
	int ncol = 0, typ = -1, p99 = -1, found = 0, i, n;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "t_typical")) {
			if (strstr(line, "[cycles]")) {
				fprintf(stderr, "%s: %s\n", path,
					"latencies in cycles; run ib_atomic_lat without -C");
				fclose(f);
				return -1;
			}
			strcpy(hdr, line);
			n = split(hdr, tok, 32);
			/* Glue "99%" + "percentile[usec]" back into one name. */
			for (i = 0, ncol = 0; i < n; i++) {
				col[ncol++] = tok[i];
				if (strchr(tok[i], '%') && i + 1 < n &&
				    !strncmp(tok[i + 1], "percentile", 10))
					i++;
			}
			typ = -1;
			p99 = -1;
			for (i = 0; i < ncol; i++) {
				if (!strcmp(col[i], "t_typical[usec]"))
					typ = i;
				else if (!strcmp(col[i], "99%"))
					p99 = i;
			}
			continue;
		}
		if (typ < 0)
			continue;
		n = split(line, tok, 32);
		if (n < typ + 1 || !is_number(tok[0]) || strchr(tok[0], '.'))
			continue;
		for (i = 0; i < n && i < ncol; i++)
			if (!is_number(tok[i]))
				break;
		if (i <= typ)
			continue;
		pt->typical = strtod(tok[typ], NULL);
		pt->has_p99 = p99 >= 0 && p99 < i;
		pt->p99 = pt->has_p99 ? strtod(tok[p99], NULL) : 0;
		found = 1;
	}
	fclose(f);
	if (typ < 0) {
		fprintf(stderr, "%s: no ib_atomic_lat header with t_typical[usec]\n",
			path);
		return -1;
	}
	if (!found) {
		fprintf(stderr, "%s: no result row after the header\n", path);
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rdlock-xport-bench --node N [--iterations I] [--slot S]\n"
		"                          [--json FILE] [--compare-perftest FILE]\n"
		"                          [--device PATH]\n"
		"       rdlock-xport-bench --perftest-only FILE\n\n"
		"Times FAA, CAS, READ, WRITE and PING against node N (default %u\n"
		"iterations, slot INFO.first_free_slot) and prints p50/p99/mean in\n"
		"microseconds. --compare-perftest reads ib_atomic_lat's output and\n"
		"prints our FAA p50 / its t_typical and our FAA p99 / its 99%%.\n",
		DEFAULT_ITERATIONS);
}

static void print_compare(const struct stats *faa, const struct perftest *pt)
{
	printf("\nvs ib_atomic_lat: FAA p50 %.2f / t_typical %.2f = %.2fx",
	       faa->p50, pt->typical, pt->typical > 0 ? faa->p50 / pt->typical : 0);
	if (pt->has_p99)
		printf(", FAA p99 %.2f / 99%% %.2f = %.2fx\n", faa->p99, pt->p99,
		       pt->p99 > 0 ? faa->p99 / pt->p99 : 0);
	else
		printf(" (no 99%% column in the perftest output)\n");
}

static int write_json(const char *path, __u32 from, __u32 node, __u32 slot,
		      __u32 iters, const char *backend, const struct stats *st,
		      const struct perftest *pt)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f) {
		fprintf(stderr, "cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"tool\": \"rdlock-xport-bench\",\n  \"from_node\": %u,\n",
		from);
	fprintf(f, "  \"node\": %u,\n  \"slot\": %u,\n", node, slot);
	fprintf(f, "  \"iterations\": %u,\n  \"backend\": \"%s\",\n", iters,
		backend);
	fprintf(f, "  \"unit\": \"us\",\n  \"ops\": {\n");
	for (i = 0; i < NR_OPS; i++) {
		fprintf(f, "    \"%s\": {\"p50\": %.3f, \"p99\": %.3f, ",
			bench_ops[i].name, st[i].p50, st[i].p99);
		fprintf(f, "\"mean\": %.3f, \"min\": %.3f, \"max\": %.3f}%s\n",
			st[i].mean, st[i].min, st[i].max,
			i + 1 < NR_OPS ? "," : "");
	}
	fprintf(f, "  }");
	if (pt) {
		fprintf(f, ",\n  \"perftest\": {\"t_typical\": %.3f, \"faa_p50_ratio\": %.3f",
			pt->typical, pt->typical > 0 ? st[0].p50 / pt->typical : 0);
		if (pt->has_p99)
			fprintf(f, ", \"p99\": %.3f, \"faa_p99_ratio\": %.3f",
				pt->p99, pt->p99 > 0 ? st[0].p99 / pt->p99 : 0);
		fprintf(f, "}");
	}
	fprintf(f, "\n}\n");
	if (fclose(f)) {
		fprintf(stderr, "writing %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "compare-perftest", required_argument, NULL, 'c' },
		{ "perftest-only", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_args a = {
		.which = BENCH_OPT_NODE | BENCH_OPT_SLOT | BENCH_OPT_ITERS |
			 BENCH_OPT_DEVICE | BENCH_OPT_JSON,
		.max_node = RDLOCK_MAX_NODES, .iters = DEFAULT_ITERATIONS,
		.device = DEFAULT_DEVICE,
	};
	const char *device, *json, *perf = NULL;
	__u32 node, iters, slot, *samples;
	int perf_only = 0, opt, fd;
	struct rdlock_test_info info;
	struct stats st[NR_OPS];
	struct perftest pt;
	const char *backend;
	size_t i;

	while ((opt = bench_getopt(argc, argv, "n:i:s:j:c:P:d:h", opts,
				   &a)) != -1) {
		switch (opt) {
		case 'P':
			perf_only = 1;
			perf = optarg;
			break;
		case 'c':
			perf = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || (!a.have_node && !perf_only))
		goto bad;
	node = a.node;
	iters = a.iters;
	slot = a.slot;
	device = a.device;
	json = a.json;

	/* Check the perftest file first: no point benching if it is bad. */
	if (perf && parse_perftest(perf, &pt))
		return 1;
	if (perf_only) {
		printf("t_typical %.2f us", pt.typical);
		if (pt.has_p99)
			printf(", 99%% %.2f us", pt.p99);
		printf("\n");
		return 0;
	}

	fd = open(device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cannot open %s: %s%s\n", device, strerror(errno),
			errno == ENOENT ? " (is rdlock_test.ko loaded?)" : "");
		return 1;
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, RDLOCK_TEST_IOC_INFO, &info) < 0) {
		fprintf(stderr, "INFO: %s\n", strerror(errno));
		return 1;
	}
	if (!a.have_slot)
		slot = info.first_free_slot;
	backend = info.backend == RDLOCK_BACKEND_VERBS ? "verbs" :
		  info.backend == RDLOCK_BACKEND_TWOSIDED ? "twosided" : "none";
	samples = calloc(iters, sizeof(*samples));
	if (!samples) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}

	for (i = 0; i < NR_OPS; i++) {
		struct rdlock_test_bench b;

		memset(&b, 0, sizeof(b));
		b.op.op = bench_ops[i].op;
		b.op.node = node;
		b.op.slot = slot;
		b.op.arg0 = bench_ops[i].arg0;
		b.op.arg1 = bench_ops[i].arg1;
		b.iterations = iters;
		b.samples = (__u64)(uintptr_t)samples;
		if (ioctl(fd, RDLOCK_TEST_IOC_BENCH, &b) < 0) {
			fprintf(stderr, "BENCH %s on node %u slot %u: %s\n",
				bench_ops[i].name, node, slot, strerror(errno));
			return 1;
		}
		compute_stats(samples, iters, &st[i]);
	}
	close(fd);
	free(samples);

	printf("node %u (from node %u), slot %u, backend %s, %u iterations, usec\n",
	       node, info.node_id, slot, backend, iters);
	printf("%-6s %10s %10s %10s %10s %10s\n", "op", "p50", "p99", "mean",
	       "min", "max");
	for (i = 0; i < NR_OPS; i++)
		printf("%-6s %10.2f %10.2f %10.2f %10.2f %10.2f\n",
		       bench_ops[i].name, st[i].p50, st[i].p99, st[i].mean,
		       st[i].min, st[i].max);
	if (perf)
		print_compare(&st[0], &pt);
	if (json && write_json(json, info.node_id, node, slot, iters, backend, st,
			       perf ? &pt : NULL))
		return 1;
	return 0;

bad:
	usage(stderr);
	return 2;
}
