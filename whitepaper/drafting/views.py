"""The staff page: upload a whitepaper's text, review the draft (its tables, review marks, what the import
would change, the edition diff against the previous edition), download it, import it after confirmation."""

import tempfile
from pathlib import Path

import yaml
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from config.permissions import staff_required

from whitepaper import editions
from whitepaper.importer import (
    DataFileError,
    import_files,
    parse_document_file,
    plan_document,
    sync_vocabulary,
)

from .draft import DraftError, draft_text, dump, known_vendors
from .review import edition_diff

MAX_TEXT_BYTES = 2 * 1024 * 1024


@staff_required(gettext_lazy("Only staff can draft and import whitepapers."))
@require_http_methods(["GET", "POST"])
def draft_review(request):
    context = {"vendors": known_vendors(), "errors": []}
    if request.method == "POST" and request.POST.get("action") == "import":
        content = request.POST.get("draft", "")
        if request.POST.get("confirm") != "yes":
            context["errors"].append(_("Tick “I have reviewed the draft” to import it."))
            _review(context, content)
        else:
            with _draft_file(content) as path:
                try:
                    sync_vocabulary()
                    context["imported"] = import_files([path])
                except DataFileError as exc:
                    context["errors"].append(_reason(exc, path))
    elif request.method == "POST":
        upload = request.FILES.get("text")
        vendor = request.POST.get("vendor") or None
        if upload is None:
            context["errors"].append(_("Choose the whitepaper's text file."))
        elif upload.size > MAX_TEXT_BYTES:
            context["errors"].append(_("The text file is larger than 2 MB."))
        elif vendor and vendor not in context["vendors"]:
            context["errors"].append(_("Unknown vendor."))
        else:
            try:
                draft = draft_text(upload.read().decode("utf-8"), vendor, source_file=Path(upload.name).name)
            except UnicodeDecodeError:
                context["errors"].append(_("The text file is not UTF-8."))
            except DraftError as exc:
                context["errors"].append(f"{upload.name}: {exc}")
            else:
                _review(context, dump(draft))
    return render(request, "whitepaper/draft_review.html", context)


class _draft_file:
    """The posted draft as a file the importer reads (it names files in its messages)."""

    def __init__(self, content):
        self.content = content

    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory()
        path = Path(self.dir.name) / "draft.yaml"
        path.write_text(self.content, encoding="utf-8")
        return path

    def __exit__(self, *exc):
        self.dir.cleanup()


def _reason(exc, path):
    return str(exc).replace(str(path), "draft.yaml")


def _review(context, content):
    with _draft_file(content) as path:
        try:
            parsed = parse_document_file(path)
            plan = plan_document(parsed)
        except DataFileError as exc:
            context["errors"].append(_reason(exc, path))
            return
    data = yaml.load(content, Loader=yaml.BaseLoader)
    previous, tables = edition_diff(parsed)
    context.update(
        content=content, data=data, plan=plan, previous=previous, diff_tables=tables,
        marks=data.get("review") or [],
        totals={s: sum(t.counts[s] for t in tables) for s in editions.STATUSES},
        filename=f"{parsed.document['slug']}.yaml",
    )
