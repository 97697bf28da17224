"""Who may do what (issue 38.4): each rule once in runs/permissions.py or config/permissions.py, the same answer on
a page and in the API. Alice (operator) owns a run, Bob (operator) does not, Stella is staff."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runs.models import Run, RunState, Target

from testbed.runs_support import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_run(profiles, operator_user):
    target = Target(name="perm", engine="mysql", host="127.0.0.1", port=3306, database="sbtest", user="bench")
    target.set_password(PASSWORD)
    target.save()
    profile = profiles["sysbench-oltp-rw-mysql-quick"]
    return Run.objects.create(target=target, profile=profile, params=profile.resolve({}), requested_by=operator_user)


@pytest.fixture
def bob_user(db):
    return make_user("bob-operator", operator=True)


@pytest.fixture
def bob(bob_user):
    from django.test import Client

    client = Client()
    client.force_login(bob_user)
    return client


def api_as(user):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {Token.objects.get_or_create(user=user)[0].key}")
    return api


def test_it_lets_an_operator_change_only_their_own_runs_on_pages_and_in_the_api(alices_run, operator, bob, bob_user):
    for url in (f"/runs/{alices_run.pk}/cancel/", f"/runs/{alices_run.pk}/publish/", f"/runs/{alices_run.pk}/drop-leftovers/"):
        assert bob.post(url).status_code == 403, url
    refused = api_as(bob_user).post(f"/api/v1/runs/{alices_run.pk}/cancel/")
    assert (refused.status_code, refused.json()["detail"]) == (403, "You can only cancel your own runs.")
    assert Run.objects.get(pk=alices_run.pk).state == RunState.QUEUED
    assert operator.get(f"/runs/{alices_run.pk}/cancel/").status_code == 200  # the confirmation
    assert operator.post(f"/runs/{alices_run.pk}/cancel/").status_code == 302
    assert Run.objects.get(pk=alices_run.pk).state == RunState.CANCELLED


def test_it_keeps_staff_pages_for_staff(alices_run, operator, staff):
    for url in (f"/runs/{alices_run.pk}/retract/", "/runs/schedules/new/", "/drafts/"):
        assert operator.get(url).status_code == 403, url
        assert staff.get(url).status_code == 200, url


def test_it_sends_an_anonymous_visitor_to_the_login_page_everywhere(alices_run, anonymous):
    for url in (f"/runs/{alices_run.pk}/", f"/runs/{alices_run.pk}/retract/", "/runs/schedules/new/", "/drafts/"):
        response = anonymous.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url


def test_it_answers_405_to_a_method_a_confirmation_page_does_not_have(alices_run, operator, staff):
    assert operator.put(f"/runs/{alices_run.pk}/cancel/").status_code == 405
    assert operator.delete(f"/runs/{alices_run.pk}/publish/").status_code == 405
    assert staff.put(f"/runs/{alices_run.pk}/retract/").status_code == 405
    assert Run.objects.get(pk=alices_run.pk).state == RunState.QUEUED


def test_it_lets_operators_read_schedules_in_the_api_and_only_staff_write_them(operator_user, staff_user):
    assert api_as(operator_user).get("/api/v1/schedules/").status_code == 200
    refused = api_as(operator_user).post("/api/v1/schedules/", {}, format="json")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only staff can create, change, pause or delete schedules."
    assert api_as(staff_user).post("/api/v1/schedules/", {}, format="json").status_code == 400  # allowed: the body is empty
