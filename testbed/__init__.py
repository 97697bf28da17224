"""Servers, workers and data of a test's or a benchmark's own, shared by tests/ and benchmarks/ (neither imports
the other): TLS-only MariaDB and PostgreSQL (tls_servers), a production-shaped stack for fault drills
(fault_stack), the benchmark database users and worker helpers (runs_support), the source texts (seeds) and the
made-up next edition of a whitepaper (drafting)."""
