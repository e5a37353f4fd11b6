// Package storetest is the test suite every store.Store backend passes.
//
//	func TestSuite(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() })
//	}
//
// The suite checks behaviour a host relies on through the interface alone:
// what comes back after a write, catalog order and paging, compaction of
// the action log by snapshots, turn ranges, deletes, atomic batches, closed
// stores and concurrent use.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ahp-go/ahp/store"
)

// Run runs the suite. newStore returns an empty store for one test; the
// suite closes it.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, st store.Store)
	}{
		{"Empty", testEmpty},
		{"SessionRoundTrip", testSessionRoundTrip},
		{"ActionsAfterSnapshot", testActionsAfterSnapshot},
		{"Seq", testSeq},
		{"Turns", testTurns},
		{"ManyTurns", testManyTurns},
		{"SeveralChats", testSeveralChats},
		{"CatalogPaging", testCatalogPaging},
		{"DeleteSession", testDeleteSession},
		{"DeleteChannel", testDeleteChannel},
		{"AtomicBatch", testAtomicBatch},
		{"CallerBuffers", testCallerBuffers},
		{"Closed", testClosed},
		{"Cancelled", testCancelled},
		{"Concurrent", testConcurrent},
		{"Records", testRecords},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			t.Cleanup(func() { st.Close() })
			tc.fn(t, st)
		})
	}
}

var ctx = context.Background()

func write(t *testing.T, st store.Store, ops ...store.Op) {
	t.Helper()
	if err := st.Write(ctx, ops); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func load(t *testing.T, st store.Store, uri string, recent int) *store.SessionData {
	t.Helper()
	d, err := st.LoadSession(ctx, uri, recent)
	if err != nil {
		t.Fatalf("LoadSession(%s): %v", uri, err)
	}
	return d
}

func diff(t *testing.T, what string, got, want any) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("%s (-want +got):\n%s", what, d)
	}
}

func session(uri, modified string, chats ...string) store.Session {
	return store.Session{
		URI:        uri,
		ModifiedAt: modified,
		Summary:    []byte(fmt.Sprintf(`{"resource":%q,"modifiedAt":%q}`, uri, modified)),
		Chats:      chats,
	}
}

func snapshot(channel, sess string, seq int64) store.Snapshot {
	return store.Snapshot{Channel: channel, Session: sess, Seq: seq, State: []byte(fmt.Sprintf(`{"at":%d}`, seq))}
}

func action(channel string, seq int64) store.Action {
	return store.Action{Seq: seq, Channel: channel, At: 1_700_000_000_000 + seq, Envelope: []byte(fmt.Sprintf(`{"channel":%q,"serverSeq":%d}`, channel, seq))}
}

func turn(chat string, ordinal int64) store.Turn {
	id := fmt.Sprintf("t%d", ordinal)
	return store.Turn{Chat: chat, Ordinal: ordinal, ID: id, Data: []byte(fmt.Sprintf(`{"id":%q}`, id))}
}

const (
	s1 = "ahp-session:/s1"
	c1 = "ahp-chat:/c1"
	c2 = "ahp-chat:/c2"
	c3 = "ahp-chat:/c3"
	t0 = "2026-01-01T00:00:00.000Z"
)

func testEmpty(t *testing.T, st store.Store) {
	seq, err := st.Seq(ctx)
	if err != nil || seq != 0 {
		t.Fatalf("Seq = %d, %v; want 0", seq, err)
	}
	page, err := st.Sessions(ctx, nil, 10)
	if err != nil || len(page) != 0 {
		t.Fatalf("Sessions = %v, %v; want none", page, err)
	}
	if _, err := st.LoadSession(ctx, s1, 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LoadSession of an unknown session: %v, want ErrNotFound", err)
	}
	turns, err := st.Turns(ctx, c1, 0, 10)
	if err != nil || len(turns) != 0 {
		t.Fatalf("Turns = %v, %v; want none", turns, err)
	}
	if err := st.Write(ctx, nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
}

func testSessionRoundTrip(t *testing.T, st store.Store) {
	sess := session(s1, t0, c2, c1)
	sess.Running = true
	write(t, st,
		store.PutSession{Session: sess},
		store.PutSnapshot{Snapshot: snapshot(c2, s1, 3)},
		store.PutSnapshot{Snapshot: snapshot(s1, s1, 1)},
		store.PutSnapshot{Snapshot: snapshot(c1, s1, 2)},
	)
	got := load(t, st, s1, 10)
	want := &store.SessionData{
		Session: sess,
		Channels: []store.Channel{
			{Snapshot: snapshot(s1, s1, 1)},
			{Snapshot: snapshot(c1, s1, 2)},
			{Snapshot: snapshot(c2, s1, 3)},
		},
	}
	diff(t, "loaded session", got, want)

	// A second put replaces the entry and the snapshot.
	sess.Running = false
	sess.Chats = []string{c1}
	write(t, st, store.PutSession{Session: sess}, store.PutSnapshot{Snapshot: snapshot(c1, s1, 9)})
	got = load(t, st, s1, 10)
	diff(t, "catalog entry after a second put", got.Session, sess)
	diff(t, "chat snapshot after a second put", got.Channels[1].Snapshot, snapshot(c1, s1, 9))
}

func testActionsAfterSnapshot(t *testing.T, st store.Store) {
	write(t, st,
		store.PutSession{Session: session(s1, t0, c1)},
		store.PutSnapshot{Snapshot: snapshot(s1, s1, 0)},
		store.PutSnapshot{Snapshot: snapshot(c1, s1, 0)},
	)
	var seq int64
	for range 3 {
		seq++
		write(t, st, store.AppendAction{Action: action(c1, seq)})
		seq++
		write(t, st, store.AppendAction{Action: action(s1, seq)})
	}
	got := load(t, st, s1, 0)
	diff(t, "session actions", got.Channels[0].Actions, []store.Action{action(s1, 2), action(s1, 4), action(s1, 6)})
	diff(t, "chat actions", got.Channels[1].Actions, []store.Action{action(c1, 1), action(c1, 3), action(c1, 5)})

	// A snapshot compacts the log: only later actions remain, including
	// ones appended in the same batch after it.
	write(t, st,
		store.AppendAction{Action: action(c1, 7)},
		store.PutSnapshot{Snapshot: snapshot(c1, s1, 5)},
		store.AppendAction{Action: action(c1, 8)},
	)
	got = load(t, st, s1, 0)
	diff(t, "chat actions after a snapshot at 5", got.Channels[1].Actions, []store.Action{action(c1, 7), action(c1, 8)})
	write(t, st, store.PutSnapshot{Snapshot: snapshot(c1, s1, 8)})
	got = load(t, st, s1, 0)
	diff(t, "chat actions after a snapshot at 8", got.Channels[1].Actions, []store.Action(nil))
	diff(t, "session actions untouched", got.Channels[0].Actions, []store.Action{action(s1, 2), action(s1, 4), action(s1, 6)})
}

func testSeq(t *testing.T, st store.Store) {
	check := func(want int64) {
		t.Helper()
		got, err := st.Seq(ctx)
		if err != nil || got != want {
			t.Fatalf("Seq = %d, %v; want %d", got, err, want)
		}
	}
	write(t, st, store.SetSeq{Seq: 100})
	check(100)
	write(t, st, store.SetSeq{Seq: 50})
	check(100)
	write(t, st, store.AppendAction{Action: action(c1, 150)})
	check(150)
	write(t, st, store.SetSeq{Seq: 1 << 40})
	check(1 << 40)

	// Actions must be appended in increasing order, across batches and
	// within one, even after the earlier ones were compacted away.
	write(t, st, store.PutSnapshot{Snapshot: snapshot(c1, s1, 150)})
	for _, b := range []store.Batch{
		{store.AppendAction{Action: action(c1, 150)}},
		{store.AppendAction{Action: action(c1, 149)}},
		{store.AppendAction{Action: action(c1, 152)}, store.AppendAction{Action: action(c1, 151)}},
	} {
		if err := st.Write(ctx, b); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("out of order actions: %v, want ErrInvalid", err)
		}
	}
	write(t, st, store.AppendAction{Action: action(c1, 151)}, store.AppendAction{Action: action(c1, 152)})
}

func testTurns(t *testing.T, st store.Store) {
	ops := store.Batch{store.PutSession{Session: session(s1, t0, c1)}, store.PutSnapshot{Snapshot: snapshot(c1, s1, 1)}}
	for i := range int64(10) {
		ops = append(ops, store.PutTurn{Turn: turn(c1, i)})
	}
	write(t, st, ops...)
	got := load(t, st, s1, 3)
	diff(t, "recent turns", got.Channels[0].Turns, []store.Turn{turn(c1, 7), turn(c1, 8), turn(c1, 9)})
	if got.Channels[0].TurnCount != 10 {
		t.Fatalf("TurnCount = %d, want 10", got.Channels[0].TurnCount)
	}
	if got := load(t, st, s1, 0); len(got.Channels[0].Turns) != 0 || got.Channels[0].TurnCount != 10 {
		t.Fatalf("recentTurns 0 gave %d turns, count %d", len(got.Channels[0].Turns), got.Channels[0].TurnCount)
	}
	if got := load(t, st, s1, 50); len(got.Channels[0].Turns) != 10 {
		t.Fatalf("recentTurns 50 gave %d turns, want all 10", len(got.Channels[0].Turns))
	}
	rng, err := st.Turns(ctx, c1, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "Turns(2, 5)", rng, []store.Turn{turn(c1, 2), turn(c1, 3), turn(c1, 4)})
	rng, _ = st.Turns(ctx, c1, 8, 100)
	diff(t, "Turns(8, 100)", rng, []store.Turn{turn(c1, 8), turn(c1, 9)})
	rng, _ = st.Turns(ctx, c2, 0, 100)
	diff(t, "Turns of another chat", rng, []store.Turn(nil))

	// Replace one, truncate, and continue numbering after the truncation.
	replaced := turn(c1, 4)
	replaced.Data = []byte(`{"id":"t4","replaced":true}`)
	write(t, st, store.PutTurn{Turn: replaced}, store.TruncateTurns{Chat: c1, Keep: 5})
	got = load(t, st, s1, 2)
	diff(t, "after truncation", got.Channels[0].Turns, []store.Turn{turn(c1, 3), replaced})
	if got.Channels[0].TurnCount != 5 {
		t.Fatalf("TurnCount after truncation = %d, want 5", got.Channels[0].TurnCount)
	}
	write(t, st, store.PutTurn{Turn: turn(c1, 5)})
	rng, _ = st.Turns(ctx, c1, 4, 10)
	diff(t, "after truncation and a new turn", rng, []store.Turn{replaced, turn(c1, 5)})
	write(t, st, store.TruncateTurns{Chat: c1, Keep: 0})
	if got := load(t, st, s1, 10); len(got.Channels[0].Turns) != 0 || got.Channels[0].TurnCount != 0 {
		t.Fatalf("after truncating everything: %d turns, count %d", len(got.Channels[0].Turns), got.Channels[0].TurnCount)
	}
}

// testManyTurns stores a long history and reads back its tail and a page.
func testManyTurns(t *testing.T, st store.Store) {
	const n = 10000
	write(t, st, store.PutSession{Session: session(s1, t0, c1)}, store.PutSnapshot{Snapshot: snapshot(c1, s1, 1)})
	for start := int64(0); start < n; start += 1000 {
		var ops store.Batch
		for i := start; i < start+1000; i++ {
			ops = append(ops, store.PutTurn{Turn: turn(c1, i)})
		}
		write(t, st, ops...)
	}
	got := load(t, st, s1, 50)
	ch := got.Channels[0]
	if ch.TurnCount != n || len(ch.Turns) != 50 || ch.Turns[0].Ordinal != n-50 || ch.Turns[49].Ordinal != n-1 {
		t.Fatalf("tail of %d turns: count %d, got %d turns", n, ch.TurnCount, len(ch.Turns))
	}
	page, err := st.Turns(ctx, c1, 5000, 5050)
	if err != nil || len(page) != 50 || page[0].Ordinal != 5000 {
		t.Fatalf("a page in the middle: %d turns, %v", len(page), err)
	}
}

// testSeveralChats reads back a session whose chats each have actions
// after their snapshots and turns of their own, beside another session's.
func testSeveralChats(t *testing.T, st store.Store) {
	ops := store.Batch{
		store.PutSession{Session: session(s1, t0, c1, c2)},
		store.PutSession{Session: session("ahp-session:/s2", t0, c3)},
		store.PutSnapshot{Snapshot: snapshot(s1, s1, 1)},
		store.PutSnapshot{Snapshot: snapshot(c1, s1, 2)},
		store.PutSnapshot{Snapshot: snapshot(c2, s1, 4)},
		store.PutSnapshot{Snapshot: snapshot(c3, "ahp-session:/s2", 1)},
	}
	for i := range int64(6) {
		ops = append(ops, store.PutTurn{Turn: turn(c1, i)}, store.PutTurn{Turn: turn(c3, i)})
	}
	ops = append(ops, store.PutTurn{Turn: turn(c2, 0)})
	for seq := int64(5); seq <= 10; seq++ {
		ops = append(ops, store.AppendAction{Action: action([]string{s1, c1, c2, c3}[seq%4], seq)})
	}
	write(t, st, ops...)
	got := load(t, st, s1, 4)
	want := &store.SessionData{
		Session: session(s1, t0, c1, c2),
		Channels: []store.Channel{
			{Snapshot: snapshot(s1, s1, 1), Actions: []store.Action{action(s1, 8)}},
			{Snapshot: snapshot(c1, s1, 2), Actions: []store.Action{action(c1, 5), action(c1, 9)},
				Turns: []store.Turn{turn(c1, 2), turn(c1, 3), turn(c1, 4), turn(c1, 5)}, TurnCount: 6},
			{Snapshot: snapshot(c2, s1, 4), Actions: []store.Action{action(c2, 6), action(c2, 10)},
				Turns: []store.Turn{turn(c2, 0)}, TurnCount: 1},
		},
	}
	diff(t, "a session of two chats", got, want)
}

func testCatalogPaging(t *testing.T, st store.Store) {
	var all []store.Session
	var ops store.Batch
	for i := range 25 {
		// Three sessions share each timestamp, so ties are ordered by URI.
		s := session(fmt.Sprintf("ahp-session:/p%02d", i), fmt.Sprintf("2026-01-01T00:00:%02d.000Z", i/3))
		all = append(all, s)
		ops = append(ops, store.PutSession{Session: s})
	}
	write(t, st, ops...)
	want := slices.Clone(all)
	slices.SortFunc(want, func(a, b store.Session) int {
		return store.ComparePositions(store.Position{ModifiedAt: a.ModifiedAt, URI: a.URI}, store.Position{ModifiedAt: b.ModifiedAt, URI: b.URI})
	})
	if want[0].ModifiedAt != "2026-01-01T00:00:08.000Z" {
		t.Fatalf("expected order starts at %s", want[0].ModifiedAt)
	}
	pages := func(limit int) []store.Session {
		var got []store.Session
		var after *store.Position
		for range 100 {
			page, err := st.Sessions(ctx, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("page of %d entries with limit %d", len(page), limit)
			}
			if len(page) == 0 {
				return got
			}
			got = append(got, page...)
			last := page[len(page)-1]
			after = &store.Position{ModifiedAt: last.ModifiedAt, URI: last.URI}
		}
		t.Fatal("paging did not end")
		return nil
	}
	diff(t, "pages of 7", pages(7), want)
	diff(t, "one page", pages(100), want)

	// Touching a session moves it to the front.
	moved := all[0]
	moved.ModifiedAt = "2026-02-01T00:00:00.000Z"
	write(t, st, store.PutSession{Session: moved})
	first, err := st.Sessions(ctx, nil, 1)
	if err != nil || len(first) != 1 || first[0].URI != moved.URI {
		t.Fatalf("after an update the first entry is %v, %v", first, err)
	}
	if _, err := st.Sessions(ctx, nil, 0); err == nil {
		t.Fatal("a limit of 0 was accepted")
	}
}

func testDeleteSession(t *testing.T, st store.Store) {
	const s2 = "ahp-session:/s2"
	write(t, st,
		store.PutSession{Session: session(s1, t0, c1)},
		store.PutSnapshot{Snapshot: snapshot(s1, s1, 0)},
		store.PutSnapshot{Snapshot: snapshot(c1, s1, 0)},
		store.AppendAction{Action: action(c1, 1)},
		store.PutTurn{Turn: turn(c1, 0)},
		store.PutSession{Session: session(s2, t0, c2)},
		store.PutSnapshot{Snapshot: snapshot(c2, s2, 0)},
		store.AppendAction{Action: action(c2, 2)},
	)
	write(t, st, store.DeleteSession{URI: s1}, store.DeleteSession{URI: "ahp-session:/unknown"})
	if _, err := st.LoadSession(ctx, s1, 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted session loads: %v", err)
	}
	if page, _ := st.Sessions(ctx, nil, 10); len(page) != 1 || page[0].URI != s2 {
		t.Fatalf("catalog after delete: %v", page)
	}
	if turns, _ := st.Turns(ctx, c1, 0, 10); len(turns) != 0 {
		t.Fatalf("turns of a deleted session remain: %v", turns)
	}
	if got := load(t, st, s2, 10); len(got.Channels) != 1 || len(got.Channels[0].Actions) != 1 {
		t.Fatalf("the other session was touched: %+v", got)
	}

	// The same URIs start afresh.
	write(t, st,
		store.PutSession{Session: session(s1, t0, c1)},
		store.PutSnapshot{Snapshot: snapshot(s1, s1, 3)},
		store.PutSnapshot{Snapshot: snapshot(c1, s1, 3)},
	)
	got := load(t, st, s1, 10)
	diff(t, "a session recreated", got.Channels, []store.Channel{{Snapshot: snapshot(s1, s1, 3)}, {Snapshot: snapshot(c1, s1, 3)}})
}

func testDeleteChannel(t *testing.T, st store.Store) {
	write(t, st,
		store.PutSession{Session: session(s1, t0, c1, c2)},
		store.PutSnapshot{Snapshot: snapshot(s1, s1, 0)},
		store.PutSnapshot{Snapshot: snapshot(c1, s1, 0)},
		store.PutSnapshot{Snapshot: snapshot(c2, s1, 0)},
		store.AppendAction{Action: action(c2, 1)},
		store.PutTurn{Turn: turn(c2, 0)},
	)
	write(t, st, store.DeleteChannel{URI: c2})
	got := load(t, st, s1, 10)
	diff(t, "channels after deleting a chat", got.Channels, []store.Channel{{Snapshot: snapshot(s1, s1, 0)}, {Snapshot: snapshot(c1, s1, 0)}})
	if turns, _ := st.Turns(ctx, c2, 0, 10); len(turns) != 0 {
		t.Fatalf("turns of a deleted chat remain: %v", turns)
	}
}

func testAtomicBatch(t *testing.T, st store.Store) {
	write(t, st, store.AppendAction{Action: action(c1, 10)})
	bad := []store.Batch{
		{store.PutSession{Session: session(s1, t0)}, store.PutTurn{Turn: store.Turn{Chat: c1, Ordinal: -1}}},
		{store.PutSession{Session: session(s1, t0)}, store.PutSnapshot{Snapshot: snapshot(s1, s1, 1)}, store.AppendAction{Action: action(s1, 10)}},
		{store.PutSession{Session: session(s1, t0)}, store.PutSession{Session: store.Session{}}},
		{store.PutSession{Session: session(s1, t0)}, nil},
	}
	for i, b := range bad {
		if err := st.Write(ctx, b); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("batch %d: %v, want ErrInvalid", i, err)
		}
		if _, err := st.LoadSession(ctx, s1, 10); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("batch %d was applied in part: %v", i, err)
		}
	}
	if seq, _ := st.Seq(ctx); seq != 10 {
		t.Fatalf("Seq = %d after failed batches, want 10", seq)
	}
}

func testCallerBuffers(t *testing.T, st store.Store) {
	sess := session(s1, t0, c1)
	snap := snapshot(c1, s1, 1)
	act := action(c1, 2)
	tn := turn(c1, 0)
	write(t, st, store.PutSession{Session: sess}, store.PutSnapshot{Snapshot: snap}, store.AppendAction{Action: act}, store.PutTurn{Turn: tn})
	for _, b := range [][]byte{sess.Summary, snap.State, act.Envelope, tn.Data} {
		clear(b)
	}
	sess.Chats[0] = "changed"
	got := load(t, st, s1, 1)
	diff(t, "what was stored", got, &store.SessionData{
		Session:  session(s1, t0, c1),
		Channels: []store.Channel{{Snapshot: snapshot(c1, s1, 1), Actions: []store.Action{action(c1, 2)}, Turns: []store.Turn{turn(c1, 0)}, TurnCount: 1}},
	})
	// Changing what was returned changes nothing either.
	clear(got.Channels[0].State)
	diff(t, "after changing a result", load(t, st, s1, 1).Channels[0].Snapshot, snapshot(c1, s1, 1))
}

func testClosed(t *testing.T, st store.Store) {
	write(t, st, store.PutSession{Session: session(s1, t0)})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := st.Write(ctx, store.Batch{store.SetSeq{Seq: 1}}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
	if _, err := st.Seq(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Seq after Close: %v", err)
	}
	if _, err := st.Sessions(ctx, nil, 1); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Sessions after Close: %v", err)
	}
	if _, err := st.LoadSession(ctx, s1, 1); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("LoadSession after Close: %v", err)
	}
	if _, err := st.Turns(ctx, c1, 0, 1); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Turns after Close: %v", err)
	}
}

func testCancelled(t *testing.T, st store.Store) {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := st.Write(cctx, store.Batch{store.PutSession{Session: session(s1, t0)}}); err == nil {
		t.Fatal("Write with a cancelled context succeeded")
	}
	if _, err := st.LoadSession(ctx, s1, 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a cancelled write was applied: %v", err)
	}
	if _, err := st.Sessions(cctx, nil, 1); err == nil {
		t.Fatal("Sessions with a cancelled context succeeded")
	}
}

// testConcurrent has writers and readers run at once (run it with -race).
func testConcurrent(t *testing.T, st store.Store) {
	const writers, each = 4, 25
	var mu sync.Mutex // actions must be appended in seq order
	var seq int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			uri := fmt.Sprintf("ahp-session:/w%d", w)
			chat := fmt.Sprintf("ahp-chat:/w%d", w)
			write(t, st, store.PutSession{Session: session(uri, t0, chat)}, store.PutSnapshot{Snapshot: snapshot(chat, uri, 0)})
			for i := range each {
				mu.Lock()
				seq++
				err := st.Write(ctx, store.Batch{store.AppendAction{Action: action(chat, seq)}, store.PutTurn{Turn: turn(chat, int64(i))}})
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range each {
				if _, err := st.Sessions(ctx, nil, 10); err != nil {
					t.Error(err)
					return
				}
				if _, err := st.Turns(ctx, "ahp-chat:/w0", 0, 10); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		got := load(t, st, fmt.Sprintf("ahp-session:/w%d", w), 5)
		if ch := got.Channels[0]; len(ch.Actions) != each || ch.TurnCount != each {
			t.Fatalf("writer %d: %d actions, %d turns", w, len(ch.Actions), ch.TurnCount)
		}
	}
}

// testRecords: records of a kind come back ordered by key, are replaced
// and deleted by key, and stay apart from other kinds and the catalog.
func testRecords(t *testing.T, st store.Store) {
	rs, ok := st.(store.Records)
	if !ok {
		t.Fatalf("%T does not keep records", st)
	}
	rec := func(kind, key, data string) store.Record {
		return store.Record{Kind: kind, Key: key, Data: []byte(data)}
	}
	write(t, st,
		store.PutRecord{Record: rec("a", "k2", "two")},
		store.PutRecord{Record: rec("a", "k1", "one")},
		store.PutRecord{Record: rec("b", "k1", "other")},
	)
	write(t, st, store.PutRecord{Record: rec("a", "k2", "TWO")}, store.DeleteRecord{Kind: "b", Key: "k1"}, store.DeleteRecord{Kind: "b", Key: "none"})
	got, err := rs.Records(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "records of a", got, []store.Record{rec("a", "k1", "one"), rec("a", "k2", "TWO")})
	got, err = rs.Records(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "records of b", got, []store.Record{})
	if err := st.Write(ctx, store.Batch{store.PutRecord{Record: rec("", "k", "x")}}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a record without a kind: %v, want ErrInvalid", err)
	}
	page, err := st.Sessions(ctx, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "catalog", page, []store.Session{})
}
