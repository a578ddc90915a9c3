package warren_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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
