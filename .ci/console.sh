#!/usr/bin/env bash
# The web console in a real browser: Debian's Chromium driven by playwright-core against a
# real `warren serve` (packages/console/browser). Run from the repository root after npm ci.
# The tests must leave the working tree as they found it: screenshots for the docs are made
# only on demand (npm run screenshots:console), and a run that changes a file fails here.
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi

tree_state() {
  # Outside a git checkout (an unpacked tarball) there is nothing to compare.
  git rev-parse --is-inside-work-tree >/dev/null 2>&1 || return 0
  git status --porcelain=v1 --untracked-files=all | sha256sum
}
before=$(tree_state)

npm run build:console
npm run test:console

if [ "$(tree_state)" != "$before" ]; then
  echo "The console's browser tests changed the working tree:" >&2
  git status --short >&2
  exit 1
fi
