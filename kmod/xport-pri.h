/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock transport internals: shared by the transport's files (its
 * debugfs files included) and main.c only. Layers above use xport.h.
 */
#ifndef _RDLOCK_XPORT_PRI_H
#define _RDLOCK_XPORT_PRI_H

#include <linux/bits.h>
#include <linux/cache.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <linux/rdlock.h>

struct crypto_shash;

#include "backend.h"
#include "replay.h"
#include "xport.h"
#include "xport_member.h"

#define RDLOCK_SQ_DEPTH		256
#define RDLOCK_RX_DEPTH		64
#define RDLOCK_TX_DEPTH		64
/*
 * Credits bound what one connection can have in flight, so that neither
 * the send queue nor the peer's receive ring can overflow: two-sided
 * requests each consume one peer receive and one reply on the way back,
 * which the other half of the TX ring is reserved for.
 */
#define RDLOCK_REQ_CREDITS	(RDLOCK_TX_DEPTH / 2)
#define RDLOCK_ONESIDED_CREDITS	128
#define RDLOCK_MSG_SIZE		160
#define RDLOCK_CM_TIMEOUT_MS	2000
#define RDLOCK_RECONNECT_MIN_MS	100
#define RDLOCK_RECONNECT_MAX_MS	2000

#define RDLOCK_WIRE_MAGIC	0x52444c4bU	/* "RDLK" */
/*
 * 5: SOFT_DEVICE in the backend advert, 16-word READ_RANGE answers;
 * 7: knocks and RDLOCK_WIRE_DOWNSET (nodes back with a new table);
 * 8: a table key per connection, in RDLOCK_WIRE_TABLE both ways;
 * 9: a keyed request's proof binds its endpoint (struct rdlock_auth_bind),
 *    RDLOCK_WIRE_TABLE carries a proof of the key;
 * 10: RDLOCK_WIRE_DOWNSET says whether the sender's epoch formed, a
 *    request whether its table learned its epoch (RDLOCK_PDATA_NEW)
 */
#define RDLOCK_WIRE_VERSION	11

/*
 * Replay slots: a peer's requests that change a word (WRITE, FAA, CAS)
 * each hold one of its slots at the home until the outcome is known, so
 * that a request sent again after a connection failure is answered from
 * the home's record instead of applied twice (design.rst, "Exactly once").
 */
#define RDLOCK_REPLAY_SLOTS	RDLOCK_REQ_CREDITS
/* A copy is sent again for up to this many op timeouts. */
#define RDLOCK_REPLAY_WINDOW_FACTOR	4

enum rdlock_wire_type {
	RDLOCK_WIRE_ATOMIC_REQ	= 1,
	RDLOCK_WIRE_ATOMIC_REP	= 2,
	RDLOCK_WIRE_PING	= 3,
	RDLOCK_WIRE_PONG	= 4,
	RDLOCK_WIRE_TABLE	= 5,	/* the sender's table, our key to it */
	RDLOCK_WIRE_FENCED	= 6,	/* the sender declared us down */
	RDLOCK_WIRE_DOWNSET	= 7,	/* the nodes the sender declared down */
	RDLOCK_WIRE_USER	= 16,	/* + rdlock_xport_set_msg_handler type */
};

/*
 * &rdlock_wire_msg.req.op of a seal: what became of the recorded request of
 * that replay slot and number (rdlock_replay_seal()); not a table op.
 */
#define RDLOCK_WIRE_OP_SEAL	0x100

/*
 * RDLOCK_WIRE_DOWNSET, sent on every new connection: the nodes the sender
 * holds declared down (cut off or returned), and itself if it returned,
 * in as many messages as it takes, the last with @more 0. A node whose
 * table is new learns from it where the cluster's epoch stands.
 */
#define RDLOCK_DOWNSET_ENTRIES	4

struct rdlock_wire_downset_entry {
	__le64 incarnation;		/* of its table the sender knows */
	__le32 node;
	__le32 returned;		/* 0: cut off, 1: returned */
	__le32 table_slots;
	__le32 pad;
};

struct rdlock_wire_downset {
	__le32 more;
	__le32 nr;
	__le32 backend;			/* the sender's, or NONE */
	__le32 formed;			/* the sender's epoch formed */
	/* Handovers the sender made or adopted (rdlock_xport_hand_over()) */
	__le32 era;
	__le32 hosts;			/* ... and who keeps a table then */
	struct rdlock_wire_downset_entry e[RDLOCK_DOWNSET_ENTRIES];
};

/* Cluster key: its proofs' sizes (below, "Cluster key"). */
#define RDLOCK_AUTH_NONCE_LEN		16
#define RDLOCK_AUTH_REQ_MAC_LEN		16	/* HMAC-SHA256, truncated */
#define RDLOCK_AUTH_MAC_LEN		32	/* HMAC-SHA256 */

/* Messages are little-endian on the wire: nodes may differ in byte order. */
struct rdlock_wire_hdr {
	__le16 type;
	__le16 len;
	__le32 src_node;
	__le64 id;
};

struct rdlock_wire_msg {
	struct rdlock_wire_hdr hdr;
	union {
		struct {
			__le32 op;
			__le32 slot;
			__le64 arg0;
			__le64 arg1;
			/* gen 0: a READ or PING, answered without a record */
			__le32 replay_slot;
			__le32 count;	/* ranges: slots read */
			__le64 gen;
			__le32 rslot;	/* X_READ: the first slot read */
			__le32 pad;
		} req;
		struct {
			__le32 status;
			__le32 count;	/* ranges: slots read */
			/*
			 * words[0] is the value of a one-slot operation and
			 * an X_READ's atomic's (FAA_READ, CAS_READ); the
			 * slots read follow it (a READ_RANGE's from words[0]
			 * on).
			 */
			__le64 words[RDLOCK_XPORT_RANGE_MAX];
		} rep;
		struct {
			__le64 addr;
			__le32 rkey;
			__le32 pad;
			/* keyed: rdlock_auth_table_mac(); else zeroes */
			u8 mac[RDLOCK_AUTH_REQ_MAC_LEN];
		} table;
		struct rdlock_wire_downset downset;
		u8 payload[RDLOCK_XMSG_PAYLOAD];
	};
};

/* A user message's payload is the smallest member: answers are longer. */
static_assert(sizeof(struct rdlock_wire_downset) <=
	      sizeof_field(struct rdlock_wire_msg, rep));
static_assert(sizeof_field(struct rdlock_wire_msg, rep) >= RDLOCK_XMSG_PAYLOAD);

/* Bits of struct rdlock_cm_hdr.flags. */
#define RDLOCK_PDATA_VERBS_CAPABLE	BIT(0)
#define RDLOCK_PDATA_WORDS_BE		BIT(1)
#define RDLOCK_PDATA_KEYED		BIT(2)	/* a cluster key is set */
#define RDLOCK_PDATA_SOFT_DEVICE	BIT(3)	/* verbs done in software */
#define RDLOCK_PDATA_KNOCK		BIT(4)	/* no table: which are you? */
/* Its table has not learned its epoch: never ready, it holds nothing. */
#define RDLOCK_PDATA_NEW		BIT(5)

/*
 * Connection private data, both directions: who we are (this header, the
 * same in a keyed request) and which lock table we have. Where it is and
 * the key to it come later, in RDLOCK_WIRE_TABLE. Must fit the 56 bytes
 * rdma_cm leaves in an IB CM REQ.
 */
struct rdlock_cm_hdr {
	__le32 magic;
	__le16 version;
	u8 backend_mode;
	u8 flags;
	__le32 cluster_id;
	__le32 src_node;
	__le32 dst_node;
	__le32 table_slots;
};

struct rdlock_cm_pdata {
	struct rdlock_cm_hdr hdr;
	__le64 table_incarnation;
};

/*
 * Cluster key (design.rst, "Peer authentication"). With a key set, the
 * request carries no table; its first form (nonce 0) asks for a challenge,
 * which the refusal carries; the second proves the key over the challenge
 * and the request. The reply proves the key in turn.
 */
#define RDLOCK_AUTH_KEY_MIN		16
#define RDLOCK_AUTH_CHALLENGE_MS	10000	/* a challenge's life */

/* A keyed request: 56 bytes, all rdma_cm leaves in an IB CM REQ. */
struct rdlock_cm_req_keyed {
	struct rdlock_cm_hdr hdr;
	__le64 table_incarnation;
	__le64 nonce;				/* 0: asks for a challenge */
	u8 mac[RDLOCK_AUTH_REQ_MAC_LEN];
};

/* A keyed reply: the usual private data and the acceptor's proof. */
struct rdlock_cm_rep_keyed {
	struct rdlock_cm_pdata pd;
	u8 mac[RDLOCK_AUTH_MAC_LEN];
};

enum rdlock_reject_reason {
	RDLOCK_REJ_VERSION	= 1,
	RDLOCK_REJ_CLUSTER	= 2,
	RDLOCK_REJ_NODE		= 3,
	RDLOCK_REJ_DIRECTION	= 4,
	RDLOCK_REJ_NOT_READY	= 5,
	RDLOCK_REJ_BACKEND	= 6,
	RDLOCK_REJ_NO_RESOURCES	= 7,
	RDLOCK_REJ_ADDRESS	= 8,
	RDLOCK_REJ_CHALLENGE	= 9,	/* keyed: prove the key, no error */
	RDLOCK_REJ_KEY		= 10,	/* a key on one side only */
	RDLOCK_REJ_AUTH		= 11,	/* wrong proof of the key */
	RDLOCK_REJ_FENCED	= 12,	/* declared down: out until restart */
};

struct rdlock_cm_reject {
	__le32 magic;
	__le16 reason;
	__le16 pad;
};

/* The refusal that carries a challenge (RDLOCK_REJ_CHALLENGE). */
struct rdlock_cm_challenge {
	struct rdlock_cm_reject rej;
	u8 nonce[RDLOCK_AUTH_NONCE_LEN];
};

/*
 * Keyed, the refusal of a table declared down (RDLOCK_REJ_FENCED): the
 * acceptor's proof over the request, which answered its challenge
 * (rdlock_auth_fenced_mac()). Without it a keyed requester ignores it.
 */
struct rdlock_cm_fenced {
	struct rdlock_cm_reject rej;
	u8 mac[RDLOCK_AUTH_MAC_LEN];
};

/*
 * One CQ per device, shared by every queue pair on it; its PD is the
 * loopback connections' and the lock table's own registration's. A peer's
 * connection has a PD of its own (struct rdlock_conn).
 */
struct rdlock_dev {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
};

struct rdlock_table {
	u64 *mem;
	size_t size;
	u32 slots;
	struct scatterlist sg;
	bool mapped;
	struct ib_mr *mr;
	bool registered;
	u64 incarnation;	/* random, per allocation: tells a restart */
};

/* A message buffer of a connection's TX or RX ring. */
struct rdlock_msgbuf {
	struct ib_cqe cqe;
	struct rdlock_conn *conn;
	struct rdlock_wire_msg *msg;
	u64 dma;
	u32 req_id;			/* TX: two-sided request it carries */
	bool reply;			/* TX: from the reply reserve */
	bool fence;			/* TX: fail the connection once sent */
};

/* Bits of struct rdlock_conn.flags. */
#define RDLOCK_CONN_FAILED	0
#define RDLOCK_CONN_AUTHED	1	/* keyed: the peer proved the key */
#define RDLOCK_CONN_TABLE	2	/* its RDLOCK_WIRE_TABLE arrived */

/**
 * enum rdlock_conn_state - a connection's life (rdlock_conn_to())
 * @RDLOCK_CONN_CONNECTING: being set up: address, route, queue pair,
 *	connect or accept, keyed the proof of the key, then the tables.
 * @RDLOCK_CONN_ESTABLISHED: joined its node (rdlock_conn_ready()): the
 *	one that node's operations go on, unless it failed since.
 * @RDLOCK_CONN_CLOSING: final: being torn down (release_work); nothing
 *	new is posted on it.
 * @RDLOCK_CONN_NR: number of states.
 */
enum rdlock_conn_state {
	RDLOCK_CONN_CONNECTING,
	RDLOCK_CONN_ESTABLISHED,
	RDLOCK_CONN_CLOSING,
	RDLOCK_CONN_NR,
};

struct rdlock_conn {
	struct kref ref;
	struct list_head entry;			/* rdlock_cl.conns */
	u32 node;				/* the peer */
	bool active;				/* we sent the request */
	/*
	 * Active: to a node declared down, without our table, to learn its
	 * table's incarnation (rdlock_conn_knocked()); passive: such a
	 * request, never used to send.
	 */
	bool knock;
	/*
	 * Serialises the rdma_cm handler's QP set-up and connect with
	 * release_work's teardown: without it a QP created after
	 * release_work looked would outlive the connection and the CQ.
	 */
	struct mutex setup_mutex;
	bool connect_sent;			/* QP may see traffic */
	unsigned long flags;			/* RDLOCK_CONN_* bits */
	/* Under rdlock_cl.lock; CLOSING under post_lock too. */
	enum rdlock_conn_state state;
	struct rdma_cm_id *cm_id;
	struct ib_qp *qp;
	struct rdlock_dev *dev;
	/*
	 * A peer's connection (rdlock_conn_trades_tables()): its own PD, and
	 * in it the only registration of our table the peer may use (@mr,
	 * whose key it gets in RDLOCK_WIRE_TABLE), so that no other queue
	 * pair reaches our table with that key, and none at all once this
	 * connection is torn down. A knock has a PD of its own too, but no
	 * @mr; a loopback the device's PD. Both freed after the cm_id, so
	 * that no handler or sender still uses them; @lkey is @pd's, kept
	 * for senders racing a teardown, whose posts are refused anyway.
	 */
	struct ib_pd *pd;
	struct ib_mr *mr;
	u32 lkey;
	struct ib_cqe reg_cqe;			/* @mr's registration */
	/* The peer's table, as its RDLOCK_WIRE_TABLE gave it. */
	u64 table_addr;
	u32 rkey;
	struct rdlock_cm_pdata peer;		/* what the peer told us */
	/* Cluster key: the request sent or accepted, and its challenge. */
	bool keyed;
	struct rdlock_cm_req_keyed req;
	u8 challenge[RDLOCK_AUTH_NONCE_LEN];
	/* a peer's: ESTABLISHED and RDLOCK_WIRE_TABLE both seen */
	atomic_t ready_pending;

	void *bufs;				/* TX then RX messages */
	u64 bufs_dma;
	struct rdlock_msgbuf tx[RDLOCK_TX_DEPTH];
	struct rdlock_msgbuf rx[RDLOCK_RX_DEPTH];
	unsigned long tx_busy[BITS_TO_LONGS(RDLOCK_TX_DEPTH)];
	unsigned int tx_nonreply;		/* requests and one-way sends */
	spinlock_t tx_lock;
	spinlock_t post_lock;			/* posting vs. CLOSING */

	atomic_t req_credits;
	atomic_t onesided_credits;
	wait_queue_head_t credit_wait;
	struct xarray pending;			/* two-sided requests by id */
	atomic_t rx_count;			/* messages received */
	u32 next_id;

	struct work_struct release_work;
};

struct rdlock_node_stats {
	atomic64_t ops[RDLOCK_XOP_NR];
	atomic64_t msgs_sent;
	atomic64_t msgs_recv;
	atomic64_t bytes;
	atomic64_t errors;
	atomic64_t served;			/* two-sided ops executed for it */
};

/**
 * struct rdlock_replay - exactly-once requests between us and one peer
 * @lock: serialises a record's check, the operation and the new record:
 *	a request and its copy sent again may arrive on two connections.
 * @ent: as home: the last request of each of the peer's replay slots.
 * @busy: as requester: our replay slots to the peer in use.
 * @wait: requesters waiting for a free slot.
 */
struct rdlock_replay {
	spinlock_t lock;		/* a record's check and update */
	struct rdlock_replay_entry ent[RDLOCK_REPLAY_SLOTS];
	unsigned long busy[BITS_TO_LONGS(RDLOCK_REPLAY_SLOTS)];
	wait_queue_head_t wait;
};

struct rdlock_node {
	u32 id;
	enum rdlock_member_state member;	/* under rdlock_cl.lock */
	struct sockaddr_storage addr;
	struct rdlock_conn *conn;		/* the one we send on */
	bool adv_known;
	struct rdlock_backend_adv adv;
	/* Ours only (the loopback's): a peer's are its connection's. */
	u64 table_addr;
	u32 rkey;
	u32 table_slots;
	bool words_be;				/* table words big-endian */
	u64 incarnation;			/* of its table, 0: unknown */
	bool downset_seen;			/* its RDLOCK_WIRE_DOWNSET */
	bool word_formed;			/* ... said its epoch formed */
	/* Declared with no table known: its survivors named different ones. */
	bool table_disputed;
	/* Left (the cluster engine): learning does not wait for its word. */
	bool learn_excused;
	u32 connects;
	unsigned int backoff_ms;
	struct delayed_work connect_work;	/* active side only */
	struct rdlock_node_stats stats;
	struct rdlock_replay replay;
	/* Cluster key, under rdlock_cl.lock: the challenge we gave it ... */
	bool chal_issued;
	unsigned long chal_expires;
	u8 chal_out[RDLOCK_AUTH_NONCE_LEN];
	/* ... and the one it gave us, for our next request. */
	bool chal_got;
	u8 chal_in[RDLOCK_AUTH_NONCE_LEN];
};

/**
 * enum rdlock_cl_state - this node's cluster (rdlock_cl_to())
 * @RDLOCK_CL_UNCONFIGURED: no cluster id and node id yet.
 * @RDLOCK_CL_DOWN: configured, not up: no table, no connections.
 * @RDLOCK_CL_STARTING: up: the table allocated, listening; the loopback
 *	connection is made, registers the table and probes the device.
 * @RDLOCK_CL_LOCAL_READY: up, this node's table registered and the
 *	device probed: peers are connected to and accepted.
 * @RDLOCK_CL_STOPPING: going down (rdlock_cluster_down()): every
 *	connection is torn down, none is made.
 * @RDLOCK_CL_NR: number of states.
 *
 * STARTING and LOCAL_READY are "up" (rdlock_cl_up()).
 */
enum rdlock_cl_state {
	RDLOCK_CL_UNCONFIGURED,
	RDLOCK_CL_DOWN,
	RDLOCK_CL_STARTING,
	RDLOCK_CL_LOCAL_READY,
	RDLOCK_CL_STOPPING,
	RDLOCK_CL_NR,
};

struct rdlock_cluster {
	struct mutex cfg_mutex;			/* config, up, down */
	spinlock_t lock;			/* nodes' conns and states */
	enum rdlock_cl_state state;		/* under @lock, and cfg_mutex */
	u32 cluster_id;
	u32 self;
	char name[RDLOCK_CLUSTER_NAME_MAX + 1];	/* under @lock; "": none */
	struct rdlock_node nodes[RDLOCK_MAX_NODES];
	struct rdma_cm_id *listen_id;
	struct rdlock_dev *dev;
	struct mutex dev_mutex;			/* creating @dev, registering */
	struct rdlock_table table;
	bool probed;				/* self_adv, words_be known */
	struct rdlock_backend_adv self_adv;
	bool words_be;				/* device stores atomics BE */
	bool result_be;				/* device returns atomics BE */
	struct work_struct local_setup_work;
	struct rdlock_conn *setup_conn;
	int backend;				/* resolved, or NONE */
	/* What this node knows of its epoch (under @lock, rdlock_view_to()). */
	enum rdlock_view view;
	/*
	 * Its epoch formed (under @lock): this node formed it
	 * (rdlock_xport_form()) or learned it from a peer; at once when the
	 * cluster comes up without a cluster engine to form it with.
	 */
	bool formed;
	/*
	 * Handovers (rdlock_xport_hand_over(), under @lock): made or adopted
	 * here in this epoch (@era); the most a peer's word said it made
	 * (@heard_era), with the nodes keeping tables there (@heard_hosts);
	 * the nodes cut off whose declarations hand their names to the
	 * heirs, until each is released here (@handover).
	 */
	u32 era;
	u32 heard_era;
	u32 heard_hosts;
	u32 handover;
	/* Heirs a handover waits for: they return while others are cut off */
	u32 awaited;
	unsigned long up_at;			/* jiffies: the cluster came up */
	struct work_struct words_work;		/* tell every peer again */
	struct list_head conns;
	wait_queue_head_t conns_wait;
	atomic64_t rejected;
	atomic64_t backend_refused;		/* words of another backend */
	/* Cluster key: NULL without one; set and freed only while down. */
	struct crypto_shash *auth_tfm;
	/* Up without a key allowed (RDLOCK_CONFIG_INSECURE_NO_KEY): tests */
	bool insecure_no_key;
	atomic64_t auth_key_mismatch;		/* a key on one side only */
	atomic64_t auth_bad_proof;		/* a request's proof wrong */
	atomic64_t auth_bad_reply;		/* a reply's proof wrong */
	atomic64_t auth_bad_table;		/* a table message's proof wrong */
	atomic64_t auth_refused;		/* a peer refused our key */
	atomic64_t auth_unauth_msgs;		/* messages before the proof */
	atomic64_t remote_access_errors;	/* a table refused our key */
	atomic64_t auth_unproven_fence;		/* keyed, REJ_FENCED unproved */
	atomic64_t resent;			/* requests we sent again */
	atomic64_t replayed;			/* answered from a record */
	atomic64_t stale_requests;		/* older than their record */
	atomic64_t seals_served;		/* asked what became of one */
	atomic64_t sealed_applied;		/* given up, found applied */
	atomic64_t sealed_unapplied;		/* given up, never applied */
	atomic64_t unknown_outcomes;		/* given up, seal unanswered */
	u32 epoch;				/* see rdlock_xport_epoch() */
	rdlock_xmsg_handler_t handlers[RDLOCK_XMSG_USER_TYPES];
	rdlock_xport_up_handler_t up_handler;
	rdlock_xport_epoch_handler_t epoch_handler;
};

/* An operation on a node's table (xport_io.c; recorded: xport_replay.c). */
/* Bits of struct rdlock_xreq.flags. */
#define RDLOCK_XREQ_DONE	0
#define RDLOCK_XREQ_ASYNC	1	/* rdlock_xport_post(): @done ends it */
#define RDLOCK_XREQ_CLAIMED	2	/* async: its end is being delivered */

struct rdlock_xreq {
	struct kref ref;
	struct ib_cqe cqe;
	struct rdlock_conn *conn;
	enum rdlock_xop op;
	u32 node;
	u32 slot;
	u64 arg0;
	u64 arg1;
	u64 incarnation;		/* of the target table; 0: any */
	u32 count;			/* ranges: slots read */
	u32 nread;			/* of them, read (X_READ: maybe 0) */
	u32 rslot;			/* X_READ: the first slot read */
	u32 wrs;			/* one-sided: WRs, credits held */
	atomic_t wrs_left;		/* one-sided: WRs not completed */
	enum ib_wc_status atomic_status; /* X_READ, verbs: the atomic's WR */
	enum ib_wc_status last_status;	/* one-sided: the last WR */
	struct ib_cqe atomic_cqe;	/* X_READ, verbs: the atomic's WR */
	u32 id;				/* two-sided: key in conn->pending */
	u32 rx_seen;			/* two-sided: conn->rx_count at post */
	u32 replay_slot;		/* recorded requests: our slot */
	u64 gen;			/* recorded requests: their number */
	bool raw;			/* probe: no byte-order conversion */
	bool seal;			/* recorded: what became of it */
	bool onesided;
	unsigned long flags;
	int status;
	u64 value;
	struct completion comp;
	u64 dma;
	/*
	 * DMA target of one-sided ops, laid out as an answer's words:
	 * buf[0] a one-slot op's value and an X_READ's atomic's, the slots
	 * read after it (a READ_RANGE's from buf[0] on).
	 */
	u64 buf[RDLOCK_XPORT_RANGE_MAX] ____cacheline_aligned;
	/* rdlock_xport_post() only: */
	rdlock_xport_done_t done;
	void *done_ctx;
	unsigned long deadline;
	unsigned long window;		/* recorded: resends until then */
	bool recorded;
	struct delayed_work dwork;	/* timeout, resends: process context */
};

extern struct rdlock_cluster rdlock_cl;
extern struct workqueue_struct *rdlock_wq;
extern struct workqueue_struct *rdlock_async_wq;
extern int rdlock_backend_param;
extern unsigned int rdlock_table_slots_param;
extern unsigned int rdlock_op_timeout_ms;

/* xport_state.c: the states, each changed by one function; lookups */
bool rdlock_cl_to(enum rdlock_cl_state to);
bool rdlock_member_to(struct rdlock_node *node, enum rdlock_member_state to);
extern const char *const rdlock_view_names[RDLOCK_VIEW_NR];
bool rdlock_view_to(enum rdlock_view to);
void rdlock_view_begin(void);
bool rdlock_conn_to(struct rdlock_conn *conn, enum rdlock_conn_state to);
int rdlock_cluster_state(void);
int rdlock_node_state(u32 node);

/* Is the cluster up here (starting or ready)? Any context, no lock. */
static inline bool rdlock_cl_up(void)
{
	enum rdlock_cl_state st = READ_ONCE(rdlock_cl.state);

	return st == RDLOCK_CL_STARTING || st == RDLOCK_CL_LOCAL_READY;
}

/* Is @node configured (declared down or not)? */
static inline bool rdlock_node_member(const struct rdlock_node *node)
{
	return READ_ONCE(node->member) != RDLOCK_MEMBER_ABSENT;
}

/*
 * Is @node cut off: being declared down or declared (either way), its
 * table's incarnation refused?
 */
static inline bool rdlock_node_fenced(const struct rdlock_node *node)
{
	enum rdlock_member_state st = READ_ONCE(node->member);

	return st == RDLOCK_MEMBER_FENCED || st == RDLOCK_MEMBER_DOWN;
}

/* Is @node a live member: configured and not cut off (maybe returned)? */
static inline bool rdlock_node_live(const struct rdlock_node *node)
{
	enum rdlock_member_state st = READ_ONCE(node->member);

	return st == RDLOCK_MEMBER_CONFIGURED || st == RDLOCK_MEMBER_RETURNED;
}

/* Nothing may be posted on @conn any more; post_lock or READ_ONCE. */
static inline bool rdlock_conn_closing(const struct rdlock_conn *conn)
{
	return READ_ONCE(conn->state) == RDLOCK_CONN_CLOSING;
}

/* xport_cm.c: membership, connections, devices */
int rdlock_cluster_up(bool forming);
void rdlock_cluster_down(void);
void rdlock_conn_fail(struct rdlock_conn *conn);
void rdlock_fail_peer_conns(void);
void rdlock_conn_put(struct rdlock_conn *conn);
struct rdlock_conn *rdlock_conn_get_ready(u32 node, int *err);
int rdlock_conn_ready(struct rdlock_conn *conn);
bool rdlock_conn_trades_tables(const struct rdlock_conn *conn);
void rdlock_fenced_by(u32 node);

/* xport_auth.c: the cluster key */

/**
 * struct rdlock_auth_bind - the endpoint a requester's proof is made for
 * @req_qpn: the requester's queue pair (the acceptor reads it from the CM
 *	REQ), so that another queue pair cannot present the proof: an
 *	impostor relaying a node's proof through rdma_cm sends its own.
 * @req_gid: the requester's GID; on RoCE derived from the addresses the
 *	CM REQ carries, which the address check sees already.
 * @acc_gid: the acceptor's GID, likewise.
 *
 * All zeroes on iWARP, whose connection requests carry no QPN.
 */
struct rdlock_auth_bind {
	__le32 req_qpn;
	u8 req_gid[16];
	u8 acc_gid[16];
};

static_assert(sizeof(struct rdlock_auth_bind) == 36);	/* hashed as bytes */

int rdlock_auth_set_key(const u8 *key, unsigned int len);
int rdlock_auth_req_mac(const u8 *challenge,
			const struct rdlock_cm_req_keyed *req,
			const struct rdlock_auth_bind *bind, u8 *mac);
int rdlock_auth_rep_mac(const u8 *challenge,
			const struct rdlock_cm_req_keyed *req,
			const struct rdlock_cm_pdata *rep, u8 *mac);
int rdlock_auth_fenced_mac(const u8 *challenge,
			   const struct rdlock_cm_req_keyed *req, u8 *mac);
int rdlock_auth_table_mac(const u8 *challenge,
			  const struct rdlock_cm_req_keyed *req, bool from_req,
			  u64 addr, u32 rkey, u8 *mac);

/* xport_table.c: this node's lock table, the two-sided executor */
int rdlock_table_alloc(u32 slots);
void rdlock_table_free(void);
int rdlock_table_register(struct rdlock_conn *conn);
void rdlock_table_reg_wr(struct ib_mr *mr, struct ib_reg_wr *reg);
int rdlock_table_grant_alloc(struct rdlock_conn *conn);
bool rdlock_xop_reads_after(enum rdlock_xop op);
u32 rdlock_xop_read_after_max(enum rdlock_xop op);
bool rdlock_range_ok(u64 first, u32 count, u32 max, u32 slots);
int rdlock_table_read(u32 first, u32 count, u64 *words);
int rdlock_table_exec(enum rdlock_xop op, u32 slot, u64 arg0, u64 arg1,
		      u32 rslot, u32 count, u64 *words);
int rdlock_table_exec_own(enum rdlock_xop op, u32 slot, u64 arg0, u64 arg1,
			  u32 rslot, u32 count, u64 *words, u64 incarnation,
			  bool may_sleep);

/* xport_io.c: posting, completions, requests, messages */
struct rdlock_xreq *rdlock_xreq_alloc(gfp_t gfp, enum rdlock_xop op, u32 node,
				      u32 slot, u64 arg0, u64 arg1);
void rdlock_xreq_put(struct rdlock_xreq *req);
int rdlock_xreq_start(struct rdlock_xreq *req, unsigned long deadline);
int rdlock_xreq_wait(struct rdlock_xreq *req, unsigned long deadline,
		     unsigned long window, u64 *value);
long rdlock_jiffies_left(unsigned long until);
int rdlock_probe_atomics(struct rdlock_conn *conn);
int rdlock_conn_alloc_bufs(struct rdlock_conn *conn);
void rdlock_conn_free_bufs(struct rdlock_conn *conn);
int rdlock_conn_post_recvs(struct rdlock_conn *conn);
void rdlock_conn_fail_pending(struct rdlock_conn *conn, int status);
int rdlock_conn_post_send(struct rdlock_conn *conn, const struct ib_send_wr *wr);
int rdlock_conn_send_table(struct rdlock_conn *conn);
bool rdlock_send_fenced(struct rdlock_conn *conn);
int rdlock_conn_send_downset(struct rdlock_conn *conn,
			     const struct rdlock_wire_downset *ds);
void rdlock_recv_downset(struct rdlock_conn *conn,
			 const struct rdlock_wire_downset *ds);
int rdlock_io_init(void);
void rdlock_io_exit(void);

/* xport_replay.c: exactly-once requests (two-sided backend) */
void rdlock_replay_forget(void);
bool rdlock_xreq_recorded(const struct rdlock_xreq *req);
bool rdlock_xreq_resend(int ret);
int rdlock_xreq_record(struct rdlock_xreq *req, unsigned long deadline);
void rdlock_replay_slot_put(struct rdlock_xreq *req);
int rdlock_xreq_send_recorded(struct rdlock_xreq *req, unsigned long deadline,
			      unsigned long window, bool sent, int ret,
			      u64 *value);
int rdlock_xreq_exec_recorded(struct rdlock_xreq *req, unsigned long deadline,
			      u64 *value);
int rdlock_serve_recorded(struct rdlock_conn *conn,
			  const struct rdlock_wire_msg *msg, u64 *words,
			  bool *applied);
void rdlock_replay_init(void);

/*
 * xport_fault.c: fault injection for the tests, "make
 * RDLOCK_FAULT_INJECTION=y" only; else these are no-ops and production
 * builds carry neither its knobs nor its counters.
 */
struct seq_file;
#ifdef CONFIG_RDLOCK_FAULT_INJECTION
bool rdlock_fault_lost_completion(struct rdlock_xreq *req);
bool rdlock_fault_lost_reply(struct rdlock_conn *conn);
bool rdlock_fault_lost_msg(struct rdlock_conn *conn);
/* The longest inject_link_down_ms. */
#define RDLOCK_FAULT_LINK_DOWN_MS_MAX	60000
/* The longest inject_own_exec_delay_ms. */
#define RDLOCK_FAULT_OWN_EXEC_DELAY_MS_MAX	60000
bool rdlock_fault_link_down(u32 node);
bool rdlock_fault_forged_fence(u32 node);
bool rdlock_fault_relayed_proof(u32 node);
void rdlock_fault_replayed_proof(u32 node, struct rdlock_cm_req_keyed *req);
bool rdlock_fault_forged_table(u32 node);
void rdlock_fault_other_backend(u32 node, struct rdlock_wire_downset *ds);
u32 rdlock_fault_stale_rkey(const struct rdlock_conn *conn, u32 rkey);
bool rdlock_late_hold(struct rdlock_conn *conn,
		      const struct rdlock_wire_msg *msg);
void rdlock_fault_own_exec_delay(void);
void rdlock_xport_fault_exit(void);
void rdlock_xport_fault_show(struct seq_file *m);
void rdlock_xport_fault_init(struct dentry *root);
#else
static inline bool rdlock_fault_lost_completion(struct rdlock_xreq *req)
{
	return false;
}

static inline bool rdlock_fault_lost_reply(struct rdlock_conn *conn)
{
	return false;
}

static inline bool rdlock_fault_lost_msg(struct rdlock_conn *conn)
{
	return false;
}

static inline bool rdlock_fault_link_down(u32 node)
{
	return false;
}

static inline bool rdlock_fault_forged_fence(u32 node)
{
	return false;
}

static inline bool rdlock_fault_relayed_proof(u32 node)
{
	return false;
}

static inline void rdlock_fault_replayed_proof(u32 node,
					       struct rdlock_cm_req_keyed *req)
{
}

static inline bool rdlock_fault_forged_table(u32 node)
{
	return false;
}

static inline void rdlock_fault_other_backend(u32 node,
					      struct rdlock_wire_downset *ds)
{
}

static inline u32 rdlock_fault_stale_rkey(const struct rdlock_conn *conn,
					  u32 rkey)
{
	return rkey;
}

static inline bool rdlock_late_hold(struct rdlock_conn *conn,
				    const struct rdlock_wire_msg *msg)
{
	return false;
}

static inline void rdlock_fault_own_exec_delay(void) { }
static inline void rdlock_xport_fault_exit(void) { }
static inline void rdlock_xport_fault_show(struct seq_file *m) { }
static inline void rdlock_xport_fault_init(struct dentry *root) { }
#endif

#endif /* _RDLOCK_XPORT_PRI_H */
