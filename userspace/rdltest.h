/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers of the multi-node selftests and the benchmarks; see rdltest.c. */
#ifndef _RDLOCK_RDLTEST_H
#define _RDLOCK_RDLTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <linux/rdlock.h>
#include "rdlock_test_ioctl.h"

#define RDLOCK_DEV		"/dev/rdlock"
#define TEST_DEV		"/dev/rdlock_test"
#define BARRIER_POLL_US		2000

/*
 * Raw slots of /dev/rdlock_test, relative to F = first_free_slot, on
 * node 0. Every guest step ends with the final barrier (rdl_stop, "xport_test
 * --final-barrier") on F + 2 and F + 3: a test of the same step that used
 * them would let node 0 pass it at once and take the cluster down under the
 * others. Tests therefore keep their slots at F + RDL_FIRST_TEST_SLOT and
 * above; only xport_test, which owns the barrier, lays out F + 0 .. 63.
 */
#define RDL_SLOT_FINAL_BARRIER	2
#define RDL_SLOT_FINAL_ACK	3
#define RDL_FIRST_TEST_SLOT	64

int rdl_xop(int fd, __u32 op, __u32 node, __u32 slot, __u64 a0, __u64 a1,
	    __u64 *val);
int rdl_env_u32(const char *name, __u32 def, __u32 *val);
/* Seconds on CLOCK_MONOTONIC. */
double rdl_now(void);
long long rdl_debugfs_counter(const char *file, const char *name);
int rdl_debugfs_write(const char *file, unsigned int v);
long long rdl_debugfs_read(const char *file);
int rdl_write_u32(const char *path, unsigned int v);
bool rdl_read_again(int err);
int rdl_barrier_arrive(int fd, __u32 nr_nodes, __u32 timeout_s, __u32 slot,
		       __u64 gen, char *msg, size_t len);
int rdl_barrier(int fd, __u32 nr_nodes, __u32 timeout_s, __u32 slot,
		__u64 gen, char *msg, size_t len);
int rdl_barrier_done(int fd, __u32 nr_nodes, __u32 slot, __u64 *gen);

/* /dev/rdlock lock calls: 0 or the errno of the failed ioctl. */
int rdl_ioctl(int fd, unsigned long req, void *arg);
void rdl_lock_init(struct rdlock_lock_req *l, const char *name, __u32 mode,
		   __u32 flags, __u32 timeout_ms);
void rdl_convert_init(struct rdlock_convert_req *c, __u32 handle,
		      __u32 mode, __u32 flags, __u32 timeout_ms);
int rdl_ls_lock(int fd, const char *name, __u32 mode, __u32 flags,
		__u32 timeout_ms, __u32 *handle);
int rdl_ls_unlock(int fd, __u32 handle);
int rdl_ls_convert(int fd, __u32 handle, __u32 mode, __u32 flags,
		   __u32 timeout_ms);
int rdl_ls_query(int fd, __u32 handle, struct rdlock_query *q);
int rdl_ls_mode(int fd, __u32 handle);
/* Blocking events of a joined DLM lockspace (struct rdlock_event). */
int rdl_readable(int fd, int ms);
ssize_t rdl_read_events(int fd, void *ev, size_t len);
void rdl_ls_create_init(struct rdlock_ls_create *c, const char *name,
			__u32 proto, __u32 slots, __u32 flags, __u32 mode);
void rdl_ls_name_init(struct rdlock_ls_name *n, const char *name);
int rdl_ls_by_name(int fd, unsigned long req, const char *name);
/* The same on a file of /dev/rdlock of their own. */
int rdl_dev_ioctl(unsigned long req, void *arg);
int rdl_ls_remove(const char *name);
int rdl_ls_create_fresh(struct rdlock_ls_create *c);
int rdl_open_joined(const char *ls);

#endif /* _RDLOCK_RDLTEST_H */
