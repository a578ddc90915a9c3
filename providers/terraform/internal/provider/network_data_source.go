package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = &networkDataSource{}

type networkDataSource struct{ dataSourceClient }

type networkModel struct {
	ID     types.String  `tfsdk:"id"`
	Name   types.String  `tfsdk:"name"`
	Plan   types.String  `tfsdk:"plan"`
	Limits networkLimits `tfsdk:"limits"`
	Usage  networkUsage  `tfsdk:"usage"`
	// DeviceApproval and NodeKeyExpiry are the network's device settings.
	DeviceApproval types.Bool   `tfsdk:"device_approval"`
	NodeKeyExpiry  types.String `tfsdk:"node_key_expiry"`
	FlowLogs       types.Bool   `tfsdk:"flow_logs"`
	DERPEmbedded   types.Bool   `tfsdk:"derp_embedded"`
	DERPRegions    types.String `tfsdk:"derp_regions"`
	DNS            types.Object `tfsdk:"dns"`
}

type networkLimits struct {
	Users            types.Int64 `tfsdk:"users"`
	Devices          types.Int64 `tfsdk:"devices"`
	LogRetentionDays types.Int64 `tfsdk:"log_retention_days"`
}

type networkUsage struct {
	Users   types.Int64 `tfsdk:"users"`
	Devices types.Int64 `tfsdk:"devices"`
}

// NewNetworkDataSource is the factory of the warren_network data source.
func NewNetworkDataSource() datasource.DataSource { return &networkDataSource{} }

func (d *networkDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_network"
}

func (d *networkDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	count := func(desc string) schema.Attribute {
		return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The network of the provider's API key: its plan, the plan's limits and what is used of them, and its settings.",
		Attributes: map[string]schema.Attribute{
			"id":   schema.StringAttribute{MarkdownDescription: "The network's id (`net_…`).", Computed: true},
			"name": schema.StringAttribute{MarkdownDescription: "The network's name.", Computed: true},
			"plan": schema.StringAttribute{MarkdownDescription: "`free` or `premium`.", Computed: true},
			"device_approval": schema.BoolAttribute{
				MarkdownDescription: "New devices wait for an admin's approval (see `warren_device_approval`).",
				Computed:            true,
			},
			"node_key_expiry": schema.StringAttribute{
				MarkdownDescription: "How long a device's login lasts (`180d`), or `0` for never.",
				Computed:            true,
			},
			"flow_logs": schema.BoolAttribute{
				MarkdownDescription: "Tailscale clients log their network flows into the connection log.",
				Computed:            true,
			},
			"derp_embedded": schema.BoolAttribute{
				MarkdownDescription: "The server's embedded relay is in the DERP map when it runs one.",
				Computed:            true,
			},
			"derp_regions": schema.StringAttribute{
				MarkdownDescription: "The other relay regions of the DERP map: a JSON array of Tailscale DERP map regions (`jsondecode` it).",
				Computed:            true,
			},
			"dns": schema.SingleNestedAttribute{
				MarkdownDescription: "What Tailscale clients are told about DNS (set it with `warren_network_settings`).",
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"domain":         schema.StringAttribute{MarkdownDescription: dnsDescriptions["domain"], Computed: true},
					"magic_dns":      schema.BoolAttribute{MarkdownDescription: dnsDescriptions["magic_dns"], Computed: true},
					"nameservers":    schema.ListAttribute{MarkdownDescription: dnsDescriptions["nameservers"], ElementType: types.StringType, Computed: true},
					"search_domains": schema.ListAttribute{MarkdownDescription: dnsDescriptions["search_domains"], ElementType: types.StringType, Computed: true},
					"split_dns":      schema.MapAttribute{MarkdownDescription: dnsDescriptions["split_dns"], ElementType: stringListType, Computed: true},
					"extra_records": schema.ListNestedAttribute{
						MarkdownDescription: dnsDescriptions["extra_records"],
						Computed:            true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"name":  schema.StringAttribute{Computed: true},
							"type":  schema.StringAttribute{Computed: true},
							"value": schema.StringAttribute{Computed: true},
						}},
					},
				},
			},
			"limits": schema.SingleNestedAttribute{
				MarkdownDescription: "The plan's limits; `null` is unlimited.",
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"users":              count("Users the plan allows."),
					"devices":            count("Devices the plan allows."),
					"log_retention_days": count("Days the connection log is kept."),
				},
			},
			"usage": schema.SingleNestedAttribute{
				MarkdownDescription: "What the network uses now.",
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"users":   count("Users."),
					"devices": count("Devices."),
				},
			},
		},
	}
}

func (d *networkDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	n, err := d.client.Network.Get(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, "read the network", err)
		return
	}
	regions, err := derpRegionsText(n.DERP.Regions)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the network's DERP regions", err.Error())
		return
	}
	m := networkModel{
		ID:   types.StringValue(n.ID),
		Name: types.StringValue(n.Name),
		Plan: types.StringValue(n.Plan),

		DeviceApproval: types.BoolValue(n.DeviceApproval),
		NodeKeyExpiry:  types.StringValue(n.NodeKeyExpiry),
		FlowLogs:       types.BoolValue(n.FlowLogs),
		DERPEmbedded:   types.BoolValue(n.DERP.Embedded),
		DERPRegions:    types.StringValue(regions),
		DNS:            dnsObject(ctx, n.DNS, &resp.Diagnostics),
		Limits: networkLimits{
			Users:            int64Pointer(n.Limits.Users),
			Devices:          int64Pointer(n.Limits.Devices),
			LogRetentionDays: types.Int64Value(int64(n.Limits.LogRetentionDays)),
		},
		Usage: networkUsage{
			Users:   types.Int64Value(int64(n.Usage.Users)),
			Devices: types.Int64Value(int64(n.Usage.Devices)),
		},
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// int64Pointer is null for nil (an unlimited limit).
func int64Pointer(v *int) types.Int64 {
	if v == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*v))
}
