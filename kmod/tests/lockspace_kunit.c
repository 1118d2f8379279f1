// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the lockspace and lock ioctls' validation (uapi_check.h):
 * each case takes a valid argument, changes one thing and expects one
 * errno. Table-driven, as lib/overflow_kunit.c.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/stddef.h>

#include "../uapi_check.h"
#include "../lockspace_layout.h"

static void rdlock_desc(const char *name, char *desc)
{
	strscpy(desc, name, KUNIT_PARAM_DESC_SIZE);
}

/* ---------------------------------------------------------------- */
/* Lockspace names                                                  */

struct rdlock_name_case {
	const char *desc;
	char name[RDLOCK_LS_NAME_MAX];
	bool padded;
	int expect;
};

static const struct rdlock_name_case rdlock_name_cases[] = {
	{ "plain", "gfs2", true, 0 },
	{ "all allowed characters", "Az09_.:-", true, 0 },
	{ "31 characters", "0123456789012345678901234567890", true, 0 },
	{ "32 characters, no NUL",
	  { '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '1', '2',
	    '3', '4', '5', '6', '7', '8', '9', '0', '1', '2', '3', '4', '5',
	    '6', '7', '8', '9', '0', '1' }, true, -EINVAL },
	{ "empty", "", true, -EINVAL },
	{ "slash", "a/b", true, -EINVAL },
	{ "space", "a b", true, -EINVAL },
	{ "non-ASCII", "caf\xc3\xa9", true, -EINVAL },
	{ "byte after the NUL", { 'a', 0, 'b' }, true, -EINVAL },
	{ "byte after the NUL, C string", { 'a', 0, 'b' }, false, 0 },
	{ "last byte after the NUL", { 'a', [31] = 'z' }, true, -EINVAL },
};

static void rdlock_name_case_desc(const struct rdlock_name_case *c,
				  char *desc)
{
	rdlock_desc(c->desc, desc);
}

KUNIT_ARRAY_PARAM(rdlock_name, rdlock_name_cases, rdlock_name_case_desc);

static void rdlock_ls_name_test(struct kunit *test)
{
	const struct rdlock_name_case *c = test->param_value;
	struct rdlock_ls_name n = { .version = RDLOCK_UAPI_VERSION };

	KUNIT_EXPECT_EQ(test, c->expect, rdlock_ls_check_name(c->name,
							      c->padded));
	if (!c->padded)
		return;
	/* The same rule through RDLOCK_IOC_JOIN's structure. */
	memcpy(n.name, c->name, sizeof(n.name));
	KUNIT_EXPECT_EQ(test, c->expect, rdlock_check_ls_name(&n));
}

/* ---------------------------------------------------------------- */
/* Structures: one change to a valid argument, one errno            */

/* Set the bytes of one field of a valid structure to @value. */
struct rdlock_poke {
	const char *desc;
	size_t offset;
	size_t size;
	u64 value;
	int expect;
};

/* Spelt out, not a macro: a macro would name the field twice. */

static void rdlock_poke(void *s, const struct rdlock_poke *p)
{
	u8 *f = (u8 *)s + p->offset;

	switch (p->size) {
	case 4:
		*(u32 *)f = p->value;
		break;
	case 8:
		*(u64 *)f = p->value;
		break;
	default:
		/* Arrays: the value goes into the last byte. */
		f[p->size - 1] = p->value;
	}
}

static void rdlock_poke_desc(const struct rdlock_poke *p, char *desc)
{
	rdlock_desc(p->desc, desc);
}

static const struct rdlock_ls_create rdlock_valid_create = {
	.version = RDLOCK_UAPI_VERSION,
	.name = "fs1",
	.proto = RDLOCK_PROTO_BAKERY,
	.slots = 1024,
	.mode = 0660,
};

static const struct rdlock_poke rdlock_create_cases[] = {
	{ "version = 0", offsetof(struct rdlock_ls_create, version),
	  sizeof_field(struct rdlock_ls_create, version), 0, -EINVAL },
	{ "version = 2", offsetof(struct rdlock_ls_create, version),
	  sizeof_field(struct rdlock_ls_create, version), 2, -EINVAL },
	{ "flags = RDLOCK_LS_UPDATE", offsetof(struct rdlock_ls_create, flags),
	  sizeof_field(struct rdlock_ls_create, flags), RDLOCK_LS_UPDATE, 0 },
	{ "flags = 2", offsetof(struct rdlock_ls_create, flags),
	  sizeof_field(struct rdlock_ls_create, flags), 2, -EINVAL },
	{ "flags = 0x80000000", offsetof(struct rdlock_ls_create, flags),
	  sizeof_field(struct rdlock_ls_create, flags), 0x80000000, -EINVAL },
	{ "name = 'x'", offsetof(struct rdlock_ls_create, name),
	  sizeof_field(struct rdlock_ls_create, name), 'x', -EINVAL },
	{ "proto = RDLOCK_PROTO_CASLOCK", offsetof(struct rdlock_ls_create, proto),
	  sizeof_field(struct rdlock_ls_create, proto), RDLOCK_PROTO_CASLOCK, 0 },
	{ "proto = RDLOCK_PROTO_NR", offsetof(struct rdlock_ls_create, proto),
	  sizeof_field(struct rdlock_ls_create, proto), RDLOCK_PROTO_NR, -EINVAL },
	{ "lease_ms = 1", offsetof(struct rdlock_ls_create, lease_ms),
	  sizeof_field(struct rdlock_ls_create, lease_ms), 1, -EINVAL },
	{ "lease_ms = RDLOCK_LEASE_MS_MIN - 1",
	  offsetof(struct rdlock_ls_create, lease_ms),
	  sizeof_field(struct rdlock_ls_create, lease_ms),
	  RDLOCK_LEASE_MS_MIN - 1, -EINVAL },
	{ "lease_ms = RDLOCK_LEASE_MS_MIN",
	  offsetof(struct rdlock_ls_create, lease_ms),
	  sizeof_field(struct rdlock_ls_create, lease_ms), RDLOCK_LEASE_MS_MIN,
	  0 },
	{ "omega_us = 10", offsetof(struct rdlock_ls_create, omega_us),
	  sizeof_field(struct rdlock_ls_create, omega_us), 10, 0 },
	{ "slots = 0", offsetof(struct rdlock_ls_create, slots),
	  sizeof_field(struct rdlock_ls_create, slots), 0, -EINVAL },
	{ "slots = 1", offsetof(struct rdlock_ls_create, slots),
	  sizeof_field(struct rdlock_ls_create, slots), 1, -EINVAL },
	{ "slots = 2", offsetof(struct rdlock_ls_create, slots),
	  sizeof_field(struct rdlock_ls_create, slots), 2, 0 },
	{ "slots = 1023", offsetof(struct rdlock_ls_create, slots),
	  sizeof_field(struct rdlock_ls_create, slots), 1023, -EINVAL },
	{ "slots = RDLOCK_LS_SLOTS_MAX", offsetof(struct rdlock_ls_create, slots),
	  sizeof_field(struct rdlock_ls_create, slots), RDLOCK_LS_SLOTS_MAX, 0 },
	{ "slots = RDLOCK_LS_SLOTS_MAX + 2", offsetof(struct rdlock_ls_create, slots),
	  sizeof_field(struct rdlock_ls_create, slots), RDLOCK_LS_SLOTS_MAX + 2, -EINVAL },
	{ "mode = 0777", offsetof(struct rdlock_ls_create, mode),
	  sizeof_field(struct rdlock_ls_create, mode), 0777, 0 },
	{ "mode = 01000", offsetof(struct rdlock_ls_create, mode),
	  sizeof_field(struct rdlock_ls_create, mode), 01000, -EINVAL },
	{ "pad = 1", offsetof(struct rdlock_ls_create, pad),
	  sizeof_field(struct rdlock_ls_create, pad), 1, -EINVAL },
	{ "queue_bits = 1 (bakery)", offsetof(struct rdlock_ls_create, queue_bits),
	  sizeof_field(struct rdlock_ls_create, queue_bits), 1, -EINVAL },
	{ "version_bits = 16 (bakery)",
	  offsetof(struct rdlock_ls_create, version_bits),
	  sizeof_field(struct rdlock_ls_create, version_bits), 16, -EINVAL },
	{ "proto = RDLOCK_PROTO_CQL", offsetof(struct rdlock_ls_create, proto),
	  sizeof_field(struct rdlock_ls_create, proto), RDLOCK_PROTO_CQL, 0 },
	{ "reserved = 1", offsetof(struct rdlock_ls_create, reserved),
	  sizeof_field(struct rdlock_ls_create, reserved), 1, -EINVAL },
};

KUNIT_ARRAY_PARAM(rdlock_create, rdlock_create_cases, rdlock_poke_desc);

static void rdlock_ls_create_test(struct kunit *test)
{
	const struct rdlock_poke *p = test->param_value;
	struct rdlock_ls_create c = rdlock_valid_create;
	struct rdlock_ls_attr attr;

	KUNIT_ASSERT_EQ(test, 0, rdlock_check_ls_create(&c, &attr));
	rdlock_poke(&c, p);
	KUNIT_EXPECT_EQ(test, p->expect, rdlock_check_ls_create(&c, &attr));
	if (!p->expect) {
		KUNIT_EXPECT_EQ(test, c.proto, attr.proto);
		KUNIT_EXPECT_EQ(test, c.flags, attr.flags);
		KUNIT_EXPECT_EQ(test, c.lease_ms, attr.lease_ms);
		KUNIT_EXPECT_EQ(test, c.omega_us, attr.omega_us);
		KUNIT_EXPECT_EQ(test, c.slots, attr.slots);
	}
}

/*
 * Kernel-only entry parts: the gate word after the lock word, the value
 * block at the end; the uapi's checks refuse both flags, and the lock
 * flags that use them.
 */
static void rdlock_ls_gate_attr_test(struct kunit *test)
{
	struct rdlock_ls_attr a = {
		.proto = RDLOCK_PROTO_CASLOCK, .slots = 16384,
		.flags = RDLOCK_LS_LVB | RDLOCK_LS_GATE,
	};

	KUNIT_EXPECT_EQ(test, rdlock_ls_entry_slots(&a), 3U + RDLOCK_LS_LVB_SLOTS);
	a.flags = RDLOCK_LS_GATE;
	KUNIT_EXPECT_EQ(test, rdlock_ls_entry_slots(&a), 3U);
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.flags = RDLOCK_LS_LVB;
	KUNIT_EXPECT_EQ(test, rdlock_ls_entry_slots(&a), 2U + RDLOCK_LS_LVB_SLOTS);
	KUNIT_EXPECT_FALSE(test, rdlock_lock_flags_ok(RDLOCK_LKF_GATE, 0));
	KUNIT_EXPECT_FALSE(test, rdlock_lock_flags_ok(RDLOCK_LKF_LVB, 0));
}

/*
 * Placement: every (home, placer, entry) has its own placed entry, whole,
 * in the placer's region after its own entries and inside the region.
 */
/* A region of 5 entries per area, 12 slots each, at slot 1225. */
#define PLACE_BASE	1225U
#define PLACE_ES	12U
#define PLACE_ENTRIES	5U

static void rdlock_ls_place_slot_check(struct kunit *test,
				       unsigned long *seen, u32 n, u32 h,
				       u32 p, u32 i)
{
	u32 t = rdlock_ls_placed_tslot(PLACE_BASE, PLACE_ES, PLACE_ENTRIES, h,
				       p, PLACE_BASE + PLACE_ES * i);
	u32 k = (t - PLACE_BASE) / PLACE_ES;

	KUNIT_ASSERT_EQ(test, (t - PLACE_BASE) % PLACE_ES, 0U);
	/* Not an entry, inside the region, nobody else's. */
	KUNIT_EXPECT_GE(test, k, PLACE_ENTRIES);
	KUNIT_ASSERT_LT(test, k, n * PLACE_ENTRIES);
	KUNIT_EXPECT_FALSE_MSG(test, test_bit(k, seen),
			       "n %u placer %u home %u entry %u", n, p, h, i);
	__set_bit(k, seen);
}

static void rdlock_ls_place_layout_test(struct kunit *test)
{
	const u32 entries = PLACE_ENTRIES;
	unsigned long *seen;
	u32 n, h, p, i;

	seen = kunit_kzalloc(test, BITS_TO_LONGS(6 * entries) * sizeof(long),
			     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (n = 2; n <= 6; n++) {
		for (p = 0; p < n; p++) {
			bitmap_zero(seen, n * entries);
			for (h = 0; h < n; h++)
				for (i = 0; h != p && i < entries; i++)
					rdlock_ls_place_slot_check(test, seen,
								   n, h, p, i);
			/* Every placed entry of the region is someone's. */
			KUNIT_EXPECT_EQ(test, bitmap_weight(seen, n * entries),
					(n - 1) * entries);
		}
	}
}

/* CQL's attributes: ranges, defaults, slots per name, other protocols. */
static void rdlock_ls_cql_attr_test(struct kunit *test)
{
	struct rdlock_ls_attr a = {
		.proto = RDLOCK_PROTO_CQL, .slots = 34,
	};

	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), 0);
	KUNIT_EXPECT_EQ(test, rdlock_ls_entry_slots(&a), 34U);
	KUNIT_EXPECT_EQ(test, rdlock_ls_cql_queue_bits(&a), 5U);
	KUNIT_EXPECT_EQ(test, rdlock_ls_cql_version_bits(&a), 16U);
	a.slots = 32;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.queue_bits = 1;
	a.version_bits = 2;
	a.slots = 4;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), 0);
	KUNIT_EXPECT_EQ(test, rdlock_ls_entry_slots(&a), 4U);
	a.slots = 2;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.slots = RDLOCK_LS_SLOTS_MAX;
	a.queue_bits = 12;
	a.version_bits = 16;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), 0);
	KUNIT_EXPECT_EQ(test, rdlock_ls_entry_slots(&a), 4098U);
	a.queue_bits = 13;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.queue_bits = 0;
	a.version_bits = 1;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.version_bits = 17;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.version_bits = 0;
	a.lease_ms = RDLOCK_LEASE_MS_MIN;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.lease_ms = 0;
	a.flags = RDLOCK_LS_UPDATE;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	/* Hierarchical, task-fair or phase-fair; phase-fair needs it. */
	a.flags = RDLOCK_LS_CQL_HIER;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), 0);
	a.flags = RDLOCK_LS_CQL_HIER | RDLOCK_LS_CQL_PHASE_FAIR;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), 0);
	a.flags = RDLOCK_LS_CQL_PHASE_FAIR;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.flags = 0;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), 0);
	a.proto = RDLOCK_PROTO_BAKERY;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), 0);
	a.flags = RDLOCK_LS_CQL_HIER;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.flags = 0;
	KUNIT_EXPECT_EQ(test, rdlock_ls_entry_slots(&a), 2U);
	a.version_bits = 16;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
	a.version_bits = 0;
	a.queue_bits = 5;
	a.proto = RDLOCK_PROTO_CASLOCK;
	KUNIT_EXPECT_EQ(test, rdlock_ls_check_attr(&a), -EINVAL);
}

static const struct rdlock_lock_req rdlock_valid_lock = {
	.version = RDLOCK_UAPI_VERSION,
	.mode = RDLOCK_LOCK_EX,
	.name_len = 5,
	.name = "inode",
};

static const struct rdlock_poke rdlock_lock_cases[] = {
	{ "version = 0", offsetof(struct rdlock_lock_req, version),
	  sizeof_field(struct rdlock_lock_req, version), 0, -EINVAL },
	{ "flags = RDLOCK_LKF_TRY", offsetof(struct rdlock_lock_req, flags),
	  sizeof_field(struct rdlock_lock_req, flags), RDLOCK_LKF_TRY, 0 },
	{ "flags = 2", offsetof(struct rdlock_lock_req, flags),
	  sizeof_field(struct rdlock_lock_req, flags), 2, -EINVAL },
	{ "mode = RDLOCK_LOCK_SH", offsetof(struct rdlock_lock_req, mode),
	  sizeof_field(struct rdlock_lock_req, mode), RDLOCK_LOCK_SH, 0 },
	{ "mode = RDLOCK_LOCK_UP", offsetof(struct rdlock_lock_req, mode),
	  sizeof_field(struct rdlock_lock_req, mode), RDLOCK_LOCK_UP, 0 },
	{ "mode = RDLOCK_LOCK_MODE_NR", offsetof(struct rdlock_lock_req, mode),
	  sizeof_field(struct rdlock_lock_req, mode), RDLOCK_LOCK_MODE_NR, -EINVAL },
	{ "timeout_ms = 1000", offsetof(struct rdlock_lock_req, timeout_ms),
	  sizeof_field(struct rdlock_lock_req, timeout_ms), 1000, 0 },
	{ "lease_slots = RDLOCK_LEASE_SLOTS_MAX", offsetof(struct rdlock_lock_req, lease_slots),
	  sizeof_field(struct rdlock_lock_req, lease_slots), RDLOCK_LEASE_SLOTS_MAX, 0 },
	{ "lease_slots = RDLOCK_LEASE_SLOTS_MAX + 1", offsetof(struct rdlock_lock_req, lease_slots),
	  sizeof_field(struct rdlock_lock_req, lease_slots), RDLOCK_LEASE_SLOTS_MAX + 1, -EINVAL },
	{ "name_len = 0", offsetof(struct rdlock_lock_req, name_len),
	  sizeof_field(struct rdlock_lock_req, name_len), 0, -EINVAL },
	{ "name_len = 4", offsetof(struct rdlock_lock_req, name_len),
	  sizeof_field(struct rdlock_lock_req, name_len), 4, -EINVAL },	/* 'e' after */
	{ "name_len = RDLOCK_RES_NAME_MAX", offsetof(struct rdlock_lock_req, name_len),
	  sizeof_field(struct rdlock_lock_req, name_len), RDLOCK_RES_NAME_MAX, 0 },
	{ "name_len = RDLOCK_RES_NAME_MAX + 1", offsetof(struct rdlock_lock_req, name_len),
	  sizeof_field(struct rdlock_lock_req, name_len), RDLOCK_RES_NAME_MAX + 1, -EINVAL },
	{ "name = 1", offsetof(struct rdlock_lock_req, name),
	  sizeof_field(struct rdlock_lock_req, name), 1, -EINVAL },	/* past name_len */
	{ "handle = 1", offsetof(struct rdlock_lock_req, handle),
	  sizeof_field(struct rdlock_lock_req, handle), 1, -EINVAL },
	{ "pad = 1", offsetof(struct rdlock_lock_req, pad),
	  sizeof_field(struct rdlock_lock_req, pad), 1, -EINVAL },
	{ "reserved = 1", offsetof(struct rdlock_lock_req, reserved),
	  sizeof_field(struct rdlock_lock_req, reserved), 1, -EINVAL },
};

KUNIT_ARRAY_PARAM(rdlock_lock, rdlock_lock_cases, rdlock_poke_desc);

static void rdlock_lock_req_test(struct kunit *test)
{
	const struct rdlock_poke *p = test->param_value;
	struct rdlock_lock_req r = rdlock_valid_lock;

	KUNIT_ASSERT_EQ(test, 0, rdlock_check_lock_req(&r));
	rdlock_poke(&r, p);
	KUNIT_EXPECT_EQ(test, p->expect, rdlock_check_lock_req(&r));
}

/* Flags and timeout together: one case each way. */
static void rdlock_lock_try_timeout_test(struct kunit *test)
{
	struct rdlock_lock_req r = rdlock_valid_lock;
	struct rdlock_convert_req c = { .version = RDLOCK_UAPI_VERSION,
					.mode = RDLOCK_LOCK_EX };

	r.flags = RDLOCK_LKF_TRY;
	r.timeout_ms = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_lock_req(&r));
	KUNIT_EXPECT_EQ(test, 0, rdlock_check_convert(&c));
	c.flags = RDLOCK_LKF_TRY;
	c.timeout_ms = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_convert(&c));
}

static const struct rdlock_poke rdlock_convert_cases[] = {
	{ "version = 0", offsetof(struct rdlock_convert_req, version),
	  sizeof_field(struct rdlock_convert_req, version), 0, -EINVAL },
	{ "flags = RDLOCK_LKF_TRY", offsetof(struct rdlock_convert_req, flags),
	  sizeof_field(struct rdlock_convert_req, flags), RDLOCK_LKF_TRY, 0 },
	{ "flags = 4", offsetof(struct rdlock_convert_req, flags),
	  sizeof_field(struct rdlock_convert_req, flags), 4, -EINVAL },
	{ "handle = 77", offsetof(struct rdlock_convert_req, handle),
	  sizeof_field(struct rdlock_convert_req, handle), 77, 0 },
	{ "mode = RDLOCK_LOCK_UP", offsetof(struct rdlock_convert_req, mode),
	  sizeof_field(struct rdlock_convert_req, mode), RDLOCK_LOCK_UP, 0 },
	{ "mode = RDLOCK_LOCK_MODE_NR", offsetof(struct rdlock_convert_req, mode),
	  sizeof_field(struct rdlock_convert_req, mode), RDLOCK_LOCK_MODE_NR, -EINVAL },
	{ "timeout_ms = 5", offsetof(struct rdlock_convert_req, timeout_ms),
	  sizeof_field(struct rdlock_convert_req, timeout_ms), 5, 0 },
	{ "pad = 1", offsetof(struct rdlock_convert_req, pad),
	  sizeof_field(struct rdlock_convert_req, pad), 1, -EINVAL },
	{ "reserved = 1", offsetof(struct rdlock_convert_req, reserved),
	  sizeof_field(struct rdlock_convert_req, reserved), 1, -EINVAL },
};

KUNIT_ARRAY_PARAM(rdlock_convert, rdlock_convert_cases, rdlock_poke_desc);

static void rdlock_convert_req_test(struct kunit *test)
{
	const struct rdlock_poke *p = test->param_value;
	struct rdlock_convert_req c = { .version = RDLOCK_UAPI_VERSION,
					.mode = RDLOCK_LOCK_EX };

	rdlock_poke(&c, p);
	KUNIT_EXPECT_EQ(test, p->expect, rdlock_check_convert(&c));
}

static void rdlock_unlock_query_test(struct kunit *test)
{
	struct rdlock_unlock_req u = { .version = RDLOCK_UAPI_VERSION,
				       .handle = 3 };
	struct rdlock_query q = { .version = RDLOCK_UAPI_VERSION,
				  .handle = 3 };

	KUNIT_EXPECT_EQ(test, 0, rdlock_check_unlock(&u));
	u.reserved[1] = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_unlock(&u));
	u.reserved[1] = 0;
	u.version = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_unlock(&u));

	/* Output fields are ignored on input. */
	q.mode = 9;
	q.name_len = 1000;
	q.pad = 1;
	KUNIT_EXPECT_EQ(test, 0, rdlock_check_query(&q));
	q.reserved[0] = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_query(&q));
	q.reserved[0] = 0;
	q.version = 2;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_query(&q));
}

static void rdlock_ls_name_struct_test(struct kunit *test)
{
	struct rdlock_ls_name n = { .version = RDLOCK_UAPI_VERSION,
				    .name = "fs1" };

	KUNIT_EXPECT_EQ(test, 0, rdlock_check_ls_name(&n));
	n.flags = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_ls_name(&n));
	n.flags = 0;
	n.reserved[1] = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_ls_name(&n));
	n.reserved[1] = 0;
	n.version = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, rdlock_check_ls_name(&n));
}

static struct kunit_case rdlock_lockspace_cases[] = {
	KUNIT_CASE_PARAM(rdlock_ls_name_test, rdlock_name_gen_params),
	KUNIT_CASE(rdlock_ls_name_struct_test),
	KUNIT_CASE_PARAM(rdlock_ls_create_test, rdlock_create_gen_params),
	KUNIT_CASE(rdlock_ls_cql_attr_test),
	KUNIT_CASE(rdlock_ls_gate_attr_test),
	KUNIT_CASE(rdlock_ls_place_layout_test),
	KUNIT_CASE_PARAM(rdlock_lock_req_test, rdlock_lock_gen_params),
	KUNIT_CASE(rdlock_lock_try_timeout_test),
	KUNIT_CASE_PARAM(rdlock_convert_req_test, rdlock_convert_gen_params),
	KUNIT_CASE(rdlock_unlock_query_test),
	{}
};

static struct kunit_suite rdlock_lockspace_suite = {
	.name = "rdlock_lockspace_uapi",
	.test_cases = rdlock_lockspace_cases,
};

kunit_test_suite(rdlock_lockspace_suite);

MODULE_DESCRIPTION("KUnit tests of rdlock's lockspace and lock ioctl checks");
MODULE_LICENSE("GPL");
