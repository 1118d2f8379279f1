#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-test.sh - the DKMS packaging on this host, as root: installs the
# dkms Debian package if missing, then "make dkms-install" of a test
# version (DKMS_VERSION, default 0.0test) against the installed
# linux-headers-*-amd64 (explicitly: the host may run another kernel),
# checks that DKMS built and installed rdlock.ko and ocfs2_stack_rdlock.ko
# for that kernel with the right vermagic and version, "make
# dkms-uninstall", and checks that nothing is left:
# no DKMS entry, no /usr/src tree, no new file under /lib/modules/KVER.
# Prints TAP and "N passed, N failed, N skipped"; exits non-zero on failure.

set -uo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RDL_NAME="dkms-test"
VER=${DKMS_VERSION:-0.0test}
LOG=${RDLOCK_DKMS_LOG:-$ROOT/build/dkms-test.log}
TAP_LOG=$LOG

ok() { tap_ok "$@"; }

[ "$(id -u)" -eq 0 ] || die "run as root"
mkdir -p "$(dirname "$LOG")"
: > "$LOG"

if ! command -v dkms > /dev/null; then
	echo "# installing the dkms package"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends dkms >> "$LOG" 2>&1 ||
		die "cannot install dkms (see $LOG)"
fi

hdr=$(printf '%s\n' /usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)
[ -d "$hdr" ] || die "no linux-headers-*-amd64 installed"
kver=${hdr#/usr/src/linux-headers-}
mods=/lib/modules/$kver
[ -e "$mods/build" ] || die "$mods/build missing: linux-headers-$kver is incomplete"
[ -z "$(dkms status -m rdlock -v "$VER")" ] ||
	die "rdlock $VER is already in DKMS: pick another DKMS_VERSION"
[ ! -e "/usr/src/rdlock-$VER" ] || die "/usr/src/rdlock-$VER exists"
echo "# kernel $kver (running $(uname -r)), rdlock $VER"

# What /lib/modules/KVER holds before, to remove only what DKMS adds.
before=$(mktemp)
after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
find "$mods" -xdev | sort > "$before"

make -C "$ROOT" dkms-install DKMS_VERSION="$VER" DKMS_KERNEL="$kver" \
	>> "$LOG" 2>&1
ok $? "make dkms-install DKMS_KERNEL=$kver"

built=/var/lib/dkms/rdlock/$VER/$kver/$(uname -m)/module/rdlock.ko
[ -f "$built" ] || built=$built.xz
test -f "$built"
ok $? "dkms built rdlock.ko ($built)"

for m in rdlock ocfs2_stack_rdlock; do
	installed=$(find "$mods/updates" -name "$m.ko*" 2>/dev/null | head -n 1)
	[ -n "$installed" ] &&
		modinfo -F vermagic "$installed" 2>> "$LOG" | grep -q "^$kver "
	ok $? "$m.ko installed for $kver (${installed:-none}), vermagic $kver"
	[ -n "$installed" ] &&
		[ "$(modinfo -F version "$installed" 2>> "$LOG")" = "$VER" ]
	ok $? "$m.ko: version $VER (dkms.conf's PACKAGE_VERSION)"
done

dkms status -m rdlock -v "$VER" -k "$kver" | tee -a "$LOG" | grep -q installed
ok $? "dkms status: installed"

make -C "$ROOT" dkms-uninstall DKMS_VERSION="$VER" >> "$LOG" 2>&1
ok $? "make dkms-uninstall"

[ -z "$(dkms status -m rdlock -v "$VER")" ] && [ ! -e "/usr/src/rdlock-$VER" ] &&
	[ ! -e "/var/lib/dkms/rdlock/$VER" ]
ok $? "nothing left in DKMS and /usr/src"

# Whatever failed above: no test version stays behind.
if [ -n "$(dkms status -m rdlock -v "$VER")" ]; then
	dkms remove -m rdlock -v "$VER" --all >> "$LOG" 2>&1
fi
rm -rf "/usr/src/rdlock-$VER"
rmdir /var/lib/dkms/rdlock 2> /dev/null

# depmod leaves its modules.* indexes behind: remove whatever is new
# (after a failed uninstall too).
find "$mods" -xdev | sort > "$after"
comm -13 "$before" "$after" | sort -r | while read -r f; do
	echo "removing $f" >> "$LOG"
	if [ -d "$f" ]; then rmdir "$f"; else rm -f "$f"; fi
done
find "$mods" -xdev | sort > "$after"
cmp -s "$before" "$after"
ok $? "$mods as before"


tap_end
