#!/usr/bin/env bash
# The Terraform/OpenTofu provider (providers/terraform): formatting, vet, and the acceptance
# tests, which drive a real OpenTofu binary against a real `warren serve` that the suite starts.
# OpenTofu is built from the Go module proxy into ~/.cache/warren/tofu/<version>/ once and
# reused afterwards (the first build takes several minutes on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || { echo "terraform.sh: no Go toolchain on PATH" >&2; exit 1; }
command -v node >/dev/null 2>&1 || { echo "terraform.sh: the tests start the server with node" >&2; exit 1; }
go version

tofu=$(bash providers/terraform/scripts/build-tofu.sh)
env -u TF_CLI_CONFIG_FILE "$tofu" version

cd providers/terraform
unformatted=$("$(go env GOROOT)/bin/gofmt" -l .)
if [ -n "$unformatted" ]; then
  echo "terraform.sh: not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
TF_ACC=1 TF_ACC_TERRAFORM_PATH="$tofu" go test -count=1 -timeout 20m ./...
