"""Latency distributions from the tools' own output: pure functions, no files, no database.

Both tools end up in one shape, a histogram on sysbench's own bucket scale (1024 logarithmic buckets
from 0.001 ms to 100,000 ms; sysbench 1.0 sb_histogram.c) as [[bucket value in ms, count], ...] of the
non-empty buckets, plus p50 / p95 / p99 / max:

- sysbench `--histogram=on` prints that histogram in its final report. Percentiles are read from it
  the way sysbench computes its own `--percentile` line: the first bucket whose running count reaches
  floor(N * p / 100 + 0.5). So the p95 found here is the report's "95th percentile" (to its 2 decimals).
- pgbench `-l` writes one line per transaction (or per sampled transaction with --sampling-rate):
  `client_id transaction_no time script_no time_epoch time_us`, `time` the latency in microseconds
  ("skipped" / a failure word instead of a number for transactions that did not complete). Percentiles
  come from the exact values with the same rank rule; the histogram buckets them on sysbench's scale.

Several clients (runs/clients.py): their records are merged before any percentile is read, never their
percentiles averaged. sysbench's histograms add up bucket by bucket (its own percentile is read from the same
buckets); pgbench's logged latencies travel as exact counts per whole microsecond (what pgbench writes), so
the merged p95 is the rank rule over all the clients' logged transactions together.
"""

import math
import re

PERCENTILES = (50, 95, 99)
BUCKETS = 1024
MIN_MS, MAX_MS = 0.001, 100_000.0
_DEDUCT = math.log(MIN_MS)
_MULT = (BUCKETS - 1) / (math.log(MAX_MS) - _DEDUCT)
HISTOGRAM_RE = re.compile(r"^\s+([\d.]+) \|\**\s+(\d+)\s*$", re.MULTILINE)


def rank(count, pct):
    """How many values must lie at or below the p-th percentile (sysbench's rule)."""
    return max(1, math.floor(count * pct / 100 + 0.5))


def bucket_value(value_ms):
    """The sysbench bucket a latency falls in, as the bucket's printed value (ms, 3 decimals)."""
    value_ms = min(max(value_ms, MIN_MS), MAX_MS)
    index = int(math.floor((math.log(value_ms) - _DEDUCT) * _MULT + 0.5))
    return round(math.exp(index / _MULT + _DEDUCT), 3)


def percentile_from_histogram(buckets, pct):
    total = sum(c for _, c in buckets)
    if not total:
        return None
    needed, running = rank(total, pct), 0
    for value, count in buckets:
        running += count
        if running >= needed:
            return value
    return buckets[-1][0]


def parse_sysbench_histogram(stdout):
    """The buckets of sysbench's 'Latency histogram' block ([] when it printed none)."""
    if "Latency histogram" not in stdout:
        return []
    block = stdout.split("Latency histogram", 1)[1].split("SQL statistics:", 1)[0]
    return [[float(v), int(c)] for v, c in HISTOGRAM_RE.findall(block)]


def from_histogram(buckets, max_ms=None, method=""):
    """p50/p95/p99 (2 decimals, as sysbench prints its percentile) and max of a histogram."""
    if not buckets:
        return {}
    stats = {"count": sum(c for _, c in buckets), "method": method, "histogram": buckets}
    for pct in PERCENTILES:
        stats[f"p{pct}_ms"] = round(percentile_from_histogram(buckets, pct), 2)
    stats["max_ms"] = max_ms if max_ms is not None else buckets[-1][0]
    return stats


def parse_pgbench_log(lines):
    """Latencies in ms of the completed transactions of pgbench's per-transaction log lines."""
    values = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[2].isdigit():
            values.append(int(parts[2]) / 1000.0)
    return values


def histogram(values_ms):
    counts = {}
    for value in values_ms:
        key = bucket_value(value)
        counts[key] = counts.get(key, 0) + 1
    return [[k, counts[k]] for k in sorted(counts)]


def from_values(values_ms, method="", sampling_rate=1.0):
    """p50/p95/p99/max/mean/stddev from the exact values (ms, 3 decimals as pgbench prints), and the histogram."""
    if not values_ms:
        return {}
    ordered = sorted(values_ms)
    n = len(ordered)
    stats = {"count": n, "method": method, "sampling_rate": sampling_rate, "histogram": histogram(ordered),
             "max_ms": round(ordered[-1], 3), "mean_ms": round(sum(ordered) / n, 3)}
    mean = sum(ordered) / n
    stats["stddev_ms"] = round(math.sqrt(max(0.0, sum(v * v for v in ordered) / n - mean * mean)), 3)
    for pct in PERCENTILES:
        stats[f"p{pct}_ms"] = round(ordered[rank(n, pct) - 1], 3)
    return stats


def merge(histograms):
    """One histogram of several steps (same bucket scale): a run's distribution over all its steps."""
    counts = {}
    for buckets in histograms:
        for value, count in buckets:
            counts[value] = counts.get(value, 0) + count
    return [[k, counts[k]] for k in sorted(counts)]


def exact_counts(values_ms):
    """The logged latencies as [[whole microseconds, count], ...] (pgbench logs whole microseconds): lossless, and
    smaller than the values once many transactions share a microsecond."""
    counts = {}
    for value in values_ms:
        us = round(value * 1000)
        counts[us] = counts.get(us, 0) + 1
    return [[us, counts[us]] for us in sorted(counts)]


def merge_exact(count_lists):
    """The latencies (ms) of several clients' exact counts together, in order."""
    counts = {}
    for pairs in count_lists:
        for us, count in pairs:
            counts[us] = counts.get(us, 0) + count
    return [us / 1000.0 for us in sorted(counts) for _ in range(counts[us])]
