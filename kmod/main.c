// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock: distributed locks over RDMA. Module init and exit only: each
 * layer brings itself up, from the transport to /dev/rdlock, and goes down
 * in the reverse order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>

#include "xport.h"
#include "proto.h"
#include "lockspace.h"
#include "dev.h"
#include "dlm-pri.h"

/* Each layer adds its own files: xport, proto and lockspace_debugfs.c. */
static struct dentry *rdlock_debugfs_root;

static void rdlock_debugfs_init(void)
{
	rdlock_debugfs_root = debugfs_create_dir("rdlock", NULL);
	rdlock_xport_debugfs_init(rdlock_debugfs_root);
	rdlock_proto_debugfs_init(rdlock_debugfs_root);
	rdlock_ls_debugfs_init(rdlock_debugfs_root);
	rdlock_dlm_debugfs_init(rdlock_debugfs_root);
	rdlock_users_debugfs_init(rdlock_debugfs_root);
}

static int __init rdlock_init(void)
{
	int ret;

	ret = rdlock_xport_init();
	if (ret)
		return ret;
	ret = rdlock_proto_init();
	if (ret)
		goto exit_xport;
	ret = rdlock_ls_init();
	if (ret)
		goto exit_proto;
	ret = rdlock_dlm_init();
	if (ret)
		goto exit_ls;
	rdlock_debugfs_init();
	ret = rdlock_dev_init();
	if (ret)
		goto exit_dlm;
	return 0;

exit_dlm:
	debugfs_remove_recursive(rdlock_debugfs_root);
	rdlock_dlm_exit();
exit_ls:
	rdlock_ls_exit();
exit_proto:
	rdlock_proto_exit();
exit_xport:
	rdlock_xport_exit();
	return ret;
}

static void __exit rdlock_exit(void)
{
	rdlock_dev_exit();
	rdlock_dlm_exit();
	rdlock_ls_exit();
	debugfs_remove_recursive(rdlock_debugfs_root);
	/* Down first: background tickets end when their operations fail. */
	rdlock_xport_shutdown();
	rdlock_proto_exit();
	rdlock_xport_exit();
}

module_init(rdlock_init);
module_exit(rdlock_exit);

MODULE_DESCRIPTION("rdlock: distributed locks over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(RDLOCK_VERSION);
