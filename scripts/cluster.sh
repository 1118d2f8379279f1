#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cluster.sh - boot N QEMU guests on a private network and run a command on
# each of them.
#
# usage: cluster.sh [options] -- CMD [ARGS...]
#
#   --kernel debug|stock  guest kernel (see kernel.sh; default stock)
#   --nodes N             number of guests, 1..8 (default 3)
#   --timeout SEC         limit for the whole run from boot on (default 300)
#   --payload DIR         copied to /rdlock in the guests (the command's cwd)
#   --bin PATH            extra host binary for the guests' PATH (repeatable)
#   --module NAME         extra stock kernel module, loaded with its
#                         dependencies at boot (repeatable; the debug kernel
#                         has what it needs built in)
#   --shared-disk IMG     attach raw image IMG to every guest as virtio disk
#                         /dev/vda, shared (share-rw=on, cache=none, 4 KiB
#                         logical blocks); repeatable: the second is
#                         /dev/vdb, and so on
#   --root DIR            share directory DIR read-only with every guest
#                         over virtio-9p, mount tag rdlock-root (stock
#                         kernel: 9p and overlayfs are loaded at boot), a
#                         root file system for the command to switch to
#                         (guest-init.sh, "Switching root")
#   --log-dir DIR         where logs go (default: a fresh dir under /tmp)
#   --mem MB              guest memory (default 1024 debug, 512 stock)
#   --smp N               guest CPUs (default 1)
#   -v                    stream the guests' command output to stderr
#
# Guest i is 10.77.0.(i+1) on eth0 and has a soft-RoCE device rxe0.  Its
# /dev/ttyS2 carries requests to the host (host-ctl.py: kill, freeze or cut
# a guest; selftests/guest/host-ctl.sh); a guest killed that way counts as
# finished, its results up to the kill as they are (exit=killed), and so
# does a guest whose restart by itself host-ctl.py awaited and saw
# (gone: a self-fence, exit=reset).  With
# --shared-disk, RDLOCK_SHARED_DISK=/dev/vda.  The command sees RDLOCK_NODE_ID, RDLOCK_NR_NODES, RDLOCK_NODE_ADDRS,
# RDLOCK_KERNEL and RDLOCK_GID_INDEX (rxe0's IPv4 RoCE v2 GID).  Its output
# is logged to <log-dir>/node<i>.out, the kernel log to node<i>.console.
# The guests' init keeps TCP ports 7769 to 7771 for its start/end barriers.
#
# Prints "RESULT node=<i> passed=<p> failed=<f> skipped=<s> exit=<rc>
# splat=<0|1>" per node and "cluster: P passed, F failed, S skipped", also
# written to <log-dir>/summary.  Exits non-zero if any command failed, any
# guest did not finish, any TAP test failed or any kernel splat was logged.

set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SUBNET=10.77.0
# Kernel modules the stock guests need for rxe; load order is resolved
# with modprobe.  The debug kernel has all of these built in.
STOCK_MODULES=(virtio_pci virtio_net crc32_generic ib_core ib_uverbs
	       rdma_cm rdma_ucm rdma_rxe dlm)
# The libibverbs provider for rxe is dlopen()ed, so ldd cannot find it.
VERBS_PROVIDERS=(/usr/lib/x86_64-linux-gnu/libibverbs/librxe-*.so)
VERBS_DRIVERS=(/etc/libibverbs.d/rxe.driver)

usage() { rdl_usage '/^# *-v/'; }

kernel=stock
nodes=3
timeout=300
payload=
bins=()
modules=()
shared_disks=()
root_dir=
log_dir=
mem=
smp=1
verbose=0

while [ $# -gt 0 ]; do
	case $1 in
	--kernel)	kernel=${2:?}; shift ;;
	--nodes)	nodes=${2:?}; shift ;;
	--timeout)	timeout=${2:?}; shift ;;
	--payload)	payload=${2:?}; shift ;;
	--bin)		bins+=("${2:?}"); shift ;;
	--module)	modules+=("${2:?}"); shift ;;
	--shared-disk)	shared_disks+=("${2:?}"); shift ;;
	--root)		root_dir=${2:?}; shift ;;
	--log-dir)	log_dir=${2:?}; shift ;;
	--mem)		mem=${2:?}; shift ;;
	--smp)		smp=${2:?}; shift ;;
	-v)		verbose=1 ;;
	--)		shift; break ;;
	*)		usage ;;
	esac
	shift
done
[ $# -gt 0 ] || usage

case $kernel in
debug)	: "${mem:=1024}" ;;
stock)	: "${mem:=512}" ;;
*)	die "--kernel must be debug or stock" ;;
esac
[[ $nodes =~ ^[1-8]$ ]] || die "--nodes must be 1..8"
[[ $timeout =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
[[ $mem =~ ^[0-9]+$ && $smp =~ ^[0-9]+$ ]] || die "bad --mem or --smp"
[ -z "$payload" ] || [ -d "$payload" ] || die "no such directory: $payload"
[ ${#shared_disks[@]} -le 8 ] || die "at most 8 shared disks"
for ((i = 0; i < ${#shared_disks[@]}; i++)); do
	[ -f "${shared_disks[i]}" ] || die "no such image: ${shared_disks[i]}"
	shared_disks[i]=$(realpath "${shared_disks[i]}")
done
if [ ${#shared_disks[@]} -gt 0 ]; then
	# The stock kernel's virtio_blk is a module.
	modules+=(virtio_blk)
fi
root_share=()
if [ -n "$root_dir" ]; then
	[ -d "$root_dir" ] || die "no such directory: $root_dir"
	[ "$kernel" = stock ] || die "--root needs the stock kernel"
	root_share=(-virtfs "local,path=$(realpath "$root_dir"),mount_tag=rdlock-root,security_model=none,readonly=on,multidevs=remap")
	modules+=(9p 9pnet_virtio overlay)
fi

"$SCRIPTS/host-setup.sh"
kernel_env=$("$SCRIPTS/kernel.sh" "$kernel")
eval "$kernel_env"

if [ -n "$log_dir" ]; then
	log_dir=$(rdl_log_dir "$log_dir")
	rm -rf "$log_dir"/node*.{out,console,qemu,splats,netstall,txq} \
		"$log_dir"/node*.{killed,reset,held,boot} "$log_dir"/node*.qemu.boot* \
		"$log_dir/host-ctl.log" \
		"$log_dir/net-watch.log" \
		"$log_dir/summary" \
		"$log_dir/attempt1"
else
	log_dir=$(rdl_log_dir "" /tmp/rdlock-cluster.XXXXXX)
fi
log "logs in $log_dir"

# Everything below lives in $work and is torn down by cleanup(), also on
# timeout, error or Ctrl-C.
work=$(mktemp -d /tmp/rdlock-work.XXXXXX)
qemu_pids=()
tail_pids=()

cleanup()
{
	local pid

	for pid in "${qemu_pids[@]}" "${tail_pids[@]}" ${watch_pid:-} ${ctl_pid:-}; do
		kill "$pid" 2> /dev/null || true
	done
	stop_net
	wait 2> /dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Quote an argument for the guest's busybox sh.
sh_quote() { printf "'%s' " "${1//\'/\'\\\'\'}"; }

# Copy a host file to the same path in the initramfs, dereferencing links.
install_file()
{
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}

# Install the shared libraries a dynamic ELF file needs.
install_libs()
{
	local lib

	ldd "$1" > "$work/ldd" 2>&1 || return 0	# static or not a program
	if grep -q 'not found' "$work/ldd"; then
		cat "$work/ldd" >&2
		die "missing libraries for $1"
	fi
	for lib in $(grep -o '/[^ ]*' "$work/ldd"); do
		[ -e "$root$lib" ] || install_file "$lib"
	done
}

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

build_initramfs()
{
	local f rel addrs='' i

	root=$work/root
	mkdir -p "$root"/{bin,sbin,etc/rdlock,proc,sys,dev,tmp,rdlock}

	# busybox provides the shell and all basic tools as applet links.
	cp /bin/busybox "$root/bin/busybox"
	for f in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$f" ] || ln -s busybox "$root/bin/$f"
	done
	install -m 755 "$SCRIPTS/guest-init.sh" "$root/init"

	# Host programs: iproute2's rdma, the caller's extras, rxe provider.
	for f in /usr/bin/rdma "${bins[@]}"; do
		[ -x "$f" ] || die "not an executable: $f"
		install -m 755 "$f" "$root/bin/$(basename "$f")"
		install_libs "$f"
	done
	for f in "${VERBS_PROVIDERS[@]}" "${VERBS_DRIVERS[@]}"; do
		[ -e "$f" ] || die "missing $f (rdma-core/ibverbs-providers)"
		install_file "$f"
		install_libs "$f"
	done

	if [ -n "$payload" ]; then
		cp -a "$payload/." "$root/rdlock/"
		while IFS= read -r -d '' f; do
			is_elf "$f" && install_libs "$f"
		done < <(find "$root/rdlock" -type f -perm /111 -print0)
	fi

	# Stock kernel modules in load order, decompressed if need be.
	# Accelerated crypto modules (arch/x86/crypto) are skipped: they come
	# in as soft dependencies (crc32c-intel of jbd2, for ocfs2), and
	# TCG's CPU lacks their instructions, so their insmod fails; the
	# generic versions listed beside them serve.
	if [ -n "$MODROOT" ] && [ "$kernel" = stock ]; then
		for f in "${STOCK_MODULES[@]}" "${modules[@]}"; do
			modprobe -d "$MODROOT" -S "$KVER" --show-depends "$f"
		done | awk '$1 == "insmod" && $2 !~ "/arch/x86/crypto/" &&
			    !seen[$2]++ { print $2 }' |
		while read -r f; do
			rel=/lib/modules/$KVER/${f#"$MODROOT"/lib/modules/"$KVER"/}
			rel=${rel%.xz}
			rel=${rel%.zst}
			mkdir -p "$root$(dirname "$rel")"
			case $f in
			*.xz)	xz -dc "$f" > "$root$rel" ;;
			*.zst)	zstd -qdc "$f" > "$root$rel" ;;
			*)	cp "$f" "$root$rel" ;;
			esac
			echo "$rel" >> "$root/etc/rdlock/modules"
		done
		# What depmod reads beside the modules, for a root the
		# command installs them in (selftests/guest/fstab.sh).
		for f in modules.order modules.builtin modules.builtin.modinfo; do
			cp "$MODROOT/lib/modules/$KVER/$f" "$root/lib/modules/$KVER/"
		done
	fi

	for ((i = 0; i < nodes; i++)); do
		addrs+="${addrs:+ }$SUBNET.$((i + 1))"
	done
	cat > "$root/etc/rdlock/env" <<-EOF
	RDLOCK_NR_NODES=$nodes
	RDLOCK_NODE_ADDRS="$addrs"
	RDLOCK_KERNEL=$kernel
	RDLOCK_SHARED_DISK=${shared_disks[0]:+/dev/vda}
	EOF
	{
		printf 'exec '
		for f in "${cmd[@]}"; do
			sh_quote "$f"
		done
		echo
	} > "$root/etc/rdlock/cmd"

	(cd "$root" && find . | cpio -o -H newc --quiet) > "$work/initramfs.cpio"
}

# The guests' network, fresh for every boot of the cluster (RDLOCK_NET):
#   mcast (default): QEMU's socket netdev on a UDP multicast group of the
#       host's loopback, a port of its own per run and boot.
#   vde: a vde_switch. Seen under load: a guest's virtio-net transmit queue
#       stopped for good (NETDEV WATCHDOG) while the others ran on, and
#       lock_test lost that node; not seen in runs on multicast.
# mcast falls back to vde where the loopback cannot do multicast.
net=${RDLOCK_NET:-mcast}
switch=
netdev=
start_net()
{
	if [ "$net" = mcast ] && ! "$SCRIPTS/mcast-probe.py"; then
		log "no multicast on the loopback: using vde_switch"
		net=vde
	fi
	case $net in
	mcast)
		netdev="socket,id=n0,localaddr=127.0.0.1"
		netdev+=",mcast=230.77.0.1:$((20000 + ($$ * 4 + $1) % 40000))"
		;;
	vde)
		switch=$work/switch$1
		# -d: vde_switch would exit on EOF of its console on stdin
		# otherwise.
		vde_switch -d -s "$switch" -p "$switch.pid" < /dev/null ||
			die "cannot start vde_switch"
		netdev="vde,sock=$switch,id=n0"
		;;
	*) die "RDLOCK_NET: mcast or vde, not $net" ;;
	esac
}

stop_net()
{
	if [ -n "$switch" ] && [ -f "$switch.pid" ]; then
		kill "$(cat "$switch.pid")" 2> /dev/null || true
	fi
}

# Guest kernel command line, shared by all nodes.  acpi=noirq: evaluating
# ACPI PCI interrupt routing takes ~25 s under TCG with KASAN.  Emulated
# guests on a loaded host stall for many seconds without any bug, so the
# soft lockup (2 * watchdog_thresh) and RCU stall detectors get more slack.
CMDLINE="console=ttyS0 panic=-1 mitigations=off acpi=noirq"
CMDLINE+=" watchdog_thresh=30 rcupdate.rcu_cpu_stall_timeout=60"

# start_guest I [BOOT]: BOOT 2 is node I's power-on after a kill
# (host-ctl.py boot): its kernel is told rdlock_guest.boot=2 and its
# serial logs are appended to, the first boot's results and splats kept.
start_guest()
{
	local i=$1 boot=${2:-1} d disk=() serials

	# One image for every guest: share-rw=on lets several QEMUs write it,
	# cache=none keeps the host's page cache out of the way (every write
	# reaches the file at once, every read sees the others' writes). The
	# guest sees 4 KiB logical blocks: writes by two guests to different
	# 512-byte sectors of one 4 KiB block of the image lose each other's
	# data, so no guest may write less than a 4 KiB block (o2hb's
	# heartbeat slot is one logical block per node).
	# Disks in the order given: /dev/vda, /dev/vdb, ... (PCI slot order).
	for ((d = 0; d < ${#shared_disks[@]}; d++)); do
		disk+=(-drive "file=${shared_disks[d]},if=none,id=sd$d,format=raw,cache=none"
		       -device "virtio-blk-pci,drive=sd$d,share-rw=on,logical_block_size=4096,physical_block_size=4096")
	done

	serials=(-serial "file:$log_dir/node$i.console"
		 -serial "file:$log_dir/node$i.out")
	if [ "$boot" -gt 1 ]; then
		serials=(-chardev "file,id=con,path=$log_dir/node$i.console,append=on"
			 -serial chardev:con
			 -chardev "file,id=out,path=$log_dir/node$i.out,append=on"
			 -serial chardev:out)
	fi

	# -nodefaults: no default NIC, VGA or serial; the only network is the
	# private one.  -no-reboot with panic=-1 makes a panic end QEMU.
	qemu-system-x86_64 -accel tcg -nodefaults -no-reboot -display none \
		-m "$mem" -smp "$smp" \
		-kernel "$KERNEL_IMAGE" -initrd "$work/initramfs.cpio" \
		-append "$CMDLINE rdlock_guest.node=$i rdlock_guest.boot=$boot" \
		"${serials[@]}" \
		-serial "unix:$work/ctl$i,server=on,wait=off" \
		-monitor "unix:$work/monitor$i,server=on,wait=off" \
		-monitor "unix:$work/hmon$i,server=on,wait=off" \
		-netdev "$netdev" \
		-device "virtio-net-pci,id=nic0,netdev=n0,mac=52:54:00:77:00:$(printf %02x $((i + 1)))" \
		"${disk[@]}" "${root_share[@]}" \
		< /dev/null > "$log_dir/node$i.qemu$([ "$boot" -gt 1 ] && echo ".boot$boot")" 2>&1 &
	qemu_pids[i]=$!
}

# A killed node whose power-on host-ctl.py asked for (DIR/nodeI.boot),
# once its QEMU is gone: started again, no longer killed. True if one was.
boot_killed()
{
	local i booted=1

	for ((i = 0; i < nodes; i++)); do
		[ -f "$log_dir/node$i.boot" ] || continue
		kill -0 "${qemu_pids[i]}" 2> /dev/null && continue
		wait "${qemu_pids[i]}" 2> /dev/null || true
		log "node $i: powered on again"
		start_guest "$i" 2
		rm -f "$log_dir/node$i.boot" "$log_dir/node$i.killed" \
			"$log_dir/node$i.reset"
		booted=0
	done
	return $booted
}

# A guest's virtio-net transmit queue that stopped for good has been seen
# under TCG on both networks, about once in ten runs of the busiest step:
# that guest sends nothing more, its peers' tests fail or wait out the
# step's timeout, and rxe's QP teardown warns about its packets that never
# left.  net-watch.py tells it from QEMU's side within NET_STALL_SEC (the
# guest's own NETDEV WATCHDOG fires only once its ring is full, minutes
# later) and keeps QEMU's view of that NIC in node<i>.netstall.  How far
# each console had got then is noted: what a guest logged before that is
# the part of the boot that still counts.
NET_STALL_SEC=15
watch_pid=
ctl_pid=
net_stall=
net_stall_lines=()
check_net_stall()
{
	local i

	[ -z "$net_stall" ] || return 0
	for ((i = 0; i < nodes; i++)); do
		[ -f "$log_dir/node$i.netstall" ] && break
		grep -qs 'NETDEV WATCHDOG' "$log_dir/node$i.console" && break
	done
	[ $i -lt $nodes ] || return 0
	net_stall=$i
	for ((i = 0; i < nodes; i++)); do
		net_stall_lines[i]=$(wc -l < "$log_dir/node$i.console")
	done
	log "node $net_stall: its virtio-net transmit queue stalled; QEMU's view in $log_dir/node$net_stall.netstall"
	[ -f "$log_dir/node$net_stall.netstall" ] && return 0
	# A monitor serves one client at a time: the watcher's goes first.
	kill "$watch_pid" 2> /dev/null || true
	wait "$watch_pid" 2> /dev/null || true
	"$SCRIPTS/qemu_monitor.py" "$work/monitor$net_stall" \
		"info network" \
		"info virtio-queue-status /machine/peripheral/nic0/virtio-backend 1" \
		> "$log_dir/node$net_stall.netstall" 2>&1 || true
}

# Have all guests reported their command's exit status?
all_exited()
{
	local i

	for ((i = 0; i < nodes; i++)); do
		[ -f "$log_dir/node$i.killed" ] && continue
		[ -f "$log_dir/node$i.reset" ] && continue
		grep -q '^RDLOCK-GUEST-EXIT ' "$log_dir/node$i.out" || return 1
	done
}

# Wait for all guests to power off; kill the stragglers at the deadline,
# or POWEROFF_GRACE seconds after the last guest reported its exit status:
# its end barrier and power-off take seconds, and a guest that hangs on the
# way down would otherwise hold the step until its timeout. Its results are
# complete by then; the kill is logged. Well below the guests' 60 s RCU
# stall timeout: a stock guest of the demo hung in virtio-net's NAPI poll
# after "Preparing to enter system sleep state S5" (its rdlock modules long
# unloaded), and the RCU stall it reported at 60 s failed the step.
POWEROFF_GRACE=20

wait_guests()
{
	local deadline=$((SECONDS + timeout)) pid alive exited=

	while :; do
		alive=0
		for pid in "${qemu_pids[@]}"; do
			kill -0 "$pid" 2> /dev/null && alive=1
		done
		# A guest powered on again has its exit to report.
		boot_killed && exited=
		[ $alive -eq 1 ] || return 0
		check_net_stall
		# Nothing a boot does after a stall counts: the first is booted
		# again, the second fails now rather than at the timeout.
		if [ -n "$net_stall" ]; then
			kill "${qemu_pids[@]}" 2> /dev/null || true
			wait "${qemu_pids[@]}" 2> /dev/null || true
			return 0
		fi
		if [ -z "$exited" ] && all_exited; then
			exited=$SECONDS
		fi
		if [ -n "$exited" ] &&
		   [ $((SECONDS - exited)) -ge $POWEROFF_GRACE ]; then
			log "every guest reported its exit but not all powered off within $POWEROFF_GRACE s; killing them"
			kill "${qemu_pids[@]}" 2> /dev/null || true
			wait "${qemu_pids[@]}" 2> /dev/null || true
			return 0
		fi
		if [ $SECONDS -ge $deadline ]; then
			log "timeout after $timeout s, killing the guests"
			kill "${qemu_pids[@]}" 2> /dev/null || true
			wait "${qemu_pids[@]}" 2> /dev/null || true
			return 0
		fi
		sleep 1
	done
}

# Count node $1's results into passed/failed/skipped/rc/splat.
node_result()
{
	local i=$1
	local out=$log_dir/node$i.out

	local earlier=()

	passed=0 failed=0 skipped=0 splat=0
	rc=$(sed -n 's/^RDLOCK-GUEST-EXIT \([0-9]*\).*/\1/p' "$out" | tail -n 1)
	# Killed on a guest's request (host-ctl.py): it was meant to end so.
	[ -n "$rc" ] || [ ! -f "$log_dir/node$i.killed" ] || rc=killed
	# Restarted by itself, as a test awaited (host-ctl.py gone).
	[ -n "$rc" ] || [ ! -f "$log_dir/node$i.reset" ] || rc=reset
	# A splat during a first boot that was retried fails the step too;
	# after a network stall, one logged before the stall.
	if [ -f "$log_dir/attempt1/node$i.console-before-stall" ]; then
		earlier=(--scan-only "$log_dir/attempt1/node$i.console-before-stall")
	elif [ -f "$log_dir/attempt1/node$i.console" ]; then
		earlier=(--scan-only "$log_dir/attempt1/node$i.console")
	fi
	eval "$("$SCRIPTS/tapcount.py" --scan-only "$log_dir/node$i.console" \
		"${earlier[@]}" "$out" 2> "$log_dir/node$i.splats")" || true

	# A guest that crashed, hung or failed silently is a failure too.
	if { [ "${rc:-none}" != 0 ] && [ "$rc" != killed ] &&
	     [ "$rc" != reset ]; } ||
	   [ "$splat" = 1 ]; then
		[ "$failed" -gt 0 ] || failed=1
	fi
}

# Boot attempt $1 of the cluster on a network of its own; wait for the end.
boot_cluster()
{
	local i start monitors

	attempt=$1
	start_net "$1"
	net_stall=
	net_stall_lines=()
	qemu_pids=()
	tail_pids=()
	log "booting $nodes $kernel guest(s) ($KVER)"
	start=$SECONDS
	for ((i = 0; i < nodes; i++)); do
		: > "$log_dir/node$i.out"
		start_guest "$i"
	done
	if [ $verbose -eq 1 ]; then
		for ((i = 0; i < nodes; i++)); do
			# sed must get our stderr: redirect tail's only after that.
			tail -n +1 -F "$log_dir/node$i.out" \
				> >(sed -u "s/^/node$i: /" >&2) 2> /dev/null &
			tail_pids+=($!)
		done
	fi
	monitors=()
	for ((i = 0; i < nodes; i++)); do
		monitors+=("$work/monitor$i")
	done
	"$SCRIPTS/net-watch.py" "$log_dir" "$NET_STALL_SEC" "${monitors[@]}" \
		2> "$log_dir/net-watch.log" &
	watch_pid=$!
	"$SCRIPTS/host-ctl.py" "$log_dir" "$work" "$nodes" \
		2> "$log_dir/host-ctl.err" &
	ctl_pid=$!
	wait_guests
	kill "$watch_pid" "$ctl_pid" 2> /dev/null || true
	wait "$watch_pid" "$ctl_pid" 2> /dev/null || true
	log "guests finished after $((SECONDS - start)) s"
	if [ ${#tail_pids[@]} -gt 0 ]; then
		sleep 0.5
		kill "${tail_pids[@]}" 2> /dev/null || true
	fi
	stop_net
}

# guest-init's start barrier gave up on a peer: that node ran no command,
# and its peers' commands ran without it. Seen once in about a hundred
# boots under TCG (one guest stopped receiving during boot).
network_failed()
{
	grep -qs '^rdlock-init: peer .* is not up$' "$log_dir"/node*.out
}

# Keep the first boot's logs in attempt1/ and boot once more.
reboot_cluster()
{
	local i a1=$log_dir/attempt1

	log "$1; booting once more (the first boot's logs are in $a1)"
	rm -rf "$a1"
	mkdir "$a1"
	mv "$log_dir"/node*.{out,console,qemu} "$a1/"
	mv "$log_dir"/node*.{txq,netstall,killed,reset,held,boot} "$log_dir/net-watch.log" \
		"$log_dir"/host-ctl.{log,err} "$a1/" 2> /dev/null || true
	if [ -n "$net_stall" ]; then
		# What the kernels logged up to the stall still counts.
		for ((i = 0; i < nodes; i++)); do
			head -n "${net_stall_lines[i]}" "$a1/node$i.console" \
				> "$a1/node$i.console-before-stall"
		done
	fi
	boot_cluster 2
}

cmd=("$@")
build_initramfs
boot_cluster 1
if network_failed; then
	reboot_cluster "the guest network did not form before the command could run"
elif [ -n "$net_stall" ]; then
	reboot_cluster "node $net_stall's network stalled"
fi

status=0
total_passed=0
total_failed=0
total_skipped=0
for ((i = 0; i < nodes; i++)); do
	node_result "$i"
	echo "RESULT node=$i passed=$passed failed=$failed skipped=$skipped exit=${rc:-none} splat=$splat"
	[ "$failed" -eq 0 ] || status=1
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
	total_skipped=$((total_skipped + skipped))
	if [ -s "$log_dir/node$i.splats" ]; then
		log "node $i kernel splat (all in $log_dir/node$i.splats):"
		head -n 5 "$log_dir/node$i.splats" >&2
	fi
done > "$log_dir/summary"
echo "cluster: $total_passed passed, $total_failed failed, $total_skipped skipped" >> "$log_dir/summary"
cat "$log_dir/summary"
log "logs in $log_dir"
exit $status
