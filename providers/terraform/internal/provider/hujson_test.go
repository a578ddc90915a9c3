package provider

import (
	"strings"
	"testing"
)

func TestSameHuJSON(t *testing.T) {
	base := "// head\n{\n  \"a\": [1, 2], // two\n  \"b\": {\"c\": true},\n}\n"
	cases := []struct {
		name  string
		other string
		same  bool
	}{
		{"identical", base, true},
		{"reindented, keys reordered, no trailing comma", "// head\n{\"b\": {\"c\": true}, \"a\": [1,\n 2] // two\n}", true},
		{"block comment spacing", "/*  head */ {\"a\": [1, 2], /* two */ \"b\": {\"c\": true}}", true},
		{"comment edited", "// head\n{\"a\": [1, 2], // three\n\"b\": {\"c\": true}}", false},
		{"comment removed", "// head\n{\"a\": [1, 2], \"b\": {\"c\": true}}", false},
		{"array order", "// head\n{\"a\": [2, 1], // two\n\"b\": {\"c\": true}}", false},
		{"value changed", "// head\n{\"a\": [1, 2], // two\n\"b\": {\"c\": false}}", false},
		{"number spelling kept exact", "// head\n{\"a\": [1.0, 2], // two\n\"b\": {\"c\": true}}", false},
		{"not HuJSON", "{", false},
	}
	for _, tc := range cases {
		if got := sameHuJSON(base, tc.other); got != tc.same {
			t.Errorf("%s: sameHuJSON = %v, want %v", tc.name, got, tc.same)
		}
	}
}

func TestCommentsIgnoresSlashesInStrings(t *testing.T) {
	got := comments(`{"url": "http://x/*y*/", "s": "a\"//b"} // real`)
	if len(got) != 1 || got[0] != "real" {
		t.Fatalf("comments = %q, want [real]", got)
	}
}

func TestDefaultPolicyIsValidHuJSON(t *testing.T) {
	if _, err := standardJSON(defaultPolicy); err != nil {
		t.Fatal(err)
	}
}

func TestHuJSONSyntaxError(t *testing.T) {
	if p, err := hujsonSyntaxError("{\n  // fine\n  \"acls\": [],\n}\n"); p != nil || err != nil {
		t.Fatalf("valid HuJSON: got %v, %v", p, err)
	}
	p, err := hujsonSyntaxError("{\n  \"acls\": [,\n}\n")
	if err == nil || p == nil || p.Line != 2 || p.Column != 12 || !strings.HasPrefix(p.Msg, "invalid character ','") {
		t.Fatalf("want line 2, column 12, got %+v (%v)", p, err)
	}
}
