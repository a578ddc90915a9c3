package warren_test

import (
	"strings"
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

// badPolicy refers to an undefined group on its line 4.
const badPolicy = `{
  "acls": [
    { "action": "accept",
      "src": ["group:nobody"], "dst": ["*:22"] },
  ],
}
`

func TestPolicy(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	t.Cleanup(func() {
		if _, err := c.Policy.Set(testContext(t), basePolicy, ""); err != nil {
			t.Errorf("restoring the base policy: %v", err)
		}
	})

	text, err := c.Policy.GetText(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.Text, "// the policy of the Go client's tests") || text.ETag == "" {
		t.Fatalf("text %q, ETag %q", text.Text, text.ETag)
	}
	doc, err := c.Policy.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		TagOwners map[string][]string `json:"tagOwners"`
	}
	if err := doc.Decode(&parsed); err != nil {
		t.Fatal(err)
	}
	if doc.ETag != text.ETag || len(parsed.TagOwners["tag:ci"]) != 1 {
		t.Errorf("JSON form %s with ETag %q, text ETag %q", doc.JSON, doc.ETag, text.ETag)
	}

	t.Run("validate", func(t *testing.T) {
		ok, err := c.Policy.Validate(ctx, text.Text)
		if err != nil || !ok.Valid || len(ok.Errors) != 0 {
			t.Fatalf("valid policy: %+v, %v", ok, err)
		}
		bad, err := c.Policy.Validate(ctx, badPolicy)
		if err != nil {
			t.Fatal(err)
		}
		if bad.Valid || len(bad.Errors) != 1 || bad.Errors[0].Line != 4 || !strings.Contains(bad.Errors[0].Msg, "group:nobody") {
			t.Fatalf("invalid policy: %+v", bad)
		}
	})

	t.Run("validate reports each policy test", func(t *testing.T) {
		withTests := strings.Replace(text.Text, `"acls": [`, `"tests": [
    { "src": "tag:ci", "accept": ["tag:server:22"] },
    { "src": "tag:server", "accept": ["tag:ci:22"] },
  ],
  "acls": [`, 1)
		result, err := c.Policy.Validate(ctx, withTests)
		if err != nil {
			t.Fatal(err)
		}
		if result.Valid || len(result.Tests) != 2 {
			t.Fatalf("result %+v", result)
		}
		pass, fail := result.Tests[0], result.Tests[1]
		if !pass.Passed || pass.Src != "tag:ci" || len(pass.Failures) != 0 {
			t.Errorf("passing test %+v", pass)
		}
		if fail.Passed || fail.Src != "tag:server" || fail.Line != pass.Line+1 || len(fail.Failures) != 1 ||
			fail.Failures[0] != result.Errors[0] || !strings.Contains(fail.Failures[0].Msg, "expected accept") {
			t.Errorf("failing test %+v, errors %+v", fail, result.Errors)
		}
	})

	t.Run("set refuses an invalid policy with its lines", func(t *testing.T) {
		_, err := c.Policy.Set(ctx, badPolicy, "")
		e := wantError(t, err, 400, warren.CodePolicyInvalid)
		if len(e.Errors) != 1 || e.Errors[0].Line != 4 || e.Errors[0].Column < 1 {
			t.Fatalf("problems %+v", e.Errors)
		}
		if !strings.Contains(e.Error(), "line 4") {
			t.Errorf("message without the line: %v", e)
		}
		after, err := c.Policy.GetText(ctx)
		if err != nil || after.ETag != text.ETag {
			t.Errorf("a refused policy changed the stored one: %+v, %v", after, err)
		}
	})

	t.Run("set with If-Match", func(t *testing.T) {
		next := strings.Replace(text.Text, "// the policy", "// edited: the policy", 1)
		stored, err := c.Policy.Set(ctx, next, text.ETag)
		if err != nil {
			t.Fatal(err)
		}
		if stored.ETag == "" || stored.ETag == text.ETag || len(stored.JSON) == 0 {
			t.Fatalf("stored %s with ETag %q", stored.JSON, stored.ETag)
		}
		_, err = c.Policy.Set(ctx, text.Text, text.ETag)
		wantError(t, err, 412, warren.CodePreconditionFailed)
		if !warren.IsPreconditionFailed(err) {
			t.Errorf("IsPreconditionFailed(%v) is false", err)
		}
		current, err := c.Policy.GetText(ctx)
		if err != nil || current.Text != next || current.ETag != stored.ETag {
			t.Errorf("after a stale If-Match: %+v, %v", current, err)
		}
	})

	t.Run("history", func(t *testing.T) {
		versions, err := c.Policy.History(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(versions) < 3 || versions[0].Version <= versions[1].Version || versions[0].Created.IsZero() {
			t.Fatalf("history %+v", versions)
		}
		old, err := c.Policy.Version(ctx, versions[1].Version)
		if err != nil {
			t.Fatal(err)
		}
		if old.Text != text.Text || old.ETag != versions[1].ETag {
			t.Errorf("version %d: %q with ETag %q, want %q", versions[1].Version, old.Text, old.ETag, versions[1].ETag)
		}
		_, err = c.Policy.Version(ctx, 99999)
		wantError(t, err, 404, warren.CodeNotFound)
	})
}
