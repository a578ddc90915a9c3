#!/usr/bin/env bash
# Runs inside `unshare --net` (see .ci/tailscale.sh): only loopback exists, and tailscaled never
# calls its control server while it believes the network is down, so a veth pair with two
# documentation addresses gives it one. Nothing here can reach outside the namespace.
set -euo pipefail
ip link set lo up
ip link add veth0 type veth peer name veth1
ip addr add 192.0.2.1/24 dev veth0
ip addr add 192.0.2.2/24 dev veth1
ip link set veth0 up
ip link set veth1 up
cd "$(dirname "$0")/../.."
exec node --import tsx --test --test-concurrency=1 --test-timeout=600000 e2e/tailscale/tailscale.test.ts \
  e2e/tailscale/interactive-login.test.ts
