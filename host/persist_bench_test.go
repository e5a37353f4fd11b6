package host_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// puppet is an agent backend that does nothing by itself: the benchmark
// drives its sessions through the agent.Host each one was opened with.
type puppet struct{ hosts chan agent.Host }

func (p *puppet) Info() protocol.AgentInfo { return protocol.AgentInfo{Provider: "puppet"} }
func (p *puppet) Close() error             { return nil }
func (p *puppet) Open(_ context.Context, _ agent.OpenRequest, h agent.Host) (agent.Session, error) {
	select {
	case p.hosts <- h:
	default: // nobody is driving this session
	}
	return puppetSession{}, nil
}

type puppetSession struct{}

func (puppetSession) Handle(agent.Event) {}
func (puppetSession) Close() error       { return nil }

// rig is a host with one client connected over an in-memory pipe.
type rig struct {
	b   *testing.B
	h   *host.Host
	rpc *jsonrpc.Conn
}

func newRig(b *testing.B, opts *host.Options) *rig {
	h, err := host.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	server, client := jsonrpc.Pipe()
	go h.ServeTransport(context.Background(), server)
	r := &rig{b: b, h: h}
	r.rpc = jsonrpc.NewConn(client, jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil }), &jsonrpc.ConnOptions{MaxMessageSize: 64 << 20})
	b.Cleanup(func() {
		r.rpc.Close()
		h.Close()
	})
	r.must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: "bench"}, nil)
	return r
}

func (r *rig) must(method string, params, result any) {
	r.b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.rpc.Call(ctx, method, params, result); err != nil {
		r.b.Fatalf("%s: %v", method, err)
	}
}

func (r *rig) notify(method string, params any) {
	r.b.Helper()
	if err := r.rpc.Notify(context.Background(), method, params); err != nil {
		r.b.Fatalf("%s: %v", method, err)
	}
}

// puppetSessions creates n sessions on a host running the puppet agent and
// returns their default chats and agent hosts.
func puppetSessions(b *testing.B, c *rig, p *puppet, n int) ([]string, []agent.Host) {
	var chats []string
	var hosts []agent.Host
	for i := range n {
		uri := protocol.SessionURI(fmt.Sprintf("bench-%04d", i))
		c.must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
		hosts = append(hosts, <-p.hosts)
		var sub protocol.SubscribeResult
		c.must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
		chats = append(chats, *sub.Snapshot.State.(*protocol.SessionState).DefaultChat)
		c.notify("unsubscribe", &protocol.UnsubscribeParams{Channel: uri})
	}
	return chats, hosts
}

func benchStores(b *testing.B) []struct {
	name string
	open func(b *testing.B) store.Store
} {
	sq := func(opts *sqlite.Options) func(b *testing.B) store.Store {
		return func(b *testing.B) store.Store {
			st, err := sqlite.Open(b.TempDir(), opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		}
	}
	return []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"memory", func(*testing.B) store.Store { return store.NewMemory() }},
		{"sqlite", sq(nil)},
		{"sqlite-nosync", sq(&sqlite.Options{NoSync: true})},
	}
}

// BenchmarkDurableDeltas streams b.N chat/delta actions into one chat and
// waits until all of them are saved: durable actions per second, for each
// store in the same run.
func BenchmarkDurableDeltas(b *testing.B) {
	for _, bs := range benchStores(b) {
		b.Run(bs.name, func(b *testing.B) {
			p := &puppet{hosts: make(chan agent.Host, 1)}
			th := newRig(b, &host.Options{Store: bs.open(b), Agents: []agent.Backend{p}})
			chats, hosts := puppetSessions(b, th, p, 1)
			chat, ah := chats[0], hosts[0]
			ah.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t", StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("go")})
			ah.Dispatch(chat, &protocol.ChatResponsePartAction{TurnID: "t", Part: &protocol.MarkdownResponsePart{ID: "p"}})
			ctx := context.Background()
			th.h.Sync(ctx)
			batches0, ops0, _ := th.h.SaveStats()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if err := ah.Dispatch(chat, &protocol.ChatDeltaAction{TurnID: "t", PartID: "p", Content: "8 bytes "}); err != nil {
					b.Fatal(err)
				}
			}
			if err := th.h.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			batches, ops, lag := th.h.SaveStats()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "durable-actions/s")
			b.ReportMetric(float64(ops-ops0)/float64(max(batches-batches0, 1)), "ops/batch")
			b.ReportMetric(float64(lag.Microseconds())/1000, "max-save-lag-ms")
		})
	}
}

// startupFixture builds a SQLite store holding sessions sessions of turns
// completed turns each, through a host.
func startupFixture(b *testing.B, sessions, turns int) string {
	dir := b.TempDir()
	st, err := sqlite.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := &puppet{hosts: make(chan agent.Host, 1)}
	th := newRig(b, &host.Options{Store: st, Agents: []agent.Backend{p}})
	chats, hosts := puppetSessions(b, th, p, sessions)
	for i, chat := range chats {
		ah := hosts[i]
		for t := range turns {
			id := fmt.Sprintf("t%02d", t)
			ah.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: userMessage("a question of a few words")})
			ah.Dispatch(chat, &protocol.ChatResponsePartAction{TurnID: id, Part: &protocol.MarkdownResponsePart{ID: "p"}})
			ah.Dispatch(chat, &protocol.ChatDeltaAction{TurnID: id, PartID: "p", Content: "An answer of about a hundred bytes, which is short for a model but enough to make a real row."})
			ah.Dispatch(chat, &protocol.ChatTurnCompleteAction{TurnID: id, Duration: 10})
		}
	}
	if err := th.h.Close(); err != nil {
		b.Fatal(err)
	}
	st.Close()
	return dir
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkStartup opens a store of 1,000 sessions of 20 turns each and
// starts a host on it: the time to start, and the heap the host holds
// afterwards (only the catalog), beside the heap once every session has
// been read.
func BenchmarkStartup(b *testing.B) {
	const sessions, turns = 1000, 20
	dir := startupFixture(b, sessions, turns)
	agents := []agent.Backend{&puppet{}}

	b.Run("sqlite", func(b *testing.B) {
		var heap uint64
		for range b.N {
			b.StopTimer()
			base := heapInUse()
			b.StartTimer()
			st, err := sqlite.Open(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			h, err := host.New(&host.Options{Store: st, Agents: agents})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			heap = heapInUse() - base
			h.Close()
			st.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
	})

	b.Run("all-loaded", func(b *testing.B) {
		var heap uint64
		for range b.N {
			b.StopTimer()
			base := heapInUse()
			st, err := sqlite.Open(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			c := newRig(b, &host.Options{Store: st, Agents: agents})
			var list protocol.ListSessionsResult
			var cursor *string
			for {
				c.must("listSessions", &protocol.ListSessionsParams{Cursor: cursor}, &list)
				for _, s := range list.Items {
					c.must("subscribe", &protocol.SubscribeParams{Channel: s.Resource}, nil)
					c.notify("unsubscribe", &protocol.UnsubscribeParams{Channel: s.Resource})
				}
				if cursor = list.NextCursor; cursor == nil {
					break
				}
			}
			heap = heapInUse() - base
			c.rpc.Close()
			c.h.Close()
			st.Close()
		}
		b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
	})
}
