// SPDX-License-Identifier: GPL-2.0
/*
 * The rdlock configuration file: a line-based format, one directive a
 * line, words separated by blanks, "#" to the end of the line a comment:
 *
 *	cluster ID			once; non-zero 32-bit number
 *	cluster_name NAME		optional: the cluster's name
 *	node ID ADDR			once per node, this one included
 *	self ID				optional: this node (else by address)
 *	key_file PATH			the cluster key, absolute path
 *	insecure_no_key			instead: no key (tests only)
 *	option NAME VALUE		a module parameter of rdlock.ko
 *	lockspace NAME [ATTRIBUTES]	created once the cluster is ready
 *
 * Only what can be checked without the module is checked here; the
 * kernel stays the judge of the rest (a parameter's existence, lease
 * lengths, address kinds), and rdlockctl reports its refusals with the
 * line they come from.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "addr.h"
#include "conf.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define CONF_MAX_WORDS		32
#define LS_NAME_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-"
#define CLUSTER_NAME_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define OPT_NAME_CHARS		"abcdefghijklmnopqrstuvwxyz0123456789_"

int rdlock_parse_u32(const char *s, __u32 *v)
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

/* @s, 1 to @max characters of @chars, into @out of @size bytes, NUL-padded. */
static int parse_padded_name(const char *s, const char *chars, size_t max,
			     char *out, size_t size)
{
	size_t len = strlen(s);

	if (!len || len > max || strspn(s, chars) != len)
		return -EINVAL;
	memset(out, 0, size);
	memcpy(out, s, len);
	return 0;
}

int rdlock_parse_ls_name(const char *s, char out[RDLOCK_LS_NAME_MAX])
{
	return parse_padded_name(s, LS_NAME_CHARS, RDLOCK_LS_NAME_MAX - 1, out,
				 RDLOCK_LS_NAME_MAX);
}

int rdlock_parse_proto(const char *s, __u32 *proto)
{
	if (!strcmp(s, "bakery"))
		*proto = RDLOCK_PROTO_BAKERY;
	else if (!strcmp(s, "caslock"))
		*proto = RDLOCK_PROTO_CASLOCK;
	else if (!strcmp(s, "cql"))
		*proto = RDLOCK_PROTO_CQL;
	else
		return -EINVAL;
	return 0;
}

const char *rdlock_proto_name(__u32 proto)
{
	switch (proto) {
	case RDLOCK_PROTO_BAKERY:
		return "bakery";
	case RDLOCK_PROTO_CASLOCK:
		return "caslock";
	case RDLOCK_PROTO_CQL:
		return "cql";
	}
	return "unknown";
}

int rdlock_parse_cluster_name(const char *s, char *name)
{
	return parse_padded_name(s, CLUSTER_NAME_CHARS, RDLOCK_CLUSTER_NAME_MAX,
				 name, RDLOCK_CLUSTER_NAME_MAX);
}

int rdlock_parse_mode(const char *s, __u32 *mode)
{
	unsigned long m;
	char *end;

	errno = 0;
	m = strtoul(s, &end, 8);
	if (errno || end == s || *end || m > 0777 || s[0] == '-')
		return -EINVAL;
	*mode = m;
	return 0;
}

static int parse_range(const char *s, __u32 min, __u32 max, __u32 *v)
{
	__u32 n;

	if (rdlock_parse_u32(s, &n) || n < min || n > max)
		return -EINVAL;
	*v = n;
	return 0;
}

int rdlock_parse_slots(const char *s, __u32 *slots)
{
	__u32 n;

	if (parse_range(s, 2, RDLOCK_LS_SLOTS_MAX, &n) || n % 2)
		return -EINVAL;
	*slots = n;
	return 0;
}

int rdlock_parse_queue_bits(const char *s, __u8 *bits)
{
	__u32 n;

	if (parse_range(s, RDLOCK_CQL_QUEUE_BITS_MIN, RDLOCK_CQL_QUEUE_BITS_MAX,
			&n))
		return -EINVAL;
	*bits = n;
	return 0;
}

int rdlock_parse_version_bits(const char *s, __u8 *bits)
{
	__u32 n;

	if (parse_range(s, RDLOCK_CQL_VERSION_BITS_MIN,
			RDLOCK_CQL_VERSION_BITS_MAX, &n))
		return -EINVAL;
	*bits = n;
	return 0;
}

int rdlock_parse_hier(const char *s, __u32 *flags)
{
	if (!s || !strcmp(s, "task-fair")) {
		*flags |= RDLOCK_LS_CQL_HIER;
		return 0;
	}
	if (strcmp(s, "phase-fair"))
		return -EINVAL;
	*flags |= RDLOCK_LS_CQL_HIER | RDLOCK_LS_CQL_PHASE_FAIR;
	return 0;
}

/* Message "line N: ..." (no prefix for line 0) into @err; -EINVAL. */
static int vconf_err(char *err, size_t errlen, unsigned int line,
		     const char *fmt, va_list ap)
{
	int n = 0;

	if (line)
		n = snprintf(err, errlen, "line %u: ", line);
	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	vsnprintf(err + n, errlen - n, fmt, ap);
	return -EINVAL;
}

static int conf_err(char *err, size_t errlen, unsigned int line,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vconf_err(err, errlen, line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int same_host(const struct rdlock_addr *a, const struct rdlock_addr *b)
{
	return a->family == b->family && a->scope_id == b->scope_id &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static __u16 real_port(const struct rdlock_addr *a)
{
	return a->port ? a->port : RDLOCK_DEFAULT_PORT;
}

static const struct rdlock_conf_node *find_node(const struct rdlock_conf *conf,
						__u32 id)
{
	unsigned int i;

	for (i = 0; i < conf->nr_nodes; i++)
		if (conf->nodes[i].id == id)
			return &conf->nodes[i];
	return NULL;
}

/* Per line parsing state: the words and where errors go. */
struct conf_line {
	unsigned int line;
	int nr;
	char *w[CONF_MAX_WORDS];
	char *err;
	size_t errlen;
};

/* An error of line @l; -EINVAL. */
static int lerr(const struct conf_line *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vconf_err(l->err, l->errlen, l->line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_cluster(struct rdlock_conf *conf, struct conf_line *l)
{
	if (l->nr != 2)
		return lerr(l, "'cluster' needs one ID");
	if (conf->cluster_line)
		return lerr(l, "'cluster' given twice (first on line %u)",
			    conf->cluster_line);
	if (rdlock_parse_u32(l->w[1], &conf->cluster_id) || !conf->cluster_id)
		return lerr(l, "bad cluster id '%s' (non-zero 32-bit number)",
			    l->w[1]);
	conf->cluster_line = l->line;
	return 0;
}

static int parse_node(struct rdlock_conf *conf, struct conf_line *l)
{
	struct rdlock_conf_node node, *n = &node;
	const struct rdlock_conf_node *old;
	unsigned int i;

	if (l->nr != 3 && l->nr != 4)
		return lerr(l, "'node' needs an ID, an ADDRESS and maybe a NAME");
	if (rdlock_parse_node_id(l->w[1], &n->id))
		return lerr(l, "bad node id '%s' (0..%u)", l->w[1],
			    RDLOCK_MAX_NODES - 1);
	old = find_node(conf, n->id);
	if (old)
		return lerr(l, "node %u given twice (first on line %u)", n->id,
			    old->line);
	if (rdlock_parse_addr(l->w[2], &n->addr))
		return lerr(l, "bad address '%s' (IPv4[:PORT], [IPv6]:PORT, IPv6 or IPv6%%SCOPE)",
			    l->w[2]);
	for (i = 0; i < conf->nr_nodes; i++) {
		old = &conf->nodes[i];
		if (same_host(&old->addr, &n->addr) &&
		    real_port(&old->addr) == real_port(&n->addr))
			return lerr(l, "address '%s' is node %u's too (line %u)",
				    l->w[2], old->id, old->line);
	}
	memset(n->name, 0, sizeof(n->name));
	if (l->nr == 4) {
		if (parse_padded_name(l->w[3], CLUSTER_NAME_CHARS,
				      RDLOCK_CONF_NODE_NAME_MAX - 1, n->name,
				      sizeof(n->name)))
			return lerr(l, "bad node name '%s' (1..%u of A-Z a-z 0-9 _ . -)",
				    l->w[3], RDLOCK_CONF_NODE_NAME_MAX - 1);
		for (i = 0; i < conf->nr_nodes; i++)
			if (!strcmp(conf->nodes[i].name, n->name))
				return lerr(l, "name '%s' is node %u's too (line %u)",
					    n->name, conf->nodes[i].id,
					    conf->nodes[i].line);
	}
	/* Ids are unique and below RDLOCK_MAX_NODES: there is room. */
	n->line = l->line;
	conf->nodes[conf->nr_nodes++] = node;
	return 0;
}

static int parse_self(struct rdlock_conf *conf, struct conf_line *l)
{
	if (l->nr != 2)
		return lerr(l, "'self' needs one node ID");
	if (conf->self_line)
		return lerr(l, "'self' given twice (first on line %u)",
			    conf->self_line);
	if (rdlock_parse_node_id(l->w[1], &conf->self))
		return lerr(l, "bad node id '%s' (0..%u)", l->w[1],
			    RDLOCK_MAX_NODES - 1);
	conf->has_self = 1;
	conf->self_line = l->line;
	return 0;
}

/* The cluster's name (SET_CONFIG's name), checked against file systems'. */
static int parse_cluster_name(struct rdlock_conf *conf, struct conf_line *l)
{
	if (l->nr != 2)
		return lerr(l, "'cluster_name' needs one NAME");
	if (conf->name_line)
		return lerr(l, "'cluster_name' given twice (first on line %u)",
			    conf->name_line);
	if (rdlock_parse_cluster_name(l->w[1], conf->name))
		return lerr(l, "bad cluster name '%s' (1..%u of A-Z a-z 0-9 _ . -)",
			    l->w[1], (unsigned int)RDLOCK_CLUSTER_NAME_MAX);
	conf->name_line = l->line;
	return 0;
}

/* No cluster key: up is allowed without one (RDLOCK_CONFIG_INSECURE_NO_KEY). */
static int parse_insecure_no_key(struct rdlock_conf *conf, struct conf_line *l)
{
	if (l->nr != 1)
		return lerr(l, "'insecure_no_key' takes no argument");
	if (conf->insecure_line)
		return lerr(l, "'insecure_no_key' given twice (first on line %u)",
			    conf->insecure_line);
	conf->insecure_line = l->line;
	return 0;
}

/* The file itself is read when the configuration is applied (key.c). */
static int parse_key_file(struct rdlock_conf *conf, struct conf_line *l)
{
	if (l->nr != 2)
		return lerr(l, "'key_file' needs one PATH");
	if (conf->key_file_line)
		return lerr(l, "'key_file' given twice (first on line %u)",
			    conf->key_file_line);
	if (l->w[1][0] != '/')
		return lerr(l, "key file '%s': not an absolute path", l->w[1]);
	if (strlen(l->w[1]) >= sizeof(conf->key_file))
		return lerr(l, "key file path longer than %u characters",
			    RDLOCK_CONF_PATH_MAX - 1);
	strcpy(conf->key_file, l->w[1]);
	conf->key_file_line = l->line;
	return 0;
}

/* The parameters of rdlock.ko whose values can be checked here. */
static int check_option(struct conf_line *l, const char *name, const char *val)
{
	static const struct {
		const char *name;
		__u32 min, max;
	} ranges[] = {
		{ "table_slots", 9, 524288 },
		{ "op_timeout_ms", 1, 3600000 },
		{ "dlm_slots", 1200, 262144 },
		{ "dlm_local_defer_ms", 0, 0xffffffff },
		{ "user_locks_max", 1, 16777216 },
		{ "user_finishing_max", 1, 4096 },
	};
	unsigned int i;
	__u32 v;

	if (!strcmp(name, "backend")) {
		if (strcmp(val, "auto") && strcmp(val, "verbs") &&
		    strcmp(val, "twosided"))
			return lerr(l, "bad backend '%s' (auto, verbs or twosided)",
				    val);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(ranges); i++) {
		if (strcmp(name, ranges[i].name))
			continue;
		if (rdlock_parse_u32(val, &v) || v < ranges[i].min ||
		    v > ranges[i].max)
			return lerr(l, "bad %s '%s' (%u..%u)", name, val,
				    ranges[i].min, ranges[i].max);
	}
	return 0;
}

static int parse_option(struct rdlock_conf *conf, struct conf_line *l)
{
	struct rdlock_conf_option *o = &conf->options[conf->nr_options];
	const char *name = l->w[1], *val = l->w[2];
	unsigned int i;
	size_t len;

	if (l->nr != 3)
		return lerr(l, "'option' needs a NAME and a VALUE");
	len = strlen(name);
	if (len >= RDLOCK_CONF_OPT_NAME_MAX || strspn(name, OPT_NAME_CHARS) != len ||
	    !(name[0] >= 'a' && name[0] <= 'z'))
		return lerr(l, "bad option name '%s' (a parameter of rdlock.ko: a-z 0-9 _)",
			    name);
	for (i = 0; i < conf->nr_options; i++)
		if (!strcmp(conf->options[i].name, name))
			return lerr(l, "option %s given twice (first on line %u)",
				    name, conf->options[i].line);
	if (conf->nr_options == RDLOCK_CONF_MAX_OPTIONS)
		return lerr(l, "more than %u options", RDLOCK_CONF_MAX_OPTIONS);
	if (strlen(val) >= RDLOCK_CONF_OPT_VALUE_MAX)
		return lerr(l, "option %s: value longer than %u characters",
			    name, RDLOCK_CONF_OPT_VALUE_MAX - 1);
	if (check_option(l, name, val))
		return -EINVAL;
	strcpy(o->name, name);
	strcpy(o->value, val);
	o->line = l->line;
	conf->nr_options++;
	return 0;
}

enum ls_attr { LS_PROTO, LS_LEASE, LS_OMEGA, LS_SLOTS, LS_UPDATE,
	       LS_QUEUE_BITS, LS_VERSION_BITS, LS_HIER, LS_DLM, LS_UID, LS_GID,
	       LS_MODE };

/* Whether an attribute takes a value: as ls-create's options do. */
enum ls_value { LS_VAL_NONE, LS_VAL_REQUIRED, LS_VAL_OPTIONAL };

static const struct {
	const char *name;
	enum ls_value value;
} ls_attrs[] = {
	[LS_PROTO] = { "proto", LS_VAL_REQUIRED },
	[LS_LEASE] = { "lease-ms", LS_VAL_REQUIRED },
	[LS_OMEGA] = { "omega-us", LS_VAL_REQUIRED },
	[LS_SLOTS] = { "slots", LS_VAL_REQUIRED },
	[LS_UPDATE] = { "update", LS_VAL_NONE },
	[LS_QUEUE_BITS] = { "queue-bits", LS_VAL_REQUIRED },
	[LS_VERSION_BITS] = { "version-bits", LS_VAL_REQUIRED },
	/* Only as --hier=FAIRNESS: a next word is another attribute. */
	[LS_HIER] = { "hier", LS_VAL_OPTIONAL },
	[LS_DLM] = { "dlm", LS_VAL_NONE },
	[LS_UID] = { "uid", LS_VAL_REQUIRED },
	[LS_GID] = { "gid", LS_VAL_REQUIRED },
	[LS_MODE] = { "mode", LS_VAL_REQUIRED },
};

/* One attribute, as ls-create's option of the same name. */
static int parse_ls_attr(struct rdlock_conf_ls *ls, struct conf_line *l,
			 enum ls_attr a, const char *val)
{
	struct rdlock_ls_create *c = &ls->c;

	switch (a) {
	case LS_PROTO:
		if (rdlock_parse_proto(val, &c->proto))
			return lerr(l, "bad protocol '%s' (bakery, caslock or cql)", val);
		break;
	case LS_LEASE:
		if (rdlock_parse_u32(val, &c->lease_ms))
			return lerr(l, "bad lease '%s' (milliseconds)", val);
		break;
	case LS_OMEGA:
		if (rdlock_parse_u32(val, &c->omega_us))
			return lerr(l, "bad omega '%s' (microseconds)", val);
		break;
	case LS_SLOTS:
		if (rdlock_parse_slots(val, &c->slots))
			return lerr(l, "bad slot count '%s' (even, 2..%u)", val,
				    RDLOCK_LS_SLOTS_MAX);
		break;
	case LS_UPDATE:
		c->flags |= RDLOCK_LS_UPDATE;
		break;
	case LS_QUEUE_BITS:
		if (rdlock_parse_queue_bits(val, &c->queue_bits))
			return lerr(l, "bad queue bits '%s' (%u..%u)", val,
				    RDLOCK_CQL_QUEUE_BITS_MIN,
				    RDLOCK_CQL_QUEUE_BITS_MAX);
		break;
	case LS_VERSION_BITS:
		if (rdlock_parse_version_bits(val, &c->version_bits))
			return lerr(l, "bad version bits '%s' (%u..%u)", val,
				    RDLOCK_CQL_VERSION_BITS_MIN,
				    RDLOCK_CQL_VERSION_BITS_MAX);
		break;
	case LS_HIER:
		if (rdlock_parse_hier(val, &c->flags))
			return lerr(l, "bad fairness '%s' (task-fair or phase-fair)",
				    val);
		break;
	case LS_DLM:
		/* The DLM layer fixes the protocol and the size. */
		c->flags = RDLOCK_LS_DLM;
		c->proto = 0;
		c->slots = 0;
		break;
	case LS_UID:
		if (rdlock_parse_u32(val, &c->uid))
			return lerr(l, "bad uid '%s' (a number)", val);
		ls->has_uid = 1;
		break;
	case LS_GID:
		if (rdlock_parse_u32(val, &c->gid))
			return lerr(l, "bad gid '%s' (a number)", val);
		ls->has_gid = 1;
		break;
	case LS_MODE:
		if (rdlock_parse_mode(val, &c->mode))
			return lerr(l, "bad mode '%s' (octal, at most 0777)", val);
		break;
	}
	return 0;
}

static int parse_lockspace(struct rdlock_conf *conf, struct conf_line *l)
{
	struct rdlock_conf_ls lsbuf, *ls = &lsbuf;
	unsigned int seen = 0, i;
	const char *val;
	char *word, *eq;
	size_t a;
	int w;

	if (l->nr < 2)
		return lerr(l, "'lockspace' needs a NAME");
	memset(ls, 0, sizeof(*ls));
	if (rdlock_parse_ls_name(l->w[1], ls->c.name))
		return lerr(l, "bad lockspace name '%s' (1..31 of A-Z a-z 0-9 _ . : -)",
			    l->w[1]);
	for (i = 0; i < conf->nr_ls; i++)
		if (!strcmp(conf->ls[i].c.name, ls->c.name))
			return lerr(l, "lockspace %s given twice (first on line %u)",
				    ls->c.name, conf->ls[i].line);
	if (conf->nr_ls == RDLOCK_CONF_MAX_LS)
		return lerr(l, "more than %u lockspaces", RDLOCK_CONF_MAX_LS);
	ls->c.version = RDLOCK_UAPI_VERSION;
	ls->c.proto = RDLOCK_PROTO_BAKERY;
	ls->c.slots = LS_DEFAULT_SLOTS;
	ls->c.mode = LS_DEFAULT_MODE;

	for (w = 2; w < l->nr; w++) {
		word = l->w[w];
		if (strncmp(word, "--", 2))
			return lerr(l,
				    "lockspace %s: unexpected '%s' (attributes are --NAME [VALUE])",
				    ls->c.name, word);
		eq = strchr(word, '=');
		if (eq)
			*eq = '\0';
		for (a = 0; a < ARRAY_SIZE(ls_attrs); a++)
			if (!strcmp(word + 2, ls_attrs[a].name))
				break;
		if (a == ARRAY_SIZE(ls_attrs))
			return lerr(l,
				    "lockspace %s: unknown attribute '%s' (--proto, --lease-ms, --omega-us, --slots, --update, --queue-bits, --version-bits, --hier, --dlm, --uid, --gid, --mode)",
				    ls->c.name, word);
		if (seen & (1U << a))
			return lerr(l, "lockspace %s: %s given twice",
				    ls->c.name, word);
		seen |= 1U << a;
		if (ls_attrs[a].value == LS_VAL_NONE) {
			if (eq)
				return lerr(l, "lockspace %s: %s takes no value",
					    ls->c.name, word);
			val = NULL;
		} else if (eq) {
			val = eq + 1;
		} else if (ls_attrs[a].value == LS_VAL_OPTIONAL) {
			val = NULL;
		} else if (w + 1 < l->nr) {
			val = l->w[++w];
		} else {
			return lerr(l, "lockspace %s: %s needs a value",
				    ls->c.name, word);
		}
		if (parse_ls_attr(ls, l, a, val))
			return -EINVAL;
	}
	/* The DLM layer sets the protocol and the geometry. */
	if (seen & 1U << LS_DLM && seen & ~(1U << LS_DLM | 1U << LS_UID |
					   1U << LS_GID | 1U << LS_MODE))
		return lerr(l, "lockspace %s: --dlm takes only --uid, --gid and --mode",
			    ls->c.name);
	ls->line = l->line;
	conf->ls[conf->nr_ls++] = lsbuf;
	return 0;
}

/* Split @buf (one line, newline removed) into words; comments dropped. */
static int split_line(char *buf, struct conf_line *l)
{
	char *p = buf, *hash = strchr(buf, '#');

	if (hash)
		*hash = '\0';
	for (; *p; p++) {
		if (((unsigned char)*p < ' ' && *p != '\t' && *p != '\r') ||
		    *p == 0x7f)
			return lerr(l, "control character 0x%02x",
				    (unsigned char)*p);
	}
	l->nr = 0;
	for (p = strtok(buf, " \t\r"); p; p = strtok(NULL, " \t\r")) {
		if (l->nr == CONF_MAX_WORDS)
			return lerr(l, "more than %d words", CONF_MAX_WORDS);
		l->w[l->nr++] = p;
	}
	return 0;
}

int rdlock_conf_parse(const char *text, struct rdlock_conf *conf,
		      char *err, size_t errlen)
{
	static const struct {
		const char *word;
		int (*fn)(struct rdlock_conf *conf, struct conf_line *l);
	} directives[] = {
		{ "cluster", parse_cluster },
		{ "cluster_name", parse_cluster_name },
		{ "node", parse_node },
		{ "self", parse_self },
		{ "key_file", parse_key_file },
		{ "insecure_no_key", parse_insecure_no_key },
		{ "option", parse_option },
		{ "lockspace", parse_lockspace },
	};
	char buf[RDLOCK_CONF_LINE_MAX + 2];
	struct conf_line l = { .err = err, .errlen = errlen };
	const char *p = text, *nl;
	size_t len, i;

	memset(conf, 0, sizeof(*conf));
	if (errlen)
		err[0] = '\0';
	if (strlen(text) > RDLOCK_CONF_FILE_MAX)
		return conf_err(err, errlen, 0, "longer than %u bytes",
				RDLOCK_CONF_FILE_MAX);
	while (*p) {
		l.line++;
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > RDLOCK_CONF_LINE_MAX)
			return lerr(&l, "longer than %u characters",
				    RDLOCK_CONF_LINE_MAX);
		memcpy(buf, p, len);
		buf[len] = '\0';
		p += len + (nl ? 1 : 0);
		if (split_line(buf, &l))
			return -EINVAL;
		if (!l.nr)
			continue;
		for (i = 0; i < ARRAY_SIZE(directives); i++)
			if (!strcmp(l.w[0], directives[i].word))
				break;
		if (i == ARRAY_SIZE(directives))
			return lerr(&l,
				    "unknown directive '%s' (cluster, cluster_name, node, self, key_file, insecure_no_key, option or lockspace)",
				    l.w[0]);
		if (directives[i].fn(conf, &l))
			return -EINVAL;
	}
	if (!conf->cluster_line)
		return conf_err(err, errlen, 0, "no 'cluster ID' line");
	if (!conf->nr_nodes)
		return conf_err(err, errlen, 0, "no 'node ID ADDRESS' line");
	if (conf->key_file_line && conf->insecure_line)
		return conf_err(err, errlen, conf->insecure_line,
				"'insecure_no_key' and 'key_file' (line %u): one or the other",
				conf->key_file_line);
	if (conf->has_self && !find_node(conf, conf->self))
		return conf_err(err, errlen, conf->self_line,
				"self %u: no 'node %u' line", conf->self,
				conf->self);
	return 0;
}

int rdlock_conf_find_self(const struct rdlock_conf *conf,
			  const struct rdlock_addr *local, unsigned int nr_local,
			  __u32 *self, char *err, size_t errlen)
{
	const struct rdlock_conf_node *found = NULL, *n;
	struct rdlock_addr a;
	unsigned int i, j;

	if (conf->has_self) {
		*self = conf->self;
		return 0;
	}
	for (i = 0; i < conf->nr_nodes; i++) {
		n = &conf->nodes[i];
		for (j = 0; j < nr_local; j++) {
			a = local[j];
			/* A node without a scope matches any interface's. */
			if (!n->addr.scope_id)
				a.scope_id = 0;
			if (same_host(&n->addr, &a))
				break;
		}
		if (j == nr_local)
			continue;
		if (found) {
			conf_err(err, errlen, 0,
				 "nodes %u (line %u) and %u (line %u) both have addresses of this host: add 'self ID'",
				 found->id, found->line, n->id, n->line);
			return -EEXIST;
		}
		found = n;
	}
	if (!found) {
		conf_err(err, errlen, 0,
			 "no node has an address of this host: add 'self ID'");
		return -ENOENT;
	}
	*self = found->id;
	return 0;
}

void rdlock_conf_print(const struct rdlock_conf *conf, __u32 self,
		       unsigned int timeout, FILE *f)
{
	const struct rdlock_conf_node *me = find_node(conf, self);
	const struct rdlock_ls_create *c;
	char addr[RDLOCK_ADDR_STRLEN];
	unsigned int i;

	for (i = 0; i < conf->nr_options; i++)
		fprintf(f, "echo %s > " RDLOCK_CONF_PARAM_DIR "%s\n",
			conf->options[i].value, conf->options[i].name);
	if (!me || rdlock_format_addr(&me->addr, addr, sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	fprintf(f, "rdlockctl config --cluster %u --node %u --addr %s",
		conf->cluster_id, self, addr);
	if (conf->name_line)
		fprintf(f, " --name %.*s", RDLOCK_CLUSTER_NAME_MAX, conf->name);
	for (i = 0; i < conf->nr_nodes; i++) {
		if (conf->nodes[i].id == self)
			continue;
		if (rdlock_format_addr(&conf->nodes[i].addr, addr, sizeof(addr)))
			snprintf(addr, sizeof(addr), "?");
		fprintf(f, " --peer %u=%s", conf->nodes[i].id, addr);
	}
	if (conf->key_file[0])
		fprintf(f, " --key-file %s", conf->key_file);
	if (conf->insecure_line)
		fprintf(f, " --insecure-no-key");
	fprintf(f, "\nrdlockctl up\n");
	if (conf->nr_ls)
		fprintf(f, "rdlockctl wait --timeout %u\n", timeout);
	for (i = 0; i < conf->nr_ls; i++) {
		c = &conf->ls[i].c;
		fprintf(f, "rdlockctl ls-create %s", c->name);
		if (c->flags & RDLOCK_LS_DLM) {
			fprintf(f, " --dlm");
		} else {
			fprintf(f, " --proto %s --lease-ms %u",
				rdlock_proto_name(c->proto), c->lease_ms);
			fprintf(f, " --omega-us %u --slots %u%s", c->omega_us,
				c->slots,
				c->flags & RDLOCK_LS_UPDATE ? " --update" : "");
		}
		if (c->queue_bits)
			fprintf(f, " --queue-bits %u", c->queue_bits);
		if (c->version_bits)
			fprintf(f, " --version-bits %u", c->version_bits);
		if (c->flags & RDLOCK_LS_CQL_HIER)
			fprintf(f, " --hier=%s",
				c->flags & RDLOCK_LS_CQL_PHASE_FAIR ?
				"phase-fair" : "task-fair");
		if (conf->ls[i].has_uid)
			fprintf(f, " --uid %u", c->uid);
		if (conf->ls[i].has_gid)
			fprintf(f, " --gid %u", c->gid);
		fprintf(f, " --mode %04o\n", c->mode);
	}
}
