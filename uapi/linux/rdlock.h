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
 * @flags: no flags are defined yet; must be 0.
 * @cluster_id: non-zero id shared by every node of one cluster; connection
 *	requests carrying another id are refused.
 * @node_id: this node's id, below RDLOCK_MAX_NODES.
 * @addr: the address this node listens on.
 * @reserved: must be zero.
 *
 * Setting the configuration forgets every peer added before.
 */
struct rdlock_cluster_config {
	__u32 version;
	__u32 flags;
	__u32 cluster_id;
	__u32 node_id;
	struct rdlock_addr addr;
	__u64 reserved[4];
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

/**
 * struct rdlock_node_status - one node as this node sees it
 * @node_id: the node.
 * @state: enum rdlock_node_state.
 * @flags: RDLOCK_NODE_* bits.
 * @connects: connections established to it since the cluster went up.
 * @reserved: zero.
 */
struct rdlock_node_status {
	__u32 node_id;
	__u32 state;
	__u32 flags;
	__u32 connects;
	__u64 reserved[2];
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
 * @reserved: must be zero.
 */
struct rdlock_status {
	__u32 version;
	__u32 state;
	__u32 backend;
	__u32 node_id;
	__u32 cluster_id;
	__u32 nr_nodes;
	__u64 nodes;
	__u64 reserved[2];
};

#define RDLOCK_IOC_MAGIC	0xD7

/* Cluster configuration: CAP_SYS_ADMIN. */
#define RDLOCK_IOC_SET_CONFIG	_IOW(RDLOCK_IOC_MAGIC, 0x01, struct rdlock_cluster_config)
#define RDLOCK_IOC_ADD_PEER	_IOW(RDLOCK_IOC_MAGIC, 0x02, struct rdlock_peer)
#define RDLOCK_IOC_DEL_PEER	_IOW(RDLOCK_IOC_MAGIC, 0x03, struct rdlock_peer)
#define RDLOCK_IOC_UP		_IO(RDLOCK_IOC_MAGIC, 0x04)
#define RDLOCK_IOC_DOWN		_IO(RDLOCK_IOC_MAGIC, 0x05)
/* Anyone who can open the device. */
#define RDLOCK_IOC_STATUS	_IOWR(RDLOCK_IOC_MAGIC, 0x06, struct rdlock_status)

#endif /* _UAPI_LINUX_RDLOCK_H */
