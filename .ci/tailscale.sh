#!/usr/bin/env bash
# The official Tailscale client against Warren (e2e/tailscale/): tailscaled, tailscale and
# derper are built from the Go module proxy into ~/.cache/warren/tailscale/<version>/ once and
# reused afterwards; the suite runs in a network namespace of its own, so no traffic leaves it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || { echo "tailscale.sh: no Go toolchain on PATH" >&2; exit 1; }
command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 ||
  { echo "tailscale.sh: needs unshare (util-linux) and ip (iproute2)" >&2; exit 1; }

TAILSCALE_BIN=$(bash e2e/scripts/build-tailscale.sh)
export TAILSCALE_BIN
"$TAILSCALE_BIN/tailscaled" --version | head -1
exec unshare --net -- bash e2e/tailscale/netns.sh
