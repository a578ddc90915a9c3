package warren

import (
	"context"
	"net/http"
)

// Network is the tenant the API key belongs to, with its plan's limits and its usage.
type Network struct {
	ID     string        `json:"id"`
	Name   string        `json:"name"`
	Plan   string        `json:"plan"` // free or premium
	Limits NetworkLimits `json:"limits"`
	Usage  NetworkUsage  `json:"usage"`
}

// NetworkLimits are the plan's limits; nil means unlimited.
type NetworkLimits struct {
	Users            *int `json:"users"`
	Devices          *int `json:"devices"`
	LogRetentionDays int  `json:"logRetentionDays"`
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
