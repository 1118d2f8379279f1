#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""qemu-monitor.py SOCKET CMD... - run human monitor commands on a QEMU.

cluster.sh gives every guest a monitor on a unix socket; this prints what
QEMU itself says of a guest's devices (virtio queue indices, say) when the
guest's own log points at the emulator.
"""

import re
import socket
import sys

PROMPT = b"(qemu) "


def read_to_prompt(sock):
    data = b""
    while not data.endswith(PROMPT):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def clean(data):
    text = data.decode(errors="replace")
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    text = text.replace("\r", "")
    if text.endswith(PROMPT.decode()):
        text = text[: -len(PROMPT)]
    return text


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: qemu-monitor.py SOCKET CMD...")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(sys.argv[1])
    read_to_prompt(sock)
    for cmd in sys.argv[2:]:
        sock.sendall(cmd.encode() + b"\n")
        out = clean(read_to_prompt(sock))
        # The monitor echoes the command line first.
        lines = out.split("\n", 1)
        print("(qemu) " + cmd)
        print(lines[1] if len(lines) > 1 else "", end="")
    sock.close()


if __name__ == "__main__":
    main()
