package provider

import "testing"

// The cases give what dnsDomain (packages/contract/src/dns-domain.ts) answers for each name.
func TestDefaultDNSDomain(t *testing.T) {
	long := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" // 70
	for name, want := range map[string]string{
		"default":   "default.warren.internal",
		"Acme Corp": "acme-corp.warren.internal",
		"--Ünï--":   "n.warren.internal",
		long:        long[:63] + ".warren.internal",
		// Cut at 63, the label would end in a dash, which no DNS label may.
		long[:62] + " b": long[:62] + ".warren.internal",
		"***":            "network.warren.internal",
		"web_1.prod":     "web-1-prod.warren.internal",
	} {
		if got := defaultDNSDomain(name); got != want {
			t.Errorf("defaultDNSDomain(%q) = %q, want %q", name, got, want)
		}
	}
}
