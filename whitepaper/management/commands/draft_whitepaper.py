from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from whitepaper.drafting.draft import DraftError, draft_text, dump, known_vendors


class Command(BaseCommand):
    help = ("Draft a whitepaper data file (whitepaper/data/README.md) from the document's extracted text. "
            "What the text does not determine is left empty and listed under `review:` in the file.")

    def add_arguments(self, parser):
        parser.add_argument("text_file", help="the whitepaper's text, as extracted from its PDF (UTF-8)")
        parser.add_argument("--vendor", choices=known_vendors(), help="default: recognised from the cover")
        parser.add_argument("--out", help="write the draft here (default: standard output)")

    def handle(self, *args, text_file, vendor, out, **options):
        path = Path(text_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
        try:
            draft = draft_text(text, vendor, source_file=path.name)
        except DraftError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        content = dump(draft)
        if out:
            Path(out).write_text(content, encoding="utf-8")
            rows = sum(len(t["rows"]) for t in draft["tables"])
            self.stderr.write(f"{out}: {draft['document']['slug']}, {len(draft['tables'])} tables, {rows} rows, "
                              f"{len(draft['review'])} marks for review")
        else:
            self.stdout.write(content, ending="")
