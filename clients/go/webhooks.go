package warren

import (
	"context"
	"net/http"
	"time"
)

// Webhook is an endpoint that receives events. Secret is set only in the answers of Create
// (and Rotate returns the new one): verify deliveries with it, by the Standard Webhooks scheme.
type Webhook struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events"`
	Description    string     `json:"description"`
	Enabled        bool       `json:"enabled"`
	DisabledReason *string    `json:"disabledReason"`
	Created        time.Time  `json:"created"`
	LastDelivery   *time.Time `json:"lastDelivery"`
	Secret         string     `json:"secret,omitempty"`
}

// DeliveryState is where a delivery is: waiting for its next attempt, done, or given up
// (a failed delivery can be retried by hand with WebhooksService.Retry).
type DeliveryState string

// Delivery states.
const (
	DeliveryStatePending   DeliveryState = "pending"
	DeliveryStateDelivered DeliveryState = "delivered"
	DeliveryStateFailed    DeliveryState = "failed"
)

// WebhookDelivery is one event on its way to one endpoint.
type WebhookDelivery struct {
	ID          string        `json:"id"`
	EventID     string        `json:"eventId"`
	Type        EventType     `json:"type"`
	State       DeliveryState `json:"state"`
	Attempts    int           `json:"attempts"`
	LastStatus  *int          `json:"lastStatus"`
	LastError   *string       `json:"lastError"`
	NextAttempt *time.Time    `json:"nextAttempt"`
	Created     time.Time     `json:"created"`
}

// CreateWebhookRequest is the body of WebhooksService.Create. Events are types
// ("device.created"), families ("device.*") or "*".
type CreateWebhookRequest struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description,omitempty"`
}

// UpdateWebhookRequest changes what is set (nil fields stay as they are).
type UpdateWebhookRequest struct {
	URL         *string  `json:"url,omitempty"`
	Events      []string `json:"events,omitempty"`
	Description *string  `json:"description,omitempty"`
	Enabled     *bool    `json:"enabled,omitempty"`
}

// DeliveryListOptions selects deliveries: paging (a cursor and a limit; Since is not used)
// and an optional State.
type DeliveryListOptions struct {
	PageOptions
	State DeliveryState
}

// WebhooksService covers /v1/webhooks.
type WebhooksService struct{ c *Client }

func webhookPath(id string) string { return "/v1/webhooks/" + escape(id) }

// List returns every webhook endpoint of the network.
func (s *WebhooksService) List(ctx context.Context) ([]Webhook, error) {
	body, err := send[struct {
		Webhooks []Webhook `json:"webhooks"`
	}](ctx, s.c, http.MethodGet, "/v1/webhooks", nil, nil)
	if err != nil {
		return nil, err
	}
	return body.Webhooks, nil
}

// Create adds an endpoint; the answer's Secret is shown this once.
func (s *WebhooksService) Create(ctx context.Context, in *CreateWebhookRequest) (*Webhook, error) {
	return send[Webhook](ctx, s.c, http.MethodPost, "/v1/webhooks", nil, in)
}

// Get reads one endpoint.
func (s *WebhooksService) Get(ctx context.Context, id string) (*Webhook, error) {
	return send[Webhook](ctx, s.c, http.MethodGet, webhookPath(id), nil, nil)
}

// Update changes an endpoint's URL, events, description or whether it is enabled.
func (s *WebhooksService) Update(ctx context.Context, id string, in *UpdateWebhookRequest) (*Webhook, error) {
	return send[Webhook](ctx, s.c, http.MethodPatch, webhookPath(id), nil, in)
}

// Delete removes an endpoint and its deliveries.
func (s *WebhooksService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, http.MethodDelete, webhookPath(id), nil, nil, nil)
}

// Rotate makes a new secret and returns it; the old one keeps signing beside it for 24 hours.
func (s *WebhooksService) Rotate(ctx context.Context, id string) (string, error) {
	body, err := send[struct {
		Secret string `json:"secret"`
	}](ctx, s.c, http.MethodPost, webhookPath(id)+"/rotate", nil, nil)
	if err != nil {
		return "", err
	}
	return body.Secret, nil
}

// Test sends a webhook.test event to this endpoint only.
func (s *WebhooksService) Test(ctx context.Context, id string) error {
	return s.c.call(ctx, http.MethodPost, webhookPath(id)+"/test", nil, nil, nil)
}

// DeliveriesPage returns one page of an endpoint's deliveries, oldest first.
func (s *WebhooksService) DeliveriesPage(ctx context.Context, id string, opts *DeliveryListOptions) (*Page[WebhookDelivery], error) {
	if opts == nil {
		opts = &DeliveryListOptions{}
	}
	return s.deliveries(id, opts.State)(ctx, opts.PageOptions)
}

// Deliveries iterates over an endpoint's deliveries, oldest first, across pages (and, with
// Follow, as new ones are made).
func (s *WebhooksService) Deliveries(ctx context.Context, id string, opts *DeliveryListOptions) *Iterator[WebhookDelivery] {
	if opts == nil {
		opts = &DeliveryListOptions{}
	}
	return newIterator(ctx, opts.PageOptions, s.deliveries(id, opts.State))
}

func (s *WebhooksService) deliveries(id string, state DeliveryState) pageFunc[WebhookDelivery] {
	fetch := pageFetcher[WebhookDelivery](s.c, webhookPath(id)+"/deliveries", filter("state", string(state)))
	return func(ctx context.Context, opts PageOptions) (*Page[WebhookDelivery], error) {
		opts.Since = "" // deliveries page by cursor only
		return fetch(ctx, opts)
	}
}

// Retry delivers again now.
func (s *WebhooksService) Retry(ctx context.Context, id, deliveryID string) error {
	return s.c.call(ctx, http.MethodPost, webhookPath(id)+"/deliveries/"+escape(deliveryID)+"/retry", nil, nil, nil)
}
