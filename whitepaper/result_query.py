"""What one request asks of a list of results, read from its query string once: the filters (a bound FilterSet),
the sort terms, the page (number and size) or the position a page starts from (a cursor), and what the answer
shows. The same object whatever the answer's format (a page, JSON, CSV or Parquet), so nothing downstream reads
the query string again.

Two spellings of the query string are read into it, each in one place: the explorer's, forgiving (`sort`, `page`,
`after`/`before`; an unreadable page or cursor is said on the page: explorer.explorer_query), and the API's, strict
(`ordering`, `page`, `page_size`, `pagination`, `cursor`, `fields`...; every problem a 400:
api.params.StrictQueryBackend)."""

from dataclasses import dataclass, field

from .models import PublishedResult


@dataclass
class ResultQuery:
    filterset: object  # the list's FilterSet, bound to the query string (None: a list without filters)
    terms: list = field(default_factory=list)  # sort keys ('-tps', 'vcpus'; queries.SORTS); []: document order
    page: int = 1  # the page number, from 1
    page_size: int | None = None  # rows a page; None: the list's default
    pagination: str = "page"  # "page" (numbered pages) or "cursor" (pages by position: the API's pagination=cursor)
    cursor: str | None = None  # the API's `cursor` token as given (decoded by the paginator, for `terms`)
    after: list | None = None  # keyset values (queries.keyset_fields) of the row the page follows (explorer's Next)
    before: list | None = None  # ... of the row that follows the page (the explorer's Previous)
    fields: list = field(default_factory=list)  # only these fields or columns ([]: every one)
    bom: bool = False  # a CSV starting with a UTF-8 byte order mark
    printed_cells: bool = False  # a CSV's cells as 2.x printed them (deprecated)
    page_unread: str | None = None  # a `page` that is no page number (page 1 is read instead)
    cursor_unread: bool = False  # a cursor that could not be read for `terms` (the page is read by its number)

    def matching(self):
        """The rows the filters match, unsorted; none when a filter's value is invalid."""
        return self.filterset.qs if self.filterset.is_valid() else PublishedResult.objects.none()
