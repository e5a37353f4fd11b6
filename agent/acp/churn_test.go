package acp_test

import (
	"context"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/churn"
)

// acpChurn is a cycle of a daemon's life on the scripted ACP agent (see
// package churn): each session starts an agent process, runs a turn,
// cancels a slow one, moves a side chat to a new session, and both
// sessions are disposed.
func acpChurn(tb testing.TB) churn.Options {
	return churn.Options{Provider: "test", WorkingDirectory: "file://" + tb.TempDir(), Turn: "think hello", Cancel: "slow 50", Move: true}
}

func newChurnHost(tb testing.TB) (*host.Host, *acp.Backend) {
	tb.Helper()
	b := newBackend(tb, nil)
	// A small replay log, so that the warm-up fills it.
	h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Logger: testLogger(tb), ReplayEntries: 500})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close() })
	return h, b
}

// settle waits until the backend has closed the disposed sessions and
// their agent processes have exited, so that their buffers do not count
// as what the cycles left. Both happen after disposeSession answers: the
// host closes a disposed session's agent on the session's own goroutine,
// and a session's Close stops its process without waiting for the exit.
// A session or process that outlives its disposal by 30 s is a leak.
func settle(tb testing.TB, b *acp.Backend) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s := b.Stats(); s.Sessions > 0 || s.Processes > 0; s = b.Stats() {
		if time.Now().After(deadline) {
			tb.Fatalf("30 s after their sessions were disposed the backend reports %+v, want no session and no process", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func cycles(tb testing.TB, d *churn.Driver, n int) {
	tb.Helper()
	for range n {
		if err := d.Cycle(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkChurn reports what a cycle on the ACP agent leaves live on the
// heap after a collection (live-B/cycle). Each cycle starts agent
// processes, so run it with a few hundred cycles (-benchtime=300x).
func BenchmarkChurn(b *testing.B) {
	h, be := newChurnHost(b)
	d := churn.New(h, acpChurn(b))
	cycles(b, d, 100)
	settle(b, be)
	before := churn.LiveHeap()
	for b.Loop() {
		if err := d.Cycle(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	settle(b, be)
	after := churn.LiveHeap()
	b.ReportMetric((float64(after)-float64(before))/float64(b.N), "live-B/cycle")
}

// TestChurnKeepsNothing is the short version of BenchmarkChurn: once the
// cycles' sessions are disposed, the backend holds no session and runs no
// process, the host's tables are as they were, and the live heap has not
// grown by more than a generous bound a cycle.
func TestChurnKeepsNothing(t *testing.T) {
	const warm, n, bound = 60, 100, 2048
	h, b := newChurnHost(t)
	d := churn.New(h, acpChurn(t))
	cycles(t, d, 10)
	empty := retained(h)
	cycles(t, d, warm-10)
	settle(t, b)
	before := churn.LiveHeap()
	cycles(t, d, n)
	settle(t, b)
	grown := (float64(churn.LiveHeap()) - float64(before)) / n
	if got := retained(h); got != empty {
		t.Errorf("after %d cycles the host holds %v, after 10 it held %v", warm+n, got, empty)
	}
	if s := b.Stats(); s.Sessions != 0 || s.Restarts != 0 {
		t.Errorf("after %d cycles the backend reports %+v, want no session and no restart", warm+n, s)
	}
	t.Logf("%.0f live bytes a cycle", grown)
	if grown > bound {
		t.Errorf("the live heap grew by %.0f bytes a cycle over %d cycles (bound %d)", grown, n, bound)
	}
}

// retained is what the host holds for sessions, chats and clients: the
// same before and after cycles that leave nothing behind.
type held struct{ Connections, Subscriptions, Sessions, Loaded, Chats, Channels, Running int }

func retained(h *host.Host) held {
	s := h.Stats()
	return held{s.Connections, s.Subscriptions, s.SessionsStored, s.SessionsLoaded, s.Chats, s.Channels, s.TurnsRunning}
}
