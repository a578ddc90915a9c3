package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	warren "github.com/warrenhq/warren/clients/go"
)

// protoV6Providers runs the provider in the test process; Terraform or OpenTofu reattaches
// to it, so `init` downloads nothing.
var protoV6Providers = map[string]func() (tfprotov6.ProviderServer, error){
	"warren": providerserver.NewProtocol6WithError(New("test")()),
}

// providerBlock declares the provider's full address, which Terraform and OpenTofu resolve
// alike (a bare "warrenhq/warren" means a different registry host to each).
const providerBlock = `
terraform {
  required_providers {
    warren = { source = "registry.terraform.io/warrenhq/warren" }
  }
}
`

// config is a test configuration with the provider's address.
func config(format string, args ...any) string {
	return providerBlock + fmt.Sprintf(format, args...)
}

// apiClient talks to the test server with the network's `all` key, for setup, out-of-band
// changes and checks.
func apiClient(t *testing.T) *warren.Client {
	t.Helper()
	c, err := warren.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enrollDevice registers a device through the node protocol with a new single-use auth key,
// advertising routes, and returns its id.
func enrollDevice(t *testing.T, hostname string, routes ...string) string {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	key, err := apiClient(t).Keys.Create(context.Background(), &warren.CreateKeyRequest{Description: "enroll " + hostname, ExpiresIn: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	return registerWith(t, key.Key, hostname, routes...).Device.ID
}

// registerWith enrolls a device through the node protocol with the given auth key.
func registerWith(t *testing.T, authKey, hostname string, routes ...string) *warren.Registration {
	t.Helper()
	node, err := warren.NewNodeClient()
	if err != nil {
		t.Fatal(err)
	}
	nodeKey := make([]byte, 32)
	_, _ = rand.Read(nodeKey)
	reg, err := node.Register(context.Background(), authKey, &warren.RegisterRequest{
		Hostname: hostname, OS: "linux", NodeKey: "nodekey:" + hex.EncodeToString(nodeKey), AdvertiseRoutes: routes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// outOfBand runs a change through the API, as someone outside Terraform would, failing the
// test if the API refuses it.
func outOfBand(t *testing.T, change func(ctx context.Context, c *warren.Client) error) func() {
	return func() {
		t.Helper()
		if err := change(context.Background(), apiClient(t)); err != nil {
			t.Fatalf("out-of-band change: %v", err)
		}
	}
}

// errorMatching is a regexp for ExpectError that tolerates the line wrapping of CLI output.
func errorMatching(text string) *regexp.Regexp {
	return regexp.MustCompile(regexp.MustCompile(`\s+`).ReplaceAllString(regexp.QuoteMeta(text), `\s+`))
}

// runBeforeApply is a pre-apply plan check that runs fn between plan and apply: the moment a
// change made elsewhere can land after Terraform refreshed.
type runBeforeApply func()

func (fn runBeforeApply) CheckPlan(context.Context, plancheck.CheckPlanRequest, *plancheck.CheckPlanResponse) {
	fn()
}

// importPlansNothing is a step that imports the resource at address with an import block (by
// id, or by its id in state when id is empty) into a copy of the state without it, and requires
// the plan to be a no-op import: what the import reads is what the configuration says, so an
// imported resource plans no change.
func importPlansNothing(address, id string) resource.TestStep {
	return resource.TestStep{
		ResourceName:    address,
		ImportState:     true,
		ImportStateKind: resource.ImportBlockWithID,
		ImportStateId:   id,
	}
}
