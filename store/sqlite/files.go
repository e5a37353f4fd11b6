package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/store"
)

// What happens to the store's files behind its back can lose acknowledged
// changes without a word, so the store watches for it:
//
//   - After every commit, before Write returns nil, and about once a
//     second while the host is idle (Check), it checks that ahpd.db and
//     its write-ahead log (ahpd.db-wal) are still the files it opened and
//     wrote: the same file at the path, for the log a descriptor of ours
//     that still has a link, neither shorter than it was after the last
//     commit (SQLite never shrinks either: the store runs no VACUUM and
//     truncates the log only in its own checkpoint), and each still
//     starting with its header. Before every batch, a quicker look (the
//     size and link count of both, through our descriptors) keeps a
//     batch from being written into a shortened or deleted log.
//   - A log deleted or replaced is repaired: SQLite keeps writing to the
//     file it holds, so the store checkpoints that file into ahpd.db and
//     reopens the database (a new log). Found by Check, it is reported
//     by that Check; found after a commit, the batch (saved with the
//     rest) is acknowledged and the next Check reports the repair.
//   - A log truncated or overwritten, or a database file deleted,
//     replaced, truncated or overwritten, cannot be repaired: what the
//     file held is gone. The store then fails every later write with
//     store.ErrCorrupt and the reason (so the host stops acknowledging
//     changes), logs it, and leaves the mark file ahpd.damaged beside the
//     database, so that the next Open does not trust ahpd.db and restores
//     the backup instead (see backup.go).
//   - At open, an empty or missing ahpd.db in a directory that held a
//     store (the lock file says so, or a write-ahead log with data is
//     beside it) is restored from the backup, or refused when there is
//     none, rather than taken for a new, empty store.

// lockMark is written to the lock file once a store has been opened in
// the directory: an empty database beside it is then damage, not a new
// store.
const lockMark = "ahpd sqlite store\n"

// The first bytes of a database file and of a write-ahead log (its magic
// number is big-endian, with the last bit telling the checksum order).
var (
	dbMagic  = []byte("SQLite format 3\x00")
	walMagic = []byte{0x37, 0x7f, 0x06, 0x82}
)

// fileWatch is what the store knows of its files. Guarded by Store.wmu.
type fileWatch struct {
	// dbFile is our descriptor on the database, to read its header. It
	// stays open until SQLite has closed the database: closing a
	// descriptor drops the process's POSIX locks on the file, SQLite's
	// included.
	dbFile  *os.File
	db      fileID
	dbSize  int64    // the database's size after the last commit
	wal     *os.File // our own descriptor on the log, to see its link count
	walID   fileID
	walSize int64 // the log's size after the last commit
	header  [16]byte
	// repaired is a log lost and repaired after a commit, which the next
	// Check reports once.
	repaired error
	failed   error // a file was lost or damaged: every write fails
}

func walPath(db string) string { return db + "-wal" }

// watchFiles records the identity and size of the database and its log,
// after they were opened.
func (s *Store) watchFiles() error {
	if s.files.dbFile == nil {
		f, err := os.Open(s.path)
		if err != nil {
			return fmt.Errorf("sqlite store %s: %w", s.path, err)
		}
		s.files.dbFile = f
	}
	st, err := statPath(s.path)
	if err != nil {
		return fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	if s.files.wal != nil {
		s.files.wal.Close()
	}
	s.files.db, s.files.dbSize = st, st.size
	s.files.wal, s.files.walID, s.files.walSize = nil, fileID{}, 0
	f, err := os.Open(walPath(s.path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // SQLite creates it on the first write; checked from then on
		}
		return fmt.Errorf("sqlite store %s: %w", walPath(s.path), err)
	}
	fi, err := statFile(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("sqlite store %s: %w", walPath(s.path), err)
	}
	s.files.wal, s.files.walID, s.files.walSize = f, fi, fi.size
	return nil
}

// closeFiles closes our descriptors, once SQLite has closed the database.
func (s *Store) closeFiles() {
	for _, f := range []*os.File{s.files.dbFile, s.files.wal} {
		if f != nil {
			f.Close()
		}
	}
	s.files.dbFile, s.files.wal = nil, nil
}

// preCheck runs before every batch: two fstat calls on the descriptors
// we hold, enough to see a file shortened or deleted, so that nothing is
// written into a damaged log. What it finds, the full check handles: a
// lost log is repaired (and the batch goes to the new one), lasting
// damage fails the batch.
func (s *Store) preCheck(ctx context.Context) error {
	if s.files.wal == nil || s.files.dbFile == nil {
		return nil // the check after the commit watches them from then on
	}
	db, derr := statFile(s.files.dbFile)
	wal, werr := statFile(s.files.wal)
	if derr == nil && werr == nil && db.links > 0 && wal.links > 0 && db.size >= s.files.dbSize && wal.size >= s.files.walSize {
		return nil
	}
	repaired, err := s.verifyFiles(ctx)
	if repaired != "" {
		s.noteRepaired(repaired)
	}
	return err
}

// noteRepaired logs a lost log that was repaired, and keeps it for the
// next Check to report.
func (s *Store) noteRepaired(how string) {
	s.files.repaired = fmt.Errorf("sqlite store %s: the write-ahead log was %s while the store was open; what it held is saved in the database and a new log is in use", s.path, how)
	s.log.Warn("the store's write-ahead log was lost and has been replaced; nothing was lost", "err", s.files.repaired)
}

// checkFiles is the full check: see the comment at the top. It returns
// nil when the files are sound.
func (s *Store) checkFiles(ctx context.Context) error {
	repaired, err := s.verifyFiles(ctx)
	if err != nil {
		return err
	}
	if repaired != "" {
		return fmt.Errorf("sqlite store %s: the write-ahead log was %s while the store was open; what it held is saved in the database and a new log is in use (this write is retried)", s.path, repaired)
	}
	return nil
}

// verifyFiles checks the files and records their sizes. It repairs a log
// deleted or replaced, and then says how it was lost; it returns the
// lasting error for the damage it cannot repair.
func (s *Store) verifyFiles(ctx context.Context) (repaired string, err error) {
	if s.files.failed != nil {
		return "", s.files.failed
	}
	now, why := changed(s.path, s.files.db, nil)
	if why == "" {
		why = s.damaged(s.files.dbFile, now.size, s.files.dbSize, dbMagic)
	}
	if why != "" {
		return "", s.fail("the database file was "+why, "what the file held is lost")
	}
	s.files.dbSize = now.size
	if s.files.wal == nil {
		return "", s.watchFiles() // not created yet at open
	}
	walNow, why := changed(walPath(s.path), s.files.walID, s.files.wal)
	if why != "" {
		// SQLite still holds the old log: copy what it has into the
		// database file, then reopen to get a new log.
		if err := s.checkpoint(ctx); err != nil {
			return "", fmt.Errorf("sqlite store %s: the write-ahead log was %s, and saving what it holds into the database failed: %w", s.path, why, err)
		}
		if err := s.reopen(); err != nil {
			return "", fmt.Errorf("sqlite store %s: the write-ahead log was %s; its content is saved in the database, but reopening failed: %w", s.path, why, err)
		}
		return why, nil
	}
	if why := s.damaged(s.files.wal, walNow.size, s.files.walSize, walMagic); why != "" {
		return "", s.fail("the write-ahead log was "+why, "the changes it held since the last checkpoint are lost")
	}
	s.files.walSize = walNow.size
	return "", nil
}

// damaged says how a file of ours, now size bytes long, is damaged: shorter
// than the last commit left it, or without its header; or "".
func (s *Store) damaged(f *os.File, size, was int64, magic []byte) string {
	if size < was {
		return fmt.Sprintf("truncated (to %d bytes from %d)", size, was)
	}
	if was < int64(len(magic)) || f == nil {
		return "" // not written yet
	}
	h := s.files.header[:len(magic)]
	if n, err := f.ReadAt(h, 0); n < len(h) {
		return fmt.Sprintf("made unreadable (reading its header: %v)", err)
	}
	if !bytes.Equal(h, magic) {
		return "overwritten (its header is gone)"
	}
	return ""
}

// fail records damage that cannot be repaired: from now on every write
// fails with the error it returns. The caller holds wmu.
func (s *Store) fail(what, lost string) error {
	s.files.failed = fmt.Errorf("sqlite store %s: %w: %s while the store was open; %s, and no change is saved from now on (restart ahpd: it restores the last backup)", s.path, store.ErrCorrupt, what, lost)
	s.log.Error("the store's files were damaged; changes are no longer saved", "path", s.path, "damage", what, "lost", lost)
	if err := writeDamageMark(filepath.Dir(s.path), what); err != nil {
		s.log.Error("the store could not leave its damage mark", "err", err)
	}
	return s.files.failed
}

// changed says how the file at path differs from the one recorded, or "",
// with what it found there (through open, when given: the file SQLite
// writes).
func changed(path string, was fileID, open *os.File) (fileID, string) {
	now, err := statPath(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return now, "deleted"
	case err != nil:
		return now, "unreadable (" + err.Error() + ")"
	case !was.same(now):
		return now, "replaced"
	}
	if open != nil {
		fi, err := statFile(open)
		if err != nil {
			return now, "unreadable (" + err.Error() + ")"
		}
		if fi.links == 0 {
			return now, "deleted"
		}
		now = fi
	}
	// More links are harmless (a backup made with ln): the data still
	// reaches the file SQLite writes.
	return now, ""
}

// checkpoint copies every frame of the log into the database file and
// truncates the log. The caller holds wmu.
func (s *Store) checkpoint(ctx context.Context) error {
	var busy, logFrames, done int
	if err := s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return err
	}
	if busy != 0 {
		return errors.New("the checkpoint could not complete (readers busy)")
	}
	s.files.walSize = 0 // truncated by us
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

// cleanMark follows lockMark in the lock file once a store has closed
// with its files sound and its log checkpointed: the next open can then
// check the database by its header rather than read every page.
const cleanMark = "closed cleanly\n"

// markClean adds cleanMark to the lock file.
func markClean(f *os.File) error {
	_, err := f.WriteAt([]byte(cleanMark), int64(len(lockMark)))
	return err
}

// lockMarked reports whether the lock file carries lockMark, and whether
// the store was closed cleanly.
func lockMarked(path string) (marked, clean bool) {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil || !strings.HasPrefix(string(b), lockMark) {
		return false, false
	}
	return true, string(b[len(lockMark):]) == cleanMark
}

// checkHeader is the check at open after a clean close, when the whole
// database is in ahpd.db: the file starts with its header and is as long
// as the header says.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [100]byte
	if n, _ := f.ReadAt(h[:], 0); n < len(h) {
		return nil // new and empty: SQLite writes it
	}
	if !bytes.Equal(h[:len(dbMagic)], dbMagic) {
		return fmt.Errorf("%w: the database file does not start with a database header", store.ErrCorrupt)
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:]))
	if binary.BigEndian.Uint32(h[24:]) != binary.BigEndian.Uint32(h[92:]) {
		return nil // the size in the header is not current: nothing to compare
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if want := pages * pageSize; fi.Size() < want {
		return fmt.Errorf("%w: the database file has %d bytes, its header says %d", store.ErrCorrupt, fi.Size(), want)
	}
	return nil
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
	if err := s.files.repaired; err != nil {
		s.files.repaired = nil
		return err
	}
	return s.checkFiles(ctx)
}
