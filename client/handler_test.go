package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// pipeHost connects a client to a bare JSON-RPC peer standing for the
// host, over an in-memory pipe, and returns that peer.
func pipeHost(t *testing.T, opts *client.Options) (*client.Client, *jsonrpc.Conn) {
	t.Helper()
	clientEnd, hostEnd := jsonrpc.Pipe()
	hostConn := jsonrpc.NewConn(hostEnd, nil, nil)
	t.Cleanup(func() { hostConn.Close() })
	dialed := false
	c, err := client.DialTransport(testCtx(t), func(context.Context) (jsonrpc.Transport, error) {
		if dialed {
			return nil, errors.New("no second connection")
		}
		dialed = true
		return clientEnd, nil
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, hostConn
}

// TestRequestsFromTheHost sends the requests a host may send to a client:
// with no handler each gets a method-not-found error at once; with one,
// the handler's answer.
func TestRequestsFromTheHost(t *testing.T) {
	ctx := testCtx(t)
	var fromServer []protocol.Method
	for _, m := range protocol.Methods() {
		if m.FromServer && !m.Notification {
			fromServer = append(fromServer, m)
		}
	}
	if len(fromServer) != 10 {
		t.Fatalf("%d server requests in the method table, want 10", len(fromServer))
	}

	t.Run("no handler", func(t *testing.T) {
		_, h := pipeHost(t, nil)
		for _, m := range fromServer {
			err := h.Call(ctx, m.Name, map[string]any{"channel": protocol.RootURI, "uri": "file:///x"}, nil)
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Code != protocol.CodeMethodNotFound {
				t.Errorf("%s: %v, want method not found", m.Name, err)
			}
		}
	})

	t.Run("handler", func(t *testing.T) {
		var got []string
		handler := client.HandlerFunc(func(ctx context.Context, method string, params any) (any, error) {
			got = append(got, method)
			switch p := params.(type) {
			case *protocol.ResourceReadParams:
				if p.URI == "file:///missing" {
					return nil, &protocol.Error{Code: protocol.CodeNotFound, Message: "no such file"}
				}
				return &protocol.ResourceReadResult{Data: "hello " + p.URI, Encoding: protocol.ContentEncodingUtf8}, nil
			case *protocol.CreateResourceWatchParams:
				return &protocol.CreateResourceWatchResult{Channel: protocol.ResourceWatchURI("w1")}, nil
			}
			return nil, errors.New("unexpected")
		})
		_, h := pipeHost(t, &client.Options{Handler: handler})
		var read protocol.ResourceReadResult
		if err := h.Call(ctx, "resourceRead", &protocol.ResourceReadParams{URI: "file:///a"}, &read); err != nil || read.Data != "hello file:///a" {
			t.Fatalf("resourceRead: %+v, %v", read, err)
		}
		err := h.Call(ctx, "resourceRead", &protocol.ResourceReadParams{URI: "file:///missing"}, nil)
		if !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("resourceRead of a missing file: %v", err)
		}
		var watch protocol.CreateResourceWatchResult
		if err := h.Call(ctx, "createResourceWatch", &protocol.CreateResourceWatchParams{URI: "file:///a"}, &watch); err != nil || watch.Channel != "ahp-resource-watch:/w1" {
			t.Fatalf("createResourceWatch: %+v, %v", watch, err)
		}
		if err := h.Call(ctx, "resourceList", &protocol.ResourceListParams{URI: "file:///"}, nil); !errors.Is(err, client.ErrInternal) {
			t.Fatalf("a plain handler error: %v", err)
		}
		// Requests a host may not send are refused without the handler.
		if err := h.Call(ctx, "createSession", &protocol.CreateSessionParams{Channel: "ahp-session:/x"}, nil); !errors.Is(err, client.ErrMethodNotFound) {
			t.Fatalf("createSession to a client: %v", err)
		}
		if len(got) != 4 {
			t.Fatalf("handler saw %v", got)
		}
	})
}
