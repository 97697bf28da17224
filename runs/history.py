"""Runs over time: a series is the succeeded runs of one target and profile with the same parameters
(other parameters measure something else); each new result is judged against the earlier results of its series.
The one definition of a regression is runs/stats.py's `predict` (settings RUNS_PRACTICAL_THRESHOLD_PCT and
RUNS_REGRESSION_*):

  a result regressed when it lies below the 95 % prediction interval of the last RUNS_REGRESSION_WINDOW earlier
  results of its series (on log TPS: mean +- t(n-1) s sqrt(1 + 1/n)) AND more than the practical threshold below
  their geometric mean; with fewer than RUNS_REGRESSION_MIN_RUNS earlier results it is not judged (null). A result
  judged a regression does not enter the baseline of later ones. Where the interval is wider than the threshold,
  the judgement says which drop it cannot detect instead of "within noise".

Repeats: the N runs of one launch (a RepeatGroup) are one result, their mean TPS. The group is judged once,
when its last run has ended (failed or cancelled members are left out of the mean), and its verdict is
stored on each of its succeeded runs; a run is never judged against its own group. In the window each
earlier group counts once, by its mean, so one launch of many repeats cannot fill the window by itself;
a group still running is not an earlier result yet."""

import json
import logging
import statistics

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from . import stats as uncertainty
from .models import FINAL_STATES, Run, RunState
from .params import thread_steps

log = logging.getLogger(__name__)
DEPRECATED_BAND = "deprecated: band of the earlier results, mean +- 2 sample standard deviations (not the rule since API 2.6.0)"


def series_runs(target_id, profile_id, params=None):
    """The succeeded runs of a series, oldest first (params: only runs with exactly these parameters)."""
    runs = Run.objects.filter(target_id=target_id, profile_id=profile_id, state=RunState.SUCCEEDED)
    if params is not None:
        runs = runs.filter(params=params)
    return runs.order_by("finished_at", "id")


def series_url(run):
    return reverse("runs:series") + "?" + urlencode({"target": run.target_id, "profile": run.profile_id})


def judge(tps, earlier):
    """The judgement of `tps` against the earlier results' TPS values (oldest first): a dict, with `regression`
    True / False, or None when there are too few earlier results (runs/stats.py predict)."""
    window = earlier[-settings.RUNS_REGRESSION_WINDOW:]
    found = uncertainty.predict(tps, window, threshold_pct=settings.RUNS_PRACTICAL_THRESHOLD_PCT,
                                min_earlier=settings.RUNS_REGRESSION_MIN_RUNS)
    out = {"method": found.method, "threshold_pct": found.threshold_pct, "window": len(window),
           "min_runs": settings.RUNS_REGRESSION_MIN_RUNS, "tps": round(tps, 2) if tps is not None else None,
           "regression": found.regression}
    if found.regression is None:
        return out
    detectable = round(found.detectable_pct, 1)
    # Deprecated (API 2.6.0, sunset 2027-03-01): the earlier results described as before (median, mean, sample
    # standard deviation, the band mean +- 2 sd and whether the result lies outside it). True of those results, but
    # no longer the rule: `regression`, `interval` and `cannot_detect` are.
    median, mean = statistics.median(window), statistics.fmean(window)
    stdev = statistics.stdev(window)
    out.update(median=round(median, 2), mean=round(mean, 2), stdev=round(stdev, 2),
               band=[round(mean - 2 * stdev, 2), round(mean + 2 * stdev, 2)],
               beyond_noise=not mean - 2 * stdev <= tps <= mean + 2 * stdev, noise_method=DEPRECATED_BAND)
    return {**out, "n": found.n, "center": round(found.center, 2), "interval": [round(found.low, 2), round(found.high, 2)],
            "change_pct": round(found.change_pct, 1), "outside": found.outside, "detectable_pct": detectable,
            # Where the interval's lower half is wider than the threshold, a smaller drop cannot be seen.
            "cannot_detect": detectable > found.threshold_pct}


def stats(values):
    """n, mean, sample standard deviation, the mean's 95 % interval over the runs and the coefficient of variation
    (runs.stats.series; interval and cv None with fewer than 2 values) of TPS values, rounded as shown."""
    values = [v for v in values if v is not None]
    interval = uncertainty.series_interval(values)
    return {"n": len(values), "mean": round(statistics.fmean(values), 2) if values else None,
            "stdev": round(statistics.stdev(values), 2) if len(values) > 1 else None,
            "ci_low": round(interval.low, 2) if interval else None, "ci_high": round(interval.high, 2) if interval else None,
            "cv": round(interval.cv, 4) if interval and interval.cv is not None else None,
            "cv_pct": round(100 * interval.cv, 1) if interval and interval.cv is not None else None}


def group_spread(values, run_ids):
    """A repeat group's spread as a published row carries it: its runs, n, mean, standard deviation, interval."""
    spread = stats(values)
    spread.pop("cv_pct")  # shown on pages; the row keeps the fraction
    return {"runs": run_ids, **spread, "method": uncertainty.SERIES_T}


def earlier_results(run, until, exclude):
    """The results of the run's series (same target, profile and parameters) complete by `until`, oldest
    first, the last RUNS_REGRESSION_WINDOW of them: [(run ids, TPS)], a single run's TPS or a repeat group's
    mean over its succeeded runs (only once every run of the group has ended). `exclude`: a Q of the runs
    being judged (the run itself, or its whole group)."""
    # A result judged a regression stays out of the baseline: later results are judged against the set-up as it was.
    # Nor do runs whose client host was loaded beyond its cores (Run.disturbed): they measured a busy client.
    rows = list(series_runs(run.target_id, run.profile_id, run.params).exclude(exclude).exclude(regression=True)
                .exclude(disturbed=True)
                .filter(finished_at__lte=until).values("id", "summary", "finished_at", "repeat_group_id"))
    members = {}
    for m in Run.objects.filter(repeat_group_id__in={r["repeat_group_id"] for r in rows if r["repeat_group_id"]}).values(
            "repeat_group_id", "state", "finished_at"):
        members.setdefault(m["repeat_group_id"], []).append(m)
    complete_at = {gid: max(m["finished_at"] for m in ms) if all(m["state"] in FINAL_STATES and m["finished_at"] for m in ms)
                   else None for gid, ms in members.items()}
    results = {}
    for r in rows:
        tps = (r["summary"] or {}).get("tps")
        gid = r["repeat_group_id"]
        if tps is None or (gid and (complete_at.get(gid) is None or complete_at[gid] > until)):
            continue
        key = ("group", gid) if gid else ("run", r["id"])
        result = results.setdefault(key, {"ids": [], "tps": [], "at": complete_at.get(gid) or r["finished_at"]})
        result["ids"].append(r["id"])
        result["tps"].append(tps)
    ordered = sorted(results.values(), key=lambda x: (x["at"], x["ids"][0]))
    return [(sorted(x["ids"]), statistics.fmean(x["tps"])) for x in ordered][-settings.RUNS_REGRESSION_WINDOW:]


def _verdict(tps, earlier):
    verdict = judge(tps, [v for _, v in earlier])
    verdict["earlier_runs"] = [i for ids, _ in earlier for i in ids]
    verdict["earlier_results"] = [ids for ids, _ in earlier]
    return verdict


def record_judgement(run):
    """Judge a run (not in a repeat group) that just succeeded against the earlier results of its series
    and store it on the run. Never fails the run: an error is logged and the run stays unjudged."""
    try:
        with transaction.atomic():  # a savepoint inside actions' transaction: a failure here rolls back only this
            if run.disturbed:  # a busy client measured: not judged, and never a baseline (earlier_results)
                verdict = {**judge(None, []), "tps": (run.summary or {}).get("tps"), "disturbed": True}
            else:
                verdict = _verdict((run.summary or {}).get("tps"), earlier_results(run, run.finished_at, Q(pk=run.pk)))
            Run.objects.filter(pk=run.pk).update(regression=verdict["regression"], trend=verdict)
        run.regression, run.trend = verdict["regression"], verdict
    except Exception:  # noqa: BLE001 - the judgement is extra: the measured run stands without it
        log.exception("could not judge run %s against its series", run.pk)


def record_group_judgement(group_id):
    """Once every run of a repeat group has ended, judge the group's mean TPS (its succeeded runs) against
    the earlier results of its series and store the verdict, with the group's n, mean and standard
    deviation, on each succeeded run of the group. Before that, or with no succeeded run, nothing."""
    try:
        with transaction.atomic():  # a savepoint, as record_judgement's
            members = list(Run.objects.filter(repeat_group_id=group_id).order_by("repeat_index", "id"))
            if not members or any(m.state not in FINAL_STATES for m in members):
                return None
            succeeded = [m for m in members if m.state == RunState.SUCCEEDED and (m.summary or {}).get("tps") is not None
                         and not m.disturbed]  # a busy client's runs stay out of the group's result
            if not succeeded:
                return None
            values = [m.summary["tps"] for m in succeeded]
            until = max(m.finished_at for m in members)
            verdict = _verdict(statistics.fmean(values), earlier_results(succeeded[0], until, Q(repeat_group_id=group_id)))
            verdict["repeat_group"] = {"id": group_id, "count": len(members), "runs": [m.pk for m in succeeded],
                                       "tps": values, **stats(values), "complete_at": until.isoformat()}
            Run.objects.filter(pk__in=[m.pk for m in succeeded]).update(regression=verdict["regression"], trend=verdict)
            return verdict
    except Exception:  # noqa: BLE001 - as record_judgement
        log.exception("could not judge repeat group %s against its series", group_id)
        return None


def series(target, profile):
    """The page's and the API's series: every succeeded run of target and profile, oldest first, grouped
    by parameters (a set-up: n, mean, standard deviation of TPS over all its runs), and the repeat groups
    among them (the runs of one launch: n, mean, standard deviation, the group's verdict)."""
    runs = list(series_runs(target.pk, profile.pk).select_related("repeat_group")
                .defer("log", "command_line", "server_settings", "insight", "client_info"))
    groups, repeats = {}, {}
    for run in runs:
        key = _params_key(run.params)
        group = groups.setdefault(key, {"key": key, "params": run.params, "runs": []})
        group["runs"].append(run)
        if run.repeat_group_id:
            repeats.setdefault(run.repeat_group_id, {"group": run.repeat_group, "runs": []})["runs"].append(run)
    for index, group in enumerate(groups.values()):
        tps = [(r.summary or {}).get("tps") for r in group["runs"]]
        group.update(index=index, label=_params_label(group["params"]), **stats(tps))
    for repeat in repeats.values():
        members = repeat["runs"] = sorted(repeat["runs"], key=lambda r: (r.repeat_index or 0, r.pk))
        repeat.update(id=repeat["group"].pk, count=repeat["group"].count, label=_params_label(members[0].params),
                      regression=members[0].regression, trend=members[0].trend,
                      **stats([(r.summary or {}).get("tps") for r in members]))
    return runs, list(groups.values()), list(repeats.values())


def _params_key(params):
    return json.dumps(params or {}, sort_keys=True)


def _params_label(params):
    p = params or {}
    return _("%(threads)s threads · %(seconds)s s") % {"threads": "/".join(str(t) for t in thread_steps(p)), "seconds": p.get("duration_s")}


def rule():
    """The rule's settings, as the pages and the API state them."""
    return {"threshold_pct": settings.RUNS_PRACTICAL_THRESHOLD_PCT, "window": settings.RUNS_REGRESSION_WINDOW,
            "min_runs": settings.RUNS_REGRESSION_MIN_RUNS, "method": uncertainty.PREDICTION}
