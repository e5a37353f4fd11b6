package host

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

// TestStoreReaderPriority: store reads run on a thread at background
// priority, and that priority stays with the reader's thread.
func TestStoreReaderPriority(t *testing.T) {
	h, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for range 3 {
		nice := -100
		if err := h.reader.do(context.Background(), h.ctx, func() { nice = threadNice(t) }); err != nil {
			t.Fatal(err)
		}
		if nice != backgroundPriority {
			t.Fatalf("a store read ran at nice %d, want %d", nice, backgroundPriority)
		}
	}
	// This goroutine may run on any thread but the reader's.
	if nice := threadNice(t); nice == backgroundPriority {
		t.Fatalf("the test's own thread has the reader's priority (nice %d)", nice)
	}

	// A read whose caller has given up does not run; once the host stops,
	// none does.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := h.reader.do(ctx, context.Background(), func() { ran = true }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("a read after its caller gave up: ran %v, %v", ran, err)
	}
	h.Close()
	if err := h.reader.do(context.Background(), h.ctx, func() { ran = true }); !errors.Is(err, errHostShutdown) || ran {
		t.Fatalf("a read after the host stopped: ran %v, %v", ran, err)
	}
}
