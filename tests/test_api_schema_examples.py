"""The schema's example answers (issue 25.7) are real answers: the public operations' of the bundled catalogue,
the runs API's of runs built from sysbench's recorded output (recorded by `python manage.py api_examples` into
whitepaper/api/response_examples.json); every response of the schema has one, and each conforms to the schema
of its response. Before, 23 responses of the runs API and the deprecated 300 of /spec/ had none."""

import json
import re

import pytest
from jsonschema.exceptions import ValidationError
from openapi_schema_validator import OAS30Validator, validate

from runs.api.examples import EXAMPLE_PASSWORD

pytestmark = pytest.mark.django_db

def nullable_refs(node):
    """drf-spectacular writes a nullable object as {allOf: [{$ref}], nullable: true}, meant (as generators and
    schemathesis read it) as "the object or null"; openapi-schema-validator applies `nullable` to the outer
    schema only and then fails null against the allOf member. Spell that reading out for the validator."""
    if isinstance(node, list):
        return [nullable_refs(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: nullable_refs(v) for k, v in node.items()}
    if node.get("nullable") and "allOf" in node and "type" not in node:
        rest = {k: v for k, v in node.items() if k not in ("allOf", "nullable")}
        return {**rest, "anyOf": [{"allOf": node["allOf"]}, {"type": "object", "nullable": True, "enum": [None]}]}
    return node


def test_every_response_has_an_example_that_conforms(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    missing, invalid, checked = [], [], 0
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                for media, content in (response.get("content") or {}).items():
                    where = (method, path, status, media)
                    if "example" not in content:
                        missing.append(where)
                    elif media == "application/json":
                        try:
                            validate(content["example"], nullable_refs({**content["schema"], "components": schema["components"]}),
                                     cls=OAS30Validator)
                        except ValidationError as exc:
                            invalid.append((*where, exc.message))
                        checked += 1
                    else:
                        assert isinstance(content["example"], str) and content["example"], where
    assert missing == []
    assert invalid == []
    assert checked > 200


def test_no_example_holds_a_password_key_or_token(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    examples = [content.get("example") for item in schema["paths"].values() for operation in item.values()
                for response in operation["responses"].values() for content in (response.get("content") or {}).values()]
    text = json.dumps(examples)
    assert EXAMPLE_PASSWORD not in text and "Token " not in text
    # A field about a secret is only ever a flag (has_password, has_tls_key), never a value.
    secrets = re.findall(r'"([A-Za-z_]*(?:password|passwd|secret|token|private_key|tls_key|api_key)[A-Za-z_]*)": (?!true|false)', text)
    assert secrets == []
    assert '"has_password": true' in text  # the example target has a password: it is told, not shown


def test_the_run_examples_are_what_sysbench_measured(client):
    responses = client.get("/api/v1/schema/?format=json").json()["paths"]["/api/v1/runs/{id}/"]["get"]["responses"]
    run = responses["200"]["content"]["application/json"]["example"]
    # tests/recorded/sysbench-1.0.20-mysql-oltp_read_write-histogram.stdout.txt: "transactions: 641 (213.45 per sec.)",
    # "queries: 12903 (4296.60 per sec.)", "95th percentile: 21.50", "sysbench 1.0.20"; 2 threads.
    summary = run["summary"]
    assert (summary["transactions"], summary["tps"], summary["queries"], summary["qps"], summary["latency_p95_ms"]) == \
        (641, 213.45, 12903, 4296.6, 21.5)
    assert (run["tool_version"], run["params"]["threads"], run["state"]) == ("1.0.20", 2, "succeeded")


def test_the_examples_are_the_catalogues_numbers(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    spec = schema["paths"]["/api/v1/spec/"]["get"]["responses"]["200"]["content"]["application/json"]["example"]
    # huawei-2025-10-21-mysql.yaml: MySQL 8.0 dedicated 8 vCPU 64 GB, TPS 3102, QPS 62045.
    assert (spec["document"]["slug"], spec["result"]["tps"], spec["result"]["qps"]) == ("huawei-2025-10-21-mysql", 3102.0, 62045.0)
    csv = schema["paths"]["/api/v1/results/csv/"]["get"]["responses"]["200"]["content"]["text/csv"]["example"]
    assert csv.splitlines()[0].startswith("vendor,document,published,engine,version")
    assert json.dumps(schema).count("https://rds-perf.example/") > 10  # examples name an example host, not this one
