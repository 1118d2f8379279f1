/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock DLM API: fs/dlm's semantics (dlm_lock()/dlm_unlock()) on rdlock,
 * for cluster file systems. Documentation/rdlock/dlm-api.rst has the whole
 * contract; in short:
 *
 * - rdlock_dlm_lock() and rdlock_dlm_unlock() only validate and queue: the
 *   outcome arrives through the caller's AST, which may run before the call
 *   returns. ASTs and BASTs of one lock are delivered one at a time, in
 *   order, from a WQ_MEM_RECLAIM workqueue (process context, may sleep;
 *   never softirq).
 * - Before an AST, rdlock writes sb_status (and sb_flags, the LVB) into the
 *   caller's lksb. After the unlock AST (sb_status RDLOCK_DLM_EUNLOCK), or
 *   the AST of a cancelled new request, it never touches the lksb again.
 * - Modes NL, PR, EX; the numbers are fs/dlm's (DLM_LOCK_*).
 */
#ifndef _RDLOCK_DLM_H
#define _RDLOCK_DLM_H

#include <linux/types.h>

struct rdlock_dlm_ls;

/* Lock modes, numbered as fs/dlm's DLM_LOCK_*: CR, CW and PW are not offered. */
#define RDLOCK_DLM_LOCK_IV	(-1)	/* no mode: a new lock not granted */
#define RDLOCK_DLM_LOCK_NL	0
#define RDLOCK_DLM_LOCK_CR	1	/* refused: -EOPNOTSUPP */
#define RDLOCK_DLM_LOCK_CW	2	/* refused: -EOPNOTSUPP */
#define RDLOCK_DLM_LOCK_PR	3
#define RDLOCK_DLM_LOCK_PW	4	/* refused: -EOPNOTSUPP */
#define RDLOCK_DLM_LOCK_EX	5

/* rdlock_dlm_lock() flags, the same bits as fs/dlm's DLM_LKF_*. */
#define RDLOCK_DLM_LKF_NOQUEUE	0x00000001	/* fail with -EAGAIN, no wait */
#define RDLOCK_DLM_LKF_CANCEL	0x00000002	/* rdlock_dlm_unlock() only */
#define RDLOCK_DLM_LKF_CONVERT	0x00000004	/* sb_lkid's lock, new mode */
#define RDLOCK_DLM_LKF_VALBLK	0x00000008	/* read / write the LVB */
/*
 * A new lock of a resource no other node can know of yet (a new inode's):
 * granted at once, its lock words taken later, before any of this node's
 * EX holds is given back; never if it is unlocked first. OCFS2
 * stackglue's DLM_LKF_LOCAL bit.
 */
#define RDLOCK_DLM_LKF_LOCAL	0x00100000

/* sb_status of the AST of an unlock and of a cancel (fs/dlm's values). */
#define RDLOCK_DLM_EUNLOCK	0x10002
#define RDLOCK_DLM_ECANCEL	0x10001

/* sb_flags: the LVB copied out may be stale (fs/dlm's DLM_SBF_VALNOTVALID). */
#define RDLOCK_DLM_SBF_VALNOTVALID	0x02

#define RDLOCK_DLM_LVB_LEN	64
/* Longest lockspace name ([A-Za-z0-9_.:-]; OCFS2's are 32: its uuid). */
#define RDLOCK_DLM_LS_NAME_MAX	64
/* Longest resource name (fs/dlm: 64; OCFS2 uses at most 32). */
#define RDLOCK_DLM_RESNAME_MAX	63

/**
 * struct rdlock_dlm_lksb - the caller's lock status block
 * @sb_status: the outcome, written before each AST: 0 granted,
 *	-EAGAIN (NOQUEUE found it busy), RDLOCK_DLM_ECANCEL, RDLOCK_DLM_EUNLOCK,
 *	or a negative errno of the lock service.
 * @sb_lkid: the lock's id, set by rdlock_dlm_lock() before it returns;
 *	pass it back for CONVERT and to rdlock_dlm_unlock().
 * @sb_flags: RDLOCK_DLM_SBF_*, written before each AST.
 * @sb_lvbptr: NULL, or RDLOCK_DLM_LVB_LEN bytes of the caller's for the
 *	value block (needed with RDLOCK_DLM_LKF_VALBLK).
 */
struct rdlock_dlm_lksb {
	int sb_status;
	u32 sb_lkid;
	u8 sb_flags;
	char *sb_lvbptr;
};

/**
 * struct rdlock_dlm_ops - lockspace callbacks
 * @node_down: a node was declared down, on every survivor (by the cluster
 *	engine with the module parameter membership=dlm, once dlm_controld
 *	fenced it; by RDLOCK_IOC_NODE_DOWN, "rdlockctl node-down", with
 *	membership=static). Called in process context (may sleep), once per
 *	dead node and lockspace, once the node is cut off (it can take or
 *	keep nothing more), and before any lock it held is granted to
 *	another node: requests that wait for its locks are granted only
 *	after every survivor's callback returned, so a file system can mark
 *	the node for recovery first. Must not close the lockspace.
 * @lost: NULL, or the lockspace was lost: this node was declared down by
 *	the others (they may grant its locks now), a node came back with a
 *	new lock table, or this node's cluster went down. Every lock of the
 *	lockspace is gone here; requests end with -ESHUTDOWN. Called once,
 *	in process context (may sleep), possibly before rdlock_dlm_open()
 *	returned; must not open or close any lockspace, and should not wait
 *	long (other lockspaces' lost and node_down calls wait for it). A
 *	file system must stop writing what those locks guarded: OCFS2's
 *	plug-in restarts the node, as o2cb does when it loses quorum.
 */
struct rdlock_dlm_ops {
	void (*node_down)(void *arg, u32 node);
	void (*lost)(void *arg);
};

/*
 * struct rdlock_dlm_lock_status.waiting: MAIN is a request waiting for its
 * mode; at EX it holds the gate then (a PR->EX one is committed: a cancel
 * comes too late).
 */
#define RDLOCK_DLM_WAIT_NONE	0	/* no request waits for other holders */
#define RDLOCK_DLM_WAIT_GATE	1	/* an EX request waits for the gate */
#define RDLOCK_DLM_WAIT_MAIN	2	/* a request waits for the main name */

/**
 * struct rdlock_dlm_lock_status - what a lock is doing, at one instant
 * @grmode: the granted mode, RDLOCK_DLM_LOCK_IV before the first grant.
 * @rqmode: the mode of the request in progress; RDLOCK_DLM_LOCK_IV when
 *	there is none or it is an unlock.
 * @waiting: RDLOCK_DLM_WAIT_*.
 * @hold_ms: the lock's hold time now (rdlock_dlm_set_hold()).
 */
struct rdlock_dlm_lock_status {
	int grmode;
	int rqmode;
	int waiting;
	unsigned int hold_ms;
};

typedef void (*rdlock_dlm_ast_t)(void *astarg);
typedef void (*rdlock_dlm_bast_t)(void *astarg, int mode);

struct rdlock_dlm_ls *rdlock_dlm_open(const char *name, u32 node_id,
				      const struct rdlock_dlm_ops *ops,
				      void *ops_arg);
int rdlock_dlm_close(struct rdlock_dlm_ls *dls);
/* rdlock_dlm_set_hold(): the longest minimum hold time. */
#define RDLOCK_DLM_HOLD_MAX_MS	1000
int rdlock_dlm_set_hold(struct rdlock_dlm_ls *dls, unsigned int ms,
			unsigned int max_ms);
int rdlock_dlm_lock(struct rdlock_dlm_ls *dls, int mode,
		    struct rdlock_dlm_lksb *lksb, u32 flags, const void *name,
		    unsigned int namelen, rdlock_dlm_ast_t ast, void *astarg,
		    rdlock_dlm_bast_t bast);
int rdlock_dlm_unlock(struct rdlock_dlm_ls *dls, u32 lkid, u32 flags,
		      struct rdlock_dlm_lksb *lksb, void *astarg);
int rdlock_dlm_lock_status(struct rdlock_dlm_ls *dls, u32 lkid,
			   struct rdlock_dlm_lock_status *st);
u32 rdlock_dlm_node_id(void);
/* rdlock_dlm_check_cluster()'s names: at most this many characters. */
#define RDLOCK_DLM_CLUSTER_NAME_MAX	16
int rdlock_dlm_check_cluster(const char *cluster);

#endif /* _RDLOCK_DLM_H */
