#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Multi-node mutual exclusion of the lock protocols (bakery, the CAS
# spinlock baseline and CQL; CQL grant order), run at once on every guest:
#   lock.sh verbs|twosided [all|backend]
# See selftests/rdlock/lock_test.c for what is checked. With "backend"
# (RDLOCK_LOCK_SCOPE), the tests of a protocol's own logic, on which the
# backend has no say, are skipped (lock_test.c, PROTOCOL_LOGIC_SKIP): the
# suite's debug kernel runs them on verbs and, on the two-sided backend,
# only the tests whose outcome the backend can change.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-1200}
export RDLOCK_BARRIER_TIMEOUT

BACKEND=$1
rdl_backend_arg "$BACKEND"
case ${2:-all} in
all|backend)	RDLOCK_LOCK_SCOPE=${2:-all}; export RDLOCK_LOCK_SCOPE ;;
*)		echo "usage: $0 verbs|twosided [all|backend]" >&2; exit 2 ;;
esac

# Under KASAN, lockdep and kmemleak (the debug kernel) these runs are there
# for the kernel's own reports: every test and every path, with fewer
# rounds (they took about 370 s a backend at the stock kernel's counts).
# The stock kernel runs the full counts on both backends.
if [ "${RDLOCK_KERNEL:-}" = debug ]; then
	: "${RDLOCK_LOCK_ITERS:=40}" "${RDLOCK_CQL_ITERS:=30}"
	# Multi-slot: 110 at least, to cross the update word's COUNT_MAX;
	# leases: 3 rounds, so that every node (the lock's home too) stalls.
	: "${RDLOCK_UPDATE_ITERS:=25}" "${RDLOCK_MULTISLOT_ITERS:=120}"
	: "${RDLOCK_LEASE_ROUNDS:=3}" "${RDLOCK_OVERFLOW_TOTAL:=1000}"
	export RDLOCK_LOCK_ITERS RDLOCK_CQL_ITERS RDLOCK_UPDATE_ITERS \
		RDLOCK_MULTISLOT_ITERS RDLOCK_LEASE_ROUNDS RDLOCK_OVERFLOW_TOTAL
fi

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	rdl_step "lock_test ($BACKEND)" lock_test
	echo "# node $RDLOCK_NODE_ID protocol counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/protocols
fi
rdl_stop
rdl_finish
