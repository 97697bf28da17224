#!/usr/bin/env bash
# Refresh docs/screenshots/: the customer pages (tests/screenshots.py, not part of the suite: it asserts nothing)
# and the runs pages (their browser tests write them when PERFDASH_SCREENSHOTS=1), in headless Chromium at 1280 and
# 390 px, English and Chinese. Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PERFDASH_SCREENSHOTS=1
exec .venv/bin/pytest tests/screenshots.py $(grep -l PERFDASH_SCREENSHOTS tests/test_*.py) "$@"
