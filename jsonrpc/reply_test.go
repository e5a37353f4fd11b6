package jsonrpc_test

import (
	"context"
	"testing"

	"github.com/ahp-go/ahp/jsonrpc"
)

// TestReplyBeforeLaterWrites checks that a handler can answer early with
// Request.Reply and then send a notification that arrives after the
// response, and that its return values are then ignored.
func TestReplyBeforeLaterWrites(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			got := make(chan string, 4)
			server := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				if err := req.Reply("early", nil); err != nil {
					return nil, err
				}
				req.Reply("twice", nil) // ignored
				if err := req.Conn().Notify(ctx, "after", nil); err != nil {
					t.Error(err)
				}
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
			if n := <-got; n != "notification after" {
				t.Fatalf("got %q", n)
			}
		})
	}
}
