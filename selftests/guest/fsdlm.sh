#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fs/dlm beside rdlock, quickly: bring up corosync and dlm_controld on every
# node (lib.sh rdl_dlm_start) and run rdlock-bench's "dlm" protocol next to
# the bakery lock, uncontended (a name mastered on the next node) and on one
# hot name from every node. A smoke test of what the demo measures.
# RDLOCK_FSDLM_ROUNDS (default 1) > 1: then that many more uncontended
# fs/dlm runs, each a join of every node at once and a leave of each in
# turn (rdlock-bench waits for every member's fs/dlm recovery before each
# leave; a leave that interrupts one hangs fs/dlm 6.1 for minutes, a hung
# task that fails the run).

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

OPS=${RDLOCK_FSDLM_OPS:-100}
SECS=${RDLOCK_FSDLM_SECS:-3}
ROUNDS=${RDLOCK_FSDLM_ROUNDS:-1}

if rdl_check_env && rdl_start ""; then
	rdl_step "corosync and dlm_controld up" rdl_dlm_start
	NO_DLM=
	[ -n "$RDL_DLM_WHY" ] && NO_DLM="--no-dlm=node $RDLOCK_NODE_ID: $RDL_DLM_WHY"
	rdl_step "rdlock-bench --uncontended, bakery and fs/dlm ($OPS each)" \
		rdlock-bench --uncontended --clients 1 --ops "$OPS" \
		--protocols bakery,dlm ${NO_DLM:+"$NO_DLM"} --slot-off 512
	rdl_step "rdlock-bench, one hot name, bakery and fs/dlm ($SECS s each)" \
		rdlock-bench --clients 1 --locks 1 --zipf 0 --read-ratio 0 \
		--cs-us 20 --duration "$SECS" --protocols bakery,dlm \
		${NO_DLM:+"$NO_DLM"} --slot-off 64
	round=1
	while [ "$round" -lt "$ROUNDS" ]; do
		round=$((round + 1))
		rdl_step "fs/dlm: every node joins, then leaves in turn (round $round of $ROUNDS)" \
			rdlock-bench --uncontended --clients 1 --ops 10 \
			--protocols dlm ${NO_DLM:+"$NO_DLM"} --slot-off 512
	done
	rdl_dlm_stop
fi
rdl_stop
rdl_finish
