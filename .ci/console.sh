#!/usr/bin/env bash
# The web console in a real browser: Debian's Chromium driven by playwright-core against a
# real `warren serve` (packages/console/browser). Run from the repository root after npm ci.
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi

npm run build:console
npm run test:console
