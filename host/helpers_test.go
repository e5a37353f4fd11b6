package host_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// testHost runs a host with the echo agent behind a real WebSocket server
// on 127.0.0.1.
type testHost struct {
	h   *host.Host
	srv *httptest.Server
	url string
}

func startHost(t *testing.T, opts *host.Options) *testHost {
	t.Helper()
	var o host.Options
	if opts != nil {
		o = *opts
	}
	if o.Agents == nil {
		o.Agents = []agent.Backend{echo.New(&echo.Options{WordDelay: -1, SlowDelay: 20 * time.Millisecond})}
	}
	h, err := host.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	th := &testHost{h: h, srv: srv, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return th
}

// client is a bare JSON-RPC client that records every notification.
type client struct {
	t    *testing.T
	rpc  *jsonrpc.Conn
	id   string
	seq  int64
	mu   sync.Mutex
	envs []protocol.ActionEnvelope
	ntfs []*jsonrpc.Request
	wake chan struct{}
}

func (th *testHost) dial(t *testing.T, clientID string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, th.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, id: clientID, wake: make(chan struct{}, 1)}
	c.rpc = jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(ws), jsonrpc.HandlerFunc(c.handle), &jsonrpc.ConnOptions{MaxMessageSize: 64 << 20})
	t.Cleanup(func() { c.rpc.Close() })
	return c
}

func (c *client) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	c.mu.Lock()
	if req.Method == "action" {
		var env protocol.ActionEnvelope
		if err := protocol.Unmarshal(req.Params, &env); err != nil {
			c.t.Errorf("bad action envelope: %v", err)
		}
		c.envs = append(c.envs, env)
	} else {
		c.ntfs = append(c.ntfs, req)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil, nil
}

func (c *client) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.rpc.Call(ctx, method, params, result)
}

func (c *client) must(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) initialize(subs ...string) *protocol.InitializeResult {
	c.t.Helper()
	var res protocol.InitializeResult
	c.must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: c.id, InitialSubscriptions: subs}, &res)
	return &res
}

func (c *client) dispatch(channel string, a protocol.StateAction) int64 {
	c.t.Helper()
	c.seq++
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.rpc.Notify(ctx, "dispatchAction", &protocol.DispatchActionParams{Channel: channel, ClientSeq: c.seq, Action: a}); err != nil {
		c.t.Fatal(err)
	}
	return c.seq
}

// waitFor waits until cond holds over the received envelopes.
func (c *client) waitFor(what string, cond func(envs []protocol.ActionEnvelope) bool) []protocol.ActionEnvelope {
	c.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		envs := append([]protocol.ActionEnvelope(nil), c.envs...)
		c.mu.Unlock()
		if cond(envs) {
			return envs
		}
		select {
		case <-c.wake:
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s; got %d envelopes", what, len(envs))
		}
	}
}

func (c *client) waitNotification(method string) *jsonrpc.Request {
	c.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		for _, n := range c.ntfs {
			if n.Method == method {
				c.mu.Unlock()
				return n
			}
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s", method)
		}
	}
}

func hasType(typ string) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Action.Type() == typ {
				return true
			}
		}
		return false
	}
}

func turnEnded(envs []protocol.ActionEnvelope) bool {
	for _, e := range envs {
		switch e.Action.(type) {
		case *protocol.ChatTurnCompleteAction, *protocol.ChatErrorAction, *protocol.ChatTurnCancelledAction:
			return true
		}
	}
	return false
}

// newSession creates a session and returns its URI and default chat.
func (c *client) newSession(id string) (string, string) {
	c.t.Helper()
	uri := protocol.SessionURI(id)
	c.must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
	var sub protocol.SubscribeResult
	c.must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
	st := sub.Snapshot.State.(*protocol.SessionState)
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		c.waitFor("session ready", hasType("session/ready"))
	}
	return uri, *st.DefaultChat
}

// only keeps the envelopes of one channel.
func only(channel string, envs []protocol.ActionEnvelope) []protocol.ActionEnvelope {
	var out []protocol.ActionEnvelope
	for _, e := range envs {
		if e.Channel == channel {
			out = append(out, e)
		}
	}
	return out
}

func (c *client) subscribe(uri string) *protocol.Snapshot {
	c.t.Helper()
	var sub protocol.SubscribeResult
	c.must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
	return sub.Snapshot
}

func userMessage(text string) protocol.Message {
	return protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
}

// mirror applies every received envelope for a channel to a snapshot.
func mirror(t *testing.T, snap *protocol.Snapshot, envs []protocol.ActionEnvelope) protocol.SnapshotState {
	t.Helper()
	r := reducer.Reducer{Now: fixedClock}
	st := snap.State
	for _, e := range envs {
		if e.Channel == snap.Resource && e.ServerSeq > snap.FromSeq && e.RejectionReason == nil {
			st = r.Apply(st, e.Action)
		}
	}
	return st
}

func rpcCode(err error) int64 {
	var e *protocol.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
