// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of userspace/conf.c, the rdlock.conf parser, TAP output.
 * Every accepted file is checked through the commands "up --config" would
 * run (rdlock_conf_print()), every refused one by its exact message.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../addr.h"
#include "../conf.h"
#include "tap.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define HEAD		"cluster 7\nnode 0 10.77.0.1\nnode 1 10.77.0.2\n"
#define CONFIG_0	"rdlockctl config --cluster 7 --node 0 --addr 10.77.0.1 --peer 1=10.77.0.2\nrdlockctl up\n"
#define CONFIG_1	"rdlockctl config --cluster 7 --node 1 --addr 10.77.0.2 --peer 0=10.77.0.1\nrdlockctl up\n"
#define KEYED_1		"rdlockctl config --cluster 7 --node 1 --addr 10.77.0.2 --peer 0=10.77.0.1 --key-file /etc/rdlock/cluster.key\nrdlockctl up\n"
#define INSECURE_1	"rdlockctl config --cluster 7 --node 1 --addr 10.77.0.2 --peer 0=10.77.0.1 --insecure-no-key\nrdlockctl up\n"
#define NAMED_1		"rdlockctl config --cluster 7 --node 1 --addr 10.77.0.2 --name ocfs.a_1-B --peer 0=10.77.0.1\nrdlockctl up\n"
#define NAMED16_1	"rdlockctl config --cluster 7 --node 1 --addr 10.77.0.2 --name 1234567890abcdef --peer 0=10.77.0.1\nrdlockctl up\n"
#define DIRECTIVES	"(cluster, cluster_name, node, self, key_file, insecure_no_key, option or lockspace)"
#define NAME_CHARS	"(1..16 of A-Z a-z 0-9 _ . -)"
#define LS_DEFAULTS	"--proto bakery --lease-ms 0 --omega-us 0 --slots 1024"
#define WAIT		"rdlockctl wait --timeout 60\n"
#define X10		"1234567890"
#define X10S		"1 2 3 4 5 6 7 8 9 0 "

/*
 * @err NULL: accepted, and rdlock_conf_print() of it, on a host whose
 * addresses are 10.77.0.2 and fe80::2%3, is @out. Otherwise the message.
 */
struct conf_case {
	const char *desc;
	const char *in;
	const char *err;
	const char *out;
};

static const struct conf_case conf_cases[] = {
	/* Accepted files. */
	{ "minimal, self by address", HEAD, NULL, CONFIG_1 },
	{ "self line wins over the address", HEAD "self 0\n", NULL, CONFIG_0 },
	{ "comments, blanks, tabs, CRLF, no final newline",
	  "# rdlock\n\n  cluster\t7 # id\r\nnode 0 10.77.0.1\n\t\nnode 1 10.77.0.2#x\nself 0",
	  NULL, CONFIG_0 },
	/* Names are the tool's alone: the configuration is the same. */
	{ "node names", "cluster 7\nnode 0 10.77.0.1 alpha\nnode 1 10.77.0.2 "
	  X10 X10 X10 X10 X10 X10 "abc\n", NULL, CONFIG_1 },
	{ "hex cluster id as --cluster", "cluster 0x10\nnode 1 10.77.0.2\n", NULL,
	  "rdlockctl config --cluster 16 --node 1 --addr 10.77.0.2\nrdlockctl up\n" },
	{ "ports and IPv6",
	  "cluster 9\nnode 3 10.77.0.2:7000\nnode 31 [2001:db8::1]:18600\nnode 0 10.77.0.2:7001\nself 31\n",
	  NULL,
	  "rdlockctl config --cluster 9 --node 31 --addr [2001:db8::1]:18600 --peer 3=10.77.0.2:7000 --peer 0=10.77.0.2:7001\n"
	  "rdlockctl up\n" },
	{ "link-local node found by address and scope",
	  "cluster 9\nnode 4 fe80::2%3\nnode 5 fe80::5%3\n", NULL,
	  "rdlockctl config --cluster 9 --node 4 --addr fe80::2%3 --peer 5=fe80::5%3\n"
	  "rdlockctl up\n" },
	{ "options, in file order",
	  HEAD "option op_timeout_ms 2000\noption backend twosided\n"
	  "option table_slots 0x8000\noption some_future_param x=y\n",
	  NULL,
	  "echo 2000 > /sys/module/rdlock/parameters/op_timeout_ms\n"
	  "echo twosided > /sys/module/rdlock/parameters/backend\n"
	  "echo 0x8000 > /sys/module/rdlock/parameters/table_slots\n"
	  "echo x=y > /sys/module/rdlock/parameters/some_future_param\n"
	  CONFIG_1 },
	{ "option ranges' ends",
	  HEAD "option table_slots 9\noption op_timeout_ms 3600000\noption backend auto\n",
	  NULL,
	  "echo 9 > /sys/module/rdlock/parameters/table_slots\n"
	  "echo 3600000 > /sys/module/rdlock/parameters/op_timeout_ms\n"
	  "echo auto > /sys/module/rdlock/parameters/backend\n" CONFIG_1 },
	{ "lockspaces with defaults and every attribute",
	  HEAD "lockspace jobs\n"
	  "lockspace a.b:c-d_9 --proto caslock --lease-ms 500 --omega-us 20 --slots 8 --update --uid 1000 --gid 100 --mode 0640\n"
	  "lockspace x --proto=bakery --slots=65536 --mode=0 --uid=0\n",
	  NULL,
	  CONFIG_1 WAIT
	  "rdlockctl ls-create jobs " LS_DEFAULTS " --mode 0666\n"
	  "rdlockctl ls-create a.b:c-d_9 --proto caslock --lease-ms 500 --omega-us 20 --slots 8 --update --uid 1000 --gid 100 --mode 0640\n"
	  "rdlockctl ls-create x --proto bakery --lease-ms 0 --omega-us 0 --slots 65536 --uid 0 --mode 0000\n",
	},
	{ "lockspaces with the CQL and DLM attributes",
	  HEAD "lockspace q --proto cql --slots 512 --queue-bits 4 --version-bits=8 --hier\n"
	  "lockspace p --proto=cql --hier=phase-fair --mode 0600\n"
	  "lockspace t --hier=task-fair --proto cql\n"
	  "lockspace d --dlm --gid 100 --mode 0660\n",
	  NULL,
	  CONFIG_1 WAIT
	  "rdlockctl ls-create q --proto cql --lease-ms 0 --omega-us 0 --slots 512 --queue-bits 4 --version-bits 8 --hier=task-fair --mode 0666\n"
	  "rdlockctl ls-create p --proto cql --lease-ms 0 --omega-us 0 --slots 1024 --hier=phase-fair --mode 0600\n"
	  "rdlockctl ls-create t --proto cql --lease-ms 0 --omega-us 0 --slots 1024 --hier=task-fair --mode 0666\n"
	  "rdlockctl ls-create d --dlm --gid 100 --mode 0660\n",
	},
	{ "lockspace name of 31 characters",
	  HEAD "lockspace " X10 X10 X10 "1\n", NULL,
	  CONFIG_1 WAIT "rdlockctl ls-create " X10 X10 X10 "1 " LS_DEFAULTS " --mode 0666\n" },
	{ "directives in any order",
	  "lockspace l\noption backend verbs\nnode 1 10.77.0.2\ncluster 7\n",
	  NULL,
	  "echo verbs > /sys/module/rdlock/parameters/backend\n"
	  "rdlockctl config --cluster 7 --node 1 --addr 10.77.0.2\nrdlockctl up\n" WAIT
	  "rdlockctl ls-create l " LS_DEFAULTS " --mode 0666\n" },
	{ "key file", HEAD "key_file /etc/rdlock/cluster.key\n", NULL,
	  KEYED_1 },
	{ "no key, insecure", HEAD "insecure_no_key\n", NULL, INSECURE_1 },
	{ "cluster name", HEAD "cluster_name ocfs.a_1-B\n", NULL,
	  NAMED_1 },
	{ "cluster name of 16 characters", HEAD "cluster_name " X10 "abcdef\n",
	  NULL,
	  NAMED16_1 },

	/* Refused: the file as a whole. */
	{ "empty file", "", "no 'cluster ID' line", NULL },
	{ "only comments", "# nothing\n\n", "no 'cluster ID' line", NULL },
	{ "no node", "cluster 7\n", "no 'node ID ADDRESS' line", NULL },
	{ "no cluster", "node 0 10.77.0.1\n", "no 'cluster ID' line", NULL },
	{ "self without its node", HEAD "\nself 2\n", "line 5: self 2: no 'node 2' line", NULL },

	/* Refused: one line. */
	{ "key file twice", HEAD "key_file /a\nkey_file /b\n",
	  "line 5: 'key_file' given twice (first on line 4)", NULL },
	{ "key file relative", HEAD "key_file cluster.key\n",
	  "line 4: key file 'cluster.key': not an absolute path", NULL },
	{ "key file without a path", HEAD "key_file\n",
	  "line 4: 'key_file' needs one PATH", NULL },
	{ "cluster name of 17 characters", HEAD "cluster_name " X10 "abcdefg\n",
	  "line 4: bad cluster name '" X10 "abcdefg' " NAME_CHARS, NULL },
	{ "cluster name with ':'", HEAD "cluster_name a:b\n",
	  "line 4: bad cluster name 'a:b' " NAME_CHARS, NULL },
	{ "cluster name without a name", HEAD "cluster_name\n",
	  "line 4: 'cluster_name' needs one NAME", NULL },
	{ "cluster name twice", HEAD "cluster_name a\ncluster_name a\n",
	  "line 5: 'cluster_name' given twice (first on line 4)", NULL },
	{ "insecure with an argument", HEAD "insecure_no_key yes\n",
	  "line 4: 'insecure_no_key' takes no argument", NULL },
	{ "insecure twice", HEAD "insecure_no_key\ninsecure_no_key\n",
	  "line 5: 'insecure_no_key' given twice (first on line 4)", NULL },
	{ "insecure and a key file", HEAD "key_file /k\ninsecure_no_key\n",
	  "line 5: 'insecure_no_key' and 'key_file' (line 4): one or the other",
	  NULL },
	{ "unknown directive", HEAD "nodes 2 10.77.0.3\n",
	  "line 4: unknown directive 'nodes' " DIRECTIVES, NULL },
	{ "directive case", "Cluster 7\n",
	  "line 1: unknown directive 'Cluster' " DIRECTIVES, NULL },
	{ "cluster without id", "cluster\n", "line 1: 'cluster' needs one ID", NULL },
	{ "cluster with two ids", "cluster 7 8\n", "line 1: 'cluster' needs one ID", NULL },
	{ "cluster 0", "cluster 0\n", "line 1: bad cluster id '0' (non-zero 32-bit number)", NULL },
	{ "cluster -1", "cluster -1\n",
	  "line 1: bad cluster id '-1' (non-zero 32-bit number)", NULL },
	{ "cluster too big", "cluster 4294967296\n",
	  "line 1: bad cluster id '4294967296' (non-zero 32-bit number)", NULL },
	{ "cluster twice", "cluster 7\n# x\ncluster 7\n",
	  "line 3: 'cluster' given twice (first on line 1)", NULL },
	{ "node without address", "cluster 7\nnode 0\n",
	  "line 2: 'node' needs an ID, an ADDRESS and maybe a NAME", NULL },
	{ "node with a fourth word", "cluster 7\nnode 0 10.77.0.1 x y\n",
	  "line 2: 'node' needs an ID, an ADDRESS and maybe a NAME", NULL },
	{ "node name with a slash", "cluster 7\nnode 0 10.77.0.1 a/b\n",
	  "line 2: bad node name 'a/b' (1..63 of A-Z a-z 0-9 _ . -)", NULL },
	{ "node name of 64 characters",
	  "cluster 7\nnode 0 10.77.0.1 " X10 X10 X10 X10 X10 X10 "abcd\n",
	  "line 2: bad node name '" X10 X10 X10 X10 X10 X10 "abcd' (1..63 of A-Z a-z 0-9 _ . -)",
	  NULL },
	{ "node name twice", "cluster 7\nnode 0 10.77.0.1 a\nnode 1 10.77.0.2 a\n",
	  "line 3: name 'a' is node 0's too (line 2)", NULL },
	{ "node 32", "cluster 7\nnode 32 10.77.0.1\n", "line 2: bad node id '32' (0..31)", NULL },
	{ "node id not a number", "cluster 7\nnode a 10.77.0.1\n",
	  "line 2: bad node id 'a' (0..31)", NULL },
	{ "node twice", HEAD "node 1 10.77.0.3\n",
	  "line 4: node 1 given twice (first on line 3)", NULL },
	{ "bad address", "cluster 7\nnode 0 10.77.0\n",
	  "line 2: bad address '10.77.0' (IPv4[:PORT], [IPv6]:PORT, IPv6 or IPv6%SCOPE)", NULL },
	{ "host name", "cluster 7\nnode 0 node0.example\n",
	  "line 2: bad address 'node0.example' (IPv4[:PORT], [IPv6]:PORT, IPv6 or IPv6%SCOPE)",
	  NULL },
	{ "address twice", HEAD "node 2 10.77.0.1\n",
	  "line 4: address '10.77.0.1' is node 0's too (line 2)", NULL },
	{ "address twice, default port spelt out", HEAD "node 2 10.77.0.2:18600\n",
	  "line 4: address '10.77.0.2:18600' is node 1's too (line 3)", NULL },
	{ "self twice", HEAD "self 0\nself 1\n",
	  "line 5: 'self' given twice (first on line 4)", NULL },
	{ "self without id", HEAD "self\n", "line 4: 'self' needs one node ID", NULL },
	{ "self 40", HEAD "self 40\n", "line 4: bad node id '40' (0..31)", NULL },
	{ "option without value", HEAD "option backend\n",
	  "line 4: 'option' needs a NAME and a VALUE", NULL },
	{ "option with two values", HEAD "option backend verbs twosided\n",
	  "line 4: 'option' needs a NAME and a VALUE", NULL },
	{ "option name with a dash", HEAD "option op-timeout-ms 5\n",
	  "line 4: bad option name 'op-timeout-ms' (a parameter of rdlock.ko: a-z 0-9 _)", NULL },
	{ "option name in capitals", HEAD "option Backend verbs\n",
	  "line 4: bad option name 'Backend' (a parameter of rdlock.ko: a-z 0-9 _)", NULL },
	{ "option name starting with a digit", HEAD "option 1x 1\n",
	  "line 4: bad option name '1x' (a parameter of rdlock.ko: a-z 0-9 _)", NULL },
	{ "option name of 32 characters", HEAD "option a" X10 X10 X10 "1 1\n",
	  "line 4: bad option name 'a" X10 X10 X10
	  "1' (a parameter of rdlock.ko: a-z 0-9 _)", NULL },
	{ "option value of 64 characters", HEAD "option x " X10 X10 X10 X10 X10 X10 "1234\n",
	  "line 4: option x: value longer than 63 characters", NULL },
	{ "option twice", HEAD "option backend verbs\noption backend verbs\n",
	  "line 5: option backend given twice (first on line 4)", NULL },
	{ "bad backend", HEAD "option backend rdma\n",
	  "line 4: bad backend 'rdma' (auto, verbs or twosided)", NULL },
	{ "table_slots too small", HEAD "option table_slots 8\n",
	  "line 4: bad table_slots '8' (9..524288)", NULL },
	{ "table_slots too big", HEAD "option table_slots 524289\n",
	  "line 4: bad table_slots '524289' (9..524288)", NULL },
	{ "op_timeout_ms 0", HEAD "option op_timeout_ms 0\n",
	  "line 4: bad op_timeout_ms '0' (1..3600000)", NULL },
	{ "op_timeout_ms too big", HEAD "option op_timeout_ms 3600001\n",
	  "line 4: bad op_timeout_ms '3600001' (1..3600000)", NULL },
	{ "op_timeout_ms with a unit", HEAD "option op_timeout_ms 5s\n",
	  "line 4: bad op_timeout_ms '5s' (1..3600000)", NULL },
	{ "dlm_slots too small", HEAD "option dlm_slots 1199\n",
	  "line 4: bad dlm_slots '1199' (1200..262144)", NULL },
	{ "dlm_slots too big", HEAD "option dlm_slots 262145\n",
	  "line 4: bad dlm_slots '262145' (1200..262144)", NULL },
	{ "dlm_local_defer_ms not a number", HEAD "option dlm_local_defer_ms 2s\n",
	  "line 4: bad dlm_local_defer_ms '2s' (0..4294967295)", NULL },
	{ "user_locks_max 0", HEAD "option user_locks_max 0\n",
	  "line 4: bad user_locks_max '0' (1..16777216)", NULL },
	{ "user_locks_max too big", HEAD "option user_locks_max 16777217\n",
	  "line 4: bad user_locks_max '16777217' (1..16777216)", NULL },
	{ "user_finishing_max 0", HEAD "option user_finishing_max 0\n",
	  "line 4: bad user_finishing_max '0' (1..4096)", NULL },
	{ "user_finishing_max too big",
	  HEAD "option user_finishing_max 4097\n",
	  "line 4: bad user_finishing_max '4097' (1..4096)", NULL },
	{ "lockspace without name", HEAD "lockspace\n", "line 4: 'lockspace' needs a NAME", NULL },
	{ "lockspace name of 32 characters", HEAD "lockspace " X10 X10 X10 "12\n",
	  "line 4: bad lockspace name '" X10 X10 X10 "12' (1..31 of A-Z a-z 0-9 _ . : -)", NULL },
	{ "lockspace name with a slash", HEAD "lockspace a/b\n",
	  "line 4: bad lockspace name 'a/b' (1..31 of A-Z a-z 0-9 _ . : -)", NULL },
	{ "lockspace twice", HEAD "lockspace a\nlockspace b\nlockspace a --slots 8\n",
	  "line 6: lockspace a given twice (first on line 4)", NULL },
	{ "lockspace word that is no attribute", HEAD "lockspace a 8\n",
	  "line 4: lockspace a: unexpected '8' (attributes are --NAME [VALUE])", NULL },
	{ "lockspace unknown attribute", HEAD "lockspace a --lease 5\n",
	  "line 4: lockspace a: unknown attribute '--lease' (--proto, --lease-ms, --omega-us, --slots, --update, --queue-bits, --version-bits, --hier, --dlm, --uid, --gid, --mode)",
	  NULL },
	{ "lockspace abbreviated attribute", HEAD "lockspace a --up\n",
	  "line 4: lockspace a: unknown attribute '--up' (--proto, --lease-ms, --omega-us, --slots, --update, --queue-bits, --version-bits, --hier, --dlm, --uid, --gid, --mode)",
	  NULL },
	{ "lockspace queue bits 0", HEAD "lockspace a --proto cql --queue-bits 0\n",
	  "line 4: bad queue bits '0' (1..12)", NULL },
	{ "lockspace queue bits 13", HEAD "lockspace a --proto cql --queue-bits 13\n",
	  "line 4: bad queue bits '13' (1..12)", NULL },
	{ "lockspace version bits 1", HEAD "lockspace a --proto cql --version-bits 1\n",
	  "line 4: bad version bits '1' (2..16)", NULL },
	{ "lockspace version bits 17", HEAD "lockspace a --proto cql --version-bits=17\n",
	  "line 4: bad version bits '17' (2..16)", NULL },
	{ "lockspace bad fairness", HEAD "lockspace a --proto cql --hier=fair\n",
	  "line 4: bad fairness 'fair' (task-fair or phase-fair)", NULL },
	{ "lockspace --hier takes no next word", HEAD "lockspace a --hier phase-fair\n",
	  "line 4: lockspace a: unexpected 'phase-fair' (attributes are --NAME [VALUE])", NULL },
	{ "lockspace --dlm with a protocol", HEAD "lockspace a --dlm --proto bakery\n",
	  "line 4: lockspace a: --dlm takes only --uid, --gid and --mode", NULL },
	{ "lockspace --dlm with slots", HEAD "lockspace a --slots 8 --dlm\n",
	  "line 4: lockspace a: --dlm takes only --uid, --gid and --mode", NULL },
	{ "lockspace --dlm with --hier", HEAD "lockspace a --dlm --hier\n",
	  "line 4: lockspace a: --dlm takes only --uid, --gid and --mode", NULL },
	{ "lockspace --dlm with a value", HEAD "lockspace a --dlm=1\n",
	  "line 4: lockspace a: --dlm takes no value", NULL },
	{ "lockspace attribute twice", HEAD "lockspace a --slots 8 --slots=8\n",
	  "line 4: lockspace a: --slots given twice", NULL },
	{ "lockspace attribute without value", HEAD "lockspace a --update --mode\n",
	  "line 4: lockspace a: --mode needs a value", NULL },
	{ "lockspace --update with a value", HEAD "lockspace a --update=1\n",
	  "line 4: lockspace a: --update takes no value", NULL },
	{ "lockspace bad protocol", HEAD "lockspace a --proto mcs\n",
	  "line 4: bad protocol 'mcs' (bakery, caslock or cql)", NULL },
	{ "lockspace odd slots", HEAD "lockspace a --slots 7\n",
	  "line 4: bad slot count '7' (even, 2..65536)", NULL },
	{ "lockspace too many slots", HEAD "lockspace a --slots 65538\n",
	  "line 4: bad slot count '65538' (even, 2..65536)", NULL },
	{ "lockspace 0 slots", HEAD "lockspace a --slots=0\n",
	  "line 4: bad slot count '0' (even, 2..65536)", NULL },
	{ "lockspace bad lease", HEAD "lockspace a --lease-ms -1\n",
	  "line 4: bad lease '-1' (milliseconds)", NULL },
	{ "lockspace bad omega", HEAD "lockspace a --omega-us 1.5\n",
	  "line 4: bad omega '1.5' (microseconds)", NULL },
	{ "lockspace uid by name", HEAD "lockspace a --uid root\n",
	  "line 4: bad uid 'root' (a number)", NULL },
	{ "lockspace gid by name", HEAD "lockspace a --gid wheel\n",
	  "line 4: bad gid 'wheel' (a number)", NULL },
	{ "lockspace mode not octal", HEAD "lockspace a --mode 0689\n",
	  "line 4: bad mode '0689' (octal, at most 0777)", NULL },
	{ "lockspace mode too big", HEAD "lockspace a --mode 01777\n",
	  "line 4: bad mode '01777' (octal, at most 0777)", NULL },
	{ "control character", HEAD "lockspace a\b\n", "line 4: control character 0x08", NULL },
	{ "DEL character", "cluster 7\x7f\n", "line 1: control character 0x7f", NULL },
	{ "too many words", HEAD "lockspace a " X10S X10S X10S "x\n",
	  "line 4: more than 32 words", NULL },
	{ "first error only", "cluster 0\nnode 99 x\n",
	  "line 1: bad cluster id '0' (non-zero 32-bit number)", NULL },
};

struct self_case {
	const char *desc;
	const char *in;
	int ret;
	__u32 self;
	const char *err;
};

/* rdlock_conf_find_self() on a host with 10.77.0.2 and fe80::2%3. */
static const struct self_case self_cases[] = {
	{ "no node of this host", "cluster 7\nnode 0 10.77.0.1\nnode 1 10.77.0.3\n",
	  -ENOENT, 0, "no node has an address of this host: add 'self ID'" },
	{ "two nodes of this host (ports)",
	  "cluster 7\nnode 0 10.77.0.2:1\nnode 1 10.77.0.2:2\n", -EEXIST, 0,
	  "nodes 0 (line 2) and 1 (line 3) both have addresses of this host: add 'self ID'" },
	{ "two nodes of this host (v4 and v6)",
	  "cluster 7\nnode 5 fe80::2%3\nnode 1 10.77.0.2\n", -EEXIST, 0,
	  "nodes 5 (line 2) and 1 (line 3) both have addresses of this host: add 'self ID'" },
	{ "link-local on another interface", "cluster 7\nnode 0 fe80::2%4\n",
	  -ENOENT, 0, "no node has an address of this host: add 'self ID'" },
	{ "link-local without scope matches any interface",
	  "cluster 7\nnode 0 10.77.0.1\nnode 6 fe80::2\n", 0, 6, "" },
	{ "self of a node that is not this host", "cluster 7\nnode 0 10.77.0.1\nself 0\n",
	  0, 0, "" },
};

static struct rdlock_conf conf;
static struct rdlock_addr local[2];

static void init_local(void)
{
	local[0].family = AF_INET;
	inet_pton(AF_INET, "10.77.0.2", local[0].addr);
	local[1].family = AF_INET6;
	local[1].scope_id = 3;
	inet_pton(AF_INET6, "fe80::2", local[1].addr);
}

static int check_conf(const struct conf_case *c)
{
	char err[RDLOCK_CONF_ERR_MAX], serr[RDLOCK_CONF_ERR_MAX];
	char *out = NULL;
	size_t len = 0;
	__u32 self;
	FILE *f;
	int ret, ok;

	ret = rdlock_conf_parse(c->in, &conf, err, sizeof(err));
	if (c->err) {
		if (ret != -EINVAL || strcmp(err, c->err)) {
			printf("# returned %d '%s', expected -EINVAL '%s'\n", ret,
			       err, c->err);
			return 0;
		}
		return 1;
	}
	if (ret) {
		printf("# refused: '%s'\n", err);
		return 0;
	}
	if (rdlock_conf_find_self(&conf, local, ARRAY_SIZE(local), &self,
				  serr, sizeof(serr))) {
		printf("# no self: '%s'\n", serr);
		return 0;
	}
	f = open_memstream(&out, &len);
	if (!f)
		return 0;
	rdlock_conf_print(&conf, self, 60, f);
	fclose(f);
	ok = !strcmp(out, c->out);
	if (!ok)
		printf("# printed:\n%s# expected:\n%s", out, c->out);
	free(out);
	return ok;
}

static int check_self(const struct self_case *c)
{
	char err[RDLOCK_CONF_ERR_MAX] = "";
	__u32 self = 0xdead;
	int ret;

	if (rdlock_conf_parse(c->in, &conf, err, sizeof(err))) {
		printf("# refused: '%s'\n", err);
		return 0;
	}
	ret = rdlock_conf_find_self(&conf, local, ARRAY_SIZE(local), &self,
				    err, sizeof(err));
	if (ret != c->ret || (ret && strcmp(err, c->err)) ||
	    (!ret && self != c->self) || (ret && self != 0xdead)) {
		printf("# returned %d self %u '%s', expected %d self %u '%s'\n",
		       ret, self, err, c->ret, c->self, c->err);
		return 0;
	}
	return 1;
}

/* Names as given, NUL-padded; a node without one has "". */
static int check_node_names(void)
{
	static const char text[] = "cluster 7\nnode 3 10.77.0.1 n-3.a_B\n"
		"node 0 10.77.0.2\nnode 9 10.77.0.3 " X10 X10 X10 X10 X10 X10 "abc\n";
	char err[RDLOCK_CONF_ERR_MAX], zero[RDLOCK_CONF_NODE_NAME_MAX] = "";

	if (rdlock_conf_parse(text, &conf, err, sizeof(err))) {
		printf("# refused: '%s'\n", err);
		return 0;
	}
	return conf.nr_nodes == 3 && conf.nodes[0].id == 3 &&
	       !strcmp(conf.nodes[0].name, "n-3.a_B") &&
	       !memcmp(conf.nodes[0].name + 8, zero, sizeof(zero) - 8) &&
	       !memcmp(conf.nodes[1].name, zero, sizeof(zero)) &&
	       !strcmp(conf.nodes[2].name, X10 X10 X10 X10 X10 X10 "abc");
}

/* Up to the limits: 32 nodes, 16 options, 64 lockspaces; one more fails. */
static int check_limits(int over, const char *what)
{
	char err[RDLOCK_CONF_ERR_MAX], *text, *p;
	const char *want;
	int i, ret;

	text = malloc(RDLOCK_CONF_FILE_MAX);
	if (!text)
		return 0;
	p = text + sprintf(text, "cluster 1\n");
	for (i = 0; i < RDLOCK_MAX_NODES; i++)
		p += sprintf(p, "node %d 10.0.0.%d\n", i, i + 1);
	if (!strcmp(what, "options")) {
		for (i = 0; i < RDLOCK_CONF_MAX_OPTIONS + over; i++)
			p += sprintf(p, "option p%d 1\n", i);
		want = "line 50: more than 16 options";
	} else {
		for (i = 0; i < RDLOCK_CONF_MAX_LS + over; i++)
			p += sprintf(p, "lockspace ls%d\n", i);
		want = "line 98: more than 64 lockspaces";
	}
	ret = rdlock_conf_parse(text, &conf, err, sizeof(err));
	free(text);
	if (over)
		ret = ret == -EINVAL && !strcmp(err, want);
	else
		ret = !ret && conf.nr_nodes == RDLOCK_MAX_NODES &&
		      (conf.nr_options == RDLOCK_CONF_MAX_OPTIONS ||
		       conf.nr_ls == RDLOCK_CONF_MAX_LS);
	if (!ret)
		printf("# %s: '%s'\n", what, err);
	return ret;
}

/* A file longer than RDLOCK_CONF_FILE_MAX is refused as a whole. */
static int check_too_long(void)
{
	char err[RDLOCK_CONF_ERR_MAX], *text;
	int ret;

	text = malloc(RDLOCK_CONF_FILE_MAX + 2);
	if (!text)
		return 0;
	memset(text, '\n', RDLOCK_CONF_FILE_MAX + 1);
	text[RDLOCK_CONF_FILE_MAX + 1] = '\0';
	ret = rdlock_conf_parse(text, &conf, err, sizeof(err));
	free(text);
	return ret == -EINVAL && !strcmp(err, "longer than 65536 bytes");
}

/* A line of 1024 characters is refused, and one of 1023 accepted. */
static int check_long_line(void)
{
	char err[RDLOCK_CONF_ERR_MAX], text[RDLOCK_CONF_LINE_MAX + 64];
	const char *want = "line 4: longer than 1023 characters";
	size_t head = strlen(HEAD);
	int ret;

	strcpy(text, HEAD);
	memset(text + head, ' ', RDLOCK_CONF_LINE_MAX + 1);
	text[head] = '#';
	strcpy(text + head + RDLOCK_CONF_LINE_MAX + 1, "\n");
	ret = rdlock_conf_parse(text, &conf, err, sizeof(err));
	if (ret != -EINVAL || strcmp(err, want)) {
		printf("# 1024: %d '%s'\n", ret, err);
		return 0;
	}
	strcpy(text + head + RDLOCK_CONF_LINE_MAX, "\n");
	ret = rdlock_conf_parse(text, &conf, err, sizeof(err));
	if (ret)
		printf("# 1023: %d '%s'\n", ret, err);
	return !ret;
}

/* A message cut to a short buffer stays a terminated string. */
static int check_short_err(void)
{
	char err[12];

	memset(err, 'x', sizeof(err));
	return rdlock_conf_parse("cluster 0\n", &conf, err, sizeof(err)) ==
	       -EINVAL && !strcmp(err, "line 1: bad");
}

int main(void)
{
	size_t nr_conf = ARRAY_SIZE(conf_cases);
	size_t nr_self = ARRAY_SIZE(self_cases);
	size_t i;

	init_local();
	printf("TAP version 13\n1..%zu\n", nr_conf + nr_self + 8);
	for (i = 0; i < nr_conf; i++)
		result(check_conf(&conf_cases[i]),
		       conf_cases[i].err ? "conf refuses: %s" : "conf accepts: %s",
		       conf_cases[i].desc);
	for (i = 0; i < nr_self; i++)
		result(check_self(&self_cases[i]), "self: %s", self_cases[i].desc);
	result(check_limits(0, "options"), "conf accepts %s up to the limit", "options");
	result(check_limits(1, "options"), "conf refuses %s over the limit", "options");
	result(check_limits(0, "lockspaces"), "conf accepts %s up to the limit", "lockspaces");
	result(check_limits(1, "lockspaces"), "conf refuses %s over the limit", "lockspaces");
	result(check_too_long(), "conf refuses %s", "a file over 64 KiB");
	result(check_long_line(), "conf %s", "takes lines of up to 1023 characters");
	result(check_short_err(), "conf %s", "cuts messages to the buffer");
	result(check_node_names(), "conf %s", "keeps node names");
	return tap_finish();
}
