package warren_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

func TestNodeProtocol(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t)
	a, regA := enroll(t, c, "node-a", &warren.CreateKeyRequest{Tags: []string{"tag:ci"}})
	_, regB := enroll(t, c, "node-b", &warren.CreateKeyRequest{Tags: []string{"tag:server"}})
	if !strings.HasPrefix(a.Token(), "wrn_node_") || a.Token() != regA.NodeToken {
		t.Fatalf("token %q", a.Token())
	}

	hb, err := a.Heartbeat(ctx, &warren.HeartbeatRequest{AdvertiseRoutes: []string{"10.88.0.0/24"}})
	if err != nil || !hb.Online {
		t.Fatalf("heartbeat %+v, %v", hb, err)
	}
	routes, err := c.Routes.List(ctx, &warren.RouteListOptions{Device: regA.Device.ID})
	if err != nil || len(routes) != 1 || routes[0].Prefix != "10.88.0.0/24" {
		t.Fatalf("advertised by heartbeat: %+v, %v", routes, err)
	}
	if _, err := a.Heartbeat(ctx, &warren.HeartbeatRequest{AdvertiseRoutes: []string{}}); err != nil {
		t.Fatal(err)
	}
	routes, err = c.Routes.List(ctx, &warren.RouteListOptions{Device: regA.Device.ID})
	if err != nil || len(routes) != 1 || routes[0].Advertised {
		t.Errorf("an empty list withdraws the route: %+v, %v", routes, err)
	}

	t.Run("netmap", func(t *testing.T) {
		nm, changed, err := a.Netmap(ctx, "")
		if err != nil || !changed {
			t.Fatalf("netmap %+v, %v, %v", nm, changed, err)
		}
		if nm.Self.ID != regA.Device.ID || nm.ETag == "" || !slices.ContainsFunc(nm.Peers, func(p warren.Peer) bool { return p.ID == regB.Device.ID }) {
			t.Fatalf("tag:ci reaches everything, yet netmap is %+v", nm)
		}
		again, changed, err := a.Netmap(ctx, nm.ETag)
		if err != nil || changed || again != nil {
			t.Errorf("unchanged netmap: %+v, %v, %v", again, changed, err)
		}
	})

	t.Run("follow netmap", func(t *testing.T) {
		deltas := &netmapDeltas{}
		follower, err := warren.NewNodeClient(warren.WithBaseURL(serverURL), warren.WithNodeToken(a.Token()),
			warren.WithHTTPClient(&http.Client{Transport: deltas}))
		if err != nil {
			t.Fatal(err)
		}
		held, changed, err := follower.FollowNetmap(ctx, nil)
		if err != nil || !changed {
			t.Fatalf("first map: %+v, %v, %v", held, changed, err)
		}
		_, regC := enroll(t, c, "node-c", &warren.CreateKeyRequest{Tags: []string{"tag:server"}})
		next, changed, err := follower.FollowNetmap(ctx, held)
		if err != nil || !changed || next.Version <= held.Version {
			t.Fatalf("after a new peer: %+v, %v, %v", next, changed, err)
		}
		full, _, err := a.Netmap(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := peerIDs(next.Peers), peerIDs(full.Peers); !slices.Equal(got, want) || !slices.Contains(got, regC.Device.ID) {
			t.Errorf("delta applied gives peers %v, the full map has %v", got, want)
		}
		if deltas.n.Load() == 0 {
			t.Errorf("the server sent no delta: the full map was fetched again")
		}
		same, changed, err := follower.FollowNetmap(ctx, next)
		if err != nil || changed || same != nil {
			t.Errorf("unchanged: %+v, %v, %v", same, changed, err)
		}
	})

	t.Run("connections", func(t *testing.T) {
		now := time.Now().UTC()
		n, err := a.ReportConnections(ctx, []warren.ReportedConnection{{
			Start: now.Add(-5 * time.Second), End: now, Proto: "tcp",
			Src:     warren.ReportedEndpoint{Addr: regA.Device.Addresses[0] + ":51234"},
			Dst:     warren.ReportedEndpoint{Addr: regB.Device.Addresses[0] + ":443"},
			TxBytes: 1200, RxBytes: 56000, TxPackets: 10, RxPackets: 40,
		}})
		if err != nil || n != 1 {
			t.Fatalf("report: %d, %v", n, err)
		}
		_, err = a.ReportConnections(ctx, []warren.ReportedConnection{
			{Start: now, End: now, Proto: "tcp", Src: warren.ReportedEndpoint{Addr: regA.Device.Addresses[0] + ":1"}, Dst: warren.ReportedEndpoint{Addr: "10.1.1.1:2"}},
			{Start: now, End: now, Proto: "tcp", Src: warren.ReportedEndpoint{Addr: "192.0.2.1:1"}, Dst: warren.ReportedEndpoint{Addr: "10.1.1.1:2"}},
		})
		e := wantError(t, err, 400, warren.CodeInvalidRequest)
		if e.Index == nil || *e.Index != 1 {
			t.Errorf("the refusal names entry %v, want 1", e.Index)
		}
	})

	t.Run("disconnect", func(t *testing.T) {
		if err := a.Disconnect(ctx); err != nil {
			t.Fatal(err)
		}
		d, err := c.Devices.Get(ctx, regA.Device.ID)
		if err != nil || d.Online {
			t.Errorf("after disconnect: %+v, %v", d, err)
		}
	})

	t.Run("credentials", func(t *testing.T) {
		fresh, err := warren.NewNodeClient(warren.WithBaseURL(serverURL))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.Heartbeat(ctx, nil); !errors.Is(err, warren.ErrNotRegistered) {
			t.Errorf("heartbeat before register: %v", err)
		}
		restored, err := warren.NewNodeClient(warren.WithBaseURL(serverURL), warren.WithNodeToken(a.Token()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := restored.Heartbeat(ctx, nil); err != nil {
			t.Errorf("a restored credential: %v", err)
		}
		key, err := c.Keys.Create(ctx, &warren.CreateKeyRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Keys.Delete(ctx, key.ID); err != nil {
			t.Fatal(err)
		}
		_, err = fresh.Register(ctx, key.Key, &warren.RegisterRequest{Hostname: "late", OS: "linux", NodeKey: nodeKey(t)})
		wantError(t, err, 401, warren.CodeKeyRevoked)
		_, err = fresh.Register(ctx, adminKey, &warren.RegisterRequest{Hostname: "late", OS: "linux", NodeKey: nodeKey(t)})
		wantError(t, err, 401, warren.CodeUnauthenticated)
	})
}

func peerIDs(peers []warren.Peer) []string {
	ids := make([]string, 0, len(peers))
	for _, p := range peers {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	return ids
}

// netmapDeltas carries requests to the server and counts the answers that are netmap deltas.
type netmapDeltas struct{ n atomic.Int32 }

func (d *netmapDeltas) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.URL.Query().Get("delta") != "true" || res.StatusCode != http.StatusOK {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	if bytes.Contains(body, []byte(`"peersChanged"`)) {
		d.n.Add(1)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}
