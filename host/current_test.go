package host_test

import (
	"slices"
	"testing"

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
// session/chatsReordered; other destinations are refused with nothing
// changed.
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
		n := 0
		for _, e := range envs {
			if _, ok := e.Action.(*protocol.SessionChatsReorderedAction); ok {
				n++
			}
		}
		return n == 2
	})
	st = c.Subscribe(uri).State.(*protocol.SessionState)
	var order []string
	for _, ch := range st.Chats {
		order = append(order, ch.Resource)
	}
	if want := []string{chats[0], chats[2], chats[1]}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v (%d envelopes)", order, want, len(envs))
	}
	for _, tc := range []struct {
		name string
		err  error
		code protocol.ErrorCode
	}{
		{"the default chat", move(def, &protocol.ChatMoveToSessionDestination{Session: uri}), protocol.CodeInvalidParams},
		{"after itself", move(chats[1], &protocol.ChatMoveToSessionDestination{Session: uri, After: &chats[1]}), protocol.CodeInvalidParams},
		{"after a chat elsewhere", move(chats[1], &protocol.ChatMoveToSessionDestination{Session: uri, After: protocol.Ptr("ahp-chat:/nope")}), protocol.CodeInvalidParams},
		{"to another session", move(chats[1], &protocol.ChatMoveToSessionDestination{Session: other}), protocol.CodeInvalidParams},
		{"to a new session", move(chats[1], &protocol.ChatMoveToNewSessionDestination{}), protocol.CodeInvalidParams},
		{"to no session", move(chats[1], &protocol.ChatMoveToSessionDestination{Session: "ahp-session:/nope"}), protocol.CodeNotFound},
		{"an unknown chat", move("ahp-chat:/nope", &protocol.ChatMoveToSessionDestination{Session: uri}), protocol.CodeNotFound},
	} {
		if rpcCode(tc.err) != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, tc.err, tc.code)
		}
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

// TestExperimentalMethodsAreNotServed: canvases, TCP and automations are
// not advertised and their methods answer -32601.
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
