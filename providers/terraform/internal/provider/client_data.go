package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
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

// resourceClient is embedded by every resource for the client the provider configured.
type resourceClient struct{ client *warren.Client }

func (c *resourceClient) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	c.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// dataSourceClient is resourceClient for data sources.
type dataSourceClient struct{ client *warren.Client }

func (c *dataSourceClient) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	c.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}
