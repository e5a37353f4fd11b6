package echo_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// fakeHost reduces what the agent dispatches on one chat.
type fakeHost struct {
	mu      sync.Mutex
	chat    *protocol.ChatState
	actions []protocol.StateAction
	changed chan struct{}
}

func newFakeHost() *fakeHost {
	return &fakeHost{chat: &protocol.ChatState{ChatStateFields: &protocol.ChatStateFields{Resource: "ahp-chat:/c", Turns: []protocol.Turn{}}}, changed: make(chan struct{}, 100)}
}

func (h *fakeHost) Dispatch(channel string, a protocol.StateAction) error {
	h.mu.Lock()
	h.chat = reducer.Chat(h.chat, a)
	h.actions = append(h.actions, a)
	h.mu.Unlock()
	h.changed <- struct{}{}
	return nil
}

func (h *fakeHost) ChatState(string) *protocol.ChatState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.chat
}

func (h *fakeHost) Remember(string, string) {}

// apply applies a client action and hands it to the agent, as the host does.
func (h *fakeHost) apply(s agent.Session, a protocol.StateAction) {
	h.mu.Lock()
	h.chat = reducer.Chat(h.chat, a)
	chat := h.chat
	h.mu.Unlock()
	s.Handle(agent.Event{Channel: "ahp-chat:/c", Action: a, Origin: &protocol.ActionOrigin{ClientID: "c"}, Chat: chat})
}

func (h *fakeHost) wait(t *testing.T, what string, cond func(*protocol.ChatState) bool) *protocol.ChatState {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if c := h.ChatState(""); cond(c) {
			return c
		}
		select {
		case <-h.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func idle(c *protocol.ChatState) bool { return c.ActiveTurn == nil && len(c.Turns) > 0 }

func start(t *testing.T, text string) (*fakeHost, agent.Session) {
	t.Helper()
	h := newFakeHost()
	s, err := echo.New(&echo.Options{WordDelay: -1, SlowDelay: time.Millisecond}).Open(context.Background(), agent.OpenRequest{}, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h.apply(s, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: "2026-01-01T00:00:00.000Z",
		Message: protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}})
	return h, s
}

func replyText(c *protocol.ChatState) string {
	var b strings.Builder
	for _, p := range c.Turns[len(c.Turns)-1].ResponseParts {
		if m, ok := p.(*protocol.MarkdownResponsePart); ok {
			b.WriteString(m.Content.String())
		}
	}
	return b.String()
}

func TestEchoReplies(t *testing.T) {
	for _, tc := range []struct{ prompt, want string }{
		{"hello   world", "You said: hello world"},
		{"/slow 3", "word1 word2 word3"},
		{"/think deep", "You said: deep"},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			h, _ := start(t, tc.prompt)
			c := h.wait(t, "turn end", idle)
			if got := replyText(c); got != tc.want {
				t.Fatalf("reply %q, want %q", got, tc.want)
			}
			if c.Turns[0].State != protocol.TurnStateComplete {
				t.Fatalf("turn state %s", c.Turns[0].State)
			}
		})
	}
}

func TestEchoError(t *testing.T) {
	h, _ := start(t, "/error")
	c := h.wait(t, "turn end", idle)
	if c.Turns[0].State != protocol.TurnStateError {
		t.Fatalf("turn state %s, want error", c.Turns[0].State)
	}
}

func TestEchoToolWaitsForConfirmation(t *testing.T) {
	for _, approve := range []bool{true, false} {
		h, s := start(t, "/tool ping")
		c := h.wait(t, "pending confirmation", func(c *protocol.ChatState) bool {
			if c.ActiveTurn == nil {
				return false
			}
			for _, p := range c.ActiveTurn.ResponseParts {
				if tc, ok := p.(*protocol.ToolCallResponsePart); ok {
					_, pending := tc.ToolCall.(*protocol.ToolCallPendingConfirmationState)
					return pending
				}
			}
			return false
		})
		id := c.ActiveTurn.ResponseParts[0].(*protocol.ToolCallResponsePart).ToolCall.(*protocol.ToolCallPendingConfirmationState).ToolCallID
		h.apply(s, &protocol.ChatToolCallConfirmedAction{TurnID: "t1", ToolCallID: id, Approved: approve})
		c = h.wait(t, "turn end", idle)
		want := "The tool said: ping"
		if !approve {
			want = "The tool call was denied."
		}
		if got := replyText(c); got != want {
			t.Fatalf("approve=%v: reply %q", approve, got)
		}
	}
}

func TestEchoInput(t *testing.T) {
	h, s := start(t, "/input Your name?")
	c := h.wait(t, "input request", func(c *protocol.ChatState) bool {
		return c.ActiveTurn != nil && len(c.ActiveTurn.ResponseParts) > 0
	})
	req := c.ActiveTurn.ResponseParts[0].(*protocol.InputRequestResponsePart).Request
	h.apply(s, &protocol.ChatInputCompletedAction{RequestID: req.ID, Response: protocol.ChatInputResponseKindAccept,
		Answers: map[string]protocol.ChatInputAnswer{"answer": &protocol.ChatInputAnswered{
			AnswerState: protocol.ChatInputAnsweredStateSubmitted, Value: &protocol.ChatInputTextAnswerValue{Value: "Ada"}}}})
	c = h.wait(t, "turn end", idle)
	if got := replyText(c); got != "You answered: Ada" {
		t.Fatalf("reply %q", got)
	}
}

func TestEchoCancel(t *testing.T) {
	// In a bubble, the pause below is fake time: the agent, were it still
	// streaming (a word a millisecond), would have dispatched 20 more.
	synctest.Test(t, func(t *testing.T) {
		h, s := start(t, "/slow 1000")
		h.wait(t, "streaming", func(c *protocol.ChatState) bool { return c.ActiveTurn != nil && len(c.ActiveTurn.ResponseParts) > 0 })
		h.apply(s, &protocol.ChatTurnCancelledAction{TurnID: "t1"})
		c := h.wait(t, "cancelled", idle)
		synctest.Wait()
		h.mu.Lock()
		n := len(h.actions)
		h.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		h.mu.Lock()
		after := len(h.actions)
		h.mu.Unlock()
		if after != n {
			t.Fatalf("agent kept dispatching after the cancel: %d then %d actions", n, after)
		}
		if c.Turns[0].State != protocol.TurnStateCancelled {
			t.Fatalf("turn state %s", c.Turns[0].State)
		}
	})
}
