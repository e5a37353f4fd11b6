package host_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
)

// BenchmarkEchoTurn measures what a person typing into a shared chat
// waits for: one client sends a short prompt to the echo agent, which
// answers at once (no pause between words), while other clients watch the
// same chat over their own loopback WebSockets. The agent waits for
// nothing, so the time is the host's own share of the turn (with the
// sockets). One iteration is one turn; it reports the p50 and p99, over
// the turns, of the time from sending the prompt to receiving its echo
// (echo-p50-µs) and to receiving turnComplete (turn-p50-µs), as the
// sender sees them. The watchers read each turn after it, so their own
// reading does not count.
func BenchmarkEchoTurn(b *testing.B) {
	for _, others := range []int{0, 50} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			benchmarkEchoTurn(b, others)
		})
	}
}

func benchmarkEchoTurn(b *testing.B, others int) {
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: -1})}})
	if err != nil {
		b.Fatal(err)
	}
	url, stop := serveOnce(h)
	defer stop()

	sender := dialRaw(b, url)
	defer sender.CloseNow()
	roundTrip(b, sender, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"sender"}}`)
	roundTrip(b, sender, `{"jsonrpc":"2.0","id":2,"method":"createSession","params":{"channel":"ahp-session:/echo","provider":"echo"}}`)
	resp := roundTrip(b, sender, `{"jsonrpc":"2.0","id":3,"method":"subscribe","params":{"channel":"ahp-session:/echo"}}`)
	_, rest, _ := strings.Cut(resp, `"defaultChat":"`)
	chat, _, _ := strings.Cut(rest, `"`)
	roundTrip(b, sender, fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"subscribe","params":{"channel":%q}}`, chat))

	// The watchers are other people's clients, whose reading is not the
	// host's work: each turn, they read what it sent them once the
	// sender has seen it complete, outside the measured interval (the
	// kernel's socket buffers hold a turn's few messages meanwhile).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gates := make([]chan string, others)
	var drained sync.WaitGroup
	for i := range others {
		ws := dialRaw(b, url)
		defer ws.CloseNow()
		roundTrip(b, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"w%d","initialSubscriptions":[%q]}}`, i, chat))
		gates[i] = make(chan string)
		go func() {
			for turn := range gates[i] {
				end := fmt.Sprintf(`"chat/turnComplete","turnId":%q`, turn)
				for {
					_, data, err := ws.Read(ctx)
					if err != nil {
						b.Error(err)
						break
					}
					if strings.Contains(string(data), end) {
						break
					}
				}
				drained.Done()
			}
		}()
	}
	defer func() {
		for _, g := range gates {
			close(g)
		}
	}()

	var echoes, turns []time.Duration
	seq := 0
	for b.Loop() {
		seq++
		turn := fmt.Sprintf("t%d", seq)
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":%q,"clientSeq":%d,"action":{"type":"chat/turnStarted","turnId":%q,"startedAt":"2026-01-01T00:00:00.000Z","message":{"text":"hello","origin":{"kind":"user"}}}}}`, chat, seq, turn)
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		if err := sender.Write(rctx, websocket.MessageText, []byte(msg)); err != nil {
			b.Fatal(err)
		}
		echoed := false
		for {
			_, data, err := sender.Read(rctx)
			if err != nil {
				b.Fatal(err)
			}
			s := string(data)
			if !echoed && strings.Contains(s, `"chat/turnStarted"`) && strings.Contains(s, `"clientId":"sender"`) {
				echoes = append(echoes, time.Since(start))
				echoed = true
			}
			if strings.Contains(s, `"chat/turnComplete"`) {
				turns = append(turns, time.Since(start))
				break
			}
		}
		rcancel()
		if !echoed {
			b.Fatal("the turn completed without the prompt's echo")
		}
		drained.Add(others)
		for _, g := range gates {
			g <- turn
		}
		drained.Wait()
	}
	slices.Sort(echoes)
	slices.Sort(turns)
	b.ReportMetric(float64(echoes[len(echoes)/2].Microseconds()), "echo-p50-µs")
	b.ReportMetric(float64(turns[len(turns)/2].Microseconds()), "turn-p50-µs")
	b.ReportMetric(float64(turns[len(turns)*99/100].Microseconds()), "turn-p99-µs")
}
