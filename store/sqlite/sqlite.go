// Package sqlite is a store.Store kept in an embedded SQLite database. It
// uses the pure-Go driver modernc.org/sqlite, so building needs no C
// toolchain.
//
//	st, err := sqlite.Open(dataDir, nil)
//	if err != nil {
//		log.Fatal(err) // one line: locked, corrupt, unwritable, newer schema
//	}
//	defer st.Close()
//	h, err := host.New(&host.Options{Store: st})
//
// The database is the file ahpd.db in the directory given to Open, in WAL
// mode. By default it is opened with synchronous=FULL: when Write returns
// nil, the batch's transaction has been written to the write-ahead log and
// synced, so it survives the process being killed and the machine losing
// power. Options.NoSync trades the second for speed.
//
// A lock file (ahpd.lock, held with flock on Unix systems) keeps a second
// process from using the same directory. The schema is versioned with
// PRAGMA user_version and migrated forward, one transaction per step, when
// the store opens; a database written by a newer schema is refused.
//
// The store checks its files before and after every commit and refuses
// to acknowledge writes once they are damaged (files.go); it keeps a
// rolling backup, ahpd.backup.db, refreshed every Options.BackupInterval
// and at Close, and restores it at Open when the database is missing,
// damaged or marked damaged (backup.go, restore.go). docs/persistence.md
// is the contract.
//
// Concurrency: all methods are safe for concurrent use. Writes are
// serialized; reads run beside them on their own connections and see the
// last committed batch.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ahp-go/ahp/store"
)

// File names inside the data directory.
const (
	DBFile   = "ahpd.db"
	LockFile = "ahpd.lock"
)

// Options configures a store. The zero value is the safe default.
type Options struct {
	// NoSync opens the database with synchronous=NORMAL: a committed
	// batch still survives the process being killed, but the last ones
	// may be lost if the machine loses power.
	NoSync bool
	// BackupInterval is how often the backup (BackupFile) is refreshed
	// while something was written since the last one; it is also
	// refreshed by Close. Zero means DefaultBackupInterval; a negative
	// value takes no backups (an existing one is still restored).
	BackupInterval time.Duration
	// Logger receives the store's own reports: damage found in its files,
	// backups that fail, a database restored at open. Nil discards them.
	Logger *slog.Logger
}

// Store is the SQLite store. Create one with Open.
type Store struct {
	path string
	dsn  string
	lock *os.File
	log  *slog.Logger

	dbmu sync.RWMutex // held by reads, and taken to reopen the database
	db   *sql.DB

	files fileWatch // guarded by wmu

	closed atomic.Bool
	wmu    sync.Mutex // serializes Write and Close
	// lastSeq is the highest appended action seq; guarded by wmu.
	lastSeq int64

	loadMu sync.Mutex // serializes LoadSession
	load   *loadConn  // guarded by loadMu, or by dbmu held for writing
	// The rolling backup (backup.go). backupMu serializes backups.
	backupEvery  time.Duration // 0: none
	stopBackups  func()        // stops the backup loop and waits for it; nil without one
	closeBackups sync.Once     // runs it, and the last backup, in Close
	backupMu     sync.Mutex
	writes       atomic.Int64 // batches acknowledged since open
	backupWrites int64        // writes when the last backup began; guarded by backupMu
	lastBackup   BackupInfo   // guarded by backupMu

	// betweenLoadQueries, when tests set it (between loads), runs before
	// each query of a load after the first, inside its transaction.
	betweenLoadQueries func()
}

var _ store.Store = (*Store)(nil)

// Open opens the store in dir, creating the directory and the database
// when they do not exist, and migrates the schema to the current version.
// Its errors are one line naming the path and the reason, and wrap
// store.ErrLocked or store.ErrCorrupt where those apply.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite store: cannot create the data directory: %w", err)
	}
	path := filepath.Join(dir, DBFile)
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite store: the data directory %q must not contain '?' or '#'", dir)
	}
	marked, clean := lockMarked(filepath.Join(dir, LockFile))
	lock, err := lockDir(filepath.Join(dir, LockFile))
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, fmt.Errorf("sqlite store %s: %w (is another ahpd running?)", dir, err)
		}
		return nil, fmt.Errorf("sqlite store: cannot lock the data directory: %w", err)
	}
	syncMode := "FULL"
	if o.NoSync {
		syncMode = "NORMAL"
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dsn := "file:" + path + "?_busy_timeout=5000&_journal_mode=WAL&_synchronous=" + syncMode
	s, err := openOrRestore(path, dsn, lock, log, marked, clean)
	if err != nil {
		unlockDir(lock)
		return nil, err
	}
	switch {
	case o.BackupInterval == 0:
		s.backupEvery = DefaultBackupInterval
	case o.BackupInterval > 0:
		s.backupEvery = o.BackupInterval
	}
	if s.backupEvery > 0 {
		stop, done := make(chan struct{}), make(chan struct{})
		s.stopBackups = func() {
			close(stop)
			<-done
		}
		go s.backupLoop(s.backupEvery, stop, done)
	}
	return s, nil
}

// openDB opens the database at path and checks it: after a clean close,
// with no log beside it, by its header; otherwise with quick_check, which
// reads every page. The caller holds the directory lock.
func openDB(path, dsn string, lock *os.File, log *slog.Logger, clean bool) (*Store, error) {
	clean = clean && fileSize(walPath(path)) <= 0
	if clean {
		if err := checkHeader(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sqlite store %s: check: %w", path, err)
		}
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s := &Store{path: path, dsn: dsn, db: db, lock: lock, log: log}
	err = s.open()
	if err == nil && !clean {
		if qerr := quickCheck(context.Background(), db); qerr != nil {
			err = s.wrap("check", qerr)
		}
	}
	if err == nil {
		err = s.watchFiles()
	}
	if err == nil {
		if merr := markLock(lock); merr != nil {
			err = fmt.Errorf("sqlite store: writing the lock file: %w", merr)
		}
	}
	if err != nil {
		db.Close()
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// open checks the database, migrates it and reads the write position.
func (s *Store) open() error {
	ctx := context.Background()
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return s.wrap("open", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("sqlite store %s: journal mode is %q, want wal", s.path, mode)
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'last_action_seq'").Scan(&s.lastSeq); err != nil {
		return s.wrap("open", err)
	}
	return nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// wrap names the store and the operation in err and marks the SQLite
// failures a host must report distinctly.
func (s *Store) wrap(op string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		var kind error
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			kind = store.ErrLocked
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			kind = store.ErrCorrupt
		case sqlite3.SQLITE_FULL:
			kind = store.ErrFull
		}
		if kind != nil {
			return fmt.Errorf("sqlite store %s: %s: %w: %w", s.path, op, kind, err)
		}
	}
	return fmt.Errorf("sqlite store %s: %s: %w", s.path, op, err)
}

// Write applies the batch in one transaction.
func (s *Store) Write(ctx context.Context, b store.Batch) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.files.failed != nil {
		return s.files.failed
	}
	if err := b.Check(s.lastSeq); err != nil {
		return fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	if len(b) == 0 {
		return nil
	}
	// A quick look before (a shortened or deleted file), the full check
	// after the commit, before the batch is acknowledged.
	if err := s.preCheck(ctx); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("begin", err)
	}
	w := &batchWriter{ctx: ctx, tx: tx, stmts: map[string]*sql.Stmt{}}
	last, seq := s.lastSeq, int64(0)
	for _, op := range b {
		switch op := op.(type) {
		case store.AppendAction:
			last = op.Action.Seq
		case store.SetSeq:
			seq = max(seq, op.Seq)
		}
		w.apply(op)
		if w.err != nil {
			break
		}
	}
	if last != s.lastSeq {
		w.exec("UPDATE meta SET value = ? WHERE key = 'last_action_seq'", last)
	}
	if seq > 0 {
		w.exec("UPDATE meta SET value = max(value, ?) WHERE key = 'seq'", seq)
	}
	for _, st := range w.stmts {
		st.Close()
	}
	if w.err != nil {
		tx.Rollback()
		return s.wrap("write", w.err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("commit", err)
	}
	s.lastSeq = last
	// Acknowledge only what the files still hold: a log or database
	// damaged meanwhile fails the batch (a log deleted or replaced is
	// saved into the database first, and the batch with it).
	repaired, err := s.verifyFiles(ctx)
	if err != nil {
		return err
	}
	if repaired != "" {
		// The batch is saved in the database with the rest of the lost
		// log: acknowledged, and reported by the next Check.
		s.noteRepaired(repaired)
	}
	s.writes.Add(1)
	return nil
}

// batchWriter runs a batch's statements, preparing each once, and keeps
// the first error.
type batchWriter struct {
	ctx   context.Context
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	err   error
}

func (w *batchWriter) exec(query string, args ...any) {
	if w.err != nil {
		return
	}
	st := w.stmts[query]
	if st == nil {
		st, w.err = w.tx.PrepareContext(w.ctx, query)
		if w.err != nil {
			return
		}
		w.stmts[query] = st
	}
	// Statements run without the context: a cancellable one costs a
	// goroutine per statement in the driver, and the transaction already
	// ends with the context.
	_, w.err = st.Exec(args...)
}

func (w *batchWriter) apply(op store.Op) {
	switch op := op.(type) {
	case store.PutSession:
		chats, err := json.Marshal(op.Session.Chats)
		if err != nil {
			w.err = err
			return
		}
		w.exec(`INSERT INTO sessions (uri, modified_at, summary, chats, running) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (uri) DO UPDATE SET modified_at = excluded.modified_at, summary = excluded.summary,
			chats = excluded.chats, running = excluded.running`,
			op.Session.URI, op.Session.ModifiedAt, op.Session.Summary, string(chats), op.Session.Running)
	case store.DeleteSession:
		w.exec("DELETE FROM actions WHERE channel IN (SELECT uri FROM channels WHERE session = ?)", op.URI)
		w.exec("DELETE FROM turns WHERE chat IN (SELECT uri FROM channels WHERE session = ?)", op.URI)
		w.exec("DELETE FROM channels WHERE session = ?", op.URI)
		w.exec("DELETE FROM sessions WHERE uri = ?", op.URI)
	case store.PutSnapshot:
		sn := op.Snapshot
		w.exec(`INSERT INTO channels (uri, session, seq, state) VALUES (?, ?, ?, ?)
			ON CONFLICT (uri) DO UPDATE SET session = excluded.session, seq = excluded.seq, state = excluded.state`,
			sn.Channel, sn.Session, sn.Seq, sn.State)
		w.exec("DELETE FROM actions WHERE channel = ? AND seq <= ?", sn.Channel, sn.Seq)
	case store.DeleteChannel:
		w.exec("DELETE FROM actions WHERE channel = ?", op.URI)
		w.exec("DELETE FROM turns WHERE chat = ?", op.URI)
		w.exec("DELETE FROM channels WHERE uri = ?", op.URI)
	case store.AppendAction:
		a := op.Action
		w.exec("INSERT INTO actions (seq, channel, at, envelope) VALUES (?, ?, ?, ?)", a.Seq, a.Channel, a.At, a.Envelope)
	case store.PutTurn:
		t := op.Turn
		w.exec(`INSERT INTO turns (chat, ordinal, id, data) VALUES (?, ?, ?, ?)
			ON CONFLICT (chat, ordinal) DO UPDATE SET id = excluded.id, data = excluded.data`,
			t.Chat, t.Ordinal, t.ID, t.Data)
	case store.TruncateTurns:
		w.exec("DELETE FROM turns WHERE chat = ? AND ordinal >= ?", op.Chat, op.Keep)
	case store.SetSeq:
		// Recorded once for the whole batch.
	case store.PutRecord:
		r := op.Record
		w.exec(`INSERT INTO records (kind, key, data) VALUES (?, ?, ?)
			ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data`, r.Kind, r.Key, r.Data)
	case store.DeleteRecord:
		w.exec("DELETE FROM records WHERE kind = ? AND key = ?", op.Kind, op.Key)
	}
}

// Records returns every record of a kind, ordered by key.
func (s *Store) Records(ctx context.Context, kind string) ([]store.Record, error) {
	s.dbmu.RLock()
	defer s.dbmu.RUnlock()
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	rows, err := s.db.QueryContext(ctx, "SELECT key, data FROM records WHERE kind = ? ORDER BY key", kind)
	if err != nil {
		return nil, s.wrap("records", err)
	}
	defer rows.Close()
	out := []store.Record{}
	for rows.Next() {
		r := store.Record{Kind: kind}
		if err := rows.Scan(&r.Key, &r.Data); err != nil {
			return nil, s.wrap("records", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("records", err)
	}
	return out, nil
}

// Seq returns the highest serverSeq recorded.
func (s *Store) Seq(ctx context.Context) (int64, error) {
	s.dbmu.RLock()
	defer s.dbmu.RUnlock()
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	var seq int64
	if err := s.db.QueryRowContext(ctx, "SELECT max(value) FROM meta WHERE key IN ('seq', 'last_action_seq')").Scan(&seq); err != nil {
		return 0, s.wrap("seq", err)
	}
	return seq, nil
}

// Sessions returns a page of the catalog.
func (s *Store) Sessions(ctx context.Context, after *store.Position, limit int) ([]store.Session, error) {
	s.dbmu.RLock()
	defer s.dbmu.RUnlock()
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	if limit <= 0 {
		return nil, fmt.Errorf("sqlite store: sessions: limit %d is not positive", limit)
	}
	q := "SELECT uri, modified_at, summary, chats, running FROM sessions"
	args := []any{}
	if after != nil {
		q += " WHERE modified_at < ? OR (modified_at = ? AND uri > ?)"
		args = append(args, after.ModifiedAt, after.ModifiedAt, after.URI)
	}
	q += " ORDER BY modified_at DESC, uri ASC LIMIT ?"
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("sessions", err)
	}
	defer rows.Close()
	var out []store.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, s.wrap("sessions", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("sessions", err)
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanSession(r scanner) (store.Session, error) {
	var sess store.Session
	var chats string
	if err := r.Scan(&sess.URI, &sess.ModifiedAt, &sess.Summary, &chats, &sess.Running); err != nil {
		return sess, err
	}
	var err error
	sess.Chats, err = decodeChats(sess.URI, chats)
	return sess, err
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryTurns(ctx context.Context, q querier, chat string, from, to int64) ([]store.Turn, error) {
	rows, err := q.QueryContext(ctx, "SELECT chat, ordinal, id, data FROM turns WHERE chat = ? AND ordinal >= ? AND ordinal < ? ORDER BY ordinal", chat, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Turn
	for rows.Next() {
		var t store.Turn
		if err := rows.Scan(&t.Chat, &t.Ordinal, &t.ID, &t.Data); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Turns returns a range of a chat's turns.
func (s *Store) Turns(ctx context.Context, chat string, from, to int64) ([]store.Turn, error) {
	s.dbmu.RLock()
	defer s.dbmu.RUnlock()
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	turns, err := queryTurns(ctx, s.db, chat, from, to)
	if err != nil {
		return nil, s.wrap("turns", err)
	}
	return turns, nil
}

// Close stops the backups and refreshes the backup, waits for a write in
// progress, closes the database (which checkpoints the write-ahead log)
// and releases the directory lock.
func (s *Store) Close() error {
	if s.closed.Load() {
		return nil
	}
	s.closeBackups.Do(func() {
		if s.stopBackups == nil {
			return
		}
		s.stopBackups()
		if _, err := s.Backup(context.Background()); err != nil {
			s.log.Warn("the session store's backup at close failed", "err", err)
		}
	})
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	sound := s.checkFiles(context.Background()) == nil
	s.dbmu.Lock()
	err := s.closeLoadLocked()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	s.dbmu.Unlock()
	s.closeFiles()
	if sound && err == nil && fileSize(walPath(s.path)) <= 0 {
		markClean(s.lock)
	}
	unlockDir(s.lock)
	if err != nil {
		return s.wrap("close", err)
	}
	return nil
}
