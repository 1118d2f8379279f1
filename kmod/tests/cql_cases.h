/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test cases for the CQL (DecLock) lock-word encoding (lockword/cql.h),
 * shared by the KUnit suite and the host test program so that every case is
 * written once. Nothing here uses KUnit or libc: the runner
 * (word_harness.h) fills in a struct word_tctx whose callbacks report failed
 * comparisons and finished cases, and provides the model checker's scratch
 * memory; cql_word_suite is what it runs.
 *
 * Two kinds of test:
 *  - tables of hand-computed words: layouts at their limits, FA deltas,
 *    the grant rule, qhead wrap, queue overflow, versions, entry
 *    classification, the all-ones version, the reset field, timestamps
 *    across the 16-bit wrap, and release decisions;
 *  - a reference model: a plain FIFO of clients with absolute positions and
 *    a record of which position last wrote each slot, no bit fields. Seeded
 *    pseudo-random runs of interleaved enqueue, populate, dequeue, fetch,
 *    probe and reset drive it and a simulated header and queue side by
 *    side; every answer of the encoding must equal the model's.
 */
#ifndef _RDLOCK_TESTS_CQL_CASES_H
#define _RDLOCK_TESTS_CQL_CASES_H

#include "lockword/cql.h"
#include "tests/word_harness.h"

struct cql_model;

/* Event counters, so a run shows it reached the interesting states. */
enum cqm_stat {
	CQM_ST_GRANT_ENQ,	/* granted by the enqueue FA */
	CQM_ST_NOTIFY_WRITER,	/* a writer notified by a release */
	CQM_ST_NOTIFY_READERS,	/* readers notified by a writer's release */
	CQM_ST_REFETCH,		/* release met an entry not yet populated */
	CQM_ST_RESET_VERSION,	/* reset: version overflow */
	CQM_ST_RESET_OVERWRITE,	/* reset: overwritten entry */
	CQM_ST_RESET_TIMEOUT,	/* reset: a waiter timed out */
	CQM_ST_QUEUE_OVERFLOW,	/* enqueue with qsize >= capacity */
	CQM_ST_POS_WRAP,	/* enqueue position past the qhead wrap */
	CQM_ST_PROBE_VALID,	/* fetched entries judged valid */
	CQM_ST_PROBE_OBSOLETE,	/* ... obsolete */
	CQM_ST_PROBE_OVERWRITTEN, /* ... overwritten */
	CQM_ST_TS_WRAPPED,	/* timestamps compared across the wrap */
	CQM_NR_STATS,
};

/* A layout the tables name by (c, M); they use valid ones only. */
static struct cql_layout cq_layout(struct word_tctx *t, unsigned int c, unsigned int m)
{
	struct cql_layout l = { 0 };

	word_eq(t, "layout init", cql_layout_init(&l, c, m), 0);
	return l;
}

/*
 * Words written out field by field, independently of cql_hdr_pack() and
 * cql_entry_pack(). CQH_c_M: the qhead, qsize and wcnt shifts of each layout
 * the tables use, worked out by hand from the documented layout.
 */
#define CQH_AT(sh, ss, sw, qh, qs, wc, rid)				\
	(((u64)(qh) << (sh)) | ((u64)(qs) << (ss)) | ((u64)(wc) << (sw)) | (u64)(rid))
#define CQH_1_2(qh, qs, wc, rid)	CQH_AT(61, 59, 57, qh, qs, wc, rid)
#define CQH_1_16(qh, qs, wc, rid)	CQH_AT(47, 45, 43, qh, qs, wc, rid)
#define CQH_2_3(qh, qs, wc, rid)	CQH_AT(59, 56, 53, qh, qs, wc, rid)
#define CQH_5_16(qh, qs, wc, rid)	CQH_AT(43, 37, 31, qh, qs, wc, rid)
#define CQH_12_16(qh, qs, wc, rid)	CQH_AT(36, 23, 10, qh, qs, wc, rid)
#define CQH(c, m, qh, qs, wc, rid)	CQH_##c##_##m(qh, qs, wc, rid)
#define CQE(m, ex, cid, ver, ts)					\
	(((u64)(ts) << 48) | ((u64)(~(ver) & ((1U << (m)) - 1)) << 32) |	\
	 ((u64)(cid) << 1) | (u64)(ex))

#define CQ_S	CQL_SHARED
#define CQ_X	CQL_EXCLUSIVE

/* ---- layouts and the limits of their parameters ---------------------- */

struct cq_layout_case {
	const char *name;
	u32 c, m;
	int ret;
	u32 qhead_shift, qsize_shift, wcnt_shift;
	u32 cap, pos_mask, ver_init;
};

static const struct cq_layout_case cq_layout_cases[] = {
	{ "c=0 refused", 0, 16, -EINVAL, 0, 0, 0, 0, 0, 0 },
	{ "c=13 refused", 13, 2, -EINVAL, 0, 0, 0, 0, 0, 0 },
	{ "M=1 refused", 4, 1, -EINVAL, 0, 0, 0, 0, 0, 0 },
	{ "M=17 refused", 4, 17, -EINVAL, 0, 0, 0, 0, 0, 0 },
	{ "c=1 M=2 smallest", 1, 2, 0, 61, 59, 57, 2, 7, 3 },
	{ "c=2 M=3", 2, 3, 0, 59, 56, 53, 4, 31, 7 },
	{ "c=5 M=16 default", CQL_CAP_BITS_DEFAULT, CQL_VER_BITS_DEFAULT, 0, 43, 37, 31, 32,
	  0x1fffff, 0xffff },
	{ "c=12 M=16 widest", 12, 16, 0, 36, 23, 10, 4096, 0xfffffff, 0xffff },
	{ "c=12 M=2", 12, 2, 0, 50, 37, 24, 4096, 0x3fff, 3 },
	{ "c=1 M=16", 1, 16, 0, 47, 45, 43, 2, 0x1ffff, 0xffff },
};

struct cq_hdr_case {
	const char *name;
	u32 c, m;
	u32 qhead, qsize, wcnt, rid;
	u64 word;
	bool valid;
};

static const struct cq_hdr_case cq_hdr_cases[] = {
	{ "zero", 5, 16, 0, 0, 0, 0, 0, 1 },
	{ "c1 M2 every field at its last value", 1, 2, 7, 3, 3, 511, 0xfe000000000001ffULL, 0 },
	{ "c5 M16 every field at its last value", 5, 16, 0x1fffff, 63, 63, 511,
	  0xffffffff800001ffULL, 0 },
	{ "c12 M16 every field at its last value", 12, 16, 0xfffffff, 8191, 8191, 511,
	  0xfffffffffffffdffULL, 0 },
	{ "c5 qhead 1", 5, 16, 1, 0, 0, 0, 0x80000000000ULL, 1 },
	{ "c5 qsize 1", 5, 16, 0, 1, 0, 0, 0x2000000000ULL, 1 },
	{ "c5 wcnt 1 (wcnt > qsize)", 5, 16, 0, 0, 1, 0, 0x80000000ULL, 0 },
	{ "c5 reset id 1", 5, 16, 0, 0, 0, 1, 0x1, 1 },
	{ "c5 reset id of node 255", 5, 16, 0, 0, 0, 256, 0x100, 1 },
	{ "c5 reset id past node 255", 5, 16, 0, 0, 0, 257, 0x101, 0 },
	{ "c2 M3 mixed", 2, 3, 21, 5, 2, 33, 0xad40000000000021ULL, 1 },
	{ "c12 M16 writers = queue", 12, 16, 0x1234567, 4096, 4096, 0, 0x1234567800400000ULL, 1 },
};

static void cq_run_layout(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_layout_cases); i++) {
		const struct cq_layout_case *c = &cq_layout_cases[i];
		struct cql_layout l = { 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };
		bool untouched;

		word_begin(t, c->name, i);
		word_eq(t, "init", (u64)(s64)cql_layout_init(&l, c->c, c->m), (u64)(s64)c->ret);
		if (c->ret) {
			/* A refused layout leaves the caller's copy alone. */
			untouched = l.cap_bits == 0xaa && l.ver_bits == 0xaa &&
				    l.qhead_shift == 0xaa && l.qsize_shift == 0xaa &&
				    l.wcnt_shift == 0xaa;
			word_eq(t, "untouched", untouched, 1);
		} else {
			word_eq(t, "qhead shift", l.qhead_shift, c->qhead_shift);
			word_eq(t, "qsize shift", l.qsize_shift, c->qsize_shift);
			word_eq(t, "wcnt shift", l.wcnt_shift, c->wcnt_shift);
			word_eq(t, "capacity", cql_capacity(&l), c->cap);
			word_eq(t, "position mask", cql_pos_mask(&l), c->pos_mask);
			word_eq(t, "initial version", cql_ver_init(&l), c->ver_init);
			word_eq(t, "empty header valid", cql_hdr_valid(&l, CQL_HDR_INIT), 1);
		}
		word_end(t);
	}
	for (i = 0; i < ARRAY_SIZE(cq_hdr_cases); i++) {
		const struct cq_hdr_case *c = &cq_hdr_cases[i];
		struct cql_layout l = cq_layout(t, c->c, c->m);

		word_begin(t, c->name, i);
		word_eq(t, "pack", cql_hdr_pack(&l, c->qhead, c->qsize, c->wcnt, c->rid), c->word);
		word_eq(t, "qhead", cql_hdr_qhead(&l, c->word), c->qhead);
		word_eq(t, "qsize", cql_hdr_qsize(&l, c->word), c->qsize);
		word_eq(t, "wcnt", cql_hdr_wcnt(&l, c->word), c->wcnt);
		word_eq(t, "reset id", cql_hdr_reset_id(c->word), c->rid);
		word_eq(t, "valid", cql_hdr_valid(&l, c->word), c->valid);
		word_end(t);
	}
	word_begin(t, "unused bits and truncation", i);
	{
		struct cql_layout l5 = cq_layout(t, 5, 16), l1 = cq_layout(t, 1, 2);
		struct cql_layout l12 = cq_layout(t, 12, 16);

		word_eq(t, "bit 9 unused", cql_hdr_valid(&l5, 1ULL << 9), 0);
		word_eq(t, "bit 30 unused", cql_hdr_valid(&l5, 1ULL << 30), 0);
		word_eq(t, "c12 bit 9 unused", cql_hdr_valid(&l12, 1ULL << 9), 0);
		word_eq(t, "c12 bit 10 is wcnt", cql_hdr_wcnt(&l12, 1ULL << 10), 1);
		word_eq(t, "c1 bit 56 unused", cql_hdr_valid(&l1, 1ULL << 56), 0);
		word_eq(t, "pack truncates", cql_hdr_pack(&l1, 9, 5, 4, 0x201),
			CQH(1, 2, 1, 1, 0, 1));
	}
	word_end(t);
}

/* ---- FA deltas --------------------------------------------------------- */

struct cq_delta_case {
	const char *name;
	u32 c, m;
	enum cql_mode mode;
	u64 enq;	/* cql_enqueue_delta() */
	u64 deq;	/* cql_dequeue_delta() */
	u64 before;	/* fields near their limits: a carry or borrow would show */
};

static const struct cq_delta_case cq_delta_cases[] = {
	{ "c1 M2 shared", 1, 2, CQ_S, 0x0800000000000000ULL, 0x1800000000000000ULL,
	  CQH(1, 2, 6, 2, 1, 511) },
	{ "c1 M2 exclusive", 1, 2, CQ_X, 0x0a00000000000000ULL, 0x1600000000000000ULL,
	  CQH(1, 2, 6, 2, 1, 511) },
	{ "c2 M3 shared", 2, 3, CQ_S, 0x0100000000000000ULL, 0x0700000000000000ULL,
	  CQH(2, 3, 30, 6, 5, 1) },
	{ "c2 M3 exclusive", 2, 3, CQ_X, 0x0120000000000000ULL, 0x06e0000000000000ULL,
	  CQH(2, 3, 30, 6, 5, 1) },
	{ "c5 M16 shared", 5, 16, CQ_S, 0x2000000000ULL, 0x7e000000000ULL,
	  CQH(5, 16, 0x1ffffe, 62, 61, 256) },
	{ "c5 M16 exclusive", 5, 16, CQ_X, 0x2080000000ULL, 0x7df80000000ULL,
	  CQH(5, 16, 0x1ffffe, 62, 61, 256) },
	{ "c12 M16 shared", 12, 16, CQ_S, 0x800000ULL, 0xfff800000ULL,
	  CQH(12, 16, 0xffffffe, 8190, 8190, 256) },
	{ "c12 M16 exclusive", 12, 16, CQ_X, 0x800400ULL, 0xfff7ffc00ULL,
	  CQH(12, 16, 0xffffffe, 8190, 8190, 256) },
};

static void cq_run_delta(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_delta_cases); i++) {
		const struct cq_delta_case *d = &cq_delta_cases[i];
		struct cql_layout l = cq_layout(t, d->c, d->m);
		u32 x = d->mode == CQ_X;
		u64 b = d->before, a;

		word_begin(t, d->name, i);
		word_eq(t, "enqueue delta", cql_enqueue_delta(&l, d->mode), d->enq);
		word_eq(t, "dequeue delta", cql_dequeue_delta(&l, d->mode), d->deq);
		a = b + d->enq;
		word_eq(t, "enqueue: qhead", cql_hdr_qhead(&l, a), cql_hdr_qhead(&l, b));
		word_eq(t, "enqueue: qsize + 1", cql_hdr_qsize(&l, a), cql_hdr_qsize(&l, b) + 1);
		word_eq(t, "enqueue: wcnt", cql_hdr_wcnt(&l, a), cql_hdr_wcnt(&l, b) + x);
		word_eq(t, "enqueue: reset id", cql_hdr_reset_id(a), cql_hdr_reset_id(b));
		a = b + d->deq;
		word_eq(t, "dequeue: qhead + 1", cql_hdr_qhead(&l, a), cql_hdr_qhead(&l, b) + 1);
		word_eq(t, "dequeue: qsize - 1", cql_hdr_qsize(&l, a), cql_hdr_qsize(&l, b) - 1);
		word_eq(t, "dequeue: wcnt", cql_hdr_wcnt(&l, a), cql_hdr_wcnt(&l, b) - x);
		word_eq(t, "dequeue: reset id", cql_hdr_reset_id(a), cql_hdr_reset_id(b));
		word_eq(t, "enqueue then dequeue", b + d->enq + d->deq - b,
			1ULL << l.qhead_shift);
		word_end(t);
	}
}

/* ---- the grant rule at the enqueue (Fig. 7 line 2) ------------------- */

struct cq_grant_case {
	const char *name;
	u32 c, m;
	enum cql_mode mode;
	u64 prev;
	bool granted;
	u32 pos;	/* cql_enqueue_pos() */
	bool overflow;	/* cql_enqueue_overflow() */
};

static const struct cq_grant_case cq_grant_cases[] = {
	{ "empty: shared granted", 2, 3, CQ_S, CQH(2, 3, 5, 0, 0, 0), 1, 5, 0 },
	{ "empty: exclusive granted", 2, 3, CQ_X, CQH(2, 3, 5, 0, 0, 0), 1, 5, 0 },
	{ "readers only: shared granted", 2, 3, CQ_S, CQH(2, 3, 5, 3, 0, 0), 1, 8, 0 },
	{ "readers only: exclusive waits", 2, 3, CQ_X, CQH(2, 3, 5, 3, 0, 0), 0, 8, 0 },
	{ "writer queued: shared waits", 2, 3, CQ_S, CQH(2, 3, 5, 1, 1, 0), 0, 6, 0 },
	{ "writer queued: exclusive waits", 2, 3, CQ_X, CQH(2, 3, 5, 1, 1, 0), 0, 6, 0 },
	{ "writer behind readers: shared waits", 2, 3, CQ_S, CQH(2, 3, 5, 3, 1, 0), 0, 8, 0 },
	{ "queue full: shared granted, overflow", 2, 3, CQ_S, CQH(2, 3, 5, 4, 0, 0), 1, 9, 1 },
	{ "past capacity: exclusive", 2, 3, CQ_X, CQH(2, 3, 5, 7, 2, 0), 0, 12, 1 },
	{ "resetting: shared not granted", 2, 3, CQ_S, CQH(2, 3, 5, 0, 0, 3), 0, 5, 0 },
	{ "resetting: exclusive not granted", 2, 3, CQ_X, CQH(2, 3, 0, 0, 0, 1), 0, 0, 0 },
	{ "position wraps", 2, 3, CQ_X, CQH(2, 3, 30, 3, 1, 0), 0, 1, 0 },
	{ "c5 empty: exclusive granted", 5, 16, CQ_X, CQH(5, 16, 0x1234, 0, 0, 0), 1, 0x1234, 0 },
	{ "c5 31 readers: shared granted", 5, 16, CQ_S, CQH(5, 16, 0x1234, 31, 0, 0), 1, 0x1253,
	  0 },
	{ "c5 32 queued: overflow", 5, 16, CQ_S, CQH(5, 16, 0x1234, 32, 0, 0), 1, 0x1254, 1 },
};

struct cq_head_case {
	const char *name;
	u32 c, m;
	u64 h;
	u32 pos;
	bool at;
};

static const struct cq_head_case cq_head_cases[] = {
	{ "at the head", 2, 3, CQH(2, 3, 9, 2, 1, 0), 9, 1 },
	{ "one behind", 2, 3, CQH(2, 3, 9, 2, 1, 0), 10, 0 },
	{ "already dequeued", 2, 3, CQH(2, 3, 9, 2, 1, 0), 8, 0 },
	{ "position given unmasked", 2, 3, CQH(2, 3, 9, 2, 1, 0), 41, 1 },
	{ "after the qhead wrap", 2, 3, CQH(2, 3, 0, 1, 1, 0), 32, 1 },
	{ "writer behind a reader", 2, 3, CQH(2, 3, 6, 2, 1, 0), 7, 0 },
	{ "the reader released", 2, 3, CQH(2, 3, 7, 1, 1, 0), 7, 1 },
};

struct cq_waiter_case {
	const char *name;
	u32 c, m;
	enum cql_mode mode;
	u64 h;
	u32 pos;
	bool granted;
};

static const struct cq_waiter_case cq_waiter_cases[] = {
	{ "writer at the head", 2, 3, CQ_X, CQH(2, 3, 9, 2, 1, 0), 9, 1 },
	{ "writer one behind", 2, 3, CQ_X, CQH(2, 3, 9, 2, 2, 0), 10, 0 },
	{ "writer passed: a later client released", 2, 3, CQ_X, CQH(2, 3, 11, 1, 1, 0),
	  9, 1 },
	{ "reader behind a writer", 2, 3, CQ_S, CQH(2, 3, 9, 3, 1, 0), 10, 0 },
	{ "reader, the writers gone", 2, 3, CQ_S, CQH(2, 3, 10, 2, 0, 0), 11, 1 },
	{ "reader at the head, a writer after it", 2, 3, CQ_S, CQH(2, 3, 9, 2, 1, 0), 9, 1 },
	{ "reader passed", 2, 3, CQ_S, CQH(2, 3, 12, 2, 2, 0), 10, 1 },
	{ "reader passed across the qhead wrap", 2, 3, CQ_S, CQH(2, 3, 1, 2, 1, 0), 30, 1 },
	{ "writer far behind across the wrap", 2, 3, CQ_X, CQH(2, 3, 30, 3, 3, 0), 0, 0 },
	{ "position given unmasked", 2, 3, CQ_X, CQH(2, 3, 9, 2, 1, 0), 41, 1 },
	{ "during a reset nothing is granted", 2, 3, CQ_S, CQH(2, 3, 12, 0, 0, 1), 10, 0 },
	{ "c5: reader passed by 31", 5, 16, CQ_S, CQH(5, 16, 0x1253, 1, 1, 0), 0x1234, 1 },
	{ "c5: writer 31 behind", 5, 16, CQ_X, CQH(5, 16, 0x1234, 32, 2, 0), 0x1253, 0 },
};

static void cq_run_grant(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_grant_cases); i++) {
		const struct cq_grant_case *g = &cq_grant_cases[i];
		struct cql_layout l = cq_layout(t, g->c, g->m);

		word_begin(t, g->name, i);
		word_eq(t, "granted", cql_granted_at_enqueue(&l, g->prev, g->mode), g->granted);
		word_eq(t, "position", cql_enqueue_pos(&l, g->prev), g->pos);
		word_eq(t, "overflow", cql_enqueue_overflow(&l, g->prev), g->overflow);
		/* A writer granted at once is the head of its own queue. */
		if (g->mode == CQ_X) {
			u64 h = g->prev + cql_enqueue_delta(&l, CQ_X);

			word_eq(t, "writer at head", cql_at_head(&l, h, g->pos),
				!cql_hdr_qsize(&l, g->prev));
		}
		word_end(t);
	}
	for (i = 0; i < ARRAY_SIZE(cq_head_cases); i++) {
		const struct cq_head_case *h = &cq_head_cases[i];
		struct cql_layout l = cq_layout(t, h->c, h->m);

		word_begin(t, h->name, i);
		word_eq(t, "at head", cql_at_head(&l, h->h, h->pos), h->at);
		word_end(t);
	}
	for (i = 0; i < ARRAY_SIZE(cq_waiter_cases); i++) {
		const struct cq_waiter_case *w = &cq_waiter_cases[i];
		struct cql_layout l = cq_layout(t, w->c, w->m);

		word_begin(t, w->name, i);
		word_eq(t, "waiter granted", cql_waiter_granted(&l, w->h, w->pos, w->mode),
			w->granted);
		word_end(t);
	}
}

/* ---- qhead wrap --------------------------------------------------------- */

struct cq_wrap_case {
	const char *name;
	u32 c, m;
	enum cql_mode mode;
	u64 before;
	u64 after;	/* before + cql_dequeue_delta() */
};

static const struct cq_wrap_case cq_wrap_cases[] = {
	{ "c1 M2 last writer out", 1, 2, CQ_X, CQH(1, 2, 7, 1, 1, 0), 0 },
	{ "c1 M2 reader, queue behind", 1, 2, CQ_S, CQH(1, 2, 7, 3, 2, 0), CQH(1, 2, 0, 2, 2, 0) },
	{ "c5 M16 reader, reset id kept", 5, 16, CQ_S, CQH(5, 16, 0x1fffff, 3, 1, 5),
	  CQH(5, 16, 0, 2, 1, 5) },
	{ "c12 M16 full fields", 12, 16, CQ_X, CQH(12, 16, 0xfffffff, 8191, 8191, 0),
	  CQH(12, 16, 0, 8190, 8190, 0) },
	{ "c1 M16 writer", 1, 16, CQ_X, CQH(1, 16, 0x1ffff, 2, 2, 7), CQH(1, 16, 0, 1, 1, 7) },
};

static void cq_run_wrap(struct word_tctx *t)
{
	struct cql_layout l1, l5;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_wrap_cases); i++) {
		const struct cq_wrap_case *w = &cq_wrap_cases[i];
		struct cql_layout l = cq_layout(t, w->c, w->m);
		u64 a = w->before + cql_dequeue_delta(&l, w->mode);

		word_begin(t, w->name, i);
		word_eq(t, "after dequeue", a, w->after);
		word_eq(t, "qhead wrapped to 0", cql_hdr_qhead(&l, a), 0);
		word_eq(t, "version after the wrap", cql_pos_version(&l, cql_hdr_qhead(&l, a)), 0);
		word_eq(t, "version before the wrap",
			cql_pos_version(&l, cql_hdr_qhead(&l, w->before)), cql_ver_init(&l));
		word_end(t);
	}
	word_begin(t, "positions across the wrap", i);
	l1 = cq_layout(t, 1, 2);
	l5 = cq_layout(t, 5, 16);
	word_eq(t, "c1 7 + 1", cql_pos_add(&l1, 7, 1), 0);
	word_eq(t, "c1 6 + 3", cql_pos_add(&l1, 6, 3), 1);
	word_eq(t, "c5 0x1fffff + 3", cql_pos_add(&l5, 0x1fffff, 3), 2);
	word_eq(t, "c1 enqueue at 6 + 2", cql_enqueue_pos(&l1, CQH(1, 2, 6, 2, 0, 0)), 0);
	word_eq(t, "c1 enqueue at 7 + 3", cql_enqueue_pos(&l1, CQH(1, 2, 7, 3, 0, 0)), 2);
	word_eq(t, "c1 index of 8", cql_pos_index(&l1, 8), 0);
	word_eq(t, "c1 version of 8", cql_pos_version(&l1, 8), 0);
	word_end(t);
}

/* ---- queue overflow: qsize past the capacity ----------------------------- */

struct cq_over_case {
	const char *name;
	u32 c, m;
	u64 h;
	bool over;	/* cql_hdr_overflow() */
};

static const struct cq_over_case cq_over_cases[] = {
	{ "c1 at capacity", 1, 2, CQH(1, 2, 3, 2, 1, 0), 0 },
	{ "c1 one past", 1, 2, CQH(1, 2, 3, 3, 1, 0), 1 },
	{ "c5 at capacity", 5, 16, CQH(5, 16, 40, 32, 32, 0), 0 },
	{ "c5 one past", 5, 16, CQH(5, 16, 40, 33, 0, 0), 1 },
	{ "c5 last qsize", 5, 16, CQH(5, 16, 40, 63, 63, 0), 1 },
	{ "c12 at capacity", 12, 16, CQH(12, 16, 1, 4096, 0, 0), 0 },
	{ "c12 one past", 12, 16, CQH(12, 16, 1, 4097, 0, 0), 1 },
};

static void cq_run_overflow(struct word_tctx *t)
{
	struct cql_layout l2, l5;
	unsigned int i;
	u64 h;

	for (i = 0; i < ARRAY_SIZE(cq_over_cases); i++) {
		const struct cq_over_case *o = &cq_over_cases[i];
		struct cql_layout l = cq_layout(t, o->c, o->m);

		word_begin(t, o->name, i);
		word_eq(t, "overflow", cql_hdr_overflow(&l, o->h), o->over);
		word_eq(t, "header valid", cql_hdr_valid(&l, o->h), 1);
		word_end(t);
	}
	word_begin(t, "overflowing enqueues", i);
	l2 = cq_layout(t, 2, 3);
	l5 = cq_layout(t, 5, 16);
	/* Four queued from position 9: the fifth gets the head's slot. */
	h = CQH(2, 3, 9, 4, 1, 0);
	word_eq(t, "fifth slot is the head's", cql_pos_index(&l2, cql_enqueue_pos(&l2, h)),
		cql_pos_index(&l2, 9));
	word_eq(t, "fifth one lap later", cql_pos_version(&l2, cql_enqueue_pos(&l2, h)),
		cql_pos_version(&l2, 9) + 1);
	/* Up to 2 * capacity - 1 the neighbours keep their values. */
	h = CQH(2, 3, 9, 6, 6, 0) + cql_enqueue_delta(&l2, CQ_X);
	word_eq(t, "qsize 7 of 7", h, CQH(2, 3, 9, 7, 7, 0));
	word_eq(t, "still valid", cql_hdr_valid(&l2, h), 1);
	/* One more carries into qhead: the documented limit. */
	h = CQH(5, 16, 7, 63, 0, 0) + cql_enqueue_delta(&l5, CQ_S);
	word_eq(t, "64th client carries", h, CQH(5, 16, 8, 0, 0, 0));
	word_end(t);
}

/* ---- versions and indices of positions ------------------------------- */

struct cq_ver_case {
	u32 c, m;
	u32 pos;
	u32 index, version;
	bool overflow;
};

static const struct cq_ver_case cq_ver_cases[] = {
	{ 1, 2, 0, 0, 0, 0 }, { 1, 2, 1, 1, 0, 0 }, { 1, 2, 2, 0, 1, 0 },
	{ 1, 2, 5, 1, 2, 0 }, { 1, 2, 6, 0, 3, 1 }, { 1, 2, 7, 1, 3, 1 },
	{ 1, 2, 8, 0, 0, 0 }, { 2, 3, 13, 1, 3, 0 }, { 2, 3, 27, 3, 6, 0 },
	{ 2, 3, 28, 0, 7, 1 }, { 5, 16, 0x12345, 5, 0x91a, 0 },
	{ 5, 16, 0x1fffdf, 31, 0xfffe, 0 }, { 5, 16, 0x1fffe0, 0, 0xffff, 1 },
	{ 12, 16, 0x1234567, 0x567, 0x1234, 0 }, { 12, 16, 0xfffffff, 0xfff, 0xffff, 1 },
	{ 12, 2, 0x2fff, 0xfff, 2, 0 },
};

static void cq_run_version(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_ver_cases); i++) {
		const struct cq_ver_case *v = &cq_ver_cases[i];
		struct cql_layout l = cq_layout(t, v->c, v->m);

		word_begin(t, "position", i);
		word_eq(t, "index", cql_pos_index(&l, v->pos), v->index);
		word_eq(t, "version", cql_pos_version(&l, v->pos), v->version);
		word_eq(t, "version overflow",
			cql_version_overflow(&l, cql_pos_version(&l, v->pos)), v->overflow);
		word_end(t);
	}
}

/* ---- a fetched entry against the position expected there ----------------- */

struct cq_class_case {
	const char *name;
	u32 c, m;
	u64 entry;
	u32 pos;
	enum cql_entry_state state;
};

static const struct cq_class_case cq_class_cases[] = {
	{ "valid", 2, 3, CQE(3, 1, 77, 2, 500), 9, CQL_ENTRY_VALID },
	{ "earlier lap: obsolete", 2, 3, CQE(3, 1, 77, 1, 500), 9, CQL_ENTRY_OBSOLETE },
	{ "later lap: overwritten", 2, 3, CQE(3, 0, 77, 3, 500), 9, CQL_ENTRY_OVERWRITTEN },
	{ "never written: obsolete", 2, 3, CQL_ENTRY_INIT, 9, CQL_ENTRY_OBSOLETE },
	{ "never written, lap 0: obsolete", 2, 3, CQL_ENTRY_INIT, 1, CQL_ENTRY_OBSOLETE },
	{ "lap 0 valid", 2, 3, CQE(3, 0, 0, 0, 0), 1, CQL_ENTRY_VALID },
	{ "last usable lap valid", 2, 3, CQE(3, 1, 5, 6, 9), 25, CQL_ENTRY_VALID },
	{ "written in the all-ones lap: reads as never written", 2, 3, CQE(3, 1, 5, 7, 9), 25,
	  CQL_ENTRY_OBSOLETE },
	{ "position in the all-ones lap", 2, 3, CQE(3, 1, 5, 6, 9), 29, CQL_ENTRY_VER_OVERFLOW },
	{ "never written, all-ones lap", 2, 3, CQL_ENTRY_INIT, 28, CQL_ENTRY_VER_OVERFLOW },
	{ "c5 valid", 5, 16, CQE(16, 1, 0x7abcdef, 0x91a, 0xffff), 0x12345, CQL_ENTRY_VALID },
	{ "c5 one lap old", 5, 16, CQE(16, 1, 0x7abcdef, 0x919, 0xffff), 0x12345,
	  CQL_ENTRY_OBSOLETE },
	{ "c5 one lap ahead", 5, 16, CQE(16, 1, 0x7abcdef, 0x91b, 0xffff), 0x12345,
	  CQL_ENTRY_OVERWRITTEN },
	{ "c5 last usable lap", 5, 16, CQE(16, 0, 1, 0xfffe, 1), 0x1fffdf, CQL_ENTRY_VALID },
	{ "c5 all-ones lap", 5, 16, CQE(16, 0, 1, 0xfffe, 1), 0x1fffe0, CQL_ENTRY_VER_OVERFLOW },
	{ "c5 lap 0 against an old lap 0xfffe", 5, 16, CQE(16, 0, 1, 0xfffe, 1), 0x1f,
	  CQL_ENTRY_OVERWRITTEN },
};

static void cq_run_classify(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_class_cases); i++) {
		const struct cq_class_case *c = &cq_class_cases[i];
		struct cql_layout l = cq_layout(t, c->c, c->m);

		word_begin(t, c->name, i);
		word_eq(t, "state", cql_entry_classify(&l, c->entry, c->pos), c->state);
		word_end(t);
	}
}

/* ---- the all-ones version: entries' initial value, reset before reuse ----- */

struct cq_vover_case {
	const char *name;
	u32 c, m;
	u64 h;
	bool over;	/* cql_hdr_version_overflow() */
};

static const struct cq_vover_case cq_vover_cases[] = {
	{ "empty, qhead in lap 2", 1, 2, CQH(1, 2, 5, 0, 0, 0), 0 },
	{ "empty, qhead enters the all-ones lap", 1, 2, CQH(1, 2, 6, 0, 0, 0), 1 },
	{ "queue up to lap 2", 1, 2, CQH(1, 2, 4, 2, 0, 0), 0 },
	{ "queue reaches the all-ones lap", 1, 2, CQH(1, 2, 5, 2, 0, 0), 1 },
	{ "queue past the wrap", 1, 2, CQH(1, 2, 5, 3, 0, 0), 1 },
	{ "qhead in the all-ones lap, queue wraps", 1, 2, CQH(1, 2, 7, 3, 0, 0), 1 },
	{ "after a wrap", 1, 2, CQH(1, 2, 0, 3, 0, 0), 0 },
	{ "window wraps over the whole all-ones lap", 2, 3, CQH(2, 3, 26, 7, 0, 0), 1 },
	{ "c5 last usable lap, full", 5, 16, CQH(5, 16, 0x1fffc0, 32, 0, 0), 0 },
	{ "c5 one more", 5, 16, CQH(5, 16, 0x1fffc0, 33, 1, 0), 1 },
	{ "c5 start", 5, 16, CQH(5, 16, 0, 63, 0, 0), 0 },
};

static void cq_run_vwrap(struct word_tctx *t)
{
	static const u32 ms[] = { 2, 3, 16 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_vover_cases); i++) {
		const struct cq_vover_case *v = &cq_vover_cases[i];
		struct cql_layout l = cq_layout(t, v->c, v->m);

		word_begin(t, v->name, i);
		word_eq(t, "version overflow", cql_hdr_version_overflow(&l, v->h), v->over);
		word_end(t);
	}
	for (i = 0; i < ARRAY_SIZE(ms); i++) {
		struct cql_layout l = cq_layout(t, 3, ms[i]);
		u32 last = cql_pos_mask(&l);

		word_begin(t, "lap wraps to the all-ones initial value", i);
		word_eq(t, "initial entry version", cql_entry_version(&l, CQL_ENTRY_INIT),
			(1U << ms[i]) - 1);
		word_eq(t, "last position's version", cql_pos_version(&l, last), (1U << ms[i]) - 1);
		word_eq(t, "is the overflow",
			cql_version_overflow(&l, cql_pos_version(&l, last)), 1);
		word_eq(t, "first position of that lap", cql_pos_version(&l, last - 7),
			(1U << ms[i]) - 1);
		word_eq(t, "one before it", cql_version_overflow(&l, cql_pos_version(&l, last - 8)),
			0);
		word_eq(t, "then lap 0", cql_pos_version(&l, cql_pos_add(&l, last, 1)), 0);
		word_eq(t, "populated there reads as initial",
			cql_entry_version(&l, cql_entry_populate(&l, last, CQ_X, 3, 4)),
			cql_entry_version(&l, CQL_ENTRY_INIT));
		word_end(t);
	}
}

/* ---- queue entries ------------------------------------------------------ */

struct cq_entry_case {
	const char *name;
	u32 m;
	enum cql_mode mode;
	u32 node, local, ver;
	u16 ts;
	u64 word;
};

static const struct cq_entry_case cq_entry_cases[] = {
	{ "initial value", 16, CQ_S, 0, 0, 0xffff, 0, CQL_ENTRY_INIT },
	{ "lap 0", 16, CQ_S, 0, 0, 0, 0, 0x0000ffff00000000ULL },
	{ "exclusive bit", 16, CQ_X, 0, 0, 0xffff, 0, 0x1 },
	{ "last node", 16, CQ_S, 255, 0, 0xffff, 0, 0xff000000ULL },
	{ "last local id", 16, CQ_S, 0, 0x7fffff, 0xffff, 0, 0xfffffeULL },
	{ "last timestamp", 16, CQ_S, 0, 0, 0xffff, 0xffff, 0xffff000000000000ULL },
	{ "every field", 16, CQ_X, 255, 0x7fffff, 0x1234, 0xbeef, 0xbeefedcbffffffffULL },
	{ "M3 version in the low bits", 3, CQ_S, 3, 5, 2, 7, 0x000700050300000aULL },
	{ "M3 last usable version", 3, CQ_X, 31, 1, 6, 0, 0x000000011f000003ULL },
};

static void cq_run_entry(struct word_tctx *t)
{
	struct cql_layout l3 = cq_layout(t, 2, 3);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_entry_cases); i++) {
		const struct cq_entry_case *e = &cq_entry_cases[i];
		struct cql_layout l = cq_layout(t, 2, e->m);
		u32 cid = cql_cid(e->node, e->local);

		word_begin(t, e->name, i);
		word_eq(t, "macro", CQE(e->m, e->mode, (e->node << 23) | e->local, e->ver, e->ts),
			e->word);
		word_eq(t, "pack", cql_entry_pack(&l, e->mode, cid, e->ver, e->ts), e->word);
		word_eq(t, "mode", cql_entry_mode(e->word), e->mode);
		word_eq(t, "cid", cql_entry_cid(e->word), cid);
		word_eq(t, "node", cql_cid_node(cql_entry_cid(e->word)), e->node);
		word_eq(t, "local", cql_cid_local(cql_entry_cid(e->word)), e->local);
		word_eq(t, "version", cql_entry_version(&l, e->word), e->ver);
		word_eq(t, "ts", cql_entry_ts(e->word), e->ts);
		word_end(t);
	}
	word_begin(t, "client id limits", i);
	word_eq(t, "node truncated", cql_cid(256, 0), 0);
	word_eq(t, "local truncated", cql_cid(0, 1U << 23), 0);
	word_eq(t, "node 31 local 1", cql_cid(31, 1), 0xf800001);
	word_eq(t, "populate uses the position's version",
		cql_entry_populate(&l3, 13, CQ_X, 5, 9), CQE(3, 1, 5, 3, 9));
	word_end(t);
}

/* ---- the reset field ---------------------------------------------------- */

struct cq_reset_case {
	const char *name;
	u64 h;
	u32 node;
	bool ok;
	u64 new;
};

static const struct cq_reset_case cq_reset_cases[] = {
	{ "free word", 0, 0, 1, 1 },
	{ "busy word keeps its fields", CQH(5, 16, 0x1234, 5, 2, 0), 31, 1,
	  CQH(5, 16, 0x1234, 5, 2, 32) },
	{ "last node", CQH(5, 16, 7, 1, 0, 0), 255, 1, CQH(5, 16, 7, 1, 0, 256) },
	{ "node out of range", CQH(5, 16, 7, 1, 0, 0), 256, 0, 0 },
	{ "already resetting", CQH(5, 16, 7, 1, 0, 3), 4, 0, 0 },
};

static void cq_run_reset(struct word_tctx *t)
{
	struct cql_layout l = cq_layout(t, 5, 16);
	unsigned int i;
	u32 first, count;
	u64 q[32] = { 0 };

	for (i = 0; i < ARRAY_SIZE(cq_reset_cases); i++) {
		const struct cq_reset_case *r = &cq_reset_cases[i];
		u64 new = 0, h;

		word_begin(t, r->name, i);
		word_eq(t, "ok", cql_hdr_set_reset(r->h, r->node, &new), r->ok);
		word_eq(t, "new", new, r->new);
		if (r->ok) {
			word_eq(t, "resetting", cql_hdr_resetting(new), 1);
			word_eq(t, "reset id", cql_hdr_reset_id(new), r->node + 1);
			word_eq(t, "reset node", cql_hdr_reset_node(new), r->node);
			word_eq(t, "clear gives the fields back", cql_hdr_clear_reset(new), r->h);
			word_eq(t, "cleared is not resetting",
				cql_hdr_resetting(cql_hdr_clear_reset(new)), 0);
			/* FAs still in flight add to the word and keep the id. */
			h = new + cql_enqueue_delta(&l, CQ_X);
			word_eq(t, "enqueue keeps the id", cql_hdr_reset_id(h), r->node + 1);
			word_eq(t, "enqueue aborted", cql_granted_at_enqueue(&l, new, CQ_S), 0);
			word_eq(t, "release does nothing",
				cql_release_next(&l, h, CQ_X, q, &first, &count), CQL_REL_DONE);
			word_eq(t, "second reset refused", cql_hdr_set_reset(h, 0, &new), 0);
		}
		word_end(t);
	}
	word_begin(t, "clear", i);
	word_eq(t, "clear of a free word", cql_hdr_clear_reset(CQH(5, 16, 7, 2, 1, 0)),
		CQH(5, 16, 7, 2, 1, 0));
	word_eq(t, "clear the last id", cql_hdr_clear_reset(CQH(5, 16, 7, 2, 1, 256)),
		CQH(5, 16, 7, 2, 1, 0));
	word_eq(t, "step 3 writes a free header", cql_hdr_resetting(CQL_HDR_INIT), 0);
	word_end(t);
}

/* ---- timestamps across the 16-bit wrap ------------------------------------ */

struct cq_ts_case {
	u16 a, b;
	bool before;
};

static const struct cq_ts_case cq_ts_cases[] = {
	{ 0, 1, 1 }, { 1, 0, 0 }, { 5, 5, 0 }, { 0xffff, 0, 1 }, { 0, 0xffff, 0 },
	{ 0, 0x7fff, 1 }, { 0x7fff, 0, 0 }, { 0, 0x8000, 0 }, { 0x8000, 0, 1 },
	{ 0, 0x8001, 0 }, { 0x8001, 0, 1 }, { 0xfff0, 0x0010, 1 }, { 0x0010, 0xfff0, 0 },
	{ 0x8000, 0xffff, 1 }, { 0xffff, 0x8000, 0 }, { 0x7fff, 0xffff, 0 },
	{ 0xffff, 0x7fff, 1 }, { 0x1234, 0x1235, 1 },
};

static void cq_run_ts(struct word_tctx *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_ts_cases); i++) {
		const struct cq_ts_case *c = &cq_ts_cases[i];

		word_begin(t, "timestamps", i);
		word_eq(t, "before", cql_ts_before(c->a, c->b), c->before);
		/* Exactly one of two different timestamps is the earlier. */
		word_eq(t, "antisymmetric", cql_ts_before(c->b, c->a),
			c->a != c->b && !c->before);
		word_end(t);
	}
}

/*
 * Hierarchical arrival stamps (half positions of the FAA order): an
 * arrival that READ tail 3 sorts after position 2 and before position 3;
 * two arrivals at the same tail tie; the wrap at 2^16, and at 2^(c+M+1)
 * for a layout whose positions are narrower (c = 2, M = 2: 32 stamps).
 */
static void cq_run_stamp(struct word_tctx *t)
{
	struct cql_layout l;

	word_begin(t, "stamps", 0);
	word_eq(t, "layout", cql_layout_init(&l, 5, 16), 0);
	word_eq(t, "mask", cql_stamp_mask(&l), 0xffff);
	word_eq(t, "of pos", cql_stamp_of_pos(&l, 3), 6);
	word_eq(t, "arrival", cql_stamp_arrival(&l, 3), 5);
	word_eq(t, "arrival at 0", cql_stamp_arrival(&l, 0), 0xffff);
	word_eq(t, "before its tail", cql_stamp_before(&l, 5, 6), 1);
	word_eq(t, "after the last", cql_stamp_before(&l, 4, 5), 1);
	word_eq(t, "not before an earlier", cql_stamp_before(&l, 5, 4), 0);
	word_eq(t, "tie", cql_stamp_before(&l, 5, 5), 0);
	word_eq(t, "across the wrap", cql_stamp_before(&l, 0xffff, 0), 1);
	word_eq(t, "32767 apart", cql_stamp_before(&l, 0, 0x7fff), 1);
	word_eq(t, "half apart", cql_stamp_before(&l, 0, 0x8000), 0);
	word_eq(t, "half apart, back", cql_stamp_before(&l, 0x8000, 0), 0);
	word_eq(t, "position bits kept", cql_stamp_of_pos(&l, 0x12345), 0x468a);
	word_end(t);
	word_begin(t, "stamps", 1);
	word_eq(t, "narrow layout", cql_layout_init(&l, 2, 2), 0);
	word_eq(t, "narrow mask", cql_stamp_mask(&l), 31);
	word_eq(t, "last position", cql_stamp_of_pos(&l, 15), 30);
	word_eq(t, "arrival at 0", cql_stamp_arrival(&l, 0), 31);
	word_eq(t, "last before first", cql_stamp_before(&l, 30, 0), 1);
	word_eq(t, "arrival wraps", cql_stamp_before(&l, 30, 31), 1);
	word_eq(t, "arrival before 0", cql_stamp_before(&l, 31, 0), 1);
	word_eq(t, "15 apart", cql_stamp_before(&l, 0, 15), 1);
	word_eq(t, "16 apart", cql_stamp_before(&l, 0, 16), 0);
	word_eq(t, "16 apart, back", cql_stamp_before(&l, 16, 0), 0);
	word_end(t);
}

/* ---- release decisions (Fig. 7 lines 7-19) ------------------------------ */

struct cq_rel_case {
	const char *name;
	enum cql_mode mode;
	u64 prev;
	u64 q[4];
	enum cql_release act;
	u32 first, count;
};

/* Capacity 4, 3 version bits; the examples dequeue at position 8 (lap 2). */
#define R(qh, qs, wc, rid)	CQH(2, 3, qh, qs, wc, rid)
#define ES(lap)			CQE(3, 0, 0x100, lap, 0)
#define EX(lap)			CQE(3, 1, 0x200, lap, 0)

static const struct cq_rel_case cq_rel_cases[] = {
	{ "writer, last one out", CQ_X, R(8, 1, 1, 0), { 0 }, CQL_REL_DONE, 0, 0 },
	{ "writer to writer", CQ_X, R(8, 3, 2, 0), { 0, EX(2), ES(2), 0 }, CQL_REL_NOTIFY, 9, 1 },
	{ "writer to readers up to a writer", CQ_X, R(8, 4, 2, 0), { 0, ES(2), ES(2), EX(2) },
	  CQL_REL_NOTIFY, 9, 2 },
	{ "writer to readers up to the tail", CQ_X, R(8, 3, 1, 0), { EX(1), ES(2), ES(2), EX(1) },
	  CQL_REL_NOTIFY, 9, 2 },
	{ "writer, successor not populated", CQ_X, R(8, 2, 1, 0), { 0, ES(1), 0, 0 },
	  CQL_REL_REFETCH, 0, 0 },
	{ "writer, later reader not populated", CQ_X, R(8, 3, 1, 0), { 0, ES(2), 0, 0 },
	  CQL_REL_REFETCH, 0, 0 },
	{ "writer, successor overwritten", CQ_X, R(8, 2, 1, 0), { 0, EX(3), 0, 0 },
	  CQL_REL_RESET, 0, 0 },
	{ "reader, successor still holds", CQ_S, R(8, 3, 1, 0), { 0, 0, EX(2), 0 },
	  CQL_REL_DONE, 0, 0 },
	{ "reader to writer", CQ_S, R(8, 2, 1, 0), { 0, EX(2), 0, 0 }, CQL_REL_NOTIFY, 9, 1 },
	{ "reader, a writer not populated", CQ_S, R(8, 3, 1, 0), { 0, 0, EX(1), 0 },
	  CQL_REL_REFETCH, 0, 0 },
	{ "reader, stale writer entry of a holder", CQ_S, R(8, 2, 0, 0), { 0, EX(1), 0, 0 },
	  CQL_REL_DONE, 0, 0 },
	{ "reader, an entry overwritten", CQ_S, R(8, 3, 1, 0), { 0, 0, EX(3), 0 },
	  CQL_REL_RESET, 0, 0 },
	{ "reader, last one out", CQ_S, R(8, 1, 0, 0), { 0 }, CQL_REL_DONE, 0, 0 },
	{ "new head in the all-ones lap", CQ_S, R(27, 1, 0, 0), { 0 }, CQL_REL_RESET, 0, 0 },
	{ "all-ones lap in the queue", CQ_X, R(26, 3, 1, 0), { 0, 0, 0, EX(6) }, CQL_REL_RESET,
	  0, 0 },
	{ "just before the all-ones lap", CQ_X, R(26, 2, 2, 0), { 0, 0, 0, EX(6) },
	  CQL_REL_NOTIFY, 27, 1 },
	{ "resetting: nothing to do", CQ_X, R(8, 3, 2, 5), { 0, EX(2), 0, 0 }, CQL_REL_DONE, 0, 0 },
	{ "word reset under a writer", CQ_X, R(0, 0, 0, 0), { 0 }, CQL_REL_RESET, 0, 0 },
	{ "word reset under a reader", CQ_S, R(0, 0, 0, 0), { 0 }, CQL_REL_RESET, 0, 0 },
	{ "writer not counted", CQ_X, R(3, 2, 0, 0), { 0 }, CQL_REL_RESET, 0, 0 },
	{ "queue around the buffer's end", CQ_X, R(10, 4, 2, 0), { ES(3), EX(3), 0, ES(2) },
	  CQL_REL_NOTIFY, 11, 2 },
	{ "overflowed: own slot reused", CQ_X, R(8, 5, 1, 0), { ES(3), ES(2), ES(2), ES(2) },
	  CQL_REL_NOTIFY, 9, 4 },
	{ "overflowed: waiter's slot reused", CQ_X, R(8, 5, 2, 0), { ES(3), EX(3), ES(2), ES(2) },
	  CQL_REL_RESET, 0, 0 },
};

#undef R
#undef ES
#undef EX

static void cq_run_release(struct word_tctx *t)
{
	struct cql_layout l = cq_layout(t, 2, 3);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cq_rel_cases); i++) {
		const struct cq_rel_case *r = &cq_rel_cases[i];
		u32 first = 0, count = 0;

		word_begin(t, r->name, i);
		word_eq(t, "action", cql_release_next(&l, r->prev, r->mode, r->q, &first, &count),
			r->act);
		word_eq(t, "first", first, r->first);
		word_eq(t, "count", count, r->count);
		word_end(t);
	}
}

/* ---- reference model ----------------------------------------------------- */

#define CQM_CLIENTS	40
#define CQM_CAP_MAX	32
#define CQM_STEPS	2000
#define CQM_SEEDS	60

enum cqm_state { CQM_IDLE, CQM_WAITING, CQM_HOLDING, CQM_RELEASING };

struct cqm_client {
	u8 state;
	u8 mode;
	bool populated;
	u32 cid;
	u64 pos;	/* absolute position: never wraps */
	u64 ts;		/* absolute microseconds */
	u64 prev;	/* releasing: header its dequeue FA returned */
	u64 succ;	/* releasing: absolute position of its successor */
	u32 n;		/* releasing: clients queued behind it at its FA */
	u32 writers;	/* releasing: writers queued at its FA */
};

/* What a slot of the queue was last written with, and for which position. */
struct cqm_slot {
	bool written;
	u8 mode;
	u16 ts;
	u32 cid;
	u64 pos;
};

/**
 * struct cql_model - the model checker's state
 * @rng: splitmix64 state.
 * @l: layout under test.
 * @hdr: the simulated header.
 * @q: the simulated queue slots.
 * @head: absolute qhead: the epoch's first position plus its dequeues.
 * @tail: absolute position of the next enqueue.
 * @clock: microseconds.
 * @nq: clients in @fifo.
 * @fifo: clients not yet dequeued, in position order.
 * @slot: what each slot of @q holds.
 * @c: the clients.
 */
struct cql_model {
	u64 rng;
	struct cql_layout l;
	u64 hdr;
	u64 q[CQM_CAP_MAX];
	u64 head;
	u64 tail;
	u64 clock;
	unsigned int nq;
	s8 fifo[CQM_CLIENTS];
	struct cqm_slot slot[CQM_CAP_MAX];
	struct cqm_client c[CQM_CLIENTS];
};

static u32 cqm_rand(struct cql_model *m, u32 below)
{
	return word_rand(&m->rng, below);
}

static u64 cqm_lap(struct cql_model *m, u64 pos)
{
	return pos >> m->l.cap_bits;
}

/* The specification: writers wait for everybody ahead, readers for writers. */
static bool cqm_spec_granted(struct cql_model *m, unsigned int idx)
{
	unsigned int j;

	if (m->c[m->fifo[idx]].mode == CQL_EXCLUSIVE)
		return idx == 0;
	for (j = 0; j < idx; j++)
		if (m->c[m->fifo[j]].mode == CQL_EXCLUSIVE)
			return false;
	return true;
}

static unsigned int cqm_writers(struct cql_model *m)
{
	unsigned int j, w = 0;

	for (j = 0; j < m->nq; j++)
		w += m->c[m->fifo[j]].mode == CQL_EXCLUSIVE;
	return w;
}

static int cqm_fifo_at(struct cql_model *m, u64 pos)
{
	unsigned int j;

	for (j = 0; j < m->nq; j++)
		if (m->c[m->fifo[j]].pos == pos)
			return j;
	return -1;
}

/*
 * What an entry read for absolute position @pos must be judged, from what
 * the slot holds. Two aliases are part of the encoding's contract: an
 * entry written in the all-ones lap reads as never written, and one written
 * after the wrap reads as an old lap (a reset is due before either matters).
 */
static enum cql_entry_state cqm_ref_state(struct cql_model *m, u64 pos)
{
	struct cqm_slot *s = &m->slot[pos & (cql_capacity(&m->l) - 1)];
	u64 ones = cql_ver_init(&m->l);

	if (cqm_lap(m, pos) == ones)
		return CQL_ENTRY_VER_OVERFLOW;
	if (!s->written || s->pos < pos || cqm_lap(m, s->pos) >= ones)
		return CQL_ENTRY_OBSOLETE;
	return s->pos == pos ? CQL_ENTRY_VALID : CQL_ENTRY_OVERWRITTEN;
}

static u8 cqm_slot_mode(struct cql_model *m, u64 pos)
{
	return m->slot[pos & (cql_capacity(&m->l) - 1)].mode;
}

/* The release decision, from the model's plain state. */
static enum cql_release cqm_expect(struct cql_model *m, struct cqm_client *c, u32 *count)
{
	u64 last = c->succ + (c->n ? c->n - 1 : 0), p;
	enum cql_entry_state st;
	u32 writers = 0;

	if (cqm_lap(m, last) >= cql_ver_init(&m->l))
		return CQL_REL_RESET;
	if (!c->n)
		return CQL_REL_DONE;
	for (p = c->succ; p <= last; p++) {
		st = cqm_ref_state(m, p);
		if (st == CQL_ENTRY_OVERWRITTEN)
			return CQL_REL_RESET;
		if (c->mode == CQL_SHARED) {
			writers += st == CQL_ENTRY_VALID && cqm_slot_mode(m, p) == CQL_EXCLUSIVE;
			continue;
		}
		if (st == CQL_ENTRY_OBSOLETE)
			return CQL_REL_REFETCH;
		if (cqm_slot_mode(m, p) == CQL_EXCLUSIVE)
			break;
	}
	if (c->mode == CQL_EXCLUSIVE) {
		*count = p == c->succ ? 1 : p - c->succ;
		return CQL_REL_NOTIFY;
	}
	if (writers != c->writers)
		return CQL_REL_REFETCH;
	if (cqm_ref_state(m, c->succ) != CQL_ENTRY_VALID ||
	    cqm_slot_mode(m, c->succ) != CQL_EXCLUSIVE)
		return CQL_REL_DONE;
	*count = 1;
	return CQL_REL_NOTIFY;
}

static void cqm_epoch(struct cql_model *m, u64 start)
{
	unsigned int i;

	m->hdr = cql_hdr_pack(&m->l, start, 0, 0, 0);
	m->head = start;
	m->tail = start;
	m->nq = 0;
	for (i = 0; i < CQM_CAP_MAX; i++) {
		m->q[i] = CQL_ENTRY_INIT;
		m->slot[i].written = false;
	}
	for (i = 0; i < CQM_CLIENTS; i++)
		m->c[i].state = CQM_IDLE;
}

/* Section 4.4: set the reset id, everybody aborts or releases, start over. */
static void cqm_reset(struct word_tctx *t, struct cql_model *m, enum cqm_stat why)
{
	u32 node = cqm_rand(m, 32);
	u64 new = 0, prev;

	t->stats[why]++;
	word_eq(t, "set reset", cql_hdr_set_reset(m->hdr, node, &new), 1);
	word_eq(t, "reset keeps the fields", cql_hdr_clear_reset(new), m->hdr);
	word_eq(t, "reset node", cql_hdr_reset_node(new), node);
	word_eq(t, "second reset refused", cql_hdr_set_reset(new, (node + 1) % 32, &prev), 0);
	/* An enqueue that lands now must abort, not wait or hold. */
	prev = new;
	m->hdr = new + cql_enqueue_delta(&m->l, CQL_EXCLUSIVE);
	word_eq(t, "enqueue during reset", cql_granted_at_enqueue(&m->l, prev, CQL_SHARED), 0);
	word_eq(t, "reset id survives the FA", cql_hdr_reset_id(m->hdr), node + 1);
	cqm_epoch(m, 0);
	m->hdr = CQL_HDR_INIT;
}

static void cqm_enqueue(struct word_tctx *t, struct cql_model *m, int i)
{
	struct cqm_client *c = &m->c[i];
	enum cql_mode mode = cqm_rand(m, 100) < 55 ? CQL_SHARED : CQL_EXCLUSIVE;
	bool granted = mode == CQL_SHARED ? !cqm_writers(m) : !m->nq;
	u64 prev = m->hdr;

	m->hdr += cql_enqueue_delta(&m->l, mode);
	word_eq(t, "enqueue position", cql_enqueue_pos(&m->l, prev), m->tail & cql_pos_mask(&m->l));
	word_eq(t, "granted at enqueue", cql_granted_at_enqueue(&m->l, prev, mode), granted);
	word_eq(t, "enqueue overflow", cql_enqueue_overflow(&m->l, prev),
		m->nq >= cql_capacity(&m->l));
	if (m->nq >= cql_capacity(&m->l))
		t->stats[CQM_ST_QUEUE_OVERFLOW]++;
	if (m->tail > cql_pos_mask(&m->l))
		t->stats[CQM_ST_POS_WRAP]++;
	c->mode = mode;
	c->pos = m->tail++;
	c->cid = cql_cid(i, cqm_rand(m, CQL_LOCAL_MAX + 1));
	c->ts = m->clock;
	c->populated = false;
	c->state = granted ? CQM_HOLDING : CQM_WAITING;
	m->fifo[m->nq++] = i;
	if (granted)
		t->stats[CQM_ST_GRANT_ENQ]++;
}

static void cqm_populate(struct cql_model *m, int i)
{
	struct cqm_client *c = &m->c[i];
	u32 idx = c->pos & (cql_capacity(&m->l) - 1);

	m->q[idx] = cql_entry_populate(&m->l, c->pos & cql_pos_mask(&m->l), c->mode, c->cid,
				       (u16)c->ts);
	m->slot[idx].written = true;
	m->slot[idx].pos = c->pos;
	m->slot[idx].mode = c->mode;
	m->slot[idx].cid = c->cid;
	m->slot[idx].ts = (u16)c->ts;
	c->populated = true;
}

static void cqm_fetch(struct word_tctx *t, struct cql_model *m, int i)
{
	struct cqm_client *c = &m->c[i];
	u32 first = 0, count = 0, want_count = 0, k;
	enum cql_release act, want;
	int j;

	act = cql_release_next(&m->l, c->prev, c->mode, m->q, &first, &count);
	want = cqm_expect(m, c, &want_count);
	if (!word_eq(t, "release action", act, want))
		return;
	switch (act) {
	case CQL_REL_DONE:
		c->state = CQM_IDLE;
		break;
	case CQL_REL_REFETCH:
		t->stats[CQM_ST_REFETCH]++;
		break;
	case CQL_REL_RESET:
		cqm_reset(t, m, cqm_lap(m, c->succ + (c->n ? c->n - 1 : 0)) >=
			  cql_ver_init(&m->l) ? CQM_ST_RESET_VERSION : CQM_ST_RESET_OVERWRITE);
		break;
	case CQL_REL_NOTIFY:
		word_eq(t, "notify first", first, c->succ & cql_pos_mask(&m->l));
		word_eq(t, "notify count", count, want_count);
		for (k = 0; k < count; k++) {
			j = cqm_fifo_at(m, c->succ + k);
			if (!word_eq(t, "notified client queued", j >= 0, 1))
				return;
			word_eq(t, "notified client waits", m->c[m->fifo[j]].state, CQM_WAITING);
			word_eq(t, "notified client granted", cqm_spec_granted(m, j), 1);
			m->c[m->fifo[j]].state = CQM_HOLDING;
			t->stats[m->c[m->fifo[j]].mode == CQL_EXCLUSIVE ?
				 CQM_ST_NOTIFY_WRITER : CQM_ST_NOTIFY_READERS]++;
		}
		c->state = CQM_IDLE;
		break;
	}
}

static void cqm_release(struct word_tctx *t, struct cql_model *m, int i)
{
	struct cqm_client *c = &m->c[i];
	int j = cqm_fifo_at(m, c->pos);

	c->prev = m->hdr;
	c->writers = cqm_writers(m);
	m->hdr += cql_dequeue_delta(&m->l, c->mode);
	for (; j + 1 < (int)m->nq; j++)
		m->fifo[j] = m->fifo[j + 1];
	m->nq--;
	m->head++;
	c->succ = m->head;
	c->n = m->nq;
	c->state = CQM_RELEASING;
	/* The paper piggybacks the first READ of the queue on the FA. */
	cqm_fetch(t, m, i);
}

/* Read any slot for a position around the queue and judge it. */
static void cqm_probe(struct word_tctx *t, struct cql_model *m)
{
	u32 cap = cql_capacity(&m->l);
	u64 lo = m->head > 2 * cap ? m->head - 2 * cap : 0;
	u64 pos = lo + cqm_rand(m, m->tail + cap - lo);
	struct cqm_slot *s = &m->slot[pos & (cap - 1)];
	enum cql_entry_state want;
	u64 e = m->q[pos & (cap - 1)];

	/* Beyond the all-ones lap a reset is due: nothing to judge there. */
	if (cqm_lap(m, pos) > cql_ver_init(&m->l) ||
	    (s->written && cqm_lap(m, s->pos) > cql_ver_init(&m->l)))
		return;
	want = cqm_ref_state(m, pos);
	word_eq(t, "entry state", cql_entry_classify(&m->l, e, pos & cql_pos_mask(&m->l)), want);
	if (want == CQL_ENTRY_VALID) {
		word_eq(t, "entry mode", cql_entry_mode(e), s->mode);
		word_eq(t, "entry cid", cql_entry_cid(e), s->cid);
		word_eq(t, "entry ts", cql_entry_ts(e), s->ts);
		t->stats[CQM_ST_PROBE_VALID]++;
	} else if (want == CQL_ENTRY_OBSOLETE) {
		t->stats[CQM_ST_PROBE_OBSOLETE]++;
	} else if (want == CQL_ENTRY_OVERWRITTEN) {
		t->stats[CQM_ST_PROBE_OVERWRITTEN]++;
	}
}

/* Two clients' acquisition times, when they are within the documented half. */
static void cqm_ts(struct word_tctx *t, struct cql_model *m)
{
	u64 a = m->c[cqm_rand(m, CQM_CLIENTS)].ts, b = m->c[cqm_rand(m, CQM_CLIENTS)].ts;
	u64 d = a > b ? a - b : b - a;
	bool wrapped = (u16)a < (u16)b, earlier = a < b;

	if (d > CQL_TS_HALF)
		return;
	if (wrapped != earlier)
		t->stats[CQM_ST_TS_WRAPPED]++;
	word_eq(t, "ts before", cql_ts_before((u16)a, (u16)b), a < b);
	word_eq(t, "ts after", cql_ts_before((u16)b, (u16)a), b < a);
}

static int cqm_pick(struct cql_model *m, enum cqm_state st)
{
	int i, start = cqm_rand(m, CQM_CLIENTS);

	for (i = 0; i < CQM_CLIENTS; i++) {
		int j = (start + i) % CQM_CLIENTS;

		if (m->c[j].state == st && (st != CQM_WAITING || !m->c[j].populated))
			return j;
	}
	return -1;
}

/* After every step: the header against the model, exclusion, liveness. */
static void cqm_check(struct word_tctx *t, struct cql_model *m)
{
	unsigned int j, readers = 0, writers = 0, owed = 0, releasing = 0;
	struct cqm_client *c;

	word_eq(t, "qhead", cql_hdr_qhead(&m->l, m->hdr), m->head & cql_pos_mask(&m->l));
	word_eq(t, "qsize", cql_hdr_qsize(&m->l, m->hdr), m->nq);
	word_eq(t, "wcnt", cql_hdr_wcnt(&m->l, m->hdr), cqm_writers(m));
	word_eq(t, "reset id", cql_hdr_reset_id(m->hdr), 0);
	word_eq(t, "header valid", cql_hdr_valid(&m->l, m->hdr), 1);
	word_eq(t, "queue overflow", cql_hdr_overflow(&m->l, m->hdr), m->nq > cql_capacity(&m->l));
	for (j = 0; j < m->nq; j++) {
		c = &m->c[m->fifo[j]];
		if (c->state == CQM_HOLDING) {
			readers += c->mode == CQL_SHARED;
			writers += c->mode == CQL_EXCLUSIVE;
			word_eq(t, "holder granted", cqm_spec_granted(m, j), 1);
		} else {
			owed += cqm_spec_granted(m, j);
		}
		if (c->mode == CQL_EXCLUSIVE && c->state == CQM_WAITING)
			word_eq(t, "waiting writer at head",
				cql_at_head(&m->l, m->hdr, c->pos & cql_pos_mask(&m->l)), j == 0);
		/* What a waiter's liveness check concludes is never early. */
		if (c->state == CQM_WAITING &&
		    cql_waiter_granted(&m->l, m->hdr, c->pos & cql_pos_mask(&m->l), c->mode))
			word_eq(t, "liveness check grants only a granted waiter",
				cqm_spec_granted(m, j), 1);
	}
	for (j = 0; j < CQM_CLIENTS; j++)
		releasing += m->c[j].state == CQM_RELEASING;
	word_eq(t, "one writer alone", writers > 1 || (writers && readers), 0);
	/* Every grant is notified once the releases in flight are done. */
	if (!releasing)
		word_eq(t, "granted waiter never notified", owed, 0);
}

static void cqm_step(struct word_tctx *t, struct cql_model *m)
{
	u32 r = cqm_rand(m, 100), cap = cql_capacity(&m->l);
	int i;

	m->clock += cqm_rand(m, 1500);
	if (r < 28) {
		i = cqm_pick(m, CQM_IDLE);
		if (i >= 0 && m->nq < 2 * cap - 1)
			cqm_enqueue(t, m, i);
	} else if (r < 46) {
		i = cqm_pick(m, CQM_WAITING);
		if (i >= 0)
			cqm_populate(m, i);
	} else if (r < 68) {
		i = cqm_pick(m, CQM_HOLDING);
		if (i >= 0)
			cqm_release(t, m, i);
	} else if (r < 80) {
		i = cqm_pick(m, CQM_RELEASING);
		if (i >= 0)
			cqm_fetch(t, m, i);
	} else if (r < 90) {
		cqm_probe(t, m);
	} else if (r < 96) {
		cqm_ts(t, m);
	} else if (r < 97) {
		/* A waiter gives up (appendix B) and resets the lock. */
		if (m->nq)
			cqm_reset(t, m, CQM_ST_RESET_TIMEOUT);
	} else {
		m->clock += 20000 + cqm_rand(m, 40000);
	}
	cqm_check(t, m);
}

static void cqm_run(struct word_tctx *t, unsigned int c, unsigned int mbits, u64 seed0)
{
	struct cql_model *m = t->model;
	unsigned int seed, step;
	u64 start;

	for (seed = 0; seed < CQM_SEEDS; seed++) {
		word_begin(t, "seed", seed);
		__builtin_memset(m, 0, sizeof(*m));
		m->rng = seed0 + seed;
		word_eq(t, "layout", cql_layout_init(&m->l, c, mbits), 0);
		/* Half the runs start two laps before the all-ones lap. */
		start = 0;
		if (seed & 1)
			start = ((u64)cql_ver_init(&m->l) - 2) << c |
				cqm_rand(m, cql_capacity(&m->l));
		cqm_epoch(m, start);
		for (step = 0; step < CQM_STEPS && t->failures == t->case_failures; step++)
			cqm_step(t, m);
		word_end(t);
	}
}

static const struct {
	u32 c, m;
	u64 seed;
} cqm_layouts[] = {
	{ 1, 2, 0xc0ffee00ULL }, { 2, 2, 0x5eed0000ULL }, { 2, 3, 0xdec10c00ULL },
	{ 3, 4, 0x0badc0deULL }, { 5, 16, 0xfeedf00dULL },
};

static void cq_run_model(struct word_tctx *t)
{
	unsigned long before[CQM_NR_STATS];
	unsigned int i;

	for (i = 0; i < CQM_NR_STATS; i++)
		before[i] = t->stats[i];
	for (i = 0; i < ARRAY_SIZE(cqm_layouts); i++)
		cqm_run(t, cqm_layouts[i].c, cqm_layouts[i].m, cqm_layouts[i].seed);
	/* The runs must have reached every state the model counts. */
	word_begin(t, "every event reached", i);
	for (i = 0; i < CQM_NR_STATS; i++)
		word_eq(t, "event seen", t->stats[i] > before[i], 1);
	word_end(t);
}

static const struct word_case_group cql_case_groups[] = {
	{ "layout", cq_run_layout },
	{ "deltas", cq_run_delta },
	{ "grant", cq_run_grant },
	{ "qhead_wrap", cq_run_wrap },
	{ "queue_overflow", cq_run_overflow },
	{ "version", cq_run_version },
	{ "classify", cq_run_classify },
	{ "version_wrap", cq_run_vwrap },
	{ "entry", cq_run_entry },
	{ "reset", cq_run_reset },
	{ "timestamp", cq_run_ts },
	{ "stamp", cq_run_stamp },
	{ "release", cq_run_release },
	{ "model", cq_run_model },
};

/* What each enum cqm_stat counts, as the host program reports it. */
static const char * const cql_stat_names[CQM_NR_STATS] = {
	"granted by the enqueue", "writers notified", "readers notified by a writer",
	"refetches", "version overflow resets", "overwrite resets", "timeout resets",
	"overflowing enqueues", "enqueues past the qhead wrap", "probes valid",
	"probes obsolete", "probes overwritten", "timestamps compared across the wrap",
};

static const struct word_suite cql_word_suite = WORD_SUITE(cql);

#endif /* _RDLOCK_TESTS_CQL_CASES_H */
