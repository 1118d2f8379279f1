# SPDX-License-Identifier: GPL-2.0
"""The demo's run 6 for demo-report.py: a node killed mid-workload.

guest/failbench.sh runs rdlock-fail-bench on every node with rdlock's
membership from corosync and dlm_controld (fencing through the host);
node 0 has the host cut the last node's power during the run. Every node
prints its acquisitions per interval as it goes ("interval" objects: the
victim's end with it), the survivors their run ("run": t0_ms, the kill's
time on node 0) and their rdlock/membership times ("membership", from
failbench.sh: CLOCK_MONOTONIC ms, the clock of t0_ms). Every figure comes
from that JSON: the events from the kill on each survivor's own clock, the
cluster's throughput before the kill, while rdlock grants nothing, and
after it grants again, and the timeline for the plot.
"""

TOOL = "rdlock-fail-bench"
SCRIPT = "failbench.sh"
# corosync's token (guest/lib.sh rdl_dlm_conf).
TOKEN_S = 10
# The goals of issue "survive node failure": rdlock's own recovery
# (recover_done to granting) and the first grant after the cluster engine
# fenced the node.
RECOVERY_GOAL_MS = 50.0
AFTER_FENCE_GOAL_S = 1.0
# Intervals skipped at the start of the run and after granting resumes.
SETTLE_MS = 1000
# DecLock (Distributed Lock Management with RDMA: decentralized locks,
# one of 8 nodes lost): 88% of its throughput after the loss.
DECLOCK_AFTER = 0.88

EVENTS = (("prep_ms", "the cluster engine stops (recover_prep)"),
          ("slot_ms", "fenced, the node failed (recover_slot)"),
          ("done_ms", "members again (recover_done)"),
          ("running_ms", "rdlock granting again (declared it down)"))


def parse(d, node_files, json_objects):
    """The JSON of every node of run directory d, by node."""
    raw = {"intervals": {}, "runs": {}, "members": {}, "backend": {}}
    for node, lines in node_files(d).items():
        for o in json_objects(lines):
            tool, fig = o.get("tool"), o.get("figure")
            if tool == TOOL and fig == "interval":
                ms, acq = o.get("ms"), o.get("acq")
                if isinstance(ms, int) and isinstance(acq, int):
                    raw["intervals"].setdefault(node, {})[ms] = acq
            elif tool == TOOL and fig == "run":
                raw["runs"][node] = o
            elif tool == SCRIPT and fig == "membership":
                raw["members"][node] = o
            elif tool == SCRIPT and fig == "backend":
                raw["backend"][node] = o.get("backend")
    return raw


def _mean(xs):
    return sum(xs) / len(xs) if xs else None


def summarize(raw):
    """The run's figures; None where the logs do not hold them."""
    runs, members, iv = raw["runs"], raw["members"], raw["intervals"]
    # The parameters are every node's; the kill is node 0's alone.
    rp = runs.get(0) or next(iter(runs.values()), {})
    r0 = runs.get(0) or {}
    s = {"nodes": rp.get("nodes"), "protocol": rp.get("protocol"),
         "clients_per_node": rp.get("clients_per_node"), "locks": rp.get("locks"),
         "read_ratio": rp.get("read_ratio"), "cs_us": rp.get("cs_us"),
         "duration_s": rp.get("duration_s"), "interval_ms": rp.get("interval_ms"),
         "backend": next((b for b in raw["backend"].values() if b), None),
         "errors": sum(r.get("errors", 0) for r in runs.values()) if runs else None,
         "token_s": TOKEN_S}
    kill = r0.get("event_ms") if r0.get("event_rc") == 0 else None
    s["kill_s"] = None if kill is None else kill / 1000
    victim = next((m.get("victim") for m in members.values()
                   if isinstance(m.get("victim"), int)), None)
    s["victim"] = victim
    # Each survivor's events, in seconds from the kill, on its own clock
    # (its t0 is the same barrier's as node 0's, to a few ms).
    per = {}
    for node, m in sorted(members.items()):
        t0 = (runs.get(node) or {}).get("t0_ms")
        if kill is None or t0 is None:
            continue
        ev = {}
        for k, _ in EVENTS:
            v = m.get(k)
            ev[k] = (v - t0 - kill) / 1000 if isinstance(v, int) and v > 0 else None
        ev["recovery_ms"] = (m["recovery_us"] / 1000
                             if isinstance(m.get("recovery_us"), int) else None)
        ev["declared_down"] = m.get("declared_down")
        per[node] = ev
    s["events_per_node"] = per
    head = per.get(0) or {}
    s["events"] = {k: head.get(k) for k, _ in EVENTS}
    s["recovery_ms"] = head.get("recovery_ms")
    # The timeline: acquisitions per second of each node and all of them.
    step = s["interval_ms"]
    times = sorted({ms for d in iv.values() for ms in d})
    tl = []
    if step:
        for ms in times:
            per_node = {n: d[ms] * 1000 / step for n, d in iv.items() if ms in d}
            tl.append((ms, per_node))
    s["_timeline"] = tl
    survivors = sorted(runs)
    s["survivors"] = survivors
    running = head.get("running_ms")
    if kill is None or not tl:
        s.update(before=None, before_survivors=None, during=None, after=None,
                 first_grant_s=None)
        return s

    def total(pn, nodes=None):
        return sum(v for n, v in pn.items() if nodes is None or n in nodes)
    before = [(ms, pn) for ms, pn in tl if SETTLE_MS < ms <= kill]
    s["before"] = _mean([total(pn) for _, pn in before])
    s["before_survivors"] = _mean([total(pn, survivors) for _, pn in before])
    if running is None:
        s.update(during=None, after=None, first_grant_s=None)
        return s
    back = kill + running * 1000
    during = [total(pn, survivors) for ms, pn in tl if ms - step >= kill and ms <= back]
    s["during"] = _mean(during)
    s["during_min"] = min(during) if during else None
    after = [total(pn, survivors) for ms, pn in tl if ms - step >= back + SETTLE_MS]
    s["after"] = _mean(after)
    # The first interval after the cluster engine stopped granting in
    # which a survivor acquired again: its end, from the kill.
    stop = kill + (head.get("prep_ms") or running) * 1000
    first = next((ms for ms, pn in tl if ms - step >= stop and total(pn, survivors) > 0),
                 None)
    s["first_grant_s"] = None if first is None else (first - kill) / 1000
    s["after_over_before"] = (s["after"] / s["before"]
                              if s["after"] is not None and s["before"] else None)
    s["after_over_survivors"] = (s["after"] / s["before_survivors"]
                                 if s["after"] is not None and s["before_survivors"]
                                 else None)
    return s


def _f(v, digits=1):
    return "n/a" if v is None else f"{v:.{digits}f}"


def report_lines(s, wrap, nbsp):
    """The report's section: the run, the events from the kill, throughput."""
    if s.get("kill_s") is None and not s["_timeline"]:
        return ["5. A node killed mid-workload: n/a (no figures in the logs)"]
    out = wrap(f"5. Node {s['victim'] if s['victim'] is not None else 'n/a'} killed "
               f"mid-workload, {_f(s['kill_s'])}{nbsp}s into the run: locks by name "
               f"({s['protocol'] or 'n/a'}, {s['backend'] or 'n/a'}), "
               f"{s['nodes'] or 'n/a'} nodes x {s['clients_per_node'] or 'n/a'} clients, "
               f"{s['locks'] or 'n/a'} names, "
               + ("n/a" if s["read_ratio"] is None else f"{s['read_ratio'] * 100:.0f}%")
               + f" shared, CS{nbsp}{s['cs_us']}{nbsp}us, {s['duration_s']}{nbsp}s; "
               f"membership from corosync (token {TOKEN_S}{nbsp}s) and dlm_controld, "
               f"fencing through the host", "")
    per = s["events_per_node"]
    nodes = sorted(per)
    out.append("  " + f"{'seconds from the kill, each survivor on its own clock':<58}"
               + "".join(f"{'node ' + str(n):>9}" for n in nodes))
    for k, label in EVENTS:
        out.append("  " + f"{label:<58}" + "".join(f"{_f(per[n].get(k), 2):>9}"
                                                   for n in nodes))
    out.append("  " + f"{'rdlock own recovery, recover_done to granting, ms':<58}"
               + "".join(f"{_f(per[n].get('recovery_ms'), 1):>9}" for n in nodes))
    out += wrap(f"acquisitions/s: before the kill {_f(s.get('before'), 0)} "
                f"(all nodes; the survivors {_f(s.get('before_survivors'), 0)}), "
                f"from the kill to granting again {_f(s.get('during'), 0)} "
                f"(lowest interval {_f(s.get('during_min'), 0)}), after "
                f"{_f(s.get('after'), 0)} (the survivors); first acquisition after the "
                f"stop {_f(s.get('first_grant_s'), 2)}{nbsp}s after the kill; "
                f"lock calls failed: {'n/a' if s.get('errors') is None else s['errors']}",
                "  ")
    return out


def verdicts(s):
    """Verdict lines: ratios and goals of this run."""
    if s.get("kill_s") is None:
        return []
    ev = s["events"]
    out = []
    slot, first = ev.get("slot_ms"), s.get("first_grant_s")
    if slot is not None and first is not None:
        goal = slot + AFTER_FENCE_GOAL_S
        out.append(f"node killed mid-workload: first acquisition after the stop "
                   f"by {first:.2f} s after the kill (the end of its "
                   f"{s['interval_ms']} ms interval); the cluster engine's part (detection "
                   f"with a {TOKEN_S} s token, fencing: kill to recover_slot) {slot:.2f} s; "
                   f"goal at most that + {AFTER_FENCE_GOAL_S:.0f} s = {goal:.2f} s"
                   + (" (met)" if first <= goal else " (NOT met)"))
    rec = s.get("recovery_ms")
    if rec is not None:
        out.append(f"rdlock's own recovery, recover_done to granting (node 0): "
                   f"{rec:.1f} ms (goal at most {RECOVERY_GOAL_MS:.0f} ms)"
                   + (" (met)" if rec <= RECOVERY_GOAL_MS else " (NOT met)"))
    a, b = s.get("after_over_before"), s.get("after_over_survivors")
    if a is not None:
        out.append(f"throughput after the death / before it: {a:.2f}x (the cluster, "
                   f"{s['nodes'] - 1} of {s['nodes']} nodes after)"
                   + (f", {b:.2f}x of the survivors' own before" if b is not None else "")
                   + f" (DecLock: {DECLOCK_AFTER:.2f}x after losing 1 of 8 nodes)")
    return out


def missing(s, need):
    """Names the figures the report needs that the JSON did not give."""
    where = "failbench/node*.out"
    need(f"{where}: rdlock-fail-bench JSON (node 0)", "5. node killed: node 0's run",
         s.get("nodes"))
    need(f"{where}: rdlock-fail-bench JSON (node 0)", "5. node killed: the kill's time",
         s.get("kill_s"))
    need(f"{where}: failbench.sh JSON", "5. node killed: the victim", s.get("victim"))
    need(f"{where}: failbench.sh JSON", "5. node killed: the backend", s.get("backend"))
    for n in s.get("survivors") or ():
        ev = s["events_per_node"].get(n) or {}
        for k, label in EVENTS:
            need(f"{where}: failbench.sh JSON", f"5. node killed: node {n} {label}",
                 ev.get(k))
    for k in ("before", "after", "first_grant_s"):
        need(f"{where}: rdlock-fail-bench JSON", f"5. node killed: {k}", s.get(k))


def plot_panel(pdir, s, gp_quote):
    """gnuplot commands of the timeline panel, its data in pdir; [] if none."""
    tl = s.get("_timeline")
    if not tl or s.get("kill_s") is None:
        return []
    nodes = sorted({n for _, pn in tl for n in pn})
    path = f"{pdir}/timeline.dat"
    with open(path, "w") as f:
        for ms, pn in tl:
            f.write(f"{ms / 1000:.3f} {sum(pn.values()):.6g} "
                    + " ".join(f"{pn[n]:.6g}" if n in pn else "?" for n in nodes) + "\n")
    body = [
        "unset logscale x", "set xtics norotate", "set autoscale x",
        "set style data lines", "unset style",
        f"set title 'Locks by name through node "
        f"{'n/a' if s['victim'] is None else s['victim']}''s death ({s['protocol']})'",
        "set xlabel 'seconds into the run'", "set ylabel 'acquisitions per second'",
        "set yrange [0:*]", "set key top right", "set grid",
    ]
    marks = [("kill", s["kill_s"])]
    for (k, _), label in zip(EVENTS, ("stop", "fenced", "done", "granting")):
        v = s["events"].get(k)
        if v is not None:
            marks.append((label, s["kill_s"] + v))
    for i, (label, x) in enumerate(marks, start=10):
        body.append(f"set arrow {i} from first {x:.3f}, graph 0 to first {x:.3f}, "
                    f"graph 1 nohead dt 2 lc rgb 'gray40'")
        body.append(f"set label {i} '{label}' at first {x:.3f}, graph "
                    f"{0.95 - 0.06 * (i - 10):.2f} left offset 0.3,0 font ',8'")
    plots = [f"{gp_quote(path)} using 1:2 with lines lw 2 lc 8 title 'all nodes'"]
    for c, n in enumerate(nodes):
        plots.append(f"'' using 1:{c + 3} with lines lw 1 lc {c + 1} title 'node {n}'")
    body.append("plot " + ", \\\n     ".join(plots))
    body += [f"unset arrow {i}" for i in range(10, 10 + len(marks))]
    body += [f"unset label {i}" for i in range(10, 10 + len(marks))]
    return body
