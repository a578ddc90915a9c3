package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &deviceTagsResource{}
	_ resource.ResourceWithImportState = &deviceTagsResource{}
)

type deviceTagsResource struct {
	deviceResource[deviceTagsModel, *deviceTagsModel]
}

type deviceTagsModel struct {
	ID       types.String `tfsdk:"id"`
	DeviceID types.String `tfsdk:"device_id"`
	Tags     types.Set    `tfsdk:"tags"`
}

// NewDeviceTagsResource is the factory of warren_device_tags.
func NewDeviceTagsResource() resource.Resource {
	return &deviceTagsResource{deviceResource[deviceTagsModel, *deviceTagsModel]{
		what: "tags",
		push: func(ctx context.Context, c *warren.Client, m *deviceTagsModel, diags *diag.Diagnostics) (*warren.Device, error) {
			return c.Devices.SetTags(ctx, m.deviceID(), stringSet(ctx, m.Tags, diags))
		},
		clear: func(ctx context.Context, c *warren.Client, id string) error {
			_, err := c.Devices.SetTags(ctx, id, []string{})
			return err
		},
	}}
}

func (r *deviceTagsResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_device_tags"
}

func (r *deviceTagsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := deviceIDAttributes()
	maps.Copy(attrs, map[string]schema.Attribute{
		"tags": schema.SetAttribute{
			MarkdownDescription: "Tags (`tag:<name>`); each must be defined in the policy's `tagOwners`. An empty set clears them.",
			ElementType:         types.StringType,
			Required:            true,
			Validators:          []validator.Set{validTags()},
		},
	})
	resp.Schema = schema.Schema{
		MarkdownDescription: "The complete set of tags of one device (tags given another way are removed). Destroying it clears the device's tags; the device itself stays. A tagged device is identified in the policy by its tags alone.",
		Attributes:          attrs,
	}
}

func (m *deviceTagsModel) deviceID() string { return m.DeviceID.ValueString() }

func (m *deviceTagsModel) apply(d *warren.Device) {
	m.ID = types.StringValue(d.ID)
	m.DeviceID = types.StringValue(d.ID)
	m.Tags = setOf(d.Tags)
}
