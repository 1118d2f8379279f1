# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers of the guest scripts, sourced by them. busybox sh only: no
# bash features. Every step prints one TAP line; rdl_finish prints the plan
# and returns non-zero when any step failed.

RDL=${RDL:-/rdlock}
PATH=$RDL/bin:$RDL/tests:$PATH
export PATH
RDL_CLUSTER=7
# Overridable so that the scripts can be dry-run on a host.
RDL_PROC_MODULES=${RDL_PROC_MODULES:-/proc/modules}
RDL_STEP=0
RDL_FAILED=0

echo "TAP version 13"

rdl_ok() {
	RDL_STEP=$((RDL_STEP + 1))
	echo "ok $RDL_STEP $*"
}

rdl_not_ok() {
	RDL_STEP=$((RDL_STEP + 1))
	RDL_FAILED=1
	echo "not ok $RDL_STEP $*"
}

# rdl_json FILE...: the benchmarks' JSON results (--json FILE), each line
# with "#json " in front, into the console log that cluster.sh keeps as
# node<i>.out: scripts/demo-report.py reads its figures from those lines.
# A file that is not there is skipped (its step failed and said so).
rdl_json() {
	for f in "$@"; do
		[ -r "$f" ] && sed 's/^/#json /' "$f"
	done
	return 0
}

# rdl_json_obj NAME VALUE...: one JSON object on a "#json " line, for
# figures a guest script measures itself. A VALUE of digits is a number,
# any other a string (one line; '"' and '\' are escaped).
rdl_json_obj() {
	j_s="" j_sep=""
	while [ $# -ge 2 ]; do
		case $2 in
		'' | *[!0-9]*)
			j_v=$(printf '%s' "$2" | sed 's/[\\"]/\\&/g')
			j_s="$j_s$j_sep\"$1\": \"$j_v\"" ;;
		*) j_s="$j_s$j_sep\"$1\": $2" ;;
		esac
		j_sep=", "
		shift 2
	done
	printf '#json {%s}\n' "$j_s"
}

# rdl_json_cmd TOOL FIGURE KEY command args...: the JSON the command
# prints, as KEY of one object {"tool": TOOL, "figure": FIGURE, "node":
# this node, KEY: ...} on "#json " lines; nothing if it fails (the report
# then names the figure as missing).
rdl_json_cmd() {
	j_tool=$1 j_fig=$2 j_key=$3
	shift 3
	j_out=$("$@") && [ -n "$j_out" ] || return 0
	printf '{"tool": "%s", "figure": "%s", "node": %s, "%s": %s}\n' \
		"$j_tool" "$j_fig" "$RDLOCK_NODE_ID" "$j_key" "$j_out" |
		sed 's/^/#json /'
}

# rdl_step "description" command args...: one TAP line for the command.
rdl_step() {
	rdl_desc=$1
	shift
	if "$@"; then
		rdl_ok "$rdl_desc"
		return 0
	fi
	rdl_not_ok "$rdl_desc"
	return 1
}

rdl_finish() {
	echo "1..$RDL_STEP"
	return $RDL_FAILED
}

# Word $1 + 1 of RDLOCK_NODE_ADDRS: node $1's address.
rdl_node_addr() {
	rdl_i=0
	for rdl_a in $RDLOCK_NODE_ADDRS; do
		if [ "$rdl_i" -eq "$1" ]; then
			echo "$rdl_a"
			return 0
		fi
		rdl_i=$((rdl_i + 1))
	done
	echo "no address for node $1 in RDLOCK_NODE_ADDRS" >&2
	return 1
}

# Out-of-band signals between guests, for tests that take rdlock itself
# down: rdl_signal PORT answers on PORT (7772 and up; guest-init.sh has
# 7769 to 7771) from now on, until this node powers off, which guest-init.sh
# does only once every peer has finished its command; rdl_wait_signal NODE
# PORT SEC waits at most SEC seconds for node NODE to answer there, asking
# every RDL_SIGNAL_POLL seconds (default 1).
rdl_signal() {
	nc -ll -p "$1" -e true &
}

rdl_wait_signal() {
	rdl_addr=$(rdl_node_addr "$1") || return 1
	rdl_end=$(($(date +%s) + $3))
	until timeout 3 nc -w 1 "$rdl_addr" "$2" </dev/null >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$rdl_end" ] || return 1
		sleep "${RDL_SIGNAL_POLL:-1}"
	done
}

# rdl_share_key FILE PORT: node 0 serves its cluster key FILE on PORT; the
# others fetch it into FILE, private, as an admin copies corosync's authkey.
rdl_share_key() {
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		printf '#!/bin/sh\ncat %s\n' "$1" > /tmp/send-key &&
		chmod 0700 /tmp/send-key &&
		{ nc -ll -p "$2" -e /tmp/send-key & }
		return
	fi
	mkdir -p "$(dirname "$1")" &&
	rdl_wait_signal 0 "$2" 120 &&
	(umask 077 && nc "$(rdl_node_addr 0)" "$2" < /dev/null > "$1")
}

# rdl_wait_below N PORT SEC: nodes 0 to N - 1 answer on PORT (with N the
# last node: its survivors).
rdl_wait_below() {
	rdl_j=0
	while [ "$rdl_j" -lt "$1" ]; do
		rdl_wait_signal "$rdl_j" "$2" "$3" || return 1
		rdl_j=$((rdl_j + 1))
	done
}

# rdl_wait_all_signals PORT SEC: every node (this one too) answers on PORT.
rdl_wait_all_signals() {
	rdl_wait_below "$RDLOCK_NR_NODES" "$1" "$2"
}

# rdl_poll SEC CMD [ARGS]: true once CMD succeeds, run every second for
# at most SEC seconds.
rdl_poll() {
	rdl_p_left=$1
	shift
	until "$@"; do
		rdl_p_left=$((rdl_p_left - 1))
		[ "$rdl_p_left" -gt 0 ] || return 1
		sleep 1
	done
}

# Names held by rdlockctl lock from a shell, for tests that take a name
# on one node and try it on another. rdl_hold LS NAME holds NAME exclusive
# in LS (which must be open here) until rdl_release_all; it returns once
# it is granted (at most RDL_HOLD_WAIT seconds, default 120).
RDL_HOLDERS=
RDL_HELD=
rdl_hold() {
	rm -f "/tmp/held-$2" "/tmp/release-$2"
	rdlockctl lock -x "$1" "$2" -- sh -c \
		"touch /tmp/held-$2; while [ ! -e /tmp/release-$2 ]; do sleep 0.2; done" &
	RDL_HOLDERS="$RDL_HOLDERS $!"
	RDL_HELD="$RDL_HELD $2"
	rdl_h_left=$((${RDL_HOLD_WAIT:-120} * 5))
	until [ -e "/tmp/held-$2" ]; do
		rdl_h_left=$((rdl_h_left - 1))
		[ "$rdl_h_left" -gt 0 ] || return 1
		sleep 0.2
	done
}

# rdl_hold_each LS NAME...: rdl_hold of each NAME, one holder each.
rdl_hold_each() {
	rdl_he_ls=$1
	shift
	for rdl_he_n in "$@"; do
		rdl_hold "$rdl_he_ls" "$rdl_he_n" || return 1
	done
}

# rdl_release_all: let every held name go, wait for the holders, each of
# which must end well; rdl_release_lost: the same when their lockspace
# was lost (their unlock fails), so only their end counts.
rdl_release_all() {
	rdl_release 0
}

rdl_release_lost() {
	rdl_release 1
}

rdl_release() {
	for rdl_n in $RDL_HELD; do
		touch "/tmp/release-$rdl_n"
	done
	rdl_r_rc=0
	for rdl_p in $RDL_HOLDERS; do
		wait "$rdl_p" || [ "$1" = 1 ] || rdl_r_rc=1
	done
	RDL_HOLDERS=
	RDL_HELD=
	return $rdl_r_rc
}

# rdl_busy LS NAME...: a TRY of each NAME in LS is refused as busy.
rdl_busy() {
	rdl_b_ls=$1
	shift
	for rdl_n in "$@"; do
		if rdl_b_err=$(rdlockctl lock -n -x "$rdl_b_ls" "$rdl_n" -- true 2>&1); then
			echo "# node $RDLOCK_NODE_ID: $rdl_n in $rdl_b_ls granted while another node holds it"
			return 1
		fi
		case $rdl_b_err in
		*busy*) ;;
		*)
			echo "# node $RDLOCK_NODE_ID: TRY of $rdl_n in $rdl_b_ls: $rdl_b_err"
			return 1
			;;
		esac
	done
}

# rdl_free LS NAME...: each NAME in LS is granted at once.
rdl_free() {
	rdl_f_ls=$1
	shift
	for rdl_n in "$@"; do
		rdlockctl lock -n -x "$rdl_f_ls" "$rdl_n" -- true || return 1
	done
}

# rdl_nodes_flagged FLAG: the nodes rdlockctl status shows FLAG (down,
# returned, member, ...) on here, as "0 1 2 ".
rdl_nodes_flagged() {
	rdlockctl status | awk -v f="$1" '$1 ~ /^[0-9]+$/ {
		n = split($3, a, ",")
		for (i = 1; i <= n; i++)
			if (a[i] == f)
				printf "%s ", $1
	}'
}

# rdl_node_flag NODE FLAG: rdlockctl status shows FLAG on NODE here.
rdl_node_flag() {
	case " $(rdl_nodes_flagged "$2")" in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# rdl_no_members STATE: rdlockctl status says the membership is STATE
# (static, out) and flags no node a member.
rdl_no_members() {
	rdlockctl status | grep -qx "membership: $1" &&
	[ -z "$(rdl_nodes_flagged member)" ]
}

# rdl_rm_ls LS: LS removed here if it is open; if that fails, why, with
# the lockspace's epoch and the nodes' states.
rdl_rm_ls() {
	rdl_rm_d=/sys/kernel/debug/rdlock/lockspaces/$1
	[ -d "$rdl_rm_d" ] || return 0
	rdl_rm_err=$(rdlockctl ls-remove "$1" 2>&1) && return 0
	echo "# node $RDLOCK_NODE_ID: ls-remove $1: $rdl_rm_err"
	[ -r "$rdl_rm_d/stats" ] &&
		grep -E '^(epoch|lost):' "$rdl_rm_d/stats" | sed 's/^/#   /'
	rdlockctl status | sed 's/^/#   /'
	return 1
}

rdl_check_env() {
	case "$RDLOCK_NODE_ID:$RDLOCK_NR_NODES" in
	*[!0-9:]* | :* | *:)
		echo "# RDLOCK_NODE_ID and RDLOCK_NR_NODES must be set" >&2
		return 1
		;;
	esac
	rdl_node_addr $((RDLOCK_NR_NODES - 1)) >/dev/null
}

# rdl_cluster_value NAME: NAME's value in debugfs rdlock/cluster.
rdl_cluster_value() {
	sed -n "s/^$1: //p" /sys/kernel/debug/rdlock/cluster
}

# rdl_logged PATTERN: the kernel log has a line matching PATTERN.
rdl_logged() {
	dmesg | grep -q "$1"
}

# rdl_node_connects N: how often this node's connection to node N became
# ready (one refused, or failed before both tables were traded, does not
# count).
rdl_node_connects() {
	awk -v n="$1" '$1 == n { print $3 }' /sys/kernel/debug/rdlock/nodes
}

# rdl_node_state N: node N's state as rdlockctl status shows it.
rdl_node_state() {
	rdlockctl status | awk -v n="$1" '$1 == n { print $2 }'
}

# The cluster key's line of a configuration file: with RDL_KEYED=1, a key
# file the nodes make alike; else the insecure mode without one, which
# only tests use (admin-guide.rst, "Cluster key").
RDL_KEY_FILE=/tmp/rdlock-test.key
rdl_key_line() {
	if [ "${RDL_KEYED:-0}" = 1 ]; then
		(umask 077 &&
			printf 'rdlock test cluster %s: the nodes key' "$RDL_CLUSTER" \
				> "$RDL_KEY_FILE") || return 1
		echo "key_file $RDL_KEY_FILE"
	else
		echo insecure_no_key
	fi
}

# The same as options of "rdlockctl config".
rdl_key_args() {
	rdl_kl=$(rdl_key_line) || return 1
	case $rdl_kl in
	key_file*) echo "--key-file $RDL_KEY_FILE" ;;
	*) echo --insecure-no-key ;;
	esac
}

# Configure every node of RDLOCK_NODE_ADDRS; this one from RDLOCK_NODE_ID.
rdl_config() {
	rdl_keys=$(rdl_key_args) || return 1
	rdl_self=$(rdl_node_addr "$RDLOCK_NODE_ID") || return 1
	rdl_peers=
	rdl_j=0
	while [ "$rdl_j" -lt "$RDLOCK_NR_NODES" ]; do
		if [ "$rdl_j" -ne "$RDLOCK_NODE_ID" ]; then
			rdl_a=$(rdl_node_addr "$rdl_j") || return 1
			rdl_peers="$rdl_peers --peer $rdl_j=$rdl_a"
		fi
		rdl_j=$((rdl_j + 1))
	done
	# $rdl_peers and $rdl_keys are split on purpose: one word per option.
	# shellcheck disable=SC2086
	rdlockctl config --cluster "$RDL_CLUSTER" --node "$RDLOCK_NODE_ID" \
		--addr "$rdl_self" $rdl_peers $rdl_keys \
		${RDL_CLUSTER_NAME:+--name "$RDL_CLUSTER_NAME"}
}

rdl_loaded() {
	grep -q "^$1 " "$RDL_PROC_MODULES"
}

# Remove a module and check that it is gone.
rdl_rmmod() {
	rmmod "$1" && ! rdl_loaded "$1"
}

# Run "$@" for at most $1 seconds; its exit status, or non-zero if killed.
rdl_timeout() {
	rdl_t=$1
	shift
	"$@" &
	rdl_pid=$!
	(sleep "$rdl_t"; kill "$rdl_pid" 2>/dev/null) &
	rdl_killer=$!
	wait "$rdl_pid"
	rdl_rc=$?
	kill "$rdl_killer" 2>/dev/null
	wait "$rdl_killer" 2>/dev/null
	return $rdl_rc
}

# The common start: load both modules, configure, up, wait until ready.
# $1: module parameters of rdlock.ko (may be empty).
rdl_start() {
	# How many nodes this one was told the cluster has (the report's).
	rdl_json_obj tool lib.sh figure cluster_size node "$RDLOCK_NODE_ID" \
		nodes "$RDLOCK_NR_NODES"
	# shellcheck disable=SC2086 # no parameters: no word at all
	rdl_step "insmod rdlock.ko $1" insmod "$RDL/modules/rdlock.ko" $1 &&
	rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko" &&
	rdl_step "configure node $RDLOCK_NODE_ID of $RDLOCK_NR_NODES" rdl_config &&
	rdl_step "cluster up" rdlockctl up &&
	rdl_step "cluster ready" rdlockctl wait --timeout 120
}

# Protocol bugs the ticket life counts (design.rst, "Ticket life"): a
# state change it does not allow, a background ticket left unfinished.
rdl_ticket_life_ok() {
	awk '/^(ticket_bad_moves|tickets_unfinished): / { bad += $2 }
	     END { if (bad) print "# ticket life: " bad " bad moves or unfinished tickets"
		   exit bad != 0 }' /sys/kernel/debug/rdlock/protocols
}

# The common end; every step is tried whatever failed before.
rdl_stop() {
	if rdl_loaded rdlock_test; then
		rdl_step "final barrier" xport_test --final-barrier
	fi
	if rdl_loaded rdlock; then
		rdl_state=$(rdlockctl status --json 2>/dev/null)
		case "$rdl_state" in
		*'"state": "unconfigured"'* | *'"state": "down"'*) ;;
		*) rdl_step "cluster down" rdlockctl down ;;
		esac
	fi
	[ -r /sys/kernel/debug/rdlock/protocols ] &&
		rdl_step "ticket life: no bad move, no unfinished ticket" \
			rdl_ticket_life_ok
	rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
	rdl_loaded rdlock && rdl_step "rmmod rdlock" rdl_rmmod rdlock
	return 0
}

# The atomic backend the cluster runs (rdlockctl status): verbs, twosided.
rdl_backend() {
	rdlockctl status --json | sed -n 's/.*"backend": "\([a-z]*\)".*/\1/p'
}

# The backend argument of the multi-node scripts: verbs or twosided.
rdl_backend_arg() {
	case "$1" in
	verbs | twosided) return 0 ;;
	esac
	echo "usage: $0 verbs|twosided" >&2
	exit 2
}

# fs/dlm beside rdlock, for rdlock-bench's "dlm" protocol: corosync (knet,
# votequorum, every node of RDLOCK_NODE_ADDRS with node id = rdlock node
# + 1) and dlm_controld, on the guests' eth0: rdl_dlm_start [fence].
# Without "fence", dlm_controld does not fence; with it, it fences a failed
# node through the host (fence_rdlock_host.sh) before any lockspace
# recovers, and only with quorum (dlm_controld's default); with
# RDL_FENCE_DELAY=SEC, SEC seconds after it decided to; with
# RDL_FENCE_METHOD=link by cutting its link, not its power (the agent's
# method=link). Waits until
# corosync counts every node (RDL_DLM_NODES of them when set: the others
# are off) and dlm_controld answers. The daemons' logs
# are in /tmp/corosync.log and /tmp/dlm_controld.log; on failure,
# RDL_DLM_WHY says why in one line (and the logs' ends are printed).
RDL_DLM_WAIT=${RDL_DLM_WAIT:-120}
rdl_dlm_conf() {
	cat <<-EOC
	totem {
		version: 2
		cluster_name: rdlock
		transport: knet
		crypto_cipher: none
		crypto_hash: none
		token: 10000
	}
	logging {
		to_stderr: yes
		to_syslog: no
		to_logfile: no
		timestamp: on
	}
	quorum {
		provider: corosync_votequorum
	}
	nodelist {
	EOC
	rdl_j=0
	while [ "$rdl_j" -lt "$RDLOCK_NR_NODES" ]; do
		printf '\tnode {\n\t\tnodeid: %d\n\t\tname: node%d\n\t\tring0_addr: %s\n\t}\n' \
			$((rdl_j + 1)) "$rdl_j" "$(rdl_node_addr "$rdl_j")"
		rdl_j=$((rdl_j + 1))
	done
	echo "}"
}

rdl_dlm_fail() {
	RDL_DLM_WHY=$1
	echo "# node $RDLOCK_NODE_ID: fs/dlm: $RDL_DLM_WHY"
	rdl_json_obj tool lib.sh figure fs_dlm node "$RDLOCK_NODE_ID" up 0 \
		why "$RDL_DLM_WHY"
	for rdl_f in /tmp/corosync.log /tmp/dlm_controld.log; do
		[ -s "$rdl_f" ] || continue
		echo "# node $RDLOCK_NODE_ID: the end of $rdl_f:"
		tail -n 8 "$rdl_f" | sed 's/^/#   /'
	done
	return 1
}

rdl_dlm_start() {
	RDL_DLM_WHY=
	for rdl_b in corosync corosync-quorumtool dlm_controld dlm_tool; do
		command -v "$rdl_b" >/dev/null ||
			{ rdl_dlm_fail "no $rdl_b in the guest"; return 1; }
	done
	[ -e /dev/dlm-control ] || [ -e /dev/misc/dlm-control ] ||
		{ rdl_dlm_fail "no dlm-control device (dlm.ko not loaded?)"; return 1; }
	mkdir -p /etc/corosync /var/lib/corosync /var/log/cluster \
		/var/log/dlm_controld /var/run /run /dev/shm /dev/misc /etc/dlm
	grep -q ' /dev/shm ' /proc/mounts || mount -t tmpfs shm /dev/shm
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config ||
		{ rdl_dlm_fail "cannot mount configfs"; return 1; }
	# dlm_controld looks for its devices in /dev/misc (udev's names);
	# devtmpfs has them in /dev.
	for rdl_d in dlm-control dlm-monitor dlm_plock; do
		[ -e "/dev/$rdl_d" ] && [ ! -e "/dev/misc/$rdl_d" ] &&
			ln -s "../$rdl_d" "/dev/misc/$rdl_d"
	done
	# fs/dlm's connection states into the kernel's log (not the console):
	# rdl_dlm_stop shows them if a connection's shutdown went wrong.
	echo "file fs/dlm/midcomms.c +p" \
		> /sys/kernel/debug/dynamic_debug/control 2>/dev/null
	rdl_dlm_conf > /etc/corosync/corosync.conf
	corosync -f > /tmp/corosync.log 2>&1 &
	RDL_COROSYNC_PID=$!
	rdl_up_nodes=${RDL_DLM_NODES:-$RDLOCK_NR_NODES}
	rdl_left=$RDL_DLM_WAIT
	until corosync-quorumtool -s 2>/dev/null |
	      grep -q "^Total votes: *$rdl_up_nodes\$"; do
		rdl_left=$((rdl_left - 1))
		[ "$rdl_left" -gt 0 ] || {
			rdl_dlm_fail "corosync did not count $rdl_up_nodes nodes within $RDL_DLM_WAIT s"
			return 1
		}
		sleep 1
	done
	if [ "${1:-}" = fence ]; then
		# Fencing by the host's power switch (fence_rdlock_host.sh);
		# no startup fencing: every node starts at once, all members.
		cat > /etc/dlm/dlm.conf <<-EOC
		enable_fencing=1
		enable_startup_fencing=0
		fence_all $RDL/guest/fence_rdlock_host.sh${RDL_FENCE_DELAY:+ delay=$RDL_FENCE_DELAY}${RDL_FENCE_METHOD:+ method=$RDL_FENCE_METHOD}
		EOC
		rdl_fencing="fencing by the host (fence_rdlock_host.sh)"
	else
		echo "enable_fencing=0" > /etc/dlm/dlm.conf
		rdl_fencing="without fencing"
	fi
	dlm_controld --foreground > /tmp/dlm_controld.log 2>&1 &
	RDL_DLM_CONTROLD_PID=$!
	# Up once it has told the kernel every node's address (configfs
	# comms/<nodeid>): a lockspace created before fails with ENOTCONN.
	# Its own budget: corosync may have taken most of the first (a node
	# booted again while the others run).
	rdl_left=$RDL_DLM_WAIT
	until dlm_tool status > /dev/null 2>&1 &&
	      [ "$(ls /sys/kernel/config/dlm/cluster/comms 2>/dev/null | wc -l)" -ge "$rdl_up_nodes" ]; do
		rdl_left=$((rdl_left - 1))
		[ "$rdl_left" -gt 0 ] || {
			rdl_dlm_fail "dlm_controld did not configure $rdl_up_nodes nodes within $RDL_DLM_WAIT s"
			return 1
		}
		sleep 1
	done
	rdl_up="corosync $(corosync -v 2>/dev/null | sed -n 's/.*version .\([0-9.]*\).*/\1/p;q'), $rdl_up_nodes nodes, dlm_controld $rdl_fencing"
	echo "# node $RDLOCK_NODE_ID: fs/dlm up: $rdl_up"
	rdl_json_obj tool lib.sh figure fs_dlm node "$RDLOCK_NODE_ID" up 1 \
		what "$rdl_up"
}

# Stop dlm_controld and corosync (the lockspaces are gone by then).
rdl_dlm_stop() {
	for rdl_p in $RDL_DLM_CONTROLD_PID $RDL_COROSYNC_PID; do
		kill "$rdl_p" 2>/dev/null
	done
	rdl_k=$(dmesg)
	if echo "$rdl_k" | grep -q "dlm.*unexpected state\|because shutdown stuck\|active shutdown timed out"; then
		echo "# fs/dlm's connection shutdown went wrong: its states"
		echo "$rdl_k" | grep -E "dlm: |switch node|fin (msg|ack)|sending fin|reset node|users (inc|dec)|shutdown|flush midcomms" |
			sed 's/^/#   /'
	fi
	return 0
}

# rdl_stop_in_turn PORT NODE...: the NODEs (this one among them) take the
# cluster down one at a time, in that order, each once the one before it
# answers on PORT; then each stops corosync and dlm_controld once the last
# one answers. So each leaves the companion lockspace (membership=dlm)
# while the others stay in it, and no daemon stops while a node still
# leaves. A node waits 300 s for each node before it in the list (a
# missing one does not make two others stop at once); one not in the list
# only waits for the last. CI saw fs/dlm 6.1 (a stock kernel) WARN in
# dlm_midcomms_receive_buffer(), a FIN in an unexpected state, and a node
# wait out dlm_midcomms_shutdown()'s 3 minutes, when all three nodes left
# at once just after one had rejoined; fs/dlm's own shutdown races are
# not this suite's subject.
rdl_stop_in_turn() {
	rdl_t_port=$1
	shift
	rdl_t_prev=
	rdl_t_wait=0
	for rdl_t in "$@"; do
		[ "$rdl_t" -eq "$RDLOCK_NODE_ID" ] && break
		rdl_t_prev=$rdl_t
		rdl_t_wait=$((rdl_t_wait + 300))
	done
	[ -z "$rdl_t_prev" ] ||
		rdl_step "node $rdl_t_prev took its cluster down" \
			rdl_wait_signal "$rdl_t_prev" "$rdl_t_port" "$rdl_t_wait"
	rdl_stop
	rdl_signal "$rdl_t_port"
	for rdl_t_last in "$@"; do :; done
	[ "$rdl_t_last" -eq "$RDLOCK_NODE_ID" ] ||
		rdl_step "node $rdl_t_last took its cluster down" \
			rdl_wait_signal "$rdl_t_last" "$rdl_t_port" \
			$((300 * $#))
	rdl_dlm_stop
}

# membership=dlm (recovery.rst): a line of this node's debugfs membership
# file, rdl_member_line KEY.
RDL_MEMBERSHIP=/sys/kernel/debug/rdlock/membership
rdl_member_line() {
	sed -n "s/^$1: //p" $RDL_MEMBERSHIP
}

# rdl_member_running [NODES [DECLARED [SECONDS]]]: the membership runs
# with every node a member (the nodes of NODES when given, a list as
# debugfs shows it), none failed, and when given DECLARED declarations
# down made here in all, within SECONDS (120: each node joins the
# companion lockspace on its own, and each join is a recovery).
# rdlockctl status says the same: membership running, and the members
# flagged "member".
rdl_member_running() {
	rdl_m=${3:-120}
	until [ "$(rdl_member_line state)" = running ] &&
	      [ -z "$(rdl_member_line failed)" ] &&
	      [ "$(rdl_member_line members)" = "${1:-0-$((RDLOCK_NR_NODES - 1))}" ] &&
	      { [ -z "$2" ] ||
		[ "$(rdl_member_line declared_down)" = "$2" ]; } &&
	      [ "$(rdlockctl status | sed -n 's/^membership: //p')" = running ] &&
	      [ "$(rdl_nodes_flagged member)" = "$(rdl_expand_list "$(rdl_member_line members)")" ]; do
		rdl_m=$((rdl_m - 1))
		[ "$rdl_m" -gt 0 ] || {
			sed 's/^/# /' $RDL_MEMBERSHIP
			rdlockctl status | sed 's/^/# /'
			return 1
		}
		sleep 1
	done
}

# A list as debugfs prints a bitmap ("0-2,5") as ids: "0 1 2 5 ".
rdl_expand_list() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r rdl_a rdl_b; do
		[ -n "$rdl_a" ] || continue
		rdl_i=$rdl_a
		while [ "$rdl_i" -le "${rdl_b:-$rdl_a}" ]; do
			printf '%s ' "$rdl_i"
			rdl_i=$((rdl_i + 1))
		done
	done
}


# This survivor's dlm_controld knows rdlock node $1 (corosync node id $1 +
# 1) fenced with success: the fencing node's result, which every daemon
# receives ("fence status N receive 0 from F" in dlm_tool dump).
rdl_fenced() {
	rdl_f=120
	until dlm_tool dump 2>/dev/null |
	      grep -q "fence status $(($1 + 1)) receive 0 from "; do
		rdl_f=$((rdl_f - 1))
		[ "$rdl_f" -gt 0 ] || {
			dlm_tool dump 2>&1 | grep -i fence | sed 's/^/# /'
			return 1
		}
		sleep 1
	done
	dlm_tool dump | grep -E "fence (status|wait) $(($1 + 1)) " |
		sed 's/^/# /'
}
