"""A position in a sorted list of results, as a signed token (a cursor): the values of the row's keyset fields
(queries.keyset_fields) for the sort terms it was made for. One rule for the API's `pagination=cursor` (its
`next`) and the explorer's Next/Previous links (`after=` / `before=`); the rows after or before it are
`PublishedResultQuerySet.page_after` / `page_before`.

Only the server makes cursors, so a forged or edited one is refused before its values reach a query (a date
such as 2023-02-30, or text where a number sorts)."""

import datetime
import zlib
from decimal import Decimal

from django.core import signing

from .queries import field_value, keyset_fields

CURSOR_SALT = "perfdash.api.results.cursor"


def _plain(value):
    if isinstance(value, (datetime.date, Decimal)):
        return str(value)
    return value


def encode(terms, row):
    """The cursor of `row` in a list sorted by `terms` (sort keys; [] for document order)."""
    values = [field_value(row, path) for path, _descending in keyset_fields(terms)]
    return signing.dumps({"o": list(terms), "v": [_plain(v) for v in values]}, salt=CURSOR_SALT, compress=True)


def decode(token, terms):
    """The keyset values a cursor carries, or None if it is not a cursor made by this server for `terms`
    (malformed, tampered with, or made for another ordering)."""
    try:
        data = signing.loads(token, salt=CURSOR_SALT)
        values = data["v"]
        ok = isinstance(values, list) and len(values) == len(keyset_fields(terms)) and data["o"] == list(terms) and all(
            v is None or isinstance(v, (str, int)) and not isinstance(v, bool) for v in values)
    except (signing.BadSignature, ValueError, TypeError, KeyError, UnicodeDecodeError, zlib.error):
        ok = False
    return values if ok else None
