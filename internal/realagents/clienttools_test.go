package realagents_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/internal/modelserver"
	"github.com/ahp-go/ahp/internal/realagents"
	"github.com/ahp-go/ahp/protocol"
)

// TestClaudeCallsAClientTool: Claude Code, scripted to call a tool the
// watching client publishes, reaches it through ahpd's MCP server of the
// clients' tools; the call is a tool call of the turn contributed by that
// client, and the client's result goes back to the model.
func TestClaudeCallsAClientTool(t *testing.T) {
	t.Parallel()
	r := newRig(t, realagents.Claude, nil)
	// In the default mode Claude Code asks before it calls an MCP tool
	// (its auto mode would ask a classifier model, which the scripted
	// model does not play).
	c := r.newChat(claude.manual)
	// A first turn: Claude Code connects to the MCP servers and lists
	// their tools (none yet) before the client publishes its tool.
	r.model.Handle("say hi", modelserver.Scenario{modelserver.Text("Hi.")})
	if end := c.end(c.send("please say hi")); end.Type() != "chat/turnComplete" {
		t.Fatalf("first turn ended with %+v", end)
	}
	ctx, cancel := context.WithTimeout(r.ctx, wait)
	defer cancel()
	rc, err := c.wss.Dispatch(ctx, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{
		ClientID: "watcher", Tools: []protocol.ToolDefinition{{Name: "lint", Description: protocol.Ptr("Lints a file"),
			InputSchema: &protocol.ToolDefinitionInputSchema{Required: []string{"path"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// The tool reaches Claude Code as the chat's ACP session is loaded
	// again before the next prompt (with a new URL for the server, so that
	// Claude Code connects again); the model calls it by the name Claude
	// Code gives MCP tools.
	tool := "mcp__" + acp.ClientToolsServer + "__lint"
	r.model.Handle("lint x.go", modelserver.Scenario{modelserver.Call(tool, map[string]any{"path": "x.go"}), modelserver.Text("Linted.")})
	turn := c.send("please lint x.go")

	c.answer(c.permission(turn), true)
	var ready *protocol.ChatToolCallReadyAction
	c.waitSeen("the client's tool call", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if a, ok := e.Action.(*protocol.ChatToolCallReadyAction); ok && a.TurnID == turn && strings.HasPrefix(a.ToolCallID, "acp-client-") {
				ready = a
				return true
			}
		}
		return false
	})
	if _, err := c.w.Dispatch(ctx, &protocol.ChatToolCallCompleteAction{TurnID: ready.TurnID, ToolCallID: ready.ToolCallID, Result: protocol.ToolCallResult{
		Success: true, PastTenseMessage: protocol.PlainText("Linted"),
		Content: []protocol.ToolResultContent{&protocol.ToolResultTextContent{Text: "lint-result: 2 warnings"}}}}); err != nil {
		t.Fatal(err)
	}
	if end := c.end(turn); end.Type() != "chat/turnComplete" {
		t.Fatalf("turn ended with %+v", end)
	}
	var client *protocol.ToolCallCompletedState
	for _, tc := range toolCalls(c.turn(turn).ResponseParts) {
		if done, ok := tc.(*protocol.ToolCallCompletedState); ok {
			if cc, ok := done.Contributor.(*protocol.ToolCallClientContributor); ok && cc.ClientID == "watcher" {
				client = done
			}
		}
	}
	if client == nil || !client.Success || client.ToolName != "lint" {
		t.Fatalf("no completed tool call of the watcher in %+v", c.turn(turn).ResponseParts)
	}
	sent := false
	for _, q := range r.model.Requests() {
		if strings.Contains(string(q.Body), "lint-result: 2 warnings") {
			sent = true
		}
	}
	if !sent {
		t.Error("the client's result did not reach the model")
	}
}
