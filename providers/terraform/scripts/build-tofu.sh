#!/usr/bin/env bash
# Builds the OpenTofu release pinned in tools/opentofu/go.mod from the Go module proxy (no GitHub,
# no registry download) into a cache outside the clone, and prints the binary's path. A binary
# already in the cache is reused, so only the first run pays for the build (minutes on 2 cores).
set -euo pipefail
tools="$(cd "$(dirname "$0")/../tools/opentofu" && pwd)"
cd "$tools"
version=$(go list -m -f '{{.Version}}' github.com/opentofu/opentofu)
out="${XDG_CACHE_HOME:-$HOME/.cache}/warren/tofu/$version/tofu"
if [ ! -x "$out" ]; then
  mkdir -p "$(dirname "$out")"
  echo "building OpenTofu $version into $out" >&2
  # dev=no makes `tofu version` report the release itself instead of a development build.
  # Build to a temporary name first so an interrupted build never leaves a broken binary behind.
  go build -trimpath -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
    -o "$out.tmp.$$" github.com/opentofu/opentofu/cmd/tofu
  mv "$out.tmp.$$" "$out"
fi
echo "$out"
