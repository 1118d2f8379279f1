// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the DSLR lock-word encoding (lockword/bakery.h). The cases
 * live in bakery_cases.h, shared with the host program
 * userspace/tests/bakery_word_test.c; each group there is one parameter of
 * the table-driven case below (word_harness.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "tests/bakery_cases.h"

WORD_KUNIT_SUITE(bakery, "rdlock_bakery");

MODULE_DESCRIPTION("KUnit tests for the rdlock DSLR lock-word encoding");
MODULE_LICENSE("GPL");
