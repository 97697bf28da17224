"""CSV and Parquet for the results list: the export contract of whitepaper.export (same columns as export_results)."""

from rest_framework.renderers import BaseRenderer

from ..export import PARQUET_MEDIA_TYPE


class ResultCSVRenderer(BaseRenderer):
    """Selected by ?format=csv or Accept: text/csv. The results view streams every matching row
    itself (whitepaper.export.iter_csv_lines) and answers errors in JSON, so this only passes text on."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return data.encode() if isinstance(data, str) else bytes(data)


class ResultParquetRenderer(BaseRenderer):
    """Selected by ?format=parquet or Accept: application/vnd.apache.parquet. The results view streams the
    file itself (whitepaper.export.iter_parquet_bytes) and answers errors in JSON."""

    media_type = PARQUET_MEDIA_TYPE
    format = "parquet"
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return b"" if data is None else bytes(data)
