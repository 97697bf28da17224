"""Every run has an owner until it is final. Called periodically (runs.tasks.reconcile_runs) and when a message
is redelivered (runs.tasks.run_benchmark):

- an active run whose worker died (known dead on this host, or silent past RUNS_STALE_AFTER_SECONDS) is failed
  with the reason, after its tables are dropped (runs/leftovers.py);
- a queued run nobody has touched for RUNS_REQUEUE_AFTER_SECONDS (its message lost with a flushed or restarted
  broker, or never sent because the broker was down at launch) is queued again; the claim is idempotent, so a
  duplicate message is harmless;
- a queued run on a queue no live worker consumes is failed, naming the queue, once it has waited
  RUNS_UNCLAIMED_FAIL_SECONDS.

A held run (queued in a paused campaign) is none of these: it waits for its campaign to resume."""

import logging
import os
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from . import actions
from .dispatch import consumed_queues, enqueue, messages_held
from .leftovers import fail_dead_run
from .models import Run, RunState
from .multiclient import HOST
from .workdir import remove_dead_run_workdirs

log = logging.getLogger(__name__)


def pid_alive(pid):
    """True while `pid` is a live Celery process on this host (a zombie, or a recycled pid that is no Celery
    process, does not count)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
        return b"celery" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def worker_is_gone(run, now=None):
    """True when the process that ran this run is known dead (same host) or silent for too long."""
    if run.client_host == HOST and run.worker_pid:
        if run.worker_pid == os.getpid() or not pid_alive(run.worker_pid):
            return True
    return run.heartbeat_stale(now)


def reconcile():
    """One pass over the runs that are not final. Returns the ids it failed."""
    now = timezone.now()
    failed = []
    for run in Run.objects.active():
        if worker_is_gone(run, now):
            if run.client_host == HOST:
                remove_dead_run_workdirs(run.pk)  # its work directory (a TLS client key) goes with it, on this host
            last = run.heartbeat_at.isoformat(timespec="seconds") if run.heartbeat_at else "never"
            if fail_dead_run(run, f"The worker ({run.worker or '?'}, pid {run.worker_pid}) on {run.client_host or '?'} stopped "
                                  f"reporting while the run was {run.get_state_display()} (last heartbeat {last}); marked failed "
                                  f"by the reconciler."):
                failed.append(run.pk)

    unowned_since = now - timedelta(seconds=settings.RUNS_REQUEUE_AFTER_SECONDS)
    # A held run (a paused campaign's) has no message on purpose and waits for its campaign, not for a worker.
    waiting = list(Run.objects.filter(state=RunState.QUEUED, held=False).select_related("target")
                   .filter(Q(heartbeat_at__lt=unowned_since) | Q(heartbeat_at__isnull=True, created_at__lt=unowned_since)))
    if not waiting:
        return failed
    consumed = consumed_queues()
    held = messages_held({run.target.queue for run in waiting})
    give_up = timedelta(seconds=settings.RUNS_UNCLAIMED_FAIL_SECONDS)
    for run in waiting:
        queue = run.target.queue
        if consumed is not None and queue not in consumed and now - run.created_at > give_up:
            if actions.fail(run, f"No worker consumes queue \"{queue}\": the run was not claimed in "
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
