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
	s := &protocol.ChatState{
		Resource:   "ahp-chat:/bench",
		Title:      "Benchmark",
		Status:     protocol.SessionStatusIdle,
		ModifiedAt: "1970-01-01T00:00:00.000Z",
		Turns:      []protocol.Turn{},
	}
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
