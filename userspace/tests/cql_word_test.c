// SPDX-License-Identifier: GPL-2.0
/*
 * Host build of the CQL lock-word tests: the same cases as the KUnit suite
 * (kmod/tests/cql_cases.h), reported as TAP, one line per table row and
 * per model seed (kmod/tests/word_harness.h). Exits non-zero if any
 * comparison failed.
 * Build from the top of the tree with
 *	gcc -Wall -Wextra -Werror -O2 -I kmod -o <out> <this file>
 */
#include "tests/cql_cases.h"

int main(void)
{
	return word_host_main(&cql_word_suite);
}
