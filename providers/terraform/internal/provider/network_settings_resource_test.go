package provider

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	warren "github.com/warrenhq/warren/clients/go"
)

// networkSettingsConfig sets every argument but magic_dns, domain and flow_logs, which stay
// computed; nameservers is the one the steps change.
func networkSettingsConfig(keyExpiry, nameserver string) string {
	return config(`
resource "warren_network_settings" "this" {
  device_approval = true
  node_key_expiry = %q
  derp_embedded   = false
  dns = {
    nameservers    = [%q]
    search_domains = ["corp.example"]
    split_dns = {
      "corp.example" = ["10.0.0.53", "10.0.0.54"]
      "lan.example"  = []
    }
    extra_records = [
      { name = "db.lan.example", type = "A", value = "10.0.0.5" },
      { name = "db.lan.example", type = "AAAA", value = "fd00::5" },
    ]
  }
}

data "warren_network" "this" {
  depends_on = [warren_network_settings.this]
}
`, keyExpiry, nameserver)
}

// restoreNetworkSettings puts the test network's settings back as they were when the test
// started: destroying the resource leaves them, and the other tests expect the defaults.
func restoreNetworkSettings(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	c := apiClient(t)
	n, err := c.Network.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, err := c.Network.Update(context.Background(), warren.NetworkUpdate{
			DeviceApproval: &n.DeviceApproval, NodeKeyExpiry: &n.NodeKeyExpiry, FlowLogs: &n.FlowLogs,
			DNS: &warren.NetworkDNSUpdate{
				ResetDomain: true, MagicDNS: &n.DNS.MagicDNS, Nameservers: &n.DNS.Nameservers,
				SearchDomains: &n.DNS.SearchDomains, SplitDNS: &n.DNS.SplitDNS, ExtraRecords: &n.DNS.ExtraRecords,
			},
			DERP: &warren.NetworkDERPUpdate{Embedded: &n.DERP.Embedded, Regions: &n.DERP.Regions},
		})
		if err != nil {
			t.Error(err)
		}
	})
}

// storedNetwork checks the network's settings on the server.
func storedNetwork(t *testing.T, check func(n *warren.Network) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		n, err := apiClient(t).Network.Get(context.Background())
		if err != nil {
			return err
		}
		return check(n)
	}
}

// configuredSettings checks that the server holds what networkSettingsConfig sets, with the
// given nameserver, and magic_dns as wanted.
func configuredSettings(t *testing.T, keyExpiry, nameserver string, magicDNS bool) resource.TestCheckFunc {
	return storedNetwork(t, func(n *warren.Network) error {
		want := warren.NetworkDNS{
			Domain: n.DNS.Domain, MagicDNS: magicDNS,
			Nameservers: []string{nameserver}, SearchDomains: []string{"corp.example"},
			SplitDNS: map[string][]string{"corp.example": {"10.0.0.53", "10.0.0.54"}, "lan.example": {}},
			ExtraRecords: []warren.DNSRecord{
				{Name: "db.lan.example", Type: "A", Value: "10.0.0.5"},
				{Name: "db.lan.example", Type: "AAAA", Value: "fd00::5"},
			},
		}
		switch {
		case !n.DeviceApproval || !sameKeyExpiry(n.NodeKeyExpiry, keyExpiry) || n.DERP.Embedded:
			return fmt.Errorf("server has deviceApproval %v, nodeKeyExpiry %q, derp.embedded %v", n.DeviceApproval, n.NodeKeyExpiry, n.DERP.Embedded)
		case !reflect.DeepEqual(n.DNS, want):
			return fmt.Errorf("server has dns %+v, want %+v", n.DNS, want)
		}
		return nil
	})
}

// setDNS is an out-of-band change of the network's DNS settings.
func setDNS(dns warren.NetworkDNSUpdate) func(context.Context, *warren.Client) error {
	return func(ctx context.Context, c *warren.Client) error {
		_, err := c.Network.Update(ctx, warren.NetworkUpdate{DNS: &dns})
		return err
	}
}

func setMagicDNS(on bool) func(context.Context, *warren.Client) error {
	return setDNS(warren.NetworkDNSUpdate{MagicDNS: &on})
}

func setNameservers(servers ...string) func(context.Context, *warren.Client) error {
	return setDNS(warren.NetworkDNSUpdate{Nameservers: &servers})
}

func setDomain(domain string) func(context.Context, *warren.Client) error {
	return setDNS(warren.NetworkDNSUpdate{Domain: &domain})
}

func TestAccNetworkSettings(t *testing.T) {
	const address = "warren_network_settings.this"
	restoreNetworkSettings(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		// Destroying the resource leaves the settings as they are.
		CheckDestroy: configuredSettings(t, "180d", "9.9.9.9", false),
		Steps: []resource.TestStep{
			{
				Config: networkSettingsConfig("4320h", "1.1.1.1"),
				Check: resource.ComposeAggregateTestCheckFunc(
					configuredSettings(t, "180d", "1.1.1.1", true),
					resource.TestMatchResourceAttr(address, "id", regexp.MustCompile(`^net_`)),
					resource.TestCheckResourceAttr(address, "node_key_expiry", "4320h"),
					// Left out of the configuration: the server's values, read back.
					resource.TestCheckResourceAttr(address, "dns.magic_dns", "true"),
					resource.TestMatchResourceAttr(address, "dns.domain", regexp.MustCompile(`\.warren\.internal$`)),
					resource.TestCheckResourceAttr(address, "flow_logs", "false"),
					resource.TestCheckResourceAttr(address, "dns.split_dns.lan.example.#", "0"),
					resource.TestCheckResourceAttr("data.warren_network.this", "derp_embedded", "false"),
					resource.TestCheckResourceAttr("data.warren_network.this", "dns.nameservers.0", "1.1.1.1"),
					resource.TestCheckResourceAttr("data.warren_network.this", "dns.split_dns.corp.example.1", "10.0.0.54"),
					resource.TestCheckResourceAttr("data.warren_network.this", "dns.extra_records.1.type", "AAAA"),
				),
			},
			{
				// The same lifetime in another unit plans nothing.
				Config:   networkSettingsConfig("180d", "1.1.1.1"),
				PlanOnly: true,
			},
			{
				ResourceName:      address,
				ImportState:       true,
				ImportStateId:     "anything",
				ImportStateVerify: true,
			},
			importPlansNothing(address, "anything"),
			{
				// A setting the configuration leaves out, changed elsewhere, is no drift; the
				// update of one argument sends that argument alone and leaves the rest.
				PreConfig: outOfBand(t, setMagicDNS(false)),
				Config:    networkSettingsConfig("180d", "9.9.9.9"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					configuredSettings(t, "180d", "9.9.9.9", false),
					resource.TestCheckResourceAttr(address, "dns.magic_dns", "false"),
				),
			},
			{
				// A configured setting changed elsewhere is drift, and the apply puts it back.
				PreConfig:          outOfBand(t, setNameservers("8.8.8.8")),
				Config:             networkSettingsConfig("180d", "9.9.9.9"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: networkSettingsConfig("180d", "9.9.9.9"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: configuredSettings(t, "180d", "9.9.9.9", false),
			},
			{
				// The server refuses a nameserver that is not an address: its message is the
				// diagnostic, and nothing changes.
				Config:      networkSettingsConfig("180d", "dns.example"),
				ExpectError: errorMatching(`400 invalid_request: dns.nameservers: "dns.example" is not an IP address`),
			},
			{
				Config: networkSettingsConfig("180d", "9.9.9.9"),
				Check:  configuredSettings(t, "180d", "9.9.9.9", false),
			},
		},
	})
}

func TestAccNetworkSettings_unsetKeepsTheServers(t *testing.T) {
	const address = "warren_network_settings.this"
	restoreNetworkSettings(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				// Refused before the server is asked.
				Config:      config(`resource "warren_network_settings" "this" { node_key_expiry = "never" }`),
				ExpectError: errorMatching(`"never" is not a key expiry`),
			},
			{
				// An empty resource adopts the network's settings as they are.
				Config: config(`resource "warren_network_settings" "this" {}`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "device_approval", "false"),
					resource.TestCheckResourceAttr(address, "node_key_expiry", "180d"),
					resource.TestCheckResourceAttr(address, "derp_embedded", "true"),
					resource.TestCheckResourceAttr(address, "dns.magic_dns", "true"),
					resource.TestCheckResourceAttr(address, "dns.nameservers.#", "0"),
				),
			},
			{
				// Never expiring: "0".
				Config: config(`resource "warren_network_settings" "this" {
  node_key_expiry = "0"
  dns = { search_domains = ["example.com"] }
}`),
				Check: resource.ComposeAggregateTestCheckFunc(
					storedNetwork(t, func(n *warren.Network) error {
						if n.NodeKeyExpiry != "0" || !reflect.DeepEqual(n.DNS.SearchDomains, []string{"example.com"}) || !n.DNS.MagicDNS {
							return fmt.Errorf("server has nodeKeyExpiry %q, dns %+v", n.NodeKeyExpiry, n.DNS)
						}
						return nil
					}),
				),
			},
		},
	})
}

// derpRegionsConfig sets one region with the embedded relay on or off, its JSON written by
// jsonencode or, with heredoc, by hand in another key order and layout.
func derpRegionsConfig(embedded, heredoc bool) string {
	regions := `jsonencode([{
    RegionID   = 900
    RegionCode = "own"
    Nodes      = [{ Name = "900a", RegionID = 900, HostName = "derp.example.com", DERPPort = 8443 }]
  }])`
	if heredoc {
		regions = "<<-EOT\n    [ { \"Nodes\": [ { \"DERPPort\": 8443, \"HostName\": \"derp.example.com\", \"RegionID\": 900, \"Name\": \"900a\" } ],\n        \"RegionCode\": \"own\", \"RegionID\": 900 } ]\n  EOT"
	}
	return config(`
resource "warren_network_settings" "this" {
  derp_embedded = %t
  derp_regions  = %s
}

data "warren_network" "this" {
  depends_on = [warren_network_settings.this]
}
`, embedded, regions)
}

// storedRegion checks that the server holds the one region of derpRegionsConfig, port and all.
func storedRegion(t *testing.T) resource.TestCheckFunc {
	return storedNetwork(t, func(n *warren.Network) error {
		if len(n.DERP.Regions) != 1 || n.DERP.Regions[0]["RegionCode"] != "own" {
			return fmt.Errorf("server has regions %v", n.DERP.Regions)
		}
		if nodes, _ := n.DERP.Regions[0]["Nodes"].([]any); len(nodes) != 1 || nodes[0].(map[string]any)["DERPPort"] != float64(8443) {
			return fmt.Errorf("server has nodes %v", n.DERP.Regions[0]["Nodes"])
		}
		return nil
	})
}

func TestAccNetworkSettings_derpRegions(t *testing.T) {
	const address = "warren_network_settings.this"
	restoreNetworkSettings(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      config(`resource "warren_network_settings" "this" { derp_regions = "{}" }`),
				ExpectError: errorMatching(`not a JSON array of DERP map regions`),
			},
			{
				Config: derpRegionsConfig(false, false),
				Check: resource.ComposeAggregateTestCheckFunc(
					storedRegion(t),
					resource.TestCheckResourceAttr(address, "derp_embedded", "false"),
					resource.TestMatchResourceAttr("data.warren_network.this", "derp_regions", regexp.MustCompile(`"DERPPort":8443`)),
				),
			},
			{
				// The same regions in another key order and layout plan nothing.
				Config:   derpRegionsConfig(false, true),
				PlanOnly: true,
			},
			{
				ResourceName:      address,
				ImportState:       true,
				ImportStateId:     "settings",
				ImportStateVerify: true,
			},
			importPlansNothing(address, "settings"),
			{
				// Region 900 is the embedded relay's: the server refuses it while that is on.
				Config:      derpRegionsConfig(true, false),
				ExpectError: errorMatching(`RegionID 900 is the embedded relay's`),
			},
			{
				Config: config(`resource "warren_network_settings" "this" {
  derp_embedded = false
  derp_regions  = "[]"
}`),
				Check: storedNetwork(t, func(n *warren.Network) error {
					if len(n.DERP.Regions) != 0 {
						return fmt.Errorf("server still has regions %v", n.DERP.Regions)
					}
					return nil
				}),
			},
		},
	})
}

// domainConfig sets the DNS domain alone ("" is the server's default).
func domainConfig(domain string) string {
	return config(`
resource "warren_network_settings" "this" {
  dns = { domain = %q }
}

data "warren_network" "this" {
  depends_on = [warren_network_settings.this]
}
`, domain)
}

// storedDomain checks the server's DNS domain: want, or with want "" the network's default.
func storedDomain(t *testing.T, want string) resource.TestCheckFunc {
	return storedNetwork(t, func(n *warren.Network) error {
		if want == "" {
			want = defaultDNSDomain(n.Name)
		}
		if n.DNS.Domain != want {
			return fmt.Errorf("server has dns.domain %q, want %q", n.DNS.Domain, want)
		}
		return nil
	})
}

// domain = "" puts the server's default back (the API's domain null), plans nothing while the
// server keeps it, and plans the reset again when the domain is changed elsewhere.
func TestAccNetworkSettings_domainBackToDefault(t *testing.T) {
	const address = "warren_network_settings.this"
	restoreNetworkSettings(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: domainConfig("corp.example"),
				Check: resource.ComposeAggregateTestCheckFunc(
					storedDomain(t, "corp.example"),
					resource.TestCheckResourceAttr(address, "dns.domain", "corp.example"),
				),
			},
			{
				Config: domainConfig(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					storedDomain(t, ""),
					resource.TestCheckResourceAttr(address, "dns.domain", ""),
					// The data source shows the domain itself.
					resource.TestMatchResourceAttr("data.warren_network.this", "dns.domain", regexp.MustCompile(`\.warren\.internal$`)),
				),
			},
			{
				Config:   domainConfig(""),
				PlanOnly: true,
			},
			{
				// A domain set elsewhere is drift from the default, which the apply puts back.
				PreConfig:          outOfBand(t, setDomain("other.example")),
				Config:             domainConfig(""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: domainConfig(""),
				Check:  resource.ComposeAggregateTestCheckFunc(storedDomain(t, ""), resource.TestCheckResourceAttr(address, "dns.domain", "")),
			},
			{
				// Left out, the domain keeps the server's value, as every argument does.
				Config: config(`
resource "warren_network_settings" "this" {}

data "warren_network" "this" {
  depends_on = [warren_network_settings.this]
}
`),
				PlanOnly: true,
			},
		},
	})
}
