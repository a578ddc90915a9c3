package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &deviceApprovalResource{}
	_ resource.ResourceWithImportState = &deviceApprovalResource{}
)

type deviceApprovalResource struct {
	deviceResource[deviceApprovalModel, *deviceApprovalModel]
}

type deviceApprovalModel struct {
	ID       types.String `tfsdk:"id"`
	DeviceID types.String `tfsdk:"device_id"`
}

// NewDeviceApprovalResource is the factory of warren_device_approval.
func NewDeviceApprovalResource() resource.Resource {
	return &deviceApprovalResource{deviceResource[deviceApprovalModel, *deviceApprovalModel]{
		what:  "approval",
		push:  approveDevice,
		clear: func(context.Context, *warren.Client, string) error { return nil },
		holds: func(d *warren.Device) bool { return d.Authorized },
	}}
}

// approveDevice approves the device. One approved already (by hand, or because approval was off
// when it enrolled) is what the resource wants, not an error.
func approveDevice(ctx context.Context, c *warren.Client, m *deviceApprovalModel, _ *diag.Diagnostics) (*warren.Device, error) {
	d, err := c.Devices.Approve(ctx, m.deviceID())
	if warren.ErrorCode(err) != warren.CodeInvalidState {
		return d, err
	}
	return c.Devices.Get(ctx, m.deviceID())
}

func (r *deviceApprovalResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_device_approval"
}

func (r *deviceApprovalResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The approval of one device that waits for it (network setting `deviceApproval`): " +
			"creating the resource approves the device, which then gets its peers. A device approved already is " +
			"adopted as it is. A device de-authorized elsewhere shows as drift, and the next apply approves it again. " +
			"Destroying the resource leaves the device approved: delete the device to remove it from the network.",
		Attributes: deviceIDAttributes(),
	}
}

func (m *deviceApprovalModel) deviceID() string { return m.DeviceID.ValueString() }

func (m *deviceApprovalModel) apply(d *warren.Device) {
	m.ID = types.StringValue(d.ID)
	m.DeviceID = types.StringValue(d.ID)
}
