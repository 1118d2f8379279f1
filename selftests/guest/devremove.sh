#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Device removal, on 3 guests at once: the last node deletes its rxe
# device (the transport's ib_client remove) while it holds a lock and
# waits for another, then adds it back and rejoins with a new lock table.
# Pending and later lock calls must fail with ESHUTDOWN, never hang, on
# that node and, once it is back, on the others; the lockspace is then
# created anew and must exclude exactly. See
# selftests/rdlock/devremove_test.c.
#   devremove.sh [verbs|twosided]	(default: the backend auto picks)

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-600}
export RDLOCK_BARRIER_TIMEOUT

if [ "${RDLOCK_NR_NODES:-0}" -lt 2 ] || ! rdl_check_env; then
	rdl_not_ok "devremove.sh needs at least 2 nodes"
	rdl_finish
	exit 1
fi

params=
if [ $# -gt 0 ]; then
	rdl_backend_arg "$1"
	params="backend=$1"
fi

if rdl_start "$params"; then
	rdl_step "devremove_test" devremove_test
	rdl_step "transport test on the re-formed cluster" xport_test
fi
rdl_stop
rdl_finish
