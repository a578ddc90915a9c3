package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// configure runs the provider's Configure with url and api_key (nil: not set).
func configure(t *testing.T, url, apiKey any) *provider.ConfigureResponse {
	t.Helper()
	ctx := context.Background()
	p := New("test")()
	var schema provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &schema)
	raw := tftypes.NewValue(schema.Schema.Type().TerraformType(ctx), map[string]tftypes.Value{
		"url":     tftypes.NewValue(tftypes.String, url),
		"api_key": tftypes.NewValue(tftypes.String, apiKey),
	})
	resp := &provider.ConfigureResponse{}
	p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{Schema: schema.Schema, Raw: raw}}, resp)
	return resp
}

func summaries(resp *provider.ConfigureResponse) []string {
	var out []string
	for _, d := range resp.Diagnostics.Errors() {
		out = append(out, d.Summary())
	}
	return out
}

func TestConfigureNeedsURLAndKey(t *testing.T) {
	t.Setenv("WARREN_URL", "")
	t.Setenv("WARREN_API_KEY", "")
	got := summaries(configure(t, nil, nil))
	if len(got) != 2 || got[0] != "Missing Warren URL" || got[1] != "Missing Warren API key" {
		t.Fatalf("diagnostics = %q", got)
	}
}

func TestConfigureReportsAnUnreachableServer(t *testing.T) {
	t.Setenv("WARREN_API_KEY", "wrn_api_x")
	got := summaries(configure(t, "http://127.0.0.1:1", nil))
	if len(got) != 1 || got[0] != "Cannot reach the Warren API" {
		t.Fatalf("diagnostics = %q", got)
	}
}

func TestConfigureRefusesUnknownValues(t *testing.T) {
	got := summaries(configure(t, tftypes.UnknownValue, "wrn_api_x"))
	if len(got) != 1 || got[0] != "Unknown Warren URL" {
		t.Fatalf("diagnostics = %q", got)
	}
}
