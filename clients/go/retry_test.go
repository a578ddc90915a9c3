package warren_test

import (
	"context"
	"errors"
	"net/http"
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
	if n := attempts(create); n != 1 {
		t.Errorf("POST /v1/users: %d attempts, want 1 (not retried by default)", n)
	}
	if n := attempts(create, warren.WithRetryNonIdempotent()); n != 3 {
		t.Errorf("POST /v1/users with WithRetryNonIdempotent: %d attempts, want 3", n)
	}
	if n := attempts(get, warren.WithMaxRetries(0)); n != 1 {
		t.Errorf("WithMaxRetries(0): %d attempts, want 1", n)
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
