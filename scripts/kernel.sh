#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel.sh debug|stock - make a guest kernel available and describe it.
#
#   debug: Debian's linux-source-6.1 built with tinyconfig + kvm_guest.config
#          + scripts/kconfig/debug.config (KASAN, lockdep, KUnit, rxe built in)
#   stock: Debian's own linux-image matching the installed linux-headers-amd64,
#          unpacked (never installed) so its modules can go into an initramfs
#
# Prints shell-evaluable lines on stdout and nothing else:
#   KVER=<uname -r>  KERNEL_IMAGE=<bzImage>  KDIR=<tree to build modules against>
#   MODROOT=<root containing lib/modules/$KVER, empty if nothing is modular>
#
# Results are cached in ${RDLOCK_CACHE:-/var/cache/rdlock}, keyed by version
# and (debug) by a hash of the config inputs.  Each result is assembled in a
# temporary directory and renamed into place only once complete, so an
# interrupted run is never mistaken for a finished one.

set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RDL_DIE_RC=1
CACHE=${RDLOCK_CACHE:-/var/cache/rdlock}
FRAGMENT=$SCRIPTS/kconfig/debug.config
SOURCE_TARBALL=/usr/src/linux-source-6.1.tar.xz

usage()
{
	echo "usage: $0 debug|stock" >&2
	exit 2
}

# Version of an installed Debian package.
pkg_version() { dpkg-query -W -f='${Version}' "$1"; }

# Debian ABI name the headers meta package points at, e.g. 6.1.0-56-amd64.
stock_abi()
{
	dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		sed -n 's/.*linux-headers-\([^ ,]*\).*/\1/p'
}

# Print the KEY=VALUE description of a kernel.
describe()
{
	local key

	for key in KVER KERNEL_IMAGE KDIR MODROOT; do
		if [ -n "$1" ]; then
			printf '%s=%q\n' "$key" "$1"
		else
			echo "$key="
		fi
		shift
	done
}

stock_kernel()
{
	local abi pkg ver dir tmp

	abi=$(stock_abi)
	[ -n "$abi" ] || die "cannot tell which linux-headers-amd64 points at"
	pkg=linux-image-$abi
	ver=$(pkg_version "linux-headers-$abi")
	dir=$CACHE/stock/$abi-$ver

	if [ ! -d "$dir" ]; then
		log "fetching $pkg=$ver (unpacked only, not installed)"
		mkdir -p "$CACHE/stock"
		tmp=$(mktemp -d "$CACHE/stock/.tmp-XXXXXX")
		# apt's download sandbox user must be able to write here.
		chmod 755 "$tmp"
		if ! (cd "$tmp" && apt-get download "$pkg=$ver") >&2; then
			apt-get update >&2
			(cd "$tmp" && apt-get download "$pkg=$ver") >&2
		fi
		dpkg-deb -x "$tmp"/*.deb "$tmp/root"
		rm -f "$tmp"/*.deb
		# modules.dep lets cluster.sh resolve load order with modprobe -d.
		depmod -b "$tmp/root" "$abi"
		mv "$tmp" "$dir"
	fi

	describe "$abi" "$dir/root/boot/vmlinuz-$abi" \
		"/usr/src/linux-headers-$abi" "$dir/root"
}

# Unpack the kernel source once per source package version.  Builds use
# O= so the tree itself stays pristine and can be shared.
debug_source()
{
	local ver=$1 tmp
	local src=$CACHE/src/linux-source-$ver

	if [ ! -d "$src" ]; then
		log "unpacking $SOURCE_TARBALL ($ver)"
		mkdir -p "$CACHE/src"
		tmp=$(mktemp -d "$CACHE/src/.tmp-XXXXXX")
		tar -C "$tmp" -xf "$SOURCE_TARBALL"
		mv "$tmp/linux-source-6.1" "$src"
		rmdir "$tmp"
	fi
	echo "$src"
}

# Generate $obj/.config.  This function's text is part of the cache key.
debug_configure()
{
	local src=$1 obj=$2

	make -C "$src" O="$obj" tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"$src/kernel/configs/kvm_guest.config" "$FRAGMENT"
	make -C "$src" O="$obj" olddefconfig
}

# Fail loudly if olddefconfig dropped or changed anything the fragment asks
# for (tinyconfig silently drops options whose dependencies are unmet).
debug_verify()
{
	local config=$1 line name bad=()

	while read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$config" || bad+=("$line")
			;;
		"# CONFIG_"*" is not set")
			name=${line#\# }
			name=${name%% *}
			grep -q "^$name=" "$config" && bad+=("$line")
			;;
		esac
	done < "$FRAGMENT"

	[ ${#bad[@]} -eq 0 ] && return 0
	for line in "${bad[@]}"; do
		name=${line#\# }
		name=${name%%[ =]*}
		log "requested '$line', got '$(grep -E "^(# )?${name}[ =]" "$config" || echo absent)'"
	done
	die "${#bad[@]} requested config option(s) missing from $config"
}

debug_kernel()
{
	local ver src key dir tmp kver modroot=

	ver=$(pkg_version linux-source-6.1)
	key=$({
		echo "$ver"
		cat "$FRAGMENT"
		declare -f debug_configure debug_verify
	} | sha256sum | cut -c1-12)
	dir=$CACHE/debug/$ver-$key

	if [ ! -d "$dir" ]; then
		src=$(debug_source "$ver")
		mkdir -p "$CACHE/debug"
		tmp=$(mktemp -d "$CACHE/debug/.tmp-XXXXXX")
		chmod 755 "$tmp"
		log "configuring debug kernel in $tmp"
		debug_configure "$src" "$tmp" > "$tmp/config.log" 2>&1 ||
			{ tail -n 30 "$tmp/config.log" >&2; die "configuration failed"; }
		debug_verify "$tmp/.config"

		log "building debug kernel with -j$(nproc) (several minutes; log: $tmp/build.log)"
		local start=$SECONDS
		make -C "$src" O="$tmp" -j"$(nproc)" > "$tmp/build.log" 2>&1 ||
			{ tail -n 40 "$tmp/build.log" >&2; die "build failed"; }
		log "debug kernel built in $((SECONDS - start)) s"

		if [ -s "$tmp/modules.order" ]; then
			make -C "$src" O="$tmp" INSTALL_MOD_PATH="$tmp/modroot" \
				modules_install >> "$tmp/build.log" 2>&1
		fi
		mv "$tmp" "$dir"
	fi

	kver=$(cat "$dir/include/config/kernel.release")
	[ -d "$dir/modroot/lib/modules/$kver" ] && modroot=$dir/modroot
	describe "$kver" "$dir/arch/x86/boot/bzImage" "$dir" "$modroot"
}

[ $# -eq 1 ] || usage

"$SCRIPTS/host-setup.sh"
mkdir -p "$CACHE"

case $1 in
debug)	dirs=("$CACHE/src" "$CACHE/debug") ;;
stock)	dirs=("$CACHE/stock") ;;
*)	usage ;;
esac

# Serialise concurrent callers of one flavour: the second one waits and then
# finds the cache.  Whatever is left in a .tmp-* directory of this flavour
# after that is from an interrupted run.
exec 9> "$CACHE/.lock-$1"
flock 9
for d in "${dirs[@]}"; do
	rm -rf "$d"/.tmp-*
done

"$1_kernel"
