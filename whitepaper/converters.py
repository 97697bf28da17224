"""URL converters of the catalogue (registered in whitepaper/urls.py, used by the pages and the API)."""

from django.urls import register_converter

from .queries import from_param, to_param


class NotStatedConverter:
    """A version or family in a URL: '-' when the document names none (stored as '')."""

    regex = "[^/\x00]+"

    def to_python(self, value):
        return from_param(value)

    def to_url(self, value):
        return to_param(value)


class KeyConverter:
    """A slug or name in an API path: anything but '/' and NUL (which PostgreSQL cannot compare), so an
    unknown key reaches the view and is a JSON 404."""

    regex = "[^/\x00]+"

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


register_converter(NotStatedConverter, "stated")
register_converter(KeyConverter, "key")
