package provider

import (
	"context"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &authKeyResource{}
	_ resource.ResourceWithImportState = &authKeyResource{}
	_ resource.ResourceWithModifyPlan  = &authKeyResource{}
)

type authKeyResource struct {
	keyResource[authKeyModel, *authKeyModel]
}

type authKeyModel struct {
	keyComputed
	Reusable    types.Bool   `tfsdk:"reusable"`
	Ephemeral   types.Bool   `tfsdk:"ephemeral"`
	PreApproved types.Bool   `tfsdk:"pre_approved"`
	Tags        types.Set    `tfsdk:"tags"`
	User        types.String `tfsdk:"user"`
	UserID      types.String `tfsdk:"user_id"`
	Description types.String `tfsdk:"description"`
}

// NewAuthKeyResource is the factory of warren_auth_key.
func NewAuthKeyResource() resource.Resource {
	return &authKeyResource{keyResource[authKeyModel, *authKeyModel]{what: "auth key"}}
}

func (r *authKeyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_auth_key"
}

func (r *authKeyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceBool := []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
	attrs := map[string]schema.Attribute{
		"reusable": schema.BoolAttribute{
			MarkdownDescription: "Enrolls any number of devices instead of one. Default `false`.",
			Optional:            true, Computed: true, Default: booldefault.StaticBool(false),
			PlanModifiers: replaceBool,
		},
		"ephemeral": schema.BoolAttribute{
			MarkdownDescription: "Devices it enrolls are removed after 10 minutes offline. Default `false`.",
			Optional:            true, Computed: true, Default: booldefault.StaticBool(false),
			PlanModifiers: replaceBool,
		},
		"pre_approved": schema.BoolAttribute{
			MarkdownDescription: "Devices it enrolls skip device approval (network setting `deviceApproval`). Default `false`.",
			Optional:            true, Computed: true, Default: booldefault.StaticBool(false),
			PlanModifiers: replaceBool,
		},
		"tags": schema.SetAttribute{
			MarkdownDescription: "Tags given to every device it enrolls (`tag:<name>`); each must be defined in the policy's `tagOwners`.",
			ElementType:         types.StringType,
			Optional:            true, Computed: true, Default: setdefault.StaticValue(setOf([]string{})),
			PlanModifiers: []planmodifier.Set{setplanmodifier.RequiresReplace()},
			Validators:    []validator.Set{validTags()},
		},
		"user": schema.StringAttribute{
			MarkdownDescription: "User (id or login name) the enrolled devices belong to. Default: the network's owner. The same user named another way (id, login name in any case) is no change.",
			Optional:            true, Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()},
		},
		"user_id": schema.StringAttribute{
			MarkdownDescription: "Id of that user (`usr_…`).",
			Computed:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"description": schema.StringAttribute{
			MarkdownDescription: "Free text shown in key lists.",
			Optional:            true, Computed: true, Default: stringdefault.StaticString(""),
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
	}
	maps.Copy(attrs, keyComputedAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "An auth key: what a device presents to enroll in the network (`warren node up --auth-key …`). Keys cannot be changed, so any change of an argument creates a new key and revokes the old one; a key revoked or expired elsewhere is planned for replacement.",
		Attributes:          attrs,
	}
}

// ModifyPlan plans a new key in place of an unusable one, and keeps the key when user only names
// its user another way: an import reads the user's id, while the configuration may give the
// login name (in any case), and neither is a reason to replace the key.
func (r *authKeyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.keyResource.ModifyPlan(ctx, req, resp)
	if r.client == nil || req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var planned, stored, storedID types.String
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("user"), &planned)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("user"), &stored)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("user_id"), &storedID)...)
	if resp.Diagnostics.HasError() || planned.IsUnknown() || planned.IsNull() || planned.Equal(stored) {
		return
	}
	same := planned.ValueString() == storedID.ValueString()
	if !same {
		user, err := findUser(ctx, r.client, func(u *warren.User) bool { return strings.EqualFold(u.LoginName, planned.ValueString()) })
		if err != nil {
			addAPIError(&resp.Diagnostics, "find user "+planned.ValueString(), err)
			return
		}
		same = user != nil && user.ID == storedID.ValueString()
	}
	if same {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("user"), stored)...)
	}
}

func (r *authKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(plan *authKeyModel) *warren.CreateKeyRequest {
		return &warren.CreateKeyRequest{
			Type:        warren.KeyTypeAuth,
			Reusable:    plan.Reusable.ValueBool(),
			Ephemeral:   plan.Ephemeral.ValueBool(),
			PreApproved: plan.PreApproved.ValueBool(),
			Tags:        stringSet(ctx, plan.Tags, &resp.Diagnostics),
			User:        plan.User.ValueString(),
			Description: plan.Description.ValueString(),
			ExpiresIn:   plan.ExpiresIn.ValueString(),
		}
	})
}

// apply copies the server's record. user keeps the spelling of the configuration (a login name
// stays a login name); the id is in user_id.
func (m *authKeyModel) apply(k *warren.Key) {
	m.set(k)
	m.Reusable = types.BoolValue(k.Reusable)
	m.Ephemeral = types.BoolValue(k.Ephemeral)
	m.PreApproved = types.BoolValue(k.PreApproved)
	m.Tags = setOf(k.Tags)
	m.Description = types.StringValue(k.Description)
	userID := ""
	if k.User != nil {
		userID = *k.User
	}
	m.UserID = types.StringValue(userID)
	if m.User.IsNull() || m.User.IsUnknown() {
		m.User = types.StringValue(userID)
	}
}
