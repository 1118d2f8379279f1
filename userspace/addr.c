// SPDX-License-Identifier: GPL-2.0
/*
 * Address parsing for rdlockctl, see addr.h for the accepted forms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "addr.h"

/* Digits only: strtoul() would also take signs, spaces and "0x". */
static int parse_uint(const char *s, size_t len, unsigned long max,
		      unsigned long *val)
{
	unsigned long v = 0;
	size_t i;

	if (!len || len > 10)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

static int parse_port(const char *s, __u16 *port)
{
	unsigned long v;

	/* Port 0 would silently mean the default: refuse it as a typo. */
	if (parse_uint(s, strlen(s), 65535, &v) || !v)
		return -EINVAL;
	*port = (__u16)v;
	return 0;
}

/* A numeric scope or an interface name; 0 is no scope and so refused. */
static int parse_scope(const char *s, __u32 *scope)
{
	unsigned long v;

	if (!*s)
		return -EINVAL;
	if (s[0] >= '0' && s[0] <= '9') {
		if (parse_uint(s, strlen(s), UINT_MAX, &v) || !v)
			return -EINVAL;
		*scope = (__u32)v;
		return 0;
	}
	v = if_nametoindex(s);
	if (!v)
		return -EINVAL;
	*scope = (__u32)v;
	return 0;
}

/* "v6addr" or "v6addr%scope", already cut out of any brackets. */
static int parse_host6(const char *host, struct rdlock_addr *a)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	char *pct;

	if (strlen(host) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, host);
	pct = strchr(buf, '%');
	if (pct) {
		*pct = '\0';
		if (parse_scope(pct + 1, &a->scope_id))
			return -EINVAL;
	}
	if (inet_pton(AF_INET6, buf, a->addr) != 1)
		return -EINVAL;
	a->family = AF_INET6;
	return 0;
}

int rdlock_parse_addr(const char *str, struct rdlock_addr *out)
{
	char buf[128];
	struct rdlock_addr a;
	const char *colon;
	char *end;

	if (!str || strlen(str) >= sizeof(buf))
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	strcpy(buf, str);

	if (buf[0] == '[') {
		end = strchr(buf, ']');
		if (!end)
			return -EINVAL;
		*end = '\0';
		if (parse_host6(buf + 1, &a))
			return -EINVAL;
		if (end[1] != '\0') {
			if (end[1] != ':' || parse_port(end + 2, &a.port))
				return -EINVAL;
		}
		*out = a;
		return 0;
	}

	colon = strchr(buf, ':');
	if (colon && strchr(colon + 1, ':')) {
		/* Two colons or more: a bare IPv6 address, no port. */
		if (parse_host6(buf, &a))
			return -EINVAL;
		*out = a;
		return 0;
	}
	if (colon) {
		buf[colon - buf] = '\0';
		if (parse_port(colon + 1, &a.port))
			return -EINVAL;
	}
	/* inet_pton() takes only dotted quads, unlike inet_aton(). */
	if (inet_pton(AF_INET, buf, a.addr) != 1)
		return -EINVAL;
	a.family = AF_INET;
	*out = a;
	return 0;
}

int rdlock_parse_node_id(const char *str, __u32 *node_id)
{
	unsigned long v;

	if (!str || parse_uint(str, strlen(str), RDLOCK_MAX_NODES - 1, &v))
		return -EINVAL;
	*node_id = (__u32)v;
	return 0;
}

int rdlock_parse_peer(const char *str, __u32 *node_id, struct rdlock_addr *out)
{
	char idbuf[16];
	const char *eq;
	struct rdlock_addr a;
	__u32 id;

	if (!str)
		return -EINVAL;
	eq = strchr(str, '=');
	if (!eq || (size_t)(eq - str) >= sizeof(idbuf))
		return -EINVAL;
	memcpy(idbuf, str, eq - str);
	idbuf[eq - str] = '\0';
	if (rdlock_parse_node_id(idbuf, &id) || rdlock_parse_addr(eq + 1, &a))
		return -EINVAL;
	*node_id = id;
	*out = a;
	return 0;
}

int rdlock_format_addr(const struct rdlock_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	int n;

	switch (a->family) {
	case AF_INET:
		if (!inet_ntop(AF_INET, a->addr, host, sizeof(host)))
			return -EINVAL;
		if (a->port)
			n = snprintf(buf, len, "%s:%u", host, a->port);
		else
			n = snprintf(buf, len, "%s", host);
		break;
	case AF_INET6:
		if (!inet_ntop(AF_INET6, a->addr, host, sizeof(host)))
			return -EINVAL;
		if (a->scope_id && a->port)
			n = snprintf(buf, len, "[%s%%%u]:%u", host, a->scope_id,
				     a->port);
		else if (a->scope_id)
			n = snprintf(buf, len, "%s%%%u", host, a->scope_id);
		else if (a->port)
			n = snprintf(buf, len, "[%s]:%u", host, a->port);
		else
			n = snprintf(buf, len, "%s", host);
		break;
	default:
		n = snprintf(buf, len, "family-%u", a->family);
		break;
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}
