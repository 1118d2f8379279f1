#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Reconnection, on 3 guests: once the cluster is ready, node 2 leaves
# (down) and comes back (up), after first churning through quick up/down
# cycles (from rdlockctl, then faster from xport_test --churn) that take
# the cluster down while its own loopback connection and the others'
# connections to it are half set up (a QP created under a teardown would
# leak, and ib_free_cq would warn). Nodes 0 and 1 must see it connect a
# second time without being touched, the cluster must become ready again,
# and the exact-count transport test must pass on the re-formed cluster.
# At the end node 1 unloads rdlock while still connected to live peers.
# Every node runs with backend auto on rxe, a software device: the cluster
# must agree on the two-sided backend (backend.h).

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
RDLOCK_K=${RDLOCK_K:-200}
export RDLOCK_BARRIER_TIMEOUT RDLOCK_K
REJOINED_PORT=7772

# Connections established to node 2, as this node's STATUS reports them.
connects_of_2() {
	rdlockctl status --json |
		sed -n 's/.*{"id": 2, [^}]*"connects": \([0-9]*\)}.*/\1/p'
}

# Up and down $1 times, down after 0, 25, 50, ... ms: every stage of
# connection set-up gets interrupted by a teardown.
churn() {
	i=0
	while [ "$i" -lt "$1" ]; do
		rdlockctl up || return 1
		usleep $((i % 12 * 25000))
		rdlockctl down || return 1
		i=$((i + 1))
	done
}

rejoined() {
	! [ "$(connects_of_2)" -lt 2 ] 2>/dev/null
}

# Poll (at most 120 s) until node 2 has been connected at least twice.
saw_rejoin() {
	rdl_poll 120 rejoined
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
	rdl_not_ok "reconnect.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

if rdl_start ""; then
	backend=$(sed -n 's/^backend: //p' /sys/kernel/debug/rdlock/cluster)
	RDLOCK_EXPECT_BACKEND=$backend
	export RDLOCK_EXPECT_BACKEND
	rdl_step "rxe is a software device" \
		grep -qx "device: software" /sys/kernel/debug/rdlock/cluster
	rdl_step "auto agreed on two-sided on software devices ($backend)" \
		test "$backend" = twosided
	if [ "$RDLOCK_NODE_ID" -eq 2 ]; then
		# Let the others see the first connection before leaving.
		sleep 2
		rdl_step "node 2 leaves" rdlockctl down &&
		rdl_step "node 2 churns: 24 up/down cycles by rdlockctl" churn 24 &&
		rdl_step "node 2 churns: 200 up/down cycles, 0-50 ms apart" \
			xport_test --churn 200 &&
		rdl_step "node 2 rejoins" rdlockctl up &&
			rdl_signal $REJOINED_PORT
	else
		# Node 2 connects now and then while it churns: only its signal
		# tells the last rejoin.
		rdl_step "node 2 rejoined for good" \
			rdl_wait_signal 2 $REJOINED_PORT 300 &&
		rdl_step "node 2 connected a second time" saw_rejoin
	fi
	rdl_step "ready again" rdlockctl wait --timeout 120 &&
	rdl_step "transport test on the re-formed cluster" xport_test
fi
if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
	rdl_step "final barrier" xport_test --final-barrier
	rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
	rdl_step "rmmod rdlock while connected" rdl_rmmod rdlock
fi
rdl_stop
rdl_finish
