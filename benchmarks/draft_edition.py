"""How long a new edition takes from text to the catalogue: draft, dry run, import (issue 24).

    .venv/bin/python benchmarks/draft_edition.py [--database perfdash_draft_bench]

Creates a throwaway PostgreSQL database, migrates it and imports the bundled whitepapers (the previous
editions), writes the made-up next edition of Huawei's 2025 MySQL whitepaper that tests/test_drafting.py
uses (new date and edition, two rows' numbers changed, a row dropped, a flavour added), then times the
three commands a maintainer runs, each a fresh `manage.py` process (Django start-up included):

    manage.py draft_whitepaper TEXT --out DRAFT
    manage.py import_whitepapers --dry-run DRAFT
    manage.py import_whitepapers DRAFT

Reading the draft's review marks and the dry run is the maintainer's part and is not timed.
Every command is an argv list; nothing goes through a shell.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

REPO = bootstrap.ROOT


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="perfdash_draft_bench")
    args = parser.parse_args()
    bootstrap.setup(own_database=False)  # the drafting helpers import the models; the database is made below
    from testbed.seeds import seeds_dir
    from testbed.drafting import hand_made, made_up_edition

    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.database}"')
        conn.execute(f'CREATE DATABASE "{args.database}"')
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{args.database}"}
    manage = [sys.executable, str(REPO / "manage.py")]

    def run(*argv):
        started = time.monotonic()
        done = subprocess.run([*manage, *argv], env=env, capture_output=True, text=True, check=True)
        return time.monotonic() - started, done.stdout + done.stderr

    run("migrate", "--verbosity", "0")
    run("import_whitepapers")
    source = seeds_dir() / hand_made("huawei-2025-10-21-mysql")["document"]["source_file"]
    with tempfile.TemporaryDirectory() as work:
        text, draft = Path(work) / "huawei-mysql-2026.txt", Path(work) / "draft.yaml"
        text.write_text(made_up_edition(source.read_text(encoding="utf-8")), encoding="utf-8")
        steps = [("draft_whitepaper", run("draft_whitepaper", str(text), "--out", str(draft))),
                 ("import_whitepapers --dry-run", run("import_whitepapers", "--dry-run", str(draft))),
                 ("import_whitepapers", run("import_whitepapers", str(draft)))]
    for name, (seconds, output) in steps:
        last = [line for line in output.splitlines() if "huawei-2026" in line or "marks" in line][:2]
        print(f"{name:30s} {seconds:6.2f} s   {' | '.join(last)}")
    print(f"{'total':30s} {sum(s for _, (s, _) in steps):6.2f} s")
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.database}"')


if __name__ == "__main__":
    main()
