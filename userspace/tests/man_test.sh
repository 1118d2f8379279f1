#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The man pages and the bash completion against what they describe:
#   tests/man_test.sh RDLOCKCTL TOP
# RDLOCKCTL the built tool, TOP the source tree (packaging/man/*,
# packaging/rdlockctl.bash-completion, userspace/conf.c, Kbuild, kmod/).
#
# rdlockctl.8: every command of "rdlockctl help" has an entry (".SS
#   COMMAND" under COMMANDS) whose synopsis (its first .nf block) is the
#   one "rdlockctl COMMAND --help" prints, and which names every option
#   that help does; no entry for a command the tool does not have; the
#   global options of "rdlockctl help" under OPTIONS.
# rdlock.conf.5: the directives and lockspace attributes of conf.c's
#   tables are the .TP entries of DIRECTIVES and LOCKSPACE ATTRIBUTES, each
#   documented one accepted by the parser ("rdlockctl up --config FILE
#   --dry-run", which touches no device); the option values conf.c checks
#   are named; EXAMPLE is accepted and agrees with rdlock.conf.example.
# rdlock.7: the module_param*() of rdlock.ko's and ocfs2_stack_rdlock.ko's
#   files (Kbuild; the tests' fault injection left out) are the .TP
#   entries of their subsections of MODULE PARAMETERS.
# Every page: an SPDX line, a .TH of its name and section with "rdlock" as
#   source, its sections, no warning from man --warnings (or groff -ww).
# The completion, in bash: the commands, each command's options and no
#   other's, the global options, -d's files under /dev, and nothing
#   without a rdlockctl to ask.

# Words such as "[ARGS...]" are split below, never globbed.
set -f
export LC_ALL=C
ctl=$1
top=$2
man=$top/packaging/man
comp=$top/packaging/rdlockctl.bash-completion
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=userspace/tests/tap.sh
. "$(dirname "$0")/tap.sh"

# roff text as it reads: no font escapes, "\-" a hyphen.
roff() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\f([A-Z][A-Z]//g' -e 's/\\f\[[^]]*\]//g' \
		-e 's/\\-/-/g' -e 's/\\[&%]//g' -e 's/\\ / /g' -e 's/\\e/\\/g'
}

# The lines of section $2 (.SH) of page $1.
section() {
	awk -v t="$2" '
		/^\.SH/ { s = $0; sub(/^\.SH[ \t]+/, "", s); gsub(/"/, "", s); on = (s == t); next }
		on' "$1"
}

# Of the lines on standard input, those of subsection $1 (.SS).
subsection() {
	awk -v t="$1" '
		/^\.SS/ { s = $0; sub(/^\.SS[ \t]+/, "", s); gsub(/"/, "", s); on = (s == t); next }
		on'
}

# The first word of every .TP tag of the lines on standard input, sorted.
tags() {
	awk 'tp && !/^\.TP/ { print; tp = 0; next } /^\.TP/ { tp = 1 }' | roff |
		awk '{ w = $1; if (w ~ /^\.[A-Z]+$/) w = $2; gsub(/"/, "", w); print w }' |
		sort -u
}

# The option words (-x, --xyz) of the text on standard input, sorted.
opt_words() {
	grep -oE -- '(^|[^A-Za-z0-9-])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[^-]*//' |
		sort -u
}

# The lines on standard input as one line of words.
words() {
	tr '\n' ' ' | sed 's/ *$//'
}

# Does the text $1 have the word $2?
has_word() {
	printf '%s\n' "$1" | grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)"
}

# The words of sorted list $1 missing from sorted list $2, on one line.
missing() {
	printf '%s\n' "$1" | sed '/^$/d' > "$tmp/a"
	printf '%s\n' "$2" | sed '/^$/d' > "$tmp/b"
	comm -23 "$tmp/a" "$tmp/b" | tr '\n' ' ' | sed 's/ $//'
}

# ------------------------------------------------------------------
# Every page

for page in "$man/rdlockctl.8" "$man/rdlock.conf.5" "$man/rdlock.7"; do
	name=${page##*/}
	sec=${name##*.}
	title=$(echo "${name%.*}" | tr '[:lower:]' '[:upper:]')
	case $sec in
	7) want="NAME DESCRIPTION" ;;
	*) want="NAME SYNOPSIS DESCRIPTION" ;;
	esac
	why=
	[ "$(head -n 1 "$page")" = '.\" SPDX-License-Identifier: GPL-2.0' ] ||
		why="$why, no SPDX first line"
	awk -v t="$title" -v s="$sec" '
		/^\.TH/ { found = 1; if ($2 != t || $3 != s || $5 != "rdlock") bad = 1 }
		END { exit !found || bad }' "$page" ||
		why="$why, not .TH $title $sec DATE rdlock"
	for s in $want; do
		grep -qE "^\\.SH \"?$s\"?\$" "$page" || why="$why, no $s section"
	done
	section "$page" NAME | roff | grep -qE "^${name%.*} - ." ||
		why="$why, NAME not \"${name%.*} \\- ...\""
	[ -z "$why" ]
	ok $? "$name: SPDX line, .TH $title $sec, sections $want${why:+ (but${why#,})}"

	# man-db's man (its warnings: macros), and groff's every warning
	# (fonts, escapes, numbers...).
	tool=
	out=
	if MANWIDTH=80 man --warnings -l "$page" > /dev/null 2>&1; then
		tool="man --warnings -l"
		out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null)
	fi
	if command -v groff > /dev/null; then
		tool="${tool:+$tool, }groff -man -ww -z"
		out=$(printf '%s\n%s\n' "$out" "$(groff -man -ww -z "$page" 2>&1)" | sed '/^$/d')
	fi
	if [ -z "$tool" ]; then
		echo "ok $((n += 1)) - $name renders without warnings # SKIP no man or groff"
		continue
	fi
	[ -z "$out" ]
	ok $? "$name renders without warnings ($tool)${out:+: $(echo "$out" | head -n 3 | words)}"
done

# ------------------------------------------------------------------
# rdlockctl.8

page=$man/rdlockctl.8
section "$page" COMMANDS > "$tmp/commands"
cmds=$("$ctl" help | sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p')
[ "$(echo "$cmds" | wc -l)" -ge 12 ]
ok $? "rdlockctl help lists the commands ($(echo "$cmds" | words))"

for c in $cmds; do
	subsection "$c" < "$tmp/commands" > "$tmp/entry"
	# The tool's synopsis: the lines before the blank one, a second form
	# ("      lock ...") written out as the first.
	want=$("$ctl" "$c" --help | awk -v c="$c" '
		NR == 1 { sub(/^Usage: /, ""); u = $0; next }
		/^$/ { exit }
		{ sub(/^ +/, ""); if ($1 == c) $0 = "rdlockctl [-d DEVICE] " $0; u = u " " $0 }
		END { print u }' | tr -s ' ')
	have=$(awk '/^\.fi/ && on { exit } on; /^\.nf/ { on = 1 }' "$tmp/entry" | roff |
		tr '\n' ' ' | tr -s ' ' | sed 's/ $//')
	why=
	if [ ! -s "$tmp/entry" ]; then
		why=" (but no \".SS $c\" under COMMANDS)"
	elif [ "$have" != "$want" ]; then
		why=" (but the page has \"$have\")"
	fi
	[ -z "$why" ]
	ok $? "rdlockctl.8 $c: synopsis \"$want\"$why"

	text=$(roff < "$tmp/entry")
	lacks=
	for o in $("$ctl" "$c" --help | sed '1s/^Usage: rdlockctl \[-d DEVICE\] //' | opt_words); do
		has_word "$text" "$o" || lacks="$lacks $o"
	done
	[ -s "$tmp/entry" ] && [ -z "$lacks" ]
	ok $? "rdlockctl.8 $c: every option of its help${lacks:+, but not$lacks}"
done

entries=$(sed -n 's/^\.SS "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tmp/commands" | sort)
extra=$(missing "$entries" "$(echo "$cmds" | sort)")
[ -z "$extra" ]
ok $? "rdlockctl.8: no entry for a command rdlockctl lacks${extra:+ ($extra)}"

text=$(section "$page" OPTIONS | roff)
lacks=
for o in $("$ctl" help | sed -n '1,2{s/^Usage: rdlockctl \[-d DEVICE\]/-d/;p;}' | opt_words); do
	has_word "$text" "$o" || lacks="$lacks $o"
done
[ -z "$lacks" ]
ok $? "rdlockctl.8 OPTIONS: rdlockctl's own options${lacks:+, but not$lacks}"

# ------------------------------------------------------------------
# rdlock.conf.5

page=$man/rdlock.conf.5
conf_c=$top/userspace/conf.c

# The quoted words of conf.c's table $1 ("directives[] = {" to "};").
table() {
	awk -v t="$1" 'index($0, t "[] = {") { on = 1; next } on && /^[ \t]*};/ { exit } on' \
		"$conf_c" | grep -o '"[^"]*"' | tr -d '"' | sort -u
}

# What the parser says of a file of the lines $1 after a valid head.
parse() {
	printf 'cluster 7\nnode 0 10.77.0.1\nself 0\n%s\n' "$1" > "$tmp/conf"
	"$ctl" -d "$tmp/no-device" up --config "$tmp/conf" --dry-run 2>&1
}

# $1: directive or attribute, $2: conf.c's set, $3: the page's, $4: the
# parser's input for it, $5: its word for an unknown one.
conf_key() {
	why=
	printf '%s\n' "$2" | grep -qx -- "$1" || why="$why, not in conf.c"
	printf '%s\n' "$3" | grep -qx -- "$1" || why="$why, not documented"
	parse "$4" | grep -q "$5" && why="$why, refused by the parser"
	[ -z "$why" ]
}

directives=$(table directives)
[ "$(echo "$directives" | wc -l)" -ge 6 ]
ok $? "conf.c's directives: $(echo "$directives" | words)"
documented=$(section "$page" DIRECTIVES | tags)
for d in $(printf '%s\n%s\n' "$directives" "$documented" | sort -u); do
	conf_key "$d" "$directives" "$documented" "$d" "unknown directive"
	ok $? "rdlock.conf.5 directive $d: in conf.c, documented, accepted${why:+ (but${why#,})}"
done

attrs=$(table ls_attrs)
[ "$(echo "$attrs" | wc -l)" -ge 8 ]
ok $? "conf.c's lockspace attributes: $(echo "$attrs" | words)"
documented=$(section "$page" "LOCKSPACE ATTRIBUTES" | tags | sed -n 's/^--//p')
for a in $(printf '%s\n%s\n' "$attrs" "$documented" | sort -u); do
	conf_key "$a" "$attrs" "$documented" "lockspace x --$a" "unknown attribute"
	ok $? "rdlock.conf.5 attribute --$a: in conf.c, documented, accepted${why:+ (but${why#,})}"
done

# The option values conf.c checks: its ranges[] and strcmp(name, "...").
checked=$( (table ranges; sed -n 's/.*strcmp(name, "\([a-z_0-9]*\)").*/\1/p' "$conf_c") |
	sort -u)
text=$(section "$page" DIRECTIVES | roff)
lacks=
for o in $checked; do
	has_word "$text" "$o" || lacks="$lacks $o"
done
[ -n "$checked" ] && [ -z "$lacks" ]
ok $? "rdlock.conf.5: the options conf.c checks ($(echo "$checked" | words))${lacks:+, but not$lacks}"

section "$page" EXAMPLE | awk '/^\.fi/ && on { exit } on; /^\.nf/ { on = 1 }' | roff \
	> "$tmp/example"
grep -q '^self ' "$tmp/example" || echo 'self 0' >> "$tmp/example"
out=$("$ctl" -d "$tmp/no-device" up --config "$tmp/example" --dry-run 2>&1)
rc=$?
[ "$rc" -eq 0 ] && [ "$(wc -l < "$tmp/example")" -ge 3 ]
ok $? "rdlock.conf.5 EXAMPLE: accepted by the parser${out:+$([ "$rc" -eq 0 ] || echo ": $out")}"
lacks=
while read -r line; do
	case $line in
	'' | '# '* | 'self 0') continue ;;
	esac
	line=${line#\#}
	grep -qxF -e "$line" -e "#$line" "$top/packaging/rdlock.conf.example" ||
		lacks="$lacks \"$line\""
done < "$tmp/example"
[ -z "$lacks" ]
ok $? "rdlock.conf.5 EXAMPLE: its directives are rdlock.conf.example's${lacks:+, but not$lacks}"

# ------------------------------------------------------------------
# rdlock.7

page=$man/rdlock.7

# The .c files of module $1, from Kbuild's "$1-y" lines, those of the
# tests' fault injection (RDLOCK_FAULT_INJECTION=y, never packaged) left
# out.
module_files() {
	awk -v m="$1-y" '
		/^if(eq|neq|def|ndef)[ \t(]/ {
			depth++
			if (!fault && /RDLOCK_FAULT_INJECTION/) fault = depth
		}
		/^endif/ { if (fault == depth) fault = 0; depth--; next }
		fault { next }
		cont || $1 == m {
			for (i = 1; i <= NF; i++)
				if ($i ~ /\.o$/) { sub(/\.o$/, ".c", $i); print $i }
			cont = /\\$/
		}' "$top/Kbuild"
}

for mod in rdlock ocfs2_stack_rdlock; do
	files=$(module_files "$mod")
	# shellcheck disable=SC2086 # one file a word
	params=$(cd "$top" && cat $files /dev/null |
		sed -n 's/^[[:blank:]]*module_param[a-z_]*([[:blank:]]*\([A-Za-z0-9_]*\).*/\1/p' |
		sort -u)
	nfiles=$(echo "$files" | wc -w)
	# shellcheck disable=SC2086 # one file a word
	[ "$nfiles" -ge 1 ] && [ -n "$params" ] && (cd "$top" && ls $files > /dev/null 2>&1)
	ok $? "$mod.ko: $nfiles files (Kbuild), parameters $(echo "$params" | words)"
	documented=$(section "$page" "MODULE PARAMETERS" | subsection "$mod.ko" | tags)
	for p in $(printf '%s\n%s\n' "$params" "$documented" | sort -u); do
		why=
		printf '%s\n' "$params" | grep -qx -- "$p" || why="$why, not a parameter of $mod.ko"
		printf '%s\n' "$documented" | grep -qx -- "$p" || why="$why, not documented"
		[ -z "$why" ]
		ok $? "rdlock.7 $mod.ko parameter $p${why:+ (but${why#,})}"
	done
done

# ------------------------------------------------------------------
# The bash completion

if ! command -v bash > /dev/null; then
	echo "ok $((n += 1)) - bash completion # SKIP no bash"
	echo "# $((n - bad)) passed, $bad failed"
	[ "$bad" -eq 0 ]
	exit
fi
bindir=$(cd "$(dirname "$ctl")" && pwd)

# COMPREPLY for the command line "$2..." (its last word the one
# completed), sorted, one a line; the completion runs with PATH=$1.
complete_line() {
	# shellcheck disable=SC2016 # bash's own expansions
	bash --norc --noprofile -c '
		. "$1" || exit 1
		[ "$(complete -p rdlockctl)" = "complete -F _rdlockctl rdlockctl" ] || exit 1
		path=$2
		shift 2
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		PATH=$path _rdlockctl rdlockctl "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort -u' sh "$comp" "$@"
}

out=$(complete_line "$bindir:$PATH" rdlockctl '')
rc=$?
lacks=$(missing "$(echo "$cmds" | sort)" "$out")
extra=$(missing "$out" "$(echo "$cmds" | sort)")
[ "$rc" -eq 0 ] && [ -z "$lacks$extra" ]
ok $? "completion: \"rdlockctl \" gives every command${lacks:+, but not $lacks}${extra:+, and $extra}"

# Each command's options, and --help; not help, whose argument is a
# command.
for c in $cmds; do
	[ "$c" = help ] && continue
	want=$( ("$ctl" "$c" --help | sed '1s/^Usage: rdlockctl \[-d DEVICE\] //' | opt_words;
		echo --help) | sort -u)
	out=$(complete_line "$bindir:$PATH" rdlockctl "$c" -)
	lacks=$(missing "$want" "$out")
	extra=$(missing "$out" "$want")
	[ -z "$lacks$extra" ]
	ok $? "completion: \"rdlockctl $c -\" gives its options${lacks:+, but not $lacks}${extra:+, and $extra}"
done

want=$("$ctl" help | sed -n '1,2{s/^Usage: rdlockctl \[-d DEVICE\]/-d/;p;}' | opt_words)
out=$(complete_line "$bindir:$PATH" rdlockctl -)
[ "$out" = "$want" ]
ok $? "completion: \"rdlockctl -\" gives $(echo "$want" | words)"

out=$(complete_line "$bindir:$PATH" rdlockctl -d /dev/nu)
echo "$out" | grep -qx /dev/null
ok $? "completion: \"rdlockctl -d /dev/nu\" gives /dev/null"

# uapi.rst's RDLOCK_IOC_STATS lists exactly the names the kernel gives
# (dev_stats.c's tables; dlm_converts_FROM_TO stands for nine).
kern=$(sed -n 's/^[^"]*= *"\([a-z0-9_]*\)",*$/\1/p; s/^[^"]*{ "\(dlm_[a-z_]*\)".*/\1/p; s/^[^"]*"ls_users".*/ls_users/p' \
	"$top/kmod/dev_stats.c"
	grep -o '"dlm_[a-z_]*"' "$top/kmod/dev_stats.c" | tr -d '"')
kern=$(echo "$kern" | sort -u)
# shellcheck disable=SC2016 # reST's double backquotes, not expansions
doc=$(sed -n '/^RDLOCK_IOC_STATS$/,/^RDLOCK_IOC_JOIN/p' \
	"$top/Documentation/rdlock/uapi.rst" |
	grep -E '^``[a-z0-9_]+(_FROM_TO)?``(, ``[a-z0-9_]+``)*( \(a gauge\))?$' |
	grep -o '``[a-z0-9_A-Z]*``' | tr -d '`' |
	sed 's/^dlm_converts_FROM_TO$/dlm_converts_nl_nl dlm_converts_nl_pr dlm_converts_nl_ex dlm_converts_pr_nl dlm_converts_pr_pr dlm_converts_pr_ex dlm_converts_ex_nl dlm_converts_ex_pr dlm_converts_ex_ex/' |
	tr ' ' '\n' | sort -u)
lacks=$(missing "$kern" "$doc")
extra=$(missing "$doc" "$kern")
[ "$(echo "$kern" | wc -l)" -gt 60 ] && [ -z "$lacks$extra" ]
ok $? "uapi.rst lists the $(echo "$kern" | wc -l) counter names of dev_stats.c${lacks:+, but not $lacks}${extra:+, and $extra}"

# A lockspace argument: "rdlockctl ls"'s names (a stand-in that lists two,
# the rest from the tool): locks takes any, lock no kernel user's.
mkdir "$tmp/fake"
cat > "$tmp/fake/rdlockctl" << EOF
#!/bin/sh
[ "\$1" = ls ] || exec "$bindir/rdlockctl" "\$@"
printf 'NAME KIND\nplain-a plain\ndlmh.0123 kernel\n'
EOF
chmod +x "$tmp/fake/rdlockctl"
out=$(complete_line "$tmp/fake:$PATH" rdlockctl locks '' | tr '\n' ' ')
[ "$out" = "dlmh.0123 plain-a " ]
ok $? "completion: \"rdlockctl locks \" gives every lockspace (got: $out)"
out=$(complete_line "$tmp/fake:$PATH" rdlockctl locks --json p)
[ "$out" = plain-a ]
ok $? "completion: \"rdlockctl locks --json p\" gives plain-a (got: $out)"
out=$(complete_line "$tmp/fake:$PATH" rdlockctl lock '')
[ "$out" = plain-a ]
ok $? "completion: \"rdlockctl lock \" leaves a kernel user's out (got: $out)"

out=$(complete_line "$tmp/no-such-dir" rdlockctl '')
[ -z "$out" ]
ok $? "completion: nothing without a rdlockctl in PATH${out:+ (but: $(echo "$out" | head -n 3 | words))}"

tap_end
