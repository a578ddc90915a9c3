package compat_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// Tailscale's GitOps pusher (tailscale.com/cmd/gitops-pusher, behind its GitOps GitHub Action)
// speaks to the policy endpoints directly, not through the client: it reads the ETag with
// Accept: application/hujson, compares it with the SHA-256 of its file as hujson formats it to
// decide whether anything is to be pushed and whether someone edited the policy elsewhere,
// tests the file through acl/validate with its comments blanked out, and pushes it with
// If-Match set to the ETag it read. This runs the same calls with the same headers.
func TestGitOpsPusherSequence(t *testing.T) {
	ctx := ctxOf(t)
	call := func(method, path, body string, headers map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, serverURL+"/api/v2/tailnet/-/"+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(testKey, "")
		for name, value := range headers {
			req.Header.Set(name, value)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, out
	}
	controlETag := func() string {
		t.Helper()
		res, body := call(http.MethodGet, "acl", "", map[string]string{"Accept": "application/hujson"})
		etag := res.Header.Get("ETag")
		if res.StatusCode != http.StatusOK || len(etag) < 2 {
			t.Fatalf("GET acl: %d, ETag %q, %s", res.StatusCode, etag, body)
		}
		return etag[1 : len(etag)-1]
	}
	type problems struct {
		Message string `json:"message"`
		Data    []struct {
			User   string   `json:"user"`
			Errors []string `json:"errors"`
		} `json:"data"`
	}
	validate := func(file []byte) problems {
		t.Helper()
		standard, err := hujson.Standardize(append([]byte(nil), file...))
		if err != nil {
			t.Fatal(err)
		}
		res, body := call(http.MethodPost, "acl/validate", string(standard), map[string]string{"Content-Type": "application/hujson"})
		var out problems
		if err := json.Unmarshal(body, &out); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("validate: %d, %s, %v", res.StatusCode, body, err)
		}
		return out
	}
	push := func(file []byte, etag string) (int, []byte) {
		t.Helper()
		res, body := call(http.MethodPost, "acl", string(file), map[string]string{
			"Content-Type": "application/hujson", "If-Match": `"` + etag + `"`,
		})
		return res.StatusCode, body
	}
	t.Cleanup(func() {
		if _, err := v1.Policy.Set(ctxOf(t), basePolicy, ""); err != nil {
			t.Errorf("restoring the base policy: %v", err)
		}
	})

	file := formatted(t, basePolicy+"\n")
	file = bytes.Replace(file, []byte(`"acls"`), []byte(`"tests": [{"src": "tag:server", "accept": ["tag:ci:22"]}],
	"acls"`), 1)
	file = formatted(t, string(file))
	sum := sha256.Sum256(file)
	local := hex.EncodeToString(sum[:])
	if p := validate(file); p.Message != "" || len(p.Data) != 0 {
		t.Fatalf("validate of a valid file: %+v", p)
	}
	if status, body := push(file, controlETag()); status != http.StatusOK {
		t.Fatalf("push: %d %s", status, body)
	}
	if got := controlETag(); got != local {
		t.Fatalf("after a push the ETag is %s, the file's digest %s: the pusher would push again and warn of an outside edit", got, local)
	}

	// A failing test: "test(s) failed", the problem under the test's src, nothing stored.
	failing := bytes.Replace(file, []byte(`"tag:ci:22"`), []byte(`"192.0.2.1:22"`), 1)
	p := validate(failing)
	if p.Message != "test(s) failed" || len(p.Data) != 1 || p.Data[0].User != "tag:server" || len(p.Data[0].Errors) == 0 {
		t.Fatalf("validate of a failing test: %+v", p)
	}
	if status, _ := push(failing, local); status != http.StatusBadRequest || controlETag() != local {
		t.Fatalf("push of a failing test: %d", status)
	}
	// A stale ETag: 412, with a message the pusher prints.
	status, body := push(file, strings.Repeat("0", 64))
	var refused problems
	if err := json.Unmarshal(body, &refused); err != nil || status != http.StatusPreconditionFailed || refused.Message == "" {
		t.Fatalf("push with a stale ETag: %d %s", status, body)
	}
}

// formatted is text as hujson formats it, which is what the pusher takes the digest of.
func formatted(t *testing.T, text string) []byte {
	t.Helper()
	v, err := hujson.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	v.Format()
	return v.Pack()
}
