package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	warren "github.com/warrenhq/warren/clients/go"
)

// readResponse is a Read's response holding the state of one object, id usr_1.
func readResponse(t *testing.T) *resource.ReadResponse {
	t.Helper()
	s := schema.Schema{Attributes: map[string]schema.Attribute{"id": schema.StringAttribute{Computed: true}}}
	raw := tftypes.NewValue(s.Type().TerraformType(context.Background()), map[string]tftypes.Value{
		"id": tftypes.NewValue(tftypes.String, "usr_1"),
	})
	return &resource.ReadResponse{State: tfsdk.State{Schema: s, Raw: raw}}
}

func TestReadFound(t *testing.T) {
	ctx := context.Background()
	notFound := &warren.Error{StatusCode: 404, Code: warren.CodeNotFound, Detail: "user usr_1 does not exist"}
	refused := &warren.Error{StatusCode: 403, Code: warren.CodeInsufficientScope, Detail: "needs users", Scope: "users"}

	t.Run("a record to apply", func(t *testing.T) {
		resp := readResponse(t)
		if !readFound(ctx, resp, "read user usr_1", nil) || resp.State.Raw.IsNull() || resp.Diagnostics.HasError() {
			t.Fatalf("want the state kept and no diagnostic, got %v %v", resp.State.Raw, resp.Diagnostics)
		}
	})
	for name, err := range map[string]error{"a 404": notFound, "a wrapped 404": fmt.Errorf("listing: %w", notFound)} {
		t.Run(name+" leaves the state without an error", func(t *testing.T) {
			resp := readResponse(t)
			if readFound(ctx, resp, "read user usr_1", err) || !resp.State.Raw.IsNull() || resp.Diagnostics.HasError() {
				t.Fatalf("want the resource removed and no diagnostic, got %v %v", resp.State.Raw, resp.Diagnostics)
			}
		})
	}
	t.Run("any other failure is an error naming the operation, and the state stays", func(t *testing.T) {
		resp := readResponse(t)
		if readFound(ctx, resp, "read user usr_1", refused) || resp.State.Raw.IsNull() {
			t.Fatalf("want false and the state kept, got state %v", resp.State.Raw)
		}
		assertOneError(t, resp.Diagnostics, "Cannot read user usr_1", "403 insufficient_scope: needs users (scope needed: users)")
	})
}

func TestAddDeleteError(t *testing.T) {
	var diags diag.Diagnostics
	addDeleteError(&diags, "delete webhook whk_1", nil)
	addDeleteError(&diags, "delete webhook whk_1", &warren.Error{StatusCode: 404, Code: warren.CodeNotFound})
	if diags.HasError() {
		t.Fatalf("deleting what is gone must succeed, got %v", diags)
	}
	addDeleteError(&diags, "delete webhook whk_1", &warren.Error{StatusCode: 409, Code: warren.CodeInvalidState, Detail: "the last owner"})
	assertOneError(t, diags, "Cannot delete webhook whk_1", "409 invalid_state: the last owner")
}

func assertOneError(t *testing.T, diags diag.Diagnostics, summary, detail string) {
	t.Helper()
	errs := diags.Errors()
	if len(errs) != 1 || errs[0].Summary() != summary || !strings.HasPrefix(errs[0].Detail(), detail) {
		t.Fatalf("want one error %q: %q…, got %v", summary, detail, diags)
	}
}
