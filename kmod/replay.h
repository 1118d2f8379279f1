/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exactly-once two-sided requests: the home's record of the last request
 * each replay slot of a peer carried, and what it does with the next one
 * (design.rst, "Exactly once"). Pure: KUnit tests the decision table.
 */
#ifndef _RDLOCK_REPLAY_H
#define _RDLOCK_REPLAY_H

#include <linux/types.h>

/* The home's record of the last request a peer sent on one replay slot. */
struct rdlock_replay_entry {
	u64 requester;		/* the peer's table incarnation then */
	u64 gen;		/* 0: none */
	u64 value;
	int status;
};

/**
 * enum rdlock_replay_verdict - what the home does with a recorded request
 * @RDLOCK_REPLAY_APPLY: a request not seen yet: apply it and record it.
 * @RDLOCK_REPLAY_ANSWER: a copy of the recorded request, sent again after
 *	its connection failed: answer from the record, apply nothing.
 * @RDLOCK_REPLAY_STALE: an older request of the same sender, arriving late
 *	on a dead connection: the sender has had its outcome and moved on,
 *	so refuse it (-EALREADY) and apply nothing.
 */
enum rdlock_replay_verdict {
	RDLOCK_REPLAY_APPLY,
	RDLOCK_REPLAY_ANSWER,
	RDLOCK_REPLAY_STALE,
};

/**
 * rdlock_replay_check() - judge a request against the slot's record
 * @e: the record of the request's replay slot.
 * @requester: the table incarnation of the peer that sent it.
 * @gen: its number; a sender's numbers only grow within one incarnation.
 *
 * A sender that restarted has a new incarnation and numbers from 1 again:
 * the record of its earlier life says nothing about its requests.
 */
static inline enum rdlock_replay_verdict
rdlock_replay_check(const struct rdlock_replay_entry *e, u64 requester,
		    u64 gen)
{
	if (!e->gen || e->requester != requester || gen > e->gen)
		return RDLOCK_REPLAY_APPLY;
	return gen == e->gen ? RDLOCK_REPLAY_ANSWER : RDLOCK_REPLAY_STALE;
}

#endif /* _RDLOCK_REPLAY_H */
