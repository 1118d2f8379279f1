#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the rdlock test guests (busybox sh), installed by cluster.sh.
#
# Brings up eth0 and a soft-RoCE device rxe0, waits for every peer, then
# runs the command from /etc/rdlock/cmd in /rdlock with its output on ttyS1
# (kernel messages stay on ttyS0), prints "RDLOCK-GUEST-EXIT <rc>" there
# and powers off.  rdlock's own modules are left to the command.

export PATH=/bin:/sbin:/usr/bin:/usr/sbin
OUT=/dev/ttyS1

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp

# Plain "\n" line ends in the host's log file; keep ttyS1 open throughout so
# that the setting sticks.
exec 3> $OUT
stty -F $OUT -onlcr

report()
{
	echo "RDLOCK-GUEST-EXIT $1" > $OUT
	sync
}

# kmemleak (debug kernel; it never scans by itself there): what the
# command's run leaked goes to the console, where cluster.sh looks for
# splats ("kmemleak: N new suspected memory leaks"). $1 = clear first marks
# everything suspected so far (the boot's) as seen. Objects younger than 5 s
# are not reported yet, hence the wait.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_scan()
{
	[ -w $KMEMLEAK ] || return 0
	if [ "$1" = clear ]; then
		echo scan > $KMEMLEAK
		echo clear > $KMEMLEAK
		return 0
	fi
	sleep 5
	echo "rdlock-init: kmemleak scan" > /dev/kmsg
	echo scan > $KMEMLEAK
	head -n 200 $KMEMLEAK > /dev/console
	echo "rdlock-init: kmemleak scan done" > /dev/kmsg
}

power_off()
{
	# On the console: a guest that hangs after this line hangs in the
	# kernel's power-off, not in this script.
	echo "rdlock-init: powering off" > /dev/kmsg
	poweroff -f
	# Only reached if the kernel cannot power off: -no-reboot makes QEMU
	# exit on reset instead.
	reboot -f
}

fail()
{
	echo "rdlock-init: $*" > $OUT
	report 125
	power_off
}

# Cluster-wide settings from cluster.sh; the node id comes from the cmdline
# so that all nodes can share one initramfs.
. /etc/rdlock/env
# RDLOCK_BOOT: 1, or 2 when the host powered this node on again after a
# kill (host-ctl.py boot): the command runs again, and knows.
RDLOCK_BOOT=1
for arg in $(cat /proc/cmdline); do
	case $arg in
	rdlock_guest.node=*) RDLOCK_NODE_ID=${arg#rdlock_guest.node=} ;;
	rdlock_guest.boot=*) RDLOCK_BOOT=${arg#rdlock_guest.boot=} ;;
	esac
done
[ -n "$RDLOCK_NODE_ID" ] || fail "no rdlock_guest.node= on the kernel command line"
export RDLOCK_NODE_ID RDLOCK_NR_NODES RDLOCK_NODE_ADDRS RDLOCK_KERNEL RDLOCK_SHARED_DISK
export RDLOCK_BOOT

# Stock kernel: RDMA and virtio are modular; the list is in dependency order.
if [ -f /etc/rdlock/modules ]; then
	while read -r ko; do
		insmod "$ko" || fail "insmod $ko failed"
	done < /etc/rdlock/modules
fi

# This node's address is word number RDLOCK_NODE_ID (from 0) of the list.
set -- $RDLOCK_NODE_ADDRS
shift "$RDLOCK_NODE_ID"
addr=$1

ip link set lo up
ip link set eth0 up || fail "cannot bring up eth0"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add failed"
ip addr add "$addr/24" dev eth0 || fail "cannot configure eth0"

# The IPv4 RoCE v2 GID shows up asynchronously; tests need its index
# (e.g. perftest -x).
gids=/sys/class/infiniband/rxe0/ports/1
RDLOCK_GID_INDEX=
tries=0
while [ -z "$RDLOCK_GID_INDEX" ]; do
	for gid in "$gids"/gids/*; do
		idx=${gid##*/}
		case $(cat "$gid" 2>/dev/null) in
		0000:0000:0000:0000:0000:ffff:*)
			[ "$(cat "$gids/gid_attrs/types/$idx" 2>/dev/null)" = "RoCE v2" ] &&
				RDLOCK_GID_INDEX=$idx && break
			;;
		esac
	done
	[ -n "$RDLOCK_GID_INDEX" ] && break
	tries=$((tries + 1))
	[ $tries -lt 100 ] || fail "no IPv4 RoCE v2 GID on rxe0"
	sleep 0.1
done
export RDLOCK_GID_INDEX

# Start barrier.  Peers boot at different speeds: a node is "up" once its
# rxe0 is usable (port UP_PORT answers) and "started" once it has seen all
# its peers up (port STARTED_PORT answers), "finished" once its command
# has ended (port FINISHED_PORT answers).  Ports 7769-7771 are taken.
UP_PORT=7770
STARTED_PORT=7771
FINISHED_PORT=7769
nc -ll -p $UP_PORT -e true &

# nc's -w bounds only the connect: a peer that powers off between accept
# and close would keep nc waiting for the close for minutes.
answers() { timeout 3 nc -w 1 "$1" "$2" < /dev/null > /dev/null 2>&1; }

for peer in $RDLOCK_NODE_ADDRS; do
	[ "$peer" = "$addr" ] && continue
	tries=0
	until answers "$peer" $UP_PORT; do
		tries=$((tries + 1))
		if [ $tries -ge 120 ]; then
			ip neigh > $OUT
			# busybox ip has no -s: the counters tell a dead RX.
			cat /proc/net/dev > $OUT
			fail "peer $peer is not up"
		fi
		sleep 1
	done
done
nc -ll -p $STARTED_PORT -e true &

# Switching root: a command that prepared a root file system at NEWROOT
# (a mount point) and wrote "NEWROOT INIT" to $SWITCH, and succeeded, is
# followed by INIT (systemd, say) as PID 1 in NEWROOT, with this init's
# /dev, /proc and /sys; its own children, the barriers' listeners among
# them, run on. What runs there reports the exit status on ttyS1 and
# powers off, or restarts: this script is done.
SWITCH=/tmp/rdlock-switch-root
switch_root_to()
{
	read -r newroot newinit < $SWITCH
	if [ -z "$newroot" ] || [ ! -x "$newroot$newinit" ]; then
		fail "$SWITCH: not NEWROOT INIT"
	fi
	echo "rdlock-init: switching root to $newroot, init $newinit" > /dev/kmsg
	# /dev last: fail() writes to $OUT.
	for m in /sys /proc /dev; do
		mount --move $m "$newroot$m" || fail "cannot move $m to $newroot"
	done
	exec 3>&-
	exec switch_root "$newroot" "$newinit"
}

cd /rdlock || fail "no /rdlock"
kmemleak_scan clear
sh /etc/rdlock/cmd < /dev/null > $OUT 2>&1 3>&-
rc=$?
[ $rc -eq 0 ] && [ -f $SWITCH ] && switch_root_to
kmemleak_scan
report $rc

# End barrier: do not power off while a peer may still need us, i.e.
# until every peer has finished its command too or is gone (dead).  A
# test's out-of-band signals (lib.sh's rdl_signal) are listeners on the
# sender, so a node that left as soon as its own command ended could take
# a signal down before a slower peer saw it.
nc -ll -p $FINISHED_PORT -e true &
echo "rdlock-init: end barrier" > /dev/kmsg
for peer in $RDLOCK_NODE_ADDRS; do
	[ "$peer" = "$addr" ] && continue
	until answers "$peer" $FINISHED_PORT; do
		ping -c 1 -W 1 "$peer" > /dev/null 2>&1 || break
		sleep 0.5
	done
done

power_off
