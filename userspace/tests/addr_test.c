// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of userspace/addr.c, TAP output. Every accepted case is
 * checked field by field and printed back; every refused case must leave
 * the output untouched.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "../addr.h"
#include "tap.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define X10		"1234567890"

struct addr_case {
	const char *in;
	int ret;		/* expected return value */
	__u16 family;
	__u16 port;
	__u32 scope;
	const char *host;	/* inet_pton() form of the address */
	const char *out;	/* rdlock_format_addr() of the result */
};

static const struct addr_case addr_cases[] = {
	{ "10.77.0.1", 0, AF_INET, 0, 0, "10.77.0.1", "10.77.0.1" },
	{ "10.77.0.1:18600", 0, AF_INET, 18600, 0, "10.77.0.1", "10.77.0.1:18600" },
	{ "192.0.2.255:1", 0, AF_INET, 1, 0, "192.0.2.255", "192.0.2.255:1" },
	{ "1.2.3.4:65535", 0, AF_INET, 65535, 0, "1.2.3.4", "1.2.3.4:65535" },
	/* Syntax only: the kernel refuses these, with its own errno. */
	{ "0.0.0.0", 0, AF_INET, 0, 0, "0.0.0.0", "0.0.0.0" },
	{ "224.0.0.1", 0, AF_INET, 0, 0, "224.0.0.1", "224.0.0.1" },
	{ "2001:db8::1", 0, AF_INET6, 0, 0, "2001:db8::1", "2001:db8::1" },
	{ "[2001:db8::1]:18600", 0, AF_INET6, 18600, 0, "2001:db8::1", "[2001:db8::1]:18600" },
	{ "[2001:db8::1]", 0, AF_INET6, 0, 0, "2001:db8::1", "2001:db8::1" },
	{ "::1", 0, AF_INET6, 0, 0, "::1", "::1" },
	{ "fe80::1%2", 0, AF_INET6, 0, 2, "fe80::1", "fe80::1%2" },
	{ "[fe80::1%3]:7", 0, AF_INET6, 7, 3, "fe80::1", "[fe80::1%3]:7" },
	{ "fe80::1%lo", 0, AF_INET6, 0, 1, "fe80::1", "fe80::1%1" },
	{ "::ffff:10.77.0.1", 0, AF_INET6, 0, 0, "::ffff:10.77.0.1", "::ffff:10.77.0.1" },
	{ "[::ffff:10.77.0.1]:9", 0, AF_INET6, 9, 0, "::ffff:10.77.0.1", "[::ffff:10.77.0.1]:9" },
	{ .in = "", .ret = -EINVAL },
	{ .in = "10.77.0", .ret = -EINVAL },
	{ .in = "10.77.0.1.2", .ret = -EINVAL },
	{ .in = "10.77.0.256", .ret = -EINVAL },
	{ .in = "010.77.0.1", .ret = -EINVAL },
	{ .in = " 10.77.0.1", .ret = -EINVAL },
	{ .in = "10.77.0.1 ", .ret = -EINVAL },
	{ .in = "10.77.0.1:", .ret = -EINVAL },
	{ .in = "10.77.0.1:0", .ret = -EINVAL },
	{ .in = "10.77.0.1:65536", .ret = -EINVAL },
	{ .in = "10.77.0.1:99999999999", .ret = -EINVAL },
	{ .in = "10.77.0.1:-1", .ret = -EINVAL },
	{ .in = "10.77.0.1:+1", .ret = -EINVAL },
	{ .in = "10.77.0.1:0x10", .ret = -EINVAL },
	{ .in = "10.77.0.1:80x", .ret = -EINVAL },
	{ .in = "10.77.0.1%1", .ret = -EINVAL },
	{ .in = "[10.77.0.1]:1", .ret = -EINVAL },
	{ .in = "host.example:1", .ret = -EINVAL },
	{ .in = "2001:db8::1:18600x", .ret = -EINVAL },
	{ .in = "2001:db8:::1", .ret = -EINVAL },
	{ .in = "[2001:db8::1", .ret = -EINVAL },
	{ .in = "[2001:db8::1]:", .ret = -EINVAL },
	{ .in = "[2001:db8::1]18600", .ret = -EINVAL },
	{ .in = "[2001:db8::1]:0", .ret = -EINVAL },
	{ .in = "[2001:db8::1]:65536", .ret = -EINVAL },
	{ .in = "[]:1", .ret = -EINVAL },
	{ .in = "fe80::1%", .ret = -EINVAL },
	{ .in = "fe80::1%0", .ret = -EINVAL },
	{ .in = "fe80::1%no-such-if0", .ret = -EINVAL },
	{ .in = "[fe80::1%]:1", .ret = -EINVAL },
	{ .in = "2001:db8::g", .ret = -EINVAL },
	/* Longer than any address: refused before parsing. */
	{ .in = X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10, .ret = -EINVAL },
};

struct peer_case {
	const char *in;
	int ret;
	__u32 id;
	__u16 family;
	__u16 port;
};

static const struct peer_case peer_cases[] = {
	{ "0=10.77.0.1", 0, 0, AF_INET, 0 },
	{ "31=10.77.0.32:5", 0, 31, AF_INET, 5 },
	{ "7=[2001:db8::7]:70", 0, 7, AF_INET6, 70 },
	{ .in = "32=10.77.0.1", .ret = -EINVAL },
	{ .in = "-1=10.77.0.1", .ret = -EINVAL },
	{ .in = "=10.77.0.1", .ret = -EINVAL },
	{ .in = "1=", .ret = -EINVAL },
	{ .in = "1", .ret = -EINVAL },
	{ .in = "1:10.77.0.1", .ret = -EINVAL },
	{ .in = "x=10.77.0.1", .ret = -EINVAL },
	{ .in = "1==10.77.0.1", .ret = -EINVAL },
	{ .in = "00000000000000001=10.77.0.1", .ret = -EINVAL },
};

static int check_addr(const struct addr_case *c)
{
	struct rdlock_addr a, want;
	char out[RDLOCK_ADDR_STRLEN];
	int ret;

	/* A refused input must not write to the output. */
	memset(&a, 0x5a, sizeof(a));
	ret = rdlock_parse_addr(c->in, &a);
	if (ret != c->ret) {
		printf("# '%s': returned %d, expected %d\n", c->in, ret, c->ret);
		return 0;
	}
	if (ret) {
		memset(&want, 0x5a, sizeof(want));
		return !memcmp(&a, &want, sizeof(a));
	}
	memset(&want, 0, sizeof(want));
	want.family = c->family;
	want.port = c->port;
	want.scope_id = c->scope;
	if (inet_pton(c->family, c->host, want.addr) != 1) {
		printf("# bad test case host '%s'\n", c->host);
		return 0;
	}
	if (memcmp(&a, &want, sizeof(a))) {
		printf("# '%s': family %u port %u scope %u differ\n", c->in,
		       a.family, a.port, a.scope_id);
		return 0;
	}
	if (rdlock_format_addr(&a, out, sizeof(out)) || strcmp(out, c->out)) {
		printf("# '%s' printed as '%s', expected '%s'\n", c->in, out,
		       c->out);
		return 0;
	}
	return 1;
}

static int check_peer(const struct peer_case *c)
{
	struct rdlock_addr a;
	__u32 id = 0xdead;
	int ret;

	memset(&a, 0, sizeof(a));
	ret = rdlock_parse_peer(c->in, &id, &a);
	if (ret != c->ret) {
		printf("# '%s': returned %d, expected %d\n", c->in, ret, c->ret);
		return 0;
	}
	if (ret)
		return id == 0xdead;
	return id == c->id && a.family == c->family && a.port == c->port;
}

static int check_format_small(void)
{
	struct rdlock_addr a;
	char out[8];

	if (rdlock_parse_addr("[2001:db8::1]:18600", &a))
		return 0;
	return rdlock_format_addr(&a, out, sizeof(out)) == -ENOSPC;
}

int main(void)
{
	size_t nr_addr = ARRAY_SIZE(addr_cases);
	size_t nr_peer = ARRAY_SIZE(peer_cases);
	size_t i;

	printf("TAP version 13\n1..%zu\n", nr_addr + nr_peer + 1);
	for (i = 0; i < nr_addr; i++)
		result(check_addr(&addr_cases[i]),
		       addr_cases[i].ret ? "addr refuses '%s'" : "addr parses '%s'",
		       addr_cases[i].in);
	for (i = 0; i < nr_peer; i++)
		result(check_peer(&peer_cases[i]),
		       peer_cases[i].ret ? "peer refuses '%s'" : "peer parses '%s'",
		       peer_cases[i].in);
	result(check_format_small(), "format %s", "reports a short buffer");
	return tap_finish();
}
