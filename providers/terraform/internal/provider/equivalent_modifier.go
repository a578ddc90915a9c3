package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
)

// keepEquivalent plans the value in state when the configuration holds an equivalent spelling
// of it (a reformatted policy, "24h" for "1d"), so such an edit plans no change at all.
// Semantic equality of a custom type alone only applies to values the provider returns.
type keepEquivalent struct {
	equivalent  func(a, b string) bool
	description string
}

func (m keepEquivalent) Description(context.Context) string { return m.description }

func (m keepEquivalent) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (m keepEquivalent) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.PlanValue.IsNull() || req.PlanValue.IsUnknown() {
		return
	}
	if m.equivalent(req.StateValue.ValueString(), req.PlanValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}

// keepEquivalentOf is keepEquivalent for a stringKind.
func keepEquivalentOf(k *stringKind) keepEquivalent {
	return keepEquivalent{equivalent: k.equivalent, description: "Another spelling of the same " + k.name + " value is no change."}
}
