"""Open-loop figures (a run offered a fixed rate: pgbench -R, sysbench --rate): pure functions, one definition
of what an open-loop step reports and of when its schedule lag grows.

Closed loop, N threads each send their next transaction when the last returns: a slow server slows the
senders, and the latency of the transactions that were never sent is never counted (coordinated omission).
Open loop, the tool schedules transactions at the offered rate whatever the server does; a transaction that
cannot start on time waits, and that wait (the schedule lag) is part of its latency: pgbench counts each
latency from the scheduled start (its manual, --rate), sysbench 1.0 from the event's entry into its queue.
"""

import statistics

# The schedule lag grows when the median interval lag of a step's second half exceeds the first half's by more than
# the first half's own median and by more than this: a server that keeps up shows a lag that wanders around a
# constant (fractions of a ms here), with a spike when the client host is busy with something else (the median
# ignores one); one that cannot keep up has a queue that grows by the shortfall every second.
LAG_GROWTH_FLOOR_MS = 1.0
MIN_INTERVALS = 4  # fewer report intervals say nothing about a trend


def lag_grows(lags_ms, resolution_ms=0.0):
    """Whether the per-interval schedule lag grows over the step (None: too few intervals to say). `resolution_ms`:
    the smallest lag step the tool can show (sysbench's lag is its queue length / the rate, so one queued event is
    1000 / rate ms): a growth of one such step is one event caught waiting at the sampling instant, not a trend."""
    lags = [float(v) for v in lags_ms if v is not None]
    if len(lags) < MIN_INTERVALS:
        return None
    half = len(lags) // 2
    before, after = statistics.median(lags[:half]), statistics.median(lags[-half:])
    return after - before > max(LAG_GROWTH_FLOOR_MS, before, resolution_ms)


def figures(offered_tps, summary, latency):
    """An open-loop step's figures: what was offered, what the server sustained, the latency from the scheduled
    start (the tool's log or histogram, runs/drivers/latency.py), late and skipped transactions and the lag.
    A figure the tool does not report is None (sysbench has no latency limit, hence no late or skipped count)."""
    achieved = summary.get("tps")
    latency = latency or {}
    return {
        "offered_tps": offered_tps,
        "achieved_tps": achieved,
        "achieved_ratio": round(achieved / offered_tps, 4) if achieved is not None and offered_tps else None,
        "p50_ms": latency.get("p50_ms"),
        # sysbench prints its own p95 (the histogram's, unrounded): that one; pgbench none: its log's
        "p95_ms": summary["latency_p95_ms"] if summary.get("latency_p95_ms") is not None else latency.get("p95_ms"),
        "p99_ms": latency.get("p99_ms"),
        "latency_method": latency.get("method", ""),
        "latency_limit_ms": summary.get("latency_limit_ms"),
        "late": summary.get("late"),
        "late_pct": summary.get("late_pct"),
        "skipped": summary.get("skipped"),
        "skipped_pct": summary.get("skipped_pct"),
        "lag_avg_ms": summary.get("lag_avg_ms"),
        "lag_max_ms": summary.get("lag_max_ms"),
        "lag_grows": summary.get("lag_grows"),
    }
