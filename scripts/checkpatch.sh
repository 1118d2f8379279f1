#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.sh - run the kernel's checkpatch.pl --strict --no-tree over
# every C source and header of the project; exits non-zero on any finding.
# checkpatch.pl and its data files come from Debian's linux-source-6.1
# package, extracted once into the cache.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RDLOCK_CACHE:-/var/cache/rdlock}
TARBALL=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1)
[ -n "$TARBALL" ] || { echo "checkpatch.sh: linux-source-6.1 is not installed" >&2; exit 2; }
dir=$CACHE/checkpatch
cp_pl=$dir/linux-source-6.1/scripts/checkpatch.pl

if [ ! -x "$cp_pl" ] || [ "$TARBALL" -nt "$cp_pl" ]; then
	mkdir -p "$dir"
	tar -xf "$TARBALL" -C "$dir" \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	touch "$cp_pl"
fi

cd "$ROOT"
mapfile -t files < <(git ls-files -co --exclude-standard -- \
	'kmod/*.[ch]' 'uapi/*.h' 'userspace/*.[ch]' 'selftests/*.[ch]' |
	grep -v 'kselftest')
# One checkpatch.pl per file, as many at once as there are CPUs, the largest
# files first so that none is left alone at the end: on one CPU the tree
# takes about 85 s. A process prints its findings when it ends.
status=0
for f in "${files[@]}"; do
	[ -f "$f" ] || continue
	printf '%s %s\0' "$(stat -c %s "$f")" "$f"
done | sort -z -rn | sed -z 's/^[0-9]* //' |
	xargs -0 -n 1 -P "$(nproc)" perl "$cp_pl" --strict --no-tree --quiet \
		--show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f ||
	status=1
[ $status -eq 0 ] && echo "checkpatch: ${#files[@]} files clean"
exit $status
