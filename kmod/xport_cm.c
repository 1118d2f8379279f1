// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: cluster membership, devices and rdma_cm connections.
 *
 * Each pair of nodes shares exactly one RC queue pair: the node with the
 * lower id connects, the other accepts. Every node also connects to itself
 * (loopback), so that its own lock table is reached through the same atomic
 * backend as everybody else's. The loopback connection is the first one
 * made: on it the lock table is registered (FRWR) and the device's atomics
 * are probed, and only then does the node connect to its peers, because the
 * table's address and rkey travel in the connection private data.
 *
 * Teardown follows nvme-rdma: stop posting, disconnect, drain, then free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <crypto/algapi.h>
#include <rdma/ib_cm.h>

#include "xport-pri.h"
#include "uapi_check.h"

struct rdlock_cluster rdlock_cl;
struct workqueue_struct *rdlock_wq;

/* What rdma_cm leaves in an IB CM REQ, REP and REJ; one message buffer. */
static_assert(sizeof(struct rdlock_cm_hdr) == 24);
static_assert(sizeof(struct rdlock_cm_pdata) == 48);
static_assert(sizeof(struct rdlock_cm_req_keyed) == 56);
static_assert(sizeof(struct rdlock_cm_rep_keyed) <= 196);
static_assert(sizeof(struct rdlock_cm_challenge) <= 148);
static_assert(sizeof(struct rdlock_wire_msg) <= RDLOCK_MSG_SIZE);

static const char *const rdlock_reject_names[] = {
	[RDLOCK_REJ_VERSION]		= "protocol version",
	[RDLOCK_REJ_CLUSTER]		= "cluster id",
	[RDLOCK_REJ_NODE]		= "unknown node",
	[RDLOCK_REJ_DIRECTION]		= "higher node id must accept",
	[RDLOCK_REJ_NOT_READY]		= "not ready",
	[RDLOCK_REJ_BACKEND]		= "atomic backend mismatch",
	[RDLOCK_REJ_NO_RESOURCES]	= "no resources",
	[RDLOCK_REJ_ADDRESS]		= "source address",
	[RDLOCK_REJ_CHALLENGE]		= "challenge",
	[RDLOCK_REJ_KEY]		= "cluster key on one side only",
	[RDLOCK_REJ_AUTH]		= "wrong cluster key",
	[RDLOCK_REJ_FENCED]		= "declared down",
};

static const char *rdlock_backend_name(int backend)
{
	switch (backend) {
	case RDLOCK_BACKEND_VERBS:
		return "verbs";
	case RDLOCK_BACKEND_TWOSIDED:
		return "twosided";
	default:
		return "auto";
	}
}

/* ------------------------------------------------------------------ */
/* Devices                                                            */

static struct rdlock_dev *rdlock_dev_get(struct ib_device *ibdev)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_dev *dev;
	int nr_cqe, ret;

	mutex_lock(&cl->dev_mutex);
	dev = cl->dev;
	if (dev) {
		/* The lock table is registered on one device only. */
		if (dev->ibdev != ibdev)
			dev = ERR_PTR(-EXDEV);
		goto out;
	}

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		dev = ERR_PTR(-ENOMEM);
		goto out;
	}
	dev->ibdev = ibdev;
	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		ret = PTR_ERR(dev->pd);
		goto free_dev;
	}
	/* Every QP of the node, plus room for one being replaced per peer. */
	nr_cqe = 2 * (RDLOCK_MAX_NODES + 1) *
		 (RDLOCK_SQ_DEPTH + RDLOCK_RX_DEPTH + 2);
	nr_cqe = min(nr_cqe, ibdev->attrs.max_cqe);
	dev->cq = ib_alloc_cq(ibdev, dev, nr_cqe, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(dev->cq)) {
		ret = PTR_ERR(dev->cq);
		goto free_pd;
	}
	cl->dev = dev;
	goto out;

free_pd:
	ib_dealloc_pd(dev->pd);
free_dev:
	kfree(dev);
	dev = ERR_PTR(ret);
out:
	mutex_unlock(&cl->dev_mutex);
	return dev;
}

/* Called when no connection uses the device any more. */
static void rdlock_dev_free(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_dev *dev = cl->dev;

	if (!dev)
		return;
	rdlock_table_free();
	ib_free_cq(dev->cq);
	ib_dealloc_pd(dev->pd);
	kfree(dev);
	cl->dev = NULL;
}

/* ------------------------------------------------------------------ */
/* Connection objects                                                 */

static void rdlock_conn_release_work(struct work_struct *work);

static struct rdlock_conn *rdlock_conn_create(u32 node, bool active)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	conn->node = node;
	conn->active = active;
	conn->state = RDLOCK_CONN_CONNECTING;
	mutex_init(&conn->setup_mutex);
	spin_lock_init(&conn->tx_lock);
	spin_lock_init(&conn->post_lock);
	atomic_set(&conn->req_credits, RDLOCK_REQ_CREDITS);
	atomic_set(&conn->onesided_credits, RDLOCK_ONESIDED_CREDITS);
	atomic_set(&conn->ready_pending, 2);
	init_waitqueue_head(&conn->credit_wait);
	xa_init_flags(&conn->pending, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	INIT_WORK(&conn->release_work, rdlock_conn_release_work);

	spin_lock_bh(&cl->lock);
	list_add_tail(&conn->entry, &cl->conns);
	spin_unlock_bh(&cl->lock);
	return conn;
}

static void rdlock_conn_free(struct kref *ref)
{
	struct rdlock_conn *conn = container_of(ref, struct rdlock_conn, ref);

	xa_destroy(&conn->pending);
	mutex_destroy(&conn->setup_mutex);
	kfree(conn);
}

void rdlock_conn_put(struct rdlock_conn *conn)
{
	kref_put(&conn->ref, rdlock_conn_free);
}

/**
 * rdlock_conn_fail() - start tearing a connection down
 * @conn: the connection.
 *
 * Any context, hardirq included (QP events); idempotent. The teardown
 * itself runs in rdlock_conn_release_work().
 */
void rdlock_conn_fail(struct rdlock_conn *conn)
{
	if (test_and_set_bit(RDLOCK_CONN_FAILED, &conn->flags))
		return;
	queue_work(rdlock_wq, &conn->release_work);
}

static void rdlock_schedule_connect(struct rdlock_node *node)
{
	unsigned int delay = node->backoff_ms;

	/* A challenge to answer: at once, the back-off as it was. */
	if (node->chal_got) {
		mod_delayed_work(rdlock_wq, &node->connect_work, 0);
		return;
	}
	/* Doubling back-off: peers that are down are not hammered. */
	node->backoff_ms = clamp(delay * 2, RDLOCK_RECONNECT_MIN_MS,
				 RDLOCK_RECONNECT_MAX_MS);
	mod_delayed_work(rdlock_wq, &node->connect_work,
			 msecs_to_jiffies(delay));
}

static bool rdlock_is_loop_passive(const struct rdlock_conn *conn)
{
	return !conn->active && conn->node == rdlock_cl.self;
}

static void rdlock_conn_release_work(struct work_struct *work)
{
	struct rdlock_conn *conn = container_of(work, struct rdlock_conn,
						release_work);
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_node *node = &cl->nodes[conn->node];
	bool was_established;

	spin_lock_bh(&cl->lock);
	was_established = conn->state == RDLOCK_CONN_ESTABLISHED;
	/* After this nothing new is posted, so the drain below is final. */
	rdlock_conn_to(conn, RDLOCK_CONN_CLOSING);
	if (node->conn == conn)
		node->conn = NULL;
	spin_unlock_bh(&cl->lock);
	wake_up_all(&conn->credit_wait);

	if (was_established && conn->node != rdlock_cl.self)
		pr_info("disconnected from node %u\n", conn->node);

	/*
	 * RDLOCK_CONN_FAILED is set, so once we hold setup_mutex the handler
	 * creates no QP and connects nothing: conn->qp is final here.
	 */
	mutex_lock(&conn->setup_mutex);
	if (conn->qp && conn->connect_sent) {
		rdma_disconnect(conn->cm_id);
		ib_drain_qp(conn->qp);
	}
	rdlock_conn_fail_pending(conn, -ECONNRESET);
	if (conn->qp) {
		rdma_destroy_qp(conn->cm_id);
		conn->qp = NULL;
	}
	mutex_unlock(&conn->setup_mutex);
	/* Outside setup_mutex: it waits for the handler, which takes it. */
	if (conn->cm_id)
		rdma_destroy_id(conn->cm_id);
	rdlock_conn_free_bufs(conn);

	spin_lock_bh(&cl->lock);
	list_del_init(&conn->entry);
	/*
	 * Not while the node has another connection: a replaced one would
	 * else connect again and replace that one, whose end would do the
	 * same, the two nodes taking turns for good.
	 */
	if (conn->active && rdlock_cl_up() && !node->conn &&
	    !rdlock_node_fenced(node))
		rdlock_schedule_connect(node);
	spin_unlock_bh(&cl->lock);
	wake_up_all(&cl->conns_wait);
	rdlock_conn_put(conn);
}

static void rdlock_qp_event(struct ib_event *ev, void *ctx)
{
	struct rdlock_conn *conn = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		/* rdma_cm reports establishment itself. */
		break;
	default:
		pr_err("node %u: QP event %s\n", conn->node,
		       ib_event_msg(ev->event));
		rdlock_conn_fail(conn);
	}
}

static int rdlock_conn_create_qp(struct rdlock_conn *conn)
{
	struct ib_qp_init_attr attr = {};
	struct rdlock_dev *dev;
	int ret;

	dev = rdlock_dev_get(conn->cm_id->device);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	conn->dev = dev;

	attr.event_handler = rdlock_qp_event;
	attr.qp_context = conn;
	attr.send_cq = dev->cq;
	attr.recv_cq = dev->cq;
	/* +1 each for the drain work requests of ib_drain_qp(). */
	attr.cap.max_send_wr = RDLOCK_SQ_DEPTH + 1;
	attr.cap.max_recv_wr = RDLOCK_RX_DEPTH + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(conn->cm_id, dev->pd, &attr);
	if (ret)
		return ret;
	conn->qp = conn->cm_id->qp;

	ret = rdlock_conn_alloc_bufs(conn);
	if (ret)
		return ret;
	return rdlock_conn_post_recvs(conn);
}

/* ------------------------------------------------------------------ */
/* Private data and backend agreement                                 */

static void rdlock_fill_pdata(struct rdlock_cm_pdata *pd, u32 dst)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_table *t = &cl->table;

	memset(pd, 0, sizeof(*pd));
	pd->hdr.magic = cpu_to_le32(RDLOCK_WIRE_MAGIC);
	pd->hdr.version = cpu_to_le16(RDLOCK_WIRE_VERSION);
	pd->hdr.backend_mode = cl->self_adv.mode;
	if (cl->self_adv.verbs_capable)
		pd->hdr.flags |= RDLOCK_PDATA_VERBS_CAPABLE;
	if (cl->self_adv.soft_device)
		pd->hdr.flags |= RDLOCK_PDATA_SOFT_DEVICE;
	if (cl->words_be)
		pd->hdr.flags |= RDLOCK_PDATA_WORDS_BE;
	if (cl->auth_tfm)
		pd->hdr.flags |= RDLOCK_PDATA_KEYED;
	pd->hdr.cluster_id = cpu_to_le32(cl->cluster_id);
	pd->hdr.src_node = cpu_to_le32(cl->self);
	pd->hdr.dst_node = cpu_to_le32(dst);
	pd->hdr.table_slots = cpu_to_le32(t->slots);
	pd->table_incarnation = cpu_to_le64(t->incarnation);
	if (t->registered) {
		pd->table_addr = cpu_to_le64(t->mr->iova);
		pd->rkey = cpu_to_le32(t->mr->rkey);
	}
}

static void rdlock_pdata_adv(const struct rdlock_cm_pdata *pd,
			     struct rdlock_backend_adv *adv)
{
	adv->mode = pd->hdr.backend_mode;
	adv->verbs_capable = pd->hdr.flags & RDLOCK_PDATA_VERBS_CAPABLE;
	adv->soft_device = pd->hdr.flags & RDLOCK_PDATA_SOFT_DEVICE;
}

/* Called with rdlock_cl.lock held: can a peer with this advert join? */
static bool rdlock_adv_acceptable(const struct rdlock_backend_adv *adv)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	if (!rdlock_backend_compatible(&cl->self_adv, adv))
		return false;
	return cl->backend == RDLOCK_BACKEND_NONE ||
	       rdlock_backend_admits(cl->backend, adv);
}

/* Called with rdlock_cl.lock held, whenever a node's advert is learnt. */
static void rdlock_try_resolve_backend(void)
{
	struct rdlock_backend_adv adv[RDLOCK_MAX_NODES];
	struct rdlock_cluster *cl = &rdlock_cl;
	unsigned int i, n = 0;
	int ret;

	if (cl->backend != RDLOCK_BACKEND_NONE)
		return;
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		if (!rdlock_node_member(&cl->nodes[i]))
			continue;
		if (!cl->nodes[i].adv_known)
			return;
		adv[n++] = cl->nodes[i].adv;
	}
	ret = rdlock_backend_resolve(adv, n);
	if (ret < 0) {
		pr_err("nodes disagree on the atomic backend (%d)\n", ret);
		return;
	}
	cl->backend = ret;
	pr_info("cluster %u: atomic backend %s\n", cl->cluster_id,
		rdlock_backend_name(ret));
}

/* Where a connection request came from. */
static struct sockaddr *rdlock_cm_peer_addr(struct rdma_cm_id *id)
{
	return (struct sockaddr *)&id->route.addr.dst_addr;
}

/* Validate a connection request; 0 or an rdlock_reject_reason. */
static int rdlock_check_request(const struct rdlock_cm_pdata *pd, u8 len,
				struct rdma_cm_id *id, u32 *src)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_backend_adv adv;
	u32 dst;

	if (len < sizeof(*pd) || le32_to_cpu(pd->hdr.magic) != RDLOCK_WIRE_MAGIC ||
	    le16_to_cpu(pd->hdr.version) != RDLOCK_WIRE_VERSION ||
	    pd->hdr.backend_mode > RDLOCK_BACKEND_TWOSIDED)
		return RDLOCK_REJ_VERSION;
	if (le32_to_cpu(pd->hdr.cluster_id) != cl->cluster_id)
		return RDLOCK_REJ_CLUSTER;
	*src = le32_to_cpu(pd->hdr.src_node);
	dst = le32_to_cpu(pd->hdr.dst_node);
	if (dst != cl->self || *src >= RDLOCK_MAX_NODES ||
	    !rdlock_node_member(&cl->nodes[*src]))
		return RDLOCK_REJ_NODE;
	/*
	 * The ids in the private data are the peer's word: only the node's
	 * configured address may speak for it (as fs/dlm), or any host on
	 * the fabric would get our table's rkey and replace its connection.
	 */
	if (!rdlock_sockaddr_same_host(&cl->nodes[*src].addr,
				       rdlock_cm_peer_addr(id)))
		return RDLOCK_REJ_ADDRESS;
	if (rdlock_node_fenced(&cl->nodes[*src]))
		return RDLOCK_REJ_FENCED;
	if (*src > cl->self)
		return RDLOCK_REJ_DIRECTION;
	if (*src == cl->self)
		return 0;	/* our own loopback: it is how we get ready */
	if (cl->state != RDLOCK_CL_LOCAL_READY || rdlock_fault_link_down(*src))
		return RDLOCK_REJ_NOT_READY;
	if (cl->dev && cl->dev->ibdev != id->device)
		return RDLOCK_REJ_NO_RESOURCES;
	rdlock_pdata_adv(pd, &adv);
	if (!rdlock_adv_acceptable(&adv))
		return RDLOCK_REJ_BACKEND;
	return 0;
}

/* What a keyed request tells of its sender; its table comes later. */
static void rdlock_req_to_pdata(const struct rdlock_cm_req_keyed *req,
				struct rdlock_cm_pdata *pd)
{
	memset(pd, 0, sizeof(*pd));
	pd->hdr = req->hdr;
	pd->table_incarnation = req->table_incarnation;
}

/*
 * The cluster key's part of validating a request from @src; 0 or a
 * reason. Both sides must have a key or neither. With a key, the first
 * request (nonce 0) is given a challenge (RDLOCK_REJ_CHALLENGE, @chal
 * filled); the second must prove the key over that challenge, which is
 * then spent: @req and @chal are what the reply's proof covers.
 */
static int rdlock_check_key(const void *data, u8 len, u32 src,
			    struct rdlock_cm_req_keyed *req, u8 *chal)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	const struct rdlock_cm_pdata *pd = data;
	struct rdlock_node *node = &cl->nodes[src];
	u8 mac[RDLOCK_AUTH_REQ_MAC_LEN];
	bool answer;
	int ret;

	if (!(pd->hdr.flags & RDLOCK_PDATA_KEYED) != !cl->auth_tfm) {
		atomic64_inc(&cl->auth_key_mismatch);
		return RDLOCK_REJ_KEY;
	}
	if (!cl->auth_tfm)
		return 0;
	if (len < sizeof(*req))
		return RDLOCK_REJ_VERSION;
	memcpy(req, data, sizeof(*req));

	spin_lock_bh(&cl->lock);
	answer = req->nonce && node->chal_issued &&
		 time_before(jiffies, node->chal_expires);
	if (answer) {
		memcpy(chal, node->chal_out, RDLOCK_AUTH_NONCE_LEN);
		node->chal_issued = false;	/* one answer per challenge */
	} else {
		get_random_bytes(node->chal_out, sizeof(node->chal_out));
		node->chal_issued = true;
		node->chal_expires = jiffies +
			msecs_to_jiffies(RDLOCK_AUTH_CHALLENGE_MS);
		memcpy(chal, node->chal_out, RDLOCK_AUTH_NONCE_LEN);
	}
	spin_unlock_bh(&cl->lock);
	if (!answer)
		return RDLOCK_REJ_CHALLENGE;

	ret = rdlock_auth_req_mac(chal, req, mac);
	if (ret)
		return RDLOCK_REJ_NO_RESOURCES;
	if (crypto_memneq(mac, req->mac, sizeof(mac))) {
		atomic64_inc(&cl->auth_bad_proof);
		return RDLOCK_REJ_AUTH;
	}
	return 0;
}

static void rdlock_conn_param(struct rdma_conn_param *param,
			      struct rdlock_conn *conn,
			      const struct rdma_conn_param *req)
{
	const struct ib_device_attr *attrs = &conn->dev->ibdev->attrs;

	/*
	 * rdma_cm grants remote atomic access only with non-zero responder
	 * resources, so both must be > 0 for the verbs backend.
	 */
	param->responder_resources = min_t(u32, attrs->max_qp_rd_atom, 16);
	param->initiator_depth = min_t(u32, attrs->max_qp_init_rd_atom, 16);
	if (req) {
		param->responder_resources = min_t(u32, req->initiator_depth,
						   param->responder_resources);
		param->initiator_depth = min_t(u32, req->responder_resources,
					       param->initiator_depth);
	}
	param->retry_count = 7;
	param->rnr_retry_count = 7;	/* RNR: retry until a buffer is posted */
}

/* ------------------------------------------------------------------ */
/* Connection state machine                                           */

/* One set-up step of the handler, unless the connection already failed. */
static int rdlock_conn_setup_step(struct rdlock_conn *conn,
				  int (*step)(struct rdlock_conn *conn))
{
	int ret = -ECONNRESET;

	mutex_lock(&conn->setup_mutex);
	if (!test_bit(RDLOCK_CONN_FAILED, &conn->flags))
		ret = step(conn);
	mutex_unlock(&conn->setup_mutex);
	return ret;
}

/* Refuse a connect request, counted and logged unless it is routine. */
static void rdlock_cm_refuse(struct rdma_cm_id *id, int reason, u32 src,
			     const u8 *chal)
{
	struct rdlock_cm_challenge rej = {};

	/* A node still starting or asked to prove the key is no error. */
	if (reason != RDLOCK_REJ_NOT_READY && reason != RDLOCK_REJ_CHALLENGE) {
		atomic64_inc(&rdlock_cl.rejected);
		pr_warn_ratelimited("refused connection from node %u: %s (from %pISc)\n",
				    src, rdlock_reject_names[reason],
				    rdlock_cm_peer_addr(id));
	}
	rej.rej.magic = cpu_to_le32(RDLOCK_WIRE_MAGIC);
	rej.rej.reason = cpu_to_le16(reason);
	if (reason == RDLOCK_REJ_CHALLENGE)
		memcpy(rej.nonce, chal, sizeof(rej.nonce));
	rdma_reject(id, &rej, reason == RDLOCK_REJ_CHALLENGE ? sizeof(rej) :
			      sizeof(rej.rej), IB_CM_REJ_CONSUMER_DEFINED);
}

static int rdlock_cm_accept(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	const struct rdlock_cm_pdata *pd = ev->param.conn.private_data;
	u8 len = ev->param.conn.private_data_len;
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdma_conn_param param = {};
	struct rdlock_cm_rep_keyed reply;
	struct rdlock_cm_req_keyed req;
	u8 chal[RDLOCK_AUTH_NONCE_LEN];
	struct rdlock_conn *conn;
	int reason, ret;
	u32 src = 0;

	spin_lock_bh(&cl->lock);
	reason = rdlock_check_request(pd, len, id, &src);
	spin_unlock_bh(&cl->lock);
	if (!reason)
		reason = rdlock_check_key(pd, len, src, &req, chal);
	if (reason)
		goto reject;

	/* Our table goes only to a node that proved the key, if there is one. */
	rdlock_fill_pdata(&reply.pd, src);
	if (cl->auth_tfm &&
	    rdlock_auth_rep_mac(chal, &req, &reply.pd, reply.mac)) {
		reason = RDLOCK_REJ_NO_RESOURCES;
		goto reject;
	}

	conn = rdlock_conn_create(src, false);
	if (!conn) {
		reason = RDLOCK_REJ_NO_RESOURCES;
		goto reject;
	}
	conn->cm_id = id;
	if (cl->auth_tfm) {
		conn->keyed = true;
		conn->req = req;
		memcpy(conn->challenge, chal, sizeof(chal));
		rdlock_req_to_pdata(&req, &conn->peer);
		set_bit(RDLOCK_CONN_AUTHED, &conn->flags);
	} else {
		conn->peer = *pd;
	}
	id->context = conn;
	/*
	 * rdlock_cluster_down() cannot fail this connection yet: it destroys
	 * the listener first, which waits for this handler. A QP event can,
	 * once the QP exists; setup_mutex keeps its teardown until we return.
	 */
	mutex_lock(&conn->setup_mutex);
	ret = rdlock_conn_create_qp(conn);
	if (ret) {
		mutex_unlock(&conn->setup_mutex);
		pr_err("node %u: cannot set up queue pair: %d\n", src, ret);
		rdlock_cm_refuse(id, RDLOCK_REJ_NO_RESOURCES, src, NULL);
		/* The id is the connection's: its one teardown destroys it. */
		rdlock_conn_fail(conn);
		return 0;
	}

	rdlock_conn_param(&param, conn, &ev->param.conn);
	param.private_data = &reply;
	param.private_data_len = conn->keyed ? sizeof(reply) :
					       sizeof(reply.pd);
	conn->connect_sent = true;
	ret = rdma_accept(id, &param);
	mutex_unlock(&conn->setup_mutex);
	if (ret) {
		pr_err("node %u: accept failed: %d\n", src, ret);
		rdlock_conn_fail(conn);
	}
	return 0;

reject:
	rdlock_cm_refuse(id, reason, src, chal);
	return -ECONNREFUSED;	/* no connection: rdma_cm destroys the id */
}

/*
 * A keyed request: no table, and the proof of the key if the peer gave
 * us a challenge, else a request for one.
 */
static int rdlock_fill_req_keyed(struct rdlock_conn *conn)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_node *node = &cl->nodes[conn->node];
	struct rdlock_cm_req_keyed *req = &conn->req;
	struct rdlock_cm_pdata pd;
	bool answer;

	rdlock_fill_pdata(&pd, conn->node);
	memset(req, 0, sizeof(*req));
	req->hdr = pd.hdr;
	req->table_incarnation = pd.table_incarnation;

	spin_lock_bh(&cl->lock);
	answer = node->chal_got;
	node->chal_got = false;			/* answered once */
	memcpy(conn->challenge, node->chal_in, sizeof(conn->challenge));
	spin_unlock_bh(&cl->lock);
	if (!answer)
		return 0;
	req->nonce = cpu_to_le64(get_random_u64() ?: 1);
	return rdlock_auth_req_mac(conn->challenge, req, req->mac);
}

static int rdlock_cm_connect(struct rdlock_conn *conn)
{
	struct rdma_conn_param param = {};
	struct rdlock_cm_pdata pd;
	int ret;

	rdlock_conn_param(&param, conn, NULL);
	if (rdlock_cl.auth_tfm) {
		conn->keyed = true;
		ret = rdlock_fill_req_keyed(conn);
		if (ret)
			return ret;
		param.private_data = &conn->req;
		param.private_data_len = sizeof(conn->req);
	} else {
		rdlock_fill_pdata(&pd, conn->node);
		param.private_data = &pd;
		param.private_data_len = sizeof(pd);
	}
	conn->connect_sent = true;
	return rdma_connect_locked(conn->cm_id, &param);
}

static void rdlock_cm_rejected(struct rdlock_conn *conn,
			       struct rdma_cm_event *ev)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	const struct rdlock_cm_challenge *chal;
	const struct rdlock_cm_reject *rej;
	u8 len = 0;
	u16 reason;

	rej = rdma_consumer_reject_data(conn->cm_id, ev, &len);
	if (!rej) {
		pr_debug("node %u: connection rejected: %s\n", conn->node,
			 rdma_reject_msg(conn->cm_id, ev->status));
		return;
	}
	if (len < sizeof(*rej) ||
	    le32_to_cpu(rej->magic) != RDLOCK_WIRE_MAGIC)
		return;
	reason = le16_to_cpu(rej->reason);
	if (reason == RDLOCK_REJ_NOT_READY)
		return;		/* the peer is still starting: retry */
	if (reason == RDLOCK_REJ_CHALLENGE) {
		chal = (const struct rdlock_cm_challenge *)rej;
		if (!cl->auth_tfm || len < sizeof(*chal)) {
			atomic64_inc(&cl->auth_key_mismatch);
			pr_err_ratelimited("node %u: has a cluster key, we have none\n",
					   conn->node);
			return;
		}
		/* The next request answers it (rdlock_schedule_connect()). */
		spin_lock_bh(&cl->lock);
		memcpy(cl->nodes[conn->node].chal_in, chal->nonce,
		       sizeof(chal->nonce));
		cl->nodes[conn->node].chal_got = true;
		spin_unlock_bh(&cl->lock);
		return;
	}
	if (reason == RDLOCK_REJ_FENCED) {
		rdlock_fenced_by(conn->node);
		return;
	}
	if (reason == RDLOCK_REJ_KEY || reason == RDLOCK_REJ_AUTH)
		atomic64_inc(&cl->auth_refused);
	if (reason < ARRAY_SIZE(rdlock_reject_names) &&
	    rdlock_reject_names[reason])
		pr_err_ratelimited("node %u refused us: %s\n", conn->node,
				   rdlock_reject_names[reason]);
}

static void rdlock_kick_peers(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i;

	spin_lock_bh(&cl->lock);
	for (i = cl->self + 1; i < RDLOCK_MAX_NODES; i++)
		if (rdlock_node_member(&cl->nodes[i]) && rdlock_cl_up())
			mod_delayed_work(rdlock_wq, &cl->nodes[i].connect_work, 0);
	spin_unlock_bh(&cl->lock);
}

/* Register the table and probe the device, on the loopback connection. */
static void rdlock_local_setup_work(struct work_struct *work)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_node *self;
	struct rdlock_conn *conn;
	int ret;

	spin_lock_bh(&cl->lock);
	conn = cl->setup_conn;
	cl->setup_conn = NULL;
	spin_unlock_bh(&cl->lock);
	if (!conn)
		return;

	ret = rdlock_table_register(conn);
	if (!ret && !cl->probed)
		ret = rdlock_probe_atomics(conn);
	if (ret) {
		pr_err("local setup failed: %d\n", ret);
		rdlock_conn_fail(conn);
		goto out;
	}

	spin_lock_bh(&cl->lock);
	self = &cl->nodes[cl->self];
	self->adv = cl->self_adv;
	self->adv_known = true;
	self->words_be = cl->words_be;
	/* Not when ready already (a later loopback's set-up) or going down. */
	if (cl->state == RDLOCK_CL_STARTING)
		rdlock_cl_to(RDLOCK_CL_LOCAL_READY);
	rdlock_try_resolve_backend();
	spin_unlock_bh(&cl->lock);
	pr_info("node %u ready: verbs atomics %s%s, table %u slots\n",
		cl->self, cl->self_adv.verbs_capable ? "available" : "unavailable",
		cl->self_adv.soft_device ? " (software device)" : "",
		cl->table.slots);
	rdlock_kick_peers();
out:
	rdlock_conn_put(conn);
}

/*
 * Called with rdlock_cl.lock held when a lock table that lockspaces may
 * have written to is lost: see rdlock_xport_epoch().
 */
static void rdlock_end_epoch(void)
{
	lockdep_assert_held(&rdlock_cl.lock);
	WRITE_ONCE(rdlock_cl.epoch, rdlock_cl.epoch + 1);
}

/*
 * Called with rdlock_cl.lock held when a peer connects. A new incarnation
 * of a table we knew means the peer restarted with a zeroed table: lock
 * words and directory entries the lockspaces rely on are gone, so their
 * epoch ends.
 */
static void rdlock_learn_incarnation(struct rdlock_node *node, u64 incarnation)
{
	if (node->incarnation && node->incarnation != incarnation) {
		pr_warn("node %u restarted with a new lock table: lockspaces of this cluster epoch are invalid\n",
			node->id);
		rdlock_end_epoch();
	}
	WRITE_ONCE(node->incarnation, incarnation);
}

/*
 * Keyed, active: does the reply prove the key over our request? A reply
 * without a key from a peer we sent a keyed request to is refused too.
 */
static int rdlock_check_reply_key(struct rdlock_conn *conn,
				  struct rdma_cm_event *ev)
{
	const struct rdlock_cm_rep_keyed *rep = ev->param.conn.private_data;
	struct rdlock_cluster *cl = &rdlock_cl;
	u8 mac[RDLOCK_AUTH_MAC_LEN];
	bool keyed;
	int ret;

	keyed = rep->pd.hdr.flags & RDLOCK_PDATA_KEYED;
	if (keyed != conn->keyed) {
		atomic64_inc(&cl->auth_key_mismatch);
		pr_err_ratelimited("node %u: cluster key on one side only\n",
				   conn->node);
		return -EPROTO;
	}
	if (!keyed)
		return 0;
	if (ev->param.conn.private_data_len < sizeof(*rep))
		return -EPROTO;
	ret = rdlock_auth_rep_mac(conn->challenge, &conn->req, &rep->pd, mac);
	if (ret)
		return ret;
	if (crypto_memneq(mac, rep->mac, sizeof(mac))) {
		atomic64_inc(&cl->auth_bad_reply);
		pr_err_ratelimited("node %u: its reply does not prove the cluster key\n",
				   conn->node);
		return -EACCES;
	}
	set_bit(RDLOCK_CONN_AUTHED, &conn->flags);
	return 0;
}

static int rdlock_cm_established(struct rdlock_conn *conn,
				 struct rdma_cm_event *ev)
{
	const struct rdlock_cm_pdata *pd = ev->param.conn.private_data;
	struct rdlock_cluster *cl = &rdlock_cl;
	int ret;

	if (conn->active) {
		if (ev->param.conn.private_data_len < sizeof(*pd) ||
		    le32_to_cpu(pd->hdr.magic) != RDLOCK_WIRE_MAGIC ||
		    le32_to_cpu(pd->hdr.src_node) != conn->node ||
		    le32_to_cpu(pd->hdr.cluster_id) != cl->cluster_id)
			return -EPROTO;
		ret = rdlock_check_reply_key(conn, ev);
		if (ret)
			return ret;
		conn->peer = *pd;
		/* Our table only to a peer that proved the key: now. */
		if (conn->keyed && conn->node != cl->self) {
			ret = rdlock_conn_send_table(conn);
			if (ret)
				return ret;
		}
	} else if (conn->keyed && conn->node != cl->self &&
		   !atomic_dec_and_test(&conn->ready_pending)) {
		return 0;	/* rdlock_recv_table() finishes */
	}
	return rdlock_conn_ready(conn);
}

/**
 * rdlock_conn_ready() - an established connection joins its node
 * @conn: the connection; keyed, the peer proved the key and, passive,
 *	sent its table.
 *
 * Process context or softirq (RDLOCK_WIRE_TABLE).
 *
 * Return: 0, or a negative errno when the connection must fail.
 */
int rdlock_conn_ready(struct rdlock_conn *conn)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *old = NULL;
	struct rdlock_backend_adv adv;
	struct rdlock_node *node;
	bool setup = false;

	rdlock_pdata_adv(&conn->peer, &adv);

	spin_lock_bh(&cl->lock);
	if (test_bit(RDLOCK_CONN_FAILED, &conn->flags)) {
		spin_unlock_bh(&cl->lock);
		return 0;
	}
	if (rdlock_node_fenced(&cl->nodes[conn->node])) {
		spin_unlock_bh(&cl->lock);
		return -ECONNREFUSED;
	}
	if (conn->node != cl->self && !rdlock_adv_acceptable(&adv)) {
		spin_unlock_bh(&cl->lock);
		pr_err("node %u: atomic backend mismatch\n", conn->node);
		return -EPROTO;
	}
	rdlock_conn_to(conn, RDLOCK_CONN_ESTABLISHED);
	if (rdlock_is_loop_passive(conn)) {
		spin_unlock_bh(&cl->lock);
		return 0;	/* serves our own requests; never sends them */
	}

	node = &cl->nodes[conn->node];
	old = node->conn;
	/* Its own failure may release it once the lock is dropped. */
	if (old == conn)
		old = NULL;
	else if (old)
		kref_get(&old->ref);
	node->conn = conn;
	node->connects++;
	node->backoff_ms = 0;
	if (conn->node == cl->self) {
		if (cl->state == RDLOCK_CL_STARTING && !cl->setup_conn) {
			kref_get(&conn->ref);
			cl->setup_conn = conn;
			setup = true;
		}
	} else {
		node->table_addr = le64_to_cpu(conn->peer.table_addr);
		node->rkey = le32_to_cpu(conn->peer.rkey);
		node->table_slots = le32_to_cpu(conn->peer.hdr.table_slots);
		node->words_be = conn->peer.hdr.flags & RDLOCK_PDATA_WORDS_BE;
		rdlock_learn_incarnation(node,
					 le64_to_cpu(conn->peer.table_incarnation));
		node->adv = adv;
		node->adv_known = true;
		rdlock_try_resolve_backend();
	}
	spin_unlock_bh(&cl->lock);

	if (old) {
		rdlock_conn_fail(old);
		rdlock_conn_put(old);
	}
	if (setup)
		queue_work(rdlock_wq, &cl->local_setup_work);
	else if (conn->node == cl->self)
		rdlock_kick_peers();
	if (conn->node != cl->self) {
		rdlock_xport_up_handler_t up = READ_ONCE(cl->up_handler);

		pr_info("connected to node %u\n", conn->node);
		if (up)
			up(conn->node);
	}
	return 0;
}

static int rdlock_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdlock_conn *conn = id->context;
	int ret = 0;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rdlock_cm_accept(id, ev);
	if (!conn)
		return 0;	/* the listener */

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdlock_conn_setup_step(conn, rdlock_conn_create_qp);
		if (!ret)
			ret = rdma_resolve_route(id, RDLOCK_CM_TIMEOUT_MS);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rdlock_conn_setup_step(conn, rdlock_cm_connect);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = rdlock_cm_established(conn, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		rdlock_cm_rejected(conn, ev);
		ret = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ret = -ECONNRESET;
		break;
	default:
		break;
	}
	if (ret) {
		pr_debug("node %u: %s (%d)\n", conn->node,
			 rdma_event_msg(ev->event), ret);
		rdlock_conn_fail(conn);
	}
	/* Never let rdma_cm destroy a connection's id: release_work does. */
	return 0;
}

static void rdlock_connect_work(struct work_struct *work)
{
	struct rdlock_node *node = container_of(to_delayed_work(work),
						struct rdlock_node,
						connect_work);
	struct rdlock_cluster *cl = &rdlock_cl;
	struct sockaddr_storage src;
	struct rdlock_conn *conn;
	struct rdma_cm_id *id;
	int ret;

	if (!rdlock_cl_up() || rdlock_node_fenced(node))
		return;
	if (rdlock_fault_link_down(node->id))
		goto retry;
	conn = rdlock_conn_create(node->id, true);
	if (!conn)
		goto retry;
	id = rdma_create_id(&init_net, rdlock_cm_handler, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		/* Its teardown schedules the next attempt. */
		rdlock_conn_fail(conn);
		return;
	}
	conn->cm_id = id;

	/* Leave from our own address so peers see which node calls. */
	src = cl->nodes[cl->self].addr;
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&node->addr,
				RDLOCK_CM_TIMEOUT_MS);
	if (ret)
		rdlock_conn_fail(conn);
	return;

retry:
	spin_lock_bh(&cl->lock);
	if (rdlock_cl_up())
		rdlock_schedule_connect(node);
	spin_unlock_bh(&cl->lock);
}

/*
 * @node's connection, referenced, if it is established and not failed;
 * rdlock_cl.lock held.
 */
static struct rdlock_conn *__rdlock_conn_get_ready(u32 node)
{
	struct rdlock_conn *conn = rdlock_cl.nodes[node].conn;

	lockdep_assert_held(&rdlock_cl.lock);
	if (!conn || conn->state != RDLOCK_CONN_ESTABLISHED ||
	    test_bit(RDLOCK_CONN_FAILED, &conn->flags))
		return NULL;
	kref_get(&conn->ref);
	return conn;
}

/* ------------------------------------------------------------------ */
/* Nodes declared down                                                */

/* Is a connection to or from @node still in the list (not torn down)? */
static bool rdlock_node_conns_gone(u32 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;
	bool gone = true;

	spin_lock_bh(&cl->lock);
	list_for_each_entry(conn, &cl->conns, entry)
		if (conn->node == node)
			gone = false;
	spin_unlock_bh(&cl->lock);
	return gone;
}

/* Fail every connection to or from @node, fenced. */
static void rdlock_fail_node_conns(u32 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;

	spin_lock_bh(&cl->lock);
	list_for_each_entry(conn, &cl->conns, entry)
		if (conn->node == node)
			rdlock_conn_fail(conn);
	spin_unlock_bh(&cl->lock);
}

/* Fail every connection of this node to or from a peer (not loopback). */
void rdlock_fail_peer_conns(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;

	spin_lock_bh(&cl->lock);
	list_for_each_entry(conn, &cl->conns, entry)
		if (conn->node != cl->self)
			rdlock_conn_fail(conn);
	spin_unlock_bh(&cl->lock);
}

/**
 * rdlock_fenced_by() - @node declared this node down
 * @node: the peer that said so (its RDLOCK_WIRE_FENCED message, or a
 *	refusal with RDLOCK_REJ_FENCED).
 *
 * The survivors release what this node held: every lockspace of this
 * epoch is lost here (rdlock_end_epoch()), and this node stays away from
 * @node until the cluster goes down. Softirq or process context.
 */
void rdlock_fenced_by(u32 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	bool first;

	if (node >= RDLOCK_MAX_NODES || node == cl->self)
		return;
	spin_lock_bh(&cl->lock);
	first = rdlock_cl_up() &&
		cl->nodes[node].member == RDLOCK_MEMBER_CONFIGURED;
	if (first) {
		rdlock_member_to(&cl->nodes[node], RDLOCK_MEMBER_FENCED);
		rdlock_end_epoch();
	}
	spin_unlock_bh(&cl->lock);
	if (!first)
		return;
	pr_warn("node %u declared this node down: its lockspaces are lost\n",
		node);
	rdlock_fail_node_conns(node);
}

/* How long rdlock_xport_fence() waits for a connection's teardown. */
#define RDLOCK_FENCE_TEARDOWN_MS	10000

/**
 * rdlock_xport_fence() - declare a node down: cut it off this node's table
 * @node: a configured node, not this one.
 *
 * Tells @node (best effort: a dead node hears nothing), fails every
 * connection with it and refuses new ones until the cluster goes down
 * here, so that once this returns @node can neither read nor change this
 * node's table, and this node sends it nothing. Sleeps.
 *
 * Return: 0; -EINVAL for a node not configured or this one; -ENOTCONN when
 * the cluster is not up; -EALREADY when @node is declared down already;
 * -ETIMEDOUT when a connection's teardown took over 10 s (the node is
 * declared down all the same).
 */
int rdlock_xport_fence(u32 node)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn = NULL;
	bool sent = false;
	int ret = 0;

	if (node >= RDLOCK_MAX_NODES)
		return -EINVAL;
	spin_lock_bh(&cl->lock);
	if (!rdlock_node_member(&cl->nodes[node]) || node == cl->self) {
		ret = -EINVAL;
	} else if (!rdlock_cl_up()) {
		ret = -ENOTCONN;
	} else if (rdlock_node_fenced(&cl->nodes[node])) {
		ret = -EALREADY;
	} else {
		rdlock_member_to(&cl->nodes[node], RDLOCK_MEMBER_FENCED);
		conn = __rdlock_conn_get_ready(node);
	}
	spin_unlock_bh(&cl->lock);
	if (ret)
		return ret;
	pr_warn("node %u declared down: connections refused until the cluster restarts\n",
		node);
	cancel_delayed_work_sync(&cl->nodes[node].connect_work);
	/* The message fails the connection once sent (rdlock_send_done()). */
	if (conn) {
		sent = rdlock_send_fenced(conn);
		rdlock_conn_put(conn);
	}
	if (!sent ||
	    !wait_event_timeout(cl->conns_wait, rdlock_node_conns_gone(node),
				msecs_to_jiffies(RDLOCK_FENCE_TEARDOWN_MS / 10)))
		rdlock_fail_node_conns(node);
	if (!wait_event_timeout(cl->conns_wait, rdlock_node_conns_gone(node),
				msecs_to_jiffies(RDLOCK_FENCE_TEARDOWN_MS)))
		ret = -ETIMEDOUT;
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_fence, RDLOCK_INTERNAL);

/* Has @node been declared down in this cluster epoch (either way)? */
bool rdlock_xport_node_fenced(u32 node)
{
	return node < RDLOCK_MAX_NODES &&
	       rdlock_node_fenced(&rdlock_cl.nodes[node]);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_fenced, RDLOCK_INTERNAL);

/* ------------------------------------------------------------------ */
/* Cluster up and down (rdlock_cl.cfg_mutex held)                     */

int rdlock_cluster_up(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdma_cm_id *id;
	u32 i;
	int ret;

	lockdep_assert_held(&cl->cfg_mutex);
	ret = rdlock_table_alloc(rdlock_table_slots_param);
	if (ret)
		return ret;

	id = rdma_create_id(&init_net, rdlock_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto free_table;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&cl->nodes[cl->self].addr);
	if (ret) {
		pr_err("cannot bind to the configured address: %d\n", ret);
		goto destroy_id;
	}
	ret = rdma_listen(id, 2 * RDLOCK_MAX_NODES);
	if (ret)
		goto destroy_id;

	spin_lock_bh(&cl->lock);
	cl->listen_id = id;
	cl->self_adv.mode = READ_ONCE(rdlock_backend_param);
	cl->self_adv.verbs_capable = false;
	cl->self_adv.soft_device = false;
	cl->probed = false;
	cl->backend = RDLOCK_BACKEND_NONE;
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		cl->nodes[i].adv_known = false;
		cl->nodes[i].connects = 0;
		cl->nodes[i].backoff_ms = 0;
		cl->nodes[i].chal_issued = false;
		cl->nodes[i].chal_got = false;
	}
	rdlock_cl_to(RDLOCK_CL_STARTING);
	/* Loopback first: it registers the table and probes the device. */
	mod_delayed_work(rdlock_wq, &cl->nodes[cl->self].connect_work, 0);
	spin_unlock_bh(&cl->lock);
	pr_info("cluster %u: node %u up\n", cl->cluster_id, cl->self);
	return 0;

destroy_id:
	rdma_destroy_id(id);
free_table:
	rdlock_table_free();
	return ret;
}

static bool rdlock_no_conns(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	bool empty;

	spin_lock_bh(&cl->lock);
	empty = list_empty(&cl->conns);
	spin_unlock_bh(&cl->lock);
	return empty;
}

void rdlock_cluster_down(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;
	struct rdma_cm_id *id;
	u32 i;

	lockdep_assert_held(&cl->cfg_mutex);
	spin_lock_bh(&cl->lock);
	rdlock_cl_to(RDLOCK_CL_STOPPING);
	/* Our table goes: whatever lockspaces hold dies with this epoch. */
	rdlock_end_epoch();
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		WRITE_ONCE(cl->nodes[i].incarnation, 0);
		/* A new cluster epoch: declared down nodes may come back. */
		if (cl->nodes[i].member == RDLOCK_MEMBER_FENCED)
			rdlock_member_to(&cl->nodes[i],
					 RDLOCK_MEMBER_CONFIGURED);
	}
	id = cl->listen_id;
	cl->listen_id = NULL;
	spin_unlock_bh(&cl->lock);

	/* No new connections: neither accepted nor initiated. */
	if (id)
		rdma_destroy_id(id);
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		cancel_delayed_work_sync(&cl->nodes[i].connect_work);
	flush_work(&cl->local_setup_work);

	spin_lock_bh(&cl->lock);
	list_for_each_entry(conn, &cl->conns, entry)
		rdlock_conn_fail(conn);
	spin_unlock_bh(&cl->lock);
	wait_event(cl->conns_wait, rdlock_no_conns());
	/* Release work may have re-armed nothing (up is false), but flush. */
	flush_workqueue(rdlock_wq);

	spin_lock_bh(&cl->lock);
	rdlock_cl_to(RDLOCK_CL_DOWN);
	cl->backend = RDLOCK_BACKEND_NONE;
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		cl->nodes[i].adv_known = false;
	spin_unlock_bh(&cl->lock);

	mutex_lock(&cl->dev_mutex);
	rdlock_dev_free();
	mutex_unlock(&cl->dev_mutex);
	rdlock_table_free();
	pr_info("cluster %u: node %u down\n", cl->cluster_id, cl->self);
}

/* ------------------------------------------------------------------ */
/* Lookups                                                            */

/**
 * rdlock_conn_get_ready() - the connection to send to @node on
 * @node: node id.
 * @err: set to -ENOENT (not configured) or -ENOTCONN when NULL is returned.
 *
 * Return: a referenced connection; drop it with rdlock_conn_put().
 */
struct rdlock_conn *rdlock_conn_get_ready(u32 node, int *err)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn = NULL;

	spin_lock_bh(&cl->lock);
	if (node >= RDLOCK_MAX_NODES || !rdlock_node_member(&cl->nodes[node])) {
		*err = -ENOENT;
	} else if (cl->state != RDLOCK_CL_LOCAL_READY ||
		   cl->backend == RDLOCK_BACKEND_NONE) {
		*err = -ENOTCONN;
	} else {
		conn = __rdlock_conn_get_ready(node);
		*err = -ENOTCONN;
	}
	spin_unlock_bh(&cl->lock);
	return conn;
}

/* ------------------------------------------------------------------ */
/* Devices going away, module life                                    */

static int rdlock_add_one(struct ib_device *ibdev)
{
	/* Devices are picked up lazily, by the address rdma_cm resolves. */
	return 0;
}

static void rdlock_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	bool ours;

	mutex_lock(&cl->cfg_mutex);
	mutex_lock(&cl->dev_mutex);
	ours = cl->dev && cl->dev->ibdev == ibdev;
	mutex_unlock(&cl->dev_mutex);
	if (ours && rdlock_cl_up()) {
		pr_warn("device %s removed: taking the cluster down\n",
			dev_name(&ibdev->dev));
		rdlock_cluster_down();
	}
	mutex_unlock(&cl->cfg_mutex);
}

static struct ib_client rdlock_ib_client = {
	.name	= "rdlock",
	.add	= rdlock_add_one,
	.remove	= rdlock_remove_one,
};

int rdlock_xport_init(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i;
	int ret;

	mutex_init(&cl->cfg_mutex);
	mutex_init(&cl->dev_mutex);
	spin_lock_init(&cl->lock);
	INIT_LIST_HEAD(&cl->conns);
	init_waitqueue_head(&cl->conns_wait);
	INIT_WORK(&cl->local_setup_work, rdlock_local_setup_work);
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		cl->nodes[i].id = i;
		INIT_DELAYED_WORK(&cl->nodes[i].connect_work,
				  rdlock_connect_work);
	}

	rdlock_wq = alloc_workqueue("rdlock", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!rdlock_wq)
		return -ENOMEM;
	ret = rdlock_io_init();
	if (ret)
		goto destroy_wq;
	ret = ib_register_client(&rdlock_ib_client);
	if (ret)
		goto io_exit;
	return 0;

io_exit:
	rdlock_io_exit();
destroy_wq:
	destroy_workqueue(rdlock_wq);
	return ret;
}

/* Take the cluster down for good: module unload. */
void rdlock_xport_shutdown(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	mutex_lock(&cl->cfg_mutex);
	if (rdlock_cl_up())
		rdlock_cluster_down();
	mutex_unlock(&cl->cfg_mutex);
}

void rdlock_xport_exit(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	rdlock_xport_shutdown();
	mutex_lock(&cl->cfg_mutex);
	rdlock_auth_set_key(NULL, 0);
	mutex_unlock(&cl->cfg_mutex);
	ib_unregister_client(&rdlock_ib_client);
	destroy_workqueue(rdlock_wq);
	rdlock_io_exit();
}
