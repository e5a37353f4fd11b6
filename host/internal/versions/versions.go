// Package versions remembers the protocol version each client last
// negotiated, so that a client reconnecting gets the same version again.
//
// Contract: a Memory holds at most its limit of clients, forgetting the
// least recently seen (by Put) first; a forgotten client is one it never
// saw, and Get returns "" for it. A Memory is not safe for concurrent use:
// the host calls it under its lock.
package versions

import "container/list"

// MaxClients bounds how many clients' negotiated versions the host
// remembers for their reconnects. A client forgotten (the least recently
// seen, past the bound) reconnects with the newest version, as a client the
// host never saw does.
const MaxClients = 10000

// Memory remembers the version each client last negotiated, for at most
// limit clients, forgetting the least recently seen first.
type Memory struct {
	limit int
	order *list.List // of *entry, most recent first
	byID  map[string]*list.Element
}

type entry struct{ clientID, version string }

// NewMemory returns an empty Memory of at most limit clients (at least
// one).
func NewMemory(limit int) *Memory {
	return &Memory{limit: max(limit, 1), order: list.New(), byID: map[string]*list.Element{}}
}

// Get returns the client's version, or "" when it is not remembered.
func (m *Memory) Get(clientID string) string {
	if e, ok := m.byID[clientID]; ok {
		return e.Value.(*entry).version
	}
	return ""
}

// Put remembers the client's version as the most recent, forgetting the
// least recent client when the memory is full.
func (m *Memory) Put(clientID, version string) {
	if e, ok := m.byID[clientID]; ok {
		e.Value.(*entry).version = version
		m.order.MoveToFront(e)
		return
	}
	m.byID[clientID] = m.order.PushFront(&entry{clientID, version})
	for m.order.Len() > m.limit {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.byID, last.Value.(*entry).clientID)
	}
}

// Len is how many clients are remembered.
func (m *Memory) Len() int { return m.order.Len() }
