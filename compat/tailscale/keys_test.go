package compat_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
	tailscale "tailscale.com/client/tailscale/v2"
)

func TestKeys(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		var req tailscale.CreateKeyRequest
		req.Capabilities.Devices.Create.Reusable = true
		req.Capabilities.Devices.Create.Preauthorized = true
		req.Capabilities.Devices.Create.Tags = []string{"tag:ci"}
		req.ExpirySeconds = 3600
		req.Description = "compat runners"
		key, err := c.Keys().CreateAuthKey(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if key.Key == "" || key.KeyType != "auth" || !key.Capabilities.Devices.Create.Preauthorized ||
			key.Expires.Sub(key.Created) != time.Hour || key.Description != "compat runners" {
			t.Fatalf("CreateAuthKey: %+v", key)
		}
		covered("Keys.CreateAuthKey")
		if w, err := v1.Keys.Get(ctx, key.ID); err != nil || !w.Reusable || !w.PreApproved || !reflect.DeepEqual(w.Tags, []string{"tag:ci"}) {
			t.Fatalf("the key through /v1: %+v, %v", w, err)
		}
		// The key enrolls: with approval on, its devices skip it (preauthorized).
		if _, err := v1.Network.Update(ctx, warren.NetworkUpdate{DeviceApproval: tailscale.PointerTo(true)}); err != nil {
			t.Fatal(err)
		}
		runner, err := enroll(ctx, key.Key, "runner", nil)
		if _, uerr := v1.Network.Update(ctx, warren.NetworkUpdate{DeviceApproval: tailscale.PointerTo(false)}); uerr != nil {
			t.Fatal(uerr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, seen := peers(t, "web")["runner"]; !seen {
			t.Fatal("a device of a preauthorized key is not in web's netmap")
		}

		got, err := c.Keys().Get(ctx, key.ID)
		if err != nil || got.ID != key.ID || got.Key != "" || got.Invalid {
			t.Fatalf("Get: %+v, %v", got, err)
		}
		covered("Keys.Get")
		if listed, err := c.Keys().List(ctx, false); err != nil || !hasKey(listed, key.ID) {
			t.Fatalf("List: %v", err)
		}
		if err := c.Keys().Delete(ctx, key.ID); err != nil {
			t.Fatal(err)
		}
		covered("Keys.Delete")
		if w, err := v1.Keys.Get(ctx, key.ID); err != nil || w.State != "revoked" {
			t.Fatalf("the deleted key through /v1: %+v, %v", w, err)
		}
		active, err := c.Keys().List(ctx, false)
		if err != nil || hasKey(active, key.ID) {
			t.Fatalf("List after Delete still shows the key: %v", err)
		}
		all, err := c.Keys().List(ctx, true)
		if err != nil || !hasKey(all, key.ID) {
			t.Fatalf("List(all) lacks the deleted key: %v", err)
		}
		covered("Keys.List")
		if _, err := c.Keys().Get(ctx, "key_doesnotexist"); !tailscale.IsNotFound(err) {
			t.Fatalf("Get of an unknown key: %v", err)
		}
		if err := c.Devices().Delete(ctx, runner.id); err != nil {
			t.Fatal(err)
		}

		// Create with the default key type is an auth key too.
		plain, err := c.Keys().Create(ctx, tailscale.CreateKeyRequest{Description: "plain"})
		if err != nil || plain.KeyType != "auth" || plain.Capabilities.Devices.Create.Reusable {
			t.Fatalf("Create: %+v, %v", plain, err)
		}
		covered("Keys.Create")
		if err := c.Keys().Delete(ctx, plain.ID); err != nil {
			t.Fatal(err)
		}
		// A longer life than the key that asks is refused, as on /v1.
		var long tailscale.CreateKeyRequest
		long.ExpirySeconds = 400 * 24 * 3600
		var apiErr tailscale.APIError
		if _, err := c.Keys().CreateAuthKey(ctx, long); !errors.As(err, &apiErr) || apiErr.Status != 400 {
			t.Fatalf("a key past 365 days: %v", err)
		}
	})
}

func hasKey(keys []tailscale.Key, id string) bool {
	for _, k := range keys {
		if k.ID == id {
			return true
		}
	}
	return false
}
