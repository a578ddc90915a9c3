#!/usr/bin/env bash
# Builds the Tailscale release pinned in e2e/tools/tailscale/go.mod (tailscaled, tailscale and
# derper) from the Go module proxy into a cache outside the clone keyed by version, and prints
# the cache directory. Binaries already there are reused: only the first run pays for the build.
set -euo pipefail
tools="$(cd "$(dirname "$0")/../tools/tailscale" && pwd)"
cd "$tools"
version=$(go list -m -f '{{.Version}}' tailscale.com)
dir="${XDG_CACHE_HOME:-$HOME/.cache}/warren/tailscale/$version"
mkdir -p "$dir"
for cmd in tailscaled tailscale derper; do
  if [ ! -x "$dir/$cmd" ]; then
    echo "building $cmd $version into $dir" >&2
    # A temporary name first, so an interrupted build never leaves a broken binary behind.
    go build -trimpath -ldflags "-s -w" -o "$dir/$cmd.tmp.$$" "tailscale.com/cmd/$cmd"
    mv "$dir/$cmd.tmp.$$" "$dir/$cmd"
  fi
done
echo "$dir"
