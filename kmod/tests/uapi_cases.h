/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Field cases of the lockspace and lock ioctls' arguments, shared by the
 * KUnit suite (lockspace_kunit.c: the pure checks of kmod/uapi_check.h)
 * and the kselftest (selftests/rdlock/uapi_test.c: the real ioctls), so
 * that a case is written once. A case changes up to three fields of the
 * valid argument of its table (uapi_valid_*) and gives the errno the pure
 * check returns.
 *
 * The two runners differ in one way only, and each case says it: where
 * the pure check accepts (@err 0), the ioctl goes on to the state: the
 * kselftest expects the errno its call gets from the state while nothing
 * can change (ENOTCONN while down, EBADFD before JOIN, ENOENT for an
 * unknown lockspace), and skips the case where a well-formed call would
 * act (create a lockspace, take or convert a lock). A name case marked
 * @c_string is the kernel's (an unpadded C string): the uapi never passes
 * one, so only KUnit runs it.
 *
 * A runner may change what no case of a table looks at (a lockspace's
 * name, a lock's handle) to fit its call. Nothing here uses KUnit or libc:
 * the includer provides offsetof(), memcpy() and bool.
 */
#ifndef _RDLOCK_TESTS_UAPI_CASES_H
#define _RDLOCK_TESTS_UAPI_CASES_H

#include <linux/rdlock.h>
#include "uapi_field_case.h"

/* In the tables below, of the structure UAPI_T each one defines. */
#define F(field, v)	UAPI_POKE(UAPI_T, field, 4, v)
#define F8(field, v)	UAPI_POKE(UAPI_T, field, 1, v)
#define F16(field, v)	UAPI_POKE(UAPI_T, field, 2, v)
#define F64(field, v)	UAPI_POKE(UAPI_T, field, 8, v)

/* ---------------------------------------------------------------- */
/* LS_CREATE                                                         */

/* A bakery lockspace of one name: 2 slots, the fewest. */
static const struct rdlock_ls_create uapi_valid_ls_create = {
	.version = RDLOCK_UAPI_VERSION,
	.name = "uapi_rejected",
	.proto = RDLOCK_PROTO_BAKERY,
	.slots = 2,
	.mode = 0666,
};

static const struct uapi_case uapi_ls_create_cases[] = {
#define UAPI_T struct rdlock_ls_create
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "version ~0", { F(version, UAPI_U32_MAX) }, EINVAL },
	{ "flags UPDATE", { F(flags, RDLOCK_LS_UPDATE) }, 0 },
	{ "flags bit 1", { F(flags, 2) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "flags UPDATE and bit 1", { F(flags, RDLOCK_LS_UPDATE | 2) }, EINVAL },
	{ "name's last byte after the NUL", { F8(name[31], 'x') }, EINVAL },
	{ "proto CASLOCK", { F(proto, RDLOCK_PROTO_CASLOCK) }, 0 },
	{ "proto RDLOCK_PROTO_NR", { F(proto, RDLOCK_PROTO_NR) }, EINVAL },
	{ "proto ~0", { F(proto, UAPI_U32_MAX) }, EINVAL },
	{ "lease_ms 1", { F(lease_ms, 1) }, EINVAL },
	{ "lease_ms RDLOCK_LEASE_MS_MIN - 1",
	  { F(lease_ms, RDLOCK_LEASE_MS_MIN - 1) }, EINVAL },
	{ "lease_ms RDLOCK_LEASE_MS_MIN", { F(lease_ms, RDLOCK_LEASE_MS_MIN) },
	  0 },
	{ "omega_us 10", { F(omega_us, 10) }, 0 },
	{ "slots 0", { F(slots, 0) }, EINVAL },
	{ "slots 1", { F(slots, 1) }, EINVAL },
	{ "slots 2", { F(slots, 2) }, 0 },
	{ "slots 3 (odd)", { F(slots, 3) }, EINVAL },
	{ "slots 1023 (odd)", { F(slots, 1023) }, EINVAL },
	{ "slots 65535 (odd)", { F(slots, 65535) }, EINVAL },
	{ "slots RDLOCK_LS_SLOTS_MAX", { F(slots, RDLOCK_LS_SLOTS_MAX) }, 0 },
	{ "slots 65537", { F(slots, RDLOCK_LS_SLOTS_MAX + 1) }, EINVAL },
	{ "slots 65538 (even, too many)", { F(slots, RDLOCK_LS_SLOTS_MAX + 2) },
	  EINVAL },
	{ "slots 0xfffffffe", { F(slots, 0xfffffffeULL) }, EINVAL },
	{ "mode 0777", { F(mode, 0777) }, 0 },
	{ "mode 01000", { F(mode, 01000) }, EINVAL },
	{ "mode 04755", { F(mode, 04755) }, EINVAL },
	{ "mode ~0", { F(mode, UAPI_U32_MAX) }, EINVAL },
	{ "pad 1", { F16(pad, 1) }, EINVAL },
	/* CQL attributes on another protocol, or out of range. */
	{ "queue_bits 1, bakery", { F8(queue_bits, 1) }, EINVAL },
	{ "version_bits 16, bakery", { F8(version_bits, 16) }, EINVAL },
	{ "queue_bits 5, caslock",
	  { F(proto, RDLOCK_PROTO_CASLOCK), F8(queue_bits, 5) }, EINVAL },
	{ "cql, 2 slots (a lock takes 34)", { F(proto, RDLOCK_PROTO_CQL) },
	  EINVAL },
	{ "cql, 1024 slots", { F(proto, RDLOCK_PROTO_CQL), F(slots, 1024) }, 0 },
	{ "cql, queue_bits 13", { F(proto, RDLOCK_PROTO_CQL), F8(queue_bits, 13) },
	  EINVAL },
	{ "cql, queue_bits 255",
	  { F(proto, RDLOCK_PROTO_CQL), F8(queue_bits, 255) }, EINVAL },
	{ "cql, version_bits 1",
	  { F(proto, RDLOCK_PROTO_CQL), F8(version_bits, 1) }, EINVAL },
	{ "cql, version_bits 17",
	  { F(proto, RDLOCK_PROTO_CQL), F8(version_bits, 17) }, EINVAL },
	/* The hierarchy is CQL's; phase-fair is a policy of it. */
	{ "CQL_HIER, bakery", { F(flags, RDLOCK_LS_CQL_HIER) }, EINVAL },
	{ "CQL_HIER | CQL_PHASE_FAIR, caslock",
	  { F(proto, RDLOCK_PROTO_CASLOCK), F(flags, RDLOCK_LS_CQL_FLAGS) },
	  EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1]", { F64(reserved[1], 1ULL << 32) }, EINVAL },
	{ "reserved[2]", { F64(reserved[2], 1) }, EINVAL },
	{ "reserved[3]", { F64(reserved[3], 1ULL << 63) }, EINVAL },
	{ "bad slots and bad version", { F(slots, 3), F(version, 0) }, EINVAL },
#undef UAPI_T
};

/* A DLM lockspace: the DLM layer fixes its protocol and geometry. */
static const struct rdlock_ls_create uapi_valid_ls_create_dlm = {
	.version = RDLOCK_UAPI_VERSION,
	.flags = RDLOCK_LS_DLM,
	.name = "uapi_dlm",
	.mode = 0644,
};

static const struct uapi_case uapi_ls_create_dlm_cases[] = {
#define UAPI_T struct rdlock_ls_create
	{ "proto CASLOCK", { F(proto, RDLOCK_PROTO_CASLOCK) }, EINVAL },
	{ "slots 64", { F(slots, 64) }, EINVAL },
	{ "lease_ms 1000", { F(lease_ms, 1000) }, EINVAL },
	{ "omega_us 10", { F(omega_us, 10) }, EINVAL },
	{ "flags DLM | UPDATE", { F(flags, RDLOCK_LS_DLM | RDLOCK_LS_UPDATE) },
	  EINVAL },
	{ "flags DLM | bit 31", { F(flags, RDLOCK_LS_DLM | 1U << 31) }, EINVAL },
	{ "queue_bits 5", { F8(queue_bits, 5) }, EINVAL },
	{ "version_bits 16", { F8(version_bits, 16) }, EINVAL },
	{ "mode 0666", { F(mode, 0666) }, 0 },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* LS_REMOVE and JOIN                                                */

static const struct rdlock_ls_name uapi_valid_ls_name = {
	.version = RDLOCK_UAPI_VERSION,
	.name = "uapi_nosuch",
};

static const struct uapi_case uapi_ls_name_cases[] = {
#define UAPI_T struct rdlock_ls_name
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "flags 1", { F(flags, 1) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1] 1", { F64(reserved[1], 1) }, EINVAL },
	{ "reserved[1] bit 63", { F64(reserved[1], 1ULL << 63) }, EINVAL },
#undef UAPI_T
};

/**
 * struct uapi_name_case - a lockspace name and its verdict
 * @what: what is special about it.
 * @name: the name, RDLOCK_LS_NAME_MAX bytes as the uapi passes it.
 * @c_string: checked as a C string, as the kernel's users pass one
 *	(KUnit only); otherwise as the uapi's NUL-padded buffer.
 * @err: errno (positive) of the check; 0 if it accepts the name.
 */
struct uapi_name_case {
	const char *what;
	char name[RDLOCK_LS_NAME_MAX];
	bool c_string;
	int err;
};

/* Every call taking a lockspace name checks it so. */
static const struct uapi_name_case uapi_name_cases[] = {
	{ "plain", "gfs2", false, 0 },
	{ "all allowed characters", "Az09_.:-", false, 0 },
	{ "31 characters", "0123456789012345678901234567890", false, 0 },
	{ "empty name", "", false, EINVAL },
	{ "empty name, junk after the NUL", "\0abc", false, EINVAL },
	{ "byte after the NUL", "abc\0d", false, EINVAL },
	{ "byte after the NUL, C string", "abc\0d", true, 0 },
	{ "last byte after the NUL", { 'a', 'b', 'c', [31] = 'x' }, false,
	  EINVAL },
	{ "32 characters, no NUL", "0123456789abcdef0123456789abcdef", false,
	  EINVAL },
	{ "slash", "a/b", false, EINVAL },
	{ "space", "a b", false, EINVAL },
	{ "comma", "a,b", false, EINVAL },
	{ "asterisk", "a*", false, EINVAL },
	{ "tab", "a\tb", false, EINVAL },
	{ "newline", "ab\n", false, EINVAL },
	{ "non-ASCII", "caf\xc3\xa9", false, EINVAL },
	{ "DEL", "a\x7f", false, EINVAL },
	{ "byte 0xff (Latin-1 letter)", "\xff", false, EINVAL },
	{ "byte 0xe9 (Latin-1 letter)", "caf\xe9", false, EINVAL },
	{ "byte 0xc0 (Latin-1 letter)", "\xc0x", false, EINVAL },
};

/* ---------------------------------------------------------------- */
/* LOCK, CONVERT, UNLOCK, QUERY                                      */

static const struct rdlock_lock_req uapi_valid_lock = {
	.version = RDLOCK_UAPI_VERSION,
	.mode = RDLOCK_LOCK_EX,
	.name_len = 6,
	.name = "victim",
};

/* What depends on the lockspace (UP, NL, lease slots) is not here. */
static const struct uapi_case uapi_lock_cases[] = {
#define UAPI_T struct rdlock_lock_req
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "flags TRY", { F(flags, RDLOCK_LKF_TRY) }, 0 },
	{ "flags bit 1", { F(flags, 2) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "mode SH", { F(mode, RDLOCK_LOCK_SH) }, 0 },
	{ "mode UP", { F(mode, RDLOCK_LOCK_UP) }, 0 },
	{ "mode RDLOCK_LOCK_MODE_NR", { F(mode, RDLOCK_LOCK_MODE_NR) }, EINVAL },
	{ "mode ~0", { F(mode, UAPI_U32_MAX) }, EINVAL },
	{ "timeout_ms 1000", { F(timeout_ms, 1000) }, 0 },
	{ "TRY with timeout 1", { F(flags, RDLOCK_LKF_TRY), F(timeout_ms, 1) },
	  EINVAL },
	{ "lease_slots 256", { F(lease_slots, RDLOCK_LEASE_SLOTS_MAX) }, 0 },
	{ "lease_slots 257", { F(lease_slots, RDLOCK_LEASE_SLOTS_MAX + 1) },
	  EINVAL },
	{ "lease_slots ~0", { F(lease_slots, UAPI_U32_MAX) }, EINVAL },
	{ "name_len 0", { F(name_len, 0) }, EINVAL },
	{ "name_len 4, name bytes after it", { F(name_len, 4) }, EINVAL },
	{ "name_len 64", { F(name_len, RDLOCK_RES_NAME_MAX) }, 0 },
	{ "name_len 65", { F(name_len, RDLOCK_RES_NAME_MAX + 1) }, EINVAL },
	{ "name_len ~0", { F(name_len, UAPI_U32_MAX) }, EINVAL },
	{ "byte after name_len", { F8(name[6], 'x') }, EINVAL },
	{ "last name byte after name_len", { F8(name[63], 0xff) }, EINVAL },
	{ "handle 1 on input", { F(handle, 1) }, EINVAL },
	{ "handle ~0 on input", { F(handle, UAPI_U32_MAX) }, EINVAL },
	{ "pad 1", { F(pad, 1) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1]", { F64(reserved[1], 1ULL << 63) }, EINVAL },
#undef UAPI_T
};

static const struct rdlock_convert_req uapi_valid_convert = {
	.version = RDLOCK_UAPI_VERSION,
	.handle = 1,
	.mode = RDLOCK_LOCK_EX,
};

static const struct uapi_case uapi_convert_cases[] = {
#define UAPI_T struct rdlock_convert_req
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "flags TRY", { F(flags, RDLOCK_LKF_TRY) }, 0 },
	{ "flags bit 1", { F(flags, 2) }, EINVAL },
	{ "flags bit 2", { F(flags, 4) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "handle 77", { F(handle, 77) }, 0 },
	{ "mode UP", { F(mode, RDLOCK_LOCK_UP) }, 0 },
	{ "mode RDLOCK_LOCK_MODE_NR", { F(mode, RDLOCK_LOCK_MODE_NR) }, EINVAL },
	{ "mode ~0", { F(mode, UAPI_U32_MAX) }, EINVAL },
	{ "timeout_ms 5", { F(timeout_ms, 5) }, 0 },
	{ "TRY with timeout 1", { F(flags, RDLOCK_LKF_TRY), F(timeout_ms, 1) },
	  EINVAL },
	{ "pad 1", { F(pad, 1) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1]", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "bad version, unknown handle",
	  { F(version, 0), F(handle, UAPI_U32_MAX) }, EINVAL },
#undef UAPI_T
};

static const struct rdlock_unlock_req uapi_valid_unlock = {
	.version = RDLOCK_UAPI_VERSION,
	.handle = 1,
};

static const struct uapi_case uapi_unlock_cases[] = {
#define UAPI_T struct rdlock_unlock_req
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1] 1", { F64(reserved[1], 1) }, EINVAL },
	{ "reserved[1] bit 63", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "bad version, unknown handle",
	  { F(version, 0), F(handle, UAPI_U32_MAX) }, EINVAL },
#undef UAPI_T
};

static const struct rdlock_query uapi_valid_query = {
	.version = RDLOCK_UAPI_VERSION,
	.handle = 1,
};

static const struct uapi_case uapi_query_cases[] = {
#define UAPI_T struct rdlock_query
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	/* Output fields are ignored on input. */
	{ "output mode, name_len and pad set",
	  { F(mode, 9), F(name_len, 1000), F(pad, 1) }, 0 },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1]", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "bad version, unknown handle",
	  { F(version, 0), F(handle, UAPI_U32_MAX) }, EINVAL },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* LS_LIST                                                           */

/* No array: only the count. */
static const struct rdlock_ls_list uapi_valid_ls_list = {
	.version = RDLOCK_UAPI_VERSION,
};

static const struct uapi_case uapi_ls_list_cases[] = {
#define UAPI_T struct rdlock_ls_list
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "version ~0", { F(version, UAPI_U32_MAX) }, EINVAL },
	{ "flags bit 1", { F(flags, 2) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "pad 1", { F(pad, 1) }, EINVAL },
	{ "dlm_names without DLM_NAMES", { F64(dlm_names, 8) }, EINVAL },
	{ "reserved 1", { F64(reserved, 1) }, EINVAL },
	{ "reserved bit 63", { F64(reserved, 1ULL << 63) }, EINVAL },
	{ "DLM_NAMES with an unknown flag",
	  { F(flags, RDLOCK_LS_LIST_DLM_NAMES | 4) }, EINVAL },
	{ "count RDLOCK_LS_LIST_MAX + 1", { F(count, RDLOCK_LS_LIST_MAX + 1) },
	  EINVAL },
	{ "count ~0", { F(count, UAPI_U32_MAX) }, EINVAL },
	{ "bad version, count ~0 and no array",
	  { F(version, 0), F(count, UAPI_U32_MAX) }, EINVAL },
	/* The arrays are only written: their pointers are not checked before. */
	{ "entries set, count 0", { F64(entries, 8) }, 0 },
	{ "DLM_NAMES, count 0", { F(flags, RDLOCK_LS_LIST_DLM_NAMES) }, 0 },
	{ "DLM_NAMES, dlm_names set, count 0",
	  { F(flags, RDLOCK_LS_LIST_DLM_NAMES), F64(dlm_names, 8) }, 0 },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* STATS                                                             */

/* No array: only the count. */
static const struct rdlock_stats uapi_valid_stats = {
	.version = RDLOCK_UAPI_VERSION,
};

static const struct uapi_case uapi_stats_cases[] = {
#define UAPI_T struct rdlock_stats
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	{ "version ~0", { F(version, UAPI_U32_MAX) }, EINVAL },
	{ "flags bit 0", { F(flags, 1) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "pad 1", { F(pad, 1) }, EINVAL },
	{ "reserved[0]", { F64(reserved[0], 1) }, EINVAL },
	{ "reserved[1] bit 63", { F64(reserved[1], 1ULL << 63) }, EINVAL },
	{ "count RDLOCK_STATS_MAX", { F(count, RDLOCK_STATS_MAX) }, 0 },
	{ "count RDLOCK_STATS_MAX + 1", { F(count, RDLOCK_STATS_MAX + 1) },
	  EINVAL },
	{ "count ~0", { F(count, UAPI_U32_MAX) }, EINVAL },
	{ "bad version, count ~0 and no array",
	  { F(version, 0), F(count, UAPI_U32_MAX) }, EINVAL },
	/* The array is only written: its pointer is not checked before. */
	{ "entries set, count 0", { F64(entries, 8) }, 0 },
#undef UAPI_T
};

/* ---------------------------------------------------------------- */
/* LOCKS                                                             */

/* No array: only the count. */
static const struct rdlock_locks uapi_valid_locks = {
	.version = RDLOCK_UAPI_VERSION,
	.lockspace = "uapi_plain",	/* uapi_test.c's LS_PLAIN */
};

static const struct uapi_case uapi_locks_cases[] = {
#define UAPI_T struct rdlock_locks
	{ "version 0", { F(version, 0) }, EINVAL },
	{ "version 2", { F(version, 2) }, EINVAL },
	/* A plain lockspace's are this node's, with or without CLUSTER. */
	{ "flags CLUSTER", { F(flags, RDLOCK_LOCKS_QUERY_CLUSTER) }, 0 },
	{ "flags bit 1", { F(flags, 2) }, EINVAL },
	{ "flags bit 31", { F(flags, 1U << 31) }, EINVAL },
	{ "name_len 1, no name", { F(name_len, 1) }, EINVAL },
	{ "name set, name_len 0", { F64(name, 8) }, EINVAL },
	{ "name_len RDLOCK_RES_NAME_MAX + 1, name set",
	  { F(name_len, RDLOCK_RES_NAME_MAX + 1), F64(name, 8) }, EINVAL },
	{ "name_len ~0, name set",
	  { F(name_len, UAPI_U32_MAX), F64(name, 8) }, EINVAL },
	/* Only written. */
	{ "asked and answered set",
	  { F(asked, UAPI_U32_MAX), F(answered, 1) }, 0 },
	{ "count RDLOCK_LOCKS_MAX + 1", { F(count, RDLOCK_LOCKS_MAX + 1) },
	  EINVAL },
	{ "count ~0", { F(count, UAPI_U32_MAX) }, EINVAL },
	{ "empty lockspace name", { F8(lockspace[0], 0) }, EINVAL },
	{ "lockspace name with a slash", { F8(lockspace[4], '/') }, EINVAL },
	{ "lockspace name with a byte after its NUL",
	  { F8(lockspace[20], 'x') }, EINVAL },
	{ "lockspace name of 32 characters, no NUL",
	  { F64(lockspace[8], 0x7878787878787878ULL),
	    F64(lockspace[16], 0x7878787878787878ULL),
	    F64(lockspace[24], 0x7878787878787878ULL) }, EINVAL },
	{ "bad version, count ~0", { F(version, 0), F(count, UAPI_U32_MAX) },
	  EINVAL },
	/* The array is only written: its pointer is not checked before. */
	{ "entries set, count 0", { F64(entries, 8) }, 0 },
#undef UAPI_T
};

#undef F
#undef F8
#undef F16
#undef F64

#endif /* _RDLOCK_TESTS_UAPI_CASES_H */
