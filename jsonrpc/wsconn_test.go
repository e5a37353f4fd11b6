package jsonrpc_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/jsonrpc"
)

func TestWebSocketRefusesBinaryMessages(t *testing.T) {
	server, client := wsConns(t)
	c := jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(server, nil), newService(), nil)
	t.Cleanup(func() { closeAndWait(t, c) })

	ctx := testContext(t)
	if err := client.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","method":"note","params":{"text":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	_, _, err := client.Read(ctx)
	if status := websocket.CloseStatus(err); status != websocket.StatusUnsupportedData {
		t.Errorf("read after a binary message = %v (status %v), want status %v", err, status, websocket.StatusUnsupportedData)
	}
	receive(t, c.Done())
}

func TestWebSocketCloseStatus(t *testing.T) {
	server, client := wsConns(t)
	c := jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(client, nil), nil, nil)
	t.Cleanup(func() { closeAndWait(t, c) })

	go server.Close(websocket.StatusTryAgainLater, "fell behind")
	receive(t, c.Done())
	var ce websocket.CloseError
	if err := c.Err(); !errors.As(err, &ce) || ce.Code != websocket.StatusTryAgainLater || ce.Reason != "fell behind" {
		t.Errorf("Err = %v, want close status %v with its reason", err, websocket.StatusTryAgainLater)
	}

	// A normal closure reads as io.EOF.
	server2, client2 := wsConns(t)
	c2 := jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(client2, nil), nil, nil)
	t.Cleanup(func() { closeAndWait(t, c2) })
	go jsonrpc.NewWebSocketTransport(server2, nil).Close()
	receive(t, c2.Done())
	if err := c2.Err(); !errors.Is(err, io.EOF) {
		t.Errorf("Err after normal closure = %v, want io.EOF", err)
	}
}

// TestAcceptedWebSocketBatches sends bursts over an accepted WebSocket,
// whose writer hands each batch to the kernel at once, and checks that
// every message arrives whole and in order, and that a close with a
// reason right after a burst still reaches the peer.
func TestAcceptedWebSocketBatches(t *testing.T) {
	c, ws := acceptedConn(t)
	ctx := testContext(t)
	ws.SetReadLimit(1 << 20)

	const n = 2000
	for i := range n {
		// Sizes vary so that batches cross the corked buffer's bound.
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d,"pad":%q}}`, i, strings.Repeat("p", i%40*50))
		if err := c.Send([]byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	go c.CloseWith(fmt.Errorf("%w: done", jsonrpc.ErrPolicyViolation))
	for i := range n {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d,`, i); !strings.HasPrefix(string(data), want) {
			t.Fatalf("message %d is %.60s", i, data)
		}
	}
	_, _, err := ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || !strings.Contains(ce.Reason, "done") {
		t.Errorf("after the burst: %v, want a policy-violation close with the reason", err)
	}
}

// TestAcceptedWebSocketSilentPeer closes an accepted WebSocket whose peer
// never reads, so never answers the closing handshake, while its reader
// waits for a message: the connection still ends, since closing drops
// the TCP connection once the handshake goes unanswered (reads and writes
// there watch no context).
func TestAcceptedWebSocketSilentPeer(t *testing.T) {
	c, _ := acceptedConn(t)
	closeAndWait(t, c)
	if err := c.Err(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Err = %v, want ErrClosed", err)
	}
}

// TestDialedWebSocketSilentPeer is the same for a dialed WebSocket, with
// the default HTTP client and with a caller's own: the connection ends
// when the host accepted it and then stopped reading, also while its
// writer is stuck on a full socket.
func TestDialedWebSocketSilentPeer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client *http.Client
		stuck  bool // fill the socket first
	}{
		{"default client", nil, false},
		{"default client, writer stuck", nil, true},
		{"own client", &http.Client{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, ends := serveWebSocket(t, acceptRaw)
			tr, _, err := jsonrpc.DialWebSocket(testContext(t), url, &jsonrpc.WebSocketOptions{HTTPClient: tc.client})
			if err != nil {
				t.Fatal(err)
			}
			peer := accepted(t, ends) // never reads
			t.Cleanup(func() { peer.CloseNow() })
			c := jsonrpc.NewConn(tr, nil, nil)
			if tc.stuck {
				// 16 MiB, more than the two socket buffers hold.
				msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"note","params":{"pad":%q}}`, strings.Repeat("p", 256<<10))
				for range 64 {
					if err := c.Send(msg); err != nil {
						t.Fatal(err)
					}
				}
			}
			closeAndWait(t, c)
			if err := c.Err(); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Err = %v, want ErrClosed", err)
			}
		})
	}
}

// acceptedConn returns a Conn over a WebSocket accepted with
// AcceptWebSocket, without a handler, and the raw WebSocket dialed to it.
func acceptedConn(t *testing.T) (*jsonrpc.Conn, *websocket.Conn) {
	t.Helper()
	url, ends := serveWebSocket(t, acceptTransport)
	ws, _, err := websocket.Dial(testContext(t), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	c := jsonrpc.NewConn(accepted(t, ends), nil, nil)
	t.Cleanup(func() { closeAndWait(t, c) })
	return c, ws
}
