/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlock lockspaces (layer 4): what the interface layer (dev.c, dlm.c) and
 * main.c use beyond the exported kernel API of include/rdlock/rdlock.h.
 * The structures stay opaque here, as in that API; their layout is the
 * lockspace layer's own (lockspace-pri.h), and so is the protocol below it.
 */
#ifndef _RDLOCK_LOCKSPACE_H
#define _RDLOCK_LOCKSPACE_H

#include <linux/ktime.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <rdlock/rdlock.h>

/*
 * Lockspaces an administrator created through /dev/rdlock, with an owner,
 * a group and permission bits (lockspace_dev.c): a creation holds one user
 * of the lockspace until it is removed, and each file that joined another.
 */
int rdlock_ls_create(const char *name, const struct rdlock_ls_attr *attr,
		     kuid_t uid, kgid_t gid, umode_t mode);
int rdlock_ls_remove(const char *name);
bool rdlock_ls_created(const char *name);
umode_t rdlock_ls_perm(kuid_t uid, kgid_t gid, umode_t mode);
struct rdlock_ls *rdlock_ls_join(const char *name, umode_t *perm);
void rdlock_ls_leave(struct rdlock_ls *ls);
bool rdlock_ls_any(void);

/**
 * struct rdlock_ls_desc - a lockspace of this node, for RDLOCK_IOC_LS_LIST
 * @name: its name.
 * @attr: its attributes.
 * @created: created through the uapi (rdlock_ls_create()), not removed.
 * @uid: the creation's owner (@created only).
 * @gid: the creation's group (@created only).
 * @mode: the creation's permission bits (@created only).
 * @users: its users: the creation, joined files, kernel opens.
 * @lost: lost to its users: the cluster epoch it joined ended, or a lock
 *	of this node in it could not be moved off a node declared down.
 */
/* A lockspace's counters on this node, by struct rdlock_ls_desc. */
enum rdlock_ls_counter {
	RDLOCK_LSC_ACQUISITIONS,	/* started by the protocol */
	RDLOCK_LSC_WAITS,		/* of them: waited for a holder */
	RDLOCK_LSC_REMOTE_OPS,		/* remote operations they took */
	RDLOCK_LSC_LEASE_EXPIRIES,	/* locks taken over at lease end */
	RDLOCK_LSC_ABANDONED,		/* tickets given up (timeout, kill) */
	RDLOCK_LSC_MOVED_LOCKS,		/* moved off nodes declared down */
	RDLOCK_LSC_LOST_LOCKS,		/* that could not be moved */
	RDLOCK_LSC_NR,
};

struct rdlock_ls_desc {
	char name[RDLOCK_LS_NAME_MAX];
	struct rdlock_ls_attr attr;
	bool created;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	unsigned int users;
	bool lost;
	/* Counters, for RDLOCK_IOC_STATS: enum rdlock_ls_counter. */
	u64 counters[RDLOCK_LSC_NR];
};

/*
 * Each lockspace on this node's list, one call of @fn each, under the
 * lockspace layer's mutex: @fn must not sleep on the lockspace layer nor
 * call into it. rdlock_ls_describe(): one lockspace its caller holds.
 */
void rdlock_ls_enumerate(void (*fn)(void *arg, const struct rdlock_ls_desc *d),
			 void *arg);
void rdlock_ls_describe(struct rdlock_ls *ls, struct rdlock_ls_desc *d);
/**
 * struct rdlock_locks_query - what RDLOCK_IOC_LOCKS asks and gathers
 * @match: only the locks of this name (@match_len bytes), or NULL: all.
 * @match_len: its length (0 with no @match).
 * @cluster: in a DLM lockspace, every node's (RDLOCK_LOCKS_QUERY_CLUSTER).
 * @out: zeroed array of @max entries, filled as far as it goes.
 * @max: its capacity (may be 0).
 * @count: out: the number of entries, which may exceed @max.
 * @asked: out: the other nodes asked, a bit each (@cluster).
 * @answered: out: of them, those whose whole answer came.
 */
struct rdlock_locks_query {
	const u8 *match;
	u32 match_len;
	bool cluster;
	struct rdlock_locks_entry *out;
	u32 max;
	u32 count;
	u32 asked;
	u32 answered;
};

int rdlock_ls_dump_locks(const char *name, bool created_only,
			 struct rdlock_locks_query *q);

/*
 * A lock of a /dev/rdlock file, taken in two steps (rdlock_lock_alloc(),
 * then rdlock_lock_acquire(); rdlock_lock_free() if that fails) so that
 * the file can refuse it before it waits, and owned by a process.
 */
struct rdlock_lock *rdlock_lock_alloc(struct rdlock_ls *ls, const void *name,
				      size_t len, enum rdlock_lock_mode mode,
				      const struct rdlock_lock_opts *opts);
int rdlock_lock_acquire(struct rdlock_lock *lk);
void rdlock_lock_free(struct rdlock_lock *lk);
void rdlock_lock_set_owner(struct rdlock_lock *lk, pid_t owner);

/* The bound on one /dev/rdlock user's abandoned tickets (lockspace_dev.c). */
struct rdlock_proto_quota;
struct seq_file;
struct rdlock_proto_quota *rdlock_user_quota_new(unsigned int max);
void rdlock_user_quota_set_max(struct rdlock_proto_quota *q, unsigned int max);
void rdlock_user_quota_put(struct rdlock_proto_quota *q);
bool rdlock_user_quota_busy(const struct rdlock_proto_quota *q);
void rdlock_lock_set_quota(struct rdlock_lock *lk,
			   struct rdlock_proto_quota *q);
void rdlock_quota_show(struct seq_file *m, const char *prefix,
		       struct rdlock_proto_quota *q);

/**
 * struct rdlock_lock_info - what a lock is, for RDLOCK_IOC_QUERY
 * @mode: rdlock_lock_mode().
 * @home: home node of its lock word.
 * @slot: the lock word's slot in @home's table.
 * @remote_ops: remote operations its acquisition took.
 * @since: when it was granted (or last changed state).
 * @name: its name, valid as long as the lock.
 * @name_len: bytes of @name.
 */
struct rdlock_lock_info {
	enum rdlock_lock_mode mode;
	u32 home;
	u32 slot;
	u32 remote_ops;
	ktime_t since;
	const u8 *name;
	u32 name_len;
};

void rdlock_lock_info(const struct rdlock_lock *lk,
		      struct rdlock_lock_info *info);

/*
 * Lockspace notices: small one-way messages from one node's user of a
 * lockspace to every node's (the DLM layer's blocking notices). Delivered
 * in softirq context (the transport's receive completion) or, for this
 * node's own, in the sender's context: the handler must not sleep.
 */
#define RDLOCK_LS_NOTICE_MAX	32
typedef void (*rdlock_ls_notice_t)(void *arg, u32 src, const void *payload,
				   size_t len);

/**
 * struct rdlock_ls_sink_ops - what a lockspace's user hears
 * @notice: every notice, this node's own included; softirq or the
 *	sender's context: must not sleep.
 * @up: NULL, or called each time the transport connects to another node
 *	of the lockspace (again, or for the first time): the notices sent
 *	to it meanwhile, or lost with its old connection, never arrive, so
 *	the receiver sends again what that node may have missed. Softirq or
 *	process context: must not sleep.
 * @down: NULL, or called once per node declared down
 *	(rdlock_ls_node_down()), before anything the node held in the
 *	lockspace is released; process context, may sleep, must not
 *	unregister.
 * @lost: NULL, or called once when the lockspace is lost (this node was
 *	declared down, a node came back with a new table, or this node's
 *	cluster went down: rdlock_xport_epoch() moved on). Every lock this
 *	node held in it is gone and may be granted elsewhere; its calls end
 *	-ESHUTDOWN. Also called once a lock of this node in it could not be
 *	moved off a node declared down (LOST, rdlock_ls_rehome()): that
 *	lock protects nothing, while the lockspace's calls go on. Process
 *	context, may sleep; must not register or
 *	unregister any receiver (the receivers' mutex is held); may come
 *	before rdlock_ls_notice_register() returns.
 */
struct rdlock_ls_sink_ops {
	rdlock_ls_notice_t notice;
	void (*up)(void *arg, u32 node);
	void (*down)(void *arg, u32 node);
	void (*lost)(void *arg);
};

int rdlock_ls_notice_register(struct rdlock_ls *ls,
			      const struct rdlock_ls_sink_ops *ops, void *arg);
void rdlock_ls_notice_unregister(struct rdlock_ls *ls);
int rdlock_ls_notice_send(struct rdlock_ls *ls, const void *payload,
			  size_t len);
unsigned long rdlock_ls_node_mask(const struct rdlock_ls *ls);
int rdlock_ls_notice_send_bulk(struct rdlock_ls *ls, u32 node,
			       const void *payload, size_t len);
int rdlock_ls_notice_send_to(struct rdlock_ls *ls, u32 node,
			     const void *payload, size_t len);

/* A node failed: cut it off, tell the users, release what it held. */
int rdlock_ls_node_down(u32 node);

/*
 * Membership from the cluster engine (lockspace_member.c): joined as the
 * cluster comes up, left as it goes down; may this node grant now.
 */
int rdlock_member_up(void);
bool rdlock_member_forms(void);
void rdlock_member_started(void);
void rdlock_member_down(void);
bool rdlock_member_granting(void);
u32 rdlock_member_status(u32 *members);

/* Where a name's entry is; forget the unused names of a home. */
u32 rdlock_ls_home(const struct rdlock_ls *ls, const void *name, size_t len);
void rdlock_ls_trim(struct rdlock_ls *ls, u32 home);

/* main.c: up after the protocols, down before them. */
struct dentry;
int rdlock_ls_init(void);
void rdlock_ls_exit(void);
/* lockspace_debugfs.c: lockspaces/ in the module's debugfs @root. */
void rdlock_ls_debugfs_init(struct dentry *root);

#endif /* _RDLOCK_LOCKSPACE_H */
