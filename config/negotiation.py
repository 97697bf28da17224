"""Content negotiation of the API (its own module: DRF imports it while loading its settings)."""

from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation


class StrictContentNegotiation(DefaultContentNegotiation):
    """An unknown `?format=` is a 400 naming the accepted formats (DRF answers 404 "Not found.")."""

    def select_renderer(self, request, renderers, format_suffix=None):
        fmt = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        if fmt and fmt not in {r.format for r in renderers}:
            accepted = ", ".join(dict.fromkeys(r.format for r in renderers))
            raise exceptions.ValidationError({"format": [f"Unknown format {fmt[:50]!r}; accepted: {accepted}."]})
        return super().select_renderer(request, renderers, format_suffix)
