#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Recovery at scale, side by side with fs/dlm, on 3 guests (stock kernel):
#   recbench.sh [verbs|twosided|auto] [NAMES]	(default: auto, 5000)
# rdlock runs with membership=dlm, corosync and dlm_controld without
# fencing, as member.sh engine. Every node holds PR on the same NAMES names
# in each of two DLM lockspaces of rdlock ("rb1", "rb2", through
# rdlock_dlm_test's FILL) and on 2 x NAMES names in one of fs/dlm ("fb",
# FSDLM_FILL): 6 x NAMES locks in each DLM (5000: 30000); each node
# starts at its own third of rdlock's names and goes round, so that each
# places about a third of the lock words (the claimer of a name's entry
# places its word on itself), and the victim's loss moves both kinds:
# names whose entry it kept, and names whose word it held. Two lockspaces,
# as a DLM lockspace of rdlock keeps at most dlm_slots / 36 names per
# home (7168 at the largest dlm_slots that lets two fit the largest
# table), and the victim's heir then keeps its own third of the names and
# the victim's: 3333 of 7168 entries. A moved name looks for an entry
# among 32 from its hash on there: one that finds none loses its locks in
# the move, and the step fails.
# fs/dlm masters a name where it is first asked for: each node first
# takes its third of fs/dlm's names, and the rest once every node did
# (rdlock-rec-fill --node), so that the dead node mastered a third of them
# as it kept a third of rdlock's. Then the last node kills its corosync
# and dlm_controld: both cluster engines drop it, and each survivor's
# fs/dlm recovers "fb", and the companion lockspace "rdlock", while rdlock
# declares the node down (its locks of the names homed on it move, the
# dead node's holds leave the words homed here). Each survivor prints, as
# "#json " lines and in words:
#   fs/dlm's recovery of "fb" (its log's "dlm_recover ... done: N ms",
#   with how many names it remastered and locks it rebuilt);
#   rdlock's: fs/dlm's recovery of the companion, which holds no lock
#   (recover_done comes after it), and then rdlock's own, recover_done to
#   granting again (debugfs membership last_recovery_us), with its steps
#   (the kernel log's "node N declared down: ..." line), the locks moved
#   and the words released; and the ratio of the two. A lockspace of
#   rdlock that lost a lock in the moves (a name found no free entry in
#   its window at the heir) must have told its user it is lost, once.
# A benchmark: it asserts no timing; a step fails when a fill fails, or the
# victim is not declared down once, or fs/dlm does not recover "fb". The
# victim stays up, cut off; the survivors end at an out-of-band barrier
# (TCP port 7841) and it is powered off as it is (member.sh says why).
# By hand (Documentation/rdlock/testing.rst, "Benchmarks"):
#   scripts/cluster.sh --kernel stock --nodes 3 --timeout 1800 \
#     --payload build/stock/payload "${FSDLM_BINS[@]}" -- sh guest/recbench.sh

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT
P_FILLED=7840
P_DONE=7841
P_OWN=7842
VICTIM=$((RDLOCK_NR_NODES - 1))
FILL_OUT=/tmp/rdlock-rec-fill.out
FILL_WAIT_S=900
RECOVER_WAIT_S=600

PARAM=
if [ -n "${1:-}" ] && [ "$1" != auto ]; then
	rdl_backend_arg "$1"
	PARAM="backend=$1"
fi
NAMES=${2:-5000}
case $NAMES in
'' | *[!0-9]*) echo "usage: $0 [verbs|twosided|auto] [NAMES]" >&2; exit 2 ;;
esac
# 7168 names per home and lockspace (12 slots each, 3 homes); two such
# lockspaces fill the largest table but its reserved slots.
DLM_SLOTS=258048
TABLE_SLOTS=524288

# fill_wait_line PATTERN SEC: the filler printed a line PATTERN, within
# SEC seconds (while it runs).
fill_wait_line() {
	w_t=0
	until grep -q "^$1\$" $FILL_OUT; do
		kill -0 "$FILL_PID" 2>/dev/null || { sed 's/^/# /' $FILL_OUT; return 1; }
		w_t=$((w_t + 1))
		[ "$w_t" -lt "$2" ] || { sed 's/^/# /' $FILL_OUT; return 1; }
		sleep 1
	done
}

# The filler, in the background: its own third of fs/dlm's names, every
# node's, then the rest; "filled" once every lockspace holds its names.
fill() {
	rdlock-rec-fill --rdlock rb1 --rdlock rb2 --count "$NAMES" \
		--fsdlm fb --node "$RDLOCK_NODE_ID" --nodes "$RDLOCK_NR_NODES" \
		> $FILL_OUT 2>&1 &
	FILL_PID=$!
	fill_wait_line own "$FILL_WAIT_S" &&
	rdl_signal $P_OWN &&
	rdl_wait_all_signals $P_OWN "$FILL_WAIT_S" &&
	kill -USR1 "$FILL_PID" &&
	fill_wait_line filled "$FILL_WAIT_S" &&
	sed -n 's/^#json /#json /p' $FILL_OUT
}

# The last of fs/dlm's recovery lines of lockspace $1 matching $2 (a sed
# expression with one group).
fsdlm_line() {
	dmesg | sed -n "s/.*dlm: $1: $2\$/\1/p" | tail -n 1
}

fsdlm_dones() {
	dmesg | grep -c "dlm: $1: dlm_recover [0-9]* generation [0-9]* done:"
}

# Before the death: what the survivor's figures must come after.
survivor_before() {
	S_FB=$(fsdlm_dones fb)
	S_RD=$(fsdlm_dones rdlock)
	S_DOWNS=$(rdl_member_line declared_down)
	cp /sys/kernel/debug/rdlock/nodes /tmp/rdlock-nodes.before
}

# The transport's operations this node issued since survivor_before(), to
# the other survivors ("remote") and to its own table ("own"), per kind
# (rdlock/nodes: read write faa cas, then read_range faa_read cas_read),
# and per lock moved ($1): where a move's time goes.
survivor_ops() {
	cp /sys/kernel/debug/rdlock/nodes /tmp/rdlock-nodes.after
	awk -v self="$RDLOCK_NODE_ID" -v victim="$VICTIM" -v moved="$1" '
		FNR == 1 { next }
		FILENAME ~ /before$/ { for (i = 4; i <= 16; i++) b[$1, i] = $i; next }
		$1 == victim { next }
		{
			w = $1 == self ? "own" : "remote"
			for (i = 4; i <= 7; i++) { d[w, i] += $i - b[$1, i]; t[w] += $i - b[$1, i] }
			for (i = 14; i <= 16; i++) { d[w, i] += $i - b[$1, i]; t[w] += $i - b[$1, i] }
		}
		END {
			for (k = 0; k < 2; k++) {
				w = k ? "own" : "remote"
				printf "%s %d ops (%.2f per lock moved): read %d write %d faa %d cas %d read_range %d faa_read %d cas_read %d\n", w, t[w], moved ? t[w] / moved : 0, d[w, 4], d[w, 5], d[w, 6], d[w, 7], d[w, 14], d[w, 15], d[w, 16]
			}
		}' /tmp/rdlock-nodes.before /tmp/rdlock-nodes.after |
		sed "s/^/# node $RDLOCK_NODE_ID: operations since the death: /"
}

# A survivor: the victim declared down once more, granting again, and
# fs/dlm's fb and rdlock recovered since; no lock lost; the figures.
survivor_figures() {
	s_t=0
	until [ "$(rdl_member_line declared_down)" = $((S_DOWNS + 1)) ] &&
	      [ "$(rdl_member_line state)" = running ] &&
	      [ "$(fsdlm_dones fb)" -gt "$S_FB" ] &&
	      [ "$(fsdlm_dones rdlock)" -gt "$S_RD" ]; do
		s_t=$((s_t + 1))
		[ "$s_t" -lt "$RECOVER_WAIT_S" ] || {
			sed 's/^/#   /' $RDL_MEMBERSHIP
			dmesg | grep 'dlm: fb:' | tail -n 5 | sed 's/^/#   /'
			return 1
		}
		sleep 1
	done
	s_own=$(rdl_member_line last_recovery_us)
	s_comp=$(fsdlm_line rdlock 'dlm_recover [0-9]* generation [0-9]* done: \([0-9]*\) ms')
	s_fs=$(fsdlm_line fb 'dlm_recover [0-9]* generation [0-9]* done: \([0-9]*\) ms')
	s_masters=$(fsdlm_line fb 'dlm_recover_masters \([0-9]* of [0-9]*\)')
	s_locks=$(fsdlm_line fb 'dlm_recover_locks \([0-9]*\) in')
	s_line=$(dmesg | grep "rdlock: node $VICTIM declared down: its locks homed here are released" | tail -n 1)
	s_moved=0 s_words=0 s_lost=0
	for s_ls in rb1 rb2; do
		s_stats=/sys/kernel/debug/rdlock/lockspaces/dlm.$s_ls/stats
		s_moved=$((s_moved + $(sed -n 's/^moved_locks: //p' "$s_stats")))
		s_words=$((s_words + $(sed -n 's/^down_words: //p' "$s_stats")))
		s_lost=$((s_lost + $(sed -n 's/^lost_locks: //p' "$s_stats")))
	done
	s_total=$((s_comp + s_own / 1000))
	echo "# node $RDLOCK_NODE_ID: ${s_line#*] }"
	echo "# node $RDLOCK_NODE_ID: fs/dlm: $s_fs ms ($s_masters names remastered, $s_locks locks rebuilt here)"
	echo "# node $RDLOCK_NODE_ID: rdlock: $s_total ms: fs/dlm's recovery of the companion $s_comp ms, then its own $((s_own / 1000)) ms ($s_moved locks moved, $s_words words released here, $s_lost lost)"
	survivor_ops "$s_moved"
	echo "# node $RDLOCK_NODE_ID: $((6 * NAMES)) locks in each DLM: rdlock / fs/dlm $(awk -v r="$s_total" -v f="$s_fs" 'BEGIN { if (f > 0) printf "%.2f", r / f; else print "-" }'), rdlock's own / fs/dlm $(awk -v r="$s_own" -v f="$s_fs" 'BEGIN { if (f > 0) printf "%.2f", r / 1000 / f; else print "-" }')"
	rdl_json_obj tool recbench.sh figure recovery node "$RDLOCK_NODE_ID" \
		names "$NAMES" locks $((6 * NAMES)) fsdlm_ms "$s_fs" \
		fsdlm_masters "$s_masters" fsdlm_locks "$s_locks" \
		companion_ms "$s_comp" rdlock_us "$s_own" \
		moved_locks "$s_moved" down_words "$s_words" lost_locks "$s_lost" \
		steps "$(echo "$s_line" | sed -n 's/.*released (\(.*\))$/\1/p')"
	[ "$s_lost" = 0 ] && [ "$s_moved" -gt 0 ] && [ -n "$s_fs" ]
}

# Each of rdlock's lockspaces here: its user (the filler's file) was told
# it was lost (one lost callback) if a lock of it was lost in the moves
# (debugfs lost_locks), else never. The callback comes from a work item
# queued once the lockspace's moves ended: asked again for up to 10 s.
lost_told() {
	l_k=0
	while :; do
		l_k=$((l_k + 1))
		kill -USR1 "$FILL_PID" && fill_wait_line "reported $l_k" 30 ||
			return 1
		l_ok=1
		for l_ls in rb1 rb2; do
			l_lost=$(sed -n 's/^lost_locks: //p' \
				/sys/kernel/debug/rdlock/lockspaces/dlm.$l_ls/stats)
			l_told=$(sed -n "s/^lost $l_ls //p" $FILL_OUT | tail -n 1)
			l_want=0
			[ "$l_lost" -gt 0 ] && l_want=1
			[ "$l_told" = "$l_want" ] || l_ok=0
			[ "$l_k" -gt 1 ] ||
				echo "# node $RDLOCK_NODE_ID: $l_ls: $l_lost locks lost in the moves, its user told $l_told times"
		done
		[ "$l_ok" = 1 ] && return 0
		[ "$l_k" -lt 10 ] || return 1
		sleep 1
	done
}

# The filler lets go of its locks on SIGTERM, within SEC seconds.
fill_stop() {
	kill -TERM "$FILL_PID" || return 1
	f_t=0
	while kill -0 "$FILL_PID" 2>/dev/null; do
		f_t=$((f_t + 1))
		[ "$f_t" -lt "$1" ] || return 1
		sleep 1
	done
	wait "$FILL_PID"
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env; then
	rdl_not_ok "recbench.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

# shellcheck disable=SC2086 # the backend parameter, empty or one word
if rdl_step "insmod rdlock.ko $PARAM membership=dlm table_slots=$TABLE_SLOTS dlm_slots=$DLM_SLOTS" \
	insmod "$RDL/modules/rdlock.ko" $PARAM membership=dlm \
	table_slots=$TABLE_SLOTS dlm_slots=$DLM_SLOTS &&
   rdl_step "configure node $RDLOCK_NODE_ID of $RDLOCK_NR_NODES" rdl_config &&
   rdl_step "corosync and dlm_controld" rdl_dlm_start &&
   rdl_step "cluster up, a member" rdlockctl up &&
   rdl_step "cluster ready" rdlockctl wait --timeout 120 &&
   rdl_step "membership running, every node a member" rdl_member_running &&
   rdl_step "insmod rdlock_dlm_test.ko" \
	insmod "$RDL/modules/rdlock_dlm_test.ko" &&
   rdl_step "PR on $NAMES names in rdlock's rb1 and rb2, twice that in fs/dlm's fb" fill &&
   survivor_before &&
   rdl_signal $P_FILLED &&
   rdl_step "every node filled" rdl_wait_all_signals $P_FILLED "$FILL_WAIT_S"; then
	if [ "$RDLOCK_NODE_ID" -eq "$VICTIM" ]; then
		echo "# node $RDLOCK_NODE_ID: its corosync and dlm_controld killed"
		kill -9 "$RDL_COROSYNC_PID" "$RDL_DLM_CONTROLD_PID"
		rdl_step "every survivor done" \
			rdl_wait_below "$VICTIM" $P_DONE "$RECOVER_WAIT_S"
		# Powered off as it is: its lockspaces are cut off.
		rdl_finish
		exit
	fi
	rdl_step "the victim declared down, fs/dlm's fb recovered" \
		survivor_figures
	rdl_step "a lockspace that lost a lock in the moves told its user so, once; the others never" \
		lost_told
fi
[ "$RDLOCK_NODE_ID" -eq "$VICTIM" ] && { rdl_finish; exit; }
rdl_signal $P_DONE
rdl_step "every survivor done" rdl_wait_below "$VICTIM" $P_DONE 300
[ -n "${FILL_PID:-}" ] && rdl_step "locks let go" fill_stop 300
rdl_loaded rdlock_dlm_test &&
	rdl_step "rmmod rdlock_dlm_test" rdl_rmmod rdlock_dlm_test
rdl_stop
rdl_dlm_stop
rdl_finish
