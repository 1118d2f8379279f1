/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validation of /dev/rdlock ioctl arguments. Pure functions without side
 * effects so that KUnit can test every rule; the ioctl handlers call them
 * before touching any state, which is how a rejected call changes nothing.
 */
#ifndef _RDLOCK_UAPI_CHECK_H
#define _RDLOCK_UAPI_CHECK_H

#include <linux/build_bug.h>
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <linux/rdlock.h>
#include <rdlock/rdlock.h>

/*
 * The lock structures' sizes are ABI (the ioctl numbers encode them, and
 * read() returns whole struct rdlock_event records): a change fails here.
 */
static_assert(sizeof(struct rdlock_ls_create) == 104);
static_assert(sizeof(struct rdlock_ls_name) == 56);
static_assert(sizeof(struct rdlock_lock_req) == 112);
static_assert(sizeof(struct rdlock_convert_req) == 40);
static_assert(sizeof(struct rdlock_unlock_req) == 24);
static_assert(sizeof(struct rdlock_query) == 120);
static_assert(sizeof(struct rdlock_event) == 32);
static_assert(sizeof(struct rdlock_node_down) == 24);
static_assert(sizeof(struct rdlock_ls_info) == 120);
static_assert(sizeof(struct rdlock_ls_list) == 40);

static inline bool rdlock_all_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/*
 * A uapi name: @len characters of [A-Za-z0-9] and @extra, then NULs to
 * the end of its buffer of @size bytes (none when @len is @size).
 */
static inline bool rdlock_name_ok(const char *name, size_t len, size_t size,
				  const char *extra)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!isascii(name[i]) ||
		    (!isalnum(name[i]) && !strchr(extra, name[i])))
			return false;
	return rdlock_all_zero(name + len, size - len);
}

/**
 * rdlock_addr_to_sockaddr() - validate a uapi address and convert it
 * @ua: the address as userspace passed it.
 * @ss: filled with the sockaddr rdma_cm takes; untouched on error.
 *
 * Return: 0, -EAFNOSUPPORT for a family other than IPv4/IPv6, or -EINVAL
 * for stray bytes, a scope on IPv4, or an address no peer can have
 * (unspecified, multicast, limited broadcast).
 */
static inline int rdlock_addr_to_sockaddr(const struct rdlock_addr *ua,
					  struct sockaddr_storage *ss)
{
	u16 port = ua->port ? ua->port : RDLOCK_DEFAULT_PORT;

	switch (ua->family) {
	case AF_INET: {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		__be32 a;

		if (ua->scope_id || !rdlock_all_zero(ua->addr + 4, 12))
			return -EINVAL;
		memcpy(&a, ua->addr, sizeof(a));
		/* 0.0.0.0/8 means "this network": no peer is there. */
		if ((ntohl(a) >> 24) == 0 || ipv4_is_multicast(a) ||
		    ipv4_is_lbcast(a))
			return -EINVAL;
		memset(ss, 0, sizeof(*ss));
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = a;
		return 0;
	}
	case AF_INET6: {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		/* ff00::/8 is multicast; :: names no host. */
		if (ua->addr[0] == 0xff ||
		    rdlock_all_zero(ua->addr, sizeof(ua->addr)))
			return -EINVAL;
		memset(ss, 0, sizeof(*ss));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, ua->addr, sizeof(ua->addr));
		sin6->sin6_scope_id = ua->scope_id;
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}

/* Equal family, address, port and scope: the same rdma_cm endpoint. */
static inline bool rdlock_sockaddr_equal(const struct sockaddr_storage *a,
					 const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       x->sin6_scope_id == y->sin6_scope_id &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr,
			       sizeof(x->sin6_addr));
	}
	return false;
}

/* The IPv4 address inside @sa, a plain or a v4-mapped IPv6 one, or 0. */
static inline __be32 rdlock_sockaddr_v4(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *x = (const void *)sa;

	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
	if (sa->sa_family == AF_INET6 && !x->sin6_addr.s6_addr32[0] &&
	    !x->sin6_addr.s6_addr32[1] &&
	    x->sin6_addr.s6_addr32[2] == htonl(0x0000ffff))
		return x->sin6_addr.s6_addr32[3];
	return 0;
}

/**
 * rdlock_sockaddr_same_host() - does a connection come from a node's address
 * @node: the node's configured address.
 * @from: the source address of a connection request.
 *
 * Ports differ (a connection comes from an ephemeral port) and rdma_cm may
 * present an IPv4 source as v4-mapped IPv6: both are the same host.
 *
 * Return: true if the addresses (and IPv6 scopes) are equal.
 */
static inline bool rdlock_sockaddr_same_host(const struct sockaddr_storage *node,
					     const struct sockaddr *from)
{
	const struct sockaddr_in6 *x = (const void *)node, *y = (const void *)from;
	__be32 a = rdlock_sockaddr_v4((const struct sockaddr *)node);

	if (a || rdlock_sockaddr_v4(from))
		return a == rdlock_sockaddr_v4(from);
	if (node->ss_family != AF_INET6 || from->sa_family != AF_INET6)
		return false;
	return x->sin6_scope_id == y->sin6_scope_id &&
	       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
}

/**
 * rdlock_check_config() - validate RDLOCK_IOC_SET_CONFIG's argument
 * @cfg: the copied-in structure.
 * @ss: receives the listen address.
 *
 * Return: 0 or a negative errno as documented in uapi.rst.
 */
static inline int rdlock_check_config(const struct rdlock_cluster_config *cfg,
				      struct sockaddr_storage *ss)
{
	if (cfg->version != RDLOCK_UAPI_VERSION ||
	    (cfg->flags & ~RDLOCK_CONFIG_FLAGS) ||
	    !rdlock_all_zero(cfg->reserved, sizeof(cfg->reserved)))
		return -EINVAL;
	/* The name: NUL-padded, possibly all RDLOCK_CLUSTER_NAME_MAX long. */
	if (!rdlock_name_ok(cfg->name,
			    strnlen(cfg->name, RDLOCK_CLUSTER_NAME_MAX),
			    RDLOCK_CLUSTER_NAME_MAX, "_.-"))
		return -EINVAL;
	if (!cfg->cluster_id || cfg->node_id >= RDLOCK_MAX_NODES)
		return -EINVAL;
	return rdlock_addr_to_sockaddr(&cfg->addr, ss);
}

/**
 * rdlock_check_peer() - validate the argument of ADD_PEER and DEL_PEER
 * @peer: the copied-in structure.
 * @ss: receives the address; NULL when only the id matters (DEL_PEER),
 *	in which case an all-zero address is accepted too.
 *
 * Return: 0 or a negative errno as documented in uapi.rst.
 */
static inline int rdlock_check_peer(const struct rdlock_peer *peer,
				    struct sockaddr_storage *ss)
{
	struct sockaddr_storage scratch;

	if (peer->version != RDLOCK_UAPI_VERSION ||
	    !rdlock_all_zero(peer->reserved, sizeof(peer->reserved)))
		return -EINVAL;
	if (peer->node_id >= RDLOCK_MAX_NODES)
		return -EINVAL;
	if (!ss) {
		if (rdlock_all_zero(&peer->addr, sizeof(peer->addr)))
			return 0;
		ss = &scratch;
	}
	return rdlock_addr_to_sockaddr(&peer->addr, ss);
}

/**
 * rdlock_check_node_down() - validate RDLOCK_IOC_NODE_DOWN's argument
 * @nd: the copied-in structure.
 *
 * Return: 0 or -EINVAL (whether the node is configured is the cluster's).
 */
static inline int rdlock_check_node_down(const struct rdlock_node_down *nd)
{
	if (nd->version != RDLOCK_UAPI_VERSION ||
	    !rdlock_all_zero(nd->reserved, sizeof(nd->reserved)) ||
	    nd->node_id >= RDLOCK_MAX_NODES)
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_key_arg() - validate RDLOCK_IOC_SET_KEY's argument
 * @k: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_key_arg(const struct rdlock_cluster_key *k)
{
	if (k->version != RDLOCK_UAPI_VERSION ||
	    !rdlock_all_zero(k->reserved, sizeof(k->reserved)))
		return -EINVAL;
	if (k->len && (k->len < RDLOCK_KEY_MIN || k->len > RDLOCK_KEY_MAX))
		return -EINVAL;
	if (!rdlock_all_zero(k->key + k->len, RDLOCK_KEY_MAX - k->len))
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_status() - validate RDLOCK_IOC_STATUS's input fields
 * @st: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_status(const struct rdlock_status *st)
{
	if (st->version != RDLOCK_UAPI_VERSION ||
	    st->nr_nodes > RDLOCK_MAX_NODES)
		return -EINVAL;
	return 0;
}

/**
 * rdlock_ls_check_name() - is @name a valid lockspace name
 * @name: a buffer of RDLOCK_LS_NAME_MAX bytes, or a shorter C string.
 * @padded: @name is a uapi buffer: it must hold a NUL and only NULs after.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_ls_check_name(const char *name, bool padded)
{
	size_t len = strnlen(name, RDLOCK_LS_NAME_MAX);

	if (!len || len >= RDLOCK_LS_NAME_MAX)
		return -EINVAL;
	/* A C string is checked up to its NUL only. */
	if (!rdlock_name_ok(name, len, padded ? RDLOCK_LS_NAME_MAX : len,
			    "_.:-"))
		return -EINVAL;
	return 0;
}

/**
 * rdlock_ls_cql_queue_bits() - a CQL lockspace's queue bits, default resolved
 * @attr: the attributes.
 *
 * Return: @attr->queue_bits, or the default for 0.
 */
static inline u32 rdlock_ls_cql_queue_bits(const struct rdlock_ls_attr *attr)
{
	return attr->queue_bits ?: RDLOCK_CQL_QUEUE_BITS_DEFAULT;
}

/**
 * rdlock_ls_cql_version_bits() - a CQL lockspace's version bits, resolved
 * @attr: the attributes.
 *
 * Return: @attr->version_bits, or the default for 0.
 */
static inline u32 rdlock_ls_cql_version_bits(const struct rdlock_ls_attr *attr)
{
	return attr->version_bits ?: RDLOCK_CQL_VERSION_BITS_DEFAULT;
}

/*
 * Slots of a name's value block in an RDLOCK_LS_LVB lockspace (a kernel
 * users' flag, which rdlock_ls_check_attr() refuses through the uapi):
 * a state word, then RDLOCK_LVB_LEN bytes.
 */
#define RDLOCK_LS_LVB_SLOTS	(1 + RDLOCK_LVB_LEN / 8)

/**
 * rdlock_ls_entry_slots() - slots of one name entry: tag word and lock
 * @attr: the attributes; a CQL queue_bits in range.
 *
 * Return: 2, or 2 + the queue capacity for CQL; with RDLOCK_LS_GATE
 * (not CQL) one more, the gate word after the lock word; with
 * RDLOCK_LS_LVB, RDLOCK_LS_LVB_SLOTS more, at the end.
 */
static inline u32 rdlock_ls_entry_slots(const struct rdlock_ls_attr *attr)
{
	u32 bits = rdlock_ls_cql_queue_bits(attr);
	u32 lvb = attr->flags & RDLOCK_LS_LVB ? RDLOCK_LS_LVB_SLOTS : 0;

	if (attr->proto != RDLOCK_PROTO_CQL)
		return 2 + !!(attr->flags & RDLOCK_LS_GATE) + lvb;
	return 2 + lvb + (1U << (bits > RDLOCK_CQL_QUEUE_BITS_MAX ?
				 RDLOCK_CQL_QUEUE_BITS_MAX : bits));
}

/**
 * rdlock_ls_check_attr() - are @attr valid lockspace attributes
 * @attr: the attributes.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_ls_check_attr(const struct rdlock_ls_attr *attr)
{
	if (attr->proto >= RDLOCK_PROTO_NR || attr->flags & ~RDLOCK_LS_FLAGS ||
	    attr->slots < 2 || attr->slots > RDLOCK_LS_SLOTS_MAX ||
	    attr->slots % 2 ||
	    (attr->lease_ms && attr->lease_ms < RDLOCK_LEASE_MS_MIN))
		return -EINVAL;
	if (attr->proto != RDLOCK_PROTO_CQL)
		return attr->queue_bits || attr->version_bits ||
		       attr->flags & RDLOCK_LS_CQL_FLAGS ? -EINVAL : 0;
	/* Phase-fair is a policy of the hierarchy's local locks. */
	if ((attr->flags & RDLOCK_LS_CQL_FLAGS) == RDLOCK_LS_CQL_PHASE_FAIR)
		return -EINVAL;
	/* CQL: no leases, no update words, room for one lock at least. */
	if ((attr->queue_bits &&
	     (attr->queue_bits < RDLOCK_CQL_QUEUE_BITS_MIN ||
	      attr->queue_bits > RDLOCK_CQL_QUEUE_BITS_MAX)) ||
	    (attr->version_bits &&
	     (attr->version_bits < RDLOCK_CQL_VERSION_BITS_MIN ||
	      attr->version_bits > RDLOCK_CQL_VERSION_BITS_MAX)) ||
	    attr->lease_ms || attr->flags & RDLOCK_LS_UPDATE ||
	    attr->slots < rdlock_ls_entry_slots(attr))
		return -EINVAL;
	return 0;
}

/**
 * rdlock_ls_check_kernel_attr() - are @attr valid for rdlock_ls_open()
 * @attr: a kernel user's attributes, with its kernel-only flags.
 *
 * The uapi's rules (rdlock_ls_check_attr()) with the kernel-only flags
 * taken out, then theirs (but the gate's, which asks the protocol): an
 * entry with its gate and value block fits the region; a placed
 * lockspace has up to RDLOCK_LS_SLOTS_MAX slots per node's area and an
 * entry per area with the most nodes a cluster has, and no update
 * locks. An update holder's upgrade waits for the readers in its word,
 * and in a placed lockspace that word may outlive the node its entry was
 * on: the readers of a node declared down leave it only after every
 * survivor moved its locks of the node's names, and a move waits for a
 * lock's upgrade to end (rdlock_ls_node_down(), design.rst).
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_ls_check_kernel_attr(const struct rdlock_ls_attr *attr)
{
	struct rdlock_ls_attr plain = *attr;

	plain.flags &= ~(RDLOCK_LS_LVB | RDLOCK_LS_GATE | RDLOCK_LS_PLACE |
			 RDLOCK_LS_KEEP_NAMES);
	if (attr->flags & RDLOCK_LS_PLACE &&
	    attr->slots <= RDLOCK_LS_PLACE_SLOTS_MAX)
		plain.slots = attr->slots < RDLOCK_LS_SLOTS_MAX ?
			      attr->slots : RDLOCK_LS_SLOTS_MAX;
	if (rdlock_ls_check_attr(&plain))
		return -EINVAL;
	if ((attr->flags & (RDLOCK_LS_LVB | RDLOCK_LS_GATE) &&
	     attr->slots < rdlock_ls_entry_slots(attr)) ||
	    (attr->flags & RDLOCK_LS_PLACE &&
	     (attr->flags & RDLOCK_LS_UPDATE ||
	      attr->slots < rdlock_ls_entry_slots(attr) * RDLOCK_MAX_NODES)))
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_ls_create() - validate RDLOCK_IOC_LS_CREATE's argument
 * @c: the copied-in structure.
 * @attr: receives the lockspace attributes (not for RDLOCK_LS_DLM, whose
 *	attributes are the DLM layer's).
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_ls_create(const struct rdlock_ls_create *c,
					 struct rdlock_ls_attr *attr)
{
	if (c->version != RDLOCK_UAPI_VERSION || c->pad || c->mode > 0777 ||
	    !rdlock_all_zero(c->reserved, sizeof(c->reserved)) ||
	    rdlock_ls_check_name(c->name, true))
		return -EINVAL;
	/* The DLM layer fixes a DLM lockspace's protocol and geometry. */
	if (c->flags & RDLOCK_LS_DLM)
		return c->flags != RDLOCK_LS_DLM || c->proto || c->lease_ms ||
		       c->omega_us || c->slots || c->queue_bits ||
		       c->version_bits ? -EINVAL : 0;
	attr->proto = c->proto;
	attr->flags = c->flags;
	attr->lease_ms = c->lease_ms;
	attr->omega_us = c->omega_us;
	attr->slots = c->slots;
	attr->queue_bits = c->queue_bits;
	attr->version_bits = c->version_bits;
	return rdlock_ls_check_attr(attr);
}

/**
 * rdlock_check_ls_name() - validate the argument of LS_REMOVE and JOIN
 * @n: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_ls_name(const struct rdlock_ls_name *n)
{
	if (n->version != RDLOCK_UAPI_VERSION || n->flags ||
	    !rdlock_all_zero(n->reserved, sizeof(n->reserved)))
		return -EINVAL;
	return rdlock_ls_check_name(n->name, true);
}

/**
 * rdlock_check_ls_list() - validate RDLOCK_IOC_LS_LIST's input fields
 * @l: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_ls_list(const struct rdlock_ls_list *l)
{
	if (l->version != RDLOCK_UAPI_VERSION ||
	    (l->flags & ~RDLOCK_LS_LIST_FLAGS) || l->pad || l->reserved ||
	    (!(l->flags & RDLOCK_LS_LIST_DLM_NAMES) && l->dlm_names) ||
	    l->count > RDLOCK_LS_LIST_MAX)
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_stats() - validate RDLOCK_IOC_STATS's input fields
 * @st: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_stats(const struct rdlock_stats *st)
{
	if (st->version != RDLOCK_UAPI_VERSION || st->flags || st->pad ||
	    !rdlock_all_zero(st->reserved, sizeof(st->reserved)) ||
	    st->count > RDLOCK_STATS_MAX)
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_locks() - validate RDLOCK_IOC_LOCKS's input fields
 * @l: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_locks(const struct rdlock_locks *l)
{
	if (l->version != RDLOCK_UAPI_VERSION ||
	    (l->flags & ~RDLOCK_LOCKS_QUERY_FLAGS) ||
	    l->name_len > RDLOCK_RES_NAME_MAX ||
	    !l->name_len != !l->name ||
	    l->count > RDLOCK_LOCKS_MAX)
		return -EINVAL;
	return rdlock_ls_check_name(l->lockspace, true);
}

/* Flags and timeout of a lock or convert request. */
static inline bool rdlock_lock_flags_ok(u32 flags, u32 timeout_ms)
{
	return !(flags & ~RDLOCK_LKF_FLAGS) &&
	       !(flags & RDLOCK_LKF_TRY && timeout_ms);
}

/**
 * rdlock_check_lock_req() - validate RDLOCK_IOC_LOCK's argument
 * @r: the copied-in structure.
 *
 * What depends on the lockspace (update and null locks, lease slots, a
 * DLM lockspace's shorter names) is checked once the file's lockspace is
 * known.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_lock_req(const struct rdlock_lock_req *r)
{
	if (r->version != RDLOCK_UAPI_VERSION || r->pad || r->handle ||
	    !rdlock_all_zero(r->reserved, sizeof(r->reserved)) ||
	    !rdlock_lock_flags_ok(r->flags, r->timeout_ms) ||
	    r->mode >= RDLOCK_LOCK_MODE_NR ||
	    r->lease_slots > RDLOCK_LEASE_SLOTS_MAX ||
	    !r->name_len || r->name_len > RDLOCK_RES_NAME_MAX ||
	    !rdlock_all_zero(r->name + r->name_len,
			     RDLOCK_RES_NAME_MAX - r->name_len))
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_convert() - validate RDLOCK_IOC_CONVERT's argument
 * @c: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_convert(const struct rdlock_convert_req *c)
{
	if (c->version != RDLOCK_UAPI_VERSION || c->pad ||
	    !rdlock_all_zero(c->reserved, sizeof(c->reserved)) ||
	    !rdlock_lock_flags_ok(c->flags, c->timeout_ms) ||
	    c->mode >= RDLOCK_LOCK_MODE_NR)
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_unlock() - validate RDLOCK_IOC_UNLOCK's argument
 * @u: the copied-in structure.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_unlock(const struct rdlock_unlock_req *u)
{
	if (u->version != RDLOCK_UAPI_VERSION ||
	    !rdlock_all_zero(u->reserved, sizeof(u->reserved)))
		return -EINVAL;
	return 0;
}

/**
 * rdlock_check_query() - validate RDLOCK_IOC_QUERY's input fields
 * @q: the copied-in structure; the output fields are ignored.
 *
 * Return: 0 or -EINVAL.
 */
static inline int rdlock_check_query(const struct rdlock_query *q)
{
	if (q->version != RDLOCK_UAPI_VERSION ||
	    !rdlock_all_zero(q->reserved, sizeof(q->reserved)))
		return -EINVAL;
	return 0;
}

#endif /* _RDLOCK_UAPI_CHECK_H */
