package jsonrpc

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
)

// A WebSocket library writes each message with its own system call. When
// the writer of a [Conn] has several messages queued (a burst of streamed
// actions, or a broadcast that found the connection still busy), that is
// one call per message. A corked connection lets the writer gather the
// messages of one batch and hand them to the kernel together: what is
// written between cork and uncork is kept in a buffer, up to maxCorked
// bytes, and sent by uncork. Outside a batch, writes go straight through.

// maxCorked bounds what a corked connection holds before it writes anyway.
const maxCorked = 64 << 10

// corkConn is a net.Conn whose writes can be held back and sent together.
type corkConn struct {
	net.Conn

	mu     sync.Mutex // serializes writes to Conn; held while writing
	corked bool
	buf    []byte  // what is held back, in a pooled buffer while corked
	pooled *[]byte // the pooled buffer, nil when uncorked
}

// corkBuffers are shared by all connections: a connection holds one only
// while its writer is in a batch, so an idle connection costs none.
var corkBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, maxCorked)
	return &b
}}

// Write sends p, or keeps it for uncork while the connection is corked and
// the buffer has room.
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked && len(c.buf)+len(p) <= maxCorked {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// cork holds back writes until uncork.
func (c *corkConn) cork() {
	c.mu.Lock()
	if !c.corked {
		c.corked = true
		c.pooled = corkBuffers.Get().(*[]byte)
		c.buf = (*c.pooled)[:0]
	}
	c.mu.Unlock()
}

// uncork sends what was held back, gives the buffer back and lets writes
// through again.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.flushLocked()
	if c.corked {
		c.corked = false
		*c.pooled = c.buf[:0]
		corkBuffers.Put(c.pooled)
		c.pooled, c.buf = nil, nil
	}
	return err
}

// flushLocked writes what is held back. The buffer never grows past
// maxCorked: Write sends a message that does not fit instead.
func (c *corkConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// corkWriter is an http.ResponseWriter whose hijacked connection is a
// corkConn, so that the WebSocket accepted on it writes through one.
type corkWriter struct {
	http.ResponseWriter
	conn *corkConn // set by Hijack
}

func (w *corkWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("jsonrpc: the response writer cannot be hijacked")
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil { // the handshake response, if still buffered
		nc.Close()
		return nil, nil, err
	}
	w.conn = &corkConn{Conn: nc}
	return w.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(w.conn, brw.Writer.Size())), nil
}

// Unwrap lets http.ResponseController reach the original writer.
func (w *corkWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
