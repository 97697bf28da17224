"""Where the source texts are, for every test that reads them: $SEEDS_DIR, else <checkout>/../shared/seeds.
Missing texts fail the test in CI (CI set), where they are always beside the checkout; elsewhere they skip it."""

import os
from pathlib import Path

import pytest

from testbed.seeds import REPO, seeds_dir  # noqa: F401  (tests name them from here too)


def require_seeds_dir() -> Path:
    path = seeds_dir()
    if not path.is_dir():
        message = f"source documents not found at {path}; set SEEDS_DIR"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
