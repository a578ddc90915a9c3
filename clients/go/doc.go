// Package warren is the Go client of the Warren management API.
//
// A Client covers every management call under /v1 (devices, users, the network, the
// policy, keys, routes, the connection and audit logs, events and webhooks); a NodeClient
// covers the node protocol that device agents speak. Both use only the standard library.
//
//	client, err := warren.NewClient() // WARREN_URL and WARREN_API_KEY
//	if err != nil {
//		log.Fatal(err)
//	}
//	devices, err := client.Devices.List(ctx, &warren.DeviceListOptions{Tags: []string{"tag:ci"}})
//
// Every call takes a context.Context first. Every non-2xx answer is returned as a *Error
// carrying the problem's status, code, detail, request id and, for a refused policy, each
// problem's line and column. A 429 is waited out (Retry-After, bounded) and retried, whatever
// the method: Warren refuses it before doing anything. Paged lists (the logs, events, webhook deliveries) are
// Iterators whose All method is an iter.Seq2[T, error].
package warren
