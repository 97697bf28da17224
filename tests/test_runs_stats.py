"""The uncertainty of a measured TPS (issue 33.3, runs/stats.py; the method is stated in docs/measurements.md):
batch means on interval samples recorded from the installed sysbench (tests/recorded/), checked against a hand
calculation, through the path a finished run takes (runs.actions.succeed) and the runs API; its coverage on
autocorrelated samples of a known mean; the difference of two runs beyond or within noise (Welch's t) by hand."""

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
    """29 samples: k = floor(sqrt(29)) / 2 + 1 = 3 batches of b = 9, the first 29 - 27 = 2 (376.47, 407.28) left out.
    Batch sums added up by hand from the recording's lines 3-11, 12-20, 21-29."""
    means = [2183.14 / 9, 3049.98 / 9, 3237.10 / 9]
    mean = sum(means) / 3
    sd = math.sqrt(sum((m - mean) ** 2 for m in means) / 2)
    half = 4.303 * sd / math.sqrt(3)  # t(0.975, 2 degrees of freedom), from the tables
    return mean, mean - half, mean + half


def test_the_interval_of_recorded_samples_is_batch_means_by_hand():
    tps = recorded_tps()
    assert len(tps) == 29 and tps[:2] == [376.47, 407.28]
    mean, low, high = by_hand()
    interval = stats.batch_means(tps)
    assert (interval.n, interval.batch_size, interval.method) == (3, 9, "batch means")
    assert interval.mean == pytest.approx(mean, abs=1e-9)
    assert (interval.low, interval.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert stats.batch_means(tps[:3]) is None  # three samples: no interval


@pytest.mark.django_db
def test_a_finished_run_states_its_tps_with_that_interval_in_the_api(operator_api, profiles):
    from .test_runs_trust import make_target

    quick = profiles["sysbench-oltp-rw-mysql-quick"]
    run = Run.objects.create(target=make_target(), profile=quick, params=quick.resolve({"duration_s": 30}),
                             state=RunState.CLEANING_UP)
    Sample.objects.bulk_create([Sample(run=run, step=1, threads=2, t=float(i), tps=v) for i, v in enumerate(recorded_tps(), 1)])
    assert actions.succeed(run, {"step": 1, "threads": 2, "tps": 317.30})  # the tool's final report: 317.30 per sec.
    body = operator_api.get(f"/api/v1/runs/{run.pk}/").json()
    mean, low, high = by_hand()
    assert body["summary"]["tps"] == 317.30
    assert body["summary"]["tps_ci"]["low"] == round(low, 2) and body["summary"]["tps_ci"]["high"] == round(high, 2)
    assert body["summary"]["tps_ci"]["method"] == "batch means" and body["summary"]["tps_ci"]["n"] == 3


def ar1(rng, mean, phi, n, sigma=50.0):
    x = rng.gauss(0, sigma) / math.sqrt(1 - phi * phi)  # stationary from the first sample
    out = []
    for _ in range(n):
        x = phi * x + rng.gauss(0, sigma)
        out.append(mean + x)
    return out


def test_the_95_percent_interval_covers_a_known_mean_of_autocorrelated_samples():
    rng = random.Random(33)
    draws = [stats.batch_means(ar1(rng, 1000.0, 0.5, 100)) for _ in range(200)]
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


def test_a_difference_is_beyond_noise_only_when_its_interval_excludes_zero():
    base = stats.Interval(mean=1000.0, low=0, high=0, n=4, se=20.0, method="batch means")
    close = stats.Interval(mean=1044.0, low=0, high=0, n=4, se=20.0, method="batch means")
    far = stats.Interval(mean=1100.0, low=0, high=0, n=4, se=20.0, method="batch means")
    # Welch by hand: se of the difference sqrt(400 + 400) = 28.28; df = 800^2 / (400^2/3 + 400^2/3) = 6, t = 2.447.
    half = 2.447 * math.sqrt(800)  # 69.2: +44 TPS (+4.4 %) is within noise, +100 beyond
    near = stats.difference(base, close)
    assert near.pct == pytest.approx(4.4) and not near.beyond_noise
    assert (near.low_pct, near.high_pct) == (pytest.approx((44 - half) / 10), pytest.approx((44 + half) / 10))
    assert stats.difference(base, far).beyond_noise and stats.difference(base, far).method == "Welch's t on batch means"
    assert stats.difference(base, None) is None
