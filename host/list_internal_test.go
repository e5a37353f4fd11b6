package host

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// seedCatalog writes n sessions to a store's catalog, one modification
// time each, as a host would have left them.
func seedCatalog(t testing.TB, st store.Store, n int) {
	t.Helper()
	var b store.Batch
	for i := range n {
		uri := fmt.Sprintf("ahp-session:/seed-%06d", i)
		at := fmt.Sprintf("2026-01-01T00:%02d:%02d.%03dZ", i/60000%60, i/1000%60, i%1000)
		sum, err := protocol.Marshal(&protocol.SessionSummary{Resource: uri, Provider: "echo", Title: "seeded", Status: protocol.SessionStatusIdle, CreatedAt: at, ModifiedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, store.PutSession{Session: store.Session{URI: uri, ModifiedAt: at, Summary: sum}})
	}
	if err := st.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// TestListSessionsPageCost checks that a listSessions page costs
// O(page), not O(catalog): paging through 10,000 sessions allocates
// about one page of summaries per call, never a copy of the catalog.
func TestListSessionsPageCost(t *testing.T) {
	const n, limit = 10000, 50
	st := store.NewMemory()
	defer st.Close()
	seedCatalog(t, st, n)
	h, err := New(&Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var cursor *string
	seen, pages := 0, 0
	prev := ""
	for {
		res, err := h.listSessions(ctx, &protocol.ListSessionsParams{Limit: protocol.Ptr(int64(limit)), Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Items {
			if prev != "" && s.ModifiedAt > prev {
				t.Fatalf("out of order: %s after %s", s.ModifiedAt, prev)
			}
			prev = s.ModifiedAt
		}
		seen += len(res.Items)
		pages++
		if res.NextCursor == nil {
			break
		}
		cursor = res.NextCursor
	}
	runtime.ReadMemStats(&after)
	if seen != n || pages != n/limit {
		t.Fatalf("%d sessions in %d pages, want %d in %d", seen, pages, n, n/limit)
	}
	perPage := (after.TotalAlloc - before.TotalAlloc) / uint64(pages)
	catalogCopy := uint64(n) * uint64(unsafe.Sizeof(protocol.SessionSummary{}))
	if perPage > catalogCopy/10 {
		t.Fatalf("a page allocates %d bytes; a copy of the catalog is %d", perPage, catalogCopy)
	}
}

// TestCatalogOrderFollowsChanges checks that the ordered catalog follows a
// summary whose modification time changes and a session that goes.
func TestCatalogOrderFollowsChanges(t *testing.T) {
	st := store.NewMemory()
	defer st.Close()
	seedCatalog(t, st, 5)
	h, err := New(&Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.mu.Lock()
	s := h.sessions["ahp-session:/seed-000001"]
	sum := s.summary
	sum.ModifiedAt = "2027-01-01T00:00:00.000Z"
	h.setSummaryLocked(s, sum)
	gone := h.sessions["ahp-session:/seed-000004"]
	delete(h.sessions, gone.uri)
	h.unlistLocked(gone)
	h.mu.Unlock()
	res, err := h.listSessions(context.Background(), &protocol.ListSessionsParams{Limit: protocol.Ptr(int64(2))})
	if err != nil {
		t.Fatal(err)
	}
	next, err := h.listSessions(context.Background(), &protocol.ListSessionsParams{Cursor: res.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range append(res.Items, next.Items...) {
		got = append(got, s.Resource[len("ahp-session:/seed-00000"):])
	}
	if fmt.Sprint(got) != "[1 3 2 0]" || next.NextCursor != nil {
		t.Fatalf("order %v, next cursor %v", got, next.NextCursor)
	}
}
