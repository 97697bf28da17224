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
