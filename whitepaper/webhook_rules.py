"""The rules of webhooks that need no database: the events, which receiver URLs are allowed, how a payload is
signed (and so how a receiver verifies it), and the retry schedule. whitepaper/webhooks.py sends; the models
validate with these."""

import hashlib
import hmac
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

# The events, as the issue names them: a document (or a new edition of one) imported or changed by an import, a
# benchmark run ended (succeeded, failed or cancelled), a run published to the catalogue, a run (or repeat group)
# judged a regression against its series (runs/history.py).
EVENTS = ("document.imported", "run.finished", "run.published", "regression.found")
SIGNATURE_HEADER = "X-Perfdash-Signature"  # "sha256=" + hex HMAC-SHA256 of the raw body, key: the hook's secret
EVENT_HEADER = "X-Perfdash-Event"
DELIVERY_HEADER = "X-Perfdash-Delivery"  # the delivery's id: the same on every attempt (a receiver may dedupe)


def sign(secret, body):
    """The signature header's value for `body` (bytes)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret, body, header):
    """What a receiver does: recompute and compare in constant time."""
    return hmac.compare_digest(sign(secret, body), header or "")


def check_events(events):
    if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
        raise ValidationError(_("Give a list of one or more events: %(events)s.") % {"events": ", ".join(EVENTS)})
    unknown = [e for e in events if e not in EVENTS]
    if unknown:
        raise ValidationError(_("Unknown event %(unknown)s; choose from %(events)s.") % {
            "unknown": ", ".join(map(repr, unknown)), "events": ", ".join(EVENTS)})


def check_url(url):
    """http or https; a host; no user name or password, no fragment; the host not a private, loopback,
    link-local, multicast or reserved address (nor a name resolving to one) unless
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES. Checked when saved and again before every attempt."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValidationError(_("Not a URL: %(error)s.") % {"error": exc}) from None
    if parts.scheme not in ("http", "https"):
        raise ValidationError(_("Only http:// and https:// URLs are allowed."))
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValidationError(_("No user name or password in the URL: the payload's signature authenticates it."))
    if not parts.hostname:
        raise ValidationError(_("The URL names no host."))
    if parts.fragment:
        raise ValidationError(_("No #fragment in the URL."))
    if not settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES:
        for address in _addresses(parts.hostname, port or (443 if parts.scheme == "https" else 80)):
            if not address.is_global or address.is_multicast:
                raise ValidationError(_("%(host)s is a private or reserved address (%(address)s); set "
                                        "WEBHOOK_ALLOW_PRIVATE_ADDRESSES to allow it.") % {
                                            "host": parts.hostname, "address": address})


def _addresses(host, port):
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise ValidationError(_("%(host)s does not resolve (%(error)s).") % {"host": host, "error": exc.strerror or exc}) from None
    return [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]


def retry_delay(attempt):
    """Seconds before attempt `attempt` + 1 (exponential: base, 2 x base, 4 x base...), capped."""
    return min(settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** (attempt - 1), settings.WEBHOOK_RETRY_MAX_SECONDS)
