"""The capacity search (issue 35.2): the highest offered rate a target sustains under a latency bound, as pure
functions of the steps measured so far. One definition of a passing step, of the next rate to offer and of the
result (summary.capacity); runs/execution.py measures the steps it asks for.

The search offers rate_tps first, then multiplies by capacity_factor up to capacity_max_tps; after the first
failing step it narrows between the last passing and the first failing rate (halving the gap) until the gap is
within NARROW_TO of the passing rate or MAX_STEPS steps were measured.
"""

import math

from django.utils.translation import gettext as _

from .params import MAX_CAPACITY_STEPS as MAX_STEPS
from .params import is_capacity  # noqa: F401 - the rule's one definition, used with the search's

NARROW_TO = 0.05  # the search stops when the first failing rate is within 5 % of the highest passing one
MIN_ACHIEVED_RATIO = 0.99  # a step passes when it achieved at least 99 % of the offered rate
DEFAULT_BUDGET_PCT = 1.0  # late + skipped transactions, and errors, at most this share of the step's


def least_achieved(offered, duration_s):
    """The lowest achieved rate that still counts as 99 % of the offered one. Both tools draw arrivals as a Poisson
    process, so a step of T seconds at R TPS schedules R x T +- sqrt(R x T) transactions by chance alone (500 TPS for
    3 s: +- 2.6 %): a server that ran every scheduled transaction passes unless its count is more than three of those
    standard deviations below 99 %."""
    scheduled = offered * max(1, int(duration_s or 1))
    return offered * (MIN_ACHIEVED_RATIO - 3 / math.sqrt(scheduled))


def verdict(params, figures, errors=0, transactions=None):
    """(passed, why not): a step passes when it achieved >= 99 % of the offered rate, its p95 (from the scheduled
    start) is at most the bound, late + skipped are within the budget, the schedule lag does not grow and errors
    stay within the budget."""
    bound, budget = params["capacity_bound_ms"], params.get("capacity_budget_pct") or DEFAULT_BUDGET_PCT
    offered, achieved, p95 = figures.get("offered_tps"), figures.get("achieved_tps"), figures.get("p95_ms")
    if achieved is None or achieved < least_achieved(offered, params.get("duration_s")):
        return False, _("achieved %(a)s TPS, below 99 %% of the %(o)s offered") % {"a": achieved, "o": offered}
    if p95 is None:
        return False, _("no p95 was measured")
    if p95 > bound:
        return False, _("p95 %(p)s ms above the bound of %(b)s ms") % {"p": p95, "b": bound}
    late_skipped = (figures.get("late_pct") or 0) + (figures.get("skipped_pct") or 0)
    if late_skipped > budget:
        return False, _("%(n)s %% of the transactions late or skipped, above the budget of %(b)s %%") % {
            "n": round(late_skipped, 3), "b": budget}
    if figures.get("lag_grows"):
        return False, _("the schedule lag grew: the server fell behind the offered rate")
    if transactions and errors and 100.0 * errors / transactions > budget:
        return False, _("%(n)s %% of the transactions failed, above the budget of %(b)s %%") % {
            "n": round(100.0 * errors / transactions, 3), "b": budget}
    return True, ""


def next_rate(params, steps):
    """The next rate to offer after `steps` (each with offered_tps and passed), None when the search is over."""
    if not steps:
        return int(params["rate_tps"])
    if len(steps) >= MAX_STEPS:
        return None
    passed = [s["offered_tps"] for s in steps if s["passed"]]
    failed = [s["offered_tps"] for s in steps if not s["passed"]]
    if not passed:
        return None  # the first step failed: there is no capacity to narrow down to
    best = max(passed)
    if not failed:
        top = int(params["capacity_max_tps"])
        return None if best >= top else min(top, max(best + 1, int(best * params["capacity_factor"])))
    first_failing = min(f for f in failed if f > best) if any(f > best for f in failed) else None
    if first_failing is None or first_failing - best <= max(1, NARROW_TO * best):
        return None
    return (best + first_failing) // 2


def result(params, steps):
    """summary.capacity: the bound, the highest passing rate (its achieved TPS), the first failing rate above it
    and why it failed, and every step's figures."""
    passed = [s for s in steps if s["passed"]]
    best = max(passed, key=lambda s: s["offered_tps"]) if passed else None
    above = [s for s in steps if not s["passed"] and (best is None or s["offered_tps"] > best["offered_tps"])]
    failed = min(above, key=lambda s: s["offered_tps"]) if above else None
    return {
        "bound_ms": params["capacity_bound_ms"],
        "budget_pct": params.get("capacity_budget_pct") or DEFAULT_BUDGET_PCT,
        "sustained_tps": best["offered_tps"] if best else None,
        "sustained_achieved_tps": best["achieved_tps"] if best else None,
        "sustained_p95_ms": best["p95_ms"] if best else None,
        "failed_tps": failed["offered_tps"] if failed else None,
        "failed_p95_ms": failed["p95_ms"] if failed else None,
        "failed_reason": failed["reason"] if failed else "",
        "steps": steps,
    }


def step_record(params, figures, summary):
    """One step of summary.capacity.steps, judged."""
    passed, reason = verdict(params, figures, summary.get("errors") or 0, summary.get("transactions"))
    return {"offered_tps": figures["offered_tps"], "achieved_tps": figures["achieved_tps"], "p50_ms": figures["p50_ms"],
            "p95_ms": figures["p95_ms"], "p99_ms": figures["p99_ms"], "late_pct": figures.get("late_pct"),
            "skipped_pct": figures.get("skipped_pct"), "lag_grows": figures.get("lag_grows"), "passed": passed,
            "reason": reason}
