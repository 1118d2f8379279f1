// SPDX-License-Identifier: GPL-2.0
/*
 * The DSLR bakery (ticket) reader-writer lock: Algorithms 1-3 and sections
 * 5.1-5.2 of the DSLR paper (bakery.rst cites it) on the encoding of
 * lockword/bakery.h.
 *
 * Acquire takes a ticket with one FETCH_AND_ADD and is granted at once when
 * the returned word allows. Otherwise it polls the word with RDMA READs,
 * sleeping a quarter of the time since a ticket ahead last finished
 * between them (never spinning a CPU). An
 * over-limit ticket is withdrawn by CAS; the acquirer polls the word with
 * READs after random exponential back-offs until the holder that crossed
 * COUNT_MAX resets it, and then takes a ticket again. With leases, a waiter
 * that sees no progress for twice the lease times the tickets still ahead
 * of it resets the stalled holders by CAS and fails with -EAGAIN, and a
 * holder releases by a CAS that applies only while the word still shows
 * its ticket, so a revoked holder's late release changes nothing. On an
 * update word (section 5.2) an update ticket is granted beside readers and
 * upgrades, once every earlier reader is done, by polling the same way.
 * See Documentation/rdlock/bakery.rst for where and why this deviates from
 * the paper's pseudocode.
 */
#include <linux/ktime.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/export.h>
#include <linux/rdlock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "lockword/bakery.h"
#include "proto.h"
#include "xport.h"

/*
 * The longest sleep between polls: a waiter behind a long hold stops
 * polling hard (bakery.rst, protocol deviation 6).
 */
#define RDLOCK_BAKERY_IDLE_MAX_NS	(10 * NSEC_PER_MSEC)

/* The shortest sleep between polls, unless the lockspace sets omega. */
#define RDLOCK_BAKERY_POLL_MIN_NS	(50 * NSEC_PER_USEC)

/* The encoding's mode of @t: layout, class and, once upgraded, the rule. */
static enum bakery_mode rdlock_bakery_mode(const struct rdlock_proto_cfg *cfg,
					   const struct rdlock_ticket *t)
{
	if (!cfg->update_word)
		return t->mode == RDLOCK_MODE_SHARED ? BAKERY_SHARED :
						       BAKERY_EXCLUSIVE;
	switch (t->mode) {
	case RDLOCK_MODE_SHARED:
		return BAKERY_UPD_SHARED;
	case RDLOCK_MODE_UPDATE:
		return t->upgraded ? BAKERY_UPD_UPGRADE : BAKERY_UPD_UPDATE;
	default:
		return BAKERY_UPD_EXCLUSIVE;
	}
}

/*
 * The census (design.rst, "The bakery's census"). The word counts
 * tickets, it does not name them, so an acquiring FA or a release whose
 * outcome a failed connection hid may leave a slot in the word that no
 * node will ever end (a phantom): without a lease it wedges the lock.
 * Every node keeps a record of its tickets in each word (struct
 * rdlock_bakery_word); the node with an unknown outcome asks every node
 * what its tickets in the word are, and counts as done what the answers
 * prove nobody holds, where that cannot grant anybody early.
 */

/* A census waits this long for every node's answer. */
#define RDLOCK_BAKERY_CENSUS_WAIT_MS	1000
/* A settler's pause between censuses: doubling up to the maximum. */
#define RDLOCK_BAKERY_SETTLE_MIN_US	500U
#define RDLOCK_BAKERY_SETTLE_MAX_US	(200U * USEC_PER_MSEC)
/* An acquisition takes a new ticket after this many unknown outcomes. */
#define RDLOCK_BAKERY_RETAKES		8
/* A finishing CAS tried again against this many arrivals. */
#define RDLOCK_BAKERY_CENSUS_CAS_TRIES	16

/* The strict classes (bakery_strict_mask()) a census looks at the head of. */
static const enum bakery_class rdlock_bakery_serial[] = {
	BAKERY_CLS_X, BAKERY_CLS_U,
};

#define RDLOCK_BAKERY_SERIAL	ARRAY_SIZE(rdlock_bakery_serial)

/**
 * enum rdlock_bakery_phase - where a ticket's entry is
 * @RDLOCK_BAKERY_OUT: nothing of it in the word (withdrawn, waiting for
 *	an overflow reset).
 * @RDLOCK_BAKERY_SENDING: an operation that changes the word is under
 *	way: what the word holds of it is not known yet (a census waits).
 * @RDLOCK_BAKERY_IN: in the word, as @prev says.
 * @RDLOCK_BAKERY_UNSURE: its operation's outcome is unknown: left to the
 *	census, its ticket ended.
 * @RDLOCK_BAKERY_NR_PHASES: number of phases.
 */
enum rdlock_bakery_phase {
	RDLOCK_BAKERY_OUT,
	RDLOCK_BAKERY_SENDING,
	RDLOCK_BAKERY_IN,
	RDLOCK_BAKERY_UNSURE,
	RDLOCK_BAKERY_NR_PHASES,
};

/**
 * struct rdlock_bakery_word - one node's tickets in one word
 * @hnode: in rdlock_bakery_words.
 * @owner: the node: NULL for this one; a simulated node's xport_priv.
 * @home: the word's home node.
 * @slot: the word's slot.
 * @incarnation: the home's table.
 * @users: its entries, and a running settler; freed at 0.
 * @entries: struct rdlock_bakery_entry.
 * @settling: a settler runs (rdlock_bakery_settle()).
 *
 * All of it under rdlock_bakery_lock, which census answers take in
 * softirq.
 */
struct rdlock_bakery_word {
	struct hlist_node hnode;
	const void *owner;
	u32 home;
	u32 slot;
	u64 incarnation;
	unsigned int users;
	struct list_head entries;
	bool settling;
};

/**
 * struct rdlock_bakery_entry - one ticket of a node in a word
 * @list: in &rdlock_bakery_word.entries.
 * @word: the record it is in.
 * @prev: the word its acquiring FA returned.
 * @bm: its mode (an upgraded update ticket counts as an update ticket).
 * @k: its slots.
 * @phase: enum rdlock_bakery_phase.
 * @armed: unsure, and a census READ came after: a phantom of it is
 *	below that READ's ticket counters.
 * @post_ret: the outcome of its posted release.
 */
struct rdlock_bakery_entry {
	struct list_head list;
	struct rdlock_bakery_word *word;
	u64 prev;
	enum bakery_mode bm;
	u32 k;
	enum rdlock_bakery_phase phase;
	bool armed;
	int post_ret;
};

/**
 * struct rdlock_bakery_count - what a node's tickets are in a word
 * @busy: an operation of one of them is under way.
 * @live: slots of tickets in the word and taken before it was READ.
 * @s_granted: of them, shared slots the word grants.
 * @lim: by strict class, the lowest ticket counter of that class any of
 *	them was taken at, among those that class's later tickets wait for:
 *	no phantom from there on may be counted done yet.
 * @head: by strict class, one of them is that class's oldest ticket.
 * @first: ... and older than every other strict class's oldest.
 * @head_s: ... and was taken after this many shared slots.
 */
struct rdlock_bakery_count {
	bool busy;
	u32 live;
	u32 s_granted;
	u32 lim[RDLOCK_BAKERY_SERIAL];
	bool head[RDLOCK_BAKERY_SERIAL];
	bool first[RDLOCK_BAKERY_SERIAL];
	u32 head_s[RDLOCK_BAKERY_SERIAL];
};

/* What a census message is (&struct rdlock_bakery_msg.kind). */
enum rdlock_bakery_msg_kind {
	RDLOCK_BAKERY_ASK,
	RDLOCK_BAKERY_ANSWER,
};

#define RDLOCK_BAKERY_MSG_BUSY		BIT(0)	/* answer: @busy */
#define RDLOCK_BAKERY_MSG_HEAD(i)	BIT(1 + (i))
#define RDLOCK_BAKERY_MSG_FIRST(i)	BIT(3 + (i))

/*
 * A census question (which word, READ as @word) or its answer (struct
 * rdlock_bakery_count), matched to the question by @seq.
 */
struct rdlock_bakery_msg {
	u8 kind;
	u8 flags;
	__le16 pad;
	__le32 seq;
	union {
		struct {
			__le32 home;
			__le32 slot;
			__le64 incarnation;
			__le64 word;
		} ask;
		struct {
			__le32 live;
			__le32 s_granted;
			__le32 lim[RDLOCK_BAKERY_SERIAL];
			__le32 head_s[RDLOCK_BAKERY_SERIAL];
		} answer;
	};
};

static_assert(sizeof(struct rdlock_bakery_msg) <= RDLOCK_XMSG_PAYLOAD);

/**
 * struct rdlock_bakery_census - a census this node runs
 * @list: in rdlock_bakery_censuses.
 * @owner: the asking node (as &rdlock_bakery_word.owner).
 * @seq: matches the answers.
 * @pending: nodes still to answer, by bit.
 * @count: the answers so far, merged.
 * @wq: woken when the last answer came.
 */
struct rdlock_bakery_census {
	struct list_head list;
	const void *owner;
	u32 seq;
	u32 pending;
	struct rdlock_bakery_count count;
	wait_queue_head_t wq;
};

static DEFINE_SPINLOCK(rdlock_bakery_lock);	/* protects what follows */
static DEFINE_HASHTABLE(rdlock_bakery_words, 8);
static unsigned int rdlock_bakery_nr_words;
static LIST_HEAD(rdlock_bakery_censuses);
static atomic_t rdlock_bakery_census_seq;
static bool rdlock_bakery_ready;

/**
 * rdlock_proto_bakery_words() - words this node (simulated ones included)
 *	keeps a record of
 *
 * Return: 0 once no lease-less bakery ticket is alive and no census is
 * owed.
 */
unsigned int rdlock_proto_bakery_words(void)
{
	return READ_ONCE(rdlock_bakery_nr_words);
}
EXPORT_SYMBOL_NS_GPL(rdlock_proto_bakery_words, RDLOCK_INTERNAL);

/**
 * rdlock_bakery_words_show() - this node's records, for debugfs
 * @m: the file: one line per word (home, slot, table, a settler running,
 *	its entries by phase: out, sending, in, unsure).
 */
void rdlock_bakery_words_show(struct seq_file *m)
{
	struct rdlock_bakery_entry *e;
	struct rdlock_bakery_word *w;
	unsigned int bkt, n[RDLOCK_BAKERY_NR_PHASES];

	spin_lock_bh(&rdlock_bakery_lock);
	hash_for_each(rdlock_bakery_words, bkt, w, hnode) {
		memset(n, 0, sizeof(n));
		list_for_each_entry(e, &w->entries, list)
			n[e->phase]++;
		seq_printf(m, "home %u slot %u table %#llx settling %d out %u sending %u in %u unsure %u\n",
			   w->home, w->slot, w->incarnation, w->settling, n[0],
			   n[1], n[2], n[3]);
	}
	spin_unlock_bh(&rdlock_bakery_lock);
}

/* Under rdlock_bakery_lock. */
static struct rdlock_bakery_word *
rdlock_bakery_lookup(const void *owner, u32 home, u32 slot, u64 incarnation)
{
	struct rdlock_bakery_word *w;

	hash_for_each_possible(rdlock_bakery_words, w, hnode,
			       rdlock_proto_word_key(owner, home, slot))
		if (w->owner == owner && w->home == home && w->slot == slot &&
		    w->incarnation == incarnation)
			return w;
	return NULL;
}

/* Under rdlock_bakery_lock. */
static void rdlock_bakery_word_put(struct rdlock_bakery_word *w)
{
	if (--w->users)
		return;
	hash_del(&w->hnode);
	rdlock_bakery_nr_words--;
	kfree(w);
}

/*
 * A lease-less ticket's entry, before its acquiring FA: with a lease a
 * stall reset ends whatever an unknown outcome left. -ENOMEM: nothing
 * taken.
 */
static int rdlock_bakery_enter(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, enum bakery_mode bm)
{
	struct rdlock_bakery_word *w, *new = NULL;
	struct rdlock_bakery_entry *e;

	t->census = NULL;
	/* No census without messages: a test's transport may have none. */
	if (cfg->lease_ms || (cfg->xport && !cfg->xport->send_msg))
		return 0;
	e = kzalloc(sizeof(*e), GFP_NOFS);
	if (!e)
		return -ENOMEM;
	e->bm = bm == BAKERY_UPD_UPGRADE ? BAKERY_UPD_UPDATE : bm;
	e->k = t->k ?: 1;
	e->phase = RDLOCK_BAKERY_SENDING;
	for (;;) {
		spin_lock_bh(&rdlock_bakery_lock);
		w = rdlock_bakery_lookup(cfg->xport_priv, t->node, t->slot,
					 t->incarnation);
		if (!w && new) {
			w = new;
			new = NULL;
			hash_add(rdlock_bakery_words, &w->hnode,
				 rdlock_proto_word_key(w->owner, w->home,
						       w->slot));
			rdlock_bakery_nr_words++;
		}
		if (w) {
			w->users++;
			e->word = w;
			list_add_tail(&e->list, &w->entries);
			spin_unlock_bh(&rdlock_bakery_lock);
			kfree(new);
			t->census = e;
			return 0;
		}
		spin_unlock_bh(&rdlock_bakery_lock);
		new = kzalloc(sizeof(*new), GFP_NOFS);
		if (!new) {
			kfree(e);
			return -ENOMEM;
		}
		new->owner = cfg->xport_priv;
		new->home = t->node;
		new->slot = t->slot;
		new->incarnation = t->incarnation;
		INIT_LIST_HEAD(&new->entries);
	}
}

/* The ticket's entry moves to @phase; @prev: its FA's word, for IN. */
static void rdlock_bakery_phase(struct rdlock_ticket *t,
				enum rdlock_bakery_phase phase, u64 prev)
{
	struct rdlock_bakery_entry *e = t->census;

	if (!e)
		return;
	spin_lock_bh(&rdlock_bakery_lock);
	e->phase = phase;
	e->prev = prev;
	spin_unlock_bh(&rdlock_bakery_lock);
}

static void rdlock_bakery_entry_free(struct rdlock_bakery_entry *e)
{
	spin_lock_bh(&rdlock_bakery_lock);
	list_del(&e->list);
	rdlock_bakery_word_put(e->word);
	spin_unlock_bh(&rdlock_bakery_lock);
	kfree(e);
}

/* Nothing of the ticket is in the word any more, or ever will be. */
static void rdlock_bakery_leave(struct rdlock_ticket *t)
{
	if (!t->census)
		return;
	rdlock_bakery_entry_free(t->census);
	t->census = NULL;
}

static u64 rdlock_bakery_settle(struct rdlock_finish *f,
				const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t, void *state);

/*
 * @t's entry is left to the census as unsure: phantoms may be in the word
 * that no node will end. A settler of the word runs censuses until none
 * is left (@t's copy starts it, if none runs).
 */
static void rdlock_bakery_settle_start(const struct rdlock_proto_cfg *cfg,
				       struct rdlock_ticket *t)
{
	struct rdlock_bakery_entry *e = t->census;
	bool start;

	t->census = NULL;
	spin_lock_bh(&rdlock_bakery_lock);
	e->phase = RDLOCK_BAKERY_UNSURE;
	e->armed = false;
	start = !e->word->settling;
	if (start) {
		e->word->settling = true;
		e->word->users++;
	}
	spin_unlock_bh(&rdlock_bakery_lock);
	if (start)
		rdlock_proto_reset_later(cfg, t, rdlock_bakery_settle);
}

/* An operation of @t failed with its outcome unknown: to the census. */
static void rdlock_bakery_hand_over(const struct rdlock_proto_cfg *cfg,
				    struct rdlock_ticket *t)
{
	pr_info_ratelimited("node %u slot %u: a bakery operation failed after it was sent: its node's census settles the word\n",
			    t->node, t->slot);
	rdlock_proto_count(cfg, bakery_unknowns);
	rdlock_bakery_settle_start(cfg, t);
}

/* ... and @t ends: nothing else of it is in the word. */
static void rdlock_bakery_unsure(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t)
{
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	rdlock_bakery_hand_over(cfg, t);
}

/*
 * An acquisition's FA or withdraw whose outcome is unknown: hand its
 * entry to the census and give @t a new one, for a new ticket; the census
 * counts done whatever phantom the old one left. The new entry is busy
 * before the old is handed over, so no census judges the word between
 * the two. -ENOMEM: @t ended.
 */
static int rdlock_bakery_retake(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t, enum bakery_mode bm)
{
	struct rdlock_ticket old = *t;
	int ret = rdlock_bakery_enter(cfg, t, bm);

	/* The settler's copy, ended: not a ticket of its own. */
	old.state = RDLOCK_TICKET_DONE;
	rdlock_bakery_hand_over(cfg, &old);
	if (ret)
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	else
		rdlock_proto_count(cfg, retries);
	return ret;
}

/*
 * An operation of @t that changes the word ended with @ret, @t's last:
 * done, left to the census, or as rdlock_ticket_failed() says.
 */
static void rdlock_bakery_ended(const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t, int ret)
{
	if (ret && t->census && rdlock_proto_outcome_unknown(ret)) {
		rdlock_bakery_unsure(cfg, t);
		return;
	}
	if (ret)
		rdlock_ticket_failed(cfg, t, ret);
	else
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_DONE);
	rdlock_bakery_leave(t);
}

/* Add what @e says of its ticket in @v, the word a census READ, to @c. */
static void rdlock_bakery_count_entry(const struct rdlock_bakery_entry *e,
				      u64 v, struct rdlock_bakery_count *c)
{
	enum bakery_class own = bakery_mode_class(e->bm);
	unsigned int strict = bakery_strict_mask(e->bm);
	struct bakery_fields p, f;
	unsigned int i, j;

	if (e->phase == RDLOCK_BAKERY_SENDING)
		c->busy = true;
	if (e->phase != RDLOCK_BAKERY_IN)
		return;
	bakery_unpack(e->prev, e->bm, &p);
	bakery_unpack(v, e->bm, &f);
	/* Taken after the READ: behind every slot the census judges. */
	if (p.max[own] >= f.max[own])
		return;
	c->live += e->k;
	if (own == BAKERY_CLS_S && bakery_wait_rule(e->prev, v, e->bm))
		c->s_granted += e->k;
	for (i = 0; i < RDLOCK_BAKERY_SERIAL; i++) {
		enum bakery_class cls = rdlock_bakery_serial[i];

		if (!bakery_cls_bits(e->bm, cls) || !(strict & BIT(cls)))
			continue;
		c->lim[i] = min(c->lim[i], p.max[cls]);
		if (own != cls || p.max[cls] != f.n[cls])
			continue;
		c->head[i] = true;
		c->head_s[i] = p.max[BAKERY_CLS_S];
		c->first[i] = true;
		for (j = 0; j < RDLOCK_BAKERY_SERIAL; j++) {
			enum bakery_class o = rdlock_bakery_serial[j];

			if (j != i && bakery_cls_bits(e->bm, o) &&
			    p.max[o] > f.n[o])
				c->first[i] = false;
		}
	}
}

static void rdlock_bakery_count_init(struct rdlock_bakery_count *c)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < RDLOCK_BAKERY_SERIAL; i++)
		c->lim[i] = U32_MAX;
}

/* This node's answer about (@home, @slot, @incarnation), READ as @v. */
static void rdlock_bakery_count_node(const void *owner, u32 home, u32 slot,
				     u64 incarnation, u64 v,
				     struct rdlock_bakery_count *c)
{
	struct rdlock_bakery_entry *e;
	struct rdlock_bakery_word *w;

	rdlock_bakery_count_init(c);
	spin_lock_bh(&rdlock_bakery_lock);
	w = rdlock_bakery_lookup(owner, home, slot, incarnation);
	if (w)
		list_for_each_entry(e, &w->entries, list)
			rdlock_bakery_count_entry(e, v, c);
	spin_unlock_bh(&rdlock_bakery_lock);
}

/* Merge a node's answer @a into @c. */
static void rdlock_bakery_count_add(struct rdlock_bakery_count *c,
				    const struct rdlock_bakery_count *a)
{
	unsigned int i;

	c->busy |= a->busy;
	c->live += a->live;
	c->s_granted += a->s_granted;
	for (i = 0; i < RDLOCK_BAKERY_SERIAL; i++) {
		c->lim[i] = min(c->lim[i], a->lim[i]);
		if (!a->head[i])
			continue;
		c->head[i] = true;
		c->first[i] = a->first[i];
		c->head_s[i] = a->head_s[i];
	}
}

static void rdlock_bakery_on_ask(const struct rdlock_proto_xport *xport,
				 void *priv, u32 src,
				 const struct rdlock_bakery_msg *m)
{
	struct rdlock_bakery_msg a = {
		.kind = RDLOCK_BAKERY_ANSWER,
		.seq = m->seq,
	};
	struct rdlock_bakery_count c;
	unsigned int i;

	rdlock_bakery_count_node(priv, le32_to_cpu(m->ask.home),
				 le32_to_cpu(m->ask.slot),
				 le64_to_cpu(m->ask.incarnation),
				 le64_to_cpu(m->ask.word), &c);
	a.flags = c.busy ? RDLOCK_BAKERY_MSG_BUSY : 0;
	a.answer.live = cpu_to_le32(c.live);
	a.answer.s_granted = cpu_to_le32(c.s_granted);
	for (i = 0; i < RDLOCK_BAKERY_SERIAL; i++) {
		a.answer.lim[i] = cpu_to_le32(c.lim[i]);
		a.answer.head_s[i] = cpu_to_le32(c.head_s[i]);
		if (c.head[i])
			a.flags |= RDLOCK_BAKERY_MSG_HEAD(i);
		if (c.first[i])
			a.flags |= RDLOCK_BAKERY_MSG_FIRST(i);
	}
	/* Lost: the census asks again. */
	rdlock_proto_send_msg(xport, priv, src, RDLOCK_MSG_BAKERY, &a,
			      sizeof(a));
}

static void rdlock_bakery_on_answer(void *priv, u32 src,
				    const struct rdlock_bakery_msg *m)
{
	struct rdlock_bakery_census *cs;
	struct rdlock_bakery_count c;
	unsigned int i;

	if (src >= RDLOCK_MAX_NODES)
		return;
	rdlock_bakery_count_init(&c);
	c.busy = m->flags & RDLOCK_BAKERY_MSG_BUSY;
	c.live = le32_to_cpu(m->answer.live);
	c.s_granted = le32_to_cpu(m->answer.s_granted);
	for (i = 0; i < RDLOCK_BAKERY_SERIAL; i++) {
		c.lim[i] = le32_to_cpu(m->answer.lim[i]);
		c.head_s[i] = le32_to_cpu(m->answer.head_s[i]);
		c.head[i] = m->flags & RDLOCK_BAKERY_MSG_HEAD(i);
		c.first[i] = m->flags & RDLOCK_BAKERY_MSG_FIRST(i);
	}
	spin_lock_bh(&rdlock_bakery_lock);
	list_for_each_entry(cs, &rdlock_bakery_censuses, list) {
		if (cs->owner != priv || cs->seq != le32_to_cpu(m->seq) ||
		    !(cs->pending & BIT(src)))
			continue;
		rdlock_bakery_count_add(&cs->count, &c);
		cs->pending &= ~BIT(src);
		if (!cs->pending)
			wake_up(&cs->wq);
		break;
	}
	spin_unlock_bh(&rdlock_bakery_lock);
}

/**
 * rdlock_bakery_deliver() - a census message arrived
 * @xport: the simulated transport of the receiving node, NULL: the real.
 * @priv: its xport_priv (NULL: the real node).
 * @src: the sending node.
 * @payload: the message.
 * @len: its length.
 *
 * Context: softirq, or BHs disabled; does not sleep. A question is
 * answered with what this node's tickets are in the word; an answer is
 * merged into the census it belongs to, if that still waits for it.
 */
void rdlock_bakery_deliver(const struct rdlock_proto_xport *xport, void *priv,
			   u32 src, const void *payload, size_t len)
{
	const struct rdlock_bakery_msg *m = payload;

	if (len < sizeof(*m))
		return;
	if (m->kind == RDLOCK_BAKERY_ASK)
		rdlock_bakery_on_ask(xport, priv, src, m);
	else if (m->kind == RDLOCK_BAKERY_ANSWER)
		rdlock_bakery_on_answer(priv, src, m);
}
EXPORT_SYMBOL_NS_GPL(rdlock_bakery_deliver, RDLOCK_INTERNAL);

static void rdlock_bakery_msg_handler(u32 src, const void *payload, size_t len)
{
	rdlock_bakery_deliver(NULL, NULL, src, payload, len);
}

/*
 * Ask every node what its tickets are in @t's word, READ as @v, into @c.
 * A node this node declared down and released (rdlock_proto_node_gone():
 * past the survivors' barrier, so every survivor has cut it off) is not
 * asked: its tickets are phantoms that no node will end
 * (rdlock_bakery_forget_node()). A node only unreachable, or one that
 * declared this node down, is asked, and the census waits for it.
 * Return: true once every node asked answered and none was busy with the
 * word.
 */
static bool rdlock_bakery_census(const struct rdlock_proto_cfg *cfg,
				 const struct rdlock_ticket *t, u64 v,
				 struct rdlock_bakery_count *c)
{
	struct rdlock_bakery_census cs = {
		.owner = cfg->xport_priv,
		.seq = atomic_inc_return(&rdlock_bakery_census_seq),
	};
	struct rdlock_bakery_msg m = {
		.kind = RDLOCK_BAKERY_ASK,
		.seq = cpu_to_le32(cs.seq),
		.ask.home = cpu_to_le32(t->node),
		.ask.slot = cpu_to_le32(t->slot),
		.ask.incarnation = cpu_to_le64(t->incarnation),
		.ask.word = cpu_to_le64(v),
	};
	u32 self = rdlock_proto_self(cfg), i;
	bool sent = true;

	init_waitqueue_head(&cs.wq);
	rdlock_bakery_count_init(&cs.count);
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (i != self && rdlock_proto_participant(cfg, i) &&
		    !rdlock_proto_node_gone(cfg, i))
			cs.pending |= BIT(i);
	spin_lock_bh(&rdlock_bakery_lock);
	list_add(&cs.list, &rdlock_bakery_censuses);
	spin_unlock_bh(&rdlock_bakery_lock);
	for (i = 0; i < RDLOCK_MAX_NODES && sent; i++)
		if (cs.pending & BIT(i))
			sent = !rdlock_proto_send_msg(cfg->xport,
						      cfg->xport_priv, i,
						      RDLOCK_MSG_BAKERY, &m,
						      sizeof(m));
	if (sent)
		wait_event_timeout(cs.wq, !READ_ONCE(cs.pending),
				   msecs_to_jiffies(RDLOCK_BAKERY_CENSUS_WAIT_MS));
	spin_lock_bh(&rdlock_bakery_lock);
	list_del(&cs.list);
	spin_unlock_bh(&rdlock_bakery_lock);
	if (cs.pending)
		return false;
	rdlock_bakery_count_node(cfg->xport_priv, t->node, t->slot,
				 t->incarnation, v, c);
	rdlock_bakery_count_add(c, &cs.count);
	return !c->busy;
}

/**
 * enum rdlock_bakery_verdict - what a census found
 * @RDLOCK_BAKERY_CLEAN: every slot of the word is a live ticket's.
 * @RDLOCK_BAKERY_WAIT: phantoms, none that may be counted done now.
 * @RDLOCK_BAKERY_FINISH: count phantoms done: the word becomes @to.
 * @RDLOCK_BAKERY_RESET: no live ticket, phantoms: reset the word to zero.
 */
enum rdlock_bakery_verdict {
	RDLOCK_BAKERY_CLEAN,
	RDLOCK_BAKERY_WAIT,
	RDLOCK_BAKERY_FINISH,
	RDLOCK_BAKERY_RESET,
};

/*
 * Judge the word @v with the census @c (layout @lm). A word over the
 * limit waits for its overflow reset, which the ticket that crossed
 * COUNT_MAX owes on release: if that ticket, or its release, was an
 * unknown outcome, nobody owes it any more, so the census resets such a
 * word once every ticket of it is done (the responsible holder's reset,
 * if it comes too, is a CAS from that same word: one of them is done),
 * and until then waits. Phantoms of a strict
 * class (exclusive, update) are counted done from that class's counter on,
 * up to the first slot a live ticket holds, and to the first that a live
 * ticket which must see that class's counter stop before it was taken
 * ahead of (@c->lim): its holder could else take itself for revoked
 * (bakery_skipped()). Shared phantoms count only once they are granted:
 * those below the oldest strict ticket's shared counter, which must then
 * be live (else it is a phantom to end first); counted by number, since
 * shared tickets end in any order. @to: the word with those done.
 */
static enum rdlock_bakery_verdict
rdlock_bakery_judge(u64 v, enum bakery_mode lm,
		    const struct rdlock_bakery_count *c, u64 *to, u32 *slots)
{
	struct bakery_fields f;
	u32 outstanding = 0, cap, m = U32_MAX, done = 0;
	unsigned int i, c_i;
	bool heads = false;
	s64 g;

	bakery_unpack(v, lm, &f);
	for (c_i = 0; c_i < BAKERY_NR_CLS; c_i++) {
		if (f.n[c_i] > f.max[c_i])
			return RDLOCK_BAKERY_WAIT;	/* not a bakery word */
		outstanding += f.max[c_i] - f.n[c_i];
	}
	if (outstanding == c->live) {
		if (!bakery_over_limit(v, lm))
			return RDLOCK_BAKERY_CLEAN;
		if (outstanding)
			return RDLOCK_BAKERY_WAIT;
		*slots = 0;
		return RDLOCK_BAKERY_RESET;
	}
	if (!c->live) {
		*slots = outstanding;
		return RDLOCK_BAKERY_RESET;
	}
	for (i = 0; i < RDLOCK_BAKERY_SERIAL; i++) {
		enum bakery_class cls = rdlock_bakery_serial[i];
		u32 upto;

		if (!bakery_cls_bits(lm, cls))
			continue;
		cap = min(f.max[cls], bakery_count_max(lm, cls));
		upto = min(c->lim[i], cap);
		if (upto > f.n[cls]) {
			done += upto - f.n[cls];
			f.n[cls] = upto;
		}
		if (f.n[cls] >= cap)
			continue;
		heads = true;
		/* The oldest strict ticket is live: granted shared are below. */
		if (c->head[i] && c->first[i])
			m = c->head_s[i];
	}
	if (!heads)
		m = min(f.max[BAKERY_CLS_S], bakery_count_max(lm, BAKERY_CLS_S));
	if (!done && m != U32_MAX) {
		g = (s64)m - f.n[BAKERY_CLS_S] - c->s_granted;
		if (g > 0) {
			done = g;
			f.n[BAKERY_CLS_S] += g;
		}
	}
	if (!done)
		return RDLOCK_BAKERY_WAIT;
	*to = bakery_pack(&f, lm);
	*slots = done;
	return RDLOCK_BAKERY_FINISH;
}

/*
 * The census's CAS from @cur: @to with phantoms done (@reset: zero). New
 * tickets only move ticket counters, so a finishing CAS is made again on
 * the word they left, as long as no ticket ended and no reset came.
 * Return: true if done.
 */
static bool rdlock_bakery_census_cas(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t, enum bakery_mode lm,
				     u64 cur, u64 to, bool reset)
{
	u64 delta = to - cur, old;
	unsigned int i;

	for (i = 0; i < RDLOCK_BAKERY_CENSUS_CAS_TRIES; i++) {
		/* Failed: the next census READs what it did. */
		if (rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, cur,
				    reset ? BAKERY_RESET_TO : cur + delta, &old))
			return false;
		if (old == cur)
			return true;
		if (reset || bakery_progress(cur, old, lm) ||
		    !bakery_same_epoch(cur, old, lm))
			return false;
		cur = old;
	}
	return false;
}

/*
 * Mark the unsure entries of @w that a census now READ after. None left:
 * the settler ends, in the same hold of the lock in which a new unsure
 * entry would see it run, and @w may be gone.
 */
static bool rdlock_bakery_arm(struct rdlock_bakery_word *w)
{
	struct rdlock_bakery_entry *e;
	bool any = false;

	spin_lock_bh(&rdlock_bakery_lock);
	list_for_each_entry(e, &w->entries, list) {
		if (e->phase != RDLOCK_BAKERY_UNSURE)
			continue;
		e->armed = true;
		any = true;
	}
	if (!any) {
		w->settling = false;
		rdlock_bakery_word_put(w);
	}
	spin_unlock_bh(&rdlock_bakery_lock);
	return any;
}

/* Settled: @w's armed unsure entries (@all: every unsure one) go. */
static void rdlock_bakery_disarm(struct rdlock_bakery_word *w, bool all)
{
	struct rdlock_bakery_entry *e, *tmp;

	spin_lock_bh(&rdlock_bakery_lock);
	list_for_each_entry_safe(e, tmp, &w->entries, list) {
		if (e->phase != RDLOCK_BAKERY_UNSURE || !(all || e->armed))
			continue;
		list_del(&e->list);
		rdlock_bakery_word_put(w);	/* the settler's stays */
		kfree(e);
	}
	spin_unlock_bh(&rdlock_bakery_lock);
}

/*
 * One census of @t's word: READ it, ask every node, READ it again; judge
 * only if no ticket ended in between (an ended ticket is missing from
 * the answers and not from the first READ). Return: true after a change
 * of the word, for the next census to come soon.
 */
static bool rdlock_bakery_census_round(const struct rdlock_proto_cfg *cfg,
				       struct rdlock_ticket *t,
				       struct rdlock_bakery_word *w, u64 v)
{
	enum bakery_mode lm = cfg->update_word ? BAKERY_UPD_SHARED :
						 BAKERY_SHARED;
	struct rdlock_bakery_count c;
	u32 slots = 0;
	u64 v2, to = 0;

	if (!rdlock_bakery_census(cfg, t, v, &c) ||
	    rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &v2) ||
	    bakery_progress(v, v2, lm) || !bakery_same_epoch(v, v2, lm))
		return false;
	rdlock_proto_count(cfg, bakery_censuses);
	switch (rdlock_bakery_judge(v, lm, &c, &to, &slots)) {
	case RDLOCK_BAKERY_CLEAN:
		rdlock_bakery_disarm(w, false);
		return false;
	case RDLOCK_BAKERY_RESET:
		/* Nobody may have taken a ticket since the census READ. */
		if (v2 != v ||
		    !rdlock_bakery_census_cas(cfg, t, lm, v, BAKERY_RESET_TO,
					      true))
			return false;
		rdlock_proto_count(cfg, bakery_census_resets);
		rdlock_proto_add(cfg, bakery_phantoms, slots);
		return true;
	case RDLOCK_BAKERY_FINISH:
		if (!rdlock_bakery_census_cas(cfg, t, lm, v2, v2 + (to - v),
					      false))
			return false;
		rdlock_proto_add(cfg, bakery_phantoms, slots);
		return true;
	default:
		return false;
	}
}

/*
 * The back-off @retry_us (rdlock_proto_retry_delay()'s) before a failed
 * operation of a step is tried again, at least a millisecond as
 * rdlock_proto_retry()'s sleep: a link that fails every operation at once
 * is not asked again and again meanwhile.
 */
static u64 rdlock_bakery_retry_ns(unsigned int retry_us)
{
	return (u64)max(retry_us, USEC_PER_MSEC) * NSEC_PER_USEC;
}

/* The settler's state between its steps. */
struct rdlock_bakery_settler {
	struct rdlock_bakery_word *w;
	unsigned int pause_us;
	unsigned int backoff_us;
};

static_assert(sizeof(struct rdlock_bakery_settler) <= RDLOCK_FINISH_STATE_SIZE);

/* The pause before the next census: doubled, from the least to the most. */
static u64 rdlock_bakery_settle_pause(struct rdlock_bakery_settler *s)
{
	s->pause_us = clamp(2 * s->pause_us, RDLOCK_BAKERY_SETTLE_MIN_US,
			    RDLOCK_BAKERY_SETTLE_MAX_US);
	return (u64)s->pause_us * NSEC_PER_USEC;
}

/*
 * The settler of a word with unsure entries, in the background: censuses
 * until none is left, or the home's table is gone (and the tickets with
 * it). @t: a copy of the ticket that started it, ended. A step is one
 * census (rdlock_finish_step_t): live holders the census waits for hold
 * no worker meanwhile.
 */
static u64 rdlock_bakery_settle(struct rdlock_finish *f,
				const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t, void *state)
{
	struct rdlock_bakery_settler *s = state;
	int ret;
	u64 v;

	if (!s->w) {
		spin_lock_bh(&rdlock_bakery_lock);
		s->w = rdlock_bakery_lookup(cfg->xport_priv, t->node, t->slot,
					    t->incarnation);
		spin_unlock_bh(&rdlock_bakery_lock);
		if (WARN_ON_ONCE(!s->w))
			return 0;
		return rdlock_bakery_settle_pause(s);
	}
	/* Armed before the READ: a phantom of theirs is below it. */
	if (!rdlock_bakery_arm(s->w))
		return 0;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &v);
	if (ret) {
		if (!rdlock_proto_retry_delay(cfg, t, ret, &s->backoff_us)) {
			/* The table is gone: the next step finds none left. */
			rdlock_bakery_disarm(s->w, true);
			return rdlock_bakery_settle_pause(s);
		}
		return rdlock_bakery_retry_ns(s->backoff_us) +
		       rdlock_bakery_settle_pause(s);
	}
	s->backoff_us = 0;
	if (rdlock_bakery_census_round(cfg, t, s->w, v))
		s->pause_us = 0;
	return rdlock_bakery_settle_pause(s);
}

/*
 * A node declared down: this many censuses before the settler takes over
 * (each may wait RDLOCK_BAKERY_CENSUS_WAIT_MS for a survivor that does not
 * answer, per busy word, while the node-down holds up the others).
 */
#define RDLOCK_BAKERY_FORGET_TRIES	1

/*
 * Node @dead was declared down: it is dead or fenced, and cut off this
 * node's table, the home of the word at @t, so no operation of its can
 * still change the word. The word does not name its tickets' nodes, but
 * every other node answers a census for its own and @dead is no longer
 * asked (rdlock_bakery_census()): @dead's tickets are phantoms, which the
 * census counts done as it does those of outcomes a failure hid, in the
 * background, each where that grants nobody early (rdlock_bakery_judge():
 * a dead reader granted beside a live writer's turn is counted done once
 * the writer is next). Before, when the oldest exclusive or update ticket
 * is a phantom (or no census could tell), @before_excl runs: @dead may
 * have held the word and half written its value block.
 *
 * Return: 1 when the word is left to the census, 0 when every ticket in
 * it is a live node's, the error of @before_excl or of a READ, -ENOMEM.
 */
static int rdlock_bakery_forget_node(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t, u32 dead,
				     int (*before_excl)(void *arg), void *arg)
{
	enum bakery_mode lm = cfg->update_word ? BAKERY_UPD_SHARED :
						 BAKERY_SHARED;
	struct rdlock_ticket r = *t;
	struct rdlock_bakery_count c;
	struct bakery_fields f;
	bool counted = false, excl = false;
	u32 outstanding = 0;
	unsigned int i;
	u64 v, v2;
	int ret;

	/* With a lease, a waiter resets stalled holders (rdlock_bakery_wait()). */
	if (cfg->lease_ms || (cfg->xport && !cfg->xport->send_msg))
		return 0;
	for (i = 0; i < RDLOCK_BAKERY_FORGET_TRIES && !counted; i++) {
		ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &v);
		if (ret)
			return ret;
		/* A ticket that ended meanwhile is in @v, not in @c: again. */
		counted = rdlock_bakery_census(cfg, t, v, &c) &&
			  !rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &v2) &&
			  !bakery_progress(v, v2, lm) &&
			  bakery_same_epoch(v, v2, lm);
	}
	bakery_unpack(v, lm, &f);
	for (i = 0; i < BAKERY_NR_CLS; i++)
		if (bakery_cls_bits(lm, i) && f.max[i] > f.n[i])
			outstanding += f.max[i] - f.n[i];
	if (counted && outstanding == c.live)
		return 0;
	for (i = 0; i < RDLOCK_BAKERY_SERIAL; i++) {
		enum bakery_class cls = rdlock_bakery_serial[i];

		if (bakery_cls_bits(lm, cls) && f.max[cls] > f.n[cls] &&
		    !(counted && c.head[i]))
			excl = true;
	}
	if (excl && before_excl) {
		ret = before_excl(arg);
		if (ret)
			return ret;
	}
	ret = rdlock_bakery_enter(cfg, &r, cfg->update_word ?
				  BAKERY_UPD_EXCLUSIVE : BAKERY_EXCLUSIVE);
	if (ret || !r.census)
		return ret;
	/* The settler's copy: not a ticket of its own. */
	r.state = RDLOCK_TICKET_DONE;
	rdlock_bakery_settle_start(cfg, &r);
	return 1;
}

/*
 * Posted releases (rdlock_proto_post_release_owned()): a completion
 * (softirq) that ended the ticket drops its entry; a failure, in process
 * context, is sent again or left to the census.
 */
static void rdlock_bakery_post_completed(void *arg, int ret)
{
	struct rdlock_bakery_entry *e = arg;

	if (!ret)
		rdlock_bakery_entry_free(e);
	else
		e->post_ret = ret;
}

static void rdlock_bakery_post_failed(const struct rdlock_proto_cfg *cfg,
				      struct rdlock_ticket *t, void *arg)
{
	struct rdlock_bakery_entry *e = arg;
	int ret = e->post_ret;
	u64 old;

	if (ret == -ENOTCONN)
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_FAA,
					   bakery_release_delta(e->bm, e->k), 0,
					   &old);
	rdlock_bakery_ended(cfg, t, ret);
}

static const struct rdlock_post_owner rdlock_bakery_post_owner = {
	.completed	= rdlock_bakery_post_completed,
	.failed		= rdlock_bakery_post_failed,
};

/**
 * rdlock_bakery_init() - the census's message handler
 *
 * Return: 0 or the error of rdlock_xport_set_msg_handler().
 */
static int rdlock_bakery_init(void)
{
	int ret = rdlock_xport_set_msg_handler(RDLOCK_MSG_BAKERY,
					       rdlock_bakery_msg_handler);

	rdlock_bakery_ready = !ret;
	return ret;
}

/* After the transport is down and background work is finished. */
static void rdlock_bakery_exit(void)
{
	if (!rdlock_bakery_ready)
		return;
	rdlock_xport_set_msg_handler(RDLOCK_MSG_BAKERY, NULL);
	rdlock_bakery_ready = false;
}

/*
 * How long a word may stay unchanged before a waiter resets it (section
 * 5.1): twice the lease for every ticket slot still ahead in @seen, the
 * word as it last changed. A holder of k slots owns the lock for k leases
 * and counts k in every waiter's wait count, so nobody is reset early.
 */
static s64 rdlock_bakery_stall_ms(const struct rdlock_proto_cfg *cfg,
				  u64 prev, u64 seen, enum bakery_mode bm)
{
	u32 ahead = max_t(u32, bakery_wait_count(prev, seen, bm), 1);

	return 2LL * cfg->lease_ms * ahead;
}

/* Take back an over-limit ticket (hazard (a): by CAS, never FA(-k)). */
static int rdlock_bakery_withdraw(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t,
				  enum bakery_mode bm, u64 cur)
{
	u64 new, old;
	int ret;

	while (bakery_withdraw(cur, bm, t->k, &new)) {
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, cur, new,
					   &old);
		if (ret || old == cur)
			return ret;
		cur = old;
	}
	return 0;
}

/*
 * How long a waiter sleeps before its next poll, @since how long ago a
 * ticket ahead last finished (or the wait began): a quarter of it, at
 * least omega and at most RDLOCK_BAKERY_IDLE_MAX_NS. Bounding the sleep by
 * a quarter of @since bounds how late a grant is noticed to a quarter of
 * the hold it ended, whatever the network's latency (bakery.rst,
 * "Polling").
 */
static u64 rdlock_bakery_poll_ns(const struct rdlock_proto_cfg *cfg,
				 ktime_t since)
{
	u64 omega = cfg->omega_us ? (u64)cfg->omega_us * NSEC_PER_USEC :
				    RDLOCK_BAKERY_POLL_MIN_NS;

	return clamp_t(u64, max_t(s64, ktime_to_ns(since), 0) / 4, omega,
		       max_t(u64, omega, RDLOCK_BAKERY_IDLE_MAX_NS));
}

/**
 * struct rdlock_bakery_poll - a ticket's wait for its grant, between polls
 * @bm: the ticket's mode.
 * @seen: the word as it last changed.
 * @stall_ms: how long the word may stay @seen before a waiter resets it.
 * @progress: when the word last changed, or the wait began.
 * @polled: when the last READ returned.
 * @retry_us: back-off state of rdlock_proto_retry_delay().
 * @err: the error of a stall reset's CAS (%RDLOCK_BAKERY_POLL_CAS_FAILED).
 */
struct rdlock_bakery_poll {
	enum bakery_mode bm;
	u64 seen;
	s64 stall_ms;
	ktime_t progress;
	ktime_t polled;
	unsigned int retry_us;
	int err;
};

/* What a READ of the word says to a ticket waiting for its grant. */
enum rdlock_bakery_polled {
	RDLOCK_BAKERY_POLL_GRANTED,
	RDLOCK_BAKERY_POLL_WAIT,	/* sleep rdlock_bakery_poll_next() */
	RDLOCK_BAKERY_POLL_GONE,	/* -EAGAIN: revoked, or reset by us */
	RDLOCK_BAKERY_POLL_CAS_FAILED,	/* the stall reset's CAS: @p->err */
};

/* The wait of @t, in mode @bm, from the word @val, begins. */
static void rdlock_bakery_poll_start(const struct rdlock_proto_cfg *cfg,
				     const struct rdlock_ticket *t,
				     enum bakery_mode bm, u64 val,
				     struct rdlock_bakery_poll *p)
{
	memset(p, 0, sizeof(*p));
	p->bm = bm;
	p->seen = val;
	p->stall_ms = rdlock_bakery_stall_ms(cfg, t->prev, val, bm);
	p->progress = rdlock_proto_now(cfg);
	p->polled = p->progress;
}

/* How long to sleep before the next READ (rdlock_bakery_poll_ns()). */
static u64 rdlock_bakery_poll_next(const struct rdlock_proto_cfg *cfg,
				   const struct rdlock_bakery_poll *p)
{
	u64 ns = rdlock_bakery_poll_ns(cfg, ktime_sub(rdlock_proto_now(cfg),
						      p->progress));

	rdlock_proto_add(cfg, poll_sleep_us, ns / NSEC_PER_USEC);
	return ns;
}

/*
 * A READ returned @val to the ticket @t waiting in @p: is it granted, or
 * gone, or does it wait on? A word that stalled past its leases is reset
 * here (section 5.1), which takes our own ticket with it.
 */
static enum rdlock_bakery_polled
rdlock_bakery_polled(const struct rdlock_proto_cfg *cfg,
		     struct rdlock_ticket *t, struct rdlock_bakery_poll *p,
		     u64 val)
{
	enum bakery_mode bm = p->bm;
	ktime_t now = rdlock_proto_now(cfg);
	u64 new, old;
	int ret;

	t->polls++;
	if (bakery_granted(t->prev, val, bm, t->k)) {
		rdlock_proto_add(cfg, grant_slack_us,
				 ktime_us_delta(now, p->polled));
		t->word = val;
		return RDLOCK_BAKERY_POLL_GRANTED;
	}
	p->polled = now;
	if (bakery_skipped(t->prev, val, bm, t->k))
		return RDLOCK_BAKERY_POLL_GONE;
	/* Algorithm 2: only a finished ticket restarts the clock. */
	if (bakery_progress(p->seen, val, bm)) {
		p->seen = val;
		p->stall_ms = rdlock_bakery_stall_ms(cfg, t->prev, val, bm);
		p->progress = now;
		return RDLOCK_BAKERY_POLL_WAIT;
	}
	rdlock_proto_count(cfg, poll_idle);
	/*
	 * Leases: both clocks are taken on this node after the READ that
	 * showed no change, so a descheduled waiter only ever
	 * under-estimates how long the word has been still.
	 */
	if (!cfg->lease_ms ||
	    ktime_ms_delta(rdlock_proto_now(cfg), p->progress) < p->stall_ms)
		return RDLOCK_BAKERY_POLL_WAIT;
	if (!bakery_stall_reset(t->prev, val, bm, t->k, &new))
		return RDLOCK_BAKERY_POLL_WAIT;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, val, new, &old);
	if (ret) {
		/* Done or not, the next READ tells (bakery_skipped()). */
		p->err = ret;
		return RDLOCK_BAKERY_POLL_CAS_FAILED;
	}
	if (old == val) {
		rdlock_proto_count(cfg, stall_resets);
		return RDLOCK_BAKERY_POLL_GONE;	/* our own ticket went with it */
	}
	return RDLOCK_BAKERY_POLL_WAIT;
}

/*
 * Wait, in mode @bm, for the ticket @t->prev to be granted, starting from
 * the word @val. Returns 0 when granted, -EAGAIN when the ticket is gone
 * (revoked by a reset, or given up by our own stall reset), or the error
 * of a sleep or an operation.
 */
static int rdlock_bakery_wait(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, enum bakery_mode bm,
			      u64 val, unsigned long deadline)
{
	struct rdlock_bakery_poll p;
	int ret;

	rdlock_bakery_poll_start(cfg, t, bm, val, &p);
	for (;;) {
		ret = rdlock_proto_sleep(cfg, rdlock_bakery_poll_next(cfg, &p),
					 deadline);
		if (ret)
			return ret;
		ret = rdlock_proto_read(cfg, t, &val, &p.retry_us, deadline);
		if (ret)
			return ret;
		switch (rdlock_bakery_polled(cfg, t, &p, val)) {
		case RDLOCK_BAKERY_POLL_GRANTED:
			return 0;
		case RDLOCK_BAKERY_POLL_GONE:
			return -EAGAIN;
		case RDLOCK_BAKERY_POLL_CAS_FAILED:
			if (!rdlock_proto_retry(cfg, t, p.err, &p.retry_us))
				return p.err;
			break;
		case RDLOCK_BAKERY_POLL_WAIT:
			break;
		}
	}
}

/*
 * Algorithm 1 lines 7-8: an over-limit word whose done counters have not
 * moved for the stall time of its outstanding tickets lost the holder that
 * should reset it; reset it to zero ourselves. @val is the word a READ
 * just returned; @first is when @seen, the first word of this run of
 * over-limit READs, was returned.
 */
static int rdlock_bakery_overflow_stall(const struct rdlock_proto_cfg *cfg,
					struct rdlock_ticket *t,
					enum bakery_mode bm, u64 val, u64 *seen,
					ktime_t *first)
{
	u64 old;
	int ret;

	/* Over-limit FAs and withdraws move the max fields: watch n only. */
	if (!bakery_over_limit(*seen, bm) || bakery_progress(*seen, val, bm)) {
		*seen = val;
		*first = rdlock_proto_now(cfg);
		return 0;
	}
	if (ktime_ms_delta(rdlock_proto_now(cfg), *first) <
	    rdlock_bakery_stall_ms(cfg, val, val, bm))
		return 0;
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_CAS, val, BAKERY_RESET_TO,
			      &old);
	if (!ret && old == val) {
		rdlock_proto_count(cfg, stall_resets);
		return -EAGAIN;
	}
	return ret;
}

/*
 * Algorithm 1 lines 4-7, after the withdraw: back off until a READ shows
 * the word reset, and only then take a ticket again. The paper retries the
 * FA itself, but every over-limit FA puts a delta in the word until its
 * withdraw, and the responsible holder's reset CAS only matches a word
 * without one: several acquirers retrying FAs starve that CAS (bakery.rst).
 */
static int rdlock_bakery_await_reset(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t,
				     enum bakery_mode bm, unsigned long deadline,
				     unsigned int *backoff)
{
	unsigned int retry_us = 0;
	u64 val, seen = 0;
	ktime_t first = 0;
	int ret;

	for (;;) {
		ret = rdlock_proto_backoff(cfg, backoff, deadline);
		if (ret)
			return ret;
		ret = rdlock_proto_read(cfg, t, &val, &retry_us, deadline);
		if (ret || !bakery_over_limit(val, bm))
			return ret;
		if (cfg->lease_ms) {
			ret = rdlock_bakery_overflow_stall(cfg, t, bm, val,
							   &seen, &first);
			if (ret)
				return ret;
		}
	}
}

static void rdlock_bakery_release(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t);

/*
 * A wait that ended without a grant: -EAGAIN, a reset took the ticket;
 * else its READs stopped because the table is gone (rdlock_proto_retry()).
 */
static void rdlock_bakery_wait_failed(const struct rdlock_proto_cfg *cfg,
				      struct rdlock_ticket *t, int ret)
{
	rdlock_ticket_to(cfg, t, ret == -EAGAIN ? RDLOCK_TICKET_REVOKED :
						  RDLOCK_TICKET_LOST);
	rdlock_bakery_leave(t);
}

/* An abandoned ticket's wait, between the steps that finish it. */
struct rdlock_bakery_finish {
	struct rdlock_bakery_poll p;
	bool started;
};

static_assert(sizeof(struct rdlock_bakery_finish) <= RDLOCK_FINISH_STATE_SIZE);

/*
 * A step of the background end of an abandoned ticket (rdlock_finish_step_t):
 * one poll of its wait, and the release once it is granted. Polls as the
 * waiter did, the sleeps between them are the finisher's timer.
 */
static u64 rdlock_bakery_finish(struct rdlock_finish *f,
				const struct rdlock_proto_cfg *cfg,
				struct rdlock_ticket *t, void *state)
{
	struct rdlock_bakery_finish *s = state;
	u64 val;
	int ret;

	if (!s->started) {
		rdlock_bakery_poll_start(cfg, t, rdlock_bakery_mode(cfg, t),
					 t->prev, &s->p);
		s->started = true;
		return rdlock_bakery_poll_next(cfg, &s->p);
	}
	/*
	 * Its table is gone (the home restarted, or the cluster went down):
	 * the ticket with it. This node's own table answers its READs as
	 * long as it is kept, whether or not the cluster is up.
	 */
	if (!rdlock_proto_table_alive(cfg, t)) {
		ret = -ESTALE;
		goto failed;
	}
	ret = rdlock_proto_op(cfg, t, RDLOCK_XOP_READ, 0, 0, &val);
	if (ret) {
		/* A READ changes nothing: again after the back-off. */
		if (rdlock_proto_retry_delay(cfg, t, ret, &s->p.retry_us))
			return rdlock_bakery_retry_ns(s->p.retry_us);
		goto failed;
	}
	s->p.retry_us = 0;
	switch (rdlock_bakery_polled(cfg, t, &s->p, val)) {
	case RDLOCK_BAKERY_POLL_GRANTED:
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
		t->granted_at = rdlock_proto_now(cfg);
		rdlock_bakery_release(cfg, t);
		return 0;
	case RDLOCK_BAKERY_POLL_WAIT:
		return rdlock_bakery_poll_next(cfg, &s->p);
	case RDLOCK_BAKERY_POLL_CAS_FAILED:
		ret = s->p.err;
		if (rdlock_proto_retry_delay(cfg, t, ret, &s->p.retry_us))
			return rdlock_bakery_retry_ns(s->p.retry_us) +
			       rdlock_bakery_poll_next(cfg, &s->p);
		break;
	case RDLOCK_BAKERY_POLL_GONE:
		ret = -EAGAIN;
		break;
	}
failed:
	rdlock_bakery_wait_failed(cfg, t, ret);
	return 0;
}

/*
 * Takes an acquisition a new ticket after an unknown outcome? Not after
 * RDLOCK_BAKERY_RETAKES of them: a link that fails every operation sent
 * must not leave an entry to settle per try.
 */
static bool rdlock_bakery_may_retake(const struct rdlock_ticket *t, int ret,
				     unsigned int *unknowns)
{
	return t->census && rdlock_proto_outcome_unknown(ret) &&
	       ++*unknowns <= RDLOCK_BAKERY_RETAKES;
}

/* rdlock_bakery_acquire() once admitted. */
static int rdlock_bakery_take(const struct rdlock_proto_cfg *cfg,
			      struct rdlock_ticket *t, unsigned long deadline)
{
	unsigned int backoff = 0, unknowns = 0;
	enum bakery_mode bm;
	u64 delta, prev;
	int ret;

	bm = rdlock_bakery_mode(cfg, t);
	delta = bakery_acquire_delta(bm, t->k);
	ret = rdlock_bakery_enter(cfg, t, bm);
	if (ret)
		return ret;
	rdlock_proto_count(cfg, acquires);
	for (;;) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ISSUED);
		rdlock_bakery_phase(t, RDLOCK_BAKERY_SENDING, 0);
		ret = rdlock_proto_op_take(cfg, t, RDLOCK_XOP_FAA, delta, 0,
					   &prev, deadline);
		/* A blip hid whether the FA was done: a new ticket. */
		if (rdlock_bakery_may_retake(t, ret, &unknowns)) {
			ret = rdlock_bakery_retake(cfg, t, bm);
			if (ret)
				return ret;
			continue;
		}
		if (ret && t->census && rdlock_proto_outcome_unknown(ret)) {
			rdlock_bakery_unsure(cfg, t);
			return ret;
		}
		if (ret) {
			rdlock_ticket_take_failed(cfg, t, ret);
			rdlock_bakery_leave(t);
			return ret;
		}
		if (bakery_over_limit(prev, bm)) {
			/* Algorithm 1 lines 4-7: not a ticket; wait for reset. */
			ret = rdlock_bakery_withdraw(cfg, t, bm, prev + delta);
			if (rdlock_bakery_may_retake(t, ret, &unknowns))
				ret = rdlock_bakery_retake(cfg, t, bm);
			else if (ret)
				rdlock_bakery_ended(cfg, t, ret);
			if (ret)
				return ret;
			rdlock_bakery_phase(t, RDLOCK_BAKERY_OUT, 0);
			ret = rdlock_bakery_await_reset(cfg, t, bm, deadline,
							&backoff);
			if (ret) {
				/* Withdrawn: nothing of ours is in the word. */
				rdlock_ticket_to(cfg, t, ret == -ESTALE ?
						 RDLOCK_TICKET_LOST :
						 RDLOCK_TICKET_DONE);
				rdlock_bakery_leave(t);
				return ret;
			}
			rdlock_proto_count(cfg, retries);
			continue;
		}
		t->prev = prev;
		t->word = prev + delta;
		rdlock_bakery_phase(t, RDLOCK_BAKERY_IN, prev);
		if (bakery_granted_at_fa(prev, bm))
			break;
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_WAITING);
		rdlock_proto_count(cfg, waits);
		ret = rdlock_bakery_wait(cfg, t, bm, prev, deadline);
		if (!ret)
			break;
		/*
		 * A reset took the ticket: the caller retries. Without leases
		 * only a table that was reset under us does that, and a new
		 * ticket on it would hide the fact.
		 */
		if (ret != -ETIMEDOUT && ret != -EINTR) {
			rdlock_bakery_wait_failed(cfg, t, ret);
			return ret;
		}
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_ABANDONED);
		rdlock_proto_count(cfg, abandoned);
		rdlock_proto_finish_later(cfg, t, rdlock_bakery_finish);
		return ret;
	}
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_GRANTED);
	t->granted_at = rdlock_proto_now(cfg);
	return 0;
}

static int rdlock_bakery_acquire(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t,
				 unsigned long deadline)
{
	int ret = rdlock_proto_check(cfg, t) ?:
		  rdlock_proto_admit(cfg, t, deadline);

	if (ret)
		return ret;
	ret = rdlock_bakery_take(cfg, t, deadline);
	rdlock_proto_admit_end(t);
	return ret;
}

/*
 * Section 5.2: an update holder writes once every earlier ticket, readers
 * included, is done: the same poll as acquire, with the upgrade rule.
 */
static int rdlock_bakery_upgrade(const struct rdlock_proto_cfg *cfg,
				 struct rdlock_ticket *t,
				 unsigned long deadline)
{
	unsigned int retry_us = 0;
	u64 val;
	int ret;

	if (!cfg->update_word || t->mode != RDLOCK_MODE_UPDATE || t->upgraded)
		return -EINVAL;
	if (t->revoked)
		return -EAGAIN;
	ret = rdlock_proto_read(cfg, t, &val, &retry_us, deadline);
	if (ret)
		return ret;
	if (bakery_skipped(t->prev, val, BAKERY_UPD_UPGRADE, t->k)) {
		ret = -EAGAIN;
	} else if (bakery_granted(t->prev, val, BAKERY_UPD_UPGRADE, t->k)) {
		t->word = val;
	} else {
		rdlock_proto_count(cfg, upgrade_waits);
		ret = rdlock_bakery_wait(cfg, t, BAKERY_UPD_UPGRADE, val,
					 deadline);
	}
	if (ret == -EAGAIN) {
		/* A reset took the ticket: nothing is held any more. */
		t->revoked = true;
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_REVOKED);
		rdlock_proto_count(cfg, lease_expiries);
	}
	if (ret)
		return ret;
	t->upgraded = true;
	/* The writer's lease starts now, as a waiter's clock does. */
	t->granted_at = rdlock_proto_now(cfg);
	rdlock_proto_count(cfg, upgrades);
	return 0;
}

/*
 * Algorithm 3 lines 6-8: the holder that crossed COUNT_MAX resets, once
 * every other ticket of the epoch is released: a step is one CAS
 * (rdlock_finish_step_t), then a back-off without a worker. @state: the
 * back-off.
 */
static u64 rdlock_bakery_reset(struct rdlock_finish *f,
			       const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, void *state)
{
	enum bakery_mode bm = rdlock_bakery_mode(cfg, t);
	u64 from = bakery_reset_from(t->prev, bm, t->k), old;
	unsigned int *backoff_us = state;

	if (rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, from,
				 BAKERY_RESET_TO, &old))
		return 0;
	if (old == from) {
		rdlock_proto_count(cfg, overflow_resets);
		return 0;
	}
	if (bakery_reset_from_stale(old, from, bm))
		return 0;
	return rdlock_proto_backoff_ns(backoff_us);
}

/*
 * With leases a reset may revoke the ticket at any moment, so the release
 * is a CAS whose compare value shows the ticket still held (hazard (d)). The
 * paper's FA followed by an undo lets waiters see the increment of a revoked
 * ticket before the undo lands and be granted beside a live holder; and the
 * holder's clock cannot tell it was revoked: a paused node's clock does not
 * see the pause. The first compare is the word as the holder last saw it,
 * so an uncontended release still takes one operation.
 *
 * Return: 0 when released, -EAGAIN when the ticket was revoked, or the
 * error of an operation.
 */
static int rdlock_bakery_release_cas(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t,
				     enum bakery_mode bm, u64 delta)
{
	u64 cur = t->word, old;
	int ret;

	while (bakery_release_valid(t->prev, cur, bm, t->k)) {
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_CAS, cur,
					   cur + delta, &old);
		if (ret || old == cur)
			return ret;
		cur = old;
	}
	return -EAGAIN;
}

static void rdlock_bakery_release(const struct rdlock_proto_cfg *cfg,
				  struct rdlock_ticket *t)
{
	/* Validity by the rule the holder was granted under (upgrade). */
	enum bakery_mode bm = rdlock_bakery_mode(cfg, t);
	/* Arithmetic of the ticket's class: an upgrade is still a U ticket. */
	enum bakery_mode am = bm == BAKERY_UPD_UPGRADE ? BAKERY_UPD_UPDATE : bm;
	u64 delta = bakery_release_delta(am, t->k), rel;
	int ret;

	if (t->revoked)
		return;
	rdlock_ticket_to(cfg, t, RDLOCK_TICKET_RELEASING);
	rdlock_bakery_phase(t, RDLOCK_BAKERY_SENDING, t->prev);
	/*
	 * Without leases nothing but this release ends the ticket: one FA.
	 * With no overflow reset owed after it, nothing follows the FA: it
	 * may be posted, the caller does not wait for its round trip.
	 */
	if (!cfg->lease_ms && !bakery_reset_responsible(t->prev, am, t->k) &&
	    rdlock_proto_post_release_owned(cfg, t, delta,
					    t->census ?
					    &rdlock_bakery_post_owner : NULL,
					    t->census))
		return;
	if (cfg->lease_ms)
		ret = rdlock_bakery_release_cas(cfg, t, bm, delta);
	else
		ret = rdlock_proto_op_must(cfg, t, RDLOCK_XOP_FAA, delta, 0,
					   &rel);
	if (ret == -EAGAIN) {
		rdlock_ticket_to(cfg, t, RDLOCK_TICKET_REVOKED);
		rdlock_proto_count(cfg, lease_expiries);
	} else {
		rdlock_bakery_ended(cfg, t, ret);
	}
	if (ret || !bakery_reset_responsible(t->prev, am, t->k))
		return;
	/*
	 * The reset waits for every other holder of the epoch to release,
	 * which must not delay this caller: do it in the background.
	 */
	rdlock_proto_reset_later(cfg, t, rdlock_bakery_reset);
}

/*
 * A word's done counters equal its ticket counters: nobody holds or waits
 * (they count up and are not 0 after use).
 */
static bool rdlock_bakery_word_idle(const struct rdlock_proto_cfg *cfg,
				    u64 w)
{
	enum bakery_mode mode = cfg->update_word ? BAKERY_UPD_SHARED :
						   BAKERY_SHARED;
	int c;

	for (c = 0; c < BAKERY_NR_CLS; c++)
		if (bakery_cls_bits(mode, c) &&
		    bakery_n(w, mode, c) != bakery_max(w, mode, c))
			return false;
	return true;
}

const struct rdlock_proto_ops rdlock_proto_bakery = {
	.name		= "bakery",
	.acquire	= rdlock_bakery_acquire,
	.release	= rdlock_bakery_release,
	.upgrade	= rdlock_bakery_upgrade,
	.forget_node	= rdlock_bakery_forget_node,
	.init		= rdlock_bakery_init,
	.exit		= rdlock_bakery_exit,
	.word_idle	= rdlock_bakery_word_idle,
};
EXPORT_SYMBOL_NS_GPL(rdlock_proto_bakery, RDLOCK_INTERNAL);
