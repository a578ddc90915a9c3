package warren

import (
	"context"
	"net/http"
	"time"
)

// RouteState is whether a route carries traffic: only approved routes do.
type RouteState string

// Route states.
const (
	RouteStatePending  RouteState = "pending"
	RouteStateApproved RouteState = "approved"
	RouteStateDisabled RouteState = "disabled"
)

// Route is a subnet route a device advertises.
type Route struct {
	ID           string     `json:"id"`
	DeviceID     string     `json:"deviceId"`
	DeviceName   string     `json:"deviceName"`
	Prefix       string     `json:"prefix"`
	State        RouteState `json:"state"`
	Advertised   bool       `json:"advertised"`
	AutoApproved bool       `json:"autoApproved"`
	Primary      bool       `json:"primary"`
	ExitNode     bool       `json:"exitNode"` // a default route (0.0.0.0/0 or ::/0)
	ApprovedAt   *time.Time `json:"approvedAt"`
	ApprovedBy   *string    `json:"approvedBy"`
	Created      time.Time  `json:"created"`
}

// RouteListOptions filters Routes.List.
type RouteListOptions struct {
	State  RouteState
	Device string // a device id or name
}

// RoutesService covers /v1/routes.
type RoutesService struct{ c *Client }

// List returns the routes that match opts (nil: every route).
func (s *RoutesService) List(ctx context.Context, opts *RouteListOptions) ([]Route, error) {
	if opts == nil {
		opts = &RouteListOptions{}
	}
	body, err := send[struct {
		Routes []Route `json:"routes"`
	}](ctx, s.c, http.MethodGet, "/v1/routes", params("state", string(opts.State), "device", opts.Device), nil)
	if err != nil {
		return nil, err
	}
	return body.Routes, nil
}

// Approve approves a pending or disabled route (409 invalid_state otherwise).
func (s *RoutesService) Approve(ctx context.Context, id string) (*Route, error) {
	return s.action(ctx, id, "approve")
}

// Disable disables an approved route (409 invalid_state otherwise).
func (s *RoutesService) Disable(ctx context.Context, id string) (*Route, error) {
	return s.action(ctx, id, "disable")
}

func (s *RoutesService) action(ctx context.Context, id, action string) (*Route, error) {
	return send[Route](ctx, s.c, http.MethodPost, "/v1/routes/"+escape(id)+"/"+action, nil, nil)
}
