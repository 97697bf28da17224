"""The broker's side of runs: sending a run's (or a client's) message, and asking the broker and the workers
what they hold and consume. Tasks are named, not imported (runs/tasks.py is the top of the engine: it imports
this module's users, never the other way round).

The Run row is the source of truth, a message only a wake-up call: a message that cannot be sent is logged and
the reconciler (runs/reconciler.py) sends it again, exactly as for one lost with a flushed broker."""

import json
import logging
import re
import uuid

from celery import current_app
from django.conf import settings
from django.core.cache import cache

from .params import step_count

log = logging.getLogger(__name__)

RUN_TASK = "runs.run_benchmark"
CLIENT_TASK = "runs.run_client"
TASK_ID_RE = re.compile(r"^run-(\d+)-")


def time_limit_for(run):
    """Celery's hard limit for a run's task: every step's time with its margin, prepare and cleanup, a minute."""
    margin = settings.RUNS_TIME_MARGIN_SECONDS
    return run.expected_seconds + step_count(run.params) * margin + 2 * settings.RUNS_PREPARE_TIME_LIMIT_SECONDS + 60


def task_id_for(run):
    """run-<id>-<random>: the reconciler recognises a run's messages in the broker by this prefix."""
    return f"run-{run.pk}-{uuid.uuid4().hex[:12]}"


def enqueue(run):
    """Send the run's message; True if the broker took it. A broker outage is not the caller's failure:
    it is logged (one line, no traceback) and the reconciler queues the run again later."""
    try:
        current_app.signature(RUN_TASK, args=[run.pk]).apply_async(
            queue=run.target.queue, time_limit=time_limit_for(run), task_id=task_id_for(run))
    except Exception as exc:  # noqa: BLE001 - kombu OperationalError, redis errors, a full disk (filesystem broker)
        log.warning("run %s: the broker is unreachable (%s: %s); it stays queued and the reconciler will queue it "
                    "again within %s s", run.pk, exc.__class__.__name__, exc, settings.RUNS_REQUEUE_AFTER_SECONDS)
        return False
    return True


def enqueue_client(run, index):
    """Send client `index`'s message of a multi-client run to the target's pool queue (runs/clients.py)."""
    current_app.signature(CLIENT_TASK, args=[run.pk, index]).apply_async(
        queue=run.target.queue, time_limit=time_limit_for(run), task_id=f"client-{run.pk}-{index}-{uuid.uuid4().hex[:8]}")


def active_queues(timeout):
    """{worker: [queue, ...]} from Celery's remote control, or None when it cannot be asked (the filesystem
    broker has no broadcast; a broker that is down gives no verdict)."""
    try:
        replies = current_app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception as exc:  # noqa: BLE001
        log.warning("cannot ask the workers which queues they consume: %s", exc)
        return None
    return {worker: [q.get("name") for q in queues or []] for worker, queues in replies.items()}


def consumed_queues(timeout=2.0):
    """Names of the queues live workers consume, or None if unknown."""
    replies = active_queues(timeout)
    return None if replies is None else {name for names in replies.values() for name in names}


CONSUMED_CACHE_SECONDS = 10  # asking the workers takes a second; which queues they consume changes rarely
CONSUMED_CACHE_KEY = "runs:consumed-queues"


def unconsumed(queues):
    """The queues among `queues` that no live worker consumes now: a queued run there will not be taken, and no other
    run waits behind it (Run.takeable_ahead). Empty when it cannot be told (the filesystem broker, a broker down): then
    every queued run counts, as the reconciler fails the ones nobody takes. Kept in the cache for a few seconds."""
    queues = set(queues)
    if not queues:
        return set()
    consumed = cache.get(CONSUMED_CACHE_KEY)
    if consumed is None:
        consumed = consumed_queues(timeout=1.0)
        if consumed is None:
            return set()
        cache.set(CONSUMED_CACHE_KEY, sorted(consumed), CONSUMED_CACHE_SECONDS)
    return queues - set(consumed)


def workers_consuming(queue, timeout=1.0):
    """How many live workers consume `queue` now, or None when it cannot be asked: each client host of a run
    needs one."""
    replies = active_queues(timeout)
    return None if replies is None else sum(1 for names in replies.values() if queue in names)


def messages_held(queues):
    """Run ids whose run message is in the Redis broker (waiting in a queue, or delivered and not yet
    acknowledged), or None if the broker is not Redis or cannot be read."""
    if not current_app.conf.broker_url.startswith(("redis://", "rediss://")):
        return None
    try:
        with current_app.connection_for_read() as conn:
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
