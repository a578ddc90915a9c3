module github.com/warrenhq/warren/compat/tailscale

go 1.24.0

replace github.com/warrenhq/warren/clients/go => ../../clients/go

require (
	github.com/tailscale/hujson v0.0.0-20220506213045-af5ed07155e5
	github.com/warrenhq/warren/clients/go v0.0.0-00010101000000-000000000000
	tailscale.com/client/tailscale/v2 v2.12.0
)

require golang.org/x/oauth2 v0.34.0 // indirect
