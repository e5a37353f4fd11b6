package jsonrpc_test

import (
	"errors"
	"io"
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
