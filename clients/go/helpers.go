package warren

import (
	"fmt"
	"time"
)

// Bool returns a pointer to v, for optional fields and filters.
func Bool(v bool) *bool { return &v }

// String returns a pointer to v, for optional fields.
func String(v string) *string { return &v }

// Int returns a pointer to v, for optional fields.
func Int(v int) *int { return &v }

// Ptr returns a pointer to v, for optional fields of the named types:
// UpdateUserRequest{Role: warren.Ptr(warren.RoleAdmin)}.
func Ptr[T any](v T) *T { return &v }

// Duration formats d as the API writes durations (`expiresIn`, `since`): an integer and one
// unit of s, m, h or d, using the largest unit that divides it exactly. Durations under a
// second are rounded up to one second, since the API has no smaller unit.
func Duration(d time.Duration) string {
	seconds := int64((d + time.Second - 1) / time.Second)
	if seconds < 1 {
		seconds = 1
	}
	switch {
	case seconds%86400 == 0:
		return fmt.Sprintf("%dd", seconds/86400)
	case seconds%3600 == 0:
		return fmt.Sprintf("%dh", seconds/3600)
	case seconds%60 == 0:
		return fmt.Sprintf("%dm", seconds/60)
	}
	return fmt.Sprintf("%ds", seconds)
}
