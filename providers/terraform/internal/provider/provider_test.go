package provider

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	warren "github.com/warrenhq/warren/clients/go"
)

// withKey is a configuration whose provider block uses key instead of WARREN_API_KEY.
func withKey(key, body string) string {
	return config("provider \"warren\" {\n  api_key = %q\n}\n%s", key, body)
}

// Configure checks the key against the server and explains what is wrong with it.
func TestAccProvider_credentials(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	ctx := context.Background()
	c := apiClient(t)
	short, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{Type: warren.KeyTypeAPI, Name: "short-lived", Scopes: []warren.Scope{warren.ScopeRead}, ExpiresIn: "1s"})
	if err != nil {
		t.Fatal(err)
	}
	readOnly, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{Type: warren.KeyTypeAPI, Name: "read-only", Scopes: []warren.Scope{warren.ScopeRead}, ExpiresIn: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{Type: warren.KeyTypeAPI, Name: "revoked", Scopes: []warren.Scope{warren.ScopeRead}, ExpiresIn: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Keys.Delete(ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // let the short-lived key expire
	network := `data "warren_network" "this" {}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      withKey("wrn_api_not-a-real-key", network),
				ExpectError: errorMatching("The server does not know this API key"),
			},
			{
				Config:      withKey(short.Key, network),
				ExpectError: errorMatching("The API key has expired"),
			},
			{
				Config:      withKey(revoked.Key, network),
				ExpectError: errorMatching("The API key was revoked"),
			},
			{
				Config:      withKey(readOnly.Key, `resource "warren_user" "x" { login_name = "x@example.com" }`),
				ExpectError: errorMatching("(scope needed: users)"),
			},
			{
				Config: withKey(readOnly.Key, network),
				Check:  resource.TestCheckResourceAttr("data.warren_network.this", "plan", "premium"),
			},
		},
	})
}
