package host

import (
	"context"
	"errors"
	"sync"

	"github.com/ahp-go/ahp/jsonrpc"
)

// errSlowConsumer ends a connection whose outbound queue overflowed.
var errSlowConsumer = errors.New("client too slow: outbound queue full; reconnect to resume")

// outbox is a connection's bounded queue of outgoing messages, drained to
// the transport by one writer goroutine. Every message a connection sends,
// responses and broadcast actions alike, goes through it, so the order in
// which the host queues messages is the order the client receives them.
//
// push never blocks: a full queue ends the connection (the client can
// reconnect and replay), so one slow client cannot stall the sequencer or
// the other clients.
type outbox struct {
	t    jsonrpc.Transport
	mu   sync.Mutex
	q    chan []byte
	shut bool
	fail func(error) // called once, without locks held, when push overflows
	done chan struct{}
}

func newOutbox(t jsonrpc.Transport, size int, fail func(error)) *outbox {
	return &outbox{t: t, q: make(chan []byte, size), fail: fail, done: make(chan struct{})}
}

// run writes queued messages until the queue is closed or a write fails.
// Its owner is the connection, which starts it and waits on done.
func (o *outbox) run(ctx context.Context) {
	defer close(o.done)
	for data := range o.q {
		if err := o.t.Write(ctx, data); err != nil {
			o.close()
			// Drain so pushers never see a full queue of a dead writer.
			for range o.q {
			}
			return
		}
	}
}

// push queues data. It reports false when the connection is closing or the
// queue is full; in the second case the connection is failed.
func (o *outbox) push(data []byte) bool {
	o.mu.Lock()
	if o.shut {
		o.mu.Unlock()
		return false
	}
	select {
	case o.q <- data:
		o.mu.Unlock()
		return true
	default:
	}
	o.shut = true
	close(o.q)
	o.mu.Unlock()
	go o.fail(errSlowConsumer)
	return false
}

// close stops accepting messages; those already queued are still written.
func (o *outbox) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.shut {
		o.shut = true
		close(o.q)
	}
}

// queuedTransport is the transport handed to the connection's JSON-RPC
// peer: reads come from the network, writes go through the outbox.
type queuedTransport struct {
	jsonrpc.Transport
	out *outbox
}

func (t *queuedTransport) Write(ctx context.Context, data []byte) error {
	if !t.out.push(data) {
		return jsonrpc.ErrClosed
	}
	return nil
}
