package host

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// conn is one client connection.
type conn struct {
	h   *Host
	rpc *jsonrpc.Conn // set before any message is handled

	// Guarded by h.mu.
	initialized bool
	version     string
	view        *view.View // the negotiated version's shapes
	clientID    string
	subs        map[string]*subscription
	known       map[string]bool // action type -> known to version
	gone        bool
	initTimer   *time.Timer // closes the connection if initialize never comes

	ended chan struct{} // closed when the connection has been torn down
	cause error         // why it ended, set before ended is closed
}

// ServeTransport serves one client over t until the client goes away, ctx
// ends or the host closes. It closes t before returning, and returns why
// the connection ended.
//
// Every message to the client, responses and broadcast actions alike, goes
// through the connection's one outbound queue (jsonrpc.Conn.Send), bounded
// by Options.QueueSize and Options.QueueBytes; a client that lets it
// overflow is dropped with a reason and can reconnect. A client that has
// not initialized within Options.InitializeTimeout is dropped too.
func (h *Host) ServeTransport(ctx context.Context, t jsonrpc.Transport) error {
	c := &conn{h: h, view: view.Current, subs: map[string]*subscription{}, known: map[string]bool{}, ended: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		t.Close()
		return errHostShutdown
	}
	h.conns[c] = struct{}{}
	// Under the lock, so no handler (they all take it) can run before c.rpc
	// is set.
	c.rpc = jsonrpc.NewConn(t, c, &jsonrpc.ConnOptions{
		MaxMessageSize: h.opts.MaxMessageBytes,
		MaxOutMessages: h.opts.QueueSize,
		MaxOutBytes:    h.opts.QueueBytes,
		OnOverflow: func(err error) {
			h.dropped.Add(1)
			h.log.Info("dropping a client that fell behind", "client", c.id(), "err", err)
		},
		Logger:      h.log,
		ReadInServe: true, // on this goroutine: one goroutine less per connection
	})
	c.initTimer = time.AfterFunc(h.opts.InitializeTimeout, c.initTimeout)
	h.mu.Unlock()

	stop := context.AfterFunc(ctx, func() { c.closeWith(ctx.Err()) })
	defer stop()
	c.rpc.Serve()
	c.closeWith(c.rpc.Err())
	<-c.ended
	return c.cause
}

// id returns the client's ID, empty before initialize.
func (c *conn) id() string {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.clientID
}

// initTimeout drops a connection that has not initialized in time.
func (c *conn) initTimeout() {
	c.h.mu.Lock()
	idle := !c.initialized && !c.gone
	c.h.mu.Unlock()
	if idle {
		c.closeWith(errInitTimeout(c.h.opts.InitializeTimeout))
	}
}

// closeWith ends the connection: it forgets the connection's
// subscriptions, lets what is queued leave for a short while, and closes
// the transport with a reason. It is safe to call more than once.
func (c *conn) closeWith(cause error) {
	h := c.h
	h.mu.Lock()
	if c.gone {
		h.mu.Unlock()
		return
	}
	c.gone = true
	c.initTimer.Stop()
	for uri, sub := range c.subs {
		delete(sub.ch.subs, c)
		delete(c.subs, uri)
		h.unsubscribedLocked(c, sub.ch)
	}
	delete(h.conns, c)
	h.dropActiveClientLocked(c.clientID)
	ws, cl, clientID := h.ws, clientLocked(c), c.clientID
	h.mu.Unlock()
	if ws != nil {
		ws.Disconnected(cl)
	}

	if cause == nil {
		cause = jsonrpc.ErrClosed
	}
	c.rpc.CloseWith(cause)
	h.log.Debug("connection closed", "client", clip(clientID, maxLoggedValue), "reason", cause)
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

// closeReason is a cause for closing a connection that the client is
// told, with the WebSocket status its kind implies (jsonrpc.ErrPolicyViolation
// or jsonrpc.ErrGoingAway).
type closeReason struct {
	kind error
	msg  string
}

func (e *closeReason) Error() string        { return e.msg }
func (e *closeReason) Is(target error) bool { return target == e.kind }

var (
	errUnsupportedVersion = &closeReason{jsonrpc.ErrPolicyViolation, "no mutually supported protocol version"}
	errHostShutdown       = &closeReason{jsonrpc.ErrGoingAway, "host shutting down"}
)

func errInitTimeout(d time.Duration) error {
	return &closeReason{jsonrpc.ErrPolicyViolation, fmt.Sprintf("no initialize or reconnect within %v", d)}
}

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
		c.rpc.Send(data) // an overflow ends the connection, which then leaves
	}
}

// rpcError builds a JSON-RPC error with an AHP or standard code.
func rpcError(code protocol.ErrorCode, format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// viewLocked returns the connection's view, taking the host lock: the
// view changes when the connection initializes.
func (c *conn) viewLocked() *view.View {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.view
}
