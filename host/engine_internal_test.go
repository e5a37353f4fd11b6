package host

import (
	"log/slog"
	"testing"
	"time"

	"github.com/ahp-go/ahp/host/internal/replay"
	"github.com/ahp-go/ahp/protocol"
)

// TestEngineCommit: the engine reduces, sequences, logs for replay and
// then calls its after-commit hook with the state before, the change and
// its envelope; the lease hook runs as each serverSeq is issued, before
// the change is logged; commits the hook makes come back to it.
func TestEngineCommit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		follow  bool // the hook commits a follow-up change once
		commits int  // commits the hook sees
	}{
		{"one change", false, 1},
		{"a derived change", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e engine
			var sequenced []int64
			var seen []int64
			e.init(slog.New(slog.DiscardHandler), time.Now, replay.New(16, 1<<20), engineHooks{
				sequenced: func() { sequenced = append(sequenced, e.seq) },
				committed: func(rd *storeReads, ch *channel, prev protocol.SnapshotState, a protocol.StateAction, origin *protocol.ActionOrigin, env []byte) {
					seen = append(seen, e.seq)
					if env == nil {
						t.Errorf("serverSeq %d: no envelope", e.seq)
					}
					if prev == ch.state {
						t.Errorf("serverSeq %d: the hook ran before the state moved", e.seq)
					}
					if tc.follow && len(seen) == 1 {
						e.commitLocked(ch, &protocol.RootActiveSessionsChangedAction{ActiveSessions: 2}, nil)
					}
				},
			})
			ch := &channel{uri: protocol.RootURI, kind: protocol.ChannelRoot, state: &protocol.RootState{Agents: []protocol.AgentInfo{}}, subs: map[*conn]*subscription{}}
			e.channels[ch.uri] = ch
			e.mu.Lock()
			defer e.mu.Unlock()
			if msg := e.commitLocked(ch, &protocol.RootActiveSessionsChangedAction{ActiveSessions: 1}, nil); msg == nil {
				t.Fatal("commitLocked returned no notification")
			}
			if len(seen) != tc.commits || len(sequenced) != tc.commits {
				t.Fatalf("the hook saw serverSeqs %v, the lease %v; want %d of each", seen, sequenced, tc.commits)
			}
			entries, ok := e.replay.Since(0, map[string]bool{protocol.RootURI: true})
			if !ok || len(entries) != tc.commits {
				t.Fatalf("the replay log holds %d entries (complete %v), want %d", len(entries), ok, tc.commits)
			}
			want := int64(tc.commits)
			if got := *ch.state.(*protocol.RootState).ActiveSessions; got != want {
				t.Errorf("activeSessions = %d, want %d", got, want)
			}
			if e.seq != want || e.lastSeq.Load() != want {
				t.Errorf("serverSeq %d (readable %d), want %d", e.seq, e.lastSeq.Load(), want)
			}
		})
	}
}
