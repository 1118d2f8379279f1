/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock transport: a node's place in the cluster, and whether a node
 * declared down may come back. Pure logic, tested by KUnit
 * (tests/xport_kunit.c).
 */
#ifndef _RDLOCK_XPORT_MEMBER_H
#define _RDLOCK_XPORT_MEMBER_H

#include <linux/bits.h>
#include <linux/types.h>

/*
 * Is @from to @to a move of @moves, a table of @nr states' allowed moves
 * (a bit per state each may move to)? Every state machine of the
 * transport checks its moves with it; the callers warn once of a move
 * that is not, and refuse it.
 */
static inline bool rdlock_move_ok(const u8 *moves, unsigned int nr,
				  unsigned int from, unsigned int to)
{
	return from < nr && to < nr && (moves[from] & BIT(to));
}

/**
 * enum rdlock_member_state - a node's place in the cluster
 *	(rdlock_member_to())
 * @RDLOCK_MEMBER_ABSENT: not configured.
 * @RDLOCK_MEMBER_CONFIGURED: configured (this node or a peer).
 * @RDLOCK_MEMBER_FENCED: configured, and being declared down
 *	(rdlock_xport_fence()), or it declared us down: no connection to it.
 * @RDLOCK_MEMBER_DOWN: declared down, and its locks released here
 *	(rdlock_xport_release()): no connection to the incarnation of its
 *	table that was declared down; a new one may return.
 * @RDLOCK_MEMBER_RETURNED: declared down in this epoch, back with a new
 *	table: connected as any peer, but it keeps nothing of any lockspace
 *	(rdlock_xport_node_fenced()) until the cluster goes down.
 * @RDLOCK_MEMBER_NR: number of states.
 *
 * The cluster going down here makes every configured node CONFIGURED.
 * This node itself is CONFIGURED, or RETURNED when a peer said it was
 * declared down before this table (rdlock_recv_downset()).
 */
enum rdlock_member_state {
	RDLOCK_MEMBER_ABSENT,
	RDLOCK_MEMBER_CONFIGURED,
	RDLOCK_MEMBER_FENCED,
	RDLOCK_MEMBER_DOWN,
	RDLOCK_MEMBER_RETURNED,
	RDLOCK_MEMBER_NR,
};

/*
 * A node's place: added and removed while the cluster is down; while it
 * is up declared down (cut off, then released), back with a new table,
 * declared down again; learned down or returned from a peer by a node
 * whose table is new; every one CONFIGURED when it goes down (a new
 * epoch).
 */
static inline bool rdlock_member_move_ok(enum rdlock_member_state from,
					 enum rdlock_member_state to)
{
	static const u8 moves[RDLOCK_MEMBER_NR] = {
		[RDLOCK_MEMBER_ABSENT]		= BIT(RDLOCK_MEMBER_CONFIGURED),
		[RDLOCK_MEMBER_CONFIGURED]	= BIT(RDLOCK_MEMBER_ABSENT) |
						  BIT(RDLOCK_MEMBER_FENCED) |
						  BIT(RDLOCK_MEMBER_DOWN) |
						  BIT(RDLOCK_MEMBER_RETURNED),
		[RDLOCK_MEMBER_FENCED]		= BIT(RDLOCK_MEMBER_CONFIGURED) |
						  BIT(RDLOCK_MEMBER_DOWN),
		[RDLOCK_MEMBER_DOWN]		= BIT(RDLOCK_MEMBER_CONFIGURED) |
						  BIT(RDLOCK_MEMBER_RETURNED),
		[RDLOCK_MEMBER_RETURNED]	= BIT(RDLOCK_MEMBER_CONFIGURED) |
						  BIT(RDLOCK_MEMBER_FENCED),
	};

	return rdlock_move_ok(moves, RDLOCK_MEMBER_NR, from, to);
}

/**
 * enum rdlock_view - what this node knows of its epoch (rdlock_view_to())
 * @RDLOCK_VIEW_LEARNING: up, its table new: not every live peer said yet
 *	which nodes are declared down (RDLOCK_WIRE_DOWNSET); not ready.
 * @RDLOCK_VIEW_LEARNED: every live peer did (rdlock_check_learned()):
 *	ready once its peers are; a peer's word no longer changes its view.
 * @RDLOCK_VIEW_CUT_OFF: a peer declared this node down
 *	(rdlock_fenced_by()): never ready, nor telling anybody which nodes
 *	are declared down, before its cluster goes down.
 * @RDLOCK_VIEW_NR: number of views.
 *
 * Every cluster up begins LEARNING.
 */
enum rdlock_view {
	RDLOCK_VIEW_LEARNING,
	RDLOCK_VIEW_LEARNED,
	RDLOCK_VIEW_CUT_OFF,
	RDLOCK_VIEW_NR,
};

/* Learned once, cut off at any time, and anew only at the next up. */
static inline bool rdlock_view_move_ok(enum rdlock_view from,
				       enum rdlock_view to)
{
	static const u8 moves[RDLOCK_VIEW_NR] = {
		[RDLOCK_VIEW_LEARNING]	= BIT(RDLOCK_VIEW_LEARNED) |
					  BIT(RDLOCK_VIEW_CUT_OFF),
		[RDLOCK_VIEW_LEARNED]	= BIT(RDLOCK_VIEW_CUT_OFF),
		[RDLOCK_VIEW_CUT_OFF]	= 0,
	};

	return rdlock_move_ok(moves, RDLOCK_VIEW_NR, from, to);
}

/**
 * enum rdlock_return - may a node cut off here come back
 * @RDLOCK_RETURN_OK: yes: a new table, its declaration and every other
 *	one done here.
 * @RDLOCK_RETURN_REFUSED: never: the table that was declared down (it
 *	was cut off, not dead), or one that does not say which it is.
 * @RDLOCK_RETURN_LATER: not now: a new table, but a declaration is under
 *	way here; or, of a node declared down before it connected to this
 *	node's table (absent when the cluster formed, or declared before
 *	the two connected), a table that learned its epoch already: it
 *	could be the one declared down, cut off and running (refused
 *	without being told it was declared down, which would end it for
 *	every other node too).
 */
enum rdlock_return {
	RDLOCK_RETURN_OK,
	RDLOCK_RETURN_REFUSED,
	RDLOCK_RETURN_LATER,
};

/**
 * rdlock_return_verdict() - may a node cut off here come back
 * @st: its place here: FENCED or DOWN.
 * @known: the incarnation of its table that was declared down; 0 if it
 *	was declared down before it connected to this node's table and no
 *	other survivor of its declaration named one (rdlock_xport_release()),
 *	or it was absent when the cluster formed (rdlock_cluster_up()).
 * @inc: the incarnation of the table it connects with.
 * @declaring: a node's declaration is under way here (one is FENCED).
 * @fresh: that table has not learned its epoch yet (RDLOCK_PDATA_NEW): it
 *	was never ready, so it holds no lock; and with @known 0, no survivor
 *	named a table of it, so nobody put anything in one: whichever table
 *	was declared down, this one keeps nothing anybody relies on.
 *
 * Return: an enum rdlock_return.
 */
static inline enum rdlock_return
rdlock_return_verdict(enum rdlock_member_state st, u64 known, u64 inc,
		      bool declaring, bool fresh)
{
	if (!inc || inc == known)
		return RDLOCK_RETURN_REFUSED;
	if (st != RDLOCK_MEMBER_DOWN || declaring || (!known && !fresh))
		return RDLOCK_RETURN_LATER;
	return RDLOCK_RETURN_OK;
}

/**
 * rdlock_left_declared() - is a node that left cleanly declared down
 * @st: its place here.
 * @heir: another member (this one too) keeps its table of this epoch, or
 *	is to take over (rdlock_handover_verdict()), so the node's names have
 *	a home to move to.
 *
 * The cluster engine says the node left without failing (its cluster
 * taken down cleanly): its table is gone all the same. A node with its
 * table of this epoch is declared down when its names can move; a
 * returned one always (it kept nothing, but its next table would end
 * every lockspace); one cut off already or not configured is not.
 *
 * Return: true when it is to be declared down.
 */
static inline bool rdlock_left_declared(enum rdlock_member_state st,
					bool heir)
{
	switch (st) {
	case RDLOCK_MEMBER_CONFIGURED:
		return heir;
	case RDLOCK_MEMBER_RETURNED:
		return true;
	default:
		return false;
	}
}

/**
 * rdlock_learn_waits() - does a node still learning its epoch wait for a
 *	peer's word
 * @st: the peer's place here.
 * @seen: the peer's RDLOCK_WIRE_DOWNSET came.
 * @excused: the cluster engine says the peer left, and this node is to
 *	decide on it without its word (rdlock_xport_learn_excuse()).
 *
 * Return: true while a live peer (configured, or returned) has not said
 * which nodes are declared down and has not left.
 */
static inline bool rdlock_learn_waits(enum rdlock_member_state st, bool seen,
				      bool excused)
{
	return (st == RDLOCK_MEMBER_CONFIGURED ||
		st == RDLOCK_MEMBER_RETURNED) && !seen && !excused;
}

/**
 * enum rdlock_form - may this node form its cluster epoch now
 * @RDLOCK_FORM_NOW: yes: it decides which configured nodes are absent.
 * @RDLOCK_FORM_WAIT: not now, maybe later.
 * @RDLOCK_FORM_JOIN: never: a peer said its epoch formed already, and
 *	this node learns it from that peer, as any new table does.
 */
enum rdlock_form {
	RDLOCK_FORM_NOW,
	RDLOCK_FORM_WAIT,
	RDLOCK_FORM_JOIN,
};

/**
 * rdlock_form_verdict() - may this node form its cluster epoch now
 * @self: this node's id.
 * @members: the cluster engine's members of its last generation, by bit.
 * @configured: the configured nodes, by bit.
 * @absent: the configured nodes that are no members and neither failed
 *	nor left: absent if the epoch forms now, by bit.
 * @running: the last generation's recover_done came, and no change is
 *	under way since.
 * @waited: founding_wait_ms passed since this node's cluster came up.
 * @said: the peers whose RDLOCK_WIRE_DOWNSET came, by bit.
 * @formed: of them, those that said their epoch formed, by bit.
 * @contacted: the configured peers that ever connected to this node's
 *	table, by bit.
 *
 * One node forms an epoch, before any is ready: the lowest member, once
 * every other member told it that its epoch has not formed, and either
 * every configured node is a member or it waited founding_wait_ms. The
 * configured nodes that are no members then are absent. A node that
 * joins later hears that the epoch formed from every peer, so never
 * forms it again. One that joined after @members was read (its join
 * stopped the membership here, but the read may be older) and already
 * heard this node say that its epoch has not formed connected to it
 * first: while a node to be absent did, the read is stale and this node
 * waits. Members the cluster engine has that are not configured here
 * (a node id mismatch) say nothing and are not waited for.
 *
 * Return: an enum rdlock_form.
 */
static inline enum rdlock_form
rdlock_form_verdict(u32 self, u32 members, u32 configured, u32 absent,
		    bool running, bool waited, u32 said, u32 formed,
		    u32 contacted)
{
	u32 others;

	if (formed)
		return RDLOCK_FORM_JOIN;
	members &= configured;
	others = members & ~BIT(self);
	if (!running || !(members & BIT(self)) || (members & (BIT(self) - 1)))
		return RDLOCK_FORM_WAIT;
	if ((others & ~said) || (absent & contacted))
		return RDLOCK_FORM_WAIT;
	if ((configured & ~members) && !waited)
		return RDLOCK_FORM_WAIT;
	return RDLOCK_FORM_NOW;
}

/**
 * enum rdlock_handover - do returned nodes take over this epoch's lockspaces
 * @RDLOCK_HANDOVER_NONE: no: a node keeps its table of this epoch
 *	(CONFIGURED), none is being declared down, or no heir is live.
 * @RDLOCK_HANDOVER_WAIT: not yet: an heir has not returned here.
 * @RDLOCK_HANDOVER_NOW: yes: the heirs keep the lockspaces from now on
 *	(rdlock_xport_hand_over()).
 */
enum rdlock_handover {
	RDLOCK_HANDOVER_NONE,
	RDLOCK_HANDOVER_WAIT,
	RDLOCK_HANDOVER_NOW,
};

/**
 * rdlock_handover_verdict() - do the heirs take over this epoch's lockspaces
 * @st: every node's place here, indexed by node id.
 * @nr: entries of @st (at most 32).
 * @heirs: the cluster engine's members that neither failed nor left, by
 *	bit: the same set on every survivor.
 *
 * A node declared down passes its names to the next node that keeps its
 * table of this epoch. When the last of them are being declared (cut off:
 * FENCED) and no node keeps one (CONFIGURED), the heirs take over, all of
 * them returned nodes: new tables that keep nothing yet, and that from
 * then on keep names, lock words and the directory as if their tables
 * were of the epoch. Every survivor must take the same set: not before
 * each heir returned here (a new table known), and never a node that is
 * not configured (a node id mismatch).
 *
 * Return: an enum rdlock_handover.
 */
static inline enum rdlock_handover
rdlock_handover_verdict(const enum rdlock_member_state *st, u32 nr,
			u32 heirs)
{
	u32 i, cut = 0, live = 0;

	for (i = 0; i < nr && i < 32; i++) {
		if (st[i] == RDLOCK_MEMBER_CONFIGURED)
			return RDLOCK_HANDOVER_NONE;
		if (st[i] == RDLOCK_MEMBER_FENCED)
			cut |= BIT(i);
	}
	if (!cut)
		return RDLOCK_HANDOVER_NONE;
	for (i = 0; i < nr && i < 32; i++) {
		if (!(heirs & BIT(i)) || st[i] == RDLOCK_MEMBER_ABSENT)
			continue;
		if (st[i] != RDLOCK_MEMBER_RETURNED)
			return RDLOCK_HANDOVER_WAIT;
		live |= BIT(i);
	}
	return live ? RDLOCK_HANDOVER_NOW : RDLOCK_HANDOVER_NONE;
}

/**
 * rdlock_adopt_verdict() - may this node take a handover a peer made
 * @st: every node's place here, indexed by node id.
 * @nr: entries of @st (at most 32).
 * @hosts: the nodes that keep their table of the epoch at the peer, by
 *	bit, after more handovers than this node made or adopted.
 *
 * A node that was not among the survivors of a handover (it learned its
 * epoch before, or was no member then) takes it from a peer's word, at
 * its next membership change: each of @hosts is to keep its table here
 * too. A host cut off here (declared down since) is declared as any;
 * one declared down and not back here yet is waited for.
 *
 * Return: RDLOCK_HANDOVER_NOW or RDLOCK_HANDOVER_WAIT.
 */
static inline enum rdlock_handover
rdlock_adopt_verdict(const enum rdlock_member_state *st, u32 nr, u32 hosts)
{
	u32 i;

	for (i = 0; i < nr && i < 32; i++)
		if ((hosts & BIT(i)) && st[i] == RDLOCK_MEMBER_DOWN)
			return RDLOCK_HANDOVER_WAIT;
	return RDLOCK_HANDOVER_NOW;
}

#endif /* _RDLOCK_XPORT_MEMBER_H */
