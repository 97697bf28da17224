"""runs/stats.py by hand (issues 33.3 and 46; the rule is stated in docs/measurements.md): a run's stability check
(ten batch means and their lag-1 autocorrelation) on interval samples recorded from the installed sysbench
(tests/recorded/), through the path a finished run takes (runs.actions.succeed) and the runs API, and its coverage
on autocorrelated samples of a known mean; two series compared by Welch's t on log TPS and, interleaved, by a paired
t on their blocks; Holm's adjustment; the equivalence band; the regression rule's prediction interval. The rule's
error rates by simulation: tests/test_runs_verdicts_simulation.py."""

import math
import random
import re
from pathlib import Path

import pytest

from runs import actions, stats
from runs.models import Run, RunState, Sample

RECORDED = Path(__file__).parent / "recorded" / "sysbench-1.0.20-mysql-oltp_read_write-30s.stdout.txt"


def recorded_tps():
    # sysbench 1.0.20, oltp_read_write, 2 threads, 30 s, --report-interval=1 on this machine's MariaDB: 29 lines.
    return [float(v) for v in re.findall(r"tps: ([0-9.]+)", RECORDED.read_text())]


def by_hand():
    """29 samples: k = clamp(floor(sqrt(29)), 10, 30) = 10 batches of b = 2, the first 29 - 20 = 9 left out as start-up.
    The batch means from the recording's lines 10-29, two by two, added by hand."""
    means = [(218.57 + 293.58) / 2, (323.02 + 395.00) / 2, (287.00 + 394.99) / 2, (359.98 + 391.03) / 2,
             (314.98 + 307.01) / 2, (276.97 + 385.00) / 2, (373.06 + 412.00) / 2, (463.00 + 346.00) / 2,
             (356.01 + 317.95) / 2, (280.56 + 303.52) / 2]
    mean = sum(means) / 10
    sd = math.sqrt(sum((m - mean) ** 2 for m in means) / 9)
    half = 2.262 * sd / math.sqrt(10)  # t(0.975, 9 degrees of freedom), from the tables (to 3 decimals)
    r1 = sum((means[i] - mean) * (means[i + 1] - mean) for i in range(9)) / sum((m - mean) ** 2 for m in means)
    return mean, mean - half, mean + half, r1


def test_the_stability_check_of_recorded_samples_is_ten_batch_means_by_hand():
    tps = recorded_tps()
    assert len(tps) == 29 and tps[:2] == [376.47, 407.28]
    mean, low, high, r1 = by_hand()
    interval = stats.stability(tps)
    assert (interval.n, interval.batch_size, interval.method) == (10, 2, "batch means")
    assert interval.mean == pytest.approx(mean, abs=1e-9)
    assert (interval.low, interval.high) == (pytest.approx(low, abs=0.01), pytest.approx(high, abs=0.01))
    # r1 = -0.08 by hand, well under 2 / sqrt(10) = 0.63: the run held steady.
    assert interval.lag1 == pytest.approx(r1, abs=1e-9) and interval.stability == "stable"
    assert stats.stability(tps[:9]) is None  # nine samples: too short to judge (fewer than 10 batches)


def test_a_run_whose_tps_climbs_throughout_is_drifting():
    climbing = [100.0 + 10 * i for i in range(40)]  # batch means rise steadily: lag-1 autocorrelation 0.7
    found = stats.stability(climbing)
    assert found.n == 10 and found.lag1 > 2 / math.sqrt(10) and found.stability == "drifting"


@pytest.mark.django_db
def test_a_finished_run_states_its_tps_with_that_interval_in_the_api(operator_api, profiles):
    from .test_runs_trust import make_target

    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    run = Run.objects.create(target=make_target(), profile=quick, params=quick.resolve({"duration_s": 30}),
                             state=RunState.CLEANING_UP)
    Sample.objects.bulk_create([Sample(run=run, step=1, threads=2, t=float(i), tps=v) for i, v in enumerate(recorded_tps(), 1)])
    assert actions.succeed(run, {"step": 1, "threads": 2, "tps": 317.30})  # the tool's final report: 317.30 per sec.
    body = operator_api.get(f"/api/v1/runs/{run.pk}/").json()
    mean, low, high, _r1 = by_hand()
    assert body["summary"]["tps"] == 317.30
    ci = body["summary"]["tps_ci"]
    assert (ci["low"], ci["high"]) == (pytest.approx(low, abs=0.01), pytest.approx(high, abs=0.01))
    assert ci["method"] == "batch means" and ci["n"] == 10 and ci["stability"] == "stable"


def ar1(rng, mean, phi, n, sigma=50.0):
    x = rng.gauss(0, sigma) / math.sqrt(1 - phi * phi)  # stationary from the first sample
    out = []
    for _ in range(n):
        x = phi * x + rng.gauss(0, sigma)
        out.append(mean + x)
    return out


def test_the_95_percent_interval_covers_a_known_mean_of_autocorrelated_samples():
    rng = random.Random(33)
    draws = [stats.stability(ar1(rng, 1000.0, 0.5, 100)) for _ in range(200)]
    covered = sum(d.low <= 1000.0 <= d.high for d in draws) / len(draws)
    assert 0.90 <= covered <= 0.99, covered
    # The naive interval (samples taken as independent) is too narrow for these samples: why batch means.
    rng = random.Random(33)
    naive = 0
    for _ in range(200):
        xs = ar1(rng, 1000.0, 0.5, 100)
        m = sum(xs) / len(xs)
        half = 1.984 * math.sqrt(sum((x - m) ** 2 for x in xs) / 99) / 10
        naive += m - half <= 1000.0 <= m + half
    assert naive / 200 < 0.90


def test_two_series_by_welch_on_log_tps_by_hand():
    # base 100, 110, 121: logs equally spaced by ln 1.1, so their sd is ln 1.1; the other is 1.2 x each run.
    # se of the difference of mean logs = ln 1.1 x sqrt(2 / 3) = 0.07782; equal variances: df = 4, t = 2.776.
    [c] = stats.compare([100.0, 110.0, 121.0], [[120.0, 132.0, 145.2]])
    half = 2.776 * math.log(1.1) * math.sqrt(2 / 3)
    assert c.method == "Welch's t on log TPS" and c.df == pytest.approx(4)
    assert c.ratio == pytest.approx(1.2)
    assert (c.ratio_ci_low, c.ratio_ci_high) == (pytest.approx(1.2 * math.exp(-half), abs=1e-3),
                                                pytest.approx(1.2 * math.exp(half), abs=1e-3))  # 0.967 to 1.489
    assert c.verdict == "inconclusive" and c.level == 0.95 and not c.adjusted
    assert c.more_runs >= 1  # about how many more runs per side would decide at this spread


def test_interleaved_series_are_paired_on_their_blocks_by_hand():
    base = {1: 100.0, 2: 200.0, 3: 150.0}
    other = {1: 110.0, 2: 221.0, 3: 164.0}
    d = [math.log(110 / 100), math.log(221 / 200), math.log(164 / 150)]
    mean, sd = sum(d) / 3, math.sqrt(sum((x - sum(d) / 3) ** 2 for x in d) / 2)
    half = 4.303 * sd / math.sqrt(3)  # t(0.975, 2), from the tables
    [c] = stats.compare(base, [other], blocks=True)
    assert c.method == "paired t on per-block log ratios" and c.df == 2
    assert c.ratio == pytest.approx(math.exp(mean))  # +9.9 %: block to block the level moved 2x, the ratio did not
    assert (c.ratio_ci_low, c.ratio_ci_high) == (pytest.approx(math.exp(mean - half), abs=1e-3),
                                                pytest.approx(math.exp(mean + half), abs=1e-3))
    assert c.verdict == "faster"
    # Unpaired, the same runs say nothing: the spread between blocks swamps a 10 % change.
    [welch] = stats.compare(list(base.values()), [list(other.values())])
    assert welch.verdict == "inconclusive"


def test_comparisons_shown_together_are_holm_adjusted():
    base = [1000.0, 1010.0, 990.0, 1005.0, 995.0]
    others = [[v * f for v in base] for f in (1.5, 1.0 + 1e-9, 1.3)]
    found = stats.compare(base, others)
    assert all(c.adjusted for c in found)
    # Ranked by p: +50 % first (level 1 - 0.05 / 3), +30 % second (1 - 0.05 / 2), no change last (0.95).
    assert [round(c.level, 4) for c in found] == [round(1 - 0.05 / 3, 4), 0.95, round(1 - 0.05 / 2, 4)]
    assert [c.verdict for c in found] == ["faster", "equivalent", "faster"]
    assert found[0].p_adjusted == pytest.approx(3 * found[0].p)


def test_an_equivalent_verdict_needs_the_whole_interval_inside_the_threshold():
    base = [1000.0, 1001.0, 999.0, 1000.5, 999.5]
    [same] = stats.compare(base, [[v * 1.005 for v in base]])  # +0.5 %, interval well inside +-2.5 %
    assert same.verdict == "equivalent"
    [small] = stats.compare(base, [[v * 1.01 for v in base]], threshold_pct=0.5)  # +1 %: beyond a 0.5 % threshold
    assert small.verdict == "faster" and small.threshold_pct == 0.5


def test_the_regression_rule_is_a_prediction_interval_on_log_tps_by_hand():
    earlier = [1000.0, 1100.0, 1000.0, 1100.0, 1050.0]
    logs = [math.log(v) for v in earlier]
    m = sum(logs) / 5
    s = math.sqrt(sum((x - m) ** 2 for x in logs) / 4)
    half = 2.776 * s * math.sqrt(1 + 1 / 5)  # t(0.975, 4), from the tables
    low = math.exp(m - half)
    judged = stats.predict(900.0, earlier)
    assert judged.low == pytest.approx(low, rel=1e-3) and judged.n == 5
    assert judged.regression is (900.0 < low)  # 900 is under the interval's 930: a regression
    assert judged.regression and judged.detectable_pct == pytest.approx(100 * (1 - math.exp(-half)), rel=1e-3)
    assert stats.predict(900.0, earlier[:4]).regression is None  # four earlier results: not judged
