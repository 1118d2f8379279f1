#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - the main job: boot a QEMU/rxe cluster of Debian-kernel guests
# (3 by default), form an rdlock cluster, show each node's view of it, prove
# the RDMA primitives with an exact cluster-wide count, run the bakery lock
# against the CAS spinlock with every node on one lock, and measure the
# primitives and an uncontended lock next to perftest's ib_atomic_lat in the
# same guests, for both atomic backends; then the lock benchmark of the
# product path (rdlock-bench: lockspaces and locks by name, bakery and CAS
# spinlock side by side, contended and uncontended) and "rdlockctl lock"
# guarding a counter in node 0's memory. Sets up everything it needs.
#
# usage: demo.sh [NODES]

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nodes=${1:-3}
logs=$ROOT/build/demo

"$ROOT/scripts/host-setup.sh" >&2
echo "demo: building the modules and tools for Debian's kernel" >&2
payload=$(RDLOCK_BUILD_LOG="$ROOT/build/demo-build.log" \
	  "$ROOT/scripts/payload.sh" stock)
rm -rf "$logs"

rc=0
"$ROOT/scripts/cluster.sh" --kernel stock --nodes "$nodes" --timeout 900 \
	--payload "$payload" --log-dir "$logs" -- sh guest/demo.sh || rc=$?
# ... the protocols under contention, every node on one lock ...
"$ROOT/scripts/cluster.sh" --kernel stock --nodes "$nodes" --timeout 900 \
	--payload "$payload" --log-dir "$logs/lockbench" \
	-- sh guest/lockbench.sh verbs || rc=$?
# ... locks by name through /dev/rdlock, and rdlockctl lock ...
"$ROOT/scripts/cluster.sh" --kernel stock --nodes "$nodes" --timeout 900 \
	--payload "$payload" --log-dir "$logs/rdlockbench" \
	-- sh guest/rdlockbench.sh || rc=$?
# ... and the latency comparison between nodes 0 and 1, for each backend.
for backend in verbs twosided; do
	"$ROOT/scripts/cluster.sh" --kernel stock --nodes 2 --timeout 900 \
		--payload "$payload" --bin /usr/bin/ib_atomic_lat \
		--log-dir "$logs/bench-$backend" -- sh guest/bench.sh "$backend" ||
		rc=$?
done

for ((i = 0; i < nodes; i++)); do
	echo "=============================== node $i"
	cat "$logs/node$i.out"
done
echo "=============================== one lock, every node at once"
for ((i = 0; i < nodes; i++)); do
	grep -v '^ok\|^TAP\|^1\.\.' "$logs/lockbench/node$i.out" || true
done
for backend in verbs twosided; do
	echo "=============================== latency node 0 -> 1, $backend"
	cat "$logs/bench-$backend/node0.out"
done
echo "=============================== locks by name (rdlock-bench), rdlockctl lock"
for ((i = 0; i < nodes; i++)); do
	grep -v '^ok\|^TAP\|^1\.\.\|^#json\|^RDLOCK-GUEST-EXIT' \
		"$logs/rdlockbench/node$i.out" || true
done
echo "demo: logs in $logs"
exit $rc
