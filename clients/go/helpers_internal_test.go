package warren

import (
	"net/http"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		90 * time.Second:        "90s",
		15 * time.Minute:        "15m",
		24 * time.Hour:          "1d",
		36 * time.Hour:          "36h",
		90 * 24 * time.Hour:     "90d",
		1500 * time.Millisecond: "2s",
		0:                       "1s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A proxy in front of the server may answer with a page of its own; that is still an *Error.
func TestErrorFromANonProblemBody(t *testing.T) {
	header := http.Header{"Retry-After": {"7"}, "X-Request-Id": {"req_proxy"}}
	e := newError(http.StatusBadGateway, header, []byte("<html>bad gateway</html>"))
	if e.StatusCode != 502 || e.Code != "http_502" || e.Detail != "<html>bad gateway</html>" || e.RequestID != "req_proxy" || e.RetryAfter != 7*time.Second {
		t.Fatalf("%+v", e)
	}
	e = newError(http.StatusServiceUnavailable, http.Header{}, nil)
	if e.Code != "http_503" || e.Detail != "Service Unavailable" {
		t.Fatalf("%+v", e)
	}
}
