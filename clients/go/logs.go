package warren

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Endpoint is one side of a connection.
type Endpoint struct {
	// DeviceID is nil for a destination outside the network (through a subnet route).
	DeviceID *string `json:"deviceId"`
	// DeviceName is the device's name when the entry was read; nil for an address outside
	// the network or a device since removed.
	DeviceName *string `json:"deviceName"`
	Addr       string  `json:"addr"`
}

// ConnectionEntry is one entry of the connection log.
type ConnectionEntry struct {
	ID         string    `json:"id"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Proto      string    `json:"proto"`
	Src        Endpoint  `json:"src"`
	Dst        Endpoint  `json:"dst"`
	TxBytes    int64     `json:"txBytes"`
	RxBytes    int64     `json:"rxBytes"`
	TxPackets  int64     `json:"txPackets"`
	RxPackets  int64     `json:"rxPackets"`
	ReportedBy string    `json:"reportedBy"`
	// Logged is when Warren recorded the entry; pages are in this order.
	Logged time.Time `json:"logged"`
}

// AuditEntry is one entry of the audit log: one API call.
type AuditEntry struct {
	ID         string    `json:"id"`
	Time       time.Time `json:"time"`
	KeyID      *string   `json:"keyId"`
	KeyName    *string   `json:"keyName"`
	DeviceID   *string   `json:"deviceId"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	Status     int       `json:"status"`
	ClientAddr string    `json:"clientAddr"`
	RequestID  string    `json:"requestId"`
	Action     *string   `json:"action"`
	Target     *string   `json:"target"`
	// UserID and UserLogin name the person of a console session's call (KeyID is then nil).
	UserID    *string `json:"userId"`
	UserLogin *string `json:"userLogin"`
}

// ConnectionLogOptions selects connection log entries.
type ConnectionLogOptions struct {
	PageOptions
	// Device keeps entries whose source or destination is that device (a dev_… id).
	Device string
}

// AuditLogOptions selects audit log entries.
type AuditLogOptions struct {
	PageOptions
	// Key keeps the calls made with that API key (a key_… id).
	Key string
	// Changes keeps only the calls that changed state (true) or only those that did not
	// (false); nil keeps both.
	Changes *bool
}

// LogsService covers /v1/logs.
type LogsService struct{ c *Client }

// ConnectionsPage returns one page of the connection log.
func (s *LogsService) ConnectionsPage(ctx context.Context, opts *ConnectionLogOptions) (*Page[ConnectionEntry], error) {
	if opts == nil {
		opts = &ConnectionLogOptions{}
	}
	return s.connections(opts.Device)(ctx, opts.PageOptions)
}

// Connections iterates over every connection log entry from opts on, across pages (and,
// with Follow, as they arrive).
func (s *LogsService) Connections(ctx context.Context, opts *ConnectionLogOptions) *Iterator[ConnectionEntry] {
	if opts == nil {
		opts = &ConnectionLogOptions{}
	}
	return newIterator(ctx, opts.PageOptions, s.connections(opts.Device))
}

// AuditPage returns one page of the audit log.
func (s *LogsService) AuditPage(ctx context.Context, opts *AuditLogOptions) (*Page[AuditEntry], error) {
	if opts == nil {
		opts = &AuditLogOptions{}
	}
	return s.audit(opts)(ctx, opts.PageOptions)
}

// Audit iterates over every audit log entry from opts on, across pages (and, with Follow, as
// they arrive).
func (s *LogsService) Audit(ctx context.Context, opts *AuditLogOptions) *Iterator[AuditEntry] {
	if opts == nil {
		opts = &AuditLogOptions{}
	}
	return newIterator(ctx, opts.PageOptions, s.audit(opts))
}

func (s *LogsService) connections(device string) pageFunc[ConnectionEntry] {
	return pageFetcher[ConnectionEntry](s.c, "/v1/logs/connections", filter("device", device))
}

func (s *LogsService) audit(opts *AuditLogOptions) pageFunc[AuditEntry] {
	filters := url.Values{}
	if opts.Key != "" {
		filters.Set("key", opts.Key)
	}
	if opts.Changes != nil {
		filters.Set("changes", strconv.FormatBool(*opts.Changes))
	}
	return pageFetcher[AuditEntry](s.c, "/v1/logs/audit", filters)
}

// filter is one optional query parameter (none when value is empty).
func filter(name, value string) url.Values {
	if value == "" {
		return nil
	}
	return url.Values{name: {value}}
}

// pageFetcher fetches pages of one paged endpoint with its filters; a new paged resource
// (events) needs only its path and filters.
func pageFetcher[T any](c *Client, path string, filters url.Values) pageFunc[T] {
	return func(ctx context.Context, opts PageOptions) (*Page[T], error) {
		q := opts.query()
		for name, values := range filters {
			q[name] = values
		}
		return send[Page[T]](ctx, c, http.MethodGet, path, q, nil)
	}
}
