"""A run as one self-describing record (JSON) and its samples as CSV: what the run page's "export"
links and the API's /runs/{id}/export/ and /runs/{id}/samples-csv/ answer. Never a password."""

import csv
import io

from django.http import HttpResponse, JsonResponse
from django.utils import timezone

from .history import rule, series_runs, series_url, stats
from .insight import (
    CLIENT_BOUND_CPU_PCT,
    CLIENT_BOUND_FRACTION,
    OTHER_LOAD_TOLERANCE_PCT,
)

FORMAT, FORMAT_VERSION = "perfdash-run", 4  # 2: origin, regression, series, repeat_group; 3: network; 4: latency_caveat

FIELDS = {
    "run": "id, state, reason, times (ISO 8601, UTC), worker, who asked, the catalogue row it reproduces / was published as",
    "client": "the benchmark client host: name, cores (os.cpu_count), cpu_model, memory_mb (/proc/meminfo), os, kernel, "
              "python, tool_build (the tool's own --version line)",
    "server": "version (SELECT version()), settings (SHOW GLOBAL VARIABLES / pg_settings with units, read at the start), "
              "settings_hash (sha256 of the sorted name=value lines)",
    "target": "name, engine, host, port, database, user (never the password), tls_mode, family, declared_vcpus, "
              "declared_memory_gb, catalogue flavour",
    "network": "round_trip: the client-to-target round trip measured before the first step (median_ms, min_ms, max_ms of "
               "`queries` trivial SELECT 1 on one connection, milliseconds); tls: the target's mode and the server's own "
               "view of the tool's sessions (tool: source pg_stat_ssl or performance_schema.status_by_thread, sessions, "
               "encrypted, versions, ciphers; or source require_secure_transport when the server lists no session)",
    "profile": "the benchmark profile (slug, tool, workload and its defaults)",
    "overrides": "what the run changed from the profile",
    "params": "the parameters the run used (profile + overrides)",
    "command_line": "the commands run, password removed",
    "summary": "the tool's own final report of the best step (per step under 'steps' for a sweep); tps_ci: the "
               "step's 95 % TPS interval from its own interval samples by batch means (mean, low, high, n batches of "
               "batch_size samples, se, method), null with fewer than 4 samples; open_loop: an open-loop run's offered "
               "and achieved rate, p50/p95/p99 from the scheduled start, late and skipped, lag; capacity: a capacity "
               "search's result (bound_ms, budget_pct, sustained_tps and its achieved rate and p95, failed_tps, "
               "failed_p95_ms, failed_reason, and steps, each offered_tps, achieved_tps, p50_ms, p95_ms, p99_ms, "
               "late_pct, skipped_pct, lag_grows, passed, reason); its top-level tps is its last step's, not a capacity",
    "latency": "p50_ms, p95_ms, p99_ms, max_ms (milliseconds) and histogram [[bucket ms, count], ...] on sysbench's "
               "bucket scale; for a sweep, all steps' histograms merged; method says where they come from",
    "latency_caveat": "why the run's latency figures are not to be trusted (a pgbench run made with -r and -P on "
                      "several threads, where pgbench 15 measures latency wrong), or empty",
    "steps": "per step: threads, latency (as above), server (server-side TPS = commits counted by the server / the "
             "tool's measured time, agreement_pct = 100 x server / tool TPS, buffer_hit_pct, running_avg, source), "
             "client (cpu_avg_pct of the host, busy_fraction = share of intervals above the threshold, bound)",
    "client_bound": f"true when the client host was above {CLIENT_BOUND_CPU_PCT:g} % CPU for more than "
                    f"{CLIENT_BOUND_FRACTION:.0%} of a step's intervals: the result may understate the target",
    "other_load": f"the server saw other load: steps (step, threads, server_tps, tool_tps, agreement_pct) whose server "
                  f"counted more than {OTHER_LOAD_TOLERANCE_PCT:g} % more commits than the tool made (another client on "
                  f"the database, or on a MySQL server); tolerance_pct; acknowledged_at / acknowledged_by: who published "
                  f"the run anyway (empty list: none seen)",
    "samples": "the tool's interval lines: step, warmup, t (s since the step started, tool clock), threads, tps, qps, "
               "reads/writes/other (per s), latency_p95_ms, latency_avg_ms, errors_per_s, reconnects_per_s",
    "server_samples": "the worker's readings at each report interval: step, warmup, t (s since the tool started, worker "
                      "clock), sampled_at, server_tps, rollbacks_per_s, queries_per_s, running, lock_waiting, "
                      "lock_waits_per_s, buffer_hit_pct (%), client_cpu_pct (% of all cores), counters (cumulative, "
                      "as the server names them)",
    "log": "the tool's output, password removed",
    "origin": "how the run was started: by hand (schedule null) or by a schedule (id, name, cron in the server's time "
              "zone, repeats); requested_by; the catalogue row it reproduces",
    "regression": "the run's verdict against its series: regression true / false / null (not judged: too few earlier "
                  "results, or a repeat group not finished); rule (threshold_pct %, window, min_runs, method); trend "
                  "(tps judged, n, center: the earlier results' geometric mean, interval [low, high]: their 95 % prediction "
                  "interval in TPS, change_pct %, outside, detectable_pct and cannot_detect, method, earlier_runs, earlier_results: "
                  "run ids per earlier result, a repeat group counting once; repeat_group for a group's verdict)",
    "series": "the runs of the same target, profile and parameters (the set-up the verdict compares with): target id, "
              "profile slug, url of the series page, n, mean_tps, stdev_tps (sample standard deviation) and ci_low_tps, "
              "ci_high_tps (95 % interval of the mean, Student's t over the runs) of its succeeded runs, and those runs oldest first (id, finished_at, tps, regression, repeat_group)",
    "repeat_group": "null, or the launch this run repeats with others: id, count launched, index of this run, runs (id, "
                    "state, tps), n, mean_tps, stdev_tps and ci_low_tps, ci_high_tps (95 % interval of the mean) of the succeeded ones",
    "clients": "a run driven by several client hosts (empty for one): index, host, cores, state, reason, threads (first "
               "step), step_starts (each step's tool start, the client's clock), reports (its tool's final report, "
               "latency and CPU per run step), samples (its interval lines: step, warmup, t, at, then as samples), log; "
               "the run's samples are their sums per interval aligned by time, its summary their sum",
}
SAMPLE_FIELDS = ["step", "warmup", "t", "threads", "tps", "qps", "reads", "writes", "other", "latency_p95_ms",
                 "latency_avg_ms", "errors_per_s", "reconnects_per_s"]
SERVER_FIELDS = ["step", "warmup", "t", "server_tps", "rollbacks_per_s", "queries_per_s", "running", "lock_waiting",
                 "lock_waits_per_s", "buffer_hit_pct", "client_cpu_pct"]


def other_load_record(run):
    """Whether the server saw other load, as the export and the API say it."""
    return {"steps": run.other_load, "tolerance_pct": OTHER_LOAD_TOLERANCE_PCT,
            "acknowledged_at": _iso(run.other_load_acknowledged_at),
            "acknowledged_by": run.other_load_acknowledged_by.get_username() if run.other_load_acknowledged_by_id else None}


def _iso(value):
    return value.isoformat() if value else None


def _series(run):
    runs = list(series_runs(run.target_id, run.profile_id, run.params).values_list(
        "id", "finished_at", "summary", "regression", "repeat_group_id"))
    tps = [(summary or {}).get("tps") for _i, _f, summary, _r, _g in runs]
    st = stats(tps)
    return {"target": run.target_id, "profile": run.profile.slug, "url": series_url(run), "n": st["n"], "mean_tps": st["mean"],
            "stdev_tps": st["stdev"], "ci_low_tps": st["ci_low"], "ci_high_tps": st["ci_high"],
            "runs": [{"id": i, "finished_at": _iso(f), "tps": t, "regression": r, "repeat_group": g}
                     for (i, f, _s, r, g), t in zip(runs, tps)]}


def _repeat_group(run):
    if not run.repeat_group_id:
        return None
    members = list(run.repeat_group.runs.order_by("repeat_index", "id").values_list("id", "state", "summary"))
    st = stats([(summary or {}).get("tps") for _i, state, summary in members if state == "succeeded"])
    return {"id": run.repeat_group_id, "count": run.repeat_group.count, "index": run.repeat_index,
            "runs": [{"id": i, "state": state, "tps": (summary or {}).get("tps")} for i, state, summary in members],
            "n": st["n"], "mean_tps": st["mean"], "stdev_tps": st["stdev"], "ci_low_tps": st["ci_low"], "ci_high_tps": st["ci_high"]}


def run_record(run):
    target, profile = run.target, run.profile
    schedule = run.schedule if run.schedule_id else None
    flavor = target.flavor
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "exported_at": timezone.now().isoformat(), "fields": FIELDS,
        "run": {"id": run.pk, "state": run.state, "reason": run.reason, "created_at": _iso(run.created_at),
                "started_at": _iso(run.started_at), "finished_at": _iso(run.finished_at), "worker": run.worker,
                "requested_by": run.requested_by.get_username() if run.requested_by_id else None,
                "reproduces": run.reproduces_id, "published_result": run.published_result_id,
                "tool_version": run.tool_version},
        "client": {**(run.client_info or {}), "host": run.client_host or (run.client_info or {}).get("host"),
                   "cores": run.client_cores or (run.client_info or {}).get("cores")},
        "server": {"version": run.server_version, "settings_hash": run.server_settings_hash, "settings": run.server_settings},
        "target": {"name": target.name, "engine": target.engine, "host": target.host, "port": target.port,
                   "database": target.database, "user": target.user, "tls_mode": target.tls_mode, "family": target.family,
                   "declared_vcpus": target.declared_vcpus, "declared_memory_gb": target.declared_memory_gb,
                   "flavor": {"id": flavor.pk, "name": str(flavor)} if flavor else None},
        "profile": {"slug": profile.slug, "name": profile.name, "tool": profile.tool, "engine": profile.engine,
                    "workload": profile.workload, "quick": profile.quick,
                    "methodology": profile.methodology.slug if profile.methodology_id else None},
        "network": {"round_trip": run.round_trip, "tls": run.tls},
        "overrides": run.overrides, "params": run.params, "command_line": run.command_line,
        "summary": run.summary, "latency": (run.insight or {}).get("latency") or {}, "latency_caveat": run.latency_caveat,
        "steps": (run.insight or {}).get("steps") or [], "client_bound": run.client_bound,
        "other_load": other_load_record(run),
        "samples": [{f: getattr(s, f) for f in SAMPLE_FIELDS} for s in run.samples.all()],
        "server_samples": [{**{f: getattr(s, f) for f in SERVER_FIELDS}, "sampled_at": _iso(s.sampled_at), "counters": s.counters}
                           for s in run.server_samples.all()],
        "log": run.full_log,
        "origin": {"schedule": {"id": schedule.pk, "name": schedule.name, "cron": schedule.cron, "repeats": schedule.repeats}
                   if schedule else None,
                   "requested_by": run.requested_by.get_username() if run.requested_by_id else None,
                   "reproduces": run.reproduces_id},
        "regression": {"regression": run.regression, "rule": rule(), "trend": run.trend},
        "series": _series(run),
        "repeat_group": _repeat_group(run),
        "clients": [{"index": c.index, "host": c.host, "cores": c.cores, "state": c.state, "reason": c.reason,
                     "threads": c.threads, "step_starts": c.step_starts, "reports": c.reports,
                     "samples": [{**{f: getattr(s, f) for f in SAMPLE_FIELDS}, "at": _iso(s.at)} for s in c.samples.all()],
                     "log": c.log}
                    for c in run.clients.prefetch_related("samples")],
    }


def samples_csv(run):
    """Tool and server samples in one table: `source` says which; empty where a column does not apply."""
    columns = ["source", *dict.fromkeys(SAMPLE_FIELDS + SERVER_FIELDS), "sampled_at"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for s in run.samples.all():
        writer.writerow({"source": "tool", **{f: getattr(s, f) for f in SAMPLE_FIELDS}, "sampled_at": _iso(s.received_at)})
    for s in run.server_samples.all():
        writer.writerow({"source": "server", **{f: getattr(s, f) for f in SERVER_FIELDS}, "sampled_at": _iso(s.sampled_at)})
    return out.getvalue()


def json_response(run):
    response = JsonResponse(run_record(run), json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}.json"'
    return response


def csv_response(run):
    response = HttpResponse(samples_csv(run), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-samples.csv"'
    return response
