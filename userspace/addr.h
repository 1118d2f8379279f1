/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsing and printing of node addresses for rdlockctl. Kept apart from the
 * tool so that tests/addr_test.c can check every accepted and refused form
 * on the build host.
 */
#ifndef _RDLOCK_ADDR_H
#define _RDLOCK_ADDR_H

#include <stddef.h>
#include <linux/rdlock.h>

/* Longest output of rdlock_format_addr(), NUL included. */
#define RDLOCK_ADDR_STRLEN	80

/*
 * Accepted forms (the port defaults to 0, which the kernel maps to
 * RDLOCK_DEFAULT_PORT):
 *	192.0.2.1		192.0.2.1:18600
 *	2001:db8::1		[2001:db8::1]:18600
 *	fe80::1%eth0		[fe80::1%2]:18600
 * Only the syntax is checked here; the kernel decides which addresses a
 * node may have (no unspecified or multicast address), so that its errors
 * stay the single source of truth.
 *
 * Return: 0, or -EINVAL with *out untouched.
 */
int rdlock_parse_addr(const char *str, struct rdlock_addr *out);

/* "ID=ADDR" as given to rdlockctl config --peer. */
int rdlock_parse_peer(const char *str, __u32 *node_id, struct rdlock_addr *out);

/* A node id in decimal, below RDLOCK_MAX_NODES. */
int rdlock_parse_node_id(const char *str, __u32 *node_id);

/* Inverse of rdlock_parse_addr(); numeric scope, explicit port if set. */
int rdlock_format_addr(const struct rdlock_addr *addr, char *buf, size_t len);

#endif /* _RDLOCK_ADDR_H */
