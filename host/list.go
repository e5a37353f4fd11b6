package host

import (
	"cmp"
	"context"
	"encoding/base64"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
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
	list, more, err := h.listingPage(ctx, p)
	if err != nil {
		return nil, err
	}
	res := &protocol.ListSessionsResult{Items: make([]protocol.SessionSummary, len(list))}
	for i, l := range list {
		res.Items[i] = l.sum
	}
	if more {
		res.NextCursor = protocol.Ptr(encodeSessionCursor(keyOf(res.Items[len(res.Items)-1])))
	}
	return res, nil
}

// listSessionsEncoded is listSessions as a connection with the view v
// receives it, already encoded: the same members in the same order as
// protocol.ListSessionsResult encodes them. Each summary is encoded once
// per view shape and its bytes reused by every page and connection until
// it changes, and the page is put together within the bulk-read bound
// (Host.bulk), so that clients paging flat out leave a core to the others.
// The connection sends the bytes as they are (jsonrpc.Encoded): they are
// valid JSON by construction, and a second pass over them would be spent
// outside the bound.
func (h *Host) listSessionsEncoded(ctx context.Context, p *protocol.ListSessionsParams, v *view.View) (jsontext.Value, error) {
	list, more, err := h.listingPage(ctx, p)
	if err != nil {
		return nil, err
	}
	release, err := h.bulkRead(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	size := 64
	for _, l := range list {
		if b := l.enc[v.Shape()].Load(); b != nil {
			size += len(*b) + 1
		}
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	if more {
		out = append(out, `"nextCursor":`...)
		if out, err = jsontext.AppendQuote(out, encodeSessionCursor(keyOf(list[len(list)-1].sum))); err != nil {
			return nil, err
		}
		out = append(out, ',')
	}
	out = append(out, `"items":[`...)
	for i, l := range list {
		b, err := l.encoded(v)
		if err != nil {
			return nil, rpcError(protocol.CodeInternalError, "listSessions: encoding %s: %v", l.sum.Resource, err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	out = append(out, "]}"...)
	return out, nil
}

// listingPage reads one page of the catalog: its listings and whether more
// follow, once every change made before the request is saved.
func (h *Host) listingPage(ctx context.Context, p *protocol.ListSessionsParams) ([]*listing, bool, error) {
	limit := DefaultListLimit
	if p.Limit != nil {
		if *p.Limit <= 0 {
			return nil, false, rpcError(protocol.CodeInvalidParams, "listSessions: limit must be positive")
		}
		limit = int(min(*p.Limit, int64(DefaultListLimit)))
	}
	var after *sessionKey
	if p.Cursor != nil {
		k, ok := decodeSessionCursor(*p.Cursor)
		if !ok {
			return nil, false, rpcError(protocol.CodeInvalidParams, "listSessions: unknown cursor")
		}
		after = &k
	}
	h.mu.Lock()
	list, more := h.catalog.listingsLocked(after, limit)
	seq := h.seq
	h.mu.Unlock()
	if err := h.savedReply(ctx, "listSessions", seq); err != nil {
		return nil, false, err
	}
	return list, more, nil
}

// bulkRead waits for a place among the bulk reads (pages of the catalog)
// the host builds at once, and returns its release. There are
// GOMAXPROCS-1 places (at least one), so that however many clients page
// at once, requests that are not bulk reads always find a core.
func (h *Host) bulkRead(ctx context.Context) (release func(), err error) {
	select {
	case h.bulk <- struct{}{}:
		return func() { <-h.bulk }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
