package warren_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// TestNoSecretInWhatAClientPrints logs a Client and a NodeClient the ways programs do, and
// reads the errors of a server URL that is wrong or unreachable: neither the key, nor the node
// credential, nor a password in the URL may appear.
func TestNoSecretInWhatAClientPrints(t *testing.T) {
	const key, token, password = "wrn_api_leakcheck", "wrn_node_leakcheck", "hunter2"
	c, err := warren.NewClient(warren.WithBaseURL("http://ops:"+password+"@127.0.0.1:9"), warren.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}
	n, err := warren.NewNodeClient(warren.WithBaseURL("http://127.0.0.1:9"), warren.WithNodeToken(token))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, unreachable := c.Network.Get(ctx)
	_, notHTTP := warren.NewClient(warren.WithBaseURL("ftp://ops:"+password+"@example.com"), warren.WithAPIKey(key))
	_, notURL := warren.NewClient(warren.WithBaseURL("http://ops:"+password+"@[::1"), warren.WithAPIKey(key))
	printed := map[string]string{
		"%v":        fmt.Sprintf("%v", c),
		"%+v":       fmt.Sprintf("%+v", c),
		"%#v":       fmt.Sprintf("%#v", c),
		"node %+v":  fmt.Sprintf("%+v", n),
		"node %#v":  fmt.Sprintf("%#v", n),
		"BaseURL":   c.BaseURL(),
		"dial":      fmt.Sprint(unreachable),
		"not http":  fmt.Sprint(notHTTP),
		"not a URL": fmt.Sprint(notURL),
	}
	for how, text := range printed {
		for _, secret := range []string{key, token, password} {
			if strings.Contains(text, secret) {
				t.Errorf("%s prints %q", how, text)
			}
		}
	}
	if unreachable == nil || notHTTP == nil || notURL == nil {
		t.Errorf("errors expected: %v, %v, %v", unreachable, notHTTP, notURL)
	}
}
