#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Refused connections and recovery, on exactly 2 guests. Node 1 first
# expects node 0 at another address of the guest network and refuses its
# real one ("source address": the ids in a request are only the caller's
# word), then restarts with the right configuration (cluster 7, two-sided
# backend forced) and stays so while node 0, which calls it, goes through
# three configurations:
#   1. backend=verbs forced: node 1 refuses ("atomic backend mismatch");
#   2. cluster id 8: node 1 refuses ("cluster id");
#   3. cluster 7, backend auto: accepted; both agree on two-sided.
# Node 1 then checks it counted both kinds of refusal. Node 0 then sends
# its next word naming the verbs backend (inject_other_backends), as a
# node that resolved another backend would: node 1 refuses it ("runs
# atomic backend verbs"), counted once, and node 0 connects again.
#
# Then the cluster key (skipped on a kernel without sha256): node 1 comes
# up with key A from rdlock.conf's key_file and stays so while node 0
#   4. has no key: both refuse ("cluster key on one side only"), counted;
#   5. has key B: node 1 refuses the proof ("wrong cluster key"), counted,
#      and node 0 never connects, so it never learns node 1's table;
#   6. has key A: both connect and take locks in a lockspace, with the
#      verbs backend: one-sided atomics with the keys each connection's
#      table messages gave;
#   7. node 0 makes its next proof for another queue pair than the one
#      that sends it (inject_relayed_proofs), as an impostor relaying a
#      real node's proof would present it: node 1 refuses it as a wrong
#      key, counted, and node 0 connects again with its own; then node 0
#      sends its next table message with a wrong proof
#      (inject_forged_tables), as a forger on the queue pair would: node
#      1 fails that connection, counted, and node 0 connects again; then
#      node 0 sends its next request as the one before, nonce and proof
#      (inject_replayed_proofs), as a replay of a recorded request would:
#      node 1 refuses it as a wrong key, counted, and node 0 connects
#      again with a fresh one;
#   8. node 1 refuses node 0's next request as declared down, without the
#      key's proof (inject_forged_fences), as a forger on the fabric
#      could: node 0 ignores it, counted, and connects again, ready;
#   9. node 1 declares node 0 down while node 0's links are down
#      (inject_link_down_ms): node 0 calls again, gets the refusal with
#      the key's proof, and takes itself for declared down.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT

state_is() {
	rdlockctl status --json | grep -q "\"state\": \"$1\""
}

backend_is() {
	[ "$(rdl_cluster_value backend)" = "$1" ]
}

# Node 0's connection here: ready, and made since CONNECTS.
node0_ready_since() {
	[ "$(rdl_node_connects 0)" -gt "$1" ] && [ "$(rdl_node_state 0)" = ready ]
}

refused_word() {
	[ "$(rdl_cluster_value backend_refused)" -eq 1 ]
}

word_sent() {
	[ "$(rdl_cluster_value other_backends_injected)" -eq 1 ]
}

OTHER_BACKEND_GO_PORT=7779
OTHER_BACKEND_PORT=7780

# Node 0: its next word names the other backend; node 1 refuses it.
other_backend_0() {
	rdl_step "node 1 counted our connections" \
		rdl_wait_signal 1 $OTHER_BACKEND_GO_PORT 120 &&
	rdl_step "send the next word naming the verbs backend" \
		eval 'echo 1 > /sys/kernel/debug/rdlock/inject_other_backends' &&
	rdl_step "links down for 1 s" \
		eval 'echo 1000 > /sys/kernel/debug/rdlock/inject_link_down_ms' &&
	rdl_step "one word of another backend sent" rdl_poll 120 word_sent &&
	rdl_step "node 1 refused it, connected again" \
		rdl_wait_signal 1 $OTHER_BACKEND_PORT 240 &&
	rdl_step "ready after the refused word" rdlockctl wait --timeout 120 &&
	rdl_step "still two-sided" backend_is twosided
}

# Node 1: the word refused, counted once, logged; node 0 connects again:
# the links' failure ends the connection counted here, the refused word
# the next one, so the one after is node 0's honest one.
other_backend_1() {
	ob_connects=$(rdl_node_connects 0) &&
	rdl_signal $OTHER_BACKEND_GO_PORT &&
	rdl_step "refused node 0's word of another backend: counted once" \
		rdl_poll 120 refused_word &&
	rdl_step "node 1 logged it" \
		rdl_logged "node 0 runs atomic backend verbs, this node twosided: refused" &&
	rdl_step "node 0 connected again" \
		rdl_poll 120 node0_ready_since $((ob_connects + 1)) &&
	rdl_step "still counted once" refused_word &&
	rdl_signal $OTHER_BACKEND_PORT
}

# start MODULE-PARAMETERS CLUSTER-ID
start() {
	RDL_CLUSTER=$2
	# shellcheck disable=SC2086 # no parameters: no word at all
	rdl_step "insmod rdlock.ko $1" insmod "$RDL/modules/rdlock.ko" $1 &&
	rdl_step "configure cluster $2" rdl_config &&
	rdl_step "cluster up" rdlockctl up
}

# Node 0: a configuration node 1 must refuse with REASON.
refused_phase() {
	dmesg -c > /dev/null
	if start "$1" "$2"; then
		rdl_step "node 1 refused us: $3" \
			rdl_poll 60 rdl_logged "node 1 refused us: $3"
		rdl_step "not ready while refused" state_is connecting
	fi
	rdl_step "cluster down" rdlockctl down
	rdl_step "rmmod rdlock" rdl_rmmod rdlock
}

# Node 1: node 0 configured at an address it does not call from.
impostor_phase() {
	ip_phase_self=$(rdl_node_addr 1) &&
	ip_phase_node0=$(rdl_node_addr 0) || return 1
	ip_phase_other=${ip_phase_node0%.*}.250
	dmesg -c > /dev/null
	if rdl_step "insmod rdlock.ko backend=twosided" \
		insmod "$RDL/modules/rdlock.ko" backend=twosided &&
	   rdl_step "configure node 0 at $ip_phase_other" \
		rdlockctl config --cluster 7 --node 1 --addr "$ip_phase_self" \
			--peer "0=$ip_phase_other" --insecure-no-key &&
	   rdl_step "cluster up" rdlockctl up; then
		rdl_step "refused node 0 calling from $ip_phase_node0" \
			rdl_poll 120 rdl_logged "refused connection from node 0: source address (from .*$ip_phase_node0)"
		rdl_step "counted the refusal" \
			test "$(rdl_cluster_value rejected_connections)" -ge 1
		rdl_step "not ready while refusing" state_is connecting
	fi
	rdl_step "cluster down" rdlockctl down
	rdl_step "rmmod rdlock" rdl_rmmod rdlock
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 2 ] || ! rdl_check_env; then
	rdl_not_ok "reject.sh needs exactly 2 nodes"
	rdl_finish
	exit 1
fi

if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
	refused_phase backend=verbs 7 "atomic backend mismatch"
	rdl_step "node 1 refused our address first" \
		rdl_logged "node 1 refused us: source address"
	refused_phase "" 8 "cluster id"
	start "" 7
else
	impostor_phase
	start backend=twosided 7
fi
if rdl_step "cluster ready" rdlockctl wait --timeout 240; then
	rdl_step "agreed on the forced backend" backend_is twosided
	if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
		rdl_step "node 1 counted both refusals" \
			test "$(rdl_cluster_value rejected_connections)" -ge 2
		rdl_step "node 1 logged the backend refusal" \
			rdl_logged "refused connection from node 0: atomic backend mismatch"
		rdl_step "node 1 logged the cluster id refusal" \
			rdl_logged "refused connection from node 0: cluster id"
		other_backend_1
	else
		other_backend_0
	fi
	rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko"
fi
rdl_stop

# ---- The cluster key -------------------------------------------------

KEY_A=/tmp/rdlock-a.key
KEY_B=/tmp/rdlock-b.key
KEY_CONF=/tmp/rdlock-keyed.conf
KEY_LOCKED_PORT=7781
KEY_DONE_PORT=7782
FORGED_PORT=7783
LINK_DOWN_PORT=7784
FENCED_PORT=7785
DECLARED_PORT=7786
RELAYED_PORT=7787

# keyed_conf KEYFILE: the 2-node configuration file with that key file.
keyed_conf() {
	printf 'cluster 7\nnode 0 %s\nnode 1 %s\nself %s\nkey_file %s\noption backend verbs\n' \
		"$(rdl_node_addr 0)" "$(rdl_node_addr 1)" "$RDLOCK_NODE_ID" \
		"$1" > "$KEY_CONF"
}

# keyed_up KEYFILE|"": insmod, then up from the file with that key, or
# configured without one.
keyed_up() {
	dmesg -c > /dev/null
	rdl_step "insmod rdlock.ko" insmod "$RDL/modules/rdlock.ko" || return 1
	if [ -n "$1" ]; then
		keyed_conf "$1" &&
		rdl_step "up --config, key_file $1" rdlockctl up --config "$KEY_CONF"
	else
		rdl_step "configure without a key" rdl_config &&
		rdl_step "cluster up" rdlockctl up
	fi
}

keyed_down() {
	rdl_step "cluster down" rdlockctl down
	rdl_step "rmmod rdlock" rdl_rmmod rdlock
}

# Operations this node sent to the other's table.
peer_ops() {
	awk -v n=$((1 - RDLOCK_NODE_ID)) '$1 == n { print $4 + $5 + $6 + $7 }' \
		/sys/kernel/debug/rdlock/nodes
}

# connected_again N: this node's connection to node 1 became ready N
# times at least (one refused, or failed before both tables were traded,
# does not count).
connected_again() {
	[ "$(rdl_node_connects 1)" -ge "$1" ]
}

# Node 0's connection here is down (not ready).
node0_gone() {
	[ "$(rdl_node_state 0)" != ready ]
}

unproven_counted() {
	[ "$(rdl_cluster_value auth_unproven_fence)" -ge 1 ]
}

table_forged() {
	[ "$(rdl_cluster_value forged_tables_injected)" -eq 1 ]
}

# Phase 7 on node 0: its next proof is made for another queue pair, as an
# impostor relaying it would present it: node 1 refuses it as a wrong key;
# node 0 then connects with its own.
relayed_proof_0() {
	dmesg -c > /dev/null
	rdl_step "make the next proof for another queue pair" \
		eval 'echo 1 > /sys/kernel/debug/rdlock/inject_relayed_proofs' &&
	rdl_step "links down for 1 s" \
		eval 'echo 1000 > /sys/kernel/debug/rdlock/inject_link_down_ms' &&
	rdl_step "relayed proof: refused as a wrong key" \
		rdl_poll 120 rdl_logged "node 1 refused us: wrong cluster key" &&
	rdl_step "one proof relayed" \
		test "$(rdl_cluster_value relayed_proofs_injected)" -eq 1 &&
	rdl_step "connected to node 1 again, with its own proof" \
		rdl_poll 120 connected_again 2 &&
	rdl_step "ready after the relayed proof" rdlockctl wait --timeout 120 &&
	rdl_step "send the next table message with a wrong proof" \
		eval 'echo 1 > /sys/kernel/debug/rdlock/inject_forged_tables' &&
	rdl_step "links down for 1 s" \
		eval 'echo 1000 > /sys/kernel/debug/rdlock/inject_link_down_ms' &&
	rdl_step "one table message forged" rdl_poll 120 table_forged &&
	rdl_step "connected to node 1 again, with a proven table message" \
		rdl_poll 120 connected_again 3 &&
	rdl_step "ready after the forged table message" \
		rdlockctl wait --timeout 120 &&
	dmesg -c > /dev/null &&
	rdl_step "send the next request as the one before (a replay)" \
		eval 'echo 1 > /sys/kernel/debug/rdlock/inject_replayed_proofs' &&
	rdl_step "links down for 1 s" \
		eval 'echo 1000 > /sys/kernel/debug/rdlock/inject_link_down_ms' &&
	rdl_step "replayed request: refused as a wrong key" \
		rdl_poll 120 rdl_logged "node 1 refused us: wrong cluster key" &&
	rdl_step "one request replayed" \
		test "$(rdl_cluster_value replayed_proofs_injected)" -eq 1 &&
	rdl_step "connected to node 1 again, with a fresh proof" \
		rdl_poll 120 connected_again 4 &&
	rdl_step "ready after the replayed request" rdlockctl wait --timeout 120
	rdl_signal $RELAYED_PORT
}

# Phase 7 on node 1: the relayed proof refused, the forged table message
# too (its connection failed); each counted once, logged. Its counts and
# log start before it tells node 0 to go on (relayed_proof_1_start).
relayed_proof_1_start() {
	rp_bad=$(rdl_cluster_value auth_bad_proof)
	rp_table=$(rdl_cluster_value auth_bad_table)
	dmesg -c > /dev/null
}

relayed_proof_1() {
	rdl_step "node 0 connected again" rdl_wait_signal 0 $RELAYED_PORT 300 &&
	rdl_step "node 1 refused the relayed and the replayed proof: counted once each" \
		test "$(rdl_cluster_value auth_bad_proof)" -eq $((rp_bad + 2)) &&
	rdl_step "node 1 logged it" \
		rdl_logged "refused connection from node 0: wrong cluster key" &&
	rdl_step "node 1 refused the forged table message: counted once" \
		test "$(rdl_cluster_value auth_bad_table)" -eq $((rp_table + 1)) &&
	rdl_step "node 1 logged it" \
		rdl_logged "node 0: its table message does not prove the cluster key"
}

# Phase 8 on node 0: a forged refusal as declared down changes nothing.
forged_fence_0() {
	rdl_step "forged refusal: ignored, logged" \
		rdl_poll 120 rdl_logged "node 1: a refusal as declared down without the cluster key's proof: ignored" &&
	rdl_step "forged refusal: counted once" \
		test "$(rdl_cluster_value auth_unproven_fence)" -eq 1 &&
	rdl_step "connected to node 1 again" rdl_poll 120 connected_again 5 &&
	rdl_step "ready after the forged refusal" rdlockctl wait --timeout 120 &&
	rdl_step "node 1 not taken for a declarer" eval '! rdl_node_flag 1 down' &&
	rdl_step "not declared down" eval '! rdl_logged "declared this node down"'
	rdl_signal $FORGED_PORT
}

# Phase 9 on node 0: a proven one, while our links were down. They stay
# down (the most the knob allows) until node 1 has declared us down, so
# that our next dial meets the refusal however slow node 1 is.
proven_fence_0() {
	rdl_step "links down" \
		eval 'echo 60000 > /sys/kernel/debug/rdlock/inject_link_down_ms' &&
	rdl_signal $LINK_DOWN_PORT &&
	rdl_step "node 1 declared us down" \
		rdl_wait_signal 1 $DECLARED_PORT 50 &&
	rdl_step "links up again" \
		eval 'echo 0 > /sys/kernel/debug/rdlock/inject_link_down_ms' &&
	rdl_step "node 1 declared us down: proven, taken" \
		rdl_poll 120 rdl_logged "node 1 declared this node down" &&
	rdl_step "node 1 shown a declarer" rdl_node_flag 1 down &&
	rdl_step "the proven refusal not counted as unproven" \
		test "$(rdl_cluster_value auth_unproven_fence)" -eq 1
	rdl_signal $FENCED_PORT
}

# Phases 8 and 9 on node 1.
fences_1() {
	rdl_step "forge a refusal as declared down" \
		eval 'echo 1 > /sys/kernel/debug/rdlock/inject_forged_fences' &&
	rdl_step "links down for 1 s" \
		eval 'echo 1000 > /sys/kernel/debug/rdlock/inject_link_down_ms' &&
	rdl_step "node 0 ignored it" rdl_wait_signal 0 $FORGED_PORT 300 &&
	rdl_step "one refusal forged" \
		test "$(rdl_cluster_value forged_fences_injected)" -eq 1 &&
	rdl_step "node 0's links are down" \
		rdl_wait_signal 0 $LINK_DOWN_PORT 120 &&
	rdl_step "node 0 not connected here" rdl_poll 30 node0_gone &&
	dmesg -c > /dev/null &&
	rdl_step "rdlockctl node-down 0" rdlockctl node-down 0 &&
	rdl_signal $DECLARED_PORT &&
	rdl_step "node 0 refused as declared down" \
		rdl_poll 120 rdl_logged "refused connection from node 0: declared down" &&
	rdl_step "node 0 took it" rdl_wait_signal 0 $FENCED_PORT 180
}

all_locked() {
	rdl_wait_signal $((1 - RDLOCK_NODE_ID)) $KEY_LOCKED_PORT 120
}

if ! grep -q '^name *: sha256$' /proc/crypto; then
	rdl_ok "# SKIP cluster key: this kernel has no sha256"
	rdl_finish
	exit
fi
(umask 077 && printf 'rdlock test cluster key A 0123456789' > "$KEY_A" &&
	printf 'rdlock test cluster key B 0123456789' > "$KEY_B")

if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
	if keyed_up ""; then
		rdl_step "no key here, a key at node 1: refused" \
			rdl_poll 120 rdl_logged "node 1 refused us: cluster key on one side only"
		rdl_step "counted the refusal" \
			test "$(rdl_cluster_value auth_refused_by_peer)" -ge 1
		rdl_step "not ready while refused" state_is connecting
	fi
	keyed_down
	if keyed_up "$KEY_B"; then
		rdl_step "the wrong key: refused" \
			rdl_poll 60 rdl_logged "node 1 refused us: wrong cluster key"
		rdl_step "counted the refusal" \
			test "$(rdl_cluster_value auth_refused_by_peer)" -ge 1
		rdl_step "never connected to node 1: no table of it" \
			test "$(rdl_node_connects 1)" -eq 0
		rdl_step "not ready while refused" state_is connecting
	fi
	keyed_down
	keyed_up "$KEY_A"
else
	keyed_up "$KEY_A"
fi
if rdl_step "same key on both: cluster ready" rdlockctl wait --timeout 240; then
	rdl_step "verbs backend: one-sided, with the handshake's rkeys" \
		backend_is verbs
	rdl_step "debugfs: the key is set" \
		test "$(rdl_cluster_value cluster_key)" = set
	rdl_step "no message before a proof" \
		test "$(rdl_cluster_value auth_unauthenticated_msgs)" -eq 0
	if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
		rdl_step "node 1 logged the keyless request's refusal" \
			rdl_logged "refused connection from node 0: cluster key on one side only"
		rdl_step "node 1 counted it" \
			test "$(rdl_cluster_value auth_key_mismatch)" -ge 1
		rdl_step "node 1 logged the wrong proof's refusal" \
			rdl_logged "refused connection from node 0: wrong cluster key"
		rdl_step "node 1 counted it" \
			test "$(rdl_cluster_value auth_bad_proof)" -ge 1
	fi
	rdl_step "ls-create keyed" rdlockctl ls-create keyed &&
	rdl_step "lock n$RDLOCK_NODE_ID" rdlockctl lock -w 60 keyed "n$RDLOCK_NODE_ID" -- true &&
	rdl_step "lock shared" rdlockctl lock -w 60 keyed shared -- true &&
	rdl_step "one-sided operations on node $((1 - RDLOCK_NODE_ID))'s table" \
		test "$(peer_ops)" -gt 0
	rdl_signal $KEY_LOCKED_PORT
	rdl_step "both nodes took their locks" all_locked
	rdl_step "ls-remove keyed" rdlockctl ls-remove keyed
	if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
		relayed_proof_1_start
	fi
	rdl_signal $KEY_DONE_PORT
	if rdl_step "both nodes left the lockspace" \
		rdl_wait_signal $((1 - RDLOCK_NODE_ID)) $KEY_DONE_PORT 120; then
		if [ "$RDLOCK_NODE_ID" -eq 0 ]; then
			relayed_proof_0 && forged_fence_0 && proven_fence_0
		else
			relayed_proof_1 && fences_1
		fi
	fi
fi
keyed_down
rm -f "$KEY_A" "$KEY_B" "$KEY_CONF"
rdl_finish
