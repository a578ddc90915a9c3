#!/usr/bin/env bash
# Fuzz the API with schemathesis, a tool no one here wrote, driven by the served OpenAPI
# document: every operation, with an `all` key, valid and invalid inputs, a fixed seed and a
# bounded number of examples. Any 5xx, or any response that does not match its documented
# status, content type, headers or schema, fails the run. The virtualenv lives outside the
# clone and is reused. FUZZ_EXAMPLES and FUZZ_SEED override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

# schemathesis and its dependencies at the exact versions in .ci/fuzz-constraints.txt; a reused
# virtualenv is brought back to them too.
venv="${XDG_CACHE_HOME:-$HOME/.cache}/warren/schemathesis-venv"
if ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  rm -rf "$venv"
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c .ci/fuzz-constraints.txt schemathesis
# `--venv`: only that (.ci/prefetch.sh runs it beside the Node suites, as it waits on downloads).
[ "${1:-}" = --venv ] && exit 0

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

warren() { node packages/cli/bin/warren.js "$@"; }
json_field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(eval("JSON.parse(s)"+process.argv[1])))' "$1"; }

db="sqlite:$work/warren.db"
api_key=$(warren init --db "$db" --network fuzz --json | json_field .apiKey)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
# node itself in the background, not the `warren` function: $! must be the server's own pid.
# A public URL, as production has: single sign-on and SCIM answer 503 without one.
WARREN_PUBLIC_URL="http://127.0.0.1:$port" node packages/cli/bin/warren.js serve --db "$db" --port "$port" >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  curl -fsS "$url/readyz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.1
done

# The fuzzer calls far more than the default 100 a minute: 429s would hide what it finds.
key_id=$(curl -fsS -H "Authorization: Bearer $api_key" "$url/v1/keys?type=api" | json_field '.keys[0].id')
warren keys set-limit "$key_id" 1000000 --db "$db" >/dev/null

# Node-protocol operations are called as devices call them: an auth key for enrolling, the
# credential of a device enrolled here for the rest.
auth_key=$(curl -fsS -X POST -H "Authorization: Bearer $api_key" -H 'Content-Type: application/json' \
  -d '{"type":"auth","reusable":true,"expiresIn":"1d"}' "$url/v1/keys" | json_field .key)
node_key="nodekey:$(node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')"
node_token=$(curl -fsS -X POST -H "Authorization: Bearer $auth_key" -H 'Content-Type: application/json' \
  -d "{\"hostname\":\"fuzz\",\"os\":\"linux\",\"nodeKey\":\"$node_key\"}" "$url/v1/node/register" | json_field .nodeToken)

# Credentials reach the hooks (.ci/fuzz_hooks.py) through the environment, never the command line.
export SCHEMATHESIS_HOOKS=fuzz_hooks
export WARREN_FUZZ_API_KEY="$api_key" WARREN_FUZZ_KEY_ID="$key_id"
export WARREN_FUZZ_AUTH_KEY="$auth_key" WARREN_FUZZ_NODE_TOKEN="$node_token"
PYTHONPATH="$PWD/.ci${PYTHONPATH:+:$PYTHONPATH}" "$venv/bin/schemathesis" run "$url/v1/openapi.json" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --seed "${FUZZ_SEED:-20261123}" \
  --max-examples "${FUZZ_EXAMPLES:-40}" \
  --workers 1 \
  --request-timeout 10 \
  --no-color \
  --report junit --report-dir "$work/report"

# A run whose key stopped working half-way would have tested nothing but 401s.
curl -fsS -o /dev/null -H "Authorization: Bearer $api_key" "$url/v1/network" ||
  { echo "the fuzzing key no longer works: the run above tested little but 401s" >&2; exit 1; }
