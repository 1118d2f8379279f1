// SPDX-License-Identifier: GPL-2.0
/*
 * rdlockctl - configure and inspect the rdlock cluster through /dev/rdlock.
 *
 * Every subcommand is one entry of cmds[]. Exit status: 0 success, 1
 * failure, 2 usage error or a configuration file that cannot be read or
 * is invalid; "lock" exits with its command's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlock.h>

#include "addr.h"
#include "conf.h"
#include "key.h"

#define DEFAULT_DEVICE		"/dev/rdlock"
#define WAIT_POLL_MS		50
#define WAIT_DEFAULT_SEC	60
#define EXIT_USAGE		2
#define EXIT_CANNOT_EXEC	126	/* as the shell and flock(1) */
#define EXIT_NOT_FOUND		127
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

static const char *device = DEFAULT_DEVICE;
static const char *prog = "rdlockctl";

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *help;
};

static void usage(FILE *f);

static void err_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The symbolic name of the errnos the rdlock ioctls return. */
static const char *errno_name(int e)
{
	static char buf[16];

	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case ENOSPC: return "ENOSPC";
	case EBADFD: return "EBADFD";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EADDRINUSE: return "EADDRINUSE";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case ENOTCONN: return "ENOTCONN";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EALREADY: return "EALREADY";
	case ENOKEY: return "ENOKEY";
	case ECONNRESET: return "ECONNRESET";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static int open_dev(void)
{
	int fd = open(device, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		err_msg("cannot open %s: %s%s", device, strerror(errno),
			errno == ENOENT ? " (is rdlock.ko loaded?)" : "");
		return -1;
	}
	return fd;
}

/* Run one ioctl on a fresh fd and explain a failure; 0 or 1 for exit. */
static const char no_key_hint[] =
	" (no cluster key: 'config --key-file FILE' first; 'keygen' makes one)";

/* The loaded rdlock.ko's version into @buf; 0, or -1 when not loaded. */
static int module_version(char *buf, size_t len)
{
	FILE *f = fopen("/sys/module/rdlock/version", "r");
	int ret = -1;

	if (!f)
		return -1;
	if (fgets(buf, len, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		ret = 0;
	}
	fclose(f);
	return ret;
}

/*
 * After an EINVAL: a loaded rdlock.ko older than this tool may refuse a
 * field it does not know (a package upgrade installs a new module, but
 * the old one stays loaded until it is reloaded).
 */
static void module_version_hint(void)
{
	char buf[64];

	if (!module_version(buf, sizeof(buf)) && strcmp(buf, RDLOCK_VERSION))
		fprintf(stderr,
			"%s: the loaded rdlock.ko is %s, this rdlockctl %s: reload the module (down, rmmod rdlock, modprobe rdlock)\n",
			prog, buf, RDLOCK_VERSION);
}

static int do_ioctl(unsigned long req, void *arg, const char *what)
{
	int fd = open_dev();
	int ret;

	if (fd < 0)
		return 1;
	ret = ioctl(fd, req, arg);
	if (ret < 0) {
		int e = errno;

		err_msg("%s: %s (%s)%s", what, strerror(e), errno_name(e),
			e == EPERM ? " (needs CAP_SYS_ADMIN)" :
			e == ENXIO ? " (no configuration: run 'config' first)" :
			e == ENOKEY ? no_key_hint :
			e != EBUSY ? "" :
			req == RDLOCK_IOC_DOWN ?
			" (this node still has lockspaces)" :
			" (cluster is up: run 'down' first)");
		if (e == EINVAL)
			module_version_hint();
	}
	close(fd);
	return ret < 0 ? 1 : 0;
}

static int add_peer(__u32 id, const struct rdlock_addr *addr)
{
	struct rdlock_peer p;
	char what[64];

	memset(&p, 0, sizeof(p));
	p.version = RDLOCK_UAPI_VERSION;
	p.node_id = id;
	p.addr = *addr;
	snprintf(what, sizeof(what), "add peer %u", id);
	return do_ioctl(RDLOCK_IOC_ADD_PEER, &p, what);
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s -h'.\n", prog);
	return EXIT_USAGE;
}

static const char no_key_line[] =
	"no 'key_file PATH': the cluster needs a key ('rdlockctl keygen' makes one; "
	"'insecure_no_key' for tests only)";

/* Said whenever a configuration without a cluster key is applied. */
static void insecure_warning(void)
{
	fprintf(stderr,
		"%s: insecure: no cluster key: any host on the RDMA network that takes a node's\n"
		"address can connect as that node and write the lock tables (tests only)\n",
		prog);
}

/* Set the cluster key from a key file (key.h); the key is wiped after. */
static int set_key(const char *path)
{
	struct rdlock_cluster_key k;
	char err[RDLOCK_KEY_ERR_MAX];
	int ret;

	if (rdlock_key_read(path, &k, err, sizeof(err))) {
		err_msg("%s", err);
		return 1;
	}
	ret = do_ioctl(RDLOCK_IOC_SET_KEY, &k, "set cluster key");
	explicit_bzero(&k, sizeof(k));
	return ret;
}

static int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ "node", required_argument, NULL, 'n' },
		{ "addr", required_argument, NULL, 'a' },
		{ "peer", required_argument, NULL, 'p' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "insecure-no-key", no_argument, NULL, 'I' },
		{ "name", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key_file = NULL;
	struct rdlock_cluster_config cfg;
	struct rdlock_addr peers[RDLOCK_MAX_NODES];
	__u32 peer_ids[RDLOCK_MAX_NODES];
	int nr_peers = 0, have_cluster = 0, have_node = 0, have_addr = 0;
	int opt, i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.version = RDLOCK_UAPI_VERSION;
	while ((opt = getopt_long(argc, argv, "c:n:a:p:k:", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (rdlock_parse_u32(optarg, &cfg.cluster_id) || !cfg.cluster_id)
				return bad_usage("bad cluster id '%s' (non-zero 32-bit number)",
						 optarg);
			have_cluster = 1;
			break;
		case 'n':
			if (rdlock_parse_node_id(optarg, &cfg.node_id))
				return bad_usage("bad node id '%s' (0..31)", optarg);
			have_node = 1;
			break;
		case 'a':
			if (rdlock_parse_addr(optarg, &cfg.addr))
				return bad_usage("bad address '%s' (see -h)", optarg);
			have_addr = 1;
			break;
		case 'p':
			if (nr_peers == RDLOCK_MAX_NODES)
				return bad_usage("too many peers at '%s'", optarg);
			if (rdlock_parse_peer(optarg, &peer_ids[nr_peers],
					      &peers[nr_peers]))
				return bad_usage("bad peer '%s' (ID=ADDRESS)", optarg);
			nr_peers++;
			break;
		case 'k':
			key_file = optarg;
			break;
		case 'I':
			cfg.flags |= RDLOCK_CONFIG_INSECURE_NO_KEY;
			break;
		case 'N':
			if (rdlock_parse_cluster_name(optarg, cfg.name))
				return bad_usage("bad cluster name '%s' (see -h)",
						 optarg);
			break;
		default:
			return bad_usage("%s: bad option", "config");
		}
	}
	if (optind != argc)
		return bad_usage("config: unexpected argument '%s'", argv[optind]);
	if (!have_cluster || !have_node || !have_addr)
		return bad_usage("%s: --cluster, --node and --addr are required",
				 "config");
	if (key_file && (cfg.flags & RDLOCK_CONFIG_INSECURE_NO_KEY))
		return bad_usage("%s: --key-file FILE or --insecure-no-key, not both",
				 "config");
	if (cfg.flags & RDLOCK_CONFIG_INSECURE_NO_KEY)
		insecure_warning();
	else if (!key_file)
		fprintf(stderr,
			"%s: no cluster key: up will be refused; --key-file FILE ('keygen' makes one)\n",
			prog);

	if (do_ioctl(RDLOCK_IOC_SET_CONFIG, &cfg, "set config"))
		return 1;
	for (i = 0; i < nr_peers; i++)
		if (add_peer(peer_ids[i], &peers[i]))
			return 1;
	if (key_file && set_key(key_file))
		return 1;
	return 0;
}

/* keygen [--force] [FILE]: a new cluster key, to copy to every node. */
static int cmd_keygen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = RDLOCK_KEY_DEFAULT_PATH;
	char err[RDLOCK_KEY_ERR_MAX];
	int opt, force = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt != 'f')
			return bad_usage("%s: bad option", "keygen");
		force = 1;
	}
	if (argc - optind > 1)
		return bad_usage("keygen: unexpected argument '%s'",
				 argv[optind + 1]);
	if (optind < argc)
		path = argv[optind];
	/* The default's directory, as a package would make it. */
	if (optind == argc && mkdir("/etc/rdlock", 0755) && errno != EEXIST) {
		err_msg("/etc/rdlock: %s", strerror(errno));
		return 1;
	}
	if (rdlock_key_write(path, force, err, sizeof(err))) {
		err_msg("keygen: %s", err);
		return 1;
	}
	printf("wrote a %d-byte cluster key to %s (mode 0600): copy it to every node\n",
	       RDLOCK_KEY_GEN_LEN, path);
	return 0;
}

static int cmd_add_peer(int argc, char **argv)
{
	struct rdlock_addr addr;
	__u32 id;

	if (argc != 3)
		return bad_usage("%s: needs ID and ADDRESS", "add-peer");
	if (rdlock_parse_node_id(argv[1], &id))
		return bad_usage("bad node id '%s' (0..31)", argv[1]);
	if (rdlock_parse_addr(argv[2], &addr))
		return bad_usage("bad address '%s'", argv[2]);
	return add_peer(id, &addr);
}

static int cmd_del_peer(int argc, char **argv)
{
	struct rdlock_peer p;
	char what[64];

	memset(&p, 0, sizeof(p));
	p.version = RDLOCK_UAPI_VERSION;
	if (argc != 2)
		return bad_usage("%s: needs ID", "del-peer");
	if (rdlock_parse_node_id(argv[1], &p.node_id))
		return bad_usage("bad node id '%s' (0..31)", argv[1]);
	snprintf(what, sizeof(what), "delete peer %u", p.node_id);
	return do_ioctl(RDLOCK_IOC_DEL_PEER, &p, what);
}

/* node-down ID: on every survivor, for a node that is dead or fenced. */
static int cmd_node_down(int argc, char **argv)
{
	struct rdlock_node_down nd;
	char what[64];

	memset(&nd, 0, sizeof(nd));
	nd.version = RDLOCK_UAPI_VERSION;
	if (argc != 2)
		return bad_usage("%s: needs ID", "node-down");
	if (rdlock_parse_node_id(argv[1], &nd.node_id))
		return bad_usage("bad node id '%s' (0..31)", argv[1]);
	snprintf(what, sizeof(what), "node-down %u", nd.node_id);
	return do_ioctl(RDLOCK_IOC_NODE_DOWN, &nd, what);
}

static int up_config(const char *path, __u32 timeout, int dry_run);
static int unconfigured(void);
static int wait_quorate(double deadline);
static double now_sec(void);

/*
 * up: connect. up --config FILE: configure from FILE, then connect (see
 * up_config()). Plain "up" on a node that was never configured reads
 * RDLOCK_CONF_DEFAULT_PATH if it exists; otherwise, and on a configured
 * node, it only connects, as it always did.
 */
static int cmd_up(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	__u32 timeout = WAIT_DEFAULT_SEC;
	int opt, dry_run = 0, have_timeout = 0;
	const char *path = NULL;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 't':
			if (rdlock_parse_u32(optarg, &timeout))
				return bad_usage("bad timeout '%s' (seconds)", optarg);
			have_timeout = 1;
			break;
		case 'n':
			dry_run = 1;
			break;
		default:
			return bad_usage("%s: bad option", "up");
		}
	}
	if (optind != argc)
		return bad_usage("up: unexpected argument '%s'", argv[optind]);
	if (!path && (have_timeout || dry_run))
		return bad_usage("%s: --timeout and --dry-run need --config FILE",
				 "up");
	if (path)
		return up_config(path, timeout, dry_run);
	if (unconfigured() && access(RDLOCK_CONF_DEFAULT_PATH, F_OK) == 0)
		return up_config(RDLOCK_CONF_DEFAULT_PATH, timeout, 0);
	if (wait_quorate(now_sec() + timeout))
		return 1;
	return do_ioctl(RDLOCK_IOC_UP, NULL, "up");
}

static int down_config(const char *path);

/* down: disconnect. down --config FILE: see down_config(). */
static int cmd_down(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int opt;

	if (argc == 1)
		return do_ioctl(RDLOCK_IOC_DOWN, NULL, "down");
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt != 'c')
			return bad_usage("%s: bad option", "down");
		path = optarg;
	}
	if (optind != argc)
		return bad_usage("down: unexpected argument '%s'", argv[optind]);
	return down_config(path);
}

static const char *cluster_state_name(__u32 s)
{
	switch (s) {
	case RDLOCK_CLUSTER_UNCONFIGURED:
		return "unconfigured";
	case RDLOCK_CLUSTER_DOWN:
		return "down";
	case RDLOCK_CLUSTER_CONNECTING:
		return "connecting";
	case RDLOCK_CLUSTER_READY:
		return "ready";
	}
	return "unknown";
}

static const char *backend_name(__u32 b)
{
	switch (b) {
	case RDLOCK_BACKEND_NONE:
		return "none";
	case RDLOCK_BACKEND_VERBS:
		return "verbs";
	case RDLOCK_BACKEND_TWOSIDED:
		return "twosided";
	}
	return "unknown";
}

static const char *node_state_name(__u32 s)
{
	switch (s) {
	case RDLOCK_NODE_DISCONNECTED:
		return "disconnected";
	case RDLOCK_NODE_CONNECTING:
		return "connecting";
	case RDLOCK_NODE_READY:
		return "ready";
	}
	return "unknown";
}

/* struct rdlock_node_status.errors of a module without them. */
#define ERRORS_UNKNOWN	(~0ULL)

/*
 * STATUS into *st, nodes[] and, unless NULL, @name (RDLOCK_CLUSTER_NAME_MAX
 * + 1 bytes: the cluster's name, NUL-terminated, "" for none); prints the
 * error. 0 or -1.
 */
static int get_status_name(int fd, struct rdlock_status *st,
			   struct rdlock_node_status *nodes, char *name)
{
	int ret, i;

	memset(st, 0, sizeof(*st));
	memset(nodes, 0, sizeof(*nodes) * RDLOCK_MAX_NODES);
	st->version = RDLOCK_UAPI_VERSION;
	st->nr_nodes = RDLOCK_MAX_NODES;
	st->nodes = (__u64)(unsigned long)nodes;
	if (name) {
		memset(name, 0, RDLOCK_CLUSTER_NAME_MAX + 1);
		st->name = (__u64)(unsigned long)name;
	}
	ret = ioctl(fd, RDLOCK_IOC_STATUS, st);
	/*
	 * A module older than this tool has no name to give, nor the links'
	 * errors: ~0, unknown.
	 */
	if (ret < 0 && errno == EINVAL && name) {
		st->name = 0;
		ret = ioctl(fd, RDLOCK_IOC_STATUS, st);
		for (i = 0; !ret && i < RDLOCK_MAX_NODES; i++)
			nodes[i].errors = ERRORS_UNKNOWN;
	}
	if (ret < 0) {
		err_msg("status: %s", strerror(errno));
		return -1;
	}
	if (st->nr_nodes > RDLOCK_MAX_NODES)
		st->nr_nodes = RDLOCK_MAX_NODES;
	return 0;
}

static int get_status(int fd, struct rdlock_status *st,
		      struct rdlock_node_status *nodes)
{
	return get_status_name(fd, st, nodes, NULL);
}

/* STATUS once, through a device file of its own; 0, or 1 after the error. */
static int read_status(struct rdlock_status *st,
		       struct rdlock_node_status *nodes)
{
	int fd = open_dev(), ret;

	if (fd < 0)
		return 1;
	ret = get_status(fd, st, nodes);
	close(fd);
	return ret ? 1 : 0;
}

static void flags_str(__u32 flags, char *buf, size_t len)
{
	static const struct {
		__u32 flag;
		const char *name;
	} names[] = {
		{ RDLOCK_NODE_SELF, "self" },
		{ RDLOCK_NODE_VERBS_ATOMICS, "verbs-atomics" },
		{ RDLOCK_NODE_FENCED, "down" },
		{ RDLOCK_NODE_RETURNED, "returned" },
		{ RDLOCK_NODE_MEMBER, "member" },
	};
	size_t i, off = 0;

	buf[0] = 0;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (flags & names[i].flag && off < len)
			off += snprintf(buf + off, len - off, "%s%s",
					off ? "," : "", names[i].name);
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* The membership's state as status prints it. */
static const char *membership_name(__u32 m)
{
	static const char *const names[] = {
		[RDLOCK_MEMBERSHIP_STATIC] = "static",
		[RDLOCK_MEMBERSHIP_OUT] = "out",
		[RDLOCK_MEMBERSHIP_JOINING] = "joining",
		[RDLOCK_MEMBERSHIP_STOPPED] = "stopped",
		[RDLOCK_MEMBERSHIP_RECOVERING] = "recovering",
		[RDLOCK_MEMBERSHIP_RUNNING] = "running",
	};

	return m < ARRAY_SIZE(names) ? names[m] : "unknown";
}

/* The cluster key's state as status prints it. */
static const char *key_state(const struct rdlock_status *st)
{
	if (st->flags & RDLOCK_STATUS_KEYED)
		return "set";
	return st->flags & RDLOCK_STATUS_INSECURE_NO_KEY ? "none (insecure)" : "none";
}

/* This node's lockspaces, and how many of them are lost (rdlockctl ls). */
struct ls_counts {
	int known;		/* 0: the list could not be read */
	__u32 total;
	__u32 lost;
};

static struct rdlock_ls_info *get_ls_list(int fd, __u32 *count);

static void count_ls(int fd, struct ls_counts *c)
{
	struct rdlock_ls_info *e;
	__u32 i, n = 0;

	memset(c, 0, sizeof(*c));
	e = get_ls_list(fd, &n);
	if (!e)
		return;
	c->known = 1;
	c->total = n;
	for (i = 0; i < n; i++)
		if (e[i].state == RDLOCK_LS_STATE_LOST)
			c->lost++;
	free(e);
}

/*
 * What status shows beside STATUS: this node's lockspaces, the cluster's
 * name, and the nodes' names from the configuration file (when it is of
 * the same cluster).
 */
struct status_extra {
	struct ls_counts ls;
	char name[RDLOCK_CLUSTER_NAME_MAX + 1];
	const struct rdlock_conf *conf;		/* NULL: no names */
};

/* Node @id's name in the configuration file, or NULL. */
static const char *node_name(const struct status_extra *x, __u32 id)
{
	unsigned int i;

	if (!x->conf)
		return NULL;
	for (i = 0; i < x->conf->nr_nodes; i++)
		if (x->conf->nodes[i].id == id && x->conf->nodes[i].name[0])
			return x->conf->nodes[i].name;
	return NULL;
}

static void print_status_text(const struct rdlock_status *st,
			      const struct rdlock_node_status *nodes,
			      const struct status_extra *x)
{
	char flags[48], errors[24];
	const char *name;
	__u32 i;

	printf("state: %s\n", cluster_state_name(st->state));
	if (st->state == RDLOCK_CLUSTER_UNCONFIGURED)
		return;
	printf("cluster: %u\ncluster name: %s\n", st->cluster_id,
	       x->name[0] ? x->name : "(none)");
	printf("node: %u\nbackend: %s\ncluster key: %s\nmembership: %s\n",
	       st->node_id, backend_name(st->backend),
	       key_state(st), membership_name(st->membership));
	if (x->ls.known)
		printf("lockspaces: %u, %u lost\n", x->ls.total, x->ls.lost);
	printf("%-5s %-13s %-20s %-8s %-8s %s\n", "ID", "STATE", "FLAGS",
	       "CONNECTS", "ERRORS", "NAME");
	for (i = 0; i < st->nr_nodes; i++) {
		flags_str(nodes[i].flags, flags, sizeof(flags));
		name = node_name(x, nodes[i].node_id);
		snprintf(errors, sizeof(errors), "%llu",
			 (unsigned long long)nodes[i].errors);
		printf("%-5u %-13s %-20s %-8u %-8s %s\n", nodes[i].node_id,
		       node_state_name(nodes[i].state), flags,
		       nodes[i].connects,
		       nodes[i].errors == ERRORS_UNKNOWN ? "-" : errors,
		       name ? name : "-");
	}
}

static void json_str(const char *s, size_t max);

static void print_status_json(const struct rdlock_status *st,
			      const struct rdlock_node_status *nodes,
			      const struct status_extra *x)
{
	const struct ls_counts *ls = &x->ls;
	const char *name;
	__u32 i;

	printf("{\"state\": \"%s\", \"backend\": \"%s\", ",
	       cluster_state_name(st->state), backend_name(st->backend));
	printf("\"cluster_id\": %u, \"node_id\": %u, \"cluster_key\": \"%s\", ",
	       st->cluster_id, st->node_id, key_state(st));
	printf("\"cluster_name\": ");
	if (x->name[0])
		json_str(x->name, sizeof(x->name));
	else
		printf("null");
	printf(", \"membership\": \"%s\", ", membership_name(st->membership));
	if (ls->known)
		printf("\"lockspaces\": %u, \"lockspaces_lost\": %u, ",
		       ls->total, ls->lost);
	printf("\"nodes\": [");
	for (i = 0; i < st->nr_nodes; i++) {
		printf("%s{\"id\": %u, \"state\": \"%s\", \"flags\": %u, ",
		       i ? ", " : "", nodes[i].node_id,
		       node_state_name(nodes[i].state), nodes[i].flags);
		printf("\"self\": %s, \"verbs_atomics\": %s, \"down\": %s, ",
		       nodes[i].flags & RDLOCK_NODE_SELF ? "true" : "false",
		       nodes[i].flags & RDLOCK_NODE_VERBS_ATOMICS ?
		       "true" : "false",
		       nodes[i].flags & RDLOCK_NODE_FENCED ? "true" : "false");
		printf("\"returned\": %s, \"member\": %s, \"connects\": %u, ",
		       nodes[i].flags & RDLOCK_NODE_RETURNED ? "true" : "false",
		       nodes[i].flags & RDLOCK_NODE_MEMBER ? "true" : "false",
		       nodes[i].connects);
		if (nodes[i].errors == ERRORS_UNKNOWN)
			printf("\"errors\": null, \"name\": ");
		else
			printf("\"errors\": %llu, \"name\": ",
			       (unsigned long long)nodes[i].errors);
		name = node_name(x, nodes[i].node_id);
		if (name)
			json_str(name, RDLOCK_CONF_NODE_NAME_MAX);
		else
			printf("null");
		printf("}");
	}
	printf("]}\n");
}

/*
 * The options of @cmd, whose only one is --json (-j), and no argument:
 * 0 and *@json set or not, or a usage error's exit status.
 */
static int json_option(int argc, char **argv, const char *cmd, int *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	char fmt[64];
	int opt;

	*json = 0;
	while ((opt = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (opt != 'j')
			return bad_usage("%s: bad option", cmd);
		*json = 1;
	}
	if (optind == argc)
		return 0;
	snprintf(fmt, sizeof(fmt), "%s: unexpected argument '%%s'", cmd);
	return bad_usage(fmt, argv[optind]);
}

static char *read_conf(const char *path);

/*
 * The file's text parsed into *conf; 0, or EXIT_USAGE after the error
 * (said unless @quiet).
 */
static int load_conf_quiet(const char *path, struct rdlock_conf *conf,
			   bool quiet)
{
	char err[RDLOCK_CONF_ERR_MAX];
	char *text;
	int ret;

	text = read_conf(path);
	if (!text) {
		if (!quiet)
			err_msg("%s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	ret = rdlock_conf_parse(text, conf, err, sizeof(err));
	free(text);
	if (ret) {
		if (!quiet)
			err_msg("%s: %s", path, err);
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * The configuration file status takes node names from: @path, or the
 * default one if it can be read and parsed (silently skipped otherwise).
 * 0, or EXIT_USAGE after the error of @path.
 */
static int status_conf(const char *path, struct rdlock_conf *conf,
		       const struct rdlock_conf **out)
{
	int ret;

	ret = load_conf_quiet(path ? path : RDLOCK_CONF_DEFAULT_PATH, conf,
			      !path);
	*out = ret ? NULL : conf;
	return path ? ret : 0;
}

static int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "config", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	static struct rdlock_conf conf;
	const char *path = NULL;
	struct status_extra x;
	struct rdlock_status st;
	int json = 0, fd, ret, opt;

	while ((opt = getopt_long(argc, argv, "jc:", opts, NULL)) != -1) {
		if (opt == 'j')
			json = 1;
		else if (opt == 'c')
			path = optarg;
		else
			return bad_usage("status: bad option", NULL);
	}
	if (optind < argc)
		return bad_usage("status: unexpected argument '%s'",
				 argv[optind]);
	memset(&x, 0, sizeof(x));
	ret = status_conf(path, &conf, &x.conf);
	if (ret)
		return ret;
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = get_status_name(fd, &st, nodes, x.name);
	if (!ret)
		count_ls(fd, &x.ls);
	close(fd);
	if (ret)
		return 1;
	/* Names of another cluster's file would be wrong. */
	if (x.conf && x.conf->cluster_id != st.cluster_id)
		x.conf = NULL;
	if (json)
		print_status_json(&st, nodes, &x);
	else
		print_status_text(&st, nodes, &x);
	return 0;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait at most @timeout s until the cluster is ready; 0 or 1 for exit. */
static int wait_ready(__u32 timeout)
{
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_status st;
	double deadline;
	int fd;
	__u32 i;

	fd = open_dev();
	if (fd < 0)
		return 1;
	deadline = now_sec() + timeout;
	for (;;) {
		if (get_status(fd, &st, nodes)) {
			close(fd);
			return 1;
		}
		if (st.state == RDLOCK_CLUSTER_READY) {
			close(fd);
			return 0;
		}
		if (now_sec() >= deadline)
			break;
		usleep(WAIT_POLL_MS * 1000);
	}
	close(fd);
	err_msg("timed out after %u s waiting for the cluster to be ready; state %s",
		timeout, cluster_state_name(st.state));
	for (i = 0; i < st.nr_nodes; i++)
		if (nodes[i].state != RDLOCK_NODE_READY)
			err_msg("  node %u: %s", nodes[i].node_id,
				node_state_name(nodes[i].state));
	return 1;
}

/* corosync-quorumtool -s: 0 quorate, 2 not quorate, others no verdict. */
#define QUORUMTOOL		"corosync-quorumtool"
#define QUORUMTOOL_NOT_QUORATE	2
/* How often a wait for quorum asks corosync-quorumtool. */
#define QUORUM_POLL_MS		1000
/* quorumtool_status(): the tool did not answer before the deadline. */
#define QUORUMTOOL_TIMEOUT	(-2)

/*
 * corosync-quorumtool -s's exit status; -1 if it could not be run or did
 * not exit; QUORUMTOOL_TIMEOUT if it had not exited at @deadline (a
 * corosync that does not answer): it is killed then.
 */
static int quorumtool_status(double deadline)
{
	int status, fd;
	pid_t pid, got;

	/* An inherited SIG_IGN would reap the child before waitpid(). */
	signal(SIGCHLD, SIG_DFL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execlp(QUORUMTOOL, QUORUMTOOL, "-s", (char *)NULL);
		_exit(127);
	}
	for (;;) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == pid)
			break;
		if (got < 0 && errno != EINTR)
			return -1;
		if (now_sec() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return QUORUMTOOL_TIMEOUT;
		}
		usleep(WAIT_POLL_MS * 1000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * With membership=dlm, RDLOCK_IOC_UP joins fs/dlm's companion lockspace,
 * and dlm_controld joins its group at once, with quorum or without. A node
 * that joins while corosync still has it in a membership of its own (a
 * booting node: corosync forms a ring of its own, then merges it with the
 * others') goes through a change that no other member goes through, and
 * dlm_controld on every member then waits for ever for starts that match.
 * So wait, until @deadline (now_sec()), for corosync to say this node is
 * quorate: a quorate membership is the one the others are in.
 *
 * Return: 0 to go on (membership=static; quorate; or no verdict: corosync
 * not running or not installed, which UP then reports); 1 at the deadline
 * or when the device cannot be read.
 */
static int wait_quorate(double deadline)
{
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_status st;
	bool said = false;
	int rc;

	if (read_status(&st, nodes))
		return 1;
	if (st.membership != RDLOCK_MEMBERSHIP_OUT)
		return 0;
	for (;;) {
		rc = quorumtool_status(deadline);
		if (rc != QUORUMTOOL_NOT_QUORATE && rc != QUORUMTOOL_TIMEOUT)
			return 0;
		if (rc == QUORUMTOOL_TIMEOUT || now_sec() >= deadline) {
			err_msg("timed out waiting for corosync's quorum%s: not up",
				rc == QUORUMTOOL_TIMEOUT ?
				" (" QUORUMTOOL " did not answer)" : "");
			return 1;
		}
		if (!said)
			err_msg("membership=dlm: waiting for corosync's quorum");
		said = true;
		usleep(QUORUM_POLL_MS * 1000);
	}
}

static int cmd_wait(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	__u32 timeout = WAIT_DEFAULT_SEC;
	int opt;

	while ((opt = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		if (opt != 't' || rdlock_parse_u32(optarg, &timeout))
			return bad_usage("%s: bad option or timeout", "wait");
	}
	if (optind != argc)
		return bad_usage("wait: unexpected argument '%s'", argv[optind]);
	return wait_ready(timeout);
}

/* ------------------------------------------------------------------ */
/* Lockspaces and locks                                               */

/* Why lockspace or lock ioctl @req failed with @e, as a hint after it. */
static const char *ls_hint(unsigned long req, int e)
{
	/* Only a lockspace that finds no room is logged (with its cause). */
	if (req == RDLOCK_IOC_LS_CREATE && e == ENOSPC)
		return " (no room for it in the cluster: see dmesg)";
	if (req == RDLOCK_IOC_LOCK && e == EBUSY)
		return " (given-up or killed requests of this user still finishing: retry later)";
	switch (e) {
	case EPERM:
		return " (needs CAP_SYS_ADMIN)";
	case ENOTCONN:
		return " (the cluster is not up and ready: see 'status')";
	case EEXIST:
		return " (exists here, or in the cluster with other attributes: see dmesg)";
	case ENOSPC:
		return " (no room: 64 lockspaces per cluster, lock-table slots, or names per node)";
	case ENOENT:
		return " (no such lockspace on this node: run 'ls-create' first)";
	case EBUSY:
		return " (in use: a file has joined it)";
	case EACCES:
		return " (the lockspace's uid, gid and mode do not allow it)";
	case EOPNOTSUPP:
		return " (the lockspace was not created with --update)";
	}
	return "";
}

/* One lockspace or lock ioctl; prints the failure. 0 or the errno. */
static int ls_ioctl(int fd, unsigned long req, void *arg, const char *what,
		    const char *name)
{
	int e;

	if (ioctl(fd, req, arg) == 0)
		return 0;
	e = errno;
	err_msg("%s %s: %s (%s)%s", what, name, strerror(e), errno_name(e),
		ls_hint(req, e));
	return e;
}

static int cmd_ls_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "proto", required_argument, NULL, 'p' },
		{ "lease-ms", required_argument, NULL, 'l' },
		{ "omega-us", required_argument, NULL, 'o' },
		{ "slots", required_argument, NULL, 's' },
		{ "update", no_argument, NULL, 'U' },
		{ "queue-bits", required_argument, NULL, 'Q' },
		{ "version-bits", required_argument, NULL, 'V' },
		{ "hier", optional_argument, NULL, 'H' },
		{ "uid", required_argument, NULL, 'u' },
		{ "gid", required_argument, NULL, 'g' },
		{ "mode", required_argument, NULL, 'm' },
		{ "dlm", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdlock_ls_create c;
	bool dlm = false, attrs = false;
	int opt, fd, ret;

	memset(&c, 0, sizeof(c));
	c.version = RDLOCK_UAPI_VERSION;
	c.proto = RDLOCK_PROTO_BAKERY;
	c.slots = LS_DEFAULT_SLOTS;
	c.uid = getuid();
	c.gid = getgid();
	c.mode = LS_DEFAULT_MODE;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		/* The protocol and geometry options: not with --dlm. */
		if (strchr("pQVHlosU", opt))
			attrs = true;
		switch (opt) {
		case 'D':
			dlm = true;
			break;
		case 'p':
			if (rdlock_parse_proto(optarg, &c.proto))
				return bad_usage("bad protocol '%s' (bakery, caslock or cql)",
						 optarg);
			break;
		case 'Q':
			if (rdlock_parse_queue_bits(optarg, &c.queue_bits))
				return bad_usage("bad queue bits '%s' (1..12)",
						 optarg);
			break;
		case 'V':
			if (rdlock_parse_version_bits(optarg, &c.version_bits))
				return bad_usage("bad version bits '%s' (2..16)",
						 optarg);
			break;
		case 'H':
			if (rdlock_parse_hier(optarg, &c.flags))
				return bad_usage("bad fairness '%s' (task-fair or phase-fair)",
						 optarg);
			break;
		case 'l':
			if (rdlock_parse_u32(optarg, &c.lease_ms))
				return bad_usage("bad lease '%s' (milliseconds)", optarg);
			break;
		case 'o':
			if (rdlock_parse_u32(optarg, &c.omega_us))
				return bad_usage("bad omega '%s' (microseconds)", optarg);
			break;
		case 's':
			if (rdlock_parse_slots(optarg, &c.slots))
				return bad_usage("bad slot count '%s' (even, 2..65536)",
						 optarg);
			break;
		case 'U':
			c.flags |= RDLOCK_LS_UPDATE;
			break;
		case 'u':
			if (rdlock_parse_u32(optarg, &c.uid))
				return bad_usage("bad uid '%s' (a number)", optarg);
			break;
		case 'g':
			if (rdlock_parse_u32(optarg, &c.gid))
				return bad_usage("bad gid '%s' (a number)", optarg);
			break;
		case 'm':
			if (rdlock_parse_mode(optarg, &c.mode))
				return bad_usage("bad mode '%s' (octal, at most 0777)",
						 optarg);
			break;
		default:
			return bad_usage("%s: bad option", "ls-create");
		}
	}
	if (optind + 1 != argc)
		return bad_usage("%s: needs exactly one NAME", "ls-create");
	if (dlm && attrs)
		return bad_usage("%s: --dlm takes no protocol, lease, omega, slot or update option",
				 "ls-create");
	if (dlm) {
		/* The DLM layer fixes them. */
		c.flags = RDLOCK_LS_DLM;
		c.proto = 0;
		c.slots = 0;
	}
	if (rdlock_parse_ls_name(argv[optind], c.name))
		return bad_usage("bad lockspace name '%s' (1..31 of A-Z a-z 0-9 _ . : -)",
				 argv[optind]);
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = ls_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c, "create lockspace",
		       argv[optind]);
	close(fd);
	return ret ? 1 : 0;
}

static int cmd_ls_remove(int argc, char **argv)
{
	struct rdlock_ls_name n;
	int fd, ret;

	if (argc != 2)
		return bad_usage("%s: needs NAME", "ls-remove");
	memset(&n, 0, sizeof(n));
	n.version = RDLOCK_UAPI_VERSION;
	if (rdlock_parse_ls_name(argv[1], n.name))
		return bad_usage("bad lockspace name '%s' (1..31 of A-Z a-z 0-9 _ . : -)",
				 argv[1]);
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = ls_ioctl(fd, RDLOCK_IOC_LS_REMOVE, &n, "remove lockspace", argv[1]);
	close(fd);
	return ret ? 1 : 0;
}

static const char *ls_kind_name(__u32 k)
{
	switch (k) {
	case RDLOCK_LS_KIND_PLAIN: return "plain";
	case RDLOCK_LS_KIND_DLM: return "dlm";
	case RDLOCK_LS_KIND_KERNEL: return "kernel";
	}
	return "unknown";
}

static const char *ls_state_name(__u32 s)
{
	switch (s) {
	case RDLOCK_LS_STATE_OPEN: return "open";
	case RDLOCK_LS_STATE_LOST: return "lost";
	}
	return "unknown";
}

static int ls_info_cmp(const void *a, const void *b)
{
	const struct rdlock_ls_info *x = a, *y = b;

	return strncmp(x->name, y->name, RDLOCK_LS_NAME_MAX);
}

/*
 * A list ioctl (LS_LIST, STATS, LOCKS) into an array of @size-byte entries
 * that grows until it holds them all, or @max of them: @arg is the ioctl's
 * argument, set up but for its capacity *@count and its array *@entries,
 * which point into it. The array (free() it) with *@count entries, and in
 * *@total how many the node has; or NULL with errno set.
 */
static void *list_ioctl(int fd, unsigned long cmd, void *arg, __u32 *count,
			__u64 *entries, size_t size, __u32 max, __u32 *total)
{
	void *e = NULL, *ne;
	__u32 cap = 64;
	int err;

	for (;;) {
		ne = realloc(e, (size_t)cap * size);
		if (!ne) {
			free(e);
			errno = ENOMEM;
			return NULL;
		}
		e = ne;
		*count = cap;
		*entries = (__u64)(unsigned long)e;
		if (ioctl(fd, cmd, arg) < 0) {
			err = errno;
			free(e);
			errno = err;
			return NULL;
		}
		*total = *count;
		/* Grown since (more came): read them all again. */
		if (*count <= cap || cap == max)
			break;
		cap = *count < max ? *count : max;
	}
	*count = *total < cap ? *total : cap;
	return e;
}

/*
 * LS_LIST into a growing array until it holds them all; prints the
 * failure. The entries, sorted by name (free() them), or NULL.
 */
static struct rdlock_ls_info *get_ls_list(int fd, __u32 *count)
{
	struct rdlock_ls_list l = { .version = RDLOCK_UAPI_VERSION };
	struct rdlock_ls_info *e;
	__u32 total;

	e = list_ioctl(fd, RDLOCK_IOC_LS_LIST, &l, &l.count, &l.entries,
		       sizeof(*e), RDLOCK_LS_LIST_MAX, &total);
	if (!e) {
		err_msg("ls: %s (%s)", strerror(errno), errno_name(errno));
		return NULL;
	}
	*count = l.count;
	qsort(e, *count, sizeof(*e), ls_info_cmp);
	return e;
}

/* The @len bytes at @s, NULs included, as a JSON string. */
static void json_mem(const char *s, size_t len)
{
	size_t i;

	putchar('"');
	for (i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\')
			printf("\\%c", s[i]);
		else if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			printf("\\u%04x", (unsigned char)s[i]);
		else
			putchar(s[i]);
	}
	putchar('"');
}

/* @s (at most @max bytes, up to a NUL) as a JSON string. */
static void json_str(const char *s, size_t max)
{
	json_mem(s, strnlen(s, max));
}

/*
 * The DLM lockspace names of @e (@n entries, by name; a module older than
 * RDLOCK_LS_LIST_DLM_NAMES gives none) into @names, each empty when not a
 * DLM lockspace or not known; one more LS_LIST call, so that a lockspace
 * gone or come since is matched by its kind and rdlock lockspace (a
 * name may be listed twice: a kernel user's "dlm.foo" and a uapi DLM
 * lockspace named so).
 */
static void get_dlm_names(int fd, const struct rdlock_ls_info *e, __u32 n,
			  char (*names)[RDLOCK_LS_DLM_NAME_LEN])
{
	struct rdlock_ls_list l = {
		.version = RDLOCK_UAPI_VERSION,
		.flags = RDLOCK_LS_LIST_DLM_NAMES,
	};
	char (*got)[RDLOCK_LS_DLM_NAME_LEN];
	struct rdlock_ls_info *e2;
	__u32 cap = n + 16 < RDLOCK_LS_LIST_MAX ? n + 16 : RDLOCK_LS_LIST_MAX;
	__u32 i, j;

	memset(names, 0, (size_t)n * sizeof(*names));
	e2 = calloc(cap, sizeof(*e2));
	got = calloc(cap, sizeof(*got));
	l.count = cap;
	l.entries = (__u64)(unsigned long)e2;
	l.dlm_names = (__u64)(unsigned long)got;
	if (e2 && got && !ioctl(fd, RDLOCK_IOC_LS_LIST, &l)) {
		for (i = 0; i < n; i++)
			for (j = 0; j < l.count && j < cap; j++)
				if (e[i].kind == e2[j].kind &&
				    !strncmp(e[i].core_name, e2[j].core_name,
					     RDLOCK_LS_NAME_MAX)) {
					memcpy(names[i], got[j], sizeof(*got));
					names[i][RDLOCK_LS_DLM_NAME_LEN - 1] = 0;
					break;
				}
	}
	free(got);
	free(e2);
}

/*
 * NAME KIND PROTO SLOTS MODE/UID/GID USERS STATE CORE DLM: DLM the DLM
 * lockspace's name (an OCFS2 file system's UUID for its dlmh. one), "-"
 * when there is none.
 */
static void print_ls_text(const struct rdlock_ls_info *e,
			  char (*names)[RDLOCK_LS_DLM_NAME_LEN], __u32 n)
{
	char owner[40];
	__u32 i;

	printf("%-31s %-6s %-7s %6s %-16s %5s %-5s %-31s %s\n", "NAME", "KIND",
	       "PROTO", "SLOTS", "MODE/UID/GID", "USERS", "STATE", "CORE",
	       "DLM");
	for (i = 0; i < n; i++) {
		if (e[i].kind == RDLOCK_LS_KIND_KERNEL)
			snprintf(owner, sizeof(owner), "-");
		else
			snprintf(owner, sizeof(owner), "%04o/%u/%u", e[i].mode,
				 e[i].uid, e[i].gid);
		printf("%-31.32s %-6s %-7s %6u %-16s %5u %-5s %-31.32s %s\n",
		       e[i].name, ls_kind_name(e[i].kind),
		       rdlock_proto_name(e[i].proto), e[i].slots, owner, e[i].users,
		       ls_state_name(e[i].state), e[i].core_name,
		       names[i][0] ? names[i] : "-");
	}
}

static void print_ls_json(const struct rdlock_ls_info *e,
			  char (*names)[RDLOCK_LS_DLM_NAME_LEN], __u32 n)
{
	__u32 i;

	printf("{\"lockspaces\": [");
	for (i = 0; i < n; i++) {
		printf("%s{\"name\": ", i ? ", " : "");
		json_str(e[i].name, sizeof(e[i].name));
		printf(", \"core_name\": ");
		json_str(e[i].core_name, sizeof(e[i].core_name));
		if (names[i][0]) {
			printf(", \"dlm_name\": ");
			json_str(names[i], RDLOCK_LS_DLM_NAME_LEN);
		}
		printf(", \"kind\": \"%s\", \"state\": \"%s\", ",
		       ls_kind_name(e[i].kind), ls_state_name(e[i].state));
		printf("\"proto\": \"%s\", \"flags\": %u, \"slots\": %u, ",
		       rdlock_proto_name(e[i].proto), e[i].flags, e[i].slots);
		printf("\"mode\": \"%04o\", \"uid\": %u, \"gid\": %u, \"users\": %u}",
		       e[i].mode, e[i].uid, e[i].gid, e[i].users);
	}
	printf("]}\n");
}

static int cmd_ls(int argc, char **argv)
{
	char (*names)[RDLOCK_LS_DLM_NAME_LEN];
	struct rdlock_ls_info *e;
	int json, fd, ret;
	__u32 n = 0;

	ret = json_option(argc, argv, "ls", &json);
	if (ret)
		return ret;
	fd = open_dev();
	if (fd < 0)
		return 1;
	e = get_ls_list(fd, &n);
	/* n + 1: no lockspace is no allocation failure. */
	names = e ? calloc(n + 1, sizeof(*names)) : NULL;
	if (names)
		get_dlm_names(fd, e, n, names);
	close(fd);
	if (!e || !names) {
		if (e)
			err_msg("ls: %s", strerror(ENOMEM));
		free(e);
		return 1;
	}
	if (json)
		print_ls_json(e, names, n);
	else
		print_ls_text(e, names, n);
	free(names);
	free(e);
	return 0;
}

/* STATS: every counter, or NULL after the error; the count in *@count. */
static struct rdlock_stat *get_stats(int fd, __u32 *count)
{
	struct rdlock_stats st = { .version = RDLOCK_UAPI_VERSION };
	struct rdlock_stat *e;
	__u32 total;

	e = list_ioctl(fd, RDLOCK_IOC_STATS, &st, &st.count, &st.entries,
		       sizeof(*e), RDLOCK_STATS_MAX, &total);
	if (!e) {
		err_msg("stats: %s (%s)", strerror(errno), errno_name(errno));
		return NULL;
	}
	*count = st.count;
	return e;
}

/* Text: NAME WHERE VALUE, WHERE "-", "node=ID" or "lockspace=NAME". */
static void print_stats_text(const struct rdlock_stat *e, __u32 n)
{
	char where[16 + RDLOCK_LS_NAME_MAX];
	__u32 i;

	for (i = 0; i < n; i++) {
		if (e[i].lockspace[0])
			snprintf(where, sizeof(where), "lockspace=%.*s",
				 RDLOCK_LS_NAME_MAX, e[i].lockspace);
		else if (e[i].node != RDLOCK_STAT_NO_NODE)
			snprintf(where, sizeof(where), "node=%u", e[i].node);
		else
			snprintf(where, sizeof(where), "-");
		printf("%-.*s %s %llu\n", RDLOCK_STAT_NAME_MAX, e[i].name,
		       where, (unsigned long long)e[i].value);
	}
}

static void print_stats_json(const struct rdlock_stat *e, __u32 n)
{
	__u32 i;

	printf("[");
	for (i = 0; i < n; i++) {
		printf("%s{\"name\": ", i ? ", " : "");
		json_str(e[i].name, sizeof(e[i].name));
		if (e[i].lockspace[0]) {
			printf(", \"lockspace\": ");
			json_str(e[i].lockspace, sizeof(e[i].lockspace));
		}
		if (e[i].node != RDLOCK_STAT_NO_NODE)
			printf(", \"node\": %u", e[i].node);
		printf(", \"type\": \"%s\", \"value\": %llu}",
		       e[i].flags & RDLOCK_STAT_GAUGE ? "gauge" : "counter",
		       (unsigned long long)e[i].value);
	}
	printf("]\n");
}

/*
 * Prometheus' text format: rdlock_NAME (a counter's with _total), the
 * node as label "peer", the lockspace as "lockspace"; each metric's
 * samples together after its TYPE line, as the format requires.
 */
static void print_stats_prometheus(const struct rdlock_stat *e, __u32 n)
{
	__u32 i, j, k;
	bool gauge;

	for (i = 0; i < n; i++) {
		for (k = 0; k < i; k++)
			if (!strncmp(e[k].name, e[i].name, RDLOCK_STAT_NAME_MAX))
				break;
		if (k < i)
			continue;	/* its family is out already */
		gauge = e[i].flags & RDLOCK_STAT_GAUGE;
		printf("# TYPE rdlock_%.*s%s %s\n", RDLOCK_STAT_NAME_MAX,
		       e[i].name, gauge ? "" : "_total",
		       gauge ? "gauge" : "counter");
		for (j = i; j < n; j++) {
			if (strncmp(e[j].name, e[i].name, RDLOCK_STAT_NAME_MAX))
				continue;
			printf("rdlock_%.*s%s", RDLOCK_STAT_NAME_MAX, e[j].name,
			       gauge ? "" : "_total");
			/* Lockspace names need no escaping: [A-Za-z0-9_.:-]. */
			if (e[j].lockspace[0])
				printf("{lockspace=\"%.*s\"}", RDLOCK_LS_NAME_MAX,
				       e[j].lockspace);
			else if (e[j].node != RDLOCK_STAT_NO_NODE)
				printf("{peer=\"%u\"}", e[j].node);
			printf(" %llu\n", (unsigned long long)e[j].value);
		}
	}
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int format = 0, fd, opt;
	struct rdlock_stat *e;
	__u32 n = 0;

	while ((opt = getopt_long(argc, argv, "jp", opts, NULL)) != -1) {
		if (opt != 'j' && opt != 'p')
			return bad_usage("stats: bad option", NULL);
		if (format && format != opt)
			return bad_usage("stats: --json and --prometheus exclude each other",
					 NULL);
		format = opt;
	}
	if (optind < argc)
		return bad_usage("stats: unexpected argument '%s'",
				 argv[optind]);
	fd = open_dev();
	if (fd < 0)
		return 1;
	e = get_stats(fd, &n);
	close(fd);
	if (!e)
		return 1;
	if (format == 'j')
		print_stats_json(e, n);
	else if (format == 'p')
		print_stats_prometheus(e, n);
	else
		print_stats_text(e, n);
	free(e);
	return 0;
}

/*
 * LOCKS of @ls (of lock @name, when not NULL; every node's unless @local):
 * every entry (at most RDLOCK_LOCKS_MAX, which it says), or NULL after the
 * error; the count in *@count. Says which nodes asked did not answer. A
 * module older than the tool refuses the query's fields (EINVAL): this
 * node's view then, filtered here, and said so.
 */
static struct rdlock_locks_entry *get_locks(int fd, const char *ls,
					    const char *name, int local,
					    __u32 *count)
{
	struct rdlock_locks l = { .version = RDLOCK_UAPI_VERSION };
	struct rdlock_locks_entry *e;
	__u32 total, i, m = 0, missing;

	rdlock_parse_ls_name(ls, l.lockspace);
	if (!local)
		l.flags = RDLOCK_LOCKS_QUERY_CLUSTER;
	if (name) {
		l.name = (__u64)(unsigned long)name;
		l.name_len = strlen(name);
	}
	e = list_ioctl(fd, RDLOCK_IOC_LOCKS, &l, &l.count, &l.entries,
		       sizeof(*e), RDLOCK_LOCKS_MAX, &total);
	if (!e && errno == EINVAL && (l.flags || l.name_len)) {
		err_msg("locks %s: the module lists this node's view only (older than rdlockctl)",
			ls);
		l.flags = 0;
		l.name = 0;
		l.name_len = 0;
		e = list_ioctl(fd, RDLOCK_IOC_LOCKS, &l, &l.count, &l.entries,
			       sizeof(*e), RDLOCK_LOCKS_MAX, &total);
		/* NAME: its entries alone (another node's wait if named). */
		for (i = 0; e && name && i < l.count; i++)
			if (e[i].name_len == strlen(name) &&
			    !memcmp(e[i].name, name, e[i].name_len))
				e[m++] = e[i];
		if (e && name) {
			l.count = m;
			total = m;
		}
	}
	if (!e) {
		if (errno == ENOENT)
			err_msg("locks: no lockspace '%s' on this node (rdlockctl ls)",
				ls);
		else
			err_msg("locks %s: %s (%s)", ls, strerror(errno),
				errno_name(errno));
		return NULL;
	}
	if (total > l.count)
		err_msg("locks %s: the first %u of %u locks", ls, l.count,
			total);
	missing = l.asked & ~l.answered;
	for (i = 0; i < 32; i++)
		if (missing & 1U << i)
			err_msg("locks %s: node %u did not answer (%s): %s", ls,
				i, "not connected, or an older module",
				"only its waits known here are listed");
	*count = l.count;
	return e;
}

/* A lock's mode as locks prints it: DLM lockspaces' nl, pr, ex. */
static const char *locks_mode(__u32 mode, int dlm)
{
	switch (mode) {
	case RDLOCK_LOCKS_NONE:
		return "-";
	case RDLOCK_LOCK_SH:
		return dlm ? "pr" : "sh";
	case RDLOCK_LOCK_EX:
		return "ex";
	case RDLOCK_LOCK_UP:
		return "up";
	case RDLOCK_LOCK_NL:
		return "nl";
	}
	return "?";
}

static const char *locks_state(__u32 state)
{
	static const char *const names[] = {
		[RDLOCK_LOCKS_GRANTED] = "granted",
		[RDLOCK_LOCKS_CONVERTING] = "converting",
		[RDLOCK_LOCKS_WAITING] = "waiting",
		[RDLOCK_LOCKS_LOST] = "lost",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "unknown";
}

/* A DLM lockspace's entry: only those carry the name's hash. */
static int locks_dlm(const struct rdlock_locks_entry *e)
{
	return e->hash || e->flags & RDLOCK_LOCKS_NOTICE;
}

/* @e's name, printable: \xHH for other bytes; "#HASH" when unknown. */
static void locks_name(const struct rdlock_locks_entry *e, char *buf,
		       size_t len)
{
	size_t off = 0;
	__u32 i;

	if (!e->name_len) {
		snprintf(buf, len, "#%016llx", (unsigned long long)e->hash);
		return;
	}
	buf[0] = '\0';
	for (i = 0; i < e->name_len && i < RDLOCK_RES_NAME_MAX && off < len; i++) {
		unsigned char c = e->name[i];

		if (c > ' ' && c < 0x7f && c != '\\')
			off += snprintf(buf + off, len - off, "%c", c);
		else
			off += snprintf(buf + off, len - off, "\\x%02x", c);
	}
}

static void print_locks_text(const struct rdlock_locks_entry *e, __u32 n)
{
	char name[4 * RDLOCK_RES_NAME_MAX + 1], id[12], owner[12], home[12];
	char flags[24];
	__u32 i;

	printf("%-24s %-4s %-10s %-7s %-9s %-10s %-7s %-4s %-8s %s\n", "NAME",
	       "NODE", "STATE", "GRANTED", "REQUESTED", "ID", "OWNER", "HOME",
	       "MS", "FLAGS");
	for (i = 0; i < n; i++) {
		locks_name(&e[i], name, sizeof(name));
		snprintf(id, sizeof(id), e[i].id ? "%u" : "-", e[i].id);
		snprintf(owner, sizeof(owner), e[i].owner ? "%d" : "-",
			 e[i].owner);
		snprintf(home, sizeof(home), e[i].home != RDLOCK_LOCKS_NONE ?
			 "%u" : "-", e[i].home);
		snprintf(flags, sizeof(flags), "%s%s%s",
			 e[i].flags & RDLOCK_LOCKS_LVB_VALID ? "lvb-valid" : "",
			 (e[i].flags & RDLOCK_LOCKS_LVB_VALID) &&
			 (e[i].flags & RDLOCK_LOCKS_NOTICE) ? "," : "",
			 e[i].flags & RDLOCK_LOCKS_NOTICE ? "notice" : "");
		printf("%-24s %-4u %-10s %-7s %-9s %-10s %-7s %-4s %-8llu %s\n",
		       name, e[i].node, locks_state(e[i].state),
		       locks_mode(e[i].mode, locks_dlm(&e[i])),
		       locks_mode(e[i].rqmode, locks_dlm(&e[i])), id, owner,
		       home, (unsigned long long)e[i].ms,
		       flags[0] ? flags : "-");
	}
}

static void print_locks_json(const struct rdlock_locks_entry *e, __u32 n)
{
	__u32 i;

	printf("[");
	for (i = 0; i < n; i++) {
		printf("%s{\"name\": ", i ? ", " : "");
		if (e[i].name_len)
			json_mem((const char *)e[i].name,
				 e[i].name_len < RDLOCK_RES_NAME_MAX ?
				 e[i].name_len : RDLOCK_RES_NAME_MAX);
		else
			printf("null");
		printf(", \"hash\": \"%016llx\", \"node\": %u, \"state\": \"%s\", ",
		       (unsigned long long)e[i].hash, e[i].node,
		       locks_state(e[i].state));
		printf("\"granted\": \"%s\", \"requested\": \"%s\", \"id\": %u, ",
		       locks_mode(e[i].mode, locks_dlm(&e[i])),
		       locks_mode(e[i].rqmode, locks_dlm(&e[i])), e[i].id);
		printf("\"owner\": %d, \"home\": ", e[i].owner);
		if (e[i].home != RDLOCK_LOCKS_NONE)
			printf("%u", e[i].home);
		else
			printf("null");
		printf(", \"ms\": %llu, \"lvb_valid\": %s, \"notice\": %s}",
		       (unsigned long long)e[i].ms,
		       e[i].flags & RDLOCK_LOCKS_LVB_VALID ? "true" : "false",
		       e[i].flags & RDLOCK_LOCKS_NOTICE ? "true" : "false");
	}
	printf("]\n");
}

static int cmd_locks(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "local", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	char lsname[RDLOCK_LS_NAME_MAX];
	struct rdlock_locks_entry *e;
	int json = 0, local = 0, fd, opt;
	const char *name = NULL;
	__u32 n = 0;

	while ((opt = getopt_long(argc, argv, "jl", opts, NULL)) != -1) {
		if (opt == 'j')
			json = 1;
		else if (opt == 'l')
			local = 1;
		else
			return bad_usage("locks: bad option", NULL);
	}
	if (optind == argc)
		return bad_usage("locks: which LOCKSPACE?", NULL);
	if (rdlock_parse_ls_name(argv[optind], lsname))
		return bad_usage("locks: bad lockspace name '%s'", argv[optind]);
	if (optind + 1 < argc)
		name = argv[optind + 1];
	if (optind + 2 < argc)
		return bad_usage("locks: unexpected argument '%s'",
				 argv[optind + 2]);
	if (name && (!name[0] || strlen(name) > RDLOCK_RES_NAME_MAX))
		return bad_usage("locks: bad lock name '%s' (1..64 bytes)", name);
	fd = open_dev();
	if (fd < 0)
		return 1;
	e = get_locks(fd, argv[optind], name, local, &n);
	close(fd);
	if (!e)
		return 1;
	if (json)
		print_locks_json(e, n);
	else
		print_locks_text(e, n);
	free(e);
	return 0;
}

static const char *mode_name(__u32 mode)
{
	switch (mode) {
	case RDLOCK_LOCK_SH:
		return "shared";
	case RDLOCK_LOCK_EX:
		return "exclusive";
	case RDLOCK_LOCK_UP:
		return "update";
	case RDLOCK_LOCK_NL:
		return "null";
	}
	return "unknown";
}

/* -m MODE: sh, pr (the same), ex, up, nl. */
static int parse_mode(const char *arg, __u32 *mode)
{
	static const struct {
		const char *name;
		__u32 mode;
	} modes[] = {
		{ "sh", RDLOCK_LOCK_SH }, { "pr", RDLOCK_LOCK_PR },
		{ "ex", RDLOCK_LOCK_EX }, { "up", RDLOCK_LOCK_UP },
		{ "nl", RDLOCK_LOCK_NL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		if (!strcmp(arg, modes[i].name)) {
			*mode = modes[i].mode;
			return 0;
		}
	}
	return -1;
}

/* Run argv[0] with its arguments; its exit status as a shell reports it. */
static int run_command(char **argv)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err_msg("fork: %s (%s)", strerror(errno), errno_name(errno));
		return 1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		err_msg("cannot run %s: %s", argv[0], strerror(errno));
		_exit(errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err_msg("waitpid: %s", strerror(errno));
			return 1;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/*
 * lock -b: hold the lock until a request elsewhere waits for it (a DLM
 * lockspace's blocking event), at most @ms; print the event. Exit status
 * 0 after an event, 1 without one.
 */
static int wait_blocked(int fd, int ms, __u32 handle)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct rdlock_event ev;
	int n;

	printf("granted handle %u; waiting for a blocking event\n", handle);
	fflush(stdout);
	n = poll(&p, 1, ms);
	if (n < 0 || (n && !(p.revents & POLLIN))) {
		err_msg("waiting for events: %s", n < 0 ? strerror(errno) :
			"not a DLM lockspace (create it with ls-create --dlm)");
		return 1;
	}
	if (!n) {
		err_msg("no blocking event within %d ms", ms);
		return 1;
	}
	if (read(fd, &ev, sizeof(ev)) != sizeof(ev)) {
		err_msg("read event: %s", strerror(errno));
		return 1;
	}
	printf("blocked: handle %u, waiting: %s\n", ev.handle,
	       mode_name(ev.mode));
	return 0;
}

/*
 * lock [-s|-x|-u] [-n] [-w SECONDS] LOCKSPACE NAME [--] CMD [ARGS...]:
 * like flock(1). The command inherits the open file, so the lock lasts as
 * long as the command runs even if rdlockctl itself is killed.
 */
static int cmd_lock(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shared", no_argument, NULL, 's' },
		{ "exclusive", no_argument, NULL, 'x' },
		{ "update", no_argument, NULL, 'u' },
		{ "nonblock", no_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 'w' },
		{ "mode", required_argument, NULL, 'm' },
		{ "until-blocked", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdlock_unlock_req u;
	struct rdlock_lock_req l;
	struct rdlock_ls_name j;
	const char *ls, *name, *wait_arg = NULL;
	int blocked_ms = -1;
	double secs;
	char *end;
	int opt, fd, e, status;
	size_t len;

	memset(&l, 0, sizeof(l));
	l.version = RDLOCK_UAPI_VERSION;
	l.mode = RDLOCK_LOCK_EX;
	/* "+": options end at LOCKSPACE; the command's are its own. */
	while ((opt = getopt_long(argc, argv, "+sxunw:m:b:", opts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			if (parse_mode(optarg, &l.mode))
				return bad_usage("bad mode '%s' (sh, pr, ex, up or nl)",
						 optarg);
			break;
		case 'b':
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(secs >= 0) ||
			    secs > INT_MAX / 1000.0)
				return bad_usage("bad wait '%s' (seconds)", optarg);
			blocked_ms = (int)(secs * 1000 + 0.5);
			break;
		case 's':
			l.mode = RDLOCK_LOCK_SH;
			break;
		case 'x':
			l.mode = RDLOCK_LOCK_EX;
			break;
		case 'u':
			l.mode = RDLOCK_LOCK_UP;
			break;
		case 'n':
			l.flags |= RDLOCK_LKF_TRY;
			break;
		case 'w':
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(secs >= 0) ||
			    secs > 0xffffffffU / 1000.0)
				return bad_usage("bad timeout '%s' (seconds)", optarg);
			/* Like flock -w 0: do not wait at all. */
			l.timeout_ms = (__u32)(secs * 1000 + 0.5);
			wait_arg = optarg;
			if (!l.timeout_ms)
				l.flags |= RDLOCK_LKF_TRY;
			break;
		default:
			return bad_usage("%s: bad option", "lock");
		}
	}
	if (l.flags & RDLOCK_LKF_TRY)
		l.timeout_ms = 0;
	if (argc - optind < (blocked_ms < 0 ? 3 : 2))
		return bad_usage("%s: needs LOCKSPACE, NAME and a command (or -b)",
				 "lock");
	ls = argv[optind];
	name = argv[optind + 1];
	optind += 2;
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind == argc && blocked_ms < 0)
		return bad_usage("%s: needs a command", "lock");
	if (optind < argc && blocked_ms >= 0)
		return bad_usage("%s: -b takes no command", "lock");

	memset(&j, 0, sizeof(j));
	j.version = RDLOCK_UAPI_VERSION;
	if (rdlock_parse_ls_name(ls, j.name))
		return bad_usage("bad lockspace name '%s' (1..31 of A-Z a-z 0-9 _ . : -)",
				 ls);
	len = strlen(name);
	if (!len || len > RDLOCK_RES_NAME_MAX)
		return bad_usage("bad lock name '%s' (1..64 bytes)", name);
	l.name_len = len;
	memcpy(l.name, name, len);

	/* Not O_CLOEXEC: see above. */
	fd = open(device, O_RDWR);
	if (fd < 0) {
		err_msg("cannot open %s: %s%s", device, strerror(errno),
			errno == ENOENT ? " (is rdlock.ko loaded?)" : "");
		return 1;
	}
	if (ls_ioctl(fd, RDLOCK_IOC_JOIN, &j, "join lockspace", ls)) {
		close(fd);
		return 1;
	}
	if (ioctl(fd, RDLOCK_IOC_LOCK, &l) < 0) {
		e = errno;
		if (e == EAGAIN && (l.flags & RDLOCK_LKF_TRY))
			err_msg("%s lock %s in %s is busy", mode_name(l.mode),
				name, ls);
		else if (e == ETIMEDOUT)
			err_msg("%s lock %s in %s: not granted within %s s (%s)",
				mode_name(l.mode), name, ls, wait_arg ? wait_arg : "?",
				errno_name(e));
		else
			err_msg("%s lock %s in %s: %s (%s)%s", mode_name(l.mode),
				name, ls, strerror(e), errno_name(e),
				e == ENOENT ? "" : ls_hint(RDLOCK_IOC_LOCK, e));
		close(fd);
		return 1;
	}
	if (blocked_ms >= 0)
		status = wait_blocked(fd, blocked_ms, l.handle);
	else
		status = run_command(argv + optind);

	memset(&u, 0, sizeof(u));
	u.version = RDLOCK_UAPI_VERSION;
	u.handle = l.handle;
	if (ioctl(fd, RDLOCK_IOC_UNLOCK, &u) < 0)
		err_msg("unlock %s in %s: %s (%s)", name, ls, strerror(errno),
			errno_name(errno));
	/* Leave too: the command may have passed the file on. */
	if (ioctl(fd, RDLOCK_IOC_LEAVE) < 0)
		err_msg("leave %s: %s (%s)", ls, strerror(errno),
			errno_name(errno));
	close(fd);
	return status;
}

/* ------------------------------------------------------------------ */
/* The configuration file                                             */

/* Never configured? Quietly no when the device or STATUS fails. */
static int unconfigured(void)
{
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_status st;
	int fd = open(device, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	memset(&st, 0, sizeof(st));
	st.version = RDLOCK_UAPI_VERSION;
	st.nr_nodes = RDLOCK_MAX_NODES;
	st.nodes = (__u64)(unsigned long)nodes;
	if (ioctl(fd, RDLOCK_IOC_STATUS, &st) < 0)
		st.state = RDLOCK_CLUSTER_DOWN;
	close(fd);
	return st.state == RDLOCK_CLUSTER_UNCONFIGURED;
}

/* The whole file, NUL-terminated, or NULL with errno set. */
static char *read_conf(const char *path)
{
	size_t n, size = RDLOCK_CONF_FILE_MAX + 2;
	char *buf = malloc(size);
	FILE *f;

	if (!buf)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, size - 1, f);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	if (memchr(buf, '\0', n)) {
		free(buf);
		errno = EILSEQ;
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

#define MAX_LOCAL_ADDRS	64

/* This host's IP addresses, for the file's nodes without "self". */
static unsigned int local_addrs(struct rdlock_addr *out, unsigned int max)
{
	struct ifaddrs *ifs, *ifa;
	unsigned int n = 0;

	if (getifaddrs(&ifs)) {
		err_msg("getifaddrs: %s", strerror(errno));
		return 0;
	}
	for (ifa = ifs; ifa && n < max; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		if (ifa->ifa_addr->sa_family == AF_INET) {
			const struct sockaddr_in *s = (void *)ifa->ifa_addr;

			out[n].family = AF_INET;
			memcpy(out[n].addr, &s->sin_addr, 4);
			n++;
		} else if (ifa->ifa_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *s = (void *)ifa->ifa_addr;

			out[n].family = AF_INET6;
			out[n].scope_id = s->sin6_scope_id;
			memcpy(out[n].addr, &s->sin6_addr, 16);
			n++;
		}
	}
	freeifaddrs(ifs);
	return n;
}

/* Write @val to rdlock.ko's parameter @name; 0 or the errno. */
static int write_param(const char *name, const char *val)
{
	char path[sizeof(RDLOCK_CONF_PARAM_DIR) + RDLOCK_CONF_OPT_NAME_MAX];
	size_t len = strlen(val);
	ssize_t n;
	int fd, e = 0;

	snprintf(path, sizeof(path), RDLOCK_CONF_PARAM_DIR "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, val, len);
	if (n < 0)
		e = errno;
	else if ((size_t)n != len)
		e = EIO;
	if (close(fd) && !e)
		e = errno;
	return e;
}

/*
 * Do what rdlock_conf_print() shows: check that the cluster is down and
 * every option a parameter of the module, write the options, configure,
 * up; then, if the file has lockspaces, wait for the cluster and create
 * them (all that can be, however many fail).
 */
static int apply_conf(const char *path, const struct rdlock_conf *conf,
		      __u32 self, __u32 timeout)
{
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	const struct rdlock_conf_option *o;
	struct rdlock_cluster_config cfg;
	struct rdlock_ls_create c;
	struct rdlock_status st;
	char param[sizeof(RDLOCK_CONF_PARAM_DIR) + RDLOCK_CONF_OPT_NAME_MAX];
	double deadline = now_sec() + timeout, left;
	struct stat sb;
	unsigned int i;
	int fd, e, ret = 0;

	if (read_status(&st, nodes))
		return 1;
	if (st.state != RDLOCK_CLUSTER_UNCONFIGURED &&
	    st.state != RDLOCK_CLUSTER_DOWN) {
		err_msg("%s: the cluster is %s: run 'down' first", path,
			cluster_state_name(st.state));
		return 1;
	}
	/* Every name first, so that a misspelt one changes nothing. */
	for (i = 0; i < conf->nr_options; i++) {
		o = &conf->options[i];
		snprintf(param, sizeof(param), RDLOCK_CONF_PARAM_DIR "%s",
			 o->name);
		if (stat(param, &sb)) {
			err_msg("%s: line %u: option %s: not a parameter of rdlock.ko (%s)",
				path, o->line, o->name, strerror(errno));
			return 1;
		}
		/* Not access(W_OK): root may write to a read-only file. */
		if (!(sb.st_mode & 0222)) {
			err_msg("%s: line %u: option %s: read at load only: use modprobe.d",
				path, o->line, o->name);
			return 1;
		}
	}
	for (i = 0; i < conf->nr_options; i++) {
		o = &conf->options[i];
		e = write_param(o->name, o->value);
		if (e) {
			err_msg("%s: line %u: option %s %s: %s (%s)", path,
				o->line, o->name, o->value, strerror(e),
				errno_name(e));
			return 1;
		}
	}

	memset(&cfg, 0, sizeof(cfg));
	cfg.version = RDLOCK_UAPI_VERSION;
	cfg.cluster_id = conf->cluster_id;
	cfg.node_id = self;
	memcpy(cfg.name, conf->name, sizeof(cfg.name));
	if (conf->insecure_line) {
		cfg.flags |= RDLOCK_CONFIG_INSECURE_NO_KEY;
		insecure_warning();
	}
	for (i = 0; i < conf->nr_nodes; i++)
		if (conf->nodes[i].id == self)
			cfg.addr = conf->nodes[i].addr;
	if (do_ioctl(RDLOCK_IOC_SET_CONFIG, &cfg, "set config"))
		return 1;
	for (i = 0; i < conf->nr_nodes; i++)
		if (conf->nodes[i].id != self &&
		    add_peer(conf->nodes[i].id, &conf->nodes[i].addr))
			return 1;
	if (conf->key_file[0] && set_key(conf->key_file)) {
		err_msg("%s: line %u: key_file: cluster not started", path,
			conf->key_file_line);
		return 1;
	}
	if (wait_quorate(deadline) || do_ioctl(RDLOCK_IOC_UP, NULL, "up"))
		return 1;
	if (!conf->nr_ls)
		return 0;

	/* One deadline for quorum and readiness together. */
	left = deadline - now_sec();
	if (wait_ready(left > 0 ? (__u32)left : 0)) {
		err_msg("%s: the cluster is up but not ready: no lockspace created",
			path);
		return 1;
	}
	fd = open_dev();
	if (fd < 0)
		return 1;
	for (i = 0; i < conf->nr_ls; i++) {
		c = conf->ls[i].c;
		if (!conf->ls[i].has_uid)
			c.uid = getuid();
		if (!conf->ls[i].has_gid)
			c.gid = getgid();
		if (ls_ioctl(fd, RDLOCK_IOC_LS_CREATE, &c, "create lockspace",
			     c.name)) {
			err_msg("%s: line %u: lockspace %s not created", path,
				conf->ls[i].line, c.name);
			ret = 1;
		}
	}
	close(fd);
	return ret;
}

/* The file's text parsed into *conf; 0, or EXIT_USAGE after the error. */
static int load_conf(const char *path, struct rdlock_conf *conf)
{
	return load_conf_quiet(path, conf, false);
}

/*
 * down --config FILE: what stopping the systemd unit does. Remove the
 * file's lockspaces from this node (those it no longer has do not
 * matter: down refuses while any is left), then down; a cluster already
 * down or never configured is no error. 0, 1 or EXIT_USAGE.
 */
static int down_config(const char *path)
{
	static struct rdlock_conf conf;
	struct rdlock_ls_name n;
	unsigned int i;
	int fd, e, ret;

	ret = load_conf(path, &conf);
	if (ret)
		return ret;
	fd = open_dev();
	if (fd < 0)
		return 1;
	for (i = 0; i < conf.nr_ls; i++) {
		memset(&n, 0, sizeof(n));
		n.version = RDLOCK_UAPI_VERSION;
		memcpy(n.name, conf.ls[i].c.name, sizeof(n.name));
		if (ioctl(fd, RDLOCK_IOC_LS_REMOVE, &n) == 0 || errno == ENOENT)
			continue;
		e = errno;
		err_msg("%s: line %u: remove lockspace %s: %s (%s)%s", path,
			conf.ls[i].line, n.name, strerror(e), errno_name(e),
			ls_hint(RDLOCK_IOC_LS_REMOVE, e));
		ret = 1;
	}
	if (ioctl(fd, RDLOCK_IOC_DOWN) < 0 && errno != EALREADY &&
	    errno != ENXIO) {
		e = errno;
		err_msg("down: %s (%s)%s", strerror(e), errno_name(e),
			e == EBUSY ? " (this node still has lockspaces)" : "");
		ret = 1;
	}
	close(fd);
	return ret;
}

/* up --config FILE [--timeout SEC] [--dry-run]. Bad file: EXIT_USAGE. */
static int up_config(const char *path, __u32 timeout, int dry_run)
{
	static struct rdlock_addr local[MAX_LOCAL_ADDRS];
	static struct rdlock_conf conf;
	char err[RDLOCK_CONF_ERR_MAX];
	unsigned int nr_local = 0;
	__u32 self;
	int ret;

	ret = load_conf(path, &conf);
	if (ret)
		return ret;
	if (!conf.has_self)
		nr_local = local_addrs(local, MAX_LOCAL_ADDRS);
	if (rdlock_conf_find_self(&conf, local, nr_local, &self, err,
				  sizeof(err))) {
		err_msg("%s: %s", path, err);
		return EXIT_USAGE;
	}
	if (!conf.key_file[0] && !conf.insecure_line) {
		err_msg("%s: %s", path, no_key_line);
		return EXIT_USAGE;
	}
	if (dry_run) {
		rdlock_conf_print(&conf, self, timeout, stdout);
		return 0;
	}
	return apply_conf(path, &conf, self, timeout);
}

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "config", cmd_config,
	  "--cluster ID --node N --addr ADDR [--peer ID=ADDR]...\n"
	  "      [--key-file FILE | --insecure-no-key] [--name NAME]",
	  "set this node's configuration (forgets all peers and the cluster\n"
	  "      key), then add peers; --key-file: set the cluster key from FILE\n"
	  "      (16..64 bytes, mode 0600 or stricter; see keygen), without\n"
	  "      which up is refused; --insecure-no-key: up without a key, which\n"
	  "      lets any host that takes a node's address in (tests only);\n"
	  "      --name: the cluster's name (1..16 of A-Z a-z 0-9 _ . -), which\n"
	  "      an OCFS2 disk must carry (the cluster name mkfs.ocfs2 wrote)" },
	{ "keygen", cmd_keygen, "[--force] [FILE]",
	  "write a new random cluster key (32 bytes, mode 0600) to FILE,\n"
	  "      default " RDLOCK_KEY_DEFAULT_PATH ", to copy to every node over a\n"
	  "      secure channel; an existing FILE is kept unless --force" },
	{ "add-peer", cmd_add_peer, "ID ADDR", "add a peer while down" },
	{ "del-peer", cmd_del_peer, "ID", "remove a peer while down" },
	{ "up", cmd_up, "[--config FILE [--timeout SEC] [--dry-run]]",
	  "connect to every node; with --config, first configure from FILE\n"
	  "      (options, nodes) and after create its lockspaces once ready\n"
	  "      (waiting at most SEC s, default 60); --dry-run only checks FILE\n"
	  "      and prints the equivalent commands. Without --config, a node\n"
	  "      never configured reads " RDLOCK_CONF_DEFAULT_PATH " if it exists.\n"
	  "      With membership=dlm, first waits for corosync's quorum (within\n"
	  "      the same SEC s; 60 s without --config)" },
	{ "down", cmd_down, "[--config FILE]",
	  "disconnect from every node; with --config, first remove FILE's\n"
	  "      lockspaces from this node, and a cluster already down is no error" },
	{ "node-down", cmd_node_down, "ID",
	  "node ID is dead or fenced: cut it off and release its locks; run on\n"
	  "      every surviving node (each waits for the others to do it too)" },
	{ "status", cmd_status, "[--json] [--config FILE]",
	  "show the cluster's and each node's state, connections and link\n"
	  "      errors, with the nodes' names from FILE (default\n"
	  "      " RDLOCK_CONF_DEFAULT_PATH ", if it can be read)" },
	{ "wait", cmd_wait, "[--timeout SEC]",
	  "wait until every node is connected (default 60 s)" },
	{ "ls-create", cmd_ls_create,
	  "NAME [--dlm | --proto bakery|caslock|cql] [--lease-ms T] [--omega-us U]\n"
	  "      [--slots N] [--update] [--queue-bits N] [--version-bits M]\n"
	  "      [--hier[=task-fair|phase-fair]]\n"
	  "      [--uid U] [--gid G] [--mode OCTAL]",
	  "create a lockspace, or attach to the cluster's (same attributes on\n"
	  "      every node); defaults: bakery, no lease, 1024 slots, mode 0666;\n"
	  "      cql only: --queue-bits (1..12, default 5: 32 queue entries per\n"
	  "      lock, 34 slots a name) and --version-bits (2..16, default 16);\n"
	  "      --hier: hierarchical (one queue entry per node), task-fair\n"
	  "      unless =phase-fair;\n"
	  "      --dlm: a DLM lockspace (modes nl, pr, ex, conversions, blocking\n"
	  "      events), whose protocol and size the DLM layer sets" },
	{ "ls-remove", cmd_ls_remove, "NAME",
	  "remove a lockspace from this node (fails while in use)" },
	{ "ls", cmd_ls, "[--json]",
	  "list this node's lockspaces: name, kind (plain, dlm, or kernel: a\n"
	  "      kernel user's), protocol, slots, mode/uid/gid, users, state\n"
	  "      (open or lost) and the rdlock lockspace behind it" },
	{ "lock", cmd_lock,
	  "[-s|-x|-u|-m MODE] [-n] [-w SEC] LOCKSPACE NAME [--] CMD [ARGS...]\n"
	  "      lock [-m MODE] [-n] [-w SEC] -b SEC LOCKSPACE NAME",
	  "run CMD holding a shared, exclusive (default) or update lock, like\n"
	  "      flock(1): -n fails at once if busy, -w after SEC seconds; exits\n"
	  "      with CMD's status, or 1 if the lock was not granted. -m: sh, ex,\n"
	  "      up, or in a DLM lockspace nl, pr, ex. -b: instead of a command,\n"
	  "      hold the lock until a request elsewhere waits for it (at most\n"
	  "      SEC s; a DLM lockspace's blocking event), print it and release" },
	{ "locks", cmd_locks, "[--json] [--local] LOCKSPACE [NAME]",
	  "list the locks in LOCKSPACE (as ls names it), or NAME's: name,\n"
	  "      node, state (granted, converting, waiting, lost), mode held\n"
	  "      and waited for, lock id, owner process, home node, ms in that\n"
	  "      state, flags (lvb-valid: an EX DLM lock's value block was\n"
	  "      valid; notice: another node's wait known from its notice);\n"
	  "      in a DLM lockspace every node's, each node asked, unless\n"
	  "      --local (this node's, and the waits it knows of); in a plain\n"
	  "      lockspace this node's (root only)" },
	{ "stats", cmd_stats, "[--json | --prometheus]",
	  "show this node's counters: the transport's, its links' to each\n"
	  "      node, the DLM layer's and each lockspace's, one a line (NAME\n"
	  "      node=ID|lockspace=NAME|- VALUE), as JSON, or in Prometheus'\n"
	  "      text format (for a textfile collector)" },
	{ "version", cmd_version, "",
	  "show this tool's version and the loaded module's" },
	{ "help", cmd_help, "[COMMAND]",
	  "show this help, or COMMAND's alone (as 'COMMAND --help' does)" },
};

static void cmd_usage(FILE *f, const struct cmd *c)
{
	fprintf(f, "  %s%s%s\n      %s\n", c->name, c->args[0] ? " " : "",
		c->args, c->help);
}

static void usage_tail(FILE *f)
{
	fprintf(f, "\nADDR is IPv4[:PORT], [IPv6]:PORT, IPv6 or IPv6%%SCOPE; without a port,\n"
		"%u. DEVICE defaults to %s.\n", RDLOCK_DEFAULT_PORT,
		DEFAULT_DEVICE);
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: %s [-d DEVICE] COMMAND [ARGS]\n"
		"       %s -h|--help | -V|--version\n\nCommands:\n", prog, prog);
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		cmd_usage(f, &cmds[i]);
	usage_tail(f);
}

static const struct cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

/* One command's synopsis and help, on standard output. */
static void cmd_help_one(const struct cmd *c)
{
	printf("Usage: %s [-d DEVICE] %s%s%s\n\n      %s\n", prog, c->name,
	       c->args[0] ? " " : "", c->args, c->help);
	if (!strcmp(c->name, "config") || !strcmp(c->name, "add-peer"))
		usage_tail(stdout);
}

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c;

	if (argc == 1) {
		usage(stdout);
		return 0;
	}
	if (argc > 2)
		return bad_usage("help: unexpected argument '%s'", argv[2]);
	c = find_cmd(argv[1]);
	if (!c)
		return bad_usage("help: unknown command '%s'", argv[1]);
	cmd_help_one(c);
	return 0;
}

/*
 * This tool's release and the loaded module's (its MODULE_VERSION, in
 * sysfs): both are dkms.conf's PACKAGE_VERSION when built from one tree.
 */
static int cmd_version(int argc, char **argv)
{
	char buf[64];

	if (argc > 1)
		return bad_usage("version: unexpected argument '%s'", argv[1]);
	printf("rdlockctl %s\n", RDLOCK_VERSION);
	if (module_version(buf, sizeof(buf)))
		printf("rdlock module not loaded\n");
	else
		printf("rdlock module %s\n", buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cmd *c;
	int opt;

	/* "+": stop at the subcommand, whose options are its own. */
	while ((opt = getopt_long(argc, argv, "+hVd:", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return cmd_version(1, argv);
		case 'd':
			device = optarg;
			break;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	c = find_cmd(argv[0]);
	if (!c)
		return bad_usage("unknown command '%s'", argv[0]);
	/* Its help, before any of its own options is looked at. */
	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cmd_help_one(c);
		return 0;
	}
	/* 0, not 1: glibc then forgets the "+" of the first scan. */
	optind = 0;
	return c->fn(argc, argv);
}
