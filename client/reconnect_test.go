package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// testDialer dials the test host over WebSocket and lets a test cut the
// connection, hold reconnections back, fail them, or swallow what the
// client writes.
type testDialer struct {
	url string

	mu    sync.Mutex
	cur   *testTransport
	dials int
	gate  chan struct{} // when set, dials wait for it to close
	fail  error         // when set, dials fail with it
}

func (d *testDialer) dial(ctx context.Context) (jsonrpc.Transport, error) {
	d.mu.Lock()
	d.dials++
	gate, fail := d.gate, d.fail
	d.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	ws, _, err := jsonrpc.DialWebSocket(ctx, d.url, nil)
	if err != nil {
		return nil, err
	}
	t := &testTransport{Transport: ws}
	d.mu.Lock()
	d.cur = t
	d.mu.Unlock()
	return t, nil
}

// cut drops the current connection, and holds reconnections back until
// the returned function is called.
func (d *testDialer) cut() (release func()) {
	gate := make(chan struct{})
	d.mu.Lock()
	d.gate = gate
	cur := d.cur
	d.mu.Unlock()
	cur.Close()
	return func() {
		d.mu.Lock()
		d.gate = nil
		d.mu.Unlock()
		close(gate)
	}
}

func (d *testDialer) dialCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

// testTransport can drop what the client writes, as a connection that
// dies without noticing would.
type testTransport struct {
	jsonrpc.Transport
	mu      sync.Mutex
	swallow bool
}

func (t *testTransport) Write(ctx context.Context, data []byte) error {
	t.mu.Lock()
	drop := t.swallow
	t.mu.Unlock()
	if drop {
		return nil
	}
	return t.Transport.Write(ctx, data)
}

// connect makes an initialized client that dials through a testDialer and
// records its connection events.
func connect(t *testing.T, url string) (*client.Client, *testDialer, *eventLog) {
	t.Helper()
	d := &testDialer{url: url}
	log := &eventLog{wake: make(chan struct{}, 1)}
	ctx := testCtx(t)
	c, err := client.ConnectTransport(ctx, d.dial, &client.Options{
		Now:               fixedClock,
		ReconnectDelay:    5 * time.Millisecond,
		MaxReconnectDelay: 50 * time.Millisecond,
		OnConnection:      log.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, d, log
}

type eventLog struct {
	mu     sync.Mutex
	events []client.ConnectionEvent
	wake   chan struct{}
}

func (l *eventLog) add(ev client.ConnectionEvent) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// wait returns the first event in the given state after the first skip
// events.
func (l *eventLog) wait(t *testing.T, state client.ConnectionState, skip int) client.ConnectionEvent {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		l.mu.Lock()
		for i, ev := range l.events {
			if i >= skip && ev.State == state {
				l.mu.Unlock()
				return ev
			}
		}
		n := len(l.events)
		l.mu.Unlock()
		select {
		case <-l.wake:
		case <-deadline:
			t.Fatalf("no %v event; got %d events", state, n)
		}
	}
}

func (l *eventLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// streamedWords waits until the active turn has streamed at least n
// deltas.
func streamedWords(n int) func(*protocol.ChatState) bool {
	return func(c *protocol.ChatState) bool {
		if c.ActiveTurn == nil || len(c.ActiveTurn.ResponseParts) == 0 {
			return false
		}
		md, ok := c.ActiveTurn.ResponseParts[0].(*protocol.MarkdownResponsePart)
		return ok && strings.Count(md.Content.String(), "word") >= n
	}
}

// TestReconnectReplayMidTurn drops the connection while a turn streams;
// the client reconnects, the host replays what it missed, and the mirror
// ends equal to the host's state with the reply whole.
func TestReconnectReplayMidTurn(t *testing.T) {
	th := startHost(t, nil)
	c, d, log := connect(t, th.url)
	ctx := testCtx(t)
	_, chat := newSession(t, c)
	if _, err := chat.Dispatch(ctx, turnStarted("t", "/slow 40")); err != nil {
		t.Fatal(err)
	}
	waitState(t, chat, "a few words", streamedWords(3))
	release := d.cut()
	log.wait(t, client.Disconnected, 0)
	// Let the turn go on without us: another client sees more words than
	// the mirror has, so the replay has something to bring.
	had := 0
	if c := chat.Chat(); c.ActiveTurn != nil && len(c.ActiveTurn.ResponseParts) > 0 {
		had = strings.Count(c.ActiveTurn.ResponseParts[0].(*protocol.MarkdownResponsePart).Content.String(), "word")
	}
	waitState(t, subscribe(t, dial(t, th.url, nil), chat.Channel()), "the turn going on", streamedWords(had+2))
	release()

	ev := log.wait(t, client.Reconnected, 0)
	if !ev.Resume.Replayed || ev.Resume.Actions == 0 || len(ev.Resume.Missing) != 0 {
		t.Fatalf("resume %+v", ev.Resume)
	}
	if len(ev.Resume.Sessions) != 1 || ev.Resume.SessionsErr != nil {
		t.Fatalf("sessions after reconnect: %+v, %v", ev.Resume.Sessions, ev.Resume.SessionsErr)
	}
	st := waitState(t, chat, "turn done", turnDone("t"))
	if got := replyText(st.Turns[0]); strings.Count(got, "word") != 40 || !strings.HasSuffix(got, "word40") {
		t.Fatalf("reply after the replay: %q", got)
	}
	converge(t, "chat", chat, hostState(t, th.url, chat.Channel()))
	replayed := false
	for {
		ev, err := chat.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		replayed = replayed || ev.Replayed
		if ev.Envelope != nil && ev.Envelope.Action.Type() == "chat/turnComplete" {
			break
		}
	}
	if !replayed {
		t.Fatal("no replayed envelope on the stream")
	}
}

// TestReconnectSnapshotMidTurn is the same with a replay log too small for
// the gap: the host sends fresh snapshots instead.
func TestReconnectSnapshotMidTurn(t *testing.T) {
	th := startHost(t, &host.Options{ReplayEntries: 2})
	c, d, log := connect(t, th.url)
	watcher := dial(t, th.url, nil)
	ctx := testCtx(t)
	_, chat := newSession(t, c)
	other := subscribe(t, watcher, chat.Channel())
	if _, err := chat.Dispatch(ctx, turnStarted("t", "/slow 40")); err != nil {
		t.Fatal(err)
	}
	waitState(t, chat, "a few words", streamedWords(3))
	release := d.cut()
	waitState(t, other, "more words meanwhile", streamedWords(10))
	release()

	ev := log.wait(t, client.Reconnected, 0)
	if ev.Resume.Replayed || len(ev.Resume.Missing) != 0 {
		t.Fatalf("resume %+v", ev.Resume)
	}
	st := waitState(t, chat, "turn done", turnDone("t"))
	if got := replyText(st.Turns[0]); strings.Count(got, "word") != 40 {
		t.Fatalf("reply after the snapshot: %q", got)
	}
	converge(t, "chat", chat, hostState(t, th.url, chat.Channel()))
	converge(t, "the other client's chat", other, chat.State())
	for {
		ev, err := chat.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Resync != nil {
			break
		}
	}
}

// TestPendingClearedOnReconnect loses an action on a connection that died
// without noticing: after the reconnection it is no longer pending, its
// effect is gone, and its receipt says it was not confirmed.
func TestPendingClearedOnReconnect(t *testing.T) {
	th := startHost(t, nil)
	c, d, log := connect(t, th.url)
	ctx := testCtx(t)
	session, _ := newSession(t, c)
	d.mu.Lock()
	d.cur.mu.Lock()
	d.cur.swallow = true
	d.cur.mu.Unlock()
	d.mu.Unlock()
	r, err := session.Dispatch(ctx, &protocol.SessionTitleChangedAction{Title: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	if got := session.Session().Title; got != "lost" {
		t.Fatalf("optimistic title %q", got)
	}
	d.cut()()
	ev := log.wait(t, client.Reconnected, 0)
	if err := r.Wait(ctx); !errors.Is(err, client.ErrNotConfirmed) {
		t.Fatalf("receipt: %v", err)
	}
	if len(ev.Resume.Unconfirmed) != 1 || ev.Resume.Unconfirmed[0] != r {
		t.Fatalf("unconfirmed %+v", ev.Resume.Unconfirmed)
	}
	if got := session.Session().Title; got == "lost" || len(session.Pending()) != 0 {
		t.Fatalf("after reconnecting: title %q, %d pending", got, len(session.Pending()))
	}
	converge(t, "session", session, hostState(t, th.url, session.Channel()))
}

// TestMissingChannelsEnd disposes of a session while a client is away: its
// subscriptions end with ErrChannelGone.
func TestMissingChannelsEnd(t *testing.T) {
	th := startHost(t, nil)
	c, d, log := connect(t, th.url)
	ctx := testCtx(t)
	session, chat := newSession(t, c)
	root := subscribe(t, c, protocol.RootURI)
	release := d.cut()
	other := dial(t, th.url, nil)
	if err := other.DisposeSession(ctx, &protocol.DisposeSessionParams{Channel: session.Channel()}); err != nil {
		t.Fatal(err)
	}
	release()
	ev := log.wait(t, client.Reconnected, 0)
	if len(ev.Resume.Missing) != 2 || len(ev.Resume.Sessions) != 0 {
		t.Fatalf("resume %+v", ev.Resume)
	}
	for _, s := range []*client.Subscription{session, chat} {
		<-s.Done()
		if !errors.Is(s.Err(), client.ErrChannelGone) {
			t.Fatalf("%s ended with %v", s.Channel(), s.Err())
		}
	}
	if root.Err() != nil {
		t.Fatalf("root subscription ended: %v", root.Err())
	}
	waitState(t, root, "no sessions", func(r *protocol.RootState) bool { return *r.ActiveSessions == 0 })
}

// TestCallsWaitForReconnection makes requests while the client is away:
// they go through once it is back.
func TestCallsWaitForReconnection(t *testing.T) {
	th := startHost(t, nil)
	c, d, log := connect(t, th.url)
	ctx := testCtx(t)
	session, _ := newSession(t, c)
	release := d.cut()
	log.wait(t, client.Disconnected, 0)
	errs := make(chan error, 2)
	dispatching, listing := make(chan struct{}), make(chan struct{})
	go func() {
		close(dispatching)
		r, err := session.Dispatch(ctx, &protocol.SessionTitleChangedAction{Title: "later"})
		if err == nil {
			err = r.Wait(ctx)
		}
		errs <- err
	}()
	go func() {
		close(listing)
		_, err := c.ListSessions(ctx, nil)
		errs <- err
	}()
	// Both calls are on their way once their goroutines run; neither can
	// finish before the link is back.
	<-dispatching
	<-listing
	runtime.Gosched()
	select {
	case err := <-errs:
		t.Fatalf("a call finished while the client was away: %v", err)
	default:
	}
	release()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := session.Session().Title; got != "later" {
		t.Fatalf("title %q", got)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	n := log.count()
	d.cut() // and never let it back
	log.wait(t, client.Disconnected, n)
	if err := c.Ping(short, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ping while away: %v", err)
	}
}

// TestReconnectStops checks that reconnecting stops on an error retrying
// cannot fix, and after the allowed attempts otherwise.
func TestReconnectStops(t *testing.T) {
	cases := []struct {
		name     string
		fail     error
		attempts int
		dials    int // dials in all, the first connection included
	}{
		{"token refused", &client.DialError{URL: "ws://x", StatusCode: http.StatusUnauthorized, Err: errors.New("401")}, 0, 2},
		{"unreachable", &client.DialError{URL: "ws://x", Err: errors.New("connection refused")}, 3, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			th := startHost(t, nil)
			d := &testDialer{url: th.url}
			log := &eventLog{wake: make(chan struct{}, 1)}
			ctx := testCtx(t)
			c, err := client.ConnectTransport(ctx, d.dial, &client.Options{
				ReconnectDelay: time.Millisecond, MaxReconnectAttempts: tc.attempts, OnConnection: log.add,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			d.mu.Lock()
			d.fail = tc.fail
			d.mu.Unlock()
			d.cut()()
			ev := log.wait(t, client.Stopped, 0)
			<-c.Done()
			var de *client.DialError
			if !errors.As(ev.Err, &de) || !errors.As(c.Err(), &de) {
				t.Fatalf("stopped with %v; Err %v", ev.Err, c.Err())
			}
			if n := d.dialCount(); n != tc.dials {
				t.Fatalf("%d dials, want %d", n, tc.dials)
			}
			if err := c.Ping(ctx, nil); !errors.Is(err, client.ErrClosed) {
				t.Fatalf("ping after stopping: %v", err)
			}
		})
	}
}

// TestLossBeforeInitializeStops checks that a client that never
// initialized does not try to resume.
func TestLossBeforeInitializeStops(t *testing.T) {
	th := startHost(t, nil)
	d := &testDialer{url: th.url}
	c, err := client.DialTransport(testCtx(t), d.dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d.cut()()
	<-c.Done()
	if !errors.Is(c.Err(), client.ErrDisconnected) || d.dialCount() != 1 {
		t.Fatalf("Err %v after %d dials", c.Err(), d.dialCount())
	}
}

// restartableHost serves a host on a fixed loopback address and can be
// killed and replaced by a new, empty one on the same address.
type restartableHost struct {
	t    *testing.T
	addr string
	h    *host.Host
	srv  *http.Server
}

func startRestartable(t *testing.T) *restartableHost {
	rh := &restartableHost{t: t}
	rh.start("127.0.0.1:0")
	t.Cleanup(rh.kill)
	return rh
}

func (rh *restartableHost) url() string { return "ws://" + rh.addr }

func (rh *restartableHost) start(addr string) {
	h, err := host.New(&host.Options{Now: fixedClock, Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: time.Millisecond, SlowDelay: 5 * time.Millisecond})}})
	if err != nil {
		rh.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		rh.t.Fatal(err)
	}
	rh.addr, rh.h = ln.Addr().String(), h
	rh.srv = &http.Server{Handler: h.WebSocketHandler(nil)}
	go rh.srv.Serve(ln)
}

func (rh *restartableHost) kill() {
	if rh.h == nil {
		return
	}
	rh.srv.Close()
	rh.h.Close()
	rh.h = nil
}

// TestHostRestart kills the host while two clients follow a running turn
// and starts a new, empty one on the same address. Both clients come back
// with fresh snapshots, lose the session (which the new host does not
// have), agree with the new host, and work on.
func TestHostRestart(t *testing.T) {
	rh := startRestartable(t)
	ctx := testCtx(t)
	type follower struct {
		c    *client.Client
		log  *eventLog
		root *client.Subscription
		chat *client.Subscription
	}
	var fs []*follower
	for range 2 {
		c, _, log := connect(t, rh.url())
		fs = append(fs, &follower{c: c, log: log, root: subscribe(t, c, protocol.RootURI)})
	}
	session, chat := newSession(t, fs[0].c)
	fs[0].chat = chat
	fs[1].chat = subscribe(t, fs[1].c, chat.Channel())
	if _, err := chat.Dispatch(ctx, turnStarted("t", "/slow 100")); err != nil {
		t.Fatal(err)
	}
	waitState(t, fs[1].chat, "a few words", streamedWords(3))

	rh.kill()
	for _, f := range fs {
		f.log.wait(t, client.Disconnected, 0)
	}
	rh.start(rh.addr)
	for i, f := range fs {
		ev := f.log.wait(t, client.Reconnected, 0)
		if ev.Resume.Replayed {
			t.Fatalf("client %d: a new host replayed: %+v", i, ev.Resume)
		}
		<-f.chat.Done()
		if !errors.Is(f.chat.Err(), client.ErrChannelGone) {
			t.Fatalf("client %d: chat ended with %v", i, f.chat.Err())
		}
		if f.root.Err() != nil {
			t.Fatalf("client %d: root ended: %v", i, f.root.Err())
		}
	}
	_ = session
	// Both clients work with the new host, and see each other's work.
	_, chat2 := newSession(t, fs[0].c)
	other := subscribe(t, fs[1].c, chat2.Channel())
	if _, err := chat2.Dispatch(ctx, turnStarted("t2", "after the restart")); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, other, "turn done", turnDone("t2"))
	if got := replyText(st.Turns[0]); got != "You said: after the restart" {
		t.Fatalf("reply %q", got)
	}
	wantRoot := hostState(t, rh.url(), protocol.RootURI)
	for i, f := range fs {
		converge(t, "root of client "+string(rune('0'+i)), f.root, wantRoot)
	}
	converge(t, "chat", chat2, hostState(t, rh.url(), chat2.Channel()))
}
