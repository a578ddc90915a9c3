package warren_test

import (
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestNetworkGet(t *testing.T) {
	ctx := testContext(t)
	n, err := newClient(t).Network.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Name != "default" || n.Plan != "premium" || n.Limits.Users != nil || n.Usage.Users < 1 {
		t.Fatalf("unexpected network %+v", n)
	}
}

func TestNewClientNeedsURLAndKey(t *testing.T) {
	t.Setenv("WARREN_URL", "")
	t.Setenv("WARREN_API_KEY", "")
	if _, err := warren.NewClient(warren.WithAPIKey("k")); err == nil {
		t.Error("a client without a URL was made")
	}
	if _, err := warren.NewClient(warren.WithBaseURL(serverURL)); err == nil {
		t.Error("a client without a key was made")
	}
	if _, err := warren.NewClient(warren.WithBaseURL("ftp://x"), warren.WithAPIKey("k")); err == nil {
		t.Error("a client with a non-HTTP URL was made")
	}
	t.Setenv("WARREN_URL", serverURL+"/")
	t.Setenv("WARREN_API_KEY", adminKey)
	c, err := warren.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != serverURL {
		t.Errorf("base URL %q, want %q", c.BaseURL(), serverURL)
	}
	if _, err := c.Network.Get(testContext(t)); err != nil {
		t.Fatal(err)
	}
}

func TestWrongKeyIsUnauthenticated(t *testing.T) {
	c := newClient(t, warren.WithAPIKey("wrn_api_nope"))
	_, err := c.Network.Get(testContext(t))
	wantError(t, err, 401, warren.CodeUnauthenticated)
}
