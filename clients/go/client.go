package warren

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Client calls the management API with one API key. It is safe for concurrent use.
type Client struct {
	t      *transport
	apiKey string

	Devices  *DevicesService
	Users    *UsersService
	Network  *NetworkService
	Policy   *PolicyService
	Keys     *KeysService
	Routes   *RoutesService
	Logs     *LogsService
	Events   *EventsService
	Webhooks *WebhooksService
}

// NewClient returns a Client for the server at WithBaseURL (default WARREN_URL) with the key
// of WithAPIKey (default WARREN_API_KEY); it is an error when either is missing.
func NewClient(opts ...Option) (*Client, error) {
	cfg := newConfig(opts)
	t, err := newTransport(cfg, 0)
	if err != nil {
		return nil, err
	}
	key := strings.TrimSpace(cfg.apiKey)
	if key == "" {
		return nil, fmt.Errorf("warren: no API key: pass WithAPIKey or set WARREN_API_KEY")
	}
	c := &Client{t: t, apiKey: key}
	c.Devices = &DevicesService{c}
	c.Users = &UsersService{c}
	c.Network = &NetworkService{c}
	c.Policy = &PolicyService{c}
	c.Keys = &KeysService{c}
	c.Routes = &RoutesService{c}
	c.Logs = &LogsService{c}
	c.Events = &EventsService{c}
	c.Webhooks = &WebhooksService{c}
	return c, nil
}

// BaseURL is the server's URL the client was made with (without /v1), any password in it
// masked.
func (c *Client) BaseURL() string { return c.t.shown }

// String names the client by its server, never its key, so logging a Client (or a struct
// holding one, with %v or %+v) cannot leak the key.
func (c *Client) String() string { return "warren.Client(" + c.t.shown + ")" }

// GoString is String for %#v.
func (c *Client) GoString() string { return c.String() }

// newRequest prepares a call with the client's key.
func (c *Client) newRequest(method, path string) *request {
	return &request{method: method, path: path, token: c.apiKey}
}

// call sends a request with an optional JSON body and decodes a JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	r := c.newRequest(method, path)
	r.query = query
	return c.t.call(ctx, r, in, out)
}

// send is call for an answer of type T.
func send[T any](ctx context.Context, c *Client, method, path string, query url.Values, in any) (*T, error) {
	var out T
	if err := c.call(ctx, method, path, query, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// params builds a query from name, value pairs, leaving out empty values.
func params(pairs ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	return q
}
