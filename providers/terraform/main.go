// Command terraform-provider-warren is the Terraform and OpenTofu provider for Warren's
// management API. Terraform starts it; run it with -debug to attach a debugger.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/warrenhq/warren/providers/terraform/internal/provider"
)

// version is set at release time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run the provider for a debugger (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
