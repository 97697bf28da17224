"""Issue 37.7: the results as Parquet (`/api/v1/results/?format=parquet`, `/api/v1/results/parquet/`), the CSV's rows
and columns in its order, typed: pandas, polars and DuckDB (pinned in requirements-dev.txt) read it with no options and
get integers, exact decimals, text versions and nulls where the document gives nothing. The numbers checked are the
documents' (the seed texts under $SEEDS_DIR), not the code's. Before, polars failed on the full CSV ("could not parse
172.88 as i64") and DuckDB and pandas read `version` 10 as 10.0."""

import csv
import datetime
import io
from decimal import Decimal

import duckdb
import pandas
import polars
import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

API = "/api/v1"
PARQUET = "application/vnd.apache.parquet"
ENGINE_NAMES = {"MySQL", "PostgreSQL", "PPAS", "SQL Server"}

# Rows read by hand in the seed texts (each (document, flavour or vCPUs/memory, filter) names one row):
# - 002_07b8f7746549967a.txt:193, huawei-2018-12-11-rds, 表 1-1 标准型 (MySQL 5.6): "c3.medium.4 1 4 1500 1400 494 9880";
# - 000_7d2c2a51a53e302e.txt:784, huawei-2023-08-03-rds, 表 2-4 CPU:内存=1:2 (PostgreSQL 12, general): "1 2 172.88 3457.69
#   请参见 关于 IOPS" (IOPS depends on the disk, no number; no connections column);
# - 001_902b70d2a9ac6bc3.txt:531, alibaba-2019-06-18-rds, 2.3 PPAS版 (PPAS 10): "rds.ppas.st.h43 60核470G3T 150亿 50亿 1亿
#   672072 307560" (no TPS).
HUAWEI_2018 = {"document": "huawei-2018-12-11-rds", "flavor": "c3.medium.4", "engine": "mysql", "version": "5.6",
               "vcpus": 1, "memory_gb": 4, "max_connections": 1500, "iops": 1400, "tps": Decimal("494"),
               "qps": Decimal("9880"), "tpm": None, "hot_rows": None}
HUAWEI_2023 = {"document": "huawei-2023-08-03-rds", "engine": "postgresql", "version": "12", "memory_ratio": "1:2",
               "vcpus": 1, "memory_gb": 2, "max_connections": None, "iops": None, "iops_note": "depends on disk",
               "tps": Decimal("172.88"), "qps": Decimal("3457.69")}
ALIBABA_PPAS = {"document": "alibaba-2019-06-18-rds", "flavor": "rds.ppas.st.h43", "engine": "ppas", "version": "10",
                "hot_rows": 100_000_000, "vcpus": 60, "memory_gb": 470, "capacity_rows": 15_000_000_000,
                "data_rows": 5_000_000_000, "ro_qps": Decimal("672072"), "rw_qps": Decimal("307560"), "tps": None}
ROWS = [HUAWEI_2018, HUAWEI_2023, ALIBABA_PPAS]
KEYS = ("document", "engine", "version", "vcpus", "memory_gb", "flavor", "memory_ratio", "hot_rows")


def body(response):
    assert response.status_code == 200, (response.status_code, response.content[:500])
    return b"".join(response.streaming_content)


@pytest.fixture(scope="module")
def files(django_db_setup, django_db_blocker, tmp_path_factory):
    """The full set as Parquet (both paths) and as CSV, read once."""
    client = Client()
    with django_db_blocker.unblock():
        listed = client.get(f"{API}/results/?format=parquet")
        assert listed["Content-Type"] == PARQUET
        assert 'filename="published-results.parquet"' in listed["Content-Disposition"]
        parquet = body(listed)
        action = body(client.get(f"{API}/results/parquet/"))
        text = body(client.get(f"{API}/results/?format=csv")).decode()
    path = tmp_path_factory.mktemp("parquet") / "results.parquet"
    path.write_bytes(parquet)
    return {"parquet": parquet, "action": action, "path": path, "csv": list(csv.DictReader(io.StringIO(text))),
            "header": text.splitlines()[0].split(",")}


def find(records, row):
    """The one record (a dict per row, nulls as None) that `row`'s identifying values name."""
    matches = [r for r in records if all(r[k] == row[k] for k in KEYS if k in row)]
    assert len(matches) == 1, (row, len(matches))
    return matches[0]


def checked(record, row):
    return {k: record[k] for k in row}


def test_both_paths_answer_the_same_file_with_the_csvs_columns_and_rows(files):
    assert files["parquet"][:4] == b"PAR1" and files["parquet"][-4:] == b"PAR1"
    assert files["action"] == files["parquet"]
    frame = polars.read_parquet(io.BytesIO(files["parquet"]))
    assert frame.columns == files["header"]
    assert frame.height == len(files["csv"]) > 300
    assert frame["id"].to_list() == [int(r["id"]) for r in files["csv"]]  # the CSV's row order
    # Every cell is the CSV's: text as written, numbers equal to the printed figure, empty cells null.
    for record, row in zip(frame.to_dicts(), files["csv"]):
        for name, value in record.items():
            cell = row[name]
            if cell == "":
                assert value is None, (name, row["id"], value)
            elif name == "version":  # the CSV names the engine (3.0.0, issue 52.10): 'PostgreSQL 10'; the file "10"
                assert cell.endswith(f" {value}") and cell[:-len(value) - 1] in ENGINE_NAMES, (cell, value)
            elif isinstance(value, Decimal):
                assert value == Decimal(cell), (name, row["id"])
            elif isinstance(value, bool):
                assert str(value).lower() == cell
            elif isinstance(value, datetime.date):
                assert value.isoformat() == cell
            else:
                assert str(value) == cell or float(value) == float(cell), (name, row["id"], value, cell)


def test_pandas_reads_the_documents_numbers_with_no_options(files):
    frame = pandas.read_parquet(io.BytesIO(files["parquet"]))
    assert str(frame["vcpus"].dtype) == "Int64" and str(frame["max_connections"].dtype) == "Int64"
    assert str(frame["hot_rows"].dtype) == "Int64" and str(frame["client_bound"].dtype) == "boolean"
    assert frame["version"].map(type).eq(str).all()  # "10" stays "10"
    records = [{k: (None if pandas.isna(v) else v) for k, v in r.items()} for r in frame.to_dict("records")]
    for row in ROWS:
        assert checked(find(records, row), row) == row
    assert {"10", "12", "5.6", "2008 R2"} <= set(frame["version"])
    ppas = find(records, ALIBABA_PPAS)
    assert type(ppas["ro_qps"]) is Decimal and str(ppas["ro_qps"]) == "672072.00"


def test_polars_reads_the_documents_numbers_with_no_options(files):
    frame = polars.read_parquet(files["path"])
    schema = frame.schema
    assert schema["vcpus"] == polars.Int64 and schema["hot_rows"] == polars.Int64 and schema["version"] == polars.String
    assert schema["tps"] == polars.Decimal(16, 2) and schema["published"] == polars.Date
    records = frame.to_dicts()
    for row in ROWS:
        assert checked(find(records, row), row) == row
    # The sum of the three hand-read TPS figures of huawei-2018-12-11-rds 表 1-1 (494 + 558 + 1257), exact.
    standard = frame.filter((polars.col("document") == "huawei-2018-12-11-rds") & polars.col("flavor").is_in(
        ["c3.medium.4", "c3.large.4", "c3.xlarge.4"]) & (polars.col("version") == "5.6"))
    assert standard["tps"].sum() == Decimal("2309")


def test_duckdb_reads_the_documents_numbers_with_no_options(files):
    connection = duckdb.connect()
    described = connection.execute(f"DESCRIBE SELECT * FROM read_parquet('{files['path']}')").fetchall()
    types = {r[0]: r[1] for r in described}
    assert types["vcpus"] == "BIGINT" and types["tps"] == "DECIMAL(16,2)" and types["version"] == "VARCHAR"
    assert types["published"] == "DATE" and types["client_bound"] == "BOOLEAN"
    cursor = connection.execute(f"SELECT * FROM read_parquet('{files['path']}')")
    names = [d[0] for d in cursor.description]
    records = [dict(zip(names, r)) for r in cursor.fetchall()]
    for row in ROWS:
        assert checked(find(records, row), row) == row
    # PPAS's figures are numbers, not text: the sum of the four rds.ppas.st.h43 read-only QPS (001_...txt:531-534).
    (total,) = connection.execute(f"SELECT sum(ro_qps) FROM read_parquet('{files['path']}') "
                                  "WHERE flavor = 'rds.ppas.st.h43'").fetchone()
    assert total == Decimal("672072") + Decimal("648919") + Decimal("592018") + Decimal("388884")


def test_fields_choose_the_columns_and_filters_the_rows(client):
    response = client.get(f"{API}/results/?format=parquet&engine=ppas&fields=tps,vcpus,id")
    frame = polars.read_parquet(io.BytesIO(body(response)))
    every = list(csv.DictReader(io.StringIO(body(client.get(f"{API}/results/?format=csv&engine=ppas")).decode())))
    assert frame.columns == ["tps", "vcpus", "id"]
    assert frame["id"].to_list() == [int(r["id"]) for r in every] and frame["vcpus"].dtype == polars.Int64


def test_accept_header_and_errors(client):
    response = client.get(f"{API}/results/?engine=ppas", HTTP_ACCEPT=PARQUET)
    assert response["Content-Type"] == PARQUET and body(response)[:4] == b"PAR1"
    bad = client.get(f"{API}/results/parquet/?engine=oracle")
    assert bad.status_code == 400 and bad["Content-Type"] == "application/json" and list(bad.json()["errors"]) == ["engine"]
    unknown = client.get(f"{API}/results/?format=parquet&fields=printed")  # a JSON-only field is no column
    assert unknown.status_code == 400 and list(unknown.json()["errors"]) == ["fields"]
    empty = polars.read_parquet(io.BytesIO(body(client.get(f"{API}/results/?format=parquet&engine=ppas&vcpus=3"))))
    assert empty.height == 0 and empty.schema["tps"] == polars.Decimal(16, 2)


def test_the_schema_offers_parquet(client):
    schema = client.get(f"{API}/schema/?format=json").json()
    listing = schema["paths"][f"{API}/results/"]["get"]
    assert PARQUET in listing["responses"]["200"]["content"]
    assert all(PARQUET not in (r.get("content") or {}) for s, r in listing["responses"].items() if s != "200")
    assert "parquet" in next(p for p in listing["parameters"] if p["name"] == "format")["schema"]["enum"]
    action = schema["paths"][f"{API}/results/parquet/"]["get"]["responses"]
    assert action["200"]["content"][PARQUET]["schema"] == {"type": "string", "format": "binary"}


def test_the_column_dictionary_agrees_with_the_parquet_schema(client):
    """Issue 52.10: every column's type in /results/columns/ is the Parquet file's (client_bound was a string in the
    dictionary, a boolean in the file): Frictionless integer = int64, number = float64 or decimal, boolean = bool,
    date = date32, string = string."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = {f["name"]: f for f in client.get("/api/v1/results/columns/").json()["fields"]}
    response = client.get("/api/v1/results/parquet/")
    schema = pq.read_schema(io.BytesIO(b"".join(response.streaming_content) if response.streaming else response.content))
    matches = {"integer": lambda t: t == pa.int64(), "number": lambda t: t == pa.float64() or pa.types.is_decimal(t),
               "boolean": lambda t: t == pa.bool_(), "date": lambda t: t == pa.date32(), "string": lambda t: t == pa.string()}
    assert list(fields) == schema.names
    disagree = {name: (fields[name]["type"], str(schema.field(name).type)) for name in schema.names
                if not matches[fields[name]["type"]](schema.field(name).type)}
    assert not disagree, disagree
    assert fields["client_bound"]["type"] == "boolean"
    assert (fields["client_bound"]["trueValues"], fields["client_bound"]["falseValues"]) == (["true"], ["false"])
