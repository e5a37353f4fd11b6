package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// pipeConn is a client of a host over an in-memory pipe that keeps the
// notifications it receives.
type pipeConn struct {
	t     *testing.T
	conn  *jsonrpc.Conn
	notes chan *jsonrpc.Request
}

// pipeHost starts a host with the echo agent (unless opts names agents).
func pipeHost(t *testing.T, opts *host.Options) *host.Host {
	t.Helper()
	var o host.Options
	if opts != nil {
		o = *opts
	}
	if o.Agents == nil {
		o.Agents = []agent.Backend{echo.New(&echo.Options{WordDelay: -1})}
	}
	h, err := host.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// pipeDial connects a new client to h over an in-memory pipe.
func pipeDial(t *testing.T, h *host.Host) *pipeConn {
	t.Helper()
	clientSide, hostSide := jsonrpc.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeTransport(context.Background(), hostSide)
	}()
	pc := &pipeConn{t: t, notes: make(chan *jsonrpc.Request, 1024)}
	pc.conn = jsonrpc.NewConn(clientSide, jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		if !req.ID.IsValid() {
			select {
			case pc.notes <- req:
			default:
			}
			return nil, nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	}), nil)
	t.Cleanup(func() {
		pc.conn.Close()
		<-served
	})
	return pc
}

func (pc *pipeConn) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return pc.conn.Call(ctx, method, params, result)
}

func (pc *pipeConn) must(method string, params, result any) {
	pc.t.Helper()
	if err := pc.call(method, params, result); err != nil {
		pc.t.Fatalf("%s: %v", method, err)
	}
}

func (pc *pipeConn) notify(method string, params any) {
	pc.t.Helper()
	if err := pc.conn.Notify(context.Background(), method, params); err != nil {
		pc.t.Fatalf("%s: %v", method, err)
	}
}

func (pc *pipeConn) initialize(clientID string, versions ...string) *protocol.InitializeResult {
	pc.t.Helper()
	if len(versions) == 0 {
		versions = []string{"0.8.0"}
	}
	var res protocol.InitializeResult
	pc.must("initialize", &protocol.InitializeParams{ProtocolVersions: versions, ClientID: clientID}, &res)
	return &res
}

func (pc *pipeConn) subscribe(uri string) *protocol.Snapshot {
	pc.t.Helper()
	var res protocol.SubscribeResult
	pc.must("subscribe", &protocol.SubscribeParams{Channel: uri}, &res)
	if res.Snapshot == nil {
		pc.t.Fatalf("subscribe %s: no snapshot", uri)
	}
	return res.Snapshot
}

// TestCreateSessionURIs: a client names a new session with any absolute
// URI (VS Code: <provider>:/<uuid>), except the host's own channel schemes
// and URIs already in use.
func TestCreateSessionURIs(t *testing.T) {
	h := pipeHost(t, nil)
	c := pipeDial(t, h)
	c.initialize("a")
	c.must("createSession", &protocol.CreateSessionParams{Channel: "echo:/taken"}, nil)
	chat := *c.subscribe("echo:/taken").State.(*protocol.SessionState).DefaultChat

	tests := []struct {
		name, uri string
		provider  *string
		want      protocol.ErrorCode // 0: created
	}{
		{"vscode", "echo:/cf73d5a0-8f7e-4b9e-9a56-2f8d1c3e4b5a", protocol.Ptr("echo"), 0},
		{"provider from the scheme", "echo:/no-provider", nil, 0},
		{"ahp-session", "ahp-session:/classic", nil, 0},
		{"other scheme", "my-client+x.y:/s1", protocol.Ptr("echo"), 0},
		{"authority and path", "vscode-agent://host/a/b", nil, 0},
		{"already a session", "echo:/taken", nil, protocol.CodeSessionAlreadyExists},
		{"already a chat", chat, nil, protocol.CodeInvalidParams},
		{"root", "ahp-root://", nil, protocol.CodeInvalidParams},
		{"chat scheme", "ahp-chat:/c9", nil, protocol.CodeInvalidParams},
		{"terminal scheme", "ahp-terminal:/t9", nil, protocol.CodeInvalidParams},
		{"changeset scheme", "ahp-changeset:/x", nil, protocol.CodeInvalidParams},
		{"resource watch scheme", "ahp-resource-watch:/w", nil, protocol.CodeInvalidParams},
		{"automations", "ahp-automations://", nil, protocol.CodeInvalidParams},
		{"automation run", "ahp-automation-run:/r", nil, protocol.CodeInvalidParams},
		{"telemetry", "ahp-otlp://logs", nil, protocol.CodeInvalidParams},
		{"changeset content", "ahp-changeset-content:/a/b/c/d", nil, protocol.CodeInvalidParams},
		{"upper-case ahp scheme", "AHP-Chat:/c9", nil, protocol.CodeInvalidParams},
		{"file", "file:///tmp/x", nil, protocol.CodeInvalidParams},
		{"annotations of a session", "echo:/taken/annotations", nil, protocol.CodeInvalidParams},
		{"session changeset", "ahp-session:/s/changeset/x", nil, protocol.CodeInvalidParams},
		{"malformed ahp-session", "ahp-session:s1", nil, protocol.CodeInvalidParams},
		{"no scheme", "just-an-id", nil, protocol.CodeInvalidParams},
		{"bad scheme", "1echo:/x", nil, protocol.CodeInvalidParams},
		{"space", "echo:/a b", nil, protocol.CodeInvalidParams},
		{"empty after the scheme", "echo:", nil, protocol.CodeInvalidParams},
		{"unknown provider", "nope:/x", protocol.Ptr("nope"), protocol.CodeProviderNotFound},
		{"too long", "echo:/" + strings.Repeat("a", 5000), nil, protocol.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.call("createSession", &protocol.CreateSessionParams{Channel: tt.uri, Provider: tt.provider}, nil)
			if got := rpcCode(err); got != tt.want || (tt.want == 0) != (err == nil) {
				t.Fatalf("createSession %.40q: %v (code %d), want code %d", tt.uri, err, got, tt.want)
			}
			if tt.want != 0 {
				return
			}
			st, ok := c.subscribe(tt.uri).State.(*protocol.SessionState)
			if !ok || st.Provider != "echo" {
				t.Fatalf("subscribe %s: state %T %+v", tt.uri, st, st)
			}
			var list protocol.ListSessionsResult
			c.must("listSessions", &protocol.ListSessionsParams{}, &list)
			found := false
			for _, s := range list.Items {
				found = found || s.Resource == tt.uri
			}
			if !found {
				t.Errorf("listSessions does not list %s", tt.uri)
			}
		})
	}
}

// TestSubscribeChannelURIs: subscribe looks channels up; a URI that is not
// one is not found, and one that is not a URI is bad params.
func TestSubscribeChannelURIs(t *testing.T) {
	h := pipeHost(t, nil)
	c := pipeDial(t, h)
	c.initialize("a")
	tests := []struct {
		uri  string
		want protocol.ErrorCode
	}{
		{"echo:/missing", protocol.CodeNotFound},
		{"x://host/path", protocol.CodeNotFound},
		{"ahp-session:/missing", protocol.CodeNotFound},
		{"no scheme", protocol.CodeInvalidParams},
		{"ahp-session:/s/other", protocol.CodeInvalidParams},
	}
	for _, tt := range tests {
		err := c.call("subscribe", &protocol.SubscribeParams{Channel: tt.uri}, nil)
		if got := rpcCode(err); got != tt.want {
			t.Errorf("subscribe %q: %v, want code %d", tt.uri, err, tt.want)
		}
	}
}

// TestProviderNames: an agent whose provider cannot be the scheme of its
// sessions' URIs is refused when the host starts.
func TestProviderNames(t *testing.T) {
	tests := []struct {
		provider string
		ok       bool
	}{
		{"echo", true},
		{"claude-code", true},
		{"a1+b.c", true},
		{"Claude", false},
		{"my_agent", false},
		{"1agent", false},
		{"", false},
		{"ahp-session", false},
		{"ahp-anything", false},
		{"file", false},
	}
	for _, tt := range tests {
		_, err := host.New(&host.Options{Agents: []agent.Backend{namedBackend{tt.provider}}})
		if (err == nil) != tt.ok {
			t.Errorf("provider %q: %v, want ok=%v", tt.provider, err, tt.ok)
		}
		if err2 := host.CheckProvider(tt.provider); (err2 == nil) != tt.ok {
			t.Errorf("CheckProvider(%q) = %v", tt.provider, err2)
		}
	}
}

// namedBackend is an agent that only has a provider name.
type namedBackend struct{ provider string }

func (b namedBackend) Info() protocol.AgentInfo { return protocol.AgentInfo{Provider: b.provider} }
func (namedBackend) Close() error               { return nil }
func (namedBackend) Open(context.Context, agent.OpenRequest, agent.Host) (agent.Session, error) {
	return nil, context.Canceled
}

// TestSessionURIsAcrossRestart: sessions stored under ahp-session: URIs
// and under client-named ones load and run after a restart.
func TestSessionURIsAcrossRestart(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		uris := []string{"ahp-session:/old", "echo:/new", "vscode-x://h/p"}
		h := pipeHost(t, &host.Options{Store: st})
		c := pipeDial(t, h)
		c.initialize("a")
		for _, u := range uris {
			c.must("createSession", &protocol.CreateSessionParams{Channel: u, Provider: protocol.Ptr("echo")}, nil)
			c.notify("dispatchAction", &protocol.DispatchActionParams{Channel: u, ClientSeq: 1, Action: &protocol.SessionTitleChangedAction{Title: "title of " + u}})
		}
		// Requests are handled in order: once this is answered, so are the
		// notifications before it.
		c.must("listSessions", &protocol.ListSessionsParams{}, nil)
		c.conn.Close()
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}

		h2 := pipeHost(t, &host.Options{Store: st})
		c2 := pipeDial(t, h2)
		c2.initialize("b")
		for _, u := range uris {
			ss, ok := c2.subscribe(u).State.(*protocol.SessionState)
			if !ok || ss.Title != "title of "+u || ss.DefaultChat == nil {
				t.Fatalf("%s after restart: %+v", u, ss)
			}
			chat := *ss.DefaultChat
			c2.subscribe(chat)
			c2.notify("dispatchAction", &protocol.DispatchActionParams{Channel: chat, ClientSeq: 2, Action: &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("hi")}})
			waitFor(t, c2, func(n *jsonrpc.Request) bool {
				return n.Method == "action" && strings.Contains(string(n.Params), `"chat/turnComplete"`) && strings.Contains(string(n.Params), chat)
			})
		}
	})
}

// waitFor reads c's notifications until one satisfies cond.
func waitFor(t *testing.T, c *pipeConn, cond func(*jsonrpc.Request) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case n := <-c.notes:
			if cond(n) {
				return
			}
		case <-timeout:
			t.Fatal("timed out waiting for a notification")
		}
	}
}
