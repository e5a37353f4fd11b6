package host_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// streamBackend is the turn of a test agent (turnAgent) that answers with one markdown part and n deltas of
// its text, paced the way a model is: it never runs more than window
// deltas ahead of the slowest reader (read).
type streamBackend struct {
	n, window int
	text      string
	read      func() int // deltas the slowest reader has received
	wake      chan struct{}
	done      chan struct{}
	stop      <-chan struct{}
	err       error  // why the stream stopped early
	fail      func() // stops the readers
}

// answer is streamBackend's turn.
func (b *streamBackend) answer(h agent.Host, channel, turnID string) {
	defer close(b.done)
	h.Dispatch(channel, &protocol.ChatResponsePartAction{TurnID: turnID, Part: &protocol.MarkdownResponsePart{ID: "p"}})
	for i := range b.n {
		for b.read() < i-b.window {
			select {
			case <-b.wake:
			case <-b.stop:
				b.err = fmt.Errorf("delta %d: the readers stopped", i)
				return
			}
		}
		if err := h.Dispatch(channel, &protocol.ChatDeltaAction{TurnID: turnID, PartID: "p", Content: b.text}); err != nil {
			b.err = fmt.Errorf("delta %d: %w", i, err)
			b.fail()
			return
		}
	}
	h.Dispatch(channel, &protocol.ChatTurnCompleteAction{TurnID: turnID})
}

// sinkStore keeps the catalog and drops the channels' contents: what a
// store on disk keeps is not on the host's heap (the SQLite store's pages
// are not Go memory), and a memory store would hold the whole stream.
type sinkStore struct{ store.Store }

func (s *sinkStore) Write(ctx context.Context, b store.Batch) error {
	kept := b[:0:0]
	for _, op := range b {
		switch op.(type) {
		case store.AppendAction, store.PutSnapshot, store.PutTurn, store.TruncateTurns:
		default:
			kept = append(kept, op)
		}
	}
	return s.Store.Write(ctx, kept)
}

// peakHeap samples the bytes of heap objects (live or not yet collected)
// every millisecond until stop, and returns the highest seen.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-exited
		read()
		return peak.Load()
	}
}

// BenchmarkStreamMemory streams 100 MB of chat text in deltas of 1 KiB to
// two subscribers over loopback WebSockets, with a store that drops what
// it is given (see sinkStore), and reports the peak heap (live objects and garbage not
// yet collected, sampled every millisecond, above what was live before
// the turn) as a ratio of the bytes streamed (peak-heap/byte). The agent
// runs at most 256 deltas ahead of the slower subscriber, as a model
// does, so the ratio measures what the host keeps rather than queues to
// a reader that cannot keep up.
var streamMB = flag.Int("stream-mb", 100, "megabytes BenchmarkStreamMemory streams")

func BenchmarkStreamMemory(b *testing.B) {
	const delta, window = 1 << 10, 256
	total := *streamMB << 20
	text := strings.Repeat("lorem ipsum dolor sit amet, ", delta/28+1)[:delta]
	var ratio float64
	for b.Loop() {
		ratio = streamOnce(b, total/delta, window, text)
	}
	b.ReportMetric(ratio, "peak-heap/byte")
}

func streamOnce(b *testing.B, n, window int, text string) float64 {
	b.StopTimer()
	st := &sinkStore{Store: store.NewMemory()}
	defer st.Close()
	var counts [2]atomic.Int64
	be := &streamBackend{n: n, window: window, text: text, wake: make(chan struct{}, 1), done: make(chan struct{}),
		read: func() int { return int(min(counts[0].Load(), counts[1].Load())) }}
	// A shared machine can stall the store's writer for seconds; the
	// benchmark measures memory, not speed.
	h, err := host.New(&host.Options{Agents: []agent.Backend{&turnAgent{provider: "stream", answer: be.answer}}, Store: st, MaxSaveDelay: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	url, stop := serveOnce(h)
	defer stop()

	ctl := dialRaw(b, url)
	defer ctl.CloseNow()
	roundTrip(b, ctl, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"ctl"}}`)
	roundTrip(b, ctl, `{"jsonrpc":"2.0","id":2,"method":"createSession","params":{"channel":"ahp-session:/stream"}}`)
	resp := roundTrip(b, ctl, `{"jsonrpc":"2.0","id":3,"method":"subscribe","params":{"channel":"ahp-session:/stream"}}`)
	_, rest, _ := strings.Cut(resp, `"defaultChat":"`)
	chat, _, _ := strings.Cut(rest, `"`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be.fail, be.stop = cancel, ctx.Done()
	var wg sync.WaitGroup
	started := make(chan struct{})
	var startOnce sync.Once
	for i := range counts {
		ws := dialRaw(b, url)
		defer ws.CloseNow()
		roundTrip(b, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"s%d","initialSubscriptions":[%q]}}`, i, chat))
		wg.Go(func() {
			// Counts the deltas and stops at turnComplete; reads each
			// frame through a fixed buffer, keeping nothing.
			var buf [4096]byte
			marker, end := []byte(`"chat/delta"`), []byte(`"chat/turnComplete"`)
			begin := []byte(`"chat/turnStarted"`)
			for {
				_, rd, err := ws.Reader(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				var head []byte
				for {
					k, err := rd.Read(buf[:])
					if head == nil {
						head = append([]byte(nil), buf[:min(k, 200)]...)
					}
					if err != nil {
						break
					}
				}
				if bytes.Contains(head, begin) {
					startOnce.Do(func() { close(started) })
				}
				if bytes.Contains(head, marker) {
					counts[i].Add(1)
					select {
					case be.wake <- struct{}{}:
					default:
					}
				}
				if bytes.Contains(head, end) {
					return
				}
			}
		})
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := peakHeap()
	b.StartTimer()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	ctl.Write(wctx, websocket.MessageText, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":%q,"clientSeq":1,"action":{"type":"chat/turnStarted","turnId":"t1","startedAt":"2026-01-01T00:00:00.000Z","message":{"text":"go","origin":{"kind":"user"}}}}}`, chat)))
	wcancel()
	// The host may drop an action still in flight when its connection
	// closes: wait until the subscribers see the turn start. The control
	// connection then reads nothing more: it leaves the session.
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		cancel()
		wg.Wait()
		b.Fatal("the turn did not start within 30s")
	}
	ctl.CloseNow()
	wg.Wait()
	select {
	case <-be.done:
	case <-ctx.Done():
		b.Fatal("the stream did not finish: ", ctx.Err())
	}
	if be.err != nil {
		b.Fatal(be.err)
	}
	if err := h.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	p := peak()
	for i := range counts {
		if got := counts[i].Load(); got != int64(n) {
			b.Fatalf("subscriber %d received %d of %d deltas", i, got, n)
		}
	}
	b.StartTimer()
	streamed := float64(n * len(text))
	return (float64(p) - float64(base.HeapAlloc)) / streamed
}
