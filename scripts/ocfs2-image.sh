# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ocfs2-image.sh - the host's part of an OCFS2 run, sourced by
# ocfs2-test.sh and demo.sh (bash): make the shared image for a stack and
# check it afterwards.
#
#   ocfs2_mkimage IMG o2cb|rdlock LOG [CLUSTER_NAME]
#       a fresh 256 MiB image at IMG of cluster CLUSTER_NAME (default
#       rdlock), mkfs.ocfs2's output in LOG; sets
#       OCFS2_GUEST_ARGS to the arguments of "guest/ocfs2.sh STACK" after
#       the stack (o2cb: the UUID and the heartbeat's first block; rdlock:
#       none). Returns non-zero, saying why on stderr, if it failed.
#   ocfs2_fsck IMG LOG
#       fsck.ocfs2 -fn IMG into LOG; 0 only if it found nothing wrong.

# Small, so that mkfs and fsck take no time: 4 journals of 16 MiB and
# room for the test's files.
OCFS2_IMAGE_SIZE=256M

ocfs2_mkimage()
{
	local img=$1 stack=$2 mlog=$3 name=${4:-rdlock} disk_stack uuid hb_block

	case $stack in
	o2cb)	disk_stack=o2cb ;;
	# mkfs.ocfs2 knows the user stacks pcmk and cman only; the kernel
	# gives every label but o2cb to the plug-in registered as "user":
	# ours.
	rdlock)	disk_stack=pcmk ;;
	*)	echo "ocfs2_mkimage: stack must be o2cb or rdlock" >&2; return 2 ;;
	esac
	rm -f "$img"
	# 4 KiB blocks and clusters: the guests see 4 KiB logical blocks (see
	# cluster.sh), and no two nodes may write inside one 4 KiB block of
	# the image at the same time. The stack and cluster name go on the
	# disk (o2cb: the cluster ocfs2.sh makes in configfs is "rdlock";
	# rdlock: the plug-in checks it against rdlockctl config --name, which
	# ocfs2.sh sets to "rdlock"). -N 4: one slot (journal) per node, up to
	# 4 nodes.
	if ! truncate -s "$OCFS2_IMAGE_SIZE" "$img" ||
	   ! mkfs.ocfs2 -q -b 4096 -C 4096 -N 4 -J size=16M -L rdlock-test \
		--cluster-stack="$disk_stack" --cluster-name="$name" "$img" \
		> "$mlog" 2>&1; then
		cat "$mlog" >&2
		echo "mkfs.ocfs2 failed" >&2
		return 1
	fi

	OCFS2_GUEST_ARGS=()
	[ "$stack" = o2cb ] || return 0
	# What the guests need for o2cb's heartbeat: the UUID (the region's
	# name) and the first block of the heartbeat system file.
	uuid=$(debugfs.ocfs2 -R stats "$img" |
	       sed -n 's/^\tUUID: *\([0-9A-F]*\)$/\1/p')
	hb_block=$(debugfs.ocfs2 -R 'stat //heartbeat' "$img" |
		   awk '$1 == "##" { getline; print $4; exit }')
	if ! [[ $uuid =~ ^[0-9A-F]{32}$ && $hb_block =~ ^[0-9]+$ ]]; then
		echo "cannot read UUID ($uuid) or heartbeat block ($hb_block) of $img" >&2
		return 1
	fi
	# shellcheck disable=SC2034 # for the script that sourced this
	OCFS2_GUEST_ARGS=("$uuid" "$hb_block")
}

# fsck.ocfs2 -n: read-only, exit status 0 only if it found nothing wrong
# (4: errors left uncorrected). Its output is checked too, in case a
# problem does not change the status.
ocfs2_fsck()
{
	fsck.ocfs2 -fn "$1" > "$2" 2>&1 &&
	grep -q '^All passes succeeded\.$' "$2" &&
	! grep -q '^\[' "$2"
}
