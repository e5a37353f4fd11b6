package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/coder/websocket"
)

// A WebSocketTransport carries one JSON-RPC message per WebSocket text
// message. Binary messages are refused: the connection is closed with status
// 1003 (unsupported data).
//
// Messages over the read limit are refused before they are buffered, and the
// connection is closed with status 1009 (message too big). The limit starts
// at DefaultMaxMessageSize; [NewConn] sets it to the connection's own.
//
// Write honours its context, but a WebSocket message cannot be abandoned
// halfway: if the context ends while a message is being written, the
// WebSocket is closed. A context that has already ended is reported without
// touching the connection. A [Conn] only ever passes its own context, which
// ends with the connection.
//
// All methods are safe for concurrent use, except that Read must be called
// from one goroutine at a time.
type WebSocketTransport struct {
	ws *websocket.Conn
}

// NewWebSocketTransport returns a transport over ws, which it owns from now
// on. ws comes from websocket.Accept on the server or websocket.Dial on the
// client.
func NewWebSocketTransport(ws *websocket.Conn) *WebSocketTransport {
	ws.SetReadLimit(DefaultMaxMessageSize)
	return &WebSocketTransport{ws: ws}
}

// SetReadLimit sets the largest message Read accepts, in bytes.
func (t *WebSocketTransport) SetReadLimit(n int64) { t.ws.SetReadLimit(n) }

// Read returns the next text message. It returns io.EOF when the peer closed
// the WebSocket normally (status 1000 or 1001), and an error matching
// [ErrMessageTooLarge] for a message over the read limit.
func (t *WebSocketTransport) Read(ctx context.Context) ([]byte, error) {
	typ, data, err := t.ws.Read(ctx)
	if err != nil {
		if errors.Is(err, websocket.ErrMessageTooBig) {
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

// Write sends data as one text message.
func (t *WebSocketTransport) Write(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return t.ws.Write(ctx, websocket.MessageText, data)
}

// Close closes the WebSocket with status 1000 (normal closure).
func (t *WebSocketTransport) Close() error {
	return t.ws.Close(websocket.StatusNormalClosure, "")
}

// CloseWithStatus closes the WebSocket with the given status and reason,
// which must be at most 123 bytes. A host uses it, for instance, to tell a
// client that fell too far behind why it is being dropped.
func (t *WebSocketTransport) CloseWithStatus(code websocket.StatusCode, reason string) error {
	return t.ws.Close(code, reason)
}

// closeFor closes the WebSocket with a status that tells the peer why the
// connection ends.
func (t *WebSocketTransport) closeFor(cause error) error {
	switch {
	case cause == ErrClosed:
		return t.Close()
	case errors.Is(cause, ErrMessageTooLarge):
		return t.ws.Close(websocket.StatusMessageTooBig, "message too large")
	case errors.Is(cause, ErrQueueFull):
		return t.ws.Close(websocket.StatusPolicyViolation, "too many messages waiting")
	}
	// The transport already failed; there is no one to tell.
	return t.ws.CloseNow()
}
