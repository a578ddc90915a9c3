package warren_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	warren "github.com/warrenhq/warren/clients/go"
)

// TestAnswersThatAreNotTheAPIs: whatever stands in front of the server answers, a call fails
// with an *Error that errors.As finds, its detail valid text.
func TestAnswersThatAreNotTheAPIs(t *testing.T) {
	var status int
	var body string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	defer server.Close()
	c, err := warren.NewClient(warren.WithBaseURL(server.URL), warren.WithAPIKey("wrn_api_test"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	for _, tc := range []struct {
		status int
		code   string
	}{{200, warren.CodeInvalidResponse}, {502, "http_502"}} {
		status = tc.status
		// 199 bytes, then a two-byte character across the 200-byte cut.
		body = "<html>" + strings.Repeat("x", 193) + "é captive portal</html>"
		_, err := c.Network.Get(ctx)
		var e *warren.Error
		if !errors.As(err, &e) {
			t.Fatalf("%d: %T %v, not an *Error", tc.status, err, err)
		}
		if e.StatusCode != tc.status || e.Code != tc.code || !utf8.ValidString(e.Detail) || !strings.Contains(e.Detail, "<html>") {
			t.Errorf("%d: %+v", tc.status, e)
		}
	}
}

// TestBaseURLFormsAndPrecedence: the server URL may end in a slash or /v1 and sit under a path
// prefix; an option given to NewClient wins over WARREN_URL and WARREN_API_KEY.
func TestBaseURLFormsAndPrecedence(t *testing.T) {
	var mu sync.Mutex
	var paths, auths []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer server.Close()
	t.Setenv("WARREN_URL", "http://127.0.0.1:9")
	t.Setenv("WARREN_API_KEY", "wrn_api_from_env")
	ctx := testContext(t)
	for _, base := range []string{server.URL, server.URL + "/", server.URL + "/v1", server.URL + "/warren", server.URL + "/warren/v1/"} {
		c, err := warren.NewClient(warren.WithBaseURL(base), warren.WithAPIKey("wrn_api_given"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Network.Get(ctx); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
	}
	want := []string{"/v1/network", "/v1/network", "/v1/network", "/warren/v1/network", "/warren/v1/network"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	for _, a := range auths {
		if a != "Bearer wrn_api_given" {
			t.Errorf("Authorization %q: the environment won over WithAPIKey", a)
		}
	}
}
