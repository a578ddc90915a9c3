package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Conversions between the API's values and Terraform's.

// stringSet converts a Terraform set of strings (null: none).
func stringSet(ctx context.Context, set types.Set, diags *diag.Diagnostics) []string {
	out := []string{}
	if set.IsNull() || set.IsUnknown() {
		return out
	}
	diags.Append(set.ElementsAs(ctx, &out, false)...)
	return out
}

// asStrings converts strings to one of the client's named string types (or back).
func asStrings[To, From ~string](values []From) []To {
	out := make([]To, len(values))
	for i, v := range values {
		out[i] = To(v)
	}
	return out
}

// setOf converts a list of strings to a Terraform set (never null, so an empty list is []).
func setOf[S ~string](values []S) types.Set {
	elems := make([]attr.Value, 0, len(values))
	for _, v := range values {
		elems = append(elems, types.StringValue(string(v)))
	}
	return types.SetValueMust(types.StringType, elems)
}

// listOf converts a list of strings to a Terraform list.
func listOf(values []string) types.List {
	elems := make([]attr.Value, 0, len(values))
	for _, v := range values {
		elems = append(elems, types.StringValue(v))
	}
	return types.ListValueMust(types.StringType, elems)
}

// rfc3339 formats a time of the API in UTC, to the second.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
