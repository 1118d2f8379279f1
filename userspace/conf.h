/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rdlock configuration file (/etc/rdlock/rdlock.conf) read by
 * "rdlockctl up --config FILE", and the argument parsers rdlockctl shares
 * with it. Kept apart from the tool so that tests/conf_test.c can check
 * every accepted and refused file on the build host. The format is
 * described in Documentation/rdlock/admin-guide.rst.
 */
#ifndef _RDLOCK_CONF_H
#define _RDLOCK_CONF_H

#include <stdio.h>
#include <linux/rdlock.h>

/* ls-create defaults, for the command line and the file alike. */
#define LS_DEFAULT_SLOTS	1024
#define LS_DEFAULT_MODE		0666

#define RDLOCK_CONF_DEFAULT_PATH	"/etc/rdlock/rdlock.conf"
/* Where "option NAME VALUE" writes VALUE, as /sys/module/rdlock/parameters/NAME. */
#define RDLOCK_CONF_PARAM_DIR		"/sys/module/rdlock/parameters/"
/* Longest line, newline excluded; longest file. */
#define RDLOCK_CONF_LINE_MAX		1023
#define RDLOCK_CONF_FILE_MAX		(64 * 1024)
#define RDLOCK_CONF_MAX_OPTIONS		16
/* A cluster has room for 64 lockspaces. */
#define RDLOCK_CONF_MAX_LS		64
/* Module parameter names and values, NUL included. */
#define RDLOCK_CONF_OPT_NAME_MAX	32
#define RDLOCK_CONF_OPT_VALUE_MAX	64
/* Longest key file path, NUL included. */
#define RDLOCK_CONF_PATH_MAX		256
/* Room for any error message of rdlock_conf_parse(). */
#define RDLOCK_CONF_ERR_MAX		192

/* A node's name ("node ID ADDRESS NAME"): 1..63 of [A-Za-z0-9_.-], NUL. */
#define RDLOCK_CONF_NODE_NAME_MAX	64

struct rdlock_conf_node {
	__u32 id;
	struct rdlock_addr addr;
	char name[RDLOCK_CONF_NODE_NAME_MAX];	/* "": none given */
	unsigned int line;
};

/* "option NAME VALUE": VALUE goes to /sys/module/rdlock/parameters/NAME. */
struct rdlock_conf_option {
	char name[RDLOCK_CONF_OPT_NAME_MAX];
	char value[RDLOCK_CONF_OPT_VALUE_MAX];
	unsigned int line;
};

/*
 * "lockspace NAME [ATTRIBUTES]": @c as ls-create fills it, except that
 * @c.uid and @c.gid are only valid if @has_uid and @has_gid (otherwise
 * the caller's, as for ls-create).
 */
struct rdlock_conf_ls {
	struct rdlock_ls_create c;
	int has_uid;
	int has_gid;
	unsigned int line;
};

struct rdlock_conf {
	__u32 cluster_id;
	unsigned int cluster_line;
	char name[RDLOCK_CLUSTER_NAME_MAX];	/* NUL-padded; "": none */
	unsigned int name_line;
	int has_self;
	__u32 self;
	unsigned int self_line;
	char key_file[RDLOCK_CONF_PATH_MAX];	/* "": no cluster key */
	unsigned int key_file_line;
	unsigned int insecure_line;		/* 0: no insecure_no_key */
	unsigned int nr_nodes;
	struct rdlock_conf_node nodes[RDLOCK_MAX_NODES];
	unsigned int nr_options;
	struct rdlock_conf_option options[RDLOCK_CONF_MAX_OPTIONS];
	unsigned int nr_ls;
	struct rdlock_conf_ls ls[RDLOCK_CONF_MAX_LS];
};

/*
 * Parse the whole text of a configuration file into @conf. Stops at the
 * first error.
 *
 * Return: 0, or -EINVAL with a message in @err, "line N: ..." when one
 * line is at fault.
 */
int rdlock_conf_parse(const char *text, struct rdlock_conf *conf,
		      char *err, size_t errlen);

/*
 * This node's id: the "self" line, else the one node whose address (port
 * aside) is one of @local, this host's addresses.
 *
 * Return: 0, or -ENOENT (no node) or -EEXIST (several) with a message.
 */
int rdlock_conf_find_self(const struct rdlock_conf *conf,
			  const struct rdlock_addr *local, unsigned int nr_local,
			  __u32 *self, char *err, size_t errlen);

/*
 * What "up --config" does, as the equivalent shell commands: options,
 * config, up and, if there are lockspaces, wait --timeout @timeout and
 * ls-create.
 */
void rdlock_conf_print(const struct rdlock_conf *conf, __u32 self,
		       unsigned int timeout, FILE *f);

/* Arguments shared by rdlockctl's commands and the file. -EINVAL if bad. */
/* A 32-bit number, decimal, 0x hex or 0 octal as strtoul(), no sign. */
int rdlock_parse_u32(const char *s, __u32 *v);
/* 1 .. 31 of [A-Za-z0-9_.:-], NUL-padded into @out. */
int rdlock_parse_ls_name(const char *s, char out[RDLOCK_LS_NAME_MAX]);
/* "bakery", "caslock" or "cql". */
int rdlock_parse_proto(const char *s, __u32 *proto);
/* Octal permission bits, at most 0777. */
int rdlock_parse_mode(const char *s, __u32 *mode);
/*
 * A cluster name, 1 to RDLOCK_CLUSTER_NAME_MAX characters of
 * [A-Za-z0-9_.-], into @name (RDLOCK_CLUSTER_NAME_MAX bytes, NUL-padded,
 * as SET_CONFIG takes it).
 */
int rdlock_parse_cluster_name(const char *s, char *name);
/* A lockspace's slots: even, 2 .. RDLOCK_LS_SLOTS_MAX. */
int rdlock_parse_slots(const char *s, __u32 *slots);
/* CQL: RDLOCK_CQL_QUEUE_BITS_MIN .. _MAX. */
int rdlock_parse_queue_bits(const char *s, __u8 *bits);
/* CQL: RDLOCK_CQL_VERSION_BITS_MIN .. _MAX. */
int rdlock_parse_version_bits(const char *s, __u8 *bits);
/*
 * --hier's value into @flags: NULL or "task-fair" adds RDLOCK_LS_CQL_HIER,
 * "phase-fair" RDLOCK_LS_CQL_PHASE_FAIR too.
 */
int rdlock_parse_hier(const char *s, __u32 *flags);
/* Inverse of rdlock_parse_proto(). */
const char *rdlock_proto_name(__u32 proto);

#endif /* _RDLOCK_CONF_H */
