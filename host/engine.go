package host

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/host/internal/replay"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
	"github.com/ahp-go/ahp/reducer"
)

// engine is the channel engine: the channels and their subscribers, the
// one lock, the host-wide sequence (serverSeq), the commit path (reduce,
// sequence, replay log, encode once, fan out) and notifications to
// subscribers. It knows channels, not what they mean: sessions, chats,
// turns and what follows from a change are the domain's (Host), which the
// engine tells of every commit through its hooks. Host embeds it; every
// method named ...Locked runs with mu held.
type engine struct {
	mu       sync.Mutex
	seq      int64
	lastSeq  atomic.Int64 // seq, readable without the lock
	clock    time.Time    // the time of the change being committed
	now      func() time.Time
	red      reducer.Reducer
	log      *slog.Logger
	channels map[string]*channel
	conns    map[*conn]struct{}
	replay   *replay.Log
	hooks    engineHooks
}

// channel is one state-bearing channel: its state, its subscribers, and
// the domain's part, which the engine does not read.
type channel struct {
	uri   string
	kind  protocol.ChannelKind
	state protocol.SnapshotState
	subs  map[*conn]*subscription
	// first is the subscriber that sent the last client action on the
	// channel, served before the others (nil when it is not subscribed).
	first *conn
	channelDomain
}

// engineHooks are the domain's part of the engine's work, called with mu
// held; they must not block.
type engineHooks struct {
	// sequenced is called once a serverSeq is issued (e.seq), before it
	// is used: the store's serverSeq lease.
	sequenced func()
	// committed is the after-commit hook, called for every commit once
	// the channel has its new state and the change has gone to the
	// subscribers: the change, the state before it, its origin, its
	// encoded envelope (nil when encoding failed) and what the running
	// step read from the store (rd, nil outside a step). Commits it makes
	// itself come back to it.
	committed func(rd *storeReads, ch *channel, prev protocol.SnapshotState, a protocol.StateAction, origin *protocol.ActionOrigin, env []byte)
}

// init readies an engine with no channel: logs go to log, now is the
// clock, replay the log of commits kept for reconnects.
func (e *engine) init(log *slog.Logger, now func() time.Time, replay *replay.Log, hooks engineHooks) {
	e.log, e.now, e.replay, e.hooks = log, now, replay, hooks
	e.channels = map[string]*channel{}
	e.conns = map[*conn]struct{}{}
	e.red = reducer.Reducer{Now: func() time.Time { return e.clock }}
}

// commitLocked is the one path every change takes: reduce, sequence, record
// in the replay log, encode once, queue to every subscriber that knows the
// action, then hand the change to the domain (engineHooks.committed): it
// queues it for the store and derives what follows (catalog and summary
// updates, agent events). It does not block (see leaseLocked for the one
// exception, when the store is far behind). It returns the encoded
// "action" notification (nil if encoding failed).
func (e *engine) commitLocked(ch *channel, a protocol.StateAction, origin *protocol.ActionOrigin) []byte {
	return e.commitReadLocked(nil, ch, a, origin)
}

// commitReadLocked is commitLocked in the change of a step (see step): what
// follows from the change (the transcripts of a turn's chat attachments)
// is derived with what the step read, rd.
func (e *engine) commitReadLocked(rd *storeReads, ch *channel, a protocol.StateAction, origin *protocol.ActionOrigin) []byte {
	prev := ch.state
	e.clock = e.now()
	next := e.red.Apply(prev, a)
	e.nextSeqLocked()
	env := protocol.ActionEnvelope{Channel: ch.uri, Action: a, ServerSeq: e.seq, Origin: origin}
	msg, body, err := encodeAction(&env)
	if err != nil {
		// Wire types always encode; this would be a bug. The state still
		// moves on so host and agents stay consistent.
		e.log.Error("encoding an action failed", "channel", ch.uri, "type", a.Type(), "err", err)
	} else {
		typ := a.Type()
		e.replay.Add(replay.Entry{Seq: e.seq, Channel: ch.uri, ActionType: typ, Envelope: body, Env: env, Bounded: true})
		// Connections that see other shapes get the action converted and
		// encoded once per set of shapes, and the same bytes when it does
		// not change.
		var other [view.Shapes][]byte // one encoding per set of shapes, no allocation
		send := func(c *conn) {
			if !c.knowsLocked(typ) {
				return
			}
			if c.view.Shape() == view.ShapeCurrent {
				c.sendLocked(msg)
				return
			}
			shaped := other[c.view.Shape()]
			if shaped == nil {
				shaped = msg
				if v := c.view.Envelope(&env); v != &env {
					if m, _, err := encodeAction(v); err == nil {
						shaped = m
					} else {
						e.log.Error("encoding an action failed", "channel", ch.uri, "type", typ, "err", err)
					}
				}
				other[c.view.Shape()] = shaped
			}
			c.sendLocked(shaped)
		}
		if origin != nil {
			ch.first = ch.subscriberLocked(origin.ClientID)
		}
		// The client that acted last on the channel (the sender of this
		// action, or of the prompt the agent is answering) is served
		// first: its writer starts before the other subscribers', so its
		// own echo does not wait behind every other subscriber's write.
		first := ch.first
		if _, ok := ch.subs[first]; ok {
			send(first)
		}
		for c := range ch.subs {
			if c != first {
				send(c)
			}
		}
	}
	ch.state = next
	e.hooks.committed(rd, ch, prev, a, origin, body)
	return msg
}

// nextSeqLocked issues the next serverSeq.
func (e *engine) nextSeqLocked() int64 {
	e.seq++
	e.lastSeq.Store(e.seq)
	e.hooks.sequenced()
	return e.seq
}

// broadcastLocked sends a protocol notification to the subscribers of a
// channel, and to the extra connections given, whose negotiated version
// knows it; each connection gets it once. Notifications are not sequenced
// or replayed.
func (e *engine) broadcastLocked(channel, method string, params any, extra ...map[*conn]*subscription) {
	ch, ok := e.channels[channel]
	if (!ok || len(ch.subs) == 0) && len(extra) == 0 {
		return
	}
	msg, err := encodeNotification(method, params)
	if err != nil {
		e.log.Error("encoding a notification failed", "method", method, "err", err)
		return
	}
	// Connections that see other shapes get the notification converted
	// and encoded once per set of shapes.
	var other map[view.Shape][]byte
	send := func(c *conn) {
		if !protocol.NotificationKnownToVersion(method, c.version) {
			return
		}
		if c.view.Shape() == view.ShapeCurrent {
			c.sendLocked(msg)
			return
		}
		shaped, ok := other[c.view.Shape()]
		if !ok {
			shaped = msg
			if p := c.view.Notification(method, params); p != params {
				if m, err := encodeNotification(method, p); err == nil {
					shaped = m
				} else {
					e.log.Error("encoding a notification failed", "method", method, "err", err)
				}
			}
			if other == nil {
				other = map[view.Shape][]byte{}
			}
			other[c.view.Shape()] = shaped
		}
		c.sendLocked(shaped)
	}
	if ok {
		for c := range ch.subs {
			send(c)
		}
	}
	for i, subs := range extra {
		for c := range subs {
			if ok && ch.subs[c] != nil || seenIn(c, extra[:i]) {
				continue
			}
			send(c)
		}
	}
}

func seenIn(c *conn, sets []map[*conn]*subscription) bool {
	for _, s := range sets {
		if _, ok := s[c]; ok {
			return true
		}
	}
	return false
}

// subscriberLocked returns a subscriber of ch with the given client ID, or
// nil.
func (ch *channel) subscriberLocked(clientID string) *conn {
	for c := range ch.subs {
		if c.clientID == clientID {
			return c
		}
	}
	return nil
}
