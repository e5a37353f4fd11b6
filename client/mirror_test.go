package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

func clock() time.Time { return time.UnixMilli(1_700_000_000_000) }

var red = reducer.Reducer{Now: clock}

func msg(text string) protocol.Message {
	return protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
}

func queued(id string) *protocol.ChatPendingMessageSetAction {
	return &protocol.ChatPendingMessageSetAction{Kind: protocol.PendingMessageKindQueued, ID: id, Message: msg(id)}
}

func emptyChat() *protocol.Snapshot {
	return &protocol.Snapshot{Resource: "ahp-chat:/c", FromSeq: 10, State: &protocol.ChatState{ChatStateFields: &protocol.ChatStateFields{
		Resource: "ahp-chat:/c", Title: "Chat", Status: protocol.SessionStatusIdle, ModifiedAt: protocol.FormatTime(clock()), Turns: []protocol.Turn{},
	}}}
}

func env(seq int64, a protocol.StateAction, origin string, clientSeq int64) *protocol.ActionEnvelope {
	e := &protocol.ActionEnvelope{Channel: "ahp-chat:/c", Action: a, ServerSeq: seq}
	if origin != "" {
		e.Origin = &protocol.ActionOrigin{ClientID: origin, ClientSeq: clientSeq}
	}
	return e
}

func rejected(seq int64, a protocol.StateAction, origin string, clientSeq int64) *protocol.ActionEnvelope {
	e := env(seq, a, origin, clientSeq)
	e.RejectionReason = protocol.Ptr("no")
	return e
}

func queueIDs(st protocol.SnapshotState) []string {
	ids := []string{}
	for _, m := range st.(*protocol.ChatState).QueuedMessages {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestMirrorReconciliation walks the cases of the reconciliation guide:
// each step either dispatches one of our actions or receives an envelope,
// and the test checks the queued message IDs in the confirmed and the
// optimistic states, and the pending count, afterwards.
func TestMirrorReconciliation(t *testing.T) {
	type step struct {
		dispatch  *protocol.ChatPendingMessageSetAction // our action, with clientSeq seq
		seq       int64
		receive   *protocol.ActionEnvelope
		confirmed []string
		optimism  []string
		pending   int
		settled   int64 // clientSeq settled by this step, 0 for none
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"own echo pops the head", []step{
			{dispatch: queued("a"), seq: 1, confirmed: []string{}, optimism: []string{"a"}, pending: 1},
			{receive: env(11, queued("a"), "me", 1), confirmed: []string{"a"}, optimism: []string{"a"}, pending: 0, settled: 1},
		}},
		{"foreign action rebases pending", []step{
			{dispatch: queued("a"), seq: 1, confirmed: []string{}, optimism: []string{"a"}, pending: 1},
			{dispatch: queued("b"), seq: 2, confirmed: []string{}, optimism: []string{"a", "b"}, pending: 2},
			{receive: env(11, queued("x"), "other", 7), confirmed: []string{"x"}, optimism: []string{"x", "a", "b"}, pending: 2},
			{receive: env(12, queued("y"), "", 0), confirmed: []string{"x", "y"}, optimism: []string{"x", "y", "a", "b"}, pending: 2},
			{receive: env(13, queued("a"), "me", 1), confirmed: []string{"x", "y", "a"}, optimism: []string{"x", "y", "a", "b"}, pending: 1, settled: 1},
			{receive: env(14, queued("b"), "me", 2), confirmed: []string{"x", "y", "a", "b"}, optimism: []string{"x", "y", "a", "b"}, pending: 0, settled: 2},
		}},
		{"rejection reverts", []step{
			{dispatch: queued("a"), seq: 1, confirmed: []string{}, optimism: []string{"a"}, pending: 1},
			{dispatch: queued("b"), seq: 2, confirmed: []string{}, optimism: []string{"a", "b"}, pending: 2},
			{receive: rejected(10, queued("a"), "me", 1), confirmed: []string{}, optimism: []string{"b"}, pending: 1, settled: 1},
			{receive: env(11, queued("b"), "me", 2), confirmed: []string{"b"}, optimism: []string{"b"}, pending: 0, settled: 2},
		}},
		{"another client's rejection is not ours", []step{
			{dispatch: queued("a"), seq: 1, confirmed: []string{}, optimism: []string{"a"}, pending: 1},
			{receive: rejected(10, queued("a"), "other", 1), confirmed: []string{}, optimism: []string{"a"}, pending: 1},
		}},
		{"stale envelope ignored", []step{
			{receive: env(9, queued("old"), "", 0), confirmed: []string{}, optimism: []string{}, pending: 0},
		}},
		{"private envelope at the current seq applies", []step{
			{receive: env(10, queued("page"), "", 0), confirmed: []string{"page"}, optimism: []string{"page"}, pending: 0},
			{receive: env(11, queued("next"), "", 0), confirmed: []string{"page", "next"}, optimism: []string{"page", "next"}, pending: 0},
		}},
		{"echo out of order settles the right action", []step{
			{dispatch: queued("a"), seq: 1, confirmed: []string{}, optimism: []string{"a"}, pending: 1},
			{dispatch: queued("b"), seq: 2, confirmed: []string{}, optimism: []string{"a", "b"}, pending: 2},
			{receive: env(11, queued("b"), "me", 2), confirmed: []string{"b"}, optimism: []string{"b", "a"}, pending: 1, settled: 2},
		}},
		{"echo of an action no longer pending applies like any other", []step{
			{receive: env(11, queued("a"), "me", 5), confirmed: []string{"a"}, optimism: []string{"a"}, pending: 0},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror("me", red, emptyChat())
			for i, s := range tc.steps {
				var settled int64
				if s.dispatch != nil {
					m.dispatch(pendingAction{clientSeq: s.seq, action: s.dispatch})
				} else {
					out := m.receive(s.receive)
					if out.settled != nil {
						settled = out.settled.clientSeq
					}
				}
				if diff := cmp.Diff(s.confirmed, queueIDs(m.confirmed)); diff != "" {
					t.Errorf("step %d: confirmed (-want +got):\n%s", i, diff)
				}
				if diff := cmp.Diff(s.optimism, queueIDs(m.optimistic)); diff != "" {
					t.Errorf("step %d: optimistic (-want +got):\n%s", i, diff)
				}
				if len(m.pending) != s.pending {
					t.Errorf("step %d: %d pending, want %d", i, len(m.pending), s.pending)
				}
				if settled != s.settled {
					t.Errorf("step %d: settled %d, want %d", i, settled, s.settled)
				}
			}
		})
	}
}

func TestMirrorWithdrawAndClear(t *testing.T) {
	m := newMirror("me", red, emptyChat())
	m.dispatch(pendingAction{clientSeq: 1, action: queued("a")})
	m.dispatch(pendingAction{clientSeq: 2, action: queued("b")})
	if !m.withdraw(1) || m.withdraw(1) {
		t.Fatal("withdraw should find the action once")
	}
	if got := queueIDs(m.optimistic); !cmp.Equal(got, []string{"b"}) {
		t.Fatalf("optimistic after withdraw: %v", got)
	}
	if dropped := m.clearPending(); len(dropped) != 1 || dropped[0].clientSeq != 2 {
		t.Fatalf("cleared %v", dropped)
	}
	if m.optimistic != m.confirmed {
		t.Fatal("optimistic differs from confirmed with nothing pending")
	}
	// A snapshot replaces the confirmed state and keeps pending actions.
	m.dispatch(pendingAction{clientSeq: 3, action: queued("c")})
	snap := emptyChat()
	snap.FromSeq = 50
	m.reset(snap)
	if m.seq != 50 || !cmp.Equal(queueIDs(m.optimistic), []string{"c"}) {
		t.Fatalf("after reset: seq %d, optimistic %v", m.seq, queueIDs(m.optimistic))
	}
}

// TestMirrorDoesNotMutate checks that states handed out stay as they were.
func TestMirrorDoesNotMutate(t *testing.T) {
	m := newMirror("me", red, emptyChat())
	before := m.optimistic
	enc, _ := protocol.Marshal(before)
	m.dispatch(pendingAction{clientSeq: 1, action: queued("a")})
	m.receive(env(11, queued("x"), "other", 1))
	m.receive(rejected(11, queued("a"), "me", 1))
	after, _ := protocol.Marshal(before)
	if string(enc) != string(after) {
		t.Fatalf("a state handed out changed:\n%s\n%s", enc, after)
	}
}

func TestBackoff(t *testing.T) {
	c := newClient(nil, &Options{ReconnectDelay: 100 * time.Millisecond, MaxReconnectDelay: time.Second})
	defer c.cancel()
	for _, tc := range []struct {
		attempt int
		bound   time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {4, 800 * time.Millisecond}, {5, time.Second}, {80, time.Second}} {
		var top time.Duration
		for range 200 {
			d := c.backoff(tc.attempt)
			if d < 0 || d > tc.bound {
				t.Fatalf("attempt %d: delay %v outside [0, %v]", tc.attempt, d, tc.bound)
			}
			top = max(top, d)
		}
		if top < tc.bound/2 {
			t.Errorf("attempt %d: delays never came near the bound %v (max %v): no jitter range?", tc.attempt, tc.bound, top)
		}
	}
}

// BenchmarkMirror applies 10,000 streamed chat/delta envelopes, as an agent
// streams a reply, with no pending action and with five of this client's
// actions pending (queued messages the host has not echoed yet), which the
// mirror replays after every envelope.
func BenchmarkMirror(b *testing.B) {
	const envelopes = 10_000
	chat := emptyChat()
	start := red.Apply(chat.State, &protocol.ChatTurnStartedAction{TurnID: "t", StartedAt: protocol.FormatTime(clock()), Message: msg("go")})
	start = red.Apply(start, &protocol.ChatResponsePartAction{TurnID: "t", Part: &protocol.MarkdownResponsePart{ID: "p"}})
	envs := make([]*protocol.ActionEnvelope, envelopes)
	for i := range envs {
		envs[i] = env(int64(11+i), &protocol.ChatDeltaAction{TurnID: "t", PartID: "p", Content: "word "}, "", 0)
	}
	for _, pending := range []int{0, 5} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m := newMirror("me", red, &protocol.Snapshot{Resource: chat.Resource, State: start, FromSeq: 10})
				for i := range pending {
					m.dispatch(pendingAction{clientSeq: int64(i + 1), action: queued(fmt.Sprint("q", i))})
				}
				for _, e := range envs {
					m.receive(e)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*envelopes), "ns/envelope")
		})
	}
}
