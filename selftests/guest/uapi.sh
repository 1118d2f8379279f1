#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /dev/rdlock's errno contract on a single node, then unloading the modules
# while the cluster is up (live connections) must work.
#   uapi.sh [TEST...]   only those tests of uapi_test (uapi_test -t TEST),
#                       each on the freshly loaded module it sets up itself

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_NODE_ID=${RDLOCK_NODE_ID:-0}
RDLOCK_NODE_ADDRS=${RDLOCK_NODE_ADDRS:-10.77.0.1}
export RDLOCK_NODE_ID RDLOCK_NODE_ADDRS

# param_bounds NAME LOW HIGH: rdlock.ko's parameter NAME refuses LOW - 1
# and HIGH + 1 through sysfs, keeping its value, and takes LOW and HIGH;
# its value is restored afterwards.
param_bounds() {
	pb_file=/sys/module/rdlock/parameters/$1
	pb_was=$(cat "$pb_file") || return 1
	! echo $(($2 - 1)) > "$pb_file" 2>/dev/null &&
	! echo $(($3 + 1)) > "$pb_file" 2>/dev/null &&
	[ "$(cat "$pb_file")" = "$pb_was" ] &&
	echo "$2" > "$pb_file" && [ "$(cat "$pb_file")" = "$2" ] &&
	echo "$3" > "$pb_file" && [ "$(cat "$pb_file")" = "$3" ] &&
	echo "$pb_was" > "$pb_file"
}

# A zero operation timeout is refused, at load time and later.
rdl_step "insmod rdlock.ko op_timeout_ms=0 refused" \
	sh -c "! insmod $RDL/modules/rdlock.ko op_timeout_ms=0 2>/dev/null &&
	       ! grep -q '^rdlock ' /proc/modules"
if rdl_step "insmod rdlock.ko" insmod "$RDL/modules/rdlock.ko" &&
   rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko"; then
	rdl_step "op_timeout_ms: 0 and 3600001 refused, 1 and 3600000 taken" \
		param_bounds op_timeout_ms 1 3600000
	rdl_step "table_slots: 8 and 524289 refused, 9 and 524288 taken" \
		param_bounds table_slots 9 524288
	rdl_step "dlm_slots: 1199 and 262145 refused, 1200 and 262144 taken" \
		param_bounds dlm_slots 1200 262144
	rdl_step "user_locks_max: 0 and 16777217 refused, 1 and 16777216 taken" \
		param_bounds user_locks_max 1 16777216
	rdl_step "user_finishing_max: 0 and 4097 refused, 1 and 4096 taken" \
		param_bounds user_finishing_max 1 4096
	if [ $# -eq 0 ]; then
		rdl_step "uapi_test" uapi_test
		rdl_step "uapi_test left the cluster down" \
			sh -c 'rdlockctl status --json | grep -q "\"state\": \"down\""'
	else
		uapi_args=
		for uapi_t; do
			uapi_args="$uapi_args -t $uapi_t"
		done
		# shellcheck disable=SC2086 # one word a test name or -t
		rdl_step "uapi_test $*" uapi_test $uapi_args
	fi
	rdlockctl down 2>/dev/null

	# Configured without a key: up refused, with the reason.
	SELF=$(rdl_node_addr "$RDLOCK_NODE_ID")
	rdl_step "configure one node without a key" rdlockctl config \
		--cluster "$RDL_CLUSTER" --node "$RDLOCK_NODE_ID" --addr "$SELF" &&
	rdl_step "up refused: no cluster key" \
		sh -c 'rdlockctl up 2>&1 | grep -q "(ENOKEY) (no cluster key"' &&
	rdl_step "still down" sh -c 'rdlockctl status | grep -qx "state: down"'

	# A one-node cluster, up and ready, then unloaded as it is.
	rdl_step "configure one node" rdlockctl config --cluster "$RDL_CLUSTER" \
		--node "$RDLOCK_NODE_ID" --addr "$SELF" --insecure-no-key &&
	rdl_step "cluster up" rdlockctl up &&
	rdl_step "cluster ready" rdlockctl wait --timeout 120 &&
	rdl_step "status: no cluster key, insecure" \
		sh -c 'rdlockctl status | grep -qx "cluster key: none (insecure)"' &&
	rdl_step "status: membership static, no node a member" rdl_no_members static
	rdl_step "rmmod rdlock_test while up" rdl_rmmod rdlock_test
	rdl_step "rmmod rdlock while up" rdl_rmmod rdlock
	rdl_step "/dev/rdlock gone" test ! -e /dev/rdlock
fi
rdl_stop
rdl_finish
