#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# OCFS2 from /etc/fstab, booted by systemd, on 3 guests
# (scripts/deb-test.sh: cluster.sh --root shares the chroot the Debian
# packages were installed in, and $RDL/pkg/cluster.key is a key its
# "rdlockctl keygen" made):
#   fstab.sh       in the guests' initramfs: make that chroot this node's
#                  root and configure the node as ocfs2.rst ("From
#                  /etc/fstab, at every boot") says, then have
#                  guest-init.sh switch to it with systemd as PID 1
#   fstab.sh check under systemd, started by rdlock-fstab-check.service
#                  once the fstab line's mount was tried (ordered after
#                  it: with nofail, remote-fs.target does not wait for
#                  it): the checks below
# The root is the chroot read-only over virtio-9p under an overlay on a
# tmpfs: what a node writes is gone at its next boot, which configures it
# again alike. The chroot's own units and SysV scripts (the host's) are
# not the node's: the node enables corosync, dlm and rdlock (deb-test.sh
# checks the package enabled rdlock) and disables ocfs2-tools' o2cb and
# ocfs2 scripts, as ocfs2.rst says.
#
# Every node, first boot: systemd started corosync, dlm_controld and
# rdlock, then mounted the disk (/dev/vda, cluster "rdlock") from fstab,
# through the packaged plug-in, after rdlock. Node 2 then reboots
# ("systemctl reboot": the disk is unmounted before rdlock goes down, and
# nodes 0 and 1 see it leave), node 0 has the host power it on again and
# writes a file meanwhile; at node 2's second boot the disk is mounted
# again by itself, and node 2 reads what the others wrote and writes a
# file they read. Then "systemctl stop rdlock" on each node in turn (2,
# 1, 0) unmounts the disk first and takes the node down; every node stops
# dlm_controld and corosync and powers off. guest-init.sh's exit line
# comes from a systemd-shutdown hook at the end of the power-off.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

NEW=/newroot
ENV=/etc/rdlock-test/env
RC=/var/lib/rdlock-test/rc
MNT=/srv/shared
# Its fstab line's unit (systemd-escape -p --suffix=mount $MNT).
MNT_UNIT=srv-shared.mount
UNIT=rdlock-fstab-check.service
P_UP=7890
P_SEEN=7891
P_DOWN=7893
P_END=7894
# host-ctl.sh reads with a timeout: busybox's sh, not dash. The host
# answers "gone" once node 2's QEMU quit: allow for its whole shutdown.
host_ctl() {
	RDL_HOST_CTL_WAIT=310 busybox sh "$RDL/guest/host-ctl.sh" "$@"
}

# --- In the initramfs ---------------------------------------------------

# The chroot, read-only, under an overlay on a tmpfs, at $NEW; /tmp a
# tmpfs (systemd-tmpfiles would empty the chroot's at boot).
root_mount() {
	mkdir -p /lower /ovl "$NEW" &&
	mount -t 9p -o trans=virtio,version=9p2000.L,ro rdlock-root /lower &&
	mount -t tmpfs -o mode=0755 tmpfs /ovl &&
	mkdir -p /ovl/up /ovl/work &&
	mount -t overlay overlay \
		-o lowerdir=/lower,upperdir=/ovl/up,workdir=/ovl/work "$NEW" &&
	mount -t tmpfs -o mode=1777 tmpfs "$NEW/tmp" &&
	[ -x "$NEW/lib/systemd/systemd" ] && [ -x "$NEW/usr/sbin/rdlockctl" ]
}

in_new() {
	chroot "$NEW" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# The host's enabled units are not this node's.
host_units_off() {
	rm -rf "$NEW"/etc/systemd/system/*.wants &&
	ln -sf /lib/systemd/system/multi-user.target \
		"$NEW/etc/systemd/system/default.target"
}

# Nor are the host's enabled SysV scripts, but for o2cb's and ocfs2's,
# which node_configure() disabled as ocfs2.rst says (corosync and dlm
# have units of their own).
host_sysv_off() {
	for h_l in "$NEW"/etc/rc[2-5].d/S*; do
		[ -L "$h_l" ] || continue
		case ${h_l##*/} in
		S??o2cb | S??ocfs2) ;;
		*) rm -f "$h_l" || return 1 ;;
		esac
	done
	for h_l in "$NEW"/etc/rc[2-5].d/S??o2cb "$NEW"/etc/rc[2-5].d/S??ocfs2; do
		[ -L "$h_l" ] || continue
		echo "# ${h_l#"$NEW"}: still enabled"
		return 1
	done
}

# The guest's own /dev, /proc and /sys in the root while it is
# configured (guest-init.sh moves them there for good later).
kernel_fs() {
	for k_d in dev proc sys; do
		if [ "$1" = on ]; then
			mount --bind "/$k_d" "$NEW/$k_d" || return 1
		else
			umount "$NEW/$k_d" || return 1
		fi
	done
}

# The running kernel's modules that cluster.sh gave this initramfs (the
# stock kernel's, for RDMA, fs/dlm and OCFS2) in the root beside what
# DKMS installed there, indexed: the units' modprobe finds them.
modules_install() {
	k_ver=$(uname -r)
	mkdir -p "$NEW/lib/modules/$k_ver" &&
	cp -a "/lib/modules/$k_ver/kernel" "/lib/modules/$k_ver"/modules.order \
		"/lib/modules/$k_ver"/modules.builtin* "$NEW/lib/modules/$k_ver/" &&
	in_new depmod "$k_ver" &&
	in_new modprobe -n dlm && in_new modprobe -n ocfs2_stack_rdlock
}

# The admin's part of ocfs2.rst: modprobe.d, rdlock.conf (the example, as
# shipped: its addresses are the guests') and the key, corosync and
# dlm_controld, the units, fstab.
node_configure() {
	c_uuid=$(in_new blkid -s UUID -o value /dev/vda)
	[ -n "$c_uuid" ] || { echo "# no UUID on /dev/vda"; return 1; }
	echo "node$RDLOCK_NODE_ID" > "$NEW/etc/hostname" &&
	echo "options rdlock membership=dlm" > "$NEW/etc/modprobe.d/rdlock.conf" &&
	cp "$NEW/etc/rdlock/rdlock.conf.example" "$NEW/etc/rdlock/rdlock.conf" &&
	cp "$RDL/pkg/cluster.key" "$NEW/etc/rdlock/cluster.key" &&
	chmod 0600 "$NEW/etc/rdlock/cluster.key" &&
	mkdir -p "$NEW/etc/corosync" "$NEW/etc/dlm" &&
	rdl_dlm_conf > "$NEW/etc/corosync/corosync.conf" &&
	# Fencing is not this test's subject (failbench and handover fence
	# through the host); without an agent dlm_controld would wait.
	echo "enable_fencing=0" > "$NEW/etc/dlm/dlm.conf" &&
	mkdir -p "$NEW/etc/systemd/system/rdlock.service.d" &&
	printf '[Unit]\nWants=dlm.service\n' \
		> "$NEW/etc/systemd/system/rdlock.service.d/dlm.conf" &&
	mkdir -p "$NEW$MNT" &&
	printf 'UUID=%s %s ocfs2 _netdev,nofail,x-systemd.requires=rdlock.service 0 0\n' \
		"$c_uuid" "$MNT" > "$NEW/etc/fstab" &&
	# remote-fs.target, which pulls in the fstab line's mount, is enabled
	# on any systemd host; host_units_off took the chroot's link.
	in_new systemctl enable remote-fs.target corosync.service dlm.service \
		rdlock.service &&
	in_new systemctl disable o2cb.service ocfs2.service
}

# The checks: this payload and busybox's nc and ping (lib.sh's signals) in
# the root, the environment, a unit after the mount's, and the hook that
# reports the exit status at the end of a power-off.
check_install() {
	mkdir -p "$NEW/rdlock" "$NEW/etc/rdlock-test" "$NEW/var/lib/rdlock-test" \
		"$NEW/lib/systemd/system-shutdown" &&
	cp -a "$RDL/." "$NEW/rdlock/" &&
	cp /bin/busybox "$NEW/rdlock/bin/busybox" &&
	ln -sf busybox "$NEW/rdlock/bin/nc" &&
	ln -sf busybox "$NEW/rdlock/bin/ping" &&
	cat > "$NEW$ENV" <<-EOF &&
	RDLOCK_NODE_ID=$RDLOCK_NODE_ID
	RDLOCK_NR_NODES=$RDLOCK_NR_NODES
	RDLOCK_NODE_ADDRS="$RDLOCK_NODE_ADDRS"
	RDLOCK_KERNEL=$RDLOCK_KERNEL
	RDLOCK_BOOT=$RDLOCK_BOOT
	RDLOCK_SHARED_DISK=$RDLOCK_SHARED_DISK
	EOF
	cat > "$NEW/etc/systemd/system/$UNIT" <<-EOF &&
	[Unit]
	Description=rdlock test: OCFS2 from fstab (selftests/guest/fstab.sh)
	After=$MNT_UNIT rdlock.service

	[Service]
	ExecStart=/rdlock/bin/busybox sh /rdlock/guest/fstab.sh check
	StandardOutput=file:/dev/ttyS1
	StandardError=inherit

	[Install]
	WantedBy=multi-user.target
	EOF
	in_new systemctl enable "$UNIT" &&
	cat > "$NEW/lib/systemd/system-shutdown/rdlock-test-exit" <<-EOF &&
	#!/bin/sh
	# A power-off at the end of fstab.sh check: its exit status.
	[ -f $RC ] && [ "\$1" = poweroff ] &&
		echo "RDLOCK-GUEST-EXIT \$(cat $RC)" > /dev/ttyS1
	exit 0
	EOF
	chmod 0755 "$NEW/lib/systemd/system-shutdown/rdlock-test-exit"
}

prepare() {
	if ! rdl_check_env || [ "$RDLOCK_NR_NODES" -ne 3 ] ||
	   [ -z "$RDLOCK_SHARED_DISK" ]; then
		rdl_not_ok "fstab.sh needs 3 nodes and a shared disk"
		rdl_finish
		return 1
	fi
	rdl_step "boot $RDLOCK_BOOT: the packages' root, read-only, under an overlay" \
		root_mount &&
	rdl_step "boot $RDLOCK_BOOT: the host's units off" host_units_off &&
	kernel_fs on &&
	rdl_step "boot $RDLOCK_BOOT: the kernel's modules installed" modules_install &&
	rdl_step "boot $RDLOCK_BOOT: configured as ocfs2.rst says (membership=dlm, fstab)" \
		node_configure &&
	rdl_step "boot $RDLOCK_BOOT: the host's SysV scripts off" host_sysv_off &&
	rdl_step "boot $RDLOCK_BOOT: the checks installed" check_install &&
	kernel_fs off &&
	echo "$NEW /lib/systemd/systemd" > /tmp/rdlock-switch-root
	rdl_finish
}

# --- Under systemd --------------------------------------------------------

# The disk is mounted at $MNT by the fstab line's unit, through rdlock's
# plug-in, in the rdlock lockspace named after its UUID, after rdlock.
mounted() {
	m_fs=$(findmnt -n -o FSTYPE "$MNT")
	m_act=$(systemctl is-active $MNT_UNIT)
	m_plugin=$(cat /sys/fs/ocfs2/active_cluster_plugin)
	if [ "$m_fs" != ocfs2 ] || [ "$m_act" != active ] ||
	   [ "$m_plugin" != user ] || [ ! -d /sys/module/ocfs2_stack_rdlock ]; then
		echo "# $MNT: '$m_fs', $MNT_UNIT $m_act, OCFS2's plug-in '$m_plugin'"
		return 1
	fi
	# The plug-in opened the disk's lockspace (OCFS2 names it after the
	# UUID), and rdlock has it.
	m_uuid=$(blkid -s UUID -o value /dev/vda | tr -d - | tr a-f A-F)
	journalctl -b -k --no-pager |
		grep -q "ocfs2_stack_rdlock: $m_uuid: node $RDLOCK_NODE_ID connected" ||
		{ echo "# the plug-in did not connect $m_uuid"; return 1; }
	rdlockctl ls | grep -q "^dlmh\.[0-9a-f]* *kernel .* open .* $m_uuid\$" ||
		{ rdlockctl ls | sed 's/^/# /'; return 1; }
	m_deps=$(systemctl show -P Requires $MNT_UNIT)
	case " $m_deps " in
	*" rdlock.service "*) ;;
	*) echo "# $MNT_UNIT requires $m_deps"; return 1 ;;
	esac
	m_deps=$(systemctl show -P After $MNT_UNIT)
	case " $m_deps " in
	*" rdlock.service "*) ;;
	*) echo "# $MNT_UNIT is after $m_deps"; return 1 ;;
	esac
# Started after rdlock had started.
	m_r=$(systemctl show -P ActiveEnterTimestampMonotonic rdlock.service)
	m_m=$(systemctl show -P ActiveEnterTimestampMonotonic $MNT_UNIT)
	if [ -z "$m_r" ] || [ -z "$m_m" ] || [ "$m_r" -eq 0 ] ||
	   [ "$m_m" -lt "$m_r" ]; then
		echo "# rdlock active at $m_r us, $MNT at $m_m us"
		return 1
	fi
}

active() {
	for a_u in "$@"; do
		[ "$(systemctl is-active "$a_u")" = active ] ||
			{ echo "# $a_u: $(systemctl is-active "$a_u")"; return 1; }
	done
}

# write NAME: this node's file NAME on the disk, its contents its name.
write() {
	echo "$1" > "$MNT/$1" && sync -f "$MNT/$1"
}

# has NAME: the disk has file NAME, as written.
has() {
	[ "$(cat "$MNT/$1" 2>/dev/null)" = "$1" ]
}

files_read() {
	for f_n in boot1.node0 boot1.node1 boot1.node2 away.node0; do
		has "$f_n" || { echo "# $f_n: not as written"; return 1; }
	done
}

# Node 2 left: its rdlock said so when it went down, its companion
# lockspace left cleanly, and each survivor declared it down for that.
saw_leave() {
	dmesg | grep -q "membership: node 2 left: declaring it down"
}

# systemctl stop rdlock: the disk is unmounted first, then the node goes
# down, the unit's stop (ExecStopPost's rdlockctl down) clean.
stop_rdlock() {
	systemctl stop rdlock.service || return 1
	findmnt "$MNT" > /dev/null && { echo "# $MNT still mounted"; return 1; }
	s_res=$(systemctl show -P Result rdlock.service)
	[ "$s_res" = success ] || { echo "# rdlock.service: $s_res"; return 1; }
	rdlockctl status 2>&1 | grep -q "^state: \(down\|unconfigured\)$" ||
		{ rdlockctl status 2>&1 | sed 's/^/# /'; return 1; }
}

# The end barrier, as guest-init.sh's: answer on P_END, and on
# guest-init.sh's port for it, until every peer answered on either (one
# whose initramfs part failed waits in guest-init.sh's), or is gone; at
# most 300 s.
FINISHED_PORT=7769
end_barrier() {
	rdl_signal $P_END
	rdl_signal $FINISHED_PORT
	e_end=$(($(date +%s) + 300))
	for e_n in 0 1 2; do
		[ "$e_n" -eq "$RDLOCK_NODE_ID" ] && continue
		e_a=$(rdl_node_addr "$e_n")
		until timeout 3 nc -w 1 "$e_a" $P_END < /dev/null > /dev/null 2>&1 ||
		      timeout 3 nc -w 1 "$e_a" $FINISHED_PORT < /dev/null > /dev/null 2>&1; do
			ping -c 1 -W 1 "$e_a" > /dev/null 2>&1 || break
			[ "$(date +%s)" -lt "$e_end" ] || break
			sleep 1
		done
	done
}

# corosync and dlm_controld stop cleanly (no lockspace left in fs/dlm).
daemons_stop() {
	systemctl stop dlm.service corosync.service || return 1
	for d_u in dlm.service corosync.service; do
		d_r=$(systemctl show -P Result $d_u)
		[ "$d_r" = success ] || { echo "# $d_u: $d_r"; return 1; }
	done
}

check_boot1() {
	rdl_step "boot 1: corosync, dlm and rdlock active" \
		active corosync.service dlm.service rdlock.service &&
	rdl_step "boot 1: $MNT mounted from fstab through rdlock, after it" mounted &&
	rdl_step "boot 1: a file written" write "boot1.node$RDLOCK_NODE_ID" &&
	rdl_signal $P_UP &&
	rdl_step "every node mounted" rdl_wait_all_signals $P_UP 300 || return 1
	# Node 2 goes once nodes 0 and 1 stopped asking for its signal.
	[ "$RDLOCK_NODE_ID" -eq 2 ] || rdl_signal $P_SEEN
	case $RDLOCK_NODE_ID in
	0)
		rdl_step "node 2 rebooted by itself" \
			host_ctl gone 2 300 &&
		rdl_step "node 2 left cleanly, declared down" rdl_poll 60 saw_leave &&
		rdl_step "a file written while node 2 was away" write away.node0 &&
		rdl_step "node 2 powered on again" host_ctl boot 2
		;;
	1)
		rdl_step "node 2 left cleanly, declared down" rdl_poll 300 saw_leave
		;;
	2)
		rdl_step "nodes 0 and 1 saw every node mounted" rdl_wait_below 2 $P_SEEN 300 ||
			return 1
		echo "# node 2: systemctl reboot"
		# The rest is the second boot's.
		systemctl reboot
		exit 0
		;;
	esac &&
	rdl_step "node 2 back: its file of boot 2 read" rdl_poll 300 has boot2.node2
}

check_boot2() {
	rdl_step "boot 2: corosync, dlm and rdlock active" \
		active corosync.service dlm.service rdlock.service &&
	rdl_step "boot 2: $MNT mounted again by itself" mounted &&
	rdl_step "boot 2: the files of every node's first boot and node 0's read" \
		files_read &&
	rdl_step "boot 2: a file written" write boot2.node2
}

# What systemd and the units said, after a failed check.
diag() {
	systemctl --no-pager -l status corosync.service dlm.service \
		rdlock.service $MNT_UNIT 2>&1 |
		sed 's/^/# /'
	journalctl -b --no-pager -n 60 2>&1 | sed 's/^/# /'
	{ corosync-quorumtool -s; dlm_tool status; dlm_tool ls
	  dlm_tool dump | tail -n 60; } 2>&1 | sed 's/^/# /'
}

check() {
	. "$ENV" || { rdl_not_ok "no $ENV"; rdl_finish; return 1; }
	export RDLOCK_NODE_ID RDLOCK_NR_NODES RDLOCK_NODE_ADDRS RDLOCK_KERNEL
	if [ "$RDLOCK_BOOT" -eq 1 ]; then
		check_boot1 || diag
	else
		check_boot2 || diag
	fi
	# Each node in turn, 2 first, takes rdlock down; the daemons stay
	# until every node is down (lib.sh's rdl_stop_in_turn says why).
	if [ "$RDLOCK_NODE_ID" -lt 2 ]; then
		rdl_step "node $((RDLOCK_NODE_ID + 1)) took rdlock down" \
			rdl_wait_signal $((RDLOCK_NODE_ID + 1)) $P_DOWN 600
	fi
	rdl_step "systemctl stop rdlock: $MNT unmounted first, the node down" \
		stop_rdlock
	rdl_signal $P_DOWN
	rdl_step "every node took rdlock down" rdl_wait_all_signals $P_DOWN 600 &&
	rdl_step "corosync and dlm_controld stopped cleanly" daemons_stop
	end_barrier
	rdl_finish
	echo $? > "$RC"
	systemctl poweroff
}

case ${1:-} in
'')	prepare ;;
check)	check ;;
*)	echo "usage: fstab.sh [check]" >&2; exit 2 ;;
esac
