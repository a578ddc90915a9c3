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
	for e, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		if e.ID == "" {
			t.Fatal("an entry without an id")
		}
		got++
	}
	if got < n || n < 3 {
		t.Fatalf("All yielded %d entries, Next %d", got, n)
	}
	it = c.Logs.Audit(ctx, opts)
	for range it.All() {
		break
	}
	if !it.Next() {
		t.Error("breaking out of All ended the iterator")
	}
}

// The error that ends an iteration comes out of the loop itself, once, after the entries.
func TestIteratorAllYieldsTheError(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	it := c.Logs.Audit(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Cursor: "not-a-cursor"}})
	var errs []error
	for e, err := range it.All() {
		if err == nil {
			t.Fatalf("an entry %+v from a refused call", e)
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 || warren.ErrorCode(errs[0]) != warren.CodeInvalidRequest || it.Err() != errs[0] {
		t.Fatalf("All yielded %v, Err is %v; want one invalid_request", errs, it.Err())
	}
}
