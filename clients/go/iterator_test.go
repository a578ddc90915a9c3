//go:build go1.23

package warren_test

import (
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestIteratorAll(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	opts := &warren.AuditLogOptions{PageOptions: warren.PageOptions{Since: "1h", Limit: 2}}
	want, n := c.Logs.Audit(ctx, opts), 0
	for want.Next() {
		n++
	}
	it := c.Logs.Audit(ctx, opts)
	got := 0
	for range it.All() {
		got++
	}
	if err := it.Err(); err != nil || got < n || n < 3 {
		t.Fatalf("All yielded %d entries, Next %d (%v)", got, n, err)
	}
	it = c.Logs.Audit(ctx, opts)
	for range it.All() {
		break
	}
	if !it.Next() {
		t.Error("breaking out of All ended the iterator")
	}
}
