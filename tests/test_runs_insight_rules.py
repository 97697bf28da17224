"""The insight rules (runs/insight.py) on readings written out here, with the expected numbers worked
out by hand in the comments."""

from runs import insight


def reading(t, cpu, server):
    return {"t": t, "at": f"2026-01-01T00:00:{int(t):02d}+00:00", "cpu": cpu, "server": server}


def mysql(commits, requests, disk, running=3, locks=0):
    return {"Com_commit": commits, "Com_rollback": 0, "Questions": commits * 20, "Threads_running": running,
            "Innodb_buffer_pool_read_requests": requests, "Innodb_buffer_pool_reads": disk, "Innodb_row_lock_waits": locks}


def test_interval_rates_and_step_evidence_mysql():
    readings = [reading(0.0, (0, 0), mysql(1000, 10_000, 100)),
                reading(1.0, (150, 200), mysql(1200, 14_000, 120, locks=2)),   # 200 commits in 1 s; CPU 150/200 = 75 %
                reading(2.0, (340, 400), mysql(1410, 18_000, 120, locks=5)),   # 210 commits; CPU 190/200 = 95 %
                reading(2.2, (360, 440), mysql(1440, 18_100, 120, running=0))]  # after exit: 0.2 s, not counted for CPU
    rows = insight.interval_rows(readings, "mysql")
    assert [r["server_tps"] for r in rows] == [200.0, 210.0, 150.0]
    assert [r["queries_per_s"] for r in rows] == [4000.0, 4200.0, 3000.0]
    # hit ratio: 1 - 20 disk reads / 4000 requests = 99.5 %; then no disk reads: 100 %
    assert rows[0]["buffer_hit_pct"] == 99.5 and rows[1]["buffer_hit_pct"] == 100.0
    assert [r["client_cpu_pct"] for r in rows] == [75.0, 95.0, 50.0]
    assert [r["lock_waits_per_s"] for r in rows][:2] == [2.0, 3.0]
    # Step: 440 commits over the tool's 2.0 s = 220 TPS; the tool said 225 -> 97.8 %.
    server = insight.server_evidence(readings, "mysql", 225.0, 2.0)
    assert server["tps"] == 220.0 and server["agreement_pct"] == 97.8 and server["commits"] == 440
    # 1 - 20 / 8100 = 99.753 %
    assert server["buffer_hit_pct"] == 99.753
    # Client: 2 full intervals (75 %, 95 %): half above 90 % is not "most" -> not bound.
    client = insight.client_evidence(rows, 1)
    assert client == {"cpu_avg_pct": 85.0, "busy_fraction": 0.5, "bound": False, "intervals": 2}


def test_client_bound_when_most_intervals_are_above_90_percent():
    cpu = [(0, 0), (95, 100), (190, 200), (280, 300)]  # 95 %, 95 %, 90 % (not above 90)
    rows = insight.interval_rows([reading(i, c, None) for i, c in enumerate(cpu)], "postgresql")
    assert [r["server_tps"] for r in rows] == [None, None, None]
    assert insight.client_evidence(rows, 1)["bound"] is True  # 2 of 3 intervals above 90 %
    rows = insight.interval_rows([reading(i, c, None) for i, c in enumerate([(0, 0), (95, 100), (185, 200), (275, 300)])], "postgresql")
    assert insight.client_evidence(rows, 1)["bound"] is False  # 1 of 3
    assert insight.run_insight([{"client": {"bound": False}}, {"client": {"bound": True}}])["client_bound"] is True
    assert insight.run_insight([{"client": {"bound": False}}])["client_bound"] is False
    assert insight.run_insight([{"client": {"bound": None}}])["client_bound"] is None


def test_postgresql_hit_ratio_counts_hits_and_reads():
    a = {"xact_commit": 0, "xact_rollback": 0, "blks_hit": 900, "blks_read": 100, "active_backends": 2, "lock_waiting_backends": 0}
    b = {"xact_commit": 50, "xact_rollback": 1, "blks_hit": 1890, "blks_read": 110, "active_backends": 2, "lock_waiting_backends": 1}
    rows = insight.interval_rows([reading(0, (0, 0), a), reading(0.5, (1, 2), b)], "postgresql")
    # 1000 requests (990 hits + 10 reads), 10 from disk: 99 %; 50 commits in 0.5 s, one of them the probe's
    # own reading: 49 / 0.5 = 98 TPS
    assert rows[0]["buffer_hit_pct"] == 99.0 and rows[0]["server_tps"] == 98.0 and rows[0]["rollbacks_per_s"] == 2.0
    assert rows[0]["running"] == 2 and rows[0]["lock_waiting"] == 1 and rows[0]["queries_per_s"] is None
    # A step of 3 readings: 2 probe commits come off the server's 1002 -> 1000 over 2 s = 500 TPS.
    c = dict(b, xact_commit=1002)
    step = insight.server_evidence([reading(0, (0, 0), a), reading(1, (1, 2), b), reading(2, (2, 4), c)], "postgresql", 500.0, 2.0)
    assert step["commits"] == 1000 and step["probe_commits_removed"] == 2 and step["tps"] == 500.0 and step["agreement_pct"] == 100.0
