#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A node killed mid-workload (the demo's run 6), on 3 guests:
#   failbench.sh [verbs|twosided]	(default: the cluster's choice)
# rdlock runs with membership=dlm, corosync and dlm_controld fencing
# through the host, as in member.sh kill. Every node runs rdlock-fail-bench
# (locks by name in one lockspace, every node at once);
# RDLOCK_FAILBENCH_KILL_S (10) seconds into the run node 0 has the host cut
# the last node's power. The survivors' requests for names whose entry or
# word was on it wait until the cluster engine has fenced it and rdlock has
# declared it down, then go on at the names' new homes. Each node prints
# its timeline as it runs (a JSON object an interval: the victim's end
# with it); the
# survivors print their run as JSON and their membership's times (debugfs
# rdlock/membership, CLOCK_MONOTONIC as the run's t0_ms) with "#json " in
# front, which scripts/demo-report.py reads. A benchmark: it asserts no
# timing; a step fails when a lock call fails, the kill fails, or the
# victim is not fenced and declared down once.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT
SECS=${RDLOCK_FAILBENCH_SECS:-50}
KILL_S=${RDLOCK_FAILBENCH_KILL_S:-10}
PROTO=${RDLOCK_FAILBENCH_PROTO:-bakery}
CLIENTS=${RDLOCK_FAILBENCH_CLIENTS:-4}
DONE_PORT=7830
VICTIM=$((RDLOCK_NR_NODES - 1))
OUT=/tmp/rdlock-fail-bench.json

PARAM=
if [ -n "${1:-}" ]; then
	rdl_backend_arg "$1"
	PARAM="backend=$1"
fi

# The survivor's membership after the run: the victim declared down once,
# nobody failed, running; its times as one JSON object.
declared_once() {
	echo "# node $RDLOCK_NODE_ID membership:"
	sed 's/^/#   /' $RDL_MEMBERSHIP
	rdl_json_obj tool failbench.sh figure membership node "$RDLOCK_NODE_ID" \
		victim "$VICTIM" \
		prep_ms "$(rdl_member_line last_prep_ms)" \
		slot_ms "$(rdl_member_line last_slot_ms)" \
		done_ms "$(rdl_member_line last_done_ms)" \
		running_ms "$(rdl_member_line last_running_ms)" \
		recovery_us "$(rdl_member_line last_recovery_us)" \
		declared_down "$(rdl_member_line declared_down)"
	[ "$(rdl_member_line declared_down)" = 1 ] &&
		[ -z "$(rdl_member_line failed)" ] &&
		[ "$(rdl_member_line state)" = running ]
}

if [ "${RDLOCK_NR_NODES:-0}" -lt 3 ] || ! rdl_check_env; then
	rdl_not_ok "failbench.sh needs at least 3 nodes (a majority survives)"
	rdl_finish
	exit 1
fi

# Node 0 has the victim killed: its command line gets the event.
if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
	set -- --event-at $((KILL_S * 1000)) \
		--event "sh $RDL/guest/host-ctl.sh kill $VICTIM"
else
	set --
fi
# shellcheck disable=SC2086 # no parameter: no word at all
if rdl_step "insmod rdlock.ko $PARAM membership=dlm" \
	insmod "$RDL/modules/rdlock.ko" $PARAM membership=dlm &&
   rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko" &&
   rdl_step "configure node $RDLOCK_NODE_ID of $RDLOCK_NR_NODES" rdl_config &&
   rdl_step "corosync and dlm_controld, fencing by the host" \
	rdl_dlm_start fence &&
   rdl_step "cluster up, a member" rdlockctl up &&
   rdl_step "cluster ready" rdlockctl wait --timeout 120 &&
   rdl_step "membership running, every node a member" rdl_member_running; then
	echo "# node $RDLOCK_NODE_ID: backend $(rdl_backend)"
	rdl_json_obj tool failbench.sh figure backend node "$RDLOCK_NODE_ID" \
		backend "$(rdl_backend)"
	rdl_step "rdlock-fail-bench ($PROTO, $CLIENTS clients per node, 16 names, ${SECS} s; node $VICTIM killed at ${KILL_S} s)" \
		rdlock-fail-bench --protocol "$PROTO" --clients "$CLIENTS" \
		--locks 16 --read-ratio 0.5 --cs-us 20 --duration "$SECS" \
		--interval 250 --json $OUT "$@"
	rdl_json $OUT
	rdl_step "dlm_controld fenced node $VICTIM through the host" \
		rdl_fenced "$VICTIM"
	rdl_step "node $VICTIM declared down once, membership running" \
		declared_once
fi
# The victim is gone: the survivors wait for each other only.
rdl_signal $DONE_PORT
rdl_step "every survivor done" rdl_wait_below "$VICTIM" $DONE_PORT 300
rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
rdl_stop
rdl_dlm_stop
rdl_finish
