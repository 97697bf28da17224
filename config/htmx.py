"""htmx requests, the same rule for every page of every app (django-htmx sets request.htmx)."""


def wants_partial(request):
    """An htmx request for a part of the page; a history-restore request (htmx lost its snapshot of the
    page) gets the whole page, like a visit."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request
