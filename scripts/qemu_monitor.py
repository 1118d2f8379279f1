#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""qemu_monitor.py SOCKET CMD... - run human monitor commands on a QEMU.

cluster.sh gives every guest a monitor on a unix socket; this prints what
QEMU itself says of a guest's devices (virtio queue indices, say) when the
guest's own log points at the emulator.  net-watch.py uses its Monitor.
"""

import re
import socket
import sys

PROMPT = b"(qemu) "


class Monitor:
    """A connection to one QEMU's human monitor, made at the first cmd()."""

    def __init__(self, path, timeout=10):
        self.path = path
        self.timeout = timeout
        self.sock = None

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.path)
        self.sock = sock
        self.read()

    def read(self):
        data = b""
        while not data.endswith(PROMPT):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("monitor closed")
            data += chunk
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "",
                      data.decode(errors="replace"))
        return text.replace("\r", "")[: -len(PROMPT)]

    def cmd(self, line):
        """CMD's output; the monitor's echo of the command line cut."""
        if self.sock is None:
            self.connect()
        self.sock.sendall(line.encode() + b"\n")
        out = self.read()
        return out.split("\n", 1)[1] if "\n" in out else ""


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: qemu_monitor.py SOCKET CMD...")
    mon = Monitor(sys.argv[1])
    for cmd in sys.argv[2:]:
        print("(qemu) " + cmd)
        print(mon.cmd(cmd), end="")


if __name__ == "__main__":
    main()
