package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ datasource.DataSourceWithConfigure        = &deviceDataSource{}
	_ datasource.DataSourceWithConfigValidators = &deviceDataSource{}
)

type deviceDataSource struct{ dataSourceClient }

// NewDeviceDataSource is the factory of the warren_device data source.
func NewDeviceDataSource() datasource.DataSource { return &deviceDataSource{} }

func (d *deviceDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_device"
}

func (d *deviceDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := deviceAttributes()
	attrs["id"] = schema.StringAttribute{MarkdownDescription: "The device's id (`dev_…`). Give this or `name`.", Optional: true, Computed: true}
	attrs["name"] = schema.StringAttribute{MarkdownDescription: "The device's name. Give this or `id`.", Optional: true, Computed: true}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One device, found by id or by name, with its addresses and routes.",
		Attributes:          attrs,
	}
}

func (d *deviceDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name")),
	}
}

func (d *deviceDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg deviceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	device, err := d.find(ctx, cfg.ID.ValueString(), cfg.Name.ValueString())
	if err != nil {
		addAPIError(&resp.Diagnostics, "read the device", err)
		return
	}
	if device == nil {
		resp.Diagnostics.AddError("Device not found", fmt.Sprintf("no device has the name %q", cfg.Name.ValueString()))
		return
	}
	m := newDeviceModel(device)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// find returns the device with this id, or else the one with this name (nil when none has it).
func (d *deviceDataSource) find(ctx context.Context, id, name string) (*warren.Device, error) {
	if id != "" {
		return d.client.Devices.Get(ctx, id)
	}
	devices, err := d.client.Devices.List(ctx, &warren.DeviceListOptions{Fields: "all"})
	if err != nil {
		return nil, err
	}
	for i := range devices {
		if devices[i].Name == name {
			return &devices[i], nil
		}
	}
	return nil, nil
}
