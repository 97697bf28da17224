"""Where the source texts are: $SEEDS_DIR, else <checkout>/../shared/seeds (never a fixed path)."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def seeds_dir() -> Path:
    env = os.environ.get("SEEDS_DIR")
    return Path(env) if env else REPO.parent / "shared" / "seeds"
