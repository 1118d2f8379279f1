// SPDX-License-Identifier: GPL-2.0
/*
 * rdlock transport: this node's lock table. Its allocation and fast
 * registrations for remote access (the verbs backend's target: the
 * loopback's, and one per peer connection), the ranges
 * an operation may read, and the two-sided backend's executor: CPU atomics
 * on the table, which the peers' requests (xport_io.c, xport_replay.c) and
 * this node's own reach.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/srcu.h>

#include "xport-pri.h"

/* ------------------------------------------------------------------ */
/* The lock table                                                     */

/*
 * The executor's users of the table's memory: rdlock_table_free() waits
 * for them. A peer's request can only come while its connection lives,
 * which the cluster's going down ends first; this node's own request
 * reaches the executor after it dropped its loopback connection.
 */
DEFINE_STATIC_SRCU(rdlock_table_srcu);

int rdlock_table_alloc(u32 slots)
{
	struct rdlock_table *t = &rdlock_cl.table;
	u64 *mem, inc;

	t->size = PAGE_ALIGN((size_t)slots * sizeof(u64));
	mem = alloc_pages_exact(t->size, GFP_KERNEL | __GFP_ZERO);
	if (!mem)
		return -ENOMEM;
	WRITE_ONCE(t->slots, slots);
	inc = get_random_u64();
	if (!inc || inc == RDLOCK_TABLE_NONE)
		inc = 1;
	WRITE_ONCE(t->incarnation, inc);
	/* Its size, incarnation and zeroes before the executor finds it. */
	smp_store_release(&t->mem, mem);
	rdlock_replay_forget();
	return 0;
}

void rdlock_table_free(void)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_table *t = &cl->table;

	if (t->mr) {
		ib_dereg_mr(t->mr);
		t->mr = NULL;
	}
	if (t->mapped) {
		ib_dma_unmap_sg(cl->dev->ibdev, &t->sg, 1, DMA_BIDIRECTIONAL);
		t->mapped = false;
	}
	t->registered = false;
	/* Own requests meant for this table end -ESTALE from now on. */
	WRITE_ONCE(t->incarnation, 0);
	if (t->mem) {
		u64 *mem = t->mem;

		WRITE_ONCE(t->mem, NULL);
		synchronize_srcu(&rdlock_table_srcu);
		free_pages_exact(mem, t->size);
	}
	WRITE_ONCE(t->slots, 0);
}

struct rdlock_sync_wr {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void rdlock_sync_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlock_sync_wr *w = container_of(wc->wr_cqe,
						struct rdlock_sync_wr, cqe);

	w->status = wc->status;
	complete(&w->done);
}

/*
 * The fast registration of @mr, mapped over the table: remote READ, WRITE
 * and ATOMIC access, unsignalled (@reg->wr.wr_cqe and send_flags are the
 * caller's).
 */
void rdlock_table_reg_wr(struct ib_mr *mr, struct ib_reg_wr *reg)
{
	reg->wr.opcode = IB_WR_REG_MR;
	reg->mr = mr;
	reg->key = mr->rkey;
	reg->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		      IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC;
}

/**
 * rdlock_table_grant_alloc() - a peer connection's own table registration
 * @conn: a peer's connection (rdlock_conn_trades_tables()), its PD made.
 *
 * Process context. The MR is allocated in @conn's PD and mapped over the
 * table; rdlock_conn_send_table() registers it on @conn's queue pair, in
 * front of the message that gives the peer its key, and release_work
 * deregisters it once the queue pair is gone.
 *
 * Return: 0, -EAGAIN before the table is mapped (the loopback's set-up),
 * or a negative errno.
 */
int rdlock_table_grant_alloc(struct rdlock_conn *conn)
{
	struct rdlock_table *t = &rdlock_cl.table;
	struct ib_mr *mr;
	int n;

	if (!t->mapped)
		return -EAGAIN;
	mr = ib_alloc_mr(conn->pd, IB_MR_TYPE_MEM_REG,
			 DIV_ROUND_UP(t->size, PAGE_SIZE));
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	conn->mr = mr;
	n = ib_map_mr_sg(mr, &t->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	return 0;
}

/**
 * rdlock_table_register() - register the lock table for remote access
 * @conn: the loopback connection, established; its QP carries the FRWR.
 *
 * Fast registration with remote READ/WRITE/ATOMIC access, as nvme-rdma and
 * rtrs do, rather than an all-memory DMA MR, in the device's PD: only the
 * loopback's queue pairs reach it. Waits for the completion; a connection
 * failure flushes it, so the wait ends.
 */
int rdlock_table_register(struct rdlock_conn *conn)
{
	struct rdlock_cluster *cl = &rdlock_cl;
	struct rdlock_table *t = &cl->table;
	struct ib_device *ibdev = conn->dev->ibdev;
	struct rdlock_sync_wr w = {};
	struct ib_reg_wr reg = {};
	int n, ret;

	if (t->registered)
		return 0;
	if (!t->mapped) {
		sg_init_one(&t->sg, t->mem, t->size);
		if (!ib_dma_map_sg(ibdev, &t->sg, 1, DMA_BIDIRECTIONAL))
			return -ENOMEM;
		t->mapped = true;
	}
	if (!t->mr) {
		t->mr = ib_alloc_mr(conn->dev->pd, IB_MR_TYPE_MEM_REG,
				    DIV_ROUND_UP(t->size, PAGE_SIZE));
		if (IS_ERR(t->mr)) {
			ret = PTR_ERR(t->mr);
			t->mr = NULL;
			return ret;
		}
	}
	n = ib_map_mr_sg(t->mr, &t->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey));

	init_completion(&w.done);
	w.cqe.done = rdlock_sync_wr_done;
	rdlock_table_reg_wr(t->mr, &reg);
	reg.wr.wr_cqe = &w.cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	ret = rdlock_conn_post_send(conn, &reg.wr);
	if (ret)
		return ret;
	wait_for_completion(&w.done);
	if (w.status != IB_WC_SUCCESS) {
		pr_err("lock table registration failed: %s\n",
		       ib_wc_status_msg(w.status));
		return -EIO;
	}

	t->registered = true;
	spin_lock_bh(&cl->lock);
	cl->nodes[cl->self].table_addr = t->mr->iova;
	cl->nodes[cl->self].rkey = t->mr->rkey;
	cl->nodes[cl->self].table_slots = t->slots;
	spin_unlock_bh(&cl->lock);
	return 0;
}

/*
 * An atomic and a READ after it, in one operation: FAA_READ, CAS_READ
 * ("X_READ" below).
 */
bool rdlock_xop_reads_after(enum rdlock_xop op)
{
	return op == RDLOCK_XOP_FAA_READ || op == RDLOCK_XOP_CAS_READ;
}

/* Slots an X_READ reads at most after its atomic. */
u32 rdlock_xop_read_after_max(enum rdlock_xop op)
{
	return op == RDLOCK_XOP_FAA_READ ? RDLOCK_XPORT_FAA_READ_MAX :
					   RDLOCK_XPORT_CAS_READ_MAX;
}

/*
 * Is [@first, @first + @count) a range one answer carries, @max words at
 * most, inside a table of @slots?
 */
bool rdlock_range_ok(u64 first, u32 count, u32 max, u32 slots)
{
	return count && count <= max && first < slots && count <= slots - first;
}

/* READ @count slots of @mem from @first on into @words (checked). */
static void rdlock_table_copy(const u64 *mem, u32 first, u32 count,
			      u64 *words)
{
	u32 i;

	for (i = 0; i < count; i++)
		words[i] = atomic64_read((const atomic64_t *)&mem[first + i]);
}

/**
 * rdlock_table_read() - READ slots of this node's table
 * @first: the first slot (the range checked by the caller).
 * @count: how many.
 * @words: receives them.
 *
 * Return: 0, or -ENOTCONN once the table is gone.
 */
int rdlock_table_read(u32 first, u32 count, u64 *words)
{
	const u64 *mem;
	int idx, ret = -ENOTCONN;

	idx = srcu_read_lock(&rdlock_table_srcu);
	/* Pairs with rdlock_table_alloc()'s release: its zeroes first. */
	mem = smp_load_acquire(&rdlock_cl.table.mem);
	if (mem) {
		rdlock_table_copy(mem, first, count, words);
		ret = 0;
	}
	srcu_read_unlock(&rdlock_table_srcu, idx);
	return ret;
}

/* The executor's operation on table @mem of @slots slots. */
static int rdlock_table_apply(u64 *mem, u32 slots, enum rdlock_xop op,
			      u32 slot, u64 arg0, u64 arg1, u32 rslot,
			      u32 count, u64 *words)
{
	atomic64_t *word;

	if (slot >= slots)
		return -EINVAL;
	word = (atomic64_t *)&mem[slot];
	switch (op) {
	case RDLOCK_XOP_READ:
		words[0] = atomic64_read(word);
		return 0;
	case RDLOCK_XOP_WRITE:
		atomic64_set(word, arg0);
		words[0] = 0;
		return 0;
	case RDLOCK_XOP_FAA:
		words[0] = atomic64_fetch_add(arg0, word);
		return 0;
	case RDLOCK_XOP_CAS:
		words[0] = atomic64_cmpxchg(word, arg0, arg1);
		return 0;
	case RDLOCK_XOP_READ_RANGE:
		if (!rdlock_range_ok(slot, count, RDLOCK_XPORT_RANGE_MAX,
				     slots))
			return -EINVAL;
		rdlock_table_copy(mem, slot, count, words);
		return 0;
	case RDLOCK_XOP_FAA_READ:
	case RDLOCK_XOP_CAS_READ:
		/* Checked before the atomic: refused means nothing done. */
		if (!rdlock_range_ok(rslot, count,
				     rdlock_xop_read_after_max(op), slots))
			return -EINVAL;
		words[0] = op == RDLOCK_XOP_FAA_READ ?
			   atomic64_fetch_add(arg0, word) :
			   atomic64_cmpxchg(word, arg0, arg1);
		rdlock_table_copy(mem, rslot, count, words + 1);
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * @incarnation: the table's the caller means, 0: the current one's (a
 * peer's request, whose connection lives no longer than that table).
 */
static int __rdlock_table_exec(enum rdlock_xop op, u32 slot, u64 arg0,
			       u64 arg1, u32 rslot, u32 count, u64 *words,
			       u64 incarnation, bool may_sleep)
{
	struct rdlock_table *t = &rdlock_cl.table;
	int idx, ret = -ENOTCONN;
	u64 *mem;

	idx = srcu_read_lock(&rdlock_table_srcu);
	/* Pairs with rdlock_table_alloc()'s release: size, incarnation. */
	mem = smp_load_acquire(&t->mem);
	if (mem && incarnation && READ_ONCE(t->incarnation) != incarnation) {
		ret = -ESTALE;
	} else if (mem) {
		if (may_sleep)
			rdlock_fault_own_exec_delay();
		ret = rdlock_table_apply(mem, READ_ONCE(t->slots), op, slot,
					 arg0, arg1, rslot, count, words);
	}
	srcu_read_unlock(&rdlock_table_srcu, idx);
	return ret;
}

/**
 * rdlock_table_exec() - the two-sided backend's executor
 * @op: the operation.
 * @slot: its slot.
 * @arg0: FAA: what is added; CAS: what is compared; WRITE: the value.
 * @arg1: CAS: what is swapped in.
 * @rslot: FAA_READ, CAS_READ: the first slot read, after the atomic as a
 *	verbs chain reads it.
 * @count: slots read.
 * @words: as an answer's: [0] a one-slot op's value and an X_READ's
 *	atomic's, then the slots read (a READ_RANGE's from [0] on).
 *
 * CPU atomics on this node's table, for a peer's request (any context).
 *
 * Return: 0, -EINVAL for a bad @op or slot, -ENOTCONN once the table is
 * gone.
 */
int rdlock_table_exec(enum rdlock_xop op, u32 slot, u64 arg0, u64 arg1,
		      u32 rslot, u32 count, u64 *words)
{
	return __rdlock_table_exec(op, slot, arg0, arg1, rslot, count, words,
				   0, false);
}

/**
 * rdlock_table_exec_own() - rdlock_table_exec() for this node's request
 * @op: as rdlock_table_exec()'s.
 * @slot: as rdlock_table_exec()'s.
 * @arg0: as rdlock_table_exec()'s.
 * @arg1: as rdlock_table_exec()'s.
 * @rslot: as rdlock_table_exec()'s.
 * @count: as rdlock_table_exec()'s.
 * @words: as rdlock_table_exec()'s.
 * @incarnation: the table's the request was meant for: that of the
 *	loopback connection the caller let go of (the table may have gone,
 *	and another come, since).
 * @may_sleep: the caller may sleep: a delay may be injected
 *	(inject_own_exec_delay_ms) between finding the table and using it,
 *	which the table's release waits for.
 *
 * Return: as rdlock_table_exec(), and -ESTALE when the table is not that
 * of @incarnation any more.
 */
int rdlock_table_exec_own(enum rdlock_xop op, u32 slot, u64 arg0, u64 arg1,
			  u32 rslot, u32 count, u64 *words, u64 incarnation,
			  bool may_sleep)
{
	return __rdlock_table_exec(op, slot, arg0, arg1, rslot, count, words,
				   incarnation ?: U64_MAX, may_sleep);
}
