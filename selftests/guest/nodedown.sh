#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A node declared down (rdlockctl node-down; RDLOCK_IOC_NODE_DOWN), run at
# once on every guest (3 or 4):
#   nodedown.sh verbs|twosided
# The last node is the victim: the survivors cut it off and release its
# DLM locks (selftests/rdlock/nodedown_test.c). It stays up, cut off, so
# the end is an out-of-band barrier (TCP port 7790) instead of the
# transport's final barrier, which it could no longer reach.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-120}
export RDLOCK_BARRIER_TIMEOUT
DONE_PORT=7790

BACKEND=$1
rdl_backend_arg "$BACKEND"

# Two DLM lockspaces (nodedown_test's) in the default lock table.
if rdl_check_env && rdl_start "backend=$BACKEND dlm_slots=8192" &&
   rdl_step "insmod rdlock_dlm_test.ko" \
	insmod "$RDL/modules/rdlock_dlm_test.ko"; then
	rdl_step "nodedown_test ($BACKEND)" nodedown_test
	echo "# node $RDLOCK_NODE_ID DLM counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/dlm
fi
rdl_signal $DONE_PORT
# Every node finished its part: only then may any take rdlock down.
rdl_step "every node done" rdl_wait_all_signals $DONE_PORT 300
rdl_loaded rdlock_dlm_test &&
	rdl_step "rmmod rdlock_dlm_test" rdl_rmmod rdlock_dlm_test
# No final barrier through the transport (rdl_stop's): the victim is out.
rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
rdl_stop
rdl_finish
