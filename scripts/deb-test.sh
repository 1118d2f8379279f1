#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-test.sh - the Debian packages of debian/, as root. Builds rdlock-dkms
# and rdlock-tools from this tree with dpkg-buildpackage, and once more as
# version VERSION+debtest (the upgrade). Then, in a chroot that is an
# overlay of this host's root (writes go to a tmpfs: the host is left as
# it was), installs them with dpkg: DKMS builds the modules for the stock
# guests' kernel, whose headers are installed (linux-headers-amd64).
# Checks what they installed; boots 3 stock guests that run a cluster from
# it (selftests/guest/packaged.sh: the packaged modules, rdlockctl, unit
# and example configuration); upgrades to the second build and checks it
# replaced the first; purges both and checks that nothing is left.
#   deb-test.sh [--payload DIR] [--log-dir DIR]
#     --payload DIR  the stock guests' payload (scripts/payload.sh stock),
#                    whose test scripts the guests run; built if not given
#     --log-dir DIR  logs (default build/logs/deb)
# Prints TAP and "N passed, N failed, N skipped" (the guests' results
# included); exits non-zero on failure.

# The checks are functions run through check() (SC2317); dpkg's
# ${Field} formats are single-quoted on purpose (SC2016).
# shellcheck disable=SC2317,SC2016
set -uo pipefail

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$SCRIPTS/lib.sh"
# shellcheck source=scripts/ocfs2-image.sh
. "$SCRIPTS/ocfs2-image.sh"
RDL_NAME="deb-test"

payload=
log_dir=$ROOT/build/logs/deb
while [ $# -gt 0 ]; do
	case $1 in
	--payload)	payload=${2:?}; shift ;;
	--log-dir)	log_dir=${2:?}; shift ;;
	*)		die "usage: deb-test.sh [--payload DIR] [--log-dir DIR]" ;;
	esac
	shift
done

[ "$(id -u)" -eq 0 ] || die "run as root"
for t in dpkg-buildpackage dh dh_dkms dkms rsync; do
	command -v "$t" > /dev/null ||
		die "$t missing: scripts/host-setup.sh installs it"
done

LOG=$log_dir/deb-test.log
TAP_LOG=$LOG
rm -rf "$log_dir"
mkdir -p "$log_dir"
: > "$LOG"

# check DESCRIPTION COMMAND...: one test, the command's output logged.
check() {
	local desc=$1
	shift
	echo "### $desc: $*" >> "$LOG"
	"$@" >> "$LOG" 2>&1
	tap_ok $? "$desc"
}

finish() {
	tap_end
	exit
}

VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$ROOT/dkms.conf")
[ -n "$VER" ] || die "no PACKAGE_VERSION in dkms.conf"
VER2=$VER+debtest
# The stock guests' kernel (kernel.sh): the one linux-headers-amd64 is of.
eval "$("$SCRIPTS/kernel.sh" stock)" || die "kernel.sh stock failed"
[ -e "/lib/modules/$KVER/build" ] ||
	die "/lib/modules/$KVER/build missing: linux-headers-$KVER is incomplete"
# What the chroot sees of the host must not be rdlock already.
[ -z "$(dkms status -m rdlock 2> /dev/null)" ] ||
	die "rdlock is in this host's DKMS (make dkms-uninstall first)"
for p in rdlock-dkms rdlock-tools; do
	! dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null | grep -q installed ||
		die "$p is installed on this host"
done
# The chroot is an overlay of / alone: dpkg's files must be on it.
for d in /usr /var /etc /lib; do
	[ "$(stat -c %d "$d")" = "$(stat -c %d /)" ] ||
		die "$d is another file system than /: the overlay would not see it"
done
echo "# rdlock $VER (upgrade to $VER2), kernel $KVER"

B=$(mktemp -d "${TMPDIR:-/tmp}/rdlock-deb.XXXXXX")
R=$B/ovl/root
mounts=()
cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[i]}" 2> /dev/null || umount -l "${mounts[i]}"
	done
	rm -rf "$B"
}
trap cleanup EXIT

# The tree as committed and with what is not committed yet, without
# build products: tracked and untracked files that git does not ignore.
copy_tree() {
	mkdir -p "$1"
	if git -C "$ROOT" rev-parse --verify -q HEAD > /dev/null 2>&1; then
		git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
			rsync -a --from0 --files-from=- "$ROOT/" "$1/"
	else
		rsync -a --exclude=/build --exclude='*.o' --exclude='*.ko' \
			--exclude='*.mod*' --exclude='.*.cmd' "$ROOT/" "$1/"
	fi
}

# build DIR: the packages of the source in DIR/src, into DIR.
build() {
	(cd "$1/src" && dpkg-buildpackage -b -us -uc) >> "$LOG" 2>&1
}

DKMS_DEB=$B/v1/rdlock-dkms_${VER}_all.deb
TOOLS_DEB=$B/v1/rdlock-tools_${VER}_amd64.deb
copy_tree "$B/v1/src" && build "$B/v1" && [ -f "$DKMS_DEB" ] &&
	[ -f "$TOOLS_DEB" ]
tap_ok $? "dpkg-buildpackage: rdlock $VER" || finish

# The upgrade: the same tree, versioned $VER2 (dkms.conf and changelog).
copy_tree "$B/v2/src" &&
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$VER2\"/" "$B/v2/src/dkms.conf" &&
{
	printf 'rdlock (%s) unstable; urgency=medium\n\n' "$VER2"
	printf '  * The upgrade of deb-test.sh.\n\n'
	printf ' -- deb-test <root@localhost>  %s\n\n' "$(date -R)"
	cat "$ROOT/debian/changelog"
} > "$B/v2/src/debian/changelog" &&
DEB_BUILD_OPTIONS=nocheck build "$B/v2"
tap_ok $? "dpkg-buildpackage: rdlock $VER2"

# starts DEB: its maintainer scripts never start or restart the unit (an
# upgrade would take the node out of its cluster).
never_starts() {
	local d=$B/ctrl
	rm -rf "$d" && dpkg-deb -e "$1" "$d" || return 1
	! grep -l 'deb-systemd-invoke \(start\|restart\)\|systemctl.* \(start\|restart\)' "$d"/* 2> /dev/null
}

# stops DEB: its prerm stops the unit when the package is removed.
stops_on_remove() {
	local d=$B/ctrl
	rm -rf "$d" && dpkg-deb -e "$1" "$d" || return 1
	grep -q 'deb-systemd-invoke stop rdlock.service' "$d/prerm"
}

# deb_has DEB PATH...: each PATH is in DEB.
deb_has() {
	local deb=$1 list p
	shift
	list=$(dpkg-deb -c "$deb" | awk '{ print $6 }') || return 1
	for p in "$@"; do
		grep -qx "\./$p" <<< "$list" || { echo "$deb: no $p"; return 1; }
	done
}

check "rdlock-dkms: sources, dkms.conf, OCFS2's vendored headers" \
	deb_has "$DKMS_DEB" "usr/src/rdlock-$VER/dkms.conf" \
	"usr/src/rdlock-$VER/Kbuild" "usr/src/rdlock-$VER/kmod/main.c" \
	"usr/src/rdlock-$VER/uapi/linux/rdlock.h" \
	"usr/src/rdlock-$VER/kmod/ocfs2/stack_rdlock.c" \
	"usr/src/rdlock-$VER/vendor/ocfs2/fs/ocfs2/stackglue.h"
check "rdlock-tools: rdlockctl, unit, example, man pages, docs" \
	deb_has "$TOOLS_DEB" usr/sbin/rdlockctl \
	lib/systemd/system/rdlock.service etc/rdlock/rdlock.conf.example \
	usr/share/man/man8/rdlockctl.8.gz usr/share/man/man5/rdlock.conf.5.gz \
	usr/share/man/man7/rdlock.7.gz lib/udev/rules.d/60-rdlock.rules \
	usr/lib/sysusers.d/rdlock.conf \
	usr/share/bash-completion/completions/rdlockctl \
	usr/share/doc/rdlock-tools/admin-guide.rst.gz
check "rdlock-dkms depends on dkms" \
	sh -c "dpkg-deb -f '$DKMS_DEB' Depends | grep -q '^dkms'"
check "rdlock-tools never starts or restarts rdlock.service" \
	never_starts "$TOOLS_DEB"
check "rdlock-tools stops rdlock.service when removed" \
	stops_on_remove "$TOOLS_DEB"

# The chroot: this host's root read-only under an overlay on a tmpfs,
# with /proc, /sys and /dev, and an empty /run (no init system to talk
# to: the maintainer scripts neither start nor reload anything).
# mnt WHERE MOUNT-ARGS...: mounted, and unmounted at the end.
mnt() {
	local where=$1
	shift
	mount "$@" "$where" || die "mount $* $where"
	mounts+=("$where")
}

mkdir -p "$B/ovl"
mnt "$B/ovl" -t tmpfs tmpfs
mkdir -p "$B/ovl/up" "$B/ovl/work" "$R" || die "mkdir $B/ovl"
mnt "$R" -t overlay overlay \
	-o "lowerdir=/,upperdir=$B/ovl/up,workdir=$B/ovl/work"
for d in proc sys dev; do
	mnt "$R/$d" --bind "/$d"
done
mnt "$R/run" -t tmpfs tmpfs
{ mkdir -p "$R/tmp/debs" && cp "$B"/v1/*.deb "$B"/v2/*.deb "$R/tmp/debs/"; } ||
	die "copy the packages"
# DKMS builds for the running kernel when it is installed, else for every
# kernel with headers (common.postinst): for $KVER in either case.
echo 'autoinstall_all_kernels="y"' >> "$R/etc/dkms/framework.conf" ||
	die "dkms framework.conf"

in_root() {
	chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# installed VERSION: dpkg has both packages installed at VERSION.
installed() {
	local p
	for p in rdlock-dkms rdlock-tools; do
		[ "$(in_root dpkg-query -W -f '${Status} ${Version}' "$p")" = \
		  "install ok installed $1" ] || return 1
	done
}

# dkms_has VERSION: DKMS built and installed it for $KVER, and knows no
# other version of rdlock.
dkms_has() {
	local s
	s=$(in_root dkms status -m rdlock) || return 1
	echo "$s"
	grep -q "^rdlock/$1, $KVER, [^:]*: installed" <<< "$s" &&
		! grep -v "^rdlock/$1[,:]" <<< "$s" | grep -q .
}

# modules_are VERSION: both modules in updates/dkms for $KVER, of
# VERSION and that kernel, found by modinfo through depmod's index.
modules_are() {
	local m f
	for m in rdlock ocfs2_stack_rdlock; do
		f=$(in_root modinfo -k "$KVER" -F filename "$m") || return 1
		[ "$f" = "/lib/modules/$KVER/updates/dkms/$m.ko" ] ||
			{ echo "$m: $f"; return 1; }
		[ "$(in_root modinfo -F version "$f")" = "$1" ] ||
			{ echo "$m: version $(in_root modinfo -F version "$f")"; return 1; }
		in_root modinfo -F vermagic "$f" | grep -q "^$KVER " ||
			{ echo "$m: vermagic $(in_root modinfo -F vermagic "$f")"; return 1; }
	done
}

# tool_is VERSION: rdlockctl's first line (the second is the module's).
tool_is() {
	local v
	v=$(in_root rdlockctl --version | head -n 1)
	echo "$v"
	[ "$v" = "rdlockctl $1" ]
}

enabled() {
	[ -L "$R/etc/systemd/system/multi-user.target.wants/rdlock.service" ]
}

conffile() {
	in_root dpkg-query -W -f '${Conffiles}\n' rdlock-tools |
		grep -q "^ /etc/rdlock/rdlock.conf.example "
}

# The modprobe.d line is rdlock-dkms's, not a conffile: gone with it.
modprobe_conf_owned() {
	[ "$(in_root dpkg -S /lib/modprobe.d/rdlock-ocfs2.conf)" = \
	  "rdlock-dkms: /lib/modprobe.d/rdlock-ocfs2.conf" ] &&
	! in_root dpkg-query -W -f '${Conffiles}\n' rdlock-dkms | grep -q .
}

# What loads for OCFS2's user stack: the plug-in, found by depmod's index,
# with rdlock.ko before it.
user_stack_is_rdlock() {
	local s r o
	s=$(in_root modprobe -n -v -S "$KVER" ocfs2_stack_user) || return 1
	echo "$s"
	grep -q "^install /sbin/modprobe --ignore-install ocfs2_stack_rdlock" <<< "$s" ||
		return 1
	s=$(in_root modprobe --show-depends -S "$KVER" ocfs2_stack_rdlock |
	    awk '{ print $2 }') || return 1
	echo "$s"
	r=$(grep -n "/updates/dkms/rdlock.ko$" <<< "$s" | cut -d: -f1)
	o=$(grep -n "/updates/dkms/ocfs2_stack_rdlock.ko$" <<< "$s" | cut -d: -f1)
	[ -n "$r" ] && [ -n "$o" ] && [ "$r" -lt "$o" ]
}

check "dpkg -i rdlock-dkms rdlock-tools ($VER): DKMS builds for $KVER" \
	in_root dpkg -i "/tmp/debs/rdlock-dkms_${VER}_all.deb" \
	"/tmp/debs/rdlock-tools_${VER}_amd64.deb"
check "both installed, $VER" installed "$VER"
check "dkms status: rdlock/$VER installed for $KVER" dkms_has "$VER"
check "rdlock.ko and ocfs2_stack_rdlock.ko: $VER, for $KVER, indexed" \
	modules_are "$VER"
check "rdlockctl --version: $VER" tool_is "$VER"
check "rdlock.service installed and enabled" enabled
# Its syntax, and its commands and man pages (Documentation=) installed.
check "systemd-analyze verify rdlock.service" \
	in_root systemd-analyze verify /lib/systemd/system/rdlock.service
check "/dev/rdlock's group rdlock made (sysusers.d)" \
	in_root getent group rdlock
check "rdlock.conf.example is a conffile" conffile
check "/lib/modprobe.d/rdlock-ocfs2.conf: rdlock-dkms's, no conffile" \
	modprobe_conf_owned
check "modprobe ocfs2_stack_user loads rdlock.ko, then ocfs2_stack_rdlock" \
	user_stack_is_rdlock

# The guests run a cluster from what the packages installed.
if [ -z "$payload" ]; then
	RDLOCK_BUILD_LOG=$log_dir/payload.log "$SCRIPTS/payload.sh" stock \
		> /dev/null || die "payload.sh stock failed (see $log_dir/payload.log)"
	payload=$ROOT/build/stock/payload
fi
P=$B/payload
# OCFS2 disks for node 0: one made for the example's cluster name, one for
# another cluster.
{
	ocfs2_mkimage "$B/own.img" rdlock "$log_dir/mkfs-own.log" rdlock &&
	ocfs2_mkimage "$B/other.img" rdlock "$log_dir/mkfs-other.log" elsewhere
} > /dev/null || die "mkfs.ocfs2 (see $log_dir)"
{
	cp -a "$payload" "$P" && rm -f "$P"/modules/*.ko && mkdir -p "$P/pkg" &&
	cp "$R/lib/modules/$KVER/updates/dkms/rdlock.ko" \
		"$R/lib/modules/$KVER/updates/dkms/ocfs2_stack_rdlock.ko" \
		"$R/lib/systemd/system/rdlock.service" \
		"$R/etc/rdlock/rdlock.conf.example" "$P/pkg/" &&
	cp "$R/usr/sbin/rdlockctl" "$P/bin/rdlockctl"
} || die "the guests' payload"
# guests NAME CLUSTER.SH-ARGS...: a cluster.sh run, logged in
# $log_dir/NAME.log and $log_dir/NAME/; its guests' results are added to
# this script's.
TAP_EXTRA_PASSED=0
TAP_EXTRA_FAILED=0
TAP_EXTRA_SKIPPED=0
guests() {
	local name=$1 rc line
	shift
	"$SCRIPTS/cluster.sh" --log-dir "$log_dir/$name" "$@" \
		> "$log_dir/$name.log" 2>&1
	rc=$?
	line=$(grep '^cluster:' "$log_dir/$name.log" | tail -n 1)
	if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
		TAP_EXTRA_PASSED=$((TAP_EXTRA_PASSED + BASH_REMATCH[1]))
		TAP_EXTRA_FAILED=$((TAP_EXTRA_FAILED + BASH_REMATCH[2]))
		TAP_EXTRA_SKIPPED=$((TAP_EXTRA_SKIPPED + BASH_REMATCH[3]))
		[ "$rc" -eq 0 ] || [ "${BASH_REMATCH[2]}" -ne 0 ] ||
			TAP_EXTRA_FAILED=$((TAP_EXTRA_FAILED + 1))
		echo "# $name: $line (exit $rc)"
	else
		TAP_EXTRA_FAILED=$((TAP_EXTRA_FAILED + 1))
		echo "# $name: no result (exit $rc)"
	fi
	[ "$rc" -eq 0 ] ||
		grep -h "not ok" "$log_dir/$name"/node*.out | sed 's/^/#   /'
}

guests guests --kernel stock --nodes 3 --timeout 300 --payload "$P" \
	--module ocfs2 --shared-disk "$B/own.img" --shared-disk "$B/other.img" \
	-- sh guest/packaged.sh "$VER"

# OCFS2 from /etc/fstab at boot (selftests/guest/fstab.sh): 3 guests boot
# systemd in the chroot the packages are installed in, configured as
# ocfs2.rst says, with a cluster key the packaged rdlockctl made; one
# reboots.
{
	ocfs2_mkimage "$B/boot.img" rdlock "$log_dir/mkfs-boot.log" rdlock > /dev/null &&
	in_root rdlockctl keygen /tmp/cluster.key &&
	mv "$R/tmp/cluster.key" "$P/pkg/cluster.key"
} >> "$LOG" 2>&1 || die "the fstab boot's disk and key (see $LOG)"
# The chroot without the host's /proc, /sys, /dev and /run mounted in it
# (a bind of the overlay alone): the guests mount their own.
mkdir -p "$B/share" && mnt "$B/share" --bind "$R"
guests boot --kernel stock --nodes 3 --timeout 900 --mem 768 --payload "$P" \
	--module ocfs2 --shared-disk "$B/boot.img" --root "$B/share" \
	-- sh guest/fstab.sh

check "dpkg -i of $VER2 over $VER (the upgrade)" \
	in_root dpkg -i "/tmp/debs/rdlock-dkms_${VER2}_all.deb" \
	"/tmp/debs/rdlock-tools_${VER2}_amd64.deb"
check "both installed, $VER2" installed "$VER2"
check "dkms status: rdlock/$VER2 installed, $VER gone" dkms_has "$VER2"
check "/usr/src/rdlock-$VER gone" test ! -e "$R/usr/src/rdlock-$VER"
check "the modules: $VER2" modules_are "$VER2"
check "rdlockctl --version: $VER2" tool_is "$VER2"
check "rdlock.service still enabled" enabled

# Removed, not purged: the modules and the user stack's mapping go.
user_stack_is_fsdlm() {
	local s
	s=$(in_root modprobe -n -v -S "$KVER" ocfs2_stack_user 2>&1)
	echo "$s"
	! grep -q "ocfs2_stack_rdlock" <<< "$s" &&
	[ -z "$(find "$R/lib/modules/$KVER" -name '*rdlock*')" ]
}
check "dpkg -r rdlock-dkms" in_root dpkg -r rdlock-dkms
check "removed: no module, OCFS2's user stack is fs/dlm's again" \
	user_stack_is_fsdlm
check "dpkg --purge rdlock-tools rdlock-dkms" \
	in_root dpkg --purge rdlock-tools rdlock-dkms
# nothing_left: no trace of either package but the group (Debian keeps
# system groups a package made).
nothing_left() {
	local p left=0
	for p in rdlock-dkms rdlock-tools; do
		in_root dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null |
			grep -qv "^unknown ok not-installed$\|^$" &&
			{ echo "$p still known to dpkg"; left=1; }
	done
	for p in "$R"/usr/src/rdlock-* "$R/var/lib/dkms/rdlock" \
		 "$R/usr/sbin/rdlockctl" "$R/etc/rdlock" \
		 "$R/lib/modprobe.d/rdlock-ocfs2.conf" \
		 "$R/lib/systemd/system/rdlock.service" \
		 "$R/etc/systemd/system/multi-user.target.wants/rdlock.service" \
		 "$R/usr/share/doc/rdlock-tools" "$R/usr/share/doc/rdlock-dkms"; do
		if [ -e "$p" ] || [ -L "$p" ]; then
			echo "left: ${p#"$R"}"
			left=1
		fi
	done
	p=$(find "$R/lib/modules/$KVER" -name '*rdlock*' 2> /dev/null)
	[ -z "$p" ] || { echo "left: $p"; left=1; }
	return "$left"
}
check "purged: nothing left" nothing_left
finish
