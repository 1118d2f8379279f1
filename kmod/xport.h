/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock transport: what the layers above may use: the lock protocols,
 * lockspaces and the test module the operations, the device layer the
 * configuration, main.c init and exit; never xport-pri.h.
 *
 * Every node owns a lock table of 8-byte slots. Any node, this one
 * included, reaches any slot only through these calls, which go through
 * the cluster's one atomic backend (one-sided RDMA atomics or the home
 * CPU executing them on request); values are always in host byte order.
 * The structures behind the calls are private (xport-pri.h).
 */
#ifndef _RDLOCK_XPORT_H
#define _RDLOCK_XPORT_H

#include <linux/socket.h>
#include <linux/types.h>

enum rdlock_xop {
	RDLOCK_XOP_READ,	/* value = slot */
	RDLOCK_XOP_WRITE,	/* slot = arg0 */
	RDLOCK_XOP_FAA,		/* value = slot; slot += arg0 */
	RDLOCK_XOP_CAS,		/* value = slot; slot == arg0 ? slot = arg1 */
	RDLOCK_XOP_PING,	/* SEND and wait for the echo: no slot */
	/* rdlock_xport_exec_range() only: */
	RDLOCK_XOP_READ_RANGE,	/* vals[i] = slot + i, i < count */
	RDLOCK_XOP_FAA_READ,	/* FAA, then vals[i] = rslot + i, i < count */
	RDLOCK_XOP_CAS_READ,	/* CAS, then vals[i] = rslot + i, i < count */
	RDLOCK_XOP_NR,
};

/*
 * A READ_RANGE reads up to RDLOCK_XPORT_RANGE_MAX slots in one operation
 * with either backend (one RDMA READ, or one two-sided answer): a value
 * block and its state word at once. A CAS_READ reads up to
 * RDLOCK_XPORT_CAS_READ_MAX after its CAS (the answer's first word is the
 * CAS's): a lock word taken and its value block read in one round trip.
 * The lock protocols read a queue at most RDLOCK_XPORT_READ_MAX slots at a
 * time (their simulated transport holds them to it), and a FAA_READ reads
 * at most RDLOCK_XPORT_FAA_READ_MAX slots after its FAA. Callers READ the
 * rest of a longer range with more operations.
 */
#define RDLOCK_XPORT_RANGE_MAX		16
#define RDLOCK_XPORT_CAS_READ_MAX	(RDLOCK_XPORT_RANGE_MAX - 1)
#define RDLOCK_XPORT_READ_MAX		4
#define RDLOCK_XPORT_FAA_READ_MAX	(RDLOCK_XPORT_READ_MAX - 1)

/* Slots below this are the transport's own (slot 0: the atomic probe). */
#define RDLOCK_XPORT_RESERVED_SLOTS	8
/*
 * The next slots are raw: the test module and benchmarks use them for
 * primitives below any lock protocol. Lockspaces start after them.
 */
#define RDLOCK_XPORT_RAW_SLOTS		1024
#define RDLOCK_XPORT_FIRST_LS_SLOT	(RDLOCK_XPORT_RESERVED_SLOTS + \
					 RDLOCK_XPORT_RAW_SLOTS)

int rdlock_xport_exec(enum rdlock_xop op, u32 node, u64 incarnation,
		      u32 slot, u64 arg0, u64 arg1, u64 *value,
		      unsigned int timeout_ms);
int rdlock_xport_exec_range(enum rdlock_xop op, u32 node, u64 incarnation,
			    u32 slot, u64 arg0, u64 arg1, u32 rslot,
			    u32 count, u64 *value, u64 *vals,
			    unsigned int timeout_ms);
/* rdlock_xport_post(): the outcome, in softirq or a worker; never sleeps. */
typedef void (*rdlock_xport_done_t)(void *ctx, int ret, u64 value);
int rdlock_xport_post(enum rdlock_xop op, u32 node, u64 incarnation,
		      u32 slot, u64 arg0, u64 arg1, rdlock_xport_done_t done,
		      void *ctx);

/* One-way messages between nodes for protocol notifications. */
#define RDLOCK_XMSG_PAYLOAD	40
#define RDLOCK_XMSG_USER_TYPES	8
typedef void (*rdlock_xmsg_handler_t)(u32 src_node, const void *payload,
				      size_t len);
int rdlock_xport_set_msg_handler(unsigned int type,
				 rdlock_xmsg_handler_t handler);
int rdlock_xport_send_msg(u32 node, unsigned int type, const void *payload,
			  size_t len);
int rdlock_xport_send_msg_bulk(u32 node, unsigned int type,
			       const void *payload, size_t len);
/*
 * A connection to another node became usable (again): messages sent to it
 * while it was down, or lost with the connection before, never arrive.
 */
typedef void (*rdlock_xport_up_handler_t)(u32 node);
void rdlock_xport_set_up_handler(rdlock_xport_up_handler_t handler);
/*
 * The cluster epoch ended (rdlock_xport_epoch()): tables that lockspaces
 * rely on are lost. Called with the transport's lock held, bottom halves
 * off: it may only queue work.
 */
typedef void (*rdlock_xport_epoch_handler_t)(void);
void rdlock_xport_set_epoch_handler(rdlock_xport_epoch_handler_t handler);

u32 rdlock_xport_self(void);
u32 rdlock_xport_table_slots(void);
u32 rdlock_xport_node_slots(u32 node);
/*
 * A peer's table: its incarnation and size (0 and 0: none known); of a
 * node declared down, as the survivors of its declaration named it.
 */
struct rdlock_table_named {
	u64 incarnation;
	u32 slots;
};

/*
 * The incarnation a lockspace gives a node declared down whose table was
 * never known here: no table has it, so no operation reaches any.
 */
#define RDLOCK_TABLE_NONE	U64_MAX

void rdlock_xport_node_table(u32 node, struct rdlock_table_named *t);
int rdlock_xport_backend(void);
bool rdlock_xport_ready(void);
bool rdlock_xport_up(void);
bool rdlock_xport_node_configured(u32 node);
u32 rdlock_xport_epoch(void);
u64 rdlock_xport_node_incarnation(u32 node);
int rdlock_xport_slot_check(u32 node, u64 incarnation, u32 slot);
int rdlock_xport_fence(u32 node);
int rdlock_xport_fence_table(u32 node, u64 inc);
bool rdlock_xport_node_fenced(u32 node);
bool rdlock_xport_node_cut(u32 node);
bool rdlock_xport_node_released(u32 node);
bool rdlock_xport_left_declared(u32 node, const unsigned long *hosts);
int rdlock_xport_hand_over(u32 heirs, u32 *took);
u32 rdlock_xport_handover(void);
bool rdlock_xport_hosts_known(void);
bool rdlock_xport_learning(void);
bool rdlock_xport_forming(void);
int rdlock_xport_form(u32 members, u32 out, bool running,
		      unsigned int wait_ms);
void rdlock_xport_learn_excuse(const unsigned long *nodes);
bool rdlock_xport_epoch_live(void);
int rdlock_xport_release(u32 node, const struct rdlock_table_named *named);

/* Cluster configuration (xport_cfg.c): checked by the caller, set while down. */
struct rdlock_status;
struct rdlock_node_status;
/* @buf: RDLOCK_CLUSTER_NAME_MAX + 1 bytes. */
void rdlock_xport_cluster_name(char *buf);
int rdlock_xport_configure(u32 cluster_id, u32 node_id,
			   const struct sockaddr_storage *addr,
			   const char *name, bool no_key);
int rdlock_xport_set_peer(u32 node_id, const struct sockaddr_storage *addr);
int rdlock_xport_set_key(const u8 *key, unsigned int len);
int rdlock_xport_up_allowed(void);
int rdlock_xport_up_down(bool up, bool (*busy)(void), bool forming);
u32 rdlock_xport_status(struct rdlock_status *st,
			struct rdlock_node_status *ns);

/* The transport's counters, for RDLOCK_IOC_STATS (xport_cfg.c). */
enum rdlock_xport_counter {
	RDLOCK_XC_REJECTED,		/* connections refused */
	RDLOCK_XC_BACKEND_REFUSED,	/* peers on another backend */
	RDLOCK_XC_KEY_MISMATCH,		/* peers without our key */
	RDLOCK_XC_BAD_PROOF,		/* requests with a wrong proof */
	RDLOCK_XC_BAD_REPLY,		/* replies with a wrong proof */
	RDLOCK_XC_REFUSED_BY_PEER,	/* our proofs a peer refused */
	RDLOCK_XC_UNAUTH_MSGS,		/* messages before authentication */
	RDLOCK_XC_UNPROVEN_FENCE,	/* fences without a proof */
	RDLOCK_XC_BAD_TABLE,		/* table offers without a proof */
	RDLOCK_XC_REMOTE_ACCESS,	/* remote access errors */
	RDLOCK_XC_RESENT,		/* requests sent again */
	RDLOCK_XC_REPLAYED,		/* answered from the replay record */
	RDLOCK_XC_UNKNOWN_OUTCOMES,	/* requests whose outcome is unknown */
	RDLOCK_XC_STALE,		/* requests of an older table refused */
	RDLOCK_XC_NR,
};

/* Per configured node: this node's links to it. */
enum rdlock_xport_link_counter {
	RDLOCK_XLC_CONNECTS,
	RDLOCK_XLC_ERRORS,
	RDLOCK_XLC_MSGS_SENT,
	RDLOCK_XLC_MSGS_RECV,
	RDLOCK_XLC_BYTES,
	RDLOCK_XLC_SERVED,
	RDLOCK_XLC_OPS,			/* RDLOCK_XOP_NR of them, by op */
	RDLOCK_XLC_NR = RDLOCK_XLC_OPS + RDLOCK_XOP_NR,
};

/* One configured node's link counters, by enum rdlock_xport_link_counter. */
struct rdlock_xport_link {
	u32 node;
	u64 c[RDLOCK_XLC_NR];
};

void rdlock_xport_counters(u64 *c);
u32 rdlock_xport_link_counters(struct rdlock_xport_link *links);

/* main.c: the transport comes up first and goes last (xport_cm.c). */
int rdlock_xport_init(void);
void rdlock_xport_shutdown(void);
void rdlock_xport_exit(void);
/* xport_debugfs.c: the transport's files in the module's debugfs @root. */
struct dentry;
void rdlock_xport_debugfs_init(struct dentry *root);

#endif /* _RDLOCK_XPORT_H */
