"""The uncertainty of measured TPS, as pure functions (no Django, no database): one definition for the run page,
the API, the export, compare, the series and the published row.

- A run step's TPS interval: **batch means**. A tool's interval samples are autocorrelated (a slow second is
  followed by another), so their plain standard error is too small. The step's n samples are cut into k
  consecutive batches (k = floor(sqrt(n)) / 2 + 1, 2 to 30: few enough that each batch spans the
  correlation of AR(1)-like samples, 95 % coverage in simulation; the earliest n - k x b samples, the start-up, left out), whose
  means are close to independent; the 95 % interval is their mean +- t(0.975, k - 1) x sd / sqrt(k).
- A repeat series (runs of one set-up): mean of the runs' TPS +- t(0.975, n - 1) x sd / sqrt(n).
- Two figures differ beyond noise when the 95 % interval of their difference excludes 0: Welch's t on the two
  runs' batch means (degrees of freedom by Welch-Satterthwaite)."""

import math
import statistics
from dataclasses import asdict, dataclass

BATCH_MEANS = "batch means"
SERIES_T = "Student's t over the runs"
WELCH_BATCH_MEANS = "Welch's t on batch means"
MIN_SAMPLES = 4  # two batches of two: fewer samples give no interval
MAX_BATCHES = 30

# Two-sided 95 % quantiles of Student's t (0.975) by degrees of freedom, from the tables.
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086,
         21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042,
         40: 2.021, 60: 2.000, 120: 1.980}


def t_975(df):
    """t(0.975, df); a fractional df (Welch) rounds down, the safe side; beyond the table 1.96."""
    df = max(1, math.floor(df))
    if df in T_975:
        return T_975[df]
    smaller = [k for k in T_975 if k <= df]
    return T_975[max(smaller)] if df <= 120 else 1.960


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int  # batches (a step) or runs (a series)
    se: float  # standard error of the mean
    method: str
    batch_size: int | None = None

    def as_dict(self):
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data):
        return cls(**data) if data else None


def _interval(values, method, batch_size=None):
    n = len(values)
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(n)
    half = t_975(n - 1) * se
    return Interval(mean, mean - half, mean + half, n, se, method, batch_size)


def batch_means(samples):
    """The 95 % interval of a step's mean TPS from its interval samples (oldest first), or None with fewer
    than MIN_SAMPLES."""
    n = len(samples)
    if n < MIN_SAMPLES:
        return None
    k = min(MAX_BATCHES, max(2, math.isqrt(n) // 2 + 1))
    b = n // k
    kept = samples[n - k * b:]
    means = [statistics.fmean(kept[i * b:(i + 1) * b]) for i in range(k)]
    return _interval(means, BATCH_MEANS, b)


def series_interval(values):
    """Mean and 95 % interval over the TPS of several runs of one set-up; None with fewer than 2 runs."""
    values = [v for v in values if v is not None]
    return _interval(values, SERIES_T) if len(values) >= 2 else None


@dataclass(frozen=True)
class Difference:
    pct: float  # (other - base) / base, in %
    low_pct: float
    high_pct: float
    beyond_noise: bool
    method: str = WELCH_BATCH_MEANS

    def as_dict(self):
        return {k: round(v, 1) if isinstance(v, float) else v for k, v in asdict(self).items()}


def difference(base, other):
    """Whether `other`'s mean differs from `base`'s beyond their noise (Intervals of batch means or of series):
    the difference with its 95 % interval, in % of base's mean; None when either has no interval."""
    if base is None or other is None or not base.mean:
        return None
    d = other.mean - base.mean
    var_b, var_o = base.se ** 2, other.se ** 2
    if var_b + var_o == 0:
        half = 0.0
    else:
        df = (var_b + var_o) ** 2 / (var_b ** 2 / (base.n - 1) + var_o ** 2 / (other.n - 1))
        half = t_975(df) * math.sqrt(var_b + var_o)
    scale = 100.0 / base.mean
    method = WELCH_BATCH_MEANS if base.method == other.method == BATCH_MEANS else "Welch's t"
    return Difference(d * scale, (d - half) * scale, (d + half) * scale, abs(d) > half, method)
