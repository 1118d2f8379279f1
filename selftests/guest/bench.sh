#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Transport latency against perftest, on 2 or more guests:
#   bench.sh [verbs|twosided]	(default verbs)
# Node 1 serves ib_atomic_lat, node 0 runs it as client into a file, then
# node 0 runs rdlock-xport-bench --node 1 --compare-perftest on that file.
# Every node keeps the cluster up until node 0 is done (final barrier).
# Results: $RDLOCK_BENCH_DIR (default /tmp)/perftest-atomic.txt, xport.json
# and lock-bench-uncontended.json, both also printed with "#json " in front
# (scripts/demo-report.py reads its transport table from them), as is
# perftest's device and result.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

BACKEND=${1:-verbs}
rdl_backend_arg "$BACKEND"
OUT=${RDLOCK_BENCH_DIR:-/tmp}
ITERS=2000
PERF_PORT=18515
DEV=rxe0
# The other nodes wait at the final barrier while 0 and 1 measure.
RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-900}
export RDLOCK_BARRIER_TIMEOUT

perftest_server() {
	rdl_timeout 300 ib_atomic_lat -d "$DEV" -x "$GIDX" -n "$ITERS" -F \
		-p "$PERF_PORT" > "$OUT/perftest-atomic-server.txt" 2>&1
}

# The server may not listen yet: retry the connection for a while.
perftest_client() {
	tries=0
	while [ $tries -lt 30 ]; do
		if rdl_timeout 120 ib_atomic_lat -d "$DEV" -x "$GIDX" \
			-n "$ITERS" -F -p "$PERF_PORT" "$SERVER" \
			> "$OUT/perftest-atomic.txt" 2>&1; then
			cat "$OUT/perftest-atomic.txt"
			return 0
		fi
		tries=$((tries + 1))
		sleep 1
	done
	cat "$OUT/perftest-atomic.txt" >&2
	return 1
}

if [ "${RDLOCK_NR_NODES:-0}" -lt 2 ]; then
	rdl_not_ok "bench needs 2 nodes or more"
	rdl_finish
	exit 1
fi

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	SERVER=$(rdl_node_addr 1)
	# The guest init found the IPv4 RoCE v2 GID perftest must use.
	GIDX=${RDLOCK_GID_INDEX:?}
	case "$RDLOCK_NODE_ID:$GIDX" in
	0:?*)
		passed=0
		rdl_step "ib_atomic_lat client to $SERVER" perftest_client &&
			passed=1
		rdl_json_obj tool bench.sh figure perftest node "$RDLOCK_NODE_ID" \
			device "$DEV" passed "$passed"
		[ "$passed" = 1 ] &&
		rdl_step "rdlock-xport-bench --node 1 ($BACKEND)" \
			rdlock-xport-bench --node 1 --iterations "$ITERS" \
			--json "$OUT/xport.json" \
			--compare-perftest "$OUT/perftest-atomic.txt"
		rdl_step "rdlock-lock-bench --node 1, uncontended ($BACKEND)" \
			rdlock-lock-bench --node 1 --slot 512 --iterations 500 \
			--json "$OUT/lock-bench-uncontended.json"
		rdl_json "$OUT/xport.json" "$OUT/lock-bench-uncontended.json"
		;;
	1:?*)
		rdl_step "ib_atomic_lat server" perftest_server
		;;
	esac
fi
rdl_stop
rdl_finish
