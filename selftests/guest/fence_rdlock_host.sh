#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dlm_controld's fence agent in the test guests (dlm.conf: fence_all): it
# reads the agent's key=value lines on stdin, where dlm_controld always
# puts node=<corosync nodeid>, and has the host power that guest off (the
# nodeid less one: selftests/guest/lib.sh's corosync.conf). Exit 0 once
# the host says the guest is off, as a power fence agent does. With
# delay=SEC (dlm.conf: fence_all AGENT delay=SEC), as power fence agents'
# delay option, the node lives on that long, cut off, before its power
# goes. With method=link (dlm.conf: fence_all AGENT method=link) it fences
# as a switch-port agent does (fence_ifmib): the host cuts the node's
# link and the node runs on, cut off; its disk stays reachable, so a test
# that fences so must keep the node from writing meanwhile.

node=
delay=0
method=power
while IFS= read -r line; do
	case $line in
	node=*)	node=${line#node=} ;;
	delay=*) delay=${line#delay=} ;;
	method=*) method=${line#method=} ;;
	esac
done
case $node in
''|*[!0-9]*)	echo "fence_rdlock_host: no node=<id> on stdin" >&2; exit 1 ;;
esac
case $delay in
''|*[!0-9]*)	echo "fence_rdlock_host: delay=$delay is not seconds" >&2; exit 1 ;;
esac
[ "$node" -ge 1 ] || exit 1
if [ "$delay" -gt 0 ]; then
	echo "fence_rdlock_host: node $((node - 1)) (nodeid $node) in $delay s" >&2
	sleep "$delay"
fi
case $method in
power)
	echo "fence_rdlock_host: powering off node $((node - 1)) (nodeid $node)" >&2
	exec sh "$(dirname "$0")/host-ctl.sh" kill $((node - 1))
	;;
link)
	echo "fence_rdlock_host: cutting the link of node $((node - 1)) (nodeid $node)" >&2
	exec sh "$(dirname "$0")/host-ctl.sh" link $((node - 1)) off
	;;
esac
echo "fence_rdlock_host: method=$method is not power or link" >&2
exit 1
