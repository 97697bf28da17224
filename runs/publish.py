"""Publishing a succeeded run: a row of the "Internal measurements" document, with provenance back
to the run (Run.published_result, a one-to-one). It then appears in the pages and API like any row."""

import datetime
from decimal import ROUND_HALF_UP, Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from whitepaper.models import (
    Document,
    Engine,
    EngineVersion,
    Flavor,
    InstanceFamily,
    Methodology,
    PublishedResult,
    ResultTable,
    Vendor,
)

from .access import short_version
from .models import Run

DOCUMENT_SLUG = "internal-measurements"


def _two(value):
    return None if value is None else Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


INTERNAL_FAMILY = {"slug": "internal-target", "name": "Internal target (declared size)", "name_zh": "内部测试实例（声明规格）"}


def publish_preview(run):
    """What publishing would add, without writing: the flavour it is published under and why."""
    target = run.target
    # A client-bound run stays flagged once published: the row links to the run (Run.published_result),
    # which carries client_bound into the API and the run page.
    flag = {"client_bound": run.client_bound, "other_load": run.other_load}
    if target.flavor_id:
        return {**flag, "flavor": target.flavor, "under": _("the target's catalogue flavour")}
    if target.vcpus and target.memory_gb:
        return {**flag, "flavor": None, "under": _("an internal flavour of %(v)s vCPU / %(m)s GB (the target's declared size)") % {
            "v": target.vcpus, "m": target.memory_gb}}
    return {**flag, "flavor": None, "under": "", "problem": _("Set the target's vCPUs and memory (or its catalogue flavour) before publishing.")}


@transaction.atomic
def publish_run(run_id, *, user=None, acknowledge_other_load=False):
    """Publish the run. A run whose server saw other load (Run.other_load) needs acknowledge_other_load=True;
    who acknowledged it and when are kept on the run."""
    run = Run.objects.select_for_update(of=("self",)).select_related("target", "profile", "target__flavor").get(pk=run_id)
    if not run.can_publish:
        raise ValidationError(_("Only a succeeded run with a TPS that is not yet published (nor retracted) can be published."))
    if run.other_load and not acknowledge_other_load:
        raise ValidationError({"acknowledge_other_load": [
            _("The server saw other load during this run: acknowledge it to publish the run anyway.")]})
    target, profile, summary = run.target, run.profile, run.summary
    if not (target.vcpus and target.memory_gb) and not target.flavor_id:
        raise ValidationError(_("Set the target's vCPUs and memory (or its catalogue flavour) before publishing."))
    vendor, _created = Vendor.objects.get_or_create(slug="internal", defaults={"name": "Internal measurements", "name_zh": "内部测量"})
    document, _created = Document.objects.get_or_create(
        slug=DOCUMENT_SLUG,
        defaults={"vendor": vendor, "title": "内部测量", "title_en": "Internal measurements",
                  "published": datetime.date.today(), "language": "en",
                  "notes": "Results measured with this dashboard's benchmark runs; each row links to its run."},
    )
    methodology, _created = Methodology.objects.get_or_create(
        slug=f"internal-{profile.slug}",
        defaults={"document": document, "name": profile.name, "tool": profile.tool, "tool_version": run.tool_version,
                  "workload": profile.workload, "tables": run.params.get("tables"), "rows_per_table": run.params.get("rows_per_table"),
                  "threads": run.params.get("threads"), "duration_s": run.params.get("duration_s"),
                  "report_interval_s": run.params.get("report_interval_s"),
                  "statements_per_transaction": 20 if profile.tool == "sysbench" else summary.get("statements_per_transaction"),
                  "parameters": {k: v for k, v in run.params.items() if v not in (None, [], "")},
                  "description": profile.description},
    )
    label = f"{profile.name} · {target.get_engine_display()}"
    table, created = ResultTable.objects.get_or_create(
        document=document, label=label,
        defaults={"methodology": methodology, "columns": ["flavor", "vcpus", "memory_gb", "tps", "qps"],
                  "position": (document.tables.aggregate(m=Max("position"))["m"] or 0) + 1,
                  "section": "Benchmark runs"},
    )
    engine = Engine.objects.get(slug=target.engine)
    engine_version, _created = EngineVersion.objects.get_or_create(engine=engine, version=short_version(target.engine, run.server_version))
    # Under the target's catalogue flavour when it names one; else an internal flavour of its declared size.
    # Never a vendor family matched by name: the target's free-text family is not the vendor's.
    flavor = target.flavor or _internal_flavor(vendor, target)
    result = PublishedResult.objects.create(
        table=table, position=(table.results.aggregate(m=Max("position"))["m"] or 0) + 1,
        engine_version=engine_version, flavor=flavor, deployment="",
        tps=_two(summary.get("tps")), qps=_two(summary.get("qps")),
        printed={k: f"{_two(summary[k])}" for k in ("tps", "qps") if summary.get(k) is not None},
    )
    run.published_result = result
    fields = ["published_result"]
    if run.other_load:
        run.other_load_acknowledged_at, run.other_load_acknowledged_by = timezone.now(), user
        fields += ["other_load_acknowledged_at", "other_load_acknowledged_by"]
    run.save(update_fields=fields)
    return result


@transaction.atomic
def retract_run(run_id, *, user, reason):
    """Take a published run's row out of the catalogue; the run keeps who, when and why."""
    run = Run.objects.select_for_update(of=("self",)).get(pk=run_id)
    if run.published_result_id is None:
        raise ValidationError(_("Run %(id)s is not published.") % {"id": run.pk})
    if not (reason or "").strip():
        raise ValidationError(_("Give a reason for the retraction."))
    result = PublishedResult.objects.get(pk=run.published_result_id)
    run.published_result = None
    run.retracted_at = timezone.now()
    run.retracted_by = user
    run.retraction_reason = reason.strip()
    run.save(update_fields=["published_result", "retracted_at", "retracted_by", "retraction_reason"])
    result.delete()  # whitepaper.freshness bumps the catalogue stamp: pages and ETags change at once
    return run


def _internal_flavor(vendor, target):
    family, _created = InstanceFamily.objects.get_or_create(vendor=vendor, slug=INTERNAL_FAMILY["slug"], defaults={
        "name": INTERNAL_FAMILY["name"], "name_zh": INTERNAL_FAMILY["name_zh"]})
    vcpus, memory = target.vcpus, target.memory_gb
    ratio = f"1:{memory // vcpus}" if memory % vcpus == 0 and memory >= vcpus else ""
    flavor, _created = Flavor.objects.get_or_create(vendor=vendor, family=family, spec_code="", vcpus=vcpus,
                                                    memory_gb=memory, storage="", memory_ratio=ratio)
    return flavor
