// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the poll budget of a /dev/rdlock DLM lockspace's long
 * waits (dlm_poll.h): one poll's slot per table row, and the rate and
 * bound of many requests' polls together.
 */
#include <kunit/test.h>
#include <linux/kernel.h>

#include "../dlm_poll.h"

#define GAP	100000000ULL		/* 10 polls a second */
#define LIMIT	30000000000ULL		/* 30 s */

/* One poll: the budget before, the back-off it gets, the budget after. */
struct rdlock_poll_case {
	const char *what;
	u64 now, want, next;
	u64 slot, next_after;
};

static const struct rdlock_poll_case rdlock_poll_cases[] = {
	{ "budget free since long: own back-off", 1000000, 7000, 0,
	  7000, 1007000 + GAP },
	{ "budget free just now: own back-off", 1000000, 7000, 1000000,
	  7000, 1007000 + GAP },
	{ "budget free within the back-off: own back-off", 1000000, 7000,
	  1005000, 7000, 1007000 + GAP },
	{ "budget taken beyond the back-off: its next free time", 1000000,
	  7000, 1000000 + GAP, GAP, 1000000 + 2 * GAP },
	{ "budget taken far ahead: put off by the limit at most", 1000000,
	  7000, 1000000 + 10 * LIMIT, 7000 + LIMIT, 1007000 + LIMIT + GAP },
	{ "budget taken up to the limit exactly", 1000000, 7000,
	  1007000 + LIMIT, 7000 + LIMIT, 1007000 + LIMIT + GAP },
	{ "no back-off, budget free", 5, 0, 0, 0, 5 + GAP },
};

static void rdlock_poll_case_desc(const struct rdlock_poll_case *c,
				  char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_poll, rdlock_poll_cases, rdlock_poll_case_desc);

static void rdlock_poll_slot_test(struct kunit *test)
{
	const struct rdlock_poll_case *c = test->param_value;
	u64 next = c->next;

	KUNIT_EXPECT_EQ(test, c->slot,
			rdlock_dlm_poll_slot(c->now, c->want, &next, GAP,
					     LIMIT));
	KUNIT_EXPECT_EQ(test, c->next_after, next);
}

/*
 * Many requests that poll at once, each at a back-off below GAP: the
 * polls run GAP apart, the first at its own back-off, as long as none is
 * put off beyond LIMIT; after that each at LIMIT.
 */
static void rdlock_poll_rate_test(struct kunit *test)
{
	const u64 now = 1000000, want = 20000;
	const unsigned int within = LIMIT / GAP + 1, n = within + 100;
	u64 next = 0, slot, last = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		slot = rdlock_dlm_poll_slot(now, want, &next, GAP, LIMIT);
		if (i < within)
			KUNIT_EXPECT_EQ_MSG(test, want + i * GAP, slot,
					    "poll %u", i);
		else
			KUNIT_EXPECT_EQ_MSG(test, want + LIMIT, slot,
					    "poll %u", i);
		KUNIT_EXPECT_GE(test, slot, last);
		last = slot;
	}
}

/*
 * Polls that come GAP apart or more on their own are not put off: a
 * budget keeps a wait's own back-off when it is the budget's pace.
 */
static void rdlock_poll_paced_test(struct kunit *test)
{
	u64 next = 0, now = 1000000;
	unsigned int i;

	for (i = 0; i < 100; i++, now += 2 * GAP)
		KUNIT_EXPECT_EQ(test, GAP,
				rdlock_dlm_poll_slot(now, GAP, &next, GAP,
						     LIMIT));
}

static struct kunit_case rdlock_dlm_poll_test_cases[] = {
	KUNIT_CASE_PARAM(rdlock_poll_slot_test, rdlock_poll_gen_params),
	KUNIT_CASE(rdlock_poll_rate_test),
	KUNIT_CASE(rdlock_poll_paced_test),
	{}
};

static struct kunit_suite rdlock_dlm_poll_test_suite = {
	.name = "rdlock_dlm_poll",
	.test_cases = rdlock_dlm_poll_test_cases,
};

kunit_test_suites(&rdlock_dlm_poll_test_suite);

MODULE_DESCRIPTION("KUnit tests of rdlock's DLM poll budget");
MODULE_LICENSE("GPL");
