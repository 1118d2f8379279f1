#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A cluster run from the Debian packages, on 3 guests (scripts/deb-test.sh
# installs rdlock-dkms and rdlock-tools in a chroot and puts what they
# installed in $RDL/pkg: DKMS's rdlock.ko and ocfs2_stack_rdlock.ko, the
# package's rdlockctl, unit and example configuration):
#   packaged.sh VERSION
# Each node loads the packaged modules (VERSION, no fault injection) and
# the OCFS2 plug-in; node 0 makes the cluster key with "rdlockctl keygen"
# and the others copy it, as an admin copies corosync's authkey; every
# node takes the example configuration as it is shipped (its addresses
# are the guests') and runs the unit's own ExecStart lines. Then the
# example's lockspace "jobs" excludes: node 0 holds a name, nodes 1 and
# 2 find it busy, node 1 gets it once node 0 lets go. Node 0 then mounts
# OCFS2 through the packaged plug-in: the disk made for the example's
# cluster name ("rdlock", /dev/vda) mounts, the name compared; one made
# for another cluster ("elsewhere", /dev/vdb) is refused. The unit's
# ExecStopPost takes the node down.

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

VERSION=$1
PKG=$RDL/pkg
UNIT=$PKG/rdlock.service
KEY=/etc/rdlock/cluster.key
P_KEY=7880
P_KEYSRV=7885
P_HELD=7881
P_SEEN=7882
P_FREE=7883
P_END=7884

[ -n "$VERSION" ] || { echo "usage: $0 VERSION" >&2; exit 2; }

# The module $1 loaded is the package's version $VERSION.
version_is() {
	v_got=$(cat "/sys/module/$1/version") || return 1
	[ "$v_got" = "$VERSION" ] || {
		echo "# $1: version $v_got, not $VERSION"
		return 1
	}
}

# A production build: rdlock's debugfs, none of the tests' fault-injection
# knobs in it.
no_fault_injection() {
	[ -r /sys/kernel/debug/rdlock/cluster ] &&
	! ls /sys/kernel/debug/rdlock/inject_* > /dev/null 2>&1
}

# rdlockctl's version, then the loaded module's.
tool_version() {
	t_v=$(rdlockctl --version) || return 1
	[ "$t_v" = "rdlockctl $VERSION
rdlock module $VERSION" ] || {
		echo "$t_v" | sed 's/^/# /'
		return 1
	}
}

plugin_loaded() {
	grep -qw user /sys/fs/ocfs2/loaded_cluster_plugins
}

# The unit's lines KEY= ($1), rdlockctl from the package run as the unit
# would (the package's is first on PATH, in $RDL/bin).
unit_run() {
	u_lines=$(sed -n "s|^$1=/usr/sbin/rdlockctl |rdlockctl |p" "$UNIT")
	[ -n "$u_lines" ] || { echo "# no $1 line in $UNIT"; return 1; }
	echo "$u_lines" | while read -r u_cmd; do
		echo "# $1: $u_cmd"
		# One word per argument, as systemd splits the line.
		# shellcheck disable=SC2086
		$u_cmd || exit 1
	done
}

key_ok() {
	[ "$(wc -c < "$KEY")" -eq 32 ] &&
	[ "$(stat -c %a "$KEY")" = 600 ]
}

key_shown() {
	rdlockctl status | grep -q "^cluster key: set"
}

# Nodes 1 and 2 found the name node 0 holds busy.
both_saw() {
	rdl_wait_signal 1 $P_SEEN 120 && rdl_wait_signal 2 $P_SEEN 120
}

# OCFS2's user stack with no daemon (Documentation/rdlock/ocfs2.rst):
# the disks' label, and an unmount helper that has nothing to do.
ocfs2_ready() {
	echo pcmk > /sys/fs/ocfs2/cluster_stack &&
	echo /bin/true > /proc/sys/fs/ocfs2/nm/hb_ctl_path &&
	mkdir -p /mnt/ocfs2
}

# The disk of another cluster: not mounted, and the plug-in said why.
other_refused() {
	if mount -t ocfs2 -o cluster_stack=pcmk /dev/vdb /mnt/ocfs2; then
		umount /mnt/ocfs2
		echo "# /dev/vdb (cluster elsewhere) mounted"
		return 1
	fi
	dmesg | grep -q 'ocfs2_stack_rdlock: .*cluster "elsewhere" is not this node'
}

# The disk of this cluster: mounted through the plug-in, its name
# compared, a file written and read back.
own_mounted() {
	mount -t ocfs2 -o cluster_stack=pcmk /dev/vda /mnt/ocfs2 || return 1
	o_rc=0
	{ echo packaged > /mnt/ocfs2/f && [ "$(cat /mnt/ocfs2/f)" = packaged ] &&
	  [ "$(cat /sys/fs/ocfs2/active_cluster_plugin)" = user ] &&
	  dmesg | grep -q "ocfs2_stack_rdlock: .* node 0 connected" &&
	  ! dmesg | grep -q "ocfs2_stack_rdlock: .* not checked"; } || o_rc=1
	umount /mnt/ocfs2 && return $o_rc
}

if ! rdl_check_env || [ "$RDLOCK_NR_NODES" -ne 3 ]; then
	rdl_not_ok "packaged.sh needs exactly 3 nodes"
	rdl_finish
	exit 1
fi

if rdl_step "insmod the packaged rdlock.ko" insmod "$PKG/rdlock.ko" &&
   rdl_step "rdlock.ko is version $VERSION" version_is rdlock &&
   rdl_step "rdlock.ko has no fault injection" no_fault_injection &&
   rdl_step "rdlockctl --version: $VERSION, the module's too" tool_version &&
   rdl_step "insmod the packaged ocfs2_stack_rdlock.ko" \
	insmod "$PKG/ocfs2_stack_rdlock.ko" &&
   rdl_step "ocfs2_stack_rdlock.ko is version $VERSION" \
	version_is ocfs2_stack_rdlock &&
   rdl_step "OCFS2's plug-in \"user\" registered" plugin_loaded &&
   mkdir -p /etc/rdlock &&
   { [ "$RDLOCK_NODE_ID" -ne 0 ] ||
     rdl_step "node 0: rdlockctl keygen" rdlockctl keygen; } &&
   rdl_step "the cluster key shared" rdl_share_key "$KEY" $P_KEYSRV &&
   rdl_step "the key: 32 bytes, mode 0600" key_ok &&
   rdl_step "the example configuration, as shipped" \
	cp "$PKG/rdlock.conf.example" /etc/rdlock/rdlock.conf &&
   rdl_signal $P_KEY &&
   rdl_step "every node has the key" rdl_wait_all_signals $P_KEY 120 &&
   rdl_step "the unit's ExecStart lines" unit_run ExecStart &&
   rdl_step "status: cluster key set" key_shown &&
   rdl_step "the example's lockspace jobs exists" \
	test -d /sys/kernel/debug/rdlock/lockspaces/jobs
then
	case $RDLOCK_NODE_ID in
	0)
		rdl_step "hold x in jobs" rdl_hold jobs x &&
		rdl_signal $P_HELD &&
		rdl_step "nodes 1 and 2 found x busy" both_saw &&
		rdl_step "x let go" rdl_release_all &&
		rdl_signal $P_FREE &&
		rdl_step "OCFS2: stack pcmk, unmount helper" ocfs2_ready &&
		rdl_step "OCFS2: a disk of cluster elsewhere refused" \
			other_refused &&
		rdl_step "OCFS2: a disk of cluster rdlock mounted, used" \
			own_mounted
		;;
	*)
		rdl_step "node 0 holds x" rdl_wait_signal 0 $P_HELD 120 &&
		rdl_step "x in jobs busy" rdl_busy jobs x &&
		rdl_signal $P_SEEN &&
		rdl_step "node 0 let x go" rdl_wait_signal 0 $P_FREE 120 &&
		if [ "$RDLOCK_NODE_ID" -eq 1 ]; then
			rdl_step "x in jobs granted" rdl_free jobs x
		fi
		;;
	esac
fi
rdl_signal $P_END
rdl_step "every node done" rdl_wait_all_signals $P_END 300
# The unit's condition: ConditionPathExists=/etc/rdlock/rdlock.conf.
[ -e /etc/rdlock/rdlock.conf ] &&
	rdl_step "the unit's ExecStopPost line" unit_run ExecStopPost
rdl_loaded ocfs2_stack_rdlock &&
	rdl_step "rmmod ocfs2_stack_rdlock" rdl_rmmod ocfs2_stack_rdlock
rdl_loaded rdlock && rdl_step "rmmod rdlock" rdl_rmmod rdlock
rdl_finish
