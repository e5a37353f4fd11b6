package host_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// TestQueuedMessagesRunInOrder: messages queued while a turn runs each
// start one turn, in order, once the turn before has ended (chat channel
// page, "Queued Messages": pendingMessageRemoved, then turnStarted).
func TestQueuedMessagesRunInOrder(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "a")
	c.initialize()
	_, chat := c.newSession("s1")
	c.Subscribe(chat)
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t0", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("/slow 5")})
	for i, text := range []string{"one", "two", "three"} {
		c.Dispatch(chat, &protocol.ChatPendingMessageSetAction{Kind: protocol.PendingMessageKindQueued, ID: fmt.Sprint("q", i), Message: userMessage(text)})
	}
	c.WaitFor("four turns", func(envs []protocol.ActionEnvelope) bool {
		n := 0
		for _, e := range envs {
			if _, ok := e.Action.(*protocol.ChatTurnCompleteAction); ok {
				n++
			}
		}
		return n == 4
	})
	st := c.Subscribe(chat).State.(*protocol.ChatState)
	var texts []string
	for _, tr := range st.Turns {
		texts = append(texts, tr.Message.Text)
	}
	if want := []string{"/slow 5", "one", "two", "three"}; !slices.Equal(texts, want) {
		t.Errorf("turns %q, want %q", texts, want)
	}
	if len(st.QueuedMessages) != 0 || st.ActiveTurn != nil {
		t.Errorf("left over: queued %+v, active %+v", st.QueuedMessages, st.ActiveTurn)
	}
	// Each turn started after the one before ended: never two turnStarted
	// in a row.
	var last string
	for _, e := range c.Envelopes() {
		switch e.Action.(type) {
		case *protocol.ChatTurnStartedAction:
			if last == "started" {
				t.Fatal("a turn started while another was active")
			}
			last = "started"
		case *protocol.ChatTurnCompleteAction:
			last = "ended"
		}
	}
}
