package acp_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// agentEnv makes the test binary run the scripted ACP agent instead of the
// tests (see TestMain).
const agentEnv = "AHP_ACPTEST_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		if err := acptest.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testConfig runs this test binary as the scripted agent.
func testConfig(name string) acp.Config {
	return acp.Config{Name: name, Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{agentEnv: "1"}}
}

// testLogger sends logs to the test log when -v is given.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// newBackend returns the scripted agent's backend, probed.
func newBackend(t testing.TB, opts *acp.Options) *acp.Backend {
	t.Helper()
	var o acp.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = testLogger(t)
	}
	b, err := acp.New(testConfig("test"), &o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testHost runs a host with the given agents behind a real WebSocket
// server on 127.0.0.1.
type testHost struct {
	h   *host.Host
	url string
}

func startHost(t testing.TB, agents ...agent.Backend) *testHost {
	t.Helper()
	h, err := host.New(&host.Options{Agents: agents, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, h)
}

// serve serves a host over WebSocket until the test ends.
func serve(t testing.TB, h *host.Host) *testHost {
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &testHost{h: h, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// client is a bare AHP client that records every action envelope.
type client struct {
	t    testing.TB
	rpc  *jsonrpc.Conn
	id   string
	seq  int64
	mu   sync.Mutex
	envs []protocol.ActionEnvelope
	wake chan struct{}
	// onEnvelope, when set, sees each envelope as it arrives instead of
	// the record (benchmarks). Set it with watch.
	onEnvelope func(*protocol.ActionEnvelope)
}

func (th *testHost) dial(t testing.TB, clientID string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, th.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, id: clientID, wake: make(chan struct{}, 1)}
	c.rpc = jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(ws), jsonrpc.HandlerFunc(c.handle), &jsonrpc.ConnOptions{MaxMessageSize: 64 << 20, MaxQueue: 1 << 20})
	t.Cleanup(func() { c.rpc.Close() })
	var res protocol.InitializeResult
	c.must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: clientID}, &res)
	return c
}

func (c *client) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method != "action" {
		return nil, nil
	}
	var env protocol.ActionEnvelope
	if err := protocol.Unmarshal(req.Params, &env); err != nil {
		c.t.Errorf("bad action envelope: %v", err)
		return nil, nil
	}
	c.mu.Lock()
	if f := c.onEnvelope; f != nil {
		c.mu.Unlock()
		f(&env)
		return nil, nil
	}
	c.envs = append(c.envs, env)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil, nil
}

// watch hands every envelope from now on to f.
func (c *client) watch(f func(*protocol.ActionEnvelope)) {
	c.mu.Lock()
	c.onEnvelope = f
	c.mu.Unlock()
}

func (c *client) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.rpc.Call(ctx, method, params, result)
}

func (c *client) must(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) dispatch(channel string, a protocol.StateAction) {
	c.t.Helper()
	c.seq++
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.rpc.Notify(ctx, "dispatchAction", &protocol.DispatchActionParams{Channel: channel, ClientSeq: c.seq, Action: a}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) envelopes() []protocol.ActionEnvelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.ActionEnvelope(nil), c.envs...)
}

// waitFor waits until cond holds over the received envelopes.
func (c *client) waitFor(what string, cond func(envs []protocol.ActionEnvelope) bool) []protocol.ActionEnvelope {
	c.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		envs := c.envelopes()
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
			c.t.Fatalf("timed out waiting for %s; got %d envelopes: %v", what, len(envs), types)
		}
	}
}

func (c *client) subscribe(uri string) *protocol.Snapshot {
	c.t.Helper()
	var sub protocol.SubscribeResult
	c.must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
	return sub.Snapshot
}

// newSession creates a session on the provider in dir ("" for none),
// subscribes to it and its default chat, and waits until it is ready.
func (c *client) newSession(id, provider, dir string) (string, string) {
	c.t.Helper()
	uri := protocol.SessionURI(id)
	p := &protocol.CreateSessionParams{Channel: uri, Provider: &provider}
	if dir != "" {
		p.WorkingDirectories = []string{"file://" + dir}
	}
	c.must("createSession", p, nil)
	st := c.subscribe(uri).State.(*protocol.SessionState)
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		c.waitFor("session ready", func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				switch a := e.Action.(type) {
				case *protocol.SessionReadyAction:
					return true
				case *protocol.SessionCreationFailedAction:
					c.t.Fatalf("session creation failed: %s", a.Error.Message)
				}
			}
			return false
		})
	}
	c.subscribe(*st.DefaultChat)
	return uri, *st.DefaultChat
}

// join subscribes to an existing session and its default chat.
func (c *client) join(session string) string {
	c.t.Helper()
	st := c.subscribe(session).State.(*protocol.SessionState)
	c.subscribe(*st.DefaultChat)
	return *st.DefaultChat
}

// chatState returns the host's current state of a chat, through a fresh
// subscription of a new client.
func (th *testHost) chatState(t testing.TB, chat string) *protocol.ChatState {
	t.Helper()
	c := th.dial(t, fmt.Sprintf("snap-%d", time.Now().UnixNano()))
	st := c.subscribe(chat).State.(*protocol.ChatState)
	c.rpc.Close()
	return st
}

func (th *testHost) sessionState(t testing.TB, session string) *protocol.SessionState {
	t.Helper()
	c := th.dial(t, fmt.Sprintf("snap-%d", time.Now().UnixNano()))
	st := c.subscribe(session).State.(*protocol.SessionState)
	c.rpc.Close()
	return st
}

func userMessage(text string) protocol.Message {
	return protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
}

// startTurn starts a turn on a chat and returns its id.
func (c *client) startTurn(chat, id, text string) string {
	c.t.Helper()
	c.dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: userMessage(text)})
	return id
}

// turnEnd returns the envelope that ended the turn, if any.
func turnEnd(envs []protocol.ActionEnvelope, turnID string) *protocol.ActionEnvelope {
	for i, e := range envs {
		if e.RejectionReason != nil {
			continue
		}
		switch a := e.Action.(type) {
		case *protocol.ChatTurnCompleteAction:
			if a.TurnID == turnID {
				return &envs[i]
			}
		case *protocol.ChatErrorAction:
			if a.TurnID == turnID {
				return &envs[i]
			}
		case *protocol.ChatTurnCancelledAction:
			if a.TurnID == turnID {
				return &envs[i]
			}
		}
	}
	return nil
}

func (c *client) waitTurnEnd(turnID string) *protocol.ActionEnvelope {
	c.t.Helper()
	envs := c.waitFor("end of turn "+turnID, func(envs []protocol.ActionEnvelope) bool { return turnEnd(envs, turnID) != nil })
	return turnEnd(envs, turnID)
}

// finishedTurn returns a completed turn of a chat state.
func finishedTurn(t testing.TB, st *protocol.ChatState, id string) protocol.Turn {
	t.Helper()
	for _, tr := range st.Turns {
		if tr.ID == id {
			return tr
		}
	}
	t.Fatalf("turn %s not in the chat's history", id)
	return protocol.Turn{}
}

// markdown concatenates the markdown parts of a turn.
func markdown(parts []protocol.ResponsePart) string {
	var b strings.Builder
	for _, p := range parts {
		if md, ok := p.(*protocol.MarkdownResponsePart); ok {
			b.WriteString(md.Content.String())
		}
	}
	return b.String()
}

// toolCalls returns the tool calls of a turn's parts.
func toolCalls(parts []protocol.ResponsePart) []protocol.ToolCallState {
	var out []protocol.ToolCallState
	for _, p := range parts {
		if tp, ok := p.(*protocol.ToolCallResponsePart); ok {
			out = append(out, tp.ToolCall)
		}
	}
	return out
}
