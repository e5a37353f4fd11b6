package host

import (
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/google/btree"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
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

// listing is one summary as the catalog lists it, with its encoding kept
// for every page that lists it, on any connection, until the summary
// changes (setSummaryLocked then gives the session a new listing). It is
// immutable but for the encodings, which are filled on first use outside
// the host's lock; two pages encoding it at once store the same bytes.
type listing struct {
	sum protocol.SessionSummary
	enc [view.Shapes]atomic.Pointer[[]byte] // by the view's shape
}

// encoded returns the summary's JSON as a connection with the view v sees
// it. Views of the same shape see it alike (view.Shape), so it is encoded
// once per shape.
func (l *listing) encoded(v *view.View) ([]byte, error) {
	i := v.Shape()
	if b := l.enc[i].Load(); b != nil {
		return *b, nil
	}
	b, err := json.Marshal(v.Summary(l.sum))
	if err != nil {
		return nil, err
	}
	l.enc[i].Store(&b)
	return b, nil
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
	s.listing = &listing{sum: sum}
	h.catalog.t.ReplaceOrInsert(catalogEntry{key: keyOf(sum), s: s})
	s.listed = true
}

// unlistLocked removes a session from the catalog's order.
func (h *Host) unlistLocked(s *session) {
	if s.listed {
		h.catalog.t.Delete(catalogEntry{key: keyOf(s.summary)})
		s.listed, s.listing = false, nil
	}
}

// listingsLocked returns up to limit listings after the key (from the
// start when after is nil), and whether more follow.
func (c *catalog) listingsLocked(after *sessionKey, limit int) (items []*listing, more bool) {
	items = make([]*listing, 0, min(limit, c.t.Len()))
	visit := func(e catalogEntry) bool {
		if after != nil && compareKeys(e.key, *after) <= 0 {
			return true // the cursor's own entry
		}
		if len(items) == limit {
			more = true
			return false
		}
		items = append(items, e.s.listing)
		return true
	}
	if after == nil {
		c.t.Ascend(visit)
	} else {
		c.t.AscendGreaterOrEqual(catalogEntry{key: *after}, visit)
	}
	return items, more
}
