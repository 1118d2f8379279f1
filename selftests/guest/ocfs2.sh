#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# OCFS2 on a disk every guest shares (cluster.sh --shared-disk), run at once
# on every node; scripts/ocfs2-test.sh makes the image, runs this and then
# fsck.ocfs2 on the host:
#   ocfs2.sh o2cb UUID HB_BLOCK
#   ocfs2.sh rdlock
# UUID is the file system's (32 hex digits, as debugfs.ocfs2 prints it),
# HB_BLOCK the first block of its heartbeat system file (4 KiB blocks).
#
# Stack o2cb is OCFS2's own: o2nm nodes in configfs, o2hb disk heartbeat,
# o2net over eth0 and o2dlm. It is set up here by hand, as the o2cb init
# script and mount.ocfs2 would: mount.ocfs2 and ocfs2_hb_ctl guard the
# heartbeat region with SysV semaphores, which the debug kernel does not
# have.
#
# Stack rdlock is rdlock's plug-in, ocfs2_stack_rdlock.ko: the rdlock
# cluster up on every node, the plug-in loaded (it registers as OCFS2's
# "user" stack), "pcmk" (the disk's stack label, mkfs.ocfs2 accepts no
# other for a user stack) written to /sys/fs/ocfs2/cluster_stack, and
# mount -t ocfs2 -o cluster_stack=pcmk: no daemon, no heartbeat, the
# plug-in opens the lockspace (Documentation/rdlock/ocfs2.rst). With
# RDLOCK_OCFS2_TOOLS=1 (and dlm_controld: KILL or RESTART) ocfs2-tools'
# mount.ocfs2 mounts instead, writing the label itself, and its
# ocfs2_hb_ctl is the unmount helper, as on a host with ocfs2-tools.
#
# Every node mounts; creates, writes, renames and deletes files in one
# shared directory at once; reads every other node's files and must see
# their contents, also after they were rewritten in place (cached pages
# must go); flock(2) must exclude across nodes; each node appends
# RDLOCK_OCFS2_RECORDS records of 4096 bytes to one file and bumps a counter
# file under an exclusive flock, and the file must end with exactly
# nodes x RECORDS intact records whose counter values are 0, 1, ... each
# once. Then every node unmounts and takes the stack down. Nodes meet at
# barriers on TCP ports 7780 and up (lib.sh rdl_signal), or
# RDLOCK_OCFS2_PORT and up.
#
# The disk is RDLOCK_OCFS2_DEV, default RDLOCK_SHARED_DISK (/dev/vda). A
# second run in the same boot (guest/seq.sh, both stacks on two disks as in
# scripts/demo.sh) needs a disk and barrier ports of its own: a barrier's
# listener lives until power-off.
#
# RDLOCK_OCFS2_BACKEND (stack rdlock): auto (default), verbs or twosided,
# rdlock's backend= parameter; the run checks the cluster agreed on it.
#
# RDLOCK_OCFS2_KILL=1 (stack rdlock, 3 or more nodes, corosync and
# dlm_controld in the guest): rdlock's membership from them, and before
# the records the last node dies mounted (kill_phase below); the records
# are then the survivors'. RDLOCK_OCFS2_DEATH says how: kill (default, its
# power cut) or cut (cut off alive, then told: it must fence itself).
#
# RDLOCK_OCFS2_RESTART=N (stack rdlock, 3 or more nodes, corosync and
# dlm_controld in the guest, not with KILL): membership from them, and
# before the records the last node restarts rdlock N times, as an admin
# restarting its service would (restart_phase below); the others stay
# mounted and must not lose their lockspace. With RDLOCK_OCFS2_ROLLING=1
# (N the number of nodes) every node restarts in turn, the last first:
# node 0, the last, is the last node keeping its lock table of the epoch,
# and the others take over from it (a handover, recovery.rst).
#
# With RDLOCK_OCFS2_BENCH=N, before that workload, a metadata benchmark
# (scripts/ocfs2-bench.sh): every node at once creates N empty files in
# the shared directory, stats every node's (rdlock-stat-bench), removes
# its own (one rm); then the same in a directory of its own (the stats 200
# times over, and a control of as many on tmpfs), three rounds. Each phase
# starts at a barrier; a node prints "# bench node ID PHASE N_OPS
# MILLISECONDS", for the private phases its operations and time over the
# three rounds, each also as a JSON line ("#json {...}", which
# scripts/demo-report.py reads), and after the benchmark rdlock's counters
# ("# prof").

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

STACK=$1
UUID=$2
HB_BLOCK=$3
FILES=${RDLOCK_OCFS2_FILES:-24}
RECORDS=${RDLOCK_OCFS2_RECORDS:-40}
# Files per node and phase of the metadata benchmark; 0: none.
BENCH=${RDLOCK_OCFS2_BENCH:-0}
BACKEND=${RDLOCK_OCFS2_BACKEND:-auto}
KILL=${RDLOCK_OCFS2_KILL:-0}
DEATH=${RDLOCK_OCFS2_DEATH:-kill}
RESTART=${RDLOCK_OCFS2_RESTART:-0}
ROLLING=${RDLOCK_OCFS2_ROLLING:-0}
TOOLS=${RDLOCK_OCFS2_TOOLS:-0}
# Membership from corosync and dlm_controld: with KILL or RESTART.
ENGINE=$((KILL + RESTART))
# The nodes that append records: with KILL, the survivors 0 .. N - 2.
REC_NODES=$((RDLOCK_NR_NODES - KILL))
BENCH_PRIVATE_STAT_PASSES=200
BENCH_ROUNDS=3
# With the benchmark on rdlock: the same again under one unprivileged
# user's flood, and once more after it (flood_bench).
FLOOD=${RDLOCK_OCFS2_FLOOD:-0}
WAIT=${RDLOCK_OCFS2_WAIT:-150}
DEV=${RDLOCK_OCFS2_DEV:-$RDLOCK_SHARED_DISK}
# Barrier $1 listens on PORT + $1; barriers 0 to 36 (24 + 4 x BENCH_ROUNDS),
# the victim's last signal (KILL_GO, 37) and RESTART's leaves (LEAVE_B, 38);
# with FLOOD the benchmark's runs under the flood (40 to 56) and after it
# (60 to 76), and the flood's own (FLOOD_B, 80 to 82): BENCH_ROUNDS must
# stay at most 3 for those not to meet.
PORT=${RDLOCK_OCFS2_PORT:-7780}
MNT=/mnt/ocfs2
DIR=$MNT/shared
CLUSTER=rdlock
CFS=/sys/kernel/config/cluster
# o2net's port on every node; the barriers use PORT (7780) and up.
O2NET_PORT=7777
ID=$RDLOCK_NODE_ID

usage() {
	echo "usage: $0 o2cb UUID HB_BLOCK | $0 rdlock" >&2
	exit 2
}

case "$STACK" in
o2cb)
	case "$UUID" in
	'' | *[!0-9A-F]*) usage ;;
	esac
	[ ${#UUID} -eq 32 ] || usage
	case "$HB_BLOCK" in
	'' | *[!0-9]*) usage ;;
	esac
	MOUNT_OPTS=heartbeat=local
	;;
rdlock)
	[ $# -eq 1 ] || usage
	# The disk's label (mkfs.ocfs2 --cluster-stack=pcmk).
	MOUNT_OPTS=cluster_stack=pcmk
	# The disk's cluster name, which the plug-in checks (rdl_config).
	RDL_CLUSTER_NAME=$CLUSTER
	;;
*)	usage ;;
esac
if [ "$ENGINE" -ne 0 ] &&
   { [ "$STACK" != rdlock ] || [ "${RDLOCK_NR_NODES:-0}" -lt 3 ]; }; then
	echo "RDLOCK_OCFS2_KILL and _RESTART need stack rdlock and 3 or more nodes" >&2
	exit 2
fi
if [ "$FLOOD" -ne 0 ] && { [ "$STACK" != rdlock ] || [ "$BENCH" -eq 0 ]; }; then
	echo "RDLOCK_OCFS2_FLOOD needs stack rdlock and RDLOCK_OCFS2_BENCH" >&2
	exit 2
fi
if [ "$KILL" -ne 0 ] && [ "$RESTART" -ne 0 ]; then
	echo "RDLOCK_OCFS2_KILL and _RESTART: one or the other" >&2
	exit 2
fi
# Its barriers (restart_phase) end below the benchmark's.
case $RESTART in
[0-3]) ;;
*) echo "RDLOCK_OCFS2_RESTART must be 0 to 3" >&2; exit 2 ;;
esac
if [ "$ROLLING" -ne 0 ] && [ "$RESTART" -ne "${RDLOCK_NR_NODES:-0}" ]; then
	echo "RDLOCK_OCFS2_ROLLING needs RDLOCK_OCFS2_RESTART the number of nodes" >&2
	exit 2
fi
case $DEATH in
kill) ;;
cut) RDL_FENCE_METHOD="link" ;;
*) echo "RDLOCK_OCFS2_DEATH must be kill or cut" >&2; exit 2 ;;
esac

# Barrier number $1: every node reaches it or this one gives up after WAIT
# seconds. Each barrier has a port of its own (PORT + $1), so that a node
# that skips some after a failure still meets the others at the last ones.
# With $2 = last, a peer that no longer answers ping counts as arrived:
# past the last barrier a node powers off, perhaps before a slower one
# has seen it there; it got there, since it ran its command to the end.
barrier() {
	b_port=$((PORT + $1))
	# The listener lives to the end: it must not keep a file of the
	# mount open (node 0 holds flock's fd 7 across barriers).
	rdl_signal "$b_port" 7>&- 8>&-
	b_j=0
	while [ "$b_j" -lt "$RDLOCK_NR_NODES" ]; do
		if [ "$b_j" -ne "$ID" ]; then
			if [ "$2" = last ] && [ "$b_j" -ne "${DEAD:--1}" ]; then
				b_left=$WAIT
				b_addr=$(rdl_node_addr "$b_j")
				until timeout 3 nc -w 1 "$b_addr" "$b_port" \
				      </dev/null >/dev/null 2>&1; do
					ping -c 1 -W 1 "$b_addr" >/dev/null 2>&1 ||
						break
					b_left=$((b_left - 1))
					[ "$b_left" -gt 0 ] || break
					sleep 1
				done
				[ "$b_left" -gt 0 ] && b_j=$((b_j + 1)) && continue
			elif [ "$b_j" -eq "${DEAD:--1}" ] ||
			     rdl_wait_signal "$b_j" "$b_port" "$WAIT"; then
				b_j=$((b_j + 1))
				continue
			fi
			echo "# node $ID: node $b_j not at barrier $1 within $WAIT s"
			return 1
		fi
		b_j=$((b_j + 1))
	done
}

# echo VALUE > configfs attribute $1, saying which one failed.
cfs_set() {
	echo "$2" > "$1" || { echo "# node $ID: cannot write $2 to $1"; return 1; }
}

# The o2cb cluster in configfs, as o2cb's init script writes it from
# /etc/ocfs2/cluster.conf: every node with its number, address and o2net
# port, then "local" on this node's own entry, which makes o2net listen.
o2cb_cluster_up() {
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config || return 1
	mkdir "$CFS/$CLUSTER" || return 1
	u_j=0
	while [ "$u_j" -lt "$RDLOCK_NR_NODES" ]; do
		u_n=$CFS/$CLUSTER/node/node$u_j
		mkdir "$u_n" &&
		cfs_set "$u_n/ipv4_port" "$O2NET_PORT" &&
		cfs_set "$u_n/ipv4_address" "$(rdl_node_addr "$u_j")" &&
		cfs_set "$u_n/num" "$u_j" || return 1
		u_j=$((u_j + 1))
	done
	cfs_set "$CFS/$CLUSTER/node/node$ID/local" 1
}

# Local disk heartbeat, as mount.ocfs2 starts it: a region named after the
# file system's UUID over its heartbeat file, one 4 KiB block (the disk's
# logical block) per node slot, 255 slots. Writing the file descriptor of
# the open device to "dev" starts the heartbeat thread and returns once the
# region is steady.
o2cb_heartbeat_up() {
	h_r=$CFS/$CLUSTER/heartbeat/$UUID
	mkdir "$h_r" &&
	cfs_set "$h_r/block_bytes" 4096 &&
	cfs_set "$h_r/start_block" "$HB_BLOCK" &&
	cfs_set "$h_r/blocks" 255 || return 1
	exec 5<>"$DEV" || return 1
	cfs_set "$h_r/dev" 5
	h_rc=$?
	exec 5<&-
	return $h_rc
}

# At unmount the kernel runs "ocfs2_hb_ctl -K -u UUID" (the path in
# /proc/sys/fs/ocfs2/nm/hb_ctl_path) to stop the heartbeat: this helper does
# what ocfs2_hb_ctl does, without its semaphores.
HB_CTL=/tmp/ocfs2-hb-ctl
o2cb_hb_ctl_install() {
	cat > "$HB_CTL" <<-EOF
	#!/bin/sh
	# ocfs2-hb-ctl -K -u UUID: stop UUID's heartbeat
	[ "\$1 \$2" = "-K -u" ] || exit 1
	echo "ocfs2-hb-ctl: stopping heartbeat \$3" > /dev/kmsg
	rmdir "$CFS/$CLUSTER/heartbeat/\$3"
	EOF
	chmod 755 "$HB_CTL" &&
	cfs_set /proc/sys/fs/ocfs2/nm/hb_ctl_path "$HB_CTL"
}

o2cb_heartbeat_gone() {
	[ ! -e "$CFS/$CLUSTER/heartbeat/$UUID" ]
}

o2cb_cluster_down() {
	d_j=0
	while [ "$d_j" -lt "$RDLOCK_NR_NODES" ]; do
		rmdir "$CFS/$CLUSTER/node/node$d_j" || return 1
		d_j=$((d_j + 1))
	done
	rmdir "$CFS/$CLUSTER"
}

# The classic stack, as o2cb's init script selects it: a run of the
# rdlock stack earlier in this boot left "pcmk" there, and the stack glue
# refuses a disk whose stack is not the selected one.
o2cb_select() {
	cfs_set /sys/fs/ocfs2/cluster_stack o2cb
}

o2cb_up() {
	rdl_step "o2cb: cluster_stack o2cb" o2cb_select &&
	rdl_step "o2cb: cluster $CLUSTER, $RDLOCK_NR_NODES nodes, o2net port $O2NET_PORT" o2cb_cluster_up &&
	rdl_step "o2cb: unmount helper (hb_ctl_path)" o2cb_hb_ctl_install &&
	rdl_step "o2cb: disk heartbeat $UUID from block $HB_BLOCK" o2cb_heartbeat_up
}

# Stack rdlock. The stack glue loads "ocfs2_stack_user" (fs/dlm) only if
# no plug-in named "user" is registered; ours is loaded first, and
# modprobe is told never to load the other, which would take fs/dlm's
# place on the next mount after ours is removed.
LEAVE_GROUP=/tmp/ocfs2-leave-group
# shellcheck disable=SC2086 # the plug-in's parameters, split on purpose
rdlock_plugin_setup() {
	mkdir -p /etc/modprobe.d &&
	echo "install ocfs2_stack_user /bin/false" > /etc/modprobe.d/ocfs2-rdlock.conf &&
	insmod "$RDL/modules/ocfs2_stack_rdlock.ko" $RDLOCK_OCFS2_STACK_PARAMS &&
	{ [ "$TOOLS" -eq 1 ] || cfs_set /sys/fs/ocfs2/cluster_stack pcmk; }
}

# Mount the disk: mount(2) with the stack's options, or mount.ocfs2 (TOOLS).
ocfs2_mount() {
	if [ "$TOOLS" -eq 1 ]; then
		mount.ocfs2 "$DEV" "$MNT" &&
		# It wrote the disk's label as the running stack.
		[ "$(cat /sys/fs/ocfs2/cluster_stack)" = pcmk ]
	else
		mount -t ocfs2 -o "$MOUNT_OPTS" "$DEV" "$MNT"
	fi
}

# Every unmount helper run went well: the kernel could run it (it logs
# only a helper it cannot run) and each exited 0 (HB_STATUS, written by
# the helper or the wrapper of ocfs2_hb_ctl); with TOOLS, it ran.
HB_STATUS=/tmp/ocfs2-hb-ctl.status
helper_ok() {
	! dmesg | grep -q "ocfs2: Error .* running user helper" &&
	{ [ ! -e "$HB_STATUS" ] || ! grep -qv '^0$' "$HB_STATUS"; } &&
	{ [ "$TOOLS" -eq 0 ] || [ -s "$HB_STATUS" ]; }
}

# At unmount the kernel runs "HB_CTL -K -u UUID" to leave the file
# system's group (ocfs2_controld's job on a fs/dlm cluster); the plug-in
# closed its lockspace already, so there is nothing to do but say so.
rdlock_leave_group_install() {
	if [ "$TOOLS" -eq 1 ]; then
		# ocfs2-tools' (/sbin/ocfs2_hb_ctl on a host; cluster.sh
		# puts it elsewhere here), its exit status kept.
		l_hb=$(command -v ocfs2_hb_ctl) || return 1
		cat > "$LEAVE_GROUP" <<-EOF
		#!/bin/sh
		$l_hb "\$@"
		l_rc=\$?
		echo "\$l_rc" >> $HB_STATUS
		exit "\$l_rc"
		EOF
		chmod 755 "$LEAVE_GROUP" &&
		cfs_set /proc/sys/fs/ocfs2/nm/hb_ctl_path "$LEAVE_GROUP"
		return
	fi
	cat > "$LEAVE_GROUP" <<-EOF
	#!/bin/sh
	# ocfs2-leave-group -K -u UUID: the rdlock plug-in needs nothing
	[ "\$1 \$2" = "-K -u" ] || { echo 1 >> $HB_STATUS; exit 1; }
	echo 0 >> $HB_STATUS
	echo "ocfs2-leave-group: \$3 left" > /dev/kmsg
	EOF
	chmod 755 "$LEAVE_GROUP" &&
	cfs_set /proc/sys/fs/ocfs2/nm/hb_ctl_path "$LEAVE_GROUP"
}

# Sized for a file system (ocfs2.rst, "Lockspace size"): a DLM lockspace
# of 196608 slots (5461 names per node with 3 nodes, placement taking the
# rest) in a 2 MiB table. With 1365 names per node, 200 files per node
# and phase filled it in the benchmark's first phase (2 runs of 3) and a
# create waited for room for good.
# The largest table: room for the flood's DLM lockspace (flood_bench)
# beside the mount's, and the same table with or without it.
RDLOCK_OCFS2_PARAMS="table_slots=524288 dlm_slots=196608"
# The plug-in's (ocfs2.rst, "Hold time").
RDLOCK_OCFS2_STACK_PARAMS=""

# The backend the cluster agreed on is the one asked for, if one was.
rdlock_backend_agreed() {
	b_agreed=$(sed -n 's/^backend: //p' /sys/kernel/debug/rdlock/cluster)
	echo "# node $ID: atomic backend $b_agreed (asked for $BACKEND)"
	[ "$BACKEND" = auto ] || [ "$b_agreed" = "$BACKEND" ]
}

# With KILL or RESTART, membership from corosync and dlm_controld, which
# fences through the host (member.sh): the cluster comes up as a member
# once they run.
rdlock_cluster_up() {
	if [ "$ENGINE" -eq 0 ]; then
		rdl_start "$RDLOCK_OCFS2_PARAMS backend=$BACKEND"
		return
	fi
	# shellcheck disable=SC2086 # the parameters, split on purpose
	rdl_step "insmod rdlock.ko $RDLOCK_OCFS2_PARAMS backend=$BACKEND membership=dlm" \
		insmod "$RDL/modules/rdlock.ko" $RDLOCK_OCFS2_PARAMS \
		"backend=$BACKEND" membership=dlm &&
	rdl_step "insmod rdlock_test.ko" insmod "$RDL/modules/rdlock_test.ko" &&
	rdl_step "configure node $ID of $RDLOCK_NR_NODES" rdl_config &&
	rdl_step "corosync and dlm_controld, fencing by the host${RDL_FENCE_METHOD:+ ($RDL_FENCE_METHOD)}" \
		rdl_dlm_start fence &&
	rdl_step "cluster up, a member" rdlockctl up &&
	rdl_step "cluster ready" rdlockctl wait --timeout 120
}

rdlock_up() {
	rdlock_cluster_up &&
	rdl_step "rdlock: atomic backend ($BACKEND)" rdlock_backend_agreed &&
	rdl_step "rdlock: plug-in loaded, cluster_stack pcmk" rdlock_plugin_setup &&
	rdl_step "rdlock: unmount helper (hb_ctl_path)" rdlock_leave_group_install
}

# dlmglue asks for a new inode's locks with DLM_LKF_LOCAL: the plug-in
# passes it on, and each such lock is granted at once and then taken, its
# name new (dlm-api.rst, "New resources (LOCAL)").
local_grants_ok() {
	awk '$1 == "local_grants:" { g = $2 } $1 == "local_lost:" { l = $2 }
	     $1 == "local_known:" { k = $2 }
	     END { print "# node '"$ID"': local_grants " g " local_lost " l \
			 " local_known " k
		   exit !(g > 0 && l == 0 && k == 0) }' /sys/kernel/debug/rdlock/dlm
}

# The mount really runs on the plug-in: stack "user" active, our module
# pinned by it, the connection logged.
rdlock_in_use() {
	u_plugin=$(cat /sys/fs/ocfs2/active_cluster_plugin) &&
	u_refs=$(awk '$1 == "ocfs2_stack_rdlock" { print $3 }' "$RDL_PROC_MODULES") || return 1
	if [ "$u_plugin" != user ] || [ "${u_refs:-0}" -lt 1 ]; then
		echo "# node $ID: active plug-in '$u_plugin', ocfs2_stack_rdlock refs '$u_refs'"
		return 1
	fi
	dmesg | grep -q "ocfs2_stack_rdlock: .* node $ID connected" &&
	# The disk's cluster name was compared with this cluster's.
	! dmesg | grep -q "ocfs2_stack_rdlock: .* not checked"
}

# rdlockctl ls shows the mount's lockspace (a kernel user's, dlmh.HASH
# for its 32-digit UUID, with the UUID the plug-in connected as its DLM
# name), and rdlockctl locks lists this node's OCFS2 locks in it by their
# names: the superblock's lock ("S", pad, block 2), granted, among them.
ocfs2_locks_listed() {
	ol_uuid=$(dmesg | sed -n "s/.*ocfs2_stack_rdlock: \([0-9A-F]*\): node $ID connected.*/\1/p" |
		  tail -n 1)
	ol_ls=$(rdlockctl ls | awk -v u="$ol_uuid" '$2 == "kernel" &&
		$1 ~ /^dlmh[.]/ && $9 == u { print $1 }')
	if [ -z "$ol_uuid" ] || [ -z "$ol_ls" ]; then
		echo "# node $ID: UUID '$ol_uuid'"
		rdlockctl ls | sed 's/^/#   /'
		return 1
	fi
	rdlockctl locks "$ol_ls" > /tmp/ocfs2-locks || return 1
	head -n 4 /tmp/ocfs2-locks | sed "s/^/# node $ID: $ol_ls: /"
	awk -v id="$ID" '$1 == "S000000000000000000000200000000" &&
			 $2 == id && $3 == "granted" { f = 1 } END { exit !f }' \
		/tmp/ocfs2-locks
}

# The benchmark's clock, in milliseconds: busybox's adjtimex reads the
# time to the microsecond (its date has no sub-second format, and
# /proc/uptime's centiseconds made a 25-file private phase 1 or 2 ticks).
now_ms() {
	# shellcheck disable=SC2046 # two numbers, split on purpose
	set -- $(adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 }
				 END { print s, u }')
	echo $(($1 * 1000 + $2 / 1000))
}

# One benchmark phase's time: barrier $1, then "$2" timed; its
# milliseconds in p_ms.
bench_time() {
	# The nodes leave the barrier within 50 ms of each other, not 1 s: a
	# node that starts a phase alone has the shared lock to itself.
	RDL_SIGNAL_POLL=0.05
	barrier "$1" || return 1
	unset RDL_SIGNAL_POLL
	p_t=$(now_ms)
	"$2" || return 1
	p_ms=$(($(now_ms) - p_t))
}

# One benchmark figure: phase $1, $2 operations in $3 milliseconds, for
# scripts/ocfs2-bench.sh and, as one JSON object, scripts/demo-report.py.
bench_figure() {
	echo "# bench${BENCH_RUN:+-$BENCH_RUN} node $ID $1 $2 $3"
	if [ -z "$BENCH_RUN" ]; then
		rdl_json_obj tool ocfs2.sh stack "$STACK" node "$ID" phase "$1" \
			ops "$2" ms "$3"
	else
		rdl_json_obj tool ocfs2.sh stack "$STACK" run "$BENCH_RUN" \
			node "$ID" phase "$1" ops "$2" ms "$3"
	fi
}

# One benchmark phase: barrier $1, then "$3" timed as phase $2 with $4
# operations.
bench_phase() {
	bench_time "$1" "$3" || return 1
	bench_figure "$2" "$4" "$p_ms"
	bench_prof "$2"
}

# The sum of the numbers $@.
add_up() {
	m_s=0
	for m_n in "$@"; do
		m_s=$((m_s + m_n))
	done
	echo "$m_s"
}

# rdlock's counters after a phase, for profiles (the difference between
# two phases' is the later phase's): "# prof node ID PHASE FILE NAME: N".
# Nothing on o2cb. They go to a file until the benchmark ends
# (bench_prof_show): some 13 KB a phase through the guest's emulated serial
# port cost the nodes still timing a phase some of their host CPU, in the
# rdlock runs only.
BENCH_PROF=/tmp/ocfs2-bench-prof
bench_prof() {
	for f in /sys/kernel/debug/rdlock/dlm /sys/kernel/debug/rdlock/protocols \
		 /sys/kernel/debug/rdlock/lockspaces/dlm*/stats; do
		[ -r "$f" ] || continue
		sed "s|^|# prof node $ID $1 ${f#/sys/kernel/debug/rdlock/} |" "$f"
	done >> "$BENCH_PROF"
	return 0
}

bench_prof_show() {
	[ -r "$BENCH_PROF" ] || return 0
	cat "$BENCH_PROF" && rm -f "$BENCH_PROF"
}

# $BENCH files $BDIR/$BPFX1, 2, ... made, stat'ed, removed.
bench_create() {
	c_i=1
	while [ "$c_i" -le "$BENCH" ]; do
		: > "$BDIR/$BPFX$c_i" || return 1
		c_i=$((c_i + 1))
	done
}

# Every entry of $BDIR read once and lstat'ed $BENCH_PASSES times over by
# one process (each lstat(2) takes the inode's cluster lock at PR), as
# mdtest stats; $BENCH_EXPECT files.
bench_stat() {
	rdlock-stat-bench --passes "$BENCH_PASSES" --expect "$BENCH_EXPECT" \
		"$BDIR" > /dev/null
}

# One rm(1) for them all, as mdtest removes from one process: an exec per
# file took longer under TCG than the unlink, on either stack.
bench_remove() {
	seq 1 "$BENCH" | sed "s|^|$BDIR/$BPFX|" | xargs rm
}

# The private phases, BENCH_ROUNDS rounds of create, stat, the control
# and remove from barrier $1 on; each node reports each phase's operations
# and time over all rounds. Three TCG guests share two host cores, and
# which of them the host runs decides much of a one-second phase's time;
# and the first round differs from the later ones, which reuse the inodes
# (and lock names) the removes freed: both kinds count.
#
# The control, tmpfs-stat, is private-stat's lstat passes over as many
# files in a tmpfs directory, all nodes at once right after it: no OCFS2,
# no cluster lock. It measures what the guests' CPUs give a stat loop in
# this boot, so a private-stat ratio that its control shares is the
# guests', not the cluster stack's.
bench_private() {
	r_b=$1 r_i=1 r_create='' r_stat='' r_ctl='' r_remove=''
	while [ "$r_i" -le "$BENCH_ROUNDS" ]; do
		bench_time "$r_b" bench_create || return 1
		r_create="$r_create $p_ms"
		bench_prof "private-create.$r_i"
		bench_time $((r_b + 1)) bench_stat || return 1
		r_stat="$r_stat $p_ms"
		bench_prof "private-stat.$r_i"
		bench_in_control bench_time $((r_b + 2)) bench_stat || return 1
		r_ctl="$r_ctl $p_ms"
		bench_time $((r_b + 3)) bench_remove || return 1
		r_remove="$r_remove $p_ms"
		bench_prof "private-remove.$r_i"
		r_b=$((r_b + 4)) r_i=$((r_i + 1))
	done
	# shellcheck disable=SC2086 # lists of numbers, split on purpose
	{
		r_p="# bench${BENCH_RUN:+-$BENCH_RUN} rounds node $ID"
		echo "$r_p private-create$r_create"
		echo "$r_p private-stat$r_stat"
		echo "$r_p tmpfs-stat$r_ctl"
		echo "$r_p private-remove$r_remove"
		bench_figure private-create $((BENCH * BENCH_ROUNDS)) "$(add_up $r_create)"
		bench_figure private-stat $((BENCH * BENCH_PASSES * BENCH_ROUNDS)) "$(add_up $r_stat)"
		bench_figure tmpfs-stat $((BENCH * BENCH_PASSES * BENCH_ROUNDS)) "$(add_up $r_ctl)"
		bench_figure private-remove $((BENCH * BENCH_ROUNDS)) "$(add_up $r_remove)"
	}
}

# "$@" with $BDIR the control's directory.
bench_in_control() {
	i_dir=$BDIR BDIR=$BENCH_CONTROL
	"$@"
	i_rc=$?
	BDIR=$i_dir
	return $i_rc
}

# The control's $BENCH empty files in a tmpfs of its own.
bench_control_setup() {
	BENCH_CONTROL=/tmp/ocfs2-bench-control.$$
	mkdir -p "$BENCH_CONTROL" &&
	mount -t tmpfs -o size=1m tmpfs "$BENCH_CONTROL" &&
	bench_in_control bench_create
}

bench_control_gone() {
	umount "$BENCH_CONTROL" && rmdir "$BENCH_CONTROL"
}

# Shared phases: every node's files NODE.I in one directory; private
# ones: I in the node's own. Operations are counted per node. bench BASE
# [RUN]: barriers BASE to BASE + 4 + 4 x BENCH_ROUNDS; RUN names a run
# beside the benchmark (flood, after: BENCH_RUN), in directories of its
# own.
bench() {
	BENCH_RUN=${2:-}
	b_dir=$MNT/bench${BENCH_RUN:+-$BENCH_RUN}
	if [ "$ID" -eq 0 ]; then
		mkdir "$b_dir" || return 1
	fi
	mkdir "$b_dir.$ID" || return 1
	barrier "$1" || return 1
	bench_prof "${BENCH_RUN:+$BENCH_RUN.}start"
	BDIR=$b_dir BPFX=$ID. BENCH_EXPECT=$((BENCH * RDLOCK_NR_NODES))
	BENCH_PASSES=1
	bench_phase $(($1 + 1)) shared-create bench_create "$BENCH" &&
	bench_phase $(($1 + 2)) shared-stat bench_stat "$BENCH_EXPECT" &&
	bench_phase $(($1 + 3)) shared-remove bench_remove "$BENCH" || return 1
	BDIR=$b_dir.$ID BPFX='' BENCH_EXPECT=$BENCH
	# Its own files' locks stay cached on a node: one pass of cached
	# lstats takes about a millisecond, too short to time under TCG.
	BENCH_PASSES=$BENCH_PRIVATE_STAT_PASSES
	bench_control_setup &&
	bench_private $(($1 + 4)) &&
	bench_control_gone &&
	barrier $(($1 + 4 + 4 * BENCH_ROUNDS))
}

# The benchmark under a flood (RDLOCK_OCFS2_FLOOD=1, issue of the users
# of /dev/rdlock that must not wear the service down): one unprivileged
# user (uid FLOOD_USER, in /dev/rdlock's group as the packages' rdlock
# group would have it) on every node, in a DLM lockspace of its own, holds
# names until user_locks_max refuses one (ENOLCK), keeps FLOOD_WAITERS
# requests waiting for good on the other nodes' names and kills a waiting
# child every FLOOD_KILL_MS ms (rdlock-flood). Meanwhile another user's
# TRY locks in the same lockspace must all be granted, the flooding user
# must never hold more than user_locks_max, and OCFS2 runs the benchmark
# (run "flood"); then the flood stops, the kernel lets go of all it asked
# for, and the benchmark runs once more (run "after", the quiet run it is
# compared with: both reuse the inodes of the runs before).
FLOOD_LS=flood
FLOOD_USER=1001
FLOOD_PROBER=1002
FLOOD_GROUP=1001
FLOOD_LOCKS=2048
FLOOD_WAITERS=200
FLOOD_KILL_MS=1000
FLOOD_B=80
FLOOD_OUT=/tmp/rdlock-flood.out
FLOOD_PROBE_OUT=/tmp/rdlock-flood-probe.out
FLOOD_PID=
FLOOD_PROBE_PID=
USER_LOCKS_MAX=/sys/module/rdlock/parameters/user_locks_max

# The value of KEY in the last "#json" figure FIGURE of file $1.
flood_json() {
	sed -n "s/.*\"figure\": \"$2\".*\"$3\": \"\{0,1\\}\([^\",}]*\).*/\1/p" "$1" |
		tail -n 1
}

# The locks charged to the flooding user here (debugfs "users"), 0 if none.
flood_user_locks() {
	awk -v u="$FLOOD_USER" '$1 == "user" && $2 == u && $3 == "locks:" {
		n = $4 } END { print n + 0 }' /sys/kernel/debug/rdlock/users
}

# Unreclaimable slab, KiB: what the kernel keeps for the flood.
slab_kb() {
	awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo
}

flood_setup() {
	FLOOD_LOCKS_WAS=$(cat "$USER_LOCKS_MAX") &&
	echo "$FLOOD_LOCKS" > "$USER_LOCKS_MAX" &&
	chgrp "$FLOOD_GROUP" /dev/rdlock && chmod 0660 /dev/rdlock &&
	rdlockctl ls-create "$FLOOD_LS" --dlm --gid "$FLOOD_GROUP" --mode 0660 &&
	FLOOD_SLAB0=$(slab_kb) FLOOD_SEEN=0
}

# The flooding user holds "hot.ID" and names until refused: exactly
# user_locks_max locks.
flood_fill() {
	: > "$FLOOD_OUT"
	rdlock-flood --uid "$FLOOD_USER" --gid "$FLOOD_GROUP" \
		--lockspace "$FLOOD_LS" --node "$ID" --nodes "$RDLOCK_NR_NODES" \
		--names $((2 * FLOOD_LOCKS)) --waiters "$FLOOD_WAITERS" \
		--kill-ms "$FLOOD_KILL_MS" > "$FLOOD_OUT" 2>&1 &
	FLOOD_PID=$!
	flood_said "$FLOOD_OUT" "$FLOOD_PID" filled 300 || return 1
	grep '^#json ' "$FLOOD_OUT"
	f_names=$(flood_json "$FLOOD_OUT" fill names)
	f_refused=$(flood_json "$FLOOD_OUT" fill refused)
	echo "# node $ID: flood filled: $f_names names, then $f_refused"
	[ "$f_names" = $((FLOOD_LOCKS - 1)) ] && [ "$f_refused" = ENOLCK ]
}

# rdlock-flood (output $1, pid $2) printed line $3, or it is gone: true
# once it did, false while it runs, and a message once it is gone
# (rdl_poll stops then).
flood_up() {
	grep -qx "$3" "$1" && return 0
	kill -0 "$2" 2>/dev/null && return 1
	echo "# node $ID: rdlock-flood exited before \"$3\""
	return 0
}

# rdlock-flood (output $1, pid $2) printed line $3 within $4 seconds; else
# what it printed.
flood_said() {
	rdl_poll "$4" flood_up "$1" "$2" "$3" && grep -qx "$3" "$1" && return 0
	cat "$1"
	return 1
}

# This node's waits in the flood's lockspace (rdlockctl locks --local).
flood_waiting() {
	rdlockctl locks --local "$FLOOD_LS" |
		awk -v id="$ID" '$2 == id && $3 == "waiting"' | wc -l
}

# Every waiter of the flood waits here (read anew at each poll).
flood_all_waiting() {
	[ "$(flood_waiting)" -ge "$FLOOD_WAITERS" ]
}

# Nothing is charged to the flooding user here any more.
flood_user_clear() {
	[ "$(flood_user_locks)" -eq 0 ]
}

flood_sample() {
	f_n=$(flood_user_locks)
	[ "$f_n" -le "$FLOOD_SEEN" ] || FLOOD_SEEN=$f_n
}

flood_wait() {
	kill -USR1 "$FLOOD_PID" &&
	flood_said "$FLOOD_OUT" "$FLOOD_PID" started 60 &&
	rdl_poll 120 flood_all_waiting || return 1
	flood_sample
	echo "# node $ID: $(flood_waiting) requests waiting, user $FLOOD_USER holds $FLOOD_SEEN locks here"
}

flood_probe_start() {
	: > "$FLOOD_PROBE_OUT"
	rdlock-flood --uid "$FLOOD_PROBER" --gid "$FLOOD_GROUP" \
		--lockspace "$FLOOD_LS" --node "$ID" --probe \
		> "$FLOOD_PROBE_OUT" 2>&1 &
	FLOOD_PROBE_PID=$!
	flood_said "$FLOOD_PROBE_OUT" "$FLOOD_PROBE_PID" probing 60
}

flood_capped() {
	flood_sample
	FLOOD_SLAB1=$(slab_kb)
	echo "# node $ID: user $FLOOD_USER held at most $FLOOD_SEEN locks (user_locks_max $FLOOD_LOCKS)"
	[ "$FLOOD_SEEN" -le "$FLOOD_LOCKS" ]
}

flood_probe_ok() {
	kill -TERM "$FLOOD_PROBE_PID" && wait "$FLOOD_PROBE_PID" || return 1
	FLOOD_PROBE_PID=
	grep '^#json ' "$FLOOD_PROBE_OUT"
	f_tries=$(flood_json "$FLOOD_PROBE_OUT" probe tries)
	f_fails=$(flood_json "$FLOOD_PROBE_OUT" probe fails)
	[ "${f_tries:-0}" -gt 0 ] && [ "$f_fails" = 0 ]
}

# The flood's own count, before any node lets go of its "hot" name.
flood_counted() {
	kill -TERM "$FLOOD_PID" &&
	flood_said "$FLOOD_OUT" "$FLOOD_PID" stopped 60 || return 1
	grep '^#json .*"figure": "flood"' "$FLOOD_OUT"
	f_returned=$(flood_json "$FLOOD_OUT" flood returned)
	f_killed=$(flood_json "$FLOOD_OUT" flood killed)
	f_granted=$(flood_json "$FLOOD_OUT" flood granted)
	[ "$f_returned" = 0 ] && [ "$f_granted" = 0 ] && [ "${f_killed:-0}" -gt 0 ]
}

flood_gone() {
	kill -TERM "$FLOOD_PID" && wait "$FLOOD_PID" || return 1
	FLOOD_PID=
	rdl_poll 120 flood_user_clear
}

# The state before flood_setup: no lockspace, the bound, the device's group.
flood_restore() {
	if [ -d "/sys/kernel/debug/rdlock/lockspaces/dlm.$FLOOD_LS" ]; then
		rdl_poll 60 rdlockctl ls-remove "$FLOOD_LS" || return 1
	fi
	[ -z "${FLOOD_LOCKS_WAS:-}" ] ||
		echo "$FLOOD_LOCKS_WAS" > "$USER_LOCKS_MAX" || return 1
	FLOOD_LOCKS_WAS=''
	chgrp 0 /dev/rdlock
}

flood_teardown() {
	flood_restore &&
	rdl_json_obj tool ocfs2.sh figure flood node "$ID" \
		user_locks_max "$FLOOD_LOCKS" names "$f_names" \
		waiters "$FLOOD_WAITERS" kill_ms "$FLOOD_KILL_MS" \
		locks_max "$FLOOD_SEEN" \
		killed "$f_killed" probe_tries "$f_tries" probe_fails "$f_fails" \
		slab_kb_before "$FLOOD_SLAB0" slab_kb_flood "$FLOOD_SLAB1" \
		slab_kb_after "$(slab_kb)"
}

# Whatever failed: nothing of the flood stays running (its killer and
# the killer's child end at the end of file of their pipe), nothing of
# its setup stays.
flood_end() {
	for f_p in $FLOOD_PROBE_PID $FLOOD_PID; do
		kill -KILL "$f_p" 2>/dev/null
		wait "$f_p" 2>/dev/null
	done
	FLOOD_PID='' FLOOD_PROBE_PID=''
	rdl_poll 60 flood_user_clear
	flood_restore || echo "# node $ID: the flood's setup stays"
	return 0
}

flood_bench() {
	rdl_step "flood: user_locks_max $FLOOD_LOCKS, /dev/rdlock group $FLOOD_GROUP, lockspace $FLOOD_LS" \
		flood_setup &&
	rdl_step "flood: user $FLOOD_USER holds names until ENOLCK at $FLOOD_LOCKS" \
		flood_fill &&
	rdl_step "barrier: every node's flood filled" barrier "$FLOOD_B" &&
	rdl_step "flood: $FLOOD_WAITERS of its requests wait here, one killed every $FLOOD_KILL_MS ms" \
		flood_wait &&
	rdl_step "flood: user $FLOOD_PROBER's TRY locks beside it" \
		flood_probe_start &&
	rdl_step "metadata benchmark under the flood" bench 40 flood &&
	rdl_step "flood: user $FLOOD_USER never above user_locks_max" flood_capped &&
	rdl_step "flood: every TRY lock of user $FLOOD_PROBER granted" \
		flood_probe_ok &&
	rdl_step "flood: no waiter granted or failed, waiters killed" \
		flood_counted &&
	rdl_step "barrier: every node's flood counted" barrier $((FLOOD_B + 1)) &&
	rdl_step "flood: gone, every lock of user $FLOOD_USER let go" flood_gone &&
	rdl_step "barrier: every node's flood gone" barrier $((FLOOD_B + 2)) &&
	rdl_step "flood: lockspace removed, user_locks_max back" flood_teardown &&
	rdl_step "metadata benchmark after the flood" bench 60 after
	f_rc=$?
	flood_end
	return $f_rc
}

mounted() {
	grep -q " $MNT ocfs2 " /proc/mounts
}

# The content of node $1's file $2 in round $3, over a few 4 KiB blocks so
# that the data does not all fit in the inode (inline data).
content() {
	c_k=0
	while [ "$c_k" -lt 3 ]; do
		printf '%-4095s\n' "round $3 node $1 file $2 block $c_k"
		c_k=$((c_k + 1))
	done
}

# Round 1 on this node: create, write, rename, delete. Every file is
# written under a temporary name and renamed; every third is deleted.
write_files() {
	w_i=1
	while [ "$w_i" -le "$FILES" ]; do
		content "$ID" "$w_i" 1 > "$DIR/tmp.$ID.$w_i" &&
		mv "$DIR/tmp.$ID.$w_i" "$DIR/f.$ID.$w_i" || return 1
		if [ $((w_i % 3)) -eq 0 ]; then
			rm "$DIR/f.$ID.$w_i" || return 1
		fi
		w_i=$((w_i + 1))
	done
}

# Round $1: rewrite this node's files in place (no new inode: cached pages
# of the old content on other nodes must be dropped).
rewrite_files() {
	r_i=1
	while [ "$r_i" -le "$FILES" ]; do
		if [ $((r_i % 3)) -ne 0 ]; then
			content "$ID" "$r_i" "$1" > "$DIR/f.$ID.$r_i" || return 1
		fi
		r_i=$((r_i + 1))
	done
}

# Every node's files as of round $1: contents, no temporary or deleted
# file, and exactly the expected number of entries in the directory.
check_files() {
	k_bad=0
	k_j=0
	k_expect=0
	k_tmp=/tmp/ocfs2-expect
	while [ "$k_j" -lt "$RDLOCK_NR_NODES" ]; do
		k_i=1
		while [ "$k_i" -le "$FILES" ]; do
			k_f=$DIR/f.$k_j.$k_i
			if [ -e "$DIR/tmp.$k_j.$k_i" ]; then
				echo "# node $ID: tmp.$k_j.$k_i still there"
				k_bad=1
			fi
			if [ $((k_i % 3)) -eq 0 ]; then
				if [ -e "$k_f" ]; then
					echo "# node $ID: deleted f.$k_j.$k_i still there"
					k_bad=1
				fi
			else
				k_expect=$((k_expect + 1))
				content "$k_j" "$k_i" "$1" > "$k_tmp"
				if ! cmp -s "$k_tmp" "$k_f"; then
					echo "# node $ID: f.$k_j.$k_i is not node $k_j's round $1: $(head -c 60 "$k_f" 2>&1)"
					k_bad=1
				fi
			fi
			k_i=$((k_i + 1))
		done
		k_j=$((k_j + 1))
	done
	rm -f "$k_tmp"
	k_n=0
	for k_f in "$DIR"/f.*; do
		[ -e "$k_f" ] && k_n=$((k_n + 1))
	done
	if [ "$k_n" -ne "$k_expect" ]; then
		echo "# node $ID: $k_n files in $DIR, expected $k_expect"
		k_bad=1
	fi
	return $k_bad
}

# flock(2) across nodes. Node 0 holds the lock in mode $1 (-s or -x); the
# others must get it with -s exactly when both are shared, and never -x.
# Barriers $2 (held) and $2 + 1 (the others tried).
LOCKF=$DIR/flock
flock_held() {
	f_mode=$1
	if [ "$ID" -eq 0 ]; then
		exec 7>>"$LOCKF" &&
		flock "$f_mode" -w 60 7 || return 1
		barrier "$2" || return 1
		barrier $(($2 + 1))
		f_rc=$?
		flock -u 7
		exec 7>&-
		return $f_rc
	fi
	barrier "$2" || return 1
	f_rc=0
	if flock -n -x "$LOCKF" true; then
		echo "# node $ID: flock -x granted while node 0 holds $f_mode"
		f_rc=1
	fi
	if [ "$f_mode" = -s ] && ! flock -n -s "$LOCKF" true; then
		echo "# node $ID: flock -s refused while node 0 holds -s"
		f_rc=1
	fi
	if [ "$f_mode" = -x ] && flock -n -s "$LOCKF" true; then
		echo "# node $ID: flock -s granted while node 0 holds -x"
		f_rc=1
	fi
	barrier $(($2 + 1)) || return 1
	return $f_rc
}

# After node 0 let go: the lock is granted to a blocking -x (within 60 s).
flock_after() {
	flock -x -w 60 "$LOCKF" true
}

# RECORDS critical sections under an exclusive flock: read the counter,
# append one 4096-byte record "rec node N seq S count C" (one line, padded),
# write the counter plus one. Without exclusion two sections read the same
# count or a record is lost.
RECF=$DIR/records
CNTF=$DIR/counter
append_records() {
	# Node 0 made the file before barrier 2: opened here without O_CREAT.
	# Three nodes creating one name at once can get EEXIST from OCFS2
	# (a stale negative dentry: ocfs2_mknod finds the other node's entry),
	# which an open(O_CREAT) without O_EXCL does not retry.
	exec 8<"$DIR/records.lock" || return 1
	a_s=1
	while [ "$a_s" -le "$RECORDS" ]; do
		flock -x -w 60 8 || { echo "# node $ID: no flock in 60 s"; return 1; }
		# shellcheck disable=SC2015 # any step failing unlocks and fails
		a_c=$(cat "$CNTF") &&
		printf '%-4095s\n' "rec node $ID seq $a_s count $a_c" >> "$RECF" &&
		echo $((a_c + 1)) > "$CNTF" || { flock -u 8; return 1; }
		flock -u 8
		a_s=$((a_s + 1))
	done
	exec 8>&-
}

# The exact count: nodes x RECORDS records, each 4096 bytes with its text,
# counts 0 .. total-1 each once, each node's seqs 1 .. RECORDS in order.
check_records() {
	e_total=$((REC_NODES * RECORDS))
	e_rc=0
	e_size=$(wc -c < "$RECF")
	if [ "$e_size" -ne $((e_total * 4096)) ]; then
		echo "# node $ID: records is $e_size bytes, expected $((e_total * 4096))"
		e_rc=1
	fi
	if [ "$(cat "$CNTF")" != "$e_total" ]; then
		echo "# node $ID: counter $(cat "$CNTF"), expected $e_total"
		e_rc=1
	fi
	# One line per record: the text, blanks to 4095 characters.
	awk -v nodes="$REC_NODES" -v records="$RECORDS" '
	length($0) != 4095 || $1 != "rec" || $2 != "node" || $4 != "seq" ||
	$6 != "count" || NF != 7 || $3 < 0 || $3 >= nodes {
		printf "# record %d is damaged: %.60s\n", NR, $0
		bad = 1
		next
	}
	{
		if ($5 != last[$3] + 1) {
			printf "# record %d: node %d seq %d after %d\n", NR, $3, $5, last[$3]
			bad = 1
		}
		last[$3] = $5
		if ($7 in seen) {
			printf "# record %d: count %d seen twice\n", NR, $7
			bad = 1
		}
		seen[$7] = 1
		n++
	}
	END {
		for (c = 0; c < nodes * records; c++)
			if (!(c in seen)) {
				printf "# count %d missing\n", c
				bad = 1
			}
		for (j = 0; j < nodes; j++)
			if (last[j] != records) {
				printf "# node %d: %d records, expected %d\n", j, last[j], records
				bad = 1
			}
		if (n != nodes * records) {
			printf "# %d records, expected %d\n", n, nodes * records
			bad = 1
		}
		exit bad
	}' "$RECF" || e_rc=1
	return $e_rc
}

# RDLOCK_OCFS2_KILL=1 (stack rdlock, 3 or more nodes): a node dies
# mounted. The victim, the last node, writes FILES files with fsync, takes
# an exclusive flock, leaves a writer running and has the host cut its
# power (host-ctl.sh kill). Corosync sees it gone, dlm_controld fences it
# through the host, rdlock declares it down; only then may a survivor get
# the flock. The survivors must find every file the victim fsynced, its
# journal replayed by exactly one of them, and go on with the records
# (theirs only) and the unmount; fsck.ocfs2 on the host then checks the
# disk.
# With RDLOCK_OCFS2_DEATH=cut the victim lives on: it writes nothing more
# (no writer: a fence by link leaves its disk reachable, and the survivors
# replay its journal while it runs), kills its corosync and dlm_controld,
# and dlm_controld fences it by cutting its link (fence_rdlock_host.sh
# method=link). Once the survivors replayed its journal, node 0 has the
# host give it its link back: the first survivor that reaches it tells it
# it was declared down, its lockspace is lost, and the plug-in restarts it
# (fence_method=reset): node 0 asks the host to see its QEMU quit
# (host-ctl.sh gone), and scripts/ocfs2-test.sh finds the plug-in's line
# on its console.
VICTIM=$((RDLOCK_NR_NODES - 1))
KILLF=$DIR/kill.lock

victim_fsync_files() {
	v_i=1
	while [ "$v_i" -le "$FILES" ]; do
		content "$ID" "$v_i" kill |
			dd of="$DIR/k.$ID.$v_i" conv=fsync 2>/dev/null || return 1
		v_i=$((v_i + 1))
	done
}

# Files nobody waits for: any of them may be lost with the victim, none
# may leave the disk damaged. Runs until the power goes.
victim_writer() {
	w_i=1
	while :; do
		content "$ID" "$w_i" 0 > "$DIR/u.$ID.$w_i"
		w_i=$((w_i + 1))
	done
}

victim_flock() {
	exec 7>>"$KILLF" && flock -x -w 60 7
}

# Barrier 15: the survivors found the flock held; and each of them left
# it (signal on PORT + KILL_GO), so none waits there for a dead node. The
# host powers this node off; nothing after it runs.
KILL_GO=37
# RESTART: a node has left (its cluster down), for the next lower one.
LEAVE_B=38
victim_die() {
	[ "$DEATH" = cut ] || victim_writer 7>&- 8>&- &
	barrier 15 || return 1
	d_j=0
	while [ "$d_j" -lt "$VICTIM" ]; do
		rdl_wait_signal "$d_j" $((PORT + KILL_GO)) "$WAIT" || {
			echo "# node $ID: node $d_j not past barrier 15 within $WAIT s"
			return 1
		}
		d_j=$((d_j + 1))
	done
	if [ "$DEATH" = cut ]; then
		sync
		echo "# node $ID: its cluster engine killed, holding the flock"
		kill -9 "$RDL_COROSYNC_PID" "$RDL_DLM_CONTROLD_PID"
		# Fenced by its link, then told: the plug-in restarts it.
		# Longer than the survivors may take to get there.
		d_s=$((KILL_GRANT_S + 2 * WAIT + CUT_RESET_S))
		sleep "$d_s"
		echo "# node $ID: still running $d_s s after its cluster engine died"
		return 1
	fi
	echo "# node $ID: the host cuts this node's power, holding the flock"
	sh "$RDL/guest/host-ctl.sh" kill "$ID"
	echo "# node $ID: still running after its power cut"
	return 1
}

# How long node 0 waits for the victim, its link back, to restart.
CUT_RESET_S=120

# Cut: node 0 has the host give the victim its link back, and the host
# sees its QEMU quit within CUT_RESET_S s: told that it was declared down,
# it fenced itself. Its link stays down until then (the fence's).
survivor_victim_self_fenced() {
	sh "$RDL/guest/host-ctl.sh" link "$VICTIM" on || return 1
	c_t=$(date +%s)
	RDL_HOST_CTL_WAIT=$((CUT_RESET_S + 10)) \
		sh "$RDL/guest/host-ctl.sh" gone "$VICTIM" "$CUT_RESET_S" || return 1
	echo "# node $ID: node $VICTIM restarted itself $(($(date +%s) - c_t)) s after its link came back"
}

survivor_flock_held() {
	if flock -n -x "$KILLF" true; then
		echo "# node $ID: flock -x granted while node $VICTIM holds it"
		return 1
	fi
}

# A survivor's flock that is not granted: where its task sleeps, and
# rdlock's view of the cluster, the DLM and the lockspaces.
survivor_flock_hang() {
	echo "# node $ID: no flock within $KILL_GRANT_S s of the kill; the waiter's stack:"
	sed 's/^/#   /' "/proc/$1/stack" 2>&1
	# Every other task in rdlock (its requests' and membership's work).
	for h_s in /proc/[0-9]*/stack; do
		grep -q rdlock "$h_s" 2>/dev/null || continue
		h_p=${h_s%/stack}
		echo "# task ${h_p#/proc/} $(cat "$h_p/comm" 2>/dev/null):"
		sed 's/^/#   /' "$h_s" 2>&1
	done
	for h_f in $RDL_MEMBERSHIP /sys/kernel/debug/rdlock/cluster \
		   /sys/kernel/debug/rdlock/dlm \
		   /sys/kernel/debug/rdlock/lockspaces/*/stats; do
		echo "# $h_f:"
		sed 's/^/#   /' "$h_f" 2>&1
	done
	for h_f in /sys/kernel/debug/rdlock/lockspaces/*/locks; do
		echo "# $h_f, the locks not granted:"
		grep -v '^granted ' "$h_f" | head -n 40 | sed 's/^/#   /'
	done
	# Last, in a few lines (CI shows a node's last 30): the membership,
	# where the request works sleep, and the waiter.
	echo "# node $ID: membership $(grep -E '^(state|generation|members|failed|declared_down|down_errors):' $RDL_MEMBERSHIP | tr '\n' ' ')"
	for h_s in /proc/[0-9]*/stack; do
		grep -q rdlock "$h_s" 2>/dev/null || continue
		echo "# node $ID: task ${h_s#/proc/} in $(grep -m 3 -o '[a-z_0-9]*rdlock[a-z_0-9]*' "$h_s" | tr '\n' ' ')"
	done | sort -u -k 7 | head -n 8
	echo "# node $ID: waiter in $(sed -n '1,4s/^\[<[0-9a-f]*>\] //p' "/proc/$1/stack" | cut -d+ -f1 | tr '\n' ' ')"
}

# After barrier 15 the victim is killed: the flock is granted once it is
# fenced and declared down, within KILL_GRANT_S s (less than cluster.sh's
# limit: a waiter that hangs is shown before the guests are stopped).
KILL_GRANT_S=${RDLOCK_OCFS2_KILL_GRANT_S:-150}
survivor_flock_granted() {
	DEAD=$VICTIM
	rdl_signal $((PORT + KILL_GO)) 7>&- 8>&-
	g_t=$(date +%s)
	flock -x "$KILLF" true 7>&- 8>&- &
	g_pid=$!
	while kill -0 "$g_pid" 2>/dev/null; do
		if [ $(($(date +%s) - g_t)) -ge "$KILL_GRANT_S" ]; then
			survivor_flock_hang "$g_pid"
			kill "$g_pid"
			wait "$g_pid"
			return 1
		fi
		sleep 1
	done
	wait "$g_pid" || {
		echo "# node $ID: flock failed after the kill"
		return 1
	}
	g_s=$(($(date +%s) - g_t))
	echo "# node $ID: flock granted $g_s s after the kill was asked"
	rdl_json_obj tool ocfs2.sh figure kill_to_grant stack "$STACK" \
		node "$ID" s "$g_s"
}

# This survivor's dlm_controld has the victim (corosync nodeid + 1)
# fenced with success, and rdlock declared it down once.
survivor_victim_fenced() {
	dlm_tool dump 2>/dev/null |
		grep -q "fence status $((VICTIM + 1)) receive 0 from " || {
		dlm_tool dump 2>&1 | grep -i fence | sed 's/^/#   /'
		return 1
	}
	f_down=$(rdl_member_line declared_down)
	f_failed=$(rdl_member_line failed)
	echo "# node $ID: declared down $f_down, failed '$f_failed', $(grep '^last_recovery_us' $RDL_MEMBERSHIP)"
	[ "$f_down" = 1 ] && [ -z "$f_failed" ]
}

# Every file the victim fsynced, with its content.
survivor_victim_files() {
	s_i=1
	s_tmp=/tmp/ocfs2-expect
	while [ "$s_i" -le "$FILES" ]; do
		content "$VICTIM" "$s_i" kill > "$s_tmp"
		cmp -s "$s_tmp" "$DIR/k.$VICTIM.$s_i" || {
			echo "# node $ID: k.$VICTIM.$s_i, fsynced before the kill: $(head -c 60 "$DIR/k.$VICTIM.$s_i" 2>&1)"
			rm -f "$s_tmp"
			return 1
		}
		s_i=$((s_i + 1))
	done
	rm -f "$s_tmp"
	u_n=$(find "$DIR" -name "u.$VICTIM.*" | wc -l)
	echo "# node $ID: $u_n of the victim's unsynced files are there"
}

# How often this node replayed the victim's journal, for the others.
survivor_replays_noted() {
	r_n=$(dmesg | grep -c "ocfs2: Begin replay journal (node $VICTIM, ")
	dmesg | grep "replay journal (node $VICTIM, " | sed 's/^/# /'
	echo "$r_n" > "$DIR/replays.$ID"
}

# After barrier 17: one survivor replayed the journal, once.
survivor_replayed_once() {
	o_sum=0 o_j=0
	while [ "$o_j" -lt "$VICTIM" ]; do
		o_n=$(cat "$DIR/replays.$o_j") || return 1
		o_sum=$((o_sum + o_n))
		o_j=$((o_j + 1))
	done
	echo "# node $ID: the victim's journal replayed $o_sum times"
	[ "$o_sum" -eq 1 ]
}

# With the victim down, a survivor unmounts and mounts again (its
# lockspace closed and opened anew) and finds the files and records.
remount_phase() {
	rdl_step "survivor: umount, node $VICTIM down" umount "$MNT" &&
	rdl_step "survivor: mount again, node $VICTIM down" \
		ocfs2_mount &&
	rdl_step "survivor: after the mount, every file the victim fsynced" \
		survivor_victim_files &&
	rdl_step "survivor: after the mount, the records exact" check_records
}

kill_phase() {
	if [ "$ID" -eq "$VICTIM" ]; then
		rdl_step "victim: $FILES files written with fsync" victim_fsync_files &&
		rdl_step "victim: flock -x held" victim_flock &&
		rdl_step "barrier: the victim holds the flock" barrier 14 &&
		victim_die
		return 1
	fi
	rdl_step "barrier: the victim holds the flock" barrier 14 &&
	rdl_step "survivor: flock -x refused while the victim holds it" survivor_flock_held &&
	rdl_step "barrier: the victim may die" barrier 15 &&
	rdl_step "survivor: flock -x granted after the victim died" survivor_flock_granted &&
	rdl_step "survivor: the victim fenced by dlm_controld, declared down once" survivor_victim_fenced &&
	rdl_step "survivor: every file the victim fsynced, intact" survivor_victim_files &&
	rdl_step "survivor: replays of the victim's journal noted" survivor_replays_noted &&
	rdl_step "barrier: replays noted" barrier 16 &&
	rdl_step "survivor: the victim's journal replayed exactly once" survivor_replayed_once &&
	{ [ "$DEATH" != cut ] || [ "$ID" -ne 0 ] ||
	  rdl_step "node 0: the victim, its link back, fenced itself" survivor_victim_self_fenced; }
}

# RDLOCK_OCFS2_RESTART=N: the last node, mounted, restarts rdlock N times
# while the others stay mounted. Each time it writes FILES files with
# fsync, unmounts and takes its cluster down: it leaves the cluster
# engine's lockspace cleanly (no recover_slot), and the others declare it
# down all the same (its table is gone), their lockspaces kept; they find
# its files, exclude each other with flock and go on without it. Then it
# takes its cluster up again with a new table: it returned, the others'
# lockspaces are not lost (no lost callback: the plug-in would restart
# them), and it mounts again. Its second time it is declared down as a
# returned node. The records are then every node's.
RESTART_DECLARE_S=120

# survivor_victim_left [COUNT]: this survivor declared the victim down,
# COUNT times in all, each time it left, when given (ROLLING gives none:
# the counts differ from node to node, none declares itself), and is
# granting again; no lockspace lost here.
survivor_victim_left() {
	r_t=$RESTART_DECLARE_S
	until if [ -n "$1" ]; then
		[ "$(rdl_member_line left)" = "$1" ] &&
		[ "$(rdl_member_line declared_down)" = "$1" ]
	      else
		rdl_node_flag "$VICTIM" down
	      fi &&
	      [ -z "$(rdl_member_line failed)" ] &&
	      [ "$(rdl_member_line state)" = running ]; do
		r_t=$((r_t - 1))
		[ "$r_t" -gt 0 ] || { sed 's/^/#   /' $RDL_MEMBERSHIP; return 1; }
		sleep 1
	done
	echo "# node $ID: node $VICTIM left and declared down${1:+ ($1)}, $(grep '^last_recovery_us' $RDL_MEMBERSHIP)"
	no_lockspace_lost
}

# ROLLING, on the nodes but node 0: they took over from node 0.
took_over_from_0() {
	dmesg | grep -q "rdlock: cluster [0-9]*: nodes 0x[0-9a-f]* take over the lock tables of this epoch from nodes 0x1 " || {
		dmesg | grep "rdlock: " | tail -n 12 | sed 's/^/#   /'
		return 1
	}
}

# No lockspace of this node's was lost: the DLM's count, and the plug-in
# said nothing (it restarts a node whose lockspace is lost).
no_lockspace_lost() {
	n_l=$(sed -n 's/^lockspaces_lost: //p' /sys/kernel/debug/rdlock/dlm)
	if [ "$n_l" != 0 ] || dmesg | grep -q 'lockspace lost while mounted'; then
		echo "# node $ID: lockspaces_lost '$n_l'"
		return 1
	fi
}

# The victim: a member again, returned, its lockspaces new.
victim_back() {
	rdl_step "victim: cluster up again, a member" rdlockctl up &&
	rdl_step "victim: cluster ready" rdlockctl wait --timeout 120 &&
	rdl_step "victim: membership running, every node a member" \
		rdl_member_running &&
	rdl_step "victim: this node returned" rdl_node_flag "$VICTIM" returned &&
	rdl_step "victim: mount again" \
		ocfs2_mount &&
	rdl_step "victim: mounted through ocfs2_stack_rdlock" rdlock_in_use
}

# Barriers 14 + 3 (i - 1) to 16 + 3 (i - 1) for the i-th restart.
restart_phase() {
	r_i=1
	r_last=$VICTIM
	while [ "$r_i" -le "$RESTART" ]; do
		r_b=$((14 + 3 * (r_i - 1)))
		# ROLLING: the i-th restart is node N - i's.
		[ "$ROLLING" -eq 0 ] || VICTIM=$((r_last - r_i + 1))
		if [ "$ID" -eq "$VICTIM" ]; then
			rdl_step "victim: $FILES files written with fsync ($r_i)" \
				victim_fsync_files &&
			rdl_step "victim: umount ($r_i)" umount "$MNT" &&
			rdl_step "victim: cluster down, leaving the membership ($r_i)" \
				rdl_poll 30 rdlockctl down &&
			rdl_step "barrier: the victim left ($r_i)" barrier "$r_b" &&
			rdl_step "barrier: the others went on without it ($r_i)" \
				barrier $((r_b + 1)) &&
			victim_back &&
			rdl_step "barrier: the victim mounted again ($r_i)" \
				barrier $((r_b + 2)) || return 1
		else
			rdl_step "barrier: the victim left ($r_i)" barrier "$r_b" &&
			if [ "$ROLLING" -eq 0 ]; then
				rdl_step "survivor: the victim declared down, no lockspace lost ($r_i)" \
					survivor_victim_left "$r_i"
			else
				rdl_step "survivor: node $VICTIM declared down, no lockspace lost ($r_i)" \
					survivor_victim_left
			fi &&
			rdl_step "survivor: every file the victim fsynced ($r_i)" \
				survivor_victim_files &&
			rdl_step "survivor: flock -x granted without the victim ($r_i)" \
				flock -x -w 60 "$KILLF" true &&
			rdl_step "barrier: the others went on without it ($r_i)" \
				barrier $((r_b + 1)) &&
			rdl_step "survivor: the victim shown returned ($r_i)" \
				rdl_poll 120 rdl_node_flag "$VICTIM" returned &&
			rdl_step "barrier: the victim mounted again ($r_i)" \
				barrier $((r_b + 2)) || return 1
		fi
		r_i=$((r_i + 1))
	done
	VICTIM=$r_last
	if [ "$ROLLING" -ne 0 ] && [ "$ID" -ne 0 ]; then
		rdl_step "the nodes but node 0 took over from it" \
			took_over_from_0 || return 1
	fi
	rdl_step "no lockspace lost" no_lockspace_lost
}

if [ "${RDLOCK_NR_NODES:-0}" -lt 2 ] || ! rdl_check_env ||
   [ -z "$DEV" ] || [ ! -b "$DEV" ]; then
	rdl_not_ok "ocfs2.sh needs 2 or more nodes and cluster.sh --shared-disk (disk '$DEV')"
	rdl_finish
	exit 1
fi

mkdir -p "$MNT"
start=$(date +%s)
# The mount's and the benchmark's results also as JSON (the report's).
mount_ok=0
if "${STACK}_up" &&
   rdl_step "barrier: $STACK up everywhere" barrier 0 &&
   rdl_step "mount $DEV ($([ "$TOOLS" -eq 1 ] && echo mount.ocfs2 ||
			      echo "-t ocfs2 -o $MOUNT_OPTS"))" \
	ocfs2_mount && mount_ok=1 &&
   { [ "$STACK" != rdlock ] ||
     { rdl_step "rdlock: mounted through ocfs2_stack_rdlock" rdlock_in_use &&
       rdl_step "rdlock: rdlockctl locks lists the mount's superblock lock" \
	ocfs2_locks_listed; }; } &&
   rdl_step "barrier: mounted everywhere" barrier 1; then
	mount_s=$(($(date +%s) - start))
	echo "# node $ID: mounted after $mount_s s"
	rdl_json_obj tool ocfs2.sh figure mount stack "$STACK" node "$ID" \
		passed 1 s "$mount_s"
	if [ "$BENCH" -gt 0 ]; then
		passed=0
		rdl_step "metadata benchmark, $BENCH files per node and phase" \
			bench 20 && passed=1
		rdl_json_obj tool ocfs2.sh figure bench stack "$STACK" \
			node "$ID" files "$BENCH" passed "$passed"
		if [ "$FLOOD" -ne 0 ] && [ "$passed" -eq 1 ]; then
			passed=0
			flood_bench && passed=1
			rdl_json_obj tool ocfs2.sh figure flood_run node "$ID" \
				passed "$passed"
		fi
		bench_prof_show
	fi
	if [ "$ID" -eq 0 ]; then
		rdl_step "node 0 creates $DIR" mkdir "$DIR" &&
		rdl_step "node 0 creates the counter file" sh -c "echo 0 > $CNTF" &&
		rdl_step "node 0 creates the records' lock file" \
			sh -c ": > $DIR/records.lock"
	fi
	t=$(date +%s)
	rdl_step "barrier: shared directory made" barrier 2 &&
	rdl_step "round 1: create, write, rename, delete $FILES files" write_files &&
	rdl_step "barrier: round 1 written" barrier 3 &&
	rdl_step "round 1: every node's files, contents and deletions" check_files 1 &&
	rdl_step "barrier: round 1 checked" barrier 4 &&
	rdl_step "round 2: rewrite own files in place" rewrite_files 2 &&
	rdl_step "barrier: round 2 written" barrier 5 &&
	rdl_step "round 2: every node sees the new contents" check_files 2 &&
	echo "# node $ID: file rounds took $(($(date +%s) - t)) s"
	t=$(date +%s)
	rdl_step "flock -s on node 0: -s granted, -x refused elsewhere" flock_held -s 10 &&
	rdl_step "flock -x on node 0: -s and -x refused elsewhere" flock_held -x 12 &&
	rdl_step "flock -x granted once node 0 let go" flock_after &&
	rdl_step "barrier: flock done" barrier 6 &&
	{ [ "$KILL" -eq 0 ] || kill_phase; } &&
	{ [ "$RESTART" -eq 0 ] || restart_phase; } &&
	t=$(date +%s) &&
	rdl_step "$RECORDS records of 4096 bytes appended under flock -x" append_records &&
	echo "# node $ID: records took $(($(date +%s) - t)) s" &&
	rdl_step "barrier: records appended" barrier 7 &&
	rdl_step "exactly $((REC_NODES * RECORDS)) intact records, counter exact" check_records &&
	{ [ "$STACK" != rdlock ] ||
	  rdl_step "rdlock: new inodes' locks granted LOCAL, none lost or known" local_grants_ok; } &&
	{ [ "$KILL" -eq 0 ] || remount_phase; }
	# Whatever failed: no node unmounts while another still works.
	rdl_step "barrier: done" barrier 8
else
	rdl_json_obj tool ocfs2.sh figure mount stack "$STACK" node "$ID" \
		passed "$mount_ok"
fi
# Blocking notices, for a hang's diagnosis (a lost BAST shows as a wait
# that never ends): rdlock's DLM counters, one line.
if [ "$STACK" = rdlock ] && [ -r /sys/kernel/debug/rdlock/dlm ]; then
	echo "# node $ID: dlm $(awk '$1 ~ /^(try_busy|notices|cancels|hellos|rewaits):$/ { printf "%s %s ", $1, $2 }' /sys/kernel/debug/rdlock/dlm)"
fi
if [ "$STACK" = o2cb ]; then
	if mounted; then
		rdl_step "umount" umount "$MNT" &&
		rdl_step "heartbeat stopped by the unmount helper" o2cb_heartbeat_gone
	fi
	if [ -d "$CFS/$CLUSTER/heartbeat/$UUID" ]; then
		rmdir "$CFS/$CLUSTER/heartbeat/$UUID"
	fi
	# The peers must be done with o2net before its nodes go.
	rdl_step "barrier: unmounted everywhere" barrier 9 last
	[ -d "$CFS/$CLUSTER" ] && rdl_step "o2cb: cluster down" o2cb_cluster_down
else
	mounted && rdl_step "umount" umount "$MNT"
	rdl_step "every unmount helper run went well" helper_ok
	rdl_step "barrier: unmounted everywhere" barrier 9 last
	# Unmounted: the stack glue let go of the plug-in.
	rdl_loaded ocfs2_stack_rdlock &&
		rdl_step "rmmod ocfs2_stack_rdlock" rdl_rmmod ocfs2_stack_rdlock
	# No final barrier through the transport (rdl_stop's) without the
	# victim, nor when the nodes leave one at a time (below).
	[ "$ENGINE" -eq 0 ] || ! rdl_loaded rdlock_test ||
		rdl_step "rmmod rdlock_test" rdl_rmmod rdlock_test
	# With every node alive, they leave the cluster engine one at a
	# time, the last first: fs/dlm of 6.1 may warn when members leave
	# its lockspace at once (midcomms: a FIN in an unexpected state).
	[ "$RESTART" -eq 0 ] || [ "$ID" -eq "$VICTIM" ] ||
		rdl_step "node $((ID + 1)) left" \
			rdl_wait_signal $((ID + 1)) $((PORT + LEAVE_B)) "$WAIT"
	rdl_stop
	[ "$ENGINE" -eq 0 ] || rdl_dlm_stop
	[ "$RESTART" -eq 0 ] || rdl_signal $((PORT + LEAVE_B))
fi
took=$(($(date +%s) - start))
echo "# node $ID: ocfs2.sh took $took s"
rdl_json_obj tool ocfs2.sh figure run stack "$STACK" node "$ID" s "$took"
rdl_finish
