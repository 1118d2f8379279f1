/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock lockspaces: what an acquisition's error from a node means.
 * Pure decisions, shared by lockspace_lock.c and its KUnit tests.
 */
#ifndef _RDLOCK_LOCKSPACE_ERRORS_H
#define _RDLOCK_LOCKSPACE_ERRORS_H

#include <linux/errno.h>
#include <linux/types.h>

/*
 * Does an acquisition that got @ret from a node (its name's entry home or
 * lock word's home) start again, its name moving? When the node is cut
 * off here (@cut: declared down, or being declared) and @ret is
 * -ENOTCONN, or -ESTALE (a ticket lost with its table: an operation there
 * whose outcome a failed link hid could not be settled before the cut).
 * The name moves once the declaration is done (rdlock_res_wait_moved()).
 */
static inline bool rdlock_ls_error_moves(int ret, bool cut)
{
	return cut && (ret == -ENOTCONN || ret == -ESTALE);
}

/*
 * A call's error as its caller sees it: -ESHUTDOWN when the lockspace was
 * lost meanwhile (@stale), or for -ESTALE (a home has another table than
 * the one the lockspace joined); else @ret.
 */
static inline int rdlock_ls_error_code(int ret, bool stale)
{
	return ret == -ESTALE || (ret && stale) ? -ESHUTDOWN : ret;
}

#endif /* _RDLOCK_LOCKSPACE_ERRORS_H */
