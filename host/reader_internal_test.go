package host

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestStoreReaderPaces: reads that come back to back are spaced so that
// the reader reads for at most its share of the time, a read after a rest
// is not delayed, and a long read's rest is bounded.
func TestStoreReaderPaces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		share float64
		read  time.Duration // how long each read takes
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
				r := newStoreReader(tc.share)
				stopped := make(chan struct{})
				go func() {
					defer close(stopped)
					r.run(ctx, func(error) {})
				}()
				var starts, ends []time.Time
				read := func() {
					starts = append(starts, time.Now())
					time.Sleep(tc.read)
					ends = append(ends, time.Now())
				}
				// Three reads queued at once (back to back), then one
				// after the reader has rested long enough.
				done := make(chan error, 3)
				for range 3 {
					go func() { done <- r.do(ctx, ctx, read) }()
				}
				for range 3 {
					if err := <-done; err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Minute)
				asked := time.Now()
				if err := r.do(ctx, ctx, read); err != nil {
					t.Fatal(err)
				}
				for i := 1; i < 3; i++ {
					if gap := starts[i].Sub(ends[i-1]); gap != tc.rest {
						t.Errorf("read %d started %v after the one before ended, want %v", i, gap, tc.rest)
					}
				}
				if wait := starts[3].Sub(asked); wait != 0 {
					t.Errorf("a read after a rest waited %v", wait)
				}
				// Closing ends the reader also during a rest.
				go r.do(ctx, ctx, read)
				time.Sleep(tc.read + time.Nanosecond)
				cancel()
				<-stopped
			})
		})
	}
}
