// Package hosttest serves a host over a real WebSocket on 127.0.0.1, or
// over in-memory pipes, and talks to it with a bare JSON-RPC client that
// records what it receives. It is shared by the tests of the host and of
// the agent backends.
//
// A host served with [ServePipe] and created inside a testing/synctest
// bubble runs entirely in the bubble: its timers and the clients' waits
// follow the bubble's fake clock, so such a test never waits in real
// time.
package hosttest

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// Timeout bounds every call and every wait of a Client.
const Timeout = 20 * time.Second

// Server is a host behind an httptest WebSocket server.
type Server struct {
	Host *host.Host
	URL  string // ws://127.0.0.1:PORT; empty for a host served over pipes

	served *sync.WaitGroup // the pipe connections' ServeTransport calls
}

// Serve serves h until the test ends, then closes it.
func Serve(t testing.TB, h *host.Host) *Server {
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &Server{Host: h, URL: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// Client is a bare AHP client. It records every action envelope and
// every other notification it receives.
type Client struct {
	T   testing.TB
	RPC *jsonrpc.Conn
	ID  string

	seq        int64
	mu         sync.Mutex
	envs       []protocol.ActionEnvelope
	ntfs       []*jsonrpc.Request
	onEnvelope func(*protocol.ActionEnvelope)
	discard    bool
	wake       chan struct{}
}

// ServePipe serves h over in-memory pipes (jsonrpc.Pipe), one per Dial,
// until the test ends, then closes it and waits for every connection to
// end. Called inside a synctest bubble, with h created there too, nothing
// it starts leaves the bubble.
func ServePipe(t testing.TB, h *host.Host) *Server {
	s := &Server{Host: h, served: &sync.WaitGroup{}}
	t.Cleanup(func() {
		h.Close()
		s.served.Wait()
	})
	return s
}

// Dial connects a client (not yet initialized) that closes when the test
// ends.
func (s *Server) Dial(t testing.TB, clientID string) *Client {
	t.Helper()
	if s.served == nil {
		return Dial(t, s.URL, clientID)
	}
	hostEnd, clientEnd := jsonrpc.Pipe()
	s.served.Go(func() { s.Host.ServeTransport(context.Background(), hostEnd) })
	return connect(t, clientEnd, clientID)
}

// Dial connects a client (not yet initialized) to the host at url, such as
// an ahpd subprocess, and closes it when the test ends.
func Dial(t testing.TB, url, clientID string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr, _, err := jsonrpc.DialWebSocket(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, tr, clientID)
}

func connect(t testing.TB, tr jsonrpc.Transport, clientID string) *Client {
	c := &Client{T: t, ID: clientID, wake: make(chan struct{}, 1)}
	c.RPC = jsonrpc.NewConn(tr, jsonrpc.HandlerFunc(c.handle),
		&jsonrpc.ConnOptions{MaxMessageSize: 64 << 20, MaxQueue: 1 << 20})
	t.Cleanup(func() { c.RPC.Close() })
	return c
}

func (c *Client) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	c.mu.Lock()
	discard := c.discard
	c.mu.Unlock()
	if discard {
		return nil, nil
	}
	if req.Method == "action" {
		var env protocol.ActionEnvelope
		if err := protocol.Unmarshal(req.Params, &env); err != nil {
			c.T.Errorf("bad action envelope: %v", err)
			return nil, nil
		}
		c.mu.Lock()
		if f := c.onEnvelope; f != nil {
			c.mu.Unlock()
			f(&env)
			return nil, nil
		}
		c.envs = append(c.envs, env)
	} else {
		c.mu.Lock()
		c.ntfs = append(c.ntfs, req)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil, nil
}

// Watch hands every envelope from now on to f instead of recording it
// (benchmarks).
func (c *Client) Watch(f func(*protocol.ActionEnvelope)) {
	c.mu.Lock()
	c.onEnvelope = f
	c.mu.Unlock()
}

// Discard drops every notification from now on without decoding or
// recording it (benchmarks: a client whose notifications nobody reads).
func (c *Client) Discard() {
	c.mu.Lock()
	c.discard = true
	c.mu.Unlock()
}

// Call sends a request and decodes its result into result.
func (c *Client) Call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	return c.RPC.Call(ctx, method, params, result)
}

// Must is Call that fails the test on error.
func (c *Client) Must(method string, params, result any) {
	c.T.Helper()
	if err := c.Call(method, params, result); err != nil {
		c.T.Fatalf("%s: %v", method, err)
	}
}

// Dispatch sends a client action and returns its clientSeq.
func (c *Client) Dispatch(channel string, a protocol.StateAction) int64 {
	c.T.Helper()
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.RPC.Notify(ctx, "dispatchAction", &protocol.DispatchActionParams{Channel: channel, ClientSeq: seq, Action: a}); err != nil {
		c.T.Fatal(err)
	}
	return seq
}

// Subscribe subscribes to a channel and returns its snapshot.
func (c *Client) Subscribe(uri string) *protocol.Snapshot {
	c.T.Helper()
	var sub protocol.SubscribeResult
	c.Must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
	return sub.Snapshot
}

// Envelopes returns a copy of the envelopes received so far.
func (c *Client) Envelopes() []protocol.ActionEnvelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.ActionEnvelope(nil), c.envs...)
}

// WaitFor waits until cond holds over the received envelopes and returns
// them.
func (c *Client) WaitFor(what string, cond func(envs []protocol.ActionEnvelope) bool) []protocol.ActionEnvelope {
	c.T.Helper()
	deadline := time.After(Timeout)
	for {
		envs := c.Envelopes()
		if cond(envs) {
			return envs
		}
		select {
		case <-c.wake:
		case <-deadline:
			var types []string
			for _, e := range envs {
				types = append(types, e.Action.Type())
			}
			c.T.Fatalf("timed out waiting for %s; got %d envelopes: %v", what, len(envs), types)
		}
	}
}

// WaitNotification waits for a notification other than "action".
func (c *Client) WaitNotification(method string) *jsonrpc.Request {
	c.T.Helper()
	deadline := time.After(Timeout)
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
			c.T.Fatalf("timed out waiting for %s", method)
		}
	}
}

// HasType reports whether an envelope with an action of the type arrived.
func HasType(typ string) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Action.Type() == typ {
				return true
			}
		}
		return false
	}
}

// UserMessage is a message typed by a user.
func UserMessage(text string) protocol.Message {
	return protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
}
