#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""demo-report.py - the demo's report, from the logs of its guest runs.

usage: demo-report.py [--no-plot] [LOGDIR]     (default build/demo)

Reads what scripts/demo.sh's guest clusters left in LOGDIR (node*.out of
the cluster, exact-count and OCFS2 run, ocfs2/fsck, lockbench/,
rdlockbench/, bench-verbs/, bench-twosided/, failbench/, each cluster's
summary, and demo.sh's steps file) and prints one screen: the cluster,
the exact-count proof, a table per workload with the protocols side by
side, the transport next to perftest, OCFS2's metadata operations on o2cb
and on rdlock, a node killed mid-workload (scripts/demo_failbench.py), and
verdict lines that are ratios measured in this run. Writes every figure to
LOGDIR/report.json and plots the latency CDF, throughput per protocol,
OCFS2's rdlock / o2cb ratios and the throughput through the node's death
with gnuplot to LOGDIR/report.png (or .svg).

Only what the tools printed is reported, and every figure from JSON,
which the guest scripts print into node<i>.out with "#json " in front
(guest/lib.sh's rdl_json, rdl_json_obj and rdl_json_cmd), never from their
text: the benchmarks' own (--json FILE): rdlock-lock-bench's (table 1 and
the transport table), rdlock-bench's (tables 2 and 3) and
rdlock-xport-bench's (the transport table); guest/ocfs2.sh's, an object
per phase (table 4) and one for its mount, benchmark and run;
guest/demo.sh's: the kernel, the cluster as each node sees it
(rdlockctl status --json), its RDMA links (rdma -j link show),
xport_test's result and K, the exact count's counters, whether OCFS2 ran
and how each OCFS2 run ended; lib.sh's: each run's cluster size and
whether fs/dlm came up; the backend of lockbench.sh and rdlockbench.sh,
perftest's device and result from bench.sh and the rdlockctl lock
counter's from rdlockbench.sh. What the host wrote is read as it is:
demo.sh's steps file and ocfs2/fsck (tab-separated) and each cluster's
summary (cluster.sh's "cluster: P passed, F failed, S skipped" line, the
one text line parsed), for the guest runs' status.

A figure the report needs that the JSON does not hold is printed as n/a
and named on standard error ("demo-report: missing figure: FIGURE (LOG:
WHO's JSON)"), and the exit status is 1. Exits 0 once the report is
printed with every needed figure (the guest runs' own status is demo.sh's
business), 2 on bad usage.
"""

import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

import demo_failbench

PROTOS = ("bakery", "caslock", "cql")
# Locks by name (guest/rdlockbench.sh): the stock kernel's fs/dlm beside them.
RB_PROTOS = PROTOS + ("dlm",)
PROTO_NAMES = {"bakery": "bakery", "caslock": "CAS spinlock", "cql": "CQL",
               "dlm": "fs/dlm"}
# Goals of the CQL lock: (label, figure, bound).
CQL_OPS_ACQ_MAX = 1.1
CQL_OPS_ACQ_REL_MAX = 2.2
CQL_MSGS_PER_XFER = 1.0
CQL_MSGS_TOL = 0.05
CQL_VS_BAKERY_MIN = 1.5
CQL_VS_CAS_MIN = 1.0
CQL_P99_VS_CAS_MAX = 0.5
CQL_JAIN_MIN = 0.99
CQL_UNC_MAX = 1.15
# Goals of the fs/dlm comparison.
DLM_GOAL_X = 5.0
HOT_GOAL_DEV = 0.10
WIDTH = 100


# --------------------------------------------------------------------------
# Reading the logs

def read_lines(path):
    """The file's lines, or [] if it is not there (a step that never ran)."""
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def node_files(d):
    """node<i>.out of directory d, by node number."""
    out = {}
    for p in glob.glob(os.path.join(d, "node*.out")):
        m = re.fullmatch(r"node(\d+)\.out", os.path.basename(p))
        if m:
            out[int(m.group(1))] = read_lines(p)
    return dict(sorted(out.items()))


def json_objects(lines):
    """Every JSON object a guest script printed as '#json ' lines.

    rdlockbench.sh prints several files back to back with the prefix on
    every line, so the text is joined and decoded object after object.
    """
    text = "\n".join(ln[6:] for ln in lines if ln.startswith("#json "))
    dec = json.JSONDecoder()
    objs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError:
            # A truncated file (a guest killed mid-print): skip to the next
            # object that starts a line.
            j = text.find("\n{", i + 1)
            if j < 0:
                break
            i = j + 1
            continue
        if isinstance(obj, dict):
            objs.append(obj)
    return objs


def num(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def figures_of(lines, tool):
    """(figure, object) of every JSON object tool printed into lines."""
    return [(o.get("figure"), o) for o in json_objects(lines) if o.get("tool") == tool]


def ints(o, *keys):
    """Whether o holds an integer at every key."""
    return all(isinstance(o.get(k), int) and not isinstance(o.get(k), bool)
               for k in keys)


def cluster_summary(d):
    """(passed, failed, skipped) of cluster.sh's summary file, or None."""
    for ln in read_lines(os.path.join(d, "summary")):
        m = re.match(r"cluster: (\d+) passed, (\d+) failed, (\d+) skipped", ln)
        if m:
            return tuple(int(x) for x in m.groups())
    return None


# --------------------------------------------------------------------------
# The cluster and the exact count (guest/demo.sh)

def cluster_size(nodes):
    """Nodes in a run: what the guests were told (lib.sh's JSON), not the
    logs that exist; None if no guest said."""
    ns = [o["nodes"] for lines in nodes.values()
          for fig, o in figures_of(lines, "lib.sh")
          if fig == "cluster_size" and ints(o, "nodes")]
    return max(ns) if ns else None


def parse_formation(d):
    """Per node: guest/demo.sh's JSON (the kernel, the cluster as the node
    sees it, its RDMA links, xport_test's result and K, the counters)."""
    nodes = node_files(d)
    r = {"nodes": cluster_size(nodes), "per_node": {}}
    for i, lines in nodes.items():
        n = {"status": {}, "peers": {}, "rdma_links": [], "counters": {}}
        for fig, o in figures_of(lines, "demo.sh"):
            if fig == "kernel" and isinstance(o.get("release"), str):
                n["kernel"] = o["release"]
            elif fig == "status" and isinstance(o.get("status"), dict):
                st = o["status"]
                n["status"] = {k: st[j] for k, j in (
                    ("state", "state"), ("cluster", "cluster_id"),
                    ("node", "node_id"), ("backend", "backend")) if j in st}
                n["peers"] = {p["id"]: {"state": p.get("state"), "flags": p.get("flags"),
                                        "verbs_atomics": p.get("verbs_atomics"),
                                        "connects": p.get("connects")}
                              for p in st.get("nodes") or []
                              if isinstance(p, dict) and ints(p, "id")}
            elif fig == "rdma_links" and isinstance(o.get("links"), list):
                n["rdma_links"] = [{"link": f"{lk.get('ifname')}/{lk.get('port')}",
                                    "state": lk.get("state"), "netdev": lk.get("netdev")}
                                   for lk in o["links"] if isinstance(lk, dict)]
            elif fig == "primitives" and ints(o, "k", "passed"):
                n["k"] = o["k"]
                n["xport_test_ok"] = o["passed"] == 1
            elif fig == "exact_count" and ints(o, "counter_node", "value", "expected"):
                n["counters"][o["counter_node"]] = o["value"]
                n["expected"] = o["expected"]
        r["per_node"][i] = n
    # Every guest boots the same kernel; node 0's word first.
    r["kernel"] = next((n["kernel"] for n in r["per_node"].values() if "kernel" in n),
                       None)
    return r


def summarize_formation(f):
    per = f["per_node"].values()
    s = {"nodes": f["nodes"], "kernel": f.get("kernel")}
    backends = {n["status"].get("backend") for n in per} - {None}
    s["backend"] = backends.pop() if len(backends) == 1 else (
        "/".join(sorted(backends)) if backends else None)
    s["backend_agreed"] = sum(1 for n in per if n["status"].get("backend"))
    s["cluster_id"] = next((n["status"]["cluster"] for n in per
                            if "cluster" in n["status"]), None)
    # Each node's own view: how many of the nodes it sees ready.
    s["ready_views"] = {i: sum(1 for p in n["peers"].values() if p["state"] == "ready")
                        for i, n in f["per_node"].items() if n["peers"]}
    s["verbs_atomics"] = None
    views = [n["peers"] for n in per if n["peers"]]
    if views:
        s["verbs_atomics"] = sum(1 for p in views[0].values() if p["verbs_atomics"])
    s["devices"] = {i: n["rdma_links"] for i, n in f["per_node"].items()
                    if n["rdma_links"]}
    ks = {n.get("k") for n in per} - {None}
    s["k"] = ks.pop() if len(ks) == 1 else None
    s["xport_test_ok"] = sum(1 for n in per if n.get("xport_test_ok"))
    s["xport_test_ran"] = sum(1 for n in per if "xport_test_ok" in n)
    # Every node reads every counter; they must all agree.
    seen = {}
    for n in per:
        for t, v in n["counters"].items():
            seen.setdefault(t, set()).add(v)
    s["counters"] = {t: (vs.pop() if len(vs) == 1 else sorted(vs))
                     for t, vs in sorted(seen.items())}
    return s


# --------------------------------------------------------------------------
# OCFS2's metadata benchmark on o2cb and on rdlock (guest/demo.sh, ocfs2.sh)

OCFS2_STACKS = ("o2cb", "rdlock")
OCFS2_PHASES = ("shared-create", "shared-stat", "shared-remove",
                "private-create", "private-stat", "tmpfs-stat",
                "private-remove")
# Not an OCFS2 operation: private-stat's loop on tmpfs (ocfs2.sh).
OCFS2_CONTROL = "tmpfs-stat"
# The rdlock run's benchmark under an unprivileged user's flood, and after
# it (ocfs2.sh, flood_bench).
OCFS2_FLOOD_RUNS = ("flood", "after")


def parse_ocfs2(d):
    """Per stack and node: the benchmark's figures (ocfs2.sh's JSON, one
    object per phase), its mount, benchmark and run (ocfs2.sh's JSON) and
    how each run ended (guest/demo.sh's JSON); whether OCFS2 was asked for
    at all (guest/demo.sh's JSON, None if no guest said)."""
    files = node_files(d)
    r = {"nodes": cluster_size(files), "per_node": {}, "fsck": {}, "asked": None}
    for i, lines in files.items():
        n = {st: {"phases": {}} for st in OCFS2_STACKS}
        for fig, o in figures_of(lines, "demo.sh"):
            if fig == "ocfs2" and ints(o, "asked"):
                r["asked"] = bool(r["asked"]) or o["asked"] == 1
            elif fig == "ocfs2_run" and o.get("stack") in n and ints(o, "passed"):
                n[o["stack"]]["ok"] = o["passed"] == 1
        flood = {"phases": {}}
        for fig, o in figures_of(lines, "ocfs2.sh"):
            if fig is None and o.get("run") in OCFS2_FLOOD_RUNS and ints(o, "ops", "ms"):
                flood["phases"][f"{o['run']}/{o.get('phase')}"] = (o["ops"], o["ms"])
                continue
            if fig == "flood":
                flood["figure"] = o
                continue
            f = n.get(o.get("stack"))
            if f is None:
                continue
            if fig == "mount" and ints(o, "passed"):
                f["mount_ok"] = o["passed"] == 1
                if ints(o, "s"):
                    f["mount_s"] = o["s"]
            elif fig == "bench" and ints(o, "files", "passed"):
                f["files"] = o["files"]
                f["bench_ok"] = o["passed"] == 1
            elif fig == "run" and ints(o, "s"):
                f["took_s"] = o["s"]
            elif fig is None and ints(o, "ops", "ms"):
                f["phases"][o.get("phase")] = (o["ops"], o["ms"])
        n["flood"] = flood
        r["per_node"][i] = n
    for ln in read_lines(os.path.join(d, "ocfs2", "fsck")):
        parts = ln.split("\t")
        if len(parts) == 2:
            r["fsck"][parts[0]] = parts[1]
    return r


def all_nodes_rate(rows, nodes):
    """Of one phase's (operations, milliseconds) per node: the nodes' sum of
    operations, the slowest node's seconds and their ratio; only "nodes"
    unless every one of @nodes reported."""
    p = {"nodes": len(rows)}
    if rows and len(rows) == nodes:
        p["ops"] = sum(o for o, _ in rows)
        p["seconds"] = max(t for _, t in rows) / 1000
        p["ops_per_s"] = p["ops"] / p["seconds"] if p["seconds"] else None
    return p


def geomean(vals):
    """The geometric mean of @vals, None unless there are some and all are
    positive."""
    vals = list(vals)
    if not vals or not all(v and v > 0 for v in vals):
        return None
    return math.exp(statistics.fmean(math.log(v) for v in vals))


def summarize_ocfs2(oc):
    """Per stack and phase: every node's operations over the slowest node's
    time (ocfs2-bench.sh's figure); None unless every node reported."""
    per, nodes = oc["per_node"], oc["nodes"]
    out = {"nodes": nodes, "rate_is": "operations of all nodes per second: their sum "
           "over the slowest node's time, each timed from a common barrier in "
           "milliseconds",
           "stacks": {}, "ratio_rdlock_over_o2cb": {}}
    if not oc["asked"]:
        return None
    files = {n[st].get("files") for n in per.values() for st in OCFS2_STACKS} - {None}
    out["files_per_node_and_phase"] = files.pop() if len(files) == 1 else None
    for st in OCFS2_STACKS:
        f = {"run_ok": sum(1 for n in per.values() if n[st].get("ok")),
             "mount_ok": sum(1 for n in per.values() if n[st].get("mount_ok")),
             "bench_ok": sum(1 for n in per.values() if n[st].get("bench_ok")),
             "fsck": oc["fsck"].get(st), "phases": {}}
        ms = [n[st]["mount_s"] for n in per.values() if "mount_s" in n[st]]
        f["mount_s_max"] = max(ms) if ms else None
        ts = [n[st]["took_s"] for n in per.values() if "took_s" in n[st]]
        f["run_s_max"] = max(ts) if ts else None
        for ph in OCFS2_PHASES:
            rows = [n[st]["phases"][ph] for n in per.values() if ph in n[st]["phases"]]
            f["phases"][ph] = all_nodes_rate(rows, nodes)
        out["stacks"][st] = f
    for ph in OCFS2_PHASES:
        a = out["stacks"]["rdlock"]["phases"][ph].get("ops_per_s")
        b = out["stacks"]["o2cb"]["phases"][ph].get("ops_per_s")
        out["ratio_rdlock_over_o2cb"][ph] = ratio(a, b)
    out["flood"] = summarize_ocfs2_flood(per, nodes, out["stacks"]["rdlock"])
    return out


def summarize_ocfs2_flood(per, nodes, first):
    """The rdlock run under the flood against the same after it: per phase
    both rates and flood / after (and flood / the run before it, @first,
    rdlock's summary: the first run has fresh inodes, the others reuse
    them), the geometric mean over OCFS2's phases (the control apart), and
    the flood's own figures per node; None without a flood."""
    figs = {i: n["flood"].get("figure") for i, n in per.items()}
    if not any(n["flood"]["phases"] for n in per.values()) and not any(figs.values()):
        return None
    out = {"phases": {}, "nodes": {i: f for i, f in figs.items() if f}}
    for ph in OCFS2_PHASES:
        p = {}
        for run in OCFS2_FLOOD_RUNS:
            rows = [n["flood"]["phases"][f"{run}/{ph}"] for n in per.values()
                    if f"{run}/{ph}" in n["flood"]["phases"]]
            p[run] = all_nodes_rate(rows, nodes).get("ops_per_s")
        p["ratio"] = ratio(p.get("flood"), p.get("after"))
        p["ratio_first"] = ratio(p.get("flood"), first["phases"][ph].get("ops_per_s"))
        out["phases"][ph] = p
    ops = [out["phases"][ph] for ph in OCFS2_PHASES if ph != OCFS2_CONTROL]
    out["geomean_flood_over_after"] = geomean(p["ratio"] for p in ops)
    out["worst_flood_over_after"] = (min(p["ratio"] for p in ops)
                                     if out["geomean_flood_over_after"] else None)
    out["geomean_flood_over_first"] = geomean(p["ratio_first"] for p in ops)
    return out


def ocfs2_lines(oc):
    """Section 4 of the screen: a row per operation, both stacks, ratio."""
    if not oc:
        return ["4. OCFS2 metadata: n/a (no OCFS2 run in the logs)"]
    n = oc["nodes"]
    st = oc["stacks"]
    out = wrap(f"4. OCFS2 metadata, {n} nodes at once, "
               f"{oc.get('files_per_node_and_phase') or 'n/a'} files per node and phase, "
               f"one boot: o2cb vs rdlock", "")
    w = (-15, 11, 7, 13, 7, 12)

    def row(cells):
        return "  " + " ".join(f"{c:<{-x}}" if x < 0 else f"{c:>{x}}"
                               for c, x in zip(cells, w)).rstrip()
    out.append(row(("operation", "o2cb ops/s", "s", "rdlock ops/s", "s", "rdlock/o2cb")))
    for ph in OCFS2_PHASES:
        a, b = st["o2cb"]["phases"][ph], st["rdlock"]["phases"][ph]
        sec = [fmt(x.get("seconds"), "s") for x in (a, b)]
        out.append(row((ph, fmt(a.get("ops_per_s"), "rate"), sec[0],
                        fmt(b.get("ops_per_s"), "rate"), sec[1],
                        fmt(oc["ratio_rdlock_over_o2cb"][ph], "ratio"))))
    parts = []
    for s_, what in zip(OCFS2_STACKS, ("o2dlm over TCP", "ocfs2_stack_rdlock")):
        f = st[s_]
        parts.append(f"{s_} ({what}): mounted {f['mount_ok']}/{n}, all checks "
                     f"{f['run_ok']}/{n}, fsck {f['fsck'] or 'n/a'}")
    out += wrap("; ".join(parts) + ". ops/s: all nodes' operations over the slowest "
                "node's time s (milliseconds); stat: lstat() of every file by one process "
                "(rdlock-stat-bench). tmpfs-stat is the control: private-stat's passes "
                "over files on tmpfs, no OCFS2 and no cluster lock, right after it in each "
                "round; its ratio is what the two runs' guests differ by with no lock "
                "stack involved.", "  ")
    out += ocfs2_flood_lines(oc.get("flood"), n)
    return out


def ocfs2_flood_lines(fl, nodes):
    """Section 4's flood: OCFS2 on rdlock beside an unprivileged user's
    flood of /dev/rdlock, against the same run after it."""
    if not fl:
        return []
    nf = fl["nodes"].values()

    def total(key):
        v = [f.get(key) for f in nf]
        return sum(v) if v and all(isinstance(x, int) for x in v) else "n/a"
    locks = [f.get("locks_max") for f in nf if isinstance(f.get("locks_max"), int)]
    caps = {f.get("user_locks_max") for f in nf} - {None}
    kill = {f.get("kill_ms") for f in nf} - {None}
    out = wrap("OCFS2 on rdlock under one unprivileged user's flood of /dev/rdlock "
               "(names held up to its user_locks_max, requests waiting for good, a "
               f"waiter killed every {', '.join(str(k) for k in kill) or 'n/a'} ms on "
               f"every node; {len(fl['nodes'])} of {nodes} nodes reported it), "
               "against the same run "
               f"after it: geometric mean {fmt(fl['geomean_flood_over_after'], 'ratio')} "
               f"over OCFS2's phases, worst {fmt(fl['worst_flood_over_after'], 'ratio')} "
               "(goal: within 20%, 0.80x or more); against the first run "
               f"{fmt(fl['geomean_flood_over_first'], 'ratio')}.", "  ")
    out += wrap(", ".join(f"{ph} {fmt(fl['phases'][ph]['ratio'], 'ratio')}"
                          for ph in OCFS2_PHASES), "  ")
    out += wrap(f"The flood: {total('waiters')} requests left waiting, {total('killed')} "
                f"waiters killed; the user held at most {max(locks) if locks else 'n/a'} locks "
                f"on a node (user_locks_max {', '.join(str(c) for c in caps) or 'n/a'}); another "
                f"user's TRY locks: {total('probe_tries')} tried, {total('probe_fails')} "
                "failed.", "  ")
    return out


# --------------------------------------------------------------------------
# Workload 1: every node on one lock word (guest/lockbench.sh)

def lock_bench_json(lines):
    """rdlock-lock-bench's figures from the first of its JSON in lines, or
    None: its protocols by name, without their samples unless keep_samples."""
    j = next((o for o in json_objects(lines) if o.get("tool") == "rdlock-lock-bench"),
             None)
    if j is None:
        return None
    return {"node": j.get("node"), "home_node": j.get("home_node"),
            "mode": j.get("mode"), "iterations": j.get("iterations"),
            "raw_faa_p50_us": (j.get("raw_faa") or {}).get("p50_us"),
            "protocols": {p["proto"]: p for p in j.get("protocols", [])
                          if isinstance(p, dict) and p.get("proto")}}


def parse_lockbench(d):
    nodes = {}
    backend = None
    files = node_files(d)
    for i, lines in files.items():
        for fig, o in figures_of(lines, "lockbench.sh"):
            if fig == "backend" and o.get("backend"):
                backend = backend or o["backend"]
        r = lock_bench_json(lines)
        if r and r.get("protocols"):
            nodes[i] = r
    return {"backend": backend, "per_node": nodes, "nodes": cluster_size(files)}


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or sum(x * x for x in xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def nearest_rank(sorted_xs, q):
    """Nearest-rank percentile, as the tools compute them."""
    if not sorted_xs:
        return None
    rank = math.ceil(len(sorted_xs) * q)
    return sorted_xs[max(rank, 1) - 1]


def summarize_lockbench(lb, unc):
    """The cluster's figures per protocol, from every node's.

    With every node's samples (rdlock-lock-bench --json) the percentiles
    are the cluster's own; without them, the highest of the nodes' own
    (marked as such).
    """
    per = lb["per_node"]
    out = {"nodes": lb["nodes"], "nodes_reported": len(per), "backend": lb["backend"],
           "protocols": {}}
    if not per:
        return out
    first = next(iter(per.values()))
    out["iterations"] = first.get("iterations")
    out["mode"] = first.get("mode")
    out["home_node"] = first.get("home_node")
    for p in PROTOS:
        rows = [n["protocols"][p] for n in per.values() if p in n["protocols"]]
        if not rows:
            continue
        f = {"nodes": len(rows)}
        rates = [r.get("acq_per_s") for r in rows]
        # A node missing from the sum would make it look slower.
        if len(rows) < (lb["nodes"] or 0):
            rates.append(None)
        f["acq_per_s"] = sum(rates) if None not in rates else None
        f["throughput_is"] = "sum of the nodes' acquisitions per second"
        iters = [n.get("iterations") or 0 for n in per.values() if p in n["protocols"]]
        ops = [r.get("remote_ops_per_acquire") for r in rows]
        if None not in ops and sum(iters):
            f["remote_ops_per_acquire"] = sum(o * k for o, k in zip(ops, iters)) / sum(iters)
        aops = [r.get("acquire_ops_per_acquire") for r in rows]
        if None not in aops and sum(iters):
            f["acquire_ops_per_acquire"] = sum(o * k for o, k in zip(aops, iters)) / sum(iters)
        waits = [r.get("waits") for r in rows]
        notes = [r.get("notifies") for r in rows]
        if None not in waits and None not in notes and sum(waits):
            # The protocol's own messages: CQL's notifications.
            f["msgs_per_transfer"] = sum(notes) / sum(waits)
            f["msgs_per_transfer_is"] = "notifications per acquisition that waited"
        f["jain"] = jain(rates) if len(rates) > 1 and None not in rates else None
        f["jain_of"] = "the nodes' acquisitions per second"
        samples = [r.get("samples_us") for r in rows]
        if all(isinstance(s, list) and s for s in samples):
            merged = sorted(x for s in samples for x in s)
            f["latency_from"] = "every node's samples"
            f["samples"] = len(merged)
            for k, q in (("p50_us", .5), ("p99_us", .99), ("p999_us", .999)):
                f[k] = nearest_rank(merged, q)
            f["max_us"] = merged[-1]
            f["_cdf"] = merged
        else:
            f["latency_from"] = "highest of the nodes' own percentiles"
            for k in ("p50_us", "p99_us", "p999_us", "max_us"):
                vs = [r.get(k) for r in rows]
                f[k] = max(vs) if vs and None not in vs else None
        f["msgs_per_acquire"] = None
        u = unc.get(lb["backend"] or "verbs", {}).get("lock", {}).get(p, {})
        f["uncontended_over_2faa"] = u.get("p50_over_2faa")
        out["protocols"][p] = f
    return out


# --------------------------------------------------------------------------
# Workload 2: locks by name through /dev/rdlock (guest/rdlockbench.sh)

def parse_rdlockbench(d):
    files = node_files(d)
    r = {"per_node": {}, "counter": {}, "racy": {}, "nodes": cluster_size(files)}
    for i, lines in files.items():
        n = {}
        for o in json_objects(lines):
            if o.get("workload") == "hot":
                n.setdefault("hot", o)
            elif o.get("mode") in ("contended", "uncontended"):
                n.setdefault(o["mode"], o)
        for fig, o in figures_of(lines, "lib.sh"):
            if fig == "fs_dlm" and ints(o, "up"):
                if o["up"] == 1:
                    n["dlm_up"] = o.get("what")
                else:
                    n["dlm_why"] = o.get("why")
        for fig, o in figures_of(lines, "rdlockbench.sh"):
            if fig == "backend" and o.get("backend"):
                n["backend"] = o["backend"]
        for o in json_objects(lines):
            if o.get("tool") != "rdlockbench.sh" or not isinstance(o.get("value"), int):
                continue
            if o.get("figure") == "rdlockctl_counter" and isinstance(o.get("expected"), int):
                r["counter"][i] = (o["value"], o["expected"])
                if isinstance(o.get("rounds"), int):
                    r["rounds"] = o["rounds"]
            elif o.get("figure") == "racy_counter":
                r["racy"][i] = o["value"]
        r["per_node"][i] = n
    return r


def proto_entry(obj, p):
    for e in (obj or {}).get("protocols", []):
        if e.get("proto") == p:
            return e
    return None


def hist_cdf(h):
    """(upper edge us, cumulative fraction) of a cluster histogram."""
    if not isinstance(h, dict):
        return None
    ups, cnts = h.get("upper_us") or [], h.get("count") or []
    total = sum(cnts)
    if not total or len(ups) != len(cnts):
        return None
    pts, seen = [], 0
    for u, c in zip(ups, cnts):
        seen += c
        pts.append((u, seen / total))
    return pts


def summarize_rdlockbench(rb):
    per = rb["per_node"]
    out = {"nodes": rb["nodes"], "protocols": {}}
    # Every node prints the cluster's figures; the lowest-numbered node's.
    cont = next((n["contended"] for n in per.values() if "contended" in n), None)
    backends = {n.get("backend") for n in per.values()} - {None}
    out["backend"] = backends.pop() if len(backends) == 1 else None
    if cont:
        for k in ("nodes", "clients_per_node", "locks", "zipf", "read_ratio", "cs_us",
                  "duration_s"):
            out[k] = cont.get(k)
    # fs/dlm: up on every node, or why not (the guests' own words first).
    whys = [f"node {i}: {n['dlm_why']}" for i, n in per.items() if n.get("dlm_why")]
    ups = [n["dlm_up"] for n in per.values() if n.get("dlm_up")]
    out["dlm_up"] = ups[0] if ups else None
    for obj in [cont] + [n.get("uncontended") for n in per.values()]:
        e = proto_entry(obj, "dlm")
        if e and e.get("absent"):
            whys.append(e["absent"])
    out["dlm_absent"] = "; ".join(dict.fromkeys(whys)) or None
    hot = next((n["hot"] for n in per.values() if "hot" in n), None)
    out["hot"] = summarize_hot(hot)
    for p in RB_PROTOS:
        e = proto_entry(cont, p)
        f = {}
        if e and e.get("absent"):
            f["absent"] = e["absent"]
        if e and isinstance(e.get("cluster"), dict):
            c = e["cluster"]
            f = {"acq_per_s": c.get("acq_per_s"), "p50_us": c.get("p50_us"),
                 "p99_us": c.get("p99_us"), "p999_us": c.get("p999_us"),
                 "max_us": c.get("max_us"), "acquisitions": c.get("acquisitions"),
                 "remote_ops_per_acquire": c.get("remote_ops_per_acquire"),
                 "acquire_ops_per_acquire": c.get("acquire_ops_per_acquire"),
                 "release_ops_per_release": c.get("release_ops_per_release"),
                 "waits": c.get("waits"), "notifies": c.get("notifies"),
                 "msgs_per_transfer": c.get("msgs_per_transfer"),
                 "msgs_per_transfer_is": "transport messages of all nodes per "
                                         "acquisition that waited",
                 "msgs_per_acquire": c.get("msgs_per_acquire"),
                 "msgs_sent": c.get("msgs_sent"),
                 "jain": c.get("jain"), "jain_of": "every client's acquisitions",
                 "client_min": c.get("client_min"), "client_max": c.get("client_max"),
                 "failed_nodes": c.get("failed_nodes"), "failed": e.get("failed"),
                 "latency_from": "the cluster's histogram (8 buckets per octave)"}
            f["_cdf"] = hist_cdf(c.get("hist"))
        # Uncontended: every node measured its own turn; the median of them.
        ratios, nodes_u = [], {}
        for i, n in per.items():
            u = proto_entry(n.get("uncontended"), p)
            if u and not u.get("failed"):
                nodes_u[i] = {
                    "home_node": u.get("home_node"),
                    "acquire_release_p50_us": (u.get("acquire_release") or {}).get("p50_us"),
                    "raw_faa_p50_us": (u.get("raw_faa") or {}).get("p50_us"),
                    "ratio": u.get("acquire_release_p50_over_2faa"),
                    "remote_ops_per_acquire": u.get("remote_ops_per_acquire")}
                if num(u.get("acquire_release_p50_over_2faa")):
                    ratios.append(u["acquire_release_p50_over_2faa"])
        f["uncontended_per_node"] = nodes_u
        f["uncontended_over_2faa"] = statistics.median(ratios) if ratios else None
        f["uncontended_over_2faa_is"] = "median of the nodes' p50 ratios"
        # Acquire+release (fs/dlm: lock+unlock) of a name homed (mastered)
        # on the next node: the median of the nodes' p50s.
        ar = [u["acquire_release_p50_us"] for u in nodes_u.values()
              if num(u.get("acquire_release_p50_us"))]
        f["remote_acq_rel_p50_us"] = statistics.median(ar) if ar else None
        f["remote_home_ok"] = all(
            u.get("home_node") == (i + 1) % (rb["nodes"] or 1)
            for i, u in nodes_u.items()) if nodes_u else None
        if f:
            out["protocols"][p] = f
    return out


def summarize_hot(obj):
    """One hot name from every node: per protocol, the grants' split by node."""
    if not obj:
        return None
    nodes, nc = obj.get("nodes"), obj.get("clients_per_node")
    out = {"nodes": nodes, "clients_per_node": nc, "cs_us": obj.get("cs_us"),
           "duration_s": obj.get("duration_s"), "protocols": {}}
    for p in RB_PROTOS:
        e = proto_entry(obj, p)
        if not e:
            continue
        if e.get("absent"):
            out["protocols"][p] = {"absent": e["absent"]}
            continue
        c = e.get("cluster") or {}
        cl = c.get("clients") or []
        f = {"acq_per_s": c.get("acq_per_s"), "p50_us": c.get("p50_us"),
             "p99_us": c.get("p99_us"), "acquisitions": c.get("acquisitions"),
             "failed": e.get("failed")}
        if nodes and nc and len(cl) == nodes * nc and sum(cl):
            grants = [sum(cl[k * nc:(k + 1) * nc]) for k in range(nodes)]
            total = sum(grants)
            shares = [g / total for g in grants]
            f["grants_per_node"] = grants
            f["shares"] = shares
            # The farthest a node's share is from 1/nodes, relative to it.
            f["max_dev_from_equal"] = max(abs(x * nodes - 1) for x in shares)
            f["top_node"] = max(range(nodes), key=lambda k: grants[k])
            f["top_share"] = max(shares)
        out["protocols"][p] = f
    return out


# --------------------------------------------------------------------------
# Transport and uncontended kernel locks, node 0 -> 1 (guest/bench.sh)

def parse_bench(d):
    """node0.out of guest/bench.sh: rdlock-xport-bench's and
    rdlock-lock-bench's JSON, and bench.sh's of perftest (its device and
    result)."""
    lines = read_lines(os.path.join(d, "node0.out"))
    r = {"ops": {}, "lock": {}}
    for fig, o in figures_of(lines, "bench.sh"):
        if fig == "perftest" and ints(o, "passed"):
            r["device"] = o.get("device")
            r["perftest_ok"] = o["passed"] == 1
    x = next((o for o in json_objects(lines) if o.get("tool") == "rdlock-xport-bench"),
             None)
    if x:
        r.update({"to": x.get("node"), "from": x.get("from_node"),
                  "backend": x.get("backend"), "iterations": x.get("iterations")})
        r["ops"] = {k: v for k, v in (x.get("ops") or {}).items() if isinstance(v, dict)}
        pt = x.get("perftest") or {}
        for key, jkey in (("perftest_t_typical_us", "t_typical"),
                          ("faa_p50_over_perftest", "faa_p50_ratio"),
                          ("perftest_p99_us", "p99"),
                          ("faa_p99_over_perftest", "faa_p99_ratio")):
            if jkey in pt:
                r[key] = num(pt[jkey])
    lk = lock_bench_json(lines)
    if lk:
        # The samples stay out of report.json, as the text never had them.
        r["lock"] = {p: {k: v for k, v in f.items() if k not in ("proto", "samples_us")}
                     for p, f in lk["protocols"].items()}
        r["lock_raw_faa_p50_us"] = lk.get("raw_faa_p50_us")
    return r


def ratio_or_none(v):
    """v, or None for the 0 a tool writes for a ratio it could not form."""
    return None if v is None or (isinstance(v, (int, float)) and v <= 0
                                 and not isinstance(v, bool)) else v


def shown(k, v):
    """A table figure as the table prints it: a ratio of 0 is n/a too."""
    return ratio_or_none(v) if k == "uncontended_over_2faa" else v


def missing_figures(fs, form, lb, rb, rb_raw, bench, oc, oc_raw, fb):
    """The figures the report needs that the guests' JSON did not give:
    a name each, with the log it should have come from."""
    out = []

    def need(where, name, v):
        if v is None:
            out.append(f"{name} ({where})")
    # The cluster run: every node's own view of it.
    need("node*.out: lib.sh JSON", "the cluster's size", fs["nodes"])
    need("node*.out: demo.sh JSON", "the guests' kernel", fs.get("kernel"))
    for t in range(fs["nodes"] or 0):
        n = form["per_node"].get(t, {})
        need("node*.out: demo.sh JSON", f"node {t}: the cluster as it sees it",
             n.get("peers") or None)
        for k, what in (("cluster", "id"), ("backend", "backend")):
            need("node*.out: demo.sh JSON", f"node {t}: the cluster's {what}",
                 n.get("status", {}).get(k))
        need("node*.out: demo.sh JSON", f"node {t}: its RDMA links",
             n.get("rdma_links") or None)
        need("node*.out: demo.sh JSON", f"node {t}: xport_test's result and K",
             n.get("k"))
        need("node*.out: demo.sh JSON", f"exact count: counter on node {t}",
             fs["counters"].get(t))
    need("node*.out: demo.sh JSON", "exact count: one K on every node", fs.get("k"))
    if form["per_node"]:
        need("node*.out: demo.sh JSON", "whether OCFS2 ran", oc_raw["asked"])
    need("lockbench/node*.out: lib.sh JSON", "1. one lock word: the cluster's size",
         lb["nodes"])
    need("lockbench/node*.out: lockbench.sh JSON", "1. one lock word: the backend",
         lb["backend"])
    for k in ("home_node", "iterations", "mode"):
        need("lockbench/node*.out: rdlock-lock-bench JSON", f"1. one lock word: {k}",
             lb.get(k))
    need("rdlockbench/node*.out: lib.sh JSON", "2. locks by name: the cluster's size",
         rb["nodes"])
    need("rdlockbench/node*.out: rdlockbench.sh JSON", "2. locks by name: the backend",
         rb.get("backend"))
    for t in range(rb["nodes"] or 0):
        n = rb_raw["per_node"].get(t, {})
        need("rdlockbench/node*.out: lib.sh JSON", f"2. locks by name: fs/dlm on node {t}",
             n.get("dlm_up") or n.get("dlm_why"))
    if rb["nodes"]:
        need("rdlockbench/node*.out: rdlockbench.sh JSON", "rdlockctl lock: the counter",
             next(iter(rb_raw["counter"].values()), None))
        need("rdlockbench/node*.out: rdlockbench.sh JSON", "rdlockctl lock: the rounds",
             rb_raw.get("rounds"))
        need("rdlockbench/node*.out: lib.sh JSON", "rdlockctl lock: the cluster's size",
             rb_raw["nodes"])
        need("rdlockbench/node*.out: rdlockbench.sh JSON",
             "rdlockctl lock: the counter without the lock",
             next(iter(rb_raw["racy"].values()), None))
    for p in PROTOS:
        f = lb["protocols"].get(p) or {}
        for k in TABLE_FIGURES:
            need("lockbench/node*.out: rdlock-lock-bench JSON" if k != "uncontended_over_2faa"
                 else "bench-*/node0.out: rdlock-lock-bench JSON",
                 f"1. one lock word: {p} {k}", shown(k, f.get(k)))
    for k in ("nodes", "clients_per_node", "locks", "zipf", "read_ratio", "cs_us",
              "duration_s"):
        need("rdlockbench/node*.out: rdlock-bench JSON", f"2. locks by name: {k}", rb.get(k))
    hot = rb.get("hot") or {}
    for k in ("nodes", "clients_per_node", "cs_us", "duration_s"):
        need("rdlockbench/node*.out: rdlock-bench JSON (hot)", f"3. one hot name: {k}",
             hot.get(k))
    for p in RB_PROTOS:
        f = rb["protocols"].get(p) or {}
        if p == "dlm" and (rb.get("dlm_absent") or f.get("absent")):
            continue
        for k in TABLE_FIGURES + ("remote_acq_rel_p50_us",):
            if p == "dlm" and k in DLM_NO_COUNTERS:
                continue
            need("rdlockbench/node*.out: rdlock-bench JSON", f"2. locks by name: {p} {k}",
                 shown(k, f.get(k)))
        h = (hot.get("protocols") or {}).get(p) or {}
        for k in ("acq_per_s", "p50_us", "p99_us", "grants_per_node", "max_dev_from_equal"):
            need("rdlockbench/node*.out: rdlock-bench JSON (hot)", f"3. one hot name: {p} {k}",
                 h.get(k))
    for b, r in bench.items():
        where = f"bench-{b}/node0.out"
        need(f"{where}: bench.sh JSON", f"transport {b}: perftest's result",
             r.get("perftest_ok"))
        for o in ("FAA", "CAS", "READ", "WRITE"):
            need(f"{where}: rdlock-xport-bench JSON", f"transport {b}: {o} p50",
                 num((r["ops"].get(o) or {}).get("p50")))
        need(f"{where}: rdlock-xport-bench JSON", f"transport {b}: perftest t_typical",
             r.get("perftest_t_typical_us"))
        need(f"{where}: rdlock-xport-bench JSON", f"transport {b}: FAA p50 / perftest",
             ratio_or_none(r.get("faa_p50_over_perftest")))
        for p in PROTOS:
            for k in ("p50_us", "p50_over_2faa"):
                need(f"{where}: rdlock-lock-bench JSON", f"transport {b}: {p} {k}",
                     ratio_or_none(num((r["lock"].get(p) or {}).get(k))))
    # OCFS2: only when it ran (RDLOCK_DEMO_OCFS2_FILES=0 runs none).
    if oc:
        need("node*.out: ocfs2.sh JSON", "4. OCFS2 metadata: files per node and phase",
             oc.get("files_per_node_and_phase"))
    for st in OCFS2_STACKS if oc else ():
        f = oc["stacks"][st]
        for t in range(oc["nodes"] or 0):
            n = oc_raw["per_node"].get(t, {}).get(st, {})
            for k, what, tool in (("ok", "its run's result", "demo.sh"),
                                  ("mount_ok", "its mount", "ocfs2.sh"),
                                  ("bench_ok", "its benchmark's result", "ocfs2.sh"),
                                  ("took_s", "its run's time", "ocfs2.sh")):
                need(f"node*.out: {tool} JSON", f"4. OCFS2 on {st}, node {t}: {what}",
                     n.get(k))
        need("node*.out: ocfs2.sh JSON", f"4. OCFS2 on {st}: the slowest mount",
             f.get("mount_s_max"))
        need("ocfs2/fsck (demo.sh)", f"4. OCFS2 on {st}: fsck's verdict", f.get("fsck"))
        for ph in OCFS2_PHASES:
            need("node*.out: ocfs2.sh JSON of every node",
                 f"4. OCFS2 metadata: {st} {ph} ops/s",
                 oc["stacks"][st]["phases"][ph].get("ops_per_s"))
    # A node killed mid-workload: only when it ran (3 nodes or more).
    if fb is not None:
        demo_failbench.missing(fb, need)
    return out


# --------------------------------------------------------------------------
# Formatting

def fmt(v, kind="us"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if kind == "ratio":
        # The tools write 0 for a ratio they could not form.
        return f"{v:.2f}x" if v > 0 else "n/a"
    if kind in ("jain", "s"):
        return f"{v:.3f}"
    if kind == "ops":
        return f"{v:.2f}"
    if kind == "rate":
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}"
    # microseconds: 3 significant digits is all emulation is good for
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


NBSP = "\u00a0"


def wrap(text, indent="  "):
    """Lines of at most WIDTH columns, broken at spaces but not at NBSP."""
    out, cur = [], indent
    for w in text.split(" "):
        w = w.replace(NBSP, " ")
        if len(cur) + len(w) + 1 > WIDTH and cur.strip():
            out.append(cur.rstrip())
            cur = indent + "  "
        cur += w + " "
    out.append(cur.rstrip())
    return out


# The table columns fs/dlm has no counters for (printed "-").
DLM_NO_COUNTERS = ("acquire_ops_per_acquire", "remote_ops_per_acquire", "msgs_per_transfer")
# Every figure of a row of tables 1 and 2.
TABLE_FIGURES = ("acq_per_s", "p50_us", "p99_us", "p999_us") + DLM_NO_COUNTERS + \
    ("jain", "uncontended_over_2faa")
TABLE_HEAD = ("protocol", "acq/s", "p50 us", "p99 us", "p99.9 us", "ops/acq",
              "ops/a+r", "msgs/xfer", "Jain", "unc./2FAA")
TABLE_W = (-9, 9, 8, 8, 9, 7, 7, 9, 6, 9)


def table_row(cells):
    return " ".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}"
                    for c, w in zip(cells, TABLE_W)).rstrip()


def workload_table(title, protos, marker="", names=PROTOS, absent=None):
    lines = [*wrap(title, ""), "  " + table_row(TABLE_HEAD)]
    for p in names:
        f = protos.get(p)
        if p == "dlm" and (absent or (f or {}).get("absent")) and not (f or {}).get("acq_per_s"):
            lines += wrap(f"{p:<13} ABSENT: {absent or f['absent']}", "  ")
            continue
        if not f:
            lines.append("  " + table_row((p,) + ("n/a",) * 9))
            continue
        lat = [fmt(f.get(k)) + (marker if f.get(k) is not None else "")
               for k in ("p50_us", "p99_us", "p999_us")]
        # fs/dlm has no such counters: "-", where n/a is a missing figure.
        ctr = [("-" if p == "dlm" else fmt(f.get(k), "ops")) for k in DLM_NO_COUNTERS]
        lines.append("  " + table_row((
            p, fmt(f.get("acq_per_s"), "rate"), *lat, *ctr,
            fmt(f.get("jain"), "jain"), fmt(f.get("uncontended_over_2faa"), "ratio"))))
    return lines


def vs(protos, key):
    b, c = protos.get("bakery", {}), protos.get("caslock", {})
    return ratio(b.get(key), c.get(key))


# --------------------------------------------------------------------------
# The plot

def gp_quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_plot(logdir, curves, bars, ocfs2=None, failure=None):
    """report.png (or .svg) with gnuplot: (path, None) or (None, why).

    ocfs2: [(operation, rdlock / o2cb)], a third panel when there is one;
    failure: the node-failure run's summary (demo_failbench), a panel of
    its timeline when it has one.
    """
    ocfs2 = [(k, v) for k, v in (ocfs2 or []) if v is not None]
    gp = shutil.which("gnuplot")
    if not gp:
        return None, "gnuplot is not installed (package gnuplot-nox)"
    if not curves and not any(v is not None for _, vals in bars for v in vals):
        return None, "no figures to plot"
    pdir = os.path.join(logdir, "plot")
    os.makedirs(pdir, exist_ok=True)
    for old in glob.glob(os.path.join(pdir, "cdf*.dat")):
        os.unlink(old)
    plots = []
    for k, (title, pts, style) in enumerate(curves):
        path = os.path.join(pdir, f"cdf{k}.dat")
        with open(path, "w") as f:
            for x, y in pts:
                f.write(f"{x:.6g} {y:.6g}\n")
        plots.append(f"{gp_quote(path)} using 1:2 with {style} title {gp_quote(title)}")
    bar_path = os.path.join(pdir, "throughput.dat")
    with open(bar_path, "w") as f:
        f.write("workload " + " ".join(RB_PROTOS) + "\n")
        for name, vals in bars:
            f.write(gp_quote(name) + " " +
                    " ".join("?" if v is None else f"{v:.6g}" for v in vals) + "\n")
    fail_body = demo_failbench.plot_panel(pdir, failure, gp_quote) if failure else []
    panels = 2 + bool(ocfs2) + bool(fail_body)
    layout, size = (("2,2", "1400,1120") if panels == 4 else
                    (f"1,{panels}", f"{700 * panels},560"))
    body = [
        "set datafile missing '?'",
        f"set multiplot layout {layout}",
        "set title 'Latency CDF per protocol (log x)'",
        "set logscale x", "set xlabel 'latency, microseconds'",
        "set ylabel 'fraction of acquisitions'", "set yrange [0:1.02]",
        "set key bottom right", "set grid",
    ]
    if plots:
        body.append("plot " + ", \\\n     ".join(plots))
    else:
        body += ["set label 1 'no latency figures in the logs' at graph 0.3,0.5",
                 "plot [1:10] NaN notitle", "unset label 1"]
    body += [
        "unset logscale x", "set title 'Throughput per protocol'",
        "set xlabel ''", "set ylabel 'acquisitions per second (cluster)'",
        "set yrange [0:*]", "set style data histograms",
        "set style histogram clustered gap 1", "set style fill solid 0.7 border -1",
        "set boxwidth 0.9", "set key top left", "set xtics nomirror",
        f"set xrange [-0.6:{len(bars) - 0.4}]",
        f"plot {gp_quote(bar_path)} using 2:xtic(1) title columnheader(2), "
        + ", ".join(f"'' using {k} title columnheader({k})"
                    for k in range(3, len(RB_PROTOS) + 2)),
    ]
    if ocfs2:
        oc_path = os.path.join(pdir, "ocfs2.dat")
        with open(oc_path, "w") as f:
            for name, v in ocfs2:
                f.write(f"{gp_quote(name)} {v:.6g}\n")
        body += [
            "set title 'OCFS2 metadata: rdlock / o2cb operations per second'",
            "set ylabel 'ratio (1 = as fast as o2cb)'",
            f"set yrange [0:{max(1.1, 1.1 * max(v for _, v in ocfs2)):.3g}]",
            "set style fill solid 0.7 border -1", "set boxwidth 0.7",
            "set xtics rotate by -30", f"set xrange [-0.6:{len(ocfs2) - 0.4}]",
            "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2",
            f"plot {gp_quote(oc_path)} using 0:2:xtic(1) with boxes notitle",
        ]
    body += fail_body
    body.append("unset multiplot")
    script = os.path.join(pdir, "report.gp")
    errs = []
    # pngcairo where gnuplot has it, gd's png, else SVG: all in gnuplot-nox.
    for term, ext in ((f"pngcairo size {size} font ',10'", "png"),
                      (f"png size {size}", "png"), (f"svg size {size}", "svg")):
        out = os.path.join(logdir, "report." + ext)
        with open(script, "w") as f:
            f.write(f"set terminal {term}\nset output {gp_quote(out)}\n")
            f.write("\n".join(body) + "\n")
        try:
            p = subprocess.run([gp, script], capture_output=True, text=True,
                               timeout=60, check=False)
        except (OSError, subprocess.SubprocessError) as e:
            errs.append(str(e))
            continue
        if p.returncode == 0 and os.path.getsize(out) > 0:
            for stale in ("png", "svg"):
                sp = os.path.join(logdir, "report." + stale)
                if stale != ext and os.path.exists(sp):
                    os.unlink(sp)
            return out, None
        errs.append(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else
                    f"exit {p.returncode}")
    return None, "gnuplot failed: " + "; ".join(errs)


def cdf_points(f):
    """A curve for the CDF panel: every sample or bucket, else percentiles."""
    pts = f.get("_cdf")
    if pts and isinstance(pts[0], (int, float)):
        n = len(pts)
        return [(x, (i + 1) / n) for i, x in enumerate(pts)], "steps", ""
    if pts:
        return pts, "steps", ""
    pp = [(f.get(k), q) for k, q in (("p50_us", .5), ("p99_us", .99),
                                      ("p999_us", .999), ("max_us", 1.0))]
    pp = [(x, q) for x, q in pp if x is not None]
    if len(pp) >= 2:
        return pp, "points pt 7 ps 1.2", " p50/p99/p99.9/max"
    return None, None, None



def goal(value, ok, text):
    """One measured figure against its goal: 'text (met)' or '(NOT met)'."""
    if value is None:
        return f"{text} (not measured)"
    return f"{text} ({'met' if ok(value) else 'NOT met'})"


def cql_verdicts(tables, bench, hot):
    """The CQL lock's goals, from this run's figures."""
    out = []
    for name, protos in tables:
        q = protos.get("cql")
        if not q:
            out.append(f"CQL, {name}: n/a (no CQL figures in the logs)")
            continue
        a, ar = q.get("acquire_ops_per_acquire"), q.get("remote_ops_per_acquire")
        m = q.get("msgs_per_transfer")
        parts = [
            goal(a, lambda v: v <= CQL_OPS_ACQ_MAX,
                 f"ops at the home per acquire {fmt(a, 'ops')} (goal <= {CQL_OPS_ACQ_MAX})"),
            goal(ar, lambda v: v <= CQL_OPS_ACQ_REL_MAX,
                 f"acquire+release {fmt(ar, 'ops')} (goal <= {CQL_OPS_ACQ_REL_MAX})"),
            goal(m, lambda v: abs(v - CQL_MSGS_PER_XFER) <= CQL_MSGS_TOL,
                 f"messages per transfer {fmt(m, 'ops')} (goal {CQL_MSGS_PER_XFER:.0f})")]
        b, c = protos.get("bakery", {}), protos.get("caslock", {})
        xb, xc = ratio(q.get("acq_per_s"), b.get("acq_per_s")), \
            ratio(q.get("acq_per_s"), c.get("acq_per_s"))
        pc = ratio(q.get("p99_us"), c.get("p99_us"))
        j = q.get("jain")
        parts += [
            goal(xb, lambda v: v >= CQL_VS_BAKERY_MIN,
                 f"throughput {fmt(xb, 'ratio')} bakery's (goal >= {CQL_VS_BAKERY_MIN}x)"),
            goal(xc, lambda v: v >= CQL_VS_CAS_MIN,
                 f"{fmt(xc, 'ratio')} the CAS spinlock's (goal >= {CQL_VS_CAS_MIN}x)"),
            goal(pc, lambda v: v <= CQL_P99_VS_CAS_MAX,
                 f"p99 {fmt(pc, 'ratio')} the CAS spinlock's (goal <= {CQL_P99_VS_CAS_MAX}x)"),
            goal(j, lambda v: v >= CQL_JAIN_MIN,
                 f"Jain {fmt(j, 'jain')} (goal >= {CQL_JAIN_MIN})")]
        u = q.get("uncontended_over_2faa")
        parts.append(goal(u, lambda v: v <= CQL_UNC_MAX,
                          f"uncontended acquire+release {fmt(u, 'ratio')} two raw FAAs "
                          f"(goal <= {CQL_UNC_MAX}x)"))
        out.append(f"CQL, {name}: " + "; ".join(parts))
    bl = [(b, r["lock"].get("cql", {}).get("p50_over_2faa")) for b, r in bench.items()]
    bl = [(b, v) for b, v in bl if v is not None]
    if bl:
        out.append("CQL, uncontended node 0 -> 1 (kernel loop): " + ", ".join(
            goal(v, lambda x: x <= CQL_UNC_MAX, f"{b} {fmt(v, 'ratio')} two raw FAAs")
            for b, v in bl) + f" (goal <= {CQL_UNC_MAX}x)")
    dev = ((hot or {}).get("protocols", {}).get("cql") or {}).get("max_dev_from_equal")
    out.append("CQL, one hot name: " + goal(
        dev, lambda v: v <= HOT_GOAL_DEV,
        f"grants {'n/a' if dev is None else f'{dev * 100:.0f}%'} off equal at worst "
        f"(goal within {HOT_GOAL_DEV * 100:.0f}%)"))
    return out

# --------------------------------------------------------------------------

def main(argv):
    args = [a for a in argv[1:] if a != "--no-plot"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    logdir = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "demo")
    logdir = os.path.normpath(logdir)
    if not os.path.isdir(logdir):
        print(f"demo-report: no such directory: {logdir}", file=sys.stderr)
        return 2

    form = parse_formation(logdir)
    fs = summarize_formation(form)
    bench = {b: parse_bench(os.path.join(logdir, "bench-" + b))
             for b in ("verbs", "twosided")}
    lb_raw = parse_lockbench(os.path.join(logdir, "lockbench"))
    lb = summarize_lockbench(lb_raw, bench)
    rb_raw = parse_rdlockbench(os.path.join(logdir, "rdlockbench"))
    rb = summarize_rdlockbench(rb_raw)
    oc_raw = parse_ocfs2(logdir)
    oc = summarize_ocfs2(oc_raw)
    fb_dir = os.path.join(logdir, "failbench")
    fb = (demo_failbench.summarize(demo_failbench.parse(fb_dir, node_files, json_objects))
          if os.path.isdir(fb_dir) else None)

    out = []
    n = fs["nodes"]
    kern = f"Debian kernel {fs['kernel']}" if fs.get("kernel") else "kernel n/a"
    out.append(f"rdlock demo: {n or 'n/a'} QEMU guests, soft-RoCE (rxe), {kern}")

    # The cluster formed.
    views = fs["ready_views"]
    if views:
        allready = all(v == n for v in views.values()) and len(views) == n
        view = (f"every node sees {n}/{n} ready" if allready else
                "ready as seen per node: " +
                ", ".join(f"node {i} {v}/{n}" for i, v in views.items()))
    else:
        view = "node views n/a"
    if not n:
        out.append("Cluster: n/a (no node logs of the cluster run)")
    else:
        out += wrap(f"Cluster {fs.get('cluster_id') or 'n/a'} formed: {n} nodes, {view}; "
                    f"backend {fs.get('backend') or 'n/a'}"
                    + (f" on {fs['backend_agreed']}/{n}" if fs.get("backend") else "")
                    + (f"; verbs atomics {fs['verbs_atomics']}/{n}"
                       if fs.get("verbs_atomics") is not None else ""), "")
    devs = fs["devices"]
    if devs:
        kinds = {(lk["link"], lk["state"], lk["netdev"]) for ls in devs.values() for lk in ls}
        if len(kinds) == 1 and len(devs) == n:
            link, state, nd = kinds.pop()
            dline = f"devices: {link} on {nd} on every node, {state}"
        else:
            dline = "devices: " + "; ".join(
                f"node {i} " + ", ".join(f"{lk['link']} on {lk['netdev']} {lk['state']}"
                                         for lk in ls) for i, ls in devs.items())
    else:
        pdev = bench["verbs"].get("device") or bench["twosided"].get("device")
        dline = (f"devices: {pdev} (perftest on node 0; the logs list no others)"
                 if pdev else "devices: n/a")
    out += wrap(dline)

    # The exact-count proof.
    k, exp = fs.get("k"), (n * fs["k"] if fs.get("k") and n else None)
    ran, ok = fs["xport_test_ran"], fs["xport_test_ok"]
    ctrs = fs["counters"]
    if ctrs:
        exact = all(v == exp for v in ctrs.values()) and len(ctrs) == n
        vals = ", ".join(str(v) for v in ctrs.values())
        tail = f"read {vals}" + (" (exact)" if exact else f" (NOT all {exp})")
    else:
        tail = "values not in these logs"
    if k:
        out += wrap(f"Exact count: {n} nodes x {k} FETCH_AND_ADDs on a counter on every "
                    f"node; each must end at {n}{NBSP}x{NBSP}{k}{NBSP}={NBSP}{exp}: {tail}; "
                    f"xport_test (the exact count among its checks) passed on "
                    f"{ok}/{ran} nodes", "")
    else:
        out.append("Exact count: n/a (no exact-count step in the logs)")

    # Workload tables.
    tables = []
    lbp = lb["protocols"]
    lb_marker = "*" if any(f.get("latency_from", "").startswith("highest")
                           for f in lbp.values()) else ""
    t1 = (f"1. One lock word on node {lb.get('home_node', 'n/a')}, all {lb['nodes'] or 'n/a'} "
          f"nodes at once, {lb.get('iterations', 'n/a')} {lb.get('mode') or 'n/a'} "
          f"acquire+release each "
          f"(kernel, {lb.get('backend') or 'n/a'})")
    out.append("")
    out += workload_table(t1, lbp, lb_marker)
    tables.append(("one lock word", lbp))
    rbp = rb["protocols"]
    shared = rb.get("read_ratio")
    t2 = (f"2. Locks by name (/dev/rdlock, {rb.get('backend') or 'n/a'}): "
          f"{rb.get('nodes') or 'n/a'} nodes x {rb.get('clients_per_node', 'n/a')} clients, "
          f"{rb.get('locks', 'n/a')} names, zipf {rb.get('zipf', 'n/a')}, "
          f"{'n/a' if shared is None else f'{shared * 100:.0f}%'} shared, "
          f"CS{NBSP}{rb.get('cs_us', 'n/a')}{NBSP}us, {rb.get('duration_s', 'n/a')}{NBSP}s")
    out.append("")
    out += workload_table(t2, rbp, names=RB_PROTOS, absent=rb.get("dlm_absent"))
    tables.append(("locks by name", rbp))
    hot = rb.get("hot")
    out.append("")
    if hot:
        out += wrap(f"3. One hot name, {hot.get('nodes') or 'n/a'} nodes x "
                    f"{hot.get('clients_per_node', 'n/a')} client, exclusive, "
                    f"CS{NBSP}{hot.get('cs_us', 'n/a')}{NBSP}us, "
                    f"{hot.get('duration_s', 'n/a')}{NBSP}s: who gets the grants", "")
        out.append("  " + " ".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}" for c, w in zip(
            ("protocol", "acq/s", "p50 us", "p99 us", "grants per node (share)",
             "max off equal"), (-13, 9, 9, 9, 34, 13))).rstrip())
        for p in RB_PROTOS:
            f = hot["protocols"].get(p)
            if not f or f.get("absent"):
                if p == "dlm" or f:
                    out += wrap(f"{p:<13} ABSENT: "
                                f"{(f or {}).get('absent') or rb.get('dlm_absent') or 'n/a'}", "  ")
                continue
            g = f.get("grants_per_node")
            gs = (" ".join(f"{x}({y * 100:.0f}%)" for x, y in zip(g, f["shares"]))
                  if g else "n/a")
            dev = f.get("max_dev_from_equal")
            out.append("  " + " ".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}" for c, w in zip(
                (p, fmt(f.get("acq_per_s"), "rate"), fmt(f.get("p50_us")),
                 fmt(f.get("p99_us")), gs, "n/a" if dev is None else f"{dev * 100:.0f}%"),
                (-13, 9, 9, 9, 34, 13))).rstrip())
    else:
        out.append("3. One hot name: n/a (no figures in the logs)")
    notes = ("1: acq/s sums the nodes' own runs, each protocol started on every node "
             "at once by a barrier. "
             "Latency: 1 acquire+release, 2 the lock call. "
             "ops/acq: remote operations on "
             "the lock's home node per acquisition alone; ops/a+r: the same with its "
             "release; msgs/xfer: messages per ownership transfer (per acquisition "
             "that waited; 1: CQL's notifications, 2: transport messages of all "
             "nodes); Jain: 1 over the nodes' acq/s, 2 over "
             "the clients' acquisitions; uncont./2FAA: uncontended acquire+release p50 over "
             "two raw FAA p50s to the same home (1: node 0 -> 1 below; 2: median of nodes). "
             "dlm: the stock kernel's fs/dlm (dlm.ko, corosync, dlm_controld without "
             "fencing) on the same guests, a new lock and an unlock per acquisition; "
             "no ops/msgs counters (-). 3: max off equal is the largest |share x nodes - 1|.")
    if lb_marker:
        notes += (" *: highest of the nodes' own percentiles (these logs carry no "
                  "samples to merge).")
    out += wrap(notes, "  ")

    # Transport and uncontended locks between nodes 0 and 1, per backend.
    out.append("")
    out.append("Node 0 -> node 1, uncontended, p50 us: rdlock-xport-bench, perftest, "
               "rdlock-lock-bench")
    head = ("backend", "FAA", "CAS", "READ", "WRITE", "perftest", "FAA/pt",
            "bakery(/2FAA)", "caslock(/2FAA)", "cql(/2FAA)")
    tw = (-9, 6, 6, 6, 6, 8, 6, 14, 14, 14)

    def row(cells):
        return "  " + " ".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}"
                               for c, w in zip(cells, tw)).rstrip()
    out.append(row(head))
    for b, r in bench.items():
        ops = r["ops"]
        lk = r["lock"]
        out.append(row((
            b, *(fmt(ops.get(o, {}).get("p50")) for o in ("FAA", "CAS", "READ", "WRITE")),
            fmt(r.get("perftest_t_typical_us")), fmt(r.get("faa_p50_over_perftest"), "ratio"),
            *(f"{fmt(lk.get(p, {}).get('p50_us'))} "
              f"({fmt(lk.get(p, {}).get('p50_over_2faa'), 'ratio')})" for p in PROTOS))))

    # OCFS2 on its own stack and on rdlock's, same guests, same boot.
    out.append("")
    out += ocfs2_lines(oc)
    if fb is not None:
        out.append("")
        out += demo_failbench.report_lines(fb, wrap, NBSP)

    # Verdict: ratios of this run only.
    out.append("")
    out.append("Verdict, ratios measured in this run (protocols: bakery vs CAS spinlock; "
               "rdlock vs fs/dlm):")
    verdict = []
    for name, protos in tables:
        parts = []
        for key, label in (("acq_per_s", "throughput"), ("p99_us", "p99"),
                           ("p999_us", "p99.9")):
            v = vs(protos, key)
            if v is not None:
                parts.append(f"{label} {v:.2f}x")
        jb, jc = protos.get("bakery", {}).get("jain"), protos.get("caslock", {}).get("jain")
        if jb is not None and jc is not None:
            parts.append(f"Jain {jb:.3f} vs {jc:.3f}")
        if parts:
            verdict.append(f"{name}: " + ", ".join(parts))
    unc = []
    for (name, protos), where in zip(tables, ("kernel", "/dev/rdlock")):
        b = protos.get("bakery", {}).get("uncontended_over_2faa")
        c = protos.get("caslock", {}).get("uncontended_over_2faa")
        if b is not None and c is not None:
            unc.append(f"{b:.2f}x vs {c:.2f}x ({where})")
    if unc:
        verdict.append("uncontended acquire+release / 2 raw FAAs: "
                       + ", ".join(unc))
    # fs/dlm: rdlock's remote-home acquire+release against fs/dlm's
    # remote-master lock+unlock, and the hot name's grants.
    if rb.get("dlm_absent"):
        verdict.append(f"fs/dlm ABSENT, no comparison: {rb['dlm_absent']}")
    d = rbp.get("dlm", {}).get("remote_acq_rel_p50_us")
    if d is not None:
        parts = []
        for p in PROTOS:
            r = rbp.get(p, {}).get("remote_acq_rel_p50_us")
            x = ratio(d, r)
            if x is not None:
                parts.append(f"{PROTO_NAMES[p]} {fmt(r)} us = {x:.2f}x faster"
                             + (" (met)" if x >= DLM_GOAL_X else " (NOT met)"))
        if parts:
            verdict.append(f"vs fs/dlm, name homed/mastered on the next node, "
                           f"acquire+release p50 (median of nodes; goal {DLM_GOAL_X:.0f}x): "
                           f"fs/dlm lock+unlock {fmt(d)} us"
                           + ("" if rbp["dlm"].get("remote_home_ok") else
                              " (master NOT on the next node everywhere)")
                           + "; " + ", ".join(parts))
    if hot:
        parts = []
        for p in RB_PROTOS:
            f = hot["protocols"].get(p, {})
            dev = f.get("max_dev_from_equal")
            if dev is None:
                continue
            parts.append(f"{PROTO_NAMES[p]} {dev * 100:.0f}%"
                         + (" (met)" if dev <= HOT_GOAL_DEV else " (NOT met)")
                         + (f", node {f['top_node']} took {f['top_share'] * 100:.0f}%"
                            if dev > HOT_GOAL_DEV else ""))
        if parts:
            verdict.append(f"one hot name, grants off equal at worst "
                           f"(goal within {HOT_GOAL_DEV * 100:.0f}%): " + ", ".join(parts))
    tr = [f"{b} {r['faa_p50_over_perftest']:.2f}x" for b, r in bench.items()
          if r.get("faa_p50_over_perftest") is not None]
    fv = ratio(bench["twosided"]["ops"].get("FAA", {}).get("p50"),
               bench["verbs"]["ops"].get("FAA", {}).get("p50"))
    if tr or fv is not None:
        verdict.append("transport FAA p50 / perftest t_typical: "
                       + (", ".join(tr) if tr else "n/a")
                       + (f"; twosided / verbs {fv:.2f}x" if fv is not None else ""))
    ocr = {k: v for k, v in ((oc or {}).get("ratio_rdlock_over_o2cb") or {}).items()
           if v is not None}
    ctl = ocr.pop(OCFS2_CONTROL, None)
    if ocr:
        lo, hi = min(ocr, key=ocr.get), max(ocr, key=ocr.get)
        verdict.append(f"OCFS2 metadata, rdlock / o2cb operations per second: "
                       f"{ocr[lo]:.2f}x ({lo}) to {ocr[hi]:.2f}x ({hi}), "
                       f"geometric mean {geomean(ocr.values()):.2f}x "
                       f"over {len(ocr)} operations"
                       + (f"; the control ({OCFS2_CONTROL}, no lock stack) {ctl:.2f}x"
                          if ctl is not None else ""))
    fl = (oc or {}).get("flood")
    if fl and fl.get("geomean_flood_over_after") is not None:
        fctl = fl["phases"][OCFS2_CONTROL]["ratio"]
        verdict.append("OCFS2 on rdlock under an unprivileged user's flood / after it: "
                       f"geometric mean {fl['geomean_flood_over_after']:.2f}x, worst "
                       f"{fl['worst_flood_over_after']:.2f}x (goal 0.80x)"
                       + (f"; the control {fctl:.2f}x" if fctl is not None else ""))
    ctr = rb_raw["counter"]
    if ctr:
        got, want = next(iter(ctr.values()))
        racy = next(iter(rb_raw["racy"].values()), None)
        rounds = rb_raw.get("rounds")
        nxr = (f"{rb_raw['nodes']} nodes x {rounds} rounds" if rounds
               else "nodes x rounds")
        verdict.append(f"rdlockctl lock: counter {got}, {nxr} = {want}"
                       + (" (exact)" if got == want else " (NOT exact)")
                       + (f"; the same without the lock: {racy}" if racy is not None else ""))
    if fb is not None:
        verdict += demo_failbench.verdicts(fb)
    for v in verdict or ["n/a (no benchmark figures in the logs)"]:
        out += wrap("- " + v, "  ")
    # CQL against its goals: judged from the same figures.
    out.append("")
    out.append("CQL against its goals, figures of this run:")
    cqlv = cql_verdicts(tables, bench, hot)
    for v in cqlv:
        out += wrap("- " + v, "  ")

    # Guest steps, as demo.sh recorded them (or the clusters' summaries).
    steps = []
    for ln in read_lines(os.path.join(logdir, "steps")):
        parts = ln.split("\t")
        if len(parts) >= 4:
            steps.append({"name": parts[0], "log_dir": parts[1], "rc": int(parts[2]),
                          "seconds": int(parts[3])})
    if not steps:
        for sub in (".", "lockbench", "rdlockbench", "bench-verbs", "bench-twosided",
                    "failbench"):
            d = os.path.join(logdir, sub)
            s = cluster_summary(d)
            if os.path.isdir(d) and (s or node_files(d)):
                steps.append({"name": "cluster" if sub == "." else sub, "log_dir": sub,
                              "rc": None if s is None else int(s[1] > 0)})
    tap = [cluster_summary(os.path.join(logdir, st["log_dir"])) for st in steps]
    tp = sum(t[0] for t in tap if t)
    tf = sum(t[1] for t in tap if t)
    okc = sum(1 for st in steps if st["rc"] == 0)
    out.append("")
    out.append(f"Guest runs: {okc}/{len(steps)} passed; TAP results {tp} ok, {tf} not ok"
               + ("" if all(tap) else " (some summaries missing)"))

    # JSON of every figure; private keys (curves) stay out.
    def clean(o):
        if isinstance(o, dict):
            return {str(k): clean(v) for k, v in o.items() if not str(k).startswith("_")}
        if isinstance(o, list):
            return [clean(v) for v in o]
        return o
    report = {
        "log_dir": logdir, "cluster": fs, "cluster_per_node": form["per_node"],
        "workloads": {"one_lock_word": lb, "locks_by_name": rb, "ocfs2_metadata": oc},
        "one_lock_word_per_node": lb_raw["per_node"],
        "locks_by_name_per_node": rb_raw["per_node"],
        "ocfs2_metadata_per_node": oc_raw["per_node"],
        "transport": bench,
        "node_failure": fb,
        "node_failure_timeline": [
            {"s": ms / 1000, "acq_per_s": {str(n): v for n, v in pn.items()}}
            for ms, pn in (fb or {}).get("_timeline", [])],
        "rdlockctl_lock_counter": {"per_node": rb_raw["counter"], "racy": rb_raw["racy"]},
        "verdict": verdict, "cql_goals": cqlv, "steps": steps,
    }

    plot, why = None, "not asked for (--no-plot)"
    if "--no-plot" not in argv:
        curves = []
        for w, ((name, protos), lat) in enumerate(zip(tables, ("acquire+release",
                                                              "lock call"))):
            for c, p in enumerate(RB_PROTOS if name == "locks by name" else PROTOS):
                f = protos.get(p, {})
                # The highest of the nodes' percentiles is no distribution.
                if not f or f.get("latency_from", "").startswith("highest"):
                    continue
                pts, style, sfx = cdf_points(f)
                if pts:
                    # A colour per protocol, a dash type per workload.
                    style += f" lw 2 lc {c + 1} dt {w + 1}"
                    curves.append((f"{p}, {name} ({lat}){sfx}", pts, style))
        bars = [(name, [protos.get(p, {}).get("acq_per_s") for p in RB_PROTOS])
                for name, protos in tables]
        try:
            plot, why = write_plot(logdir, curves, bars, list(
                ((oc or {}).get("ratio_rdlock_over_o2cb") or {}).items()), fb)
        except OSError as e:
            plot, why = None, str(e)
    report["plot"] = plot
    jpath = os.path.join(logdir, "report.json")
    with open(jpath, "w") as f:
        json.dump(clean(report), f, indent=1, sort_keys=False)
        f.write("\n")
    out.append(f"Figures: {jpath}")
    out.append(f"Plot: {plot} (latency CDF, throughput per protocol"
               + (", OCFS2 rdlock / o2cb" if oc else "")
               + (", throughput through a node's death" if fb and fb.get("_timeline") else "")
               + ")" if plot else f"Plot: none ({why})")
    print("\n".join(out))
    missing = missing_figures(fs, form, lb, rb, rb_raw, bench, oc, oc_raw, fb)
    for m in missing:
        print(f"demo-report: missing figure: {m}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
