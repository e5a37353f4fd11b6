package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/churn"
	"github.com/ahp-go/ahp/internal/metrics"
	"github.com/ahp-go/ahp/store"
)

// flakyStore fails every write while failing is set.
type flakyStore struct {
	store.Store
	failing atomic.Bool
}

func (s *flakyStore) Write(ctx context.Context, b store.Batch) error {
	if s.failing.Load() {
		return errors.New("disk on fire")
	}
	return s.Store.Write(ctx, b)
}

type fixture struct {
	h     *host.Host
	m     *metrics.Metrics
	st    *flakyStore
	srv   *httptest.Server
	probe chan struct{}
}

func start(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{st: &flakyStore{Store: store.NewMemory()}, probe: make(chan struct{})}
	f.m = metrics.New(&metrics.Options{Version: "v-test", AgentsProbed: f.probe})
	h, err := host.New(&host.Options{
		Agents:       []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
		Store:        f.st,
		OnStoreWrite: f.m.ObserveStoreWrite,
		MaxSaveDelay: 200 * time.Millisecond,
		SaveWindow:   -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	f.m.Watch(h)
	mux := http.NewServeMux()
	mux.Handle("/healthz", metrics.Healthz())
	mux.Handle("/readyz", f.m.Readyz())
	mux.Handle("/metrics", f.m.Handler())
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.srv.Close()
		f.st.failing.Store(false)
		h.Close()
		f.st.Close()
	})
	return f
}

func (f *fixture) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(f.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestHealthz(t *testing.T) {
	f := start(t)
	if code, body := f.get(t, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz answered %d %q", code, body)
	}
}

// TestReadyz: not ready while the agents are being probed, ready after,
// and not ready again while the store fails (with the reason).
func TestReadyz(t *testing.T) {
	f := start(t)
	if code, body := f.get(t, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "probed") {
		t.Fatalf("before the probes ended /readyz answered %d %q", code, body)
	}
	close(f.probe)
	if code, body := f.get(t, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz answered %d %q", code, body)
	}
	f.st.failing.Store(true)
	// A change the store cannot take: the session of a cycle.
	d := churn.New(f.h, churn.Options{Provider: echo.Provider, Timeout: 2 * time.Second})
	d.Cycle(context.Background()) // fails: the store refuses its changes
	code, body := f.get(t, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "disk on fire") {
		t.Fatalf("with a failing store /readyz answered %d %q", code, body)
	}
	if _, m := f.get(t, "/metrics"); !strings.Contains(m, "\nahpd_store_ok 0\n") {
		t.Errorf("with a failing store /metrics has no ahpd_store_ok 0:\n%s", grep(m, "ahpd_store"))
	}
	f.st.failing.Store(false)
	// The host retries the write with a backoff; ready once it went in.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := f.get(t, "/readyz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("once the store works again /readyz still answers %d %q", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMetrics scrapes after a few cycles of a daemon's life and checks
// the values the cycles account for.
func TestMetrics(t *testing.T) {
	f := start(t)
	d := churn.New(f.h, churn.Options{Provider: echo.Provider, Turn: "hello", Cancel: "/slow 50", Move: true})
	for range 3 {
		if err := d.Cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	code, body := f.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics answered %d", code)
	}
	for _, want := range []string{
		"ahpd_build_info{version=\"v-test\"} 1",
		"ahpd_connections 0",
		"ahpd_subscriptions 0",
		"ahpd_sessions{state=\"stored\"} 0",
		"ahpd_sessions{state=\"loaded\"} 0",
		"ahpd_chats 0",
		"ahpd_channels 1",
		"ahpd_queue_bytes 0",
		"ahpd_clients_dropped_total 0",
		"ahpd_store_backlog 0",
		"ahpd_store_ok 1",
		"ahpd_store_write_failures_total 0",
		"ahpd_turns_running 0",
		"ahpd_turns_total{outcome=\"complete\"} 3",
		"ahpd_turns_total{outcome=\"cancelled\"} 3",
		"ahpd_turns_total{outcome=\"error\"} 0",
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, name := range []string{"ahpd_actions_total ", "ahpd_replay_entries ", "ahpd_replay_bytes ", "ahpd_store_writes_total ",
		"ahpd_store_write_seconds_count ", "ahpd_store_oldest_unsaved_seconds ", "go_goroutines ", "process_resident_memory_bytes "} {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if strings.Contains(body, "ahpd_actions_total 0\n") || strings.Contains(body, "ahpd_store_write_seconds_count 0\n") {
		t.Errorf("three cycles counted no action or no store write:\n%s", grep(body, "ahpd_"))
	}
}

// TestRegistryPerHost: two hosts in one process keep their metrics apart
// (nothing is registered globally).
func TestRegistryPerHost(t *testing.T) {
	a, b := start(t), start(t)
	d := churn.New(a.h, churn.Options{Provider: echo.Provider, Turn: "hello"})
	if err := d.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	const done = "\nahpd_turns_total{outcome=\"complete\"} "
	if _, m := a.get(t, "/metrics"); !strings.Contains(m, done+"1\n") {
		t.Errorf("the host that ran a turn reports:\n%s", grep(m, "ahpd_turns"))
	}
	if _, m := b.get(t, "/metrics"); !strings.Contains(m, done+"0\n") {
		t.Errorf("the host that ran none reports:\n%s", grep(m, "ahpd_turns"))
	}
}

func grep(s, prefix string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}
