package warren

import (
	"context"
	"net/http"
	"time"
)

// KeyType tells an auth key (enrolls devices) from an API key (calls the management API).
type KeyType string

// Key types.
const (
	KeyTypeAuth KeyType = "auth"
	KeyTypeAPI  KeyType = "api"
)

// KeyState is where a key is in its life.
type KeyState string

// Key states.
const (
	KeyStateValid   KeyState = "valid"
	KeyStateExpired KeyState = "expired"
	KeyStateRevoked KeyState = "revoked"
	KeyStateUsed    KeyState = "used" // a one-off auth key that enrolled its device
)

// Scope is what an API key may do.
type Scope string

// API key scopes.
const (
	ScopeRead     Scope = "read"
	ScopeDevices  Scope = "devices"
	ScopeACLs     Scope = "acls"
	ScopeKeys     Scope = "keys"
	ScopeUsers    Scope = "users"
	ScopeWebhooks Scope = "webhooks"
	ScopeAll      Scope = "all"
)

// Key is an auth key (enrollment) or an API key (management). Reusable, Ephemeral, Tags and
// User belong to auth keys; Name, Scopes and RateLimit to API keys.
type Key struct {
	ID          string     `json:"id"`
	Type        KeyType    `json:"type"`
	Key         string     `json:"key,omitempty"` // the secret; only in the answer to Create
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description"`
	Scopes      []Scope    `json:"scopes"`
	Reusable    bool       `json:"reusable,omitempty"`
	Ephemeral   bool       `json:"ephemeral,omitempty"`
	PreApproved bool       `json:"preApproved,omitempty"`
	Tags        []string   `json:"tags,omitempty"`
	User        *string    `json:"user,omitempty"`
	RateLimit   *int       `json:"rateLimit,omitempty"`
	Created     time.Time  `json:"created"`
	Expires     time.Time  `json:"expires"`
	State       KeyState   `json:"state"`
	Uses        int        `json:"uses"`
	LastUsed    *time.Time `json:"lastUsed"`
	CreatedBy   *string    `json:"createdBy"`
}

// KeyListOptions filters Keys.List.
type KeyListOptions struct {
	Type  KeyType
	State KeyState
}

// CreateKeyRequest is the body of Keys.Create. An auth key (Type "" or "auth") takes
// Reusable, Ephemeral, PreApproved, Tags, User and Description; an API key (Type "api") takes Name,
// Scopes, RateLimit and Description. ExpiresIn is a duration such as "24h" or "90d" (the
// default; at most "365d"); Duration formats a time.Duration so.
type CreateKeyRequest struct {
	Type        KeyType  `json:"type,omitempty"`
	Reusable    bool     `json:"reusable,omitempty"`
	Ephemeral   bool     `json:"ephemeral,omitempty"`
	PreApproved bool     `json:"preApproved,omitempty"` // devices it enrolls skip device approval
	Tags        []string `json:"tags,omitempty"`
	User        string   `json:"user,omitempty"` // user id or login name; default: the owner
	Description string   `json:"description,omitempty"`
	Name        string   `json:"name,omitempty"`
	Scopes      []Scope  `json:"scopes,omitempty"`
	RateLimit   int      `json:"rateLimit,omitempty"` // requests a minute; only a key with scope all may set it
	ExpiresIn   string   `json:"expiresIn,omitempty"`
}

// KeysService covers /v1/keys.
type KeysService struct{ c *Client }

// List returns the keys that match opts (nil: every key), oldest first.
func (s *KeysService) List(ctx context.Context, opts *KeyListOptions) ([]Key, error) {
	if opts == nil {
		opts = &KeyListOptions{}
	}
	body, err := send[struct {
		Keys []Key `json:"keys"`
	}](ctx, s.c, http.MethodGet, "/v1/keys", params("type", string(opts.Type), "state", string(opts.State)), nil)
	if err != nil {
		return nil, err
	}
	return body.Keys, nil
}

// Create makes a key; its secret is in Key.Key, in this answer only.
func (s *KeysService) Create(ctx context.Context, in *CreateKeyRequest) (*Key, error) {
	if in == nil {
		in = &CreateKeyRequest{}
	}
	return send[Key](ctx, s.c, http.MethodPost, "/v1/keys", nil, in)
}

// Get returns one key (without its secret).
func (s *KeysService) Get(ctx context.Context, id string) (*Key, error) {
	return send[Key](ctx, s.c, http.MethodGet, "/v1/keys/"+escape(id), nil, nil)
}

// Delete revokes a key at once; devices it enrolled stay. Deleting a revoked key succeeds.
func (s *KeysService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, http.MethodDelete, "/v1/keys/"+escape(id), nil, nil, nil)
}
