"""Freshness owned by the data: any write to a catalogue model (admin, importer, publishing, a shell)
bumps the catalogue stamp, so anonymous pages, their cache and their ETag change at once."""

import json
from decimal import Decimal

import pytest

from whitepaper.models import Flavor, PublishedResult

pytestmark = pytest.mark.django_db

MYSQL_2025 = "/documents/huawei-2025-10-21-mysql/"


@pytest.fixture(autouse=True)
def production_stamp_ttl(settings):
    """As in production: each process re-reads the stamp at most once a minute here, so only the write's
    own signal can make the next page fresh at once."""
    from whitepaper.pages import local_pages

    settings.CATALOGUE_STAMP_TTL = 60
    local_pages.clear()
    yield
    local_pages.clear()


def a_row():
    return (PublishedResult.objects.filter(table__document__slug="huawei-2025-10-21-mysql", tps__isnull=False)
            .select_related("table").order_by("table__position", "position").first())


def admin_form(result, **changes):
    data = {
        "table": result.table_id, "position": result.position, "engine_version": result.engine_version_id,
        "flavor": result.flavor_id, "deployment": result.deployment, "edition": result.edition,
        "printed": json.dumps(result.printed),
        **{name: "" if getattr(result, name) is None else str(getattr(result, name))
           for name in ("max_connections", "iops", "tps", "qps", "tpm", "capacity_rows", "data_rows", "hot_rows",
                        "ro_qps", "rw_qps")},
    }
    if result.iops_depends_on_disk:
        data["iops_depends_on_disk"] = "on"
    data.update(changes)
    return data


def test_it_shows_an_admin_edit_to_anonymous_visitors_at_once(anonymous, staff, django_capture_on_commit_callbacks):
    result = a_row()
    printed = result.printed["tps"]
    before = anonymous.get(MYSQL_2025)
    assert anonymous.get(MYSQL_2025, HTTP_IF_NONE_MATCH=before["ETag"]).status_code == 304  # cached and valid
    assert f"<td>{printed}</td>" in before.content.decode() and "<td>98765.43</td>" not in before.content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(f"/admin/whitepaper/publishedresult/{result.pk}/change/",
                              admin_form(result, tps="98765.43", printed=json.dumps(
                                  {**result.printed, "tps": "98765.43"})))
    assert response.status_code == 302, response.content.decode()[:2000]
    result.refresh_from_db()
    assert result.tps == Decimal("98765.43")

    after = anonymous.get(MYSQL_2025)
    assert "<td>98765.43</td>" in after.content.decode()
    assert after["ETag"] != before["ETag"]
    assert anonymous.get(MYSQL_2025, HTTP_IF_NONE_MATCH=before["ETag"]).status_code == 200


def test_it_refreshes_pages_after_a_save_or_delete_in_a_shell(anonymous, django_capture_on_commit_callbacks):
    first = anonymous.get("/explore/?engine=mysql&version=8.0")["ETag"]
    result = a_row()
    with django_capture_on_commit_callbacks(execute=True):
        result.delete()
    second = anonymous.get("/explore/?engine=mysql&version=8.0")
    assert second["ETag"] != first and f'data-result="{result.pk}"' not in second.content.decode()
    flavor = Flavor.objects.filter(results__engine_version__version="8.0").first()
    with django_capture_on_commit_callbacks(execute=True):
        flavor.storage = "9T"
        flavor.save()
    assert anonymous.get("/explore/?engine=mysql&version=8.0")["ETag"] != second["ETag"]
