"""Celery tasks of the catalogue app: webhook deliveries (whitepaper/webhooks.py holds the rules)."""

from celery import shared_task

from . import webhooks


@shared_task(bind=True, name=webhooks.TASK, acks_late=True, max_retries=None)
def deliver_webhook(self, delivery_id):
    """One attempt; a failed one is retried after the backoff the rules say (a new message, countdown)."""
    delay = webhooks.attempt(delivery_id)
    if delay is not None:
        raise self.retry(countdown=delay)
