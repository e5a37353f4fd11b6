package reducer_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// BenchmarkTerminalData streams n terminal/data actions of 8 bytes into a
// fresh terminal, one action at a time, and reports the cost per action.
// Output is appended with protocol.Text, so ns/action and B/action should
// stay flat as n grows rather than rise with the length of the output.
func BenchmarkTerminalData(b *testing.B) {
	action := &protocol.TerminalDataAction{Data: "01234567"}
	for _, n := range []int{1_000, 20_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			iters := 0
			var s *protocol.TerminalState
			for b.Loop() {
				s = &protocol.TerminalState{Title: "sh", Content: []protocol.TerminalContentPart{}}
				for range n {
					s = reducer.Terminal(s, action)
				}
				iters++
			}
			runtime.ReadMemStats(&after)
			if got, want := reducer.TerminalOutput(s), len(action.Data)*n; len(got) != want {
				b.Fatalf("output has %d bytes, want %d", len(got), want)
			}
			actions := float64(iters * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/actions, "ns/action")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/actions, "B/action")
		})
	}
}
