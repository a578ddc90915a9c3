package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var _ datasource.DataSourceWithConfigure = &devicesDataSource{}

type devicesDataSource struct{ dataSourceClient }

type devicesModel struct {
	User    types.String  `tfsdk:"user"`
	Tags    types.Set     `tfsdk:"tags"`
	Online  types.Bool    `tfsdk:"online"`
	IDs     types.List    `tfsdk:"ids"`
	Devices []deviceModel `tfsdk:"devices"`
}

// NewDevicesDataSource is the factory of the warren_devices data source.
func NewDevicesDataSource() datasource.DataSource { return &devicesDataSource{} }

func (d *devicesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_devices"
}

func (d *devicesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The devices that match every filter given (none: all devices).",
		Attributes: map[string]schema.Attribute{
			"user":   schema.StringAttribute{MarkdownDescription: "Only devices of this user (id or login name).", Optional: true},
			"tags":   schema.SetAttribute{MarkdownDescription: "Only devices that carry every one of these tags.", ElementType: types.StringType, Optional: true},
			"online": schema.BoolAttribute{MarkdownDescription: "Only online (`true`) or offline (`false`) devices.", Optional: true},
			"ids":    schema.ListAttribute{MarkdownDescription: "Ids of the devices found, in the order of `devices`.", ElementType: types.StringType, Computed: true},
			"devices": schema.ListNestedAttribute{
				MarkdownDescription: "The devices found, with their detail fields.",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: deviceAttributes()},
			},
		},
	}
}

func (d *devicesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m devicesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	opts := &warren.DeviceListOptions{
		User:   m.User.ValueString(),
		Tags:   stringSet(ctx, m.Tags, &resp.Diagnostics),
		Online: m.Online.ValueBoolPointer(),
		Fields: "all",
	}
	devices, err := d.client.Devices.List(ctx, opts)
	if err != nil {
		addAPIError(&resp.Diagnostics, "list devices", err)
		return
	}
	ids := make([]string, 0, len(devices))
	m.Devices = make([]deviceModel, 0, len(devices))
	for i := range devices {
		ids = append(ids, devices[i].ID)
		m.Devices = append(m.Devices, newDeviceModel(&devices[i]))
	}
	m.IDs = listOf(ids)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
