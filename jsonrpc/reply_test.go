package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/jsonrpc"
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
				req.Reply("early", nil)
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

// TestPreempterKeepsWireOrder checks that a preempter sees notifications on
// the reader goroutine in wire order with the results of CallWith, so that
// a result is applied exactly between the messages sent before and after
// it, and that what it declines reaches the handler.
func TestPreempterKeepsWireOrder(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			var seen []string // touched only on the reader goroutine, then read after done
			done := make(chan struct{})
			handled := make(chan string, 1)
			preempt := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
				if req.Method == "other" {
					return nil, jsonrpc.ErrNotHandled
				}
				seen = append(seen, req.Method+string(req.Params))
				if req.Method == "last" {
					close(done)
				}
				return nil, nil
			})
			server := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				for i := range 3 {
					req.Conn().Notify(ctx, "before", []int{i})
				}
				req.Reply("snapshot", nil)
				req.Conn().Notify(ctx, "after", []int{0})
				req.Conn().Notify(ctx, "other", nil)
				req.Conn().Notify(ctx, "last", nil)
				return nil, nil
			})
			client := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
				handled <- req.Method
				return nil, nil
			})
			ta, tb := tk.raw(t)
			a := jsonrpc.NewConn(ta, client, &jsonrpc.ConnOptions{Preempter: preempt})
			b := jsonrpc.NewConn(tb, server, nil)
			t.Cleanup(func() {
				closeAndWait(t, a)
				closeAndWait(t, b)
			})
			err := a.CallWith("subscribe", nil, func(result jsontext.Value, err error) {
				seen = append(seen, fmt.Sprintf("result %s %v", result, err))
			})
			if err != nil {
				t.Fatal(err)
			}
			receive(t, done)
			want := []string{"before[0]", "before[1]", "before[2]", `result "snapshot" <nil>`, "after[0]", "last"}
			if fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Errorf("seen %q, want %q", seen, want)
			}
			if m := receive(t, handled); m != "other" {
				t.Errorf("handler got %q", m)
			}
		})
	}
}

// TestCallWithFailsOnClose checks that a CallWith still waiting when the
// connection ends hears of it once.
func TestCallWithFailsOnClose(t *testing.T) {
	c, p := transports[0].withPeer(t, nil, nil)
	got := make(chan error, 2)
	if err := c.CallWith("x", nil, func(_ jsontext.Value, err error) { got <- err }); err != nil {
		t.Fatal(err)
	}
	p.recv()
	c.Close()
	if err := receive(t, got); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("then got %v, want ErrClosed", err)
	}
	receive(t, c.Done())
	if len(got) != 0 {
		t.Error("then ran twice")
	}
}
