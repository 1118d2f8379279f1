#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /dev/rdlock's errno contract on a single node, then unloading the modules
# while the cluster is up (live connections) must work.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_NODE_ID=${RDLOCK_NODE_ID:-0}
RDLOCK_NODE_ADDRS=${RDLOCK_NODE_ADDRS:-10.77.0.1}
export RDLOCK_NODE_ID RDLOCK_NODE_ADDRS

# A zero operation timeout is refused, at load time and later.
rdl_step "insmod rdlock.ko op_timeout_ms=0 refused" \
	sh -c "! insmod $RDL/modules/rdlock.ko op_timeout_ms=0 2>/dev/null &&
	       ! grep -q '^rdlock ' /proc/modules"
if rdl_step "insmod rdlock.ko" insmod "$RDL/modules/rdlock.ko" &&
   rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko"; then
	P=/sys/module/rdlock/parameters/op_timeout_ms
	rdl_step "op_timeout_ms: 0 and 3600001 refused, 3600000 taken" \
		sh -c "! echo 0 > $P 2>/dev/null && ! echo 3600001 > $P 2>/dev/null &&
		       [ \$(cat $P) = 5000 ] && echo 3600000 > $P &&
		       [ \$(cat $P) = 3600000 ] && echo 5000 > $P"
	rdl_step "uapi_test" uapi_test
	rdl_step "uapi_test left the cluster down" \
		sh -c 'rdlockctl status --json | grep -q "\"state\": \"down\""'
	rdlockctl down 2>/dev/null

	# A one-node cluster, up and ready, then unloaded as it is.
	SELF=$(rdl_node_addr "$RDLOCK_NODE_ID")
	rdl_step "configure one node" rdlockctl config --cluster "$RDL_CLUSTER" \
		--node "$RDLOCK_NODE_ID" --addr "$SELF" &&
	rdl_step "cluster up" rdlockctl up &&
	rdl_step "cluster ready" rdlockctl wait --timeout 120
	rdl_step "rmmod rdlock_test while up" rdl_rmmod rdlock_test
	rdl_step "rmmod rdlock while up" rdl_rmmod rdlock
	rdl_step "/dev/rdlock gone" test ! -e /dev/rdlock
fi
rdl_stop
rdl_finish
