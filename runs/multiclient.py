"""A worker's part in a run driven by several client hosts (runs/clients.py has the rules): the barrier
before each step, this client's report, and for client 1 dispatching the others, merging their reports
and waiting for them before the cleanup. Mixed into runs.tasks.Execution, whose state it shares."""

import logging
import os
import subprocess
import time

from django.conf import settings
from django.utils import timezone

from . import clients, insight
from .access import Unsupported
from .drivers import NotRunnable, judge_step
from .models import ClientState, RunClient

log = logging.getLogger(__name__)
HOST = settings.RUNS_CLIENT_HOST  # the machine's host name unless RUNS_CLIENT_HOST names this client otherwise


class ClientRole:
    def on_tool_start(self, proc):
        self.tool_started_at = timezone.now()
        step = self.step
        if self.multi and step is not None and step.phase in ("run", "warmup"):
            self.client.set(step_starts={**self.client.step_starts, clients.step_key(step): self.tool_started_at.isoformat()})

    def total_threads(self, step):
        from .params import thread_steps

        return thread_steps(self.run.params)[step.index - 1]

    def dispatch_clients(self):
        """Client 1, prepared: the clients' rows, then a message per other client on the target's pool queue."""
        from .services import enqueue_client

        rows = clients.create_clients(self.run, self.count)
        self.client = rows[0]
        self.client.set(state=ClientState.RUNNING, host=HOST, cores=os.cpu_count(), worker=self.run.worker,
                        worker_pid=os.getpid())
        for row in rows[1:]:
            enqueue_client(self.run, row.index)
        self.add_log(f"[dashboard] {self.count} client hosts: waiting for clients 2-{self.count} on queue "
                     f"\"{self.target.queue}\"")

    def meet(self, step):
        """The barrier before a warm-up or run step: say this client is ready; client 1 waits for all and
        writes the agreed start, the others wait for it (each starts its tool then: wait_for_start). Returns the reason
        the run must fail ("" otherwise; a cancel or another client's failure sets their own flags)."""
        key = clients.step_key(step)
        self.client.set(ready_for=key, state=ClientState.RUNNING)
        limit = settings.RUNS_CLIENT_ARRIVAL_SECONDS
        deadline = time.monotonic() + (limit if self.lead else 2 * limit)
        while True:
            self.flush()
            if self.should_stop():
                return ""
            if self.lead:
                rows = list(RunClient.objects.filter(run=self.run))
                late = [c for c in rows if c.ready_for != key]
                if not late:
                    start = clients.set_agreed_start(self.run, key)
                    break
                if time.monotonic() > deadline:
                    names = ", ".join(str(c.index) for c in late)
                    return (f"Client(s) {names} of {self.count} did not reach the start of {step.phase} step {step.index} within "
                            f"{limit:g} s: no free benchmark worker took them on queue \"{self.target.queue}\" "
                            f"(each client needs its own worker).")
            else:
                start = clients.agreed_start(self.run, key)
                if start is not None:
                    break
                if time.monotonic() > deadline:
                    return f"Client 1 set no start for {step.phase} step {step.index} within {2 * limit:g} s."
            time.sleep(0.05)
        self.agreed_start = start
        return ""

    def wait_for_start(self):
        """Sleep until the agreed moment: called last thing before the tool starts (runs.tasks._run_step), after
        this client's own preparations for the step (its server probe, its log), so none of them delays it."""
        while (delay := (self.agreed_start - timezone.now()).total_seconds()) > 0:
            time.sleep(min(delay, 0.01))

    def merge_samples(self):
        """The run's samples from the clients' lines (client 1, at most once a report interval while the tool runs)."""
        step = self.step
        clients.merge_pending(self.run, self.count, step, self.run.params["report_interval_s"], self.agreed_start)

    def report_step(self, step, outcome, summary, readings, workdir):
        """This client's final report of a run step (the tool's summary, its latency histogram, its CPU)."""
        interval = self.run.params["report_interval_s"]
        lat = {}
        try:
            lat = self.driver.parse_latency(outcome.stdout, outcome.stderr, self.read_latency_log(step, workdir), step.argv)
        except Exception:  # noqa: BLE001 - evidence is extra
            log.exception("latency of run %s client %s step %s", self.run.pk, self.client.index, step.index)
        rows = insight.interval_rows(readings, self.target.engine)
        cpu = insight.client_evidence(rows, interval)
        cpu.update(cores=os.cpu_count(), per_interval=[[round(r["t"], 2), r["client_cpu_pct"]] for r in rows])
        report = {"key": clients.step_key(step), "step": step.index, "threads": step.threads, "summary": summary,
                  "latency": lat, "client": cpu}
        self.client.set(reports=[*self.client.reports, report])

    def gather_reports(self, step):
        """Client 1: every client's report of this step, or None when the run must stop first."""
        key = clients.step_key(step)
        deadline = time.monotonic() + step.duration_s + settings.RUNS_TIME_MARGIN_SECONDS
        while True:
            rows = list(RunClient.objects.filter(run=self.run).order_by("index"))
            found = [(c, next((r for r in c.reports if r["key"] == key), None)) for c in rows]
            if all(r is not None for _, r in found):
                return found
            if self.should_stop():
                return None
            if time.monotonic() > deadline:
                late = next(c for c, r in found if r is None)
                self.stop_cause = f"{clients.describe(late, self.count)} sent no final report of step {step.index}."
                return None
            self.tick()
            time.sleep(0.1)

    def merge_step(self, step, outcome, summary, readings, workdir):
        """Client 1 after its own run step: the step's report and insight merged from all clients."""
        self.report_step(step, outcome, summary, readings, workdir)
        found = self.gather_reports(step)
        if found is None:
            return None
        self.merge_samples()  # the last intervals
        merged, lat = clients.merge_reports([{"index": c.index, "host": c.host, "threads": r["threads"], "summary": r["summary"],
                                              "latency": r["latency"]} for c, r in found])
        tps, transactions = merged.get("tps"), merged.get("transactions")
        duration = transactions / tps if tps and transactions else step.duration_s
        # transactions: the tools' own count (the latency may come from a sample of them)
        evidence = {"step": step.index, "threads": self.total_threads(step), "transactions": transactions, "latency": lat}
        try:
            evidence["server"] = insight.server_evidence(readings, self.target.engine, tps, round(duration, 4))
        except Exception:  # noqa: BLE001 - evidence is extra
            log.exception("server evidence of run %s step %s", self.run.pk, step.index)
        per_client = [{"index": c.index, "host": c.host, **r["client"]} for c, r in found]
        bounds = [c.get("bound") for c in per_client]
        evidence["client"] = {**per_client[0], "bound": True if any(bounds) else (False if all(b is False for b in bounds) else None)}
        evidence["clients"] = per_client
        return merged, evidence

    def end_clients(self, reason):
        """Client 1 before cleanup: its own state said, clients that never came marked, and every other client
        stopped (they stop on a cancel or a failed client by themselves) or lost, so cleanup drops no table
        under a running tool."""
        if self.client is None:
            return
        state = ClientState.FAILED if reason else (ClientState.STOPPED if self.cancelled else ClientState.DONE)
        self.client.set(state=state, reason=reason[:5000])
        RunClient.objects.filter(run=self.run, state=ClientState.WAITING).update(
            state=ClientState.STOPPED, reason="It never started: no worker took it before the run ended.")
        deadline = time.monotonic() + settings.RUNS_CLIENT_LOST_SECONDS + 10
        while time.monotonic() < deadline:
            others = list(RunClient.objects.filter(run=self.run).exclude(pk=self.client.pk))
            if all(c.is_final or c.lost() for c in others):
                break
            self.flush()
            time.sleep(0.2)

    def _execute_client(self, workdir):
        """Clients 2..N: the run steps only, with their share of the threads, started at each barrier."""
        run, driver, me = self.run, self.driver, self.client
        try:
            version = subprocess.run(driver.version_argv(), capture_output=True, text=True, timeout=10)
            driver.parse_version(version.stdout + version.stderr)
        except (NotRunnable, OSError, subprocess.SubprocessError) as exc:
            me.set(state=ClientState.FAILED, reason=f"{run.profile.tool} is not available on {HOST}: {exc}")
            return "failed"
        try:
            setup = self.access.tool_setup(driver, workdir)  # the target's one description (runs/access.py)
        except Unsupported as exc:
            me.set(state=ClientState.FAILED, reason=str(exc))
            return "failed"
        self.secret_files = setup.pipe_files
        self.write_tls_files(setup.disk_files)
        env = setup.env
        steps = [s for s in driver.plan(setup.conn, {**self.params, "workload": run.profile.workload}, workdir)
                 if s.phase in ("warmup", "run")]
        reason = ""
        for step in steps:
            reason = self.meet(step)
            if reason or self.cancelled or self.stop_cause:
                break
            self.start_sampling(step)
            outcome = self._run_step(step, env, workdir)
            readings = self.stop_sampling(step)
            if outcome.stopped == "cancelled":
                reason = self.error_stop_reason(step)
                break
            reason, summary = judge_step(driver, step, outcome, self._limit(step), self.secrets, host=HOST)
            if reason:
                break
            if step.phase == "run":
                self.report_step(step, outcome, summary, readings, workdir)
        self.flush(force=True)
        if reason:
            me.set(state=ClientState.FAILED, reason=reason[:5000])
            return "failed"
        if self.cancelled or self.stop_cause:
            me.set(state=ClientState.STOPPED, reason=self.stop_cause or "The run was cancelled.")
            return "stopped"
        me.set(state=ClientState.DONE)
        return "done"
