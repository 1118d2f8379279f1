/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exactly-once two-sided requests: the home's record of the last request
 * each replay slot of a peer carried, and what it does with the next one
 * (design.rst, "Exactly once"). Pure: KUnit tests the decision table.
 */
#ifndef _RDLOCK_REPLAY_H
#define _RDLOCK_REPLAY_H

#include <linux/errno.h>
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

/**
 * rdlock_replay_seal() - what became of a request its sender gave up on
 * @e: the record of the request's replay slot.
 * @requester: as for rdlock_replay_check().
 * @gen: the request's number.
 * @status: its outcome for the sender: the recorded one if it was applied,
 *	else -ECANCELED (-EALREADY for a number older than the record).
 * @value: the recorded value, or 0.
 *
 * The sender's window passed without an answer, and a home that answers
 * others may still have the request in its queue. Asked with the same slot
 * and number, the home answers what the record says, or records that the
 * request was not applied: a late copy is then answered from that record,
 * never applied. Either way the answer is final.
 *
 * Return: the verdict rdlock_replay_check() gave: %RDLOCK_REPLAY_ANSWER
 * when the request was applied (or sealed already).
 */
static inline enum rdlock_replay_verdict
rdlock_replay_seal(struct rdlock_replay_entry *e, u64 requester, u64 gen,
		   int *status, u64 *value)
{
	enum rdlock_replay_verdict v = rdlock_replay_check(e, requester, gen);

	*value = 0;
	switch (v) {
	case RDLOCK_REPLAY_ANSWER:
		*status = e->status;
		*value = e->value;
		break;
	case RDLOCK_REPLAY_STALE:
		*status = -EALREADY;
		break;
	default:
		e->requester = requester;
		e->gen = gen;
		e->status = -ECANCELED;
		e->value = 0;
		*status = -ECANCELED;
	}
	return v;
}

#endif /* _RDLOCK_REPLAY_H */
