"""Origins: vendor-published results and internal measurements (published benchmark runs) kept apart.

Customer pages and the API show vendor-published results unless the reader asks for internal
measurements (`include_internal=true`), and an internal measurement is labelled wherever its number
appears. The internal row here is published through the real surface (POST /runs/<id>/publish/):
a MariaDB 10.11 run on a 2 vCPU / 4 GB target that measured 812.345 TPS (printed 812.35)."""

import csv
import io
import re

import pytest
from django.core.management import call_command

from runs.models import BenchmarkProfile, Run, RunState, Target
from whitepaper.models import Origin, PublishedResult, Vendor
from testbed.runs_support import seed_profiles_for_tests

pytestmark = pytest.mark.django_db

API = "/api/v1"
LABEL = "Internal measurement"
# Every vendor-published row: the table rows of the five source documents (000 ... 004), as the seed
# cross-check counts them in the extracted text.
VENDOR_ROWS = 172 + 49 + 40 + 74 + 107


@pytest.fixture(autouse=True)
def fresh_stamp(settings):
    settings.CATALOGUE_STAMP_TTL = 0


@pytest.fixture
def internal(staff):
    """One published run: MySQL (MariaDB 10.11), 2 vCPU / 4 GB, 812.35 TPS, 16246.90 QPS."""
    seed_profiles_for_tests()
    target = Target(name="maria", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench",
                    vcpus=2, memory_gb=4)
    target.set_password("x-unused-secret-1")
    target.save()
    run = Run.objects.create(target=target, profile=BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick"),
                             params={}, requested_by=staff.user, state=RunState.SUCCEEDED,
                             server_version="10.11.19-MariaDB-0+deb12u1", tool_version="1.0.20",
                             summary={"tps": 812.345, "qps": 16246.9, "transactions": 2437, "threads": 2})
    assert staff.post(f"/runs/{run.pk}/publish/").status_code == 302
    run.refresh_from_db()
    return run.published_result


def test_it_sets_the_origin_from_the_vendor_slug_whoever_saves(internal):
    assert Vendor.objects.get(slug="internal").origin == Origin.INTERNAL
    assert set(Vendor.objects.exclude(slug="internal").values_list("origin", flat=True)) == {Origin.VENDOR}
    assert internal.origin == Origin.INTERNAL and internal.is_internal
    assert PublishedResult.objects.filter(table__document__vendor__origin=Origin.INTERNAL).get() == internal


# --- API -------------------------------------------------------------------------------------------

def test_it_lists_vendor_results_only_unless_asked(anonymous, internal):
    default = anonymous.get(f"{API}/results/", {"engine": "mysql", "page_size": 500}).json()
    assert internal.pk not in {r["id"] for r in default["results"]}
    assert {r["origin"] for r in default["results"]} == {"vendor"}
    asked = anonymous.get(f"{API}/results/", {"engine": "mysql", "page_size": 500, "include_internal": "true"}).json()
    assert asked["count"] == default["count"] + 1
    row = next(r for r in asked["results"] if r["id"] == internal.pk)
    assert row["origin"] == "internal" and row["tps"] == 812.35 and row["printed"]["tps"] == "812.35"
    assert row["document"]["origin"] == "internal" and row["vendor"] == "internal"


def test_it_rejects_a_bad_include_internal_value(anonymous):
    response = anonymous.get(f"{API}/results/", {"include_internal": "perhaps"})
    assert response.status_code == 400 and "include_internal" in response.json()["errors"]


def test_it_keeps_the_api_csv_and_export_results_identical_with_either_choice(anonymous, internal):
    default, everything = io.StringIO(), io.StringIO()
    call_command("export_results", stdout=default)
    call_command("export_results", "--include-internal", stdout=everything)
    api_default = b"".join(anonymous.get(f"{API}/results/", {"format": "csv"}).streaming_content).decode()
    api_everything = b"".join(anonymous.get(f"{API}/results/", {"format": "csv", "include_internal": "true"})
                              .streaming_content).decode()
    assert api_default == default.getvalue() and api_everything == everything.getvalue()
    rows = list(csv.DictReader(io.StringIO(everything.getvalue())))
    assert len(rows) == VENDOR_ROWS + 1  # and the internal row
    assert len(default.getvalue().splitlines()) == VENDOR_ROWS + 1  # and the header
    assert [r for r in rows if r["vendor"] == "internal"] == [rows[-1]]  # the newest document: last in document order
    assert (rows[-1]["vcpus"], rows[-1]["memory_gb"], rows[-1]["tps"], rows[-1]["qps"]) == ("2", "4", "812.35", "16246.90")


def test_it_answers_the_spec_lookup_from_vendor_documents_unless_asked(anonymous, internal):
    # The target names no catalogue flavour: the run is filed under the internal family of its declared size.
    params = {"engine": "mysql", "version": internal.engine_version.version, "family": "internal-target", "vcpus": 2,
              "memory_gb": 4}
    assert anonymous.get(f"{API}/spec/", params).status_code == 404
    body = anonymous.get(f"{API}/spec/", {**params, "include_internal": "true"}).json()
    assert body["result"]["id"] == internal.pk and body["result"]["origin"] == "internal"


def test_it_documents_the_parameter_and_the_field_in_the_schema(anonymous):
    schema = anonymous.get(f"{API}/schema/", {"format": "json"}).json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/v1/results/"]["get"]["parameters"]}
    assert parameters["include_internal"]["schema"]["type"] == "boolean"
    spec_parameters = {p["name"] for p in schema["paths"]["/api/v1/spec/"]["get"]["parameters"]}
    assert "include_internal" in spec_parameters
    origin = schema["components"]["schemas"]["Result"]["properties"]["origin"]
    assert origin["allOf"] == [{"$ref": "#/components/schemas/OriginEnum"}] and "include_internal=true" in origin["description"]
    assert schema["components"]["schemas"]["OriginEnum"]["enum"] == ["vendor", "internal"]


# --- Pages -----------------------------------------------------------------------------------------

def explorer_rows(html):
    return [int(x) for x in re.findall(r'<tr data-result="(\d+)">', html)]


def test_it_hides_internal_rows_from_the_explorer_unless_ticked(anonymous, internal):
    html = anonymous.get("/explore/?engine=mysql").content.decode()
    assert internal.pk not in explorer_rows(html) and LABEL not in html.split('id="results"')[1]
    html = anonymous.get("/explore/?engine=mysql&vcpus=2&include_internal=true").content.decode()  # one page
    assert internal.pk in explorer_rows(html)
    row = re.search(rf'<tr data-result="{internal.pk}">(.*?)</tr>', html, re.S).group(1)
    assert LABEL in row and "812.35" in row
    assert 'name="include_internal" value="true" checked' in html


def test_it_gives_sizing_answers_from_vendor_documents_unless_asked(anonymous, internal):
    # MySQL, 800 TPS: the vendors' smallest answer is 2 vCPUs at best; the internal run (2 vCPU, 812.35) must
    # not appear, and appears labelled when asked for.
    url = "/sizing/?engine=mysql&metric=tps&target=800"
    html = anonymous.get(url).content.decode()
    assert "812.35" not in html and LABEL not in html
    html = anonymous.get(url + "&include_internal=on").content.decode()
    row = next(r for r in re.findall(r"<tr><td[^>]*>.*?</tr>", html, re.S) if "812.35" in r)
    assert LABEL in row


def test_it_hides_internal_rows_from_engine_pages_home_and_compare_unless_asked(anonymous, internal):
    version_url = internal.engine_version.get_absolute_url()
    assert anonymous.get(version_url).context["n_results"] == 0
    page = anonymous.get(version_url + "?include_internal=true")
    assert page.context["n_results"] == 1 and LABEL in page.content.decode()
    home = anonymous.get("/").content.decode()
    assert "/documents/internal-measurements/" not in home and "?include_internal=true" in home
    assert "/documents/internal-measurements/" in anonymous.get("/?include_internal=true").content.decode()
    vendor_row = PublishedResult.objects.filter(engine_version__engine__slug="mysql").order_by("pk").first()
    compare = anonymous.get(f"/compare/?sel={vendor_row.pk}&sel={internal.pk}").content.decode()
    assert f"No published result {internal.pk}" in compare
    compare = anonymous.get(f"/compare/?sel={vendor_row.pk}&sel={internal.pk}&include_internal=true").content.decode()
    assert f"No published result {internal.pk}" not in compare and LABEL in compare


def test_it_labels_the_internal_document_page(anonymous, internal):
    html = anonymous.get("/documents/internal-measurements/").content.decode()
    assert "not published by a vendor" in html and "include_internal=true" in html
