import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db


def test_staff_log_in_through_the_form_and_reach_the_runs(client):
    User.objects.create_user("ops", password="a-Long-pass-8812", is_staff=True)
    page = client.get("/accounts/login/?next=/runs/")
    assert page.status_code == 200
    assert b'name="username"' in page.content and b'name="password"' in page.content
    response = client.post("/accounts/login/", {"username": "ops", "password": "a-Long-pass-8812", "next": "/runs/"})
    assert response.status_code == 302 and response["Location"] == "/runs/"
    assert client.get("/runs/").status_code == 200


def test_wrong_password_says_so_and_logs_nobody_in(client):
    User.objects.create_user("ops", password="a-Long-pass-8812", is_staff=True)
    response = client.post("/accounts/login/", {"username": "ops", "password": "wrong"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content
    assert client.get("/runs/").status_code == 302


def test_runs_link_only_for_those_who_may_use_it(client):
    from django.contrib.auth.models import Group

    plain = User.objects.create_user("reader", password="a-Long-pass-8812")
    client.force_login(plain)
    assert b"Benchmark runs" not in client.get("/sizing/").content
    plain.groups.add(Group.objects.get_or_create(name="benchmark operators")[0])
    assert b"Benchmark runs" in client.get("/sizing/").content
