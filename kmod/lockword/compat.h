/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-width types for the lock-word headers. The headers are pure
 * arithmetic shared by the kernel module and by host-side tests, so they take
 * their types from <linux/types.h>: the kernel's own in the kernel, the
 * uapi one (__u8 ...) anywhere else.
 */
#ifndef _RDLOCK_LOCKWORD_COMPAT_H
#define _RDLOCK_LOCKWORD_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <linux/types.h>

/* The kernel's names for the uapi types, for host builds only. */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;
#endif

#endif /* _RDLOCK_LOCKWORD_COMPAT_H */
