#!/usr/bin/env bash
# The Python client: type-check it (mypy --strict) and run its tests against a real
# `warren serve`, once on this machine's Python and once on Python 3.9, the oldest the client
# supports. Each check runs in that interpreter's own virtualenv, so mypy checks 3.9 with a 3.9
# interpreter and 3.9's own installed packages; asking a newer mypy to pretend to be 3.9 reads
# the newer packages' source, which 3.9 cannot parse. The test tools come at the exact versions
# in clients/python/constraints.txt, so a fresh machine installs what the last green run used.
# The virtualenvs live outside the clone and are reused; pip brings them back to the pins.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/warren"
client=clients/python
constraints="$PWD/$client/constraints.txt"

# venv PYTHON DIR: a virtualenv at DIR with the pinned test tools and the client (editable).
venv() {
  local python=$1 dir=$2
  if ! "$dir/bin/python" -c 'import sys' 2>/dev/null; then
    rm -rf "$dir"
    "$python" -m venv "$dir"
  fi
  # Every test tool at the exact version of constraints.txt, whatever the registry has now.
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check -c "$constraints" pytest mypy setuptools
  # No build isolation: the build uses the pinned setuptools above instead of fetching the newest.
  # One at a time: an editable install writes its metadata into the client's own source tree.
  flock "$cache/python-editable.lock" \
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$client"
}

# check DIR: mypy --strict for DIR's Python, then the tests. pytest exits 5 when it collected
# nothing: that must fail CI, not pass it quietly.
check() {
  local dir=$1 status=0
  (cd "$client" && "$dir/bin/python" -m mypy --strict src tests)
  (cd "$client" && "$dir/bin/python" -m pytest -q -p no:cacheprovider) || status=$?
  if [ "$status" -eq 5 ]; then echo "pytest found no tests in $client" >&2; fi
  return "$status"
}

python39=""
for candidate in "${PYTHON39:-}" python3.9 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3.9; do
  if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 9)' 2>/dev/null; then
    python39=$candidate
    break
  fi
done
if [ -z "$python39" ]; then
  # The client promises Python 3.9 (pyproject.toml, docs/API.md): CI that cannot check it must say so.
  echo "python.sh: no Python 3.9 found (python3.9 on PATH, pyenv, or PYTHON39=/path/to/python3.9)" >&2
  exit 1
fi

# `--venvs`: only make the two virtualenvs, which wait on pip's downloads (.ci/prefetch.sh runs
# this beside the Node suites, which keep the CPU busy meanwhile).
if [ "${1:-}" = --venvs ]; then
  venv "$python39" "$cache/python39-venv" &
  pid39=$!
  status=0
  venv python3 "$cache/python-venv" || status=$?
  wait "$pid39" || status=$?
  exit "$status"
fi

# The two interpreters' checks share nothing (each its own virtualenv, server on a free port and
# database in a temporary directory), and each waits on pip's downloads and on its server much of
# the time: 3.9's runs beside this Python's, and its output is printed after.
log39=$(mktemp)
trap 'rm -f "$log39"' EXIT
(
  "$python39" --version
  venv "$python39" "$cache/python39-venv"
  check "$cache/python39-venv"
) >"$log39" 2>&1 &
pid39=$!

set +e
(
  set -e
  python3 --version
  venv python3 "$cache/python-venv"
  check "$cache/python-venv"
)
status=$?
wait "$pid39"
status39=$?
set -e
cat "$log39"
[ "$status" -eq 0 ] && [ "$status39" -eq 0 ]
