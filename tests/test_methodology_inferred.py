"""Inferred set-up is marked inferred, with where it comes from (issue 49.3).

From the source text (seed 004, the 2025 MySQL whitepaper): the run command (step 2) is missing; "--num-threads=200"
and the garbled "--mysql-port=3600" appear only in the cleanup command. Alibaba's document (seed 001) never states
what its QPS counts per transaction; its rows' QPS / TPS is about 18."""

import re

import pytest

pytestmark = pytest.mark.django_db


def methodology_block(html, slug):
    return re.search(rf'<details id="methodology-{slug}".*?</details>', html, re.S).group(0)


def test_the_2025_mysql_threads_and_duration_are_marked_inferred(client):
    html = client.get("/documents/huawei-2025-10-21-mysql/?lang=en").content.decode()
    block = methodology_block(html, "huawei-2025-10-21-mysql-sysbench-56-57")
    threads = re.search(r"<dt>Threads</dt><dd>(.*?)</dd>", block, re.S).group(1)
    duration = re.search(r"<dt>Duration</dt><dd>(.*?)</dd>", block, re.S).group(1)
    assert threads.startswith("200") and "inferred, not stated: from the cleanup command" in threads
    assert duration.startswith("3600 s") and "inferred, not stated: from the cleanup command" in duration
    assert "inferred" not in re.search(r"<dt>Tables × rows</dt><dd>(.*?)</dd>", block, re.S).group(1)
    zh = client.get("/documents/huawei-2025-10-21-mysql/?lang=zh-hans").content.decode()
    assert "推断值，文档未直接说明：取自清理命令" in methodology_block(zh, "huawei-2025-10-21-mysql-sysbench-56-57")
    # a document that states its run command: nothing inferred
    assert "inferred, not stated" not in client.get("/documents/huawei-2023-08-03-rds/?lang=en").content.decode()

    api = client.get("/api/v1/methodologies/huawei-2025-10-21-mysql-sysbench-56-57/").json()
    assert set(api["inferred"]) == {"threads", "duration_s"} and "cleanup command" in api["inferred"]["threads"]
    assert client.get("/api/v1/methodologies/huawei-2023-08-03-rds-sysbench-mysql-c3/").json()["inferred"] == {}


def test_alibabas_statements_per_transaction_is_marked_inferred(client):
    html = client.get("/documents/alibaba-2019-06-18-rds/?lang=en").content.decode()
    block = methodology_block(html, "alibaba-2019-06-18-rds-mysql")
    counts = re.search(r"<dt>QPS counts per transaction</dt><dd>(.*?)</dd>", block, re.S).group(1)
    assert counts.startswith("18 statements") and "inferred, not stated: QPS / TPS of the printed rows is about 18" in counts
    api = client.get("/api/v1/methodologies/alibaba-2019-06-18-rds-mysql/").json()
    assert api["statements_per_transaction"] == 18 and "QPS / TPS" in api["inferred"]["statements_per_transaction"]
