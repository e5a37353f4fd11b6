package reducer_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// BenchmarkChatDelta streams one answer as a run of 8-byte chat/delta
// actions into a chat, applying them one by one as a client does. One
// iteration is a whole answer; the per-action figures (ns/action,
// B/action, allocs/action) are what to compare: they should not grow with
// the length of the answer (deltas) nor with the history (turns).
func BenchmarkChatDelta(b *testing.B) {
	for _, turns := range []int{0, 200} {
		for _, deltas := range []int{1000, 20000} {
			b.Run(fmt.Sprintf("turns=%d/deltas=%d", turns, deltas), func(b *testing.B) {
				benchmarkChatDelta(b, turns, deltas)
			})
		}
	}
}

func benchmarkChatDelta(b *testing.B, turns, deltas int) {
	var r reducer.Reducer
	start := streamingChat(r, turns)
	// One action value serves for every delta. A client decodes each
	// action, applies it and drops it; holding thousands of decoded
	// actions alive would only measure the garbage collector scanning
	// them.
	delta := &protocol.ChatDeltaAction{TurnID: "active", PartID: "md", Content: "01234567"}

	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var s *protocol.ChatState
	for b.Loop() {
		s = start
		for range deltas {
			s = r.Chat(s, delta)
		}
	}
	runtime.ReadMemStats(&after)

	b.StopTimer()
	if got := s.ActiveTurn.ResponseParts[0].(*protocol.MarkdownResponsePart).Content.Len(); got != 8*deltas {
		b.Fatalf("streamed %d bytes, want %d", got, 8*deltas)
	}
	n := float64(b.N) * float64(deltas)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/action")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/action")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/action")
}

// streamingChat returns a chat with the given number of completed turns
// and an active turn holding one empty markdown part, "md", built through
// the reducer itself.
func streamingChat(r reducer.Reducer, turns int) *protocol.ChatState {
	s := &protocol.ChatState{ChatStateFields: &protocol.ChatStateFields{
		Resource:   "ahp-chat:/bench",
		Title:      "Benchmark",
		Status:     protocol.SessionStatusIdle,
		ModifiedAt: "1970-01-01T00:00:00.000Z",
		Turns:      []protocol.Turn{},
	}}
	answer := strings.Repeat("Some earlier answer. ", 50)
	for i := range turns {
		id := fmt.Sprintf("turn-%d", i)
		s = r.Chat(s, &protocol.ChatTurnStartedAction{TurnID: id, Message: protocol.Message{Text: "question"}})
		s = r.Chat(s, &protocol.ChatResponsePartAction{TurnID: id, Part: &protocol.MarkdownResponsePart{ID: "md", Content: protocol.TextOf(answer)}})
		s = r.Chat(s, &protocol.ChatToolCallStartAction{TurnID: id, ToolCallID: "tc", ToolName: "bash", DisplayName: "Run"})
		s = r.Chat(s, &protocol.ChatToolCallReadyAction{TurnID: id, ToolCallID: "tc", InvocationMessage: protocol.PlainText("ls"), Confirmed: protocol.Ptr(protocol.ToolCallConfirmationReasonNotNeeded)})
		s = r.Chat(s, &protocol.ChatToolCallCompleteAction{TurnID: id, ToolCallID: "tc", Result: protocol.ToolCallResult{Success: true, PastTenseMessage: protocol.PlainText("Ran ls")}})
		s = r.Chat(s, &protocol.ChatTurnCompleteAction{TurnID: id, Duration: 1000})
	}
	s = r.Chat(s, &protocol.ChatTurnStartedAction{TurnID: "active", Message: protocol.Message{Text: "question"}})
	return r.Chat(s, &protocol.ChatResponsePartAction{TurnID: "active", Part: &protocol.MarkdownResponsePart{ID: "md"}})
}

// floorBlock is what a streamed delta must make, at the least, for the
// state it was given to stay as it was: a new chat, active turn, part and
// list of parts (one allocation in the reducer too).
type floorBlock struct {
	chat  protocol.ChatState
	turn  protocol.ActiveTurn
	part  protocol.MarkdownResponsePart
	parts [2]protocol.ResponsePart
}

// BenchmarkChatDeltaFloor is the floor under BenchmarkChatDelta on the
// machine it runs on: per delta, one allocation of the new chat, turn and
// part and their copies from the previous ones, and nothing else (no
// lookup, no text appended). The reducer's ns/action over this one's,
// in the same run, is what the reducer itself adds.
func BenchmarkChatDeltaFloor(b *testing.B) {
	for _, turns := range []int{0, 200} {
		b.Run(fmt.Sprintf("turns=%d/deltas=20000", turns), func(b *testing.B) {
			var r reducer.Reducer
			start := streamingChat(r, turns)
			first := new(floorBlock)
			first.part = *start.ActiveTurn.ResponseParts[0].(*protocol.MarkdownResponsePart)
			first.parts[0] = &first.part
			first.turn.ActiveTurnFields = start.ActiveTurn.ActiveTurnFields
			first.turn.ResponseParts = first.parts[:1:1]
			first.chat.ChatStateFields = start.ChatStateFields
			first.chat.ActiveTurn = &first.turn
			const deltas = 20000
			b.ReportAllocs()
			var last *floorBlock
			for b.Loop() {
				prev := first
				for range deltas {
					n := new(floorBlock)
					n.part = prev.part
					n.parts[0] = &n.part
					n.turn.ActiveTurnFields = prev.turn.ActiveTurnFields
					n.turn.ResponseParts = n.parts[:1:1]
					n.chat.ChatStateFields = prev.chat.ChatStateFields
					n.chat.ActiveTurn = &n.turn
					prev = n
				}
				last = prev
			}
			if last.chat.ActiveTurn.ResponseParts[0] != &last.part {
				b.Fatal("the last block does not hold its own part")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/deltas, "ns/action")
		})
	}
}
