"""What the evidence says, as pure functions of the readings (runs/sampling.py) and the tool's report:
per interval, the server's rates and the client's CPU; per step, server-side TPS against the tool's,
buffer hit ratio, running threads, the client's CPU and the client-bound rule. One place for the rules."""

from .drivers import latency

# A step is client-bound when the client host's CPU was above CLIENT_BOUND_CPU_PCT for more than
# CLIENT_BOUND_FRACTION of its intervals: the tool could not drive the target harder.
CLIENT_BOUND_CPU_PCT = 90.0
CLIENT_BOUND_FRACTION = 0.5
# The server counted more commits than the tool by more than this (server TPS above (100 + it) % of the
# tool's): someone else was committing on the same database (PostgreSQL) or server (MySQL's counters are
# server-wide), so the tool's number is not what the target does alone. Alone, the two agree within 0.2 %
# (README, runs_overhead); a step's few set-up commits (pgbench's vacuum) stay far below this.
OTHER_LOAD_TOLERANCE_PCT = 10.0

# The engine's own counter names for each common quantity: cumulative counters become per-second rates,
# gauges are shown as read.
COUNTERS = {
    "mysql": {"commits": ("Com_commit",), "rollbacks": ("Com_rollback",), "queries": ("Questions",),
              "buffer_requests": ("Innodb_buffer_pool_read_requests",), "disk_reads": ("Innodb_buffer_pool_reads",),
              "lock_waits": ("Innodb_row_lock_waits",)},
    "postgresql": {"commits": ("xact_commit",), "rollbacks": ("xact_rollback",), "queries": (),
                   "buffer_requests": ("blks_hit", "blks_read"), "disk_reads": ("blks_read",), "lock_waits": ()},
}
# Commits the probe itself adds per reading: PostgreSQL counts its one-statement transaction in the
# database's xact_commit; MySQL's Com_commit counts COMMIT statements only (the probe sends none).
PROBE_COMMITS = {"mysql": 0, "postgresql": 1}
GAUGES = {"mysql": {"running": "Threads_running", "waiting": None},
          "postgresql": {"running": "active_backends", "waiting": "lock_waiting_backends"}}
SOURCES = {
    "mysql": "SHOW GLOBAL STATUS (server-wide): Com_commit, Com_rollback, Questions, Threads_running, "
             "Innodb_buffer_pool_read_requests, Innodb_buffer_pool_reads, Innodb_row_lock_waits",
    "postgresql": "pg_stat_database (this database): xact_commit, xact_rollback, blks_hit, blks_read; "
                  "pg_stat_activity: active backends, backends waiting on a lock",
}


def _value(counters, engine, name):
    names = COUNTERS[engine][name]
    if not names or counters is None or any(n not in counters for n in names):
        return None
    return sum(counters[n] for n in names)


def _rate(before, after, engine, name, dt, own=0):
    a, b = _value(before, engine, name), _value(after, engine, name)
    return None if a is None or b is None or dt <= 0 else round(max(0, b - a - own) / dt, 2)


def hit_ratio(before, after, engine):
    """Percent of buffer pool reads served from memory over the interval (None without reads)."""
    requests = _rate(before, after, engine, "buffer_requests", 1)
    disk = _rate(before, after, engine, "disk_reads", 1)
    if not requests or disk is None:
        return None
    return round(100.0 * (1 - disk / requests), 3)


def cpu_percent(before, after):
    busy, total = after[0] - before[0], after[1] - before[1]
    return round(100.0 * busy / total, 1) if total > 0 else None


def interval_rows(readings, engine):
    """One row per reading after the baseline: rates over the interval that ends at it."""
    rows = []
    for before, after in zip(readings, readings[1:]):
        dt = after["t"] - before["t"]
        b, a = before.get("server"), after.get("server")
        gauges = GAUGES[engine]
        rows.append({
            "t": after["t"], "at": after["at"], "dt": round(dt, 3),
            "server_tps": _rate(b, a, engine, "commits", dt, PROBE_COMMITS[engine]) if b and a else None,
            "rollbacks_per_s": _rate(b, a, engine, "rollbacks", dt) if b and a else None,
            "queries_per_s": _rate(b, a, engine, "queries", dt) if b and a else None,
            "running": a.get(gauges["running"]) if a else None,
            "lock_waiting": a.get(gauges["waiting"]) if a and gauges["waiting"] else None,
            "lock_waits_per_s": _rate(b, a, engine, "lock_waits", dt) if b and a else None,
            "buffer_hit_pct": hit_ratio(b, a, engine) if b and a else None,
            "client_cpu_pct": cpu_percent(before["cpu"], after["cpu"]),
            "counters": a,
        })
    return rows


def client_evidence(rows, interval_s):
    """The client's CPU over a step and the client-bound rule (intervals shorter than half the report
    interval, e.g. the one after the tool exited, do not count)."""
    cpu = [r["client_cpu_pct"] for r in rows if r["client_cpu_pct"] is not None and r["dt"] >= interval_s / 2]
    if not cpu:
        return {"cpu_avg_pct": None, "busy_fraction": None, "bound": None, "intervals": 0}
    busy = sum(1 for c in cpu if c > CLIENT_BOUND_CPU_PCT) / len(cpu)
    return {"cpu_avg_pct": round(sum(cpu) / len(cpu), 1), "busy_fraction": round(busy, 3),
            "bound": busy > CLIENT_BOUND_FRACTION, "intervals": len(cpu)}


def server_evidence(readings, engine, tool_tps, duration_s):
    """Server-side TPS of a step: commits counted by the server between the reading before the tool
    started and the one after it exited, over the tool's own measured duration; its agreement with
    the tool's TPS in percent (100 = equal)."""
    first, last = readings[0].get("server"), readings[-1].get("server")
    if not first or not last or not duration_s:
        return {}
    own = PROBE_COMMITS[engine] * (sum(1 for r in readings if r.get("server")) - 1)
    commits = _value(last, engine, "commits") - _value(first, engine, "commits") - own
    server_tps = round(commits / duration_s, 2)
    rows = [r for r in interval_rows(readings, engine)]
    running = [r["running"] for r in rows[:-1] if r["running"] is not None] or [r["running"] for r in rows if r["running"] is not None]
    return {
        "source": SOURCES[engine], "commits": commits, "probe_commits_removed": own, "duration_s": duration_s, "tps": server_tps,
        "tool_tps": tool_tps, "agreement_pct": round(100.0 * server_tps / tool_tps, 1) if tool_tps else None,
        "buffer_hit_pct": hit_ratio(first, last, engine),
        "running_avg": round(sum(running) / len(running), 1) if running else None,
        "rollbacks": (_value(last, engine, "rollbacks") or 0) - (_value(first, engine, "rollbacks") or 0),
    }


def run_insight(steps):
    """The run's insight from its steps': the client-bound flag (any step) and the latency of all steps."""
    histograms = [s["latency"]["histogram"] for s in steps if s.get("latency", {}).get("histogram")]
    merged = latency.merge(histograms) if histograms else []
    maxima = [s["latency"]["max_ms"] for s in steps if s.get("latency", {}).get("max_ms") is not None]
    overall = latency.from_histogram(merged, max_ms=max(maxima) if maxima else None, method="all steps' histograms") if merged else {}
    if len(steps) == 1 and steps[0].get("latency"):
        overall = steps[0]["latency"]
    flags = [s.get("client", {}).get("bound") for s in steps]
    return {"steps": steps, "latency": overall,
            "client_bound": True if any(flags) else (False if flags and all(f is False for f in flags) else None)}


def other_load(steps):
    """The steps whose server counted more than OTHER_LOAD_TOLERANCE_PCT % more commits than the tool made:
    [{step, threads, server_tps, tool_tps, agreement_pct}] (empty when none, or the server was not read)."""
    found = []
    for s in steps or []:
        server = s.get("server") or {}
        pct = server.get("agreement_pct")
        if pct is not None and pct > 100 + OTHER_LOAD_TOLERANCE_PCT:
            found.append({"step": s.get("step"), "threads": s.get("threads"), "server_tps": server.get("tps"),
                          "tool_tps": server.get("tool_tps"), "agreement_pct": pct})
    return found
