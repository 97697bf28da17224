"""The rules a schedule must meet (runs.models.Schedule.clean asks them; forms, the API and the admin reach them
through full_clean): a cron expression Celery's parser reads, due times far enough apart for the runs they start,
a usable target, a profile of the target's engine, overrides the profile accepts, a large set-up confirmed. Pure: nothing here reads or
writes the database beyond the schedule's own target and profile."""

import datetime

from celery.schedules import ParseException, crontab
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .footprint import estimate, describe, needs_confirmation
from .params import expected_seconds, non_ascii_digits

CRON_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
FIELD_WORDS = {"minute": gettext_lazy("minute"), "hour": gettext_lazy("hour"), "day_of_month": gettext_lazy("day of month"),
               "month_of_year": gettext_lazy("month"), "day_of_week": gettext_lazy("day of week")}
# How far ahead the shortest gap between due times is looked for: a year and a bit covers every pattern of
# months and weekdays (a 29 February only schedule is years apart anyway).
PERIOD_HORIZON_DAYS = 400


def parse_cron(expression):
    """'m h dom mon dow' -> the crontab fields, checked by Celery's own parser. ValidationError names `cron`."""
    if non_ascii_digits(expression or ""):
        # Celery's parser reads them (int("٣") is 3) and the beat entry would keep them as typed.
        raise ValidationError({"cron": [_("Write the cron's numbers with the digits 0-9 (found %(digits)s).") % {
            "digits": " ".join(dict.fromkeys(non_ascii_digits(expression)))}]})
    parts = (expression or "").split()
    if len(parts) != 5:
        raise ValidationError({"cron": [_("Give five fields: minute hour day-of-month month day-of-week (e.g. '0 3 * * *').")]})
    fields = dict(zip(CRON_FIELDS, parts))
    for name, value in fields.items():  # one at a time, so the message names the field Celery refused
        try:
            crontab(**{name: value})
        except (ValueError, TypeError, ParseException) as exc:  # ParseException ('-1', ',') is not a ValueError
            raise ValidationError({"cron": [_("Not a valid cron expression: %(field)s %(value)s: %(error)s") % {
                "field": FIELD_WORDS[name], "value": repr(value[:20]), "error": exc}]}) from None
    try:
        crontab(**fields)
    except (ValueError, TypeError, ParseException) as exc:
        raise ValidationError({"cron": [_("Not a valid cron expression: %(error)s") % {"error": exc}]}) from None
    return fields


def shortest_period(fields, start=None):
    """The shortest time in seconds between two due times of a cron (celery's crontab: the day must match the
    day of month, the month and the weekday, all of them), over the next PERIOD_HORIZON_DAYS; None with fewer
    than two due times."""
    cron = crontab(**fields)
    times = sorted(h * 60 + m for h in cron.hour for m in cron.minute)  # minutes of a due day
    start = start or datetime.date.today()
    days = [n for n in range(PERIOD_HORIZON_DAYS)
            if (d := start + datetime.timedelta(days=n)).month in cron.month_of_year and d.day in cron.day_of_month
            and d.isoweekday() % 7 in cron.day_of_week]
    gaps = [b - a for a, b in zip(times, times[1:])] if days else []
    gaps += [(b - a) * 1440 + times[0] - times[-1] for a, b in zip(days, days[1:])]
    return min(gaps) * 60 if gaps else None


def run_seconds(schedule, params):
    """How long one due time's runs measure: each run's steps x (warm-up + duration), times the repeats."""
    return expected_seconds(params) * (schedule.repeats or 1)


def schedule_errors(schedule):
    """{field: [messages]} for what is wrong with a schedule (Schedule.clean asks; forms, the API and the
    admin reach it through full_clean): the cron expression, an archived target, a profile of another
    engine or not runnable here, overrides the profile refuses, a large set-up not confirmed."""
    errors = {}
    try:
        fields = parse_cron(schedule.cron)
    except ValidationError as exc:
        errors.update(exc.message_dict)
        fields = None
    target = schedule.target if schedule.target_id else None
    profile = schedule.profile if schedule.profile_id else None
    if target is not None and target.archived_at:
        errors["target"] = [_("Target %(t)s is archived: it takes no new runs.") % {"t": target.name}]
    if not isinstance(schedule.overrides, dict):
        errors["overrides"] = [_("Write an object of field: value, e.g. {\"threads\": 8}.")]
    elif profile is not None:
        try:
            params = profile.resolve(schedule.overrides)
        except ValidationError as exc:
            params = None
            for field, messages in exc.message_dict.items():
                if field in ("profile", "overrides"):  # not runnable here; unknown override names
                    errors.setdefault(field, []).extend(messages)
                else:  # one override's value: named inside the overrides
                    errors.setdefault("overrides", []).extend(f"{field}: {m}" for m in messages)
        period = shortest_period(fields) if fields and params else None
        if period is not None and isinstance(schedule.repeats, int) and period < (needed := run_seconds(schedule, params)):
            # A due time while the last one's runs still go would only be skipped (start_scheduled_run).
            errors.setdefault("cron", []).append(_(
                "Its due times come as little as %(period)s s apart, but each due time's runs take %(needed)s s "
                "(steps x (warm-up + duration) x repeats): choose a longer period or shorter runs.") % {
                "period": period, "needed": needed})
        if params and isinstance(schedule.repeats, int) and not schedule.large_run_confirmed and needs_confirmation(
                found := estimate(params, schedule.repeats)):
            # As a large launch asks for `confirm` (runs/footprint.py), a schedule asks once, when it is saved: each
            # due time then launches what its author confirmed, and a set-up that grew past the bound since is
            # refused at the due time (kept as the schedule's last_error) rather than launched unasked.
            errors["large_run_confirmed"] = [_("%(estimate)s Confirm to run it at every due time (the form's "
                                               "\"large run confirmed\" box; the API's \"large_run_confirmed\": true).") % {
                "estimate": describe(found)}]
        if target is not None and profile.engine != target.engine:
            errors.setdefault("profile", []).append(_("This profile is for %(engine)s; the target is %(te)s.") % {
                "engine": profile.get_engine_display(), "te": target.get_engine_display()})
    return errors
