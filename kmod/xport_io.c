// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: posting, completions and the two atomic backends.
 *
 * verbs:    READ/WRITE/FETCH_AND_ADD/CMP_AND_SWP work requests against the
 *           home node's registered table, the home node itself going
 *           through its loopback queue pair. FAA_READ and CAS_READ post
 *           the atomic and an RDMA READ in one chain: the responder
 *           handles an RC QP's requests in order (design.rst,
 *           "Operations"), so the READ sees the table after the atomic,
 *           and both cost one round trip.
 * twosided: a request message; the home node's CPU executes the operation
 *           on its table with CPU atomics and replies. The home node's own
 *           accesses call the same function directly. For devices that
 *           cannot post atomics from the kernel (upstream mlx5, siw).
 *
 * The lock table and the two-sided executor are xport_table.c's; the
 * two-sided backend's exactly-once requests (their resends, seals and the
 * home's records) are xport_replay.c's.
 *
 * Completion callbacks (struct ib_cqe) run in softirq context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/gfp.h>
#include <linux/scatterlist.h>
#include <linux/atomic.h>
#include <crypto/algapi.h>

#include "xport-pri.h"

static struct kmem_cache *rdlock_xreq_cache;
/* Posted requests' timeouts and resends, which sleep. */
struct workqueue_struct *rdlock_async_wq;

/* ------------------------------------------------------------------ */
/* Byte order                                                         */

static u64 rdlock_word_from(u64 raw, bool be)
{
	return be ? be64_to_cpu((__force __be64)raw) :
		    le64_to_cpu((__force __le64)raw);
}

static u64 rdlock_word_to(u64 val, bool be)
{
	return be ? (__force u64)cpu_to_be64(val) :
		    (__force u64)cpu_to_le64(val);
}

/* ------------------------------------------------------------------ */
/* Message rings                                                      */

static void rdlock_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void rdlock_send_done(struct ib_cq *cq, struct ib_wc *wc);

int rdlock_conn_alloc_bufs(struct rdlock_conn *conn)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	size_t size = (RDLOCK_TX_DEPTH + RDLOCK_RX_DEPTH) * RDLOCK_MSG_SIZE;
	unsigned int i;

	conn->bufs = kzalloc(size, GFP_KERNEL);
	if (!conn->bufs)
		return -ENOMEM;
	conn->bufs_dma = ib_dma_map_single(ibdev, conn->bufs, size,
					   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, conn->bufs_dma)) {
		kfree(conn->bufs);
		conn->bufs = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < RDLOCK_TX_DEPTH + RDLOCK_RX_DEPTH; i++) {
		struct rdlock_msgbuf *mb = i < RDLOCK_TX_DEPTH ?
			&conn->tx[i] : &conn->rx[i - RDLOCK_TX_DEPTH];

		mb->conn = conn;
		mb->msg = conn->bufs + i * RDLOCK_MSG_SIZE;
		mb->dma = conn->bufs_dma + i * RDLOCK_MSG_SIZE;
		mb->cqe.done = i < RDLOCK_TX_DEPTH ? rdlock_send_done :
						     rdlock_recv_done;
	}
	return 0;
}

void rdlock_conn_free_bufs(struct rdlock_conn *conn)
{
	size_t size = (RDLOCK_TX_DEPTH + RDLOCK_RX_DEPTH) * RDLOCK_MSG_SIZE;

	if (!conn->bufs)
		return;
	ib_dma_unmap_single(conn->dev->ibdev, conn->bufs_dma, size,
			    DMA_BIDIRECTIONAL);
	kfree(conn->bufs);
	conn->bufs = NULL;
}

/* Post unless the connection is being torn down (see release_work). */
int rdlock_conn_post_send(struct rdlock_conn *conn, const struct ib_send_wr *wr)
{
	int ret = -ECONNRESET;

	spin_lock_bh(&conn->post_lock);
	if (!rdlock_conn_closing(conn))
		ret = ib_post_send(conn->qp, wr, NULL);
	spin_unlock_bh(&conn->post_lock);
	return ret;
}

static int rdlock_post_recv(struct rdlock_conn *conn, struct rdlock_msgbuf *rx)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int ret = -ECONNRESET;

	sge.addr = rx->dma;
	sge.length = RDLOCK_MSG_SIZE;
	sge.lkey = conn->lkey;
	wr.wr_cqe = &rx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ib_dma_sync_single_for_device(conn->dev->ibdev, rx->dma,
				      RDLOCK_MSG_SIZE, DMA_BIDIRECTIONAL);
	spin_lock_bh(&conn->post_lock);
	if (!rdlock_conn_closing(conn))
		ret = ib_post_recv(conn->qp, &wr, NULL);
	spin_unlock_bh(&conn->post_lock);
	return ret;
}

int rdlock_conn_post_recvs(struct rdlock_conn *conn)
{
	unsigned int i;
	int ret;

	for (i = 0; i < RDLOCK_RX_DEPTH; i++) {
		ret = rdlock_post_recv(conn, &conn->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* What a TX buffer is for: how much of the ring it may find in use. */
enum rdlock_tx_use {
	RDLOCK_TX_REPLY,	/* a reply: all of the ring */
	RDLOCK_TX_SEND,		/* a request or a one-way message */
	RDLOCK_TX_BULK,		/* one of a long train of one-way messages */
};

/* Buffers of the others than replies in use beyond which a use finds none. */
static const unsigned int rdlock_tx_share[] = {
	[RDLOCK_TX_REPLY] = RDLOCK_TX_DEPTH,
	[RDLOCK_TX_SEND] = RDLOCK_TX_DEPTH / 2,
	[RDLOCK_TX_BULK] = RDLOCK_TX_DEPTH / 4,
};

/*
 * Requests and one-way messages may use half of the TX ring, bulk ones a
 * quarter (the other quarter of that half stays for the lock path's);
 * replies may use all of it. A peer has at most RDLOCK_REQ_CREDITS
 * requests in flight to us, so a reply always finds a buffer.
 */
static struct rdlock_msgbuf *rdlock_tx_get(struct rdlock_conn *conn,
					   enum rdlock_tx_use use)
{
	bool reply = use == RDLOCK_TX_REPLY;
	struct rdlock_msgbuf *tx = NULL;
	unsigned long i;

	spin_lock_bh(&conn->tx_lock);
	if (conn->tx_nonreply >= rdlock_tx_share[use])
		goto out;
	i = find_first_zero_bit(conn->tx_busy, RDLOCK_TX_DEPTH);
	if (i >= RDLOCK_TX_DEPTH)
		goto out;
	__set_bit(i, conn->tx_busy);
	tx = &conn->tx[i];
	tx->reply = reply;
	tx->fence = false;
	tx->req_id = 0;
	if (!reply)
		conn->tx_nonreply++;
out:
	spin_unlock_bh(&conn->tx_lock);
	return tx;
}

static void rdlock_tx_put(struct rdlock_conn *conn, struct rdlock_msgbuf *tx)
{
	spin_lock_bh(&conn->tx_lock);
	if (!tx->reply)
		conn->tx_nonreply--;
	__clear_bit(tx - conn->tx, conn->tx_busy);
	spin_unlock_bh(&conn->tx_lock);
}

static void rdlock_msg_init(struct rdlock_wire_msg *msg, u16 type, u64 id,
			    size_t len)
{
	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = cpu_to_le16(type);
	msg->hdr.len = cpu_to_le16(len);
	msg->hdr.src_node = cpu_to_le32(rdlock_cl.self);
	msg->hdr.id = cpu_to_le64(id);
}

static int rdlock_tx_post(struct rdlock_conn *conn, struct rdlock_msgbuf *tx)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int ret;

	sge.addr = tx->dma;
	sge.length = sizeof(struct rdlock_wire_msg);
	sge.lkey = conn->lkey;
	wr.wr_cqe = &tx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	ib_dma_sync_single_for_device(conn->dev->ibdev, tx->dma,
				      RDLOCK_MSG_SIZE, DMA_BIDIRECTIONAL);
	ret = rdlock_conn_post_send(conn, &wr);
	if (ret)
		rdlock_tx_put(conn, tx);
	else
		atomic64_inc(&rdlock_cl.nodes[conn->node].stats.msgs_sent);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Requests                                                           */

static void rdlock_xreq_free(struct kref *ref)
{
	struct rdlock_xreq *req = container_of(ref, struct rdlock_xreq, ref);

	if (req->conn)
		rdlock_conn_put(req->conn);
	kmem_cache_free(rdlock_xreq_cache, req);
}

void rdlock_xreq_put(struct rdlock_xreq *req)
{
	kref_put(&req->ref, rdlock_xreq_free);
}

struct rdlock_xreq *rdlock_xreq_alloc(gfp_t gfp, enum rdlock_xop op, u32 node,
				      u32 slot, u64 arg0, u64 arg1)
{
	struct rdlock_xreq *req = kmem_cache_zalloc(rdlock_xreq_cache, gfp);

	if (!req)
		return NULL;
	kref_init(&req->ref);
	init_completion(&req->comp);
	req->op = op;
	req->node = node;
	req->slot = slot;
	req->arg0 = arg0;
	req->arg1 = arg1;
	/* X_READ, verbs: the atomic and the READ, one credit each. */
	req->wrs = rdlock_xop_reads_after(op) ? 2 : 1;
	return req;
}

static void rdlock_xreq_async_done(struct rdlock_xreq *req);

/*
 * The in-flight path's end: exactly once per started request, whether by
 * completion, reply, failure of the connection or a waiter giving up.
 * Drops the in-flight reference.
 */
static void rdlock_xreq_finish(struct rdlock_xreq *req, int status, u64 value)
{
	struct rdlock_conn *conn = req->conn;

	if (conn) {
		if (req->onesided)
			atomic_add(req->wrs, &conn->onesided_credits);
		else
			atomic_inc(&conn->req_credits);
		wake_up(&conn->credit_wait);
		if (status)
			atomic64_inc(&rdlock_cl.nodes[req->node].stats.errors);
	}
	if (!test_and_set_bit(RDLOCK_XREQ_DONE, &req->flags)) {
		req->status = status;
		req->value = value;
		complete(&req->comp);
		if (test_bit(RDLOCK_XREQ_ASYNC, &req->flags))
			rdlock_xreq_async_done(req);
	}
	rdlock_xreq_put(req);
}

/* Words of @req the home's memory returned: a READ's, not an atomic's. */
static void rdlock_words_from(u64 *words, u32 n, u32 node)
{
	bool be = rdlock_cl.nodes[node].words_be;
	u32 i;

	for (i = 0; i < n; i++)
		words[i] = rdlock_word_from(words[i], be);
}

/* Every WR of a one-sided @req has completed (or was never posted). */
static void rdlock_onesided_end(struct rdlock_xreq *req)
{
	struct rdlock_conn *conn = req->conn;
	enum ib_wc_status st = rdlock_xop_reads_after(req->op) ?
			       req->atomic_status : req->last_status;
	u64 value;

	ib_dma_unmap_single(conn->dev->ibdev, req->dma, sizeof(req->buf),
			    DMA_BIDIRECTIONAL);
	if (st != IB_WC_SUCCESS) {
		rdlock_xreq_finish(req, st == IB_WC_WR_FLUSH_ERR ?
				   -ECONNRESET : -EIO, 0);
		return;
	}
	switch (req->op) {
	case RDLOCK_XOP_WRITE:
		value = 0;
		break;
	case RDLOCK_XOP_READ:
		value = rdlock_word_from(req->buf[0],
					 rdlock_cl.nodes[req->node].words_be);
		break;
	case RDLOCK_XOP_READ_RANGE:
		rdlock_words_from(req->buf, req->count, req->node);
		req->nread = req->count;
		value = req->buf[0];
		break;
	case RDLOCK_XOP_FAA_READ:
	case RDLOCK_XOP_CAS_READ:
		/*
		 * The atomic is done whatever became of the READ after it
		 * (a failed one failed the connection): its value is the
		 * caller's, which READs again what it still needs.
		 */
		if (req->last_status == IB_WC_SUCCESS) {
			rdlock_words_from(req->buf + 1, req->count, req->node);
			req->nread = req->count;
		}
		fallthrough;
	default:
		/* Atomics return our device's format. */
		value = req->raw ? req->buf[0] :
			rdlock_word_from(req->buf[0], rdlock_cl.result_be);
		break;
	}
	rdlock_xreq_finish(req, 0, value);
}

/* One WR of @req completed: the last one ends it. */
static void rdlock_onesided_wr_done(struct rdlock_xreq *req, struct ib_wc *wc,
				    enum ib_wc_status *status)
{
	struct rdlock_conn *conn = req->conn;

	*status = wc->status;
	/* Fault injection: done at the home, the completion lost with the link. */
	if (wc->status == IB_WC_SUCCESS && rdlock_fault_lost_completion(req))
		*status = IB_WC_WR_FLUSH_ERR;
	if (wc->status != IB_WC_SUCCESS) {
		/* A key the peer's table does not take (not this connection's). */
		if (wc->status == IB_WC_REM_ACCESS_ERR)
			atomic64_inc(&rdlock_cl.remote_access_errors);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err_ratelimited("node %u: one-sided op %d failed: %s\n",
					   conn->node, req->op,
					   ib_wc_status_msg(wc->status));
		/* An RC error leaves the QP in the error state: reconnect. */
		rdlock_conn_fail(conn);
	}
	if (atomic_dec_and_test(&req->wrs_left))
		rdlock_onesided_end(req);
}

static void rdlock_onesided_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlock_xreq *req = container_of(wc->wr_cqe, struct rdlock_xreq,
					       cqe);

	rdlock_onesided_wr_done(req, wc, &req->last_status);
}

static void rdlock_onesided_atomic_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlock_xreq *req = container_of(wc->wr_cqe, struct rdlock_xreq,
					       atomic_cqe);

	rdlock_onesided_wr_done(req, wc, &req->atomic_status);
}

static int rdlock_post_onesided(struct rdlock_xreq *req)
{
	struct rdlock_conn *conn = req->conn;
	struct rdlock_node *node = &rdlock_cl.nodes[req->node];
	struct ib_device *ibdev = conn->dev->ibdev;
	bool self = req->node == rdlock_cl.self;
	/* The key and address this connection's peer gave us (ours: ours). */
	u64 base = self ? node->table_addr : conn->table_addr;
	u64 raddr = base + (u64)req->slot * sizeof(u64);
	u32 rkey = self ? node->rkey : conn->rkey;
	const struct ib_send_wr *bad = NULL;
	struct ib_atomic_wr awr = {};
	struct ib_rdma_wr rwr = {};
	struct ib_send_wr *wr;
	struct ib_sge sge, rsge;
	int ret = -ECONNRESET;

	if (req->op == RDLOCK_XOP_WRITE)
		req->buf[0] = rdlock_word_to(req->arg0, node->words_be);
	req->dma = ib_dma_map_single(ibdev, req->buf, sizeof(req->buf),
				     DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, req->dma))
		return -ENOMEM;
	sge.addr = req->dma;
	sge.length = sizeof(u64);
	sge.lkey = conn->lkey;
	req->cqe.done = rdlock_onesided_done;
	if (req->op == RDLOCK_XOP_READ)
		rkey = rdlock_fault_stale_rkey(conn, rkey);
	atomic_set(&req->wrs_left, req->wrs);

	switch (req->op) {
	case RDLOCK_XOP_READ:
	case RDLOCK_XOP_WRITE:
	case RDLOCK_XOP_READ_RANGE:
		rwr.wr.opcode = req->op == RDLOCK_XOP_WRITE ?
				IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
		rwr.remote_addr = raddr;
		rwr.rkey = rkey;
		if (req->op == RDLOCK_XOP_READ_RANGE)
			sge.length = req->count * sizeof(u64);
		wr = &rwr.wr;
		break;
	default:
		awr.wr.opcode = req->op == RDLOCK_XOP_CAS ||
				req->op == RDLOCK_XOP_CAS_READ ?
				IB_WR_ATOMIC_CMP_AND_SWP :
				IB_WR_ATOMIC_FETCH_AND_ADD;
		awr.remote_addr = raddr;
		awr.rkey = rkey;
		awr.compare_add = req->arg0;
		awr.swap = req->arg1;
		wr = &awr.wr;
		break;
	}
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags = IB_SEND_SIGNALED;
	if (rdlock_xop_reads_after(req->op)) {
		/*
		 * The READ right behind the atomic, on the same QP: the
		 * responder executes it after the atomic (no fence: it needs
		 * nothing the atomic returns to us). Each WR completes on its
		 * own: both signalled, so that a failed atomic and the READ
		 * flushed after it are told apart.
		 */
		req->atomic_cqe.done = rdlock_onesided_atomic_done;
		awr.wr.wr_cqe = &req->atomic_cqe;
		awr.wr.next = &rwr.wr;
		rsge.addr = req->dma + sizeof(u64);
		rsge.length = req->count * sizeof(u64);
		rsge.lkey = sge.lkey;
		rwr.wr.opcode = IB_WR_RDMA_READ;
		rwr.remote_addr = base + req->rslot * sizeof(u64);
		rwr.rkey = rkey;
		rwr.wr.sg_list = &rsge;
		rwr.wr.num_sge = 1;
		rwr.wr.send_flags = IB_SEND_SIGNALED;
		rwr.wr.wr_cqe = &req->cqe;
	} else {
		wr->wr_cqe = &req->cqe;
	}
	spin_lock_bh(&conn->post_lock);
	if (!rdlock_conn_closing(conn))
		ret = ib_post_send(conn->qp, wr, &bad);
	spin_unlock_bh(&conn->post_lock);
	if (ret && rdlock_xop_reads_after(req->op) && bad == &rwr.wr) {
		/* The atomic went out alone: its completion ends the request. */
		req->last_status = IB_WC_WR_FLUSH_ERR;
		if (atomic_dec_and_test(&req->wrs_left))
			rdlock_onesided_end(req);
		return 0;
	}
	if (ret)
		ib_dma_unmap_single(ibdev, req->dma, sizeof(req->buf),
				    DMA_BIDIRECTIONAL);
	return ret;
}

static int rdlock_post_twosided(struct rdlock_xreq *req)
{
	struct rdlock_conn *conn = req->conn;
	struct rdlock_msgbuf *tx;
	struct rdlock_wire_msg *msg;
	int ret;

	tx = rdlock_tx_get(conn, RDLOCK_TX_SEND);
	if (!tx)
		return -EAGAIN;
	ret = xa_alloc_cyclic_bh(&conn->pending, &req->id, req,
				 XA_LIMIT(1, U32_MAX), &conn->next_id,
				 GFP_ATOMIC);
	if (ret < 0) {
		rdlock_tx_put(conn, tx);
		return ret;
	}
	msg = tx->msg;
	if (req->op == RDLOCK_XOP_PING) {
		rdlock_msg_init(msg, RDLOCK_WIRE_PING, req->id, 0);
	} else {
		rdlock_msg_init(msg, RDLOCK_WIRE_ATOMIC_REQ, req->id,
				sizeof(msg->req));
		msg->req.op = cpu_to_le32(req->seal ? RDLOCK_WIRE_OP_SEAL :
						      req->op);
		msg->req.slot = cpu_to_le32(req->slot);
		msg->req.arg0 = cpu_to_le64(req->arg0);
		msg->req.arg1 = cpu_to_le64(req->arg1);
		msg->req.replay_slot = cpu_to_le32(req->replay_slot);
		msg->req.count = cpu_to_le32(req->count);
		msg->req.rslot = cpu_to_le32(req->rslot);
		msg->req.gen = cpu_to_le64(req->gen);
	}
	tx->req_id = req->id;
	req->rx_seen = atomic_read(&conn->rx_count);
	ret = rdlock_tx_post(conn, tx);
	/*
	 * A teardown between publishing and the failed post has finished
	 * the request already: then it counts as started.
	 */
	if (ret && xa_erase_bh(&conn->pending, req->id) != req)
		ret = 0;
	return ret;
}

/* Complete the two-sided request @id if it is still pending. */
static void rdlock_pending_finish(struct rdlock_conn *conn, u32 id,
				  int status, u64 value)
{
	struct rdlock_xreq *req = xa_erase_bh(&conn->pending, id);

	if (req)
		rdlock_xreq_finish(req, status, value);
}

/* The answer @msg to the two-sided request @id, if it is still pending. */
static void rdlock_pending_answer(struct rdlock_conn *conn, u32 id,
				  const struct rdlock_wire_msg *msg)
{
	struct rdlock_xreq *req = xa_erase_bh(&conn->pending, id);
	u32 i;

	if (!req)
		return;
	for (i = 0; i < RDLOCK_XPORT_RANGE_MAX; i++)
		req->buf[i] = le64_to_cpu(msg->rep.words[i]);
	req->nread = min(le32_to_cpu(msg->rep.count), req->count);
	rdlock_xreq_finish(req, (s32)le32_to_cpu(msg->rep.status), req->buf[0]);
}

void rdlock_conn_fail_pending(struct rdlock_conn *conn, int status)
{
	struct rdlock_xreq *req;
	unsigned long id;

	xa_for_each(&conn->pending, id, req)
		rdlock_pending_finish(conn, id, status, 0);
}

static int rdlock_take_credit(struct rdlock_conn *conn, bool onesided,
			      unsigned long deadline)
{
	atomic_t *credits = onesided ? &conn->onesided_credits :
				       &conn->req_credits;
	long left;

	if (atomic_dec_if_positive(credits) >= 0)
		return 0;
	if (!deadline)
		return -EAGAIN;
	left = wait_event_timeout(conn->credit_wait,
				  rdlock_conn_closing(conn) ||
				  atomic_dec_if_positive(credits) >= 0,
				  max_t(long, deadline - jiffies, 1));
	if (!left)
		return -ETIMEDOUT;
	/* A credit taken from a closing connection needs no return. */
	return rdlock_conn_closing(conn) ? -ECONNRESET : 0;
}

/* The credits @req needs in flight: one per WR, or its one request. */
static int rdlock_take_credits(struct rdlock_conn *conn,
			       struct rdlock_xreq *req, unsigned long deadline)
{
	u32 i, n = req->onesided ? req->wrs : 1;
	int ret;

	for (i = 0; i < n; i++) {
		ret = rdlock_take_credit(conn, req->onesided, deadline);
		if (ret) {
			/* Back to an open connection only (see above). */
			if (i && !rdlock_conn_closing(conn)) {
				atomic_add(i, &conn->onesided_credits);
				wake_up(&conn->credit_wait);
			}
			return ret;
		}
	}
	return 0;
}

/* Are @req's slots inside a table of @slots? */
static bool rdlock_xreq_fits(const struct rdlock_xreq *req, u32 slots)
{
	switch (req->op) {
	case RDLOCK_XOP_READ_RANGE:
		return rdlock_range_ok(req->slot, req->count,
				       RDLOCK_XPORT_RANGE_MAX, slots);
	case RDLOCK_XOP_FAA_READ:
	case RDLOCK_XOP_CAS_READ:
		return req->slot < slots &&
		       rdlock_range_ok(req->rslot, req->count,
				       rdlock_xop_read_after_max(req->op),
				       slots);
	default:
		return req->slot < slots;
	}
}

/*
 * Start @req; @deadline 0 means the caller cannot sleep. On success the
 * request holds a second reference, dropped by rdlock_xreq_finish().
 */
int rdlock_xreq_start(struct rdlock_xreq *req, unsigned long deadline)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;
	int ret, backend;
	u32 words;

	if (req->op >= RDLOCK_XOP_NR)
		return -EINVAL;
	conn = rdlock_conn_get_ready(req->node, &ret);
	if (!conn)
		return ret;
	/*
	 * A connection lives no longer than the tables at both ends: one
	 * made to the table the caller means is the only way to reach it.
	 */
	if (req->incarnation && req->op != RDLOCK_XOP_PING &&
	    le64_to_cpu(conn->peer.table_incarnation) != req->incarnation) {
		rdlock_conn_put(conn);
		return -ESTALE;
	}
	backend = READ_ONCE(cl->backend);
	if (req->op != RDLOCK_XOP_PING &&
	    !rdlock_xreq_fits(req,
			      READ_ONCE(cl->nodes[req->node].table_slots))) {
		rdlock_conn_put(conn);
		return -EINVAL;
	}
	atomic64_inc(&cl->nodes[req->node].stats.ops[req->op]);

	if (req->op != RDLOCK_XOP_PING && req->node == cl->self &&
	    backend == RDLOCK_BACKEND_TWOSIDED) {
		/*
		 * Our own table: the executor the peers' requests reach. The
		 * table's release waits for it, not for the connection; a
		 * table made since is not the one the request was for.
		 */
		u64 inc = le64_to_cpu(conn->peer.table_incarnation);

		rdlock_conn_put(conn);
		ret = rdlock_table_exec_own(req->op, req->slot, req->arg0,
					    req->arg1, req->rslot, req->count,
					    req->buf, inc, deadline);
		req->nread = ret ? 0 : req->count;
		kref_get(&req->ref);
		rdlock_xreq_finish(req, ret, req->buf[0]);
		return 0;
	}

	req->conn = conn;
	req->onesided = req->op != RDLOCK_XOP_PING &&
			backend == RDLOCK_BACKEND_VERBS;
	ret = rdlock_take_credits(conn, req, deadline);
	if (ret)
		return ret;
	kref_get(&req->ref);
	ret = req->onesided ? rdlock_post_onesided(req) :
			      rdlock_post_twosided(req);
	if (ret) {
		if (req->onesided)
			atomic_add(req->wrs, &conn->onesided_credits);
		else
			atomic_inc(&conn->req_credits);
		wake_up(&conn->credit_wait);
		kref_put(&req->ref, rdlock_xreq_free);
		return ret;
	}
	words = req->op == RDLOCK_XOP_READ_RANGE ? req->count :
		rdlock_xop_reads_after(req->op) ? req->count + 1 : 1;
	atomic64_add(words * sizeof(u64), &cl->nodes[req->node].stats.bytes);
	return 0;
}

long rdlock_jiffies_left(unsigned long until)
{
	return max_t(long, (long)(until - jiffies), 1);
}

/* No answer from a stalled peer: flush what is in flight, reconnect. */
static void rdlock_xreq_reconnect(struct rdlock_xreq *req)
{
	pr_warn_ratelimited("node %u: no answer in time, reconnecting\n",
			    req->node);
	rdlock_conn_fail(req->conn);
}

/*
 * Wait for @req's outcome until @deadline; a recorded request, answered
 * once and sent again after its connection's end, goes on waiting until
 * @window (the same for any other).
 */
int rdlock_xreq_wait(struct rdlock_xreq *req, unsigned long deadline,
		     unsigned long window, u64 *value)
{
	bool stalled;

	if (wait_for_completion_timeout(&req->comp,
					rdlock_jiffies_left(deadline)))
		goto done;
	/*
	 * A peer that sent nothing at all since the request went out has a
	 * stalled link or device, and a one-sided operation cannot be
	 * withdrawn: both fail the connection, which flushes what is in
	 * flight and reconnects. A two-sided request to a peer that answers
	 * others is just late.
	 */
	stalled = req->onesided ||
		  atomic_read(&req->conn->rx_count) == req->rx_seen;
	if (time_before(jiffies, window)) {
		if (stalled)
			rdlock_xreq_reconnect(req);
		stalled = false;
		if (wait_for_completion_timeout(&req->comp,
						rdlock_jiffies_left(window)))
			goto done;
	}
	if (!test_and_set_bit(RDLOCK_XREQ_DONE, &req->flags)) {
		/*
		 * Give up; the operation may or may not take effect. A
		 * two-sided request stays pending, holding its credit, until
		 * its late answer or the connection's end finishes it.
		 */
		if (stalled)
			rdlock_xreq_reconnect(req);
		return -ETIMEDOUT;
	}
	/* The outcome is being delivered right now. */
	wait_for_completion(&req->comp);
done:
	*value = req->value;
	return req->status;
}

/* Start @req, wait for its outcome; the outcome is in @req. */
static int rdlock_xreq_run(struct rdlock_xreq *req, u64 incarnation,
			   unsigned int timeout_ms)
{
	unsigned long deadline;
	u64 value = 0;
	int ret;

	might_sleep();
	deadline = jiffies + msecs_to_jiffies(timeout_ms ? :
					      READ_ONCE(rdlock_op_timeout_ms));
	req->incarnation = incarnation;
	if (rdlock_xreq_recorded(req)) {
		ret = rdlock_xreq_exec_recorded(req, deadline, &value);
	} else {
		ret = rdlock_xreq_start(req, deadline);
		if (!ret)
			ret = rdlock_xreq_wait(req, deadline, deadline, &value);
	}
	req->value = value;
	return ret;
}

/**
 * rdlock_xport_exec() - perform an operation and wait for its outcome
 * @op: the operation.
 * @node: the home node of @slot.
 * @incarnation: the table of @node the operation is meant for
 *	(rdlock_xport_node_incarnation() when the caller started using it);
 *	0: whichever @node has now.
 * @slot: slot in @node's table (ignored for RDLOCK_XOP_PING).
 * @arg0: first operand.
 * @arg1: second operand.
 * @value: receives the returned value (see enum rdlock_xop).
 * @timeout_ms: 0 for the module's op_timeout_ms.
 *
 * With the two-sided backend, an operation that changes a word and whose
 * connection fails before the answer arrives is sent again, and applied
 * once (rdlock_xreq_exec_recorded()): its outcome is unknown only if no
 * connection to the same table comes back within a few op timeouts.
 *
 * Context: process context, may sleep.
 * Return: 0; -EAGAIN when the connection has too many operations in
 * flight, -ENOENT for an unknown node, -ENOTCONN when it is not connected,
 * -EINVAL for a bad @op or @slot, -ENOMEM, -ESTALE when @node has another table
 * than @incarnation (it restarted: nothing was done), -ETIMEDOUT (the
 * operation may have been applied), -ECONNRESET or -EIO when the
 * connection failed.
 */
int rdlock_xport_exec(enum rdlock_xop op, u32 node, u64 incarnation,
		      u32 slot, u64 arg0, u64 arg1, u64 *value,
		      unsigned int timeout_ms)
{
	struct rdlock_xreq *req;
	int ret;

	/* Ranges have rdlock_xport_exec_range(). */
	if (op == RDLOCK_XOP_READ_RANGE || rdlock_xop_reads_after(op))
		return -EINVAL;
	req = rdlock_xreq_alloc(GFP_KERNEL, op, node, slot, arg0, arg1);
	if (!req)
		return -ENOMEM;
	ret = rdlock_xreq_run(req, incarnation, timeout_ms);
	if (!ret)
		*value = req->value;
	rdlock_xreq_put(req);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_exec, RDLOCK_INTERNAL);

/**
 * rdlock_xport_exec_range() - a ranged READ, or an atomic and a READ at once
 * @op: %RDLOCK_XOP_READ_RANGE, %RDLOCK_XOP_FAA_READ or %RDLOCK_XOP_CAS_READ.
 * @node: the home node of the slots.
 * @incarnation: as for rdlock_xport_exec().
 * @slot: READ_RANGE: the first slot read; else the atomic's slot.
 * @arg0: FAA_READ: what is added; CAS_READ: what is compared.
 * @arg1: CAS_READ: what is swapped in.
 * @rslot: FAA_READ, CAS_READ: the first slot read.
 * @count: slots read, 1 to %RDLOCK_XPORT_RANGE_MAX (READ_RANGE),
 *	%RDLOCK_XPORT_FAA_READ_MAX (FAA_READ) or %RDLOCK_XPORT_CAS_READ_MAX
 *	(CAS_READ): what one answer carries.
 * @value: FAA_READ, CAS_READ: the value the atomic returned.
 * @vals: receives the slots read, in order.
 * @timeout_ms: 0 for the module's op_timeout_ms.
 *
 * One operation, one round trip: the verbs backend posts an RDMA READ
 * (after the atomic in the same chain: the responder executes them in
 * order, so the READ sees the table after the atomic); the two-sided one
 * sends one request, which the home executes in the same order. A
 * FAA_READ or CAS_READ is recorded and applied once as its atomic is
 * (rdlock_xport_exec()); the READ is done whether or not a CAS swapped.
 *
 * Context: process context, may sleep.
 * Return: the number of slots read: @count, or for a FAA_READ or CAS_READ
 * fewer (0) when its READ failed after the atomic was done (the
 * connection failed then; @value is valid, the caller READs what it
 * needs); else as rdlock_xport_exec(), and -EINVAL for a bad @op, @count
 * or range.
 */
int rdlock_xport_exec_range(enum rdlock_xop op, u32 node, u64 incarnation,
			    u32 slot, u64 arg0, u64 arg1, u32 rslot,
			    u32 count, u64 *value, u64 *vals,
			    unsigned int timeout_ms)
{
	u32 first = rdlock_xop_reads_after(op);
	struct rdlock_xreq *req;
	int ret;

	if ((op != RDLOCK_XOP_READ_RANGE && !first) || !count ||
	    count > (first ? rdlock_xop_read_after_max(op) :
			     RDLOCK_XPORT_RANGE_MAX))
		return -EINVAL;
	req = rdlock_xreq_alloc(GFP_KERNEL, op, node, slot, arg0, arg1);
	if (!req)
		return -ENOMEM;
	req->rslot = rslot;
	req->count = count;
	ret = rdlock_xreq_run(req, incarnation, timeout_ms);
	if (!ret) {
		if (first)
			*value = req->value;
		memcpy(vals, req->buf + first, req->nread * sizeof(u64));
		ret = req->nread;
	}
	rdlock_xreq_put(req);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_exec_range, RDLOCK_INTERNAL);

/*
 * Posted requests (rdlock_xport_post()). Besides the in-flight reference,
 * a posted request holds one until @done is called and one for its
 * delayed work while that is queued. The completion delivers a success,
 * or a failure that nothing will change, at once and in its own context
 * (softirq); the delayed work, in process context, runs what sleeps: at
 * the deadline, the synchronous wait's timeout handling, and for a
 * recorded request the resends. Whoever sets RDLOCK_XREQ_CLAIMED first
 * delivers the end; a resend's completion then only completes @req->comp.
 */
static void rdlock_xreq_async_end(struct rdlock_xreq *req, int ret, u64 value)
{
	if (req->recorded)
		rdlock_replay_slot_put(req);
	req->done(req->done_ctx, ret, value);
	rdlock_xreq_put(req);
}

/* From rdlock_xreq_finish(), in any context, the outcome in @req. */
static void rdlock_xreq_async_done(struct rdlock_xreq *req)
{
	if (test_bit(RDLOCK_XREQ_CLAIMED, &req->flags))
		return;
	if (req->status && req->recorded && rdlock_xreq_resend(req->status)) {
		kref_get(&req->ref);
		/* Pending already (its timeout): that one has a reference. */
		if (mod_delayed_work(rdlock_async_wq, &req->dwork, 0))
			rdlock_xreq_put(req);
		return;
	}
	if (test_and_set_bit(RDLOCK_XREQ_CLAIMED, &req->flags))
		return;
	if (cancel_delayed_work(&req->dwork))
		rdlock_xreq_put(req);
	rdlock_xreq_async_end(req, req->status, req->value);
}

static void rdlock_xreq_async_work(struct work_struct *work)
{
	struct rdlock_xreq *req = container_of(to_delayed_work(work),
					       struct rdlock_xreq, dwork);
	u64 value = 0;
	int ret;

	if (test_and_set_bit(RDLOCK_XREQ_CLAIMED, &req->flags))
		goto out;
	/* What the synchronous caller does once its wait ends. */
	ret = rdlock_xreq_wait(req, req->deadline, req->window, &value);
	if (req->recorded)
		ret = rdlock_xreq_send_recorded(req, req->deadline,
						req->window, true, ret, &value);
	rdlock_xreq_async_end(req, ret, value);
out:
	rdlock_xreq_put(req);
}

/**
 * rdlock_xport_post() - post an operation; its outcome comes to a callback
 * @op: %RDLOCK_XOP_WRITE, %RDLOCK_XOP_FAA or %RDLOCK_XOP_CAS.
 * @node: the home node of @slot.
 * @incarnation: the table of @node the operation is meant for; never 0:
 *	a posted operation must not outlive the table its caller means.
 * @slot: slot in @node's table.
 * @arg0: first operand.
 * @arg1: second operand.
 * @done: called once with the outcome and value, as rdlock_xport_exec()
 *	returns them, in softirq (the completion) or in a worker (a timeout,
 *	a two-sided request sent again): it must not sleep. It may be called
 *	before this function returns.
 * @ctx: passed to @done.
 *
 * As rdlock_xport_exec() but without waiting: the operation is on the
 * queue pair to @node when this returns, so the home executes it before
 * any operation posted to @node after it (design.rst, "Operations"). It
 * has the same timeout, and with the two-sided backend it is sent again
 * and applied once in the same way. The home's own table with the
 * two-sided backend is a function call: not posted.
 *
 * Context: process context; may sleep for a credit or a replay slot.
 * Return: 0: posted, @done will be called. Else nothing was sent and @done
 * is not called: -EINVAL for a bad @op or no @incarnation, -EOPNOTSUPP for
 * the home's own two-sided table, -ENOMEM, or an error of
 * rdlock_xport_exec() from before the send.
 */
int rdlock_xport_post(enum rdlock_xop op, u32 node, u64 incarnation,
		      u32 slot, u64 arg0, u64 arg1, rdlock_xport_done_t done,
		      void *ctx)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_xreq *req;
	unsigned long timeout;
	int ret;

	might_sleep();
	if ((op != RDLOCK_XOP_WRITE && op != RDLOCK_XOP_FAA &&
	     op != RDLOCK_XOP_CAS) || !incarnation || node >= RDLOCK_MAX_NODES)
		return -EINVAL;
	if (node == cl->self &&
	    READ_ONCE(cl->backend) == RDLOCK_BACKEND_TWOSIDED)
		return -EOPNOTSUPP;
	req = rdlock_xreq_alloc(GFP_KERNEL, op, node, slot, arg0, arg1);
	if (!req)
		return -ENOMEM;
	req->incarnation = incarnation;
	req->done = done;
	req->done_ctx = ctx;
	INIT_DELAYED_WORK(&req->dwork, rdlock_xreq_async_work);
	timeout = msecs_to_jiffies(READ_ONCE(rdlock_op_timeout_ms));
	req->deadline = jiffies + timeout;
	req->recorded = rdlock_xreq_recorded(req);
	req->window = req->recorded ?
		      jiffies + RDLOCK_REPLAY_WINDOW_FACTOR * timeout :
		      req->deadline;
	if (req->recorded) {
		ret = rdlock_xreq_record(req, req->deadline);
		if (ret)
			goto put;
	}
	set_bit(RDLOCK_XREQ_ASYNC, &req->flags);
	kref_get(&req->ref);		/* until @done */
	ret = rdlock_xreq_start(req, req->deadline);
	if (ret) {
		clear_bit(RDLOCK_XREQ_ASYNC, &req->flags);
		rdlock_xreq_put(req);
		if (req->recorded)
			rdlock_replay_slot_put(req);
		goto put;
	}
	/* Its timeout, unless the completion queued the work already. */
	kref_get(&req->ref);
	if (!queue_delayed_work(rdlock_async_wq, &req->dwork,
				rdlock_jiffies_left(req->deadline)))
		rdlock_xreq_put(req);
	/*
	 * A completion that delivered the end before the timeout was queued
	 * found nothing to cancel: then cancel it here, so that nothing is
	 * left pending at the module's exit.
	 */
	smp_mb();	/* pairs with test_and_set_bit() of CLAIMED */
	if (test_bit(RDLOCK_XREQ_CLAIMED, &req->flags) &&
	    cancel_delayed_work(&req->dwork))
		rdlock_xreq_put(req);
put:
	rdlock_xreq_put(req);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_post, RDLOCK_INTERNAL);

/**
 * rdlock_probe_atomics() - can the device execute kernel-posted atomics?
 * @conn: the established loopback connection.
 *
 * One FETCH_AND_ADD through the loopback QP to slot 0, which is zero. The
 * device may store atomic targets big-endian (mlx4) or in host order
 * (rxe); reading slot 0 back - the only CPU access to the table outside the
 * two-sided executor, made before any backend is in use - tells which, and
 * a second FAA tells the format of returned values. A refusal, either by
 * ib_post_send (upstream mlx5 returns -EOPNOTSUPP) or by an error
 * completion, means the two-sided backend.
 *
 * Return: 0 when the capability is known, or an error from a failed
 * connection.
 */
int rdlock_probe_atomics(struct rdlock_conn *conn)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u64 first = 0, second = 0, stored;
	struct rdlock_xreq *req;
	unsigned int i;
	int ret = 0;

	cl->self_adv.verbs_capable = false;
	/* rxe, siw and rdmavt map no DMA: their verbs are host software. */
	cl->self_adv.soft_device = ib_uses_virt_dma(conn->dev->ibdev);
	if (conn->dev->ibdev->attrs.atomic_cap == IB_ATOMIC_NONE)
		goto done;

	for (i = 0; i < 2 && !ret; i++) {
		req = rdlock_xreq_alloc(GFP_KERNEL, RDLOCK_XOP_FAA, cl->self,
					0, 1, 0);
		if (!req)
			return -ENOMEM;
		kref_get(&conn->ref);
		req->conn = conn;
		req->raw = true;
		req->onesided = true;
		atomic_dec(&conn->onesided_credits);
		kref_get(&req->ref);
		ret = rdlock_post_onesided(req);
		if (ret) {
			rdlock_xreq_finish(req, ret, 0);
		} else {
			/* A failed connection flushes the request. */
			wait_for_completion(&req->comp);
			ret = req->status;
			if (i == 0)
				first = req->value;
			else
				second = req->value;
		}
		rdlock_xreq_put(req);
	}
	/* Flushed by a teardown for another reason: probe again later. */
	if (ret == -ECONNRESET)
		return ret;
	if (ret) {
		pr_info("device refuses kernel-posted atomics (%d)\n", ret);
		goto done;
	}

	/* The device wrote slot 0 by DMA: make the CPU's view current. */
	ib_dma_sync_single_for_cpu(conn->dev->ibdev,
				   sg_dma_address(&cl->table.sg), sizeof(u64),
				   DMA_BIDIRECTIONAL);
	stored = READ_ONCE(cl->table.mem[0]);
	if (first != 0 || (stored != rdlock_word_to(2, true) &&
			   stored != rdlock_word_to(2, false))) {
		pr_warn("atomic probe returned unexpected values\n");
		goto done;
	}
	cl->words_be = stored == rdlock_word_to(2, true);
	if (second == rdlock_word_to(1, true))
		cl->result_be = true;
	else if (second == rdlock_word_to(1, false))
		cl->result_be = false;
	else
		goto done;
	cl->self_adv.verbs_capable = true;
done:
	cl->probed = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Receiving                                                          */

/* @words as struct rdlock_wire_msg's rep; @count: slots read. */
static void rdlock_reply(struct rdlock_conn *conn, u16 type, u64 id,
			 int status, const u64 *words, u32 count)
{
	struct rdlock_msgbuf *tx = rdlock_tx_get(conn, RDLOCK_TX_REPLY);
	u32 i;

	if (!tx) {
		pr_err_ratelimited("node %u: no buffer for a reply\n",
				   conn->node);
		rdlock_conn_fail(conn);
		return;
	}
	rdlock_msg_init(tx->msg, type, id, sizeof(tx->msg->rep));
	tx->msg->rep.status = cpu_to_le32(status);
	tx->msg->rep.count = cpu_to_le32(count);
	for (i = 0; i < RDLOCK_XPORT_RANGE_MAX; i++)
		tx->msg->rep.words[i] = cpu_to_le64(words[i]);
	rdlock_tx_post(conn, tx);
}

static void rdlock_serve_atomic(struct rdlock_conn *conn,
				const struct rdlock_wire_msg *msg, u64 id)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u64 words[RDLOCK_XPORT_RANGE_MAX] = {};
	enum rdlock_xop op = le32_to_cpu(msg->req.op);
	bool applied = false;
	/*
	 * Serving a verbs cluster's table with CPU atomics would mix them.
	 * A request proves its sender resolved two-sided, and every node
	 * resolves the same adverts alike, so only a node that resolved
	 * verbs refuses; one still waiting for a peer's advert serves.
	 */
	bool verbs = READ_ONCE(cl->backend) == RDLOCK_BACKEND_VERBS;
	u32 count = 0;
	int ret;

	if (!verbs && rdlock_late_hold(conn, msg))
		return;
	ret = verbs ? -EPROTO :
		      rdlock_serve_recorded(conn, msg, words, &applied);
	/* Done means every slot read (checked before anything was done). */
	if (!ret && (op == RDLOCK_XOP_READ_RANGE || rdlock_xop_reads_after(op)))
		count = le32_to_cpu(msg->req.count);
	atomic64_inc(&cl->nodes[conn->node].stats.served);
	/* Fault injection: applied, but the answer is lost with the link. */
	if (applied && rdlock_fault_lost_reply(conn))
		return;
	rdlock_reply(conn, RDLOCK_WIRE_ATOMIC_REP, id, ret, words, count);
}

/* The table's registration for a peer failed: no key for it, fail. */
static void rdlock_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlock_conn *conn = container_of(wc->wr_cqe, struct rdlock_conn,
						reg_cqe);

	if (wc->status == IB_WC_SUCCESS)
		return;		/* unsignalled: only a failure completes */
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_err_ratelimited("node %u: lock table registration failed: %s\n",
				   conn->node, ib_wc_status_msg(wc->status));
	rdlock_conn_fail(conn);
}

/**
 * rdlock_conn_send_table() - our table to a peer, its own key to it
 * @conn: a peer's connection (rdlock_conn_trades_tables()), connected;
 *	keyed, the peer proved the key.
 *
 * Registers @conn's MR (rdlock_table_grant_alloc()) on @conn's queue pair,
 * then sends its address and key behind it: the peer's first operation
 * comes after the message, so after the registration. Softirq or process
 * context; once per connection.
 *
 * Return: 0 or a negative errno.
 */
int rdlock_conn_send_table(struct rdlock_conn *conn)
{
	struct ib_mr *mr = conn->mr;
	struct rdlock_msgbuf *tx;
	struct ib_reg_wr reg = {};
	int ret;

	tx = rdlock_tx_get(conn, RDLOCK_TX_SEND);
	if (!tx)
		return -EAGAIN;
	rdlock_table_reg_wr(mr, &reg);
	conn->reg_cqe.done = rdlock_reg_done;
	reg.wr.wr_cqe = &conn->reg_cqe;
	ret = rdlock_conn_post_send(conn, &reg.wr);
	if (ret) {
		rdlock_tx_put(conn, tx);
		return ret;
	}
	rdlock_msg_init(tx->msg, RDLOCK_WIRE_TABLE, 0, sizeof(tx->msg->table));
	tx->msg->table.addr = cpu_to_le64(mr->iova);
	tx->msg->table.rkey = cpu_to_le32(mr->rkey);
	if (conn->keyed) {
		ret = rdlock_auth_table_mac(conn->challenge, &conn->req,
					    conn->active, mr->iova, mr->rkey,
					    tx->msg->table.mac);
		if (ret) {
			rdlock_tx_put(conn, tx);
			return ret;
		}
		/* Fault injection: a table message as a forger would send. */
		if (rdlock_fault_forged_table(conn->node))
			tx->msg->table.mac[0] ^= 1;
	}
	return rdlock_tx_post(conn, tx);
}

/*
 * Keyed, a table message counts only with the sender's proof of the key
 * for this connection and direction (rdlock_auth_table_mac()): the queue
 * pair does not authenticate what arrives on it.
 */
static bool rdlock_table_proven(struct rdlock_conn *conn,
				const struct rdlock_wire_msg *msg)
{
	u8 mac[RDLOCK_AUTH_REQ_MAC_LEN];
	bool proven;

	if (!conn->keyed)
		return true;
	proven = !rdlock_auth_table_mac(conn->challenge, &conn->req,
					!conn->active,
					le64_to_cpu(msg->table.addr),
					le32_to_cpu(msg->table.rkey), mac) &&
		 !crypto_memneq(mac, msg->table.mac, sizeof(mac));
	memzero_explicit(mac, sizeof(mac));
	return proven;
}

/*
 * A peer's table and our key to it, once per connection. The acceptor
 * sends its own in answer: the requester's comes first, keyed only once
 * the acceptor proved the key, so that the requester never gets a
 * message before it checked that proof. With ESTABLISHED, the last step
 * before ready.
 */
static void rdlock_recv_table(struct rdlock_conn *conn,
			      const struct rdlock_wire_msg *msg)
{
	if (!rdlock_conn_trades_tables(conn) ||
	    test_and_set_bit(RDLOCK_CONN_TABLE, &conn->flags)) {
		pr_err_ratelimited("node %u: unexpected table message\n",
				   conn->node);
		rdlock_conn_fail(conn);
		return;
	}
	if (!rdlock_table_proven(conn, msg)) {
		atomic64_inc(&rdlock_cl.auth_bad_table);
		pr_err_ratelimited("node %u: its table message does not prove the cluster key\n",
				   conn->node);
		rdlock_conn_fail(conn);
		return;
	}
	conn->table_addr = le64_to_cpu(msg->table.addr);
	conn->rkey = le32_to_cpu(msg->table.rkey);
	if (!conn->active && rdlock_conn_send_table(conn)) {
		rdlock_conn_fail(conn);
		return;
	}
	if (atomic_dec_and_test(&conn->ready_pending) &&
	    rdlock_conn_ready(conn))
		rdlock_conn_fail(conn);
}

static void rdlock_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlock_msgbuf *rx = container_of(wc->wr_cqe,
						struct rdlock_msgbuf, cqe);
	struct rdlock_conn *conn = rx->conn;
	const struct rdlock_wire_msg *msg = rx->msg;
	static const u64 zero[RDLOCK_XPORT_RANGE_MAX];
	rdlock_xmsg_handler_t handler;
	unsigned int type;
	u64 id;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err_ratelimited("node %u: receive failed: %s\n",
					   conn->node,
					   ib_wc_status_msg(wc->status));
		rdlock_conn_fail(conn);
		return;
	}
	ib_dma_sync_single_for_cpu(conn->dev->ibdev, rx->dma, RDLOCK_MSG_SIZE,
				   DMA_BIDIRECTIONAL);
	if (wc->byte_len < sizeof(msg->hdr) ||
	    le32_to_cpu(msg->hdr.src_node) != conn->node) {
		pr_err_ratelimited("node %u: malformed message\n", conn->node);
		rdlock_conn_fail(conn);
		return;
	}
	/* Keyed: nothing is served before the peer proved the key. */
	if (conn->keyed && !test_bit(RDLOCK_CONN_AUTHED, &conn->flags)) {
		atomic64_inc(&rdlock_cl.auth_unauth_msgs);
		pr_err_ratelimited("node %u: message before the cluster key was proven\n",
				   conn->node);
		rdlock_conn_fail(conn);
		return;
	}
	atomic64_inc(&rdlock_cl.nodes[conn->node].stats.msgs_recv);
	atomic_inc(&conn->rx_count);
	type = le16_to_cpu(msg->hdr.type);
	id = le64_to_cpu(msg->hdr.id);
	/* A knock only tells a table declared down so; nothing else. */
	if (conn->knock && type != RDLOCK_WIRE_FENCED) {
		rdlock_post_recv(conn, rx);
		return;
	}

	switch (type) {
	case RDLOCK_WIRE_TABLE:
		rdlock_recv_table(conn, msg);
		break;
	case RDLOCK_WIRE_ATOMIC_REQ:
		rdlock_serve_atomic(conn, msg, id);
		break;
	case RDLOCK_WIRE_ATOMIC_REP:
		rdlock_pending_answer(conn, id, msg);
		break;
	case RDLOCK_WIRE_PING:
		rdlock_reply(conn, RDLOCK_WIRE_PONG, id, 0, zero, 0);
		break;
	case RDLOCK_WIRE_PONG:
		rdlock_pending_finish(conn, id, 0, 0);
		break;
	case RDLOCK_WIRE_FENCED:
		rdlock_fenced_by(conn->node);
		break;
	case RDLOCK_WIRE_DOWNSET:
		rdlock_recv_downset(conn, &msg->downset);
		break;
	default:
		if (type < RDLOCK_WIRE_USER ||
		    type >= RDLOCK_WIRE_USER + RDLOCK_XMSG_USER_TYPES)
			break;
		handler = READ_ONCE(rdlock_cl.handlers[type - RDLOCK_WIRE_USER]);
		if (handler)
			handler(conn->node, msg->payload,
				min_t(size_t, le16_to_cpu(msg->hdr.len),
				      sizeof(msg->payload)));
		break;
	}
	rdlock_post_recv(conn, rx);
}

static void rdlock_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlock_msgbuf *tx = container_of(wc->wr_cqe,
						struct rdlock_msgbuf, cqe);
	struct rdlock_conn *conn = tx->conn;
	u32 id = tx->req_id;
	bool fence = tx->fence;

	rdlock_tx_put(conn, tx);
	/* RDLOCK_WIRE_FENCED went out (or not): the node is cut off now. */
	if (fence)
		rdlock_conn_fail(conn);
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err_ratelimited("node %u: send failed: %s\n",
					   conn->node,
					   ib_wc_status_msg(wc->status));
		rdlock_conn_fail(conn);
		if (id)
			rdlock_pending_finish(conn, id, -ECONNRESET, 0);
	}
}

/**
 * rdlock_send_fenced() - tell a peer it was declared down, then cut it off
 * @conn: an established connection to it.
 *
 * Return: true when the message was posted: its completion fails @conn;
 * false when the caller must fail it.
 */
bool rdlock_send_fenced(struct rdlock_conn *conn)
{
	struct rdlock_msgbuf *tx = rdlock_tx_get(conn, RDLOCK_TX_REPLY);

	if (!tx)
		return false;
	rdlock_msg_init(tx->msg, RDLOCK_WIRE_FENCED, 0, 0);
	tx->fence = true;
	return !rdlock_tx_post(conn, tx);
}

/**
 * rdlock_conn_send_downset() - one RDLOCK_WIRE_DOWNSET message to a peer
 * @conn: an established connection to it.
 * @ds: the message's body.
 *
 * Return: 0 or a negative errno.
 */
int rdlock_conn_send_downset(struct rdlock_conn *conn,
			     const struct rdlock_wire_downset *ds)
{
	struct rdlock_msgbuf *tx = rdlock_tx_get(conn, RDLOCK_TX_SEND);

	if (!tx)
		return -EAGAIN;
	rdlock_msg_init(tx->msg, RDLOCK_WIRE_DOWNSET, 0, sizeof(*ds));
	tx->msg->downset = *ds;
	return rdlock_tx_post(conn, tx);
}

/* ------------------------------------------------------------------ */
/* One-way messages and facts for the layers above                    */

/**
 * rdlock_xport_set_msg_handler() - receive one-way messages of a type
 * @type: below RDLOCK_XMSG_USER_TYPES.
 * @handler: called in softirq context for each message; NULL to stop.
 *
 * Return: 0 or -EINVAL.
 */
int rdlock_xport_set_msg_handler(unsigned int type,
				 rdlock_xmsg_handler_t handler)
{
	if (type >= RDLOCK_XMSG_USER_TYPES)
		return -EINVAL;
	WRITE_ONCE(rdlock_cl.handlers[type], handler);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_set_msg_handler, RDLOCK_INTERNAL);

static int __rdlock_xport_send_msg(u32 node, unsigned int type,
				   const void *payload, size_t len,
				   enum rdlock_tx_use use)
{
	struct rdlock_msgbuf *tx;
	struct rdlock_conn *conn;
	int ret;

	if (type >= RDLOCK_XMSG_USER_TYPES || len > RDLOCK_XMSG_PAYLOAD)
		return -EINVAL;
	conn = rdlock_conn_get_ready(node, &ret);
	if (!conn)
		return ret;
	/*
	 * Fault injection: the message is lost with its connection, and the
	 * sender cannot tell, as when a posted send is flushed.
	 */
	if (node != rdlock_cl.self && rdlock_fault_lost_msg(conn)) {
		rdlock_conn_put(conn);
		return 0;
	}
	tx = rdlock_tx_get(conn, use);
	if (tx) {
		rdlock_msg_init(tx->msg, RDLOCK_WIRE_USER + type, 0, len);
		memcpy(tx->msg->payload, payload, len);
		ret = rdlock_tx_post(conn, tx);
	} else {
		ret = -EAGAIN;
	}
	rdlock_conn_put(conn);
	return ret;
}

/**
 * rdlock_xport_send_msg() - send a one-way message to a node
 * @node: destination; our own id goes through the loopback connection.
 * @type: below RDLOCK_XMSG_USER_TYPES.
 * @payload: up to RDLOCK_XMSG_PAYLOAD bytes.
 * @len: length of @payload.
 *
 * Context: any but hardirq; does not sleep. Delivery is in order per pair
 * of nodes, and lost only with the connection.
 * Return: 0, -EINVAL, -ENOENT, -ENOTCONN, or -EAGAIN when the connection's
 * send buffers are all in use.
 */
int rdlock_xport_send_msg(u32 node, unsigned int type, const void *payload,
			  size_t len)
{
	return __rdlock_xport_send_msg(node, type, payload, len,
				       RDLOCK_TX_SEND);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_send_msg, RDLOCK_INTERNAL);

/**
 * rdlock_xport_send_msg_bulk() - send a message of a bulk transfer
 * @node: the destination.
 * @type: the message type, below RDLOCK_XMSG_USER_TYPES.
 * @payload: up to RDLOCK_XMSG_PAYLOAD bytes.
 * @len: its length.
 *
 * As rdlock_xport_send_msg(), but -EAGAIN once a quarter of the link's send
 * buffers hold one-way messages and requests: a long train of these (a
 * node's answer to a dump of its locks) leaves the other quarter of that
 * half to the lock path's requests and notices.
 *
 * Return: 0, -EAGAIN (try again later), or rdlock_xport_send_msg()'s errors.
 */
int rdlock_xport_send_msg_bulk(u32 node, unsigned int type,
			       const void *payload, size_t len)
{
	return __rdlock_xport_send_msg(node, type, payload, len,
				       RDLOCK_TX_BULK);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_send_msg_bulk, RDLOCK_INTERNAL);

/**
 * rdlock_xport_set_up_handler() - hear of connections to other nodes
 * @handler: called each time a connection to another node becomes ready,
 *	the first one included, in softirq or process context (it must not
 *	sleep); NULL to stop.
 *
 * A user that keeps state on other nodes with one-way messages sends it
 * again from here: what was sent while the node was unreachable, or
 * posted before its connection failed, is lost.
 */
void rdlock_xport_set_up_handler(rdlock_xport_up_handler_t handler)
{
	WRITE_ONCE(rdlock_cl.up_handler, handler);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_set_up_handler, RDLOCK_INTERNAL);

/**
 * rdlock_xport_set_epoch_handler() - hear that the cluster epoch ended
 * @handler: called once each time rdlock_xport_epoch() moves on (this
 *	node was declared down, a node came back with a new table, the
 *	cluster went down), under the transport's lock with bottom halves
 *	off: it may only queue work. NULL to stop: once this returns the old
 *	handler is not running and is not called again.
 *
 * A layer whose users keep locks of the old epoch tells them from there
 * that those locks are gone.
 */
void rdlock_xport_set_epoch_handler(rdlock_xport_epoch_handler_t handler)
{
	/* Under the lock: no call of the old one runs once this returns. */
	spin_lock_bh(&rdlock_cl.lock);
	rdlock_cl.epoch_handler = handler;
	spin_unlock_bh(&rdlock_cl.lock);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_set_epoch_handler, RDLOCK_INTERNAL);

u32 rdlock_xport_self(void)
{
	return READ_ONCE(rdlock_cl.self);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_self, RDLOCK_INTERNAL);

u32 rdlock_xport_table_slots(void)
{
	return READ_ONCE(rdlock_cl.table.slots);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_table_slots, RDLOCK_INTERNAL);

/*
 * A node's table size as its connection announced it; 0 until then, and
 * while it has none. A node cut off keeps the size it last announced: the
 * lockspaces opened after it died are laid out as those before.
 */
u32 rdlock_xport_node_slots(u32 node)
{
	u32 slots = 0;

	if (node >= RDLOCK_MAX_NODES)
		return 0;
	spin_lock_bh(&rdlock_cl.lock);
	if (node == rdlock_cl.self)
		slots = rdlock_cl.table.slots;
	else if (rdlock_cl.nodes[node].conn ||
		 rdlock_cl.nodes[node].member != RDLOCK_MEMBER_CONFIGURED)
		slots = rdlock_cl.nodes[node].table_slots;
	spin_unlock_bh(&rdlock_cl.lock);
	return slots;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_slots, RDLOCK_INTERNAL);

/**
 * rdlock_xport_node_table() - the table of a peer this node knows
 * @node: a peer.
 * @t: its incarnation (0: none known) and the size its connection
 *	announced, kept while it is unreachable or cut off.
 */
void rdlock_xport_node_table(u32 node, struct rdlock_table_named *t)
{
	*t = (struct rdlock_table_named){};
	if (node >= RDLOCK_MAX_NODES || node == READ_ONCE(rdlock_cl.self))
		return;
	spin_lock_bh(&rdlock_cl.lock);
	t->incarnation = rdlock_cl.nodes[node].incarnation;
	if (t->incarnation)
		t->slots = rdlock_cl.nodes[node].table_slots;
	spin_unlock_bh(&rdlock_cl.lock);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_table, RDLOCK_INTERNAL);

/**
 * rdlock_xport_epoch() - the cluster epoch, for layers that cache tables
 *
 * Changes whenever a lock table that callers may have written to is lost:
 * this node's cluster went down (its table is freed, and with it every
 * connection), or a peer came back with a new, zeroed table.
 *
 * Return: the epoch; compare it for equality only.
 */
u32 rdlock_xport_epoch(void)
{
	return READ_ONCE(rdlock_cl.epoch);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_epoch, RDLOCK_INTERNAL);

/**
 * rdlock_xport_node_incarnation() - which table a node has now
 * @node: node id, this one included.
 *
 * Return: a random non-zero value per allocation of the node's table, 0
 * while unknown (this node down, or the peer never connected since).
 */
u64 rdlock_xport_node_incarnation(u32 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	if (node >= RDLOCK_MAX_NODES)
		return 0;
	if (node == READ_ONCE(cl->self))
		return READ_ONCE(cl->table.incarnation);
	return READ_ONCE(cl->nodes[node].incarnation);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_incarnation, RDLOCK_INTERNAL);

/**
 * rdlock_xport_slot_check() - is a slot of the table a node has now
 * @node: node id, this one included.
 * @incarnation: a table of @node.
 * @slot: a slot.
 *
 * Checks @incarnation against the table @node has now as this node knows
 * it (rdlock_xport_node_incarnation(), kept while the node is
 * unreachable) and @slot against its size, as its connection announced
 * it. Context: any but hardirq.
 *
 * Return: 0 if @slot is inside that table; -ENOENT if this node knows no
 * table of @node; -ESTALE for another table, or a slot outside it.
 */
int rdlock_xport_slot_check(u32 node, u64 incarnation, u32 slot)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u64 now;
	u32 slots;

	if (node >= RDLOCK_MAX_NODES || !incarnation)
		return -ESTALE;
	spin_lock_bh(&cl->lock);
	if (node == cl->self) {
		now = cl->table.incarnation;
		slots = cl->table.slots;
	} else {
		now = cl->nodes[node].incarnation;
		slots = cl->nodes[node].table_slots;
	}
	spin_unlock_bh(&cl->lock);
	if (!now)
		return -ENOENT;
	return now == incarnation && slot < slots ? 0 : -ESTALE;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_slot_check, RDLOCK_INTERNAL);

int rdlock_xport_backend(void)
{
	return READ_ONCE(rdlock_cl.backend);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_backend, RDLOCK_INTERNAL);

bool rdlock_xport_ready(void)
{
	return rdlock_cluster_state() == RDLOCK_CLUSTER_READY;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_ready, RDLOCK_INTERNAL);

/* Return: true while this node's cluster is up, ready or not. */
bool rdlock_xport_up(void)
{
	return rdlock_cluster_state() >= RDLOCK_CLUSTER_CONNECTING;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_up, RDLOCK_INTERNAL);

bool rdlock_xport_node_configured(u32 node)
{
	return node < RDLOCK_MAX_NODES &&
	       rdlock_node_member(&rdlock_cl.nodes[node]);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_configured, RDLOCK_INTERNAL);

int rdlock_io_init(void)
{
	rdlock_replay_init();
	rdlock_xreq_cache = KMEM_CACHE(rdlock_xreq, 0);
	rdlock_async_wq = alloc_workqueue("rdlock_async",
					  WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!rdlock_xreq_cache || !rdlock_async_wq) {
		rdlock_io_exit();
		return -ENOMEM;
	}
	return 0;
}

/* After the posted requests' callbacks were called (rdlock_proto_exit()). */
void rdlock_io_exit(void)
{
	rdlock_xport_fault_exit();
	if (rdlock_async_wq)
		destroy_workqueue(rdlock_async_wq);
	rdlock_async_wq = NULL;
	kmem_cache_destroy(rdlock_xreq_cache);
	rdlock_xreq_cache = NULL;
}
