package client_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/internal/gen/clientgen"
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

	t.Run("handlers", func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		saw := func(method string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, method)
		}
		handlers := client.Handlers{
			ResourceRead: func(ctx context.Context, p *protocol.ResourceReadParams) (*protocol.ResourceReadResult, error) {
				saw("resourceRead")
				if p.URI == "file:///missing" {
					return nil, &protocol.Error{Code: protocol.CodeNotFound, Message: "no such file"}
				}
				return &protocol.ResourceReadResult{Data: "hello " + p.URI, Encoding: protocol.ContentEncodingUtf8}, nil
			},
			CreateResourceWatch: func(ctx context.Context, p *protocol.CreateResourceWatchParams) (*protocol.CreateResourceWatchResult, error) {
				saw("createResourceWatch")
				return &protocol.CreateResourceWatchResult{Channel: protocol.ResourceWatchURI("w1")}, nil
			},
			ResourceList: func(ctx context.Context, p *protocol.ResourceListParams) (*protocol.ResourceListResult, error) {
				saw("resourceList")
				return nil, errors.New("unexpected")
			},
			ResourceMkdir: func(ctx context.Context, p *protocol.ResourceMkdirParams) (*protocol.ResourceMkdirResult, error) {
				saw("resourceMkdir")
				return nil, nil // neither a result nor an error
			},
		}
		_, h := pipeHost(t, &client.Options{Handlers: handlers})
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
		if err := h.Call(ctx, "resourceMkdir", &protocol.ResourceMkdirParams{URI: "file:///d"}, nil); !errors.Is(err, client.ErrInternal) {
			t.Fatalf("a handler with no result: %v", err)
		}
		// A method whose handler is not set is not served.
		if err := h.Call(ctx, "resourceDelete", &protocol.ResourceDeleteParams{URI: "file:///a"}, nil); !errors.Is(err, client.ErrMethodNotFound) {
			t.Fatalf("resourceDelete without its handler: %v", err)
		}
		// Params of the wrong shape are refused before the handler.
		if err := h.Call(ctx, "resourceRead", map[string]any{"uri": 7}, nil); !errors.Is(err, client.ErrInvalidParams) {
			t.Fatalf("resourceRead with a numeric uri: %v", err)
		}
		// Requests a host may not send are refused without the handler.
		if err := h.Call(ctx, "createSession", &protocol.CreateSessionParams{Channel: "ahp-session:/x"}, nil); !errors.Is(err, client.ErrMethodNotFound) {
			t.Fatalf("createSession to a client: %v", err)
		}
		if len(got) != 5 {
			t.Fatalf("handler saw %v", got)
		}
	})
}

// TestHandlersGenerated fails when handlers_gen.go differs from what the
// generator writes from the method table now.
func TestHandlersGenerated(t *testing.T) {
	want, err := clientgen.Generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("handlers_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("handlers_gen.go is stale: run go generate ./protocol")
	}
}
