#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ocfs2-headers.sh - OCFS2's private headers for an out-of-tree cluster
# stack plug-in.
#
# usage: ocfs2-headers.sh [--check] [OUTDIR]
#
# A stack plug-in implements struct ocfs2_stack_operations of
# fs/ocfs2/stackglue.h, which Debian's linux-headers packages do not ship.
# This copies fs/ocfs2/stackglue.h and every header it includes with
# "..." (fs/ocfs2/dlm/dlmapi.h), recursively, from Debian's linux-source-6.1
# into OUTDIR (default build/ocfs2-headers) under the same paths, and
# prints OUTDIR. A module's Kbuild then adds -I OUTDIR/fs/ocfs2 and builds
# against the stock headers package (the symbols come from its
# Module.symvers: ocfs2_stackglue.ko exports them). The source is the
# stock kernel's version (the structures are the ABI), fetched from the
# archive when the installed linux-source-6.1 is another.
#
# --check: afterwards check that vendor/ocfs2, the copies DKMS builds the
# plug-in with, holds these headers unchanged and no others, and build
# selftests/ocfs2-headers (a plug-in that registers itself, never loaded)
# against the stock kernel's headers (kernel.sh stock:
# /usr/src/linux-headers-ABI); fail on any difference or warning.

set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RDL_DIE_RC=1
CACHE=${RDLOCK_CACHE:-/var/cache/rdlock}
TARBALL=/usr/src/linux-source-6.1.tar.xz
TOP=linux-source-6.1
HEADERS=(fs/ocfs2/stackglue.h)

check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -le 1 ] || rdl_usage
out=${1:-$ROOT/build/ocfs2-headers}

"$ROOT/scripts/host-setup.sh"
eval "$("$ROOT/scripts/kernel.sh" stock)"
ver=$(dpkg-query -W -f='${Version}' "linux-headers-$KVER")

# The installed linux-source-6.1 may be a newer upload than the stock
# kernel (Debian's security archive publishes the source first): then take
# the stock kernel's own version of the package from the archive, once,
# into the cache. Its tarball is all that is used of it.
if [ "$(dpkg-query -W -f='${Version}' linux-source-6.1)" != "$ver" ]; then
	pkgdir=$CACHE/linux-source-deb/$ver
	TARBALL=$pkgdir/usr/src/linux-source-6.1.tar.xz
	if [ ! -f "$TARBALL" ]; then
		log "fetching linux-source-6.1 $ver, the stock kernel's version"
		dl=$(mktemp -d "$CACHE/.tmp-src-XXXXXX")
		download() { (cd "$dl" && apt-get download "linux-source-6.1=$ver" >&2); }
		# As host-setup.sh: refresh the lists only if they do not know it.
		if ! download && ! { apt-get update >&2 && download; }; then
			rm -rf "$dl"
			die "linux-source-6.1 $ver (the stock kernel's version) is not in the archive"
		fi
		dpkg-deb -x "$dl"/linux-source-6.1_*.deb "$dl/root"
		rm -rf "$pkgdir"
		mkdir -p "$(dirname "$pkgdir")"
		mv "$dl/root" "$pkgdir"
		rm -rf "$dl"
	fi
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)

# The source tree: kernel.sh's unpacked copy for the debug kernel when it
# is there, else the members needed, from the tarball (one pass of xz
# over all of fs/ocfs2, a few seconds).
src=$CACHE/src/linux-source-$ver
tmp=
if [ ! -d "$src/fs/ocfs2" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -C "$tmp" -xf "$TARBALL" --wildcards "$TOP/fs/ocfs2/*.h"
	src=$tmp/$TOP
fi

# Copy header $1 (a path in the tree) and, recursively, the headers it
# includes with quotes, which are relative to its directory. <...>
# includes are the kernel's public ones, in the headers package.
copied=()
copy_header()
{
	local rel=$1 inc dir

	[[ " ${copied[*]} " == *" $rel "* ]] && return 0
	[ -f "$src/$rel" ] || die "$rel is not in linux-source $ver"
	mkdir -p "$out/$(dirname "$rel")"
	cp "$src/$rel" "$out/$rel"
	copied+=("$rel")
	dir=$(dirname "$rel")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src/$rel"); do
		copy_header "$(realpath -m --relative-to=. "$dir/$inc")"
	done
}

for h in "${HEADERS[@]}"; do
	copy_header "$h"
done
echo "linux-source-6.1 $ver: ${copied[*]}" > "$out/SOURCE"
log "${copied[*]} from linux-source $ver in $out"

if [ $check -eq 1 ]; then
	vendor=$ROOT/vendor/ocfs2
	for rel in "${copied[@]}"; do
		cmp -s "$out/$rel" "$vendor/$rel" ||
			die "vendor/ocfs2/$rel is not linux-source $ver's: copy it over (vendor/ocfs2/README)"
	done
	extra=$(cd "$vendor" && find fs -type f | sort | while read -r rel; do
		[[ " ${copied[*]} " == *" $rel "* ]] || echo "$rel"
	done)
	[ -z "$extra" ] || die "vendor/ocfs2 has headers the plug-in does not need: $extra"
	log "ok: vendor/ocfs2 holds linux-source $ver's ${copied[*]}"
	bdir=$(mktemp -d)
	trap 'rm -rf "$tmp" "$bdir"' EXIT
	cp "$ROOT"/selftests/ocfs2-headers/{Kbuild,*.c} "$bdir/"
	log "building selftests/ocfs2-headers against $KDIR"
	if ! make -C "$KDIR" M="$bdir" OCFS2_HEADERS="$out" W=1 modules \
	     > "$bdir/build.log" 2>&1 ||
	   grep -E '(warning|error):' "$bdir/build.log" >&2; then
		cat "$bdir/build.log" >&2
		die "the plug-in check module does not build cleanly"
	fi
	log "ok: $(cd "$bdir" && ls ./*.ko) built against $KVER"
fi
echo "$out"
