#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A rolling restart of every node, on 3 guests, with membership=dlm
# (recovery.rst, "A handover"):
#   handover.sh verbs|twosided [kill|joinkill]
# Every node runs with corosync and dlm_controld and opens lockspace ho.
# Then each node in turn, the highest first, takes its cluster down (it
# leaves: the others declare it down) and brings it up again: it returns
# with a new table, opens ho again and keeps nothing of it. Node 2, back,
# holds k in ho; node 1, back, finds k busy. Node 0, the last node keeping
# its table of the epoch, leaves in its turn: nodes 1 and 2 take over
# (their tables keep ho from then on, neither is shown returned any more),
# and node 0 is declared down. Node 2 still holds k, node 1 finds it busy
# and creates lockspace hn, in which it holds z. Node 0 comes back: it
# finds ho and hn in the directory the heirs rebuilt, k and z busy; k
# is granted to it once node 2 lets it go. Before, node 0's leaving ended
# ho on nodes 1 and 2 (ESHUTDOWN): its names had no heir.
# With kill, dlm_controld fences through the host, and node 0, holding h
# in ho, has the host cut its power instead of leaving: nodes 1 and 2
# take over once it is fenced, k stays node 2's, and node 1 is granted
# h (node 0's hold went with it) and z in hn; node 0 stays off.
# With joinkill, node 1 is down (declared down, its cluster engine still
# running) when node 0's power goes, and comes up at once, before the
# cluster engine handled node 0's failure: its join and node 0's failure
# make one generation, in which node 1 never had node 0 as a member.
# Node 2 declares node 0 down and asks node 1 at its barrier; node 1
# declares it too (heard_down 1), both take over, node 1 is granted h.
# Before, node 2's barrier waited for node 1 for good.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

BACKEND=$1
MODE=${2:-leave}
rdl_backend_arg "$BACKEND"
case $MODE in
leave) FENCE= ;;
kill|joinkill) FENCE=fence ;;
*) echo "usage: $0 verbs|twosided [kill|joinkill]" >&2; exit 2 ;;
esac

# Every node runs, ho open (P_READY); node 2 is back and holds k (P_2BACK);
# nodes 0 and 1 found k busy (P_2SEEN); node 1 is back (P_1BACK); node 0
# left (P_0GONE); nodes 1 and 2 took over, node 1 holds z in hn (P_TOOK);
# node 0 is back and found k and z busy (P_0BACK); node 2 let k go
# (P_KFREE); node 0 got k (P_KGOT); every node done (P_END); each took its
# cluster down (P_LEFT).
P_READY=7850
P_2BACK=7851
P_2SEEN=7852
P_1BACK=7853
P_0GONE=7854
P_TOOK=7855
P_0BACK=7856
P_KFREE=7857
P_KGOT=7858
P_END=7859
P_LEFT=7860
# Node N left (P_GONE + N); the others saw it declared down (P_DOWN + N):
# only then may it come up again (admin-guide.rst: a node that joins
# again before the others' cluster engine handled its leave is not
# declared down, and its new table ends every lockspace).
P_GONE=7861
P_DOWN=7864
# kill: node 1 found h busy before node 0's power goes; joinkill: node 1
# heard node 0 is about to go.
P_HBUSY=7867
# Node 2 saw node 1 back: only then may node 0 go (node 1 is shown
# returned until the handover).
P_1SEEN=7868

# Leave (the cluster down, ho removed first) and wait until nodes $1 and
# $2 declared this one down.
leave() {
	rdl_step "node $RDLOCK_NODE_ID: ho removed" rdl_rm_ls ho &&
	rdl_step "node $RDLOCK_NODE_ID: cluster down, leaving" \
		rdl_poll 30 rdlockctl down &&
	rdl_step "node $RDLOCK_NODE_ID: status: membership out, no member" \
		rdl_no_members out &&
	rdl_signal $((P_GONE + RDLOCK_NODE_ID)) &&
	rdl_step "node $RDLOCK_NODE_ID: nodes $1 and $2 declared it down" \
		rdl_wait_signal "$1" $((P_DOWN + RDLOCK_NODE_ID)) 300 &&
	rdl_wait_signal "$2" $((P_DOWN + RDLOCK_NODE_ID)) 300
}

# Leave (nodes $1 and $2 declare this one down) and come back with a new
# table: ready, shown returned here, ho open again.
restart() {
	leave "$1" "$2" &&
	rdl_step "node $RDLOCK_NODE_ID: cluster up again" rdlockctl up &&
	rdl_step "node $RDLOCK_NODE_ID: ready" rdlockctl wait --timeout 120 &&
	rdl_step "node $RDLOCK_NODE_ID: membership running, every node" \
		rdl_member_running 0-2 &&
	rdl_step "node $RDLOCK_NODE_ID: returned" \
		rdl_node_flag "$RDLOCK_NODE_ID" returned &&
	rdl_step "node $RDLOCK_NODE_ID: ho open again" rdlockctl ls-create ho
}

# Node $1 left: it is declared down here, the membership running with
# the nodes of $2.
seen_down() {
	rdl_step "node $RDLOCK_NODE_ID: node $1 left" \
		rdl_wait_signal "$1" $((P_GONE + $1)) 300 &&
	rdl_step "node $RDLOCK_NODE_ID: node $1 declared down, $2 run" \
		rdl_member_running "$2" &&
	rdl_step "node $RDLOCK_NODE_ID: node $1 shown down" \
		rdl_poll 30 rdl_node_flag "$1" down &&
	rdl_signal $((P_DOWN + $1))
}

# Node $1 is shown returned here (it left and came back).
seen_back() {
	rdl_step "node $RDLOCK_NODE_ID: node $1 returned" \
		rdl_poll 60 rdl_node_flag "$1" returned &&
	rdl_step "node $RDLOCK_NODE_ID: membership running, every node" \
		rdl_member_running 0-2
}

# On nodes 1 and 2, node 0 gone: they took over from it.
took_over() {
	rdl_step "node $RDLOCK_NODE_ID: node 0 declared down, 1 and 2 run" \
		rdl_member_running 1-2 &&
	rdl_step "node $RDLOCK_NODE_ID: node 0 shown down" \
		rdl_poll 30 rdl_node_flag 0 down &&
	rdl_step "node $RDLOCK_NODE_ID: nodes 1 and 2 took over" \
		dmesg_took &&
	rdl_step "node $RDLOCK_NODE_ID: nodes 1 and 2 no longer returned" \
		not_returned 1 2
}

dmesg_took() {
	dmesg | grep -q "rdlock: cluster [0-9]*: nodes 0x6 take over the lock tables of this epoch from nodes 0x1" || {
		dmesg | grep "rdlock: " | tail -n 12 | sed 's/^/#   /'
		return 1
	}
}

# Node 0 took over from node 1, or from nodes 1 and 2 at once: node 1
# goes once node 2's cluster is down, which may be before node 0's
# cluster engine handled node 2's leave (one generation, both left).
dmesg_took_again() {
	dmesg | grep -q "rdlock: cluster [0-9]*: nodes 0x1 take over the lock tables of this epoch from nodes 0x[26] (handover 2)"
}

# The same, and if not, what this node's rdlock said.
took_again() {
	rdl_poll 60 dmesg_took_again && return 0
	dmesg | grep "rdlock: " | tail -n 12 | sed 's/^/#   /'
	return 1
}

not_returned() {
	for h_n in "$@"; do
		! rdl_node_flag "$h_n" returned || {
			rdlockctl status | sed 's/^/#   /'
			return 1
		}
	done
}

# Node 2's holder of k is still running: its lock was never lost.
k_still_held() {
	for h_p in $RDL_HOLDERS; do
		kill -0 "$h_p" || return 1
	done
	[ -e /tmp/held-k ]
}

node0() {
	seen_down 2 0-1 &&
	rdl_step "node 2 back, holding k" rdl_wait_signal 2 $P_2BACK 300 &&
	seen_back 2 &&
	rdl_step "k in ho refused: node 2 holds it" rdl_busy ho k &&
	rdl_signal $P_2SEEN &&
	seen_down 1 0,2 || return 1
	if [ "$MODE" != joinkill ]; then
		rdl_step "node 1 back" rdl_wait_signal 1 $P_1BACK 300 &&
		seen_back 1 &&
		rdl_step "node 2 saw node 1 back" \
			rdl_wait_signal 2 $P_1SEEN 120 || return 1
	fi
	if [ "$MODE" != leave ]; then
		rdl_step "hold h in ho" rdl_hold ho h &&
		rdl_signal $P_0GONE &&
		rdl_step "node 1 found h busy (kill), or is down (joinkill)" \
			rdl_wait_signal 1 $P_HBUSY 120 &&
		rdl_step "the host cuts the power of the last node keeping its table" \
			sh "$RDL/guest/host-ctl.sh" kill 0
		return 1
	fi
	rdl_step "ho removed" rdl_rm_ls ho &&
	rdl_step "cluster down, the last node keeping its table leaves" \
		rdl_poll 30 rdlockctl down &&
	rdl_signal $P_0GONE &&
	rdl_step "nodes 1 and 2 took over" rdl_wait_signal 1 $P_TOOK 300 &&
	rdl_wait_signal 2 $P_TOOK 300 &&
	rdl_step "cluster up again" rdlockctl up &&
	rdl_step "ready" rdlockctl wait --timeout 120 &&
	rdl_step "membership running, every node" rdl_member_running 0-2 &&
	rdl_step "returned" rdl_node_flag 0 returned &&
	rdl_step "nodes 1 and 2 keep their tables" not_returned 1 2 &&
	rdl_step "ho open again, as the heirs have it" rdlockctl ls-create ho &&
	rdl_step "hn open, node 1 created it after the handover" \
		rdlockctl ls-create hn &&
	rdl_step "k in ho refused: node 2 holds it" rdl_busy ho k &&
	rdl_step "z in hn refused: node 1 holds it" rdl_busy hn z &&
	rdl_signal $P_0BACK &&
	rdl_step "node 2 let k go" rdl_wait_signal 2 $P_KFREE 120 &&
	rdl_step "k in ho granted" rdl_free ho k &&
	rdl_signal $P_KGOT
}

# Node 0's guest is off: its listener no longer answers.
node0_off() {
	! timeout 3 nc -w 1 "$(rdl_node_addr 0)" $P_0GONE </dev/null \
		>/dev/null 2>&1
}

# joinkill on node 1: down while node 0 goes, up before its failure is
# handled; node 2 asks, node 1 declares node 0 down too.
node1_joinkill() {
	leave 0 2 &&
	rdl_step "node 0 holds h, its power about to go" \
		rdl_wait_signal 0 $P_0GONE 300 &&
	rdl_signal $P_HBUSY &&
	rdl_step "node 0's power is cut" rdl_poll 120 node0_off &&
	rdl_step "cluster up again before node 0's failure is handled" \
		rdlockctl up &&
	rdl_step "ready" rdlockctl wait --timeout 240 &&
	rdl_step "node 0 declared down, 1 and 2 run" \
		rdl_member_running 1-2 "" 240 &&
	rdl_step "node 0 no member here: declared down as node 2 asked" \
		test "$(rdl_member_line heard_down)" -eq 1 &&
	rdl_step "node 0 shown down" rdl_poll 30 rdl_node_flag 0 down &&
	rdl_step "nodes 1 and 2 no longer returned" not_returned 1 2 &&
	rdl_step "ho open again" rdlockctl ls-create ho &&
	rdl_step "h in ho granted: node 0's hold went with it" \
		rdl_free ho h &&
	rdl_step "k in ho refused: node 2 holds it" rdl_busy ho k &&
	rdl_signal $P_TOOK
}

node1() {
	seen_down 2 0-1 &&
	rdl_step "node 2 back, holding k" rdl_wait_signal 2 $P_2BACK 300 &&
	seen_back 2 &&
	rdl_step "k in ho refused: node 2 holds it" rdl_busy ho k &&
	rdl_signal $P_2SEEN &&
	rdl_step "node 0 saw node 2 back" rdl_wait_signal 0 $P_2SEEN 120 ||
		return 1
	if [ "$MODE" = joinkill ]; then
		node1_joinkill
		return
	fi
	restart 0 2 &&
	rdl_step "k in ho refused: node 2 holds it" rdl_busy ho k &&
	rdl_signal $P_1BACK &&
	node0_gone &&
	took_over &&
	rdl_step "k in ho refused after the handover" rdl_busy ho k &&
	rdl_step "a name in ho granted after the handover" rdl_free ho a &&
	rdl_step "create hn after the handover" rdlockctl ls-create hn &&
	rdl_step "hold z in hn" rdl_hold hn z &&
	rdl_signal $P_TOOK || return 1
	if [ "$MODE" = kill ]; then
		rdl_step "h in ho granted: node 0's hold went with it" \
			rdl_free ho h &&
		rdl_step "node 2 found z busy" rdl_wait_signal 2 $P_TOOK 120
		return
	fi
	rdl_step "node 0 back" rdl_wait_signal 0 $P_0BACK 300 &&
	rdl_step "node 0 got k" rdl_wait_signal 0 $P_KGOT 120
}

# Node 0 left (leave), or holds h and is about to be killed (kill): then
# node 1 checks h busy first and says so (P_HBUSY), and both wait for
# dlm_controld's fencing.
node0_gone() {
	rdl_step "node 0 left" rdl_wait_signal 0 $P_0GONE 300 || return 1
	[ "$MODE" = kill ] || return 0
	if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
		rdl_step "h in ho refused: node 0 holds it" rdl_busy ho h &&
			rdl_signal $P_HBUSY || return 1
	fi
	rdl_step "dlm_controld fenced node 0 through the host" rdl_fenced 0
}

node2() {
	restart 0 1 &&
	rdl_step "hold k in ho" rdl_hold ho k &&
	rdl_signal $P_2BACK &&
	seen_down 1 0,2 || return 1
	if [ "$MODE" = joinkill ]; then
		rdl_step "node 0 holds h, its power about to go" \
			rdl_wait_signal 1 $P_HBUSY 300 &&
		rdl_step "dlm_controld fenced node 0 through the host" \
			rdl_fenced 0 &&
		took_over &&
		rdl_step "k still held through the handover" k_still_held &&
		rdl_step "node 1 took over, got h" \
			rdl_wait_signal 1 $P_TOOK 300 &&
		rdl_step "node 0 was a member here: nothing heard" \
			test "$(rdl_member_line heard_down)" -eq 0
		return
	fi
	rdl_step "node 1 back" rdl_wait_signal 1 $P_1BACK 300 &&
	seen_back 1 &&
	rdl_signal $P_1SEEN &&
	node0_gone &&
	took_over &&
	rdl_step "k still held through the handover" k_still_held &&
	rdl_step "node 1 holds z in hn" rdl_wait_signal 1 $P_TOOK 120 &&
	rdl_step "open hn" rdlockctl ls-create hn &&
	rdl_step "z in hn refused: node 1 holds it" rdl_busy hn z &&
	rdl_signal $P_TOOK || return 1
	[ "$MODE" = kill ] && return
	rdl_step "node 0 back" rdl_wait_signal 0 $P_0BACK 300 &&
	rdl_step "k let go" rdl_release_all &&
	rdl_signal $P_KFREE &&
	rdl_step "node 0 got k" rdl_wait_signal 0 $P_KGOT 120
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
	rdl_not_ok "handover.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

if rdl_step "insmod rdlock.ko backend=$BACKEND membership=dlm" \
	insmod "$RDL/modules/rdlock.ko" "backend=$BACKEND" membership=dlm &&
   rdl_step "configure node $RDLOCK_NODE_ID of $RDLOCK_NR_NODES" rdl_config &&
   rdl_step "corosync and dlm_controld${FENCE:+, fencing by the host}" \
	rdl_dlm_start $FENCE &&
   rdl_step "cluster up, a member" rdlockctl up &&
   rdl_step "cluster ready" rdlockctl wait --timeout 120 &&
   rdl_step "membership running, every node a member" rdl_member_running &&
   rdl_step "create ho" rdlockctl ls-create ho &&
   rdl_signal $P_READY &&
   rdl_step "every node runs with ho open" rdl_wait_all_signals $P_READY 300
then
	case $RDLOCK_NODE_ID in
	0) node0 ;;
	1) node1 ;;
	*) node2 ;;
	esac
fi
[ -n "$RDL_HOLDERS" ] && rdl_release_all
rdl_signal $P_END
if [ "$MODE" != leave ]; then
	# Node 0 is off: the survivors wait for each other only.
	rdl_step "every survivor done" rdl_wait_signal 1 $P_END 300 &&
		rdl_wait_signal 2 $P_END 300
	ending="2 1"
else
	rdl_step "every node done" rdl_wait_all_signals $P_END 300
	ending="2 1 0"
fi
rdl_step "remove hn" rdl_rm_ls hn
rdl_step "remove ho" rdl_rm_ls ho
# Node 2 leaves, then node 1, the last of the nodes that took over: node 0
# takes over from it (a second handover).
if [ "$MODE" = leave ] && [ "$RDLOCK_NODE_ID" -eq 0 ]; then
	rdl_step "node 1 took its cluster down" \
		rdl_wait_signal 1 $P_LEFT 600 &&
	rdl_step "node 0 took over from node 1" took_again
fi
# shellcheck disable=SC2086 # a list of node ids
rdl_stop_in_turn $P_LEFT $ending
rdl_finish
