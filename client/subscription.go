package client

import (
	"context"
	"sync"

	"github.com/ahp-go/ahp/protocol"
)

// An Event is one item of a subscription's stream. Exactly one of
// Envelope, Notification and Resync is set.
type Event struct {
	// Envelope is an action envelope on the channel: a change from anyone,
	// the echo of one of this client's actions, or the rejection of one
	// (RejectionReason set).
	Envelope *protocol.ActionEnvelope
	// Replayed reports an envelope sent in the replay that resumed the
	// subscription after a reconnection.
	Replayed bool

	// Notification is a protocol notification scoped to the channel, such
	// as root/sessionAdded on the root channel.
	Notification *Notification

	// Resync is the fresh snapshot that replaced the channel's state after
	// a reconnection the host could not replay.
	Resync *protocol.Snapshot
}

// A Notification is a protocol notification as received.
type Notification struct {
	// Method is the notification's method, such as "root/sessionAdded".
	Method string
	// Params points to the method's params type, such as
	// *protocol.SessionAddedParams.
	Params any
}

// A Subscription is the client's view of one channel: the state mirrored
// from the host (with the client's own pending actions applied), a stream
// of what arrives on the channel, and watchers of the state. Create one
// with Client.Subscribe.
//
// All methods are safe for concurrent use. The stream (Next) is meant for
// one reader.
type Subscription struct {
	c    *Client
	uri  string
	snap protocol.Snapshot
	q    *eventQueue

	// Guarded by c.mu.
	ch        *feed // nil until the host answered
	watchers  map[*watcher]struct{}
	abandoned bool // the Subscribe call gave up before the answer came
}

func newSubscription(c *Client, uri string) *Subscription {
	return &Subscription{c: c, uri: uri, q: newEventQueue(c.opts.StreamBuffer), watchers: map[*watcher]struct{}{}}
}

// Channel returns the channel URI.
func (s *Subscription) Channel() string { return s.uri }

// Snapshot returns the snapshot the subscription started from. A second
// subscription to a channel the client already follows starts from the
// client's confirmed state instead of asking the host again.
func (s *Subscription) Snapshot() protocol.Snapshot { return s.snap }

// State returns the channel's optimistic state: the host's state with this
// client's actions that the host has not yet echoed applied on top. It is
// nil for a channel without state. StateOf, Root, Session, Chat and
// Terminal return it typed. The value is shared and must not be
// modified; it stays valid (states are never changed in place).
func (s *Subscription) State() protocol.SnapshotState {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.ch == nil || s.ch.m == nil {
		return nil
	}
	return s.ch.m.optimistic
}

// StateOf returns the subscription's optimistic state (see
// Subscription.State) when it is a T, and the zero value (nil) otherwise:
// StateOf[*protocol.ChangesetState](sub). Root, Session, Chat and Terminal
// are shorthands for the usual kinds.
func StateOf[T protocol.SnapshotState](s *Subscription) T {
	st, _ := s.State().(T)
	return st
}

// Root returns the optimistic state of the root channel, or nil when the
// subscription is to another kind of channel.
func (s *Subscription) Root() *protocol.RootState { return StateOf[*protocol.RootState](s) }

// Session returns the optimistic state of a session channel, or nil when
// the subscription is to another kind of channel.
func (s *Subscription) Session() *protocol.SessionState { return StateOf[*protocol.SessionState](s) }

// Chat returns the optimistic state of a chat channel, or nil when the
// subscription is to another kind of channel.
func (s *Subscription) Chat() *protocol.ChatState { return StateOf[*protocol.ChatState](s) }

// Terminal returns the optimistic state of a terminal channel, or nil
// when the subscription is to another kind of channel.
func (s *Subscription) Terminal() *protocol.TerminalState { return StateOf[*protocol.TerminalState](s) }

// Confirmed returns the state as the host has sequenced it, without this
// client's pending actions, and the serverSeq it reflects.
func (s *Subscription) Confirmed() (protocol.SnapshotState, int64) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.ch == nil || s.ch.m == nil {
		return nil, 0
	}
	return s.ch.m.confirmed, s.ch.m.seq
}

// Pending returns this client's actions on the channel that the host has
// not echoed yet, oldest first.
func (s *Subscription) Pending() []protocol.StateAction {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.ch == nil || s.ch.m == nil {
		return nil
	}
	out := make([]protocol.StateAction, len(s.ch.m.pending))
	for i, p := range s.ch.m.pending {
		out[i] = p.action
	}
	return out
}

// Dispatch dispatches a client action on the subscription's channel; see
// Client.Dispatch.
func (s *Subscription) Dispatch(ctx context.Context, action protocol.StateAction) (*Receipt, error) {
	return s.c.Dispatch(ctx, s.uri, action)
}

// Next returns the next event of the channel, waiting for one until ctx
// ends. Once the subscription has ended (Close, the client closing, the
// channel disappearing) and the remaining events are read, it returns why:
// ErrClosed, ErrChannelGone or the client's error.
//
// Events wait in a queue bounded by Options.StreamBuffer. When the queue
// is full the waiting events are discarded and the next call returns
// ErrLagged once; the subscription's state is never affected.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	return s.q.next(ctx)
}

// Done returns a channel that is closed when the subscription ends.
func (s *Subscription) Done() <-chan struct{} { return s.q.ended }

// Err returns nil while the subscription is live, and afterwards why it
// ended.
func (s *Subscription) Err() error { return s.q.endErr() }

// Watch calls fn with the optimistic state now and again after every
// change, on a goroutine of its own, one call at a time. When changes come
// faster than fn returns, fn is next called with the latest state, so it
// may not see every intermediate one. fn must not call Close on the
// client.
//
// Calling stop ends the watch: no call starts after stop returns, though
// one already running may still be (stop may be called from fn). Watches
// also end with the subscription. Client.Close waits for running calls.
func (s *Subscription) Watch(fn func(state protocol.SnapshotState)) (stop func()) {
	w := &watcher{fn: fn, signal: make(chan struct{}, 1), stop: make(chan struct{})}
	w.signal <- struct{}{}
	c := s.c
	c.mu.Lock()
	if !c.closed {
		s.watchers[w] = struct{}{}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			w.run(s)
		}()
	}
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			delete(s.watchers, w)
			c.mu.Unlock()
			close(w.stop)
		})
	}
}

// WatchOf is Watch with the state typed: fn is called with the optimistic
// state when it is a T (never with nil), and not called otherwise.
func WatchOf[T protocol.SnapshotState](s *Subscription, fn func(state T)) (stop func()) {
	return s.Watch(func(st protocol.SnapshotState) {
		if t, ok := st.(T); ok && st != nil {
			fn(t)
		}
	})
}

// Close ends the subscription. When it was the client's last subscription
// to the channel, the client stops mirroring the channel and tells the
// host.
func (s *Subscription) Close() error {
	s.c.detach(s, ErrClosed)
	return nil
}

// signalLocked wakes the subscription's watchers.
func (s *Subscription) signalLocked() {
	for w := range s.watchers {
		select {
		case w.signal <- struct{}{}:
		default:
		}
	}
}

// endLocked ends the stream and the watchers.
func (s *Subscription) endLocked(err error) {
	s.q.end(err)
	clear(s.watchers)
}

// watcher is one Watch call.
type watcher struct {
	fn     func(protocol.SnapshotState)
	signal chan struct{} // holds a token after a change
	stop   chan struct{}
}

func (w *watcher) run(s *Subscription) {
	var last protocol.SnapshotState
	first := true
	for {
		select {
		case <-w.signal:
		case <-w.stop:
			return
		case <-s.q.ended:
			return
		case <-s.c.done:
			return
		}
		st := s.State()
		if !first && st == last {
			continue
		}
		first, last = false, st
		select {
		case <-w.stop:
			return
		default:
		}
		w.fn(st)
	}
}

// eventQueue is a subscription's stream: a bounded FIFO that never blocks
// the producer.
type eventQueue struct {
	mu     sync.Mutex
	items  []Event
	limit  int
	lagged bool
	err    error
	wake   chan struct{} // holds a token after a push
	ended  chan struct{} // closed by end
}

func newEventQueue(limit int) *eventQueue {
	return &eventQueue{limit: limit, wake: make(chan struct{}, 1), ended: make(chan struct{})}
}

func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	if q.err != nil {
		q.mu.Unlock()
		return
	}
	if len(q.items) >= q.limit {
		clear(q.items)
		q.items = q.items[:0]
		q.lagged = true
	}
	q.items = append(q.items, ev)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) end(err error) {
	if err == nil {
		err = ErrClosed
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
		close(q.ended)
	}
}

func (q *eventQueue) endErr() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

func (q *eventQueue) next(ctx context.Context) (Event, error) {
	for {
		q.mu.Lock()
		if q.lagged {
			q.lagged = false
			q.mu.Unlock()
			return Event{}, ErrLagged
		}
		if len(q.items) > 0 {
			ev := q.items[0]
			q.items[0] = Event{}
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = nil
			}
			q.mu.Unlock()
			return ev, nil
		}
		if q.err != nil {
			err := q.err
			q.mu.Unlock()
			return Event{}, err
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-q.ended:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}
