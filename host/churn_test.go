package host_test

import (
	"context"

	"testing"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/churn"
)

// churnKinds are the cycles of a daemon's life on the echo agent (see
// package churn): a connection that only lists, a session created and
// disposed, one that runs a turn (the cycle), one whose turn is
// cancelled, one whose side chat moves to a new session, and all of it.
var churnKinds = []struct {
	name string
	opts churn.Options
}{
	{"connect", churn.Options{}},
	{"create", churn.Options{Provider: echo.Provider}},
	{"turn", churn.Options{Provider: echo.Provider, Turn: "/think hello"}},
	{"cancel", churn.Options{Provider: echo.Provider, Cancel: "/slow 50"}},
	{"move", churn.Options{Provider: echo.Provider, Move: true}},
	{"all", churn.Options{Provider: echo.Provider, Turn: "/think hello", Cancel: "/slow 50", Move: true}},
}

func newChurnHost(tb testing.TB) *host.Host {
	tb.Helper()
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: -1})}, ReplayEntries: churnReplay})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close() })
	return h
}

// churnWarmUp is how many cycles run before the live heap is first
// measured: enough to fill what is bounded by design, the replay log,
// which every cycle that creates a session adds at least two actions to
// (kept to churnReplay entries so that the warm-up is short).
const (
	churnWarmUp = 400
	churnReplay = 500
)

func runCycles(tb testing.TB, d *churn.Driver, n int) {
	tb.Helper()
	for range n {
		if err := d.Cycle(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkChurn runs cycles of each kind and reports what each leaves
// live on the heap after a collection (live-B/cycle), near 0 when nothing
// is kept for sessions, chats, turns and clients that are gone. Run it with
// many cycles (-benchtime=10000x): the noise of a measurement is divided
// by them.
func BenchmarkChurn(b *testing.B) {
	for _, k := range churnKinds {
		b.Run(k.name, func(b *testing.B) {
			h := newChurnHost(b)
			d := churn.New(h, k.opts)
			runCycles(b, d, churnWarmUp)
			before := churn.LiveHeap()
			for b.Loop() {
				if err := d.Cycle(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			after := churn.LiveHeap()
			b.ReportMetric((float64(after)-float64(before))/float64(b.N), "live-B/cycle")
		})
	}
}

// TestChurnKeepsNothing is the short version of BenchmarkChurn: after
// every kind of cycle the host's tables are as they were, and the live heap
// grows by far less a cycle than the 1.7 KB a turn's session used to leave
// behind (the bound is generous: a few hundred cycles measure it, and the
// test must not be flaky).
func TestChurnKeepsNothing(t *testing.T) {
	const cycles, bound = 300, 512
	for _, k := range churnKinds {
		t.Run(k.name, func(t *testing.T) {
			h := newChurnHost(t)
			d := churn.New(h, k.opts)
			runCycles(t, d, 20)
			empty := retained(h)
			runCycles(t, d, churnWarmUp-20)
			before := churn.LiveHeap()
			runCycles(t, d, cycles)
			grown := (float64(churn.LiveHeap()) - float64(before)) / cycles
			if got := retained(h); got != empty {
				t.Errorf("after %d cycles the host holds %v, after 20 it held %v", churnWarmUp+cycles, got, empty)
			}
			t.Logf("%.0f live bytes a cycle", grown)
			if grown > bound {
				t.Errorf("the live heap grew by %.0f bytes a cycle over %d cycles (bound %d)", grown, cycles, bound)
			}
		})
	}
}

// retained is what the host holds for sessions, chats and clients: the
// same before and after cycles that leave nothing behind.
type held struct{ Connections, Subscriptions, Sessions, Loaded, Chats, Channels, Running int }

func retained(h *host.Host) held {
	s := h.Stats()
	return held{s.Connections, s.Subscriptions, s.SessionsStored, s.SessionsLoaded, s.Chats, s.Channels, s.TurnsRunning}
}
