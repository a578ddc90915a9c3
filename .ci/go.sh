#!/usr/bin/env bash
# The Go client (clients/go): formatting, vet, and its tests against a real `warren serve`
# started by the suite itself. Standard library only, so nothing is downloaded; a Go older than
# the module's `go` line fetches the right toolchain through the Go module proxy (GOTOOLCHAIN).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || { echo "go.sh: no Go toolchain on PATH (Go 1.21 or later is needed)" >&2; exit 1; }
command -v node >/dev/null 2>&1 || { echo "go.sh: the tests start the server with node" >&2; exit 1; }
go version

cd clients/go
unformatted=$("$(go env GOROOT)/bin/gofmt" -l .)
if [ -n "$unformatted" ]; then
  echo "go.sh: not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go test -count=1 ./...
