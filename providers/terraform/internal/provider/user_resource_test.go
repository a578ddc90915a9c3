package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	warren "github.com/warrenhq/warren/clients/go"
)

func userConfig(login, role string) string {
	return userNamedConfig(login, "Ana", role)
}

func userNamedConfig(login, displayName, role string) string {
	return config(`
resource "warren_user" "ana" {
  login_name   = %q
  display_name = %q
  role         = %q
}
`, login, displayName, role)
}

// userOnServer finds the user in state on the server (nil when it is gone).
func userOnServer(t *testing.T, s *terraform.State) (*warren.User, error) {
	rs, ok := s.RootModule().Resources["warren_user.ana"]
	if !ok {
		return nil, fmt.Errorf("warren_user.ana not in state")
	}
	return findUser(context.Background(), apiClient(t), userWithID(rs.Primary.ID))
}

func TestAccUser(t *testing.T) {
	const address = "warren_user.ana"
	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy: func(s *terraform.State) error {
			if u, err := findUser(context.Background(), apiClient(t), userWithID(id)); err != nil || u != nil {
				return fmt.Errorf("user %s still exists (%v)", id, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: userConfig("ana@example.com", "member"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "role", "member"),
					resource.TestCheckResourceAttr(address, "status", "active"),
					func(s *terraform.State) error {
						u, err := userOnServer(t, s)
						if err != nil || u == nil || u.Role != "member" || u.DisplayName != "Ana" {
							return fmt.Errorf("server has %+v (%v)", u, err)
						}
						id = u.ID
						return nil
					},
				),
			},
			{
				// Login names are stored in lower case: another case is no change.
				Config:           userConfig("Ana@Example.com", "member"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: userConfig("ana@example.com", "admin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					u, err := userOnServer(t, s)
					if err != nil || u == nil || u.Role != "admin" || u.ID != id {
						return fmt.Errorf("server has %+v (%v), want the same user as admin", u, err)
					}
					return nil
				},
			},
			{
				ResourceName:      address,
				ImportState:       true,
				ImportStateVerify: true,
			},
			importPlansNothing(address, ""),
			{
				// By login name, in any case, as `warren users` takes it.
				ResourceName:      address,
				ImportState:       true,
				ImportStateId:     "Ana@Example.com",
				ImportStateVerify: true,
			},
			importPlansNothing(address, "Ana@Example.com"),
			{
				ResourceName:  address,
				ImportState:   true,
				ImportStateId: "nobody@example.com",
				ExpectError:   errorMatching(`No user of the network has the id or login name "nobody@example.com"`),
			},
			{
				PreConfig: outOfBand(t, func(ctx context.Context, c *warren.Client) error {
					_, err := c.Users.Update(ctx, id, &warren.UpdateUserRequest{Role: warren.Ptr(warren.RoleAuditor)})
					return err
				}),
				Config: userConfig("ana@example.com", "admin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: resource.TestCheckResourceAttr(address, "role", "admin"),
			},
			{
				// The display name changes in place, and a change of it made elsewhere is drift.
				PreConfig: outOfBand(t, func(ctx context.Context, c *warren.Client) error {
					_, err := c.Users.Update(ctx, id, &warren.UpdateUserRequest{DisplayName: warren.Ptr("Ana L.")})
					return err
				}),
				Config: userNamedConfig("ana@example.com", "Ana Lima", "admin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					u, err := userOnServer(t, s)
					if err != nil || u == nil || u.DisplayName != "Ana Lima" || u.ID != id {
						return fmt.Errorf("server has %+v (%v), want the same user named Ana Lima", u, err)
					}
					return nil
				},
			},
			{
				// A new login name is a new user.
				Config: userConfig("ana.lima@example.com", "admin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: func(s *terraform.State) error {
					if u, _ := findUser(context.Background(), apiClient(t), userWithID(id)); u != nil {
						return fmt.Errorf("the old user %s still exists", id)
					}
					u, err := userOnServer(t, s)
					if err != nil || u == nil {
						return fmt.Errorf("new user not on server (%v)", err)
					}
					id = u.ID
					return nil
				},
			},
			{
				// Deleted elsewhere: it leaves the state and is created again.
				PreConfig: outOfBand(t, func(ctx context.Context, c *warren.Client) error {
					return c.Users.Delete(ctx, id)
				}),
				Config: userConfig("ana.lima@example.com", "admin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionCreate),
				}},
				Check: func(s *terraform.State) error {
					u, err := userOnServer(t, s)
					if err != nil || u == nil || u.ID == id || u.Role != "admin" {
						return fmt.Errorf("server has %+v (%v), want a new admin", u, err)
					}
					id = u.ID
					return nil
				},
			},
			{
				// Deleted elsewhere between plan and apply: destroying it has nothing left to do.
				Config: config(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroy),
					runBeforeApply(outOfBand(t, func(ctx context.Context, c *warren.Client) error { return c.Users.Delete(ctx, id) })),
				}},
			},
		},
	})
}
