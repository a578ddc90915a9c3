package warren_test

import (
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestRoutes(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	_, reg := enroll(t, c, "gw-go", nil, "10.77.0.0/24")

	pending, err := c.Routes.List(ctx, &warren.RouteListOptions{State: warren.RouteStatePending, Device: reg.Device.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Prefix != "10.77.0.0/24" || pending[0].DeviceName != "gw-go" || !pending[0].Advertised || pending[0].ApprovedAt != nil {
		t.Fatalf("pending routes %+v", pending)
	}
	id := pending[0].ID

	r, err := c.Routes.Approve(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != warren.RouteStateApproved || r.ApprovedAt == nil || r.ApprovedBy == nil {
		t.Errorf("approved %+v", r)
	}
	_, err = c.Routes.Approve(ctx, id)
	wantError(t, err, 409, warren.CodeInvalidState)

	r, err = c.Routes.Disable(ctx, id)
	if err != nil || r.State != warren.RouteStateDisabled {
		t.Fatalf("disable: %+v, %v", r, err)
	}
	_, err = c.Routes.Disable(ctx, id)
	wantError(t, err, 409, warren.CodeInvalidState)

	all, err := c.Routes.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range all {
		found = found || (x.ID == id && x.State == warren.RouteStateDisabled)
	}
	if !found {
		t.Errorf("disabled route missing from %+v", all)
	}

	_, err = c.Routes.Approve(ctx, "rt_doesnotexist")
	wantError(t, err, 404, warren.CodeNotFound)
	_, err = c.Routes.Disable(ctx, "rt_doesnotexist")
	wantError(t, err, 404, warren.CodeNotFound)
}

func TestExitNode(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	_, reg := enroll(t, c, "exit-go", nil, "0.0.0.0/0", "::/0")

	routes, err := c.Routes.List(ctx, &warren.RouteListOptions{Device: reg.Device.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 2 {
		t.Fatalf("routes %+v", routes)
	}
	for _, r := range routes {
		if !r.ExitNode {
			t.Errorf("default route %s not marked as an exit-node route", r.Prefix)
		}
		if _, err := c.Routes.Approve(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	d, err := c.Devices.Get(ctx, reg.Device.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.ExitNode == nil || !*d.ExitNode {
		t.Errorf("device with both default routes approved: ExitNode %v", d.ExitNode)
	}
}
