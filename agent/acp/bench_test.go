package acp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// replyChunks is the length of the benchmarked reply, in chunks.
const replyChunks = 10000

// BenchmarkStreamReply measures, per streamed chunk, the time from an
// agent producing a 10,000-chunk reply to the last envelope arriving at
// one subscriber over WebSocket: for an ACP agent (a separate process
// writing session/update notifications, mapped by the bridge) and for the
// host's built-in echo agent streaming the same text in process. The ratio
// of the two ns/update figures is the cost of the bridge and the process
// boundary.
//
//	go test -run '^$' -bench StreamReply -benchtime 20x ./agent/acp
func BenchmarkStreamReply(b *testing.B) {
	words := make([]string, replyChunks-2) // the reply starts "You said:"
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i+1)
	}
	prompt := strings.Join(words, " ")
	for _, provider := range []string{"echo", "test"} {
		b.Run(map[string]string{"echo": "echo", "test": "acp"}[provider], func(b *testing.B) {
			backends := []agent.Backend{echo.New(&echo.Options{WordDelay: -1})}
			if provider == "test" {
				backends = []agent.Backend{newBackend(b, nil)}
			}
			// A queue deep enough that the subscriber is never dropped:
			// this measures throughput, not the slow-consumer policy.
			h, err := host.New(&host.Options{Agents: backends, QueueSize: 1 << 20, Logger: testLogger(b)})
			if err != nil {
				b.Fatal(err)
			}
			th := serve(b, h)
			c := th.dial(b, "bench")
			_, chat := c.newSession("s-"+provider, provider, b.TempDir())

			// One turn runs at a time: any end is the end of the turn.
			ended := make(chan struct{}, 1)
			deltas := 0
			c.Watch(func(e *protocol.ActionEnvelope) {
				switch a := e.Action.(type) {
				case *protocol.ChatDeltaAction:
					deltas++
				case *protocol.ChatTurnCompleteAction:
					ended <- struct{}{}
				case *protocol.ChatErrorAction:
					b.Errorf("turn failed: %s", a.Info().Message)
					ended <- struct{}{}
				}
			})
			run := func(i int) {
				c.startTurn(chat, fmt.Sprintf("t%d", i), prompt)
				select {
				case <-ended:
				case <-time.After(2 * time.Minute):
					b.Fatal("the turn did not end")
				}
			}
			run(-1) // warm up: process start, first allocations
			deltas = 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				run(i)
			}
			b.StopTimer()
			if deltas < b.N*(replyChunks-1) {
				b.Fatalf("%d deltas for %d turns", deltas, b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*replyChunks), "ns/update")
		})
	}
}
