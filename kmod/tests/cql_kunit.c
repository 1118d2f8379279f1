// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the CQL (DecLock) lock-word encoding (lockword/cql.h).
 * The cases live in cql_cases.h, shared with the host program
 * userspace/tests/cql_word_test.c; each group there is one parameter of the
 * table-driven case below (word_harness.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "tests/cql_cases.h"

WORD_KUNIT_SUITE(cql, "rdlock_cql");

MODULE_DESCRIPTION("KUnit tests for the rdlock CQL lock-word encoding");
MODULE_LICENSE("GPL");
