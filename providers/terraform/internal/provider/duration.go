package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// durationKind is an API duration: an integer and one unit of s, m, h or d ("90s", "24h",
// "7d"). Values of the same length are equal ("1d" == "24h"), so a key imported with its
// lifetime written in another unit does not need replacing.
var durationKind = &stringKind{
	name:       "duration",
	equivalent: sameDuration,
	check: func(s string) error {
		_, err := parseDuration(s)
		return err
	},
	invalid: "Invalid duration",
}

// keyExpiryKind is the network's nodeKeyExpiry: an API duration, or "0" for logins that never
// expire. "180d" and "4320h" are the same lifetime, as are "0" and "0d".
var keyExpiryKind = &stringKind{
	name:       "key expiry",
	equivalent: sameKeyExpiry,
	check: func(s string) error {
		_, err := parseKeyExpiry(s)
		return err
	},
	invalid: "Invalid key expiry",
}

// durationPattern is the API's DURATION_PATTERN (packages/contract/src/formats.ts).
var durationPattern = regexp.MustCompile(`^([0-9]{1,9})([smhd])$`)

var durationUnits = []struct {
	suffix string
	length time.Duration
}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}}

// parseDuration reads an API duration.
func parseDuration(s string) (time.Duration, error) {
	m := durationPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a duration: use an integer and one unit of s, m, h, d (e.g. 90s, 15m, 24h, 7d)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, err
	}
	for _, u := range durationUnits {
		if u.suffix == m[2] {
			return time.Duration(n) * u.length, nil
		}
	}
	return 0, fmt.Errorf("unknown unit in %q", s)
}

// formatDuration writes d in the largest unit that holds it exactly, rounded to seconds.
func formatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	for _, u := range durationUnits {
		if d%u.length == 0 {
			return strconv.FormatInt(int64(d/u.length), 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// sameDuration reports whether two API durations have the same length.
func sameDuration(a, b string) bool {
	da, errA := parseDuration(a)
	db, errB := parseDuration(b)
	return errA == nil && errB == nil && da == db
}

// parseKeyExpiry reads a key expiry: "0" (never, a zero length) or an API duration.
func parseKeyExpiry(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := parseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a key expiry: use 0 for never, or an integer and one unit of s, m, h, d (e.g. 180d)", s)
	}
	return d, nil
}

// sameKeyExpiry reports whether two key expiries are the same lifetime.
func sameKeyExpiry(a, b string) bool {
	da, errA := parseKeyExpiry(a)
	db, errB := parseKeyExpiry(b)
	return errA == nil && errB == nil && da == db
}
