package warren_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestAuditLogPages(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	for i := 0; i < 5; i++ {
		if _, err := c.Network.Get(ctx); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := c.Logs.AuditPage(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Since: "1h", Limit: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if whole.HasMore || whole.NextCursor == "" || len(whole.Entries) < 5 {
		t.Fatalf("one big page: %d entries, hasMore %v, cursor %q", len(whole.Entries), whole.HasMore, whole.NextCursor)
	}

	// Pages of three walk the same entries, in order, none twice.
	it := c.Logs.Audit(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Since: "1h", Limit: 3}})
	// (Recording order: a read's entry is written in a batch and may follow a later change's.)
	var ids []string
	seenIDs := map[string]bool{}
	for it.Next() {
		e := it.Entry()
		if seenIDs[e.ID] {
			t.Errorf("%s came twice", e.ID)
		}
		seenIDs[e.ID] = true
		ids = append(ids, e.ID)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) < len(whole.Entries) {
		t.Fatalf("the iterator saw %d entries, one page held %d", len(ids), len(whole.Entries))
	}
	for i, e := range whole.Entries {
		if ids[i] != e.ID {
			t.Fatalf("entry %d: iterator %s, page %s", i, ids[i], e.ID)
		}
	}

	// The cursor continues right after what was read: only later calls come back.
	cursor := it.Cursor()
	if _, err := c.Devices.Get(ctx, "dev_auditmarker"); !warren.IsNotFound(err) {
		t.Fatalf("marker call: %v", err)
	}
	later := c.Logs.Audit(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Cursor: cursor}})
	marker := false
	for later.Next() {
		e := later.Entry()
		if seenIDs[e.ID] {
			t.Errorf("%s came back after its cursor", e.ID)
		}
		marker = marker || (e.Path == "/v1/devices/dev_auditmarker" && e.Status == 404)
	}
	if err := later.Err(); err != nil || !marker {
		t.Errorf("continuing from the cursor: marker seen %v, err %v", marker, err)
	}

	_, err = c.Logs.AuditPage(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Since: "1 hour"}})
	wantError(t, err, 400, warren.CodeInvalidDuration)
	bad := c.Logs.Audit(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Limit: 5000}})
	if bad.Next() {
		t.Error("an iterator with a bad limit yielded an entry")
	}
	wantError(t, bad.Err(), 400, warren.CodeInvalidRequest)
}

func TestAuditLogKeyFilter(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	k, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{Type: warren.KeyTypeAPI, Name: "audited", Scopes: []warren.Scope{warren.ScopeRead}, ExpiresIn: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	audited := newClient(t, warren.WithAPIKey(k.Key))
	if _, err := audited.Users.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	it := c.Logs.Audit(ctx, &warren.AuditLogOptions{Key: k.ID})
	n := 0
	for it.Next() {
		e := it.Entry()
		if e.KeyID == nil || *e.KeyID != k.ID || e.KeyName == nil || *e.KeyName != "audited" {
			t.Errorf("entry of another key: %+v", e)
		}
		n++
	}
	if err := it.Err(); err != nil || n != 1 {
		t.Errorf("want the one call of the key, got %d (%v)", n, err)
	}
}

func TestConnectionLogFollow(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	node, reg := enroll(t, c, "tail-go", nil)
	report := func(port int) {
		t.Helper()
		now := time.Now().UTC()
		_, err := node.ReportConnections(ctx, []warren.ReportedConnection{{
			Start: now.Add(-time.Second), End: now, Proto: "udp",
			Src:     warren.ReportedEndpoint{Addr: reg.Device.Addresses[0] + ":40000"},
			Dst:     warren.ReportedEndpoint{Addr: "192.0.2.10:" + strconv.Itoa(port)},
			TxBytes: 1, RxBytes: 2, TxPackets: 1, RxPackets: 1,
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	report(53)

	page, err := c.Logs.ConnectionsPage(ctx, &warren.ConnectionLogOptions{Device: reg.Device.ID})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].ReportedBy != reg.Device.ID || page.Entries[0].Dst.DeviceID != nil {
		t.Fatalf("page %+v, %v", page, err)
	}

	tailCtx, stop := context.WithCancel(ctx)
	defer stop()
	it := c.Logs.Connections(tailCtx, &warren.ConnectionLogOptions{
		Device:      reg.Device.ID,
		PageOptions: warren.PageOptions{Since: "1h", Follow: true, PollInterval: 100 * time.Millisecond},
	})
	seen := make(chan warren.ConnectionEntry)
	done := make(chan error)
	go func() {
		for it.Next() {
			seen <- it.Entry()
		}
		done <- it.Err()
	}()

	first := <-seen
	if first.ID != page.Entries[0].ID {
		t.Fatalf("first entry %s, want %s", first.ID, page.Entries[0].ID)
	}
	report(8053) // arrives after the iterator has read everything
	select {
	case e := <-seen:
		if e.Dst.Addr != "192.0.2.10:8053" || e.Logged.Before(first.Logged) {
			t.Errorf("tailed entry %+v", e)
		}
	case err := <-done:
		t.Fatalf("the iterator stopped: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("a following iterator did not see an entry that arrived later")
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("cancelling a follow is no error, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the iterator did not stop when its context ended")
	}
	if it.Cursor() == "" {
		t.Error("no cursor to continue from")
	}
}
