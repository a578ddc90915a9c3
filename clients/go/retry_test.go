package warren_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// slowKey is a new API key allowed three requests a minute, already spent.
func slowKey(t *testing.T) string {
	t.Helper()
	ctx := testContext(t)
	k, err := newClient(t).Keys.Create(ctx, &warren.CreateKeyRequest{
		Type: warren.KeyTypeAPI, Name: "slow", Scopes: []warren.Scope{warren.ScopeRead, warren.ScopeACLs, warren.ScopeUsers}, ExpiresIn: "1h", RateLimit: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, warren.WithAPIKey(k.Key), warren.WithMaxRetries(0))
	for i := 0; i < 3; i++ {
		if _, err := c.Network.Get(ctx); err != nil {
			t.Fatalf("call %d within the limit: %v", i+1, err)
		}
	}
	_, err = c.Network.Get(ctx)
	e := wantError(t, err, 429, warren.CodeRateLimited)
	if e.RetryAfter < time.Second || e.RetryAfter > time.Minute || !warren.IsRateLimited(err) {
		t.Fatalf("429 with Retry-After %v", e.RetryAfter)
	}
	return k.Key
}

func TestRateLimitRetries(t *testing.T) {
	key := slowKey(t)
	ctx := testContext(t)
	// attempts counts the requests one call makes with two retries of at most 100 ms each.
	attempts := func(call func(c *warren.Client) error, opts ...warren.Option) int32 {
		t.Helper()
		counter := &recordingTransport{}
		opts = append([]warren.Option{
			warren.WithAPIKey(key), warren.WithMaxRetries(2), warren.WithMaxRetryWait(100 * time.Millisecond),
			warren.WithHTTPClient(&http.Client{Transport: counter}),
		}, opts...)
		started := time.Now()
		err := call(newClient(t, opts...))
		wantError(t, err, 429, warren.CodeRateLimited)
		if n := counter.n.Load(); n > 1 && time.Since(started) < time.Duration(n-1)*100*time.Millisecond {
			t.Errorf("%d attempts in %v: the waits were skipped", n, time.Since(started))
		}
		return counter.n.Load()
	}

	get := func(c *warren.Client) error { _, err := c.Network.Get(ctx); return err }
	validate := func(c *warren.Client) error { _, err := c.Policy.Validate(ctx, basePolicy); return err }
	create := func(c *warren.Client) error {
		_, err := c.Users.Create(ctx, &warren.CreateUserRequest{LoginName: "never@example.com"})
		return err
	}
	if n := attempts(get); n != 3 {
		t.Errorf("GET: %d attempts, want 3", n)
	}
	if n := attempts(validate); n != 3 {
		t.Errorf("validate (a POST that changes nothing): %d attempts, want 3", n)
	}
	if n := attempts(create); n != 3 {
		t.Errorf("POST /v1/users: %d attempts, want 3 (a 429 changed nothing, so a create is retried too)", n)
	}
	if n := attempts(get, warren.WithMaxRetries(0)); n != 1 {
		t.Errorf("WithMaxRetries(0): %d attempts, want 1", n)
	}
	if n := attempts(create, warren.WithMaxRetries(0)); n != 1 {
		t.Errorf("POST with WithMaxRetries(0): %d attempts, want 1", n)
	}
	users, err := newClient(t).Users.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u.LoginName == "never@example.com" {
			t.Error("a refused create made a user")
		}
	}
}

func TestRateLimitWaitIsCancellable(t *testing.T) {
	key := slowKey(t)
	c := newClient(t, warren.WithAPIKey(key), warren.WithMaxRetryWait(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err := c.Network.Get(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's deadline, got %v", err)
	}
	if elapsed := time.Since(started); elapsed > 5*time.Second {
		t.Errorf("the wait outlived its context by %v", elapsed)
	}
}

// throttleOnce answers the first request with the rate limiter's 429 (Retry-After: 1) and
// carries the others to the server, keeping when each was sent and its body. The real limiter
// refuses only after a minute's worth of calls with the same key, which a test cannot place
// in front of one chosen POST or PATCH; TestRateLimitRetries covers its real 429s.
type throttleOnce struct {
	mu   sync.Mutex
	sent []sentRequest
}

type sentRequest struct {
	at     time.Time
	method string
	path   string
	body   []byte
}

func (th *throttleOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
	}
	th.mu.Lock()
	first := len(th.sent) == 0
	th.sent = append(th.sent, sentRequest{at: time.Now(), method: req.Method, path: req.URL.Path, body: body})
	th.mu.Unlock()
	if first {
		return &http.Response{
			StatusCode: http.StatusTooManyRequests,
			Header: http.Header{
				"Content-Type": {"application/problem+json"}, "Retry-After": {"1"}, "X-Request-Id": {"req_throttled"},
			},
			Body:    io.NopCloser(strings.NewReader(`{"status":429,"code":"rate_limited","detail":"slow down"}`)),
			Request: req,
		}, nil
	}
	forward := req.Clone(req.Context())
	forward.Body = io.NopCloser(bytes.NewReader(body))
	return http.DefaultTransport.RoundTrip(forward)
}

// retried asserts that th saw the call twice, the second time after the server's second and
// with the same body, and that the body was not empty (so the comparison means something).
func (th *throttleOnce) retried(t *testing.T, method, path string) {
	t.Helper()
	th.mu.Lock()
	defer th.mu.Unlock()
	if len(th.sent) != 2 {
		t.Fatalf("%d requests, want the refused one and its retry", len(th.sent))
	}
	first, second := th.sent[0], th.sent[1]
	for _, r := range th.sent {
		if r.method != method || r.path != path {
			t.Errorf("sent %s %s, want %s %s", r.method, r.path, method, path)
		}
	}
	if waited := second.at.Sub(first.at); waited < time.Second {
		t.Errorf("retried after %v, before the Retry-After of 1 s", waited)
	}
	if len(first.body) == 0 || !bytes.Equal(first.body, second.body) {
		t.Errorf("the retry sent %q, the first attempt %q", second.body, first.body)
	}
}

// A 429 comes from the rate limiter before any handler runs, so a POST or a PATCH it refused
// did nothing: both are waited out and sent again, body intact, with no option needed.
func TestRateLimitedWritesAreRetried(t *testing.T) {
	t.Run("POST", func(t *testing.T) {
		ctx := testContext(t)
		th := &throttleOnce{}
		key, err := newClient(t, warren.WithHTTPClient(&http.Client{Transport: th})).Keys.Create(ctx, &warren.CreateKeyRequest{
			Type: warren.KeyTypeAuth, Description: "retried after a 429", Tags: []string{"tag:ci"}, ExpiresIn: "1h",
		})
		if err != nil {
			t.Fatal(err)
		}
		if key.Description != "retried after a 429" || key.Key == "" {
			t.Errorf("created %+v", key)
		}
		th.retried(t, http.MethodPost, "/v1/keys")
	})
	t.Run("PATCH", func(t *testing.T) {
		ctx := testContext(t)
		c := newClient(t)
		hook, err := c.Webhooks.Create(ctx, &warren.CreateWebhookRequest{URL: "http://127.0.0.1:9/hook", Events: []string{"webhook.test"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Webhooks.Delete(context.Background(), hook.ID) })
		th := &throttleOnce{}
		updated, err := newClient(t, warren.WithHTTPClient(&http.Client{Transport: th})).Webhooks.Update(ctx, hook.ID, &warren.UpdateWebhookRequest{
			Description: warren.String("renamed after a 429"), Enabled: warren.Bool(false),
		})
		if err != nil {
			t.Fatal(err)
		}
		if updated.Description != "renamed after a 429" || updated.Enabled {
			t.Errorf("updated %+v", updated)
		}
		th.retried(t, http.MethodPatch, "/v1/webhooks/"+hook.ID)
	})
}

// With retrying off the first 429 is the caller's, as an *Error like any refusal.
func TestRateLimitedWriteWithoutRetries(t *testing.T) {
	ctx := testContext(t)
	th := &throttleOnce{}
	c := newClient(t, warren.WithHTTPClient(&http.Client{Transport: th}), warren.WithMaxRetries(0))
	_, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{Type: warren.KeyTypeAuth, Description: "never made", ExpiresIn: "1h"})
	e := wantError(t, err, http.StatusTooManyRequests, warren.CodeRateLimited)
	if e.RetryAfter != time.Second || !warren.IsRateLimited(err) {
		t.Errorf("429 with Retry-After %v", e.RetryAfter)
	}
	if len(th.sent) != 1 {
		t.Errorf("%d requests, want 1", len(th.sent))
	}
}
