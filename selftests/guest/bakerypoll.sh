#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The bakery lock's polling policies side by side in one boot, on every
# guest at once: rdlock-bench's contended workload (C clients per
# node, 8 locks, zipf 0.99, 50% shared, 20 us critical sections) and one hot
# exclusive name, the CAS spinlock and the bakery lock under each policy
# (module parameter bakery_poll), ROUNDS rounds in a rotating order. A
# benchmark: it reports, it asserts nothing about speed. Lines "#poll ..."
# carry node 0's cluster figures and this node's poll counters per run.
#   bakerypoll.sh [POLICIES [ROUNDS [SECS]]]	(default "0 1", 3, 4)

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

POLICIES=${1:-0 1}
ROUNDS=${2:-3}
SECS=${3:-4}
CLIENTS=${RDLOCK_BAKERYPOLL_CLIENTS:-2}
P=/sys/kernel/debug/rdlock/protocols
RDLOCK_BARRIER_TIMEOUT=${RDLOCK_BARRIER_TIMEOUT:-300}
export RDLOCK_BARRIER_TIMEOUT

counters() {
	awk '/^(acquires|waits|ops_read|poll_idle|poll_sleep_us|grant_slack_us):/ { printf "%s=%s ", $1, $2 }' "$P"
}

# run LABEL WORKLOAD PROTO [POLICY]
run() {
	[ -n "$4" ] && echo "$4" > /sys/module/rdlock/parameters/bakery_poll
	before=$(counters)
	case $2 in
	contended) set -- "$1" "$2" "$3" --clients "$CLIENTS" --locks 8 \
		--zipf 0.99 --read-ratio 0.5 ;;
	hot) set -- "$1" "$2" "$3" --workload hot --clients 1 --locks 1 \
		--zipf 0 --read-ratio 0 ;;
	esac
	label=$1 wl=$2 proto=$3
	shift 3
	out=$(rdlock-bench --protocols "$proto" "$@" --cs-us 20 \
		--duration "$SECS" --slot-off 64) || { echo "$out"; return 1; }
	echo "$out" | sed 's/^/# /'
	echo "#poll $wl $label $(echo "$out" | awk '$2 == "cluster" && NF >= 10 { print "acq/s=" $4 " p50=" $5 " p99=" $6 " p999=" $7 " ops/acq=" $9 " jain=" $10 }') node=$RDLOCK_NODE_ID before: $before after: $(counters)"
}

if rdl_check_env && rdl_start ""; then
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		for wl in contended hot; do
			rdl_step "round $r $wl caslock" run cas "$wl" caslock
			for p in $POLICIES; do
				rdl_step "round $r $wl bakery policy $p" \
					run "bakery$p" "$wl" bakery "$p"
			done
		done
		# Rotate the policies' order for the next round.
		first=${POLICIES%% *}
		rest=${POLICIES#* }
		[ "$rest" != "$POLICIES" ] && POLICIES="$rest $first"
		r=$((r + 1))
	done
fi
rdl_stop
rdl_finish
