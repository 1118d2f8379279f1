// SPDX-License-Identifier: GPL-2.0
/*
 * What the benchmark tools share: latency statistics (nearest-rank
 * percentiles), a monotonic clock and argument parsing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

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

double percentile_pm(const __u32 *s, __u32 n, unsigned int pm)
{
	__u64 rank = ((__u64)n * pm + 999) / 1000;

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

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int parse_u32_arg(const char *s, __u32 *v)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *end || x > 0xffffffffULL || s[0] == '-')
		return -1;
	*v = (__u32)x;
	return 0;
}

#define BLANKS "\n\t "

/* The index of word @name among the words of @line (split in place), or -1. */
static int word_index(char *line, const char *name)
{
	char *tok, *save;
	int i;

	for (i = 0, tok = strtok_r(line, BLANKS, &save); tok;
	     i++, tok = strtok_r(NULL, BLANKS, &save))
		if (!strcmp(tok, name))
			return i;
	return -1;
}

/* Word @col (from 0) of @line (split in place), or NULL. */
static char *word_at(char *line, int col)
{
	char *tok, *save;
	int i;

	for (i = 0, tok = strtok_r(line, BLANKS, &save); tok && i < col;
	     i++, tok = strtok_r(NULL, BLANKS, &save))
		;
	return tok;
}

/*
 * The column is found by its name in the header line, so that a column
 * added to the file does not shift what we read.
 */
int bench_msgs_sent(unsigned long long *total)
{
	FILE *f = fopen("/sys/kernel/debug/rdlock/nodes", "r");
	char line[512], *tok, *end;
	unsigned long long v;
	int col = -1, ret = -1;

	if (!f)
		return -1;
	*total = 0;
	if (fgets(line, sizeof(line), f))
		col = word_index(line, "msgs_sent");
	if (col < 0)
		goto out;
	while (fgets(line, sizeof(line), f)) {
		tok = word_at(line, col);
		if (!tok)
			goto out;
		errno = 0;
		v = strtoull(tok, &end, 10);
		if (errno || end == tok || *end)
			goto out;
		*total += v;
	}
	ret = 0;
out:
	fclose(f);
	return ret;
}
