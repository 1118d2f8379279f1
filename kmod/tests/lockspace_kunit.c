// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the lockspace and lock ioctls' validation (uapi_check.h):
 * each case takes a valid argument, changes one thing and expects one
 * errno. Table-driven, as lib/overflow_kunit.c; the tables are in
 * uapi_cases.h, which the kselftest runs through the real ioctls.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/stddef.h>

#include "../uapi_check.h"
#include "../lockspace_errors.h"
#include "../lockspace_down.h"
#include "../lockspace_layout.h"
#include "uapi_cases.h"

static void rdlock_desc(const char *name, char *desc)
{
	strscpy(desc, name, KUNIT_PARAM_DESC_SIZE);
}

/* ---------------------------------------------------------------- */
/* Lockspace names (uapi_cases.h)                                   */

static void rdlock_name_case_desc(const struct uapi_name_case *c,
				  char *desc)
{
	rdlock_desc(c->what, desc);
}

KUNIT_ARRAY_PARAM(rdlock_name, uapi_name_cases, rdlock_name_case_desc);

static void rdlock_ls_name_test(struct kunit *test)
{
	const struct uapi_name_case *c = test->param_value;
	struct rdlock_ls_name n = uapi_valid_ls_name;

	KUNIT_EXPECT_EQ(test, -c->err, rdlock_ls_check_name(c->name,
							    !c->c_string));
	if (c->c_string)
		return;
	/* The same rule through RDLOCK_IOC_JOIN's structure. */
	memcpy(n.name, c->name, sizeof(n.name));
	KUNIT_EXPECT_EQ(test, -c->err, rdlock_check_ls_name(&n));
}

/* ---------------------------------------------------------------- */
/* Structures: a change to a valid argument, one errno (uapi_cases.h) */

/* The cases of one ioctl's argument and its valid value. */
struct rdlock_case_table {
	const char *call;
	unsigned int cmd;
	const void *valid;
	size_t size;
	const struct uapi_case *cases;
	size_t n;
};

/* uapi_valid_@name and uapi_@name_cases. */
#define RDLOCK_CASES(call, cmd, name) \
	{ call, cmd, &uapi_valid_##name, sizeof(uapi_valid_##name), \
	  uapi_##name##_cases, ARRAY_SIZE(uapi_##name##_cases) }

static const struct rdlock_case_table rdlock_case_tables[] = {
	RDLOCK_CASES("LS_CREATE", RDLOCK_IOC_LS_CREATE, ls_create),
	RDLOCK_CASES("LS_CREATE DLM", RDLOCK_IOC_LS_CREATE, ls_create_dlm),
	RDLOCK_CASES("JOIN", RDLOCK_IOC_JOIN, ls_name),
	RDLOCK_CASES("LOCK", RDLOCK_IOC_LOCK, lock),
	RDLOCK_CASES("CONVERT", RDLOCK_IOC_CONVERT, convert),
	RDLOCK_CASES("UNLOCK", RDLOCK_IOC_UNLOCK, unlock),
	RDLOCK_CASES("QUERY", RDLOCK_IOC_QUERY, query),
	RDLOCK_CASES("LS_LIST", RDLOCK_IOC_LS_LIST, ls_list),
	RDLOCK_CASES("STATS", RDLOCK_IOC_STATS, stats),
	RDLOCK_CASES("LOCKS", RDLOCK_IOC_LOCKS, locks),
};

/* The table @c is a case of. */
static const struct rdlock_case_table *
rdlock_case_table_of(const struct uapi_case *c)
{
	const struct rdlock_case_table *t;

	for (t = rdlock_case_tables; t < rdlock_case_tables +
	     ARRAY_SIZE(rdlock_case_tables); t++)
		if (c >= t->cases && c < t->cases + t->n)
			return t;
	return NULL;
}

/* Every case of every table, in order. */
static const void *rdlock_case_gen_params(const void *prev, char *desc)
{
	const struct rdlock_case_table *t = rdlock_case_tables;
	const struct uapi_case *c = prev;

	if (c) {
		t = rdlock_case_table_of(c);
		if (++c == t->cases + t->n) {
			if (++t == rdlock_case_tables +
			    ARRAY_SIZE(rdlock_case_tables))
				return NULL;
			c = t->cases;
		}
	} else {
		c = t->cases;
	}
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s %s", t->call, c->what);
	return c;
}

/* The pure check of @cmd's argument @arg; @attr as LS_CREATE fills it. */
static int rdlock_case_check(unsigned int cmd, const void *arg,
			     struct rdlock_ls_attr *attr)
{
	switch (cmd) {
	case RDLOCK_IOC_LS_CREATE:
		return rdlock_check_ls_create(arg, attr);
	case RDLOCK_IOC_JOIN:
		return rdlock_check_ls_name(arg);
	case RDLOCK_IOC_LOCK:
		return rdlock_check_lock_req(arg);
	case RDLOCK_IOC_CONVERT:
		return rdlock_check_convert(arg);
	case RDLOCK_IOC_UNLOCK:
		return rdlock_check_unlock(arg);
	case RDLOCK_IOC_LS_LIST:
		return rdlock_check_ls_list(arg);
	case RDLOCK_IOC_STATS:
		return rdlock_check_stats(arg);
	case RDLOCK_IOC_LOCKS:
		return rdlock_check_locks(arg);
	default:
		return rdlock_check_query(arg);
	}
}

/* The valid argument is accepted; with the case's change, its errno. */
static void rdlock_uapi_case_test(struct kunit *test)
{
	const struct uapi_case *c = test->param_value;
	const struct rdlock_case_table *t = rdlock_case_table_of(c);
	struct rdlock_ls_attr attr = {};
	const struct rdlock_ls_create *lc;
	u64 arg[16];

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_LE(test, t->size, sizeof(arg));
	memcpy(arg, t->valid, t->size);
	KUNIT_ASSERT_EQ(test, 0, rdlock_case_check(t->cmd, arg, &attr));
	uapi_case_apply(arg, c);
	KUNIT_EXPECT_EQ(test, -c->err, rdlock_case_check(t->cmd, arg, &attr));
	/* An accepted lockspace's attributes are the argument's. */
	lc = (const void *)arg;
	if (t->cmd != RDLOCK_IOC_LS_CREATE || c->err ||
	    lc->flags & RDLOCK_LS_DLM)
		return;
	KUNIT_EXPECT_EQ(test, lc->proto, attr.proto);
	KUNIT_EXPECT_EQ(test, lc->flags, attr.flags);
	KUNIT_EXPECT_EQ(test, lc->lease_ms, attr.lease_ms);
	KUNIT_EXPECT_EQ(test, lc->omega_us, attr.omega_us);
	KUNIT_EXPECT_EQ(test, lc->slots, attr.slots);
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

/* rdlock_ls_open()'s attributes with kernel-only flags: one errno each. */
struct rdlock_kattr_case {
	const char *what;
	struct rdlock_ls_attr attr;
	int err;
};

#define KATTR(w, p, f, s, e) \
	{ w, { .proto = RDLOCK_PROTO_##p, .flags = (f), .slots = (s) }, e }

static const struct rdlock_kattr_case rdlock_kattr_cases[] = {
	KATTR("CAS", CASLOCK, 0, 16384, 0),
	KATTR("CAS UPDATE", CASLOCK, RDLOCK_LS_UPDATE, 16384, 0),
	KATTR("CAS LVB GATE", CASLOCK, RDLOCK_LS_LVB | RDLOCK_LS_GATE,
	      16384, 0),
	KATTR("CAS LVB, one entry short", CASLOCK, RDLOCK_LS_LVB,
	      4, -EINVAL),
	KATTR("CAS PLACE", CASLOCK, RDLOCK_LS_PLACE, 16384, 0),
	KATTR("CAS PLACE, area of max slots", CASLOCK, RDLOCK_LS_PLACE,
	      RDLOCK_LS_PLACE_SLOTS_MAX, 0),
	KATTR("CAS PLACE, over max", CASLOCK, RDLOCK_LS_PLACE,
	      RDLOCK_LS_PLACE_SLOTS_MAX + 2, -EINVAL),
	KATTR("CAS PLACE, an entry per node short", CASLOCK, RDLOCK_LS_PLACE,
	      2 * RDLOCK_MAX_NODES - 2, -EINVAL),
	/* An upgrade in a placed word would hold up a node's declaration. */
	KATTR("CAS PLACE UPDATE", CASLOCK, RDLOCK_LS_PLACE | RDLOCK_LS_UPDATE,
	      16384, -EINVAL),
	KATTR("bakery PLACE UPDATE", BAKERY,
	      RDLOCK_LS_PLACE | RDLOCK_LS_UPDATE, 16384, -EINVAL),
	KATTR("bakery PLACE LVB GATE", BAKERY,
	      RDLOCK_LS_PLACE | RDLOCK_LS_LVB | RDLOCK_LS_GATE, 16384, 0),
	KATTR("bakery UPDATE KEEP_NAMES", BAKERY,
	      RDLOCK_LS_UPDATE | RDLOCK_LS_KEEP_NAMES, 16384, 0),
	KATTR("bakery flag bit 10", BAKERY, BIT(10), 16384, -EINVAL),
	KATTR("CQL PLACE", CQL, RDLOCK_LS_PLACE, 65536, 0),
};

static void rdlock_kattr_case_desc(const struct rdlock_kattr_case *c,
				   char *desc)
{
	rdlock_desc(c->what, desc);
}

KUNIT_ARRAY_PARAM(rdlock_kattr, rdlock_kattr_cases, rdlock_kattr_case_desc);

static void rdlock_ls_kernel_attr_test(struct kunit *test)
{
	const struct rdlock_kattr_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, c->err, rdlock_ls_check_kernel_attr(&c->attr));
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

/* ---------------------------------------------------------------- */
/* An acquisition's errors from a node (lockspace_errors.h)         */

static const struct rdlock_ls_error_case {
	const char *what;
	int ret;
	bool cut;	/* the node is cut off here */
	bool stale;	/* the lockspace is lost */
	bool moves;	/* the acquisition starts again, the name moving */
	int code;	/* else what its caller gets */
} rdlock_ls_error_cases[] = {
	{ "granted", 0, false, false, false, 0 },
	{ "granted, node cut off meanwhile", 0, true, false, false, 0 },
	{ "not connected: a blip", -ENOTCONN, false, false, false, -ENOTCONN },
	{ "not connected, node cut off", -ENOTCONN, true, false, true, 0 },
	/* A CAS whose outcome a failed link hid, unsettled at the cut. */
	{ "ticket lost, node cut off", -ESTALE, true, false, true, 0 },
	{ "ticket lost, table replaced", -ESTALE, false, false, false,
	  -ESHUTDOWN },
	/* A READ or CAS whose link failed as the node went. */
	{ "timed out, node cut off", -ETIMEDOUT, true, false, true, 0 },
	{ "timed out", -ETIMEDOUT, false, false, false, -ETIMEDOUT },
	{ "connection reset, node cut off", -ECONNRESET, true, false, true,
	  0 },
	{ "connection reset", -ECONNRESET, false, false, false,
	  -ECONNRESET },
	/* What a node cut off said is moot: a try there starts again. */
	{ "try busy, node cut off", -EAGAIN, true, false, true, 0 },
	{ "try busy", -EAGAIN, false, false, false, -EAGAIN },
	{ "busy", -EBUSY, false, false, false, -EBUSY },
	{ "busy, lockspace lost", -EBUSY, false, true, false, -ESHUTDOWN },
	{ "interrupted, node cut off", -EINTR, true, false, false, -EINTR },
	{ "bad argument, node cut off", -EINVAL, true, false, false,
	  -EINVAL },
	{ "no memory, node cut off", -ENOMEM, true, false, false, -ENOMEM },
};

static void rdlock_ls_error_case_desc(const struct rdlock_ls_error_case *c,
				      char *desc)
{
	rdlock_desc(c->what, desc);
}

KUNIT_ARRAY_PARAM(rdlock_ls_error, rdlock_ls_error_cases,
		  rdlock_ls_error_case_desc);

static void rdlock_ls_error_test(struct kunit *test)
{
	const struct rdlock_ls_error_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_ls_error_moves(c->ret, c->cut), c->moves);
	if (!c->moves)
		KUNIT_EXPECT_EQ(test, rdlock_ls_error_code(c->ret, c->stale),
				c->code);
}

/* ---------------------------------------------------------------- */
/* The table the survivors of a declaration named (lockspace_down.h)  */

#define NAMED_MSGS	3
#define UNSAID		RDLOCK_LS_NAMED_UNSAID

static const struct rdlock_ls_named_case {
	const char *what;
	/* What each survivor's messages said: table, slots (0, 0: none). */
	struct { u64 inc; u32 slots; } msg[NAMED_MSGS];
	bool told;	/* the survivors agree */
	u64 inc;	/* then the one named, 0: no survivor knew one */
	u32 slots;
} rdlock_ls_named_cases[] = {
	{ "no message", {}, true, 0, 0 },
	{ "none knew a table", { { 0, 0 }, { 0, 0 } }, true, 0, 0 },
	{ "one named it", { { 0x11, 4096 } }, true, 0x11, 4096 },
	{ "one named it, another knew none", { { 0, 0 }, { 0x11, 4096 } },
	  true, 0x11, 4096 },
	{ "two named the same", { { 0x11, 4096 }, { 0x11, 4096 } }, true,
	  0x11, 4096 },
	{ "two named different tables", { { 0x11, 4096 }, { 0x22, 4096 } },
	  false },
	{ "two named different sizes", { { 0x11, 4096 }, { 0x11, 2048 } },
	  false },
	{ "named without its size", { { 0x11, 0 } }, false },
	{ "a sender that does not say", { { 0, 0 }, { UNSAID, 0 } }, false },
	{ "apart, then the same again",
	  { { 0x11, 4096 }, { 0x22, 4096 }, { 0x11, 4096 } }, false },
};

static void rdlock_ls_named_case_desc(const struct rdlock_ls_named_case *c,
				      char *desc)
{
	rdlock_desc(c->what, desc);
}

KUNIT_ARRAY_PARAM(rdlock_ls_named, rdlock_ls_named_cases,
		  rdlock_ls_named_case_desc);

static void rdlock_ls_named_test(struct kunit *test)
{
	const struct rdlock_ls_named_case *c = test->param_value;
	const struct rdlock_table_named *t;
	struct rdlock_ls_named n = {};
	unsigned int i;

	for (i = 0; i < NAMED_MSGS; i++)
		rdlock_ls_named_add(&n, c->msg[i].inc, c->msg[i].slots);
	t = rdlock_ls_named_table(&n);
	if (!c->told) {
		KUNIT_EXPECT_NULL(test, t);
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_EXPECT_EQ(test, t->incarnation, c->inc);
	KUNIT_EXPECT_EQ(test, t->slots, c->slots);
}

/* ---------------------------------------------------------------- */
/* A survivor asks about a node that is no member here (lockspace_down.h) */

/* Its fields as rdlock_member_heard_down() fills them: the usual case. */
#define HEARD(...)	{ .running = true, .asker_member = true,		\
			  .configured = true, __VA_ARGS__ }

static const struct rdlock_heard_case {
	const char *what;
	struct rdlock_heard_down h;
	bool take;	/* declared here too */
} rdlock_heard_cases[] = {
	{ "joined in the generation that dropped it", HEARD(), true },
	{ "the same table asked as known", HEARD(.inc = 7, .known = 7), true },
	{ "the asker knows no table", HEARD(.known = 7), true },
	{ "no table known here", HEARD(.inc = 7), true },
	{ "another table known here", HEARD(.inc = 7, .known = 8), false },
	{ "a member here: its own recover_slot", HEARD(.member = true),
	  false },
	{ "failed or left here already", HEARD(.declaring = true), false },
	{ "cut off here already", HEARD(.cut = true), false },
	{ "not a configured node",
	  { .running = true, .asker_member = true }, false },
	{ "the asker is no member here",
	  { .running = true, .configured = true }, false },
	{ "stopped, or out: the next generation decides",
	  { .asker_member = true, .configured = true }, false },
};

static void rdlock_heard_case_desc(const struct rdlock_heard_case *c,
				   char *desc)
{
	rdlock_desc(c->what, desc);
}

KUNIT_ARRAY_PARAM(rdlock_heard, rdlock_heard_cases, rdlock_heard_case_desc);

static void rdlock_heard_down_test(struct kunit *test)
{
	const struct rdlock_heard_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_heard_down_verdict(&c->h), c->take);
}

static struct kunit_case rdlock_lockspace_cases[] = {
	KUNIT_CASE_PARAM(rdlock_ls_error_test, rdlock_ls_error_gen_params),
	KUNIT_CASE_PARAM(rdlock_ls_named_test, rdlock_ls_named_gen_params),
	KUNIT_CASE_PARAM(rdlock_heard_down_test, rdlock_heard_gen_params),
	KUNIT_CASE_PARAM(rdlock_ls_name_test, rdlock_name_gen_params),
	KUNIT_CASE_PARAM(rdlock_uapi_case_test, rdlock_case_gen_params),
	KUNIT_CASE(rdlock_ls_cql_attr_test),
	KUNIT_CASE(rdlock_ls_gate_attr_test),
	KUNIT_CASE_PARAM(rdlock_ls_kernel_attr_test, rdlock_kattr_gen_params),
	KUNIT_CASE(rdlock_ls_place_layout_test),
	{}
};

static struct kunit_suite rdlock_lockspace_suite = {
	.name = "rdlock_lockspace_uapi",
	.test_cases = rdlock_lockspace_cases,
};

kunit_test_suite(rdlock_lockspace_suite);

MODULE_DESCRIPTION("KUnit tests of rdlock's lockspace and lock ioctl checks");
MODULE_LICENSE("GPL");
