package jsonrpc

import (
	"bytes"
	"net"
	"sync"
	"testing"
)

// countingConn records each write that reaches it.
type countingConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func TestCorkConn(t *testing.T) {
	under := &countingConn{}
	c := &corkConn{Conn: under}

	c.Write([]byte("a"))
	if len(under.writes) != 1 {
		t.Fatalf("an uncorked write was held back: %d writes", len(under.writes))
	}

	c.cork()
	c.Write([]byte("b"))
	c.Write([]byte("c"))
	if len(under.writes) != 1 {
		t.Fatalf("corked writes went through: %d writes", len(under.writes))
	}
	if err := c.uncork(); err != nil {
		t.Fatal(err)
	}
	if len(under.writes) != 2 || string(under.writes[1]) != "bc" {
		t.Fatalf("uncork sent %q, want one write of \"bc\"", under.writes[1:])
	}
	if err := c.uncork(); err != nil || len(under.writes) != 2 {
		t.Fatalf("a second uncork wrote again (%v)", err)
	}

	// A corked connection holds at most maxCorked bytes: past that, what
	// it holds goes first, in order, then the write itself.
	c.cork()
	big := bytes.Repeat([]byte("x"), maxCorked)
	c.Write([]byte("d"))
	c.Write(big)
	if len(under.writes) != 4 || string(under.writes[2]) != "d" || len(under.writes[3]) != maxCorked {
		t.Fatalf("over the bound: writes %d, want \"d\" then the large write", len(under.writes))
	}
	c.Write([]byte("e"))
	c.uncork()
	if got := string(under.writes[len(under.writes)-1]); got != "e" {
		t.Fatalf("last write %q, want \"e\"", got)
	}
}

// TestCorkConnHoldsNoBufferWhenIdle checks that a connection gives its
// buffer back once a batch is sent, so idle connections cost none.
func TestCorkConnHoldsNoBufferWhenIdle(t *testing.T) {
	c := &corkConn{Conn: &countingConn{}}
	c.cork()
	c.Write([]byte("a"))
	c.uncork()
	if c.buf != nil || c.pooled != nil {
		t.Errorf("after uncork the connection still holds a buffer of %d bytes", cap(c.buf))
	}
}
