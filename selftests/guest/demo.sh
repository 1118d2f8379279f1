#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The main job's guest side, on every node of a 3-node (or larger) cluster:
# form the cluster, show what each node sees, prove the primitives with an
# exact count (every node adds to a counter on every node; each counter must
# end at exactly N*K) and print the counters, then measure the primitives
# against perftest's ib_atomic_lat between nodes 0 and 1 (see bench.sh for
# the method).

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-900}
export RDLOCK_BARRIER_TIMEOUT

if rdl_check_env && rdl_start ""; then
	echo "# node $RDLOCK_NODE_ID: the cluster as this node sees it"
	rdlockctl status | sed 's/^/#   /'
	echo "# node $RDLOCK_NODE_ID: RDMA devices"
	rdma link show 2>&1 | sed 's/^/#   /'
	backend=$(rdlockctl status --json | sed -n 's/.*"backend": "\([a-z]*\)".*/\1/p')
	RDLOCK_EXPECT_BACKEND=$backend RDLOCK_K=${RDLOCK_DEMO_K:-500}
	export RDLOCK_EXPECT_BACKEND RDLOCK_K
	rdl_step "primitives, incl. $RDLOCK_K adds per node to a counter on every node" \
		xport_test
	# The counters themselves (F + 0 on every node, final once any node
	# is past xport_test's barrier), for the report; the test checked them.
	t=0
	while [ "$t" -lt "$RDLOCK_NR_NODES" ]; do
		echo "# node $RDLOCK_NODE_ID: exact-count counter on node $t = $(rdlock-bench --raw-read 0 --node "$t" 2>&1), nodes x K = $((RDLOCK_NR_NODES * RDLOCK_K))"
		t=$((t + 1))
	done
	echo "# node $RDLOCK_NODE_ID: per-peer counters"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/nodes
fi
rdl_stop
rdl_finish
