package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	warren "github.com/warrenhq/warren/clients/go"
)

// credentialHint turns the API's authentication and authorization codes into what a person
// should do about them.
var credentialHint = map[string]string{
	warren.CodeUnauthenticated:   "The server does not know this API key. Check api_key / WARREN_API_KEY (an API key starts with wrn_api_; an auth key wrn_auth_ cannot manage the network).",
	warren.CodeKeyExpired:        "The API key has expired. Create a new one (warren keys create --type api …) and set it in api_key / WARREN_API_KEY.",
	warren.CodeKeyRevoked:        "The API key was revoked (deleted). Create a new one and set it in api_key / WARREN_API_KEY.",
	warren.CodeInsufficientScope: "The API key lacks a scope this operation needs. Use a key with that scope, or with scope all.",
	warren.CodePlanLimit:         "The network's plan does not allow this (a seat or device limit). Remove something or change the plan.",
}

// addConfigureError reports why the provider could not reach the API with its key.
func addConfigureError(diags *diag.Diagnostics, url string, err error) {
	var apiErr *warren.Error
	if !errors.As(err, &apiErr) {
		diags.AddAttributeError(path.Root("url"), "Cannot reach the Warren API",
			fmt.Sprintf("GET %s/v1/network failed: %s. Check url / WARREN_URL and that the server is running.", strings.TrimRight(url, "/"), err))
		return
	}
	diags.AddAttributeError(path.Root("api_key"), "Warren refused the API key", describe(apiErr))
}

// addAPIError reports a failed call of an operation ("create the user", …).
func addAPIError(diags *diag.Diagnostics, operation string, err error) {
	var apiErr *warren.Error
	if !errors.As(err, &apiErr) {
		diags.AddError("Cannot "+operation, err.Error())
		return
	}
	diags.AddError("Cannot "+operation, describe(apiErr))
}

// describe is the problem's detail, its request id and, for credential problems, what to do.
func describe(e *warren.Error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %s", e.StatusCode, e.Code, e.Detail)
	if e.Scope != "" {
		fmt.Fprintf(&b, " (scope needed: %s)", e.Scope)
	}
	for _, p := range e.Errors {
		fmt.Fprintf(&b, "\nline %d, column %d: %s", p.Line, p.Column, p.Msg)
	}
	if hint, ok := credentialHint[e.Code]; ok {
		b.WriteString("\n\n" + hint)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, "\n\nRequest id: %s", e.RequestID)
	}
	return b.String()
}
