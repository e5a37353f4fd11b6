package acp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/protocol"
)

// lintTool is the tool the test clients publish.
var lintTool = protocol.ToolDefinition{
	Name:        "lint",
	Title:       protocol.Ptr("Lint"),
	Description: protocol.Ptr("Lints a file"),
	InputSchema: &protocol.ToolDefinitionInputSchema{Properties: map[string]jsontext.Value{"path": jsontext.Value(`{"type":"string"}`)}, Required: []string{"path"}},
}

// clientToolCall waits for the client's tool call to be ready and returns it.
func clientToolCall(c *client, owner string) *protocol.ChatToolCallReadyAction {
	c.T.Helper()
	var ready *protocol.ChatToolCallReadyAction
	c.WaitFor("the client's tool call", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if a, ok := e.Action.(*protocol.ChatToolCallReadyAction); ok && strings.HasPrefix(a.ToolCallID, "acp-client-") {
				ready = a
				return true
			}
		}
		return false
	})
	return ready
}

// TestClientToolsReachTheAgent: a tool an active client publishes is
// offered to the agent through ahpd's MCP server; the agent's call becomes
// a tool call of the turn contributed by that client, and what the client
// completes it with is the agent's result. A client that leaves, or does
// not answer in time, fails the call; the turn goes on.
func TestClientToolsReachTheAgent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(tools *client, chat string, ready *protocol.ChatToolCallReadyAction)
		want   string // what the agent says
		ok     bool   // the tool call's success
	}{
		{"completed", func(tools *client, chat string, ready *protocol.ChatToolCallReadyAction) {
			tools.Dispatch(chat, &protocol.ChatToolCallCompleteAction{TurnID: ready.TurnID, ToolCallID: ready.ToolCallID, Result: protocol.ToolCallResult{
				Success: true, PastTenseMessage: protocol.PlainText("Linted"),
				Content: []protocol.ToolResultContent{&protocol.ToolResultTextContent{Text: "2 warnings in " + *ready.ToolInput.Inline}}}})
		}, `ahp-clients/lint: 2 warnings in {"path":"x.go"}`, true},
		{"client leaves", func(tools *client, _ string, _ *protocol.ChatToolCallReadyAction) {
			tools.RPC.Close()
		}, "ahp-clients/lint failed: The client running this tool left the session.", false},
		{"no answer", func(*client, string, *protocol.ChatToolCallReadyAction) {}, "ahp-clients/lint failed: The client tools did not run the tool within 1s.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig("test")
			cfg.ClientToolTimeout = acp.Duration(time.Second)
			b, err := acp.New(cfg, testOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			th := startHost(t, b)
			a := th.dialAt(t, "a", protocol.ProtocolVersion)
			uri, chat := a.newSession("s1", "test", t.TempDir())
			tools := th.dialAt(t, "tools", protocol.ProtocolVersion)
			tools.join(uri)
			tools.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{
				ClientID: "tools", DisplayName: protocol.Ptr("Tools"), Tools: []protocol.ToolDefinition{lintTool}}})

			a.startTurn(chat, "t1", `mcp ahp-clients lint {"path":"x.go"}`)
			ready := clientToolCall(tools, "tools")
			if ready.Confirmed == nil || *ready.Confirmed != protocol.ToolCallConfirmationReasonNotNeeded || ready.ToolInput == nil || ready.ToolInput.Inline == nil {
				t.Fatalf("tool call ready %+v", ready)
			}
			tc.answer(tools, chat, ready)
			a.waitTurnEnd("t1")
			turn := finishedTurn(t, th.chatState(t, chat), "t1")
			if got := markdown(turn.ResponseParts); !strings.Contains(got, tc.want) {
				t.Errorf("the agent said %q, want %q", got, tc.want)
			}
			calls := toolCalls(turn.ResponseParts)
			if len(calls) != 1 {
				t.Fatalf("tool calls %+v", calls)
			}
			done, ok := calls[0].(*protocol.ToolCallCompletedState)
			if !ok {
				t.Fatalf("tool call %T, want completed", calls[0])
			}
			if cc, ok := done.Contributor.(*protocol.ToolCallClientContributor); !ok || cc.ClientID != "tools" {
				t.Errorf("contributor %+v, want the client tools", done.Contributor)
			}
			if done.ToolName != "lint" || done.DisplayName != "Lint" || done.Success != tc.ok {
				t.Errorf("tool call %s (%s) success %v, want lint (Lint) success %v", done.ToolName, done.DisplayName, done.Success, tc.ok)
			}
		})
	}
}

// TestClientToolsFollowTheClients: the agent sees the tools of the clients
// active now: a tool nobody offers any more is not there to call.
func TestClientToolsFollowTheClients(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dialAt(t, "a", protocol.ProtocolVersion)
	uri, chat := a.newSession("s1", "test", t.TempDir())
	a.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{ClientID: "a", Tools: []protocol.ToolDefinition{lintTool}}})
	a.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{ClientID: "a", Tools: []protocol.ToolDefinition{}}})
	a.startTurn(chat, "t1", `mcp ahp-clients lint {}`)
	a.waitTurnEnd("t1")
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts); !strings.Contains(got, "ahp-clients/lint failed") {
		t.Errorf("the agent said %q, want the call of a withdrawn tool to fail", got)
	}
}
