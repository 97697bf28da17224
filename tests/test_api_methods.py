"""A method a resource does not have is a 405 with `Allow`, in the one error shape, whoever asks (issue 25.2):
before, anonymous callers got a 403 on the catalogue and a 401 on the runs API."""

import pytest

pytestmark = pytest.mark.django_db


def result_path():
    from whitepaper.models import PublishedResult

    return f"/api/v1/results/{PublishedResult.objects.order_by('id').values_list('id', flat=True).first()}/"


@pytest.mark.parametrize("method, path, allow", [
    ("post", "/api/v1/results/", "GET, HEAD, OPTIONS"),
    ("delete", "RESULT", "GET, HEAD, OPTIONS"),
    ("put", "/api/v1/vendors/huawei/", "GET, HEAD, OPTIONS"),
    ("patch", "/api/v1/documents/huawei-2023-08-03-rds/", "GET, HEAD, OPTIONS"),
    ("trace", "/api/v1/results/", "GET, HEAD, OPTIONS"),
    ("post", "/api/v1/sizing/", "GET, HEAD, OPTIONS"),
    ("delete", "/api/v1/targets/", "GET, HEAD, OPTIONS"),
    ("post", "/api/v1/profiles/pgbench-ro/", "GET, PUT, PATCH, DELETE, HEAD, OPTIONS"),  # operators create with POST /profiles/ (50.9)
    ("put", "/api/v1/runs/", "GET, POST, HEAD, OPTIONS"),
])
@pytest.mark.parametrize("who", ["anonymous", "customer", "operator"])
def test_it_answers_405_with_allow_whoever_asks(request, who, method, path, allow):
    client = request.getfixturevalue(who)
    path = result_path() if path == "RESULT" else path
    response = getattr(client, method)(path)
    assert response.status_code == 405, (response.status_code, response.content[:200])
    assert response["Allow"] == allow
    body = response.json()
    assert body["code"] == "method_not_allowed" and method.upper() in body["detail"]


def test_allowed_methods_keep_their_answers(anonymous, operator):
    assert anonymous.get("/api/v1/results/?page_size=1").status_code == 200
    assert anonymous.get("/api/v1/runs/").status_code == 401  # allowed method, no credentials
    assert anonymous.post("/api/v1/runs/", {}, content_type="application/json").status_code == 401
    assert operator.get("/api/v1/targets/").status_code == 200
