package compat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
	tailscale "tailscale.com/client/tailscale/v2"
)

// The whole suite shares one server, one network and its fleet: a subnet router advertising
// two prefixes, a web server and a laptop, each enrolled through the native protocol, so that
// every change made through Tailscale's client can be checked in a device's netmap.
var (
	serverURL string
	// v1 is Warren's own client on the same network, the second witness of every change.
	v1 *warren.Client
	// testKey is an API key with scope all whose rate limit was raised through /v1: Tailscale's
	// client never retries a 429, so the suite must not meet one.
	testKey string
	// oauthClient is an OAuth client with scope all (and the tags of the policy below), whose
	// rate limit was raised as it was created, like testKey's.
	oauthClient struct{ id, secret string }
	fleet       = map[string]*device{}
)

type device struct {
	id   string
	node *warren.NodeClient
}

// basePolicy lets the owner's devices and the tagged ones reach each other, and owns the tags
// the tests apply. (Warren refuses "*" to "*:*" as over-permissive.)
const basePolicy = `// the policy of the Tailscale API compatibility suite
{
  "tagOwners": { "tag:server": ["autogroup:admin"], "tag:ci": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:member", "tag:server", "tag:ci"],
      "dst": ["autogroup:member:*", "tag:server:*", "tag:ci:*", "10.0.0.0/8:*"] },
  ],
}
`

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	base, firstKey, stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting warren serve:", err)
		return 1
	}
	defer stop()
	serverURL = base
	if err := prepare(firstKey); err != nil {
		fmt.Fprintln(os.Stderr, "preparing the network:", err)
		return 1
	}
	code := m.Run()
	if code == 0 && !checkCoverage() {
		return 1
	}
	return code
}

func prepare(firstKey string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := warren.NewClient(warren.WithBaseURL(serverURL), warren.WithAPIKey(firstKey))
	if err != nil {
		return err
	}
	k, err := first.Keys.Create(ctx, &warren.CreateKeyRequest{
		Type: warren.KeyTypeAPI, Name: "tailscale-compat", Scopes: []warren.Scope{warren.ScopeAll}, ExpiresIn: "1d", RateLimit: 100000,
	})
	if err != nil {
		return err
	}
	testKey = k.Key
	if v1, err = warren.NewClient(warren.WithBaseURL(serverURL), warren.WithAPIKey(testKey)); err != nil {
		return err
	}
	if _, err := v1.Policy.Set(ctx, basePolicy, ""); err != nil {
		return err
	}
	if err := createOAuthClient(ctx); err != nil {
		return fmt.Errorf("creating the OAuth client: %w", err)
	}
	auth, err := v1.Keys.Create(ctx, &warren.CreateKeyRequest{Reusable: true, Description: "compat fleet"})
	if err != nil {
		return err
	}
	for name, routes := range map[string][]string{"gw": {"10.1.0.0/24", "10.2.0.0/24"}, "web": nil, "laptop": nil} {
		d, err := enroll(ctx, auth.Key, name, routes)
		if err != nil {
			return err
		}
		fleet[name] = d
	}
	return nil
}

// createOAuthClient makes the suite's OAuth client through /api/v2 itself, with Warren's
// rateLimit beside Tailscale's fields (Tailscale's client has no way to send it).
func createOAuthClient(ctx context.Context) error {
	body, _ := json.Marshal(map[string]any{
		"keyType": "client", "scopes": []string{"all"}, "tags": []string{"tag:server", "tag:ci"},
		"description": "tailscale-compat oauth", "rateLimit": 100000,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL+"/api/v2/tailnet/-/keys", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(testKey, "")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var created struct{ ID, Key string }
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d, %v", res.StatusCode, err)
	}
	oauthClient.id, oauthClient.secret = created.ID, created.Key
	return nil
}

// enroll registers a device through the native protocol and keeps its node client.
func enroll(ctx context.Context, authKey, hostname string, routes []string) (*device, error) {
	node, err := warren.NewNodeClient(warren.WithBaseURL(serverURL))
	if err != nil {
		return nil, err
	}
	reg, err := node.Register(ctx, authKey, &warren.RegisterRequest{
		Hostname: hostname, OS: "linux", NodeKey: newNodeKey(), AdvertiseRoutes: routes, ClientVersion: "1.2.3",
	})
	if err != nil {
		return nil, err
	}
	return &device{id: reg.Device.ID, node: node}, nil
}

var nodeKeys = struct {
	sync.Mutex
	n int
}{}

func newNodeKey() string {
	nodeKeys.Lock()
	defer nodeKeys.Unlock()
	nodeKeys.n++
	return fmt.Sprintf("nodekey:%064x", time.Now().UnixNano()+int64(nodeKeys.n))
}

// clients are Tailscale's client once per way of authenticating that the suite covers.
func clients() map[string]*tailscale.Client {
	base, err := url.Parse(serverURL)
	if err != nil {
		panic(err) // serverURL is the server's own URL
	}
	return map[string]*tailscale.Client{
		"api-key": {BaseURL: base, APIKey: testKey},
		"oauth":   {BaseURL: base, Auth: &tailscale.OAuth{ClientID: oauthClient.id, ClientSecret: oauthClient.secret}},
	}
}

// eachClient runs fn once per way of authenticating, as a subtest.
func eachClient(t *testing.T, fn func(t *testing.T, c *tailscale.Client)) {
	names := []string{}
	all := clients()
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { fn(t, all[name]) })
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// peers is the names of a fleet device's netmap peers, sorted, and their tags and allowed IPs.
func peers(t *testing.T, name string) map[string]warren.Peer {
	t.Helper()
	nm, _, err := fleet[name].node.Netmap(ctxOf(t), "")
	if err != nil {
		t.Fatalf("netmap of %s: %v", name, err)
	}
	out := map[string]warren.Peer{}
	for _, p := range nm.Peers {
		out[p.Name] = p
	}
	return out
}

var exercised = struct {
	sync.Mutex
	// methods[method][way]: the method was called, and its effect checked, authenticated that way.
	methods map[string]map[string]bool
}{methods: map[string]map[string]bool{}}

// covered records that a client method was called and its effect checked, with the client of
// the subtest eachClient runs t in.
func covered(t *testing.T, method string) {
	parts := strings.Split(t.Name(), "/")
	if len(parts) < 2 {
		t.Fatalf("covered(%s) outside eachClient", method)
	}
	exercised.Lock()
	defer exercised.Unlock()
	if exercised.methods[method] == nil {
		exercised.methods[method] = map[string]bool{}
	}
	exercised.methods[method][parts[1]] = true
}

// checkCoverage compares docs/TAILSCALE.md's table with what ran: every method of the client's
// resources must be listed, and every one listed as tested must have been exercised with each
// way of authenticating (an API key and an OAuth client's token).
func checkCoverage() bool {
	table, err := coverageTable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "coverage table:", err)
		return false
	}
	ok := true
	for _, method := range clientMethods() {
		status, listed := table[method]
		switch {
		case !listed:
			fmt.Fprintf(os.Stderr, "docs/TAILSCALE.md does not list %s\n", method)
			ok = false
		case status == "tested":
			for way := range clients() {
				if !exercised.methods[method][way] {
					fmt.Fprintf(os.Stderr, "%s is listed as tested but no test exercised it with the %s client\n", method, way)
					ok = false
				}
			}
		}
	}
	return ok
}

// coverageTable reads the rows `| Resource.Method | tested | … |` of docs/TAILSCALE.md.
func coverageTable() (map[string]string, error) {
	f, err := os.Open(filepath.Join("..", "..", "docs", "TAILSCALE.md"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	table := map[string]string{}
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		cells := strings.Split(scan.Text(), "|")
		if len(cells) < 4 {
			continue
		}
		method := strings.Trim(strings.TrimSpace(cells[1]), "`")
		status := strings.TrimSpace(cells[2])
		if strings.Count(method, ".") == 1 && (status == "tested" || strings.HasPrefix(status, "out of scope")) {
			table[method] = status
		}
	}
	return table, scan.Err()
}

// clientMethods lists every exported method of every resource of Tailscale's client.
func clientMethods() []string {
	c := &tailscale.Client{}
	var out []string
	ct := reflect.TypeOf(c)
	for i := 0; i < ct.NumMethod(); i++ {
		m := ct.Method(i)
		res := m.Type.NumIn() == 1 && m.Type.NumOut() == 1 && strings.HasSuffix(m.Type.Out(0).Elem().Name(), "Resource")
		if !res || m.Name == "VIPServices" {
			continue // VIPServices is the deprecated name of Services
		}
		rt := m.Type.Out(0)
		for j := 0; j < rt.NumMethod(); j++ {
			name := rt.Method(j).Name
			if _, promoted := ct.MethodByName(name); promoted {
				continue // the embedded *Client's own methods
			}
			out = append(out, m.Name+"."+name)
		}
	}
	sort.Strings(out)
	return out
}
