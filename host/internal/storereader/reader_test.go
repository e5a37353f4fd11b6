package storereader

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestReaderPaces: while the host streams, reads that come back to
// back are spaced so that the reader reads for at most its share of the
// time, a read after a rest is not delayed, and a long read's rest is
// bounded.
func TestReaderPaces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		share float64
		took  time.Duration // how long each read takes
		rest  time.Duration // the gap wanted between back-to-back reads
	}{
		{"a quarter", 0.25, 10 * time.Millisecond, 30 * time.Millisecond},
		{"a half", 0.5, 10 * time.Millisecond, 10 * time.Millisecond},
		{"unpaced", 1, 10 * time.Millisecond, 0},
		{"long read", 0.25, time.Second, maxReadPause},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				var changes int64
				r := New(tc.share, func() int64 { changes++; return changes })
				stopped := make(chan struct{})
				go func() {
					defer close(stopped)
					r.Run(ctx, func(error) {})
				}()
				reads := &timedReads{took: tc.took}
				// The reader's first look at the host only learns where
				// it stands.
				if err := r.Do(ctx, func() {}); err != nil {
					t.Fatal(err)
				}
				// Three reads queued at once (back to back), then one
				// after the reader has rested long enough.
				reads.burst(t, ctx, r)
				time.Sleep(time.Minute)
				asked := time.Now()
				if err := r.Do(ctx, reads.sleepRead); err != nil {
					t.Fatal(err)
				}
				for i, gap := range reads.gaps()[:2] {
					if gap != tc.rest {
						t.Errorf("read %d started %v after the one before ended, want %v", i+1, gap, tc.rest)
					}
				}
				if wait := reads.starts[3].Sub(asked); wait != 0 {
					t.Errorf("a read after a rest waited %v", wait)
				}
				// Closing ends the reader also during a rest.
				go r.Do(ctx, reads.sleepRead)
				time.Sleep(tc.took + time.Nanosecond)
				cancel()
				<-stopped
			})
		})
	}
}

// TestReaderRestsOnlyWhileStreaming: with no change in the host for
// the streaming window, back-to-back reads do not rest; once it changes
// again, they do.
func TestReaderRestsOnlyWhileStreaming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var changes atomic.Int64
		r := New(0.25, changes.Load)
		go r.Run(ctx, func(error) {})
		reads := &timedReads{took: 10 * time.Millisecond}
		burst := func() { reads.burst(t, ctx, r) }
		gaps := reads.gaps
		// Quiet from the start: the first look records the count (a
		// host's restored serverSeq is no change), and nothing moves
		// after it.
		changes.Store(41)
		time.Sleep(time.Second)
		burst()
		if g := gaps(); g[0] != 0 || g[1] != 0 {
			t.Errorf("reads rested %v with the host quiet", g)
		}
		changes.Add(1)
		burst()
		if g := gaps(); g[0] != 30*time.Millisecond || g[1] != 30*time.Millisecond {
			t.Errorf("reads rested %v while the host changed, want 30ms each", g)
		}
		time.Sleep(time.Second)
		burst()
		if g := gaps(); g[0] != 0 || g[1] != 0 {
			t.Errorf("reads rested %v once the host was quiet again", g)
		}
	})
}

// timedReads are reads that each take took, recording when they start
// and end.
type timedReads struct {
	took         time.Duration
	starts, ends []time.Time
}

func (tr *timedReads) sleepRead() {
	tr.starts = append(tr.starts, time.Now())
	time.Sleep(tr.took)
	tr.ends = append(tr.ends, time.Now())
}

// burst forgets earlier reads, queues three on r at once (back to back)
// and waits for them.
func (tr *timedReads) burst(t *testing.T, ctx context.Context, r *Reader) {
	t.Helper()
	tr.starts, tr.ends = nil, nil
	done := make(chan error, 3)
	for range 3 {
		go func() { done <- r.Do(ctx, tr.sleepRead) }()
	}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// gaps is how long each read after the first started after the one
// before it ended.
func (tr *timedReads) gaps() (out []time.Duration) {
	for i := 1; i < len(tr.ends); i++ {
		out = append(out, tr.starts[i].Sub(tr.ends[i-1]))
	}
	return out
}
