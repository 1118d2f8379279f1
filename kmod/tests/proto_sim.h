/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated cluster of the protocol KUnit suites (proto_sim.c, linked
 * into rdlock_proto_kunit.ko with proto_kunit.c, proto_bakery_kunit.c,
 * proto_cas_kunit.c and proto_cql_kunit.c): the real lock protocols of
 * rdlock.ko (proto_bakery.c, proto_cas.c, proto_cql*.c) run against a lock
 * table in memory behind &struct rdlock_proto_xport, with random latencies
 * before and after every operation (so completions and polls interleave
 * differently in every schedule) and per-node clocks that a test can stop,
 * as a paused guest's clock stops. A checker sees every live holder enter
 * and leave and counts any writer beside another holder.
 *
 * The simulation needs no timer to move on: the debug kernel has no
 * high-resolution timers (HZ=250), so every real sleep lasts until the
 * next tick, about 4 ms. The protocols' polls and back-offs go through
 * &rdlock_proto_xport.sleep, which lets the other threads run instead; a
 * stall moves the cluster's clock on instead of waiting for it.
 */
#ifndef _RDLOCK_TESTS_PROTO_SIM_H
#define _RDLOCK_TESTS_PROTO_SIM_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "lockword/bakery.h"
#include "lockword/cql.h"
#include "proto.h"

#define SIM_NODES		3
/* A CQL lock at SIM_LOCK_SLOT takes 1 + 2^5 slots at the default layout. */
#define SIM_SLOTS		64
#define SIM_LOCK_NODE		0
#define SIM_LOCK_SLOT		1
/* The tables' first incarnation; sim_restart_test() restarts one. */
#define SIM_INCARNATION		1

/* Direct-mapped: which table generation each thread last saw. */
#define SIM_SEEN_BITS		6

struct proto_sim;

/*
 * One simulated node: its clock runs @hidden_ns behind the cluster's;
 * @waiters are its CQL waiters, which its notifications reach.
 */
struct sim_node {
	struct proto_sim *sim;
	atomic64_t hidden_ns;
	struct rdlock_cql_waiters waiters;
};

/* A message in flight: enum rdlock_proto_msg_type @type. */
struct sim_msg {
	struct list_head list;
	u32 src, dst;
	unsigned int type;
	size_t len;
	u8 payload[RDLOCK_XMSG_PAYLOAD];
};

/**
 * struct proto_sim - a simulated cluster and the checker of its lock
 * @lock: makes every operation on @table atomic, as the home's backend.
 * @table: the lock words, by node and slot.
 * @delay_us: each operation may wait up to this long before it executes
 *	and again before its result returns (sim_delay()).
 * @incarnation: each node's table's, as the transport checks it.
 * @read_fail_pct: this share of READs fails with -ECONNRESET, as on a
 *	connection blip, without being executed.
 * @op_fail_pct: this share of FAAs and CASes is refused with -ENOTCONN,
 *	unsent, as while the connection is being made again: an acquisition
 *	must wait through it (any error of acquire fails the schedule).
 * @exec_reset_pct: this share of FAAs and CASes fails with -ECONNRESET
 *	after it was executed, as a verbs operation flushed with its
 *	connection: its outcome is unknown to the caller.
 * @reset_next: so many next FAAs and CASes fail as @exec_reset_pct's.
 * @lose_next: so many next FAAs and CASes fail with -ECONNRESET without
 *	being executed: the caller cannot tell them from @reset_next's.
 * @lose_pct: this share of FAAs and CASes fails as @lose_next's.
 * @nodes: the nodes, the xport_priv of their threads.
 * @readers: live holders inside in shared mode.
 * @writers: live holders inside in exclusive mode.
 * @counter: incremented non-atomically by writers.
 * @violations: a writer beside another holder, or a reader beside a writer.
 * @grants: live acquisitions.
 * @writes: live exclusive acquisitions (what @counter must be).
 * @again: acquisitions ended by -EAGAIN (a reset) and retried.
 * @timeouts: acquisitions that reached a short deadline (abandoned).
 * @xfails: operations failed on purpose (@read_fail_pct).
 * @errors: any other failed acquisition.
 * @bad_states: a ticket in a state its call's outcome does not allow.
 * @stop: the threads that run until told stop.
 * @stalling: the stalled holder has not released yet.
 * @msg_lock: protects @msgs.
 * @msgs: notifications in flight, in the order sent: one FIFO for all
 *	pairs of nodes, so each pair's is FIFO too.
 * @msg_work: delivers @msgs, one at a time, with BHs off as in softirq.
 * @msg_delay_us: each delivery may first wait up to this long.
 * @msgs_sent: CQL messages sent (notifications, reset signals, answers).
 * @cut: a node no message reaches: every message to or from it is
 *	refused (-ENOTCONN), as the transport does for a node that crashed
 *	or is behind a partition.
 * @down: a node declared down (fenced) by the cluster: the transport's
 *	node_down; a node that failed is @cut and, once the cluster said
 *	so, @down.
 * @resets_done: CQL resets completed: CASes of the lock's header from a
 *	value with the reset field set to zero, as only a reset's last
 *	step does.
 * @cql: the CQL layout of the lock's header, when @cql_on.
 * @cql_on: the lock is a CQL lock: FAAs on its header are watched.
 * @unreset_wraps: FAAs that took the header's qhead from the all-ones lap
 *	into the next without a reset (cql.rst: the reset at that lap is
 *	what lets versions compare as plain numbers).
 * @seq: grant order, for the CQL order tests.
 * @ahead_ns: the cluster's clock runs this far ahead of the real one (a
 *	stall moves it on, sim_round()).
 * @hold_stats: the stalled holder's stats (too big for sim_round()'s
 *	frame).
 * @hold_cfg: the stalled holder's configuration.
 * @gen: changes of @table by operations (under @lock).
 * @seen: by thread, @gen as of its last operation (under @lock).
 * @changed: woken when @gen moves: sim_sleep() waits for it.
 * @post_mutex: protects @posted.
 * @posted: operations posted (sim_post()), in the order posted; each is
 *	executed before any later operation of its node on its home, as a
 *	queue pair's requests are, and completed later in any order.
 * @post_work: executes and completes @posted, with BHs off as in softirq.
 * @post_hold: completions wait until cleared (and @post_work queued).
 * @post_fail_pct: this share of posted operations fails with -ENOTCONN,
 *	unexecuted, as when the transport gave up sending it again.
 * @post_reset_pct: this share fails with -ECONNRESET after it was
 *	executed: its outcome is unknown to the caller.
 * @posts: operations posted.
 * @read_hold: the READs (and READ_RANGEs) of this node, plus one, wait
 *	before they execute until it is cleared (0: none): a releaser
 *	held between its dequeue and its look at the queue.
 * @hold_wq: woken when @read_hold is cleared.
 * @last_msg: by source and destination, a copy of the last message sent,
 *	which sim_replay() delivers again (under @msg_lock).
 */
struct proto_sim {
	spinlock_t lock;	/* one operation at a time, as the home */
	u64 table[SIM_NODES][SIM_SLOTS];
	u32 delay_us;
	u64 incarnation[SIM_NODES];
	u32 read_fail_pct;
	u32 op_fail_pct;
	u32 exec_reset_pct;
	atomic_t reset_next;
	atomic_t lose_next;
	u32 lose_pct;
	struct sim_node nodes[SIM_NODES];
	atomic_t readers, writers;
	u64 counter;
	atomic_t violations;
	atomic64_t grants, writes, again, timeouts, errors, xfails;
	atomic64_t bad_states;
	bool stop;
	bool stalling;
	spinlock_t msg_lock;	/* protects msgs */
	struct list_head msgs;
	struct work_struct msg_work;
	u32 msg_delay_us;
	atomic64_t msgs_sent;
	bool cut[SIM_NODES];
	bool down[SIM_NODES];
	atomic64_t resets_done;
	struct cql_layout cql;
	bool cql_on;
	atomic64_t unreset_wraps;
	atomic_t seq;
	atomic64_t ahead_ns;
	struct rdlock_proto_stats hold_stats;
	struct rdlock_proto_cfg hold_cfg;
	u32 gen;
	struct sim_seen {
		struct task_struct *task;
		u32 gen;
	} seen[1 << SIM_SEEN_BITS];
	wait_queue_head_t changed;
	struct mutex post_mutex;	/* protects posted */
	struct list_head posted;
	struct work_struct post_work;
	bool post_hold;
	u32 post_fail_pct;
	u32 post_reset_pct;
	atomic64_t posts;
	u32 read_hold;
	wait_queue_head_t hold_wq;
	struct sim_msg last_msg[SIM_NODES][SIM_NODES];
};

/**
 * struct sim_params - one configuration of the simulation
 * @name: shown as the parameter's description.
 * @ops: the protocol.
 * @update_word: the six-counter word (modes then include update/upgrade).
 * @lease_ms: the lockspace's lease, 0 for none.
 * @delay_us: see &struct proto_sim.
 * @rounds: schedules run, each with fresh random latencies and modes
 *	(times RDLOCK_SIM_SCALE / 100).
 * @iters: acquisitions per thread per round (without a stall).
 * @stall_mode: with a stall: the stalled holder's mode.
 * @stall: a holder stalls each round, clock stopped, until reset.
 * @deadline_ms: while the holder stalls, the hammering threads' acquire
 *	deadline (else 30 s): they time out and come back, a steady stream
 *	of new tickets (each abandoned one is finished in the background).
 * @read_fail_pct: see &struct proto_sim.
 * @op_fail_pct: see &struct proto_sim.
 * @msg_delay_us: see &struct proto_sim.
 * @cql_cap_bits: CQL layout, 0: default.
 * @cql_ver_bits: CQL layout, 0: default.
 * @cql_wraps: CQL: versions are narrow enough that a busy lock must be
 *	reset before they wrap: the case fails without such a reset.
 * @cql_policy: CQL: enum rdlock_cql_policy (flat or hierarchical).
 * @post: releases may be posted (&rdlock_ticket.post).
 * @post_fail_pct: see &struct proto_sim.
 * @exec_reset_pct: see &struct proto_sim.
 * @post_reset_pct: see &struct proto_sim.
 * @lose_pct: see &struct proto_sim.
 */
struct sim_params {
	const char *name;
	const struct rdlock_proto_ops *ops;
	bool update_word;
	u32 lease_ms;
	u32 delay_us;
	u32 rounds;
	u32 iters;
	enum rdlock_mode stall_mode;
	bool stall;
	u32 deadline_ms;
	u32 read_fail_pct;
	u32 op_fail_pct;
	u32 msg_delay_us;
	u8 cql_cap_bits;
	u8 cql_ver_bits;
	bool cql_wraps;
	u8 cql_policy;
	bool post;
	u32 post_fail_pct;
	u32 exec_reset_pct;
	u32 post_reset_pct;
	u32 lose_pct;
};

/* Before an operation, and before its result returns: maybe a delay. */
void sim_delay(struct proto_sim *sim);
/*
 * Node @node fails (@failed: cut off, then declared down, as the cluster
 * would) or, with !@failed, comes back (its declaration lifted, then
 * reachable).
 */
static inline void sim_fail_node(struct proto_sim *sim, u32 node, bool failed)
{
	if (failed) {
		WRITE_ONCE(sim->cut[node], true);
		WRITE_ONCE(sim->down[node], true);
	} else {
		WRITE_ONCE(sim->down[node], false);
		WRITE_ONCE(sim->cut[node], false);
	}
}

/* The last message @src sent to @dst, delivered once more. */
void sim_replay(struct proto_sim *sim, u32 src, u32 dst);
/* Node @i of a zeroed @sim (node 0 sets up the cluster's queues too). */
void sim_node_init(struct proto_sim *sim, int i);
/* Posted operations, background tickets, then the notifications sent. */
void sim_flush(struct proto_sim *sim);
/* sim_flush(), then the nodes' CQL waiters ended. */
void sim_destroy(struct proto_sim *sim);
/* @cfg of a client of @node in configuration @p, counting in @stats. */
void sim_cfg(struct rdlock_proto_cfg *cfg, const struct sim_params *p,
	     struct sim_node *node, struct rdlock_proto_stats *stats);
/* sim_cfg() of node @node of @sim, allocated for the test. */
struct rdlock_proto_cfg *sim_cfg_new(struct kunit *test, struct proto_sim *sim,
				     const struct sim_params *p, int node,
				     struct rdlock_proto_stats *stats);
/* A simulated cluster with empty tables, freed with the test. */
struct proto_sim *sim_alloc(struct kunit *test);
/* The lock word, at SIM_LOCK_NODE and SIM_LOCK_SLOT. */
u64 cql_header(struct proto_sim *sim);
/*
 * Wait up to 10 s for @n resets in the background, all between steps at
 * one moment (rdlock_proto_resetting()): none holds a worker.
 */
bool sim_resets_parked(u32 n);

/* Resets by @cause in the global stats (background work counts there). */
static inline s64 cql_resets(enum rdlock_cql_reset_cause cause)
{
	return atomic64_read(&rdlock_proto_stats.cql_resets[cause]);
}

static inline s64 cql_local_handovers(void)
{
	return atomic64_read(&rdlock_proto_stats.cql_local_handovers);
}

#endif /* _RDLOCK_TESTS_PROTO_SIM_H */
