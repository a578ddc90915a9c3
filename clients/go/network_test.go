package warren_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestNetworkGet(t *testing.T) {
	ctx := testContext(t)
	n, err := newClient(t).Network.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Name != "default" || n.Plan != "premium" || n.Limits.Users != nil || n.Usage.Users < 1 {
		t.Fatalf("unexpected network %+v", n)
	}
}

func TestNewClientNeedsURLAndKey(t *testing.T) {
	t.Setenv("WARREN_URL", "")
	t.Setenv("WARREN_API_KEY", "")
	if _, err := warren.NewClient(warren.WithAPIKey("k")); err == nil {
		t.Error("a client without a URL was made")
	}
	if _, err := warren.NewClient(warren.WithBaseURL(serverURL)); err == nil {
		t.Error("a client without a key was made")
	}
	if _, err := warren.NewClient(warren.WithBaseURL("ftp://x"), warren.WithAPIKey("k")); err == nil {
		t.Error("a client with a non-HTTP URL was made")
	}
	t.Setenv("WARREN_URL", serverURL+"/v1/")
	t.Setenv("WARREN_API_KEY", adminKey)
	c, err := warren.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != serverURL {
		t.Errorf("base URL %q, want %q", c.BaseURL(), serverURL)
	}
	if _, err := c.Network.Get(testContext(t)); err != nil {
		t.Fatal(err)
	}
}

func TestWrongKeyIsUnauthenticated(t *testing.T) {
	c := newClient(t, warren.WithAPIKey("wrn_api_nope"))
	_, err := c.Network.Get(testContext(t))
	wantError(t, err, 401, warren.CodeUnauthenticated)
}

func TestUserAgent(t *testing.T) {
	ctx := testContext(t)
	rec := &recordingTransport{}
	if _, err := newClient(t, warren.WithHTTPClient(&http.Client{Transport: rec})).Network.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if ua := rec.lastHeader().Get("User-Agent"); !strings.HasPrefix(ua, "warren-go/"+warren.Version) {
		t.Errorf("default User-Agent %q", ua)
	}
	c := newClient(t, warren.WithHTTPClient(&http.Client{Transport: rec}), warren.WithUserAgent("deploy-bot/1.0"))
	if _, err := c.Network.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if ua := rec.lastHeader().Get("User-Agent"); ua != "deploy-bot/1.0" {
		t.Errorf("User-Agent %q, want deploy-bot/1.0", ua)
	}
	c = newClient(t, warren.WithHTTPClient(&http.Client{Transport: rec}), warren.WithAppInfo("deploy-bot/2.1"))
	if _, err := c.Network.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if ua := rec.lastHeader().Get("User-Agent"); !strings.HasPrefix(ua, "deploy-bot/2.1 warren-go/"+warren.Version+" (go") {
		t.Errorf("User-Agent %q, want deploy-bot/2.1 before the client's own", ua)
	}
}

func TestNetworkDNSAndDERPSettings(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	before, err := c.Network.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !before.DNS.MagicDNS || before.DNS.Domain == "" || !before.DERP.Embedded {
		t.Fatalf("defaults %+v %+v", before.DNS, before.DERP)
	}
	domain, nameservers := "corp.example", []string{"9.9.9.9"}
	regions := []map[string]any{{
		"RegionID": 1, "RegionCode": "r1",
		"Nodes": []map[string]any{{"Name": "1a", "RegionID": 1, "HostName": "derp.example.com"}},
	}}
	n, err := c.Network.Update(ctx, warren.NetworkUpdate{
		DNS:  &warren.NetworkDNSUpdate{Domain: &domain, Nameservers: &nameservers},
		DERP: &warren.NetworkDERPUpdate{Regions: &regions},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		none, noRegions := []string{}, []map[string]any{}
		noSplit, noRecords := map[string][]string{}, []warren.DNSRecord{}
		if _, err := c.Network.Update(testContext(t), warren.NetworkUpdate{
			DNS: &warren.NetworkDNSUpdate{
				ResetDomain: true, Nameservers: &none, SplitDNS: &noSplit, ExtraRecords: &noRecords,
			},
			DERP: &warren.NetworkDERPUpdate{Regions: &noRegions},
		}); err != nil {
			t.Error(err)
		}
	})
	if n.DNS.Domain != domain || len(n.DNS.Nameservers) != 1 || !n.DNS.MagicDNS {
		t.Errorf("dns %+v", n.DNS)
	}
	if len(n.DERP.Regions) != 1 || n.DERP.Regions[0]["RegionCode"] != "r1" {
		t.Errorf("derp %+v", n.DERP)
	}
	_, reg := enroll(t, c, "dns-go", nil)
	if d, err := c.Devices.Get(ctx, reg.Device.ID); err != nil || d.DNSName != "dns-go.corp.example" {
		t.Errorf("dnsName %q (%v)", d.DNSName, err)
	}
	bad := []string{"not-an-address"}
	_, err = c.Network.Update(ctx, warren.NetworkUpdate{DNS: &warren.NetworkDNSUpdate{Nameservers: &bad}})
	wantError(t, err, 400, warren.CodeInvalidRequest)

	split := map[string][]string{"lab.example": {"10.0.0.53"}, "local.example": {}}
	records := []warren.DNSRecord{{Name: "grafana.corp.example", Type: "A", Value: "100.64.0.10"}}
	n, err = c.Network.Update(ctx, warren.NetworkUpdate{
		DNS: &warren.NetworkDNSUpdate{SplitDNS: &split, ExtraRecords: &records},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(n.DNS.SplitDNS, split) || !reflect.DeepEqual(n.DNS.ExtraRecords, records) {
		t.Errorf("split DNS %v, records %v", n.DNS.SplitDNS, n.DNS.ExtraRecords)
	}
	if len(n.DNS.Nameservers) != 1 {
		t.Errorf("nameservers %v: split DNS replaced them", n.DNS.Nameservers)
	}
	wrongFamily := []warren.DNSRecord{{Name: "grafana.corp.example", Type: "AAAA", Value: "100.64.0.10"}}
	_, err = c.Network.Update(ctx, warren.NetworkUpdate{DNS: &warren.NetworkDNSUpdate{ExtraRecords: &wrongFamily}})
	wantError(t, err, 400, warren.CodeInvalidRequest)
}
