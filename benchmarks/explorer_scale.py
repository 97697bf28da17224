"""Explorer latency at 1,000 and 100,000 published results (PostgreSQL).

    .venv/bin/python benchmarks/explorer_scale.py [--rows 1000 100000] [--requests 240] [--rounds 8] [--reuse]

Generates the catalogues with benchmarks/api_scale.py's generator (same shape: documents of 50 tables x 8
sizes, 3 vendors, 14 engine versions, 15 families, 3 memory ratios; one flavour printed by many
documents, so "newest edition only" has work to do) into perfdash_bench_explorer_<rows>, then times the
explorer's HTML page in process through the whole Django stack (test client, no network), with the
rendered-page cache switched off (every request renders; the filters' choices stay cached under the
catalogue stamp, as in production), alternating the sizes every round:

  explorer      /explore/?engine=E&version=V                     (default: newest edition only, page 1)
  sorted        /explore/?engine=E&version=V&sort=-tps&latest=false
  deep page     /explore/?engine=E&latest=false&page=P           (P up to 10, a page with rows at that size)
  page 500      the middle page as a reader reaches it, by Next  (500 at 100,000 results, 5 at 1,000: the Next link
                of the page before, /explore/?latest=false&page=P&after=<cursor>, issue 39.2)
  page 500, typed  /explore/?latest=false&page=P                 (the same page by its number alone: read by offset;
                informational)

Besides wall time (p50/p99), it reports the p50 of this process's CPU time per request (time.process_time: Django
and the template, not PostgreSQL's own work) and the SQL queries per request: on a shared machine the CPU time moves
less with other processes' load than the wall time.

Targets (issue 11): p50 at 100,000 within 1.5x of p50 at 1,000 in one run; p99 < 150 ms. Issue 21: deep
pages too, through the stored, indexed document-order key (PublishedResult.document_order_key).
"""

import argparse
from collections import Counter
import gc
import os
import random
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_bench_explorer")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import api_scale  # noqa: E402  (sets DATABASE_URL and the settings module from BENCH_DATABASE_URL)

KINDS = ("explorer", "sorted", "deep page", "page 500", "page 500, typed")
TARGETED = ("explorer", "sorted", "deep page", "page 500")


def urls(kind, n):
    from whitepaper.models import PublishedResult

    rng = random.Random(42)
    combos = sorted(set(PublishedResult.objects.order_by().values_list(
        "engine_version__engine__slug", "engine_version__version")))
    picks = [rng.choice(combos) for _ in range(n)]
    if kind == "explorer":
        return [f"/explore/?engine={e}&version={v}" for e, v in picks]
    if kind == "sorted":
        return [f"/explore/?engine={e}&version={v}&sort=-tps&latest=false" for e, v in picks]
    if kind.startswith("page 500"):  # the middle page of every vendor-published result, every edition, document
        # order: page 500 at 100,000 results (offset 49,900), page 5 at 1,000: the same depth relative to the catalogue
        middle = max(2, PublishedResult.objects.visible().count() // 200)
        if kind == "page 500, typed":
            return [f"/explore/?latest=false&page={middle}"] * n
        from django.test import Client  # as a reader reaches it: the Next link of the page before

        before = Client().get(f"/explore/?latest=false&page={middle - 1}").content.decode()
        link = re.search(r'<a rel="next" href="([^"]+)"', before).group(1).replace("&amp;", "&")
        assert f"page={middle}&after=" in link, link
        return ["/explore/" + link] * n
    # A page that has rows at this size (up to page 10): at 1,000 results an engine has 1-3 pages, so
    # pages past its end would time empty pages against full ones at 100,000.
    per_engine = Counter(PublishedResult.objects.order_by().values_list("engine_version__engine__slug", flat=True))
    return [f"/explore/?engine={e}&latest=false&page={rng.randint(1, min(10, -(-per_engine[e] // 100)))}"
            for e, _ in picks]


def mark_newest(rows):
    """The generator writes rows in SQL (no signals): store "newest edition" as every catalogue write does."""
    import psycopg

    from whitepaper import newest

    api_scale.use_database(rows)
    newest.refresh()
    with psycopg.connect(api_scale.database_url(rows), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def measure(sizes, n_requests, rounds):
    from django.test import Client

    from whitepaper import pages

    pages.cacheable = lambda request: False  # render every request: measure the page, not the page cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = Client()
    plan, timings, cpu, rows_seen, queries = {}, {}, {}, {}, {}
    for rows in sizes:
        api_scale.use_database(rows)
        for kind in KINDS:
            plan[rows, kind] = urls(kind, n_requests)
            for url in plan[rows, kind][:10]:
                client.get(url)
            with CaptureQueriesContext(connection) as ctx:
                client.get(plan[rows, kind][0])
            queries[rows, kind] = len(ctx)
            timings[rows, kind], cpu[rows, kind], rows_seen[rows, kind] = [], [], []
    gc.collect()
    gc.freeze()  # as a pre-forking server does once the app is loaded (see api_scale.py)
    per_round = n_requests // rounds
    for r in range(rounds):
        for rows in sizes:
            api_scale.use_database(rows)
            for kind in KINDS:
                for url in plan[rows, kind][:3]:  # a new connection: warm it up untimed
                    client.get(url)
            for kind in KINDS:
                for url in plan[rows, kind][r * per_round:(r + 1) * per_round]:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    response = client.get(url)
                    timings[rows, kind].append((time.perf_counter() - start) * 1000)
                    cpu[rows, kind].append((time.process_time() - start_cpu) * 1000)
                    assert response.status_code == 200, (url, response.status_code)
                    rows_seen[rows, kind].append(response.content.count(b"<tr data-result="))
    return {key: (api_scale.percentile(t, 50), api_scale.percentile(t, 99), sum(rows_seen[key]) / len(rows_seen[key]),
                  api_scale.percentile(cpu[key], 50), queries[key])
            for key, t in timings.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--requests", type=int, default=240, help="requests per kind and size")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--reuse", action="store_true", help="keep databases that already hold that many rows")
    args = parser.parse_args()
    api_scale.setup_django()
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)  # DEBUG off: pages name hashed static files
    for rows in args.rows:
        if args.reuse and (api_scale.existing_count(rows) or 0) >= rows * 0.9:
            api_scale.use_database(rows)
            api_scale.migrate()  # a database made before a migration gets it (0007 computes is_newest)
            continue
        started = time.perf_counter()
        api_scale.create_database(rows)
        api_scale.use_database(rows)
        api_scale.migrate()
        api_scale.vocabulary()
        api_scale.generate(rows)
        mark_newest(rows)
        print(f"generated {api_scale.existing_count(rows):,} results in {time.perf_counter() - started:.0f} s", flush=True)
    results = measure(args.rows, args.requests, args.rounds)
    small, large = min(args.rows), max(args.rows)
    print(f"\n{'kind':<16} {'rows':>8} {'p50 ms':>8} {'p99 ms':>8} {'rows/page':>10} {'CPU p50 ms':>11} {'queries':>8}")
    for kind in KINDS:
        for rows in args.rows:
            p50, p99, shown, cpu_p50, n_queries = results[rows, kind]
            print(f"{kind:<16} {rows:>8,} {p50:>8.1f} {p99:>8.1f} {shown:>10.0f} {cpu_p50:>11.1f} {n_queries:>8}")
    print()
    for kind in KINDS:
        ratio = results[large, kind][0] / results[small, kind][0]
        cpu_ratio = results[large, kind][3] / results[small, kind][3]
        p99 = results[large, kind][1]
        verdict = ("informational" if kind not in TARGETED else 'ok' if ratio <= 1.5 and p99 < 150 else 'MISSED')
        print(f"{kind}: p50 {large:,}/{small:,} = {ratio:.2f}x (target <= 1.5x), p99 at {large:,} = {p99:.1f} ms "
              f"(target < 150 ms), CPU p50 {cpu_ratio:.2f}x: {verdict}")
    print()
    for kind in KINDS:  # information only: a page of 100 rows renders more than one of 70 (the targets above stand)
        per_row = [results[rows, kind][0] / max(results[rows, kind][2], 1) for rows in (small, large)]
        print(f"{kind}: p50 per shown row {per_row[0]:.2f} ms at {small:,}, {per_row[1]:.2f} ms at {large:,} "
              f"({per_row[1] / per_row[0]:.2f}x)")


if __name__ == "__main__":
    main()
