package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ahp-go/ahp/store"
)

// loadFixture is a session with a session channel and two chats, each
// with actions after its snapshot and turns.
func loadFixture(uri string) (store.Batch, *store.SessionData) {
	chats := []string{uri + "/chat-a", uri + "/chat-b"}
	want := &store.SessionData{Session: store.Session{URI: uri, ModifiedAt: "2026-01-01T00:00:00.000Z", Summary: []byte(`{"title":"` + uri + `"}`), Chats: chats}}
	b := store.Batch{store.PutSession{Session: want.Session}}
	seq := int64(0)
	for i, ch := range append([]string{uri}, chats...) {
		c := store.Channel{Snapshot: store.Snapshot{Channel: ch, Session: uri, Seq: int64(i), State: []byte(fmt.Sprintf(`{"state":%q}`, ch))}}
		b = append(b, store.PutSnapshot{Snapshot: c.Snapshot})
		if i > 0 {
			for t := range int64(3) {
				tn := store.Turn{Chat: ch, Ordinal: t, ID: fmt.Sprintf("t%d", t), Data: []byte(fmt.Sprintf(`{"turn":%d,"chat":%q}`, t, ch))}
				b = append(b, store.PutTurn{Turn: tn})
				if t > 0 {
					c.Turns = append(c.Turns, tn)
				}
			}
			c.TurnCount = 3
		}
		want.Channels = append(want.Channels, c)
	}
	for i := range want.Channels {
		c := &want.Channels[i]
		for range 2 {
			seq++
			a := store.Action{Seq: seq, Channel: c.Channel, At: 1000 + seq, Envelope: []byte(fmt.Sprintf(`{"serverSeq":%d}`, seq))}
			b = append(b, store.AppendAction{Action: a})
			c.Actions = append(c.Actions, a)
		}
	}
	return b, want
}

func diffData(t *testing.T, what string, got, want *store.SessionData) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("%s (-want +got):\n%s", what, d)
	}
}

// loadsAs loads the fixture's session with two recent turns and compares
// it with want.
func loadsAs(t *testing.T, st *Store, what string, want *store.SessionData) {
	t.Helper()
	got, err := st.LoadSession(ctx, "ahp-session:/s", 2)
	if err != nil {
		t.Fatal(err)
	}
	diffData(t, what, got, want)
}

func fixtureStore(t *testing.T) (*Store, *store.SessionData) {
	t.Helper()
	st := mustOpen(t, t.TempDir())
	b, want := loadFixture("ahp-session:/s")
	if err := st.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	return st, want
}

// TestLoadSnapshot: a batch committed while a load is between its
// queries is seen by none of them (the load reads one snapshot), and by
// the next load.
func TestLoadSnapshot(t *testing.T) {
	st, want := fixtureStore(t)
	chat := want.Channels[1].Channel
	// The batch a compaction writes: a new snapshot, its actions gone.
	compact := store.Batch{
		store.PutSnapshot{Snapshot: store.Snapshot{Channel: chat, Session: "ahp-session:/s", Seq: 100, State: []byte(`{"compacted":true}`)}},
		store.AppendAction{Action: store.Action{Seq: 101, Channel: chat, At: 1, Envelope: []byte(`{"serverSeq":101}`)}},
		store.PutTurn{Turn: store.Turn{Chat: chat, Ordinal: 3, ID: "t3", Data: []byte(`{}`)}},
	}
	queries := 0
	st.betweenLoadQueries = func() {
		queries++
		if queries == 2 { // after the channels, before their actions and turns
			if err := st.Write(ctx, compact); err != nil {
				t.Errorf("writing during the load: %v", err)
			}
		}
	}
	got, err := st.LoadSession(ctx, "ahp-session:/s", 2)
	if err != nil {
		t.Fatal(err)
	}
	if queries != 3 {
		t.Fatalf("%d queries after the first, want 3", queries)
	}
	diffData(t, "the load the batch interrupted", got, want)

	st.betweenLoadQueries = nil
	got, err = st.LoadSession(ctx, "ahp-session:/s", 2)
	if err != nil {
		t.Fatal(err)
	}
	c := got.Channels[1]
	if c.Seq != 100 || len(c.Actions) != 1 || c.Actions[0].Seq != 101 || c.TurnCount != 4 || c.Turns[1].ID != "t3" {
		t.Fatalf("the next load: %+v", c)
	}
}

// TestLoadCorruptColumn: a value of a type its column should not hold,
// which SQLite keeps when given one, is reported as ErrCorrupt; a value
// that Scan converts loads as Scan converts it. The connection stays
// usable either way.
func TestLoadCorruptColumn(t *testing.T) {
	for _, tc := range []struct {
		name, damage, repair string
		check                func(*store.SessionData) bool // nil: ErrCorrupt
	}{
		{name: "text seq", damage: "UPDATE channels SET seq = 'seven' WHERE uri = 'ahp-session:/s'"},
		{name: "float seq", damage: "UPDATE channels SET seq = 1.5 WHERE uri = 'ahp-session:/s'"},
		{name: "blob ordinal", damage: "UPDATE turns SET ordinal = x'01' WHERE chat = 'ahp-session:/s/chat-a' AND ordinal = 2"},
		{name: "running 2", damage: "UPDATE sessions SET running = 2 WHERE uri = 'ahp-session:/s'"},
		{name: "running text", damage: "UPDATE sessions SET running = 'maybe' WHERE uri = 'ahp-session:/s'"},
		{name: "chats not a list", damage: `UPDATE sessions SET chats = '{"a":1}' WHERE uri = 'ahp-session:/s'`},
		{name: "chats truncated", damage: `UPDATE sessions SET chats = '["ahp-chat:/a"' WHERE uri = 'ahp-session:/s'`},
		{name: "action at text", damage: "UPDATE actions SET at = x'00' WHERE seq = 3"},
		{name: "integer state", damage: "UPDATE channels SET state = 42 WHERE uri = 'ahp-session:/s'", check: func(d *store.SessionData) bool {
			return string(d.Channels[0].State) == "42"
		}},
		{name: "text envelope", damage: "UPDATE actions SET envelope = 'text' WHERE seq = 1", check: func(d *store.SessionData) bool {
			return string(d.Channels[0].Actions[0].Envelope) == "text"
		}},
		{name: "blob id", damage: "UPDATE turns SET id = x'7432' WHERE chat = 'ahp-session:/s/chat-a' AND ordinal = 2", check: func(d *store.SessionData) bool {
			return d.Channels[1].Turns[1].ID == "t2"
		}},
		{name: "running true", damage: "UPDATE sessions SET running = 'true' WHERE uri = 'ahp-session:/s'", check: func(d *store.SessionData) bool {
			return d.Session.Running
		}},
		{name: "null chats", damage: "UPDATE sessions SET chats = 'null' WHERE uri = 'ahp-session:/s'", check: func(d *store.SessionData) bool {
			return d.Session.Chats == nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := fixtureStore(t)
			b, other := loadFixture("ahp-session:/t")
			for i, op := range b {
				if a, ok := op.(store.AppendAction); ok {
					a.Action.Seq += 100
					b[i] = a
				}
			}
			for c := range other.Channels {
				for a := range other.Channels[c].Actions {
					other.Channels[c].Actions[a].Seq += 100
				}
			}
			if err := st.Write(ctx, b); err != nil {
				t.Fatal(err)
			}
			if _, err := st.db.Exec(tc.damage); err != nil {
				t.Fatal(err)
			}
			got, err := st.LoadSession(ctx, "ahp-session:/s", 2)
			if tc.check == nil {
				if !errors.Is(err, store.ErrCorrupt) || got != nil {
					t.Fatalf("load: %v, %v; want ErrCorrupt", got, err)
				}
			} else if err != nil || !tc.check(got) {
				t.Fatalf("load: %+v, %v", got, err)
			}
			// The transaction ended (a reader would keep the checkpoint
			// from completing), and the connection serves the next load.
			l := st.load
			if err := st.checkpoint(ctx); err != nil {
				t.Fatalf("checkpoint after the load: %v", err)
			}
			got, err = st.LoadSession(ctx, "ahp-session:/t", 2)
			if err != nil {
				t.Fatal(err)
			}
			if st.load != l {
				t.Fatal("the connection of loads was replaced")
			}
			diffData(t, "the next load", got, other)
		})
	}
}

// TestLoadCancelled: a context done before the load, or between its
// queries, ends it with the context's error; the next load runs.
func TestLoadCancelled(t *testing.T) {
	st, want := fixtureStore(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.LoadSession(cctx, "ahp-session:/s", 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("load with a cancelled context: %v", err)
	}
	cctx, cancel = context.WithCancel(ctx)
	st.betweenLoadQueries = cancel
	if _, err := st.LoadSession(cctx, "ahp-session:/s", 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("load cancelled between its queries: %v", err)
	}
	st.betweenLoadQueries = nil
	loadsAs(t, st, "the next load", want)
}

// TestLoadAfterClose: Close ends the connection of loads; later loads
// fail with ErrClosed.
func TestLoadAfterClose(t *testing.T) {
	st, _ := fixtureStore(t)
	if _, err := st.LoadSession(ctx, "ahp-session:/s", 2); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if st.load != nil {
		t.Fatal("the connection of loads is still held after Close")
	}
	if _, err := st.LoadSession(ctx, "ahp-session:/s", 2); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("load after Close: %v, want ErrClosed", err)
	}
}

// TestLoadAfterReopen: loads go on after the store reopened its
// database for a write-ahead log deleted under it.
func TestLoadAfterReopen(t *testing.T) {
	st, want := fixtureStore(t)
	if _, err := st.LoadSession(ctx, "ahp-session:/s", 2); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(walPath(st.path)); err != nil {
		t.Fatal(err)
	}
	if err := st.Check(ctx); err == nil || !strings.Contains(err.Error(), "deleted") {
		t.Fatalf("Check after the log was deleted: %v", err)
	}
	loadsAs(t, st, "after reopening", want)
}

// TestLoadConcurrent: loads from several goroutines at once, beside
// writes to other sessions, each get their own session whole (run with
// -race).
func TestLoadConcurrent(t *testing.T) {
	st := mustOpen(t, t.TempDir())
	const sessions, loaders, each = 4, 6, 20
	wants := make([]*store.SessionData, sessions)
	for i := range wants {
		var b store.Batch
		b, wants[i] = loadFixture(fmt.Sprintf("ahp-session:/s%d", i))
		// Actions of every session share one sequence.
		for j, op := range b {
			if a, ok := op.(store.AppendAction); ok {
				a.Action.Seq += int64(i * 100)
				b[j] = a
			}
		}
		for c := range wants[i].Channels {
			for a := range wants[i].Channels[c].Actions {
				wants[i].Channels[c].Actions[a].Seq += int64(i * 100)
			}
		}
		if err := st.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range each {
			uri := fmt.Sprintf("ahp-session:/other%d", i)
			if err := st.Write(ctx, store.Batch{store.PutSession{Session: store.Session{URI: uri, ModifiedAt: "x", Summary: []byte(`{}`)}}}); err != nil {
				t.Error(err)
			}
		}
	})
	for g := range loaders {
		wg.Go(func() {
			for i := range each {
				k := (g + i) % sessions
				got, err := st.LoadSession(ctx, wants[k].Session.URI, 2)
				if err != nil {
					t.Error(err)
					return
				}
				if d := cmp.Diff(wants[k], got, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("load of %s (-want +got):\n%s", wants[k].Session.URI, d)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestLoadResultsOwnBytes: every blob of a load is a slice of its own:
// changing or appending to one changes no other, nor the next load.
func TestLoadResultsOwnBytes(t *testing.T) {
	st, want := fixtureStore(t)
	got, err := st.LoadSession(ctx, "ahp-session:/s", 2)
	if err != nil {
		t.Fatal(err)
	}
	var blobs [][]byte
	blobs = append(blobs, got.Session.Summary)
	for _, c := range got.Channels {
		blobs = append(blobs, c.State)
		for _, a := range c.Actions {
			blobs = append(blobs, a.Envelope)
		}
		for _, tn := range c.Turns {
			blobs = append(blobs, tn.Data)
		}
	}
	for _, b := range blobs {
		_ = append(b, "appended"...)
		for j := range b {
			b[j] = '#'
		}
	}
	for i, b := range blobs {
		if !bytes.Equal(b, bytes.Repeat([]byte("#"), len(b))) {
			t.Fatalf("blob %d changed by changing another: %q", i, b)
		}
	}
	loadsAs(t, st, "the next load", want)
}

// TestLoadBrokenConnection: a connection of loads that cannot start a
// transaction (one is open on it already) fails that load and is
// discarded; the next load takes another connection.
func TestLoadBrokenConnection(t *testing.T) {
	st, want := fixtureStore(t)
	if _, err := st.LoadSession(ctx, "ahp-session:/s", 2); err != nil {
		t.Fatal(err)
	}
	l := st.load
	if _, err := l.conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LoadSession(ctx, "ahp-session:/s", 2); err == nil {
		t.Fatal("a load on a connection in a transaction succeeded")
	}
	if st.load != nil || l.stmts != nil {
		t.Fatalf("the broken connection was kept (statements %v)", l.stmts)
	}
	loadsAs(t, st, "the next load", want)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
