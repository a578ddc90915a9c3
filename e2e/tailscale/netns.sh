#!/usr/bin/env bash
# Runs inside `unshare --net` (see .ci/tailscale.sh): only loopback exists, and tailscaled never
# calls its control server while it believes the network is down, so a veth pair with two
# documentation addresses gives it one. Nothing here can reach outside the namespace.
set -euo pipefail
ip link set lo up
ip link add veth0 type veth peer name veth1
ip addr add 192.0.2.1/24 dev veth0
ip addr add 192.0.2.2/24 dev veth1
ip link set veth0 up
ip link set veth1 up
cd "$(dirname "$0")/../.."

# A PostgreSQL cluster of the namespace's own for the several-instances checks, gone with it.
if [ -n "${WARREN_E2E_PG_BIN:-}" ]; then
  pg=$(mktemp -d)
  chown postgres "$pg"
  trap 'runuser -u postgres -- "$WARREN_E2E_PG_BIN/pg_ctl" -D "$pg/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$pg"' EXIT
  (cd / && runuser -u postgres -- "$WARREN_E2E_PG_BIN/initdb" -D "$pg/data" -U postgres --auth=trust >/dev/null)
  (cd / && runuser -u postgres -- "$WARREN_E2E_PG_BIN/pg_ctl" -D "$pg/data" -l "$pg/log" -w \
    -o "-h 127.0.0.1 -p 5432 -k $pg" start >/dev/null)
  export WARREN_E2E_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres
fi
# The files named on the command line (.ci/tailscale.sh e2e/tailscale/dns.test.ts), or all of them.
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(e2e/tailscale/tailscale.test.ts e2e/tailscale/dns.test.ts e2e/tailscale/interactive-login.test.ts
    e2e/tailscale/instances.test.ts)
fi
node --import tsx --test --test-concurrency=1 --test-timeout=600000 "${files[@]}"
