#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The configuration-file path, on 3 guests: every node writes the same
# /etc/rdlock/rdlock.conf from RDLOCK_NODE_ADDRS (no "self" line: each
# finds itself by its address), with the cluster key's file (made alike
# on every node), module options and five lockspaces. A file with an error is refused first, line-numbered, with
# exit status 2 and nothing changed. Nodes 0 and 1 then run "rdlockctl up
# --config FILE", node 2 a plain "rdlockctl up" (a node never configured
# reads /etc/rdlock/rdlock.conf). Every node checks that the options were
# applied before the cluster went up, and that the lockspaces exist with
# their attributes and take locks, that "rdlockctl status" shows the
# cluster's and the nodes' names from the file, and that "rdlockctl stats"
# counts those locks exactly, in its three formats; "rdlockctl down
# --config FILE" removes
# them and goes down. At the end an option that is no parameter of
# rdlock.ko is refused.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT
RDL_KEYED=1
CONF=/etc/rdlock/rdlock.conf
BAD=/tmp/bad.conf
PARAMS=/sys/module/rdlock/parameters
DBG=/sys/kernel/debug/rdlock
LOCKED_PORT=7773
HELD_PORT=7781
WAITING_PORT=7782
SEEN_PORT=7783
RELEASED_PORT=7784

write_conf() {
	mkdir -p /etc/rdlock || return 1
	{
		echo "# rdlock.conf written by conf.sh"
		echo "cluster $RDL_CLUSTER"
		echo "cluster_name conf-test"
		j=0
		while [ "$j" -lt "$RDLOCK_NR_NODES" ]; do
			echo "node $j $(rdl_node_addr "$j") conf-node-$j" || return 1
			j=$((j + 1))
		done
		rdl_key_line || return 1
		echo "option op_timeout_ms 4321	# not the default 5000"
		echo "option table_slots 40000"
		echo "option backend twosided"
		echo "lockspace conf-a"
		echo "lockspace conf-b --proto caslock --slots 8 --mode 0640 --gid 100"
		echo "lockspace conf-c --update --lease-ms=1000"
		echo "lockspace conf-q --proto cql --slots 512 --queue-bits 4 --hier=phase-fair"
		echo "lockspace conf-d --dlm --mode 0660"
	} > "$CONF"
}

# $1 exit status and $2 the message of "up --config $BAD" expected.
refused() {
	out=$(rdlockctl up --config "$BAD" 2>&1)
	rc=$?
	echo "# exit $rc: $out"
	[ "$rc" -eq "$1" ] && [ "$out" = "$2" ]
}

# STATUS says state $1.
state_is() {
	rdlockctl status --json | grep -q "^{\"state\": \"$1\""
}

# Nothing of the refused file was applied.
unchanged() {
	state_is unconfigured && param_is op_timeout_ms 5000
}

param_is() {
	[ "$(cat "$PARAMS/$1")" = "$2" ]
}

dry_run_finds_self() {
	rdlockctl up --config "$CONF" --dry-run > /tmp/dry-run || return 1
	sed 's/^/# /' /tmp/dry-run
	grep -q "^rdlockctl config --cluster $RDL_CLUSTER --node $RDLOCK_NODE_ID " \
		/tmp/dry-run
}

# Lockspace $1's debugfs stats have every line "$2" ...
ls_has() {
	ls=$1
	shift
	for want in "$@"; do
		grep -qx "$want" "$DBG/lockspaces/$ls/stats" || return 1
	done
}


down_and_empty() {
	state_is down && [ -z "$(ls "$DBG/lockspaces")" ]
}

status_has() {
	rdlockctl status --json | grep -q "$1"
}

# Every node's line of "rdlockctl status $*" ends in its name from the
# file, or "-" for every node with --config of another cluster's file.
status_names() {
	rdlockctl status "$@" > /tmp/status || return 1
	sed 's/^/# /' /tmp/status
	j=0
	while [ "$j" -lt "$RDLOCK_NR_NODES" ]; do
		want=conf-node-$j
		[ $# -gt 0 ] && want=-
		[ "$(awk -v n="$j" '$1 == n { print $NF }' /tmp/status)" = "$want" ] ||
			return 1
		j=$((j + 1))
	done
}

# stat_of NAME WHERE: the value "rdlockctl stats" gives counter NAME of WHERE
# (-, node=ID, lockspace=NAME); nothing if there is no such line.
stat_of() {
	rdlockctl stats | awk -v n="$1" -v w="$2" '$1 == n && $2 == w { print $3 }'
}

# stat_grows NAME WHERE BY CMD...: CMD succeeds and counter NAME of WHERE
# grows by exactly BY meanwhile.
stat_grows() {
	sg_name=$1 sg_where=$2 sg_by=$3
	shift 3
	sg_before=$(stat_of "$sg_name" "$sg_where")
	[ -n "$sg_before" ] || { echo "# no $sg_name $sg_where"; return 1; }
	"$@" || return 1
	sg_after=$(stat_of "$sg_name" "$sg_where")
	echo "# $sg_name $sg_where: $sg_before -> $sg_after"
	[ "$sg_after" -eq $((sg_before + sg_by)) ]
}

# Text: three fields a line; the links to every node and each lockspace.
stats_text() {
	rdlockctl stats > /tmp/stats || return 1
	awk 'NF != 3 || $3 !~ /^[0-9]+$/ { bad = 1; print "# bad line: " $0 }
	     END { exit bad }' /tmp/stats || return 1
	j=0
	while [ "$j" -lt "$RDLOCK_NR_NODES" ]; do
		grep -q "^link_connects node=$j [0-9]" /tmp/stats || return 1
		j=$((j + 1))
	done
	for l in conf-a conf-b conf-c conf-q dlm.conf-d; do
		grep -q "^ls_acquisitions lockspace=$l [0-9]" /tmp/stats ||
			return 1
	done
	# Each connected peer's link was connected at least once.
	[ "$(stat_of link_connects node=$(( (RDLOCK_NODE_ID + 1) % 3 )))" -ge 1 ]
}

# Prometheus' text format: a TYPE line once per metric, then its samples
# together; names, labels and values as the format has them.
stats_prometheus() {
	rdlockctl stats --prometheus > /tmp/prom || return 1
	awk '
	/^# TYPE / {
		if (seen[$3]++) { print "# TYPE twice: " $3; bad = 1 }
		if ($4 != "counter" && $4 != "gauge") bad = 1
		if ($4 == "counter" && $3 !~ /_total$/) bad = 1
		fam = $3; types++; next
	}
	{
		name = $1; sub(/\{.*/, "", name)
		if (name != fam) { print "# out of its family: " $0; bad = 1 }
		if ($0 !~ /^rdlock_[a-z0-9_]+(\{(peer|lockspace)="[^"]*"\})? [0-9]+$/) {
			print "# bad sample: " $0; bad = 1
		}
		samples++
	}
	END { if (!types || samples < types) bad = 1; exit bad }' /tmp/prom &&
	grep -q '^rdlock_ls_acquisitions_total{lockspace="conf-a"} [0-9]' /tmp/prom &&
	grep -q '^rdlock_ls_users{lockspace="conf-a"} [0-9]' /tmp/prom &&
	grep -q "^rdlock_link_connects_total{peer=\"$RDLOCK_NODE_ID\"} [0-9]" /tmp/prom
}

stats_json() {
	rdlockctl stats --json > /tmp/stats.json || return 1
	grep -q '^\[{"name": ".*}\]$' /tmp/stats.json &&
	grep -q '{"name": "ls_acquisitions", "lockspace": "conf-a", "type": "counter", "value": [0-9]*}' /tmp/stats.json &&
	grep -q "{\"name\": \"link_errors\", \"node\": $RDLOCK_NODE_ID, \"type\": \"counter\", \"value\": [0-9]*}" /tmp/stats.json &&
	grep -q '{"name": "dlm_waits_known", "type": "gauge", "value": [0-9]*}' /tmp/stats.json
}

# locks_line [--local] LS NAME NODE STATE GRANTED REQUESTED FLAGS:
# "rdlockctl locks [--local] LS" shows within 30 s a line of lock NAME (a
# "#" for a name this node does not know) of NODE with those columns.
locks_line() {
	ll_opt=
	if [ "$1" = --local ]; then
		ll_opt=--local
		shift
	fi
	ll_end=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt "$ll_end" ]; do
		rdlockctl locks $ll_opt "$1" > /tmp/locks || return 1
		awk -v n="$2" -v node="$3" -v st="$4" -v g="$5" -v r="$6" -v f="$7" '
			($1 == n || (n == "#" && $1 ~ /^#[0-9a-f]+$/)) &&
			$2 == node && $3 == st && $4 == g && $5 == r &&
			$NF == f { found = 1 }
			END { exit !found }' /tmp/locks && return 0
		sleep 0.2
	done
	sed 's/^/# locks: /' /tmp/locks
	return 1
}

# Node 2, which holds nothing, asks every node: exactly node 0's EX hold
# and node 1's PR wait, both by name (their nodes' own answers, not
# notices), every node answered; by NAME the same; another NAME, none.
locks_asked() {
	if ! { rdlockctl locks conf-d > /tmp/locks-all 2> /tmp/locks-err &&
	       rdlockctl locks conf-d contended > /tmp/locks-name \
			2>> /tmp/locks-err &&
	       rdlockctl locks conf-d contende > /tmp/locks-none \
			2>> /tmp/locks-err; }; then
		sed 's/^/# locks: /' /tmp/locks-err
		return 1
	fi
	sed 's/^/# locks (cluster): /' /tmp/locks-all
	! [ -s /tmp/locks-err ] || { sed 's/^/# stderr: /' /tmp/locks-err; return 1; }
	for la_f in /tmp/locks-all /tmp/locks-name; do
		awk 'NR > 1 { n++ }
		     NR > 1 && $1 == "contended" && $2 == 0 && $3 == "granted" &&
		     $4 == "ex" && $5 == "-" && $NF == "-" { h++ }
		     NR > 1 && $1 == "contended" && $2 == 1 && $3 == "waiting" &&
		     $4 == "-" && $5 == "pr" && $NF == "-" { w++ }
		     END { exit !(n == 2 && h == 1 && w == 1) }' "$la_f" || {
			sed 's/^/# not the two: /' "$la_f"
			return 1
		}
	done
	[ "$(wc -l < /tmp/locks-none)" -eq 1 ] &&
	rdlockctl locks --json conf-d contended |
		grep -q '"name": "contended", "hash": "[0-9a-f]*", "node": 0, "state": "granted", "granted": "ex", "requested": "-", '
}

# A DLM lock held EX on node 0 while node 1 waits for PR: node 0 lists
# its hold and node 1's wait by name (by notice with --local), node 2 the
# wait by its name's hash with --local, and both by name asking every
# node; node 1 is granted once node 0 lets go.
locks_cluster() {
	case $RDLOCK_NODE_ID in
	0)
		rm -f /tmp/release
		rdlockctl lock -m ex -w 60 conf-d contended -- \
			sh -c 'while [ ! -e /tmp/release ]; do sleep 0.1; done' &
		lc_holder=$!
		locks_line --local conf-d contended 0 granted ex - - &&
		locks_line conf-d contended 0 granted ex - - &&
		rdl_signal $HELD_PORT &&
		rdl_wait_signal 1 $WAITING_PORT 120 &&
		locks_line --local conf-d contended 1 waiting - pr notice &&
		locks_line conf-d contended 1 waiting - pr - &&
		rdlockctl locks conf-d contended --json | sed 's/^/# /' &&
		rdlockctl locks --local --json conf-d contended |
			grep -q '"name": "contended", "hash": "[0-9a-f]*", "node": 1, "state": "waiting", "granted": "-", "requested": "pr", .*"notice": true' &&
		rdl_wait_signal 2 $SEEN_PORT 120
		lc_rc=$?
		touch /tmp/release
		wait "$lc_holder" && [ $lc_rc -eq 0 ] && rdl_signal $RELEASED_PORT
		;;
	1)
		rdl_wait_signal 0 $HELD_PORT 120 || return 1
		rdlockctl lock -m pr -w 120 conf-d contended -- true &
		lc_waiter=$!
		locks_line --local conf-d contended 1 waiting - pr - &&
		rdl_signal $WAITING_PORT &&
		rdl_wait_signal 0 $RELEASED_PORT 120 &&
		wait "$lc_waiter"
		;;
	*)
		rdl_wait_signal 1 $WAITING_PORT 120 &&
		locks_line --local conf-d "#" 1 waiting - pr notice &&
		locks_asked &&
		rdl_signal $SEEN_PORT
		;;
	esac
}

# Once down: a file whose line 5 is "option NAME VALUE" that must be
# refused with MESSAGE before anything is written (op_timeout_ms 1 on
# line 4 is not written: it keeps 4321): refused_option NAME VALUE MESSAGE.
refused_option() {
	printf 'cluster 7\nnode 0 10.0.0.1\nself 0\noption op_timeout_ms 1\noption %s %s\ninsecure_no_key\n' \
		"$1" "$2" > "$BAD"
	out=$(rdlockctl up --config "$BAD" 2>&1)
	rc=$?
	echo "# exit $rc: $out"
	[ "$rc" -eq 1 ] &&
	case "$out" in
	"rdlockctl: $BAD: line 5: option $1: $3"*) ;;
	*) false ;;
	esac &&
	param_is op_timeout_ms 4321 && state_is down
}

# No parameter of rdlock.ko.
no_such_param() {
	refused_option no_such_param 1 "not a parameter of rdlock.ko"
}

# One read only at load (membership, 0444), which root could open for
# writing.
load_only_param() {
	refused_option membership dlm "read at load only: use modprobe.d" &&
		param_is membership static
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
	rdl_not_ok "conf.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

if rdl_step "insmod rdlock.ko" insmod "$RDL/modules/rdlock.ko" &&
   rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko" &&
   rdl_step "write $CONF" write_conf; then
	sed 's/^/# conf: /' "$CONF"

	printf 'cluster 7\noption op_timeout_ms 1111\nnode 0 10.0.0.1\n\nlockspace x --slots 7\n' > "$BAD"
	rdl_step "a bad file is refused with its line, exit status 2" \
		refused 2 "rdlockctl: $BAD: line 5: bad slot count '7' (even, 2..65536)"
	printf 'cluster 7\nnode 0 10.0.0.1\nself 3\n' > "$BAD"
	rdl_step "a self without its node is refused" \
		refused 2 "rdlockctl: $BAD: line 3: self 3: no 'node 3' line"
	printf 'cluster 7\nnode 0 10.0.0.1\nself 0\noption op_timeout_ms 1\n' > "$BAD"
	rdl_step "a file without a cluster key is refused" \
		refused 2 "rdlockctl: $BAD: no 'key_file PATH': the cluster needs a key ('rdlockctl keygen' makes one; 'insecure_no_key' for tests only)"
	rdl_step "a refused file changes nothing" unchanged
	rdl_step "--dry-run finds this node by its address" dry_run_finds_self

	if [ "$RDLOCK_NODE_ID" -eq 2 ]; then
		rdl_step "plain 'up' reads $CONF" rdlockctl up
	else
		rdl_step "up --config $CONF" rdlockctl up --config "$CONF" --timeout 120
	fi && rdl_step "cluster ready" rdlockctl wait --timeout 120 && up=1
fi
if [ -n "${up:-}" ]; then
	rdl_step "the cluster key is set" grep -qx 'cluster_key: set' "$DBG/cluster" &&
	rdl_step "status --json: the cluster key is set" \
		status_has '"cluster_key": "set"' &&
	rdl_step "status: the cluster key is set" \
		sh -c 'rdlockctl status | grep -qx "cluster key: set"'
	rdl_step "option op_timeout_ms applied" param_is op_timeout_ms 4321
	rdl_step "option table_slots applied" param_is table_slots 40000
	rdl_step "option backend applied" param_is backend twosided
	rdl_step "the cluster agreed on the two-sided backend" \
		status_has '"backend": "twosided"'
	rdl_step "status --json names the cluster and this node" \
		status_has "\"cluster_id\": $RDL_CLUSTER, \"node_id\": $RDLOCK_NODE_ID,"
	rdl_step "up --config on a ready cluster is refused" \
		sh -c "! rdlockctl up --config $CONF"
	rdl_step "status: the file's 5 lockspaces, none lost" \
		sh -c 'rdlockctl status | grep -qx "lockspaces: 5, 0 lost"'
	rdl_step "status: the cluster's name" \
		sh -c 'rdlockctl status | grep -qx "cluster name: conf-test"'
	rdl_step "status --json: the cluster's name and this node's" \
		sh -c "rdlockctl status --json | grep -q '\"cluster_name\": \"conf-test\"' &&
		       rdlockctl status --json | grep -q '\"id\": $RDLOCK_NODE_ID, .*\"errors\": [0-9]*, \"name\": \"conf-node-$RDLOCK_NODE_ID\"}'"
	rdl_step "status: every node's name from $CONF" status_names
	sed "s/^cluster $RDL_CLUSTER\$/cluster $((RDL_CLUSTER + 1))/" "$CONF" > /tmp/other.conf
	rdl_step "status --config of another cluster's file: no names" \
		status_names --config /tmp/other.conf
	rdl_step "stats: every link and lockspace, three fields a line" stats_text
	rdl_step "stats --prometheus: the exposition format" stats_prometheus
	rdl_step "stats --json" stats_json
	rdl_step "stats: a lock in conf-a is one acquisition there" \
		stat_grows ls_acquisitions lockspace=conf-a 1 \
		rdlockctl lock -w 60 conf-a "stats$RDLOCK_NODE_ID" -- true
	rdl_step "stats: an EX lock in conf-d is one new EX lock ..." \
		stat_grows dlm_new_ex - 1 \
		rdlockctl lock -m ex -w 60 conf-d "stats$RDLOCK_NODE_ID" -- true
	rdl_step "... and one unlock of EX" \
		stat_grows dlm_unlocks_ex - 1 \
		rdlockctl lock -m ex -w 60 conf-d "stats$RDLOCK_NODE_ID" -- true
	rdl_step "locks: node 0 holds EX, node 1 waits (by name on node 0, by hash on node 2 alone, by name asking every node)" \
		locks_cluster
	rdl_step "locks: a plain lockspace's lock, with its owner process" \
		rdlockctl lock -w 60 conf-a "own$RDLOCK_NODE_ID" -- \
		sh -c "rdlockctl locks conf-a own$RDLOCK_NODE_ID |
		       awk -v p=\$PPID -v n=$RDLOCK_NODE_ID '\$2 == n && \$3 == \"granted\" && \$4 == \"ex\" && \$7 == p { f = 1 } END { exit !f }'"

	rdl_step "lockspace conf-a: defaults" \
		ls_has conf-a "slots: 1024" "lease_ms: 0" "flags: 0x0"
	rdl_step "lockspace conf-b: caslock, 8 slots" \
		ls_has conf-b "slots: 8" "lease_ms: 0"
	rdl_step "lockspace conf-c: update locks, 1000 ms leases" \
		ls_has conf-c "slots: 1024" "lease_ms: 1000" "flags: 0x1"
	rdl_step "lockspace conf-q: cql, hierarchical phase-fair, 512 slots" \
		ls_has conf-q "protocol: cql" "slots: 512" "flags: 0xc"
	rdl_step "lock in conf-a" rdlockctl lock -w 60 conf-a "n$RDLOCK_NODE_ID" -- true
	rdl_step "lock in conf-q" rdlockctl lock -w 60 conf-q shared -- true
	rdl_step "EX lock in DLM lockspace conf-d" \
		rdlockctl lock -m ex -w 60 conf-d shared -- true
	rdl_step "lock in conf-b" rdlockctl lock -w 60 conf-b shared -- true
	rdl_step "update lock in conf-c" rdlockctl lock -u -w 60 conf-c shared -- true
	rdl_signal $LOCKED_PORT
	rdl_step "every node took its locks" \
		rdl_wait_all_signals $LOCKED_PORT 300
	rdl_step "ls-remove conf-a" rdlockctl ls-remove conf-a
	rdl_step "status --json: 4 lockspaces left" \
		status_has '"lockspaces": 4, "lockspaces_lost": 0,'
	rdl_step "plain down is refused while lockspaces are left" \
		sh -c '! rdlockctl down'

	rdl_step "final barrier" xport_test --final-barrier
	rdl_step "down --config removes the file's lockspaces, goes down" \
		rdlockctl down --config "$CONF" &&
	rdl_step "down, no lockspace left" down_and_empty &&
	rdl_step "down --config again is no error" rdlockctl down --config "$CONF" &&
	rdl_step "an option that is no parameter is refused, nothing written" \
		no_such_param &&
	rdl_step "an option read only at load is refused, nothing written" \
		load_only_param
fi
rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
rdl_loaded rdlock && rdl_step "rmmod rdlock" rdl_rmmod rdlock
rdl_finish
