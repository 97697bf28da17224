"""Webhooks: `emit(event, data)` logs a delivery for every active hook registered for the event and, once the
caller's transaction commits, queues the Celery task `whitepaper.deliver_webhook` (whitepaper/tasks.py), which calls
`attempt`. An attempt POSTs the JSON payload with its HMAC-SHA256 signature (webhook_rules.sign); any answer but 2xx
(a redirect too: never followed), a time-out or a refused connection fails it, and the task retries it after
webhook_rules.retry_delay (exponential backoff) up to WEBHOOK_MAX_ATTEMPTS in all; then the delivery has failed.
WEBHOOK_DISABLE_AFTER_FAILURES failed deliveries in a row disable the hook, with the reason (its deliveries still
pending then end as failed, unsent); a delivered one resets the count.

Emitted by whitepaper/importer.py (document.imported), runs/actions.py (run.finished, regression.found) and
runs/publish.py (run.published)."""

import json
import logging
import urllib.error
import urllib.request
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from celery import current_app

from . import webhook_rules
from .models import Webhook, WebhookDelivery

TASK = "whitepaper.deliver_webhook"
MAX_ERROR_CHARS = 500
DISABLED = "The webhook was disabled: not sent (redeliver it from the admin once the hook is active)."
USER_AGENT = "perfdash-webhooks/1"
log = logging.getLogger(__name__)


def absolute(path):
    """`path` on the site's public address (settings.SITE_URL), or the path alone when none is set."""
    return f"{settings.SITE_URL}{path}"


def emit(event, data):
    """Log one delivery per active hook registered for `event` and queue each after the commit. `data`: the
    payload's data, or a function making it (called only when some hook wants the event). Returns the deliveries.
    Never fails its caller (an import, a run's end, a publish): an error is logged, in a savepoint of its own."""
    if event not in webhook_rules.EVENTS:
        raise ValueError(f"unknown webhook event {event!r}")
    try:
        with transaction.atomic():
            return _emit(event, data)
    except Exception:  # noqa: BLE001 - the news is extra: what happened stands without it
        log.exception("could not log the %s webhook deliveries", event)
        return []


def _emit(event, data):
    # Filtered here, not by a JSON lookup: `contains` on a JSON list is not in every backend (SQLite); hooks are few.
    # A disabled hook's delivery is logged too, as undelivered: staff see what it missed and may redeliver it.
    hooks = [hook for hook in Webhook.objects.all() if event in hook.events]
    if hooks and callable(data):
        data = data()
    deliveries = []
    for hook in hooks:
        payload = {"id": str(uuid.uuid4()), "event": event, "created": timezone.now().isoformat(), "data": data}
        delivery = WebhookDelivery.objects.create(
            webhook=hook, event=event, payload=payload,
            **({} if hook.active else {"status": WebhookDelivery.Status.UNDELIVERED, "last_error": DISABLED}))
        if hook.active:
            deliveries.append(delivery)
    queue(deliveries)
    return deliveries


def queue(deliveries):
    """Send each delivery to the worker after the commit."""
    for delivery in deliveries:
        # robust: a broker that is down then fails no import or run (the delivery stays pending, in the log)
        transaction.on_commit(lambda pk=delivery.pk: current_app.send_task(TASK, args=[pk]), robust=True)


def redeliver(deliveries):
    """Send undelivered or failed deliveries again, from a first attempt (the same payload, id and signature):
    those of active hooks. Returns how many were queued."""
    again = [d for d in deliveries if d.webhook.active and d.status in (WebhookDelivery.Status.UNDELIVERED,
                                                                         WebhookDelivery.Status.FAILED)]
    WebhookDelivery.objects.filter(pk__in=[d.pk for d in again]).update(
        status=WebhookDelivery.Status.PENDING, attempts=0, last_error="", last_status_code=None)
    queue(again)
    return len(again)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # a 3xx is the receiver's answer, never followed (it could point anywhere)


def _opener():
    """No redirects, and no proxy but WEBHOOK_PROXY: urllib's default reads http_proxy/https_proxy from the
    worker's environment, which would send the signed body to a host the receiver URL check never saw."""
    proxy = settings.WEBHOOK_PROXY
    return urllib.request.build_opener(_NoRedirects, urllib.request.ProxyHandler(
        {"http": proxy, "https": proxy} if proxy else {}))


def body_of(delivery):
    """The bytes sent (and signed): the payload as compact JSON, keys sorted."""
    return json.dumps(delivery.payload, sort_keys=True, separators=(",", ":")).encode()


def attempt(delivery_id):
    """One attempt at a pending delivery. Returns the seconds to wait before the next attempt, or None when
    there is none (delivered, out of attempts, the hook disabled or gone)."""
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
        return None
    hook = delivery.webhook
    if not hook.active:
        return _close(delivery, WebhookDelivery.Status.UNDELIVERED, DISABLED)
    code, error = _post(hook, delivery)
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(attempts=F("attempts") + 1, last_attempt_at=now,
                                                          last_status_code=code, last_error=error[:MAX_ERROR_CHARS])
    delivery.refresh_from_db()
    if not error:
        Webhook.objects.filter(pk=hook.pk).update(consecutive_failures=0)
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status=WebhookDelivery.Status.SUCCEEDED, delivered_at=now)
        return None
    if delivery.attempts < settings.WEBHOOK_MAX_ATTEMPTS:
        return webhook_rules.retry_delay(delivery.attempts)
    # Out of attempts: the delivery failed, one more in a row for the hook.
    _close(delivery, WebhookDelivery.Status.FAILED, error)
    Webhook.objects.filter(pk=hook.pk).update(consecutive_failures=F("consecutive_failures") + 1)
    hook.refresh_from_db(fields=["consecutive_failures"])
    if hook.consecutive_failures >= settings.WEBHOOK_DISABLE_AFTER_FAILURES:
        reason = (f"Disabled after {hook.consecutive_failures} failed deliveries in a row ({delivery.attempts} attempts "
                  f"each); the last: {error}")[:MAX_ERROR_CHARS]
        Webhook.objects.filter(pk=hook.pk, active=True).update(active=False, disabled_reason=reason, disabled_at=now)
    return None


def _close(delivery, status, error):
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=status, last_error=error[:MAX_ERROR_CHARS])
    return None


def _post(hook, delivery):
    """(HTTP status or None, '' on success or what went wrong)."""
    try:
        webhook_rules.check_url(hook.url)  # again: a name may resolve elsewhere now
    except ValidationError as exc:
        return None, " ".join(exc.messages)
    body = body_of(delivery)
    request = urllib.request.Request(hook.url, data=body, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": USER_AGENT,
        webhook_rules.SIGNATURE_HEADER: webhook_rules.sign(hook.secret, body),
        webhook_rules.EVENT_HEADER: delivery.event, webhook_rules.DELIVERY_HEADER: str(delivery.pk)})
    try:
        with _opener().open(request, timeout=settings.WEBHOOK_TIMEOUT_SECONDS) as response:
            return response.status, ""
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code, f"HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError) as exc:
        return None, f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
