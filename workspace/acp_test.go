package workspace_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/files"
)

// TestMain lets this test binary also serve as the scripted ACP agent and
// as a benchmark's host. The terminals' bash does not read the user's
// ~/.bashrc, which can be slow or hang (waiting on a lock, say) and is no
// part of what the tests check.
func TestMain(m *testing.M) {
	acptest.ServeIfAsked()
	serveHostIfAsked()
	os.Setenv("AHPD_NO_BASHRC", "1")
	os.Exit(m.Run())
}

// startACPHost serves a host whose agent "test" is this test binary as
// the scripted ACP agent, with a workspace made with opts.
func startACPHost(t *testing.T, opts *workspace.Options) (*host.Host, *hosttest.Server) {
	t.Helper()
	b, err := acp.New(acp.Config{Name: "test", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{acptest.AgentEnv: "1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Workspace: workspace.New(opts)})
	if err != nil {
		t.Fatal(err)
	}
	return h, hosttest.Serve(t, h)
}

// createACPSession has c create session sess of the "test" agent in dir,
// subscribes c to it and waits until it is ready.
// watchedACPSession dials two clients, c1 and c2 (c2 subscribed to the
// root channel, to watch it), and creates session s1 in dir with c1; it
// returns them with the session and its default chat.
func watchedACPSession(t *testing.T, srv *hosttest.Server, dir string) (c, watcher *hosttest.Client, sess, chat string) {
	t.Helper()
	c, watcher = srv.Dial(t, "c1"), srv.Dial(t, "c2")
	initialize(t, c)
	initialize(t, watcher)
	watcher.Subscribe(protocol.RootURI)
	sess = protocol.SessionURI("s1")
	st := createACPSession(t, srv, c, sess, dir)
	return c, watcher, sess, *st.DefaultChat
}

func createACPSession(t *testing.T, srv *hosttest.Server, c *hosttest.Client, sess, dir string) *protocol.SessionState {
	t.Helper()
	c.Must("createSession", &protocol.CreateSessionParams{Channel: sess, Provider: protocol.Ptr("test"), WorkingDirectories: []string{files.URIOf(dir)}}, nil)
	st := c.Subscribe(sess).State.(*protocol.SessionState)
	waitUntil(t, "the session ready", func() bool {
		return srv.Host.State(sess).(*protocol.SessionState).Lifecycle == protocol.SessionLifecycleReady
	})
	return st
}

// An ACP agent's terminal/create runs in an AHP terminal claimed by the
// session and its chat: clients see it in the root list and as the tool
// call's terminal content, and the agent gets its output and exit code.
func TestACPTerminalRequests(t *testing.T) {
	dir := t.TempDir()
	h, srv := startACPHost(t, nil)
	c, watcher, sess, chat := watchedACPSession(t, srv, dir)
	c.Subscribe(chat)
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: hosttest.UserMessage("term sh -c pwd;(exit${IFS}3)")})
	envs := c.WaitFor("the turn to end", func(envs []protocol.ActionEnvelope) bool {
		return hasAction[*protocol.ChatTurnCompleteAction](envs) || hasAction[*protocol.ChatErrorAction](envs)
	})
	var reply strings.Builder
	var termURI string
	for _, e := range envs {
		switch a := e.Action.(type) {
		case *protocol.ChatResponsePartAction:
			if m, ok := a.Part.(*protocol.MarkdownResponsePart); ok {
				reply.WriteString(m.Content.String())
			}
		case *protocol.ChatDeltaAction:
			reply.WriteString(a.Content)
		case *protocol.ChatErrorAction:
			t.Fatalf("turn failed: %+v", a)
		}
	}
	chatState := h.State(chat).(*protocol.ChatState)
	for _, turn := range chatState.Turns {
		for _, p := range turn.ResponseParts {
			tp, ok := p.(*protocol.ToolCallResponsePart)
			if !ok {
				continue
			}
			if done, ok := tp.ToolCall.(*protocol.ToolCallCompletedState); ok {
				for _, rc := range done.Content {
					if tc, ok := rc.(*protocol.ToolResultTerminalContent); ok {
						termURI = tc.Resource
					}
				}
			}
		}
	}
	if termURI == "" {
		t.Fatalf("no terminal tool content in %+v", chatState.Turns)
	}
	if got := reply.String(); !strings.Contains(got, "terminal "+termURI+" exit=3") || !strings.Contains(got, dir) {
		t.Fatalf("the agent saw %q", got)
	}
	// The second client saw the terminal in the root list, claimed by the
	// session's chat, and then gone once the agent released it.
	watcher.WaitFor("the terminal listed and released", func(envs []protocol.ActionEnvelope) bool {
		seen, gone := false, false
		for _, e := range envs {
			tc, ok := e.Action.(*protocol.RootTerminalsChangedAction)
			if !ok {
				continue
			}
			for _, ti := range tc.Terminals {
				if ti.Resource == termURI {
					if cl, ok := ti.Claim.(*protocol.TerminalSessionClaim); ok && cl.Session == sess && cl.Chat != nil && *cl.Chat == chat {
						seen = true
					}
				}
			}
			if seen && len(tc.Terminals) == 0 {
				gone = true
			}
		}
		return seen && gone
	})
}

// agentTurn runs a prompt on the chat and returns the agent's reply.
func agentTurn(t *testing.T, c *hosttest.Client, h *host.Host, chat, id, text string) string {
	t.Helper()
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: hosttest.UserMessage(text)})
	waitUntil(t, "the end of turn "+id, func() bool {
		cs := h.State(chat).(*protocol.ChatState)
		return cs.ActiveTurn == nil && len(cs.Turns) > 0 && cs.Turns[len(cs.Turns)-1].ID == id
	})
	var b strings.Builder
	cs := h.State(chat).(*protocol.ChatState)
	for _, p := range cs.Turns[len(cs.Turns)-1].ResponseParts {
		if m, ok := p.(*protocol.MarkdownResponsePart); ok {
			b.WriteString(m.Content.String())
		}
	}
	return b.String()
}

// keptTerminal starts a command the agent keeps running in a terminal and
// returns the terminal's URI and the command's pid.
func keptTerminal(t *testing.T, c *hosttest.Client, h *host.Host, chat, id string) (string, int) {
	t.Helper()
	reply := agentTurn(t, c, h, chat, id, "termkeep sh -c echo${IFS}$$;exec${IFS}sleep${IFS}300")
	var uri string
	var pid int
	if _, err := fmt.Sscanf(reply, "terminal %s output=%q", &uri, new(string)); err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	_, out, _ := strings.Cut(reply, "output=")
	s, err := strconv.Unquote(out)
	if err == nil {
		pid, err = strconv.Atoi(strings.TrimSpace(s))
	}
	if err != nil || pid <= 0 {
		t.Fatalf("no pid in %q", reply)
	}
	if h.State(uri) == nil {
		t.Fatalf("no terminal %s", uri)
	}
	return uri, pid
}

// The terminals an ACP agent creates and does not release end with their
// owner: the agent's process (here it crashes), the chat whose ACP session
// asked, and the AHP session (disposed). A terminal a client created for a session goes with the
// session too. No command outlives its owner, and every client sees the
// terminal leave the root list.
func TestTerminalsEndWithTheirOwner(t *testing.T) {
	dir := t.TempDir()
	h, srv := startACPHost(t, &workspace.Options{Shell: []string{"sh", "-c", "echo $$; exec sleep 300"}})
	c, watcher, sess, chat := watchedACPSession(t, srv, dir)
	gone := func(what, uri string, pid int) {
		t.Helper()
		waitGone(t, pid)
		waitUntil(t, what+": the terminal channel gone", func() bool { return h.State(uri) == nil })
		watcher.WaitFor(what+": the terminal off the root list", func(envs []protocol.ActionEnvelope) bool {
			for i := len(envs) - 1; i >= 0; i-- {
				if tc, ok := envs[i].Action.(*protocol.RootTerminalsChangedAction); ok {
					return !slices.ContainsFunc(tc.Terminals, func(ti protocol.TerminalInfo) bool { return ti.Resource == uri })
				}
			}
			return false
		})
	}

	// The agent's process crashes: its terminal is released.
	uri, pid := keptTerminal(t, c, h, chat, "t1")
	agentTurn(t, c, h, chat, "t2", "crash")
	gone("crash", uri, pid)

	// A second chat's agent terminal goes with the chat.
	chat2 := protocol.ChatURI("second")
	c.Must("createChat", &protocol.CreateChatParams{Channel: sess, Chat: chat2}, nil)
	uri, pid = keptTerminal(t, c, h, chat2, "c2t1")
	c.Must("disposeChat", &protocol.DisposeChatParams{Channel: chat2}, nil)
	gone("chat disposed", uri, pid)

	// The restarted agent starts another; a client creates one for the
	// session; the session is disposed and both go with it.
	uri, pid = keptTerminal(t, c, h, chat, "t3")
	own := protocol.TerminalURI("own")
	c.Must("createTerminal", &protocol.CreateTerminalParams{Channel: own, Claim: &protocol.TerminalSessionClaim{Session: sess}}, nil)
	ownPid := 0
	waitUntil(t, "the session terminal's pid", func() bool {
		ts, _ := h.State(own).(*protocol.TerminalState)
		if ts == nil {
			return false
		}
		ownPid, _ = strconv.Atoi(strings.TrimSpace(reducer.TerminalOutput(ts)))
		return ownPid > 0
	})
	mine := protocol.TerminalURI("mine")
	c.Must("createTerminal", &protocol.CreateTerminalParams{Channel: mine, Claim: &protocol.TerminalClientClaim{ClientID: "c1"}, Cwd: protocol.Ptr(files.URIOf(dir))}, nil)
	c.Must("disposeSession", &protocol.DisposeSessionParams{Channel: sess}, nil)
	gone("agent's terminal, session disposed", uri, pid)
	gone("session's terminal, session disposed", own, ownPid)
	if h.State(mine) == nil {
		t.Error("a client's terminal went with a session")
	}
}
