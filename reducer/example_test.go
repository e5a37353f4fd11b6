package reducer_test

import (
	"fmt"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// A turn streamed into a chat: each action gives a new state, and the
// earlier states stay as they were.
func Example() {
	r := reducer.Reducer{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	var st protocol.SnapshotState = &protocol.ChatState{ChatStateFields: &protocol.ChatStateFields{}}
	start := st
	for _, a := range []protocol.StateAction{
		&protocol.ChatTurnStartedAction{
			TurnID: "t1", StartedAt: "2026-01-02T03:04:00.000Z",
			Message: protocol.Message{Text: "hi", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}},
		},
		&protocol.ChatResponsePartAction{TurnID: "t1", Part: &protocol.MarkdownResponsePart{ID: "p1", Content: protocol.TextOf("Hel")}},
		&protocol.ChatDeltaAction{TurnID: "t1", PartID: "p1", Content: "lo"},
		&protocol.ChatTurnCompleteAction{TurnID: "t1"},
	} {
		st = r.Apply(st, a)
	}
	chat := st.(*protocol.ChatState)
	turn := chat.Turns[0]
	fmt.Println(len(chat.Turns), turn.State, turn.ResponseParts[0].(*protocol.MarkdownResponsePart).Content)
	fmt.Println(len(start.(*protocol.ChatState).Turns), chat.ActiveTurn == nil)
	// Output:
	// 1 complete Hello
	// 0 true
}
