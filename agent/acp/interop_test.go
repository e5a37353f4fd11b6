package acp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/internal/tsagent"
	"github.com/ahp-go/ahp/protocol"
)

// exampleAgent returns node and the TypeScript SDK's example agent,
// installing it on first use.
func exampleAgent(t *testing.T) (node, script string) {
	t.Helper()
	return tsagent.Find(t)
}

// TestInteropTypeScriptExampleAgent runs full turns through the host on
// the example agent of the TypeScript ACP SDK, which this project did not
// write: streaming, tool calls, a permission request answered by a second
// client, then a cancelled turn.
func TestInteropTypeScriptExampleAgent(t *testing.T) {
	node, script := exampleAgent(t)
	b, err := acp.New(acp.Config{Name: "example", Command: node, Args: []string{script}}, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if info := b.Info(); info.DisplayName != "example-agent" && info.DisplayName != "example" {
		t.Logf("listed as %+v", info)
	}
	th := startHost(t, b)
	a := th.dial(t, "a")
	c2 := th.dial(t, "b")
	// The example agent offers no modes, models or config options: its
	// configuration schema is empty, and its sessions have none.
	var cfg protocol.ResolveSessionConfigResult
	a.Must("resolveSessionConfig", &protocol.ResolveSessionConfigParams{Provider: protocol.Ptr("example")}, &cfg)
	if len(cfg.Schema.Properties) != 0 {
		t.Errorf("configuration schema %+v", cfg.Schema)
	}
	sess, chat := a.newSession("s1", "example", t.TempDir())
	c2.join(sess)
	if st := th.sessionState(t, sess); st.Config != nil {
		t.Errorf("session config %+v", st.Config)
	}

	turn := a.startTurn(chat, "t1", "Improve the configuration")
	ready := pendingTool(c2, turn)
	if ready.ToolCallID != "call_2" || len(ready.Options) != 2 {
		t.Fatalf("permission %+v", ready)
	}
	c2.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: turn, ToolCallID: ready.ToolCallID, Approved: true, SelectedOptionID: protocol.Ptr("allow")})
	if end := a.waitTurnEnd(turn); end.Action.Type() != "chat/turnComplete" {
		t.Fatalf("turn ended with %+v", end.Action)
	}
	c2.waitTurnEnd(turn)
	tr := finishedTurn(t, th.chatState(t, chat), turn)
	text := markdown(tr.ResponseParts)
	if !strings.HasPrefix(text, "I'll help you with that.") || !strings.Contains(text, "Perfect! I've successfully updated the configuration.") {
		t.Errorf("reply %q", text)
	}
	var states []string
	for _, tc := range toolCalls(tr.ResponseParts) {
		states = append(states, tc.Status())
	}
	if !slices.Equal(states, []string{"completed", "completed"}) {
		t.Errorf("tool call states %v", states)
	}
	if done := toolCalls(tr.ResponseParts)[1].(*protocol.ToolCallCompletedState); done.SelectedOption == nil || done.SelectedOption.ID != "allow" {
		t.Errorf("second tool call %+v", done)
	}

	// A cancelled turn: the agent answers "cancelled" at its next step.
	turn2 := a.startTurn(chat, "t2", "Again")
	a.WaitFor("the first chunk", func(envs []protocol.ActionEnvelope) bool {
		return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool {
			r, ok := e.Action.(*protocol.ChatResponsePartAction)
			return ok && r.TurnID == turn2
		})
	})
	c2.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: turn2})
	if end := a.waitTurnEnd(turn2); end.Action.Type() != "chat/turnCancelled" {
		t.Fatalf("cancelled turn ended with %+v", end.Action)
	}
	// The chat shows the agent stopping until it has answered.
	a.WaitFor("the agent to stop", func(envs []protocol.ActionEnvelope) bool {
		set := false
		for _, e := range envs {
			if x, ok := e.Action.(*protocol.ChatActivityChangedAction); ok {
				if x.Activity != nil {
					set = true
				} else if set {
					return true
				}
			}
		}
		return false
	})
	// And the chat still works.
	turn3 := a.startTurn(chat, "t3", "Once more")
	ready = pendingTool(a, turn3)
	a.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: turn3, ToolCallID: ready.ToolCallID, Approved: false})
	if end := a.waitTurnEnd(turn3); end.Action.Type() != "chat/turnComplete" {
		t.Fatalf("third turn ended with %+v", end.Action)
	}
	if text := markdown(finishedTurn(t, th.chatState(t, chat), turn3).ResponseParts); !strings.Contains(text, "I'll skip the configuration update.") {
		t.Errorf("third reply %q", text)
	}
}
