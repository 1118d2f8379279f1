// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the CQL (DecLock) lock-word encoding (lockword/cql.h).
 * The cases live in cql_cases.h, shared with the host program
 * userspace/tests/cql_word_test.c; each group there is one parameter of the
 * table-driven case below, in the style of lib/overflow_kunit.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/test.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "lockword/cql.h"
#include "tests/cql_cases.h"

static void cql_kunit_fail(struct cql_tctx *t, const char *what, u64 got, u64 want)
{
	KUNIT_FAIL((struct kunit *)t->priv, "%s: %s #%u: %s: got %#llx, want %#llx",
		   t->group, t->name, t->idx, what, got, want);
}

static void cql_kunit_result(struct cql_tctx *t, bool ok)
{
}

static void cql_group_desc(const struct cql_case_group *g, char *desc)
{
	strscpy(desc, g->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cql_group, cql_case_groups, cql_group_desc);

static void cql_group_test(struct kunit *test)
{
	const struct cql_case_group *g = test->param_value;
	struct cql_tctx t = {
		.priv = test,
		.fail = cql_kunit_fail,
		.result = cql_kunit_result,
		.group = g->name,
	};

	t.model = kunit_kzalloc(test, sizeof(*t.model), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t.model);
	g->run(&t);
	KUNIT_EXPECT_GT(test, t.checks, 0UL);
	kunit_info(test, "%s: %lu comparisons, %lu failed\n", g->name, t.checks, t.failures);
}

static struct kunit_case cql_test_cases[] = {
	KUNIT_CASE_PARAM(cql_group_test, cql_group_gen_params),
	{}
};

static struct kunit_suite cql_test_suite = {
	.name = "rdlock_cql",
	.test_cases = cql_test_cases,
};

kunit_test_suite(cql_test_suite);

MODULE_DESCRIPTION("KUnit tests for the rdlock CQL lock-word encoding");
MODULE_LICENSE("GPL");
