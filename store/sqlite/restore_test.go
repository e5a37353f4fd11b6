package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/internal/syncbuf"
	"github.com/ahp-go/ahp/store"
)

func openLogged(t *testing.T, dir string, interval time.Duration) (*Store, *syncbuf.Buffer) {
	t.Helper()
	buf := &syncbuf.Buffer{}
	st, err := Open(dir, &Options{BackupInterval: interval, Logger: slog.New(slog.NewTextHandler(buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, buf
}

func writeSessions(t *testing.T, st *Store, prefix string, n int) {
	t.Helper()
	for i := range n {
		if err := st.Write(ctx, putSession(fmt.Sprintf("ahp-session:/%s%d", prefix, i))); err != nil {
			t.Fatal(err)
		}
	}
}

// copyDir copies every file of a running store's directory, as a crash
// (kill -9) would leave them.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(dst, src)
		src.Close()
		dst.Close()
	}
	return to
}

// TestBackup: a backup is a checked copy of what was acknowledged; with
// nothing written since, none is taken again; a damaged store takes none
// and keeps the last good one.
func TestBackup(t *testing.T) {
	dir := t.TempDir()
	st, _ := openLogged(t, dir, -1)
	writeSessions(t, st, "a", 10)
	info, err := st.Backup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Sessions != 10 || info.Seq != 0 || info.Bytes == 0 || info.At.IsZero() || info.Path != filepath.Join(dir, BackupFile) {
		t.Fatalf("backup: %+v", info)
	}
	again, err := st.Backup(ctx)
	if err != nil || again != info {
		t.Fatalf("backup with nothing written since: %+v, %v; want %+v", again, err, info)
	}
	if err := st.Write(ctx, store.Batch{store.SetSeq{Seq: 77}}); err != nil {
		t.Fatal(err)
	}
	if info, err = st.Backup(ctx); err != nil || info.Seq != 77 {
		t.Fatalf("backup after a write: %+v, %v", info, err)
	}
	before, _ := os.ReadFile(info.Path)
	if err := os.Truncate(walPath(st.path), 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, putSession("ahp-session:/x")); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("write after the log was truncated: %v", err)
	}
	if _, err := st.Backup(ctx); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "previous one is kept") {
		t.Fatalf("backup of a damaged store: %v", err)
	}
	st.Close()
	if after, _ := os.ReadFile(info.Path); !bytes.Equal(before, after) {
		t.Fatal("the damaged store replaced its last good backup")
	}
}

// TestBackupLoop: the store refreshes its backup every interval while
// something was written, and once more when it closes.
func TestBackupLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		buf := &syncbuf.Buffer{}
		st, err := Open(dir, &Options{BackupInterval: time.Minute, Logger: slog.New(slog.NewTextHandler(buf, nil))})
		if err != nil {
			t.Fatal(err)
		}
		backups := func() int { return strings.Count(buf.String(), "session store backed up") }
		writeSessions(t, st, "a", 3)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if n := backups(); n != 1 {
			t.Fatalf("%d backups after one interval, want 1", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := backups(); n != 1 {
			t.Fatalf("%d backups after an interval with no write, want still 1", n)
		}
		writeSessions(t, st, "b", 1)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if n := backups(); n != 2 {
			t.Fatalf("%d backups after a write and Close, want 2", n)
		}
		info, err := inspect(ctx, filepath.Join(dir, BackupFile), nil)
		if err != nil || info.Sessions != 4 {
			t.Fatalf("the backup taken at close: %+v, %v", info, err)
		}
	})
}

// TestRestore: whatever happens to the database or its log, at rest or
// under the running store, the next Open restores the backup, with every
// session acknowledged before it was taken, keeps the damaged files aside,
// says what was lost, and never issues a serverSeq of the lost span again.
func TestRestore(t *testing.T) {
	overwritePages := func(path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := 4096; i < len(data); i++ {
			data[i] = 0xA5
		}
		os.WriteFile(path, data, 0o600)
	}
	type damage struct {
		name    string
		running func(dir string) // while the store runs; then a write must fail
		atRest  func(dir string) // after the store closed (or crashed)
		crash   bool             // the store is killed rather than closed
	}
	db := func(dir string) string { return filepath.Join(dir, DBFile) }
	for _, tc := range []damage{
		{name: "db truncated at rest", atRest: func(dir string) { os.Truncate(db(dir), 0) }},
		{name: "db shortened at rest", atRest: func(dir string) { os.Truncate(db(dir), 8192) }},
		{name: "db deleted, lock left", atRest: func(dir string) { os.Remove(db(dir)) }},
		{name: "only the backup left", atRest: func(dir string) {
			os.Remove(db(dir))
			os.Remove(filepath.Join(dir, LockFile))
		}},
		{name: "db pages overwritten after a crash", atRest: func(dir string) {
			os.Remove(walPath(db(dir)))
			overwritePages(db(dir))
		}, crash: true},
		{name: "db pages overwritten", atRest: func(dir string) { overwritePages(db(dir)) }},
		{name: "wal truncated under the store", running: func(dir string) { os.Truncate(walPath(db(dir)), 0) }},
		{name: "wal truncated under the store, crash", running: func(dir string) { os.Truncate(walPath(db(dir)), 0) }, crash: true},
		{name: "db truncated under the store", running: func(dir string) { os.Truncate(db(dir), 0) }},
		{name: "db truncated under the store, crash", running: func(dir string) { os.Truncate(db(dir), 0) }, crash: true},
		{name: "db and wal truncated under the store", running: func(dir string) {
			os.Truncate(db(dir), 0)
			os.Truncate(walPath(db(dir)), 0)
		}},
		{name: "db deleted under the store", running: func(dir string) { os.Remove(db(dir)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st, _ := openLogged(t, dir, -1)
			writeSessions(t, st, "a", 30)
			if err := st.checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			writeSessions(t, st, "b", 30)
			if err := st.Write(ctx, store.Batch{store.SetSeq{Seq: 500}}); err != nil {
				t.Fatal(err)
			}
			info, err := st.Backup(ctx)
			if err != nil {
				t.Fatal(err)
			}
			writeSessions(t, st, "c", 5) // after the backup: may be lost
			if tc.running != nil {
				tc.running(dir)
				if err := st.Write(ctx, putSession("ahp-session:/d")); !errors.Is(err, store.ErrCorrupt) {
					t.Fatalf("write after the damage: %v, want ErrCorrupt", err)
				}
			}
			if tc.crash {
				dir = copyDir(t, dir)
			} else {
				st.Close()
			}
			if tc.atRest != nil {
				tc.atRest(dir)
			}

			st2, log := openLogged(t, dir, -1)
			list, err := st2.Sessions(ctx, nil, 1000)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, s := range list {
				have[strings.TrimPrefix(s.URI, "ahp-session:/")] = true
			}
			for _, p := range []string{"a", "b"} {
				for i := range 30 {
					if !have[fmt.Sprintf("%s%d", p, i)] {
						t.Fatalf("session %s%d, acknowledged before the backup, is missing (have %d sessions)", p, i, len(list))
					}
				}
			}
			if have["d"] {
				t.Fatal("the write refused after the damage was kept")
			}
			if seq, _ := st2.Seq(ctx); seq < info.Seq+restoreSeqGap {
				t.Fatalf("Seq after the restore = %d, want at least %d", seq, info.Seq+restoreSeqGap)
			}
			out := log.String()
			if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "restored from its backup") || !strings.Contains(out, "serverSeq above 500") {
				t.Fatalf("log of the restore:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(dir, DamageFile)); err == nil {
				t.Fatal("the damage mark is left after the restore")
			}
			aside, _ := filepath.Glob(filepath.Join(dir, "ahpd-damaged-*.db*"))
			if !strings.Contains(tc.name, "deleted") && !strings.Contains(tc.name, "only the backup") && len(aside) == 0 {
				t.Fatal("the damaged files were not kept aside")
			}
			// The restored store works and is watched again.
			if err := st2.Write(ctx, putSession("ahp-session:/e")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCleanClose: a store closed with its files sound says so in its lock
// file, and the next open checks the database by its header (a shortened
// file is found without reading every page); a running or crashed store
// does not, and the next open runs quick_check.
func TestCleanClose(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, LockFile)
	st, _ := openLogged(t, dir, -1)
	writeSessions(t, st, "a", 3)
	if marked, clean := lockMarked(lock); !marked || clean {
		t.Fatalf("lock of a running store: marked %v, clean %v", marked, clean)
	}
	crashed := copyDir(t, dir)
	if _, clean := lockMarked(filepath.Join(crashed, LockFile)); clean {
		t.Fatal("a crashed store's lock says it closed cleanly")
	}
	st.Close()
	if marked, clean := lockMarked(lock); !marked || !clean {
		t.Fatalf("lock of a closed store: marked %v, clean %v", marked, clean)
	}
	if err := checkHeader(filepath.Join(dir, DBFile)); err != nil {
		t.Fatal(err)
	}
	os.Truncate(filepath.Join(dir, DBFile), 4096)
	if err := checkHeader(filepath.Join(dir, DBFile)); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("header check of a shortened database: %v", err)
	}
}
