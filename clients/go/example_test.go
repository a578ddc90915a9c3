package warren_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// The examples run against the suite's server: WARREN_URL and WARREN_API_KEY are set by
// TestMain as they would be in a shell.

func Example() {
	ctx := context.Background()
	client, err := warren.NewClient() // WARREN_URL and WARREN_API_KEY
	if err != nil {
		log.Fatal(err)
	}
	devices, err := client.Devices.List(ctx, &warren.DeviceListOptions{Tags: []string{"tag:build"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range devices {
		fmt.Println(d.Name, d.Tags)
	}
	// Output: build-1 [tag:build]
}

func ExampleNewClient() {
	client, err := warren.NewClient(
		warren.WithBaseURL(os.Getenv("WARREN_URL")),
		warren.WithAPIKey(os.Getenv("WARREN_API_KEY")),
		warren.WithMaxRetries(5),                // wait out up to five 429s…
		warren.WithMaxRetryWait(10*time.Second), // …of at most ten seconds each
		warren.WithUserAgent("deploy-bot/1.0"),
	)
	if err != nil {
		log.Fatal(err)
	}
	network, err := client.Network.Get(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(network.Name, network.Plan)
	// Output: default premium
}

func ExampleError() {
	client, err := warren.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Devices.Get(context.Background(), "dev_nope")
	var apiErr *warren.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code, apiErr.Detail)
	}
	fmt.Println(warren.IsNotFound(err))
	// Output:
	// 404 not_found device dev_nope does not exist
	// true
}

func ExamplePolicyService_Validate() {
	client, err := warren.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	draft := `{
  "acls": [
    { "action": "accept", "src": ["group:ops"], "dst": ["*:22"] },
  ],
}`
	result, err := client.Policy.Validate(context.Background(), draft)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("valid:", result.Valid)
	for _, p := range result.Errors {
		fmt.Printf("line %d, column %d: %s\n", p.Line, p.Column, p.Msg)
	}
	// Output:
	// valid: false
	// line 3, column 35: group "group:ops" is not defined
}

func ExamplePolicyService_Set() {
	ctx := context.Background()
	client, err := warren.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	current, err := client.Policy.GetText(ctx) // HuJSON, comments kept, and its ETag
	if err != nil {
		log.Fatal(err)
	}
	// If-Match: refused with 412 if someone changed the policy since it was read.
	stored, err := client.Policy.Set(ctx, current.Text, current.ETag)
	if warren.IsPreconditionFailed(err) {
		log.Fatal("the policy changed meanwhile; read it again")
	}
	if err != nil {
		log.Fatal(err) // a *warren.Error with every problem's line in Errors
	}
	fmt.Println(stored.ETag == current.ETag) // the ETag is a digest of the text
	// Output: true
}

func ExampleLogsService_Audit() {
	ctx := context.Background()
	client, err := warren.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	_, _ = client.Devices.Get(ctx, "dev_audited")

	it := client.Logs.Audit(ctx, &warren.AuditLogOptions{PageOptions: warren.PageOptions{Since: "1h", Limit: 50}})
	for e, err := range it.All() {
		if err != nil {
			log.Fatal(err)
		}
		if e.Path == "/v1/devices/dev_audited" {
			fmt.Println(e.Method, e.Path, e.Status)
		}
	}
	fmt.Println(it.Cursor() != "") // pass it as PageOptions.Cursor later to read only what arrived since
	// Output:
	// GET /v1/devices/dev_audited 404
	// true
}

func ExampleLogsService_Connections() {
	client, err := warren.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	devices, err := client.Devices.List(context.Background(), &warren.DeviceListOptions{Tags: []string{"tag:build"}})
	if err != nil || len(devices) == 0 {
		log.Fatal("no build device: ", err)
	}

	// Follow tails the log until the context ends (here after two seconds).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	it := client.Logs.Connections(ctx, &warren.ConnectionLogOptions{
		Device:      devices[0].ID,
		PageOptions: warren.PageOptions{Since: "1h", Follow: true, PollInterval: 500 * time.Millisecond},
	})
	for it.Next() {
		e := it.Entry()
		fmt.Println(e.Proto, e.Dst.Addr, e.TxBytes, e.RxBytes)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output: udp 192.0.2.53:53 80 120
}

func ExampleNodeClient() {
	ctx := context.Background()
	admin, err := warren.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	authKey, err := admin.Keys.Create(ctx, &warren.CreateKeyRequest{Ephemeral: true, ExpiresIn: "1h"})
	if err != nil {
		log.Fatal(err)
	}

	node, err := warren.NewNodeClient() // WARREN_URL
	if err != nil {
		log.Fatal(err)
	}
	reg, err := node.Register(ctx, authKey.Key, &warren.RegisterRequest{
		Hostname: "agent-1", OS: "linux", NodeKey: "nodekey:" + fmt.Sprintf("%064x", 1),
	})
	if err != nil {
		log.Fatal(err)
	}
	hb, err := node.Heartbeat(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	netmap, changed, err := node.Netmap(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	_, changedAgain, err := node.Netmap(ctx, netmap.ETag) // 304: nothing new
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reg.Device.Name, hb.Online, changed, changedAgain)
	// Output: agent-1 true true false
}
