/* SPDX-License-Identifier: GPL-2.0 */
/* rdlock's /dev/rdlock (dev.c), the top layer: registered last, first to go. */
#ifndef _RDLOCK_DEV_H
#define _RDLOCK_DEV_H

struct dentry;

int rdlock_dev_init(void);
void rdlock_dev_exit(void);
void rdlock_users_debugfs_init(struct dentry *root);

#endif /* _RDLOCK_DEV_H */
