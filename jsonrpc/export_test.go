package jsonrpc

import "github.com/coder/websocket"

// NewWebSocketTransport wraps an accepted or dialed WebSocket for tests
// that drive the far end by hand.
func NewWebSocketTransport(ws *websocket.Conn, opts *WebSocketOptions) Transport {
	return newWebSocketTransport(ws, opts)
}

// Queued reports what the outbound queue holds: messages waiting and bytes
// waiting or being written.
func (c *Conn) Queued() (messages int, bytes int64) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	return len(c.out), c.outBytes
}
