// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the transport's pure logic: uapi validation, address
 * conversion, backend agreement, a node's place in the cluster and its
 * return after it was declared down. Table-driven, as lib/overflow_kunit.c;
 * the cluster ioctls' tables are in uapi_admin_cases.h, which the
 * kselftest runs through the real ioctls.
 */
#include <kunit/test.h>
#include <linux/in.h>
#include <linux/in6.h>

#include "../uapi_check.h"
#include "../backend.h"
#include "../replay.h"
#include "../xport_member.h"
#include "uapi_admin_cases.h"

/* ---------------------------------------------------------------- */
/* Addresses (uapi_admin_cases.h)                                   */

static void rdlock_addr_desc(const struct uapi_addr_case *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_addr, uapi_addr_cases, rdlock_addr_desc);

static void rdlock_addr_test(struct kunit *test)
{
	const struct uapi_addr_case *c = test->param_value;
	const struct rdlock_addr *ua = &c->addr;
	u16 port = ua->port ? ua->port : RDLOCK_DEFAULT_PORT;
	struct sockaddr_storage ss, before;

	memset(&ss, 0xa5, sizeof(ss));
	before = ss;
	KUNIT_ASSERT_EQ(test, rdlock_addr_to_sockaddr(ua, &ss), -c->err);
	if (c->err) {
		/* A rejected address leaves the output untouched. */
		KUNIT_EXPECT_EQ(test, memcmp(&ss, &before, sizeof(ss)), 0);
		return;
	}
	KUNIT_EXPECT_EQ(test, ss.ss_family, ua->family);
	if (ua->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		KUNIT_EXPECT_EQ(test, ntohs(sin->sin_port), port);
		KUNIT_EXPECT_EQ(test, memcmp(&sin->sin_addr, ua->addr, 4), 0);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		KUNIT_EXPECT_EQ(test, ntohs(sin6->sin6_port), port);
		KUNIT_EXPECT_EQ(test, sin6->sin6_scope_id, ua->scope_id);
		KUNIT_EXPECT_EQ(test, memcmp(&sin6->sin6_addr, ua->addr, 16), 0);
	}
}

#define V4(a, b, c, d)	{ a, b, c, d }

static void rdlock_sockaddr_equal_test(struct kunit *test)
{
	struct rdlock_addr a = { .family = AF_INET, .port = 5,
				 .addr = V4(10, 0, 0, 1) };
	struct sockaddr_storage x, y;

	KUNIT_ASSERT_EQ(test, rdlock_addr_to_sockaddr(&a, &x), 0);
	KUNIT_ASSERT_EQ(test, rdlock_addr_to_sockaddr(&a, &y), 0);
	KUNIT_EXPECT_TRUE(test, rdlock_sockaddr_equal(&x, &y));
	a.port = 6;
	KUNIT_ASSERT_EQ(test, rdlock_addr_to_sockaddr(&a, &y), 0);
	KUNIT_EXPECT_FALSE(test, rdlock_sockaddr_equal(&x, &y));
	a.port = 5;
	a.addr[3] = 2;
	KUNIT_ASSERT_EQ(test, rdlock_addr_to_sockaddr(&a, &y), 0);
	KUNIT_EXPECT_FALSE(test, rdlock_sockaddr_equal(&x, &y));
}

#define A4(p, a, b, c, d) \
	{ .family = AF_INET, .port = (p), .addr = V4(a, b, c, d) }
#define A6(p, scope, ...) \
	{ .family = AF_INET6, .port = (p), .scope_id = (scope), \
	  .addr = __VA_ARGS__ }

static const struct {
	const char *name;
	struct rdlock_addr node, from;
	bool same;
} rdlock_same_host_cases[] = {
	{ "v4, other port", A4(1, 10, 0, 0, 1), A4(40000, 10, 0, 0, 1), true },
	{ "v4, other address", A4(1, 10, 0, 0, 1), A4(1, 10, 0, 0, 2), false },
	{ "v4 node, v4-mapped source", A4(1, 10, 0, 0, 1),
	  A6(9, 0, { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 }), true },
	{ "v4 node, other v4-mapped source", A4(1, 10, 0, 0, 1),
	  A6(9, 0, { [10] = 0xff, [11] = 0xff, 10, 0, 0, 3 }), false },
	{ "v4 node, v6 source", A4(1, 10, 0, 0, 1),
	  A6(1, 0, { 0xfe, 0x80, [15] = 1 }), false },
	{ "v6, other port, same scope", A6(1, 2, { 0xfe, 0x80, [15] = 1 }),
	  A6(7, 2, { 0xfe, 0x80, [15] = 1 }), true },
	{ "v6, other scope", A6(1, 2, { 0xfe, 0x80, [15] = 1 }),
	  A6(1, 3, { 0xfe, 0x80, [15] = 1 }), false },
	{ "v6, other address", A6(1, 0, { 0xfd, [15] = 1 }),
	  A6(1, 0, { 0xfd, [15] = 2 }), false },
};

static void rdlock_sockaddr_same_host_test(struct kunit *test)
{
	struct sockaddr_storage node, from;
	const struct sockaddr *sa = (const struct sockaddr *)&from;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rdlock_same_host_cases); i++) {
		const struct rdlock_addr *n = &rdlock_same_host_cases[i].node;
		const struct rdlock_addr *f = &rdlock_same_host_cases[i].from;

		KUNIT_ASSERT_EQ(test, rdlock_addr_to_sockaddr(n, &node), 0);
		KUNIT_ASSERT_EQ(test, rdlock_addr_to_sockaddr(f, &from), 0);
		KUNIT_EXPECT_EQ_MSG(test, rdlock_sockaddr_same_host(&node, sa),
				    rdlock_same_host_cases[i].same, "%s",
				    rdlock_same_host_cases[i].name);
	}
}

/* ---------------------------------------------------------------- */
/* Structures: a change to a valid argument, one errno              */

/*
 * One KUnit case per table uapi_@name_cases of uapi_admin_cases.h, with
 * its own checker (as lib/overflow_kunit.c has one per type): the valid
 * argument uapi_valid_@valid is accepted; with the case's change, the
 * case's errno.
 */
#define RDLOCK_UAPI_TABLE(name, valid, check)				\
static void rdlock_##name##_desc(const struct uapi_case *c, char *desc)	\
{									\
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);			\
}									\
KUNIT_ARRAY_PARAM(rdlock_##name, uapi_##name##_cases,			\
		  rdlock_##name##_desc);				\
static void rdlock_##name##_case_test(struct kunit *test)		\
{									\
	int (*chk)(const typeof(uapi_valid_##valid) *) = check;	\
	const struct uapi_case *c = test->param_value;			\
	u64 arg[16];							\
									\
	BUILD_BUG_ON(sizeof(uapi_valid_##valid) > sizeof(arg));		\
	memcpy(arg, &uapi_valid_##valid, sizeof(uapi_valid_##valid));	\
	KUNIT_ASSERT_EQ(test, 0, chk((const void *)arg));		\
	uapi_case_apply(arg, c);					\
	KUNIT_EXPECT_EQ(test, -c->err, chk((const void *)arg));		\
}

static int rdlock_config_check(const struct rdlock_cluster_config *cfg)
{
	struct sockaddr_storage ss;

	return rdlock_check_config(cfg, &ss);
}

/* ADD_PEER: a valid address, converted. */
static int rdlock_add_peer_check(const struct rdlock_peer *peer)
{
	struct sockaddr_storage ss;

	return rdlock_check_peer(peer, &ss);
}

/* DEL_PEER: only the id matters; the address zeroed or valid. */
static int rdlock_del_peer_check(const struct rdlock_peer *peer)
{
	return rdlock_check_peer(peer, NULL);
}

RDLOCK_UAPI_TABLE(config, config, rdlock_config_check)
RDLOCK_UAPI_TABLE(add_peer, peer, rdlock_add_peer_check)
RDLOCK_UAPI_TABLE(del_peer, peer, rdlock_del_peer_check)
RDLOCK_UAPI_TABLE(node_down, node_down, rdlock_check_node_down)
RDLOCK_UAPI_TABLE(key, key, rdlock_check_key_arg)
RDLOCK_UAPI_TABLE(status, status, rdlock_check_status)

/* ---------------------------------------------------------------- */
/* Backend agreement                                                */

#define A	RDLOCK_BACKEND_NONE
#define V	RDLOCK_BACKEND_VERBS
#define T	RDLOCK_BACKEND_TWOSIDED

struct rdlock_backend_case {
	const char *name;
	unsigned int n;
	struct rdlock_backend_adv adv[4];
	int expect;
};

static const struct rdlock_backend_case rdlock_backend_cases[] = {
	{ "one auto capable", 1, { { A, true } }, V },
	{ "one auto incapable", 1, { { A, false } }, T },
	{ "all auto capable", 3, { { A, true }, { A, true }, { A, true } }, V },
	{ "auto, one incapable", 3,
	  { { A, true }, { A, false }, { A, true } }, T },
	{ "forced twosided wins", 3,
	  { { A, true }, { T, true }, { A, true } }, T },
	{ "forced verbs, all capable", 2, { { V, true }, { A, true } }, V },
	{ "forced verbs, one incapable", 2,
	  { { V, true }, { A, false } }, -EOPNOTSUPP },
	{ "conflicting forces", 3,
	  { { V, true }, { A, true }, { T, true } }, -EPROTO },
	{ "same force twice", 4,
	  { { T, false }, { T, true }, { A, true }, { A, false } }, T },
	/* Software devices (rxe): auto prefers in-place CPU atomics. */
	{ "auto, one software device", 3,
	  { { A, true }, { A, true, true }, { A, true } }, T },
	{ "auto, all software devices", 2,
	  { { A, true, true }, { A, true, true } }, T },
	{ "forced verbs on software devices", 2,
	  { { V, true, true }, { A, true, true } }, V },
	{ "forced verbs, software device incapable", 2,
	  { { V, true, true }, { A, false, true } }, -EOPNOTSUPP },
};

static void rdlock_backend_desc(const struct rdlock_backend_case *c,
				char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_backend, rdlock_backend_cases, rdlock_backend_desc);

static void rdlock_backend_resolve_test(struct kunit *test)
{
	const struct rdlock_backend_case *c = test->param_value;
	unsigned int i, j;
	int backend;

	backend = rdlock_backend_resolve(c->adv, c->n);
	KUNIT_ASSERT_EQ(test, backend, c->expect);
	/*
	 * Pairwise checks must agree with the global outcome: a resolvable
	 * set is pairwise compatible and admits each member; an unresolvable
	 * one has an incompatible pair, so connecting refuses it early.
	 */
	if (backend > 0) {
		for (i = 0; i < c->n; i++) {
			KUNIT_EXPECT_TRUE(test,
					  rdlock_backend_admits(backend, &c->adv[i]));
			for (j = 0; j < c->n; j++)
				KUNIT_EXPECT_TRUE(test,
						  rdlock_backend_compatible(&c->adv[i],
									    &c->adv[j]));
		}
	} else {
		bool some_pair_bad = false;

		for (i = 0; i < c->n; i++)
			for (j = 0; j < c->n; j++)
				some_pair_bad |= !rdlock_backend_compatible(&c->adv[i],
									    &c->adv[j]);
		KUNIT_EXPECT_TRUE(test, some_pair_bad);
	}
}

static void rdlock_backend_admits_test(struct kunit *test)
{
	static const struct rdlock_backend_adv auto_yes = { A, true };
	static const struct rdlock_backend_adv auto_no = { A, false };
	static const struct rdlock_backend_adv verbs = { V, true };
	static const struct rdlock_backend_adv twos = { T, true };

	KUNIT_EXPECT_TRUE(test, rdlock_backend_admits(V, &auto_yes));
	KUNIT_EXPECT_FALSE(test, rdlock_backend_admits(V, &auto_no));
	KUNIT_EXPECT_FALSE(test, rdlock_backend_admits(V, &twos));
	KUNIT_EXPECT_TRUE(test, rdlock_backend_admits(V, &verbs));
	KUNIT_EXPECT_TRUE(test, rdlock_backend_admits(T, &auto_yes));
	KUNIT_EXPECT_TRUE(test, rdlock_backend_admits(T, &auto_no));
	KUNIT_EXPECT_FALSE(test, rdlock_backend_admits(T, &verbs));
	KUNIT_EXPECT_FALSE(test, rdlock_backend_admits(A, &auto_yes));
}

/*
 * The home's record of one replay slot, fed the requests of a sender in
 * arrival order: each step is (sender's table incarnation, number) and
 * the verdict the home must reach; the record follows the applied ones.
 */
struct rdlock_replay_step {
	u64 requester, gen;
	enum rdlock_replay_verdict expect;
};

struct rdlock_replay_case {
	const char *name;
	unsigned int n;
	struct rdlock_replay_step step[6];
};

#define APPLY	RDLOCK_REPLAY_APPLY
#define ANSWER	RDLOCK_REPLAY_ANSWER
#define STALE	RDLOCK_REPLAY_STALE

static const struct rdlock_replay_case rdlock_replay_cases[] = {
	{ "first request", 1, { { 7, 1, APPLY } } },
	{ "copy after a lost answer", 2, { { 7, 5, APPLY }, { 7, 5, ANSWER } } },
	{ "copy answered twice", 3,
	  { { 7, 5, APPLY }, { 7, 5, ANSWER }, { 7, 5, ANSWER } } },
	{ "next request", 2, { { 7, 5, APPLY }, { 7, 9, APPLY } } },
	{ "late copy of an earlier request", 3,
	  { { 7, 5, APPLY }, { 7, 9, APPLY }, { 7, 5, STALE } } },
	{ "late copy never applied after the next", 4,
	  { { 7, 5, APPLY }, { 7, 9, APPLY }, { 7, 5, STALE },
	    { 7, 9, ANSWER } } },
	{ "sender restarted, numbers from 1", 3,
	  { { 7, 5, APPLY }, { 8, 1, APPLY }, { 8, 1, ANSWER } } },
	{ "old life's copy after a restart", 3,
	  { { 7, 5, APPLY }, { 8, 1, APPLY }, { 7, 5, APPLY } } },
	{ "same number, other life", 2, { { 7, 5, APPLY }, { 8, 5, APPLY } } },
};

static void rdlock_replay_desc(const struct rdlock_replay_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_replay, rdlock_replay_cases, rdlock_replay_desc);

static void rdlock_replay_check_test(struct kunit *test)
{
	const struct rdlock_replay_case *c = test->param_value;
	struct rdlock_replay_entry e = { };
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		const struct rdlock_replay_step *s = &c->step[i];

		KUNIT_EXPECT_EQ_MSG(test, rdlock_replay_check(&e, s->requester,
							      s->gen),
				    s->expect, "step %u", i);
		if (s->expect == APPLY) {
			e.requester = s->requester;
			e.gen = s->gen;
		}
	}
}

/*
 * Seals (rdlock_replay_seal()): a sender gave its request up at the
 * window and asks what became of it. Each step is a request (applied with
 * value 42 when the verdict says so) or a seal, and the status and value
 * the home answers.
 */
struct rdlock_seal_step {
	bool seal;
	u64 requester, gen;
	enum rdlock_replay_verdict expect;
	int status;
	u64 value;
};

struct rdlock_seal_case {
	const char *name;
	unsigned int n;
	struct rdlock_seal_step step[3];
};

#define REQ(r, g, v, st, val)	{ false, r, g, v, st, val }
#define SEAL(r, g, v, st, val)	{ true, r, g, v, st, val }

static const struct rdlock_seal_case rdlock_seal_cases[] = {
	{ "applied, answer lost: the seal answers its outcome", 2,
	  { REQ(7, 5, APPLY, 0, 42), SEAL(7, 5, ANSWER, 0, 42) } },
	{ "never arrived: sealed, a late copy is answered, not applied", 2,
	  { SEAL(7, 5, APPLY, -ECANCELED, 0), REQ(7, 5, ANSWER, -ECANCELED, 0) } },
	{ "sealed twice: the same answer", 2,
	  { SEAL(7, 5, APPLY, -ECANCELED, 0), SEAL(7, 5, ANSWER, -ECANCELED, 0) } },
	{ "sealed after an earlier request was applied", 3,
	  { REQ(7, 4, APPLY, 0, 42), SEAL(7, 5, APPLY, -ECANCELED, 0),
	    REQ(7, 5, ANSWER, -ECANCELED, 0) } },
	{ "a number older than the record", 2,
	  { REQ(7, 9, APPLY, 0, 42), SEAL(7, 5, STALE, -EALREADY, 0) } },
	{ "the sender's earlier life applied that number", 2,
	  { REQ(7, 5, APPLY, 0, 42), SEAL(8, 5, APPLY, -ECANCELED, 0) } },
};

#undef REQ
#undef SEAL

static void rdlock_seal_desc(const struct rdlock_seal_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_seal, rdlock_seal_cases, rdlock_seal_desc);

static void rdlock_replay_seal_test(struct kunit *test)
{
	const struct rdlock_seal_case *c = test->param_value;
	struct rdlock_replay_entry e = { };
	unsigned int i;
	u64 value;
	int status;

	for (i = 0; i < c->n; i++) {
		const struct rdlock_seal_step *s = &c->step[i];
		enum rdlock_replay_verdict v;

		if (s->seal) {
			v = rdlock_replay_seal(&e, s->requester, s->gen,
					       &status, &value);
		} else {
			v = rdlock_replay_check(&e, s->requester, s->gen);
			status = v == STALE ? -EALREADY : e.status;
			value = e.value;
			if (v == APPLY) {
				e.requester = s->requester;
				e.gen = s->gen;
				e.status = 0;
				e.value = 42;
				status = 0;
				value = 42;
			}
		}
		KUNIT_EXPECT_EQ_MSG(test, v, s->expect, "step %u", i);
		KUNIT_EXPECT_EQ_MSG(test, status, s->status, "step %u", i);
		KUNIT_EXPECT_EQ_MSG(test, value, s->value, "step %u", i);
	}
}

#undef APPLY
#undef ANSWER
#undef STALE

/* ---------------------------------------------------------------- */
/* A node's place, and its return after a declaration (xport_member.h) */

#define ABS	RDLOCK_MEMBER_ABSENT
#define CFG	RDLOCK_MEMBER_CONFIGURED
#define FEN	RDLOCK_MEMBER_FENCED
#define DWN	RDLOCK_MEMBER_DOWN
#define RET	RDLOCK_MEMBER_RETURNED

/* A move a state machine allows. */
struct rdlock_move {
	unsigned int from, to;
};

/*
 * Every move of a machine of @nr states, out of range ones included: only
 * the @n of @allowed pass @move_ok.
 */
static void rdlock_moves_check(struct kunit *test, unsigned int nr,
			       const struct rdlock_move *allowed, size_t n,
			       bool (*move_ok)(unsigned int from,
					       unsigned int to))
{
	unsigned int from, to;
	bool expect;
	size_t i;

	for (from = 0; from <= nr; from++) {
		for (to = 0; to <= nr; to++) {
			expect = false;
			for (i = 0; i < n; i++)
				if (allowed[i].from == from &&
				    allowed[i].to == to)
					expect = true;
			KUNIT_EXPECT_EQ_MSG(test, move_ok(from, to), expect,
					    "%u -> %u", from, to);
		}
	}
}

/* Every move that is allowed; every other one is refused. */
static const struct rdlock_move rdlock_member_allowed[] = {
	{ ABS, CFG },
	{ CFG, ABS }, { CFG, FEN }, { CFG, DWN }, { CFG, RET },
	{ FEN, CFG }, { FEN, DWN },
	{ DWN, CFG }, { DWN, RET },
	{ RET, CFG }, { RET, FEN },
};

static bool rdlock_member_move(unsigned int from, unsigned int to)
{
	return rdlock_member_move_ok(from, to);
}

static void rdlock_member_moves_test(struct kunit *test)
{
	rdlock_moves_check(test, RDLOCK_MEMBER_NR, rdlock_member_allowed,
			   ARRAY_SIZE(rdlock_member_allowed),
			   rdlock_member_move);
}

/* What a node knows of its epoch: every allowed move, the others refused. */
static const struct rdlock_move rdlock_view_allowed[] = {
	{ RDLOCK_VIEW_LEARNING, RDLOCK_VIEW_LEARNED },
	{ RDLOCK_VIEW_LEARNING, RDLOCK_VIEW_CUT_OFF },
	{ RDLOCK_VIEW_LEARNED, RDLOCK_VIEW_CUT_OFF },
};

static bool rdlock_view_move(unsigned int from, unsigned int to)
{
	return rdlock_view_move_ok(from, to);
}

static void rdlock_view_moves_test(struct kunit *test)
{
	rdlock_moves_check(test, RDLOCK_VIEW_NR, rdlock_view_allowed,
			   ARRAY_SIZE(rdlock_view_allowed), rdlock_view_move);
}

struct rdlock_return_case {
	const char *name;
	enum rdlock_member_state st;
	u64 known, inc;
	bool declaring, fresh;
	enum rdlock_return expect;
};

static const struct rdlock_return_case rdlock_return_cases[] = {
	{ "new table, released", DWN, 0x11, 0x22, false, false,
	  RDLOCK_RETURN_OK },
	{ "new table, released, not learned yet", DWN, 0x11, 0x22, false,
	  true, RDLOCK_RETURN_OK },
	{ "no table known, one that learned its epoch", DWN, 0, 0x22, false,
	  false, RDLOCK_RETURN_LATER },
	{ "no table known (absent when formed), one not learned yet", DWN, 0,
	  0x22, false, true, RDLOCK_RETURN_OK },
	{ "no table known, not learned yet, a declaration under way", DWN, 0,
	  0x22, true, true, RDLOCK_RETURN_LATER },
	{ "no table known, being declared, not learned yet", FEN, 0, 0x22,
	  true, true, RDLOCK_RETURN_LATER },
	{ "no table known, none named", DWN, 0, 0, false, true,
	  RDLOCK_RETURN_REFUSED },
	{ "the table declared down (cut off, alive)", DWN, 0x11, 0x11, false,
	  false, RDLOCK_RETURN_REFUSED },
	{ "the table declared down, saying it is new", DWN, 0x11, 0x11, false,
	  true, RDLOCK_RETURN_REFUSED },
	{ "no table named", DWN, 0x11, 0, false, false,
	  RDLOCK_RETURN_REFUSED },
	{ "the table declared down, while declaring", DWN, 0x11, 0x11, true,
	  false, RDLOCK_RETURN_REFUSED },
	{ "new table, another declaration under way", DWN, 0x11, 0x22, true,
	  false, RDLOCK_RETURN_LATER },
	{ "new table, its own declaration under way", FEN, 0x11, 0x22, true,
	  false, RDLOCK_RETURN_LATER },
	{ "the table being declared down", FEN, 0x11, 0x11, true, false,
	  RDLOCK_RETURN_REFUSED },
};

static void rdlock_return_desc(const struct rdlock_return_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_return, rdlock_return_cases, rdlock_return_desc);

static void rdlock_return_test(struct kunit *test)
{
	const struct rdlock_return_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_return_verdict(c->st, c->known, c->inc,
						    c->declaring, c->fresh),
			c->expect);
}

struct rdlock_form_case {
	const char *name;
	u32 self, members, configured, absent;
	bool running, waited;
	u32 said, formed, contacted;
	enum rdlock_form expect;
};

static const struct rdlock_form_case rdlock_form_cases[] = {
	{ "every node a member, every word in", 0, 0x7, 0x7, 0, true, false,
	  0x6, 0, 0x6, RDLOCK_FORM_NOW },
	{ "alone, every node configured a member", 0, 0x1, 0x1, 0, true,
	  false, 0, 0, 0, RDLOCK_FORM_NOW },
	{ "a node off, not waited yet", 0, 0x3, 0x7, 0x4, true, false, 0x2, 0,
	  0x2, RDLOCK_FORM_WAIT },
	{ "a node off, waited", 0, 0x3, 0x7, 0x4, true, true, 0x2, 0, 0x2,
	  RDLOCK_FORM_NOW },
	{ "the lowest node off, waited", 1, 0x6, 0x7, 0x1, true, true, 0x4, 0,
	  0x4, RDLOCK_FORM_NOW },
	{ "a node off that failed: not absent, waited", 0, 0x3, 0x7, 0, true,
	  true, 0x6, 0, 0x6, RDLOCK_FORM_NOW },
	{ "not the lowest member", 1, 0x3, 0x7, 0x4, true, true, 0x1, 0, 0x1,
	  RDLOCK_FORM_WAIT },
	{ "a member's word missing", 0, 0x7, 0x7, 0, true, true, 0x2, 0, 0x6,
	  RDLOCK_FORM_WAIT },
	{ "a change under way", 0, 0x3, 0x7, 0x4, false, true, 0x2, 0, 0x2,
	  RDLOCK_FORM_WAIT },
	{ "not counted a member yet", 0, 0x6, 0x7, 0x1, true, true, 0x6, 0,
	  0x6, RDLOCK_FORM_WAIT },
	{ "a node to be absent spoke: members read before it joined", 1, 0x6,
	  0x7, 0x1, true, true, 0x4, 0, 0x5, RDLOCK_FORM_WAIT },
	{ "a node to be absent said: members read before it joined", 1, 0x6,
	  0x7, 0x1, true, true, 0x5, 0, 0x5, RDLOCK_FORM_WAIT },
	{ "a member not configured here is not waited for", 0, 0xb, 0x7, 0x4,
	  true, true, 0x2, 0, 0x2, RDLOCK_FORM_NOW },
	{ "a peer says it formed", 0, 0x7, 0x7, 0, true, true, 0x6, 0x4, 0x6,
	  RDLOCK_FORM_JOIN },
	{ "the lowest, back after it formed", 0, 0x7, 0x7, 0, false, false,
	  0x2, 0x2, 0x6, RDLOCK_FORM_JOIN },
	{ "the highest node id", 31, BIT(31), BIT(31), 0, true, false, 0, 0, 0,
	  RDLOCK_FORM_NOW },
};

static void rdlock_form_desc(const struct rdlock_form_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_form, rdlock_form_cases, rdlock_form_desc);

static void rdlock_form_test(struct kunit *test)
{
	const struct rdlock_form_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_form_verdict(c->self, c->members,
						  c->configured, c->absent,
						  c->running, c->waited,
						  c->said, c->formed,
						  c->contacted),
			c->expect);
}

struct rdlock_left_case {
	const char *name;
	enum rdlock_member_state st;
	bool heir;
	bool expect;
};

static const struct rdlock_left_case rdlock_left_cases[] = {
	{ "its table of this epoch, an heir", CFG, true, true },
	{ "no other member to keep or take its names", CFG, false, false },
	{ "returned, an heir", RET, true, true },
	{ "returned, no heir (it keeps nothing)", RET, false, true },
	{ "being declared down", FEN, true, false },
	{ "declared down", DWN, true, false },
	{ "not configured", ABS, true, false },
};

static void rdlock_left_desc(const struct rdlock_left_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_left, rdlock_left_cases, rdlock_left_desc);

static void rdlock_left_test(struct kunit *test)
{
	const struct rdlock_left_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_left_declared(c->st, c->heir), c->expect);
}

/* Does a node learning its epoch wait for a peer's word? */
struct rdlock_learn_case {
	const char *name;
	enum rdlock_member_state st;
	bool seen;
	bool excused;
	bool expect;
};

static const struct rdlock_learn_case rdlock_learn_cases[] = {
	{ "configured, no word yet", CFG, false, false, true },
	{ "configured, its word came", CFG, true, false, false },
	{ "configured, left (excused)", CFG, false, true, false },
	{ "returned, no word yet", RET, false, false, true },
	{ "returned, left (excused)", RET, false, true, false },
	{ "being declared down", FEN, false, false, false },
	{ "declared down", DWN, false, false, false },
	{ "not configured", ABS, false, false, false },
};

static void rdlock_learn_desc(const struct rdlock_learn_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_learn, rdlock_learn_cases, rdlock_learn_desc);

static void rdlock_learn_test(struct kunit *test)
{
	const struct rdlock_learn_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_learn_waits(c->st, c->seen, c->excused),
			c->expect);
}

/* Returned nodes taking over from the last nodes keeping their tables. */
struct rdlock_handover_case {
	const char *name;
	enum rdlock_member_state st[4];
	u32 heirs;
	enum rdlock_handover expect;
};

static const struct rdlock_handover_case rdlock_handover_cases[] = {
	{ "the last one failing, the others returned", { FEN, RET, RET, ABS },
	  0x6, RDLOCK_HANDOVER_NOW },
	{ "the last two failing, one returned", { FEN, FEN, RET, ABS }, 0x4,
	  RDLOCK_HANDOVER_NOW },
	{ "a node keeps its table of this epoch", { FEN, CFG, RET, ABS }, 0x6,
	  RDLOCK_HANDOVER_NONE },
	{ "this node keeps its table (it is one of the heirs)",
	  { CFG, FEN, RET, ABS }, 0x5, RDLOCK_HANDOVER_NONE },
	{ "nobody being declared down", { DWN, RET, RET, ABS }, 0x6,
	  RDLOCK_HANDOVER_NONE },
	{ "an heir not back here yet", { FEN, RET, DWN, ABS }, 0x6,
	  RDLOCK_HANDOVER_WAIT },
	{ "an heir still being declared down itself", { FEN, RET, FEN, ABS },
	  0x6, RDLOCK_HANDOVER_WAIT },
	{ "no heir at all", { FEN, DWN, DWN, ABS }, 0, RDLOCK_HANDOVER_NONE },
	{ "a member not configured here is no heir", { FEN, RET, RET, ABS },
	  0xe, RDLOCK_HANDOVER_NOW },
	{ "only an unconfigured member", { FEN, DWN, DWN, ABS }, 0x8,
	  RDLOCK_HANDOVER_NONE },
	{ "a returned node that is no member is no heir", { FEN, RET, RET, ABS },
	  0x2, RDLOCK_HANDOVER_NOW },
};

static void rdlock_handover_desc(const struct rdlock_handover_case *c,
				 char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_handover, rdlock_handover_cases,
		  rdlock_handover_desc);

static void rdlock_handover_test(struct kunit *test)
{
	const struct rdlock_handover_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_handover_verdict(c->st, 4, c->heirs),
			c->expect);
}

/* A node taking a handover a peer's word told of. */
struct rdlock_adopt_case {
	const char *name;
	enum rdlock_member_state st[4];
	u32 hosts;
	enum rdlock_handover expect;
};

static const struct rdlock_adopt_case rdlock_adopt_cases[] = {
	{ "the hosts returned here", { DWN, RET, RET, RET }, 0x6,
	  RDLOCK_HANDOVER_NOW },
	{ "the hosts keep their tables here already", { DWN, CFG, CFG, RET },
	  0x6, RDLOCK_HANDOVER_NOW },
	{ "a host not back here yet", { DWN, RET, DWN, RET }, 0x6,
	  RDLOCK_HANDOVER_WAIT },
	{ "a host being declared down here since", { DWN, RET, FEN, RET }, 0x6,
	  RDLOCK_HANDOVER_NOW },
	{ "a node down here that is no host", { DWN, RET, RET, DWN }, 0x6,
	  RDLOCK_HANDOVER_NOW },
};

static void rdlock_adopt_desc(const struct rdlock_adopt_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdlock_adopt, rdlock_adopt_cases, rdlock_adopt_desc);

static void rdlock_adopt_test(struct kunit *test)
{
	const struct rdlock_adopt_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rdlock_adopt_verdict(c->st, 4, c->hosts),
			c->expect);
}

#undef ABS
#undef CFG
#undef FEN
#undef DWN
#undef RET

static struct kunit_case rdlock_xport_cases[] = {
	KUNIT_CASE_PARAM(rdlock_addr_test, rdlock_addr_gen_params),
	KUNIT_CASE(rdlock_sockaddr_equal_test),
	KUNIT_CASE(rdlock_sockaddr_same_host_test),
	KUNIT_CASE_PARAM(rdlock_config_case_test, rdlock_config_gen_params),
	KUNIT_CASE_PARAM(rdlock_add_peer_case_test, rdlock_add_peer_gen_params),
	KUNIT_CASE_PARAM(rdlock_del_peer_case_test, rdlock_del_peer_gen_params),
	KUNIT_CASE_PARAM(rdlock_node_down_case_test,
			 rdlock_node_down_gen_params),
	KUNIT_CASE_PARAM(rdlock_key_case_test, rdlock_key_gen_params),
	KUNIT_CASE_PARAM(rdlock_status_case_test, rdlock_status_gen_params),
	KUNIT_CASE_PARAM(rdlock_backend_resolve_test,
			 rdlock_backend_gen_params),
	KUNIT_CASE(rdlock_backend_admits_test),
	KUNIT_CASE_PARAM(rdlock_replay_check_test, rdlock_replay_gen_params),
	KUNIT_CASE_PARAM(rdlock_replay_seal_test, rdlock_seal_gen_params),
	KUNIT_CASE(rdlock_member_moves_test),
	KUNIT_CASE(rdlock_view_moves_test),
	KUNIT_CASE_PARAM(rdlock_return_test, rdlock_return_gen_params),
	KUNIT_CASE_PARAM(rdlock_form_test, rdlock_form_gen_params),
	KUNIT_CASE_PARAM(rdlock_left_test, rdlock_left_gen_params),
	KUNIT_CASE_PARAM(rdlock_learn_test, rdlock_learn_gen_params),
	KUNIT_CASE_PARAM(rdlock_handover_test, rdlock_handover_gen_params),
	KUNIT_CASE_PARAM(rdlock_adopt_test, rdlock_adopt_gen_params),
	{}
};

static struct kunit_suite rdlock_xport_suite = {
	.name = "rdlock_xport",
	.test_cases = rdlock_xport_cases,
};

kunit_test_suite(rdlock_xport_suite);

MODULE_DESCRIPTION("KUnit tests of rdlock's transport logic");
MODULE_LICENSE("GPL");
