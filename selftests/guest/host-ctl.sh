#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Ask the host to act on a guest, and wait until it has:
#   host-ctl.sh kill N | stop N | cont N | link N off|on | freeze N MS | boot N
#   host-ctl.sh gone N SEC
# The request goes over /dev/ttyS2 to cluster.sh's scripts/host-ctl.py,
# which says there what each does. Exit 0 when the host answers "ok";
# otherwise its answer is printed and the exit is 1. A node that asks for
# its own kill gets no answer: it is gone. No answer within
# RDL_HOST_CTL_WAIT seconds (default 60; a freeze's or gone's time counts)
# fails.
# Answers carry no request id: one request at a time per guest (a test's
# and its fence agent's must not overlap).

CTL=/dev/ttyS2

[ $# -ge 2 ] || { echo "usage: host-ctl.sh REQUEST NODE [ARG]" >&2; exit 2; }
exec 9<>$CTL || exit 1
stty -F $CTL raw -echo 2>/dev/null
echo "$*" >&9
IFS= read -r -t "${RDL_HOST_CTL_WAIT:-60}" reply <&9
exec 9>&-
case $reply in
ok*)	exit 0 ;;
esac
echo "host-ctl.sh: $*: ${reply:-no answer}" >&2
exit 1
