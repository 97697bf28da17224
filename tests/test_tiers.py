"""The test loop's tiers (issue 51.7, tests/tiers.py): markers come from the fixtures a test uses, and
`scripts/test.sh --changed` chooses the tests whose modules, fixtures, pages and processes load a changed file."""

import subprocess
from types import SimpleNamespace

import pytest

from .tiers import ROOT, Plan, changed_files, reach, tier, tiers_of


def fixture(name, *, tiers=(), asks=()):
    def function():
        pass
    function.__module__ = "tests.conftest"
    function.__name__ = name
    if tiers:
        tier(*tiers)(function)
    return SimpleNamespace(func=function, argnames=tuple(asks))


def item(test_file, *fixtures):
    """A collected test as the plan sees it: its file, and for each fixture name the definitions visible to it (the
    last is the one used)."""
    definitions = {}
    for f in fixtures:
        definitions.setdefault(f.func.__name__, []).append(f)
    names = list(definitions) + ["request"]
    return SimpleNamespace(path=ROOT / "tests" / test_file, fixturenames=names,
                           _fixtureinfo=SimpleNamespace(name2fixturedefs=definitions))


def wanted(files, test):
    return Plan(files).wants(test, tiers_of(test))


def test_a_test_carries_the_tiers_of_the_fixtures_it_uses():
    assert tiers_of(item("test_runs_worker.py", fixture("worker", tiers=["tool"]), fixture("committed"))) == {"tool"}
    assert tiers_of(item("test_pages.py", fixture("client"))) == set()
    # A module's own fixture of the same name (test_webhooks' worker delivers webhooks) says its own tier...
    overridden = item("test_webhooks.py", fixture("worker", tiers=["tool"]), fixture("worker", tiers=["slow"]))
    assert tiers_of(overridden) == {"slow"}
    # ...and takes the other's when it asks for it.
    extended = item("test_x.py", fixture("worker", tiers=["tool"]), fixture("worker", tiers=["slow"], asks=["worker"]))
    assert tiers_of(extended) == {"tool", "slow"}
    with pytest.raises(AssertionError):
        tier("sluggish")


def test_the_suites_fixtures_declare_their_tiers(request):
    """The markers the suite selects by (pytest.ini) come from these fixtures: a test using the session's worker is
    `tool`, the browser `browser`; this test uses neither."""
    assert not {"tool", "fault", "browser", "fuzz", "slow"} & {m.name for m in request.node.iter_markers()}
    worker = request._fixturemanager.getfixturedefs("worker", request.node)[-1]
    browser = request._fixturemanager.getfixturedefs("browser", request.node)[-1]
    assert worker.func.perfdash_tiers == {"tool"} and browser.func.perfdash_tiers == {"browser"}


def test_an_engine_change_needs_the_tool_and_fault_tests_and_not_the_catalogues():
    fault_drill = item("test_runs_target_faults.py", fixture("fault_worker", tiers=["fault"]),
                       fixture("django_db_setup"))
    tool_run = item("test_runs_queue_order.py", fixture("worker", tiers=["tool"]), fixture("django_db_setup"))
    catalogue = item("test_version_order.py", fixture("django_db_setup"), fixture("db"))
    for engine in ("runs/execution.py", "runs/runner.py", "runs/drivers/sysbench.py"):
        assert wanted([engine], fault_drill) and wanted([engine], tool_run), engine
        assert not wanted([engine], catalogue), engine


def test_a_catalogue_page_change_needs_the_tests_asking_its_pages():
    page_test = item("test_pages.py", fixture("client"), fixture("django_db_setup"))
    explorer_browser = item("test_explorer_paging_browser.py", fixture("browser", tiers=["browser"]),
                            fixture("page"), fixture("server"))
    rules_only = item("test_runs_stats.py")
    assert wanted(["whitepaper/views.py"], page_test) and wanted(["whitepaper/explorer.py"], explorer_browser)
    assert not wanted(["whitepaper/views.py"], rules_only)
    # a pure rule's module: the tests importing it
    assert wanted(["runs/stats.py"], rules_only) and not wanted(["whitepaper/drafting/draft.py"], rules_only)


def test_files_outside_the_graph_need_their_tier_or_their_test():
    browser_test = item("test_charts_browser.py", fixture("browser", tiers=["browser"]), fixture("page"))
    page_test = item("test_pages.py", fixture("client"))
    rules_only = item("test_runs_stats.py")
    docs = item("test_docs.py")
    assert wanted(["static/js/charts.js"], browser_test) and not wanted(["static/js/charts.js"], page_test)
    assert wanted(["templates/base.html"], page_test) and not wanted(["templates/base.html"], rules_only)
    assert wanted(["docs/runs.md"], docs) and wanted(["README.md"], docs) and not wanted(["docs/runs.md"], page_test)
    # a package's data file is its directory's modules (the drivers read ro.sql)
    assert wanted(["runs/drivers/scripts/ro.sql"], item("test_runs_drivers.py"))
    # a template tag library is loaded by the templates, which no import names: every page
    assert wanted(["whitepaper/templatetags/catalogue.py"], page_test)
    assert not wanted(["whitepaper/templatetags/catalogue.py"], rules_only)
    # the suite's set-up, the migrations, the bundled catalogue: every test
    for everything in ("tests/conftest.py", "whitepaper/data/_vocabulary.yaml", "runs/migrations/0001_initial.py"):
        assert wanted([everything], rules_only), everything
    assert not wanted([], page_test)


def test_the_graph_follows_imports_strings_and_signals():
    # a module reaches what it imports, what its strings name (a command) and what its AppConfig.ready() connects
    assert "runs.drivers.pgbench" in reach(frozenset(["runs.tasks"]))
    assert "whitepaper.newest" in reach(frozenset(["whitepaper.apps"]))
    assert "whitepaper.importer" in reach(frozenset(["whitepaper.management.commands.import_whitepapers"]))
    assert "runs.execution" not in reach(frozenset(["whitepaper.views"]))  # the layers: whitepaper never loads runs


def test_the_changed_files_are_the_branchs_the_working_trees_and_the_untracked(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    git("init", "-q", "-b", "main")
    for name in ("kept.py", "edited.py", "committed.py"):
        (tmp_path / name).write_text("x = 1\n")
    git("add", ".")
    git("commit", "-q", "-m", "main")
    git("checkout", "-q", "-b", "work")
    (tmp_path / "committed.py").write_text("x = 2\n")
    git("commit", "-q", "-am", "on the branch")
    (tmp_path / "edited.py").write_text("x = 3\n")
    (tmp_path / "new.py").write_text("x = 4\n")
    assert changed_files(root=tmp_path) == ["committed.py", "edited.py", "new.py"]
    assert changed_files("no-such-branch", root=tmp_path) == ["edited.py", "new.py"]
