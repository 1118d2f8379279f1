#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ocfs2-test.sh - OCFS2 on one disk shared by every guest of a cluster:
# make the image with mkfs.ocfs2, run selftests/guest/ocfs2.sh on every
# guest (cluster.sh --shared-disk), then check the image with
# fsck.ocfs2 -fn on the host. Stack o2cb is OCFS2's own (o2dlm over TCP);
# stack rdlock is rdlock's plug-in, ocfs2_stack_rdlock.ko, the disk made
# with the user-stack label "pcmk" (Documentation/rdlock/ocfs2.rst).
#
# usage: ocfs2-test.sh [options]
#
#   --kernel debug|stock  guest kernel (default stock)
#   --stack o2cb|rdlock   cluster stack (default o2cb: OCFS2's own)
#   --nodes N             number of guests, 2..4 (default 3)
#   --timeout SEC         cluster.sh's limit (default 600)
#   --payload DIR         payload (default: scripts/payload.sh KERNEL)
#   --files N             files per node and round (default 24)
#   --records N           records per node in the exact count (default 40)
#   --backend B           stack rdlock: rdlock's atomic backend, auto
#                         (default), verbs or twosided
#   --kill                stack rdlock, 3 or 4 nodes: membership from
#                         corosync and dlm_controld, and the last node is
#                         killed mounted, holding a flock; the survivors
#                         replay its journal and go on (ocfs2.sh)
#   --cut                 as --kill, but the last node lives on: its
#                         cluster engine dies, dlm_controld fences it by
#                         cutting its link, and once its link is back it
#                         must learn it was declared down and restart
#                         itself (the plug-in's fence_method=reset); its
#                         console must show the plug-in's line
#   --restart N           stack rdlock, 3 or 4 nodes: membership from
#                         corosync and dlm_controld, and the last node
#                         unmounts, takes rdlock's cluster down and up
#                         again and mounts again, N times (1 to 3), while
#                         the others stay mounted: they declare it down,
#                         go on, and must not lose their lockspace
#   --rolling             with --restart N, N the number of nodes: the
#                         nodes restart in turn, the last node first; the
#                         last to go (node 0) is the last that kept its
#                         lock table since the cluster came up: the others
#                         take over from it (a handover, recovery.rst)
#   --tools               with --kill, --cut or --restart: mount with
#                         ocfs2-tools' mount.ocfs2 (it writes the stack
#                         label and joins through dlm_controld) and
#                         unmount with its ocfs2_hb_ctl as the unmount
#                         helper, as a host with ocfs2-tools does
#   --bench N             first a metadata benchmark, N files per node and
#                         phase (ocfs2.sh; scripts/ocfs2-bench.sh reads it)
#   --flood               stack rdlock, with --bench: the benchmark again
#                         under one unprivileged user's flood of
#                         /dev/rdlock on every node, then once more after
#                         it (ocfs2.sh, flood_bench)
#   --log-dir DIR         cluster.sh's logs, the image and fsck.log
#                         (default: a fresh dir under /tmp)
#
# Prints cluster.sh's output, "ok"/"not ok" for fsck and last
# "ocfs2: P passed, F failed, S skipped" (the guests' results and fsck's).
# Exits non-zero if anything failed. The image stays in the log directory
# (ocfs2.img) for a look with debugfs.ocfs2; it is made afresh every run.

set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/ocfs2-image.sh
. "$SCRIPTS/ocfs2-image.sh"

usage() { rdl_usage '/^#  *(default: a fresh/'; }

kernel=stock
stack=o2cb
nodes=3
timeout=600
payload=
files=24
records=40
bench=0
flood=0
backend=auto
kill=0
death="kill"
restart=0
rolling=0
tools=0
log_dir=

while [ $# -gt 0 ]; do
	case $1 in
	--kernel)	kernel=${2:?}; shift ;;
	--stack)	stack=${2:?}; shift ;;
	--nodes)	nodes=${2:?}; shift ;;
	--timeout)	timeout=${2:?}; shift ;;
	--payload)	payload=${2:?}; shift ;;
	--files)	files=${2:?}; shift ;;
	--records)	records=${2:?}; shift ;;
	--bench)	bench=${2:?}; shift ;;
	--flood)	flood=1 ;;
	--backend)	backend=${2:?}; shift ;;
	--kill)		kill=1 ;;
	--cut)		kill=1 death=cut ;;
	--restart)	restart=${2:?}; shift ;;
	--rolling)	rolling=1 ;;
	--tools)	tools=1 ;;
	--log-dir)	log_dir=${2:?}; shift ;;
	*)		usage ;;
	esac
	shift
done

case $stack in
o2cb)	stack_modules=(--module ocfs2 --module ocfs2_stack_o2cb) ;;
rdlock)	stack_modules=(--module ocfs2) ;;
*)	die "--stack must be o2cb or rdlock" ;;
esac
# mkfs -N 4 below: one slot (journal) per node.
[[ $nodes =~ ^[2-4]$ ]] || die "--nodes must be 2..4"
[[ $files =~ ^[1-9][0-9]*$ && $records =~ ^[1-9][0-9]*$ ]] ||
	die "--files and --records must be positive numbers"
[[ $bench =~ ^[0-9]+$ ]] || die "--bench must be a number"
[ "$flood" -eq 0 ] || { [ "$stack" = rdlock ] && [ "$bench" -gt 0 ]; } ||
	die "--flood needs --stack rdlock and --bench"
[[ $backend =~ ^(auto|verbs|twosided)$ ]] ||
	die "--backend must be auto, verbs or twosided"
[[ $restart =~ ^[0-3]$ ]] || die "--restart must be 0 to 3"
[ "$kill" -eq 0 ] || [ "$restart" -eq 0 ] ||
	die "--restart goes with neither --kill nor --cut"
[ "$rolling" -eq 0 ] || [ "$restart" -eq "$nodes" ] ||
	die "--rolling needs --restart N with N the number of nodes"
engine=()
if [ "$kill" -eq 1 ] || [ "$restart" -gt 0 ]; then
	if [ "$stack" != rdlock ] || [ "$nodes" -lt 3 ]; then
		die "--kill, --cut and --restart need --stack rdlock and 3 or 4 nodes"
	fi
	engine=("${FSDLM_BINS[@]}")
fi
if [ "$tools" -eq 1 ]; then
	[ ${#engine[@]} -gt 0 ] ||
		die "--tools needs --kill, --cut or --restart (dlm_controld)"
	engine+=(--bin /sbin/mount.ocfs2 --bin /sbin/ocfs2_hb_ctl)
fi

"$SCRIPTS/host-setup.sh"
payload=$(rdl_payload "$kernel" "$payload")
log_dir=$(rdl_log_dir "$log_dir" /tmp/rdlock-ocfs2.XXXXXX)
img=$log_dir/ocfs2.img
rm -f "$log_dir/fsck.log"

# The image (mkfs -b 4096, see ocfs2-image.sh); o2cb's heartbeat needs
# the region's UUID and first block, the rdlock stack has none.
ocfs2_mkimage "$img" "$stack" "$log_dir/mkfs.log" || die "cannot make $img"
guest_args=("${OCFS2_GUEST_ARGS[@]}")
log "image $img, stack $stack${guest_args[0]:+: UUID ${guest_args[0]}, heartbeat from block ${guest_args[1]}}"

rc=0
"$SCRIPTS/cluster.sh" --kernel "$kernel" --nodes "$nodes" \
	--timeout "$timeout" --payload "$payload" --log-dir "$log_dir" \
	--shared-disk "$img" "${stack_modules[@]}" \
	--bin /usr/bin/flock ${engine[@]+"${engine[@]}"} \
	-- env RDLOCK_OCFS2_FILES="$files" RDLOCK_OCFS2_RECORDS="$records" \
	RDLOCK_OCFS2_BENCH="$bench" RDLOCK_OCFS2_FLOOD="$flood" \
	RDLOCK_OCFS2_BACKEND="$backend" \
	RDLOCK_OCFS2_KILL="$kill" RDLOCK_OCFS2_DEATH="$death" \
	RDLOCK_OCFS2_RESTART="$restart" RDLOCK_OCFS2_ROLLING="$rolling" \
	RDLOCK_OCFS2_TOOLS="$tools" sh guest/ocfs2.sh "$stack" ${guest_args[@]+"${guest_args[@]}"} || rc=1

line=$(grep '^cluster:' "$log_dir/summary" 2>/dev/null | tail -n 1) || true
if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
	p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
else
	p=0 f=1 s=0
fi
[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1

# --cut: the victim's QEMU quit by itself (host-ctl.py saw it: nodeV.reset)
# after the plug-in said why on its console.
if [ "$death" = cut ]; then
	v=$((nodes - 1))
	why=$(grep -a -m 1 'ocfs2_stack_rdlock: .*: lockspace lost while mounted' \
		"$log_dir/node$v.console" 2>/dev/null) || true
	if [ -f "$log_dir/node$v.reset" ] && [ -n "$why" ]; then
		echo "ok - node $v restarted itself: ${why#*] }"
		p=$((p + 1))
	else
		echo "not ok - node $v did not restart itself through the plug-in (reset mark: $([ -f "$log_dir/node$v.reset" ] && echo yes || echo no))"
		f=$((f + 1))
	fi
fi

if ocfs2_fsck "$img" "$log_dir/fsck.log"; then
	echo "ok - fsck.ocfs2 -fn: clean"
	p=$((p + 1))
else
	echo "not ok - fsck.ocfs2 -fn: not clean (see $log_dir/fsck.log)"
	sed 's/^/#   /' "$log_dir/fsck.log" | tail -n 30
	f=$((f + 1))
fi
echo "ocfs2: $p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
