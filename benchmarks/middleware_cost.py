"""What each middleware costs per request, in the production settings, for the kinds of request the site serves.

    .venv/bin/python benchmarks/middleware_cost.py [--requests 300] [--database perfdash_bench_mw]
                                                   [--redis redis://127.0.0.1:6379/12]

Creates a throwaway PostgreSQL database, migrates it, imports the bundled whitepapers and collects static
files (as benchmarks/pages_load.py does), then builds Django's own WSGI handler in this process with a timing
probe between every two middlewares (DJANGO_PRODUCTION=1, DEBUG off, Redis cache) and sends each request
`--requests` times through it (no network, no server: only the handler). A middleware's own cost is the time
between the probe before it and the probe after it, on the way in and on the way out (so the views and the
middlewares inside it are not counted). Medians in microseconds per request, CPU of this one process.
"""

import argparse
import os
import statistics
import sys
import time
import types
from io import BytesIO
from pathlib import Path

import bootstrap  # noqa: E402  (the one Django set-up: benchmarks/bootstrap.py)

ROOT = bootstrap.ROOT
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pages_load  # noqa: E402  (the throwaway database and production environment)

REQUESTS = {
    "static file (css)": ("/static/css/site.css", {}),
    "document page, cached": ("/documents/huawei-2025-10-21-mysql/", {}),
    "document page, uncached": ("/documents/huawei-2025-10-21-mysql/?fresh={n}", {}),
    "explorer, cached": ("/explore/?engine=mysql&version=5.7", {}),
    "API list, anonymous": ("/api/v1/results/?engine=mysql&version=5.7&page_size=20", {"HTTP_ACCEPT": "application/json"}),
}
BROWSER = {"HTTP_ACCEPT_ENCODING": "gzip, deflate, br", "HTTP_ACCEPT_LANGUAGE": "en"}  # as Chromium asks
marks = []  # (probe index, "in"/"out", perf_counter_ns) of the request being timed


def probe(index):
    """A middleware that notes when the request passes it inward and the response outward."""
    def factory(get_response):
        def middleware(request):
            marks.append((index, "in", time.perf_counter_ns()))
            response = get_response(request)
            marks.append((index, "out", time.perf_counter_ns()))
            return response
        return middleware
    return factory


def environ(path, extra):
    path, _, query = path.partition("?")
    return {**BROWSER, **extra, "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1", "wsgi.url_scheme": "http", "wsgi.input": BytesIO(b""),
            "wsgi.errors": sys.stderr, "wsgi.version": (1, 0), "wsgi.multithread": False, "wsgi.multiprocess": True,
            "wsgi.run_once": False, "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--database", default="perfdash_bench_mw")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    args = parser.parse_args()
    print("$ .venv/bin/python benchmarks/middleware_cost.py " + " ".join(sys.argv[1:]))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    env = pages_load.production_env(args.database, args.redis)
    pages_load.prepare(env, args.database, args.redis)
    try:
        os.environ.update(env)
        bootstrap.setup(own_database=False)  # pages_load.prepare made it
        from django.conf import settings

        from django.core.handlers.wsgi import WSGIHandler

        names = list(settings.MIDDLEWARE)
        probes = types.ModuleType("middleware_probes")
        for i in range(len(names) + 1):
            setattr(probes, f"p{i}", probe(i))
        sys.modules["middleware_probes"] = probes
        settings.MIDDLEWARE = [m for i, name in enumerate(names) for m in (f"middleware_probes.p{i}", name)] + [
            f"middleware_probes.p{len(names)}"]
        handler = WSGIHandler()

        def send(path, extra):
            status = []
            body = handler(environ(path, extra), lambda line, headers: status.append(line))
            for _ in body:
                pass
            if hasattr(body, "close"):
                body.close()
            assert status[0].startswith("200"), (path, status)

        print(f"{len(names)} middlewares; {args.requests} requests of each kind after 20 unmeasured; "
              "medians in microseconds (own cost: in + out, the inner layers excluded); '-' never reached")
        table = {}
        totals = {}
        for kind, (path, extra) in REQUESTS.items():
            for n in range(20):
                send(path.format(n=f"warm{n}"), extra)
            own = {i: [] for i in range(len(names))}
            total = []
            for n in range(args.requests):
                marks.clear()
                start = time.perf_counter_ns()
                send(path.format(n=n), extra)
                total.append((time.perf_counter_ns() - start) / 1000)
                at = {(i, way): t for i, way, t in marks}
                for i in range(len(names)):
                    if (i + 1, "in") in at:
                        own[i].append(((at[(i + 1, "in")] - at[(i, "in")]) + (at[(i, "out")] - at[(i + 1, "out")])) / 1000)
                    elif (i, "in") in at:  # it answered itself: everything from it inward is its own
                        own[i].append((at[(i, "out")] - at[(i, "in")]) / 1000)
            table[kind] = {i: statistics.median(v) if v else None for i, v in own.items()}
            totals[kind] = statistics.median(total)
        kinds = list(REQUESTS)
        print(f"{'middleware':<52}" + "".join(f"{k[:22]:>24}" for k in kinds))
        for i, name in enumerate(names):
            cells = "".join(f"{'-' if table[k][i] is None else f'{table[k][i]:.1f}':>24}" for k in kinds)
            print(f"{name[-52:]:<52}{cells}")
        print(f"{'whole request (handler, median)':<52}" + "".join(f"{totals[k]:>24.1f}" for k in kinds))
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        pages_load.cleanup(args.database, env)


if __name__ == "__main__":
    main()
