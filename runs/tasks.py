"""Celery's entry points, and nothing else: each one finds its rows and hands over to the engine
(runs/execution.py with runs/multiclient.py), the reconciler (runs/reconciler.py) or the schedules.

run_benchmark and run_client are keyed by run id (and client index) and idempotent: the rows say what has been
done, so a redelivered or duplicated message never starts a second benchmark."""

import logging
import os

from celery import shared_task
from celery.signals import worker_process_init, worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError

from . import actions, reconciler, schedules
from .execution import Execution, reopen_database, retry_database
from .leftovers import drop_before_failing, fail_dead_run, fail_keeping_tables, record_failure
from .models import ClientState, Run, RunClient, RunState
from .multiclient import HOST, Team, coordination
from .workdir import remove_dead_run_workdirs, remove_stale_workdirs

log = logging.getLogger(__name__)


# How long a worker whose run lost the dashboard's database keeps trying to record the failure: the database may still
# refuse connections when the grace ends; the worker has nothing else to do for the run, and writes it at its first chance.
RECORD_FAILURE_SECONDS = 3600


def database_error_reason(exc):
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return f"Lost the database connection while running: {exc.__class__.__name__}: {text}"


# max_retries=None on the task: a run waiting for its target retries until it can start (retry(max_retries=None)
# alone means "the task's default", 3, after which the run was left queued for the reconciler).
@shared_task(bind=True, name="runs.run_benchmark", acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_benchmark(self, run_id):
    # A blip of the dashboard's database before the run starts is waited out too (retry_database), never a task that
    # crashed and left the run queued for the reconciler.
    run, _gone = retry_database(lambda: Run.objects.select_related("target", "profile").filter(pk=run_id).first(), run_id=run_id)
    if run is None or run.is_final:
        return "nothing to do"
    if run.state != RunState.QUEUED:
        # Redelivered after a worker died, or a duplicate message: never start the benchmark twice.
        if reconciler.worker_is_gone(run):
            remove_dead_run_workdirs(run.pk)  # whoever fails a dead run removes what it left on this host
            fail_dead_run(run, f"The worker running this run ({run.worker or '?'}, pid {run.worker_pid}) on "
                               f"{run.client_host or '?'} died while the run was {run.get_state_display()}.")
            return "failed: worker lost"
        return "already running"
    claimed, _gone = retry_database(actions.claim, run, self.request.hostname or HOST, os.getpid(), HOST, os.cpu_count(),
                                    run_id=run_id)
    if not claimed:
        retry_database(run.refresh_from_db, run_id=run_id)
        if run.state == RunState.QUEUED and run.held:  # its campaign is paused: resuming sends a new message
            return "held"
        if run.state == RunState.QUEUED:  # another run of this target is active: wait, do not share
            retry_database(run.beat, run_id=run_id)  # a worker holds its message: the reconciler leaves it alone
            raise self.retry(countdown=settings.RUNS_WAIT_RETRY_SECONDS, max_retries=None)
        return "not claimed"
    execution = None
    try:
        execution = Execution(run, coordination(run))
        return execution.execute()
    except (OperationalError, InterfaceError) as exc:
        # The database was gone longer than RUNS_DATABASE_GRACE_SECONDS: the tool is already stopped (the runner
        # kills it on the way out). The worker records why, with the database's own error, as soon as the database
        # takes a write again (it may still refuse connections now): never a crashed task that leaves the run
        # "running" until the reconciler calls the living worker dead. The target answers: its tables are dropped.
        log.warning("run %s: %s", run_id, database_error_reason(exc))
        reopen_database()
        failure = (drop_before_failing(run, database_error_reason(exc)) if execution is not None and execution.tables_may_remain
                   else (database_error_reason(exc), {}, []))
        retry_database(record_failure, run, *failure, grace=RECORD_FAILURE_SECONDS, run_id=run_id)
        return "failed: database connection lost"
    except Exception as exc:  # noqa: BLE001 - any bug must end the run failed, never 'running' forever
        log.exception("run %s crashed", run_id)
        reopen_database()
        # Recorded across a blip of the dashboard's database too: a failure written on a connection that a blip ends
        # would leave the run in its phase for good, its task gone.
        retry_database(_fail_after, run, execution, f"Internal error in the worker: {exc.__class__.__name__}: {exc}",
                       grace=RECORD_FAILURE_SECONDS, run_id=run_id)
        raise


def _fail_after(run, execution, reason):
    """Fail a run its engine could not end; once a tool step had begun and no cleanup ended it, its tables are named
    on the run for "drop them" (the cleanup never ran)."""
    if execution is not None and execution.tables_may_remain:
        fail_keeping_tables(run, reason, "the run ended before its cleanup")
    else:
        actions.fail(run, reason)


@shared_task(bind=True, name="runs.run_client", acks_late=True, reject_on_worker_lost=True)
def run_client(self, run_id, index):
    """Client `index` (2..N) of a multi-client run (runs/clients.py): claims its row, then runs its share of
    the threads at each step's agreed start. Idempotent like run_benchmark: the row says what was done."""
    client = RunClient.objects.select_related("run__target", "run__profile").filter(run_id=run_id, index=index).first()
    if client is None or client.is_final or client.run.is_final:
        return "nothing to do"
    claimed = actions.client_arrive(client, host=HOST, cores=os.cpu_count(), worker=self.request.hostname or HOST,
                                    worker_pid=os.getpid())
    if not claimed:  # redelivered after its worker died, or a duplicate
        if client.lost() or (client.host == HOST and client.worker_pid and not reconciler.pid_alive(client.worker_pid)):
            actions.client_end(client, ClientState.FAILED, f"Its worker ({client.worker}, pid {client.worker_pid}) died.")
            return "failed: worker lost"
        return "already running"
    client.refresh_from_db()
    execution = Execution(client.run, Team(client.run, client))
    try:
        return execution.execute()
    except Exception as exc:  # noqa: BLE001 - any bug must end the client failed, which stops the run
        log.exception("run %s client %s crashed", run_id, index)
        reopen_database()
        actions.client_end(client, ClientState.FAILED, f"Internal error in the worker: {exc.__class__.__name__}: {exc}")
        raise


@shared_task(name="runs.reconcile_runs")
def reconcile_runs():
    """Periodic: runs/reconciler.py. Returns the ids it failed."""
    return reconciler.reconcile()


@worker_ready.connect
@worker_process_init.connect
def _clean_up_after_dead_runs(**kwargs):
    """At the worker's start, and at each pool process's: a pool process killed mid-run (kill -9, the OOM killer) is
    replaced at once, and its replacement removes the dead run's work directory (a decrypted TLS client key with it)."""
    removed = remove_stale_workdirs()
    if removed:
        log.warning("removed %d work directories of dead runs: %s", len(removed), ", ".join(removed))


@shared_task(name="runs.scheduled_run")
def scheduled_run(schedule_id):
    """Celery beat's entry for a schedule (runs/schedules.py): start an ordinary run with the schedule as
    its origin. Returns the run id, or None when the schedule is gone or disabled or the run was refused."""
    return schedules.start_scheduled_run(schedule_id)
