// Package host is the AHP host engine: it owns the authoritative state of
// every channel, sequences every change, and fans it out to every
// subscribed client.
//
// Quick start:
//
//	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New()}})
//	if err != nil { ... }
//	defer h.Close()
//	http.Handle("/", h) // WebSocket endpoint
//
// Every change, whether a client dispatched it or an agent produced it,
// takes one path: validate, reduce with package reducer, record in the
// replay log, encode once, and queue the same bytes to every subscriber.
// One host-wide sequence number (serverSeq) orders all changes.
//
// Concurrency: all methods of Host are safe for concurrent use. Internally
// one mutex guards every channel's state and the sequence; nothing blocks
// while holding it (queues to clients and agents never block). Lock order:
// Host.mu, then a connection's outbox lock.
package host

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// Defaults for Options.
const (
	DefaultReplayEntries   = 10000
	DefaultReplayBytes     = 64 << 20
	DefaultQueueSize       = 8192
	DefaultMaxMessageBytes = 4 << 20
	DefaultListLimit       = 100
)

// Options configures a Host. The zero value is usable: an empty host with
// no agents.
type Options struct {
	// Agents are the agent providers sessions can be created on. The
	// first is the default when createSession names no provider.
	Agents []agent.Backend
	// ServerInfo identifies the host in initialize results. Empty means
	// name "ahpd".
	ServerInfo protocol.Implementation
	// DefaultDirectory is offered to clients as a starting point for
	// browsing (a file: URI); empty means none.
	DefaultDirectory string
	// ReplayEntries and ReplayBytes bound the replay log kept for
	// reconnecting clients. Zero means the defaults.
	ReplayEntries int
	ReplayBytes   int
	// QueueSize bounds each connection's outbound queue, in messages. A
	// client that falls this far behind is disconnected. Zero means
	// DefaultQueueSize.
	QueueSize int
	// MaxMessageBytes bounds an incoming message. Zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// Logger receives the host's logs. Nil discards them.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// NewID returns fresh identifiers for turns and chats created by the
	// host. Nil means random UUIDs.
	NewID func() string
}

// Host is an AHP host. Create one with New.
type Host struct {
	opts   Options
	log    *slog.Logger
	red    reducer.Reducer
	agents map[string]agent.Backend

	ctx    context.Context // ends when the host closes
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines owned by the host

	mu       sync.Mutex
	closed   bool
	seq      int64
	channels map[string]*channel
	sessions map[string]*session
	conns    map[*conn]struct{}
	replay   *replayLog
	versions map[string]string // clientId -> last negotiated version
}

// channel is one state-bearing channel.
type channel struct {
	uri     string
	kind    protocol.ChannelKind
	state   protocol.SnapshotState
	subs    map[*conn]*subscription
	session *session // owning session, nil for root
}

// subscription is one connection's interest in one channel.
type subscription struct {
	ch *channel
}

// New returns a host ready to serve connections.
func New(opts *Options) (*Host, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ServerInfo.Name == "" {
		o.ServerInfo.Name = "ahpd"
	}
	if o.ReplayEntries <= 0 {
		o.ReplayEntries = DefaultReplayEntries
	}
	if o.ReplayBytes <= 0 {
		o.ReplayBytes = DefaultReplayBytes
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = newUUID
	}
	h := &Host{
		opts:     o,
		log:      o.Logger,
		red:      reducer.Reducer{Now: o.Now},
		agents:   map[string]agent.Backend{},
		channels: map[string]*channel{},
		sessions: map[string]*session{},
		conns:    map[*conn]struct{}{},
		replay:   newReplayLog(o.ReplayEntries, o.ReplayBytes),
		versions: map[string]string{},
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	root := &protocol.RootState{Agents: []protocol.AgentInfo{}, ActiveSessions: protocol.Ptr[int64](0)}
	for _, b := range o.Agents {
		info := b.Info()
		if _, dup := h.agents[info.Provider]; dup {
			return nil, errors.New("host: two agents with provider " + info.Provider)
		}
		h.agents[info.Provider] = b
		root.Agents = append(root.Agents, info)
	}
	h.channels[protocol.RootURI] = &channel{uri: protocol.RootURI, kind: protocol.ChannelRoot, state: root, subs: map[*conn]*subscription{}}
	return h, nil
}

// Close ends every running turn as failed, closes every connection with a
// reason, closes the agent sessions and backends, and waits for the host's
// goroutines to stop.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.endRunningTurnsLocked("the host is shutting down")
	h.closed = true
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	sessions := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()

	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.closeWith(errHostShutdown) })
	}
	wg.Wait()
	for _, s := range sessions {
		s.stop()
	}
	h.cancel()
	h.wg.Wait()
	var errs []error
	for _, b := range h.opts.Agents {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}

var errHostShutdown = errors.New("host shutting down")

// now returns the current time formatted for the wire.
func (h *Host) now() string { return protocol.FormatTime(h.opts.Now()) }

// go runs f on a goroutine owned by the host.
func (h *Host) goFunc(f func()) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
}
