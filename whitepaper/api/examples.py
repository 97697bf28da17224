"""Example answers of the public catalogue operations, recorded from the bundled catalogue
(`python manage.py api_examples` writes response_examples.json) and attached to the schema's 200 responses
by `schema_examples` (a post-processing hook): a consumer sees real numbers with their provenance, not
placeholders. Lists are cut to their first item; URLs name https://rds-perf.example. A key is a path template
(its GET 200) or "METHOD path status" (the spec lookup's 300, 409 and 404 here, the runs API's from runs/api/examples.py)."""

import json
from pathlib import Path

from config.api_docs import RUNS_PATHS

from ..export import PARQUET_MEDIA_TYPE
from ..metrics import METRICS

EXAMPLES_FILE = Path(__file__).with_name("response_examples.json")
PARQUET_EXAMPLE = "(binary) An Apache Parquet file: 'PAR1', row groups of 2,000 rows, the footer, 'PAR1'."
EXAMPLE_HOST = "https://rds-perf.example"
SPEC = "engine=mysql&version=8.0&family=dedicated&vcpus=8&memory_gb=64"
AMBIGUOUS_SPEC = "engine=mysql&version=5.7&family=general&vcpus=4&memory_gb=16"  # two vendors' rows match
# Path template (as in the schema) -> the request recorded for it ({result}/{flavor}: the spec answer's).
REQUESTS = {
    "/api/v1/vendors/": "/api/v1/vendors/?page_size=1", "/api/v1/vendors/{slug}/": "/api/v1/vendors/huawei/",
    "/api/v1/documents/": "/api/v1/documents/?page_size=1",
    "/api/v1/documents/{slug}/": "/api/v1/documents/huawei-2025-10-21-mysql/",
    "/api/v1/methodologies/": "/api/v1/methodologies/?page_size=1",
    "/api/v1/methodologies/{slug}/": "/api/v1/methodologies/huawei-2023-08-03-rds-sysbench-mysql-c3/",
    "/api/v1/engines/": "/api/v1/engines/?page_size=1", "/api/v1/engines/{slug}/": "/api/v1/engines/mysql/",
    "/api/v1/versions/": "/api/v1/versions/?page_size=1",
    "/api/v1/versions/{engine}/{version}/": "/api/v1/versions/mysql/8.0/",
    "/api/v1/families/": "/api/v1/families/?page_size=1",
    "/api/v1/families/{vendor}/{slug}/": "/api/v1/families/huawei/dedicated/",
    "/api/v1/flavors/": "/api/v1/flavors/?page_size=1", "/api/v1/flavors/{id}/": "/api/v1/flavors/{flavor}/",
    "/api/v1/results/": f"/api/v1/results/?page_size=1&{SPEC}", "/api/v1/results/{id}/": "/api/v1/results/{result}/",
    "/api/v1/results/best/": f"/api/v1/results/best/?page_size=1&{SPEC}",
    "/api/v1/results/columns/": "/api/v1/results/columns/", "/api/v1/results/csv/": f"/api/v1/results/csv/?{SPEC}",
    "/api/v1/spec/": f"/api/v1/spec/?{SPEC}",
    "/api/v1/compare/": "/api/v1/compare/?sel={result}&sel={alibaba}",
    "/api/v1/sizing/": "/api/v1/sizing/?engine=mysql&version=8.0&target=3000",
    "/api/v1/changelog/": "/api/v1/changelog/",
}


# A metric's filter parameters -> their example, from the metric's declaration (Metric.example).
METRIC_PARAMETER_EXAMPLES = {f"{prefix}{m.name}": value for m in METRICS if m.example
                             for prefix, value in zip(("", "min_", "max_"), m.example)}


def metric_parameter_examples(result, generator, request, public):
    """A post-processing hook (before config.api_docs.schema_docs): the catalogue's metric filters get their
    declaration's examples, on the catalogue's paths (the runs API's parameters of the same names mean other things)."""
    for path, path_item in result.get("paths", {}).items():
        if path.startswith(RUNS_PATHS):
            continue
        for operation in path_item.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("name") in METRIC_PARAMETER_EXAMPLES and "example" not in parameter:
                    parameter["example"] = METRIC_PARAMETER_EXAMPLES[parameter["name"]]
    return result


def first_items(value):
    """The value with every list cut to its first item (an example, not the catalogue)."""
    if isinstance(value, list):
        return [first_items(v) for v in value[:1]]
    if isinstance(value, dict):
        return {k: first_items(v) for k, v in value.items()}
    return value


def record(client):
    """{path template: {"content type": example}} from the catalogue `client` (a Django test client) reads."""
    def get(url):
        return client.get(url, HTTP_HOST=EXAMPLE_HOST.split("//")[1], secure=True)

    spec = get(f"/api/v1/spec/?{SPEC}").json()["result"]
    alibaba = get("/api/v1/results/?document=alibaba-2019-06-18-rds&flavor=mysql.x8.medium.2").json()
    keys = {"result": spec["id"], "flavor": spec["flavor"]["id"], "alibaba": alibaba["results"][0]["id"]}
    examples = {}
    for template, url in REQUESTS.items():
        response = get(url.format(**keys))
        assert response.status_code == 200, (url, response.status_code)
        media = response["Content-Type"].split(";")[0]
        if media == "application/json":
            body = first_items(response.json())
        else:
            text = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
            body = "\n".join(text.splitlines()[:2 if media == "text/csv" else 12]) + "\n"
        examples[template] = {media: body}
    # The lookup's own answers when it cannot name one row, whole (their candidates are the point).
    for status, url in ((300, f"/api/v1/spec/?{AMBIGUOUS_SPEC}&multiple_choices=true"), (409, f"/api/v1/spec/?{AMBIGUOUS_SPEC}"),
                        (404, f"/api/v1/spec/?{SPEC.replace('vcpus=8', 'vcpus=7')}")):
        response = get(url)
        assert response.status_code == status, (url, response.status_code)
        examples[f"get /api/v1/spec/ {status}"] = {"application/json": response.json()}
    return examples


def schema_examples(result, generator, request, public):
    """Attach the recorded examples to their answers (the file is absent before its first recording)."""
    if not EXAMPLES_FILE.exists():
        return result
    examples = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))
    csv = examples.get("/api/v1/results/csv/", {}).get("text/csv")
    if csv is not None:  # format=csv on the list answers the same bytes as /results/csv/
        examples.setdefault("/api/v1/results/", {}).setdefault("text/csv", csv)
    parquet = {PARQUET_MEDIA_TYPE: PARQUET_EXAMPLE}  # binary: a word on the file, not its bytes
    examples.setdefault("/api/v1/results/", {}).update(parquet)
    examples.setdefault("/api/v1/results/parquet/", {}).update(parquet)
    for key, by_media in examples.items():
        method, path, status = key.split(" ") if " " in key else ("get", key, "200")
        operation = result.get("paths", {}).get(path, {}).get(method)
        if operation is None:
            continue
        content = operation["responses"].get(status, {}).get("content", {})
        for media, example in by_media.items():
            if media in content:
                content[media]["example"] = example
    return result
