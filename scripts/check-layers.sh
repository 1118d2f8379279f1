#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-layers.sh - every file of the module includes only what the layers
# of Documentation/rdlock/design.rst ("Layers") allow: its own layer's
# headers and, of another layer, only the public headers listed for it in
# the table below; never another layer's internals (*-pri.h, or proto.h
# above the lockspaces). A file the table does not place is an error too,
# so a new file has to be given a layer.
#
# Usage: check-layers.sh [PATH[=FILE]...]
#   no argument: every .c and .h under kmod/ (git ls-files);
#   PATH=FILE:   check FILE's text as if it were PATH, e.g. an older
#                version: check-layers.sh kmod/dev.c=<(git show main:kmod/dev.c)
# Exit status: 0 clean, 1 on violations (listed), 2 on usage errors.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# The layer a file of the tree belongs to (design.rst, "Layers").
layer_of()
{
	case $1 in
	kmod/xport*.[ch] | kmod/backend.h | kmod/replay.h) echo xport ;;
	kmod/lockword/*.h) echo lockword ;;
	kmod/proto*.[ch]) echo proto ;;
	kmod/lockspace*.[ch] | kmod/trace.h) echo lockspace ;;
	kmod/dev*.[ch] | kmod/dev-pri.h | kmod/dlm*.c | kmod/dlm-pri.h | kmod/dlm_poll.h | kmod/trace_dlm.h | kmod/include/rdlock/*.h)
		echo iface ;;
	# Pure checks of the uapi's arguments, shared like the lock words.
	kmod/uapi_check.h) echo uapicheck ;;
	kmod/main.c) echo main ;;
	# Users of the layers: test modules, KUnit suites, the example, OCFS2.
	kmod/tests/* | kmod/example/* | kmod/ocfs2/*) echo user ;;
	*) echo unknown ;;
	esac
}

# What each layer may include of the others (globs); its own, always.
declare -A allowed=(
	[xport]="kmod/uapi_check.h"
	[lockword]=""
	[proto]="kmod/xport.h kmod/lockword/*.h"
	[lockspace]="kmod/xport.h kmod/proto.h kmod/uapi_check.h kmod/include/rdlock/rdlock.h"
	# The transport's public header for the configuration the device
	# layer validates and passes on, and the node id.
	[iface]="kmod/lockspace.h kmod/xport.h kmod/uapi_check.h"
	[uapicheck]="kmod/include/rdlock/rdlock.h"
	# Brings every layer up and down: each one's public header.
	[main]="kmod/xport.h kmod/proto.h kmod/lockspace.h kmod/dev.h kmod/dlm-pri.h"
	# Pure headers (replay.h, xport_member.h, lockspace_layout.h,
	# lockspace_errors.h, lockspace_down.h, dlm_poll.h) for the KUnit
	# suites.
	[user]="kmod/xport.h kmod/proto.h kmod/lockword/*.h kmod/backend.h kmod/replay.h kmod/xport_member.h kmod/lockspace_layout.h kmod/lockspace_errors.h kmod/lockspace_down.h kmod/dlm_poll.h kmod/uapi_check.h kmod/include/rdlock/*.h"
)

# The tree's file an include of file $1 names ($2: "x.h" or <x.h>), or "".
resolve()
{
	local dir=${1%/*} inc=$2 name cand

	name=${inc:1:${#inc}-2}
	case $inc in
	\<rdlock/*) cand=kmod/include/$name ;;
	\<*) return 0 ;;	# the kernel's, or the uapi (everybody's)
	*)
		for cand in "$dir/$name" "kmod/$name" "kmod/include/$name" ""; do
			[ -n "$cand" ] && [ -f "$cand" ] && break
		done
		;;
	esac
	[ -n "$cand" ] && [ -f "$cand" ] && realpath -m --relative-to=. "$cand"
	return 0
}

bad=0
check()
{
	local path=$1 text=$2 layer hlayer inc hdr pat ok

	layer=$(layer_of "$path")
	if [ "$layer" = unknown ]; then
		echo "$path: in no layer of check-layers.sh's table"
		bad=1
		return
	fi
	while read -r inc; do
		hdr=$(resolve "$path" "$inc")
		[ -n "$hdr" ] || continue
		hlayer=$(layer_of "$hdr")
		[ "$hlayer" = "$layer" ] && continue
		ok=0
		for pat in ${allowed[$layer]}; do
			# shellcheck disable=SC2053 # $pat is a glob
			[[ $hdr == $pat ]] && ok=1 && break
		done
		if [ $ok = 0 ]; then
			echo "$path: the $layer layer may not include $hdr (the $hlayer layer's)"
			bad=1
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$text")
}

if [ $# = 0 ]; then
	mapfile -t args < <(git ls-files -co --exclude-standard -- 'kmod/*.[ch]')
	[ ${#args[@]} -gt 0 ] || { echo "check-layers.sh: no files" >&2; exit 2; }
else
	args=("$@")
fi
for a in "${args[@]}"; do
	path=${a%%=*}
	text=$path
	[ "$a" = "$path" ] || text=${a#*=}
	[ -r "$text" ] || { echo "check-layers.sh: cannot read $text" >&2; exit 2; }
	check "$path" "$text"
done
[ $bad = 0 ] && echo "check-layers: ${#args[@]} files clean"
exit $bad
