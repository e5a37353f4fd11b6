package host

import (
	"context"
	"runtime"
)

// storeReader runs the host's reads from the store, one at a time, on one
// goroutine locked to an OS thread of its own at background priority
// where the system has one (see backgroundThread). Reading and decoding a
// session is CPU work that runs for a millisecond at a stretch, and Go's
// scheduler gives a goroutine the processor for up to 10 ms before it
// preempts it: at normal priority a burst of loads takes processors from
// the streams to clients. At background priority the operating system
// runs the reads in the time the streams leave. That only helps when the
// Go scheduler has a processor to spare for the reader while every other
// processor runs something: ahpd runs with more processors than the
// machine has CPUs (its --spare-procs flag).
type storeReader struct {
	jobs chan func()
}

func newStoreReader() *storeReader {
	return &storeReader{jobs: make(chan func())}
}

// run serves jobs until ctx ends. The thread it locks ends with it: a
// goroutine that returns while locked takes its thread with it, so the
// lowered priority never reaches other goroutines.
func (r *storeReader) run(ctx context.Context, lowered func(error)) {
	runtime.LockOSThread()
	lowered(backgroundThread())
	for {
		select {
		case job := <-r.jobs:
			job()
		case <-ctx.Done():
			return
		}
	}
}

// do runs f on the reader and waits for it. It returns ctx.Err() without
// running f when ctx ends before the reader takes f (f does not run) and
// errHostShutdown once the host stops; a job already taken always runs to
// its end.
func (r *storeReader) do(ctx, host context.Context, f func()) error {
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
	case <-host.Done():
		return errHostShutdown
	}
	<-done
	return nil
}
