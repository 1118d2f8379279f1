/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmark tools share; see bench.c. */
#ifndef _RDLOCK_BENCH_H
#define _RDLOCK_BENCH_H

#include <getopt.h>
#include <stdbool.h>
#include <linux/types.h>

/* Of nanosecond samples, in microseconds. */
struct stats {
	double p50, p99, mean, min, max;	/* microseconds */
};

double percentile(const __u32 *s, __u32 n, unsigned int pct);
/* The same in thousandths (999: p99.9), of sorted samples. */
double percentile_pm(const __u32 *s, __u32 n, unsigned int pm);
/* Sorts @s. */
void compute_stats(__u32 *s, __u32 n, struct stats *st);
/* Nanoseconds on CLOCK_MONOTONIC. */
__u64 bench_now_ns(void);
/* Spins for @us microseconds: a critical section held in userspace. */
void bench_spin_us(__u32 us);
/* splitmix64: the next of the stream in *@s. */
__u64 bench_splitmix64(__u64 *s);
/* Uniform in [0, 1), from the same stream. */
double bench_rnd(__u64 *s);

/* A whole non-negative number that fits 32 bits: 0, else -1. */
int parse_u32_arg(const char *s, __u32 *v);
/* The same, from @min to @max. */
int bench_arg_u32(const char *s, __u32 min, __u32 max, __u32 *v);

/* The options the benchmarks share (a tool takes those in @which). */
#define BENCH_OPT_NODE		0x01	/* --node N (-n), below max_node if set */
#define BENCH_OPT_SLOT		0x02	/* --slot S (-s) */
#define BENCH_OPT_ITERS		0x04	/* --iterations I (-i), 1 .. max samples */
#define BENCH_OPT_DEVICE	0x08	/* --device PATH (-d) */
#define BENCH_OPT_JSON		0x10	/* --json FILE (-j) */

struct bench_args {
	unsigned int which;
	__u32 max_node;		/* 0: any */
	__u32 node, slot, iters;
	bool have_node, have_slot;
	const char *device, *json;
};

/*
 * getopt_long() over the shared options in @a->which and the tool's own
 * @extra (ending with a zeroed entry): parses a shared one into @a and goes
 * on; returns the next option of the tool's own, '?' for a bad option or
 * a shared one's bad value, -1 at the end.
 */
int bench_getopt(int argc, char **argv, const char *shortopts,
		 const struct option *extra, struct bench_args *a);
/*
 * Transport messages this node has sent to every peer so far (debugfs
 * rdlock/nodes, column msgs_sent): 0, else -1 (no debugfs, other format).
 */
int bench_msgs_sent(unsigned long long *total);

#endif /* _RDLOCK_BENCH_H */
