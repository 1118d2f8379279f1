#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Refused connections and recovery, on exactly 2 guests. Node 1 first
# expects node 0 at another address of the guest network and refuses its
# real one ("source address": the ids in a request are only the caller's
# word), then restarts with the right configuration (cluster 7, two-sided
# backend forced) and stays so while node 0, which calls it, goes through
# three configurations:
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

# Node 1: node 0 configured at an address it does not call from.
impostor_phase() {
	ip_phase_self=$(rdl_node_addr 1) &&
	ip_phase_node0=$(rdl_node_addr 0) || return 1
	ip_phase_other=${ip_phase_node0%.*}.250
	dmesg -c > /dev/null
	if rdl_step "insmod rdlock.ko backend=twosided" \
		insmod "$RDL/modules/rdlock.ko" backend=twosided &&
	   rdl_step "configure node 0 at $ip_phase_other" \
		rdlockctl config --cluster 7 --node 1 --addr "$ip_phase_self" \
			--peer "0=$ip_phase_other" &&
	   rdl_step "cluster up" rdlockctl up; then
		rdl_step "refused node 0 calling from $ip_phase_node0" \
			wait_for 120 logged "refused connection from node 0: source address (from .*$ip_phase_node0)"
		rdl_step "counted the refusal" \
			test "$(debugfs_value rejected_connections)" -ge 1
		rdl_step "not ready while refusing" state_is connecting
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
	rdl_step "node 1 refused our address first" \
		logged "node 1 refused us: source address"
	refused_phase "" 8 "cluster id"
	start "" 7
else
	impostor_phase
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
