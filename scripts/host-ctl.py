#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""host-ctl.py DIR WORK NODES - carry out the guests' requests to the host.

cluster.sh gives guest i a serial port on the unix socket WORK/ctl<i> (the
guest's /dev/ttyS2, selftests/guest/host-ctl.sh) and a human monitor of
its own on WORK/hmon<i>.  A guest writes one request a line; this answers
each with one line, "ok ..." or "err ...", once it is carried out:

  kill N         node N's QEMU quits at once, as a power cut; DIR/nodeN.killed
                 records it.  Killing a node already killed is "ok" (a fence
                 agent's power-off of a dead node).
  stop N         node N's CPUs stop (a freeze): DIR/nodeN.held while stopped
  cont N         node N runs again
  link N off|on  node N's NIC loses or regains its link (a cut cable):
                 DIR/nodeN.held while off
  freeze N MS    stop, MS milliseconds, cont; answered after the cont (a
                 kill meanwhile, a fence's, wins: no cont)
  boot N         node N, killed, boots again (a power-on): DIR/nodeN.boot
                 asks cluster.sh, which starts its QEMU anew, its kernel
                 told rdlock_guest.boot=2, its serial logs appended to;
                 answered once that QEMU runs
  gone N SEC     node N is to restart itself (a self-fence: -no-reboot
                 makes a restart quit QEMU): answered once its QEMU is
                 gone, within SEC seconds, DIR/nodeN.reset recording it

While DIR/nodeN.held or DIR/nodeN.killed exists, net-watch.py leaves that
node alone: a frozen or cut guest's transmit queue is not a stall.  Every
request and its outcome is appended to DIR/host-ctl.log, with the seconds
since start.  A kill, or a restart awaited with gone, is the only way
cluster.sh accepts a guest that never reported its exit.
"""

import os
import socket
import sys
import threading
import time

from qemu_monitor import Monitor

FREEZE_MAX_MS = 600000
GONE_MAX_S = 600
BOOT_WAIT_S = 60


class Node:
    """One guest: its request channel, its monitor, what was done to it."""

    def __init__(self, index, work):
        self.index = index
        self.ctl_path = "%s/ctl%d" % (work, index)
        self.mon_path = "%s/hmon%d" % (work, index)
        self.mon = Monitor(self.mon_path, timeout=10)
        self.lock = threading.Lock()
        self.killed = False
        self.sock = None
        self.send_lock = threading.Lock()


class HostCtl:
    def __init__(self, out_dir, work, nr_nodes):
        self.out_dir = out_dir
        self.nodes = [Node(i, work) for i in range(nr_nodes)]
        self.start = time.monotonic()
        self.log_lock = threading.Lock()

    def log(self, text):
        with self.log_lock, open(self.out_dir + "/host-ctl.log", "a") as f:
            f.write("%.2f %s\n" % (time.monotonic() - self.start, text))

    def mark(self, node, what, on):
        path = "%s/node%d.%s" % (self.out_dir, node.index, what)
        if on:
            with open(path, "w") as f:
                f.write("%.2f\n" % (time.monotonic() - self.start))
        elif os.path.exists(path):
            os.unlink(path)

    def monitor(self, node, cmd):
        out = node.mon.cmd(cmd)
        if out.strip():
            raise OSError("%s: %s" % (cmd, out.strip()))

    def do_kill(self, node):
        if node.killed:
            return "already off"
        # Marked first: the guest vanishes the moment QEMU reads "quit".
        self.mark(node, "killed", True)
        node.killed = True
        try:
            node.mon.cmd("quit")
        except OSError:
            pass    # QEMU closed the monitor on its way out: it is gone
        return "off"

    def do_boot(self, node):
        if not node.killed:
            raise ValueError("node %d is running" % node.index)
        self.mark(node, "boot", True)
        # cluster.sh starts it and takes both marks away.
        deadline = time.monotonic() + BOOT_WAIT_S
        killed = "%s/node%d.killed" % (self.out_dir, node.index)
        while os.path.exists(killed):
            if time.monotonic() > deadline:
                self.mark(node, "boot", False)
                raise OSError("not started within %d s" % BOOT_WAIT_S)
            time.sleep(0.2)
        node.mon = Monitor(node.mon_path, timeout=10)
        node.killed = False
        return "booting"

    def held(self, node, cmd):
        """cmd with node marked held; unmarked again if cmd fails."""
        self.mark(node, "held", True)
        try:
            self.monitor(node, cmd)
        except OSError:
            self.mark(node, "held", False)
            raise

    def do_stop(self, node):
        self.held(node, "stop")
        return "stopped"

    def do_cont(self, node):
        self.monitor(node, "cont")
        self.mark(node, "held", False)
        return "running"

    def do_link(self, node, state):
        if state not in ("on", "off"):
            raise ValueError("link on|off, not %s" % state)
        if state == "off":
            self.held(node, "set_link nic0 off")
        else:
            self.monitor(node, "set_link nic0 on")
            self.mark(node, "held", False)
        return "link " + state

    def freeze(self, node, ms):
        """stop, ms, cont: node's lock not held meanwhile, so that a
        fence agent's kill of the frozen node is not held up, and the
        node is not thawed once killed."""
        ms = int(ms)
        if not 0 < ms <= FREEZE_MAX_MS:
            raise ValueError("freeze of 1..%d ms, not %d" % (FREEZE_MAX_MS, ms))
        with node.lock:
            if node.killed:
                raise ValueError("node %d was killed" % node.index)
            self.do_stop(node)
        time.sleep(ms / 1000.0)
        with node.lock:
            if node.killed:
                return "frozen, then killed"
            self.do_cont(node)
        return "frozen %d ms" % ms

    def gone(self, node, secs):
        """Wait for node's QEMU to quit by itself: its monitor closed or
        refusing connections (a slow answer is not that).  Only then is
        it marked reset, so that cluster.sh takes it for a finished guest.
        The node's lock is not held meanwhile."""
        secs = int(secs)
        if not 0 < secs <= GONE_MAX_S:
            raise ValueError("gone within 1..%d s, not %d" % (GONE_MAX_S, secs))
        with node.lock:
            if node.killed:
                raise ValueError("node %d was killed" % node.index)
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            try:
                node.mon.cmd("info status")
            except TimeoutError:
                continue
            except OSError:
                with node.lock:
                    self.mark(node, "reset", True)
                    node.killed = True
                return "gone"
            time.sleep(0.5)
        raise OSError("node %d still running after %d s" % (node.index, secs))

    def carry_out(self, words):
        ops = {"kill": (self.do_kill, 0), "stop": (self.do_stop, 0),
               "cont": (self.do_cont, 0), "link": (self.do_link, 1),
               "freeze": (self.freeze, 1), "boot": (self.do_boot, 0),
               "gone": (self.gone, 1)}
        if len(words) < 2 or words[0] not in ops:
            raise ValueError("unknown request")
        fn, nargs = ops[words[0]]
        if len(words) != 2 + nargs:
            raise ValueError("%s takes %d argument(s)" % (words[0], 1 + nargs))
        index = int(words[1])
        if not 0 <= index < len(self.nodes):
            raise ValueError("no node %d" % index)
        node = self.nodes[index]
        if words[0] == "freeze":
            return self.freeze(node, words[2])
        if words[0] == "gone":
            return self.gone(node, words[2])
        with node.lock:
            if node.killed and words[0] not in ("kill", "boot"):
                raise ValueError("node %d was killed" % index)
            return fn(node, *words[2:])

    def serve(self, requester, line):
        words = line.split()
        try:
            answer = "ok " + self.carry_out(words)
        except (OSError, ValueError) as e:
            answer = "err %s" % e
        self.log("node %d: %s: %s" % (requester.index, line, answer))
        with requester.send_lock:
            try:
                if requester.sock is not None:
                    requester.sock.sendall(answer.encode() + b"\n")
            except OSError:
                pass    # the requester was killed, by its own request maybe

    def listen(self, node):
        """Read node's requests, each in a thread; once its QEMU goes,
        those of the next QEMU of it (a boot), for as long as this runs."""
        while True:
            while node.sock is None:
                try:
                    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    sock.connect(node.ctl_path)
                    node.sock = sock
                except OSError:
                    sock.close()
                    time.sleep(0.2)
            self.read_requests(node)
            with node.send_lock:
                node.sock.close()
                node.sock = None

    def read_requests(self, node):
        buf = b""
        while True:
            try:
                data = node.sock.recv(4096)
            except OSError:
                data = b""
            if not data:
                return
            buf += data.replace(b"\r", b"\n")
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode(errors="replace").strip()
                if line:
                    threading.Thread(target=self.serve, args=(node, line),
                                     daemon=True).start()


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: host-ctl.py DIR WORK NODES")
    ctl = HostCtl(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    threads = [threading.Thread(target=ctl.listen, args=(n,), daemon=True)
               for n in ctl.nodes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
