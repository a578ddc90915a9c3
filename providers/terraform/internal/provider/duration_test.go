package provider

import (
	"testing"
	"time"
)

func TestDurations(t *testing.T) {
	for text, want := range map[string]time.Duration{"90s": 90 * time.Second, "15m": 15 * time.Minute, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour} {
		got, err := parseDuration(text)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, bad := range []string{"", "1w", "1.5h", "24", "h", "-1d", "1234567890s"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q) succeeded", bad)
		}
	}
	for d, want := range map[time.Duration]string{24 * time.Hour: "1d", 36 * time.Hour: "36h", 90 * time.Second: "90s", 2*time.Hour + 400*time.Millisecond: "2h"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	if !sameDuration("1d", "24h") || sameDuration("1d", "25h") || sameDuration("1d", "x") {
		t.Error("sameDuration compares lengths")
	}
}

func TestKeyExpiries(t *testing.T) {
	for _, same := range [][2]string{{"180d", "4320h"}, {"0", "0"}, {"0", "0d"}, {"1d", "86400s"}} {
		if !sameKeyExpiry(same[0], same[1]) {
			t.Errorf("sameKeyExpiry(%q, %q) = false", same[0], same[1])
		}
	}
	for _, differ := range [][2]string{{"180d", "181d"}, {"0", "1s"}, {"0", "never"}, {"x", "x"}} {
		if sameKeyExpiry(differ[0], differ[1]) {
			t.Errorf("sameKeyExpiry(%q, %q) = true", differ[0], differ[1])
		}
	}
	for _, bad := range []string{"", "never", "00", "1w", "-1d"} {
		if err := keyExpiryKind.check(bad); err == nil {
			t.Errorf("key expiry %q accepted", bad)
		}
	}
}
