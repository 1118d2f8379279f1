/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TAP lines of the host unit tests (one program per test file): one
 * numbered "ok"/"not ok" line per check and a closing count.
 */
#ifndef _RDLOCK_TESTS_TAP_H
#define _RDLOCK_TESTS_TAP_H

#include <stdio.h>

static int test_nr;
static int failed;

static inline void result(int ok, const char *fmt, const char *arg)
{
	printf("%s %d ", ok ? "ok" : "not ok", ++test_nr);
	printf(fmt, arg);
	printf("\n");
	if (!ok)
		failed++;
}

/* The closing count; the program's exit status. */
static inline int tap_finish(void)
{
	printf("# %d passed, %d failed\n", test_nr - failed, failed);
	return failed ? 1 : 0;
}

#endif /* _RDLOCK_TESTS_TAP_H */
