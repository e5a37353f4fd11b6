package host

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host/internal/storereader"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Reading from the store never happens under h.mu. Work that needs the
// lock and may need the store is a step (see the step type), run by
// Host.locked: a step that finds that it needs something the store holds
// (a session not loaded yet, turns older than a chat's window) returns a
// *storeMiss from its read phase; Host.locked then releases the lock,
// reads what was missing, and runs the read phase again with it at hand.
// Sessions are read once however many steps wait for them (single-flight)
// and installed under the lock. Every read runs on the host's one store
// reader (package storereader), one at a time: reading and decoding a
// session is CPU work, and streams to clients must keep the rest of the
// machine.

// loadedTurns is how many completed turns of each chat a session brings
// into memory when it is read: the latest only (which chat/turnResume may
// reopen). Reading a session (to subscribe to it, or to list its chats)
// needs none of them, and a chat's window of recent turns is read when a
// snapshot first asks for it (snapshotStateLocked keeps it), so loading
// many sessions costs little memory and little collection.
const loadedTurns = 1

// maxStoreReads bounds how often one step may go back to the store (a
// truncation reads older turns a page at a time); each
// read makes progress unless the chat keeps moving under it.
const maxStoreReads = 1 << 10

// storeMiss is what a step under the lock needs from the store.
type storeMiss struct {
	session *session   // load this session
	turns   *turnRange // or read these turns
}

func (m *storeMiss) Error() string {
	if m.session != nil {
		return "host: session " + m.session.uri + " is not loaded"
	}
	return fmt.Sprintf("host: turns %d to %d of %s are not in memory", m.turns.from, m.turns.to-1, m.turns.chat)
}

// turnRange names the completed turns with ordinals in [from, to) of a
// chat, as stored while the chat's stored turns had generation gen.
type turnRange struct {
	chat     string
	gen      int64
	from, to int64
}

// storeReads is what one step has read from the store outside the lock.
// A step reaches everything that may be in the store through it (or
// through functions that take it: channelLocked, storedTurnsLocked), and
// it is the only way to: no Host field carries it.
type storeReads struct {
	turns  map[turnRange][]protocol.Turn
	failed map[*session]error // sessions that could not be read
	// sealed is set once the step's read phase has ended: a lookup of
	// something not read then fails with errReadAfterChange instead of
	// asking for a read, which would run the change twice.
	sealed bool
}

// errReadAfterChange is the error of a lookup that would need the store
// once a step has started changing things: a bug in the step, which reads
// everything it needs in its read phase. The step is not run again.
var errReadAfterChange = errors.New("host: a step asked for data from the store after it began to change things")

// miss returns m as the lookup's error: a *storeMiss while the step reads,
// errReadAfterChange once it changes.
func (rd *storeReads) miss(m *storeMiss) error {
	if rd != nil && rd.sealed {
		return fmt.Errorf("%w (%v)", errReadAfterChange, m)
	}
	return m
}

// A step is work under h.mu that may need data from the store, in two
// phases, so that a step changes nothing before its last read:
//
//   - The read phase is the step itself. It looks at the host's state and
//     finds what it needs, reaching the store only through rd. When
//     something is missing it returns the *storeMiss it got; Host.locked
//     then reads it outside the lock and runs the read phase again, with
//     everything read so far in rd. A read phase must change nothing
//     (clients, channels, the store, the sequence), since it may run many
//     times; the one exception is keepOlderTurnsLocked, which widens a
//     chat's in-memory window with turns just read and changes nothing a
//     client or the store sees. It answers with the change to make, or
//     nil when there is nothing to change.
//   - The change is the second phase. It runs once, right after the read
//     phase that returned it, in the same hold of the lock, so nothing
//     moves in between. It may look up what the read phase read (rd is
//     sealed by then), but a lookup of anything else fails with
//     errReadAfterChange rather than asking for a read: a change never
//     runs twice.
//
// Whatever the read phase decides (a rejection to send, say) happens in
// the change.
type step func(rd *storeReads) (change, error)

// change is the second phase of a step: see step.
type change func() error

// locked runs st under h.mu: its read phase until it has read all it
// needs from the store, then its change (see step). It returns the
// change's error, or the read phase's when that ends the step.
func (h *Host) locked(ctx context.Context, st step) error {
	h.leaseRoom()
	rd := &storeReads{} // its maps are made on the first read: most steps read nothing
	for range maxStoreReads {
		err := h.lockedStep(rd, st)
		var miss *storeMiss
		if !errors.As(err, &miss) {
			return err
		}
		if miss.session != nil {
			err = h.loadSession(ctx, miss.session)
			if err != nil && ctx.Err() == nil {
				// The step sees the failure as the channel's error, and
				// decides: a subscribe fails, initialize skips it.
				if rd.failed == nil {
					rd.failed = map[*session]error{}
				}
				rd.failed[miss.session] = err
				err = nil
			}
		} else {
			err = h.readTurns(ctx, rd, *miss.turns)
		}
		if err != nil {
			return err
		}
	}
	return errors.New("host: the store kept changing while reading it")
}

// lockedStep runs one read phase of st and, when it asks for nothing more
// from the store, its change.
func (h *Host) lockedStep(rd *storeReads, st step) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	apply, err := st(rd)
	if err != nil || apply == nil {
		return err
	}
	rd.sealed = true
	err = apply()
	var miss *storeMiss
	if errors.As(err, &miss) {
		// Not run again: the change has begun.
		return rd.miss(miss)
	}
	return err
}

// readTurns reads a range of turns into rd.
func (h *Host) readTurns(ctx context.Context, rd *storeReads, r turnRange) error {
	ctx, cancel := h.storeContext(ctx)
	defer cancel()
	var err error
	if rerr := h.readerDo(ctx, func() { err = h.readTurnsNow(ctx, rd, r) }); rerr != nil {
		return rerr
	}
	return err
}

// readerDo runs f on the store reader (see storereader.Reader.Do),
// answering errHostShutdown once the host has stopped.
func (h *Host) readerDo(ctx context.Context, f func()) error {
	err := h.reader.Do(ctx, f)
	if errors.Is(err, storereader.ErrStopped) || err != nil && h.ctx.Err() != nil {
		return errHostShutdown
	}
	return err
}

// readTurnsNow is readTurns on the store reader.
func (h *Host) readTurnsNow(ctx context.Context, rd *storeReads, r turnRange) error {
	stored, err := h.st.Turns(ctx, r.chat, r.from, r.to)
	if err != nil {
		return fmt.Errorf("reading the turns of %s: %w", r.chat, err)
	}
	if int64(len(stored)) != r.to-r.from {
		return fmt.Errorf("reading the turns of %s: %d of the turns %d to %d are in the store", r.chat, len(stored), r.from, r.to-1)
	}
	out := make([]protocol.Turn, len(stored))
	for i, t := range stored {
		if err := protocol.Unmarshal(t.Data, &out[i]); err != nil {
			return fmt.Errorf("reading the turns of %s: turn %d does not decode: %w", r.chat, t.Ordinal, err)
		}
	}
	if rd.turns == nil {
		rd.turns = map[turnRange][]protocol.Turn{}
	}
	rd.turns[r] = storedShapes.UpTurns(out)
	return nil
}

// storeContext bounds a store read by loadTimeout, the caller's context
// and the host's life.
func (h *Host) storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	stop := context.AfterFunc(h.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// storedTurnsLocked returns the turns with ordinals in [from, to) of a
// chat, all below its window, as rd holds them; a *storeMiss when they
// have not been read yet (see storeReads.miss). rd may be nil outside a
// step.
func storedTurnsLocked(rd *storeReads, ch *channel, from, to int64) ([]protocol.Turn, error) {
	if from >= to {
		return nil, nil
	}
	r := turnRange{chat: ch.uri, gen: ch.chat.gen, from: from, to: to}
	if rd != nil {
		if turns, ok := rd.turns[r]; ok {
			return turns, nil
		}
	}
	return nil, rd.miss(&storeMiss{turns: &r})
}

// channelLocked returns a channel, or a *storeMiss when its session is
// not loaded yet (see storeReads.miss), or the error of reading it when rd
// holds one. It returns nil, nil for an unknown channel. rd may be nil
// outside a step.
func (h *Host) channelLocked(rd *storeReads, uri string) (*channel, error) {
	if ch, ok := h.channels[uri]; ok {
		return ch, nil
	}
	s := h.sessions[uri]
	if s == nil {
		s = h.chatOwner[uri]
	}
	if s == nil || s.loaded {
		return nil, nil
	}
	if rd != nil {
		if err := rd.failed[s]; err != nil {
			return nil, err
		}
	}
	return nil, rd.miss(&storeMiss{session: s})
}

// loadCall is one read of a session from the store in flight; whoever
// needs the session waits for it.
type loadCall struct {
	done chan struct{} // closed once the session is installed or err set
	err  error
}

// loadSession makes sure a session is in memory. The read runs on a
// goroutine of the host's, outside the lock, at most one per session;
// ctx bounds only this caller's wait.
func (h *Host) loadSession(ctx context.Context, s *session) error {
	h.mu.Lock()
	if s.loaded || h.sessions[s.uri] != s {
		h.mu.Unlock()
		return nil
	}
	if h.closed {
		h.mu.Unlock()
		return errHostShutdown
	}
	lc := s.loading
	if lc == nil {
		lc = &loadCall{done: make(chan struct{})}
		s.loading = lc
		h.goFunc(func() { h.readSession(s, lc) })
	}
	h.mu.Unlock()
	select {
	case <-lc.done:
		return lc.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readSession reads and decodes a session's channels on the store
// reader, then installs them.
func (h *Host) readSession(s *session, lc *loadCall) {
	ctx, cancel := h.storeContext(h.ctx)
	var channels []*channel
	var err error
	rerr := h.readerDo(ctx, func() {
		var data *store.SessionData
		data, err = h.st.LoadSession(ctx, s.uri, min(loadedTurns, h.opts.RecentTurns))
		if err != nil {
			err = fmt.Errorf("loading session %s: %w", s.uri, err)
			return
		}
		channels, err = rebuildChannels(s, data)
	})
	cancel()
	if rerr != nil {
		err = fmt.Errorf("loading session %s: %w", s.uri, rerr)
	}
	h.mu.Lock()
	if err == nil && !s.loaded && h.sessions[s.uri] == s && !h.closed {
		h.installSessionLocked(s, channels)
	}
	s.loading = nil
	lc.err = err
	h.mu.Unlock()
	close(lc.done)
}

// rebuildChannels decodes the stored channels of a session.
func rebuildChannels(s *session, data *store.SessionData) ([]*channel, error) {
	var out []*channel
	found := false
	for _, c := range data.Channels {
		ch, err := rebuildChannel(s, c)
		if err != nil {
			return nil, fmt.Errorf("loading session %s: channel %s: %w", s.uri, c.Channel, err)
		}
		switch {
		case ch.kind == protocol.ChannelSession && ch.uri == s.uri:
			found = true
		case ch.kind != protocol.ChannelChat:
			continue
		}
		out = append(out, ch)
	}
	if !found {
		return nil, fmt.Errorf("loading session %s: its state is not in the store", s.uri)
	}
	return out, nil
}

// installSessionLocked brings a session read from the store to life: its
// agent is opened again, and a turn that was running is ended as failed,
// as the lifecycle page asks for turns interrupted by the host going away.
func (h *Host) installSessionLocked(s *session, channels []*channel) {
	var sch *channel
	chats := map[string]*channel{}
	for _, ch := range channels {
		if ch.kind == protocol.ChannelChat {
			chats[ch.uri] = ch
		} else {
			sch = ch
		}
	}
	s.loaded = true
	s.chats = chats
	h.channels[s.uri] = sch
	for uri, ch := range chats {
		h.channels[uri] = ch
		h.chatOwner[uri] = s
	}
	if o := h.observerLocked(); o != nil {
		o.SessionOpened(s.uri)
	}
	s.mb = newMailbox()
	h.goFunc(func() { s.mb.run(h.ctx) })
	st := sch.state.(*protocol.SessionState)
	switch {
	case st.Lifecycle == protocol.SessionLifecycleFailed:
		s.mb.stop()
	case s.backend == nil:
		s.mb.stop()
		h.commitLocked(sch, &protocol.SessionCreationFailedAction{Error: protocol.ErrorInfo{
			ErrorType: "agentError",
			Message:   fmt.Sprintf("the agent provider %q is not available on this host", s.provider),
		}}, nil)
	default:
		req := agent.OpenRequest{Session: s.uri, Resume: maps.Clone(s.memo), Params: &protocol.CreateSessionParams{
			Channel:            s.uri,
			Provider:           protocol.Ptr(s.provider),
			WorkingDirectories: st.WorkingDirectories,
		}}
		if st.DefaultChat != nil {
			req.Chat = *st.DefaultChat
		}
		if len(st.WorkingDirectories) > 0 {
			req.WorkingDirectory = st.WorkingDirectories[0]
		}
		if st.Config != nil {
			req.Config = maps.Clone(st.Config.Values)
		}
		h.goFunc(func() { h.openAgent(s, req) })
	}
	for _, uri := range sortedKeys(chats) {
		ch := chats[uri]
		if t := ch.state.(*protocol.ChatState).ActiveTurn; t != nil {
			h.log.Info("ending a turn interrupted by the host stopping", "chat", uri, "turn", t.ID)
			h.commitLocked(ch, &protocol.ChatErrorAction{
				TurnID:   t.ID,
				Duration: turnDuration(t.StartedAt, h.opts.Now()),
				Part:     &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: "hostRestart", Message: "the host stopped while this turn was running"}},
			}, nil)
		}
	}
	h.syncCatalogLocked(s, false)
}

// leaseMargin is how close to the serverSeq limit recorded in the store
// the host lets the sequence get before new work waits, outside the lock,
// for the store to record the next one.
const leaseMargin = leaseStep / 4

// leaseRoom waits, without the lock, while the serverSeq is within
// leaseMargin of the limit the store has recorded. Commits under the lock
// then find the lease in place and never wait; see leaseLocked.
func (h *Host) leaseRoom() {
	if seq := h.lastSeq.Load() + leaseMargin; seq > h.jr.LeaseOK() {
		h.jr.WaitLease(seq)
	}
}

// loadChannel makes sure the session of a channel is in memory, for steps
// that take the lock themselves.
func (h *Host) loadChannel(ctx context.Context, uri string) error {
	h.leaseRoom()
	h.mu.Lock()
	_, err := h.channelLocked(nil, uri)
	h.mu.Unlock()
	var miss *storeMiss
	if errors.As(err, &miss) {
		return h.loadSession(ctx, miss.session)
	}
	return err
}
