package sqlite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
)

func putSession(uri string) store.Batch {
	return store.Batch{store.PutSession{Session: store.Session{URI: uri, ModifiedAt: "2026-01-01T00:00:00.000Z", Summary: []byte(`{}`)}}}
}

// crashCopy copies the store's files as a crash would leave them on disk,
// and opens the copy.
func crashCopy(t *testing.T, st *Store) *Store {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{DBFile, DBFile + "-wal"} {
		src, err := os.Open(filepath.Join(filepath.Dir(st.path), name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(dst, src)
		src.Close()
		dst.Close()
	}
	return mustOpen(t, dir)
}

func sessionURIs(t *testing.T, st *Store) string {
	t.Helper()
	list, err := st.Sessions(ctx, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, s := range list {
		uris = append(uris, strings.TrimPrefix(s.URI, "ahp-session:/"))
	}
	return strings.Join(uris, " ")
}

// TestWALDeletedOrReplaced: when the write-ahead log is deleted or
// replaced under a running store, SQLite would keep committing to the
// lost file and a crash would lose every change since the last
// checkpoint, silently. The store saves what the lost log holds into the
// database and goes on with a new log: found after a commit, the batch is
// acknowledged (it is saved) and the next Check reports the repair; found
// by Check, that Check reports it. A crash then loses nothing
// acknowledged.
func TestWALDeletedOrReplaced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(wal string) error
		want   string
	}{
		{"deleted", os.Remove, "write-ahead log was deleted"},
		{"replaced", func(wal string) error {
			other := wal + ".other"
			if err := os.WriteFile(other, nil, 0o600); err != nil {
				return err
			}
			return os.Rename(other, wal)
		}, "write-ahead log was replaced"},
	} {
		for _, foundBy := range []string{"write", "check"} {
			t.Run(tc.name+" found by "+foundBy, func(t *testing.T) {
				st := mustOpen(t, t.TempDir())
				if err := st.Write(ctx, putSession("ahp-session:/a")); err != nil {
					t.Fatal(err)
				}
				if err := tc.damage(walPath(st.path)); err != nil {
					t.Fatal(err)
				}
				if foundBy == "write" {
					if err := st.Write(ctx, putSession("ahp-session:/b")); err != nil {
						t.Fatalf("write after the damage: %v", err)
					}
				}
				err := st.Check(ctx)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("check after the damage: %v, want %q", err, tc.want)
				}
				if err := st.Check(ctx); err != nil {
					t.Fatalf("second check after the repair: %v", err)
				}
				for _, uri := range []string{"ahp-session:/b", "ahp-session:/c"} {
					if err := st.Write(ctx, putSession(uri)); err != nil {
						t.Fatalf("write %s: %v", uri, err)
					}
				}
				if got := sessionURIs(t, crashCopy(t, st)); got != "a b c" {
					t.Fatalf("after a crash: sessions %q, want \"a b c\"", got)
				}
			})
		}
	}
}

// TestDatabaseDeleted: a database file deleted under a running store
// fails every later write, saying why.
func TestDatabaseDeleted(t *testing.T) {
	st := mustOpen(t, t.TempDir())
	if err := st.Write(ctx, putSession("ahp-session:/a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(st.path); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		err := st.Write(ctx, putSession("ahp-session:/b"))
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "database file was deleted") {
			t.Fatalf("write after the database was deleted: %v", err)
		}
	}
}

// TestEmptyDatabase: an empty ahpd.db where a store was kept is refused
// instead of being taken for a new, empty store; an empty file in a new
// directory is a new store.
func TestEmptyDatabase(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	if err := st.Write(ctx, putSession("ahp-session:/a")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.Truncate(filepath.Join(dir, DBFile), 0); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, BackupFile)) // restored otherwise (TestRestore)
	if _, err := Open(dir, nil); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "the database file is empty") {
		t.Fatalf("empty database beside its lock file: %v", err)
	}

	// An empty database beside a write-ahead log with data.
	dir2 := t.TempDir()
	os.WriteFile(filepath.Join(dir2, DBFile), nil, 0o600)
	os.WriteFile(filepath.Join(dir2, DBFile+"-wal"), []byte(strings.Repeat("x", 4096)), 0o600)
	if _, err := Open(dir2, nil); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("empty database beside a log with data: %v", err)
	}

	// A new directory, and one whose lock file was left by a start that
	// never opened a store.
	for _, lock := range []bool{false, true} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, DBFile), nil, 0o600)
		if lock {
			os.WriteFile(filepath.Join(dir, LockFile), nil, 0o600)
		}
		st, err := Open(dir, nil)
		if err != nil {
			t.Fatalf("empty database in a new directory (lock file %v): %v", lock, err)
		}
		st.Close()
	}
}

// TestExtraLinksAllowed: a hard link made to the database or its log (a
// backup made with ln) loses nothing, so writes go on.
func TestExtraLinksAllowed(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	if err := st.Write(ctx, putSession("ahp-session:/a")); err != nil {
		t.Fatal(err)
	}
	backup := t.TempDir()
	for _, name := range []string{DBFile, DBFile + "-wal"} {
		if err := os.Link(filepath.Join(dir, name), filepath.Join(backup, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Write(ctx, putSession("ahp-session:/b")); err != nil {
		t.Fatalf("write with extra links: %v", err)
	}
}

// TestFilesDamaged: a log or database truncated or overwritten under a
// running store loses what it held, which no retry brings back: the next
// write and every one after it fail with ErrCorrupt saying why, the idle
// check reports the same, and the store leaves its damage mark for the
// next start.
func TestFilesDamaged(t *testing.T) {
	overwrite := func(path string) error {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteAt(make([]byte, 64), 0)
		return err
	}
	for _, tc := range []struct {
		name   string
		file   string
		damage func(path string) error
		want   string
	}{
		{"wal truncated", DBFile + "-wal", func(p string) error { return os.Truncate(p, 0) }, "write-ahead log was truncated"},
		{"wal shortened", DBFile + "-wal", func(p string) error { return os.Truncate(p, 4096) }, "write-ahead log was truncated"},
		{"wal overwritten", DBFile + "-wal", overwrite, "write-ahead log was overwritten"},
		{"db truncated", DBFile, func(p string) error { return os.Truncate(p, 0) }, "database file was truncated"},
		{"db shortened", DBFile, func(p string) error { return os.Truncate(p, 4096) }, "database file was truncated"},
		{"db overwritten", DBFile, overwrite, "database file was overwritten"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := mustOpen(t, dir)
			// Some pages in the database file, some frames in the log.
			for i := range 20 {
				if err := st.Write(ctx, putSession(fmt.Sprintf("ahp-session:/a%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				if err := st.Write(ctx, putSession(fmt.Sprintf("ahp-session:/b%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.damage(filepath.Join(dir, tc.file)); err != nil {
				t.Fatal(err)
			}
			for _, call := range []func() error{
				func() error { return st.Write(ctx, putSession("ahp-session:/c")) },
				func() error { return st.Check(ctx) },
				func() error { return st.Write(ctx, putSession("ahp-session:/d")) },
			} {
				if err := call(); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("after the damage: %v, want ErrCorrupt and %q", err, tc.want)
				}
			}
			mark, err := os.ReadFile(filepath.Join(dir, DamageFile))
			if err != nil || !strings.Contains(string(mark), strings.TrimPrefix(tc.want, "write-ahead log was ")) {
				t.Fatalf("damage mark: %q, %v", mark, err)
			}
		})
	}
}
