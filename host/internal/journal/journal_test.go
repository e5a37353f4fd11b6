package journal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/store"
)

// TestJournalGathers streams one change a millisecond for 100 ms. With a
// window the writer commits about once per window; without one, once per
// change. Either way every change is saved.
func TestJournalGathers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		window     time.Duration
		minBatches int64
		maxBatches int64
	}{
		{"no window", -1, 100, 100},
		{"5ms window", 5 * time.Millisecond, 15, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				j := New(store.NewMemory(), Options{MaxAge: time.Second, Gather: tc.window})
				j.Start()
				for i := int64(1); i <= 100; i++ {
					j.Queue(i, Pending{Op: store.SetSeq{Seq: i}})
					time.Sleep(time.Millisecond)
				}
				if err := j.Close(); err != nil {
					t.Fatal(err)
				}
				s := j.Stats(time.Now())
				if s.Ops != 100 {
					t.Fatalf("%d changes saved, want 100", s.Ops)
				}
				if s.Batches < tc.minBatches || s.Batches > tc.maxBatches {
					t.Fatalf("%d batches, want %d to %d", s.Batches, tc.minBatches, tc.maxBatches)
				}
			})
		})
	}
}

// TestJournalWaiterSkipsWindow checks that a caller waiting for a change
// to be saved (a reply that means "saved", a lease) does not wait for the
// gathering window: the window only applies when nobody waits.
func TestJournalWaiterSkipsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := New(store.NewMemory(), Options{MaxAge: time.Minute, Gather: time.Hour})
		j.Start()
		defer j.Close()
		j.Queue(1, Pending{Op: store.SetSeq{Seq: 1}}) // written at once: nothing was written before
		synctest.Wait()
		j.Queue(2, Pending{Op: store.SetSeq{Seq: 2}}) // gathers for the window
		synctest.Wait()
		if got := j.DurableSeq(); got != 1 {
			t.Fatalf("durable up to %d before anybody waits, want 1 (the second change gathers)", got)
		}
		start := time.Now()
		if err := j.Wait(context.Background(), 2); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited > time.Second {
			t.Fatalf("the waiter waited %v, the gathering window", waited)
		}
		j.Queue(3, Pending{Op: store.SetSeq{Seq: 3}})
		start = time.Now()
		j.WaitLease(3)
		if waited := time.Since(start); waited > time.Second {
			t.Fatalf("a lease waited %v, the gathering window", waited)
		}
	})
}
