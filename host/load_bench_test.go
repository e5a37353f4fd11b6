package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store/sqlite"
)

// copyDir copies the files of a data directory, for a fresh host on it.
func copyDir(b *testing.B, from string) string {
	to := b.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return to
}

// BenchmarkStreamWhileLoading streams one chat to 10 subscribers over
// WebSocket at a steady pace, first with nothing else happening, then
// while another client subscribes to 100 sessions that are only in the
// SQLite store (each read from disk on first use), for as long as they
// load, and reports the p99 delivery latency of both and their ratio,
// measured in the same run (and pooled over the iterations). A
// store read under the host lock would hold the stream up for as long as
// each read takes.
//
// It runs as ahpd does by default (--spare-procs 2): with two Go
// processors more than the benchmark's -cpu, one for the host's store
// reader and one for the streams while the store's writer is in fsync.
// The host paces the burst of loads as it does by default
// (Options.StoreReadShare), so they take about four times as long as
// they would unpaced (load-100-ms). The subscribers decode every delta
// they time, as a client does; the loading client, which stands for
// another process, drops the notifications of the sessions it loads
// without decoding them (its replies are not decoded either), so that
// its own work does not count as the host's.
//
// It also reports the collections that ran while the sessions loaded and
// what the process allocated meanwhile (per iteration): a run whose p99
// misses is nearly always one with a collection in its load window.
func BenchmarkStreamWhileLoading(b *testing.B) {
	const (
		cold        = 100
		subscribers = 10
		deltas      = 500
		pace        = time.Millisecond
	)
	procs := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(procs + 2) // as ahpd --spare-procs 2
	defer runtime.GOMAXPROCS(procs)
	fixture := startupFixture(b, cold, 20)
	var quiet, loading, loads []time.Duration
	var counts []int
	var gcs int
	var allocd uint64
	for b.Loop() {
		st, err := sqlite.Open(copyDir(b, fixture), nil)
		if err != nil {
			b.Fatal(err)
		}
		p := &puppet{hosts: make(chan agent.Host, 1)}
		h, err := host.New(&host.Options{Store: st, Agents: []agent.Backend{p}, QueueSize: 4 * deltas, ReplayEntries: 4 * deltas})
		if err != nil {
			b.Fatal(err)
		}
		srv := hosttest.Serve(b, h)
		admin := srv.Dial(b, "admin")
		admin.Must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: "admin"}, nil)
		var items protocol.ListSessionsResult
		var coldURIs []string
		for cursor := (*string)(nil); ; cursor = items.NextCursor {
			admin.Must("listSessions", &protocol.ListSessionsParams{Cursor: cursor}, &items)
			for _, s := range items.Items {
				coldURIs = append(coldURIs, s.Resource)
			}
			if items.NextCursor == nil {
				break
			}
		}
		if len(coldURIs) != cold {
			b.Fatalf("%d sessions in the store, want %d", len(coldURIs), cold)
		}
		uri := protocol.SessionURI("streaming")
		admin.Must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
		ah := <-p.hosts
		var sub protocol.SubscribeResult
		admin.Must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
		chat := *sub.Snapshot.State.(*protocol.SessionState).DefaultChat

		// sent[i] is when delta i was dispatched; each subscriber records
		// the latency of every delta it receives.
		var mu sync.Mutex
		sent := make([]time.Time, 2*deltas)
		var lat []time.Duration
		got := make(chan struct{}, subscribers*2*deltas)
		for i := range subscribers {
			c := srv.Dial(b, fmt.Sprintf("sub-%d", i))
			c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: c.ID}, nil)
			c.Watch(func(env *protocol.ActionEnvelope) {
				d, ok := env.Action.(*protocol.ChatDeltaAction)
				if !ok {
					return
				}
				var n int
				if _, err := fmt.Sscanf(strings.TrimSpace(d.Content), "w%d", &n); err != nil {
					return
				}
				now := time.Now()
				mu.Lock()
				lat = append(lat, now.Sub(sent[n]))
				mu.Unlock()
				got <- struct{}{}
			})
			c.Subscribe(chat)
		}
		ah.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("go")})
		ah.Dispatch(chat, &protocol.ChatResponsePartAction{TurnID: "t", Part: &protocol.MarkdownResponsePart{ID: "p"}})

		// stream sends up to deltas deltas from number from, one per pace,
		// stopping early once until is closed, and returns the latencies
		// of every subscriber.
		stream := func(from int, until <-chan struct{}) []time.Duration {
			mu.Lock()
			lat = lat[:0]
			mu.Unlock()
			next := time.Now()
			n := 0
		send:
			for i := from; i < from+deltas; i++ {
				select {
				case <-until:
					break send
				default:
				}
				time.Sleep(time.Until(next))
				next = next.Add(pace)
				mu.Lock()
				sent[i] = time.Now()
				mu.Unlock()
				ah.Dispatch(chat, &protocol.ChatDeltaAction{TurnID: "t", PartID: "p", Content: fmt.Sprintf("w%d ", i)})
				n++
			}
			// One timer for the whole wait: a timer per delta would be
			// garbage of the benchmark's own, in the window it measures.
			deadline := time.NewTimer(time.Minute)
			defer deadline.Stop()
			for range subscribers * n {
				select {
				case <-got:
				case <-deadline.C:
					b.Fatal("deltas were not delivered")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(lat)
		}
		quiet = append(quiet, stream(0, nil)...)

		// The same stream while 100 cold sessions are read from SQLite,
		// for as long as they load: every latency of this part is of a
		// delta sent while sessions were loading.
		loader := srv.Dial(b, "loader")
		loader.Must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: "loader"}, nil)
		loader.Discard()
		var wg sync.WaitGroup
		start := make(chan struct{})
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		loadStart := time.Now()
		for w := range 2 {
			wg.Go(func() {
				<-start
				for i := w; i < len(coldURIs); i += 2 {
					loader.Must("subscribe", &protocol.SubscribeParams{Channel: coldURIs[i]}, nil)
				}
			})
		}
		loaded := make(chan struct{})
		var loadTime time.Duration
		go func() {
			wg.Wait()
			loadTime = time.Since(loadStart)
			close(loaded)
		}()
		close(start)
		during := stream(deltas, loaded)
		<-loaded
		var ms1 runtime.MemStats
		runtime.ReadMemStats(&ms1)
		gcs += int(ms1.NumGC - ms0.NumGC)
		allocd += ms1.TotalAlloc - ms0.TotalAlloc
		loading = append(loading, during...)
		loads = append(loads, loadTime)
		counts = append(counts, len(during)/subscribers)
		h.Close()
		st.Close()
	}
	p99 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)*99/100].Microseconds())
	}
	q, l := p99(quiet), p99(loading)
	b.ReportMetric(q, "quiet-p99-µs")
	b.ReportMetric(l, "loading-p99-µs")
	b.ReportMetric(l/q, "p99-ratio")
	// What decides a run: a collection during the load window shows in
	// its p99, so report how many there were and what was allocated.
	b.ReportMetric(float64(gcs)/float64(b.N), "gcs-while-loading")
	b.ReportMetric(float64(allocd)/float64(b.N)/1e6, "MB-while-loading")
	b.ReportMetric(float64(slices.Max(loads).Milliseconds()), "load-100-ms")
	b.ReportMetric(float64(slices.Min(counts)), "min-deltas-while-loading")
}
