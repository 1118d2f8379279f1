# SPDX-License-Identifier: GPL-2.0
#
# TAP lines for the shell tests of userspace/tests (sourced): ok STATUS
# TEXT prints "ok N - TEXT" for a 0 STATUS, else "not ok N - TEXT", and
# tap_end prints the counts and fails if any failed.
n=0
bad=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		bad=$((bad + 1))
	fi
}

tap_end() {
	echo "# $((n - bad)) passed, $bad failed"
	[ "$bad" -eq 0 ]
}
