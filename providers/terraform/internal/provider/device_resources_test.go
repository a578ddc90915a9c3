package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	warren "github.com/warrenhq/warren/clients/go"
)

func deviceTagsConfig(deviceID, tags string) string {
	return config(tagPolicy+`
resource "warren_device_tags" "web" {
  device_id  = %q
  tags       = %s
  depends_on = [warren_policy.tags]
}
`, deviceID, tags)
}

// deviceTags checks the tags of a device on the server.
func deviceTags(t *testing.T, id string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, err := apiClient(t).Devices.Get(context.Background(), id)
		if err != nil {
			return err
		}
		got := slices.Sorted(slices.Values(d.Tags))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("device %s has tags %v, want %v", id, got, want)
		}
		return nil
	}
}

func TestAccDeviceTags(t *testing.T) {
	const address = "warren_device_tags.web"
	device := enrollDevice(t, "web-tags")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             func(s *terraform.State) error { return deviceTags(t, device)(s) },
		Steps: []resource.TestStep{
			{
				Config: deviceTagsConfig(device, `["tag:web"]`),
				Check:  resource.ComposeAggregateTestCheckFunc(deviceTags(t, device, "tag:web"), resource.TestCheckResourceAttr(address, "id", device)),
			},
			{
				Config: deviceTagsConfig(device, `["tag:web", "tag:db"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: deviceTags(t, device, "tag:db", "tag:web"),
			},
			{
				ResourceName:      address,
				ImportState:       true,
				ImportStateVerify: true,
			},
			importPlansNothing(address, ""),
			{
				// A tag the API would refuse fails the plan, not the apply.
				Config:      deviceTagsConfig(device, `["tag:web", "Web"]`),
				PlanOnly:    true,
				ExpectError: errorMatching(`must be "tag:" then up to 63 lowercase letters`),
			},
			{
				PreConfig: outOfBand(t, func(ctx context.Context, c *warren.Client) error {
					_, err := c.Devices.SetTags(ctx, device, []string{"tag:ci"})
					return err
				}),
				Config:             deviceTagsConfig(device, `["tag:web", "tag:db"]`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: deviceTagsConfig(device, `["tag:web", "tag:db"]`),
				Check:  deviceTags(t, device, "tag:db", "tag:web"),
			},
		},
	})
}

func deviceRoutesConfig(deviceID, approved string) string {
	return config(`
resource "warren_device_routes" "gw" {
  device_id = %q
  approved  = %s
}
`, deviceID, approved)
}

// routeStates checks the state of each advertised prefix of a device on the server.
func routeStates(t *testing.T, id *string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, err := apiClient(t).Devices.Get(context.Background(), *id)
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, rt := range d.Routes {
			got[rt.Prefix] = string(rt.State)
		}
		for prefix, state := range want {
			if got[prefix] != state {
				return fmt.Errorf("device %s routes are %v, want %v", *id, got, want)
			}
		}
		return nil
	}
}

func TestAccDeviceRoutes(t *testing.T) {
	const address = "warren_device_routes.gw"
	device := enrollDevice(t, "gw", "10.1.0.0/24", "10.2.0.0/24", "10.3.0.0/24")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy: routeStates(t, &device, map[string]string{
			"10.1.0.0/24": "disabled", "10.2.0.0/24": "disabled", "10.3.0.0/24": "disabled",
		}),
		Steps: []resource.TestStep{
			{
				Config: deviceRoutesConfig(device, `["10.1.0.0/24"]`),
				Check: resource.ComposeAggregateTestCheckFunc(
					routeStates(t, &device, map[string]string{"10.1.0.0/24": "approved", "10.2.0.0/24": "pending", "10.3.0.0/24": "pending"}),
					resource.TestCheckResourceAttr(address, "advertised.#", "3"),
				),
			},
			{
				Config: deviceRoutesConfig(device, `["10.2.0.0/24", "10.3.0.0/24"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					// Approving changes nothing the device advertises: the plan shows the
					// known set, not "(known after apply)".
					plancheck.ExpectKnownValue(address, tfjsonpath.New("advertised"), knownvalue.SetExact([]knownvalue.Check{
						knownvalue.StringExact("10.1.0.0/24"), knownvalue.StringExact("10.2.0.0/24"), knownvalue.StringExact("10.3.0.0/24"),
					})),
				}},
				Check: routeStates(t, &device, map[string]string{"10.1.0.0/24": "disabled", "10.2.0.0/24": "approved", "10.3.0.0/24": "approved"}),
			},
			{
				ResourceName:      address,
				ImportState:       true,
				ImportStateVerify: true,
			},
			importPlansNothing(address, ""),
			{
				Config:      deviceRoutesConfig(device, `["10.9.0.0/24"]`),
				ExpectError: errorMatching("has not advertised 10.9.0.0/24"),
			},
			{
				Config:      deviceRoutesConfig(device, `["10.2.0.1/24"]`),
				PlanOnly:    true,
				ExpectError: errorMatching(`write "10.2.0.1/24" as "10.2.0.0/24"`),
			},
			{
				// A route approved by hand is drift; applying disables it again.
				PreConfig: outOfBand(t, func(ctx context.Context, c *warren.Client) error {
					routes, err := c.Routes.List(ctx, &warren.RouteListOptions{Device: device})
					if err != nil {
						return err
					}
					for _, rt := range routes {
						if rt.Prefix == "10.1.0.0/24" {
							_, err = c.Routes.Approve(ctx, rt.ID)
						}
					}
					return err
				}),
				Config: deviceRoutesConfig(device, `["10.2.0.0/24", "10.3.0.0/24"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: routeStates(t, &device, map[string]string{"10.1.0.0/24": "disabled", "10.2.0.0/24": "approved"}),
			},
		},
	})
}

// deviceSettingsConfig manages every setting of one device: its tags, its approved routes and
// its approval.
func deviceSettingsConfig(deviceID string) string {
	return config(tagPolicy+`
resource "warren_device_tags" "d" {
  device_id  = %[1]q
  tags       = ["tag:web"]
  depends_on = [warren_policy.tags]
}

resource "warren_device_routes" "d" {
  device_id = %[1]q
  approved  = ["10.60.0.0/24"]
}

resource "warren_device_approval" "d" {
  device_id = %[1]q
}
`, deviceID)
}

var deviceSettingAddresses = []string{"warren_device_tags.d", "warren_device_routes.d", "warren_device_approval.d"}

// expectEach is one plan check of action for each address.
func expectEach(action plancheck.ResourceActionType, addresses ...string) []plancheck.PlanCheck {
	checks := make([]plancheck.PlanCheck, len(addresses))
	for i, a := range addresses {
		checks[i] = plancheck.ExpectResourceAction(a, action)
	}
	return checks
}

func deleteDevice(t *testing.T, id string) func() {
	return outOfBand(t, func(ctx context.Context, c *warren.Client) error { return c.Devices.Delete(ctx, id) })
}

// A device deleted outside Terraform takes its settings with it: the refresh drops them from the
// state and the plan creates them again, without an error; and a device deleted between plan
// and apply leaves nothing for destroy to undo, which is no error either.
func TestAccDeviceSettings_deviceDeleted(t *testing.T) {
	first := enrollDevice(t, "deleted-1", "10.60.0.0/24")
	second := enrollDevice(t, "deleted-2", "10.60.0.0/24")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: deviceSettingsConfig(first),
				Check:  resource.ComposeAggregateTestCheckFunc(deviceTags(t, first, "tag:web"), deviceAuthorized(t, first, true)),
			},
			{
				PreConfig:          deleteDevice(t, first),
				Config:             deviceSettingsConfig(first),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: expectEach(plancheck.ResourceActionCreate, deviceSettingAddresses...),
				},
			},
			{
				// Applying that plan fails, since the device is gone, and says so for each setting.
				Config:      deviceSettingsConfig(first),
				ExpectError: regexp.MustCompile(`Cannot set the approved routes of device dev_\w+[^E]*404 not_found`),
			},
			{
				Config: deviceSettingsConfig(second),
				Check:  resource.ComposeAggregateTestCheckFunc(deviceTags(t, second, "tag:web"), deviceAuthorized(t, second, true)),
			},
			{
				Config: config(tagPolicy),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(
					expectEach(plancheck.ResourceActionDestroy, deviceSettingAddresses...),
					runBeforeApply(deleteDevice(t, second)),
				)},
			},
		},
	})
}
