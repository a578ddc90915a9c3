package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

// Keys cannot be changed after creation: every argument of warren_auth_key and warren_api_key
// forces a new key. These are the attributes both resources share.

// keyComputedAttributes are the attributes the server sets on every key.
func keyComputedAttributes() map[string]schema.Attribute {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			MarkdownDescription: "The key's id (`key_…`).",
			Computed:            true,
			PlanModifiers:       keep,
		},
		"key": schema.StringAttribute{
			MarkdownDescription: "The secret. The server shows it once, when the key is created, so it is empty for an imported key.",
			Computed:            true,
			Sensitive:           true,
			PlanModifiers:       keep,
		},
		"created": schema.StringAttribute{
			MarkdownDescription: "When the key was created (RFC 3339).",
			Computed:            true,
			PlanModifiers:       keep,
		},
		"expires": schema.StringAttribute{
			MarkdownDescription: "When the key stops working (RFC 3339).",
			Computed:            true,
			PlanModifiers:       keep,
		},
		"state": schema.StringAttribute{
			MarkdownDescription: "`valid`, `expired`, `revoked` (deleted) or `used` (a single-use auth key that enrolled its device). An expired or revoked key is planned for replacement.",
			Computed:            true,
			PlanModifiers:       keep,
		},
		"expires_in": schema.StringAttribute{
			MarkdownDescription: "Lifetime from creation: an integer and one unit of `s`, `m`, `h`, `d` (e.g. `24h`, `90d`; at most `365d`). Default `90d` (an API key never outlives the key that creates it). The same length in another unit (`1d` for `24h`) is no change.",
			Optional:            true,
			Computed:            true,
			CustomType:          semanticStringType{kind: durationKind},
			PlanModifiers: []planmodifier.String{
				keepEquivalentOf(durationKind), stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace(),
			},
		},
	}
}

// keyComputed is the part of a key's model the server sets.
type keyComputed struct {
	ID        types.String   `tfsdk:"id"`
	Key       types.String   `tfsdk:"key"`
	Created   types.String   `tfsdk:"created"`
	Expires   types.String   `tfsdk:"expires"`
	State     types.String   `tfsdk:"state"`
	ExpiresIn semanticString `tfsdk:"expires_in"`
}

// set copies a key record; the secret only when the record carries it (the create answer).
func (m *keyComputed) set(k *warren.Key) {
	m.ID = types.StringValue(k.ID)
	if k.Key != "" {
		m.Key = types.StringValue(k.Key)
	}
	m.Created = types.StringValue(rfc3339(k.Created))
	m.Expires = types.StringValue(rfc3339(k.Expires))
	m.State = types.StringValue(string(k.State))
	// The lifetime is not stored as such; after an import it is derived from the record.
	if m.ExpiresIn.IsNull() || m.ExpiresIn.IsUnknown() || !sameDuration(m.ExpiresIn.ValueString(), formatDuration(k.Expires.Sub(k.Created))) {
		m.ExpiresIn = durationKind.value(formatDuration(k.Expires.Sub(k.Created)))
	}
}

// replaceUnusableKey plans a new key in place of one that expired or was revoked outside
// Terraform. A single-use auth key that was used keeps its place: it did its job, and
// replacing it would mint a new key on every apply after each enrollment.
func replaceUnusableKey(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var state types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("state"), &state)...)
	if s := state.ValueString(); s != "expired" && s != "revoked" {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("state"), types.StringUnknown())...)
	resp.RequiresReplace = append(resp.RequiresReplace, path.Root("state"))
}

func (m *keyComputed) keyID() string { return m.ID.ValueString() }

// keyRecord is the model of a key resource: it takes the server's record.
type keyRecord interface {
	keyID() string
	apply(*warren.Key)
}

// keyResource is what warren_auth_key and warren_api_key share: everything but the schema and
// the body of the create call. M is the resource's model.
type keyResource[M any, P interface {
	*M
	keyRecord
}] struct {
	resourceClient
	// what names the key in diagnostics ("auth key", "API key").
	what string
}

func (r *keyResource[M, P]) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	replaceUnusableKey(ctx, req, resp)
}

// create makes the key that build describes from the plan.
func (r *keyResource[M, P]) create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, build func(*M) *warren.CreateKeyRequest) {
	var plan M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	in := build(&plan)
	key, err := r.client.Keys.Create(ctx, in)
	if err != nil {
		addAPIError(&resp.Diagnostics, "create the "+r.what, err)
		return
	}
	P(&plan).apply(key)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *keyResource[M, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := P(&state).keyID()
	key, err := r.client.Keys.Get(ctx, id)
	if !readFound(ctx, resp, "read "+r.what+" "+id, err) {
		return
	}
	P(&state).apply(key)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update is never called with a change (every argument forces a new key); it keeps the plan.
func (r *keyResource[M, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete revokes the key; one that is already gone is fine.
func (r *keyResource[M, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := P(&state).keyID()
	addDeleteError(&resp.Diagnostics, "delete "+r.what+" "+id, r.client.Keys.Delete(ctx, id))
}

func (r *keyResource[M, P]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, req, resp)
}
