package warren

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxBody bounds how much of an answer is read, so a misbehaving server cannot exhaust memory.
const maxBody = 64 << 20

// transport sends requests: bearer auth, JSON in and out, problems as *Error, and a bounded,
// cancellable wait-and-retry on 429 for every method. Warren answers 429 from its rate limiter,
// before any handler runs, so a refused call did nothing and repeating it is safe, POST and
// PATCH included. Other failures (5xx, a dropped connection) are not retried: the change may
// have been made.
type transport struct {
	base         string
	shown        string // base with any password in it masked, for messages and String
	http         *http.Client
	userAgent    string
	maxRetries   int
	maxRetryWait time.Duration
}

func newTransport(c *config, defaultTimeout time.Duration) (*transport, error) {
	base := strings.TrimRight(strings.TrimSpace(c.baseURL), "/")
	// WARREN_URL is the server's root; a copied API base (…/v1) means the same server.
	base = strings.TrimRight(strings.TrimSuffix(base, "/v1"), "/")
	if base == "" {
		return nil, fmt.Errorf("warren: no server URL: pass WithBaseURL or set WARREN_URL")
	}
	u, err := url.Parse(base)
	if err != nil {
		// url.Parse's own error quotes the URL, password and all.
		return nil, fmt.Errorf("warren: the server URL is not a URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("warren: server URL %q is not an http(s) URL", u.Redacted())
	}
	hc := c.httpClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	return &transport{
		base: base, shown: u.Redacted(), http: hc, userAgent: c.userAgent,
		maxRetries: c.maxRetries, maxRetryWait: c.maxRetryWait,
	}, nil
}

// request is one call as the services describe it.
type request struct {
	method  string
	path    string // under the base URL, starting with /v1
	query   url.Values
	header  http.Header
	token   string
	body    []byte // sent as is, with ctype as its Content-Type; a fresh reader on each attempt
	ctype   string
	accept  string
	allowed []int // non-2xx statuses returned as a response instead of an *Error (304)
}

// response is an answer that was not turned into an *Error.
type response struct {
	status int
	header http.Header
	body   []byte
}

// withJSON sets the body to v encoded as JSON.
func (r *request) withJSON(v any) (*request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("warren: encoding %s %s: %w", r.method, r.path, err)
	}
	r.body, r.ctype = body, "application/json"
	return r, nil
}

// do sends r, retrying on 429 up to maxRetries times, and returns the answer or an *Error.
func (t *transport) do(ctx context.Context, r *request) (*response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.once(ctx, r)
		if err != nil {
			return nil, err
		}
		if resp.status == http.StatusTooManyRequests && attempt < t.maxRetries {
			if err := t.wait(ctx, retryAfter(resp.header)); err != nil {
				return nil, err
			}
			continue
		}
		if resp.status >= 300 && !allowed(r.allowed, resp.status) {
			return nil, newError(resp.status, resp.header, resp.body)
		}
		return resp, nil
	}
}

// wait sleeps for the server's Retry-After (at least a second, at most maxRetryWait), or
// until ctx ends.
func (t *transport) wait(ctx context.Context, d time.Duration) error {
	if d < time.Second {
		d = time.Second
	}
	if d > t.maxRetryWait {
		d = t.maxRetryWait
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func (t *transport) once(ctx context.Context, r *request) (*response, error) {
	target := t.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("warren: %s %s: %w", r.method, r.path, err)
	}
	for name, values := range r.header {
		req.Header[name] = values
	}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", t.userAgent)
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", r.ctype)
	}
	res, err := t.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("warren: %s %s: %w", r.method, r.path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("warren: %s %s: reading the answer: %w", r.method, r.path, err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: data}, nil
}

// call sends r with in (when not nil) as its JSON body and decodes the JSON answer into out.
func (t *transport) call(ctx context.Context, r *request, in, out any) error {
	if in != nil {
		var err error
		if r, err = r.withJSON(in); err != nil {
			return err
		}
	}
	resp, err := t.do(ctx, r)
	if err != nil {
		return err
	}
	return resp.decode(r, out)
}

// decode unmarshals a JSON answer into out (nothing to do for nil out or an empty body).
func (resp *response) decode(r *request, out any) error {
	if out == nil || len(resp.body) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		// Something in front of the server (a captive portal, a proxy's page) answered 2xx:
		// still an *Error, so errors.As finds it like any other failure of a call.
		return &Error{
			StatusCode: resp.status,
			Code:       CodeInvalidResponse,
			Title:      "Invalid Response",
			Detail:     fmt.Sprintf("%s %s: the answer is not the API's JSON (%v): %s", r.method, r.path, err, excerpt(resp.body)),
			RequestID:  resp.header.Get("X-Request-Id"),
		}
	}
	return nil
}

func allowed(statuses []int, status int) bool {
	for _, s := range statuses {
		if s == status {
			return true
		}
	}
	return false
}

// escape makes an id safe as one path segment.
func escape(id string) string { return url.PathEscape(id) }
