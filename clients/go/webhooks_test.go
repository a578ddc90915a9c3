package warren_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// An endpoint's deliveries are a paged list like the logs: an iterator across pages, a single
// page, and a state filter, all against deliveries the server really made.
func TestWebhookDeliveries(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	var received atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	hook, err := c.Webhooks.Create(ctx, &warren.CreateWebhookRequest{URL: receiver.URL + "/hook", Events: []string{"webhook.test"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Webhooks.Delete(ctx, hook.ID) })
	const sent = 3
	for i := 0; i < sent; i++ {
		if err := c.Webhooks.Test(ctx, hook.ID); err != nil {
			t.Fatal(err)
		}
	}
	delivered := &warren.DeliveryListOptions{State: warren.DeliveryStateDelivered, PageOptions: warren.PageOptions{Limit: 1000}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		page, err := c.Webhooks.DeliveriesPage(ctx, hook.ID, delivered)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) == sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries made within 30 s (the receiver saw %d)", len(page.Entries), sent, received.Load())
		}
	}

	// Pages of one walk every delivery, oldest first, none twice.
	var ids []string
	for d, err := range c.Webhooks.Deliveries(ctx, hook.ID, &warren.DeliveryListOptions{PageOptions: warren.PageOptions{Limit: 1}}).All() {
		if err != nil {
			t.Fatal(err)
		}
		if d.Type != "webhook.test" || d.State != warren.DeliveryStateDelivered || d.Attempts < 1 {
			t.Errorf("delivery %+v", d)
		}
		ids = append(ids, d.ID)
	}
	distinct := slices.Clone(ids)
	slices.Sort(distinct)
	if len(ids) != sent || len(slices.Compact(distinct)) != sent {
		t.Fatalf("the iterator walked %v, want %d distinct deliveries", ids, sent)
	}
	failed := c.Webhooks.Deliveries(ctx, hook.ID, &warren.DeliveryListOptions{State: warren.DeliveryStateFailed})
	for d, err := range failed.All() {
		t.Fatalf("a failed delivery %+v (%v), want none", d, err)
	}

	// A missing endpoint's 404 comes out of the loop.
	var errs []error
	for _, err := range c.Webhooks.Deliveries(ctx, "whk_doesnotexist", nil).All() {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !warren.IsNotFound(errs[0]) {
		t.Fatalf("want one not_found, got %v", errs)
	}
}
