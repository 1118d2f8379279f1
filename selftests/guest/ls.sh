#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Multi-node test of /dev/rdlock lockspaces, run at once on every guest:
#   ls.sh verbs|twosided [LS_TEST_ARGS...]
# Mutual exclusion by name (bakery, CAS spinlock, update locks), bakery
# fairness, a writer among a stream of readers, many names, attribute
# mismatches between nodes. See selftests/rdlock/ls_test.c. Arguments after
# the backend go to ls_test (-t NAME: that case only).

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-600}
export RDLOCK_BARRIER_TIMEOUT

BACKEND=$1
rdl_backend_arg "$BACKEND"
shift

# KASAN under TCG is several times slower: fewer rounds keep the step short.
# Name reclaim is lockspace logic over CAS, the same on both backends: under
# KASAN it runs with the two-sided backend only (it grew the debug steps by
# 136 s, verbs, and 240 s, two-sided); the stock kernel runs it on both.
if [ "${RDLOCK_KERNEL:-}" = debug ]; then
	RDLOCK_LS_ITERS=${RDLOCK_LS_ITERS:-30}
	export RDLOCK_LS_ITERS
	if [ "$BACKEND" = verbs ]; then
		RDLOCK_LS_RECLAIM=${RDLOCK_LS_RECLAIM:-0}
		export RDLOCK_LS_RECLAIM
	fi
fi

# The kernel API's example client (kmod/example), every node at once on
# one lockspace: one KTAP line per check in the kernel log, and the load
# fails if any check failed.
example_checks() {
	rdl_step "insmod rdlock_example.ko (node $RDLOCK_NODE_ID)" \
		insmod "$RDL/modules/rdlock_example.ko" lockspace=example \
		prefix="node$RDLOCK_NODE_ID-" iterations=30
	dmesg | sed -n 's/^\(\[[ 0-9.]*\] \)\{0,1\}rdlock_example: /# example: /p'
	rdl_step "every example check passed" \
		sh -c "dmesg | grep -Eq 'rdlock_example: [1-9][0-9]* checks, 0 failed'"
	rdl_loaded rdlock_example &&
		rdl_step "rmmod rdlock_example" rdl_rmmod rdlock_example
}

# The rdlock tracepoints: one uncontended lock and unlock must log exactly
# one request, one successful grant and one unlock of that lockspace.
trace_checks() {
	tr=/sys/kernel/tracing
	[ -d $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null
	if [ ! -d $tr/events/rdlock ]; then
		rdl_ok "tracepoints # SKIP no tracefs with rdlock events"
		return 0
	fi
	echo > $tr/trace
	echo 1 > $tr/events/rdlock/enable
	rdlockctl lock ctl traced -- true
	echo 0 > $tr/events/rdlock/enable
	sed -n 's/^.* \(rdlock_[a-z_]*\): ls=ctl .*status=\(-*[0-9]*\)$/\1 \2/p' \
		$tr/trace > /tmp/rdlock-events
	sed 's/^/# trace: /' /tmp/rdlock-events
	rdl_step "tracepoints: request, grant, unlock" \
		test "$(cat /tmp/rdlock-events)" = "$(printf '%s\n' \
			'rdlock_lock_request 0' 'rdlock_lock_done 0' \
			'rdlock_unlock 0')"
}

# A lockspace larger than the lock tables (the guests' 32768 slots):
# ENOSPC, and the kernel log names it and the setting to raise.
too_big() {
	out=$(rdlockctl ls-create ls_too_big --slots 65536 2>&1)
	rc=$?
	echo "# exit $rc: $out"
	[ "$rc" -eq 1 ] &&
	case "$out" in
	*"(ENOSPC) (no room for it in the cluster: see dmesg)") ;;
	*) false ;;
	esac &&
	dmesg | grep "lockspace ls_too_big: " | sed 's/^/# /' &&
	dmesg | grep -q "lockspace ls_too_big: its 65536 slots do not fit in the lock tables (the smallest has 32768, [0-9]* taken): raise table_slots on every node"
}

# rdlockctl lock on node 0 alone: exit statuses like flock(1).
ctl_checks() {
	rdl_step "rdlockctl ls-create larger than the tables: ENOSPC, logged" \
		too_big
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
	trace_checks
	rdl_step "rdlockctl ls-remove" rdlockctl ls-remove ctl
	dlm_ctl_checks
}

# rdlockctl on a DLM lockspace (ls_test's: the cluster keeps its 16384
# slots per node after ls_test removed it, and has no room for a second
# one in a guest's table): a PR holder waiting for its blocking event
# (lock -b) gives the lock back when an EX request waits, which is then
# granted; NL and conversions' modes are accepted.
dlm_ctl_checks() {
	rdl_step "rdlockctl ls-create --dlm" rdlockctl ls-create ls_dlm --dlm ||
		return 1
	rdl_step "rdlockctl ls: ls_dlm a DLM lockspace on dlm.ls_dlm, open" \
		sh -c 'rdlockctl ls | grep -Eq "^ls_dlm +dlm +caslock +[0-9]+ +0666/0/0 +[0-9]+ +open +dlm\.ls_dlm +ls_dlm\$"'
	rdl_step "rdlockctl ls-create --dlm --slots refused" \
		sh -c '! rdlockctl ls-create ls_dlm2 --dlm --slots 8 2>/dev/null'
	rdl_step "rdlockctl lock -m nl beside an EX holder" \
		rdlockctl lock -m ex ls_dlm n -- rdlockctl lock -n -m nl ls_dlm n -- true
	rm -f /tmp/ctl-hold.out
	rdlockctl lock -m pr -b 60 ls_dlm n > /tmp/ctl-hold.out 2>&1 &
	hold=$!
	# Bounded: the holder prints its line once granted.
	i=0
	while [ $i -lt 60 ] && ! grep -q '^granted' /tmp/ctl-hold.out; do
		sleep 1
		i=$((i + 1))
	done
	rdl_step "rdlockctl lock -m pr -b: granted" grep -q '^granted' /tmp/ctl-hold.out
	rdl_step "rdlockctl lock -m ex: granted once the PR holder's event made it release" \
		rdlockctl lock -m ex -w 60 ls_dlm n -- true
	wait $hold
	rdl_step "rdlockctl lock -b: exited 0 after the event" test $? -eq 0
	sed 's/^/# ctl: /' /tmp/ctl-hold.out
	rdl_step "rdlockctl lock -b: printed an exclusive request's event" \
		grep -q '^blocked: handle [0-9]*, waiting: exclusive$' /tmp/ctl-hold.out
	rdl_step "rdlockctl ls-remove (DLM)" rdlockctl ls-remove ls_dlm
}

if rdl_check_env && rdl_start "backend=$BACKEND"; then
	rdl_step "ls_test ($BACKEND)" ls_test "$@"
	example_checks
	[ "$RDLOCK_NODE_ID" -eq 0 ] && ctl_checks
	echo "# node $RDLOCK_NODE_ID protocol counters:"
	sed 's/^/#   /' /sys/kernel/debug/rdlock/protocols
fi
rdl_stop
rdl_finish
