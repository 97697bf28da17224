"""What the benchmarks share to compare paired rounds on a noisy machine: the geometric mean of the per-round
ratios with its 95 % confidence interval (Student's t on the logs; the quantiles are runs/stats.py's)."""

import math
import statistics

from runs.stats import t_975


def paired_ratio(base, other):
    """Geometric mean of other / base over paired rounds, and its 95 % confidence interval (t on the logs)."""
    logs = [math.log(o / b) for b, o in zip(base, other)]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    half = t_975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)
