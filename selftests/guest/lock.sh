#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Multi-node mutual exclusion of the lock protocols (bakery, the CAS
# spinlock baseline and CQL; CQL grant order), run at once on every guest:
#   lock.sh verbs|twosided
# See selftests/rdlock/lock_test.c for what is checked.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-1200}
export RDLOCK_BARRIER_TIMEOUT

BACKEND=$1
rdl_backend_arg "$BACKEND"

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	rdl_step "lock_test ($BACKEND)" lock_test
	echo "# node $RDLOCK_NODE_ID protocol counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/protocols
fi
rdl_stop
rdl_finish
