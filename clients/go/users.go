package warren

import (
	"context"
	"net/http"
	"time"
)

// Role is what a user may do in the network, as in Tailscale's admin console.
type Role string

// User roles.
const (
	RoleOwner        Role = "owner"
	RoleAdmin        Role = "admin"
	RoleNetworkAdmin Role = "network-admin"
	RoleITAdmin      Role = "it-admin"
	RoleAuditor      Role = "auditor"
	RoleMember       Role = "member"
)

// UserStatus is whether a user may sign in and connect devices.
type UserStatus string

// User statuses.
const (
	UserStatusActive    UserStatus = "active"
	UserStatusSuspended UserStatus = "suspended" // sessions ended, devices disconnected
)

// User is a person of the network.
type User struct {
	ID          string     `json:"id"`
	LoginName   string     `json:"loginName"`
	DisplayName string     `json:"displayName"`
	Role        Role       `json:"role"`
	Status      UserStatus `json:"status"`
	Created     time.Time  `json:"created"`
	LastSeen    *time.Time `json:"lastSeen"`
	DeviceCount int        `json:"deviceCount"`
}

// UserListOptions filters Users.List.
type UserListOptions struct {
	Role Role
}

// CreateUserRequest is the body of Users.Create.
type CreateUserRequest struct {
	LoginName string `json:"loginName"`
	// DisplayName defaults to the part of the login name before @.
	DisplayName string `json:"displayName,omitempty"`
	// Role defaults to member.
	Role Role `json:"role,omitempty"`
}

// UpdateUserRequest is the body of Users.Update; nil fields are left as they are.
type UpdateUserRequest struct {
	Role        *Role   `json:"role,omitempty"`
	DisplayName *string `json:"displayName,omitempty"`
	// Status is active or suspended (suspending ends the user's sessions and disconnects their devices).
	Status *UserStatus `json:"status,omitempty"`
}

// UsersService covers /v1/users.
type UsersService struct{ c *Client }

// List returns the network's users (nil opts: all of them).
func (s *UsersService) List(ctx context.Context, opts *UserListOptions) ([]User, error) {
	if opts == nil {
		opts = &UserListOptions{}
	}
	body, err := send[struct {
		Users []User `json:"users"`
	}](ctx, s.c, http.MethodGet, "/v1/users", params("role", string(opts.Role)), nil)
	if err != nil {
		return nil, err
	}
	return body.Users, nil
}

// Create adds a user (403 plan_limit past the plan's seats, 409 conflict for a login name
// that exists).
func (s *UsersService) Create(ctx context.Context, in *CreateUserRequest) (*User, error) {
	return send[User](ctx, s.c, http.MethodPost, "/v1/users", nil, in)
}

// Update changes a user's role or display name (409 invalid_state when it would leave the
// network without an owner).
func (s *UsersService) Update(ctx context.Context, id string, in *UpdateUserRequest) (*User, error) {
	if in == nil {
		in = &UpdateUserRequest{}
	}
	return send[User](ctx, s.c, http.MethodPatch, "/v1/users/"+escape(id), nil, in)
}

// Delete removes a user and their devices; keys are untouched.
func (s *UsersService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, http.MethodDelete, "/v1/users/"+escape(id), nil, nil, nil)
}
