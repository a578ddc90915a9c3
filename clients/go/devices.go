package warren

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// UserRef names the user a device belongs to.
type UserRef struct {
	ID        string `json:"id"`
	LoginName string `json:"loginName"`
}

// DeviceRoute is a route as listed on a device's detail record.
type DeviceRoute struct {
	ID         string     `json:"id"`
	Prefix     string     `json:"prefix"`
	State      RouteState `json:"state"`
	Advertised bool       `json:"advertised"`
	Primary    bool       `json:"primary"`
	// ExitNode marks a default route (0.0.0.0/0 or ::/0).
	ExitNode bool `json:"exitNode"`
}

// Protocol is what a device speaks to the control server.
type Protocol string

const (
	// ProtocolNative is Warren's node protocol (/v1/node/*), spoken by Warren's own agent.
	ProtocolNative Protocol = "native"
	// ProtocolTailscale is Tailscale's control protocol, spoken by the official Tailscale client.
	ProtocolTailscale Protocol = "tailscale"
)

// Device is a device record. The detail fields (Addresses onward) are set by Get and SetTags,
// and by List with Fields "all"; otherwise they are empty.
type Device struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	Hostname string     `json:"hostname"`
	OS       string     `json:"os"`
	Online   bool       `json:"online"`
	User     *UserRef   `json:"user"`
	Tags     []string   `json:"tags"`
	Created  time.Time  `json:"created"`
	LastSeen *time.Time `json:"lastSeen"`
	// Authorized is false while the device waits for approval.
	Authorized bool `json:"authorized"`
	// KeyExpiry is when the device's login expires; nil when it never does.
	KeyExpiry         *time.Time `json:"keyExpiry"`
	KeyExpiryDisabled bool       `json:"keyExpiryDisabled"`
	// KeyExpired is set once the login expired: the device is in no netmap until it logs in again.
	KeyExpired bool `json:"keyExpired"`

	Addresses     []string      `json:"addresses,omitempty"`
	Routes        []DeviceRoute `json:"routes,omitempty"`
	ClientVersion *string       `json:"clientVersion,omitempty"`
	KeyID         *string       `json:"keyId,omitempty"`
	Ephemeral     *bool         `json:"ephemeral,omitempty"`
	Expires       *time.Time    `json:"expires,omitempty"`
	// ExitNode is set when the device serves as an exit node (both default routes approved).
	ExitNode *bool `json:"exitNode,omitempty"`
	// Protocol is what the device speaks: ProtocolNative or ProtocolTailscale.
	Protocol Protocol `json:"protocol,omitempty"`
	// DNSName is its MagicDNS name, <name>.<network domain>.
	DNSName string `json:"dnsName,omitempty"`
}

// DeviceListOptions filters List; every filter set must match (AND).
type DeviceListOptions struct {
	// User is a user id or login name.
	User string
	// Tags are tags of the form tag:<name>; a device must carry every one.
	Tags []string
	// Online keeps only online (true) or offline (false) devices.
	Online *bool
	// Fields is "default" or "all" (adds the detail fields to every record).
	Fields string
}

func (o *DeviceListOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	if o.User != "" {
		q.Set("user", o.User)
	}
	for _, tag := range o.Tags {
		q.Add("tag", tag)
	}
	if o.Online != nil {
		q.Set("online", strconv.FormatBool(*o.Online))
	}
	if o.Fields != "" {
		q.Set("fields", o.Fields)
	}
	return q
}

// DevicePageOptions asks Page for one page of devices: the filters of List, a search and the
// paging.
type DevicePageOptions struct {
	DeviceListOptions
	// Q keeps devices whose name contains it, or that have it as an address.
	Q string
	// Limit is the page size, 1–1000 (default 100).
	Limit int
	// Cursor is the NextCursor of the previous page.
	Cursor string
}

// DevicePage is one page of devices in name order.
type DevicePage struct {
	Devices []Device `json:"devices"`
	// NextCursor continues after this page; nil on the last one.
	NextCursor *string `json:"nextCursor"`
	HasMore    bool    `json:"hasMore"`
	// Total is how many devices the filters select, on every page.
	Total int `json:"total"`
}

// defaultDevicePage is the page size Page asks for without a Limit (the server's default too);
// sending it is what makes the answer a page rather than the whole list.
const defaultDevicePage = 100

// DevicesService covers /v1/devices.
type DevicesService struct{ c *Client }

// List returns the devices that match opts (nil: every device).
func (s *DevicesService) List(ctx context.Context, opts *DeviceListOptions) ([]Device, error) {
	var body struct {
		Devices []Device `json:"devices"`
	}
	if err := s.c.call(ctx, http.MethodGet, "/v1/devices", opts.query(), nil, &body); err != nil {
		return nil, err
	}
	return body.Devices, nil
}

// Page returns one page of the devices that match opts, in name order: for lists too long to
// read whole. Pass NextCursor back as Cursor for the next page, until HasMore is false.
func (s *DevicesService) Page(ctx context.Context, opts *DevicePageOptions) (*DevicePage, error) {
	if opts == nil {
		opts = &DevicePageOptions{}
	}
	q := opts.DeviceListOptions.query()
	if opts.Q != "" {
		q.Set("q", opts.Q)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = defaultDevicePage
	}
	q.Set("limit", strconv.Itoa(limit))
	if opts.Cursor != "" {
		q.Set("cursor", opts.Cursor)
	}
	return send[DevicePage](ctx, s.c, http.MethodGet, "/v1/devices", q, nil)
}

// Get returns one device's detail record.
func (s *DevicesService) Get(ctx context.Context, id string) (*Device, error) {
	return send[Device](ctx, s.c, http.MethodGet, "/v1/devices/"+escape(id), nil, nil)
}

// Delete removes a device: its node credential is refused at once and its routes and
// addresses are freed.
func (s *DevicesService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, http.MethodDelete, "/v1/devices/"+escape(id), nil, nil, nil)
}

// SetTags replaces the device's tags (an empty list clears them) and returns its detail
// record. Every tag must be defined in the policy's tagOwners.
func (s *DevicesService) SetTags(ctx context.Context, id string, tags []string) (*Device, error) {
	if tags == nil {
		tags = []string{}
	}
	in := struct {
		Tags []string `json:"tags"`
	}{tags}
	return send[Device](ctx, s.c, http.MethodPost, "/v1/devices/"+escape(id)+"/tags", nil, in)
}

// DeviceUpdate holds the device settings Update changes; a nil field is left as it is.
type DeviceUpdate struct {
	// KeyExpiryDisabled true also lifts an expiry that already happened.
	KeyExpiryDisabled *bool `json:"keyExpiryDisabled,omitempty"`
}

// Update changes a device's settings.
func (s *DevicesService) Update(ctx context.Context, id string, in DeviceUpdate) (*Device, error) {
	return send[Device](ctx, s.c, http.MethodPatch, "/v1/devices/"+escape(id), nil, in)
}

// Approve lets a device that waits for approval into netmaps. Approving an approved device is
// a 409 invalid_state.
func (s *DevicesService) Approve(ctx context.Context, id string) (*Device, error) {
	return send[Device](ctx, s.c, http.MethodPost, "/v1/devices/"+escape(id)+"/approve", nil, nil)
}

// Expire ends the device's login now: it leaves every netmap until it logs in again.
func (s *DevicesService) Expire(ctx context.Context, id string) (*Device, error) {
	return send[Device](ctx, s.c, http.MethodPost, "/v1/devices/"+escape(id)+"/expire", nil, nil)
}
