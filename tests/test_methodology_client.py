"""A client is compared by what it is, not how it is worded (issue 49.2).

From the data files: Huawei's 2018 and 2023 documents both ran SQL Server 2014 from "ECS high-performance
computing HC2, 8 cores, 16 GB, 200 GB SSD, Windows Server 2012 R2 Standard 64-bit, VPC; region CN North-Beijing1
(华北-北京一), AZ1" (2018) / "ECS HC2 high-performance computing, 8 cores, 16 GB, 200 GB SSD, Windows Server 2012 R2
Standard 64-bit, VPC, region CN North-Beijing1 (华北-北京一), AZ1" (2023): the same machine. The 2023 document's
PostgreSQL clients, c6.4xlarge.2 in 华北-北京四 and in 西南-贵阳一, really differ (the region)."""

import pytest

from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db
CAVEAT = "The methodologies differ."


def test_the_same_sql_server_client_in_other_words_is_no_difference(client):
    html = client.get("/engines/sqlserver/2014/?lang=en").content.decode()
    assert CAVEAT not in html
    rows = PublishedResult.objects.filter(engine_version__engine__slug="sqlserver", engine_version__version="2014")
    documents = {r.table.document.slug: r for r in rows.select_related("table__document")}
    assert {"huawei-2018-12-11-rds", "huawei-2023-08-03-rds"} <= set(documents)
    a, b = documents["huawei-2018-12-11-rds"], documents["huawei-2023-08-03-rds"]
    compare = client.get(f"/compare/?sel={a.pk}&sel={b.pk}&lang=en").content.decode()
    assert CAVEAT not in compare
    api = client.get(f"/api/v1/compare/?sel={a.pk}&sel={b.pk}").json()
    assert "client" not in {d["field"] for d in api["caveats"]["methodology_differences"]}


def test_a_client_in_another_region_still_differs(client):
    rows = PublishedResult.objects.filter(table__document__slug="huawei-2023-08-03-rds").select_related("table__methodology")
    by_client = {}
    for r in rows:
        by_client.setdefault(r.table.methodology.client, r)
    beijing4 = next(r for c, r in by_client.items() if "北京四" in c)
    guiyang = next(r for c, r in by_client.items() if "贵阳一" in c)
    api = client.get(f"/api/v1/compare/?sel={beijing4.pk}&sel={guiyang.pk}").json()
    assert "client" in {d["field"] for d in api["caveats"]["methodology_differences"]}
