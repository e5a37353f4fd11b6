package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/internal/logbound"
	"github.com/ahp-go/ahp/protocol"
)

// Defaults for [ConnOptions].
const (
	DefaultMaxMessageSize = 4 << 20  // bytes
	DefaultMaxQueue       = 4096     // incoming messages
	DefaultMaxOutMessages = 8192     // outgoing messages
	DefaultMaxOutBytes    = 32 << 20 // outgoing bytes
)

// flushTimeout bounds how long [Conn.CloseWith] waits for queued messages
// to leave before it closes the transport.
const flushTimeout = time.Second

// keptBatch is the capacity up to which the writer keeps a drained queue's
// backing array for the next burst; a larger one is left to the collector,
// so an idle connection holds no more than this.
const keptBatch = 64

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

	// ErrSendQueueFull is the cause of a connection ended because the peer
	// did not read fast enough: its outbound queue went over one of its
	// bounds (ConnOptions.MaxOutMessages and MaxOutBytes).
	ErrSendQueueFull = errors.New("jsonrpc: peer too slow: outbound queue full")

	// ErrNotHandled, returned by a [ConnOptions.Preempter], passes the
	// message on to the connection's handler.
	ErrNotHandled = errors.New("jsonrpc: not handled")

	// ErrPolicyViolation marks a cause given to [Conn.CloseWith] as a
	// refusal of the peer's behaviour. A WebSocket transport closes with
	// status 1008 for causes that match it, 1001 for [ErrGoingAway], 1009
	// for [ErrMessageTooLarge], and 1000 otherwise; the cause's text is the
	// reason.
	ErrPolicyViolation = errors.New("jsonrpc: policy violation")

	// ErrGoingAway marks a cause given to [Conn.CloseWith] as this side
	// going away, such as a server shutting down.
	ErrGoingAway = errors.New("jsonrpc: going away")
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

	// MaxOutMessages and MaxOutBytes bound the outbound queue: the messages
	// accepted by Send, Notify, Call and responses but not yet written, the
	// one being written included. A message that would go over either
	// bound ends the connection with ErrSendQueueFull and drops what is
	// queued; a single message larger than MaxOutBytes is accepted only
	// when nothing else is queued. Zero or less means the defaults.
	MaxOutMessages int
	MaxOutBytes    int64

	// OnOverflow, when set, is called once when the outbound queue
	// overflows, with the error the connection then ends with. It runs on
	// a goroutine of its own, before the transport is closed.
	OnOverflow func(err error)

	// Preempter, when set, sees every incoming request and notification
	// first, on the reader goroutine, before any later message is read. It
	// handles the message by returning anything but ErrNotHandled (for a
	// request, its result or error is the response, sent at once); with
	// ErrNotHandled the message goes on to the handler queue. It must not
	// block, and must not return an [Async] result.
	Preempter Handler

	// Logger receives protocol errors and connection events. Nil discards
	// them.
	Logger *slog.Logger

	// ReadInServe, when set, makes the connection read in Conn.Serve,
	// which the caller must call, rather than on a goroutine of its own:
	// a server that already has a goroutine per connection (an HTTP
	// handler) saves one.
	ReadInServe bool
}

// A Conn is one end of a JSON-RPC 2.0 connection. It sends calls and
// notifications to the peer and serves those the peer sends through its
// [Handler].
//
// Every outgoing message (calls, notifications, responses and messages
// given to Send) goes through one bounded queue in the order it was
// accepted; accepting never blocks. All methods are safe for concurrent
// use.
type Conn struct {
	// Internally: the reader goroutine alone reads t; a writer goroutine,
	// started when the outbound queue fills and gone once it is empty,
	// alone writes it; a handler goroutine, likewise started on demand,
	// alone calls the handler (Async work aside). mu and outMu guard the
	// fields under them and are never held while doing I/O or calling out;
	// neither is taken while holding the other.

	t           Transport
	handler     Handler
	preempter   Handler
	log         *slog.Logger
	maxSize     int64
	maxQueue    int
	maxOut      int
	maxOutSize  int64
	onOverflow  func(error)
	readInServe bool
	serving     atomic.Bool

	// ctx ends as soon as the connection does; handlers run under it.
	ctx    context.Context
	cancel context.CancelFunc
	// ioCtx bounds t.Read and t.Write. It ends only after t is closed, since
	// cancelling a WebSocket read or write drops the connection without a
	// closing handshake.
	ioCtx    context.Context
	ioCancel context.CancelFunc

	lastID atomic.Int64 // the ID of the latest outgoing call

	mu       sync.Mutex
	pending  map[protocol.ID]*call // calls awaiting a response
	queue    []queued              // incoming messages for the handler goroutine, in order
	handling bool                  // a handler goroutine is running
	err      error                 // why the connection ended; nil while it is open

	peerLog peerLog // bounds what the peer's messages write to the log

	outMu     sync.Mutex
	out       [][]byte      // messages waiting for the writer, in order
	spare     [][]byte      // an empty backing array for out, kept between bursts
	outBytes  int64         // bytes in out plus the message being written
	writing   bool          // a writer goroutine is running
	outClosed bool          // no more messages are accepted
	dropOut   bool          // what is queued is discarded
	drained   chan struct{} // closed once out is empty, when CloseWith waits

	active atomic.Int32  // running goroutines; the last to return closes done
	done   chan struct{} // closed when every goroutine has returned
}

// call is an outgoing call awaiting its response: either a Call waiting on
// ch, or a CallWith whose then runs when the response arrives.
type call struct {
	ch   chan *protocol.Response // buffered; the remover sends or closes
	then func(result jsontext.Value, err error)
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
	if o.MaxOutMessages <= 0 {
		o.MaxOutMessages = DefaultMaxOutMessages
	}
	if o.MaxOutBytes <= 0 {
		o.MaxOutBytes = DefaultMaxOutBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if h == nil {
		h = HandlerFunc(notFound)
	}
	if l, ok := t.(readLimiter); ok {
		l.setReadLimit(o.MaxMessageSize)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ioCtx, ioCancel := context.WithCancel(context.Background())
	c := &Conn{
		t:           t,
		handler:     h,
		preempter:   o.Preempter,
		log:         o.Logger,
		maxSize:     o.MaxMessageSize,
		maxQueue:    o.MaxQueue,
		maxOut:      o.MaxOutMessages,
		maxOutSize:  o.MaxOutBytes,
		onOverflow:  o.OnOverflow,
		readInServe: o.ReadInServe,
		ctx:         ctx,
		cancel:      cancel,
		ioCtx:       ioCtx,
		ioCancel:    ioCancel,
		pending:     make(map[protocol.ID]*call),
		done:        make(chan struct{}),
	}
	c.active.Add(1) // the reader, on its own goroutine or in Serve
	if !o.ReadInServe {
		go c.readLoop()
	}
	return c
}

// Serve reads and dispatches incoming messages on the calling goroutine
// until the connection ends, for a connection made with
// ConnOptions.ReadInServe; it must be called once. Otherwise it waits for
// the connection to end.
func (c *Conn) Serve() {
	if c.serving.CompareAndSwap(false, true) && c.readInServe {
		c.readLoop()
		return
	}
	<-c.ctx.Done()
}

// readLimiter is a transport that can refuse oversized messages before
// buffering them.
type readLimiter interface {
	setReadLimit(n int64)
}

// reasonCloser is a transport that can tell the peer why it is closed.
// closeFor gets a nil cause when the transport itself failed and there is
// no one left to tell.
type reasonCloser interface {
	closeFor(cause error) error
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
	ch := make(chan *protocol.Response, 1)
	id, err := c.start(method, params, &call{ch: ch})
	if err != nil {
		return err
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

// CallWith sends a request for method with params, treated as by
// [Conn.Call], and returns without waiting. When the response arrives, then
// runs on the reader goroutine, before any later message is read or handed
// to a handler: with the encoded result, or with an error wrapping the
// peer's [*protocol.Error]. If the connection ends first, then runs once
// with an error matching [ErrClosed], on the goroutine that ended it. then
// must not block.
//
// It lets a caller apply a result in the exact order of the messages
// around it (a snapshot before the changes that follow it, say).
func (c *Conn) CallWith(method string, params any, then func(result jsontext.Value, err error)) error {
	_, err := c.start(method, params, &call{then: then})
	return err
}

// start registers cl under a new ID and queues the request.
func (c *Conn) start(method string, params any, cl *call) (protocol.ID, error) {
	p, err := marshalParams(params)
	if err != nil {
		return protocol.ID{}, fmt.Errorf("jsonrpc: %s: encoding params: %w", method, err)
	}
	id := protocol.Int64ID(c.lastID.Add(1))
	data, err := protocol.Request{ID: id, Method: method, Params: p}.MarshalJSON()
	if err != nil {
		return id, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	c.mu.Lock()
	if err := c.err; err != nil {
		c.mu.Unlock()
		return id, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	c.pending[id] = cl
	c.mu.Unlock()
	if err := c.Send(data); err != nil {
		c.forget(id)
		return id, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	return id, nil
}

// Notify queues a notification for method with params, which are treated
// as by [Conn.Call]. It does not wait for the message to be written; it
// fails only when the params cannot be encoded or the connection has ended
// (or ends now because its outbound queue is full). ctx is not used beyond
// that check, and is there for symmetry with Call.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := EncodeNotification(method, params)
	if err != nil {
		return err
	}
	if err := c.Send(data); err != nil {
		return fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	return nil
}

// Send queues data, which must be one complete, valid JSON-RPC message, to
// be written as it is, after every message queued before it. It never
// blocks. It lets a broadcaster encode a notification once, with
// [EncodeNotification], and send the same bytes on many connections; the
// caller must not modify data afterwards.
//
// Send fails with an error matching [ErrClosed] when the connection has
// ended or is closing. When data would take the outbound queue over its
// bounds, the connection ends with [ErrSendQueueFull] and what was queued
// is dropped.
func (c *Conn) Send(data []byte) error {
	n := int64(len(data))
	c.outMu.Lock()
	if c.outClosed {
		c.outMu.Unlock()
		return c.closedErr()
	}
	if len(c.out) >= c.maxOut || (c.outBytes > 0 && c.outBytes+n > c.maxOutSize) {
		err := fmt.Errorf("%w: %d messages, %d bytes waiting (bounds %d messages, %d bytes)",
			ErrSendQueueFull, len(c.out), c.outBytes, c.maxOut, c.maxOutSize)
		c.discardLocked()
		c.outMu.Unlock()
		c.active.Add(1)
		go func() {
			defer c.exit()
			if c.onOverflow != nil {
				c.onOverflow(err)
			}
			c.end(err, true, false)
		}()
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if c.out == nil {
		c.out, c.spare = c.spare, nil
	}
	c.out = append(c.out, data)
	c.outBytes += n
	if !c.writing {
		c.writing = true
		c.active.Add(1)
		go c.writeLoop()
	}
	c.outMu.Unlock()
	return nil
}

// QueuedBytes returns how many bytes wait in the outbound queue, the message
// being written included: what the peer has yet to take.
func (c *Conn) QueuedBytes() int64 {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if c.dropOut {
		return 0
	}
	return c.outBytes
}

// discardLocked stops the outbound queue and lets go of what it holds.
func (c *Conn) discardLocked() {
	c.outClosed = true
	c.dropOut = true
	clear(c.out)
	c.out = nil
	c.spare = nil
	c.outBytes = 0 // the writer stops counting once dropOut is set
	if c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// closedErr is the error for a message refused because the connection is
// closing or has ended.
func (c *Conn) closedErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// EncodeNotification encodes a notification for method with params, treated
// as by [Conn.Call], ready for [Conn.Send].
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

// Close ends the connection at once: it closes the transport (a WebSocket
// with a normal closure), drops what is still queued, fails pending calls
// with [ErrClosed], and cancels the contexts of running handlers. It does
// not wait for handlers to return; receive from [Conn.Done] for that. Close
// returns nil, also when the connection had already ended.
func (c *Conn) Close() error {
	c.end(ErrClosed, true, false)
	return nil
}

// CloseNow ends the connection as Close does, but without telling the
// peer: a WebSocket is dropped with no closing handshake, which a peer
// that stopped reading would hold up.
func (c *Conn) CloseNow() {
	c.end(ErrClosed, false, false)
}

// CloseWith ends the connection for cause, telling the peer why when the
// transport can (see [ErrPolicyViolation]). Unlike Close, it first stops
// accepting messages and lets those already queued (an error response,
// say) leave, waiting at most a second for them. Afterwards [Conn.Err]
// wraps cause. It does nothing if the connection has already ended.
func (c *Conn) CloseWith(cause error) {
	if cause == nil {
		cause = ErrClosed
	}
	c.outMu.Lock()
	c.outClosed = true
	var drained chan struct{}
	if c.writing && !c.dropOut {
		if c.drained == nil {
			c.drained = make(chan struct{})
		}
		drained = c.drained
	}
	c.outMu.Unlock()
	if drained != nil {
		t := time.NewTimer(flushTimeout)
		select {
		case <-drained:
		case <-t.C:
		case <-c.ctx.Done():
		}
		t.Stop()
	}
	c.end(cause, true, false)
}

// Done returns a channel that is closed once the connection has ended and
// all of its goroutines, handlers included, have returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is open. Afterwards it returns why
// the connection ended: [ErrClosed] itself after [Conn.Close], or an error
// matching ErrClosed that wraps the cause, such as io.EOF when the peer hung
// up, [ErrMessageTooLarge], or the cause given to [Conn.CloseWith].
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// exit is deferred by every goroutine of the connection; the last one to
// return closes done. The reader is the first to start and returns only
// once the connection has ended, and no goroutine starts after that, so
// done is closed exactly once.
func (c *Conn) exit() {
	if c.active.Add(-1) == 0 {
		close(c.done)
	}
}

// end ends the connection for cause, once. With tell, the transport is
// asked to tell the peer why; without, the transport failed and is just
// closed. With keepNotifications, notifications already received stay
// queued and the handler goroutine still delivers them: a peer that sends a
// last notification and hangs up is heard to the end.
func (c *Conn) end(cause error, tell, keepNotifications bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if cause == ErrClosed {
		c.err = ErrClosed
	} else {
		c.err = fmt.Errorf("%w: %w", ErrClosed, cause)
	}
	err := c.err
	pending := c.pending
	c.pending = nil
	if keepNotifications {
		kept := c.queue[:0]
		for _, q := range c.queue {
			if q.req != nil && q.req.IsNotification() {
				kept = append(kept, q)
			}
		}
		clear(c.queue[len(kept):])
		c.queue = kept
	} else {
		clear(c.queue)
		c.queue = nil
	}
	c.mu.Unlock()

	c.outMu.Lock()
	c.discardLocked()
	c.outMu.Unlock()

	for _, cl := range pending {
		if cl.then != nil {
			cl.then(nil, err)
		} else {
			close(cl.ch)
		}
	}
	c.cancel()
	rc, ok := c.t.(reasonCloser)
	switch {
	case !ok:
		c.t.Close()
	case tell:
		rc.closeFor(cause)
	default:
		rc.closeFor(nil)
	}
	c.ioCancel()
	if cause != ErrClosed {
		// A peer that hangs up (EOF) is the normal end of a connection.
		level := slog.LevelInfo
		if errors.Is(cause, io.EOF) {
			level = slog.LevelDebug
		}
		c.log.Log(context.Background(), level, "jsonrpc: connection ended", "cause", logbound.Value(cause.Error()))
	}
}

// forget abandons the pending call id.
func (c *Conn) forget(id protocol.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// writeLoop runs on the writer goroutine: it writes queued messages in
// order until the queue is empty, then returns. A write failure ends the
// connection.
func (c *Conn) writeLoop() {
	defer c.exit()
	var batch [][]byte
	for {
		c.outMu.Lock()
		if batch != nil && cap(batch) <= keptBatch && c.spare == nil && !c.dropOut {
			c.spare = batch[:0] // reused by the next burst
		}
		batch = nil
		if len(c.out) == 0 || c.dropOut {
			c.writing = false
			if c.drained != nil {
				close(c.drained)
				c.drained = nil
			}
			c.outMu.Unlock()
			return
		}
		// Take the whole queue; messages sent meanwhile start a new one.
		batch, c.out = c.out, nil
		c.outMu.Unlock()

		bw, gather := c.t.(batchWriter)
		gather = gather && len(batch) > 1
		if gather {
			bw.beginBatch()
		}
		for i, data := range batch {
			err := c.t.Write(c.ioCtx, data)
			batch[i] = nil
			c.outMu.Lock()
			drop := c.dropOut
			if !drop {
				c.outBytes -= int64(len(data))
			}
			c.outMu.Unlock()
			if err != nil {
				c.end(fmt.Errorf("write: %w", err), false, false)
				drop = true
			}
			if drop {
				clear(batch)
				batch = nil
				break
			}
		}
		// Also after a failure: what the batch held back may include a
		// closing frame.
		if gather {
			if err := bw.endBatch(); err != nil {
				c.end(fmt.Errorf("write: %w", err), false, false)
			}
		}
	}
}

// batchWriter is a transport that can gather the messages written between
// beginBatch and endBatch and send them together; endBatch sends what is
// still held back. Write keeps its contract: the data is not kept.
type batchWriter interface {
	beginBatch()
	endBatch() error
}

// readLoop runs on the reader goroutine until the transport fails.
func (c *Conn) readLoop() {
	defer c.exit()
	for {
		data, err := c.t.Read(c.ioCtx)
		if err != nil {
			if errors.Is(err, ErrMessageTooLarge) {
				c.end(err, true, false)
			} else {
				c.end(fmt.Errorf("read: %w", err), false, true)
			}
			return
		}
		if int64(len(data)) > c.maxSize {
			c.end(fmt.Errorf("%w: %d bytes, limit %d", ErrMessageTooLarge, len(data), c.maxSize), true, false)
			// Keep reading until the transport gives up, so the goroutine
			// accounting stays with the reader.
			continue
		}
		c.receive(data)
	}
}

// receive routes one incoming message: responses to their callers,
// everything else to the preempter and then the handler queue.
func (c *Conn) receive(data []byte) {
	msg, err := protocol.DecodeMessage(data)
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
	var req *Request
	switch {
	case msg.Response != nil:
		c.deliver(msg.Response)
		return
	case msg.Request != nil:
		r := msg.Request
		req = &Request{ID: r.ID, Method: r.Method, Params: r.Params, conn: c}
	case msg.Notification != nil:
		n := msg.Notification
		req = &Request{Method: n.Method, Params: n.Params, conn: c}
	default:
		return
	}
	if c.preempter != nil {
		result, err := c.preempter.Handle(c.ctx, req)
		if !errors.Is(err, ErrNotHandled) {
			c.finish(req, result, err)
			return
		}
	}
	c.enqueue(queued{req: req})
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
	cl, ok := c.pending[resp.ID]
	delete(c.pending, resp.ID)
	c.mu.Unlock()
	switch {
	case !ok:
		c.log.Debug("jsonrpc: dropped response to an unknown or abandoned call", "id", logbound.Value(resp.ID.String()))
	case cl.then == nil:
		cl.ch <- resp // buffered, and this goroutine removed cl from pending: it is the only sender
	case resp.Error != nil:
		cl.then(nil, resp.Error)
	default:
		cl.then(resp.Result, nil)
	}
}

// enqueue adds q to the handler queue, starting the handler goroutine if
// it is not running, and ends the connection when the queue is full.
func (c *Conn) enqueue(q queued) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if len(c.queue) >= c.maxQueue {
		c.mu.Unlock()
		c.end(ErrQueueFull, true, false)
		return
	}
	c.queue = append(c.queue, q)
	if !c.handling {
		c.handling = true
		c.active.Add(1)
		go c.handleLoop()
	}
	c.mu.Unlock()
}

// handleLoop runs on the handler goroutine: it serves queued messages in
// order until the queue is empty.
func (c *Conn) handleLoop() {
	defer c.exit()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.handling = false
			c.queue = nil // let the next burst start a fresh backing array
			c.mu.Unlock()
			return
		}
		q := c.queue[0]
		c.queue[0] = queued{}
		c.queue = c.queue[1:]
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
		c.active.Add(1) // the handler goroutine is counted, so done cannot close meanwhile
		go func() {
			defer c.exit()
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
	if r, ok := result.(*EncodedWithRoom); ok && err == nil && r != nil {
		if data, ok := responseInPlace(req.ID, r); ok {
			if err := c.Send(data); err != nil {
				c.log.Debug("jsonrpc: response not sent", "id", req.ID, "error", err)
			}
			return
		}
		raw := Encoded(r.Buf[min(max(r.Room, 0), len(r.Buf)):]) // too little room: copied below
		result = &raw
	}
	if raw, ok := result.(*Encoded); ok && err == nil {
		if raw != nil {
			resp.Result = jsontext.Value(*raw) // empty is sent as null
		}
	} else if err != nil {
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

// responseInPlace writes the response to id around the result in r.Buf,
// or reports false when the room before it is too small.
func responseInPlace(id protocol.ID, r *EncodedWithRoom) ([]byte, bool) {
	if r.Room < 0 || r.Room > len(r.Buf) || len(r.Buf) == r.Room {
		return nil, false // an empty result is sent as null, the usual way
	}
	idJSON, err := id.MarshalJSON()
	if err != nil {
		return nil, false
	}
	head := make([]byte, 0, 48+len(idJSON))
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, idJSON...)
	head = append(head, `,"result":`...)
	if len(head) > r.Room {
		return nil, false
	}
	start := r.Room - len(head)
	copy(r.Buf[start:], head)
	return append(r.Buf, '}')[start:], true
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

// send queues a response, falling back to a bare internal error when the
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
	if err := c.Send(data); err != nil {
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
