// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock lockspaces: fault injection for the tests, built only with "make
 * RDLOCK_FAULT_INJECTION=y" (Documentation/rdlock/testing.rst). Its
 * knobs are debugfs files rdlock/inject_ls_*; without it the hooks are
 * the no-ops of lockspace-pri.h.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/errno.h>

#include "lockspace-pri.h"

/*
 * The next this many declarations of a node down fail with -EIO once
 * the node's locks moved, before its holds are released here (as a
 * release that could not be done now): the caller tries again.
 */
static atomic_t rdlock_ls_inject_down_failures = ATOMIC_INIT(0);

/* Return: -EIO for an injected failure of a declaration down, else 0. */
int rdlock_ls_fault_down(void)
{
	return atomic_add_unless(&rdlock_ls_inject_down_failures, -1, 0) ?
	       -EIO : 0;
}

/*
 * The next pass over the open lockspaces (rdlock_ls_for_each(), a
 * declaration's) sleeps this many ms holding them, before its first
 * call; the knob reads 0 from then on.
 */
static atomic_t rdlock_ls_inject_walk_delay_ms = ATOMIC_INIT(0);

void rdlock_ls_fault_walk(void)
{
	int ms = atomic_xchg(&rdlock_ls_inject_walk_delay_ms, 0);

	if (ms > 0)
		msleep(ms);
}

void rdlock_ls_fault_init(struct dentry *root)
{
	debugfs_create_atomic_t("inject_ls_down_failures", 0600, root,
				&rdlock_ls_inject_down_failures);
	debugfs_create_atomic_t("inject_ls_walk_delay_ms", 0600, root,
				&rdlock_ls_inject_walk_delay_ms);
}
