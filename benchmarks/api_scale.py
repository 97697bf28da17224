"""API latency at 1,000 and 1,000,000 published results (PostgreSQL).

    .venv/bin/python benchmarks/api_scale.py [--rows 1000 1000000] [--requests 400] [--rounds 8] [--reuse]

For each size, creates (drops first) the database perfdash_bench_api_<rows> (BENCH_DATABASE_URL sets
the prefix), migrates it and generates a catalogue of that many results with the same shape
(documents of 50 tables x 8 flavour sizes, 3 vendors, 14 engine versions, 15 families, 3 memory
ratios) server-side with INSERT ... SELECT over generate_series (fast on 2 cores), then VACUUM ANALYZE.
It then times, in process through the whole Django stack (middleware, DRF, serialization; the Django
test client, no network), requests of each kind over parameters sampled from the data (every one
answers 200, or 409 for an ambiguous spec), switching between the databases every round so that
load from other processes on the machine falls on both sizes alike:

  filtered list     /api/v1/results/?engine=E&version=V&min_vcpus=8&ordering=-tps&page_size=20
  spec lookup       /api/v1/spec/?engine=E&version=V&family=F&vcpus=C&memory_gb=M&vendor=X
  broad list        /api/v1/results/?engine=E&min_tps=T&ordering=-tps&pagination=cursor  (~1/4 of all rows match)
  broad list, next  the same list's `next` page (its cursor)
  broad list, count not kept  /api/v1/results/?engine=E&min_tps=T&ordering=-tps  (informational: what counting every
                    match costs a numbered page)
  filtered list, count not kept  the filtered list, its count not kept (informational)

Numbered pages keep their exact count in the cache under the catalogue stamp (whitepaper/api/pagination.py
stamped_count): "filtered list" is what a reader gets once a filter has been counted since the catalogue last
changed; the kinds "count not kept" find no count kept (a dummy cache for stamped_count), as the first request
after a change does, and count every match.

and prints p50/p99 per size, and the p50 of this process's CPU time per request (time.process_time: Django, DRF
and serialization, not PostgreSQL's own work), which moves less with other processes' load than the wall time. Measured after gc.freeze() (see measure()), as a pre-forking server would run.
Targets: the broad list (cursor) p50 at the largest size within 1.5x of the smallest's, p99 < 100 ms; the
filtered list and the spec lookup within 1.3x.
"""

import argparse
import contextlib
import gc
import os
import random
import statistics
import time

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
BENCH_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdash_bench_api")
os.environ["DATABASE_URL"] = BENCH_URL + "_1000"  # switched per size by use_database()
os.environ.pop("REDIS_URL", None)  # local-memory cache: measure the API, not Redis
os.environ.setdefault("API_ANON_RATE", "100000000/minute")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("LOG_LEVEL", "ERROR")

import psycopg  # noqa: E402

TABLES_PER_DOCUMENT = 50
SIZES = [1, 2, 4, 8, 16, 32, 64, 96]
RATIOS = [2, 4, 8]
# Vendor-published documents only: internal measurements (vendor `internal`, published runs) are a handful
# of tables in practice. (With a third of the rows internal, the exclusion hashes ~40,000 table ids per
# request: filtered list p50 x3 at a million rows; see README.)
VENDORS = [("huawei", "Huawei Cloud"), ("alibaba", "Alibaba Cloud"), ("tencent", "Tencent Cloud")]
FAMILIES = ["general", "dedicated", "general-enhanced", "kunpeng-general-enhanced", "memory"]
VERSIONS = [("mysql", "5.6"), ("mysql", "5.7"), ("mysql", "8.0"), ("postgresql", "9.6"), ("postgresql", "12"),
            ("postgresql", "13"), ("postgresql", "14"), ("postgresql", "15"), ("postgresql", "16"),
            ("sqlserver", "2014"), ("sqlserver", "2016"), ("sqlserver", "2019"), ("ppas", "10"), ("ppas", "11")]


def database_url(rows):
    return f"{BENCH_URL}_{rows}"


def create_database(rows):
    name = database_url(rows).rsplit("/", 1)[1]
    admin = BENCH_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def existing_count(rows):
    try:
        with psycopg.connect(database_url(rows)) as conn:
            return conn.execute("SELECT count(*) FROM whitepaper_publishedresult").fetchone()[0]
    except psycopg.Error:
        return None


def use_database(rows):
    """Point Django's default connection at the database of this size, and forget the catalogue stamp read from
    the other one (whitepaper.freshness keeps it for a second per process: the cached filter choices and pages of one
    size would otherwise answer requests to the other)."""
    from django.db import connection

    from whitepaper.freshness import forget_stamp

    connection.close()
    connection.settings_dict["NAME"] = database_url(rows).rsplit("/", 1)[1]
    forget_stamp()


def setup_django():
    bootstrap.setup(own_database=False)  # the databases per size are made by the generator


def migrate():
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def vocabulary():
    """Vendors, engines, versions, families and the 360 flavours, through the ORM (small)."""
    from whitepaper.models import Engine, EngineVersion, Flavor, InstanceFamily, Vendor

    for slug, name in VENDORS:
        vendor = Vendor.objects.create(slug=slug, name=name)
        for family_slug in FAMILIES:
            family = InstanceFamily.objects.create(vendor=vendor, slug=family_slug, name=family_slug.title())
            Flavor.objects.bulk_create(
                Flavor(vendor=vendor, family=family, vcpus=c, memory_gb=c * r, memory_ratio=f"1:{r}")
                for r in RATIOS for c in SIZES)
    for engine_slug in dict(VERSIONS):
        Engine.objects.create(slug=engine_slug, name=engine_slug)
    for engine_slug, version in VERSIONS:
        EngineVersion.objects.create(engine=Engine.objects.get(slug=engine_slug), version=version)


GENERATE_SQL = """
-- documents, one methodology each
INSERT INTO whitepaper_document (slug, vendor_id, title, title_en, edition, published, language, source_file, notes, notes_zh, changed_at)
SELECT 'bench-' || d, (SELECT id FROM whitepaper_vendor ORDER BY id OFFSET (d %% 3) LIMIT 1),
       'Benchmark document ' || d, '', '01', DATE '2012-01-01' + ((d * 37) %% 5000), 'zh-hans', '', '', '', now()
FROM generate_series(1, %(documents)s) AS d;

INSERT INTO whitepaper_methodology (slug, document_id, name, name_zh, tool, tool_version, workload, workload_zh, client,
    client_zh, parameters, parameters_zh, description, description_zh)
SELECT 'm-' || doc.slug, doc.id, 'sysbench OLTP read-write', '', 'sysbench', '1.0.18', 'oltp', '', '', '', '{}'::jsonb, '{}'::jsonb, '', ''
FROM whitepaper_document doc;

-- tables: a random engine version, family (of the document's vendor) and memory ratio each
CREATE TEMP TABLE bench_table AS
SELECT t, ((t - 1) / %(per_document)s) + 1 AS d, ((t - 1) %% %(per_document)s) + 1 AS position,
       abs(hashtext('v' || t)) %% %(versions)s AS v, abs(hashtext('f' || t)) %% %(families)s AS f,
       abs(hashtext('r' || t)) %% %(ratios)s AS r
FROM generate_series(1, %(tables)s) AS t;

INSERT INTO whitepaper_resulttable (document_id, position, label, label_printed, section, methodology_id, columns, notes,
    label_en, section_en, notes_zh, heading, heading_en, version_example)
SELECT doc.id, bt.position, 'Table ' || bt.position, true, '1.' || bt.position, m.id,
       '["vcpus", "memory_gb", "max_connections", "tps", "qps"]'::jsonb, '', '', '', '', '', '', false
FROM bench_table bt JOIN whitepaper_document doc ON doc.slug = 'bench-' || bt.d
JOIN whitepaper_methodology m ON m.document_id = doc.id;

CREATE TEMP TABLE bench_version AS
SELECT (row_number() OVER (ORDER BY id)) - 1 AS v, id FROM whitepaper_engineversion;
CREATE TEMP TABLE bench_flavor AS
SELECT fl.id, fl.vendor_id, fam.slug AS family, fl.vcpus, fl.memory_gb, fl.memory_ratio FROM whitepaper_flavor fl
JOIN whitepaper_instancefamily fam ON fam.id = fl.family_id;

-- results: 8 sizes per table, TPS growing with cores, QPS = 20 x TPS
INSERT INTO whitepaper_publishedresult (table_id, position, engine_version_id, flavor_id, deployment, edition,
    iops_depends_on_disk, printed, max_connections, tps, qps, updated_at)
SELECT rt.id, s.i, bv.id, bf.id, '', '', true,
       jsonb_build_object('tps', to_char(x.tps, 'FM999999990.00'), 'qps', to_char(x.tps * 20, 'FM9999999990.00'),
                          'max_connections', (bf.memory_gb * 250)::text),
       bf.memory_gb * 250, x.tps, x.tps * 20, now()
FROM bench_table bt
JOIN whitepaper_document doc ON doc.slug = 'bench-' || bt.d
JOIN whitepaper_resulttable rt ON rt.document_id = doc.id AND rt.position = bt.position
JOIN bench_version bv ON bv.v = bt.v
CROSS JOIN LATERAL (SELECT i, (ARRAY[%(sizes)s])[i] AS vcpus FROM generate_series(1, %(n_sizes)s) AS i) s
JOIN bench_flavor bf ON bf.vendor_id = doc.vendor_id AND bf.family = (ARRAY[%(family_names)s])[bt.f + 1]
     AND bf.vcpus = s.vcpus AND bf.memory_ratio = '1:' || (ARRAY[%(ratio_values)s])[bt.r + 1]
CROSS JOIN LATERAL (SELECT round((150 * power(s.vcpus, 0.85) * (0.8 + (abs(hashtext('x' || rt.id || '-' || s.i)) %% 400) / 1000.0))::numeric, 2) AS tps) x;
"""


def generate(rows):
    from django.db import connection

    tables = rows // len(SIZES)
    params = {
        "documents": -(-tables // TABLES_PER_DOCUMENT), "per_document": TABLES_PER_DOCUMENT, "tables": tables,
        "versions": len(VERSIONS), "families": len(FAMILIES), "ratios": len(RATIOS), "n_sizes": len(SIZES),
    }
    sql = GENERATE_SQL % {**params, "sizes": ", ".join(map(str, SIZES)),
                          "family_names": ", ".join(f"'{f}'" for f in FAMILIES),
                          "ratio_values": ", ".join(map(str, RATIOS))}
    with connection.cursor() as cursor:
        for statement in [s for s in sql.split(";\n") if s.strip()]:
            cursor.execute(statement)
        cursor.execute("DROP TABLE bench_table, bench_version, bench_flavor")
    from whitepaper import order_key

    order_key.refresh()  # written in SQL, no signals: store each row's document-order key as every writer does
    connection.close()
    with psycopg.connect(database_url(rows), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def queries(kind, n):
    """n request URLs of one kind, parameters sampled (fixed seed) from what the database holds."""
    from whitepaper.models import PublishedResult

    rng = random.Random(42)
    if kind == "spec lookup":  # vendor-published rows: what the lookup answers by default (no include_internal)
        combos = list(PublishedResult.objects.visible().order_by().values_list(
            "engine_version__engine__slug", "engine_version__version", "flavor__family__slug", "flavor__vcpus",
            "flavor__memory_gb", "table__document__vendor__slug").distinct())
        return [f"/api/v1/spec/?engine={e}&version={v}&family={f}&vcpus={c}&memory_gb={m}&vendor={x}"
                for e, v, f, c, m, x in (rng.choice(combos) for _ in range(n))]
    combos = list(PublishedResult.objects.order_by().values_list(
        "engine_version__engine__slug", "engine_version__version", "flavor__family__slug").distinct())
    if kind.startswith("filtered list"):  # a full page of 20 at every size (~45 matches at 1k, ~45,000 at 1M)
        return [f"/api/v1/results/?engine={e}&version={v}&min_vcpus=8&ordering=-tps&page_size=20"
                for e, v, _ in (rng.choice(combos) for _ in range(n))]
    engines = sorted({e for e, _, _ in combos})
    broad = [f"/api/v1/results/?engine={rng.choice(engines)}&min_tps={rng.choice([500, 1000, 2000])}&ordering=-tps"
             for _ in range(n)]
    if kind == "broad list, count not kept":
        return broad
    cursor = [f"{url}&pagination=cursor" for url in broad]
    if kind == "broad list":
        return cursor
    from django.test import Client  # "broad list, next": the first pages' `next` links

    client = Client()
    return [client.get(url).json()["next"].replace("http://testserver", "") for url in cursor]


KINDS = ("filtered list", "filtered list, count not kept", "spec lookup", "broad list", "broad list, next",
         "broad list, count not kept")
TARGETS = {"filtered list": 1.3, "spec lookup": 1.3, "broad list": 1.5, "broad list, next": 1.5}


@contextlib.contextmanager
def counted_as(kind):
    """For a kind "..., count not kept": stamped_count finds no count kept, so every request counts."""
    from django.core.cache.backends.dummy import DummyCache

    from whitepaper.api import pagination

    kept = pagination.cache
    if kind.endswith("count not kept"):
        pagination.cache = DummyCache("none", {})
    try:
        yield
    finally:
        pagination.cache = kept


def measure(sizes, n_requests, rounds):
    from django.conf import settings
    from django.test import Client

    # Without REDIS_URL the rate limit counts in a database table (a write and a commit per request, the same at
    # every size): count it in the local-memory cache instead, as before issue 37, to measure the API.
    settings.API_RATE_LIMIT_CACHE = "default"
    client = Client()
    urls, timings, statuses, cpu = {}, {}, {}, {}
    for rows in sizes:
        use_database(rows)
        for kind in KINDS:
            urls[rows, kind] = queries(kind, n_requests)
            for url in urls[rows, kind][:20]:  # warm-up: plans, caches, buffers
                client.get(url)
            timings[rows, kind], statuses[rows, kind], cpu[rows, kind] = [], {}, []
    # As a pre-forking server does once the app is loaded (gunicorn post_fork / end of config/wsgi.py):
    # move the objects of the loaded code out of the cyclic GC's way, or its full collections scan them
    # all, which costs 100+ ms at the tail whatever the database size.
    gc.collect()
    gc.freeze()
    per_round = n_requests // rounds
    for r in range(rounds):
        for rows in sizes:
            use_database(rows)
            # A new connection starts with cold caches (PostgreSQL's relation cache, plans): warm it up
            # untimed, as a server keeping its connections (CONN_MAX_AGE) would have it.
            for kind in KINDS:
                for url in urls[rows, kind][:3]:
                    client.get(url)
            for kind in KINDS:
                with counted_as(kind):
                    for url in urls[rows, kind][r * per_round:(r + 1) * per_round]:
                        start, start_cpu = time.perf_counter(), time.process_time()
                        response = client.get(url)
                        timings[rows, kind].append((time.perf_counter() - start) * 1000)
                        cpu[rows, kind].append((time.process_time() - start_cpu) * 1000)
                        bucket = statuses[rows, kind]
                        bucket[response.status_code] = bucket.get(response.status_code, 0) + 1
    return {key: (percentile(t, 50), percentile(t, 99), statistics.mean(t), statuses[key], percentile(cpu[key], 50))
            for key, t in timings.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--requests", type=int, default=400, help="requests per kind and size")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--reuse", action="store_true", help="keep databases that already hold the right count")
    args = parser.parse_args()
    sizes = sorted(args.rows)

    setup_django()
    from whitepaper.models import PublishedResult

    for rows in sizes:
        if args.reuse and existing_count(rows) == rows:
            print(f"{database_url(rows).rsplit('/', 1)[1]}: reusing {rows:,} results", flush=True)
            use_database(rows)
            migrate()  # a database made before a migration gets it (0017: the editions index)
            continue
        create_database(rows)
        use_database(rows)
        migrate()
        vocabulary()
        start = time.perf_counter()
        generate(rows)
        use_database(rows)
        print(f"{database_url(rows).rsplit('/', 1)[1]}: generated {PublishedResult.objects.count():,} results "
              f"in {time.perf_counter() - start:.1f} s", flush=True)

    results = measure(sizes, args.requests, args.rounds)
    print(f"\n{args.requests} requests per kind and size, in {args.rounds} alternating rounds (ms)")
    for rows in sizes:
        for kind in KINDS:
            p50, p99, mean, status, cpu_p50 = results[rows, kind]
            print(f"  {rows:>9,} rows  {kind:<17} p50 {p50:6.1f}  p99 {p99:6.1f}  mean {mean:6.1f}  CPU p50 {cpu_p50:5.1f}  "
                  f"statuses {status}")

    small, large = sizes[0], sizes[-1]
    if small != large:
        print("\nverdict (targets: p99 < 100 ms at the largest size; its p50 within 1.5 x (broad list) or 1.3 x "
              "(filtered list, spec lookup) of the smallest's)")
        for kind in KINDS:
            p50_small, p50_large, p99_large = results[small, kind][0], results[large, kind][0], results[large, kind][1]
            ratio = p50_large / p50_small
            cpu_ratio = results[large, kind][4] / results[small, kind][4]
            target = "  (informational)" if kind not in TARGETS else (
                f"  p99: {'PASS' if p99_large < 100 else 'FAIL'}  p50 ratio (<= {TARGETS[kind]}): "
                f"{'PASS' if ratio <= TARGETS[kind] else 'FAIL'}")
            print(f"  {kind:<17} p50 {p50_small:.1f} -> {p50_large:.1f} ms (x{ratio:.2f}), CPU p50 x{cpu_ratio:.2f}, "
                  f"p99 {p99_large:.1f} ms{target}")


if __name__ == "__main__":
    main()
