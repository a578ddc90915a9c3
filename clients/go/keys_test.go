package warren_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestKeys(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)

	t.Run("auth key", func(t *testing.T) {
		k, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{
			Reusable: true, Ephemeral: true, Tags: []string{"tag:ci"}, ExpiresIn: warren.Duration(24 * time.Hour), Description: "ci runners",
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k.Key, "wrn_auth_") || k.Type != warren.KeyTypeAuth || !k.Reusable || !k.Ephemeral || k.State != warren.KeyStateValid {
			t.Fatalf("created %+v", k)
		}
		if d := time.Until(k.Expires); d < 23*time.Hour || d > 25*time.Hour {
			t.Errorf("expires in %v, want about 24h", d)
		}
		got, err := c.Keys.Get(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Key != "" || got.Description != "ci runners" || !slices.Equal(got.Tags, []string{"tag:ci"}) || got.User == nil {
			t.Errorf("got %+v", got)
		}
		auth, err := c.Keys.List(ctx, &warren.KeyListOptions{Type: warren.KeyTypeAuth, State: warren.KeyStateValid})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(auth, func(x warren.Key) bool { return x.ID == k.ID }) {
			t.Errorf("%s not listed among valid auth keys", k.ID)
		}
		if err := c.Keys.Delete(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		got, err = c.Keys.Get(ctx, k.ID)
		if err != nil || got.State != warren.KeyStateRevoked {
			t.Errorf("after delete: %+v, %v", got, err)
		}
		if err := c.Keys.Delete(ctx, k.ID); err != nil {
			t.Errorf("deleting a revoked key again: %v", err)
		}
	})

	t.Run("api key", func(t *testing.T) {
		k, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{
			Type: warren.KeyTypeAPI, Name: "reader", Scopes: []warren.Scope{warren.ScopeRead}, ExpiresIn: "1h", RateLimit: 50,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k.Key, "wrn_api_") || k.Name != "reader" || !slices.Equal(k.Scopes, []warren.Scope{warren.ScopeRead}) || k.RateLimit == nil || *k.RateLimit != 50 {
			t.Fatalf("created %+v", k)
		}
		reader := newClient(t, warren.WithAPIKey(k.Key))
		if _, err := reader.Network.Get(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = reader.Keys.Create(ctx, &warren.CreateKeyRequest{})
		e := wantError(t, err, 403, warren.CodeInsufficientScope)
		if e.Scope == "" {
			t.Errorf("insufficient_scope without the scope needed: %+v", e)
		}
		if err := c.Keys.Delete(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		_, err = reader.Network.Get(ctx)
		wantError(t, err, 401, warren.CodeKeyRevoked)
	})

	t.Run("refusals", func(t *testing.T) {
		_, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{ExpiresIn: "1w"})
		wantError(t, err, 400, warren.CodeInvalidDuration)
		_, err = c.Keys.Create(ctx, &warren.CreateKeyRequest{Tags: []string{"tag:nobody-owns"}})
		wantError(t, err, 400, warren.CodeInvalidTag)
		_, err = c.Keys.Get(ctx, "key_doesnotexist")
		wantError(t, err, 404, warren.CodeNotFound)
		wantError(t, c.Keys.Delete(ctx, "key_doesnotexist"), 404, warren.CodeNotFound)
	})
}
