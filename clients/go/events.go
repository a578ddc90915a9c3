package warren

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// EventType names a kind of change. EventOptions.Types and webhook filters also take a
// family such as "device.*".
type EventType string

// Event types, each with the record(s) it carries in Event.Data.
const (
	EventDeviceCreated    EventType = "device.created"
	EventDeviceDeleted    EventType = "device.deleted"
	EventDeviceOnline     EventType = "device.online"
	EventDeviceOffline    EventType = "device.offline"
	EventDeviceUpdated    EventType = "device.updated" // tags, name
	EventDevicePending    EventType = "device.pending" // waits for approval
	EventDeviceApproved   EventType = "device.approved"
	EventDeviceKeyExpired EventType = "device.key_expired"
	EventRouteAdvertised  EventType = "route.advertised"
	EventRouteApproved    EventType = "route.approved"
	EventRouteDisabled    EventType = "route.disabled"
	EventPolicyUpdated    EventType = "policy.updated" // etag, version
	EventKeyCreated       EventType = "key.created"
	EventKeyDeleted       EventType = "key.deleted"
	EventKeyExpiring      EventType = "key.expiring" // 24 h before expiry
	EventKeyExpired       EventType = "key.expired"
	EventUserCreated      EventType = "user.created"
	EventUserUpdated      EventType = "user.updated" // role, status
	EventUserDeleted      EventType = "user.deleted"
	EventWebhookTest      EventType = "webhook.test"
)

// ActorType is what made a change.
type ActorType string

// Actor types.
const (
	ActorKey    ActorType = "key"
	ActorUser   ActorType = "user"   // a console session
	ActorDevice ActorType = "device" // the node protocol
	ActorSystem ActorType = "system" // expiry, presence, the sweeper
)

// EventActor is who made a change.
type EventActor struct {
	Type ActorType `json:"type"`
	ID   *string   `json:"id"`
	Name *string   `json:"name"`
}

// Event is one change of state. Data holds the record(s) after the change, such as
// {"device": {...}}; decode it according to Type.
type Event struct {
	ID    string          `json:"id"`
	Type  EventType       `json:"type"`
	Time  time.Time       `json:"time"`
	Actor EventActor      `json:"actor"`
	Data  json.RawMessage `json:"data"`
}

// EventOptions selects events.
type EventOptions struct {
	PageOptions
	// Types keeps events of these types ("device.created") or families ("device.*").
	Types []string
}

// EventsService covers /v1/events.
type EventsService struct{ c *Client }

// Page returns one page of events.
func (s *EventsService) Page(ctx context.Context, opts *EventOptions) (*Page[Event], error) {
	if opts == nil {
		opts = &EventOptions{}
	}
	return s.pages(opts.Types)(ctx, opts.PageOptions)
}

// List iterates over every event from opts on, across pages (and, with Follow, as they
// happen).
func (s *EventsService) List(ctx context.Context, opts *EventOptions) *Iterator[Event] {
	if opts == nil {
		opts = &EventOptions{}
	}
	return newIterator(ctx, opts.PageOptions, s.pages(opts.Types))
}

func (s *EventsService) pages(types []string) pageFunc[Event] {
	var filters url.Values
	if len(types) > 0 {
		filters = url.Values{"type": types}
	}
	return pageFetcher[Event](s.c, "/v1/events", filters)
}
