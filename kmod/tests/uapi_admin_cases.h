/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Field cases of the cluster ioctls' arguments (SET_CONFIG, ADD_PEER,
 * DEL_PEER, NODE_DOWN, SET_KEY, STATUS) and of the address SET_CONFIG and
 * ADD_PEER carry, shared by the KUnit suite (xport_kunit.c: the pure
 * checks of kmod/uapi_check.h, one checker per table) and the kselftest
 * (selftests/rdlock/uapi_test.c: the real ioctls), as uapi_cases.h does
 * for the lockspace and lock ioctls: a case (uapi_field_case.h) changes up
 * to three fields of its table's valid argument (uapi_valid_*) and gives
 * the errno the pure check returns, which a rejected ioctl returns too.
 *
 * Where the pure check accepts (@err 0) the ioctl goes on to the cluster:
 * the kselftest expects the errno of the state it runs each table in
 * (ENXIO for SET_KEY before SET_CONFIG, ENOENT for DEL_PEER of a node
 * never added, ENOTCONN for NODE_DOWN of a peer while down), or skips the
 * case where the call would act (SET_CONFIG, ADD_PEER, an address) or
 * only report (STATUS). So that every accepted DEL_PEER and NODE_DOWN
 * case meets that state, none of them moves to another node id than the
 * valid argument's, except NODE_DOWN's node 31, a peer in the kselftest.
 *
 * Nothing here uses KUnit or libc: the includer provides offsetof(),
 * memcpy(), bool, AF_INET and AF_INET6.
 */
#ifndef _RDLOCK_TESTS_UAPI_ADMIN_CASES_H
#define _RDLOCK_TESTS_UAPI_ADMIN_CASES_H

#include <linux/rdlock.h>
#include "uapi_field_case.h"

/* In the tables below, of the structure UAPI_T each one defines. */
#define F(field, v)	UAPI_POKE(UAPI_T, field, 4, v)
#define F8(field, v)	UAPI_POKE(UAPI_T, field, 1, v)
#define F16(field, v)	UAPI_POKE(UAPI_T, field, 2, v)
#define F64(field, v)	UAPI_POKE(UAPI_T, field, 8, v)

/* ---------------------------------------------------------------- */
/* Addresses (struct rdlock_addr, in SET_CONFIG and ADD_PEER)        */

/**
 * struct uapi_addr_case - an address and its verdict
 * @what: what is special about it.
 * @addr: the address.
 * @err: errno (positive) of the check; 0 if it accepts the address (to
 *	its port, or RDLOCK_DEFAULT_PORT for port 0).
 */
struct uapi_addr_case {
	const char *what;
	struct rdlock_addr addr;
	int err;
};

#define UAPI_V4(port, scope, a, b, c, d) \
	{ AF_INET, port, scope, { a, b, c, d } }
#define UAPI_V6(port, scope, ...) \
	{ AF_INET6, port, scope, { __VA_ARGS__ } }

static const struct uapi_addr_case uapi_addr_cases[] = {
	{ "v4 plain", UAPI_V4(7000, 0, 10, 77, 0, 1), 0 },
	{ "v4 default port", UAPI_V4(0, 0, 10, 77, 0, 2), 0 },
	{ "v4 max port", UAPI_V4(65535, 0, 192, 168, 1, 1), 0 },
	{ "v4 0.0.0.0", UAPI_V4(1, 0, 0, 0, 0, 0), EINVAL },
	{ "v4 0.1.2.3 (this network)", UAPI_V4(1, 0, 0, 1, 2, 3), EINVAL },
	{ "v4 224.0.0.1 (multicast)", UAPI_V4(1, 0, 224, 0, 0, 1), EINVAL },
	{ "v4 239.255.255.255 (multicast)",
	  UAPI_V4(1, 0, 239, 255, 255, 255), EINVAL },
	{ "v4 255.255.255.255 (broadcast)",
	  UAPI_V4(1, 0, 255, 255, 255, 255), EINVAL },
	{ "v4 with a scope_id", UAPI_V4(1, 3, 10, 0, 0, 1), EINVAL },
	{ "v4, addr[4] set", { AF_INET, 1, 0, { 10, 0, 0, 1, 1 } }, EINVAL },
	{ "v4, addr[15] set", { AF_INET, 1, 0, { 10, 0, 0, 1, [15] = 0x80 } },
	  EINVAL },
	{ "v6 plain", UAPI_V6(9, 0, 0xfd, [15] = 1), 0 },
	{ "v6 link-local with a scope", UAPI_V6(9, 2, 0xfe, 0x80, [15] = 1), 0 },
	{ "v6 ::", UAPI_V6(9, 0, 0), EINVAL },
	{ "v6 ff02::1 (multicast)", UAPI_V6(9, 0, 0xff, 0x02, [15] = 1),
	  EINVAL },
	{ "v6 ff0e::1234 (multicast)",
	  UAPI_V6(9, 0, 0xff, 0x0e, [14] = 0x12, 0x34), EINVAL },
	{ "v6 ff00:: (multicast)", UAPI_V6(9, 0, 0xff), EINVAL },
	{ "all zero", { 0 }, EAFNOSUPPORT },
	{ "family 0", { 0, 9, 0, { 10, 0, 0, 1 } }, EAFNOSUPPORT },
	{ "family 1 (unix)", { 1, 9, 0, { 10, 0, 0, 1 } }, EAFNOSUPPORT },
	{ "family 3", { 3, 9, 0, { 10, 0, 0, 1 } }, EAFNOSUPPORT },
	{ "family 11", { 11, 9, 0, { 10, 0, 0, 1 } }, EAFNOSUPPORT },
	{ "family 17", { 17, 9, 0, { 10, 0, 0, 1 } }, EAFNOSUPPORT },
	{ "family 0xffff", { 0xffff, 9, 0, { 10, 0, 0, 1 } }, EAFNOSUPPORT },
};

#undef UAPI_V4
#undef UAPI_V6

/* ---------------------------------------------------------------- */
/* SET_CONFIG                                                        */

static const struct rdlock_cluster_config uapi_valid_config = {
	.version = RDLOCK_UAPI_VERSION,
	.cluster_id = 7,
	.node_id = 5,
	.addr = { .family = AF_INET, .addr = { 10, 77, 100, 6 } },
};

static const struct uapi_case uapi_config_cases[] = {
#define UAPI_T struct rdlock_cluster_config
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "version ~0", { F(version, UAPI_U32_MAX) }, EINVAL },
	{ "flags 2", { F(flags, 2) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1] bit 63", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "name a", { F8(name[0], 'a') }, 0 },
	{ "name '.'", { F8(name[0], '.') }, 0 },
	{ "name of 16 characters, no NUL",
	  { F64(name[0], 0x4141414141414141ULL),
	    F64(name[8], 0x2d5f2e3930396162ULL) }, 0 },
	{ "name with a space", { F8(name[0], 'a'), F8(name[1], ' ') }, EINVAL },
	{ "name ':'", { F8(name[0], ':') }, EINVAL },
	{ "name '/'", { F8(name[0], '/') }, EINVAL },
	{ "name byte 0x80", { F8(name[0], 0x80) }, EINVAL },
	{ "name byte after its NUL", { F8(name[0], 'a'), F8(name[2], 'b') },
	  EINVAL },
	{ "name's last byte alone", { F8(name[15], 'z') }, EINVAL },
	{ "cluster_id 0", { F(cluster_id, 0) }, EINVAL },
	{ "cluster_id ~0", { F(cluster_id, UAPI_U32_MAX) }, 0 },
	{ "node_id 0", { F(node_id, 0) }, 0 },
	{ "node_id 31", { F(node_id, RDLOCK_MAX_NODES - 1) }, 0 },
	{ "node_id 32", { F(node_id, RDLOCK_MAX_NODES) }, EINVAL },
	{ "node_id ~0", { F(node_id, UAPI_U32_MAX) }, EINVAL },
	{ "address family 99", { F16(addr.family, 99) }, EAFNOSUPPORT },
	{ "bad version and address family",
	  { F(version, 0), F16(addr.family, 99) }, EINVAL },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* ADD_PEER and DEL_PEER                                             */

/* Node 14: the kselftest never adds it. */
static const struct rdlock_peer uapi_valid_peer = {
	.version = RDLOCK_UAPI_VERSION,
	.node_id = 14,
	.addr = { .family = AF_INET, .addr = { 10, 77, 100, 15 } },
};

/* ADD_PEER's address: any of uapi_addr_cases, or zeroed. */
static const struct uapi_case uapi_add_peer_cases[] = {
#define UAPI_T struct rdlock_peer
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "version ~0", { F(version, UAPI_U32_MAX) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1] bit 63", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "node_id 32", { F(node_id, RDLOCK_MAX_NODES) }, EINVAL },
	{ "node_id ~0", { F(node_id, UAPI_U32_MAX) }, EINVAL },
	{ "zeroed address",
	  { F16(addr.family, 0), F64(addr.addr[0], 0), F64(addr.addr[8], 0) },
	  EAFNOSUPPORT },
#undef UAPI_T
};

/* DEL_PEER only needs the id, but a zeroed or a valid address with it. */
static const struct uapi_case uapi_del_peer_cases[] = {
#define UAPI_T struct rdlock_peer
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1]", { F64(reserved[1], 1) }, EINVAL },
	{ "node_id 32", { F(node_id, RDLOCK_MAX_NODES) }, EINVAL },
	{ "zeroed address",
	  { F16(addr.family, 0), F64(addr.addr[0], 0), F64(addr.addr[8], 0) },
	  0 },
	{ "address family 0, the rest set", { F16(addr.family, 0) },
	  EAFNOSUPPORT },
	{ "address family 0 and node_id 32",
	  { F16(addr.family, 0), F(node_id, RDLOCK_MAX_NODES) }, EINVAL },
	{ "address family 99", { F16(addr.family, 99) }, EAFNOSUPPORT },
	{ "multicast address", { F8(addr.addr[0], 224) }, EINVAL },
	{ "IPv4 address with a scope", { F(addr.scope_id, 7) }, EINVAL },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* NODE_DOWN                                                         */

/* Node 9: a peer in the kselftest. */
static const struct rdlock_node_down uapi_valid_node_down = {
	.version = RDLOCK_UAPI_VERSION,
	.node_id = 9,
};

/* Whether the node is configured and not this one is the cluster's. */
static const struct uapi_case uapi_node_down_cases[] = {
#define UAPI_T struct rdlock_node_down
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1]", { F64(reserved[1], 1) }, EINVAL },
	{ "reserved[1] bit 63", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "node_id 31", { F(node_id, RDLOCK_MAX_NODES - 1) }, 0 },
	{ "node_id 32", { F(node_id, RDLOCK_MAX_NODES) }, EINVAL },
	{ "node_id ~0", { F(node_id, UAPI_U32_MAX) }, EINVAL },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* SET_KEY                                                           */

/* The shortest key, RDLOCK_KEY_MIN bytes of 0xa5. */
static const struct rdlock_cluster_key uapi_valid_key = {
	.version = RDLOCK_UAPI_VERSION,
	.len = RDLOCK_KEY_MIN,
	.key = { [0 ... RDLOCK_KEY_MIN - 1] = 0xa5 },
};

static const struct uapi_case uapi_key_cases[] = {
#define UAPI_T struct rdlock_cluster_key
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1] bit 63", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "len 15, its last key byte after it",
	  { F(len, RDLOCK_KEY_MIN - 1) }, EINVAL },
	{ "len 15", { F(len, RDLOCK_KEY_MIN - 1), F8(key[15], 0) }, EINVAL },
	{ "len 17", { F(len, RDLOCK_KEY_MIN + 1) }, 0 },
	{ "len 64", { F(len, RDLOCK_KEY_MAX), F8(key[63], 0xa5) }, 0 },
	{ "len 65", { F(len, RDLOCK_KEY_MAX + 1) }, EINVAL },
	{ "len ~0", { F(len, UAPI_U32_MAX) }, EINVAL },
	{ "a byte after len", { F8(key[16], 1) }, EINVAL },
	{ "the last byte after len", { F8(key[63], 1) }, EINVAL },
	{ "len 0, no key: clears it",
	  { F(len, 0), F64(key[0], 0), F64(key[8], 0) }, 0 },
	{ "len 0, key bytes left", { F(len, 0), F64(key[8], 0) }, EINVAL },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* STATUS                                                            */

static const struct rdlock_status uapi_valid_status = {
	.version = RDLOCK_UAPI_VERSION,
	.nr_nodes = RDLOCK_MAX_NODES,
};

static const struct uapi_case uapi_status_cases[] = {
#define UAPI_T struct rdlock_status
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "version ~0", { F(version, UAPI_U32_MAX) }, EINVAL },
	{ "membership 1 (output only)", { F(membership, 1) }, 0 },
	/* The name is only written: its pointer is not checked before. */
	{ "name set", { F64(name, 8) }, 0 },
	{ "nr_nodes 0", { F(nr_nodes, 0) }, 0 },
	{ "nr_nodes 33", { F(nr_nodes, RDLOCK_MAX_NODES + 1) }, EINVAL },
	{ "nr_nodes ~0", { F(nr_nodes, UAPI_U32_MAX) }, EINVAL },
	/* Output fields are ignored on input. */
	{ "output fields set",
	  { F(state, 9), F(backend, 9), F(cluster_id, UAPI_U32_MAX) }, 0 },
	{ "output flags set", { F(flags, UAPI_U32_MAX) }, 0 },
#undef UAPI_T
};

#undef F
#undef F8
#undef F16
#undef F64

#endif /* _RDLOCK_TESTS_UAPI_ADMIN_CASES_H */
