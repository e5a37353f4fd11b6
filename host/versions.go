package host

import "container/list"

// maxRememberedClients bounds how many clients' negotiated versions the
// host remembers for their reconnects. A client forgotten (the least
// recently seen, past the bound) reconnects with the newest version, as a
// client the host never saw does.
const maxRememberedClients = 10000

// versionMemory remembers the version each client last negotiated, for at
// most limit clients, forgetting the least recently seen first.
type versionMemory struct {
	limit int
	order *list.List // of *versionEntry, most recent first
	byID  map[string]*list.Element
}

type versionEntry struct{ clientID, version string }

func newVersionMemory(limit int) *versionMemory {
	return &versionMemory{limit: limit, order: list.New(), byID: map[string]*list.Element{}}
}

// get returns the client's version, or "" when it is not remembered.
func (m *versionMemory) get(clientID string) string {
	if e, ok := m.byID[clientID]; ok {
		return e.Value.(*versionEntry).version
	}
	return ""
}

// put remembers the client's version as the most recent.
func (m *versionMemory) put(clientID, version string) {
	if e, ok := m.byID[clientID]; ok {
		e.Value.(*versionEntry).version = version
		m.order.MoveToFront(e)
		return
	}
	m.byID[clientID] = m.order.PushFront(&versionEntry{clientID, version})
	for m.order.Len() > m.limit {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.byID, last.Value.(*versionEntry).clientID)
	}
}

func (m *versionMemory) len() int { return m.order.Len() }
