"""Property-based fuzzing of the published OpenAPI schema (schemathesis) against the real WSGI app and
the bundled catalogue: no 5xx, every response (status, content type, headers, body) conforms to the
schema, schema-valid input is accepted and schema-invalid input is rejected with a 4xx. The runs API
(runs, targets, profiles) is fuzzed twice: as staff with a token, and anonymously (every answer a
documented 401).

The schema is loaded inside the test (it needs the database);
each operation is driven through schemathesis' Hypothesis strategies, positive and negative, with a
small fixed budget so the whole run stays well under a minute."""

import io
import re

import pyarrow.parquet
import pytest
import schemathesis
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from .tiers import tier
from testbed.runs_support import seed_profiles_for_tests

pytestmark = pytest.mark.django_db  # schemathesis: hundreds of generated requests

SCHEMA_URL = "/api/v1/schema/?format=json"
PARQUET = "application/vnd.apache.parquet"
CATALOGUE_PATH = r"^/api/v1/(vendors|documents|methodologies|engines|versions|families|flavors|results|spec|compare|sizing)/"
RUNS_PATH = r"^/api/v1/(runs|targets|profiles|schedules)/"
EXAMPLES = {GenerationMode.POSITIVE: 15, GenerationMode.NEGATIVE: 8}


@pytest.fixture
@tier("fuzz")
def api_schema(db, settings):
    # The fuzzer sends hundreds of anonymous requests: lift the anonymous throttle for this test only.
    settings.REST_FRAMEWORK = {**django_settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "100000/minute"}}
    # The real WSGI handler closes "old" connections around each request, which inside the test's
    # transaction means closing it; Django's own test client unhooks the same signal.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi(SCHEMA_URL, get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def catalogue_schema(api_schema):
    return api_schema.include(path_regex=CATALOGUE_PATH)


@pytest.fixture
def runs_data(db):
    """Something for the runs API to show: the profiles, a target and runs (queued and finished). Inside
    the test's transaction nothing is ever sent to a broker (on_commit never fires)."""
    from runs.models import BenchmarkProfile, Run, RunState, Target

    seed_profiles_for_tests()
    target = Target(name="fuzz-target", engine="mysql", host="127.0.0.1", port=3306, database="fuzz", user="fuzz")
    target.set_password("fuzz-secret")
    target.save()
    profile = BenchmarkProfile.objects.get(slug="sysbench-oltp-rw-mysql-quick")
    for state in (RunState.QUEUED, RunState.SUCCEEDED):
        Run.objects.create(target=target, profile=profile, params=profile.resolve({}), state=state)
    from runs.models import Schedule
    from runs.schedules import save_schedule

    save_schedule(Schedule(name="fuzz-schedule", target=target, profile=profile, cron="0 3 * * *"))
    return target


# Cross-field rules of a launch cannot be written in OpenAPI (the profile's engine must be the target's;
# report_interval_s <= duration_s; pgbench jobs <= clients, range <= scale x 100000; a thread count once
# per sweep; the reference-only HammerDB profile): a schema-valid POST /runs/ may be a 400 naming the
# field. Every other check still applies to it (no 5xx, documented statuses and bodies, schema-invalid
# input rejected), and every other operation must accept all schema-valid input. Likewise comparing runs
# and a run series name existing rows (2 to 6 distinct runs, the baseline among them; an existing target
# and profile), which a schema cannot say: a schema-valid id that names nothing is a 400 naming it. A
# schedule's cron expression, its target (not archived), its profile (the target's engine) and overrides
# are checked together as well, and so is a profile's (issue 50.9: its workload one its tool runs, the rules
# between its parameters, a launch's, e.g. pgbench's scale required and report_interval_s <= duration_s).
CROSS_FIELD_RULES = {"POST /api/v1/runs/", "GET /api/v1/runs/compare/", "GET /api/v1/runs/series/",
                     "POST /api/v1/schedules/", "PUT /api/v1/schedules/{id}/", "PATCH /api/v1/schedules/{id}/",
                     "POST /api/v1/profiles/", "PUT /api/v1/profiles/{slug}/", "PATCH /api/v1/profiles/{slug}/"}
# The catalogue's parameters name its data (vendor, document, engine, version, family, spec code ...): the
# schema declares them plain strings with an example, not enums (the values grow with every import), so a
# schema-valid string may name nothing and is a 400 naming the parameter. Likewise compare names existing
# results and its baseline an index among the selections given, and a CSV cannot have the JSON-only
# fields. Every other check applies (no 5xx, documented statuses, bodies and headers, schema-invalid input
# rejected); test_documented_examples_are_accepted checks that the schema's examples are accepted.


# Schemathesis sends `Accept-Encoding: gzip, deflate` (requests' default) but its WSGI transport does not
# decompress; the API gzips when asked (issue 25.7), which tests/test_api_housekeeping.py covers.
IDENTITY = {"Accept-Encoding": "identity"}


def fuzz_runs_api(schema, labels_expected, headers=None):
    operations = [result.ok() for result in schema.get_all_operations()]
    labels = {f"{op.method.upper()} {op.path}" for op in operations}
    assert labels_expected <= labels, labels
    for operation in operations:
        for mode, examples in EXAMPLES.items():
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case):
                label = f"{case.operation.method.upper()} {case.operation.path}"
                case.call_and_validate(headers={**IDENTITY, **(headers or {})}, excluded_checks=[positive_data_acceptance]
                                       if label in CROSS_FIELD_RULES else None)

            try:
                run()
            except Unsatisfiable:
                # Nothing schema-invalid can be built (e.g. the only parameter is a free-form path key).
                assert mode is GenerationMode.NEGATIVE, operation.path
            except Exception as exc:
                raise AssertionError(f"{operation.method.upper()} {operation.path} ({mode}): {exc}") from exc


def test_catalogue_api_conforms_to_its_schema(catalogue_schema):
    operations = [result.ok() for result in catalogue_schema.get_all_operations()]
    labels = {f"{op.method.upper()} {op.path}" for op in operations}
    assert {"GET /api/v1/results/", "GET /api/v1/spec/", "GET /api/v1/vendors/{slug}/", "GET /api/v1/compare/",
            "GET /api/v1/sizing/", "GET /api/v1/results/best/"} <= labels
    for operation in operations:
        for mode, examples in EXAMPLES.items():
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case):
                case.call_and_validate(headers=IDENTITY, excluded_checks=[positive_data_acceptance])

            try:
                run()
            except Unsatisfiable:
                # Nothing schema-invalid can be built (e.g. the only parameter is a free-form path key).
                assert mode is GenerationMode.NEGATIVE, operation.path
            except Exception as exc:
                raise AssertionError(f"{operation.method.upper()} {operation.path} ({mode}): {exc}") from exc


def test_documented_examples_are_accepted(client):
    """Each example the schema gives for a catalogue list's parameter, sent alone, selects something."""
    schema = client.get(SCHEMA_URL).json()
    tried = 0
    for path, item in schema["paths"].items():
        operation = item.get("get")
        if not re.match(CATALOGUE_PATH, path) or "{" in path or any(p.get("required") for p in operation.get("parameters", [])):
            continue
        for parameter in operation.get("parameters", []):
            example = parameter["schema"].get("example")
            if example is None:
                continue
            response = client.get(path, {parameter["name"]: example})
            assert response.status_code == 200, (path, parameter["name"], response.content[:300])
            if list(operation["responses"]["200"]["content"]) == ["text/csv"]:  # /results/csv/: rows past the header
                assert len(b"".join(response.streaming_content).splitlines()) > 1, (path, parameter["name"], example)
            elif list(operation["responses"]["200"]["content"]) == [PARQUET]:  # /results/parquet/: rows
                assert pyarrow.parquet.read_metadata(io.BytesIO(b"".join(response.streaming_content))).num_rows > 0, \
                    (path, parameter["name"], example)
            else:
                assert response.json()["count"] > 0, (path, parameter["name"], example)
            tried += 1
    assert tried >= 15, tried


RUNS_OPERATIONS = {"GET /api/v1/runs/", "POST /api/v1/runs/", "GET /api/v1/runs/{id}/", "GET /api/v1/runs/{id}/samples/",
                   "POST /api/v1/runs/{id}/cancel/", "GET /api/v1/targets/", "GET /api/v1/profiles/{slug}/",
                   "GET /api/v1/schedules/", "POST /api/v1/schedules/", "PATCH /api/v1/schedules/{id}/",
                   "POST /api/v1/schedules/{id}/pause/", "DELETE /api/v1/schedules/{id}/", "POST /api/v1/profiles/",
                   "PATCH /api/v1/profiles/{slug}/", "DELETE /api/v1/profiles/{slug}/"}


def test_runs_api_conforms_to_its_schema_as_staff(api_schema, runs_data):
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=User.objects.create_user("fuzz-staff", is_staff=True))
    fuzz_runs_api(api_schema.include(path_regex=RUNS_PATH), RUNS_OPERATIONS, headers={"Authorization": f"Token {token.key}"})


def test_runs_api_conforms_to_its_schema_anonymously(api_schema, runs_data):
    fuzz_runs_api(api_schema.include(path_regex=RUNS_PATH), RUNS_OPERATIONS)


# Issue 37: every operation of the schema, not only the catalogue's and the runs API's, anonymous and with a token
# (Bearer, as generated clients send it); with the token, GET only (the runs API's writes are fuzzed as staff above,
# where launching and scheduling have the data they need). 0 server errors, 0 schema violations: call_and_validate
# runs every check schemathesis has (server errors, status codes, content types, headers, response bodies against
# the schema, schema-invalid input rejected), positive_data_acceptance aside where the schema cannot say the rule.
EVERY_EXAMPLES = {GenerationMode.POSITIVE: 8, GenerationMode.NEGATIVE: 4}
# With the Bearer token, every GET again: what it adds is the scheme (authentication comes before any parameter is
# read), while each parameter's values, valid and invalid, are fuzzed above (the catalogue's anonymously, the runs
# API's as staff with a token, 15 + 8 examples an operation): a few valid requests an operation check it (51.7).
BEARER_EXAMPLES = {GenerationMode.POSITIVE: 3}


def fuzz_every_operation(schema, headers, examples_by_mode=EVERY_EXAMPLES):
    operations = [result.ok() for result in schema.get_all_operations()]
    assert operations
    for operation in operations:
        label = f"{operation.method.upper()} {operation.path}"
        data_rules = label in CROSS_FIELD_RULES or re.match(CATALOGUE_PATH, operation.path)
        for mode, examples in examples_by_mode.items():
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case):
                case.call_and_validate(headers={**IDENTITY, **headers},
                                       excluded_checks=[positive_data_acceptance] if data_rules else None)

            try:
                run()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, operation.path
            except Exception as exc:
                raise AssertionError(f"{label} ({mode}): {exc}") from exc
    return {f"{op.method.upper()} {op.path}" for op in operations}


def test_every_get_operation_conforms_with_a_bearer_token(api_schema, runs_data):
    token = Token.objects.create(user=User.objects.create_user("fuzz-bearer", is_staff=True))
    fuzzed = fuzz_every_operation(api_schema.include(method="GET"), {"Authorization": f"Bearer {token.key}"}, BEARER_EXAMPLES)
    assert {"GET /api/v1/results/", "GET /api/v1/results/parquet/", "GET /api/v1/runs/", "GET /api/v1/runs/{id}/",
            "GET /api/v1/schedules/", "GET /api/v1/changelog/", "GET /api/v1/spec/"} <= fuzzed
    assert all(label.startswith("GET ") for label in fuzzed)
    # The scheme is accepted (a 401 is documented, so the fuzzing alone would pass a refused token).
    from django.test import Client
    assert Client().get("/api/v1/runs/", HTTP_AUTHORIZATION=f"Bearer {token.key}").status_code == 200


def test_every_other_operation_conforms_anonymously(api_schema, runs_data):
    """Anonymous, the operations the catalogue and runs tests above leave out (the schema's own, the changelog...)."""
    every = {f"{r.ok().method.upper()} {r.ok().path}" for r in api_schema.get_all_operations()}
    others = api_schema.exclude(path_regex=CATALOGUE_PATH).exclude(path_regex=RUNS_PATH)
    fuzzed = fuzz_every_operation(others, {})
    covered = {label for label in every if re.match(CATALOGUE_PATH, label.split(" ")[1])
               or re.match(RUNS_PATH, label.split(" ")[1])}
    assert covered | fuzzed == every and "GET /api/v1/changelog/" in fuzzed
