package warren

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// EventActor is who made a change: Type is "key", "user", "device" or "system".
type EventActor struct {
	Type string  `json:"type"`
	ID   *string `json:"id"`
	Name *string `json:"name"`
}

// Event is one change of state. Data holds the record(s) after the change, such as
// {"device": {...}}; decode it according to Type.
type Event struct {
	ID    string          `json:"id"`
	Type  string          `json:"type"`
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
