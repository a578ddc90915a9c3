package warren_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// The suite runs against a real server: `warren init` makes a network and its first key in a
// fresh SQLite file, and `warren serve` serves it on a free port for the whole run.
var (
	serverURL string
	adminKey  string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test server:", err)
		return 1
	}
	defer stop()
	// The examples read the environment like any program would.
	os.Setenv("WARREN_URL", serverURL)
	os.Setenv("WARREN_API_KEY", adminKey)
	if err := prepareNetwork(); err != nil {
		fmt.Fprintln(os.Stderr, "preparing the test network:", err)
		return 1
	}
	return m.Run()
}

// basePolicy defines the tags the tests give to keys and devices; a test that stores another
// policy puts this one back.
const basePolicy = `// the policy of the Go client's tests
{
  "tagOwners": { "tag:ci": ["autogroup:admin"], "tag:server": ["autogroup:admin"], "tag:linux": ["autogroup:admin"],
                 "tag:build": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["autogroup:admin", "tag:ci"], "dst": ["*:*"] },
  ],
}
`

// prepareNetwork swaps the first key for one whose rate limit the whole suite cannot reach
// (the default 100 a minute would make later tests wait), and stores the base policy.
func prepareNetwork() error {
	c, err := warren.NewClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{
		Type: warren.KeyTypeAPI, Name: "go-tests", Scopes: []warren.Scope{warren.ScopeAll}, ExpiresIn: "30d", RateLimit: 100000,
	})
	if err != nil {
		return err
	}
	adminKey = k.Key
	os.Setenv("WARREN_API_KEY", adminKey)
	c, err = warren.NewClient()
	if err != nil {
		return err
	}
	if _, err = c.Policy.Set(ctx, basePolicy, ""); err != nil {
		return err
	}
	return enrollExampleDevice(ctx, c)
}

// enrollExampleDevice gives the examples a device of their own to find: build-1, tagged
// tag:build, with one connection in the log.
func enrollExampleDevice(ctx context.Context, c *warren.Client) error {
	k, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{Tags: []string{"tag:build"}, Description: "examples"})
	if err != nil {
		return err
	}
	node, err := warren.NewNodeClient()
	if err != nil {
		return err
	}
	reg, err := node.Register(ctx, k.Key, &warren.RegisterRequest{
		Hostname: "build-1", OS: "linux", NodeKey: "nodekey:" + strings.Repeat("ab", 32),
	})
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	_, err = node.ReportConnections(ctx, []warren.ReportedConnection{{
		Start: now.Add(-time.Second), End: now, Proto: "udp",
		Src:     warren.ReportedEndpoint{Addr: reg.Device.Addresses[0] + ":41000"},
		Dst:     warren.ReportedEndpoint{Addr: "192.0.2.53:53"},
		TxBytes: 80, RxBytes: 120, TxPackets: 1, RxPackets: 1,
	}})
	return err
}

func startServer() (stop func(), err error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	cli := filepath.Join(root, "packages", "cli", "bin", "warren.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("no warren command at %s: %w", cli, err)
	}
	dir, err := os.MkdirTemp("", "warren-go-test-")
	if err != nil {
		return nil, err
	}
	db := "sqlite:" + filepath.Join(dir, "warren.db")

	var out bytes.Buffer
	initCmd := exec.Command("node", cli, "init", "--db", db, "--json")
	initCmd.Dir, initCmd.Stdout, initCmd.Stderr = root, &out, os.Stderr
	if err := initCmd.Run(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("warren init: %w", err)
	}
	var created struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || created.APIKey == "" {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("warren init printed %q", out.String())
	}
	adminKey = created.APIKey

	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Webhook tests deliver to a receiver on loopback over plain http, which only this allows.
	serve := exec.Command("node", cli, "serve", "--db", db, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--webhooks-allow-private")
	serve.Dir, serve.Stdout, serve.Stderr = root, logFile, logFile
	if err := serve.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("warren serve: %w", err)
	}
	exited := make(chan struct{})
	go func() { serve.Wait(); close(exited) }()
	stop = func() {
		serve.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			serve.Process.Kill()
			<-exited
		}
		logFile.Close()
		os.RemoveAll(dir)
	}
	serverURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitReady(serverURL, exited); err != nil {
		stop()
		log, _ := os.ReadFile(logFile.Name())
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return stop, nil
}

// freePort asks the kernel for a free port and releases it for the server to take.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitReady(base string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("warren serve exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("warren serve not ready at %s within a minute", base)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
