"""What the benchmarks share to compare paired rounds on a noisy machine, by the dashboard's own verdict rule
(runs/stats.py, issue 46): each round is a block that ran every side once, so the sides are compared by the ratio
of geometric means with its 95 % interval, a paired t on the per-round log ratios, and a verdict against a
practical threshold."""

from runs import stats


def paired_ratio(base, other):
    """Geometric mean of other / base over paired rounds, and its 95 % interval (t on the per-round logs); the
    interval is NaN with one round."""
    found = paired_verdict(base, other)
    nan = float("nan")
    return found.ratio, found.ratio_ci_low or nan, found.ratio_ci_high or nan


def paired_verdict(base, other, threshold_pct=stats.DEFAULT_THRESHOLD_PCT):
    """runs.stats.Comparison of other against base, rounds as blocks: its verdict is one of runs.stats.VERDICTS."""
    [found] = stats.compare(dict(enumerate(base)), [dict(enumerate(other))], blocks=True, threshold_pct=threshold_pct)
    return found
