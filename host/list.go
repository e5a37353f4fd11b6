package host

import (
	"cmp"
	"context"
	"encoding/base64"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// listSessions returns the session catalog, most recently modified first,
// page by page. The cursor names the last entry of the previous page by
// its modification time and URI, so paging stays stable while sessions
// come and go. The catalog is in memory (sessions not loaded keep their
// summary) and kept in order, so a page costs O(log n + page) under the
// host's lock; the answer waits until every change made before the request is
// saved, so a reply means everything the client saw so far survives a
// crash.
func (h *Host) listSessions(ctx context.Context, p *protocol.ListSessionsParams) (*protocol.ListSessionsResult, error) {
	limit := DefaultListLimit
	if p.Limit != nil {
		if *p.Limit <= 0 {
			return nil, rpcError(protocol.CodeInvalidParams, "listSessions: limit must be positive")
		}
		limit = int(min(*p.Limit, int64(DefaultListLimit)))
	}
	var after *sessionKey
	if p.Cursor != nil {
		k, ok := decodeSessionCursor(*p.Cursor)
		if !ok {
			return nil, rpcError(protocol.CodeInvalidParams, "listSessions: unknown cursor")
		}
		after = &k
	}
	h.mu.Lock()
	items, more := h.catalog.pageLocked(after, limit)
	seq := h.seq
	h.mu.Unlock()
	if err := h.savedReply(ctx, "listSessions", seq); err != nil {
		return nil, err
	}
	res := &protocol.ListSessionsResult{Items: items}
	if more {
		res.NextCursor = protocol.Ptr(encodeSessionCursor(keyOf(items[len(items)-1])))
	}
	return res, nil
}

// sessionKey orders the catalog: newest modification first, then URI.
type sessionKey struct{ modifiedAt, uri string }

func keyOf(s protocol.SessionSummary) sessionKey { return sessionKey{s.ModifiedAt, s.Resource} }

func compareKeys(a, b sessionKey) int {
	if c := cmp.Compare(b.modifiedAt, a.modifiedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.uri, b.uri)
}

func encodeSessionCursor(k sessionKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(k.modifiedAt + "\n" + k.uri))
}

func decodeSessionCursor(c string) (sessionKey, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return sessionKey{}, false
	}
	m, u, ok := strings.Cut(string(raw), "\n")
	if !ok || u == "" {
		return sessionKey{}, false
	}
	return sessionKey{m, u}, true
}
