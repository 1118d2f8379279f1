/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test selection for the kselftest programs: include after
 * kselftest_harness.h (it walks the harness's own test list).
 */
#ifndef _RDLOCK_SELFTEST_SELECT_H
#define _RDLOCK_SELFTEST_SELECT_H

#include <stdio.h>
#include <string.h>

/*
 * "-t TEST", any number of times: only those tests, in source order. The
 * harness of 6.1 has no such option (later ones have this one). A test
 * program whose tests each set up what they need includes this after
 * kselftest_harness.h and calls it from its main() before the harness's.
 * Returns 0, or 1 with a message for a name no test has or another
 * argument.
 */
static inline int rdl_select_tests(int argc, char **argv)
{
	struct __test_metadata *t, *next, *first = NULL, *last = NULL;
	struct __fixture_metadata *f;
	int i, found;

	for (i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "-t") || i + 1 == argc) {
			fprintf(stderr, "usage: %s [-t TEST]...\n", argv[0]);
			return 1;
		}
		found = 0;
		for (f = __fixture_list; f; f = f->next)
			for (t = f->tests; t; t = t->next)
				found |= !strcmp(t->name, argv[i + 1]);
		if (!found) {
			fprintf(stderr, "%s: no test %s\n", argv[0], argv[i + 1]);
			return 1;
		}
	}
	if (argc == 1)
		return 0;
	for (f = __fixture_list; f; f = f->next) {
		first = NULL;
		for (t = f->tests; t; t = next) {
			next = t->next;
			for (i = 2; i < argc && strcmp(t->name, argv[i]); i += 2)
				;
			if (i >= argc)
				continue;
			if (first)
				last->next = t;
			else
				first = t;
			last = t;
		}
		if (first) {
			last->next = NULL;
			first->prev = last;
		}
		f->tests = first;
	}
	return 0;
}

#endif /* _RDLOCK_SELFTEST_SELECT_H */
