"""The README is the map and docs/ the manual (issue 38.1): the manual builds strictly, so a broken link or
anchor fails here, and the README stays a map a newcomer reads in minutes."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_it_builds_the_manual_strictly(tmp_path):
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                           cwd=ROOT, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "runs" / "index.html").exists()


def test_it_keeps_the_readme_a_map():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "## Map of the code" in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


# --- The README's map is true to the tree (issue 51.6) ----------------------------------------------------------
# The map is a tree of entries: a line at column 0 opens a top-level entry (`config/`, `whitepaper/`, ...), a line
# at column 2 under it one of its own (`  models.py`, `  api/`); deeper lines continue the entry above them.

MAPPED = ["config", "whitepaper", "runs"]  # each module (.py) of these is named in the map
NAMED = re.compile(r"(?<![\w./-])([a-z_][\w/]*\.(?:py|js|css|svg))\b")  # a file the map names (Chart.js is a library)


def map_entries():
    """[(directories the entry is about, its text)] of the README's map: a top-level entry's text leaves out its
    sub-directories' entries (`whitepaper/`'s `views.py` is not the `api/` entry's)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Map of the code", 1)[1].split("```", 2)[1]
    entries, top, current = [], None, None
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        head = line.strip().split("  ", 1)[0]
        if indent == 0:
            dirs = [d.rstrip("/") for d in re.findall(r"[\w.]+/", head)]
            top = current = {"dirs": dirs, "text": line}
            entries.append(top)
        elif indent == 2 and head.endswith("/"):
            current = {"dirs": [f"{top['dirs'][0]}/{head.rstrip('/')}"], "text": line, "sub": True}
            entries.append(current)
        elif indent == 2:
            top["text"] += "\n" + line
            current = top  # a module's own line: its continuation lines go to the top-level entry
        else:
            current["text"] += "\n" + line
    return entries


def entry_of(path):
    """The entry that names a file: the deepest entry whose directory holds it (management/commands: management/)."""
    owners = [e for e in map_entries() for d in e["dirs"] if path.startswith(d + "/")]
    return max(owners, key=lambda e: max(len(d) for d in e["dirs"] if path.startswith(d + "/")), default=None)


def named_in(name, text):
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text) is not None


def test_the_map_names_every_module_and_static_file_in_its_own_entry():
    files = [p for package in MAPPED for p in (ROOT / package).rglob("*.py")
             if "migrations" not in p.parts and p.name != "__init__.py"]
    files += [p for p in (ROOT / "static").rglob("*") if p.is_file()]
    unnamed = []
    for path in sorted(files):
        relative = path.relative_to(ROOT).as_posix()
        entry = entry_of(relative)
        # a management command is named as it is typed (`import_whitepapers`), anything else by its file name
        name = path.stem if "commands" in path.parts else path.name
        if entry is None or not named_in(name, entry["text"]):
            unnamed.append(relative)
    assert unnamed == [], "add these to the README's map, in the entry of their directory"


def test_every_file_the_map_names_exists():
    tree = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()
            and not {"node_modules", ".git", ".venv", "var"} & set(p.relative_to(ROOT).parts)]
    missing = []
    for entry in map_entries():
        for name in NAMED.findall(entry["text"]):
            # under the entry's directory or one above it: `js/charts.js` in static/'s entry, `editions.py` in
            # whitepaper/drafting/'s, `tests/settings.py` in tests/'s; `manage.py` at the top
            if not any(f == name or f.endswith("/" + name) and any(f.startswith(d.split("/")[0] + "/")
                                                                     for d in entry["dirs"]) for f in tree):
                missing.append(f"{entry['dirs']}: {name}")
    assert missing == [], missing


def test_the_map_reader_sees_the_entries():
    # Sanity: the reader finds what a wrong reading would miss, so the two tests above cannot pass empty.
    assert named_in("renderers.py", entry_of("whitepaper/api/renderers.py")["text"])
    assert not named_in("models.py", entry_of("whitepaper/api/renderers.py")["text"])
    assert named_in("cursors.py", entry_of("whitepaper/cursors.py")["text"])
    assert not named_in("serializers.py", entry_of("whitepaper/cursors.py")["text"])
    assert named_in("runs_compare.js", entry_of("static/js/runs_compare.js")["text"])
    assert named_in("seed_profiles", entry_of("runs/management/commands/seed_profiles.py")["text"])
