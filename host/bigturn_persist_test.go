package host_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// snapSizes records the size of every snapshot of one channel written to
// the store it wraps.
type snapSizes struct {
	store.Store
	channel string
	mu      sync.Mutex
	sizes   []int
}

func (s *snapSizes) Write(ctx context.Context, b store.Batch) error {
	s.mu.Lock()
	for _, op := range b {
		if p, ok := op.(store.PutSnapshot); ok && p.Snapshot.Channel == s.channel {
			s.sizes = append(s.sizes, len(p.Snapshot.State))
		}
	}
	s.mu.Unlock()
	return s.Store.Write(ctx, b)
}

// TestBigRunningTurnSurvivesCrash: while a turn streams past a few MiB its
// chat gets no more size-triggered snapshots (each would hold the text once
// more), and a crash then still brings back every saved byte of the text,
// replayed from the log.
func TestBigRunningTurnSurvivesCrash(t *testing.T) {
	eachStore(t, func(t *testing.T, base store.Store) {
		const deltas, size = 512, 16 << 10 // 8 MiB
		text := strings.Repeat("streamed ", size/9+1)[:size]
		streamed := make(chan struct{})
		answer := func(h agent.Host, channel, turnID string) {
			defer close(streamed)
			h.Dispatch(channel, &protocol.ChatResponsePartAction{TurnID: turnID, Part: &protocol.MarkdownResponsePart{ID: "p"}})
			for range deltas {
				if err := h.Dispatch(channel, &protocol.ChatDeltaAction{TurnID: turnID, PartID: "p", Content: text}); err != nil {
					t.Error(err)
					return
				}
			}
		}
		st := &snapSizes{Store: base}
		// The agent streams as fast as it can: on a busy machine the store
		// may fall more than the default MaxSaveDelay behind, and the host
		// then refuses the rest of the turn, as it should. What this test
		// checks does not depend on that bound, so it is a generous one.
		th := startHost(t, &host.Options{Store: st, MaxSaveDelay: time.Minute, Agents: []agent.Backend{&turnAgent{provider: "big", answer: answer}}})
		c := th.dial(t, "a")
		c.initialize()
		_, chat := c.newSession("big")
		st.mu.Lock()
		st.channel = chat
		st.mu.Unlock()
		c.Subscribe(chat)
		startTurn(c, chat, "big", "go")
		<-streamed
		if err := th.h.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		st.mu.Lock()
		sizes := st.sizes
		st.mu.Unlock()
		for _, n := range sizes {
			if n > 6<<20 {
				t.Errorf("a %d-byte snapshot of the chat was written while its turn ran (all: %v)", n, sizes)
			}
		}
		th.h.Crash()

		th2 := startHost(t, &host.Options{Store: base})
		c2 := th2.dial(t, "b")
		c2.initialize()
		cs := c2.Subscribe(chat).State.(*protocol.ChatState)
		if cs.ActiveTurn != nil || len(cs.Turns) != 1 {
			t.Fatalf("after the crash: active %v, %d turns", cs.ActiveTurn, len(cs.Turns))
		}
		got := cs.Turns[0].ResponseParts[0].(*protocol.MarkdownResponsePart).Content.String()
		if len(got) != deltas*size || got[:size] != text || got[len(got)-size:] != text {
			t.Fatalf("the interrupted turn kept %d bytes of its text; want %d", len(got), deltas*size)
		}
	})
}
