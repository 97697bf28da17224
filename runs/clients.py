"""Multi-client runs: one benchmark driven by several client hosts (benchmark workers) at once.

Client 1 is the worker that claimed the run: it checks the tools and the server, prepares once, then
sends runs.run_client for clients 2..N to the target's pool queue. Before every warm-up and run step each
client says it is ready (RunClient.ready_for) and waits; once all are ready, client 1 writes the agreed
start (Run.barrier[step], RUNS_CLIENT_START_LEAD_SECONDS ahead) and every client starts its tool at that
moment by its own clock. Client 1 cleans up once at the end and finishes the run. One client failing or
going silent stops the others and fails the run; cancel stops all. The database is the barrier: every
client already reads it for cancel, so no other service has to be reachable from the client hosts.

Merging (pure functions below): the run's interval samples are the clients' sums per interval, the
intervals aligned by time from the agreed start (not by sample index); its final report is the sum of
the clients' reports, its latency percentiles read from the clients' histograms merged (never averaged)."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .drivers import latency
from .models import ClientSample, ClientState, Run, RunClient, Sample
from .params import client_params

SUMMED = ("transactions", "queries", "reads", "writes", "other", "errors", "reconnects", "tps", "qps")
INTERVAL_SUMMED = ("threads", "tps", "qps", "reads", "writes", "other", "errors_per_s", "reconnects_per_s")


def step_key(step):
    return f"{step.phase}-{step.index}"


def pool_limit(queue):
    """The most client hosts a run on this pool (queue) may ask for."""
    return settings.RUNS_POOL_CLIENT_HOSTS.get(queue, settings.RUNS_MAX_CLIENT_HOSTS)


# --- merging: pure --------------------------------------------------------------------------------------
def sum_by_time(samples, start, interval_s, clients):
    """The run's samples of one step from its clients' ({client, at, ...}): each interval line is put in
    the slot round((at - start) / interval) and a slot with a line from every client becomes one sample
    whose rates are the sums. Returns ([(slot, merged sample)], slots left incomplete)."""
    slots = {}
    for s in samples:
        slot = round((s["at"] - start).total_seconds() / interval_s)
        slots.setdefault(slot, {})[s["client"]] = s
    merged, incomplete = [], []
    for slot in sorted(slots):
        rows = list(slots[slot].values())
        if len(rows) < clients:
            incomplete.append(slot)
            continue
        sample = {"t": round(slot * interval_s, 3), "latency_p95_ms": None}
        for name in INTERVAL_SUMMED:
            values = [r.get(name) for r in rows]
            sample[name] = None if any(v is None for v in values) else round(sum(values), 2)
        # The mean latency over all clients' transactions: each client's mean weighted by its rate.
        avgs = [(r.get("latency_avg_ms"), r.get("tps") or 0) for r in rows]
        weight = sum(w for _, w in avgs)
        sample["latency_avg_ms"] = (round(sum(a * w for a, w in avgs) / weight, 3)
                                    if weight and all(a is not None for a, _ in avgs) else None)
        merged.append((slot, sample))
    return merged, incomplete


def merge_reports(reports):
    """One step's final report from its clients' ({index, host, threads, summary, latency}), in client order:
    counts and rates summed, min/max of the extremes, the mean weighted by transactions, the percentiles
    read from the merged histogram, and each client's share of the TPS."""
    summaries = [r["summary"] for r in reports]
    merged = {}
    for name in SUMMED:
        values = [s.get(name) for s in summaries]
        if all(v is not None for v in values):
            merged[name] = round(sum(values), 2) if name in ("tps", "qps") else sum(values)
    times = [s.get("total_time_s") for s in summaries if s.get("total_time_s") is not None]
    if times:
        merged["total_time_s"] = max(times)
    mins = [s.get("latency_min_ms") for s in summaries if s.get("latency_min_ms") is not None]
    maxes = [s.get("latency_max_ms") for s in summaries if s.get("latency_max_ms") is not None]
    if mins:
        merged["latency_min_ms"] = min(mins)
    if maxes:
        merged["latency_max_ms"] = max(maxes)
    weighted = [(s.get("latency_avg_ms"), s.get("transactions")) for s in summaries]
    if all(a is not None and n for a, n in weighted):
        merged["latency_avg_ms"] = round(sum(a * n for a, n in weighted) / sum(n for _, n in weighted), 2)
    lat = merged_latency(reports, merged.get("latency_max_ms"))
    if lat:
        merged["latency_p95_ms"] = lat.get("p95_ms")
    merged.update(merge_open_loop(summaries, merged))
    total = merged.get("tps") or 0
    merged["client_hosts"] = len(reports)
    merged["clients"] = [{"index": r["index"], "host": r["host"], "threads": r["threads"],
                          "tps": r["summary"].get("tps"), "qps": r["summary"].get("qps"),
                          "transactions": r["summary"].get("transactions"),
                          "share_pct": round(100.0 * (r["summary"].get("tps") or 0) / total, 1) if total else None,
                          **({"offered_tps": r["offered_tps"], "late": r["summary"].get("late"),
                              "skipped": r["summary"].get("skipped")} if r.get("offered_tps") else {})}
                         for r in reports]
    return merged, lat


def merged_latency(reports, max_ms=None):
    """The step's latency distribution from every client's records together, never an average of their percentiles:
    pgbench's logged latencies (exact, whole microseconds) merged when every client sent them at one sampling rate,
    else the clients' histograms added bucket by bucket (sysbench's own percentile is read from its buckets so);
    {} when a client has neither."""
    exact = [r.get("exact_us") for r in reports]
    rates = {(r.get("latency") or {}).get("sampling_rate") for r in reports}
    if all(exact) and len(rates) == 1:
        rate = rates.pop()
        method = "the clients' pgbench -l logs merged" + ("" if rate in (None, 1, 1.0) else f" (--sampling-rate={rate:g})")
        return latency.from_values(latency.merge_exact(exact), method=method, sampling_rate=rate)
    histograms = [(r.get("latency") or {}).get("histogram") for r in reports]
    if all(histograms):
        return latency.from_histogram(latency.merge(histograms), max_ms=max_ms, method="the clients' histograms merged")
    return {}


def merge_open_loop(summaries, merged):
    """An open-loop step's figures of its clients' reports together ({} closed loop): late and skipped counts summed,
    their shares recomputed as pgbench computes them (late of the processed transactions; skipped of the scheduled
    ones: processed + skipped + failed), the schedule lag's mean weighted by transactions and its maximum, and the lag
    grows when any client's grew (that client's share of the rate was not sustained)."""
    if not any("lag_grows" in s or "lag_avg_ms" in s for s in summaries):
        return {}
    found = {}
    processed = merged.get("transactions")
    for name in ("late", "skipped"):
        values = [s.get(name) for s in summaries]
        if values and all(v is not None for v in values):
            found[name] = sum(values)
    if "late" in found and processed:
        found["late_pct"] = round(100.0 * found["late"] / processed, 3)
    elif "late" in found:
        found["late_pct"] = 0.0
    if "skipped" in found:
        scheduled = (processed or 0) + found["skipped"] + (merged.get("errors") or 0)
        found["skipped_pct"] = round(100.0 * found["skipped"] / scheduled, 3) if scheduled else 0.0
    limits = {s.get("latency_limit_ms") for s in summaries if s.get("latency_limit_ms") is not None}
    if limits:
        found["latency_limit_ms"] = max(limits)
    lags = [(s.get("lag_avg_ms"), s.get("transactions")) for s in summaries]
    if all(a is not None and n for a, n in lags):
        found["lag_avg_ms"] = round(sum(a * n for a, n in lags) / sum(n for _, n in lags), 3)
    maxima = [s.get("lag_max_ms") for s in summaries if s.get("lag_max_ms") is not None]
    if maxima:
        found["lag_max_ms"] = max(maxima)
    grows = [s.get("lag_grows") for s in summaries]
    found["lag_grows"] = True if any(grows) else (False if all(g is False for g in grows) else None)
    found["lag_per_client_ms"] = [s.get("lag_per_interval_ms") for s in summaries]
    if any(s.get("lag_from") for s in summaries):
        found["lag_from"] = next(s["lag_from"] for s in summaries if s.get("lag_from"))
    return found


# --- the barrier and the clients' rows: the database -------------------------------------------------
def create_clients(run, count):
    return [RunClient.objects.get_or_create(run=run, index=i, defaults={"threads": client_params(run.params, i)["threads"]})[0]
            for i in range(1, count + 1)]


def agreed_start(run, key):
    run.refresh_from_db(fields=["barrier", "state", "cancel_requested"])
    value = (run.barrier or {}).get(key)
    return datetime.fromisoformat(value) if value else None


def set_agreed_start(run, key):
    """Client 1, once every client is ready: the moment all of them start step `key`."""
    at = timezone.now() + timedelta(seconds=settings.RUNS_CLIENT_START_LEAD_SECONDS)
    barrier = dict(Run.objects.filter(pk=run.pk).values_list("barrier", flat=True).first() or {})
    barrier[key] = at.isoformat()
    Run.objects.filter(pk=run.pk).update(barrier=barrier)
    return at


def drop_records(gathered):
    """Client 1, once a step is merged: the clients' logged latencies (exact_us) taken off their stored reports of it.
    No client writes its reports meanwhile: each appends its next one only after the next barrier, which client 1
    sets after this."""
    for client, report in gathered:
        if report.get("exact_us") is not None:
            rows = RunClient.objects.filter(pk=client.pk).values_list("reports", flat=True).first() or []
            RunClient.objects.filter(pk=client.pk).update(reports=[
                {k: v for k, v in r.items() if k != "exact_us"} if r.get("key") == report["key"] else r for r in rows])


def set_agreed_rate(run, key, rate):
    """Client 1: a capacity search's next rate (None: the search is over), which the other clients read."""
    barrier = dict(Run.objects.filter(pk=run.pk).values_list("barrier", flat=True).first() or {})
    barrier[key] = rate
    Run.objects.filter(pk=run.pk).update(barrier=barrier)


def agreed_rate(run, key):
    """(whether client 1 decided, the rate it decided: None when the search is over)."""
    barrier = Run.objects.filter(pk=run.pk).values_list("barrier", flat=True).first() or {}
    return key in barrier, barrier.get(key)


def first_problem(run, exclude=None):
    """The first client (other than `exclude`) that failed or went silent, with why; (None, "") if none."""
    now = timezone.now()
    for client in RunClient.objects.filter(run=run).exclude(pk=getattr(exclude, "pk", None)):
        if client.state == ClientState.FAILED:
            return client, client.reason
        if client.lost(now):
            last = client.heartbeat_at.isoformat(timespec="seconds")
            return client, (f"it stopped reporting (last heartbeat {last}, more than "
                            f"{settings.RUNS_CLIENT_LOST_SECONDS:g} s ago): its worker died or cannot reach the database")
    return None, ""


def describe(client, count):
    return f"Client {client.index} of {count} ({client.host or 'no worker yet'})"


def merge_pending(run, clients, step, interval_s, start):
    """Client 1's tick: turn the interval slots every client has reported into the run's samples."""
    pending = list(ClientSample.objects.filter(client__run=run, step=step.index, warmup=step.phase == "warmup", merged=False)
                   .values("id", "client_id", "at", *INTERVAL_SUMMED, "latency_avg_ms"))
    if not pending:
        return 0
    rows = [{**p, "client": p["client_id"]} for p in pending]
    merged, _ = sum_by_time(rows, start, interval_s, clients)
    if not merged:
        return 0
    done_slots = {slot for slot, _ in merged}
    used = [p["id"] for p in pending if round((p["at"] - start).total_seconds() / interval_s) in done_slots]
    with transaction.atomic():  # both or neither: a merge retried across a blip never sums a slot twice
        Sample.objects.bulk_create([Sample(run=run, step=step.index, warmup=step.phase == "warmup", **sample)
                                    for _, sample in merged])
        ClientSample.objects.filter(pk__in=used).update(merged=True)
    return len(merged)


def client_rows(run):
    """The run page's clients: each host with its cores, state, threads, TPS and share of the run's TPS (the
    best step's, as the summary), and its CPU per interval of each run step (from its own readings)."""
    rows = list(run.clients.all())
    if not rows:
        return []
    shares = {c.get("index"): c for c in (run.summary or {}).get("clients", [])}
    result = []
    for c in rows:
        cpu = [{"step": r["step"], "avg": (r.get("client") or {}).get("cpu_avg_pct"),
                "bound": (r.get("client") or {}).get("bound"),
                "per_interval": [pct for _, pct in (r.get("client") or {}).get("per_interval", []) if pct is not None]}
               for r in c.reports]
        result.append({"client": c, "share": shares.get(c.index), "cpu": cpu,
                       "start": (c.step_starts or {}).get("run-1", "")})
    return result
