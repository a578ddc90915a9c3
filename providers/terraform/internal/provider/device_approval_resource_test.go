package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	warren "github.com/warrenhq/warren/clients/go"
)

func deviceApprovalConfig(deviceID string) string {
	return config(`
resource "warren_device_approval" "laptop" {
  device_id = %q
}

data "warren_device" "laptop" {
  id         = warren_device_approval.laptop.device_id
}

data "warren_network" "this" {
  depends_on = [warren_device_approval.laptop]
}
`, deviceID)
}

// deviceAuthorized checks on the server whether a device is approved.
func deviceAuthorized(t *testing.T, id string, want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, err := apiClient(t).Devices.Get(context.Background(), id)
		if err != nil {
			return err
		}
		if d.Authorized != want {
			return fmt.Errorf("device %s authorized %v, want %v", id, d.Authorized, want)
		}
		return nil
	}
}

// requireDeviceApproval turns the network's device approval on for one test.
func requireDeviceApproval(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	on, off := true, false
	c := apiClient(t)
	if _, err := c.Network.Update(context.Background(), warren.NetworkUpdate{DeviceApproval: &on}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.Network.Update(context.Background(), warren.NetworkUpdate{DeviceApproval: &off}); err != nil {
			t.Error(err)
		}
	})
}

// deauthorize withdraws a device's approval through Tailscale's API v2, the one API that can:
// a change made outside Terraform.
func deauthorize(t *testing.T, id string) func() {
	return func() {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, os.Getenv("WARREN_URL")+"/api/v2/device/"+id+"/authorized",
			strings.NewReader(`{"authorized": false}`))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(os.Getenv("WARREN_API_KEY"), "")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode >= 300 {
			t.Fatalf("de-authorizing %s: %s", id, res.Status)
		}
	}
}

func TestAccDeviceApproval(t *testing.T) {
	const address = "warren_device_approval.laptop"
	requireDeviceApproval(t)
	device := enrollDevice(t, "laptop-approval")
	if err := deviceAuthorized(t, device, false)(nil); err != nil {
		t.Fatalf("a device enrolled while approval is on should wait: %v", err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		// Destroying the resource leaves the device approved.
		CheckDestroy: deviceAuthorized(t, device, true),
		Steps: []resource.TestStep{
			{
				Config: deviceApprovalConfig(device),
				Check: resource.ComposeAggregateTestCheckFunc(
					deviceAuthorized(t, device, true),
					resource.TestCheckResourceAttr(address, "id", device),
					resource.TestCheckResourceAttr("data.warren_device.laptop", "authorized", "true"),
					resource.TestCheckResourceAttr("data.warren_device.laptop", "protocol", "native"),
					resource.TestCheckResourceAttr("data.warren_device.laptop", "key_expired", "false"),
					resource.TestMatchResourceAttr("data.warren_device.laptop", "dns_name", regexp.MustCompile(`^laptop-approval\.`)),
					resource.TestCheckResourceAttr("data.warren_network.this", "device_approval", "true"),
					resource.TestCheckResourceAttr("data.warren_network.this", "node_key_expiry", "180d"),
				),
			},
			{
				ResourceName:      address,
				ImportState:       true,
				ImportStateVerify: true,
			},
			importPlansNothing(address, ""),
			{
				// De-authorized elsewhere: the refresh sees it and the plan approves it again.
				PreConfig:          deauthorize(t, device),
				Config:             deviceApprovalConfig(device),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// A device waiting for approval has no approval to import: applying approves it.
				ResourceName:  address,
				ImportState:   true,
				ImportStateId: device,
				ExpectError:   errorMatching("Cannot import non-existent remote object"),
			},
			{
				Config: deviceApprovalConfig(device),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionCreate),
				}},
				Check: deviceAuthorized(t, device, true),
			},
		},
	})
}

func TestAccDeviceApproval_alreadyApproved(t *testing.T) {
	device := enrollDevice(t, "approved-before")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			// Approval was off when the device enrolled: the resource adopts it as it is.
			Config: deviceApprovalConfig(device),
			Check:  resource.ComposeAggregateTestCheckFunc(deviceAuthorized(t, device, true), resource.TestCheckResourceAttr("warren_device_approval.laptop", "id", device)),
		}},
	})
}

func TestAccAuthKey_preApproved(t *testing.T) {
	requireDeviceApproval(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: config(tagPolicy + `
resource "warren_auth_key" "servers" {
  tags         = ["tag:ci"]
  pre_approved = true
  expires_in   = "1h"
  depends_on   = [warren_policy.tags]
}
`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("warren_auth_key.servers", "pre_approved", "true"),
				func(s *terraform.State) error {
					secret := s.RootModule().Resources["warren_auth_key.servers"].Primary.Attributes["key"]
					reg := registerWith(t, secret, "preapproved-tf")
					if !reg.Device.Authorized {
						return fmt.Errorf("a device enrolled with a pre-approved key waits for approval")
					}
					return nil
				},
			),
		}},
	})
}
