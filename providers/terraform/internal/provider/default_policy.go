package provider

import _ "embed"

// defaultPolicy is the policy a new network starts with (the server's DEFAULT_POLICY in
// packages/server/src/policy/default-policy.ts, byte for byte). Destroying warren_policy puts
// it back, since a network always has a policy; the acceptance tests check that this copy
// matches what the server gives a new network.
//
//go:embed default_policy.hujson
var defaultPolicy string
