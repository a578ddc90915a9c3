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

var durationPattern = regexp.MustCompile(`^([0-9]+)([smhd])$`)

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
