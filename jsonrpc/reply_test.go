package jsonrpc_test

import (
	"context"
	"testing"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// TestReplyBeforeLaterWrites checks that a handler can answer early with
// Request.Reply and then send a notification that arrives after the
// response, and that its return values are then ignored.
func TestReplyBeforeLaterWrites(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			got := make(chan string, 4)
			notified := make(chan error, 1)
			server := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				if err := req.Reply("early", nil); err != nil {
					return nil, err
				}
				req.Reply("twice", nil) // ignored
				notified <- req.Conn().Notify(ctx, "after", nil)
				return "late", nil // ignored
			})
			client := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				got <- "notification " + req.Method
				return nil, nil
			})
			a, _ := tk.pair(t, client, server, nil)
			var res string
			if err := a.Call(testContext(t), "hello", nil, &res); err != nil {
				t.Fatal(err)
			}
			if res != "early" {
				t.Fatalf("result %q, want the early reply", res)
			}
			if err := <-notified; err != nil {
				t.Fatalf("notify after the reply: %v", err)
			}
			if n := <-got; n != "notification after" {
				t.Fatalf("got %q", n)
			}
		})
	}
}

// TestParamsDecoder checks that params of a chosen method reach the
// handler already decoded, and others stay raw.
func TestParamsDecoder(t *testing.T) {
	type sum struct{ A, B int }
	got := make(chan *jsonrpc.Request, 2)
	server := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		got <- req
		return nil, nil
	})
	a, b := jsonrpc.Pipe()
	client := jsonrpc.NewConn(a, nil, nil)
	defer client.Close()
	srv := jsonrpc.NewConn(b, server, &jsonrpc.ConnOptions{ParamsDecoder: func(method string) any {
		if method == "action" {
			return new(protocol.ActionEnvelope)
		}
		return nil
	}})
	defer srv.Close()
	ctx := testContext(t)
	client.Notify(ctx, "action", map[string]any{"channel": "c", "serverSeq": 4, "action": map[string]any{"type": "session/titleChanged", "title": "t"}})
	client.Notify(ctx, "other", sum{1, 2})
	r := <-got
	env, ok := r.Decoded.(*protocol.ActionEnvelope)
	if !ok || env.ServerSeq != 4 || env.Action.Type() != "session/titleChanged" || len(r.Params) == 0 {
		t.Fatalf("action: decoded %#v, params %s", r.Decoded, r.Params)
	}
	if r := <-got; r.Decoded != nil || string(r.Params) != `{"A":1,"B":2}` {
		t.Fatalf("other: decoded %#v, params %s", r.Decoded, r.Params)
	}
}
