package storereader

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// threadNice returns the nice value of the calling thread (the raw
// getpriority result on Linux is 20 minus it).
func threadNice(t *testing.T) int {
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - prio
}

// TestReaderPriority: reads run on a thread at background priority, and
// that priority stays with the reader's thread. A read whose caller has
// given up does not run; once the reader stops, none does.
func TestReaderPriority(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := New(1, func() int64 { return 0 })
	lowered := make(chan error, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r.Run(ctx, func(err error) { lowered <- err })
	}()
	if err := <-lowered; err != nil {
		t.Fatalf("lowering the reader's priority: %v", err)
	}
	for range 3 {
		nice := -100
		if err := r.Do(context.Background(), func() { nice = threadNice(t) }); err != nil {
			t.Fatal(err)
		}
		if nice != backgroundPriority {
			t.Fatalf("a read ran at nice %d, want %d", nice, backgroundPriority)
		}
	}
	// This goroutine may run on any thread but the reader's.
	if nice := threadNice(t); nice == backgroundPriority {
		t.Fatalf("the test's own thread has the reader's priority (nice %d)", nice)
	}

	gaveUp, stop := context.WithCancel(context.Background())
	stop()
	ran := false
	if err := r.Do(gaveUp, func() { ran = true }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("a read after its caller gave up: ran %v, %v", ran, err)
	}
	cancel()
	<-stopped
	if err := r.Do(context.Background(), func() { ran = true }); !errors.Is(err, ErrStopped) || ran {
		t.Fatalf("a read after the reader stopped: ran %v, %v", ran, err)
	}
}
