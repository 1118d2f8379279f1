#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rdlockctl's help and version, and the docs' command lines against it:
#   tests/cli_test.sh RDLOCKCTL DKMS_CONF DOC...
# Every command's "COMMAND --help", "COMMAND -h" and "help COMMAND" print
# its synopsis with status 0, an unknown command is a usage error (2),
# "--version" and "-V" give dkms.conf's PACKAGE_VERSION; and every
# rdlockctl command line of the docs (a literal block's line, joined over
# its trailing backslashes, or ``rdlockctl ...`` in the text) names a
# command rdlockctl has, with options its help shows. Needs no device:
# nothing here talks to the module.

# Words such as "[ARGS...]" are split below, never globbed.
set -f
ctl=$1
conf=$2
shift 2
helps=$(mktemp)
trap 'rm -f "$helps"' EXIT

# shellcheck source=userspace/tests/tap.sh
. "$(dirname "$0")/tap.sh"

want=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$conf")
for v in --version -V version; do
	out=$("$ctl" $v)
	rc=$?
	[ "$rc" -eq 0 ] && [ "$(echo "$out" | head -n 1)" = "rdlockctl $want" ]
	ok $? "rdlockctl $v: rdlockctl $want"
done

"$ctl" --help >/dev/null
ok $? "rdlockctl --help: status 0"
"$ctl" help nope >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "rdlockctl help nope: a usage error"
"$ctl" nope --help >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "rdlockctl nope --help: a usage error"

# The commands, from the full help: "  NAME ARGS" lines.
cmds=$("$ctl" help | sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p')
[ "$(echo "$cmds" | wc -l)" -ge 12 ]
ok $? "rdlockctl help lists every command ($(echo "$cmds" | tr '\n' ' '))"
for c in $cmds; do
	a=$("$ctl" "$c" --help)
	rc=$?
	[ "$rc" -eq 0 ] &&
		echo "$a" | head -n 1 | grep -q "^Usage: rdlockctl \[-d DEVICE\] $c\( \|$\)" &&
		[ "$a" = "$("$ctl" "$c" -h)" ] && [ "$a" = "$("$ctl" help "$c")" ]
	ok $? "rdlockctl $c --help, -h and help $c: its synopsis"
done

# The docs' command lines, one a line: "rdlockctl WORDS...".
for doc in "$@"; do
	awk '
		# A literal block line, joined over trailing backslashes.
		cont { line = line " " $0; if (!sub(/\\$/, "", line)) { print line; cont = 0 }; next }
		/^ +(# )?rdlockctl / {
			line = $0
			sub(/^ +(# )?/, "", line)
			if (sub(/\\$/, "", line)) { cont = 1; next }
			print line
			next
		}
		{
			s = $0
			while (match(s, /``rdlockctl [^`]*``/)) {
				print substr(s, RSTART + 2, RLENGTH - 4)
				s = substr(s, RSTART + RLENGTH)
			}
		}' "$doc"
done | sed 's/ *#.*$//; s/  */ /g; s/ \(&&\|||\|;\) /\n/g' |
	grep '^rdlockctl ' | sort -u > "$helps.lines"
while read -r line; do
	# shellcheck disable=SC2086 # one word each
	set -- $line
	shift
	[ "$1" = -d ] && shift 2
	c=$1
	# An option of rdlockctl itself is checked as the others.
	case $c in
	-*) ;;
	*) shift ;;
	esac
	case $c in
	# "rdlockctl 0.1": what --version prints, shown as such.
	[0-9]*) continue ;;
	# Options of rdlockctl itself, or of a placeholder COMMAND: those
	# of the full help.
	-* | *[A-Z]*) h=$("$ctl" help) ;;
	*) h=$("$ctl" help "$c" 2>/dev/null) ;;
	esac
	rc=$?
	missing=
	if [ "$rc" -eq 0 ]; then
		for w in "$@"; do
			# Each option of a word such as "[-s|-x|-u]" or
			# "[--hier[=task-fair|phase-fair]]".
			for o in $(echo "$w" | sed 's/^\[*//; s/[]=.].*$//' | tr '|' ' '); do
				case $o in
				--) ;;
				-*)
					echo "$h" | grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" ||
						missing="$missing $o" ;;
				esac
			done
		done
	fi
	[ "$rc" -eq 0 ] && [ -z "$missing" ]
	ok $? "docs: rdlockctl $c ...: a command${missing:+, but its help lacks$missing} ($line)"
done < "$helps.lines"
rm -f "$helps.lines"

tap_end
