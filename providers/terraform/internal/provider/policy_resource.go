package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

// policyID is the id of the one policy of a network.
const policyID = "policy"

var (
	_ resource.ResourceWithConfigure      = &policyResource{}
	_ resource.ResourceWithImportState    = &policyResource{}
	_ resource.ResourceWithModifyPlan     = &policyResource{}
	_ resource.ResourceWithValidateConfig = &policyResource{}
)

type policyResource struct{ resourceClient }

type policyModel struct {
	ID      types.String   `tfsdk:"id"`
	Content semanticString `tfsdk:"content"`
	ETag    types.String   `tfsdk:"etag"`
	// Write-only, so always null in the plan and the state: see writeOnlyArguments.
	Filename          types.String `tfsdk:"filename"`
	OverwriteExisting types.Bool   `tfsdk:"overwrite_existing"`
}

// NewPolicyResource is the factory of warren_policy.
func NewPolicyResource() resource.Resource { return &policyResource{} }

func (r *policyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_policy"
}

func (r *policyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The network's policy (ACL) as HuJSON text. There is one per network: destroying this resource puts the network's default policy back.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "Always `policy`.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"content": schema.StringAttribute{
				MarkdownDescription: "The policy document (HuJSON: JSON with comments and trailing commas), stored verbatim. Reformatting alone is no change; a change of value or of a comment is. Every plan validates it with the server and reports each problem with its line and column.",
				Required:            true,
				CustomType:          semanticStringType{kind: hujsonKind},
				PlanModifiers:       []planmodifier.String{keepEquivalentOf(hujsonKind)},
			},
			"filename": schema.StringAttribute{
				MarkdownDescription: "The file `content` was read from, such as `\"policy.hujson\"` for `content = file(\"policy.hujson\")`. Used only to name it in the policy's errors (`policy.hujson:7:15: …`, as a compiler would); it is not sent to the server. Write-only (Terraform 1.11 or OpenTofu 1.11 and later): it is never stored in the state, so adding, changing or removing it plans no change, and an imported policy, which cannot know it, plans none either.",
				Optional:            true,
				WriteOnly:           true,
			},
			"etag": schema.StringAttribute{
				MarkdownDescription: "ETag of the stored policy. Every change is sent with `If-Match` this value, so a policy changed elsewhere since the last refresh is never overwritten.",
				Computed:            true,
			},
			"overwrite_existing": schema.BoolAttribute{
				MarkdownDescription: "Allow creating this resource over a policy that is neither the network's default nor `content`. Default `false`: import the policy instead (an `import` block with `id = \"policy\"`, or `terraform import` / `tofu import warren_policy.NAME policy`), so that a hand-written policy is never replaced by surprise. The plan already fails when it would be. Write-only (Terraform 1.11 or OpenTofu 1.11 and later): it matters only to the create and is never stored in the state, so changing it later, or importing, plans nothing.",
				Optional:            true,
				WriteOnly:           true,
			},
		},
	}
}

// ValidateConfig checks the content's HuJSON syntax without the server, and places a mistake as
// the server's validator does: at its line and column, in the file when filename names it.
func (r *policyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var content semanticString
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("content"), &content)...)
	args := writeOnlyArguments(ctx, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || content.IsNull() || content.IsUnknown() {
		return
	}
	problem, err := hujsonSyntaxError(content.ValueString())
	switch {
	case problem != nil:
		resp.Diagnostics.AddAttributeError(path.Root("content"), "Invalid HuJSON", policyPlace(args.Filename.ValueString(), *problem))
	case err != nil:
		resp.Diagnostics.AddAttributeError(path.Root("content"), "Invalid HuJSON", err.Error())
	}
}

// ModifyPlan asks the server to validate the planned content, so a plan already fails with every
// problem (syntax, undefined groups or tags, over-permissive rules, failing tests) at its line.
func (r *policyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.client == nil || req.Plan.Raw.IsNull() {
		return
	}
	var plan policyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Content.IsUnknown() || plan.Content.IsNull() {
		return
	}
	if !req.State.Raw.IsNull() {
		var state policyModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if state.Content.ValueString() == plan.Content.ValueString() {
			// Unchanged (or only reformatted, which keepEquivalent turned back into the stored
			// text): the stored version and its ETag stay, and the server accepted it already.
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("etag"), state.ETag)...)
			return
		}
	} else if !writeOnlyArguments(ctx, req.Config, &resp.Diagnostics).OverwriteExisting.ValueBool() {
		// Found now rather than by Create, so that an apply never stops half-way through, after
		// creating the configuration's other resources.
		current, err := r.client.Policy.GetText(ctx)
		if err != nil {
			addAPIError(&resp.Diagnostics, "read the policy", err)
			return
		}
		if !mayCreateOver(current.Text, plan.Content.ValueString()) {
			addExistingPolicyError(&resp.Diagnostics)
			return
		}
	}
	result, err := r.client.Policy.Validate(ctx, plan.Content.ValueString())
	if err != nil {
		addAPIError(&resp.Diagnostics, "validate the policy", err)
		return
	}
	addPolicyProblems(&resp.Diagnostics, writeOnlyArguments(ctx, req.Config, &resp.Diagnostics).Filename.ValueString(), result.Errors)
}

// mayCreateOver reports whether creating the resource with content leaves nothing lost: the
// stored policy is the network's default, or already content.
func mayCreateOver(stored, content string) bool {
	return sameHuJSON(stored, defaultPolicy) || sameHuJSON(stored, content)
}

func addExistingPolicyError(diags *diag.Diagnostics) {
	diags.AddAttributeError(path.Root("content"), "The network already has a policy",
		"The stored policy differs from the network's default, so creating warren_policy would replace it. "+
			"Import it first (an import block with id = \"policy\", or: terraform import / tofu import warren_policy.NAME policy) "+
			"and edit content, or set overwrite_existing = true.")
}

// policyWriteOnly holds the write-only arguments. Only the configuration has them: in the plan
// and the state they are always null.
type policyWriteOnly struct {
	Filename          types.String
	OverwriteExisting types.Bool
}

func writeOnlyArguments(ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) policyWriteOnly {
	var args policyWriteOnly
	diags.Append(config.GetAttribute(ctx, path.Root("filename"), &args.Filename)...)
	diags.Append(config.GetAttribute(ctx, path.Root("overwrite_existing"), &args.OverwriteExisting)...)
	return args
}

// addPolicyProblems reports each problem of the validator at content, naming its line and
// column, and the file the text came from when the configuration says.
func addPolicyProblems(diags *diag.Diagnostics, filename string, problems []warren.PolicyError) {
	for _, e := range problems {
		diags.AddAttributeError(path.Root("content"), "Invalid policy", policyPlace(filename, e))
	}
}

// policyPlace is a problem of the policy at its place: "line 7, column 15: …", or as a compiler
// would name it, "policy.hujson:7:15: …", when the file is known.
func policyPlace(filename string, e warren.PolicyError) string {
	if filename != "" {
		return fmt.Sprintf("%s:%d:%d: %s", filename, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

func (r *policyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan policyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	args := writeOnlyArguments(ctx, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	current, err := r.client.Policy.GetText(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, "read the policy", err)
		return
	}
	content := plan.Content.ValueString()
	// Checked again: the policy may have been written by hand between plan and apply.
	if !args.OverwriteExisting.ValueBool() && !mayCreateOver(current.Text, content) {
		addExistingPolicyError(&resp.Diagnostics)
		return
	}
	stored, err := r.client.Policy.Set(ctx, content, current.ETag)
	if err != nil {
		addPolicyWriteError(&resp.Diagnostics, args.Filename.ValueString(), "store the policy", err)
		return
	}
	plan.ID = types.StringValue(policyID)
	plan.ETag = types.StringValue(stored.ETag)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *policyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state policyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	current, err := r.client.Policy.GetText(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, "read the policy", err)
		return
	}
	state.ID = types.StringValue(policyID)
	state.Content = hujsonKind.value(current.Text)
	state.ETag = types.StringValue(current.ETag)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *policyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state policyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = types.StringValue(policyID)
	plan.ETag = state.ETag
	if !sameHuJSON(plan.Content.ValueString(), state.Content.ValueString()) {
		stored, err := r.client.Policy.Set(ctx, plan.Content.ValueString(), state.ETag.ValueString())
		if err != nil {
			addPolicyWriteError(&resp.Diagnostics, writeOnlyArguments(ctx, req.Config, &resp.Diagnostics).Filename.ValueString(), "update the policy", err)
			return
		}
		plan.ETag = types.StringValue(stored.ETag)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete puts the default policy back, on the same If-Match terms as an update: a policy that
// changed since the last refresh is left alone.
func (r *policyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state policyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, err := r.client.Policy.Set(ctx, defaultPolicy, state.ETag.ValueString()); err != nil {
		addPolicyWriteError(&resp.Diagnostics, "", "restore the default policy", err)
	}
}

// ImportState accepts any id: a network has exactly one policy.
func (r *policyResource) ImportState(ctx context.Context, _ resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), policyID)...)
}

// addPolicyWriteError explains a refused PUT /v1/acl: 412 means someone else changed the
// policy after it was last read, which must never be overwritten blindly.
func addPolicyWriteError(diags *diag.Diagnostics, filename, operation string, err error) {
	if warren.IsPreconditionFailed(err) {
		diags.AddAttributeError(path.Root("content"), "The policy was changed outside this configuration",
			"The stored policy no longer has the ETag of the last refresh, so it was not overwritten. "+
				"Plan again (terraform plan or tofu plan): the refresh shows the other change as a difference to review.")
		return
	}
	var apiErr *warren.Error
	if errors.As(err, &apiErr) && apiErr.Code == warren.CodePolicyInvalid {
		addPolicyProblems(diags, filename, apiErr.Errors)
		return
	}
	addAPIError(diags, operation, err)
}
