"""The rate limit's client (issue 52.1): X-Forwarded-For is anyone's to write, so it is read only when the
connection comes from a proxy the deployment names (API_TRUSTED_PROXIES); otherwise the connection's address
is the client, whatever the header says."""

import itertools

import pytest

pytestmark = pytest.mark.django_db
API = "/api/v1"


@pytest.fixture
def five_a_minute(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "5/minute"}}


def remaining(response):
    return response.status_code, response["X-RateLimit-Remaining"]


def test_a_made_up_forwarded_for_gets_no_fresh_quota(client, five_a_minute):
    made_up = (f"198.51.100.{i}" for i in itertools.count(1))
    answers = [remaining(client.get(f"{API}/vendors/", REMOTE_ADDR="192.0.2.7", HTTP_X_FORWARDED_FOR=next(made_up)))
               for _ in range(7)]
    # One client (the connection's address): 5 answers counting down, then 429s.
    assert answers == [(200, "4"), (200, "3"), (200, "2"), (200, "1"), (200, "0"), (429, "0"), (429, "0")]


def test_behind_a_named_proxy_each_forwarded_client_is_counted_apart(client, five_a_minute, settings):
    settings.API_TRUSTED_PROXIES = ["10.0.0.0/8", "192.0.2.1"]

    def ask(forwarded, remote="10.1.2.3"):
        return remaining(client.get(f"{API}/vendors/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded))

    assert ask("203.0.113.5") == (200, "4")
    assert ask("203.0.113.6") == (200, "4")  # another client behind the proxy: its own count
    # The client wrote its own header, the proxies appended what they saw: the nearest untrusted hop counts.
    assert ask("1.1.1.1, 203.0.113.5, 10.9.9.9") == (200, "3")
    assert ask("203.0.113.5", remote="192.0.2.1") == (200, "2")
    # Not from a named proxy: the header is ignored, the connection's address is the client.
    assert ask("203.0.113.5", remote="192.0.2.99") == (200, "4")
    assert ask("203.0.113.77", remote="192.0.2.99") == (200, "3")
