/* SPDX-License-Identifier: GPL-2.0 */
/* rdlock DLM API (kmod/dlm.c): what main.c needs. */
#ifndef _RDLOCK_DLM_PRI_H
#define _RDLOCK_DLM_PRI_H

struct dentry;

int rdlock_dlm_init(void);
void rdlock_dlm_exit(void);
void rdlock_dlm_debugfs_init(struct dentry *root);

#endif /* _RDLOCK_DLM_PRI_H */
