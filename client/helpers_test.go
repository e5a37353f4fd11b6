package client_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// fixedClock makes the host's and the clients' reducers stamp the same
// modifiedAt, so mirrors compare equal to the host's state.
func fixedClock() time.Time { return time.UnixMilli(1_700_000_000_000) }

// testHost is an in-process host behind a real WebSocket server on
// 127.0.0.1.
type testHost struct {
	h   *host.Host
	srv *httptest.Server
	url string
}

func startHost(t testing.TB, opts *host.Options) *testHost {
	t.Helper()
	var o host.Options
	if opts != nil {
		o = *opts
	}
	if o.Agents == nil {
		o.Agents = []agent.Backend{echo.New(&echo.Options{WordDelay: time.Millisecond, SlowDelay: 5 * time.Millisecond})}
	}
	if o.Now == nil {
		o.Now = fixedClock
	}
	h, err := host.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	th := &testHost{h: h, srv: srv, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		h.Close()
		srv.Close()
	})
	return th
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dial connects and initializes a client.
func dial(t testing.TB, url string, opts *client.Options) *client.Client {
	t.Helper()
	var o client.Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = fixedClock
	}
	if o.ReconnectDelay == 0 {
		o.ReconnectDelay = 5 * time.Millisecond
		o.MaxReconnectDelay = 50 * time.Millisecond
	}
	ctx := testCtx(t)
	c, err := client.Connect(ctx, url, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func userMessage(text string) protocol.Message {
	return protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
}

func turnStarted(id, text string) *protocol.ChatTurnStartedAction {
	return &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(fixedClock()), Message: userMessage(text)}
}

// newSession creates a ready session and subscribes to it and its default
// chat.
func newSession(t testing.TB, c *client.Client) (session, chat *client.Subscription) {
	t.Helper()
	ctx := testCtx(t)
	uri := protocol.SessionURI(client.NewID())
	if err := c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: uri}); err != nil {
		t.Fatal(err)
	}
	session = subscribe(t, c, uri)
	waitState(t, session, "session ready", func(s *protocol.SessionState) bool {
		return s.Lifecycle == protocol.SessionLifecycleReady
	})
	chat = subscribe(t, c, *session.Session().DefaultChat)
	return session, chat
}

func subscribe(t testing.TB, c *client.Client, uri string) *client.Subscription {
	t.Helper()
	s, err := c.Subscribe(testCtx(t), &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	return s
}

// waitState waits until the subscription's optimistic state, of type S,
// satisfies cond.
func waitState[S protocol.SnapshotState](t testing.TB, s *client.Subscription, what string, cond func(S) bool) S {
	t.Helper()
	got := make(chan S, 1)
	stop := client.WatchOf(s, func(v S) {
		if cond(v) {
			select {
			case got <- v:
			default:
			}
		}
	})
	defer stop()
	select {
	case v := <-got:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s; state %s", what, encode(t, s.State()))
	}
	panic("unreachable")
}

func turnDone(id string) func(*protocol.ChatState) bool {
	return func(c *protocol.ChatState) bool {
		for _, t := range c.Turns {
			if t.ID == id {
				return true
			}
		}
		return false
	}
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := protocol.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hostState reads a channel's state as the host has it, through a fresh
// client.
func hostState(t testing.TB, url, uri string) protocol.SnapshotState {
	t.Helper()
	c := dial(t, url, nil)
	defer c.Close()
	s := subscribe(t, c, uri)
	return s.Snapshot().State
}

// sameState fails when two states differ.
func sameState(t testing.TB, what string, want, got protocol.SnapshotState) {
	t.Helper()
	if diff := cmp.Diff(encode(t, want), encode(t, got)); diff != "" {
		t.Errorf("%s differs from the host's state (-host +mirror):\n%s", what, diff)
	}
}

func replyText(turn protocol.Turn) string {
	var b strings.Builder
	for _, p := range turn.ResponseParts {
		if md, ok := p.(*protocol.MarkdownResponsePart); ok {
			b.WriteString(md.Content.String())
		}
	}
	return b.String()
}
