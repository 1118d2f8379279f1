/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rdlock: distributed locks over RDMA - userspace API of /dev/rdlock.
 *
 * All structures have fixed sizes, explicit padding and reserved fields
 * that must be zero; a structure carrying a version field is rejected with
 * -EINVAL unless it holds RDLOCK_UAPI_VERSION. See
 * Documentation/rdlock/uapi.rst for every ioctl and its errors.
 */
#ifndef _UAPI_LINUX_RDLOCK_H
#define _UAPI_LINUX_RDLOCK_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define RDLOCK_UAPI_VERSION	1

/* Node ids are 0 .. RDLOCK_MAX_NODES - 1. */
#define RDLOCK_MAX_NODES	32

/* rdma_cm port used when struct rdlock_addr.port is 0. */
#define RDLOCK_DEFAULT_PORT	18600

/**
 * struct rdlock_addr - an IP address that rdma_cm resolves to an RDMA device
 * @family: AF_INET (2) or AF_INET6 (10).
 * @port: rdma_cm port in host byte order; 0 selects RDLOCK_DEFAULT_PORT.
 * @scope_id: IPv6 scope (interface index); must be 0 for AF_INET.
 * @addr: the address in network byte order; an IPv4 address uses the first
 *	four bytes and the remaining twelve must be zero.
 */
struct rdlock_addr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/**
 * struct rdlock_cluster_config - this node's place in the cluster
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: RDLOCK_CONFIG_* bits; others must be 0.
 * @cluster_id: non-zero id shared by every node of one cluster; connection
 *	requests carrying another id are refused.
 * @node_id: this node's id, below RDLOCK_MAX_NODES.
 * @addr: the address this node listens on.
 * @name: the cluster's name, NUL-padded: 0 (none) to
 *	RDLOCK_CLUSTER_NAME_MAX characters of [A-Za-z0-9_.-]. A file system
 *	whose disk names another cluster is refused (the OCFS2 plug-in
 *	compares it with the name mkfs.ocfs2 wrote, as fs/dlm compares it
 *	with its cluster engine's).
 * @reserved: must be zero.
 *
 * Setting the configuration forgets every peer added before.
 */
/*
 * RDLOCK_CONFIG_INSECURE_NO_KEY: let RDLOCK_IOC_UP run without a cluster
 * key (RDLOCK_IOC_SET_KEY), which it otherwise refuses with ENOKEY.
 * Insecure, for tests only: any host on the fabric that takes a node's
 * address then connects as that node and reads and writes the lock tables.
 */
#define RDLOCK_CONFIG_INSECURE_NO_KEY	_BITUL(0)
#define RDLOCK_CONFIG_FLAGS		RDLOCK_CONFIG_INSECURE_NO_KEY

/* A cluster name's characters at most: OCFS2's (mkfs.ocfs2 --cluster-name). */
#define RDLOCK_CLUSTER_NAME_MAX		16

struct rdlock_cluster_config {
	__u32 version;
	__u32 flags;
	__u32 cluster_id;
	__u32 node_id;
	struct rdlock_addr addr;
	char name[RDLOCK_CLUSTER_NAME_MAX];
	__u64 reserved[2];
};

/**
 * struct rdlock_peer - another node of the cluster
 * @version: RDLOCK_UAPI_VERSION.
 * @node_id: the peer's id, below RDLOCK_MAX_NODES and not our own.
 * @addr: the peer's listen address (ignored by RDLOCK_IOC_DEL_PEER, which
 *	must still pass it zeroed or valid).
 * @reserved: must be zero.
 */
struct rdlock_peer {
	__u32 version;
	__u32 node_id;
	struct rdlock_addr addr;
	__u64 reserved[2];
};

/**
 * struct rdlock_node_down - RDLOCK_IOC_NODE_DOWN: a node failed
 * @version: RDLOCK_UAPI_VERSION.
 * @node_id: the node, configured and not this one. It must be dead or
 *	fenced: the ioctl cuts it off this node and releases what it held.
 *	Given on every surviving node (the call waits for all of them).
 * @reserved: must be zero.
 */
struct rdlock_node_down {
	__u32 version;
	__u32 node_id;
	__u64 reserved[2];
};

/* Cluster key lengths in bytes (RDLOCK_IOC_SET_KEY); 0 clears the key. */
#define RDLOCK_KEY_MIN		16
#define RDLOCK_KEY_MAX		64

/**
 * struct rdlock_cluster_key - the cluster's shared secret
 * @version: RDLOCK_UAPI_VERSION.
 * @len: bytes of @key used: 0 (no key) or RDLOCK_KEY_MIN..RDLOCK_KEY_MAX.
 * @key: the key; bytes after @len must be zero.
 * @reserved: must be zero.
 *
 * Every node of a cluster has the same key or none; it is never read
 * back. Setting the configuration clears it.
 */
struct rdlock_cluster_key {
	__u32 version;
	__u32 len;
	__u8 key[RDLOCK_KEY_MAX];
	__u64 reserved[2];
};

/* Values of struct rdlock_status.state. */
enum rdlock_cluster_state {
	RDLOCK_CLUSTER_UNCONFIGURED	= 0,
	RDLOCK_CLUSTER_DOWN		= 1,
	RDLOCK_CLUSTER_CONNECTING	= 2,	/* up, some node not ready */
	RDLOCK_CLUSTER_READY		= 3,	/* every node connected */
};

/* Atomic backends: struct rdlock_status.backend and module parameter. */
enum rdlock_backend {
	RDLOCK_BACKEND_NONE		= 0,	/* not resolved yet */
	RDLOCK_BACKEND_VERBS		= 1,	/* one-sided RDMA atomics */
	RDLOCK_BACKEND_TWOSIDED		= 2,	/* home CPU executes them */
};

/* Values of struct rdlock_node_status.state. */
enum rdlock_node_state {
	RDLOCK_NODE_DISCONNECTED	= 0,
	RDLOCK_NODE_CONNECTING		= 1,
	RDLOCK_NODE_READY		= 2,
};

/* Bits of struct rdlock_node_status.flags. */
#define RDLOCK_NODE_SELF		_BITUL(0)
#define RDLOCK_NODE_VERBS_ATOMICS	_BITUL(1)	/* its device can */
/* Declared down (RDLOCK_IOC_NODE_DOWN), or it declared us down. */
#define RDLOCK_NODE_FENCED		_BITUL(2)
/* Declared down, back with a new table: no lockspace until a handover. */
#define RDLOCK_NODE_RETURNED		_BITUL(3)
/* A member of the cluster engine's current membership (membership=dlm). */
#define RDLOCK_NODE_MEMBER		_BITUL(4)

/**
 * struct rdlock_node_status - one node as this node sees it
 * @node_id: the node.
 * @state: enum rdlock_node_state.
 * @flags: RDLOCK_NODE_* bits.
 * @connects: connections established to it since the cluster went up.
 * @errors: operations on the links to it that failed (a connection
 *	broken under them, or the peer refusing them) since the module was
 *	loaded; "link_errors" of RDLOCK_IOC_STATS.
 * @reserved: zero.
 */
struct rdlock_node_status {
	__u32 node_id;
	__u32 state;
	__u32 flags;
	__u32 connects;
	__u64 errors;
	__u64 reserved;
};

/**
 * struct rdlock_status - cluster state, for RDLOCK_IOC_STATUS
 * @version: RDLOCK_UAPI_VERSION.
 * @state: enum rdlock_cluster_state (out).
 * @backend: enum rdlock_backend the cluster agreed on (out).
 * @node_id: this node's id (out).
 * @cluster_id: the cluster id (out).
 * @nr_nodes: in: capacity of the @nodes array, at most RDLOCK_MAX_NODES;
 *	out: number of configured nodes, this one included. When the array
 *	is too small it is filled as far as it goes.
 * @nodes: user pointer to an array of struct rdlock_node_status, sorted
 *	by node id; may be 0 when @nr_nodes is 0.
 * @flags: RDLOCK_STATUS_* bits (out; ignored on input).
 * @membership: enum rdlock_membership_state (out; ignored on input).
 * @name: user pointer to RDLOCK_CLUSTER_NAME_MAX bytes that receive the
 *	cluster's name (RDLOCK_IOC_SET_CONFIG), NUL-padded, all NULs when it
 *	has none or is not configured; 0 when not wanted.
 */
struct rdlock_status {
	__u32 version;
	__u32 state;
	__u32 backend;
	__u32 node_id;
	__u32 cluster_id;
	__u32 nr_nodes;
	__u64 nodes;
	__u32 flags;
	__u32 membership;
	__u64 name;
};

/*
 * Values of struct rdlock_status.membership: where the node is in the
 * membership its cluster engine gives (module parameter membership=dlm:
 * corosync and dlm_controld), or STATIC (membership=static: none; every
 * configured node is a member).
 */
enum rdlock_membership_state {
	RDLOCK_MEMBERSHIP_STATIC	= 0,
	RDLOCK_MEMBERSHIP_OUT		= 1,	/* cluster down: not joined */
	RDLOCK_MEMBERSHIP_JOINING	= 2,	/* joining, nothing granted */
	RDLOCK_MEMBERSHIP_STOPPED	= 3,	/* a change: nothing granted */
	RDLOCK_MEMBERSHIP_RECOVERING	= 4,	/* declaring the failed down */
	RDLOCK_MEMBERSHIP_RUNNING	= 5,	/* a member of a quorate cluster */
};

/* The cluster key is set (RDLOCK_IOC_SET_KEY). */
#define RDLOCK_STATUS_KEYED		_BITUL(0)
/* The configuration allows up without a key (RDLOCK_CONFIG_INSECURE_NO_KEY). */
#define RDLOCK_STATUS_INSECURE_NO_KEY	_BITUL(1)

#define RDLOCK_IOC_MAGIC	0xD7

/* Cluster configuration: CAP_SYS_ADMIN. */
#define RDLOCK_IOC_SET_CONFIG	_IOW(RDLOCK_IOC_MAGIC, 0x01, struct rdlock_cluster_config)
#define RDLOCK_IOC_ADD_PEER	_IOW(RDLOCK_IOC_MAGIC, 0x02, struct rdlock_peer)
#define RDLOCK_IOC_DEL_PEER	_IOW(RDLOCK_IOC_MAGIC, 0x03, struct rdlock_peer)
#define RDLOCK_IOC_UP		_IO(RDLOCK_IOC_MAGIC, 0x04)
#define RDLOCK_IOC_DOWN		_IO(RDLOCK_IOC_MAGIC, 0x05)
#define RDLOCK_IOC_SET_KEY	_IOW(RDLOCK_IOC_MAGIC, 0x07, struct rdlock_cluster_key)
#define RDLOCK_IOC_NODE_DOWN	_IOW(RDLOCK_IOC_MAGIC, 0x08, struct rdlock_node_down)
/* Anyone who can open the device. */
#define RDLOCK_IOC_STATUS	_IOWR(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_status)

/* ------------------------------------------------------------------ */
/* Lockspaces and locks (numbers 0x20 and up)                         */

/* Lockspace names: 1 .. RDLOCK_LS_NAME_MAX - 1 of [A-Za-z0-9_.:-], NUL-padded. */
#define RDLOCK_LS_NAME_MAX	32
/* Lock (resource) names: 1 .. RDLOCK_RES_NAME_MAX arbitrary bytes. */
#define RDLOCK_RES_NAME_MAX	64
/* Locks one open file may hold at once; RDLOCK_IOC_LOCK fails with ENOLCK. */
#define RDLOCK_FILE_LOCKS_MAX	4096

/* Lock protocols: struct rdlock_ls_create.proto. */
enum rdlock_proto_id {
	RDLOCK_PROTO_BAKERY	= 0,	/* DSLR bakery (ticket) lock */
	RDLOCK_PROTO_CASLOCK	= 1,	/* CAS spinlock baseline */
	RDLOCK_PROTO_CQL	= 2,	/* DecLock CQL queue-notify lock */
	RDLOCK_PROTO_NR,
};

/*
 * RDLOCK_PROTO_CQL: struct rdlock_ls_create.queue_bits (log2 of each
 * lock's queue capacity) and .version_bits (entry version width); 0 means
 * the default. A CQL lock takes 1 + 2^queue_bits slots besides its name's
 * tag word. Documentation/rdlock/cql.rst.
 */
#define RDLOCK_CQL_QUEUE_BITS_MIN	1
#define RDLOCK_CQL_QUEUE_BITS_MAX	12
#define RDLOCK_CQL_QUEUE_BITS_DEFAULT	5
#define RDLOCK_CQL_VERSION_BITS_MIN	2
#define RDLOCK_CQL_VERSION_BITS_MAX	16
#define RDLOCK_CQL_VERSION_BITS_DEFAULT	16

/*
 * Lock modes. A DLM lockspace (RDLOCK_LS_DLM) has fs/dlm's NL, PR and EX:
 * PR is the shared mode and has its value; NL holds nothing but keeps the
 * lock (its handle and resource). Other lockspaces have SH, EX and, with
 * RDLOCK_LS_UPDATE, UP.
 */
enum rdlock_lock_mode {
	RDLOCK_LOCK_SH		= 0,	/* shared */
	RDLOCK_LOCK_EX		= 1,	/* exclusive */
	RDLOCK_LOCK_UP		= 2,	/* update: beside readers, then upgrade */
	RDLOCK_LOCK_NL		= 3,	/* null: DLM lockspaces only */
	RDLOCK_LOCK_MODE_NR,
	RDLOCK_LOCK_PR		= RDLOCK_LOCK_SH,	/* protected read */
};

/* struct rdlock_ls_create.flags */
#define RDLOCK_LS_UPDATE	_BITUL(0)	/* words allow RDLOCK_LOCK_UP */
/*
 * A DLM lockspace: modes NL, PR, EX, every conversion between them, and
 * blocking notices read from the file (struct rdlock_event). Its protocol,
 * lease and slots are the DLM layer's: proto, lease_ms, omega_us, slots,
 * queue_bits and version_bits must be 0, and no other flag may be set.
 */
#define RDLOCK_LS_DLM		_BITUL(1)
/*
 * RDLOCK_PROTO_CQL only: hierarchical locking (one queue entry per node,
 * the node's other clients wait on it), task-fair; with
 * RDLOCK_LS_CQL_PHASE_FAIR phase-fair. Either with another protocol, or
 * PHASE_FAIR without HIER: EINVAL. Documentation/rdlock/cql.rst.
 */
#define RDLOCK_LS_CQL_HIER	_BITUL(2)
#define RDLOCK_LS_CQL_PHASE_FAIR	_BITUL(3)
#define RDLOCK_LS_CQL_FLAGS	(RDLOCK_LS_CQL_HIER | RDLOCK_LS_CQL_PHASE_FAIR)
#define RDLOCK_LS_FLAGS		(RDLOCK_LS_UPDATE | RDLOCK_LS_CQL_FLAGS)

/* Largest struct rdlock_lock_req.lease_slots; 16 in an RDLOCK_LS_UPDATE one. */
#define RDLOCK_LEASE_SLOTS_MAX		256
#define RDLOCK_LEASE_SLOTS_MAX_UPDATE	16

/*
 * Smallest non-zero struct rdlock_ls_create.lease_ms: ten times the longest
 * pause between a waiter's polls, so that waiters do not reset holders
 * that are merely between two of their polls.
 */
#define RDLOCK_LEASE_MS_MIN	100

/* Largest struct rdlock_ls_create.slots. */
#define RDLOCK_LS_SLOTS_MAX	65536

/**
 * struct rdlock_ls_create - create (or join the cluster's) lockspace
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: RDLOCK_LS_* bits.
 * @name: lockspace name, NUL-padded; see RDLOCK_LS_NAME_MAX.
 * @proto: enum rdlock_proto_id.
 * @lease_ms: 0: holders keep locks until they release them; T: DSLR
 *	leases of T ms (a stalled holder is reset by waiters after 2T), at
 *	least RDLOCK_LEASE_MS_MIN.
 * @omega_us: shortest sleep of waiters between polls; 0: 50 us.
 * @slots: lock-table slots the lockspace takes on every node, even, 2 ..
 *	RDLOCK_LS_SLOTS_MAX; it holds @slots / 2 distinct names per node
 *	(CQL: @slots / (2 + 2^@queue_bits), at least 1) while in use.
 * @uid: owner of the lockspace (for @mode).
 * @gid: group of the lockspace (for @mode).
 * @mode: permission bits as for a file, at most 0777: read lets a caller
 *	join and take shared locks, write also exclusive and update locks.
 * @queue_bits: RDLOCK_PROTO_CQL only (else 0): RDLOCK_CQL_QUEUE_BITS_MIN ..
 *	_MAX, 0 for RDLOCK_CQL_QUEUE_BITS_DEFAULT.
 * @version_bits: RDLOCK_PROTO_CQL only (else 0):
 *	RDLOCK_CQL_VERSION_BITS_MIN .. _MAX, 0 for the default.
 * @pad: must be zero.
 * @reserved: must be zero.
 *
 * The first node to create a name fixes @flags, @proto, @lease_ms, @slots,
 * @queue_bits and @version_bits for the cluster; others must pass the same
 * values (EEXIST). A CQL lockspace has neither leases nor update locks: a
 * non-zero @lease_ms or RDLOCK_LS_UPDATE with it is EINVAL. @omega_us,
 * @uid, @gid and @mode are this node's own.
 */
struct rdlock_ls_create {
	__u32 version;
	__u32 flags;
	char name[RDLOCK_LS_NAME_MAX];
	__u32 proto;
	__u32 lease_ms;
	__u32 omega_us;
	__u32 slots;
	__u32 uid;
	__u32 gid;
	__u32 mode;
	__u8 queue_bits;
	__u8 version_bits;
	__u16 pad;
	__u64 reserved[4];
};

/**
 * struct rdlock_ls_name - names a lockspace: REMOVE, JOIN
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: none defined; must be 0.
 * @name: lockspace name, NUL-padded.
 * @reserved: must be zero.
 */
struct rdlock_ls_name {
	__u32 version;
	__u32 flags;
	char name[RDLOCK_LS_NAME_MAX];
	__u64 reserved[2];
};

/* struct rdlock_lock_req.flags */
#define RDLOCK_LKF_TRY		_BITUL(0)	/* fail with EAGAIN, never wait */
#define RDLOCK_LKF_FLAGS	RDLOCK_LKF_TRY

/**
 * struct rdlock_lock_req - take a lock in the file's lockspace
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: RDLOCK_LKF_* bits.
 * @mode: enum rdlock_lock_mode.
 * @timeout_ms: 0: wait until granted (a fatal signal still ends the wait);
 *	otherwise fail with ETIMEDOUT after this long. Must be 0 with
 *	RDLOCK_LKF_TRY.
 * @lease_slots: multi-slot lease (DSLR 5.1): tickets taken, 0 means 1, at
 *	most RDLOCK_LEASE_SLOTS_MAX (_UPDATE in an RDLOCK_LS_UPDATE lockspace).
 * @name_len: bytes of @name used, 1 .. RDLOCK_RES_NAME_MAX.
 * @name: the lock's name; bytes past @name_len must be zero.
 * @handle: out: what UNLOCK, CONVERT and QUERY take; must be 0 on input.
 * @pad: must be zero.
 * @reserved: must be zero.
 */
struct rdlock_lock_req {
	__u32 version;
	__u32 flags;
	__u32 mode;
	__u32 timeout_ms;
	__u32 lease_slots;
	__u32 name_len;
	__u8 name[RDLOCK_RES_NAME_MAX];
	__u32 handle;
	__u32 pad;
	__u64 reserved[2];
};

/**
 * struct rdlock_convert_req - change the mode of a held lock
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: RDLOCK_LKF_TRY or 0.
 * @handle: the lock.
 * @mode: the new mode: RDLOCK_LOCK_EX for an update lock (upgrade: waits
 *	for the readers ahead of it to leave), RDLOCK_LOCK_UP for an
 *	upgraded one (it stops writing). Other conversions: EOPNOTSUPP.
 * @timeout_ms: as for struct rdlock_lock_req; on ETIMEDOUT, EAGAIN or
 *	EINTR the lock is kept in its old mode.
 * @pad: must be zero.
 * @reserved: must be zero.
 */
struct rdlock_convert_req {
	__u32 version;
	__u32 flags;
	__u32 handle;
	__u32 mode;
	__u32 timeout_ms;
	__u32 pad;
	__u64 reserved[2];
};

/**
 * struct rdlock_unlock_req - release a lock
 * @version: RDLOCK_UAPI_VERSION.
 * @handle: the lock.
 * @reserved: must be zero.
 */
struct rdlock_unlock_req {
	__u32 version;
	__u32 handle;
	__u64 reserved[2];
};

/**
 * struct rdlock_query - what a held lock is
 * @version: RDLOCK_UAPI_VERSION.
 * @handle: the lock (in).
 * @mode: out: enum rdlock_lock_mode it is held in now (an upgraded update
 *	lock reads RDLOCK_LOCK_EX).
 * @home_node: out: node whose table holds the lock word.
 * @slot: out: slot of the lock word in that table.
 * @name_len: out: length of @name.
 * @name: out: the lock's name.
 * @held_ms: out: how long it has been held.
 * @remote_ops: out: remote operations its acquisition took.
 * @pad: zero.
 * @reserved: must be zero.
 */
struct rdlock_query {
	__u32 version;
	__u32 handle;
	__u32 mode;
	__u32 home_node;
	__u32 slot;
	__u32 name_len;
	__u8 name[RDLOCK_RES_NAME_MAX];
	__u64 held_ms;
	__u32 remote_ops;
	__u32 pad;
	__u64 reserved[2];
};

/* Values of struct rdlock_event.type. */
enum rdlock_event_type {
	/*
	 * A request of another file (of this node or another) waits because
	 * of a lock of this file: give it back, or convert it down, soon.
	 */
	RDLOCK_EVENT_BLOCKING	= 1,
};

/**
 * struct rdlock_event - what read() of a file joined to a DLM lockspace
 *	returns, in whole records
 * @type: enum rdlock_event_type.
 * @handle: the lock of this file that blocks the request.
 * @mode: the mode the blocked request asks for: RDLOCK_LOCK_PR or
 *	RDLOCK_LOCK_EX (the strongest, when several wait).
 * @pad: zero.
 * @reserved: zero.
 *
 * A lock has at most one event queued: later notices for it are merged
 * into it, and it is dropped when the lock no longer blocks that mode (it
 * was converted down or unlocked before the event was read).
 */
struct rdlock_event {
	__u32 type;
	__u32 handle;
	__u32 mode;
	__u32 pad;
	__u64 reserved[2];
};

/* Values of struct rdlock_ls_info.kind. */
enum rdlock_ls_kind {
	/* Created by RDLOCK_IOC_LS_CREATE without RDLOCK_LS_DLM. */
	RDLOCK_LS_KIND_PLAIN	= 0,
	/* Created by RDLOCK_IOC_LS_CREATE with RDLOCK_LS_DLM. */
	RDLOCK_LS_KIND_DLM	= 1,
	/* Opened by a kernel user (OCFS2, the kernel's DLM API), not the uapi. */
	RDLOCK_LS_KIND_KERNEL	= 2,
};

/* Values of struct rdlock_ls_info.state. */
enum rdlock_ls_state {
	RDLOCK_LS_STATE_OPEN	= 0,
	/*
	 * Lost to its users: the cluster lost a lock table since it was
	 * opened (its calls fail with ESHUTDOWN), or a lock of this node in
	 * it could not be moved off a node declared down.
	 */
	RDLOCK_LS_STATE_LOST	= 1,
};

/**
 * struct rdlock_ls_info - one lockspace of this node, for RDLOCK_IOC_LS_LIST
 * @name: its name, NUL-padded: the one RDLOCK_IOC_JOIN and
 *	RDLOCK_IOC_LS_REMOVE take, for RDLOCK_LS_KIND_KERNEL the rdlock
 *	lockspace's own.
 * @core_name: the rdlock lockspace behind it, NUL-padded: for
 *	RDLOCK_LS_KIND_DLM "dlm." and @name, or "dlmh." and a hash of @name
 *	when that is too long; @name for the other kinds.
 * @kind: enum rdlock_ls_kind.
 * @state: enum rdlock_ls_state.
 * @proto: enum rdlock_proto_id of @core_name.
 * @flags: RDLOCK_LS_* bits: RDLOCK_LS_DLM for RDLOCK_LS_KIND_DLM, else
 *	those of RDLOCK_LS_FLAGS that @core_name has.
 * @slots: lock-table slots @core_name takes on every node.
 * @uid: owner given at creation, in the caller's user namespace (the
 *	overflow uid if unmapped); 0 for RDLOCK_LS_KIND_KERNEL.
 * @gid: group given at creation, likewise; 0 for RDLOCK_LS_KIND_KERNEL.
 * @mode: permission bits given at creation; 0 for RDLOCK_LS_KIND_KERNEL.
 * @users: what holds it on this node: for RDLOCK_LS_KIND_DLM its joined
 *	files and its locks not given back yet; for the other kinds the
 *	creation, each joined file and each kernel user's open.
 * @pad: zero.
 * @reserved: zero.
 */
struct rdlock_ls_info {
	char name[RDLOCK_LS_NAME_MAX];
	char core_name[RDLOCK_LS_NAME_MAX];
	__u32 kind;
	__u32 state;
	__u32 proto;
	__u32 flags;
	__u32 slots;
	__u32 uid;
	__u32 gid;
	__u32 mode;
	__u32 users;
	__u32 pad;
	__u64 reserved[2];
};

/* Largest struct rdlock_ls_list.count. */
#define RDLOCK_LS_LIST_MAX	4096

/* Bits of struct rdlock_ls_list.flags. */
/* Fill @dlm_names too. */
#define RDLOCK_LS_LIST_DLM_NAMES	_BITUL(0)
#define RDLOCK_LS_LIST_FLAGS		RDLOCK_LS_LIST_DLM_NAMES
/* Length of one name of struct rdlock_ls_list.dlm_names, its NUL included. */
#define RDLOCK_LS_DLM_NAME_LEN		65

/**
 * struct rdlock_ls_list - this node's lockspaces, for RDLOCK_IOC_LS_LIST
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: RDLOCK_LS_LIST_* bits; others must be 0.
 * @count: in: capacity of the @entries array, at most RDLOCK_LS_LIST_MAX;
 *	out: number of lockspaces this node has. When the array is too
 *	small it is filled as far as it goes: call again with a larger one.
 * @pad: must be zero.
 * @entries: user pointer to an array of struct rdlock_ls_info, in no
 *	defined order; may be 0 when @count is 0.
 * @dlm_names: with RDLOCK_LS_LIST_DLM_NAMES, user pointer to an array of
 *	@count (in) names of RDLOCK_LS_DLM_NAME_LEN bytes each, NUL-padded:
 *	name i is the DLM lockspace name of entry i, the one its user
 *	opened it by (RDLOCK_LS_KIND_DLM: @name; RDLOCK_LS_KIND_KERNEL: the
 *	kernel user's, such as an OCFS2 file system's UUID, when the
 *	lockspace is a DLM lockspace), empty for the others; may be 0 when
 *	@count is 0. Without the flag it must be 0.
 * @reserved: must be zero.
 */
struct rdlock_ls_list {
	__u32 version;
	__u32 flags;
	__u32 count;
	__u32 pad;
	__u64 entries;
	__u64 dlm_names;
	__u64 reserved;
};

/* Largest struct rdlock_stats.count. */
#define RDLOCK_STATS_MAX	4096
/* Length of struct rdlock_stat.name, its NUL padding included. */
#define RDLOCK_STAT_NAME_MAX	40
/* struct rdlock_stat.node of a counter that belongs to no node. */
#define RDLOCK_STAT_NO_NODE	0xffffffffU

/* Bits of struct rdlock_stat.flags. */
/* A level that goes up and down; without it a counter that only grows. */
#define RDLOCK_STAT_GAUGE	_BITUL(0)

/**
 * struct rdlock_stat - one counter of RDLOCK_IOC_STATS
 * @name: what it counts, NUL-padded, of [a-z0-9_]: one of the names
 *	Documentation/rdlock/uapi.rst lists. A name keeps its meaning in
 *	every later version; names may be added, so a reader skips those it
 *	does not know.
 * @lockspace: for a lockspace's counter its name (as struct
 *	rdlock_ls_info.core_name), NUL-padded; else all NULs.
 * @node: for a counter of this node's links to one node, that node's
 *	id; else RDLOCK_STAT_NO_NODE.
 * @flags: RDLOCK_STAT_* bits.
 * @value: its value. Counters start at 0 when the module is loaded (a
 *	lockspace's when it is created on this node).
 */
struct rdlock_stat {
	char name[RDLOCK_STAT_NAME_MAX];
	char lockspace[RDLOCK_LS_NAME_MAX];
	__u32 node;
	__u32 flags;
	__u64 value;
};

/**
 * struct rdlock_stats - this node's counters, for RDLOCK_IOC_STATS
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: no flags are defined yet; must be 0.
 * @count: in: capacity of the @entries array, at most RDLOCK_STATS_MAX;
 *	out: number of counters this node has. When the array is too small
 *	it is filled as far as it goes: call again with a larger one.
 * @pad: must be zero.
 * @entries: user pointer to an array of struct rdlock_stat: the
 *	cluster's counters, then each configured node's, then each
 *	lockspace's; may be 0 when @count is 0.
 * @reserved: must be zero.
 */
struct rdlock_stats {
	__u32 version;
	__u32 flags;
	__u32 count;
	__u32 pad;
	__u64 entries;
	__u64 reserved[2];
};

/* Values of struct rdlock_locks_entry.state. */
enum rdlock_locks_state {
	RDLOCK_LOCKS_GRANTED	= 0,	/* holds @mode */
	RDLOCK_LOCKS_CONVERTING	= 1,	/* holds @mode, waits for @rqmode */
	RDLOCK_LOCKS_WAITING	= 2,	/* holds nothing, waits for @rqmode */
	/* Lost with its lockspace or a node declared down: unlock it. */
	RDLOCK_LOCKS_LOST	= 3,
};

/* struct rdlock_locks_entry's @mode or @rqmode (none) and @home (unknown). */
#define RDLOCK_LOCKS_NONE	0xffffffffU

/* Bits of struct rdlock_locks_entry.flags. */
/* Held EX in a DLM lockspace: the value block was valid at its grant. */
#define RDLOCK_LOCKS_LVB_VALID	_BITUL(0)
/*
 * Another node's wait in a DLM lockspace, as its notice told this node:
 * its granted mode is not known here (@mode RDLOCK_LOCKS_NONE) and,
 * unless this node has a lock of the same name, neither is its name
 * (@name_len 0: @hash alone).
 */
#define RDLOCK_LOCKS_NOTICE	_BITUL(1)

/* Largest struct rdlock_locks.count. */
#define RDLOCK_LOCKS_MAX	65536

/*
 * Bits of struct rdlock_locks.flags. CLUSTER: in a DLM lockspace, every
 * node's locks, each node of the lockspace asked over the network (this
 * node's are read here); the other nodes' waits this node knows from
 * notices are listed only for the nodes that did not answer. A plain
 * lockspace lists this node's locks with or without it.
 */
#define RDLOCK_LOCKS_QUERY_CLUSTER	_BITUL(0)
#define RDLOCK_LOCKS_QUERY_FLAGS	RDLOCK_LOCKS_QUERY_CLUSTER

/**
 * struct rdlock_locks_entry - one lock, for RDLOCK_IOC_LOCKS
 * @name: its name, @name_len bytes (zeroes after them).
 * @name_len: length of @name, 0 when unknown (RDLOCK_LOCKS_NOTICE).
 * @node: the node that holds or waits: this one, or for
 *	RDLOCK_LOCKS_NOTICE the waiter's.
 * @mode: the mode held (enum rdlock_lock_mode: RDLOCK_LOCK_NL, _PR, _EX
 *	in a DLM lockspace; _SH, _EX, _UP in a plain one), or
 *	RDLOCK_LOCKS_NONE.
 * @rqmode: the mode waited for, or RDLOCK_LOCKS_NONE.
 * @state: enum rdlock_locks_state.
 * @flags: RDLOCK_LOCKS_* bits.
 * @id: in a DLM lockspace the lock's id on @node; else 0.
 * @owner: the process (tgid) that took it on this node in a plain
 *	lockspace; 0 for a kernel user's and in a DLM lockspace.
 * @home: the node that holds its lock word, or RDLOCK_LOCKS_NONE
 *	(a DLM lockspace: a lock has several words).
 * @hash: in a DLM lockspace the hash of its name, the same on every node
 *	(what RDLOCK_LOCKS_NOTICE waits are known by); else 0.
 * @ms: milliseconds since it was granted (GRANTED, CONVERTING: since its
 *	current mode, for a DLM lock), or since it began to wait.
 * @reserved: zero.
 */
struct rdlock_locks_entry {
	__u8 name[RDLOCK_RES_NAME_MAX];
	__u32 name_len;
	__u32 node;
	__u32 mode;
	__u32 rqmode;
	__u32 state;
	__u32 flags;
	__u32 id;
	__s32 owner;
	__u32 home;
	__u32 pad;
	__u64 hash;
	__u64 ms;
	__u64 reserved[2];
};

/**
 * struct rdlock_locks - one lockspace's locks on this node, or on every
 *	node of a DLM lockspace, for RDLOCK_IOC_LOCKS
 * @version: RDLOCK_UAPI_VERSION.
 * @flags: RDLOCK_LOCKS_QUERY_* bits.
 * @count: in: capacity of the @entries array, at most RDLOCK_LOCKS_MAX;
 *	out: number of locks. When the array is too small it is filled as
 *	far as it goes: call again with a larger one.
 * @name_len: 0, or the length of @name (at most RDLOCK_RES_NAME_MAX):
 *	the locks of that name only (and in a DLM lockspace the waits known
 *	by its hash).
 * @lockspace: the lockspace, NUL-padded, as struct rdlock_ls_info.name
 *	gives it (a DLM lockspace of the uapi by its name; a kernel user's,
 *	such as OCFS2's, by its rdlock lockspace's).
 * @entries: user pointer to an array of struct rdlock_locks_entry: this
 *	node's locks, then with RDLOCK_LOCKS_QUERY_CLUSTER the other nodes'
 *	as they answer, then in a DLM lockspace the other nodes' waits this
 *	node knows (of the nodes that did not answer, with CLUSTER); may be
 *	0 when @count is 0.
 * @name: user pointer to @name_len bytes; 0 when @name_len is 0.
 * @asked: out (ignored in), RDLOCK_LOCKS_QUERY_CLUSTER in a DLM
 *	lockspace: the other nodes of the lockspace asked, a bit per node id;
 *	else 0.
 * @answered: out (ignored in): of @asked, the nodes whose whole answer
 *	came (a node that does not have the lockspace open, is not connected,
 *	or runs a version without the query does not answer).
 */
struct rdlock_locks {
	__u32 version;
	__u32 flags;
	__u32 count;
	__u32 name_len;
	char lockspace[RDLOCK_LS_NAME_MAX];
	__u64 entries;
	__u64 name;
	__u32 asked;
	__u32 answered;
};

/* Lockspaces: CAP_SYS_ADMIN. */
#define RDLOCK_IOC_LS_CREATE	_IOW(RDLOCK_IOC_MAGIC, 0x20, struct rdlock_ls_create)
#define RDLOCK_IOC_LS_REMOVE	_IOW(RDLOCK_IOC_MAGIC, 0x21, struct rdlock_ls_name)
/* Locks: permission of the lockspace. One lockspace per open file. */
#define RDLOCK_IOC_JOIN		_IOW(RDLOCK_IOC_MAGIC, 0x22, struct rdlock_ls_name)
#define RDLOCK_IOC_LEAVE	_IO(RDLOCK_IOC_MAGIC, 0x23)
#define RDLOCK_IOC_LOCK		_IOWR(RDLOCK_IOC_MAGIC, 0x24, struct rdlock_lock_req)
#define RDLOCK_IOC_UNLOCK	_IOW(RDLOCK_IOC_MAGIC, 0x25, struct rdlock_unlock_req)
#define RDLOCK_IOC_CONVERT	_IOW(RDLOCK_IOC_MAGIC, 0x26, struct rdlock_convert_req)
#define RDLOCK_IOC_QUERY	_IOWR(RDLOCK_IOC_MAGIC, 0x27, struct rdlock_query)
/* Anyone who can open the device. */
#define RDLOCK_IOC_LS_LIST	_IOWR(RDLOCK_IOC_MAGIC, 0x28, struct rdlock_ls_list)
#define RDLOCK_IOC_STATS	_IOWR(RDLOCK_IOC_MAGIC, 0x29, struct rdlock_stats)
/* CAP_SYS_ADMIN: lock names may tell what another user does. */
#define RDLOCK_IOC_LOCKS	_IOWR(RDLOCK_IOC_MAGIC, 0x2a, struct rdlock_locks)

#endif /* _UAPI_LINUX_RDLOCK_H */
