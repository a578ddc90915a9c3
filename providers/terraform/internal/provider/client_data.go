package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	warren "github.com/warrenhq/warren/clients/go"
)

// clientFrom takes the client the provider's Configure made. Data is nil while Terraform
// validates a configuration before configuring the provider; the caller then waits.
func clientFrom(data any, diags *diag.Diagnostics) *warren.Client {
	if data == nil {
		return nil
	}
	client, ok := data.(*warren.Client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *warren.Client, got %T; please report this bug", data))
		return nil
	}
	return client
}
