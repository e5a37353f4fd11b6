package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// ConnectionState names a step of losing and regaining the connection.
type ConnectionState int

// The connection states reported to Options.OnConnection.
const (
	// Disconnected: the connection was lost (Err says why). Requests wait
	// for the client to reconnect, bounded by their contexts.
	Disconnected ConnectionState = iota + 1
	// Reconnecting: an attempt to reconnect starts after Delay. Err is why
	// the previous attempt failed, nil before the first.
	Reconnecting
	// Reconnected: the connection is back and every mirror caught up;
	// Resume says how.
	Reconnected
	// Stopped: the client gave up (Err says why) and is closed.
	Stopped
)

func (s ConnectionState) String() string {
	switch s {
	case Disconnected:
		return "disconnected"
	case Reconnecting:
		return "reconnecting"
	case Reconnected:
		return "reconnected"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("ConnectionState(%d)", int(s))
}

// A ConnectionEvent reports a change of the connection to the host.
type ConnectionEvent struct {
	State   ConnectionState
	Err     error
	Attempt int           // Reconnecting: 1 for the first attempt
	Delay   time.Duration // Reconnecting: the wait before the attempt
	Resume  *Resume       // Reconnected
}

// Resume describes how the client caught up after reconnecting.
type Resume struct {
	// Replayed is true when the host replayed the envelopes the client
	// missed, false when it sent fresh snapshots instead (subscriptions
	// then receive an Event with Resync set).
	Replayed bool
	// Actions is the number of envelopes replayed.
	Actions int
	// Missing lists the channels the host could no longer resume (a
	// session disposed meanwhile, or a host that restarted without them).
	// Their subscriptions ended with ErrChannelGone.
	Missing []string
	// Unconfirmed lists the client's actions that were still pending;
	// they were dropped from the mirrors, and their receipts settled with
	// ErrNotConfirmed.
	Unconfirmed []*Receipt
	// Sessions is the session list, fetched again because the catalog
	// notifications sent while the client was away are lost.
	// SessionsErr is why it could not be fetched, if it could not.
	Sessions    []protocol.SessionSummary
	SessionsErr error
}

// supervise watches the connection and reconnects when it is lost, until
// the client closes or gives up.
func (c *Client) supervise(l *link) {
	for {
		select {
		case <-l.rpc.Done():
		case <-c.ctx.Done():
			return
		}
		cause := l.rpc.Err()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		if c.link == l {
			c.link = nil
			c.linkUp = make(chan struct{})
		}
		initialized := c.initialized
		c.mu.Unlock()
		if !initialized || c.opts.MaxReconnectAttempts < 0 {
			err := fmt.Errorf("%w: %w", ErrDisconnected, cause)
			c.emit(ConnectionEvent{State: Stopped, Err: err})
			c.stop(err)
			return
		}
		c.log.Info("connection lost; reconnecting", "err", cause)
		c.emit(ConnectionEvent{State: Disconnected, Err: cause})
		next, resume, err := c.reconnect()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			c.log.Warn("reconnecting failed; giving up", "err", err)
			c.emit(ConnectionEvent{State: Stopped, Err: err})
			c.stop(err)
			return
		}
		c.log.Info("reconnected", "replayed", resume.Replayed, "actions", resume.Actions, "missing", len(resume.Missing))
		c.emit(ConnectionEvent{State: Reconnected, Resume: resume})
		l = next
	}
}

// reconnect tries to reconnect, with backoff, until it succeeds, fails
// for good, runs out of attempts or the client closes.
func (c *Client) reconnect() (*link, *Resume, error) {
	var last error
	for attempt := 1; ; attempt++ {
		if limit := c.opts.MaxReconnectAttempts; limit > 0 && attempt > limit {
			return nil, nil, fmt.Errorf("ahp: gave up reconnecting after %d attempts: %w", limit, last)
		}
		delay := c.backoff(attempt)
		c.emit(ConnectionEvent{State: Reconnecting, Err: last, Attempt: attempt, Delay: delay})
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return nil, nil, ErrClosed
		}
		l, r, err := c.attempt()
		if err == nil {
			return l, r, nil
		}
		if c.ctx.Err() != nil {
			return nil, nil, ErrClosed
		}
		c.log.Debug("reconnection attempt failed", "attempt", attempt, "err", err)
		if permanent(err) {
			return nil, nil, err
		}
		last = err
	}
}

// backoff returns the wait before an attempt: exponential, capped, with
// full jitter.
func (c *Client) backoff(attempt int) time.Duration {
	bound := c.opts.MaxReconnectDelay
	if shift := attempt - 1; shift < 30 {
		if d := c.opts.ReconnectDelay << shift; d > 0 && d < bound {
			bound = d
		}
	}
	return rand.N(bound + 1)
}

// reconnectVersionsMeta is host.ReconnectVersionsMeta (this package does
// not import the host's).
const reconnectVersionsMeta = "ahp-go/protocolVersions"

// attempt dials and resumes once.
func (c *Client) attempt() (*link, *Resume, error) {
	ctx, cancel := context.WithTimeout(c.ctx, attemptTimeout)
	defer cancel()
	t, err := c.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	l := newLink(c, t)
	c.mu.Lock()
	uris := make([]string, 0, len(c.channels))
	for uri := range c.channels {
		uris = append(uris, uri)
	}
	last := c.lastSeq
	offered := []string{c.version}
	c.mu.Unlock()
	slices.Sort(uris)
	r := &Resume{}
	p := &protocol.ReconnectParams{ClientID: c.id, LastSeenServerSeq: last, Subscriptions: uris}
	if v, err := protocol.Marshal(offered); err == nil && offered[0] != "" {
		// A host that restarted no longer knows the version this client
		// negotiated; ahpd speaks it again if it can
		// (host.ReconnectVersionsMeta), other hosts ignore this.
		p.Meta = map[string]jsontext.Value{reconnectVersionsMeta: v}
	}
	err = l.orderedCall(ctx, "reconnect", p, func(raw jsontext.Value) error {
		return c.resume(l, uris, raw, r)
	})
	if errors.Is(err, ErrInvalidRequest) {
		// A host that does not know this client (it restarted, say)
		// cannot tell which version it spoke: initialize again, on the same
		// connection, and resynchronize from the snapshots.
		c.log.Info("the host does not know this client; initializing again", "err", err)
		err = c.reinitialize(ctx, l, uris, r)
	}
	if err != nil {
		c.mu.Lock()
		l.abandoned = true
		c.mu.Unlock()
		l.rpc.Close()
		return nil, nil, err
	}
	// Channels whose subscriptions all closed while the client was away
	// were just resumed by the host: release them.
	c.mu.Lock()
	var stale []string
	for _, uri := range uris {
		if c.channels[uri] == nil && !slices.Contains(r.Missing, uri) {
			stale = append(stale, uri)
		}
	}
	c.mu.Unlock()
	for _, uri := range stale {
		c.unsubscribe(l, uri)
	}
	r.Sessions, r.SessionsErr = c.sessions(ctx, l)
	return l, r, nil
}

// reinitialize sends initialize on a new connection in place of reconnect,
// offering what the first Initialize offered and subscribing to the
// channels the client follows, and resumes from the snapshots like a
// reconnect that answered with snapshots.
func (c *Client) reinitialize(ctx context.Context, l *link, uris []string, r *Resume) error {
	c.mu.Lock()
	p := c.initParams
	c.mu.Unlock()
	p.InitialSubscriptions = uris
	return l.orderedCall(ctx, "initialize", &p, func(raw jsontext.Value) error {
		var res protocol.InitializeResult
		if err := protocol.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("ahp: initialize: decoding the result: %w", err)
		}
		c.mu.Lock()
		c.version = res.ProtocolVersion
		c.view = view.For(res.ProtocolVersion)
		c.mu.Unlock()
		return c.apply(l, uris, &protocol.ReconnectSnapshotResult{Snapshots: res.Snapshots}, r)
	})
}

// resume applies the answer to reconnect, on the reader goroutine, and
// makes the new connection the current one.
func (c *Client) resume(l *link, sent []string, raw jsontext.Value, r *Resume) error {
	res, err := protocol.UnmarshalReconnectResult(raw)
	if err != nil {
		return fmt.Errorf("ahp: reconnect: decoding the result: %w", err)
	}
	return c.apply(l, sent, res, r)
}

// apply applies a reconnect result and makes the new connection the
// current one.
func (c *Client) apply(l *link, sent []string, res protocol.ReconnectResult, r *Resume) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || l.abandoned {
		return ErrClosed
	}
	switch res := res.(type) {
	case *protocol.ReconnectReplayResult:
		r.Replayed = true
		r.Actions = len(res.Actions)
		for i := range res.Actions {
			c.receiveLocked(&res.Actions[i], true)
		}
		r.Missing = append(r.Missing, res.Missing...)
	case *protocol.ReconnectSnapshotResult:
		got := map[string]bool{}
		first := true
		for i := range res.Snapshots {
			snap := &res.Snapshots[i]
			ch := c.channels[snap.Resource]
			if ch == nil {
				continue
			}
			got[snap.Resource] = true
			if first {
				// A host that restarted counts from scratch: its numbers,
				// not the old ones, are what the next reconnect must quote.
				c.lastSeq, first = snap.FromSeq, false
			} else {
				c.lastSeq = max(c.lastSeq, snap.FromSeq)
			}
			if snap.State == nil {
				continue
			}
			c.upLocked(snap)
			if ch.m == nil {
				ch.m = newMirror(c.id, c.red, snap)
			} else {
				ch.m.reset(snap)
			}
			ev := Event{Resync: snap}
			for _, s := range ch.subs {
				s.q.push(ev)
			}
			ch.signalLocked()
		}
		for _, uri := range sent {
			if ch := c.channels[uri]; ch != nil && ch.m != nil && !got[uri] {
				r.Missing = append(r.Missing, uri)
			}
		}
	default:
		return fmt.Errorf("ahp: reconnect: unknown result type %q", res.Type())
	}
	// reconciliation.md: after a replay or snapshots, pending actions are
	// cleared; the confirmed state is what the host has.
	for _, ch := range c.channels {
		if ch.m == nil || len(ch.m.pending) == 0 {
			continue
		}
		for _, p := range ch.m.clearPending() {
			if p.receipt != nil {
				p.receipt.resolve(ErrNotConfirmed)
				r.Unconfirmed = append(r.Unconfirmed, p.receipt)
			}
		}
		ch.signalLocked()
	}
	for _, uri := range r.Missing {
		if ch := c.channels[uri]; ch != nil {
			delete(c.channels, uri)
			for _, s := range ch.subs {
				s.endLocked(ErrChannelGone)
			}
			ch.subs = nil
		}
	}
	c.link = l
	close(c.linkUp)
	return nil
}

// Sessions returns the whole session list, most recently modified first,
// following the host's pages.
func (c *Client) Sessions(ctx context.Context) ([]protocol.SessionSummary, error) {
	l, err := c.current(ctx, true)
	if err != nil {
		return nil, err
	}
	return c.sessions(ctx, l)
}

// maxSessionPages bounds how many pages Sessions follows.
const maxSessionPages = 1000

func (c *Client) sessions(ctx context.Context, l *link) ([]protocol.SessionSummary, error) {
	items := []protocol.SessionSummary{}
	var cursor *string
	for range maxSessionPages {
		var res protocol.ListSessionsResult
		err := l.rpc.Call(ctx, "listSessions", &protocol.ListSessionsParams{Cursor: cursor}, &res)
		v := c.shapes()
		if err != nil {
			return items, wrapCallError("listSessions", upError(v, err))
		}
		items = append(items, v.UpSummaries(res.Items)...)
		if res.NextCursor == nil || *res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	return items, nil
}

// emit queues a connection event for Options.OnConnection.
func (c *Client) emit(ev ConnectionEvent) {
	if c.events != nil {
		c.events.push(ev)
	}
}

// eventPump delivers connection events in order on one goroutine; pushing
// never blocks.
type eventPump struct {
	fn   func(ConnectionEvent)
	mu   sync.Mutex
	q    []ConnectionEvent
	wake chan struct{}
}

func newEventPump(fn func(ConnectionEvent)) *eventPump {
	return &eventPump{fn: fn, wake: make(chan struct{}, 1)}
}

func (p *eventPump) push(ev ConnectionEvent) {
	p.mu.Lock()
	p.q = append(p.q, ev)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run delivers events until ctx ends, then delivers what is left.
func (p *eventPump) run(ctx context.Context) {
	for {
		p.mu.Lock()
		batch := p.q
		p.q = nil
		p.mu.Unlock()
		for _, ev := range batch {
			p.fn(ev)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-p.wake:
		case <-ctx.Done():
			p.mu.Lock()
			batch := p.q
			p.q = nil
			p.mu.Unlock()
			for _, ev := range batch {
				p.fn(ev)
			}
			return
		}
	}
}
