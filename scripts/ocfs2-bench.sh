#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ocfs2-bench.sh - OCFS2 metadata benchmark, o2cb (o2dlm over TCP) against
# rdlock (ocfs2_stack_rdlock), one after the other on the same guests'
# setup: ocfs2-test.sh --bench N on each stack (a fresh image each), then
# per phase the operations per second of all nodes together and the ratio
# rdlock / o2cb.
#
# usage: ocfs2-bench.sh [--kernel debug|stock] [--nodes N] [--files N]
#                       [--backend auto|verbs|twosided] [--no-flood]
#                       [--payload DIR] [--log-dir DIR]
#
#   --files N   files per node and phase (default 200)
#   --backend B rdlock's atomic backend (default auto)
#   --no-flood  not the rdlock run's benchmark under a flood
#
# Phases (selftests/guest/ocfs2.sh): every node at once creates N empty
# files in one shared directory, stats all nodes' files (one process
# lstat()s each, rdlock-stat-bench), removes its own; then the same in a
# directory of its own (its stats 200 times over: one pass of cached
# lstats is too short to time), with tmpfs-stat, the same stats on tmpfs,
# as a control that involves no cluster stack. A phase's rate is the
# nodes' operations over the slowest node's time (each node times itself
# from a common barrier that the nodes leave within 50 ms of each
# other). Each run also
# does the usual correctness checks, with 1 file and 1 record, and fsck.
#
# The rdlock run then benchmarks again under one unprivileged user's flood
# of /dev/rdlock on every node (ocfs2-test.sh --flood) and once more after
# it: a second table gives per phase the rate under the flood over the
# rate after it (the issue's goal: within 20%, 0.80x or more).

set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kernel=stock
nodes=3
files=200
backend=auto
flood=(--flood)
payload=
log_dir=

while [ $# -gt 0 ]; do
	case $1 in
	--kernel)	kernel=${2:?}; shift ;;
	--nodes)	nodes=${2:?}; shift ;;
	--files)	files=${2:?}; shift ;;
	--backend)	backend=${2:?}; shift ;;
	--no-flood)	flood=() ;;
	--payload)	payload=${2:?}; shift ;;
	--log-dir)	log_dir=${2:?}; shift ;;
	*)		rdl_usage ;;
	esac
	shift
done
[[ $files =~ ^[1-9][0-9]*$ ]] || die "--files must be a positive number"

payload=$(rdl_payload "$kernel" "$payload")
log_dir=$(rdl_log_dir "$log_dir" /tmp/rdlock-ocfs2-bench.XXXXXX)

rc=0
for stack in o2cb rdlock; do
	log "$stack: $nodes nodes, $files files per node and phase"
	# The flood's run benchmarks twice more: more time.
	extra=()
	[ "$stack" = o2cb ] || [ ${#flood[@]} -eq 0 ] ||
		extra=("${flood[@]}" --timeout 1500)
	if ! "$SCRIPTS/ocfs2-test.sh" --kernel "$kernel" --stack "$stack" \
	     --nodes "$nodes" --payload "$payload" --files 1 --records 1 \
	     --bench "$files" --backend "$backend" --log-dir "$log_dir/$stack" \
	     ${extra[@]+"${extra[@]}"} > "$log_dir/$stack.log" 2>&1; then
		log "$stack: the run failed (see $log_dir/$stack.log)"
		tail -n 5 "$log_dir/$stack.log" >&2
		rc=1
	fi
done

# rates A B TITLE-A TITLE-B: of lines "LABEL # bench... node ID PHASE OPS
# MILLISECONDS" (LABEL A or B) on standard input, per phase the rate of
# each (all nodes' operations over the slowest node's time) and B / A.
rates() {
	awk -v nodes="$nodes" -v a="$1" -v b="$2" -v ta="$3" -v tb="$4" '
	{
		key = $1 " " $6
		ops[key] += $7
		if ($8 > t[key])
			t[key] = $8
		n[key]++
		if (!($6 in seen)) {
			seen[$6] = 1
			order[++np] = $6
		}
	}
	END {
		printf "%-16s %14s %14s %8s\n", "phase", ta, tb, "ratio"
		bad = np == 0
		for (i = 1; i <= np; i++) {
			p = order[i]
			for (s = 0; s < 2; s++) {
				k = (s ? b : a) " " p
				if (n[k] != nodes) {
					r[s] = -1
					bad = 1
					continue
				}
				r[s] = ops[k] * 1000 / (t[k] > 0 ? t[k] : 1)
			}
			# (In printf arguments ">" would be a redirection.)
			x = r[0] < 0 ? "-" : sprintf("%.1f", r[0])
			y = r[1] < 0 ? "-" : sprintf("%.1f", r[1])
			z = (r[0] <= 0 || r[1] < 0) ? "-" : sprintf("%.2fx", r[1] / r[0])
			printf "%-16s %14s %14s %8s\n", p, x, y, z
		}
		exit bad
	}'
}

# "# bench node ID PHASE OPS MILLISECONDS" lines of both runs.
for stack in o2cb rdlock; do
	grep -h '^# bench node ' "$log_dir/$stack"/node*.out 2>/dev/null |
		sed "s/^/$stack /"
done | rates o2cb rdlock "o2cb ops/s" "rdlock ops/s" || rc=1

# The rdlock run under the flood ("# bench-flood node") against the same
# after it ("# bench-after node").
if [ ${#flood[@]} -gt 0 ]; then
	echo
	for run in after flood; do
		grep -h "^# bench-$run node " "$log_dir/rdlock"/node*.out 2>/dev/null |
			sed "s/^/$run /"
	done | rates after flood "after ops/s" "flood ops/s" || rc=1
fi
log "logs in $log_dir"
exit $rc
