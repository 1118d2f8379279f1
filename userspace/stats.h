/* SPDX-License-Identifier: GPL-2.0 */
/* Latency statistics of the benchmark tools; see stats.c. */
#ifndef _RDLOCK_STATS_H
#define _RDLOCK_STATS_H

#include <linux/types.h>

/* Of nanosecond samples, in microseconds. */
struct stats {
	double p50, p99, mean, min, max;	/* microseconds */
};

double percentile(const __u32 *s, __u32 n, unsigned int pct);
/* Sorts @s. */
void compute_stats(__u32 *s, __u32 n, struct stats *st);

#endif /* _RDLOCK_STATS_H */
