// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock DLM API: fault injection for the tests, built only with "make
 * RDLOCK_FAULT_INJECTION=y" (Documentation/rdlock/testing.rst). Its
 * knobs are debugfs files rdlock/inject_dlm_*; without it the hooks are
 * the no-ops of dlm-pri.h.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>

#include "dlm-pri.h"

/* Ms each done notice waits before it goes. */
static u32 rdlock_dlm_inject_done_delay_ms;
/*
 * A waiting take polls every this many ms instead of after a back-off,
 * so that only a kick or a cancel ends its wait sooner.
 */
static u32 rdlock_dlm_inject_poll_ms;
/* Ms a LOCAL lock's take waits before it starts. */
static u32 rdlock_dlm_inject_local_delay_ms;

static void rdlock_dlm_fault_sleep(const u32 *ms)
{
	u32 v = READ_ONCE(*ms);

	if (v)
		msleep(v);
}

/* Before a done notice goes. */
void rdlock_dlm_fault_done_delay(void)
{
	rdlock_dlm_fault_sleep(&rdlock_dlm_inject_done_delay_ms);
}

/* Before a LOCAL lock's take starts. */
void rdlock_dlm_fault_local_delay(void)
{
	rdlock_dlm_fault_sleep(&rdlock_dlm_inject_local_delay_ms);
}

/* Return: ms a waiting take polls at; 0: after its back-off. */
u32 rdlock_dlm_fault_poll_ms(void)
{
	return READ_ONCE(rdlock_dlm_inject_poll_ms);
}

void rdlock_dlm_fault_init(struct dentry *root)
{
	debugfs_create_u32("inject_dlm_done_delay_ms", 0600, root,
			   &rdlock_dlm_inject_done_delay_ms);
	debugfs_create_u32("inject_dlm_poll_ms", 0600, root,
			   &rdlock_dlm_inject_poll_ms);
	debugfs_create_u32("inject_dlm_local_delay_ms", 0600, root,
			   &rdlock_dlm_inject_local_delay_ms);
}
