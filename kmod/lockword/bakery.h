/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DSLR bakery lock word: the pure encoding (layer 2 of rdlock).
 *
 * Source: "Distributed Lock Management with RDMA: Decentralization without
 * Starvation" (DSLR), sections 4.4-4.9 and 5.1-5.2. Everything here is
 * arithmetic on 64-bit words: the protocol layer issues the RDMA FA/CAS/READ
 * and asks these helpers what the returned values mean.
 *
 * Base word (paper Figure 3), most significant field first::
 *
 *	63      48 47      32 31      16 15       0
 *	+---------+----------+----------+----------+
 *	|   nX    |    nS    |   maxX   |   maxS   |
 *	+---------+----------+----------+----------+
 *
 * maxX/maxS hand out tickets (FA on the low half), nX/nS count tickets that
 * are done (FA on the high half). No field may exceed COUNT_MAX - 1 + k, so
 * with the 16th bit as canary (section 4.9) an FA of a few thousand never
 * carries into the neighbouring field.
 *
 * Update-lock word (section 5.2): six counters; the paper gives no widths,
 * so shared and exclusive get 11 bits, update gets 10::
 *
 *	63  53 52  43 42  32 31  21 20  11 10   0
 *	+-----+------+------+------+------+------+
 *	| nX  |  nU  |  nS  | maxX | maxU | maxS |
 *	+-----+------+------+------+------+------+
 *
 * Both words are described by one layout (enum bakery_class: X, S, U; the
 * base word has no U field) so that every rule below is written once.
 *
 * A ticket is the word an acquiring FA returned ("prev"), its mode and its
 * slot count k (multi-slot lease, section 5.1). prev's max fields are the
 * ticket numbers: the ticket covers slots [max[own], max[own] + k) of its own
 * class, and every other class's max is how many of those were issued first.
 */
#ifndef _RDLOCK_LOCKWORD_BAKERY_H
#define _RDLOCK_LOCKWORD_BAKERY_H

#include "compat.h"

/* Base word: four 16-bit fields. */
#define BAKERY_FIELD_BITS	16
#define BAKERY_FIELD_MAX	0xffffU
#define BAKERY_NX_SHIFT		48
#define BAKERY_NS_SHIFT		32
#define BAKERY_MAXX_SHIFT	16
#define BAKERY_MAXS_SHIFT	0
/* Section 4.9: tickets stop at 2^15, the top bit of a field is the canary. */
#define BAKERY_COUNT_MAX	32768U
/*
 * Largest k of a multi-slot lease. The paper leaves the bound to the
 * implementation; 256 keeps a field at most COUNT_MAX - 1 + 256 and leaves
 * 32512 of headroom for over-limit FAs still in flight before their withdraw.
 */
#define BAKERY_K_MAX		256U
/* Value every reset to zero writes (Algorithm 3 line 7). */
#define BAKERY_RESET_TO		0ULL

/* Update-lock word: 11/10/11-bit fields, COUNT_MAX is half of each range. */
#define BAKERY_UPD_X_BITS	11
#define BAKERY_UPD_U_BITS	10
#define BAKERY_UPD_S_BITS	11
#define BAKERY_UPD_NX_SHIFT	53
#define BAKERY_UPD_NU_SHIFT	43
#define BAKERY_UPD_NS_SHIFT	32
#define BAKERY_UPD_MAXX_SHIFT	21
#define BAKERY_UPD_MAXU_SHIFT	11
#define BAKERY_UPD_MAXS_SHIFT	0
#define BAKERY_UPD_COUNT_MAX_X	(1U << (BAKERY_UPD_X_BITS - 1))
#define BAKERY_UPD_COUNT_MAX_U	(1U << (BAKERY_UPD_U_BITS - 1))
#define BAKERY_UPD_COUNT_MAX_S	(1U << (BAKERY_UPD_S_BITS - 1))
/* Keeps the 10-bit U field at most 527 plus 496 of in-flight headroom. */
#define BAKERY_UPD_K_MAX	16U

/**
 * enum bakery_class - the ticket counters of a word
 * @BAKERY_CLS_X: exclusive tickets (nX, maxX).
 * @BAKERY_CLS_S: shared tickets (nS, maxS).
 * @BAKERY_CLS_U: update tickets (nU, maxU); absent from the base word.
 * @BAKERY_NR_CLS: number of classes.
 */
enum bakery_class {
	BAKERY_CLS_X,
	BAKERY_CLS_S,
	BAKERY_CLS_U,
	BAKERY_NR_CLS,
};

#define BAKERY_CLS_BIT(c)	(1U << (c))
#define BAKERY_CLS_ALL		(BAKERY_CLS_BIT(BAKERY_CLS_X) |	\
				 BAKERY_CLS_BIT(BAKERY_CLS_S) |	\
				 BAKERY_CLS_BIT(BAKERY_CLS_U))

/**
 * enum bakery_mode - lock mode of a ticket; also selects the word layout
 * @BAKERY_SHARED: base word, shared.
 * @BAKERY_EXCLUSIVE: base word, exclusive.
 * @BAKERY_UPD_SHARED: update-lock word, shared.
 * @BAKERY_UPD_UPDATE: update-lock word, update ticket (may read at once).
 * @BAKERY_UPD_UPGRADE: the same update ticket waiting to write; its
 *	arithmetic (deltas, release) is that of @BAKERY_UPD_UPDATE.
 * @BAKERY_UPD_EXCLUSIVE: update-lock word, exclusive.
 * @BAKERY_NR_MODES: number of modes.
 */
enum bakery_mode {
	BAKERY_SHARED,
	BAKERY_EXCLUSIVE,
	BAKERY_UPD_SHARED,
	BAKERY_UPD_UPDATE,
	BAKERY_UPD_UPGRADE,
	BAKERY_UPD_EXCLUSIVE,
	BAKERY_NR_MODES,
};

/**
 * bakery_mode_upd() - does @mode use the update-lock word
 * @mode: lock mode.
 *
 * Return: true for the six-counter layout of section 5.2.
 */
static inline bool bakery_mode_upd(enum bakery_mode mode)
{
	return mode >= BAKERY_UPD_SHARED;
}

/**
 * bakery_cls_bits() - width of a class's two fields
 * @mode: any mode of the word (selects the layout).
 * @c: class.
 *
 * Return: field width in bits; 0 for a class the word does not have.
 */
static inline unsigned int bakery_cls_bits(enum bakery_mode mode,
					   enum bakery_class c)
{
	if (!bakery_mode_upd(mode))
		return c == BAKERY_CLS_U ? 0 : BAKERY_FIELD_BITS;
	switch (c) {
	case BAKERY_CLS_X:
		return BAKERY_UPD_X_BITS;
	case BAKERY_CLS_U:
		return BAKERY_UPD_U_BITS;
	default:
		return BAKERY_UPD_S_BITS;
	}
}

/**
 * bakery_n_shift() - bit position of a class's done counter (nX, nS, nU)
 * @mode: any mode of the word.
 * @c: class.
 *
 * Return: shift of the field; 0 for an absent class (its width is 0).
 */
static inline unsigned int bakery_n_shift(enum bakery_mode mode,
					  enum bakery_class c)
{
	if (!bakery_mode_upd(mode))
		return c == BAKERY_CLS_X ? BAKERY_NX_SHIFT :
		       c == BAKERY_CLS_S ? BAKERY_NS_SHIFT : 0;
	return c == BAKERY_CLS_X ? BAKERY_UPD_NX_SHIFT :
	       c == BAKERY_CLS_U ? BAKERY_UPD_NU_SHIFT : BAKERY_UPD_NS_SHIFT;
}

/**
 * bakery_max_shift() - bit position of a class's ticket counter (maxX, ...)
 * @mode: any mode of the word.
 * @c: class.
 *
 * Return: shift of the field; 0 for an absent class (its width is 0).
 */
static inline unsigned int bakery_max_shift(enum bakery_mode mode,
					    enum bakery_class c)
{
	if (!bakery_mode_upd(mode))
		return c == BAKERY_CLS_X ? BAKERY_MAXX_SHIFT :
		       c == BAKERY_CLS_S ? BAKERY_MAXS_SHIFT : 0;
	return c == BAKERY_CLS_X ? BAKERY_UPD_MAXX_SHIFT :
	       c == BAKERY_CLS_U ? BAKERY_UPD_MAXU_SHIFT :
	       BAKERY_UPD_MAXS_SHIFT;
}

/**
 * bakery_count_max() - COUNT_MAX of one class
 * @mode: any mode of the word.
 * @c: class.
 *
 * Return: the first ticket number that may not be handed out (half the
 * field's range, section 4.9); 0 for an absent class.
 */
static inline u32 bakery_count_max(enum bakery_mode mode, enum bakery_class c)
{
	unsigned int bits = bakery_cls_bits(mode, c);

	return bits ? 1U << (bits - 1) : 0;
}

/**
 * bakery_k_max() - largest slot count of a multi-slot ticket
 * @mode: any mode of the word.
 *
 * Return: %BAKERY_K_MAX or %BAKERY_UPD_K_MAX.
 */
static inline u32 bakery_k_max(enum bakery_mode mode)
{
	return bakery_mode_upd(mode) ? BAKERY_UPD_K_MAX : BAKERY_K_MAX;
}

/**
 * bakery_k_valid() - is @k an acceptable slot count
 * @mode: lock mode.
 * @k: slots requested (1 for an ordinary lease).
 *
 * Every other helper assumes a valid @k: a larger one could push a field past
 * its canary headroom and carry into its neighbour.
 *
 * Return: true if 1 <= @k <= bakery_k_max().
 */
static inline bool bakery_k_valid(enum bakery_mode mode, u32 k)
{
	return k >= 1 && k <= bakery_k_max(mode);
}

/**
 * bakery_mode_class() - the class a ticket of @mode is counted in
 * @mode: lock mode.
 *
 * Return: the class whose max field the acquiring FA bumps.
 */
static inline enum bakery_class bakery_mode_class(enum bakery_mode mode)
{
	switch (mode) {
	case BAKERY_SHARED:
	case BAKERY_UPD_SHARED:
		return BAKERY_CLS_S;
	case BAKERY_UPD_UPDATE:
	case BAKERY_UPD_UPGRADE:
		return BAKERY_CLS_U;
	default:
		return BAKERY_CLS_X;
	}
}

/**
 * bakery_wait_mask() - classes whose earlier tickets a ticket waits for
 * @mode: lock mode.
 *
 * Shared waits for earlier X (and U); update for earlier X and U but not S
 * (section 5.2: it is granted beside readers); exclusive and an upgrading
 * update ticket wait for every earlier ticket.
 *
 * Return: mask of BAKERY_CLS_BIT().
 */
static inline unsigned int bakery_wait_mask(enum bakery_mode mode)
{
	switch (mode) {
	case BAKERY_SHARED:
		return BAKERY_CLS_BIT(BAKERY_CLS_X);
	case BAKERY_UPD_SHARED:
	case BAKERY_UPD_UPDATE:
		return BAKERY_CLS_BIT(BAKERY_CLS_X) | BAKERY_CLS_BIT(BAKERY_CLS_U);
	default:
		return BAKERY_CLS_ALL;
	}
}

/**
 * bakery_strict_mask() - classes whose later tickets wait for this one
 * @mode: lock mode.
 *
 * For such a class c the counter n[c] cannot pass this ticket's number until
 * the ticket is done, so n[c] > prev.max[c] proves the ticket was skipped by
 * a reset. For any other class it proves nothing: later tickets of it may be
 * granted and released first (hazard (b): readers after a reader, update
 * tickets after a reader).
 *
 * Return: mask of BAKERY_CLS_BIT().
 */
static inline unsigned int bakery_strict_mask(enum bakery_mode mode)
{
	switch (mode) {
	case BAKERY_SHARED:
	case BAKERY_UPD_SHARED:
		return BAKERY_CLS_BIT(BAKERY_CLS_X);
	default:
		return BAKERY_CLS_ALL;
	}
}

/**
 * bakery_reset_mask() - classes a stall reset advances past earlier tickets
 * @mode: lock mode of the waiter that resets.
 *
 * The wait mask, except for an update holder whose upgrade is stuck behind
 * earlier readers: counting those readers would leave nX where it is, so
 * nothing (bakery_strict_mask()) would tell them they were revoked. Such a
 * holder gives up only its own ticket; a writer's reset, which moves nX past
 * them, is what clears expired readers.
 *
 * Return: mask of BAKERY_CLS_BIT().
 */
static inline unsigned int bakery_reset_mask(enum bakery_mode mode)
{
	if (mode == BAKERY_UPD_UPGRADE)
		return BAKERY_CLS_BIT(BAKERY_CLS_U);
	return bakery_wait_mask(mode);
}

/**
 * bakery_n() - read a done counter (nX, nS, nU) out of a word
 * @w: lock word.
 * @mode: any mode of the word.
 * @c: class.
 *
 * Return: the field, 0 for a class the word does not have.
 */
static inline u32 bakery_n(u64 w, enum bakery_mode mode, enum bakery_class c)
{
	return (w >> bakery_n_shift(mode, c)) &
	       ((1ULL << bakery_cls_bits(mode, c)) - 1);
}

/**
 * bakery_max() - read a ticket counter (maxX, maxS, maxU) out of a word
 * @w: lock word.
 * @mode: any mode of the word.
 * @c: class.
 *
 * Return: the field, 0 for a class the word does not have.
 */
static inline u32 bakery_max(u64 w, enum bakery_mode mode, enum bakery_class c)
{
	return (w >> bakery_max_shift(mode, c)) &
	       ((1ULL << bakery_cls_bits(mode, c)) - 1);
}

/**
 * struct bakery_fields - a word taken apart
 * @n: done counters by enum bakery_class.
 * @max: ticket counters by enum bakery_class.
 */
struct bakery_fields {
	u32 n[BAKERY_NR_CLS];
	u32 max[BAKERY_NR_CLS];
};

/**
 * bakery_unpack() - split a word into its counters
 * @w: lock word.
 * @mode: any mode of the word.
 * @f: filled in; absent classes read as 0.
 */
static inline void bakery_unpack(u64 w, enum bakery_mode mode,
				 struct bakery_fields *f)
{
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++) {
		f->n[c] = bakery_n(w, mode, c);
		f->max[c] = bakery_max(w, mode, c);
	}
}

/**
 * bakery_pack() - build a word from counters
 * @f: counters; each is truncated to its field width.
 * @mode: any mode of the word.
 *
 * Return: the word.
 */
static inline u64 bakery_pack(const struct bakery_fields *f,
			      enum bakery_mode mode)
{
	u64 w = 0;
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++) {
		u64 mask = (1ULL << bakery_cls_bits(mode, c)) - 1;

		w |= (f->n[c] & mask) << bakery_n_shift(mode, c);
		w |= (f->max[c] & mask) << bakery_max_shift(mode, c);
	}
	return w;
}

/**
 * bakery_word_pack() - build a base word {nX, nS, maxX, maxS}
 * @nx: exclusive done counter.
 * @ns: shared done counter.
 * @maxx: next exclusive ticket.
 * @maxs: next shared ticket.
 *
 * Return: the word, fields truncated to 16 bits.
 */
static inline u64 bakery_word_pack(u32 nx, u32 ns, u32 maxx, u32 maxs)
{
	struct bakery_fields f = {
		.n = { [BAKERY_CLS_X] = nx, [BAKERY_CLS_S] = ns },
		.max = { [BAKERY_CLS_X] = maxx, [BAKERY_CLS_S] = maxs },
	};

	return bakery_pack(&f, BAKERY_SHARED);
}

/**
 * bakery_upd_word_pack() - build an update-lock word
 * @nx: exclusive done counter.
 * @nu: update done counter.
 * @ns: shared done counter.
 * @maxx: next exclusive ticket.
 * @maxu: next update ticket.
 * @maxs: next shared ticket.
 *
 * Return: the word, fields truncated to their widths.
 */
static inline u64 bakery_upd_word_pack(u32 nx, u32 nu, u32 ns, u32 maxx,
				       u32 maxu, u32 maxs)
{
	struct bakery_fields f = {
		.n = { [BAKERY_CLS_X] = nx, [BAKERY_CLS_S] = ns,
		       [BAKERY_CLS_U] = nu },
		.max = { [BAKERY_CLS_X] = maxx, [BAKERY_CLS_S] = maxs,
			 [BAKERY_CLS_U] = maxu },
	};

	return bakery_pack(&f, BAKERY_UPD_SHARED);
}

/**
 * bakery_nx() - nX of a base word
 * @w: lock word.
 *
 * Return: the field.
 */
static inline u32 bakery_nx(u64 w)
{
	return bakery_n(w, BAKERY_SHARED, BAKERY_CLS_X);
}

/**
 * bakery_ns() - nS of a base word
 * @w: lock word.
 *
 * Return: the field.
 */
static inline u32 bakery_ns(u64 w)
{
	return bakery_n(w, BAKERY_SHARED, BAKERY_CLS_S);
}

/**
 * bakery_maxx() - maxX of a base word
 * @w: lock word.
 *
 * Return: the field.
 */
static inline u32 bakery_maxx(u64 w)
{
	return bakery_max(w, BAKERY_SHARED, BAKERY_CLS_X);
}

/**
 * bakery_maxs() - maxS of a base word
 * @w: lock word.
 *
 * Return: the field.
 */
static inline u32 bakery_maxs(u64 w)
{
	return bakery_max(w, BAKERY_SHARED, BAKERY_CLS_S);
}

/**
 * bakery_acquire_delta() - FA operand that takes a ticket of k slots
 * @mode: lock mode.
 * @k: slots (section 5.1), see bakery_k_valid().
 *
 * Return: k added to max[own class] (Algorithm 1 lines 3 and 17).
 */
static inline u64 bakery_acquire_delta(enum bakery_mode mode, u32 k)
{
	return (u64)k << bakery_max_shift(mode, bakery_mode_class(mode));
}

/**
 * bakery_release_delta() - FA operand that releases a ticket of k slots
 * @mode: lock mode of the ticket.
 * @k: slots the ticket took.
 *
 * Return: k added to n[own class] (Algorithm 3 lines 3 and 5).
 */
static inline u64 bakery_release_delta(enum bakery_mode mode, u32 k)
{
	return (u64)k << bakery_n_shift(mode, bakery_mode_class(mode));
}

/**
 * bakery_over_limit() - has any ticket counter reached COUNT_MAX
 * @w: lock word.
 * @mode: any mode of the word.
 *
 * On an FA's prev this is Algorithm 1 lines 4 and 18: the ticket must be
 * withdrawn and the acquirer backs off until the word is reset.
 *
 * Return: true if max[c] >= COUNT_MAX for some class.
 */
static inline bool bakery_over_limit(u64 w, enum bakery_mode mode)
{
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++)
		if (bakery_cls_bits(mode, c) &&
		    bakery_max(w, mode, c) >= bakery_count_max(mode, c))
			return true;
	return false;
}

/**
 * bakery_reset_responsible() - must this ticket reset the word on release
 * @prev: word the acquiring FA returned.
 * @mode: lock mode.
 * @k: slots taken.
 *
 * Generalises "prev(max) = COUNT_MAX - 1" (Algorithm 1 lines 10 and 24) to
 * k slots: the one valid ticket whose slots reach COUNT_MAX. Every later
 * ticket of the epoch is over the limit, so exactly one holder resets.
 *
 * Return: true if the ticket is valid and crosses COUNT_MAX.
 */
static inline bool bakery_reset_responsible(u64 prev, enum bakery_mode mode,
					    u32 k)
{
	enum bakery_class own = bakery_mode_class(mode);

	return !bakery_over_limit(prev, mode) &&
	       bakery_max(prev, mode, own) + k >= bakery_count_max(mode, own);
}

/**
 * bakery_reset_from() - the word the responsible holder resets from
 * @prev: word the acquiring FA returned.
 * @mode: lock mode.
 * @k: slots taken.
 *
 * Algorithm 1 lines 11 and 25: every ticket of the epoch done (n == max),
 * max frozen at the value this ticket left. After its release FA the holder
 * repeats CAS(word, this, %BAKERY_RESET_TO) until it succeeds or
 * bakery_reset_from_stale() says someone else reset the word.
 *
 * Return: {n = max = prev.max, own class + k}.
 */
static inline u64 bakery_reset_from(u64 prev, enum bakery_mode mode, u32 k)
{
	struct bakery_fields f;
	int c;

	bakery_unpack(prev, mode, &f);
	f.max[bakery_mode_class(mode)] += k;
	for (c = 0; c < BAKERY_NR_CLS; c++)
		f.n[c] = f.max[c];
	return bakery_pack(&f, mode);
}

/**
 * bakery_same_epoch() - has no reset to zero happened between two reads
 * @old: a word seen earlier.
 * @cur: a word seen later.
 * @mode: any mode of the word.
 *
 * Ticket counters only grow within an epoch, except for withdraws of
 * over-limit FAs, which exist only while the word is over the limit and keep
 * it there. Stall resets keep the max fields. So: an over-limit @old stays
 * over the limit, any other @old's max fields never go down, until a reset to
 * zero. (A word that climbs back past @old is an ABA this 16-bit encoding
 * cannot see.)
 *
 * Return: true if @cur is consistent with no reset to zero since @old.
 */
static inline bool bakery_same_epoch(u64 old, u64 cur, enum bakery_mode mode)
{
	int c;

	if (bakery_over_limit(old, mode))
		return bakery_over_limit(cur, mode);
	for (c = 0; c < BAKERY_NR_CLS; c++)
		if (bakery_max(cur, mode, c) < bakery_max(old, mode, c))
			return false;
	return true;
}

/**
 * bakery_progress() - did any ticket finish between two reads
 * @old: a word seen earlier.
 * @cur: a word seen later.
 * @mode: any mode of the word.
 *
 * Algorithm 2 restarts a waiter's stall clock when an n field changes, not
 * on any change: new arrivals move only the max fields, and counting them
 * as progress would let steady arrivals keep a dead holder from ever being
 * reset. A reset to zero changes n too (unless it was zero already, when
 * nothing was held).
 *
 * Return: true if a done counter differs.
 */
static inline bool bakery_progress(u64 old, u64 cur, enum bakery_mode mode)
{
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++)
		if (bakery_n(old, mode, c) != bakery_n(cur, mode, c))
			return true;
	return false;
}

/**
 * bakery_reset_from_stale() - should the responsible holder stop its CAS loop
 * @cur: the word the last CAS returned (or a READ).
 * @from: bakery_reset_from() of the holder's ticket.
 * @mode: lock mode.
 *
 * Algorithm 3 says "repeat until it succeeds"; if a stalled-lock reset zeroed
 * the word meanwhile the CAS can never succeed, so the loop must end.
 *
 * Return: true if the word was reset since @from was frozen.
 */
static inline bool bakery_reset_from_stale(u64 cur, u64 from,
					   enum bakery_mode mode)
{
	return !bakery_same_epoch(from, cur, mode);
}

/**
 * bakery_skipped() - was this ticket revoked by a reset
 * @prev: word the acquiring FA returned.
 * @val: a later READ (or the value an FA/CAS returned).
 * @mode: lock mode (%BAKERY_UPD_UPGRADE for an update ticket about to write).
 * @k: slots taken.
 *
 * Algorithm 2 line 3, made robust: a counter of a class that waits for us
 * (bakery_strict_mask()) passed our number, or a ticket counter went below
 * what our own FA left (reset to zero). For readers nS passing the ticket is
 * NOT evidence: later readers may have been granted and released first.
 *
 * Return: true if the caller must give up the ticket without releasing it.
 */
static inline bool bakery_skipped(u64 prev, u64 val, enum bakery_mode mode,
				  u32 k)
{
	unsigned int strict = bakery_strict_mask(mode);
	int own = bakery_mode_class(mode);
	struct bakery_fields t, v;
	int c;

	bakery_unpack(prev, mode, &t);
	bakery_unpack(val, mode, &v);
	for (c = 0; c < BAKERY_NR_CLS; c++) {
		if ((strict & BAKERY_CLS_BIT(c)) && v.n[c] > t.max[c])
			return true;
		if (v.max[c] < t.max[c] + (c == own ? k : 0))
			return true;
	}
	return false;
}

/**
 * bakery_wait_rule() - the bakery condition alone, without the reset checks
 * @prev: word the acquiring FA returned.
 * @val: the word to judge.
 * @mode: lock mode.
 *
 * Every earlier ticket of a waited-for class is done: n == prev.max for
 * strict classes, n >= prev.max for the others (an update ticket after a
 * reader may already be done when the reader looks).
 *
 * Return: true if the condition holds.
 */
static inline bool bakery_wait_rule(u64 prev, u64 val, enum bakery_mode mode)
{
	unsigned int wait = bakery_wait_mask(mode);
	unsigned int strict = bakery_strict_mask(mode);
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++) {
		u32 n = bakery_n(val, mode, c), t = bakery_max(prev, mode, c);

		if (!(wait & BAKERY_CLS_BIT(c)))
			continue;
		if ((strict & BAKERY_CLS_BIT(c)) ? n != t : n < t)
			return false;
	}
	return true;
}

/**
 * bakery_granted_at_fa() - was the lock granted by the acquiring FA itself
 * @prev: word the FA returned.
 * @mode: lock mode.
 *
 * Algorithm 1 lines 12 and 26: shared needs prev.nX == prev.maxX, exclusive
 * also prev.nS == prev.maxS. Update needs nX and nU caught up, exclusive and
 * upgrade all three. An over-limit ticket is never granted.
 *
 * Return: true if the caller holds the lock now.
 */
static inline bool bakery_granted_at_fa(u64 prev, enum bakery_mode mode)
{
	return !bakery_over_limit(prev, mode) &&
	       bakery_wait_rule(prev, prev, mode);
}

/**
 * bakery_granted() - is a waiting ticket granted in a later word
 * @prev: word the acquiring FA returned.
 * @val: a later READ.
 * @mode: lock mode (%BAKERY_UPD_UPGRADE: may the update holder write).
 * @k: slots taken.
 *
 * Algorithm 2 lines 5-10 (prev(maxX) = val(nX), and prev(maxS) = val(nS) for
 * exclusive), but false whenever bakery_skipped() says the ticket is gone
 * and for an over-limit ticket, which was never issued.
 *
 * Return: true if the caller now holds the lock in @mode.
 */
static inline bool bakery_granted(u64 prev, u64 val, enum bakery_mode mode,
				  u32 k)
{
	return !bakery_over_limit(prev, mode) &&
	       !bakery_skipped(prev, val, mode, k) &&
	       bakery_wait_rule(prev, val, mode);
}

/* Class-@c tickets issued before the ticket and not done in @val. */
static inline u32 bakery_class_ahead(u64 prev, u64 val, enum bakery_mode mode,
				     int c)
{
	u32 t = bakery_max(prev, mode, c), n = bakery_n(val, mode, c);

	return t > n ? t - n : 0;
}

/**
 * bakery_wait_count() - tickets still ahead, for leases
 * @prev: word the acquiring FA returned.
 * @val: a later READ, or @prev itself for the lease size of section 5.1.
 * @mode: any mode of the word.
 *
 * Algorithm 2 line 20: sum over classes of prev.max - val.n (0 when
 * negative). Leases scale the stall time by it.
 *
 * Return: the count.
 */
static inline u32 bakery_wait_count(u64 prev, u64 val, enum bakery_mode mode)
{
	u32 sum = 0;
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++)
		sum += bakery_class_ahead(prev, val, mode, c);
	return sum;
}

/**
 * bakery_stall_reset() - CAS value that skips the holders a waiter is stuck on
 * @prev: word the waiter's acquiring FA returned.
 * @val: the word last READ, unchanged for twice the lease; the CAS compare.
 * @mode: lock mode (%BAKERY_UPD_UPGRADE for an update holder whose upgrade
 *	is stuck behind readers).
 * @k: slots taken.
 * @new: the CAS swap value.
 *
 * Algorithm 2 lines 12-18. Each class of bakery_reset_mask() advances past
 * every earlier ticket (and past our own, which we give up: after a successful
 * CAS the caller fails and retries without releasing). A reader, whose own class is
 * not waited for, adds only its own k to nS (hazard (c)): the paper's
 * prev.maxS + 1 would also count earlier readers of its group, which the
 * new nX grants and which will release. If @val is over the limit the value
 * is %BAKERY_RESET_TO at once (the paper's second CAS "reset to zero").
 *
 * Return: false if @val shows the ticket granted or skipped (re-evaluate
 * instead) or is inconsistent with it; true with @new set otherwise.
 */
static inline bool bakery_stall_reset(u64 prev, u64 val, enum bakery_mode mode,
				      u32 k, u64 *new)
{
	unsigned int wait = bakery_reset_mask(mode);
	int own = bakery_mode_class(mode);
	struct bakery_fields t, f;
	int c;

	if (bakery_skipped(prev, val, mode, k) ||
	    bakery_wait_rule(prev, val, mode))
		return false;
	if (bakery_over_limit(val, mode)) {
		*new = BAKERY_RESET_TO;
		return true;
	}
	bakery_unpack(prev, mode, &t);
	bakery_unpack(val, mode, &f);
	for (c = 0; c < BAKERY_NR_CLS; c++) {
		u32 mine = c == own ? k : 0;

		if (wait & BAKERY_CLS_BIT(c)) {
			if (f.n[c] < t.max[c] + mine)
				f.n[c] = t.max[c] + mine;
		} else {
			f.n[c] += mine;
		}
		if (f.n[c] > f.max[c])
			return false;
	}
	*new = bakery_pack(&f, mode);
	return true;
}

/**
 * bakery_withdraw() - CAS value that takes back an over-limit ticket
 * @cur: the CAS compare: at first prev + bakery_acquire_delta(), after a
 *	failed CAS the value it returned.
 * @mode: lock mode of the withdrawn FA.
 * @k: slots of the withdrawn FA.
 * @new: the CAS swap value.
 *
 * Replaces FA(-1) of Algorithm 1 lines 5 and 19 (hazard (a)): if the word
 * was reset to zero after our FA our increment is gone, and FA(-k) would
 * borrow through every field. Our k is still in @cur exactly when removing
 * it leaves the word over the limit (the epoch's own tickets keep it there).
 *
 * Return: true with @new set; false if there is nothing left to withdraw.
 */
static inline bool bakery_withdraw(u64 cur, enum bakery_mode mode, u32 k,
				   u64 *new)
{
	u64 w = cur - bakery_acquire_delta(mode, k);

	if (bakery_max(cur, mode, bakery_mode_class(mode)) < k ||
	    !bakery_over_limit(w, mode))
		return false;
	*new = w;
	return true;
}

/**
 * bakery_release_valid() - may a release count this ticket in this word
 * @prev: word the acquiring FA returned.
 * @cur: the word a release CAS would replace.
 * @mode: lock mode (%BAKERY_UPD_UPGRADE if the update holder upgraded).
 * @k: slots taken.
 *
 * Hazard (d): the lease may have run out and a reset may have revoked the
 * ticket. The release is valid if @cur still shows the ticket granted and
 * not skipped and, for a reader, its own k slots still outstanding
 * (nS + k <= maxS). With leases the release is CAS(@cur, @cur + delta),
 * made only while this holds: an FA would show waiters the increment of a
 * revoked ticket before anything could take it back.
 *
 * Return: true if the release may count the ticket.
 */
static inline bool bakery_release_valid(u64 prev, u64 rel,
					enum bakery_mode mode, u32 k)
{
	enum bakery_class own = bakery_mode_class(mode);

	if (!bakery_granted(prev, rel, mode, k))
		return false;
	return (bakery_strict_mask(mode) & BAKERY_CLS_BIT(own)) ||
	       bakery_n(rel, mode, own) + k <= bakery_max(rel, mode, own);
}

#endif /* _RDLOCK_LOCKWORD_BAKERY_H */
