"""Logging filters: an outage is one clear line, not a traceback every few seconds."""

import logging
import time

from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

CONNECTION_ERRORS = (OperationalError, RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError)


def connection_error(exc):
    """The connection error in exc's chain (beat wraps it in a SchedulingError), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, CONNECTION_ERRORS):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


class BrokerOutage(logging.Filter):
    """Celery beat logs a stack trace each time it cannot send a scheduled task (the reconciler, every
    RUNS_RECONCILE_EVERY_SECONDS while the broker is down). Keep one warning line, at most once a minute;
    any other record passes unchanged."""

    def __init__(self, name="", every_s=60.0):
        super().__init__(name)
        self.every_s = every_s
        self.last = None

    def filter(self, record):
        exc = connection_error(record.exc_info[1] if record.exc_info else None)
        if exc is None:
            return True
        now = time.monotonic()
        if self.last is not None and now - self.last < self.every_s:
            return False
        self.last = now
        record.msg = "broker unreachable (%s: %s): scheduled tasks are not sent until it is back (repeats at most once a minute)"
        record.args = (exc.__class__.__name__, exc)
        record.exc_info = record.exc_text = record.stack_info = None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
