package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var (
	_ resource.ResourceWithConfigure   = &apiKeyResource{}
	_ resource.ResourceWithImportState = &apiKeyResource{}
	_ resource.ResourceWithModifyPlan  = &apiKeyResource{}
)

// scopes an API key may have, in the order of the API's documentation.
var scopes = asStrings[string]([]warren.Scope{
	warren.ScopeRead, warren.ScopeDevices, warren.ScopeACLs, warren.ScopeKeys, warren.ScopeUsers, warren.ScopeWebhooks, warren.ScopeAll,
})

type apiKeyResource struct {
	keyResource[apiKeyModel, *apiKeyModel]
}

type apiKeyModel struct {
	keyComputed
	Name      types.String `tfsdk:"name"`
	Scopes    types.Set    `tfsdk:"scopes"`
	RateLimit types.Int64  `tfsdk:"rate_limit"`
}

// NewAPIKeyResource is the factory of warren_api_key.
func NewAPIKeyResource() resource.Resource {
	return &apiKeyResource{keyResource[apiKeyModel, *apiKeyModel]{what: "API key"}}
}

func (r *apiKeyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_api_key"
}

func (r *apiKeyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"name": schema.StringAttribute{
			MarkdownDescription: "Name shown in the audit log for every call made with the key.",
			Required:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"scopes": schema.SetAttribute{
			MarkdownDescription: "Scopes: `read`, `devices`, `acls`, `keys`, `users`, `webhooks`, `all`. Only a subset of the provider's own key's scopes.",
			ElementType:         types.StringType,
			Required:            true,
			PlanModifiers:       []planmodifier.Set{setplanmodifier.RequiresReplace()},
			Validators: []validator.Set{
				setvalidator.SizeAtLeast(1),
				// Refused at plan time rather than by the create call.
				setvalidator.ValueStringsAre(stringvalidator.OneOf(scopes...)),
			},
		},
		"rate_limit": schema.Int64Attribute{
			MarkdownDescription: "Requests a minute the key may make instead of the default 100. Only a provider key with scope `all` may set it.",
			Optional:            true,
			PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()},
		},
	}
	maps.Copy(attrs, keyComputedAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "An API key for the management API, e.g. for a pipeline. Keys cannot be changed, so any change of an argument creates a new key and revokes the old one (rotate by changing `name` or by applying with `-replace`); a key revoked or expired elsewhere is planned for replacement.",
		Attributes:          attrs,
	}
}

func (r *apiKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(plan *apiKeyModel) *warren.CreateKeyRequest {
		return &warren.CreateKeyRequest{
			Type:      warren.KeyTypeAPI,
			Name:      plan.Name.ValueString(),
			Scopes:    asStrings[warren.Scope](stringSet(ctx, plan.Scopes, &resp.Diagnostics)),
			RateLimit: int(plan.RateLimit.ValueInt64()),
			ExpiresIn: plan.ExpiresIn.ValueString(),
		}
	})
}

func (m *apiKeyModel) apply(k *warren.Key) {
	m.set(k)
	m.Name = types.StringValue(k.Name)
	m.Scopes = setOf(k.Scopes)
	if k.RateLimit != nil {
		m.RateLimit = types.Int64Value(int64(*k.RateLimit))
	} else {
		m.RateLimit = types.Int64Null()
	}
}
