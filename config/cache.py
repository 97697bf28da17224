"""A Redis cache that degrades instead of failing: the cache is an optimisation (pages and API answers
are rendered from PostgreSQL), so while Redis is unreachable every call behaves as a miss (reads return
the default, writes are dropped) and the site stays up, slower.

One warning when Redis goes away and one line when it is back, not a traceback per request. After a
failure the cache is skipped for `RETRY_AFTER` seconds (OPTIONS, default 5) so requests do not each
wait for a connection attempt; short socket timeouts (OPTIONS socket_connect_timeout / socket_timeout,
default 0.5 s) bound the wait when the host does not answer at all.
"""

import logging
import threading
import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


class ResilientRedisCache(RedisCache):
    def __init__(self, server, params):
        params = dict(params)
        options = dict(params.get("OPTIONS") or {})
        self.retry_after = float(options.pop("RETRY_AFTER", 5.0))
        options.setdefault("socket_connect_timeout", 0.5)
        options.setdefault("socket_timeout", 0.5)
        params["OPTIONS"] = options
        super().__init__(server, params)
        self._down_until = 0.0
        self._down = False
        self._lock = threading.Lock()

    def _call(self, name, default, *args, **kwargs):
        if self._down and time.monotonic() < self._down_until:
            return default
        try:
            result = getattr(super(), name)(*args, **kwargs)
        except (RedisError, OSError) as exc:
            with self._lock:
                self._down_until = time.monotonic() + self.retry_after
                if not self._down:
                    self._down = True
                    log.warning("cache unavailable (%s: %s): serving without the cache, retrying every %g s",
                                exc.__class__.__name__, exc, self.retry_after)
            return default
        if self._down:
            with self._lock:
                if self._down:
                    self._down = False
                    log.warning("cache available again")
        return result

    def get(self, key, default=None, version=None):
        return self._call("get", default, key, default, version)

    def get_many(self, keys, version=None):
        return self._call("get_many", {}, keys, version)

    def has_key(self, key, version=None):
        return self._call("has_key", False, key, version)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("add", False, key, value, timeout, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("set", None, key, value, timeout, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("set_many", list(data), data, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("touch", False, key, timeout, version)

    def delete(self, key, version=None):
        return self._call("delete", False, key, version)

    def delete_many(self, keys, version=None):
        return self._call("delete_many", None, keys, version)

    def incr(self, key, delta=1, version=None):
        result = self._call("incr", _MISSING, key, delta, version)
        if result is _MISSING:  # as for a missing key: the caller handles ValueError already
            raise ValueError(f"Key '{key}' not found (cache unavailable).")
        return result

    def clear(self):
        return self._call("clear", False)


_MISSING = object()
