package host_test

import (
	"reflect"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
)

// What 1.x clients rely on (issue 10 item 5), checked over a real
// WebSocket at 1.1.0 beside a 0.8.0 client where the shapes differ.

// initializeAt initializes the client at exactly one version.
func (c *client) initializeAt(version string, subs ...string) *protocol.InitializeResult {
	c.T.Helper()
	var res protocol.InitializeResult
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{version}, ClientID: c.ID, InitialSubscriptions: subs}, &res)
	if res.ProtocolVersion != version {
		c.T.Fatalf("negotiated %s, want %s", res.ProtocolVersion, version)
	}
	return &res
}

func summaryOf(t *testing.T, c *client, uri string) protocol.SessionSummary {
	t.Helper()
	var res protocol.ListSessionsResult
	c.Must("listSessions", &protocol.ListSessionsParams{}, &res)
	for _, s := range res.Items {
		if s.Resource == uri {
			return s
		}
	}
	t.Fatalf("%s is not listed", uri)
	return protocol.SessionSummary{}
}

func TestInitializeMeta(t *testing.T) {
	th := startHost(t, nil)
	if res := th.dial(t, "new").initializeAt("1.1.0"); res.Meta["ahp-go/host"] == nil {
		t.Errorf("1.1.0 gets _meta %v", res.Meta)
	}
	if res := th.dial(t, "old").initializeAt("0.8.0"); res.Meta != nil {
		t.Errorf("0.8.0 gets _meta %v, a member it does not know", res.Meta)
	}
}

// TestSummaryChatsAndFlags: SessionSummary.chats and defaultChat follow the
// catalog, with each chat's read and archived flags
// (ChatIsReadChangedAction: the host synchronizes ChatSummary.status and
// SessionChatSummary.status); 0.8.0 sees neither member.
func TestSummaryChatsAndFlags(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initializeAt("1.1.0")
	uri, chat := c.newSession("flags")
	sum := summaryOf(t, c, uri)
	if sum.DefaultChat == nil || *sum.DefaultChat != chat || len(sum.Chats) != 1 || sum.Chats[0].Resource != chat {
		t.Fatalf("summary chats %+v, default %v", sum.Chats, sum.DefaultChat)
	}
	c.Subscribe(chat)
	c.Dispatch(chat, &protocol.ChatIsReadChangedAction{IsRead: true})
	c.Dispatch(chat, &protocol.ChatIsArchivedChangedAction{IsArchived: true})
	c.WaitFor("catalog synced", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if u, ok := e.Action.(*protocol.SessionChatUpdatedAction); ok && u.Changes.Status != nil &&
				*u.Changes.Status&protocol.SessionStatusIsArchived != 0 && *u.Changes.Status&protocol.SessionStatusIsRead != 0 {
				return true
			}
		}
		return false
	})
	sum = summaryOf(t, c, uri)
	if st := sum.Chats[0].Status; st == nil || *st&protocol.SessionStatusIsRead == 0 || *st&protocol.SessionStatusIsArchived == 0 {
		t.Errorf("summary chat status %v, want read and archived", st)
	}
	old := th.dial(t, "old")
	old.initializeAt("0.8.0")
	if s := summaryOf(t, old, uri); s.Chats != nil || s.DefaultChat != nil {
		t.Errorf("0.8.0 sees chats %v, defaultChat %v", s.Chats, s.DefaultChat)
	}
}

// TestMoveChat: the default chat is never movable (ChatState.movable),
// other chats move within their session and the order goes out as
// session/chatsReordered; bad sources, anchors and destinations are
// refused with nothing changed (MoveChatParams: "Rejection leaves
// ownership, catalog order, chat state, and root summaries unchanged").
func TestMoveChat(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initializeAt("1.1.0")
	uri, def := c.newSession("move")
	other, _ := c.newSession("other")
	chats := []string{def}
	for _, id := range []string{"a", "b"} {
		ch := protocol.ChatURI(id)
		c.Must("createChat", &protocol.CreateChatParams{Channel: uri, Chat: ch}, nil)
		chats = append(chats, ch)
	}
	st := c.Subscribe(uri).State.(*protocol.SessionState)
	if m := st.Chats[0].Movable; m == nil || *m {
		t.Fatalf("the default chat's movable is %v", m)
	}
	if m := st.Chats[1].Movable; m == nil || !*m {
		t.Fatalf("a second chat's movable is %v", m)
	}
	move := func(chat string, dest protocol.ChatMoveDestination) error {
		return c.Call("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: dest}, nil)
	}
	// b goes first, then after the default chat.
	var res protocol.MoveChatResult
	c.Must("moveChat", &protocol.MoveChatParams{Channel: chats[2], Destination: &protocol.ChatMoveToSessionDestination{Session: uri}}, &res)
	if res.Session != uri {
		t.Fatalf("moveChat answered %+v", res)
	}
	c.Must("moveChat", &protocol.MoveChatParams{Channel: chats[2], Destination: &protocol.ChatMoveToSessionDestination{Session: uri, After: &chats[0]}}, nil)
	envs := c.WaitFor("two reorders", func(envs []protocol.ActionEnvelope) bool {
		return countType("session/chatsReordered", envs) == 2
	})
	order := func(uri string) []string {
		var out []string
		for _, ch := range c.Subscribe(uri).State.(*protocol.SessionState).Chats {
			out = append(out, ch.Resource)
		}
		return out
	}
	if got, want := order(uri), []string{chats[0], chats[2], chats[1]}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v (%d envelopes)", got, want, len(envs))
	}
	// A running turn holds its chat.
	c.Subscribe(chats[1])
	c.Dispatch(chats[1], &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: "2026-01-01T00:00:00.000Z", Message: userMessage("/input which?")})
	c.WaitFor("the input request", hasType("chat/inputRequested"))
	before := len(c.Envelopes())
	for _, tc := range []struct {
		name string
		err  error
		code protocol.ErrorCode
	}{
		{"the default chat", move(def, &protocol.ChatMoveToSessionDestination{Session: uri}), protocol.CodeInvalidParams},
		{"after itself", move(chats[2], &protocol.ChatMoveToSessionDestination{Session: uri, After: &chats[2]}), protocol.CodeInvalidParams},
		{"after a chat elsewhere", move(chats[2], &protocol.ChatMoveToSessionDestination{Session: uri, After: protocol.Ptr("ahp-chat:/nope")}), protocol.CodeInvalidParams},
		{"after a chat of the source, to another session", move(chats[2], &protocol.ChatMoveToSessionDestination{Session: other, After: &chats[0]}), protocol.CodeInvalidParams},
		{"after itself, to another session", move(chats[2], &protocol.ChatMoveToSessionDestination{Session: other, After: &chats[2]}), protocol.CodeInvalidParams},
		{"to no session", move(chats[2], &protocol.ChatMoveToSessionDestination{Session: "ahp-session:/nope"}), protocol.CodeNotFound},
		{"to a chat", move(chats[2], &protocol.ChatMoveToSessionDestination{Session: chats[0]}), protocol.CodeNotFound},
		{"an unknown chat", move("ahp-chat:/nope", &protocol.ChatMoveToSessionDestination{Session: uri}), protocol.CodeNotFound},
		{"a session", move(uri, &protocol.ChatMoveToNewSessionDestination{}), protocol.CodeNotFound},
		{"no destination", move(chats[2], nil), protocol.CodeInvalidParams},
		{"a running turn", move(chats[1], &protocol.ChatMoveToSessionDestination{Session: other}), protocol.CodeTurnInProgress},
		{"a running turn, to a new session", move(chats[1], &protocol.ChatMoveToNewSessionDestination{}), protocol.CodeTurnInProgress},
	} {
		if rpcCode(tc.err) != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, tc.err, tc.code)
		}
	}
	if got, want := order(uri), []string{chats[0], chats[2], chats[1]}; !slices.Equal(got, want) {
		t.Errorf("after refusals the order is %v, want %v", got, want)
	}
	for _, e := range c.Envelopes()[before:] {
		if e.Channel == uri || e.Channel == other {
			switch e.Action.(type) {
			case *protocol.SessionChatRemovedAction, *protocol.SessionChatAddedAction, *protocol.SessionChatsReorderedAction:
				t.Errorf("a refused move changed %s: %s", e.Channel, e.Action.Type())
			}
		}
	}
	if n := len(list(c)); n != 2 {
		t.Errorf("refused moves left %d sessions", n)
	}
}

// TestTurnResume: the echo agent's /flaky stops at a resumable error part;
// chat/turnResume reopens the same turn and the agent finishes it. A turn
// stopped at an error that is not resumable cannot be resumed.
func TestTurnResume(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initializeAt("1.1.0")
	_, chat := c.newSession("resume")
	c.Subscribe(chat)
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: "2026-01-01T00:00:00.000Z", Message: userMessage("/flaky hello")})
	c.WaitFor("the resumable error", hasType("chat/error"))
	cs := c.Subscribe(chat).State.(*protocol.ChatState)
	last := cs.Turns[len(cs.Turns)-1]
	if e, ok := last.ResponseParts[len(last.ResponseParts)-1].(*protocol.ErrorResponsePart); !ok || e.Resumable == nil || !*e.Resumable {
		t.Fatalf("the failed turn ends with %v", last.ResponseParts)
	}
	c.Dispatch(chat, &protocol.ChatTurnResumeAction{TurnID: "t1"})
	c.WaitFor("the resumed turn completes", hasType("chat/turnComplete"))
	cs = c.Subscribe(chat).State.(*protocol.ChatState)
	if n := len(cs.Turns); n != 1 || cs.Turns[0].ID != "t1" || cs.Turns[0].State != protocol.TurnStateComplete {
		t.Fatalf("after resuming: %d turns, %+v", n, cs.Turns)
	}

	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t2", StartedAt: "2026-01-01T00:00:01.000Z", Message: userMessage("/error")})
	c.WaitFor("the second error", func(envs []protocol.ActionEnvelope) bool {
		n := 0
		for _, e := range envs {
			if _, ok := e.Action.(*protocol.ChatErrorAction); ok {
				n++
			}
		}
		return n == 2
	})
	seq := c.Dispatch(chat, &protocol.ChatTurnResumeAction{TurnID: "t2"})
	envs := c.WaitFor("the rejection", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientSeq == seq && e.RejectionReason != nil {
				return true
			}
		}
		return false
	})
	_ = envs
}

// TestExperimentalMethodsAreNotServed: canvases and TCP are not
// advertised and their methods answer -32601; so are automations on a
// host made without Options.Automations (package automation tests them
// served).
func TestExperimentalMethodsAreNotServed(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	res := c.initializeAt("1.1.0")
	if res.Automations != nil || res.TCPConnections != nil {
		t.Errorf("initialize advertises automations %v, TCP %v", res.Automations, res.TCPConnections)
	}
	for method, params := range map[string]any{
		"createTcpConnection":              &protocol.CreateTCPConnectionParams{Channel: "ahp-tcp:/x", Host: "localhost", Port: 1},
		"runAutomation":                    &protocol.RunAutomationParams{Automation: "ahp-automation:/a", RequestID: "r"},
		"fetchAutomationRuns":              &protocol.FetchAutomationRunsParams{Automation: "ahp-automation:/a"},
		"listAutomationTriggerDefinitions": &protocol.ListAutomationTriggerDefinitionsParams{},
	} {
		if err := c.Call(method, params, nil); rpcCode(err) != protocol.CodeMethodNotFound {
			t.Errorf("%s: %v, want -32601", method, err)
		}
	}
}

// TestListSessionsEveryShape: each older set of shapes lists sessions in
// its own shape; 0.5.x and 0.6.x name one workingDirectory.
func TestListSessionsEveryShape(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initializeAt("1.1.0")
	uri := protocol.SessionURI("dirs")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri, WorkingDirectories: []protocol.URI{"file:///w"}}, nil)
	for _, version := range []string{"0.5.1", "0.5.2", "0.6.0", "0.8.0", "1.0.0"} {
		old := th.dial(t, "v"+version)
		old.initializeAt(version)
		s := summaryOf(t, old, uri)
		single := version < "0.7.0"
		if got := s.WorkingDirectory != nil && *s.WorkingDirectory == "file:///w" && s.WorkingDirectories == nil; got != single {
			t.Errorf("%s lists %+v", version, s)
		}
	}
}

// TestSummaryStatusRollUp: a session's summary takes its status from its
// chats by the aggregation rules (spec-1.1 SessionSummary, "Aggregation
// across chats"; session-channel.md, "Chat aggregation"): the activity bits
// of the default chat, InputNeeded promoted when any chat needs input and
// Error when any chat is in error, with the activity text of the chat that
// won the promotion; IsRead and IsArchived stay the session's own.
// SessionState.status is not rolled up: no action carries a session's
// status, and the session reducer keeps it when a chat's summary changes
// (reducer fixture 173-session-chatupdated), so a subscriber's mirror
// could not follow it. Its InputNeeded bit follows inputNeeded.
func TestSummaryStatusRollUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := startPipeHost(t, nil)
		c := th.dial(t, "c")
		c.initializeAt("1.1.0")
		uri, def := c.newSession("rollup")
		other := protocol.ChatURI("other")
		c.Must("createChat", &protocol.CreateChatParams{Channel: uri, Chat: other}, nil)
		c.Subscribe(other)
		c.Dispatch(uri, &protocol.SessionIsReadChangedAction{IsRead: true})
		const bits = protocol.SessionStatusIdle | protocol.SessionStatusError | protocol.SessionStatusInProgress | protocol.SessionStatusInputNeeded
		waitSummary := func(what string, ok func(protocol.SessionSummary) bool) protocol.SessionSummary {
			t.Helper()
			deadline := time.Now().Add(hosttest.Timeout)
			for {
				s := summaryOf(t, c, uri)
				if ok(s) {
					return s
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: the summary is %+v", what, s)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		// The default chat is idle; the other chat asks for input: the
		// promotion overrides the default chat's bits.
		c.Dispatch(other, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: "2026-01-01T00:00:00.000Z", Message: userMessage("/input which?")})
		s := waitSummary("input needed in the other chat", func(s protocol.SessionSummary) bool {
			return s.Status&bits == protocol.SessionStatusInputNeeded
		})
		if s.Status&protocol.SessionStatusIsRead == 0 {
			t.Errorf("the session's IsRead flag is lost: %d", s.Status)
		}
		st := c.Subscribe(uri).State.(*protocol.SessionState)
		if i := slices.IndexFunc(st.Chats, func(ch protocol.ChatSummary) bool { return ch.Resource == other }); i < 0 || !reflect.DeepEqual(s.Activity, st.Chats[i].Activity) {
			t.Errorf("the summary's activity %v is not the one of the chat that needs input", s.Activity)
		}
		if st.Status&protocol.SessionStatusInputNeeded != protocol.SessionStatusInputNeeded {
			t.Errorf("SessionState.status %d lacks the InputNeeded bit of its inputNeeded list", st.Status)
		}
		// Cancelling leaves the other chat idle; an error in it is promoted
		// over the idle default chat.
		c.Dispatch(other, &protocol.ChatTurnCancelledAction{TurnID: "t1", Duration: 1})
		waitSummary("both chats idle", func(s protocol.SessionSummary) bool { return s.Status&bits == protocol.SessionStatusIdle })
		c.Dispatch(other, &protocol.ChatTurnStartedAction{TurnID: "t2", StartedAt: "2026-01-01T00:00:01.000Z", Message: userMessage("/error")})
		waitSummary("an error in the other chat", func(s protocol.SessionSummary) bool { return s.Status&bits == protocol.SessionStatusError })
		// The default chat's own activity counts when nothing is promoted:
		// a new turn in the other chat clears its error.
		c.Dispatch(def, &protocol.ChatTurnStartedAction{TurnID: "t3", StartedAt: "2026-01-01T00:00:02.000Z", Message: userMessage("/slow 200")})
		c.Dispatch(other, &protocol.ChatTurnStartedAction{TurnID: "t4", StartedAt: "2026-01-01T00:00:03.000Z", Message: userMessage("hi")})
		waitSummary("the default chat in progress", func(s protocol.SessionSummary) bool {
			return s.Status&bits == protocol.SessionStatusInProgress
		})
	})
}
