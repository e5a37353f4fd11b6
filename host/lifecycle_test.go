package host_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// TestActiveClientRemovedOnDisconnect checks that a client that marked
// itself active on a session is removed when its last connection goes.
func TestActiveClientRemovedOnDisconnect(t *testing.T) {
	th := startHost(t, nil)
	watcher := th.dial(t, "watcher")
	watcher.initialize()
	uri, _ := watcher.newSession("active")

	tool := th.dial(t, "tool-client")
	tool.initialize()
	tool.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{ClientID: "tool-client", Tools: []protocol.ToolDefinition{}}})
	watcher.WaitFor("active client set", hasType("session/activeClientSet"))
	tool.RPC.Close()
	envs := watcher.WaitFor("active client removed", hasType("session/activeClientRemoved"))
	if o := envs[len(envs)-1].Origin; o != nil {
		t.Fatalf("removal should come from the host, got origin %+v", o)
	}
	st := watcher.Subscribe(uri).State.(*protocol.SessionState)
	if len(st.ActiveClients) != 0 {
		t.Fatalf("active clients %+v", st.ActiveClients)
	}
}

// TestShutdownEndsRunningTurns checks that closing the host fails a turn
// in flight, as lifecycle.md asks for turns the host can no longer finish,
// and that subscribers see it before their connection closes.
func TestShutdownEndsRunningTurns(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initialize()
	_, chat := c.newSession("shutdown")
	c.Subscribe(chat)
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("/slow 500")})
	c.WaitFor("streaming", hasType("chat/delta"))
	th.h.Close()
	envs := c.WaitFor("turn failed", hasType("chat/error"))
	for _, e := range envs {
		if a, ok := e.Action.(*protocol.ChatErrorAction); ok && a.Info().ErrorType != "hostShutdown" {
			t.Fatalf("error %+v", a.Info())
		}
	}
	select {
	case <-c.RPC.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection not closed on shutdown")
	}
}

// TestWebSocketUpgradeChecks covers the token and the browser origin check
// at the upgrade.
func TestWebSocketUpgradeChecks(t *testing.T) {
	th := startHost(t, nil)
	srv := httptest.NewServer(th.h.WebSocketHandler(&host.WebSocketOptions{Token: "s3cret", OriginPatterns: []string{"app.example"}}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name   string
		header http.Header
		ok     bool
	}{
		{"no token", nil, false},
		{"wrong token", http.Header{"Authorization": {"Bearer nope"}}, false},
		{"token", http.Header{"Authorization": {"Bearer s3cret"}}, true},
		{"cross-origin browser", http.Header{"Authorization": {"Bearer s3cret"}, "Origin": {"https://evil.example"}}, false},
		{"allowed origin", http.Header{"Authorization": {"Bearer s3cret"}, "Origin": {"https://app.example"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: tc.header})
			if (err == nil) != tc.ok {
				t.Fatalf("dial: %v (status %v)", err, resp)
			}
			if ws != nil {
				ws.CloseNow()
			}
		})
	}
}

// TestVersionGating checks that a connection is only sent actions its
// negotiated version knows (versioning.md, forward compatibility):
// session/workingDirectorySet came in 0.7.0, so a 0.6.0 client does not
// see it, while a 0.8.0 client does.
func TestVersionGating(t *testing.T) {
	th := startHost(t, nil)
	newer, older := th.dial(t, "newer"), th.dial(t, "older")
	newer.initialize()
	var res protocol.InitializeResult
	older.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.6.0"}, ClientID: "older"}, &res)
	if res.ProtocolVersion != "0.6.0" {
		t.Fatalf("negotiated %s", res.ProtocolVersion)
	}
	uri, _ := newer.newSession("gated")
	older.Subscribe(uri)
	newer.Dispatch(uri, &protocol.SessionWorkingDirectorySetAction{Directory: "file:///tmp"})
	newer.Dispatch(uri, &protocol.SessionTitleChangedAction{Title: "after"})
	newer.WaitFor("both actions", hasType("session/titleChanged"))
	if !hasType("session/workingDirectorySet")(newer.WaitFor("", hasType("session/titleChanged"))) {
		t.Fatal("the 0.8.0 client did not get session/workingDirectorySet")
	}
	envs := older.WaitFor("title", hasType("session/titleChanged"))
	if hasType("session/workingDirectorySet")(envs) {
		t.Fatal("the 0.6.0 client was sent an action introduced in 0.7.0")
	}
}

// stuckBackend is an agent provider whose Close never returns.
type stuckBackend struct {
	agent.Backend
	release chan struct{}
}

func (b *stuckBackend) Close() error {
	<-b.release
	return nil
}

// TestShutdownIsBounded checks that Host.Shutdown returns once its context
// ends, even with a client that stopped reading and an agent provider that
// never finishes closing, and says that it did not finish.
func TestShutdownIsBounded(t *testing.T) {
	stuck := &stuckBackend{Backend: echo.New(nil), release: make(chan struct{})}
	defer close(stuck.release)
	h, err := host.New(&host.Options{Agents: []agent.Backend{stuck}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	defer srv.Close()
	rawDial(t, "ws"+strings.TrimPrefix(srv.URL, "http")) // never reads: a closing handshake would wait for it
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.Shutdown(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want an error wrapping the deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after its context ended")
	}
}

// TestHandlerReturnsAfterUpgrade: the WebSocket handler returns once the
// connection is upgraded, so net/http can drop the request and its
// buffers, while the connection goes on being served by the host until
// the host closes it.
func TestHandlerReturnsAfterUpgrade(t *testing.T) {
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{}, 1)
	inner := h.WebSocketHandler(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	defer srv.Close()
	ws := rawDial(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not return after the upgrade")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["1.1.0"],"clientId":"late"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, data, err := ws.Read(ctx); err != nil || !strings.Contains(string(data), `"protocolVersion":"1.1.0"`) {
		t.Fatalf("initialize after the handler returned: %s, %v", data, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); err == nil {
		t.Fatal("the connection outlived the host")
	}
	// A host that is closed refuses new connections instead of serving them.
	late := rawDial(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	if _, _, err := late.Read(ctx); err == nil {
		t.Fatal("a closed host served a new connection")
	}
}
