package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
)

// Memory is a Store that keeps everything in the process's memory: it
// survives a host being closed and created again in the same process, not
// the process itself. Create one with NewMemory. It copies what it is given
// and what it returns, so callers may reuse their buffers.
type Memory struct {
	mu       sync.RWMutex
	closed   bool
	seq      int64 // highest SetSeq
	lastSeq  int64 // highest appended action seq
	sessions map[string]Session
	channels map[string]*memChannel
	owned    map[string]map[string]bool   // session URI -> its channel URIs
	records  map[string]map[string][]byte // kind -> key -> data
}

type memChannel struct {
	snap    Snapshot
	stored  bool     // a snapshot was put
	actions []Action // ascending seq
	turns   []Turn   // ascending ordinal
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{
		sessions: map[string]Session{},
		channels: map[string]*memChannel{},
		owned:    map[string]map[string]bool{},
		records:  map[string]map[string][]byte{},
	}
}

var (
	_ Store   = (*Memory)(nil)
	_ Records = (*Memory)(nil)
)

// rlock takes the read lock for a read under ctx; it fails, unlocked,
// when ctx is done or the store is closed.
func (m *Memory) rlock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Records returns every record of a kind, ordered by key.
func (m *Memory) Records(ctx context.Context, kind string) ([]Record, error) {
	if err := m.rlock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	out := []Record{}
	for key, data := range m.records[kind] {
		out = append(out, Record{Kind: kind, Key: key, Data: slices.Clone(data)})
	}
	slices.SortFunc(out, func(a, b Record) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}

// Write applies b atomically: it checks every operation before applying
// any.
func (m *Memory) Write(ctx context.Context, b Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if err := b.Check(m.lastSeq); err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	for _, op := range b {
		m.apply(op)
	}
	return nil
}

func (m *Memory) apply(op Op) {
	switch op := op.(type) {
	case PutSession:
		s := op.Session
		s.Summary = slices.Clone(s.Summary)
		s.Chats = slices.Clone(s.Chats)
		m.sessions[s.URI] = s
	case DeleteSession:
		delete(m.sessions, op.URI)
		for uri := range m.owned[op.URI] {
			delete(m.channels, uri)
		}
		delete(m.owned, op.URI)
	case PutSnapshot:
		s := op.Snapshot
		s.State = slices.Clone(s.State)
		c := m.channel(s.Channel)
		if c.stored && c.snap.Session != s.Session {
			delete(m.owned[c.snap.Session], s.Channel)
		}
		c.snap, c.stored = s, true
		if m.owned[s.Session] == nil {
			m.owned[s.Session] = map[string]bool{}
		}
		m.owned[s.Session][s.Channel] = true
		i := 0
		for i < len(c.actions) && c.actions[i].Seq <= s.Seq {
			i++
		}
		c.actions = slices.Delete(c.actions, 0, i)
	case DeleteChannel:
		if c, ok := m.channels[op.URI]; ok {
			delete(m.owned[c.snap.Session], op.URI)
			delete(m.channels, op.URI)
		}
	case AppendAction:
		a := op.Action
		a.Envelope = slices.Clone(a.Envelope)
		c := m.channel(a.Channel)
		c.actions = append(c.actions, a)
		m.lastSeq = a.Seq
	case PutTurn:
		t := op.Turn
		t.Data = slices.Clone(t.Data)
		c := m.channel(t.Chat)
		i, found := slices.BinarySearchFunc(c.turns, t.Ordinal, func(x Turn, o int64) int { return cmp.Compare(x.Ordinal, o) })
		if found {
			c.turns[i] = t
		} else {
			c.turns = slices.Insert(c.turns, i, t)
		}
	case TruncateTurns:
		if c, ok := m.channels[op.Chat]; ok {
			i, _ := slices.BinarySearchFunc(c.turns, op.Keep, func(x Turn, o int64) int { return cmp.Compare(x.Ordinal, o) })
			c.turns = c.turns[:i:i]
		}
	case SetSeq:
		m.seq = max(m.seq, op.Seq)
	case PutRecord:
		r := op.Record
		if m.records[r.Kind] == nil {
			m.records[r.Kind] = map[string][]byte{}
		}
		m.records[r.Kind][r.Key] = slices.Clone(r.Data)
	case DeleteRecord:
		delete(m.records[op.Kind], op.Key)
	}
}

func (m *Memory) channel(uri string) *memChannel {
	c := m.channels[uri]
	if c == nil {
		c = &memChannel{}
		m.channels[uri] = c
	}
	return c
}

// Seq returns the highest serverSeq recorded.
func (m *Memory) Seq(ctx context.Context) (int64, error) {
	if err := m.rlock(ctx); err != nil {
		return 0, err
	}
	defer m.mu.RUnlock()
	return max(m.seq, m.lastSeq), nil
}

// Sessions returns a page of the catalog.
func (m *Memory) Sessions(ctx context.Context, after *Position, limit int) ([]Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("memory store: sessions: limit %d is not positive", limit)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	all := make([]Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		if after == nil || ComparePositions(Position{s.ModifiedAt, s.URI}, *after) > 0 {
			all = append(all, s)
		}
	}
	slices.SortFunc(all, func(a, b Session) int {
		return ComparePositions(Position{a.ModifiedAt, a.URI}, Position{b.ModifiedAt, b.URI})
	})
	all = all[:min(limit, len(all))]
	for i := range all {
		all[i].Summary = slices.Clone(all[i].Summary)
		all[i].Chats = slices.Clone(all[i].Chats)
	}
	return all, nil
}

// ComparePositions orders catalog positions: a later modification comes
// first, then the smaller URI. It returns a negative number when a comes
// before b.
func ComparePositions(a, b Position) int {
	if c := cmp.Compare(b.ModifiedAt, a.ModifiedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.URI, b.URI)
}

// LoadSession returns a session with its channels.
func (m *Memory) LoadSession(ctx context.Context, uri string, recentTurns int) (*SessionData, error) {
	if err := m.rlock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	s, ok := m.sessions[uri]
	if !ok {
		return nil, fmt.Errorf("memory store: session %s: %w", uri, ErrNotFound)
	}
	s.Summary = slices.Clone(s.Summary)
	s.Chats = slices.Clone(s.Chats)
	data := &SessionData{Session: s}
	uris := make([]string, 0, len(m.owned[uri]))
	for c := range m.owned[uri] {
		uris = append(uris, c)
	}
	slices.SortFunc(uris, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == uri:
			return -1
		case b == uri:
			return 1
		}
		return cmp.Compare(a, b)
	})
	for _, cu := range uris {
		c := m.channels[cu]
		out := Channel{Snapshot: c.snap}
		out.State = slices.Clone(c.snap.State)
		for _, a := range c.actions {
			if a.Seq > c.snap.Seq {
				a.Envelope = slices.Clone(a.Envelope)
				out.Actions = append(out.Actions, a)
			}
		}
		if n := len(c.turns); n > 0 {
			out.TurnCount = c.turns[n-1].Ordinal + 1
			out.Turns = c.between(out.TurnCount-int64(max(recentTurns, 0)), out.TurnCount)
		}
		data.Channels = append(data.Channels, out)
	}
	return data, nil
}

// Turns returns a range of a chat's turns.
func (m *Memory) Turns(ctx context.Context, chat string, from, to int64) ([]Turn, error) {
	if err := m.rlock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	c, ok := m.channels[chat]
	if !ok {
		return nil, nil
	}
	return c.between(from, to), nil
}

// between returns copies of the turns with ordinals in [from, to).
func (c *memChannel) between(from, to int64) []Turn {
	byOrdinal := func(x Turn, o int64) int { return cmp.Compare(x.Ordinal, o) }
	i, _ := slices.BinarySearchFunc(c.turns, from, byOrdinal)
	j, _ := slices.BinarySearchFunc(c.turns, to, byOrdinal)
	if i >= j {
		return nil
	}
	out := slices.Clone(c.turns[i:j])
	for k := range out {
		out[k].Data = slices.Clone(out[k].Data)
	}
	return out
}

// Close marks the store closed and drops what it holds.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.sessions, m.channels, m.owned = nil, nil, nil
	return nil
}
