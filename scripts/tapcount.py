#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# tapcount.py - count TAP/KTAP leaf results and look for kernel splats.
#
# usage: tapcount.py [-q] [--scan-only FILE]... [FILE]...
#
# FILEs are counted as TAP/KTAP and scanned for splats; --scan-only files
# (e.g. a kernel console log) are only scanned.  Prints one line
#
#   passed=<p> failed=<f> skipped=<s> splat=<0|1>
#
# on stdout, and each splat line (file:line: text) on stderr unless -q.
# Exits 1 if anything failed or splatted, else 0.
#
# Only leaf results are counted: KTAP prints a test's subtests, indented,
# before the test's own result line, so a result line directly preceded by
# a more deeply indented result is a parent and is not counted.  kselftest
# nests with "# " prefixes instead of spaces; both count as indentation.
# printk timestamps ("[   12.345678] ") are stripped so that KUnit output
# taken from the kernel log can be counted too.

import re
import sys

RESULT = re.compile(r'(not )?ok(?=\s|$)(?:\s+\d+)?\s*(.*)')
SKIP = re.compile(r'#\s*(SKIP|TODO)\b', re.IGNORECASE)
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\] ?')
BAIL_OUT = re.compile(r'^\s*Bail out!')

# Kernel splats.  Kept specific enough that the debug kernel's normal boot
# banners (KASAN, lockdep, kmemleak) do not match.
SPLAT = re.compile('|'.join([
	r'BUG:',
	r'WARNING:',
	r'\bOops\b',
	r'Kernel panic',
	r'general protection fault',
	r'kernel BUG',
	r'UBSAN:',
	r'INFO: task .* blocked for more than',
	r'INFO: possible',
	r'INFO: inconsistent',
	r'INFO: suspicious RCU',
	r'INFO: trying to register non-static key',
	r'INFO: rcu_\w+ (self-)?detected stall',
	r'DEBUG_LOCKS_WARN_ON',
	r'Call Trace:',
	r'kmemleak: \d+ new suspected memory leak',
]))


def indent_of(line):
	"""Split off indentation (spaces or kselftest "# " prefixes)."""
	depth = 0
	while True:
		stripped = line.lstrip(' \t')
		depth += len(line) - len(stripped)
		if stripped.startswith('# ') and RESULT.match(stripped[2:].lstrip()):
			depth += 2
			line = stripped[2:]
			continue
		return depth, stripped


def count(lines, totals):
	prev_depth = None
	for line in lines:
		line = TIMESTAMP.sub('', line)
		if BAIL_OUT.match(line):
			totals['failed'] += 1
			continue
		depth, text = indent_of(line)
		m = RESULT.match(text)
		if not m:
			continue
		is_parent = prev_depth is not None and prev_depth > depth
		prev_depth = depth
		if is_parent:
			continue
		if SKIP.search(m.group(2)):
			totals['skipped'] += 1
		elif m.group(1):
			totals['failed'] += 1
		else:
			totals['passed'] += 1


def scan(name, lines, quiet):
	found = False
	for nr, line in enumerate(lines, 1):
		if SPLAT.search(line):
			found = True
			if not quiet:
				print(f'{name}:{nr}: {line}', file=sys.stderr)
	return found


def read_lines(name):
	with open(name, errors='replace') as f:
		return [l.rstrip('\r\n') for l in f]


def main(argv):
	quiet = False
	tap_files, scan_files = [], []
	args = iter(argv)
	for arg in args:
		if arg == '-q':
			quiet = True
		elif arg == '--scan-only':
			scan_files.append(next(args))
		elif arg.startswith('-'):
			sys.exit('usage: tapcount.py [-q] [--scan-only FILE]... [FILE]...')
		else:
			tap_files.append(arg)

	totals = {'passed': 0, 'failed': 0, 'skipped': 0}
	splat = False
	for name in tap_files:
		lines = read_lines(name)
		count(lines, totals)
		splat |= scan(name, lines, quiet)
	for name in scan_files:
		splat |= scan(name, read_lines(name), quiet)

	print('passed={passed} failed={failed} skipped={skipped}'.format(**totals),
	      f'splat={int(splat)}')
	return 1 if totals['failed'] or splat else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
