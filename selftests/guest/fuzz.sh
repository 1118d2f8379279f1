#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A structure-aware fuzz of /dev/rdlock (fuzz_test) on a one-node cluster
# that is up, then the usual end: cluster down, ticket life, rmmod. The
# harness fails the step on any splat in the guest's log (KASAN, lockdep,
# kmemleak on the debug kernel).
#   fuzz.sh [SECONDS [WORKERS]]   default 60 s and 6 workers; the seed is
#                                 printed, FUZZ_SEED sets it;
#                                 FUZZ_MODPARAMS: rdlock.ko's parameters

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_NODE_ID=${RDLOCK_NODE_ID:-0}
RDLOCK_NR_NODES=1
RDLOCK_NODE_ADDRS=${RDLOCK_NODE_ADDRS:-10.77.0.1}
export RDLOCK_NODE_ID RDLOCK_NR_NODES RDLOCK_NODE_ADDRS

FUZZ_SECONDS=${1:-60}
FUZZ_WORKERS=${2:-6}
FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}

# Nothing holds a lockspace any more (the cluster could go down).
fuzz_none_open() {
	fz_open=$(ls /sys/kernel/debug/rdlock/lockspaces) || return 1
	[ -z "$fz_open" ] && return 0
	echo "# still open: $fz_open"
	for fz_d in /sys/kernel/debug/rdlock/lockspaces/*; do
		sed "s|^|# $(basename "$fz_d") |" "$fz_d/stats"
	done
	return 1
}

# DLM lockspaces of 2048 slots: five of them fit beside the plain ones.
if rdl_start "${FUZZ_MODPARAMS-dlm_slots=2048}"; then
	rdl_step "fuzz /dev/rdlock for $FUZZ_SECONDS s, $FUZZ_WORKERS workers" \
		fuzz_test -s "$FUZZ_SECONDS" -p "$FUZZ_WORKERS" -S "$FUZZ_SEED"
	rdl_step "no lockspace open on this node" fuzz_none_open
fi
rdl_stop
rdl_finish
