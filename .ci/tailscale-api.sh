#!/usr/bin/env bash
# Tailscale's own API client (tailscale.com/client/tailscale/v2, pinned in compat/tailscale/go.mod
# and fetched through the Go module proxy) against /api/v2 of a real `warren serve` that the
# suite starts itself. It needs the built warren command (`npm ci` builds it).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || { echo "tailscale-api.sh: no Go toolchain on PATH" >&2; exit 1; }
command -v node >/dev/null 2>&1 || { echo "tailscale-api.sh: the tests start the server with node" >&2; exit 1; }

cd compat/tailscale
unformatted=$("$(go env GOROOT)/bin/gofmt" -l .)
if [ -n "$unformatted" ]; then
  echo "tailscale-api.sh: not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go test -count=1 ./...
