package acp_test

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
)

// TestMain lets this test binary also serve as the scripted ACP agent.
func TestMain(m *testing.M) {
	acptest.ServeIfAsked()
	os.Exit(m.Run())
}

// testConfig runs this test binary as the scripted agent.
func testConfig(name string) acp.Config {
	return acp.Config{Name: name, Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{acptest.AgentEnv: "1"}}
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
// testExitGrace is the tests' Options.ExitGrace: shorter than the default
// second, still long enough for an agent that closed its output to be
// seen exiting on a loaded machine.
const testExitGrace = 200 * time.Millisecond

// testOptions are the options of a test's backend: its logger and the
// short exit grace.
func testOptions(t testing.TB) *acp.Options {
	return &acp.Options{Logger: testLogger(t), ExitGrace: testExitGrace}
}

func newBackend(t testing.TB, opts *acp.Options) *acp.Backend {
	t.Helper()
	var o acp.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = testLogger(t)
	}
	if o.ExitGrace == 0 {
		o.ExitGrace = testExitGrace
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
	*hosttest.Server
	h *host.Host
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
	return &testHost{Server: hosttest.Serve(t, h), h: h}
}

// client is the shared bare test client, plus helpers of these tests.
type client struct{ *hosttest.Client }

// dial connects and initializes a client.
func (th *testHost) dial(t testing.TB, clientID string) *client {
	t.Helper()
	c := &client{th.Server.Dial(t, clientID)}
	var res protocol.InitializeResult
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: clientID}, &res)
	return c
}

// newSession creates a session on the provider in dir ("" for none),
// subscribes to it and its default chat, and waits until it is ready.
func (c *client) newSession(id, provider, dir string) (string, string) {
	c.T.Helper()
	uri := protocol.SessionURI(id)
	p := &protocol.CreateSessionParams{Channel: uri, Provider: &provider}
	if dir != "" {
		p.WorkingDirectories = []string{"file://" + dir}
	}
	c.Must("createSession", p, nil)
	st := c.Subscribe(uri).State.(*protocol.SessionState)
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		c.WaitFor("session ready", func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				switch a := e.Action.(type) {
				case *protocol.SessionReadyAction:
					return true
				case *protocol.SessionCreationFailedAction:
					c.T.Fatalf("session creation failed: %s", a.Error.Message)
				}
			}
			return false
		})
	}
	c.Subscribe(*st.DefaultChat)
	return uri, *st.DefaultChat
}

// join subscribes to an existing session and its default chat.
func (c *client) join(session string) string {
	c.T.Helper()
	st := c.Subscribe(session).State.(*protocol.SessionState)
	c.Subscribe(*st.DefaultChat)
	return *st.DefaultChat
}

// chatState returns the host's current state of a chat, through a fresh
// subscription of a new client.
func (th *testHost) chatState(t testing.TB, chat string) *protocol.ChatState {
	t.Helper()
	c := th.dial(t, fmt.Sprintf("snap-%d", time.Now().UnixNano()))
	st := c.Subscribe(chat).State.(*protocol.ChatState)
	c.RPC.Close()
	return st
}

func (th *testHost) sessionState(t testing.TB, session string) *protocol.SessionState {
	t.Helper()
	c := th.dial(t, fmt.Sprintf("snap-%d", time.Now().UnixNano()))
	st := c.Subscribe(session).State.(*protocol.SessionState)
	c.RPC.Close()
	return st
}

var userMessage = hosttest.UserMessage

// startTurn starts a turn on a chat and returns its id.
func (c *client) startTurn(chat, id, text string) string {
	c.T.Helper()
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: userMessage(text)})
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
	c.T.Helper()
	envs := c.WaitFor("end of turn "+turnID, func(envs []protocol.ActionEnvelope) bool { return turnEnd(envs, turnID) != nil })
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
