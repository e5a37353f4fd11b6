package host

import (
	"github.com/google/btree"

	"github.com/ahp-go/ahp/protocol"
)

// catalog keeps every session in listing order (newest modification
// first, then URI), so that a listSessions page costs O(log n + page)
// under the host's lock rather than a copy and sort of the whole catalog.
// It is guarded by Host.mu.
type catalog struct {
	t *btree.BTreeG[catalogEntry]
}

type catalogEntry struct {
	key sessionKey
	s   *session
}

func newCatalog() *catalog {
	return &catalog{t: btree.NewG(32, func(a, b catalogEntry) bool { return compareKeys(a.key, b.key) < 0 })}
}

// setSummaryLocked records a session's catalog entry and keeps its place
// in the catalog's order.
func (h *Host) setSummaryLocked(s *session, sum protocol.SessionSummary) {
	if s.listed {
		h.catalog.t.Delete(catalogEntry{key: keyOf(s.summary)})
	}
	s.summary = sum
	h.catalog.t.ReplaceOrInsert(catalogEntry{key: keyOf(sum), s: s})
	s.listed = true
}

// unlistLocked removes a session from the catalog's order.
func (h *Host) unlistLocked(s *session) {
	if s.listed {
		h.catalog.t.Delete(catalogEntry{key: keyOf(s.summary)})
		s.listed = false
	}
}

// pageLocked returns up to limit summaries after the key (from the start
// when after is nil), and whether more follow.
func (c *catalog) pageLocked(after *sessionKey, limit int) (items []protocol.SessionSummary, more bool) {
	items = make([]protocol.SessionSummary, 0, min(limit, c.t.Len()))
	visit := func(e catalogEntry) bool {
		if after != nil && compareKeys(e.key, *after) <= 0 {
			return true // the cursor's own entry
		}
		if len(items) == limit {
			more = true
			return false
		}
		items = append(items, e.s.summary)
		return true
	}
	if after == nil {
		c.t.Ascend(visit)
	} else {
		c.t.AscendGreaterOrEqual(catalogEntry{key: *after}, visit)
	}
	return items, more
}
