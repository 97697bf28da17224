#!/usr/bin/env bash
# The Chinese catalogue (locale/zh_Hans): collect the interface's strings into the .po files, then
# compile them (.mo, committed so a checkout works without this step; scripts/setup.sh compiles too).
#   scripts/messages.sh            update the .po files from the code, then compile
#   scripts/messages.sh compile    compile only
# Translate every new msgid in locale/zh_Hans/LC_MESSAGES/{django,djangojs}.po (no fuzzy entries);
# `.venv/bin/pytest tests/test_i18n.py -k catalogue` fails while one is missing or untranslated.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
IGNORE=(--ignore=.venv --ignore=node_modules --ignore=var --ignore=tests --ignore=benchmarks --ignore=docs)
if [ "${1:-}" != compile ]; then
  for domain in django djangojs; do
    "$PY" manage.py makemessages -l zh_Hans -d "$domain" --no-obsolete --no-location "${IGNORE[@]}"
  done
fi
"$PY" manage.py compilemessages -l zh_Hans "${IGNORE[@]}"
for po in locale/zh_Hans/LC_MESSAGES/*.po; do
  msgfmt --check --statistics -o /dev/null "$po"
done
