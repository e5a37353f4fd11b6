package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// ErrPeerTimeout is the cause of a WebSocket connection ended because the
// peer did not answer a ping in time (see [WebSocketOptions]).
var ErrPeerTimeout = errors.New("jsonrpc: peer did not answer a ping in time")

// WebSocketOptions configures a WebSocket transport made by
// [AcceptWebSocket] or [DialWebSocket]. The zero value is ready to use.
type WebSocketOptions struct {
	// OriginPatterns lists the browser origins (host patterns, such as
	// "example.com" or "*.example.com") allowed to connect besides the
	// request's own host. Requests without an Origin header (non-browser
	// clients) are always allowed. Accept only.
	OriginPatterns []string
	// InsecureSkipOriginCheck accepts browser upgrades from any origin.
	// Accept only.
	InsecureSkipOriginCheck bool

	// HTTPHeader holds headers for the handshake request, and HTTPClient
	// makes it (nil means http.DefaultClient). Dial only.
	HTTPHeader http.Header
	HTTPClient *http.Client

	// PingInterval, when positive, sends the peer a WebSocket ping after
	// every PingInterval; a peer that does not answer within PingTimeout
	// is taken for dead and the connection ends with [ErrPeerTimeout].
	// Zero PingTimeout means PingInterval. Pings need a reader: a [Conn]
	// always reads.
	PingInterval time.Duration
	PingTimeout  time.Duration
}

// AcceptWebSocket upgrades an HTTP request to a WebSocket and returns a
// transport over it, ready for [NewConn]. On failure the response has been
// written (403 for a refused origin, 400 for a bad handshake).
func AcceptWebSocket(w http.ResponseWriter, r *http.Request, opts *WebSocketOptions) (Transport, error) {
	var o WebSocketOptions
	if opts != nil {
		o = *opts
	}
	cw := &corkWriter{ResponseWriter: w}
	ws, err := websocket.Accept(cw, r, &websocket.AcceptOptions{
		OriginPatterns:     o.OriginPatterns,
		InsecureSkipVerify: o.InsecureSkipOriginCheck,
	})
	if err != nil {
		return nil, err
	}
	t := newWebSocketTransport(ws, &o)
	t.cork = cw.conn
	if cw.conn != nil {
		t.raw = cw.conn.Conn
	}
	return t, nil
}

// DialWebSocket opens a WebSocket to url (ws:// or wss://) and returns a
// transport over it, ready for [NewConn]. The HTTP response of the
// handshake is returned when there is one, also on failure, so that a
// caller can tell a refused token (401) from an unreachable host. ctx
// bounds the handshake only.
func DialWebSocket(ctx context.Context, url string, opts *WebSocketOptions) (Transport, *http.Response, error) {
	var o WebSocketOptions
	if opts != nil {
		o = *opts
	}
	client, dialed := o.HTTPClient, (*dialedConn)(nil)
	if client == nil {
		client, dialed = recordingClient()
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: o.HTTPHeader, HTTPClient: client})
	if dialed != nil {
		dialed.transport.CloseIdleConnections()
	}
	if err != nil {
		return nil, resp, err
	}
	t := newWebSocketTransport(ws, &o)
	if dialed != nil {
		t.raw = dialed.last()
	}
	return t, resp, nil
}

// dialedConn remembers the TCP connection a dial made last: the one the
// WebSocket runs on once the handshake (after any redirects) succeeded.
type dialedConn struct {
	transport *http.Transport
	mu        sync.Mutex
	conn      net.Conn
}

func (d *dialedConn) last() net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conn
}

// recordingClient returns an HTTP client for one dial that behaves as
// http.DefaultClient (proxies, TLS, timeouts) and records the connection
// it dials, or http.DefaultClient and nil when the default transport was
// replaced by one of another kind.
func recordingClient() (*http.Client, *dialedConn) {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultClient, nil
	}
	d := &dialedConn{transport: base.Clone()}
	dial := d.transport.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	d.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			d.mu.Lock()
			d.conn = c
			d.mu.Unlock()
		}
		return c, err
	}
	return &http.Client{Transport: d.transport}, d
}

// wsTransport carries one JSON-RPC message per WebSocket text message.
// Binary messages are refused: the connection is closed with status 1003
// (unsupported data).
//
// Messages over the read limit are refused before they are buffered, and the
// connection is closed with status 1009 (message too big). The limit starts
// at DefaultMaxMessageSize; [NewConn] sets it to the connection's own.
//
// An accepted WebSocket hands the messages of one batch of the writer (the
// messages that were queued when it took the queue) to the kernel
// together, up to 64 KiB at a time, rather than each with a system call
// of its own.
//
// Write honours its context, but a WebSocket message cannot be abandoned
// halfway: if the context ends while a message is being written, the
// WebSocket is closed. A [Conn] only ever passes its own context, which
// ends with the connection.
type wsTransport struct {
	ws       *websocket.Conn
	cork     *corkConn // the accepted connection, nil for a dialed one
	raw      net.Conn  // the TCP connection when known (see libraryContext)
	interval time.Duration
	timeout  time.Duration

	mu     sync.Mutex
	timer  *time.Timer // the next ping; nil without pings
	closed bool
	dead   bool // a ping went unanswered
}

func newWebSocketTransport(ws *websocket.Conn, o *WebSocketOptions) *wsTransport {
	ws.SetReadLimit(DefaultMaxMessageSize)
	t := &wsTransport{ws: ws}
	if o != nil && o.PingInterval > 0 {
		t.interval = o.PingInterval
		t.timeout = o.PingTimeout
		if t.timeout <= 0 {
			t.timeout = t.interval
		}
		// A timer rather than a goroutine per connection: an idle
		// connection costs no stack between pings.
		t.mu.Lock()
		t.timer = time.AfterFunc(t.interval, t.ping)
		t.mu.Unlock()
	}
	return t
}

// ping runs on a timer goroutine: it pings the peer and waits for the pong,
// then arms the next ping, or drops the connection.
func (t *wsTransport) ping() {
	ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
	err := t.ws.Ping(ctx)
	cancel()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if err != nil {
		t.dead = true
		t.closed = true
		t.ws.CloseNow() // the peer is gone; no closing handshake to wait for
		return
	}
	t.timer.Reset(t.interval)
}

func (t *wsTransport) setReadLimit(n int64) { t.ws.SetReadLimit(n) }

// Read returns the next text message. It returns io.EOF when the peer closed
// the WebSocket normally (status 1000 or 1001), an error matching
// [ErrMessageTooLarge] for a message over the read limit, and one matching
// [ErrPeerTimeout] once a ping went unanswered.
func (t *wsTransport) Read(ctx context.Context) ([]byte, error) {
	typ, data, err := t.read(ctx)
	if err != nil {
		t.mu.Lock()
		dead := t.dead
		t.mu.Unlock()
		switch {
		case dead:
			return nil, fmt.Errorf("%w: %w", ErrPeerTimeout, err)
		case errors.Is(err, websocket.ErrMessageTooBig):
			return nil, fmt.Errorf("%w: %w", ErrMessageTooLarge, err)
		}
		switch websocket.CloseStatus(err) {
		case websocket.StatusNormalClosure, websocket.StatusGoingAway:
			return nil, io.EOF
		}
		return nil, err
	}
	if typ != websocket.MessageText {
		t.ws.Close(websocket.StatusUnsupportedData, "JSON-RPC messages must be text")
		return nil, errors.New("jsonrpc: received a binary WebSocket message")
	}
	return data, nil
}

// readBuffers hold messages as they are read, before they are copied out
// at their exact size: reading straight into a new slice (io.ReadAll)
// makes one that doubles as it grows, about twice the message in garbage.
var readBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledRead is the largest read buffer kept for the next message.
const maxPooledRead = 64 << 10

// read reads one message.
func (t *wsTransport) read(ctx context.Context) (websocket.MessageType, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	typ, r, err := t.ws.Reader(t.libraryContext(ctx))
	if err != nil {
		return 0, nil, err
	}
	buf := readBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err := buf.ReadFrom(r); err != nil {
		if buf.Cap() <= maxPooledRead {
			readBuffers.Put(buf)
		}
		return 0, nil, err
	}
	if buf.Cap() > maxPooledRead {
		// A large message keeps the buffer it was read into: no copy,
		// and no buffer that large waits in the pool.
		return typ, buf.Bytes(), nil
	}
	data := bytes.Clone(buf.Bytes())
	readBuffers.Put(buf)
	return typ, data, nil
}

// Write sends data as one text message.
func (t *wsTransport) Write(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return t.ws.Write(t.libraryContext(ctx), websocket.MessageText, data)
}

// libraryContext is the context a read or write hands the WebSocket
// library. The library registers a callback on a context that can end,
// for every message; a [Conn]'s context ends only after the transport is
// closed, and closing ends a blocked read or write by itself when the
// transport knows its TCP connection (closeFor drops it when the closing
// handshake goes unanswered), so then the library gets one that never
// ends. That is every accepted connection, and every dialed one but those
// dialed with a caller's own HTTP client or a replaced default transport:
// those keep the caller's context, which is what cuts their unanswered
// handshake short.
func (t *wsTransport) libraryContext(ctx context.Context) context.Context {
	if t.raw != nil {
		return context.Background()
	}
	return ctx
}

// beginBatch and endBatch bracket the writes of one batch, which an
// accepted WebSocket hands to the kernel together (see corkConn).
func (t *wsTransport) beginBatch() {
	if t.cork != nil {
		t.cork.cork()
	}
}

func (t *wsTransport) endBatch() error {
	if t.cork != nil {
		return t.cork.uncork()
	}
	return nil
}

// Close closes the WebSocket with status 1000 (normal closure).
func (t *wsTransport) Close() error {
	return t.closeFor(ErrClosed)
}

// maxReason is the longest close reason a WebSocket close frame carries.
const maxReason = 123

// closeFor closes the WebSocket with a status and reason that tell the peer
// why the connection ends, or at once without a handshake for a nil cause.
func (t *wsTransport) closeFor(cause error) error {
	t.mu.Lock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
	}
	t.mu.Unlock()
	if cause == nil {
		return t.ws.CloseNow()
	}
	code := websocket.StatusNormalClosure
	switch {
	case errors.Is(cause, ErrMessageTooLarge):
		code = websocket.StatusMessageTooBig
	case errors.Is(cause, ErrGoingAway):
		code = websocket.StatusGoingAway
	case errors.Is(cause, ErrPolicyViolation), errors.Is(cause, ErrQueueFull), errors.Is(cause, ErrSendQueueFull):
		code = websocket.StatusPolicyViolation
	}
	reason := ""
	if cause != ErrClosed {
		reason = cause.Error()
	}
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "")
	}
	// The library waits up to 5 s for the peer's half of the closing
	// handshake, and CloseNow waits for that too. A peer that stopped
	// reading never answers, so the handshake gets closeHandshakeTimeout;
	// then the Conn stops reading, which drops the connection and lets the
	// handshake goroutine return at once.
	done := make(chan error, 1)
	go func() { done <- t.ws.Close(code, reason) }()
	timer := time.NewTimer(closeHandshakeTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		if t.raw != nil {
			// Reads and writes here do not watch a context (see
			// libraryContext): dropping the TCP connection ends them, and
			// the handshake with them.
			t.raw.Close()
		}
		return errors.New("jsonrpc: the peer did not answer the closing handshake")
	}
}

// closeHandshakeTimeout bounds the WebSocket closing handshake.
const closeHandshakeTimeout = time.Second
