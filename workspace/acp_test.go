package workspace_test

import (
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

// An ACP agent's terminal/create runs in an AHP terminal claimed by the
// session and its chat: clients see it in the root list and as the tool
// call's terminal content, and the agent gets its output and exit code.
func TestACPTerminalRequests(t *testing.T) {
	dir := t.TempDir()
	b, err := acp.New(acp.Config{Name: "test", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{acptest.AgentEnv: "1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Workspace: workspace.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	srv := hosttest.Serve(t, h)
	c, watcher := srv.Dial(t, "c1"), srv.Dial(t, "c2")
	initialize(t, c)
	initialize(t, watcher)
	watcher.Subscribe(protocol.RootURI)
	sess := protocol.SessionURI("s1")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: sess, Provider: protocol.Ptr("test"), WorkingDirectories: []string{files.URIOf(dir)}}, nil)
	st := c.Subscribe(sess).State.(*protocol.SessionState)
	waitUntil(t, "the session ready", func() bool {
		return h.State(sess).(*protocol.SessionState).Lifecycle == protocol.SessionLifecycleReady
	})
	chat := *st.DefaultChat
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
