package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	warren "github.com/warrenhq/warren/clients/go"
)

// tagPolicy defines the tags the key and device tests use.
const tagPolicy = `
resource "warren_policy" "tags" {
  content = <<-EOT
    {
      "tagOwners": { "tag:ci": ["autogroup:admin"], "tag:web": ["autogroup:admin"], "tag:db": ["autogroup:admin"] },
      "acls": [ { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] } ],
    }
  EOT
}
`

// keyTracker remembers the keys a resource had during a test: the current one, to change it
// out of band, and all of them, to check they were all revoked at the end.
type keyTracker struct {
	address string
	ids     []string
}

func (k *keyTracker) remember(s *terraform.State) error {
	rs, ok := s.RootModule().Resources[k.address]
	if !ok {
		return fmt.Errorf("%s not in state", k.address)
	}
	k.ids = append(k.ids, rs.Primary.ID)
	return nil
}

func (k *keyTracker) current() string { return k.ids[len(k.ids)-1] }

// hasState checks the state of a key on the server.
func hasState(t *testing.T, id func() string, want warren.KeyState) resource.TestCheckFunc {
	return func(*terraform.State) error {
		k, err := apiClient(t).Keys.Get(context.Background(), id())
		if err != nil {
			return err
		}
		if k.State != want {
			return fmt.Errorf("key %s is %s, want %s", k.ID, k.State, want)
		}
		return nil
	}
}

// allRevoked is a CheckDestroy: every key the resource had is revoked on the server.
func (k *keyTracker) allRevoked(t *testing.T) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, id := range k.ids {
			if err := hasState(t, func() string { return id }, "revoked")(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// revokeCurrent deletes the current key through the API, as someone outside Terraform would.
func (k *keyTracker) revokeCurrent(t *testing.T) func() {
	return outOfBand(t, func(ctx context.Context, c *warren.Client) error { return c.Keys.Delete(ctx, k.current()) })
}

// replaced is a pre-apply plan check that the key is planned for replacement.
func (k *keyTracker) replaced() resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(k.address, plancheck.ResourceActionDestroyBeforeCreate),
	}}
}

// secretSensitive is a pre-apply plan check that the key's secret is marked sensitive, so that
// the CLI never prints it.
func (k *keyTracker) secretSensitive() resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectSensitiveValue(k.address, tfjsonpath.New("key")),
	}}
}

func authKeyConfig(description, expiresIn string) string {
	return config(tagPolicy+`
resource "warren_auth_key" "ci" {
  reusable    = true
  tags        = ["tag:ci"]
  expires_in  = %q
  description = %q
  depends_on  = [warren_policy.tags]
}
`, expiresIn, description)
}

func TestAccAuthKey(t *testing.T) {
	key := &keyTracker{address: "warren_auth_key.ci"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             key.allRevoked(t),
		Steps: []resource.TestStep{
			{
				Config:           authKeyConfig("ci runners", "2d"),
				ConfigPlanChecks: key.secretSensitive(),
				Check: resource.ComposeAggregateTestCheckFunc(
					key.remember,
					resource.TestMatchResourceAttr(key.address, "key", regexp.MustCompile(`^wrn_auth_`)),
					resource.TestMatchResourceAttr(key.address, "user_id", regexp.MustCompile(`^usr_`)),
					resource.TestCheckResourceAttr(key.address, "state", "valid"),
					resource.TestCheckResourceAttr(key.address, "reusable", "true"),
					resource.TestCheckResourceAttr(key.address, "ephemeral", "false"),
					resource.TestCheckResourceAttr(key.address, "pre_approved", "false"),
					resource.TestCheckTypeSetElemAttr(key.address, "tags.*", "tag:ci"),
				),
			},
			{
				// A tag the API would refuse fails the plan, not the apply.
				Config:      strings.Replace(authKeyConfig("ci runners", "2d"), `["tag:ci"]`, `["tag:CI"]`, 1),
				PlanOnly:    true,
				ExpectError: errorMatching(`must be "tag:" then up to 63 lowercase letters`),
			},
			{
				// The same lifetime in another unit is no change.
				Config:           authKeyConfig("ci runners", "48h"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Keys cannot change: a new description is a new key, and the old one is revoked.
				Config:           authKeyConfig("ci runners (linux)", "2d"),
				ConfigPlanChecks: key.replaced(),
				Check: resource.ComposeAggregateTestCheckFunc(
					hasState(t, key.current, "revoked"),
					key.remember,
					resource.TestCheckResourceAttr(key.address, "description", "ci runners (linux)"),
				),
			},
			{
				ResourceName:            key.address,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"key"}, // shown once, at creation
			},
			importPlansNothing(key.address, ""),
			{
				// Revoked elsewhere: the refresh sees it and the plan replaces the key.
				PreConfig:        key.revokeCurrent(t),
				Config:           authKeyConfig("ci runners (linux)", "2d"),
				ConfigPlanChecks: key.replaced(),
				Check:            resource.ComposeAggregateTestCheckFunc(key.remember, resource.TestCheckResourceAttr(key.address, "state", "valid")),
			},
		},
	})
}

func apiKeyConfig(scopes string) string {
	return config(`
resource "warren_api_key" "pipeline" {
  name       = "deploy-pipeline"
  scopes     = %s
  expires_in = "30d"
  rate_limit = 50
}
`, scopes)
}

func TestAccAPIKey(t *testing.T) {
	key := &keyTracker{address: "warren_api_key.pipeline"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             key.allRevoked(t),
		Steps: []resource.TestStep{
			{
				// A scope the API does not have fails the plan, not the apply.
				Config:      apiKeyConfig(`["read", "dns"]`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)scopes.*value must be one of`),
			},
			{
				Config:           apiKeyConfig(`["read", "devices"]`),
				ConfigPlanChecks: key.secretSensitive(),
				Check: resource.ComposeAggregateTestCheckFunc(
					key.remember,
					resource.TestMatchResourceAttr(key.address, "key", regexp.MustCompile(`^wrn_api_`)),
					resource.TestCheckResourceAttr(key.address, "state", "valid"),
					resource.TestCheckResourceAttr(key.address, "rate_limit", "50"),
					resource.TestCheckResourceAttr(key.address, "scopes.#", "2"),
					resource.TestCheckResourceAttr(key.address, "expires_in", "30d"),
				),
			},
			{
				Config:           apiKeyConfig(`["read", "devices", "acls"]`),
				ConfigPlanChecks: key.replaced(),
				Check: resource.ComposeAggregateTestCheckFunc(
					hasState(t, key.current, "revoked"),
					key.remember,
					resource.TestCheckResourceAttr(key.address, "scopes.#", "3"),
				),
			},
			{
				ResourceName:            key.address,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"key"},
			},
			importPlansNothing(key.address, ""),
			{
				PreConfig:          key.revokeCurrent(t),
				Config:             apiKeyConfig(`["read", "devices", "acls"]`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config:           apiKeyConfig(`["read", "devices", "acls"]`),
				ConfigPlanChecks: key.replaced(),
				Check:            resource.ComposeAggregateTestCheckFunc(key.remember, resource.TestCheckResourceAttr(key.address, "state", "valid")),
			},
			{
				// Revoked elsewhere between plan and apply: destroying it has nothing left to do.
				Config: config(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(key.address, plancheck.ResourceActionDestroy),
					runBeforeApply(key.revokeCurrent(t)),
				}},
			},
		},
	})
}

// A key that expires shows as needing replacement at the next plan.
func TestAccAuthKey_expired(t *testing.T) {
	key := &keyTracker{address: "warren_auth_key.short"}
	cfg := config(`
resource "warren_auth_key" "short" {
  expires_in = "5s"
}
`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  key.remember,
			},
			{
				PreConfig: func() {
					time.Sleep(5500 * time.Millisecond)
					if err := hasState(t, key.current, "expired")(nil); err != nil {
						t.Fatal(err)
					}
				},
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

func authKeyForUserConfig(user string) string {
	return config(`
resource "warren_user" "owner" {
  login_name = "key.owner@example.com"
}

resource "warren_auth_key" "laptop" {
  user       = %s
  expires_in = "1h"
}
`, user)
}

// An auth key made out to a user by login name keeps that spelling; the user's id, which is what
// an import reads, names the same user and is no change either.
func TestAccAuthKey_userByLoginName(t *testing.T) {
	const address = "warren_auth_key.laptop"
	byLogin := authKeyForUserConfig("warren_user.owner.login_name")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: byLogin,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "user", "key.owner@example.com"),
					resource.TestCheckResourceAttrPair(address, "user_id", "warren_user.owner", "id"),
				),
			},
			importPlansNothing(address, ""),
			{
				Config:           authKeyForUserConfig("warren_user.owner.id"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Another user is another key.
				Config:           authKeyForUserConfig(`data.warren_users.owners.users[0].login_name`) + "data \"warren_users\" \"owners\" {\n  role = \"owner\"\n}\n",
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroyBeforeCreate)}},
			},
		},
	})
}
