package host_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// BenchmarkListSessionsUnderLoad measures what paging the catalog costs
// other clients. With 25,000 sessions in the catalog, one client measures
// the round trip of its own actions (dispatch, then the echo), first
// alone and then while 4 other clients page through every session again
// and again, in the same run. It reports both medians and 99th
// percentiles and their ratios (paging / alone), and the pages served.
func BenchmarkListSessionsUnderLoad(b *testing.B) {
	for _, pace := range []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 0} {
		name := "pace=" + pace.String()
		if pace == 0 {
			name = "flat-out"
		}
		b.Run(name, func(b *testing.B) { benchListUnderLoad(b, pace) })
	}
}

func benchListUnderLoad(b *testing.B, pace time.Duration) {
	const sessions, pagers = 25000, 4
	st := store.NewMemory()
	host.SeedCatalog(b, st, sessions)
	h, err := host.New(&host.Options{Store: st, Agents: []agent.Backend{echo.New(nil)}})
	if err != nil {
		b.Fatal(err)
	}
	srv := hosttest.Serve(b, h)

	self := &client{srv.Dial(b, "echo")}
	self.initialize()
	uri, _ := self.newSession("echo-bench")
	echoed := make(chan int64, 1)
	self.Watch(func(env *protocol.ActionEnvelope) {
		if env.Origin != nil && env.Origin.ClientID == "echo" {
			echoed <- env.Origin.ClientSeq
		}
	})
	roundTrips := func(n int) []time.Duration {
		lat := make([]time.Duration, n)
		for i := range n {
			start := time.Now()
			seq := self.Dispatch(uri, &protocol.SessionIsReadChangedAction{IsRead: i%2 == 0})
			for got := <-echoed; got != seq; got = <-echoed {
			}
			lat[i] = time.Since(start)
		}
		return lat
	}

	var stop atomic.Bool
	var pages atomic.Int64
	var wg sync.WaitGroup
	// The pagers read raw frames and only pick the cursor out, so that
	// what they cost is the host's side of paging, not decoding.
	startPagers := func() {
		for i := range pagers {
			ctx := context.Background()
			ws, _, err := websocket.Dial(ctx, srv.URL, nil)
			if err != nil {
				b.Fatal(err)
			}
			ws.SetReadLimit(16 << 20)
			call := func(req string) []byte {
				if err := ws.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
					return nil
				}
				_, data, err := ws.Read(ctx)
				if err != nil {
					return nil
				}
				return data
			}
			call(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"pager-%d"}}`, i))
			wg.Go(func() {
				defer ws.CloseNow()
				cursor := ""
				for id := 1; !stop.Load(); id++ {
					params := `{}`
					if cursor != "" {
						params = `{"cursor":"` + cursor + `"}`
					}
					data := call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"listSessions","params":%s}`, id, params))
					if data == nil {
						return
					}
					pages.Add(1)
					if pace > 0 {
						time.Sleep(pace)
					}
					cursor = ""
					if _, rest, ok := bytes.Cut(data, []byte(`"nextCursor":"`)); ok {
						cursor = string(rest[:bytes.IndexByte(rest, '"')])
					}
				}
			})
		}
	}

	roundTrips(200) // warm up
	b.ResetTimer()
	alone := roundTrips(b.N)
	b.StopTimer()
	startPagers()
	for pages.Load() < pagers*2 {
		time.Sleep(time.Millisecond)
	}
	b.StartTimer()
	began, pagesBefore := time.Now(), pages.Load()
	loaded := roundTrips(b.N)
	b.StopTimer()
	served := pages.Load() - pagesBefore
	elapsed := time.Since(began)
	stop.Store(true)
	wg.Wait()

	p := func(lat []time.Duration, q float64) float64 {
		s := slices.Clone(lat)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(p(alone, 0.5), "p50-alone-µs")
	b.ReportMetric(p(loaded, 0.5), "p50-paging-µs")
	b.ReportMetric(p(loaded, 0.5)/max(p(alone, 0.5), 1), "p50-ratio")
	b.ReportMetric(p(alone, 0.99), "p99-alone-µs")
	b.ReportMetric(p(loaded, 0.99), "p99-paging-µs")
	b.ReportMetric(p(loaded, 0.99)/max(p(alone, 0.99), 1), "p99-ratio")
	b.ReportMetric(float64(served)/elapsed.Seconds(), "pages/s")
}
