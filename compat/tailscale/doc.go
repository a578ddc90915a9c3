// Package compat drives Tailscale's own API client, tailscale.com/client/tailscale/v2, against
// Warren's /api/v2 on a real `warren serve`. It holds no code of its own: its tests are the
// proof that tools written for Tailscale's API work against Warren unchanged, and
// docs/TAILSCALE.md's coverage table says which client methods they exercise.
package compat
