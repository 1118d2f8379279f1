/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock DLM API: the poll budget of a /dev/rdlock lockspace's long waits
 * (dlm.c, rdlock_dlm_poll_budgeted()). Pure: the KUnit suite
 * rdlock_dlm_poll (module rdlock_dlm_kunit) checks it.
 */
#ifndef _RDLOCK_DLM_POLL_H
#define _RDLOCK_DLM_POLL_H

#include <linux/minmax.h>
#include <linux/types.h>

/**
 * rdlock_dlm_poll_slot() - when a budgeted poll may run
 * @now: the time now, in ns.
 * @want: the poll's own back-off, in ns.
 * @next: the budget's next free time, in ns; moved on to the slot taken
 *	plus @gap.
 * @gap: the time between two polls of the budget, in ns.
 * @limit: the longest a poll is put off beyond @want, in ns.
 *
 * The polls of a budget run one per @gap at most, each at its own
 * back-off or at the budget's next free time, whichever is later: however
 * many requests wait, they poll at most 1 / @gap times a second together,
 * as long as no poll is put off by more than @limit (when more than
 * @limit / @gap requests wait, each polls about once per @limit).
 *
 * Return: the back-off to sleep, in ns: @want to @want + @limit.
 */
static inline u64 rdlock_dlm_poll_slot(u64 now, u64 want, u64 *next, u64 gap,
				       u64 limit)
{
	u64 at = max(now + want, *next);

	at = min(at, now + want + limit);
	*next = at + gap;
	return at - now;
}

#endif /* _RDLOCK_DLM_POLL_H */
