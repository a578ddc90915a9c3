package compat_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
	tailscale "tailscale.com/client/tailscale/v2"
)

func TestKeys(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		var req tailscale.CreateKeyRequest
		req.Capabilities.Devices.Create.Reusable = true
		req.Capabilities.Devices.Create.Preauthorized = true
		req.Capabilities.Devices.Create.Tags = []string{"tag:ci"}
		req.ExpirySeconds = 3600
		req.Description = "compat runners"
		key, err := c.Keys().CreateAuthKey(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if key.Key == "" || key.KeyType != "auth" || !key.Capabilities.Devices.Create.Preauthorized ||
			key.Expires.Sub(key.Created) != time.Hour || key.Description != "compat runners" {
			t.Fatalf("CreateAuthKey: %+v", key)
		}
		covered(t, "Keys.CreateAuthKey")
		if w, err := v1.Keys.Get(ctx, key.ID); err != nil || !w.Reusable || !w.PreApproved || !reflect.DeepEqual(w.Tags, []string{"tag:ci"}) {
			t.Fatalf("the key through /v1: %+v, %v", w, err)
		}
		// The key enrolls: with approval on, its devices skip it (preauthorized).
		if _, err := v1.Network.Update(ctx, warren.NetworkUpdate{DeviceApproval: tailscale.PointerTo(true)}); err != nil {
			t.Fatal(err)
		}
		runner, err := enroll(ctx, key.Key, "runner", nil)
		if _, uerr := v1.Network.Update(ctx, warren.NetworkUpdate{DeviceApproval: tailscale.PointerTo(false)}); uerr != nil {
			t.Fatal(uerr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, seen := peers(t, "web")["runner"]; !seen {
			t.Fatal("a device of a preauthorized key is not in web's netmap")
		}

		got, err := c.Keys().Get(ctx, key.ID)
		if err != nil || got.ID != key.ID || got.Key != "" || got.Invalid {
			t.Fatalf("Get: %+v, %v", got, err)
		}
		covered(t, "Keys.Get")
		if listed, err := c.Keys().List(ctx, false); err != nil || !hasKey(listed, key.ID) {
			t.Fatalf("List: %v", err)
		}
		if err := c.Keys().Delete(ctx, key.ID); err != nil {
			t.Fatal(err)
		}
		covered(t, "Keys.Delete")
		if w, err := v1.Keys.Get(ctx, key.ID); err != nil || w.State != "revoked" {
			t.Fatalf("the deleted key through /v1: %+v, %v", w, err)
		}
		active, err := c.Keys().List(ctx, false)
		if err != nil || hasKey(active, key.ID) {
			t.Fatalf("List after Delete still shows the key: %v", err)
		}
		all, err := c.Keys().List(ctx, true)
		if err != nil || !hasKey(all, key.ID) {
			t.Fatalf("List(all) lacks the deleted key: %v", err)
		}
		covered(t, "Keys.List")
		if _, err := c.Keys().Get(ctx, "key_doesnotexist"); !tailscale.IsNotFound(err) {
			t.Fatalf("Get of an unknown key: %v", err)
		}
		if err := c.Devices().Delete(ctx, runner.id); err != nil {
			t.Fatal(err)
		}

		// Create with the default key type is an auth key too.
		var plainReq tailscale.CreateKeyRequest
		plainReq.Description = "plain"
		plainReq.Capabilities.Devices.Create.Tags = []string{"tag:server"}
		plain, err := c.Keys().Create(ctx, plainReq)
		if err != nil || plain.KeyType != "auth" || plain.Capabilities.Devices.Create.Reusable {
			t.Fatalf("Create: %+v, %v", plain, err)
		}
		covered(t, "Keys.Create")
		if err := c.Keys().Delete(ctx, plain.ID); err != nil {
			t.Fatal(err)
		}
		// A life past Warren's longest is refused, as on /v1, in this API's terms.
		var long tailscale.CreateKeyRequest
		long.ExpirySeconds = 400 * 24 * 3600
		long.Capabilities.Devices.Create.Tags = []string{"tag:ci"}
		var apiErr tailscale.APIError
		if _, err := c.Keys().CreateAuthKey(ctx, long); !errors.As(err, &apiErr) || apiErr.Status != 400 ||
			!strings.Contains(apiErr.Message, "365") || !strings.Contains(apiErr.Message, "expirySeconds") {
			t.Fatalf("a key past 365 days: %v", err)
		}
		// As in Tailscale, an OAuth client's auth keys are tagged: their devices have no user.
		untagged, err := c.Keys().CreateAuthKey(ctx, tailscale.CreateKeyRequest{Description: "untagged"})
		if viaOAuth(t) {
			if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, "tags") {
				t.Fatalf("an untagged key of an OAuth client: %v", err)
			}
		} else if err != nil || c.Keys().Delete(ctx, untagged.ID) != nil {
			t.Fatalf("an untagged key of an API key: %v", err)
		}
	})
}

// viaOAuth tells whether eachClient runs t with the OAuth client.
func viaOAuth(t *testing.T) bool { return strings.HasSuffix(t.Name(), "/oauth") }

func TestOAuthClients(t *testing.T) {
	eachClient(t, func(t *testing.T, c *tailscale.Client) {
		ctx := ctxOf(t)
		created, err := c.Keys().CreateOAuthClient(ctx, tailscale.CreateOAuthClientRequest{
			Scopes: []string{"devices:core:read", "users:read"}, Description: "inventory",
		})
		if err != nil || created.KeyType != "client" || !strings.HasPrefix(created.Key, "wrn_client_") ||
			!reflect.DeepEqual(created.Scopes, []string{"devices:core:read", "users:read"}) {
			t.Fatalf("CreateOAuthClient: %+v, %v", created, err)
		}
		covered(t, "Keys.CreateOAuthClient")
		got, err := c.Keys().Get(ctx, created.ID)
		// A client made by an API key (the suite's expires in a day) does not outlive that key.
		if err != nil || got.Key != "" || got.KeyType != "client" || got.Invalid ||
			got.Expires.IsZero() || got.Expires.After(time.Now().Add(25*time.Hour)) {
			t.Fatalf("Get of an OAuth client: %+v, %v", got, err)
		}
		if listed, err := c.Keys().List(ctx, false); err != nil || !hasKey(listed, created.ID) {
			t.Fatalf("List lacks the OAuth client: %v", err)
		}
		// /v1's keys are auth and API keys: an OAuth client is managed through /api/v2 only.
		if keys, err := v1.Keys.List(ctx, nil); err != nil || hasV1Key(keys, created.ID) {
			t.Fatalf("the OAuth client through /v1: %v", err)
		}

		// The new client's own token: its scopes, on /api/v2 and, as Warren's, on /v1.
		base, _ := url.Parse(serverURL)
		inventory := &tailscale.Client{BaseURL: base, Auth: &tailscale.OAuth{ClientID: created.ID, ClientSecret: created.Key}}
		if devices, err := inventory.Devices().List(ctx); err != nil || len(devices) == 0 {
			t.Fatalf("a devices:core:read token lists devices: %v", err)
		}
		if err := inventory.Devices().SetTags(ctx, fleet["web"].id, nil); !isStatus(err, 403) {
			t.Fatalf("a devices:core:read token sets tags: %v", err)
		}
		if _, err := inventory.Keys().List(ctx, false); !isStatus(err, 403) {
			t.Fatalf("a token without auth_keys lists keys: %v", err)
		}

		set, err := c.Keys().SetOAuthClient(ctx, created.ID, tailscale.SetOAuthClientRequest{
			Scopes: []string{"all:read"}, Description: "auditor",
		})
		if err != nil || set.Description != "auditor" || !reflect.DeepEqual(set.Scopes, []string{"all:read"}) {
			t.Fatalf("SetOAuthClient: %+v, %v", set, err)
		}
		covered(t, "Keys.SetOAuthClient")
		token := accessToken(t, created.ID, created.Key)
		auditor, err := warren.NewClient(warren.WithBaseURL(serverURL), warren.WithAPIKey(token))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := auditor.Devices.List(ctx, nil); err != nil {
			t.Fatalf("an all:read token reads /v1: %v", err)
		}
		page, err := v1.Logs.AuditPage(ctx, &warren.AuditLogOptions{Key: created.ID, PageOptions: warren.PageOptions{Since: "1h", Limit: 1000}})
		if err != nil || !auditedAs(page.Entries, "auditor", "/v1/devices") {
			t.Fatalf("the token's /v1 call is not audited with the client's name: %v", err)
		}

		if err := c.Keys().Delete(ctx, created.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := auditor.Devices.List(ctx, nil); err == nil {
			t.Fatal("a deleted client's token still works")
		}
		if gone, err := c.Keys().Get(ctx, created.ID); err != nil || !gone.Invalid {
			t.Fatalf("Get of a deleted OAuth client: %+v, %v", gone, err)
		}
	})
}

func hasV1Key(keys []warren.Key, id string) bool {
	for _, k := range keys {
		if k.ID == id {
			return true
		}
	}
	return false
}

func auditedAs(entries []warren.AuditEntry, name, path string) bool {
	for _, e := range entries {
		if e.KeyName != nil && *e.KeyName == name && e.Path == path && e.Status == http.StatusOK {
			return true
		}
	}
	return false
}

func isStatus(err error, status int) bool {
	var apiErr tailscale.APIError
	return errors.As(err, &apiErr) && apiErr.Status == status
}

// accessToken asks the token endpoint as any OAuth 2.0 library does: a form, Basic credentials.
func accessToken(t *testing.T, id, secret string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequest(http.MethodPost, serverURL+"/api/v2/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var token struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.NewDecoder(res.Body).Decode(&token); err != nil || token.TokenType != "Bearer" || token.ExpiresIn != 3600 {
		t.Fatalf("token endpoint: %d %+v %v", res.StatusCode, token, err)
	}
	return token.AccessToken
}

func hasKey(keys []tailscale.Key, id string) bool {
	for _, k := range keys {
		if k.ID == id {
			return true
		}
	}
	return false
}
