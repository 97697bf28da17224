"""Who takes part in a run and how they meet: the coordination object the step loop (runs/execution.py) uses.

Solo: one client host, the worker that claimed the run. Team: several client hosts (runs/clients.py has the
rules): client 1 (the lead) dispatches the others once prepared, meets them at a barrier before each measured
step, merges their reports and waits for them before the cleanup; clients 2..N take part in the measured steps
only and report each one. Both answer the same questions, so the loop never asks how many clients there are."""

import logging
import os
import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from . import actions, clients, insight
from .dispatch import enqueue_client
from .models import ClientSample, ClientState, Run, RunClient, RunState, Sample
from .params import client_count, client_params, thread_steps

log = logging.getLogger(__name__)
HOST = settings.RUNS_CLIENT_HOST  # the machine's host name unless RUNS_CLIENT_HOST names this client otherwise


def coordination(run, client=None):
    """The run's coordination for this worker: Solo for a one-client run, else a Team as `client` (None: the lead)."""
    return Team(run, client) if client_count(run.params) > 1 else Solo(run)


class Solo:
    """A run driven by one client host."""

    lead = True
    host_label = ""  # judge_step names no host: there is one

    def __init__(self, run):
        self.run = run
        self.params = run.params

    def meet(self, ex, step):
        return ""

    def step_start(self):
        return timezone.now()

    def wait_for_start(self):
        pass

    def tool_started(self, step, at):
        pass

    def store_sample(self, step, sample, tool_started_at):
        Sample.objects.create(run=self.run, step=step.index, warmup=step.phase == "warmup", **sample)

    def total_threads(self, step):
        return step.threads

    def params_at(self, rate, index):
        """The parameters of run step `index` of a capacity search, offering `rate`."""
        return {**self.params, "rate_tps": rate}

    def agree_rate(self, ex, step, rate):
        """A capacity search's next rate after run step `step` (None: the search is over): this worker decides alone."""
        return rate

    def problem(self):
        return ""

    def tick(self, step):
        pass

    def beat(self, log_text):
        pass

    def conclude(self, ex, step, outcome, summary, readings, workdir):
        """The step's summary and evidence, from this worker's own measurements."""
        found = ex.client_evidence(step, outcome, readings, workdir)
        # transactions: the tool's own count (pgbench's latency may come from a sample of them)
        evidence = {"step": step.index, "threads": step.threads, "transactions": summary.get("transactions"),
                    "latency": found["latency"]}
        server = ex.server_evidence(readings, summary, step)
        if server is not None:
            evidence["server"] = server
        evidence["client"] = found["client"]
        return {"step": step.index, "threads": step.threads, **summary}, evidence

    def end(self, ex, reason):
        return reason

    def give_up(self, ex, reason):
        actions.fail(self.run, reason)
        return "failed"


class Team:
    """A run driven by several client hosts, as client `client.index` (client None: the lead, before its row exists)."""

    def __init__(self, run, client=None):
        self.run = run
        self.client = client
        self.count = client_count(run.params)
        self.lead = client is None or client.index == 1
        self.params = client_params(run.params, client.index if client else 1)
        self.host_label = "" if self.lead else HOST
        self.agreed_start = None
        self.last_merge = 0.0
        self.rates = {1: self.params.get("rate_tps")}  # open loop: this client's share of each step's rate

    # --- the lead --------------------------------------------------------------------------------------
    def dispatch(self, ex):
        """Client 1, prepared: the clients' rows, then a message per other client on the target's pool queue."""
        rows = clients.create_clients(self.run, self.count)
        self.client = rows[0]
        actions.client_ready(self.client, "", host=HOST, cores=os.cpu_count(), worker=self.run.worker,
                             worker_pid=os.getpid())
        for row in rows[1:]:
            enqueue_client(self.run, row.index)
        ex.add_log(f"[dashboard] {self.count} client hosts: waiting for clients 2-{self.count} on queue "
                   f"\"{self.run.target.queue}\"")

    def meet(self, ex, step):
        """The barrier before a warm-up or run step: say this client is ready; client 1 waits for all and
        writes the agreed start, the others wait for it (each starts its tool then: wait_for_start). Returns the reason
        the run must fail ("" otherwise; a cancel or another client's failure sets the execution's own flags)."""
        if self.client is None:  # the lead, prepared: now the other clients may come
            self.dispatch(ex)
        key = clients.step_key(step)
        ex.with_database(actions.client_ready, self.client, key)
        limit = settings.RUNS_CLIENT_ARRIVAL_SECONDS
        deadline = time.monotonic() + (limit if self.lead else 2 * limit)
        while True:
            ex.flush()
            if ex.should_stop():
                return ""
            if self.lead:
                late = ex.with_database(lambda: [c for c in RunClient.objects.filter(run=self.run) if c.ready_for != key])
                if not late:
                    start = ex.with_database(clients.set_agreed_start, self.run, key)
                    break
                if time.monotonic() > deadline:
                    names = ", ".join(str(c.index) for c in late)
                    return (f"Client(s) {names} of {self.count} did not reach the start of {step.phase} step {step.index} within "
                            f"{limit:g} s: no free benchmark worker took them on queue \"{self.run.target.queue}\" "
                            f"(each client needs its own worker).")
            else:
                start = ex.with_database(clients.agreed_start, self.run, key)
                if start is not None:
                    break
                if time.monotonic() > deadline:
                    return f"Client 1 set no start for {step.phase} step {step.index} within {2 * limit:g} s."
            time.sleep(0.05)
        self.agreed_start = start
        return ""

    def step_start(self):
        return self.agreed_start

    def wait_for_start(self):
        """Sleep until the agreed moment: called last thing before the tool starts, after this client's own
        preparations for the step (its server probe, its log), so none of them delays it."""
        while (delay := (self.agreed_start - timezone.now()).total_seconds()) > 0:
            time.sleep(min(delay, 0.01))

    def tool_started(self, step, at):
        self.client.set(step_starts={**self.client.step_starts, clients.step_key(step): at.isoformat()})

    def store_sample(self, step, sample, tool_started_at):
        ClientSample.objects.create(client=self.client, step=step.index, warmup=step.phase == "warmup",
                                    at=tool_started_at + timedelta(seconds=sample["t"]), **sample)

    def total_threads(self, step):
        """The run's threads of the step (not this client's share); a capacity search's every step has the run's threads."""
        counts = thread_steps(self.run.params)
        return counts[step.index - 1] if step.index <= len(counts) else self.run.params["threads"]

    def params_at(self, rate, index):
        """This client's parameters of run step `index` of a capacity search offering `rate` (the run's): its share of it."""
        mine = client_params({**self.run.params, "rate_tps": rate}, self.client.index if self.client else 1)
        self.rates[index] = mine["rate_tps"]
        return mine

    def agree_rate(self, ex, step, rate):
        """A capacity search's next rate after run step `step`, the same for every client: client 1 decides (`rate`,
        None when the search is over) and writes it beside the barrier; the others wait for it, as for a start.
        None as well when the run must stop first (a cancel or another client's failure sets the execution's flags)."""
        key = f"rate-after-{clients.step_key(step)}"
        if self.lead:
            ex.with_database(clients.set_agreed_rate, self.run, key, rate)
            return rate
        # Client 1 decides once every client's report of the step is in: at most the step's time limit after this one's.
        limit = step.duration_s + settings.RUNS_TIME_MARGIN_SECONDS + 2 * settings.RUNS_CLIENT_ARRIVAL_SECONDS
        deadline = time.monotonic() + limit
        while True:
            found, agreed = ex.with_database(clients.agreed_rate, self.run, key)
            if found:
                return agreed
            ex.flush()
            if ex.should_stop():
                return None
            if time.monotonic() > deadline:
                ex.stop_cause = f"Client 1 set no rate after run step {step.index} within {limit:g} s."
                return None
            time.sleep(0.05)

    def problem(self):
        """Why this client must stop because of the others: one failed or went silent, or the run ended."""
        other, why = clients.first_problem(self.run, exclude=self.client)
        if other is not None:
            return f"{clients.describe(other, self.count)} failed: {why}"
        if Run.objects.filter(pk=self.run.pk, state__in=[RunState.FAILED, RunState.CANCELLED]).exists():
            return "the run ended"
        return ""

    def tick(self, step):
        """Client 1: the run's samples merged from the clients' lines, at most once a report interval."""
        now = time.monotonic()
        if self.lead and now - self.last_merge >= self.run.params["report_interval_s"]:
            self.last_merge = now
            self.merge_samples(step)

    def merge_samples(self, step):
        clients.merge_pending(self.run, self.count, step, self.run.params["report_interval_s"], self.agreed_start)

    def beat(self, log_text):
        if self.client is not None:
            self.client.set(**({"log": log_text} if log_text is not None else {}))

    def conclude(self, ex, step, outcome, summary, readings, workdir):
        """This client's report of a run step; client 1 then gathers every client's and merges them into the
        step's summary and evidence (None when the run must stop first). The others return None."""
        found = ex.client_evidence(step, outcome, readings, workdir)
        cpu = dict(found["client"])
        rows = insight.interval_rows(readings, self.run.target.engine)
        cpu["per_interval"] = [[round(r["t"], 2), r["client_cpu_pct"]] for r in rows]
        report = {"key": clients.step_key(step), "step": step.index, "threads": step.threads, "summary": summary,
                  "latency": found["latency"], "client": cpu, "offered_tps": self.rates.get(step.index),
                  "exact_us": found.get("exact_us")}
        # pgbench's logged latencies travel once: client 1 has merged the earlier steps' before this one started
        earlier = [{k: v for k, v in r.items() if k != "exact_us"} for r in self.client.reports]
        ex.with_database(self.client.set, reports=[*earlier, report])
        if not self.lead:
            return None
        gathered = self.gather_reports(ex, step)
        if gathered is None:
            return None
        ex.with_database(self.merge_samples, step)  # the last intervals
        merged, lat = clients.merge_reports([{"index": c.index, "host": c.host, "threads": r["threads"], "summary": r["summary"],
                                              "latency": r["latency"], "exact_us": r.get("exact_us"),
                                              "offered_tps": r.get("offered_tps")} for c, r in gathered])
        ex.with_database(clients.drop_records, gathered)  # merged: the run keeps the figures, not every transaction's latency
        # transactions: the tools' own count (the latency may come from a sample of them)
        evidence = {"step": step.index, "threads": self.total_threads(step), "transactions": merged.get("transactions"),
                    "latency": lat}
        server = ex.server_evidence(readings, merged, step)
        if server is not None:
            evidence["server"] = server
        per_client = [{"index": c.index, "host": c.host, **r["client"]} for c, r in gathered]
        bounds = [c.get("bound") for c in per_client]
        evidence["client"] = {**per_client[0], "bound": True if any(bounds) else (False if all(b is False for b in bounds) else None)}
        evidence["clients"] = per_client
        return {"step": step.index, "threads": self.total_threads(step), **merged}, evidence

    def gather_reports(self, ex, step):
        """Client 1: every client's report of this step, or None when the run must stop first."""
        key = clients.step_key(step)
        deadline = time.monotonic() + step.duration_s + settings.RUNS_TIME_MARGIN_SECONDS
        while True:
            rows = ex.with_database(lambda: list(RunClient.objects.filter(run=self.run).order_by("index")))
            found = [(c, next((r for r in c.reports if r["key"] == key), None)) for c in rows]
            if all(r is not None for _, r in found):
                return found
            if ex.should_stop():
                return None
            if time.monotonic() > deadline:
                late = next(c for c, r in found if r is None)
                ex.stop_cause = f"{clients.describe(late, self.count)} sent no final report of step {step.index}."
                return None
            ex.tick()
            time.sleep(0.1)

    def end(self, ex, reason):
        """Client 1 before cleanup: the run's reason (another client's failure if nothing else failed), its own
        state said, clients that never came marked, and every other client stopped or lost, so cleanup drops no
        table under a running tool."""
        if not reason and ex.stop_cause and not ex.cancelled:
            reason = ex.stop_cause
        if self.client is None:  # it failed before any client was dispatched
            return reason
        state = ClientState.FAILED if reason else (ClientState.STOPPED if ex.cancelled else ClientState.DONE)
        actions.client_end(self.client, state, reason)
        actions.stop_unstarted_clients(self.run)
        deadline = time.monotonic() + settings.RUNS_CLIENT_LOST_SECONDS + 10
        while time.monotonic() < deadline:
            others = list(RunClient.objects.filter(run=self.run).exclude(pk=self.client.pk))
            if all(c.is_final or c.lost() for c in others):
                break
            ex.flush()
            time.sleep(0.2)
        return reason

    # --- clients 2..N ------------------------------------------------------------------------------------
    def give_up(self, ex, reason):
        if self.lead:
            actions.fail(self.run, reason)
        else:
            actions.client_end(self.client, ClientState.FAILED, reason)
        return "failed"

    def finish_member(self, ex, reason):
        """Clients 2..N after their last step: their own state, which client 1 reads before it cleans up."""
        if reason:
            actions.client_end(self.client, ClientState.FAILED, reason)
            return "failed"
        if ex.cancelled or ex.stop_cause:
            actions.client_end(self.client, ClientState.STOPPED, ex.stop_cause or "The run was cancelled.")
            return "stopped"
        actions.client_end(self.client, ClientState.DONE)
        return "done"
