// Package relay checks Warren's embedded DERP relay and STUN responder with Tailscale's own
// client code (tailscale.com/derp/derphttp and tailscale.com/net/stun): the client a real
// tailscaled uses, against a real `warren serve --derp`.
package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"tailscale.com/derp"
	"tailscale.com/derp/derphttp"
	"tailscale.com/net/netmon"
	"tailscale.com/net/stun"
	"tailscale.com/types/key"
)

// server is a running `warren serve --derp` on loopback.
type server struct {
	url      string
	apiKey   string
	stunPort int
}

var (
	servingLine = regexp.MustCompile(`export WARREN_URL=(\S+) WARREN_API_KEY=(\S+)`)
	stunLine    = regexp.MustCompile(`STUN on UDP port (\d+)`)
)

// startWarren starts the CLI from this checkout on a fresh SQLite file and waits for its banner.
func startWarren(t *testing.T) *server {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "packages/cli/bin/warren.js"), "serve",
		"--db", "sqlite:"+filepath.Join(t.TempDir(), "warren.db"), "--port", "0", "--derp", "--derp-stun-port", "0")
	cmd.Env = append(os.Environ(), "WARREN_LOG_LEVEL=warn")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})

	s := &server{}
	found := make(chan error, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			if m := servingLine.FindStringSubmatch(line); m != nil {
				s.url, s.apiKey = m[1], m[2]
			}
			if m := stunLine.FindStringSubmatch(line); m != nil {
				s.stunPort, _ = strconv.Atoi(m[1])
				found <- nil
			}
		}
		found <- errors.New("warren serve ended before printing its relay")
	}()
	select {
	case err := <-found:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("warren serve did not start within 60 s")
	}
	if s.url == "" || s.apiKey == "" {
		t.Fatal("the banner did not print the URL and the first API key")
	}
	return s
}

// call makes one API call with the network's first key and decodes a JSON answer into out.
func (s *server) call(t *testing.T, method, path, bearer string, body, out any) {
	t.Helper()
	payload, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// enroll registers a device whose node key is the public half of a new key, and returns the key.
func (s *server) enroll(t *testing.T, authKey, hostname string) key.NodePrivate {
	t.Helper()
	priv := key.NewNode()
	nodeKey, err := priv.Public().MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	s.call(t, "POST", "/v1/node/register", authKey, map[string]string{
		"hostname": hostname, "os": "linux", "nodeKey": string(nodeKey),
	}, nil)
	return priv
}

func (s *server) authKey(t *testing.T) string {
	t.Helper()
	var created struct {
		Key string `json:"key"`
	}
	s.call(t, "POST", "/v1/keys", s.apiKey, map[string]any{"type": "auth", "reusable": true, "expiresIn": "1h"}, &created)
	return created.Key
}

func connect(t *testing.T, s *server, priv key.NodePrivate) *derphttp.Client {
	t.Helper()
	c, err := derphttp.NewClient(priv, s.url+"/derp", t.Logf, netmon.NewStatic())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect %v: %v", priv.Public().ShortString(), err)
	}
	return c
}

// next returns the next message that is not a keep-alive or the server's info, within 10 s.
func next(t *testing.T, c *derphttp.Client) derp.ReceivedMessage {
	t.Helper()
	got := make(chan derp.ReceivedMessage, 1)
	fail := make(chan error, 1)
	go func() {
		for {
			m, err := c.Recv()
			if err != nil {
				fail <- err
				return
			}
			switch m.(type) {
			case derp.KeepAliveMessage, derp.ServerInfoMessage, derp.HealthMessage:
				continue
			}
			got <- m
			return
		}
	}()
	select {
	case m := <-got:
		return m
	case err := <-fail:
		t.Fatalf("receive: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received within 10 s")
	}
	return nil
}

func TestRelay(t *testing.T) {
	s := startWarren(t)
	authKey := s.authKey(t)
	alice := s.enroll(t, authKey, "alice")
	bob := s.enroll(t, authKey, "bob")
	a := connect(t, s, alice)
	b := connect(t, s, bob)

	t.Run("relays a packet to the addressee, naming its sender", func(t *testing.T) {
		payload := []byte("a wireguard packet, already encrypted end to end")
		if err := a.Send(bob.Public(), payload); err != nil {
			t.Fatal(err)
		}
		m, ok := next(t, b).(derp.ReceivedPacket)
		if !ok {
			t.Fatalf("bob got %T, want a packet", m)
		}
		if m.Source != alice.Public() || !bytes.Equal(m.Data, payload) {
			t.Fatalf("bob got %q from %v, want %q from alice", m.Data, m.Source.ShortString(), payload)
		}
	})

	t.Run("answers a ping with a pong carrying its data", func(t *testing.T) {
		data := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
		if err := a.SendPing(data); err != nil {
			t.Fatal(err)
		}
		if m, ok := next(t, a).(derp.PongMessage); !ok || m != derp.PongMessage(data) {
			t.Fatalf("got %#v, want the pong of %v", m, data)
		}
	})

	t.Run("tells a sender that an unknown addressee is not here", func(t *testing.T) {
		nobody := key.NewNode().Public()
		if err := a.Send(nobody, []byte("hello?")); err != nil {
			t.Fatal(err)
		}
		m, ok := next(t, a).(derp.PeerGoneMessage)
		if !ok || m.Peer != nobody || m.Reason != derp.PeerGoneReasonNotHere {
			t.Fatalf("got %#v, want peer gone (not here) for the unknown key", m)
		}
	})

	t.Run("tells those who sent to a client when it leaves", func(t *testing.T) {
		if err := a.Send(bob.Public(), []byte("still there?")); err != nil {
			t.Fatal(err)
		}
		next(t, b)
		b.Close()
		m, ok := next(t, a).(derp.PeerGoneMessage)
		if !ok || m.Peer != bob.Public() || m.Reason != derp.PeerGoneReasonDisconnected {
			t.Fatalf("got %#v, want peer gone (disconnected) for bob", m)
		}
	})

	t.Run("refuses a node key that is not enrolled", func(t *testing.T) {
		stranger, err := derphttp.NewClient(key.NewNode(), s.url+"/derp", t.Logf, netmon.NewStatic())
		if err != nil {
			t.Fatal(err)
		}
		defer stranger.Close()
		// The relay closes the connection after the client's hello: the handshake or the first
		// receive fails, and nothing is ever delivered.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := stranger.Connect(ctx); err == nil {
			if m, err := stranger.Recv(); err == nil {
				if _, info := m.(derp.ServerInfoMessage); info {
					t.Fatal("the relay accepted a node key that no device has")
				}
			}
		}
	})
}

func TestSTUN(t *testing.T) {
	s := startWarren(t)
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx := stun.NewTxID()
	if _, err := conn.WriteToUDP(stun.Request(tx), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: s.stunPort}); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	gotTx, addr, err := stun.ParseResponse(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	local := conn.LocalAddr().(*net.UDPAddr)
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(local.Port))
	if gotTx != tx || addr != want {
		t.Fatalf("STUN said %v (tx %x), want %v (tx %x)", addr, gotTx, want, tx)
	}
}
