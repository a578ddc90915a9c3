package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &userResource{}
	_ resource.ResourceWithImportState = &userResource{}
)

// roles a user may have, in the order of the API's documentation.
var roles = asStrings[string]([]warren.Role{
	warren.RoleOwner, warren.RoleAdmin, warren.RoleNetworkAdmin, warren.RoleITAdmin, warren.RoleAuditor, warren.RoleMember,
})

type userResource struct{ resourceClient }

type userModel struct {
	ID          types.String `tfsdk:"id"`
	LoginName   types.String `tfsdk:"login_name"`
	DisplayName types.String `tfsdk:"display_name"`
	Role        types.String `tfsdk:"role"`
	Status      types.String `tfsdk:"status"`
	Created     types.String `tfsdk:"created"`
}

// NewUserResource is the factory of warren_user.
func NewUserResource() resource.Resource { return &userResource{} }

func (r *userResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_user"
}

func (r *userResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A user of the network. The role and display name change in place; a new login name is a new user. Destroying a user removes their devices (keys are untouched).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The user's id (`usr_…`).",
				Computed:            true,
				PlanModifiers:       keep,
			},
			"login_name": schema.StringAttribute{
				MarkdownDescription: "Login name, usually an email address. Stored in lower case; changing it replaces the user.",
				Required:            true,
				PlanModifiers: []planmodifier.String{
					keepEquivalent{equivalent: strings.EqualFold, description: "Login names are compared without case."},
					stringplanmodifier.RequiresReplace(),
				},
			},
			"display_name": schema.StringAttribute{
				MarkdownDescription: "Name shown to people. Default: the part of the login name before `@`.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       keep,
			},
			"role": schema.StringAttribute{
				MarkdownDescription: "One of `owner`, `admin`, `network-admin`, `it-admin`, `auditor`, `member` (default). Changes in place.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(string(warren.RoleMember)),
				Validators:          []validator.String{stringvalidator.OneOf(roles...)},
			},
			"status": schema.StringAttribute{
				MarkdownDescription: "`active` or `suspended`.",
				Computed:            true,
				PlanModifiers:       keep,
			},
			"created": schema.StringAttribute{
				MarkdownDescription: "When the user was created (RFC 3339).",
				Computed:            true,
				PlanModifiers:       keep,
			},
		},
	}
}

func (r *userResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan userModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	user, err := r.client.Users.Create(ctx, &warren.CreateUserRequest{
		LoginName:   plan.LoginName.ValueString(),
		DisplayName: plan.DisplayName.ValueString(),
		Role:        warren.Role(plan.Role.ValueString()),
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "create the user", err)
		return
	}
	plan.apply(user)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *userResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state userModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	user, err := findUser(ctx, r.client, userWithID(state.ID.ValueString()))
	if !readFound(ctx, resp, "read user "+state.ID.ValueString(), err) {
		return
	}
	if user == nil { // not in the list: deleted outside Terraform
		resp.State.RemoveResource(ctx)
		return
	}
	state.apply(user)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *userResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state userModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	patch := &warren.UpdateUserRequest{}
	if !plan.Role.Equal(state.Role) {
		patch.Role = warren.Ptr(warren.Role(plan.Role.ValueString()))
	}
	if !plan.DisplayName.IsUnknown() && !plan.DisplayName.Equal(state.DisplayName) {
		patch.DisplayName = plan.DisplayName.ValueStringPointer()
	}
	user, err := r.client.Users.Update(ctx, state.ID.ValueString(), patch)
	if err != nil {
		addAPIError(&resp.Diagnostics, "update user "+state.ID.ValueString(), err)
		return
	}
	plan.apply(user)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *userResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state userModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	addDeleteError(&resp.Diagnostics, "delete user "+state.ID.ValueString(), r.client.Users.Delete(ctx, state.ID.ValueString()))
}

// ImportState takes the user's id or, as the CLI does, their login name (in any case).
func (r *userResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	user, err := findUser(ctx, r.client, func(u *warren.User) bool {
		return u.ID == req.ID || strings.EqualFold(u.LoginName, req.ID)
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "find user "+req.ID, err)
		return
	}
	if user == nil {
		resp.Diagnostics.AddError("Cannot import user "+req.ID,
			fmt.Sprintf("No user of the network has the id or login name %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), user.ID)...)
}

// apply copies the server's record; the login name keeps the configuration's spelling when it
// differs only in case (the server stores it in lower case).
func (m *userModel) apply(u *warren.User) {
	m.ID = types.StringValue(u.ID)
	if !strings.EqualFold(m.LoginName.ValueString(), u.LoginName) {
		m.LoginName = types.StringValue(u.LoginName)
	}
	m.DisplayName = types.StringValue(u.DisplayName)
	m.Role = types.StringValue(string(u.Role))
	m.Status = types.StringValue(string(u.Status))
	m.Created = types.StringValue(rfc3339(u.Created))
}

// userWithID selects the user with that id.
func userWithID(id string) func(*warren.User) bool {
	return func(u *warren.User) bool { return u.ID == id }
}

// findUser looks up the user that match selects. The API has no GET /v1/users/{id}, so it
// searches the list; nil means there is no such user.
func findUser(ctx context.Context, client *warren.Client, match func(*warren.User) bool) (*warren.User, error) {
	users, err := client.Users.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	for i := range users {
		if match(&users[i]) {
			return &users[i], nil
		}
	}
	return nil, nil
}
