package warren

import (
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"
)

// Version of this client, sent in the User-Agent.
const Version = "0.1.0"

const (
	defaultMaxRetries   = 3
	defaultMaxRetryWait = 60 * time.Second
)

// config is what the options set; shared by Client and NodeClient.
type config struct {
	baseURL      string
	apiKey       string
	nodeToken    string
	httpClient   *http.Client
	userAgent    string
	maxRetries   int
	maxRetryWait time.Duration
}

func newConfig(opts []Option) *config {
	c := &config{
		baseURL:      os.Getenv("WARREN_URL"),
		apiKey:       os.Getenv("WARREN_API_KEY"),
		userAgent:    defaultUserAgent(),
		maxRetries:   defaultMaxRetries,
		maxRetryWait: defaultMaxRetryWait,
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// Option configures a Client or a NodeClient.
type Option func(*config)

// WithBaseURL sets the server's URL, e.g. http://127.0.0.1:8080 (default: the WARREN_URL
// environment variable). A trailing /v1 is dropped: the client adds it to every path.
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithAPIKey sets the API key, wrn_api_… (default: the WARREN_API_KEY environment variable).
// A NodeClient ignores it.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithNodeToken gives a NodeClient the node credential (wrn_node_…) of an earlier
// registration, so a restarted agent carries on without enrolling again. A Client ignores it.
func WithNodeToken(token string) Option { return func(c *config) { c.nodeToken = token } }

// WithHTTPClient sets the http.Client that carries the requests (default: a client with no
// overall timeout for Client, and a 30-second timeout for NodeClient).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.httpClient = hc } }

// WithUserAgent replaces the User-Agent header (default: warren-go/<Version> (<Go version>)).
// WithAppInfo keeps the client's own product token and puts the program's before it.
func WithUserAgent(ua string) Option { return func(c *config) { c.userAgent = ua } }

// WithAppInfo names the program that uses the client, such as "deploy-bot/2.1": the User-Agent
// becomes "deploy-bot/2.1 warren-go/<Version> (<Go version>)", so the server's logs name both
// (what the Python and TypeScript clients' user_agent / userAgent options do).
func WithAppInfo(product string) Option {
	return func(c *config) {
		if product = strings.TrimSpace(product); product != "" {
			c.userAgent = product + " " + defaultUserAgent()
		}
	}
}

func defaultUserAgent() string { return "warren-go/" + Version + " (" + runtime.Version() + ")" }

// WithMaxRetries sets how many times a 429 is waited out and retried, whatever the method
// (default 3; 0 turns retrying off and returns the first 429 as an *Error).
func WithMaxRetries(n int) Option {
	return func(c *config) {
		if n < 0 {
			n = 0
		}
		c.maxRetries = n
	}
}

// WithMaxRetryWait bounds one wait for Retry-After (default 60 s). A server asking for longer
// is retried after this long instead.
func WithMaxRetryWait(d time.Duration) Option { return func(c *config) { c.maxRetryWait = d } }

// WithRetryNonIdempotent does nothing: every call, POST and PATCH included, is retried on 429
// by default, since Warren refuses it before doing anything.
//
// Deprecated: drop it; WithMaxRetries(0) turns retrying off.
func WithRetryNonIdempotent() Option { return func(*config) {} }
