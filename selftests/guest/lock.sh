#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Multi-node mutual exclusion of the lock protocols (bakery and the CAS
# spinlock baseline), run at once on every guest:
#   lock.sh verbs|twosided
# See selftests/rdlock/lock_test.c for what is checked.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-1200}
# Acquisitions of the overflow test. Stock: 70000, COUNT_MAX is crossed
# twice. Debug (KASAN under TCG): 34000, crossed once; the lock's home node
# takes its share with local calls in a minute, but with the two-sided
# backend the other nodes manage only about 50 acquisitions a second each,
# so 70000 keep the home node waiting at the barrier for over ten minutes.
if [ -z "${RDLOCK_OVERFLOW_TOTAL:-}" ]; then
	case ${RDLOCK_KERNEL:-} in
	debug) RDLOCK_OVERFLOW_TOTAL=34000 ;;
	*) RDLOCK_OVERFLOW_TOTAL=70000 ;;
	esac
fi
export RDLOCK_BARRIER_TIMEOUT RDLOCK_OVERFLOW_TOTAL

BACKEND=$1
rdl_backend_arg "$BACKEND"

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	rdl_step "lock_test ($BACKEND)" lock_test
	echo "# node $RDLOCK_NODE_ID protocol counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/protocols
fi
rdl_stop
rdl_finish
