// Package storereader runs a host's reads from its store, one at a time,
// on one goroutine locked to an OS thread of its own at background
// priority, paced while the host is busy.
//
// Contract: Run serves jobs until its context ends; Do hands it one job
// and waits for it. A job Run has taken always runs to its end; a job not
// taken yet when Do's context ends, or once Run has returned, does not run
// at all (Do says which). Jobs run one at a time, in the order Run takes
// them, never two at once; a job must not call Do itself.
package storereader

import (
	"context"
	"errors"
	"runtime"
	"time"
)

// ErrStopped is what Do returns once the reader's Run has returned.
var ErrStopped = errors.New("storereader: the reader has stopped")

// Reader runs the host's reads from the store, one at a time, on one
// goroutine locked to an OS thread of its own at background priority
// where the system has one. Reading and decoding a
// session is CPU work that runs for a millisecond at a stretch, and Go's
// scheduler gives a goroutine the processor for up to 10 ms before it
// preempts it: at normal priority a burst of loads takes processors from
// the streams to clients. At background priority the operating system
// runs the reads in the time the streams leave. That only helps when the
// Go scheduler has a processor to spare for the reader while every other
// processor runs something: ahpd runs with more processors than the
// machine has CPUs (its --spare-procs flag).
//
// Priority alone still lets a burst of reads fill every CPU the streams
// leave idle, and then anything else that wants a CPU at once (a garbage
// collection, above all) waits behind them. So reads that come back to
// back are paced (the share given to New): after each, the reader rests
// in proportion to the time it took. That time includes any the system
// kept the reader's thread waiting for a CPU, so the busier the machine,
// the more the reader backs off. It rests only while the host is busy
// with clients, changing state in the last 100 ms (streamingWindow): with nothing
// streaming there is nothing to protect, and a burst of loads (a client
// resubscribing after a restart, say) runs at full speed.
type Reader struct {
	jobs    chan func()
	stopped chan struct{} // closed when Run returns
	share   float64
	// activity counts the host's changes (its last serverSeq); the reader
	// rests while it has moved within streamingWindow.
	activity func() int64
	looked   bool      // seen is set
	seen     int64     // activity at the last look
	movedAt  time.Time // when a look saw it move
}

// streamingWindow is how recently the host must have changed state for
// the reader to count it as streaming.
const streamingWindow = 100 * time.Millisecond

// maxReadPause bounds the rest after one read, however long it took.
const maxReadPause = 50 * time.Millisecond

// New returns a reader that reads for at most share of the time while
// reads come back to back and activity (a count of the host's changes,
// such as its last serverSeq) has moved within the last 100 ms; share 1
// or more never rests. activity is called on the reader's goroutine.
func New(share float64, activity func() int64) *Reader {
	return &Reader{jobs: make(chan func()), stopped: make(chan struct{}), share: share, activity: activity}
}

// pause is how long the reader rests, at now, after a read that took d.
func (r *Reader) pause(now time.Time, d time.Duration) time.Duration {
	if a := r.activity(); !r.looked {
		r.looked, r.seen = true, a
	} else if a != r.seen {
		r.seen, r.movedAt = a, now
	}
	if r.share >= 1 || d <= 0 || now.Sub(r.movedAt) >= streamingWindow {
		return 0
	}
	return min(time.Duration(float64(d)*(1/r.share-1)), maxReadPause)
}

// Run serves jobs until ctx ends; call it once, on a goroutine of its
// own. lowered is told, before the first job, whether lowering the
// thread's priority failed (nil when it worked or when the system has no
// priority per thread). The thread Run locks ends with it: a goroutine
// that returns while locked takes its thread with it, so the lowered
// priority never reaches other goroutines.
func (r *Reader) Run(ctx context.Context, lowered func(error)) {
	defer close(r.stopped)
	runtime.LockOSThread()
	lowered(backgroundThread())
	rest := time.NewTimer(0)
	defer rest.Stop()
	<-rest.C
	for {
		select {
		case job := <-r.jobs:
			start := time.Now()
			job()
			end := time.Now()
			if d := r.pause(end, end.Sub(start)); d > 0 {
				rest.Reset(d)
				select {
				case <-rest.C:
				case <-ctx.Done():
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

// Do runs f on the reader and waits for it. It returns ctx.Err() without
// running f when ctx ends before the reader takes f, and ErrStopped
// without running it once Run has returned; a job already taken always
// runs to its end, and Do then returns nil.
func (r *Reader) Do(ctx context.Context, f func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan struct{})
	job := func() {
		defer close(done)
		f()
	}
	select {
	case r.jobs <- job:
	case <-ctx.Done():
		return ctx.Err()
	case <-r.stopped:
		return ErrStopped
	}
	<-done
	return nil
}
