"""The run engine: one worker's part of a run, as one loop over the tool's steps.

A run's lead (the worker that claimed it) checks the tool and the target, prepares, measures each step and
cleans up; with several client hosts the other clients take part in the measured steps only. Who takes part
and how they meet is the coordination object's (runs/multiclient.py: Solo for one client, Team for several);
the loop is the same for all of them. Each ended step is judged by the drivers' one rule (judge_step); the run's
state changes go through runs/actions.py. Evidence beside the tool (server counters, client CPU) is read by
runs/sampling.py and judged by runs/insight.py."""

import dataclasses
import logging
import os
import shlex
import subprocess
import time
from pathlib import Path

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from django.utils import timezone
from django.utils.translation import gettext as _

from . import actions, capacity, insight, leftovers, sampling
from .access import ConnectionFailed, TargetAccess, Unsupported
from .drivers import NotRunnable, get_driver, judge_step, openloop, redact
from .addresses import on_this_host, resolved_host
from .models import MAX_LOG_CHARS, RunState, ServerSample
from .multiclient import HOST
from .params import is_open_loop
from .runner import run_command
from .workdir import remove_files, run_workdir, write_private_files

log = logging.getLogger(__name__)
MEASURED = ("warmup", "run")


def reopen_database():
    """After a lost database connection: drop every broken connection, so the next query opens a new one."""
    for conn in connections.all(initialized_only=True):
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - it is already broken; closing is best effort
            conn.connection = None


def retry_database(call, *args, grace=None, run_id=None, **kwargs):
    """call(*args, **kwargs) against the dashboard's database, retried across a blip (its connections terminated, a
    restart, connections refused) for `grace` seconds (RUNS_DATABASE_GRACE_SECONDS): each attempt on a fresh
    connection. Returns (result, seconds the database was gone or 0); a database gone longer raises its own error."""
    grace = settings.RUNS_DATABASE_GRACE_SECONDS if grace is None else grace
    gone_since = None
    while True:
        try:
            result = call(*args, **kwargs)
        except (OperationalError, InterfaceError) as exc:
            now = time.monotonic()
            if gone_since is None:
                gone_since = now
                log.warning("run %s: the dashboard's database is unreachable (%s): retrying for %g s", run_id,
                            exc.__class__.__name__, grace)
            if now - gone_since >= grace:
                raise
            reopen_database()
            time.sleep(0.5)
            continue
        return result, (time.monotonic() - gone_since if gone_since is not None else 0)


class SetupFailed(Exception):
    """The run cannot start here: the tool is missing, the TLS mode is one the tool cannot honour, the target
    cannot be reached. The message is the reason."""


def summarize(step_summaries, params):
    """The run's summary: the tool's own final report of each step, and at the top the step with the
    highest TPS (the single step when there is no sweep)."""
    if not step_summaries:
        return {}
    best = max(step_summaries, key=lambda s: s.get("tps") or 0)
    summary = dict(best)
    summary["prepared"] = bool(params.get("prepared", True))
    if len(step_summaries) > 1:
        summary["steps"] = step_summaries
    if capacity.is_capacity(params):
        summary["capacity"] = capacity.result(params, [s["capacity_step"] for s in step_summaries if "capacity_step" in s])
    return summary


class Execution:
    """One worker's part of a run. `team` says who else takes part (runs/multiclient.py)."""

    def __init__(self, run, team):
        self.run = run
        self.team = team
        self.lead = team.lead  # prepares, samples the server, cleans up and ends the run
        self.params = team.params  # this client's share of the threads
        self.target = run.target
        self.access = TargetAccess.of(self.target)  # the one description of how to reach the target
        self.secrets = self.access.secrets
        self.driver = get_driver(run.params["tool"])  # frozen on the run at launch (runs/params.py)
        self.secret_files = {}  # never on disk: the runner hands each one to the tool through a pipe
        self.disk_files = []  # TLS material the tool reads from its work directory
        self.log_lines = []
        self.log_written = 0  # how many of log_lines the lead has appended to the run's log
        self.log_dirty = False
        self.last_flush = self.last_beat = self.last_cancel_check = 0.0
        self.cancelled = False
        self.cancelled_during = ""  # where the cancel found the run, for its reason
        self.stop_cause = ""  # why the dashboard stopped the tool other than a cancel (its first error, another client)
        self.first_error = ""  # the tool's first error line of a step, and when it came (the run fails soon after)
        self.first_error_at = 0.0
        self.progress_at = 0.0  # when the running tool last reported a transaction (or started); 0: no tool running
        self.silent = ""  # why the target is taken for gone: no transaction, and a new connection not answered
        self.stall_noted = None  # the step in which a stall of a target that still answers was logged
        self.step = None
        self.step_started = 0.0
        self.tool_started_at = None
        self.sampler = None  # runs/sampling.Sampler of the step running now
        self.stored_readings = 0
        self.insight_steps = []
        self.tables_dropped = False  # the cleanup ran to its end (a tool step before it may have left tables)
        self.conn = None
        self.offered = {}  # a capacity search: the rate each step after the first offers, by step index
        self.load_at_start = None  # the client host's load before the first step (the lead's host)

    # --- the run ---------------------------------------------------------------------------------------
    def execute(self):
        with run_workdir(self.run.pk) as workdir:
            try:
                return self._execute(workdir)
            finally:
                remove_files(self.disk_files)

    def _execute(self, workdir):
        try:
            env, steps = self.set_up(workdir)
        except SetupFailed as exc:
            self.flush(force=True)
            return self.with_database(self.team.give_up, self, str(exc))
        reason, summaries = self.measure(steps, env, workdir)
        if not self.lead:
            self.flush(force=True)
            return self.with_database(self.team.finish_member, self, reason)
        reason = self.with_database(self.team.end, self, reason)
        return self.finish(reason, summaries, [s for s in steps if s.phase == "cleanup"], env, workdir)

    def set_up(self, workdir):
        """The tool's version, the TLS files, and (the lead) the server's version, the round trip and the
        fingerprint. Returns the tool's environment and its steps (this worker's: the others run no prepare)."""
        run, driver = self.run, self.driver
        try:
            version = subprocess.run(driver.version_argv(), capture_output=True, text=True, timeout=10)
            tool_version = driver.parse_version(version.stdout + version.stderr)
        except NotRunnable as exc:
            raise SetupFailed(str(exc)) from None
        except (OSError, subprocess.SubprocessError) as exc:
            raise SetupFailed(f"{run.params['tool']} is not available on worker {HOST}: {exc}") from None
        try:
            setup = self.access.tool_setup(driver, workdir)
            # The last gate before a tool: the named workloads only, parameters of their kind (runs/drivers).
            steps = driver.plan(setup.conn, self.params, workdir)
            self.conn = setup.conn  # a capacity search plans each next rate's steps with it
        except (Unsupported, NotRunnable) as exc:
            raise SetupFailed(str(exc)) from None
        if self.lead:
            try:
                server = self.access.bounded(self.access.server_version)
                round_trip = self.access.bounded(self.access.round_trip)
            except ConnectionFailed as exc:
                raise SetupFailed(f"Cannot connect to {self.access.describe()}: {exc}") from None
            # The client host's condition before any step (issue 46.6): a host already loaded beyond its cores
            # disturbs the measurement, however the server fared.
            self.load_at_start = sampling.client_load()
            self.with_database(run.beat, tool_version=tool_version, server_version=server, round_trip=round_trip,
                               tls={"mode": self.access.tls.mode}, client_load={"start": self.load_at_start},
                               disturbed=sampling.disturbed(self.load_at_start, settings.RUNS_CLIENT_LOAD_LIMIT_PER_CORE))
            self.add_log(f"[dashboard] round trip to {self.access.describe()}: median {round_trip['median_ms']} ms "
                         f"of {round_trip['queries']} queries")
            self.record_fingerprint(version.stdout + version.stderr)
        self.secret_files = setup.pipe_files
        self.disk_files = write_private_files(setup.disk_files)
        if self.lead:
            self.with_database(run.beat, command_line=redact("\n".join(shlex.join(s.argv) for s in steps), self.secrets))
        else:
            steps = [s for s in steps if s.phase in MEASURED]
        return setup.env, steps

    def measure(self, steps, env, workdir):
        """The one step loop: prepare (the lead), then each warm-up and run step, every client at the agreed
        start. Returns (why the run fails or "", the run steps' summaries)."""
        run, team = self.run, self.team
        summaries = []
        queue = [s for s in steps if s.phase != "cleanup"]  # a capacity search adds each next rate's steps
        for step in queue:
            measured = step.phase in MEASURED
            if measured:
                reason = team.meet(self, step)  # its queries each go through with_database (Team.meet)
                if reason or self.cancelled or self.stop_cause:
                    return reason, summaries
                if self.lead:
                    if run.state == RunState.PREPARING:
                        self.with_database(actions.start_measuring, run)
                    self.with_database(run.beat, step=step.index, step_started_at=team.step_start())
                self.start_sampling()
            outcome = self.run_step(step, env, workdir)
            readings = self.stop_sampling() if measured else []
            if outcome.stopped == "cancelled":
                return self.error_stop_reason(step), summaries
            reason, summary = judge_step(self.driver, step, outcome, self.time_limit(step), self.secrets, host=team.host_label)
            if reason:
                return reason, summaries
            if step.phase == "run":
                concluded = team.conclude(self, step, outcome, summary, readings, workdir)
                if not self.lead:  # reported: client 1 merges it (and, a capacity search, says the next rate)
                    queue.extend(self.next_capacity_steps(step, summaries, workdir))
                    continue
                if concluded is None:  # stopped by a cancel or another client, or a report never came
                    return "", summaries
                step_summary, evidence = concluded
                if is_open_loop(run.params):  # offered, achieved, latency from the scheduled start, late, skipped, lag
                    offered = self.offered.get(step.index, run.params["rate_tps"])
                    step_summary["open_loop"] = openloop.figures(offered, step_summary, evidence["latency"])
                if capacity.is_capacity(run.params):
                    step_summary["capacity_step"] = capacity.step_record(run.params, step_summary["open_loop"], step_summary)
                summaries.append(step_summary)
                queue.extend(self.next_capacity_steps(step, summaries, workdir))
                self.insight_steps.append(evidence)
                found = insight.run_insight(self.insight_steps)  # shown as each step ends
                self.with_database(run.beat, insight=found, client_bound=found["client_bound"])
        return "", summaries

    def next_capacity_steps(self, step, summaries, workdir):
        """A capacity search (runs/capacity.py): the warm-up and run step of the next rate to offer, numbered after
        `step`; [] when the search is over or the run is not one. The lead decides from the merged figures; with
        several clients the others are told the rate (Team.agree_rate) and each offers its share of it."""
        if not capacity.is_capacity(self.run.params):
            return []
        rate = capacity.next_rate(self.run.params, [s["capacity_step"] for s in summaries]) if self.lead else None
        rate = self.team.agree_rate(self, step, rate)
        if rate is None:
            return []
        planned = self.driver.plan(self.conn, self.team.params_at(rate, step.index + 1), workdir)
        self.offered[step.index + 1] = rate
        return [dataclasses.replace(s, index=step.index + 1) for s in planned if s.phase in MEASURED]

    def finish(self, reason, summaries, cleanup, env, workdir):
        """The lead, after the last step: clean up (always: a cancelled or failed run drops its tables too), then
        end the run. A target that stopped answering gets no cleanup (it would wait as the tool did): the run fails
        at once, its tables named for a later drop."""
        run = self.run
        if not self.cancelled and self.with_database(run.cancel_is_requested):
            # Asked before the run ends: a cancel, whatever else stopped the tool meanwhile (a frozen target is judged
            # silent while the cancel waits for its next check); the tables' fate is said as for any cancel.
            self.cancelled, self.cancelled_during = True, self.where()
        if self.silent and not self.cancelled:
            self.flush(force=True)
            self.with_database(leftovers.fail_keeping_tables, run, reason or self.silent, _("the target stopped answering"))
            return "failed"
        if not self.cancelled:
            self.with_database(actions.start_cleanup, run)
        # Why the cleanup did not drop the tables (then they are named on the run for "drop them"). A target that
        # stopped answering gets none (a cancelled run's, here); one that stops answering during it is given up on
        # as in every other phase (should_stop_cleanup), never waited for as the tool would wait.
        not_dropped = f"cleanup skipped: {self.silent}" if self.silent else ""
        for step in [] if not_dropped else cleanup:
            outcome = self.run_step(step, env, workdir, should_stop=self.should_stop_cleanup)
            if outcome.stopped == "cancelled":  # stopped by us: the target does not answer
                not_dropped = f"cleanup stopped: {self.silent}"
            elif outcome.returncode != 0 or outcome.stopped:
                why, _summary = judge_step(self.driver, step, outcome, self.time_limit(step), self.secrets)
                not_dropped = why or f"cleanup failed: exit status {outcome.returncode}"
            if not_dropped:
                if not reason and not self.cancelled:
                    reason = not_dropped
                break
        self.tables_dropped = bool(cleanup) and not not_dropped
        remove_files(self.disk_files)
        self.flush(force=True)
        if self.load_at_start is not None:  # shown beside the start; it includes the tool's own load
            self.with_database(run.beat, client_load={"start": self.load_at_start, "end": sampling.client_load()})
        if self.cancelled or self.with_database(run.cancel_is_requested):
            during = self.cancelled_during or _("cleaning up")
            if not_dropped:
                self.with_database(actions.finish_cancelled, run, _("Cancelled while %(where)s; the tool was stopped, but its tables could not be "
                                                "dropped (%(error)s): %(tables)s; the run page offers to drop them.") % {
                    "where": during, "error": not_dropped, "tables": ", ".join(leftovers.benchmark_tables(run))},
                    leftover_tables=leftovers.benchmark_tables(run), leftover_cause=not_dropped[:1000])
                return "cancelled"
            self.with_database(actions.finish_cancelled, run, _("Cancelled while %(where)s; the tool was stopped and its tables dropped.") % {
                "where": during})
            return "cancelled"
        if reason and not_dropped:  # the target stopped, or the cleanup itself failed: its tables may be there
            self.with_database(leftovers.fail_keeping_tables, run, reason, not_dropped)
            return "failed"
        if reason:
            self.with_database(actions.fail, run, reason)
            return "failed"
        self.with_database(actions.succeed, run, summarize(summaries, run.params))
        return "succeeded"

    def error_stop_reason(self, step):
        """Why a step the dashboard stopped failed: the tool's first error, or the target's silence, if that is what
        stopped it."""
        if self.cancelled:
            return ""
        if self.silent and self.stop_cause == self.silent:
            return f"{step.phase} failed: {self.silent}"
        if not self.first_error or self.stop_cause != self.first_error:
            return ""
        return redact(f"{step.phase} failed: {self.first_error} (the tool was stopped "
                      f"{settings.RUNS_ERROR_GRACE_SECONDS:g} s after its first error)", self.secrets)

    def time_limit(self, step):
        if step.phase in MEASURED:
            return step.duration_s + settings.RUNS_TIME_MARGIN_SECONDS
        return settings.RUNS_PREPARE_TIME_LIMIT_SECONDS

    def run_step(self, step, env, workdir, should_stop=None):
        self.step = step
        self.step_started = time.monotonic()
        self.add_log(f"$ {redact(shlex.join(step.argv), self.secrets)}")
        self.flush(force=True)
        if step.phase in MEASURED:
            self.team.wait_for_start()  # last thing before the tool starts: nothing of ours delays it
        outcome = run_command(
            step.argv, env_extra=env, cwd=workdir, time_limit_s=self.time_limit(step), on_line=self.on_line,
            should_stop=should_stop or self.should_stop, on_tick=self.tick, secret_files=self.secret_files,
            on_start=self.on_tool_start,
        )
        self.progress_at = 0.0  # no tool: a wait at the barrier or for the other clients' reports is no stall
        if outcome.stopped:
            self.add_log(f"[dashboard] {step.phase} stopped ({outcome.stopped})")
        elif self.lead and step.phase in ("reset", "cleanup") and outcome.returncode == 0:
            self.with_database(leftovers.forget_dropped, self.run, leftovers.benchmark_tables(self.run))
        self.flush(force=True)
        return outcome

    @property
    def tables_may_remain(self):
        """A tool step began (reset, prepare or later: the lead's tables may be on the target) and no cleanup ended it."""
        return self.lead and self.step is not None and not self.tables_dropped

    # --- while the tool runs ---------------------------------------------------------------------------
    def with_database(self, call, *args, **kwargs):
        """call(*args, **kwargs) against the dashboard's database, retried across a blip for RUNS_DATABASE_GRACE_SECONDS
        (retry_database): the tool goes on meanwhile, its output waiting in its pipe, so no sample is lost. Every write
        the engine makes during a run goes through here. A database gone longer raises, and the run fails with the
        database's own error (runs/tasks.py)."""
        result, gone = retry_database(call, *args, run_id=self.run.pk, **kwargs)
        if gone:
            self.add_log(f"[dashboard] the dashboard's database did not answer for {gone:.1f} s; reconnected, nothing lost")
        return result

    def on_tool_start(self, proc):
        self.tool_started_at = timezone.now()
        self.progress_at = time.monotonic()
        if self.step is not None and self.step.phase in MEASURED:
            self.with_database(self.team.tool_started, self.step, self.tool_started_at)

    def on_line(self, stream, line):
        self.add_log(line)
        step = self.step
        if step is None:
            return
        if not self.first_error and self.driver.is_error_line(line, stream):
            # A target gone away mid-run: sysbench or pgbench may go on retrying or waiting; the run fails soon
            # after the tool's first error, with that error (should_stop).
            self.first_error, self.first_error_at = redact(line.strip(), self.secrets), time.monotonic()
        if step.phase not in MEASURED:
            self.progress_at = time.monotonic()  # prepare, reset, cleanup: any line is progress
            return
        sample = self.driver.parse_interval(line, stream, threads=step.threads, interval_s=self.run.params["report_interval_s"])
        if sample:
            if (sample.get("tps") or 0) > 0:
                self.progress_at = time.monotonic()
            self.with_database(self.team.store_sample, step, sample, self.tool_started_at)

    def should_stop(self):
        now = time.monotonic()
        if self.first_error and now - self.first_error_at >= settings.RUNS_ERROR_GRACE_SECONDS:
            self.stop_cause = self.stop_cause or self.first_error
            return True
        if not self.first_error and (self.silent or self.target_went_silent(now)):
            self.stop_cause = self.stop_cause or self.silent
            return True
        if now - self.last_cancel_check < settings.RUNS_CANCEL_POLL_SECONDS:
            return self.cancelled
        self.last_cancel_check = now
        if not self.cancelled and self.with_database(self.run.cancel_is_requested):
            self.cancelled = True
            self.cancelled_during = self.where()
        if not self.cancelled and not self.stop_cause:
            self.stop_cause = self.with_database(self.team.problem)
        return self.cancelled or bool(self.stop_cause)

    def should_stop_cleanup(self):
        """The cleanup is not cancellable (a cancelled run drops its tables too), but a target that stops answering is
        given up on, as in every phase: its tables are then named for a later drop."""
        return bool(self.silent) or self.target_went_silent(time.monotonic())

    def target_went_silent(self, now):
        """In any step of a tool: no transaction reported (a measured step; at least two report intervals) or no line
        at all (reset, prepare, cleanup) for RUNS_STALL_SECONDS: does the target still answer a new connection? A
        server that answers is busy with its own work (locks, a checkpoint, loading a large table) and the step goes
        on; one that does not is gone (a network cut or a frozen host gives the tool no error: it waits, as TCP does,
        for many minutes)."""
        step = self.step
        if step is None or not self.progress_at:
            return False
        quiet = now - self.progress_at
        measured = step.phase in MEASURED
        if quiet < (max(settings.RUNS_STALL_SECONDS, 2 * self.run.params["report_interval_s"]) if measured
                    else settings.RUNS_STALL_SECONDS):
            return False
        why = self.access.unanswered(settings.RUNS_STALL_PROBE_SECONDS)
        if not why:
            self.progress_at = time.monotonic()
            if self.stall_noted != step:  # once a step: a long pgbench -v vacuum would say it every few seconds
                self.stall_noted = step
                self.add_log(f"[dashboard] {'no transaction' if measured else 'no output'} for {quiet:.0f} s, but the target "
                             "answers a new connection: going on")
            return False
        self.silent = (f"the target stopped answering: {'no transaction' if measured else 'no output'} for {quiet:.0f} s, "
                       f"and a new connection {why}")
        self.add_log(redact(f"[dashboard] {self.silent}: stopping the tool", self.secrets))
        return True

    def tick(self):
        if self.sampler is not None and self.lead:
            self.with_database(self.store_server_samples)
        if self.step is not None and self.step.phase in MEASURED:
            self.with_database(self.team.tick, self.step)
        self.flush()

    def where(self):
        """The phase and step the run is in, in words: 'running step 1 of 3 (8 threads), 8 s in'."""
        step = self.step
        if step is None:
            return _("starting")
        seconds = int(time.monotonic() - self.step_started)
        if step.phase in MEASURED:
            verb = _("running") if step.phase == "run" else _("warming up")
            return _("%(verb)s step %(n)d of %(total)d (%(threads)d threads), %(s)d s in") % {
                "verb": verb, "n": step.index, "total": self.run.step_count, "threads": self.team.total_threads(step),
                "s": seconds}
        words = {"reset": _("dropping tables left behind"), "prepare": _("preparing (loading the tables)"),
                 "cleanup": _("cleaning up")}
        return _("%(phase)s, %(s)d s in") % {"phase": words.get(step.phase, step.phase), "s": seconds}

    # --- log and heartbeat -------------------------------------------------------------------------
    def add_log(self, line):
        self.log_lines.append(redact(line, self.secrets))
        self.log_dirty = True

    def flush(self, force=False, **fields):
        now = time.monotonic()
        if self.log_dirty and (force or now - self.last_flush >= settings.RUNS_LOG_FLUSH_SECONDS):
            end = len(self.log_lines)
            if self.lead:  # the new lines only: the run's log is appended, never rewritten
                self.with_database(self.run.append_log, self.log_lines[self.log_written:end])
                self.log_written = end
            else:
                text = "\n".join(self.log_lines)
                fields["log"] = "[… earlier output dropped …]\n" + text[-MAX_LOG_CHARS:] if len(text) > MAX_LOG_CHARS else text
            self.log_dirty = len(self.log_lines) > end  # a line added meanwhile (a blip's note) goes with the next flush
            self.last_flush = now
        if fields or now - self.last_beat >= settings.RUNS_HEARTBEAT_SECONDS:
            if self.lead:
                self.with_database(self.run.beat, **fields)
            self.with_database(self.team.beat, fields.get("log") if not self.lead else None)
            self.last_beat = now

    # --- evidence beside the tool (runs/sampling.py reads, runs/insight.py judges) ---------------------
    def open_probe(self):
        return sampling.ServerProbe(self.access)

    def record_fingerprint(self, tool_version_text):
        """The client host and the server's settings, once, before the first step."""
        fields = {"client_info": {**sampling.client_info(tool_version_text),
                                  # the target's address is this host's own: the tool shares its CPUs (Run.client_bound_cause)
                                  "target_on_client_host": on_this_host(resolved_host(self.target.host, self.target.port))}}
        def read_settings():
            probe = self.open_probe()
            try:
                return probe.settings()
            finally:
                probe.close()

        try:
            found = self.access.bounded(read_settings)
            fields.update(server_settings=found, server_settings_hash=sampling.settings_hash(found))
        except (sampling.ProbeFailed, ConnectionFailed) as exc:
            self.add_log(redact(f"[dashboard] could not read the server's settings: {exc}", self.secrets))
        self.with_database(self.run.beat, **fields)

    def start_sampling(self):
        try:
            probe = self.open_probe() if self.lead else None  # the other clients read their own CPU only
        except sampling.ProbeFailed as exc:
            self.add_log(redact(f"[dashboard] server sampling unavailable for this step: {exc}", self.secrets))
            probe = None
        self.sampler = sampling.Sampler(probe, self.run.params["report_interval_s"])
        if probe is not None and "tool" not in self.run.tls:
            probe.tls_wanted = True  # read at the next reading, once the tool has connected
        self.sampler.start()
        self.stored_readings = 1  # the baseline is no interval of its own

    def store_server_samples(self):
        readings = self.sampler.drain(self.stored_readings - 1)
        if len(readings) < 2:
            return
        step = self.step
        ServerSample.objects.bulk_create([
            ServerSample(run=self.run, step=step.index, warmup=step.phase == "warmup", t=row["t"], sampled_at=row["at"],
                         **{k: row[k] for k in ("server_tps", "rollbacks_per_s", "queries_per_s", "running", "lock_waiting",
                                                "lock_waits_per_s", "buffer_hit_pct", "client_cpu_pct")},
                         counters=row["counters"] or {})
            for row in insight.interval_rows(readings, self.target.engine)])
        self.stored_readings += len(readings) - 1

    def stop_sampling(self):
        sampler, probe = self.sampler, self.sampler.probe
        # PostgreSQL backends flush their counters as they exit: read the last time a moment later.
        # A cancelled run waits for no last reading: the server may be the reason it was cancelled (frozen, cut off),
        # and a cancel takes effect within 10 s in any phase.
        readings = sampler.finish(settle_s=0.5 if self.target.engine == "postgresql" else 0.0,
                                  server_silent=bool(self.silent) or self.cancelled)
        if self.lead:
            self.with_database(self.store_server_samples)
        if probe is not None and probe.tool_tls is not None and "tool" not in self.run.tls:
            self.with_database(self.run.beat, tls={**self.run.tls, "tool": probe.tool_tls})
        if probe is not None and not sampler.is_alive():
            probe.close()
        if sampler.error:
            self.add_log(redact(f"[dashboard] server sampling stopped: {sampler.error}", self.secrets))
        self.sampler = None
        return readings

    def read_latency_log(self, step, workdir):
        """The lines of the latency log the tool wrote for this step (pgbench -l: <prefix>.<pid>[.<thread>]),
        removed once read."""
        lines = []
        if step.log_prefix:
            for path in sorted(Path(workdir).glob(f"{step.log_prefix}.*")):
                with open(path) as fh:
                    lines.extend(fh)
                path.unlink()
        return lines

    def client_evidence(self, step, outcome, readings, workdir):
        """What this client measured of a run step beside the tool's report: the latency (the tool's histogram or
        its transaction log) and its own CPU, per interval and judged (runs/insight.py)."""
        found = {"latency": {}, "client": {}, "exact_us": None}
        try:
            found["latency"] = self.driver.parse_latency(outcome.stdout, outcome.stderr, self.read_latency_log(step, workdir),
                                                         step.argv)
            # pgbench's logged latencies themselves: a multi-client run merges them (runs/clients.py), the run keeps none
            found["exact_us"] = found["latency"].pop("exact_us", None)
            found["client"] = insight.client_evidence(insight.interval_rows(readings, self.target.engine),
                                                      self.run.params["report_interval_s"])
            found["client"]["cores"] = os.cpu_count()
        except Exception as exc:  # noqa: BLE001 - evidence is extra: its failure must not fail the measured run
            log.exception("evidence of run %s step %s", self.run.pk, step.index)
            self.add_log(f"[dashboard] could not summarise the evidence of step {step.index}: {exc.__class__.__name__}")
        return found

    def server_evidence(self, readings, summary, step):
        """The server's own count of the step's transactions against the tool's (runs/insight.py)."""
        tps, transactions = summary.get("tps"), summary.get("transactions")
        duration = transactions / tps if tps and transactions else step.duration_s  # the tool's own measured time
        try:
            return insight.server_evidence(readings, self.target.engine, tps, round(duration, 4))
        except Exception:  # noqa: BLE001 - evidence is extra
            log.exception("server evidence of run %s step %s", self.run.pk, step.index)
            return None
