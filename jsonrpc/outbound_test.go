package jsonrpc_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/jsonrpc"
)

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestDeadReaderCostsItsByteBound checks that a peer that stops reading
// holds at most the outbound byte bound, that going over it ends the
// connection with ErrSendQueueFull through the overflow callback, and that
// the queued memory is given back.
func TestDeadReaderCostsItsByteBound(t *testing.T) {
	const bound = 8 << 20
	const size = 1 << 20
	local, _ := jsonrpc.Pipe()
	st := &stallTransport{Transport: local, release: make(chan struct{})}
	overflow := make(chan error, 1)
	c := jsonrpc.NewConn(st, nil, &jsonrpc.ConnOptions{
		MaxOutBytes:    bound,
		MaxOutMessages: 1 << 20,
		OnOverflow:     func(err error) { overflow <- err },
	})
	t.Cleanup(func() { closeAndWait(t, c) })

	base := heapInUse()
	sent := 0
	var err error
	for sent < 100 {
		if err = c.Send([]byte(strings.Repeat("x", size))); err != nil {
			break
		}
		sent++
		if _, queued := c.Queued(); queued > bound {
			t.Fatalf("%d bytes queued, over the bound of %d", queued, bound)
		}
	}
	if sent != bound/size || !errors.Is(err, jsonrpc.ErrSendQueueFull) {
		t.Fatalf("accepted %d messages of %d bytes, then %v; want %d, then ErrSendQueueFull", sent, size, err, bound/size)
	}
	if err := receive(t, overflow); !errors.Is(err, jsonrpc.ErrSendQueueFull) {
		t.Errorf("overflow callback got %v", err)
	}
	receive(t, c.Done())
	if err := c.Err(); !errors.Is(err, jsonrpc.ErrSendQueueFull) {
		t.Errorf("Err = %v, want ErrSendQueueFull", err)
	}
	if n, b := c.Queued(); n != 0 || b != 0 {
		t.Errorf("after the overflow %d messages and %d bytes are still queued", n, b)
	}
	if grown := int64(heapInUse()) - int64(base); grown > 2<<20 {
		t.Errorf("heap still %d bytes above where it started after the overflow", grown)
	}
	if err := c.Send([]byte(`{}`)); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Send after the overflow = %v, want ErrClosed", err)
	}
}

// TestOutboundMessageBound checks the bound in messages, and that one
// message larger than the byte bound still goes out on an idle queue.
func TestOutboundMessageBound(t *testing.T) {
	local, remote := jsonrpc.Pipe()
	st := &stallTransport{Transport: local, release: make(chan struct{})}
	c := jsonrpc.NewConn(st, nil, &jsonrpc.ConnOptions{MaxOutBytes: 10, MaxOutMessages: 3})
	t.Cleanup(func() { closeAndWait(t, c) })
	big := `{"jsonrpc":"2.0","method":"big","params":["` + strings.Repeat("y", 100) + `"]}`
	if err := c.Send([]byte(big)); err != nil {
		t.Fatalf("a large message on an idle queue: %v", err)
	}
	close(st.release)
	ctx := testContext(t)
	if data, err := remote.Read(ctx); err != nil || string(data) != big {
		t.Fatalf("read %q, %v", data, err)
	}
	// Wait for the writer to account for the message it wrote.
	for {
		if _, b := c.Queued(); b == 0 {
			break
		}
		runtime.Gosched()
	}
	// The writer takes what is waiting when it starts a write, so fill the
	// queue only once it holds the first message, stalled: then exactly
	// three more may wait and a fifth overflows, however the goroutines
	// are scheduled.
	st2 := &stallTransport{Transport: remote, release: make(chan struct{}), writing: make(chan struct{})}
	c2 := jsonrpc.NewConn(st2, nil, &jsonrpc.ConnOptions{MaxOutMessages: 3})
	t.Cleanup(func() { closeAndWait(t, c2) })
	msg := []byte(`{"jsonrpc":"2.0","method":"n"}`)
	if err := c2.Send(msg); err != nil {
		t.Fatalf("first message refused: %v", err)
	}
	receive(t, st2.writing)
	for i := range 3 {
		if err := c2.Send(msg); err != nil {
			t.Fatalf("waiting message %d refused: %v", i, err)
		}
	}
	if n, _ := c2.Queued(); n != 3 {
		t.Fatalf("%d messages waiting, want 3", n)
	}
	if err := c2.Send(msg); !errors.Is(err, jsonrpc.ErrSendQueueFull) {
		t.Fatalf("a fourth waiting message: %v, want ErrSendQueueFull", err)
	}
	receive(t, c2.Done())
}

// TestCloseWithReason checks that CloseWith lets a queued message leave
// first and then tells a WebSocket peer why, with the matching status.
func TestCloseWithReason(t *testing.T) {
	for _, tc := range []struct {
		cause  error
		status websocket.StatusCode
	}{
		{errors.Join(jsonrpc.ErrPolicyViolation, errors.New("no common version")), websocket.StatusPolicyViolation},
		{errors.Join(jsonrpc.ErrGoingAway, errors.New("shutting down")), websocket.StatusGoingAway},
		{errors.New("bye"), websocket.StatusNormalClosure},
		{errors.New(strings.Repeat("é", 100)), websocket.StatusNormalClosure},
	} {
		server, client := wsConns(t)
		c := jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(server, nil), nil, nil)
		t.Cleanup(func() { closeAndWait(t, c) })
		if err := c.Notify(testContext(t), "last", nil); err != nil {
			t.Fatal(err)
		}
		go c.CloseWith(tc.cause)
		ctx := testContext(t)
		if _, data, err := client.Read(ctx); err != nil || !strings.Contains(string(data), `"last"`) {
			t.Fatalf("queued message not delivered before closing: %s, %v", data, err)
		}
		_, _, err := client.Read(ctx)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != tc.status {
			t.Errorf("%v: peer read %v, want status %v", tc.cause, err, tc.status)
			continue
		}
		if want := tc.cause.Error(); len(want) <= 123 && ce.Reason != want {
			t.Errorf("reason %q, want %q", ce.Reason, want)
		}
		if len(ce.Reason) > 123 || !strings.HasPrefix(tc.cause.Error(), ce.Reason) {
			t.Errorf("reason %q is not a prefix of the cause of at most 123 bytes", ce.Reason)
		}
		receive(t, c.Done())
		if err := c.Err(); !errors.Is(err, tc.cause) {
			t.Errorf("Err = %v, want the cause", err)
		}
	}
}

// TestPingDetectsDeadPeer checks that a peer that does not answer pings
// is dropped with ErrPeerTimeout.
func TestPingDetectsDeadPeer(t *testing.T) {
	server, _ := wsConns(t) // the client end never reads, so never answers a ping
	c := jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(server, &jsonrpc.WebSocketOptions{
		PingInterval: 20 * time.Millisecond,
		PingTimeout:  50 * time.Millisecond,
	}), nil, nil)
	t.Cleanup(func() { closeAndWait(t, c) })
	receive(t, c.Done())
	if err := c.Err(); !errors.Is(err, jsonrpc.ErrPeerTimeout) {
		t.Errorf("Err = %v, want ErrPeerTimeout", err)
	}
}

// TestPingKeepsLivePeer checks that a peer that reads answers pings and
// keeps the connection.
func TestPingKeepsLivePeer(t *testing.T) {
	server, client := wsConns(t)
	c := jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(server, &jsonrpc.WebSocketOptions{
		PingInterval: 5 * time.Millisecond,
		PingTimeout:  5 * time.Second,
	}), newService(), nil)
	t.Cleanup(func() { closeAndWait(t, c) })
	peer := jsonrpc.NewConn(jsonrpc.NewWebSocketTransport(client, nil), jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Request) (any, error) {
		return nil, nil
	}), nil)
	t.Cleanup(func() { closeAndWait(t, peer) })
	var sum int
	for i := range 20 {
		if err := peer.Call(testContext(t), "slow", slowParams{N: i, Delay: 2000}, &sum); err != nil || sum != i {
			t.Fatalf("call %d across pings: %d, %v", i, sum, err)
		}
	}
	if err := c.Err(); err != nil {
		t.Fatalf("connection ended: %v", err)
	}
}
