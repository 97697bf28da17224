"""Sizing answers with each flavour's newest published figure and says where an older edition printed another
(issue 21.1). Expected values from the data files: Huawei's PostgreSQL 12 dedicated 1:4 table, 64 vCPU / 256 GB,
10929.30 TPS in the 2023-08-03 RDS paper (whitepaper/data/huawei-2023-08-03-rds.yaml), 8839.4 in the
2025-10-21 PostgreSQL paper (table 2-3); 32 vCPU / 128 GB 3731.23 -> 4875.01.
(8839.4 - 10929.30) / 10929.30 = -19.12 %; (4875.01 - 3731.23) / 3731.23 = +30.65 %."""

import pytest

pytestmark = pytest.mark.django_db
API = "/api/v1/sizing/"
PG12 = "engine=postgresql&version=12&vendor=huawei&metric=tps"


def dedicated_1_4(answers):
    return [a for a in answers if a["result"]["flavor"]["family"]["slug"] == "dedicated"
            and a["result"]["flavor"]["memory_ratio"] == "1:4"]


def test_it_never_answers_with_a_superseded_figure(client):
    body = client.get(f"{API}?{PG12}&target=10000").json()
    assert body["latest"] is True
    assert "10929.30" not in [a["printed"] for a in body["answers"]]
    assert dedicated_1_4(body["answers"]) == []  # 8839.4, the newest figure, misses 10,000
    html = client.get(f"/sizing/?{PG12}&target=10000").content.decode()
    assert "10929.30" not in html


def test_older_figures_stay_one_click_away(client):
    body = client.get(f"{API}?{PG12}&target=10000&latest=false").json()
    assert body["latest"] is False
    [answer] = dedicated_1_4(body["answers"])
    assert answer["printed"] == "10929.30" and answer["result"]["document"]["slug"] == "huawei-2023-08-03-rds"
    html = client.get(f"/sizing/?{PG12}&target=10000").content.decode()
    assert "latest=false" in html
    assert "10929.30" in client.get(f"/sizing/?{PG12}&target=10000&latest=false").content.decode()


@pytest.mark.parametrize("target, printed, vcpus, old, pct", [
    (8000, "8839.4", 64, "10929.30", -19.1),
    (4000, "4875.01", 32, "3731.23", 30.7),
])
def test_it_says_where_an_older_edition_printed_another_number(client, target, printed, vcpus, old, pct):
    [answer] = dedicated_1_4(client.get(f"{API}?{PG12}&target={target}").json()["answers"])
    assert (answer["printed"], answer["result"]["flavor"]["vcpus"]) == (printed, vcpus)
    assert answer["result"]["document"]["slug"] == "huawei-2025-10-21-postgresql"
    assert answer["revised_from"]["printed"] == old and answer["revised_from"]["published"] == "2023-08-03"
    assert answer["revised_pct"] == pct
    html = client.get(f"/sizing/?{PG12}&target={target}&lang=en").content.decode()
    assert f"revised from {old} in 2023, {pct:+.1f} %" in html
    zh = client.get(f"/sizing/?{PG12}&target={target}&lang=zh-hans").content.decode()
    assert f"由 2023 年的 {old} 修订，{pct:+.1f} %" in zh


def test_latest_must_be_true_or_false(client):
    body = client.get(f"{API}?{PG12}&target=1&latest=perhaps").json()
    assert "latest" in body["errors"]
