package provider

import (
	"context"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	warren "github.com/warrenhq/warren/clients/go"
)

// deviceSetting is the model of a resource that manages one aspect of a device (its tags, its
// approved routes): the device's id is the resource's id, and the device record fills it in.
type deviceSetting interface {
	deviceID() string
	apply(*warren.Device)
}

// deviceResource is what warren_device_tags, warren_device_routes and warren_device_approval
// share. push makes the device match the model and returns its record; clear undoes the setting
// on destroy.
type deviceResource[M any, P interface {
	*M
	deviceSetting
}] struct {
	resourceClient
	what  string // "tags", "approved routes"
	push  func(ctx context.Context, c *warren.Client, m P, diags *diag.Diagnostics) (*warren.Device, error)
	clear func(ctx context.Context, c *warren.Client, id string) error
	// holds, when set, says whether the device still has the setting at all; when it does not
	// (a device de-authorized elsewhere), Read drops the resource so the next plan creates it.
	holds func(*warren.Device) bool
}

// tagPattern is the API's pattern of a tag (TAG_PATTERN in packages/contract/src/formats.ts).
var tagPattern = regexp.MustCompile(`^tag:[a-z0-9][a-z0-9-]{0,62}$`)

// validTags refuses at plan time a tag the API would refuse at apply.
func validTags() validator.Set {
	return setvalidator.ValueStringsAre(stringvalidator.RegexMatches(tagPattern,
		`must be "tag:" then up to 63 lowercase letters, digits and dashes, starting with a letter or digit`))
}

// deviceIDAttributes are the id and device_id attributes of a device setting.
func deviceIDAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			MarkdownDescription: "The device id (the same as `device_id`).",
			Computed:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"device_id": schema.StringAttribute{
			MarkdownDescription: "The device's id (`dev_…`). Another device is another resource.",
			Required:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
	}
}

func (r *deviceResource[M, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *deviceResource[M, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *deviceResource[M, P]) write(ctx context.Context, plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics) {
	var m M
	diags.Append(plan.Get(ctx, &m)...)
	if diags.HasError() {
		return
	}
	device, err := r.push(ctx, r.client, &m, diags)
	if err != nil {
		addAPIError(diags, "set the "+r.what+" of device "+P(&m).deviceID(), err)
		return
	}
	P(&m).apply(device)
	diags.Append(state.Set(ctx, &m)...)
}

func (r *deviceResource[M, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := P(&m).deviceID()
	device, err := r.client.Devices.Get(ctx, id)
	if !readFound(ctx, resp, "read device "+id, err) {
		return
	}
	if r.holds != nil && !r.holds(device) {
		resp.State.RemoveResource(ctx)
		return
	}
	P(&m).apply(device)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete undoes the setting; a device that is gone has nothing left to undo.
func (r *deviceResource[M, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := P(&m).deviceID()
	addDeleteError(&resp.Diagnostics, "clear the "+r.what+" of device "+id, r.clear(ctx, r.client, id))
}

// ImportState takes the device id, which is the resource's id and its device_id.
func (r *deviceResource[M, P]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, req, resp)
	resource.ImportStatePassthroughID(ctx, path.Root("device_id"), req, resp)
}
