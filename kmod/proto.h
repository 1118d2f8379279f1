/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock lock protocols behind one small ops table: the DSLR bakery lock
 * and, as a baseline for benchmarks, a CAS reader-writer spinlock. A
 * protocol knows only the transport (xport.h) and its lock-word encoding.
 */
#ifndef _RDLOCK_PROTO_H
#define _RDLOCK_PROTO_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/stddef.h>
#include <linux/hashtable.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "xport.h"

/**
 * enum rdlock_mode - lock modes
 * @RDLOCK_MODE_SHARED: readers, together.
 * @RDLOCK_MODE_EXCLUSIVE: one writer alone.
 * @RDLOCK_MODE_UPDATE: one update holder beside readers; it may read and,
 *	after &rdlock_proto_ops.upgrade, write. Only on update words.
 * @RDLOCK_MODE_NR: number of modes.
 */
enum rdlock_mode {
	RDLOCK_MODE_SHARED = 0,
	RDLOCK_MODE_EXCLUSIVE = 1,
	RDLOCK_MODE_UPDATE = 2,
	RDLOCK_MODE_NR,
};

struct rdlock_proto_stats;
struct rdlock_bakery_entry;
struct seq_file;

/**
 * struct rdlock_cql_waiters - one node's CQL waiters, by local id
 * @xa: local id (the low bits of a queue entry's client id) to
 *	struct rdlock_cql_waiter; its lock (taken with BHs off) is what a
 *	notification holds while it wakes a waiter, and what the waiter's
 *	removal waits for.
 *
 * @gate_lock: protects @gates and @claims.
 * @gates: per lock, this node's clients in its queue (the admission
 *	gate that keeps the queue from overflowing, cql.rst) and the lock's
 *	reset count as this node knows it; a gate of a lock that was reset
 *	stays until the registry is destroyed.
 * @claims: resets this node runs, waiting for the participants' answers.
 * @claim_ended: woken when one of @claims ends, for a reset a release
 *	owes that waits for another claim of its lock by this node.
 * @locals: hierarchical CQL: per lock, its local lock on this node
 *	(waiters queued on the node, the node's one entry in the queue).
 * @claim_seq: numbers this node's resets, so a signal sent again is
 *	answered again but handled once.
 * @next_id: where the allocation of waiter ids (@xa) goes on: an id is
 *	used again only after every other, so that a notification sent
 *	to an earlier waiter can never name a later one.
 * @xport: the simulated transport that sends this node's answers to reset
 *	signals (NULL: the real one), with @xport_priv.
 * @xport_priv: passed to @xport's calls.
 *
 * The real node has one (proto_cql.c); a simulated cluster one per node.
 */
struct rdlock_cql_waiters {
	struct xarray xa;
	spinlock_t gate_lock;	/* protects gates, claims */
	DECLARE_HASHTABLE(gates, 6);
	struct list_head claims;
	wait_queue_head_t claim_ended;
	atomic_t claim_seq;
	DECLARE_HASHTABLE(locals, 6);
	u32 next_id;
	const struct rdlock_proto_xport *xport;
	void *xport_priv;
};

/**
 * enum rdlock_proto_msg_type - the protocols' message types
 * @RDLOCK_MSG_CQL: CQL notifications and reset signals (proto_cql.c).
 * @RDLOCK_MSG_BAKERY: the bakery's census (proto_bakery.c).
 * @RDLOCK_MSG_PROTO_NR: the first type left to the layers above.
 *
 * Each is a type of rdlock_xport_set_msg_handler(): a type has one
 * handler, the last one set.
 */
enum rdlock_proto_msg_type {
	RDLOCK_MSG_CQL,
	RDLOCK_MSG_BAKERY,
	RDLOCK_MSG_PROTO_NR,
};

/**
 * struct rdlock_proto_xport - the transport as a protocol sees it
 * @exec: one synchronous operation on (@node, @slot) of table
 *	@incarnation, as rdlock_xport_exec() with the transport's default
 *	timeout.
 * @exec_range: a READ_RANGE, FAA_READ or CAS_READ, as
 *	rdlock_xport_exec_range() with the transport's default timeout:
 *	returns the slots read.
 * @now: this node's clock, for leases and stall detection.
 * @incarnation: the table @node has now (rdlock_xport_node_incarnation());
 *	NULL: unknown, and a failed poll ends the wait.
 * @send_msg: a message of enum rdlock_proto_msg_type to @node, as
 *	rdlock_xport_send_msg(); delivered with BHs off, in order per pair
 *	of nodes, by calling rdlock_cql_deliver() on @node's waiters (CQL)
 *	or rdlock_bakery_deliver() with @node's xport_priv (bakery).
 * @self: the id of the node the caller runs on.
 * @waiters: the waiters of the node the caller runs on.
 * @sleep: wait about @ns before polling or trying again, in place of every
 *	timed sleep of the protocols (rdlock_proto_xsleep()); NULL: the real
 *	sleeps. The simulation's clock does not need a timer tick to move.
 * @post: as rdlock_xport_post(): 0 and @done called later (never from
 *	inside @post, so that @post may hold locks @done does not take), or
 *	an error and nothing sent. Executed before any later operation of
 *	this node on @node. NULL: releases are never posted.
 * @node_down: is @node declared down (rdlock_xport_node_fenced()): gone
 *	for good, fenced, its holds given up by the survivors? A node that
 *	is merely unreachable is not. NULL: no node ever is.
 *
 * The real transport when &rdlock_proto_cfg.xport is NULL; the KUnit suite
 * proto_kunit.c runs the real protocols against a simulated cluster through
 * it, with delays, errors and paused clocks injected.
 */
struct rdlock_proto_xport {
	int (*exec)(void *priv, enum rdlock_xop op, u32 node, u64 incarnation,
		    u32 slot, u64 arg0, u64 arg1, u64 *value);
	int (*exec_range)(void *priv, enum rdlock_xop op, u32 node,
			  u64 incarnation, u32 slot, u64 arg0, u64 arg1,
			  u32 rslot, u32 count, u64 *value, u64 *vals);
	ktime_t (*now)(void *priv);
	u64 (*incarnation)(void *priv, u32 node);
	int (*send_msg)(void *priv, u32 node, unsigned int type,
			const void *payload, size_t len);
	u32 (*self)(void *priv);
	struct rdlock_cql_waiters *(*waiters)(void *priv);
	void (*sleep)(void *priv, u64 ns);
	int (*post)(void *priv, enum rdlock_xop op, u32 node, u64 incarnation,
		    u32 slot, u64 arg0, u64 arg1, rdlock_xport_done_t done,
		    void *ctx);
	bool (*node_down)(void *priv, u32 node);
};

/**
 * struct rdlock_proto_quota - a bound on one owner's abandoned tickets
 * @ref: the owner's reference and one per ticket finishing in the
 *	background, which may outlive the owner.
 * @used: acquisitions with a deadline under way (each reserved its place
 *	when admitted: rdlock_proto_admit()) and the tickets they abandoned,
 *	until finished in the background. At most @max: an acquisition that
 *	would make it more is refused with -EBUSY before it takes a ticket.
 * @killed: tickets of acquisitions without a deadline, abandoned on a
 *	fatal signal, until finished in the background.
 * @max: the bound on @used, and with @strict on @killed; its owner may
 *	change it (READ_ONCE()).
 * @strict: the owner is a user of /dev/rdlock, who can make and kill
 *	waiters at will: while @killed is @max, acquisitions without a
 *	deadline are refused too. Otherwise (a kernel user) they never are.
 * @refused: acquisitions refused.
 */
struct rdlock_proto_quota {
	struct kref ref;
	atomic_t used;
	atomic_t killed;
	unsigned int max;
	bool strict;
	atomic64_t refused;
};

/**
 * struct rdlock_proto_cfg - per-lockspace protocol policy
 * @lease_ms: 0: a holder keeps the lock until it releases it (what a file
 *	system needs); T: DSLR leases (section 5.1): a holder of k slots
 *	owns the lock for k x T; a waiter that sees no progress for 2T x the
 *	tickets still ahead of it resets the word and fails with -EAGAIN; a
 *	release counts only a ticket the word still shows (CAS).
 * @omega_us: bakery waiters' shortest sleep between polls; 0: 50 us.
 * @update_word: the lock words use the six-counter layout of section 5.2;
 *	%RDLOCK_MODE_UPDATE is valid only then.
 * @stats: if not NULL, counted into as well as the global
 *	rdlock_proto_stats; never used by background work, so it only has
 *	to outlive the calls that pass this cfg.
 * @xport: NULL for the real transport; else a simulated one, which must
 *	outlive background work too (rdlock_proto_flush()).
 * @xport_priv: passed to @xport's calls.
 * @quota: NULL, or the bound on the owner's abandoned tickets, unless the
 *	ticket names its own (&struct rdlock_ticket's @quota).
 * @cql_cap_bits: CQL: log2 of the queue capacity (lockword/cql.h); 0:
 *	CQL_CAP_BITS_DEFAULT. A lock takes 1 + 2^@cql_cap_bits slots.
 * @cql_ver_bits: CQL: version bits; 0: CQL_VER_BITS_DEFAULT.
 * @nodes: nodes that may use the lockspace's locks. CQL: each lets at
 *	most capacity / @nodes of its clients into one lock's queue at a
 *	time, so that it never overflows; 0: RDLOCK_MAX_NODES. With a
 *	simulated @xport, the nodes 0 .. @nodes - 1 are the participants a
 *	CQL reset signals and a bakery census asks
 *	(rdlock_proto_participant()).
 * @cql_stuck_ms: CQL: a waiter that sees the lock's header unchanged this
 *	long, with nobody alive named at its head, resets the lock; 0:
 *	RDLOCK_CQL_STUCK_MS_DEFAULT (proto_cql_reset.c).
 * @cql_policy: CQL: enum rdlock_cql_policy, flat or hierarchical (one
 *	queue entry per node, cql.rst "Hierarchical locking").
 * @cas_readers: CAS spinlock, if not NULL: per home node, the other
 *	nodes' reader bits in the last word without a writer this node saw
 *	on that home, a new record's first guess (proto_cas.c); NULL: the
 *	home's reader bit. Like @stats, used only by the calls.
 */
struct rdlock_proto_cfg {
	unsigned int lease_ms;
	unsigned int omega_us;
	bool update_word;
	struct rdlock_proto_stats *stats;
	const struct rdlock_proto_xport *xport;
	void *xport_priv;
	struct rdlock_proto_quota *quota;
	u8 cql_cap_bits;
	u8 cql_ver_bits;
	u32 nodes;
	u32 cql_stuck_ms;
	u8 cql_policy;
	u64 *cas_readers;
};

/**
 * struct rdlock_proto_attr - a lockspace's attributes, as its protocol sees them
 * @flags: the uapi's RDLOCK_LS_* flags (<linux/rdlock.h>) of the lockspace.
 * @queue_bits: CQL: log2 of each lock's queue capacity; 0: the default.
 * @version_bits: CQL: entry version bits; 0: the default.
 *
 * What the uapi checks of them (rdlock_ls_check_attr(), uapi_check.h) is
 * checked already when a protocol gets them.
 */
struct rdlock_proto_attr {
	u32 flags;
	u8 queue_bits;
	u8 version_bits;
};

/**
 * enum rdlock_cql_policy - how a CQL lockspace queues its clients
 * @RDLOCK_CQL_FLAT: every client has its own queue entry (section 4).
 * @RDLOCK_CQL_TASK_FAIR: hierarchical (section 5): one entry per node,
 *	local waiters on the node, granted in arrival order across nodes.
 * @RDLOCK_CQL_PHASE_FAIR: hierarchical; a writer's release lets the
 *	node's waiting readers in first, and a reader that gets the lock
 *	shares it with every waiting reader of its node.
 */
enum rdlock_cql_policy {
	RDLOCK_CQL_FLAT,
	RDLOCK_CQL_TASK_FAIR,
	RDLOCK_CQL_PHASE_FAIR,
};

/**
 * enum rdlock_ticket_state - a ticket's life (design.rst, "Ticket life")
 * @RDLOCK_TICKET_NEW: nothing sent yet; a ticket that ends here was never
 *	taken (refused by a check, a quota, a gate).
 * @RDLOCK_TICKET_ISSUED: the operation that takes it (FA, CAS) is under
 *	way, or was withdrawn and is about to be sent again.
 * @RDLOCK_TICKET_WAITING: in the word or the queue, not granted yet.
 * @RDLOCK_TICKET_GRANTED: held.
 * @RDLOCK_TICKET_ABANDONED: its caller stopped waiting (deadline, fatal
 *	signal); a worker waits for the grant and releases it.
 * @RDLOCK_TICKET_RELEASING: its release is under way.
 * @RDLOCK_TICKET_DONE: final: released, withdrawn, or never in the word;
 *	or, bakery without leases, an operation's outcome unknown and left
 *	to the node's census, which settles the word (proto_bakery.c).
 * @RDLOCK_TICKET_REVOKED: final: a reset took it out of the word.
 * @RDLOCK_TICKET_LOST: final: its table is gone, and the ticket with it.
 * @RDLOCK_TICKET_ORPHANED: final, and counted as a defect: an operation
 *	that changes the word failed with its outcome unknown (the verbs
 *	backend keeps no record at the home), so the word may hold a ticket
 *	that nobody will end until a lease or a reset does.
 * @RDLOCK_TICKET_NR: number of states.
 */
enum rdlock_ticket_state {
	RDLOCK_TICKET_NEW,
	RDLOCK_TICKET_ISSUED,
	RDLOCK_TICKET_WAITING,
	RDLOCK_TICKET_GRANTED,
	RDLOCK_TICKET_ABANDONED,
	RDLOCK_TICKET_RELEASING,
	RDLOCK_TICKET_DONE,
	RDLOCK_TICKET_REVOKED,
	RDLOCK_TICKET_LOST,
	RDLOCK_TICKET_ORPHANED,
	RDLOCK_TICKET_NR,
};

/**
 * struct rdlock_ticket - one acquisition, from taking it to releasing it
 * @node: home node of the lock word.
 * @slot: slot of the lock word in @node's table.
 * @mode: enum rdlock_mode.
 * @prev: bakery and CQL: the word the acquiring FA returned; CAS spinlock:
 *	the bits held.
 * @word: bakery: the word as last seen (the first compare value of a
 *	release by CAS). CQL: the waiter's local id while a ticket that had
 *	to wait is finished in the background.
 * @k: slots of a multi-slot lease (section 5.1); 0 means 1. At most
 *	BAKERY_K_MAX, or BAKERY_UPD_K_MAX on an update word.
 * @upgraded: an update ticket that may write (set by upgrade). The holder
 *	may clear it to stop writing; the ticket still keeps readers out
 *	until released, and upgrade sets it again at once.
 * @revoked: bakery: a lease reset took the ticket away while it was held
 *	(only during an upgrade); release does nothing.
 * @incarnation: the home's table the ticket is taken in; 0: whichever it
 *	has. Operations on another table fail with -ESTALE: a ticket never
 *	outlives its table.
 * @granted_at: when the lock was granted, or upgraded (leases).
 * @remote_ops: remote operations this acquisition took.
 * @polls: READs while waiting.
 * @post: its caller lets the release be posted (rdlock_proto_post_release()):
 *	it returns before the home executed it.
 * @pin: with @post, if not NULL: counts the ticket's posted release until it
 *	ended; the owner of what the lock word lives in (a name's entry, a
 *	lockspace's stats) waits for 0 before freeing it
 *	(rdlock_proto_wait_pin()).
 * @state: where it is in its life; only rdlock_ticket_to() changes it. A
 *	posted release leaves the caller's ticket releasing: the copy the
 *	posted operation carries ends it.
 * @census: bakery without leases: the ticket's entry in its node's
 *	record of the word, which a census asks about (proto_bakery.c);
 *	NULL otherwise.
 * @read_slot: with @read_count: the first slot of a READ its caller wants
 *	right after the grant, on @node (a value block).
 * @read_count: slots of that READ, at most %RDLOCK_XPORT_CAS_READ_MAX; 0:
 *	none.
 * @read_vals: receives them.
 * @read_got: set when the protocol READ them after the operation that
 *	took the lock, in its round trip (the CAS spinlock's CAS_READ);
 *	else the caller READs them itself.
 * @quota: NULL, or the bound of the acquisition's owner, in place of
 *	@cfg->quota (a /dev/rdlock user's); the caller keeps it while the
 *	acquisition runs.
 * @reserved: the quota the acquisition holds a place in (its deadline's),
 *	given back when it ends, or to the background with its ticket.
 */
struct rdlock_ticket {
	u32 node;
	u32 slot;
	enum rdlock_mode mode;
	u64 prev;
	u64 word;
	u32 k;
	bool upgraded;
	bool revoked;
	u64 incarnation;
	ktime_t granted_at;
	u32 remote_ops;
	u32 polls;
	bool post;
	atomic_t *pin;
	enum rdlock_ticket_state state;
	struct rdlock_bakery_entry *census;
	u32 read_slot;
	u32 read_count;
	u64 *read_vals;
	bool read_got;
	struct rdlock_proto_quota *quota;
	struct rdlock_proto_quota *reserved;
};

/**
 * struct rdlock_proto_ops - a lock protocol
 * @name: as shown in debugfs and benchmarks.
 * @slots: slots one lock takes, from its lock word on (NULL: 1).
 * @acquire: take @t->node/slot in @t->mode; sleeps. Returns 0 when
 *	granted; -EAGAIN when a lease reset revoked or ended the attempt
 *	(retry); -EBUSY while the owner's quota (@t->quota, else
 *	@cfg->quota) refuses it (rdlock_proto_admit(): nothing taken);
 *	-ETIMEDOUT at @deadline (jiffies; 0: none) or -EINTR on a fatal
 *	signal, in which case any ticket already taken is completed
 *	and released in the background; or a transport error.
 *	-EINVAL for a bad @t->k, or for %RDLOCK_MODE_UPDATE without
 *	@cfg->update_word.
 * @release: give the lock up; sleeps; never fails the caller's release
 *	(lost connections and leases are handled inside). With leases, a
 *	ticket a reset revoked is not released: the word decides, whatever
 *	the holder's clock says.
 * @upgrade: let the holder of a granted %RDLOCK_MODE_UPDATE ticket write:
 *	sleeps until every earlier reader is done, then sets @t->upgraded
 *	and returns 0. -ETIMEDOUT at @deadline or -EINTR on a fatal signal:
 *	the caller still holds the update lock, not upgraded. -EINVAL if @t
 *	is not an update ticket or is upgraded already. Bakery with leases
 *	only: -EAGAIN, a stall reset (ours, or a later waiter's) took the
 *	ticket away: the lock is no longer held and release does nothing.
 * @forget_node: NULL, or take out of the word at @t->node/slot (this
 *	node's table) what node @dead held or waited for, for a node
 *	declared down and cut off that table: calls @before_excl(@arg)
 *	first when @dead held it exclusive or update, or may have (its
 *	error is returned, nothing changed). Returns 1 when it took
 *	something out or left it to be taken out in the background (the
 *	bakery's census), 0 when @dead held nothing, or an error.
 * @init: NULL, or the protocol's part of rdlock_proto_init() (its message
 *	handler): 0 or an error, in which case rdlock_proto_init() fails.
 * @exit: NULL, or undo @init; called by rdlock_proto_exit() after the
 *	transport is down and background work is finished, and after a
 *	failed rdlock_proto_init() even if @init did not run or failed, when
 *	it has nothing to undo.
 * @check_attr: NULL, or can the protocol serve a lockspace of @attr on a
 *	cluster of @nodes configured nodes: 0 or -EINVAL (CQL: a queue with
 *	room for one client of every node).
 * @config: NULL, or fill the protocol's own fields of @cfg (CQL: the
 *	field widths with their defaults resolved, the policy) from @attr;
 *	the lockspace sets the fields every protocol shares.
 * @word_idle: does lock word @w show neither holder nor waiter, so that
 *	its name entry may be freed and the word be another name's.
 * @show_head: with @show, the first lines of the lockspace debugfs file
 *	named after the protocol (@name), which decodes the locks homed on
 *	this node: 0, or -EINVAL for a @cfg the protocol cannot decode.
 * @show: NULL (no such file), or one lock of that file, decoded, from the
 *	rest of a line on: its lock word @w and what @read(@arg, @off) READs
 *	of the slots after it (@off 1: the first slot after @w), ending with
 *	a newline. Return: 0, -EINVAL for a @cfg the protocol cannot decode,
 *	or @read's error.
 */
struct rdlock_proto_ops {
	const char *name;
	u32 (*slots)(const struct rdlock_proto_cfg *cfg);
	int (*acquire)(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, unsigned long deadline);
	void (*release)(const struct rdlock_proto_cfg *cfg,
			struct rdlock_ticket *t);
	int (*upgrade)(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, unsigned long deadline);
	int (*forget_node)(const struct rdlock_proto_cfg *cfg,
			   struct rdlock_ticket *t, u32 dead,
			   int (*before_excl)(void *arg), void *arg);
	int (*init)(void);
	void (*exit)(void);
	int (*check_attr)(const struct rdlock_proto_attr *attr, u32 nodes);
	void (*config)(struct rdlock_proto_cfg *cfg,
		       const struct rdlock_proto_attr *attr);
	bool (*word_idle)(const struct rdlock_proto_cfg *cfg, u64 w);
	int (*show_head)(const struct rdlock_proto_cfg *cfg,
			 struct seq_file *m);
	int (*show)(const struct rdlock_proto_cfg *cfg, struct seq_file *m,
		    u64 w, int (*read)(void *arg, u32 off, u64 *v), void *arg);
};

/**
 * struct rdlock_proto_stats - protocol counters, for debugfs and benchmarks
 * @acquires: acquisitions started.
 * @waits: acquisitions not granted by their first operation.
 * @remote_ops: remote operations of every type.
 * @ops: remote operations by enum rdlock_xop.
 * @posted_releases: releases whose one FAA was posted, not waited for.
 * @posted_failed: of them, those whose operation failed, ended by a worker;
 *	and posted WRITEs that failed (rdlock_proto_post_write()).
 * @retries: new tickets after a revocation, an over-limit word, or (bakery)
 *	an acquiring operation whose outcome was unknown.
 * @stall_resets: stalled holders skipped by a lease reset.
 * @overflow_resets: words reset to zero after crossing COUNT_MAX.
 * @lease_expiries: releases that found their ticket revoked by a reset.
 * @abandoned: acquisitions that timed out or were killed while waiting.
 * @upgrades: update holders upgraded to writers.
 * @upgrade_waits: upgrades that had to wait for readers.
 * @notifies: CQL notifications sent (ownership transfers to waiters).
 * @notify_stale: CQL notifications received that matched no waiter.
 * @cql_signals_refused: CQL reset signals for a lock of another table than
 *	its home has now as this node knows it (another incarnation, a slot
 *	outside it): no gate, unanswered.
 * @refetches: CQL queue entries read again (not yet populated).
 * @cql_refetch_expired: CQL releases that refetched for the full
 *	RDLOCK_CQL_REFETCH_MAX_MS (an enqueuer gone, or a stall of the
 *	protocol), whatever they did then.
 * @version_resets: CQL locks reset, idle, before their versions wrap.
 * @cql_resets: CQL resets of a busy lock run by this node, by enum
 *	rdlock_cql_reset_cause (cql.rst, "Resets").
 * @cql_reset_aborts: CQL acquisitions aborted by a reset and enqueued
 *	again.
 * @cql_local_handovers: hierarchical CQL: releases that passed the node's
 *	queue entry to a waiter of the same node, with no remote operation.
 * @cql_local_shares: hierarchical CQL: readers let into a shared hold of
 *	their node's entry, without an entry of their own.
 * @cas_local_shares: CAS spinlock: readers let into their node's shared
 *	hold (its reader bit already in the word), with no remote operation.
 * @cas_settles: CAS spinlock: words READ to learn what an operation whose
 *	outcome was unknown did, and set right (proto_cas.c).
 * @bakery_unknowns: bakery tickets whose operation's outcome was unknown,
 *	left to their node's census.
 * @bakery_censuses: censuses of a bakery word that every node answered,
 *	none busy with it.
 * @bakery_phantoms: ticket slots no node held that a census counted as
 *	done (the outcomes of unknown operations).
 * @bakery_census_resets: bakery words a census reset to zero: no node
 *	held a ticket in them, and something was left.
 * @tickets: tickets that reached each state (rdlock_ticket_to()); those
 *	that reached %RDLOCK_TICKET_RELEASING are the releases.
 * @ticket_bad_moves: state changes the ticket life does not allow: a
 *	protocol bug, logged; tests require 0.
 * @tickets_unfinished: background tickets whose worker ended with the
 *	ticket not in a final state: a protocol bug, logged.
 * @finish_kicks: grant (or abort) notifications that ran the next step of
 *	an abandoned ticket's finisher at once, and answers to a reset's
 *	signals that ran its next step (rdlock_proto_finish_kick()).
 * @acq_ops: remote operations by enum rdlock_xop of tickets before their
 *	release (acquisitions, waits, upgrades).
 * @rel_ops: remote operations by enum rdlock_xop of tickets from their
 *	release on (%RDLOCK_TICKET_RELEASING or later: the release, its
 *	handover, the resets it owes), background releases included.
 * @poll_idle: polls of a waiting bakery ticket that saw no ticket finish.
 * @poll_sleep_us: time waiting bakery tickets slept before their polls.
 * @grant_slack_us: for each bakery grant seen by a poll, the time since
 *	the poll before it (or the wait's start), which saw no grant: how
 *	late, at most, the waiter noticed its grant.
 */
/**
 * enum rdlock_cql_reset_cause - why a busy CQL lock was reset
 * @RDLOCK_CQL_RESET_VERSION: a release found the version wrap near.
 * @RDLOCK_CQL_RESET_OVERWRITE: a release found a waiter's entry overwritten.
 * @RDLOCK_CQL_RESET_UNWRITTEN: a release found an entry unwritten for
 *	10 s (its enqueuer's node is gone).
 * @RDLOCK_CQL_RESET_STUCK: a waiter found the header unchanged for long and
 *	the client at its head gone or unknown.
 * @RDLOCK_CQL_RESET_TAKEOVER: the node that claimed a reset is gone; a
 *	waiter took the reset over (appendix B).
 * @RDLOCK_CQL_RESET_DOWN: a node was declared down: its home reset the
 *	busy lock (forget_node).
 * @RDLOCK_CQL_RESET_NR: number of causes.
 */
enum rdlock_cql_reset_cause {
	RDLOCK_CQL_RESET_VERSION,
	RDLOCK_CQL_RESET_OVERWRITE,
	RDLOCK_CQL_RESET_UNWRITTEN,
	RDLOCK_CQL_RESET_STUCK,
	RDLOCK_CQL_RESET_TAKEOVER,
	RDLOCK_CQL_RESET_DOWN,
	RDLOCK_CQL_RESET_NR,
};

extern const char *const rdlock_cql_reset_names[RDLOCK_CQL_RESET_NR];

struct rdlock_proto_stats {
	atomic64_t acquires;
	atomic64_t waits;
	atomic64_t remote_ops;
	atomic64_t ops[RDLOCK_XOP_NR];
	atomic64_t posted_releases;
	atomic64_t posted_failed;
	atomic64_t retries;
	atomic64_t stall_resets;
	atomic64_t overflow_resets;
	atomic64_t lease_expiries;
	atomic64_t abandoned;
	atomic64_t upgrades;
	atomic64_t upgrade_waits;
	atomic64_t notifies;
	atomic64_t notify_stale;
	atomic64_t cql_signals_refused;
	atomic64_t refetches;
	atomic64_t cql_refetch_expired;
	atomic64_t version_resets;
	atomic64_t cql_resets[RDLOCK_CQL_RESET_NR];
	atomic64_t cql_reset_aborts;
	atomic64_t cql_local_handovers;
	atomic64_t cql_local_shares;
	atomic64_t cas_local_shares;
	atomic64_t cas_settles;
	atomic64_t bakery_unknowns;
	atomic64_t bakery_censuses;
	atomic64_t bakery_phantoms;
	atomic64_t bakery_census_resets;
	atomic64_t tickets[RDLOCK_TICKET_NR];
	atomic64_t ticket_bad_moves;
	atomic64_t tickets_unfinished;
	atomic64_t finish_kicks;
	atomic64_t acq_ops[RDLOCK_XOP_NR];
	atomic64_t rel_ops[RDLOCK_XOP_NR];
	atomic64_t poll_idle;
	atomic64_t poll_sleep_us;
	atomic64_t grant_slack_us;
};

extern struct rdlock_proto_stats rdlock_proto_stats;
extern const struct rdlock_proto_ops rdlock_proto_bakery;
extern const struct rdlock_proto_ops rdlock_proto_caslock;
unsigned int rdlock_proto_cas_holds(void);
unsigned int rdlock_proto_bakery_words(void);
extern const struct rdlock_proto_ops rdlock_proto_cql;

/* proto_bakery.c */
void rdlock_bakery_deliver(const struct rdlock_proto_xport *xport, void *priv,
			   u32 src, const void *payload, size_t len);

/* proto_cql.c */
void rdlock_cql_waiters_init(struct rdlock_cql_waiters *w);
void rdlock_cql_waiters_destroy(struct rdlock_cql_waiters *w);
void rdlock_cql_deliver(struct rdlock_cql_waiters *w, u32 src,
			const void *payload, size_t len);
unsigned int rdlock_cql_gate_count(struct rdlock_cql_waiters *ws);

/* proto.c: the protocols by id, and what they share */
const struct rdlock_proto_ops *rdlock_proto_lookup(u32 id);
void __rdlock_proto_count(const struct rdlock_proto_cfg *cfg, size_t offset);
/* Count one event into the global and the lockspace's (cfg->stats) stats. */
#define rdlock_proto_count(cfg, counter) \
	__rdlock_proto_count(cfg, offsetof(struct rdlock_proto_stats, counter))
void __rdlock_proto_add(const struct rdlock_proto_cfg *cfg, size_t offset,
			s64 v);
/* Add @v to a counter, as rdlock_proto_count() adds one. */
#define rdlock_proto_add(cfg, counter, v) \
	__rdlock_proto_add(cfg, offsetof(struct rdlock_proto_stats, counter), v)
int rdlock_proto_check(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t);
int rdlock_proto_op(const struct rdlock_proto_cfg *cfg,
		    struct rdlock_ticket *t, enum rdlock_xop op, u64 arg0,
		    u64 arg1, u64 *value);
int rdlock_proto_read(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_ticket *t, u64 *val,
		      unsigned int *retry_us, unsigned long deadline);
int rdlock_proto_op_at(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, u32 slot, enum rdlock_xop op,
		       u64 arg0, u64 arg1, u64 *value);
int rdlock_proto_op_at_must(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, u32 slot,
			    enum rdlock_xop op, u64 arg0, u64 arg1, u64 *value);
int rdlock_proto_read_range(const struct rdlock_proto_cfg *cfg,
			    struct rdlock_ticket *t, u32 slot, u32 count,
			    u64 *vals);
int rdlock_proto_faa_read_must(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, u64 arg0, u32 rslot,
			       u32 count, u64 *value, u64 *vals);
int rdlock_proto_op_must(const struct rdlock_proto_cfg *cfg,
			 struct rdlock_ticket *t, enum rdlock_xop op, u64 arg0,
			 u64 arg1, u64 *value);
int rdlock_proto_op_take(const struct rdlock_proto_cfg *cfg,
			 struct rdlock_ticket *t, enum rdlock_xop op, u64 arg0,
			 u64 arg1, u64 *value, unsigned long deadline);
void rdlock_ticket_to(const struct rdlock_proto_cfg *cfg,
		      struct rdlock_ticket *t, enum rdlock_ticket_state to);
bool rdlock_ticket_final(const struct rdlock_ticket *t);
void rdlock_ticket_failed(const struct rdlock_proto_cfg *cfg,
			  struct rdlock_ticket *t, int ret);
bool rdlock_proto_outcome_unknown(int ret);
void rdlock_ticket_take_failed(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, int ret);
extern const char *const rdlock_ticket_state_names[RDLOCK_TICKET_NR];
u32 rdlock_proto_self(const struct rdlock_proto_cfg *cfg);
bool rdlock_proto_participant(const struct rdlock_proto_cfg *cfg, u32 node);
bool rdlock_proto_node_down(const struct rdlock_proto_cfg *cfg, u32 node);
void rdlock_proto_node_released(u32 node);
bool rdlock_proto_node_gone(const struct rdlock_proto_cfg *cfg, u32 node);
bool rdlock_proto_table_alive(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t);
int rdlock_proto_send_msg(const struct rdlock_proto_xport *xport, void *priv,
			  u32 node, unsigned int type, const void *payload,
			  size_t len);
u32 rdlock_proto_word_key(const void *owner, u32 home, u32 slot);
ktime_t rdlock_proto_now(const struct rdlock_proto_cfg *cfg);
bool rdlock_proto_xsleep(const struct rdlock_proto_cfg *cfg, u64 ns);
int rdlock_proto_sleep(const struct rdlock_proto_cfg *cfg, u64 ns,
		       unsigned long deadline);
bool rdlock_proto_retry_delay(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t, int err,
			      unsigned int *backoff_us);
bool rdlock_proto_retry(const struct rdlock_proto_cfg *cfg,
			const struct rdlock_ticket *t, int err,
			unsigned int *backoff_us);
u64 rdlock_proto_backoff_ns(unsigned int *backoff_us);
int rdlock_proto_backoff(const struct rdlock_proto_cfg *cfg,
			 unsigned int *backoff_us, unsigned long deadline);
struct rdlock_proto_quota *rdlock_proto_quota_alloc(unsigned int max,
						    bool strict);
void rdlock_proto_quota_put(struct rdlock_proto_quota *q);
int rdlock_proto_admit(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, unsigned long deadline);
void rdlock_proto_admit_end(struct rdlock_ticket *t);

struct rdlock_finish;

/* Room for a protocol's state between the steps of a finisher. */
#define RDLOCK_FINISH_STATE_SIZE	128

/**
 * typedef rdlock_finish_step_t - one step of background work on a ticket
 * @f: the finisher, for rdlock_proto_finish_kick().
 * @cfg: the policy, copied.
 * @t: the ticket, copied.
 * @state: %RDLOCK_FINISH_STATE_SIZE bytes of the protocol's own, zeroed
 *	before the first step.
 *
 * Finishing an abandoned ticket (rdlock_proto_finish_later()) or a reset
 * a ticket owes (rdlock_proto_reset_later()): looks at the ticket or the
 * word, acts on what it sees (a release once granted, a reset once the
 * holders left) and returns: it never sleeps until a grant or a holder's
 * release. Remote operations, and a reset of a stuck lock, are waited
 * for as elsewhere.
 *
 * Context: a worker, in a NOFS scope; never two steps of one ticket at
 * once.
 *
 * Return: 0 once @t is in a final state and nothing can kick @f any
 * more; else the nanoseconds until the next step at the latest (a kick
 * runs it sooner).
 */
typedef u64 (*rdlock_finish_step_t)(struct rdlock_finish *f,
				    const struct rdlock_proto_cfg *cfg,
				    struct rdlock_ticket *t, void *state);

void rdlock_proto_finish_later(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t,
			       rdlock_finish_step_t step);
void rdlock_proto_finish_kick(struct rdlock_finish *f);
void rdlock_proto_finish_wake_init(struct wait_queue_entry *wake,
				   struct rdlock_finish *f);
u32 rdlock_proto_finishing(u32 *parked);
u32 rdlock_proto_resetting(u32 *parked);
void rdlock_proto_reset_later(const struct rdlock_proto_cfg *cfg,
			      const struct rdlock_ticket *t,
			      rdlock_finish_step_t step);
bool rdlock_proto_post_release(const struct rdlock_proto_cfg *cfg,
			       struct rdlock_ticket *t, u64 delta);

/**
 * struct rdlock_post_owner - a protocol that settles its posted releases
 * @completed: every outcome of the posted FAA, in its completion's
 *	context (softirq): never sleeps.
 * @failed: after a failure, in process context: ends @t, the posted
 *	ticket's copy, in a final state.
 */
struct rdlock_post_owner {
	void (*completed)(void *arg, int ret);
	void (*failed)(const struct rdlock_proto_cfg *cfg,
		       struct rdlock_ticket *t, void *arg);
};

bool rdlock_proto_post_release_owned(const struct rdlock_proto_cfg *cfg,
				     struct rdlock_ticket *t, u64 delta,
				     const struct rdlock_post_owner *owner,
				     void *arg);
int rdlock_proto_post_write(u32 node, u64 incarnation, u32 slot, u64 val,
			    atomic_t *pin);
void rdlock_proto_wait_pin(atomic_t *pin);
void rdlock_proto_flush(void);
int rdlock_proto_init(void);
void rdlock_proto_exit(void);

/* proto_debugfs.c */
struct dentry;
void rdlock_proto_debugfs_init(struct dentry *root);
void rdlock_proto_stats_show(struct seq_file *m, struct rdlock_proto_stats *s);
void rdlock_bakery_words_show(struct seq_file *m);

#endif /* _RDLOCK_PROTO_H */
