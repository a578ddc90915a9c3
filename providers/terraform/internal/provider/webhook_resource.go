package provider

import (
	"context"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &webhookResource{}
	_ resource.ResourceWithImportState = &webhookResource{}
	_ resource.ResourceWithModifyPlan  = &webhookResource{}
)

// eventFilter is the API's pattern of an event filter: a type, a family or "*"
// (EVENT_FILTER_PATTERN in packages/contract/src/events.ts; a type may hold an underscore, as
// device.key_expired does).
var eventFilter = regexp.MustCompile(`^(\*|[a-z]+\.\*|[a-z]+\.[a-z_]+)$`)

type webhookResource struct{ resourceClient }

type webhookModel struct {
	ID             types.String   `tfsdk:"id"`
	URL            semanticString `tfsdk:"url"`
	Events         types.Set      `tfsdk:"events"`
	Description    types.String   `tfsdk:"description"`
	Enabled        types.Bool     `tfsdk:"enabled"`
	Secret         types.String   `tfsdk:"secret"`
	DisabledReason types.String   `tfsdk:"disabled_reason"`
	Created        types.String   `tfsdk:"created"`
}

// NewWebhookResource is the factory of warren_webhook.
func NewWebhookResource() resource.Resource { return &webhookResource{} }

func (r *webhookResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_webhook"
}

func (r *webhookResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A webhook endpoint: the server delivers the events its filters match, signed by the Standard Webhooks scheme. Every argument changes in place. The signing secret is shown once, when the endpoint is created; an imported endpoint has none in state.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The endpoint's id (`whk_…`).",
				Computed:            true,
				PlanModifiers:       keep,
			},
			"url": schema.StringAttribute{
				MarkdownDescription: "Where deliveries go: `https`, to a public address (a server run with `--webhooks-allow-private` also takes `http` and private addresses). Another spelling of the same URL (case of the host, a default port, a missing `/`) is no change.",
				Required:            true,
				CustomType:          semanticStringType{kind: webhookURLKind},
				PlanModifiers:       []planmodifier.String{keepEquivalentOf(webhookURLKind)},
			},
			"events": schema.SetAttribute{
				MarkdownDescription: "Event filters: a type (`policy.updated`), a family (`device.*`) or `*` for every event. 1 to 32 of them.",
				ElementType:         types.StringType,
				Required:            true,
				Validators: []validator.Set{
					setvalidator.SizeBetween(1, 32),
					setvalidator.ValueStringsAre(stringvalidator.LengthAtMost(64), stringvalidator.RegexMatches(eventFilter,
						"must be an event type (device.created), a family (device.*) or *")),
				},
			},
			"description": schema.StringAttribute{
				MarkdownDescription: "What the endpoint is for; up to 500 characters. Default: empty.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(""),
				Validators:          []validator.String{stringvalidator.LengthAtMost(500)},
			},
			"enabled": schema.BoolAttribute{
				MarkdownDescription: "Whether events are delivered. Default `true`. The server disables an endpoint that answers `410 Gone`; the next plan turns it back on.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
			"secret": schema.StringAttribute{
				MarkdownDescription: "The signing secret (`whsec_…`). The server shows it only when the endpoint is created, so it is kept in state from then on and never read again; it is null for an imported endpoint.",
				Computed:            true,
				Sensitive:           true,
				PlanModifiers:       keep,
			},
			"disabled_reason": schema.StringAttribute{
				MarkdownDescription: "Why the endpoint is disabled (null while it is enabled).",
				Computed:            true,
			},
			"created": schema.StringAttribute{
				MarkdownDescription: "When the endpoint was created (RFC 3339).",
				Computed:            true,
				PlanModifiers:       keep,
			},
		},
	}
}

// ModifyPlan plans disabled_reason: null for an enabled endpoint, the current reason while it
// stays disabled, and unknown when it is being disabled (the server writes the reason).
func (r *webhookResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var enabled types.Bool
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("enabled"), &enabled)...)
	reason := types.StringUnknown()
	switch {
	case enabled.IsUnknown():
	case enabled.ValueBool():
		reason = types.StringNull()
	case !req.State.Raw.IsNull():
		var wasEnabled types.Bool
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("enabled"), &wasEnabled)...)
		if !wasEnabled.ValueBool() {
			resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("disabled_reason"), &reason)...)
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("disabled_reason"), reason)...)
}

func (r *webhookResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan webhookModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	events := stringSet(ctx, plan.Events, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	hook, err := r.client.Webhooks.Create(ctx, &warren.CreateWebhookRequest{
		URL:         plan.URL.ValueString(),
		Events:      events,
		Description: plan.Description.ValueString(),
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "create the webhook", err)
		return
	}
	// Only this answer carries the secret: keep it before anything else can fail.
	plan.Secret = types.StringValue(hook.Secret)
	plan.apply(hook)
	if !plan.Enabled.ValueBool() {
		// The API creates endpoints enabled; one configured disabled is switched off at once.
		off := false
		if hook, err = r.client.Webhooks.Update(ctx, hook.ID, &warren.UpdateWebhookRequest{Enabled: &off}); err != nil {
			resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
			addAPIError(&resp.Diagnostics, "disable webhook "+plan.ID.ValueString(), err)
			return
		}
		plan.apply(hook)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *webhookResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state webhookModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	hook, err := r.client.Webhooks.Get(ctx, state.ID.ValueString())
	if !readFound(ctx, resp, "read webhook "+state.ID.ValueString(), err) {
		return
	}
	state.apply(hook)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update sends only what changed, so a field changed elsewhere and not in the plan is left alone.
func (r *webhookResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state webhookModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	patch := &warren.UpdateWebhookRequest{}
	if !sameWebhookURL(plan.URL.ValueString(), state.URL.ValueString()) {
		patch.URL = plan.URL.ValueStringPointer()
	}
	if !plan.Events.Equal(state.Events) {
		patch.Events = stringSet(ctx, plan.Events, &resp.Diagnostics)
	}
	if !plan.Description.Equal(state.Description) {
		patch.Description = plan.Description.ValueStringPointer()
	}
	if !plan.Enabled.Equal(state.Enabled) {
		patch.Enabled = plan.Enabled.ValueBoolPointer()
	}
	if resp.Diagnostics.HasError() {
		return
	}
	hook, err := r.client.Webhooks.Update(ctx, state.ID.ValueString(), patch)
	if err != nil {
		addAPIError(&resp.Diagnostics, "update webhook "+state.ID.ValueString(), err)
		return
	}
	plan.apply(hook)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete removes the endpoint and its deliveries; one that is already gone is fine.
func (r *webhookResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state webhookModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	addDeleteError(&resp.Diagnostics, "delete webhook "+state.ID.ValueString(), r.client.Webhooks.Delete(ctx, state.ID.ValueString()))
}

func (r *webhookResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, req, resp)
}

// apply copies the server's record. The URL keeps the configuration's spelling when it names
// the same target; the secret is left as it is (the record carries it only at creation).
func (m *webhookModel) apply(w *warren.Webhook) {
	m.ID = types.StringValue(w.ID)
	if m.URL.IsNull() || m.URL.IsUnknown() || !sameWebhookURL(m.URL.ValueString(), w.URL) {
		m.URL = webhookURLKind.value(w.URL)
	}
	m.Events = setOf(w.Events)
	m.Description = types.StringValue(w.Description)
	m.Enabled = types.BoolValue(w.Enabled)
	m.DisabledReason = types.StringPointerValue(w.DisabledReason)
	m.Created = types.StringValue(rfc3339(w.Created))
}
