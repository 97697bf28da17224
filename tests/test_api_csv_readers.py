"""Issue 52.10: the results CSV as analysts read it, with NO reader options: `pandas.read_csv(path)`,
`polars.read_csv(path)`, DuckDB's `SELECT * FROM read_csv('path')` (all three pinned in requirements-dev.txt). The CSV
is fetched over HTTP (the session's live server on PostgreSQL; the embedded SQLite default through Django's client),
every column's type is checked against the Parquet file of the same query (its schema, fetched the same way) and every
cell against the Parquet's value.

Before (API 2.x, now `printed_cells=true`, deprecated): polars failed on the full CSV ("could not parse 172.88 as
i64": the first 100 rows hold whole-number TPS), and a filtered CSV's `version` was a number in all three readers
(PostgreSQL 10 read as 10 or 10.0; MySQL 8.0 as 8.0, the same as 8).

What a CSV cannot say, each reader decides by its own rules, and the test holds it to them (docs/api.md, "CSV"):
- a column with no value in the answer (the internal measurements' columns in a vendor-only CSV) has no type to read:
  pandas float64 (all NaN), polars and DuckDB text, all null;
- pandas has no missing integer or boolean without options: an integer column with an empty cell is float64 (the
  values whole and exact), a boolean one object (True/False/NaN); it parses no date (`published` is text), nor does
  polars (try_parse_dates is off by default); DuckDB types it DATE;
- polars types a column from its first 100 rows (infer_schema_length): a column empty there is text.
"""

import csv
import datetime
import io
import math
import urllib.request
from decimal import Decimal

import duckdb
import pandas
import polars
import pyarrow as pa
import pyarrow.parquet as pq
import pytest


API = "/api/v1"
ENGINE_NAMES = {"mysql": "MySQL", "postgresql": "PostgreSQL", "ppas": "PPAS", "sqlserver": "SQL Server"}

# The full set, one engine each (every version a number in 2.x: PostgreSQL 9.6..15, PPAS 10, MySQL 8.0 alone, SQL
# Server 2014 alone), a memory ratio (1:4, a time to no reader), and a choice of columns.
QUERIES = ["", "engine=postgresql", "engine=ppas", "engine=mysql&version=8.0", "engine=sqlserver&version=2014",
           "engine=postgresql&version=10", "memory_ratio=1:4&engine=mysql", "fields=version,tps,id,published"]


def fetch(base, path):
    with urllib.request.urlopen(base + path, timeout=120) as response:
        assert response.status == 200, path
        return response.read()


# --- What each reader may make of a Parquet column's type, with no options -------------------------------------

def expected_type(reader, arrow_type, has_null):
    """The one type `reader` must give a column of the Parquet file's `arrow_type` (a column with a value)."""
    if pa.types.is_decimal(arrow_type) or arrow_type == pa.float64():
        return {"pandas": "float64", "polars": "Float64", "duckdb": "DOUBLE"}[reader]
    if arrow_type == pa.int64():
        return {"pandas": "float64" if has_null else "int64", "polars": "Int64", "duckdb": "BIGINT"}[reader]
    if arrow_type == pa.bool_():
        return {"pandas": "object" if has_null else "bool", "polars": "Boolean", "duckdb": "BOOLEAN"}[reader]
    if arrow_type == pa.date32():
        return {"pandas": "str", "polars": "String", "duckdb": "DATE"}[reader]
    assert arrow_type == pa.string(), arrow_type
    return {"pandas": "str", "polars": "String", "duckdb": "VARCHAR"}[reader]


NO_VALUE_TYPE = {"pandas": "float64", "polars": "String", "duckdb": "VARCHAR"}  # a column with no value at all


def read(reader, path):
    """{column: (type name, [values, None for a missing one])} as `reader` reads the CSV at `path`, no options."""
    if reader == "pandas":
        frame = pandas.read_csv(path)
        return {name: (str(frame[name].dtype), [None if _missing(v) else v for v in frame[name].tolist()])
                for name in frame.columns}
    if reader == "polars":
        frame = polars.read_csv(path)
        return {name: (str(frame.schema[name]), frame[name].to_list()) for name in frame.columns}
    relation = duckdb.connect().sql(f"SELECT * FROM read_csv('{path}')")
    rows = relation.fetchall()
    return {name: (str(kind), [row[i] for row in rows]) for i, (name, kind) in enumerate(zip(relation.columns,
                                                                                              relation.types))}


def _missing(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


def same(read_value, parquet_value, name, engine):
    """Whether a reader's value is the Parquet file's for that cell (a number to the same float, a date as its ISO
    text where the reader keeps text, `version` with its engine's name)."""
    if parquet_value is None:
        return read_value is None
    if name == "version":
        return read_value == f"{ENGINE_NAMES[engine]} {parquet_value}" if engine else read_value.endswith(f" {parquet_value}")
    if isinstance(parquet_value, bool):
        return read_value is parquet_value
    if isinstance(parquet_value, (Decimal, float, int)):
        return not isinstance(read_value, (str, bool)) and float(read_value) == float(parquet_value)
    if isinstance(parquet_value, datetime.date):
        return read_value in (parquet_value, parquet_value.isoformat())
    return read_value == parquet_value


def check_readers(csv_bytes, parquet_bytes, tmp_path, label):
    """Each reader, no options: every column's type against the Parquet schema, every cell against its value."""
    path = tmp_path / f"{abs(hash(label))}.csv"
    path.write_bytes(csv_bytes)
    schema = pq.read_schema(io.BytesIO(parquet_bytes))
    parquet = polars.read_parquet(io.BytesIO(parquet_bytes)).to_dicts()
    header = csv_bytes.decode().splitlines()[0].split(",")
    assert header == schema.names, label
    text_rows = list(csv.DictReader(io.StringIO(csv_bytes.decode())))
    assert len(text_rows) == len(parquet) > 0, label
    engines = [r.get("engine") for r in text_rows]
    wrong = {}
    for reader in ("pandas", "polars", "duckdb"):
        columns = read(reader, path)
        assert list(columns) == schema.names, (label, reader)
        for field in schema:
            kind, values = columns[field.name]
            column = [r[field.name] for r in parquet]
            if all(v is None for v in column):
                want = NO_VALUE_TYPE[reader]
            elif reader == "polars" and all(v is None for v in column[:100]):
                want = "String"  # polars types from the first 100 rows (its documented default)
            else:
                want = expected_type(reader, field.type, any(v is None for v in column))
            if kind != want:
                wrong[(reader, field.name)] = (kind, want, str(field.type))
                continue
            if want == "String" and field.type != pa.string() and field.type != pa.date32():
                continue  # polars' text for a column empty in its first 100 rows: the cells as written
            bad = [(v, p) for v, p, engine in zip(values, column, engines)
                   if not same(None if _missing(v) else v, p, field.name, engine)]
            if bad:
                wrong[(reader, field.name, "values")] = bad[:3]
    assert not wrong, (label, wrong)
    return {field.name for field in schema if any(r[field.name] is not None for r in parquet)}


@pytest.mark.django_db
@pytest.mark.parametrize("query", QUERIES)
def test_every_reader_types_the_csv_as_the_parquet_with_no_options(catalogue_server, tmp_path, query):
    csv_bytes = fetch(catalogue_server, f"{API}/results/csv/?{query}")
    parquet_bytes = fetch(catalogue_server, f"{API}/results/parquet/?{query}")
    typed = check_readers(csv_bytes, parquet_bytes, tmp_path, query)
    if not query:  # the columns a vendor's row fills, each typed (the internal ones: the next test)
        assert {"tps", "qps", "tpm", "ro_qps", "rw_qps", "version", "published", "vcpus", "hot_rows",
                "tps_per_core", "qps_normalised"} <= typed
    versions = {r["version"] for r in csv.DictReader(io.StringIO(csv_bytes.decode()))} if "version" in (
        csv_bytes.decode().splitlines()[0]) else set()
    if query == "engine=postgresql&version=10":
        assert versions == {"PostgreSQL 10"}  # was 10 (pandas, polars: int; DuckDB BIGINT)


@pytest.mark.django_db
def test_the_deprecated_printed_cells_are_what_failed(client, tmp_path):
    """The cells of API 2.x, kept until the Sunset with `printed_cells=true` (and its headers): still the numbers as
    printed and the bare version, so still what the readers got wrong."""
    response = client.get(f"{API}/results/csv/?engine=postgresql&version=10&printed_cells=true")
    printed = b"".join(response.streaming_content)
    assert response["Deprecation"].startswith("@") and response["Sunset"].endswith("GMT")
    path = tmp_path / "printed.csv"
    path.write_bytes(printed)
    assert str(pandas.read_csv(path)["version"].dtype) == "int64"
    assert polars.read_csv(path).schema["version"] == polars.Int64
    with pytest.raises(polars.exceptions.ComputeError, match="172.88"):
        polars.read_csv(io.BytesIO(b"".join(client.get(f"{API}/results/csv/?printed_cells=true").streaming_content)))
    typed = client.get(f"{API}/results/csv/?engine=postgresql&version=10")
    assert "Deprecation" not in typed and "Sunset" not in typed
    # The policy's other marks: the schema says so, and the parameter means nothing outside the CSV (a 400 there).
    schema = client.get(f"{API}/schema/?format=json").json()
    for path in (f"{API}/results/", f"{API}/results/csv/"):
        params = {p["name"]: p for p in schema["paths"][path]["get"]["parameters"]}
        assert params["printed_cells"]["deprecated"] is True, path
    for path in (f"{API}/results/?printed_cells=true", f"{API}/results/parquet/?printed_cells=true"):
        refused = client.get(path)
        assert refused.status_code == 400 and list(refused.json()["errors"]) == ["printed_cells"], path
        assert "Deprecation" in refused  # every use of the deprecated parameter is marked, whatever the answer


@pytest.mark.django_db(transaction=True)
def test_internal_measurements_columns_are_typed_too(live_server, client, staff_user, profiles, tmp_path):
    """The columns only this dashboard's published runs fill (interval, client-bound, repeats, sustained rate and its
    bound), read with no options from a CSV of internal rows."""
    from runs.models import RepeatGroup, Run, RunState

    from .test_runs_trust import make_target
    from .test_sizing_latency import capacity_run, step

    quick = profiles["pgbench-ro-quick"]
    target = make_target("pg-readers", "postgresql", vcpus=4, memory_gb=16)
    group = RepeatGroup.objects.create(count=3)
    runs = [Run.objects.create(target=target, profile=quick, params=quick.resolve({}), state=RunState.SUCCEEDED,
                               repeat_group=group, repeat_index=i, server_version="15.10", tool_version="15.10",
                               client_bound=bound,
                               summary={"tps": tps, "threads": 2, "tps_ci": {"low": tps - 7.25, "high": tps + 7.25}})
            for i, (tps, bound) in enumerate(((300.0, True), (330.0, False), (360.0, None)), start=1)]
    capacity = capacity_run(profiles, target, [step(1000, True), step(2000, False)])
    client.force_login(staff_user)
    for run in (runs[0], runs[1], capacity):
        assert client.post(f"/runs/{run.pk}/publish/").status_code == 302
    query = "include_internal=true&vendor=internal"
    csv_bytes = fetch(live_server.url, f"{API}/results/csv/?{query}")
    typed = check_readers(csv_bytes, fetch(live_server.url, f"{API}/results/parquet/?{query}"), tmp_path, query)
    assert {"tps_ci_low", "tps_ci_high", "client_bound", "repeats_n", "repeats_stdev", "sustained_tps",
            "latency_bound_ms", "run"} <= typed, typed


def test_the_embedded_sqlite_default_writes_the_same_typed_cells(embedded_sqlite, catalogue_server):
    """The embedded default (SQLite) answers the same typed cells: each reader types them alike."""
    answers = embedded_sqlite.ask([("anonymous", "get", f"{API}/results/csv/?{query}") for query in QUERIES])
    for query, (status, text) in zip(QUERIES, answers):
        assert status == 200 and text.encode() == fetch(catalogue_server, f"{API}/results/csv/?{query}"), query
