package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// burstBackend is the turn of a test agent (turnAgent) that answers with one markdown part
// and n deltas of 8 bytes, dispatched as fast as the host takes them, and
// records when each delta was sequenced.
type burstBackend struct {
	n    int
	mu   sync.Mutex
	sent []time.Time
	done chan struct{}
}

// turnAgent is a test agent whose every turn is answered by answer, on a
// goroutine of its own.
type turnAgent struct {
	provider string
	answer   func(h agent.Host, channel, turnID string)
}

func (a *turnAgent) Info() protocol.AgentInfo {
	return protocol.AgentInfo{Provider: a.provider, DisplayName: a.provider, Models: []protocol.SessionModelInfo{}}
}
func (a *turnAgent) Close() error { return nil }
func (a *turnAgent) Open(_ context.Context, _ agent.OpenRequest, h agent.Host) (agent.Session, error) {
	return &turnAgentSession{a: a, h: h}, nil
}

type turnAgentSession struct {
	a *turnAgent
	h agent.Host
}

func (s *turnAgentSession) Close() error { return nil }
func (s *turnAgentSession) Handle(ev agent.Event) {
	if start, ok := ev.Action.(*protocol.ChatTurnStartedAction); ok {
		go s.a.answer(s.h, ev.Channel, start.TurnID)
	}
}

// answer is burstBackend's turn.
func (b *burstBackend) answer(h agent.Host, channel, turnID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h.Dispatch(channel, &protocol.ChatResponsePartAction{TurnID: turnID, Part: &protocol.MarkdownResponsePart{ID: "p"}})
	for i := range b.n {
		b.sent[i] = time.Now()
		h.Dispatch(channel, &protocol.ChatDeltaAction{TurnID: turnID, PartID: "p", Content: "8 bytes "})
	}
	h.Dispatch(channel, &protocol.ChatTurnCompleteAction{TurnID: turnID})
	close(b.done)
}

// receiver reads frames from one WebSocket and records when each arrived.
type receiver struct {
	ws    *websocket.Conn
	times []time.Time
	count int
}

func (r *receiver) run(ctx context.Context, want int, wg *sync.WaitGroup) {
	defer wg.Done()
	for r.count < want {
		_, rd, err := r.ws.Reader(ctx)
		if err != nil {
			return
		}
		var buf [512]byte
		for {
			if _, err := rd.Read(buf[:]); err != nil {
				break
			}
		}
		if r.count < len(r.times) {
			r.times[r.count] = time.Now()
		}
		r.count++
	}
}

func dialRaw(b *testing.B, url string) *websocket.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	ws.SetReadLimit(1 << 24)
	return ws
}

func roundTrip(b *testing.B, ws *websocket.Conn, msg string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		b.Fatal(err)
	}
	_, data, err := ws.Read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// fanoutStats is what one streamed turn measured.
type fanoutStats struct {
	elapsed   time.Duration
	delivered int
	mallocs   uint64
	latencies []time.Duration
}

// BenchmarkFanout streams one chat turn of 10,000 deltas to 1, 10 and 100
// subscribers over real loopback WebSockets, and, in the same run, a bare
// broadcaster that writes the same pre-encoded frames to the same number
// of sockets with no protocol work. It reports delivered envelopes per
// second for both and their ratio, the p50 and p99 latency from
// sequencing to receipt, and allocations per delivered envelope (host
// and receivers together, for both).
func BenchmarkFanout(b *testing.B) {
	const deltas = 10000
	for _, subs := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			var host, bare fanoutStats
			for b.Loop() {
				host = runHostFanout(b, subs, deltas)
				bare = runBareFanout(b, subs, deltas)
			}
			hostRate := float64(host.delivered) / host.elapsed.Seconds()
			bareRate := float64(bare.delivered) / bare.elapsed.Seconds()
			b.ReportMetric(hostRate, "ahpd-env/s")
			b.ReportMetric(bareRate, "bare-env/s")
			b.ReportMetric(hostRate/bareRate, "ratio")
			slices.Sort(host.latencies)
			b.ReportMetric(float64(host.latencies[len(host.latencies)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(host.latencies[len(host.latencies)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(host.mallocs)/float64(host.delivered), "ahpd-allocs/env")
			b.ReportMetric(float64(bare.mallocs)/float64(bare.delivered), "bare-allocs/env")
		})
	}
}

// serveOnce serves h over WebSocket on 127.0.0.1 for one benchmark run
// and returns its URL and a stop that closes the server and the host
// (hosttest.Serve would keep every run's host until the benchmark ends).
func serveOnce(h *host.Host) (url string, stop func()) {
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	return "ws" + strings.TrimPrefix(srv.URL, "http"), func() {
		h.Close()
		srv.Close()
	}
}

func runHostFanout(b *testing.B, subs, deltas int) fanoutStats {
	b.StopTimer()
	burst := &burstBackend{n: deltas, sent: make([]time.Time, deltas), done: make(chan struct{})}
	h, err := host.New(&host.Options{Agents: []agent.Backend{&turnAgent{provider: "burst", answer: burst.answer}}, QueueSize: deltas + 100, ReplayEntries: deltas + 100})
	if err != nil {
		b.Fatal(err)
	}
	url, stop := serveOnce(h)
	defer stop()

	ctl := dialRaw(b, url)
	defer ctl.CloseNow()
	roundTrip(b, ctl, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"ctl"}}`)
	roundTrip(b, ctl, `{"jsonrpc":"2.0","id":2,"method":"createSession","params":{"channel":"ahp-session:/bench"}}`)
	resp := roundTrip(b, ctl, `{"jsonrpc":"2.0","id":3,"method":"subscribe","params":{"channel":"ahp-session:/bench"}}`)
	_, rest, _ := strings.Cut(resp, `"defaultChat":"`)
	chat, _, _ := strings.Cut(rest, `"`)

	// Frames per subscriber: the turnStarted echo, the part, the deltas
	// and turnComplete.
	want := deltas + 3
	recvs := make([]*receiver, subs)
	for i := range recvs {
		ws := dialRaw(b, url)
		defer ws.CloseNow()
		roundTrip(b, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"s%d","initialSubscriptions":[%q]}}`, i, chat))
		recvs[i] = &receiver{ws: ws, times: make([]time.Time, want)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, r := range recvs {
		wg.Add(1)
		go r.run(ctx, want, &wg)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.StartTimer()
	start := time.Now()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	ctl.Write(ctx2, websocket.MessageText, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":%q,"clientSeq":1,"action":{"type":"chat/turnStarted","turnId":"t1","startedAt":"2026-01-01T00:00:00.000Z","message":{"text":"go","origin":{"kind":"user"}}}}}`, chat)))
	cancel2()
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	<-burst.done

	st := fanoutStats{elapsed: elapsed, mallocs: after.Mallocs - before.Mallocs}
	for _, r := range recvs {
		st.delivered += r.count
		if r.count != want {
			b.Fatalf("a subscriber received %d of %d frames", r.count, want)
		}
		for i := range deltas {
			st.latencies = append(st.latencies, r.times[i+2].Sub(burst.sent[i]))
		}
	}
	b.StartTimer()
	return st
}

// runBareFanout writes pre-encoded delta notifications to subs WebSockets,
// one writer goroutine per socket fed by a channel, as the host does but
// with no protocol work.
func runBareFanout(b *testing.B, subs, deltas int) fanoutStats {
	b.StopTimer()
	frames := make([][]byte, deltas+3)
	for i := range frames {
		env := protocol.ActionEnvelope{Channel: "ahp-chat:/bench", ServerSeq: int64(i + 1),
			Action: &protocol.ChatDeltaAction{TurnID: "t1", PartID: "p", Content: "8 bytes "}}
		body, _ := protocol.Marshal(env)
		frames[i] = []byte(`{"jsonrpc":"2.0","method":"action","params":` + string(body) + `}`)
	}
	var mu sync.Mutex
	var conns []*websocket.Conn
	ready := make(chan struct{}, subs)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		mu.Lock()
		conns = append(conns, ws)
		mu.Unlock()
		ready <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	recvs := make([]*receiver, subs)
	for i := range recvs {
		ws := dialRaw(b, url)
		defer ws.CloseNow()
		recvs[i] = &receiver{ws: ws}
		<-ready
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, r := range recvs {
		wg.Add(1)
		go r.run(ctx, len(frames), &wg)
	}
	// Each writer has a context of its own, as each host connection has:
	// coder/websocket registers a context.AfterFunc on the context of
	// every read and write, so writers sharing one context (with the
	// receivers too) would contend on it and make the baseline slower.
	queues := make([]chan []byte, len(conns))
	var writers sync.WaitGroup
	for i, ws := range conns {
		queues[i] = make(chan []byte, len(frames))
		writers.Add(1)
		go func() {
			defer writers.Done()
			wctx, wcancel := context.WithCancel(context.Background())
			defer wcancel()
			for f := range queues[i] {
				ws.Write(wctx, websocket.MessageText, f)
			}
		}()
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.StartTimer()
	start := time.Now()
	for _, f := range frames {
		for _, q := range queues {
			q <- f
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	for _, q := range queues {
		close(q)
	}
	writers.Wait()
	for _, ws := range conns {
		ws.CloseNow()
	}
	st := fanoutStats{elapsed: elapsed, mallocs: after.Mallocs - before.Mallocs}
	for _, r := range recvs {
		st.delivered += r.count
	}
	b.StartTimer()
	return st
}
