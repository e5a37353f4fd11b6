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
// One host-wide sequence number (serverSeq) orders all changes. Inside,
// that path is the channel engine's (engine.go); the session and chat
// domain (Host) validates, and derives what follows each change through
// the engine's after-commit hook.
//
// Methods: one table serves every client method. Which methods exist,
// which are requests or notifications and the params type of each come
// from protocol.Methods; the table adds a handler to each method the host
// serves, its own or a Workspace's (Workspace.Methods, made with Handle or
// HandleStrict), and is checked against protocol.Methods when New runs.
// Before any handler runs, the table refuses an unknown method, one sent
// before initialize, one outside the connection's negotiated protocol
// version and one the host does not serve (-32601), and decodes the params
// into their type, answering bad ones with -32602 naming the member. A
// handler that must tell an absent required member from an empty one is
// strict: it gets the absent members as an argument (HandleStrict).
//
// Persistence: the host writes every change through a store.Store
// (Options.Store; package store/sqlite keeps it on disk). Changes are queued
// while the host holds its lock and written in batches by one goroutine
// (group commit), so streaming never waits for a disk. At start the host
// reads the session catalog and the serverSeq; a session's channels are
// read on first use (subscribe, an action, fetchTurns), with a window of
// recent turns, and older turns are paged from the store. docs/persistence.md
// says what a crash can lose and which replies mean "saved".
//
// Concurrency: all methods of Host are safe for concurrent use. Internally
// one mutex guards every channel's state and the sequence; nothing blocks
// on the network or the disk while holding it (queues to clients, agents
// and the store never block). What a request needs from the store (a
// session not in memory yet, turns older than a chat's window) is read
// outside the lock, one read per session at a time. Work under the lock
// that may need the store is a step in two phases: a read phase, which
// changes nothing and is run again after each read, and a change, run
// once everything is at hand; the step type says the rule and
// Host.locked runs it. Validators answer with a typed *check.Rejection. Lock
// order: Host.mu, then a connection's queue lock or the journal's lock.
package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host/internal/journal"
	"github.com/ahp-go/ahp/host/internal/replay"
	"github.com/ahp-go/ahp/host/internal/storereader"
	"github.com/ahp-go/ahp/host/internal/versions"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/google/uuid"
)

// Defaults for Options.
const (
	DefaultReplayEntries   = 10000
	DefaultReplayBytes     = 64 << 20
	DefaultQueueSize       = 8192
	DefaultQueueBytes      = 32 << 20
	DefaultInitTimeout     = 30 * time.Second
	DefaultMaxMessageBytes = 4 << 20
	DefaultListLimit       = 100
	DefaultRecentTurns     = 100
	DefaultMaxSaveDelay    = 2 * time.Second
	DefaultSaveWindow      = 5 * time.Millisecond
	DefaultStoreReadShare  = 0.25
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
	// QueueSize and QueueBytes bound each connection's outbound queue, in
	// messages and in bytes. A client that falls this far behind is
	// disconnected with a reason (WebSocket status 1008) and can reconnect;
	// a client that stops reading costs at most QueueBytes. Zero means
	// DefaultQueueSize and DefaultQueueBytes.
	QueueSize  int
	QueueBytes int64
	// InitializeTimeout bounds how long a connection may stay without
	// initialize or reconnect; past it the connection is closed. Zero
	// means DefaultInitTimeout.
	InitializeTimeout time.Duration
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
	// Store keeps sessions, chats and turns across restarts. Nil means a
	// new store.NewMemory, which the host closes; a store given here is
	// the caller's to close, after Host.Close.
	Store store.Store
	// RecentTurns is how many completed turns of each chat the host keeps
	// in memory; older ones are read from the store when a client asks.
	// Zero means DefaultRecentTurns.
	RecentTurns int
	// MaxSaveDelay bounds how long a change may wait to be saved: past
	// it (a stalled or failing store) the host refuses new work until the
	// store catches up. Zero means DefaultMaxSaveDelay.
	MaxSaveDelay time.Duration
	// SaveWindow is how long changes nobody waits for may gather before
	// they are written to the store together: a crash can lose up to that
	// much more, and a steady stream costs one commit per window instead
	// of one per change. Zero means DefaultSaveWindow; negative writes
	// each batch as soon as the previous write ends.
	SaveWindow time.Duration
	// StoreReadShare is the share of the time that reads from the store
	// may take while they come back to back (a client subscribing to many
	// sessions that are not in memory) and the host is streaming (it
	// changed state in the last 100 ms): after a read that took d, the
	// next starts d×(1/share−1) later, at most 50 ms. A single read is not
	// delayed. Store reads are background work beside the streams to
	// clients, and a burst of them that keeps every CPU busy turns each
	// garbage collection into a stall of the streams. Zero means
	// DefaultStoreReadShare; 1 or more reads without pausing.
	StoreReadShare float64
	// OnStoreWrite, when set, is told how long each successful write of
	// a batch to the store took, on the store writer's goroutine (a
	// metrics histogram). It must return quickly.
	OnStoreWrite func(time.Duration)
	// Workspace, when set, is called once by New to make the Workspace
	// that serves files, terminals, watches and changesets, with the
	// WorkspaceHost it reaches the host through; the methods it lists
	// join the host's method table. Nil means the host answers those
	// methods with -32601.
	Workspace func(WorkspaceHost) (Workspace, error)
	// Automations, when set, is called once by New, after Workspace, to
	// make the automations the host serves (package automation), with the
	// AutomationHost they reach the host through; the methods they list
	// join the method table. Nil means none: the automation commands
	// answer -32601 and initialize advertises no automations.
	Automations func(AutomationHost) (Automations, error)
}

// Host is an AHP host. Create one with New.
//
// Inside, Host is the session and chat domain (sessions, chats, turns,
// moves, derived state, attachments, agents, persistence) on top of the
// channel engine it embeds (engine.go): the engine commits and fans out,
// and tells the domain of every commit through its hooks.
type Host struct {
	engine // the channels, the lock, the sequence and the commit path

	opts   Options
	agents map[string]agent.Backend

	ctx    context.Context // ends when the host closes
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines owned by the host

	st       store.Store
	ownStore bool
	jr       *journal.Journal

	// bulk holds a token for each bulk read (a catalog page) being
	// built; its capacity bounds them (Host.bulkRead).
	bulk chan struct{}

	reader *storereader.Reader // runs every read from the store

	// Guarded by engine.mu:
	closed     bool
	leaseAsked int64               // the serverSeq limit last queued for the store
	sessions   map[string]*session // every session, in memory or not
	catalog    *catalog            // every session, in listing order
	chatOwner  map[string]*session // chat URI -> its session, for every chat
	versions   *versions.Memory    // clientId -> last negotiated version, bounded
	// held are the sessions whose agent opened before anyone subscribed;
	// their session/ready or session/creationFailed waits for a first
	// subscriber (see releaseHeldLocked).
	held map[*session]struct{}

	ws Workspace // nil when none
	// routes is the method table: a route for every method clients may
	// send, the host's and the workspace's handlers in it. It is set by
	// New and read-only afterwards.
	routes map[string]route

	auto        Automations           // nil when none; set once by New
	turnWatches map[string]*turnWatch // chat URI -> its watched turn (StartSession)

	// For Stats: the serverSeq at start, the turns ended by outcome (both
	// guarded by mu) and the clients dropped for falling behind.
	startSeq int64
	turns    turnCounts
	dropped  atomic.Int64
}

// channelDomain is the domain's part of a channel: the engine carries it
// in the channel and never reads it.
type channelDomain struct {
	session *session     // owning session, nil for root
	owner   ChannelOwner // for channels opened with OpenChannel
	saved   savedSince
	chat    chatTurns // chats only
}

// savedSince measures what the store holds of a channel beyond its last
// snapshot.
type savedSince struct {
	// actions and bytes count the actions stored since the last snapshot
	// and their envelopes' size; snapBytes is that snapshot's size, set
	// by the store's writer once it has encoded it.
	actions   int
	bytes     int
	snapBytes atomic.Int64
}

// chatTurns is a chat's window on its completed turns: state.Turns holds
// those with ordinals base and up, older ones are in the store.
type chatTurns struct {
	base int64
	// seqs[i] is the serverSeq that completed state.Turns[i] in this run,
	// 0 for turns read from the store.
	seqs []int64
	// gen changes whenever base moves or stored turns are truncated, so
	// turns read from the store outside the lock are known to still match
	// (see storeMiss).
	gen int64
	// consuming is set while a queued message is being turned into a
	// turn (consumeQueuedLocked).
	consuming bool
}

// subscription is one connection's interest in one channel.
type subscription struct {
	ch *channel
	// turnsFrom is, for a chat, the ordinal of the oldest completed turn
	// the subscriber holds (its snapshot's window, widened by the pages it
	// was sent); -1 when not known (a subscription resumed by replay).
	turnsFrom int64
}

// New returns a host ready to serve connections. It reads the session
// catalog and the serverSeq from the store, and ends the turns that were
// running when the host last stopped. An unreadable store is an error.
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
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.InitializeTimeout <= 0 {
		o.InitializeTimeout = DefaultInitTimeout
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
		o.NewID = uuid.NewString
	}
	if o.StoreReadShare <= 0 {
		o.StoreReadShare = DefaultStoreReadShare
	}
	if o.RecentTurns <= 0 {
		o.RecentTurns = DefaultRecentTurns
	}
	if o.SaveWindow == 0 {
		o.SaveWindow = DefaultSaveWindow
	}
	if o.MaxSaveDelay <= 0 {
		o.MaxSaveDelay = DefaultMaxSaveDelay
	}
	h := &Host{
		opts:      o,
		agents:    map[string]agent.Backend{},
		st:        o.Store,
		sessions:  map[string]*session{},
		catalog:   newCatalog(),
		bulk:      make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 1)),
		chatOwner: map[string]*session{},
		held:      map[*session]struct{}{},
		versions:  versions.NewMemory(versions.MaxClients),
	}
	h.engine.init(o.Logger, o.Now, replay.New(o.ReplayEntries, o.ReplayBytes), engineHooks{
		sequenced: h.leaseLocked,
		committed: h.committed,
	})
	h.reader = storereader.New(o.StoreReadShare, h.lastSeq.Load)
	if h.st == nil {
		h.st, h.ownStore = store.NewMemory(), true
	}
	root := &protocol.RootState{Agents: []protocol.AgentInfo{}, ActiveSessions: protocol.Ptr[int64](0)}
	for _, b := range o.Agents {
		info := b.Info()
		if err := CheckProvider(info.Provider); err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		if _, dup := h.agents[info.Provider]; dup {
			return nil, errors.New("host: two agents with provider " + info.Provider)
		}
		h.agents[info.Provider] = b
		root.Agents = append(root.Agents, info)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.goFunc(func() {
		h.reader.Run(h.ctx, func(err error) {
			if err != nil {
				h.log.Debug("store reads run at normal priority", "err", err)
			}
		})
	})
	if err := h.open(); err != nil {
		h.cancel()
		if h.ownStore {
			h.st.Close()
		}
		return nil, err
	}
	h.startSeq = h.seq
	root.ActiveSessions = protocol.Ptr(int64(len(h.sessions)))
	h.channels[protocol.RootURI] = &channel{uri: protocol.RootURI, kind: protocol.ChannelRoot, state: root, subs: map[*conn]*subscription{}}
	h.jr.Start()
	if err := h.restoreRunning(); err != nil {
		h.shutdown(false)
		return nil, err
	}
	h.routes = hostRoutes
	var extra []Method // the methods of the workspace and the automations
	if o.Workspace != nil {
		ws, err := o.Workspace(workspaceHost{h})
		if err != nil {
			h.shutdown(false)
			return nil, fmt.Errorf("host: workspace: %w", err)
		}
		extra = ws.Methods()
		routes, err := buildRoutes(extra)
		if err != nil {
			err = errors.Join(err, ws.Close())
			h.shutdown(false)
			return nil, fmt.Errorf("host: workspace: %w", err)
		}
		h.routes = routes
		h.mu.Lock()
		h.ws = ws
		// Sessions loaded before the workspace existed (running ones,
		// restored above).
		if o := h.observerLocked(); o != nil {
			for uri, s := range h.sessions {
				if _, ok := h.channels[uri]; ok && s.loaded {
					o.SessionOpened(uri)
				}
			}
		}
		h.mu.Unlock()
	}
	if o.Automations != nil {
		a, err := o.Automations(automationHost{workspaceHost{h}})
		if err != nil {
			h.shutdown(false)
			return nil, fmt.Errorf("host: automations: %w", err)
		}
		routes, err := buildRoutes(append(slices.Clone(extra), a.Methods()...))
		if err != nil {
			err = errors.Join(err, a.Close())
			h.shutdown(false)
			return nil, fmt.Errorf("host: automations: %w", err)
		}
		h.routes = routes
		h.auto = a
	}
	return h, nil
}

// Close ends every running turn as failed, closes every connection with a
// reason, closes the agent sessions and backends, waits for the host's
// goroutines to stop, and writes what is still queued to the store. It
// returns an error when changes could not be saved.
func (h *Host) Close() error { return h.shutdown(true) }

// Shutdown is Close bounded by ctx. When ctx ends first, the connections
// still closing are dropped at once, without a closing handshake, and
// Shutdown returns an error wrapping ctx.Err() without waiting further:
// agents still stopping are left to the process's exit, and changes not
// saved by then may be lost (the error says so). ahpd calls it with
// --shutdown-grace.
func (h *Host) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- h.shutdown(true) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	for _, c := range conns {
		c.rpc.CloseNow()
	}
	select {
	case err := <-done:
		return err
	default:
	}
	h.log.Error("shutdown did not finish within its grace; changes not yet saved may be lost")
	return fmt.Errorf("host: shutdown did not finish in time (changes not yet saved may be lost): %w", ctx.Err())
}

// shutdown stops the host. A graceful one ends running turns and saves
// everything queued; the other is a crash as far as the store can tell:
// whatever is queued is dropped (tests use it).
func (h *Host) shutdown(graceful bool) error {
	var errs []error
	if h.auto != nil {
		// The scheduler stops first: no run starts on a closing host.
		errs = append(errs, h.auto.Close())
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	if graceful {
		h.endRunningTurnsLocked("the host is shutting down")
		h.snapshotLoggedLocked()
	}
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

	if !graceful {
		h.jr.Abandon()
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.closeWith(errHostShutdown) })
	}
	wg.Wait()
	for _, s := range sessions {
		s.stop()
	}
	if h.ws != nil {
		errs = append(errs, h.ws.Close())
	}
	h.cancel()
	h.wg.Wait()
	if graceful {
		if err := h.jr.Close(); err != nil {
			h.log.Error("changes were lost on shutdown", "err", err)
			errs = append(errs, fmt.Errorf("host: %w", err))
		}
	}
	if h.ownStore {
		errs = append(errs, h.st.Close())
	}
	for _, b := range h.opts.Agents {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}

// Sync waits until every change the host has made so far is saved in the
// store. ctx bounds the wait.
func (h *Host) Sync(ctx context.Context) error {
	h.mu.Lock()
	seq := h.seq
	h.mu.Unlock()
	return h.jr.Wait(ctx, seq)
}

// sortedSessions returns sessions ordered by URI.
func sortedSessions(m map[string]*session) []*session {
	out := make([]*session, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *session) int { return cmp.Compare(a.uri, b.uri) })
	return out
}

// now returns the current time formatted for the wire.
func (h *Host) now() string { return protocol.FormatTime(h.opts.Now()) }

// go runs f on a goroutine owned by the host.
// goIfOpen runs f on a goroutine of the host's unless the host is shut
// down or shutting down, and reports whether it did. Unlike goFunc it may
// be called without h.mu, from outside the host (an HTTP handler).
func (h *Host) goIfOpen(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.goFunc(f)
	return true
}

func (h *Host) goFunc(f func()) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
}
