package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

func TestCallBothDirections(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			a, b := tk.pair(t, newService(), newService(), nil)
			ctx := testContext(t)
			for _, tc := range []struct {
				name     string
				from, to *jsonrpc.Conn
			}{{"a to b", a, b}, {"b to a", b, a}} {
				var sum int
				if err := tc.from.Call(ctx, "add", addParams{A: 2, B: 3}, &sum); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if sum != 5 {
					t.Errorf("%s: add = %d, want 5", tc.name, sum)
				}
			}

			// No params, and a result the caller does not want.
			if err := a.Call(ctx, "echo", nil, nil); err != nil {
				t.Errorf("echo without params: %v", err)
			}
			// A typed nil pointer sends no params either.
			var got jsontext.Value
			if err := a.Call(ctx, "echo", (*addParams)(nil), &got); err != nil || string(got) != "null" {
				t.Errorf("echo with nil pointer = %s, %v; want null", got, err)
			}
			// A handler that calls back into the peer while serving.
			var s string
			if err := a.Call(ctx, "callback", nil, &s); err != nil || s != "ping/pong" {
				t.Errorf("callback = %q, %v; want ping/pong", s, err)
			}
		})
	}
}

func TestRemoteErrors(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			a, _ := tk.pair(t, nil, newService(), nil)
			ctx := testContext(t)
			tests := []struct {
				method   string
				params   any
				code     protocol.ErrorCode
				contains string
				data     string
			}{
				{"nope", nil, protocol.CodeMethodNotFound, "method not found: nope", ""},
				{"add", map[string]string{"a": "x"}, protocol.CodeInvalidParams, "invalid params for add", ""},
				{"add", []int{1, 2}, protocol.CodeInvalidParams, "invalid params", ""},
				{"fail", nil, protocol.CodeInternalError, "boom", ""},
				{"badresult", nil, protocol.CodeInternalError, "encoding the result of badresult", ""},
				{"coded", nil, -32005, "unsupported protocol version", `{"supportedVersions":["0.8.0"]}`},
				{"wrapped", nil, -32009, "session s1: permission denied", ""},
			}
			for _, tt := range tests {
				err := a.Call(ctx, tt.method, tt.params, nil)
				var e *protocol.Error
				if !errors.As(err, &e) {
					t.Errorf("%s: error %v is not a *protocol.Error", tt.method, err)
					continue
				}
				if e.Code != tt.code {
					t.Errorf("%s: code %d, want %d", tt.method, e.Code, tt.code)
				}
				if !errors.Is(err, &protocol.Error{Code: tt.code}) {
					t.Errorf("%s: errors.Is does not match code %d", tt.method, tt.code)
				}
				if !strings.Contains(err.Error(), tt.contains) || !strings.Contains(err.Error(), tt.method) {
					t.Errorf("%s: error %q should name the method and contain %q", tt.method, err, tt.contains)
				}
				if string(e.Data) != tt.data {
					t.Errorf("%s: data %s, want %s", tt.method, e.Data, tt.data)
				}
			}
			if err := a.Call(ctx, "nope", nil, nil); !errors.Is(err, jsonrpc.ErrMethodNotFound) {
				t.Errorf("unknown method: %v does not match ErrMethodNotFound", err)
			}
			if err := a.Call(ctx, "add", []int{1}, nil); !errors.Is(err, jsonrpc.ErrInvalidParams) {
				t.Errorf("bad params: %v does not match ErrInvalidParams", err)
			}
		})
	}
}

func TestNilHandlerRefusesRequests(t *testing.T) {
	a, b := transports[0].pair(t, nil, nil, nil)
	if err := a.Call(testContext(t), "anything", nil, nil); !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("Call = %v, want method not found", err)
	}
	_ = b
}

func TestNotificationsKeepOrder(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			svc := newService()
			a, _ := tk.pair(t, nil, svc, nil)
			ctx := testContext(t)
			const n = 200
			for i := range n {
				if err := a.Notify(ctx, "note", noteParams{fmt.Sprint(i)}); err != nil {
					t.Fatal(err)
				}
			}
			// Unknown notifications are dropped quietly.
			if err := a.Notify(ctx, "nope", nil); err != nil {
				t.Fatal(err)
			}
			raw, err := jsonrpc.EncodeNotification("note", noteParams{"raw"})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Send(raw); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if got := receive(t, svc.notes); got != fmt.Sprint(i) {
					t.Fatalf("notification %d arrived as %q", i, got)
				}
			}
			if got := receive(t, svc.notes); got != "raw" {
				t.Errorf("raw notification arrived as %q", got)
			}
		})
	}
}

func TestConcurrentCallsOutOfOrder(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			a, b := tk.pair(t, newService(), newService(), nil)
			ctx := testContext(t)
			var wg sync.WaitGroup
			errs := make(chan error, 1000)
			for g := range 16 {
				from := a
				if g%2 == 1 {
					from = b
				}
				wg.Go(func() {
					for i := range 20 {
						n := g*1000 + i
						var got int
						p := slowParams{N: n, Delay: rand.IntN(2000)}
						if err := from.Call(ctx, "slow", p, &got); err != nil {
							errs <- err
							return
						}
						if got != n {
							errs <- fmt.Errorf("call %d answered with %d", n, got)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestResponsesMatchedByID(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			c, p := tk.withPeer(t, nil, nil)
			ctx := testContext(t)
			results := make(chan string, 2)
			for _, method := range []string{"first", "second"} {
				go func() {
					var s string
					if err := c.Call(ctx, method, nil, &s); err != nil {
						s = err.Error()
					}
					results <- method + "=" + s
				}()
			}
			r1, r2 := p.recv().Request, p.recv().Request
			if r1 == nil || r2 == nil {
				t.Fatal("peer did not receive two requests")
			}
			// Answer in reverse order, echoing each method name.
			for _, r := range []*protocol.Request{r2, r1} {
				data, _ := protocol.Response{ID: r.ID, Result: jsontext.Value(`"` + r.Method + `"`)}.MarshalJSON()
				p.send(string(data))
			}
			got := map[string]bool{receive(t, results): true, receive(t, results): true}
			if !got["first=first"] || !got["second=second"] {
				t.Errorf("results %v", got)
			}
		})
	}
}

// TestInvalidInput sends malformed and unusual frames from a raw peer and
// checks the reply to each, then that the connection still serves a call.
func TestInvalidInput(t *testing.T) {
	const noReply = 0
	tests := []struct {
		name  string
		frame string
		id    string             // the reply's ID as JSON
		code  protocol.ErrorCode // noReply when none is due
	}{
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,`, "null", protocol.CodeParseError},
		{"not JSON", `hello`, "null", protocol.CodeParseError},
		{"empty frame", ``, "null", protocol.CodeParseError},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", "null", protocol.CodeParseError},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, "null", protocol.CodeInvalidRequest},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"echo"}`, "7", protocol.CodeInvalidRequest},
		{"missing version", `{"id":"s","method":"echo"}`, `"s"`, protocol.CodeInvalidRequest},
		{"duplicate member", `{"jsonrpc":"2.0","id":8,"method":"echo","method":"add"}`, "8", protocol.CodeInvalidRequest},
		{"member name case", `{"jsonrpc":"2.0","id":9,"Method":"echo"}`, "null", protocol.CodeInvalidRequest},
		{"params scalar", `{"jsonrpc":"2.0","id":10,"method":"echo","params":1}`, "10", protocol.CodeInvalidRequest},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"echo"}`, "null", protocol.CodeInvalidRequest},
		{"empty response", `{"jsonrpc":"2.0","id":11}`, "null", protocol.CodeInvalidRequest},
		{"unknown method", `{"jsonrpc":"2.0","id":12,"method":"nope"}`, "12", protocol.CodeMethodNotFound},
		{"bad params", `{"jsonrpc":"2.0","id":"p","method":"add","params":{"a":"x"}}`, `"p"`, protocol.CodeInvalidParams},
		{"handler error", `{"jsonrpc":"2.0","id":13,"method":"fail"}`, "13", protocol.CodeInternalError},
		{"unknown notification", `{"jsonrpc":"2.0","method":"nope","params":{}}`, "", noReply},
		{"failing notification", `{"jsonrpc":"2.0","method":"fail"}`, "", noReply},
		{"stray response", `{"jsonrpc":"2.0","id":99,"result":1}`, "", noReply},
		{"stray error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, "", noReply},
	}
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			_, p := tk.withPeer(t, newService(), nil)
			for _, tt := range tests {
				p.send(tt.frame)
				p.send(`{"jsonrpc":"2.0","id":"after","method":"add","params":{"a":1,"b":1}}`)
				if tt.code != noReply {
					r := p.recvResponse()
					if r.ID.String() != tt.id || r.Error == nil || r.Error.Code != tt.code {
						t.Errorf("%s: reply id %s error %+v, want id %s code %d", tt.name, r.ID, r.Error, tt.id, tt.code)
					}
				}
				r := p.recvResponse()
				if r.ID != protocol.StringID("after") || string(r.Result) != "2" {
					t.Errorf("%s: follow-up call answered with id %s result %s error %v", tt.name, r.ID, r.Result, r.Error)
				}
			}
		})
	}
}

func TestCallCancel(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			svc := newService()
			a, _ := tk.pair(t, nil, svc, nil)

			ctx, cancel := context.WithCancel(testContext(t))
			errc := make(chan error, 1)
			go func() { errc <- a.Call(ctx, "block", nil, nil) }()
			receive(t, svc.started)
			cancel()
			select {
			case err := <-errc:
				if err != context.Canceled {
					t.Errorf("cancelled Call = %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("cancelled Call did not return")
			}

			// The late response is dropped and the connection goes on.
			close(svc.release)
			var sum int
			if err := a.Call(testContext(t), "add", addParams{A: 1, B: 2}, &sum); err != nil || sum != 3 {
				t.Errorf("Call after cancellation = %d, %v", sum, err)
			}

			// A context that has already ended sends nothing.
			if err := a.Call(ctx, "add", nil, nil); err != context.Canceled {
				t.Errorf("Call with ended context = %v", err)
			}
			if err := a.Notify(ctx, "note", noteParams{"x"}); err != context.Canceled {
				t.Errorf("Notify with ended context = %v", err)
			}
		})
	}
}

func TestCloseFailsPendingCalls(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			svc := newService()
			a, b := tk.pair(t, nil, svc, nil)
			ctx := testContext(t)

			errc := make(chan error, 1)
			go func() { errc <- a.Call(ctx, "block", nil, nil) }()
			receive(t, svc.started)
			if err := a.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			select {
			case err := <-errc:
				if !errors.Is(err, jsonrpc.ErrClosed) {
					t.Errorf("pending Call = %v, want ErrClosed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("pending Call did not fail on Close")
			}
			<-a.Done()
			if err := a.Err(); err != jsonrpc.ErrClosed {
				t.Errorf("Err after Close = %v, want ErrClosed", err)
			}
			if err := a.Call(ctx, "add", nil, nil); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Call after Close = %v", err)
			}
			if err := a.Notify(ctx, "note", nil); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Notify after Close = %v", err)
			}
			if err := a.Close(); err != nil {
				t.Errorf("second Close = %v", err)
			}

			// The peer sees a clean hang-up and its blocked handler is cancelled.
			select {
			case <-b.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("peer did not notice the close")
			}
			if err := b.Err(); !errors.Is(err, jsonrpc.ErrClosed) || !errors.Is(err, io.EOF) {
				t.Errorf("peer Err = %v, want ErrClosed wrapping io.EOF", err)
			}
		})
	}
}

func TestOversizedMessage(t *testing.T) {
	const limit = 100
	const head, tail = `{"jsonrpc":"2.0","id":1,"method":"echo","params":["`, `"]}`
	small := head + strings.Repeat("x", limit-len(head)-len(tail)) + tail
	big := `{"jsonrpc":"2.0","id":2,"method":"echo","params":["` + strings.Repeat("x", 10*limit) + `"]}`
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			c, p := tk.withPeer(t, newService(), &jsonrpc.ConnOptions{MaxMessageSize: limit})
			p.send(small)
			if r := p.recvResponse(); r.Error != nil {
				t.Fatalf("message at the limit refused: %v", r.Error)
			}
			p.send(big)
			_, err := p.tr.Read(testContext(t))
			if err == nil {
				t.Error("peer can still read after the connection ended")
			} else if status := websocket.CloseStatus(err); tk.name == "websocket" && status != websocket.StatusMessageTooBig {
				t.Errorf("peer read error %v has status %v, want %v", err, status, websocket.StatusMessageTooBig)
			}
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("oversized message did not end the connection")
			}
			if err := c.Err(); !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
				t.Errorf("Err = %v, want ErrMessageTooLarge", err)
			}
		})
	}
}

func TestQueueFull(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			svc := newService()
			c, p := tk.withPeer(t, svc, &jsonrpc.ConnOptions{MaxQueue: 2})
			p.send(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
			receive(t, svc.started)
			for range 3 {
				p.send(`{"jsonrpc":"2.0","method":"note","params":{"text":"x"}}`)
			}
			// Reading lets a WebSocket peer answer the closing handshake.
			_, err := p.tr.Read(testContext(t))
			if status := websocket.CloseStatus(err); tk.name == "websocket" && status != websocket.StatusPolicyViolation {
				t.Errorf("peer read error %v has status %v, want %v", err, status, websocket.StatusPolicyViolation)
			}
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("overflowing the queue did not end the connection")
			}
			if err := c.Err(); !errors.Is(err, jsonrpc.ErrQueueFull) {
				t.Errorf("Err = %v, want ErrQueueFull", err)
			}
		})
	}
}

func TestPeerHangUpFailsCalls(t *testing.T) {
	c, p := transports[0].withPeer(t, nil, nil)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(testContext(t), "x", nil, nil) }()
	p.recv()
	p.tr.Close()
	if err := receive(t, errc); !errors.Is(err, jsonrpc.ErrClosed) || !errors.Is(err, io.EOF) {
		t.Errorf("Call = %v, want ErrClosed wrapping io.EOF", err)
	}
}

// TestCloseStopsGoroutines checks that connections with handlers blocked and
// async work in flight leave no goroutine behind once Done is closed.
func TestCloseStopsGoroutines(t *testing.T) {
	run := func(t *testing.T, tk transportKind) {
		svc := newService()
		a, b := tk.pair(t, nil, svc, nil)
		ctx := testContext(t)
		go a.Call(ctx, "slow", slowParams{Delay: 60e6}, nil)
		go a.Call(ctx, "block", nil, nil)
		receive(t, svc.started)
		closeAndWait(t, b)
		closeAndWait(t, a)
	}
	for _, tk := range transports {
		if tk.name == "pipe" {
			// In memory: synctest.Test returns only once every goroutine
			// started in the bubble has exited, and fails on one left
			// blocked.
			t.Run(tk.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { run(t, tk) })
			})
			continue
		}
		t.Run(tk.name, func(t *testing.T) { run(t, tk) })
	}
	if leaked := leakedGoroutines(5 * time.Second); leaked != "" {
		t.Errorf("goroutines left after Close:\n%s", leaked)
	}
}

func TestCloseFromHandler(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			a, b := tk.pair(t, nil, newService(), nil)
			if err := a.Call(testContext(t), "quit", nil, nil); !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Call = %v, want ErrClosed", err)
			}
			receive(t, b.Done())
			receive(t, a.Done())
		})
	}
}

// stallTransport is a Pipe end whose writes wait until release is closed,
// or fail with err when it is set.
type stallTransport struct {
	jsonrpc.Transport
	release chan struct{}
	err     error
	writing chan struct{} // when set, receives once per Write as it starts to wait
}

func (s *stallTransport) Write(ctx context.Context, data []byte) error {
	if s.err != nil {
		return s.err
	}
	if s.writing != nil {
		select {
		case s.writing <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Transport.Write(ctx, data)
}

func TestCancelDuringStalledWrite(t *testing.T) {
	local, remote := jsonrpc.Pipe()
	st := &stallTransport{Transport: local, release: make(chan struct{})}
	c := jsonrpc.NewConn(st, nil, nil)
	t.Cleanup(func() { closeAndWait(t, c) })
	server := jsonrpc.NewConn(remote, newService(), nil)
	t.Cleanup(func() { closeAndWait(t, server) })

	ctx, cancel := context.WithTimeout(testContext(t), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := c.Call(ctx, "add", addParams{A: 1}, nil); err != context.DeadlineExceeded {
		t.Errorf("Call during a stalled write = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Call took %v to give up", d)
	}
	// Once the transport moves again, the abandoned request goes out whole,
	// its response is dropped, and the connection serves new calls.
	close(st.release)
	var sum int
	if err := c.Call(testContext(t), "add", addParams{A: 1, B: 1}, &sum); err != nil || sum != 2 {
		t.Errorf("Call after the stall = %d, %v", sum, err)
	}
}

func TestWriteFailureEndsConnection(t *testing.T) {
	local, _ := jsonrpc.Pipe()
	broken := errors.New("cable cut")
	c := jsonrpc.NewConn(&stallTransport{Transport: local, err: broken}, nil, nil)
	t.Cleanup(func() { closeAndWait(t, c) })
	err := c.Call(testContext(t), "add", nil, nil)
	if !errors.Is(err, jsonrpc.ErrClosed) || !errors.Is(err, broken) {
		t.Errorf("Call = %v, want ErrClosed wrapping the write error", err)
	}
	receive(t, c.Done())
	if err := c.Err(); !errors.Is(err, broken) {
		t.Errorf("Err = %v", err)
	}
}

func TestLocalParamsCheck(t *testing.T) {
	a, _ := transports[0].pair(t, nil, newService(), nil)
	ctx := testContext(t)
	for _, params := range []any{"text", 42, true, make(chan int)} {
		if err := a.Call(ctx, "echo", params, nil); err == nil {
			t.Errorf("Call with params %T succeeded", params)
		}
		if err := a.Notify(ctx, "echo", params); err == nil {
			t.Errorf("Notify with params %T succeeded", params)
		}
	}
}

// TestEncodedResultSentAsIs checks that a result the handler encoded
// itself reaches the peer byte for byte (not reformatted, not as a base64
// string), and that an empty one is sent as null.
func TestEncodedResultSentAsIs(t *testing.T) {
	const page = `{"items":[{"a":1} ,{"b":"x"}]}`
	h := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "empty" {
			return &jsonrpc.Encoded{}, nil
		}
		raw := jsonrpc.Encoded(page)
		return &raw, nil
	})
	a, _ := transports[0].pair(t, newService(), h, nil)
	ctx := testContext(t)
	for method, want := range map[string]string{"page": page, "empty": "null"} {
		var got jsontext.Value
		if err := a.Call(ctx, method, nil, &got); err != nil || string(got) != want {
			t.Errorf("%s: result %s, %v; want %s", method, got, err, want)
		}
	}
}
