"""What a measurement of TPS means and when two of them differ, as pure functions (no Django, no database): the
one definition for the run page, the series page, compare, the regression judgement, the API, the export and
the published row. docs/measurements.md says the same in prose, with its references.

Most of a benchmark's variation lies between runs, not inside one (Georges, Buytaert and Eeckhout 2007;
Kalibera and Jones 2013): so the unit of evidence is the **run**, and a set-up is measured by a **series** of
runs of it.

- A series (n runs of one set-up): its mean TPS with the 95 % interval over the runs, mean +- t(0.975, n - 1) x
  sd / sqrt(n), and the coefficient of variation sd / mean. One run (n = 1): the spread between runs is unknown,
  no interval.
- A set-up against a baseline: the ratio of geometric means of TPS with its interval, on log TPS: a paired t on
  the per-block log ratios when the runs were interleaved in blocks (each block ran every set-up once), else
  Welch's t. The comparisons shown together are Holm-adjusted: the adjusted p decides, and each interval is at
  the level of its Holm step. One of five verdicts (VERDICTS), against a practical threshold (default 2.5 %).
- A regression: a new result against a **prediction interval** of at least MIN_EARLIER earlier results of the
  same set-up, on log TPS: mean +- t(0.975, n - 1) x s x sqrt(1 + 1/n). Where that interval is wider than the
  threshold, a drop smaller than its width cannot be detected, and that is said instead of "within noise".
- Inside one run: batch means are a **stability check** of that run (did its TPS hold steady?), not the
  uncertainty of a result: at least MIN_BATCHES batches and the lag-1 autocorrelation of the batch means, else
  "too short to judge".
"""

import math
import statistics
from dataclasses import asdict, dataclass, field

from scipy import stats as _scipy

ALPHA = 0.05
DEFAULT_THRESHOLD_PCT = 2.5

# The verdict of a set-up against the baseline (one vocabulary: the API, the pages, the tests).
FASTER, SLOWER, EQUIVALENT, INCONCLUSIVE, SINGLE_RUN = "faster", "slower", "equivalent", "inconclusive", "single-run"
VERDICTS = (FASTER, SLOWER, EQUIVALENT, INCONCLUSIVE, SINGLE_RUN)

# Methods, as the API and the pages name them.
BATCH_MEANS = "batch means"
SERIES_T = "Student's t over the runs"
PAIRED_LOG = "paired t on per-block log ratios"
WELCH_LOG = "Welch's t on log TPS"
PREDICTION = "prediction interval of the earlier results, on log TPS"

# Stability of one run (batch means).
MIN_BATCHES, MAX_BATCHES = 10, 30
STABLE, DRIFTING, TOO_SHORT = "stable", "drifting", "too short"
MIN_EARLIER = 5  # earlier results a regression is judged against, at least


def t_quantile(p, df):
    """Student's t quantile (scipy); df may be fractional (Welch)."""
    return float(_scipy.t.ppf(p, df))


def t_975(df):
    return t_quantile(0.975, df)


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float | None
    high: float | None
    n: int  # runs (a series) or batches (a run's stability check)
    se: float | None  # standard error of the mean
    method: str
    batch_size: int | None = None
    cv: float | None = None  # coefficient of variation of the runs (a series)
    lag1: float | None = None  # lag-1 autocorrelation of the batch means (a stability check)
    stability: str | None = None  # STABLE / DRIFTING (a stability check)

    def as_dict(self):
        return {k: round(v, 4 if k in ("cv", "lag1") else 2) if isinstance(v, float) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data):
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__}) if data else None


def _mean_interval(values, method, **extra):
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return Interval(mean, None, None, n, None, method, **extra)
    se = statistics.stdev(values) / math.sqrt(n)
    half = t_975(n - 1) * se
    return Interval(mean, mean - half, mean + half, n, se, method, **extra)


def series(values):
    """A series of runs of one set-up: n, mean TPS, its 95 % interval over the runs (None with one run) and the
    coefficient of variation (None with one run). None with no value."""
    values = [float(v) for v in values if v is not None]
    if not values:
        return None
    cv = statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 and statistics.fmean(values) else None
    return _mean_interval(values, SERIES_T, cv=cv)


def series_interval(values):
    """The series' interval, or None with fewer than 2 runs (nothing to say about the spread between runs)."""
    found = series(values)
    return found if found is not None and found.n >= 2 else None


def lag1(values):
    """Lag-1 autocorrelation (the usual estimator: the lag-1 autocovariance over the variance)."""
    n = len(values)
    mean = statistics.fmean(values)
    var = sum((v - mean) ** 2 for v in values)
    if n < 3 or var == 0:
        return 0.0
    return sum((values[i] - mean) * (values[i + 1] - mean) for i in range(n - 1)) / var


def stability(samples):
    """Whether one run's TPS held steady, from its interval samples (oldest first): at least MIN_BATCHES batch means
    (k = clamp(sqrt(n), 10, 30) batches of b = n // k samples; the earliest n - k x b left out as start-up), their
    mean with a 95 % interval, and their lag-1 autocorrelation: DRIFTING when it is beyond what independent batch
    means show (r1 > 2 / sqrt(k)): a trend or a slow swing that no interval of this run describes. None: too
    short to judge (fewer than MIN_BATCHES samples)."""
    n = len(samples)
    if n < MIN_BATCHES:
        return None
    k = min(MAX_BATCHES, max(MIN_BATCHES, math.isqrt(n)))
    b = n // k
    kept = samples[n - k * b:]
    means = [statistics.fmean(kept[i * b:(i + 1) * b]) for i in range(k)]
    r1 = lag1(means)
    verdict = DRIFTING if r1 > 2 / math.sqrt(k) else STABLE
    return _mean_interval(means, BATCH_MEANS, batch_size=b, lag1=r1, stability=verdict)



@dataclass(frozen=True)
class Comparison:
    """A set-up against the baseline: the ratio of geometric means of TPS (other / base) with its interval."""
    n_base: int
    n_other: int
    ratio: float | None
    ratio_ci_low: float | None = None
    ratio_ci_high: float | None = None
    p: float | None = None
    p_adjusted: float | None = None
    level: float | None = None  # the interval's confidence (Holm: 1 - alpha / (m - rank + 1))
    df: float | None = None
    method: str = ""
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    adjusted: bool = False  # Holm-adjusted over more than one comparison
    verdict: str = SINGLE_RUN
    more_runs: int | None = None  # inconclusive: about how many more runs per side would decide
    _se: float | None = field(default=None, repr=False)

    @property
    def pct(self):
        return None if self.ratio is None else 100.0 * (self.ratio - 1)

    def as_dict(self):
        out = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        for k in ("ratio", "ratio_ci_low", "ratio_ci_high", "p", "p_adjusted", "level"):
            if out[k] is not None:
                out[k] = round(out[k], 4)
        out["df"] = None if self.df is None else round(self.df, 1)
        out["pct"] = None if self.pct is None else round(self.pct, 1)
        out["ci_low_pct"] = None if self.ratio_ci_low is None else round(100 * (self.ratio_ci_low - 1), 1)
        out["ci_high_pct"] = None if self.ratio_ci_high is None else round(100 * (self.ratio_ci_high - 1), 1)
        return out


def _logs(values):
    return [math.log(v) for v in values if v is not None and v > 0]


def _geomean(logs):
    return math.exp(statistics.fmean(logs)) if logs else None


def _paired(base, other):
    """(mean log ratio, its standard error, df) over the blocks both ran, or None with fewer than 2 such blocks."""
    d = [math.log(other[b]) - math.log(base[b]) for b in base if b in other and base[b] > 0 and other[b] > 0]
    if len(d) < 2:
        return None
    return statistics.fmean(d), statistics.stdev(d) / math.sqrt(len(d)), len(d) - 1


def _welch(lb, lo):
    if len(lb) < 2 or len(lo) < 2:
        return None
    vb, vo = statistics.variance(lb) / len(lb), statistics.variance(lo) / len(lo)
    d = statistics.fmean(lo) - statistics.fmean(lb)
    if vb + vo == 0:
        return d, 0.0, float(len(lb) + len(lo) - 2)
    df = (vb + vo) ** 2 / (vb ** 2 / (len(lb) - 1) + vo ** 2 / (len(lo) - 1))
    return d, math.sqrt(vb + vo), df


def _raw(base, other, paired):
    """One comparison before adjustment. base / other: {block: TPS} (paired) or lists of TPS."""
    lb = _logs(base.values() if paired else base)
    lo = _logs(other.values() if paired else other)
    ratio = _geomean(lo) / _geomean(lb) if lb and lo else None
    found = _paired(base, other) if paired else None
    method = PAIRED_LOG if found else WELCH_LOG
    found = found or _welch(lb, lo)
    if found is None:
        return Comparison(len(lb), len(lo), ratio, method="", verdict=SINGLE_RUN)
    d, se, df = found
    p = 1.0 if se == 0 and d == 0 else 0.0 if se == 0 else float(2 * _scipy.t.sf(abs(d) / se, df))
    return Comparison(len(lb), len(lo), math.exp(d), p=p, df=df, method=method, _se=se)


def _runs_needed(d, se, n, threshold):
    """About how many runs per side would decide at the observed spread: enough for the interval to exclude no
    change (|d| beyond the threshold) or to fit inside the threshold (|d| inside it), by sqrt(n) scaling."""
    margin = abs(d) if abs(d) >= threshold else threshold - abs(d)
    if se <= 0 or margin <= 0:
        return None
    needed = math.ceil(n * (1.96 * se / margin) ** 2)
    return max(needed - n, 1)


def compare(base, others, *, threshold_pct=DEFAULT_THRESHOLD_PCT, blocks=False):
    """Every set-up in `others` against `base`, Holm-adjusted across them: a list of Comparisons. base and each
    other: lists of run TPS, or with blocks=True dicts {block: TPS} of interleaved runs (a paired analysis on
    the blocks both ran; Welch's t when fewer than 2 blocks pair)."""
    return compare_pairs([(base, other) for other in others], threshold_pct=threshold_pct, blocks=blocks)


def compare_pairs(pairs, *, threshold_pct=DEFAULT_THRESHOLD_PCT, blocks=False):
    """As compare, for comparisons shown together that have different baselines (a sweep's cells: each thread
    count against the baseline's at that count): [(base, other)], Holm-adjusted across all of them."""
    raws = [_raw(base, other, blocks) for base, other in pairs]
    tested = sorted((i for i, c in enumerate(raws) if c.p is not None), key=lambda i: raws[i].p)
    m = len(tested)
    out = list(raws)
    running = 0.0
    threshold = threshold_pct / 100
    for rank, i in enumerate(tested):
        c = raws[i]
        running = max(running, min(1.0, (m - rank) * c.p))  # Holm's step-down adjusted p, monotone
        level = 1 - ALPHA / (m - rank)
        d = math.log(c.ratio)
        half = t_quantile(1 - (1 - level) / 2, c.df) * c._se
        low, high = math.exp(d - half), math.exp(d + half)
        effect = c.ratio - 1
        if running < ALPHA and abs(effect) >= threshold:
            verdict, more = (FASTER if effect > 0 else SLOWER), None
        elif low >= 1 - threshold and high <= 1 + threshold:
            verdict, more = EQUIVALENT, None
        else:
            verdict = INCONCLUSIVE
            n = min(c.n_base, c.n_other)
            more = _runs_needed(d, c._se * math.sqrt(n), n, math.log(1 + threshold))
        out[i] = Comparison(c.n_base, c.n_other, c.ratio, low, high, c.p, running, level, c.df, c.method, threshold_pct,
                            m > 1, verdict, more, c._se)
    return [c if c.p is not None else Comparison(c.n_base, c.n_other, c.ratio, threshold_pct=threshold_pct) for c in out]


@dataclass(frozen=True)
class Prediction:
    """A new result against the earlier results of its set-up (log TPS)."""
    n: int
    tps: float | None
    low: float | None = None  # the prediction interval, TPS
    high: float | None = None
    center: float | None = None  # the earlier results' geometric mean
    change_pct: float | None = None  # the new result against `center`
    detectable_pct: float | None = None  # the smallest drop the interval can see (its lower half-width, in %)
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    regression: bool | None = None  # None: not judged (fewer than MIN_EARLIER earlier results)
    outside: bool | None = None  # beyond the interval either way
    method: str = PREDICTION

    def as_dict(self):
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(self).items()}


def predict(tps, earlier, *, threshold_pct=DEFAULT_THRESHOLD_PCT, min_earlier=MIN_EARLIER):
    """Judge `tps` (a series' mean, or one run's TPS) against the earlier results' TPS values: a regression when
    it lies below their 95 % prediction interval AND more than the threshold below their geometric mean."""
    logs = _logs(earlier)
    if tps is None or tps <= 0 or len(logs) < min_earlier:
        return Prediction(len(logs), tps, threshold_pct=threshold_pct)
    n = len(logs)
    m, s = statistics.fmean(logs), statistics.stdev(logs)
    half = t_975(n - 1) * s * math.sqrt(1 + 1 / n)
    low, high, center = math.exp(m - half), math.exp(m + half), math.exp(m)
    change = tps / center - 1
    regression = tps < low and -change * 100 > threshold_pct
    return Prediction(n, tps, low, high, center, 100 * change, 100 * (1 - math.exp(-half)), threshold_pct, regression,
                      not low <= tps <= high)
