// SPDX-License-Identifier: GPL-2.0
/*
 * Host build of the CQL lock-word tests: the same cases as the KUnit suite
 * (kmod/tests/cql_cases.h), reported as TAP, one line per table row and
 * per model seed. Exits non-zero if any comparison failed.
 * Build from the top of the tree with
 *	gcc -Wall -Wextra -Werror -O2 -I kmod -o <out> <this file>
 */
#include <stdio.h>
#include <stdlib.h>

#include "lockword/cql.h"
#include "tests/cql_cases.h"

static unsigned int tap_n, tap_failed;
static const char * const stat_names[CQM_NR_STATS] = {
	"granted by the enqueue", "writers notified", "readers notified by a writer",
	"refetches", "version overflow resets", "overwrite resets", "timeout resets",
	"overflowing enqueues", "enqueues past the qhead wrap", "probes valid",
	"probes obsolete", "probes overwritten", "timestamps compared across the wrap",
};

static void host_fail(struct cql_tctx *t, const char *what, u64 got, u64 want)
{
	printf("# %s: %s #%u: %s: got %#llx, want %#llx\n", t->group, t->name, t->idx, what,
	       (unsigned long long)got, (unsigned long long)want);
}

static void host_result(struct cql_tctx *t, bool ok)
{
	tap_n++;
	if (!ok)
		tap_failed++;
	printf("%sok %u %s: %s #%u\n", ok ? "" : "not ", tap_n, t->group, t->name, t->idx);
}

int main(void)
{
	static struct cql_model model;
	struct cql_tctx t = {
		.fail = host_fail,
		.result = host_result,
		.model = &model,
	};
	unsigned int i;

	printf("TAP version 13\n");
	for (i = 0; i < ARRAY_SIZE(cql_case_groups); i++) {
		t.group = cql_case_groups[i].name;
		cql_case_groups[i].run(&t);
	}
	printf("1..%u\n", tap_n);
	printf("# %lu comparisons, %lu failed\n", t.checks, t.failures);
	for (i = 0; i < CQM_NR_STATS; i++)
		printf("# model: %s: %lu\n", stat_names[i], t.stats[i]);
	printf("cql_word_test: %u passed, %u failed\n", tap_n - tap_failed, tap_failed);
	return tap_failed || t.failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
