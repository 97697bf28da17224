"""The campaigns API (issue 47.6, create, list and detail): operators only; a launch answers the campaign with its
cells; a bad one is a 400 naming each field and stores nothing (runs/campaigns.py launch_campaign decides)."""

import pytest

from runs.models import Campaign, RepeatGroup, Run
from testbed.runs_support import make_targets
from tests.test_campaigns import SYSBENCH, sized_mysql


@pytest.mark.django_db
def test_it_launches_lists_and_shows_a_campaign(operator_api, profiles):
    small, large = make_targets()["mysql"], sized_mysql("mysql-4-8", 4, 8)
    response = operator_api.post("/api/v1/campaigns/", {"name": "matrix", "profile": SYSBENCH, "targets": [small.pk, large.pk],
                                                       "repeats": 2, "overrides": {"threads": 2}}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "matrix" and body["state"] == "queued" and body["repeats"] == 2 and body["created_by"] == "oscar-operator"
    assert [(c["target"], c["vcpus"], c["memory_gb"], c["n"], c["mean_tps"], len(c["runs"])) for c in body["cells"]] == [
        (small.pk, 2, 4, 0, None, 2), (large.pk, 4, 8, 0, None, 2)]
    assert sorted(Run.objects.filter(pk__in=body["cells"][0]["runs"]).values_list("block", flat=True)) == [1, 2]
    assert operator_api.get(f"/api/v1/campaigns/{body['id']}/").json() == body
    listed = operator_api.get("/api/v1/campaigns/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == body["id"]


@pytest.mark.django_db
def test_a_bad_launch_is_a_400_naming_the_field_and_stores_nothing(operator_api, profiles):
    targets = make_targets()
    mysql, pg = targets["mysql"], targets["postgresql"]
    before = (Campaign.objects.count(), RepeatGroup.objects.count(), Run.objects.count())
    for body, field in [
        ({"name": "", "profile": SYSBENCH, "targets": [mysql.pk]}, "name"),
        ({"name": "m", "profile": SYSBENCH, "targets": [mysql.pk], "repeats": 1}, "repeats"),
        ({"name": "m", "profile": SYSBENCH, "targets": []}, "targets"),
        ({"name": "m", "profile": SYSBENCH, "targets": [mysql.pk, pg.pk]}, "targets.1.profile"),
        ({"name": "m", "profile": SYSBENCH, "targets": [mysql.pk], "overrides": {"threads": 0}}, "threads"),
        ({"name": "m", "profile": "no-such-profile", "targets": [mysql.pk]}, "profile"),
        ({"name": "m", "profile": SYSBENCH, "targets": [mysql.pk], "bogus": 1}, "bogus"),
    ]:
        response = operator_api.post("/api/v1/campaigns/", body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in str(response.json()), (field, response.json())
    assert (Campaign.objects.count(), RepeatGroup.objects.count(), Run.objects.count()) == before


@pytest.mark.django_db
def test_only_operators_launch_or_read_campaigns(anonymous, customer, profiles):
    body = {"name": "m", "profile": SYSBENCH, "targets": [make_targets()["mysql"].pk]}
    assert anonymous.post("/api/v1/campaigns/", body, content_type="application/json").status_code == 401
    assert customer.post("/api/v1/campaigns/", body, content_type="application/json").status_code == 403
    assert customer.get("/api/v1/campaigns/").status_code == 403
    assert Campaign.objects.count() == 0


@pytest.mark.django_db
def test_its_launcher_cancels_a_campaign_once_and_no_other_operator_can(operator_api, profiles):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from testbed.runs_support import make_user

    body = {"name": "m", "profile": SYSBENCH, "targets": [make_targets()["mysql"].pk], "repeats": 2}
    campaign = operator_api.post("/api/v1/campaigns/", body, format="json").json()
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_user('other-op', operator=True)).key}")
    assert other.post(f"/api/v1/campaigns/{campaign['id']}/cancel/").status_code == 403
    assert Run.objects.filter(pk__in=campaign["cells"][0]["runs"], state="queued").count() == 2
    response = operator_api.post(f"/api/v1/campaigns/{campaign['id']}/cancel/")
    assert response.status_code == 202 and response.json()["state"] == "cancelled"
    assert set(Run.objects.filter(pk__in=campaign["cells"][0]["runs"]).values_list("state", flat=True)) == {"cancelled"}
    again = operator_api.post(f"/api/v1/campaigns/{campaign['id']}/cancel/")
    assert again.status_code == 409 and again.json()["campaign"]["state"] == "cancelled"
