#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The lock benchmark of the product path, on every guest at once
# (rdlock-bench: lockspaces and /dev/rdlock locks by name, bakery, CAS
# spinlock and CQL side by side in one run, with the stock kernel's fs/dlm beside
# them: corosync and dlm_controld come up first, see lib.sh), then its
# uncontended mode next to raw FETCH_AND_ADD round trips (fs/dlm: a name
# mastered on the next node, as rdlock's are homed there), then one hot
# name from every node (the grants' split), then a demo of "rdlockctl lock": every node
# increments a counter in node 0's memory with a non-atomic read and write
# under an exclusive lock, and the counter must end at nodes x rounds.
# A benchmark: it reports timings and asserts none; a step fails only when
# a tool fails (an error, a lock call failing, a lost increment), or when
# fs/dlm does not come up: its step fails, says why, and rdlock-bench
# reports fs/dlm absent with that reason (and fails) but runs the rest.
#   rdlockbench.sh [verbs|twosided]	(default: the cluster's choice)
# Results: $RDLOCK_BENCH_DIR (default /tmp)/rdlock-bench{,-uncontended,-hot}.json,
# also printed with "#json " in front, as are the counters, the backend and
# whether fs/dlm came up (lib.sh), which scripts/demo-report.py reads.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

OUT=${RDLOCK_BENCH_DIR:-/tmp}
DURATION=${RDLOCK_RDLOCKBENCH_SECS:-10}
UNC_OPS=${RDLOCK_RDLOCKBENCH_UNC_OPS:-300}
HOT_SECS=${RDLOCK_RDLOCKBENCH_HOT_SECS:-5}
# The contended mix: 3 nodes x 8 clients.
CLIENTS=${RDLOCK_RDLOCKBENCH_CLIENTS:-8}
# cqlh: CQL hierarchical (rdlock-bench), beside the others when asked for.
PROTOS=${RDLOCK_RDLOCKBENCH_PROTOS:-bakery,caslock,cql,dlm}
ROUNDS=${RDLOCK_DEMO_ROUNDS:-10}
RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT
# Raw slots (first_free_slot + N on node 0): rdlock-bench takes 408 from
# its --slot-off; the counter demo the ones above 960.
SLOT_CONTENDED=64
SLOT_UNCONTENDED=512
SLOT_COUNTER=960
SLOT_COUNTER_DONE=961
SLOT_RACY=962
SLOT_RACY_DONE=963

PARAM=
if [ -n "$1" ]; then
	rdl_backend_arg "$1"
	PARAM="backend=$1"
fi

# One round: read node 0's counter, then write it plus one, in two separate
# processes: nothing but the lock keeps another node out in between.
# shellcheck disable=SC2016 # expanded by the inner sh
INCREMENT='v=$(rdlock-bench --raw-read "$0") && rdlock-bench --raw-write "$0" $((v + 1))'

counter_demo() {
	rdlockctl ls-create demo || return 1
	i=0
	while [ "$i" -lt "$ROUNDS" ]; do
		rdlockctl lock -x demo counter -- sh -c "$INCREMENT" "$SLOT_COUNTER" ||
			return 1
		i=$((i + 1))
	done
	rdlock-bench --barrier "$SLOT_COUNTER_DONE" || return 1
	final=$(rdlock-bench --raw-read "$SLOT_COUNTER") || return 1
	rdlockctl ls-remove demo || return 1
	echo "# node $RDLOCK_NODE_ID: counter under 'rdlockctl lock -x demo counter' = $final, nodes x rounds = $((RDLOCK_NR_NODES * ROUNDS))"
	rdl_json_obj tool rdlockbench.sh figure rdlockctl_counter value "$final" \
		rounds "$ROUNDS" expected $((RDLOCK_NR_NODES * ROUNDS))
	[ "$final" -eq $((RDLOCK_NR_NODES * ROUNDS)) ]
}

# The same without the lock, for contrast: lost updates are likely, and
# not checked.
racy_demo() {
	i=0
	while [ "$i" -lt "$ROUNDS" ]; do
		sh -c "$INCREMENT" "$SLOT_RACY" || return 1
		i=$((i + 1))
	done
	rdlock-bench --barrier "$SLOT_RACY_DONE" || return 1
	final=$(rdlock-bench --raw-read "$SLOT_RACY") || return 1
	echo "# node $RDLOCK_NODE_ID: the same without the lock = $final (lost updates are expected)"
	rdl_json_obj tool rdlockbench.sh figure racy_counter value "$final"
}

if rdl_check_env && rdl_start "$PARAM"; then
	backend=$(rdl_backend)
	echo "# node $RDLOCK_NODE_ID: backend $backend"
	rdl_json_obj tool rdlockbench.sh figure backend node "$RDLOCK_NODE_ID" \
		backend "$backend"
	rdl_step "fs/dlm up: corosync and dlm_controld (no fencing)" rdl_dlm_start
	# fs/dlm absent (on any node): rdlock-bench says so on every node.
	NO_DLM=
	[ -n "$RDL_DLM_WHY" ] && NO_DLM="--no-dlm=node $RDLOCK_NODE_ID: $RDL_DLM_WHY"
	rdl_step "rdlock-bench, contended ($CLIENTS clients per node, 8 locks, zipf 0.99, 50% shared, ${DURATION} s per protocol)" \
		rdlock-bench --protocols "$PROTOS" ${NO_DLM:+"$NO_DLM"} \
		--clients "$CLIENTS" --locks 8 --zipf 0.99 --read-ratio 0.5 \
		--cs-us 20 --duration "$DURATION" --slot-off "$SLOT_CONTENDED" \
		--json "$OUT/rdlock-bench.json"
	rdl_step "rdlock-bench --uncontended ($UNC_OPS acquisitions per protocol, node after node)" \
		rdlock-bench --protocols "$PROTOS" ${NO_DLM:+"$NO_DLM"} \
		--uncontended --clients 1 --ops "$UNC_OPS" \
		--slot-off "$SLOT_UNCONTENDED" \
		--json "$OUT/rdlock-bench-uncontended.json"
	rdl_step "rdlock-bench, one hot name (1 client per node, exclusive, ${HOT_SECS} s per protocol)" \
		rdlock-bench --protocols "$PROTOS" ${NO_DLM:+"$NO_DLM"} \
		--workload hot --clients 1 --locks 1 --zipf 0 --read-ratio 0 \
		--cs-us 20 --duration "$HOT_SECS" --slot-off "$SLOT_CONTENDED" \
		--json "$OUT/rdlock-bench-hot.json"
	rdl_json "$OUT/rdlock-bench.json" "$OUT/rdlock-bench-uncontended.json" \
		"$OUT/rdlock-bench-hot.json"
	rdl_step "rdlockctl lock: $ROUNDS exclusive read-increment-writes per node of a counter on node 0" \
		counter_demo
	rdl_step "the same without the lock (for contrast)" racy_demo
	rdl_dlm_stop
fi
rdl_stop
rdl_finish
