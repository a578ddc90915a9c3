package provider

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
	"syscall"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// TestMain starts a real `warren serve` on loopback with a fresh SQLite file when acceptance
// tests run (TF_ACC set), and points the provider at it through WARREN_URL / WARREN_API_KEY.
func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") == "" {
		os.Exit(m.Run())
	}
	stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting warren serve:", err)
		os.Exit(1)
	}
	// OpenTofu and Terraform both accept the provider's registry.terraform.io address; the
	// acceptance framework reattaches the in-process provider under it, so nothing is downloaded.
	if initialPolicy, err = readPolicyText(); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "reading the new network's policy:", err)
		os.Exit(1)
	}
	setDefaultEnv("TF_ACC_PROVIDER_HOST", "registry.terraform.io")
	setDefaultEnv("TF_ACC_PROVIDER_NAMESPACE", "warrenhq")
	code := m.Run()
	stop()
	os.Exit(code)
}

// initialPolicy is the policy of the test network before any test ran: the server's default.
var initialPolicy string

func readPolicyText() (string, error) {
	c, err := warren.NewClient()
	if err != nil {
		return "", err
	}
	p, err := c.Policy.GetText(context.Background())
	if err != nil {
		return "", err
	}
	return p.Text, nil
}

func setDefaultEnv(name, value string) {
	if os.Getenv(name) == "" {
		os.Setenv(name, value)
	}
}

// repoRoot is the checkout's root, where packages/cli/bin/warren.js lives.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "packages", "cli", "bin", "warren.js")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("packages/cli/bin/warren.js not found above the working directory")
		}
		dir = parent
	}
}

// startServer runs `warren init --json` on a new database, then `warren serve` on a free port,
// and waits for /readyz. stop ends the server and removes the database.
func startServer() (stop func(), err error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "warren-tf-")
	if err != nil {
		return nil, err
	}
	db := "sqlite:" + filepath.Join(tmp, "warren.db")
	cli := filepath.Join(root, "packages", "cli", "bin", "warren.js")
	out, err := exec.Command("node", cli, "init", "--db", db, "--json").Output()
	if err != nil {
		return nil, fmt.Errorf("warren init: %w", err)
	}
	var created struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &created); err != nil || created.APIKey == "" {
		return nil, fmt.Errorf("warren init printed %q", out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// --webhooks-allow-private lets the webhook tests aim at http://127.0.0.1, where nothing
	// listens: deliveries fail and are retried later, which must disturb nothing else.
	cmd := exec.Command("node", cli, "serve", "--db", db, "--host", "127.0.0.1", "--port", fmt.Sprint(port),
		"--webhooks-allow-private")
	cmd.Dir = tmp
	cmd.SysProcAttr = serverProcAttr()
	logFile, err := os.Create(filepath.Join(tmp, "serve.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		_ = logFile.Close()
		_ = os.RemoveAll(tmp)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitReady(url, 90*time.Second); err != nil {
		log, _ := os.ReadFile(logFile.Name())
		stop()
		return nil, fmt.Errorf("%w; server output:\n%s", err, log)
	}
	// An empty CLI configuration of its own keeps the developer's (dev_overrides of this very
	// provider, a missing file named by TF_CLI_CONFIG_FILE) out of the tests.
	cliConfig := filepath.Join(tmp, "cli.tfrc")
	if err := os.WriteFile(cliConfig, nil, 0o600); err != nil {
		stop()
		return nil, err
	}
	os.Setenv("TF_CLI_CONFIG_FILE", cliConfig)
	os.Setenv("WARREN_URL", url)
	// The suite makes a few hundred calls a minute; a key of its own with a raised rate limit
	// keeps it from waiting out 429s (which the client would, correctly, but slowly).
	key, err := suiteKey(created.APIKey)
	if err != nil {
		stop()
		return nil, err
	}
	os.Setenv("WARREN_API_KEY", key)
	return stop, nil
}

// suiteKey creates an `all` key with a high rate limit using the network's first key.
func suiteKey(first string) (string, error) {
	c, err := warren.NewClient(warren.WithAPIKey(first))
	if err != nil {
		return "", err
	}
	k, err := c.Keys.Create(context.Background(), &warren.CreateKeyRequest{
		Type: warren.KeyTypeAPI, Name: "acceptance-tests", Scopes: []warren.Scope{warren.ScopeAll}, ExpiresIn: "89d", RateLimit: 100000,
	})
	if err != nil {
		return "", err
	}
	return k.Key, nil
}

// freePort asks the kernel for a port that is free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitReady(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/readyz did not answer 200 within %s", url, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
