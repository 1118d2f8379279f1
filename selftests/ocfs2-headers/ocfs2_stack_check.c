// SPDX-License-Identifier: GPL-2.0
/*
 * Build check of an out-of-tree OCFS2 cluster stack plug-in: it includes
 * fs/ocfs2/stackglue.h as extracted by scripts/ocfs2-headers.sh, fills in
 * struct ocfs2_stack_operations and registers with the stack glue of the
 * stock kernel's ocfs2_stackglue.ko. Never loaded: every operation fails.
 */
#include <linux/module.h>
#include <linux/errno.h>

#include "stackglue.h"

static int check_connect(struct ocfs2_cluster_connection *conn)
{
	return -EOPNOTSUPP;
}

static int check_disconnect(struct ocfs2_cluster_connection *conn)
{
	return 0;
}

static int check_this_node(struct ocfs2_cluster_connection *conn,
			   unsigned int *node)
{
	return -EOPNOTSUPP;
}

static int check_dlm_lock(struct ocfs2_cluster_connection *conn, int mode,
			  struct ocfs2_dlm_lksb *lksb, u32 flags, void *name,
			  unsigned int namelen)
{
	return -EOPNOTSUPP;
}

static int check_dlm_unlock(struct ocfs2_cluster_connection *conn,
			    struct ocfs2_dlm_lksb *lksb, u32 flags)
{
	return -EOPNOTSUPP;
}

static int check_lock_status(struct ocfs2_dlm_lksb *lksb)
{
	return -EOPNOTSUPP;
}

static int check_lvb_valid(struct ocfs2_dlm_lksb *lksb)
{
	return 0;
}

static void *check_lock_lvb(struct ocfs2_dlm_lksb *lksb)
{
	/* The fs_dlm member of the lksb union, as stack_user.c uses it. */
	return lksb->lksb_fsdlm.sb_lvbptr;
}

static void check_dump_lksb(struct ocfs2_dlm_lksb *lksb)
{
}

static struct ocfs2_stack_operations check_ops = {
	.connect	= check_connect,
	.disconnect	= check_disconnect,
	.this_node	= check_this_node,
	.dlm_lock	= check_dlm_lock,
	.dlm_unlock	= check_dlm_unlock,
	.lock_status	= check_lock_status,
	.lvb_valid	= check_lvb_valid,
	.lock_lvb	= check_lock_lvb,
	.dump_lksb	= check_dump_lksb,
};

static struct ocfs2_stack_plugin check_plugin = {
	.sp_name	= "test",
	.sp_ops		= &check_ops,
	.sp_owner	= THIS_MODULE,
};

static int __init check_init(void)
{
	BUILD_BUG_ON(sizeof(check_plugin.sp_max_proto) !=
		     sizeof(struct ocfs2_protocol_version));
	return ocfs2_stack_glue_register(&check_plugin);
}

static void __exit check_exit(void)
{
	ocfs2_stack_glue_unregister(&check_plugin);
}

module_init(check_init);
module_exit(check_exit);
MODULE_DESCRIPTION("Build check of an OCFS2 stack plug-in against stackglue.h");
MODULE_LICENSE("GPL");
