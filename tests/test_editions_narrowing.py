"""Issue 39.2/39.3: "revised from" and "same in" read only the rows that can answer (per row, an index walk of its
editions: editions.revision_candidates, editions.may_print_the_same), and answer exactly as the rule does over every
published row (editions.revisions, editions.same_in given every row), on the whole seed catalogue, a page at a time."""

import pytest

from whitepaper import editions
from whitepaper.models import PublishedResult

pytestmark = pytest.mark.django_db


def _pages(rows, size=100):
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def test_narrowed_reads_answer_as_the_rule_over_every_row():
    every = list(PublishedResult.objects.select_related("table__document", "engine_version", "flavor__family"))
    visible = PublishedResult.objects.visible()
    revised = same = 0
    for page in _pages(sorted(every, key=lambda r: r.pk)):
        narrowed = list(visible.select_related("table__document", "engine_version", "flavor__family").filter(
            editions.may_print_the_same(page, visible) | editions.revision_candidates(page, visible)))
        assert len(narrowed) < len(every)
        shown = [r for r in page if r in set(visible)]
        by_rule = editions.revisions(shown, [r for r in every if r in set(visible)])
        assert editions.revisions(shown, [*narrowed, *shown]) == by_rule
        assert editions.same_in(shown, narrowed) == editions.same_in(shown, [r for r in every if r in set(visible)
                                                                            and r.pk not in {p.pk for p in page}])
        revised += len(by_rule)
        same += sum(len(d) > 1 for d in editions.same_in(shown, narrowed).values())
    assert revised > 5 and same > 5  # the seed catalogue has both (Huawei 2018/2023/2025, Alibaba)
