package client

import (
	"context"
	"sync"

	"github.com/ahp-go/ahp/protocol"
)

// A Receipt follows one dispatched action until the host has dealt with
// it. Its methods are safe for concurrent use.
type Receipt struct {
	// Channel is the channel the action was dispatched on.
	Channel string
	// ClientSeq is the sequence number the client gave the action; the
	// host's echo carries it in its origin.
	ClientSeq int64
	// Action is the action dispatched.
	Action protocol.StateAction

	once sync.Once
	done chan struct{}
	err  error
}

func newReceipt(channel string, seq int64, a protocol.StateAction) *Receipt {
	return &Receipt{Channel: channel, ClientSeq: seq, Action: a, done: make(chan struct{})}
}

// resolve settles the receipt; later calls do nothing.
func (r *Receipt) resolve(err error) {
	r.once.Do(func() {
		r.err = err
		close(r.done)
	})
}

// Done returns a channel that is closed once the action is settled.
func (r *Receipt) Done() <-chan struct{} { return r.done }

// Err returns nil while the action is unsettled and after the host
// accepted it. Otherwise it returns why it was not: a *RejectedError when
// the host refused it, ErrNotConfirmed when the connection was lost before
// the host answered, or the error that kept it from being sent.
//
// On a channel the client is not subscribed to, the host echoes nothing
// back to the client when it accepts an action, so the receipt settles as
// soon as the action is sent.
func (r *Receipt) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// Wait blocks until the action is settled or ctx ends, and returns Err, or
// ctx.Err() when ctx ended first.
func (r *Receipt) Wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
