package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	warren "github.com/warrenhq/warren/clients/go"
)

// What the resources' Read, Delete and ImportState share: an object the API no longer has is
// gone (not an error), and an import id is the API id.

// readFound reports whether a Read has a record to apply after the call that fetched it. An
// object the API no longer has (deleted outside Terraform) leaves the state, so the next plan
// creates it again; any other failure is a diagnostic naming the operation.
func readFound(ctx context.Context, resp *resource.ReadResponse, operation string, err error) bool {
	switch {
	case err == nil:
		return true
	case warren.IsNotFound(err):
		resp.State.RemoveResource(ctx)
	default:
		addAPIError(&resp.Diagnostics, operation, err)
	}
	return false
}

// addDeleteError reports a failed Delete; an object that is already gone is what Delete wanted.
func addDeleteError(diags *diag.Diagnostics, operation string, err error) {
	if err != nil && !warren.IsNotFound(err) {
		addAPIError(diags, operation, err)
	}
}

// importByID imports a resource whose import id is its API id; Read fills in the rest.
func importByID(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
