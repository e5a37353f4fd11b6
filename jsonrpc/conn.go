package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/internal/logbound"
	"github.com/ahp-go/ahp/protocol"
)

// Defaults for [ConnOptions].
const (
	DefaultMaxMessageSize = 4 << 20 // bytes
	DefaultMaxQueue       = 4096    // messages
)

var (
	// ErrClosed reports a connection that has ended. Errors returned because
	// the connection ended match it under [errors.Is] and wrap the cause.
	ErrClosed = errors.New("jsonrpc: connection closed")

	// ErrMessageTooLarge is the cause of a connection ended by an incoming
	// message over the size limit.
	ErrMessageTooLarge = errors.New("jsonrpc: message too large")

	// ErrQueueFull is the cause of a connection ended because the peer sent
	// more requests and notifications than the handler kept up with.
	ErrQueueFull = errors.New("jsonrpc: too many incoming messages waiting")
)

// ConnOptions configures a [Conn]. The zero value is ready to use.
type ConnOptions struct {
	// MaxMessageSize is the largest incoming message accepted, in bytes; a
	// larger one ends the connection with ErrMessageTooLarge. Zero or less
	// means DefaultMaxMessageSize.
	MaxMessageSize int64

	// MaxQueue is how many incoming requests and notifications may wait for
	// the handler; one more ends the connection with ErrQueueFull. Zero or
	// less means DefaultMaxQueue.
	MaxQueue int

	// Logger receives protocol errors and connection events. Nil discards
	// them.
	Logger *slog.Logger

	// ParamsDecoder, when set, names the methods whose params are decoded
	// while the message is read, in one pass: for an incoming request or
	// notification it returns a new pointer to decode the params into (a
	// type with an UnmarshalJSONFrom method), or nil. The handler finds the
	// result in Request.Decoded. A client sets it for "action"
	// notifications.
	ParamsDecoder func(method string) any
}

// A Conn is one end of a JSON-RPC 2.0 connection. It sends calls and
// notifications to the peer and serves those the peer sends through its
// [Handler].
//
// All methods are safe for concurrent use. Call, Notify and WriteRaw block
// until their message is written (and, for Call, answered), the connection
// ends, or their context ends, whichever comes first.
type Conn struct {
	// Internally: the reader goroutine alone reads t, the writer goroutine
	// alone writes it, and the handler goroutine alone calls the handler
	// (Async work aside). mu guards the fields under it and is never held
	// while doing I/O or calling out.

	t        Transport
	handler  Handler
	log      *slog.Logger
	maxSize  int64
	maxQueue int

	paramsFor func(method string) any // from ConnOptions.ParamsDecoder

	// ctx ends as soon as the connection does; handlers run under it.
	ctx    context.Context
	cancel context.CancelFunc
	// ioCtx bounds t.Read and t.Write. It ends only after t is closed, since
	// cancelling a WebSocket read or write drops the connection without a
	// closing handshake.
	ioCtx    context.Context
	ioCancel context.CancelFunc

	writes chan *outgoing // to the writer goroutine, the only caller of t.Write
	lastID atomic.Int64   // the ID of the latest outgoing call

	mu      sync.Mutex
	pending map[protocol.ID]chan *protocol.Response // calls awaiting a response; the remover sends or closes
	queue   []queued                                // incoming messages for the handler goroutine, in order
	err     error                                   // why the connection ended; nil while it is open

	peerLog peerLog // bounds what the peer's messages write to the log

	wake chan struct{} // holds a token after queue grows
	wg   sync.WaitGroup
	done chan struct{} // closed when every goroutine has returned
}

// queued is one entry of the handler queue: a message to handle, or a reply
// to an invalid message, sent in turn so replies keep arrival order.
type queued struct {
	req   *Request
	reply *protocol.Response
}

// NewConn starts a connection over t, serving incoming messages with h.
// A nil h answers every request with a method-not-found error. A nil opts is
// the same as a zero ConnOptions.
//
// The connection owns t from now on and closes it when it ends.
func NewConn(t Transport, h Handler, opts *ConnOptions) *Conn {
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = DefaultMaxQueue
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if h == nil {
		h = HandlerFunc(notFound)
	}
	if l, ok := t.(interface{ SetReadLimit(int64) }); ok {
		l.SetReadLimit(o.MaxMessageSize)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ioCtx, ioCancel := context.WithCancel(context.Background())
	c := &Conn{
		t:         t,
		handler:   h,
		log:       o.Logger,
		maxSize:   o.MaxMessageSize,
		maxQueue:  o.MaxQueue,
		paramsFor: o.ParamsDecoder,
		ctx:       ctx,
		cancel:    cancel,
		ioCtx:     ioCtx,
		ioCancel:  ioCancel,
		writes:    make(chan *outgoing),
		pending:   make(map[protocol.ID]chan *protocol.Response),
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	c.wg.Add(3)
	go c.readLoop()
	go c.handleLoop()
	go c.writeLoop()
	go func() {
		c.wg.Wait()
		close(c.done)
	}()
	return c
}

// Call sends a request for method with params and waits for the response,
// decoding its result into result unless result is nil. Params must encode
// as a JSON object or array; nil params, or params that encode as null, send
// no params member.
//
// A failure reported by the peer is returned as an error wrapping its
// [*protocol.Error]. If ctx ends first, Call returns ctx.Err() at once and
// the response, should it come, is dropped. If the connection ends first,
// the error matches [ErrClosed].
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	p, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("jsonrpc: %s: encoding params: %w", method, err)
	}
	id := protocol.Int64ID(c.lastID.Add(1))
	data, err := protocol.Request{ID: id, Method: method, Params: p}.MarshalJSON()
	if err != nil {
		return fmt.Errorf("jsonrpc: %s: %w", method, err)
	}

	ch := make(chan *protocol.Response, 1)
	c.mu.Lock()
	if err := c.err; err != nil {
		c.mu.Unlock()
		return fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	c.pending[id] = ch
	c.mu.Unlock()

	if err := c.write(ctx, data); err != nil {
		c.forget(id)
		if err == ctx.Err() {
			return err
		}
		return fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	select {
	case resp, ok := <-ch:
		switch {
		case !ok:
			return fmt.Errorf("jsonrpc: %s: %w", method, c.Err())
		case resp.Error != nil:
			return fmt.Errorf("jsonrpc: %s: %w", method, resp.Error)
		case result == nil:
			return nil
		}
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("jsonrpc: %s: decoding result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return ctx.Err()
	}
}

// Notify sends a notification for method with params, which are treated as
// by [Conn.Call]. It returns once the message is written.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	data, err := EncodeNotification(method, params)
	if err != nil {
		return err
	}
	if err := c.write(ctx, data); err != nil {
		if err == ctx.Err() {
			return err
		}
		return fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	return nil
}

// WriteRaw sends data, which must be one complete, valid JSON-RPC message,
// as it is. It lets a broadcaster encode a notification once, with
// [EncodeNotification], and send the same bytes on many connections.
// WriteRaw does not modify data, and the caller must not modify it either:
// when ctx ends during the write, WriteRaw returns while the message is
// still being sent.
func (c *Conn) WriteRaw(ctx context.Context, data []byte) error {
	return c.write(ctx, data)
}

// EncodeNotification encodes a notification for method with params, treated
// as by [Conn.Call], ready for [Conn.WriteRaw].
func EncodeNotification(method string, params any) ([]byte, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: encoding params: %w", method, err)
	}
	data, err := protocol.Notification{Method: method, Params: p}.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	return data, nil
}

// Close ends the connection: it closes the transport, fails pending calls
// with [ErrClosed], and cancels the contexts of running handlers. It does not
// wait for handlers to return; receive from [Conn.Done] for that. Close
// returns the error from closing the transport, and nil if the connection
// had already ended.
func (c *Conn) Close() error {
	return c.shutdown(ErrClosed)
}

// Done returns a channel that is closed once the connection has ended and
// all of its goroutines, handlers included, have returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is open. Afterwards it returns why
// the connection ended: [ErrClosed] itself after [Conn.Close], or an error
// matching ErrClosed that wraps the cause, such as io.EOF when the peer hung
// up or [ErrMessageTooLarge].
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// shutdown ends the connection for cause, once. It returns the error from
// closing the transport, or nil if the connection had already ended.
func (c *Conn) shutdown(cause error) error {
	return c.end(cause, false)
}

// end ends the connection. With keepNotifications, notifications already
// received stay queued and the handler goroutine still delivers them: a
// peer that sends a last notification and hangs up is heard to the end.
func (c *Conn) end(cause error, keepNotifications bool) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil
	}
	if cause == ErrClosed {
		c.err = ErrClosed
	} else {
		c.err = fmt.Errorf("%w: %w", ErrClosed, cause)
	}
	pending := c.pending
	c.pending = nil
	if keepNotifications {
		kept := c.queue[:0]
		for _, q := range c.queue {
			if q.req != nil && q.req.IsNotification() {
				kept = append(kept, q)
			}
		}
		c.queue = kept
	} else {
		c.queue = nil
	}
	c.mu.Unlock()

	for _, ch := range pending {
		close(ch)
	}
	c.cancel()
	var err error
	if cc, ok := c.t.(causeCloser); ok {
		err = cc.closeFor(cause)
	} else {
		err = c.t.Close()
	}
	c.ioCancel()
	if cause != ErrClosed {
		c.log.Info("jsonrpc: connection ended", "cause", logbound.Value(cause.Error()))
	}
	return err
}

// causeCloser is a Transport that can tell the peer why it is closed.
type causeCloser interface {
	closeFor(cause error) error
}

// forget abandons the pending call id.
func (c *Conn) forget(id protocol.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// outgoing is a message handed to the writer goroutine.
type outgoing struct {
	ctx  context.Context // the sender's; the message is skipped if it ends before writing starts
	data []byte
	done chan error // receives the outcome; buffered so the writer never waits
}

// write hands data to the writer goroutine and waits for the outcome. If ctx
// ends first, write returns ctx.Err() at once; a message whose writing has
// begun is still written in full, so the connection stays usable.
func (c *Conn) write(ctx context.Context, data []byte) error {
	w := &outgoing{ctx: ctx, data: data, done: make(chan error, 1)}
	select {
	case c.writes <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.Err()
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeLoop runs on the writer goroutine: it writes messages one at a time,
// in the order they were handed over, until the connection ends. A write
// failure ends the connection.
func (c *Conn) writeLoop() {
	defer c.wg.Done()
	for {
		var w *outgoing
		select {
		case w = <-c.writes:
		case <-c.ctx.Done():
			return
		}
		if err := w.ctx.Err(); err != nil {
			w.done <- err
			continue
		}
		if err := c.Err(); err != nil {
			w.done <- err
			continue
		}
		err := c.t.Write(c.ioCtx, w.data)
		if err != nil {
			c.shutdown(fmt.Errorf("write: %w", err))
			err = c.Err()
		}
		w.done <- err
	}
}

// readLoop runs on the reader goroutine until the transport fails.
func (c *Conn) readLoop() {
	defer c.wg.Done()
	for {
		data, err := c.t.Read(c.ioCtx)
		if err != nil {
			c.end(fmt.Errorf("read: %w", err), true)
			return
		}
		if int64(len(data)) > c.maxSize {
			c.shutdown(fmt.Errorf("%w: %d bytes, limit %d", ErrMessageTooLarge, len(data), c.maxSize))
			return
		}
		c.receive(data)
	}
}

// receive routes one incoming message: responses to their callers,
// everything else to the handler queue.
func (c *Conn) receive(data []byte) {
	msg, decoded, err := protocol.DecodeMessageWith(data, c.paramsFor)
	if err != nil {
		var rpcErr *protocol.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &protocol.Error{Code: protocol.CodeParseError, Message: err.Error()}
		}
		var id protocol.ID
		if rpcErr.Code == protocol.CodeInvalidRequest {
			id = requestID(data)
		}
		c.logInvalid(err, id)
		c.enqueue(queued{reply: &protocol.Response{ID: id, Error: rpcErr}})
		return
	}
	switch {
	case msg.Response != nil:
		c.deliver(msg.Response)
	case msg.Request != nil:
		r := msg.Request
		c.enqueue(queued{req: &Request{ID: r.ID, Method: r.Method, Params: r.Params, Decoded: decoded, conn: c}})
	case msg.Notification != nil:
		n := msg.Notification
		c.enqueue(queued{req: &Request{Method: n.Method, Params: n.Params, Decoded: decoded, conn: c}})
	}
}

// requestID salvages the ID of an invalid message that looks like a request,
// so that the error reply reaches the caller waiting for it. Responses get
// no reply with their ID: it names one of this side's calls, not the peer's.
func requestID(data []byte) protocol.ID {
	var probe struct {
		ID     protocol.ID    `json:"id"`
		Method jsontext.Value `json:"method"`
	}
	if err := json.Unmarshal(data, &probe, jsontext.AllowDuplicateNames(true)); err != nil || probe.Method == nil {
		return protocol.ID{}
	}
	return probe.ID
}

// deliver hands a response to the call waiting for it.
func (c *Conn) deliver(resp *protocol.Response) {
	if !resp.ID.IsValid() {
		c.logUnattributed(resp.Error)
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[resp.ID]
	delete(c.pending, resp.ID)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("jsonrpc: dropped response to an unknown or abandoned call", "id", logbound.Value(resp.ID.String()))
		return
	}
	ch <- resp // buffered, and this goroutine removed ch from pending: it is the only sender
}

// enqueue adds q to the handler queue, ending the connection when the queue
// is full.
func (c *Conn) enqueue(q queued) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if len(c.queue) >= c.maxQueue {
		c.mu.Unlock()
		c.shutdown(ErrQueueFull)
		return
	}
	c.queue = append(c.queue, q)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// handleLoop runs on the handler goroutine: it serves queued messages in
// order until the connection ends.
func (c *Conn) handleLoop() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			ended := c.err != nil
			c.mu.Unlock()
			if ended {
				return
			}
			select {
			case <-c.wake:
				continue
			case <-c.ctx.Done():
				c.mu.Lock()
				left := len(c.queue)
				c.mu.Unlock()
				if left == 0 {
					return
				}
				continue
			}
		}
		q := c.queue[0]
		c.queue[0] = queued{}
		c.queue = c.queue[1:]
		if len(c.queue) == 0 {
			c.queue = nil // let the next burst start a fresh backing array
		}
		c.mu.Unlock()

		if q.reply != nil {
			c.send(q.reply)
		} else {
			c.serve(q.req)
		}
	}
}

// serve runs the handler for req and answers it, unless the handler went
// asynchronous.
func (c *Conn) serve(req *Request) {
	result, err := c.handler.Handle(c.ctx, req)
	if f, ok := result.(Async); ok && f != nil && err == nil {
		c.wg.Add(1) // the handler goroutine is counted, so this cannot race with Wait
		go func() {
			defer c.wg.Done()
			result, err := f(c.ctx)
			c.finish(req, result, err)
		}()
		return
	}
	c.finish(req, result, err)
}

// finish answers req with the outcome of its handler.
func (c *Conn) finish(req *Request, result any, err error) {
	if !req.replied.CompareAndSwap(false, true) {
		return // the handler already replied with Request.Reply
	}
	if req.IsNotification() {
		switch {
		case err == nil:
		case errors.Is(err, ErrMethodNotFound):
			c.log.Debug("jsonrpc: notification for an unknown method", "method", logbound.Value(req.Method))
		default:
			c.logHandlerFailed(req.Method, err)
		}
		return
	}
	resp := &protocol.Response{ID: req.ID}
	if err != nil {
		resp.Error = wireError(err)
	} else if data, merr := json.Marshal(result); merr != nil {
		resp.Error = &protocol.Error{
			Code:    protocol.CodeInternalError,
			Message: fmt.Sprintf("encoding the result of %s: %v", req.Method, merr),
		}
	} else {
		resp.Result = data
	}
	c.send(resp)
}

// wireError turns a handler's error into the error object sent to the peer.
func wireError(err error) *protocol.Error {
	var e *protocol.Error
	if !errors.As(err, &e) {
		return &protocol.Error{Code: protocol.CodeInternalError, Message: err.Error()}
	}
	msg := e.Message
	if err != error(e) {
		msg = err.Error() // keep the context added by wrapping
	}
	return &protocol.Error{Code: e.Code, Message: msg, Data: e.Data}
}

// send writes a response, falling back to a bare internal error when the
// response cannot be encoded.
func (c *Conn) send(resp *protocol.Response) {
	data, err := resp.MarshalJSON()
	if err != nil {
		c.log.Error("jsonrpc: cannot encode response", "id", resp.ID, "error", err)
		data, err = protocol.Response{ID: resp.ID, Error: &protocol.Error{
			Code:    protocol.CodeInternalError,
			Message: "the response could not be encoded",
		}}.MarshalJSON()
		if err != nil {
			return
		}
	}
	if err := c.write(c.ctx, data); err != nil {
		c.log.Debug("jsonrpc: response not sent", "id", resp.ID, "error", err)
	}
}

// marshalParams encodes params; nil, or a value encoding as null, means
// none. Anything else must encode as an object or an array.
func marshalParams(params any) (jsontext.Value, error) {
	if params == nil {
		return nil, nil
	}
	data, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	switch jsontext.Value(data).Kind() {
	case jsontext.KindNull:
		return nil, nil
	case jsontext.KindBeginObject, jsontext.KindBeginArray:
		return data, nil
	}
	return nil, fmt.Errorf("params must be an object or an array, not %s", jsontext.Value(data).Kind())
}
