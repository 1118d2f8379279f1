#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# host-setup.sh - install the host packages rdlock needs to build and to
# run its QEMU test guests.  Idempotent: apt is not touched at all when
# everything is already installed, so callers can run it unconditionally.

set -euo pipefail

PACKAGES=(
	# kernel and module builds
	build-essential bc flex bison libelf-dev libssl-dev dwarves sparse
	cpio kmod xz-utils rsync python3
	linux-source-6.1 linux-headers-amd64
	# test guests: emulator, private switch, guest userspace
	qemu-system-x86 vde2 busybox-static iproute2
	rdma-core ibverbs-providers ibverbs-utils perftest
	# the Debian packages (deb-test.sh builds and installs them)
	debhelper dh-dkms dkms
	# the demo's report: its plot
	gnuplot-nox
	# fs/dlm beside rdlock in the demo: the guests run these binaries
	# (with their libraries) against the stock kernel's dlm.ko
	corosync dlm-controld
	# OCFS2 on a disk the guests share (ocfs2-test.sh): mkfs.ocfs2,
	# debugfs.ocfs2 and fsck.ocfs2 on the host; the guests need no tools
	ocfs2-tools
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null) || true
	[ "$status" = installed ] || missing+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && exit 0

echo "host-setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Install straight away first; refresh the package lists only if that fails
# (a fresh machine, or lists too old to know a package).
if ! apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
	apt-get update >&2
	apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi

# corosync and dlm_controld are here for the guests only: a host that did
# not have them before does not run them (Debian enables both services).
if [[ " ${missing[*]} " == *" corosync "* || " ${missing[*]} " == *" dlm-controld "* ]] &&
   [ -d /run/systemd/system ]; then
	systemctl disable --now dlm.service corosync.service >&2 || true
fi
# Likewise OCFS2's o2cb and ocfs2 services (SysV scripts): the host only
# makes and checks images.
if [[ " ${missing[*]} " == *" ocfs2-tools "* ]] && [ -d /run/systemd/system ]; then
	systemctl disable --now o2cb.service ocfs2.service >&2 || true
fi
