package warren_test

import (
	"strings"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// requireDeviceApproval turns the network's device approval on for one test.
func requireDeviceApproval(t *testing.T, c *warren.Client) {
	t.Helper()
	on, off := true, false
	n, err := c.Network.Update(testContext(t), warren.NetworkUpdate{DeviceApproval: &on})
	if err != nil {
		t.Fatal(err)
	}
	if !n.DeviceApproval {
		t.Fatalf("deviceApproval still off after the update: %+v", n)
	}
	t.Cleanup(func() {
		if _, err := c.Network.Update(testContext(t), warren.NetworkUpdate{DeviceApproval: &off}); err != nil {
			t.Error(err)
		}
	})
}

func TestDeviceApproval(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	requireDeviceApproval(t, c)

	_, reg := enroll(t, c, "pending-go", nil)
	d, err := c.Devices.Get(ctx, reg.Device.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Authorized {
		t.Fatalf("a device enrolled while approval is on is authorized: %+v", d)
	}
	if d.Protocol != warren.ProtocolNative || !strings.HasPrefix(d.DNSName, "pending-go.") {
		t.Errorf("protocol %q, dnsName %q", d.Protocol, d.DNSName)
	}

	approved, err := c.Devices.Approve(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !approved.Authorized {
		t.Errorf("approved device %+v", approved)
	}
	_, err = c.Devices.Approve(ctx, d.ID)
	wantError(t, err, 409, warren.CodeInvalidState)

	_, pre := enroll(t, c, "preapproved-go", &warren.CreateKeyRequest{PreApproved: true, Tags: []string{"tag:ci"}})
	if !pre.Device.Authorized {
		t.Errorf("a device enrolled with a pre-approved key waits for approval: %+v", pre.Device)
	}
}

func TestDeviceKeyExpiry(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	_, reg := enroll(t, c, "expiring-go", nil)
	if reg.Device.KeyExpiry == nil || reg.Device.KeyExpiry.Before(time.Now()) {
		t.Fatalf("a new device's login should expire in the future: %+v", reg.Device.KeyExpiry)
	}

	expired, err := c.Devices.Expire(ctx, reg.Device.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !expired.KeyExpired {
		t.Errorf("expired device %+v", expired)
	}

	disabled := true
	d, err := c.Devices.Update(ctx, reg.Device.ID, warren.DeviceUpdate{KeyExpiryDisabled: &disabled})
	if err != nil {
		t.Fatal(err)
	}
	if !d.KeyExpiryDisabled || d.KeyExpired || d.KeyExpiry != nil {
		t.Errorf("keyExpiryDisabled should lift the expiry: %+v", d)
	}
}
