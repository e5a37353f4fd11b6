package host_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// fixedClock makes host and test reducers stamp the same modifiedAt.
func fixedClock() time.Time { return time.UnixMilli(1_700_000_000_000) }

func TestNegotiation(t *testing.T) {
	th := startHost(t, nil)
	cases := []struct {
		offered []string
		want    string
		code    protocol.ErrorCode
	}{
		// spec-1.1 versioning.md, "Negotiation": the highest offered
		// version in the caret ranges of 1.0.0 and 0.9.0, whatever the
		// order; exactly 0.10.0 (VS Code); and 0.5.1 to 0.8.0 as before.
		{[]string{"1.0.0", "0.10.0", "0.9.0"}, "1.0.0", 0},
		{[]string{"0.9.0"}, "0.9.0", 0},
		{[]string{"1.1.0", "1.0.0"}, "1.1.0", 0},
		{[]string{"0.8.0"}, "0.8.0", 0},
		{[]string{"0.5.1", "0.7.0"}, "0.7.0", 0},
		{[]string{"9.0.0", "0.6.0"}, "0.6.0", 0},
		// "Malformed versions produce an explicit error", beside a valid one too.
		{[]string{"1.0.0", "nonsense"}, "", protocol.CodeInvalidParams},
		// No acceptable version is -32005 with data.supportedVersions, and
		// the connection closes.
		{[]string{"2.0.0"}, "", protocol.CodeUnsupportedProtocolVersion},
		{[]string{"0.4.0", "2.1.0"}, "", protocol.CodeUnsupportedProtocolVersion},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.offered, ","), func(t *testing.T) {
			c := th.dial(t, "neg")
			var res protocol.InitializeResult
			err := c.Call("initialize", &protocol.InitializeParams{ProtocolVersions: tc.offered, ClientID: "neg"}, &res)
			if tc.code == protocol.CodeInvalidParams {
				if rpcCode(err) != tc.code {
					t.Fatalf("got %v, want code %d", err, tc.code)
				}
				return
			}
			if tc.code != 0 {
				if rpcCode(err) != tc.code {
					t.Fatalf("got %v, want code %d", err, tc.code)
				}
				var e *protocol.Error
				var data protocol.UnsupportedProtocolVersionErrorData
				if !errors.As(err, &e) || protocol.Unmarshal(e.Data, &data) != nil ||
					!slices.Equal(data.SupportedVersions, protocol.AcceptedVersions()) {
					t.Fatalf("error data %s, want supportedVersions %v", e.Data, protocol.AcceptedVersions())
				}
				select {
				case <-c.RPC.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("connection not closed after an unsupported version")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.ProtocolVersion != tc.want {
				t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, tc.want)
			}
		})
	}
}

func TestRequestsBeforeInitialize(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "early")
	// transport.md: ping works whether or not the client has initialized.
	if err := c.Call("ping", nil, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	err := c.Call("listSessions", &protocol.ListSessionsParams{}, nil)
	if rpcCode(err) != protocol.CodeInvalidRequest {
		t.Fatalf("listSessions before initialize: %v", err)
	}
	c.initialize()
	if err := c.Call("listSessions", &protocol.ListSessionsParams{}, nil); err != nil {
		t.Fatal(err)
	}
	if rpcCode(c.Call("noSuchMethod", nil, nil)) != protocol.CodeMethodNotFound {
		t.Fatal("unknown method not reported as -32601")
	}
	if rpcCode(c.Call("subscribe", map[string]any{"channel": 42}, nil)) != protocol.CodeInvalidParams {
		t.Fatal("bad params not reported as -32602")
	}
}

func TestSessionLifecycleAndCatalog(t *testing.T) {
	th := startHost(t, nil)
	a := th.dial(t, "a")
	res := a.initialize(protocol.RootURI)
	if len(res.Snapshots) != 1 {
		t.Fatalf("want a root snapshot, got %d", len(res.Snapshots))
	}
	root := res.Snapshots[0].State.(*protocol.RootState)
	if len(root.Agents) != 1 || root.Agents[0].Provider != "echo" {
		t.Fatalf("agents %+v", root.Agents)
	}
	uri, chat := a.newSession("s1")
	a.WaitNotification("root/sessionAdded")
	if chat == "" {
		t.Fatal("no default chat")
	}
	err := a.Call("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
	if rpcCode(err) != protocol.CodeSessionAlreadyExists {
		t.Fatalf("second createSession: %v", err)
	}
	err = a.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("s2"), Provider: protocol.Ptr("nope")}, nil)
	if rpcCode(err) != protocol.CodeProviderNotFound {
		t.Fatalf("unknown provider: %v", err)
	}
	a.Must("disposeSession", &protocol.DisposeSessionParams{Channel: uri}, nil)
	a.WaitNotification("root/sessionRemoved")
	var list protocol.ListSessionsResult
	a.Must("listSessions", &protocol.ListSessionsParams{}, &list)
	if len(list.Items) != 0 {
		t.Fatalf("disposed session still listed: %+v", list.Items)
	}
}

// TestTurnSeenByEverySubscriber runs a full turn with two subscribers and
// checks they receive the same envelopes and reduce to the host's state.
func TestTurnSeenByEverySubscriber(t *testing.T) {
	th := startHost(t, &host.Options{Now: fixedClock})
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	_, chat := a.newSession("turns")
	snapA, snapB := a.Subscribe(chat), b.Subscribe(chat)
	a.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(fixedClock()), Message: userMessage("hello there world")})
	envsA := only(chat, a.WaitFor("turn end", turnEnded))
	envsB := only(chat, b.WaitFor("turn end", turnEnded))
	if diff := cmp.Diff(encodeAll(t, envsA), encodeAll(t, envsB)); diff != "" {
		t.Fatalf("subscribers saw different envelopes:\n%s", diff)
	}
	if o := envsA[0].Origin; o == nil || o.ClientID != "a" || o.ClientSeq != 1 {
		t.Fatalf("echo origin %+v", o)
	}
	final := b.Subscribe(chat)
	for name, snap := range map[string]*protocol.Snapshot{"a": snapA, "b": snapB} {
		got := encode(t, mirror(t, snap, envsA))
		if diff := cmp.Diff(encode(t, final.State), got); diff != "" {
			t.Errorf("client %s mirror differs from host state:\n%s", name, diff)
		}
	}
	cs := final.State.(*protocol.ChatState)
	if len(cs.Turns) != 1 || cs.Turns[0].State != protocol.TurnStateComplete {
		t.Fatalf("turns %+v", cs.Turns)
	}
	if text := cs.Turns[0].ResponseParts[0].(*protocol.MarkdownResponsePart).Content.String(); text != "You said: hello there world" {
		t.Fatalf("reply %q", text)
	}
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := protocol.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func encodeAll(t *testing.T, envs []protocol.ActionEnvelope) []string {
	out := make([]string, len(envs))
	for i := range envs {
		out[i] = encode(t, envs[i])
	}
	return out
}

func TestRejectionsAndIgnoredChannels(t *testing.T) {
	th := startHost(t, nil)
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	uri, chat := a.newSession("rej")
	b.Subscribe(chat)
	a.Subscribe(chat)

	// chat-channel.md: turnCancelled with no active turn is rejected,
	// echoed to the sender only.
	a.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	envs := a.WaitFor("rejection", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.RejectionReason != nil {
				return true
			}
		}
		return false
	})
	rej := envs[len(envs)-1]
	if rej.Origin == nil || rej.Origin.ClientSeq != 1 || rej.Action.Type() != "chat/turnCancelled" {
		t.Fatalf("rejection echo %+v", rej)
	}
	// session-channel.md: a default chat outside the catalog is rejected.
	a.Dispatch(uri, &protocol.SessionDefaultChatChangedAction{DefaultChat: protocol.Ptr("ahp-chat:/nope")})
	// An action on an unknown channel is ignored with no echo; a server
	// action from a client is rejected.
	a.Dispatch("ahp-chat:/unknown", &protocol.ChatTurnCancelledAction{TurnID: "x"})
	a.Dispatch(chat, &protocol.ChatDeltaAction{TurnID: "t", PartID: "p", Content: "x"})
	envs = a.WaitFor("three rejections", func(envs []protocol.ActionEnvelope) bool {
		n := 0
		for _, e := range envs {
			if e.RejectionReason != nil {
				n++
			}
		}
		return n == 3
	})
	for _, e := range envs {
		if e.Channel == "ahp-chat:/unknown" {
			t.Fatalf("echo for an unknown channel: %+v", e)
		}
	}
	// A tool call confirmation: the first answer wins.
	a.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("/tool ping")})
	a.WaitFor("tool ready", hasType("chat/toolCallReady"))
	toolID := ""
	for _, e := range a.WaitFor("tool", hasType("chat/toolCallReady")) {
		if r, ok := e.Action.(*protocol.ChatToolCallReadyAction); ok {
			toolID = r.ToolCallID
		}
	}
	b.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: "t1", ToolCallID: toolID, Approved: true})
	a.WaitFor("b's confirmation", hasType("chat/toolCallConfirmed"))
	a.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: "t1", ToolCallID: toolID, Approved: false})
	a.WaitFor("turn end", turnEnded)
	envs = a.WaitFor("second confirmation rejected", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if c, ok := e.Action.(*protocol.ChatToolCallConfirmedAction); ok && !c.Approved && e.RejectionReason != nil {
				return true
			}
		}
		return false
	})
	for _, e := range b.WaitFor("turn end", turnEnded) {
		if e.RejectionReason != nil {
			t.Fatalf("b received a's rejection: %+v", e)
		}
	}
	_ = envs
}

func TestListSessionsPaging(t *testing.T) {
	clock := newManualClock()
	th := startHost(t, &host.Options{Now: clock.Now})
	c := th.dial(t, "lister")
	c.initialize()
	const n = 7
	for i := range n {
		c.Must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI(fmt.Sprintf("p%d", i))}, nil)
		clock.Advance(2 * time.Millisecond) // distinct modification times
	}
	var all []protocol.SessionSummary
	var cursor *string
	for pages := 0; ; pages++ {
		var res protocol.ListSessionsResult
		c.Must("listSessions", &protocol.ListSessionsParams{Limit: protocol.Ptr[int64](3), Cursor: cursor}, &res)
		if len(res.Items) > 3 {
			t.Fatalf("page of %d items with limit 3", len(res.Items))
		}
		all = append(all, res.Items...)
		if res.NextCursor == nil {
			break
		}
		cursor = res.NextCursor
		if pages > n {
			t.Fatal("paging does not end")
		}
	}
	if len(all) != n {
		t.Fatalf("listed %d sessions, want %d", len(all), n)
	}
	// root-channel.md: most recently modified first.
	for i := 1; i < len(all); i++ {
		if all[i-1].ModifiedAt < all[i].ModifiedAt {
			t.Fatalf("not newest first: %s before %s", all[i-1].ModifiedAt, all[i].ModifiedAt)
		}
	}
	if rpcCode(c.Call("listSessions", &protocol.ListSessionsParams{Cursor: protocol.Ptr("garbage!")}, nil)) != protocol.CodeInvalidParams {
		t.Fatal("bad cursor not rejected with -32602")
	}
}

func TestReconnect(t *testing.T) {
	th := startHost(t, &host.Options{ReplayEntries: 64})
	a := th.dial(t, "rc")
	a.initialize()
	uri, chat := a.newSession("rc")
	snap := a.Subscribe(chat)
	last := snap.FromSeq
	a.RPC.Close()

	// Another client runs a turn while a is away.
	b := th.dial(t, "other")
	b.initialize()
	b.Subscribe(chat)
	b.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("one two")})
	b.WaitFor("turn end", turnEnded)

	// lifecycle.md: replay of the missed envelopes, and missing channels.
	a2 := th.dial(t, "rc")
	var raw jsonValue
	a2.Must("reconnect", &protocol.ReconnectParams{ClientID: "rc", LastSeenServerSeq: last, Subscriptions: []string{uri, chat, "ahp-session:/gone"}}, &raw)
	res, err := protocol.UnmarshalReconnectResult(raw)
	if err != nil {
		t.Fatal(err)
	}
	replay, ok := res.(*protocol.ReconnectReplayResult)
	if !ok {
		t.Fatalf("want a replay, got %T", res)
	}
	if len(replay.Missing) != 1 || replay.Missing[0] != "ahp-session:/gone" {
		t.Fatalf("missing %v", replay.Missing)
	}
	if !turnEnded(replay.Actions) {
		t.Fatalf("replay lacks the turn: %d actions", len(replay.Actions))
	}
	for _, e := range replay.Actions {
		if e.ServerSeq <= last {
			t.Fatalf("replayed seq %d <= last seen %d", e.ServerSeq, last)
		}
	}

	// Past the replay log, fresh snapshots.
	for i := range 40 {
		b.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: fmt.Sprintf("x%d", i), StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("more")})
		b.WaitFor("turn end", func(envs []protocol.ActionEnvelope) bool {
			return countType("chat/turnComplete", envs) == i+2
		})
	}
	a3 := th.dial(t, "rc")
	a3.Must("reconnect", &protocol.ReconnectParams{ClientID: "rc", LastSeenServerSeq: last, Subscriptions: []string{chat}}, &raw)
	res, err = protocol.UnmarshalReconnectResult(raw)
	if err != nil {
		t.Fatal(err)
	}
	snaps, ok := res.(*protocol.ReconnectSnapshotResult)
	if !ok || len(snaps.Snapshots) != 1 {
		t.Fatalf("want one snapshot, got %T %+v", res, res)
	}
	if n := len(snaps.Snapshots[0].State.(*protocol.ChatState).Turns); n != 41 {
		t.Fatalf("snapshot has %d turns, want 41", n)
	}
}

// jsonValue captures a raw result.
type jsonValue []byte

func (v *jsonValue) UnmarshalJSON(b []byte) error { *v = append((*v)[:0], b...); return nil }

// blockingTransport never completes a write, like a client that stopped
// reading.
type blockingTransport struct {
	in      chan []byte
	closed  chan struct{}
	written chan struct{}
}

func (b *blockingTransport) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-b.in:
		return m, nil
	case <-b.closed:
		return nil, jsonrpc.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *blockingTransport) Write(ctx context.Context, data []byte) error {
	select {
	case b.written <- struct{}{}:
	default:
	}
	select {
	case <-b.closed:
		return jsonrpc.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blockingTransport) Close() error {
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	return nil
}

// TestSlowConsumerDisconnected checks that a subscriber that stops reading
// is dropped once its queue fills, while another keeps receiving.
func TestSlowConsumerDisconnected(t *testing.T) {
	th := startHost(t, &host.Options{QueueSize: 32})
	fast := th.dial(t, "fast")
	fast.initialize()
	_, chat := fast.newSession("slow")
	fast.Subscribe(chat)

	slow := &blockingTransport{in: make(chan []byte, 4), closed: make(chan struct{}), written: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- th.h.ServeTransport(context.Background(), slow) }()
	slow.in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"slow","initialSubscriptions":["` + chat + `"]}}`)
	<-slow.written

	for i := range 5 {
		fast.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: fmt.Sprintf("t%d", i), StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("/slow 3")})
		fast.WaitFor("turn end", func(envs []protocol.ActionEnvelope) bool {
			return countType("chat/turnComplete", envs) == i+1
		})
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "too slow") {
			t.Fatalf("slow client ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("slow client was not disconnected")
	}
}

// TestHostileFrames sends an oversized frame and garbage to one connection
// and checks that another is unaffected.
func TestHostileFrames(t *testing.T) {
	th := startHost(t, &host.Options{MaxMessageBytes: 1 << 20})
	good := th.dial(t, "good")
	good.initialize()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, th.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for _, frame := range []string{"{", "[]", `{"jsonrpc":"1.0"}`, "\x00\xff", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		_, resp, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("after %q: %v", frame, err)
		}
		if !strings.Contains(string(resp), `"error"`) {
			t.Fatalf("after %q got %s", frame, resp)
		}
	}
	big := make([]byte, 5<<20)
	for i := range big {
		big[i] = ' '
	}
	ws.Write(ctx, websocket.MessageText, big)
	if _, _, err := ws.Read(ctx); err == nil {
		t.Fatal("connection survived a 5 MiB frame over the 1 MiB limit")
	}
	if err := good.Call("ping", nil, nil); err != nil {
		t.Fatalf("other connection harmed: %v", err)
	}
}
