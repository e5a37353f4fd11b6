package protocol

import "testing"

// Clone gives a copy whose fields are its own, in one allocation, and
// sets no field of the original.
func TestClone(t *testing.T) {
	turn := &ActiveTurn{ActiveTurnFields: &ActiveTurnFields{ID: "t"}, ResponseParts: []ResponsePart{&MarkdownResponsePart{ID: "p"}}}
	chat := &ChatState{ChatStateFields: &ChatStateFields{Title: "before"}, ActiveTurn: turn}

	c := chat.Clone()
	c.Title = "after"
	if chat.Title != "before" || c.ActiveTurn != turn {
		t.Fatalf("chat clone: original title %q, turn shared %v", chat.Title, c.ActiveTurn == turn)
	}
	tc := turn.Clone()
	tc.ID = "u"
	if turn.ID != "t" || &tc.ResponseParts[0] != &turn.ResponseParts[0] {
		t.Fatalf("turn clone: original id %q", turn.ID)
	}
	if n := testing.AllocsPerRun(100, func() { _ = chat.Clone() }); n != 1 {
		t.Errorf("ChatState.Clone: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = turn.Clone() }); n != 1 {
		t.Errorf("ActiveTurn.Clone: %v allocations", n)
	}
	if z := new(ChatState).Clone(); z.ChatStateFields == nil {
		t.Error("cloning a zero chat state gave no fields")
	}
}
