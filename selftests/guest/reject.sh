#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Refused connections and recovery, on exactly 2 guests. Node 1 stays as it
# is (cluster 7, two-sided backend forced) while node 0, which calls it,
# goes through three configurations:
#   1. backend=verbs forced: node 1 refuses ("atomic backend mismatch");
#   2. cluster id 8: node 1 refuses ("cluster id");
#   3. cluster 7, backend auto: accepted; both agree on two-sided.
# Node 1 then checks it counted both kinds of refusal.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
	wf_left=$1
	shift
	while ! "$@"; do
		wf_left=$((wf_left - 1))
		[ "$wf_left" -gt 0 ] || return 1
		sleep 1
	done
}

debugfs_value() {
	sed -n "s/^$1: //p" /sys/kernel/debug/rdlock/cluster
}

logged() {
	dmesg | grep -q "$1"
}

state_is() {
	rdlockctl status --json | grep -q "\"state\": \"$1\""
}

backend_is() {
	[ "$(debugfs_value backend)" = "$1" ]
}

# start MODULE-PARAMETERS CLUSTER-ID
start() {
	RDL_CLUSTER=$2
	# shellcheck disable=SC2086 # no parameters: no word at all
	rdl_step "insmod rdlock.ko $1" insmod "$RDL/modules/rdlock.ko" $1 &&
	rdl_step "configure cluster $2" rdl_config &&
	rdl_step "cluster up" rdlockctl up
}

# Node 0: a configuration node 1 must refuse with REASON.
refused_phase() {
	dmesg -c > /dev/null
	if start "$1" "$2"; then
		rdl_step "node 1 refused us: $3" \
			wait_for 60 logged "node 1 refused us: $3"
		rdl_step "not ready while refused" state_is connecting
	fi
	rdl_step "cluster down" rdlockctl down
	rdl_step "rmmod rdlock" rdl_rmmod rdlock
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 2 ] || ! rdl_check_env; then
	rdl_not_ok "reject.sh needs exactly 2 nodes"
	rdl_finish
	exit 1
fi

if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
	refused_phase backend=verbs 7 "atomic backend mismatch"
	refused_phase "" 8 "cluster id"
	start "" 7
else
	start backend=twosided 7
fi
if rdl_step "cluster ready" rdlockctl wait --timeout 240; then
	rdl_step "agreed on the forced backend" backend_is twosided
	if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
		rdl_step "node 1 counted both refusals" \
			test "$(debugfs_value rejected_connections)" -ge 2
		rdl_step "node 1 logged the backend refusal" \
			logged "refused connection from node 0: atomic backend mismatch"
		rdl_step "node 1 logged the cluster id refusal" \
			logged "refused connection from node 0: cluster id"
	fi
	rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko"
fi
rdl_stop
rdl_finish
