// SPDX-License-Identifier: GPL-2.0
/*
 * rdlockctl - configure and inspect the rdlock cluster through /dev/rdlock.
 *
 * Every subcommand is one entry of cmds[]; lock subcommands are meant to be
 * added there later. Exit status: 0 success, 1 failure, 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlock.h>

#include "addr.h"

#define DEFAULT_DEVICE		"/dev/rdlock"
#define WAIT_POLL_MS		50
#define WAIT_DEFAULT_SEC	60
#define EXIT_USAGE		2
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
static int do_ioctl(unsigned long req, void *arg, const char *what)
{
	int fd = open_dev();
	int ret;

	if (fd < 0)
		return 1;
	ret = ioctl(fd, req, arg);
	if (ret < 0) {
		int e = errno;

		err_msg("%s: %s%s", what, strerror(e),
			e == EPERM ? " (needs CAP_SYS_ADMIN)" :
			e == ENXIO ? " (no configuration: run 'config' first)" :
			e == EBUSY ? " (cluster is up: run 'down' first)" : "");
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

static int parse_u32(const char *s, __u32 *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *end || x > 0xffffffffULL || s[0] == '-')
		return -EINVAL;
	*v = (__u32)x;
	return 0;
}

static int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ "node", required_argument, NULL, 'n' },
		{ "addr", required_argument, NULL, 'a' },
		{ "peer", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdlock_cluster_config cfg;
	struct rdlock_addr peers[RDLOCK_MAX_NODES];
	__u32 peer_ids[RDLOCK_MAX_NODES];
	int nr_peers = 0, have_cluster = 0, have_node = 0, have_addr = 0;
	int opt, i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.version = RDLOCK_UAPI_VERSION;
	while ((opt = getopt_long(argc, argv, "c:n:a:p:", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (parse_u32(optarg, &cfg.cluster_id) || !cfg.cluster_id)
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
		default:
			return bad_usage("%s: bad option", "config");
		}
	}
	if (optind != argc)
		return bad_usage("config: unexpected argument '%s'", argv[optind]);
	if (!have_cluster || !have_node || !have_addr)
		return bad_usage("%s: --cluster, --node and --addr are required",
				 "config");

	if (do_ioctl(RDLOCK_IOC_SET_CONFIG, &cfg, "set config"))
		return 1;
	for (i = 0; i < nr_peers; i++)
		if (add_peer(peer_ids[i], &peers[i]))
			return 1;
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

static int cmd_up(int argc, char **argv)
{
	if (argc != 1)
		return bad_usage("up: unexpected argument '%s'", argv[1]);
	return do_ioctl(RDLOCK_IOC_UP, NULL, "up");
}

static int cmd_down(int argc, char **argv)
{
	if (argc != 1)
		return bad_usage("down: unexpected argument '%s'", argv[1]);
	return do_ioctl(RDLOCK_IOC_DOWN, NULL, "down");
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

/* STATUS into *st and nodes[]; prints the error. 0 or -1. */
static int get_status(int fd, struct rdlock_status *st,
		      struct rdlock_node_status *nodes)
{
	memset(st, 0, sizeof(*st));
	memset(nodes, 0, sizeof(*nodes) * RDLOCK_MAX_NODES);
	st->version = RDLOCK_UAPI_VERSION;
	st->nr_nodes = RDLOCK_MAX_NODES;
	st->nodes = (__u64)(unsigned long)nodes;
	if (ioctl(fd, RDLOCK_IOC_STATUS, st) < 0) {
		err_msg("status: %s", strerror(errno));
		return -1;
	}
	if (st->nr_nodes > RDLOCK_MAX_NODES)
		st->nr_nodes = RDLOCK_MAX_NODES;
	return 0;
}

static void flags_str(__u32 flags, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s",
		 flags & RDLOCK_NODE_SELF ? "self" : "",
		 (flags & RDLOCK_NODE_SELF) &&
		 (flags & RDLOCK_NODE_VERBS_ATOMICS) ? "," : "",
		 flags & RDLOCK_NODE_VERBS_ATOMICS ? "verbs-atomics" : "");
	if (!buf[0])
		snprintf(buf, len, "-");
}

static void print_status_text(const struct rdlock_status *st,
			      const struct rdlock_node_status *nodes)
{
	char flags[48];
	__u32 i;

	printf("state: %s\n", cluster_state_name(st->state));
	if (st->state == RDLOCK_CLUSTER_UNCONFIGURED)
		return;
	printf("cluster: %u\nnode: %u\nbackend: %s\n", st->cluster_id,
	       st->node_id, backend_name(st->backend));
	printf("%-5s %-13s %-20s %s\n", "ID", "STATE", "FLAGS", "CONNECTS");
	for (i = 0; i < st->nr_nodes; i++) {
		flags_str(nodes[i].flags, flags, sizeof(flags));
		printf("%-5u %-13s %-20s %u\n", nodes[i].node_id,
		       node_state_name(nodes[i].state), flags,
		       nodes[i].connects);
	}
}

static void print_status_json(const struct rdlock_status *st,
			      const struct rdlock_node_status *nodes)
{
	__u32 i;

	printf("{\"state\": \"%s\", \"backend\": \"%s\", ",
	       cluster_state_name(st->state), backend_name(st->backend));
	printf("\"cluster_id\": %u, \"node_id\": %u, \"nodes\": [",
	       st->cluster_id, st->node_id);
	for (i = 0; i < st->nr_nodes; i++) {
		printf("%s{\"id\": %u, \"state\": \"%s\", \"flags\": %u, ",
		       i ? ", " : "", nodes[i].node_id,
		       node_state_name(nodes[i].state), nodes[i].flags);
		printf("\"self\": %s, \"verbs_atomics\": %s, \"connects\": %u}",
		       nodes[i].flags & RDLOCK_NODE_SELF ? "true" : "false",
		       nodes[i].flags & RDLOCK_NODE_VERBS_ATOMICS ?
		       "true" : "false", nodes[i].connects);
	}
	printf("]}\n");
}

static int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_status st;
	int json = 0, opt, fd, ret;

	while ((opt = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (opt != 'j')
			return bad_usage("%s: bad option", "status");
		json = 1;
	}
	if (optind != argc)
		return bad_usage("status: unexpected argument '%s'", argv[optind]);
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = get_status(fd, &st, nodes);
	close(fd);
	if (ret)
		return 1;
	if (json)
		print_status_json(&st, nodes);
	else
		print_status_text(&st, nodes);
	return 0;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_wait(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdlock_node_status nodes[RDLOCK_MAX_NODES];
	struct rdlock_status st;
	__u32 timeout = WAIT_DEFAULT_SEC, i;
	double deadline;
	int opt, fd;

	while ((opt = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		if (opt != 't' || parse_u32(optarg, &timeout))
			return bad_usage("%s: bad option or timeout", "wait");
	}
	if (optind != argc)
		return bad_usage("wait: unexpected argument '%s'", argv[optind]);
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

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct cmd cmds[] = {
	{ "config", cmd_config,
	  "--cluster ID --node N --addr ADDR [--peer ID=ADDR]...",
	  "set this node's configuration (forgets all peers), then add peers" },
	{ "add-peer", cmd_add_peer, "ID ADDR", "add a peer while down" },
	{ "del-peer", cmd_del_peer, "ID", "remove a peer while down" },
	{ "up", cmd_up, "", "connect to every node" },
	{ "down", cmd_down, "", "disconnect from every node" },
	{ "status", cmd_status, "[--json]", "show cluster and node states" },
	{ "wait", cmd_wait, "[--timeout SEC]",
	  "wait until every node is connected (default 60 s)" },
	{ "help", cmd_help, "", "show this help" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: %s [-d DEVICE] COMMAND [ARGS]\n\nCommands:\n", prog);
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %s%s%s\n      %s\n", cmds[i].name,
			cmds[i].args[0] ? " " : "", cmds[i].args, cmds[i].help);
	fprintf(f, "\nADDR is IPv4[:PORT], [IPv6]:PORT, IPv6 or IPv6%%SCOPE; port 0 or none\n"
		"selects %u. DEVICE defaults to %s.\n", RDLOCK_DEFAULT_PORT,
		DEFAULT_DEVICE);
}

int main(int argc, char **argv)
{
	size_t i;
	int opt;

	/* "+": stop at the subcommand, whose options are its own. */
	while ((opt = getopt(argc, argv, "+hd:")) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
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
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (strcmp(argv[0], cmds[i].name))
			continue;
		/* 0, not 1: glibc then forgets the "+" of the first scan. */
		optind = 0;
		return cmds[i].fn(argc, argv);
	}
	return bad_usage("unknown command '%s'", argv[0]);
}
