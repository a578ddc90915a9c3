package warren_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// newClient is a client of the test server with the network's all-scope key.
func newClient(t *testing.T, opts ...warren.Option) *warren.Client {
	t.Helper()
	c, err := warren.NewClient(append([]warren.Option{warren.WithBaseURL(serverURL), warren.WithAPIKey(adminKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// nodeKey is a fresh device public key in the protocol's form.
func nodeKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "nodekey:" + hex.EncodeToString(b)
}

// enroll registers a new device with a fresh auth key and returns its node client.
func enroll(t *testing.T, c *warren.Client, hostname string, key *warren.CreateKeyRequest, routes ...string) (*warren.NodeClient, *warren.Registration) {
	t.Helper()
	ctx := testContext(t)
	if key == nil {
		key = &warren.CreateKeyRequest{}
	}
	k, err := c.Keys.Create(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	node, err := warren.NewNodeClient(warren.WithBaseURL(serverURL))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := node.Register(ctx, k.Key, &warren.RegisterRequest{
		Hostname: hostname, OS: "linux", NodeKey: nodeKey(t), ClientVersion: "1.2.3", AdvertiseRoutes: routes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return node, reg
}

// wantError asserts err is a *warren.Error with that status and code, and returns it.
func wantError(t *testing.T, err error, status int, code string) *warren.Error {
	t.Helper()
	var e *warren.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *warren.Error %d %s, got %v", status, code, err)
	}
	if e.StatusCode != status || e.Code != code {
		t.Fatalf("want %d %s, got %d %s (%s)", status, code, e.StatusCode, e.Code, e.Detail)
	}
	if e.RequestID == "" {
		t.Errorf("error without a request id: %v", e)
	}
	return e
}

// recordingTransport carries requests to the server as usual, counting them and keeping the
// headers of the last one.
type recordingTransport struct {
	n    atomic.Int32
	mu   sync.Mutex
	last http.Header
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	r.mu.Lock()
	r.last = req.Header.Clone()
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recordingTransport) lastHeader() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}
