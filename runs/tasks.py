"""Celery tasks. run_benchmark is keyed by run id and idempotent: the Run row says what has been
done, so a redelivered or duplicated message never starts a second benchmark."""

import fcntl
import logging
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from . import clients, insight, sampling
from .access import ConnectionFailed, TargetAccess, Unsupported
from .drivers import NotRunnable, get_driver, judge_step, redact
from .leftovers import fail_dead_run
from .models import ClientSample, ClientState, Run, RunClient, RunState, Sample, ServerSample
from .multiclient import HOST, ClientRole
from .params import client_count, client_params
from .runner import run_command

log = logging.getLogger(__name__)
MAX_LOG_CHARS = 1_000_000


def _pid_alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie or a recycled pid that is no Celery process does not count
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
        return b"celery" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def worker_is_gone(run, now=None):
    """True when the process that ran this run is known dead (same host) or silent for too long."""
    if run.client_host == HOST and run.worker_pid:
        if run.worker_pid == os.getpid() or not _pid_alive(run.worker_pid):
            return True
    return run.heartbeat_stale(now)


def _reopen_database():
    """After a lost database connection: drop every broken connection, so the next query opens a new one."""
    for conn in connections.all(initialized_only=True):
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - it is already broken; closing is best effort
            conn.connection = None


def database_error_reason(exc):
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return f"Lost the database connection while running: {exc.__class__.__name__}: {text}"


# max_retries=None on the task: a run waiting for its target retries until it can start (retry(max_retries=None)
# alone means "the task's default", 3, after which the run was left queued for the reconciler).
@shared_task(bind=True, name="runs.run_benchmark", acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_benchmark(self, run_id):
    run = Run.objects.select_related("target", "profile").filter(pk=run_id).first()
    if run is None or run.is_final:
        return "nothing to do"
    if run.state != RunState.QUEUED:
        # Redelivered after a worker died, or a duplicate message: never start the benchmark twice.
        if worker_is_gone(run):
            fail_dead_run(run, f"The worker running this run ({run.worker or '?'}, pid {run.worker_pid}) on "
                               f"{run.client_host or '?'} died while the run was {run.get_state_display()}.")
            return "failed: worker lost"
        return "already running"
    if not run.claim(self.request.hostname or HOST, os.getpid(), HOST, os.cpu_count()):
        run.refresh_from_db()
        if run.state == RunState.QUEUED:  # another run of this target is active: wait, do not share
            run.beat()  # a worker holds its message: the reconciler leaves it alone
            raise self.retry(countdown=settings.RUNS_WAIT_RETRY_SECONDS, max_retries=None)
        return "not claimed"
    try:
        return Execution(run).execute()
    except (OperationalError, InterfaceError) as exc:
        # The connection died under us (database restarted, pg_terminate_backend): the tool is already
        # stopped (the runner kills it on the way out); record why on a fresh connection.
        log.warning("run %s: %s", run_id, database_error_reason(exc))
        _reopen_database()
        run.fail(redact(database_error_reason(exc), [run.target.password]))
        return "failed: database connection lost"
    except Exception as exc:  # noqa: BLE001 - any bug must end the run failed, never 'running' forever
        log.exception("run %s crashed", run_id)
        _reopen_database()
        run.fail(redact(f"Internal error in the worker: {exc.__class__.__name__}: {exc}", [run.target.password]))
        raise


@shared_task(bind=True, name="runs.run_client", acks_late=True, reject_on_worker_lost=True)
def run_client(self, run_id, index):
    """Client `index` (2..N) of a multi-client run (runs/clients.py): claims its row, then runs its share of
    the threads at each step's agreed start. Idempotent like run_benchmark: the row says what was done."""
    client = RunClient.objects.select_related("run__target", "run__profile").filter(run_id=run_id, index=index).first()
    if client is None or client.is_final or client.run.is_final:
        return "nothing to do"
    claimed = RunClient.objects.filter(pk=client.pk, state=ClientState.WAITING).update(
        state=ClientState.ARRIVED, host=HOST, cores=os.cpu_count(), worker=self.request.hostname or HOST,
        worker_pid=os.getpid(), heartbeat_at=timezone.now())
    if not claimed:  # redelivered after its worker died, or a duplicate
        if client.lost() or (client.host == HOST and client.worker_pid and not _pid_alive(client.worker_pid)):
            client.set(state=ClientState.FAILED, reason=f"Its worker ({client.worker}, pid {client.worker_pid}) died.")
            return "failed: worker lost"
        return "already running"
    client.refresh_from_db()
    try:
        return Execution(client.run, client).execute()
    except Exception as exc:  # noqa: BLE001 - any bug must end the client failed, which stops the run
        log.exception("run %s client %s crashed", run_id, index)
        _reopen_database()
        client.set(state=ClientState.FAILED, reason=redact(f"Internal error in the worker: {exc.__class__.__name__}: {exc}",
                                                            [client.run.target.password]))
        raise


class Execution(ClientRole):
    """One worker's part of a run: the whole run (one client), or client `client.index` of a multi-client
    run (runs/clients.py): client 1 prepares, meets the others at each step's barrier, merges and cleans up."""

    def __init__(self, run, client=None):
        self.run = run
        self.client = client  # RunClient of a multi-client run, None for a one-client run
        self.count = client_count(run.params)
        self.multi = self.count > 1
        self.lead = client is None or client.index == 1  # prepares, samples the server, finishes the run
        self.params = client_params(run.params, client.index if client else 1) if self.multi else run.params
        self.stop_cause = ""  # a multi-client run: why the other clients made this one stop
        self.tool_started_at = None
        self.agreed_start = None
        self.last_merge = 0.0
        self.secret_files = {}
        self.disk_files = {}
        self.target = run.target
        self.access = TargetAccess.of(self.target)  # the one description of how to reach the target
        self.password = self.access.password
        self.secrets = self.access.secrets
        self.first_error = ""  # the tool's first error line of a run step, and when it came (the run fails soon after)
        self.first_error_at = 0.0
        self.driver = get_driver(run.profile.tool)
        self.log_lines = []
        self.log_dirty = False
        self.last_flush = 0.0
        self.last_beat = 0.0
        self.last_cancel_check = 0.0
        self.cancelled = False
        self.step = None
        self.step_started = 0.0
        self.cancelled_during = ""  # where the cancel found the run, for its reason
        self.sampler = None  # runs/sampling.Sampler of the step running now
        self.stored_readings = 0
        self.insight_steps = []

    # --- log and heartbeat -------------------------------------------------------------------------
    def add_log(self, line):
        self.log_lines.append(redact(line, self.secrets))
        self.log_dirty = True

    def flush(self, force=False, **fields):
        now = time.monotonic()
        if self.log_dirty and (force or now - self.last_flush >= settings.RUNS_LOG_FLUSH_SECONDS):
            text = "\n".join(self.log_lines)
            if len(text) > MAX_LOG_CHARS:
                text = "[… earlier output dropped …]\n" + text[-MAX_LOG_CHARS:]
            fields["log"] = text
            self.log_dirty = False
            self.last_flush = now
        if fields or now - self.last_beat >= settings.RUNS_HEARTBEAT_SECONDS:
            if self.lead:
                self.run.beat(**fields)
            if self.client is not None:
                self.client.set(**({"log": fields["log"]} if "log" in fields and not self.lead else {}))
            self.last_beat = now

    def should_stop(self):
        now = time.monotonic()
        if self.first_error and now - self.first_error_at >= settings.RUNS_ERROR_GRACE_SECONDS:
            self.stop_cause = self.stop_cause or self.first_error
            return True
        if now - self.last_cancel_check < settings.RUNS_CANCEL_POLL_SECONDS:
            return self.cancelled
        self.last_cancel_check = now
        if not self.cancelled and self.run.cancel_is_requested():
            self.cancelled = True
            self.cancelled_during = self.where()
        if self.multi and not self.cancelled and not self.stop_cause:
            other, why = clients.first_problem(self.run, exclude=self.client)
            if other is not None:
                self.stop_cause = f"{clients.describe(other, self.count)} failed: {why}"
            elif Run.objects.filter(pk=self.run.pk, state__in=[RunState.FAILED, RunState.CANCELLED]).exists():
                self.stop_cause = "the run ended"
        return self.cancelled or bool(self.stop_cause)

    def where(self):
        """The phase and step the run is in, in words: 'running step 1 of 3 (8 threads), 8 s in'."""
        step = self.step
        if step is None:
            return _("starting")
        seconds = int(time.monotonic() - self.step_started)
        if step.phase in ("run", "warmup"):
            verb = _("running") if step.phase == "run" else _("warming up")
            threads = self.total_threads(step) if self.multi else step.threads  # the run's, not this client's share
            return _("%(verb)s step %(n)d of %(total)d (%(threads)d threads), %(s)d s in") % {
                "verb": verb, "n": step.index, "total": self.run.step_count, "threads": threads, "s": seconds}
        words = {"reset": _("dropping tables left behind"), "prepare": _("preparing (loading the tables)"),
                 "cleanup": _("cleaning up")}
        return _("%(phase)s, %(s)d s in") % {"phase": words.get(step.phase, step.phase), "s": seconds}

    def on_line(self, stream, line):
        self.add_log(line)
        step = self.step
        if step is None:
            return
        if not self.first_error and self.driver.is_error_line(line, stream):
            # A target gone away mid-run: sysbench or pgbench may go on retrying or waiting; the run fails soon
            # after the tool's first error, with that error (should_stop).
            self.first_error, self.first_error_at = redact(line.strip(), self.secrets), time.monotonic()
        if step.phase not in ("run", "warmup"):
            return
        sample = self.driver.parse_interval(line, stream, threads=step.threads, interval_s=self.run.params["report_interval_s"])
        if sample and self.multi:
            ClientSample.objects.create(client=self.client, step=step.index, warmup=step.phase == "warmup",
                                        at=self.tool_started_at + timedelta(seconds=sample["t"]), **sample)
        elif sample:
            Sample.objects.create(run=self.run, step=step.index, warmup=step.phase == "warmup", **sample)

    # --- the run ---------------------------------------------------------------------------------------
    def execute(self):
        workdir = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{self.run.pk}-")  # 0700, private to the worker
        # Held while the run executes; a worker starting later removes the directories whose lock is free
        # (their process is gone: SIGKILL never reaches the `finally` below).
        lock = os.open(Path(workdir) / LOCK_NAME, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return self._execute(workdir) if self.lead else self._execute_client(workdir)
        finally:
            self.remove_tls_files()
            shutil.rmtree(workdir, ignore_errors=True)
            os.close(lock)

    def _execute(self, workdir):
        run, driver = self.run, self.driver
        try:
            version = subprocess.run(driver.version_argv(), capture_output=True, text=True, timeout=10)
            tool_version = driver.parse_version(version.stdout + version.stderr)
        except NotRunnable as exc:
            run.fail(str(exc))
            return "failed"
        except (OSError, subprocess.SubprocessError) as exc:
            run.fail(f"{run.profile.tool} is not available on worker {HOST}: {exc}")
            return "failed"
        try:
            setup = self.access.tool_setup(driver, workdir)
        except Unsupported as exc:
            run.fail(str(exc))
            return "failed"
        try:
            server = self.access.server_version()
            round_trip = self.access.round_trip()
        except ConnectionFailed as exc:
            run.fail(redact(f"Cannot connect to {self.access.describe()}: {exc}", self.secrets))
            return "failed"
        run.beat(tool_version=tool_version, server_version=server, round_trip=round_trip, tls={"mode": self.access.tls.mode})
        self.add_log(f"[dashboard] round trip to {self.access.describe()}: median {round_trip['median_ms']} ms "
                     f"of {round_trip['queries']} queries")
        self.record_fingerprint(version.stdout + version.stderr)
        # Never written to disk: the runner hands each one to the tool through a pipe (runs/runner.py).
        self.secret_files = setup.pipe_files
        self.write_tls_files(setup.disk_files)
        env = setup.env
        steps = driver.plan(setup.conn, {**self.params, "workload": run.profile.workload}, workdir)
        run.beat(command_line=redact("\n".join(shlex.join(s.argv) for s in steps), self.secrets))

        summaries, reason = [], ""
        for step in [s for s in steps if s.phase != "cleanup"]:
            if self.multi and step.phase in ("run", "warmup"):
                if self.client is None:  # prepared: now the other clients may come
                    self.dispatch_clients()
                reason = self.meet(step)
                if reason or self.cancelled or self.stop_cause:
                    break
            if step.phase in ("run", "warmup") and run.state == RunState.PREPARING:
                run.mark_running()
            if step.phase in ("run", "warmup"):
                run.beat(step=step.index, step_started_at=self.agreed_start if self.multi else timezone.now())
            sampled = step.phase in ("run", "warmup")
            if sampled:
                self.start_sampling(step)
            outcome = self._run_step(step, env, workdir)
            readings = self.stop_sampling(step) if sampled else []
            if outcome.stopped == "cancelled":
                reason = self.error_stop_reason(step)
                break
            reason, summary = judge_step(driver, step, outcome, self._limit(step), self.secrets)
            if reason:
                break
            if step.phase == "run":
                if self.multi:
                    merged = self.merge_step(step, outcome, summary, readings, workdir)
                    if merged is None:  # stopped by a cancel or another client, or a report never came
                        break
                    summary, step_insight = merged
                    summaries.append({"step": step.index, "threads": self.total_threads(step), **summary})
                    self.insight_steps.append(step_insight)
                else:
                    summaries.append({"step": step.index, "threads": step.threads, **summary})
                    self.insight_steps.append(self.step_insight(step, outcome, summary, readings, workdir))
                found = insight.run_insight(self.insight_steps)  # shown as each step ends
                run.beat(insight=found, client_bound=found["client_bound"])

        if self.multi:
            if not reason and self.stop_cause and not self.cancelled:
                reason = self.stop_cause
            self.end_clients(reason)
        if not self.cancelled:
            run.mark_cleaning_up()
        cleanup = [s for s in steps if s.phase == "cleanup"]
        if not self.cancelled and self.run.cancel_is_requested():
            self.cancelled, self.cancelled_during = True, self.where()
        for step in cleanup:
            outcome = self._run_step(step, env, workdir, stoppable=False)
            if outcome.returncode != 0 and not reason and not self.cancelled:
                why = driver.failure_reason(outcome.stdout, outcome.stderr) or f"exit status {outcome.returncode}"
                reason = redact(f"cleanup failed: {why}", self.secrets)
        self.remove_tls_files()
        self.flush(force=True)
        if self.cancelled or run.cancel_is_requested():
            during = self.cancelled_during or _("cleaning up")
            run.finish_cancelled(_("Cancelled while %(where)s; the tool was stopped and its tables dropped.") % {"where": during})
            return "cancelled"
        if reason:
            run.fail(reason)
            return "failed"
        run.succeed(summarize(summaries, run.params))
        return "succeeded"

    def error_stop_reason(self, step):
        """Why a step the dashboard stopped failed: the tool's first error, if that is what stopped it."""
        if self.cancelled or not self.first_error or self.stop_cause != self.first_error:
            return ""
        return redact(f"{step.phase} failed: {self.first_error} (the tool was stopped "
                      f"{settings.RUNS_ERROR_GRACE_SECONDS:g} s after its first error)", self.secrets)

    def write_tls_files(self, files):
        """TLS material a tool reads from its work directory (sysbench's cacert.pem...; libpq's PGSSL* files):
        0600, in the run's private directory, removed after the last step (and with the directory)."""
        for path, content in files.items():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(content)
        self.disk_files = files

    def remove_tls_files(self):
        for path in self.disk_files:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def _limit(self, step):
        if step.phase in ("run", "warmup"):
            return step.duration_s + settings.RUNS_TIME_MARGIN_SECONDS
        return settings.RUNS_PREPARE_TIME_LIMIT_SECONDS

    def _run_step(self, step, env, workdir, stoppable=True):
        self.step = step
        self.step_started = time.monotonic()
        self.add_log(f"$ {redact(shlex.join(step.argv), self.secrets)}")
        self.flush(force=True)
        if self.multi and step.phase in ("run", "warmup"):
            self.wait_for_start()
        outcome = run_command(
            step.argv, env_extra=env, cwd=workdir, time_limit_s=self._limit(step), on_line=self.on_line,
            should_stop=self.should_stop if stoppable else None, on_tick=self.tick, secret_files=self.secret_files,
            on_start=self.on_tool_start,
        )
        if outcome.stopped:
            self.add_log(f"[dashboard] {step.phase} stopped ({outcome.stopped})")
        self.flush(force=True)
        return outcome

    # --- insight: evidence beside the tool (runs/sampling.py reads, runs/insight.py judges) ------------
    def tick(self):
        if self.sampler is not None and self.lead:
            self.store_server_samples()
        now = time.monotonic()
        if (self.multi and self.lead and self.step is not None and self.step.phase in ("run", "warmup")
                and now - self.last_merge >= self.run.params["report_interval_s"]):
            self.last_merge = now
            self.merge_samples()
        self.flush()

    def open_probe(self):
        return sampling.ServerProbe(self.access)

    def record_fingerprint(self, tool_version_text):
        """The client host and the server's settings, once, before the first step."""
        fields = {"client_info": sampling.client_info(tool_version_text)}
        try:
            probe = self.open_probe()
            try:
                found = probe.settings()
            finally:
                probe.close()
            fields.update(server_settings=found, server_settings_hash=sampling.settings_hash(found))
        except sampling.ProbeFailed as exc:
            self.add_log(redact(f"[dashboard] could not read the server's settings: {exc}", self.secrets))
        self.run.beat(**fields)

    def start_sampling(self, step):
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

    def stop_sampling(self, step):
        sampler, probe = self.sampler, self.sampler.probe
        # PostgreSQL backends flush their counters as they exit: read the last time a moment later.
        readings = sampler.finish(settle_s=0.5 if self.target.engine == "postgresql" else 0.0)
        if self.lead:
            self.store_server_samples()
        if probe is not None and probe.tool_tls is not None and "tool" not in self.run.tls:
            self.run.beat(tls={**self.run.tls, "tool": probe.tool_tls})
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

    def step_insight(self, step, outcome, summary, readings, workdir):
        interval = self.run.params["report_interval_s"]
        # transactions: the tool's own count (pgbench's latency may come from a sample of them)
        found = {"step": step.index, "threads": step.threads, "transactions": summary.get("transactions")}
        try:
            found["latency"] = self.driver.parse_latency(outcome.stdout, outcome.stderr, self.read_latency_log(step, workdir),
                                                         step.argv)
            tps, transactions = summary.get("tps"), summary.get("transactions")
            duration = transactions / tps if tps and transactions else step.duration_s  # the tool's own measured time
            found["server"] = insight.server_evidence(readings, self.target.engine, tps, round(duration, 4))
            found["client"] = insight.client_evidence(insight.interval_rows(readings, self.target.engine), interval)
            found["client"]["cores"] = os.cpu_count()
        except Exception as exc:  # noqa: BLE001 - evidence is extra: its failure must not fail the measured run
            log.exception("insight of run %s step %s", self.run.pk, step.index)
            self.add_log(f"[dashboard] could not summarise the evidence of step {step.index}: {exc.__class__.__name__}")
        return found


def summarize(step_summaries, params):
    """The run's summary: the tool's own final report of each step, and at the top the step with the
    highest TPS (the single step when there is no sweep)."""
    if not step_summaries:
        return {}
    best = max(step_summaries, key=lambda s: s.get("tps") or 0)
    summary = {k: v for k, v in best.items()}
    summary["prepared"] = bool(params.get("prepared", True))
    if len(step_summaries) > 1:
        summary["steps"] = step_summaries
    return summary


@shared_task(name="runs.reconcile_runs")
def reconcile_runs():
    """Periodic: every run has an owner until it is final.

    - An active run whose worker died (known dead on this host, or silent past RUNS_STALE_AFTER_SECONDS)
      is failed with the reason.
    - A queued run nobody has touched for RUNS_REQUEUE_AFTER_SECONDS (its message lost with a flushed or
      restarted broker, or never sent because the broker was down at launch) is queued again; the claim is
      idempotent, so a duplicate message is harmless.
    - A queued run on a queue no live worker consumes is failed, naming the queue, once it has waited
      RUNS_UNCLAIMED_FAIL_SECONDS.

    Returns the ids it failed."""
    from .services import enqueue

    now = timezone.now()
    failed = []
    for run in Run.objects.active():
        if worker_is_gone(run, now):
            last = run.heartbeat_at.isoformat(timespec="seconds") if run.heartbeat_at else "never"
            if fail_dead_run(run, f"The worker ({run.worker or '?'}, pid {run.worker_pid}) on {run.client_host or '?'} stopped "
                                  f"reporting while the run was {run.get_state_display()} (last heartbeat {last}); marked failed "
                                  f"by the reconciler."):
                failed.append(run.pk)

    unowned_since = now - timedelta(seconds=settings.RUNS_REQUEUE_AFTER_SECONDS)
    waiting = list(Run.objects.filter(state=RunState.QUEUED).select_related("target")
                   .filter(Q(heartbeat_at__lt=unowned_since) | Q(heartbeat_at__isnull=True, created_at__lt=unowned_since)))
    if not waiting:
        return failed
    consumed = consumed_queues()
    held = messages_held({run.target.queue for run in waiting})
    give_up = timedelta(seconds=settings.RUNS_UNCLAIMED_FAIL_SECONDS)
    for run in waiting:
        queue = run.target.queue
        if consumed is not None and queue not in consumed and now - run.created_at > give_up:
            if run.fail(f"No worker consumes queue \"{queue}\": the run was not claimed in "
                        f"{int((now - run.created_at).total_seconds())} s. Start a benchmark worker with -Q {queue}."):
                failed.append(run.pk)
            continue
        if held is not None and run.pk in held:
            continue  # its message is in the broker: a worker will take it
        # Stamp first (only if still queued and unchanged), so two reconcilers never both send it.
        stamped = Run.objects.filter(pk=run.pk, state=RunState.QUEUED, heartbeat_at=run.heartbeat_at).update(heartbeat_at=now)
        if stamped and enqueue(run):
            log.warning("run %s had no message in the broker (queue %s): queued again", run.pk, queue)
    return failed


def consumed_queues(timeout=2.0):
    """Names of the queues live workers consume (Celery's remote control), or None if unknown."""
    from config.celery import app

    try:
        replies = app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception as exc:  # noqa: BLE001 - a broker that cannot broadcast, or is down: no verdict
        log.warning("cannot ask the workers which queues they consume: %s", exc)
        return None
    return {q["name"] for queues in replies.values() for q in (queues or [])}


TASK_ID_RE = re.compile(r"^run-(\d+)-")


def messages_held(queues):
    """Run ids whose run_benchmark message is in the Redis broker (waiting in a queue, or delivered and
    not yet acknowledged), or None if the broker is not Redis or cannot be read."""
    import json

    from config.celery import app

    if not app.conf.broker_url.startswith(("redis://", "rediss://")):
        return None
    try:
        with app.connection_for_read() as conn:
            client = conn.default_channel.client
            raw = list(client.hvals("unacked"))
            for queue in queues:  # kombu keeps each priority level in its own list
                for key in [queue] + [f"{queue}\x06\x16{level}" for level in range(1, 10)]:
                    raw.extend(client.lrange(key, 0, 100_000))
    except Exception as exc:  # noqa: BLE001
        log.warning("cannot read the broker's queues: %s", exc)
        return None
    held = set()
    for item in raw:
        try:
            message = json.loads(item)
            if isinstance(message, list):  # unacked: [message, exchange, routing key]
                message = message[0]
            match = TASK_ID_RE.match(str(message.get("headers", {}).get("id", "")))
        except (ValueError, AttributeError, IndexError, TypeError):
            continue
        if match:
            held.add(int(match.group(1)))
    return held


WORKDIR_PREFIX = "perfdash-run"
LOCK_NAME = ".lock"


def remove_stale_workdirs(tmpdir=None):
    """Work directories of runs whose process is gone (its lock is free): removed. Returns their paths."""
    removed = []
    for path in Path(tmpdir or tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*-*"):
        if not path.is_dir() or not re.fullmatch(rf"{WORKDIR_PREFIX}\d+-.+", path.name):
            continue
        try:
            fd = os.open(path / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = None  # made by an older version, or between mkdtemp and the lock: only if not recent
            if time.time() - path.stat().st_mtime < 60:
                continue
        except OSError:
            continue
        try:
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live run
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
        finally:
            if fd is not None:
                os.close(fd)
    return removed


@worker_ready.connect
def _clean_up_after_dead_runs(**kwargs):
    removed = remove_stale_workdirs()
    if removed:
        log.warning("removed %d work directories of dead runs: %s", len(removed), ", ".join(removed))


@shared_task(name="runs.scheduled_run")
def scheduled_run(schedule_id):
    """Celery beat's entry for a schedule (runs/schedules.py): start an ordinary run with the schedule as
    its origin. Returns the run id, or None when the schedule is gone or disabled or the run was refused."""
    from .schedules import start_scheduled_run

    return start_scheduled_run(schedule_id)
