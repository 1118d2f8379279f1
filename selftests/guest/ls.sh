#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Multi-node test of /dev/rdlock lockspaces, run at once on every guest:
#   ls.sh verbs|twosided
# Mutual exclusion by name (bakery, CAS spinlock, update locks), bakery
# fairness, a writer among a stream of readers, many names, attribute
# mismatches between nodes. See selftests/rdlock/ls_test.c.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-600}
export RDLOCK_BARRIER_TIMEOUT

BACKEND=$1
rdl_backend_arg "$BACKEND"

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	rdl_step "ls_test ($BACKEND)" ls_test
	echo "# node $RDLOCK_NODE_ID protocol counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/protocols
fi
rdl_stop
rdl_finish
