/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock lockspaces: what the survivors of a node's declaration down said
 * of its table, for a survivor that never knew it. Pure decisions, shared
 * by lockspace_recover.c and its KUnit tests.
 */
#ifndef _RDLOCK_LOCKSPACE_DOWN_H
#define _RDLOCK_LOCKSPACE_DOWN_H

#include <linux/limits.h>
#include <linux/types.h>

#include "xport.h"

/* A sender of a declaration's message that does not name a table. */
#define RDLOCK_LS_NAMED_UNSAID	U64_MAX

/*
 * What the other survivors named, message by message: @t, the table
 * they named (0 and 0 while none did); @apart, two named different
 * tables or sizes, or one named a table without its size or could not
 * say.
 */
struct rdlock_ls_named {
	struct rdlock_table_named t;
	bool apart;
};

/*
 * One message: table @inc (0: the sender knows none; or
 * RDLOCK_LS_NAMED_UNSAID) of @slots slots.
 */
static inline void rdlock_ls_named_add(struct rdlock_ls_named *n, u64 inc,
				       u32 slots)
{
	if (!inc)
		return;
	if (inc == RDLOCK_LS_NAMED_UNSAID || !slots ||
	    (n->t.incarnation && (n->t.incarnation != inc ||
				  n->t.slots != slots))) {
		n->apart = true;
		return;
	}
	n->t.incarnation = inc;
	n->t.slots = slots;
}

/*
 * Once every survivor said its word in both barriers: the table they
 * named; 0 and 0 when none of them knew one, NULL when they disagreed:
 * either way, none is known.
 */
static inline const struct rdlock_table_named *
rdlock_ls_named_table(const struct rdlock_ls_named *n)
{
	return n->apart ? NULL : &n->t;
}

/*
 * What this node knows of a node @dead that a survivor declares down and
 * asks about (rdlock_member_heard_down()): @running, this node's
 * membership has a generation (recovering or running); @asker_member,
 * the asker is a member of it; @member, @dead is one; @declaring, @dead
 * failed or left here already; @cut, it is cut off here; @configured, a
 * node of the cluster's configuration; @inc, the table the asker
 * declares, and @known the one known here (0: none).
 */
struct rdlock_heard_down {
	bool running;
	bool asker_member;
	bool member;
	bool declaring;
	bool cut;
	bool configured;
	u64 inc;
	u64 known;
};

/*
 * Does this node declare @h's node down too? Only a node that is no
 * member of this node's generation, asked about by one that is, and not
 * declared here yet: fs/dlm's generations are the same on every member,
 * so it is no member anywhere; and only the table known here (a survivor
 * that knows another table of it never let this one in).
 */
static inline bool rdlock_heard_down_verdict(const struct rdlock_heard_down *h)
{
	return h->running && h->asker_member && !h->member &&
	       !h->declaring && !h->cut && h->configured &&
	       (!h->inc || !h->known || h->inc == h->known);
}

#endif /* _RDLOCK_LOCKSPACE_DOWN_H */
