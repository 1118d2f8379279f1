// SPDX-License-Identifier: GPL-2.0
/*
 * Baseline: a reader-writer spinlock on one word with CMP_AND_SWP, as
 * DecLock's CASLock, plus an update mode so that benchmarks can compare
 * update locks too. The word says which node holds what::
 *
 *	63      62       61    60 .. 56   55 .. 32   31 .. 0
 *	+--------+--------+-----+----------+----------+--------------------+
 *	| writer | update |  0  |  owner   |    0     | reader bit per node|
 *	+--------+--------+-----+----------+----------+--------------------+
 *
 * Shared: CAS the node's reader bit on while the writer bit is clear; the
 * node's other readers then share that bit with no remote operation.
 * Exclusive: CAS 0 -> writer | owner. Update: CAS the update bit and
 * owner on while the writer and update bits are clear; readers keep
 * coming and going beside it. Upgrade: CAS update -> update | writer,
 * which succeeds only once no reader bit is set; the writer bit then
 * keeps new readers out. Release subtracts the node's bits with
 * FETCH_AND_ADD. An acquirer retries a failed CAS after a random
 * exponential back-off (it sleeps: no CPU spins). No queue, so no
 * fairness (an upgrade can starve behind a stream of readers). Multi-slot
 * leases and leases in general do not apply; @k is validated only.
 *
 * Why the word names nodes (DecLock's CASLock counts readers): an
 * operation whose outcome is unknown (a verbs connection failed after it
 * was sent: the home keeps no record) is settled by its own node, at
 * once, without a lease. The node knows which of its bits the word should
 * hold (its holders, struct rdlock_cas_hold), nobody else changes them,
 * so one READ tells what the operation did, and one FAA takes away what
 * nobody holds. A count of readers could not tell whose reader left it.
 */
#include <linux/bits.h>
#include <linux/export.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/rdlock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "proto.h"
#include "xport.h"

#define RDLOCK_CAS_WRITER	BIT_ULL(63)
#define RDLOCK_CAS_UPDATE	BIT_ULL(62)
#define RDLOCK_CAS_OWNER_SHIFT	56
#define RDLOCK_CAS_OWNER	GENMASK_ULL(60, RDLOCK_CAS_OWNER_SHIFT)

static_assert(RDLOCK_MAX_NODES <= 32);

/**
 * struct rdlock_cas_hold - what one node holds of one lock word
 * @hnode: in rdlock_cas_holds.
 * @owner: the node: NULL for this one; a simulated node's xport_priv.
 * @home: the word's home node.
 * @slot: the word's slot.
 * @incarnation: the home's table the word is in.
 * @self: the node's id: its reader bit and owner value.
 * @users: tickets that take or hold the word, posted releases, settles
 *	queued (under rdlock_cas_lock); freed at 0.
 * @mutex: one operation on the word at a time from this node, so that
 *	what the node's bits should be is known whenever one ends.
 * @readers: shared holders (under @mutex).
 * @writer: an exclusive holder (under @mutex).
 * @update: an update holder (under @mutex).
 * @upgraded: the update holder holds the writer bit too (under @mutex).
 * @seen: the word as last seen: the next CAS's guess (under @mutex). A
 *	new record guesses readers (rdlock_cas_first_guess()).
 * @unsure: an operation's outcome is unknown, or a posted release failed:
 *	the word is READ and set right before the next operation. Set by
 *	completions, cleared under @mutex once @posted is 0.
 * @posted: posted releases not completed.
 * @posted_wq: woken when @posted drops.
 */
struct rdlock_cas_hold {
	struct hlist_node hnode;
	const void *owner;
	u32 home;
	u32 slot;
	u64 incarnation;
	u32 self;
	unsigned int users;
	struct mutex mutex;	/* one operation on the word at a time */
	u32 readers;
	bool writer;
	bool update;
	bool upgraded;
	u64 seen;
	bool unsure;
	atomic_t posted;
	wait_queue_head_t posted_wq;
};

static DEFINE_SPINLOCK(rdlock_cas_lock);	/* protects rdlock_cas_holds */
static DEFINE_HASHTABLE(rdlock_cas_holds, 8);
static unsigned int rdlock_cas_nr_holds;

/**
 * rdlock_proto_cas_holds() - words this node (simulated ones included) uses
 *
 * Return: the records of struct rdlock_cas_hold: 0 once no ticket of the
 * CAS spinlock is alive and no posted release is in flight.
 */
unsigned int rdlock_proto_cas_holds(void)
{
	return READ_ONCE(rdlock_cas_nr_holds);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_cas_holds, RDLOCK_INTERNAL);

static struct rdlock_cas_hold *
rdlock_cas_lookup(const void *owner, const struct rdlock_ticket *t)
{
	struct rdlock_cas_hold *h;

	hash_for_each_possible(rdlock_cas_holds, h, hnode,
			       rdlock_proto_word_key(owner, t->node,
						     t->slot))
		if (h->owner == owner && h->home == t->node &&
		    h->slot == t->slot && h->incarnation == t->incarnation)
			return h;
	return NULL;
}

/*
 * What a node that has not seen a word yet guesses it holds: the readers
 * it last saw in a word of the same home (&rdlock_proto_cfg.cas_readers),
 * else the home's reader bit. With placement (RDLOCK_LS_PLACE) a name's
 * lock lives on the node that used it first, which keeps it cached,
 * mostly shared, while others read it (OCFS2: the creator of an inode,
 * down-converted to PR for another node's stat), and a node reading many
 * of them meets the same readers in each. A first CAS guessing 0 would
 * miss, and a second be needed; a wrong guess costs the same second CAS.
 */
static u64 rdlock_cas_first_guess(const struct rdlock_proto_cfg *cfg,
				  u32 home, u32 self)
{
	if (home >= RDLOCK_MAX_NODES)
		return 0;
	if (cfg->cas_readers)
		return READ_ONCE(cfg->cas_readers[home]) & ~BIT_ULL(self);
	return home != self ? BIT_ULL(home) : 0;
}

/* The readers of @word, seen on @h's home, for the next first guess. */
static void rdlock_cas_note_readers(const struct rdlock_proto_cfg *cfg,
				    const struct rdlock_cas_hold *h, u64 word)
{
	/* A writer's word tells nothing of the readers to come. */
	if (cfg->cas_readers && h->home < RDLOCK_MAX_NODES &&
	    !(word & RDLOCK_CAS_WRITER))
		WRITE_ONCE(cfg->cas_readers[h->home],
			   word & GENMASK_ULL(RDLOCK_MAX_NODES - 1, 0) &
			   ~BIT_ULL(h->self));
}

/* The node's record of @t's word, with a user reference; NULL: no memory. */
static struct rdlock_cas_hold *
rdlock_cas_hold_get(const struct rdlock_proto_cfg *cfg,
		    const struct rdlock_ticket *t)
{
	struct rdlock_cas_hold *h, *new;

	spin_lock_bh(&rdlock_cas_lock);
	h = rdlock_cas_lookup(cfg->xport_priv, t);
	if (h)
		h->users++;
	spin_unlock_bh(&rdlock_cas_lock);
	if (h)
		return h;

	new = kzalloc(sizeof(*new), GFP_NOFS);
	if (!new)
		return NULL;
	new->owner = cfg->xport_priv;
	new->home = t->node;
	new->slot = t->slot;
	new->incarnation = t->incarnation;
	new->self = rdlock_proto_self(cfg);
	new->seen = rdlock_cas_first_guess(cfg, new->home, new->self);
	new->users = 1;
	mutex_init(&new->mutex);
	atomic_set(&new->posted, 0);
	init_waitqueue_head(&new->posted_wq);

	spin_lock_bh(&rdlock_cas_lock);
	h = rdlock_cas_lookup(cfg->xport_priv, t);
	if (h) {
		h->users++;
	} else {
		hash_add(rdlock_cas_holds, &new->hnode,
			 rdlock_proto_word_key(new->owner, new->home,
					       new->slot));
		rdlock_cas_nr_holds++;
		h = new;
		new = NULL;
	}
	spin_unlock_bh(&rdlock_cas_lock);
	kfree(new);
	return h;
}

/* The record of a word that @t holds (or whose release is in flight). */
static struct rdlock_cas_hold *
rdlock_cas_hold_find(const struct rdlock_proto_cfg *cfg,
		     const struct rdlock_ticket *t)
{
	struct rdlock_cas_hold *h;

	spin_lock_bh(&rdlock_cas_lock);
	h = rdlock_cas_lookup(cfg->xport_priv, t);
	spin_unlock_bh(&rdlock_cas_lock);
	return h;
}

static void rdlock_cas_hold_put(struct rdlock_cas_hold *h)
{
	spin_lock_bh(&rdlock_cas_lock);
	if (--h->users) {
		spin_unlock_bh(&rdlock_cas_lock);
		return;
	}
	hash_del(&h->hnode);
	rdlock_cas_nr_holds--;
	spin_unlock_bh(&rdlock_cas_lock);
	mutex_destroy(&h->mutex);
	kfree(h);
}

static int rdlock_cas_settle(const struct rdlock_proto_cfg *cfg,
			     struct rdlock_cas_hold *h,
			     struct rdlock_ticket *t, u64 pending, bool *got);

/*
 * Drop @t's reference, settling the word first if it may hold bits of
 * ours that nobody needs: the last user must not leave them there.
 */
static void rdlock_cas_hold_leave(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_cas_hold *h,
				  struct rdlock_ticket *t)
{
	if (READ_ONCE(h->unsure)) {
		mutex_lock(&h->mutex);
		if (READ_ONCE(h->unsure))
			rdlock_cas_settle(cfg, h, t, 0, NULL);
		mutex_unlock(&h->mutex);
	}
	rdlock_cas_hold_put(h);
}

static u64 rdlock_cas_owner(u32 self)
{
	return (u64)self << RDLOCK_CAS_OWNER_SHIFT;
}

/* What a holder in @mode on node @self puts in the word. */
static u64 rdlock_cas_bits(enum rdlock_mode mode, u32 self)
{
	switch (mode) {
	case RDLOCK_MODE_SHARED:
		return BIT_ULL(self);
	case RDLOCK_MODE_UPDATE:
		return RDLOCK_CAS_UPDATE | rdlock_cas_owner(self);
	default:
		return RDLOCK_CAS_WRITER | rdlock_cas_owner(self);
	}
}

/* Bits of a word that keep @mode out (the node's own bits: see the caller). */
static u64 rdlock_cas_conflicts(enum rdlock_mode mode)
{
	switch (mode) {
	case RDLOCK_MODE_SHARED:
		return RDLOCK_CAS_WRITER;
	case RDLOCK_MODE_UPDATE:
		return RDLOCK_CAS_WRITER | RDLOCK_CAS_UPDATE;
	default:
		return ~0ULL;
	}
}

/* The bits of node @self that @word holds. */
static u64 rdlock_cas_mine(u64 word, u32 self)
{
	u64 mine = word & BIT_ULL(self);

	if ((word & (RDLOCK_CAS_WRITER | RDLOCK_CAS_UPDATE)) &&
	    (word & RDLOCK_CAS_OWNER) == rdlock_cas_owner(self))
		mine |= word & (RDLOCK_CAS_WRITER | RDLOCK_CAS_UPDATE |
				RDLOCK_CAS_OWNER);
	return mine;
}

/* The bits the node's holders of @h need in the word. */
static u64 rdlock_cas_want(const struct rdlock_cas_hold *h)
{
	u64 want = h->readers ? BIT_ULL(h->self) : 0;

	if (h->writer)
		want |= rdlock_cas_bits(RDLOCK_MODE_EXCLUSIVE, h->self);
	if (h->update)
		want |= rdlock_cas_bits(RDLOCK_MODE_UPDATE, h->self);
	if (h->upgraded)
		want |= RDLOCK_CAS_WRITER;
	return want;
}

/* A holder in @mode of @h, from now on. */
static void rdlock_cas_hold_add(struct rdlock_cas_hold *h,
				enum rdlock_mode mode)
{
	switch (mode) {
	case RDLOCK_MODE_SHARED:
		h->readers++;
		break;
	case RDLOCK_MODE_UPDATE:
		h->update = true;
		break;
	default:
		h->writer = true;
		break;
	}
}

/*
 * A first guess at the word for a CAS that adds @bits: what was seen,
 * without what would keep @bits out and without @bits themselves.
 */
static u64 rdlock_cas_guess(u64 seen, u64 bits, u64 conflicts)
{
	u64 guess = seen & ~conflicts & ~bits;

	if (!(guess & (RDLOCK_CAS_WRITER | RDLOCK_CAS_UPDATE)))
		guess &= ~RDLOCK_CAS_OWNER;
	return guess;
}

/*
 * Set the word right after an operation whose outcome is unknown: wait
 * until no posted release of the node is in flight, READ the word, and
 * take away the node's bits that none of its holders needs. @pending:
 * the bits an acquisition whose outcome is unknown would have set; if
 * the word has them, the acquisition happened: *@got is set and they
 * stay. READs and the FAA are tried again while the home keeps the table.
 * Caller holds @h->mutex.
 *
 * Return: 0, or -ESTALE once the home no longer keeps the table (the
 * ticket is lost).
 */
static int rdlock_cas_settle(const struct rdlock_proto_cfg *cfg,
			     struct rdlock_cas_hold *h,
			     struct rdlock_ticket *t, u64 pending, bool *got)
{
	unsigned int retry_us = 0;
	u64 word, mine, want, old;
	int ret;

	wait_event(h->posted_wq, !atomic_read(&h->posted));
	for (;;) {
		rdlock_proto_count(cfg, cas_settles);
		/* Not killable: leaving would leave the word as it is. */
		ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &word);
		if (ret) {
			if (!rdlock_proto_retry(cfg, t, ret, &retry_us))
				return -ESTALE;
			continue;
		}
		h->seen = word;
		mine = rdlock_cas_mine(word, h->self);
		want = rdlock_cas_want(h);
		if (pending && (mine & pending) == pending &&
		    (want & pending) != pending) {
			want |= pending;
			*got = true;
		}
		if (want & ~mine)
			pr_err_ratelimited("node %u slot %u: the lock word lost bits %llx of this node\n",
					   h->home, h->slot, want & ~mine);
		if (!(mine & ~want)) {
			WRITE_ONCE(h->unsure, false);
			return 0;
		}
		/* Our bits, set: subtracting them touches nobody else's. */
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_FAA,
					   -(mine & ~want), 0, &old);
		if (!ret) {
			h->seen = old - (mine & ~want);
			WRITE_ONCE(h->unsure, false);
			return 0;
		}
		if (!rdlock_proto_outcome_unknown(ret))
			return -ESTALE;
		/* Did it happen? Look again. */
	}
}

/*
 * One attempt at @bits (taking @t in its mode, or upgrading it), under
 * @h->mutex: CAS from the word as last seen until it succeeds, or the
 * word shows a conflict. @conflicts: bits that keep it out besides the
 * node's own bits that no holder needs (a release of ours in flight).
 *
 * Return: 0 when the word took @bits; -EAGAIN on a conflict (back off);
 * else the error that ends the attempt with nothing taken.
 */
static int rdlock_cas_try(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_cas_hold *h, struct rdlock_ticket *t,
			  u64 bits, u64 conflicts, unsigned long deadline)
{
	bool got = false;
	u64 expect, old;
	int ret;

	if (READ_ONCE(h->unsure)) {
		ret = rdlock_cas_settle(cfg, h, t, 0, NULL);
		if (ret)
			return ret;
	}
	expect = rdlock_cas_guess(h->seen, bits, conflicts);
	for (;;) {
		ret = rdlock_proto_op_take(cfg, t, RDLOCK_XOP_CAS, expect,
					   expect | bits, &old, deadline);
		if (rdlock_proto_outcome_unknown(ret)) {
			WRITE_ONCE(h->unsure, true);
			ret = rdlock_cas_settle(cfg, h, t, bits, &got);
			if (ret || got)
				return ret;
			expect = rdlock_cas_guess(h->seen, bits, conflicts);
			continue;
		}
		if (ret)
			return ret;
		h->seen = old;
		rdlock_cas_note_readers(cfg, h, old);
		if (old == expect) {
			h->seen = expect | bits;
			return 0;
		}
		/* Ours but no holder's: our release not executed yet. */
		if (rdlock_cas_mine(old, h->self) & ~rdlock_cas_want(h)) {
			if (!atomic_read(&h->posted))
				WRITE_ONCE(h->unsure, true);
			return -EAGAIN;
		}
		if (old & conflicts)
			return -EAGAIN;
		expect = old;	/* only other nodes' readers moved */
	}
}

/*
 * Take @bits for @t: rdlock_cas_try() under the mutex, with back-offs
 * between conflicts. @add: what the node's record gains on success.
 */
static int rdlock_cas_take(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_cas_hold *h, struct rdlock_ticket *t,
			   u64 bits, u64 conflicts, void (*add)(struct rdlock_cas_hold *h,
							      enum rdlock_mode mode),
			   bool *waited, unsigned long deadline)
{
	unsigned int backoff = 0;
	int ret;

	for (;;) {
		if (mutex_lock_killable(&h->mutex))
			return -EINTR;
		if (t->mode == RDLOCK_MODE_SHARED && h->readers &&
		    !READ_ONCE(h->unsure)) {
			/* The node's reader bit is in the word: share it. */
			h->readers++;
			mutex_unlock(&h->mutex);
			rdlock_proto_count(cfg, cas_local_shares);
			return 0;
		}
		ret = rdlock_cas_try(cfg, h, t, bits, conflicts, deadline);
		if (!ret)
			add(h, t->mode);
		mutex_unlock(&h->mutex);
		if (ret != -EAGAIN)
			return ret;
		*waited = true;
		ret = rdlock_proto_backoff(cfg, &backoff, deadline);
		if (ret)
			return ret;
	}
}

static int rdlock_cas_acquire(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	struct rdlock_cas_hold *h;
	bool waited = false;
	u32 self;
	int ret;

	ret = rdlock_proto_check(cfg, t);
	if (ret)
		return ret;
	rdlock_proto_count(cfg, acquires);
	/* No queue: the ticket is issued until a CAS takes the lock. */
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ISSUED);
	h = rdlock_cas_hold_get(cfg, t);
	if (!h) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
		return -ENOMEM;
	}
	self = h->self;
	ret = rdlock_cas_take(cfg, h, t, rdlock_cas_bits(t->mode, self),
			      rdlock_cas_conflicts(t->mode),
			      rdlock_cas_hold_add, &waited, deadline);
	if (waited)
		rdlock_proto_count(cfg, waits);
	if (ret) {
		/* Nothing taken: the word holds nothing of this ticket. */
		rdlock_ticket_to(cfg, t, ret == -ESTALE ? RDLOCK_TICKET_LOST :
						       RDLOCK_TICKET_DONE);
		rdlock_cas_hold_leave(cfg, h, t);
		return ret;
	}
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	t->prev = rdlock_cas_bits(t->mode, self);
	t->granted_at = rdlock_proto_now(cfg);
	return 0;
}

static void rdlock_cas_upgraded(struct rdlock_cas_hold *h,
				enum rdlock_mode mode)
{
	h->upgraded = true;
}

static int rdlock_cas_upgrade(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	struct rdlock_cas_hold *h;
	bool waited = false;
	int ret;

	if (!cfg->update_word || t->mode != RDLOCK_MODE_UPDATE || t->upgraded)
		return -EINVAL;
	if (t->prev & RDLOCK_CAS_WRITER)
		goto upgraded;	/* upgraded before: the bit is still ours */
	h = rdlock_cas_hold_find(cfg, t);
	if (WARN_ON_ONCE(!h))
		return -EINVAL;
	/* Any reader conflicts: the writer bit may go on only at none. */
	ret = rdlock_cas_take(cfg, h, t, RDLOCK_CAS_WRITER,
			      ~(RDLOCK_CAS_UPDATE | RDLOCK_CAS_OWNER),
			      rdlock_cas_upgraded, &waited, deadline);
	if (waited)
		rdlock_proto_count(cfg, upgrade_waits);
	if (ret)
		return ret;	/* still the update holder */
	t->prev |= RDLOCK_CAS_WRITER;
upgraded:
	t->upgraded = true;
	t->granted_at = rdlock_proto_now(cfg);
	rdlock_proto_count(cfg, upgrades);
	return 0;
}

/* A posted release's outcome: in softirq, never sleeps. */
static void rdlock_cas_post_completed(void *arg, int ret)
{
	struct rdlock_cas_hold *h = arg;

	if (ret)
		WRITE_ONCE(h->unsure, true);
	/* Whoever sees the count drop to 0 must see @unsure set. */
	smp_mb__before_atomic();
	atomic_dec(&h->posted);
	wake_up_all(&h->posted_wq);
	if (!ret)
		rdlock_cas_hold_put(h);
}

/* A posted release failed: settle the word; the copy @t then ends. */
static void rdlock_cas_post_failed(const struct rdlock_proto_cfg *cfg,
				   struct rdlock_ticket *t, void *arg)
{
	struct rdlock_cas_hold *h = arg;
	int ret = 0;

	mutex_lock(&h->mutex);
	if (READ_ONCE(h->unsure))
		ret = rdlock_cas_settle(cfg, h, t, 0, NULL);
	mutex_unlock(&h->mutex);
	rdlock_ticket_to(cfg, t, ret ? RDLOCK_TICKET_LOST : RDLOCK_TICKET_DONE);
	rdlock_cas_hold_put(h);
}

static const struct rdlock_post_owner rdlock_cas_post_owner = {
	.completed	= rdlock_cas_post_completed,
	.failed		= rdlock_cas_post_failed,
};

static void rdlock_cas_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t)
{
	struct rdlock_cas_hold *h = rdlock_cas_hold_find(cfg, t);
	u64 bits = t->prev;
	u64 old;
	int ret;

	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_RELEASING);
	if (WARN_ON_ONCE(!h)) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_LOST);
		return;
	}
	mutex_lock(&h->mutex);
	switch (t->mode) {
	case RDLOCK_MODE_SHARED:
		/* The node's other readers keep the bit. */
		if (--h->readers)
			bits = 0;
		break;
	case RDLOCK_MODE_UPDATE:
		h->update = false;
		h->upgraded = false;
		break;
	default:
		h->writer = false;
		break;
	}
	if (!bits) {
		ret = 0;
		goto out;
	}
	if (READ_ONCE(h->unsure)) {
		/* Takes away whatever no holder needs, these bits included. */
		ret = rdlock_cas_settle(cfg, h, t, 0, NULL);
		goto out;
	}
	h->seen &= ~bits;
	/*
	 * FAA, not WRITE: NIC writes are not atomic with NIC atomics. One
	 * operation with nothing after it: it may be posted; the posted
	 * operation keeps a reference of its own.
	 */
	spin_lock_bh(&rdlock_cas_lock);
	h->users++;
	spin_unlock_bh(&rdlock_cas_lock);
	atomic_inc(&h->posted);
	if (rdlock_proto_post_release_owned(cfg, t, -bits,
					    &rdlock_cas_post_owner, h)) {
		mutex_unlock(&h->mutex);
		rdlock_cas_hold_put(h);
		return;
	}
	atomic_dec(&h->posted);
	rdlock_cas_hold_put(h);	/* h stays: the ticket's reference */
	ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_FAA, -bits, 0, &old);
	if (rdlock_proto_outcome_unknown(ret)) {
		WRITE_ONCE(h->unsure, true);
		ret = rdlock_cas_settle(cfg, h, t, 0, NULL);
	}
out:
	mutex_unlock(&h->mutex);
	rdlock_ticket_to(cfg, t, ret ? RDLOCK_TICKET_LOST : RDLOCK_TICKET_DONE);
	rdlock_cas_hold_put(h);
}

/*
 * A node declared down holds nothing any more: take its bits out of the
 * word. Only the word's home does it, once the node is cut off its table
 * (no operation of the node's can still come), so the node's bits stay
 * as READ; the others' may change, hence CAS.
 */
static int rdlock_cas_forget_node(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t, u32 dead,
				  int (*before_excl)(void *arg), void *arg)
{
	u64 word, bits, old;
	bool told = false;
	int ret;

	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &word);
	while (!ret) {
		bits = rdlock_cas_mine(word, dead);
		if (!bits)
			return 0;
		if (!told && bits & (RDLOCK_CAS_WRITER | RDLOCK_CAS_UPDATE)) {
			ret = before_excl ? before_excl(arg) : 0;
			if (ret)
				return ret;
			told = true;
		}
		ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, word,
				      word & ~bits, &old);
		if (!ret && old == word)
			return 1;
		word = old;
	}
	return ret;
}

/* No holder's bit in the word: 0 (a waiter takes nothing before it holds). */
static bool rdlock_cas_word_idle(const struct rdlock_proto_cfg *cfg, u64 w)
{
	return !w;
}

const struct rdlock_proto_ops rdlock_proto_caslock = {
	.name		= "caslock",
	.acquire	= rdlock_cas_acquire,
	.release	= rdlock_cas_release,
	.upgrade	= rdlock_cas_upgrade,
	.forget_node	= rdlock_cas_forget_node,
	.word_idle	= rdlock_cas_word_idle,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_caslock, RDLOCK_INTERNAL);
