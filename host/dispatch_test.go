package host_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// TestRequestOrNotificationCheckedFirst checks that the method table
// decides whether a method must come as a request or as a notification,
// before any handler runs: a createSession sent as a notification creates
// nothing, and a dispatchAction sent as a request is refused with -32600
// and not applied.
func TestRequestOrNotificationCheckedFirst(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "a")
	c.initialize()
	session := protocol.SessionURI("as-notification")
	if err := c.RPC.Notify(context.Background(), "createSession", &protocol.CreateSessionParams{Channel: session}); err != nil {
		t.Fatal(err)
	}
	// ping is answered after the notification was handled.
	if err := c.Call("ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	if items := list(c); len(items) != 0 {
		t.Fatalf("a createSession notification created %+v", items)
	}

	real, _ := c.newSession("s")
	err := c.Call("dispatchAction", &protocol.DispatchActionParams{Channel: real, ClientSeq: 1, Action: &protocol.SessionTitleChangedAction{Title: "as a request"}}, nil)
	if code := rpcCode(err); code != protocol.CodeInvalidRequest {
		t.Fatalf("dispatchAction as a request: %v (code %d), want %d", err, code, protocol.CodeInvalidRequest)
	}
	var sub protocol.SubscribeResult
	c.Must("subscribe", &protocol.SubscribeParams{Channel: real}, &sub)
	if title := sub.Snapshot.State.(*protocol.SessionState).Title; title == "as a request" {
		t.Fatal("a dispatchAction sent as a request was applied")
	}

	// Methods of the table the host does not serve, and unknown ones.
	if code := rpcCode(c.Call("createTerminal", &protocol.CreateTerminalParams{}, nil)); code != protocol.CodeMethodNotFound {
		t.Errorf("createTerminal: code %d", code)
	}
	if code := rpcCode(c.Call("noSuchMethod", nil, nil)); code != protocol.CodeMethodNotFound {
		t.Errorf("unknown method: code %d", code)
	}
	// Server-to-client methods are not client methods.
	if code := rpcCode(c.Call("root/sessionAdded", nil, nil)); code != protocol.CodeMethodNotFound {
		t.Errorf("a server notification sent by a client: code %d", code)
	}
}

// gatedStore holds LoadSession until its gate opens.
type gatedStore struct {
	store.Store
	gate    chan struct{}
	waiting chan struct{} // receives a token when a load starts waiting
	mu      sync.Mutex
	loads   map[string]int
}

func (s *gatedStore) LoadSession(ctx context.Context, uri string, recent int) (*store.SessionData, error) {
	s.mu.Lock()
	s.loads[uri]++
	s.mu.Unlock()
	select {
	case s.waiting <- struct{}{}:
	default:
	}
	select {
	case <-s.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.LoadSession(ctx, uri, recent)
}

// TestColdLoadDoesNotStallTheHost checks that reading a session from the
// store happens outside the host lock: while a subscribe waits for a slow
// read, another client's turn streams to its end, and a second subscriber
// to the same cold session shares the one read.
func TestColdLoadDoesNotStallTheHost(t *testing.T) {
	mem := store.NewMemory()
	th := startHost(t, &host.Options{Store: mem})
	c := th.dial(t, "a")
	c.initialize()
	cold, _ := c.newSession("cold")
	th.h.Close()

	gs := &gatedStore{Store: mem, gate: make(chan struct{}), waiting: make(chan struct{}, 1), loads: map[string]int{}}
	th2 := startHost(t, &host.Options{Store: gs})
	a, b, d := th2.dial(t, "a"), th2.dial(t, "b"), th2.dial(t, "d")
	a.initialize()
	b.initialize()
	d.initialize()
	_, warm := d.newSession("warm")
	d.Subscribe(warm)

	results := make(chan error, 2)
	for _, cl := range []*client{a, b} {
		go func() {
			var sub protocol.SubscribeResult
			results <- cl.Call("subscribe", &protocol.SubscribeParams{Channel: cold}, &sub)
		}()
	}
	select {
	case <-gs.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the cold session was never read")
	}
	// The host keeps serving while the read waits.
	startTurn(d, warm, "t1", "/slow 3")
	d.WaitFor("warm turn", endedOn(warm))
	if err := d.Call("ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	close(gs.gate)
	for range 2 {
		if err := <-results; err != nil {
			t.Fatalf("subscribe to the cold session: %v", err)
		}
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if n := gs.loads[cold]; n != 1 {
		t.Errorf("the cold session was read %d times, want once", n)
	}
}

// TestRememberedVersionsBounded checks that the host remembers the
// versions of at most its bound of clients, forgetting the least recently
// seen first.
func TestRememberedVersionsBounded(t *testing.T) {
	th := startHost(t, nil)
	first := th.dial(t, "first")
	first.initialize()
	second := th.dial(t, "second")
	second.initialize()
	// "first" is seen again, so "second" is now the least recent.
	th.dial(t, "first").Must("reconnect", &protocol.ReconnectParams{ClientID: "first", Subscriptions: []string{}}, nil)
	for i := range host.MaxRememberedClients - 1 {
		host.RememberVersion(th.h, fmt.Sprintf("c%d", i), "0.8.0")
	}
	if n := host.RememberedVersions(th.h); n != host.MaxRememberedClients {
		t.Fatalf("%d versions remembered, bound %d", n, host.MaxRememberedClients)
	}
	if host.RememberedVersion(th.h, "second") != "" || host.RememberedVersion(th.h, "first") == "" {
		t.Errorf("the wrong client was forgotten")
	}
}
