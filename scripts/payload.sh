#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# payload.sh KERNEL - build everything a guest needs for KERNEL (debug or
# stock, see kernel.sh) and assemble it under build/KERNEL/payload:
#   modules/  rdlock.ko, rdlock_test.ko, ocfs2_stack_rdlock.ko and, with
#             KUnit, *_kunit.ko
#   bin/      rdlockctl, rdlock-xport-bench, rdlock-lock-bench, rdlock-bench,
#             rdlock-stat-bench, rdlock-fail-bench, rdlock-rec-fill
#             (static)
#   tests/    selftest binaries (static)
#   guest/    the guest-side scripts of selftests/guest
# The modules are built in a copy of the tree per kernel, so that builds
# for different kernels do not overwrite each other. Prints the payload
# directory on stdout; build logs go to $RDLOCK_BUILD_LOG (default stderr).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kernel=${1:?usage: payload.sh debug|stock}
bdir=$ROOT/build/$kernel
out=${RDLOCK_BUILD_LOG:-/dev/stderr}

eval "$("$ROOT/scripts/kernel.sh" "$kernel")"
# The log may live in build/ itself, which a fresh clone does not have.
mkdir -p "$(dirname "$out")"
{
	mkdir -p "$bdir/src"
	rsync -a --delete --exclude /build --exclude .git "$ROOT/" "$bdir/src/"
	# OCFS2's private headers for the stack plug-in: a kernel built here
	# has its own source tree; for the stock one, linux-source-6.1 of
	# its version (ocfs2-headers.sh).
	if [ -f "$KDIR/source/fs/ocfs2/stackglue.h" ]; then
		ocfs2_headers=$(cd "$KDIR/source" && pwd -P)
	else
		ocfs2_headers=$("$ROOT/scripts/ocfs2-headers.sh")
	fi
	# The tests' fault injection knobs (debugfs inject_*), which no
	# package build has (Documentation/rdlock/testing.rst).
	make -C "$bdir/src" modules KDIR="$KDIR" OCFS2_HEADERS="$ocfs2_headers" \
		RDLOCK_FAULT_INJECTION=y
	make -C "$ROOT" userspace selftests
} >> "$out" 2>&1

rm -rf "$bdir/payload"
mkdir -p "$bdir/payload"/{modules,bin,tests,guest,doc}
cp "$bdir"/src/*.ko "$bdir/payload/modules/"
cp "$ROOT"/userspace/rdlockctl "$ROOT"/userspace/rdlock-xport-bench \
	"$ROOT"/userspace/rdlock-lock-bench "$ROOT"/userspace/rdlock-bench \
	"$ROOT"/userspace/rdlock-stat-bench "$ROOT"/userspace/rdlock-fail-bench \
	"$ROOT"/userspace/rdlock-rec-fill "$ROOT"/userspace/rdlock-flood \
	"$bdir/payload/bin/"
cp "$ROOT"/selftests/rdlock/*_test "$bdir/payload/tests/"
cp "$ROOT"/selftests/guest/*.sh "$bdir/payload/guest/"
# What guest/guide.sh runs as written.
cp "$ROOT"/Documentation/rdlock/admin-guide.rst \
	"$ROOT"/packaging/rdlock.conf.example "$bdir/payload/doc/"
echo "$bdir/payload"
