/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmark tools share; see bench.c. */
#ifndef _RDLOCK_BENCH_H
#define _RDLOCK_BENCH_H

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
/* Seconds on CLOCK_MONOTONIC. */
double bench_now(void);
/* A whole non-negative number that fits 32 bits: 0, else -1. */
int parse_u32_arg(const char *s, __u32 *v);
/*
 * Transport messages this node has sent to every peer so far (debugfs
 * rdlock/nodes, column msgs_sent): 0, else -1 (no debugfs, other format).
 */
int bench_msgs_sent(unsigned long long *total);

#endif /* _RDLOCK_BENCH_H */
