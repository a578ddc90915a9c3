package compat_test

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
	"syscall"
	"time"
)

// startServer runs `warren init` on a fresh SQLite file and `warren serve` on a free port, and
// returns the server's URL and the network's first API key.
func startServer() (url, key string, stop func(), err error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", "", nil, err
	}
	cli := filepath.Join(root, "packages", "cli", "bin", "warren.js")
	dir, err := os.MkdirTemp("", "warren-compat-")
	if err != nil {
		return "", "", nil, err
	}
	db := "sqlite:" + filepath.Join(dir, "warren.db")
	var out bytes.Buffer
	initCmd := exec.Command("node", cli, "init", "--db", db, "--json")
	initCmd.Dir, initCmd.Stdout, initCmd.Stderr = root, &out, os.Stderr
	if err := initCmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", "", nil, fmt.Errorf("warren init: %w", err)
	}
	var created struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || created.APIKey == "" {
		os.RemoveAll(dir)
		return "", "", nil, fmt.Errorf("warren init printed %q", out.String())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return "", "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		os.RemoveAll(dir)
		return "", "", nil, err
	}
	serve := exec.Command("node", cli, "serve", "--db", db, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	serve.Dir, serve.Stdout, serve.Stderr = root, logFile, logFile
	if err := serve.Start(); err != nil {
		os.RemoveAll(dir)
		return "", "", nil, fmt.Errorf("warren serve: %w", err)
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
	url = fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitReady(url, exited); err != nil {
		log, _ := os.ReadFile(logFile.Name())
		stop()
		return "", "", nil, fmt.Errorf("%w\n%s", err, log)
	}
	return url, created.APIKey, stop, nil
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
