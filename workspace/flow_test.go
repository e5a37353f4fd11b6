package workspace

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The output waits while the slowest subscriber is far behind, until it
// is back within backlogLow; a pause that runs out is not repeated until
// the subscriber has caught up.
func TestFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var backlog atomic.Int64
		f := newFlow(backlog.Load)
		waited := func() time.Duration {
			start := time.Now()
			f.wait()
			return time.Since(start)
		}

		backlog.Store(backlogHigh)
		if d := waited(); d != 0 {
			t.Fatalf("waited %v at the high mark", d)
		}

		// A slow subscriber catches up after 100 ms.
		backlog.Store(backlogHigh + 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			backlog.Store(backlogLow)
		}()
		if d := waited(); d < 100*time.Millisecond || d > 100*time.Millisecond+2*backlogPoll {
			t.Fatalf("waited %v for a subscriber that caught up after 100ms", d)
		}

		// One that stopped reading: one pause of maxPause, then none
		// until it has caught up.
		backlog.Store(8 * backlogHigh)
		if d := waited(); d < maxPause || d > maxPause+2*backlogPoll {
			t.Fatalf("waited %v for a stalled subscriber, want %v", d, maxPause)
		}
		for range 3 {
			if d := waited(); d != 0 {
				t.Fatalf("waited again, %v, for the stalled subscriber", d)
			}
		}
		backlog.Store(backlogLow - 1)
		waited()
		backlog.Store(backlogHigh + 1)
		go func() {
			time.Sleep(time.Second)
			backlog.Store(0)
		}()
		if d := waited(); d < time.Second {
			t.Fatalf("no pause once the subscriber had caught up and fell behind again (%v)", d)
		}

		// Ending the flow ends a pause at once.
		backlog.Store(8 * backlogHigh)
		go func() {
			time.Sleep(10 * time.Millisecond)
			f.end()
		}()
		if d := waited(); d > 10*time.Millisecond+backlogPoll {
			t.Fatalf("waited %v after the end", d)
		}
		f.end() // again: no panic
	})
}
