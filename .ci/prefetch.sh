#!/usr/bin/env bash
# Downloads what the later suites install, while the Node suites keep the CPU busy: Debian's
# Chromium, wrk and openssl, the Go modules of the provider, the Tailscale API client and the
# relay suites, and the virtualenvs of the Python client's checks and of schemathesis. Only a
# head start: each suite still installs what it finds missing, so a failure here costs time,
# never a result.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if command -v go >/dev/null 2>&1; then
  for module in providers/terraform compat/tailscale e2e/relay; do
    (cd "$module" && go mod download) || echo "prefetch: go mod download failed in $module" >&2
  done
fi

# pip's downloads, while apt and the Go module proxy above are done with the network.
bash .ci/python.sh --venvs || echo "prefetch: the Python client's virtualenvs failed" >&2
bash .ci/fuzz.sh --venv || echo "prefetch: the schemathesis virtualenv failed" >&2
