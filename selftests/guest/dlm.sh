#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Multi-node test of the DLM kernel API (kmod/include/rdlock/dlm.h), run at
# once on every guest:
#   dlm.sh verbs|twosided [DLM_TEST_ARGS...]
# rdlock_dlm_test.ko exposes the API to selftests/rdlock/dlm_test.c, which
# checks conversions, NOQUEUE, cancel, BASTs across nodes, two PR->EX
# converters, bad input errnos and an exact count under EX. Arguments after
# the backend go to dlm_test (-t NAME: that case only).

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

# A node whose test failed leaves the others at a barrier: do not let them
# wait for the step's whole limit.
RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-120}
export RDLOCK_BARRIER_TIMEOUT

BACKEND=$1
rdl_backend_arg "$BACKEND"
shift

# The room case fills the lockspace (about 2200 resources): 9 s on the
# stock kernel, 77 s (verbs) and 179 s (two-sided) under KASAN and TCG, so
# the debug kernel leaves it out.
if [ "${RDLOCK_KERNEL:-}" = debug ]; then
	RDLOCK_DLM_ROOM=${RDLOCK_DLM_ROOM:-0}
	export RDLOCK_DLM_ROOM
fi

if rdl_check_env && rdl_start "backend=$BACKEND" &&
   rdl_step "insmod rdlock_dlm_test.ko" \
	insmod "$RDL/modules/rdlock_dlm_test.ko"; then
	rdl_step "dlm_test ($BACKEND)" dlm_test "$@"
	echo "# node $RDLOCK_NODE_ID protocol counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/protocols
fi
rdl_loaded rdlock_dlm_test &&
	rdl_step "rmmod rdlock_dlm_test" rdl_rmmod rdlock_dlm_test
rdl_stop
rdl_finish
