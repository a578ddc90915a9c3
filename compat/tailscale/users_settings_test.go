package compat_test

import (
	"testing"

	tailscale "tailscale.com/client/tailscale/v2"
)

func TestUsers(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		users, err := c.Users().List(ctx, nil, nil)
		if err != nil || len(users) != 1 || users[0].Role != tailscale.UserRoleOwner || users[0].DeviceCount < 3 {
			t.Fatalf("List: %+v, %v", users, err)
		}
		admins, err := c.Users().List(ctx, tailscale.PointerTo(tailscale.UserTypeMember), tailscale.PointerTo(tailscale.UserRoleAdmin))
		if err != nil || len(admins) != 0 {
			t.Fatalf("List of admins: %+v, %v", admins, err)
		}
		covered(t, "Users.List")
		owner, err := c.Users().Get(ctx, users[0].ID)
		if err != nil || owner.LoginName != users[0].LoginName || !owner.CurrentlyConnected {
			t.Fatalf("Get: %+v, %v", owner, err)
		}
		w, err := v1.Users.List(ctx, nil)
		if err != nil || len(w) != 1 || w[0].ID != owner.ID {
			t.Fatalf("users through /v1: %+v, %v", w, err)
		}
		covered(t, "Users.Get")
		if _, err := c.Users().Get(ctx, "usr_doesnotexist"); !tailscale.IsNotFound(err) {
			t.Fatalf("Get of an unknown user: %v", err)
		}
	})
}

func TestTailnetSettings(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		s, err := c.TailnetSettings().Get(ctx)
		if err != nil || s.DevicesApprovalOn || s.DevicesKeyDurationDays != 180 {
			t.Fatalf("Get: %+v, %v", s, err)
		}
		covered(t, "TailnetSettings.Get")
		err = c.TailnetSettings().Update(ctx, tailscale.UpdateTailnetSettingsRequest{
			DevicesApprovalOn: tailscale.PointerTo(true), DevicesKeyDurationDays: tailscale.PointerTo(30),
		})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := c.TailnetSettings().Get(ctx); err != nil || !s.DevicesApprovalOn || s.DevicesKeyDurationDays != 30 {
			t.Fatalf("after Update: %+v, %v", s, err)
		}
		n, err := v1.Network.Get(ctx)
		if err != nil || !n.DeviceApproval || n.NodeKeyExpiry != "30d" {
			t.Fatalf("settings through /v1: %+v, %v", n, err)
		}
		// A setting Warren does not have is refused, not accepted and ignored.
		if err := c.TailnetSettings().Update(ctx, tailscale.UpdateTailnetSettingsRequest{HTTPSEnabled: tailscale.PointerTo(true)}); err == nil {
			t.Fatal("httpsEnabled was accepted")
		}
		err = c.TailnetSettings().Update(ctx, tailscale.UpdateTailnetSettingsRequest{
			DevicesApprovalOn: tailscale.PointerTo(false), DevicesKeyDurationDays: tailscale.PointerTo(180),
		})
		if err != nil {
			t.Fatal(err)
		}
		covered(t, "TailnetSettings.Update")
	})
}
