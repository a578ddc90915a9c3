package provider

import (
	"strings"
	"testing"
)

func TestDERPRegions(t *testing.T) {
	a := `[{"RegionID": 901, "RegionCode": "eu", "Nodes": [{"Name": "1", "RegionID": 901, "HostName": "derp.example.com", "DERPPort": 443}]}]`
	b := `[ {"Nodes":[{"HostName":"derp.example.com","DERPPort":443,"RegionID":901,"Name":"1"}], "RegionCode":"eu","RegionID":901} ]`
	if !derpRegionsKind.equivalent(a, b) {
		t.Error("the same regions in another layout differ")
	}
	if derpRegionsKind.equivalent(a, strings.Replace(a, "443", "8443", 1)) {
		t.Error("another port is the same regions")
	}
	for _, bad := range []string{"", "null", "{}", `[1]`, "[] []", `[{"RegionID": 1,}]`} {
		if err := derpRegionsKind.check(bad); err == nil {
			t.Errorf("DERP regions %q accepted", bad)
		}
	}
	if text, err := derpRegionsText(nil); err != nil || text != "[]" {
		t.Errorf("derpRegionsText(nil) = %q, %v", text, err)
	}
}
