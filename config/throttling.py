"""The API's rate limit: one count per client, shared by every server process.

DRF's throttles keep their history in the default cache, which on the embedded default (no REDIS_URL) is each
gunicorn worker's own memory: with three workers a client had three counts and X-RateLimit-Remaining jumped
about. Here the count lives in Redis where REDIS_URL is set (the cache named by API_RATE_LIMIT_CACHE; INCR: atomic);
on SQLite without Redis (the embedded default) in a SQLite file of its own (API_RATE_LIMIT_FILE,
config/rate_counter.py: one atomic statement a request); else in the database cache table (`api_rate_limit`,
created by `migrate`: whitepaper migration i37_rate_limit_cache_table), which every process shares; there two
requests at the same instant may read the same count (its incr is a read and a write).

A client is its token (authenticated with one: `authenticated` rate, API_AUTHENTICATED_RATE), else its user (a
session), else its address (`anon` rate, API_ANON_RATE): the connection's, or, when the connection comes from a
proxy named in API_TRUSTED_PROXIES, the nearest address in X-Forwarded-For that is not one of those proxies (any
client can write the header: DRF reads it from everyone, so each made-up value was a fresh quota). A window opens at the client's first request and lasts
the rate's period; X-RateLimit-Reset is the seconds left in it (config/api_headers.py writes the headers)."""

import functools
import hashlib
import ipaddress
import math
import time

from django.conf import settings
from django.core.cache import caches
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from config.rate_counter import counter

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@functools.cache
def _networks(proxies):
    return tuple(ipaddress.ip_network(p.strip(), strict=False) for p in proxies if p.strip())


def _is_proxy(address, proxies):
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in _networks(tuple(proxies)))


def client_address(request):
    """The client's address: REMOTE_ADDR, unless that is a trusted proxy (API_TRUSTED_PROXIES); then
    X-Forwarded-For read from the right, past the trusted proxies (each appends the address it saw)."""
    remote = request.META.get("REMOTE_ADDR")
    proxies = settings.API_TRUSTED_PROXIES
    if not remote or not proxies or not _is_proxy(remote, proxies):
        return remote
    for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        if hop.strip() and not _is_proxy(hop, proxies):
            return hop.strip()
    return remote


def parse_rate(rate):
    """'600/minute' -> (600, 60)."""
    count, period = rate.split("/")
    return int(count), PERIODS[period[0]]


class SharedRateThrottle(BaseThrottle):
    def __init__(self):
        self._wait = None

    def client(self, request):
        """(scope, identity) of the client: its token, its user, or its address."""
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            key = getattr(request.auth, "key", None)
            if key:  # the token itself never reaches the cache: its digest does
                return "authenticated", "token:" + hashlib.sha256(key.encode()).hexdigest()[:32]
            return "authenticated", f"user:{user.pk}"
        return "anon", f"addr:{client_address(request)}"  # None without REMOTE_ADDR (a unix socket): one client

    def allow_request(self, request, view):
        scope, identity = self.client(request)
        counted = getattr(request._request, "rate_limit_verdict", None)
        if counted is not None and scope == "anon":  # counted already (whitepaper.api.caching.AnswerMiddleware)
            allowed, self._wait = counted
            return allowed
        allowed = judge(request._request, scope, identity)
        if allowed is None:
            return True
        self._wait = request._request.rate_limit[2]
        return allowed

    @staticmethod
    def count(base, period, now):
        """(window start, requests counted in it, this one included) of the client `base`."""
        if settings.API_RATE_LIMIT_FILE:  # the embedded default: SQLite, no Redis (config/rate_counter.py)
            counted = counter(settings.API_RATE_LIMIT_FILE).hit(base, period, now)
            return counted if counted is not None else (now, 0)  # the file cannot be written: serve, uncounted
        cache = caches[settings.API_RATE_LIMIT_CACHE]
        # The window's start, set once by whichever process sees the first request; the count is keyed by it, so
        # a count of an ended window is never read again.
        cache.add(f"{base}:start", now, timeout=period)
        start = cache.get(f"{base}:start") or now
        count_key = f"{base}:{start!r}"
        cache.add(count_key, 0, timeout=period + 1)
        try:
            count = cache.incr(count_key)
        except ValueError:  # the cache is unreachable (config.cache degrades): serve, counting nothing
            count = 0
        return start, count

    def wait(self):
        return self._wait


def judge(request, scope, identity):
    """Count one request of the client (`scope`, `identity`) on the Django `request`: whether it is within the
    rate (None: the scope has no rate, nothing is counted). Sets `request.rate_limit` (limit, remaining, seconds to
    the window's end: the X-RateLimit-* headers) and `request.rate_limit_verdict` (allowed, Retry-After)."""
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope)  # read per request: a changed setting applies at once
    if not rate:
        return None
    limit, period = parse_rate(rate)
    now = time.time()
    start, count = SharedRateThrottle.count(f"api-rate:{scope}:{rate}:{identity}", period, now)
    reset = max(1, math.ceil(start + period - now))
    request.rate_limit = (limit, max(0, limit - count), reset)
    request.rate_limit_verdict = (count <= limit, reset)
    return count <= limit


def judge_anonymous(request):
    """judge() for a request without credentials (no session cookie, no Authorization header), counted by its
    address as SharedRateThrottle counts an anonymous client."""
    return judge(request, "anon", f"addr:{client_address(request)}")
