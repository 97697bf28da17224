"""CSV rows follow the view they export: the explorer's sort, the API's `ordering`; otherwise document order."""

import csv
import io
from decimal import Decimal

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def rows(body):
    return list(csv.DictReader(io.StringIO(body)))


def streamed(response):
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def test_explorer_csv_follows_the_explorer_sort(client):
    on_page = client.get("/explore/", {"engine": "mysql", "version": "5.7", "sort": "-tps"})
    assert on_page.status_code == 200
    body = streamed(client.get("/explore/results.csv", {"engine": "mysql", "version": "5.7", "sort": "-tps"}))
    tps = [Decimal(r["tps"]) for r in rows(body)]
    assert len(tps) > 20 and tps == sorted(tps, reverse=True)


def test_api_csv_follows_ordering_and_defaults_to_export_order(client):
    body = streamed(client.get("/api/v1/results/", {"format": "csv", "vendor": "huawei", "engine": "postgresql",
                                                         "ordering": "vcpus,-tps"}))
    keys = [(int(r["vcpus"]), -Decimal(r["tps"])) for r in rows(body)]
    assert len(keys) > 20 and keys == sorted(keys)

    everything = streamed(client.get("/api/v1/results/", {"format": "csv"}))
    exported = io.StringIO()
    call_command("export_results", stdout=exported)
    assert everything == exported.getvalue()
