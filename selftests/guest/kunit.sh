#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kunit.sh - load every KUnit suite module of the payload and print its KTAP
# results, taken from the kernel log (KUnit reports there), on stdout so the
# host counts them. Runs in a debug-kernel guest; busybox sh.

rc=0
found=0
for ko in /rdlock/modules/*_kunit.ko; do
	[ -e "$ko" ] || continue
	found=1
	dmesg -c > /dev/null
	if ! insmod "$ko"; then
		echo "not ok - insmod $(basename "$ko")"
		rc=1
		continue
	fi
	# KTAP lines only; the timestamps are stripped by the counter.
	dmesg | grep -E '^\[[ 0-9.]+\] +(KTAP|#|[0-9]+\.\.[0-9]+|(not )?ok )'
	rmmod "$(basename "$ko" .ko)" || rc=1
done
if [ $found -eq 0 ]; then
	echo "not ok - no KUnit modules in the payload"
	rc=1
fi
exit $rc
