// Package provider implements the Warren provider on terraform-plugin-framework.
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

// Address is the provider's source address in the registry.
const Address = "registry.terraform.io/warrenhq/warren"

type warrenProvider struct {
	version string
}

type providerModel struct {
	URL    types.String `tfsdk:"url"`
	APIKey types.String `tfsdk:"api_key"`
}

// New returns a factory of the provider, as providerserver and the acceptance tests want it.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &warrenProvider{version: version} }
}

func (p *warrenProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "warren"
	resp.Version = p.version
}

func (p *warrenProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages a Warren network through its management API: the policy, auth and API keys, users, device tags, subnet routes, webhooks and the network's settings.",
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				MarkdownDescription: "Base URL of the Warren server, without `/v1` (e.g. `http://127.0.0.1:8080`). Defaults to `WARREN_URL`.",
				Optional:            true,
			},
			"api_key": schema.StringAttribute{
				MarkdownDescription: "API key (`wrn_api_…`). Defaults to `WARREN_API_KEY`. The scopes it needs depend on the resources used: `acls` for the policy, `keys` for keys, `users` for users, `devices` for tags and routes, `webhooks` for webhooks, `all` for the network's settings; `read` for data sources, or `all`.",
				Optional:            true,
				Sensitive:           true,
			},
		},
	}
}

// Configure builds the client and calls GET /v1/network once, so a wrong URL or a missing,
// expired or revoked key is reported here, at the provider block, instead of at the first
// resource that happens to be read.
func (p *warrenProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.URL.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("url"), "Unknown Warren URL",
			"url depends on a value known only after apply; set it to a known value or use WARREN_URL.")
	}
	if cfg.APIKey.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("api_key"), "Unknown Warren API key",
			"api_key depends on a value known only after apply; set it to a known value or use WARREN_API_KEY.")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	url := valueOr(cfg.URL, os.Getenv("WARREN_URL"))
	key := valueOr(cfg.APIKey, os.Getenv("WARREN_API_KEY"))
	if url == "" {
		resp.Diagnostics.AddAttributeError(path.Root("url"), "Missing Warren URL",
			"Set url in the provider block or the WARREN_URL environment variable, e.g. http://127.0.0.1:8080.")
	}
	if key == "" {
		resp.Diagnostics.AddAttributeError(path.Root("api_key"), "Missing Warren API key",
			"Set api_key in the provider block or the WARREN_API_KEY environment variable to an API key (wrn_api_…).")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	client, err := warren.NewClient(warren.WithBaseURL(url), warren.WithAPIKey(key),
		warren.WithUserAgent("terraform-provider-warren/"+p.version+" warren-go/"+warren.Version))
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the Warren client", err.Error())
		return
	}
	if _, err := client.Network.Get(ctx); err != nil {
		addConfigureError(&resp.Diagnostics, url, err)
		return
	}
	resp.DataSourceData = client
	resp.ResourceData = client
}

func (p *warrenProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewPolicyResource,
		NewAuthKeyResource,
		NewAPIKeyResource,
		NewUserResource,
		NewDeviceTagsResource,
		NewDeviceRoutesResource,
		NewDeviceApprovalResource,
		NewWebhookResource,
		NewNetworkSettingsResource,
	}
}

func (p *warrenProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewDeviceDataSource,
		NewDevicesDataSource,
		NewUsersDataSource,
		NewNetworkDataSource,
	}
}

// valueOr is the configured value, or fallback when the attribute is not set.
func valueOr(v types.String, fallback string) string {
	if v.IsNull() || v.ValueString() == "" {
		return fallback
	}
	return v.ValueString()
}
