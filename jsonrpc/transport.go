package jsonrpc

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// A Transport carries whole JSON-RPC messages, one per call, in order and
// without loss. It knows nothing of their content.
//
// A [Conn] uses its transport as follows, and implementations may rely on
// this:
//   - Read is called from one goroutine at a time.
//   - Write is never called while another Write is in progress: the Conn
//     serializes writes. Read and Write may run at the same time.
//   - Close may be called at any moment, concurrently with Read and Write and
//     more than once; it must make blocked Read and Write calls return.
//
// Read returns the next message, which belongs to the caller afterwards. It
// returns io.EOF when the peer has closed the connection cleanly.
//
// Write sends data as one message. It must neither modify data nor keep it
// after returning: the same bytes may be handed to many transports.
//
// The context of Read and Write bounds that call only; a Conn passes one
// that ends when the connection does, never a caller's. A transport that
// cannot abandon a half-sent message may close itself when the context of
// Write ends mid-message.
//
// The WebSocket transport of this package also refuses oversized messages
// before buffering them, pings the peer, and tells it why it is closed.
type Transport interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, data []byte) error
	Close() error
}

// Pipe returns the two ends of an in-memory transport, for tests and for
// connecting peers within one process.
//
// Each direction buffers without bound, so Write never blocks and two peers
// writing to each other at once cannot deadlock; a reader that falls behind
// costs memory instead. Written data is copied. Closing either end closes
// the pipe: the closed end's Read and both ends' Write fail with
// io.ErrClosedPipe, while the other end reads what was already sent and
// then io.EOF.
//
// Write and Close are safe for concurrent use; Read, as the Transport
// contract allows, must be called from one goroutine at a time per end.
func Pipe() (Transport, Transport) {
	p := &pipe{}
	for i := range p.wake {
		p.wake[i] = make(chan struct{}, 1)
	}
	return &pipeEnd{p, 0}, &pipeEnd{p, 1}
}

type pipe struct {
	mu     sync.Mutex
	queue  [2][][]byte // queue[i] holds the messages waiting for end i
	closed [2]bool     // closed[i] is set once end i is closed

	// wake[i] holds a token when end i may have something new to see.
	wake [2]chan struct{}
}

type pipeEnd struct {
	p *pipe
	i int
}

func (e *pipeEnd) Read(ctx context.Context) ([]byte, error) {
	p := e.p
	for {
		p.mu.Lock()
		switch {
		case p.closed[e.i]:
			p.mu.Unlock()
			return nil, io.ErrClosedPipe
		case len(p.queue[e.i]) > 0:
			data := p.queue[e.i][0]
			p.queue[e.i][0] = nil
			p.queue[e.i] = p.queue[e.i][1:]
			p.mu.Unlock()
			return data, nil
		case p.closed[1-e.i]:
			p.mu.Unlock()
			return nil, io.EOF
		}
		p.mu.Unlock()
		select {
		case <-p.wake[e.i]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (e *pipeEnd) Write(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := e.p
	p.mu.Lock()
	if p.closed[0] || p.closed[1] {
		p.mu.Unlock()
		return io.ErrClosedPipe
	}
	p.queue[1-e.i] = append(p.queue[1-e.i], bytes.Clone(data))
	p.mu.Unlock()
	p.signal(1 - e.i)
	return nil
}

func (e *pipeEnd) Close() error {
	p := e.p
	p.mu.Lock()
	p.closed[e.i] = true
	p.queue[e.i] = nil
	p.mu.Unlock()
	p.signal(0)
	p.signal(1)
	return nil
}

func (p *pipe) signal(i int) {
	select {
	case p.wake[i] <- struct{}{}:
	default:
	}
}
