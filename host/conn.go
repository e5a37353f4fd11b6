package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// conn is one client connection.
type conn struct {
	h   *Host
	t   jsonrpc.Transport // the network side
	out *outbox
	rpc *jsonrpc.Conn

	// Guarded by h.mu.
	initialized bool
	version     string
	clientID    string
	subs        map[string]*subscription
	known       map[string]bool // action type -> known to version
	gone        bool

	ended chan struct{} // closed when the connection has been torn down
	cause error         // why it ended, set before ended is closed
}

// ServeTransport serves one client over t until the client goes away, ctx
// ends or the host closes. It closes t before returning.
func (h *Host) ServeTransport(ctx context.Context, t jsonrpc.Transport) error {
	c := &conn{h: h, t: t, subs: map[string]*subscription{}, known: map[string]bool{}, ended: make(chan struct{})}
	c.out = newOutbox(t, h.opts.QueueSize, c.closeWith)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		t.Close()
		return errHostShutdown
	}
	h.conns[c] = struct{}{}
	h.mu.Unlock()

	writerCtx, stopWriter := context.WithCancel(context.Background())
	defer stopWriter()
	go c.out.run(writerCtx)
	rpc := jsonrpc.NewConn(&queuedTransport{Transport: t, out: c.out}, c, &jsonrpc.ConnOptions{
		MaxMessageSize: h.opts.MaxMessageBytes,
		Logger:         h.log,
	})
	h.mu.Lock()
	c.rpc = rpc
	gone := c.gone
	h.mu.Unlock()
	if gone {
		rpc.Close()
	}
	select {
	case <-rpc.Done():
		c.closeWith(rpc.Err())
	case <-ctx.Done():
		c.closeWith(ctx.Err())
	case <-c.ended:
	}
	<-c.ended
	return c.cause
}

// closeWith ends the connection: it stops sending, flushes what is queued
// for a short while, closes the transport with a reason and forgets the
// connection's subscriptions. It is safe to call more than once.
func (c *conn) closeWith(cause error) {
	h := c.h
	h.mu.Lock()
	if c.gone {
		h.mu.Unlock()
		return
	}
	c.gone = true
	rpc := c.rpc
	for uri, sub := range c.subs {
		delete(sub.ch.subs, c)
		delete(c.subs, uri)
	}
	delete(h.conns, c)
	h.dropActiveClientLocked(c.clientID)
	h.mu.Unlock()

	if cause == nil {
		cause = jsonrpc.ErrClosed
	}
	c.out.close()
	if !errors.Is(cause, errSlowConsumer) {
		// Give queued messages (an error reply, say) a moment to leave.
		select {
		case <-c.out.done:
		case <-time.After(time.Second):
		}
	}
	closeTransport(c.t, cause)
	if rpc != nil {
		rpc.Close()
	}
	h.log.Debug("connection closed", "client", clip(c.clientID, maxLoggedValue), "reason", cause)
	c.cause = cause
	close(c.ended)
}

// dropActiveClientLocked removes a client from every session's active
// clients once its last connection is gone, so sessions do not keep
// offering tools of clients that left.
func (h *Host) dropActiveClientLocked(clientID string) {
	if clientID == "" || h.closed {
		return
	}
	for c := range h.conns {
		if c.clientID == clientID {
			return
		}
	}
	for _, s := range h.sessions {
		ch := h.channels[s.uri]
		if ch == nil {
			continue
		}
		st := ch.state.(*protocol.SessionState)
		if slices.ContainsFunc(st.ActiveClients, func(a protocol.SessionActiveClient) bool { return a.ClientID == clientID }) {
			h.commitLocked(ch, &protocol.SessionActiveClientRemovedAction{ClientID: clientID}, nil)
		}
	}
}

// statusCloser is implemented by transports that can close with a reason,
// such as the WebSocket transport.
type statusCloser interface {
	CloseWithReason(policy bool, reason string) error
}

func closeTransport(t jsonrpc.Transport, cause error) {
	if sc, ok := t.(statusCloser); ok {
		policy := errors.Is(cause, errSlowConsumer) || errors.Is(cause, errUnsupportedVersion)
		sc.CloseWithReason(policy, cause.Error())
		return
	}
	t.Close()
}

var errUnsupportedVersion = errors.New("no mutually supported protocol version")

// knowsLocked reports whether the connection's negotiated version knows the
// action type. Results are cached per connection.
func (c *conn) knowsLocked(actionType string) bool {
	k, ok := c.known[actionType]
	if !ok {
		k = protocol.ActionKnownToVersion(actionType, c.version)
		c.known[actionType] = k
	}
	return k
}

// sendLocked queues an encoded message.
func (c *conn) sendLocked(data []byte) {
	if !c.gone {
		c.out.push(data)
	}
}

// rpcError builds a JSON-RPC error with an AHP or standard code.
func rpcError(code int64, format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
