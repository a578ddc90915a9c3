package warren_test

import (
	"net/http"
	"strings"
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
	t.Setenv("WARREN_URL", serverURL+"/v1/")
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

func TestUserAgent(t *testing.T) {
	ctx := testContext(t)
	rec := &recordingTransport{}
	if _, err := newClient(t, warren.WithHTTPClient(&http.Client{Transport: rec})).Network.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if ua := rec.lastHeader().Get("User-Agent"); !strings.HasPrefix(ua, "warren-go/"+warren.Version) {
		t.Errorf("default User-Agent %q", ua)
	}
	c := newClient(t, warren.WithHTTPClient(&http.Client{Transport: rec}), warren.WithUserAgent("deploy-bot/1.0"))
	if _, err := c.Network.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if ua := rec.lastHeader().Get("User-Agent"); ua != "deploy-bot/1.0" {
		t.Errorf("User-Agent %q, want deploy-bot/1.0", ua)
	}
}
