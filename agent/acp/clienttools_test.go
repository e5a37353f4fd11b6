package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent/acp"
	ahp "github.com/ahp-go/ahp/client"
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

// TestClientToolFromGoSDK: a client written with the Go SDK (client/)
// publishes a tool, runs the agent's call of it from its chat
// subscription, and the agent gets its result.
func TestClientToolFromGoSDK(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dialAt(t, "a", protocol.ProtocolVersion)
	uri, chat := a.newSession("s1", "test", t.TempDir())

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ahp.Dial(ctx, th.URL, &ahp.Options{ClientID: "sdk"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	sess, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: chat})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sess.Dispatch(ctx, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{
		ClientID: "sdk", Tools: []protocol.ToolDefinition{{Name: "word_count", Description: protocol.Ptr("Counts the words of a text")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}

	// The client runs its tool when the agent calls it.
	ran := make(chan error, 1)
	go func() {
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				ran <- err
				return
			}
			if ev.Envelope == nil {
				continue
			}
			ready, ok := ev.Envelope.Action.(*protocol.ChatToolCallReadyAction)
			if !ok {
				continue
			}
			var call protocol.ToolCallState
			for _, p := range sub.Chat().ActiveTurn.ResponseParts {
				if tp, ok := p.(*protocol.ToolCallResponsePart); ok {
					call = tp.ToolCall
				}
			}
			run, ok := call.(*protocol.ToolCallRunningState)
			if cc, isClient := run.Contributor.(*protocol.ToolCallClientContributor); !ok || !isClient || cc.ClientID != "sdk" || run.ToolName != "word_count" {
				ran <- fmt.Errorf("the tool call is %+v", call)
				return
			}
			var args struct{ Text string }
			if err := json.Unmarshal([]byte(*ready.ToolInput.Inline), &args); err != nil {
				ran <- err
				return
			}
			_, err = sub.Dispatch(ctx, &protocol.ChatToolCallCompleteAction{TurnID: ready.TurnID, ToolCallID: ready.ToolCallID, Result: protocol.ToolCallResult{
				Success: true, PastTenseMessage: protocol.PlainText("Counted"),
				Content: []protocol.ToolResultContent{&protocol.ToolResultTextContent{Text: strconv.Itoa(len(strings.Fields(args.Text))) + " words"}}}})
			ran <- err
			return
		}
	}()
	a.startTurn(chat, "t1", `mcp ahp-clients word_count {"text":"one two three"}`)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	a.waitTurnEnd("t1")
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts); !strings.Contains(got, "ahp-clients/word_count: 3 words") {
		t.Errorf("the agent said %q", got)
	}
}

// TestClientToolCallEndsWithTheTurn: a client's tool call still running
// when its turn is cancelled fails for the agent at once, so the agent's
// prompt answers and the chat's next turn runs (neither the call nor the
// agent's cancellation has a timeout that could end it instead).
func TestClientToolCallEndsWithTheTurn(t *testing.T) {
	cfg := testConfig("test")
	cfg.ClientToolTimeout = acp.Duration(time.Hour)
	cfg.CancelTimeout = acp.Duration(time.Hour)
	b, err := acp.New(cfg, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	th := startHost(t, b)
	a := th.dialAt(t, "a", protocol.ProtocolVersion)
	uri, chat := a.newSession("s1", "test", t.TempDir())
	a.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{ClientID: "a", Tools: []protocol.ToolDefinition{lintTool}}})
	a.startTurn(chat, "t1", `mcp ahp-clients lint {"path":"x.go"}`)
	clientToolCall(a, "a")
	a.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "t1"})
	a.waitTurnEnd("t1")
	a.startTurn(chat, "t2", "say next")
	if end := a.waitTurnEnd("t2"); end.Action.Type() != "chat/turnComplete" {
		t.Fatalf("the next turn ended with %s", end.Action.Type())
	}
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t2").ResponseParts); got != "next" {
		t.Errorf("the next turn says %q", got)
	}
}
