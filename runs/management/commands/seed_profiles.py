"""Create or update the benchmark profiles of the whitepapers' methodologies (idempotent).

Profiles stay editable in the admin; running this again resets the seeded ones to the methodology."""

from django.core.management.base import BaseCommand

from runs.models import BenchmarkProfile
from whitepaper.models import Methodology

SWEEP = [8, 16, 32, 64, 128]
# A quick profile warms up for 2 s, measured and left out of its figures (issue 46.4): the first second of a cold
# run ran at about 0.87x the rest on this machine. Not 1 s: sysbench 1.0.20 once crashed (signal 11) at the forced
# shutdown of a 1 s step on a loaded machine.
QUICK = {"duration_s": 3, "report_interval_s": 1, "threads": 2, "thread_sweep": [], "warmup_s": 2}
PROFILES = [
    # Huawei: sysbench OLTP read-write, 64 tables x 10,000,000 rows, 200 threads (MySQL) / 64 (PostgreSQL),
    # 3600 s, report every 3 s. sysbench 1.0's oltp_read_write runs the legacy oltp.lua mix.
    dict(slug="sysbench-oltp-rw-mysql", name="sysbench OLTP read-write, MySQL (Huawei whitepaper)", tool="sysbench",
         engine="mysql", workload="oltp_read_write", tables=64, rows_per_table=10_000_000, threads=200, thread_sweep=SWEEP,
         duration_s=3600, report_interval_s=3, methodology="huawei-2025-10-21-mysql-sysbench-80"),
    dict(slug="sysbench-oltp-rw-postgresql", name="sysbench OLTP read-write, PostgreSQL (Huawei whitepaper)", tool="sysbench",
         engine="postgresql", workload="oltp_read_write", tables=64, rows_per_table=10_000_000, threads=64,
         thread_sweep=SWEEP, duration_s=3600, report_interval_s=3, methodology="huawei-2025-10-21-postgresql-sysbench-oltp"),
    # Alibaba: pgbench -M prepared -P 1 with ro.sql / rw.sql (gaussian aid over :range), -c = -j, -T 120.
    dict(slug="pgbench-ro", name="pgbench read-only, ro.sql (Alibaba whitepaper)", tool="pgbench", engine="postgresql",
         workload="ro", scale=1000, range=10_000_000, threads=64, duration_s=120, report_interval_s=1,
         methodology="alibaba-2019-06-18-rds-pg-pgbench"),
    dict(slug="pgbench-rw", name="pgbench read-write, rw.sql (Alibaba whitepaper)", tool="pgbench", engine="postgresql",
         workload="rw", scale=1000, range=10_000_000, threads=64, duration_s=120, report_interval_s=1,
         methodology="alibaba-2019-06-18-rds-pg-pgbench"),
    dict(slug="pgbench-tpcb", name="pgbench built-in TPC-B-like", tool="pgbench", engine="postgresql", workload="tpcb",
         scale=100, threads=32, duration_s=120, report_interval_s=1),
]
QUICK_SIZES = {"sysbench": {"tables": 1, "rows_per_table": 1000}, "pgbench": {"scale": 1, "range": 100_000}}
HAMMERDB = dict(slug="hammerdb-tpcc-sqlserver", methodology="huawei-2023-08-03-rds-hammerdb-sqlserver", name="HammerDB TPC-C, SQL Server (reference only: not runnable here)",
                tool="hammerdb", engine="sqlserver", workload="tpcc", threads=64, duration_s=600,
                description="HammerDB 2.19 TPC-C, virtual users raised until TPM peaks. Listed for reference; "
                            "these workers have neither HammerDB nor SQL Server.")


def expand():
    for profile in PROFILES:
        yield dict(profile)
        quick = {**profile, **QUICK, **QUICK_SIZES[profile["tool"]]}
        quick.update(slug=profile["slug"] + "-quick", name=profile["name"] + " — quick", quick=True)
        yield quick
    yield dict(HAMMERDB)


class Command(BaseCommand):
    help = "Create or update the benchmark profiles seeded from the whitepapers' methodologies."

    def handle(self, *args, **options):
        methodologies = {m.slug: m for m in Methodology.objects.all()}
        created = 0
        for spec in expand():
            slug = spec.pop("slug")
            method_slug = spec.pop("methodology", None)
            spec["methodology"] = methodologies.get(method_slug) if method_slug else None
            _, was_created = BenchmarkProfile.objects.update_or_create(slug=slug, defaults=spec)
            created += was_created
        self.stdout.write(f"{created} profile(s) created, {BenchmarkProfile.objects.count()} in all.")
