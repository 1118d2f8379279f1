#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Several guest test scripts in one boot, one after another, on every
# guest at once:
#   seq.sh "xport.sh verbs" "lock.sh verbs" "ls.sh verbs"
# A debug guest takes about 40 s to boot, meet its peers and scan for
# leaks at the end, a stock one about 15 s (scripts/guest-init.sh); each
# script brings the modules up and takes them down and out again itself
# (lib.sh rdl_start, rdl_stop), so each starts with fresh lock tables and
# a cluster that every node joined anew, as in a boot of its own: no node
# starts the next script before every node ended the one before (signal
# 7900 + its number), or a new table could meet a peer's table of the
# script before and take over its declarations (this node returned, say).
# Exits non-zero if any script failed; every script runs whatever failed
# before.

dir=$(dirname "$0")
[ $# -gt 0 ] || { echo "usage: $0 'SCRIPT ARGS' ..." >&2; exit 2; }
# The signals only; lib.sh's TAP header belongs to each script's output.
# shellcheck source=selftests/guest/lib.sh
. "$dir"/lib.sh >/dev/null
rc=0
i=0
for s in "$@"; do
	i=$((i + 1))
	echo "# seq.sh: $s"
	# "SCRIPT ARGS" is split on purpose: one word per argument.
	# shellcheck disable=SC2086
	sh "$dir"/$s || rc=1
	if [ "$i" -eq $# ] || [ "${RDLOCK_NR_NODES:-1}" -le 1 ]; then
		continue
	fi
	rdl_signal $((7900 + i))
	if ! rdl_wait_all_signals $((7900 + i)) 600; then
		echo "# seq.sh: not every node ended $s within 600 s"
		rc=1
	fi
done
exit $rc
