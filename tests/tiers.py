"""Which tests a change needs (`scripts/test.sh --changed`, issue 51.7): a test is chosen when what it loads reaches
a changed file. What a test loads is read from the tree, by the import graph of tests/test_import_graph.py extended
to tests/ and testbed/, to the imports it leaves out (an AppConfig.ready()'s) and to the modules a string names (a
dotted path, a management command):

- its module's imports (anywhere in the file) and those of the fixtures it uses (a conftest fixture's own imports,
  such as the worker's testbed.runs_support), followed through every module they import in turn;
- a database test: the session's catalogue (the importer) and the signals apps.py connects;
- a test that asks a page or the API (a client, a live server, a browser, requests of its own): what every request
  passes through (the middleware, context processors, template tags and DRF classes the settings name) and the
  views of the paths it asks (each path it writes, resolved by the URLconf, and each URL name it reverses; all of
  them when it names none). Not the whole URLconf: it imports every view, and every page test would need everything;
- a test of the `tool` or `fault` tier: what its workers run (runs.tasks: the engine, drivers, runner) and a fault
  drill's gunicorn serves (config.wsgi).

A file outside the Python graph is matched by where it lives (CHANGED_AREAS: templates are read by every page,
static files by the browser, docs/ by test_docs.py, a package's data file by its directory's modules, the bundled
catalogue, migrations or the suite's own set-up by every test) or, failing that, by a test module that names it.

The changes: `git diff main...` (the branch's commits), the working tree and index against HEAD, untracked files."""

import ast
import functools
import inspect
import re
import subprocess
import textwrap
from pathlib import Path

from .test_import_graph import imports as graph_imports

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["config", "whitepaper", "runs", "testbed", "tests"]  # the graph's modules (tests: its helpers too)

# Fixtures through which a test asks a page or the API (Django's URLconf and middleware answer it).
HTTP_FIXTURES = {"client", "admin_client", "anonymous", "customer", "operator", "staff", "operator_api", "live_server",
                 "catalogue_server", "server", "browser", "page", "superuser_client"}
# Every database test reads the session's catalogue (conftest's import) and its writes go through the signals.
DB_LOADS = ["whitepaper.apps", "runs.apps", "whitepaper.management.commands.import_whitepapers"]
WORKER_LOADS = ["runs.tasks", "whitepaper.tasks", "config.celery", "config.wsgi", "config.gunicorn_conf"]
WORKER_TIERS = {"tool", "fault"}

# Files outside the graph: (path prefix, what needs it). "all": the whole suite; "http": every test asking a page
# or the API; a marker: that tier; a path: that test file.
CHANGED_AREAS = [
    ("whitepaper/data/", "all"), ("whitepaper/migrations/", "all"), ("runs/migrations/", "all"),
    ("tests/conftest.py", "all"), ("tests/settings.py", "all"), ("pytest.ini", "all"), ("requirements", "all"),
    ("scripts/setup.sh", "all"), ("config/settings.py", "all"),
    ("templates/", "http"), ("locale/", "http"),
    ("static/", "browser"), ("package.json", "browser"), ("package-lock.json", "browser"),
    ("docs/", "tests/test_docs.py"), ("mkdocs.yml", "tests/test_docs.py"), ("README.md", "tests/test_docs.py"),
    ("Dockerfile", "tests/test_settings.py"), ("docker-compose.yml", "tests/test_settings.py"),
]


# --- Tiers: markers from the fixtures a test uses -----------------------------------------------------------------

TIERS = ("tool", "fault", "browser", "fuzz", "slow")  # what each means: pytest.ini's markers


def tier(*names):
    """Marks a fixture: every test using it, directly or through other fixtures, carries these markers (conftest's
    pytest_collection_modifyitems) and `slow`. A fixture overriding another of the same name says its own."""
    assert set(names) <= set(TIERS), names

    def mark(function):
        function.perfdash_tiers = frozenset(names)
        return function
    return mark


def tiers_of(item):
    """The markers an item's fixtures declare (the fixture it uses under each name, and those it overrides only when
    it asks for them)."""
    found = set()
    for name in item.fixturenames:
        for fixturedef in reversed(item._fixtureinfo.name2fixturedefs.get(name, ())):
            found |= getattr(fixturedef.func, "perfdash_tiers", frozenset())
            if name not in fixturedef.argnames:
                break
    return found


# --- The graph -------------------------------------------------------------------------------------------------

@functools.cache
def known_modules():
    """{dotted name: path} of the packages' modules (migrations left out, as the import-graph test does)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "migrations" in parts:
                continue
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def module_of(relative_path):
    """The dotted module name of a file of the graph, or None."""
    parts = Path(relative_path).with_suffix("").parts
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return name if relative_path.endswith(".py") and name in known_modules() else None


def known_prefix(dotted):
    """The longest leading part of a dotted name that is a module of the graph ("config.api.exception_handler":
    config.api), or None."""
    parts = dotted.split(".")
    while parts and ".".join(parts) not in known_modules():
        parts.pop()
    return ".".join(parts) or None


@functools.cache
def commands():
    """{management command: its module} (call_command("seed_profiles") loads runs.management.commands.seed_profiles)."""
    return {name.rsplit(".", 1)[1]: name for name in known_modules() if ".management.commands." in name}


def named_modules(tree):
    """Modules a string in the code names: a dotted path ("config.api.exception_handler") or a management command."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in commands():
                found.add(commands()[node.value])
            elif re.fullmatch(r"[a-z_]+(\.\w+)+", node.value):
                module = known_prefix(node.value)
                if module and "." in module:
                    found.add(module)
    return found


def imports_in(tree, name="", is_package=False):
    """Every module of the graph an AST imports, wherever the statement stands (in a function, an AppConfig.ready)."""
    base = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(base[:len(base) - (node.level - 1)] + ([module] if module else []))
            candidates = [f"{module}.{alias.name}" for alias in node.names] + [module]
        else:
            continue
        found |= {module for candidate in candidates if (module := known_prefix(candidate))}
    return found


@functools.cache
def edges():
    """{module: modules it loads}: the import-graph test's reading of its imports, the imports it leaves out (an
    AppConfig.ready()'s, the tests' and testbed's modules), and the modules its strings name. Left out: the settings'
    and URLconfs' strings (every module would reach every other through them); what a test loads through them is
    read from the test (its URLs, Plan.loads)."""
    known = known_modules()
    result = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = {target for target, _line, _top in graph_imports(name, path, known)}
        targets |= imports_in(tree, name, path.name == "__init__.py")
        if name != "config.settings" and not name.endswith("urls"):
            targets |= named_modules(tree)
        result[name] = targets - {name}
    return result


@functools.cache
def reach(roots):
    """The modules loaded from these (a frozenset), following every edge."""
    graph, seen, todo = edges(), set(), list(roots)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return frozenset(seen)


@functools.cache
def fixture_loads(function):
    """What a fixture function loads in its own body: its imports (a conftest fixture's testbed helpers) and the
    management commands it calls."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    return frozenset(imports_in(tree, function.__module__) | named_modules(tree))


@functools.cache
def module_loads(path):
    """What a test module loads: its imports anywhere in the file and the commands it calls."""
    tree = ast.parse(source_of(path))
    name = ".".join(Path(path).relative_to(ROOT).with_suffix("").parts)
    return frozenset(imports_in(tree, name) | named_modules(tree))


@functools.cache
def source_of(path):
    return Path(path).read_text(encoding="utf-8")


# --- What answers a request -------------------------------------------------------------------------------------

def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


@functools.cache
def request_loads():
    """What every request passes through: the middleware, the templates' context processors and tag libraries, the
    cache, and for the API DRF's classes (the settings name them)."""
    from django.conf import settings

    named = [*settings.MIDDLEWARE, *_strings(settings.TEMPLATES), *_strings(settings.CACHES),
             *_strings(settings.REST_FRAMEWORK), settings.ROOT_URLCONF]
    template_tags = {name for name in known_modules() if ".templatetags." in name}  # {% load %}: no import names them
    return frozenset({module for name in named if (module := known_prefix(name))} | template_tags)


@functools.cache
def schema_loads():
    from django.conf import settings

    return frozenset(module for name in _strings(settings.SPECTACULAR_SETTINGS) if (module := known_prefix(name)))


def _view_module(func_path):
    return known_prefix(func_path)  # "whitepaper.api.views.ResultViewSet": whitepaper.api.views


@functools.cache
def url_names():
    """{"namespace:name": the module of its view} of the whole URLconf."""
    from django.urls import URLPattern, URLResolver, get_resolver

    found = {}

    def walk(patterns, namespace):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace)
            elif isinstance(pattern, URLPattern) and pattern.name:
                found[f"{namespace}{pattern.name}"] = _view_module(pattern.lookup_str)
    walk(get_resolver().url_patterns, "")
    return found


# "/explore/", f"{server}/documents/", "/api/v1/runs/"; a bare "/" (home, or a split) names nothing
PATH_LITERAL = re.compile(r"""(?:["'}])(/[\w.-]+(?:/[\w.-]*)*)""")
URL_NAME = re.compile(r"""reverse\(\s*["']([\w:-]+)["']""")


@functools.cache
def page_loads(path):
    """The views a test module's requests reach: each path it writes (its static beginning, resolved by the URLconf)
    and each URL name it reverses; the whole URLconf when it names none it can resolve."""
    from django.urls import Resolver404, resolve

    source, views = source_of(path), set()
    for literal in PATH_LITERAL.findall(source):
        for candidate in (literal, literal.rstrip("/") + "/"):
            try:
                views.add(_view_module(resolve(candidate)._func_path))
                break
            except Resolver404:
                continue
        if literal.startswith("/admin/"):
            views |= {"whitepaper.admin", "runs.admin"}
    for name in URL_NAME.findall(source):
        views.add(url_names().get(name))
    views.discard(None)
    if not views:
        views = {module for module in url_names().values() if module} | {"whitepaper.admin", "runs.admin"}
    if "config.api_urls" in views:  # the schema: its post-processing hooks
        views |= schema_loads()
    return frozenset(views)


def asks_pages(item):
    """A test that asks a page or the API: through a fixture, or a client or connection of its module's own."""
    return bool(HTTP_FIXTURES & set(item.fixturenames)) or re.search(
        r"\b(Client|APIClient|RequestsClient)\(|requests\.(get|post|put|patch|delete)\(|urlopen\(",
        source_of(str(item.path))) is not None


# --- The changes -----------------------------------------------------------------------------------------------

def _git(root, *args):
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    return proc.stdout.split() if proc.returncode == 0 else None


def changed_files(base="main", root=ROOT):
    """Files changed by the branch since it left `base` (none when there is no such branch), in the index and the
    working tree, and untracked."""
    branch = _git(root, "diff", "--name-only", f"{base}...") if _git(root, "rev-parse", "--verify", "-q", base) else []
    here = _git(root, "diff", "--name-only", "HEAD") or []
    untracked = _git(root, "ls-files", "--others", "--exclude-standard") or []
    return sorted(set(branch or []) | set(here) | set(untracked))


class Plan:
    """What a set of changed files needs: `wants(item)` for each collected test (its path, fixtures, markers)."""

    def __init__(self, files):
        self.files = list(files)
        self.modules, self.tiers, self.test_files = set(), set(), set()
        self.everything, self.http, self.others = [], [], []
        for path in self.files:
            area = next((need for prefix, need in CHANGED_AREAS if path.startswith(prefix)), None)
            module = module_of(path)
            if area == "all":
                self.everything.append(path)
            elif area == "http":
                self.http.append(path)
            elif area in ("browser", "tool", "fault", "fuzz"):
                self.tiers.add(area)
            elif area:
                self.test_files.add(area)
            elif module:
                self.modules.add(module)
            elif path.startswith(("config/", "whitepaper/", "runs/")) and not path.endswith(".py"):
                # a package's data file (runs/drivers/scripts/ro.sql, drafting/formats.yaml): the modules of the
                # nearest directory above it that has some
                directory = Path(path).parent
                while directory != Path(".") and not self._modules_in(directory):
                    directory = directory.parent
                self.modules |= self._modules_in(directory)
            else:
                self.others.append(path)  # matched below by a test module that names it

    @staticmethod
    def _modules_in(directory):
        return {m for m, p in known_modules().items() if p.parent.relative_to(ROOT) == directory}

    def summary(self):
        lines = [f"--changed: {len(self.files)} file(s) changed since main"]
        if self.everything:
            return "\n".join(lines + [f"  the whole suite, for {', '.join(self.everything)}"])
        modules = sorted(self.modules)
        if modules:
            more = f" and {len(modules) - 8} more" if len(modules) > 8 else ""
            lines.append(f"  the tests loading {', '.join(modules[:8])}{more}")
        if self.http:
            lines.append(f"  every test asking a page or the API, for {', '.join(self.http[:4])}")
        if self.tiers:
            lines.append(f"  the {', '.join(sorted(self.tiers))} tier")
        if self.test_files:
            lines.append(f"  {', '.join(sorted(self.test_files))}")
        if self.others:
            lines.append(f"  the test modules naming {', '.join(self.others[:4])}")
        return "\n".join(lines)

    def loads(self, item, tiers):
        """The modules a test loads (see the module's docstring)."""
        roots = set(module_loads(str(item.path)))
        for name in item.fixturenames:
            for fixturedef in item._fixtureinfo.name2fixturedefs.get(name, ()):
                roots |= fixture_loads(fixturedef.func)
        if "django_db_setup" in item.fixturenames:
            roots |= set(DB_LOADS)
        if asks_pages(item):
            roots |= request_loads() | page_loads(str(item.path))
        if WORKER_TIERS & tiers:
            roots |= set(WORKER_LOADS)
        return reach(frozenset(roots))

    def wants(self, item, tiers):
        relative = Path(item.path).relative_to(ROOT).as_posix()
        if self.everything or relative in self.files or relative in self.test_files or self.tiers & tiers:
            return True
        if self.http and asks_pages(item):
            return True
        if self.others and any(other in source_of(str(item.path)) for other in self.others):
            return True
        return bool(self.modules and self.modules & self.loads(item, tiers))
