#!/usr/bin/env bash
# Builds Headscale's server (cmd/headscale) at a release tag from its source, for the Tailscale
# fleet benchmark's side-by-side run (`npm run bench -- tailscale --compare headscale`), into a
# cache outside the clone keyed by version, and prints the binary's path. A binary already
# there is reused: only the first run pays for the build. CI does not run it.
#
#   HEADSCALE_VERSION  the release tag (default below)
#   HEADSCALE_REPO     where to clone it from: a URL, or a local clone or bare repository
#
# The Go module proxy does not serve Headscale itself, so its source comes from git; its
# dependencies come through the proxy, pinned by its go.sum.
set -euo pipefail
version="${HEADSCALE_VERSION:-v0.29.2}"
repo="${HEADSCALE_REPO:-https://github.com/juanfont/headscale.git}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/warren/headscale/$version"
bin="$dir/headscale"

if [ ! -x "$bin" ]; then
  if ! command -v go >/dev/null 2>&1; then
    [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
  fi
  command -v go >/dev/null 2>&1 || { echo "headscale/build.sh: no Go toolchain on PATH" >&2; exit 1; }
  # A local path is cloned through file:// so that --depth applies to it too.
  [ -d "$repo" ] && repo="file://$(cd "$repo" && pwd)"
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  echo "building headscale $version into $dir" >&2
  git -c advice.detachedHead=false clone --quiet --depth 1 --branch "$version" "$repo" "$src"
  mkdir -p "$dir"
  # A temporary name first, so an interrupted build never leaves a broken binary behind. The
  # version is stamped from the clone's tag, as Headscale's release builds report it.
  (cd "$src" && go build -buildvcs=true -trimpath -ldflags "-s -w" -o "$bin.tmp.$$" ./cmd/headscale)
  mv "$bin.tmp.$$" "$bin"
fi
echo "$bin"
