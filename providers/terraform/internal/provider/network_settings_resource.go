package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &networkSettingsResource{}
	_ resource.ResourceWithImportState = &networkSettingsResource{}
)

// networkSettingsResource is the settings of the API key's network (PATCH /v1/network), in
// the manner of tailscale_tailnet_settings: every argument is optional, and one left out of the
// configuration keeps the server's value, read back as computed.
type networkSettingsResource struct{ resourceClient }

type networkSettingsModel struct {
	ID             types.String   `tfsdk:"id"`
	DeviceApproval types.Bool     `tfsdk:"device_approval"`
	NodeKeyExpiry  semanticString `tfsdk:"node_key_expiry"`
	FlowLogs       types.Bool     `tfsdk:"flow_logs"`
	DERPEmbedded   types.Bool     `tfsdk:"derp_embedded"`
	DERPRegions    semanticString `tfsdk:"derp_regions"`
	DNS            types.Object   `tfsdk:"dns"`
}

// NewNetworkSettingsResource is the factory of warren_network_settings.
func NewNetworkSettingsResource() resource.Resource { return &networkSettingsResource{} }

func (r *networkSettingsResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_network_settings"
}

func (r *networkSettingsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	// An argument left out of the configuration is computed: it keeps what the server holds
	// (UseStateForUnknown), so only what the configuration sets is ever planned or sent.
	keepBool := []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}
	keepString := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	keepList := []planmodifier.List{listplanmodifier.UseStateForUnknown()}
	flag := func(description string) schema.Attribute {
		return schema.BoolAttribute{MarkdownDescription: description, Optional: true, Computed: true, PlanModifiers: keepBool}
	}
	dnsList := func(name string) schema.Attribute {
		return schema.ListAttribute{
			MarkdownDescription: dnsDescriptions[name], ElementType: types.StringType,
			Optional: true, Computed: true, PlanModifiers: keepList,
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The settings of the provider's API key's network (`PATCH /v1/network`, scope `all`), " +
			"like `tailscale_tailnet_settings` and the `tailscale_dns_*` resources. There is one per network: " +
			"declare it once. An argument left out keeps the server's value. Destroying the resource leaves the " +
			"settings as they are.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The network's id (`net_…`).",
				Computed:            true,
				PlanModifiers:       keepString,
			},
			"device_approval": flag("New devices wait for an admin's approval (see `warren_device_approval`). Server default `false`."),
			"node_key_expiry": schema.StringAttribute{
				MarkdownDescription: "How long a device's login lasts: a duration from `1s` to `365d` (`180d`, `4320h`), or `0` for never. Another spelling of the same length is no change. Server default `180d`.",
				Optional:            true, Computed: true,
				CustomType:    semanticStringType{kind: keyExpiryKind},
				PlanModifiers: []planmodifier.String{keepEquivalentOf(keyExpiryKind), stringplanmodifier.UseStateForUnknown()},
			},
			"flow_logs":     flag("Tailscale clients log their network flows into the connection log. Server default `false`."),
			"derp_embedded": flag("The server's embedded relay is in the DERP map when it runs one (`warren serve --derp`). Server default `true`."),
			"derp_regions": schema.StringAttribute{
				MarkdownDescription: "Relay regions of the DERP map besides the embedded relay: a JSON array of Tailscale DERP map regions " +
					"(`tailcfg.DERPRegion`: `RegionID`, `RegionCode`, `Nodes` of `{ Name, RegionID, HostName, … }`, every field typed as Tailscale's client decodes it; the server refuses others), " +
					"written with `jsonencode`; `[]` for none. The same value in another layout is no change. Server default `[]`.",
				Optional: true, Computed: true,
				CustomType:    semanticStringType{kind: derpRegionsKind},
				PlanModifiers: []planmodifier.String{keepEquivalentOf(derpRegionsKind), stringplanmodifier.UseStateForUnknown()},
			},
			"dns": schema.SingleNestedAttribute{
				MarkdownDescription: "What Tailscale clients are told about DNS. Each attribute left out keeps the server's value.",
				Optional:            true, Computed: true,
				PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
				Attributes: map[string]schema.Attribute{
					"domain": schema.StringAttribute{
						MarkdownDescription: dnsDescriptions["domain"] + " `\"\"` goes back to that default (left out, the domain keeps " +
							"the server's value, as every argument does); the state then holds `\"\"` for as long as the server's " +
							"domain is the default.",
						Optional: true, Computed: true, PlanModifiers: keepString,
					},
					"magic_dns":      flag(dnsDescriptions["magic_dns"] + " Server default `true`."),
					"nameservers":    dnsList("nameservers"),
					"search_domains": dnsList("search_domains"),
					"split_dns": schema.MapAttribute{
						MarkdownDescription: dnsDescriptions["split_dns"],
						ElementType:         stringListType,
						Optional:            true, Computed: true,
						PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()},
					},
					"extra_records": schema.ListNestedAttribute{
						MarkdownDescription: dnsDescriptions["extra_records"],
						Optional:            true, Computed: true, PlanModifiers: keepList,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"name": schema.StringAttribute{MarkdownDescription: "The DNS name.", Required: true},
							"type": schema.StringAttribute{
								MarkdownDescription: "`A` or `AAAA`.", Required: true,
								Validators: []validator.String{stringvalidator.OneOf("A", "AAAA")},
							},
							"value": schema.StringAttribute{MarkdownDescription: "An IPv4 address for `A`, an IPv6 one for `AAAA`.", Required: true},
						}},
					},
				},
			},
		},
	}
}

// Create sends what the configuration sets; the rest is read back from the answer.
func (r *networkSettingsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan networkSettingsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.write(ctx, &plan, networkSettingsModel{}, &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *networkSettingsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state networkSettingsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	n, err := r.client.Network.Get(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, "read the network's settings", err)
		return
	}
	state.apply(ctx, n, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update sends only what changed, so a setting changed elsewhere and not in the plan is left alone.
func (r *networkSettingsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state networkSettingsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.write(ctx, &plan, state, &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Delete leaves the network's settings as they are, as tailscale_tailnet_settings does: a
// network always has settings, and putting back the server's defaults would, for one, switch
// device approval off on a network that relies on it. The resource is only forgotten.
func (r *networkSettingsResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

// ImportState takes any id (the network's, or a word): there is one network per API key.
func (r *networkSettingsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, req, resp)
}

// write PATCHes the settings of plan that differ from prior (all it sets, on Create) and fills
// plan from the server's answer. With nothing to send it reads the network instead.
func (r *networkSettingsResource) write(ctx context.Context, plan *networkSettingsModel, prior networkSettingsModel, diags *diag.Diagnostics) {
	patch := plan.update(ctx, prior, diags)
	if diags.HasError() {
		return
	}
	var n *warren.Network
	var err error
	if patch == (warren.NetworkUpdate{}) {
		n, err = r.client.Network.Get(ctx)
	} else {
		n, err = r.client.Network.Update(ctx, patch)
	}
	if err != nil {
		addAPIError(diags, "update the network's settings", err)
		return
	}
	plan.apply(ctx, n, diags)
}

// update is the PATCH body: the settings of m that are known, set, and not those of prior.
func (m *networkSettingsModel) update(ctx context.Context, prior networkSettingsModel, diags *diag.Diagnostics) warren.NetworkUpdate {
	var u warren.NetworkUpdate
	if differs(m.DeviceApproval, prior.DeviceApproval) {
		u.DeviceApproval = m.DeviceApproval.ValueBoolPointer()
	}
	if differs(m.NodeKeyExpiry, prior.NodeKeyExpiry) && !sameKeyExpiry(m.NodeKeyExpiry.ValueString(), prior.NodeKeyExpiry.ValueString()) {
		u.NodeKeyExpiry = m.NodeKeyExpiry.ValueStringPointer()
	}
	if differs(m.FlowLogs, prior.FlowLogs) {
		u.FlowLogs = m.FlowLogs.ValueBoolPointer()
	}
	var derp warren.NetworkDERPUpdate
	if differs(m.DERPEmbedded, prior.DERPEmbedded) {
		derp.Embedded = m.DERPEmbedded.ValueBoolPointer()
	}
	if differs(m.DERPRegions, prior.DERPRegions) && !derpRegionsKind.equivalent(m.DERPRegions.ValueString(), prior.DERPRegions.ValueString()) {
		regions, err := parseDERPRegions(m.DERPRegions.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("derp_regions"), derpRegionsKind.invalid, err.Error())
		}
		derp.Regions = &regions
	}
	if derp != (warren.NetworkDERPUpdate{}) {
		u.DERP = &derp
	}
	u.DNS = dnsUpdate(ctx, dnsFields(ctx, m.DNS, diags), dnsFields(ctx, prior.DNS, diags), diags)
	return u
}

// apply copies the server's settings. node_key_expiry and derp_regions keep the configuration's
// spelling when it holds the same value.
func (m *networkSettingsModel) apply(ctx context.Context, n *warren.Network, diags *diag.Diagnostics) {
	m.ID = types.StringValue(n.ID)
	m.DeviceApproval = types.BoolValue(n.DeviceApproval)
	if m.NodeKeyExpiry.IsNull() || m.NodeKeyExpiry.IsUnknown() || !sameKeyExpiry(m.NodeKeyExpiry.ValueString(), n.NodeKeyExpiry) {
		m.NodeKeyExpiry = keyExpiryKind.value(n.NodeKeyExpiry)
	}
	m.FlowLogs = types.BoolValue(n.FlowLogs)
	m.DERPEmbedded = types.BoolValue(n.DERP.Embedded)
	if m.DERPRegions.IsNull() || m.DERPRegions.IsUnknown() || !sameDERPRegions(m.DERPRegions.ValueString(), n.DERP.Regions) {
		text, err := derpRegionsText(n.DERP.Regions)
		if err != nil {
			diags.AddError("Cannot read the network's DERP regions", err.Error())
		}
		m.DERPRegions = derpRegionsKind.value(text)
	}
	// The domain set to "" (the server's default) stays "" while the server's is the default,
	// so the plan and state agree with the configuration; any other domain is drift from it.
	dns := n.DNS
	if domain := dnsFields(ctx, m.DNS, diags).Domain; !domain.IsNull() && !domain.IsUnknown() && domain.ValueString() == "" &&
		dns.Domain == defaultDNSDomain(n.Name) {
		dns.Domain = ""
	}
	m.DNS = dnsObject(ctx, dns, diags)
}
