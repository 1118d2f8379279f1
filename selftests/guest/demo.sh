#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The main job's guest side, on every node of a 3-node (or larger) cluster:
# form the cluster, show what each node sees, prove the primitives with an
# exact count (every node adds to a counter on every node; each counter must
# end at exactly N*K) and print the counters.
#
#   demo.sh [O2CB_UUID O2CB_HB_BLOCK]
#
# With the arguments, then OCFS2's metadata benchmark on both cluster
# stacks, one after the other in this boot (scripts/demo.sh made the two
# images): OCFS2's own o2cb (o2dlm over TCP) on /dev/vda, whose UUID and
# heartbeat block the arguments are, then rdlock's plug-in on /dev/vdb.
# Each is guest/ocfs2.sh with RDLOCK_OCFS2_BENCH files per node and phase
# (its "# bench node" lines), then its correctness checks with
# RDLOCK_OCFS2_FILES files and RDLOCK_OCFS2_RECORDS records; each needs
# barrier ports of its own (ocfs2.sh's listeners live until power-off).
# RDLOCK_OCFS2_FLOOD is for the rdlock run only: its benchmark again under
# an unprivileged user's flood, and after it.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-900}
export RDLOCK_BARRIER_TIMEOUT

# Every figure of the report is also a JSON line (scripts/demo-report.py
# reads those, never the text): the kernel, the cluster as each node sees
# it, its RDMA links, xport_test's result and the counters.
if rdl_check_env && rdl_start ""; then
	rdl_json_obj tool demo.sh figure kernel node "$RDLOCK_NODE_ID" \
		release "$(uname -r)"
	echo "# node $RDLOCK_NODE_ID: the cluster as this node sees it"
	rdlockctl status | sed 's/^/#   /'
	rdl_json_cmd demo.sh status status rdlockctl status --json
	echo "# node $RDLOCK_NODE_ID: RDMA devices"
	rdma link show 2>&1 | sed 's/^/#   /'
	rdl_json_cmd demo.sh rdma_links links rdma -j link show
	backend=$(rdl_backend)
	RDLOCK_EXPECT_BACKEND=$backend RDLOCK_K=${RDLOCK_DEMO_K:-500}
	export RDLOCK_EXPECT_BACKEND RDLOCK_K
	passed=0
	rdl_step "primitives, incl. $RDLOCK_K adds per node to a counter on every node" \
		xport_test && passed=1
	rdl_json_obj tool demo.sh figure primitives node "$RDLOCK_NODE_ID" \
		k "$RDLOCK_K" passed "$passed"
	# The counters themselves (F + 0 on every node, final once any node
	# is past xport_test's barrier), for the report; the test checked them.
	# Each also as JSON, which the report reads.
	t=0
	while [ "$t" -lt "$RDLOCK_NR_NODES" ]; do
		v=$(rdlock-bench --raw-read 0 --node "$t" 2>&1)
		echo "# node $RDLOCK_NODE_ID: exact-count counter on node $t = $v, nodes x K = $((RDLOCK_NR_NODES * RDLOCK_K))"
		rdl_json_obj tool demo.sh figure exact_count counter_node "$t" \
			value "$v" k "$RDLOCK_K" expected $((RDLOCK_NR_NODES * RDLOCK_K))
		t=$((t + 1))
	done
	echo "# node $RDLOCK_NODE_ID: per-peer counters"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/nodes
fi
rdl_stop

# ocfs2.sh brings rdlock up and takes it down itself (stack rdlock); each
# run prints its own TAP lines, and one step here says how it ended (also
# as JSON, as whether OCFS2 was asked for at all).
rdl_json_obj tool demo.sh figure ocfs2 node "$RDLOCK_NODE_ID" \
	asked $(($# == 2))
if [ $# -eq 2 ]; then
	echo "# demo: ocfs2.sh o2cb"
	passed=0
	rdl_step "OCFS2 on o2cb (o2dlm over TCP), /dev/vda: mount, metadata benchmark, checks" \
		env RDLOCK_OCFS2_DEV=/dev/vda RDLOCK_OCFS2_PORT=7780 \
		RDLOCK_OCFS2_FLOOD=0 \
		sh "$(dirname "$0")/ocfs2.sh" o2cb "$1" "$2" && passed=1
	rdl_json_obj tool demo.sh figure ocfs2_run node "$RDLOCK_NODE_ID" \
		stack o2cb passed "$passed"
	echo "# demo: ocfs2.sh rdlock"
	passed=0
	rdl_step "OCFS2 on rdlock (ocfs2_stack_rdlock), /dev/vdb: mount, metadata benchmark, checks" \
		env RDLOCK_OCFS2_DEV=/dev/vdb RDLOCK_OCFS2_PORT=7820 \
		sh "$(dirname "$0")/ocfs2.sh" rdlock && passed=1
	rdl_json_obj tool demo.sh figure ocfs2_run node "$RDLOCK_NODE_ID" \
		stack rdlock passed "$passed"
fi
rdl_finish
