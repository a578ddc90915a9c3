package provider

import (
	"fmt"
	"net/url"
	"strings"
)

// webhookURLKind is a webhook's target. The server stores the URL as the WHATWG URL parser
// writes it (scheme and host in lower case, no default port, "/" for an empty path), so
// "https://Hooks.Example.com" comes back as "https://hooks.example.com/"; both spellings are
// the same target and plan no change.
var webhookURLKind = &stringKind{
	name:       "webhook URL",
	equivalent: sameWebhookURL,
	check: func(s string) error {
		_, err := normalizeWebhookURL(s)
		return err
	},
	invalid: "Invalid webhook URL",
}

// normalizeWebhookURL writes an http(s) URL the way the server stores it, for the parts a
// person commonly spells differently.
func normalizeWebhookURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %v", s, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("%q is not an https (or, on a server that allows it, http) URL", s)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q has no host", s)
	}
	if u.User != nil {
		return "", fmt.Errorf("%q carries credentials, which a webhook URL may not", s)
	}
	u.Host = strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		u.Host = strings.TrimSuffix(u.Host, ":"+port)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// sameWebhookURL reports whether two spellings name the same target.
func sameWebhookURL(a, b string) bool {
	if a == b {
		return true
	}
	na, errA := normalizeWebhookURL(a)
	nb, errB := normalizeWebhookURL(b)
	return errA == nil && errB == nil && na == nb
}
