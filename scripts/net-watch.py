#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""net-watch.py DIR STALL_SEC MONITOR... - watch the guests' NIC queues.

cluster.sh runs this beside a booted cluster.  Every second it asks each
guest's QEMU (human monitor on a unix socket) how far its virtio-net
transmit queue is: the avail index the guest published (read from guest
memory) against the last one QEMU took.  A guest whose published packets
QEMU has not taken for STALL_SEC seconds has a stalled network: that is
written to DIR/node<i>.netstall, once, with the queues' state.  Changes of
the indices go to DIR/node<i>.txq, for the record.  A node that
host-ctl.py froze, cut off or killed, or that restarts by itself as a
test awaits (DIR/node<i>.held, .killed or .reset) is left alone
meanwhile.
"""

import os
import re
import sys
import time

from qemu_monitor import Monitor

NIC = "/machine/peripheral/nic0/virtio-backend"


def field(text, name):
    m = re.search(r"^\s*%s:\s*(\S+)" % name, text, re.M)
    return m.group(1) if m else None


def tx_state(mon):
    status = mon.cmd("info virtio-queue-status %s 1" % NIC)
    avail = field(status, "avail")
    # No ring yet: the guest's driver has not set the queue up.
    if avail is None or int(avail, 16) == 0:
        return None, status
    mem = mon.cmd("xp /1hx 0x%x" % (int(avail, 16) + 2))
    m = re.search(r":\s*0x([0-9a-f]+)", mem)
    state = {
        "guest_avail": int(m.group(1), 16) if m else -1,
        "last_avail": int(field(status, "last_avail_idx")),
        "used": int(field(status, "used_idx")),
        "inuse": int(field(status, "inuse")),
    }
    return state, status


def main():
    out_dir, stall_sec = sys.argv[1], float(sys.argv[2])
    mons = [Monitor(p, timeout=5) for p in sys.argv[3:]]
    last = [None] * len(mons)
    since = [None] * len(mons)
    stalled = [False] * len(mons)
    start = time.monotonic()
    while True:
        now = time.monotonic()
        for i, mon in enumerate(mons):
            # Frozen, cut, killed or restarting on purpose (host-ctl.py):
            # no stall.
            if any(os.path.exists("%s/node%d.%s" % (out_dir, i, what))
                   for what in ("held", "killed", "reset")):
                last[i] = since[i] = None
                continue
            try:
                state, status = tx_state(mon)
            except OSError:
                mon.sock = None
                continue
            if state is None:
                continue
            if state != last[i]:
                with open("%s/node%d.txq" % (out_dir, i), "a") as f:
                    f.write("%.1f %s\n" % (now - start, " ".join(
                        "%s=%d" % kv for kv in state.items())))
            pending = state["guest_avail"] != state["last_avail"]
            moved = last[i] is None or state["last_avail"] != last[i]["last_avail"]
            last[i] = state
            if not pending or moved:
                since[i] = None
                continue
            since[i] = since[i] or now
            if stalled[i] or now - since[i] < stall_sec:
                continue
            stalled[i] = True
            with open("%s/node%d.netstall" % (out_dir, i), "w") as f:
                f.write("at %.1f s: the guest published transmit buffers up to "
                        "%d, QEMU took none past %d for %.0f s\n\n" %
                        (now - start, state["guest_avail"],
                         state["last_avail"], now - since[i]))
                for cmd in ("info network",
                            "info virtio-status %s" % NIC,
                            "info virtio-queue-status %s 0" % NIC):
                    f.write("(qemu) %s\n%s" % (cmd, mon.cmd(cmd)))
                f.write("(qemu) info virtio-queue-status %s 1\n%s" % (NIC, status))
        time.sleep(max(0.0, 1.0 - (time.monotonic() - now)))


if __name__ == "__main__":
    main()
