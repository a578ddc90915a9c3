package warren_test

import (
	"slices"
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestUsers(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)

	u, err := c.Users.Create(ctx, &warren.CreateUserRequest{LoginName: "Ana@Example.com", DisplayName: "Ana", Role: warren.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if u.LoginName != "ana@example.com" || u.DisplayName != "Ana" || u.Role != warren.RoleAdmin || u.Status != warren.UserStatusActive || u.Created.IsZero() {
		t.Fatalf("created %+v", u)
	}
	_, err = c.Users.Create(ctx, &warren.CreateUserRequest{LoginName: "ana@example.com"})
	wantError(t, err, 409, warren.CodeConflict)
	_, err = c.Users.Create(ctx, &warren.CreateUserRequest{})
	wantError(t, err, 400, warren.CodeInvalidRequest)

	admins, err := c.Users.List(ctx, &warren.UserListOptions{Role: warren.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(admins, func(x warren.User) bool { return x.ID == u.ID }) {
		t.Errorf("%s not among admins %+v", u.ID, admins)
	}
	everyone, err := c.Users.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(everyone) < 2 {
		t.Errorf("want the owner and ana, got %+v", everyone)
	}

	u, err = c.Users.Update(ctx, u.ID, &warren.UpdateUserRequest{Role: warren.Ptr(warren.RoleMember)})
	if err != nil {
		t.Fatal(err)
	}
	if u.Role != warren.RoleMember || u.DisplayName != "Ana" {
		t.Errorf("role update changed other fields: %+v", u)
	}
	u, err = c.Users.Update(ctx, u.ID, &warren.UpdateUserRequest{DisplayName: warren.String("Ana B.")})
	if err != nil {
		t.Fatal(err)
	}
	if u.Role != warren.RoleMember || u.DisplayName != "Ana B." {
		t.Errorf("display name update: %+v", u)
	}

	owners, err := c.Users.List(ctx, &warren.UserListOptions{Role: warren.RoleOwner})
	if err != nil || len(owners) != 1 {
		t.Fatalf("owners %+v, %v", owners, err)
	}
	_, err = c.Users.Update(ctx, owners[0].ID, &warren.UpdateUserRequest{Role: warren.Ptr(warren.RoleMember)})
	wantError(t, err, 409, warren.CodeInvalidState)

	if err := c.Users.Delete(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	wantError(t, c.Users.Delete(ctx, u.ID), 404, warren.CodeNotFound)
	_, err = c.Users.Update(ctx, u.ID, nil)
	wantError(t, err, 404, warren.CodeNotFound)
}
