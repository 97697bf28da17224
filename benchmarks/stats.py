"""What the benchmarks share to compare paired rounds on a noisy machine: the geometric mean of the per-round
ratios with its 95 % confidence interval (Student's t on the logs)."""

import math
import statistics

# Two-sided 97.5 % quantiles of Student's t for n - 1 degrees of freedom (n rounds), from the tables.
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 24: 2.064, 29: 2.045}


def paired_ratio(base, other):
    """Geometric mean of other / base over paired rounds, and its 95 % confidence interval (t on the logs)."""
    logs = [math.log(o / b) for b, o in zip(base, other)]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    df = len(logs) - 1
    t = T_975.get(df) or T_975[max(k for k in T_975 if k <= df)]
    half = t * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)
