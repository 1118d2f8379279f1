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
# their attributes and take locks; "rdlockctl down --config FILE" removes
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

write_conf() {
	mkdir -p /etc/rdlock || return 1
	{
		echo "# rdlock.conf written by conf.sh"
		echo "cluster $RDL_CLUSTER"
		j=0
		while [ "$j" -lt "$RDLOCK_NR_NODES" ]; do
			echo "node $j $(rdl_node_addr "$j")" || return 1
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
