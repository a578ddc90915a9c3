package compat_test

import (
	"errors"
	"strings"
	"testing"

	tailscale "tailscale.com/client/tailscale/v2"
)

// isolated lets only tagged servers reach each other: laptop, untagged, has no peers.
const isolated = `// laptop stands alone
{
  "tagOwners": { "tag:server": ["autogroup:admin"], "tag:ci": ["autogroup:admin"] },
  "acls": [ { "action": "accept", "src": ["tag:server"], "dst": ["tag:server:*"] } ],
}
`

func TestPolicyFile(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		acl, err := c.PolicyFile().Get(ctx)
		if err != nil || acl.ETag == "" || len(acl.ACLs) != 1 || acl.ACLs[0].Action != "accept" {
			t.Fatalf("Get: %+v, %v", acl, err)
		}
		covered(t, "PolicyFile.Get")
		raw, err := c.PolicyFile().Raw(ctx)
		if err != nil || raw.HuJSON != basePolicy || raw.ETag != acl.ETag {
			t.Fatalf("Raw: %+v, %v", raw, err)
		}
		covered(t, "PolicyFile.Raw")
		text, err := v1.Policy.GetText(ctx)
		if err != nil || text.ETag != acl.ETag {
			t.Fatalf("the ETag through /v1: %+v, %v", text, err)
		}

		if err := c.PolicyFile().Validate(ctx, isolated); err != nil {
			t.Fatalf("Validate of a valid policy: %v", err)
		}
		err = c.PolicyFile().Validate(ctx, "{\n  \"acls\": [ { \"action\": \"accept\", \"src\": [\"*\"], \"dst\": [\"nowhere:*\"] } ]\n}")
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("Validate of an invalid policy: %v", err)
		}
		covered(t, "PolicyFile.Validate")

		// A stale ETag is refused with 412; "ts-default" only matches the default policy.
		var apiErr tailscale.APIError
		if err := c.PolicyFile().Set(ctx, isolated, `"0123456789"`); !errors.As(err, &apiErr) || apiErr.Status != 412 {
			t.Fatalf("Set with a stale ETag: %v", err)
		}
		if err := c.PolicyFile().Set(ctx, isolated, "ts-default"); !errors.As(err, &apiErr) || apiErr.Status != 412 {
			t.Fatalf(`Set with "ts-default" over a changed policy: %v`, err)
		}
		if err := c.PolicyFile().Set(ctx, isolated, raw.ETag); err != nil {
			t.Fatal(err)
		}
		covered(t, "PolicyFile.Set")
		if len(peers(t, "laptop")) != 0 {
			t.Fatal("laptop still has peers under a policy that isolates it")
		}
		if stored, err := v1.Policy.GetText(ctx); err != nil || stored.Text != isolated {
			t.Fatalf("the policy through /v1: %v", err)
		}

		// Back to the base policy, as a struct this time.
		var base tailscale.ACL
		base.TagOwners = map[string][]string{"tag:server": {"autogroup:admin"}, "tag:ci": {"autogroup:admin"}}
		base.ACLs = []tailscale.ACLEntry{{
			Action:      "accept",
			Source:      []string{"autogroup:member", "tag:server", "tag:ci"},
			Destination: []string{"autogroup:member:*", "tag:server:*", "tag:ci:*", "10.0.0.0/8:*"},
		}}
		current, err := c.PolicyFile().Raw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.PolicyFile().SetAndGet(ctx, base, current.ETag)
		if err != nil || got.ETag == "" || got.ETag == current.ETag || len(got.ACLs) != 1 {
			t.Fatalf("SetAndGet: %+v, %v", got, err)
		}
		covered(t, "PolicyFile.SetAndGet")
		if _, seen := peers(t, "laptop")["web"]; !seen {
			t.Fatal("laptop does not see web again under the base policy")
		}
		// Warren's rules are stricter than Tailscale's: an over-permissive rule is refused.
		var open tailscale.ACL
		open.ACLs = []tailscale.ACLEntry{{Action: "accept", Source: []string{"*"}, Destination: []string{"*:*"}}}
		if _, err := c.PolicyFile().SetAndGet(ctx, open, ""); !errors.As(err, &apiErr) || apiErr.Status != 400 || len(apiErr.Data) == 0 {
			t.Fatalf("an invalid policy: %v", err)
		}
		if err := c.PolicyFile().Set(ctx, basePolicy, ""); err != nil {
			t.Fatal(err)
		}
	})
}
