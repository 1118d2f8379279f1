#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lib.sh - what the host scripts share, sourced by them (bash) right after
# their "set" line:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# It sets ROOT (the tree), SCRIPTS (this directory), both absolute, and
# FSDLM_BINS, and defines the helpers below; it runs nothing else.
#
# RDL_NAME: the name log and die put first (default: the script's file
# name); RDL_DIE_RC: die's exit status (default 2). Set them before
# sourcing or at any time after.

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # the scripts' variable
ROOT=$(dirname "$SCRIPTS")

# cluster.sh options that put Debian's corosync and dlm_controld, with
# their libraries, in the guests (host-setup.sh installs them): fs/dlm
# beside rdlock, and the cluster engine of rdlock's membership=dlm.
# shellcheck disable=SC2034 # the scripts' variable
FSDLM_BINS=()
for f in corosync corosync-quorumtool dlm_controld dlm_tool; do
	FSDLM_BINS+=(--bin "/usr/sbin/$f")
done

log() { echo "${RDL_NAME:-$(basename "$0")}: $*" >&2; }
die() { log "error: $*"; exit "${RDL_DIE_RC:-2}"; }

# rdl_usage [LAST]: the script's header from "# usage:" to the line that
# matches the sed pattern LAST (default: the usage line alone), without
# the "# ", on stderr; exit 2.
# shellcheck disable=SC2120 # LAST is optional
rdl_usage()
{
	sed -n "/^# usage:/${1:+,$1}s/^# \{0,1\}//p" "$0" >&2
	exit 2
}

# rdl_payload KERNEL PAYLOAD: PAYLOAD if given, else payload.sh's for
# KERNEL (which builds it).
rdl_payload()
{
	if [ -n "$2" ]; then
		echo "$2"
	else
		"$SCRIPTS/payload.sh" "$1"
	fi
}

# rdl_log_dir DIR TEMPLATE: DIR, made and absolute, else a fresh
# directory "mktemp -d TEMPLATE" makes.
rdl_log_dir()
{
	if [ -n "$1" ]; then
		mkdir -p "$1"
		(cd "$1" && pwd)
	else
		mktemp -d "$2"
	fi
}

# TAP of a host script's own checks: tap_ok RC DESCRIPTION numbers and
# prints one ("not ok" with the last lines of $TAP_LOG, if set), counting
# TAP_STEP and TAP_FAILED; tap_end prints the plan and "N passed, N
# failed, N skipped" with TAP_EXTRA_PASSED, _FAILED and _SKIPPED (results
# counted elsewhere, e.g. guests') added, and returns non-zero on failure.
TAP_STEP=0
TAP_FAILED=0
TAP_EXTRA_PASSED=0
TAP_EXTRA_FAILED=0
TAP_EXTRA_SKIPPED=0
tap_ok() {
	TAP_STEP=$((TAP_STEP + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_STEP - $2"
		return 0
	fi
	TAP_FAILED=$((TAP_FAILED + 1))
	echo "not ok $TAP_STEP - $2${TAP_LOG:+ (see $TAP_LOG)}"
	[ -z "${TAP_LOG:-}" ] || tail -n 20 "$TAP_LOG" | sed 's/^/#   /'
	return 1
}

tap_end() {
	local f=$((TAP_FAILED + TAP_EXTRA_FAILED))

	echo "1..$TAP_STEP"
	echo "$((TAP_STEP - TAP_FAILED + TAP_EXTRA_PASSED)) passed, $f failed, $TAP_EXTRA_SKIPPED skipped"
	[ "$f" -eq 0 ]
}
