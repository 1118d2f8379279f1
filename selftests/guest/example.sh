#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel API through its example client, on every node at once: each
# node loads rdlock_example.ko, which opens one shared lockspace (created
# by whichever node comes first, attached by the others), checks the API's
# contract on names of its own and prints one KTAP line per check to the
# kernel log; the load fails if any check failed. Then unload.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

# The example's KTAP lines from the kernel log, as our own TAP comments.
example_report() {
	dmesg | sed -n 's/^\(\[[ 0-9.]*\] \)\{0,1\}rdlock_example: /# /p'
}

# "N checks, 0 failed" with N > 0.
example_passed() {
	dmesg | grep -Eq 'rdlock_example: [1-9][0-9]* checks, 0 failed'
}

if rdl_check_env && rdl_start ""; then
	rdl_step "insmod rdlock_example.ko (node $RDLOCK_NODE_ID)" \
		insmod "$RDL/modules/rdlock_example.ko" lockspace=example \
		prefix="node$RDLOCK_NODE_ID-" iterations=30
	example_report
	rdl_step "every example check passed" example_passed
	rdl_loaded rdlock_example &&
		rdl_step "rmmod rdlock_example" rdl_rmmod rdlock_example
fi
rdl_stop
rdl_finish
