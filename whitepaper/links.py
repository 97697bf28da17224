"""Links from the catalogue to another app's pages (a run's public record, "reproduce"), by the route names the
project's wiring gives them (settings.CATALOGUE_LINKS): the catalogue sits below runs and never names its routes or
settings (tests/test_import_graph.py), so it asks here. A link the wiring leaves out is None: no link is shown."""

from django.conf import settings
from django.urls import reverse


def linked(name, *args):
    """The URL of the page wired as `name`, or None when the project wires none."""
    route = settings.CATALOGUE_LINKS.get(name)
    return reverse(route, args=args) if route else None
