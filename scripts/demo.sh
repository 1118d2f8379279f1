#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - the main job: boot a QEMU/rxe cluster of Debian-kernel guests
# (3 by default), form an rdlock cluster, prove the RDMA primitives with an
# exact cluster-wide count, and in the same boot OCFS2's metadata benchmark
# on OCFS2's own o2cb stack and then on rdlock's plug-in; run the bakery
# lock, the CAS spinlock and the
# CQL lock with every node on one lock, then the lock benchmark of the product
# path (rdlock-bench: lockspaces and locks by name, contended, uncontended
# and one hot name, with the stock kernel's fs/dlm beside rdlock's
# protocols) and "rdlockctl lock" guarding a counter in node 0's memory,
# and measure the primitives and an uncontended lock next to perftest's
# ib_atomic_lat, for both atomic backends; last, with corosync and
# dlm_controld fencing through the host, a node killed mid-workload: the
# throughput of locks by name before, through and after its death, and
# when the cluster engine and rdlock acted. Sets up everything it needs.
#
# Standard output is for a person: a progress line per guest run, then one
# screen of report (scripts/demo-report.py: the cluster, the exact count, a
# table per workload with the protocols side by side, verdict ratios), then
# where the rest is. Everything else goes to build/demo/: setup.log and
# build.log, each run's cluster.log and per-node logs (node*.out), ocfs2/
# (mkfs and fsck logs; the images only if fsck found a fault), the
# report's report.json (every figure) and report.png (the plot).
# Exits non-zero if any step failed, after saying which and where its log is.
#
# usage: demo.sh [NODES]
#
# RDLOCK_DEMO_OCFS2_FILES: files per node and phase of the OCFS2 benchmark
# (default 100; 0: no OCFS2). OCFS2 needs 2 to 4 nodes (4 journal slots).

set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/ocfs2-image.sh
. "$ROOT/scripts/ocfs2-image.sh"
nodes=${1:-3}
logs=$ROOT/build/demo
ocfs2_files=${RDLOCK_DEMO_OCFS2_FILES:-100}
[[ $ocfs2_files =~ ^[0-9]+$ ]] ||
	{ echo "demo: RDLOCK_DEMO_OCFS2_FILES must be a number" >&2; exit 2; }
[[ $nodes =~ ^[2-4]$ ]] || ocfs2_files=0
total=5
# A node killed mid-workload: a majority must survive.
[ "$nodes" -ge 3 ] && total=6
failed=()

rm -rf "$logs"
mkdir -p "$logs"

# setup_failed WHAT LOG...: a step that must work for anything else to run.
setup_failed()
{
	local what=$1 f

	shift
	echo " FAILED"
	echo "demo: $what failed; see $*"
	for f in "$@"; do
		[ -s "$f" ] || continue
		echo "demo: the end of $f:"
		tail -n 5 "$f" | sed 's/^/demo:   /'
	done
	exit 1
}

printf 'demo: host setup and build (the first run installs packages; log: %s)...' \
	"$logs/setup.log"
"$ROOT/scripts/host-setup.sh" > "$logs/setup.log" 2>&1 ||
	setup_failed "host setup" "$logs/setup.log"
payload=$(RDLOCK_BUILD_LOG="$logs/build.log" \
	  "$ROOT/scripts/payload.sh" stock 2>> "$logs/setup.log") ||
	setup_failed "the build for Debian's kernel" "$logs/build.log" \
		"$logs/setup.log"
# OCFS2 (run 1): an image per stack, each a disk every guest shares:
# /dev/vda o2cb, /dev/vdb rdlock ("pcmk" on the disk). mkfs -b 4096: no
# node writes inside a 4 KiB block another node writes (ocfs2-image.sh).
ocfs2_run=()
if [ "$ocfs2_files" -gt 0 ]; then
	mkdir -p "$logs/ocfs2"
	for stack in o2cb rdlock; do
		ocfs2_mkimage "$logs/ocfs2/$stack.img" "$stack" \
			"$logs/ocfs2/mkfs-$stack.log" 2>> "$logs/setup.log" ||
			setup_failed "mkfs.ocfs2 ($stack)" "$logs/ocfs2/mkfs-$stack.log" \
				"$logs/setup.log"
		[ "$stack" = rdlock ] || o2cb_region=("${OCFS2_GUEST_ARGS[@]}")
	done
	# The images, OCFS2's modules (the rdlock stack's plug-in comes in
	# the payload), flock for ocfs2.sh's checks; o2cb's heartbeat region.
	ocfs2_run=(--shared-disk "$logs/ocfs2/o2cb.img"
		   --shared-disk "$logs/ocfs2/rdlock.img"
		   --module ocfs2 --module ocfs2_stack_o2cb --bin /usr/bin/flock
		   -- env RDLOCK_OCFS2_BENCH="$ocfs2_files" RDLOCK_OCFS2_FLOOD=1
		   RDLOCK_OCFS2_FILES=2
		   RDLOCK_OCFS2_RECORDS=4 sh guest/demo.sh "${o2cb_region[@]}")
fi
echo " done"

# fs/dlm beside rdlock (run 3): lib.sh's FSDLM_BINS.

# run N TITLE GUESTS SUBDIR [CLUSTER-OPTIONS] -- GUEST-COMMAND...: guest run
# N of $total. cluster.sh's own output goes to SUBDIR/cluster.log beside the
# node logs; demo-report.py reads the steps file for the runs' status.
run()
{
	local n=$1 title=$2 guests=$3 sub=$4 dir start rc=0

	shift 4
	dir=$logs/$sub
	mkdir -p "$dir"
	printf 'demo: [%d/%d] %s (%d guests)...' "$n" "$total" "$title" "$guests"
	start=$SECONDS
	"$ROOT/scripts/cluster.sh" --kernel stock --nodes "$guests" --timeout 900 \
		--payload "$payload" --log-dir "$dir" "$@" \
		> "$dir/cluster.log" 2>&1 || rc=$?
	printf '%s\t%s\t%d\t%d\n' "$title" "$sub" "$rc" $((SECONDS - start)) \
		>> "$logs/steps"
	if [ "$rc" -eq 0 ]; then
		echo " ok ($((SECONDS - start)) s)"
	else
		echo " FAILED ($((SECONDS - start)) s; logs: ${dir%/.}/)"
		failed+=("[$n/$total] $title: exit $rc, see ${dir%/.}/cluster.log and node*.out")
	fi
}

if [ ${#ocfs2_run[@]} -gt 0 ]; then
	run 1 "the cluster forms, exact count; OCFS2 on o2cb, then on rdlock" \
		"$nodes" . "${ocfs2_run[@]}"
	# The images after the guests: fsck.ocfs2 -fn must find nothing.
	for stack in o2cb rdlock; do
		if ocfs2_fsck "$logs/ocfs2/$stack.img" "$logs/ocfs2/fsck-$stack.log"; then
			printf '%s\tclean\n' "$stack" >> "$logs/ocfs2/fsck"
			rm -f "$logs/ocfs2/$stack.img"
		else
			printf '%s\tNOT clean\n' "$stack" >> "$logs/ocfs2/fsck"
			failed+=("[1/$total] OCFS2 on $stack: fsck.ocfs2 -fn found faults, see $logs/ocfs2/fsck-$stack.log and $stack.img")
		fi
	done
else
	run 1 "the cluster forms, exact count of the primitives" "$nodes" . \
		-- sh guest/demo.sh
fi
run 2 "one lock word, every node at once (bakery, CAS spinlock, CQL)" "$nodes" \
	lockbench -- sh guest/lockbench.sh verbs
run 3 "locks by name through /dev/rdlock beside fs/dlm, rdlockctl lock" \
	"$nodes" rdlockbench "${FSDLM_BINS[@]}" -- sh guest/rdlockbench.sh
run 4 "node 0 -> 1 latency against perftest, verbs backend" 2 bench-verbs \
	--bin /usr/bin/ib_atomic_lat -- sh guest/bench.sh verbs
run 5 "node 0 -> 1 latency against perftest, two-sided backend" 2 \
	bench-twosided --bin /usr/bin/ib_atomic_lat -- sh guest/bench.sh twosided
if [ "$total" -eq 6 ]; then
	run 6 "node $((nodes - 1)) killed mid-workload, fenced by dlm_controld" \
		"$nodes" failbench "${FSDLM_BINS[@]}" -- sh guest/failbench.sh
fi

echo
if ! python3 "$ROOT/scripts/demo-report.py" "$logs" 2> "$logs/report.log"; then
	failed+=("the report (scripts/demo-report.py): see $logs/report.log")
fi
echo
echo "demo: logs in $logs/ (node*.out: cluster, exact count and OCFS2; ocfs2/,"
echo "demo:   lockbench/, rdlockbench/, bench-verbs/, bench-twosided/, failbench/: a directory"
echo "demo:   per run)"
if [ ${#failed[@]} -gt 0 ]; then
	for f in "${failed[@]}"; do
		echo "demo: FAILED $f"
	done
	exit 1
fi
