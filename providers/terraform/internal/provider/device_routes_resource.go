package provider

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &deviceRoutesResource{}
	_ resource.ResourceWithImportState = &deviceRoutesResource{}
)

type deviceRoutesResource struct {
	deviceResource[deviceRoutesModel, *deviceRoutesModel]
}

type deviceRoutesModel struct {
	ID         types.String `tfsdk:"id"`
	DeviceID   types.String `tfsdk:"device_id"`
	Approved   types.Set    `tfsdk:"approved"`
	Advertised types.Set    `tfsdk:"advertised"`
}

// NewDeviceRoutesResource is the factory of warren_device_routes.
func NewDeviceRoutesResource() resource.Resource {
	return &deviceRoutesResource{deviceResource[deviceRoutesModel, *deviceRoutesModel]{
		what: "approved routes",
		push: func(ctx context.Context, c *warren.Client, m *deviceRoutesModel, diags *diag.Diagnostics) (*warren.Device, error) {
			if err := approveExactly(ctx, c, m.deviceID(), stringSet(ctx, m.Approved, diags)); err != nil {
				return nil, err
			}
			return c.Devices.Get(ctx, m.deviceID())
		},
		clear: func(ctx context.Context, c *warren.Client, id string) error {
			return approveExactly(ctx, c, id, nil)
		},
	}}
}

func (r *deviceRoutesResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_device_routes"
}

func (r *deviceRoutesResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := deviceIDAttributes()
	maps.Copy(attrs, map[string]schema.Attribute{
		"approved": schema.SetAttribute{
			MarkdownDescription: "Prefixes to approve, in canonical form (`10.0.0.0/24`, `fd00::/8`). The device must have advertised each one.",
			ElementType:         types.StringType,
			Required:            true,
			Validators:          []validator.Set{canonicalPrefixes{}},
		},
		"advertised": schema.SetAttribute{
			MarkdownDescription: "Prefixes the device advertises now, whatever their state.",
			ElementType:         types.StringType,
			Computed:            true,
			// Approving or disabling changes what is approved, never what the device advertises,
			// so a plan keeps the refreshed set instead of showing it as known after apply.
			PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()},
		},
	})
	resp.Schema = schema.Schema{
		MarkdownDescription: "Which subnet routes of one device are approved. Every prefix in `approved` is approved; every other approved route of the device is disabled (a route still pending stays pending: it reaches no peer either way). Destroying it disables all of the device's approved routes.",
		Attributes:          attrs,
	}
}

// approveExactly approves each wanted prefix that is not approved and disables each approved
// route that is not wanted. Prefixes the device never advertised are an error, before any change.
func approveExactly(ctx context.Context, c *warren.Client, deviceID string, approved []string) error {
	routes, err := c.Routes.List(ctx, &warren.RouteListOptions{Device: deviceID})
	if err != nil {
		return err
	}
	var missing []string
	for _, prefix := range approved {
		if !slices.ContainsFunc(routes, func(rt warren.Route) bool { return rt.Prefix == prefix }) {
			missing = append(missing, prefix)
		}
	}
	if len(missing) > 0 {
		// The list of a device that is gone is empty too: say that it is gone instead.
		if _, err := c.Devices.Get(ctx, deviceID); err != nil {
			return err
		}
		return fmt.Errorf("device %s has not advertised %s; a route can only be approved once the device advertises it (warren node up --advertise-routes …)",
			deviceID, strings.Join(missing, ", "))
	}
	for _, rt := range routes {
		want := slices.Contains(approved, rt.Prefix)
		switch {
		case want && rt.State != "approved":
			_, err = c.Routes.Approve(ctx, rt.ID)
		case !want && rt.State == "approved":
			_, err = c.Routes.Disable(ctx, rt.ID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *deviceRoutesModel) deviceID() string { return m.DeviceID.ValueString() }

func (m *deviceRoutesModel) apply(d *warren.Device) {
	var approved, advertised []string
	for _, rt := range d.Routes {
		if rt.State == "approved" {
			approved = append(approved, rt.Prefix)
		}
		if rt.Advertised {
			advertised = append(advertised, rt.Prefix)
		}
	}
	m.ID = types.StringValue(d.ID)
	m.DeviceID = types.StringValue(d.ID)
	m.Approved = setOf(approved)
	m.Advertised = setOf(advertised)
}

// canonicalPrefixes accepts CIDR prefixes written the way the server stores them, so the set in
// the configuration and the set read back compare equal.
type canonicalPrefixes struct{}

func (canonicalPrefixes) Description(context.Context) string {
	return "each element is a CIDR prefix in canonical form"
}

func (v canonicalPrefixes) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (canonicalPrefixes) ValidateSet(ctx context.Context, req validator.SetRequest, resp *validator.SetResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for _, elem := range req.ConfigValue.Elements() {
		s, ok := elem.(types.String)
		if !ok || s.IsUnknown() || s.IsNull() {
			continue
		}
		p, err := netip.ParsePrefix(s.ValueString())
		switch {
		case err != nil:
			resp.Diagnostics.AddAttributeError(req.Path, "Invalid prefix", fmt.Sprintf("%q is not a CIDR prefix: %s", s.ValueString(), err))
		case p.Masked().String() != s.ValueString():
			resp.Diagnostics.AddAttributeError(req.Path, "Prefix not in canonical form",
				fmt.Sprintf("write %q as %q", s.ValueString(), p.Masked().String()))
		}
	}
}
