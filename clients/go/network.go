package warren

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Network is the tenant the API key belongs to, with its plan's limits and its usage.
type Network struct {
	ID     string        `json:"id"`
	Name   string        `json:"name"`
	Plan   string        `json:"plan"` // free or premium
	Limits NetworkLimits `json:"limits"`
	Usage  NetworkUsage  `json:"usage"`
	// DeviceApproval makes new devices wait for an admin's approval.
	DeviceApproval bool `json:"deviceApproval"`
	// NodeKeyExpiry is how long a device's login lasts: a duration such as 180d, or 0 for never.
	NodeKeyExpiry string `json:"nodeKeyExpiry"`
	// FlowLogs makes Tailscale clients log their network flows into the connection log.
	FlowLogs bool `json:"flowLogs"`
	// DNS is what Tailscale clients are told about DNS.
	DNS NetworkDNS `json:"dns"`
	// DERP is the relays (DERP map) Tailscale clients are given.
	DERP NetworkDERP `json:"derp"`
	// SSO says whether single sign-on is set up and enforced (SSO has the settings).
	SSO NetworkSSO `json:"sso"`
}

// NetworkSSO is the network's single sign-on at a glance.
type NetworkSSO struct {
	Configured bool `json:"configured"`
	// Enforce is set when only single sign-on signs people in.
	Enforce bool `json:"enforce"`
	// RedirectURI is the callback to register with the identity provider; nil until the
	// server knows its public URL.
	RedirectURI *string `json:"redirectUri"`
}

// NetworkDNS is the network's DNS settings.
type NetworkDNS struct {
	// Domain is the MagicDNS domain: devices are <name>.<domain>.
	Domain        string   `json:"domain"`
	MagicDNS      bool     `json:"magicDns"`
	Nameservers   []string `json:"nameservers"`
	SearchDomains []string `json:"searchDomains"`
	// SplitDNS maps a DNS domain to the nameservers for names under it; an empty list makes
	// the clients answer those names themselves (extra records) and forward none.
	SplitDNS map[string][]string `json:"splitDns"`
	// ExtraRecords are records Tailscale clients answer themselves.
	ExtraRecords []DNSRecord `json:"extraRecords"`
}

// DNSRecord is an extra DNS record: Type is A (Value an IPv4 address) or AAAA (an IPv6 one).
type DNSRecord struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// NetworkDERP is the network's relay settings.
type NetworkDERP struct {
	// Embedded puts the server's embedded relay in the DERP map when it runs one.
	Embedded bool `json:"embedded"`
	// Regions are Tailscale DERP map regions (tailcfg.DERPRegion), in Tailscale's field names.
	Regions []map[string]any `json:"regions"`
}

// NetworkUpdate holds the settings Update changes; a nil field is left as it is.
type NetworkUpdate struct {
	DeviceApproval *bool              `json:"deviceApproval,omitempty"`
	NodeKeyExpiry  *string            `json:"nodeKeyExpiry,omitempty"`
	FlowLogs       *bool              `json:"flowLogs,omitempty"`
	DNS            *NetworkDNSUpdate  `json:"dns,omitempty"`
	DERP           *NetworkDERPUpdate `json:"derp,omitempty"`
}

// NetworkDNSUpdate changes DNS settings field by field; a nil field is left as it is. The
// domain goes back to its default (<network name>.warren.internal) with ResetDomain. SplitDNS
// and ExtraRecords replace the whole map or list (a pointer to an empty one clears it).
type NetworkDNSUpdate struct {
	Domain        *string              `json:"-"`
	ResetDomain   bool                 `json:"-"`
	MagicDNS      *bool                `json:"magicDns,omitempty"`
	Nameservers   *[]string            `json:"nameservers,omitempty"`
	SearchDomains *[]string            `json:"searchDomains,omitempty"`
	SplitDNS      *map[string][]string `json:"splitDns,omitempty"`
	ExtraRecords  *[]DNSRecord         `json:"extraRecords,omitempty"`
}

// MarshalJSON writes domain as given, as null for ResetDomain, or not at all.
func (u NetworkDNSUpdate) MarshalJSON() ([]byte, error) {
	type fields NetworkDNSUpdate
	out := struct {
		Domain any `json:"domain,omitempty"`
		fields
	}{fields: fields(u)}
	switch {
	case u.ResetDomain:
		out.Domain = json.RawMessage("null")
	case u.Domain != nil:
		out.Domain = *u.Domain
	}
	return json.Marshal(out)
}

// NetworkDERPUpdate changes relay settings; a nil field is left as it is. Regions replaces
// the whole list (a pointer to an empty slice clears it).
type NetworkDERPUpdate struct {
	Embedded *bool             `json:"embedded,omitempty"`
	Regions  *[]map[string]any `json:"regions,omitempty"`
}

// NetworkLimits are the plan's limits; nil means unlimited.
type NetworkLimits struct {
	Users            *int `json:"users"`
	Devices          *int `json:"devices"`
	LogRetentionDays int  `json:"logRetentionDays"`
	Webhooks         *int `json:"webhooks"`
}

// NetworkUsage counts what the limits apply to.
type NetworkUsage struct {
	Users   int `json:"users"`
	Devices int `json:"devices"`
}

// NetworkService covers /v1/network.
type NetworkService struct{ c *Client }

// Get returns the network of the client's key.
func (s *NetworkService) Get(ctx context.Context) (*Network, error) {
	return send[Network](ctx, s.c, http.MethodGet, "/v1/network", nil, nil)
}

// Update changes the network's device settings; it needs a key with scope all.
func (s *NetworkService) Update(ctx context.Context, in NetworkUpdate) (*Network, error) {
	return send[Network](ctx, s.c, http.MethodPatch, "/v1/network", nil, in)
}

// SSO is the network's single sign-on (OpenID Connect) provider. The client secret is never
// returned.
type SSO struct {
	Issuer         string    `json:"issuer"`
	ClientID       string    `json:"clientId"`
	AllowedDomains []string  `json:"allowedDomains"`
	Enforce        bool      `json:"enforce"`
	RedirectURI    string    `json:"redirectUri"` // register it with the provider
	Updated        time.Time `json:"updated"`
}

// SetSSORequest is the body of Network.SetSSO.
type SetSSORequest struct {
	Issuer       string `json:"issuer"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	// AllowedDomains: people of these email domains become members at their first sign-in.
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	// Enforce: only single sign-on opens a console session.
	Enforce bool `json:"enforce"`
}

// SSO returns the network's single sign-on settings (404 not_found when none are set).
func (s *NetworkService) SSO(ctx context.Context) (*SSO, error) {
	return send[SSO](ctx, s.c, http.MethodGet, "/v1/network/sso", nil, nil)
}

// SetSSO sets the network's OpenID provider (scope all).
func (s *NetworkService) SetSSO(ctx context.Context, in *SetSSORequest) (*SSO, error) {
	return send[SSO](ctx, s.c, http.MethodPut, "/v1/network/sso", nil, in)
}

// Me is the caller: the API key (or a console session's user), its network and its scopes.
type Me struct {
	Type    string `json:"type"` // key or user
	Network struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"network"`
	User *User `json:"user"`
	Key  *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"key"`
	Scopes         []Scope   `json:"scopes"`
	OwnDevicesOnly bool      `json:"ownDevicesOnly"`
	CSRFToken      string    `json:"csrfToken,omitempty"`
	Expires        time.Time `json:"expires"`
}

// Me returns who the client's credential is and what it may do.
func (s *NetworkService) Me(ctx context.Context) (*Me, error) {
	return send[Me](ctx, s.c, http.MethodGet, "/v1/me", nil, nil)
}
