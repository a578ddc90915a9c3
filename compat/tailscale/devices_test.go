package compat_test

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
	tailscale "tailscale.com/client/tailscale/v2"
)

func TestDevicesListAndGet(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		devices, err := c.Devices().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]tailscale.Device{}
		for _, d := range devices {
			byName[d.Hostname] = d
		}
		for name, d := range fleet {
			got, ok := byName[name]
			if !ok || got.ID != d.id || got.NodeID != d.id || len(got.Addresses) != 2 || !got.Authorized {
				t.Fatalf("List: %s is %+v", name, got)
			}
			if got.Tags == nil || got.ClientVersion != "1.2.3" || got.OS != "linux" || !got.ConnectedToControl {
				t.Fatalf("List: %s lacks fields: %+v", name, got)
			}
		}
		covered(t, "Devices.List")

		all, err := c.Devices().ListWithAllFields(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range all {
			if d.Hostname == "gw" && !reflect.DeepEqual(d.AdvertisedRoutes, []string{"10.1.0.0/24", "10.2.0.0/24"}) {
				t.Fatalf("ListWithAllFields: gw advertises %v", d.AdvertisedRoutes)
			}
			if d.ClientConnectivity == nil || d.EnabledRoutes == nil {
				t.Fatalf("ListWithAllFields: %s lacks the detail fields", d.Hostname)
			}
		}
		covered(t, "Devices.ListWithAllFields")

		// Filters are applied, not ignored.
		for _, f := range []struct {
			key, value string
			want       []string
		}{
			{"hostname", "web", []string{"web"}},
			{"os", "windows", nil},
			{"isEphemeral", "false", []string{"gw", "laptop", "web"}},
		} {
			got, err := c.Devices().List(ctx, tailscale.WithFilter(f.key, []string{f.value}))
			if err != nil {
				t.Fatal(err)
			}
			if names := hostnames(got); !reflect.DeepEqual(names, f.want) {
				t.Fatalf("filter %s=%s: %v, want %v", f.key, f.value, names, f.want)
			}
		}

		one, err := c.Devices().Get(ctx, fleet["gw"].id)
		if err != nil || one.Hostname != "gw" || one.AdvertisedRoutes != nil {
			t.Fatalf("Get: %+v, %v", one, err)
		}
		covered(t, "Devices.Get")
		full, err := c.Devices().GetWithAllFields(ctx, fleet["gw"].id)
		if err != nil || len(full.AdvertisedRoutes) != 2 {
			t.Fatalf("GetWithAllFields: %+v, %v", full, err)
		}
		covered(t, "Devices.GetWithAllFields")

		_, err = c.Devices().Get(ctx, "dev_doesnotexist")
		var apiErr tailscale.APIError
		if !tailscale.IsNotFound(err) || !errors.As(err, &apiErr) || apiErr.Message == "" {
			t.Fatalf("Get of an unknown device: %v", err)
		}
		// An id over the router's limit is refused before any route, in the same error body.
		_, err = c.Devices().Get(ctx, strings.Repeat("x", 300))
		if !errors.As(err, &apiErr) || apiErr.Status != 414 || apiErr.Message == "" {
			t.Fatalf("Get with an id over the limit: %v", err)
		}
	})
}

func hostnames(devices []tailscale.Device) []string {
	var out []string
	for _, d := range devices {
		out = append(out, d.Hostname)
	}
	sort.Strings(out)
	return out
}

func TestDevicesTags(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		web := fleet["web"].id
		if err := c.Devices().SetTags(ctx, web, []string{"tag:server"}); err != nil {
			t.Fatal(err)
		}
		got, err := c.Devices().Get(ctx, web)
		if err != nil || !reflect.DeepEqual(got.Tags, []string{"tag:server"}) {
			t.Fatalf("tags through the client: %+v, %v", got, err)
		}
		if d, err := v1.Devices.Get(ctx, web); err != nil || !reflect.DeepEqual(d.Tags, []string{"tag:server"}) {
			t.Fatalf("tags through /v1: %+v, %v", d, err)
		}
		if p := peers(t, "laptop")["web"]; !reflect.DeepEqual(p.Tags, []string{"tag:server"}) {
			t.Fatalf("tags in laptop's netmap: %+v", p)
		}
		// Go's nil list arrives as null: no tags.
		if err := c.Devices().SetTags(ctx, web, nil); err != nil {
			t.Fatal(err)
		}
		if p := peers(t, "laptop")["web"]; len(p.Tags) != 0 {
			t.Fatalf("tags in laptop's netmap after clearing: %+v", p)
		}
		err = c.Devices().SetTags(ctx, web, []string{"tag:unowned"})
		var apiErr tailscale.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 400 {
			t.Fatalf("an unowned tag: %v", err)
		}
		covered(t, "Devices.SetTags")
	})
}

func TestDevicesAuthorization(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		laptop := fleet["laptop"].id
		if err := c.Devices().SetAuthorized(ctx, laptop, false); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Devices().Get(ctx, laptop); err != nil || got.Authorized {
			t.Fatalf("de-authorized through the client: %+v, %v", got, err)
		}
		if d, err := v1.Devices.Get(ctx, laptop); err != nil || d.Authorized {
			t.Fatalf("de-authorized through /v1: %+v, %v", d, err)
		}
		if _, seen := peers(t, "web")["laptop"]; seen || len(peers(t, "laptop")) != 0 {
			t.Fatal("a de-authorized device is still in netmaps")
		}
		if err := c.Devices().SetAuthorized(ctx, laptop, true); err != nil {
			t.Fatal(err)
		}
		if _, seen := peers(t, "web")["laptop"]; !seen {
			t.Fatal("an authorized device is missing from web's netmap")
		}
		// Authorizing an authorized device changes nothing and is no error.
		if err := c.Devices().SetAuthorized(ctx, laptop, true); err != nil {
			t.Fatal(err)
		}
		covered(t, "Devices.SetAuthorized")
	})
}

func TestDevicesKeyExpiry(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		web := fleet["web"].id
		for _, disabled := range []bool{true, false} {
			if err := c.Devices().SetKey(ctx, web, tailscale.DeviceKey{KeyExpiryDisabled: disabled}); err != nil {
				t.Fatal(err)
			}
			got, err := c.Devices().Get(ctx, web)
			if err != nil || got.KeyExpiryDisabled != disabled || got.Expires.IsZero() == !disabled {
				t.Fatalf("SetKey(%v) through the client: %+v, %v", disabled, got, err)
			}
			if d, err := v1.Devices.Get(ctx, web); err != nil || d.KeyExpiryDisabled != disabled {
				t.Fatalf("SetKey(%v) through /v1: %+v, %v", disabled, d, err)
			}
		}
		covered(t, "Devices.SetKey")
	})
}

func TestDevicesName(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		id := fleet["laptop"].id
		if err := c.Devices().SetName(ctx, id, "Desk"); err != nil {
			t.Fatal(err)
		}
		if d, err := c.Devices().Get(ctx, id); err != nil || d.Name != "desk" || d.Hostname != "laptop" {
			t.Fatalf("Get after SetName: %+v, %v", d, err)
		}
		w, err := v1.Devices.Get(ctx, id)
		if err != nil || w.Name != "desk" || !strings.HasPrefix(w.DNSName, "desk.") {
			t.Fatalf("the renamed device through /v1: %+v, %v", w, err)
		}
		if seen := peers(t, "web"); seen["desk"].Name == "" || seen["laptop"].Name != "" {
			t.Fatalf("web's netmap does not know the new name: %v", seen)
		}
		// Its MagicDNS name works too; a taken name is 409, a name that is no DNS label 400.
		domain := strings.TrimPrefix(w.DNSName, "desk.")
		if err := c.Devices().SetName(ctx, id, "desk-2."+domain); err != nil {
			t.Fatal(err)
		}
		if w, err := v1.Devices.Get(ctx, id); err != nil || w.Name != "desk-2" {
			t.Fatalf("SetName with the MagicDNS domain: %+v, %v", w, err)
		}
		if err := c.Devices().SetName(ctx, id, "web"); !isStatus(err, 409) {
			t.Fatalf("SetName to a taken name: %v", err)
		}
		if err := c.Devices().SetName(ctx, id, "not a name"); !isStatus(err, 400) {
			t.Fatalf("SetName to an invalid name: %v", err)
		}
		// An empty name gives the device back its hostname's.
		if err := c.Devices().SetName(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
		if _, back := peers(t, "web")["laptop"]; !back {
			t.Fatal("the reset name is not in web's netmap")
		}
		covered(t, "Devices.SetName")
	})
}

func TestDevicesRoutes(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		gw := fleet["gw"].id
		// The approved set exactly, a prefix gw does not advertise included.
		if err := c.Devices().SetSubnetRoutes(ctx, gw, []string{"10.9.0.0/24", "10.1.0.0/24"}); err != nil {
			t.Fatal(err)
		}
		routes, err := c.Devices().SubnetRoutes(ctx, gw)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(routes.Advertised, []string{"10.1.0.0/24", "10.2.0.0/24"}) ||
			!reflect.DeepEqual(routes.Enabled, []string{"10.1.0.0/24", "10.9.0.0/24"}) {
			t.Fatalf("SubnetRoutes: %+v", routes)
		}
		states := map[string]warren.RouteState{}
		list, err := v1.Routes.List(ctx, &warren.RouteListOptions{Device: gw})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			states[r.Prefix] = r.State
		}
		if states["10.1.0.0/24"] != "approved" || states["10.9.0.0/24"] != "approved" || states["10.2.0.0/24"] != "pending" {
			t.Fatalf("routes through /v1: %v", states)
		}
		// Only approved, advertised routes reach peers.
		if got := peers(t, "web")["gw"].AllowedIPs; !contains(got, "10.1.0.0/24") || contains(got, "10.9.0.0/24") || contains(got, "10.2.0.0/24") {
			t.Fatalf("gw's allowedIPs in web's netmap: %v", got)
		}
		if err := c.Devices().SetSubnetRoutes(ctx, gw, nil); err != nil {
			t.Fatal(err)
		}
		if got := peers(t, "web")["gw"].AllowedIPs; contains(got, "10.1.0.0/24") {
			t.Fatalf("gw's allowedIPs after clearing its routes: %v", got)
		}
		covered(t, "Devices.SetSubnetRoutes")
		covered(t, "Devices.SubnetRoutes")
	})
}

func contains(list []string, want string) bool {
	for _, v := range list {
		if v == want {
			return true
		}
	}
	return false
}

func TestDevicesDelete(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		auth, err := v1.Keys.Create(ctx, &warren.CreateKeyRequest{Description: "to delete"})
		if err != nil {
			t.Fatal(err)
		}
		gone, err := enroll(ctx, auth.Key, "gone", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, seen := peers(t, "web")["gone"]; !seen {
			t.Fatal("the new device is not in web's netmap")
		}
		if err := c.Devices().Delete(ctx, gone.id); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Devices().Get(ctx, gone.id); !tailscale.IsNotFound(err) {
			t.Fatalf("Get after Delete: %v", err)
		}
		var v1Err *warren.Error
		if _, err := v1.Devices.Get(ctx, gone.id); !errors.As(err, &v1Err) || v1Err.StatusCode != 404 {
			t.Fatalf("/v1 after Delete: %v", err)
		}
		if _, seen := peers(t, "web")["gone"]; seen {
			t.Fatal("a deleted device is still in web's netmap")
		}
		covered(t, "Devices.Delete")
	})
}
