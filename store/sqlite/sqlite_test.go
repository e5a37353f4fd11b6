package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/storetest"
)

var ctx = context.Background()

func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func sample() store.Batch {
	const s, c = "ahp-session:/s", "ahp-chat:/c"
	return store.Batch{
		store.PutSession{Session: store.Session{URI: s, ModifiedAt: "2026-01-01T00:00:00.000Z", Summary: []byte(`{}`), Chats: []string{c}, Running: true}},
		store.PutSnapshot{Snapshot: store.Snapshot{Channel: c, Session: s, Seq: 1, State: []byte(`{}`)}},
		store.AppendAction{Action: store.Action{Seq: 5, Channel: c, At: 1, Envelope: []byte(`{}`)}},
		store.PutTurn{Turn: store.Turn{Chat: c, Ordinal: 0, ID: "t0", Data: []byte(`{}`)}},
		store.SetSeq{Seq: 1000},
	}
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	if err := st.Write(ctx, sample()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = mustOpen(t, dir)
	d, err := st.LoadSession(ctx, "ahp-session:/s", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Session.Running || len(d.Channels) != 1 || len(d.Channels[0].Actions) != 1 || d.Channels[0].TurnCount != 1 {
		t.Fatalf("after reopening: %+v", d)
	}
	if seq, _ := st.Seq(ctx); seq != 1000 {
		t.Fatalf("Seq after reopening = %d, want 1000", seq)
	}
	// The append position survives too, even once the log is compacted.
	st.Write(ctx, store.Batch{store.PutSnapshot{Snapshot: store.Snapshot{Channel: "ahp-chat:/c", Session: "ahp-session:/s", Seq: 5, State: []byte(`{}`)}}})
	st.Close()
	st = mustOpen(t, dir)
	err = st.Write(ctx, store.Batch{store.AppendAction{Action: store.Action{Seq: 5, Channel: "ahp-chat:/c"}}})
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("re-appending seq 5 after reopening: %v", err)
	}
	var v int
	st.db.QueryRow("PRAGMA user_version").Scan(&v)
	if v != SchemaVersion {
		t.Fatalf("user_version = %d, want %d", v, SchemaVersion)
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	_, err := Open(dir, nil)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "in use by another process (is another ahpd running?)") {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	st.Close()
	mustOpen(t, dir)
}

func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	garbage := []byte(strings.Repeat("this is not a database ", 400))
	if err := os.WriteFile(filepath.Join(dir, DBFile), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, nil)
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Open of a garbage file: %v, want ErrCorrupt", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("the error is not one line: %q", err)
	}
	// The failed open released the lock.
	os.Remove(filepath.Join(dir, DBFile))
	mustOpen(t, dir)
}

func TestCorruptPages(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	var b store.Batch
	for i := range int64(2000) {
		b = append(b, store.PutTurn{Turn: store.Turn{Chat: "ahp-chat:/c", Ordinal: i, ID: "t", Data: []byte(strings.Repeat("x", 200))}})
	}
	if err := st.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Overwrite everything after the first page (the header stays valid).
	path := filepath.Join(dir, DBFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4096; i < len(data); i++ {
		data[i] = 0xA5
	}
	os.WriteFile(path, data, 0o600)
	// The check at open finds the damage; with no backup to restore,
	// Open fails.
	os.Remove(filepath.Join(dir, BackupFile))
	st2, err := Open(dir, nil)
	if err == nil {
		defer st2.Close()
		_, err = st2.Turns(ctx, "ahp-chat:/c", 0, 2000)
	}
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "no backup") {
		t.Fatalf("reading damaged pages: %v, want ErrCorrupt", err)
	}
}

func TestNewerSchema(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	st.db.Exec("PRAGMA user_version = 99")
	st.Close()
	_, err := Open(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

func TestUnwritableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	_, err := Open(filepath.Join(file, "data"), nil)
	if err == nil || !strings.Contains(err.Error(), "cannot create the data directory") {
		t.Fatalf("Open under a file: %v", err)
	}
}

// TestFull fills the database up to a page limit: the batch that does not
// fit fails with ErrFull and leaves nothing of itself behind, and the store
// goes on working once there is room.
func TestFull(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	// Cap every connection of the pool at the current size plus a little.
	db, err := sql.Open("sqlite", "file:"+st.path+"?_busy_timeout=5000&_pragma=max_page_count(64)")
	if err != nil {
		t.Fatal(err)
	}
	st.db.Close()
	st.db = db
	// Closing the pool removed the write-ahead log: record the new files.
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	if err := st.watchFiles(); err != nil {
		t.Fatal(err)
	}
	big := store.Batch{store.PutSession{Session: store.Session{URI: "ahp-session:/big", ModifiedAt: "x", Summary: []byte("{}")}}}
	for i := range int64(400) {
		big = append(big, store.PutTurn{Turn: store.Turn{Chat: "ahp-chat:/c", Ordinal: i, ID: "t", Data: []byte(strings.Repeat("x", 1000))}})
	}
	err = st.Write(ctx, big)
	if !errors.Is(err, store.ErrFull) {
		t.Fatalf("a batch over the limit: %v, want ErrFull", err)
	}
	if _, err := st.LoadSession(ctx, "ahp-session:/big", 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("part of the failed batch was kept: %v", err)
	}
	if err := st.Write(ctx, sample()); err != nil {
		t.Fatalf("a small batch after the failure: %v", err)
	}
}
