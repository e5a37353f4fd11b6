package client_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// TestEveryCommandHasAMethod checks that each request a client may send
// has a method on Client named after it, taking (ctx, *Params).
func TestEveryCommandHasAMethod(t *testing.T) {
	ct := reflect.TypeFor[*client.Client]()
	internal := map[string]bool{"reconnect": true} // the client sends it itself
	for _, m := range protocol.Methods() {
		if !m.FromClient || m.Notification || internal[m.Name] {
			continue
		}
		name := strings.ToUpper(m.Name[:1]) + m.Name[1:]
		name = strings.ReplaceAll(name, "Tcp", "TCP") // Go initialisms
		meth, ok := ct.MethodByName(name)
		if !ok {
			t.Errorf("no Client.%s for %s", name, m.Name)
			continue
		}
		params := reflect.TypeOf(m.NewParams())
		if meth.Type.NumIn() != 3 || meth.Type.In(1) != reflect.TypeFor[context.Context]() || meth.Type.In(2) != params {
			t.Errorf("Client.%s has type %v, want (context.Context, %v)", name, meth.Type, params)
		}
		// The result: nothing but the error for a null result, else the
		// table's result type.
		errType := reflect.TypeFor[error]()
		switch {
		case m.NewResult == nil:
			if meth.Type.NumOut() != 1 || meth.Type.Out(0) != errType {
				t.Errorf("Client.%s returns %v, want only an error (the result is null)", name, meth.Type)
			}
		case meth.Type.NumOut() != 2 || meth.Type.Out(1) != errType:
			t.Errorf("Client.%s returns %v, want (%T, error)", name, meth.Type, m.NewResult())
		case m.Name != "subscribe" && m.Name != "initialize" && meth.Type.Out(0) != reflect.TypeOf(m.NewResult()):
			// subscribe returns a Subscription built from the result.
			t.Errorf("Client.%s returns %v, want %T", name, meth.Type.Out(0), m.NewResult())
		}
	}
}

// TestCommands calls every command against the in-process host. Commands
// the host does not implement must come back as a typed method-not-found
// error, which shows the request made the round trip.
func TestCommands(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	session := protocol.SessionURI(client.NewID())
	chat := protocol.ChatURI(client.NewID())

	if err := c.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if err := c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: session}); err != nil {
		t.Fatalf("createSession: %v", err)
	}
	if err := c.CreateChat(ctx, &protocol.CreateChatParams{Channel: session, Chat: chat}); err != nil {
		t.Fatalf("createChat: %v", err)
	}
	list, err := c.ListSessions(ctx, &protocol.ListSessionsParams{Limit: protocol.Ptr[int64](10)})
	if err != nil || len(list.Items) != 1 || list.Items[0].Resource != session {
		t.Fatalf("listSessions: %+v, %v", list, err)
	}
	all, err := c.Sessions(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("Sessions: %+v, %v", all, err)
	}
	if _, err := c.FetchTurns(ctx, &protocol.FetchTurnsParams{Channel: chat}); err != nil && !errors.Is(err, client.ErrInvalidParams) {
		t.Fatalf("fetchTurns: %v", err) // see TestFetchTurns for the rest
	}
	if res, err := c.Completions(ctx, &protocol.CompletionsParams{Channel: chat, Kind: protocol.CompletionItemKindUserMessage}); err != nil || res.Items == nil {
		t.Fatalf("completions: %+v, %v", res, err)
	}
	// The echo agent lists no protected resource: a token for any
	// resource is refused.
	if _, err := c.Authenticate(ctx, &protocol.AuthenticateParams{Resource: "https://example.invalid", Token: "t"}); !errors.Is(err, client.ErrInvalidParams) {
		t.Fatalf("authenticate: %v, want invalid params", err)
	}
	if err := c.DisposeChat(ctx, &protocol.DisposeChatParams{Channel: chat}); err != nil {
		t.Fatalf("disposeChat: %v", err)
	}
	if err := c.DisposeSession(ctx, &protocol.DisposeSessionParams{Channel: session}); err != nil {
		t.Fatalf("disposeSession: %v", err)
	}

	// The built-in agent takes no configuration: its schema is empty and
	// it has no property to complete.
	cfg, err := c.ResolveSessionConfig(ctx, nil)
	if err != nil || len(cfg.Schema.Properties) != 0 {
		t.Errorf("resolveSessionConfig: %+v, %v; want an empty schema", cfg, err)
	}
	if _, err := c.SessionConfigCompletions(ctx, &protocol.SessionConfigCompletionsParams{Property: "mode"}); !errors.Is(err, client.ErrInvalidParams) {
		t.Errorf("sessionConfigCompletions of no property: %v, want invalid params", err)
	}

	unsupported := map[string]func() error{
		"createTerminal": func() error {
			return c.CreateTerminal(ctx, &protocol.CreateTerminalParams{Channel: protocol.TerminalURI("t")})
		},
		"disposeTerminal": func() error {
			return c.DisposeTerminal(ctx, &protocol.DisposeTerminalParams{Channel: protocol.TerminalURI("t")})
		},
		"invokeChangesetOperation": func() error {
			_, err := c.InvokeChangesetOperation(ctx, &protocol.InvokeChangesetOperationParams{Channel: protocol.ChangesetURI("x")})
			return err
		},
		"createResourceWatch": func() error { _, err := c.CreateResourceWatch(ctx, nil); return err },
		"resourceRead":        func() error { _, err := c.ResourceRead(ctx, nil); return err },
		"resourceWrite":       func() error { _, err := c.ResourceWrite(ctx, nil); return err },
		"resourceList":        func() error { _, err := c.ResourceList(ctx, nil); return err },
		"resourceCopy":        func() error { _, err := c.ResourceCopy(ctx, nil); return err },
		"resourceDelete":      func() error { _, err := c.ResourceDelete(ctx, nil); return err },
		"resourceMove":        func() error { _, err := c.ResourceMove(ctx, nil); return err },
		"resourceResolve":     func() error { _, err := c.ResourceResolve(ctx, nil); return err },
		"resourceMkdir":       func() error { _, err := c.ResourceMkdir(ctx, nil); return err },
		"resourceRequest":     func() error { _, err := c.ResourceRequest(ctx, nil); return err },
	}
	for method, f := range unsupported {
		t.Run(method, func(t *testing.T) {
			err := f()
			var e *client.Error
			if !errors.As(err, &e) || e.Method != method || !errors.Is(err, client.ErrMethodNotFound) {
				t.Fatalf("got %v, want a method-not-found *client.Error for %s", err, method)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	uri := protocol.SessionURI(client.NewID())
	if err := c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: uri}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		err    error
		target error
		code   protocol.AHPErrorCode
	}{
		{"session exists", c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: uri}), client.ErrSessionAlreadyExists, protocol.CodeSessionAlreadyExists},
		{"no provider", c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: protocol.SessionURI("x"), Provider: protocol.Ptr("nope")}), client.ErrProviderNotFound, protocol.CodeProviderNotFound},
		{"no session", c.DisposeSession(ctx, &protocol.DisposeSessionParams{Channel: protocol.SessionURI("gone")}), client.ErrSessionNotFound, protocol.CodeSessionNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.target) {
				t.Fatalf("%v does not match %v", tc.err, tc.target)
			}
			var e *client.Error
			if !errors.As(tc.err, &e) || e.Code != protocol.ErrorCode(tc.code) {
				t.Fatalf("%v: want *client.Error with code %d", tc.err, tc.code)
			}
			var pe *protocol.Error
			if !errors.As(tc.err, &pe) || pe.Code != protocol.ErrorCode(tc.code) {
				t.Fatalf("%v: want a *protocol.Error inside", tc.err)
			}
		})
	}
	if _, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: protocol.ChatURI("nope")}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("subscribe to an unknown chat: %v", err)
	}
	if err := c.CreateSession(ctx, nil); err == nil {
		t.Fatal("createSession without params succeeded")
	}

	// An unsupported version carries details in the error data.
	// Connect fails as a whole when the handshake does.
	c2, err := client.Connect(ctx, th.url, &client.Options{ProtocolVersions: []string{"0.1.0"}})
	if c2 != nil {
		t.Fatal("Connect returned a client after a failed handshake")
	}
	var e *client.Error
	if !errors.As(err, &e) || !errors.Is(err, client.ErrUnsupportedProtocolVersion) {
		t.Fatalf("initialize with an old version: %v", err)
	}
	var data protocol.UnsupportedProtocolVersionErrorData
	if err := e.DecodeData(&data); err != nil || len(data.SupportedVersions) == 0 {
		t.Fatalf("error data %+v, %v", data, err)
	}
	// Commands before Initialize fail locally.
	c3, err := client.Dial(ctx, th.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if _, err := c3.ListSessions(ctx, nil); !errors.Is(err, client.ErrNotInitialized) {
		t.Fatalf("listSessions before initialize: %v", err)
	}
}

func TestInitialize(t *testing.T) {
	th := startHost(t, nil)
	ctx := testCtx(t)
	c, err := client.Connect(ctx, th.url, &client.Options{ClientID: "me", Now: fixedClock, InitialSubscriptions: []string{protocol.RootURI}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := c.InitializeResult()
	if res.ProtocolVersion != protocol.SupportedVersions()[0] || c.ProtocolVersion() != res.ProtocolVersion {
		t.Fatalf("negotiated %q", res.ProtocolVersion)
	}
	if c.ID() != "me" {
		t.Fatalf("ID %q", c.ID())
	}
	// The root channel is mirrored from the initialize snapshot: a
	// subscription attaches to it without a new snapshot.
	root := subscribe(t, c, protocol.RootURI)
	// Typed accessors answer nil for another kind of channel.
	if root.Root() == nil || root.Session() != nil || root.Chat() != nil || root.Terminal() != nil || client.StateOf[*protocol.ChangesetState](root) != nil {
		t.Fatalf("typed accessors of the root channel: %v %v %v", root.Root(), root.Session(), root.Chat())
	}
	if root.Snapshot().FromSeq != res.Snapshots[0].FromSeq {
		t.Fatalf("root snapshot at %d, initialize said %d", root.Snapshot().FromSeq, res.Snapshots[0].FromSeq)
	}
	if _, err := c.Initialize(ctx, nil); !errors.Is(err, client.ErrInvalidRequest) {
		t.Fatalf("second initialize: %v", err)
	}
	if _, err := c.Initialize(ctx, &protocol.InitializeParams{ClientID: "other"}); err == nil {
		t.Fatal("initialize with another client ID succeeded")
	}
}

// TestDispatchAndEcho checks the optimistic effect of an action, its
// confirmation, and that the stream carries the echo.
func TestDispatchAndEcho(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	session, chat := newSession(t, c)

	r, err := session.Dispatch(ctx, &protocol.SessionTitleChangedAction{Title: "Renamed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctx); err != nil {
		t.Fatalf("title change: %v", err)
	}
	if got := session.Session().Title; got != "Renamed" {
		t.Fatalf("title %q", got)
	}
	if p := session.Pending(); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
	// The echo is on the stream, with our origin.
	for {
		ev, err := session.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Envelope != nil && ev.Envelope.Action.Type() == "session/titleChanged" {
			if o := ev.Envelope.Origin; o == nil || o.ClientID != c.ID() || o.ClientSeq != r.ClientSeq {
				t.Fatalf("echo origin %+v", o)
			}
			break
		}
	}

	// A whole turn, streamed.
	if _, err := chat.Dispatch(ctx, turnStarted("t1", "hello there")); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, chat, "turn done", turnDone("t1"))
	if got := replyText(st.Turns[0]); got != "You said: hello there" {
		t.Fatalf("reply %q", got)
	}
	converge(t, "chat", chat, hostState(t, th.url, chat.Channel()))
	converge(t, "session", session, hostState(t, th.url, session.Channel()))

	if _, err := chat.Dispatch(ctx, &protocol.ChatDeltaAction{TurnID: "t", PartID: "p", Content: "x"}); err == nil {
		t.Fatal("a server action was dispatched")
	}
}

// TestRejectedActionsRevert dispatches actions the host refuses and checks
// that their effect disappears and the reason reaches the application.
func TestRejectedActionsRevert(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	session, chat := newSession(t, c)

	// Cancelling when no turn runs is rejected.
	before := chat.State()
	r, err := chat.Dispatch(ctx, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var rej *client.RejectedError
	if err := r.Wait(ctx); !errors.As(err, &rej) || rej.Reason == "" || rej.ClientSeq != r.ClientSeq {
		t.Fatalf("want a rejection, got %v", err)
	}
	if encode(t, chat.State()) != encode(t, before) {
		t.Fatal("the rejected action's effect was not reverted")
	}

	// A second turn while one runs is rejected; the running turn stays.
	if _, err := chat.Dispatch(ctx, turnStarted("slow", "/slow 30")); err != nil {
		t.Fatal(err)
	}
	r, err = chat.Dispatch(ctx, turnStarted("intruder", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctx); !errors.As(err, &rej) {
		t.Fatalf("second turn: %v", err)
	}
	if at := chat.Chat().ActiveTurn; at == nil || at.ID != "slow" {
		t.Fatalf("active turn after the rejection: %+v", at)
	}
	// The rejection is on the stream too.
	for {
		ev, err := chat.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Envelope != nil && ev.Envelope.RejectionReason != nil {
			break
		}
	}
	r, err = chat.Dispatch(ctx, &protocol.ChatTurnCancelledAction{TurnID: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	// The optimistic state shows the cancellation at once; the host's
	// only once it has the action.
	if err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, chat, "cancelled", turnDone("slow"))
	if st.Turns[0].State != protocol.TurnStateCancelled {
		t.Fatalf("turn %s", st.Turns[0].State)
	}
	converge(t, "chat", chat, hostState(t, th.url, chat.Channel()))
	converge(t, "session", session, hostState(t, th.url, session.Channel()))
}

func TestSubscriptionsShareAMirror(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	session, chat := newSession(t, c)
	chat2 := subscribe(t, c, chat.Channel())
	if chat2.State() != chat.State() {
		t.Fatal("two subscriptions to one channel hold different states")
	}
	chat2.Close()
	if _, err := chat2.Next(ctx); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	// The first subscription lives on.
	if _, err := chat.Dispatch(ctx, turnStarted("t", "still here")); err != nil {
		t.Fatal(err)
	}
	waitState(t, chat, "turn", turnDone("t"))
	_ = session
}

// TestStreamLag checks that an unread stream drops events, says so once,
// and leaves the state alone.
func TestStreamLag(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, &client.Options{StreamBuffer: 4})
	ctx := testCtx(t)
	_, chat := newSession(t, c)
	if _, err := chat.Dispatch(ctx, turnStarted("t", "one two three four five six seven eight nine ten")); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, chat, "turn", turnDone("t"))
	if replyText(st.Turns[0]) != "You said: one two three four five six seven eight nine ten" {
		t.Fatalf("reply %q", replyText(st.Turns[0]))
	}
	if _, err := chat.Next(ctx); !errors.Is(err, client.ErrLagged) {
		t.Fatalf("first Next after overflow: %v", err)
	}
	if _, err := chat.Next(ctx); err != nil {
		t.Fatalf("Next after the lag: %v", err)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	_, chat := newSession(t, c)
	calls := make(chan struct{}, 100)
	chat.Watch(func(protocol.SnapshotState) { calls <- struct{}{} })
	<-calls
	c.Close()
	if _, err := chat.Next(ctx); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	if err := c.Ping(ctx, nil); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Ping after Close: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed")
	}
	if c.Err() != nil {
		t.Fatalf("Err after Close: %v", c.Err())
	}
}

// runTurns runs n turns one after the other.
func runTurns(t *testing.T, chat *client.Subscription, n int) {
	t.Helper()
	for i := range n {
		id := "turn-" + string(rune('a'+i))
		if _, err := chat.Dispatch(testCtx(t), turnStarted(id, "turn "+id)); err != nil {
			t.Fatal(err)
		}
		waitState(t, chat, id, turnDone(id))
	}
}

// TestFetchTurns pages older turns into a mirror that started from a
// shortened view.
func TestFetchTurns(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	_, chat := newSession(t, c)
	runTurns(t, chat, 3)

	c2 := dial(t, th.url, nil)
	tail, err := c2.Subscribe(ctx, &protocol.SubscribeParams{Channel: chat.Channel(), View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](1)}})
	if err != nil {
		t.Fatal(err)
	}
	st := tail.Chat()
	if len(st.Turns) != 1 || st.TurnsNextCursor == nil {
		t.Fatalf("tail view: %d turns, cursor %v", len(st.Turns), st.TurnsNextCursor)
	}
	if _, err := c2.FetchTurns(ctx, &protocol.FetchTurnsParams{Channel: chat.Channel(), Cursor: st.TurnsNextCursor}); err != nil {
		t.Fatal(err)
	}
	waitState(t, tail, "older turns", func(s *protocol.ChatState) bool { return len(s.Turns) == 3 && s.TurnsNextCursor == nil })
	converge(t, "chat", tail, chat.State())
}

// TestFetchTurnsLoadsBeforeReplying checks, on the raw wire, the order the
// schema asks for: the host dispatches chat/turnsLoaded before it answers
// fetchTurns, so a client's state holds the turns when the call returns.
func TestFetchTurnsLoadsBeforeReplying(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	_, chat := newSession(t, c)
	runTurns(t, chat, 2)

	raw, _, err := jsonrpc.DialWebSocket(ctx, th.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	read := func() protocol.JSONRPCMessage {
		data, err := raw.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m, err := protocol.DecodeMessage(data)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	send := func(id int64, method string, params any) {
		p, _ := protocol.Marshal(params)
		data, _ := protocol.Request{ID: protocol.Int64ID(id), Method: method, Params: p}.MarshalJSON()
		if err := raw.Write(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	send(1, "initialize", &protocol.InitializeParams{ClientID: "raw", ProtocolVersions: protocol.SupportedVersions()})
	read()
	send(2, "subscribe", &protocol.SubscribeParams{Channel: chat.Channel(), View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](1)}})
	var sub protocol.SubscribeResult
	if err := protocol.Unmarshal(read().Response.Result, &sub); err != nil {
		t.Fatal(err)
	}
	send(3, "fetchTurns", &protocol.FetchTurnsParams{Channel: chat.Channel(), Cursor: sub.Snapshot.State.(*protocol.ChatState).TurnsNextCursor})
	if m := read(); m.Response != nil {
		t.Fatal("the answer to fetchTurns came before chat/turnsLoaded")
	}
}

// TestFetchTurnsWithoutCursor asks for the next older page without a
// cursor, which the schema allows.
func TestFetchTurnsWithoutCursor(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	_, chat := newSession(t, c)
	if _, err := c.FetchTurns(testCtx(t), &protocol.FetchTurnsParams{Channel: chat.Channel()}); err != nil {
		t.Fatal(err)
	}
}

// TestDisposalEndsSubscriptions: a subscription ends (Done, with
// ErrChannelGone) when its channel goes away while the client is connected:
// a chat removed from its session (session/chatRemoved, chat-channel.md
// Disposal), or a session disposed (root/sessionRemoved).
func TestDisposalEndsSubscriptions(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	session, chat := newSession(t, c)
	second := protocol.ChatURI(client.NewID())
	if err := c.CreateChat(ctx, &protocol.CreateChatParams{Channel: session.Channel(), Chat: second}); err != nil {
		t.Fatal(err)
	}
	other := dial(t, th.url, nil)
	onlyChat := subscribe(t, other, second)
	if err := c.DisposeChat(ctx, &protocol.DisposeChatParams{Channel: second}); err != nil {
		t.Fatal(err)
	}
	ended := func(s *client.Subscription) {
		t.Helper()
		select {
		case <-s.Done():
		case <-ctx.Done():
			t.Fatalf("%s did not end", s.Channel())
		}
		if !errors.Is(s.Err(), client.ErrChannelGone) {
			t.Fatalf("%s ended with %v", s.Channel(), s.Err())
		}
	}
	ended(onlyChat)
	if session.Err() != nil || chat.Err() != nil {
		t.Fatalf("disposing one chat ended %v %v", session.Err(), chat.Err())
	}
	watcher := subscribe(t, other, chat.Channel())
	if err := other.DisposeSession(ctx, &protocol.DisposeSessionParams{Channel: session.Channel()}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*client.Subscription{session, chat, watcher} {
		ended(s)
	}
}
