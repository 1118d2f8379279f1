#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Lock protocols under contention, on every guest at once: each node takes
# and releases the same exclusive lock on node 0 with the bakery lock, then
# with the CAS spinlock, then with CQL, and prints latency, throughput and
# remote operations per acquisition side by side (rdlock-lock-bench). A benchmark:
# it reports, it asserts nothing about speed.
#   lockbench.sh [verbs|twosided]	(default verbs)
# Results: $RDLOCK_BENCH_DIR (default /tmp)/lock-bench.json, also printed
# with "#json " in front (every sample: the demo's report merges the nodes),
# as is the backend the cluster agreed on.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

BACKEND=${1:-verbs}
OUT=${RDLOCK_BENCH_DIR:-/tmp}
rdl_backend_arg "$BACKEND"
RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-900}
export RDLOCK_BARRIER_TIMEOUT

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	# The backend the cluster agreed on, for the report.
	rdl_json_obj tool lockbench.sh figure backend node "$RDLOCK_NODE_ID" \
		backend "$(rdl_backend)"
	rdl_step "rdlock-lock-bench, all nodes on one lock ($BACKEND)" \
		rdlock-lock-bench --node 0 --slot 600 \
		--barrier "$RDLOCK_NR_NODES" \
		--iterations "${RDLOCK_LOCKBENCH_ITERS:-300}" \
		--json "$OUT/lock-bench.json"
	rdl_json "$OUT/lock-bench.json"
fi
rdl_stop
rdl_finish
