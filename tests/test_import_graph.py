"""The import contracts of the project's modules (runs, whitepaper, config), read from the tree itself: every import
statement, at module level or inside a function, resolved to the module it loads (issues 22.5, 38.3, 51.3).

1. Between apps: runs may import whitepaper and config, whitepaper may import config, config neither (PACKAGES).
2. Within each app: the rules sit below presentation (PRESENTATION: pages, forms, template tags, the catalogue's
   text, charts, the API, admin, feeds, URLs, management commands). A rule (every other module of runs and
   whitepaper: models, queries, variants, editions, compare, sizing, runs' engine ...) never imports a presentation
   module, of its own app or another; presentation imports rules and other presentation. A new module is a rule
   until it is named here.
3. No loop, and no import inside a function (it is how a loop hides; Django's AppConfig.ready excepted: it connects
   signals once the apps are loaded).
4. Strings that name an app as surely as an import: a route name ("runs:run-record", {% url 'runs:...' %}) or an app's
   settings (settings.RUNS_...). whitepaper's code and templates never name runs' (the catalogue asks
   whitepaper/links.py, which reads the routes from settings.CATALOGUE_LINKS); config names the apps' routes only in its
   wiring (settings.py, urls.py) and the project's shell templates (base.html, 404.html)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["runs", "whitepaper", "config"]  # each may import only those after it
LAYER = {package: index for index, package in enumerate(PACKAGES)}
# Each app's presentation modules (a name covers the package's modules under it); everything else is a rule.
# config is the project's plumbing (settings, the URL root, API-wide pieces): contract 1 places it below both apps.
PRESENTATION = {
    "whitepaper": ["views", "explorer", "forms", "templatetags", "display", "charts", "pages", "compare_labels",
                   "flavors", "feeds", "api", "admin", "urls", "converters", "drafting.views", "management"],
    "runs": ["views", "campaign_views", "edition_views", "forms", "api", "admin", "urls", "context_processors", "management"],
}


# Contract 4: per layer, its sources (code, templates) and the apps above it whose names they never carry.
STRING_SOURCES = {
    "whitepaper": [("whitepaper", "*.py"), ("templates/whitepaper", "*")],
    "config": [("config", "*.py")],
}
WIRING = {"config/settings.py", "config/urls.py"}  # where the project names its apps' routes


def named_apps_above(layer, text):
    """[(line, what)] of the route names and settings of apps above `layer` that `text` carries."""
    above = "|".join(PACKAGES[:LAYER[layer]])
    pattern = re.compile(rf"""["'](?:{above}):[\w-]+["']|\bsettings\.(?:{above.upper()})_[A-Z_]+|getattr\(settings, ["'](?:{above.upper()})_""")
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in pattern.finditer(text)]


def string_references():
    found = []
    for layer, sources in STRING_SOURCES.items():
        for folder, glob in sources:
            for path in sorted((ROOT / folder).rglob(glob)):
                relative = path.relative_to(ROOT).as_posix()
                if path.is_dir() or "migrations" in path.parts or relative in WIRING:
                    continue
                found += [f"{relative}:{line} names {what}" for line, what in named_apps_above(layer, path.read_text())]
    return found


def is_presentation(module):
    app, _dot, rest = module.partition(".")
    return any(rest == name or rest.startswith(name + ".") for name in PRESENTATION.get(app, ()))


def rules_importing_presentation(edges):
    """["rule:line imports presentation"] of a graph {module: [(imported, line, at module level)]}."""
    return [f"{name}:{line} imports {target}" for name, found in sorted(edges.items()) for target, line, _top in found
            if name.split(".")[0] in PRESENTATION and not is_presentation(name) and is_presentation(target)]


def modules():
    """{dotted name: path} of the packages' modules, migrations left out (Django's own graph)."""
    found = {}
    for path in sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "migrations" in parts:
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name, path, known, everything=False):
    """[(imported module, line, at module level)] of one module, limited to the package's modules (`everything`:
    every module it names, third-party too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    top_level = {id(node) for node in tree.body}
    in_ready = {id(child) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "ready"
                and path.name == "apps.py" for child in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                module = ".".join(parent + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from pkg import sub` loads pkg.sub when sub is a module of its own
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module for alias in node.names]
        else:
            continue
        for target in targets:
            if (everything or target in known) and target != name and id(node) not in in_ready:
                found.append((target, node.lineno, id(node) in top_level or _in_module_if(tree, node)))
    return found


def _in_module_if(tree, node):
    """An import under a module-level `if`/`try` still runs at import time."""
    for top in tree.body:
        if isinstance(top, (ast.If, ast.Try)) and any(child is node for child in ast.walk(top)):
            return True
    return False


def graph():
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def find_cycle(edges):
    """One import loop as [a, b, ..., a], or None (depth-first search)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_is_read_from_the_tree():
    edges = graph()
    # Sanity: the reader sees imports it must see, so an empty graph cannot pass the loop test.
    assert ("runs.execution", True) in {(t, top) for t, _line, top in edges["runs.tasks"]}
    assert "runs.drivers.sysbench" in {t for t, _l, _top in edges["runs.drivers"]}
    assert "runs.drivers.latency" in {t for t, _l, _top in edges["runs.drivers.sysbench"]}


def test_a_loop_is_found():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a"}}) is None


def test_the_graph_covers_whitepaper_and_config():
    edges = graph()
    assert "whitepaper.queries" in {t for t, _l, _top in edges["whitepaper.models"]}
    assert "config.pagination" in {t for t, _l, _top in edges["whitepaper.api.params"]}


def test_no_module_imports_inside_a_function():
    """Project modules and third-party ones alike (yaml, DRF's renderers, cryptography): at module level."""
    known = modules()
    hidden = [f"{name}:{line} imports {target}" for name, path in known.items()
              for target, line, top in imports(name, path, known, everything=True) if not top]
    assert hidden == []


def test_no_module_imports_a_layer_above_its_own():
    upward = [f"{name}:{line} imports {target}" for name, found in graph().items() for target, line, _top in found
              if LAYER[target.split(".")[0]] < LAYER[name.split(".")[0]]]
    if upward:
        pytest.fail("an app imports an app above it (PACKAGES: runs -> whitepaper -> config): " + "; ".join(upward))


def test_modules_import_each_other_without_a_loop():
    edges = {name: {target for target, _line, _top in found} for name, found in graph().items()}
    cycle = find_cycle(edges)
    if cycle:
        pytest.fail("import loop: " + " -> ".join(cycle))


def test_every_presentation_name_is_a_module():
    """A renamed module cannot silently leave the contract: each name of PRESENTATION is a module or package."""
    known = modules()
    missing = [f"{app}.{name}" for app, names in PRESENTATION.items() for name in names if f"{app}.{name}" not in known]
    assert missing == []


def test_an_upward_import_is_found():
    planted = {"whitepaper.queries": [("whitepaper.display", 3, True)], "runs.reproduce": [("whitepaper.api.views", 4, False)],
               "whitepaper.views": [("whitepaper.queries", 5, True)], "whitepaper.charts": [("whitepaper.pages", 6, True)]}
    assert rules_importing_presentation(planted) == ["runs.reproduce:4 imports whitepaper.api.views",
                                                     "whitepaper.queries:3 imports whitepaper.display"]


def test_rules_never_import_presentation():
    upward = rules_importing_presentation(graph())
    if upward:
        pytest.fail("a rule imports presentation (PRESENTATION in tests/test_import_graph.py; move the rule below, "
                    "or the presentation above): " + "; ".join(upward))


def test_a_route_or_setting_of_an_app_above_is_found():
    assert named_apps_above("whitepaper", 'x = reverse("runs:run-record")\n{% url \'runs:run-new\' %}') == [
        (1, '"runs:run-record"'), (2, "'runs:run-new'")]
    assert named_apps_above("whitepaper", "if settings.RUNS_HEARTBEAT_SECONDS:\n getattr(settings, 'RUNS_X', 1)") == [
        (1, "settings.RUNS_HEARTBEAT_SECONDS"), (2, "getattr(settings, 'RUNS_")]
    assert named_apps_above("config", '{% url "whitepaper:home" %} "runs:x"') == [(1, '"whitepaper:home"'), (1, '"runs:x"')]
    # Its own routes, and words that only look alike, are no reference.
    assert named_apps_above("whitepaper", '"whitepaper:document" RUNS_PATHS "runs: 3"') == []


def test_no_string_names_an_app_above_its_own():
    found = string_references()
    if found:
        pytest.fail("a route name or setting of an app above (contract 4: wire it in config/settings.py, e.g. "
                    "CATALOGUE_LINKS): " + "; ".join(found))
