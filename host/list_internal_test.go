package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
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

// TestListSessionsEncodedAsResult checks that the encoded pages a
// connection receives are, byte for byte, the ListSessionsResult its
// version sees (members a 0.8.0 client does not know left out, cursors
// alike), and that a changed summary is not served from an old encoding.
func TestListSessionsEncodedAsResult(t *testing.T) {
	st := store.NewMemory()
	defer st.Close()
	seedCatalog(t, st, 5)
	h, err := New(&Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	h.mu.Lock()
	for _, s := range h.sessions {
		sum := s.summary
		sum.DefaultChat = protocol.Ptr(protocol.URI("ahp-chat:/" + s.uri[len("ahp-session:/"):]))
		sum.Chats = []protocol.SessionChatSummary{{Resource: *sum.DefaultChat, Title: "chat"}}
		h.setSummaryLocked(s, sum)
	}
	h.mu.Unlock()
	check := func(v *view.View) {
		t.Helper()
		var cursor *string
		for range 3 {
			p := &protocol.ListSessionsParams{Limit: protocol.Ptr(int64(2)), Cursor: cursor}
			want, err := h.listSessions(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			want.Items = v.Summaries(want.Items)
			wantJSON, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // encoded afresh, then from the kept encodings
				got, err := h.listSessionsEncoded(ctx, p, v)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, wantJSON) {
					t.Fatalf("%s: page\n%s\nwant\n%s", v.Version(), got, wantJSON)
				}
			}
			cursor = want.NextCursor
		}
		if cursor != nil {
			t.Fatalf("%s: a cursor after the last page", v.Version())
		}
	}
	legacy := view.For("0.8.0")
	for _, v := range []*view.View{view.Current, legacy} {
		check(v)
	}
	if page, _ := h.listSessionsEncoded(ctx, &protocol.ListSessionsParams{}, legacy); bytes.Contains(page, []byte(`"chats"`)) || bytes.Contains(page, []byte(`"defaultChat"`)) {
		t.Fatalf("a 0.8.0 page carries members of 1.x: %s", page)
	}
	h.mu.Lock()
	s := h.sessions["ahp-session:/seed-000002"]
	sum := s.summary
	sum.Title = "renamed"
	h.setSummaryLocked(s, sum)
	h.mu.Unlock()
	for _, v := range []*view.View{view.Current, legacy} {
		check(v)
		if page, _ := h.listSessionsEncoded(ctx, &protocol.ListSessionsParams{}, v); !bytes.Contains(page, []byte(`"renamed"`)) {
			t.Fatalf("%s: the page still lists the old title: %s", v.Version(), page)
		}
	}
}

// TestListSessionsBulkBound checks that catalog pages are built within the
// host-wide bound: while every place is taken, a page waits, and gives up
// with its request's context.
func TestListSessionsBulkBound(t *testing.T) {
	st := store.NewMemory()
	defer st.Close()
	seedCatalog(t, st, 3)
	h, err := New(&Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got, want := cap(h.bulk), max(runtime.GOMAXPROCS(0)-1, 1); got != want {
		t.Fatalf("%d places for bulk reads, want %d", got, want)
	}
	var releases []func()
	for range cap(h.bulk) {
		release, err := h.bulkRead(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.listSessionsEncoded(ctx, &protocol.ListSessionsParams{}, view.Current)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a page was built past the bound (err %v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting page ended with %v, want its context's error", err)
	}
	releases[0]()
	if _, err := h.listSessionsEncoded(context.Background(), &protocol.ListSessionsParams{}, view.Current); err != nil {
		t.Fatalf("a page once a place is free: %v", err)
	}
	for _, r := range releases[1:] {
		r()
	}
}
