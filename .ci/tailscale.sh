#!/usr/bin/env bash
# The official Tailscale client against Warren (e2e/tailscale/): tailscaled, tailscale and
# derper are built from the Go module proxy into ~/.cache/warren/tailscale/<version>/ once and
# reused afterwards; the suite runs in a network namespace of its own, so no traffic leaves it.
# Interactive login adds Chromium (e2e/tailscale/interactive-login.test.ts); the flow-log check
# adds openssl, which issues the test's own certificate for log.tailscale.com (log-front.ts);
# Tailscale SSH adds OpenSSH's client, which `tailscale ssh` runs. Files named as arguments run
# alone (`.ci/tailscale.sh e2e/tailscale/dns.test.ts`); without any, the whole suite runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || { echo "tailscale.sh: no Go toolchain on PATH" >&2; exit 1; }
command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 ||
  { echo "tailscale.sh: needs unshare (util-linux) and ip (iproute2)" >&2; exit 1; }

# The interactive login is approved by a person in the console: Debian's Chromium, as the
# console's own suite uses (.ci/console.sh). openssl from Debian as well.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# `tailscale ssh` runs the system's OpenSSH client (e2e/tailscale/tailscale.test.ts, Tailscale SSH).
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
# warren serve runs from the build, console included (npm ci makes it; this rebuilds what is stale).
node scripts/build.mjs

TAILSCALE_BIN=$(bash e2e/scripts/build-tailscale.sh)
export TAILSCALE_BIN
# The several-instances checks run on PostgreSQL: its binaries from Debian's package (installed
# by postgres.sh when missing); netns.sh starts a throwaway cluster inside the namespace.
bash .ci/postgres.sh >/dev/null
WARREN_E2E_PG_BIN=/usr/lib/postgresql/$(ls /etc/postgresql | sort -V | tail -n 1)/bin
export WARREN_E2E_PG_BIN
"$TAILSCALE_BIN/tailscaled" --version | head -1
exec unshare --net -- bash e2e/tailscale/netns.sh "$@"
