// Package metrics serves what an operator watches on a running ahpd:
// liveness at /healthz, readiness at /readyz and Prometheus metrics at
// /metrics.
//
// Every metric of the host is read at scrape time from host.Stats and the
// ACP backends' Stats, by one collector, so that nothing is counted on the
// path of a change; only the store's write latency is observed as it
// happens (host.Options.OnStoreWrite), once per batch written. Each Metrics
// has its own registry: nothing is registered globally, and two hosts in
// one process keep their metrics apart.
package metrics

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/host"
)

// Options describes what the metrics watch besides the host.
type Options struct {
	// Version labels ahpd_build_info.
	Version string
	// Agents are the ACP backends, whose processes and restarts are
	// reported per agent.
	Agents []*acp.Backend
	// AgentsProbed, when set, is closed once the agents' first probes
	// ended (whatever their outcome); /readyz answers 503 until then.
	AgentsProbed <-chan struct{}
}

// Metrics is the registry of one host's metrics and its HTTP endpoints.
// Create it with New before the host, so that its store observer can be
// given to host.Options, then call Watch with the host.
type Metrics struct {
	reg        *prometheus.Registry
	storeWrite prometheus.Histogram
	opts       Options
	h          *host.Host
}

// New returns metrics with their own registry, holding the Go runtime's
// and the process's collectors and the store write latency histogram.
func New(opts *Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	if opts != nil {
		m.opts = *opts
	}
	m.storeWrite = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ahpd_store_write_seconds",
		Help:    "How long each write of a batch of changes to the store took.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms to 4 s
	})
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "ahpd_build_info",
		Help:        "Always 1; the version label is ahpd's release.",
		ConstLabels: prometheus.Labels{"version": m.opts.Version},
	})
	build.Set(1)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.storeWrite,
		build,
	)
	return m
}

// ObserveStoreWrite records one write to the store; it is the value for
// host.Options.OnStoreWrite.
func (m *Metrics) ObserveStoreWrite(d time.Duration) { m.storeWrite.Observe(d.Seconds()) }

// Watch registers the host's metrics. It is called once, with the host
// whose OnStoreWrite is ObserveStoreWrite.
func (m *Metrics) Watch(h *host.Host) {
	m.h = h
	m.reg.MustRegister(&hostCollector{h: h, agents: m.opts.Agents})
}

// Registry returns the registry (tests, and whoever adds metrics).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Healthz answers 200 while the process serves HTTP: it checks nothing
// else, so that a supervisor restarts ahpd only when it is stuck.
func Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, "ok")
	})
}

// Readyz answers 200 when the host can take work: the store saves changes
// (the host is not refusing work for a failing, damaged or stalled
// store) and the agents' first probes have ended. Otherwise it answers
// 503 with the reasons, one a line.
func (m *Metrics) Readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		var problems []string
		if m.h == nil {
			problems = append(problems, "the host is not started")
		} else if err := m.h.Stats().SaveError; err != nil {
			problems = append(problems, "store: "+err.Error())
		}
		if ch := m.opts.AgentsProbed; ch != nil {
			select {
			case <-ch:
			default:
				problems = append(problems, "agents: still being probed")
			}
		}
		if len(problems) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			for _, p := range problems {
				fmt.Fprintln(w, p)
			}
			return
		}
		fmt.Fprintln(w, "ready")
	})
}

// hostCollector reads the host's and the agents' stats at each scrape.
type hostCollector struct {
	h      *host.Host
	agents []*acp.Backend
}

var (
	descConnections   = prometheus.NewDesc("ahpd_connections", "Open client connections.", nil, nil)
	descSubscriptions = prometheus.NewDesc("ahpd_subscriptions", "Subscriptions of the open connections to channels.", nil, nil)
	descSessions      = prometheus.NewDesc("ahpd_sessions", "Sessions: stored counts every one, loaded those whose channels are in memory.", []string{"state"}, nil)
	descChats         = prometheus.NewDesc("ahpd_chats", "Chats of every session.", nil, nil)
	descChannels      = prometheus.NewDesc("ahpd_channels", "Channels in memory.", nil, nil)
	descActions       = prometheus.NewDesc("ahpd_actions_total", "Changes committed since ahpd started.", nil, nil)
	descQueueBytes    = prometheus.NewDesc("ahpd_queue_bytes", "Bytes queued to clients and not yet written to them.", nil, nil)
	descDropped       = prometheus.NewDesc("ahpd_clients_dropped_total", "Clients disconnected for falling behind their queue bound.", nil, nil)
	descReplayEntries = prometheus.NewDesc("ahpd_replay_entries", "Entries in the replay log.", nil, nil)
	descReplayBytes   = prometheus.NewDesc("ahpd_replay_bytes", "Bytes in the replay log.", nil, nil)
	descStoreBacklog  = prometheus.NewDesc("ahpd_store_backlog", "Changes waiting to be written to the store.", nil, nil)
	descStoreWrites   = prometheus.NewDesc("ahpd_store_writes_total", "Batches written to the store.", nil, nil)
	descStoreRetries  = prometheus.NewDesc("ahpd_store_write_failures_total", "Writes to the store that failed (and were retried).", nil, nil)
	descStoreOldest   = prometheus.NewDesc("ahpd_store_oldest_unsaved_seconds", "How long the oldest change not yet saved has waited.", nil, nil)
	descStoreOK       = prometheus.NewDesc("ahpd_store_ok", "1 while the store saves changes; 0 while the host refuses work because it cannot.", nil, nil)
	descTurnsRunning  = prometheus.NewDesc("ahpd_turns_running", "Turns running now.", nil, nil)
	descTurns         = prometheus.NewDesc("ahpd_turns_total", "Turns that ended, by outcome.", []string{"outcome"}, nil)
	descAgentSessions = prometheus.NewDesc("ahpd_agent_sessions", "Sessions open on an ACP agent.", []string{"agent"}, nil)
	descAgentProcs    = prometheus.NewDesc("ahpd_agent_processes", "Agent processes running.", []string{"agent"}, nil)
	descAgentRestarts = prometheus.NewDesc("ahpd_agent_restarts_total", "Agent processes restarted after a crash.", []string{"agent"}, nil)
)

func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConnections, descSubscriptions, descSessions, descChats, descChannels,
		descActions, descQueueBytes, descDropped, descReplayEntries, descReplayBytes, descStoreBacklog,
		descStoreWrites, descStoreRetries, descStoreOldest, descStoreOK, descTurnsRunning, descTurns,
		descAgentSessions, descAgentProcs, descAgentRestarts} {
		ch <- d
	}
}

func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.h.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(descConnections, float64(s.Connections))
	gauge(descSubscriptions, float64(s.Subscriptions))
	gauge(descSessions, float64(s.SessionsStored), "stored")
	gauge(descSessions, float64(s.SessionsLoaded), "loaded")
	gauge(descChats, float64(s.Chats))
	gauge(descChannels, float64(s.Channels))
	counter(descActions, float64(s.Actions))
	gauge(descQueueBytes, float64(s.QueueBytes))
	counter(descDropped, float64(s.Dropped))
	gauge(descReplayEntries, float64(s.ReplayEntries))
	gauge(descReplayBytes, float64(s.ReplayBytes))
	gauge(descStoreBacklog, float64(s.SaveBacklog))
	counter(descStoreWrites, float64(s.SaveBatches))
	counter(descStoreRetries, float64(s.SaveRetries))
	gauge(descStoreOldest, s.SaveOldest.Seconds())
	ok := 1.0
	if s.SaveError != nil {
		ok = 0
	}
	gauge(descStoreOK, ok)
	gauge(descTurnsRunning, float64(s.TurnsRunning))
	for _, outcome := range []string{host.TurnComplete, host.TurnError, host.TurnCancelled} {
		counter(descTurns, float64(s.TurnsEnded[outcome]), outcome)
	}
	for _, b := range c.agents {
		as := b.Stats()
		name := b.Config().Name
		gauge(descAgentSessions, float64(as.Sessions), name)
		gauge(descAgentProcs, float64(as.Processes), name)
		counter(descAgentRestarts, float64(as.Restarts), name)
	}
}
