package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccDataSources(t *testing.T) {
	device := enrollDevice(t, "data-1", "10.50.0.0/24")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: config(tagPolicy+`
resource "warren_device_tags" "d" {
  device_id  = %q
  tags       = ["tag:db"]
  depends_on = [warren_policy.tags]
}

data "warren_device" "by_id" {
  id = warren_device_tags.d.device_id
}

data "warren_device" "by_name" {
  name       = "data-1"
  depends_on = [warren_device_tags.d]
}

data "warren_devices" "db" {
  tags       = ["tag:db"]
  online     = true
  depends_on = [warren_device_tags.d]
}

data "warren_users" "owners" {
  role = "owner"
}

resource "warren_user" "no_devices" {
  login_name = "no-devices@example.com"
}

data "warren_devices" "owners_db" {
  user       = data.warren_users.owners.users[0].login_name
  tags       = ["tag:db"]
  depends_on = [warren_device_tags.d]
}

data "warren_devices" "no_devices_db" {
  user       = warren_user.no_devices.login_name
  tags       = ["tag:db"]
  depends_on = [warren_device_tags.d]
}

data "warren_network" "this" {}
`, device),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.warren_device.by_id", "name", "data-1"),
					resource.TestCheckResourceAttr("data.warren_device.by_id", "os", "linux"),
					resource.TestCheckResourceAttr("data.warren_device.by_id", "online", "true"),
					resource.TestCheckResourceAttr("data.warren_device.by_id", "addresses.#", "2"),
					resource.TestCheckResourceAttr("data.warren_device.by_id", "routes.0.prefix", "10.50.0.0/24"),
					resource.TestCheckResourceAttr("data.warren_device.by_id", "routes.0.state", "pending"),
					resource.TestCheckResourceAttr("data.warren_device.by_name", "id", device),
					resource.TestCheckTypeSetElemAttr("data.warren_device.by_name", "tags.*", "tag:db"),
					resource.TestCheckResourceAttr("data.warren_devices.db", "ids.#", "1"),
					resource.TestCheckResourceAttr("data.warren_devices.db", "ids.0", device),
					resource.TestCheckResourceAttr("data.warren_devices.db", "devices.0.name", "data-1"),
					// The filters combine: the device is the owner's, and no one else's.
					resource.TestCheckResourceAttr("data.warren_devices.owners_db", "ids.#", "1"),
					resource.TestCheckResourceAttr("data.warren_devices.owners_db", "ids.0", device),
					resource.TestCheckResourceAttr("data.warren_devices.no_devices_db", "ids.#", "0"),
					resource.TestCheckResourceAttr("data.warren_users.owners", "users.#", "1"),
					resource.TestCheckResourceAttr("data.warren_users.owners", "users.0.role", "owner"),
					resource.TestMatchResourceAttr("data.warren_network.this", "id", regexp.MustCompile(`^net_`)),
					resource.TestCheckResourceAttr("data.warren_network.this", "plan", "premium"),
					resource.TestCheckNoResourceAttr("data.warren_network.this", "limits.users"),
					resource.TestMatchResourceAttr("data.warren_network.this", "usage.devices", regexp.MustCompile(`^[1-9][0-9]*$`)),
				),
			},
			{
				Config: config(`
data "warren_device" "missing" {
  name = "no-such-device"
}
`),
				ExpectError: errorMatching(`no device has the name "no-such-device"`),
			},
		},
	})
}
