#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Membership from the cluster engine, on 3 guests:
#   member.sh verbs|twosided engine|kill|freeze|partition|reboot|learn|absent|absent-static
# rdlock is loaded with membership=dlm. The cluster cannot come up before
# dlm_controld runs; then corosync and dlm_controld start on every node,
# the cluster comes up as a member of the companion fs/dlm lockspace and
# grants. Then, but for learn, nodedown_test runs with RDLOCK_ND_KILL, and
# the last node, the victim, dies in one of these ways
# (selftests/rdlock/nodedown_test.c says what each node checks):
#   engine  dlm_controld does not fence; the victim kills its corosync
#           and dlm_controld, stops granting, and the survivors' cluster
#           engine declares it down. The victim stays up, cut off, so the
#           end is an out-of-band barrier (TCP port 7791), and it is
#           powered off without taking rdlock down.
#   kill    dlm_controld fences through the host (fence_rdlock_host.sh);
#           the victim has the host cut its power (QEMU quits) while it
#           holds its locks. The survivors' corosync sees it gone, their
#           dlm_controld powers it off again through the agent (the host
#           answers it is off already) and only then is it declared down.
#   freeze  fencing as for kill. First node 0 has node 1 frozen for 3 s,
#           less than corosync's token (10 s): no membership change,
#           nobody fenced, every node still running with every member.
#           Then the victim has itself frozen for good: the survivors'
#           corosync sees it gone after the token, and their dlm_controld
#           has the host power it off, still frozen, so nothing it had
#           under way lands after; then it is declared down.
#   partition  fencing as for kill, 30 s after dlm_controld decides on it
#           (fence_rdlock_host.sh delay=30): the victim has the host cut
#           its link (2|1). The majority keeps quorum and fences it; the
#           victim, alone, loses quorum, its membership stops, and until
#           its power goes every NOQUEUE request it makes is refused:
#           the minority grants nothing.
#   learn   no nodedown_test, no fencing: node 1 takes its cluster down
#           (it leaves; nodes 0 and 2 declare it down), the victim's
#           links go down for 60 s (inject_link_down_ms), node 1 comes up
#           again and learns its epoch from node 0 (which takes its new
#           table), waiting for the victim's word, and then the victim,
#           its links still down, takes its cluster down before the two
#           ever connected. Node 0, which learned long ago, declares the
#           victim down at once and waits at the barrier for node 1;
#           node 1 must not wait for the victim's word any more: it
#           learns, declares the victim down too, and both run again
#           within 50 s, node 1 ready, the victim shown down on both.
#           Before, node 1 learned only when the victim came back, and
#           node 0 granted nothing meanwhile. Then nodes 0 and 1 open a
#           lockspace and lock in it: node 1 lays it out with the
#           victim's table as node 0 named it at the barrier. The
#           victim, its links back, comes up again: it returns on both
#           (node 1, which never knew its table, takes the new one as
#           node 0 does), is ready, locks in that lockspace and leaves
#           again, declared down anew on both. Before, node 1 could
#           open no lockspace and refused the victim's return.
#   absent  no nodedown_test, no fencing: the victim's cluster engine is
#           off when the cluster forms. Nodes 0 and 1 come up, and the
#           first of them waits founding_wait_ms (5 s here) for it
#           before the membership forms the epoch without it: on both it
#           is absent, declared down with no table, and both are ready,
#           run and open lockspace ab, node 0 holding x in it. Before,
#           they waited for the victim: nothing was granted until it
#           came. Then the victim starts corosync and dlm_controld and
#           comes up: it joins the epoch, learns it was absent, returns
#           on nodes 0 and 1 (its table has not learned its epoch: none
#           of theirs could be refused) and opens ab, which was laid out
#           without it. x is busy there until node 0 lets it go, and r,
#           which the victim holds, is busy for node 1 until it lets go.
#   absent-static  the same with membership=static and no cluster engine:
#           nodes 0 and 1 come up and are not ready while the victim,
#           off, is a live configured node; each declares it down
#           (rdlockctl node-down), which needs no table of it, and is
#           then ready. The victim comes up later, with a table that has
#           not learned its epoch: both take it back as returned.
#   reboot  as kill; then node 0 has the host power the victim on again
#           (host-ctl.sh boot). The victim boots anew (RDLOCK_BOOT=2),
#           starts corosync and dlm_controld, and its cluster comes up as
#           a member again, with a new table: it returned (every node's
#           rdlockctl status says so) and keeps no lockspace. It holds a
#           name in a lockspace it creates, node 0 finds it busy, and gets
#           it once the victim lets go.
# With fencing, each survivor's dlm_controld must have received a
# successful fence result for the victim.
# Stock kernel only: fs/dlm of 6.1 allocates in atomic context when a
# member leaves (dlm_midcomms_remove_member(), dlm_send_fin()), which the
# debug kernel reports as a BUG on every node.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT
DONE_PORT=7791

VICTIM=$((RDLOCK_NR_NODES - 1))

# Every survivor answers on DONE_PORT.
survivors_done() {
	rdl_wait_below "$VICTIM" $DONE_PORT 300
}

# nodedown_test's RDLOCK_ND_HOLD on a victim that lives on (engine).
if [ "${1:-}" = --survivors-done ]; then
	survivors_done
	exit
fi

BACKEND=$1
MODE=${2:-}
rdl_backend_arg "$BACKEND"
case $MODE in
engine | learn | absent | absent-static) FENCE= ;;
kill | freeze | reboot) FENCE=fence ;;
partition)
	FENCE=fence
	RDL_FENCE_DELAY=30
	;;
*) echo "usage: $0 verbs|twosided engine|kill|freeze|partition|reboot|learn|absent|absent-static" >&2; exit 2 ;;
esac
FREEZE_PORT=7792
SHORT_FREEZE_MS=3000
# reboot: the victim is back (P_BACK), holds r (P_RHELD); node 0 found r
# busy (P_RTRIED); the victim let r go (P_RFREE); node 0 got r (P_RGOT);
# every node done (P_END).
P_BACK=7793
P_RHELD=7794
P_RTRIED=7795
P_RFREE=7796
P_RGOT=7797
P_END=7798
# The nodes that end, the highest first, take their clusters down in turn
# (rdl_stop_in_turn): every node with reboot, else the survivors.
P_LEFT=7788
SURVIVORS=$(seq $((VICTIM - 1)) -1 0 | tr '\n' ' ')
EVERY_NODE="$VICTIM $SURVIVORS"

# freeze: node 0's first try to declare the victim down fails once its
# locks moved (inject_ls_down_failures); the membership tries again.
DOWN_FAILURES=/sys/kernel/debug/rdlock/inject_ls_down_failures
down_failure_armed() {
	echo 1 > $DOWN_FAILURES && [ "$(cat $DOWN_FAILURES)" = 1 ]
}

# After nodedown_test (which the victim's locks were granted in): that
# try failed (and maybe another for a passing cause), a later one
# declared the victim down, none is left.
down_tried_again() {
	rdl_e=$(rdl_member_line down_errors)
	rdl_d=$(rdl_member_line declared_down)
	echo "# node $RDLOCK_NODE_ID: down_errors $rdl_e, declared_down $rdl_d, failed '$(rdl_member_line failed)', injected left $(cat $DOWN_FAILURES)"
	[ "$rdl_e" -ge 1 ] && [ "$rdl_d" = 1 ] &&
		[ -z "$(rdl_member_line failed)" ] &&
		[ "$(rdl_member_line state)" = running ] &&
		[ "$(cat $DOWN_FAILURES)" = 0 ]
}

# Node 0 has node 1 frozen for SHORT_FREEZE_MS, less than corosync's token:
# afterwards (node 0's signal on FREEZE_PORT) the membership is as it was:
# the same generation, running, every node a member, no callback since.
short_freeze() {
	rdl_before=$(grep -E '^(generation|recover_prep|recover_slot): ' $RDL_MEMBERSHIP)
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		sh "$RDL/guest/host-ctl.sh" freeze 1 $SHORT_FREEZE_MS || return 1
		echo "# node 1 was frozen for $SHORT_FREEZE_MS ms"
		rdl_signal $FREEZE_PORT
	fi
	rdl_wait_signal 0 $FREEZE_PORT 120 || return 1
	rdl_after=$(grep -E '^(generation|recover_prep|recover_slot): ' $RDL_MEMBERSHIP)
	[ "$rdl_before" = "$rdl_after" ] &&
		[ "$(rdl_member_line state)" = running ] &&
		[ "$(rdl_member_line members)" = "0-$((RDLOCK_NR_NODES - 1))" ] || {
		echo "# membership changed by a $SHORT_FREEZE_MS ms freeze:"
		sed 's/^/#   /' $RDL_MEMBERSHIP
		return 1
	}
}

# reboot, on the victim powered on again: a member again, with a new
# table, returned; it holds r in lockspace rb until node 0 found it busy.
victim_back() {
	rdl_step "insmod rdlock.ko backend=$BACKEND membership=dlm" \
		insmod "$RDL/modules/rdlock.ko" "backend=$BACKEND" \
		membership=dlm &&
	rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko" &&
	rdl_step "configure node $RDLOCK_NODE_ID of $RDLOCK_NR_NODES" rdl_config &&
	rdl_step "corosync and dlm_controld, fencing by the host" \
		rdl_dlm_start fence &&
	rdl_step "cluster up, a member again" rdlockctl up &&
	rdl_step "cluster ready" rdlockctl wait --timeout 120 &&
	rdl_step "membership running, every node a member" rdl_member_running &&
	rdl_step "this node returned" rdl_node_flag "$VICTIM" returned &&
	rdl_signal $P_BACK &&
	rdl_step "create rb" rdlockctl ls-create rb &&
	rdl_step "hold r in rb" rdl_hold rb r &&
	rdl_signal $P_RHELD &&
	rdl_step "node 0 found r held" rdl_wait_signal 0 $P_RTRIED 120 &&
	rdl_step "r let go" rdl_release_all &&
	rdl_signal $P_RFREE &&
	rdl_step "node 0 got r" rdl_wait_signal 0 $P_RGOT 120
}

# reboot, on a survivor: node 0 has the victim powered on; the victim is
# back, a member, shown returned; node 0 finds its name busy, then free.
survivor_sees_return() {
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		rdl_step "the host powers node $VICTIM on again" \
			sh "$RDL/guest/host-ctl.sh" boot "$VICTIM" || return 1
	fi
	rdl_step "node $VICTIM back" rdl_wait_signal "$VICTIM" $P_BACK 300 &&
	rdl_step "node $VICTIM shown returned" \
		rdl_poll 30 rdl_node_flag "$VICTIM" returned &&
	rdl_step "membership running, every node a member" rdl_member_running &&
	[ "$RDLOCK_NODE_ID" -eq 0 ] || return 0
	rdl_step "node $VICTIM holds r" rdl_wait_signal "$VICTIM" $P_RHELD 120 &&
	rdl_step "open rb" rdlockctl ls-create rb &&
	rdl_step "r in rb refused: node $VICTIM holds it" rdl_busy rb r &&
	rdl_signal $P_RTRIED &&
	rdl_step "node $VICTIM let r go" \
		rdl_wait_signal "$VICTIM" $P_RFREE 120 &&
	rdl_step "r in rb granted" rdl_free rb r &&
	rdl_signal $P_RGOT
}

# learn: every node runs with every member (P_LREADY); node 1 left and
# was declared down here (P_L1DOWN); nodes 0 and 2 saw it (P_L1SEEN), the
# victim with its links down; node 1 is up again, learning (P_L1UP); node
# 0 took its new table (P_L0SAW): node 1 is a survivor its declarations
# wait for; the victim left (P_L2GONE).
P_LREADY=7782
P_L0SAW=7787
P_L1DOWN=7783
P_L1SEEN=7784
P_L1UP=7785
P_L2GONE=7786
# Then: nodes 0 and 1 locked in lockspace lrn (P_LLS); the victim is back,
# ready (P_L2BACK); it returned on nodes 0 and 1 (P_LRET); it left again
# (P_L2AGAIN).
P_LLS=7780
P_L2BACK=7781
P_LRET=7789
P_L2AGAIN=7790
LINK_DOWN=/sys/kernel/debug/rdlock/inject_link_down_ms
# How long the victim's links stay down: node 1 must learn before.
LEARN_LINK_DOWN_MS=60000

# This node's view of its epoch (debugfs rdlock/cluster).
rdl_view() {
	sed -n 's/^view: //p' /sys/kernel/debug/rdlock/cluster
}

learn_link_down() {
	echo $LEARN_LINK_DOWN_MS > $LINK_DOWN
}

# The victim's links are down yet (5 s left at least): node 1 has not
# reached it.
learn_links_down() {
	[ "$(cat $LINK_DOWN)" -gt 5000 ] ||
		{ echo "# links down for $(cat $LINK_DOWN) ms more"; return 1; }
}

# Node 1, up again, learning (node 0's P_L0SAW says it reached node 0).
learn_waiting() {
	[ "$(rdl_view)" = learning ] || { echo "# view $(rdl_view)"; return 1; }
}

# learn, on node 0 and the victim ($1 names the node in the steps): node 1
# left, and is declared down here.
learn_node1_declared() {
	rdl_step "$1: node 1 left" rdl_wait_signal 1 $P_L1DOWN 120 &&
	rdl_step "$1: node 1 declared down, running" \
		rdl_member_running "0,2" 1 120
}

# learn, on nodes 0 and 1 ($1 names the node in the steps): the victim is
# declared down here within $3 s, this node's declaration $2 in all.
learn_victim_declared() {
	rdl_step "$1: node $VICTIM declared down, running" \
		rdl_member_running 0-1 "$2" $(($3)) &&
	rdl_step "$1: node $VICTIM shown down" rdl_node_flag "$VICTIM" down
}

# learn: lockspace lrn opened here, and a few names locked in it.
learn_lock() {
	rdlockctl ls-create lrn || return 1
	for l_n in a b c d e f; do
		rdlockctl lock lrn "$l_n" -- true || return 1
	done
}

# learn, on the victim: nodes 0 and 1 both signalled on port $1.
learn_both_signalled() {
	rdl_wait_signal 0 "$1" 120 && rdl_wait_signal 1 "$1" 120
}

# learn, on nodes 0 and 1: lrn opened and used; the victim returns, and
# leaves again, declared down here for the $1-th time in all. If a step
# fails, lrn goes all the same (the cluster cannot go down with it).
learn_return_seen() {
	learn_seen_steps "$1" && return 0
	rdl_rm_ls lrn
	return 1
}

learn_seen_steps() {
	rdl_step "node $RDLOCK_NODE_ID: lockspace lrn opened, names locked" \
		learn_lock &&
	rdl_signal $P_LLS &&
	rdl_step "node $RDLOCK_NODE_ID: node $VICTIM up again" \
		rdl_wait_signal "$VICTIM" $P_L2BACK 180 &&
	rdl_step "node $RDLOCK_NODE_ID: node $VICTIM returned" \
		rdl_poll 30 rdl_node_flag "$VICTIM" returned &&
	rdl_signal $P_LRET &&
	rdl_step "node $RDLOCK_NODE_ID: node $VICTIM left again" \
		rdl_wait_signal "$VICTIM" $P_L2AGAIN 120 &&
	learn_victim_declared "node $RDLOCK_NODE_ID" "$1" 60 &&
	rdl_step "node $RDLOCK_NODE_ID: lrn removed" rdl_rm_ls lrn
}

# learn, on the victim: back with a new table once nodes 0 and 1 use lrn;
# every node lets it in (it returned), it uses lrn and leaves again. If a
# step fails, it leaves all the same, as it would have.
learn_victim_back() {
	learn_back_steps && return 0
	rdl_rm_ls lrn
	rdlockctl down
	return 1
}

learn_back_steps() {
	rdl_step "victim: nodes 0 and 1 locked in lrn" \
		learn_both_signalled $P_LLS &&
	echo 0 > $LINK_DOWN &&
	rdl_step "victim: cluster up again" rdlockctl up &&
	rdl_step "victim: ready, let in by nodes 0 and 1" \
		rdlockctl wait --timeout 60 &&
	rdl_step "victim: it returned" rdl_node_flag "$VICTIM" returned &&
	rdl_step "victim: lrn opened, names locked" learn_lock &&
	rdl_signal $P_L2BACK &&
	rdl_step "victim: nodes 0 and 1 saw it return" \
		learn_both_signalled $P_LRET &&
	rdl_step "victim: lrn removed" rdl_rm_ls lrn &&
	rdl_step "victim: cluster down, leaving again" \
		rdl_poll 30 rdlockctl down &&
	rdl_signal $P_L2AGAIN
}

learn_corner() {
	rdl_signal $P_LREADY
	case $RDLOCK_NODE_ID in
	1)
		rdl_step "node 1: nodes 0 and $VICTIM run with every member" \
			rdl_wait_signal 0 $P_LREADY 120 &&
		rdl_wait_signal "$VICTIM" $P_LREADY 120 &&
		rdl_step "node 1: cluster down, leaving the membership" \
			rdl_poll 30 rdlockctl down &&
		rdl_signal $P_L1DOWN &&
		rdl_step "node 1: node 0 declared it down" \
			rdl_wait_signal 0 $P_L1SEEN 180 &&
		rdl_step "node 1: node $VICTIM declared it down, its links down" \
			rdl_wait_signal "$VICTIM" $P_L1SEEN 180 &&
		rdl_step "node 1: cluster up again" rdlockctl up &&
		rdl_step "node 1: learning, waiting for node $VICTIM's word" \
			rdl_poll 30 learn_waiting &&
		rdl_signal $P_L1UP &&
		rdl_step "node 1: node $VICTIM left" \
			rdl_wait_signal "$VICTIM" $P_L2GONE 120 &&
		rdl_step "node 1: cluster ready without node $VICTIM's word" \
			rdlockctl wait --timeout 50 &&
		learn_victim_declared "node 1" 1 30 &&
		learn_return_seen 2
		;;
	0)
		learn_node1_declared "node 0" &&
		rdl_signal $P_L1SEEN &&
		rdl_step "node 0: node 1 up again" \
			rdl_wait_signal 1 $P_L1UP 180 &&
		rdl_step "node 0: node 1 returned" \
			rdl_poll 60 rdl_node_flag 1 returned &&
		rdl_signal $P_L0SAW &&
		rdl_step "node 0: node $VICTIM left" \
			rdl_wait_signal "$VICTIM" $P_L2GONE 120 &&
		learn_victim_declared "node 0" 2 50 &&
		learn_return_seen 3
		;;
	*)
		learn_node1_declared victim &&
		rdl_step "victim: links down for $LEARN_LINK_DOWN_MS ms" \
			learn_link_down &&
		rdl_signal $P_L1SEEN &&
		rdl_step "victim: node 1 up again" \
			rdl_wait_signal 1 $P_L1UP 180 &&
		rdl_step "victim: node 0 took node 1's new table" \
			rdl_wait_signal 0 $P_L0SAW 120 &&
		rdl_step "victim: its links still down" learn_links_down &&
		rdl_step "victim: cluster down, leaving the membership" \
			rdl_poll 30 rdlockctl down &&
		rdl_signal $P_L2GONE &&
		learn_victim_back
		;;
	esac
}

# absent: nodes 0 and 1 run without the victim, ab open, node 0 holding x
# (P_AREADY each); the victim is back, ready (P_ABACK); it found x busy
# (P_ATRIED); node 0 let x go (P_AFREE); the victim got x and holds r
# (P_AHELD); node 1 found r busy (P_ARTRIED); the victim let r go
# (P_ARFREE); node 1 got r (P_ARGOT).
P_AREADY=7811
P_ABACK=7812
P_ATRIED=7813
P_AFREE=7814
P_AHELD=7815
P_ARTRIED=7816
P_ARFREE=7817
P_ARGOT=7818
ABSENT_WAIT_MS=5000

# absent, on nodes 0 and 1: the membership formed without the victim,
# node 0 (the lowest member) declaring it absent, node 1 told by node 0.
absent_formed() {
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		a_log="rdlock: cluster [0-9]*: this node forms its epoch with members 0-1\$"
		a_log2="rdlock: node $VICTIM absent as the cluster formed"
	else
		a_log="rdlock: node 0 says node $VICTIM was declared down\$"
		a_log2=$a_log
	fi
	rdl_member_running 0-1 &&
	rdl_node_flag "$VICTIM" down &&
	dmesg | grep -q "$a_log" &&
	dmesg | grep -q "$a_log2" || {
		rdlockctl status | sed 's/^/#   /'
		dmesg | grep "rdlock: " | tail -n 8 | sed 's/^/#   /'
		return 1
	}
}

# absent-static, on nodes 0 and 1: not ready while the victim is a live
# configured node that never connected.
absent_not_ready() {
	! rdlockctl wait --timeout 5 && ! rdl_node_flag "$VICTIM" down
}

absent_founder() {
	if [ "$MODE" = absent-static ]; then
		rdl_step "cluster up, node $VICTIM off" rdlockctl up &&
		rdl_step "not ready while node $VICTIM is not declared down" \
			absent_not_ready &&
		rdl_step "node $VICTIM declared down (rdlockctl node-down)" \
			rdlockctl node-down "$VICTIM" &&
		rdl_step "cluster ready without node $VICTIM" \
			rdlockctl wait --timeout 60 &&
		rdl_step "node $VICTIM shown down" \
			rdl_node_flag "$VICTIM" down || return 1
	else
		RDL_DLM_NODES=2
		rdl_step "corosync and dlm_controld, node $VICTIM off" \
			rdl_dlm_start &&
		rdl_step "cluster up, formed without node $VICTIM" \
			rdlockctl up &&
		rdl_step "cluster ready without node $VICTIM" \
			rdlockctl wait --timeout 60 &&
		rdl_step "membership running, node $VICTIM absent" \
			absent_formed || return 1
	fi
	rdl_step "create ab" rdlockctl ls-create ab || return 1
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		rdl_step "hold x in ab" rdl_hold ab x || return 1
	fi
	rdl_signal $P_AREADY
	rdl_step "node $VICTIM back" rdl_wait_signal "$VICTIM" $P_ABACK 300 &&
	rdl_step "node $VICTIM shown returned" \
		rdl_poll 30 rdl_node_flag "$VICTIM" returned || return 1
	[ "$MODE" = absent-static ] ||
		rdl_step "membership running, every node a member" \
			rdl_member_running || return 1
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		rdl_step "node $VICTIM found x busy" \
			rdl_wait_signal "$VICTIM" $P_ATRIED 120 &&
		rdl_step "x let go" rdl_release_all &&
		rdl_signal $P_AFREE
		return
	fi
	rdl_step "node $VICTIM holds r" rdl_wait_signal "$VICTIM" $P_AHELD 120 &&
	rdl_step "r in ab refused: node $VICTIM holds it" rdl_busy ab r &&
	rdl_signal $P_ARTRIED &&
	rdl_step "node $VICTIM let r go" \
		rdl_wait_signal "$VICTIM" $P_ARFREE 120 &&
	rdl_step "r in ab granted" rdl_free ab r &&
	rdl_signal $P_ARGOT
}

absent_victim() {
	rdl_step "nodes 0 and 1 run without this node" \
		rdl_wait_signal 0 $P_AREADY 300 &&
	rdl_wait_signal 1 $P_AREADY 300 || return 1
	if [ "$MODE" = absent ]; then
		rdl_step "corosync and dlm_controld" rdl_dlm_start || return 1
	fi
	rdl_step "cluster up, joining the epoch" rdlockctl up &&
	rdl_step "cluster ready, let in by nodes 0 and 1" \
		rdlockctl wait --timeout 60 || return 1
	if [ "$MODE" = absent ]; then
		rdl_step "membership running, every node a member" \
			rdl_member_running || return 1
	fi
	rdl_step "this node returned" rdl_node_flag "$VICTIM" returned &&
	rdl_signal $P_ABACK &&
	rdl_step "open ab" rdlockctl ls-create ab &&
	rdl_step "x in ab refused: node 0 holds it" rdl_busy ab x &&
	rdl_signal $P_ATRIED &&
	rdl_step "node 0 let x go" rdl_wait_signal 0 $P_AFREE 120 &&
	rdl_step "x in ab granted" rdl_free ab x &&
	rdl_step "hold r in ab" rdl_hold ab r &&
	rdl_signal $P_AHELD &&
	rdl_step "node 1 found r busy" rdl_wait_signal 1 $P_ARTRIED 120 &&
	rdl_step "r let go" rdl_release_all &&
	rdl_signal $P_ARFREE &&
	rdl_step "node 1 got r" rdl_wait_signal 1 $P_ARGOT 120
}

absent_run() {
	if [ "$RDLOCK_NODE_ID" -eq "$VICTIM" ]; then
		absent_victim
	else
		absent_founder
	fi
	[ -n "$RDL_HOLDERS" ] && rdl_release_all
	rdl_signal $P_END
	rdl_step "every node done" rdl_wait_all_signals $P_END 300
	rdl_step "remove ab" rdl_rm_ls ab
}

# Every node, the victim back, answers on P_END.
all_ended() {
	rdl_signal $P_END
	rdl_step "every node done" rdl_wait_all_signals $P_END 300
	rdl_step "remove rb" rdl_rm_ls rb
}

if [ "$MODE" = reboot ] && [ "${RDLOCK_BOOT:-1}" -gt 1 ]; then
	if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
		rdl_not_ok "member.sh needs exactly 3 nodes"
		rdl_finish
		exit 1
	fi
	victim_back
	[ -n "$RDL_HOLDERS" ] && rdl_release_all
	all_ended
	rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
	# shellcheck disable=SC2086 # a list of node ids
	rdl_stop_in_turn $P_LEFT $EVERY_NODE
	rdl_finish
	exit
fi

# Up must fail while no dlm_controld runs, and leave the cluster down.
up_refused() {
	if rdlockctl up; then
		echo "# cluster up without dlm_controld"
		return 1
	fi
	rdlockctl status --json | grep -q '"state": "down"' &&
		[ "$(rdl_member_line state)" = out ]
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
	rdl_not_ok "member.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

if [ "$MODE" = absent ] || [ "$MODE" = absent-static ]; then
	a_args="membership=dlm founding_wait_ms=$ABSENT_WAIT_MS"
	[ "$MODE" = absent ] || a_args="membership=static"
	# shellcheck disable=SC2086 # module parameters
	if rdl_step "insmod rdlock.ko backend=$BACKEND $a_args" \
		insmod "$RDL/modules/rdlock.ko" "backend=$BACKEND" $a_args &&
	   rdl_step "configure node $RDLOCK_NODE_ID of $RDLOCK_NR_NODES" \
		rdl_config; then
		absent_run
	fi
	# shellcheck disable=SC2086 # a list of node ids
	rdl_stop_in_turn $P_LEFT $EVERY_NODE
	rdl_finish
	exit
fi

# Two DLM lockspaces (nodedown_test's) in the default lock table.
if rdl_step "insmod rdlock.ko backend=$BACKEND membership=dlm dlm_slots=8192" \
	insmod "$RDL/modules/rdlock.ko" "backend=$BACKEND" membership=dlm \
	dlm_slots=8192 &&
   rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko" &&
   rdl_step "configure node $RDLOCK_NODE_ID of $RDLOCK_NR_NODES" rdl_config &&
   rdl_step "cluster up refused without dlm_controld" up_refused &&
   rdl_step "corosync and dlm_controld${FENCE:+, fencing by the host}" \
	rdl_dlm_start $FENCE &&
   rdl_step "cluster up, a member" rdlockctl up &&
   rdl_step "cluster ready" rdlockctl wait --timeout 120 &&
   rdl_step "membership running, every node a member" rdl_member_running &&
   rdl_step "insmod rdlock_dlm_test.ko" \
	insmod "$RDL/modules/rdlock_dlm_test.ko"; then
	case $MODE in
	kill | reboot)
		RDLOCK_ND_KILL="sh $RDL/guest/host-ctl.sh kill $RDLOCK_NODE_ID"
		what="the victim's power cut"
		;;
	partition)
		RDLOCK_ND_KILL="sh $RDL/guest/host-ctl.sh link $RDLOCK_NODE_ID off"
		what="the victim cut off (2|1), fenced 30 s later"
		;;
	freeze)
		rdl_step "node 1 frozen $SHORT_FREEZE_MS ms: nothing changed" \
			short_freeze
		if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
			rdl_step "node 0's first declaration down to fail" \
				down_failure_armed
			RDLOCK_ND_DOWN_ERRORS=1
			export RDLOCK_ND_DOWN_ERRORS
		fi
		RDLOCK_ND_KILL="sh $RDL/guest/host-ctl.sh stop $RDLOCK_NODE_ID"
		what="the victim frozen, then fenced"
		;;
	learn) ;;
	*)
		RDLOCK_ND_KILL="kill -9 $RDL_COROSYNC_PID $RDL_DLM_CONTROLD_PID"
		# The victim lives on: it holds its locks until every
		# survivor is done (declared it down), see nodedown_test.c.
		RDLOCK_ND_HOLD="sh $RDL/guest/member.sh --survivors-done"
		export RDLOCK_ND_HOLD
		what="the victim's cluster engine killed"
		;;
	esac
	if [ "$MODE" = learn ]; then
		learn_corner
		[ "$RDLOCK_NODE_ID" -eq "$VICTIM" ] && echo 0 > $LINK_DOWN
		sed 's/^/#   /' $RDL_MEMBERSHIP
	else
		export RDLOCK_ND_KILL
		rdl_step "nodedown_test, $what ($BACKEND)" nodedown_test
		sed 's/^/#   /' $RDL_MEMBERSHIP
	fi
	[ "$MODE" = freeze ] && [ "$RDLOCK_NODE_ID" -eq 0 ] &&
		rdl_step "node 0: the declaration that failed was tried again" \
			down_tried_again
	[ -n "$FENCE" ] &&
		rdl_step "dlm_controld fenced node $VICTIM through the host" \
			rdl_fenced "$VICTIM"
fi
if [ -n "$FENCE" ]; then
	# The victim is gone: the survivors wait for each other only.
	rdl_signal $DONE_PORT
	rdl_step "every survivor done" survivors_done
	if [ "$MODE" = reboot ]; then
		survivor_sees_return
		all_ended
	fi
	rdl_loaded rdlock_dlm_test &&
		rdl_step "rmmod rdlock_dlm_test" rdl_rmmod rdlock_dlm_test
	rdl_loaded rdlock_test &&
		rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
	ending=$SURVIVORS
	[ "$MODE" = reboot ] && ending=$EVERY_NODE
	# shellcheck disable=SC2086 # a list of node ids
	rdl_stop_in_turn $P_LEFT $ending
	rdl_finish
	exit
fi
rdl_signal $DONE_PORT
# Every node finished its part: only then may any take rdlock down.
rdl_step "every node done" rdl_wait_all_signals $DONE_PORT 300
if [ "$RDLOCK_NODE_ID" -eq "$VICTIM" ]; then
	# The victim is powered off as it is, as a fenced node is reset:
	# leaving fs/dlm's lockspace without dlm_controld, cut off from
	# the others, waits minutes in fs/dlm (dlm_midcomms_shutdown()).
	rdl_step "ticket life: no bad move, no unfinished ticket" \
		rdl_ticket_life_ok
	rdl_finish
	exit
fi
rdl_loaded rdlock_dlm_test &&
	rdl_step "rmmod rdlock_dlm_test" rdl_rmmod rdlock_dlm_test
# No final barrier through the transport (rdl_stop's): the victim is out.
rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
# shellcheck disable=SC2086 # a list of node ids
rdl_stop_in_turn $P_LEFT $SURVIVORS
rdl_finish
