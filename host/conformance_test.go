package host_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// recorder is an agent that records the events it is handed and completes
// every turn at once.
type recorder struct {
	caps   protocol.AgentCapabilities
	mu     sync.Mutex
	events []agent.Event
	opens  []agent.OpenRequest
	wake   chan struct{}
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{}, 1)} }

func (r *recorder) Info() protocol.AgentInfo {
	caps := r.caps
	return protocol.AgentInfo{Provider: "rec", DisplayName: "Recorder", Models: []protocol.SessionModelInfo{}, Capabilities: &caps}
}
func (r *recorder) Close() error { return nil }
func (r *recorder) Open(_ context.Context, req agent.OpenRequest, h agent.Host) (agent.Session, error) {
	r.mu.Lock()
	r.opens = append(r.opens, req)
	r.mu.Unlock()
	return &recSession{r: r, h: h}, nil
}

type recSession struct {
	r *recorder
	h agent.Host
}

func (s *recSession) Handle(ev agent.Event) {
	s.r.mu.Lock()
	s.r.events = append(s.r.events, ev)
	s.r.mu.Unlock()
	select {
	case s.r.wake <- struct{}{}:
	default:
	}
	switch a := ev.Action.(type) {
	case *protocol.ChatTurnStartedAction:
		if owner, ok := strings.CutPrefix(a.Message.Text, "client-tool:"); ok {
			// A tool the named client runs; the turn ends once the tool
			// completes.
			go func() {
				s.h.Dispatch(ev.Channel, &protocol.ChatToolCallStartAction{TurnID: a.TurnID, ToolCallID: "tc", ToolName: "lint", DisplayName: "Lint",
					Contributor: &protocol.ToolCallClientContributor{ClientID: owner}})
				s.h.Dispatch(ev.Channel, &protocol.ChatToolCallReadyAction{TurnID: a.TurnID, ToolCallID: "tc", InvocationMessage: protocol.PlainText("linting"),
					Confirmed: protocol.Ptr(protocol.ToolCallConfirmationReasonNotNeeded)})
			}()
			return
		}
		go s.h.Dispatch(ev.Channel, &protocol.ChatTurnCompleteAction{TurnID: a.TurnID})
	case *protocol.ChatToolCallCompleteAction:
		go s.h.Dispatch(ev.Channel, &protocol.ChatTurnCompleteAction{TurnID: a.TurnID})
	}
}
func (s *recSession) Close() error { return nil }

// turnStarts waits for n turn starts to reach the agent and returns them.
func (r *recorder) turnStarts(t *testing.T, n int) []agent.Event {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		var out []agent.Event
		r.mu.Lock()
		for _, ev := range r.events {
			if _, ok := ev.Action.(*protocol.ChatTurnStartedAction); ok {
				out = append(out, ev)
			}
		}
		r.mu.Unlock()
		if len(out) >= n {
			return out
		}
		select {
		case <-r.wake:
		case <-deadline:
			t.Fatalf("%d turn starts reached the agent, want %d", len(out), n)
		}
	}
}

func startRecorded(t *testing.T) (*testHost, *recorder) {
	rec := newRecorder()
	return startHost(t, &host.Options{Agents: []agent.Backend{rec}}), rec
}

// risingSeqs fails the test unless every envelope a connection received
// carries a serverSeq above all earlier ones and above from (the serverSeq
// of the first snapshot the connection was given).
func risingSeqs(t *testing.T, from int64, envs []protocol.ActionEnvelope) {
	t.Helper()
	last := from
	for i, e := range envs {
		if e.ServerSeq <= last {
			t.Fatalf("envelope %d (%s, rejected %v) has serverSeq %d after %d", i, e.Action.Type(), e.RejectionReason != nil, e.ServerSeq, last)
		}
		last = e.ServerSeq
	}
}

func rejected(clientSeq int64) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		return rejectionOf(clientSeq, envs) != nil
	}
}

func accepted(clientSeq int64) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientSeq == clientSeq && e.RejectionReason == nil {
				return true
			}
		}
		return false
	}
}

func rejectionOf(clientSeq int64, envs []protocol.ActionEnvelope) *protocol.ActionEnvelope {
	for i, e := range envs {
		if e.Origin != nil && e.Origin.ClientSeq == clientSeq && e.RejectionReason != nil {
			return &envs[i]
		}
	}
	return nil
}

// runTurns runs echo turns first to first+n-1 on a chat, one after the
// other.
func runTurns(c *client, chat string, first, n int) {
	c.T.Helper()
	for i := first; i < first+n; i++ {
		before := countType("chat/turnComplete", only(chat, c.Envelopes()))
		startTurn(c, chat, fmt.Sprintf("turn-%02d", i), fmt.Sprintf("message %d", i))
		c.WaitFor("turn end", func(envs []protocol.ActionEnvelope) bool {
			return countType("chat/turnComplete", only(chat, envs)) > before
		})
	}
}

// TestServerSeqRisesOnEveryEnvelope: Snapshot.fromSeq says subsequent
// actions have serverSeq > fromSeq, so a client may drop what it has seen.
// Rejection echoes and fetchTurns pages, which only one connection sees,
// must still carry a serverSeq above everything that connection received.
func TestServerSeqRisesOnEveryEnvelope(t *testing.T) {
	th := startHost(t, nil)
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	_, chat := a.newSession("seq")
	a.Subscribe(chat)
	runTurns(a, chat, 0, 3)

	var sub protocol.SubscribeResult
	b.Must("subscribe", &protocol.SubscribeParams{Channel: chat, View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](1)}}, &sub)
	from := sub.Snapshot.FromSeq
	// Two rejections in a row: each one is above the snapshot and above
	// the one before.
	b.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	seq := b.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	b.WaitFor("rejections", rejected(seq))
	// A page of older turns, asked for with the snapshot's cursor.
	b.Must("fetchTurns", &protocol.FetchTurnsParams{Channel: chat, Cursor: sub.Snapshot.State.(*protocol.ChatState).TurnsNextCursor}, nil)
	b.WaitFor("page", hasType("chat/turnsLoaded"))
	// Then a rejection and a live action again.
	b.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: "none"})
	runTurns(b, chat, 3, 1)
	envs := b.Envelopes()
	risingSeqs(t, from, envs)
	if n := len(envs); n < 5 {
		t.Fatalf("only %d envelopes", n)
	}
	// The subscriber's mirror, dropping nothing, holds every turn.
	st := mirror(t, sub.Snapshot, envs).(*protocol.ChatState)
	if len(st.Turns) != 4 || st.Turns[0].ID != "turn-00" {
		t.Fatalf("mirror holds %d turns", len(st.Turns))
	}
	// The other client saw none of b's private envelopes, and its own
	// sequence still rises.
	for _, e := range a.Envelopes() {
		if e.RejectionReason != nil || e.Action.Type() == "chat/turnsLoaded" {
			t.Fatalf("a received b's private envelope %s", e.Action.Type())
		}
	}
	risingSeqs(t, 0, a.Envelopes())
}

// TestFetchTurnsWithoutCursorCountsFromTheClient: after a subscribe with
// view.turns, fetchTurns without a cursor loads the host's "next older
// page for the chat" (FetchTurnsParams.cursor): older than what this client
// holds, not than the host's in-memory window.
func TestFetchTurnsWithoutCursorCountsFromTheClient(t *testing.T) {
	th := startHost(t, nil)
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	_, chat := a.newSession("window")
	a.Subscribe(chat)
	runTurns(a, chat, 0, 17)

	var sub protocol.SubscribeResult
	b.Must("subscribe", &protocol.SubscribeParams{Channel: chat, View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](3)}}, &sub)
	cs := sub.Snapshot.State.(*protocol.ChatState)
	if len(cs.Turns) != 3 || cs.TurnsNextCursor == nil {
		t.Fatalf("view of 3: %d turns, cursor %v", len(cs.Turns), cs.TurnsNextCursor)
	}
	b.Must("fetchTurns", &protocol.FetchTurnsParams{Channel: chat}, nil)
	envs := b.WaitFor("page", hasType("chat/turnsLoaded"))
	st := mirror(t, sub.Snapshot, envs).(*protocol.ChatState)
	if len(st.Turns) != 17 || st.Turns[0].ID != "turn-00" || st.Turns[16].ID != "turn-16" || st.TurnsNextCursor != nil {
		t.Fatalf("after one page the client holds %d turns (cursor %v)", len(st.Turns), st.TurnsNextCursor)
	}
	// Once it holds everything, another page is empty and has no cursor.
	b.Must("fetchTurns", &protocol.FetchTurnsParams{Channel: chat}, nil)
	envs = b.WaitFor("second page", func(envs []protocol.ActionEnvelope) bool { return countType("chat/turnsLoaded", envs) == 2 })
	last := envs[len(envs)-1].Action.(*protocol.ChatTurnsLoadedAction)
	if len(last.Turns) != 0 || last.TurnsNextCursor != nil {
		t.Fatalf("second page: %d turns, cursor %v", len(last.Turns), last.TurnsNextCursor)
	}
	risingSeqs(t, sub.Snapshot.FromSeq, envs)
}

// TestClientsSendOnlyUserMessages: ChatTurnStartedAction and
// ChatPendingMessageSetAction say "A client is only allowed to send
// MessageKind.User messages".
func TestClientsSendOnlyUserMessages(t *testing.T) {
	th, rec := startRecorded(t)
	c := th.dial(t, "c")
	c.initialize()
	_, chat := c.newSession("origin")
	c.Subscribe(chat)
	for _, kind := range []protocol.MessageKind{protocol.MessageKindAgent, protocol.MessageKindTool, "nonsense"} {
		msg := protocol.Message{Text: "hi", Origin: protocol.MessageOrigin{Kind: kind}}
		seq := c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t-" + string(kind), StartedAt: protocol.FormatTime(time.Now()), Message: msg})
		if r := rejectionOf(seq, c.WaitFor("rejection", rejected(seq))); !strings.Contains(*r.RejectionReason, "user") {
			t.Fatalf("turnStarted as %s: %s", kind, *r.RejectionReason)
		}
		for _, pk := range []protocol.PendingMessageKind{protocol.PendingMessageKindSteering, protocol.PendingMessageKindQueued} {
			seq := c.Dispatch(chat, &protocol.ChatPendingMessageSetAction{Kind: pk, ID: "p", Message: msg})
			c.WaitFor("rejection", rejected(seq))
		}
		seq = c.Dispatch(chat, &protocol.ChatDraftChangedAction{Draft: &msg})
		c.WaitFor("draft rejection", rejected(seq))
	}
	agentMsg := protocol.Message{Text: "hi", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindAgent}}
	err := c.Call("createChat", &protocol.CreateChatParams{Channel: protocol.SessionURI("origin"), Chat: protocol.ChatURI("agent"), InitialMessage: &agentMsg}, nil)
	if rpcCode(err) != protocol.CodeInvalidParams {
		t.Fatalf("createChat with an agent message: %v", err)
	}
	seq := c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t-user", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("hi")})
	c.WaitFor("accepted", accepted(seq))
	if evs := rec.turnStarts(t, 1); len(evs) != 1 || evs[0].Action.(*protocol.ChatTurnStartedAction).TurnID != "t-user" {
		t.Fatalf("the agent got %d turns", len(evs))
	}
}

// TestSteeringSetWhileIdleIsConsumed: "Steering messages added while idle
// are silently stored and consumed when a turn becomes active"
// (chat-channel.md, Steering Messages). Consuming is a
// chat/pendingMessageRemoved with kind steering, and the message reaches
// the agent with the turn.
func TestSteeringSetWhileIdleIsConsumed(t *testing.T) {
	th, rec := startRecorded(t)
	c := th.dial(t, "c")
	c.initialize()
	_, chat := c.newSession("steer")
	snap := c.Subscribe(chat)
	steer := protocol.Message{Text: "keep it short", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
	seq := c.Dispatch(chat, &protocol.ChatPendingMessageSetAction{Kind: protocol.PendingMessageKindSteering, ID: "s1", Message: steer})
	c.WaitFor("steering set", accepted(seq))
	startTurn(c, chat, "t1", "explain")
	c.WaitFor("steering consumed", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if r, ok := e.Action.(*protocol.ChatPendingMessageRemovedAction); ok && r.Kind == protocol.PendingMessageKindSteering && r.ID == "s1" && e.Origin == nil {
				return true
			}
		}
		return false
	})
	ev := rec.turnStarts(t, 1)[0]
	if ev.Steering == nil || ev.Steering.Text != "keep it short" {
		t.Fatalf("the agent got steering %+v", ev.Steering)
	}
	envs := c.WaitFor("turn end", endedOn(chat))
	st := mirror(t, snap, envs).(*protocol.ChatState)
	if st.SteeringMessage != nil {
		t.Fatalf("steering message still in state: %+v", st.SteeringMessage)
	}
	// The next turn has no steering message to take.
	startTurn(c, chat, "t2", "again")
	if ev := rec.turnStarts(t, 2)[1]; ev.Steering != nil {
		t.Fatalf("second turn got steering %+v", ev.Steering)
	}
}

// TestDisposalReachesSubscribers: "When a chat is removed (whether
// explicitly or because its session was torn down), the server MUST update
// the session's chats catalog via session/chatRemoved so subscribers can
// release their per-chat subscriptions" (chat-channel.md, Disposal). A
// client following only a chat hears it too, and the session's
// subscribers hear root/sessionRemoved even when they do not follow the
// root channel.
func TestDisposalReachesSubscribers(t *testing.T) {
	th := startHost(t, nil)
	owner, chatOnly, rootOnly := th.dial(t, "owner"), th.dial(t, "chat-only"), th.dial(t, "root-only")
	owner.initialize()
	chatOnly.initialize()
	rootOnly.initialize(protocol.RootURI)
	uri, chat := owner.newSession("dispose")
	second := protocol.ChatURI("second")
	owner.Must("createChat", &protocol.CreateChatParams{Channel: uri, Chat: second}, nil)
	third := protocol.ChatURI("third")
	owner.Must("createChat", &protocol.CreateChatParams{Channel: uri, Chat: third}, nil)
	owner.Subscribe(chat)
	chatOnly.Subscribe(chat)
	chatOnly.Subscribe(third)

	removed := func(chat string) func([]protocol.ActionEnvelope) bool {
		return func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				if r, ok := e.Action.(*protocol.SessionChatRemovedAction); ok && r.Chat == chat && e.Channel == uri {
					return true
				}
			}
			return false
		}
	}
	// disposeChat: the chat's own subscriber hears the removal.
	owner.Must("disposeChat", &protocol.DisposeChatParams{Channel: third}, nil)
	chatOnly.WaitFor("third chat removed", removed(third))
	owner.WaitFor("third chat removed", removed(third))

	owner.Must("disposeSession", &protocol.DisposeSessionParams{Channel: uri}, nil)
	for _, c := range []string{chat, second} {
		owner.WaitFor("chat removed with its session", removed(c))
	}
	chatOnly.WaitFor("chat removed with its session", removed(chat))
	owner.WaitNotification("root/sessionRemoved")
	rootOnly.WaitNotification("root/sessionRemoved")
	risingSeqs(t, 0, owner.Envelopes())
	risingSeqs(t, 0, chatOnly.Envelopes())

	// The subscriptions are gone: nothing more arrives and the channels
	// cannot be subscribed again.
	if err := owner.Call("subscribe", &protocol.SubscribeParams{Channel: chat}, nil); rpcCode(err) != protocol.CodeNotFound {
		t.Fatalf("subscribe to a disposed chat: %v", err)
	}
}

// TestActiveClientsBelongToTheirSender: SessionActiveClientSetAction says a
// client dispatches it "with its own SessionActiveClient";
// CreateSessionParams.activeClient's clientId "MUST match the clientId the
// creating client supplied in initialize"; SessionState.activeClients says
// the host removes clients "when they unsubscribe" or disconnect.
func TestActiveClientsBelongToTheirSender(t *testing.T) {
	th := startHost(t, nil)
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	uri, _ := a.newSession("active")
	b.Subscribe(uri)

	// Not someone else's entry.
	seq := b.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{ClientID: "a", Tools: []protocol.ToolDefinition{}}})
	b.WaitFor("foreign set rejected", rejected(seq))
	seq = b.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{ClientID: "b", Tools: []protocol.ToolDefinition{}}})
	b.WaitFor("own set accepted", accepted(seq))
	seq = a.Dispatch(uri, &protocol.SessionActiveClientRemovedAction{ClientID: "b"})
	a.WaitFor("foreign removal rejected", rejected(seq))
	err := a.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("foreign"),
		ActiveClient: &protocol.SessionActiveClient{ClientID: "b", Tools: []protocol.ToolDefinition{}}}, nil)
	if rpcCode(err) != protocol.CodeInvalidParams {
		t.Fatalf("createSession with another client's activeClient: %v", err)
	}

	// Unsubscribing from the session removes the entry.
	if err := b.RPC.Notify(t.Context(), "unsubscribe", &protocol.UnsubscribeParams{Channel: uri}); err != nil {
		t.Fatal(err)
	}
	a.WaitFor("removed on unsubscribe", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if r, ok := e.Action.(*protocol.SessionActiveClientRemovedAction); ok && e.Origin == nil && r.ClientID == "b" {
				return true
			}
		}
		return false
	})
	if st := a.Subscribe(uri).State.(*protocol.SessionState); len(st.ActiveClients) != 0 {
		t.Fatalf("active clients %+v", st.ActiveClients)
	}
}

// TestWorkingDirectoryCapability: without
// AgentCapabilities.multipleWorkingDirectories "a server ... treats only the
// first entry as the session's working directory and ignores the rest"
// (CreateSessionParams.workingDirectories), and the working-directory
// actions are "Only valid when the agent advertises" it.
func TestWorkingDirectoryCapability(t *testing.T) {
	th, _ := startRecorded(t)
	c := th.dial(t, "c")
	c.initialize()
	uri := protocol.SessionURI("dirs")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri, WorkingDirectories: []string{"file:///a", "file:///b"}}, nil)
	st := c.Subscribe(uri).State.(*protocol.SessionState)
	if len(st.WorkingDirectories) != 1 || st.WorkingDirectories[0] != "file:///a" {
		t.Fatalf("working directories %v", st.WorkingDirectories)
	}
	chat := *st.DefaultChat
	c.Subscribe(chat)
	for _, tc := range []struct {
		channel string
		action  protocol.StateAction
	}{
		{uri, &protocol.SessionWorkingDirectorySetAction{Directory: "file:///b"}},
		{uri, &protocol.SessionWorkingDirectoryRemovedAction{Directory: "file:///a"}},
		{chat, &protocol.ChatWorkingDirectorySetAction{Directory: "file:///a"}},
		{chat, &protocol.ChatWorkingDirectoryRemovedAction{Directory: "file:///a"}},
		{uri, &protocol.SessionWorkingDirectoryReplacedAction{Directory: "file:///a", Replacement: "file:///c"}},
	} {
		seq := c.Dispatch(tc.channel, tc.action)
		r := rejectionOf(seq, c.WaitFor(tc.action.Type()+" rejected", rejected(seq)))
		if !strings.Contains(*r.RejectionReason, "multipleWorkingDirectories") {
			t.Fatalf("%s: %s", tc.action.Type(), *r.RejectionReason)
		}
	}
}

// TestChatWorkingDirectoriesWithinTheSession: CreateChatParams and
// ChatWorkingDirectorySetAction: every directory "MUST be present in the
// owning session's workingDirectories; the server MUST reject any entry
// that is not". With the capability, the set and removal of the immutable
// primary are checked too.
func TestChatWorkingDirectoriesWithinTheSession(t *testing.T) {
	rec := newRecorder()
	rec.caps.MultipleChats = &protocol.MultipleChatsCapability{}
	rec.caps.MultipleWorkingDirectories = &protocol.MultipleWorkingDirectoriesCapability{ImmutablePrimary: protocol.Ptr(true)}
	th := startHost(t, &host.Options{Agents: []agent.Backend{rec}})
	c := th.dial(t, "c")
	c.initialize(protocol.RootURI)
	uri := protocol.SessionURI("dirs")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri, WorkingDirectories: []string{"file:///a", "file:///b"}}, nil)
	st := c.Subscribe(uri).State.(*protocol.SessionState)
	if len(st.WorkingDirectories) != 2 {
		t.Fatalf("working directories %v", st.WorkingDirectories)
	}
	err := c.Call("createChat", &protocol.CreateChatParams{Channel: uri, Chat: protocol.ChatURI("out"), WorkingDirectories: []string{"file:///a", "file:///elsewhere"}}, nil)
	if rpcCode(err) != protocol.CodeInvalidParams {
		t.Fatalf("createChat outside the session's directories: %v", err)
	}
	if hasType("session/chatAdded")(c.Envelopes()) {
		t.Fatal("a rejected chat was announced")
	}
	chat := protocol.ChatURI("in")
	c.Must("createChat", &protocol.CreateChatParams{Channel: uri, Chat: chat, WorkingDirectories: []string{"file:///b"}}, nil)
	c.Subscribe(chat)
	seq := c.Dispatch(chat, &protocol.ChatWorkingDirectorySetAction{Directory: "file:///elsewhere"})
	c.WaitFor("outside directory rejected", rejected(seq))
	seq = c.Dispatch(chat, &protocol.ChatWorkingDirectorySetAction{Directory: "file:///a"})
	c.WaitFor("session directory accepted", accepted(seq))
	seq = c.Dispatch(uri, &protocol.SessionWorkingDirectoryRemovedAction{Directory: "file:///a"})
	c.WaitFor("immutable primary kept", rejected(seq))
	seq = c.Dispatch(uri, &protocol.SessionWorkingDirectoryReplacedAction{Directory: "file:///a", Replacement: "file:///c"})
	c.WaitFor("primary not replaceable without primaryReplacement", rejected(seq))
	seq = c.Dispatch(uri, &protocol.SessionWorkingDirectoryRemovedAction{Directory: "file:///b"})
	c.WaitFor("other directory removed", accepted(seq))
}

// TestChatAttachments: "The host MUST reject an attachment that references
// an unknown chat, specifies an unknown, active, or non-retained endTurn",
// and "MUST resolve the referenced chat's retained transcript from its
// first turn through the supplied endTurn, or through the latest completed
// turn when endTurn is omitted, and supply it as model context"
// (chat-channel.md, Pulling a chat into another chat). Turns older than
// the host's in-memory window count as retained.
func TestChatAttachments(t *testing.T) {
	rec := newRecorder()
	th := startHost(t, &host.Options{Agents: []agent.Backend{rec}, RecentTurns: 1})
	c := th.dial(t, "c")
	c.initialize()
	_, source := c.newSession("source")
	c.Subscribe(source)
	for i, text := range []string{"first", "second", "third"} {
		startTurn(c, source, fmt.Sprintf("s%d", i), text)
		rec.turnStarts(t, i+1)
		c.WaitFor("turn end", func(envs []protocol.ActionEnvelope) bool {
			return countType("chat/turnComplete", only(source, envs)) > i
		})
	}
	_, target := c.newSession("target")
	c.Subscribe(target)
	send := func(id string, att *protocol.MessageChatAttachment) int64 {
		msg := userMessage("look at this")
		msg.Attachments = []protocol.MessageAttachment{att}
		return c.Dispatch(target, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: msg})
	}
	for _, att := range []*protocol.MessageChatAttachment{
		{Label: "unknown chat", Resource: protocol.ChatURI("nowhere")},
		{Label: "unknown turn", Resource: source, EndTurn: protocol.Ptr("nope")},
	} {
		seq := send("bad", att)
		c.WaitFor(att.Label+" rejected", rejected(seq))
	}
	seq := c.Dispatch(target, &protocol.ChatPendingMessageSetAction{Kind: protocol.PendingMessageKindQueued, ID: "q",
		Message: protocol.Message{Text: "x", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser},
			Attachments: []protocol.MessageAttachment{&protocol.MessageChatAttachment{Label: "gone", Resource: protocol.ChatURI("nowhere")}}}})
	c.WaitFor("queued message with an unknown chat rejected", rejected(seq))
	initial := userMessage("x")
	initial.Attachments = []protocol.MessageAttachment{&protocol.MessageChatAttachment{Label: "gone", Resource: protocol.ChatURI("nowhere")}}
	err := c.Call("createChat", &protocol.CreateChatParams{Channel: protocol.SessionURI("target"), Chat: protocol.ChatURI("new"), InitialMessage: &initial}, nil)
	if rpcCode(err) != protocol.CodeInvalidParams {
		t.Fatalf("createChat with an unknown chat attached: %v", err)
	}

	want := []struct {
		endTurn *string
		turns   []string
	}{
		{protocol.Ptr("s0"), []string{"first"}}, // older than the window: read from the store
		{protocol.Ptr("s2"), []string{"first", "second", "third"}},
		{nil, []string{"first", "second", "third"}}, // the latest completed turn
	}
	for i, w := range want {
		seq := send(fmt.Sprintf("t%d", i), &protocol.MessageChatAttachment{Label: "source", Resource: source, EndTurn: w.endTurn})
		envs := c.WaitFor("accepted", accepted(seq))
		// Without endTurn, the host pins the latest completed turn in the
		// accepted message.
		for _, e := range envs {
			if ts, ok := e.Action.(*protocol.ChatTurnStartedAction); ok && e.Origin != nil && e.Origin.ClientSeq == seq {
				if end := ts.Message.Attachments[0].(*protocol.MessageChatAttachment).EndTurn; end == nil || *end != "s"+fmt.Sprint(len(w.turns)-1) {
					t.Fatalf("turn %d: attachment endTurn %v", i, end)
				}
			}
		}
		ev := rec.turnStarts(t, 4+i)[3+i]
		if len(ev.Transcripts) != 1 {
			t.Fatalf("turn %d: %d transcripts", i, len(ev.Transcripts))
		}
		var got []string
		for _, turn := range ev.Transcripts[0].Turns {
			got = append(got, turn.Message.Text)
		}
		if strings.Join(got, ",") != strings.Join(w.turns, ",") {
			t.Fatalf("turn %d: transcript %v, want %v", i, got, w.turns)
		}
		c.WaitFor("turn end", func(envs []protocol.ActionEnvelope) bool {
			return countType("chat/turnComplete", only(target, envs)) > i
		})
	}
}

// TestChatAttachmentOfActiveTurnRejected: endTurn must name a completed
// turn, not the one running.
func TestChatAttachmentOfActiveTurnRejected(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initialize()
	_, source := c.newSession("source")
	c.Subscribe(source)
	startTurn(c, source, "running", "/slow 100")
	c.WaitFor("turn started", hasType("chat/turnStarted"))
	msg := userMessage("look")
	msg.Attachments = []protocol.MessageAttachment{&protocol.MessageChatAttachment{Label: "src", Resource: source, EndTurn: protocol.Ptr("running")}}
	_, target := c.newSession("target")
	c.Subscribe(target)
	seq := c.Dispatch(target, &protocol.ChatTurnStartedAction{TurnID: "t", StartedAt: protocol.FormatTime(time.Now()), Message: msg})
	r := rejectionOf(seq, c.WaitFor("rejected", rejected(seq)))
	if !strings.Contains(*r.RejectionReason, "not completed") {
		t.Fatalf("reason %q", *r.RejectionReason)
	}
	c.Dispatch(source, &protocol.ChatTurnCancelledAction{TurnID: "running"})
}

// TestMissingRequiredMembersRejected: the session and chat channel pages
// say the server MUST validate a client action before applying it and echo
// an invalid one with a rejectionReason. An action whose schema-required
// members are absent is invalid: it is rejected, never applied with empty
// values, and an empty but present member is not mistaken for an absent
// one.
func TestMissingRequiredMembersRejected(t *testing.T) {
	th, rec := startRecorded(t)
	a, b := th.dial(t, "a"), th.dial(t, "b")
	a.initialize()
	b.initialize()
	uri, chat := a.newSession("missing")
	a.Subscribe(chat)
	b.Subscribe(uri)
	b.Subscribe(chat)
	before := a.Subscribe(uri).State.(*protocol.SessionState)
	for i, tc := range []struct {
		channel, action, missing string
	}{
		{chat, `{"type":"chat/turnStarted","turnId":"t1","startedAt":"2024-01-01T00:00:00.000Z"}`, "action.message"},
		{chat, `{"type":"chat/turnStarted","turnId":"t1","startedAt":"2024-01-01T00:00:00.000Z","message":{"text":"hi","origin":{}}}`, "action.message.origin.kind"},
		{chat, `{"type":"chat/turnStarted","startedAt":"2024-01-01T00:00:00.000Z","message":{"text":"hi","origin":{"kind":"user"}}}`, "action.turnId"},
		{uri, `{"type":"session/titleChanged"}`, "action.title"},
		{uri, `{"type":"session/workingDirectorySet"}`, "action.directory"},
		{chat, `{"type":"chat/pendingMessageSet","kind":"queued","message":{"text":"x","origin":{"kind":"user"}}}`, "action.id"},
	} {
		raw := fmt.Sprintf(`{"channel":%q,"clientSeq":%d,"action":%s}`, tc.channel, 100+i, tc.action)
		if err := a.RPC.Notify(context.Background(), "dispatchAction", jsontextValue(raw)); err != nil {
			t.Fatal(err)
		}
		r := rejectionOf(int64(100+i), a.WaitFor(tc.missing+" rejected", rejected(int64(100+i))))
		if !strings.Contains(*r.RejectionReason, tc.missing) {
			t.Fatalf("%s: reason %q does not name %s", tc.action, *r.RejectionReason, tc.missing)
		}
	}
	// Without clientSeq.
	a.RPC.Notify(context.Background(), "dispatchAction", jsontextValue(fmt.Sprintf(`{"channel":%q,"action":{"type":"session/titleChanged","title":"x"}}`, uri)))
	a.WaitFor("no clientSeq rejected", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.RejectionReason != nil && strings.Contains(*e.RejectionReason, "clientSeq") {
				return true
			}
		}
		return false
	})
	// Present but empty members are not missing: an empty title is a title.
	seq := a.Dispatch(uri, &protocol.SessionTitleChangedAction{Title: ""})
	a.WaitFor("empty title accepted", accepted(seq))
	for _, e := range b.Envelopes() {
		if e.Origin != nil && e.Origin.ClientSeq >= 100 {
			t.Fatalf("b received a rejected action: %s", e.Action.Type())
		}
	}
	if after := a.Subscribe(uri).State.(*protocol.SessionState); len(after.WorkingDirectories) != len(before.WorkingDirectories) {
		t.Fatalf("working directories changed to %v", after.WorkingDirectories)
	}
	if n := len(rec.turnStarts(t, 0)); n != 0 {
		t.Fatalf("the agent ran %d turns", n)
	}
}

// jsontextValue sends raw JSON as params.
type jsontextValue string

func (v jsontextValue) MarshalJSON() ([]byte, error) { return []byte(v), nil }

// failingBackend is an agent whose sessions never open.
type failingBackend struct{ recorder }

func (b *failingBackend) Open(context.Context, agent.OpenRequest, agent.Host) (agent.Session, error) {
	return nil, fmt.Errorf("no model configured")
}

// TestSessionLifecycle: "Server creates session with lifecycle: 'creating',
// returns the snapshot ... On success: server dispatches session/ready. On
// failure: server dispatches session/creationFailed" (session-channel.md,
// Lifecycle; the state-model guide: "The initial snapshot has lifecycle:
// 'creating'"). The creator subscribes after createSession answered, and
// the agent opened at once; it still sees the transition.
func TestSessionLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend agent.Backend
		want    string
	}{
		{"ready", newRecorder(), "session/ready"},
		{"failed", &failingBackend{}, "session/creationFailed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				th := startPipeHost(t, &host.Options{Agents: []agent.Backend{tc.backend}})
				c := th.dial(t, "c")
				c.initialize()
				uri := protocol.SessionURI("life")
				c.Must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
				// Give the agent's open time to finish first. Whichever comes
				// first, the subscriber must see the transition; the pause only
				// makes the open-first order, the one that used to skip it, the
				// likely one.
				time.Sleep(50 * time.Millisecond)
				snap := c.Subscribe(uri)
				if st := snap.State.(*protocol.SessionState); st.Lifecycle != protocol.SessionLifecycleCreating {
					t.Fatalf("snapshot lifecycle %q, want creating", st.Lifecycle)
				}
				envs := c.WaitFor(tc.want, hasType(tc.want))
				st := mirror(t, snap, envs).(*protocol.SessionState)
				if tc.name == "ready" && st.Lifecycle != protocol.SessionLifecycleReady ||
					tc.name == "failed" && (st.Lifecycle != protocol.SessionLifecycleFailed || st.CreationError == nil) { // the 1.x reducer's name
					t.Fatalf("lifecycle %q, error %+v", st.Lifecycle, st.CreationError)
				}
				risingSeqs(t, snap.FromSeq, envs)
				// A later subscriber sees the outcome in its snapshot.
				d := th.dial(t, "d")
				d.initialize()
				if got := d.Subscribe(uri).State.(*protocol.SessionState).Lifecycle; got == protocol.SessionLifecycleCreating {
					t.Fatalf("second subscriber sees %q", got)
				}
			})
		})
	}
}

// TestLeavingClientsToolCallsFail: when an active client is removed, "the
// host SHOULD also cancel that client's in-flight tool calls ... by
// dispatching chat/toolCallComplete with result.success = false"
// (SessionActiveClientRemovedAction).
func TestLeavingClientsToolCallsFail(t *testing.T) {
	th, rec := startRecorded(t)
	c := th.dial(t, "c")
	c.initialize()
	uri, chat := c.newSession("tools")
	c.Subscribe(chat)
	tools := th.dial(t, "tools")
	tools.initialize()
	seq := tools.Dispatch(uri, &protocol.SessionActiveClientSetAction{ActiveClient: protocol.SessionActiveClient{ClientID: "tools", Tools: []protocol.ToolDefinition{}}})
	c.WaitFor("active client", accepted(seq))
	startTurn(c, chat, "t1", "client-tool:tools")
	c.WaitFor("tool running", hasType("chat/toolCallReady"))
	tools.RPC.Close()
	envs := c.WaitFor("turn end", endedOn(chat))
	var done *protocol.ChatToolCallCompleteAction
	for _, e := range envs {
		if a, ok := e.Action.(*protocol.ChatToolCallCompleteAction); ok && e.Origin == nil {
			done = a
		}
	}
	if done == nil || done.Result.Success || done.ToolCallID != "tc" {
		t.Fatalf("tool completion %+v", done)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.ContainsFunc(rec.events, func(ev agent.Event) bool { _, ok := ev.Action.(*protocol.ChatToolCallCompleteAction); return ok }) {
		t.Fatal("the agent was not told the tool call ended")
	}
}

// TestCreateChatNeedsMultipleChats: AgentCapabilities.multipleChats "When
// absent, clients MUST NOT call createChat to open chats beyond the default
// one the session starts with", so the host refuses such a call, and
// accepts it once the agent advertises the capability.
func TestCreateChatNeedsMultipleChats(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps *protocol.MultipleChatsCapability
		ok   bool
	}{
		{"without multipleChats", nil, false},
		{"with multipleChats", &protocol.MultipleChatsCapability{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rec.caps.MultipleChats = tc.caps
			th := startHost(t, &host.Options{Agents: []agent.Backend{rec}})
			c := th.dial(t, "c")
			c.initialize(protocol.RootURI)
			uri := protocol.SessionURI("one")
			c.Must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
			second := protocol.ChatURI("second")
			err := c.Call("createChat", &protocol.CreateChatParams{Channel: uri, Chat: second}, nil)
			if tc.ok {
				if err != nil {
					t.Fatalf("createChat: %v", err)
				}
				return
			}
			var rpcErr *protocol.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeInvalidParams || !strings.Contains(rpcErr.Message, "multipleChats") {
				t.Fatalf("createChat without the capability: %v, want -32602 naming multipleChats", err)
			}
			if st := th.h.State(uri).(*protocol.SessionState); len(st.Chats) != 1 {
				t.Fatalf("the session has %d chats after a refused createChat, want 1", len(st.Chats))
			}
		})
	}
}
