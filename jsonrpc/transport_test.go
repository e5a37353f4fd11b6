package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
)

func TestPipe(t *testing.T) {
	ctx := testContext(t)
	a, b := jsonrpc.Pipe()

	// Both ends write far ahead of any reader without blocking.
	const n = 10000
	for i := range n {
		for _, end := range []jsonrpc.Transport{a, b} {
			if err := end.Write(ctx, fmt.Appendf(nil, "%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Written data is copied.
	buf := []byte("original")
	a.Write(ctx, buf)
	copy(buf, "changed!")

	for _, end := range []jsonrpc.Transport{a, b} {
		for i := range n {
			data, err := end.Read(ctx)
			if err != nil || string(data) != fmt.Sprint(i) {
				t.Fatalf("message %d: %q, %v", i, data, err)
			}
		}
	}
	if data, err := b.Read(ctx); string(data) != "original" || err != nil {
		t.Errorf("copied message = %q, %v", data, err)
	}

	// Read honours its context.
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := a.Read(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read with expiring context = %v", err)
	}

	// Closing one end: the other reads what was sent, then io.EOF.
	a.Write(ctx, []byte("last"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if data, err := b.Read(ctx); string(data) != "last" || err != nil {
		t.Errorf("Read after peer close = %q, %v; want the pending message", data, err)
	}
	if _, err := b.Read(ctx); err != io.EOF {
		t.Errorf("Read after drain = %v, want io.EOF", err)
	}
	if _, err := a.Read(ctx); err != io.ErrClosedPipe {
		t.Errorf("Read on closed end = %v, want io.ErrClosedPipe", err)
	}
	for _, end := range []jsonrpc.Transport{a, b} {
		if err := end.Write(ctx, []byte("x")); err != io.ErrClosedPipe {
			t.Errorf("Write after close = %v, want io.ErrClosedPipe", err)
		}
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestPipeCloseUnblocksRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := jsonrpc.Pipe()
		errc := make(chan error, 2)
		go func() { _, err := a.Read(context.Background()); errc <- err }()
		go func() { _, err := b.Read(context.Background()); errc <- err }()
		synctest.Wait() // both readers are blocked
		a.Close()
		got := []error{<-errc, <-errc}
		for _, err := range got {
			if err != io.EOF && err != io.ErrClosedPipe {
				t.Errorf("blocked Read returned %v", err)
			}
		}
	})
}
