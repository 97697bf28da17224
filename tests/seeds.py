"""Where the source texts are, for every test that reads them: $SEEDS_DIR, else <checkout>/../shared/seeds.
Missing texts fail the test in CI (CI set), where they are always beside the checkout; elsewhere they skip it."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def seeds_dir() -> Path:
    env = os.environ.get("SEEDS_DIR")
    return Path(env) if env else REPO.parent / "shared" / "seeds"


def require_seeds_dir() -> Path:
    path = seeds_dir()
    if not path.is_dir():
        message = f"source documents not found at {path}; set SEEDS_DIR"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
