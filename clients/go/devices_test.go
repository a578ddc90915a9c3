package warren_test

import (
	"slices"
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestDevices(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	node, reg := enroll(t, c, "web-go", &warren.CreateKeyRequest{Tags: []string{"tag:ci"}})
	id := reg.Device.ID

	t.Run("list filters", func(t *testing.T) {
		ci, err := c.Devices.List(ctx, &warren.DeviceListOptions{Tags: []string{"tag:ci"}, Online: warren.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if !hasDevice(ci, id) {
			t.Fatalf("%s not among the online tag:ci devices %v", id, ci)
		}
		if ci[0].Addresses != nil {
			t.Errorf("default fields carry addresses: %+v", ci[0])
		}
		offline, err := c.Devices.List(ctx, &warren.DeviceListOptions{Tags: []string{"tag:ci"}, Online: warren.Bool(false)})
		if err != nil {
			t.Fatal(err)
		}
		if hasDevice(offline, id) {
			t.Errorf("an online device is listed as offline")
		}
		all, err := c.Devices.List(ctx, &warren.DeviceListOptions{User: "admin@example.com", Fields: "all"})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(all, func(d warren.Device) bool { return d.ID == id })
		if i < 0 || len(all[i].Addresses) != 2 || all[i].KeyID == nil {
			t.Fatalf("fields=all by user: %+v", all)
		}
		none, err := c.Devices.List(ctx, &warren.DeviceListOptions{Tags: []string{"tag:ci", "tag:server"}})
		if err != nil {
			t.Fatal(err)
		}
		if hasDevice(none, id) {
			t.Errorf("tags combine with AND, yet a tag:ci device matched tag:ci and tag:server")
		}
	})

	t.Run("get", func(t *testing.T) {
		d, err := c.Devices.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != "web-go" || d.OS != "linux" || !d.Online || d.User == nil || d.User.LoginName != "admin@example.com" {
			t.Errorf("device %+v", d)
		}
		if len(d.Addresses) != 2 || d.ClientVersion == nil || *d.ClientVersion != "1.2.3" || d.Ephemeral == nil || *d.Ephemeral {
			t.Errorf("detail fields %+v", d)
		}
		if d.Created.IsZero() || d.LastSeen == nil {
			t.Errorf("times %+v", d)
		}
	})

	t.Run("pages", func(t *testing.T) {
		all, err := c.Devices.List(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		// One device a page: every device once, in name order, and the last page says so.
		var seen []string
		opts := &warren.DevicePageOptions{Limit: 1}
		for {
			page, err := c.Devices.Page(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != len(all) || len(page.Devices) > 1 {
				t.Fatalf("page %+v of %d devices", page, len(all))
			}
			for _, d := range page.Devices {
				seen = append(seen, d.Name)
			}
			if !page.HasMore {
				break
			}
			if page.NextCursor == nil || len(seen) > len(all) {
				t.Fatalf("more pages than devices: %v, next %v", seen, page.NextCursor)
			}
			opts.Cursor = *page.NextCursor
		}
		if len(seen) != len(all) || !slices.IsSorted(seen) {
			t.Errorf("pages gave %v; the list has %d devices", seen, len(all))
		}
		found, err := c.Devices.Page(ctx, &warren.DevicePageOptions{Q: "web-g"})
		if err != nil {
			t.Fatal(err)
		}
		if !hasDevice(found.Devices, id) || found.Total != len(found.Devices) {
			t.Errorf("search web-g: %+v", found)
		}
	})

	t.Run("set tags", func(t *testing.T) {
		d, err := c.Devices.SetTags(ctx, id, []string{"tag:server", "tag:linux"})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(d.Tags)
		if !slices.Equal(d.Tags, []string{"tag:linux", "tag:server"}) || d.Addresses == nil {
			t.Errorf("after SetTags: %+v", d)
		}
		_, err = c.Devices.SetTags(ctx, id, []string{"tag:undefined"})
		wantError(t, err, 400, warren.CodeInvalidTag)
		d, err = c.Devices.SetTags(ctx, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Tags) != 0 {
			t.Errorf("nil tags did not clear: %v", d.Tags)
		}
	})

	t.Run("unknown id", func(t *testing.T) {
		_, err := c.Devices.Get(ctx, "dev_doesnotexist")
		wantError(t, err, 404, warren.CodeNotFound)
		if !warren.IsNotFound(err) || warren.ErrorCode(err) != warren.CodeNotFound {
			t.Errorf("helpers disagree on %v", err)
		}
		wantError(t, c.Devices.Delete(ctx, "dev_doesnotexist"), 404, warren.CodeNotFound)
		_, err = c.Devices.SetTags(ctx, "dev_doesnotexist", []string{})
		wantError(t, err, 404, warren.CodeNotFound)
	})

	t.Run("delete", func(t *testing.T) {
		if err := c.Devices.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		_, err := c.Devices.Get(ctx, id)
		wantError(t, err, 404, warren.CodeNotFound)
		_, err = node.Heartbeat(ctx, nil)
		wantError(t, err, 401, warren.CodeUnauthenticated)
	})
}

func hasDevice(devices []warren.Device, id string) bool {
	return slices.ContainsFunc(devices, func(d warren.Device) bool { return d.ID == id })
}
