#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kunit.sh - load every KUnit suite module of the payload and print its KTAP
# results, taken from the kernel log (KUnit reports there), on stdout so the
# host counts them. Runs in a debug-kernel guest; busybox sh. A module that
# reports nothing, or one of whose suites (rdlock_proto_kunit has several)
# does not end with "ok", fails the run.
#   kunit.sh [NAME]   only the suite module NAME (e.g. rdlock_proto_kunit)

rc=0
found=0
# The protocol suite runs the real protocols of rdlock.ko.
if ! insmod /rdlock/modules/rdlock.ko; then
	echo "not ok - insmod rdlock"
	exit 1
fi
for ko in /rdlock/modules/${1:-*_kunit}.ko; do
	[ -e "$ko" ] || continue
	found=1
	name=$(basename "$ko" .ko)
	dmesg -c > /dev/null
	if ! insmod "$ko"; then
		echo "not ok - insmod $name"
		rc=1
		continue
	fi
	# KTAP lines only, with or without printk timestamps; a failed
	# expectation's message (the lines after "FAILED at", which carry
	# no "#") as diagnostics, so that the host's summary shows why.
	ktap=$(dmesg | sed 's/^\[[ 0-9.]*\] //' | awk '
		/^ *(KTAP|# |[0-9]+\.\.[0-9]+|(not )?ok )/ {
			print
			why = /FAILED at /
			next
		}
		why { sub(/^ */, ""); print "        # " $0 }')
	echo "$ktap"
	# Each suite's own result is an unindented result line: one at least,
	# and every one "ok".
	suites=$(echo "$ktap" | grep -E '^(not )?ok ')
	if [ -z "$suites" ] || echo "$suites" | grep -q '^not ok '; then
		echo "not ok - $name: no passing suite result"
		rc=1
	fi
	rmmod "$name" || rc=1
done
rmmod rdlock || rc=1
if [ $found -eq 0 ]; then
	echo "not ok - no KUnit modules in the payload"
	rc=1
fi
exit $rc
