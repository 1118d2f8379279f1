// SPDX-License-Identifier: GPL-2.0
/*
 * What the benchmark tools share: latency statistics (nearest-rank
 * percentiles) and argument parsing, with the options they have in common.
 * Their clock and cluster coordination are rdltest.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"
#include "bench.h"

__u64 bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void bench_spin_us(__u32 us)
{
	__u64 end;

	if (!us)
		return;
	end = bench_now_ns() + us * 1000ULL;
	while (bench_now_ns() < end)
		;
}

__u64 bench_splitmix64(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double bench_rnd(__u64 *s)
{
	return (bench_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

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

int bench_arg_u32(const char *s, __u32 min, __u32 max, __u32 *v)
{
	return parse_u32_arg(s, v) || *v < min || *v > max ? -1 : 0;
}

static const struct {
	unsigned int bit;
	struct option opt;
} bench_opts[] = {
	{ BENCH_OPT_NODE, { "node", required_argument, NULL, 'n' } },
	{ BENCH_OPT_SLOT, { "slot", required_argument, NULL, 's' } },
	{ BENCH_OPT_ITERS, { "iterations", required_argument, NULL, 'i' } },
	{ BENCH_OPT_DEVICE, { "device", required_argument, NULL, 'd' } },
	{ BENCH_OPT_JSON, { "json", required_argument, NULL, 'j' } },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_OPTS	64

/* A shared option @opt of @a, with its argument: 0, else -1. */
static int bench_opt(int opt, const char *arg, struct bench_args *a)
{
	switch (opt) {
	case 'n':
		if (parse_u32_arg(arg, &a->node) ||
		    (a->max_node && a->node >= a->max_node))
			return -1;
		a->have_node = true;
		return 0;
	case 's':
		if (parse_u32_arg(arg, &a->slot))
			return -1;
		a->have_slot = true;
		return 0;
	case 'i':
		return bench_arg_u32(arg, 1, RDLOCK_TEST_MAX_SAMPLES, &a->iters);
	case 'd':
		a->device = arg;
		return 0;
	default:
		a->json = arg;
		return 0;
	}
}

int bench_getopt(int argc, char **argv, const char *shortopts,
		 const struct option *extra, struct bench_args *a)
{
	static struct option all[MAX_OPTS];
	size_t i, n = 0;
	int opt;

	for (i = 0; i < ARRAY_SIZE(bench_opts); i++)
		if (a->which & bench_opts[i].bit)
			all[n++] = bench_opts[i].opt;
	for (i = 0; extra[i].name && n < MAX_OPTS - 1; i++)
		all[n++] = extra[i];
	memset(&all[n], 0, sizeof(all[n]));
	while ((opt = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
		for (i = 0; i < ARRAY_SIZE(bench_opts); i++)
			if (bench_opts[i].opt.val == opt &&
			    (a->which & bench_opts[i].bit))
				break;
		if (i == ARRAY_SIZE(bench_opts))
			return opt;
		if (bench_opt(opt, optarg, a))
			return '?';
	}
	return -1;
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
