#!/usr/bin/env bash
# The Python client: type-check it (mypy --strict, for this Python and for 3.9, the oldest
# supported) and run its tests against a real `warren serve`. The virtualenvs live outside the
# clone and are reused; pip only fetches what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/warren"
client=clients/python

# venv PYTHON DIR: a virtualenv at DIR with the test tools and the client (editable) in it.
venv() {
  local python=$1 dir=$2
  if ! "$dir/bin/python" -c 'import sys' 2>/dev/null; then
    rm -rf "$dir"
    "$python" -m venv "$dir"
  fi
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check 'pytest>=8,<9' 'mypy>=1,<2'
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check -e "$client"
}

# pytest exits 5 when it collected nothing: that must fail CI, not pass it quietly.
run_tests() {
  local status=0
  (cd "$client" && "$1/bin/python" -m pytest -q -p no:cacheprovider) || status=$?
  if [ "$status" -eq 5 ]; then echo "pytest found no tests in $client" >&2; fi
  return "$status"
}

main="$cache/python-venv"
venv python3 "$main"
(cd "$client" && "$main/bin/python" -m mypy --strict src tests)
(cd "$client" && "$main/bin/python" -m mypy --strict --python-version 3.9 src tests)
run_tests "$main"

# The suite again on Python 3.9 when the machine has it (pyenv installs it on ours).
python39=""
for candidate in "${PYTHON39:-}" python3.9 "$HOME"/.pyenv/versions/3.9*/bin/python3.9; do
  if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 9)' 2>/dev/null; then
    python39=$candidate
    break
  fi
done
if [ -n "$python39" ]; then
  venv "$python39" "$cache/python39-venv"
  run_tests "$cache/python39-venv"
else
  echo "no Python 3.9 here: its run is skipped (mypy checked the code for 3.9 above)"
fi
