// SPDX-License-Identifier: GPL-2.0
/* Latency statistics of the benchmark tools: nearest-rank percentiles. */
#include <stdlib.h>

#include "stats.h"

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples: never interpolated. */
double percentile(const __u32 *s, __u32 n, unsigned int pct)
{
	__u64 rank = ((__u64)n * pct + 99) / 100;

	return s[rank ? rank - 1 : 0] / 1000.0;
}

void compute_stats(__u32 *s, __u32 n, struct stats *st)
{
	double sum = 0;
	__u32 i;

	qsort(s, n, sizeof(*s), cmp_u32);
	for (i = 0; i < n; i++)
		sum += s[i];
	st->p50 = percentile(s, n, 50);
	st->p99 = percentile(s, n, 99);
	st->mean = sum / n / 1000.0;
	st->min = s[0] / 1000.0;
	st->max = s[n - 1] / 1000.0;
}
