//go:build tools

package tools

import (
	_ "tailscale.com/cmd/derper"
	_ "tailscale.com/cmd/tailscale"
	_ "tailscale.com/cmd/tailscaled"
)
