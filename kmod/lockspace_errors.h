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
 * off here (@cut: declared down, or being declared), for any error but
 * the caller's own end (-EINTR), a bad argument (-EINVAL, -EOPNOTSUPP)
 * or this node's memory (-ENOMEM): what a node cut off said is moot, its
 * words go with it. -ENOTCONN (nothing sent), -ESTALE (a ticket lost with
 * its table) and a failed link's errors whose outcome is unknown
 * (-ECONNRESET, -ETIMEDOUT, -EIO) alike: an operation in flight as the
 * node went fails one way or another, and no way may reach the caller.
 * The name moves once the declaration is done (rdlock_res_wait_moved());
 * a deadline that passed ends the acquisition when it starts again.
 */
static inline bool rdlock_ls_error_moves(int ret, bool cut)
{
	return cut && ret && ret != -EINTR && ret != -EINVAL &&
	       ret != -EOPNOTSUPP && ret != -ENOMEM;
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
