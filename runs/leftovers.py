"""What a run leaves on its target when its worker dies before the cleanup step: the benchmark's tables (64 x 10M
rows with the full sysbench profile). The reconciler drops them while the run still holds its server and database
(so no other run can have started there), then fails the run; when the target cannot be reached, the run keeps
their names (Run.leftover_tables) and its page offers to drop them later."""

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from . import actions
from .access import ConnectionFailed, TargetAccess, execute, query_all
from .drivers import get_driver
from .models import Run

class Unreachable(Exception):
    pass


def benchmark_tables(run):
    """The tables the run's tool creates on the target (what its cleanup step drops)."""
    return get_driver(run.profile.tool).tables_created(run.params or {})


def drop_tables(target, tables):
    """DROP TABLE IF EXISTS each of them on the target, connected as every run is (runs/access.py: its password
    and TLS, in memory only). Returns the ones that existed. Raises Unreachable with the reason (secrets masked)."""
    access = TargetAccess.of(target)
    mysql = target.engine == "mysql"
    try:
        # No statement or read timeout: dropping 64 large tables may take longer than a probe's query.
        with access.session(application_name="perfdash-cleanup", statement_timeout=False) as conn:
            listed = query_all(conn, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
                               if mysql else "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            present = {row[0] for row in listed} & set(tables)
            for name in tables:
                if name in present:
                    execute(conn, f"DROP TABLE IF EXISTS `{name}`" if mysql else f'DROP TABLE IF EXISTS "{name}"')
    except ConnectionFailed as exc:
        raise Unreachable(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - the driver's error while listing or dropping
        raise Unreachable(access.clean(str(exc)).strip() or exc.__class__.__name__) from None
    return [name for name in tables if name in present]


def fail_dead_run(run, reason):
    """Fail a run whose worker died, after dropping the tables its tool left on the target (it is still active,
    so it still holds its database). Returns True when this call failed it."""
    return record_failure(run, *drop_before_failing(run, reason))


def drop_before_failing(run, reason):
    """Drop the tables a run that ended before its cleanup left on its target (the target only: nothing of the
    dashboard's database). Returns (the failure's reason, saying what was dropped or kept; the fields that keep the
    tables' names when the target could not be reached; the tables dropped), for record_failure. Kept apart from the
    write so that a write retried across a blip does not drop again and find nothing to name."""
    tables = benchmark_tables(run)
    try:
        dropped = drop_tables(run.target, tables) if tables else []
    except Unreachable as exc:
        reason, fields = keeping_tables(run, reason, _("the run ended before its cleanup, and the target could not be "
                                                       "reached to drop them: %(error)s") % {"error": exc})
        return reason, fields, []
    if dropped:
        reason += " " + _("Its tables left on the target were dropped: %(tables)s.") % {"tables": ", ".join(dropped)}
    return reason, {}, dropped


def record_failure(run, reason, fields, dropped):
    """The dashboard's side of drop_before_failing: the tables dropped are forgotten by earlier runs, the run failed."""
    forget_dropped(run, dropped)
    return actions.fail(run, reason, **fields)


def keeping_tables(run, reason, error):
    """(the reason, the run's fields) of a failure whose tables could not be dropped (`error` says why): their names
    are kept on the run (Run.leftover_tables) and its page offers to drop them once the target answers again."""
    tables = benchmark_tables(run)
    if not tables:
        return reason, {}
    reason = reason.rstrip()
    reason += ("" if reason.endswith(".") else ".") + " " + _("Its tables may be left on the target (%(error)s): %(tables)s; the run page offers to drop "
                      "them.") % {"error": error, "tables": ", ".join(tables)}
    return reason, {"leftover_tables": tables, "leftover_cause": error[:1000]}


def fail_keeping_tables(run, reason, error):
    """Fail a run whose tables could not be dropped (the target did not answer: `error`), naming them (keeping_tables)."""
    reason, fields = keeping_tables(run, reason, error)
    return actions.fail(run, reason, **fields)


def forget_dropped(run, tables):
    """`tables` were dropped from `run`'s server and database (its reset or cleanup step, the reconciler, "drop them"):
    earlier runs there that named them as left behind no longer do (they would offer to drop a later run's tables)."""
    if not tables:
        return
    for other in Run.objects.filter(database_key=run.database_key).exclude(pk=run.pk).exclude(leftover_tables=[]):
        left = [t for t in other.leftover_tables if t not in tables]
        Run.objects.filter(pk=other.pk).update(leftover_tables=left, **({} if left else {"leftover_cause": ""}))


def drop_leftovers(run):
    """The run page's "drop them": drop the tables a dead run left (Run.leftover_tables) and forget them. Refused
    while another run uses the same server and database (those tables are then its own). Returns the tables that
    were still there. Raises ValidationError with the reason."""
    if not run.leftover_tables:
        raise ValidationError(_("Run %(id)s left no tables to drop.") % {"id": run.pk})
    busy = Run.objects.active().filter(database_key=run.target.database_key()).exclude(pk=run.pk).first()
    if busy is not None:
        raise ValidationError(_("Run %(other)s is using this database now (its tables are its own): try again once it "
                                "has ended.") % {"other": busy.pk})
    try:
        dropped = drop_tables(run.target, run.leftover_tables)
    except Unreachable as exc:
        raise ValidationError(_("Cannot reach the target to drop the tables: %(error)s") % {"error": exc}) from None
    forget_dropped(run, run.leftover_tables)
    Run.objects.filter(pk=run.pk).update(leftover_tables=[], leftover_cause="")
    run.leftover_tables, run.leftover_cause = [], ""
    return dropped
