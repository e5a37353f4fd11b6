package host_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// risingSeqs fails the test unless every envelope a connection received
// carries a serverSeq above all earlier ones and above from (the serverSeq
// of the first snapshot the connection was given).
func risingSeqs(t *testing.T, from int64, envs []protocol.ActionEnvelope) {
	t.Helper()
	last := from
	for i, e := range envs {
		if e.ServerSeq <= last {
			t.Fatalf("envelope %d (%s, rejected %v) has serverSeq %d after %d", i, e.Action.Type(), e.RejectionReason != nil, e.ServerSeq, last)
		}
		last = e.ServerSeq
	}
}

func rejected(clientSeq int64) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		return rejectionOf(clientSeq, envs) != nil
	}
}

func accepted(clientSeq int64) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientSeq == clientSeq && e.RejectionReason == nil {
				return true
			}
		}
		return false
	}
}

func rejectionOf(clientSeq int64, envs []protocol.ActionEnvelope) *protocol.ActionEnvelope {
	for i, e := range envs {
		if e.Origin != nil && e.Origin.ClientSeq == clientSeq && e.RejectionReason != nil {
			return &envs[i]
		}
	}
	return nil
}

// runTurns runs echo turns first to first+n-1 on a chat, one after the
// other.
func runTurns(c *client, chat string, first, n int) {
	c.T.Helper()
	for i := first; i < first+n; i++ {
		before := countType("chat/turnComplete", only(chat, c.Envelopes()))
		startTurn(c, chat, fmt.Sprintf("turn-%02d", i), fmt.Sprintf("message %d", i))
		c.WaitFor("turn end", func(envs []protocol.ActionEnvelope) bool {
			return countType("chat/turnComplete", only(chat, envs)) > before
		})
	}
}

// TestServerSeqRisesOnEveryEnvelope: Snapshot.fromSeq says subsequent
// actions have serverSeq > fromSeq, so a client may drop what it has seen.
// Rejection echoes and fetchTurns pages, which only one connection sees,
// must still carry a serverSeq above everything that connection received.
func TestServerSeqRisesOnEveryEnvelope(t *testing.T) {
	th := startHost(t, nil)
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	_, chat := a.newSession("seq")
	a.Subscribe(chat)
	runTurns(a, chat, 0, 3)

	var sub protocol.SubscribeResult
	b.Must("subscribe", &protocol.SubscribeParams{Channel: chat, View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](1)}}, &sub)
	from := sub.Snapshot.FromSeq
	// Two rejections in a row: each one is above the snapshot and above
	// the one before.
	b.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	seq := b.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	b.WaitFor("rejections", rejected(seq))
	// A page of older turns, asked for with the snapshot's cursor.
	b.Must("fetchTurns", &protocol.FetchTurnsParams{Channel: chat, Cursor: sub.Snapshot.State.(*protocol.ChatState).TurnsNextCursor}, nil)
	b.WaitFor("page", hasType("chat/turnsLoaded"))
	// Then a rejection and a live action again.
	b.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	runTurns(b, chat, 3, 1)
	envs := b.Envelopes()
	risingSeqs(t, from, envs)
	if n := len(envs); n < 5 {
		t.Fatalf("only %d envelopes", n)
	}
	// The subscriber's mirror, dropping nothing, holds every turn.
	st := mirror(t, sub.Snapshot, envs).(*protocol.ChatState)
	if len(st.Turns) != 4 || st.Turns[0].ID != "turn-00" {
		t.Fatalf("mirror holds %d turns", len(st.Turns))
	}
	// The other client saw none of b's private envelopes, and its own
	// sequence still rises.
	for _, e := range a.Envelopes() {
		if e.RejectionReason != nil || e.Action.Type() == "chat/turnsLoaded" {
			t.Fatalf("a received b's private envelope %s", e.Action.Type())
		}
	}
	risingSeqs(t, 0, a.Envelopes())
}

// TestFetchTurnsWithoutCursorCountsFromTheClient: after a subscribe with
// view.turns, fetchTurns without a cursor loads the host's "next older
// page for the chat" (FetchTurnsParams.cursor): older than what this client
// holds, not than the host's in-memory window.
func TestFetchTurnsWithoutCursorCountsFromTheClient(t *testing.T) {
	th := startHost(t, nil)
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	_, chat := a.newSession("window")
	a.Subscribe(chat)
	runTurns(a, chat, 0, 17)

	var sub protocol.SubscribeResult
	b.Must("subscribe", &protocol.SubscribeParams{Channel: chat, View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](3)}}, &sub)
	cs := sub.Snapshot.State.(*protocol.ChatState)
	if len(cs.Turns) != 3 || cs.TurnsNextCursor == nil {
		t.Fatalf("view of 3: %d turns, cursor %v", len(cs.Turns), cs.TurnsNextCursor)
	}
	b.Must("fetchTurns", &protocol.FetchTurnsParams{Channel: chat}, nil)
	envs := b.WaitFor("page", hasType("chat/turnsLoaded"))
	st := mirror(t, sub.Snapshot, envs).(*protocol.ChatState)
	if len(st.Turns) != 17 || st.Turns[0].ID != "turn-00" || st.Turns[16].ID != "turn-16" || st.TurnsNextCursor != nil {
		t.Fatalf("after one page the client holds %d turns (cursor %v)", len(st.Turns), st.TurnsNextCursor)
	}
	// Once it holds everything, another page is empty and has no cursor.
	b.Must("fetchTurns", &protocol.FetchTurnsParams{Channel: chat}, nil)
	envs = b.WaitFor("second page", func(envs []protocol.ActionEnvelope) bool { return countType("chat/turnsLoaded", envs) == 2 })
	last := envs[len(envs)-1].Action.(*protocol.ChatTurnsLoadedAction)
	if len(last.Turns) != 0 || last.TurnsNextCursor != nil {
		t.Fatalf("second page: %d turns, cursor %v", len(last.Turns), last.TurnsNextCursor)
	}
	risingSeqs(t, sub.Snapshot.FromSeq, envs)
}

var _ = time.Second
