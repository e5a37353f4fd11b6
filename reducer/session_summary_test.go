package reducer_test

import (
	"fmt"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// sessionSummaryChat returns a chat summary as JSON.
func sessionSummaryChat(id string, status protocol.SessionStatus, activity, modifiedAt string) string {
	a := ""
	if activity != "" {
		a = fmt.Sprintf(`,"activity":%q`, activity)
	}
	return fmt.Sprintf(`{"resource":"ahp-chat:/%s","title":"%s","status":%d%s,"modifiedAt":%q}`, id, id, status, a, modifiedAt)
}

// The aggregation rules of specification/session-channel.md, "Chat
// aggregation", and of the SessionSummary description in the state schema.
func TestSessionSummary(t *testing.T) {
	const (
		idle     = protocol.SessionStatusIdle
		failed   = protocol.SessionStatusError
		running  = protocol.SessionStatusInProgress
		input    = protocol.SessionStatusInputNeeded
		read     = protocol.SessionStatusIsRead
		archived = protocol.SessionStatusIsArchived
	)
	t1, t2, t3 := "2025-01-01T00:00:01.000Z", "2025-01-01T00:00:02.000Z", "2025-01-01T00:00:03.000Z"
	chat := sessionSummaryChat
	waitC2 := `{"kind":"chatInput","id":"c2#r","chat":"ahp-chat:/c2","request":{"id":"r","message":"?"}}`
	waitGone := `{"kind":"chatInput","id":"gone#r","chat":"ahp-chat:/gone","request":{"id":"r","message":"?"}}`
	execC2 := `{"kind":"toolClientExecution","id":"c2#t","chat":"ahp-chat:/c2","turnId":"u","clientId":"k","toolCall":{"status":"running","toolCallId":"t","toolName":"x","displayName":"X","invocationMessage":"X","confirmed":"not-needed","contributor":{"kind":"client","clientId":"k"}}}`

	tests := []struct {
		name         string
		members      string // SessionState members besides the defaults of sessionJSON
		status       protocol.SessionStatus
		activity     string // "" for none
		modifiedAt   string // "" for none
		noModifiedAt bool
	}{{
		name:         "without chats the session keeps its own values",
		members:      `"status":42,"activity":"Own"`,
		status:       42,
		activity:     "Own",
		noModifiedAt: true,
	}, {
		name:       "a single chat passes through",
		members:    `"status":1,"chats":[` + chat("c1", running, "Thinking", t1) + `]`,
		status:     running,
		activity:   "Thinking",
		modifiedAt: t1,
	}, {
		name:       "a session whose creation failed reports Error and why",
		members:    `"lifecycle":"failed","creationError":{"errorType":"agentError","message":"Authentication required"},"chats":[` + chat("c1", idle, "", t1) + `]`,
		status:     failed,
		activity:   "Authentication required",
		modifiedAt: t1,
	}, {
		name:         "a failed session keeps its flags",
		members:      `"status":` + fmt.Sprint(idle|read) + `,"lifecycle":"failed","creationError":{"errorType":"agentError","message":""}`,
		status:       failed | read,
		noModifiedAt: true,
	}, {
		name:       "the default chat gives the activity, not the newest chat",
		members:    `"chats":[` + chat("c1", running, "Busy", t1) + `,` + chat("c2", idle, "", t3) + `],"defaultChat":"ahp-chat:/c1"`,
		status:     running,
		activity:   "Busy",
		modifiedAt: t3,
	}, {
		name:       "without a default chat the most recently modified chat gives it",
		members:    `"chats":[` + chat("c1", idle, "", t3) + `,` + chat("c2", running, "Busy", t2) + `,` + chat("c3", idle, "Late", t1) + `]`,
		status:     idle,
		modifiedAt: t3,
	}, {
		name:       "a default chat missing from the catalog falls back to the newest",
		members:    `"chats":[` + chat("c1", idle, "", t1) + `,` + chat("c2", running, "Busy", t2) + `],"defaultChat":"ahp-chat:/gone"`,
		status:     running,
		activity:   "Busy",
		modifiedAt: t2,
	}, {
		// The latest time wins, not the greater string: 10:00 at +02:00 is
		// 08:00 UTC.
		name:       "timestamps are compared as times",
		members:    `"chats":[` + chat("c1", running, "Offset", "2025-01-01T10:00:00+02:00") + `,` + chat("c2", idle, "Utc", "2025-01-01T09:00:00.000Z") + `]`,
		status:     idle,
		activity:   "Utc",
		modifiedAt: "2025-01-01T09:00:00.000Z",
	}, {
		name:       "a timestamp that does not parse is the oldest",
		members:    `"chats":[` + chat("c1", running, "Bad", "yesterday") + `,` + chat("c2", idle, "Good", t1) + `]`,
		status:     idle,
		activity:   "Good",
		modifiedAt: t1,
	}, {
		name:       "chats modified at the same time: the first in the catalog",
		members:    `"chats":[` + chat("c1", running, "First", t1) + `,` + chat("c2", idle, "Second", t1) + `]`,
		status:     running,
		activity:   "First",
		modifiedAt: t1,
	}, {
		name:       "InputNeeded in another chat is promoted with that chat's activity",
		members:    `"chats":[` + chat("c1", running, "Busy", t3) + `,` + chat("c2", input, "Asking", t1) + `],"defaultChat":"ahp-chat:/c1"`,
		status:     input,
		activity:   "Asking",
		modifiedAt: t3,
	}, {
		name:       "Error in another chat is promoted with that chat's activity",
		members:    `"chats":[` + chat("c1", idle, "", t3) + `,` + chat("c2", failed, "Crashed", t1) + `],"defaultChat":"ahp-chat:/c1"`,
		status:     failed,
		activity:   "Crashed",
		modifiedAt: t3,
	}, {
		name:       "InputNeeded outranks Error",
		members:    `"chats":[` + chat("c1", failed, "Crashed", t3) + `,` + chat("c2", input, "Asking", t1) + `],"defaultChat":"ahp-chat:/c1"`,
		status:     input,
		activity:   "Asking",
		modifiedAt: t3,
	}, {
		name:       "the default chat keeps the promotion when it qualifies itself",
		members:    `"chats":[` + chat("c1", input, "Mine", t1) + `,` + chat("c2", input, "Other", t3) + `],"defaultChat":"ahp-chat:/c1"`,
		status:     input,
		activity:   "Mine",
		modifiedAt: t3,
	}, {
		name:       "of several chats needing input the most recent wins",
		members:    `"chats":[` + chat("c1", idle, "", t3) + `,` + chat("c2", input, "Older", t1) + `,` + chat("c3", input, "Newer", t2) + `],"defaultChat":"ahp-chat:/c1"`,
		status:     input,
		activity:   "Newer",
		modifiedAt: t3,
	}, {
		name:       "session flags pass through and chat flags do not",
		members:    `"status":97,"chats":[` + chat("c1", running|read, "Busy", t1) + `]`,
		status:     running | read | archived,
		activity:   "Busy",
		modifiedAt: t1,
	}, {
		// Whenever inputNeeded waits on the user the session carries
		// InputNeeded ("Aggregated input requests"), even before the chat's
		// own status has caught up.
		name:       "an inputNeeded entry promotes its chat",
		members:    `"chats":[` + chat("c1", running, "Busy", t3) + `,` + chat("c2", running, "Tool", t1) + `],"defaultChat":"ahp-chat:/c1","inputNeeded":[` + waitC2 + `]`,
		status:     input,
		activity:   "Tool",
		modifiedAt: t3,
	}, {
		name:       "an inputNeeded entry for a chat missing from the catalog still promotes",
		members:    `"chats":[` + chat("c1", running, "Busy", t1) + `],"inputNeeded":[` + waitGone + `]`,
		status:     input,
		activity:   "Busy",
		modifiedAt: t1,
	}, {
		name:       "a client execution entry does not promote",
		members:    `"chats":[` + chat("c1", running, "Busy", t3) + `,` + chat("c2", running, "Tool", t1) + `],"defaultChat":"ahp-chat:/c1","inputNeeded":[` + execC2 + `]`,
		status:     running,
		activity:   "Busy",
		modifiedAt: t3,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := protocol.Decode("SessionState", []byte(sessionJSON(tc.members)))
			if err != nil {
				t.Fatal(err)
			}
			s := v.(*protocol.SessionState)
			before := channelMarshal(t, s)
			if got := reducer.SummaryStatus(s); got != tc.status {
				t.Errorf("SummaryStatus = %d, want %d", got, tc.status)
			}
			got := reducer.SummaryActivity(s)
			switch {
			case tc.activity == "" && got != nil:
				t.Errorf("SummaryActivity = %q, want none", *got)
			case tc.activity != "" && (got == nil || *got != tc.activity):
				t.Errorf("SummaryActivity = %v, want %q", got, tc.activity)
			}
			at, ok := reducer.SummaryModifiedAt(s.Chats)
			if ok == tc.noModifiedAt || at != tc.modifiedAt {
				t.Errorf("SummaryModifiedAt = %q, %v; want %q, %v", at, ok, tc.modifiedAt, !tc.noModifiedAt)
			}
			if after := channelMarshal(t, s); after != before {
				t.Errorf("state modified:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func ExampleSummaryStatus() {
	s := &protocol.SessionState{
		Status: protocol.SessionStatusIdle | protocol.SessionStatusIsRead,
		Chats: []protocol.ChatSummary{
			{Resource: "ahp-chat:/main", Status: protocol.SessionStatusIdle, ModifiedAt: "2025-01-01T00:00:02.000Z"},
			{Resource: "ahp-chat:/side", Status: protocol.SessionStatusInputNeeded, Activity: protocol.Ptr("Waiting for approval"), ModifiedAt: "2025-01-01T00:00:01.000Z"},
		},
		DefaultChat: protocol.Ptr[protocol.URI]("ahp-chat:/main"),
	}
	status := reducer.SummaryStatus(s)
	modifiedAt, _ := reducer.SummaryModifiedAt(s.Chats)
	fmt.Println(status&protocol.SessionStatusInputNeeded == protocol.SessionStatusInputNeeded, status&protocol.SessionStatusIsRead != 0)
	fmt.Println(*reducer.SummaryActivity(s))
	fmt.Println(modifiedAt)
	// Output:
	// true true
	// Waiting for approval
	// 2025-01-01T00:00:02.000Z
}

// SessionSummary's aggregation rules: "changes: optional roll-up across
// all chats. Producers MAY sum the per-chat changes summaries or report the
// most expensive chat's stats". The most expensive chat is taken, so chats
// sharing a directory do not count its changes twice.
func TestSummaryChanges(t *testing.T) {
	cs := func(add, del, files int64) *protocol.ChangesSummary {
		return &protocol.ChangesSummary{Additions: &add, Deletions: &del, Files: &files}
	}
	chat := func(c *protocol.ChangesSummary) protocol.ChatSummary { return protocol.ChatSummary{Changes: c} }
	tests := []struct {
		name  string
		chats []protocol.ChatSummary
		want  *protocol.ChangesSummary
	}{
		{"no chats", nil, nil},
		{"no chat has changes", []protocol.ChatSummary{chat(nil), chat(nil)}, nil},
		{"one chat passes through", []protocol.ChatSummary{chat(cs(3, 1, 2))}, cs(3, 1, 2)},
		{"the most lines wins", []protocol.ChatSummary{chat(cs(3, 1, 2)), chat(nil), chat(cs(1, 10, 1))}, cs(1, 10, 1)},
		{"equal lines: the most files", []protocol.ChatSummary{chat(cs(2, 2, 1)), chat(cs(4, 0, 3))}, cs(4, 0, 3)},
		{"absent counts are zero", []protocol.ChatSummary{chat(&protocol.ChangesSummary{}), chat(cs(0, 0, 1))}, cs(0, 0, 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := reducer.SummaryChanges(tc.chats)
			if (got == nil) != (tc.want == nil) || got != nil && (*got.Additions != *tc.want.Additions || *got.Deletions != *tc.want.Deletions || *got.Files != *tc.want.Files) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// session/chatUpdated writes the chat's changes summary and movable flag
// ("only fields present in changes are written"), and a null clears them.
func TestChatUpdatedChangesAndMovable(t *testing.T) {
	add, files := int64(4), int64(2)
	s := &protocol.SessionState{Chats: []protocol.ChatSummary{{Resource: "ahp-chat:/c", Title: "c"}}}
	s = reducer.Session(s, &protocol.SessionChatUpdatedAction{Chat: "ahp-chat:/c", Changes: protocol.SessionChatUpdatedActionChanges{
		Changes: &protocol.ChangesSummary{Additions: &add, Files: &files}, Movable: protocol.Ptr(true)}})
	if c := s.Chats[0]; c.Changes == nil || *c.Changes.Additions != 4 || c.Movable == nil || !*c.Movable || c.Title != "c" {
		t.Fatalf("after the update: %+v", c)
	}
	s = reducer.Session(s, &protocol.SessionChatUpdatedAction{Chat: "ahp-chat:/c", Changes: protocol.SessionChatUpdatedActionChanges{Cleared: []string{"changes", "movable"}}})
	if c := s.Chats[0]; c.Changes != nil || c.Movable != nil {
		t.Fatalf("after clearing: %+v", c)
	}
}
