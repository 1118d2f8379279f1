/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The harness of the lock-word tests, written once for both encodings: how a
 * case reports (struct word_tctx), the groups of cases and the suite of an
 * encoding (struct word_suite), and the two runners of a suite. Each
 * encoding's case file (bakery_cases.h, cql_cases.h) includes this header
 * and provides its case tables, its model and its struct word_suite only.
 *
 * The runners: in the kernel, WORD_KUNIT_SUITE() makes the KUnit suite
 * (bakery_kunit.c, cql_kunit.c), one table-driven case with a parameter for
 * each group, in the style of lib/overflow_kunit.c; on the host,
 * word_host_main() is the test program (userspace/tests/bakery_word_test.c,
 * cql_word_test.c), which reports TAP, one line per table row and per model
 * seed. The cases themselves use neither KUnit nor libc: they see the runner
 * only through the callbacks of struct word_tctx.
 */
#ifndef _RDLOCK_TESTS_WORD_HARNESS_H
#define _RDLOCK_TESTS_WORD_HARNESS_H

#include "lockword/compat.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Room for an encoding's model-checker event counters (its NR_STATS). */
#define WORD_MAX_STATS	16

/**
 * struct word_tctx - how the shared cases report, filled in by the runner
 * @priv: the runner's context (e.g. the struct kunit).
 * @fail: one comparison failed; @group, @name and @idx say where.
 * @result: one case (table row or model seed) finished.
 * @model: scratch memory for the model checker (&word_suite.model_size).
 * @group: group of the running case.
 * @name: name of the running case.
 * @idx: index of the running case within its group.
 * @checks: comparisons made so far.
 * @failures: comparisons failed so far.
 * @case_failures: @failures when the running case started.
 * @stats: model-checker event counters, by the encoding's enum of them.
 */
struct word_tctx {
	void *priv;
	void (*fail)(struct word_tctx *t, const char *what, u64 got, u64 want);
	void (*result)(struct word_tctx *t, bool ok);
	void *model;
	const char *group;
	const char *name;
	unsigned int idx;
	unsigned long checks;
	unsigned long failures;
	unsigned long case_failures;
	unsigned long stats[WORD_MAX_STATS];
};

static void word_begin(struct word_tctx *t, const char *name, unsigned int idx)
{
	t->name = name;
	t->idx = idx;
	t->case_failures = t->failures;
}

static void word_end(struct word_tctx *t)
{
	t->result(t, t->failures == t->case_failures);
}

static bool word_eq(struct word_tctx *t, const char *what, u64 got, u64 want)
{
	t->checks++;
	if (got == want)
		return true;
	t->failures++;
	t->fail(t, what, got, want);
	return false;
}

/*
 * The model checkers' pseudo-random numbers (splitmix64 from the seed in
 * *@rng): one below @below (0 if @below is 0).
 */
static u32 word_rand(u64 *rng, u32 below)
{
	u64 z = (*rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return below ? (u32)(z % below) : 0;
}

/**
 * struct word_case_group - one group of cases, one KUnit case / TAP block
 * @name: group name.
 * @run: runs every case of the group against @t.
 */
struct word_case_group {
	const char *name;
	void (*run)(struct word_tctx *t);
};

/**
 * struct word_suite - the cases of one encoding, what a runner needs
 * @name: the encoding ("bakery", "cql"), the host program's "NAME_word_test".
 * @groups: the groups of cases, in the order they run.
 * @nr_groups: how many @groups.
 * @model_size: the scratch memory its model checker needs (&word_tctx.model).
 * @stat_names: what each of the model checker's event counters counts.
 * @nr_stats: how many @stat_names (at most WORD_MAX_STATS).
 */
struct word_suite {
	const char *name;
	const struct word_case_group *groups;
	unsigned int nr_groups;
	unsigned long model_size;
	const char * const *stat_names;
	unsigned int nr_stats;
};

/*
 * The struct word_suite of the encoding @enc: its enc_case_groups, its
 * struct enc_model and its enc_stat_names.
 */
#define WORD_SUITE(enc) {						\
	.name = #enc,							\
	.groups = enc##_case_groups,					\
	.nr_groups = ARRAY_SIZE(enc##_case_groups),			\
	.model_size = sizeof(struct enc##_model),			\
	.stat_names = enc##_stat_names,					\
	.nr_stats = ARRAY_SIZE(enc##_stat_names),			\
}

#ifdef __KERNEL__
/* ---- the KUnit runner ------------------------------------------------ */

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

static void word_kunit_fail(struct word_tctx *t, const char *what, u64 got, u64 want)
{
	KUNIT_FAIL((struct kunit *)t->priv, "%s: %s #%u: %s: got %#llx, want %#llx",
		   t->group, t->name, t->idx, what, got, want);
}

static void word_kunit_result(struct word_tctx *t, bool ok)
{
}

/* The group of @s after @prev (NULL: the first), as KUNIT_ARRAY_PARAM(). */
static const void *word_kunit_next(const struct word_suite *s, const void *prev, char *desc)
{
	const struct word_case_group *g = prev ? (const struct word_case_group *)prev + 1 :
						 s->groups;

	if (g >= s->groups + s->nr_groups)
		return NULL;
	strscpy(desc, g->name, KUNIT_PARAM_DESC_SIZE);
	return g;
}

/* The group of @s that is the parameter of @test. */
static void word_kunit_run(struct kunit *test, const struct word_suite *s)
{
	const struct word_case_group *g = test->param_value;
	struct word_tctx t = {
		.priv = test,
		.fail = word_kunit_fail,
		.result = word_kunit_result,
		.group = g->name,
	};

	KUNIT_ASSERT_LE(test, s->nr_stats, WORD_MAX_STATS);
	t.model = kunit_kzalloc(test, s->model_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t.model);
	g->run(&t);
	KUNIT_EXPECT_GT(test, t.checks, 0UL);
	kunit_info(test, "%s: %lu comparisons, %lu failed\n", g->name, t.checks, t.failures);
}

/*
 * The KUnit suite @suite_name of the encoding @enc: one case,
 * @enc_group_test, with a parameter for each group of @enc_word_suite.
 */
#define WORD_KUNIT_SUITE(enc, suite_name)					\
static const void *enc##_group_gen_params(const void *prev, char *desc)	\
{										\
	return word_kunit_next(&enc##_word_suite, prev, desc);			\
}										\
										\
static void enc##_group_test(struct kunit *test)				\
{										\
	word_kunit_run(test, &enc##_word_suite);				\
}										\
										\
static struct kunit_case enc##_test_cases[] = {					\
	KUNIT_CASE_PARAM(enc##_group_test, enc##_group_gen_params),		\
	{}									\
};										\
										\
static struct kunit_suite enc##_test_suite = {					\
	.name = suite_name,							\
	.test_cases = enc##_test_cases,						\
};										\
										\
kunit_test_suite(enc##_test_suite)

#else /* !__KERNEL__ */
/* ---- the host runner ------------------------------------------------- */

#include <stdio.h>
#include <stdlib.h>

static unsigned int word_tap_n, word_tap_failed;

static void word_host_fail(struct word_tctx *t, const char *what, u64 got, u64 want)
{
	printf("# %s: %s #%u: %s: got %#llx, want %#llx\n", t->group, t->name, t->idx, what,
	       (unsigned long long)got, (unsigned long long)want);
}

static void word_host_result(struct word_tctx *t, bool ok)
{
	word_tap_n++;
	if (!ok)
		word_tap_failed++;
	printf("%sok %u %s: %s #%u\n", ok ? "" : "not ", word_tap_n, t->group, t->name, t->idx);
}

/*
 * The host program of @s: every case as a TAP line, then the comparisons,
 * the model's event counters and "NAME_word_test: P passed, F failed".
 * Returns the exit status: non-zero if any comparison failed.
 */
static int word_host_main(const struct word_suite *s)
{
	struct word_tctx t = {
		.fail = word_host_fail,
		.result = word_host_result,
	};
	unsigned int i;

	if (s->nr_stats > WORD_MAX_STATS) {
		printf("Bail out! %s_word_test: more stats than WORD_MAX_STATS\n", s->name);
		return EXIT_FAILURE;
	}
	t.model = calloc(1, s->model_size);
	if (!t.model) {
		printf("Bail out! %s_word_test: no memory for the model\n", s->name);
		return EXIT_FAILURE;
	}
	printf("TAP version 13\n");
	for (i = 0; i < s->nr_groups; i++) {
		t.group = s->groups[i].name;
		s->groups[i].run(&t);
	}
	printf("1..%u\n", word_tap_n);
	printf("# %lu comparisons, %lu failed\n", t.checks, t.failures);
	for (i = 0; i < s->nr_stats; i++)
		printf("# model: %s: %lu\n", s->stat_names[i], t.stats[i]);
	printf("%s_word_test: %u passed, %u failed\n", s->name, word_tap_n - word_tap_failed,
	       word_tap_failed);
	free(t.model);
	return word_tap_failed || t.failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
#endif /* __KERNEL__ */

#endif /* _RDLOCK_TESTS_WORD_HARNESS_H */
