"""Open-loop runs (issue 35.1): the argv builders and parsers on output recorded from the installed tools, and the
parameters' rules through the API. Expected figures are read by hand from the recorded reports (tests/recorded/):

pgbench-15-select-only-rate-limit.*: pgbench -h 127.0.0.1 -U postgres -M prepared -b select-only -P 1 -c 2 -j 2 -T 6
    -R 500 -L 1 -l --log-prefix=x DB (stdout, stderr, and the two per-thread logs concatenated)
pgbench-15-select-only-rate-over.*: the same, -c 1 -j 1 -R 100000, without -L and -l (far above what one client does)
sysbench-1.0.20-mysql-oltp_point_select-rate.stdout.txt: sysbench --db-driver=mysql ... --tables=1 --table-size=1000
    --threads=2 --time=5 --report-interval=1 --rate=500 --percentile=95 --histogram=on --forced-shutdown=1
    oltp_point_select run (MariaDB 10.11)
sysbench-1.0.20-mysql-rate-queue-full.stdout.txt: the same with --threads=1 --rate=200000 (exit status 1)
"""

import math
from pathlib import Path

import pytest

from runs.drivers import Connection, Step, judge_step, openloop, pgbench, sysbench
from runs.runner import Outcome

RECORDED = Path(__file__).resolve().parent / "recorded"
PG = Connection("postgresql", "127.0.0.1", 5432, "sbtest", "bench")
MY = Connection("mysql", "127.0.0.1", 3306, "sbtest", "bench")


def recorded(name):
    return (RECORDED / name).read_text()


def test_pgbench_open_loop_report_is_read_as_printed():
    summary = pgbench.parse_summary(recorded("pgbench-15-select-only-rate-limit.stdout.txt"),
                                    recorded("pgbench-15-select-only-rate-limit.stderr.txt"))
    assert summary["transactions"] == 2881 and summary["tps"] == 481.535673
    assert (summary["skipped"], summary["skipped_pct"]) == (125, 4.158)
    assert (summary["latency_limit_ms"], summary["late"], summary["late_pct"]) == (1.0, 291, 10.101)
    assert (summary["lag_avg_ms"], summary["lag_max_ms"]) == (0.243, 6.314)
    assert summary["lag_per_interval_ms"] == [0.141, 0.227, 0.330, 0.316, 0.278]
    # medians of the halves 0.184 and 0.297 ms: the lag wanders, it does not grow
    assert summary["lag_grows"] is False


def test_pgbench_lag_that_grows_is_told():
    summary = pgbench.parse_summary(recorded("pgbench-15-select-only-rate-over.stdout.txt"),
                                    recorded("pgbench-15-select-only-rate-over.stderr.txt"))
    assert summary["lag_per_interval_ms"] == [477.042, 1367.352, 2275.935, 3222.960, 4148.208, 5107.515]
    assert summary["lag_grows"] is True
    assert (summary["skipped"], summary["skipped_pct"]) == (0, 0.0)  # no -L: pgbench skips none
    assert "late" not in summary  # and counts none late


def test_closed_loop_report_has_no_open_loop_figures():
    summary = pgbench.parse_summary(recorded("pgbench-15-ro.stdout.txt"), recorded("pgbench-15-ro.stderr.txt"))
    assert not {"skipped", "late", "lag_avg_ms", "lag_grows"} & set(summary)
    assert "lag_grows" not in sysbench.parse_summary(recorded("sysbench-1.0.20-mysql-oltp_read_write.stdout.txt"))


def test_pgbench_open_loop_percentiles_are_those_of_its_own_log_from_the_scheduled_start():
    lines = recorded("pgbench-15-select-only-rate-limit.log.txt").splitlines()
    # pgbench's -l with -R: client, transaction, time (us, from the scheduled start), script, epoch, us, schedule lag
    done = [line.split() for line in lines if line.split()[2] != "skipped"]
    assert len(done) == 2881 and len(lines) - len(done) == 125  # as its report counts them
    assert all(int(f[2]) >= int(f[6]) for f in done)  # each latency includes its wait for its scheduled start
    ordered = sorted(int(f[2]) for f in done)
    stats = pgbench.parse_latency("", "", lines, ["-l", "--sampling-rate=1"])
    for pct in (50, 95, 99):  # by hand, the rank rule of sysbench's percentile (docs/measurements.md): floor(n p / 100 + 0.5)
        assert stats[f"p{pct}_ms"] == ordered[math.floor(len(ordered) * pct / 100 + 0.5) - 1] / 1000


def test_sysbench_open_loop_queue_is_read_as_a_lag():
    stdout = recorded("sysbench-1.0.20-mysql-oltp_point_select-rate.stdout.txt")
    summary = sysbench.parse_summary(stdout)
    assert summary["tps"] == 486.82
    assert summary["lag_per_interval_ms"] == [0.0] * 5 and summary["lag_grows"] is False  # "queue length: 0" each second
    figures = openloop.figures(500, summary, sysbench.parse_latency(stdout))
    assert figures["offered_tps"] == 500 and figures["achieved_ratio"] == round(486.82 / 500, 4)
    assert figures["p95_ms"] == 2.71  # the report's "95th percentile"
    assert figures["late"] is None and figures["skipped"] is None  # sysbench counts neither


def test_sysbench_event_queue_full_fails_with_its_words():
    step = Step("run", ["sysbench"], 1, 5, 1)
    reason, _summary = judge_step(sysbench, step, Outcome(1, recorded("sysbench-1.0.20-mysql-rate-queue-full.stdout.txt"), ""), 60, [])
    assert reason.startswith("run failed: FATAL: The event queue is full. This means the worker threads are unable to keep up")


@pytest.mark.parametrize(("lags", "grows"), [
    ([0.1, 0.2], None),  # too few intervals
    ([0.1, 0.3, 0.2, 0.4], False),  # wanders below 1 ms
    ([5.0, 5.5, 6.0, 5.0], False),  # a constant lag of a busy server
    ([1.0, 2.0, 4.0, 8.0], True),
    ([0.0, 0.0, 0.0, 0.0, 1.5, 3.0], True),  # medians of the halves 0 and 1.5 ms
    ([0.3, 0.4, 0.3, 0.4, 30.0, 0.5], False),  # one busy second of the client host: a spike, not a trend
])
def test_lag_growth_rule(lags, grows):
    assert openloop.lag_grows(lags) is grows


@pytest.mark.parametrize(("queue", "grows"), [
    ([0, 0, 0, 1, 1, 1], False),  # one event caught queued at 50 TPS: 20 ms, one event's worth, not a trend
    ([0, 0, 0, 2, 3, 3], True),  # 60 ms against 0: three events waiting
])
def test_sysbench_lag_grows_by_more_than_one_queued_event(queue, grows):
    stdout = "Running the test with following options:\nTarget transaction rate: 50/sec\n" + "".join(
        f"[ {i + 1}s ] queue length: {q}, concurrency: 0\n" for i, q in enumerate(queue))
    assert sysbench.parse_open_loop(stdout)["lag_grows"] is grows


def test_open_loop_argv():
    params = {"scale": 1, "range": 1000, "threads": 2, "duration_s": 10, "report_interval_s": 1, "prepared": True,
              "workload": "ro", "rate_tps": 4000, "latency_limit_ms": 0.05}
    run = next(s for s in pgbench.plan(PG, params, "/w") if s.phase == "run")
    assert run.argv[run.argv.index("-R"):run.argv.index("-R") + 4] == ["-R", "4000", "-L", "0.05"]
    assert "--sampling-rate=1" in run.argv  # 4,000 TPS offered: every transaction logged
    assert pgbench.decimal_arg(3_600_000.0) == "3600000"
    closed = next(s for s in pgbench.plan(PG, {**params, "rate_tps": None, "latency_limit_ms": None}, "/w") if s.phase == "run")
    assert "-R" not in closed.argv and "-L" not in closed.argv
    sb = {"tables": 1, "rows_per_table": 100, "threads": 2, "duration_s": 5, "report_interval_s": 1, "rate_tps": 300}
    assert "--rate=300" in next(s for s in sysbench.plan(MY, sb, "/w") if s.phase == "run").argv


# --- the parameters' rules, through the API ------------------------------------------------------------------------

BAD = [
    ("pgbench-ro-quick", {"rate_tps": 0}, "rate_tps", "between 1 and 10000000"),
    ("pgbench-ro-quick", {"rate_tps": -5}, "rate_tps", "between 1 and 10000000"),
    ("pgbench-ro-quick", {"rate_tps": 10_000_001}, "rate_tps", "between 1 and 10000000"),
    ("pgbench-ro-quick", {"rate_tps": "fast"}, "rate_tps", "must be a whole number"),
    ("pgbench-ro-quick", {"rate_tps": 100, "latency_limit_ms": 0.001}, "latency_limit_ms", "between 0.01 and 3600000"),
    ("pgbench-ro-quick", {"rate_tps": 100, "latency_limit_ms": 0}, "latency_limit_ms", "between 0.01 and 3600000"),
    ("pgbench-ro-quick", {"rate_tps": 100, "latency_limit_ms": -1}, "latency_limit_ms", "between 0.01 and 3600000"),
    ("pgbench-ro-quick", {"rate_tps": 100, "latency_limit_ms": "soon"}, "latency_limit_ms", "must be a number"),
    ("pgbench-ro-quick", {"rate_tps": 100, "latency_limit_ms": "NaN"}, "latency_limit_ms", "must be a number"),
    ("pgbench-ro-quick", {"latency_limit_ms": 50}, "latency_limit_ms", "needs rate_tps"),
    ("pgbench-ro-quick", {"rate_tps": 100, "thread_sweep": [1, 2]}, "rate_tps", "cannot be combined with thread_sweep"),
    ("sysbench-oltp-rw-mysql-quick", {"rate_tps": 100, "latency_limit_ms": 50}, "overrides", "latency_limit_ms"),
    # several clients (issue 35.3) each offer their share of the rate: at least one transaction a second each
    ("pgbench-ro-quick", {"rate_tps": 1, "threads": 2, "client_hosts": 2}, "rate_tps",
     "rate_tps (1) must be at least client_hosts (2)"),
    ("sysbench-oltp-rw-mysql-quick", {"rate_tps": 2, "threads": 3, "client_hosts": 3}, "rate_tps",
     "rate_tps (2) must be at least client_hosts (3)"),
    ("pgbench-ro-quick", {"rate_tps": 100, "threads": 2, "client_hosts": 2, "thread_sweep": [2, 4]}, "rate_tps",
     "cannot be combined with thread_sweep"),
]


@pytest.fixture
def local_targets(db):
    from runs.models import Target

    return {engine: Target.objects.create(name=f"local-{engine}", engine=engine, host="127.0.0.1", port=port,
                                          database="sbtest", user="bench")
            for engine, port in (("mysql", 3306), ("postgresql", 5432))}


@pytest.mark.parametrize(("profile", "overrides", "field", "words"), BAD)
def test_bad_open_loop_parameters_are_refused_naming_the_field(operator_api, profiles, local_targets, profile, overrides,
                                                               field, words):
    from runs.models import Run

    target = local_targets[profiles[profile].engine]
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": profile, "overrides": overrides}, format="json")
    assert response.status_code == 400, response.content
    messages = response.json()["errors"][field]
    assert any(words in m for m in (messages if isinstance(messages, list) else [messages])), messages
    assert not Run.objects.exists()


@pytest.mark.parametrize("profile", ["pgbench-ro-quick", "sysbench-oltp-rw-mysql-quick"])
@pytest.mark.parametrize("capacity", [{}, {"capacity_bound_ms": 50, "capacity_factor": 2, "capacity_max_tps": 1000}])
def test_a_rate_with_several_client_hosts_is_no_longer_refused_for_it(operator_api, profiles, local_targets, profile,
                                                                      capacity):
    """Issue 35.3: before, a 400 naming rate_tps and client_hosts ("not built yet"). Now the rate is split between the
    clients; what may still refuse two client hosts is the pool's workers (none consume this target's queue here)."""
    from runs.models import Run

    target = local_targets[profiles[profile].engine]
    response = operator_api.post("/api/v1/runs/", {"target": target.pk, "profile": profile, "overrides": {
        "rate_tps": 100, "threads": 2, "client_hosts": 2, **capacity}}, format="json")
    errors = response.json().get("errors", {}) if response.status_code == 400 else {}
    assert "rate_tps" not in errors and not set(errors) - {"client_hosts"}, response.content
    assert all("benchmark workers consuming queue" in m for m in errors.get("client_hosts", [])), errors
    if response.status_code == 400:
        assert not Run.objects.exists()
    params = profiles[profile].resolve({"rate_tps": 101, "threads": 2, "client_hosts": 2, **capacity})
    assert params["rate_tps"] == 101 and params["client_hosts"] == 2  # the run's rate, all clients together


def test_open_loop_parameters_are_stored_typed_and_the_run_says_open(operator_api, profiles, local_targets):
    response = operator_api.post("/api/v1/runs/", {"target": local_targets["postgresql"].pk, "profile": "pgbench-ro-quick",
                                                   "overrides": {"rate_tps": "250", "latency_limit_ms": "12.5"}}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["params"]["rate_tps"] == 250 and body["params"]["latency_limit_ms"] == 12.5
    assert body["loop"] == "open"
    closed = operator_api.post("/api/v1/runs/", {"target": local_targets["postgresql"].pk, "profile": "pgbench-ro-quick"},
                               format="json").json()
    assert closed["loop"] == "closed" and "rate_tps" not in closed["params"]


# --- the run page, the run list and the API say which loop a run is -------------------------------------------------

def recorded_open_loop_summary():
    """A step summary as the engine stores it (runs/execution.py) from the recorded -R 500 -L 1 run."""
    summary = pgbench.parse_summary(recorded("pgbench-15-select-only-rate-limit.stdout.txt"),
                                    recorded("pgbench-15-select-only-rate-limit.stderr.txt"))
    stats = pgbench.parse_latency("", "", recorded("pgbench-15-select-only-rate-limit.log.txt").splitlines(), [])
    return {"step": 1, "threads": 2, **summary, "open_loop": openloop.figures(500, summary, stats)}, stats


def make_run(target, profile, user, overrides, **fields):
    from runs.models import Run, RunState

    return Run.objects.create(target=target, profile=profile, params=profile.resolve(overrides), overrides=overrides,
                              requested_by=user, state=RunState.SUCCEEDED, **fields)


def test_open_loop_run_page_leads_with_offered_achieved_p95_late_skipped(client, operator_user, operator_api, profiles,
                                                                         local_targets):
    summary, stats = recorded_open_loop_summary()
    run = make_run(local_targets["postgresql"], profiles["pgbench-ro-quick"], operator_user,
                   {"rate_tps": 500, "latency_limit_ms": 1}, summary=summary,
                   insight={"latency": stats, "steps": [{"step": 1, "threads": 2, "latency": stats}]})
    client.force_login(operator_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    headline = html[html.index('id="run-headline"'):html.index("</p>", html.index('id="run-headline"'))]
    # as printed in the recorded report: tps = 481.535673, 291 late, 125 skipped; p95 of the log by the rank rule
    assert 'data-loop="open"' in headline and 'id="headline-offered">500<' in headline
    assert 'id="headline-tps">481.54<' in headline and f'id="headline-p95">{stats["p95_ms"]}<' in headline
    assert "<strong>291 / 125</strong>" in headline and "open loop, offered 500 TPS" in headline
    table = html[html.index('id="run-open-loop"'):]
    assert "10.101 % above 1.0 ms" in table and "4.158 % of the scheduled transactions" in table
    assert "0.243 / 6.314" in table and 'id="open-loop-lag-grows">no<' in table
    assert 'id="run-lag-grows"' not in html
    body = operator_api.get(f"/api/v1/runs/{run.pk}/").json()
    assert body["loop"] == "open" and body["summary"]["open_loop"]["offered_tps"] == 500
    assert body["summary"]["open_loop"]["late"] == 291 and body["summary"]["open_loop"]["skipped"] == 125
    listing = client.get("/runs/").content.decode()
    assert "open loop, offered 500 TPS" in listing


def test_a_lag_that_grew_is_said_on_the_page(client, operator_user, profiles, local_targets):
    summary = pgbench.parse_summary(recorded("pgbench-15-select-only-rate-over.stdout.txt"),
                                    recorded("pgbench-15-select-only-rate-over.stderr.txt"))
    summary = {"step": 1, "threads": 1, **summary, "open_loop": openloop.figures(100_000, summary, {})}
    run = make_run(local_targets["postgresql"], profiles["pgbench-ro-quick"], operator_user, {"rate_tps": 100_000},
                   summary=summary)
    client.force_login(operator_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-lag-grows"' in html and 'id="open-loop-lag-grows">yes<' in html


def test_closed_loop_runs_and_sweeps_are_labelled_closed_loop(client, operator_user, operator_api, profiles, local_targets):
    steps = [{"step": 1, "threads": 2, "tps": 100.0}, {"step": 2, "threads": 4, "tps": 180.0}]
    run = make_run(local_targets["mysql"], profiles["sysbench-oltp-rw-mysql-quick"], operator_user,
                   {"thread_sweep": [2, 4]}, summary={**steps[1], "steps": steps})
    client.force_login(operator_user)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'data-loop="closed"' in html and "closed loop" in html[html.index('id="run-headline"'):]
    assert "TPS against threads (closed loop)" in html and 'id="run-open-loop"' not in html
    assert operator_api.get(f"/api/v1/runs/{run.pk}/").json()["loop"] == "closed"
    assert "closed loop" in client.get("/runs/").content.decode()
