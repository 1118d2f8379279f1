/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test cases for the DSLR lock-word encoding (lockword/bakery.h), shared by
 * the KUnit suite and the host test program so that every case is written
 * once. Nothing here uses KUnit or libc: the runner (word_harness.h) fills
 * in a struct word_tctx whose callbacks report failed comparisons and
 * finished cases, and provides the scratch memory of the model checker;
 * bakery_word_suite is what it runs.
 *
 * Two kinds of test:
 *  - tables of hand-computed words (paper figures, field boundaries,
 *    COUNT_MAX - 1 / COUNT_MAX, k at its limit, the hazards);
 *  - a reference model: an explicit FIFO of tickets with their modes and
 *    plain per-class counters, no bit fields. Seeded pseudo-random runs of
 *    interleaved acquire, poll, release, withdraw, overflow reset and stall
 *    reset drive the model and a simulated 64-bit word side by side; after
 *    every step the word's fields must equal the model's counters and every
 *    answer of the encoding must equal the model's.
 */
#ifndef _RDLOCK_TESTS_BAKERY_CASES_H
#define _RDLOCK_TESTS_BAKERY_CASES_H

#include "lockword/bakery.h"
#include "tests/word_harness.h"

struct bakery_model;

/* Event counters, so a run shows it reached the interesting states. */
enum bkm_stat {
	BKM_ST_OVERFLOW_RESET,	/* ResetFrom CAS succeeded */
	BKM_ST_ZERO_RESET,	/* stalled over-limit word zeroed */
	BKM_ST_STALL_RESET,	/* HandleConflict CAS */
	BKM_ST_WITHDRAW_GONE,	/* withdraw found its increment reset away (a) */
	BKM_ST_SIBLINGS,	/* reader granted with nS past its ticket (b) */
	BKM_ST_REVOKED_RELEASE,	/* release of a revoked ticket refused (d) */
	BKM_ST_UPGRADE,		/* update ticket upgraded */
	BKM_ST_GRANTS,		/* tickets granted */
	BKM_NR_STATS,
};

/* Words written out field by field, independently of bakery_word_pack(). */
#define BKW(nx, ns, mx, ms)						\
	(((u64)(nx) << 48) | ((u64)(ns) << 32) | ((u64)(mx) << 16) | (u64)(ms))
#define BKU(nx, nu, ns, mx, mu, ms)					\
	(((u64)(nx) << 53) | ((u64)(nu) << 43) | ((u64)(ns) << 32) |	\
	 ((u64)(mx) << 21) | ((u64)(mu) << 11) | (u64)(ms))

#define BK_S	BAKERY_SHARED
#define BK_X	BAKERY_EXCLUSIVE
#define BK_US	BAKERY_UPD_SHARED
#define BK_UU	BAKERY_UPD_UPDATE
#define BK_UG	BAKERY_UPD_UPGRADE
#define BK_UX	BAKERY_UPD_EXCLUSIVE

/* ---- layout --------------------------------------------------------- */

struct bk_pack_case {
	const char *name;
	bool upd;
	u32 f[6];	/* base: nX nS maxX maxS; update: nX nU nS maxX maxU maxS */
	u64 word;
};

static const struct bk_pack_case bk_pack_cases[] = {
	{ "zero", false, { 0, 0, 0, 0 }, 0x0 },
	{ "fig4 {1,1,1,4}", false, { 1, 1, 1, 4 }, 0x0001000100010004ULL },
	{ "fig6 prev", false, { 29998, 32765, 30000, 32767 }, 0x752e7ffd75307fffULL },
	{ "fig6 reset-from", false, { 30000, 32768, 30000, 32768 }, 0x7530800075308000ULL },
	{ "32766/32767/32768", false, { 32766, 32767, 32768, 32767 }, 0x7ffe7fff80007fffULL },
	{ "last nX", false, { 0xffff, 0, 0, 0 }, 0xffff000000000000ULL },
	{ "last nS", false, { 0, 0xffff, 0, 0 }, 0x0000ffff00000000ULL },
	{ "last maxX", false, { 0, 0, 0xffff, 0 }, 0x00000000ffff0000ULL },
	{ "last maxS", false, { 0, 0, 0, 0xffff }, 0x000000000000ffffULL },
	{ "all last", false, { 0xffff, 0xffff, 0xffff, 0xffff }, ~0ULL },
	{ "upd fig7 {0,0,0,0,0,2}", true, { 0, 0, 0, 0, 0, 2 }, 0x2 },
	{ "upd last nX", true, { 2047, 0, 0, 0, 0, 0 }, 0xffe0000000000000ULL },
	{ "upd last nU", true, { 0, 1023, 0, 0, 0, 0 }, 0x001ff80000000000ULL },
	{ "upd last nS", true, { 0, 0, 2047, 0, 0, 0 }, 0x000007ff00000000ULL },
	{ "upd last maxX", true, { 0, 0, 0, 2047, 0, 0 }, 0x00000000ffe00000ULL },
	{ "upd last maxU", true, { 0, 0, 0, 0, 1023, 0 }, 0x00000000001ff800ULL },
	{ "upd last maxS", true, { 0, 0, 0, 0, 0, 2047 }, 0x00000000000007ffULL },
	{ "upd all last", true, { 2047, 1023, 2047, 2047, 1023, 2047 }, ~0ULL },
	{ "upd COUNT_MAX", true, { 1024, 512, 1024, 1024, 512, 1024 }, 0x8010040080100400ULL },
};

static void bk_run_pack(struct word_tctx *t)
{
	static const enum bakery_class base[] = { BAKERY_CLS_X, BAKERY_CLS_S };
	static const enum bakery_class upd[] = { BAKERY_CLS_X, BAKERY_CLS_U, BAKERY_CLS_S };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(bk_pack_cases); i++) {
		const struct bk_pack_case *p = &bk_pack_cases[i];
		const u32 *f = p->f;

		word_begin(t, p->name, i);
		if (p->upd) {
			word_eq(t, "upd pack", bakery_upd_word_pack(f[0], f[1], f[2], f[3], f[4],
								    f[5]), p->word);
			for (j = 0; j < 3; j++) {
				word_eq(t, "upd n", bakery_n(p->word, BK_US, upd[j]), f[j]);
				word_eq(t, "upd max", bakery_max(p->word, BK_US, upd[j]), f[j + 3]);
			}
		} else {
			word_eq(t, "pack", bakery_word_pack(f[0], f[1], f[2], f[3]), p->word);
			word_eq(t, "nx", bakery_nx(p->word), f[0]);
			word_eq(t, "ns", bakery_ns(p->word), f[1]);
			word_eq(t, "maxx", bakery_maxx(p->word), f[2]);
			word_eq(t, "maxs", bakery_maxs(p->word), f[3]);
			for (j = 0; j < 2; j++) {
				word_eq(t, "n", bakery_n(p->word, BK_X, base[j]), f[j]);
				word_eq(t, "max", bakery_max(p->word, BK_X, base[j]), f[j + 2]);
			}
			word_eq(t, "no U field", bakery_n(p->word, BK_S, BAKERY_CLS_U) |
				bakery_max(p->word, BK_S, BAKERY_CLS_U), 0);
		}
		word_end(t);
	}
	word_begin(t, "pack truncates to the field", i);
	word_eq(t, "pack 0x1ffff", bakery_word_pack(0x1ffff, 0, 0, 0x10001), BKW(0xffff, 0, 0, 1));
	word_eq(t, "upd pack 2048", bakery_upd_word_pack(0, 1024, 0, 0, 0, 2048), 0);
	word_end(t);
}

/* ---- deltas and k ----------------------------------------------------- */

struct bk_delta_case {
	const char *name;
	enum bakery_mode mode;
	u32 k;
	u64 acq;	/* bakery_acquire_delta() */
	u64 rel;	/* bakery_release_delta() */
	u64 before;	/* neighbours at their last value: a carry would show */
};

static const struct bk_delta_case bk_delta_cases[] = {
	{ "shared k1", BK_S, 1, 0x1, 0x100000000ULL, BKW(0xffff, 0xfffe, 0xffff, 0xfffe) },
	{ "exclusive k1", BK_X, 1, 0x10000, 0x1000000000000ULL,
	  BKW(0xfffe, 0xffff, 0xfffe, 0xffff) },
	{ "shared k=K_MAX", BK_S, BAKERY_K_MAX, 0x100, 0x10000000000ULL,
	  BKW(0xffff, 0xfeff, 0xffff, 0xfeff) },
	{ "exclusive k=K_MAX", BK_X, BAKERY_K_MAX, 0x1000000, 0x100000000000000ULL,
	  BKW(0xfeff, 0xffff, 0xfeff, 0xffff) },
	{ "upd shared k1", BK_US, 1, 0x1, 0x100000000ULL, BKU(2047, 1023, 2046, 2047, 1023, 2046) },
	{ "upd update k1", BK_UU, 1, 0x800, 0x80000000000ULL,
	  BKU(2047, 1022, 2047, 2047, 1022, 2047) },
	{ "upd upgrade is update", BK_UG, 1, 0x800, 0x80000000000ULL,
	  BKU(2047, 1022, 2047, 2047, 1022, 2047) },
	{ "upd exclusive k1", BK_UX, 1, 0x200000, 0x20000000000000ULL,
	  BKU(2046, 1023, 2047, 2046, 1023, 2047) },
	{ "upd update k=K_MAX", BK_UU, BAKERY_UPD_K_MAX, 0x8000, 0x800000000000ULL,
	  BKU(2047, 1007, 2047, 2047, 1007, 2047) },
	{ "upd exclusive k=K_MAX", BK_UX, BAKERY_UPD_K_MAX, 0x2000000, 0x200000000000000ULL,
	  BKU(2031, 1023, 2047, 2031, 1023, 2047) },
};

struct bk_k_case {
	enum bakery_mode mode;
	u32 k;
	bool valid;
};

static const struct bk_k_case bk_k_cases[] = {
	{ BK_S, 0, false }, { BK_S, 1, true }, { BK_X, BAKERY_K_MAX, true },
	{ BK_X, BAKERY_K_MAX + 1, false }, { BK_UU, BAKERY_UPD_K_MAX, true },
	{ BK_US, BAKERY_UPD_K_MAX + 1, false }, { BK_UX, 0, false },
};

/* A delta must move exactly one field by k and leave the other five alone. */
static void bk_check_one_field(struct word_tctx *t, const char *what, u64 before, u64 after,
			       enum bakery_mode mode, bool n_field, u32 k)
{
	int own = bakery_mode_class(mode);
	struct bakery_fields b, a;
	int c;

	bakery_unpack(before, mode, &b);
	bakery_unpack(after, mode, &a);
	for (c = 0; c < BAKERY_NR_CLS; c++) {
		word_eq(t, what, a.n[c], b.n[c] + (n_field && c == own ? k : 0));
		word_eq(t, what, a.max[c], b.max[c] + (!n_field && c == own ? k : 0));
	}
}

static void bk_run_delta(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_delta_cases); i++) {
		const struct bk_delta_case *d = &bk_delta_cases[i];
		u64 acq = bakery_acquire_delta(d->mode, d->k);

		word_begin(t, d->name, i);
		word_eq(t, "acquire delta", acq, d->acq);
		word_eq(t, "release delta", bakery_release_delta(d->mode, d->k), d->rel);
		bk_check_one_field(t, "acquire moves max[own] only", d->before, d->before + d->acq,
				   d->mode, false, d->k);
		bk_check_one_field(t, "release moves n[own] only", d->before, d->before + d->rel,
				   d->mode, true, d->k);
		word_end(t);
	}
	word_begin(t, "k limits", i);
	for (i = 0; i < ARRAY_SIZE(bk_k_cases); i++)
		word_eq(t, "k valid", bakery_k_valid(bk_k_cases[i].mode, bk_k_cases[i].k),
			bk_k_cases[i].valid);
	word_eq(t, "COUNT_MAX", BAKERY_COUNT_MAX, 32768);
	word_eq(t, "count max S", bakery_count_max(BK_S, BAKERY_CLS_S), 32768);
	word_eq(t, "count max X", bakery_count_max(BK_X, BAKERY_CLS_X), 32768);
	word_eq(t, "base has no U", bakery_count_max(BK_X, BAKERY_CLS_U), 0);
	word_eq(t, "upd count max X", bakery_count_max(BK_UX, BAKERY_CLS_X), 1024);
	word_eq(t, "upd count max U", bakery_count_max(BK_UU, BAKERY_CLS_U), 512);
	word_eq(t, "upd count max S", bakery_count_max(BK_US, BAKERY_CLS_S), 1024);
	word_eq(t, "reset to", BAKERY_RESET_TO, 0);
	word_end(t);
}

/* ---- what the acquiring FA's prev says ------------------------------------ */

struct bk_acq_case {
	const char *name;
	enum bakery_mode mode;
	u32 k;
	u64 prev;
	bool over;	/* withdraw and back off */
	bool resp;	/* responsible for the overflow reset */
	bool granted;	/* granted by the FA itself */
	u64 from;	/* ResetFrom, if resp */
	u32 wait;	/* bakery_wait_count(prev, prev) */
};

static const struct bk_acq_case bk_acq_cases[] = {
	{ "fig4 exclusive waits for 3", BK_X, 1, BKW(1, 1, 1, 4), 0, 0, 0, 0, 3 },
	{ "fig4 as shared is granted", BK_S, 1, BKW(1, 1, 1, 4), 0, 0, 1, 0, 3 },
	{ "fig6 shared at COUNT_MAX-1", BK_S, 1, BKW(29998, 32765, 30000, 32767), 0, 1, 0,
	  BKW(30000, 32768, 30000, 32768), 4 },
	{ "shared at 32766 k1", BK_S, 1, BKW(0, 32766, 0, 32766), 0, 0, 1, 0, 0 },
	{ "shared at 32766 k2 reaches", BK_S, 2, BKW(0, 32766, 0, 32766), 0, 1, 1,
	  BKW(0, 32768, 0, 32768), 0 },
	{ "shared at 32766 k3 passes", BK_S, 3, BKW(0, 32766, 0, 32766), 0, 1, 1,
	  BKW(0, 32769, 0, 32769), 0 },
	{ "shared at COUNT_MAX", BK_S, 1, BKW(0, 32768, 0, 32768), 1, 0, 0, 0, 0 },
	{ "shared, maxX at COUNT_MAX", BK_S, 1, BKW(32768, 5, 32768, 5), 1, 0, 0, 0, 0 },
	{ "shared above COUNT_MAX (transient)", BK_S, 1, BKW(3, 32768, 3, 32769), 1, 0, 0, 0, 1 },
	{ "shared at last value", BK_S, 1, BKW(0, 0, 0, 0xffff), 1, 0, 0, 0, 0xffff },
	{ "exclusive at COUNT_MAX-1", BK_X, 1, BKW(32767, 10, 32767, 12), 0, 1, 0,
	  BKW(32768, 12, 32768, 12), 2 },
	{ "exclusive k=K_MAX at COUNT_MAX-1", BK_X, BAKERY_K_MAX, BKW(32767, 12, 32767, 12), 0,
	  1, 1, BKW(33023, 12, 33023, 12), 0 },
	{ "exclusive k=K_MAX reaches exactly", BK_X, BAKERY_K_MAX, BKW(32512, 0, 32512, 0), 0, 1,
	  1, BKW(32768, 0, 32768, 0), 0 },
	{ "exclusive k=K_MAX one short", BK_X, BAKERY_K_MAX, BKW(32511, 0, 32511, 0), 0, 0, 1, 0,
	  0 },
	{ "exclusive, maxS at COUNT_MAX", BK_X, 1, BKW(0, 32768, 0, 32768), 1, 0, 0, 0, 0 },
	{ "upd fig7 update beside 2 readers", BK_UU, 1, BKU(0, 0, 0, 0, 0, 2), 0, 0, 1, 0, 2 },
	{ "upd fig7 upgrade waits", BK_UG, 1, BKU(0, 0, 0, 0, 0, 2), 0, 0, 0, 0, 2 },
	{ "upd fig7 exclusive waits", BK_UX, 1, BKU(0, 0, 0, 0, 0, 2), 0, 0, 0, 0, 2 },
	{ "upd fig7 shared granted", BK_US, 1, BKU(0, 0, 0, 0, 0, 2), 0, 0, 1, 0, 2 },
	{ "upd shared behind update", BK_US, 1, BKU(0, 0, 0, 0, 1, 0), 0, 0, 0, 0, 1 },
	{ "upd update at COUNT_MAX-1", BK_UU, 1, BKU(0, 511, 0, 0, 511, 0), 0, 1, 1,
	  BKU(0, 512, 0, 0, 512, 0), 0 },
	{ "upd maxU at COUNT_MAX", BK_US, 1, BKU(0, 512, 0, 0, 512, 0), 1, 0, 0, 0, 0 },
	{ "upd exclusive at COUNT_MAX-1", BK_UX, 1, BKU(1023, 0, 0, 1023, 0, 0), 0, 1, 1,
	  BKU(1024, 0, 0, 1024, 0, 0), 0 },
	{ "upd shared k=K_MAX passes", BK_US, BAKERY_UPD_K_MAX, BKU(0, 0, 1020, 0, 0, 1020), 0,
	  1, 1, BKU(0, 0, 1036, 0, 0, 1036), 0 },
	{ "upd maxS at COUNT_MAX", BK_UX, 1, BKU(0, 0, 1024, 0, 0, 1024), 1, 0, 0, 0, 0 },
};

static void bk_run_acquire(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_acq_cases); i++) {
		const struct bk_acq_case *a = &bk_acq_cases[i];

		word_begin(t, a->name, i);
		word_eq(t, "over limit", bakery_over_limit(a->prev, a->mode), a->over);
		word_eq(t, "responsible", bakery_reset_responsible(a->prev, a->mode, a->k),
			a->resp);
		word_eq(t, "granted at fa", bakery_granted_at_fa(a->prev, a->mode), a->granted);
		word_eq(t, "granted after fa", bakery_granted(a->prev, a->prev +
				bakery_acquire_delta(a->mode, a->k), a->mode, a->k),
			a->granted);
		word_eq(t, "wait count", bakery_wait_count(a->prev, a->prev, a->mode), a->wait);
		if (a->resp)
			word_eq(t, "reset from", bakery_reset_from(a->prev, a->mode, a->k),
				a->from);
		word_end(t);
	}
}

/* ---- leases: tickets still ahead on a later READ ---------------------- */

struct bk_ahead_case {
	const char *name;
	enum bakery_mode mode;
	u64 prev;
	u64 val;
	u32 wait;	/* bakery_wait_count(prev, val) */
};

static const struct bk_ahead_case bk_ahead_cases[] = {
	{ "excl behind 3 readers", BK_X, BKW(1, 1, 1, 4), BKW(1, 1, 1, 4), 3 },
	{ "excl behind 3 writers", BK_X, BKW(0, 0, 3, 0), BKW(0, 0, 3, 0), 3 },
	{ "excl behind 2 writers, 5 readers", BK_X, BKW(0, 0, 2, 5), BKW(0, 0, 2, 5), 7 },
	{ "excl, one writer done", BK_X, BKW(0, 0, 2, 5), BKW(1, 0, 2, 5), 6 },
	{ "shared behind a writer", BK_S, BKW(1, 2, 2, 2), BKW(1, 2, 2, 2), 1 },
	{ "shared behind a writer, readers", BK_S, BKW(0, 0, 2, 6), BKW(1, 3, 2, 6), 4 },
	{ "shared among readers only", BK_S, BKW(0, 0, 0, 7), BKW(0, 0, 0, 7), 7 },
	{ "upd update beside readers, behind U", BK_UU, BKU(0, 0, 0, 0, 1, 2),
	  BKU(0, 0, 0, 0, 1, 2), 3 },
	{ "upd excl behind U and 2 readers", BK_UX, BKU(0, 0, 0, 0, 1, 2),
	  BKU(0, 0, 0, 0, 1, 2), 3 },
	{ "upd upgrade behind 2 readers", BK_UG, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 0, 0, 0, 1, 2), 2 },
	{ "upd shared behind X and U", BK_US, BKU(0, 0, 0, 1, 1, 4),
	  BKU(0, 0, 1, 1, 1, 4), 5 },
};

static void bk_run_ahead(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_ahead_cases); i++) {
		const struct bk_ahead_case *a = &bk_ahead_cases[i];

		word_begin(t, a->name, i);
		word_eq(t, "wait count", bakery_wait_count(a->prev, a->val, a->mode), a->wait);
		word_end(t);
	}
}

/* ---- polling: granted / skipped on a later READ ----------------------- */

struct bk_wait_case {
	const char *name;
	enum bakery_mode mode;
	u32 k;
	u64 prev;
	u64 val;
	bool granted;
	bool skipped;
};

static const struct bk_wait_case bk_wait_cases[] = {
	{ "excl waits for readers", BK_X, 1, BKW(1, 1, 1, 4), BKW(1, 1, 2, 4), 0, 0 },
	{ "excl waits, readers queue behind", BK_X, 1, BKW(1, 1, 1, 4), BKW(1, 3, 2, 6), 0, 0 },
	{ "excl granted", BK_X, 1, BKW(1, 1, 1, 4), BKW(1, 4, 2, 6), 1, 0 },
	{ "excl skipped: nX passed", BK_X, 1, BKW(1, 1, 1, 4), BKW(2, 4, 2, 6), 0, 1 },
	{ "excl skipped: nS passed (Alg2 l3)", BK_X, 1, BKW(1, 1, 1, 4), BKW(1, 5, 2, 6), 0, 1 },
	{ "excl skipped: reset to zero", BK_X, 1, BKW(1, 1, 1, 4), 0, 0, 1 },
	{ "excl skipped: maxX below own ticket", BK_X, 1, BKW(1, 1, 1, 4), BKW(1, 4, 1, 4), 0, 1 },
	{ "shared waits for writer", BK_S, 1, BKW(1, 2, 2, 2), BKW(1, 2, 2, 3), 0, 0 },
	{ "shared granted", BK_S, 1, BKW(1, 2, 2, 2), BKW(2, 2, 2, 3), 1, 0 },
	{ "shared granted, siblings done (b)", BK_S, 1, BKW(1, 2, 2, 2), BKW(2, 5, 2, 6), 1, 0 },
	{ "shared skipped: nX passed", BK_S, 1, BKW(1, 2, 2, 2), BKW(3, 3, 3, 3), 0, 1 },
	{ "shared skipped: maxS below ticket", BK_S, 1, BKW(1, 2, 2, 2), BKW(2, 0, 2, 2), 0, 1 },
	{ "shared k3 skipped: maxS < s+k", BK_S, 3, BKW(1, 2, 2, 2), BKW(2, 2, 2, 4), 0, 1 },
	{ "shared k3 granted", BK_S, 3, BKW(1, 2, 2, 2), BKW(2, 2, 2, 5), 1, 0 },
	{ "upd update granted beside readers", BK_UU, 1, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 0, 0, 0, 1, 2), 1, 0 },
	{ "upd upgrade waits for readers", BK_UG, 1, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 0, 0, 0, 1, 2), 0, 0 },
	{ "upd upgrade granted", BK_UG, 1, BKU(0, 0, 0, 0, 0, 2), BKU(0, 0, 2, 0, 1, 2), 1, 0 },
	{ "upd update skipped: nU passed", BK_UU, 1, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 1, 2, 0, 1, 2), 0, 1 },
	{ "upd update skipped: nS passed", BK_UU, 1, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 0, 3, 0, 1, 3), 0, 1 },
	{ "upd shared waits for update", BK_US, 1, BKU(0, 0, 0, 0, 1, 0),
	  BKU(0, 0, 0, 0, 1, 1), 0, 0 },
	{ "upd shared granted", BK_US, 1, BKU(0, 0, 0, 0, 1, 0), BKU(0, 1, 0, 0, 1, 1), 1, 0 },
	{ "upd shared granted, later U done", BK_US, 1, BKU(0, 0, 0, 0, 1, 0),
	  BKU(0, 3, 0, 0, 3, 1), 1, 0 },
	{ "upd shared skipped: nX passed", BK_US, 1, BKU(0, 0, 0, 0, 1, 0),
	  BKU(1, 1, 1, 1, 1, 1), 0, 1 },
	{ "upd excl waits", BK_UX, 1, BKU(0, 0, 0, 0, 1, 2), BKU(0, 1, 1, 1, 1, 2), 0, 0 },
	{ "upd excl granted", BK_UX, 1, BKU(0, 0, 0, 0, 1, 2), BKU(0, 1, 2, 1, 1, 2), 1, 0 },
	{ "upd excl skipped: nU passed", BK_UX, 1, BKU(0, 0, 0, 0, 1, 2),
	  BKU(0, 2, 2, 1, 2, 2), 0, 1 },
};

static void bk_run_wait(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_wait_cases); i++) {
		const struct bk_wait_case *w = &bk_wait_cases[i];

		word_begin(t, w->name, i);
		word_eq(t, "granted", bakery_granted(w->prev, w->val, w->mode, w->k), w->granted);
		word_eq(t, "skipped", bakery_skipped(w->prev, w->val, w->mode, w->k), w->skipped);
		word_end(t);
	}
}

/* ---- HandleConflict's CAS on a stalled lock --------------------------- */

struct bk_stall_case {
	const char *name;
	enum bakery_mode mode;
	u32 k;
	u64 prev;
	u64 val;
	bool ok;
	u64 new;
};

static const struct bk_stall_case bk_stall_cases[] = {
	{ "fig5 exclusive", BK_X, 1, BKW(1, 1, 1, 4), BKW(1, 1, 2, 4), 1, BKW(2, 4, 2, 4) },
	{ "exclusive k2 skips own slots", BK_X, 2, BKW(1, 1, 1, 4), BKW(1, 1, 3, 4), 1,
	  BKW(3, 4, 3, 4) },
	{ "shared counts only own ticket (c)", BK_S, 1, BKW(1, 2, 2, 4), BKW(1, 2, 2, 6), 1,
	  BKW(2, 3, 2, 6) },
	{ "shared k3 counts own 3", BK_S, 3, BKW(1, 2, 2, 4), BKW(1, 2, 2, 8), 1,
	  BKW(2, 5, 2, 8) },
	{ "refused: already granted", BK_S, 1, BKW(1, 2, 2, 4), BKW(2, 2, 2, 5), 0, 0 },
	{ "refused: already skipped", BK_S, 1, BKW(1, 2, 2, 4), BKW(3, 5, 3, 5), 0, 0 },
	{ "refused: nS + k > maxS", BK_S, 1, BKW(1, 2, 2, 4), BKW(1, 6, 2, 6), 0, 0 },
	{ "over limit: straight to zero", BK_S, 1, BKW(100, 200, 101, 32767),
	  BKW(100, 200, 101, 32768), 1, 0 },
	{ "over limit with transients", BK_S, 1, BKW(100, 200, 101, 32767),
	  BKW(100, 200, 101, 32770), 1, 0 },
	{ "upd update skips X and U only", BK_UU, 1, BKU(0, 0, 0, 0, 1, 2),
	  BKU(0, 0, 0, 0, 2, 2), 1, BKU(0, 2, 0, 0, 2, 2) },
	{ "upd upgrade gives up own ticket only", BK_UG, 1, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 0, 0, 0, 1, 2), 1, BKU(0, 1, 0, 0, 1, 2) },
	{ "upd upgrade k3, readers partly out", BK_UG, 3, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 0, 1, 0, 3, 3), 1, BKU(0, 3, 1, 0, 3, 3) },
	{ "upd shared counts own ticket", BK_US, 1, BKU(0, 0, 0, 0, 1, 0),
	  BKU(0, 0, 0, 0, 1, 1), 1, BKU(0, 1, 1, 0, 1, 1) },
	{ "upd exclusive skips all", BK_UX, 1, BKU(0, 0, 0, 0, 1, 2), BKU(0, 1, 1, 1, 1, 2), 1,
	  BKU(1, 1, 2, 1, 1, 2) },
};

static void bk_run_stall(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_stall_cases); i++) {
		const struct bk_stall_case *s = &bk_stall_cases[i];
		u64 new = 0;

		word_begin(t, s->name, i);
		word_eq(t, "ok", bakery_stall_reset(s->prev, s->val, s->mode, s->k, &new), s->ok);
		word_eq(t, "new", new, s->new);
		word_end(t);
	}
}

/* ---- withdrawing an over-limit ticket (hazard a) ---------------------- */

struct bk_withdraw_case {
	const char *name;
	enum bakery_mode mode;
	u32 k;
	u64 cur;
	bool ok;
	u64 new;
};

static const struct bk_withdraw_case bk_withdraw_cases[] = {
	{ "own increment still there", BK_S, 1, BKW(7, 9, 7, 32769), 1, BKW(7, 9, 7, 32768) },
	{ "word reset to zero first", BK_S, 1, 0, 0, 0 },
	{ "reset, regrown below limit", BK_S, 1, BKW(0, 0, 0, 3), 0, 0 },
	{ "not ours: would unfreeze", BK_S, 1, BKW(0, 0, 0, 32768), 0, 0 },
	{ "exclusive, frozen by maxS", BK_X, 1, BKW(5, 32768, 6, 32768), 1,
	  BKW(5, 32768, 5, 32768) },
	{ "exclusive after reset", BK_X, 1, BKW(0, 0, 1, 0), 0, 0 },
	{ "k=K_MAX transient", BK_S, BAKERY_K_MAX, BKW(0, 0, 0, 32768 + 256), 1,
	  BKW(0, 0, 0, 32768) },
	{ "two transients, one withdrawn", BK_X, 1, BKW(32768, 0, 32770, 0), 1,
	  BKW(32768, 0, 32769, 0) },
	{ "upd update transient", BK_UU, 1, BKU(0, 512, 0, 0, 513, 0), 1,
	  BKU(0, 512, 0, 0, 512, 0) },
	{ "upd after reset", BK_UU, 1, 0, 0, 0 },
};

static void bk_run_withdraw(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_withdraw_cases); i++) {
		const struct bk_withdraw_case *w = &bk_withdraw_cases[i];
		u64 new = 0;

		word_begin(t, w->name, i);
		word_eq(t, "ok", bakery_withdraw(w->cur, w->mode, w->k, &new), w->ok);
		word_eq(t, "new", new, w->new);
		word_end(t);
	}
	word_begin(t, "paper FA(-1) after a reset borrows", i);
	word_eq(t, "FA(-1) on zero", BAKERY_RESET_TO - bakery_acquire_delta(BK_S, 1),
		~0ULL);
	word_end(t);
}

/* ---- release validity (hazard d) --------------------------------------- */

struct bk_release_case {
	const char *name;
	enum bakery_mode mode;
	u32 k;
	u64 prev;	/* the acquiring FA's prev */
	u64 cur;	/* the word a release CAS would replace */
	bool valid;
};

static const struct bk_release_case bk_release_cases[] = {
	{ "exclusive valid", BK_X, 1, BKW(1, 4, 1, 4), BKW(1, 4, 2, 6), 1 },
	{ "exclusive revoked by later reset", BK_X, 1, BKW(1, 4, 1, 4), BKW(3, 6, 3, 6), 0 },
	{ "exclusive after reset to zero", BK_X, 1, BKW(1, 4, 1, 4), 0, 0 },
	{ "exclusive one ahead (stale FA would grant)", BK_X, 1, BKW(1, 4, 1, 4),
	  BKW(2, 4, 3, 4), 0 },
	{ "shared valid, siblings released (b)", BK_S, 1, BKW(2, 0, 2, 0), BKW(2, 3, 2, 5), 1 },
	{ "shared revoked: nX passed", BK_S, 1, BKW(2, 0, 2, 0), BKW(3, 3, 3, 5), 0 },
	{ "shared revoked: slots already counted", BK_S, 1, BKW(2, 0, 2, 0), BKW(2, 5, 2, 5), 0 },
	{ "shared after reset to zero", BK_S, 1, BKW(2, 0, 2, 0), BKW(0, 0, 0, 1), 0 },
	{ "shared in a frozen epoch", BK_S, 1, BKW(29000, 32000, 29999, 32000),
	  BKW(30000, 32768, 30000, 32769), 0 },
	{ "shared k3 valid", BK_S, 3, BKW(0, 0, 0, 0), BKW(0, 0, 0, 3), 1 },
	{ "shared k3, only 2 slots left", BK_S, 3, BKW(0, 0, 0, 0), BKW(0, 1, 0, 3), 0 },
	{ "upd update valid, readers inside", BK_UU, 1, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 0, 1, 0, 1, 3), 1 },
	{ "upd upgraded valid", BK_UG, 1, BKU(0, 0, 0, 0, 0, 2), BKU(0, 0, 2, 0, 1, 3), 1 },
	{ "upd update revoked: nU passed", BK_UU, 1, BKU(0, 0, 0, 0, 0, 2),
	  BKU(0, 1, 2, 0, 1, 2), 0 },
};

static void bk_run_release(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_release_cases); i++) {
		const struct bk_release_case *r = &bk_release_cases[i];

		word_begin(t, r->name, i);
		word_eq(t, "valid", bakery_release_valid(r->prev, r->cur, r->mode, r->k), r->valid);
		word_end(t);
	}
}

/* ---- end of the responsible holder's CAS loop ------------------------- */

struct bk_stale_case {
	const char *name;
	enum bakery_mode mode;
	u64 cur;
	u64 from;
	bool stale;
};

static const struct bk_stale_case bk_stale_cases[] = {
	{ "frozen, holders still inside", BK_S, BKW(30000, 32765, 30000, 32768),
	  BKW(30000, 32768, 30000, 32768), 0 },
	{ "frozen, with a transient", BK_S, BKW(30000, 32768, 30000, 32770),
	  BKW(30000, 32768, 30000, 32768), 0 },
	{ "reset to zero by someone else", BK_S, 0, BKW(30000, 32768, 30000, 32768), 1 },
	{ "reset and regrown", BK_X, BKW(3, 3, 4, 4), BKW(32768, 12, 32768, 12), 1 },
	{ "upd frozen", BK_UU, BKU(0, 500, 0, 0, 512, 0), BKU(0, 512, 0, 0, 512, 0), 0 },
	{ "upd reset", BK_UU, BKU(0, 0, 0, 0, 2, 0), BKU(0, 512, 0, 0, 512, 0), 1 },
};

static void bk_run_stale(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_stale_cases); i++) {
		const struct bk_stale_case *s = &bk_stale_cases[i];

		word_begin(t, s->name, i);
		word_eq(t, "stale", bakery_reset_from_stale(s->cur, s->from, s->mode), s->stale);
		word_end(t);
	}
}

/* ---- progress for the stall clock ------------------------------------- */

struct bk_progress_case {
	const char *name;
	enum bakery_mode mode;
	u64 old;
	u64 cur;
	bool progress;
};

static const struct bk_progress_case bk_progress_cases[] = {
	{ "unchanged", BK_X, BKW(1, 2, 3, 4), BKW(1, 2, 3, 4), 0 },
	{ "arrivals only", BK_X, BKW(1, 2, 3, 4), BKW(1, 2, 9, 7), 0 },
	{ "over-limit FA and withdraw", BK_S, BKW(9, 32767, 9, 32768), BKW(9, 32767, 9, 32771), 0 },
	{ "exclusive released", BK_X, BKW(1, 2, 3, 4), BKW(2, 2, 3, 4), 1 },
	{ "shared released", BK_S, BKW(1, 2, 3, 4), BKW(1, 3, 3, 4), 1 },
	{ "stall reset", BK_X, BKW(1, 2, 3, 4), BKW(3, 4, 3, 4), 1 },
	{ "reset to zero", BK_X, BKW(3, 4, 3, 4), 0, 1 },
	{ "upd update released", BK_UU, BKU(0, 0, 0, 0, 1, 2), BKU(0, 1, 0, 0, 1, 2), 1 },
	{ "upd arrivals only", BK_UU, BKU(0, 0, 0, 0, 1, 2), BKU(0, 0, 0, 3, 4, 5), 0 },
};

static void bk_run_progress(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bk_progress_cases); i++) {
		const struct bk_progress_case *c = &bk_progress_cases[i];

		word_begin(t, c->name, i);
		word_eq(t, "progress", bakery_progress(c->old, c->cur, c->mode), c->progress);
		word_end(t);
	}
}

/* ---- reference model ---------------------------------------------------- */

#define BKM_ACTORS	12
#define BKM_QUEUE	64
#define BKM_STEPS	2000
#define BKM_SEEDS	500

enum bkm_state { BKM_IDLE, BKM_TICKET, BKM_WITHDRAW, BKM_RESETTING };

/* One ticket of the current epoch still outstanding, or a revoked ghost. */
struct bkm_entry {
	u32 snap[BAKERY_NR_CLS];	/* tickets of each class issued before it */
	u32 k;
	u8 mode;
	u8 cls;
	bool uncounted;		/* revoked, its slots never counted */
	s8 actor;		/* -1 once its owner has gone */
};

struct bkm_actor {
	u8 state;
	u8 mode;
	bool revoked;
	bool granted;
	bool responsible;
	u32 k;
	u32 epoch;
	u64 prev;
	u64 from;
};

/**
 * struct bakery_model - the model checker's state
 * @rng: splitmix64 state.
 * @word: the simulated lock word.
 * @layout: %BAKERY_SHARED for the base word, %BAKERY_UPD_SHARED for update.
 * @epoch: bumped by every reset to zero.
 * @issued: slots handed out this epoch, by class.
 * @done: slots released or counted by a reset, by class.
 * @transient: slots of over-limit FAs not yet withdrawn, by class.
 * @nq: entries in @q.
 * @q: outstanding tickets in issue order.
 * @a: the actors.
 */
struct bakery_model {
	u64 rng;
	u64 word;
	enum bakery_mode layout;
	u32 epoch;
	u32 issued[BAKERY_NR_CLS];
	u32 done[BAKERY_NR_CLS];
	u32 transient[BAKERY_NR_CLS];
	unsigned int nq;
	struct bkm_entry q[BKM_QUEUE];
	struct bkm_actor a[BKM_ACTORS];
};

static u32 bkm_rand(struct bakery_model *m, u32 below)
{
	return word_rand(&m->rng, below);
}

/*
 * The specification, in words: does a ticket of mode @later wait for an
 * earlier ticket of class @earlier? Readers wait for writers (and update
 * holders); update tickets wait for writers and update tickets; writers and
 * upgrading update tickets wait for everybody.
 */
static bool bkm_waits(enum bakery_mode later, int earlier)
{
	if (later == BAKERY_SHARED)
		return earlier == BAKERY_CLS_X;
	if (later == BAKERY_UPD_SHARED || later == BAKERY_UPD_UPDATE)
		return earlier == BAKERY_CLS_X || earlier == BAKERY_CLS_U;
	return true;
}

/* The mode a later ticket of class @c is taken in. */
static enum bakery_mode bkm_class_mode(struct bakery_model *m, int c)
{
	bool upd = m->layout == BAKERY_UPD_SHARED;

	if (c == BAKERY_CLS_X)
		return upd ? BAKERY_UPD_EXCLUSIVE : BAKERY_EXCLUSIVE;
	if (c == BAKERY_CLS_U)
		return BAKERY_UPD_UPDATE;
	return upd ? BAKERY_UPD_SHARED : BAKERY_SHARED;
}

static bool bkm_over(struct bakery_model *m)
{
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++)
		if (bakery_cls_bits(m->layout, c) &&
		    m->issued[c] >= bakery_count_max(m->layout, c))
			return true;
	return false;
}

static int bkm_find(struct bakery_model *m, int actor)
{
	unsigned int i;

	for (i = 0; i < m->nq; i++)
		if (m->q[i].actor == actor)
			return i;
	return -1;
}

static void bkm_remove(struct bakery_model *m, unsigned int idx)
{
	for (; idx + 1 < m->nq; idx++)
		m->q[idx] = m->q[idx + 1];
	m->nq--;
}

/* Is the ticket at @idx, in @mode, still behind an earlier one? */
static bool bkm_blocked(struct bakery_model *m, int idx, enum bakery_mode mode)
{
	int j;

	for (j = 0; j < idx; j++)
		if (bkm_waits(mode, m->q[j].cls))
			return true;
	return false;
}

static void bkm_leave(struct bakery_model *m, int i)
{
	int idx = bkm_find(m, i);

	if (idx >= 0)
		m->q[idx].actor = -1;
	m->a[i].state = BKM_IDLE;
}

static void bkm_progress(struct word_tctx *t, struct bakery_model *m, int i);

/* Every ticket of the epoch is revoked; the holders find out at once. */
static void bkm_zero(struct word_tctx *t, struct bakery_model *m)
{
	unsigned int i;
	int c;

	m->word = BAKERY_RESET_TO;
	m->epoch++;
	for (i = 0; i < m->nq; i++)
		if (m->q[i].actor >= 0)
			m->a[m->q[i].actor].revoked = true;
	m->nq = 0;
	for (c = 0; c < BAKERY_NR_CLS; c++) {
		m->issued[c] = 0;
		m->done[c] = 0;
		m->transient[c] = 0;
	}
	/* Done now: a word that climbed back past a ticket is an ABA. */
	for (i = 0; i < BKM_ACTORS; i++)
		if (m->a[i].state != BKM_IDLE)
			bkm_progress(t, m, i);
}

static void bkm_acquire(struct word_tctx *t, struct bakery_model *m, int i,
			enum bakery_mode mode, u32 k)
{
	struct bkm_actor *a = &m->a[i];
	int cls = bakery_mode_class(mode);
	struct bkm_entry *e;
	u32 wait = 0;
	bool resp;
	int c;

	a->prev = m->word;
	m->word += bakery_acquire_delta(mode, k);
	a->mode = mode;
	a->k = k;
	a->epoch = m->epoch;
	a->revoked = false;
	word_eq(t, "over limit", bakery_over_limit(a->prev, mode), bkm_over(m));
	if (bkm_over(m)) {
		m->transient[cls] += k;
		word_eq(t, "over-limit ticket granted", bakery_granted_at_fa(a->prev, mode), 0);
		a->state = BKM_WITHDRAW;
		return;
	}
	for (c = 0; c < BAKERY_NR_CLS; c++)
		wait += m->issued[c] - m->done[c];
	word_eq(t, "wait count", bakery_wait_count(a->prev, a->prev, mode), wait);
	resp = m->issued[cls] + k >= bakery_count_max(mode, cls);
	word_eq(t, "responsible", bakery_reset_responsible(a->prev, mode, k), resp);
	e = &m->q[m->nq++];
	for (c = 0; c < BAKERY_NR_CLS; c++)
		e->snap[c] = m->issued[c];
	e->k = k;
	e->mode = mode;
	e->cls = cls;
	e->uncounted = false;
	e->actor = i;
	m->issued[cls] += k;
	if (resp) {
		a->from = bakery_reset_from(a->prev, mode, k);
		for (c = 0; c < BAKERY_NR_CLS; c++) {
			word_eq(t, "reset from n", bakery_n(a->from, mode, c), m->issued[c]);
			word_eq(t, "reset from max", bakery_max(a->from, mode, c), m->issued[c]);
		}
	}
	a->responsible = resp;
	a->granted = !bkm_blocked(m, m->nq - 1, mode);
	word_eq(t, "granted at fa", bakery_granted_at_fa(a->prev, mode), a->granted);
	word_eq(t, "granted after fa", bakery_granted(a->prev, m->word, mode, k), a->granted);
	a->state = BKM_TICKET;
}

static void bkm_release(struct word_tctx *t, struct bakery_model *m, int i)
{
	struct bkm_actor *a = &m->a[i];
	int idx = bkm_find(m, i);

	/* A release by CAS: it applies only to a word that shows it valid. */
	word_eq(t, "release valid", bakery_release_valid(a->prev, m->word, a->mode, a->k),
		!a->revoked);
	if (!a->revoked) {
		m->word += bakery_release_delta(a->mode, a->k);
		m->done[bakery_mode_class(a->mode)] += a->k;
		bkm_remove(m, idx);
		a->state = a->responsible ? BKM_RESETTING : BKM_IDLE;
		return;
	}
	t->stats[BKM_ST_REVOKED_RELEASE]++;
	bkm_leave(m, i);
}

static void bkm_poll(struct word_tctx *t, struct bakery_model *m, int i)
{
	struct bkm_actor *a = &m->a[i];
	int idx = bkm_find(m, i);
	enum bakery_mode mode = a->mode;
	int own;
	bool g;
	u64 new;

	word_eq(t, "skipped", bakery_skipped(a->prev, m->word, mode, a->k), a->revoked);
	if (a->revoked) {
		word_eq(t, "revoked ticket granted",
			bakery_granted(a->prev, m->word, mode, a->k), 0);
		bkm_leave(m, i);
		return;
	}
	/* An update holder asks whether it may write. */
	if (a->granted)
		mode = BAKERY_UPD_UPGRADE;
	g = !bkm_blocked(m, idx, mode);
	word_eq(t, "granted", bakery_granted(a->prev, m->word, mode, a->k), g);
	if (!g)
		return;
	word_eq(t, "stall reset of a granted ticket",
		bakery_stall_reset(a->prev, m->word, mode, a->k, &new), 0);
	if (mode == BAKERY_UPD_UPGRADE) {
		a->mode = mode;
		m->q[idx].mode = mode;
		t->stats[BKM_ST_UPGRADE]++;
		return;
	}
	own = bakery_mode_class(mode);
	if (bakery_n(m->word, mode, own) > bakery_max(a->prev, mode, own))
		t->stats[BKM_ST_SIBLINGS]++;
	t->stats[BKM_ST_GRANTS]++;
	a->granted = true;
}

/*
 * A waiter found the word unchanged for two leases and resets it. In the
 * model: every earlier ticket of a class the waiter waits for is revoked and
 * counted; an earlier ticket of another class is revoked, uncounted, if a
 * ticket that it holds back lies between it and the waiter (the skip passes
 * it); the waiter gives up its own ticket, counted. An update holder stuck
 * before its upgrade only gives up its own ticket.
 */
static void bkm_stall(struct word_tctx *t, struct bakery_model *m, int i)
{
	struct bkm_actor *a = &m->a[i];
	enum bakery_mode mode = a->mode;
	int idx = bkm_find(m, i), j, c;
	struct bkm_entry *w;
	u64 new = 0;

	if (a->granted)
		mode = BAKERY_UPD_UPGRADE;	/* only update holders get here */
	if (!bkm_blocked(m, idx, mode))
		return;
	word_eq(t, "stall reset ok", bakery_stall_reset(a->prev, m->word, mode, a->k, &new), 1);
	t->stats[BKM_ST_STALL_RESET]++;
	if (bkm_over(m)) {
		word_eq(t, "stall reset over limit", new, BAKERY_RESET_TO);
		a->state = BKM_IDLE;
		bkm_remove(m, idx);
		t->stats[BKM_ST_ZERO_RESET]++;
		bkm_zero(t, m);
		return;
	}
	m->word = new;
	w = &m->q[idx];
	for (j = 0; j < idx && mode != BAKERY_UPD_UPGRADE; j++) {
		struct bkm_entry *e = &m->q[j];

		if (bkm_waits(mode, e->cls)) {
			m->done[e->cls] += e->k;
			e->k = 0;	/* counted; removed below */
		} else {
			for (c = 0; c < BAKERY_NR_CLS; c++)
				if (bkm_waits(mode, c) &&
				    bkm_waits(bkm_class_mode(m, c), e->cls) &&
				    (w->snap[c] > e->snap[c] || c == w->cls))
					e->uncounted = true;
			if (!e->uncounted)
				continue;
		}
		if (e->actor >= 0)
			m->a[e->actor].revoked = true;
	}
	m->done[w->cls] += w->k;
	a->state = BKM_IDLE;
	bkm_remove(m, idx);
	for (j = idx - 1; j >= 0; j--)
		if (!m->q[j].k)
			bkm_remove(m, j);
}

static void bkm_progress(struct word_tctx *t, struct bakery_model *m, int i)
{
	struct bkm_actor *a = &m->a[i];
	u64 new = 0;
	bool ok;
	int c;

	switch (a->state) {
	case BKM_TICKET:
		if (a->granted && (a->revoked || a->mode != BAKERY_UPD_UPDATE ||
				   bkm_rand(m, 2)))
			bkm_release(t, m, i);
		else
			bkm_poll(t, m, i);
		break;
	case BKM_WITHDRAW:
		ok = bakery_withdraw(m->word, a->mode, a->k, &new);
		word_eq(t, "withdraw possible", ok, a->epoch == m->epoch);
		if (ok && a->epoch == m->epoch) {
			m->word = new;
			m->transient[bakery_mode_class(a->mode)] -= a->k;
		} else {
			t->stats[BKM_ST_WITHDRAW_GONE]++;
		}
		a->state = BKM_IDLE;
		break;
	case BKM_RESETTING:
		word_eq(t, "reset-from stale", bakery_reset_from_stale(m->word, a->from, a->mode),
			a->epoch != m->epoch);
		if (a->epoch != m->epoch) {
			a->state = BKM_IDLE;
			break;
		}
		ok = !m->nq;
		for (c = 0; c < BAKERY_NR_CLS; c++)
			ok &= !m->transient[c];
		word_eq(t, "reset-from matches", m->word == a->from, ok);
		if (ok) {
			a->state = BKM_IDLE;
			t->stats[BKM_ST_OVERFLOW_RESET]++;
			bkm_zero(t, m);
		}
		break;
	}
}

static enum bakery_mode bkm_pick_mode(struct bakery_model *m)
{
	u32 r = bkm_rand(m, 100);

	if (m->layout == BAKERY_SHARED)
		return r < 55 ? BAKERY_SHARED : BAKERY_EXCLUSIVE;
	return r < 45 ? BAKERY_UPD_SHARED : r < 70 ? BAKERY_UPD_UPDATE : BAKERY_UPD_EXCLUSIVE;
}

static u32 bkm_pick_k(struct bakery_model *m)
{
	u32 r = bkm_rand(m, 100), kmax = bakery_k_max(m->layout);

	if (r < 60)
		return 1;
	if (r < 80)
		return 1 + bkm_rand(m, 8);
	return 1 + bkm_rand(m, kmax);
}

static int bkm_pick_actor(struct bakery_model *m, bool idle)
{
	int i, start = bkm_rand(m, BKM_ACTORS);

	for (i = 0; i < BKM_ACTORS; i++) {
		int j = (start + i) % BKM_ACTORS;

		bool is_idle = m->a[j].state == BKM_IDLE;

		if (is_idle == idle)
			return j;
	}
	return -1;
}

static void bkm_step(struct word_tctx *t, struct bakery_model *m)
{
	u32 r = bkm_rand(m, 100), n;
	int i, c;

	if (r < 35 && m->nq < BKM_QUEUE - BKM_ACTORS) {
		i = bkm_pick_actor(m, true);
		if (i >= 0)
			bkm_acquire(t, m, i, bkm_pick_mode(m), bkm_pick_k(m));
	} else if (r < 40 && m->nq < BKM_QUEUE - BKM_ACTORS) {
		/* Uncontended acquire/release pairs, to reach COUNT_MAX. */
		i = bkm_pick_actor(m, true);
		for (n = 1 + bkm_rand(m, 64); i >= 0 && n; n--) {
			u32 k = 1 + bkm_rand(m, bakery_k_max(m->layout));

			bkm_acquire(t, m, i, bkm_pick_mode(m), k);
			if (m->a[i].state != BKM_TICKET || !m->a[i].granted ||
			    m->a[i].responsible)
				break;
			bkm_release(t, m, i);
		}
	} else if (r < 44) {
		i = bkm_pick_actor(m, false);
		if (i >= 0 && m->a[i].state == BKM_TICKET && !m->a[i].revoked &&
		    (!m->a[i].granted || m->a[i].mode == BAKERY_UPD_UPDATE))
			bkm_stall(t, m, i);
	} else if (r < 45) {
		/* Algorithm 1 lines 7-8: a stalled over-limit word is zeroed. */
		if (bkm_over(m)) {
			t->stats[BKM_ST_ZERO_RESET]++;
			bkm_zero(t, m);
		}
	} else {
		i = bkm_pick_actor(m, false);
		if (i >= 0)
			bkm_progress(t, m, i);
	}
	for (c = 0; c < BAKERY_NR_CLS; c++) {
		word_eq(t, "word n == model done", bakery_n(m->word, m->layout, c), m->done[c]);
		word_eq(t, "word max == model issued", bakery_max(m->word, m->layout, c),
			m->issued[c] + m->transient[c]);
	}
}

static void bkm_run(struct word_tctx *t, enum bakery_mode layout, u64 seed0)
{
	struct bakery_model *m = t->model;
	unsigned int seed, step;
	struct bakery_fields f;
	int c;

	for (seed = 0; seed < BKM_SEEDS; seed++) {
		word_begin(t, "seed", seed);
		__builtin_memset(m, 0, sizeof(*m));
		m->rng = seed0 + seed;
		m->layout = layout;
		/* Half the runs start just below COUNT_MAX. */
		for (c = 0; c < BAKERY_NR_CLS; c++) {
			u32 cm = bakery_count_max(layout, c);

			if (cm && (seed & 1))
				m->issued[c] = cm - 1 - bkm_rand(m, cm / 16);
			m->done[c] = m->issued[c];
			f.n[c] = m->issued[c];
			f.max[c] = m->issued[c];
		}
		m->word = bakery_pack(&f, layout);
		for (step = 0; step < BKM_STEPS && t->failures == t->case_failures; step++)
			bkm_step(t, m);
		word_end(t);
	}
}

static void bk_run_model_base(struct word_tctx *t)
{
	bkm_run(t, BAKERY_SHARED, 0x5eed0000ULL);
}

static void bk_run_model_upd(struct word_tctx *t)
{
	bkm_run(t, BAKERY_UPD_SHARED, 0x0badc0deULL);
}

static const struct word_case_group bakery_case_groups[] = {
	{ "layout", bk_run_pack },
	{ "deltas", bk_run_delta },
	{ "acquire", bk_run_acquire },
	{ "wait", bk_run_wait },
	{ "wait_count", bk_run_ahead },
	{ "stall_reset", bk_run_stall },
	{ "withdraw", bk_run_withdraw },
	{ "release", bk_run_release },
	{ "reset_from_stale", bk_run_stale },
	{ "progress", bk_run_progress },
	{ "model_base", bk_run_model_base },
	{ "model_update", bk_run_model_upd },
};

/* What each enum bkm_stat counts, as the host program reports it. */
static const char * const bakery_stat_names[BKM_NR_STATS] = {
	"overflow resets", "zero resets", "stall resets", "withdraws after reset",
	"readers granted past siblings", "revoked releases refused", "upgrades", "grants",
};

static const struct word_suite bakery_word_suite = WORD_SUITE(bakery);

#endif /* _RDLOCK_TESTS_BAKERY_CASES_H */
