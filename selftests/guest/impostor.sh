#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# An impostor on the fabric, on exactly 4 guests. Nodes 0, 1 and 2 form a
# keyed cluster (cluster 7, the nodes' key file) from a configuration file
# with a lockspace "imp", and each holds a name there (n0, n1, n2). Guest 3
# is no node of it. Then node 1's link goes down (the host cuts its
# cable), nodes 0 and 2 see node 1 gone and note its counts, and guest 3
# takes node 1's address as a second address of its own and comes up as
# node 1 of cluster 7, three times:
#   1. without a key (the insecure mode): node 0's requests are refused
#      by it (cluster key on one side only) and node 2 refuses its own;
#   2. with a guessed key: node 0 answers its challenge and is refused
#      (wrong cluster key); node 2 refuses its proof (wrong cluster key);
#   3. with the guessed key, refusing node 0's next requests as declared
#      down (inject_forged_fences): node 0 ignores them, unproven.
# Each time the impostor never becomes ready, never connects to node 0 or
# 2, and cannot create the lockspace. Nodes 0 and 2 count and log each
# refusal, and for node 1 count no new connection, no message received
# and no request served. The impostor then drops the address, node 1's
# link comes back, the neighbours forget the impostor's MAC, and node 1
# connects again as itself: every name is still held by its holder
# (busy everywhere else), the lockspace is lost nowhere, and once
# released each name is granted at once (to the next node).

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT
RDL_KEYED=1
CONF=/tmp/impostor-cluster.conf
GUESS=/tmp/impostor-guess.key
DBG=/sys/kernel/debug/rdlock
HELD_PORT=7790		# nodes 0 to 2: their name held
ALL_PORT=7789		# nodes 0 to 2: every name held
DARK_PORT=7791		# nodes 0 and 2: node 1 gone, its counts noted
ROUND_PORT=7792		# impostor: round N under way (7792 + N - 1)
SEEN_PORT=7796		# nodes 0 and 2: round N seen (7796 + N - 1)
GONE_PORT=7799		# impostor: gone, the address dropped
BACK_PORT=7800		# nodes 0 to 2: node 1 connected again
CHECKED_PORT=7801	# nodes 0 to 2: the names checked (+1 released,
			# +2 the next node's name taken)

# The cluster's configuration file: nodes 0 to 2, this one as $1.
write_conf() {
	{
		echo "cluster $RDL_CLUSTER"
		for wc_j in 0 1 2; do
			echo "node $wc_j $(rdl_node_addr "$wc_j")" || return 1
		done
		echo "self $1"
		rdl_key_line || return 1
		echo "lockspace imp"
	} > "$CONF"
}

# node_col N COLUMN: node N's COLUMN (debugfs nodes' header word) here.
node_col() {
	awk -v n="$1" -v c="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i; next }
		$1 == n { print $col }' "$DBG/nodes"
}

# Node 1's counts here: connects, msgs_recv, served.
node1_counts() {
	echo "$(node_col 1 connects) $(node_col 1 msgs_recv) $(node_col 1 served)"
}

# not_ready N: node N is not ready here.
not_ready() {
	[ "$(rdl_node_state "$1")" != ready ]
}

# gone N: node N not ready here; else a ping to it, which fails its
# connection once it goes unanswered (an idle connection to a node cut
# off is noticed by its next operation).
gone() {
	not_ready "$1" || { xport_test --ping "$1" > /dev/null; false; }
}

# forget_1: the neighbour entry of node 1's address, which node 1 or
# the impostor answers next (the entry the link's owner left to expire).
forget_1() {
	ip neigh flush to "$(rdl_node_addr 1)" > /dev/null
}

# at_least NAME N: debugfs rdlock/cluster's NAME is N or more.
at_least() {
	[ "$(rdl_cluster_value "$1")" -ge "$2" ]
}

# Nodes 0 and 2 while the impostor has node 1's address: round $1 is
# seen here once each of its checks ($2 ...) passed: "+NAME": debugfs
# rdlock/cluster's NAME went up since the round's signal (the impostor
# calls again and again while a round lasts); "/TEXT": a kernel log line
# has TEXT. And node 1's counts here have not moved.
seen_round() {
	sr_round=$1
	shift
	rdl_step "impostor's round $sr_round under way" \
		rdl_wait_signal 3 $((ROUND_PORT + sr_round - 1)) 300 || return 1
	sr_bases=
	for sr_c in "$@"; do
		case $sr_c in
		+*) sr_bases="$sr_bases ${sr_c#+}=$(rdl_cluster_value "${sr_c#+}")" ;;
		esac
	done
	for sr_c in "$@"; do
		case $sr_c in
		+*)
			sr_name=${sr_c#+}
			sr_base=$(echo "$sr_bases" | tr ' ' '\n' | sed -n "s/^$sr_name=//p")
			rdl_step "round $sr_round: $sr_name counted" \
				rdl_poll 120 at_least "$sr_name" $((sr_base + 1)) ||
				return 1
			;;
		/*)
			rdl_step "round $sr_round: logged '${sr_c#/}'" \
				rdl_poll 120 rdl_logged "${sr_c#/}" || return 1
			;;
		esac
	done
	rdl_step "round $sr_round: node 1 not ready here" not_ready 1 &&
	rdl_step "round $sr_round: no connection, message or request of node 1" \
		test "$(node1_counts)" = "$DARK_COUNTS" &&
	rdl_signal $((SEEN_PORT + sr_round - 1))
}

# Nodes 0 and 2: node 1 cut off (node 0 has the host cut its link),
# then each of the impostor's rounds seen, each with what only it makes
# here: on node 0, which calls node 1, the impostor's refusals (a key on
# one side, then the wrong key, then unproven refusals as declared
# down); on node 2, which node 1 calls, its requests refused (rounds 2
# and 3 look alike there).
watch_impostor() {
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		rdl_step "every node saw every name held" \
			rdl_wait_below 3 $ALL_PORT 240 &&
		rdl_step "node 1's link off" \
			sh "$RDL/guest/host-ctl.sh" link 1 off || return 1
	fi
	rdl_step "node 1 gone here" rdl_poll 300 gone 1 &&
	rdl_step "neighbours: forget node 1's MAC" forget_1 || return 1
	DARK_COUNTS=$(node1_counts)
	echo "# node $RDLOCK_NODE_ID: node 1's connects, msgs_recv, served: $DARK_COUNTS"
	rdl_signal $DARK_PORT || return 1
	if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
		seen_round 1 +auth_refused_by_peer \
			"/node 1 refused us: cluster key on one side only" &&
		seen_round 2 +auth_refused_by_peer \
			"/node 1 refused us: wrong cluster key" &&
		seen_round 3 +auth_unproven_fence \
			"/node 1: a refusal as declared down without the cluster key's proof: ignored"
	else
		seen_round 1 +auth_key_mismatch \
			"/refused connection from node 1: cluster key on one side only" &&
		seen_round 2 +auth_bad_proof \
			"/refused connection from node 1: wrong cluster key" &&
		seen_round 3 +auth_bad_proof
	fi
}

# The real nodes: up, a name held each, through the impostor's rounds.
real_node() {
	write_conf "$RDLOCK_NODE_ID" &&
	rdl_step "insmod rdlock.ko" insmod "$RDL/modules/rdlock.ko" &&
	rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko" &&
	rdl_step "keyed cluster up from $CONF, lockspace imp" \
		rdlockctl up --config "$CONF" --timeout 240 &&
	rdl_step "cluster key set" grep -qx 'cluster_key: set' "$DBG/cluster" &&
	rdl_step "hold n$RDLOCK_NODE_ID" rdl_hold imp "n$RDLOCK_NODE_ID" &&
	rdl_signal $HELD_PORT &&
	rdl_step "every name held" rdl_wait_below 3 $HELD_PORT 240 &&
	rdl_signal $ALL_PORT || return 1

	if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
		# Link off until node 0 turns it on again: nothing to do here
		# but see node 0 gone and wait for the cluster to be whole.
		rdl_step "node 0 gone here" rdl_poll 300 gone 0 &&
		rdl_step "connected again, every node ready" \
			rdlockctl wait --timeout 600 &&
		rdl_signal $BACK_PORT || return 1
	else
		# Whatever the rounds gave: the impostor gone, node 1 back.
		watch_impostor
		rn_rc=$?
		rdl_step "the impostor gone" rdl_wait_signal 3 $GONE_PORT 600
		rdl_step "neighbours: forget the impostor's MAC" forget_1
		if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
			rdl_step "node 1's link on" \
				sh "$RDL/guest/host-ctl.sh" link 1 on
		fi
		[ "$rn_rc" -eq 0 ] &&
		rdl_step "node 1 connected again" rdl_wait_signal 1 $BACK_PORT 600 ||
			return 1
	fi

	rn_others=$(for j in 0 1 2; do [ "$j" -eq "$RDLOCK_NODE_ID" ] || echo "n$j"; done)
	# $rn_others is one word per name: split on purpose.
	# shellcheck disable=SC2086
	rdl_step "every node ready" rdlockctl wait --timeout 240 &&
	rdl_step "the others' names busy here" rdl_busy imp $rn_others &&
	rdl_step "lockspace imp not lost" sh -c '! rdlockctl ls | grep -q "^imp .*lost"' &&
	rdl_signal $CHECKED_PORT &&
	rdl_step "every node checked" rdl_wait_below 3 $CHECKED_PORT 240 &&
	rdl_step "release n$RDLOCK_NODE_ID" rdl_release_all &&
	rdl_signal $((CHECKED_PORT + 1)) &&
	rdl_step "every name released" rdl_wait_below 3 $((CHECKED_PORT + 1)) 240 &&
	rn_next=n$(((RDLOCK_NODE_ID + 1) % 3)) &&
	rdl_step "$rn_next granted at once" rdl_free imp "$rn_next" &&
	rdl_signal $((CHECKED_PORT + 2)) &&
	rdl_step "every node took them" rdl_wait_below 3 $((CHECKED_PORT + 2)) 240 &&
	rdl_step "ls-remove imp" rdlockctl ls-remove imp
}

# The real nodes' end: no final barrier (rdl_stop's needs every guest
# in the cluster, and guest 3 is none).
real_stop() {
	rdl_loaded rdlock_test && rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
	rdl_stop
}

# The impostor: one round as node 1 with node 1's address.
# $1 round, $2 "" (no key) or a key file, $3 forged fences to send.
impostor_round() {
	ir_self=$(rdl_node_addr 1) || return 1
	ir_keys=--insecure-no-key
	if [ -n "$2" ]; then ir_keys="--key-file $2"; fi
	# $ir_keys is one option or two words: split on purpose.
	# shellcheck disable=SC2086
	rdl_step "round $1: configure as node 1 ($ir_keys)" \
		rdlockctl config --cluster "$RDL_CLUSTER" --node 1 \
			--addr "$ir_self" --peer "0=$(rdl_node_addr 0)" \
			--peer "2=$(rdl_node_addr 2)" $ir_keys &&
	if [ "$3" -gt 0 ]; then
		rdl_step "round $1: refuse $3 requests as declared down" \
			eval "echo $3 > $DBG/inject_forged_fences"
	fi &&
	rdl_step "round $1: up as node 1" rdlockctl up &&
	rdl_signal $((ROUND_PORT + $1 - 1)) &&
	rdl_step "round $1: node 0 saw it" \
		rdl_wait_signal 0 $((SEEN_PORT + $1 - 1)) 300 &&
	rdl_step "round $1: node 2 saw it" \
		rdl_wait_signal 2 $((SEEN_PORT + $1 - 1)) 300 &&
	rdl_step "round $1: never ready" sh -c '! rdlockctl wait --timeout 1' &&
	rdl_step "round $1: no connection to node 0 or 2" \
		test "$(rdl_node_connects 0) $(rdl_node_connects 2)" = "0 0" &&
	rdl_step "round $1: no lockspace" sh -c '! rdlockctl ls-create imp 2>/dev/null'
	ir_rc=$?
	rdl_step "round $1: down" rdlockctl down
	return $ir_rc
}

impostor() {
	im_addr=$(rdl_node_addr 1) &&
	(umask 077 && head -c 32 /dev/urandom > "$GUESS") &&
	rdl_step "insmod rdlock.ko" insmod "$RDL/modules/rdlock.ko" &&
	rdl_step "node 1 gone at node 0" rdl_wait_signal 0 $DARK_PORT 300 &&
	rdl_step "node 1 gone at node 2" rdl_wait_signal 2 $DARK_PORT 300 &&
	rdl_step "take node 1's address $im_addr" \
		ip addr add "$im_addr/24" dev eth0 &&
	impostor_round 1 "" 0 &&
	impostor_round 2 "$GUESS" 0 &&
	impostor_round 3 "$GUESS" 4
	im_rc=$?
	rdl_step "forged fences sent" test "$(rdl_cluster_value forged_fences_injected)" -ge 1
	rdl_step "drop node 1's address" ip addr del "$im_addr/24" dev eth0
	rdl_signal $GONE_PORT
	return $im_rc
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 4 ] || ! rdl_check_env; then
	rdl_not_ok "impostor.sh needs exactly 4 nodes"
	rdl_finish
	exit 1
fi

dmesg -c > /dev/null
if [ "$RDLOCK_NODE_ID" -eq 3 ]; then
	impostor
	rdl_stop
else
	real_node
	rdl_release_all
	real_stop
fi
rdl_finish
