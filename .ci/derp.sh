#!/usr/bin/env bash
# The embedded DERP relay and STUN responder, driven by Tailscale's own client code
# (tailscale.com/derp/derphttp, tailscale.com/net/stun) against a real `warren serve --derp`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || { echo "derp.sh: no Go toolchain on PATH" >&2; exit 1; }

cd e2e/relay
unformatted=$("$(go env GOROOT)/bin/gofmt" -l .)
if [ -n "$unformatted" ]; then
  echo "derp.sh: not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go test -count=1 -timeout 10m ./...
