package warren

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// nodeTimeout bounds one node-protocol request unless WithHTTPClient says otherwise: an agent
// runs unattended and must not hang on a server that accepts a connection and never answers.
const nodeTimeout = 30 * time.Second

// ErrNotRegistered is returned by NodeClient calls made before Register (and without
// WithNodeToken).
var ErrNotRegistered = errors.New("warren: node client has no node credential: call Register first")

// RegisterRequest is the body of NodeClient.Register.
type RegisterRequest struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	// NodeKey is the device's public key: "nodekey:" and 64 hex digits. A key already
	// enrolled in the network re-enrolls that device.
	NodeKey         string   `json:"nodeKey"`
	ClientVersion   string   `json:"clientVersion,omitempty"`
	AdvertiseRoutes []string `json:"advertiseRoutes,omitempty"`
}

// Registration is the answer of Register: the device and its node credential.
type Registration struct {
	Device    Device `json:"device"`
	NodeToken string `json:"nodeToken"`
}

// HeartbeatRequest is the body of NodeClient.Heartbeat.
type HeartbeatRequest struct {
	// AdvertiseRoutes replaces the advertised routes when not nil; an empty, non-nil slice
	// withdraws them all, nil leaves them as they are.
	AdvertiseRoutes []string `json:"advertiseRoutes,omitempty"`
}

// HeartbeatResult is the answer of Heartbeat; fetch the netmap when NetmapVersion changed.
type HeartbeatResult struct {
	Online        bool  `json:"online"`
	NetmapVersion int64 `json:"netmapVersion"`
}

// Peer is a device this device may reach or be reached by.
type Peer struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Addresses  []string `json:"addresses"`
	AllowedIPs []string `json:"allowedIPs"`
	Tags       []string `json:"tags"`
	Online     bool     `json:"online"`
}

// Netmap is what a device needs to configure its tunnel.
type Netmap struct {
	Self    Device `json:"self"`
	Peers   []Peer `json:"peers"`
	Version int64  `json:"version"`
	// ETag is the netmap's version as the server quoted it; pass it to Netmap as
	// ifNoneMatch.
	ETag string `json:"-"`
}

// ReportedEndpoint is one side of a reported connection.
type ReportedEndpoint struct {
	DeviceID *string `json:"deviceId,omitempty"`
	Addr     string  `json:"addr"`
}

// ReportedConnection is one connection a device reports; Src.Addr is one of its own
// addresses, or lies in an approved route it serves.
type ReportedConnection struct {
	Start     time.Time        `json:"start"`
	End       time.Time        `json:"end"`
	Proto     string           `json:"proto"` // tcp, udp or icmp
	Src       ReportedEndpoint `json:"src"`
	Dst       ReportedEndpoint `json:"dst"`
	TxBytes   int64            `json:"txBytes"`
	RxBytes   int64            `json:"rxBytes"`
	TxPackets int64            `json:"txPackets"`
	RxPackets int64            `json:"rxPackets"`
}

// NodeClient speaks the node protocol (/v1/node/*) for one device: it enrolls with an auth
// key and authenticates every later call with the node credential it received. Admins never
// need it; device agents and tests do. Like a Client's, every call is retried on 429 after
// Retry-After. It is safe for concurrent use.
type NodeClient struct {
	t     *transport
	mu    sync.Mutex
	token string
}

// NewNodeClient returns a NodeClient for the server at WithBaseURL (default WARREN_URL).
// WithNodeToken restores the credential of an earlier registration; WithAPIKey is ignored.
func NewNodeClient(opts ...Option) (*NodeClient, error) {
	cfg := newConfig(opts)
	t, err := newTransport(cfg, nodeTimeout)
	if err != nil {
		return nil, err
	}
	return &NodeClient{t: t, token: cfg.nodeToken}, nil
}

// String names the node client by its server, never its credential (see Client.String).
func (n *NodeClient) String() string { return "warren.NodeClient(" + n.t.shown + ")" }

// GoString is String for %#v.
func (n *NodeClient) GoString() string { return n.String() }

// Token is the node credential in use (set by Register), "" before.
func (n *NodeClient) Token() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.token
}

func (n *NodeClient) request(method, path string) (*request, error) {
	token := n.Token()
	if token == "" {
		return nil, ErrNotRegistered
	}
	return &request{method: method, path: path, token: token}, nil
}

// Register enrolls the device with an auth key (wrn_auth_…) and keeps the node credential it
// receives for every later call. An expired, revoked or spent key is a 401.
func (n *NodeClient) Register(ctx context.Context, authKey string, in *RegisterRequest) (*Registration, error) {
	r := &request{method: http.MethodPost, path: "/v1/node/register", token: authKey}
	var reg Registration
	if err := n.t.call(ctx, r, in, &reg); err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.token = reg.NodeToken
	n.mu.Unlock()
	return &reg, nil
}

// Heartbeat marks the device online (nil in: routes unchanged).
func (n *NodeClient) Heartbeat(ctx context.Context, in *HeartbeatRequest) (*HeartbeatResult, error) {
	r, err := n.request(http.MethodPost, "/v1/node/heartbeat")
	if err != nil {
		return nil, err
	}
	if in == nil {
		in = &HeartbeatRequest{}
	}
	var body any = in
	if in.AdvertiseRoutes != nil && len(in.AdvertiseRoutes) == 0 {
		// omitempty would drop an empty list, which means "withdraw every route".
		body = struct {
			AdvertiseRoutes []string `json:"advertiseRoutes"`
		}{[]string{}}
	}
	var res HeartbeatResult
	if err := n.t.call(ctx, r, body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Disconnect marks the device offline at once.
func (n *NodeClient) Disconnect(ctx context.Context) error {
	r, err := n.request(http.MethodPost, "/v1/node/disconnect")
	if err != nil {
		return err
	}
	return n.t.call(ctx, r, nil, nil)
}

// Netmap returns the device's peers. With ifNoneMatch (the ETag of an earlier netmap) it
// returns changed false and a nil netmap while nothing changed (304).
func (n *NodeClient) Netmap(ctx context.Context, ifNoneMatch string) (nm *Netmap, changed bool, err error) {
	answer, changed, err := n.netmap(ctx, nil, ifNoneMatch)
	if err != nil || !changed {
		return nil, changed, err
	}
	return &answer.Netmap, true, nil
}

// FollowNetmap returns the current netmap given the one held, fetching only what changed
// since (GET /v1/node/netmap?delta=true): the peers changed or removed since held's version,
// applied to held, or the full map when the server no longer knows that version. It returns
// changed false and a nil netmap while nothing changed; without held it fetches the full map.
// held is not modified.
func (n *NodeClient) FollowNetmap(ctx context.Context, held *Netmap) (nm *Netmap, changed bool, err error) {
	if held == nil {
		return n.Netmap(ctx, "")
	}
	answer, changed, err := n.netmap(ctx, url.Values{"delta": {"true"}}, `"`+strconv.FormatInt(held.Version, 10)+`"`)
	if err != nil || !changed {
		return nil, changed, err
	}
	if answer.Since == nil {
		return &answer.Netmap, true, nil
	}
	if *answer.Since != held.Version {
		return nil, false, fmt.Errorf("warren: netmap delta is for version %d, but version %d is held", *answer.Since, held.Version)
	}
	removed := make(map[string]bool, len(answer.PeersRemoved))
	for _, id := range answer.PeersRemoved {
		removed[id] = true
	}
	changedPeers := make(map[string]Peer, len(answer.PeersChanged))
	for _, p := range answer.PeersChanged {
		changedPeers[p.ID] = p
	}
	// Peers keep their place and new ones come last: the order of peers carries no meaning.
	peers := make([]Peer, 0, len(held.Peers)+len(answer.PeersChanged))
	for _, p := range held.Peers {
		if removed[p.ID] {
			continue
		}
		if next, ok := changedPeers[p.ID]; ok {
			p = next
			delete(changedPeers, p.ID)
		}
		peers = append(peers, p)
	}
	for _, p := range answer.PeersChanged {
		if _, ok := changedPeers[p.ID]; ok {
			peers = append(peers, p)
		}
	}
	return &Netmap{Self: answer.Self, Peers: peers, Version: answer.Version, ETag: answer.ETag}, true, nil
}

// netmapAnswer is a full netmap or, with delta=true, a delta (Since set).
type netmapAnswer struct {
	Netmap
	Since        *int64   `json:"since"`
	PeersChanged []Peer   `json:"peersChanged"`
	PeersRemoved []string `json:"peersRemoved"`
}

func (n *NodeClient) netmap(ctx context.Context, query url.Values, ifNoneMatch string) (*netmapAnswer, bool, error) {
	r, err := n.request(http.MethodGet, "/v1/node/netmap")
	if err != nil {
		return nil, false, err
	}
	r.query = query
	if ifNoneMatch != "" {
		r.header = http.Header{"If-None-Match": {ifNoneMatch}}
	}
	r.allowed = []int{http.StatusNotModified}
	resp, err := n.t.do(ctx, r)
	if err != nil {
		return nil, false, err
	}
	if resp.status == http.StatusNotModified {
		return nil, false, nil
	}
	var m netmapAnswer
	if err := resp.decode(r, &m); err != nil {
		return nil, false, err
	}
	m.ETag = resp.header.Get("ETag")
	return &m, true, nil
}

// ReportConnections sends up to 1000 entries, stored whole or not at all (a bad entry is a
// 400 whose Error.Index names it), and returns how many were accepted.
func (n *NodeClient) ReportConnections(ctx context.Context, entries []ReportedConnection) (int, error) {
	r, err := n.request(http.MethodPost, "/v1/node/connections")
	if err != nil {
		return 0, err
	}
	if entries == nil {
		entries = []ReportedConnection{}
	}
	in := struct {
		Entries []ReportedConnection `json:"entries"`
	}{entries}
	var res struct {
		Accepted int `json:"accepted"`
	}
	if err := n.t.call(ctx, r, in, &res); err != nil {
		return 0, err
	}
	return res.Accepted, nil
}
