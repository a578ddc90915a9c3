package provider

import "testing"

func TestSameWebhookURL(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://hooks.example.com", "https://hooks.example.com/", true},
		{"https://Hooks.Example.com:443/warren", "https://hooks.example.com/warren", true},
		{"HTTP://127.0.0.1:80/x", "http://127.0.0.1/x", true},
		{"https://hooks.example.com/a", "https://hooks.example.com/b", false},
		{"https://hooks.example.com:8443/", "https://hooks.example.com/", false},
		{"http://hooks.example.com/", "https://hooks.example.com/", false},
		{"https://hooks.example.com/a?x=1", "https://hooks.example.com/a?x=2", false},
	} {
		if got := sameWebhookURL(c.a, c.b); got != c.same {
			t.Errorf("sameWebhookURL(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func TestNormalizeWebhookURLRefuses(t *testing.T) {
	for _, s := range []string{"ftp://hooks.example.com/", "https:///path", "https://user:pw@hooks.example.com/", "not a url"} {
		if _, err := normalizeWebhookURL(s); err == nil {
			t.Errorf("normalizeWebhookURL(%q) accepted it", s)
		}
	}
}
