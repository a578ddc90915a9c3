package warren_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

// queryCalls sets every option of each operation that takes query parameters; a call may be
// made several times when options exclude each other (a cursor replaces since).
var queryCalls = map[string]func(ctx context.Context, c *warren.Client, n *warren.NodeClient){
	"listDevices": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		online := true
		filters := warren.DeviceListOptions{User: "u", Tags: []string{"tag:a", "tag:b"}, Online: &online, Fields: "all"}
		c.Devices.List(ctx, &filters)
		c.Devices.Page(ctx, &warren.DevicePageOptions{DeviceListOptions: filters, Q: "web", Limit: 5, Cursor: "c"})
	},
	"listUsers": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		c.Users.List(ctx, &warren.UserListOptions{Role: warren.RoleAdmin})
	},
	"listKeys": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		c.Keys.List(ctx, &warren.KeyListOptions{Type: warren.KeyTypeAPI, State: warren.KeyStateValid})
	},
	"listRoutes": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		c.Routes.List(ctx, &warren.RouteListOptions{State: warren.RouteStatePending, Device: "d"})
	},
	"listConnectionLog": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		c.Logs.ConnectionsPage(ctx, &warren.ConnectionLogOptions{PageOptions: warren.PageOptions{Since: "1h", Limit: 5}, Device: "d"})
		c.Logs.ConnectionsPage(ctx, &warren.ConnectionLogOptions{PageOptions: warren.PageOptions{Cursor: "c"}})
	},
	"listAuditLog": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		changes := true
		c.Logs.AuditPage(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Since: "1h", Limit: 5}, Key: "k", Changes: &changes})
		c.Logs.AuditPage(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Cursor: "c"}})
	},
	"listEvents": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		c.Events.Page(ctx, &warren.EventOptions{PageOptions: warren.PageOptions{Since: "1h", Limit: 5}, Types: []string{"device.*"}})
		c.Events.Page(ctx, &warren.EventOptions{PageOptions: warren.PageOptions{Cursor: "c"}})
	},
	"getNetmap": func(ctx context.Context, _ *warren.Client, n *warren.NodeClient) {
		n.FollowNetmap(ctx, &warren.Netmap{Version: 1})
	},
	"listWebhookDeliveries": func(ctx context.Context, c *warren.Client, _ *warren.NodeClient) {
		c.Webhooks.DeliveriesPage(ctx, "whk_1", &warren.DeliveryListOptions{PageOptions: warren.PageOptions{Cursor: "c", Limit: 5}, State: warren.DeliveryStateFailed})
	},
}

// TestEveryQueryParameterCanBeSent sets every option and compares the query parameters that
// reach the server with the operation's parameters in docs/openapi.json.
func TestEveryQueryParameterCanBeSent(t *testing.T) {
	var mu sync.Mutex
	var sent map[string]bool
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for name := range r.URL.Query() {
			sent[name] = true
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer server.Close()
	c, err := warren.NewClient(warren.WithBaseURL(server.URL), warren.WithAPIKey("wrn_api_test"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := warren.NewNodeClient(warren.WithBaseURL(server.URL), warren.WithNodeToken("wrn_node_test"))
	if err != nil {
		t.Fatal(err)
	}
	for path, methods := range readOpenAPI(t).Paths {
		for method, op := range methods {
			var want []string
			for _, p := range op.Parameters {
				if p.In == "query" {
					want = append(want, p.Name)
				}
			}
			if len(want) == 0 {
				continue
			}
			call, ok := queryCalls[op.OperationID]
			if !ok {
				t.Errorf("%s %s (%s) takes %v: no call sets them here", method, path, op.OperationID, want)
				continue
			}
			sent = map[string]bool{}
			call(context.Background(), c, n)
			var missing []string
			for _, name := range want {
				if !sent[name] {
					missing = append(missing, name)
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("%s: the client cannot send %v", op.OperationID, missing)
			}
		}
	}
}
