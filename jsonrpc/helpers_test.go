package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// TestMain fails the run when a goroutine of this package, or of the
// WebSocket library, outlives the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines waits up to d for goroutines running code of this module
// or of the WebSocket library to exit, and returns the stacks of those left.
func leakedGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			if strings.Contains(g, "leakedGoroutines") {
				continue // this goroutine
			}
			if strings.Contains(g, "ahp-go/ahp/jsonrpc.") || strings.Contains(g, "coder/websocket.") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		// A goroutine's exit is no event one can wait for outside a
		// synctest bubble, and a real socket (the WebSocket transport, the
		// HTTP server's connection goroutines) cannot live in one: poll,
		// as goleak does.
		time.Sleep(10 * time.Millisecond)
	}
}

// testContext returns a context that ends with the test or after a generous
// timeout, so a hang fails instead of stalling the run.
func testContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// closeAndWait closes c and waits for all of its goroutines.
func closeAndWait(t testing.TB, c *jsonrpc.Conn) {
	t.Helper()
	c.Close()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Errorf("connection did not finish after Close")
	}
}

// A transportKind makes connected endpoints of one transport: two Conns, or
// a Conn and the raw transport at the other end.
type transportKind struct {
	name string
	// raw returns the transport pair: the first end is for a Conn under
	// test, the second is driven by hand or by another Conn.
	raw func(t testing.TB) (jsonrpc.Transport, jsonrpc.Transport)
}

var transports = []transportKind{
	{"pipe", func(testing.TB) (jsonrpc.Transport, jsonrpc.Transport) { return jsonrpc.Pipe() }},
	{"websocket", wsTransports},
}

// wsTransports serves a WebSocket on 127.0.0.1 and returns transports over
// the accepted (server) end and the dialed (client) end.
func wsTransports(t testing.TB) (jsonrpc.Transport, jsonrpc.Transport) {
	t.Helper()
	server, client := wsConns(t)
	return jsonrpc.NewWebSocketTransport(server, nil), jsonrpc.NewWebSocketTransport(client, nil)
}

// serveWebSocket serves WebSockets on 127.0.0.1 until the test ends and
// returns their ws:// URL and the ends accepted there. Each request goes
// to accept; its handler then waits for the test to end, so that the
// connection outlives it.
func serveWebSocket[T any](t testing.TB, accept func(http.ResponseWriter, *http.Request) (T, error)) (string, <-chan T) {
	t.Helper()
	accepted := make(chan T, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		end, err := accept(w, r)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		select {
		case accepted <- end:
		case <-release:
		}
		<-release
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http"), accepted
}

// acceptRaw accepts a bare WebSocket.
func acceptRaw(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	return websocket.Accept(w, r, nil)
}

// acceptTransport accepts a WebSocket as a host does.
func acceptTransport(w http.ResponseWriter, r *http.Request) (jsonrpc.Transport, error) {
	return jsonrpc.AcceptWebSocket(w, r, nil)
}

// accepted waits for the end a server accepted.
func accepted[T any](t testing.TB, ends <-chan T) T {
	t.Helper()
	select {
	case end := <-ends:
		return end
	case <-testContext(t).Done():
		t.Fatal("no connection accepted")
		panic("unreachable")
	}
}

// wsConns serves a WebSocket on 127.0.0.1 and returns the accepted (server)
// and dialed (client) connections, both closed at the end of the test.
func wsConns(t testing.TB) (server, client *websocket.Conn) {
	t.Helper()
	url, ends := serveWebSocket(t, acceptRaw)
	client, _, err := websocket.Dial(testContext(t), url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	server = accepted(t, ends)
	t.Cleanup(func() {
		server.CloseNow()
		client.CloseNow()
	})
	return server, client
}

// httpTransports are the transports of AcceptWebSocket and DialWebSocket
// (with the default HTTP client) on 127.0.0.1, as a host and a client use.
func httpTransports(t testing.TB) (jsonrpc.Transport, jsonrpc.Transport) {
	t.Helper()
	url, ends := serveWebSocket(t, acceptTransport)
	client, _, err := jsonrpc.DialWebSocket(testContext(t), url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return accepted(t, ends), client
}

// pair connects two Conns over tk, serving with ha and hb.
func (tk transportKind) pair(t testing.TB, ha, hb jsonrpc.Handler, opts *jsonrpc.ConnOptions) (a, b *jsonrpc.Conn) {
	t.Helper()
	ta, tb := tk.raw(t)
	a = jsonrpc.NewConn(ta, ha, opts)
	b = jsonrpc.NewConn(tb, hb, opts)
	t.Cleanup(func() {
		closeAndWait(t, a)
		closeAndWait(t, b)
	})
	return a, b
}

// peer is the far end of a Conn, driven by hand.
type peer struct {
	t  *testing.T
	tr jsonrpc.Transport
}

// withPeer starts a Conn serving h over tk and returns it with its raw peer.
func (tk transportKind) withPeer(t *testing.T, h jsonrpc.Handler, opts *jsonrpc.ConnOptions) (*jsonrpc.Conn, *peer) {
	t.Helper()
	tc, tp := tk.raw(t)
	c := jsonrpc.NewConn(tc, h, opts)
	t.Cleanup(func() { closeAndWait(t, c) })
	// Hang up the peer first, while c still reads: a WebSocket peer that
	// does not read would stall c's closing handshake.
	t.Cleanup(func() { tp.Close() })
	return c, &peer{t, tp}
}

func (p *peer) send(frame string) {
	p.t.Helper()
	if err := p.tr.Write(testContext(p.t), []byte(frame)); err != nil {
		p.t.Fatalf("peer write: %v", err)
	}
}

func (p *peer) recv() protocol.JSONRPCMessage {
	p.t.Helper()
	data, err := p.tr.Read(testContext(p.t))
	if err != nil {
		p.t.Fatalf("peer read: %v", err)
	}
	m, err := protocol.DecodeMessage(data)
	if err != nil {
		p.t.Fatalf("peer received an invalid message %s: %v", data, err)
	}
	return m
}

func (p *peer) recvResponse() *protocol.Response {
	p.t.Helper()
	m := p.recv()
	if m.Response == nil {
		p.t.Fatalf("peer expected a response, got %+v", m)
	}
	return m.Response
}

// receive returns the next value from ch, failing the test after a while.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received")
		panic("unreachable")
	}
}

// service is the handler used by most tests.
type service struct {
	notes   chan string   // receives the params of "note" notifications
	started chan struct{} // receives a token when "block" starts
	release chan struct{} // closed to let "block" return
}

func newService() *service {
	return &service{
		notes:   make(chan string, 1000),
		started: make(chan struct{}, 100),
		release: make(chan struct{}),
	}
}

type addParams struct {
	A int `json:"a"`
	B int `json:"b"`
}

type noteParams struct {
	Text string `json:"text"`
}

type slowParams struct {
	N     int `json:"n"`
	Delay int `json:"delayMicros"`
}

func (s *service) Handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "echo":
		if req.Params == nil {
			return nil, nil
		}
		return req.Params, nil
	case "add":
		var p addParams
		if err := req.UnmarshalParams(&p); err != nil {
			return nil, err
		}
		return p.A + p.B, nil
	case "note":
		var p noteParams
		if err := req.UnmarshalParams(&p); err != nil {
			return nil, err
		}
		s.notes <- p.Text
		return nil, nil
	case "fail":
		return nil, errors.New("boom")
	case "coded":
		return nil, &protocol.Error{
			Code:    -32005,
			Message: "unsupported protocol version",
			Data:    jsontext.Value(`{"supportedVersions":["0.8.0"]}`),
		}
	case "wrapped":
		return nil, fmt.Errorf("session s1: %w", &protocol.Error{Code: -32009, Message: "permission denied"})
	case "badresult":
		return make(chan int), nil
	case "callback":
		var echoed []string
		if err := req.Conn().Call(ctx, "echo", []string{"ping"}, &echoed); err != nil {
			return nil, err
		}
		return strings.Join(echoed, "") + "/pong", nil
	case "slow":
		var p slowParams
		if err := req.UnmarshalParams(&p); err != nil {
			return nil, err
		}
		return jsonrpc.Async(func(ctx context.Context) (any, error) {
			select {
			case <-time.After(time.Duration(p.Delay) * time.Microsecond):
				return p.N, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}), nil
	case "quit":
		return nil, req.Conn().Close()
	case "block":
		s.started <- struct{}{}
		select {
		case <-s.release:
			return "released", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("%w: %s", jsonrpc.ErrMethodNotFound, req.Method)
}
