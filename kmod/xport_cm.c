// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: cluster membership, devices and rdma_cm connections.
 *
 * Each pair of nodes shares exactly one RC queue pair: the node with the
 * lower id connects, the other accepts. Every node also connects to itself
 * (loopback), so that its own lock table is reached through the same atomic
 * backend as everybody else's. The loopback connection is the first one
 * made: on it the lock table is registered (FRWR) and the device's atomics
 * are probed, and only then does the node connect to its peers. A peer's
 * connection has a protection domain of its own and in it its own
 * registration of the table, whose address and key go to the peer in
 * RDLOCK_WIRE_TABLE once the connection is made (the requester's first,
 * keyed once the acceptor proved the key): a key works on that connection
 * only, and on none once it is torn down.
 *
 * Teardown follows nvme-rdma: stop posting, disconnect, drain, then free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <crypto/algapi.h>
#include <rdma/ib_cm.h>

#include "xport-pri.h"
#include "uapi_check.h"

struct rdlock_cluster rdlock_cl;
struct workqueue_struct *rdlock_wq;

/* What rdma_cm leaves in an IB CM REQ, REP and REJ; one message buffer. */
static_assert(sizeof(struct rdlock_cm_hdr) == 24);
static_assert(sizeof(struct rdlock_cm_pdata) == 32);
static_assert(sizeof(struct rdlock_cm_req_keyed) == 56);
static_assert(sizeof(struct rdlock_cm_rep_keyed) <= 196);
static_assert(sizeof(struct rdlock_cm_challenge) <= 148);
static_assert(sizeof(struct rdlock_cm_fenced) <= 148);
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

/*
 * A lock or an unlock from a file system's writeback may wait for a
 * connection being set up (a peer reconnecting): its allocations, ours and
 * ib_core's, must not recurse into file-system reclaim. rdlock_cm_handler()
 * and rdlock_connect_work() run in a NOFS scope; lockdep kernels check.
 */
static void rdlock_assert_nofs(void)
{
	if (IS_ENABLED(CONFIG_PROVE_LOCKING))
		WARN_ON_ONCE(current_gfp_context(GFP_KERNEL) & __GFP_FS);
}

static struct rdlock_conn *rdlock_conn_create(u32 node, bool active)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;

	rdlock_assert_nofs();
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
	/*
	 * No QP and no handler left (the receive side drained): the peer's
	 * key to our table dies here.
	 */
	if (conn->mr)
		ib_dereg_mr(conn->mr);
	if (conn->pd && conn->pd != conn->dev->pd)
		ib_dealloc_pd(conn->pd);
	rdlock_conn_free_bufs(conn);

	spin_lock_bh(&cl->lock);
	list_del_init(&conn->entry);
	/*
	 * Not while the node has another connection: a replaced one would
	 * else connect again and replace that one, whose end would do the
	 * same, the two nodes taking turns for good.
	 */
	if (conn->active && rdlock_cl_up() && !node->conn &&
	    node->member != RDLOCK_MEMBER_FENCED)
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

/*
 * Does @conn trade tables (RDLOCK_WIRE_TABLE) before it is ready? A
 * peer's does; a loopback uses the table's own registration, and a knock
 * gets no table at all.
 */
bool rdlock_conn_trades_tables(const struct rdlock_conn *conn)
{
	return conn->node != rdlock_cl.self && !conn->knock;
}

/*
 * A peer's connection, a knock's too, gets a PD of its own: no queue pair
 * of it can reach a registration of another connection's, or the table's
 * own (in the device's PD), even with a key it guessed.
 */
static int rdlock_conn_alloc_pd(struct rdlock_conn *conn)
{
	struct ib_pd *pd;

	if (conn->node == rdlock_cl.self) {
		conn->pd = conn->dev->pd;
		return 0;
	}
	pd = ib_alloc_pd(conn->dev->ibdev, 0);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	conn->pd = pd;
	return 0;
}

static int rdlock_conn_create_qp(struct rdlock_conn *conn)
{
	struct ib_qp_init_attr attr = {};
	struct rdlock_dev *dev;
	int ret;

	rdlock_assert_nofs();
	dev = rdlock_dev_get(conn->cm_id->device);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	conn->dev = dev;
	ret = rdlock_conn_alloc_pd(conn);
	if (ret)
		return ret;
	conn->lkey = conn->pd->local_dma_lkey;
	if (rdlock_conn_trades_tables(conn)) {
		ret = rdlock_table_grant_alloc(conn);
		if (ret)
			return ret;
	}

	attr.event_handler = rdlock_qp_event;
	attr.qp_context = conn;
	attr.send_cq = dev->cq;
	attr.recv_cq = dev->cq;
	/*
	 * +1 each for the drain work requests of ib_drain_qp(); +1 send
	 * for the table's registration (rdlock_conn_send_table()).
	 */
	attr.cap.max_send_wr = RDLOCK_SQ_DEPTH + 2;
	attr.cap.max_recv_wr = RDLOCK_RX_DEPTH + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(conn->cm_id, conn->pd, &attr);
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
	if (READ_ONCE(cl->view) == RDLOCK_VIEW_LEARNING)
		pd->hdr.flags |= RDLOCK_PDATA_NEW;
	pd->hdr.cluster_id = cpu_to_le32(cl->cluster_id);
	pd->hdr.src_node = cpu_to_le32(cl->self);
	pd->hdr.dst_node = cpu_to_le32(dst);
	pd->hdr.table_slots = cpu_to_le32(t->slots);
	pd->table_incarnation = cpu_to_le64(t->incarnation);
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

/* Called with rdlock_cl.lock held: the peers that said so, by bit. */
static u32 rdlock_words(bool formed)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i, said = 0;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (i != cl->self && cl->nodes[i].downset_seen &&
		    (!formed || cl->nodes[i].word_formed))
			said |= BIT(i);
	return said;
}

/* Called with rdlock_cl.lock held: did a peer say its epoch formed? */
static bool rdlock_words_formed(void)
{
	return rdlock_words(true);
}

/*
 * Called with rdlock_cl.lock held: this node's epoch formed. Its peers
 * hear it again, with the nodes declared down or absent here: one still
 * learning is not ready before some peer said so.
 */
static void rdlock_set_formed(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;

	if (cl->formed)
		return;
	cl->formed = true;
	queue_work(rdlock_wq, &cl->words_work);
}

/*
 * Called with rdlock_cl.lock held: does this node, learning, still wait
 * for the word of a live peer that did not leave? That word names the
 * cluster's backend.
 */
static bool rdlock_learn_pending(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (i != cl->self &&
		    rdlock_learn_waits(READ_ONCE(cl->nodes[i].member),
				       cl->nodes[i].downset_seen,
				       cl->nodes[i].learn_excused))
			return true;
	return false;
}

static u32 rdlock_adopt(bool *wait);
static u32 rdlock_hosts(void);

/*
 * Called with rdlock_cl.lock held. This node knows where the cluster's
 * epoch stands once its backend is resolved and every live peer sent its
 * RDLOCK_WIRE_DOWNSET (one that left excused): only then is it ready
 * (rdlock_cluster_state()), so a node back with a new table hosts nothing
 * and takes no directory before it learned that it was declared down.
 */
static void rdlock_check_learned(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	bool wait;

	lockdep_assert_held(&cl->lock);
	if (cl->view != RDLOCK_VIEW_LEARNING ||
	    cl->backend == RDLOCK_BACKEND_NONE ||
	    cl->state != RDLOCK_CL_LOCAL_READY)
		return;
	/* Not before its epoch formed: which nodes are absent is not known. */
	if (!cl->formed && !rdlock_words_formed())
		return;
	if (rdlock_learn_pending())
		return;
	rdlock_view_to(RDLOCK_VIEW_LEARNED);
	rdlock_set_formed();
	/* Before any lockspace opens here: a handover its peers made. */
	if (rdlock_adopt(&wait))
		pr_info("cluster %u: nodes %#x keep the lock tables of this epoch since handover %u\n",
			cl->cluster_id, rdlock_hosts(), cl->era);
}

/* Called with rdlock_cl.lock held, whenever a node's advert is learnt. */
static void rdlock_try_resolve_backend(void)
{
	struct rdlock_backend_adv adv[RDLOCK_MAX_NODES];
	struct rdlock_cluster *cl = &rdlock_cl;
	unsigned int i, n = 0;
	int ret;

	if (cl->backend != RDLOCK_BACKEND_NONE)
		goto learned;
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		if (!rdlock_node_member(&cl->nodes[i]))
			continue;
		if (!cl->nodes[i].adv_known) {
			/* Declared down before this table: not asked. */
			if (rdlock_node_fenced(&cl->nodes[i]))
				continue;
			/*
			 * Left before it said: the backend the cluster chose
			 * with its advert comes with a learned peer's word,
			 * unless none is to come.
			 */
			if (cl->nodes[i].learn_excused && !rdlock_learn_pending())
				continue;
			return;
		}
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
	/*
	 * Peers hear it: one that chose another (with an advert this node
	 * never saw, of a node declared down) refuses this node rather than
	 * mix atomics on the same words (rdlock_recv_downset()).
	 */
	queue_work(rdlock_wq, &cl->words_work);
learned:
	rdlock_check_learned();
}

/* Where a connection request came from. */
static struct sockaddr *rdlock_cm_peer_addr(struct rdma_cm_id *id)
{
	return (struct sockaddr *)&id->route.addr.dst_addr;
}

/* The incarnation of the table a connection request comes from. */
static u64 rdlock_req_incarnation(const struct rdlock_cm_pdata *pd, u8 len)
{
	const struct rdlock_cm_req_keyed *req = (const void *)pd;

	if (!(pd->hdr.flags & RDLOCK_PDATA_KEYED))
		return le64_to_cpu(pd->table_incarnation);
	return len >= sizeof(*req) ? le64_to_cpu(req->table_incarnation) : 0;
}

/* Called with rdlock_cl.lock held: is a node's declaration under way? */
static bool rdlock_declaring(void)
{
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (rdlock_cl.nodes[i].member == RDLOCK_MEMBER_FENCED)
			return true;
	return false;
}

/*
 * Called with rdlock_cl.lock held, for a node cut off here that connects
 * (or answers a knock) with the table of incarnation @inc, whose private
 * data @hdr says whether it learned its epoch: 0 if it may return, else
 * why not (rdlock_return_verdict()).
 */
static int rdlock_may_return(const struct rdlock_node *node, u64 inc,
			     const struct rdlock_cm_hdr *hdr)
{
	/* A handover waits for it: it returns while the failed are cut off. */
	bool declaring = rdlock_declaring() &&
			 !(rdlock_cl.awaited & BIT(node->id));

	switch (rdlock_return_verdict(node->member, node->incarnation, inc,
				      declaring,
				      (hdr->flags & RDLOCK_PDATA_NEW) &&
				      !node->table_disputed)) {
	case RDLOCK_RETURN_OK:
		return 0;
	case RDLOCK_RETURN_LATER:
		return RDLOCK_REJ_NOT_READY;
	default:
		return RDLOCK_REJ_FENCED;
	}
}

/* Called with rdlock_cl.lock held: @node is back with table @inc. */
static void rdlock_node_return(struct rdlock_node *node, u64 inc)
{
	rdlock_member_to(node, RDLOCK_MEMBER_RETURNED);
	WRITE_ONCE(node->incarnation, inc);
	node->backoff_ms = 0;
	node->downset_seen = false;
	node->word_formed = false;
	node->table_disputed = false;
	node->learn_excused = false;
	pr_info("node %u returned with a new lock table: it keeps no lockspace until a handover (recovery.rst)\n",
		node->id);
}

/* Validate a connection request; 0 or an rdlock_reject_reason. */
static int rdlock_check_request(const struct rdlock_cm_pdata *pd, u8 len,
				struct rdma_cm_id *id, u32 *src)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_backend_adv adv;
	u32 dst;
	int ret;

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
	 * the fabric would get a key to our table and replace its connection.
	 */
	if (!rdlock_sockaddr_same_host(&cl->nodes[*src].addr,
				       rdlock_cm_peer_addr(id)))
		return RDLOCK_REJ_ADDRESS;
	if (rdlock_node_fenced(&cl->nodes[*src])) {
		ret = rdlock_may_return(&cl->nodes[*src],
					rdlock_req_incarnation(pd, len),
					&pd->hdr);
		if (ret)
			return ret;
	}
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
 * The endpoint of connection @id that a requester's proof covers
 * (struct rdlock_auth_bind): @req_qpn, the requester's queue pair; the
 * GIDs as @id sees them, its own first when @requester. Both sides
 * compute the same: the acceptor's new connection sees the requester's
 * GID as its destination. iWARP's connection requests carry no QPN (and
 * its new connections no destination address): zeroes there.
 */
static void rdlock_auth_bind_of(struct rdma_cm_id *id, u32 req_qpn,
				bool requester, struct rdlock_auth_bind *b)
{
	union ib_gid sgid, dgid;

	memset(b, 0, sizeof(*b));
	if (rdma_protocol_iwarp(id->device, id->port_num))
		return;
	rdma_read_gids(id, &sgid, &dgid);
	b->req_qpn = cpu_to_le32(req_qpn);
	memcpy(b->req_gid, requester ? sgid.raw : dgid.raw,
	       sizeof(b->req_gid));
	memcpy(b->acc_gid, requester ? dgid.raw : sgid.raw,
	       sizeof(b->acc_gid));
}

/*
 * The cluster key's part of validating a request from @src on @id from
 * queue pair @qpn; 0 or a reason. Both sides must have a key or neither.
 * With a key, the first request (nonce 0) is given a challenge
 * (RDLOCK_REJ_CHALLENGE, @chal filled); the second must prove the key
 * over that challenge and its endpoint, and the challenge is then spent:
 * @req and @chal are what the reply's proof covers.
 */
static int rdlock_check_key(struct rdma_cm_id *id, u32 qpn, const void *data,
			    u8 len, u32 src, struct rdlock_cm_req_keyed *req,
			    u8 *chal)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	const struct rdlock_cm_pdata *pd = data;
	struct rdlock_node *node = &cl->nodes[src];
	u8 mac[RDLOCK_AUTH_REQ_MAC_LEN];
	struct rdlock_auth_bind bind;
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

	rdlock_auth_bind_of(id, qpn, false, &bind);
	ret = rdlock_auth_req_mac(chal, req, &bind, mac);
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
	/* A knock reads nothing and grants no read or atomic access. */
	if (conn->knock) {
		param->responder_resources = 0;
		param->initiator_depth = 0;
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

/*
 * Refuse a connect request from @src for @reason, counted and logged
 * unless it is routine. RDLOCK_REJ_CHALLENGE carries @chal; keyed,
 * RDLOCK_REJ_FENCED the proof over @req and the challenge it answered,
 * @chal (@req NULL: a proof of zeroes, which only fault injection sends).
 */
static void rdlock_cm_refuse(struct rdma_cm_id *id, int reason, u32 src,
			     const u8 *chal,
			     const struct rdlock_cm_req_keyed *req)
{
	union {
		struct rdlock_cm_reject rej;
		struct rdlock_cm_challenge chal;
		struct rdlock_cm_fenced fenced;
	} rej = {};
	u8 len = sizeof(rej.rej);

	/* A node still starting or asked to prove the key is no error. */
	if (reason != RDLOCK_REJ_NOT_READY && reason != RDLOCK_REJ_CHALLENGE) {
		atomic64_inc(&rdlock_cl.rejected);
		pr_warn_ratelimited("refused connection from node %u: %s (from %pISc)\n",
				    src, rdlock_reject_names[reason],
				    rdlock_cm_peer_addr(id));
	}
	rej.rej.magic = cpu_to_le32(RDLOCK_WIRE_MAGIC);
	rej.rej.reason = cpu_to_le16(reason);
	if (reason == RDLOCK_REJ_CHALLENGE) {
		memcpy(rej.chal.nonce, chal, sizeof(rej.chal.nonce));
		len = sizeof(rej.chal);
	} else if (reason == RDLOCK_REJ_FENCED && rdlock_cl.auth_tfm) {
		if (req && rdlock_auth_fenced_mac(chal, req, rej.fenced.mac))
			memset(rej.fenced.mac, 0, sizeof(rej.fenced.mac));
		len = sizeof(rej.fenced);
	}
	rdma_reject(id, &rej, len, IB_CM_REJ_CONSUMER_DEFINED);
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
	bool proven = false;
	int reason, ret;
	u32 src = 0;

	spin_lock_bh(&cl->lock);
	reason = rdlock_check_request(pd, len, id, &src);
	spin_unlock_bh(&cl->lock);
	/*
	 * Keyed, the refusal of a table declared down comes only after a
	 * proof of the key, and proves it in turn: a refusal is anybody's
	 * word, and this one ends the requester's epoch.
	 */
	if (!reason || (reason == RDLOCK_REJ_FENCED && cl->auth_tfm)) {
		ret = rdlock_check_key(id, ev->param.conn.qp_num, pd, len, src,
				       &req, chal);
		proven = reason && !ret;
		if (ret)
			reason = ret;
	}
	/*
	 * Fault injection: a forger's refusal, without the key's proof, of a
	 * request it would accept, or refuse for the key (an impostor with
	 * another key or none).
	 */
	if ((!reason || reason == RDLOCK_REJ_KEY || reason == RDLOCK_REJ_AUTH) &&
	    rdlock_fault_forged_fence(src))
		reason = RDLOCK_REJ_FENCED;
	if (reason)
		goto reject;

	/* Keyed, the reply proves the key in turn. */
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
	conn->knock = conn->peer.hdr.flags & RDLOCK_PDATA_KNOCK;
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
		rdlock_cm_refuse(id, RDLOCK_REJ_NO_RESOURCES, src, NULL, NULL);
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
	rdlock_cm_refuse(id, reason, src, chal, proven ? &req : NULL);
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
	struct rdlock_auth_bind bind;
	struct rdlock_cm_pdata pd;
	bool answer;
	int ret;

	rdlock_fill_pdata(&pd, conn->node);
	memset(req, 0, sizeof(*req));
	req->hdr = pd.hdr;
	if (conn->knock)
		req->hdr.flags |= RDLOCK_PDATA_KNOCK;
	req->table_incarnation = pd.table_incarnation;

	spin_lock_bh(&cl->lock);
	answer = node->chal_got;
	node->chal_got = false;			/* answered once */
	memcpy(conn->challenge, node->chal_in, sizeof(conn->challenge));
	spin_unlock_bh(&cl->lock);
	if (!answer)
		return 0;
	req->nonce = cpu_to_le64(get_random_u64() ?: 1);
	/* The queue pair exists since ADDR_RESOLVED: connected at ROUTE's. */
	rdlock_auth_bind_of(conn->cm_id, conn->qp->qp_num, true, &bind);
	/* Fault injection: a proof as another queue pair would relay it. */
	if (rdlock_fault_relayed_proof(conn->node))
		bind.req_qpn ^= cpu_to_le32(1);
	ret = rdlock_auth_req_mac(conn->challenge, req, &bind, req->mac);
	/* Fault injection: the request before, as a replay would send it. */
	if (!ret)
		rdlock_fault_replayed_proof(conn->node, req);
	return ret;
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
		/* To a node declared down: which table are you? */
		if (conn->knock)
			pd.hdr.flags |= RDLOCK_PDATA_KNOCK;
		param.private_data = &pd;
		param.private_data_len = sizeof(pd);
	}
	conn->connect_sent = true;
	return rdma_connect_locked(conn->cm_id, &param);
}

/*
 * Keyed, a refusal for being declared down counts only with the
 * acceptor's proof over our request, which answered its challenge
 * (rdlock_auth_fenced_mac()): anybody on the fabric can send a refusal,
 * and this one would end our epoch. Without a key there is nothing to
 * prove (design.rst, "Peer authentication").
 */
static bool rdlock_fence_proven(struct rdlock_conn *conn,
				const struct rdlock_cm_reject *rej, u8 len)
{
	const struct rdlock_cm_fenced *fenced = (const void *)rej;
	u8 mac[RDLOCK_AUTH_MAC_LEN];
	bool proven;

	if (!conn->keyed)
		return true;
	proven = len >= sizeof(*fenced) && conn->req.nonce &&
		 !rdlock_auth_fenced_mac(conn->challenge, &conn->req, mac) &&
		 !crypto_memneq(mac, fenced->mac, sizeof(mac));
	if (!proven) {
		atomic64_inc(&rdlock_cl.auth_unproven_fence);
		pr_err_ratelimited("node %u: a refusal as declared down without the cluster key's proof: ignored\n",
				   conn->node);
	}
	return proven;
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
		if (rdlock_fence_proven(conn, rej, len))
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
	rdlock_xport_epoch_handler_t handler;

	lockdep_assert_held(&rdlock_cl.lock);
	WRITE_ONCE(rdlock_cl.epoch, rdlock_cl.epoch + 1);
	handler = rdlock_cl.epoch_handler;
	if (handler)
		handler();
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

/*
 * Active, to a node declared down: its answer names its table. The
 * incarnation that was declared down is still running (cut off, not
 * dead): it is told, as rdlock_xport_fence() would. A new one returns
 * (rdlock_may_return()): this connection, which did not give it our
 * table, fails, and the next one is made as to any node.
 */
static int rdlock_conn_knocked(struct rdlock_conn *conn)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_node *node = &cl->nodes[conn->node];
	u64 inc = le64_to_cpu(conn->peer.table_incarnation);
	bool zombie = false;
	int why;

	spin_lock_bh(&cl->lock);
	if (!test_bit(RDLOCK_CONN_FAILED, &conn->flags) &&
	    node->member == RDLOCK_MEMBER_DOWN) {
		why = rdlock_may_return(node, inc, &conn->peer.hdr);
		if (why == RDLOCK_REJ_FENCED)
			zombie = rdlock_conn_to(conn, RDLOCK_CONN_ESTABLISHED);
		if (!why)
			rdlock_node_return(node, inc);
	}
	spin_unlock_bh(&cl->lock);
	if (zombie && rdlock_send_fenced(conn))
		return 0;	/* the message's completion fails it */
	return -ECONNREFUSED;
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
		if (conn->knock)
			return rdlock_conn_knocked(conn);
		/* Ours first, keyed only now that the peer proved the key. */
		if (rdlock_conn_trades_tables(conn)) {
			ret = rdlock_conn_send_table(conn);
			if (ret)
				return ret;
		}
	}
	/* The peer's table may have come first: then we finish here. */
	if (rdlock_conn_trades_tables(conn) &&
	    !atomic_dec_and_test(&conn->ready_pending))
		return 0;	/* rdlock_recv_table() finishes */
	return rdlock_conn_ready(conn);
}

static int rdlock_send_downset(struct rdlock_conn *conn);

/**
 * rdlock_conn_ready() - an established connection joins its node
 * @conn: the connection; keyed, the peer proved the key; a peer's, its
 *	table arrived (rdlock_recv_table()).
 *
 * Process context or softirq (RDLOCK_WIRE_TABLE).
 *
 * Return: 0, or a negative errno when the connection must fail.
 */
int rdlock_conn_ready(struct rdlock_conn *conn)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *old = NULL;
	u64 inc = le64_to_cpu(conn->peer.table_incarnation);
	struct rdlock_backend_adv adv;
	struct rdlock_node *node;
	bool setup = false;
	int ret;

	rdlock_pdata_adv(&conn->peer, &adv);

	spin_lock_bh(&cl->lock);
	if (test_bit(RDLOCK_CONN_FAILED, &conn->flags)) {
		spin_unlock_bh(&cl->lock);
		return 0;
	}
	node = &cl->nodes[conn->node];
	/* A knock from a node that declared us down: answered, never used. */
	if (!conn->active && conn->knock) {
		rdlock_conn_to(conn, RDLOCK_CONN_ESTABLISHED);
		spin_unlock_bh(&cl->lock);
		return 0;
	}
	if (rdlock_node_fenced(node) &&
	    (conn->active || rdlock_may_return(node, inc, &conn->peer.hdr))) {
		spin_unlock_bh(&cl->lock);
		return -ECONNREFUSED;
	}
	if (conn->node != cl->self && !rdlock_adv_acceptable(&adv)) {
		spin_unlock_bh(&cl->lock);
		pr_err("node %u: atomic backend mismatch\n", conn->node);
		return -EPROTO;
	}
	if (rdlock_node_fenced(node))
		rdlock_node_return(node, inc);
	rdlock_conn_to(conn, RDLOCK_CONN_ESTABLISHED);
	if (rdlock_is_loop_passive(conn)) {
		spin_unlock_bh(&cl->lock);
		return 0;	/* serves our own requests; never sends them */
	}

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
		node->table_slots = le32_to_cpu(conn->peer.hdr.table_slots);
		node->words_be = conn->peer.hdr.flags & RDLOCK_PDATA_WORDS_BE;
		rdlock_learn_incarnation(node, inc);
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

		/* Lost, the peer would never be ready: fail, connect again. */
		ret = rdlock_send_downset(conn);
		if (ret)
			return ret;
		pr_info("connected to node %u\n", conn->node);
		if (up)
			up(conn->node);
	}
	return 0;
}

static int __rdlock_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
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

/* rdma_cm's callback: connections are set up here, with no FS reclaim. */
static int rdlock_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	unsigned int nofs = memalloc_nofs_save();
	int ret = __rdlock_cm_handler(id, ev);

	memalloc_nofs_restore(nofs);
	return ret;
}

static void __rdlock_connect_work(struct work_struct *work)
{
	struct rdlock_node *node = container_of(to_delayed_work(work),
						struct rdlock_node,
						connect_work);
	struct rdlock_cluster *cl = &rdlock_cl;
	struct sockaddr_storage src;
	struct rdlock_conn *conn;
	struct rdma_cm_id *id;
	int ret;

	/* Being declared down: nobody; declared down: a knock. */
	if (!rdlock_cl_up() || READ_ONCE(node->member) == RDLOCK_MEMBER_FENCED)
		return;
	if (rdlock_fault_link_down(node->id))
		goto retry;
	conn = rdlock_conn_create(node->id, true);
	if (!conn)
		goto retry;
	conn->knock = READ_ONCE(node->member) == RDLOCK_MEMBER_DOWN;
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

/* Connecting to a node, as rdlock_cm_handler(): with no FS reclaim. */
static void rdlock_connect_work(struct work_struct *work)
{
	unsigned int nofs = memalloc_nofs_save();

	__rdlock_connect_work(work);
	memalloc_nofs_restore(nofs);
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
	first = rdlock_cl_up() && rdlock_node_live(&cl->nodes[node]);
	if (first) {
		rdlock_member_to(&cl->nodes[node], RDLOCK_MEMBER_FENCED);
		rdlock_end_epoch();
		/* Never ready again, nor telling anybody, before a restart. */
		if (cl->view != RDLOCK_VIEW_CUT_OFF)
			rdlock_view_to(RDLOCK_VIEW_CUT_OFF);
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
/*
 * How long it lets its message to the node go before it fails the
 * connections itself: a reachable node gets it in a few milliseconds; one
 * cut off (a partition, a link fence) never does, and each such wait is
 * part of every survivor's recovery. A node that misses it learns it at
 * its next connection (refused, or knocked: recovery.rst).
 */
#define RDLOCK_FENCE_TELL_MS		20

/* rdlock_xport_fence(), of table @inc only when @match. */
static int __rdlock_xport_fence(u32 node, bool match, u64 inc)
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
	} else if (match && cl->nodes[node].incarnation != inc) {
		ret = -ESTALE;
	} else {
		rdlock_member_to(&cl->nodes[node], RDLOCK_MEMBER_FENCED);
		conn = __rdlock_conn_get_ready(node);
		/*
		 * Not waited for any more: by a node still learning, nor by
		 * the backend's choice (a node that never connected here).
		 */
		rdlock_try_resolve_backend();
	}
	spin_unlock_bh(&cl->lock);
	if (ret)
		return ret;
	pr_warn("node %u declared down: its table's connections refused until the cluster restarts\n",
		node);
	cancel_delayed_work_sync(&cl->nodes[node].connect_work);
	/* The message fails the connection once sent (rdlock_send_done()). */
	if (conn) {
		sent = rdlock_send_fenced(conn);
		rdlock_conn_put(conn);
	}
	if (!sent ||
	    !wait_event_timeout(cl->conns_wait, rdlock_node_conns_gone(node),
				msecs_to_jiffies(RDLOCK_FENCE_TELL_MS)))
		rdlock_fail_node_conns(node);
	if (!wait_event_timeout(cl->conns_wait, rdlock_node_conns_gone(node),
				msecs_to_jiffies(RDLOCK_FENCE_TEARDOWN_MS)))
		ret = -ETIMEDOUT;
	return ret;
}

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
	return __rdlock_xport_fence(node, false, 0);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_fence, RDLOCK_INTERNAL);

/**
 * rdlock_xport_fence_table() - rdlock_xport_fence(), for one table of @node
 * @node: a configured node, not this one.
 * @inc: the table's incarnation, 0 for none known.
 *
 * As rdlock_xport_fence(), only while @inc is the table known here of
 * @node: a node declared down and back with a new table since is left
 * alone.
 *
 * Return: as rdlock_xport_fence(), and -ESTALE for another table.
 */
int rdlock_xport_fence_table(u32 node, u64 inc)
{
	return __rdlock_xport_fence(node, true, inc);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_fence_table, RDLOCK_INTERNAL);

/**
 * rdlock_xport_node_fenced() - does @node keep nothing of any lockspace
 * @node: a node id, this one included.
 *
 * True for a node declared down in this cluster epoch (either way), cut
 * off or returned with a new table since: names and lock words are never
 * homed or placed on it, nor the lockspace directory kept there. This
 * node is one when a peer said it returned (rdlock_recv_downset()).
 */
bool rdlock_xport_node_fenced(u32 node)
{
	enum rdlock_member_state st;

	if (node >= RDLOCK_MAX_NODES)
		return false;
	st = READ_ONCE(rdlock_cl.nodes[node].member);
	return st != RDLOCK_MEMBER_ABSENT && st != RDLOCK_MEMBER_CONFIGURED;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_fenced, RDLOCK_INTERNAL);

/**
 * rdlock_xport_node_cut() - is @node cut off this node's table
 * @node: a node id.
 *
 * True while it is being declared down and once it is, until a new table
 * of it returns: it takes part in nothing (no barrier, no census, no
 * reset waits for it). A returned node is not cut off.
 */
bool rdlock_xport_node_cut(u32 node)
{
	return node < RDLOCK_MAX_NODES &&
	       rdlock_node_fenced(&rdlock_cl.nodes[node]);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_cut, RDLOCK_INTERNAL);

/**
 * rdlock_xport_node_released() - is @node's declaration done here
 * @node: a node id.
 *
 * Return: true once rdlock_xport_release() was called for it in this
 * epoch (or a peer said so to this node, whose table is newer), and
 * while it is back with a new table.
 */
bool rdlock_xport_node_released(u32 node)
{
	enum rdlock_member_state st;

	if (node >= RDLOCK_MAX_NODES)
		return false;
	st = READ_ONCE(rdlock_cl.nodes[node].member);
	return st == RDLOCK_MEMBER_DOWN || st == RDLOCK_MEMBER_RETURNED;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_node_released, RDLOCK_INTERNAL);

/**
 * rdlock_xport_learning() - is this node still learning its epoch
 *
 * Return: true while its cluster is up with a new table and not every live
 * peer said yet which nodes are declared down (RDLOCK_VIEW_LEARNING):
 * whether this node itself returned is not known yet.
 */
bool rdlock_xport_learning(void)
{
	return rdlock_xport_up() &&
	       READ_ONCE(rdlock_cl.view) == RDLOCK_VIEW_LEARNING;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_learning, RDLOCK_INTERNAL);

/**
 * rdlock_xport_learn_excuse() - learn the epoch without the word of nodes
 *	that left
 * @nodes: nodes the cluster engine says left cleanly, by bit.
 *
 * A node learning its epoch waits for every live peer's word of which
 * nodes are declared down (RDLOCK_WIRE_DOWNSET). A peer that left before
 * it connected here never sends one, while the survivors that learned
 * already declare it down and wait at the declaration's barrier for this
 * node, which declares nobody until it learned
 * (rdlock_member_take_left()): both would wait for good. Excused, such a
 * peer is no longer waited for; this node then decides on it as the
 * others did, from its place here (still configured: it is not cut off
 * first, which would change that verdict). The backend is still taken
 * from a learned peer's word while one is to come: the cluster chose it
 * with the excused peer's advert, which this node never saw. The excuse
 * ends when the peer returns, or with the cluster epoch. Nothing while
 * the cluster is not up or this node is not learning. Any context but
 * hard IRQ.
 */
void rdlock_xport_learn_excuse(const unsigned long *nodes)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 n;

	spin_lock_bh(&cl->lock);
	if (!rdlock_cl_up() || cl->view != RDLOCK_VIEW_LEARNING) {
		spin_unlock_bh(&cl->lock);
		return;
	}
	for_each_set_bit(n, nodes, RDLOCK_MAX_NODES)
		if (n != cl->self && rdlock_node_member(&cl->nodes[n]))
			cl->nodes[n].learn_excused = true;
	rdlock_try_resolve_backend();
	spin_unlock_bh(&cl->lock);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_learn_excuse, RDLOCK_INTERNAL);

/*
 * Called with rdlock_cl.lock held, by the node forming the epoch: @node
 * is no member of the cluster engine's membership, and no table of it
 * was ever known here. It is absent: declared down with no table, so
 * nothing of it is to release or move, no lockspace keeps anything on it,
 * and nobody waits for it. Peers learn it from this node's word. It comes
 * back as a node declared down does, with a table that has not learned
 * its epoch (rdlock_return_verdict()).
 */
static bool rdlock_node_absent(struct rdlock_node *node)
{
	if (node->id == rdlock_cl.self ||
	    node->member != RDLOCK_MEMBER_CONFIGURED || node->conn ||
	    node->incarnation || !rdlock_member_to(node, RDLOCK_MEMBER_DOWN))
		return false;
	node->table_slots = 0;
	return true;
}

/* How often a word is tried again while the sends are all in use. */
#define RDLOCK_WORDS_TRIES	50
#define RDLOCK_WORDS_RETRY_MS	20

/* Send @conn this node's word, waiting a little for a free send. */
static int rdlock_send_words(struct rdlock_conn *conn)
{
	int ret, tries = RDLOCK_WORDS_TRIES;

	while ((ret = rdlock_send_downset(conn)) == -EAGAIN && --tries)
		msleep(RDLOCK_WORDS_RETRY_MS);
	return ret;
}

/* Tell every peer connected where this node's epoch stands, again. */
static void rdlock_words_work(struct work_struct *work)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_conn *conn;
	u32 i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		if (i == cl->self)
			continue;
		spin_lock_bh(&cl->lock);
		conn = rdlock_cl_up() ? __rdlock_conn_get_ready(i) : NULL;
		spin_unlock_bh(&cl->lock);
		if (!conn)
			continue;
		/* Not sent: the connection fails, and the next one tells. */
		if (rdlock_send_words(conn))
			rdlock_conn_fail(conn);
		rdlock_conn_put(conn);
	}
}

/**
 * rdlock_xport_forming() - is this node's epoch still to form
 *
 * Return: true while its cluster is up, learning, and neither it formed
 * its epoch nor a peer said it formed (rdlock_xport_form()).
 */
bool rdlock_xport_forming(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	bool ret;

	spin_lock_bh(&cl->lock);
	ret = rdlock_cl_up() && cl->view == RDLOCK_VIEW_LEARNING &&
	      !cl->formed && !rdlock_words_formed();
	spin_unlock_bh(&cl->lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_forming, RDLOCK_INTERNAL);

/*
 * Why an epoch does not form: said once a minute at most, each (@at: when
 * last, 0 never). Only the form work, one at a time, says it.
 */
static bool rdlock_form_say(unsigned long *at)
{
	if (*at && time_before(jiffies, *at + 60 * HZ))
		return false;
	*at = jiffies ?: 1;
	return true;
}

static unsigned long rdlock_form_stray_at, rdlock_form_mute_at;

/**
 * rdlock_xport_form() - form this node's cluster epoch, if it is the one
 * @members: the cluster engine's members of its last generation, by bit.
 * @out: the nodes that failed or left, by bit: declared down as such,
 *	never absent.
 * @running: the membership runs: no change under way.
 * @wait_ms: how long after the cluster came up it forms without every
 *	configured node (founding_wait_ms).
 *
 * With a cluster engine, nobody is ready before one node formed the epoch
 * (rdlock_form_verdict()): the configured nodes that are neither members
 * nor @out are then absent, declared down with no table, and every peer hears it
 * from this node before it learns. Nothing when the cluster is not up or
 * the epoch is formed already.
 *
 * Return: 0 formed here; -EAGAIN not now; -EALREADY formed, or to be
 * learned from a peer.
 */
int rdlock_xport_form(u32 members, u32 out, bool running,
		      unsigned int wait_ms)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 configured = 0, contacted = 0, gone = 0, absent, said, stray, mute;
	u32 i;
	DECLARE_BITMAP(shown, RDLOCK_MAX_NODES);
	struct rdlock_node *n;
	enum rdlock_form verdict;
	bool waited;

	spin_lock_bh(&cl->lock);
	if (!rdlock_cl_up() || cl->view != RDLOCK_VIEW_LEARNING ||
	    cl->formed) {
		spin_unlock_bh(&cl->lock);
		return -EALREADY;
	}
	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		n = &cl->nodes[i];
		if (!rdlock_node_member(n))
			continue;
		configured |= BIT(i);
		if (i != cl->self && n->member == RDLOCK_MEMBER_CONFIGURED &&
		    (n->conn || n->incarnation || n->downset_seen))
			contacted |= BIT(i);
	}
	absent = configured & ~members & ~out & ~BIT(cl->self);
	waited = time_after_eq(jiffies, cl->up_at + msecs_to_jiffies(wait_ms));
	said = rdlock_words(false);
	verdict = rdlock_form_verdict(cl->self, members, configured, absent,
				      running, waited, said, rdlock_words(true),
				      contacted);
	if (verdict != RDLOCK_FORM_NOW) {
		spin_unlock_bh(&cl->lock);
		/* Members that never said: no connection to their tables? */
		mute = members & configured & ~BIT(cl->self) & ~said;
		/* Connected, yet no member: a node id corosync does not have? */
		stray = absent & contacted;
		if (verdict == RDLOCK_FORM_WAIT && waited && running && stray &&
		    rdlock_form_say(&rdlock_form_stray_at)) {
			bitmap_from_arr32(shown, &stray, RDLOCK_MAX_NODES);
			pr_warn("cluster %u: nodes %*pbl connected here but are no members of the cluster engine's membership (rdlock node N is corosync node N + 1): the epoch does not form\n",
				cl->cluster_id, RDLOCK_MAX_NODES, shown);
		}
		/* Only the lowest member forms, and waits for the others. */
		if (verdict == RDLOCK_FORM_WAIT && waited && running && mute &&
		    (members & BIT(cl->self)) &&
		    !(members & configured & (BIT(cl->self) - 1)) &&
		    rdlock_form_say(&rdlock_form_mute_at)) {
			bitmap_from_arr32(shown, &mute, RDLOCK_MAX_NODES);
			pr_warn("cluster %u: members %*pbl of the cluster engine have not connected here yet (their rdlock addresses, or the RDMA links?): the epoch does not form\n",
				cl->cluster_id, RDLOCK_MAX_NODES, shown);
		}
		return verdict == RDLOCK_FORM_JOIN ? -EALREADY : -EAGAIN;
	}
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if ((absent & BIT(i)) && rdlock_node_absent(&cl->nodes[i]))
			gone |= BIT(i);
	rdlock_set_formed();
	rdlock_try_resolve_backend();
	spin_unlock_bh(&cl->lock);
	bitmap_from_arr32(shown, &members, RDLOCK_MAX_NODES);
	pr_info("cluster %u: this node forms its epoch with members %*pbl\n",
		cl->cluster_id, RDLOCK_MAX_NODES, shown);
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (gone & BIT(i))
			pr_info("node %u absent as the cluster formed: declared down, it returns with a new table\n",
				i);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_form, RDLOCK_INTERNAL);

/**
 * rdlock_xport_epoch_live() - are this node's tables of this epoch in use
 *
 * Return: true while its cluster is up and no peer declared it down
 * (RDLOCK_VIEW_CUT_OFF: its epoch ended and every lockspace here is lost,
 * whether or not every survivor told it yet). Any context, no lock.
 */
bool rdlock_xport_epoch_live(void)
{
	return rdlock_cl_up() &&
	       READ_ONCE(rdlock_cl.view) != RDLOCK_VIEW_CUT_OFF;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_epoch_live, RDLOCK_INTERNAL);

/**
 * rdlock_xport_left_declared() - is a node that left to be declared down
 * @node: a node the cluster engine says left cleanly, not this one.
 * @hosts: the nodes that may take its names: the cluster engine's members
 *	that neither failed nor left (the same set on every survivor).
 *
 * To be asked once this node learned its epoch (rdlock_xport_learning()
 * false): only then are the places of the nodes known here, this one's
 * included, those of every other survivor. Any context.
 *
 * Return: rdlock_left_declared() of its place here, its heir another
 * configured node of @hosts (keeping its table of this epoch, or to take
 * over: rdlock_xport_hand_over()): false for a node not configured, cut
 * off already, or one with no such heir (its names would have no home).
 */
bool rdlock_xport_left_declared(u32 node, const unsigned long *hosts)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	bool heir = false;
	u32 n;

	if (node >= RDLOCK_MAX_NODES || node == cl->self)
		return false;
	/* Keeping its table of this epoch, or to take over (a handover). */
	for_each_set_bit(n, hosts, RDLOCK_MAX_NODES) {
		if (n != node && rdlock_node_member(&cl->nodes[n])) {
			heir = true;
			break;
		}
	}
	return rdlock_left_declared(READ_ONCE(cl->nodes[node].member), heir);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_left_declared, RDLOCK_INTERNAL);

/* Called with rdlock_cl.lock held: every node's place, and the cut off. */
static u32 rdlock_member_states(enum rdlock_member_state *st)
{
	u32 cut = 0, i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++) {
		st[i] = rdlock_cl.nodes[i].member;
		if (st[i] == RDLOCK_MEMBER_FENCED)
			cut |= BIT(i);
	}
	return cut;
}

/* Of @set, the configured nodes not back here (neither kept nor returned). */
static u32 rdlock_down_of(const enum rdlock_member_state *st, u32 set)
{
	u32 down = 0, i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if ((set & BIT(i)) && st[i] != RDLOCK_MEMBER_ABSENT &&
		    st[i] != RDLOCK_MEMBER_CONFIGURED &&
		    st[i] != RDLOCK_MEMBER_RETURNED)
			down |= BIT(i);
	return down;
}

/*
 * Called with rdlock_cl.lock held: the returned nodes of @hosts keep their
 * tables as if of this epoch from now on; the declarations of the nodes
 * cut off now hand their names over. Return: the nodes that took over.
 */
static u32 rdlock_take_over(u32 hosts, u32 cut)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 took = 0, i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if ((hosts & BIT(i)) &&
		    cl->nodes[i].member == RDLOCK_MEMBER_RETURNED)
			took |= BIT(i);
	if (!took)
		return 0;
	/*
	 * The nodes handing over first: whoever finds an heir keeping its
	 * table finds them too (rdlock_res_home_pending()'s read order).
	 */
	WRITE_ONCE(cl->handover, cl->handover | cut);
	/* Pairs with rdlock_res_home_pending()'s smp_rmb(). */
	smp_wmb();
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (took & BIT(i))
			rdlock_member_to(&cl->nodes[i],
					 RDLOCK_MEMBER_CONFIGURED);
	return took;
}

/*
 * Called with rdlock_cl.lock held: a handover a peer made that this node
 * was not part of, if each of its hosts is back here (else they may
 * return while the failed are cut off: rdlock_may_return()). Return: the
 * nodes that took over here, or 0.
 */
static u32 rdlock_adopt(bool *wait)
{
	enum rdlock_member_state st[RDLOCK_MAX_NODES];
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 cut, took;

	*wait = false;
	if (cl->heard_era <= cl->era)
		return 0;
	cut = rdlock_member_states(st);
	if (rdlock_adopt_verdict(st, RDLOCK_MAX_NODES, cl->heard_hosts) ==
	    RDLOCK_HANDOVER_WAIT) {
		cl->awaited = rdlock_down_of(st, cl->heard_hosts);
		*wait = true;
		return 0;
	}
	took = rdlock_take_over(cl->heard_hosts, cut);
	cl->era = cl->heard_era;
	return took;
}

/**
 * rdlock_xport_hand_over() - returned nodes take over this epoch's tables
 * @heirs: the cluster engine's members that neither failed nor left (the
 *	same set on every survivor), by bit.
 * @took: set to the nodes that took over here, by bit (0: none).
 *
 * To be called by the membership once the failed nodes and those that
 * left are cut off, before any of them is declared down. When the last
 * nodes keeping their tables of this epoch are being declared down, the
 * heirs take over (rdlock_handover_verdict()): they keep names, lock
 * words and the directory from now on, and the cut off nodes' names move
 * to them. A handover a peer made that this node was not part of (it
 * learned its epoch before, or was no member then) is taken first
 * (rdlock_adopt_verdict()). Peers hear of it (RDLOCK_WIRE_DOWNSET's era).
 *
 * Return: 0; -EAGAIN while this node is learning its epoch or an heir has
 * not returned here (call again later); -ENOTCONN when the cluster is
 * not up.
 */
int rdlock_xport_hand_over(u32 heirs, u32 *took)
{
	enum rdlock_member_state st[RDLOCK_MAX_NODES];
	struct rdlock_cluster *cl = &rdlock_cl;
	bool wait;
	u32 cut, era;
	int ret = 0;

	*took = 0;
	spin_lock_bh(&cl->lock);
	cl->awaited = 0;
	if (!rdlock_cl_up()) {
		ret = -ENOTCONN;
		goto out;
	}
	/*
	 * Learning, it cannot tell (it declares the failed all the same:
	 * the others' barriers wait for it); it takes the handover from
	 * their words once it learned (rdlock_check_learned(), and
	 * rdlock_xport_hosts_known() before its membership runs).
	 */
	if (cl->view != RDLOCK_VIEW_LEARNED)
		goto out;
	*took = rdlock_adopt(&wait);
	if (wait) {
		ret = -EAGAIN;
		goto out;
	}
	cut = rdlock_member_states(st);
	switch (rdlock_handover_verdict(st, RDLOCK_MAX_NODES, heirs)) {
	case RDLOCK_HANDOVER_WAIT:
		cl->awaited = rdlock_down_of(st, heirs);
		ret = -EAGAIN;
		break;
	case RDLOCK_HANDOVER_NOW:
		*took |= rdlock_take_over(heirs, cut);
		cl->era++;
		break;
	case RDLOCK_HANDOVER_NONE:
		break;
	}
out:
	era = cl->era;
	cut = cl->handover;
	spin_unlock_bh(&cl->lock);
	if (*took) {
		/* Learners and nodes that were not part of it hear it. */
		queue_work(rdlock_wq, &cl->words_work);
		pr_info("cluster %u: nodes %#x take over the lock tables of this epoch from nodes %#x (handover %u)\n",
			cl->cluster_id, *took, cut, era);
	}
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_hand_over, RDLOCK_INTERNAL);

/**
 * rdlock_xport_handover() - nodes whose declarations hand names over
 *
 * Return: the nodes cut off when returned nodes took over here
 * (rdlock_xport_hand_over()), by bit, until each one's declaration is done
 * here (rdlock_xport_release()). Any context.
 */
u32 rdlock_xport_handover(void)
{
	return READ_ONCE(rdlock_cl.handover);
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_handover, RDLOCK_INTERNAL);

/**
 * rdlock_xport_hosts_known() - may this node's membership run
 *
 * Return: false while this node is learning its epoch, or learned it but
 * a peer told of a handover it has not taken (rdlock_xport_hand_over()),
 * or no node keeps its table of the epoch here: its names would have no
 * home. True when its cluster is down or it was declared down itself.
 */
bool rdlock_xport_hosts_known(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	bool known;

	spin_lock_bh(&cl->lock);
	if (!rdlock_cl_up() || cl->view == RDLOCK_VIEW_CUT_OFF)
		known = true;
	else
		known = cl->view == RDLOCK_VIEW_LEARNED &&
			cl->heard_era <= cl->era && rdlock_hosts();
	spin_unlock_bh(&cl->lock);
	return known;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_hosts_known, RDLOCK_INTERNAL);

/**
 * rdlock_xport_release() - a node's declaration down is done here
 * @node: a node cut off by rdlock_xport_fence().
 * @named: the table the other survivors of the declaration named, for a
 *	node whose table this node never knew (declared down before it
 *	connected here); NULL, or 0 and 0: none can be told.
 *
 * Its holds left this node's lock words, and every survivor moved its
 * locks of its names: a new table of it may return (it is knocked at,
 * if this node dials it), and keeps nothing of any lockspace. A node
 * whose table this node never knew takes the one @named: a table of
 * that incarnation is refused as the one declared down, any other may
 * return, and lockspaces are laid out with its size as elsewhere. With
 * none named, which of its tables is new cannot be told here: none
 * returns (rdlock_return_verdict()).
 *
 * Return: 0; -EINVAL when @node is not being declared down here.
 */
int rdlock_xport_release(u32 node, const struct rdlock_table_named *named)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_node *n;
	int ret = -EINVAL;

	if (node >= RDLOCK_MAX_NODES)
		return -EINVAL;
	n = &cl->nodes[node];
	spin_lock_bh(&cl->lock);
	if (rdlock_cl_up() && n->member == RDLOCK_MEMBER_FENCED &&
	    rdlock_member_to(n, RDLOCK_MEMBER_DOWN)) {
		ret = 0;
		if (!n->incarnation && named && named->incarnation) {
			WRITE_ONCE(n->incarnation, named->incarnation);
			n->table_slots = named->slots;
		}
		if (!n->incarnation && !named)
			n->table_disputed = true;
		WRITE_ONCE(cl->handover, cl->handover & ~BIT(node));
		/* Nodes taking a handover hear which keep tables now. */
		if (cl->era)
			queue_work(rdlock_wq, &cl->words_work);
		n->backoff_ms = 0;
		if (node > cl->self)
			rdlock_schedule_connect(n);
		rdlock_check_learned();
	}
	spin_unlock_bh(&cl->lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(rdlock_xport_release, RDLOCK_INTERNAL);

/*
 * Called with rdlock_cl.lock held: the nodes that keep their table of this
 * epoch here (CONFIGURED), this one included, by bit.
 */
static u32 rdlock_hosts(void)
{
	u32 hosts = 0, i;

	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (rdlock_cl.nodes[i].member == RDLOCK_MEMBER_CONFIGURED)
			hosts |= BIT(i);
	return hosts;
}

/*
 * Called with rdlock_cl.lock held: snapshot the nodes declared down here,
 * from @*from on, into @ds (at most RDLOCK_DOWNSET_ENTRIES).
 */
static void rdlock_downset_fill(struct rdlock_wire_downset *ds, u32 *from)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_wire_downset_entry *e;
	struct rdlock_node *node;
	u32 n = 0, i;

	memset(ds, 0, sizeof(*ds));
	ds->backend = cpu_to_le32(cl->backend);
	for (i = *from; i < RDLOCK_MAX_NODES && n < RDLOCK_DOWNSET_ENTRIES;
	     i++) {
		node = &cl->nodes[i];
		/* Declared and released here, or returned: not under way. */
		if (node->member != RDLOCK_MEMBER_DOWN &&
		    node->member != RDLOCK_MEMBER_RETURNED)
			continue;
		e = &ds->e[n++];
		e->node = cpu_to_le32(i);
		e->returned = cpu_to_le32(node->member ==
					  RDLOCK_MEMBER_RETURNED);
		if (i == cl->self) {
			e->incarnation = cpu_to_le64(cl->table.incarnation);
			e->table_slots = cpu_to_le32(cl->table.slots);
		} else {
			e->incarnation = cpu_to_le64(node->incarnation);
			e->table_slots = cpu_to_le32(node->table_slots);
		}
	}
	ds->nr = cpu_to_le32(n);
	ds->more = cpu_to_le32(i < RDLOCK_MAX_NODES);
	ds->era = cpu_to_le32(cl->era);
	ds->hosts = cpu_to_le32(rdlock_hosts());
	*from = i;
}

/*
 * Tell a peer just connected which nodes are declared down here (itself
 * maybe): a peer whose table is new is not ready before it heard it from
 * every live node (rdlock_check_learned()).
 */
static int rdlock_send_downset(struct rdlock_conn *conn)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_wire_downset ds;
	bool cut_off, formed;
	u32 from = 0;
	int ret;

	/* Formed or not, for the whole word: every message says the same. */
	spin_lock_bh(&cl->lock);
	formed = cl->formed;
	spin_unlock_bh(&cl->lock);
	do {
		spin_lock_bh(&cl->lock);
		/* Declared down itself: its word counts for nothing. */
		cut_off = cl->view == RDLOCK_VIEW_CUT_OFF;
		rdlock_downset_fill(&ds, &from);
		ds.formed = cpu_to_le32(formed);
		spin_unlock_bh(&cl->lock);
		if (cut_off)
			return 0;
		rdlock_fault_other_backend(conn->node, &ds);
		ret = rdlock_conn_send_downset(conn, &ds);
	} while (!ret && ds.more);
	return ret;
}

/*
 * Called with rdlock_cl.lock held, by a node that has not learned yet:
 * one entry of a peer's RDLOCK_WIRE_DOWNSET. The first word on a node
 * counts. Return: true when @n is now cut off here.
 */
static bool rdlock_downset_apply(u32 src,
				 const struct rdlock_wire_downset_entry *e)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 n = le32_to_cpu(e->node);
	u64 inc = le64_to_cpu(e->incarnation);
	bool returned = le32_to_cpu(e->returned);
	struct rdlock_node *node;

	if (n >= RDLOCK_MAX_NODES || !rdlock_node_member(&cl->nodes[n]))
		return false;
	node = &cl->nodes[n];
	if (node->member != RDLOCK_MEMBER_CONFIGURED)
		return false;
	if (n == cl->self) {
		/* This table returned there; an older one is not ours. */
		if (returned && inc == cl->table.incarnation) {
			rdlock_member_to(node, RDLOCK_MEMBER_RETURNED);
			pr_info("node %u says this node was declared down: it keeps no lockspace until a handover (recovery.rst)\n",
				src);
		}
		return false;
	}
	if (n == src && !returned)
		return false;
	if (!node->conn)
		node->table_slots = le32_to_cpu(e->table_slots);
	if (returned) {
		rdlock_member_to(node, RDLOCK_MEMBER_RETURNED);
		if (!node->incarnation)
			WRITE_ONCE(node->incarnation, inc);
		return false;
	}
	/* Nothing of it is here to release: declared and released. */
	rdlock_member_to(node, RDLOCK_MEMBER_DOWN);
	WRITE_ONCE(node->incarnation, inc);
	return true;
}

/*
 * Called with rdlock_cl.lock held: does a peer's DOWNSET hold this node's
 * table declared down (cut off, or a table of it returned that is not
 * this one)?
 */
static bool rdlock_downset_names_us_down(const struct rdlock_wire_downset *ds,
					 u32 nr)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 i;

	for (i = 0; i < nr; i++) {
		if (le32_to_cpu(ds->e[i].node) != cl->self)
			continue;
		if (!le32_to_cpu(ds->e[i].returned) ||
		    le64_to_cpu(ds->e[i].incarnation) != cl->table.incarnation)
			return true;
	}
	return false;
}

/**
 * rdlock_recv_downset() - a peer's RDLOCK_WIRE_DOWNSET
 * @conn: the connection it came on.
 * @ds: the message.
 *
 * A node that has not learned yet where the epoch stands takes what it
 * says: it was declared down itself (it returned), other nodes are cut off
 * or returned, the backend. Softirq context.
 */
void rdlock_recv_downset(struct rdlock_conn *conn,
			 const struct rdlock_wire_downset *ds)
{
	u32 nr = min_t(u32, le32_to_cpu(ds->nr), RDLOCK_DOWNSET_ENTRIES);
	struct rdlock_cluster *cl = &rdlock_cl;
	u32 backend = le32_to_cpu(ds->backend), cut = 0, i;

	if (conn->node == cl->self || conn->knock)
		return;
	spin_lock_bh(&cl->lock);
	/* Not from a node cut off here, nor to one cut off itself. */
	if (!rdlock_cl_up() || test_bit(RDLOCK_CONN_FAILED, &conn->flags) ||
	    rdlock_node_fenced(&cl->nodes[conn->node]) ||
	    cl->view == RDLOCK_VIEW_CUT_OFF) {
		spin_unlock_bh(&cl->lock);
		return;
	}
	/* The cluster runs one backend: no word of another counts. */
	if (cl->backend != RDLOCK_BACKEND_NONE &&
	    backend != RDLOCK_BACKEND_NONE && backend != cl->backend) {
		spin_unlock_bh(&cl->lock);
		atomic64_inc(&cl->backend_refused);
		pr_err_ratelimited("node %u runs atomic backend %s, this node %s: refused\n",
				   conn->node, rdlock_backend_name(backend),
				   rdlock_backend_name(cl->backend));
		rdlock_conn_fail(conn);
		return;
	}
	/* The latest handover a peer made: taken at the next change. */
	if (le32_to_cpu(ds->era) >= cl->heard_era) {
		cl->heard_era = le32_to_cpu(ds->era);
		cl->heard_hosts = le32_to_cpu(ds->hosts);
	}
	if (cl->view == RDLOCK_VIEW_LEARNED &&
	    rdlock_downset_names_us_down(ds, nr)) {
		spin_unlock_bh(&cl->lock);
		/* It declared this table down: as if it had said so. */
		rdlock_fenced_by(conn->node);
		return;
	}
	if (cl->view == RDLOCK_VIEW_LEARNING) {
		for (i = 0; i < nr; i++)
			if (rdlock_downset_apply(conn->node, &ds->e[i]))
				cut |= BIT(le32_to_cpu(ds->e[i].node));
		if (cl->backend == RDLOCK_BACKEND_NONE &&
		    backend != RDLOCK_BACKEND_NONE &&
		    backend <= RDLOCK_BACKEND_TWOSIDED) {
			cl->backend = backend;
			pr_info("cluster %u: atomic backend %s, as node %u has it\n",
				cl->cluster_id, rdlock_backend_name(backend),
				conn->node);
		}
	}
	/* A word counts whole: its last message says how it ends. */
	if (!le32_to_cpu(ds->more)) {
		cl->nodes[conn->node].downset_seen = true;
		if (le32_to_cpu(ds->formed))
			cl->nodes[conn->node].word_formed = true;
	}
	rdlock_try_resolve_backend();
	spin_unlock_bh(&cl->lock);
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		if (cut & BIT(i)) {
			pr_info("node %u says node %u was declared down\n",
				conn->node, i);
			rdlock_fail_node_conns(i);
		}
}

/* ------------------------------------------------------------------ */
/* Cluster up and down (rdlock_cl.cfg_mutex held)                     */

/*
 * Called with rdlock_cl.lock held, as the cluster goes up or down: a new
 * cluster epoch, so nodes declared down or returned are configured again,
 * and nobody has said yet which are declared down.
 */
static void rdlock_node_reset(struct rdlock_node *node)
{
	node->downset_seen = false;
	node->word_formed = false;
	node->table_disputed = false;
	node->learn_excused = false;
	if (rdlock_node_member(node) &&
	    node->member != RDLOCK_MEMBER_CONFIGURED)
		rdlock_member_to(node, RDLOCK_MEMBER_CONFIGURED);
}

/**
 * rdlock_cluster_up() - bring this node's cluster up
 * @forming: the cluster engine's membership forms this epoch
 *	(rdlock_xport_form()): not ready before it formed. Else it is
 *	formed at once, of every configured node.
 *
 * Return: 0 or a negative errno.
 */
int rdlock_cluster_up(bool forming)
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
		rdlock_node_reset(&cl->nodes[i]);
		cl->nodes[i].adv_known = false;
		cl->nodes[i].connects = 0;
		cl->nodes[i].backoff_ms = 0;
		cl->nodes[i].chal_issued = false;
		cl->nodes[i].chal_got = false;
	}
	cl->formed = !forming;
	cl->era = 0;
	cl->heard_era = 0;
	cl->heard_hosts = 0;
	cl->awaited = 0;
	WRITE_ONCE(cl->handover, 0);
	cl->up_at = jiffies;
	rdlock_cl_to(RDLOCK_CL_STARTING);
	rdlock_view_begin();
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
		rdlock_node_reset(&cl->nodes[i]);
	}
	WRITE_ONCE(cl->handover, 0);
	id = cl->listen_id;
	cl->listen_id = NULL;
	spin_unlock_bh(&cl->lock);

	/* No new connections: neither accepted nor initiated. */
	if (id)
		rdma_destroy_id(id);
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		cancel_delayed_work_sync(&cl->nodes[i].connect_work);
	flush_work(&cl->local_setup_work);
	flush_work(&cl->words_work);

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
	INIT_WORK(&cl->words_work, rdlock_words_work);
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
