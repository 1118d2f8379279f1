#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The lockspace directory survives the loss of its node, on 3 guests:
#   dirdown.sh verbs|twosided
# Node 0, the lowest, keeps the directory; the others a copy each
# (membership=static). Node 1 creates lockspace dd-old and holds name x in
# it exclusive; node 2 has never opened dd-old. Then the host cuts node
# 0's power (host-ctl.sh kill 0) and, once it no longer answers ping, the
# survivors declare it down (rdlockctl node-down 0). Node 2 then opens
# dd-old: it must attach to node 1's lockspace through node 1's copy, so
# its TRY of x is refused while node 1 holds it (a directory lost with node
# 0 refuses the open; one rebuilt without node 1's lockspace would make
# dd-old anew, in a region of its own, and grant x twice). Node 1 holds
# eight more names in dd-old, so that some were homed on node 0 and moved
# to their heir (every node hashes them alike): node 2's TRY of each is
# refused too. Node 1's declaration holds its pass over its lockspaces
# for 10 s (inject_ls_walk_delay_ms), and node 1 removes lockspace dd-rm
# meanwhile: a declaration walking a lockspace does not keep its creator
# from removing it, and the removal returns once it is gone. The survivors create dd-new at the new directory and
# find exclusion in it too; once node 1 lets go, node 2 gets every name.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

BACKEND=$1
rdl_backend_arg "$BACKEND"
ID=$RDLOCK_NODE_ID
# Signals: node 1 holds x (P_HELD); node 2 ready (P_READY); node 2 found
# x held in dd-old (P_OLD); node 1 holds y in dd-new (P_NEW); node 2 found
# y held (P_TRIED); node 1 let both go (P_FREE); a survivor is done
# (P_DONE).
P_HELD=7793
P_READY=7794
P_OLD=7795
P_NEW=7796
P_TRIED=7797
P_FREE=7798
P_DONE=7799
WAIT=120
# Held in dd-old with x: with three homes, eight names leave none on node
# 0 once in about 26 lockspace tags.
MORE="a b c d e f g h"

WALK_DELAY=/sys/kernel/debug/rdlock/inject_ls_walk_delay_ms

# The declaration's pass took the delay: it holds the lockspaces.
walk_delayed() {
	[ "$(cat "$WALK_DELAY")" = 0 ]
}

# rdlockctl node-down 0, removing dd-rm while its pass holds it.
down_removing() {
	echo 10000 >"$WALK_DELAY" || return 1
	rdlockctl node-down 0 &
	dr_pid=$!
	dr_rc=0
	if ! rdl_poll 30 walk_delayed; then
		echo "# node 1: the declaration took no delay"
		dr_rc=1
	elif ! kill -0 "$dr_pid" 2>/dev/null; then
		echo "# node 1: the declaration ended before dd-rm's removal"
		dr_rc=1
	elif ! rdlockctl ls-remove dd-rm; then
		dr_rc=1
	elif [ -d /sys/kernel/debug/rdlock/lockspaces/dd-rm ]; then
		echo "# node 1: dd-rm still open after its removal"
		dr_rc=1
	fi
	wait "$dr_pid" || dr_rc=1
	return $dr_rc
}

# Node 0 no longer answers ping: it is off.
node0_silent() {
	! ping -c 1 -W 1 "$(rdl_node_addr 0)" >/dev/null 2>&1
}

node0_off() {
	rdl_poll "$WAIT" node0_silent
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
	rdl_not_ok "dirdown.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

if ! rdl_start "backend=$BACKEND"; then
	rdl_finish
	exit 1
fi

# shellcheck disable=SC2086 # $MORE: one word per name
case $ID in
0)
	rdl_step "node 1 holds x in dd-old" rdl_wait_signal 1 $P_HELD $WAIT &&
	rdl_step "node 2 ready" rdl_wait_signal 2 $P_READY $WAIT &&
	echo "# node 0: the host cuts this node's power" &&
	sh "$RDL/guest/host-ctl.sh" kill 0
	rdl_not_ok "node 0 still running after its power cut"
	rdl_finish
	exit 1
	;;
1)
	rdl_step "create dd-old" rdlockctl ls-create dd-old &&
	rdl_step "hold x in dd-old" rdl_hold dd-old x &&
	rdl_step "hold $MORE in dd-old" rdl_hold_each dd-old $MORE &&
	rdl_step "create dd-rm" rdlockctl ls-create dd-rm &&
	rdl_signal $P_HELD &&
	rdl_step "node 0 off" node0_off &&
	rdl_step "rdlockctl node-down 0, dd-rm removed while it walks" \
		down_removing &&
	rdl_step "node 2 found x held" rdl_wait_signal 2 $P_OLD $WAIT &&
	rdl_step "create dd-new at the new directory" rdlockctl ls-create dd-new &&
	rdl_step "hold y in dd-new" rdl_hold dd-new y &&
	rdl_signal $P_NEW &&
	rdl_step "node 2 found y held" rdl_wait_signal 2 $P_TRIED $WAIT &&
	rdl_step "every name let go" rdl_release_all &&
	rdl_signal $P_FREE
	;;
2)
	rdl_step "node 1 holds x in dd-old" rdl_wait_signal 1 $P_HELD $WAIT &&
	rdl_signal $P_READY &&
	rdl_step "node 0 off" node0_off &&
	rdl_step "rdlockctl node-down 0" rdlockctl node-down 0 &&
	rdl_step "open dd-old after its directory's node died" \
		rdlockctl ls-create dd-old &&
	rdl_step "x in dd-old refused: node 1 holds it" rdl_busy dd-old x &&
	rdl_step "$MORE in dd-old refused: node 1 holds them" \
		rdl_busy dd-old $MORE &&
	rdl_signal $P_OLD &&
	rdl_step "node 1 holds y in dd-new" rdl_wait_signal 1 $P_NEW $WAIT &&
	rdl_step "open dd-new" rdlockctl ls-create dd-new &&
	rdl_step "y in dd-new refused: node 1 holds it" rdl_busy dd-new y &&
	rdl_signal $P_TRIED &&
	rdl_step "node 1 let go" rdl_wait_signal 1 $P_FREE $WAIT &&
	rdl_step "x and $MORE in dd-old granted" rdl_free dd-old x $MORE &&
	rdl_step "y in dd-new granted" rdl_free dd-new y
	;;
esac
[ -n "$RDL_HOLDERS" ] && rdl_release_all
rdl_signal $P_DONE
# The survivors wait for each other only: node 0 is off.
other=$((3 - ID))
rdl_step "node $other done" rdl_wait_signal $other $P_DONE 300
for ls in dd-old dd-new; do
	[ -d "/sys/kernel/debug/rdlock/lockspaces/$ls" ] &&
		rdl_step "remove $ls" rdlockctl ls-remove "$ls"
done
# No final barrier through the transport (rdl_stop's): node 0 is off.
rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
rdl_stop
rdl_finish
