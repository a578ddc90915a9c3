package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	warren "github.com/warrenhq/warren/clients/go"
)

func webhookConfig(url, events, enabled string) string {
	return config(`
resource "warren_webhook" "ops" {
  url         = %q
  events      = %s
  description = "Ops alerts"
  enabled     = %s
}
`, url, events, enabled)
}

// webhookOnServer reads the endpoint in state from the server.
func webhookOnServer(t *testing.T, s *terraform.State) (*warren.Webhook, error) {
	rs, ok := s.RootModule().Resources["warren_webhook.ops"]
	if !ok {
		return nil, fmt.Errorf("warren_webhook.ops not in state")
	}
	return apiClient(t).Webhooks.Get(context.Background(), rs.Primary.ID)
}

// sameEvents compares event filters as sets.
func sameEvents(got []string, want ...string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// sendTestEvent sends a webhook.test event to the endpoint and waits, for up to 30 s, until
// done reports that the server has acted on it as expected.
func sendTestEvent(t *testing.T, id, expected string, done func(context.Context, *warren.Client) (bool, error)) error {
	ctx := context.Background()
	c := apiClient(t)
	if err := c.Webhooks.Test(ctx, id); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ok, err := done(ctx, c); ok || err != nil {
			return err
		}
	}
	return fmt.Errorf("within 30 s of a test event, %s did not happen", expected)
}

// waitFailedAttempt waits until the server has tried to deliver a test event and recorded the failure.
func waitFailedAttempt(t *testing.T, id string) error {
	return sendTestEvent(t, id, "a failed attempt", func(ctx context.Context, c *warren.Client) (bool, error) {
		page, err := c.Webhooks.DeliveriesPage(ctx, id, nil)
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(page.Entries, func(d warren.WebhookDelivery) bool {
			return d.Type == "webhook.test" && d.Attempts > 0 && d.LastError != nil
		}), nil
	})
}

// waitDisabled waits until the server has disabled the endpoint after a test event.
func waitDisabled(t *testing.T, id string) error {
	return sendTestEvent(t, id, "disabling the endpoint", func(ctx context.Context, c *warren.Client) (bool, error) {
		w, err := c.Webhooks.Get(ctx, id)
		return err == nil && !w.Enabled, err
	})
}

func TestAccWebhook(t *testing.T) {
	const address = "warren_webhook.ops"
	// Nothing listens on this port: deliveries fail and wait for their retries.
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/hooks/warren", port)
	var id, secret string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy: func(s *terraform.State) error {
			if _, err := apiClient(t).Webhooks.Get(context.Background(), id); !warren.IsNotFound(err) {
				return fmt.Errorf("webhook %s still exists (%v)", id, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				// An event filter the API would refuse (over 64 characters) fails the plan.
				Config:      webhookConfig(url, `["device.`+strings.Repeat("x", 58)+`"]`, "true"),
				PlanOnly:    true,
				ExpectError: errorMatching("string length must be at most 64"),
			},
			{
				Config: webhookConfig(url, `["device.*", "policy.updated"]`, "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectSensitiveValue(address, tfjsonpath.New("secret")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "enabled", "true"),
					resource.TestCheckNoResourceAttr(address, "disabled_reason"),
					resource.TestMatchResourceAttr(address, "secret", regexp.MustCompile(`^whsec_`)),
					func(s *terraform.State) error {
						w, err := webhookOnServer(t, s)
						if err != nil || w.URL != url || !sameEvents(w.Events, "device.*", "policy.updated") ||
							w.Description != "Ops alerts" || !w.Enabled {
							return fmt.Errorf("server has %+v (%v)", w, err)
						}
						id = w.ID
						secret = s.RootModule().Resources[address].Primary.Attributes["secret"]
						return nil
					},
				),
			},
			{
				// The server stores the URL normalised, and events are a set: neither is a change.
				Config:           webhookConfig(strings.Replace(url, "http://", "HTTP://", 1), `["policy.updated", "device.*"]`, "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: webhookConfig(url, `["device.*", "user.*"]`, "false"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrSet(address, "disabled_reason"),
					func(s *terraform.State) error {
						w, err := webhookOnServer(t, s)
						if err != nil || w.ID != id || w.Enabled || w.DisabledReason == nil || !sameEvents(w.Events, "device.*", "user.*") {
							return fmt.Errorf("server has %+v (%v), want the same endpoint disabled with the new events", w, err)
						}
						if got := s.RootModule().Resources[address].Primary.Attributes["secret"]; got != secret {
							return fmt.Errorf("the secret in state changed on update")
						}
						return nil
					},
				),
			},
			{
				// The server never shows the secret again, so an import has none.
				ResourceName:            address,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"secret"},
			},
			importPlansNothing(address, ""),
			{
				PreConfig: outOfBand(t, func(ctx context.Context, c *warren.Client) error {
					on := true
					_, err := c.Webhooks.Update(ctx, id, &warren.UpdateWebhookRequest{Enabled: &on, Events: []string{"*"}})
					return err
				}),
				Config: webhookConfig(url, `["device.*", "user.*"]`, "false"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					w, err := webhookOnServer(t, s)
					if err != nil || w.Enabled || !sameEvents(w.Events, "device.*", "user.*") {
						return fmt.Errorf("server has %+v (%v), want the configuration back", w, err)
					}
					return nil
				},
			},
			{
				// Enabled again, a delivery to the dead port fails and waits for its retry; the
				// endpoint stays as configured.
				Config: webhookConfig(url, `["device.*", "user.*"]`, "true"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(address, "disabled_reason"),
					func(*terraform.State) error { return waitFailedAttempt(t, id) },
				),
			},
			{
				Config:           webhookConfig(url, `["device.*", "user.*"]`, "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Deleted elsewhere: it leaves the state and is created again, with a new secret.
				PreConfig: outOfBand(t, func(ctx context.Context, c *warren.Client) error {
					return c.Webhooks.Delete(ctx, id)
				}),
				Config: webhookConfig(url, `["device.*", "user.*"]`, "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionCreate),
				}},
				Check: func(s *terraform.State) error {
					w, err := webhookOnServer(t, s)
					if err != nil || w.ID == id {
						return fmt.Errorf("server has %+v (%v), want a new endpoint", w, err)
					}
					got := s.RootModule().Resources[address].Primary.Attributes["secret"]
					if got == secret || !strings.HasPrefix(got, "whsec_") {
						return fmt.Errorf("want a new secret in state")
					}
					id, secret = w.ID, got
					return nil
				},
			},
			{
				// A new URL changes the same endpoint in place, and keeps its secret; an event
				// type may hold an underscore.
				Config: webhookConfig(url+"/v2", `["device.key_expired", "user.*"]`, "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPtr(address, "secret", &secret),
					func(s *terraform.State) error {
						w, err := webhookOnServer(t, s)
						if err != nil || w.ID != id || w.URL != url+"/v2" || !sameEvents(w.Events, "device.key_expired", "user.*") {
							return fmt.Errorf("server has %+v (%v), want the same endpoint at the new URL with the new events", w, err)
						}
						return nil
					},
				),
			},
			{
				// Deleted elsewhere between plan and apply: destroying it has nothing left to do.
				Config: config(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroy),
					runBeforeApply(outOfBand(t, func(ctx context.Context, c *warren.Client) error { return c.Webhooks.Delete(ctx, id) })),
				}},
			},
		},
	})
}

// A receiver that answers 410 Gone is disabled by the server; the next plan turns it back on,
// and changes made while it stays disabled keep the server's reason.
func TestAccWebhookGone(t *testing.T) {
	const address = "warren_webhook.ops"
	// The receiver answers 410 only while a step disables the endpoint on purpose. Answering it
	// always would let the events of the apply itself disable the endpoint again before the
	// refresh after it, and the plan would not be empty by a race.
	var goneNow atomic.Bool
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if goneNow.Load() {
			w.WriteHeader(http.StatusGone)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	url := receiver.URL + "/hooks/warren"
	var id string
	// disable makes the receiver gone until the server has disabled the endpoint, then brings
	// it back so nothing that follows disables it again.
	disable := func() {
		goneNow.Store(true)
		defer goneNow.Store(false)
		if err := waitDisabled(t, id); err != nil {
			t.Fatal(err)
		}
	}
	remember := func(s *terraform.State) error {
		id = s.RootModule().Resources[address].Primary.ID
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: webhookConfig(url, `["*"]`, "true"),
				Check:  remember,
			},
			{
				PreConfig: disable,
				Config:    webhookConfig(url, `["*"]`, "true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "enabled", "true"),
					resource.TestCheckNoResourceAttr(address, "disabled_reason"),
					func(s *terraform.State) error {
						w, err := webhookOnServer(t, s)
						if err != nil || !w.Enabled || w.DisabledReason != nil || w.ID != id {
							return fmt.Errorf("server has %+v (%v), want the endpoint enabled again", w, err)
						}
						return nil
					},
				),
			},
			{
				PreConfig: disable,
				Config:    webhookConfig(url, `["device.*"]`, "false"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(address, "enabled", "false"),
					resource.TestMatchResourceAttr(address, "disabled_reason", regexp.MustCompile("410 Gone")),
				),
			},
		},
	})
}
