#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Multi-node transport test, run at once on every guest of the cluster:
#   xport.sh verbs|twosided
# Loads rdlock.ko with that backend and rdlock_test.ko, brings the cluster
# (id 7, RDLOCK_NODE_ADDRS) up, runs xport_test, waits at a final barrier
# so that no node goes down while others test, then unloads everything.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

# Nodes that finish early wait for the slowest at the final barrier.
RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT

BACKEND=$1
rdl_backend_arg "$BACKEND"

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	RDLOCK_EXPECT_BACKEND=$BACKEND
	export RDLOCK_EXPECT_BACKEND
	rdl_step "xport_test ($BACKEND)" xport_test
fi
rdl_stop
rdl_finish
