package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	warren "github.com/warrenhq/warren/clients/go"
)

const policyV1 = `// Managed by Terraform.
{
  "tagOwners": { "tag:ci": ["autogroup:admin"] },
  "acls": [
    // Admins reach everything.
    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },
  ],
}
`

// policyV1Reformatted holds the same values and comments as policyV1, laid out differently.
const policyV1Reformatted = `// Managed by Terraform.
{"tagOwners": {"tag:ci": ["autogroup:admin"]},
 "acls": [
   // Admins reach everything.
   {"src": ["autogroup:admin"], "action": "accept", "dst": ["*:*"]}]}
`

const policyV2 = `// Managed by Terraform.
{
  "tagOwners": { "tag:ci": ["autogroup:admin"], "tag:server": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },
    { "action": "accept", "src": ["tag:ci"], "dst": ["tag:server:22"] },
  ],
}
`

const policyOutside = `{ "acls": [ { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] } ] }`

func policyConfig(content string) string {
	return config("resource \"warren_policy\" \"test\" {\n  content = <<-EOT\n%s  EOT\n}\n", indent(content, "    "))
}

func indent(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// checkStoredPolicy compares the server's policy text with want, byte for byte.
func checkStoredPolicy(t *testing.T, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := apiClient(t).Policy.GetText(context.Background())
		if err != nil {
			return err
		}
		if got.Text != want {
			return fmt.Errorf("stored policy is\n%s\nwant\n%s", got.Text, want)
		}
		return nil
	}
}

func setPolicy(text string) func(context.Context, *warren.Client) error {
	return func(ctx context.Context, c *warren.Client) error {
		_, err := c.Policy.Set(ctx, text, "")
		return err
	}
}

func TestAccPolicy(t *testing.T) {
	const address = "warren_policy.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkStoredPolicy(t, defaultPolicy),
		Steps: []resource.TestStep{
			{
				Config: policyConfig(policyV1),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "id", "policy"),
					resource.TestMatchResourceAttr(address, "etag", errorMatching(`"`)),
					checkStoredPolicy(t, policyV1),
				),
			},
			{
				// Reformatting alone plans nothing.
				Config:           policyConfig(policyV1Reformatted),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            checkStoredPolicy(t, policyV1),
			},
			{
				Config: policyConfig(policyV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(address, tfjsonpath.New("etag")),
				}},
				Check: checkStoredPolicy(t, policyV2),
			},
			{
				ResourceName:      address,
				ImportState:       true,
				ImportStateId:     "anything",
				ImportStateVerify: true,
			},
			importPlansNothing(address, "anything"),
			{
				// A change made elsewhere is drift at plan time.
				PreConfig:          outOfBand(t, setPolicy(policyOutside)),
				Config:             policyConfig(policyV2),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// Applying after a refresh shows the change and puts the configuration back.
				Config: policyConfig(policyV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: checkStoredPolicy(t, policyV2),
			},
			{
				// A change landing between plan and apply is refused by If-Match, not overwritten.
				Config: policyConfig(policyV1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					runBeforeApply(outOfBand(t, setPolicy(policyOutside))),
				}},
				ExpectError: errorMatching("The policy was changed outside this configuration"),
			},
			{
				// The other change is still there; the next plan shows it and applying puts the
				// configuration back.
				PreConfig: func() {
					if err := checkStoredPolicy(t, policyOutside)(nil); err != nil {
						t.Fatalf("the refused apply overwrote the policy: %v", err)
					}
				},
				Config: policyConfig(policyV1),
				Check:  checkStoredPolicy(t, policyV1),
			},
			{
				// Naming the file is no change of the policy, and an import, which cannot know
				// the file, plans nothing either.
				Config:           policyFileConfig("policy.hujson", policyV1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            resource.TestCheckNoResourceAttr(address, "filename"),
			},
			importPlansNothing(address, "policy"),
		},
	})
}

// policyFileConfig is policyConfig naming the file the content comes from.
func policyFileConfig(filename, content string) string {
	return config("resource \"warren_policy\" \"test\" {\n  filename = %q\n  content = <<-EOT\n%s  EOT\n}\n", filename, indent(content, "    "))
}

// A plan of a policy with a mistake fails naming its line and column.
func TestAccPolicy_invalidAtLine(t *testing.T) {
	invalid := `{
  "groups": { "group:eng": ["ana@example.com"] },
  "acls": [
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22"] },
    // group:ops is not defined in groups.
    { "action": "accept",
      "src": ["group:ops"], "dst": ["10.0.0.0/24:5432"] },
  ],
  "tagOwners": { "tag:server": ["group:eng"] },
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      policyConfig(invalid),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`line 7, column \d+: group "group:ops" is not\s+defined`),
			},
			{
				// Given the file the text came from, the problem is named as a compiler would.
				Config:      policyFileConfig("policy.hujson", invalid),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`policy\.hujson:7:\d+: group "group:ops" is not\s+defined`),
			},
			{
				// Syntax is checked without the server, and placed as well.
				Config:      policyConfig("{\n  \"acls\": [,\n}\n"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid HuJSON.*line 2, column 12: invalid character ','`),
			},
			{
				// And named with the file, as the server's errors are.
				Config:      policyFileConfig("policy.hujson", "{\n  \"acls\": [,\n}\n"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid HuJSON.*policy\.hujson:2:12: invalid character ','`),
			},
		},
	})
}

// The provider's copy of the default policy is what the server gives a new network, so
// destroying warren_policy really restores the default.
func TestDefaultPolicyMatchesServer(t *testing.T) {
	if initialPolicy == "" {
		t.Skip("runs with the acceptance tests (TF_ACC=1)")
	}
	if initialPolicy != defaultPolicy {
		t.Fatalf("the server's default policy changed; update default_policy.hujson to:\n%s", initialPolicy)
	}
}

// Creating over a policy someone wrote by hand is refused unless asked for, by the plan, so
// that nothing else of the configuration is created either.
func TestAccPolicy_existingPolicy(t *testing.T) {
	const bystander = "bystander@example.com"
	withUser := policyConfig(policyV1) + fmt.Sprintf("resource \"warren_user\" \"bystander\" {\n  login_name = %q\n}\n", bystander)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkStoredPolicy(t, defaultPolicy),
		Steps: []resource.TestStep{
			{
				PreConfig:   outOfBand(t, setPolicy(policyOutside)),
				Config:      policyConfig(policyV1),
				PlanOnly:    true,
				ExpectError: errorMatching("The network already has a policy"),
			},
			{
				Config:      withUser,
				ExpectError: errorMatching("The network already has a policy"),
			},
			{
				PreConfig: func() {
					u, err := findUser(context.Background(), apiClient(t), func(u *warren.User) bool { return u.LoginName == bystander })
					if err != nil || u != nil {
						t.Fatalf("the refused plan still created %+v (%v)", u, err)
					}
				},
				Config:      policyConfig(policyV1),
				ExpectError: errorMatching("The network already has a policy"),
			},
			{
				Config: config("resource \"warren_policy\" \"test\" {\n  overwrite_existing = true\n  content = <<-EOT\n%s  EOT\n}\n", indent(policyV1, "    ")),
				Check:  checkStoredPolicy(t, policyV1),
			},
			// overwrite_existing only matters to the create: an import, which cannot know it,
			// plans nothing.
			importPlansNothing("warren_policy.test", "policy"),
		},
	})
}
