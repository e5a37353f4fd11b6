package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/internal/fileinfo"
	"github.com/ahp-go/ahp/store"
)

// What happens to the store's files behind its back can lose acknowledged
// changes without a word, so the store watches for it:
//
//   - Before every batch it checks that ahpd.db and its write-ahead log
//     (ahpd.db-wal) are still the files it opened: the same file at the
//     path, and for the log, a descriptor of ours that still has a link. SQLite keeps writing to a log that was deleted or replaced,
//     and everything committed since the last checkpoint would be gone at
//     the next start. When that happens the store checkpoints the log it
//     still holds into ahpd.db, reopens the database (a new log) and
//     fails that one write with an error saying so; the retry goes to the
//     new log. A database file deleted or replaced fails every write: the
//     data is gone with it.
//   - At open, an empty ahpd.db in a directory that held a store (the lock
//     file says so, or a write-ahead log with data is beside it) is
//     refused rather than taken for a new, empty store.

// lockMark is written to the lock file once a store has been opened in
// the directory: an empty database beside it is then damage, not a new
// store.
const lockMark = "ahpd sqlite store\n"

// fileWatch is what the store knows of its files. Guarded by Store.wmu.
type fileWatch struct {
	db     fs.FileInfo
	wal    *os.File // our own descriptor on the log, to see its link count
	walFI  fs.FileInfo
	failed error // the database file itself went away: every write fails
}

func walPath(db string) string { return db + "-wal" }

// checkEmpty refuses an empty database file in a directory that held a
// store. marked says whether the lock file carried lockMark.
func checkEmpty(path string, marked bool) error {
	st, err := os.Stat(path)
	if err != nil || st.Size() != 0 {
		return nil
	}
	why := ""
	if marked {
		why = "the lock file " + LockFile + " shows a store was kept here"
	} else if w, err := os.Stat(walPath(path)); err == nil && w.Size() > 0 {
		why = fmt.Sprintf("a write-ahead log of %d bytes is beside it", w.Size())
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("sqlite store %s: %w: the database file is empty but %s; refusing to start an empty store over it (move the directory's files away to start afresh)", path, store.ErrCorrupt, why)
}

// watchFiles records the identity of the database and its log, after
// they were opened.
func (s *Store) watchFiles() error {
	st, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	if s.files.wal != nil {
		s.files.wal.Close()
	}
	s.files.db, s.files.wal, s.files.walFI = st, nil, nil
	f, err := os.Open(walPath(s.path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // SQLite creates it on the first write; checked from then on
		}
		return fmt.Errorf("sqlite store %s: %w", walPath(s.path), err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("sqlite store %s: %w", walPath(s.path), err)
	}
	s.files.wal, s.files.walFI = f, fi
	return nil
}

// checkFiles runs before every batch: see the comment at the top.
func (s *Store) checkFiles(ctx context.Context) error {
	if s.files.failed != nil {
		return s.files.failed
	}
	if why := changed(s.path, s.files.db, nil); why != "" {
		s.files.failed = fmt.Errorf("sqlite store %s: %w: the database file was %s while the store was open; changes can no longer be saved (restart to open a store again; what the file held is lost)", s.path, store.ErrCorrupt, why)
		return s.files.failed
	}
	if s.files.wal == nil {
		return s.watchFiles() // not created yet at open
	}
	why := changed(walPath(s.path), s.files.walFI, s.files.wal)
	if why == "" {
		return nil
	}
	// SQLite still holds the old log: copy what it has into the database
	// file, then reopen to get a new log.
	if err := s.checkpoint(ctx); err != nil {
		return fmt.Errorf("sqlite store %s: the write-ahead log was %s, and saving what it holds into the database failed: %w", s.path, why, err)
	}
	if err := s.reopen(); err != nil {
		return fmt.Errorf("sqlite store %s: the write-ahead log was %s; its content is saved in the database, but reopening failed: %w", s.path, why, err)
	}
	return fmt.Errorf("sqlite store %s: the write-ahead log was %s while the store was open; what it held is saved in the database and a new log is in use (this write is retried)", s.path, why)
}

// changed says how the file at path differs from the one recorded, or "".
func changed(path string, was fs.FileInfo, open *os.File) string {
	now, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "deleted"
	case err != nil:
		return "unreadable (" + err.Error() + ")"
	case !os.SameFile(was, now):
		return "replaced"
	}
	if open != nil {
		if fi, err := open.Stat(); err == nil && fileinfo.Links(fi) == 0 {
			return "deleted"
		}
	}
	// More links are harmless (a backup made with ln): the data still
	// reaches the file SQLite writes.
	return ""
}

// checkpoint copies every frame of the log into the database file.
func (s *Store) checkpoint(ctx context.Context) error {
	var busy, logFrames, done int
	if err := s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return err
	}
	if busy != 0 {
		return errors.New("the checkpoint could not complete (readers busy)")
	}
	return nil
}

// reopen closes the database and opens it again, with a new log. It holds
// dbmu so that no read runs meanwhile.
func (s *Store) reopen() error {
	s.dbmu.Lock()
	defer s.dbmu.Unlock()
	s.closeLoadLocked()
	s.db.Close()
	db, err := sql.Open("sqlite", s.dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s.db = db
	if err := s.open(); err != nil {
		return err
	}
	return s.watchFiles()
}

// markLock records in the lock file that a store lives in the directory.
func markLock(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(lockMark), 0)
	return err
}

// lockMarked reports whether the lock file carries lockMark.
func lockMarked(path string) bool {
	b, err := os.ReadFile(filepath.Clean(path))
	return err == nil && strings.HasPrefix(string(b), lockMark)
}

// Check runs the checks made before every batch while no batch comes: a
// host calls it when idle, so that a log deleted meanwhile is found (and
// what it holds saved) before a crash could lose it. It returns nil when
// the files are sound, the error a write would have met otherwise (after
// repairing what can be repaired).
func (s *Store) Check(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.checkFiles(ctx)
}
