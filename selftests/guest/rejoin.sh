#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A node declared down comes back with a new lock table, on 3 guests:
#   rejoin.sh verbs|twosided
# membership=static. Node 1 holds x in lockspace rj-old; the survivors
# (nodes 0 and 2) declare it down while it runs (rdlockctl node-down 1),
# and node 2 is then granted x. Node 1, told it was declared down, takes
# its cluster down and up: a new table. Node 0 dials it and learns its new
# table from a knock; node 1 dials node 2, which takes it back from the
# request. Back, node 1 keeps no lockspace: the directory, every name and
# lock word stay on the survivors, so its TRY of x in rj-old is refused
# while node 2 holds it, and NAMES names it holds in rj-new, a lockspace
# it creates once back, are refused to node 0 (a node that believed it
# keeps names would hash some of them to itself and grant them twice).
# Then the survivors declare it down a second time, which must be done
# anew (not "already down"), and grants its names to node 0. The old
# module refuses the new table: node 1 never gets ready.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

BACKEND=$1
rdl_backend_arg "$BACKEND"
ID=$RDLOCK_NODE_ID
# Signals: node 0 created rj-old (P_MADE); node 1 holds x (P_HELD); node
# N declared node 1 down (P_DOWN); node 2 holds x (P_X); node 1 is back
# (P_BACK); node 1 holds the names of rj-new (P_NEW); node 0 found them
# held (P_TRIED); node N declared node 1 down again (P_DOWN2); node 0 got
# every name of rj-new (P_GOT); done (P_DONE); its lockspaces removed
# (P_REMOVED).
P_MADE=7800
P_HELD=7801
P_DOWN=7802
P_X=7803
P_BACK=7804
P_NEW=7805
P_TRIED=7806
P_DOWN2=7807
P_GOT=7808
P_DONE=7809
P_REMOVED=7810
WAIT=120
# Node 1 opens two lockspaces and takes NAMES' locks between P_BACK and
# P_NEW: on a debug kernel under load that took more than WAIT once, and a
# survivor that gives up then never declares node 1 down again, so the
# other's declaration waits for it until the step's time is up.
WAIT_NEW=600
NAMES="n1 n2 n3 n4 n5 n6 n7 n8 n9 n10 n11 n12"

# The names of rj-new, busy or free.
# shellcheck disable=SC2086 # the names are words
busy_names() {
	rdl_busy "$1" $NAMES
}

# shellcheck disable=SC2086
free_names() {
	rdl_free "$1" $NAMES
}

hold_names() {
	for n in $NAMES; do
		rdl_hold "$1" "$n" || return 1
	done
}

# Told it was declared down: both survivors are "down" here.
cut_off() {
	rdl_node_flag 0 down && rdl_node_flag 2 down
}

# Node 1 declared down here: the call must do it, not find it done.
declare_down() {
	rdlockctl node-down 1
}

# locks_lost LS NAME: "rdlockctl locks LS NAME" lists this node's EX hold
# of NAME, whose lockspace was lost with the epoch, as lost (its holder
# must let go), and nothing else.
locks_lost() {
	rdlockctl locks "$1" "$2" > /tmp/locks-lost || return 1
	sed "s/^/# node $ID: /" /tmp/locks-lost
	awk -v n="$2" -v id="$ID" 'NR > 1 { c++ }
		NR > 1 && $1 == n && $2 == id && $3 == "lost" && $4 == "ex" { f++ }
		END { exit !(c == 1 && f == 1) }' /tmp/locks-lost
}

# lost LS: LS, lost with the epoch this node was declared down in, is no
# longer this node's: nothing to remove by that name.
lost() {
	l_err=$(rdlockctl ls-remove "$1" 2>&1) && return 1
	case $l_err in
	*ENOENT*) [ ! -d "/sys/kernel/debug/rdlock/lockspaces/$1" ] ;;
	*) echo "# node $ID: removing lost $1: $l_err"; return 1 ;;
	esac
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
	rdl_not_ok "rejoin.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

if ! rdl_start "backend=$BACKEND"; then
	rdl_finish
	exit 1
fi

case $ID in
0)
	rdl_step "create rj-old" rdlockctl ls-create rj-old &&
	rdl_signal $P_MADE &&
	rdl_step "node 1 holds x" rdl_wait_signal 1 $P_HELD $WAIT &&
	rdl_step "x in rj-old refused: node 1 holds it" rdl_busy rj-old x &&
	rdl_step "rdlockctl node-down 1" declare_down &&
	rdl_signal $P_DOWN &&
	rdl_step "node 2 holds x" rdl_wait_signal 2 $P_X $WAIT &&
	rdl_step "node 1 back" rdl_wait_signal 1 $P_BACK $WAIT &&
	rdl_step "node 1 shown returned" rdl_poll 30 rdl_node_flag 1 returned &&
	rdl_step "node 1 holds the names of rj-new" \
		rdl_wait_signal 1 $P_NEW $WAIT_NEW &&
	rdl_step "open rj-new" rdlockctl ls-create rj-new &&
	rdl_step "names of rj-new refused: node 1 holds them" \
		busy_names rj-new &&
	rdl_signal $P_TRIED &&
	rdl_step "rdlockctl node-down 1, again" declare_down &&
	rdl_signal $P_DOWN2 &&
	rdl_step "node 2 declared node 1 down again" \
		rdl_wait_signal 2 $P_DOWN2 $WAIT &&
	rdl_step "names of rj-new granted" free_names rj-new &&
	rdl_signal $P_GOT
	;;
1)
	rdl_step "node 0 created rj-old" rdl_wait_signal 0 $P_MADE $WAIT &&
	rdl_step "open rj-old" rdlockctl ls-create rj-old &&
	rdl_step "hold x in rj-old" rdl_hold rj-old x &&
	rdl_signal $P_HELD &&
	rdl_step "node 0 declared this node down" \
		rdl_wait_signal 0 $P_DOWN $WAIT &&
	rdl_step "node 2 declared this node down" \
		rdl_wait_signal 2 $P_DOWN $WAIT &&
	rdl_step "told: both survivors cut off here" rdl_poll 30 cut_off &&
	rdl_step "rdlockctl locks lists x lost" rdl_poll 30 locks_lost rj-old x &&
	rdl_step "holders end" rdl_release_lost &&
	rdl_step "rj-old lost" lost rj-old &&
	rdl_step "cluster down" rdlockctl down &&
	rdl_step "cluster up: a new table" rdlockctl up &&
	rdl_step "cluster ready" rdlockctl wait --timeout $WAIT &&
	rdl_step "this node shown returned" rdl_node_flag 1 returned &&
	rdl_signal $P_BACK &&
	rdl_step "node 2 holds x" rdl_wait_signal 2 $P_X $WAIT &&
	rdl_step "open rj-old again" rdlockctl ls-create rj-old &&
	rdl_step "x in rj-old refused: node 2 holds it" rdl_busy rj-old x &&
	rdl_step "create rj-new" rdlockctl ls-create rj-new &&
	rdl_step "hold the names of rj-new" hold_names rj-new &&
	rdl_signal $P_NEW &&
	rdl_step "node 0 found them held" rdl_wait_signal 0 $P_TRIED $WAIT &&
	rdl_step "node 0 declared this node down again" \
		rdl_wait_signal 0 $P_DOWN2 $WAIT &&
	rdl_step "told again" rdl_poll 30 cut_off &&
	rdl_step "holders end" rdl_release_lost &&
	rdl_step "rj-old lost" lost rj-old &&
	rdl_step "rj-new lost" lost rj-new
	;;
2)
	rdl_step "node 0 created rj-old" rdl_wait_signal 0 $P_MADE $WAIT &&
	rdl_step "open rj-old" rdlockctl ls-create rj-old &&
	rdl_step "node 1 holds x" rdl_wait_signal 1 $P_HELD $WAIT &&
	rdl_step "rdlockctl node-down 1" declare_down &&
	rdl_signal $P_DOWN &&
	rdl_step "node 0 declared node 1 down" \
		rdl_wait_signal 0 $P_DOWN $WAIT &&
	rdl_step "hold x: node 1's hold released" rdl_hold rj-old x &&
	rdl_signal $P_X &&
	rdl_step "node 1 back" rdl_wait_signal 1 $P_BACK $WAIT &&
	rdl_step "node 1 shown returned" rdl_poll 30 rdl_node_flag 1 returned &&
	rdl_step "node 1 holds the names of rj-new" \
		rdl_wait_signal 1 $P_NEW $WAIT_NEW &&
	# Open here: a node releases a dead node's holds in open lockspaces.
	rdl_step "open rj-new" rdlockctl ls-create rj-new &&
	rdl_step "node 0 found the names held" \
		rdl_wait_signal 0 $P_TRIED $WAIT &&
	rdl_step "rdlockctl node-down 1, again" declare_down &&
	rdl_signal $P_DOWN2 &&
	rdl_step "node 0 got every name" rdl_wait_signal 0 $P_GOT $WAIT &&
	rdl_step "x let go" rdl_release_all
	;;
esac
[ -n "$RDL_HOLDERS" ] && rdl_release_lost
rdl_signal $P_DONE
# Out of band: node 1 is cut off at the end.
for peer in 0 1 2; do
	[ "$peer" = "$ID" ] ||
		rdl_step "node $peer done" rdl_wait_signal "$peer" $P_DONE 300
done
for ls in rj-old rj-new; do
	rdl_step "remove $ls" rdl_rm_ls "$ls"
done
# Nobody takes its cluster down before every node removed its lockspaces:
# the next script of a shared boot (seq.sh) brings up a new table, which
# ends this epoch here, and a remove still to come finds nothing.
rdl_signal $P_REMOVED
for peer in 0 1 2; do
	[ "$peer" = "$ID" ] ||
		rdl_step "node $peer removed its lockspaces" \
			rdl_wait_signal "$peer" $P_REMOVED 300
done
# No final barrier through the transport (rdl_stop's): node 1 is out.
rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
rdl_stop
rdl_finish
