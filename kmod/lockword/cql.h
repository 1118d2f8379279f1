/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CQL (DecLock) lock words: the pure encoding (layer 2 of rdlock).
 *
 * Source: "DecLock: A Case of Decoupled Locking for Disaggregated Memory",
 * sections 4.1-4.4 and 5.1-5.3, appendices A and B. A CQL lock is a 64-bit
 * header, only ever changed by FETCH_AND_ADD (and by CAS/WRITE during a
 * reset), and a circular queue of 64-bit entries written with one WRITE
 * each. Everything here is arithmetic on those words; the protocol layer
 * issues the RDMA operations and asks these helpers what the values mean.
 *
 * Header (paper Fig. 5), most significant field first, c = log2(capacity),
 * M = version bits::
 *
 *	63                                                     8       0
 *	+----------+---------+---------+-----------+----------+
 *	|  qhead   |  qsize  |  wcnt   | (unused,0) | reset id |
 *	|  c + M   |  c + 1  |  c + 1  |            |    9     |
 *	+----------+---------+---------+-----------+----------+
 *
 * qhead is a position: its low c bits are the queue index, its top M bits
 * the lap of the circular buffer, which is the version of the entries
 * written in that lap. It is the most significant field so that only it
 * wraps, with its carry falling off bit 63. qsize and wcnt have one bit
 * more than the capacity needs, so qsize may exceed the capacity (a queue
 * overflow, later cured by a reset) without carrying into qhead. The reset
 * id is the resetting node's id plus one; 0 means no reset.
 *
 * Limits (cql_layout_init() refuses anything else with -EINVAL):
 *  - capacity 2^c with 1 <= c <= 12 (2 .. 4096 entries): a queue of one
 *    entry would overflow with a single waiter, and 3 * 12 + 16 + 2 + 9 =
 *    63 bits is the widest header that still fits;
 *  - M version bits, 2 <= M <= 16: the all-ones version is the initial
 *    value and never usable, so one bit would leave a single lap between
 *    resets; 16 is the paper's choice and the entry's field width;
 *  - the header is exact while at most 2 * capacity - 1 clients are in one
 *    queue (qsize's range). With one entry per node (section 5) a capacity
 *    of at least the number of nodes never overflows.
 *
 * Entry (paper Fig. 9), 64 bits written whole by one RDMA WRITE::
 *
 *	63      48 47     32 31    24 23            1  0
 *	+---------+---------+--------+---------------+----+
 *	|   ts    |  ~ver   |  node  |   local id    | EX |
 *	+---------+---------+--------+---------------+----+
 *
 * ts is the 16-bit acquisition time in microseconds (section 5.3); the
 * version is stored complemented in the low M bits of its field, so that an
 * all-zero slot (a fresh or restarted lock table, or a reset that writes
 * zeros) reads as version all-ones, the paper's initial value. The client id
 * is the node id (8 bits; rdlock has 32 nodes) and an id the node chooses
 * for the waiter to notify (23 bits, 8M waiters per node); EX is set for
 * exclusive mode.
 */
#ifndef _RDLOCK_LOCKWORD_CQL_H
#define _RDLOCK_LOCKWORD_CQL_H

#include "compat.h"
#include <linux/errno.h>

#define CQL_CAP_BITS_MIN	1
#define CQL_CAP_BITS_MAX	12
#define CQL_VER_BITS_MIN	2
#define CQL_VER_BITS_MAX	16
/* Capacity = RDLOCK_MAX_NODES, one entry per node (paper 6.1: #CNs). */
#define CQL_CAP_BITS_DEFAULT	5
#define CQL_VER_BITS_DEFAULT	16

#define CQL_RESET_BITS		9
#define CQL_RESET_MASK		((1ULL << CQL_RESET_BITS) - 1)

#define CQL_NODE_BITS		8
#define CQL_LOCAL_BITS		23
#define CQL_NODE_MAX		((1U << CQL_NODE_BITS) - 1)
#define CQL_LOCAL_MAX		((1U << CQL_LOCAL_BITS) - 1)

#define CQL_ENT_TS_SHIFT	48
#define CQL_ENT_VER_SHIFT	32
#define CQL_ENT_CID_SHIFT	1
#define CQL_ENT_EX		1ULL

/* A lock word that nobody has touched: all zero, as the table starts. */
#define CQL_HDR_INIT		0ULL
#define CQL_ENTRY_INIT		0ULL

/* Timestamps further apart than this are taken to have wrapped. */
#define CQL_TS_HALF		0x7fffU

/**
 * enum cql_mode - acquisition mode, the EX bit of an entry
 * @CQL_SHARED: reader.
 * @CQL_EXCLUSIVE: writer.
 */
enum cql_mode {
	CQL_SHARED,
	CQL_EXCLUSIVE,
};

/**
 * struct cql_layout - field widths of one lockspace's CQL words
 * @cap_bits: c, log2 of the queue capacity.
 * @ver_bits: M, bits of the lap (entry version) above the queue index.
 * @qhead_shift: lowest bit of qhead (64 - c - M).
 * @qsize_shift: lowest bit of qsize.
 * @wcnt_shift: lowest bit of wcnt.
 *
 * Filled in by cql_layout_init(); every other helper assumes a valid one.
 */
struct cql_layout {
	u8 cap_bits;
	u8 ver_bits;
	u8 qhead_shift;
	u8 qsize_shift;
	u8 wcnt_shift;
};

/**
 * cql_layout_init() - derive the header layout from lockspace parameters
 * @l: filled in on success.
 * @cap_bits: log2 of the queue capacity, CQL_CAP_BITS_MIN..CQL_CAP_BITS_MAX.
 * @ver_bits: version bits, CQL_VER_BITS_MIN..CQL_VER_BITS_MAX.
 *
 * Return: 0, or -EINVAL (and @l untouched) for a parameter out of range.
 */
static inline int cql_layout_init(struct cql_layout *l, unsigned int cap_bits,
				  unsigned int ver_bits)
{
	if (cap_bits < CQL_CAP_BITS_MIN || cap_bits > CQL_CAP_BITS_MAX ||
	    ver_bits < CQL_VER_BITS_MIN || ver_bits > CQL_VER_BITS_MAX)
		return -EINVAL;
	l->cap_bits = cap_bits;
	l->ver_bits = ver_bits;
	l->qhead_shift = 64 - cap_bits - ver_bits;
	l->qsize_shift = l->qhead_shift - (cap_bits + 1);
	l->wcnt_shift = l->qsize_shift - (cap_bits + 1);
	return 0;
}

/**
 * cql_capacity() - entries in the circular queue
 * @l: layout.
 *
 * Return: 2^c.
 */
static inline u32 cql_capacity(const struct cql_layout *l)
{
	return 1U << l->cap_bits;
}

/* Mask of qsize and wcnt (c + 1 bits). */
static inline u32 cql_cnt_mask(const struct cql_layout *l)
{
	return (2U << l->cap_bits) - 1;
}

/**
 * cql_pos_mask() - mask of a position, i.e. of the qhead field
 * @l: layout.
 *
 * Return: 2^(c + M) - 1.
 */
static inline u32 cql_pos_mask(const struct cql_layout *l)
{
	return (1U << (l->cap_bits + l->ver_bits)) - 1;
}

/**
 * cql_ver_init() - the initial version of every entry
 * @l: layout.
 *
 * Section 4.3: entries start at version -1, all M bits set. A lap that
 * reaches it can no longer be told from an unwritten entry.
 *
 * Return: 2^M - 1.
 */
static inline u32 cql_ver_init(const struct cql_layout *l)
{
	return (1U << l->ver_bits) - 1;
}

/**
 * cql_hdr_qhead() - qhead of a header: the position of the queue's head
 * @l: layout.
 * @h: header.
 *
 * Return: the field (c + M bits).
 */
static inline u32 cql_hdr_qhead(const struct cql_layout *l, u64 h)
{
	return h >> l->qhead_shift;
}

/**
 * cql_hdr_qsize() - clients in the queue, holders and waiters
 * @l: layout.
 * @h: header.
 *
 * Return: the field (c + 1 bits).
 */
static inline u32 cql_hdr_qsize(const struct cql_layout *l, u64 h)
{
	return (h >> l->qsize_shift) & cql_cnt_mask(l);
}

/**
 * cql_hdr_wcnt() - writers in the queue, holding or waiting
 * @l: layout.
 * @h: header.
 *
 * Return: the field (c + 1 bits).
 */
static inline u32 cql_hdr_wcnt(const struct cql_layout *l, u64 h)
{
	return (h >> l->wcnt_shift) & cql_cnt_mask(l);
}

/**
 * cql_hdr_reset_id() - the reset field: 0, or resetting node id + 1
 * @h: header.
 *
 * Return: the field.
 */
static inline u32 cql_hdr_reset_id(u64 h)
{
	return h & CQL_RESET_MASK;
}

/**
 * cql_hdr_pack() - build a header
 * @l: layout.
 * @qhead: head position.
 * @qsize: clients in the queue.
 * @wcnt: writers in the queue.
 * @reset_id: 0 or node id + 1.
 *
 * Return: the header, every field truncated to its width.
 */
static inline u64 cql_hdr_pack(const struct cql_layout *l, u32 qhead, u32 qsize,
			       u32 wcnt, u32 reset_id)
{
	return ((u64)(qhead & cql_pos_mask(l)) << l->qhead_shift) |
	       ((u64)(qsize & cql_cnt_mask(l)) << l->qsize_shift) |
	       ((u64)(wcnt & cql_cnt_mask(l)) << l->wcnt_shift) |
	       (reset_id & CQL_RESET_MASK);
}

/**
 * cql_hdr_valid() - could the protocol have produced this header
 * @l: layout.
 * @h: header.
 *
 * The bits between wcnt and the reset id are zero, wcnt <= qsize (writers
 * are clients) and the reset id names a node id up to CQL_NODE_MAX.
 *
 * Return: true if all three hold.
 */
static inline bool cql_hdr_valid(const struct cql_layout *l, u64 h)
{
	u64 unused = ((1ULL << l->wcnt_shift) - 1) & ~CQL_RESET_MASK;

	return !(h & unused) && cql_hdr_wcnt(l, h) <= cql_hdr_qsize(l, h) &&
	       cql_hdr_reset_id(h) <= CQL_NODE_MAX + 1;
}

/**
 * cql_enqueue_delta() - FA operand that enqueues a client
 * @l: layout.
 * @mode: acquisition mode.
 *
 * Fig. 7 line 1: qsize + 1, and wcnt + 1 for a writer.
 *
 * Return: the operand.
 */
static inline u64 cql_enqueue_delta(const struct cql_layout *l,
				    enum cql_mode mode)
{
	return (1ULL << l->qsize_shift) +
	       (mode == CQL_EXCLUSIVE ? 1ULL << l->wcnt_shift : 0);
}

/**
 * cql_dequeue_delta() - FA operand that dequeues a releasing client
 * @l: layout.
 * @mode: mode the client held the lock in.
 *
 * Fig. 7 line 6: qhead + 1, qsize - 1, and wcnt - 1 for a writer, as one
 * 64-bit addition (the subtractions are two's complement). It is exact only
 * on a header that counts the client (qsize >= 1, and wcnt >= 1 for a
 * writer): on a word reset since, it borrows from qhead.
 *
 * Return: the operand.
 */
static inline u64 cql_dequeue_delta(const struct cql_layout *l,
				    enum cql_mode mode)
{
	return (1ULL << l->qhead_shift) - (1ULL << l->qsize_shift) -
	       (mode == CQL_EXCLUSIVE ? 1ULL << l->wcnt_shift : 0);
}

/**
 * cql_pos_add() - a position @n places after @pos
 * @l: layout.
 * @pos: position.
 * @n: distance.
 *
 * Return: (@pos + @n) modulo 2^(c + M), as qhead wraps.
 */
static inline u32 cql_pos_add(const struct cql_layout *l, u32 pos, u32 n)
{
	return (pos + n) & cql_pos_mask(l);
}

/**
 * cql_pos_index() - queue index (slot of the circular buffer) of a position
 * @l: layout.
 * @pos: position.
 *
 * Return: @pos modulo the capacity.
 */
static inline u32 cql_pos_index(const struct cql_layout *l, u32 pos)
{
	return pos & (cql_capacity(l) - 1);
}

/**
 * cql_pos_version() - version of the entry written for a position
 * @l: layout.
 * @pos: position.
 *
 * Section 4.3: the queue index divided by the capacity, i.e. the lap.
 *
 * Return: the top M bits of @pos.
 */
static inline u32 cql_pos_version(const struct cql_layout *l, u32 pos)
{
	return (pos & cql_pos_mask(l)) >> l->cap_bits;
}

/**
 * cql_version_overflow() - has a version reached the initial value
 * @l: layout.
 * @ver: version computed from a position.
 *
 * Section 4.4, "version overflow": such a version cannot be told from an
 * entry nobody wrote; the lock must be reset.
 *
 * Return: true if @ver is all ones.
 */
static inline bool cql_version_overflow(const struct cql_layout *l, u32 ver)
{
	return ver == cql_ver_init(l);
}

/**
 * cql_enqueue_pos() - the position an enqueue was given
 * @l: layout.
 * @prev: header its FA returned.
 *
 * Return: prev.qhead + prev.qsize, wrapped like qhead.
 */
static inline u32 cql_enqueue_pos(const struct cql_layout *l, u64 prev)
{
	return cql_pos_add(l, cql_hdr_qhead(l, prev), cql_hdr_qsize(l, prev));
}

/**
 * cql_hdr_resetting() - is a reset under way
 * @h: header.
 *
 * Section 4.4: any operation that meets a non-zero reset id is aborted.
 *
 * Return: true if the reset field is set.
 */
static inline bool cql_hdr_resetting(u64 h)
{
	return cql_hdr_reset_id(h) != 0;
}

/**
 * cql_granted_at_enqueue() - did the enqueuing FA grant the lock
 * @l: layout.
 * @prev: header the FA returned.
 * @mode: acquisition mode.
 *
 * Fig. 7 line 2 (case 1): a reader is granted when no writer is in the
 * queue (prev.wcnt == 0), a writer when the queue was empty (prev.qsize ==
 * 0, it is the head). Otherwise the client waits (case 2), populates its
 * entry and is notified. False during a reset: check cql_hdr_resetting()
 * first, the acquisition is then aborted rather than waiting.
 *
 * Return: true if the caller holds the lock now.
 */
static inline bool cql_granted_at_enqueue(const struct cql_layout *l, u64 prev,
					  enum cql_mode mode)
{
	if (cql_hdr_resetting(prev) || cql_hdr_wcnt(l, prev))
		return false;
	return mode == CQL_SHARED || !cql_hdr_qsize(l, prev);
}

/**
 * cql_at_head() - is a position at the head of the queue
 * @l: layout.
 * @h: a header read or returned later.
 * @pos: the client's position (cql_enqueue_pos()).
 *
 * The writer's grant rule: every client before it has dequeued. Releases
 * are counted, not identified, so this holds even when readers release out
 * of order.
 *
 * Return: true if qhead == @pos.
 */
static inline bool cql_at_head(const struct cql_layout *l, u64 h, u32 pos)
{
	return cql_hdr_qhead(l, h) == (pos & cql_pos_mask(l));
}

/**
 * cql_waiter_granted() - does the header show that a waiter holds the lock
 * @l: layout.
 * @h: a header read after the waiter enqueued.
 * @pos: the waiter's position (cql_enqueue_pos()).
 * @mode: its mode.
 *
 * A waiter holds the lock once no writer before it is queued. The header
 * shows that when qhead reached its position (every client before it
 * dequeued) or passed it: a dequeue beyond the waiter's own position is a
 * release by a client after it, and FIFO order grants nobody after a
 * waiter before the waiter itself. A reader also holds it when no writer
 * is queued at all. Otherwise the header cannot tell, and the waiter waits
 * for its notification. The liveness check of a waiter whose notification
 * was lost (its releaser found the entry already overwritten, or the
 * connection failed) relies on this.
 *
 * Return: true if the waiter at @pos holds the lock.
 */
static inline bool cql_waiter_granted(const struct cql_layout *l, u64 h,
				      u32 pos, enum cql_mode mode)
{
	u32 mask = cql_pos_mask(l);
	u32 passed = cql_pos_add(l, cql_hdr_qhead(l, h), mask + 1 - (pos & mask));

	if (cql_hdr_resetting(h))
		return false;
	/* A queue never spans half the positions (M >= 2): wrap-safe. */
	if (passed <= mask / 2)
		return true;
	return mode == CQL_SHARED && !cql_hdr_wcnt(l, h);
}

/**
 * cql_enqueue_overflow() - does an enqueue overflow the queue
 * @l: layout.
 * @prev: header its FA returned.
 *
 * With prev.qsize >= capacity the new entry's slot still belongs to a
 * queued client, whose entry the populate would overwrite (section 4.4).
 *
 * Return: true if prev.qsize >= capacity.
 */
static inline bool cql_enqueue_overflow(const struct cql_layout *l, u64 prev)
{
	return cql_hdr_qsize(l, prev) >= cql_capacity(l);
}

/**
 * cql_hdr_overflow() - is the queue overflowed
 * @l: layout.
 * @h: header.
 *
 * Return: true if qsize > capacity.
 */
static inline bool cql_hdr_overflow(const struct cql_layout *l, u64 h)
{
	return cql_hdr_qsize(l, h) > cql_capacity(l);
}

/**
 * cql_hdr_version_overflow() - does the queue reach the initial version
 * @l: layout.
 * @h: header, normally right after a dequeue.
 *
 * Appendix A: a version overflow is detected when a version computed from
 * the header reaches -1, at every release. Checked over qhead and every
 * queued position, so that nobody needs to read an entry of that lap, and
 * with an empty queue over qhead itself: otherwise uncontended use (nobody
 * populates) would carry qhead into the next wrap, where entries left from
 * 2^M laps ago would read as valid.
 *
 * Return: true if qhead or a queued position has version all ones.
 */
static inline bool cql_hdr_version_overflow(const struct cql_layout *l, u64 h)
{
	u32 qsize = cql_hdr_qsize(l, h), head = cql_hdr_qhead(l, h);
	u32 last = cql_pos_add(l, head, qsize ? qsize - 1 : 0);
	u32 vh = cql_pos_version(l, head), vl = cql_pos_version(l, last);

	/* Versions grow with the position: a window that wraps holds -1. */
	return cql_version_overflow(l, vh) || cql_version_overflow(l, vl) ||
	       vl < vh;
}

/**
 * cql_hdr_reset_node() - the node running a reset
 * @h: header; cql_hdr_resetting() must be true.
 *
 * Return: reset id - 1.
 */
static inline u32 cql_hdr_reset_node(u64 h)
{
	return cql_hdr_reset_id(h) - 1;
}

/**
 * cql_hdr_set_reset() - CAS value that starts a reset
 * @h: the CAS compare value (the header as last seen).
 * @node: the resetting node's id.
 * @new: the CAS swap value.
 *
 * Section 4.4 step 1: the reset id becomes @node + 1, the rest of the
 * header is left alone (FAs in flight still add to it). A header that is
 * already being reset is left to that reset's owner.
 *
 * Return: false if a reset is under way or @node > CQL_NODE_MAX; true with
 * @new set otherwise.
 */
static inline bool cql_hdr_set_reset(u64 h, u32 node, u64 *new)
{
	if (cql_hdr_resetting(h) || node > CQL_NODE_MAX)
		return false;
	*new = h | (node + 1);
	return true;
}

/**
 * cql_hdr_clear_reset() - the header without its reset id
 * @h: header.
 *
 * Step 3 writes %CQL_HDR_INIT, which clears it with everything else; this
 * is for a reset abandoned before step 2 (the node that set it failed,
 * appendix B) where the queue must be kept.
 *
 * Return: @h with the reset field zero.
 */
static inline u64 cql_hdr_clear_reset(u64 h)
{
	return h & ~CQL_RESET_MASK;
}

/**
 * cql_cid() - client id of an entry
 * @node: node id, at most CQL_NODE_MAX.
 * @local: the node's id for the waiter, at most CQL_LOCAL_MAX.
 *
 * Return: the 31-bit client id; each part truncated to its width.
 */
static inline u32 cql_cid(u32 node, u32 local)
{
	return ((node & CQL_NODE_MAX) << CQL_LOCAL_BITS) | (local & CQL_LOCAL_MAX);
}

/**
 * cql_cid_node() - node id of a client id
 * @cid: client id.
 *
 * Return: the node id.
 */
static inline u32 cql_cid_node(u32 cid)
{
	return (cid >> CQL_LOCAL_BITS) & CQL_NODE_MAX;
}

/**
 * cql_cid_local() - the node's waiter id of a client id
 * @cid: client id.
 *
 * Return: the local id.
 */
static inline u32 cql_cid_local(u32 cid)
{
	return cid & CQL_LOCAL_MAX;
}

/**
 * cql_entry_pack() - build a queue entry
 * @l: layout.
 * @mode: acquisition mode.
 * @cid: client id (cql_cid()).
 * @ver: version, M bits.
 * @ts: acquisition timestamp, microseconds modulo 2^16.
 *
 * Return: the entry; the version stored complemented (see the top comment).
 */
static inline u64 cql_entry_pack(const struct cql_layout *l, enum cql_mode mode,
				 u32 cid, u32 ver, u16 ts)
{
	u64 cmask = (1ULL << (CQL_NODE_BITS + CQL_LOCAL_BITS)) - 1;

	return ((u64)ts << CQL_ENT_TS_SHIFT) |
	       ((u64)(~ver & cql_ver_init(l)) << CQL_ENT_VER_SHIFT) |
	       ((cid & cmask) << CQL_ENT_CID_SHIFT) |
	       (mode == CQL_EXCLUSIVE ? CQL_ENT_EX : 0);
}

/**
 * cql_entry_populate() - the entry a waiter writes for its position
 * @l: layout.
 * @pos: its position (cql_enqueue_pos()).
 * @mode: acquisition mode.
 * @cid: client id.
 * @ts: acquisition timestamp.
 *
 * Fig. 7 lines 3-4; the slot is cql_pos_index(@pos).
 *
 * Return: the entry, with the version of @pos.
 */
static inline u64 cql_entry_populate(const struct cql_layout *l, u32 pos,
				     enum cql_mode mode, u32 cid, u16 ts)
{
	return cql_entry_pack(l, mode, cid, cql_pos_version(l, pos), ts);
}

/**
 * cql_entry_mode() - mode of an entry
 * @e: entry.
 *
 * Return: %CQL_EXCLUSIVE if the EX bit is set.
 */
static inline enum cql_mode cql_entry_mode(u64 e)
{
	return e & CQL_ENT_EX ? CQL_EXCLUSIVE : CQL_SHARED;
}

/**
 * cql_entry_cid() - client id of an entry
 * @e: entry.
 *
 * Return: the 31-bit client id.
 */
static inline u32 cql_entry_cid(u64 e)
{
	return (e >> CQL_ENT_CID_SHIFT) &
	       ((1U << (CQL_NODE_BITS + CQL_LOCAL_BITS)) - 1);
}

/**
 * cql_entry_ts() - acquisition timestamp of an entry
 * @e: entry.
 *
 * Return: the 16-bit timestamp.
 */
static inline u16 cql_entry_ts(u64 e)
{
	return e >> CQL_ENT_TS_SHIFT;
}

/**
 * cql_entry_version() - version of an entry
 * @l: layout.
 * @e: entry.
 *
 * Return: the M-bit version; all ones for %CQL_ENTRY_INIT.
 */
static inline u32 cql_entry_version(const struct cql_layout *l, u64 e)
{
	return ~(u32)(e >> CQL_ENT_VER_SHIFT) & cql_ver_init(l);
}

/**
 * enum cql_entry_state - a fetched entry judged against a position
 * @CQL_ENTRY_VALID: written for this position.
 * @CQL_ENTRY_OBSOLETE: from an earlier lap, or never written: not yet
 *	populated (fetch again) or a shared holder's, which never populates.
 * @CQL_ENTRY_OVERWRITTEN: from a later lap: the position's own entry is
 *	lost (queue overflow); the lock must be reset.
 * @CQL_ENTRY_VER_OVERFLOW: the position's version is the initial value,
 *	so no entry can be judged; the lock must be reset.
 */
enum cql_entry_state {
	CQL_ENTRY_VALID,
	CQL_ENTRY_OBSOLETE,
	CQL_ENTRY_OVERWRITTEN,
	CQL_ENTRY_VER_OVERFLOW,
};

/**
 * cql_entry_classify() - is a fetched entry the one of a position
 * @l: layout.
 * @e: entry read from slot cql_pos_index(@pos).
 * @pos: the position the reader expects there.
 *
 * Section 4.3/4.4: equal versions are valid, an entry version below the
 * expected one is obsolete, above it overwritten. The initial version
 * (all ones) counts as -1, below every lap. Versions are compared as plain
 * numbers: the reset at the all-ones lap (cql_hdr_version_overflow()) keeps
 * qhead from wrapping, so they never wrap.
 *
 * Return: the state.
 */
static inline enum cql_entry_state cql_entry_classify(const struct cql_layout *l,
						      u64 e, u32 pos)
{
	u32 want = cql_pos_version(l, pos), got = cql_entry_version(l, e);

	if (cql_version_overflow(l, want))
		return CQL_ENTRY_VER_OVERFLOW;
	if (got == want)
		return CQL_ENTRY_VALID;
	if (cql_version_overflow(l, got) || got < want)
		return CQL_ENTRY_OBSOLETE;
	return CQL_ENTRY_OVERWRITTEN;
}

/**
 * cql_ts_before() - was timestamp @a taken before @b
 * @a: 16-bit microsecond timestamp.
 * @b: another.
 *
 * Section 5.3: of two timestamps more than half the range (CQL_TS_HALF)
 * apart, the larger is the earlier one (the smaller has wrapped). At
 * exactly 32768 apart the larger is earlier too, so that exactly one of
 * two different timestamps is before the other.
 *
 * Return: true if @a is earlier than @b; false if equal.
 */
static inline bool cql_ts_before(u16 a, u16 b)
{
	u16 diff = a > b ? a - b : b - a;

	if (diff <= CQL_TS_HALF)
		return a < b;
	return a > b;
}

/*
 * Arrival stamps of hierarchical CQL (section 5.3 as built, cql.rst): the
 * home's FAA order in place of synchronised clocks, in half positions so
 * that an arrival between two FAAs sorts strictly between them. An entry
 * enqueued by a client that did not wait on its node carries its own
 * position (2 pos); a client that READ the tail t while it waited on its
 * node arrived after the FAA of position t - 1 and before that of t
 * (2 t - 1), and its entry, if it enqueues later, carries that stamp.
 * Stamps are the entry's 16-bit timestamp field, modulo 2^(c + M + 1)
 * when that is smaller.
 */
static inline u32 cql_stamp_mask(const struct cql_layout *l)
{
	return ((cql_pos_mask(l) << 1) | 1) & 0xffffU;
}

/**
 * cql_stamp_of_pos() - the stamp of a client enqueued at @pos
 * @l: layout.
 * @pos: its position.
 *
 * Return: 2 @pos, as a stamp.
 */
static inline u32 cql_stamp_of_pos(const struct cql_layout *l, u32 pos)
{
	return (pos << 1) & cql_stamp_mask(l);
}

/**
 * cql_stamp_arrival() - the stamp of a client that READ the tail @tail
 * @l: layout.
 * @tail: qhead + qsize of the header it READ (cql_enqueue_pos()).
 *
 * Return: 2 @tail - 1, as a stamp: after position @tail - 1, before @tail.
 */
static inline u32 cql_stamp_arrival(const struct cql_layout *l, u32 tail)
{
	return ((tail << 1) - 1) & cql_stamp_mask(l);
}

/**
 * cql_stamp_before() - is stamp @a strictly before stamp @b
 * @l: layout.
 * @a: a stamp.
 * @b: another.
 *
 * As cql_ts_before() within the stamps' range, except that at exactly
 * half the range apart neither is before the other.
 *
 * Return: true if @a is earlier than @b; false if equal.
 */
static inline bool cql_stamp_before(const struct cql_layout *l, u32 a, u32 b)
{
	u32 m = cql_stamp_mask(l), d = (b - a) & m;

	return d && d <= m >> 1;
}

/**
 * enum cql_release - what a releaser does after its dequeue
 * @CQL_REL_DONE: nothing: the queue is empty, the successor still holds
 *	(a reader after a reader), or a reset is under way.
 * @CQL_REL_NOTIFY: notify the clients at the positions returned.
 * @CQL_REL_REFETCH: an entry it needs is not populated yet; READ the queue
 *	again.
 * @CQL_REL_RESET: overwritten entry or version overflow; reset the lock.
 */
enum cql_release {
	CQL_REL_DONE,
	CQL_REL_NOTIFY,
	CQL_REL_REFETCH,
	CQL_REL_RESET,
};

/**
 * cql_release_next() - whom a release hands the lock to
 * @l: layout.
 * @prev: header the releasing FA (cql_dequeue_delta()) returned.
 * @mode: mode the releaser held the lock in.
 * @queue: the fetched queue, cql_capacity() entries by queue index.
 * @first: set to the first position to notify.
 * @count: set to the number of consecutive positions to notify.
 *
 * Fig. 7 lines 7-19. The successor is the new head, prev.qhead + 1. After
 * a writer every queued client waits, so every entry must be populated:
 * a writer successor is notified alone (case 4), a reader successor with
 * every reader after it up to the next writer (case 5). A reader cannot
 * tell unpopulated entries from shared holders, which never populate, so
 * it first finds all prev.wcnt writers (section 4.3, "shared holders"); it
 * notifies the successor only if that is a writer (case 4), else the
 * successor is a reader that still holds (case 3).
 *
 * A @prev that does not count the releaser (qsize 0, or wcnt 0 for a
 * writer) means the word was reset under it and the FA borrowed from
 * qhead: %CQL_REL_RESET.
 *
 * Return: the action; @first and @count are set for %CQL_REL_NOTIFY only.
 */
static inline enum cql_release cql_release_next(const struct cql_layout *l,
						u64 prev, enum cql_mode mode,
						const u64 *queue, u32 *first,
						u32 *count)
{
	u32 s = cql_pos_add(l, cql_hdr_qhead(l, prev), 1);
	u32 n = cql_hdr_qsize(l, prev) - 1, i, writers = 0;
	u64 post = prev + cql_dequeue_delta(l, mode);
	enum cql_entry_state st;
	u64 e;

	if (cql_hdr_resetting(prev))
		return CQL_REL_DONE;
	/* The word did not count us: reset under us, our FA borrowed. */
	if (!cql_hdr_qsize(l, prev) ||
	    (mode == CQL_EXCLUSIVE && !cql_hdr_wcnt(l, prev)))
		return CQL_REL_RESET;
	if (cql_hdr_version_overflow(l, post))
		return CQL_REL_RESET;
	if (!n)
		return CQL_REL_DONE;
	for (i = 0; i < n; i++) {
		u32 p = cql_pos_add(l, s, i);

		e = queue[cql_pos_index(l, p)];
		st = cql_entry_classify(l, e, p);
		if (st == CQL_ENTRY_OVERWRITTEN || st == CQL_ENTRY_VER_OVERFLOW)
			return CQL_REL_RESET;
		if (mode == CQL_SHARED) {
			writers += st == CQL_ENTRY_VALID &&
				   cql_entry_mode(e) == CQL_EXCLUSIVE;
			continue;
		}
		if (st == CQL_ENTRY_OBSOLETE)
			return CQL_REL_REFETCH;
		if (cql_entry_mode(e) == CQL_EXCLUSIVE)
			break;
	}
	if (mode == CQL_EXCLUSIVE) {
		*first = s;
		*count = i ? i : 1;
		return CQL_REL_NOTIFY;
	}
	if (writers != cql_hdr_wcnt(l, prev))
		return CQL_REL_REFETCH;
	e = queue[cql_pos_index(l, s)];
	if (cql_entry_classify(l, e, s) != CQL_ENTRY_VALID ||
	    cql_entry_mode(e) != CQL_EXCLUSIVE)
		return CQL_REL_DONE;
	*first = s;
	*count = 1;
	return CQL_REL_NOTIFY;
}

#endif /* _RDLOCK_LOCKWORD_CQL_H */
