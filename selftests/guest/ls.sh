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

# rdlockctl lock on node 0 alone: exit statuses like flock(1).
ctl_checks() {
	rdl_step "rdlockctl ls-create" rdlockctl ls-create ctl --slots 8 &&
	rdl_step "rdlockctl lock runs the command" rdlockctl lock ctl n -- true
	rdlockctl lock ctl n -- sh -c 'exit 3'
	rdl_step "rdlockctl lock exits with the command's status" test $? -eq 3
	rdl_step "rdlockctl lock -n fails while another holds it" \
		rdlockctl lock ctl n -- sh -c 'rdlockctl lock -n ctl n -- true; test $? -eq 1'
	rdl_step "rdlockctl lock -w 0.3 times out while another holds it" \
		rdlockctl lock ctl n -- sh -c 'rdlockctl lock -s -w 0.3 ctl n -- true; test $? -eq 1'
	rdl_step "rdlockctl lock -s beside another reader" \
		rdlockctl lock -s ctl n -- rdlockctl lock -s -n ctl n -- true
	rdl_step "rdlockctl lock -u needs an update lockspace" \
		sh -c '! rdlockctl lock -u ctl n -- true'
	rdl_step "rdlockctl ls-remove" rdlockctl ls-remove ctl
}

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	rdl_step "ls_test ($BACKEND)" ls_test
	[ "$RDLOCK_NODE_ID" -eq 0 ] && ctl_checks
	echo "# node $RDLOCK_NODE_ID protocol counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/protocols
fi
rdl_stop
rdl_finish
