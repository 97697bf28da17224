"""Runs over time: a series is the succeeded runs of one target and profile with the same parameters
(other parameters measure something else); each new run is judged against the last runs of its series.
The one definition of a regression (thresholds in settings, RUNS_REGRESSION_*):

  a run regressed when its TPS is more than RUNS_REGRESSION_THRESHOLD_PCT % below the median of the last
  RUNS_REGRESSION_WINDOW earlier runs of its series AND below their noise band (mean - 2 sample standard
  deviations); with fewer than RUNS_REGRESSION_MIN_RUNS earlier runs it is not judged (null)."""

import logging
import statistics

from django.conf import settings
from django.urls import reverse
from django.utils.http import urlencode

from .models import Run, RunState

log = logging.getLogger(__name__)
BAND_SIGMAS = 2


def series_runs(target_id, profile_id, params=None):
    """The succeeded runs of a series, oldest first (params: only runs with exactly these parameters)."""
    runs = Run.objects.filter(target_id=target_id, profile_id=profile_id, state=RunState.SUCCEEDED)
    if params is not None:
        runs = runs.filter(params=params)
    return runs.order_by("finished_at", "id")


def series_url(run):
    return reverse("runs:series") + "?" + urlencode({"target": run.target_id, "profile": run.profile_id})


def judge(tps, earlier):
    """The judgement of `tps` against the earlier runs' TPS values (oldest first): a dict, with
    `regression` True / False, or None when there are too few earlier runs."""
    window = earlier[-settings.RUNS_REGRESSION_WINDOW:]
    threshold = settings.RUNS_REGRESSION_THRESHOLD_PCT
    out = {"threshold_pct": threshold, "window": len(window), "min_runs": settings.RUNS_REGRESSION_MIN_RUNS,
           "band_sigmas": BAND_SIGMAS, "tps": tps}
    if tps is None or len(window) < settings.RUNS_REGRESSION_MIN_RUNS:
        return {**out, "regression": None}
    median = statistics.median(window)
    mean = statistics.fmean(window)
    stdev = statistics.stdev(window) if len(window) > 1 else 0.0
    low, high = mean - BAND_SIGMAS * stdev, mean + BAND_SIGMAS * stdev
    change = 100.0 * (tps - median) / median if median else None
    regression = bool(median) and tps < median * (1 - threshold / 100) and tps < low
    return {**out, "median": round(median, 2), "mean": round(mean, 2), "stdev": round(stdev, 2),
            "band": [round(low, 2), round(high, 2)], "change_pct": round(change, 1) if change is not None else None,
            "regression": regression}


def record_judgement(run):
    """Judge a run that just succeeded against the earlier runs of its series and store it on the run.
    Never fails the run: an error is logged and the run stays unjudged."""
    try:
        earlier = list(series_runs(run.target_id, run.profile_id, run.params).exclude(pk=run.pk)
                       .filter(finished_at__lte=run.finished_at).values("id", "summary"))
        values = [(r["summary"] or {}).get("tps") for r in earlier]
        pairs = [(r["id"], v) for r, v in zip(earlier, values) if v is not None][-settings.RUNS_REGRESSION_WINDOW:]
        verdict = judge((run.summary or {}).get("tps"), [v for _, v in pairs])
        verdict["earlier_runs"] = [i for i, _ in pairs]
        Run.objects.filter(pk=run.pk).update(regression=verdict["regression"], trend=verdict)
        run.regression, run.trend = verdict["regression"], verdict
    except Exception:  # noqa: BLE001 - the judgement is extra: the measured run stands without it
        log.exception("could not judge run %s against its series", run.pk)


def series(target, profile):
    """The page's and the API's series: every succeeded run of target and profile, oldest first, grouped
    by parameters (a group = repeats of one set-up: n, mean, standard deviation of TPS)."""
    runs = list(series_runs(target.pk, profile.pk).defer("log", "command_line", "server_settings", "insight", "client_info"))
    groups = {}
    for run in runs:
        key = _params_key(run.params)
        group = groups.setdefault(key, {"key": key, "params": run.params, "runs": []})
        group["runs"].append(run)
    for index, group in enumerate(groups.values()):
        tps = [(r.summary or {}).get("tps") for r in group["runs"] if (r.summary or {}).get("tps") is not None]
        group.update(index=index, n=len(tps), mean=round(statistics.fmean(tps), 2) if tps else None,
                     stdev=round(statistics.stdev(tps), 2) if len(tps) > 1 else None,
                     label=_params_label(group["params"]))
    return runs, list(groups.values())


def _params_key(params):
    import json

    return json.dumps(params or {}, sort_keys=True)


def _params_label(params):
    from .params import thread_steps

    from django.utils.translation import gettext as _

    p = params or {}
    return _("%(threads)s threads · %(seconds)s s") % {"threads": "/".join(str(t) for t in thread_steps(p)), "seconds": p.get("duration_s")}


def rule():
    """The rule's settings, as the pages and the API state them."""
    return {"threshold_pct": settings.RUNS_REGRESSION_THRESHOLD_PCT, "window": settings.RUNS_REGRESSION_WINDOW,
            "min_runs": settings.RUNS_REGRESSION_MIN_RUNS, "band_sigmas": BAND_SIGMAS}
