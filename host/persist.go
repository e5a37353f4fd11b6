package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ahp-go/ahp/host/internal/journal"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
	"github.com/ahp-go/ahp/reducer"
	"github.com/ahp-go/ahp/store"
)

// How the host uses its store.
//
// Catalog: one entry per session (its summary as last announced, its chat
// URIs, whether a turn runs), written when any of them changes. The whole
// catalog is read at start; listSessions is served from memory.
//
// Channels: every session and chat channel has a snapshot and the log of
// its actions after it. A snapshot is written when the channel is created,
// whenever one of its turns ends or is truncated, and once the log holds
// at least snapshotEvery actions and outweighs the last snapshot (so a
// long streaming turn is not written again every few actions: the bytes
// written for snapshots stay proportional to the bytes logged; not while a
// chat's running turn makes it bigger than maxTurnSnapshot, which its end
// writes), and for every channel with a log when the host stops gracefully. Writing a
// snapshot drops the log before it. A chat's
// snapshot leaves out its completed turns, which are stored one by one, in
// order, as they end. Reading a channel back is its snapshot, the recent
// turns, and its logged actions replayed through the reducers with the
// clock of their first application, so the state comes back identical.
//
// serverSeq: the store records a limit the host may issue up to (a lease,
// renewed in the background long before it runs out). After a restart the
// host continues above the old limit, so every serverSeq is above every
// value issued before, written or not, and reconnecting clients that saw
// the old run get fresh snapshots rather than a replay.
const (
	snapshotEvery = 256
	// maxTurnSnapshot bounds the size-triggered snapshots of a chat while
	// a turn runs (see bigActiveTurn).
	maxTurnSnapshot = 4 << 20
	leaseStep       = 1 << 20
	catalogPage     = 500
	loadTimeout     = 30 * time.Second
)

// open reads the serverSeq and the catalog, and takes a new lease.
func (h *Host) open() error {
	ctx, cancel := context.WithTimeout(h.ctx, loadTimeout)
	defer cancel()
	last, err := h.st.Seq(ctx)
	if err != nil {
		return fmt.Errorf("host: reading the store: %w", err)
	}
	// Nothing after last was ever issued: start above it, and tell
	// reconnecting clients that nothing before can be replayed.
	h.seq = last + 1
	h.lastSeq.Store(h.seq)
	h.replay.Restart(h.seq)
	h.leaseAsked = h.seq + leaseStep
	if err := h.st.Write(ctx, store.Batch{store.SetSeq{Seq: h.leaseAsked}}); err != nil {
		return fmt.Errorf("host: writing to the store: %w", err)
	}
	h.jr = journal.New(h.st, journal.Options{
		Logger:  h.log,
		Now:     h.opts.Now,
		MaxAge:  h.opts.MaxSaveDelay,
		Gather:  h.opts.SaveWindow,
		Durable: h.seq,
		Lease:   h.leaseAsked,
		OnWrite: h.opts.OnStoreWrite,
	})

	var after *store.Position
	for {
		page, err := h.st.Sessions(ctx, after, catalogPage)
		if err != nil {
			return fmt.Errorf("host: reading the session catalog: %w", err)
		}
		for _, e := range page {
			var sum protocol.SessionSummary
			if err := protocol.Unmarshal(e.Summary, &sum); err != nil {
				return fmt.Errorf("host: the catalog entry of %s does not decode: %w", e.URI, err)
			}
			s := &session{
				uri:        e.URI,
				provider:   sum.Provider,
				backend:    h.agents[sum.Provider],
				createdAt:  sum.CreatedAt,
				modifiedAt: sum.ModifiedAt,
				memo:       memoOf(sum.Meta),
				chatURIs:   e.Chats,
				running:    e.Running,
			}
			h.sessions[s.uri] = s
			h.setSummaryLocked(s, sum)
			for _, c := range s.chatURIs {
				h.chatOwner[c] = s
			}
		}
		if len(page) < catalogPage {
			break
		}
		last := page[len(page)-1]
		after = &store.Position{ModifiedAt: last.ModifiedAt, URI: last.URI}
	}
	if n := len(h.sessions); n > 0 {
		h.log.Info("sessions restored from the store", "sessions", n, "serverSeq", h.seq)
	}
	return nil
}

// restoreRunning reads the sessions that had a turn running when the host
// stopped, which ends those turns as failed.
func (h *Host) restoreRunning() error {
	h.mu.Lock()
	var running []*session
	for _, s := range sortedSessions(h.sessions) {
		if s.running {
			running = append(running, s)
		}
	}
	h.mu.Unlock()
	for _, s := range running {
		if err := h.loadSession(h.ctx, s); err != nil {
			return fmt.Errorf("host: %w", err)
		}
	}
	return nil
}

// rebuildChannel decodes a stored channel and replays its logged actions.
func rebuildChannel(s *session, c store.Channel) (*channel, error) {
	// A session's own channel is its URI, whatever the scheme; the others
	// are its chats.
	kind := protocol.ChannelSession
	if c.Channel != s.uri {
		parsed, err := protocol.ParseChannel(c.Channel)
		if err != nil {
			return nil, err
		}
		kind = parsed.Kind
	}
	ch := &channel{uri: c.Channel, kind: kind, subs: map[*conn]*subscription{}, channelDomain: channelDomain{session: s, saved: savedSince{actions: len(c.Actions)}}}
	ch.saved.snapBytes.Store(int64(len(c.State)))
	for _, a := range c.Actions {
		ch.saved.bytes += len(a.Envelope)
	}
	switch kind {
	case protocol.ChannelSession:
		var st protocol.SessionState
		if err := protocol.Unmarshal(c.State, &st); err != nil {
			return nil, fmt.Errorf("the snapshot does not decode: %w", err)
		}
		ch.state = &st
	case protocol.ChannelChat:
		var cs protocol.ChatState
		if err := protocol.Unmarshal(c.State, &cs); err != nil {
			return nil, fmt.Errorf("the snapshot does not decode: %w", err)
		}
		cs.Turns = make([]protocol.Turn, len(c.Turns))
		cs.TurnsNextCursor = nil
		ch.chat.base = c.TurnCount - int64(len(c.Turns))
		for i, t := range c.Turns {
			if t.Ordinal != ch.chat.base+int64(i) {
				return nil, fmt.Errorf("turn %d is missing from the store", ch.chat.base+int64(i))
			}
			if err := protocol.Unmarshal(t.Data, &cs.Turns[i]); err != nil {
				return nil, fmt.Errorf("turn %d does not decode: %w", t.Ordinal, err)
			}
		}
		ch.chat.seqs = make([]int64, len(c.Turns))
		ch.state = &cs
	default:
		return nil, fmt.Errorf("a %s channel cannot be stored", kind)
	}
	// A store written before 1.x holds the older shapes; they come up to
	// 1.x here (the conversion leaves 1.x shapes alone).
	ch.state = storedShapes.UpState(ch.uri, ch.state)
	// Replay with the clock each action was first applied with, so the
	// times the reducers stamp come out the same.
	var at time.Time
	r := reducer.Reducer{Now: func() time.Time { return at }}
	for _, a := range c.Actions {
		var env protocol.ActionEnvelope
		if err := protocol.Unmarshal(a.Envelope, &env); err != nil {
			return nil, fmt.Errorf("action %d does not decode: %w", a.Seq, err)
		}
		at = time.UnixMilli(a.At)
		ch.state = r.Apply(ch.state, storedShapes.UpAction(ch.uri, env.Action))
	}
	return ch, nil
}

// storedShapes brings what an older ahpd stored (the shapes of 0.8.0) up
// to 1.x; values already in 1.x shapes pass unchanged.
var storedShapes = view.For("0.8.0")

// leaseLocked asks the store for a new serverSeq limit when half of the
// current one is used, and waits in the rare case the store has not
// recorded the limit the next serverSeq needs.
func (h *Host) leaseLocked() {
	if h.seq > h.leaseAsked-leaseStep/2 {
		h.leaseAsked = h.seq + leaseStep
		h.jr.Queue(h.seq, journal.Pending{Op: store.SetSeq{Seq: h.leaseAsked}})
	}
	if h.seq > h.jr.LeaseOK() {
		h.log.Warn("the store is far behind: waiting for it before issuing serverSeq", "serverSeq", h.seq)
		h.jr.WaitLease(h.seq)
	}
}

// persistLocked queues what the store needs to rebuild the channel after
// the change just committed (serverSeq h.seq, encoded as env).
func (h *Host) persistLocked(ch *channel, prev protocol.SnapshotState, a protocol.StateAction, env []byte) {
	seq := h.seq
	if ch.session == nil || env == nil {
		h.jr.Queue(seq) // root actions are derived at start, not stored
		return
	}
	if _, ok := a.(*protocol.ChatTurnsLoadedAction); ok {
		// The turns are in the store already; only the window moved.
		added := len(ch.state.(*protocol.ChatState).Turns) - len(prev.(*protocol.ChatState).Turns)
		ch.chat.base -= int64(added)
		ch.chat.gen++
		ch.chat.seqs = append(make([]int64, added), ch.chat.seqs...)
		h.jr.Queue(seq)
		return
	}
	var buf [3]journal.Pending
	ops := append(buf[:0], journal.Pending{Op: store.AppendAction{Action: store.Action{Seq: seq, Channel: ch.uri, At: h.clock.UnixMilli(), Envelope: env}}})
	ch.saved.actions++
	ch.saved.bytes += len(env)
	snap := ch.saved.actions >= snapshotEvery && int64(ch.saved.bytes) >= ch.saved.snapBytes.Load() && !bigActiveTurn(ch)
	ended := false
	if ch.kind == protocol.ChannelChat {
		pc, nc := prev.(*protocol.ChatState), ch.state.(*protocol.ChatState)
		switch {
		case nc == pc:
		case pc.ActiveTurn == nil && nc.ActiveTurn != nil && len(nc.Turns) == len(pc.Turns)-1:
			// chat/turnResume reopened the latest turn: its row goes until
			// the turn ends again.
			ch.chat.seqs = ch.chat.seqs[:min(len(ch.chat.seqs), len(nc.Turns))]
			ops = append(ops, journal.Pending{Op: store.TruncateTurns{Chat: ch.uri, Keep: ch.chat.base + int64(len(nc.Turns))}})
			snap = true
		case pc.ActiveTurn != nil && nc.ActiveTurn == nil && len(nc.Turns) == len(pc.Turns)+1:
			// A turn ended: store it under the next ordinal.
			t := &nc.Turns[len(nc.Turns)-1]
			uri, ord := ch.uri, ch.chat.base+int64(len(nc.Turns)-1)
			hint := sizeHint(ch)
			ops = append(ops, journal.Pending{Encode: func() (store.Op, error) {
				data, err := marshalSized(t, hint)
				return store.PutTurn{Turn: store.Turn{Chat: uri, Ordinal: ord, ID: t.ID, Data: data}}, err
			}})
			ch.chat.seqs = append(ch.chat.seqs, seq)
			snap, ended = true, true
		default:
			if tr, ok := a.(*protocol.ChatTruncatedAction); ok {
				if tr.TurnID == nil {
					ch.chat.base = 0
				}
				ch.chat.seqs = ch.chat.seqs[:min(len(ch.chat.seqs), len(nc.Turns))]
				ch.chat.gen++
				ops = append(ops, journal.Pending{Op: store.TruncateTurns{Chat: ch.uri, Keep: ch.chat.base + int64(len(nc.Turns))}})
				snap = true
			}
		}
	}
	if snap {
		ops = append(ops, snapshotOf(ch, seq))
		ch.saved.actions, ch.saved.bytes = 0, 0
	}
	h.jr.Queue(seq, ops...)
	if ended {
		h.trimTurnsLocked(ch)
	}
}

// bigActiveTurn reports whether the channel is a chat whose turn is
// running and whose state would encode to more than maxTurnSnapshot
// bytes. Its log then grows without size-triggered snapshots until the
// turn ends (which stores the turn and a snapshot): each would be one more
// whole copy of the streamed text on the heap while it is encoded and
// written, and the log already holds that text once.
func bigActiveTurn(ch *channel) bool {
	cs, ok := ch.state.(*protocol.ChatState)
	return ok && cs.ActiveTurn != nil && sizeHint(ch) > maxTurnSnapshot
}

// snapshotLoggedLocked queues a snapshot of every channel with actions
// logged since its last one, so that reading it back after a stop replays
// nothing (only a crash leaves a log to replay).
func (h *Host) snapshotLoggedLocked() {
	for _, ch := range h.channels {
		if ch.session == nil || ch.saved.actions == 0 {
			continue
		}
		h.jr.Queue(h.seq, snapshotOf(ch, h.seq))
		ch.saved.actions, ch.saved.bytes = 0, 0
	}
}

// snapshotOf returns the snapshot of a channel at serverSeq seq, to be
// encoded by the writer. A chat's completed turns are left out.
func snapshotOf(ch *channel, seq int64) journal.Pending {
	state, hint := ch.state, sizeHint(ch)
	if cs, ok := state.(*protocol.ChatState); ok {
		if cs.ActiveTurn == nil {
			hint = 0 // what the last snapshot held of a turn is in the turn's row now
		}
		head := cs.Clone()
		head.Turns = []protocol.Turn{}
		head.TurnsNextCursor = nil
		state = head
	}
	uri, sess := ch.uri, ch.session.uri
	return journal.Pending{Encode: func() (store.Op, error) {
		data, err := marshalSized(state, hint)
		ch.saved.snapBytes.Store(int64(len(data)))
		return store.PutSnapshot{Snapshot: store.Snapshot{Channel: uri, Session: sess, Seq: seq, State: data}}, err
	}}
}

// sizeHint estimates the encoded size of the channel's state from its
// last snapshot and what was logged since (envelopes, a little more than
// the state grew by).
func sizeHint(ch *channel) int {
	return int(ch.saved.snapBytes.Load()) + ch.saved.bytes
}

// marshalSized encodes v as protocol.Marshal does, into a buffer sized for
// hint bytes. A streamed turn's text can be most of the heap: encoding it
// into a buffer that grows by doubling and then copying the result (what
// Marshal does), or joining its blocks into one string first, would hold
// it two or three times at once.
func marshalSized(v any, hint int) ([]byte, error) {
	return protocol.MarshalSized(v, hint)
}

// catalogLocked queues the session's catalog entry.
func (h *Host) catalogLocked(s *session) {
	sum, chats, running := s.summary, slices.Clone(s.chatURIs), s.running
	h.jr.QueueCatalog(s.uri, h.seq, journal.Pending{Encode: func() (store.Op, error) {
		data, err := protocol.Marshal(&sum)
		return store.PutSession{Session: store.Session{URI: sum.Resource, ModifiedAt: sum.ModifiedAt, Summary: data, Chats: chats, Running: running}}, err
	}})
}

// syncCatalogLocked queues the catalog entry when the summary changed or a
// turn started or ended in one of the session's chats.
func (h *Host) syncCatalogLocked(s *session, summaryChanged bool) {
	running := false
	for _, ch := range s.chats {
		if ch.state.(*protocol.ChatState).ActiveTurn != nil {
			running = true
			break
		}
	}
	if summaryChanged || running != s.running {
		s.running = running
		h.catalogLocked(s)
	}
}

// trimTurnsLocked drops the oldest completed turns from memory once a chat
// holds twice the window, keeping only turns the store already has.
func (h *Host) trimTurnsLocked(ch *channel) {
	cs := ch.state.(*protocol.ChatState)
	keep := h.opts.RecentTurns
	if len(cs.Turns) <= 2*keep {
		return
	}
	durable := h.jr.DurableSeq()
	n := 0
	for n < len(cs.Turns)-keep && ch.chat.seqs[n] <= durable {
		n++
	}
	if n == 0 {
		return
	}
	trimmed := cs.Clone()
	trimmed.Turns = slices.Clone(cs.Turns[n:])
	ch.state = trimmed
	ch.chat.seqs = slices.Clone(ch.chat.seqs[n:])
	ch.chat.base += int64(n)
	ch.chat.gen++
}

// refuseLocked returns an error for a request that would change state
// while the store cannot keep up, or nil.
func (h *Host) refuseLocked(method string) error {
	if err := h.jr.Failing(); err != nil {
		return rpcError(protocol.CodeInternalError, "%s: the host cannot save changes right now, so nothing was changed: %v", method, err)
	}
	return nil
}

// savedReply waits until the change with serverSeq seq is saved, so that
// the reply to the request that made it means "saved".
func (h *Host) savedReply(ctx context.Context, method string, seq int64) error {
	wctx, cancel := context.WithTimeout(ctx, h.opts.MaxSaveDelay)
	defer cancel()
	err := h.jr.Wait(wctx, seq)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		why := "the store has not answered"
		if f := h.jr.Failing(); f != nil {
			why = f.Error()
		}
		return rpcError(protocol.CodeInternalError, "%s: done, but not saved within %v: %s (the host keeps trying)", method, h.opts.MaxSaveDelay, why)
	}
	if err != nil {
		return rpcError(protocol.CodeInternalError, "%s: done, but not saved: %v", method, err)
	}
	return nil
}
