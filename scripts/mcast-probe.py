#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Exit 0 if a UDP multicast datagram sent on the loopback comes back.

cluster.sh puts its guests on such a group (QEMU's socket netdev with
localaddr=127.0.0.1); a host whose loopback cannot do multicast needs
another network.
"""

import socket
import sys

GROUP = "230.77.0.254"


def main():
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        rx.bind((GROUP, 0))
        rx.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                      socket.inet_aton(GROUP) + socket.inet_aton("127.0.0.1"))
        rx.settimeout(2)
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF,
                      socket.inet_aton("127.0.0.1"))
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        tx.sendto(b"rdlock", (GROUP, rx.getsockname()[1]))
        return 0 if rx.recv(16) == b"rdlock" else 1
    except OSError:
        return 1
    finally:
        rx.close()
        tx.close()


if __name__ == "__main__":
    sys.exit(main())
